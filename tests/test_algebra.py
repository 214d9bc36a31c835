"""The layout algebra (verify.layout.algebra) and named maps: one tiny literal test per operation, each
asserting the three faces (vectorised evaluation, scalar reference, Z3 encoding) give the stated values,
and each precondition's error.  Then the map-level checks (verify.checks.maps) on small literal maps."""
from __future__ import annotations

import pickle

import numpy as np
import pytest
import z3

from verify.checks import maps
from verify.engines import smt
from verify.formula import Var
from verify.layout import algebra as A
from verify.layout import reshape
from verify.layout.dims import Dim
from verify.layout.family import Param
from verify.layout.named import TableMap, evaluate_all, formula_map, width


def table(m, env=None) -> dict:
    """Every point of ``m`` -> its outputs (None where undefined), by the vectorised face."""
    v = evaluate_all(m, env)
    shape = v.ok.shape
    out = {}
    for k in range(int(np.prod(shape))):
        idx = np.unravel_index(k, shape)
        p = tuple(int(x) for x in idx)
        out[p] = tuple(int(v.out[d.name][idx]) for d in m.outputs) if v.ok[idx] else None
    return out


def faces_agree(m, env=None) -> dict:
    """The vectorised table, after checking the scalar face and Z3 at every point give the same."""
    t = table(m, env)
    w = width(m)
    z_env = {k: smt.bv(v, w) for k, v in (env or {}).items()}
    xs = {d.name: z3.BitVec(d.name, w) for d in m.inputs}
    ok, ys = m.encode(xs, z_env)
    for p, want in t.items():
        point = dict(zip([d.name for d in m.inputs], p))
        got = m.at(point, env)
        assert (None if got is None else tuple(got[d.name] for d in m.outputs)) == want, (p, got, want)
        sub = [(xs[k], smt.bv(v, w)) for k, v in point.items()]
        z_ok = z3.simplify(z3.substitute(ok, *sub))
        assert z3.is_true(z_ok) == (want is not None), p
        if want is not None:
            assert tuple(z3.simplify(z3.substitute(ys[d.name], *sub)).as_signed_long() for d in m.outputs) == want
    return t


ROW4, COL2 = Dim("row", 4), Dim("col", 2)


def test_formula_map_three_faces() -> None:
    m = formula_map("row = lane / 2\ncol = lane % 2", (Dim("lane", 8),), (ROW4, COL2))
    assert faces_agree(m) == {(0,): (0, 0), (1,): (0, 1), (2,): (1, 0), (3,): (1, 1), (4,): (2, 0), (5,): (2, 1),
                              (6,): (3, 0), (7,): (3, 1)}


def test_formula_map_partial() -> None:
    m = formula_map("x = a * 2   if a < 2", (Dim("a", 3),), (Dim("x", 4),))
    assert faces_agree(m) == {(0,): (0,), (1,): (2,), (2,): None}


def test_table_map() -> None:
    m = TableMap((Dim("a", 3),), (Dim("x", 5),), ((0, 4), (2, 1)))
    assert faces_agree(m) == {(0,): (4,), (1,): None, (2,): (1,)}


def test_table_map_caches_stay_out_of_equality_and_pickles() -> None:
    m = TableMap((Dim("a", 3),), (Dim("x", 5),), ((0, 4), (2, 1)))
    twin = TableMap((Dim("a", 3),), (Dim("x", 5),), ((0, 4), (2, 1)))
    assert m.bound() == 4 and hash(m) == hash(twin) and m == twin  # the caches are not fields
    back = pickle.loads(pickle.dumps(m))
    assert not any("hash" in k for k in back.__dict__) and back == m and hash(back) == hash(m)
    assert faces_agree(back) == faces_agree(m)


def test_table_map_from_dense() -> None:
    m = TableMap.from_dense((Dim("a", 2), Dim("b", 2)), (Dim("x", 9),), np.array([[7, 0, 5, 0]]),
                            np.array([True, False, True, False]))
    assert m.rows == ((0, 0, 7), (1, 0, 5))  # the defined points, in point order
    assert m == TableMap((Dim("a", 2), Dim("b", 2)), (Dim("x", 9),), ((0, 0, 7), (1, 0, 5)))
    assert faces_agree(m) == {(0, 0): (7,), (0, 1): None, (1, 0): (5,), (1, 1): None}
    back = pickle.loads(pickle.dumps(m))  # the kept arrays do not travel; they are rebuilt from the rows
    assert not any(k.startswith("_once_") for k in back.__dict__) and faces_agree(back) == faces_agree(m)


def test_identity_and_iota() -> None:
    assert faces_agree(A.identity(Dim("a", 2), Dim("b", 2))) == {(0, 0): (0, 0), (0, 1): (0, 1), (1, 0): (1, 0),
                                                                 (1, 1): (1, 1)}
    assert faces_agree(A.iota(Dim("w", 3), "row", 16)) == {(0,): (0,), (1,): (16,), (2,): (32,)}


