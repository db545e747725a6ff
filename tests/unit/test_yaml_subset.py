"""The loader's YAML reader (envpin.compat.yaml_subset): the database's own YAML read without PyYAML, to the
same values and types as `yaml.safe_load`; anything outside its subset is declined (PyYAML reads it then).
The property over garbled and generated documents: tests/fuzz/test_fuzz_database.py."""

from __future__ import annotations

import pytest
import yaml

from envpin.compat import yaml_subset
from envpin.compat.loader import _parse_yaml
from tests.fuzz.test_fuzz_database import same

READ = {
    "scalars": "a: 1\nb: -5\nc: yes\nd: No\ne: ~\nf: null\ng: 012x\nh: text with spaces\ni: 'it''s'\nj: \"q\\\"x\\\\y\"\n",
    "empty value and nested": "a:\nb:\n  c:\n    d: e\n  f: [1, two, \"3\"]\n",
    "sequences": "a:\n- 1\n- two\n-\n  - nested\nb:\n  - x: 1\n    y: [2]\n  - z\n",
    "top-level sequence": "- a: 1\n  b: 2\n- c: 3\n",
    "flow": "a: {b: [c, d], e: \"f\", g: {}}\nh: []\ni: [true, false, null, 12, -3]\n",
    "flow over lines": "a: [x,\n    y, # a comment\n    \"z\"]\nb: 1\n",
    "flow over lines without comments (read with the others)": "- names: [\"A [x]\", \"B\",\n\n    \"C\", d e,\n"
                                                              "    12, {k: [v,\n      w]}]\n  cc: \"1.0\"\n- [a,\n  b]\n",
    "comments": "# head\na: b # tail\n\n   # indented\nc: 'd' # tail\n",
    "folded": "t: >-\n  one\n  two\n\n  three\n\n\nu: >\n  x\n  y\n\nv: 1\n",
    "literal": "t: |\n  one\n  two\nu: |-\n  x\n",
    "hash and colon inside scalars": "a: x#y\nb: http://example.com/a:b\nc: \"# not a comment\"\n",
    "keys that resolve": "12: a\nyes: b\n~: c\n",
    "duplicate keys": "a: 1\nb: 2\na: 3\n",
    "plain over lines (PyYAML's long strings)": "a: one two\n  three\n\n  four\nb: 1\n",
    "quotes over lines": "a: 'it''s\n  long'\nb: \"x\n\n   y \"\nc:\n- 'p\n  q'\n",
    "empty": "",
    "only comments": "# nothing\n\n",
}

DECLINED = {
    "anchor and alias": "a: &x 1\nb: *x\n",
    "tag": "a: !!str 1\n",
    "float": "a: 1.5\n",
    "date": "a: 2026-11-29\n",
    "hex int": "a: 0x1f\n",
    "underscored int": "a: 1_000\n",
    "merge key": "a: <<\n",
    "tab": "a:\tb\n",
    "document marker": "---\na: 1\n",
    "quoted key": "\"a\": 1\n",
    "complex key": "? a\n: b\n",
    "mapping in a plain scalar": "a: b: c\n",
    "flow plain over two lines": "a: [one\n  two]\n",
    "flow plain over two lines, read with the others": "a: [x, one\n  two, y]\nb: [c]\n",
    "flow over lines continued at the parent's indentation": "a: [x,\ny]\n",
    "flow over lines that does not close": "a: [x,\n  y\n",
    "flow over lines with text after it": "a: [x,\n  y] z\n",
    "escape in quotes over lines": "a: \"one\\\n  two\"\n",
    "plain continued with a key": "a: one\n  two: three\n",
    "quotes continued at the parent's indentation": "a: 'one\ntwo'\n",
    "colon without space in flow": "a: [b:c]\n",
    "trailing comma": "a: [b, c,]\n",
    "more-indented folded line": "a: >\n  one\n    two\n",
    "unicode escape": "a: \"\\u00e9\"\n",
    "line separator": "a: b\u2028c\n",
    "byte order mark": "\ufeffa: 1\n",
    "key of 1100 characters": "k" * 1100 + ": v\n",
}


@pytest.mark.parametrize("text", READ.values(), ids=READ.keys())
def test_what_it_reads_is_what_pyyaml_reads(text):
    assert same(yaml_subset.load(text), yaml.load(text, Loader=yaml.CSafeLoader))


@pytest.mark.parametrize("text", DECLINED.values(), ids=DECLINED.keys())
def test_it_declines_what_is_outside_its_subset(text):
    with pytest.raises(yaml_subset.Unsupported):
        yaml_subset.load(text)


def test_a_declined_database_file_is_still_read_through_pyyaml(tmp_path):
    path = tmp_path / "x.yaml"
    path.write_text("a: &x [1, 2.5]\nb: *x\n", encoding="utf-8")
    assert _parse_yaml(path) == {"a": [1, 2.5], "b": [1, 2.5]}


def test_the_character_check_is_the_same_for_ascii_and_other_texts():
    # An ASCII text is checked by bytes.translate, any other by the regular expression: both decline the same.
    for code in [*range(0x3000), 0xFEFF, 0xFFFE, 0xFFFF, 0x2028, 0x2029, 0xD800, 0xDFFF, 0x10000]:
        for text in (chr(code), f"a: b{chr(code)}\n", f"é{chr(code)}"):
            assert yaml_subset._declined(text) == bool(yaml_subset._DECLINED_CHARACTERS.search(text)), hex(code)
