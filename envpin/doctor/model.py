"""What the doctor reasons over (a Case) and what it concludes (Findings).

A Case is everything known about one broken (or healthy) environment: the machine (HostFacts), the
environment as the probe saw it (EnvFacts, absent when only a machine was given), the error text the user
saw, and optionally the user's script. Rules are pure functions Case -> Findings. The text searched for
signatures is the user's error text first, then what the probe captured (import errors, warnings), each
labelled so the evidence says where a line came from.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping
from functools import cached_property

from packaging.version import Version

from envpin.base.record import Record, record
from envpin.compat.model import Database
from envpin.doctor.catalogue import BY_ID, compiled
from envpin.doctor.pasted import TextGpu, gpu_name, text_gpus, unprefixed
from envpin.facts.host import FRAMEWORK_KEYS, EnvFacts, FrameworkFacts, HostFacts
from envpin.resolver.target import TargetOverrides
from envpin.verify.report import machine_gpus
from envpin.vocabulary.platforms import platform_key

SEVERITIES = ("error", "warning", "info")

# How sure a rule is; findings are ranked by this, then by severity. The catalogue's §4.6: a signature
# confirmed by facts beats a signature alone, which beats a cause predicted from facts alone.
CONFIRMED = 40  # the error text matches and the facts show the cause
MATCHED = 30  # the error text matches; the facts neither confirm nor contradict
PROVEN = 25  # no error text needed: the facts alone show a fault that will bite
LIKELY = 15  # the facts make it likely
NOTED = 5  # worth knowing, not a fault


class Fix(str):
    """One fix line that holds only under a precondition: `requires` names entries of PRECONDITIONS. The engine
    drops a fix whose precondition the facts contradict ("`import torch` first" where torch is not installed, a
    CPU wheel for a machine whose error text names an NVIDIA GPU); a plain str has no precondition."""

    requires: tuple[str, ...]

    def __new__(cls, text: str, *requires: str) -> Fix:
        line = super().__new__(cls, text)
        unknown = [name for name in requires if name not in PRECONDITIONS]
        if unknown:
            raise ValueError(f"unknown fix precondition {unknown[0]!r}")
        line.requires = requires
        return line


@record
class Finding(Record):
    id: str
    severity: str
    title: str
    evidence: tuple[str, ...]
    fix: tuple[str, ...]
    likelihood: int = MATCHED

    def __new__(cls, id: str, severity: str, *_: object, **__: object) -> Finding:  # noqa: A002 - the field's name
        # The check of a finding as it is made: a record has no __post_init__, and __new__ runs before the
        # record's __init__ on every way a Finding is made (a rule's Finding(...), replace).
        if id not in BY_ID:
            raise ValueError(f"{id} is not a failure-catalogue id")
        if severity not in SEVERITIES:
            raise ValueError(f"severity {severity!r}")
        return super().__new__(cls)

    def to_json(self) -> dict:
        return {"id": self.id, "severity": self.severity, "title": self.title, "evidence": list(self.evidence),
                "fix": [str(line) for line in self.fix]}


@record
class Hit(Record):
    """A signature found in some text: the match and where the text came from."""

    match: re.Match
    source: str

    @property
    def line(self) -> str:
        text = self.match.group(0).strip()
        first = text.splitlines()[0] if text else ""
        return first if len(first) <= 300 else first[:297] + "..."

    def evidence(self) -> str:
        return f"{self.source}: {self.line}"

    def group(self, index: int) -> str | None:
        return self.match.group(index)

    def text(self, index: int) -> str:
        """`group` for a group outside any `?` or `|` of the signature, which every match fills."""
        return self.match.group(index)


@record
class Case(Record):
    host: HostFacts
    env: EnvFacts | None
    database: Database
    error_text: str = ""
    script_path: str | None = None
    script_text: str | None = None
    # the target flags given with the case (`doctor --gpu … --python …`): they are already laid over `host`;
    # kept for what the host cannot hold, the Python a fix's solve is for when it is not the environment's
    flags: TargetOverrides = TargetOverrides()

    # ------------------------------------------------------------ text

    @cached_property
    def texts(self) -> tuple[tuple[str, str], ...]:
        texts = []
        if self.error_text.strip():  # as pasted, less the log prefixes on its lines (pasted.unprefixed)
            texts.append(("error text", unprefixed(self.error_text)))
        for name in FRAMEWORK_KEYS:
            facts = self.framework(name)
            if facts is None:
                continue
            if facts.import_error:
                texts.append((f"import {name} (probe)", facts.import_error))
            if facts.warnings:
                texts.append((f"{name} warnings (probe)", "\n".join(facts.warnings)))
            failures = [result for result in facts.smoke.values() if result != "ok"]
            if failures:
                texts.append((f"{name} GPU test (probe)", "\n".join(failures)))
        return tuple(texts)

    def search(self, signature_id: str) -> Hit | None:
        pattern = compiled(signature_id)
        return self.search_pattern(pattern) if pattern else None

    def search_pattern(self, pattern: re.Pattern | str) -> Hit | None:
        if isinstance(pattern, str):
            pattern = re.compile(pattern, re.MULTILINE)
        for source, text in self.texts:
            match = pattern.search(text)
            if match:
                return Hit(match, source)
        return None

    def search_all(self, pattern: re.Pattern | str) -> list[Hit]:
        if isinstance(pattern, str):
            pattern = re.compile(pattern, re.MULTILINE)
        return [Hit(match, source) for source, text in self.texts for match in pattern.finditer(text)]

    @property
    def has_error_text(self) -> bool:
        return bool(self.error_text.strip())

    # ------------------------------------------------------------ machine

    @property
    def os(self) -> str:
        return self.host.os

    @property
    def driver_os(self) -> str:
        """Whose driver minimums apply: WSL2 runs on the Windows driver (as envpin.resolver.target.Target.driver_os)."""
        return "windows" if self.host.wsl else self.host.os

    @property
    def platform(self) -> str:
        """The machine's platform key, as the database spells it (linux with arm64 is linux-aarch64)."""
        return platform_key(self.host.os, self.host.arch)

    @property
    def windows(self) -> bool:
        return self.host.os == "windows"

    @property
    def linux(self) -> bool:
        return self.host.os == "linux"

    @property
    def nvidia(self) -> bool:
        return self.host.driver is not None

    @cached_property
    def gpus(self):
        return machine_gpus(self.host, self.env, self.database)

    @property
    def driver_line(self) -> str:
        driver = self.host.driver
        if driver is None:
            return "no NVIDIA driver found"
        return f"NVIDIA driver {driver.version}" + (f" (supports CUDA ≤ {driver.cuda})" if driver.cuda else "")

    def env_var(self, name: str):
        return self.host.env.get(name)

    def path_list(self, name: str) -> list[str]:
        value = self.host.env.get(name) or []
        if isinstance(value, str):
            return [part for part in value.split(";" if self.windows else ":") if part]
        return [str(part) for part in value]

    @property
    def in_container(self) -> bool:
        return any("running in a container" in note for note in self.host.notes)

    # ------------------------------------------------------------ environment

    def framework(self, name: str) -> FrameworkFacts | None:
        return self.env.framework(name) if self.env else None

    @property
    def torch(self) -> FrameworkFacts | None:
        return self.framework("torch")

    def package(self, name: str) -> str | None:
        """The installed version of a distribution (pip, then conda), or the framework's own report."""
        if self.env is None:
            return None
        version = self.env.packages.version(name)
        if version is None and name in FRAMEWORK_KEYS:
            facts = self.framework(name)
            version = facts.version if facts else None
        return version

    def release(self, name: str):
        """The installed version as a packaging Version without its local part (2.5.1+cu124 -> 2.5.1)."""
        text = self.package(name)
        if not text:
            return None
        try:
            return Version(Version(text).base_version)
        except ValueError:  # InvalidVersion, or a number too long for int()
            return None

    def local_tag(self, name: str) -> str | None:
        text = self.package(name) or ""
        return text.partition("+")[2] or None

    @property
    def python_command(self) -> str:
        """How to run the environment's interpreter in a fix: its full path when known."""
        executable = self.env.python.executable if self.env else None
        if not executable:
            return "python"
        if self.windows:
            return f'"{executable}"' if " " in executable else executable
        return shlex.quote(executable)

    def pip(self, *words: str) -> str:
        return " ".join([self.python_command, "-m", "pip", *words])

    @property
    def env_dirs(self) -> Mapping[str, list[str]]:
        return self.env.library_dirs if self.env else {}

    @property
    def prefix(self) -> str | None:
        return self.env.python.prefix if self.env else None


    # ------------------------------------------------------------ what a fix may take for granted

    @property
    def conda_env(self) -> bool:
        """The environment is a conda one (its own conda-meta records, or the probe's env type)."""
        if self.env is None:
            return self.host.python.env_type == "conda"
        return bool(self.env.packages.conda) or self.env.python.env_type == "conda"

    def conda_build(self, name: str) -> str | None:
        """The conda build string of an installed package (`cuda120py311h…`), or None."""
        record = self.env.packages.conda.get(name) if self.env else None
        return record.build if record is not None else None

    @cached_property
    def text_gpus(self) -> tuple[TextGpu, ...]:
        """The NVIDIA GPUs the texts name (a warning's GPU, a pasted nvidia-smi table's), each with the compute
        capability the text gives: the GPU of the machine the message came from, whatever the facts say."""
        found: dict[str, TextGpu] = {}
        for _source, text in self.texts:
            for gpu in text_gpus(text):
                found.setdefault(gpu.name, gpu)
        return tuple(found.values())

    @cached_property
    def gpu_in_text(self) -> str | None:
        """An NVIDIA GPU the error text names (the message of a GPU machine, whatever the facts say)."""
        if self.text_gpus:
            return self.text_gpus[0].name
        hit = self.search_pattern(r"NVIDIA (?:GeForce |RTX |Quadro |TITAN |Tesla |A\d|H\d|B\d|L\d)[\w -]*?(?= with CUDA capability|\)|,|\n|$)")
        return gpu_name(hit.line) if hit else None

    @cached_property
    def zluda(self) -> bool:
        """ZLUDA (CUDA on AMD GPUs) is in use: named in the error text or in a path the facts list."""
        if self.search_pattern(r"(?i)zluda"):
            return True
        return any("zluda" in directory.lower() for directory in (*self.host.files, *self.path_list("PATH")))


