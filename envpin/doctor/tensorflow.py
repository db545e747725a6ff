"""TensorFlow (catalogue §2.7 T1–T3, and its Windows rows W13, W14).

What a TensorFlow build expects comes from the database (TensorFlow's tested build configurations and the
`[and-cuda]` pins read from PyPI): the CUDA/cuDNN of the installed release, whether the release has the
`[and-cuda]` extra, and the conda packages native Windows ≤ 2.10 needs.
"""

from __future__ import annotations

import re

from envpin.doctor.model import CONFIRMED, LIKELY, MATCHED, PROVEN, Case, Finding, version_tuple

T1, T2, T3, T4, T5, W13, W14 = ("TF-CUDA-SONAME-MISSING", "TF-CANNOT-DLOPEN-GPU-LIBS", "TF-CUDA-RUNTIME-NOT-INSTALLED",
                                "TF-216-WHEELS-NOT-FOUND", "TF-CONDA-LIB-NOT-ON-LOADER-PATH", "WIN-TF-CUDA11-DLL-MISSING",
                                "WIN-TF-NATIVE-GPU-DROPPED")
NO_SYMLINK = "never symlink one CUDA major's library to another's soname (libcudart.so.12 -> .so.11): the ABI differs"


def findings(case: Case) -> list[Finding]:
    return [f for f in (_soname_missing(case), _cannot_dlopen(case), _runtime_not_installed(case), _windows_dlls(case),
                        _windows_gpu_dropped(case), _wheels_not_found_216(case), _conda_lib_not_on_path(case)) if f]


def tf_version(case: Case) -> str | None:
    return case.package("tensorflow") or case.package("tensorflow-cpu") or case.package("tensorflow-gpu")


def tf_release(case: Case):
    version = tf_version(case)
    if not version:
        return None
    wanted = version_tuple(version)[:3]
    return next((r for r in case.database.tensorflow_releases if version_tuple(str(r.version))[:3] == wanted), None)


def tested_release(case: Case):
    """The release whose tested CUDA/cuDNN apply: the installed one, else the newest of its minor in the database
    (TensorFlow's tested build configurations are listed per minor release)."""
    release = tf_release(case)
    if release is not None or not tf_version(case):
        return release
    minor = version_tuple(tf_version(case))[:2]
    same = [r for r in case.database.tensorflow_releases if version_tuple(str(r.version))[:2] == minor]
    return max(same, key=lambda r: version_tuple(str(r.version)), default=None)


def and_cuda_command(case: Case) -> str | None:
    release = tf_release(case)
    if release is None or release.and_cuda is None:
        return None
    return case.pip("install", f'"tensorflow[and-cuda]=={release.version}"')


def _tested(case: Case, platform: str) -> str | None:
    release = tested_release(case)
    gpu = release.gpu.get(platform) if release else None
    if gpu is None:
        return None
    return f"tensorflow {release.version} was tested with CUDA {gpu.cuda} and cuDNN {gpu.cudnn} (database {case.database.version})"


def _soname_missing(case: Case) -> Finding | None:
    hit = case.search(T1)
    if not hit:
        return None
    soname = hit.group(1) or hit.group(2) or ""
    if hit.group(2) and not (tf_version(case) or re.search(r"tensorflow", case.error_text, re.I)):
        return None  # the ImportError form is TensorFlow's only where TensorFlow is the one importing
    evidence = _tf_evidence(case, [hit.evidence()])
    fixes = _tf_fixes(case)
    wanted = _cuda_of_soname(soname)
    if wanted and not _tested(case, case.platform):
        # the database has no record of this release: the soname itself says which CUDA the build was linked with
        others = [t for t in case.host.toolkits if _cuda_of_soname(f"libcudart.so.{t.version}") != wanted]
        for toolkit in others:
            held = [n for d, names in case.host.files.items() if toolkit.root and d.startswith(toolkit.root) for n in names
                    if n.startswith(soname.split(".so")[0] + ".so.")]
            evidence.append(f"the CUDA {toolkit.version} installed at {toolkit.root} is another release"
                            + (f": it holds {', '.join(held)}, not {soname}" if held else f", without {soname}"))
        fixes.insert(0, f"install CUDA {wanted}, whose runtime {soname} this TensorFlow build loads, beside the "
                        + (f"CUDA {', '.join(t.version for t in others)} installed, " if others else "")
                        + "and put its lib64 on LD_LIBRARY_PATH; or a TensorFlow release built for the CUDA this machine has")
    return Finding(T1, "error", f"TensorFlow cannot load {soname}", tuple(evidence), tuple(fixes),
                   CONFIRMED if tf_version(case) else MATCHED)


