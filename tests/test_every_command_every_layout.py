"""Every command that takes a layout, on every layout of the bundled catalog: a verdict (exit 0 or 1) or a
one-line error (exit 2), never a traceback.  Families included: a command on a family answers for every
member, for the member ``--param`` names, or says in one line why it needs one.

The cross-product is the point (the layout model issue): each command was written for one kind of layout,
and most real failures were a command meeting a kind it was not written for (a family, a map with no
register facts, a Tensor Memory codomain, a selector).  New kinds of layout join by being in the catalog.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import cli
from tiers import ids_by_kind
from verify.outputs.text_results import result_text
from verify import api

SPECS = api.load("specs")
FRAGMENTS = [lay.id for lay in api.layouts(SPECS)]
MAPS = [m.id for m in api.map_layouts(SPECS)]


def _behaviour(lay) -> tuple:
    """What conform and handoff depend on besides the id: layouts that share it (every m16n8kX C, a section's
    .u8/.s8 and .e4m3/.e5m2 A...) behave alike, so the expensive commands run once per distinct one."""
    return (type(lay.map), lay.map.key(), lay.domain, lay.codomain, lay.operand, lay.unspecified, lay.partial)


DISTINCT = list({_behaviour(api.layout(SPECS, lid)): lid for lid in reversed(FRAGMENTS)}.values())[::-1]
# The README's command runs the first layout of each kind, CI's integration tier the others (tests/tiers.py).
DISTINCT_BY_KIND = ids_by_kind(api.layout(SPECS, lid) for lid in DISTINCT)
MAPS_BY_KIND = ids_by_kind(api.layout(SPECS, lid) for lid in MAPS)


def _one_line_or_verdict(rc: int, out: str, err: str, what: str) -> None:
    assert rc in (0, 1, 2), (what, rc, err)
    assert "Traceback" not in out + err, (what, err)
    if rc == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and "error" in lines[0], (what, err)
        assert not any(bad in lines[0] for bad in ("Var(", "Pos(", "BinOp(", "object at 0x")), (what, err)


def _member_args(lay) -> list[str]:
    """``--param`` for the smallest member of a family (none for a plain layout)."""
    params = lay.domain.params if hasattr(lay, "domain") else lay.params
    return [x for p in params for x in ("--param", f"{p.name}={p.values[0]}")]


@pytest.mark.parametrize("lid", ids_by_kind(api.layout(SPECS, lid) for lid in FRAGMENTS + MAPS))
def test_table_text_json_and_member(lid: str, capsys: pytest.CaptureFixture[str]) -> None:
    lay = api.layout(SPECS, lid)
    for fmt in ("text", "json"):
        rc, out, err = cli(capsys, "table", lid, "--format", fmt)
        _one_line_or_verdict(rc, out, err, f"table {lid} {fmt}")
        if lay.is_family:
            rc, out, err = cli(capsys, "table", lid, "--format", fmt, *_member_args(lay))
            assert rc == 0, (lid, err)
        else:
            assert rc == 0, (lid, err)


@pytest.mark.parametrize("lid", DISTINCT_BY_KIND)
def test_conform_each_fragment_with_its_own_table(lid: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A fragment's own table (what ``table --format json`` prints) conforms to it: ``equal``, or
    ``unspecified`` for the doc's unspecified maps; a family's member picked by ``--param``."""
    lay = api.layout(SPECS, lid)
    member = _member_args(lay)
    rc, out, err = cli(capsys, "table", lid, "--format", "json", *member)
    assert rc == 0, err
    path = tmp_path / "t.json"
    path.write_text(out, encoding="utf-8")
    rc, out, err = cli(capsys, "conform", lid, "--table", str(path), *member)
    _one_line_or_verdict(rc, out, err, f"conform {lid}")
    if lay.unspecified:
        assert rc == 1 and ": unspecified" in out.splitlines()[0]
    elif rc == 2:
        assert "empty table" in err or "no cell" in err, (lid, err)  # a selector whose member holds nothing
    else:
        assert rc == 0 and out.splitlines()[0].endswith(": equal"), (lid, out)


