"""Counterexamples are typed witnesses (``verify.witnesses``): each owns its JSON (the contract's keys, in
order) and its words; the checks build them, and results carry nothing else (``tests/test_witnesses_typed.py``:
no check hands a plain mapping)."""
from __future__ import annotations

import json

import pytest

from verify import api
from verify.checks import maps
from verify.formula import Var
from verify.layout.dims import Dim
from verify.layout.family import Param
from verify.layout.named import formula_map
from verify.results import CheckResult, Finding
from verify.witnesses import (AxisCoverage, BankConflict, BufferPlace, CellCoverage, CellHeldBy, CellOutside,
                              CellUnreached, DomainDiffers, Element, ElementList, ElementsCollide, Facts,
                              FragmentDiffers, KCoverage, LaneAddress, LaneGroups, MetadataBudget, MetadataField,
                              NotPermuted, OperandExtent, OperandRegisters, OutputUnreached, ParamsDiffer,
                              PointDiffers, PointOutside, PointsCollide, ReductionLanes, RegisterCount, RegisterPacking,
                              ReplicaDiffers, ReviewedFacts, SparseMetadata, SparseRange, SpecGivenDiffer,
                              TextPosition, TileDiffers, TmemLane, Witness, as_witness, at_member, fragment_witness,
                              witness_json)


def test_each_witness_owns_its_json_and_words() -> None:
    cases = [
        (PointOutside({"N": 8}, {"a": 4}, {"x": 8}), {"params": {"N": 8}, "point": {"a": 4}, "at": {"x": 8}},
         "(a = 4) lands at (x = 8), outside the output box"),
        (PointOutside({}, {"a": 1}, None), {"params": {}, "point": {"a": 1}, "at": None}, "(a = 1) is undefined"),
        (PointsCollide({}, {"row": 0, "col": 1}, {"row": 1, "col": 0}, {"offset": 1}),
         {"params": {}, "first": {"row": 0, "col": 1}, "second": {"row": 1, "col": 0}, "at": {"offset": 1}},
         "(row = 0, col = 1) and (row = 1, col = 0) both land at (offset = 1)"),
        (OutputUnreached({}, {"offset": 8}), {"params": {}, "at": {"offset": 8}}, "(offset = 8) is reached by no point"),
        (PointDiffers({}, {"a": 2}, ("spec", "given"), ({"x": 2}, None)),
         {"params": {}, "point": {"a": 2}, "spec": {"x": 2}, "given": None}, "at a = 2: spec (x = 2), given undefined"),
        (CellOutside(3, 1, "c1", 9, 2, None, {"N": 8}),
         {"params": {"N": 8}, "lane": 3, "i": 1, "element": "c1", "row": 9, "col": 2},
         "lane 3, element c1: cell (9, 2), outside the matrix"),
        (CellOutside(3, 1, "c1", None, None), {"lane": 3, "i": 1, "element": "c1", "row": None, "col": None},
         "lane 3, element c1: no case of the formula applies"),
        (ElementsCollide(Element(0, 0, "c0"), Element(4, 1, "c1"), 0, 0, 1),
         {"first": {"lane": 0, "i": 0, "element": "c0"}, "second": {"lane": 4, "i": 1, "element": "c1"},
          "row": 0, "col": 0, "mma": 1},
         "lane 0, element c0, cell (0, 0) of MMA computation 2; "
         "lane 4, element c1, cell (0, 0) of MMA computation 2  (the same cell)"),
        (CellUnreached(0, 4), {"row": 0, "col": 4}, "cell (0, 4): no lane holds it"),
        (TextPosition("a.toml", 3, 7), {"file": "a.toml", "line": 3, "col": 7}, "file = a.toml, line = 3, col = 7"),
        (TextPosition("p.md", 3, 7, "element_list"), {"file": "p.md", "line": 3, "col": 7, "kind": "element_list"},
         "file = p.md, line = 3, col = 7, kind = element_list"),
        (BankConflict({}, (0, 0), (0, 1), ((0, 0), (1, 0)), (0, 128), 0, 0),
         {"params": {}, "origin": [0, 0], "lanes": [0, 1], "cells": [[0, 0], [1, 0]], "addresses": [0, 128],
          "bank": 0, "group": 0},
         "at origin (0, 0), lanes 0 and 1 (cells (0, 0) and (1, 0)) address 0x0 and 0x80: both bank 0, in "
         "wavefront group 0"),
        (Facts({"total": 32, "matrix": 64}), {"total": 32, "matrix": 64}, "total = 32, matrix = 64"),
    ]
    for w, js, words in cases:
        assert w.to_json() == js and list(w.to_json()) == list(js), w  # the keys, in the contract's order
        assert json.loads(json.dumps(w.to_json())) == js  # plain JSON
        assert w.describe() == words, w
        assert dict(w) == js and w[next(iter(js))] == js[next(iter(js))]  # a read-only mapping view
    with pytest.raises(Exception):
        cases[0][0].lane = 1  # frozen


