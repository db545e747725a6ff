"""The rattler backend of `envpin install`: conda environments solved and linked in-process by py-rattler.

Its steps are in-process actions run inside provision's staging (`envpin.provision.atomic`), so a rattler
environment is built beside the prefix and swapped in like a uv or venv one. rattler links the packages as if they
were already at the final prefix (its `alternative_target_prefix`): the prefix placeholders of conda packages get
the final path, and the relocation pass before the swap finds nothing of the staging path to rewrite.

What it installs, by input:

- an environment.yml: solved for the target's virtual packages and linked; its `pip:` section is then installed by
  the environment's own pip (without hashes: an environment.yml has none);
- a pixi.lock or conda-lock.yml: exactly the locked packages of the target's subdir, no solve;
- a PEP 751 lock: a conda Python of the lock's version and pip, solved from the channels, then the lock installed
  by that pip with every hash checked, as the conda tools' backend does.

rattler is imported by `envpin.conda.rattler_solve` inside each call (the optional extra `envpin[conda]`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from envpin.base.record import Record, record
from envpin.conda.envfile import EnvironmentFile
from envpin.conda.errors import CondaInputError, CondaToolFailed
from envpin.conda.rattler_solve import link_into, records_from_lock, solve_environment, solve_specs
from envpin.provision.backends import CondaTarget, InstallInputs, Step, pip_install, python_in

if TYPE_CHECKING:
    from rattler import RepoDataRecord

DEFAULT_CHANNEL = "conda-forge"


@record
class RattlerBackend(Record):
    target: CondaTarget  # its virtual packages are built from envpin's facts, never rattler's detection
    name: str = "rattler"

    def steps(self, location: Path, inputs: InstallInputs) -> list[Step]:
        run = _RattlerRun(self.target, location)
        link = Step("link the conda packages (rattler)", action=run.link)
        conda_lock, environment_yml = inputs.conda_lock, inputs.environment_yml
        if conda_lock is not None:
            read = Step(f"read {conda_lock.name} for {self.target.subdir}",
                        action=lambda _: run.read_lock(conda_lock, inputs.conda_environment))
            return [read, link]
        if environment_yml is not None:
            solve = Step(f"solve {environment_yml.name} for {self.target.subdir} (rattler)",
                         action=lambda _: run.solve_file(environment_yml))
            if inputs.pip_section is None:
                return [solve, link]
            return [solve, link, Step("install the pip: section (pip, no hashes)",
                                      pip_section_install(location, inputs.pip_section))]
        if inputs.requirements_file is not None:
            return [Step(f"solve python={inputs.python} and pip for {self.target.subdir} (rattler)",
                         action=lambda _: run.solve_python(inputs.python)),
                    link,
                    Step("install the lock (pip --require-hashes)", pip_install(python_in(location), inputs.requirements_file))]
        raise ValueError("the rattler backend installs an environment.yml, a conda lock or a PEP 751 lock")


def pip_section_install(location: Path, requirements: Path) -> tuple[str, ...]:
    return (str(python_in(location)), "-m", "pip", "install", "--no-input", "--disable-pip-version-check",
            "-r", str(requirements))


@dataclass
class _RattlerRun:
    """The state one run's steps share: the records the first step found and the second links."""

    target: CondaTarget
    location: Path
    records: list[RepoDataRecord] = field(default_factory=list)

    def read_lock(self, lock: Path, environment: str) -> None:
        self.records = records_from_lock(lock, self.target.subdir, environment)

    def solve_file(self, path: Path) -> None:
        from envpin.base.userfiles import UnreadableFile, read_text  # noqa: PLC0415 - only a solve from a file

        try:
            text = read_text(path)  # a regular file only: a FIFO or a device is refused, never opened
        except UnreadableFile as error:
            raise CondaInputError(str(error)) from None
        self._solved(solve_environment(text, self.target.channels, self.target.virtual_packages, self.target.subdir,
                                       origin=str(path), cache_dir=self.target.cache_dir))

    def solve_python(self, python: str) -> None:
        request = EnvironmentFile(name=None, channels=(DEFAULT_CHANNEL,), dependencies=(f"python {python}.*", "pip"),
                                  pip=())
        self._solved(solve_specs(request, self.target.channels, self.target.virtual_packages, self.target.subdir,
                                 origin=f"python={python} with pip", cache_dir=self.target.cache_dir))

    def _solved(self, solution) -> None:
        self.records = list(solution.repodata_records)

    def link(self, final_prefix: Path) -> None:
        cache = Path(self.target.cache_dir) / "pkgs" if self.target.cache_dir else None
        link_into(self.records, self.location, final_prefix, cache_dir=cache, platform=self.target.subdir)
        missing = missing_records(self.location, self.records)
        if missing:
            raise CondaToolFailed(f"rattler left out {len(missing)} package(s): {', '.join(missing[:5])}")


def missing_records(location: Path, records: list[RepoDataRecord]) -> list[str]:
    """The solved or locked packages without their conda-meta record in the new environment."""
    present = {p.name for p in (location / "conda-meta").glob("*.json")}
    wanted = [f"{r.name.normalized}-{r.version}-{r.build}" for r in records]
    return [name for name in wanted if f"{name}.json" not in present]
