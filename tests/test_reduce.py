"""``handoff FROM --reduce row|col --xor MASKS`` (issue 35 item 15): a ``shfl.xor`` butterfly reducing a row
(column) of a fragment must reach exactly the lanes that own that row; both engines decide it and name the same
lane pair where it does not."""
from __future__ import annotations

import functools
import json
import random

import pytest
from conftest import SPECS, cli

from verify import api
from verify.checks.equivalence import point_of
from verify.checks.reduce import ReduceError, reduction
from verify.results.reduce import span

C = "mma.m16n8k16.float.C.f32"
BOTH = {"z3": "proved", "enumeration": "proved"}
REFUTED = {"z3": "refuted", "enumeration": "refuted"}


@functools.cache
def catalog() -> tuple:
    return tuple(x for x in api.layouts(api.load(SPECS)) if not x.unspecified)


@functools.cache
def lay(lid: str) -> api.Layout:
    return next(x for x in catalog() if x.id == lid)


def brute(layout: api.Layout, axis: str, masks: tuple[int, ...]) -> tuple[int, int, int, int] | None:
    """An independent reference: Python loops over the scalar evaluator, the first (lane, MMA computation,
    line, other lane) in that order where "other owns the line" and "other is lane xor a span element" differ."""
    owns: dict[tuple[int, int], set[int]] = {}
    mine: dict[int, set[tuple[int, int]]] = {}
    for t in range(layout.threads):
        for i in range(layout.n_elements):
            p = point_of(layout, t, i)
            if p is not None:
                key = (p.mma, p.row if axis == "row" else p.col)
                owns.setdefault(key, set()).add(t)
                mine.setdefault(t, set()).add(key)
    xs = set(span(masks))
    lanes = -(-layout.threads // 32) * 32
    for t in range(layout.threads):
        for key in sorted(mine.get(t, ())):
            for o in range(lanes):
                if (o in owns[key]) != ((t ^ o) in xs):
                    return (t, key[0], key[1], o)
    return None


def test_the_accumulator_rows_and_columns() -> None:
    c = lay(C)
    r = reduction(c, "row", (1, 2))
    assert r.status == "exact" and r.engines == BOTH and r.owners == (4,)
    assert reduction(c, "col", (4, 8, 16)).status == "exact"
    r = reduction(c, "row", (1, 4))  # lane 2 owns row 0 but is never brought
    assert r.status == "inexact" and r.engines == REFUTED and r.hint == (1, 2)
    assert r.counterexample.to_json() == {"lane": 0, "axis": "row", "line": 0, "other": 2, "reached": False,
                                          "masks": [1, 4]}
    assert r.check.message == ("lane 0 holds row 0; lane 2 holds cells of row 0 too, but the butterfly never brings "
                               "it (lane 0 xor 2: no xor of the masks 1, 4)")
    r = reduction(c, "row", (1, 2, 4))  # lane 4 is brought and owns rows 1 and 9, not row 0
    assert r.counterexample.to_json()["other"] == 4 and r.counterexample["reached"] is True
    assert "the butterfly brings lane 4 (lane 0 xor 4), which holds no cell of row 0" in r.check.message


def test_the_command(capsys) -> None:
    code, out, _ = cli(capsys, "handoff", C, "--reduce", "row", "--xor", "1,2")
    assert code == 0 and out.splitlines() == [
        f"reduce {C} along row by shfl.xor 1, 2: exact",
        "  each lane l combines lanes l xor 0, 1, 2, 3; lanes that own one row: 4",
        "  every lane's butterfly reaches exactly the lanes that own each of its rows",
        "  engines: z3 proved, enumeration proved"]
    code, out, _ = cli(capsys, "handoff", C, "--reduce", "row", "--xor", "1,4", "--format", "json")
    doc = json.loads(out)["reduce"]
    assert code == 1 and doc["status"] == "inexact" and doc["counterexample"]["other"] == 2 and doc["hint"] == [1, 2]
    for argv, msg in ((["--reduce", "row"], "--reduce and --xor go together"),
                      (["--reduce", "row", "--xor", "1,32"], "each 1 to 31"),
                      (["mma.m16n8k16.A.f16_bf16", "--reduce", "row", "--xor", "1"], "give no TO"),
                      (["--reduce", "diag", "--xor", "1"], "invalid choice")):
        code, out, err = cli(capsys, "handoff", C, *argv)
        assert code == 2 and out == "" and err.count("\n") == 1 and msg in err, (argv, err)


def test_warps_and_families(capsys) -> None:
    """A row held by lanes of two warps is never exact (a shuffle stays in its warp); a family is decided on
    every member."""
    code, out, _ = cli(capsys, "handoff", C, "--triton", "tests/data/ttgir/handoff_32x16.ttgir", "--tensor", "#mma",
                       "--reduce", "row", "--xor", "1,2")
    assert code == 1 and "lane 0 holds row 0; lane 32 holds cells of row 0 too" in out
    assert "lane 32 is in warp 1, lane 0 in warp 0: no shuffle reaches across warps" in out
    res = api.reduction("wgmma.m64nNk16.D.f32", "row", (1, 2), specs=SPECS)
    assert res.status == "exact" and len(res.members) == 32
    one = api.reduction("wgmma.m64nNk16.D.f32", "col", (4, 8, 16), specs=SPECS, params={"N": 24})
    # a column of D is held by every warp (warp w has rows 16w ..): the butterfly never reaches warp 1
    assert one.status == "inexact" and one.engines == REFUTED and one.counterexample["other"] == 32
    with pytest.raises(ReduceError):
        api.reduction(C, "row", (), specs=SPECS)


@pytest.mark.parametrize("seed", range(6))
def test_both_engines_and_an_independent_reference_agree(seed: int) -> None:
    """Random layouts of the catalog, random axes and masks: Z3 and the enumeration agree (a disagreement would
    be an error), and both name the first pair a brute-force reference finds."""
    rnd = random.Random(seed)
    pool = [x for x in catalog() if not x.is_family and x.threads <= 128 and x.n_elements <= 64]
    for _ in range(4):
        layout = rnd.choice(pool)
        axis = rnd.choice(("row", "col"))
        masks = tuple(sorted(rnd.sample(range(1, 32), rnd.randint(1, 3))))
        r = reduction(layout, axis, masks, hint=False)
        assert r.status in ("exact", "inexact"), (layout.id, axis, masks, r.check.message)
        ref = brute(layout, axis, masks)
        if ref is None:
            assert r.status == "exact" and r.engines == BOTH, (layout.id, axis, masks)
        else:
            c = r.counterexample
            assert r.engines == REFUTED and (c["lane"], c.get("mma") or 0, c["line"], c["other"]) == ref, (
                layout.id, axis, masks, ref, c.to_json())