def test_member_names_the_family_member() -> None:
    assert CellOutside(0, 0, "c0", 9, 0, None, {"N": 8}).member() == {"N": 8}
    assert CellOutside(0, 0, "c0", 9, 0).member() is None
    assert PointOutside({}, {"a": 1}, None).member() is None  # no parameters stated
    assert Facts({"params": {"NUM": 2}, "lane": 0}).member() == {"NUM": 2}


def test_results_carry_witnesses_only() -> None:
    """A mapping from a check with no witness class becomes ``Facts``; JSON goes through ``to_json``."""
    r = CheckResult("count", "refuted", "proved", {"total": 32, "matrix": 64}, "m")
    assert isinstance(r.counterexample, Facts) and r.to_json()["counterexample"] == {"total": 32, "matrix": 64}
    f = Finding("x", "syntax", "refuted", "proved", "m", TextPosition("a.toml", 1, 2))
    assert f.to_json()["counterexample"] == {"file": "a.toml", "line": 1, "col": 2}
    assert as_witness(None) is None and witness_json(None) is None
    w = CellUnreached(1, 2)
    assert as_witness(w) is w and isinstance(as_witness({"a": 1}), Witness)


def test_fragment_witness_from_the_engines_fields() -> None:
    assert fragment_witness("in_range", {"params": {"N": 8}, "lane": 1, "i": 0, "element": "a0", "row": 16,
                                         "col": 0}) == CellOutside(1, 0, "a0", 16, 0, None, {"N": 8})
    assert fragment_witness("surjective", {"row": 1, "col": 2, "mma": 0}) == CellUnreached(1, 2, 0)
    assert fragment_witness("injective", None) is None
    with pytest.raises(ValueError):
        fragment_witness("count", {"total": 1})


def test_the_checks_build_typed_witnesses() -> None:
    N = Param("N", (4, 8))
    m = formula_map("x = a * 2", (Dim("a", Var("N")),), (Dim("x", 8),), params=(N,))
    assert maps.in_range(m).counterexample == PointOutside({"N": 8}, {"a": 4}, {"x": 8})
    sw = formula_map("offset = row * 2", (Dim("row", 4), Dim("col", 2)), (Dim("offset", 8),))
    assert isinstance(maps.injective(sw).counterexample, PointsCollide)
    assert isinstance(maps.surjective(sw).counterexample, OutputUnreached)
    lay = api.layout_from_formula("row = %laneid >> 2\ncol = %laneid % 4", operand="C", rows=8, cols=8,
                                  elements=1, types=("f32",), registers=1, register_type="f32")
    res = api.check(lay)
    assert res.get("surjective").counterexample == CellUnreached(0, 4)
    bad = api.layout_from_formula("row = %laneid >> 2\ncol = (%laneid % 4) * 3", operand="C", rows=8, cols=8,
                                  elements=1, types=("f32",), registers=1, register_type="f32")
    assert isinstance(api.check(bad).get("in_range").counterexample, CellOutside)


