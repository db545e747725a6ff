"""Driver and kernel module (catalogue §2.3, D1–D7).

D1 decodes torch's "found version N": N is cudaDriverGetVersion, 1000·major + 10·minor, so 11040 is CUDA 11.4
(catalogue §3.1). Whether a driver runs a build is the database's question (NVIDIA's minor-version
compatibility, `envpin.compat.drivers.minimum_driver`), so D1 is also predicted from facts alone: a CUDA
build of torch whose CUDA needs a newer driver than the machine has.
"""

from __future__ import annotations

from envpin.compat.drivers import driver_at_least, minimum_driver
from envpin.doctor.fixes import install_fix
from envpin.doctor.model import CONFIRMED, LIKELY, MATCHED, PROVEN, Case, Finding, Fix, version_tuple
from envpin.facts.host import decode_driver_cuda
from envpin.vocabulary.variants import cuda_of

D1, D2, D3, D4, D5, D6, D7, D8, D9, D10 = (
    "DRV-TOO-OLD-FOR-TORCH-WHEEL", "DRV-INSUFFICIENT-FOR-RUNTIME", "DRV-NOT-FOUND", "DRV-NVML-VERSION-MISMATCH",
    "DRV-KERNEL-MODULE-NOT-LOADED", "DRV-UVM-STATE-LOST", "DRV-PTX-NEWER-THAN-DRIVER", "DRV-NO-DEVICES",
    "DRV-NVML-UNKNOWN-ERROR", "DRV-GPU-WITHOUT-DRIVER",
)


def findings(case: Case) -> list[Finding]:
    rules = (_too_old_for_torch, _insufficient_for_runtime, _not_found, _nvml_mismatch, _module_not_loaded,
             _uvm_lost, _ptx_newer, _no_devices, _nvml_unknown, _gpu_without_driver)
    return [f for f in (rule(case) for rule in rules) if f]


def trouble_evidence(case: Case, state: str, legacy_note: str) -> list[str]:
    """What `envpin detect` recorded for this state: its typed driver_trouble (and the signs of the GPU), or, in an
    older facts file, a note with the same words."""
    trouble = case.host.driver_trouble
    if trouble is not None and trouble.state == state:
        return [f"envpin detect: {trouble.message}"] + [f"envpin detect: {sign}" for sign in trouble.evidence]
    note = next((n for n in case.host.notes if legacy_note.lower() in n.lower()), None)
    return [f"envpin detect: {note}"] if note else []


def torch_cuda(case: Case) -> str | None:
    """The CUDA torch was built with: the probe's torch.version.cuda, else the local tag (+cu124 -> 12.4)."""
    torch = case.torch
    if torch is not None and torch.cuda:
        return torch.cuda
    tag = case.local_tag("torch") or ""
    cuda = cuda_of(tag)
    if cuda:
        return cuda
    if tag or torch is not None and torch.import_ok:
        return None  # +cpu / +rocm, or a probe that saw torch.version.cuda None
    release = case.release("torch")
    record = case.database.torch_release(str(release)) if release else None
    variant = record.variants.get(record.pypi.get(case.platform, "")) if record else None
    return variant.cuda if variant else None  # PyPI's own wheel for this platform (database)


def driver_gap(case: Case, cuda: str) -> tuple[str | None, str | None]:
    """(the minimum driver for CUDA `cuda` on this OS, the rule's words) from the database."""
    requirement = minimum_driver(case.database, cuda, case.driver_os, "minor")  # "12": a CUDA 12 build of unknown minor
    return (requirement.minimum, requirement.rule) if requirement else (None, None)


def upgrade_line(minimum: str, cuda: str) -> str:
    return (f"upgrade the NVIDIA driver to {minimum} or newer (the minimum for CUDA {cuda} builds; a current "
            "production branch such as R550+ is the usual choice) and reboot")


