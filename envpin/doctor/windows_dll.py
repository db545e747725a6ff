"""Windows DLL loading (catalogue §2.1, W1–W12), reasoned with the search-order model in `dll_search`.

Each rule asks the model the question the seed guides teach people to ask by hand (`where cublas64_12.dll`,
"which msvcp140.dll got loaded first?") and blames only what the answer supports: an older toolkit first on
PATH is named only when it holds a file of the very name being loaded; otherwise it is a red herring and the
evidence says so. Fixes never copy, rename or download DLLs (catalogue §5).
"""

from __future__ import annotations

import ntpath
import re

from packaging.version import Version

from envpin.base.record import replace
from envpin.compat.drivers import driver_at_least, minimum_driver
from envpin.doctor import dll_search
from envpin.doctor.dll_search import ERROR_MOD_NOT_FOUND, WindowsProcess, normalise, resolve, where
from envpin.doctor.fixes import install_fix
from envpin.doctor.model import (
    CONFIRMED,
    LIKELY,
    MATCHED,
    PROVEN,
    Case,
    Finding,
    Fix,
    join_dir,
    same_path,
    version_tuple,
)
from envpin.facts.host import Driver
from envpin.vocabulary.variants import CUDA, kind_of

W1, W2, W3, W4, W5, W6, W7, W8, W9, W10, W11, W12 = (
    "WIN-CT2-CUBLAS12-NOT-FOUND", "CT2-CUBLAS11-NOT-FOUND", "CT2-CUDNN9-NOT-FOUND", "WIN-CUDNN8-SUBLIB-NOT-FOUND",
    "WIN-CUDNN8-ZLIBWAPI-MISSING", "WIN-TORCH240-FBGEMM-LIBOMP", "WIN-VCREDIST-MISSING", "WIN-TORCH29-STALE-MSVCP",
    "WIN-TORCH230-USERSITE", "WIN-CUDA-TORCH-NO-NVCUDA", "WIN-LEGACY-TORCH-C-DLL", "WIN-ORT-CUDA-PROVIDER-DEPS",
)
VC_REDIST = "https://aka.ms/vs/17/release/vc_redist.x64.exe"
NEVER_RENAME = "do not copy or rename another version's DLL (e.g. cublas64_11.dll to cublas64_12.dll) or download DLLs from DLL sites: an ABI-incompatible library crashes or computes wrong results"


def findings(case: Case) -> list[Finding]:
    rules = (_cublas12, _cublas11, _cudnn9, _cudnn8_sublib, _zlibwapi, _fbgemm_libomp, _vcredist, _stale_msvcp,
             _user_site, _no_nvcuda, _legacy_dll, _ort_provider)
    if not case.windows and not any(case.search(s) for s in (W1, W3, W4, W5, W6, W7, W8, W9, W10, W11, W12)):
        # W2 has a Linux form (libcublas.so.11); the others are Windows-only.
        found = _cublas11(case)
        return [found] if found else []
    return [f for f in (rule(case) for rule in rules) if f]


# ---------------------------------------------------------------- the model, from the case


def process_of(case: Case) -> WindowsProcess:
    """The Python process as the facts describe it: PATH, the directories listed by detect and the probe,
    python.exe's directory, and the modules the probe saw loaded."""
    path = tuple(case.path_list("PATH"))
    files = {**case.host.files, **case.env_dirs}
    listing = dll_search.listing_from_facts(files)
    complete = frozenset(normalise(d) for d in case.env_dirs if _is_torch_lib(d))
    system_dir = next((p for p in path if normalise(p).endswith("\\system32")), "C:\\Windows\\System32")
    loaded: list[tuple[str, str]] = []
    torch = case.torch
    for library in (torch.loaded if torch else ()):
        name = ntpath.basename(library.replace("/", "\\")).lower()
        if name not in (n for n, _ in loaded):
            loaded.append((name, library))
    return WindowsProcess(
        app_dir=_app_dir(case),
        system_dir=system_dir,
        windows_dir=ntpath.dirname(system_dir.rstrip("\\")) or "C:\\Windows",
        path=path,
        loaded=tuple(loaded),
        listing=listing,
        complete=complete,
    )


def _app_dir(case: Case) -> str:
    python = case.env.python if case.env else None
    if python is None:
        return case.host.python.executable and ntpath.dirname(case.host.python.executable) or "C:\\Python"
    if python.env_type == "venv" and python.base_prefix:
        return python.base_prefix  # a venv's python.exe only launches the base interpreter
    return ntpath.dirname(python.executable) if python.executable else (python.prefix or "C:\\Python")


def _is_torch_lib(directory: str) -> bool:
    return normalise(directory).endswith("\\torch\\lib")


