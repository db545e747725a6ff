"""GPU architecture (catalogue §2.4, A1–A6): does the build hold code this GPU can run?

The arch list is read at run time (torch.cuda.get_arch_list(), through the probe), as the catalogue asks;
only when no probe ran does it come from the database's record of the installed build. Coverage is
`envpin.compat.archs.coverage` (exact cubin, same-major older cubin, or PTX the driver can JIT), and the
GPU's capability comes from the probe or the database's GPU table. A GPU newer than every entry is A1; older
than every entry is A2 when another build of the same release still covers it (the arch was dropped), A3
otherwise; anything else uncovered is the generic A4.
"""

from __future__ import annotations

import re

from envpin.compat.archs import coverage, parse_arch_names
from envpin.compat.gpus import lookup_gpu
from envpin.compat.model import ArchList, ComputeCapability
from envpin.doctor.builds import torch_build_kind
from envpin.doctor.fixes import install_fix
from envpin.doctor.model import CONFIRMED, LIKELY, MATCHED, PROVEN, Case, Finding, version_tuple
from envpin.doctor.pasted import TextGpu, gpu_name
from envpin.verify.report import MachineGpu
from envpin.vocabulary.variants import CUDA, kind_of

A1, A2, A3, A4, A5, A6 = ("ARCH-GPU-NEWER-THAN-WHEEL", "ARCH-GPU-DROPPED-FROM-WHEEL", "ARCH-GPU-BELOW-MIN-CC",
                          "ARCH-NO-KERNEL-IMAGE", "TRITON-GPU-TOO-OLD", "EXT-NVCC-UNSUPPORTED-ARCH")
EXTENSION_FILE = re.compile(r"(?<![\w.\-])([\w.\-]+\.(?:cpython-[\w-]+\.so|so|pyd))\b")


def findings(case: Case) -> list[Finding]:
    found = _coverage_findings(case)
    found += [f for f in (_no_kernel_image(case, found), _triton(case), _nvcc_arch(case)) if f]
    return found


def torch_arch_list(case: Case) -> tuple[ArchList | None, str]:
    """The installed torch's arch list and where it came from."""
    torch = case.torch
    if torch is not None and torch.import_ok and torch.arch_list:
        return parse_arch_names(torch.arch_list)[0], "torch.cuda.get_arch_list() (probe): " + " ".join(torch.arch_list)
    tag = case.local_tag("torch")
    release = case.database.torch_release(str(case.release("torch"))) if case.release("torch") else None
    if release is None:
        return None, ""
    platform = case.platform
    variant = release.variants.get(tag) if tag else release.variants.get(release.pypi.get(platform, ""))
    archs = variant.archs.get(platform) if variant else None
    if variant is None or archs is None:
        return None, ""
    return archs, f"torch {release.version}+{variant.name} on {platform} (database {case.database.version}): {archs.describe()}"


def _coverage_findings(case: Case) -> list[Finding]:
    torch = case.torch
    # a CUDA build by the probe, its local tag, or the database's record of PyPI's wheel for this platform
    is_cuda_build = ((torch is not None and torch.import_ok and bool(torch.cuda)) or kind_of(case.local_tag("torch")) == CUDA
                     or torch_build_kind(case)[0] == CUDA)
    hit_newer = case.search(A1)
    hit_old = case.search(A3)
    if not (is_cuda_build or hit_newer or hit_old):
        return []
    archs, source = torch_arch_list(case)
    if archs is None and hit_newer:
        archs = parse_arch_names(hit_newer.text(3).split())[0]
        source = f"the warning's list: {hit_newer.text(3).strip()}"
    results = []
    for gpu in case.gpus:
        if gpu.capability is None or archs is None:
            continue
        if _runs(gpu.capability, archs, hit_newer):
            continue
        results.append(_uncovered(case, gpu.name, gpu.capability, archs, source, hit_newer, hit_old))
    if not results and hit_newer and archs is not None:  # no GPU facts: the warning itself names the GPU
        sm = hit_newer.text(2)
        capability = ComputeCapability(int(sm[:-1]), int(sm[-1]))
        if not _runs(capability, archs, hit_newer):
            results.append(_uncovered(case, gpu_name(hit_newer.text(1)), capability, archs, source, hit_newer, hit_old))
    if not results and hit_old:
        capability = ComputeCapability(int(hit_old.text(3)), int(hit_old.text(4)))
        results.append(_uncovered(case, gpu_name(hit_old.text(2)), capability, archs, source, hit_newer, hit_old))
    return results


