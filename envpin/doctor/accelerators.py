"""AMD ROCm, Intel XPU and Apple MPS (catalogue group G, G1–G7).

A ROCm build without kernels for the GPU fails with "HIP error: invalid device function" (a kernel launch) or
"hipErrorNoBinaryForGpu" (at load); the GPU's target and the build's list decide which, and the database says
which torch build has the target (or, risky, which sibling HSA_OVERRIDE_GFX_VERSION can stand in for it). "No HIP
GPUs are available" and a refused /dev/kfd are access problems (the render/video groups, a container without the
devices). An XPU build whose torch.xpu.is_available() is False lacks Intel's GPU driver or runtime. On a Mac, an
MPS out-of-memory is the allocator's limit, and MPS unavailable on an old macOS is the release's minimum.
"""

from __future__ import annotations

import re

from packaging.version import Version

from envpin.compat.gpus import intel_family
from envpin.doctor.fixes import install_fix
from envpin.doctor.model import CONFIRMED, LIKELY, MATCHED, Case, Finding
from envpin.resolver.accelerators import mps_runs


def _numbers(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split(".") if part.isdigit())

G1, G2, G3, G4, G5, G6, G7 = ("ROCM-HIP-INVALID-DEVICE-FUNCTION", "ROCM-NO-BINARY-FOR-GPU", "ROCM-NO-HIP-GPUS",
                              "ROCM-KFD-PERMISSION", "XPU-NOT-AVAILABLE", "MPS-OUT-OF-MEMORY", "MPS-MACOS-TOO-OLD")


def findings(case: Case) -> list[Finding]:
    return [f for f in (_no_kernels(case, G1), _no_kernels(case, G2), _no_hip_gpus(case), _kfd_permission(case),
                        _xpu_unavailable(case), _mps_oom(case), _mps_old_macos(case)) if f]


def _amd_targets(case: Case) -> list[tuple[str, str]]:
    """(name, gfx) of the machine's AMD GPUs: the probe's devices first, then the host's facts."""
    torch = case.torch
    from_probe = [(d.name, d.gfx) for d in (torch.devices if torch else ()) if d.gfx]
    return from_probe or [(g.name, g.gfx) for g in case.host.gpus if g.vendor == "amd" and g.gfx]


def _build_targets(case: Case) -> tuple[set[str], str]:
    """The installed ROCm build's targets and where they came from: the probe's get_arch_list(), else the database."""
    torch = case.torch
    if torch is not None and torch.arch_list and torch.hip:
        return {t.split(":")[0] for t in torch.arch_list}, "torch.cuda.get_arch_list() (probe)"
    release = case.database.torch_release(str(case.release("torch"))) if case.release("torch") else None
    variant = release.variants.get(case.local_tag("torch") or "") if release else None
    if release is not None and variant is not None and variant.gfx is not None:
        return set(variant.gfx.targets), f"torch {release.version}+{variant.name} (database {case.database.version})"
    return set(), ""


def _no_kernels(case: Case, signature: str) -> Finding | None:
    hit = case.search(signature)
    if not hit:
        return None
    evidence = [hit.evidence()]
    targets, where = _build_targets(case)
    missing = [(name, gfx) for name, gfx in _amd_targets(case) if targets and gfx not in targets]
    if where:
        evidence.append(f"the build's targets, from {where}: {' '.join(sorted(targets))}")
    for name, gfx in missing:
        evidence.append(f"{name} is {gfx}, which the build has no kernels for")
    fix = []
    if missing and case.linux:
        # the solve knows which ROCm builds carry which targets (rocm.yaml): its answer, not a command to run
        solved = install_fix(case, keep_release=False)
        if solved and re.search(r"-m pip install .*torch==\S+\+rocm", solved[0]):  # a plan, not the refusal
            fix += solved[:2]
    for _, gfx in missing or _amd_targets(case):
        if not fix:
            fix.append(f"`envpin solve --framework torch --gfx {gfx}` names the newest torch ROCm build compiled for {gfx}")
        override = case.database.accelerators.gfx_overrides.get(gfx)
        if override is not None and case.linux:
            failures = f" (known failures: {override.known_failures})" if override.known_failures else ""
            fix.append(f"RISKY, unsupported: HSA_OVERRIDE_GFX_VERSION={override.value} makes {gfx} run "
                       f"{override.stand_in}'s kernels{failures}")
    fix.append("or build torch for this GPU from source with PYTORCH_ROCM_ARCH set to its target")
    title = ("the ROCm build has no kernels for this GPU: a kernel launch failed" if signature == G1
             else "the ROCm build has no code object for this GPU")
    return Finding(signature, "error", title, tuple(evidence), tuple(fix), CONFIRMED if missing else MATCHED)