def torch_lib_dir(case: Case) -> str | None:
    return next((d for d in case.env_dirs if _is_torch_lib(d)), None)


def site_packages(case: Case) -> str:
    torch_lib = torch_lib_dir(case)
    if torch_lib:
        return ntpath.dirname(ntpath.dirname(torch_lib.rstrip("\\/")))
    executable = case.env.python.executable if case.env else None
    prefix = case.prefix or (ntpath.dirname(executable) if executable else None) or "<env>"
    return join_dir(join_dir(prefix, "Lib"), "site-packages")


def _where_line(process: WindowsProcess, name: str) -> str:
    hits = where(process, name)
    return f"`where {name}`: " + (", ".join(hits) if hits else "nothing on PATH")


def _toolkit_line(case: Case) -> str | None:
    cuda_path = case.env_var("CUDA_PATH")
    toolkits = ", ".join(t.version for t in sorted(case.host.toolkits, key=lambda t: version_tuple(t.version)))
    parts = ([f"CUDA_PATH={cuda_path}"] if cuda_path else []) + ([f"CUDA toolkits: {toolkits}"] if toolkits else [])
    return "; ".join(parts) if parts else None


def _dirs_holding(case: Case, name: str) -> list[str]:
    files = {**case.host.files, **case.env_dirs}
    return [d for d, names in files.items() if any(n.lower() == name.lower() for n in names)]


def _env_dirs_holding(case: Case, name: str) -> list[str]:
    return [d for d, names in case.env_dirs.items() if any(n.lower() == name.lower() for n in names)]


# ---------------------------------------------------------------- CTranslate2 / cuBLAS / cuDNN


def _ct2_version(case: Case) -> tuple[int, ...]:
    return version_tuple(case.package("ctranslate2"))


def _cudnn_major_for_ct2(case: Case) -> str:
    version = _ct2_version(case)
    return "8.9.*" if version and version < (4, 5) else "9.*"


def _cublas12(case: Case) -> Finding | None:
    hit = case.search(W1)
    if not hit:
        return None
    process = process_of(case)
    evidence = [hit.evidence()]
    ct2 = case.package("ctranslate2")
    if ct2:
        evidence.append(f"ctranslate2 {ct2} is built for CUDA 12: it loads cublas64_12.dll itself at run time (LoadLibrary, "
                        "which searches PATH) and bundles no cuBLAS")
    resolution = resolve(process, "cublas64_12.dll", "standard")
    evidence.append(_where_line(process, "cublas64_12.dll"))
    toolkit = _toolkit_line(case)
    if toolkit:
        evidence.append(toolkit)
    fix: list[str] = []
    likelihood = MATCHED
    title = "CUDA 12 cuBLAS (cublas64_12.dll) is not on the DLL search path"
    older = [d for d in process.path if process.holds(d, "cublas64_11.dll")]
    if resolution.found:
        load = dll_search.load(process, "cublas64_12.dll", "standard")
        evidence.append(f"cublas64_12.dll resolves to {resolution.path} ({resolution.how})")
        if older and not any(process.holds(d, "cublas64_12.dll") for d in older):
            evidence.append(f"{older[0]} (CUDA 11) comes first on PATH but holds no cublas64_12.dll: PATH order is not the "
                            "cause (Windows matches the file name)")
        if not load.ok:
            title = f"cublas64_12.dll is found but cannot be loaded: {load.culprit} is missing"
            assert load.detail is not None  # a failed load says why
            evidence.append(load.detail)
            fix.append(f"install the complete CUDA 12 cuBLAS ({load.culprit} ships beside cublas64_12.dll): "
                       + case.pip("install", "nvidia-cublas-cu12") + f" and put {site_packages(case)}\\nvidia\\cublas\\bin first on PATH")
            likelihood = CONFIRMED
        elif case.host.driver and not _driver_runs_cuda(case, case.host.driver, "12"):
            title = "the NVIDIA driver is too old for CUDA 12 cuBLAS"
            evidence.append(case.driver_line)
            likelihood = CONFIRMED
        else:
            title = "cublas64_12.dll is reachable from this shell's PATH; the failing program ran with another PATH"
            fix.append("start the program from this shell (IDEs and services often start with another PATH), "
                       "or set PATH in the program's launch configuration")
    else:
        likelihood = CONFIRMED if ct2 or older or case.env is not None else MATCHED
        if older:
            evidence.append(f"only CUDA 11 cuBLAS is on PATH ({', '.join(older)} holds cublas64_11.dll)")
        conda_bin = [d for d in _env_dirs_holding(case, "cublas64_12.dll") if normalise(d).endswith("\\library\\bin")]
        if conda_bin:
            evidence.append(f"{conda_bin[0]} holds cublas64_12.dll but is not on PATH: the conda environment is not activated")
            fix.append("activate the conda environment (`conda activate <env>`) before starting the program, so its "
                       "Library\\bin is on PATH")
        torch_copy = [d for d in _env_dirs_holding(case, "cublas64_12.dll") if _is_torch_lib(d)]
        if torch_copy:
            evidence.append(f"{torch_copy[0]} holds cublas64_12.dll, which ctranslate2 does not search: it is only found "
                            "once torch has loaded it (first loaded wins)")
            fix.append(Fix("`import torch` before importing ctranslate2 / faster_whisper, so torch's cuBLAS 12 is already loaded",
                           "torch-installed"))
    if case.host.driver and not _driver_runs_cuda(case, case.host.driver, "12"):
        fix.append("this driver runs no CUDA 12 library: upgrade it (≥ "
                   f"{_minimum(case, '12')}), or pin `ctranslate2==3.24.0` (CUDA 11) on this machine")
    fix.append(f"make CUDA 12 cuBLAS and cuDNN {_cudnn_major_for_ct2(case)[0]} loadable: "
               + case.pip("install", "nvidia-cublas-cu12", f'"nvidia-cudnn-cu12=={_cudnn_major_for_ct2(case)}"')
               + f", then prepend {site_packages(case)}\\nvidia\\cublas\\bin and {site_packages(case)}\\nvidia\\cudnn\\bin "
               "to PATH before the program starts (os.add_dll_directory alone is not enough: ctranslate2 uses LoadLibrary)")
    fix.append("or install the CUDA 12.x toolkit and cuDNN and put their bin directories on PATH")
    fix.append(NEVER_RENAME)
    return Finding(W1, "error", title, tuple(evidence), tuple(_unique(fix)), likelihood)


