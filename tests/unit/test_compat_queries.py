"""Database queries: GPU names, driver minimums, arch coverage — each against the real database."""

import pytest

from envpin.base.errors import EnvpinInputError
from envpin.compat.archs import coverage
from envpin.compat.drivers import driver_max_cuda, minimum_driver, parse_driver_version
from envpin.compat.gpus import gpu_name_key, lookup_gpu
from envpin.compat.model import ArchList, ComputeCapability, Provenance

CC = ComputeCapability.parse


@pytest.mark.parametrize(
    "printed, capability",
    [
        ("NVIDIA GeForce RTX 3090", "8.6"),  # NVML / nvidia-smi on a current driver
        ("GeForce RTX 3090", "8.6"),  # older drivers drop the NVIDIA prefix
        ("Tesla V100-SXM2-32GB", "7.0"),
        ("Tesla V100-PCIE-16GB", "7.0"),
        ("NVIDIA H100 80GB HBM3", "9.0"),
        ("NVIDIA H100 PCIe", "9.0"),
        ("NVIDIA H200", "9.0"),
        ("NVIDIA A100-SXM4-80GB", "8.0"),
        ("NVIDIA A100-PCIE-40GB", "8.0"),
        ("Tesla T4", "7.5"),
        ("Tesla K80", "3.7"),
        ("Tesla P100-PCIE-16GB", "6.0"),
        ("NVIDIA GeForce GTX 1080 Ti", "6.1"),
        ("NVIDIA GeForce RTX 5090", "12.0"),
        ("NVIDIA GeForce RTX 4090", "8.9"),
        ("NVIDIA L40S", "8.9"),
        ("NVIDIA L4", "8.9"),
        ("NVIDIA A10", "8.6"),
        ("NVIDIA RTX A6000", "8.6"),
        ("Quadro RTX 6000", "7.5"),
        ("NVIDIA RTX 6000 Ada Generation", "8.9"),
        ("NVIDIA B200", "10.0"),
        ("NVIDIA GH200 480GB", "9.0"),
        ("NVIDIA GeForce GTX 980 Ti", "5.2"),
        ("GeForce GTX 680", "3.0"),
        ("NVIDIA GeForce GTX 1660 SUPER", "7.5"),
        ("NVIDIA GeForce RTX 2080 Ti", "7.5"),
    ],
)
def test_gpu_names_as_nvidia_smi_prints_them(database, printed, capability):
    model = lookup_gpu(database, printed)
    assert model is not None, printed
    assert str(model.compute_capability) == capability


@pytest.mark.parametrize("printed, capability", [
    # parts named in the PCI ID database (pciutils/pciids, snapshot of 2026-08-22) that the database lacked
    ("NVIDIA RTX PRO 4000 Blackwell Generation Laptop GPU", "12.0"),
    ("NVIDIA RTX PRO 500 Blackwell Embedded GPU", "12.0"),
    ("NVIDIA RTX PRO 6000D Blackwell Workstation Edition", "12.0"),
    ("NVIDIA RTX 5880 Ada Generation", "8.9"),
    ("NVIDIA GeForce RTX 3050 A Laptop GPU", "8.9"),  # an Ada (AD106/AD107) part, not the Ampere RTX 3050
])
def test_gpus_named_since_the_database_was_written(live_database, printed, capability):
    model = lookup_gpu(live_database, printed)
    assert model is not None, printed
    assert str(model.compute_capability) == capability
    assert model.provenance.unverified, "the compute capability is assumed from the chip, and says so"


@pytest.mark.parametrize("name", ["NVIDIA GeForce RTX 9999", "AMD Radeon RX 7900 XTX", "NVIDIA A1000000", "RTX"])
def test_unknown_gpu_is_unknown_not_a_near_guess(database, name):
    assert lookup_gpu(database, name) is None


def test_name_key_keeps_what_changes_the_chip():
    assert gpu_name_key("NVIDIA GeForce RTX 3080 Ti") != gpu_name_key("NVIDIA GeForce RTX 3080")
    assert gpu_name_key("Quadro RTX 6000") != gpu_name_key("NVIDIA RTX 6000 Ada Generation")
    assert gpu_name_key("NVIDIA A10") != gpu_name_key("NVIDIA A100")


@pytest.mark.parametrize(
    "cuda, os_name, policy, minimum",
    [
        ("12.4", "linux", "minor", "525.60.13"),  # Table 2: one driver for all of 12.x
        ("12.8", "windows", "minor", "528.33"),
        ("11.8", "linux", "minor", "450.80.02"),
        ("13.0", "linux", "minor", "580"),
        ("12.4", "linux", "strict", "550.54.14"),  # Table 3, 12.4 GA
        ("12.4", "windows", "strict", "551.61"),
        ("11.8", "linux", "strict", "520.61.05"),
        ("12.8", "linux", "strict", "570.26"),
        ("10.2", "linux", "minor", "440.33"),  # 10.x has no minor-version compatibility
    ],
)
def test_minimum_driver(database, cuda, os_name, policy, minimum):
    requirement = minimum_driver(database, cuda, os_name, policy)
    assert requirement is not None and requirement.minimum == minimum


@pytest.mark.parametrize(
    "driver, os_name, cuda",
    [("535.104.05", "linux", "12.2"), ("470.82.01", "linux", "11.4"), ("551.61", "windows", "12.4"),
     ("450.80.02", "linux", "11.0"), ("580.65.06", "linux", "13.0")],
)
def test_driver_max_cuda(database, driver, os_name, cuda):
    assert driver_max_cuda(database, driver, os_name) == cuda


@pytest.mark.parametrize("text", ["abc", "", "5", "535..1", "1.2.3.4", "99999.1"])
def test_nonsense_driver_versions_are_input_errors(text):
    with pytest.raises(EnvpinInputError):
        parse_driver_version(text)


def _archs(*entries):
    sass = tuple(CC(e.removesuffix("+PTX")) for e in entries)
    ptx = tuple(CC(e.removesuffix("+PTX")) for e in entries if e.endswith("+PTX"))
    return ArchList("test", tuple(sorted(sass)), ptx, Provenance(("t",)))


@pytest.mark.parametrize(
    "gpu, archs, how",
    [
        ("8.6", ("7.5", "8.0", "8.6"), "sass"),
        ("8.9", ("7.5", "8.0", "8.6", "9.0"), "sass-compatible"),  # Ada runs Ampere sm_86 cubins
        ("6.1", ("5.0", "6.0", "7.0"), "sass-compatible"),  # GTX 1080 on sm_60
        ("12.1", ("10.0", "12.0"), "sass-compatible"),
        ("12.0", ("9.0", "10.0+PTX"), "ptx"),  # newer than every cubin, PTX JIT
        ("12.0", ("5.0", "8.6", "9.0"), None),  # RTX 5090 on a 2.6-era list
        ("6.1", ("7.0", "7.5", "8.0"), None),  # Pascal after it was dropped
        ("3.5", ("3.7", "5.0"), None),  # no cubin runs on an older minor
        ("10.0", ("9.0",), None),  # never across majors
    ],
)
def test_arch_coverage(gpu, archs, how):
    result = coverage(CC(gpu), _archs(*archs))
    assert (result.how if result else None) == how


def test_tegra_gets_no_binary_compatibility():
    # Orin (8.7) cannot run the desktop sm_86 cubin; only an exact cubin or PTX serves it.
    assert coverage(CC("8.7"), _archs("8.0", "8.6")) is None
    found = coverage(CC("8.7"), _archs("8.0", "8.6+PTX"))
    assert found is not None and found.how == "ptx"