def _cuda_of_soname(soname: str) -> str | None:
    """The CUDA release a runtime soname belongs to: libcudart.so.7.5 is CUDA 7.5's (its sonames carried major.minor
    up to CUDA 10.x), libcudart.so.11.0 is every CUDA 11.x's, libcudart.so.12 every 12.x's."""
    match = re.fullmatch(r"libcudart\.so\.(\d+)(?:\.(\d+))?", soname)
    if not match:
        return None
    major, minor = int(match.group(1)), match.group(2)
    return f"{major}.{minor}" if major <= 10 and minor is not None else f"{major}.x"


def _tf_evidence(case: Case, evidence: list[str]) -> list[str]:
    version = tf_version(case)
    if version:
        evidence.append(f"tensorflow {version}")
    tested = _tested(case, case.platform)
    if tested:
        evidence.append(tested)
    wheels = sorted(n for n in (case.env.packages.pip if case.env else {}) if n.startswith("nvidia-") and n.endswith("-cu12"))
    if case.env is not None:
        evidence.append("pip CUDA wheels: " + (", ".join(wheels) if wheels else "none installed"))
    return evidence


def _tf_fixes(case: Case) -> list[str]:
    fixes = []
    command = and_cuda_command(case)
    if command and case.linux:
        fixes.append(f"{command} (TensorFlow ≥ 2.14 installs its CUDA libraries from PyPI), then check "
                     "`python -c \"import tensorflow as tf; print(tf.config.list_physical_devices('GPU'))\"`")
    tested = _tested(case, case.platform)
    conda = case.conda_env or case.search_pattern(r"/(?:ana|mini)(?:conda|forge)\d?/|/envs/[^/\s]+/lib|CONDA_PREFIX")
    release = tested_release(case)
    gpu = release.gpu.get(case.platform) if release else None
    if conda and case.linux and not (command and release and version_tuple(str(release.version)) >= (2, 14)):
        # TensorFlow's own conda instructions (2.5–2.13): CUDA and cuDNN from conda into the environment, whose lib/ is
        # then put on LD_LIBRARY_PATH, since conda activation does not do it.
        packages = f"cudatoolkit={gpu.cuda} cudnn={gpu.cudnn}" if gpu else "cudatoolkit cudnn (the versions TensorFlow was tested with)"
        fixes.insert(0, f"in the conda environment: `conda install -c conda-forge {packages}`, then "
                        "`export LD_LIBRARY_PATH=$CONDA_PREFIX/lib/:$LD_LIBRARY_PATH` (keep it in "
                        "$CONDA_PREFIX/etc/conda/activate.d/env_vars.sh)")
    if tested:
        fixes.append(f"or install exactly the CUDA and cuDNN it was built for ({tested.split(' was tested with ')[1]})")
    fixes.append(NO_SYMLINK)
    return fixes


def _cannot_dlopen(case: Case) -> Finding | None:
    hit = case.search(T2)
    if not hit:
        return None
    underlying = case.search_all(r"Could not load dynamic library '([^']+)'; dlerror: ([^\n]*)")
    evidence = [hit.evidence()] + [f"{h.source}: {h.text(1)}: {h.text(2).strip()}" for h in underlying[:6]]
    return Finding(T2, "error", "TensorFlow could not load its GPU libraries: "
                   + (", ".join(dict.fromkeys(h.text(1) for h in underlying)) if underlying else "see the lines above the summary"),
                   tuple(_tf_evidence(case, evidence)), tuple(_tf_fixes(case)), CONFIRMED if underlying else MATCHED)


def _runtime_not_installed(case: Case) -> Finding | None:
    hit = case.search(T3)
    tf = case.framework("tensorflow")
    release = tf_release(case)
    no_wheels = case.env is not None and not any(n.startswith("nvidia-cudnn") for n in case.env.packages.pip)
    predicted = (case.linux and case.nvidia and case.host.gpus and tf is not None and tf.import_ok and not tf.is_available
                 and release is not None and release.and_cuda is not None and no_wheels)
    if not hit and not predicted:
        return None
    evidence = [hit.evidence()] if hit else []
    evidence = _tf_evidence(case, evidence) + [case.driver_line]
    if hit and not case.nvidia:
        return Finding(T3, "info", "TensorFlow runs on the CPU: there is no NVIDIA driver", tuple(evidence),
                       ("nothing to fix on a machine without an NVIDIA GPU",), MATCHED)
    fix = _tf_fixes(case)
    return Finding(T3, "error", "TensorFlow finds no CUDA runtime: plain `pip install tensorflow` installs none on Linux",
                   tuple(evidence), tuple(fix), CONFIRMED if hit and no_wheels else MATCHED if hit else PROVEN)