# ----------------------------------------------------------------------------- the other checks' witnesses

_EL = {"lane": 0, "i": 0, "element": "a0"}
CHECK_WITNESSES = [
    (FragmentDiffers(5, 2, "a2", {"row": 13, "col": 2}, {"row": 5, "col": 10}),
     {"kind": "point", "lane": 5, "i": 2, "element": "a2", "first": {"row": 13, "col": 2},
      "second": {"row": 5, "col": 10}},
     "lane 5, element a2: cell (13, 2) against cell (5, 10)"),
    (FragmentDiffers(1, 0, "c0", {"row": 0, "col": 0, "mma": 1}, None, {"N": 8}),
     {"params": {"N": 8}, "kind": "point", "lane": 1, "i": 0, "element": "c0", "first": {"row": 0, "col": 0, "mma": 1},
      "second": None}, "N = 8: lane 1, element c0: cell (0, 0) of MMA computation 2 against undefined"),
    (DomainDiffers("threads", 32, 64), {"kind": "domain", "what": "threads", "first": 32, "second": 64},
     "threads differ: 32 against 64"),
    (DomainDiffers("replication"), {"kind": "domain", "what": "replication"}, "the domains differ (replication)"),
    (ParamsDiffer("[('N', (8, 16))]", "[('N', (8,))]"),
     {"kind": "params", "old": "[('N', (8, 16))]", "new": "[('N', (8,))]"},
     "parameters differ: old [('N', (8, 16))], new [('N', (8,))]"),
    (SpecGivenDiffer("extent", [16, 8], [16, 16], {"lane": 3, "i": 1, "element": "c1", "row": 2, "col": 9}),
     {"kind": "extent", "spec": [16, 8], "given": [16, 16],
      "outside": {"lane": 3, "i": 1, "element": "c1", "row": 2, "col": 9}},
     "extent: spec 16 x 8, given 16 x 16; lane 3, element c1: cell (2, 9), outside the spec"),
    (SpecGivenDiffer("domain", {"threads": 32, "elements": 4, "groups": 1},
                     {"threads": 64, "elements": 4, "groups": 1}),
     {"kind": "domain", "spec": {"threads": 32, "elements": 4, "groups": 1},
      "given": {"threads": 64, "elements": 4, "groups": 1}},
     "domain: spec 32 threads, 4 elements, 1 groups, given 64 threads, 4 elements, 1 groups"),
    (NotPermuted("not_held", "given", 3, {"row": 1, "col": 2}, i=1, element="c1"),
     {"kind": "not_held", "side": "given", "lane": 3, "i": 1, "element": "c1", "cell": {"row": 1, "col": 2}},
     "given lane 3, element c1: cell (1, 2), not held by the other side's lane"),
    (NotPermuted("lane_repeats", "given", 0, {"row": 0, "col": 0}, first={"i": 0, "element": "c0"},
                 second={"i": 1, "element": "c1"}),
     {"kind": "lane_repeats", "side": "given", "lane": 0, "first": {"i": 0, "element": "c0"},
      "second": {"i": 1, "element": "c1"}, "cell": {"row": 0, "col": 0}},
     "given lane 0, elements c0 and c1: both cell (0, 0)"),
    (ReplicaDiffers([5], 33, 0, "c0", 1, 0, "c0", {"row": 0, "col": 2}, {"row": 8, "col": 2}),
     {"kind": "replica", "copy_bits": [5], "lane": 33, "i": 0, "element": "c0", "as_lane": 1, "as_i": 0,
      "as_element": "c0", "spec": {"row": 0, "col": 2}, "given": {"row": 8, "col": 2}},
     "thread 33, element c0 (as lane 1, element c0): spec cell (0, 2), given cell (8, 2)"),
    (TileDiffers("warp", 32, 0, "c0", 1, 0, 0, 0, "c0", {"row": 0, "col": 0}, {"row": 0, "col": 0},
                 {"thread": 32, "i": 0, "element": "c0", "cell": {"row": 16, "col": 0}}, [16, 0], {"bases": []}),
     {"kind": "tile", "unit": "warp", "thread": 32, "i": 0, "element": "c0", "index": 1, "lane": 0, "repeat": 0,
      "as_i": 0, "as_element": "c0", "spec": {"row": 0, "col": 0}, "given": {"row": 0, "col": 0},
      "reference": {"thread": 32, "i": 0, "element": "c0", "cell": {"row": 16, "col": 0}}, "offset": [16, 0],
      "repeat_bits": {"bases": []}},
     "thread 32 (warp 1, lane 0), element c0 (repeat 0, as spec element c0): spec cell (0, 0), offset [16, 0], "
     "given cell (0, 0)"),
    (CellCoverage(8, 0, 0, 2), {"kind": "coverage", "row": 8, "col": 0, "held": 0, "expected": 2},
     "cell (8, 0) is held 0 times, expected 2"),
    (RegisterCount(2, 2, 4, None, 32, 128, 256),
     {"registers": 2, "elements_per_register": 2, "per_thread": 4, "listed": None, "threads": 32, "total": 128,
      "matrix": 256}, "2 registers x 2 elements x 32 threads = 128, the matrix has 256"),
    (RegisterCount(8, 2, 16, 16, 32, 512, 256, replication=1, params={"N": 8}),
     {"params": {"N": 8}, "registers": 8, "elements_per_register": 2, "per_thread": 16, "listed": 16, "threads": 32,
      "total": 512, "matrix": 256, "replication": 1},
     "N = 8: 8 registers x 2 elements x 32 threads = 512, the matrix has 256; the element list names 16, 16 per thread"),
    (RegisterCount(2, 2, 4, None, 32, 128, 256, params={"N": 8}, params_last=True),
     {"registers": 2, "elements_per_register": 2, "per_thread": 4, "listed": None, "threads": 32, "total": 128,
      "matrix": 256, "params": {"N": 8}}, "N = 8: 2 registers x 2 elements x 32 threads = 128, the matrix has 256"),
    (RegisterPacking("b32", 32, "f16", 16, 1, 2),
     {"register_type": "b32", "register_bits": 32, "type": "f16", "element_bits": 16, "elements_per_register": 1,
      "fits": 2}, "a .b32 register (32 bits) holds 2 .f16, not 1"),
    (ElementList(1, "a2", "a1", "a0, a2, a1, a3"),
     {"position": 1, "found": "a2", "expected": "a1", "list": "a0, a2, a1, a3"},
     "element list position 1: a2, expected a1"),
    (OperandRegisters("C", "mma.m8n8k16.C.s32", 4, "s32", 32, 1, 32, None, 4, 2, 8, 8, 32, 16),
     {"operand": "C", "layout": "mma.m8n8k16.C.s32", "registers": 4, "register_type": "s32", "register_bits": 32,
      "elements_per_register": 1, "element_bits": 32, "listed": None, "per_thread": 4, "expected_per_thread": 2,
      "rows": 8, "cols": 8, "threads": 32, "k": 16},
     "C (mma.m8n8k16.C.s32): 4 .s32 registers x 1 = 4 per thread, 8 x 8 over 32 threads needs 2"),
    (OperandExtent("B", "mma.x.B", (8, 8), (16, 8)),
     {"operand": "B", "layout": "mma.x.B", "declared": [8, 8], "expected": [16, 8]},
     "B (mma.x.B) is declared 8 x 8, the shape needs 16 x 8"),
    (AxisCoverage("A", "mma.x.A", "row", 0, None, 2),
     {"operand": "A", "layout": "mma.x.A", "axis": "row", "missing": 0, "extra": None, "mma": 2},
     "A (mma.x.A) reaches no row 0 of MMA computation 3"),
    (KCoverage(12, {"lane": 3, "i": 2, "element": "a2"}, None),
     {"k": 12, "A": {"lane": 3, "i": 2, "element": "a2"}, "B": None}, "k = 12: A lane 3, element a2, B no element"),
    (LaneGroups("size", 0, lanes=16, expected=8), {"kind": "size", "mma": 0, "lanes": 16, "expected": 8},
     "MMA computation 1 has 16 lanes, expected 8"),
    (LaneGroups("holders", 1, lane=4, holds="A", lacks="B"),
     {"kind": "holders", "lane": 4, "mma": 1, "holds": "A", "lacks": "B"},
     "lane 4 of MMA computation 2 holds A but no B"),
    (CellHeldBy(0, 2, "a2", {"row": 0, "col": 2}, {"lane": 1, "i": 0, "tile": 0, "element": "c0"}),
     {"lane": 0, "i": 2, "element": "a2", "cell": {"row": 0, "col": 2},
      "held_by": {"lane": 1, "i": 0, "tile": 0, "element": "c0"}},
     "lane 0, element a2 needs cell (0, 2): held by lane 1, element c0"),
    (ReductionLanes(0, "row", 0, 2, False, (1, 4)),
     {"lane": 0, "axis": "row", "line": 0, "other": 2, "reached": False, "masks": [1, 4]},
     "lane 0 holds row 0; lane 2 holds cells of row 0 too, but the butterfly never brings it (lane 0 xor 2: no xor of "
     "the masks 1, 4)"),
    (ReductionLanes(4, "col", 3, 5, True, (1,), mma=1, params={"N": 8}),
     {"params": {"N": 8}, "lane": 4, "axis": "col", "line": 3, "other": 5, "reached": True, "masks": [1], "mma": 1},
     "N = 8: lane 4 holds col 3 of MMA computation 2; the butterfly brings lane 5 (lane 4 xor 1), which holds no cell "
     "of col 3 of MMA computation 2"),
    (SparseRange(3, 1, "a1", 0, 8, 11, 2, "holds only 2"),
     {"lane": 3, "i": 1, "element": "a1", "row": 0, "firstcol": 8, "lastcol": 11, "rank": 2, "reason": "holds only 2"},
     "lane 3, element a1 (row 0): holds only 2"),
    (SparseMetadata(0, _EL, {"lane": 0, "i": 1, "element": "a1"}, 0, 0, 0, (0, 0), (0, 1)),
     {"metadata": 0, "first": _EL, "second": {"lane": 0, "i": 1, "element": "a1"}, "row": 0, "chunk": 0,
      "logical_col": 0, "logical_cols": [0, 0], "compressed_cols": [0, 1]},
     "metadata 0: lane 0, element a0 and lane 0, element a1 (row 0, chunk 0) go to columns 0 and 0"),
    (SparseMetadata(5, _EL, None, 0, 0, 5),
     {"metadata": 5, "first": _EL, "second": None, "row": 0, "logical_col": 5, "chunk": 0},
     "metadata 5: lane 0, element a0 goes to column 5, outside chunk 0 (row 0)"),
    (MetadataField(1, "injective", 0, 0, 0, 0, 4, 0),
     {"selector": 1, "kind": "injective", "lane": 0, "nibble": 0, "lane2": 4, "nibble2": 0, "row": 0, "chunk": 0},
     "selector 1, lane 0, nibble 0 and lane 4, nibble 0: both (row 0, chunk 0)"),
    (MetadataField(2, "surjective", 3, 1), {"selector": 2, "kind": "surjective", "row": 3, "chunk": 1},
     "selector 2: no field for (row 3, chunk 1)"),
    (MetadataField(0, None, 8, 0, 4, 1), {"selector": 0, "lane": 4, "nibble": 1, "row": 8, "chunk": 0},
     "selector 0, lane 4, nibble 1: (row 8, chunk 0)"),
    (MetadataBudget((0, 1), 16, 8), {"selectors": [0, 1], "lanes_needed": 16, "fields": 8},
     "selectors [0, 1]: 16 lanes needed, 8 fields"),
    (LaneAddress({}, 0, [0, 0], (0, 1), 2), {"params": {}, "lane": 0, "origin": [0, 0], "cell": [0, 1], "address": 2},
     "lane 0 addresses 0x2 (cell (0, 1)): misaligned"),
    (LaneAddress({"N": 1}, 16, [0, 0], (0, 8)), {"params": {"N": 1}, "lane": 16, "origin": [0, 0], "cell": [0, 8]},
     "N = 1: lane 16 addresses cell (0, 8), which the layout does not place"),
    (BufferPlace("same_place", {}, element={"row": 4, "col": 0}, written={"offset": 288}, read={"offset": 256}),
     {"params": {}, "element": {"row": 4, "col": 0}, "written": {"offset": 288}, "read": {"offset": 256}},
     "(row = 4, col = 0) is written at (offset = 288) and read from (offset = 256)"),
    (TmemLane(0, 0, 31, 31, 0, "r0", 32, (0, 31), {"NUM": 1}),
     {"params": {"NUM": 1}, "offset": 0, "warp": 0, "thread": 31, "lane": 31, "i": 0, "element": "r0", "tmem_lane": 32,
      "allowed": [0, 31]}, "NUM = 1: warp 0 (thread 31, lane 31), element r0: TMEM lane 32, outside 0-31"),
    (ReviewedFacts("p.md", 3, 1, {"registers": {"reviewed": "2", "page": "4"}}),
     {"file": "p.md", "line": 3, "col": 1, "facts": {"registers": {"reviewed": "2", "page": "4"}}},
     "p.md:3:1; registers: '2' -> '4'"),
]