# A fix's preconditions, by name: each answers False when the facts contradict it (True or None keep the fix).
PRECONDITIONS = {
    "torch-installed": lambda case: None if case.env is None else case.package("torch") is not None,
    "jax-from-pip": lambda case: case.conda_build("jaxlib") is None,  # a conda-forge jaxlib is not pip's to replace
    "conda-env": lambda case: case.conda_env,
    "no-nvidia-gpu": lambda case: not case.nvidia and not case.host.gpus and case.gpu_in_text is None
    and case.host.driver_trouble is None,
    "nvidia-gpu": lambda case: not case.zluda,
    "zluda": lambda case: case.zluda,
}


def holds(case: Case, line: str) -> bool:
    """Whether a fix line's preconditions (a Fix's `requires`) are not contradicted by the facts."""
    return all(PRECONDITIONS[name](case) is not False for name in getattr(line, "requires", ()))


def version_tuple(text: str | None) -> tuple[int, ...]:
    """'12.4' -> (12, 4); '2.5.1+cu124' -> (2, 5, 1); junk -> ()."""
    if not text:
        return ()
    numbers = re.findall(r"\d+", text.split("+")[0])
    return tuple(int(n) for n in numbers[:4])


def join_dir(directory: str, name: str) -> str:
    """A file path in the style of its directory (Windows paths keep their backslashes)."""
    separator = "\\" if ("\\" in directory or re.match(r"^[A-Za-z]:", directory)) else "/"
    return directory.rstrip("\\/") + separator + name


def same_path(first: str | None, second: str | None) -> bool:
    if not first or not second:
        return False
    def norm(path: str) -> str:
        return os.path.normcase(path.replace("\\", "/").rstrip("/")).lower()
    return norm(first) == norm(second)