def _windows_dlls(case: Case) -> Finding | None:
    hit = case.search(W13)
    if not hit:
        return None
    evidence = _tf_evidence(case, [hit.evidence()])
    cuda_path = case.env_var("CUDA_PATH")
    if cuda_path:
        evidence.append(f"CUDA_PATH={cuda_path}")
    cudart = sorted({n for names in case.host.files.values() for n in names if n.lower().startswith("cudart64_")})
    if cudart:
        evidence.append("CUDA runtimes on PATH: " + ", ".join(cudart) + " (TensorFlow ≤ 2.10 needs cudart64_110.dll, CUDA 11.2)")
    release = tf_release(case)
    conda = release.gpu.get("windows-x86_64").conda if release and release.gpu.get("windows-x86_64") else "cudatoolkit=11.2 cudnn=8.1.0"
    fix = [f"in the environment: `conda install -c conda-forge {conda}` and `{case.python_command} -m pip install \"tensorflow<2.11\"` "
           "(TensorFlow's own Windows instructions)", "or use WSL2, where current TensorFlow has GPU support", NO_SYMLINK]
    return Finding(W13, "error", f"TensorFlow cannot find {hit.group(1)}.dll: native Windows TensorFlow needs CUDA 11.2 + cuDNN 8.1 DLLs",
                   tuple(evidence), tuple(fix), CONFIRMED if tf_version(case) else MATCHED)


def _windows_gpu_dropped(case: Case) -> Finding | None:
    version = tf_version(case)
    if not (case.windows and version and version_tuple(version) >= (2, 11)):
        return None
    evidence = [f"tensorflow {version} on native Windows", case.driver_line]
    tf = case.framework("tensorflow")
    if tf is not None and tf.import_ok:
        evidence.append(f"tf.config.list_physical_devices('GPU') found {tf.device_count or 0} GPU(s) (probe)")
    evidence.append("\"TensorFlow 2.10 was the last TensorFlow release that supported GPU on native-Windows\" (TF 2.11 release notes)")
    severity = "error" if case.nvidia and case.host.gpus else "info"
    return Finding(W14, severity, "TensorFlow ≥ 2.11 has no GPU support on native Windows", tuple(evidence),
                   ("use WSL2 and `pip install \"tensorflow[and-cuda]\"` there",
                    "or `tensorflow-cpu` with the DirectML plugin",
                    "or `tensorflow<2.11` with CUDA 11.2 / cuDNN 8.1 (Python ≤ 3.10): "
                    "`conda install -c conda-forge cudatoolkit=11.2 cudnn=8.1.0`"),
                   PROVEN if severity == "error" else LIKELY)


def _nvidia_wheels(case: Case) -> list[str]:
    return sorted(n for n in (case.env.packages.pip if case.env else {}) if n.startswith("nvidia-") and n.endswith("-cu12"))


def _site_packages(case: Case) -> str | None:
    """The site-packages TensorFlow is imported from (the probe's tensorflow/__init__.py, two levels up)."""
    tf = case.framework("tensorflow")
    if tf is None or not tf.file:
        return None
    return tf.file.replace("\\", "/").rsplit("/tensorflow/", 1)[0]


