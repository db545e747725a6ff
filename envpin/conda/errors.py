"""What the conda side reports. Each is an EnvpinError, so the CLI prints one line and exits with its code."""

from __future__ import annotations

from envpin.base.errors import EnvpinError, EnvpinInputError


class CondaInputError(EnvpinInputError):
    """A malformed environment file, an unknown channel folder, a target fact the conda side needs (exit 2)."""


class CondaSolveFailed(EnvpinError):
    """The environment does not solve for the target (exit 1); the message names what failed."""

    exit_code = 1


class CondaToolFailed(EnvpinError):
    """conda, mamba, micromamba or rattler failed to create the environment (exit 1); nothing was left behind."""

    exit_code = 1


class RattlerMissing(EnvpinError):
    """py-rattler is not installed (exit 2)."""

    def __init__(self) -> None:
        super().__init__("this needs py-rattler, the optional conda engine: pip install 'envpin[conda]' (or py-rattler)")
