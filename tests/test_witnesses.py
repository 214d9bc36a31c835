"""Counterexamples are typed witnesses (``verify.witnesses``): each owns its JSON (the contract's keys, in
order) and its words; the checks build them, and results carry nothing else."""
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
from verify.witnesses import (BankConflict, CellOutside, CellUnreached, Element, ElementsCollide, Facts,
                              OutputUnreached, PointDiffers, PointOutside, PointsCollide, TextPosition, Witness,
                              as_witness, fragment_witness, witness_json)


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
        cases[0][0].lane = 1  # type: ignore[attr-defined]  # frozen


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
