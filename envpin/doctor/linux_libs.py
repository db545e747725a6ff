"""Linux shared libraries (catalogue §2.2: L1–L6, L11–L14), reasoned with the loader model in `ld_search`.

The central fact: LD_LIBRARY_PATH is searched before the DT_RUNPATH through which torch and the pip
`nvidia-*` wheels find each other, so a toolkit directory on LD_LIBRARY_PATH that holds the same soname
(libnvJitLink.so.12, libcublasLt.so.12, libcudnn.so.9, libnccl.so.2) wins over the wheel's newer copy. The
rules name the directory that wins, the versions on both sides (from file names and wheel versions), and,
when the probe saw it, the copy the process really mapped.
"""

from __future__ import annotations

import re

from packaging.version import Version

from envpin.base.record import Record, record
from envpin.doctor import ld_search
from envpin.doctor.driver import torch_cuda as build_cuda
from envpin.doctor.fixes import install_fix
from envpin.doctor.ld_search import LinuxLoader, SharedObject
from envpin.doctor.model import CONFIRMED, LIKELY, MATCHED, PROVEN, Case, Finding, Fix, version_tuple
from envpin.vocabulary.frameworks import FRAMEWORKS

L1, L2, L3, L4, L5, L6, L11, L12, L13, L14 = (
    "LNX-NVJITLINK-SHADOWED", "LNX-CUBLASLT-SHADOWED", "LNX-CUDNN-SHADOWED", "LNX-TORCH201-NO-NVIDIA-WHEELS",
    "LNX-CUDNN-NOT-ON-LOADER-PATH", "ORT-CUDA-MAJOR-MISMATCH", "NCCL-DUPLICATE-OR-OLD", "CONDA-LIBSTDCXX-TOO-OLD",
    "LNX-VENV-LIB-LIB64-SPLIT", "GLIBC-TOO-OLD-FOR-WHEEL",
)
# a site-packages directory of a venv or prefix: <prefix>/lib/python3.11/site-packages or <prefix>/lib64/...
_SITE = re.compile(r"^(?P<prefix>.*?)/(?P<lib>lib|lib64)/python(?P<python>3\.\d+)/site-packages/(?P<rest>.*)$")
_LIB64_TORCH_IN_TEXT = re.compile(r"lib64/python(?P<python>3\.\d+)/site-packages/torch/")


@record
class WheelLibrary(Record):
    """A library a pip CUDA wheel ships, which an LD_LIBRARY_PATH copy can shadow."""

    signature: str
    sonames: tuple[str, ...]
    wheel_dir: str  # under site-packages/nvidia/
    distributions: tuple[str, ...]
    what: str


SHADOWABLE = (
    WheelLibrary(L1, ("libnvJitLink.so.12", "libnvJitLink.so.13"), "nvjitlink", ("nvidia-nvjitlink-cu12", "nvidia-nvjitlink"), "nvJitLink"),
    WheelLibrary(L2, ("libcublasLt.so.12", "libcublasLt.so.11", "libcublasLt.so.13"), "cublas", ("nvidia-cublas-cu12", "nvidia-cublas-cu11", "nvidia-cublas"), "cuBLASLt"),
    WheelLibrary(L3, ("libcudnn.so.9", "libcudnn.so.8"), "cudnn", ("nvidia-cudnn-cu12", "nvidia-cudnn-cu11", "nvidia-cudnn-cu13"), "cuDNN"),
    WheelLibrary(L11, ("libnccl.so.2",), "nccl", ("nvidia-nccl-cu12", "nvidia-nccl-cu11", "nvidia-nccl-cu13"), "NCCL"),
)


def findings(case: Case) -> list[Finding]:
    if not case.linux and not any(case.search(s) for s in (L1, L2, L3, L4, L5, L6, L11, L12, L13, L14)):
        return []
    found = [_shadowed(case, library) for library in SHADOWABLE]
    split = _lib_lib64_split(case)
    # with the split shown, "not on the loader path" is its symptom, and its LD_LIBRARY_PATH fix the one to avoid
    found += [_torch201(case), None if split else _cudnn_not_on_path(case), _ort_major(case), _nccl_duplicates(case),
              _libstdcxx(case), split, _glibc_too_old(case)]
    return [f for f in found if f]


