"""Packages built against one exact torch (catalogue X1 torchvision, C6 xformers, C5 bitsandbytes).

torchvision must be the release paired with the installed torch and the same build (`+cpu`, `+cu124`); the
pairing comes from the database (the companion recorded for each torch release), falling back to the
catalogue's rule torch 2.N <-> torchvision 0.(N+15) for releases the database does not hold.
"""

from __future__ import annotations

from envpin.doctor.builds import torch_build_kind
from envpin.doctor.fixes import install_fix
from envpin.doctor.model import CONFIRMED, MATCHED, PROVEN, Case, Finding, version_tuple
from envpin.vocabulary.variants import DEFAULT_TORCH_INDEX, cuda_of, cuda_tag

X1, C5, C6 = "TORCHVISION-TORCH-MISMATCH", "BNB-CPU-BINARY", "XFORMERS-TORCH-MISMATCH"


def findings(case: Case) -> list[Finding]:
    return [f for f in (_torchvision(case), _xformers(case), _bitsandbytes(case)) if f]


def paired_torchvision(case: Case) -> tuple[str | None, str]:
    """The torchvision release paired with the installed torch, and where that pairing comes from."""
    release = case.release("torch")
    if release is None:
        return None, ""
    record = case.database.torch_release(str(release))
    if record is not None and "torchvision" in record.companions:
        return record.companions["torchvision"].version, f"database {case.database.version}"
    major, minor = release.release[:2]
    if major == 2 and minor <= 9:
        return f"0.{minor + 15}", "the pairing rule torch 2.N <-> torchvision 0.(N+15)"
    return None, ""


def _torchvision(case: Case) -> Finding | None:
    hit = case.search(X1)
    torch, vision = case.package("torch"), case.package("torchvision")
    if not vision and not hit:
        return None
    paired, source = paired_torchvision(case)
    problems = []
    if vision and paired and version_tuple(vision)[:2] != version_tuple(paired)[:2]:
        problems.append(f"torch {torch} pairs with torchvision {paired} ({source}), but torchvision {vision} is installed")
    torch_tag, vision_tag = case.local_tag("torch"), case.local_tag("torchvision")
    if torch_tag and vision_tag and torch_tag != vision_tag:
        problems.append(f"torch is a +{torch_tag} build and torchvision a +{vision_tag} build: they come from different indexes")
    elif torch_tag and not vision_tag and vision and torch_tag != "cpu" and case.os != "linux":
        problems.append(f"torch is +{torch_tag} but torchvision {vision} is PyPI's build")
    if not hit and not problems:
        return None
    evidence = ([hit.evidence()] if hit else []) + problems + ([] if problems else [f"torch {torch}, torchvision {vision}"])
    fix = install_fix(case)
    if fix and "torchvision" not in fix[0] and "pip" in fix[0]:
        fix = [fix[0].replace("--force-reinstall", "--force-reinstall torchvision==" + (paired or "<paired>"), 1)] + fix[1:]
    fix.append("reinstall both together, from the same index, whenever one changes")
    return Finding(X1, "error", "torchvision does not match the installed torch", tuple(evidence), tuple(fix),
                   CONFIRMED if hit and problems else MATCHED if hit else PROVEN)


def _xformers(case: Case) -> Finding | None:
    hit = case.search(C6)
    if not hit:
        return None
    built_torch, have = hit.text(1), hit.text(3)
    built_cuda, cuda_tag = _xformers_cuda(hit.text(2), built_torch)
    evidence = [hit.evidence(), f"xformers {case.package('xformers') or ''} was built for torch {built_torch} with CUDA {built_cuda}; "
                f"the environment has torch {have}".replace("  ", " ")]
    kind, facts = torch_build_kind(case)
    if kind == "cpu" or have.endswith("+cpu"):
        evidence.append("torch is now a CPU build (something replaced the CUDA torch)")
    fix = ["install the xformers build made for the installed torch, from the same PyTorch index: "
           + case.pip("install", "--force-reinstall", "xformers", "--index-url", f"{DEFAULT_TORCH_INDEX}/{cuda_tag}"),
           "or reinstall the torch xformers expects: " + install_fix(case, keep_release=False,
                                                                      extra_specs=(f"torch=={built_torch}",))[0]]
    return Finding(C6, "error", "xformers was built for another torch", tuple(evidence), tuple(fix), CONFIRMED)


def _xformers_cuda(number: str, built_torch: str) -> tuple[str, str]:
    """The CUDA xformers names as a number (major * 100 + minor: "1201" is 12.1, "1108" is 11.8), dotted, and
    the download.pytorch.org variant that serves it; the torch it was built for says the variant where it can."""
    major, minor = number[:-2], number[-2:]
    dotted = f"{int(major)}.{int(minor)}" if len(number) >= 3 and number.isdigit() else number
    local = built_torch.partition("+")[2]
    if cuda_of(local) is not None:
        return dotted, local
    return dotted, cuda_tag(dotted)


def _bitsandbytes(case: Case) -> Finding | None:
    hit = case.search(C5)
    if not hit:
        return None
    evidence = [hit.evidence()]
    bnb = case.package("bitsandbytes")
    if bnb:
        evidence.append(f"bitsandbytes {bnb}" + (" (before 0.43: no official Windows CUDA binaries)" if version_tuple(bnb) < (0, 43) else ""))
    kind, facts = torch_build_kind(case)
    evidence += facts
    fix = []
    if kind == "cpu" and case.nvidia:
        fix.append("torch is a CPU build; install the CUDA build first: " + install_fix(case)[0])
    fix.append(case.pip("install", "--upgrade", "bitsandbytes"))
    return Finding(C5, "error", "bitsandbytes fell back to its CPU binary", tuple(evidence), tuple(fix),
                   CONFIRMED if bnb and (kind == "cpu" or version_tuple(bnb) < (0, 43)) else MATCHED)
