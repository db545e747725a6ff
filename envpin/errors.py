"""envpin's own error types. The CLI turns each into a one-line message and an exit code."""


class EnvpinError(Exception):
    """Base class: anything envpin reports to the user without a traceback."""

    exit_code = 2


class EnvpinInputError(EnvpinError):
    """Bad input from the user: a malformed option, file or field (exit 2)."""


class DatabaseError(EnvpinError):
    """The compatibility database is unreadable or violates its schema (exit 2)."""
