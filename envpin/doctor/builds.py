"""CPU-only builds (catalogue §2.5, C1 and C2): a torch that cannot use the GPU the machine has.

C1 is decided by facts alone: `torch.version.cuda` is None (the probe), or the version's local tag / the
PyPI default for the platform says CPU (the database). The error text ("Torch not compiled with CUDA
enabled", or XPU on an Intel GPU) only raises the confidence. On a machine without an NVIDIA driver a CPU build is the right one:
then it is a note that says what a GPU machine would install instead.
"""

from __future__ import annotations

from packaging.version import InvalidVersion, Version

from envpin.doctor.fixes import gpu_machine_builds, install_fix
from envpin.doctor.model import CONFIRMED, LIKELY, MATCHED, NOTED, PROVEN, Case, Finding
from envpin.vocabulary.variants import CPU, CUDA, ROCM, kind_of

C1 = "TORCH-CPU-WHEEL"
C2 = "CONDA-TORCH-CPU-VARIANT"


def findings(case: Case) -> list[Finding]:
    # The conda variant is the more specific cause of the same CPU build: its catalogue entry outranks C1.
    return [f for f in (_conda_cpu_variant(case), _cpu_wheel(case)) if f]


def torch_build_kind(case: Case) -> tuple[str | None, list[str]]:
    """'cpu', 'cuda', 'rocm' or None (unknown / not installed), with the facts that say so."""
    torch = case.torch
    if torch is not None and torch.import_ok:
        if torch.hip:
            return "rocm", [f"torch.version.hip is {torch.hip}"]
        if torch.cuda:
            return "cuda", [f"torch.version.cuda is {torch.cuda}"]
        return "cpu", [f"torch {torch.version}: torch.version.cuda is None (probe)"]
    version = case.package("torch")
    if not version:
        return None, []
    tag = case.local_tag("torch")
    if tag:
        kind = kind_of(tag)
        if kind == CPU:
            return CPU, [f"torch {version}: the +cpu local version is the CPU build from download.pytorch.org/whl/cpu"]
        if kind in (CUDA, ROCM):
            return kind, [f"torch {version} is a {tag} build"]
        return None, []
    release = case.database.torch_release(str(case.release("torch"))) if case.release("torch") else None
    platform = case.platform
    served = release.pypi.get(platform) if release else None
    if release is not None and served == "cpu":
        return "cpu", [f"torch {version} without a local tag is PyPI's wheel, and PyPI's torch {release.version} for "
                       f"{platform} is the CPU build (database {case.database.version})"]
    if release is not None and served:
        return "cuda", [f"PyPI's torch {release.version} for {platform} is the {served} build"]
    return None, []


def _cpu_wheel(case: Case) -> Finding | None:
    hit = case.search(C1)
    kind, facts = torch_build_kind(case)
    if kind is None and hit is None:
        return None
    gpus = ", ".join(g.name for g in case.gpus)
    machine = [case.driver_line] + ([f"GPU: {gpus}"] if gpus else ["no NVIDIA GPU found"])
    evidence = ([hit.evidence()] if hit else []) + facts + machine
    if kind == "cpu" and case.nvidia:
        subcause = _how_it_got_here(case)
        return Finding(
            C1, "error", f"torch {case.package('torch') or ''} is a CPU-only build on a machine with an NVIDIA GPU".replace("  ", " "),
            tuple(evidence + subcause),
            tuple(install_fix(case) + [_keep_it_fix(case)]),
            CONFIRMED if hit else PROVEN,
        )
    if kind == "cpu":
        if case.os == "macos":
            return Finding(C1, "info", "torch is a CPU build: macOS has no CUDA (Apple silicon uses MPS)", tuple(evidence),
                           ("use device 'mps' on Apple silicon, or 'cpu'; a CUDA build needs Linux or Windows with an NVIDIA GPU",),
                           NOTED)
        if any(g.vendor in ("intel", "amd") for g in case.host.gpus):
            # an Intel or AMD GPU: its builds (+xpu, +rocm) are the solve's to pick for this very machine
            return Finding(C1, "error" if hit else "warning", f"torch {case.package('torch') or ''} is a CPU build; this "
                           f"machine's {', '.join(g.name for g in case.host.gpus)} needs the GPU build".replace("  ", " "),
                           tuple(evidence), tuple(install_fix(case)), MATCHED if hit else LIKELY)
        severity = "error" if hit else "info"
        title = (f"torch {case.package('torch')} is a CPU build, and this machine has no NVIDIA driver"
                 if not hit else "CUDA was asked for, but torch is a CPU build and this machine has no NVIDIA driver")
        fix = ["here, select the device in code: `device = 'cuda' if torch.cuda.is_available() else 'cpu'`"] if hit else []
        fix += gpu_machine_builds(case)
        return Finding(C1, severity, title, tuple(evidence), tuple(fix), MATCHED if hit else NOTED)
    if hit and kind == "cuda":
        # The message came from a CPU torch, yet this environment's torch is a CUDA build: another interpreter ran.
        return Finding(C1, "warning", "the error came from a CPU-only torch, but this environment's torch is a CUDA build",
                       tuple(evidence + ["the program that failed probably ran another interpreter or environment"]),
                       (f"run the program with {case.python_command} (or select it in the IDE / Jupyter kernel)",),
                       LIKELY)
    if hit:
        # an Intel or AMD GPU in the facts: the solve picks its build (+xpu, +rocm) for this very machine
        other_vendor = any(g.vendor in ("intel", "amd") for g in case.host.gpus)
        asked = "XPU" if "XPU" in hit.line else "CUDA"
        return Finding(C1, "error", f"torch is a CPU-only build (Torch not compiled with {asked} enabled)", tuple(evidence),
                       tuple(install_fix(case) if case.nvidia or other_vendor else gpu_machine_builds(case)), MATCHED)
    return None


