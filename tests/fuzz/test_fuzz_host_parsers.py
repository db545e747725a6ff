"""Fuzz the host probes' parsers: nvidia-smi (CSV, table, --version, XML), /proc and /sys files, nvcc and
the toolkit's version files. Seeds are the recorded real outputs in tests/fixtures/host/.

Each parser either returns a value of its documented shape or raises its documented error
(`SmiParseError` for the CSV and XML parsers); the others are documented to answer None or an empty
list for anything they do not recognise, so for them any exception is a bug.
"""

from __future__ import annotations

import os
import tempfile
import xml.etree.ElementTree as ElementTree

from hypothesis import example, given
from hypothesis import strategies as st

from envpin.facts.host import Gpu, is_compute_capability, is_driver_version
from envpin.host import nvidia_smi, procfs, toolkits
from envpin.host.nvidia_smi import QUERY_FIELDS, QUERY_FIELDS_WITHOUT_COMPUTE_CAP, SmiParseError
from tests.fuzz.support import Samples, fixture_texts, outcome, parser_text, python_recursion_limit_input, tokens_text

CSV_NOHEADER = fixture_texts("smi_csv_noheader_*.txt", "smi_csv_driver_version_*.txt", "smi_csv_compute_cap_*.txt")
CSV_NOHEADER.append("0, NVIDIA GeForce RTX 3090, 535.104.05, 8.6, 24576\n1, NVIDIA GeForce GTX 1080 Ti, 535.104.05, 6.1, 11264\n")
CSV_HEADER = fixture_texts("smi_csv_header_*.txt")
TABLES = fixture_texts("smi_table_*.txt")
VERSIONS = fixture_texts("smi_version_*.txt")
XMLS = fixture_texts("smi_xml_*.xml")
PROC = fixture_texts("proc_driver_nvidia_version_*.txt")
PROC.extend(["535.104.05\n", "565.57.01"])
NVCC = fixture_texts("nvcc_*.txt")
VERSION_JSON = fixture_texts("cuda_version_*.json")

field_lists = st.one_of(
    st.sampled_from((QUERY_FIELDS, QUERY_FIELDS_WITHOUT_COMPUTE_CAP)),
    st.lists(st.sampled_from(QUERY_FIELDS + ("pci.bus_id", "temperature.gpu", "")), max_size=7).map(tuple),
)
# A --query-gpu answer built cell by cell: the realistic cells plus the hostile ones.
csv_cells = st.one_of(
    st.sampled_from(("0", "1", "NVIDIA GeForce RTX 3090", "535.104.05", "8.6", "24576", "24576 MiB", "[N/A]",
                     "[Not Supported]", "", "²", "٣", "9" * 5000, '"quoted, comma"', '"unterminated', "\x00")),
    st.text(max_size=10),
)
csv_built = st.lists(st.lists(csv_cells, min_size=1, max_size=6).map(", ".join), max_size=6).map("\n".join)


def check_gpus(gpus) -> None:
    for gpu in gpus:
        assert isinstance(gpu, Gpu) and isinstance(gpu.name, str) and gpu.name
        assert isinstance(gpu.index, int)
        assert gpu.compute_capability is None or is_compute_capability(gpu.compute_capability)
        assert gpu.memory_mib is None or isinstance(gpu.memory_mib, int)


def check_rows_to_gpus(rows) -> None:
    """What the probe does with parsed rows: GPUs (or SmiParseError for a nameless row) and driver versions."""
    gpus, _ = outcome("nvidia_smi.gpus_from_rows", nvidia_smi.gpus_from_rows, rows, allowed=(SmiParseError,))
    if gpus is not None:
        check_gpus(gpus)
    versions, _ = outcome("nvidia_smi.driver_versions_from_rows", nvidia_smi.driver_versions_from_rows, rows)
    assert all(is_driver_version(v) for v in versions)


@given(text=st.one_of(parser_text(CSV_NOHEADER), csv_built), fields=field_lists)
@example(text="²,NVIDIA GeForce RTX 3090,535.104.05,8.6,24576\n", fields=QUERY_FIELDS)  # isdigit but not int()
@example(text="0,A," + "x" * 200_000 + ",8.6,1\n", fields=QUERY_FIELDS)  # past the csv module's field limit
@example(text="0,A,535.104.05,8.6," + "9" * 5000 + "\n", fields=QUERY_FIELDS)  # more digits than int() converts
def test_parse_query_csv(text, fields):
    rows, _ = outcome("nvidia_smi.parse_query_csv", nvidia_smi.parse_query_csv, text, fields, allowed=(SmiParseError,))
    if rows is not None:
        assert rows and all(set(row) == set(fields) for row in rows)
        check_rows_to_gpus(rows)


@given(rows=st.lists(st.dictionaries(st.sampled_from(QUERY_FIELDS), st.none() | csv_cells), min_size=1, max_size=4))
def test_gpus_from_rows(rows):
    check_rows_to_gpus(rows)


@given(text=st.one_of(parser_text(CSV_HEADER), csv_built))
def test_parse_query_csv_with_header(text):
    rows, _ = outcome("nvidia_smi.parse_query_csv_with_header", nvidia_smi.parse_query_csv_with_header, text,
                      allowed=(SmiParseError,))
    if rows is not None:
        check_rows_to_gpus(rows)


@given(text=parser_text(TABLES))
def test_parse_header(text):
    header, _ = outcome("nvidia_smi.parse_header", nvidia_smi.parse_header, text)
    if header is not None:
        assert header.driver is None or is_driver_version(header.driver)
        assert header.cuda is None or isinstance(header.cuda, str)