def _driver_runs_cuda(case: Case, driver: Driver, cuda: str) -> bool:
    minimum = _minimum(case, cuda)
    return minimum is None or driver_at_least(driver.version, minimum)


def _minimum(case: Case, cuda: str) -> str | None:
    requirement = minimum_driver(case.database, cuda, case.os, "minor")
    return requirement.minimum if requirement else None


def _cublas11(case: Case) -> Finding | None:
    hit = case.search(W2)
    if not hit:
        return None
    evidence = [hit.evidence()]
    ct2 = case.package("ctranslate2")
    if ct2:
        evidence.append(f"ctranslate2 {ct2}" + (" (3.x: built for CUDA 11)" if version_tuple(ct2) < (4,) else ""))
    torch_tag = case.local_tag("torch")
    if torch_tag:
        evidence.append(f"torch {case.package('torch')}")
    cuda12_host = (torch_tag or "").startswith("cu12") or (case.host.driver and case.host.driver.cuda and version_tuple(case.host.driver.cuda) >= (12,))
    fix = []
    if cuda12_host:
        fix.append("this machine is on CUDA 12: upgrade to CTranslate2 4 (" + case.pip("install", '"ctranslate2>=4"') + ", or faster-whisper ≥ 1.0)")
    fix.append("or provide CUDA 11 cuBLAS: " + case.pip("install", "nvidia-cublas-cu11")
               + (" and put its bin directory on PATH" if case.windows else " (Debian/Ubuntu: `apt install libcublas11`)"))
    fix.append(NEVER_RENAME)
    return Finding(W2, "error", "CTranslate2 3.x needs CUDA 11 cuBLAS, which this machine does not provide", tuple(evidence),
                   tuple(fix), CONFIRMED if ct2 else MATCHED)


