"""The failure catalogue as code: each signature's row, id and error-text pattern.

The catalogue itself, with each signature's cause and the public reports it comes from, is the data file
beside this module, `failure_catalogue.yaml` (it ships in the wheel). The ids and patterns here are the
same as there; tests/unit/test_env_facts.py checks that they agree.

A finding's `id` is always one of these ids, so a user can look it up in the catalogue. Rows the catalogue
marks as fact rules (W14, C4) have no pattern; A2 shares A1's message and is told apart by the GPU's
capability; C2's pattern is a `conda list` line, matched against pasted `conda list` output.
"""

from __future__ import annotations

import re
from functools import cache

from envpin.base.record import Record, record


@record
class Signature(Record):
    row: str  # W1, L3, ...
    id: str
    pattern: str | None
    # The more generic findings this one refines: when both fire, this one is shown first (the catalogue's
    # `outranks`), whatever their likelihoods. Specificity is data, not the order the rules happen to run in.
    outranks: tuple[str, ...] = ()

    @property
    def group(self) -> str:
        return self.row[0]


# What a broken driver explains better than they do: no driver found, a CPU build "chosen", CUDA not starting.
BROKEN_DRIVER_REFINES = ("DRV-NOT-FOUND", "DRV-INSUFFICIENT-FOR-RUNTIME", "TORCH-CPU-WHEEL", "JAX-CPU-ONLY-INSTALL",
                         "TF-CUDA-RUNTIME-NOT-INSTALLED")

