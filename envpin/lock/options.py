"""How a lock is made: the options `envpin lock` and `envpin install` share. Its own small module, so that
building them costs a plain solve nothing of the lockers' imports."""

from __future__ import annotations

from envpin.base.record import Record, record
from envpin.conda.channels import Channels

LOCK_FORMATS = ("pylock", "requirements")


@record
class LockOptions(Record):
    index_url: str | None = None  # the default index (else ENVPIN_INDEX_URL, else the project's -i, else PyPI)
    locker: str | None = None  # uv or pip; None: uv when installed
    timeout: float = 900
    format: str = "pylock"  # or "requirements": how `envpin lock` writes it, named in the regenerate line


@record
class ResolveOptions(Record):
    """`solve --resolve`: the whole environment resolved by uv (envpin.lock.resolution)."""

    index_url: str | None = None  # the default index (else ENVPIN_INDEX_URL, else the project's -i, else PyPI)
    offline: bool = False  # from uv's cache only (`uv --offline`)
    timeout: float = 300  # seconds for each uv run
    # where an environment.yml's channels are, for rattler's solve of its conda part (`--channels`, `--channel`);
    # the default: the file's channel names, as conda reads them (conda.anaconda.org)
    channels: Channels = Channels()
    conda_part: bool = True  # solve an environment.yml's conda part too (a lock of its pip part does not)