def _cudnn9(case: Case) -> Finding | None:
    hit = case.search(W3)
    if not hit:
        return None
    process = process_of(case)
    evidence = [hit.evidence()]
    ct2, torch = case.package("ctranslate2"), case.release("torch")
    if ct2:
        evidence.append(f"ctranslate2 {ct2}" + (" (≥ 4.5: built against cuDNN 9)" if version_tuple(ct2) >= (4, 5) else ""))
    if torch is not None and torch < _v("2.4"):
        evidence.append(f"torch {case.package('torch')} bundles cuDNN 8 (torch < 2.4)")
    cudnn8 = _dirs_holding(case, "cudnn64_8.dll")
    if cudnn8:
        evidence.append(f"cuDNN 8 is what the environment provides: {', '.join(cudnn8)} hold cudnn64_8.dll")
    if case.linux or "libcudnn" in hit.line:
        return _cudnn9_linux(case, hit, evidence)
    evidence.append(_where_line(process, "cudnn_ops64_9.dll"))
    fix = [Fix("pick one consistent stack: torch ≥ 2.4 (cuDNN 9) with ctranslate2 ≥ 4.5, imported torch first", "torch-installed"),
           "or " + case.pip("install", '"nvidia-cudnn-cu12==9.*"') + " and put its bin directory on PATH",
           "or stay on cuDNN 8: " + case.pip("install", "ctranslate2==4.4.0")]
    # NVIDIA's cuDNN 9 installer for Windows puts the DLLs in a folder per CUDA version (bin\12.8\cudnn_ops64_9.dll) but
    # adds only bin to PATH, which is not searched recursively (SYSTRAN/faster-whisper#1230).
    installer_bin = [d for d in process.path if re.search(r"\\CUDNN\\v9\.\d+\\bin$", d, re.I) and process.holds(d, "cudnn_ops64_9.dll") is not True]
    if installer_bin:
        cuda = next((t.version for t in case.host.toolkits), None) or (case.host.driver.cuda if case.host.driver else None)
        sub = ".".join((cuda or "12.x").split(".")[:2])
        evidence.append(f"{installer_bin[0]} is on PATH, but NVIDIA's cuDNN installer keeps the DLLs in a folder per CUDA version "
                        f"under it ({installer_bin[0]}\\{sub}), which PATH does not search")
        fix.insert(0, f"add {installer_bin[0]}\\{sub} (the folder that holds cudnn_ops64_9.dll) to PATH and restart the shell")
    return Finding(W3, "error", "CTranslate2 ≥ 4.5 needs cuDNN 9, but the environment provides cuDNN 8 or none",
                   tuple(evidence), tuple(fix), CONFIRMED if (ct2 or cudnn8 or installer_bin) else MATCHED)


def _cudnn9_linux(case: Case, hit, evidence: list[str]) -> Finding:
    """Linux: CTranslate2 dlopens libcudnn_*.so.9 through LD_LIBRARY_PATH; the nvidia-cudnn-cu12 wheel's lib is not on it."""
    own = next((d for d in case.env_dirs if d.replace("\\", "/").rstrip("/").endswith("nvidia/cudnn/lib")
                and any(n.startswith("libcudnn") and ".so.9" in n for n in case.env_dirs[d])), None)
    fix: list[str] = []
    if own:
        evidence.append(f"{own} holds cuDNN 9 (nvidia-cudnn-cu12), which is not on LD_LIBRARY_PATH")
        fix.append(f"put the wheel's cuDNN on the loader path: `export LD_LIBRARY_PATH={own}:$LD_LIBRARY_PATH`")
    else:
        fix.append("install cuDNN 9 and put it on the loader path: " + case.pip("install", '"nvidia-cudnn-cu12==9.*"')
                   + ", then `export LD_LIBRARY_PATH=$(" + case.python_command + " -c 'import os, nvidia.cudnn.lib; "
                   "print(os.path.dirname(nvidia.cudnn.lib.__file__))'):$LD_LIBRARY_PATH`")
    fix.append(Fix("or `import torch` (≥ 2.4, cuDNN 9) before ctranslate2, so its cuDNN is already loaded", "torch-installed"))
    fix.append("or stay on cuDNN 8: " + case.pip("install", "ctranslate2==4.4.0"))
    return Finding(W3, "error", "CTranslate2 ≥ 4.5 cannot load cuDNN 9 (libcudnn_*.so.9 is not on the loader path)",
                   tuple(evidence), tuple(fix), CONFIRMED if own or case.package("ctranslate2") else MATCHED)


def _cudnn8_sublib(case: Case) -> Finding | None:
    hit = case.search(W4)
    if not hit:
        return None
    process = process_of(case)
    named = re.search(r"cudnn_\w+64_8\.dll", hit.line)
    assert named is not None  # the signature names the cudnn_*64_8.dll
    sublib = named.group(0)
    evidence = [hit.evidence(), _where_line(process, "cudnn64_8.dll"), _where_line(process, sublib)]
    main = [d for d in process.path if process.holds(d, "cudnn64_8.dll")]
    lonely = [d for d in main if process.holds(d, sublib) is False]
    if lonely:
        evidence.append(f"{lonely[0]} holds cudnn64_8.dll without {sublib}: only part of cuDNN was copied there "
                        "(cudnn64_8.dll loads its sub-libraries by name at run time)")
    nine = _dirs_holding(case, "cudnn64_9.dll")
    if nine and not main:
        evidence.append(f"cuDNN 9 is installed ({nine[0]}); it has no *_infer64_8.dll sub-libraries")
    toolkit = _toolkit_line(case)
    if toolkit:
        evidence.append(toolkit)
    fix = ["install the complete cuDNN 8.x for the application's CUDA major (the archive's whole bin directory, or "
           + case.pip("install", '"nvidia-cudnn-cu12==8.9.*"') + " / nvidia-cudnn-cu11==8.*) and put that bin directory on PATH",
           "remove the partial copy of cudnn64_8.dll from the toolkit directory so only one cuDNN is found", NEVER_RENAME]
    return Finding(W4, "error", f"cuDNN 8 is incomplete on the search path: {sublib} is not found", tuple(evidence),
                   tuple(fix), CONFIRMED if (lonely or nine) else MATCHED)


