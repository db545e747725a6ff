"""envpin's environment probe: run INSIDE the target interpreter, print one JSON document of EnvFacts.

    python probe.py [--timeout SECONDS] [--no-smoke]

Standard library only, Python >= 3.8: it must run in whatever environment the user points envpin at, so
it imports nothing of envpin's and nothing that needs installing. Each framework (torch, tensorflow,
jax) is imported in a child process of its own (`probe.py --child torch`) under a timeout: an import
that raises, hangs, or kills its process (a segfault, a Windows DLL initialisation failure) becomes a
report, never the end of the probe. The framework's own calls follow the failure catalogue's section 4.3:
torch.__version__, torch.version.cuda, torch.backends.cudnn.version(), torch.cuda.get_arch_list(),
torch.cuda.is_available() (whose warnings carry the driver's complaint; on a ROCm build torch.cuda is HIP, and
each device's gcnArchName is read), torch.xpu.is_available() and torch.backends.mps.is_available(), then on the
device the build has (cuda, xpu or mps) a tiny matmul and
convolution on the GPU when there is one, then the CUDA libraries mapped into the process.

The document is printed after a marker line, because imported packages may print to stdout too.
"""

import importlib.util
import json
import os
import re
import signal
import site
import subprocess
import sys
import time
import traceback
import warnings

MARKER = "@@envpin-probe@@"
PROBE_VERSION = 1
# The distributions that install each framework's module: envpin.vocabulary.frameworks.DISTRIBUTIONS, copied
# because this file cannot import envpin (tests/unit/test_vocabulary.py holds the two together).
FRAMEWORKS = {"torch": ("torch",), "tensorflow": ("tensorflow", "tensorflow-cpu", "tensorflow-gpu", "tensorflow-rocm",
                                                  "tf-nightly"),
              "jax": ("jax",)}
MAX_TEXT = 20000  # characters of an import error or log kept: the signature lines are at the end

# The libraries worth naming in /proc/self/maps and Windows module lists (catalogue section 4.3 step 7).
INTERESTING_LIBRARY = re.compile(
    r"(cuda|cudnn|cublas|cufft|curand|cusolver|cusparse|nvjitlink|nvrtc|nccl|nvidia|libcupti|nvtoolsext|"
    r"libstdc\+\+|msvcp140|vcruntime140|libomp|libiomp|zlibwapi|c10|torch_|xla_extension|libtensorflow|jaxlib)",
    re.IGNORECASE,
)
RUNTIME_FILE = re.compile(r"\.(so(\.\d+)*|dll|dylib)$", re.IGNORECASE)
CUDA_FILE = re.compile(
    r"(cuda|cudnn|cublas|cufft|curand|cusolver|cusparse|nvjitlink|nvrtc|nccl|cupti|nvtoolsext|nvjpeg|npp|nvvm|"
    r"zlibwapi|msvcp140|vcruntime140)",
    re.IGNORECASE,
)


# ---------------------------------------------------------------- the interpreter and its packages


def canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def python_facts():
    prefix = sys.prefix
    base_prefix = getattr(sys, "base_prefix", sys.prefix)
    if os.path.realpath(prefix) != os.path.realpath(base_prefix):
        env_type = "venv"
    elif os.path.isdir(os.path.join(prefix, "conda-meta")):
        env_type = "conda"
    else:
        env_type = "system"
    try:
        user_site = site.getusersitepackages() if site.ENABLE_USER_SITE else None
    except Exception:  # some embedded Pythons have no user site at all
        user_site = None
    return {
        "version": "%d.%d.%d" % sys.version_info[:3],
        "executable": sys.executable or None,
        "prefix": prefix,
        "base_prefix": base_prefix,
        "env_type": env_type,
        "bits": 64 if sys.maxsize > 2 ** 32 else 32,
        "implementation": sys.implementation.name,
        "virtual_env": os.environ.get("VIRTUAL_ENV") or None,
        "conda_prefix": os.environ.get("CONDA_PREFIX") or None,
        "user_site": user_site,
    }


