"""The PyPI the refresh tests serve: recorded answers (tests/fixtures/refresh) plus planted new releases.

Recorded: the JSON API and PEP 691 documents of the nine packages (trimmed to a few releases) and the real
METADATA of the wheels the refresh reads for the newest releases. Those METADATA files are served as PEP 658
`.metadata` files (declared with their sha256 in the simple API) and inside small wheels built here, so both
routes exist, as on PyPI.

Recorded wheel members (tests/fixtures/refresh/members: TensorFlow 2.21.0's build_info.py) are put into the
wheels built here, where the refresh reads them with HTTP range requests.

Planted (fake, clearly newer than anything real): torch 2.16.0 (the 2.15.0 files renamed, uploaded
2026-12-22, METADATA = the recorded 2.15.0 METADATA with a new version and nvidia-cudnn-cu13 9.27.0.12),
torchvision 0.30.0 (`torch==2.16.0`), jax/jaxlib/jax-cuda12-plugin/jax-cuda12-pjrt 0.12.1 and no
jax-cuda13-plugin 0.12.1, jax-rocm7-plugin/jax-rocm7-pjrt 0.12.1 (the recorded 0.12.0, renamed); on request
(`plant_tensorflow`) tensorflow and tensorflow-cpu 2.22.0 (2.21.0 renamed, its build_info.py inside) and
tensorflow-rocm 2.22.0.700 (2.14.0.600 renamed).
Their wheels are built at test time and declare no `.metadata`, so the refresh must read them with HTTP range
requests.
"""

from __future__ import annotations

import copy
import hashlib
import io
import json
import zipfile
from pathlib import Path

from envpin.refresh.wheels import WheelTags, wheel_tags
from tests.integration.loopback_pypi import LoopbackPyPI

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "refresh"
PACKAGES = ("torch", "torchvision", "torchaudio", "tensorflow", "tensorflow-cpu", "tensorflow-rocm", "jax", "jaxlib",
            "jax-cuda12-plugin", "jax-cuda13-plugin", "jax-cuda12-pjrt", "jax-cuda13-pjrt", "jax-rocm7-plugin",
            "jax-rocm7-pjrt")
PLANTED_DAY = "2026-12-22"
PLANTED_UPLOAD = f"{PLANTED_DAY}T15:00:00.000000Z"


def recorded_metadata() -> dict[str, str]:
    return {path.name.removesuffix(".METADATA"): path.read_text() for path in (FIXTURES / "metadata").iterdir()}


def recorded_members(filename: str) -> dict[str, str]:
    """The members recorded from the real wheel of that name: path inside the wheel -> text."""
    folder = FIXTURES / "members" / filename
    if not folder.is_dir():
        return {}
    return {str(path.relative_to(folder)): path.read_text() for path in folder.rglob("*") if path.is_file()}