@pytest.mark.parametrize("lid", DISTINCT_BY_KIND)
def test_handoff_each_fragment_into_itself(lid: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Into itself (a family: its smallest member; every member is tests/test_families.py's business)."""
    lay = api.layout(SPECS, lid)
    rc, out, err = cli(capsys, "handoff", lid, lid, *_member_args(lay))
    _one_line_or_verdict(rc, out, err, f"handoff {lid}")
    if not lay.unspecified:
        assert rc == 0 and ": free" in out.splitlines()[0], (lid, out)


@pytest.mark.parametrize("lid", MAPS_BY_KIND)
def test_conform_and_handoff_of_each_map_layout(lid: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A map layout's own table (``table --format json``, a family's smallest member) conforms to it: ``equal``,
    decided by both engines at that member; handoff from a map layout is one line pointing to consistent
    (its own formula conforming, and a changed one differing, is tests/test_map_conform.py's)."""
    rc, out, err = cli(capsys, "table", lid, "--format", "json", *_member_args(api.layout(SPECS, lid)))
    assert rc == 0, (lid, err)
    path = tmp_path / "t.json"
    path.write_text(out, encoding="utf-8")
    rc, out, err = cli(capsys, "conform", lid, "--table", str(path), "--format", "json")
    _one_line_or_verdict(rc, out, err, f"conform {lid}")
    data = json.loads(out)["conform"]
    assert rc == 0 and data["status"] == "equal", (lid, out)
    assert any(c["engines"] == {"z3": "proved", "enumeration": "proved"} for c in data["compared"]), (lid, out)
    rc, out, err = cli(capsys, "handoff", lid, "mma.m16n8k16.float.C.f32")
    _one_line_or_verdict(rc, out, err, f"handoff {lid}")
    assert rc == 2 and "ptx-verify consistent" in err, (lid, err)


@pytest.mark.parametrize("lid", MAPS_BY_KIND)
def test_check_each_map_layout_through_the_api(lid: str) -> None:
    res = api.check(api.layout(SPECS, lid))
    assert res.checks and all(c.status in ("proved", "refuted") for c in res.checks), lid


def test_check_and_list_json_name_every_layout(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = cli(capsys, "list", "--format", "json")
    doc = json.loads(out)
    assert [x["id"] for x in doc["layouts"]] == FRAGMENTS and [x["id"] for x in doc.get("maps", [])] == MAPS


@pytest.mark.parametrize("lid", DISTINCT_BY_KIND)
def test_conform_each_fragment_tiled_over_two_by_two_warps(lid: str) -> None:
    """Every fragment (a family: its smallest member), tiled as 2 x 2 units over twice its extent with the
    algebra (``api.block_tile``), conforms to it as ``tiled`` with the placements of Triton's order, or, where the
    fragment itself does not cover its tile once (a known erratum, a fragment of fewer points than cells),
    ``differs`` with the coverage witness; a fragment of several MMA computations (m8n8k4) cannot be tiled and
    says so in one line."""
    lay = api.layout(SPECS, lid).representative()
    if lay.unspecified or lay.partial:
        return
    block = (2 * lay.rows, 2 * lay.cols)
    if lay.groups > 1:
        with pytest.raises(api.BlockError, match="MMA computations"):
            api.block_tile(lay, (2, 2), block)
        return
    res = api.conform(lay, api.block_tile(lay, (2, 2), block))
    assert res.tiling is not None, (lid, result_text(res)[:600])
    assert [p[2:] for p in res.tiling.placements] == [(0, 0), (0, lay.cols), (lay.rows, 0), (lay.rows, lay.cols)]
    covers = (lay.threads * lay.n_elements == lay.rows * lay.cols
              and "refuted" not in (lay.expect.get("injective"), lay.expect.get("surjective")))
    assert res.status == ("tiled" if covers else "differs"), (lid, result_text(res)[:600])
