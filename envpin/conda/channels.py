"""Where an environment file's channels are, as the user said it (`--channels DIR`, `--channel NAME=LOCATION`).

Its own small module: every command's options build one, and a plain solve must not pay for the conda solver's
imports to do so.
"""

from __future__ import annotations

from collections.abc import Mapping

from envpin.base.errors import EnvpinInputError
from envpin.base.record import Record, record


@record
class Channels(Record):
    """Where an environment file's channels are: a folder with one channel per name, named locations, or (neither)
    wherever conda has them; and rattler's cache."""

    folder: str | None = None
    named: tuple[tuple[str, str], ...] = ()
    cache_dir: str | None = None

    @classmethod
    def parse(cls, folder: str | None, items: tuple[str, ...] = (), cache_dir: str | None = None) -> Channels:
        """From `--channels DIR` or `--channel NAME=LOCATION ...`."""
        if folder and items:
            raise EnvpinInputError("give --channels DIR or --channel NAME=LOCATION, not both")
        named = []
        for item in items:
            name, sep, location = item.partition("=")
            if not sep or not name or not location:
                raise EnvpinInputError(f"--channel {item!r}: expected NAME=LOCATION")
            named.append((name, location))
        return cls(folder, tuple(named), cache_dir)

    @property
    def location(self) -> str | Mapping[str, str] | None:
        """As the rattler solve takes it: a folder, {name: location}, or None."""
        return dict(self.named) if self.named else self.folder