def pip_packages():
    """Installed distributions, name -> version; the first on sys.path wins, as for `import`."""
    try:
        from importlib import metadata  # noqa: PLC0415 - Python < 3.8 has no importlib.metadata: the except below answers
    except ImportError:  # Python < 3.8 cannot run this file anyway
        return {}
    found = {}
    for dist in metadata.distributions():
        try:
            name = dist.metadata["Name"]
            version = dist.version
        except Exception:  # a broken .dist-info is a fact of its own, not a reason to stop
            continue
        if name and version and canonical(name) not in found:
            found[canonical(name)] = version
    return found


def conda_packages(prefix):
    """<prefix>/conda-meta/*.json, as `conda list` reads it: name -> version, build string, channel."""
    meta = os.path.join(prefix, "conda-meta")
    found = {}  # type: dict
    if not os.path.isdir(meta):
        return found
    for entry in sorted(os.listdir(meta)):
        if not entry.endswith(".json"):
            continue
        try:
            with open(os.path.join(meta, entry), encoding="utf-8") as handle:
                record = json.load(handle)
            found[canonical(record["name"])] = {
                "version": str(record["version"]),
                "build": record.get("build"),
                "channel": record.get("channel"),
            }
        except Exception:
            continue
    return found


def site_dirs():
    dirs = []
    try:
        dirs.extend(site.getsitepackages())
    except Exception:
        pass
    try:
        if site.ENABLE_USER_SITE:
            dirs.append(site.getusersitepackages())
    except Exception:
        pass
    dirs.extend(p for p in sys.path if p.endswith("site-packages"))
    unique = []
    for directory in dirs:
        if directory and os.path.isdir(directory) and directory not in unique:
            unique.append(directory)
    return unique


def library_dirs(prefix):
    """Directories inside the environment that hold CUDA runtime libraries, with what each holds:
    torch/lib (every DLL: the doctor models how Windows loads them), the pip nvidia-* wheels' lib and bin
    directories, and a conda prefix's lib / Library/bin."""
    listing = {}

    def add(directory, keep_everything):
        try:
            names = os.listdir(directory)
        except OSError:
            return
        kept = sorted(n for n in names if RUNTIME_FILE.search(n) and (keep_everything or CUDA_FILE.search(n)))
        if kept:
            listing[directory] = kept

    for packages in site_dirs():
        add(os.path.join(packages, "torch", "lib"), True)
        nvidia = os.path.join(packages, "nvidia")
        try:
            members = sorted(os.listdir(nvidia))
        except OSError:
            members = []
        for member in members:
            for sub in ("lib", "bin"):
                add(os.path.join(nvidia, member, sub), False)
    for parts in (("lib",), ("Library", "bin")):
        add(os.path.join(prefix, *parts), False)
    return listing


# ---------------------------------------------------------------- one framework, in a child process


def installed(framework, packages):
    if any(canonical(name) in packages for name in FRAMEWORKS[framework]):
        return True
    try:
        return importlib.util.find_spec(framework) is not None  # top-level: finds without importing
    except Exception:
        return False


def probe_framework(framework, timeout, smoke):
    """Run this file as `--child FRAMEWORK` in a fresh process; turn whatever happens into facts."""
    argv = [sys.executable, os.path.abspath(__file__), "--child", framework] + ([] if smoke else ["--no-smoke"])
    started = time.time()
    kwargs = {}  # type: dict
    if os.name == "posix":
        kwargs["start_new_session"] = True
    try:
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   **kwargs)
    except OSError as error:
        return failed("could not start %s to import %s: %s" % (sys.executable, framework, error))
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill(process)
        return failed("import %s did not finish within %g s (the import or CUDA initialisation hangs)"
                      % (framework, timeout), timed_out=True)
    out = stdout.decode("utf-8", "replace")
    err = stderr.decode("utf-8", "replace")
    report = parse_marked(out)
    if report is None:
        how = describe_exit(process.returncode)
        message = "import %s %s" % (framework, how)
        tail = err.strip()[-MAX_TEXT:]
        return failed(message + ("\n" + tail if tail else ""))
    report["seconds"] = round(time.time() - started, 2)
    log = [line for line in err.splitlines() if line.strip()]
    if log:
        report["warnings"] = (report.get("warnings") or []) + log[-40:]
    return report


def failed(message, timed_out=False):
    report = {"import_ok": False, "import_error": message}
    if timed_out:
        report["timed_out"] = True
    return report