def _runs(capability: ComputeCapability, archs: ArchList, warning) -> bool:
    """Does the build have code for the GPU? A cubin of its major does; PTX alone does only where torch did not say
    otherwise: its "not compatible" warning is its own check of the cubins, and a build whose only route is the JIT of
    an older PTX (torch 1.x's compute_37 / compute_50) fails in the CUDA libraries it bundles, which predate the GPU."""
    found = coverage(capability, archs)
    return found is not None and not (warning and found.how == "ptx")


def _uncovered(case: Case, name: str, capability: ComputeCapability, archs: ArchList | None, source: str,
               hit_newer, hit_old) -> Finding:
    everything = (archs.sass + archs.ptx) if archs else ()
    evidence = [f"{name} is compute capability {capability} ({capability.sm})"]
    if source:
        evidence.append(f"arch list from {source}")
    fix = install_fix(case)
    if everything and capability > max(everything):
        hit = hit_newer
        evidence.append(f"{capability.sm} is newer than every entry; cubins of another major do not run on it "
                        "(NVIDIA's binary compatibility holds within a major only)")
        signature, title = A1, f"torch has no kernels for {name} ({capability.sm}): the GPU is newer than the build"
        if capability.major >= 10:
            fix.append("replace compiled extensions (xformers, flash-attn, mmcv …) with builds for "
                       f"{capability.sm} as well")
    elif everything and capability < min(everything) and _other_build_covers(case, capability):
        hit = hit_newer
        evidence.append(f"{capability.sm} is older than every entry: this build dropped it, another build of the "
                        "same release still has it (database)")
        signature, title = A2, f"this torch build dropped {name} ({capability.sm})"
        fix.append("plan a GPU upgrade: the builds that keep this architecture are the ones being retired first")
    elif everything and capability < min(everything):
        hit = hit_old or hit_newer
        evidence.append(f"{capability.sm} is older than the oldest architecture in the build ({min(everything).sm})")
        signature, title = A3, f"{name} ({capability.sm}) is too old for this torch"
        fix.append(f"or build torch from source with TORCH_CUDA_ARCH_LIST=\"{capability}\", or run on the CPU")
    else:
        hit = hit_newer
        signature, title = A4, f"torch has no code for {name} ({capability.sm})"
    if hit:
        evidence.insert(0, hit.evidence())
    return Finding(signature, "error", title, tuple(evidence), tuple(fix), CONFIRMED if hit else PROVEN)


def _other_build_covers(case: Case, capability: ComputeCapability) -> bool:
    release = case.database.torch_release(str(case.release("torch"))) if case.release("torch") else None
    platform = case.platform
    if release is None:
        return False
    return any(coverage(capability, v.archs[platform]) is not None
               for v in release.variants.values() if platform in v.archs)


def _no_kernel_image(case: Case, arch_findings: list[Finding]) -> Finding | None:
    """"no kernel image": the framework's build is the culprit unless its arch list is known to cover the GPU; only
    then is it a compiled extension (the module the traceback names, when it is not torch's own)."""
    hit = case.search(A4)
    if not hit:
        return None
    if arch_findings:  # torch's own list explains it: the more specific A1/A2/A3 stands (catalogue §4.6)
        return None
    evidence = [hit.evidence()]
    archs, source = torch_arch_list(case)
    gpus = [g for g in case.gpus if g.capability] or [t for t in (_text_gpu(case, g) for g in case.text_gpus) if t.capability]
    # a cubin clears torch; PTX alone does not: the error says some kernel had neither, and in a build whose
    # GPU code reaches this GPU only by JIT (torch 1.0-1.5's 5.0+PTX, 3.7+PTX) that is any kernel without PTX
    covered = [g for g in gpus if archs and (found := coverage(g.capability, archs)) and found.how != "ptx"]
    extension = _extension_in(hit, case)
    if covered and source:
        evidence.append(f"torch itself covers {', '.join(f'{g.name} ({g.capability.sm})' for g in covered)} ({source})")
        if extension:
            evidence.append(f"the failing binary is probably {extension} (named in the traceback)")
        capability = covered[0].capability
        fix = [f"rebuild the extension for this GPU: `TORCH_CUDA_ARCH_LIST=\"{capability}\" {case.pip('install', '--no-build-isolation', '--no-cache-dir', '--force-reinstall', extension.split('.')[0] if extension else '<package>')}`",
               "or install a prebuilt wheel of it that lists this architecture (check with `cuobjdump --list-elf <file>.so`)"]
        return Finding(A4, "error", "a compiled extension has no kernel for this GPU", tuple(evidence), tuple(fix), CONFIRMED)
    # torch does not cover the GPU, or its coverage is not known: the framework is the first suspect, since it is the
    # binary every program loads (TensorFlow or JAX where the environment has no torch)
    framework = _framework_of(case)
    if framework != "torch":
        return _framework_suspect(case, hit, framework, gpus, extension)
    evidence += _why_torch_is_suspect(case, gpus, archs, source)
    # the installed release reaching the GPU only by JIT is what failed: the fix is another release, not a reinstall
    jit_only = archs is not None and any((found := coverage(g.capability, archs)) and found.how == "ptx" for g in gpus)
    fix = install_fix(case, keep_release=not jit_only)
    sm = gpus[0].capability.sm if gpus else "<the GPU's sm_XY>"
    fix.append(f"then check: `{case.python_command} -c \"import torch; print(torch.__version__, torch.cuda.get_arch_list())\"` "
               f"must list {sm} (or an older sm_ of the same major)")
    if extension:
        fix.append(f"if torch lists it and the error remains, rebuild {extension} for this GPU with TORCH_CUDA_ARCH_LIST")
    title = f"no kernel image for {gpus[0].name} ({sm}): the torch build is the first suspect" if gpus else "no kernel image for this GPU"
    return Finding(A4, "error", title, tuple(evidence), tuple(fix), MATCHED)