def _wheels_not_found_216(case: Case) -> Finding | None:
    """T4: TensorFlow 2.16.1's wheels do not find the nvidia-*-cu12 libraries `[and-cuda]` installs
    (tensorflow/tensorflow#63362): with a working driver and GPU, the probe lists no GPU."""
    version = tf_version(case)
    if not (case.linux and version and version_tuple(version)[:3] == (2, 16, 1)):
        return None
    tf = case.framework("tensorflow")
    wheels = _nvidia_wheels(case)
    no_gpu = tf is not None and tf.import_ok and not tf.device_count
    dlopen = case.search(T2)
    if not wheels or not case.nvidia or not (no_gpu or dlopen):
        return None
    evidence = [f"tensorflow {version} with its [and-cuda] wheels: {', '.join(wheels)}", case.driver_line]
    if case.host.gpus:
        evidence.append("GPU: " + ", ".join(g.name for g in case.host.gpus))
    if dlopen:
        evidence.insert(0, dlopen.evidence())
    if no_gpu:
        evidence.append("tf.config.list_physical_devices('GPU') is [] (probe)")
    evidence.append("TensorFlow 2.16.1's wheels do not find the nvidia-* libraries they install (tensorflow/tensorflow#63362)")
    site = _site_packages(case)
    lib_dirs = sorted(d for d in case.env_dirs if "/site-packages/nvidia/" in d.replace("\\", "/"))
    if lib_dirs:
        export = "export LD_LIBRARY_PATH=" + ":".join(lib_dirs) + ":$LD_LIBRARY_PATH"
    else:
        base = site or "$(python -c 'import site; print(site.getsitepackages()[0])')"
        export = f"export LD_LIBRARY_PATH=$(echo {base}/nvidia/*/lib | tr ' ' ':'):$LD_LIBRARY_PATH"
    fix = [f"put the wheels' library directories on the loader path before starting Python: `{export}`, then check "
           "`python -c \"import tensorflow as tf; print(tf.config.list_physical_devices('GPU'))\"`"]
    if case.conda_env:
        fix.append("to keep it, write that export line to $CONDA_PREFIX/etc/conda/activate.d/env_vars.sh (run on "
                   "`conda activate`)")
    else:
        fix.append("to keep it, add that export line to the virtual environment's bin/activate")
    fix.append(NO_SYMLINK)
    return Finding(T4, "error", "TensorFlow 2.16.1 does not find the CUDA libraries its [and-cuda] extra installed",
                   tuple(evidence), tuple(fix), CONFIRMED if no_gpu and dlopen else PROVEN)


def _conda_lib_not_on_path(case: Case) -> Finding | None:
    """T5: the library TensorFlow cannot load is in the conda environment's lib/, which is not on the loader path."""
    hit = case.search(T5)
    if not case.linux:
        return None
    prefix = case.prefix or case.env_var("CONDA_PREFIX")
    if not prefix:
        return None
    lib = prefix.rstrip("/") + "/lib"
    listed = {**case.host.files, **case.env_dirs}
    tf = case.framework("tensorflow")
    if hit:
        soname = hit.text(1)
    else:
        # No message, only facts: TensorFlow lists no GPU while the environment's lib/ holds its CUDA runtime.
        cudart = sorted(n for n in listed.get(lib, []) if n.startswith("libcudart.so."))
        if not (cudart and case.conda_env and tf is not None and tf.import_ok and not tf.device_count):
            return None
        soname = cudart[-1]
    if soname not in listed.get(lib, []):
        return None
    ld_path = case.path_list("LD_LIBRARY_PATH")
    if any(d.rstrip("/") == lib for d in ld_path):
        return None  # on the path already: another cause (T1's)
    evidence = ([hit.evidence()] if hit else ["tf.config.list_physical_devices('GPU') is [] (probe)"]) + [f"{lib} holds {soname}" + (f" (conda: {', '.join(sorted(n for n in ('cudatoolkit', 'cudnn', 'cuda-cudart') if case.conda_build(n)))})"
                                                          if any(case.conda_build(n) for n in ("cudatoolkit", "cudnn", "cuda-cudart")) else ""),
                f"LD_LIBRARY_PATH={':'.join(ld_path) or '(empty)'}: the environment's lib/ is not on it, and conda activation "
                "does not add it"]
    version = tf_version(case)
    if version:
        evidence.append(f"tensorflow {version}")
    fix = ["activate the environment and put its lib/ on the loader path: `conda activate <env>` then "
           "`export LD_LIBRARY_PATH=$CONDA_PREFIX/lib/:$LD_LIBRARY_PATH` (TensorFlow's conda instructions)",
           "to keep it: `mkdir -p $CONDA_PREFIX/etc/conda/activate.d && echo 'export LD_LIBRARY_PATH=$CONDA_PREFIX/lib/:$LD_LIBRARY_PATH' "
           "> $CONDA_PREFIX/etc/conda/activate.d/env_vars.sh`", NO_SYMLINK]
    return Finding(T5, "error", f"{soname} is in the conda environment's lib/, which is not on the loader path",
                   tuple(evidence), tuple(fix), CONFIRMED if hit else PROVEN)