def _how_it_got_here(case: Case) -> list[str]:
    tag = case.local_tag("torch")
    if case.os == "windows" and not tag:
        return ["on Windows, plain `pip install torch` installs PyPI's CPU-only wheel; CUDA builds come from "
                "download.pytorch.org (pytorch/pytorch.github.io#757)"]
    if tag == "cpu":
        return ["it was installed from the …/whl/cpu index (or a mirror of it)"]
    return ["a later `pip install` of another package may have replaced the CUDA build with PyPI's"]


def _keep_it_fix(case: Case) -> str:
    return ("keep later installs from replacing it: put the torch line from `python -m pip freeze` in constraints.txt "
            "and add `-c constraints.txt` to every later `pip install`")


def _conda_cpu_variant(case: Case) -> Finding | None:
    evidence = []
    conda = case.env.packages.conda if case.env else {}
    pytorch = conda.get("pytorch")
    if pytorch and pytorch.build and ("cpu_" in pytorch.build or "_cpu_" in pytorch.build or pytorch.build.startswith("cpu")):
        evidence.append(f"conda list: pytorch {pytorch.version} {pytorch.build} ({pytorch.channel or 'channel ?'})")
    if "cpuonly" in conda:
        evidence.append(f"conda list: cpuonly {conda['cpuonly'].version} is installed (it forces the CPU variant)")
    mutex = conda.get("pytorch-mutex")
    if mutex and mutex.build and "cpu" in mutex.build:
        evidence.append(f"conda list: pytorch-mutex {mutex.version} {mutex.build}")
    hit = case.search(C2)
    if hit:
        evidence.insert(0, hit.evidence())
    if not evidence or not (case.nvidia or hit):
        return None
    fix = ["conda-forge: `conda install -c conda-forge \"pytorch=*=cuda*\"` in the environment"]
    listed = case.search_pattern(r"^\s*pytorch\s+(\S+)\s+\S*cpu\S*\s+pytorch\s*$")  # a pasted `conda list` line
    pytorch_channel = (pytorch is not None and (pytorch.channel or "").rstrip("/").endswith("pytorch")) or listed is not None
    if pytorch_channel:
        # From the pytorch channel the CUDA variant is chosen by asking for its CUDA package; without it the solver may
        # take the CPU build (pytorch/pytorch#32369). torch ≥ 1.13 names it pytorch-cuda, older releases cudatoolkit.
        version = pytorch.version if pytorch else listed.text(1) if listed else None
        release = case.release("torch") or (Version(version) if version and _is_version(version) else None)
        cuda = case.host.driver.cuda if case.host.driver and case.host.driver.cuda else "<CUDA version>"
        package = "pytorch-cuda" if release is None or release >= Version("1.13") else "cudatoolkit"
        fix.insert(0, f"reinstall from the pytorch channel with its CUDA package pinned, so the CPU build cannot be chosen: "
                      f"`conda install pytorch torchvision torchaudio {package}={cuda} -c pytorch"
                      + (" -c nvidia" if package == "pytorch-cuda" else " -c conda-forge") + "` (a CUDA that the driver supports)")
    if "cpuonly" in conda or (hit and "cpuonly" in hit.line):
        fix.insert(0, "`conda remove cpuonly` first: it pins the CPU variant")
    fix.append("when solving on a machine without a GPU, set `CONDA_OVERRIDE_CUDA=12.6` (the CUDA the target driver supports) "
               "so the solver sees a __cuda virtual package")
    fix.append("or use the pip wheels from the PyTorch index: " + install_fix(case)[0])
    return Finding(C2, "error" if case.nvidia else "warning", "conda installed the CPU variant of pytorch",
                   tuple(evidence + [case.driver_line]), tuple(fix), CONFIRMED if hit and case.nvidia else PROVEN)


def _is_version(text: str | None) -> bool:
    try:
        Version(text or "")
    except InvalidVersion:
        return False
    return True
