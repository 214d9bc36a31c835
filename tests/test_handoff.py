"""``handoff``: can one instruction's fragment feed another's operand lane for lane?

FlashAttention-2 (f32 accumulator of two m16n8k16 n-tiles as the f16 A of the next m16n8k16) is
free; Triton #3580 (the s32 accumulator of m16n8k32, four n-tiles, as the s8 A of the next) needs
a shuffle, which is printed.  Tiles are layouts of the model: their three faces agree.
"""
from __future__ import annotations

import dataclasses
import functools
import json
import random

import pytest
import z3
from conftest import SPECS, cli

from verify import api
from verify.checks.handoff import HandoffError, grid_for, handoff
from verify.layout.fragment_maps import FormulaFragment as FormulaMap
from verify.layout.model import cells_of
from verify.layout.fragment_maps import PlacedMap
from verify.layout.tile import tile
from verify.layout.model import cell_at, z3_cell_of


@functools.cache
def catalog() -> tuple:
    return tuple(api.layouts(api.load(SPECS)))


def spec(shape: str, operand: str, ptype: str, instruction: str = "mma") -> api.Layout:
    hits = [x for x in catalog() if x.instruction == instruction and str(x.shape) == shape and x.operand == operand
            and ptype in x.types and not x.corrected and x.variant is None]
    assert hits, (shape, operand, ptype)
    return hits[0]



C_F32 = ("m16n8k16", "C", "f32")
A_F16 = ("m16n8k16", "A", "f16")
C_S32 = ("m16n8k32", "C", "s32")
A_S8 = ("m16n8k32", "A", "s8")


# ============================================================================ FlashAttention-2: free

