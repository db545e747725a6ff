"""A Dockerfile per image: the image's lock installed with hashes through uv (micromamba for a conda lock), on the
right base, and envpin's probe beside it. An image serves the machine classes one build runs on (envpin.app.fleet
chooses them); it is built from its folder alone, the lock and the probe (envpin/verify/probe.py, standard library
only) beside the Dockerfile, and holds no envpin: each node's verify Job runs the probe in the image's
environment, and `envpin fleet status --reports` judges its log against the node's facts.

- Wheels that bring their own CUDA libraries (torch, `tensorflow[and-cuda]`, `jax[cudaNN]`) and CPU builds go
  on the Docker official `python:<X.Y.Z>-slim-bookworm` image of the class's Python.
- A build that needs the system's CUDA and cuDNN (TensorFlow before 2.14 on Linux) goes on the
  `nvidia/cuda:<X.Y.Z>-cudnn<N>-runtime-<os>` image of its tested CUDA X.Y and cuDNN major, with a Python that
  uv installs.
- Builds from a conda channel (`--conda-source conda-forge` or `pytorch-channel`, TensorFlow before 2.14
  included: the channels' CUDA libraries are conda packages too, which the conda lock holds) go on
  micromamba's own image, `mambaorg/micromamba:<version>`, which installs the class's conda-lock.yml at
  /opt/env without solving it again. micromamba takes each package's sha256 from the lock (else its md5) and
  refuses a download that does not match it (mamba-org/mamba `libmamba/src/core/env_lockfile_conda.cpp` reads
  `hash.md5` / `hash.sha256`; `libmamba/src/core/package_fetcher.cpp` `PackageFetcher::validate` checks sha256
  first), and it reads a file as a conda lock by its `-lock.yml` ending (`is_conda_env_lockfile_name`).

Every tag comes from `image_tags.json`, copied from the public lists it names; a class whose base is not in
them is refused, never guessed. A GPU image sets `NVIDIA_REQUIRE_CUDA` to the CUDA and driver its
builds need, so the NVIDIA container runtime refuses to start it on a node whose driver is older
(libnvidia-container evaluates the `cuda` and `driver` constraints; comma-separated ones must all hold:
NVIDIA/cloud-native-docs container-toolkit/docker-specialized.md).
"""

from __future__ import annotations

import json
from importlib import metadata, resources

from envpin import __version__
from envpin.base.errors import EnvpinInputError
from envpin.base.escapes import printable
from envpin.base.record import Record, record
from envpin.compat.drivers import driver_at_least, driver_max_cuda, minimum_driver
from envpin.compat.model import Database
from envpin.fleet.nodes import MachineClass, slug
from envpin.resolver.plan import Plan

ENV_PREFIX = "/opt/env"  # the image's environment
ENV_PYTHON = f"{ENV_PREFIX}/bin/python"
LOCK_FOLDER = "/opt/envpin-lock"  # where the image keeps the lock it was installed from
PROBE_NAME = "envpin_probe.py"  # envpin's probe (envpin/verify/probe.py), beside the Dockerfile
PROBE_PATH = f"/opt/envpin/{PROBE_NAME}"  # and in the image
LOCK_NAME = "pylock.toml"  # beside the Dockerfile; uv recognises a PEP 751 lock by this name
CONDA_LOCK_NAME = "conda-lock.yml"  # beside the Dockerfile of a conda class; micromamba knows it by `-lock.yml`

# How a class's image is made, by what its builds need
WHEELS = "wheels"  # a slim Python image: the wheels bring their CUDA libraries (or it is a CPU build)
SYSTEM_CUDA = "system-cuda"  # NVIDIA's CUDA runtime image: the builds use its CUDA; uv installs the Python
CONDA = "conda"  # micromamba's image: a conda lock, its CUDA libraries conda packages


