#!/usr/bin/env python3
"""The build and test steps of a release (.github/workflows/release.yml runs exactly this, and .ci/run too):

1. build the sdist, then the wheel from that sdist (`python -m build`: what is missing from the sdist fails here);
2. `twine check --strict` both;
3. read both archives: LICENSE in each, the database in the wheel, the metadata complete (license expression,
   authors, classifiers, project URLs, keywords, README as the long description) and one version everywhere
   (the file names, the metadata, `envpin.__version__`);
4. install the wheel into a clean virtual environment (no envpin source on its path, its dependencies from the
   package index) and run `envpin --version`, `envpin solve`, `envpin check` of the file solve wrote, and
   `envpin db info` there.

    .venv/bin/python scripts/release_check.py [--dist DIR] [--no-isolation]

--dist keeps the archives in DIR (the workflow uploads them from there; default: a temporary folder).
--no-isolation builds with the hatchling of this environment instead of a fresh build environment from the index.
--expect-version VERSION (a tag, `v0.2.0`) fails the release when envpin/__init__.py says another version.
Needs `build` and `twine` (the dependency group `release`). Exit 0 when every step passed; else the failing
step is said on stderr and the exit is 1.
"""

from __future__ import annotations

import argparse
import email.parser
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import venv
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# A machine whose answer is a CUDA build of torch (the RTX 3090 target the README's examples use): the clean
# install must solve, write a file and check it without detecting anything on the machine that runs the check.
TARGET = ["--os", "linux", "--arch", "x86_64", "--driver", "550.54.15", "--gpu", "NVIDIA GeForce RTX 3090",
          "--python", "3.11"]
REQUIRED_METADATA = ("Name", "Version", "Summary", "License-Expression", "License-File", "Author", "Keywords",
                     "Classifier", "Project-URL", "Requires-Python", "Description-Content-Type")


class Failed(Exception):
    """A release step that did not pass: its message says which and why."""


def run(argv: list[str | Path], **kwargs) -> subprocess.CompletedProcess:
    print("+ " + " ".join(str(a) for a in argv), file=sys.stderr, flush=True)
    result = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=900, **kwargs)
    if result.returncode != 0:
        raise Failed(f"{Path(str(argv[0])).name} {' '.join(str(a) for a in argv[1:3])} … exited "
                     f"{result.returncode}:\n{result.stdout[-3000:]}{result.stderr[-3000:]}")
    return result


def source_version() -> str:
    found = re.search(r'^__version__ = "([^"]+)"$', (REPO / "envpin" / "__init__.py").read_text(), re.M)
    if not found:
        raise Failed("envpin/__init__.py has no `__version__ = \"...\"` line: the one version source")
    return found.group(1)


def build(dist: Path, isolation: bool) -> tuple[Path, Path]:
    run([sys.executable, "-m", "build", "--outdir", dist, *([] if isolation else ["--no-isolation"]), REPO])
    sdists, wheels = sorted(dist.glob("envpin-*.tar.gz")), sorted(dist.glob("envpin-*-py3-none-any.whl"))
    if len(sdists) != 1 or len(wheels) != 1:
        raise Failed(f"expected one sdist and one pure-Python wheel in {dist}, found {[p.name for p in dist.iterdir()]}")
    return sdists[0], wheels[0]


def check_archives(sdist: Path, wheel: Path, version: str) -> None:
    if f"envpin-{version}" not in sdist.name or f"envpin-{version}-" not in wheel.name:
        raise Failed(f"the archives {sdist.name}, {wheel.name} do not carry the version {version}")
    with tarfile.open(sdist) as archive:
        sdist_names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    for needed in ("LICENSE", "README.md", "pyproject.toml", "envpin/__init__.py", "data/compat_matrix/VERSION"):
        if needed not in sdist_names:
            raise Failed(f"the sdist lacks {needed}")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata_name = next(n for n in names if n.endswith(".dist-info/METADATA"))
        metadata = email.parser.Parser().parsestr(archive.read(metadata_name).decode("utf-8"))
        licenses = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
        if not licenses or b"Apache License" not in archive.read(licenses[0]):
            raise Failed("the wheel carries no Apache-2.0 LICENSE under .dist-info/licenses/")
    missing = [field for field in REQUIRED_METADATA if not metadata.get_all(field)]
    if missing:
        raise Failed(f"the wheel's metadata lacks {', '.join(missing)}")
    if metadata["Version"] != version or metadata["License-Expression"] != "Apache-2.0":
        raise Failed(f"metadata: Version {metadata['Version']}, License-Expression {metadata['License-Expression']}")
    if "Provides-Extra: dev" in str(metadata) or any(r.startswith("pytest") for r in metadata.get_all("Requires-Dist") or []):
        raise Failed("the development tools are published to users (an extra `dev`): they belong in [dependency-groups]")
    database = sorted(p.name for p in (REPO / "data" / "compat_matrix").iterdir() if p.is_file())
    shipped = sorted(n.rsplit("/", 1)[1] for n in names if n.startswith("envpin/data/compat_matrix/"))
    if shipped != database:
        raise Failed(f"the wheel's database {shipped} is not data/compat_matrix's {database}")