def descendants(pid):
    """Every process below `pid`, from /proc/PID/task/TID/children (Linux); [] where /proc does not say."""
    found, queue = [], [pid]
    while queue:
        parent = queue.pop()
        try:
            tasks = os.listdir("/proc/%d/task" % parent)
        except OSError:
            continue
        for task in tasks:
            try:
                with open("/proc/%d/task/%s/children" % (parent, task)) as handle:
                    children = [int(word) for word in handle.read().split()]
            except (OSError, ValueError):
                continue
            for child in children:
                if child not in found and child != pid:
                    found.append(child)
                    queue.append(child)
    return found


def describe_exit(code):
    if code is None:
        return "did not finish"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = "signal %d" % -code
        return "killed its process with %s" % name
    if os.name == "nt" and code > 0x7FFFFFFF:  # NTSTATUS, e.g. 0xC0000005 access violation
        return "killed its process with status 0x%08X" % code
    return "ended its process with exit status %d before reporting" % code


def kill(process):
    """Kill an import child and everything below it: its process group and, on Linux, every descendant /proc
    lists (one that called setsid() has left the group)."""
    below = descendants(process.pid) if os.name == "posix" else []
    for pid in below:
        try:
            os.kill(pid, signal.SIGSTOP)  # stopped, it cannot fork before the kill
        except OSError:
            pass
    below += [pid for pid in descendants(process.pid) if pid not in below]
    try:
        if os.name == "posix":
            os.killpg(process.pid, 9)
        else:
            process.kill()
    except OSError:
        process.kill()
    for pid in below:
        try:
            os.kill(pid, 9)
        except OSError:
            pass
    try:
        process.communicate(timeout=5)
    except Exception:
        pass


def parse_marked(text):
    position = text.rfind(MARKER)
    if position < 0:
        return None
    try:
        return json.loads(text[position + len(MARKER):].strip().splitlines()[0])
    except (ValueError, IndexError):
        return None


def child(framework, smoke):
    """In the child: import the framework and learn what the catalogue's section 4.3 asks for."""
    report = {"import_ok": False}  # type: dict
    caught = []
    with warnings.catch_warnings(record=True) as recorded:
        warnings.simplefilter("always")
        try:
            learn = {"torch": learn_torch, "tensorflow": learn_tensorflow, "jax": learn_jax}[framework]
            learn(report, smoke)
        except BaseException:  # an import can raise anything, SystemExit included
            if not report.get("import_ok"):
                report["import_error"] = traceback.format_exc()[-MAX_TEXT:]
            else:
                report.setdefault("errors", []).append(traceback.format_exc()[-MAX_TEXT:])
        caught = ["%s: %s" % (w.category.__name__, w.message) for w in recorded]
    report["warnings"] = caught[-40:]
    report["loaded"] = loaded_libraries()
    sys.stdout.write("\n" + MARKER + json.dumps(report, ensure_ascii=True, default=str) + "\n")
    sys.stdout.flush()


def attempt(report, key, action):
    """One probe step: its value, or its error text under `key` in `errors` (the doctor reads it)."""
    try:
        return action()
    except BaseException as error:  # noqa: B036 - a broken CUDA stack raises odd things
        report.setdefault("errors", []).append("%s: %s: %s" % (key, type(error).__name__, error))
        return None