def _too_old_for_torch(case: Case) -> Finding | None:
    hit = case.search(D1)
    cuda = torch_cuda(case)
    evidence = [hit.evidence()] if hit else []
    if hit:
        found = int(hit.text(1))
        evidence.append(f"found version {found} is the CUDA version the driver supports, 1000·major + 10·minor: "
                        f"CUDA {decode_driver_cuda(found)}")
    if cuda:
        evidence.append(f"torch {case.package('torch') or ''} is built with CUDA {cuda}".replace("  ", " "))
    minimum, rule = driver_gap(case, cuda) if cuda else (None, None)
    too_old = bool(minimum and case.host.driver and not driver_at_least(case.host.driver.version, minimum))
    if case.host.driver:
        evidence.append(case.driver_line)
    if minimum:
        evidence.append(f"CUDA {cuda} builds need driver ≥ {minimum} ({rule}, database {case.database.version})")
    if not hit and not too_old:
        return None
    fix = [upgrade_line(minimum, cuda)] if minimum and cuda else ["upgrade the NVIDIA driver to one that supports the build's CUDA"]
    fix.append("or keep the driver and install a torch build for the CUDA it supports: " + " — ".join(install_fix(case)))
    title = "the NVIDIA driver is too old for this torch build"
    if hit and too_old:
        return Finding(D1, "error", title, tuple(evidence), tuple(fix), CONFIRMED)
    if hit:
        return Finding(D1, "error", title, tuple(evidence), tuple(fix), MATCHED)
    return Finding(D1, "error", title + " (torch.cuda will not initialise)", tuple(evidence), tuple(fix), PROVEN)


def _insufficient_for_runtime(case: Case) -> Finding | None:
    hit = case.search(D2)
    if not hit:
        return None
    evidence = [hit.evidence(), case.driver_line]
    driver = case.host.driver
    if driver is None or not case.host.gpus:  # not case.nvidia, or no GPU
        evidence.append("no NVIDIA GPU/driver: the CUDA runtime has no driver to run on (e.g. an Intel iGPU laptop)")
        return Finding(D2, "error", "a CUDA library runs on a machine without a usable NVIDIA driver", tuple(evidence),
                       (Fix("use the library's CPU build (or device 'cpu'); CUDA needs an NVIDIA GPU and its driver", "no-nvidia-gpu"),
                        Fix("an NVIDIA GPU is named or shows here: install (or repair) its driver, then check with `nvidia-smi`",
                            "nvidia-gpu")),
                       CONFIRMED)
    cuda = torch_cuda(case)
    if cuda:
        minimum, rule = driver_gap(case, cuda)
        if minimum:
            evidence.append(f"torch's CUDA {cuda} needs driver ≥ {minimum} ({rule})")
    fix = ["upgrade the NVIDIA driver to one whose CUDA (nvidia-smi's 'CUDA Version') is at least the library's",
           "or install the library's build for the CUDA this driver supports"
           + (f" (driver supports CUDA ≤ {driver.cuda})" if driver.cuda else "")]
    return Finding(D2, "error", "the driver's CUDA is older than the CUDA runtime a library was built with",
                   tuple(evidence), tuple(fix), MATCHED)


def _not_found(case: Case) -> Finding | None:
    hit = case.search(D3)
    if not hit:
        return None
    evidence = [hit.evidence(), case.driver_line]
    if case.nvidia:
        evidence.append("envpin does find a driver here: the failing program ran somewhere else (a container, WSL, "
                        "a remote kernel) or with a broken library path")
        return Finding(D3, "error", "the program found no NVIDIA driver, though this machine has one", tuple(evidence),
                       ("run the program where envpin ran, or pass the GPU into its container (`--gpus all`)",), LIKELY)
    if not case.host.gpus:
        evidence.append("no NVIDIA GPU was detected either (NVML, nvidia-smi and /proc/driver/nvidia found nothing)")
    notes = [n for n in case.host.notes if "NVIDIA" in n or "nvidia" in n]
    evidence += notes[:2]
    return Finding(D3, "error", "no NVIDIA driver: CUDA cannot be used on this machine", tuple(evidence),
                   (Fix("with an NVIDIA GPU: install the NVIDIA driver (and reboot), then check with `nvidia-smi`", "nvidia-gpu"),
                    "without one: run on the CPU and select the device in code "
                    "(`device = 'cuda' if torch.cuda.is_available() else 'cpu'`); Colab: pick a GPU runtime"),
                   CONFIRMED)


def _nvml_mismatch(case: Case) -> Finding | None:
    hit = case.search(D4)
    detected = trouble_evidence(case, "driver-library-mismatch", "version mismatch")
    if not hit and not detected:
        return None
    evidence = ([hit.evidence()] if hit else []) + detected
    library = case.search_pattern(r"NVML library version: (\d+\.\d+)")
    module = case.host.driver if case.host.driver and case.host.driver.source in ("procfs", "sysfs") else None
    if library and module:
        evidence.append(f"the libraries are {library.text(1)}, the loaded kernel module {module.version} "
                        f"(/{'proc/driver/nvidia' if module.source == 'procfs' else 'sys/module/nvidia'}/version)")
    return Finding(D4, "error", "the loaded NVIDIA kernel module and the user-space driver libraries differ", tuple(evidence),
                   ("reboot, so the kernel module of the installed driver is loaded (the usual cause: the driver packages were "
                    "upgraded, e.g. by unattended-upgrades, while the old module stayed loaded)",
                    "if it persists after the reboot: reinstall the driver so its module and libraries match (remove every other "
                    "driver version first: `sudo apt purge 'nvidia-*' 'libnvidia-*'`, then install one `nvidia-driver-XXX`)",
                    "or, with no GPU process running: `sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia && sudo modprobe nvidia`",
                    "hold the driver packages (`sudo apt-mark hold 'nvidia-*'`) to keep it from happening again"),
                   CONFIRMED if hit and detected else MATCHED if hit else PROVEN)