def check_clean_install(wheel: Path, work: Path, version: str) -> None:
    prefix = work / "clean-venv"
    venv.EnvBuilder(with_pip=True).create(prefix)
    bindir = prefix / ("Scripts" if os.name == "nt" else "bin")
    python = bindir / ("python.exe" if os.name == "nt" else "python")
    envpin = bindir / ("envpin.exe" if os.name == "nt" else "envpin")
    # nothing of this checkout or of the caller's environment: a user's fresh machine, with its package index
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ENVPIN_", "PYTHON", "VIRTUAL_ENV"))}
    env.update(ENVPIN_CACHE_DIR=str(work / "cache"), PIP_DISABLE_PIP_VERSION_CHECK="1")
    run([python, "-m", "pip", "install", "--quiet", wheel], env=env, cwd=work)
    located = run([python, "-c", "import envpin; print(envpin.__file__)"], env=env, cwd=work).stdout.strip()
    if prefix not in Path(located).parents:
        raise Failed(f"the clean venv imports envpin from {located}, not from its own site-packages")
    shown = run([envpin, "--version"], env=env, cwd=work).stdout.strip()
    if shown != f"envpin {version}":
        raise Failed(f"`envpin --version` says {shown!r}, the package is {version}")
    written = work / "requirements.txt"
    run([envpin, "solve", "--framework", "torch", *TARGET, "-o", written], env=env, cwd=work)
    if "torch==" not in written.read_text(encoding="utf-8"):
        raise Failed(f"`envpin solve -o requirements.txt` wrote no torch pin:\n{written.read_text()}")
    checked = run([envpin, "check", written, *TARGET], env=env, cwd=work)
    if "no problems in 1 file" not in checked.stdout:
        raise Failed(f"`envpin check` of the solved file: {checked.stdout}")
    info = run([envpin, "db", "info"], env=env, cwd=work)
    shipped = (REPO / "data" / "compat_matrix" / "VERSION").read_text().strip()
    if not info.stdout.startswith(f"compatibility database {shipped}\n"):
        raise Failed(f"`envpin db info` does not show the shipped database {shipped}: {info.stdout[:200]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dist", type=Path, help="keep the sdist and the wheel in DIR (default: a temporary folder)")
    parser.add_argument("--no-isolation", action="store_true", help="build with this environment's hatchling")
    parser.add_argument("--expect-version", metavar="VERSION",
                        help="fail unless the package's version is VERSION (the workflow passes the tag, v stripped)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="envpin-release-") as scratch:
        work = Path(scratch)
        dist = (args.dist or work / "dist").resolve()
        dist.mkdir(parents=True, exist_ok=True)
        try:
            version = source_version()
            if args.expect_version and args.expect_version.removeprefix("v") != version:
                raise Failed(f"the tag says {args.expect_version}, envpin/__init__.py says {version}")
            sdist, wheel = build(dist, isolation=not args.no_isolation)
            run([sys.executable, "-m", "twine", "check", "--strict", sdist, wheel])
            check_archives(sdist, wheel, version)
            check_clean_install(wheel, work, version)
        except Failed as failed:
            print(f"release check failed: {failed}", file=sys.stderr)
            return 1
    print(f"release check passed: {sdist.name}, {wheel.name} (twine check, metadata, clean install: solve, check, "
          "db info)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
