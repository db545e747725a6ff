"""JAX (catalogue §2.8, J1–J4): CUDA libraries older than jaxlib's build, CPU-only installs, version lock-step.

jax, jaxlib and the CUDA plugins (`jax-cuda12-plugin`, `jax-cuda12-pjrt`) move in lock-step; the plugin's
CUDA library requirements come from the database (the `jax[cuda12]` extra's pins read from PyPI), so J1's
"which library is too old" is checked against them, not guessed.
"""

from __future__ import annotations

from envpin.doctor.fixes import install_fix
from envpin.doctor.model import CONFIRMED, LIKELY, MATCHED, PROVEN, Case, Finding, Fix, version_tuple

J1, J2, J3, J4, J5 = ("JAX-CUDA-LIB-OLDER-THAN-BUILD", "JAX-CPU-ONLY-INSTALL", "JAX-JAXLIB-TOO-OLD", "JAX-PLUGIN-MISMATCH",
                      "JAX-CUDA-UNLOADABLE")
PLUGINS = ("jax-cuda12-plugin", "jax-cuda12-pjrt", "jax-cuda13-plugin", "jax-cuda13-pjrt")


def findings(case: Case) -> list[Finding]:
    return [f for f in (_libs_older(case), _cpu_only(case), _jaxlib_old(case), _plugin_mismatch(case), _unloadable(case)) if f]


def conda_cuda_jaxlib(case: Case) -> str | None:
    """A conda-forge CUDA build of jaxlib (build string `cuda120py311…`): a CUDA jaxlib, whatever pip says."""
    build = case.conda_build("jaxlib") or ""
    return build if build.startswith("cuda") or "cuda" in build.split("_")[0] else None


CONDA_JAX = ("reinstall JAX from conda-forge as one set, in the environment: `conda install -c conda-forge \"jaxlib=*=*cuda*\" jax "
             "cuda-nvcc` (JAX's conda instructions); do not mix in pip's jax[cuda12]")


def _versions(case: Case) -> dict[str, str]:
    names = ("jax", "jaxlib") + PLUGINS
    return {name: version for name in names if (version := case.package(name))}


def _extra(case: Case):
    version = case.package("jax")
    release = next((r for r in case.database.jax_releases if str(r.version) == version), None) if version else None
    if release is None:
        return None
    for major in ("13", "12"):
        if case.package(f"jax-cuda{major}-plugin") and f"cuda{major}" in release.extras:
            return release.extras[f"cuda{major}"]
    return None


def _libs_older(case: Case) -> Finding | None:
    hit = case.search(J1) or case.search_pattern(r"Loaded runtime CuDNN library: ([\d.]+) but source was compiled with: ([\d.]+)")
    if not hit:
        return None
    evidence = [hit.evidence()]
    extra = _extra(case)
    stale = []
    if extra is not None:
        from packaging.specifiers import InvalidSpecifier, SpecifierSet  # noqa: PLC0415 - packaging.specifiers is heavy (~5 ms): only a pinned extra needs it

        for name, specifier in sorted(extra.pins.items()):
            installed = case.package(name)
            try:
                if installed and not SpecifierSet(specifier).contains(installed, prereleases=True):
                    stale.append((name, installed, specifier))
            except InvalidSpecifier:
                continue
        for name, installed, specifier in stale:
            evidence.append(f"{name} {installed} does not satisfy jax-cuda{extra.cuda_major}-plugin's {name}{specifier} (database)")
    torch = case.package("torch")
    if torch and any("cudnn" in name for name, _, _ in stale):
        evidence.append(f"torch {torch} in the same environment pins its own nvidia-cudnn version exactly")
    ld = case.path_list("LD_LIBRARY_PATH")
    if ld:
        evidence.append(f"LD_LIBRARY_PATH={':'.join(ld)} (searched before the wheels' own libraries)")
    fix = []
    if stale:
        fix.append(case.pip("install", *[f'"{name}{specifier}"' for name, _, specifier in stale]))
    else:
        fix.append(case.pip("install", "--upgrade", "nvidia-cudnn-cu12", "nvidia-cublas-cu12")
                   + " (to at least the versions jaxlib was built against)")
    if ld:
        fix.append("`unset LD_LIBRARY_PATH` so a system CUDA/cuDNN does not shadow the wheels")
    if torch:
        fix.append("if torch pins the older library, keep JAX and torch in separate environments, or pick a torch whose "
                   "pin satisfies JAX (`envpin solve --framework torch --framework jax` finds one)")
    return Finding(J1, "error", "a CUDA library older than the one jaxlib was built against is loaded", tuple(evidence),
                   tuple(fix), CONFIRMED if stale or ld else MATCHED)