def learn_torch(report, smoke):
    import torch  # noqa: PLC0415 - the framework under test: imported only in its own child process

    report["import_ok"] = True
    report["version"] = str(torch.__version__)
    report["file"] = getattr(torch, "__file__", None)
    version = getattr(torch, "version", None)
    report["cuda"] = getattr(version, "cuda", None)
    report["hip"] = getattr(version, "hip", None)
    report["cudnn"] = attempt(report, "cudnn", lambda: torch.backends.cudnn.version())
    report["arch_list"] = attempt(report, "arch_list", lambda: list(torch.cuda.get_arch_list())) or []
    get_driver = getattr(torch._C, "_cuda_getDriverVersion", None)
    if get_driver is not None and report["cuda"]:
        report["driver_cuda"] = attempt(report, "driver_cuda", get_driver) or None
    report["is_available"] = attempt(report, "is_available", torch.cuda.is_available)
    report["device_count"] = attempt(report, "device_count", torch.cuda.device_count)
    devices = []
    for index in range(report["device_count"] or 0):
        name = attempt(report, "device_name", lambda: torch.cuda.get_device_name(index))  # noqa: B023 - attempt() calls it at once
        if report["hip"]:  # torch.cuda is HIP here: the device's target is its gcnArchName, not a capability
            arch = attempt(report, "device_gfx", lambda: torch.cuda.get_device_properties(index).gcnArchName)  # noqa: B023 - attempt() calls it at once
            devices.append({"name": name or "GPU %d" % index, "compute_capability": None,
                            "gfx": str(arch).split(":")[0] if arch else None})
            continue
        capability = attempt(report, "device_capability", lambda: torch.cuda.get_device_capability(index))  # noqa: B023 - attempt() calls it at once
        devices.append({"name": name or "GPU %d" % index,
                        "compute_capability": "%d.%d" % tuple(capability) if capability else None})
    report["devices"] = devices
    xpu_available = getattr(getattr(torch, "xpu", None), "is_available", None)
    report["xpu_available"] = attempt(report, "xpu_available", xpu_available) if xpu_available else None
    mps_available = getattr(getattr(getattr(torch, "backends", None), "mps", None), "is_available", None)
    report["mps_available"] = attempt(report, "mps_available", mps_available) if mps_available else None
    # torch.cuda on a CUDA or a HIP (ROCm) build, else Intel's xpu, else Apple's mps: the device the build has
    device = "cuda" if report["is_available"] else "xpu" if report["xpu_available"] else "mps" if report["mps_available"] else None
    if device and smoke:
        report["smoke"] = {
            "matmul": smoke_test(lambda: torch_matmul(torch, device)),
            "conv2d": smoke_test(lambda: torch_conv(torch, device)),
        }


def torch_matmul(torch, device="cuda"):
    a = torch.ones((64, 64), device=device)
    value = float(torch.matmul(a, a).sum().item())  # every entry of a@a is 64: cuBLAS ran and gave the right answer
    if value != 64.0 * 64 * 64:
        raise AssertionError("ones(64,64) @ ones(64,64) summed to %r, not 262144" % value)


def torch_conv(torch, device="cuda"):
    x = torch.ones((1, 1, 8, 8), device=device)
    w = torch.ones((1, 1, 3, 3), device=device)
    value = float(torch.nn.functional.conv2d(x, w).sum().item())  # 36 outputs of 9 each: cuDNN ran
    if value != 36.0 * 9:
        raise AssertionError("conv2d of ones summed to %r, not 324" % value)


def smoke_test(action):
    try:
        action()
        return "ok"
    except BaseException as error:  # noqa: B036
        return "%s: %s" % (type(error).__name__, error)


def learn_tensorflow(report, smoke):
    import tensorflow as tf  # noqa: PLC0415 - the framework under test: imported only in its own child process

    report["import_ok"] = True
    report["version"] = str(tf.__version__)
    report["file"] = getattr(tf, "__file__", None)
    info = attempt(report, "build_info", lambda: dict(tf.sysconfig.get_build_info())) or {}
    report["cuda"] = info.get("cuda_version") if info.get("is_cuda_build") else None
    report["cudnn"] = info.get("cudnn_version") if info.get("is_cuda_build") else None
    report["arch_list"] = [str(a) for a in info.get("cuda_compute_capabilities") or []]
    gpus = attempt(report, "list_physical_devices", lambda: tf.config.list_physical_devices("GPU")) or []
    report["device_count"] = len(gpus)
    report["is_available"] = bool(gpus)
    devices = []
    for gpu in gpus:
        details = attempt(report, "device_details", lambda: tf.config.experimental.get_device_details(gpu)) or {}  # noqa: B023 - attempt() calls it at once
        capability = details.get("compute_capability")
        devices.append({"name": details.get("device_name") or gpu.name,
                        "compute_capability": "%d.%d" % tuple(capability) if capability else None})
    report["devices"] = devices
    if gpus and smoke:

        def matmul():
            with tf.device("/GPU:0"):
                a = tf.ones((64, 64))
                value = float(tf.reduce_sum(tf.matmul(a, a)).numpy())
            if value != 64.0 * 64 * 64:
                raise AssertionError("ones(64,64) @ ones(64,64) summed to %r, not 262144" % value)

        report["smoke"] = {"matmul": smoke_test(matmul)}


