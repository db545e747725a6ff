"""Error text as users paste it: what the doctor reads from it besides the signatures.

Users paste one line or many, with or without the traceback, from a terminal, a service log or a launcher's
log: each line may carry a prefix the program never printed (journald's `Oct 04 13:19:39 host unit[394]: `,
torchrun's `[rank0]: `, a logger's `2024-11-14 05:49:04,133 - INFO - ` or `22:16:35-772925 INFO     `).
`unprefixed` removes those, so a message that spans lines matches its signature again. What the text says
about the machine (the GPU a warning names, its compute capability, a pasted nvidia-smi table's driver) is
read here once: the message's own words, never the words around them (`UserWarning: NVIDIA GeForce RTX 5090`
is the GPU "NVIDIA GeForce RTX 5090").
"""

from __future__ import annotations

import re

from envpin.base.record import Record, record
from envpin.compat.model import ComputeCapability
from envpin.host.nvidia_smi import parse_header, parse_table_gpus

# One log prefix at the start of a line; several may follow one another (a timestamp, then `[rank0]:`).
_LOG_PREFIX = re.compile(
    r"^(?:"
    r"[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \S+ [\w.@\-]+(?:\[\d+\])?: "  # journald / syslog: Oct 04 13:19:39 host unit[394]:
    r"|\[?\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\]?(?:\s*-\s*[\w.]+)?(?:\s*-\s*[A-Z]+\s*-)?\s+"
    r"|\d\d:\d\d:\d\d(?:[-.,]\d+)?\s+(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)\s+"  # 22:16:35-772925 INFO
    r"|\[(?:rank|RANK)\s*\d+\]:\s?"  # torchrun / torch.distributed: [rank0]:
    r"|(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):[\w.]*:"  # logging's default format: WARNING:root:
    r")")

# The GPU a message names: the last run of words before the message's own continuation, with no colon in it
# (names have none; the prefixes before them end in one).
# the fixed words are found first, then the name is the line before them: no pattern scans a long line backwards
_SM_WARNING = re.compile(r" with CUDA capability sm_(\d+) is not compatible")
_FOUND_GPU = re.compile(r"Found GPU\d+ ([^:\n]+?) which is of cuda capability (\d+)\.(\d+)")
_COLLECT_ENV_GPU = re.compile(r"(?:^|GPU models and configuration: )GPU \d+: ([^\n(]+?)\s*(?: \(UUID|$)", re.MULTILINE)


def unprefixed(text: str) -> str:
    """The text with each line's log prefixes removed (a line without one is kept as it is)."""
    lines = []
    for line in text.splitlines():
        for _ in range(4):  # bounded: a line has at most a few stacked prefixes
            stripped = _LOG_PREFIX.sub("", line, count=1)
            if stripped == line:
                break
            line = stripped
        lines.append(line)
    return "\n".join(lines) + ("\n" if text.endswith("\n") else "")


@record
class TextGpu(Record):
    """An NVIDIA GPU the text names, with the compute capability the text gives (None: the text gives none)."""

    name: str
    capability: ComputeCapability | None
    source: str  # the message it was read from, for the evidence


def gpu_name(raw: str) -> str:
    """A GPU name out of the words a pattern caught: without what precedes it on its line (`UserWarning: `, a
    path, a log prefix), quotes or surrounding blanks."""
    name = raw.rsplit(":", 1)[-1]
    return name.strip().strip("'\"`").strip()


def text_gpus(text: str) -> list[TextGpu]:
    """The NVIDIA GPUs a pasted text names, in the order found, each once."""
    found: list[TextGpu] = []
    clean = unprefixed(text)
    for match in _SM_WARNING.finditer(clean):
        digits = match.group(1)
        line_start = clean.rfind("\n", 0, match.start()) + 1
        found.append(TextGpu(gpu_name(clean[line_start:match.start()]), ComputeCapability(int(digits[:-1]), int(digits[-1])),
                             "the sm_ warning"))
    for match in _FOUND_GPU.finditer(clean):
        found.append(TextGpu(gpu_name(match.group(1)), ComputeCapability(int(match.group(2)), int(match.group(3))),
                             "the too-old warning"))
    for match in _COLLECT_ENV_GPU.finditer(clean):
        found.append(TextGpu(gpu_name(match.group(1)), None, "collect_env's GPU line"))
    for row in parse_table_gpus(clean):
        found.append(TextGpu(row.name, None, "the pasted nvidia-smi table"))
    unique: dict[str, TextGpu] = {}
    for each in found:
        if each.name and each.name not in unique:
            unique[each.name] = each
    return list(unique.values())


def text_driver(text: str) -> str | None:
    """The driver version of a pasted nvidia-smi banner or collect_env's `Nvidia driver version:` line."""
    clean = unprefixed(text)
    header = parse_header(clean)
    if header is not None and header.driver:
        return header.driver
    line = re.search(r"^Nvidia driver version: (\d{3,4}\.\d{1,3}(?:\.\d{1,3})?)\s*$", clean, re.MULTILINE)
    return line.group(1) if line else None