def _zlibwapi(case: Case) -> Finding | None:
    hit = case.search(W5)
    if not hit:
        return None
    process = process_of(case)
    evidence = [hit.evidence(), _where_line(process, "zlibwapi.dll")]
    if "193" in case.error_text:
        evidence.append("error 193 means the zlibwapi.dll found is a 32-bit build")
    cudnn8 = _dirs_holding(case, "cudnn64_8.dll")
    if cudnn8:
        evidence.append(f"cuDNN 8 is in {cudnn8[0]}; cuDNN 8.3–8.9 on Windows needs zlibwapi.dll, which neither CUDA nor cuDNN ships")
    return Finding(W5, "error", "zlibwapi.dll (needed by cuDNN 8 on Windows) is missing", tuple(evidence),
                   ("install the 64-bit zlibwapi.dll as NVIDIA's cuDNN 8 install guide says "
                    "(docs.nvidia.com/deeplearning/cudnn/install-guide/index.html#install-zlib-windows), into a directory on "
                    "PATH such as the one holding cudnn64_8.dll",
                    "or use the cuDNN that torch bundles in torch\\lib instead of a system cuDNN",
                    "do not download zlibwapi.dll from DLL websites"),
                   CONFIRMED if cudnn8 or where(process, "zlibwapi.dll") == [] else MATCHED)


# ---------------------------------------------------------------- torch's own DLLs


def _fbgemm_libomp(case: Case) -> Finding | None:
    hit = case.search(W6)
    version = case.package("torch")
    is_240 = case.release("torch") == _v("2.4.0")
    if not hit and not (case.windows and is_240):
        return None
    evidence = ([hit.evidence()] if hit else []) + ([f"torch {version} (Windows wheels of 2.4.0 only)"] if version else [])
    torch_lib = torch_lib_dir(case)
    process = process_of(case)
    if torch_lib:
        present = process.holds(torch_lib, "libomp140.x86_64.dll")
        if present is False:
            evidence.append(f"{torch_lib} has fbgemm.dll but not libomp140.x86_64.dll (LLVM OpenMP from the VS build tools)")
    if not is_240 and hit:
        evidence.append("the regression is specific to torch 2.4.0; check that the failing program uses this torch")
    fix = [install_fix(case, keep_release=False, extra_specs=("torch==2.4.1",))[0] + " (2.4.1 has the fix, pytorch/pytorch PR #130697)",
           "or install the \"MSVC v143 build tools\" (they provide libomp140.x86_64.dll)",
           "do not download libomp140.x86_64.dll from DLL websites"]
    if hit:
        likelihood = CONFIRMED if is_240 else MATCHED
    else:
        likelihood = PROVEN if case.torch is None or not case.torch.import_ok else LIKELY
    return Finding(W6, "error" if hit or likelihood == PROVEN else "warning",
                   "torch 2.4.0's fbgemm.dll needs libomp140.x86_64.dll, which is not installed", tuple(evidence), tuple(fix), likelihood)


def _vcredist(case: Case) -> Finding | None:
    hit = case.search(W7)
    if not case.windows and not hit:
        return None
    process = process_of(case)
    missing = [name for name in ("msvcp140.dll", "vcruntime140.dll", "vcruntime140_1.dll")
               if process.holds(process.system_dir, name) is False]
    torch_lib = torch_lib_dir(case)
    load = None
    if torch_lib and process.holds(torch_lib, "c10.dll"):
        preload = replace(process, dll_directories=(torch_lib,))
        load = dll_search.load(preload, join_dir(torch_lib, "c10.dll"), "secure")
    hit_1114_old = case.search_pattern(r"\[WinError 1114\][^\n]*torch\\lib\\(c10|torch_python|c10_cuda)\.dll")
    torch_release = case.release("torch")
    stale_route = bool(hit_1114_old and torch_release is not None and torch_release < _v("2.9"))
    if not hit and not missing and not stale_route:
        return None
    if not hit and not stale_route and not case.package("torch"):
        return None
    evidence = [h.evidence() for h in (hit, hit_1114_old if stale_route else None) if h]
    if missing:
        evidence.append(f"{process.system_dir} lacks {', '.join(missing)} (the Microsoft Visual C++ runtime)")
    if load is not None and load.error == ERROR_MOD_NOT_FOUND:
        evidence.append(f"loading c10.dll the way torch does: {load.detail}")
    if stale_route:
        evidence.append(f"torch {case.package('torch')} is older than 2.9: the 1114 comes from a damaged or outdated "
                        "VC++ runtime (or a damaged torch install), not from the torch ≥ 2.9 msvcp140 change")
    fix = [f"install the latest Microsoft Visual C++ 2015–2022 Redistributable (x64): {VC_REDIST}"]
    if stale_route:
        fix.append("if that does not help, reinstall torch: " + case.pip("install", "--force-reinstall", "--no-cache-dir", f"torch=={case.package('torch')}"))
    fix.append("do not download msvcp140.dll or vcruntime140_1.dll from DLL websites")
    confirmed = bool(hit and (missing or (load is not None and not load.ok)))
    return Finding(W7, "error", "the Microsoft Visual C++ runtime is missing or broken", tuple(evidence), tuple(fix),
                   CONFIRMED if confirmed else MATCHED if (hit or stale_route) else PROVEN)