def _no_hip_gpus(case: Case) -> Finding | None:
    hit = case.search(G3)
    if not hit:
        return None
    amd = _amd_targets(case)
    evidence = [hit.evidence()]
    evidence.append(f"the machine shows {', '.join(f'{n} ({g})' for n, g in amd)}" if amd
                    else "no AMD GPU was detected on this machine (no /dev/kfd, KFD topology or ROCm tool answered)")
    fix = ["check that this user may open /dev/kfd and /dev/dri/renderD*: `ls -l /dev/kfd`, then "
           "`sudo usermod -aG render,video $USER` and log in again",
           "in a container, pass the devices: `docker run --device=/dev/kfd --device=/dev/dri --group-add video ...`",
           "`rocminfo` must list the GPU as an agent; if it does not, the amdgpu/KFD driver is not loaded"]
    return Finding(G3, "error", "torch's HIP runtime sees no AMD GPU", tuple(evidence), tuple(fix),
                   LIKELY if amd else MATCHED)


def _kfd_permission(case: Case) -> Finding | None:
    hit = case.search(G4)
    if not hit:
        return None
    fix = ["add the user to the group that owns /dev/kfd and /dev/dri/renderD* (`ls -l /dev/kfd`; usually render, "
           "and video): `sudo usermod -aG render,video $USER`, then log in again",
           "in a container: `--device=/dev/kfd --device=/dev/dri --group-add video` (and the render group's id)"]
    return Finding(G4, "error", "this user may not open /dev/kfd, the AMD compute device", (hit.evidence(),),
                   tuple(fix), CONFIRMED)


def _xpu_unavailable(case: Case) -> Finding | None:
    """An XPU build that sees no Intel GPU. The build is the culprit when it is not an xpu build, or when its release
    predates the GPU family's first validated one (xpu.yaml `since`); otherwise the driver and compute runtime are."""
    hit = case.search(G5)
    torch = case.torch
    xpu_build = (case.local_tag("torch") == "xpu") or bool(torch and (torch.version or "").endswith("+xpu"))
    if not hit and not (xpu_build and torch is not None and torch.xpu_available is False):
        return None
    evidence = [hit.evidence()] if hit else [f"torch {torch.version if torch else ''}: torch.xpu.is_available() is False (probe)"]
    intel = [g.name for g in case.host.gpus if g.vendor == "intel"]
    evidence.append(f"Intel GPUs here: {', '.join(intel)}" if intel else "no Intel GPU was detected on this machine")
    families = [(name, intel_family(case.database, _plain(name))) for name in intel]
    release = case.release("torch")
    build_first = False
    tag = case.local_tag("torch")
    if tag and tag != "xpu":
        evidence.append(f"torch {case.package('torch')} is a {tag} build, not an xpu one: it has no Intel GPU backend")
        build_first = True
    for name, family in families:
        if family is None:
            continue
        since = family.since.get(case.platform)
        if case.platform not in family.platforms:
            evidence.append(f"{name} is {family.family}, which the xpu builds support on {', '.join(family.platforms)} only")
        elif since and release is not None and release < Version(since):
            evidence.append(f"{name} is {family.family}, which PyTorch validates its xpu builds on from torch {since} on "
                            f"{case.platform}; this is torch {release} (database {case.database.version})")
            build_first = True
        else:
            evidence.append(f"{name} is {family.family}, which the xpu builds are validated on"
                            + (f" from torch {since}" if since else ""))
    driver = ["install Intel's GPU driver and runtime as PyTorch's 'Getting Started on Intel GPU' page says (the Level "
              "Zero loader and compute runtime on Linux, the Arc driver on Windows); `sycl-ls` must list a "
              "[level_zero:gpu] device",
              "on Linux, add the user to the render group: `sudo usermod -aG render $USER`"]
    if case.linux and any(f is not None and "Battlemage" in f.family for _, f in families):
        # intel/xpumanager#91 (2025-02): Battlemage support from Linux 6.12 (better in 6.13) and from compute-runtime
        # 24.48.31907.7, the first release with production Battlemage support
        driver.insert(1, "an Arc B-Series (Battlemage) card needs Linux ≥ 6.12 (its xe kernel driver) and Intel's "
                         "compute-runtime ≥ 24.48.31907.7: an older distribution's packages do not see it")
    solved = install_fix(case) if intel else []
    fix = (solved + driver) if build_first else (driver + [f"the xpu build for this GPU, as `envpin solve` picks it: {solved[0]}"]
                                                if solved else driver)
    if not intel:
        fix.append("an iGPU that is not Arc (UHD, Iris Xe) is not a GPU PyTorch's XPU builds support: use the CPU build")
    title = ("the torch build cannot use this Intel GPU" if build_first else "the XPU build cannot see an Intel GPU")
    return Finding(G5, "error", title, tuple(evidence), tuple(fix), CONFIRMED if xpu_build or build_first else MATCHED)