SIGNATURES = (
    Signature("W1", "WIN-CT2-CUBLAS12-NOT-FOUND", r'Library cublas64_12\.dll is not found or cannot be loaded'),
    Signature("W2", "CT2-CUBLAS11-NOT-FOUND", r'Library (cublas64_11\.dll|libcublas\.so\.11) is not found or cannot be loaded'),
    Signature("W3", "CT2-CUDNN9-NOT-FOUND", r'Could not (locate|load library) cudnn_ops64_9\.dll|Invalid handle\. Cannot load symbol cudnn\w+Descriptor|Unable to load any of \{libcudnn_\w+\.so\.9'),
    Signature("W4", "WIN-CUDNN8-SUBLIB-NOT-FOUND", r'Could not (locate|load library) cudnn_(ops|cnn|adv)_(infer|train)64_8\.dll'),
    Signature("W5", "WIN-CUDNN8-ZLIBWAPI-MISSING", r'Could not (locate|load library) zlibwapi\.dll'),
    Signature("W6", "WIN-TORCH240-FBGEMM-LIBOMP", r'\[WinError 126\][^\n]*Error loading "[^"]*\\torch\\lib\\fbgemm\.dll" or one of its dependencies'),
    Signature("W7", "WIN-VCREDIST-MISSING", r'''\[WinError 126\][^\n]*Error loading "[^"]*\\torch\\lib\\(c10|asmjit|torch_cpu|shm)\.dll"|Could not find module '[^']*c10\.dll' \(or one of its dependencies\)|Microsoft Visual C\+\+ Redistributable is not installed'''),
    Signature("W8", "WIN-TORCH29-STALE-MSVCP", r'\[WinError 1114\][^\n]*Error loading "(?:[^"]*\\torch\\lib|\.\.\.|…)\\(c10|torch_python|c10_cuda)\.dll"'),
    Signature("W9", "WIN-TORCH230-USERSITE", r'\[WinError 126\][^\n]*Error loading "[^"]*\\AppData\\Roaming\\Python\\Python3\d+\\site-packages\\torch\\lib\\[^"]+\.dll"'),
    Signature("W10", "WIN-CUDA-TORCH-NO-NVCUDA", r'\[WinError 126\][^\n]*Error loading "[^"]*\\torch\\lib\\caffe2_nvrtc\.dll"'),
    Signature("W11", "WIN-LEGACY-TORCH-C-DLL", r'ImportError: DLL load failed(?: while importing _C)?: (The specified module could not be found|%1 is not a valid Win32 application|The operating system cannot run %1)'),
    Signature("W12", "WIN-ORT-CUDA-PROVIDER-DEPS", r'LoadLibrary failed with error 126 "" when trying to load "[^"]*onnxruntime_providers_cuda\.dll"|Error loading "[^"]*onnxruntime_providers_cuda\.dll" which depends on "([\w.]+\.dll)" which is missing'),
    Signature("W13", "WIN-TF-CUDA11-DLL-MISSING", r"Could not load dynamic library '(cudart64_\d+|cublas64_\d+|cublasLt64_\d+|cufft64_\d+|curand64_\d+|cusolver64_\d+|cusparse64_\d+|cudnn64_\d+)\.dll'; dlerror: \S+ not found"),
    Signature("W14", "WIN-TF-NATIVE-GPU-DROPPED", None),
    Signature("W15", "WIN-MP-SPAWN-NO-MAIN-GUARD", r'An attempt has been made to start a new process before the\s+current process has finished its bootstrapping phase'),
    Signature("L1", "LNX-NVJITLINK-SHADOWED", r'libcusparse\.so\.12: undefined symbol: __nvJitLink\w+_12_\d+, version libnvJitLink\.so\.12'),
    Signature("L2", "LNX-CUBLASLT-SHADOWED", r'libcublas\.so\.1[12]: (undefined symbol: cublasLt\w+, version libcublasLt\.so\.1[12]|symbol cublasLt\w+ version libcublasLt\.so\.1[12] not defined in file libcublasLt\.so\.1[12] with link time reference)'),
    Signature("L3", "LNX-CUDNN-SHADOWED", r'cuDNN version incompatibility: PyTorch was compiled\s+against \((\d+), (\d+), (\d+)\) but (found runtime version|linked against) \((\d+), (\d+), (\d+)\)'),
    Signature("L4", "LNX-TORCH201-NO-NVIDIA-WHEELS", r'ImportError: lib(cudnn\.so\.8|cublas\.so\.11|cufft\.so\.10|curand\.so\.10): cannot open shared object file|libnvrtc\.so\.\*\[0-9\]\.\*\[0-9\] not found in the system path'),
    Signature("L5", "LNX-CUDNN-NOT-ON-LOADER-PATH", r'lib(cudnn|cudnn_ops_infer|cudnn_cnn_infer|cudnn_ops|cudnn_cnn)\.so\.[89]: cannot open shared object file'),
    Signature("L6", "ORT-CUDA-MAJOR-MISMATCH", r'Failed to load library libonnxruntime_providers_cuda\.so with error: lib(cublasLt|cublas|cudart|cufft|cudnn)\.so\.(\d+)',
              ("LNX-CUDNN-NOT-ON-LOADER-PATH",)),
    Signature("L7", "WSL-LIBCUDA-UNVERSIONED", r'Could not load library libcudnn_cnn_infer\.so\.8\. Error: libcuda\.so: cannot open shared object file|OSError: libcuda\.so: cannot open shared object file|Failed to dlopen libcuda\.so\b'),
    Signature("L8", "WSL-LINUX-DRIVER-INSTALLED", r'/usr/lib/wsl/lib/libcuda\.so\.1 is not a symbolic link'),
    Signature("L9", "CONTAINER-GPU-NOT-PASSED", r'nvidia-container-cli: initialization error: (load library failed: libnvidia-ml\.so\.1|driver error)|libcuda\.so\.1: cannot open shared object file|Found no NVIDIA driver on your system',
              BROKEN_DRIVER_REFINES),
    Signature("L10", "CONTAINER-FWD-COMPAT-804", r'Error 804: forward compatibility was attempted on non supported HW|CUDA failure 804'),
    Signature("L11", "NCCL-DUPLICATE-OR-OLD", r'libtorch_cuda\.so: undefined symbol: nccl\w+'),
    Signature("L12", "CONDA-LIBSTDCXX-TOO-OLD", r"libstdc\+\+\.so\.6: version .GLIBCXX_3\.4\.\d+' not found"),
    Signature("L13", "LNX-VENV-LIB-LIB64-SPLIT", r'lib(cudnn|cublas|cublasLt|cudart|cufft|curand|cusparse|cusolver|nccl|nvJitLink)(_\w+)?\.so\.\d+: cannot open shared object file',
              ("LNX-CUDNN-NOT-ON-LOADER-PATH", "LNX-TORCH201-NO-NVIDIA-WHEELS")),
    Signature("L14", "GLIBC-TOO-OLD-FOR-WHEEL", r"version .GLIBC_(\d+\.\d+)' not found \(required by ([^)\n]+)\)"),
    Signature("D1", "DRV-TOO-OLD-FOR-TORCH-WHEEL", r'The NVIDIA driver on your system is too old \(found version (\d+)\)'),
    Signature("D2", "DRV-INSUFFICIENT-FOR-RUNTIME", r'CUDA driver version is insufficient for CUDA runtime version|cudaErrorInsufficientDriver|CUDA failure 35'),
    Signature("D3", "DRV-NOT-FOUND", r'Found no NVIDIA driver on your system\. Please check that you have an NVIDIA GPU and installed a driver'),
    Signature("D4", "DRV-NVML-VERSION-MISMATCH", r'Failed to initialize NVML: Driver/library version mismatch', BROKEN_DRIVER_REFINES),
    Signature("D5", "DRV-KERNEL-MODULE-NOT-LOADED", r"NVIDIA-SMI has failed because it couldn[’‘']t communicate with the NVIDIA driver",
              BROKEN_DRIVER_REFINES),
    Signature("D6", "DRV-UVM-STATE-LOST", r'CUDA unknown error - this may be due to an incorrectly set up environment, e\.g\. changing env variable CUDA_VISIBLE_DEVICES after program start'),
    Signature("D7", "DRV-PTX-NEWER-THAN-DRIVER", r'the provided PTX was compiled with an unsupported toolchain|CUDA_ERROR_UNSUPPORTED_PTX_VERSION'),
    Signature("D8", "DRV-NO-DEVICES", r'^No devices were found', BROKEN_DRIVER_REFINES),
    Signature("D9", "DRV-NVML-UNKNOWN-ERROR", r'Failed to initialize NVML: Unknown Error', BROKEN_DRIVER_REFINES),
    Signature("D10", "DRV-GPU-WITHOUT-DRIVER", None, BROKEN_DRIVER_REFINES),
    Signature("A1", "ARCH-GPU-NEWER-THAN-WHEEL", r'(.+) with CUDA capability sm_(\d+) is not compatible with the current PyTorch installation\.\s+The current PyTorch install supports CUDA capabilities ([\w ]+)\.'),
    Signature("A2", "ARCH-GPU-DROPPED-FROM-WHEEL", None),
    Signature("A3", "ARCH-GPU-BELOW-MIN-CC", r'Found GPU(\d+) (.+) which is of cuda capability (\d+)\.(\d+)\.\s+PyTorch no longer supports this GPU because it is too old\.\s+The minimum cuda capability (supported by this library|that we support) is (\d+)\.(\d+)'),
    Signature("A4", "ARCH-NO-KERNEL-IMAGE", r'CUDA error: no kernel image is available for execution on the device|cudaErrorNoKernelImageForDevice'),
    Signature("A5", "TRITON-GPU-TOO-OLD", r'Found (.+) which is too old to be supported by the triton GPU compiler, which is used as the backend\. Triton only supports devices of CUDA Capability >= (\d+\.\d+), but your device is of CUDA capability (\d+)\.(\d+)'),
    Signature("A6", "EXT-NVCC-UNSUPPORTED-ARCH", r"nvcc fatal\s*: Unsupported gpu architecture 'compute_(\d+)a?'"),
    Signature("C1", "TORCH-CPU-WHEEL", r'(AssertionError|RuntimeError): Torch not compiled with (CUDA|XPU) enabled'),
    Signature("C2", "CONDA-TORCH-CPU-VARIANT", r"pytorch\s+\S+\s+(cpu_\S+|py3\.\d+_cpu_0)|cpuonly|pytorch-mutex\s+1\.0\s+cpu",
              ("TORCH-CPU-WHEEL",)),
    Signature("C3", "ENV-INTERPRETER-MISMATCH", r"ModuleNotFoundError: No module named 'torch'"),
    Signature("C4", "ENV-CUDA-VISIBLE-DEVICES-HIDES-GPU", None),
    Signature("C5", "BNB-CPU-BINARY", r'The installed version of bitsandbytes was compiled without GPU support'),
    Signature("C6", "XFORMERS-TORCH-MISMATCH", r"xFormers can't load C\+\+/CUDA extensions\. xFormers was built for:\s+PyTorch (\S+) with CUDA (\d+) \(you have (\S+)\)"),
    Signature("N1", "NUMPY2-ABI-BREAK", r'A module that was compiled using NumPy 1\.x cannot be run in\s+NumPy (2\.\d+\.\d+) as it may crash'),
    Signature("N2", "NUMPY-TOO-OLD-FOR-MODULE", r'module compiled against API version 0x([0-9a-f]+) but this version of numpy is 0x([0-9a-f]+)'),
    Signature("T1", "TF-CUDA-SONAME-MISSING", r"Could not load dynamic library '(lib\w+\.so\.\d+(?:\.\d+)?)'; dlerror: \S+: cannot open shared object file|ImportError: (lib(?:cudart|cublas|cudnn|cufft|curand|cusolver|cusparse)\.so\.\d+(?:\.\d+)?): cannot open shared object file"),
    Signature("T2", "TF-CANNOT-DLOPEN-GPU-LIBS", r'Cannot dlopen some GPU libraries\. Please make sure the missing libraries mentioned above are installed properly'),
    Signature("T3", "TF-CUDA-RUNTIME-NOT-INSTALLED", r'Could not find cuda drivers on your machine, GPU will not be used'),
    Signature("T4", "TF-216-WHEELS-NOT-FOUND", None, ("TF-CANNOT-DLOPEN-GPU-LIBS", "TF-CUDA-RUNTIME-NOT-INSTALLED")),
    Signature("T5", "TF-CONDA-LIB-NOT-ON-LOADER-PATH", None,
              ("TF-CUDA-SONAME-MISSING", "TF-CANNOT-DLOPEN-GPU-LIBS", "TF-CUDA-RUNTIME-NOT-INSTALLED")),
    Signature("J1", "JAX-CUDA-LIB-OLDER-THAN-BUILD", r'CUDA backend failed to initialize: (Found (cuDNN|cuBLAS|CUDA|cuSPARSE|cuFFT|cuSOLVER) version (\d+), but JAX was built against version (\d+), which is newer|Unable to use CUDA because of the following issues with CUDA components:[\s\S]*?Outdated \w+ installation found)'),
    Signature("J2", "JAX-CPU-ONLY-INSTALL", r'An NVIDIA GPU may be present on this machine, but a CUDA-enabled jaxlib is not installed\. Falling back to cpu'),
    Signature("J3", "JAX-JAXLIB-TOO-OLD", r'jaxlib is version ([\w.+]+), but this version of jax requires version (?:>= )?(\d[\w.]*\d)'),
    Signature("J4", "JAX-PLUGIN-MISMATCH", r'Mismatched PJRT plugin PJRT API version|JAX plugin jax_cuda\d+_plugin version \S+ is installed, but it is not compatible with the installed jaxlib version|Unexpected PJRT_Client_Create_Args size'),
    Signature("J5", "JAX-CUDA-UNLOADABLE", r'CUDA backend failed to initialize: Unable to load (CUDA|cuSOLVER|cuDNN|cuBLAS|cuFFT|cuSPARSE)\.', ("JAX-CPU-ONLY-INSTALL",)),
    Signature("X1", "TORCHVISION-TORCH-MISMATCH", r"operator torchvision::nms does not exist|No such operator torchvision::nms|Couldn't load custom C\+\+ ops\. This can happen if your PyTorch and torchvision versions are incompatible"),
    Signature("X2", "EXT-TOOLKIT-MAJOR-MISMATCH", r'The detected CUDA version \((\d+\.\d+)\) mismatches the version that was used to compile\s*PyTorch \((\d+\.\d+)\)\. Please make sure to use the same CUDA versions'),
    Signature("X3", "EXT-CUDA-HOME-MISSING", r'CUDA_HOME environment variable is not set\. Please set it to your CUDA install root|CUDA was not found on the system, please set the CUDA_HOME or the CUDA_PATH'),
    Signature("X4", "EXT-HOST-COMPILER-UNSUPPORTED", r'#error -- unsupported GNU version! gcc versions later than (\d+) are not supported!'),
    Signature("X5", "EXT-PREBUILT-TORCH-ABI", r'\.cpython-\d+-[\w-]+\.so: undefined symbol: _ZN(3c10|2at)\w+'),
    Signature("X6", "CODE-TENSOR-NOT-ON-CUDA", r'Expected \w+\.is_cuda\(\) to be true, but got false|Expected all tensors to be on the same device'),
    Signature("X7", "PIP-NO-TORCH-FOR-PLATFORM", r'Could not find a version that satisfies the requirement torch(==\S+)? \(from versions: ([^)]*)\)'),
    Signature("X8", "PIP-NO-WHEEL-FOR-PYTHON", r'Could not find a version that satisfies the requirement (tensorflow|tensorflow-gpu|tensorflow-cpu|jaxlib|jax)(\[[\w,]+\])?(?:[=<>!~][^ ]*)?(?: \(from [^)]*\))? \(from versions: ([^)]*)\)'),
    Signature("G1", "ROCM-HIP-INVALID-DEVICE-FUNCTION", r'HIP error: invalid device function|hipErrorInvalidDeviceFunction'),
    Signature("G2", "ROCM-NO-BINARY-FOR-GPU", r"hipErrorNoBinaryForGpu: (Unable to find code object|Cou?dn't find binary) for (all )?current devices"),
    Signature("G3", "ROCM-NO-HIP-GPUS", r'No HIP GPUs are available'),
    Signature("G4", "ROCM-KFD-PERMISSION", r'Unable to open /dev/kfd read-write: (Permission denied|Operation not permitted)'),
    Signature("G5", "XPU-NOT-AVAILABLE", r'Failed to initialize XPU devices\. The driver may not be installed|No XPU devices are available'),
    Signature("G6", "MPS-OUT-OF-MEMORY", r'MPS backend out of memory \(MPS allocated: [^)]*\)'),
    Signature("G7", "MPS-MACOS-TOO-OLD", r'The MPS backend is supported on [Mm]acOS (\d+\.\d+)\+'),
)

BY_ID = {signature.id: signature for signature in SIGNATURES}
GROUPS = {
    "W": "Windows DLL loading",
    "L": "Linux / WSL / container shared libraries",
    "D": "Driver / kernel module",
    "A": "GPU architecture",
    "C": "CPU-only builds, wrong interpreter, extension packages",
    "N": "NumPy ABI",
    "T": "TensorFlow",
    "J": "JAX",
    "X": "torchvision pairing, extension builds, user code, resolver",
    "G": "AMD ROCm, Intel XPU, Apple MPS",
}


# Signatures that share another's message and are told apart by the facts (the catalogue's `pattern_of`).
PATTERN_OF = {"ARCH-GPU-DROPPED-FROM-WHEEL": "ARCH-GPU-NEWER-THAN-WHEEL", "TF-CONDA-LIB-NOT-ON-LOADER-PATH": "TF-CUDA-SONAME-MISSING"}


@cache
def compiled(signature_id: str) -> re.Pattern | None:
    """The signature's pattern, compiled as the catalogue says to use it (re.MULTILINE)."""
    pattern = BY_ID[PATTERN_OF.get(signature_id, signature_id)].pattern
    return re.compile(pattern, re.MULTILINE) if pattern else None