def _stale_msvcp(case: Case) -> Finding | None:
    hit = case.search(W8)
    if not hit:
        return None
    torch_release = case.release("torch")
    if torch_release is not None and torch_release < _v("2.9"):
        return None  # the catalogue's W8 is torch ≥ 2.9; older torch: see WIN-VCREDIST-MISSING
    cuda_dll = re.search(r"c10_cuda\.dll", hit.line)
    if cuda_dll and not case.nvidia:
        return None  # a CUDA torch on a machine without the driver: WIN-CUDA-TORCH-NO-NVCUDA explains it
    process = process_of(case)
    evidence = [hit.evidence()]
    if torch_release is not None:
        evidence.append(f"torch {case.package('torch')} (≥ 2.9 needs the VC++ 14.4x msvcp140.dll)")
    loaded = process.loaded_path("msvcp140.dll")
    if loaded and not same_path(ntpath.dirname(loaded.replace("/", "\\")), process.system_dir):
        evidence.append(f"msvcp140.dll was already loaded from {loaded} before torch: Windows reuses a loaded module "
                        "by name (first loaded wins), so c10.dll got that older copy")
    copies = [p for p in where(process, "msvcp140.dll") if not same_path(ntpath.dirname(p.replace("/", "\\")), process.system_dir)]
    if copies:
        evidence.append("other msvcp140.dll copies on PATH: " + ", ".join(copies))
    qt = case.search_pattern(r"^\s*(from|import)\s+(PyQt5|PyQt6|PySide2|PySide6|pyqtgraph|matplotlib\.backends\.backend_qt)")
    if qt:
        evidence.append(f"{qt.source} imports {qt.group(2)} (Qt ships its own msvcp140.dll)")
    script_qt = case.script_text and re.search(r"^\s*(from|import)\s+(PyQt5|PyQt6|PySide2|PySide6)", case.script_text, re.M)
    if script_qt:
        evidence.append(f"{case.script_path} imports {script_qt.group(2)}")
    fix = [f"install the current Microsoft Visual C++ 2015–2022 Redistributable (x64): {VC_REDIST}",
           "and `import torch` before any Qt-based module (PyQt5/PySide, Spyder, matplotlib's Qt backend), or preload "
           "the system copy first: `ctypes.WinDLL(r\"C:\\Windows\\System32\\msvcp140.dll\")`",
           "fallback, the last release before the change: " + install_fix(case, keep_release=False, extra_specs=("torch==2.8.0",))[0]]
    prefix = case.prefix or case.env_var("CONDA_PREFIX")
    own = next((p for p in ([loaded] if loaded else []) + copies
                if prefix and normalise(p).startswith(normalise(prefix).rstrip("\\") + "\\")), None)
    conda_path = re.search(r"[A-Za-z]:\\(?:[^\"\n]*?\\)?(?:ana|mini)(?:conda|forge)\d?(?:\\envs\\[^\\\"]+)?(?=\\)", hit.line, re.I)
    if not own and (case.conda_env or conda_path):
        # A conda environment's python.exe sits beside the environment's own msvcp140.dll (its vc14_runtime), and the
        # application directory is searched before System32: that copy is the one c10.dll gets.
        own = (prefix or conda_path.group(0) if conda_path else prefix or "the environment") + "\\msvcp140.dll"
    if own and (case.conda_env or conda_path):
        # The environment's own copy (conda's vc14_runtime) is found before System32: updating it is the fix,
        # the system redistributable is never reached.
        evidence.append(f"{own} is the conda environment's own msvcp140.dll (its vc14_runtime package), found before System32")
        fix.insert(0, Fix('update the environment\'s runtime: `conda install -c conda-forge "vc14_runtime>=14.40"` '
                          "(torch ≥ 2.9 needs the 14.4x msvcp140.dll)"))
    confirmed = bool(loaded or copies or qt or script_qt)
    return Finding(W8, "error", "an older msvcp140.dll loaded before torch makes c10.dll's initialisation fail (WinError 1114)",
                   tuple(evidence), tuple(fix), CONFIRMED if confirmed else MATCHED)