def loader_of(case: Case) -> LinuxLoader:
    return LinuxLoader(
        ld_library_path=tuple(case.path_list("LD_LIBRARY_PATH")),
        listing=ld_search.listing_from_facts(case.host.files, case.env_dirs),
    )


def wheel_dir(case: Case, member: str) -> str | None:
    return next((d for d in case.env_dirs if d.rstrip("/").endswith(f"/nvidia/{member}/lib")), None)


def _wheel_version(case: Case, library: WheelLibrary) -> tuple[str, str] | None:
    for name in library.distributions:
        version = case.package(name)
        if version:
            return name, version
    return None


def _loaded_copy(case: Case, soname: str) -> str | None:
    stem = soname.split(".so")[0] + ".so"
    for framework in FRAMEWORKS:
        facts = case.framework(framework)
        for path in facts.loaded if facts else ():
            if path.rsplit("/", 1)[-1].startswith(stem):
                return path
    return None


def _shadow_of(case: Case, library: WheelLibrary) -> tuple[SharedObject | None, str | None]:
    loader = loader_of(case)
    own = wheel_dir(case, library.wheel_dir)
    for soname in library.sonames:
        if own is not None:
            winner = ld_search.shadowing(loader, soname, own)
        else:  # no probe: any LD_LIBRARY_PATH copy is a candidate for shadowing the wheel's
            winner = ld_search.resolve(loader, soname)
            winner = winner if winner.found and winner.how.startswith("LD_LIBRARY_PATH") else None
        if winner is not None:
            return winner, own
    return None, own


def _shadowed(case: Case, library: WheelLibrary) -> Finding | None:
    hit = case.search(library.signature) if library.signature != L11 else case.search(L11)
    winner, own = _shadow_of(case, library)
    directory = winner.directory if winner is not None and winner.directory is not None else ""  # a winner is found
    wheel = _wheel_version(case, library)
    if not hit and not (winner and (own or wheel)):
        return None
    if library.signature == L11 and not winner and hit:
        return None  # NCCL without a shadowing copy: the duplicate-package rule below explains it
    evidence = [hit.evidence()] if hit else []
    needed = _needed_version(hit, library)
    if winner:
        version = ".".join(map(str, winner.version)) or "?"
        evidence.append(f"{winner.how} {directory} holds {winner.file} ({library.what} {version}); LD_LIBRARY_PATH is "
                        "searched before the wheels' DT_RUNPATH, so this copy wins")
    if wheel:
        where = f" in {own}" if own else ""
        evidence.append(f"the environment's own {library.what}: {wheel[0]} {wheel[1]}{where}")
    if needed:
        evidence.append(f"the symbol asks for {library.what} ≥ {needed}")
    loaded = _loaded_copy(case, library.sonames[0])
    if loaded and winner and loaded.startswith(directory):
        evidence.append(f"the probe saw {loaded} mapped into the process")
    if library.signature == L3 and hit:
        evidence.append(f"torch was compiled against cuDNN {'.'.join(hit.match.groups()[:3])}; the loaded one is "
                        f"{'.'.join(hit.match.groups()[4:7])}")
    fix = []
    if winner:
        rest = [d for d in case.path_list("LD_LIBRARY_PATH") if d.rstrip("/") != directory.rstrip("/")]
        fix.append(f"remove {directory} from LD_LIBRARY_PATH for this environment: "
                   + (f"`export LD_LIBRARY_PATH={':'.join(rest)}`" if rest else "`unset LD_LIBRARY_PATH`")
                   + " (and from the shell profile, module file or conda activate.d script that sets it)")
    else:
        fix.append("remove CUDA toolkit directories (/usr/local/cuda*/lib64, $CONDA_PREFIX/lib) from LD_LIBRARY_PATH")
    if library.signature == L1:
        target = f">={needed}" if needed else ""
        upgrade = case.pip("install", f'"nvidia-nvjitlink-cu12{target}"') if needed else case.pip("install", "--upgrade", "nvidia-nvjitlink-cu12")
        fix.append(f"or make the wheel's nvJitLink new enough: {upgrade}")
        fix.append("newer torch releases preload their own nvJitLink (pytorch/pytorch PR #141063): upgrading torch also avoids it")
    if library.signature == L3:
        fix.append("or, for conda: delete the `export LD_LIBRARY_PATH=$CONDA_PREFIX/lib…` line from "
                   "$CONDA_PREFIX/etc/conda/activate.d/*.sh (a TensorFlow-era recipe)")
    if library.signature == L11:
        fix.append("install exactly the nvidia-nccl-cuXX that torch requires (`pip show torch` lists it) and remove the others")
    severity = "error" if hit or (winner and needed) else "warning"
    if hit and winner:
        likelihood = CONFIRMED
    elif hit:
        likelihood = MATCHED
    elif loaded and winner and loaded.startswith(directory):
        likelihood = PROVEN
    else:
        likelihood = LIKELY
    titles = {
        L1: "an older libnvJitLink on LD_LIBRARY_PATH shadows the one the CUDA wheels need",
        L2: "an older libcublasLt on LD_LIBRARY_PATH shadows the wheel's cuBLAS",
        L3: "a cuDNN on LD_LIBRARY_PATH shadows the cuDNN torch was built with",
        L11: "an NCCL on LD_LIBRARY_PATH shadows the one torch needs",
    }
    if not winner and hit:
        titles = {**titles, L1: "libcusparse needs a newer libnvJitLink than the one loaded",
                  L2: "libcublas was paired with an older libcublasLt"}
    if severity == "warning":
        title = f"{library.what} on LD_LIBRARY_PATH ({directory}) takes precedence over the environment's own"
    else:
        title = titles[library.signature]
    return Finding(library.signature, severity, title, tuple(evidence), tuple(fix), likelihood)