def _framework_of(case: Case) -> str:
    """The framework a "no kernel image" is first blamed on: torch, unless the environment has TensorFlow or JAX and
    no torch (an environment that is not known at all is taken to be torch's, the common case)."""
    if case.package("torch") or case.torch is not None:
        return "torch"
    for name in ("tensorflow", "jax"):
        if case.package(name) or case.framework(name) is not None:
            return name
    return "torch"


def _framework_suspect(case: Case, hit, framework: str, gpus, extension: str | None) -> Finding:
    """TensorFlow or JAX: blamed when its arch list (the probe's build info, else the database's record of a TensorFlow
    release's wheel) lacks the GPU or is not known; a compiled extension only when that list covers the GPU."""
    listed, source = _framework_arch_list(case, framework)
    evidence = [hit.evidence()]
    lacking = [g for g in gpus if listed is None or coverage(g.capability, listed) is None]
    if listed is not None and gpus and not lacking and extension:
        evidence += [f"{framework} covers {', '.join(f'{g.name} ({g.capability.sm})' for g in gpus)} ({source})",
                     f"the failing binary is probably {extension} (named in the traceback)"]
        return Finding(A4, "error", "a compiled extension has no kernel for this GPU", tuple(evidence),
                       (f"rebuild {extension} for {gpus[0].capability.sm}, or install a build of it that lists this "
                        "architecture (check with `cuobjdump --list-elf <file>.so`)",), CONFIRMED)
    for gpu in lacking:
        evidence.append(f"{framework} has no code for {gpu.name} ({gpu.capability.sm}): {source}" if listed is not None
                        else f"{framework}'s arch list is not in the facts or the database; {gpu.name} is {gpu.capability.sm}")
    fix = install_fix(case, framework)
    if extension:
        fix.append(f"if {framework}'s build lists the GPU and the error remains, rebuild {extension} for it")
    name = f"{gpus[0].name} ({gpus[0].capability.sm})" if gpus else "this GPU"
    return Finding(A4, "error", f"no kernel image for {name}: the {framework} build is the first suspect", tuple(evidence),
                   tuple(fix), CONFIRMED if listed is not None else MATCHED)


def _framework_arch_list(case: Case, framework: str) -> tuple[ArchList | None, str]:
    facts = case.framework(framework)
    if facts is not None and facts.arch_list:
        return parse_arch_names(facts.arch_list)[0], "its build lists " + " ".join(facts.arch_list) + " (probe)"
    release = case.release(framework)
    if framework == "tensorflow" and release is not None:
        record = next((r for r in case.database.tensorflow_releases if r.version == release), None)
        build = record.gpu.get(case.platform) if record is not None else None
        if build is not None and build.archs is not None:
            return build.archs, f"tensorflow {release} on {case.platform} (database {case.database.version}): {build.archs.describe()}"
    return None, ""


def _text_gpu(case: Case, gpu: TextGpu) -> MachineGpu:
    """A GPU the error text names, with its capability from the text or, by name, the database."""
    if gpu.capability is not None:
        return MachineGpu(gpu.name, gpu.capability, "error text")
    model = lookup_gpu(case.database, gpu.name)
    return MachineGpu(gpu.name, model.compute_capability if model else None, "database")