def _user_site(case: Case) -> Finding | None:
    hit = case.search(W9)
    torch = case.torch
    user_site_file = torch.file if torch and torch.file and re.search(r"\\AppData\\Roaming\\Python\\", torch.file, re.I) else None
    user_site_torch = user_site_file is not None
    is_230 = case.release("torch") == _v("2.3.0")
    if not hit and not (case.windows and is_230 and user_site_torch):
        return None
    evidence = ([hit.evidence()] if hit else []) + ([f"torch {case.package('torch')} is imported from {user_site_file}"] if user_site_torch else [])
    if is_230:
        evidence.append("torch 2.3.0 could not be imported from the per-user site-packages (pytorch/pytorch#125109)")
    return Finding(W9, "error", "torch 2.3.0 installed with `pip install --user` cannot load its DLLs", tuple(evidence),
                   ("install torch into a virtual environment (`python -m venv .venv`) or the interpreter's own site-packages "
                    "instead of --user; remove the user copy: `python -m pip uninstall torch` (run until it is gone)",
                    "or upgrade torch: " + case.pip("install", "--upgrade", "torch")),
                   CONFIRMED if hit and is_230 else MATCHED if hit else PROVEN)


def _no_nvcuda(case: Case) -> Finding | None:
    hit = case.search(W10)
    hit_1114_cuda = case.search_pattern(r"\[WinError 1114\][^\n]*torch\\lib\\(c10_cuda|torch_cuda)\.dll")
    tag = case.local_tag("torch") or ""
    cuda_build = kind_of(tag) == CUDA or bool(case.torch and case.torch.cuda)
    failed_import = case.torch is None or not case.torch.import_ok
    if not hit and not (hit_1114_cuda and not case.nvidia) and not (case.windows and cuda_build and not case.nvidia and failed_import and case.package("torch")):
        return None
    process = process_of(case)
    evidence = [h.evidence() for h in (hit, hit_1114_cuda) if h]
    nvcuda = process.holds(process.system_dir, "nvcuda.dll")
    if case.zluda:
        evidence.append("ZLUDA is in use (named in the paths): CUDA builds of torch run on an AMD GPU through ZLUDA's "
                        "nvcuda.dll, which must be found before caffe2_nvrtc.dll loads")
        fix = [Fix("ZLUDA runs CUDA builds on an AMD GPU through AMD's HIP SDK: install the HIP SDK version the ZLUDA build "
                   "is made for (5.7.1 for the default torch-zluda), set HIP_PATH to it and put its bin folder on PATH",
                   "zluda"),
               Fix("install ZLUDA and put its folder on PATH, or run the application's ZLUDA patch script again "
                   "(ComfyUI-Zluda: patchzluda.bat) so torch's CUDA libraries are ZLUDA's", "zluda"),
               Fix("update the AMD GPU driver, and remove leftover NVIDIA driver files (Display Driver Uninstaller)", "zluda")]
        return Finding(W10, "error", "torch's CUDA DLLs cannot load: ZLUDA (CUDA on AMD) is not set up", tuple(evidence),
                       tuple(fix), CONFIRMED if (hit or hit_1114_cuda) else PROVEN)
    if not case.nvidia:
        evidence.append(case.driver_line + (f"; {process.system_dir} has no nvcuda.dll (the driver installs it)" if nvcuda is False else ""))
        if cuda_build:
            evidence.append(f"torch {case.package('torch')} is a CUDA build: caffe2_nvrtc.dll links nvcuda.dll")
        fix = [Fix("no NVIDIA GPU: install the CPU build: " + install_fix(case)[0], "no-nvidia-gpu"),
               Fix("an NVIDIA GPU: install (or repair) the NVIDIA driver, which provides nvcuda.dll", "nvidia-gpu")]
        return Finding(W10, "error", "a CUDA build of torch on a machine without the NVIDIA driver (nvcuda.dll)",
                       tuple(evidence), tuple(fix), CONFIRMED if (hit or hit_1114_cuda) else PROVEN)
    torch_lib = torch_lib_dir(case)
    nvrtc = [n for n in case.env_dirs.get(torch_lib, []) if n.lower().startswith("nvrtc")] if torch_lib else []
    evidence.append(case.driver_line)
    if torch_lib and not nvrtc:
        evidence.append(f"{torch_lib} holds no nvrtc64_*.dll: the torch install is incomplete (a 'slimming' script or a broken download)")
    return Finding(W10, "error", "torch's caffe2_nvrtc.dll cannot load its dependencies", tuple(evidence),
                   ("reinstall torch: " + install_fix(case)[0].replace("--force-reinstall", "--force-reinstall --no-cache-dir"),
                    "repair the NVIDIA driver if nvcuda.dll is missing from System32"),
                   CONFIRMED if torch_lib and not nvrtc else MATCHED)