@given(text=parser_text(TABLES))
@example(text="|===\n| " + "9" * 5000 + "  NVIDIA A100  Off |\n|  0MiB / 40960MiB |\n")  # more digits than int() converts
def test_parse_table_gpus(text):
    gpus, _ = outcome("nvidia_smi.parse_table_gpus", nvidia_smi.parse_table_gpus, text)
    check_gpus(gpus)


@given(text=parser_text(VERSIONS))
def test_parse_version_output(text):
    header, _ = outcome("nvidia_smi.parse_version_output", nvidia_smi.parse_version_output, text)
    if header is not None:
        assert header.driver is None or is_driver_version(header.driver)


XML_TAGS = ("nvidia_smi_log", "driver_version", "kmd_version", "cuda_version", "cuda_umd_version", "gpu",
            "product_name", "fb_memory_usage", "total", "attached_gpus")


@st.composite
def xml_documents(draw, depth: int = 3) -> str:
    """Well-formed XML over nvidia-smi's element names, with hostile text in the elements."""

    def element(level: int) -> ElementTree.Element:
        node = ElementTree.Element(draw(st.sampled_from(XML_TAGS)))
        node.text = draw(st.one_of(st.none(), tokens_text.filter(_xml_safe)))
        if level < depth:
            node.extend(element(level + 1) for _ in range(draw(st.integers(0, 3))))
        return node

    root = element(0)
    if draw(st.booleans()):
        root.tag = "nvidia_smi_log"
    return ElementTree.tostring(root, encoding="unicode")


def _xml_safe(text: str) -> bool:
    # Characters XML 1.0 cannot hold at all; ElementTree would write them and then refuse to read them back.
    return all(ch in "\t\n\r" or ord(ch) >= 0x20 for ch in text) and "\ufffe" not in text and "\uffff" not in text


@given(text=st.one_of(parser_text(XMLS), xml_documents()))
@example(text="<nvidia_smi_log><gpu><product_name>A</product_name><fb_memory_usage><total>" + "9" * 5000
         + " MiB</total></fb_memory_usage></gpu></nvidia_smi_log>")
@example(text='<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
         '<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">]>'
         "<nvidia_smi_log><driver_version>&d;&d;&d;&d;</driver_version></nvidia_smi_log>")  # entity expansion
def test_parse_xml(text):
    parsed, _ = outcome("nvidia_smi.parse_xml", nvidia_smi.parse_xml, text, allowed=(SmiParseError,))
    if parsed is not None:
        assert parsed.driver is None or is_driver_version(parsed.driver)
        check_gpus(parsed.gpus)


# ---------------------------------------------------------------- /proc and /sys


@given(text=parser_text(PROC))
def test_parse_proc_and_sys_versions(text):
    for name, parse in (("procfs.parse_proc_driver_version", procfs.parse_proc_driver_version),
                        ("procfs.parse_sys_module_version", procfs.parse_sys_module_version)):
        version, _ = outcome(name, parse, text)
        assert version is None or is_driver_version(version)


@given(data=st.binary(max_size=4096) | st.sampled_from(PROC).map(lambda t: t.encode()))
def test_read_text_then_parse_any_bytes(data):
    # The probe reads these files with errors="replace": invalid UTF-8 must reach the parser as text.
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "proc/driver/nvidia"))
        with open(os.path.join(root, procfs.PROC_DRIVER_VERSION), "wb") as handle:
            handle.write(data)
        text, _ = outcome("procfs.read_text", procfs.read_text, root, procfs.PROC_DRIVER_VERSION)
        assert isinstance(text, str)
        version, _ = outcome("procfs.parse_proc_driver_version", procfs.parse_proc_driver_version, text)
        assert version is None or is_driver_version(version)


# ---------------------------------------------------------------- CUDA toolkits


@given(text=parser_text(NVCC))
def test_parse_nvcc_version(text):
    for name, parse in (("toolkits.parse_nvcc_version", toolkits.parse_nvcc_version),
                        ("toolkits.parse_nvcc_full_version", toolkits.parse_nvcc_full_version)):
        version, _ = outcome(name, parse, text)
        assert version is None or isinstance(version, str)


version_json_documents = st.one_of(
    parser_text(VERSION_JSON),
    st.recursive(
        st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=8),
                  st.sampled_from(("11.5.2", "12.4", "13", "x.y", "１２.４.１"))),
        lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(("cuda", "version", "name", "x")), inner, max_size=3)),
        max_leaves=8,
    ).map(lambda value: __import__("json").dumps(value)),
)


@given(text=version_json_documents)
@example(text=python_recursion_limit_input())
def test_parse_version_json(text):
    version, _ = outcome("toolkits.parse_version_json", toolkits.parse_version_json, text)
    assert version is None or isinstance(version, str)


@given(text=st.one_of(parser_text(Samples(["CUDA Version 10.2.89\n", "CUDA Version 11.0.228"])), tokens_text))
def test_parse_version_txt(text):
    version, _ = outcome("toolkits.parse_version_txt", toolkits.parse_version_txt, text)
    assert version is None or isinstance(version, str)


@given(path=st.one_of(st.text(), st.sampled_from(("/usr/local/cuda-12.4", "C:\\CUDA\\v12.4", "/opt/cuda-٣.٣"))))
def test_version_from_directory_name(path):
    version, _ = outcome("toolkits.version_from_directory_name", toolkits.version_from_directory_name, path)
    assert version is None or isinstance(version, str)