def _needed_version(hit, library: WheelLibrary) -> str | None:
    if hit is None or library.signature != L1:
        return None
    match = re.search(r"_12_(\d+)", hit.line)
    return f"12.{match.group(1)}" if match else None


def _torch201(case: Case) -> Finding | None:
    hit = case.search(L4)
    if not hit:
        return None
    evidence = [hit.evidence()]
    torch = case.package("torch")
    missing = [name for name in ("nvidia-cudnn-cu11", "nvidia-cublas-cu11") if case.env and not case.package(name)]
    if torch:
        evidence.append(f"torch {torch}" + (" (the 2.0.1 PyPI wheel's metadata did not carry its nvidia-*-cu11 requirements "
                                            "for every resolver, pytorch/pytorch#104259)" if case.release("torch") == _v("2.0.1") else ""))
    if missing:
        evidence.append(f"not installed: {', '.join(missing)}")
    fix = ["move to torch ≥ 2.1 (or 2.0.0): " + case.pip("install", '"torch>=2.1"'),
           "or add the CUDA 11 wheels explicitly: " + case.pip("install", "nvidia-cudnn-cu11==8.5.0.96", "nvidia-cublas-cu11==11.10.3.66",
                                                                 "nvidia-cuda-nvrtc-cu11==11.7.99", "nvidia-cuda-runtime-cu11==11.7.99"),
           "or install from https://download.pytorch.org/whl/cu118, whose wheels carry the CUDA libraries"]
    return Finding(L4, "error", "torch 2.0.1 was installed without its nvidia-*-cu11 libraries", tuple(evidence), tuple(fix),
                   CONFIRMED if case.release("torch") == _v("2.0.1") else MATCHED)