def _module_not_loaded(case: Case) -> Finding | None:
    hit = case.search(D5)
    detected = trouble_evidence(case, "module-not-loaded", "couldn't communicate with the NVIDIA driver")
    if not hit and not detected:
        return None
    evidence = ([hit.evidence()] if hit else []) + detected
    fix = ["after a kernel update: install the headers and rebuild the module (`sudo apt install linux-headers-$(uname -r) "
           "&& sudo dkms autoinstall`), then reboot",
           "with Secure Boot on (`mokutil --sb-state`): enroll the driver's MOK key or use a signed driver package",
           "check `lsmod | grep nvidia` and `dmesg | grep -i nvidia` for the reason (nouveau holding the GPU: blacklist it)"]
    nouveau = case.search_pattern(r"NVRM: The NVIDIA probe routine was not called|nouveau[^\n]*was loaded and obtained ownership|"
                                  r"obtained ownership of the NVIDIA device")
    if nouveau:  # the kernel log names the cause: another driver (nouveau) took the GPU first
        evidence.append(f"{nouveau.source}: {nouveau.line} (the kernel log: nouveau or another driver holds the GPU)")
        fix.insert(0, "nouveau holds the GPU: blacklist it (`echo 'blacklist nouveau' | sudo tee /etc/modprobe.d/blacklist-nouveau.conf "
                      "&& sudo update-initramfs -u`) and reboot, so the NVIDIA module can take the device")
    return Finding(D5, "error", "the NVIDIA kernel module is not loaded", tuple(evidence), tuple(fix),
                   CONFIRMED if hit and (detected or nouveau) else MATCHED if hit else PROVEN)


def _no_devices(case: Case) -> Finding | None:
    hit = case.search(D8)
    detected = trouble_evidence(case, "no-devices", "No devices were found")
    if not hit and not detected:
        return None
    evidence = ([hit.evidence()] if hit else []) + detected
    gpu = case.gpu_in_text
    return Finding(D8, "error", "the NVIDIA driver is loaded but initialised no GPU (No devices were found)", tuple(evidence),
                   ("read the reason in the kernel log: `sudo dmesg | grep -i NVRM` (\"RmInitAdapter failed\" means the GPU did "
                    "not initialise)",
                    "a new card (RTX 50 series" + (f", {gpu}" if gpu else "") + "): enable Above 4G Decoding and Resizable BAR "
                    "in the BIOS, and use a driver whose release notes list the card",
                    "a driver older than the card, or one just downgraded: install a driver that lists the GPU and reboot",
                    "a laptop with hybrid graphics: select the NVIDIA GPU (`sudo prime-select nvidia`) and reboot; a VM: the GPU "
                    "must be passed through to it"),
                   CONFIRMED if hit and detected else MATCHED if hit else PROVEN)


def _nvml_unknown(case: Case) -> Finding | None:
    hit = case.search(D9)
    detected = trouble_evidence(case, "nvml-error", "Failed to initialize NVML: Unknown Error")
    if not hit and not detected:
        return None
    evidence = ([hit.evidence()] if hit else []) + detected
    container = case.in_container or case.search_pattern(r"docker|container|kubernetes|pod\b") is not None
    fix = ["restart the container: its access to the GPU device files was reset (on the host, `systemctl daemon-reload` "
           "and package updates that run it do this to running containers)"] if container else []
    fix += ["keep it from happening again: start the container with the device files given explicitly "
            "(`--device /dev/nvidiactl --device /dev/nvidia0 --device /dev/nvidia-uvm --device /dev/nvidia-uvm-tools`, "
            "as in NVIDIA/nvidia-container-toolkit#817)",
            "on the host itself (no container): reboot, then check `nvidia-smi` and `dmesg | grep -i NVRM`"]
    return Finding(D9, "error", "NVML cannot reach the GPU (Failed to initialize NVML: Unknown Error)", tuple(evidence),
                   tuple(fix), CONFIRMED if hit and detected else MATCHED if hit else PROVEN)