def _cpu_only(case: Case) -> Finding | None:
    hit = case.search(J2)
    jax = case.framework("jax")
    conda_cuda = conda_cuda_jaxlib(case)
    conda_cpu = (case.conda_build("jaxlib") or "").startswith("cpu") or case.search_pattern(r"jaxlib-\S+-cpu_py\d+")
    if conda_cpu and not conda_cuda:
        evidence = ([hit.evidence()] if hit else [])
        shown = case.search_pattern(r"jaxlib-\S+-cpu_py\d+\w*")
        evidence.append(f"conda chose the CPU build of jaxlib: {shown.line if shown else case.conda_build('jaxlib')} "
                        "(a plain `conda install jax` may pick it; the CUDA builds' build strings start with cuda)")
        evidence.append(case.driver_line)
        return Finding(J2, "error" if case.nvidia or shown else "warning", "conda installed the CPU build of jaxlib",
                       tuple(evidence), (CONDA_JAX,), CONFIRMED if shown else PROVEN)
    has_plugin = any(case.package(name) for name in PLUGINS) or "+cuda" in (case.package("jaxlib") or "") or bool(conda_cuda)
    predicted = bool(case.package("jax") and case.env is not None and not has_plugin and case.nvidia and case.host.gpus)
    if not hit and not predicted:
        return None
    evidence = ([hit.evidence()] if hit else []) + ["installed: " + (", ".join(f"{n} {v}" for n, v in _versions(case).items()) or "?")]
    evidence.append(case.driver_line)
    if jax is not None and jax.import_ok:
        evidence.append(f"jax.devices() has {jax.device_count or 0} GPU(s) (probe)")
    fix: tuple[str, ...]
    if conda_cuda:
        evidence.append(f"jaxlib {case.package('jaxlib')} is conda-forge's CUDA build ({conda_cuda}), not a CPU build: "
                        "its CUDA backend did not load")
        return Finding(J2, "error", "conda-forge's CUDA jaxlib is installed, but JAX falls back to the CPU", tuple(evidence),
                       (CONDA_JAX, "check the CUDA packages beside it (`conda list cuda`): they must come from conda-forge "
                        "(or the nvidia channel) and match the jaxlib build's CUDA major"), MATCHED if hit else LIKELY)
    if case.windows:
        evidence.append("JAX has no NVIDIA GPU support on native Windows (docs.jax.dev installation table); WSL2 is experimental")
        fix = ("use Linux or WSL2 and install `jax[cuda12]` there",)
    else:
        earlier = case.search_pattern(r"Jax plugin configuration error[^\n]*")
        if earlier:
            evidence.append(f"an earlier plugin error: {earlier.line}")
        fix = pip_jax(case) + (("fix the earlier 'Jax plugin configuration error' first",) if earlier else ())
    return Finding(J2, "error" if case.nvidia else "warning", "only the CPU jaxlib is installed", tuple(evidence), fix,
                   CONFIRMED if hit and not has_plugin else MATCHED if hit else PROVEN)


def _jaxlib_old(case: Case) -> Finding | None:
    hit = case.search(J3)
    jax, jaxlib = case.package("jax"), case.package("jaxlib")
    behind = bool(jax and jaxlib and version_tuple(jaxlib) < version_tuple(jax)[:3] and version_tuple(jaxlib)[:2] != version_tuple(jax)[:2])
    if not hit and not behind:
        return None
    evidence = ([hit.evidence()] if hit else []) + ([f"jax {jax}, jaxlib {jaxlib}"] if jax else [])
    target = jax or (hit.group(2) if hit else "X")
    fix = [case.pip("install", f"jax=={target}", f"jaxlib=={target}") + " (and the CUDA plugins at the same version)",
           "install jax, jaxlib and the plugins together, never one alone"]
    if jax and version_tuple(jax) < (0, 4) and jaxlib:
        # Before 0.4 jax and jaxlib were numbered apart (jax 0.2.26 needs jaxlib 0.1.74): no jaxlib carries jax's number.
        required = hit.group(2) if hit else None
        local = jaxlib.split("+")[1] if "+" in jaxlib else None
        builds = [r for r in case.database.jaxlib_find_links if required and version_tuple(str(r.version)) >= version_tuple(required)]
        same_cuda = [r for r in builds if local in r.builds] if local else []
        if local and not same_cuda:
            # the CUDA build installed has no release at the required jaxlib (database): jax goes back, jaxlib stays
            evidence.append(f"no jaxlib ≥ {required} is built as +{local} (JAX's find-links releases, database "
                            f"{case.database.version}): a newer jaxlib would need another CUDA")
            fix = [f"keep jaxlib {jaxlib} and install an older jax, one that accepts it: "
                   + case.pip("install", f'"jax<{jax}"')
                   + " (if the message names a newer minimum again, go one jax release further back)",
                   f"or move to a CUDA build of jaxlib ≥ {required} for the CUDA this machine has, with jax to match "
                   "(`envpin solve --framework jax` pins both)"]
        else:
            pinned = f"jaxlib=={required}" + (f"+{local}" if local and same_cuda else "")
            fix = [case.pip("install", pinned) + (f" -f {same_cuda[-1].url}" if local and same_cuda else "")
                   + f" (jax {jax} needs jaxlib ≥ {required})", "install jax and jaxlib together, never one alone"]
    return Finding(J3, "error", "jaxlib is older than jax requires", tuple(evidence), tuple(fix),
                   CONFIRMED if hit and jax else MATCHED if hit else LIKELY)


