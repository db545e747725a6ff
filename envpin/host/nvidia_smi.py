"""nvidia-smi: pure parsers for its outputs, plus the probe that runs it.

Preference order inside this source: `--query-gpu` CSV (stable, machine-readable, one line per GPU),
then `-q -x` XML, then the human table. The table's header changed in R610 ("KMD Version",
"CUDA UMD Version", sgl-project/sglang#27487), so it is parsed last and in both forms.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from envpin.base.escapes import exit_status, shown
from envpin.base.record import Record, record
from envpin.facts.host import Gpu, is_compute_capability, is_driver_version

if TYPE_CHECKING:
    import xml.etree.ElementTree as ElementTree
from envpin.host.runner import CommandTimeout, OutputTooLarge, Runner

QUERY_FIELDS = ("index", "name", "driver_version", "compute_cap", "memory.total")
# Drivers before ~510 do not know compute_cap; they answer with an error instead of a blank column.
QUERY_FIELDS_WITHOUT_COMPUTE_CAP = ("index", "name", "driver_version", "memory.total")


class SmiParseError(ValueError):
    """nvidia-smi printed something that is not the output we asked for."""


# ---------------------------------------------------------------- --query-gpu CSV

_UNAVAILABLE = re.compile(r"^\[?(N/A|Not Supported|Unknown Error|Insufficient Permissions|GPU is lost|"
                          r"Requested functionality has been deprecated)\]?$", re.IGNORECASE)
_INVALID_FIELD = re.compile(r'Field "([^"]+)" is not a valid field to query', re.IGNORECASE)


def invalid_query_field(text: str) -> str | None:
    """The field an old nvidia-smi refused ('Field "compute_cap" is not a valid field to query.')."""
    match = _INVALID_FIELD.search(text)
    return match.group(1) if match else None


def clean_value(raw: str) -> str | None:
    """One CSV cell: `[N/A]`, `[Not Supported]` and friends mean "no value", not a value."""
    value = raw.strip()
    if not value or _UNAVAILABLE.match(value):
        return None
    return value


def parse_query_csv(text: str, fields: Sequence[str]) -> list[dict[str, str | None]]:
    """Rows of `--query-gpu=<fields> --format=csv,noheader[,nounits]`, one dict per GPU, all GPUs."""
    refused = invalid_query_field(text)
    if refused:
        raise SmiParseError(f'nvidia-smi does not know the field "{refused}"')
    rows = []
    try:
        for record in csv.reader(io.StringIO(text), skipinitialspace=True):
            if not record or all(not cell.strip() for cell in record):
                continue
            if len(record) != len(fields):
                raise SmiParseError(f"expected {len(fields)} comma-separated values, got {len(record)}: {','.join(record)[:80]!r}")
            rows.append({name: clean_value(cell) for name, cell in zip(fields, record, strict=True)})
    except csv.Error as error:  # a NUL byte, or a cell past the csv module's 128 KiB field limit
        raise SmiParseError(f"not CSV ({error})") from None
    if not rows:
        raise SmiParseError("no GPU rows in nvidia-smi output")
    return rows


def parse_query_csv_with_header(text: str) -> list[dict[str, str | None]]:
    """`--format=csv` output (header line first); header names lose their unit (`memory.total [MiB]`)."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        raise SmiParseError("empty nvidia-smi output")
    header = next(csv.reader([lines[0]], skipinitialspace=True))
    fields = [_without_unit(name.strip()) for name in header]
    return parse_query_csv("\n".join(lines[1:]), fields)


def _without_unit(name: str) -> str:
    """`memory.total [MiB]` -> `memory.total`: a final bracket and the spaces before it dropped (string operations,
    not a regex: a header of many spaces or brackets must not cost quadratic time)."""
    if not name.endswith("]"):
        return name
    start = name.find("[", name.rfind("]", 0, len(name) - 1) + 1, len(name) - 1)
    return name if start < 0 else name[:start].rstrip()


def memory_mib(value: str | None) -> int | None:
    """'24564', '24564 MiB' -> 24564."""
    if value is None:
        return None
    # Bounded: a garbled run of thousands of digits is not a size, and int() refuses > 4300 digits anyway.
    match = re.match(r"^\s*(\d{1,12})(?:\s*MiB)?\s*$", value)
    return int(match.group(1)) if match else None


def gpu_index(text: str | None) -> int | None:
    """'0' -> 0; None for anything that is not a plain small number ('²' passes str.isdigit, not int())."""
    return int(text) if text and re.fullmatch(r"[0-9]{1,6}", text) else None


def gpus_from_rows(rows: Sequence[Mapping[str, str | None]]) -> list[Gpu]:
    """Every row is a GPU; a row without a name is garbage, not a GPU."""
    gpus = []
    for position, row in enumerate(rows):
        name = row.get("name")
        if not name:
            raise SmiParseError(f"GPU row {position} has no name")
        index = gpu_index(row.get("index"))
        index = position if index is None else index
        capability = row.get("compute_cap")
        gpus.append(
            Gpu(
                index=index,
                name=name,
                compute_capability=capability if capability and is_compute_capability(capability) else None,
                memory_mib=memory_mib(row.get("memory.total")),
            )
        )
    return gpus