def _legacy_dll(case: Case) -> Finding | None:
    hit = case.search(W11)
    if not hit:
        return None
    process = process_of(case)
    evidence = [hit.evidence()]
    fix = []
    bits = case.env.python.bits if case.env else None
    if bits == 32 or "not a valid Win32 application" in hit.line:
        evidence.append(f"Python is {bits}-bit" if bits else "'%1 is not a valid Win32 application': a 32-bit/64-bit mix")
        fix.append("use a 64-bit Python (torch has no 32-bit Windows wheels)")
    iomp = where(process, "libiomp5md.dll")
    if len(iomp) > 1:
        evidence.append("several libiomp5md.dll on PATH: " + ", ".join(iomp))
        fix.append(f"remove the directories with other OpenMP runtimes from PATH ({', '.join(iomp[1:])})")
    missing = [n for n in ("msvcp140.dll", "vcruntime140_1.dll") if process.holds(process.system_dir, n) is False]
    if missing:
        evidence.append(f"{process.system_dir} lacks {', '.join(missing)}")
    fix.append(f"install the Microsoft Visual C++ 2015–2022 Redistributable (x64): {VC_REDIST}")
    fix.append("prefer a current torch: " + install_fix(case, keep_release=False)[0])
    return Finding(W11, "error", "DLL load failed while importing torch._C", tuple(evidence), tuple(fix),
                   CONFIRMED if len(evidence) > 1 else MATCHED)


def _ort_provider(case: Case) -> Finding | None:
    hit = case.search(W12)
    if not hit:
        return None
    process = process_of(case)
    ort = case.package("onnxruntime-gpu")
    evidence = [hit.evidence()] + ([f"onnxruntime-gpu {ort}" + (" (PyPI ≥ 1.19: CUDA 12 + cuDNN 9)" if version_tuple(ort) >= (1, 19) else "")] if ort else [])
    needed = ("cublasLt64_12.dll", "cudnn64_9.dll") if not ort or version_tuple(ort) >= (1, 19) else ("cublasLt64_11.dll", "cudnn64_8.dll")
    named = hit.group(1)  # onnxruntime ≥ 1.20 names the missing dependency: its major is the one the build wants
    major = re.search(r"64_(\d+)\.dll$", named or "")
    if named and major:
        needed = (named, "cudnn64_9.dll") if int(major.group(1)) >= 12 else (named, "cudnn64_8.dll")
    cuda_major = needed[0].split("64_")[1].split(".")[0]  # cublasLt64_12.dll -> 12
    unreachable = []
    for name in needed:
        resolution = resolve(process, name, "standard")
        evidence.append(f"{name}: " + (f"{resolution.path} ({resolution.how})" if resolution.found else resolution.how))
        if not resolution.found:
            unreachable.append(name)
    torch_copies = [d for name in unreachable for d in _env_dirs_holding(case, name) if _is_torch_lib(d)]
    fix = []
    if torch_copies:
        evidence.append(f"torch\\lib holds them ({torch_copies[0]}), so they are found once torch has loaded them")
        fix.append("`import torch` before creating the onnxruntime session (first loaded wins)")
    # A toolkit of another major does not help: CUDA keeps the major in the DLL names (cublasLt64_13.dll is not 12's).
    others = sorted({t.version for t in case.host.toolkits if t.version.split(".")[0] != cuda_major})
    if others:
        evidence.append(f"CUDA toolkits installed: {', '.join(others)}, none of CUDA {cuda_major}, whose DLL names "
                        f"carry the major ({needed[0]} is CUDA {cuda_major}'s)")
    fix += [f"make the CUDA {cuda_major} libraries onnxruntime-gpu {ort or ''} was built for loadable: install the CUDA "
            f"{cuda_major}.x toolkit beside the other (it puts its bin directory on PATH), or ".replace("  ", " ")
            + case.pip("install", *("nvidia-cublas-cu12", '"nvidia-cudnn-cu12==9.*"') if needed[1] == "cudnn64_9.dll" else ("nvidia-cublas-cu11", '"nvidia-cudnn-cu11==8.*"'))
            + " and prepend their bin directories to PATH",
            "or install the onnxruntime-gpu build for the CUDA major this machine has (ORT's CUDA EP requirements table)"]
    return Finding(W12, "error", "onnxruntime's CUDA provider cannot find the CUDA/cuDNN DLLs it was built for",
                   tuple(evidence), tuple(fix), CONFIRMED if unreachable else MATCHED)


def _v(text: str):
    return Version(text)


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))