def _gpu_without_driver(case: Case) -> Finding | None:
    trouble = case.host.driver_trouble
    if trouble is None or trouble.state not in ("no-driver", "tool-failed", "wsl-driver-unreachable"):
        return None
    evidence = [f"envpin detect: {trouble.message}"] + [f"envpin detect: {sign}" for sign in trouble.evidence]
    if trouble.state == "wsl-driver-unreachable":
        fix: tuple[str, ...] = ("update the NVIDIA driver on the Windows side (WSL2 uses only that driver) and run `wsl --update`, "
                                "then `wsl --shutdown` and start WSL again", NO_LINUX_DRIVER_IN_WSL)
        title = "WSL2 has the Windows NVIDIA driver's libraries, but the driver does not answer"
    elif trouble.state == "tool-failed":
        fix = ("run `nvidia-smi` yourself and read its message; `envpin doctor --error-text -` with it names the state",
               "reinstall the NVIDIA driver (the same version), then reboot")
        title = "the NVIDIA driver is installed but does not answer"
    else:
        fix = ("install the NVIDIA driver for this GPU (Ubuntu: `sudo ubuntu-drivers install`; others: the distribution's "
               "nvidia driver package or NVIDIA's installer) and reboot",
               "if nouveau holds the GPU (`lspci -k` says \"Kernel driver in use: nouveau\"), the NVIDIA driver's package "
               "blacklists it; reboot after installing",
               "without a driver this machine can only run CPU builds: `envpin solve --driver none` asks for them on purpose")
        title = "an NVIDIA GPU is on the PCI bus, but no NVIDIA driver is loaded"
    return Finding(D10, "error", title, tuple(evidence), fix, PROVEN)


NO_LINUX_DRIVER_IN_WSL = "do not install a Linux NVIDIA driver inside WSL2: it hides the Windows driver's libraries"


def _uvm_lost(case: Case) -> Finding | None:
    hit = case.search(D6)
    if not hit:
        return None
    evidence = [hit.evidence(), case.driver_line]
    if case.nvidia:
        evidence.append("the driver answers (nvidia-smi / NVML work) while CUDA fails to initialise: the nvidia_uvm state")
    evidence.append("the message's CUDA_VISIBLE_DEVICES hint is usually a red herring")
    return Finding(D6, "error", "CUDA cannot initialise: the nvidia_uvm module lost its state (often after suspend/resume)",
                   tuple(evidence),
                   ("`sudo rmmod nvidia_uvm && sudo modprobe nvidia_uvm` (or `sudo nvidia-modprobe -u -c 0`); reboot if that fails",
                    "in rootless/podman containers, make sure /dev/nvidia-uvm and /dev/nvidia-uvm-tools are passed in"),
                   CONFIRMED if case.nvidia else MATCHED)


def _ptx_newer(case: Case) -> Finding | None:
    hit = case.search(D7)
    if not hit:
        return None
    evidence = [hit.evidence(), case.driver_line]
    newest = max(case.host.toolkits, key=lambda t: version_tuple(t.version), default=None)
    driver_cuda = case.host.driver.cuda if case.host.driver else None
    fix = []
    if newest:
        evidence.append(f"the newest CUDA toolkit here is {newest.version} ({newest.nvcc or newest.root})")
        toolkit = case.database.toolkits.get(".".join(newest.version.split(".")[:2]))
        needed = toolkit and (toolkit.driver_windows if case.windows else toolkit.driver_linux)
        if toolkit and needed:
            fix.append(f"upgrade the driver to ≥ {needed} (the CUDA {toolkit.version} toolkit's own driver): "
                       "minor-version compatibility does not cover PTX JIT")
        elif toolkit and ("windows" if case.windows else "linux") in toolkit.driver_not_read:
            fix.append(f"upgrade the driver to at least the CUDA {toolkit.version} toolkit's own (NVIDIA's CUDA "
                       f"{toolkit.version} release notes, Table 3; the database does not record it): minor-version "
                       "compatibility does not cover PTX JIT")
    if driver_cuda and newest and version_tuple(driver_cuda) < version_tuple(newest.version):
        evidence.append(f"driver CUDA {driver_cuda} < toolkit {newest.version}: PTX from this toolkit cannot be JIT-compiled")
    fix.append("or compile SASS for the GPU's exact arch (`-arch=sm_XY`, TORCH_CUDA_ARCH_LIST without +PTX) with a toolkit "
               f"no newer than the driver's CUDA{f' ({driver_cuda})' if driver_cuda else ''}")
    return Finding(D7, "error", "PTX was compiled by a newer CUDA than the driver can JIT", tuple(evidence), tuple(fix),
                   CONFIRMED if newest else MATCHED)