def _why_torch_is_suspect(case: Case, gpus, archs: ArchList | None, source: str) -> list[str]:
    if archs is not None and source:  # the list is known and lacks the GPU, or reaches it by JIT only
        lines = []
        for g in gpus:
            found = coverage(g.capability, archs)
            if found is None:
                lines.append(f"torch has no code for {g.name} ({g.capability.sm}): arch list from {source}")
            elif found.how == "ptx":
                lines.append(f"torch reaches {g.name} ({g.capability.sm}) only by {found.describe(g.capability)} (arch list from "
                             f"{source}): a kernel without PTX, of the build or of a library it loads, has no code for it")
                lines += _first_toolkit_lines(case, [g])
        return lines
    lines = []
    version = case.package("torch")
    release = case.release("torch")
    known = case.database.torch_releases
    if not version:
        lines.append("the torch version is not in the facts, so its arch list cannot be read")
    elif release is not None and case.database.torch_release(str(release)) is None and known and release < min(r.version for r in known):
        lines.append(f"torch {version} is older than every release in the database (the oldest is "
                     f"{min(r.version for r in known)}), so its arch list cannot be read there")
    elif version:
        lines.append(f"torch {version}'s arch list is neither in the facts nor in the database")
    return lines + _first_toolkit_lines(case, gpus)


def _first_toolkit_lines(case: Case, gpus) -> list[str]:
    lines = []
    for gpu in gpus:
        first = min((t.version for t in case.database.toolkits.values() if gpu.capability in t.targets),
                    key=version_tuple, default=None)
        if first:
            lines.append(f"{gpu.name} is {gpu.capability.sm}: only builds made with CUDA ≥ {first} can hold code for it (database)")
    return lines


def _extension_in(hit, case: Case) -> str | None:
    for _source, text in case.texts:
        names = [n for n in EXTENSION_FILE.findall(text) if not n.startswith(("libtorch", "libc10", "_C."))]
        if names:
            return names[-1]
    return None


def _triton(case: Case) -> Finding | None:
    hit = case.search(A5)
    script_compiles = bool(case.script_text and "torch.compile" in case.script_text)
    old = [g for g in case.gpus if g.capability and g.capability < ComputeCapability(7, 0)]
    if not hit and not (script_compiles and old):
        return None
    evidence = ([hit.evidence()] if hit else []) + [f"{g.name} is {g.capability.sm}; Triton needs 7.0 or newer" for g in old]
    if script_compiles:
        evidence.append(f"{case.script_path} calls torch.compile")
    return Finding(A5, "error", "torch.compile needs Triton, which does not support this GPU (compute capability < 7.0)",
                   tuple(evidence),
                   ("run without compiling: `TORCHDYNAMO_DISABLE=1`, or `torch.compile(model, backend=\"eager\")`, or the "
                    "project's own switch (nnU-Net: `nnUNet_compile=f`)",
                    "or use a GPU of compute capability 7.0 (Volta) or newer"),
                   CONFIRMED if hit and old else MATCHED if hit else LIKELY)


def _nvcc_arch(case: Case) -> Finding | None:
    hit = case.search(A6)
    if not hit:
        return None
    digits = hit.text(1)
    capability = ComputeCapability(int(digits[:-1]), int(digits[-1]))
    evidence = [hit.evidence()]
    toolkits = sorted(case.host.toolkits, key=lambda t: version_tuple(t.version))
    if toolkits:
        evidence.append("CUDA toolkits here: " + ", ".join(f"{t.version} ({t.nvcc or t.root})" for t in toolkits))
    first = _first_toolkit_for(case, capability)
    last = _last_toolkit_for(case, capability)
    fix = []
    if first and toolkits and version_tuple(toolkits[-1].version) < version_tuple(first):
        evidence.append(f"{capability.sm} needs CUDA ≥ {first} (database)")
        fix.append(f"install CUDA toolkit {first} or newer and point CUDA_HOME at it")
    elif last and toolkits and version_tuple(toolkits[-1].version) > version_tuple(last):
        evidence.append(f"compute_{digits} was removed after CUDA {last} (database): it is in TORCH_CUDA_ARCH_LIST but this nvcc dropped it")
        fix.append(f"remove {capability} from TORCH_CUDA_ARCH_LIST (an old default); build for the GPUs you have")
    gpu_archs = ";".join(sorted({str(g.capability) for g in case.gpus if g.capability}))
    here = f' (this machine: "{gpu_archs}")' if gpu_archs else ""
    fix.append(f"set TORCH_CUDA_ARCH_LIST to architectures this nvcc knows{here}")
    return Finding(A6, "error", f"nvcc does not know the target architecture compute_{digits}", tuple(evidence), tuple(fix),
                   CONFIRMED if toolkits else MATCHED)


def _first_toolkit_for(case: Case, capability: ComputeCapability) -> str | None:
    versions = [t.version for t in case.database.toolkits.values() if capability in t.targets]
    return min(versions, key=version_tuple) if versions else None


def _last_toolkit_for(case: Case, capability: ComputeCapability) -> str | None:
    versions = [t.version for t in case.database.toolkits.values() if capability in t.targets]
    return max(versions, key=version_tuple) if versions else None
