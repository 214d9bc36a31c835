"""Families everywhere: conform and handoff on every family of the catalog, in every notation that can state
it, checked against the spec's own table; the member a given fixes; every member at once; --param."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import cli
from tiers import ids_by_kind
from verify.outputs.text_results import result_text
from verify import api
from verify.results.members import FamilyResult

SPECS = api.load("specs")
FAMILIES = [lay.id for lay in api.layouts(SPECS) if lay.is_family and not lay.unspecified and not lay.partial]
D16 = "wgmma.m64nNk16.D.f32"
D_INDEX = ("row = 16 * (tid // 32) + (tid % 32) // 4 + 8 * ((i // 2) % 2)\n"
           "col = (tid % 4) * 2 + (i % 2) + 8 * (i // 4)\n")


def test_the_catalog_has_the_families_the_issue_names() -> None:
    names = " ".join(FAMILIES)
    for part in ("wgmma.m64nNk16.D", "wgmma.sp.m64nNk32.D", "ldmatrix.m8n8.R.b16", "stmatrix.m8n8", "tcgen05.ld.32x32b",
                 "tcgen05.st.16x256b"):
        assert part in names, part


@pytest.mark.parametrize("lid", ids_by_kind(api.layout(SPECS, lid) for lid in FAMILIES))  # tests/tiers.py
def test_every_family_conforms_to_its_own_formula_as_index_code_for_every_member(lid: str) -> None:
    """The spec's own formula, given as index code against the family, is a family too and is equal for every
    member (both engines, member by member); its table conforms for one member by extent."""
    spec = api.layout(SPECS, lid)
    code = re.sub(r"//[^\n]*", "", spec.provenance.formula_text)  # the spec's comments: '//' is floor division in index code
    given = api.index_code(code, spec)
    assert given.is_family
    res = api.conform(spec, given)
    assert isinstance(res, FamilyResult) and res.status == "equal", (lid, result_text(res)[:400])
    assert len(res.members) == len(spec.instances()) and res.exit_code() == 0
    env, member = spec.instances()[-1]
    table = json.dumps({"entries": [{"lane": e["lane"], "i": e["i"], "row": e["row"], "col": e["col"]}
                                    for e in _entries(member)]})
    tagged = api.table(table, spec)
    assert dict(tagged.params_bound) == env  # the table's extent fixed the member
    one = api.conform(spec, tagged)
    assert one.status == "equal" and "the member whose extent the given has" in one.member_note


def _entries(lay):
    from verify.outputs.table import table_entries
    return table_entries(lay)


def test_a_cute_d_of_one_size_is_compared_with_that_member(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = cli(capsys, "conform", D16, "--cute", "((4,8,4),(2,2,3)):((128,1,16),(64,8,512))")
    assert rc == 0
    assert out.splitlines()[:2] == [
        f"conform {D16} (N = 24) <- cute '((4,8,4),(2,2,3)):((128,1,16),(64,8,512))': equal",
        "  member: N = 24, the member whose extent the given has"]


def test_a_wrong_member_is_named(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    wrong = D_INDEX.replace("8 * (i // 4)", "8 * (i // 4)) % 128").replace("col = (", "col = ((")
    path = tmp_path / "d.txt"
    path.write_text(wrong, encoding="utf-8")
    rc, out, _ = cli(capsys, "conform", D16, "--formula", str(path))
    assert rc == 1
    assert out.splitlines()[0] == (f"conform {D16} <- index {path}: differs (equal at N = 8..128 step 8; differs at "
                                   "N = 136..256 step 8)")
    assert "conform wgmma.m64nNk16.D.f32 (N = 136)" in out and "first difference: thread 0 element d64" in out
    rc, out, _ = cli(capsys, "conform", D16, "--formula", str(path), "--param", "N=64")
    assert rc == 0 and out.splitlines()[0].endswith(": equal")
    rc, out, _ = cli(capsys, "conform", D16, "--formula", str(path), "--format", "json")
    doc = json.loads(out)["conform"]
    assert doc["status"] == "differs" and doc["first"]["params"] == {"N": 136}
    assert [m["status"] for m in doc["members"]].count("equal") == 16


def test_param_errors_are_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "d.txt"
    path.write_text(D_INDEX, encoding="utf-8")
    for args, msg in ((["--param", "N=12"], "--param N=12: not a value of N (8..256 step 8)"),
                      (["--param", "M=8"], "--param M=8: no parameter M here (parameters: N = 8..256 step 8)")):
        rc, out, err = cli(capsys, "conform", D16, "--formula", str(path), *args)
        assert rc == 2 and out == "" and err.strip() == f"ptx-verify: error: {msg}", err
    a_code = tmp_path / "a.txt"  # code that reads no N, against a layout that is no family: N is no one's
    a_code.write_text("row = lane // 4 + 8 * ((i // 2) % 2)\ncol = lane % 4 * 2 + i % 2 + 8 * (i // 4)\n", encoding="utf-8")
    rc, _, err = cli(capsys, "conform", "mma.m16n8k16.A.f16_bf16", "--formula", str(a_code), "--param", "N=8")
    assert rc == 2 and "no parameter N here (parameters: none; mma.m16n8k16.A.f16_bf16 is not a family)" in err
    rc, _, err = cli(capsys, "conform", D16, "--table", "-", "--param", "N=8")  # stdin empty: bad input, one line
    assert rc == 2 and len(err.strip().splitlines()) == 1


def test_a_table_of_no_member_is_named(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"entries": [{"lane": 0, "i": 0, "row": 0, "col": 0}]}), encoding="utf-8")
    rc, _, err = cli(capsys, "conform", D16, "--table", str(path))
    assert rc == 2 and "is no member of wgmma.m64nNk16.D.f32" in err and "give --param" in err


def test_handoff_between_families_every_member_and_one(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = cli(capsys, "handoff", "tcgen05.ld.16x256b.R.b32@corrected", "tcgen05.st.16x256b.R.b32@corrected")
    assert rc == 0 and out.splitlines()[0].endswith("free for every member (NUM = 1, 2, 4, 8, 16, 32)")
    rc, out, _ = cli(capsys, "handoff", D16, "wgmma.m64nNk16.A.f16_bf16", "--param", "N=16")
    assert rc == 0 and out.splitlines()[0] == f"handoff {D16} (N = 16) -> wgmma.m64nNk16.A.f16_bf16: free"
    rc, out, _ = cli(capsys, "handoff", D16, "wgmma.m64nNk16.A.f16_bf16", "--format", "json")
    doc = json.loads(out)["handoff"]
    assert rc == 1 and doc["status"] == "incompatible" and doc["members"][0] == {"params": {"N": 8}, "status": "free"}


def test_table_and_pictures_of_a_family_member(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    rc, out, _ = cli(capsys, "table", D16, "--param", "N=24", "--format", "json")
    assert rc == 0 and (json.loads(out)["rows"], json.loads(out)["cols"]) == (64, 24)
    rc, _, err = cli(capsys, "pictures", "specs/wgmma.m64nNk16.toml", "--out", str(tmp_path / "p"))
    assert rc == 0, err
    assert any(p.name.startswith("wgmma.m64nNk16.D.f32") for p in (tmp_path / "p").iterdir())