def _mps_minimums(case: Case) -> list[tuple[str, str]]:
    """(first release, macOS) for each macOS minimum of MPS in the database, oldest first: [("2.5.0", "13.0"), …]."""
    steps: list[tuple[str, str]] = []
    for release in sorted((r for r in case.database.torch_releases if r.macos is not None), key=lambda r: r.version):
        assert release.macos is not None
        if not steps or steps[-1][1] != release.macos.mps_macos:
            steps.append((str(release.version), release.macos.mps_macos))
    return steps


def _plain(name: str) -> str:
    return name.replace("(R)", " ").replace("(TM)", " ").replace("®", " ").replace("™", " ")


def _mps_oom(case: Case) -> Finding | None:
    hit = case.search(G6)
    if not hit:
        return None
    fix = ["use a smaller batch, model or resolution; call torch.mps.empty_cache() between steps",
           "PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 lifts the allocator's limit, which the message itself warns may "
           "make the whole system fail: only as a last resort"]
    return Finding(G6, "error", "the MPS allocator ran out of its share of unified memory", (hit.evidence(),),
                   tuple(fix), CONFIRMED)


def _mps_old_macos(case: Case) -> Finding | None:
    hit = case.search(G7)
    torch = case.torch
    release = case.database.torch_release(str(case.release("torch"))) if case.release("torch") else None
    from_facts = (case.host.os == "macos" and torch is not None and torch.mps_available is False and release is not None
                  and release.macos is not None and case.host.macos is not None)
    if not hit and not from_facts:
        return None
    evidence = [hit.evidence()] if hit else ["torch.backends.mps.is_available() is False (probe)"]
    fix = []
    said = hit.text(1) if hit else None  # the message's minimum: older torch releases print a stale one
    mac = case.host.macos
    if said and mac and _numbers(mac) >= _numbers(said):
        evidence.append(f"this Mac has macOS {mac}, which the message's {said} would allow: the message's minimum is "
                        "older than the check torch makes")
    minimum = release.macos.mps_macos if release is not None and release.macos is not None else None
    if release is not None and minimum:
        evidence.append(f"torch {release.version}'s MPS backend needs macOS ≥ {minimum}" + (f"; this Mac has {mac}" if mac else "")
                        + f" (database {case.database.version})")
        fix.append(f"update macOS to {minimum} or newer (torch {release.version}'s minimum, database)")
    else:  # the release is not known: each release's minimum, from the database, not the message's number
        steps = _mps_minimums(case)
        fix.append("update macOS to the minimum of the torch release installed: "
                   + ", ".join(f"torch ≥ {first} needs macOS {minimum}" for first, minimum in steps)
                   + f" (database {case.database.version}; the message's {said or '?'} can be stale)" if steps
                   else f"update macOS to {said} or newer" if said else "update macOS")
    if mac is not None:
        from envpin.resolver.target import Target  # noqa: PLC0415 - only to ask mps_runs of older releases

        machine = Target(os="macos", arch="arm64", python="3.0", driver=None, driver_cuda=None, gpus=(), macos=mac)
        older = next((r for r in case.database.torch_releases if mps_runs(r, machine)), None)
        if older is not None and (release is None or mps_runs(release, machine) is False):
            fix.append(f"or keep macOS {mac}: torch {older.version} is the newest release whose MPS runs on it (database): "
                       + install_fix(case, keep_release=False, extra_specs=(f"torch=={older.version}",))[0])
    likelihood = CONFIRMED if from_facts or (said and minimum) else MATCHED
    return Finding(G7, "error", "MPS is not available on this macOS version", tuple(evidence), tuple(fix), likelihood)