def driver_versions_from_rows(rows: Sequence[Mapping[str, str | None]]) -> list[str]:
    """Distinct driver versions in row order. Normally one; every GPU row repeats it (astral-sh/uv#14647)."""
    seen: list[str] = []
    for row in rows:
        version = row.get("driver_version")
        if version and is_driver_version(version) and version not in seen:
            seen.append(version)
    return seen


# ---------------------------------------------------------------- plain `nvidia-smi` table

_HEADER_DRIVER = re.compile(r"\b(?:Driver|KMD) Version:\s*(\d[\d.]*)")
_HEADER_CUDA = re.compile(r"\bCUDA (?:UMD )?Version:\s*(\S+)")
_HEADER_SMI = re.compile(r"NVIDIA-SMI\s+(\d[\d.]*)")


@record
class SmiHeader(Record):
    smi_version: str | None
    driver: str | None
    cuda: str | None  # None when absent (drivers < 410) or unreadable ("ERR!" on broken WSL setups)


def parse_header(text: str) -> SmiHeader | None:
    """The banner line of plain `nvidia-smi`, classic or R610+ form; None if there is no banner.

    Classic: `| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2 |`
    R610+:   `| NVIDIA-SMI 610.43.02    KMD Version: 610.43.02     CUDA UMD Version: 13.3 |`
    The driver is the Driver/KMD field, not the NVIDIA-SMI one: on WSL they differ (530.47 vs 531.68).
    """
    for line in text.splitlines():
        if "NVIDIA-SMI" not in line:
            continue
        smi = _HEADER_SMI.search(line)
        driver = _HEADER_DRIVER.search(line)
        cuda = _HEADER_CUDA.search(line)
        cuda_text = cuda.group(1) if cuda else None
        return SmiHeader(
            smi_version=smi.group(1) if smi else None,
            driver=driver.group(1) if driver and is_driver_version(driver.group(1)) else None,
            cuda=cuda_text if cuda_text and re.fullmatch(r"\d+\.\d+", cuda_text) else None,
        )
    return None


# Digit runs are bounded: int() refuses more than 4300 digits, and no GPU index or size is that long.
_TABLE_GPU_ROW = re.compile(r"^\|\s+(\d{1,6})\s+(.+?)\s+(?:On|Off|WDDM|TCC|MCDM|N/A)\s+\|")
_TABLE_MEMORY = re.compile(r"(?<!\d)(\d{1,12})MiB\s*/\s*(\d{1,12})MiB")


def parse_table_gpus(text: str) -> list[Gpu]:
    """GPUs of the first table of plain `nvidia-smi` (names may be cut short with '...').

    Only the device table is read: the MIG and process tables that follow it have rows that look
    alike, so parsing stops at the first blank line after the table starts.
    """
    gpus: list[Gpu] = []
    in_table = False
    pending: tuple[int, str] | None = None
    for line in text.splitlines():
        if line.startswith("|=") and not in_table:
            in_table = True
            continue
        if not in_table:
            continue
        if not line.strip():
            break
        row = _TABLE_GPU_ROW.match(line)
        if row:
            pending = (int(row.group(1)), row.group(2).strip())
            continue
        memory = _TABLE_MEMORY.search(line)
        if pending and memory:
            gpus.append(Gpu(index=pending[0], name=pending[1], compute_capability=None, memory_mib=int(memory.group(2))))
            pending = None
    return gpus


# ---------------------------------------------------------------- `nvidia-smi --version`

