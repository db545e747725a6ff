"""Error text as users paste it (envpin.doctor.pasted): one shape per test, each from a public thread's text.

The shapes: the warning on its lines as Python prints it (pytorch/pytorch#150733), the same joined on one line
as chat and issue titles carry it (issue 32's report), with a Windows path before it
(RVC-Project/Retrieval-based-Voice-Conversion-WebUI#2558), with journald's prefix on every line
(Janrupf/stable-diffusion-webui-nix#9), with torchrun's `[rank0]:` and a logger's timestamp, the too-old warning,
collect_env's GPU line and a pasted nvidia-smi table (facebookresearch/vggt#437). Each must give the GPU's own
name and capability, and the signature of the message must still match once the prefixes are gone.
"""

from __future__ import annotations

import pytest

from envpin.compat.model import ComputeCapability
from envpin.doctor.catalogue import compiled
from envpin.doctor.pasted import text_driver, text_gpus, unprefixed

WARNING_LINES = (
    "NVIDIA GeForce RTX 5090 D with CUDA capability sm_120 is not compatible with the current PyTorch installation.\n"
    "The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.\n"
    "If you want to use the NVIDIA GeForce RTX 5090 D GPU with PyTorch, please check the instructions at "
    "https://pytorch.org/get-started/locally/\n")

SHAPES = {
    "posix-path-then-lines": (
        "/home/mm/anaconda3/envs/py312/lib/python3.12/site-packages/torch/cuda/__init__.py:235: UserWarning: \n"
        + WARNING_LINES + "\n  warnings.warn(\n", "NVIDIA GeForce RTX 5090 D"),
    "one-line": (
        "UserWarning: " + WARNING_LINES.replace("\n", " "), "NVIDIA GeForce RTX 5090 D"),
    "windows-path-one-line": (
        "D:\\RVC\\RVC1006Nvidia\\runtime\\lib\\site-packages\\torch\\cuda\\__init__.py:173: UserWarning: "
        + WARNING_LINES.replace("\n", " "), "NVIDIA GeForce RTX 5090 D"),
    "journald-prefix-each-line": (
        "".join(f"Oct 04 13:19:39 llm sd-webui-forge-start[394]: {line}\n" for line in
                ["/nix/store/a1jmpf3hja9g4rx7lwxza4gwng9vscj5-python3-3.11.13-env/lib/python3.11/site-packages/torch/cuda/__init__.py:209: UserWarning:",
                 *WARNING_LINES.splitlines()]), "NVIDIA GeForce RTX 5090 D"),
    "torchrun-rank-prefix": (
        "".join(f"[rank0]: {line}\n" for line in WARNING_LINES.splitlines()), "NVIDIA GeForce RTX 5090 D"),
    "logger-timestamp-prefix": (
        "".join(f"2025-06-10 14:43:50,994 - root - WARNING - {line}\n" for line in WARNING_LINES.splitlines()),
        "NVIDIA GeForce RTX 5090 D"),
    "launcher-log-prefix": (
        "".join(f"22:16:35-776654 WARNING  {line}\n" for line in WARNING_LINES.splitlines()), "NVIDIA GeForce RTX 5090 D"),
}


@pytest.mark.parametrize("shape", SHAPES, ids=list(SHAPES))
def test_the_gpu_and_its_capability_are_read_from_each_shape(shape):
    text, name = SHAPES[shape]
    gpus = text_gpus(text)
    assert [(g.name, g.capability) for g in gpus] == [(name, ComputeCapability(12, 0))]


@pytest.mark.parametrize("shape", SHAPES, ids=list(SHAPES))
def test_the_signature_matches_each_shape_once_prefixes_are_gone(shape):
    text, _ = SHAPES[shape]
    pattern = compiled("ARCH-GPU-NEWER-THAN-WHEEL")
    assert pattern is not None
    match = pattern.search(unprefixed(text))
    assert match is not None
    assert match.group(3).split()[-1] == "sm_90"


def test_a_line_without_a_prefix_is_kept_as_it_is():
    text = "RuntimeError: CUDA error: no kernel image is available for execution on the device\n  File \"a.py\", line 3\n"
    assert unprefixed(text) == text


def test_the_too_old_warning_and_collect_env_name_the_gpu():
    too_old = ("Found GPU0 Tesla K40c which is of cuda capability 3.5.\n    PyTorch no longer supports this GPU because it is "
               "too old.\n")
    assert [(g.name, g.capability) for g in text_gpus(too_old)] == [("Tesla K40c", ComputeCapability(3, 5))]
    collect_env = "Is CUDA available: True\nGPU models and configuration: GPU 0: NVIDIA GeForce RTX 5090 D\nNvidia driver version: 570.124.04\n"
    assert [(g.name, g.capability) for g in text_gpus(collect_env)] == [("NVIDIA GeForce RTX 5090 D", None)]
    assert text_driver(collect_env) == "570.124.04"


def test_a_pasted_nvidia_smi_table_gives_the_gpu_and_the_driver():
    table = (
        "+-----------------------------------------------------------------------------------------+\n"
        "| NVIDIA-SMI 581.57                 Driver Version: 581.57         CUDA Version: 13.0     |\n"
        "+-----------------------------------------+------------------------+----------------------+\n"
        "| GPU  Name                  Driver-Model | Bus-Id          Disp.A | Volatile Uncorr. ECC |\n"
        "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |\n"
        "|                                         |                        |               MIG M. |\n"
        "|=========================================+========================+======================|\n"
        "|   0  NVIDIA GeForce RTX 5070 Ti   WDDM  |   00000000:01:00.0  On |                  N/A |\n"
        "|  0%   45C    P8             20W /  300W |    2296MiB /  16303MiB |      0%      Default |\n"
        "|                                         |                        |                  N/A |\n")
    assert [(g.name, g.capability) for g in text_gpus(table)] == [("NVIDIA GeForce RTX 5070 Ti", None)]
    assert text_driver(table) == "581.57"