@record
class BaseImage(Record):
    image: str  # "python:3.11.14-slim-bookworm", "nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04", "mambaorg/micromamba:2.6.1"
    route: str  # WHEELS, SYSTEM_CUDA or CONDA
    why: str
    user: str | None = None  # the image's own user, UID:GID, to return to after installing as root

    @property
    def lock_name(self) -> str:
        return CONDA_LOCK_NAME if self.route == CONDA else LOCK_NAME


def recorded_tags() -> dict:
    return json.loads(resources.files("envpin.fleet").joinpath("image_tags.json").read_text(encoding="utf-8"))


def base_image(plan: Plan, machine_class: MachineClass, tags: dict | None = None) -> BaseImage:
    tags = tags or recorded_tags()
    facts = machine_class.facts
    if facts.os != "linux":
        raise EnvpinInputError(f"class {machine_class.name}: Dockerfiles are for Linux nodes, not {facts.os}")
    if plan.channel != "pip":
        return _micromamba_base(plan, machine_class, tags)
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
        return BaseImage(f"nvidia/cuda:{tag}", SYSTEM_CUDA, f"tensorflow {build.version} uses the system's CUDA "
                                                             f"{build.cuda} and cuDNN {cudnn_major}: NVIDIA's runtime image")
    architecture = {"x86_64": "amd64", "aarch64": "arm64v8"}.get(facts.arch)
    found = [t for t in tags["python"]["tags"] if t["python"] == python and architecture in t["architectures"]]
    if not found:
        raise EnvpinInputError(f"class {machine_class.name}: no recorded python slim image for Python {python} on "
                               f"{facts.arch}")
    what = "the wheels bring their CUDA libraries" if plan.accelerator != "cpu" else "a CPU build"
    return BaseImage(f"python:{found[0]['tag']}", WHEELS, f"{what}: the Python {python} slim image")


def _micromamba_base(plan: Plan, machine_class: MachineClass, tags: dict) -> BaseImage:
    platform = {"x86_64": "linux/amd64", "aarch64": "linux/arm64"}.get(machine_class.facts.arch)
    found = [t for t in tags.get("micromamba", {}).get("tags", []) if platform in t["platforms"]]
    if not found:
        raise EnvpinInputError(f"class {machine_class.name}: no recorded mambaorg/micromamba image for "
                               f"{machine_class.facts.arch}, to install its {plan.channel} builds")
    what = "CPU builds" if plan.accelerator == "cpu" else "builds whose CUDA libraries are conda packages"
    return BaseImage(f"mambaorg/micromamba:{found[0]['tag']}", CONDA,
                     f"{plan.channel} {what}: micromamba's image installs the class's conda lock", found[0]["user"])


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


@record
class Image(Record):
    """One image and the machine classes it serves: one build (`plan`) that runs on every one of them."""

    name: str  # its folder and its tag: a DNS-1123 label
    plan: Plan
    classes: tuple[MachineClass, ...]  # the class whose own answer `plan` is comes first


def image_name(classes: tuple[MachineClass, ...]) -> str:
    """A lone class's image is named after it; a shared image after its classes, joined by '-'."""
    return slug("-".join(machine_class.name for machine_class in classes))