def learn_jax(report, smoke):
    import jax  # noqa: PLC0415 - the framework under test: imported only in its own child process

    report["import_ok"] = True
    report["version"] = str(jax.__version__)
    report["file"] = getattr(jax, "__file__", None)
    devices = attempt(report, "devices", jax.devices) or []
    gpus = [d for d in devices if getattr(d, "platform", "") in ("gpu", "cuda")]
    report["device_count"] = len(gpus)
    report["is_available"] = bool(gpus)
    report["devices"] = [
        {"name": getattr(d, "device_kind", str(d)),
         "compute_capability": getattr(d, "compute_capability", None)}
        for d in gpus
    ]
    if gpus and smoke:

        def matmul():
            import jax.numpy as jnp  # noqa: PLC0415 - jax's numpy, only for the smoke test

            a = jax.device_put(jnp.ones((64, 64)), gpus[0])
            value = float(jnp.matmul(a, a).sum())
            if value != 64.0 * 64 * 64:
                raise AssertionError("ones(64,64) @ ones(64,64) summed to %r, not 262144" % value)

        report["smoke"] = {"matmul": smoke_test(matmul)}


# ---------------------------------------------------------------- loaded libraries


def loaded_libraries():
    """CUDA / cuDNN / NVIDIA / C++ runtime libraries mapped into this process, in load order."""
    try:
        if sys.platform.startswith("linux"):
            return linux_loaded()
        if os.name == "nt":
            return windows_loaded()
    except Exception:
        return []
    return []


def linux_loaded():
    paths = []
    with open("/proc/self/maps", encoding="utf-8", errors="replace") as handle:
        for line in handle:
            parts = line.split(None, 5)
            if len(parts) == 6:
                path = parts[5].strip()
                if path.startswith("/") and INTERESTING_LIBRARY.search(os.path.basename(path)) and path not in paths:
                    paths.append(path)
    return paths


def windows_loaded():
    if sys.platform != "win32":  # loaded_libraries calls it on Windows only (os.name == "nt")
        return []
    import ctypes  # noqa: PLC0415 - Windows only (WinDLL)
    from ctypes import wintypes  # noqa: PLC0415 - Windows only

    psapi = ctypes.WinDLL("psapi")
    kernel32 = ctypes.WinDLL("kernel32")
    kernel32.GetCurrentProcess.restype = wintypes.HANDLE
    process = kernel32.GetCurrentProcess()
    modules = (wintypes.HMODULE * 4096)()
    needed = wintypes.DWORD()
    if not psapi.EnumProcessModules(process, modules, ctypes.sizeof(modules), ctypes.byref(needed)):
        return []
    paths = []
    buffer = ctypes.create_unicode_buffer(32768)
    for handle in modules[: needed.value // ctypes.sizeof(wintypes.HMODULE)]:
        if kernel32.GetModuleFileNameW(wintypes.HMODULE(handle), buffer, 32768):
            path = buffer.value
            if INTERESTING_LIBRARY.search(os.path.basename(path)):
                paths.append(path)
    return paths


# ---------------------------------------------------------------- main


def main(argv):
    if sys.version_info < (3, 8):  # importlib.metadata, which lists the packages, arrived in 3.8
        error = "envpin's probe needs Python >= 3.8; %s is Python %d.%d.%d" % ((sys.executable,) + tuple(sys.version_info[:3]))
        sys.stdout.write("\n" + MARKER + json.dumps({"error": error}) + "\n")
        return 3
    smoke = "--no-smoke" not in argv
    if "--child" in argv:
        child(argv[argv.index("--child") + 1], smoke)
        return 0
    timeout = float(argv[argv.index("--timeout") + 1]) if "--timeout" in argv else 120.0
    notes = []  # type: list
    python = python_facts()
    packages = pip_packages()
    document = {
        "probe": {"version": PROBE_VERSION},
        "python": python,
        "packages": {"pip": packages, "conda": conda_packages(sys.prefix)},
        "library_dirs": library_dirs(sys.prefix),
    }
    for framework in FRAMEWORKS:
        if installed(framework, packages):
            document[framework] = probe_framework(framework, timeout, smoke)
        else:
            document[framework] = None
    document["notes"] = notes
    sys.stdout.write("\n" + MARKER + json.dumps(document, ensure_ascii=True, default=str) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