def _cudnn_not_on_path(case: Case) -> Finding | None:
    hit = case.search(L5)
    if not hit:
        return None
    found = re.search(r"\.so\.(\d)", hit.line)
    assert found is not None  # the signature holds .so.8 or .so.9
    major = found.group(1)
    evidence = [hit.evidence()]
    own = wheel_dir(case, "cudnn")
    cudnn = case.package("nvidia-cudnn-cu12") or case.package("nvidia-cudnn-cu11")
    loader = loader_of(case)
    system = ld_search.resolve(loader, f"libcudnn.so.{major}")
    if own:
        evidence.append(f"cuDNN is installed in {own} ({cudnn or 'nvidia-cudnn'}), reachable only through torch's RUNPATH")
    if not system.found:
        evidence.append(f"libcudnn.so.{major} is not on LD_LIBRARY_PATH or in the system directories envpin listed")
    raiser = case.search_pattern(r"(onnxruntime|tensorrt|ctranslate2|faster_whisper)")
    if raiser:
        evidence.append(f"raised from {raiser.group(1)}, which expects cuDNN on the system loader path")
    import_torch = Fix("`import torch` before the library that fails, so torch's cuDNN is already loaded", "torch-installed")
    present = sorted({d for d, names in {**case.host.files, **case.env_dirs}.items() for n in names
                      if re.match(r"libcudnn(_\w+)?\.so\.(\d+)", n) and not n.startswith(f"libcudnn.so.{major}")
                      and not re.match(rf"libcudnn_\w+\.so\.{major}", n)})
    if present:
        evidence.append("cuDNN of another major is present (" + ", ".join(present) + f"), not cuDNN {major}")
    fix: list[str] = []
    if own:  # the wheel's cuDNN is here, only not on the path this library searches: the exact fix first
        fix.append(f"expose the wheel's cuDNN: `export LD_LIBRARY_PATH={own}:$LD_LIBRARY_PATH`")
        fix.append(import_torch)
    else:
        # faster-whisper's own instructions: cuBLAS and cuDNN from PyPI, their lib directories on LD_LIBRARY_PATH
        ct2 = case.package("ctranslate2")
        cuda11 = bool(ct2 and version_tuple(ct2)[:1] < (4,))  # CTranslate2 3.x is built for CUDA 11 (its README)
        wheel = f'"nvidia-cudnn-cu{11 if cuda11 else 12}=={major}.*"'
        cublas = "nvidia-cublas-cu11" if cuda11 else "nvidia-cublas-cu12"
        fix.append(f"install cuDNN {major} for the library and put it on the loader path: " + case.pip("install", cublas, wheel)
                   + ", then `export LD_LIBRARY_PATH=$(" + case.python_command + " -c 'import os, nvidia.cublas.lib, nvidia.cudnn.lib; "
                   "print(os.path.dirname(nvidia.cublas.lib.__file__) + \":\" + os.path.dirname(nvidia.cudnn.lib.__file__))'):$LD_LIBRARY_PATH`")
        fix.append(import_torch)
    return Finding(L5, "error", f"libcudnn.so.{major} is not on the loader path of the library that needs it", tuple(evidence),
                   tuple(fix), CONFIRMED if own or raiser else MATCHED)


def _ort_major(case: Case) -> Finding | None:
    hit = case.search(L6)
    if not hit:
        return None
    library, major = hit.text(1), hit.text(2)
    evidence = [hit.evidence()]
    ort = case.package("onnxruntime-gpu")
    if ort:
        evidence.append(f"onnxruntime-gpu {ort} asks for lib{library}.so.{major}")
    available = sorted({m for d, names in {**case.host.files, **case.env_dirs}.items() for n in names
                        for m in re.findall(rf"^lib{library}\.so\.(\d+)", n)})
    if major in available:
        return None  # the major it wants is here, only not on its loader path: LNX-CUDNN-NOT-ON-LOADER-PATH's case
    if available:
        evidence.append(f"lib{library} majors present: {', '.join(available)}")
    if case.host.driver and case.host.driver.cuda:
        evidence.append(case.driver_line)
    old_build = (library == "cudnn" and major == "8") or (library != "cudnn" and major == "11")
    newer = [m for m in available if int(m) > int(major)]
    fix = []
    driver12 = bool(case.host.driver and version_tuple(case.host.driver.cuda)[:1] >= (12,))
    before_119 = bool(ort and version_tuple(ort)[:2] < (1, 19))
    if old_build and (newer or driver12 or before_119):
        # ORT's CUDA EP requirements table: the PyPI onnxruntime-gpu from 1.19 on is built for CUDA 12 + cuDNN 9
        fix.append(case.pip("install", "--upgrade", '"onnxruntime-gpu>=1.19"')
                   + " (PyPI's onnxruntime-gpu ≥ 1.19 is the CUDA 12 + cuDNN 9 build; this one wants CUDA 11 / cuDNN 8)")
    fix.append("install the onnxruntime-gpu build for the CUDA major present (ORT's CUDA EP requirements table: PyPI ≥ 1.19 = "
               "CUDA 12 + cuDNN 9; CUDA 11 builds are on a separate feed)")
    package = "nvidia-cudnn-cu12==" + major + ".*" if library == "cudnn" else "nvidia-" + library.lower().replace("cublaslt", "cublas") + "-cu" + major
    fix.append(f"or add the missing major's libraries ({package})")
    title = f"onnxruntime-gpu was built for a CUDA/cuDNN major this machine does not have (lib{library}.so.{major})"
    return Finding(L6, "error", title, tuple(evidence), tuple(fix), CONFIRMED if ort or newer else MATCHED)