@pytest.mark.parametrize("w,js,words", CHECK_WITNESSES,
                         ids=[f"{type(c[0]).__name__}-{k}" for k, c in enumerate(CHECK_WITNESSES)])
def test_each_check_witness_owns_its_json_and_words(w: Witness, js: dict, words: str) -> None:
    assert w.to_json() == js and list(w.to_json()) == list(js), w  # the keys, in the order the check wrote them
    assert json.loads(json.dumps(w.to_json())) == js
    assert w.describe() == words, w.describe()
    assert dict(w) == js and not isinstance(w, Facts)


def test_every_witness_class_has_a_literal_case() -> None:
    import verify.witnesses as W
    classes = {n for n in W.__all__ if isinstance(getattr(W, n), type) and issubclass(getattr(W, n), Witness)}
    tested = {type(c[0]).__name__ for c in CHECK_WITNESSES}
    core = {"BankConflict", "CellOutside", "CellUnreached", "CheckWitness", "ElementsCollide", "Facts",
            "OutputUnreached", "PointDiffers", "PointOutside", "PointsCollide", "TextPosition", "Witness"}
    assert classes - core == tested


def test_at_member_puts_the_binding_first() -> None:
    w = RegisterCount(2, 2, 4, None, 32, 128, 256)
    assert list(at_member(w, {"N": 8}).to_json())[:2] == ["params", "registers"]
    assert at_member(at_member(w, {"N": 8}), {"N": 16}).member() == {"N": 8}  # a stated member stays
    assert at_member(PointOutside({"N": 4}, {"a": 1}, None), {"N": 8}).member() == {"N": 4}
    f = at_member({"lane": 3}, {"N": 8})
    assert isinstance(f, Facts) and f.to_json() == {"params": {"N": 8}, "lane": 3}
    assert at_member(None, {"N": 8}) is None