def build_wheel(filename: str, metadata: str, filler: int = 150_000, members: dict[str, str] | None = None) -> bytes:
    """A real wheel (zip) whose METADATA (and other members) come first and a filler after it, so a range reader
    has to come back for the METADATA after reading the central directory from the tail."""
    name, version = filename.split("-")[:2]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as wheel:
        wheel.writestr(f"{name}-{version}.dist-info/METADATA", metadata, compress_type=zipfile.ZIP_DEFLATED)
        for member, text in (members or {}).items():
            wheel.writestr(member, text, compress_type=zipfile.ZIP_DEFLATED)
        wheel.writestr(f"{name}/_filler.bin", bytes(range(256)) * (filler // 256), compress_type=zipfile.ZIP_STORED)
        wheel.writestr(f"{name}-{version}.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: false\n")
        wheel.writestr(f"{name}-{version}.dist-info/RECORD", "")
    return buffer.getvalue()


class World:
    """The documents and files to serve; tests change them before `serve()`."""

    def __init__(self, plant: bool = True):
        self.json = {p: json.loads((FIXTURES / "pypi" / f"{p}.json").read_text()) for p in PACKAGES}
        self.simple = {p: json.loads((FIXTURES / "simple" / f"{p}.json").read_text()) for p in PACKAGES}
        self.metadata: dict[str, str] = {}  # file name -> METADATA served by PEP 658 (declared)
        self.wheels: dict[str, bytes] = {}  # file name -> wheel bytes
        for filename, text in recorded_metadata().items():
            self.metadata[filename] = text
            self.wheels[filename] = build_wheel(filename, text, filler=20_000, members=recorded_members(filename))
        if plant:
            self.plant_torch()
            self.plant_torchvision()
            self.plant_jax()

    # ------------------------------------------------------------ planted releases

    def clone_release(self, package: str, old: str, new: str, metadata_for, members_for=lambda filename: {}) -> None:
        """Copy release `old` of a package as `new` (files renamed, uploaded on PLANTED_DAY); each new
        wheel is built from `metadata_for(new filename)` (and holds `members_for(new filename)`)."""
        def rename(name: str) -> str:
            return name.replace(f"-{old}-", f"-{new}-")

        self.json[package]["releases"][new] = []
        for entry in self.json[package]["releases"][old]:
            clone = dict(entry, filename=rename(entry["filename"]), upload_time=PLANTED_UPLOAD[:19],
                         upload_time_iso_8601=PLANTED_UPLOAD)
            self.json[package]["releases"][new].append(clone)
        for entry in [e for e in self.simple[package]["files"] if f"-{old}-" in e["filename"]]:
            filename = rename(entry["filename"])
            self.wheels[filename] = build_wheel(filename, metadata_for(filename), members=members_for(filename))
            self.simple[package]["files"].append(dict(
                entry, filename=filename, **{"upload-time": PLANTED_UPLOAD},
                hashes={"sha256": hashlib.sha256(self.wheels[filename]).hexdigest()},
                size=len(self.wheels[filename]),
            ))

    def plant_torch(self, toolkit: str = "13.2.2") -> None:
        by_platform = {}
        for filename, text in recorded_metadata().items():
            if filename.startswith("torch-2.15.0-"):
                by_platform[_tags(filename).platforms[0]] = text

        def metadata_for(filename: str) -> str:
            text = by_platform[_tags(filename).platforms[0]]
            return text.replace("Version: 2.15.0", "Version: 2.16.0").replace(
                "nvidia-cudnn-cu13==9.26.0.51", "nvidia-cudnn-cu13==9.27.0.12").replace(
                "nvjitlink,nvrtc,nvtx]==13.2.2", f"nvjitlink,nvrtc,nvtx]=={toolkit}")

        self.clone_release("torch", "2.15.0", "2.16.0", metadata_for)

    def plant_torchvision(self) -> None:
        template = next(t for f, t in recorded_metadata().items() if f.startswith("torchvision-0.29.2-"))

        def metadata_for(filename: str) -> str:
            return template.replace("Version: 0.29.2", "Version: 0.30.0").replace(
                "Requires-Dist: torch (>=2.14.0)", "Requires-Dist: torch (==2.16.0)")

        self.clone_release("torchvision", "0.29.2", "0.30.0", metadata_for)

    def plant_jax(self, pjrt: bool = True) -> None:
        recorded = recorded_metadata()
        jax = recorded["jax-0.12.0.1-py3-none-any.whl"]
        self.clone_release("jax", "0.12.0.1", "0.12.1", lambda f: jax.replace("0.12.0.1", "0.12.1"))
        self.clone_release("jaxlib", "0.12.0.1", "0.12.1", lambda f: "Metadata-Version: 2.1\nName: jaxlib\n")
        plugin = {f: t for f, t in recorded.items() if f.startswith("jax_cuda12_plugin-0.12.0.1-")}

        def plugin_metadata(filename: str) -> str:
            text = plugin.get(filename.replace("0.12.1", "0.12.0.1")) or next(iter(plugin.values()))
            return text.replace("0.12.0.1", "0.12.1")

        self.clone_release("jax-cuda12-plugin", "0.12.0.1", "0.12.1", plugin_metadata)
        if pjrt:
            self.clone_release("jax-cuda12-pjrt", "0.12.0.1", "0.12.1", lambda f: "Metadata-Version: 2.1\nName: x\n")
        rocm = next(t for f, t in recorded.items() if f.startswith("jax_rocm7_plugin-0.12.0-"))
        self.clone_release("jax-rocm7-plugin", "0.12.0", "0.12.1", lambda f: rocm.replace("0.12.0", "0.12.1"))
        if pjrt:
            self.clone_release("jax-rocm7-pjrt", "0.12.0", "0.12.1", lambda f: "Metadata-Version: 2.1\nName: x\n")

    def plant_tensorflow(self, build_info: bool = True) -> None:
        """tensorflow and tensorflow-cpu 2.22.0 (2.21.0 renamed; the Linux x86_64 wheel holds 2.21.0's recorded
        build_info.py, or none), tensorflow-rocm 2.22.0.700 (2.14.0.600 renamed)."""
        recorded = recorded_metadata()
        by_platform = {_tags(f).platforms[0]: t for f, t in recorded.items() if f.startswith("tensorflow-2.21.0-")}
        members = {_tags(f).platforms[0]: m for f in recorded if f.startswith("tensorflow-2.21.0-")
                   for m in [recorded_members(f)] if m}

        def metadata_for(filename: str) -> str:
            return by_platform[_tags(filename).platforms[0]].replace("2.21.0", "2.22.0")

        def members_for(filename: str) -> dict[str, str]:
            return members.get(_tags(filename).platforms[0], {}) if build_info else {}

        self.clone_release("tensorflow", "2.21.0", "2.22.0", metadata_for, members_for)
        self.clone_release("tensorflow-cpu", "2.21.0", "2.22.0", lambda f: "Metadata-Version: 2.1\nName: x\n")
        self.clone_release("tensorflow-rocm", "2.14.0.600", "2.22.0.700", lambda f: "Metadata-Version: 2.1\nName: x\n")

    # ------------------------------------------------------------ serving

    def serve(self) -> LoopbackPyPI:
        server = LoopbackPyPI()
        files = f"{server.base}/files"
        for package in PACKAGES:
            document = copy.deepcopy(self.json[package])
            for entries in document["releases"].values():
                for entry in entries:
                    entry["url"] = f"{files}/{entry['filename']}"
            server.add(f"/pypi/{package}/json", json.dumps(document).encode(), "application/json")
            simple = copy.deepcopy(self.simple[package])
            for entry in simple["files"]:
                entry["url"] = f"{files}/{entry['filename']}"
                if entry["filename"] in self.metadata:
                    body = self.metadata[entry["filename"]].encode()
                    entry["core-metadata"] = {"sha256": hashlib.sha256(body).hexdigest()}
                    server.add(f"/files/{entry['filename']}.metadata", body, "text/plain")
            server.add(f"/simple/{package}/", json.dumps(simple).encode(), "application/vnd.pypi.simple.v1+json")
        for filename, body in self.wheels.items():
            server.add(f"/files/{filename}", body)
        return server


def _tags(filename: str) -> WheelTags:
    tags = wheel_tags(filename)
    assert tags is not None, f"{filename} is not a wheel's name"
    return tags
