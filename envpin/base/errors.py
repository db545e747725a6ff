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


class Unreachable(EnvpinInputError):
    """An index or channel did not answer (DNS, refused, timed out): exit 2 and the word "unreachable", so it is never
    mistaken for "does not solve", which is a real answer about the packages."""

    def __init__(self, what: str, detail: str):
        super().__init__(f"{what} is unreachable: {detail}")


def looks_unreachable(text: str) -> bool:
    """Whether a tool's output says the network, not the packages, is the problem: what pip, uv, requests and
    rattler print then (compiled when first asked, by re: every command imports this module, few ask)."""
    return bool(re.search(
        r"error sending request|dns error|failed to lookup address|Name or service not known|Temporary failure in name "
        r"resolution|Connection refused|Network is unreachable|No route to host|connect(ion)? timed out|tcp connect error|"
        r"Max retries exceeded|NewConnectionError|Could not fetch URL|ConnectTimeout|certificate verify failed",
        text, re.IGNORECASE))


class DatabaseError(EnvpinError):
    """The compatibility database is unreadable or violates its schema (exit 2)."""


EXIT_DRIVER_BROKEN = 3  # docs/contracts.md: the machine has an NVIDIA GPU whose driver does not answer


class DriverBroken(EnvpinError):
    """The machine shows an NVIDIA GPU whose driver does not answer, and a command would otherwise answer for the
    CPU as if there were none (exit 3, as `envpin solve`'s refused answer)."""

    exit_code = EXIT_DRIVER_BROKEN
