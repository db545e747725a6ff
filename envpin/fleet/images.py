"""A Dockerfile per machine class: the class's lock installed with hashes through uv, on the right base.

- Wheels that bring their own CUDA libraries (torch, `tensorflow[and-cuda]`, `jax[cudaNN]`) and CPU builds go
  on the Docker official `python:<X.Y.Z>-slim-bookworm` image of the class's Python.
- A build that needs the system's CUDA and cuDNN (TensorFlow before 2.14 on Linux) goes on the
  `nvidia/cuda:<X.Y.Z>-cudnn<N>-runtime-<os>` image of its tested CUDA X.Y and cuDNN major, with a Python that
  uv installs.

Every tag comes from `image_tags.json`, copied from the public lists it names; a class whose base is not in
them is refused, never guessed. A GPU class's image sets `NVIDIA_REQUIRE_CUDA` to the CUDA and driver its
builds need, so the NVIDIA container runtime refuses to start it on a node whose driver is older
(libnvidia-container evaluates the `cuda` and `driver` constraints; comma-separated ones must all hold:
NVIDIA/cloud-native-docs container-toolkit/docker-specialized.md).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import metadata, resources

from envpin import __version__
from envpin.compat.drivers import driver_at_least, driver_max_cuda, minimum_driver
from envpin.compat.model import Database
from envpin.errors import EnvpinInputError
from envpin.fleet.nodes import MachineClass
from envpin.resolver.plan import Plan

LOCK_NAME = "pylock.toml"  # beside the Dockerfile; uv recognises a PEP 751 lock by this name


@dataclass(frozen=True)
class BaseImage:
    image: str  # "python:3.11.14-slim-bookworm", "nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04"
    system_cuda: bool  # the builds use the image's CUDA, and uv installs the Python
    why: str


def recorded_tags() -> dict:
    return json.loads(resources.files("envpin.fleet").joinpath("image_tags.json").read_text(encoding="utf-8"))


def base_image(plan: Plan, machine_class: MachineClass, tags: dict | None = None) -> BaseImage:
    tags = tags or recorded_tags()
    facts = machine_class.facts
    if facts.os != "linux":
        raise EnvpinInputError(f"class {machine_class.name}: Dockerfiles are for Linux nodes, not {facts.os}")
    if plan.channel != "pip":
        raise EnvpinInputError(f"class {machine_class.name}: a Dockerfile installs pip builds; this plan's builds come "
                               f"from {plan.channel} (solve with --conda-source pip)")
    python = plan.target.python
    system = [b for b in plan.builds.values() if b.framework == "tensorflow" and b.flavor == "cuda"]
    if system:
        build = system[0]
        gpu = build.tensorflow_release.gpu.get(plan.target.platform)
        cudnn_major = int(gpu.cudnn.split(".")[0]) if gpu is not None and gpu.cudnn else None
        found = [t for t in tags["cuda"]["tags"]
                 if ".".join(t["cuda"].split(".")[:2]) == build.cuda and t["cudnn_major"] == cudnn_major]
        if not found:
            raise EnvpinInputError(f"class {machine_class.name}: tensorflow {build.version} needs system CUDA {build.cuda} "
                                   f"with cuDNN {cudnn_major}, and no recorded nvidia/cuda runtime tag has both")
        tag = found[0]["tag"]  # the list is newest operating system first
        return BaseImage(f"nvidia/cuda:{tag}", True, f"tensorflow {build.version} uses the system's CUDA "
                                                      f"{build.cuda} and cuDNN {cudnn_major}: NVIDIA's runtime image")
    architecture = {"x86_64": "amd64", "aarch64": "arm64v8"}.get(facts.arch)
    found = [t for t in tags["python"]["tags"] if t["python"] == python and architecture in t["architectures"]]
    if not found:
        raise EnvpinInputError(f"class {machine_class.name}: no recorded python slim image for Python {python} on "
                               f"{facts.arch}")
    what = "the wheels bring their CUDA libraries" if plan.accelerator != "cpu" else "a CPU build"
    return BaseImage(f"python:{found[0]['tag']}", False, f"{what}: the Python {python} slim image")


def cuda_requirement(plan: Plan, database: Database, policy: str) -> str | None:
    """`cuda>=X.Y,driver>=D`: the oldest driver every GPU build of the plan runs on (the driver policy's
    minimum for its CUDA, or the framework's own stated minimum where higher), and the CUDA that driver
    supports. None for a plan without GPU builds."""
    minimums = []
    for build in plan.builds.values():
        if build.kind != "cuda" or build.cuda is None:
            continue
        cuda = build.cuda if "." in build.cuda else f"{build.cuda}.0"
        required = minimum_driver(database, cuda, "linux", policy)
        if required is not None:
            minimums.append(required.minimum)
        if build.min_driver.get("linux"):
            minimums.append(build.min_driver["linux"])
    if not minimums:
        return None
    driver = minimums[0]
    for candidate in minimums[1:]:
        if not driver_at_least(driver, candidate):
            driver = candidate
    supported = driver_max_cuda(database, driver, "linux")
    return f"cuda>={supported},driver>={driver}" if supported else f"driver>={driver}"


def dockerfile(plan: Plan, machine_class: MachineClass, database: Database, policy: str) -> str:
    base = base_image(plan, machine_class)
    uv = metadata.version("uv")  # the uv envpin itself locks and installs with
    python = plan.target.python
    lines = [
        f"# Written by envpin {__version__} (database {plan.db_version}) for machine class {machine_class.name}:",
        f"# nodes {', '.join(machine_class.node_names)}.",
        f"# Base: {base.why}.",
        f"# Build from this folder, beside the class's lock: docker build -t IMAGE:{machine_class.name} .",
    ]
    if base.system_cuda:
        lines += [f"FROM python:{_python_tag(python)} AS uv", f"RUN pip install --no-cache-dir uv=={uv}", "",
                  f"FROM {base.image}", "COPY --from=uv /usr/local/bin/uv /usr/local/bin/uv",
                  "ENV UV_PYTHON_INSTALL_DIR=/opt/python"]
        interpreter = python
    else:
        lines += [f"FROM {base.image}", f"RUN pip install --no-cache-dir uv=={uv}"]
        interpreter = "/usr/local/bin/python3"
    requirement = cuda_requirement(plan, database, policy)
    if requirement is not None:
        lines += ["# The NVIDIA container runtime refuses a node whose driver is older than the builds need.",
                  "ENV NVIDIA_VISIBLE_DEVICES=all \\",
                  "    NVIDIA_DRIVER_CAPABILITIES=compute,utility \\",
                  f'    NVIDIA_REQUIRE_CUDA="{requirement}"']
    lines += [
        f"COPY {LOCK_NAME} /opt/envpin-lock/{LOCK_NAME}",
        "# The environment, exactly the lock, every file checked against its sha256",
        f"RUN uv venv --no-config --python {interpreter} /opt/env \\",
        f"    && uv pip sync --no-config --require-hashes --python /opt/env/bin/python /opt/envpin-lock/{LOCK_NAME}",
        "# envpin beside it, for `envpin verify --prefix /opt/env` on each node",
        f"ARG ENVPIN_REQUIREMENT=envpin=={__version__}",
        f"RUN uv venv --no-config --python {interpreter} /opt/envpin \\",
        '    && uv pip install --no-config --python /opt/envpin/bin/python "${ENVPIN_REQUIREMENT}"',
        'ENV PATH="/opt/env/bin:${PATH}"',
    ]
    return "\n".join(lines) + "\n"


def _python_tag(python: str) -> str:
    found = [t["tag"] for t in recorded_tags()["python"]["tags"] if t["python"] == python]
    if not found:
        raise EnvpinInputError(f"no recorded python image for Python {python}, to carry uv into the CUDA image")
    return found[0]