def test_flash_attention_2_accumulator_feeds_a_without_a_shuffle(capsys):
    src, dst = spec(*C_F32), spec(*A_F16)
    rc, out, err = cli(capsys, "handoff", src.id, dst.id)
    assert (rc, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == f"handoff {src.id} -> {dst.id}: free"
    assert "C (16 x 8) tiled 1 x 2 covers A (16 x 16)" in lines[1]
    mapping = [ln.strip() for ln in lines if ln.strip().startswith("A a")]
    assert mapping == [f"A a{i} <- C tile {i // 4} c{i % 4}" for i in range(8)]
    assert lines[-1] == "  engines: z3 proved, enumeration proved, z3_plan proved"


def test_flash_attention_2_in_the_api():
    res = api.handoff(spec(*C_F32), spec(*A_F16))
    assert res.status == "free" and res.grid == (1, 2) and res.exit_code() == 0
    assert not res.moving and res.lanes_receiving == 0
    steps = {(s.lane, s.i): s for s in res.plan}
    assert (steps[(5, 4)].src_lane, steps[(5, 4)].tile, steps[(5, 4)].element) == (5, 1, "c0")


# ============================================================================ Triton #3580: a shuffle

def test_int8_accumulator_as_a_needs_a_shuffle(capsys):
    src, dst = spec(*C_S32), spec(*A_S8)
    rc, out, err = cli(capsys, "handoff", src.id, dst.id)
    assert (rc, err) == (1, "")
    lines = out.splitlines()
    assert lines[0] == f"handoff {src.id} -> {dst.id}: shuffle"
    assert "first: lane 0 element a2 needs (0, 2), held by lane 1 (C tile 0 c0)" in out
    assert "32 of 32 lanes receive 384 of 512 values from 32 other lanes; 128 stay in their lane" in out
    lane0 = next(ln for ln in lines if ln.startswith("    lane 0: "))
    assert lane0 == ("    lane 0: a2 <- lane 1 C tile 0 c0, a3 <- lane 1 C tile 0 c1, a6 <- lane 1 C tile 0 c2, "
                     "a7 <- lane 1 C tile 0 c3, a10 <- lane 1 C tile 2 c0, a11 <- lane 1 C tile 2 c1, "
                     "a14 <- lane 1 C tile 2 c2, a15 <- lane 1 C tile 2 c3")
    assert lines[-1] == "  engines: z3 refuted, enumeration refuted, z3_plan proved"


def test_every_planned_move_brings_the_right_cell():
    res = api.handoff(spec(*C_S32), spec(*A_S8))
    assert res.status == "shuffle" and len(res.moving) == 384
    for s in res.plan:
        assert cell_at(res.tiled, s.src_lane, s.j) == cell_at(res.target, s.lane, s.i)
    # each thread holds 2 consecutive columns of C but 4 of A: lane 1 gets all of its A from lanes 2 and 3
    assert {s.src_lane for s in res.plan if s.lane == 1} == {2, 3}


def test_json_plan_and_byte_identical_runs(capsys):
    src, dst = spec(*C_S32), spec(*A_S8)
    runs = [cli(capsys, "handoff", src.id, dst.id, "--format", "json")[1] for _ in range(2)]
    assert runs[0] == runs[1]
    doc = json.loads(runs[0])["handoff"]
    assert doc["status"] == "shuffle" and doc["values_moving"] == 384 and doc["lanes_receiving"] == 32
    assert doc["tiles"] == {"down": 1, "across": 4, "rows": 16, "cols": 8}
    assert doc["plan"][2] == {"lane": 0, "i": 2, "element": "a2", "src_lane": 1, "src_i": 0, "tile": 0,
                              "src_element": "c0"}
    assert doc["counterexample"]["held_by"] == {"lane": 1, "i": 0, "tile": 0, "element": "c0"}


def test_same_shape_handoffs():
    assert api.handoff(spec("m16n8k8", "C", "f16"), spec("m16n8k8", "A", "f16")).status == "free"
    b = api.handoff(spec(*C_F32), spec("m16n8k16", "B", "f16"))   # C as B: the matrix is not transposed
    assert b.status == "shuffle" and b.grid == (1, 1)


# ============================================================================ errors

def test_extents_that_do_not_tile_are_bad_input(capsys):
    with pytest.raises(HandoffError):
        grid_for(spec(*A_F16), spec(*C_F32))
    rc, out, err = cli(capsys, "handoff", spec(*A_F16).id, spec(*C_F32).id)
    assert rc == 2 and out == "" and err.startswith("ptx-verify: error: ") and "does not tile" in err
    rc, out, err = cli(capsys, "handoff", spec(*C_F32).id, "no.such.layout")
    assert rc == 2 and out == "" and "no layout" in err
    rc, out, err = cli(capsys, "handoff", spec(*C_F32).id, spec("m8n8k4", "C", "f64").id)
    assert rc == 2 and "does not tile" in err
    m8 = next(x for x in catalog() if str(x.shape) == "m8n8k4" and x.operand == "C" and "f32" in x.types)
    with pytest.raises(HandoffError, match="MMA computations"):
        grid_for(spec(*C_F32), m8)


@dataclasses.dataclass(frozen=True)
class LyingZ3(FormulaMap):
    def _z3(self, thread, i, env=None):
        ok, r, c = super()._z3(thread, i, env)
        return ok, z3.If(thread == 3, r + 1, r), c


def test_an_engine_disagreement_is_an_error():
    src = spec(*C_F32)
    liar = dataclasses.replace(src, map=LyingZ3(src.map.formula))
    res = handoff(liar, spec(*A_F16))
    assert res.status == "error" and res.exit_code() == 1
    assert "engines disagree" in res.message


# ============================================================================ tiles are layouts of the model

@pytest.mark.parametrize("grid", [(1, 2), (2, 1), (2, 3)])
def test_tile_faces_agree(grid):
    base = spec(*C_F32)
    t = tile(base, grid)
    assert isinstance(t.map, PlacedMap) and (t.rows, t.cols) == (16 * grid[0], 8 * grid[1])
    assert t.n_elements == 4 * grid[0] * grid[1]
    c = cells_of(t)
    rng = random.Random(7)
    w = 16
    lane, i = z3.BitVecs("lane i", w)
    ok, row, col = z3_cell_of(t, lane, i)
    for _ in range(20):
        ln, ix = rng.randrange(t.threads), rng.randrange(t.n_elements)
        tt, j = divmod(ix, 4)
        br, bc = cell_at(base, ln, j)
        want = (br + 16 * (tt // grid[1]), bc + 8 * (tt % grid[1]))
        assert cell_at(t, ln, ix) == want == (int(c.row[ln, ix]), int(c.col[ln, ix]))
        s = z3.Solver()
        s.add(lane == ln, i == ix)
        assert s.check() == z3.sat
        m = s.model()
        assert (m.eval(row).as_signed_long(), m.eval(col).as_signed_long()) == want and z3.is_true(m.eval(ok))
    assert api.check(t).bijective      # a tiling of a bijection covers the big tile exactly once


def test_ldmatrix_x4_feeds_mma_a_as_the_catalog_relation_proves(capsys):
    """Issue 35 item 2: handoff said ldmatrix .x4 -> mma A is "incompatible" (exit 1; exit 2 with --param NUM=4:
    "32 x 8 does not tile 16 x 16") while the catalog's relation ldmatrix_x4_is_mma_a proves it.  A stack taller
    than the consumer is placed as the relation places it, and the two agree element for element."""
    code, out, _ = cli(capsys, "handoff", "ldmatrix.m8n8.R.b16", "mma.m16n8k16.A.f16_bf16")
    assert code == 0 and out.splitlines()[0] == (
        "handoff ldmatrix.m8n8.R.b16 -> mma.m16n8k16.A.f16_bf16: free for every member (NUM = 1, 2, 4)")
    code, out, _ = cli(capsys, "handoff", "ldmatrix.m8n8.R.b16", "mma.m16n8k16.A.f16_bf16", "--param", "NUM=4")
    assert code == 0 and out.splitlines()[0] == "handoff ldmatrix.m8n8.R.b16 (NUM = 4) -> mma.m16n8k16.A.f16_bf16: free"
    assert "lane t addresses tile row t % 16, column 8 (t / 16)" in out
    res = api.handoff("ldmatrix.m8n8.R.b16", "mma.m16n8k16.A.f16_bf16", specs=SPECS, params={"NUM": 4})
    assert res.status == "free" and res.identity() and res.engines["z3"] == res.engines["enumeration"] == "proved"
    # the relation, from the same catalog: equal (both engines), so every (lane, i) is the same cell
    pair = api.load([f"{SPECS}/ldmatrix.m8n8.toml", f"{SPECS}/mma.m16n8k16.float.toml"])
    rel = next(r for r in api.check_all(pair).instructions if r.id == "ldmatrix_x4_is_mma_a")
    assert [(c.status, c.engines) for c in rel.checks] == [("proved", {"z3": "proved", "enumeration": "proved"})]
    # and the plan names, for every lane, element i of the ldmatrix for element i of A
    assert all(s.src_lane == s.lane and s.j == s.i for s in res.plan)
    # the same for the accumulator stored by stmatrix .x4 (stmatrix_x4_accumulator_pair): free, two n-tiles
    st = api.handoff("mma.m16n8k16.float.C.f32", "stmatrix.m8n8.R.b16", specs=SPECS, params={"NUM": 4})
    assert st.status == "free" and st.grid == (1, 2) and any("stmatrix.m8n8.R.b16: its matrices" in n for n in st.notes)


def test_a_warpgroup_shuffle_is_proved_on_the_plan():
    """A warpgroup's large fragments (wgmma A .b1 into D at N = 256: 128 threads x 128 elements): every value
    stays in its warp, which the ForAll query could not prove within its budget (``unknown``); Z3 now proves it
    on the plan, quantifier-free, and the verdict is the enumeration's."""
    r = api.handoff("wgmma.m64nNk256.A.b1", "wgmma.m64nNk32.D.f32@corrected", specs=SPECS, params={"N": 256})
    assert r.status == "shuffle"
    assert (r.engines["z3_warps"], r.engines["enumeration_warps"]) == ("proved", "proved")