def _nccl_duplicates(case: Case) -> Finding | None:
    hit = case.search(L11)
    if case.env is None:
        return Finding(L11, "error", "libtorch_cuda.so needs a newer NCCL than the one loaded", (hit.evidence(),),
                       ("install exactly the nvidia-nccl-cuXX torch requires (`pip show torch`), remove extra NCCL packages, "
                        "and strip NCCL directories from LD_LIBRARY_PATH",), MATCHED) if hit else None
    nccl = {name: version for name, version in case.env.packages.pip.items() if re.fullmatch(r"nvidia-nccl-cu\d+|nvidia-nccl", name)}
    if not hit and len(nccl) < 2:
        return None
    evidence = [hit.evidence()] if hit else []
    if nccl:
        evidence.append("installed: " + ", ".join(f"{n} {v}" for n, v in sorted(nccl.items())))
    torch_cuda = build_cuda(case)
    keep = f"nvidia-nccl-cu{torch_cuda.split('.')[0]}" if torch_cuda else "the one torch requires"
    extras = [n for n in nccl if n != keep]
    fix = [f"keep {keep} at the version torch pins (`{case.python_command} -m pip show torch` lists it under Requires)"]
    if extras and len(nccl) > 1:
        fix.insert(0, case.pip("uninstall", "-y", *extras))
    fix.append("and strip NCCL directories from LD_LIBRARY_PATH")
    return Finding(L11, "error" if hit or len(nccl) > 1 else "warning",
                   "several NCCL packages, or one older than torch needs" if len(nccl) > 1 else "libtorch_cuda.so needs a newer NCCL",
                   tuple(evidence), tuple(fix), CONFIRMED if hit and len(nccl) > 1 else MATCHED if hit else PROVEN)


def _libstdcxx(case: Case) -> Finding | None:
    hit = case.search(L12)
    if not hit:
        return None
    evidence = [hit.evidence()]
    conda = case.env is not None and case.env.python.env_type == "conda"
    loaded = _loaded_copy(case, "libstdc++.so.6")
    if conda:
        evidence.append(f"the environment is a conda environment ({case.prefix}) with its own libstdc++")
    if loaded:
        evidence.append(f"the probe saw {loaded} mapped")
    needed = re.search(r"GLIBCXX_3\.4\.\d+", hit.line)
    fix = ["in the conda environment: `conda install -c conda-forge libstdcxx-ng` (a newer runtime"
           + (f" that provides {needed.group(0)})" if needed else ")"),
           "do not mix extensions compiled with the system gcc with an older conda C++ runtime"]
    return Finding(L12, "error", "the C++ runtime (libstdc++) is older than a compiled module needs", tuple(evidence), tuple(fix),
                   CONFIRMED if conda else MATCHED)


