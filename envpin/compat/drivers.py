"""NVIDIA driver ↔ CUDA queries over the database (NVIDIA's Tables 2 and 3).

Two policies decide whether a driver can run a build made with CUDA X.Y:
- `minor` (the default, as PyTorch, uv and light-the-torch do): minor-version compatibility, so any driver at or
  above the CUDA major's baseline (Table 2) runs every X.y of that major, and an X.0 build also runs on the older
  driver its toolkit shipped with where Table 3 gives one (11.0 GA, 12.0 GA on Windows);
- `strict`: the driver the X.Y toolkit shipped with (Table 3, GA row).
CUDA 10.x has no minor-version compatibility, so both policies use the toolkit's own driver there.
"""

from __future__ import annotations

from functools import lru_cache

from envpin.base.errors import EnvpinInputError
from envpin.base.record import Record, record
from envpin.compat.model import Database, MinorVersionCompat, Provenance

POLICIES = ("minor", "strict")


@record
class DriverRequirement(Record):
    minimum: str
    rule: str  # a phrase for reasons: "CUDA 12.x by minor-version compatibility"
    provenance: Provenance
    # (lowest, highest): the drivers whose answer the `unverified` text decides, lowest <= driver < highest. Below
    # the lowest every reading refuses, from the highest every reading accepts: the Windows CUDA 12 minimum that
    # NVIDIA gave as 527.41 and as 528.33; a 13.5 toolkit whose own driver is unknown but lies from R580 (its
    # major's minimum) to 620.70.06 (a driver NVIDIA made for 13.5). None: the doubt decides for every driver.
    doubt_range: tuple[str, str] | None = None

    def doubt_decides(self, driver: str | None) -> bool:
        """Whether the requirement's `unverified` text decides the answer for this driver (None: not known)."""
        if not self.provenance.unverified:
            return False
        if self.doubt_range is None or driver is None:
            return True
        lowest, highest = self.doubt_range
        return driver_at_least(driver, lowest) and not driver_at_least(driver, highest)


@lru_cache(maxsize=4096)  # a pure function of the text: a solve compares its driver with each build's minimum
def parse_driver_version(text: str) -> tuple[int, ...]:
    words = text.strip().split(".")
    # int() also takes "５３５", "5_35" and "+535": only ASCII digit groups are a driver version
    # a group longer than any driver's is refused before int(), which raises ValueError past 4300 digits
    if not all(word.isascii() and word.isdigit() and len(word) <= 8 for word in words):
        raise EnvpinInputError(f"{text!r} is not an NVIDIA driver version such as 535.104.05")
    parts = tuple(int(word) for word in words)
    if not parts or not 100 <= parts[0] <= 9999 or len(parts) > 3:
        raise EnvpinInputError(f"{text!r} is not an NVIDIA driver version such as 535.104.05")
    return parts


def driver_at_least(driver: str, minimum: str) -> bool:
    return parse_driver_version(driver) >= parse_driver_version(minimum)


def minimum_driver(database: Database, cuda: str, os_name: str, policy: str) -> DriverRequirement | None:
    """The oldest driver that runs a build made with CUDA `cuda` (x.y, or a bare major "12" when the build's minor is
    not known: then the major's minimum) on `os_name`, or None when unknown. Asked for every CUDA build a solve
    judges, and by each machine of a fleet: kept with the database (`Database.memo`)."""
    memo = database.memo("minimum_driver")
    key = (cuda, os_name, policy)
    if key not in memo:
        memo[key] = _minimum_driver(database, cuda, os_name, policy)
    return memo[key]


