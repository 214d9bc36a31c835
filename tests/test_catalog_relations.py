"""Issue 9: relations between instructions (verify/checks/relations.py), the wgmma / tcgen05 instruction
checks and the Tensor Memory access rule, each decided by both engines, each with a counterexample when it
fails (shown by breaking one layout)."""
from __future__ import annotations

import dataclasses
import functools

from verify import api
from verify.checks.family import check_any
from verify.layout import algebra as A
from verify.layout import reshape
from verify.layout.dims import Dim
from verify.layout.named import formula_map
from verify.catalog.instructions import instructions
from verify.checks.instruction import check_instructions
from verify.checks.tmem_lanes import check_tmem_lanes, tmem_views
from verify.checks.relations import check_relations
from verify.formula import parse_formula
from verify.layout.model import Spec

from conftest import SPECS


@functools.cache
def specs() -> tuple[Spec, ...]:
    return tuple(api.load([SPECS]))


@functools.cache
def layouts() -> dict:
    return {lay.id: lay for s in specs() for lay in s.layouts}


@functools.cache
def relations() -> dict:
    return {r.id: r for r in check_relations(specs())}


def _both(c) -> None:
    assert c.engines.get("z3") == c.engines.get("enumeration") == c.status, (c.check, c.engines)


def test_every_relation_holds_by_both_engines() -> None:
    rel = relations()
    fragment_relations = {r for r in rel if not r.startswith("tmem_datapath_")}  # those: tests/test_tensor_memory.py
    assert fragment_relations == {
        "ldmatrix_x4_is_mma_a", "ldmatrix_x2_trans_is_mma_b", "stmatrix_x4_accumulator_pair", "movmatrix_transpose",
        "wgmma_d_per_warp.all_N", "wgmma_d_per_warp.all_N.f16x2", "wgmma_d_per_warp.integer_N",
        "tcgen05_16x256b_is_mma_c.ld", "tcgen05_16x256b_is_mma_c.st"}
    for r in rel.values():
        assert r.as_expected and r.checks, r.id
        for c in r.checks:
            assert c.status == "proved", (r.id, c.check, c.message)
            _both(c)
    # every wgmma D (dense and sparse, every dtype) is covered by a per-warp relation
    ds = {x.id for x in layouts().values() if x.instruction.startswith("wgmma") and x.operand == "D" and not x.corrected}
    covered = {op.id for r in rel.values() if r.id.startswith("wgmma_d_per_warp") for op in r.operands}
    assert ds <= covered
    assert "derived" in relations()["ldmatrix_x4_is_mma_a"].to_json() and relations()["ldmatrix_x4_is_mma_a"].derived


def _with(lid: str, old: str, new: str, params: tuple[str, ...] = ()) -> Spec:
    """The catalog with one layout's formula text changed (a deliberate mistake)."""
    out = []
    for s in specs():
        lays = []
        for lay in s.layouts:
            if lay.id == lid:
                assert old in lay.provenance.formula_text, (lid, old)
                lay = lay.with_formula(parse_formula(lay.provenance.formula_text.replace(old, new), lay.formula.element_prefix,
                                                     tuple(p.name for p in lay.domain.params)))
            lays.append(lay)
        out.append(dataclasses.replace(s, layouts=tuple(lays)))
    return tuple(out)


def test_ldmatrix_relation_fails_with_a_counterexample() -> None:
    broken = {r.id: r for r in check_relations(_with("ldmatrix.m8n8.R.b16", "(i & 0x1)", "(1 - (i & 0x1))"))}
    c = broken["ldmatrix_x4_is_mma_a"].get("equal")
    assert c.status == "refuted" and not broken["ldmatrix_x4_is_mma_a"].as_expected
    _both(c)
    assert (c.counterexample["lane"], c.counterexample["i"]) == (0, 0)
    assert c.counterexample["first"] == {"row": 0, "col": 0} and c.counterexample["second"] == {"row": 0, "col": 1}
    assert "lane 0 element a0" in c.message


def test_stmatrix_pair_fails_when_two_writes_meet() -> None:
    broken = {r.id: r for r in check_relations(_with("stmatrix.m8n8.R.b16", "(8 * (i >> 1)) + (%laneid >> 2)",
                                                      "(8 * ((i >> 1) & 1)) + (%laneid >> 2)"))}
    r = broken["stmatrix_x4_accumulator_pair"]
    once = r.get("writes_once")
    assert once.status == "refuted" and "injective" in once.message
    assert r.get("equal").status == "refuted"


def test_movmatrix_relation_refutes_the_literal_reading() -> None:
    """Read literally (d a column fragment of the result), d is a's own fragment: not the transpose."""
    literal = _with("movmatrix.m8n8.D.b16", "row = %laneid >> 2\ncol = ((%laneid % 4) * 2) + i",
                    "row = ((%laneid % 4) * 2) + i\ncol = %laneid >> 2")
    c = {r.id: r for r in check_relations(literal)}["movmatrix_transpose"].get("transpose")
    assert c.status == "refuted"
    _both(c)


def test_wgmma_d_relation_fails_for_a_wrong_warp_order() -> None:
    lid = "wgmma.m64nNk16.D.f32"
    broken = check_relations(_with(lid, "(16 * warpID) + groupID       for", "(16 * (3 - warpID)) + groupID       for"))
    (r,) = [r for r in broken if any(op.id == lid for op in r.operands)]
    assert len(r.operands) == 2  # the broken D (and the mma C it is compared with), apart from the other D's
    others = [x for x in broken if x.id.startswith("wgmma_d_per_warp.all_N") and x is not r and ".f16x2" not in x.id]
    assert [x.id.split("#")[0] for x in others] == ["wgmma_d_per_warp.all_N"] and others[0].get("equal").status == "proved"
    c = r.get("equal")
    assert c.status == "refuted" and c.counterexample["params"] == {"N": 8} and c.counterexample["lane"] == 0
    _both(c)


