"""conform on layouts with no register facts (shared memory, Tensor Memory, storage): the map someone wrote
against the spec's map, both engines, every [[layout]] of the catalog."""
from __future__ import annotations

import json
import re

import pytest

from conftest import cli
from tiers import ids_by_kind
from verify import api

SPECS = api.load("specs")
MAPS = [m for m in api.map_layouts(SPECS)]
WITH_TEXT = [m.id for m in MAPS if m.provenance.formula_text.strip()]


def _mutate(text: str) -> str:
    """The last output definition plus one: a map that differs wherever it is defined."""
    lines = text.rstrip().splitlines()
    head, _, _ = lines[-1].partition(" for ")
    if lines[-1].lstrip().startswith(("Otherwise", "for ")) or re.match(r"^\s", lines[-1]) or "=" not in head:
        return ""
    name, _, expr = head.partition("=")
    return "\n".join(lines[:-1] + [f"{name.strip()} = ({expr.strip()}) + 1" + (lines[-1][len(head):])])


@pytest.mark.parametrize("lid", ids_by_kind(api.layout(SPECS, lid) for lid in WITH_TEXT))  # tests/tiers.py
def test_each_map_conforms_to_its_own_formula_and_not_to_a_changed_one(lid, tmp_path, capsys):
    lay = api.layout(SPECS, lid)
    p = tmp_path / "given.txt"
    p.write_text(lay.provenance.formula_text, encoding="utf-8")
    rc, out, err = cli(capsys, "conform", lid, "--formula", str(p), "--format", "json")
    assert rc == 0, (lid, err, out)
    data = json.loads(out)["conform"]
    assert data["status"] == "equal" and all(c["engines"] == {"z3": "proved", "enumeration": "proved"}
                                             for c in data["compared"] if c["status"] == "proved")
    changed = _mutate(lay.provenance.formula_text)
    if not changed:
        pytest.skip("the last definition is a case split: the literal change is in the cases test")
    p.write_text(changed, encoding="utf-8")
    rc, out, err = cli(capsys, "conform", lid, "--formula", str(p), "--format", "json")
    data = json.loads(out)["conform"]
    assert rc == 1 and data["status"] == "differs", (lid, changed, out)
    assert any(c["engines"] == {"z3": "refuted", "enumeration": "refuted"} and c["counterexample"]
               for c in data["compared"])


def test_a_cute_swizzle_against_the_128B_atom_equal_wrong_swizzle_differs_at_the_first_point(capsys):
    a = "wgmma.shared.atom.K.128B"
    rc, out, _ = cli(capsys, "conform", a, "--cute", "Sw<3,4,3> o smem_ptr[16b](unset) o (8,64):(64,1)")
    assert rc == 0 and out.splitlines()[0] == f"conform {a} (T = 8) <- cute argument: equal"
    rc, out, _ = cli(capsys, "conform", a, "--cute", "Sw<2,4,3> o smem_ptr[16b](unset) o (8,64):(64,1)")
    assert rc == 1 and out.splitlines()[1] == ("  T = 8: refuted (enumeration refuted, z3 refuted): at row 4, col 0: "
                                               "spec (offset 288), given (offset 256)")
    # the element type binds T: the same text of 8-bit elements is another member (T = 16) and not its tile
    rc, out, _ = cli(capsys, "conform", a, "--cute", "(8,64):(64,1)", "--type", "e4m3")
    assert rc == 1 and "differs" in out.splitlines()[0]


def test_a_tile_of_no_member_size_is_said_and_nothing_is_compared(capsys):
    rc, out, _ = cli(capsys, "conform", "wgmma.shared.atom.K.128B", "--cute",
                     "Sw<3,4,3> o smem_ptr[16b](unset) o (8,32):(32,1)", "--format", "json")
    data = json.loads(out)["conform"]
    assert rc == 1 and data["status"] == "differs" and not data["compared"]
    assert data["reason"] == "no member of wgmma.shared.atom.K.128B has the given's sizes (row 8, col 32)"