def parse_version_output(text: str) -> SmiHeader | None:
    """`nvidia-smi --version` (R525+): 'DRIVER version : 591.86' or, R610+, 'KMD version : 610.57.04'."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            values[key.strip().lower()] = value.strip()
    if not values:
        return None
    driver = next((values[k] for k in ("kmd version", "driver version") if is_driver_version(values.get(k, ""))), None)
    cuda = next((values[k] for k in ("cuda umd version", "cuda version") if re.fullmatch(r"\d+\.\d+", values.get(k, ""))), None)
    if driver is None and cuda is None:
        return None
    return SmiHeader(smi_version=values.get("nvidia-smi version"), driver=driver, cuda=cuda)


# ---------------------------------------------------------------- `nvidia-smi -q -x`

@record
class SmiXml(Record):
    driver: str | None
    cuda: str | None
    gpus: tuple[Gpu, ...] = ()


def parse_xml(text: str) -> SmiXml:
    """`nvidia-smi -q -x`: driver, CUDA and every `<gpu>` with name and framebuffer size."""
    import xml.etree.ElementTree as ElementTree  # noqa: PLC0415 - ~3 ms of imports (pyexpat), only when the CSV query was not enough

    try:
        root = ElementTree.fromstring(text.encode("utf-8") if isinstance(text, str) else text)
    except ElementTree.ParseError as error:
        raise SmiParseError(f"not XML: {error}") from None
    if root.tag != "nvidia_smi_log":
        raise SmiParseError(f"unexpected XML root <{root.tag}>")
    driver = _xml_text(root, "kmd_version") or _xml_text(root, "driver_version")
    cuda = _xml_text(root, "cuda_umd_version") or _xml_text(root, "cuda_version")
    gpus = []
    for position, element in enumerate(root.findall("gpu")):
        name = _xml_text(element, "product_name")
        if not name:
            continue
        gpus.append(
            Gpu(
                index=position,
                name=name,
                compute_capability=None,  # the XML has no compute capability field
                memory_mib=memory_mib(_xml_text(element, "fb_memory_usage/total")),
            )
        )
    return SmiXml(
        driver=driver if driver and is_driver_version(driver) else None,
        cuda=cuda if cuda and re.fullmatch(r"\d+\.\d+", cuda) else None,
        gpus=tuple(gpus),
    )


def _xml_text(element: ElementTree.Element, path: str) -> str | None:
    found = element.find(path)
    if found is None or found.text is None:
        return None
    return clean_value(found.text)


# ---------------------------------------------------------------- finding the executable

# ---------------------------------------------------------------- the probe

@dataclass
class SmiReport:
    executable: str
    driver: str | None = None
    cuda: str | None = None
    gpus: list[Gpu] = field(default_factory=list)
    failure: str | None = None  # what went wrong, phrased for a note
    timed_out: bool = False
    notes: list[str] = field(default_factory=list)


def probe(runner: Runner, executable: str, timeout: float) -> SmiReport:
    """Ask one nvidia-smi for driver, CUDA and all GPUs. Never raises; a hang stops all further calls."""
    report = SmiReport(executable=executable)
    try:
        _probe_query(runner, executable, timeout, report)
        if report.cuda is None or not report.gpus:
            _probe_xml(runner, executable, timeout, report)
        if report.cuda is None or report.driver is None:
            _probe_table(runner, executable, timeout, report)
    except CommandTimeout:
        report.timed_out = True
        report.failure = f"nvidia-smi timed out after {timeout:g} s"
    except OutputTooLarge as error:
        report.failure = f"nvidia-smi printed more than {error.limit // (1024 * 1024)} MiB; stopped it"
    except OSError as error:
        report.failure = f"nvidia-smi could not be run ({error.strerror or error})"
    if report.driver is None and report.failure is None:
        report.failure = "nvidia-smi gave no driver version"
    return report


def _probe_query(runner: Runner, executable: str, timeout: float, report: SmiReport) -> None:
    for fields in (QUERY_FIELDS, QUERY_FIELDS_WITHOUT_COMPUTE_CAP):
        result = runner.run([executable, f"--query-gpu={','.join(fields)}", "--format=csv,noheader,nounits"], timeout)
        output = result.stdout + "\n" + result.stderr
        if invalid_query_field(output) == "compute_cap":
            continue  # driver older than compute_cap support: ask again without it
        if result.returncode != 0:
            report.failure = f"nvidia-smi failed ({exit_status(result.returncode)}): {_first_line(output)}"
            return
        try:
            rows = parse_query_csv(result.stdout, fields)
            report.gpus = gpus_from_rows(rows)
        except SmiParseError as error:
            report.failure = f"nvidia-smi printed unexpected output ({error})"
            return
        versions = driver_versions_from_rows(rows)
        if versions:
            report.driver = versions[0]
        if len(versions) > 1:
            report.notes.append(f"nvidia-smi reports different driver versions per GPU: {', '.join(versions)}")
        report.failure = None
        return


def _probe_xml(runner: Runner, executable: str, timeout: float, report: SmiReport) -> None:
    result = runner.run([executable, "-q", "-x"], timeout)
    if result.returncode != 0:
        return
    try:
        parsed = parse_xml(result.stdout)
    except SmiParseError:
        return
    report.cuda = report.cuda or parsed.cuda
    if report.driver is None and parsed.driver:
        report.driver = parsed.driver
        report.failure = None
    if not report.gpus and parsed.gpus:
        report.gpus = list(parsed.gpus)


def _probe_table(runner: Runner, executable: str, timeout: float, report: SmiReport) -> None:
    result = runner.run([executable], timeout)
    header = parse_header(result.stdout) if result.returncode == 0 else None
    if header is None:
        return
    report.cuda = report.cuda or header.cuda
    if report.driver is None and header.driver:
        report.driver = header.driver
        report.failure = None
    if not report.gpus:
        report.gpus = parse_table_gpus(result.stdout)
        if report.gpus:
            report.notes.append("GPU names from the nvidia-smi table may be truncated")


def _first_line(text: str) -> str:
    return shown(next((line.strip() for line in text.splitlines() if line.strip()), "no output"), 160)