def test_tcgen05_relation_fails_at_the_first_num() -> None:
    lid = "tcgen05.ld.16x256b.R.b32@corrected"
    broken = {r.id: r for r in check_relations(_with(lid, "(8 * (i >> 2))", "(8 * ((i >> 2) % 4))"))}
    c = broken["tcgen05_16x256b_is_mma_c.ld"].get("equal")
    assert c.status == "refuted" and c.counterexample["params"] == {"NUM": 8}
    _both(c)


# ----------------------------------------------------------------------------- instruction grouping

def test_wgmma_groups_a_with_each_d_and_no_b() -> None:
    spec = next(s for s in specs() if s.path.endswith("wgmma.m64nNk16.toml"))
    ids = [(ins.id, *(x.operand for x in ins.operands)) for ins in instructions(spec)]
    assert ids == [("wgmma.m64nNk16.f16_bf16.f16", "A", "D"), ("wgmma.m64nNk16.f16_bf16.f32", "A", "D")]
    results = [check_any(lay) for lay in spec.layouts]
    (i16, i32) = check_instructions([spec], results)
    for ins in (i16, i32):
        assert [c.check for c in ins.checks] == ["shapes", "registers"]  # no k: B is in shared memory
        assert ins.get("shapes").status == "proved" and ins.as_expected
        # registers as the doc states D: its generic list names 8 elements at N = 8 (the recorded erratum)
        reg = ins.get("registers")
        assert reg.status == reg.expected == "refuted" and reg.counterexample["params"] == {"N": 8}


def test_wgmma_shapes_check_can_fail() -> None:
    spec = next(s for s in specs() if s.path.endswith("wgmma.m64nNk8.toml"))
    d = next(x for x in spec.layouts if x.id.endswith("@corrected"))
    wide = dataclasses.replace(d, codomain=dataclasses.replace(d.codomain, cols=parse_formula(
        "row = 0\ncol = 0\nx = N + 8\n", "d", ("N",)).get("x").cases[0].expr))
    spec2 = dataclasses.replace(spec, layouts=tuple(wide if x is d else x for x in spec.layouts))
    (ins,) = check_instructions([spec2], [])
    sh = ins.get("shapes")
    assert sh.status == "refuted" and sh.counterexample["params"] == {"N": 8}


def test_sparse_wgmma_gets_the_sparse_checks() -> None:
    spec = next(s for s in specs() if s.path.endswith("wgmma.sp.m64nNk32.toml"))
    out = check_instructions([spec], [check_any(x) for x in spec.layouts])
    assert {i.id for i in out} == {"wgmma.sp.m64nNk32.f16_bf16.f32", "wgmma.sp.m64nNk32.f16_bf16.f16"}
    for ins in out:
        names = [c.check for c in ins.checks]
        assert {"chunk_ranges", "metadata_distinct", "metadata_budget", "metadata_group"} <= set(names)
        assert ins.as_expected and "metadata_budget" in ins.derived


# ----------------------------------------------------------------------------- the TMEM access rule

def test_every_tcgen05_layout_respects_the_lane_quarters() -> None:
    tc = [s for s in specs() if s.instruction in ("tcgen05.ld", "tcgen05.st")]
    out = check_instructions(tc, [check_any(x) for s in tc for x in s.layouts])
    assert len(out) == 10
    for ins in out:
        c = ins.get("tmem_lanes")
        assert c.status == "proved", (ins.id, c.message)
        _both(c)
    # 16-lane shapes are checked at both lane bases of a quarter
    assert [off for off, _ in tmem_views(layouts()["tcgen05.ld.16x64b.R.b32"])] == [0, 16]
    assert [off for off, _ in tmem_views(layouts()["tcgen05.ld.32x32b.R.b32"])] == [0]


def test_a_layout_reaching_into_another_warps_quarter_is_refuted() -> None:
    """A 32-lane layout that puts lane t at TMEM lane t + 1: warp 0 lane 31 touches lane 32 (warp 1's)."""
    lay = layouts()["tcgen05.ld.32x32b.R.b32"]
    wrong = lay.with_formula(parse_formula("row = %laneid + 1\ncol = i\n", "r", ("NUM",)))
    c = check_tmem_lanes(wrong)
    assert c.status == "refuted"
    _both(c)
    cx = c.counterexample
    assert (cx["params"], cx["warp"], cx["lane"], cx["i"], cx["tmem_lane"], cx["allowed"]) == (
        {"NUM": 1}, 0, 31, 0, 32, [0, 31])
    assert "warp 0" in c.message and "TMEM lane 32" in c.message


def test_a_warpgroup_layout_with_warps_swapped_is_refuted() -> None:
    """Written for the whole warpgroup (128 threads, absolute TMEM lanes): warps 0 and 1 exchanged."""
    lay = layouts()["tcgen05.ld.32x32b.R.b32"]
    def warpgroup(warp_to_quarter: str):
        quarters = formula_map(warp_to_quarter, (Dim("warp", 4),), (Dim("tmem_lane", 4),))
        placed = reshape.merge(A.product(lay.map, quarters), ("lane", "warp"), "thread")
        return lay.with_map(placed, codomain=dataclasses.replace(lay.codomain, rows=128))

    good = warpgroup("tmem_lane = warp")
    assert check_tmem_lanes(good).status == "proved"
    bad = warpgroup("tmem_lane = warp ^ 1")
    c = check_tmem_lanes(bad)
    assert c.status == "refuted" and c.counterexample["thread"] == 0 and c.counterexample["tmem_lane"] == 32
    _both(c)
