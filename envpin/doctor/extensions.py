"""Building and loading CUDA extensions (catalogue X2–X5).

For wheels, the local nvcc does not matter: torch wheels bring their own CUDA runtime and only the driver
counts at run time (catalogue §5, pytorch/pytorch#99138). nvcc matters only when something is compiled, so
these rules speak only when the error text shows a build (or a prebuilt extension) failing.
"""

from __future__ import annotations

import re

from envpin.doctor.driver import torch_cuda
from envpin.doctor.model import CONFIRMED, MATCHED, Case, Finding, version_tuple

X2, X3, X4, X5 = ("EXT-TOOLKIT-MAJOR-MISMATCH", "EXT-CUDA-HOME-MISSING", "EXT-HOST-COMPILER-UNSUPPORTED", "EXT-PREBUILT-TORCH-ABI")


def findings(case: Case) -> list[Finding]:
    return [f for f in (_toolkit_major(case), _cuda_home(case), _host_compiler(case), _prebuilt_abi(case)) if f]


def _torch_cuda(case: Case) -> str | None:
    return torch_cuda(case)


def _toolkit_major(case: Case) -> Finding | None:
    hit = case.search(X2)
    if not hit:
        return None
    detected, compiled = hit.text(1), hit.text(2)
    evidence = [hit.evidence(), f"nvcc / CUDA_HOME is CUDA {detected}; torch was compiled with CUDA {compiled}"]
    home = case.env_var("CUDA_HOME") or case.env_var("CUDA_PATH")
    if home:
        evidence.append(f"CUDA_HOME/CUDA_PATH = {home}")
    installed = _torch_cuda(case)
    if installed and installed != compiled:
        evidence.append(f"the environment's torch is built with CUDA {installed}: build isolation compiled against another "
                        "torch, pulled into the temporary build environment")
    major = compiled.split(".")[0]
    fix = [f"give the build a CUDA {major}.x toolkit: e.g. `conda install -c nvidia cuda-nvcc={compiled}.*` or a CUDA {compiled} "
           "toolkit, and set CUDA_HOME to it",
           "build against the installed torch: " + case.pip("install", "--no-build-isolation", "<package>"),
           "or install the torch built for the local toolkit's CUDA major",
           "do not comment out torch's CUDA version check in cpp_extension.py: a major mismatch builds a broken extension"]
    return Finding(X2, "error", f"the CUDA toolkit ({detected}) and torch's CUDA ({compiled}) differ in major version",
                   tuple(evidence), tuple(fix), CONFIRMED if home or installed else MATCHED)


def _cuda_home(case: Case) -> Finding | None:
    hit = case.search(X3)
    if not hit:
        return None
    cuda = _torch_cuda(case)
    evidence = [hit.evidence(), "CUDA toolkits found: " + (", ".join(t.version for t in case.host.toolkits) or "none (no nvcc)")]
    if cuda:
        evidence.append(f"torch is built with CUDA {cuda}; torch wheels do not contain nvcc")
    major = cuda.split(".")[0] if cuda else "<torch.version.cuda's major>"
    fix = [f"install a CUDA {major}.x toolkit (e.g. `conda install -c nvidia cuda-toolkit={cuda}.*`)".replace("=None.*", "") if cuda
           else "install a CUDA toolkit of the same major as torch.version.cuda",
           "set CUDA_HOME to its root (the directory holding bin/nvcc) before building",
           "or install a prebuilt wheel of the extension for this torch and CUDA"]
    if case.host.toolkits and not case.env_var("CUDA_HOME"):
        root = case.host.toolkits[0].root
        fix.insert(0, f"a toolkit is installed at {root}: `export CUDA_HOME={root}`")
    return Finding(X3, "error", "a CUDA extension is being built without a CUDA toolkit (CUDA_HOME)", tuple(evidence),
                   tuple(fix), CONFIRMED if not case.host.toolkits else MATCHED)


def _host_compiler(case: Case) -> Finding | None:
    hit = case.search(X4)
    if not hit:
        return None
    limit = hit.group(1)
    evidence = [hit.evidence(), f"this nvcc accepts gcc ≤ {limit}"]
    newest = max(case.host.toolkits, key=lambda t: version_tuple(t.version), default=None)
    if newest:
        evidence.append(f"CUDA toolkit {newest.version}")
    return Finding(X4, "error", f"the host compiler (gcc) is newer than nvcc supports (> {limit})", tuple(evidence),
                   (f"install gcc-{limit} / g++-{limit} and pass it to nvcc: `export CC=gcc-{limit} CXX=g++-{limit} "
                    f"NVCC_CCBIN=g++-{limit}` (or `-ccbin g++-{limit}`)",
                    "or use a newer CUDA toolkit that supports this gcc",
                    "`-allow-unsupported-compiler` is at your own risk; do not make it the default"),
                   CONFIRMED if newest else MATCHED)


def _prebuilt_abi(case: Case) -> Finding | None:
    hit = case.search(X5)
    if not hit:
        return None
    module = re.search(r"(?<![\w.\-])([\w.\-]+)\.cpython-\d+-[\w-]+\.so", hit.line)
    torch = case.package("torch")
    evidence = [hit.evidence()] + ([f"torch {torch}"] if torch else [])
    wheel_tag = case.search_pattern(r"\+cu\d+torch\d+\.\d+cxx11abi(TRUE|FALSE)")
    if wheel_tag:
        evidence.append(f"the extension wheel is tagged {wheel_tag.line}")
    release = case.release("torch")
    target = f"torch{release.major}.{release.minor}" if release else "torch<major.minor>"
    name = module.group(1).split(".")[0] if module else "<extension>"
    return Finding(X5, "error", f"a prebuilt extension ({name}) was compiled against another torch", tuple(evidence),
                   (f"install the {name} wheel built for {target}, the same CUDA major and the same C++11 ABI flag as torch "
                    "(`python -c \"import torch; print(torch._C._GLIBCXX_USE_CXX11_ABI)\"`)",
                    "or build it from source against the installed torch: " + case.pip("install", "--no-build-isolation", "--no-binary", name, name)),
                   CONFIRMED if torch else MATCHED)