def test_compose() -> None:
    inner = formula_map("b = a + 1", (Dim("a", 3),), (Dim("b", 3),))
    outer = formula_map("c = b * 10", (Dim("b", 3),), (Dim("c", 30),))
    # a = 2 gives b = 3, outside outer's input box: undefined
    assert faces_agree(A.compose(outer, inner)) == {(0,): (10,), (1,): (20,), (2,): None}


def test_compose_precondition() -> None:
    with pytest.raises(ValueError, match="reads c, which the inner map"):
        A.compose(formula_map("d = c", (Dim("c", 2),), (Dim("d", 2),)), A.identity(Dim("a", 2)))


def test_product_tiles_shared_outputs() -> None:
    tile = formula_map("row = lane", (Dim("lane", 2),), (Dim("row", 2),))
    warps = A.iota(Dim("warp", 3), "row")
    p = A.product(tile, warps)
    assert [(d.name, d.size) for d in p.inputs] == [("lane", 2), ("warp", 3)]
    assert [(d.name, d.size) for d in p.outputs] == [("row", 6)]
    assert faces_agree(p) == {(0, 0): (0,), (0, 1): (2,), (0, 2): (4,), (1, 0): (1,), (1, 1): (3,), (1, 2): (5,)}


def test_product_passes_other_outputs_through() -> None:
    p = A.product(A.iota(Dim("a", 2), "row"), A.iota(Dim("b", 2), "col"))
    assert [(d.name, d.size) for d in p.outputs] == [("row", 2), ("col", 2)]
    assert faces_agree(p) == {(0, 0): (0, 0), (0, 1): (0, 1), (1, 0): (1, 0), (1, 1): (1, 1)}


def test_product_precondition() -> None:
    with pytest.raises(ValueError, match="'a' appears twice"):
        A.product(A.identity(Dim("a", 2)), A.identity(Dim("a", 2)))


def test_merge() -> None:
    m = formula_map("x = e + 10 * j", (Dim("e", 2), Dim("j", 3)), (Dim("x", 30),))
    mm = reshape.merge(m, ("e", "j"), "i")  # i = e + 2 j
    assert [(d.name, d.size) for d in mm.inputs] == [("i", 6)]
    assert faces_agree(mm) == {(0,): (0,), (1,): (1,), (2,): (10,), (3,): (11,), (4,): (20,), (5,): (21,)}


def test_split() -> None:
    m = formula_map("x = thread", (Dim("thread", 6),), (Dim("x", 6),))
    s = reshape.split(m, "thread", [("lane", 2), ("warp", 3)])
    assert [(d.name, d.size) for d in s.inputs] == [("lane", 2), ("warp", 3)]
    assert faces_agree(s) == {(0, 0): (0,), (0, 1): (2,), (0, 2): (4,), (1, 0): (1,), (1, 1): (3,), (1, 2): (5,)}
    with pytest.raises(ValueError, match="is not the size of thread"):
        reshape.split(m, "thread", [("lane", 4), ("warp", 2)])


def test_restrict_and_fix() -> None:
    m = formula_map("x = a * 10 + b", (Dim("a", 3), Dim("b", 2)), (Dim("x", 30),))
    assert faces_agree(reshape.restrict(m, "a", 1, 2)) == {(0, 0): (10,), (0, 1): (11,), (1, 0): (20,), (1, 1): (21,)}
    assert faces_agree(reshape.fix(m, "a", 2)) == {(0,): (20,), (1,): (21,)}
    with pytest.raises(ValueError, match="not inside"):
        reshape.restrict(m, "a", 2, 2)
    with pytest.raises(ValueError, match="outside"):
        reshape.fix(m, "b", 2)


def test_relabel_is_a_transpose() -> None:
    m = formula_map("row = a\ncol = 0", (Dim("a", 2),), (Dim("row", 2), Dim("col", 1)))
    t = reshape.relabel(m, outputs={"row": "col", "col": "row"})
    assert [d.name for d in t.outputs] == ["col", "row"]
    assert faces_agree(t) == {(0,): (0, 0), (1,): (1, 0)}
    with pytest.raises(ValueError, match="'z' is not an output"):
        reshape.relabel(m, outputs={"z": "y"})


def test_embed() -> None:
    m = reshape.embed(A.iota(Dim("a", 2), "row"), "row", 8, 4)
    assert [(d.name, d.size) for d in m.outputs] == [("row", 8)]
    assert faces_agree(m) == {(0,): (4,), (1,): (5,)}
    with pytest.raises(ValueError, match="does not fit"):
        reshape.embed(A.iota(Dim("a", 2), "row"), "row", 8, 7)


def test_bind_a_family_member() -> None:
    N = Param("N", (2, 4))
    m = formula_map("x = a * N", (Dim("a", 3),), (Dim("x", 12),), params=(N,))
    b = A.bind(m, N=4)
    assert b.params == ()
    assert faces_agree(b) == {(0,): (0,), (1,): (4,), (2,): (8,)}
    with pytest.raises(ValueError, match="not one of its values"):
        A.bind(m, N=3)