@pytest.mark.parametrize("argv, needle", [
    (["tcgen05.datapath.D", "--cute", "(8,64):(64,1)"], "is a tmem layout: give it as index code over (row, col)"),
    (["wgmma.shared.atom.K.128B", "--cute", "(8,64):(64,1)"], "argument:1:1: error: the element width"),
    (["wgmma.shared.atom.K.128B", "--cute", "Sw<3,4,3> o (8,64):(64,1"], "argument:1:25: error:"),
    (["wgmma.shared.atom.K.128B", "--cute", "(8,64):(64,1)", "--type", "f16", "--warps", "2x2"], "--warps is for"),
    (["mma.m16n8k16.float.C.f32", "--cute", "(8,64):(64,1)", "--type", "f16"], "--type and --tile are for shared"),
    (["storage.sf.cutlass.128x4.tile", "--formula", "-"], "<stdin>:1:15: error: expected an expression"),
    (["storage.sf.cutlass.128x4.tile", "--cute", "(8,64):(64,1)"], "is a storage layout: give it as index code"),
])
def test_map_conform_bad_input_is_one_line_exit_2(argv, needle, capsys, monkeypatch):
    import io
    import sys
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"offset = row +\n")))
    rc, out, err = cli(capsys, "conform", *argv)
    assert rc == 2 and len(err.strip().splitlines()) == 1 and needle in err, err


def test_a_map_table_with_a_changed_point_differs_there_and_bad_tables_are_one_line(tmp_path, capsys):
    lid = "storage.sf.cutlass.128x4.tile"
    rc, out, _ = cli(capsys, "table", lid, "--format", "json")
    doc = json.loads(out)
    doc["entries"][5]["offset"] = 999  # (row 1, kb 1) moved
    p = tmp_path / "t.json"
    p.write_text(json.dumps(doc), encoding="utf-8")
    rc, out, _ = cli(capsys, "conform", lid, "--table", str(p))
    assert rc == 1 and out.splitlines()[1] == ("  refuted (enumeration refuted, z3 refuted): at row 1, kb 1: "
                                               "spec (offset 17), given (offset 999)")
    for bad, needle in [('{"entries": [{"row": 0}]}', "t.json:1:14: error: entry has no 'kb'"),
                        ('{"entries": [{"row": 0, "kb": 0, "offset": 1}, {"row": 0, "kb": 0, "offset": 2}]}',
                         "row 0, kb 0 appears twice"),
                        ('{"inputs": [{"name": "m", "size": 4}], "entries": []}', "the spec's are ['row', 'kb']"),
                        ('[{"row": 0, "kb": 9, "offset": 1}]', "'kb' = 9 is outside 0..3")]:
        p.write_text(bad, encoding="utf-8")
        rc, _, err = cli(capsys, "conform", lid, "--table", str(p))
        assert rc == 2 and len(err.strip().splitlines()) == 1 and needle in err, (bad, err)


def test_handoff_of_a_map_layout_points_to_consistent(capsys):
    rc, _, err = cli(capsys, "handoff", "wgmma.shared.atom.K.128B", "mma.m16n8k16.A.f16_bf16")
    assert rc == 2 and "ptx-verify consistent --writer wgmma.shared.atom.K.128B" in err


def test_api_conform_map_index_code_over_the_family_parameters_compares_every_member():
    r = api.conform_map("storage.sf.linear", "index", "offset = (l * M + m) * KB + kb    for xi where m < M && kb < KB")
    assert r.status == "equal" and len(r.compared) == 1 and r.compared[0][1].engines == {"z3": "proved",
                                                                                          "enumeration": "proved"}
    r = api.conform_map("storage.sf.linear", "index", "offset = (l * M + m) * KB + kb")  # padding defined
    assert r.status == "differs" and "spec undefined, given (offset 2)" in r.compared[0][1].message