def dockerfile(image: Image, database: Database, policy: str) -> str:
    """The image's Dockerfile; it is built from its folder, beside the lock (base_image(...).lock_name) and the
    probe (PROBE_NAME)."""
    plan, first = image.plan, image.classes[0]
    base = base_image(plan, first)
    uv = metadata.version("uv")  # the uv envpin itself locks and installs with
    python = plan.target.python
    served = "; ".join(f"{c.name} (nodes {', '.join(c.node_names)})" for c in image.classes)
    # a comment holds names from the inventory: escaped, so none of them starts a line (an instruction) of its own
    lines = [printable(line) for line in (
        f"# Written by envpin {__version__} (database {plan.db_version}) for machine "
        f"{'classes' if len(image.classes) > 1 else 'class'} {served}.",
        f"# Base: {base.why}.",
        f"# Build from this folder, beside the lock ({base.lock_name}) and the probe ({PROBE_NAME}): "
        f"docker build -t IMAGE:{image.name} .",
    )]
    if base.route == WHEELS:
        lines += [f"FROM {base.image}", f"RUN pip install --no-cache-dir uv=={uv}"]
    else:  # an image without Python: uv, one static binary, comes from a first stage
        lines += [f"FROM python:{_python_tag(python)} AS uv", f"RUN pip install --no-cache-dir uv=={uv}", "",
                  f"FROM {base.image}", "COPY --from=uv /usr/local/bin/uv /usr/local/bin/uv"]
        if base.route == SYSTEM_CUDA:
            lines += ["ENV UV_PYTHON_INSTALL_DIR=/opt/python"]
    requirement = cuda_requirement(plan, database, policy)
    if requirement is not None:
        lines += ["# The NVIDIA container runtime refuses a node whose driver is older than the builds need.",
                  "ENV NVIDIA_VISIBLE_DEVICES=all \\",
                  "    NVIDIA_DRIVER_CAPABILITIES=compute,utility \\",
                  f'    NVIDIA_REQUIRE_CUDA="{requirement}"']
    lines += [f"COPY {base.lock_name} {LOCK_FOLDER}/{base.lock_name}"]
    if base.route == CONDA:
        lines += ["# The environment, exactly the lock (no solve), every package checked against its sha256; /opt is root's",
                  "USER 0:0"]
    else:
        lines += ["# The environment, exactly the lock, every file checked against its sha256"]
    commands = install_commands(base, python)
    lines += [f"RUN {commands[0]}" + "".join(f" \\\n    && {command}" for command in commands[1:])]
    lines += [
        "# envpin's environment probe (the standard library only) for each node's verify Job: "
        f"{ENV_PYTHON} {PROBE_PATH}",
        f"COPY {PROBE_NAME} {PROBE_PATH}",
    ]
    if base.user is not None:
        lines += [f"USER {base.user}"]  # the image's own user again
    lines += ['ENV PATH="/opt/env/bin:${PATH}"']
    return "\n".join(lines) + "\n"


def install_commands(base: BaseImage, python: str) -> tuple[str, ...]:
    """The shell commands of the image's one install step (run after the lock is copied to LOCK_FOLDER), which the
    Dockerfile's RUN holds as they are: an environment at /opt/env that is exactly the lock, every file checked
    against the lock's sha256."""
    lock = f"{LOCK_FOLDER}/{base.lock_name}"
    if base.route == CONDA:
        return (f"micromamba create --yes --prefix {ENV_PREFIX} --file {lock}", "micromamba clean --all --yes")
    interpreter = "/usr/local/bin/python3" if base.route == WHEELS else python  # SYSTEM_CUDA: uv brings the Python
    return (f"uv venv --no-config --python {interpreter} {ENV_PREFIX}",
            f"uv pip sync --no-config --require-hashes --python {ENV_PYTHON} {lock}")


def conda_class_environment(plan: Plan, machine_class: MachineClass, policy: str, project=None):
    """The conda environment of a conda class's image, which its conda lock is solved from. A `pip:` section (the
    project's pip requirements) is refused: the conda lock cannot hold it, and an image without it would not be the
    project's environment."""
    from envpin.conda.specs import conda_environment  # noqa: PLC0415 - for conda classes only

    environment = conda_environment(plan, policy=policy, project=project)
    if environment.pip:
        raise EnvpinInputError(f"class {machine_class.name}: its conda environment has a pip: section "
                               f"({', '.join(environment.pip)}), which a conda lock does not hold: solve the class "
                               "with --conda-source pip, or without those requirements")
    return environment


def _python_tag(python: str) -> str:
    found = [t["tag"] for t in recorded_tags()["python"]["tags"] if t["python"] == python]
    if not found:
        raise EnvpinInputError(f"no recorded python image for Python {python}, to carry uv into the CUDA image")
    return found[0]