def _plugin_mismatch(case: Case) -> Finding | None:
    hit = case.search(J4)
    versions = _versions(case)
    jaxlib = versions.get("jaxlib")
    off = {n: v for n, v in versions.items() if n in PLUGINS and jaxlib and version_tuple(v)[:3] != version_tuple(jaxlib)[:3]}
    if not hit and not off:
        return None
    evidence = ([hit.evidence()] if hit else []) + ["installed: " + ", ".join(f"{n} {v}" for n, v in versions.items())]
    crashed = case.framework("jax")
    if crashed and crashed.import_error and "killed its process" in crashed.import_error:
        evidence.append(f"import jax crashed: {crashed.import_error.splitlines()[0]} (newer plugins segfault instead of raising)")
    target = versions.get("jax") or jaxlib or "X"
    major = "13" if any("cuda13" in n for n in versions) else "12"
    return Finding(J4, "error", "the JAX CUDA plugin's version differs from jaxlib's", tuple(evidence),
                   (case.pip("install", f'"jax[cuda{major}]=={target}"') + f" (pins plugin == pjrt == jaxlib == {target})",
                    "`JAX_PLATFORMS=cpu` skips the GPU backend meanwhile"),
                   CONFIRMED if hit and off else MATCHED if hit else PROVEN)


def pip_jax(case: Case) -> tuple[str, ...]:
    """envpin's install fix for JAX, valid only where pip owns JAX (not over a conda-forge jaxlib)."""
    return tuple(Fix(line, "jax-from-pip") for line in install_fix(case, "jax")) + (Fix(CONDA_JAX, "conda-env"),)


def _unloadable(case: Case) -> Finding | None:
    """J5: jaxlib's CUDA backend could not load CUDA; a jaxlib for CUDA 11 on a CUDA 12 machine is the usual cause."""
    hit = case.search(J5)
    if not hit:
        return None
    versions = _versions(case)
    evidence = [hit.evidence()]
    if versions:
        evidence.append("installed: " + ", ".join(f"{n} {v}" for n, v in versions.items()))
    jaxlib = case.package("jaxlib") or ""
    cuda11 = "+cuda11" in jaxlib or any(n.startswith("jax-cuda11") for n in versions) or bool(
        case.search_pattern(r"jax\[cuda11(_local|_pip|_cudnn\d+)?\]|jaxlib==\S+\+cuda11"))
    host12 = bool(case.host.driver and version_tuple(case.host.driver.cuda)[:1] >= (12,)) or any(
        n.endswith("-cu12") for n in (case.env.packages.pip if case.env else {}))
    if cuda11:
        evidence.append("jaxlib is a CUDA 11 build (+cuda11 / jax[cuda11_*])")
    if host12:
        evidence.append(case.driver_line + ("; the environment's CUDA libraries are CUDA 12 wheels"
                                            if any(n.endswith("-cu12") for n in (case.env.packages.pip if case.env else {})) else ""))
    driver_below_12 = bool(case.host.driver and case.host.driver.cuda and version_tuple(case.host.driver.cuda)[:1] < (12,))
    fix: tuple[str, ...]
    if case.windows:
        fix = ("use Linux or WSL2 and install `jax[cuda12]` there",)
    elif cuda11 and not host12 and not driver_below_12:
        # JAX's CUDA 11 builds ended with 0.4.25 (its changelog); the CUDA 12 wheels carry their own CUDA libraries
        fix = (Fix(case.pip("install", "--upgrade", '"jax[cuda12]"') + " (replaces the CUDA 11 jaxlib with the CUDA 12 build; "
                   "needs a driver for CUDA 12)", "jax-from-pip"), Fix(CONDA_JAX, "conda-env"))
    else:
        fix = pip_jax(case)
    fix = fix + ("JAX's CUDA 12 wheels bring their own CUDA libraries: do not point LD_LIBRARY_PATH at a CUDA 11 toolkit",)
    title = ("jaxlib is a CUDA 11 build on a CUDA 12 machine: its CUDA backend cannot load" if cuda11 and host12
             else "JAX's CUDA backend could not load CUDA, so it runs on the CPU")
    return Finding(J5, "error", title, tuple(evidence), fix, CONFIRMED if cuda11 and host12 else MATCHED)
