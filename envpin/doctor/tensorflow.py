"""TensorFlow (catalogue §2.7 T1–T3, and its Windows rows W13, W14).

What a TensorFlow build expects comes from the database (TensorFlow's tested build configurations and the
`[and-cuda]` pins read from PyPI): the CUDA/cuDNN of the installed release, whether the release has the
`[and-cuda]` extra, and the conda packages native Windows ≤ 2.10 needs.
"""

from __future__ import annotations

from envpin.doctor.model import CONFIRMED, LIKELY, MATCHED, PROVEN, Case, Finding, version_tuple

T1, T2, T3, W13, W14 = ("TF-CUDA-SONAME-MISSING", "TF-CANNOT-DLOPEN-GPU-LIBS", "TF-CUDA-RUNTIME-NOT-INSTALLED",
                        "WIN-TF-CUDA11-DLL-MISSING", "WIN-TF-NATIVE-GPU-DROPPED")
NO_SYMLINK = "never symlink one CUDA major's library to another's soname (libcudart.so.12 -> .so.11): the ABI differs"


def findings(case: Case) -> list[Finding]:
    return [f for f in (_soname_missing(case), _cannot_dlopen(case), _runtime_not_installed(case), _windows_dlls(case),
                        _windows_gpu_dropped(case)) if f]


def tf_version(case: Case) -> str | None:
    return case.package("tensorflow") or case.package("tensorflow-cpu") or case.package("tensorflow-gpu")


def tf_release(case: Case):
    version = tf_version(case)
    if not version:
        return None
    wanted = version_tuple(version)[:3]
    return next((r for r in case.database.tensorflow_releases if version_tuple(str(r.version))[:3] == wanted), None)


def and_cuda_command(case: Case) -> str | None:
    release = tf_release(case)
    if release is None or release.and_cuda is None:
        return None
    return case.pip("install", f'"tensorflow[and-cuda]=={release.version}"')


def _tested(case: Case, platform: str) -> str | None:
    release = tf_release(case)
    gpu = release.gpu.get(platform) if release else None
    if gpu is None:
        return None
    return f"tensorflow {release.version} was tested with CUDA {gpu.cuda} and cuDNN {gpu.cudnn} (database {case.database.version})"


def _soname_missing(case: Case) -> Finding | None:
    hit = case.search(T1)
    if not hit:
        return None
    return Finding(T1, "error", f"TensorFlow cannot load {hit.group(1)}", tuple(_tf_evidence(case, [hit.evidence()])),
                   tuple(_tf_fixes(case)), CONFIRMED if tf_version(case) else MATCHED)


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
