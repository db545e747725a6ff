"""envpin's own error types. The CLI turns each into a one-line message and an exit code (and, with
`--format json`, one JSON document whose `error.code` is the error's `code`)."""

import re


class EnvpinError(Exception):
    """Base class: anything envpin reports to the user without a traceback."""

    exit_code = 2

    @property
    def code(self) -> str:
        """A stable identifier from the class name: EnvpinInputError → `input`, LockFailed → `lock-failed`."""
        name = type(self).__name__.removeprefix("Envpin").removesuffix("Error") or "error"
        return re.sub(r"(?<!^)(?=[A-Z])", "-", name).lower()


class EnvpinInputError(EnvpinError):
    """Bad input from the user: a malformed option, file or field (exit 2)."""


class DatabaseError(EnvpinError):
    """The compatibility database is unreadable or violates its schema (exit 2)."""
