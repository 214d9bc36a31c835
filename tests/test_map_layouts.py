"""Layouts with no register facts (``[[layout]]`` in a spec, ``MapLayout`` in the model): loaded with
positions, checked by both engines, listed, drawn, and every bad input a one-line positioned error."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from verify import api
from verify.catalog.spec import load_spec_text
from verify.errors import SpecError
from verify.layout.model import MapLayout

from conftest import cli

SPEC = '''schema = 1

[source]
section = "test.smem"
title = "a swizzled tile"

[[layout]]
id = "smem.sw.ok"
kind = "shared"
inputs = { row = 8, col = 8 }
outputs = { offset = 64 }
unit = "elements"
formula = """
offset = (row * 8 + col) ^ (row % 8)
"""

[[layout]]
id = "smem.sw.bad"
kind = "shared"
inputs = { row = 8, col = 8 }
outputs = { offset = 64 }
formula = """
offset = (row * 8 + col) ^ ((row % 8) * 9)
"""
expect = { injective = "refuted", surjective = "refuted" }
erratum = "the xor term is scaled"
[layout.corrected]
formula = """
offset = (row * 8 + col) ^ (row % 8)
"""

[[layout]]
id = "smem.family"
kind = "shared"
params = { T = [4, 8] }
inputs = { row = "T", col = 8 }
outputs = { offset = "8 * T" }
formula = """
offset = row * 8 + col
"""
'''


@pytest.fixture()
def spec_dir(tmp_path: Path) -> Path:
    (tmp_path / "smem.toml").write_text(SPEC, encoding="utf-8")
    return tmp_path


def test_map_layouts_load_with_their_fields() -> None:
    spec = load_spec_text(SPEC, "smem.toml")
    assert spec.layouts == () and [m.id for m in spec.maps] == ["smem.sw.ok", "smem.sw.bad", "smem.sw.bad@corrected",
                                                                "smem.family"]
    ok = spec.maps[0]
    assert isinstance(ok, MapLayout) and ok.kind == "shared" and ok.unit == "elements"
    assert [(d.name, d.size) for d in ok.inputs] == [("row", 8), ("col", 8)]
    assert ok.evaluate(row=1, col=0) == {"offset": 9}
    with pytest.raises(ValueError, match="outside 0..7"):
        ok.evaluate(row=8, col=0)
    fam = spec.maps[3]
    assert fam.is_family and fam.instance(T=8).evaluate(row=7, col=7) == {"offset": 63}


def test_check_proves_refutes_and_keeps_errata(spec_dir: Path) -> None:
    specs = api.load([spec_dir])
    report = api.check_all(specs)
    by_id = {m.layout.id: m for m in report.maps}
    assert [c.status for c in by_id["smem.sw.ok"].checks] == ["proved"] * 3
    bad = by_id["smem.sw.bad"]
    assert bad.get("injective").status == "refuted" and bad.as_expected
    assert bad.get("injective").engines == {"z3": "refuted", "enumeration": "refuted"}
    assert bad.get("surjective").counterexample.to_json() == {"params": {}, "at": {"offset": 8}}
    assert [c.status for c in by_id["smem.sw.bad@corrected"].checks] == ["proved"] * 3
    assert [c.status for c in by_id["smem.family"].checks] == ["proved"] * 3
    assert report.as_expected and {f.layout for f in report.findings} == {"smem.sw.bad"}


def test_an_unexpected_failure_exits_1(spec_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (spec_dir / "smem.toml").write_text(SPEC.replace('expect = { injective = "refuted", surjective = "refuted" }\n', ""),
                                        encoding="utf-8")
    code, out, _ = cli(capsys, *["check", str(spec_dir)])
    assert code == 1
    assert "injective refuted [expected proved]: row 0, col 1 and row 1, col 0 both land at (offset 1)" in out
    assert "0 layouts, 4 maps, 0 instructions: 2 findings (0 known errata), 2 unexpected" in out


def test_list_table_and_json(spec_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, *["list", "--specs", str(spec_dir)])
    assert code == 0 and "smem.sw.ok" in out and "shared" in out
    code, out, _ = cli(capsys, *["table", "smem.sw.ok", "--specs", str(spec_dir)])
    assert code == 0 and out.splitlines()[4] == "   1   9  8 11 10 13 12 15 14"
    code, out, _ = cli(capsys, *["table", "smem.sw.ok", "--specs", str(spec_dir), "--format", "json"])
    doc = json.loads(out)
    assert doc["entries"][8] == {"row": 1, "col": 0, "offset": 9}
    code, out, err = cli(capsys, *["table", "smem.family", "--specs", str(spec_dir)])
    assert code == 2 and "is a family: name its member with --param T=VALUE (4..8 step 4)" in err
    code, out, _ = cli(capsys, *["check", str(spec_dir), "--format", "json"])
    doc = json.loads(out)
    assert [m["id"] for m in doc["maps"]][:2] == ["smem.sw.ok", "smem.sw.bad"]
    assert doc["maps"][3]["params"] == {"T": [4, 8]} and doc["maps"][3]["inputs"][0] == {"name": "row", "size": "T"}


@pytest.mark.parametrize("old,new,where,message", [
    ('inputs = { row = 8, col = 8 }\noutputs = { offset = 64 }\nunit', 'inputs = { row = 8, col = 8 }\noutputs = { row = 64 }\nunit',
     (11, 1), "row is both an input and an output"),
    ('kind = "shared"\ninputs = { row = 8, col = 8 }\noutputs = { offset = 64 }\nunit',
     'kind = "smem"\ninputs = { row = 8, col = 8 }\noutputs = { offset = 64 }\nunit', (9, 1), "kind must be one of"),
    ("offset = (row * 8 + col) ^ (row % 8)\n\"\"\"\n\n[[layout]]\nid = \"smem.sw.bad\"",
     "offset = (row * 8 + colx) ^ (row % 8)\n\"\"\"\n\n[[layout]]\nid = \"smem.sw.bad\"", (14, 21), "unknown identifier 'colx'"),
    ('unit = "elements"', 'unit = "words"', (12, 1), "unit is 'bytes' or 'elements'"),
    ('expect = { injective = "refuted", surjective = "refuted" }', 'expect = { bijective = "refuted" }', (25, 12),
     "unknown check 'bijective'"),
])
def test_bad_map_layouts_are_positioned_errors(old: str, new: str, where: tuple[int, int], message: str) -> None:
    assert old in SPEC
    with pytest.raises(SpecError) as e:
        load_spec_text(SPEC.replace(old, new, 1), "x.toml")
    assert (e.value.line, e.value.col) == where and message in str(e.value)
