"""WSL2 and containers (catalogue §2.2: L7–L10).

WSL2 gets the Windows driver's user-mode CUDA libraries in /usr/lib/wsl/lib; nothing Linux-side may replace
them (NVIDIA's CUDA on WSL user guide). A container sees the host's driver only when the NVIDIA Container
Toolkit passes it in; `envpin detect` notes when it runs in a container without one.
"""

from __future__ import annotations

from envpin.doctor.model import CONFIRMED, LIKELY, MATCHED, PROVEN, Case, Finding, version_tuple
from envpin.vocabulary.variants import CUDA, kind_of

L7, L8, L9, L10 = ("WSL-LIBCUDA-UNVERSIONED", "WSL-LINUX-DRIVER-INSTALLED", "CONTAINER-GPU-NOT-PASSED",
                   "CONTAINER-FWD-COMPAT-804")
WSL_LIB = "/usr/lib/wsl/lib"
NO_LINUX_DRIVER = "do not install a Linux NVIDIA driver (or the `cuda` meta-package, which pulls `cuda-drivers`) inside WSL"


def findings(case: Case) -> list[Finding]:
    return [f for f in (_libcuda_unversioned(case), _linux_driver_in_wsl(case), _gpu_not_passed(case), _forward_compat(case)) if f]


def _wsl_files(case: Case) -> list[str] | None:
    return next((names for d, names in case.host.files.items() if d.rstrip("/").endswith(WSL_LIB)), None)


def _libcuda_unversioned(case: Case) -> Finding | None:
    hit = case.search(L7)
    if not hit:
        return None
    evidence = [hit.evidence()]
    if case.host.wsl:
        evidence.append("this is WSL2: the driver's libcuda lives in /usr/lib/wsl/lib")
    ld_path = case.path_list("LD_LIBRARY_PATH")
    if case.host.wsl and not any(d.rstrip("/") == WSL_LIB for d in ld_path):
        evidence.append(f"{WSL_LIB} is not on LD_LIBRARY_PATH ({':'.join(ld_path) or 'empty'})")
    files = _wsl_files(case)
    if files is not None:
        evidence.append(f"{WSL_LIB} holds {', '.join(files) or 'nothing envpin looks for'}"
                        + ("" if "libcuda.so" in files else ": no unversioned libcuda.so, which cuDNN 8 dlopens"))
    return Finding(L7, "error", "the unversioned libcuda.so is not found (WSL2)", tuple(evidence),
                   (f"`export LD_LIBRARY_PATH={WSL_LIB}:$LD_LIBRARY_PATH` (add it to ~/.bashrc)",
                    f"or repair the links: `sudo ldconfig` after making {WSL_LIB}/libcuda.so and libcuda.so.1 symbolic links "
                    "to libcuda.so.1.1 (ldconfig says 'is not a symbolic link' when they are copies)", NO_LINUX_DRIVER),
                   CONFIRMED if case.host.wsl else MATCHED)


def _linux_driver_in_wsl(case: Case) -> Finding | None:
    hit = case.search(L8)
    foreign = [d for d, names in case.host.files.items()
               if case.host.wsl and not d.rstrip("/").endswith(WSL_LIB) and any(n.startswith("libcuda.so") for n in names)]
    if not hit and not foreign:
        return None
    evidence = ([hit.evidence()] if hit else []) + [f"{d} holds a libcuda.so: a Linux driver's copy beside WSL's" for d in foreign]
    return Finding(L8, "error" if hit else "warning", "a Linux NVIDIA driver was installed inside WSL", tuple(evidence),
                   ("purge the Linux driver packages inside WSL: `sudo apt purge 'nvidia-driver-*' 'libnvidia-*' cuda-drivers`",
                    "install only `cuda-toolkit-12-x` from NVIDIA's WSL-Ubuntu repository, never `cuda`",
                    "update the driver on the Windows side: it is the only GPU driver WSL uses"),
                   CONFIRMED if hit and foreign else MATCHED if hit else LIKELY)


def _gpu_not_passed(case: Case) -> Finding | None:
    hit = case.search(L9)
    container_note = next((n for n in case.host.notes if "running in a container" in n), None)
    trouble = case.host.driver_trouble
    gpu_on_host = trouble is not None and trouble.state == "container-without-gpu"  # the GPU is on the PCI bus in here
    cuda_build = bool(case.torch and case.torch.cuda) or kind_of(case.local_tag("torch")) == CUDA
    if hit and not container_note and not gpu_on_host and "nvidia-container-cli" not in hit.line:
        return None  # outside a container the same words are DRV-NOT-FOUND's
    if not hit and not gpu_on_host and not (container_note and not case.nvidia and cuda_build):
        return None
    evidence = ([hit.evidence()] if hit else []) + ([f"envpin detect: {container_note}"] if container_note else [])
    if trouble is not None and gpu_on_host:
        evidence += [f"envpin detect: {sign}" for sign in trouble.evidence]
    evidence.append(case.driver_line)
    return Finding(L9, "error", "the container was started without the GPU", tuple(evidence),
                   ("on the host: install the NVIDIA Container Toolkit and restart the container with `--gpus all` "
                    "(Compose: `deploy.resources.reservations.devices`, Kubernetes: the NVIDIA device plugin)",
                    "check the host first: `docker run --rm --gpus all nvidia/cuda:12.4.1-base-ubuntu22.04 nvidia-smi`",
                    "the image must not ship its own libcuda.so; the toolkit mounts the host's"),
                   CONFIRMED if hit and (container_note or gpu_on_host) else MATCHED if hit else PROVEN if gpu_on_host else LIKELY)


def _forward_compat(case: Case) -> Finding | None:
    hit = case.search(L10)
    if not hit:
        return None
    evidence = [hit.evidence(), case.driver_line]
    cuda = case.torch.cuda if case.torch and case.torch.cuda else None
    driver_cuda = case.host.driver.cuda if case.host.driver else None
    if cuda and driver_cuda and version_tuple(driver_cuda) < version_tuple(cuda):
        evidence.append(f"the build's CUDA {cuda} is newer than the driver's {driver_cuda}: the image's cuda-compat "
                        "(forward compatibility) libraries were tried")
    consumer = [g.name for g in case.host.gpus if any(w in g.name for w in ("GeForce", "RTX", "Quadro", "TITAN"))]
    if consumer:
        evidence.append(f"{consumer[0]} is not a data-center GPU: forward compatibility works only on those")
    return Finding(L10, "error", "CUDA forward compatibility is not supported on this GPU (error 804)", tuple(evidence),
                   ("upgrade the host driver to one that supports the image's CUDA (nvidia-smi's 'CUDA Version' ≥ the image's)",
                    "or use an image / wheel built for the CUDA the host driver supports"),
                   CONFIRMED if consumer or (cuda and driver_cuda) else MATCHED)