def _minimum_driver(database: Database, cuda: str, os_name: str, policy: str) -> DriverRequirement | None:
    major = int(cuda.split(".")[0])
    compat = database.minor_version_compat.get(major)
    toolkit = database.toolkits.get(cuda) if "." in cuda else None
    if "." not in cuda:
        value = compat and (compat.windows if os_name == "windows" else compat.linux)
        if compat is None or not value:
            return None
        return DriverRequirement(value, f"CUDA {major}.x by minor-version compatibility",
                                 _for_os(compat.provenance, os_name), _disputed_range(compat, os_name, value))
    if policy == "minor" and compat is not None:
        value = compat.windows if os_name == "windows" else compat.linux
        own = None if toolkit is None else toolkit.driver_windows if os_name == "windows" else toolkit.driver_linux
        if value and toolkit is not None and own and not driver_at_least(own, value):
            # the toolkit shipped with an older driver than its major's minimum (11.0 GA: 450.51.05 under 11.x's
            # 450.80.02; 12.0 GA on Windows: 527.41): what it built runs on the driver it shipped with (Table 3).
            # Only an x.0 GA row is below its major's minimum, and those rows were read in Table 3: the toolkit
            # record's doubts are about its target list, not this figure.
            return DriverRequirement(own, f"the CUDA {cuda} toolkit's driver", Provenance(toolkit.provenance.sources))
        if value:
            return DriverRequirement(value, f"CUDA {major}.x by minor-version compatibility",
                                     _for_os(compat.provenance, os_name), _disputed_range(compat, os_name, value))
    if toolkit is not None:
        value = toolkit.driver_windows if os_name == "windows" else toolkit.driver_linux
        if value:
            return DriverRequirement(value, f"the CUDA {cuda} toolkit's driver", toolkit.provenance)
    if compat is not None:
        value = compat.windows if os_name == "windows" else compat.linux
        if value and toolkit is not None and os_name in toolkit.driver_not_read:
            # NVIDIA gives one, the database lacks it: the major's minimum is a floor the toolkit's own may exceed
            note = (f"the CUDA {cuda} toolkit's own {os_name} driver (NVIDIA Table 3) is not in the database, so only "
                    f"the CUDA {major}.x minimum (≥ {value}) was checked; the {cuda} toolkit's driver may be newer")
            release = toolkit.supported_by.get(os_name)
            sources = compat.provenance.sources + toolkit.provenance.sources
            # a driver known to run this CUDA bounds the doubt: from it on, the toolkit's own driver is met too
            band = None
            if release is not None and not release.provenance.unverified:
                note += f" than {value}, and {release.driver} (a driver NVIDIA made for CUDA {cuda}) or newer runs it"
                sources += release.provenance.sources
                band = (value, release.driver)
            provenance = Provenance(sources, _join(_for_os(compat.provenance, os_name).unverified, note))
            return DriverRequirement(value, f"CUDA {major}.x minimum; the CUDA {cuda} toolkit's own driver is not "
                                            "in the database", provenance, band)
        if value:
            # NVIDIA prints no per-toolkit Windows driver for 13.x ("N/A"); Table 2's major minimum is all there is.
            note = f"NVIDIA gives no {os_name} driver for the CUDA {cuda} toolkit; using the CUDA {major}.x minimum"
            provenance = Provenance(compat.provenance.sources, _join(_for_os(compat.provenance, os_name).unverified, note))
            return DriverRequirement(value, f"CUDA {major}.x (no per-toolkit {os_name} figure)", provenance)
    return None


def driver_max_cuda(database: Database, driver: str, os_name: str) -> str | None:
    """The newest CUDA x.y this driver supports: the newest toolkit whose driver it meets (Table 3), or whose
    `supported_by` driver it meets where its own is not read, or, where NVIDIA gives only the major's minimum
    (Table 2), that major's x.0. A toolkit whose own driver is not read is claimed only from its `supported_by`
    driver on, so the answer can be older than the driver's real one (a driver older than that one). Kept with the
    database (`Database.memo`): a fleet asks it of every machine."""
    memo = database.memo("driver_max_cuda")
    key = (driver, os_name)
    if key not in memo:
        memo[key] = _driver_max_cuda(database, driver, os_name)
    return memo[key]


def _driver_max_cuda(database: Database, driver: str, os_name: str) -> str | None:
    best: tuple[int, int] | None = None
    for toolkit in database.toolkits.values():
        minimum = toolkit.driver_windows if os_name == "windows" else toolkit.driver_linux
        release = toolkit.supported_by.get(os_name)
        if not minimum and release is not None:
            minimum = release.driver
        if minimum and driver_at_least(driver, minimum):
            best = max(best or (0, 0), _cuda_tuple(toolkit.version))
    for major, compat in database.minor_version_compat.items():
        minimum = compat.windows if os_name == "windows" else compat.linux
        if minimum and driver_at_least(driver, minimum):
            best = max(best or (0, 0), (major, 0))
    return None if best is None else f"{best[0]}.{best[1]}"


def _disputed_range(compat: MinorVersionCompat, os_name: str, applied: str) -> tuple[str, str] | None:
    lower = compat.disputed.get(os_name)
    return None if lower is None else (lower, applied)


def _cuda_tuple(version: str) -> tuple[int, int]:
    major, _, minor = version.partition(".")
    return int(major), int(minor or 0)


def cuda_at_least(version: str, minimum: str) -> bool:
    return _cuda_tuple(version) >= _cuda_tuple(minimum)


def _for_os(provenance: Provenance, os_name: str) -> Provenance:
    """The provenance as a requirement for `os_name`'s driver carries it: a doubt scoped (`unverified_on`) to the
    other OS's platforms is not this figure's."""
    if not provenance.unverified_on or any(p.startswith(f"{os_name}-") for p in provenance.unverified_on):
        return provenance
    return Provenance(provenance.sources)


def _join(first: str | None, second: str) -> str:
    return f"{first}; {second}" if first else second