def _glibc_too_old(case: Case) -> Finding | None:
    """`version 'GLIBC_2.28' not found (required by …/site-packages/torch/lib/libtorch_python.so)`: the module was
    linked against a newer glibc than the machine's. glibc is the OS's own C library, so the fix is a machine with
    that glibc (a newer OS release or container image) or a build made for this one, never a second glibc."""
    hit = case.search(L14)
    if not hit:
        return None
    needed, module = hit.text(1), hit.text(2).strip()
    evidence = [hit.evidence()]
    libc = case.host.libc
    have = libc.version if libc is not None and libc.name == "glibc" else None
    if have:
        evidence.append(f"this machine's glibc is {have}; the module needs {needed} or newer")
    package = re.search(r"site-packages/([\w.-]+)/", module)
    owner = package.group(1) if package else None
    if owner:
        installed = case.package(owner) or case.package(owner.replace("_", "-"))
        evidence.append(f"{module} belongs to {owner}" + (f" {installed}" if installed else "")
                        + ": that wheel was built for a newer glibc than this machine has")
    fix = [f"run it where glibc ≥ {needed} is the system C library: a newer OS release"
           + (f" than this one (glibc {have})" if have else "") + f", or a container image whose glibc is ≥ {needed}"]
    framework = next((name for name in FRAMEWORKS if owner and owner.replace("-", "_") == name.replace("-", "_")), None)
    if framework:
        # the solve knows each release's manylinux tag (wheel_tags.yaml), so it picks a build pip installs on this glibc
        fix.append(f"or a {framework} build made for this glibc: " + install_fix(case, framework, keep_release=False)[0])
    fix.append("do not install a second glibc into the system's library directories or LD_LIBRARY_PATH: every "
               "program on the machine loads it")
    return Finding(L14, "error", f"a compiled module needs glibc {needed}, newer than this machine's",
                   tuple(evidence), tuple(fix), CONFIRMED if have else MATCHED)


def _v(text: str):
    return Version(text)


def _lib_lib64_split(case: Case) -> Finding | None:
    """torch in <prefix>/lib64/pythonX.Y/site-packages and the nvidia-* wheels in <prefix>/lib/pythonX.Y/site-packages:
    two real directories (a venv of a Fedora/RHEL/AlmaLinux Python or an IDE's), where pip puts platlib wheels (torch)
    in lib64 and purelib ones (nvidia-*) in lib. torch looks for the wheels beside itself, so they are not found; the
    fix is one layout, not LD_LIBRARY_PATH (pytorch/pytorch#104259)."""
    hit = case.search(L13)
    sites: dict[tuple[str, str, str], list[str]] = {}
    for directory in case.env_dirs:
        match = _SITE.match(directory.replace("\\", "/"))
        if match:
            sites.setdefault((match["prefix"], match["python"], match["lib"]), []).append(match["rest"])
    split = [(prefix, python) for (prefix, python, lib) in sites if lib == "lib64"
             and any(rest.startswith("torch") for rest in sites[(prefix, python, "lib64")])
             and any(rest.startswith("nvidia/") for rest in sites.get((prefix, python, "lib"), []))]
    in_text = case.search_pattern(_LIB64_TORCH_IN_TEXT) if hit else None
    if not split and not (hit and in_text):
        return None
    evidence = [hit.evidence()] if hit else []
    if split:
        prefix, python = split[0]
        evidence.append(f"torch is in {prefix}/lib64/python{python}/site-packages and the nvidia-* wheels in "
                        f"{prefix}/lib/python{python}/site-packages: two directories, and torch looks for the wheels beside itself")
    else:
        assert in_text is not None
        prefix = (case.prefix or _path_before(in_text) or "<venv>").rstrip("/")
        python = in_text.match.group("python")
        evidence.append(f"the traceback runs torch from {in_text.line.strip()}: a lib64 site-packages; the nvidia-* "
                        "wheels go to lib/ unless lib64 is a link to it")
    # the same builds go back in, in one layout: nothing here asks for another build
    fix = [f"put the environment in one layout and reinstall what it holds: `{case.pip('freeze')} > requirements.txt`, then "
           f"`python{python} -m venv --clear {prefix}` (a venv made so has one site-packages: its lib64 is a link to lib), then "
           f"`{prefix}/bin/python -m pip install -r requirements.txt`",
           f"check first, if the traceback alone showed it: `ls -ld {prefix}/lib64` is a link to lib in a sound venv, a "
           "directory of its own in a split one",
           "not LD_LIBRARY_PATH: pointing it at the nvidia directories hides the split until the next wheel lands in the other one"]
    return Finding(L13, "error", "the venv's site-packages is split between lib/ and lib64/: torch cannot find the nvidia-* wheels",
                   tuple(evidence), tuple(fix), CONFIRMED if split and hit else PROVEN if split else LIKELY)


def _path_before(hit) -> str:
    """The path a traceback prints before `lib64/pythonX.Y/…`: back to the blank or quote that starts it."""
    text = hit.match.string[:hit.match.start()]
    start = max(text.rfind(c) for c in (" ", '"', "'", "\n", "\t")) + 1
    return text[start:]