def test_bind_one_of_two_parameters_substitutes_it_in_shared_sizes() -> None:
    M, K = Param("M", (2, 4)), Param("K", (1, 3))
    from verify.formula import BinOp, Var
    m = formula_map("x = a * K + b", (Dim("a", Var("M")), Dim("b", Var("K"))), (Dim("x", BinOp("*", Var("M"), Var("K"))),),
                    params=(M, K))
    b = A.bind(m, M=4)
    assert [p.name for p in b.params] == ["K"] and b.inputs[0].size == 4
    assert [b.outputs[0].at({"K": k}) for k in (1, 3)] == [4, 12]  # M's value is in the size, K stays free
    assert maps.in_range(b).status == "proved" and maps.surjective(b).status == "proved"


def test_inverse_of_a_swizzle() -> None:
    sw = formula_map("offset = (row * 4 + col) ^ (row % 4)", (Dim("row", 4), Dim("col", 4)), (Dim("offset", 16),))
    inv = A.inverse(sw)
    t = faces_agree(inv)
    assert t[(5,)] == (1, 0)  # row 1, col 0: 4 ^ 1 = 5
    assert maps.same(A.compose(inv, sw), A.identity(Dim("row", 4), Dim("col", 4))).status == "proved"


def test_inverse_precondition_names_the_collision() -> None:
    bad = formula_map("offset = row", (Dim("row", 2), Dim("col", 2)), (Dim("offset", 4),))
    with pytest.raises(ValueError, match=r"\(row 0, col 0\) and \(row 0, col 1\)"):
        A.inverse(bad)


# ----------------------------------------------------------------------------- map-level checks

SWZ = "offset = (row * 8 + col) ^ ((row % 8) * K)"


def swizzle(k: int):
    return formula_map(SWZ.replace("K", str(k)), (Dim("row", 8), Dim("col", 8)), (Dim("offset", 64),))


def test_bijection_checks_prove_a_swizzle() -> None:
    assert [r.status for r in maps.bijective(swizzle(1))] == ["proved"] * 3


def test_surjective_by_counting_reuses_z3s_in_range_and_injective(monkeypatch: pytest.MonkeyPatch) -> None:
    queries: list[int] = []
    solve = smt.solve
    monkeypatch.setattr(smt, "solve", lambda cs, budget: queries.append(1) or solve(cs, budget))
    m = swizzle(1)
    alone = maps.surjective(m)
    n_alone = len(queries)
    queries.clear()
    reused = maps.surjective(m, z3_proved=frozenset({"in_range", "injective"}))
    assert (alone.status, alone.engines) == (reused.status, reused.engines) == ("proved", {"z3": "proved",
                                                                                       "enumeration": "proved"})
    assert n_alone == 2 and queries == []  # the counting argument's two queries, asked once in bijective
    queries.clear()
    # bijective: one joint query proves in_range and injective, and the count reuses it
    assert [r.status for r in maps.bijective(m)] == ["proved"] * 3 and len(queries) == 1
    # Without both verdicts, Z3 asks itself.
    queries.clear()
    assert maps.surjective(m, z3_proved=frozenset({"in_range"})).status == "proved" and len(queries) == 2


def test_bijection_checks_refute_with_canonical_witnesses() -> None:
    ir, inj, surj = maps.bijective(swizzle(9))
    assert ir.status == "proved"
    assert inj.status == "refuted" and inj.engines == {"z3": "refuted", "enumeration": "refuted"}
    assert inj.counterexample.to_json() == {"params": {}, "first": {"row": 0, "col": 1}, "second": {"row": 1, "col": 0},
                                  "at": {"offset": 1}}
    assert inj.message == "row 0, col 1 and row 1, col 0 both land at (offset 1)"
    assert surj.status == "refuted" and surj.counterexample.to_json() == {"params": {}, "at": {"offset": 8}}


def test_a_failed_joint_query_asks_each_property_alone() -> None:
    """The joint query cannot say which property fails: each is then asked alone, with its own verdict (here
    injective still proved by Z3) and its canonical witness."""
    m = formula_map("offset = row * 8 + col  if row != 3", (Dim("row", 8), Dim("col", 8)), (Dim("offset", 64),))
    assert maps._joint_unsat(m, smt.Budget(10.0)) is False
    ir, inj, surj = maps.bijective(m)
    assert (ir.status, inj.status, surj.status) == ("refuted", "proved", "refuted")
    assert inj.engines == {"z3": "proved", "enumeration": "proved"}
    assert ir.counterexample.to_json() == {"params": {}, "point": {"row": 3, "col": 0}, "at": None}


def test_in_range_witness_names_the_parameter() -> None:
    N = Param("N", (4, 8))
    m = formula_map("x = a * 2", (Dim("a", Var("N")),), (Dim("x", 8),), params=(N,))
    r = maps.in_range(m)
    assert r.status == "refuted"
    assert r.counterexample.to_json() == {"params": {"N": 8}, "point": {"a": 4}, "at": {"x": 8}}


def test_same_finds_the_first_difference() -> None:
    a = formula_map("x = a", (Dim("a", 4),), (Dim("x", 4),))
    b = formula_map("x = a  if a != 1", (Dim("a", 4),), (Dim("x", 4),))
    r = maps.same(a, b, names_=("spec", "given"))
    assert r.status == "refuted"
    assert r.message == "at a 1: spec (x 1), given undefined"
