"""The format an output file's name implies (`-o environment.yml`, `-o pins.txt`): one rule for writing a file
and for the regenerate command written in it."""

from __future__ import annotations

from pathlib import Path

from envpin.base.errors import EnvpinInputError


def format_for_path(output: str | None) -> str:
    if not output:
        return "text"
    name = Path(output).name.lower()
    if name.endswith((".yml", ".yaml")):
        return "environment.yml"
    if name.endswith(".txt"):
        return "requirements.txt"
    if name.endswith(".toml") and name.startswith("pylock"):  # PEP 751: pylock.toml, pylock.<name>.toml
        return "pylock.toml"
    if name == "uv.lock":  # uv reads its lock under this name only
        return "uv.lock"
    if name.endswith(".json"):
        return "json"
    raise EnvpinInputError(f"-o {output}: cannot tell the format from the file name; add --format")
