"""Layout notation importers: CuTe text and headers, Triton linear layouts, explicit tables.

Every importer is checked three ways: its parser (good text, and hostile text that must fail with
a positioned NotationError, fast), its own semantics (layout functions against hand-computed
values), and the formula it produces, evaluated by the oracle and compared cell by cell with the
PTX spec formulas in ``specs/*.toml``.
"""
from __future__ import annotations

import functools
import json
import os
import pickle
from pathlib import Path

import numpy as np
import pytest
import tomllib
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verify.engines import vector
from verify.engines.oracle import evaluate
from verify.formula import (
    BinOp,
    BoolOp,
    Compare,
    Definition,
    InSet,
    Num,
    Ref,
    Var,
    parse_formula,
    walk,
)
from verify.layout.notations import (
    CuteLayout,
    NotationError,
    TraitEntry,
    TritonLayout,
    TVImport,
    find_mma_headers,
    import_cute,
    import_table,
    import_triton,
    parse_cute,
    parse_table,
    parse_triton,
    ptx_type,
    read_header,
    read_headers,
    table_from_entries,
    table_to_formula,
    triton_to_formula,
    tv_to_formula,
)
from verify.layout.notations.cute_layout import compact_left, congruent, flatten
from verify.layout.notations.errors import decode_source, load_json
from verify.layout.model import cell_at, z3_cell_of

ROOT = Path(__file__).resolve().parent.parent
SPECS = ROOT / "specs"
DATA = Path(__file__).resolve().parent / "data" / "notations"
CUTLASS42 = DATA / "cutlass-4.2.0"
CUTLASS_MAIN = DATA / "cutlass-main"


# ============================================================================ helpers

@functools.cache
def spec_index() -> dict[tuple, tuple[str, int | None]]:
    """(shape, operand, type, variant) -> (formula text, elements per thread) of plain ``mma``."""
    out: dict[tuple, tuple[str, int | None]] = {}
    for path in sorted(SPECS.glob("*.toml")):
        doc = tomllib.loads(path.read_text())
        if doc.get("instruction", {}).get("name") != "mma":
            continue
        for fr in doc["fragment"]:
            text = fr.get("corrected", {}).get("formula", fr["formula"])
            n = fr["registers"] * fr["elements_per_register"] if "registers" in fr else None
            for t in fr["types"]:
                out.setdefault((doc["instruction"]["shape"], fr["operand"], t, fr.get("variant")), (text, n))
    return out


@functools.cache
def spec_formula(shape: str, operand: str, ptype: str, variant: str | None = None):
    text, _ = spec_index()[(shape, operand, ptype, variant)]
    return parse_formula(text, operand.lower())


def cells(formula, lanes, values) -> dict[tuple[int, int], tuple]:
    return _cells(formula, tuple(lanes), values)


@functools.lru_cache(maxsize=None)
def _cells(formula, lanes: tuple[int, ...], values: int) -> dict[tuple[int, int], tuple]:
    """Every cell as the scalar oracle gives it (``None`` where undefined, ``(lo, hi)`` for a column range),
    computed by the vectorised engine (``tests/test_engines.py`` holds the two engines to each other point by
    point), and by the oracle where a point fails to evaluate.  Cached: a spec formula is the reference of
    many tests."""
    ev = vector.VectorEvaluator(formula, np.asarray(lanes, np.int64)[:, None], np.arange(values)[None, :])
    try:
        parts = [ev.full("row"), ev.full("col")]
    except Exception:
        parts = []
    if len(parts) != 2 or any(v.err is not None and v.err.any() for v in parts):
        return {(lane, i): (evaluate(formula, "row", lane, i), evaluate(formula, "col", lane, i))
                for lane in lanes for i in range(values)}

    def at(v: vector.Value, a: int, i: int):
        if v.ok is not None and not v.ok[a, i]:
            return None
        if v.span is not None and v.span[a, i]:
            return int(v.lo[a, i]), int(v.hi[a, i])
        return int(v.lo[a, i])
    return {(lane, i): (at(parts[0], a, i), at(parts[1], a, i)) for a, lane in enumerate(lanes) for i in range(values)}


def assert_matches_spec(imp: TVImport, shape: str, operand: str, ptype: str, variant: str | None = None,
                        lanes=range(32)) -> None:
    spec = spec_formula(shape, operand, ptype, variant)
    got, want = cells(imp.formula, lanes, imp.values), cells(spec, lanes, imp.values)
    bad = [c for c in got if got[c] != want[c]]
    assert not bad, f"{len(bad)} cells differ, first {bad[0]}: imported {got[bad[0]]}, spec {want[bad[0]]}"
    expected_n = spec_index()[(shape, operand, ptype, variant)][1]
    if expected_n is not None:
        assert imp.values == expected_n


def fails(fn, *args, **kw) -> NotationError:
    """Run ``fn``; it must raise a positioned NotationError (never another exception). How fast hostile
    input is rejected is measured in ``benchmarks/hostile.py``, never asserted here."""
    with pytest.raises(NotationError) as info:
        fn(*args, **kw)
    e = info.value
    assert e.line >= 1 and e.col >= 1 and e.message
    return e


def ops_used(formula) -> set[str]:
    return {n.op for d in formula.definitions for n in walk(d) if isinstance(n, BinOp)}


SM80_A_16816 = "((4,8),(2,2,2)):((32,1),(16,8,128))"
SM80_A_16816_CPP = ("Layout<Shape <Shape < _4,_8>,Shape < _2,_2,  _2>>,\n"
                    "       Stride<Stride<_32,_1>,Stride<_16,_8,_128>>>")


# ============================================================================ errors.py

def test_notation_error_fields_one_line_and_pickle():
    e = NotationError("bad stride", 3, 7, "layout.txt")
    assert (e.source, e.line, e.col, e.message) == ("layout.txt", 3, 7, "bad stride")
    assert e.one_line() == "layout.txt:3:7: error: bad stride"
    assert str(e) == e.one_line() and isinstance(e, ValueError)
    back = pickle.loads(pickle.dumps(e))
    assert type(back) is NotationError and back.one_line() == e.one_line()
    assert NotationError("x").one_line() == "argument:1:1: error: x"


def test_decode_source_positions_bad_bytes_and_nul():
    assert decode_source(b"(4,8):(1,4)") == "(4,8):(1,4)"
    e = fails(decode_source, b"(4,8)\n:(1,\xff4)", "f.txt")
    assert (e.source, e.line, e.col) == ("f.txt", 2, 5)
    e = fails(decode_source, "ab\ncd\x00", "g")
    assert (e.line, e.col) == (2, 3)
    fails(decode_source, b"x" * 100, "big", limit=10)
    fails(decode_source, "\ud800")


def test_json_reader_values_and_positions():
    doc = load_json('{"a": [1, 2],\n "b": {"c": null, "d": "x\\u00e9\\ud83d\\ude00"}, "e": -3.5}', "t.json")
    assert doc.value == {"a": [1, 2], "b": {"c": None, "d": "x\u00e9\U0001F600"}, "e": -3.5}
    assert doc.where(doc.value, "b") == (2, 7)
    assert doc.where(doc.value["a"], 1) == (1, 11)
    assert doc.where(doc.value["b"]) == (2, 7)


@pytest.mark.parametrize("text, line, col", [
    ("", 1, 1), ("[1, 2", 1, 6), ("[1,]", 1, 4), ('{"a": 1, "a": 2}', 1, 10), ("[01]", 1, 2),
    ("[1] x", 1, 5), ('["\\ud800"]', 1, 3), ('"abc', 1, 1), ("[" + "9" * 19 + "]", 1, 2), ("[nan]", 1, 2),
    ('{"a" 1}', 1, 6), ("[\n  ]]", 2, 4), ('["a\nb"]', 1, 4),
])
def test_json_reader_rejects_with_position(text, line, col):
    e = fails(load_json, text, "x.json")
    assert (e.line, e.col) == (line, col), e.one_line()


def test_json_reader_refuses_deep_nesting():
    for text in ("[" * 1_000_000, "{\"a\":" * 300_000, "[" * 5 + "]" * 6, "[" * 100_000 + "]" * 100_000):
        fails(load_json, text)
    assert "nesting deeper than 8" in fails(load_json, "[" * 9 + "]" * 9).message
    assert load_json("[" * 8 + "]" * 8).value == [[[[[[[[]]]]]]]]


def _read(reader, text):
    try:
        doc = reader(text, "x.json")
    except NotationError as e:
        return "error", e.one_line()
    return "value", json.dumps(doc.value), doc


def test_json_fast_path_is_the_positional_reader() -> None:
    """``load_json`` reads plain documents with Python's ``json`` and finds positions when asked: on a table and
    on 400 seeded mutations of it (a character deleted, doubled or replaced by JSON punctuation), the value or
    the positioned error is the positional reader's, and so is the position of every member."""
    from verify.layout.notations.errors import _load_json_positioned
    import random
    base = json.dumps({"rows": 16, "cols": 8, "entries": [{"lane": k, "i": k % 4, "element": f"c{k}\u00e9",
                                                           "row": k // 2, "col": None if k == 3 else -k * 1.5}
                                                          for k in range(6)]}, indent=2, ensure_ascii=False)
    rng = random.Random(7)
    texts = [base, base.replace("16", "1" * 19), base.replace("1.5", "1." + "5" * 40), "[" * 8 + "]" * 8]
    for _ in range(400):
        k = rng.randrange(len(base))
        texts.append(rng.choice([base[:k] + base[k + 1:], base[:k] + base[k] + base[k:],
                                 base[:k] + rng.choice('[]{},:"\\-0eN ') + base[k + 1:]]))
    kinds = set()
    for text in texts:
        fast, slow = _read(load_json, text), _read(_load_json_positioned, text)
        assert fast[:2] == slow[:2], text
        kinds.add(fast[0])
        if fast[0] == "value":
            stack = [(fast[2].value, slow[2].value)]
            while stack:
                a, b = stack.pop()
                if isinstance(a, (list, dict)):
                    keys = list(a) if isinstance(a, dict) else range(len(a))
                    assert fast[2].where(a) == slow[2].where(b)
                    assert [fast[2].where(a, k) for k in keys] == [slow[2].where(b, k) for k in keys]
                    stack += zip(a.values(), b.values()) if isinstance(a, dict) else zip(a, b)
    assert kinds == {"value", "error"}


# ============================================================================ cute: parsing

@pytest.mark.parametrize("text, shape, stride", [
    (SM80_A_16816, ((4, 8), (2, 2, 2)), ((32, 1), (16, 8, 128))),
    ("((_4,_8),(_2,_2,_2)):((_32,_1),(_16,_8,_128))", ((4, 8), (2, 2, 2)), ((32, 1), (16, 8, 128))),
    ("  ( (4 , 8) ,\n (2,2,2) ) :\t((32,1),(16,8,128))  ", ((4, 8), (2, 2, 2)), ((32, 1), (16, 8, 128))),
    ("8:1", 8, 1),
    ("_32:_1", 32, 1),
    ("(8):(1)", (8,), (1,)),
    ("(4,2):(0,1)", (4, 2), (0, 1)),                         # stride 0: broadcast
    ("(((2,2),2),4):(((1,2),4),0)", (((2, 2), 2), 4), (((1, 2), 4), 0)),
    ("(4,8)", (4, 8), (1, 4)),                                # no stride: compact column-major
    ("((4,8),(2,2))", ((4, 8), (2, 2)), ((1, 4), (32, 64))),
    (SM80_A_16816_CPP, ((4, 8), (2, 2, 2)), ((32, 1), (16, 8, 128))),
    ("Layout<_32>", 32, 1),
    ("Layout<_32, _0>", 32, 0),
    ("Layout<Shape<_1,_4>>", (1, 4), (0, 1)),                 # CuTe gives extent-1 modes stride 0
    ("Layout<Shape<Shape<_4,_8>,_2>>", ((4, 8), 2), ((1, 4), 32)),
    ("cute::Layout<cute::Shape<Int<4>, C<8>>, Stride<cute::Int<8>, 1>>", (4, 8), (8, 1)),
    ("Layout<Shape<4,8>,Stride<8,1>>;", (4, 8), (8, 1)),
    ("Layout<Shape<_4,_8>, /* rows */ Stride<_8,_1>> // row-major", (4, 8), (8, 1)),
    ("Layout<Shape<Shape<_8>>, Stride<Stride<_8>>>", ((8,),), ((8,),)),
])
def test_parse_cute_forms(text, shape, stride):
    lay = parse_cute(text)
    assert (lay.shape, lay.stride) == (shape, stride)
    assert parse_cute(str(lay)) == lay
    assert parse_cute(lay.to_cpp()) == lay
    assert parse_cute(text.encode()) == lay


def test_printed_and_cpp_forms_agree():
    assert parse_cute(SM80_A_16816) == parse_cute(SM80_A_16816_CPP)
    assert str(parse_cute(SM80_A_16816_CPP)) == SM80_A_16816


@pytest.mark.parametrize("text, line, col, words", [
    ("((4,8),(2,2)):((32,1),(16,8,4))", 1, 23, "not congruent"),
    ("((4,8),(2,2)):((32,1),16)", 1, 23, "not congruent"),
    ("(4,8):((1,2),4)", 1, 8, "not congruent"),
    ("((4,8),(2,2)):\n((32,1),\n (16,8,4))", 3, 2, "not congruent"),
    ("(8):1", 1, 5, "not congruent"),
    ("Layout<Shape<_4,_8>,Stride<_1>>", 1, 21, "not congruent"),
    ("Layout<Shape <Shape < _4,_8>,Shape < _2,_2>>,\n       Stride<Stride<_32,_1>,Stride<Stride<_16,_8>>>>", 2, 30,
     "not congruent"),
    ("(0,8):(1,4)", 1, 2, ">= 1"),
    ("(1048576,2):(1,1)", 1, 10, "2^20"),
    ("(4,8):(1,2147483648)", 1, 10, "too large"),
    ("(4,8):(1,99999999999)", 1, 10, "too large"),
    ("(4,8):(1,-2)", 1, 10, "negative"),
    ("(4,8):(1,2", 1, 11, "expected ',' or ')'"),
    ("(4,8)):(1,2)", 1, 6, "expected ':' between shape and stride"),
    ("(4,8):(1,2))", 1, 12, "after the layout"),
    ("(4,,8):(1,2)", 1, 4, "expected a number"),
    ("():()", 1, 2, "empty tuple"),
    ("4:1:2", 1, 4, "after the layout"),
    ("4;1", 1, 2, "expected ':'"),
    ("", 1, 1, "empty"),
    ("   \n ", 2, 2, "empty"),
    ("(4,8):(1,4)\x00", 1, 12, "NUL"),
    ("(4,8):(1,4.0)", 1, 10, "malformed number"),
    ("(4,8):(1,\"4\")", 1, 10, "unexpected"),
    ("Layout<Foo<_4>>", 1, 8, "unknown type"),
    ("Layout<Shape<_4>,Stride<_1>,_3>", 1, 1, "1 or 2 arguments"),
    ("Layout<Shape<_4,_8>", 1, 20, "expected ','"),
    ("Layout<Shape<_4>,Stride<_1>> x", 1, 30, "after the layout"),
    ("Layout<Layout<_4>>", 1, 8, "a layout where a shape"),
    ("Shape<_4,_8>", 1, 1, "expected a Layout"),
    ("Layout<Shape<Int<4,5>>>", 1, 14, "one argument"),
    ("(4,8):(1,4) /* open", 1, 13, "unterminated"),
])
def test_parse_cute_errors_have_positions(text, line, col, words):
    e = fails(parse_cute, text, "argument")
    assert (e.line, e.col) == (line, col), e.one_line()
    assert words in e.message
    assert e.one_line().startswith(f"argument:{line}:{col}: error: ")


@pytest.mark.parametrize("text", [
    "(" * 1_000_000,
    "(1," * 300_000,
    "((((((((((((((((((((((((((((((((((((((4)))))))))))))))))))))))))))))))))))))):4",
    "Layout<" + "Shape<" * 150_000,
    "Layout<Shape<" + "(" * 500_000,
    "Layout<Shape<Int<" + "(" * 500_000 + "4",
    "(" * 1000 + ")" * 1000,
    ")" * 1_000_000,
    "1" * 1_000_000,
    "_" + "9" * 500_000,
    "(4,8):" + "(" * 400_000,
    b"(4,8):(1,\xc3\x28)",
    b"\xff" * 1000,
    "x" * (2 << 20),
])
def test_parse_cute_hostile_inputs_are_refused(text):
    fails(parse_cute, text)


def test_cute_nesting_up_to_the_bound_is_fine():
    deep = "(" * 32 + "4" + ")" * 32
    lay = parse_cute(f"{deep}:{deep.replace('4', '1')}")
    assert flatten(lay.shape) == (4,) and lay(3) == 3
    fails(parse_cute, "(" * 33 + "4" + ")" * 33)


# ============================================================================ cute: the layout function

def test_layout_function_hand_computed():
    row_major = parse_cute("(4,8):(8,1)")          # 4 x 8 row-major
    assert [row_major(x) for x in (0, 1, 3, 4, 5, 31)] == [0, 8, 24, 1, 9, 31]
    assert row_major.size() == 32 and row_major.cosize() == 32 and row_major.rank() == 2
    a = parse_cute(SM80_A_16816)
    assert a.size() == 256
    # thread t = t0 + 4*t1 -> 32*t0 + t1; value v = v0 + 2*v1 + 4*v2 -> 16*v0 + 8*v1 + 128*v2
    assert a.mode(0)(5) == 32 * 1 + 1 and a.mode(1)(7) == 16 + 8 + 128
    assert a(5, 7) == 33 + 152
    assert a(5 + 32 * 7) == 33 + 152                     # 1-D coordinate: thread mode fastest
    assert a(31 + 32 * 3) == 32 * 3 + 7 + 16 + 8
    bcast = parse_cute("(4,2):(0,1)")
    assert [bcast(x) for x in range(8)] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert parse_cute("8:2")(3) == 6 and parse_cute("8:2").mode(0) == parse_cute("8:2")
    with pytest.raises(ValueError, match="coordinate 256 outside 0..255"):
        a(256)
    with pytest.raises(ValueError, match="coordinate 8 outside 0..7"):  # a mode's own extent (8 values)
        a(0, 8)
    with pytest.raises(ValueError, match="3 coordinates for a rank-2 layout"):
        a(1, 2, 3)
    assert parse_cute("8:2")(7) == 14 and row_major(3, 7) == 31  # after a call: the modes read once are the same


def test_cute_layout_model_checks():
    with pytest.raises(ValueError):
        CuteLayout((4, 8), (1,))
    with pytest.raises(ValueError):
        CuteLayout((4, 0), (1, 4))
    with pytest.raises(ValueError):
        CuteLayout(4, -1)
    assert congruent(((1, 2), 3), ((4, 5), 6)) and not congruent((1, 2), (1, (2,)))
    assert compact_left(((4, 8), (1, 2))) == ((1, 4), (0, 32))


# ============================================================================ cute: TV layouts -> formula

def test_tv_formula_sm80_a_hand_computed():
    imp = tv_to_formula(parse_cute(SM80_A_16816), "A", 16, 8, 16)
    assert (imp.threads, imp.values, imp.extent, imp.operand, imp.notation) == (32, 8, (16, 16), "A", "cute")
    assert imp.formula.element_prefix == "a" and imp.text == SM80_A_16816
    f = imp.formula
    # PTX: row = groupID (+8 for a2,a3,a6,a7), col = 2*threadID_in_group + (i & 1) (+8 for i >= 4)
    assert (evaluate(f, "row", 0, 0), evaluate(f, "col", 0, 0)) == (0, 0)
    assert (evaluate(f, "row", 5, 2), evaluate(f, "col", 5, 2)) == (9, 2)
    assert (evaluate(f, "row", 5, 7), evaluate(f, "col", 5, 7)) == (9, 11)
    assert (evaluate(f, "row", 31, 5), evaluate(f, "col", 31, 5)) == (7, 15)
    assert evaluate(f, "row", 32, 0) is None and evaluate(f, "col", 0, 8) is None
    assert ops_used(f) <= {"/", "%", "*", "+"}
    assert f.names[-2:] == ("row", "col") and f.names[0] == "thread"


def test_tv_formula_b_is_transposed_to_k_by_n():
    # SM80 16x8x16 B: (T32,V4) -> (N8,K16); PTX B row = k = 2*tig + (i&1) (+8), col = n = groupID
    imp = tv_to_formula(parse_cute("((4,8),(2,2)):((16,1),(8,64))"), "B", 16, 8, 16)
    assert imp.extent == (16, 8)
    assert (evaluate(imp.formula, "row", 5, 3), evaluate(imp.formula, "col", 5, 3)) == (2 + 1 + 8, 1)
    assert imp.formula.element_prefix == "b"


def test_tv_formula_c_and_d_and_prefix():
    c = tv_to_formula(parse_cute("((4,8),(2,2)):((32,1),(16,8))"), "D", 16, 8, 8, prefix="d")
    assert c.extent == (16, 8) and c.formula.element_prefix == "d" and c.operand == "D"
    assert (evaluate(c.formula, "row", 6, 3), evaluate(c.formula, "col", 6, 3)) == (9, 5)


def test_tv_formula_broadcast_and_single_thread():
    imp = tv_to_formula(parse_cute("(_128,(_64,_16)):(_0,(_1,_64))"), "A", 64, 8, 16)   # GMMA smem A
    assert imp.threads == 128 and imp.values == 1024
    assert (evaluate(imp.formula, "row", 127, 65), evaluate(imp.formula, "col", 127, 65)) == (1, 1)
    assert evaluate(imp.formula, "row", 128, 0) is None
    one = tv_to_formula(parse_cute("(1,(1,4)):(0,(0,1))"), "A", 1, 1, 4)               # SM61 DP4A
    assert one.threads == 1 and [evaluate(one.formula, "col", 0, i) for i in range(4)] == [0, 1, 2, 3]
    flat = tv_to_formula(parse_cute("(4,2):(0,0)"), "C", 1, 1, 1)
    assert evaluate(flat.formula, "row", 3, 1) == 0 and evaluate(flat.formula, "row", 4, 0) is None


def test_tv_formula_warpgroup_and_quad_thread_modes():
    c64 = "((4,8,4),(2,2,1)):((128,1,16),(64,8,512))"             # GMMA CLayout_64x8
    imp = tv_to_formula(parse_cute(c64), "C", 64, 8, 16)
    assert (imp.threads, imp.values) == (128, 4)
    seen = {(evaluate(imp.formula, "row", t, i), evaluate(imp.formula, "col", t, i))
            for t in range(128) for i in range(4)}
    assert seen == {(r, c) for r in range(64) for c in range(8)}
    # warp w owns rows 16w..16w+15, as PTX wgmma's D fragment
    assert evaluate(imp.formula, "row", 32 * 3 + 5, 2) == 48 + 1 + 8
    quad = tv_to_formula(parse_cute("(4,4):(1,4)"), "C", 4, 4, 1)
    assert quad.threads == 4 and evaluate(quad.formula, "row", 4, 0) is None


def test_tv_formula_with_thrid_quadpair():
    thr = parse_cute("Layout<Shape <_4, _2>, Stride<_1,_16>>")       # SM70_QuadPair
    imp = tv_to_formula(parse_cute("(8,4):(1,8)"), "A", 8, 8, 4, thr_id=thr)  # SM70_8x4_Row
    assert imp.threads == 20
    assert [evaluate(imp.formula, "row", lane, 0) for lane in (0, 3, 16, 19)] == [0, 3, 4, 7]
    assert evaluate(imp.formula, "row", 4, 0) is None and evaluate(imp.formula, "row", 15, 0) is None
    assert tv_to_formula(parse_cute("(32,2):(1,32)"), "C", 32, 2, 1, thr_id=parse_cute("32:1")).threads == 32
    bcast = tv_to_formula(parse_cute("(8,4):(0,8)"), "A", 8, 8, 4, thr_id=thr)   # broadcast over the quadpair
    assert evaluate(bcast.formula, "col", 16, 1) == 1 and evaluate(bcast.formula, "col", 5, 1) is None


@pytest.mark.parametrize("args, words", [
    (("(4,8,2):(1,4,32)", "A", 16, 8, 16), "two top-level modes"),
    (("8:1", "A", 16, 8, 16), "two top-level modes"),
    (("(32,4):(1,32)", "E", 16, 8, 16), "operand"),
    (("(32,4):(1,32)", "A", 0, 8, 16), "extent"),
    (("(32,4):(1,32)", "A", 16, 8, True), "extent"),
])
def test_tv_formula_errors(args, words):
    text, op, m, n, k = args
    e = fails(tv_to_formula, parse_cute(text), op, m, n, k)
    assert words in e.message


def test_tv_formula_thrid_errors():
    lay = parse_cute("(8,4):(1,8)")
    assert "ThrID has 4" in fails(tv_to_formula, lay, "A", 8, 8, 4, thr_id=parse_cute("4:1")).message
    assert "two threads" in fails(tv_to_formula, lay, "A", 8, 8, 4, thr_id=parse_cute("(4,2):(1,0)")).message


def test_import_cute_keeps_text_and_source():
    imp = import_cute(f"  {SM80_A_16816}\n", "a", 16, 8, 16)
    assert imp.text == SM80_A_16816 and imp.operand == "A"
    e = fails(import_cute, "(4,8):(1,4,2)", "A", 16, 8, 16, source="cli")
    assert e.source == "cli"


# ---------------------------------------------------------------------------- round trips vs the spec

# (CuTe TV layout as written in the SM80 traits, operand, (M, N, K), PTX shape, PTX types)
SM80_LAYOUTS = [
    ("((4,8),(2,2)):((32,1),(16,8))", "A", (16, 8, 8), "m16n8k8", ["f16", "bf16"]),
    ("((4,8),2):((16,1),8)", "B", (16, 8, 8), "m16n8k8", ["f16", "bf16"]),
    ("((4,8),(2,2)):((32,1),(16,8))", "C", (16, 8, 8), "m16n8k8", ["f16", "f32"]),
    ("((4,8),(2,2)):((16,1),(8,64))", "A", (16, 8, 8), "m16n8k8", ["tf32"]),
    ("((4,8),2):((8,1),32)", "B", (16, 8, 8), "m16n8k8", ["tf32"]),
    (SM80_A_16816, "A", (16, 8, 16), "m16n8k16", ["f16", "bf16"]),
    ("((4,8),(2,2)):((16,1),(8,64))", "B", (16, 8, 16), "m16n8k16", ["f16", "bf16"]),
    ("((4,8),(2,2)):((32,1),(16,8))", "C", (16, 8, 16), "m16n8k16", ["f16", "f32"]),
    ("((4,8),(4,2)):((64,1),(16,8))", "A", (16, 8, 16), "m16n8k16", ["s8", "u8"]),
    ("((4,8),4):((32,1),8)", "B", (16, 8, 16), "m16n8k16", ["s8", "u8"]),
    ("((4,8),(4,2,2)):((64,1),(16,8,256))", "A", (16, 8, 32), "m16n8k32", ["s8", "u8", "e4m3", "e5m2"]),
    ("((4,8),(4,2)):((32,1),(8,128))", "B", (16, 8, 32), "m16n8k32", ["s8", "u8", "e4m3", "e5m2"]),
    ("((4,8),(8,2)):((128,1),(16,8))", "A", (16, 8, 32), "m16n8k32", ["s4", "u4"]),
    ("((4,8),(8)):((64,1),(8))", "B", (16, 8, 32), "m16n8k32", ["s4", "u4"]),     # after PR #3140
    ("((4,8),(2,2)):((32,1),(16,8))", "C", (16, 8, 32), "m16n8k32", ["s32", "f32"]),
    ("((4,8),2):((16,1),8)", "A", (16, 8, 4), "m16n8k4", ["tf32"]),
    ("((4,8),1):((8,1),0)", "B", (16, 8, 4), "m16n8k4", ["tf32"]),
    ("((4,8),1):((8,1),0)", "A", (8, 8, 4), "m8n8k4", ["f64"]),
    ("((4,8),2):((16,1),8)", "C", (8, 8, 4), "m8n8k4", ["f64"]),
    ("((4,8),4):((32,1),8)", "A", (8, 8, 16), "m8n8k16", ["s8", "u8"]),
    ("((4,8),(8)):((64,1),(8))", "A", (8, 8, 32), "m8n8k32", ["s4", "u4"]),
    ("((4,8),(8,2,2)):((128,1),(16,8,512))", "A", (16, 8, 64), "m16n8k64", ["s4", "u4"]),
    ("((4,8),(8,2)):((64,1),(8,256))", "B", (16, 8, 64), "m16n8k64", ["s4", "u4"]),
    ("((4,8),(32,2,2)):((512,1),(16,8,2048))", "A", (16, 8, 256), "m16n8k256", ["b1"]),
    ("((4,8),(32,2)):((256,1),(8,1024))", "B", (16, 8, 256), "m16n8k256", ["b1"]),
    ("((4,8),32):((256,1),8)", "A", (8, 8, 128), "m8n8k128", ["b1"]),
    ("((4,8),(32,2)):((512,1),(16,8))", "A", (16, 8, 128), "m16n8k128", ["b1"]),   # intent of the malformed one
]


@pytest.mark.parametrize("text, operand, mnk, shape, types", SM80_LAYOUTS,
                         ids=[f"{s}-{o}-{t[0]}" for _, o, _, s, t in SM80_LAYOUTS])
def test_cute_sm80_layouts_equal_ptx_spec(text, operand, mnk, shape, types):
    imp = tv_to_formula(parse_cute(text), operand, *mnk)
    for t in types:
        assert_matches_spec(imp, shape, operand, t)


def test_pr_layouts_before_and_after():
    doc = tomllib.loads((DATA / "cute_pr_layouts.toml").read_text())
    assert {d["pr"] for d in doc["layout"]} == {3140, 1856, 0}
    for d in doc["layout"]:
        m, n, k = d["mnk"]
        after = parse_cute(d["after"])
        assert str(after) == d["after_printed"]
        assert_matches_spec(tv_to_formula(after, d["operand"], m, n, k), d["ptx_shape"], d["operand"], d["ptx_type"])
        if not d["before_printed"]:
            assert "not congruent" in fails(parse_cute, d["before"]).message
            continue
        before = parse_cute(d["before"])
        assert str(before) == d["before_printed"]
        imp = tv_to_formula(before, d["operand"], m, n, k)
        got = cells(imp.formula, range(32), imp.values)
        want = cells(spec_formula(d["ptx_shape"], d["operand"], d["ptx_type"]), range(32), imp.values)
        assert got != want
        injective = len(set(got.values())) == len(got)
        assert injective == ("not injective" not in d["before_verdict"])


# ============================================================================ cute headers

@functools.cache
def wheel_headers():
    return read_headers(find_mma_headers(CUTLASS42))


def all_traits(results) -> dict[str, TraitEntry]:
    return {t.name: t for r in results for t in r.traits}


def test_headers_4_2_counts_and_malformed_trait():
    results = {Path(r.source).name: r for r in wheel_headers()}
    counts = {name: (len(r.traits), len(r.skipped)) for name, r in results.items()}
    assert counts == {"mma_traits_sm61.hpp": (2, 0), "mma_traits_sm70.hpp": (8, 0), "mma_traits_sm75.hpp": (2, 0),
                      "mma_traits_sm80.hpp": (63, 2), "mma_traits_sm89.hpp": (8, 0), "mma_traits_sm90.hpp": (6, 0)}
    skipped = results["mma_traits_sm80.hpp"].skipped
    assert [s.name for s in skipped] == ["SM80_16x8x128_S32U1U1S32_TN_XORPOPC", "SM80_16x8x128_S32U1U1S32_TN_ANDPOPC"]
    assert skipped[0].line == 670
    assert "mma_traits_sm80.hpp:680:47: error: stride ((16,8)) is not congruent with shape (32,2)" in skipped[0].reason
    assert "mma_traits_sm80.hpp:680:47:" in skipped[1].reason and skipped[1].line == 687  # inherited


def test_header_trait_fields_aliases_and_inheritance():
    traits = all_traits(wheel_headers())
    t = traits["SM80_16x8x16_F32F16F16F32_TN"]
    assert t.value_types == ("half_t", "half_t", "float", "float")
    assert t.shape_mnk == (16, 8, 16) and t.thr_id == parse_cute("32:1")
    assert t.a_layout == parse_cute(SM80_A_16816)
    assert t.c_layout == parse_cute("((4,8),(2,2)):((32,1),(16,8))")          # alias SM80_16x8_Row
    assert t.base == "SM80_16x8x16_F16F16F16F16_TN" and t.line == 109
    sat = traits["SM80_16x8x32_S32U8U8S32_TN_SATURATE"]                      # two levels of inheritance
    assert sat.value_types == ("uint8_t", "uint8_t", "int32_t", "int32_t")
    assert sat.a_layout == traits["SM80_16x8x32_S32S8S8S32_TN"].a_layout
    assert traits["SM80_16x8x4_F32TF32TF32F32_TN"].value_types[0] == "cutlass::tfloat32_t"
    assert traits["SM80_8x8x4_GC64C64C64GC64_TN"].value_types[3] == "typename SM80_8x8x4_GC64C64C64GC64_TN::GaussComplex"
    assert traits["SM70_8x8x4_F16F16F16F16_TN"].thr_id == parse_cute("(4,2):(1,16)")
    assert traits["SM61_DP4A"].a_layout == parse_cute("(1,4):(0,1)")
    assert traits["SM90_16x8x4_F64F64F64F64_TN"].b_layout == parse_cute("((4,8),1):((8,1),0)")
    assert traits["SM89_16x8x32_F16E5M2E4M3F16_TN"].value_types[:2] == ("cutlass::float_e5m2_t",
                                                                           "cutlass::float_e4m3_t")


def test_pr3140_in_wheel_and_main():
    old = all_traits(wheel_headers())["SM80_16x8x32_S32S4S4S32_TN"].b_layout
    new = all_traits(read_headers([CUTLASS_MAIN / "mma_traits_sm80.hpp"]))["SM80_16x8x32_S32S4S4S32_TN"].b_layout
    assert str(old) == "((4,8),(8)):((32,1),(8))" and str(new) == "((4,8),(8)):((64,1),(8))"


def _check_traits_against_spec(results, lanes=range(32), sm70=False):
    """Every trait operand with a spec fragment: compare (cached per distinct layout)."""
    verdicts: dict[tuple, bool] = {}
    out: dict[tuple[str, str], bool] = {}
    for t in (t for r in results for t in r.traits):
        m, n, k = t.shape_mnk
        shape = f"m{m}n{n}k{k}"
        major = t.name.rsplit("_", 1)[-1]
        for op, vt in (("A", t.value_types[0]), ("B", t.value_types[1]), ("C", t.value_types[2])):
            variant = None
            if sm70 and op != "C":
                variant = ("row" if major[0] == "T" else "col") if op == "A" else ("col" if major[1] == "N" else "row")
            key = (shape, op, ptx_type(vt), variant)
            if key not in spec_index():
                continue
            cache = (str(t.layout(op)), str(t.thr_id), shape, op, spec_index()[key][0])
            if cache not in verdicts:
                imp = t.import_operand(op)
                spec = spec_formula(*key)
                verdicts[cache] = cells(imp.formula, lanes, imp.values) == cells(spec, lanes, imp.values)
            out[(t.name, op)] = verdicts[cache]
    return out


def test_every_cutlass_4_2_trait_matches_spec_except_pr3140():
    results = [r for r in wheel_headers() if "sm70" not in r.source]
    verdicts = _check_traits_against_spec(results)
    assert len(verdicts) >= 200
    wrong = sorted(k for k, ok in verdicts.items() if not ok)
    assert wrong == sorted((f"SM80_16x8x32_S32{a}{b}S32_TN{s}", "B") for a in ("S4", "U4") for b in ("S4", "U4")
                           for s in ("", "_SATURATE"))


def test_cutlass_main_sm80_matches_spec_everywhere():
    verdicts = _check_traits_against_spec(read_headers([CUTLASS_MAIN / "mma_traits_sm80.hpp"]))
    assert len(verdicts) >= 150 and all(verdicts.values())


def test_sm70_quadpair_traits_match_spec_variants_on_their_lanes():
    results = [r for r in wheel_headers() if "sm70" in r.source]
    verdicts = _check_traits_against_spec(results, lanes=(0, 1, 2, 3, 16, 17, 18, 19), sm70=True)
    assert len(verdicts) == 24 and all(verdicts.values())


def test_trait_import_operand():
    t = all_traits(wheel_headers())["SM80_16x8x8_F32TF32TF32F32_TN"]
    imp = t.import_operand("D")
    assert imp.text.startswith("MMA_Traits<SM80_16x8x8_F32TF32TF32F32_TN>::CLayout = ")
    assert imp.operand == "D" and imp.notation == "cute" and imp.extent == (16, 8)
    assert t.import_operand("b").extent == (8, 8)


SYNTHETIC = r'''
#pragma once
#include <cute/layout.hpp>
#define FOO(x) \
   struct MMA_Traits<Fake> { using ALayout = Layout<_1>; };
namespace cute {
// struct MMA_Traits<InAComment> {};
/* template <> struct MMA_Traits<InABlockComment> { }; */
static const char* s = "template <> struct MMA_Traits<InAString> {}; // not a comment";
namespace { using Row = Layout<Shape <Shape < _4,_8>,Shape < _2,_2>>, Stride<Stride<_32,_1>,Stride<_16,_8>>>; }
namespace GMMA {
template <int N>
using CLayout_64xN = Layout<Shape <Shape <  _4,_8, _4>,Shape < _2,_2,Int<N/8>>>,
                            Stride<Stride<_128,_1,_16>,Stride<_64,_8,   _512>>>;
using CLayout_64x16 = CLayout_64xN<16>;
template <int M, int K>
using ABLayout = Layout<Shape <_128,Shape <Int<M>,Int<K>>>, Stride<  _0,Stride<    _1,Int<M>>>>;
template <class T> using ByType = Layout<_4>;
template <int = 8> using Unnamed = Layout<_4>;
template <int N, > using Trailing = Layout<_4>;
}
using NotALayout = SM90::MMA_16x8x4_F64F64F64F64_TN;
using Weird = decltype(make_layout(Shape<_4>{}));
template <class T> CUTE_HOST_DEVICE void helper(T t) { if (t < 2 && t > 1) { } }
template <>
struct MMA_Traits<Good>
{
  using ValTypeD = float;
  using ValTypeA = half_t;
  using ValTypeB = half_t;
  using ValTypeC = float;
  using Shape_MNK = Shape<_16,_8,_16>;
  using ThrID   = Layout<_32>;
  using ALayout = Layout<Shape <Shape < _4,_8>,Shape < _2,_2,  _2>>,
                         Stride<Stride<_32,_1>,Stride<_16,_8,_128>>>;
  using BLayout = Layout<Shape <Shape < _4,_8>,Shape <_2, _2>>,
                         Stride<Stride<_16,_1>,Stride<_8,_64>>>;
  using CLayout = cute::Row;
  static constexpr int x = 3;
  CUTE_HOST_DEVICE void f() { return; }
};
template <> struct MMA_Traits<Derived> : MMA_Traits<Good> { using ValTypeA = bfloat16_t; };
template <> struct MMA_Traits<Derived2> : public MMA_Traits<Derived> {};
template <GMMA::Major tnspA>
struct MMA_Traits<Templated<tnspA>> { using ALayout = Layout<_1>; };
template <> struct MMA_Traits<FromTemplated> : MMA_Traits<Templated<GMMA::Major::K>> {};
template <> struct MMA_Traits<NoBase> : MMA_Traits<Missing> {};
template <> struct MMA_Traits<Wgmma> : MMA_Traits<Good> {
  using Shape_MNK = Shape<_64,_16,_16>;
  using ThrID   = Layout<_128>;
  using ALayout = GMMA::ABLayout< 64, 16>;
  using BLayout = GMMA::ABLayout< 16, 16>;
  using CLayout = GMMA::CLayout_64x16;
};
template <> struct MMA_Traits<BadAlias> : MMA_Traits<Good> { using ALayout = Unknown; };
template <> struct MMA_Traits<UsesDecltype> : MMA_Traits<Good> { using ALayout = Weird; };
template <> struct MMA_Traits<UsesTypeTemplate> : MMA_Traits<Good> { using ALayout = GMMA::ByType<int>; };
template <> struct MMA_Traits<UsesUnnamed> : MMA_Traits<Good> { using ALayout = GMMA::Unnamed<8>; };
template <> struct MMA_Traits<BadCongruence> : MMA_Traits<Good> {
  using BLayout = Layout<Shape<_4,_8>,
                         Stride<_1>>;
};
template <> struct MMA_Traits<Incomplete> { using ValTypeA = float; };
template <> struct MMA_Traits<Declared>;
template <> struct MMA_Traits<BadShape> : MMA_Traits<Good> { using Shape_MNK = Shape<_16,_8>; };
} // namespace cute
'''


def test_synthetic_header_reader():
    r = read_header(SYNTHETIC, "syn.hpp")
    traits = {t.name: t for t in r.traits}
    skipped = {s.name: s for s in r.skipped}
    assert set(traits) == {"Good", "Derived", "Derived2", "Wgmma"}
    assert "Fake" not in skipped and not any("InA" in n for n in list(traits) + list(skipped))
    good = traits["Good"]
    assert good.c_layout == parse_cute("((4,8),(2,2)):((32,1),(16,8))") and good.base is None and good.line == 26
    assert traits["Derived2"].value_types == ("bfloat16_t", "half_t", "float", "float")
    w = traits["Wgmma"]
    assert w.c_layout == parse_cute("((4,8,4),(2,2,2)):((128,1,16),(64,8,512))")
    assert w.a_layout == parse_cute("(128,(64,16)):(0,(1,64))") and w.thr_id == parse_cute("128:1")
    assert w.import_operand("C").threads == 128
    assert skipped["Templated<tnspA>"].reason.startswith("templated (partial specialisation over GMMA::Major tnspA")
    assert "was skipped" in skipped["FromTemplated"].reason
    assert "not defined" in skipped["NoBase"].reason
    assert "syn.hpp:55:78:" in skipped["BadAlias"].reason and "unknown type 'Unknown'" in skipped["BadAlias"].reason
    assert "alias Weird could not be read" in skipped["UsesDecltype"].reason
    assert "is not an integer" in skipped["UsesTypeTemplate"].reason
    assert "has no name" in skipped["UsesUnnamed"].reason
    assert "syn.hpp:61:26: error: stride (1) is not congruent with shape (4,8)" in skipped["BadCongruence"].reason
    assert skipped["Incomplete"].reason.startswith("missing ValTypeB")
    assert skipped["Declared"].reason == "declaration without a body"
    assert "Shape_MNK is not Shape<M,N,K>" in skipped["BadShape"].reason


def test_header_include_order_reads_included_file_at_its_include(tmp_path):
    # 'a_ext' sorts first but uses an alias and a base trait that 'b_main' defines before its
    # '#include "a_ext.hpp"' (as mma_traits_sm90_gmma.hpp includes its _ext at the end)
    (tmp_path / "a_ext.hpp").write_text(
        "namespace cute {\ntemplate <> struct MMA_Traits<Ext> : MMA_Traits<Base> { using ALayout = Late; };\n}\n")
    (tmp_path / "b_main.hpp").write_text(
        "namespace cute {\nusing Late = Layout<Shape<_32,_2>, Stride<_1,_32>>;\n"
        "template <> struct MMA_Traits<Base> {\n  using ValTypeD = float; using ValTypeA = half_t;\n"
        "  using ValTypeB = half_t; using ValTypeC = float; using Shape_MNK = Shape<_32,_1,_2>;\n"
        "  using ThrID = Layout<_32>; using ALayout = Layout<Shape<_32,_2>>; using BLayout = Layout<Shape<_32,_2>>;\n"
        "  using CLayout = Layout<Shape<_32,_1>>;\n};\n}\n#include \"a_ext.hpp\"\n"
        "namespace cute {\ntemplate <> struct MMA_Traits<After> : MMA_Traits<Ext> {};\n}\n")
    results = read_headers([tmp_path / "a_ext.hpp", tmp_path / "b_main.hpp"])
    assert [Path(r.source).name for r in results] == ["b_main.hpp", "a_ext.hpp"]
    assert [(t.name, t.line) for t in results[0].traits] == [("Base", 3), ("After", 12)]
    assert not results[1].skipped
    ext = results[1].traits[0]
    assert ext.name == "Ext" and ext.a_layout == parse_cute("(32,2):(1,32)") and ext.line == 2
    assert ext.c_layout == parse_cute("(32,1):(1,0)") and ext.base == "Base"


@pytest.mark.parametrize("text", [
    "template <" * 10_000,
    "{" * 30_000,
    "}" * 30_000,
    "namespace cute { using X = " + "Shape<" * 10_000 + "; template <> struct MMA_Traits<T> { using ALayout = X; };",
    "template <> struct MMA_Traits<" + "<" * 10_000,
    "template <> struct MMA_Traits<T> {" + "using A = B;" * 2_000,
    "/*" + "x" * 100_000,
    '"' * 1001 + "\n" * 1000,
    "#define X \\\n" * 5_000,
    "\x01\x02\x03" * 10_000,
])
def test_header_reader_survives_hostile_text(text):
    """Read or refused with a position.  Nesting ten times deeper than Python's recursion limit shows that no
    reader recurses; how long ten times these sizes take is ``benchmarks/hostile.py``'s to measure."""
    try:
        r = read_header(text, "h.hpp")
        assert all(isinstance(s.reason, str) for s in r.skipped)
    except NotationError as e:
        assert e.line >= 1


def test_header_reader_rejects_non_utf8_and_token_floods():
    assert fails(read_header, b"namespace cute {\n\xff}", "h.hpp").line == 2
    fails(read_header, "; " * 500_000, "h.hpp")


def test_ptx_type_names():
    assert [ptx_type(v) for v in ("half_t", "cutlass::bfloat16_t", "cute::uint1b_t", "int4b_t", "float_e4m3_t",
                                  "complex<double>")] == ["f16", "bf16", "b1", "s4", "e4m3", None]


@pytest.mark.skipif(not os.environ.get("PTX_CUTLASS_INCLUDE"), reason="set PTX_CUTLASS_INCLUDE to a CUTLASS include dir (docs/ci.md)")
def test_whole_cutlass_include_dir():  # e.g. the nvidia-cutlass wheel's cutlass_library/source/include
    results = read_headers(find_mma_headers(os.environ["PTX_CUTLASS_INCLUDE"]))
    traits = all_traits(results)
    assert "SM90_64x8x16_F16F16F16_SS" not in traits and len(traits) > 300   # GMMA explicit specialisations
    assert traits["SM90_64x256x32_S32U8U8_RS_TN_SATURATE"].c_layout.size() == 128 * 128


# ============================================================================ triton

ACC_PRINTED = ("DistributedLinearLayout(reg_bases=[[0, 1], [8, 0]], lane_bases=[[0, 2], [0, 4], [1, 0], [2, 0], "
               "[4, 0]], warp_bases=[], block_bases=[], shape=[16, 8])")
ACC = TritonLayout(((0, 1), (8, 0)), ((0, 2), (0, 4), (1, 0), (2, 0), (4, 0)), (), (), (16, 8))


@pytest.mark.parametrize("text", [
    ACC_PRINTED,
    '{"register": [[0,1],[8,0]], "lane": [[0,2],[0,4],[1,0],[2,0],[4,0]], "warp": [], "block": [], "shape": [16, 8]}',
    '{"reg_bases": [[0,1],[8,0]], "lane_bases": [[0,2],[0,4],[1,0],[2,0],[4,0]], "meta": {"x": [1.5, "y"]}}',
    ("#ttg.linear<{register = [[0, 1], [8, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [], "
     "block = []}>"),
    "LinearLayout(\n  reg_bases=[[0,1],[8,0],],\n  lane_bases=[[0,2],[0,4],[1,0],[2,0],[4,0]],\n)",
    "{register: [[0,1],[8,0]], lane: [[0,2],[0,4],[1,0],[2,0],[4,0]], shape: [16, 8]}",
])
def test_parse_triton_forms(text):
    assert parse_triton(text) == ACC
    assert parse_triton(text.encode()) == ACC


def test_triton_layout_function_hand_computed():
    assert ACC.values == 4 and ACC.threads == 32
    # lane 5 = bits 0 and 2 -> col 2, row 1; register 3 -> col 1, row 8
    assert ACC(0, 5) == (1, 2) and ACC(3, 5) == (9, 3) and ACC(3, 31) == (15, 7)
    assert ACC.at_thread(5, 3) == (9, 3)
    odd = TritonLayout(((1, 0), (3, 0)), (), shape=(4, 1))     # a GF(2) basis need not be a power of two
    assert [odd(r, 0) for r in range(4)] == [(0, 0), (1, 0), (3, 0), (2, 0)]
    rep = TritonLayout(((0, 1), (0, 0)), (), shape=(1, 2))      # a zero basis replicates
    assert rep(0, 0) == rep(2, 0) and rep(1, 0) == rep(3, 0)
    with pytest.raises(ValueError):
        ACC(4, 0)


def test_triton_non_power_of_two_basis_is_accepted_and_xored():
    lay = parse_triton('{"register": [[1, 0], [3, 0]], "lane": [], "shape": [4, 1]}')
    imp = triton_to_formula(lay, "c")
    assert [evaluate(imp.formula, "row", 0, i) for i in range(4)] == [0, 1, 3, 2]
    assert parse_triton('{"register": [[5, 3]]}').shape == (8, 4)         # shape inferred from the span


def test_triton_formula_matches_layout_everywhere():
    warps = parse_triton((DATA / "triton_mma_v2_acc_2x2warps_32x16.json").read_text())
    for lay in (ACC, warps, TritonLayout(((0, 1), (0, 0), (3, 2)), ((1, 0),), ((2, 0),), ((0, 0),), (4, 4))):
        imp = triton_to_formula(lay, "c")
        assert (imp.threads, imp.values, imp.extent, imp.notation) == (lay.threads, lay.values, lay.shape, "triton")
        for t in range(lay.threads):
            for i in range(lay.values):
                assert (evaluate(imp.formula, "row", t, i), evaluate(imp.formula, "col", t, i)) == lay.at_thread(t, i)
        assert evaluate(imp.formula, "row", lay.threads, 0) is None
        assert evaluate(imp.formula, "col", 0, lay.values) is None
        assert ops_used(imp.formula) <= {"&", "^", ">>", "*"}


@pytest.mark.parametrize("text, line, col, words", [
    ('{"register": [[0,1]], "shape": [12, 8]}', 1, 33, "power of two"),
    ('{"register": [[0,1]], "shape": [16, 0]}', 1, 37, "power of two"),
    ('{"register": [[0,9]], "shape": [16, 8]}', 1, 37, "outside shape"),
    ('{"register": [[0,-1]]}', 1, 18, "negative"),
    ('{"register": [[0,1,2]]}', 1, 15, "only 2-D"),
    ('{"register": [[0,1.5]]}', 1, 18, "integer"),
    ('{"register": [[0,true]]}', 1, 18, "integer"),
    ('{"register": [7]}', 1, 15, "pair"),
    ('{"register": 7}', 1, 14, "list"),
    ('{"lanes": [[0,1]]}', 1, 2, "unknown key"),
    ('{"reg_bases": [], "register": []}', 1, 19, "repeats"),
    ('{"register": [[0,1]], "block": [[0,1]]}', 1, 32, "block"),
    ('{"warp": [[0,1]]}', 1, 1, "no register or lane"),
    ('{"register": [' + "[0,0]," * 16 + "[0,0]]}", 1, 14, "limit 16"),
    ('{"register": [[0,1]], "shape": [16]}', 1, 32, "shape must be"),
    ('{"register": [[0,' + "9" * 12 + "]]}", 1, 18, "too large"),
    ('{"register": [[0, 1048576]]}', 1, 19, "too large"),
    ("DistributedLinearLayout(reg_bases=[[0,1]], lane_bases=[[0,2]]", 1, 62, "expected ',' or ')'"),
    ("DistributedLinearLayout(reg_bases=[[0,1]) ", 1, 41, "expected ',' or ']'"),
    ("DistributedLinearLayout(reg_bases=[[0,1]], foo=[])", 1, 44, "unknown key"),
    ("DistributedLinearLayout(reg_bases=[[0,1]], reg_bases=[])", 1, 44, "twice"),
    ("DistributedLinearLayout(reg_bases [[0,1]])", 1, 35, "expected '='"),
    ("DistributedLinearLayout(reg_bases=[[0,1]]) junk", 1, 44, "after the layout"),
    ("#ttg.linear<{register = [[0, 1]]}", 1, 34, "expected '>'"),
    ("#ttg.linear{register = []}", 1, 12, "expected '<'"),
    ("Layout reg_bases", 1, 8, "expected '('"),
    ("[[0, 1]]", 1, 1, "expected a linear layout"),
    ("", 1, 1, "empty"),
    ("DistributedLinearLayout(reg_bases=[[0,1]]\n  @)", 2, 3, "unexpected character"),
    ("DistributedLinearLayout(reg_bases=[[0, 99999999999]])", 1, 40, "too large"),
])
def test_parse_triton_errors_have_positions(text, line, col, words):
    e = fails(parse_triton, text, "t.json")
    assert (e.line, e.col) == (line, col), e.one_line()
    assert words in e.message


@pytest.mark.parametrize("text", [
    "[" * 1_000_000, "DistributedLinearLayout(reg_bases=" + "[" * 500_000, '{"register": ' + "[" * 500_000,
    "#ttg.linear<{" * 300_000, "(" * 1_000_000, b"\xfe\xff" * 1000, "x(" + "reg_bases=[]," * 100_000,
    "A" * 1_000_000, "DistributedLinearLayout(reg_bases=[[0," + "1" * 500_000 + "]])",
    "DistributedLinearLayout(reg_bases=" + "[" * 50_000 + "]" * 50_000 + ")",
    '{"register": ' + "[" * 50_000 + "]" * 50_000 + "}",
])
def test_parse_triton_hostile_inputs_are_refused(text):
    fails(parse_triton, text)


TRITON_FILES = [
    ("triton_mma_v2_acc_16x8.json", "C", "m16n8k8", "f32"),
    ("triton_mma_v2_acc_16x8.json", "C", "m16n8k16", "f32"),
    ("triton_mma_v2_f16_a_16x16.json", "A", "m16n8k16", "f16"),
    ("triton_mma_v2_f16_b_16x8.json", "B", "m16n8k16", "f16"),
    ("triton_mma_v2_tf32_a_16x8.json", "A", "m16n8k8", "tf32"),
    ("triton_mma_v2_tf32_b_8x8.json", "B", "m16n8k8", "tf32"),
    ("triton_mma_v2_i8_a_16x32.json", "A", "m16n8k32", "s8"),
    ("triton_mma_v2_i8_b_32x8.json", "B", "m16n8k32", "s8"),
]


@pytest.mark.parametrize("name, operand, shape, ptype", TRITON_FILES)
def test_triton_data_files_equal_ptx_spec(name, operand, shape, ptype):
    text = (DATA / name).read_text()
    meta = json.loads(text)["meta"]
    assert meta["triton_version"] == "3.9.0" and meta["params"]["version"] == [2, 0]
    assert meta["params"]["warps_per_cta"] == [1, 1] and meta["params"]["instr_shape"] == [16, 8]
    assert parse_triton(meta["printed"]) == parse_triton(text)
    imp = import_triton(text, operand=operand, source=name)                 # prefix from the operand
    assert imp.threads == 32 and imp.operand == operand and imp.formula.element_prefix == operand.lower()
    assert_matches_spec(imp, shape, operand, ptype)


def test_triton_four_warps_tile_the_spec_fragment():
    imp = import_triton((DATA / "triton_mma_v2_acc_2x2warps_32x16.json").read_text(), "c")
    assert (imp.threads, imp.values, imp.extent) == (128, 4, (32, 16))
    spec = spec_formula("m16n8k8", "C", "f32")
    for t in range(128):
        warp, lane = divmod(t, 32)
        for i in range(4):
            want = (evaluate(spec, "row", lane, i) + 16 * (warp >> 1), evaluate(spec, "col", lane, i) + 8 * (warp & 1))
            assert (evaluate(imp.formula, "row", t, i), evaluate(imp.formula, "col", t, i)) == want


# ============================================================================ tables

def _spec_entries(shape, operand, ptype, values):
    f = spec_formula(shape, operand, ptype)
    return [(lane, i, evaluate(f, "row", lane, i), evaluate(f, "col", lane, i)) for lane in range(32)
            for i in range(values)]


@pytest.mark.parametrize("shape, operand, ptype, values", [
    ("m16n8k16", "A", "f16", 8), ("m16n8k16", "B", "f16", 4), ("m16n8k8", "C", "f32", 4),
    ("m16n8k32", "A", "s4", 16), ("m16n8k256", "A", "b1", 128), ("m8n8k4", "B", "f64", 1),
])
def test_table_round_trip_from_spec(shape, operand, ptype, values):
    entries = _spec_entries(shape, operand, ptype, values)
    imp = table_to_formula(table_from_entries(entries), operand.lower())
    assert (imp.threads, imp.values, imp.notation) == (32, values, "table")
    assert_matches_spec(imp, shape, operand, ptype)
    row_def = imp.formula.get("row")
    assert len(row_def.cases) == len({e[2] for e in entries})             # one case per distinct row
    assert imp.formula.names == ("key", "row", "col")
    # outside the domain nothing is defined, even where lane * values + i names another entry's key
    assert evaluate(imp.formula, "row", 0, values) is None and evaluate(imp.formula, "col", 32, 0) is None
    text = json.dumps({"entries": [{"lane": a, "i": b, "row": c, "col": d} for a, b, c, d in entries]})
    assert cells(import_table(text, "x").formula, range(32), values) == cells(imp.formula, range(32), values)


def test_table_data_file_in_ptx_verify_format():
    imp = import_table((DATA / "table_mma_m16n8k8_C_f32.json").read_bytes(), "c", operand="C", source="t.json")
    assert imp.extent == (16, 8) and imp.operand == "C"
    assert_matches_spec(imp, "m16n8k8", "C", "f32")


def test_table_bare_list_nulls_missing_and_extra_keys():
    text = json.dumps([
        {"lane": 0, "i": 0, "row": 0, "col": 0, "element": "a0", "mma": 0},
        {"lane": 0, "i": 1, "row": None, "col": 5},
        {"lane": 2, "i": 1, "row": 3, "col": 4, "chunk": None},
    ])
    table = parse_table(text)
    assert (table.threads, table.values, table.rows) == (3, 2, None)
    imp = table_to_formula(table)
    assert imp.formula.element_prefix == "a" and table_to_formula(table, operand="c").formula.element_prefix == "c"
    got = cells(imp.formula, range(4), 3)
    assert got[(0, 0)] == (0, 0) and got[(0, 1)] == (None, 5) and got[(2, 1)] == (3, 4)
    assert got[(1, 0)] == (None, None) and got[(2, 0)] == (None, None)    # missing -> undefined
    assert got[(3, 0)] == (None, None) and got[(0, 2)] == (None, None)    # outside the domain
    assert imp.extent is None
    assert {type(n) for d in imp.formula.definitions for n in walk(d)} <= {Definition, BinOp, Var, Ref, InSet,
                                                                           BoolOp, Compare,
                                                                           type(imp.formula.get("row").cases[0]),
                                                                           type(imp.formula.get("row").cases[0].expr)}


@pytest.mark.parametrize("text, line, col, words", [
    ('{"entries": [{"lane": 0, "i": 0, "row": 0, "col": 0},\n  {"lane": 0, "i": 0, "row": 1, "col": 1}]}', 2, 3,
     "appears twice (first at 1:14)"),
    ('[{"lane": -1, "i": 0, "row": 0, "col": 0}]', 1, 11, "outside"),
    ('[{"lane": 0, "i": 0.0, "row": 0, "col": 0}]', 1, 19, "integer"),
    ('[{"lane": 0, "i": 0, "row": true, "col": 0}]', 1, 29, "integer or null"),
    ('[{"lane": 0, "i": 0, "col": 0}]', 1, 2, "no 'row'"),
    ('[{"lane": 0, "i": 0, "row": 0, "col": 0}, 7]', 1, 43, "must be an object"),
    ('{"rows": 16, "entries": [{"lane": 0, "i": 0, "row": 16, "col": 0}]}', 1, 53, "outside the table's 16 rows"),
    ('{"cols": 8, "entries": [{"lane": 0, "i": 0, "row": 1, "col": 8}]}', 1, 62, "outside the table's 8 cols"),
    ('{"rows": 0, "entries": []}', 1, 10, ">= 1"),
    ('{"entries": {}}', 1, 13, "must be a list"),
    ('{"id": "x"}', 1, 1, "entries"),
    ('{"entries": []}', 1, 13, "no entries"),
    ("7", 1, 1, "expected an object"),
    ("", 1, 1, "empty"),
    ('[{"lane": 1e400, "i": 0, "row": 0, "col": 0}]', 1, 11, "integer"),
    ('[{"lane": 2048, "i": 0, "row": 0, "col": 0}]', 1, 11, "outside"),
])
def test_table_errors_have_positions(text, line, col, words):
    e = fails(parse_table, text, "tab.json")
    assert (e.line, e.col) == (line, col), e.one_line()
    assert words in e.message


@pytest.mark.parametrize("text", [
    "[" * 1_000_000, '{"entries": ' + "[" * 500_000, b"\xc3\x28", "[" + "1" * 1_000_000 + "]",
    '[{"lane": 0, "i": 0, "row": 0, "col": 0}' + ', {"lane": 0, "i": 0, "row": 0, "col": 0}' * 10,
    '"' + "a" * 1_000_000,
])
def test_table_hostile_inputs_are_refused(text):
    fails(parse_table, text)


def test_table_from_entries_checks():
    with pytest.raises(NotationError):
        table_from_entries([(0, 0, 0, 0), (0, 0, 1, 1)])
    with pytest.raises(NotationError):
        table_from_entries([(0, -1, 0, 0)])
    with pytest.raises(NotationError):
        table_from_entries([])
    with pytest.raises(NotationError):
        table_from_entries([(0, 0, 1.5, 0)])


# ============================================================================ fuzzing: only NotationError escapes

CUTE_PIECES = ["(", ")", ",", ":", "_", "4", "8", "0", "32", "-", " ", "\n", "Layout", "<", ">", "Shape", "Stride",
               "Int", "C", "::", "cute", "/*", "*/", "//", "x", ";", "99999999999"]
TRITON_PIECES = ["{", "}", "[", "]", "(", ")", ",", "=", ":", '"register"', '"lane"', "reg_bases", "lane_bases",
                 "shape", "0", "1", "3", "16", "-2", "#ttg.linear<", ">", "DistributedLinearLayout", " ", "1.5",
                 '"meta"', "null", "true"]
TABLE_PIECES = ["{", "}", "[", "]", ",", ":", '"entries"', '"lane"', '"i"', '"row"', '"col"', "0", "1", "-1",
                "null", "true", "1.0", '"x"', " ", "\n", '"rows"', "99999999999999999999"]
HEADER_PIECES = ["template", "<", ">", "struct", "MMA_Traits", "X", "Y", "{", "}", ";", ":", "using", "ALayout", "=",
                 "Layout", "Shape", "_4", "namespace", "cute", "//", "/*", "*/", "\n", "#", '"', " ", "Int", "(",
                 ")", ",", "ThrID", "Shape_MNK", "ValTypeA", "::", "int", "N", "/", "8"]


def _fuzz(parse, pieces):
    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.lists(st.sampled_from(pieces), max_size=40) | st.text(max_size=40).map(lambda s: [s]))
    def run(parts):
        try:
            parse("".join(parts))
        except NotationError as e:
            assert e.line >= 1 and e.col >= 1 and e.message
    run()


def test_fuzz_cute():
    _fuzz(parse_cute, CUTE_PIECES)


def test_fuzz_triton():
    _fuzz(parse_triton, TRITON_PIECES)


def test_fuzz_table():
    _fuzz(parse_table, TABLE_PIECES)


def test_fuzz_headers():
    _fuzz(lambda text: read_header(text, "fuzz.hpp"), HEADER_PIECES)


# ============================================================================ index code (expr.py)

from verify.layout.notations import import_index_code, parse_index_code, to_layout  # noqa: E402
from verify.layout.family import substitute  # noqa: E402
from verify.layout.notations.build import LookupMap  # noqa: E402


def test_index_code_floor_division_matches_python_for_every_sign():
    f = parse_index_code("row = (lane - 16) // 3 + (i - 4) // (lane - 40) + (lane - 9) // 4\n"
                         "col = (0 - i) // (i - 10) + lane // 1 + i // 8  # comments start with #\n")
    for lane in range(32):
        for i in range(8):
            assert evaluate(f, "row", lane, i) == (lane - 16) // 3 + (i - 4) // (lane - 40) + (lane - 9) // 4
            assert evaluate(f, "col", lane, i) == (0 - i) // (i - 10) + lane + i // 8
    # powers of two are shifts (arithmetic: a floor), other divisors use hoisted helper definitions
    assert any(isinstance(n, BinOp) and n.op == ">>" for n in walk(f.get("row")))
    assert [d.name for d in f.definitions if d.name.startswith("floordiv#")] == \
        ["floordiv#1.num", "floordiv#2.num", "floordiv#3.den", "floordiv#4.num", "floordiv#5.den"]


def test_index_code_lane_names_and_c_semantics_elsewhere():
    f = parse_index_code("row = tid + laneid + %laneid + lane\ncol = (0 - 7) / 2 + (0 - 7) % 2 + i")
    assert evaluate(f, "row", 3, 0) == 12 and evaluate(f, "col", 0, 0) == -3 - 1      # / and % stay C's
    g = parse_index_code("row = x for ai where i < 2\n    x + 8 otherwise\nx = lane >> 2\ncol = 0x1_0 + 0b1", "a")
    assert [evaluate(g, "row", 5, i) for i in range(4)] == [1, 1, 9, 9] and evaluate(g, "col", 0, 0) == 17


@pytest.mark.parametrize("text, line, col, words", [
    ("row = lane +\ncol = i", 1, 13, "expected an expression"),
    ("row = lane\n  col = i $", 2, 11, "unexpected character"),
    ("row = 08\ncol = i", 1, 7, "leading zero"),
    ("row = 1__0\ncol = i", 1, 7, "malformed number"),
    ("row = 99999999999\ncol = i", 1, 7, "too large"),
    ("tid = 3\nrow = 0\ncol = 0", 1, 1, "thread index"),
    ("i = 3\nrow = 0\ncol = 0", 1, 1, "element index"),
    ("row = 0\nrow = 1\ncol = 0", 2, 1, "defined twice"),
    ("row = f(lane)\ncol = 0", 1, 7, "function call"),
    ("row = lane // \ncol = 0", 1, 15, "expected an expression"),
    ("col = 0", 1, 1, "defines no 'row'"),
    ("# nothing\n", 1, 1, "no definitions"),
    ("row = a\na = b\nb = a\ncol = 0", 3, 5, "refers to itself"),
])
def test_index_code_errors_have_positions(text, line, col, words):
    e = fails(parse_index_code, text, "a", "k.idx")
    assert (e.line, e.col, e.source) == (line, col, "k.idx"), e.one_line()
    assert words in e.message


@pytest.mark.parametrize("text", [
    "row = " + "(" * 1_000_000, "row = " + "-" * 50_000 + "1\ncol = 0", "row = 1 //" * 20_000, b"\xff\xfe",
    "row = " + " // ".join(["lane"] * 300) + "\ncol = 0", "row = 0\ncol = 0\n" + "x = 1\n" * 300,
])
def test_index_code_hostile_inputs_are_refused(text):
    fails(parse_index_code, text)


def test_fuzz_index_code():
    pieces = ["row", "col", "=", "lane", "tid", "i", "//", "/", "%", "(", ")", "+", "-", "0", "4", "\n", "#", " ",
              "if", "for", "ai", "where", "<", "otherwise", "0x", "_", "%laneid", "{", "}", ",", "..."]
    _fuzz(lambda text: parse_index_code(text, "a"), pieces)


def test_import_index_code_takes_the_spec_domain():
    imp = import_index_code("row = lane / 4\ncol = i", 32, 2, "c", operand="c", source="x.idx")
    assert (imp.threads, imp.values, imp.notation, imp.operand, imp.extent) == (32, 2, "index", "C", None)


# ============================================================================ into the model (build.py)

@functools.cache
def _spec_layout(shape, operand, ptype, variant=None):
    from verify import api
    return next(x for x in api.layouts(api.load(SPECS)) if x.instruction == "mma" and str(x.shape) == shape and
                x.operand == operand and ptype in x.types and x.variant == variant and not x.corrected)


def test_to_layout_shape_and_codomain():
    like = _spec_layout("m16n8k16", "C", "f32")
    lay = to_layout(import_triton((DATA / "triton_mma_v2_acc_2x2warps_32x16.json").read_text(), operand="C"), like,
                    source="w.json")
    assert (lay.threads, lay.n_elements, lay.rows, lay.cols) == (128, 4, 32, 16)   # the notation's own extent
    assert (lay.instruction, lay.shape, lay.operand, lay.types, lay.prefix) == \
        (like.instruction, like.shape, like.operand, like.types, "c")
    assert lay.provenance.spec_path == "w.json" and lay.map.notation == "triton"


def test_to_layout_lifts_an_sm70_quad_pair_to_the_warp():
    like = _spec_layout("m8n8k4", "A", "f16", "row")
    imp = import_cute("(8,4):(1,8)", "A", 8, 8, 4, thr_id=parse_cute("(4,2):(1,16)"))
    assert imp.threads == 20
    lay = to_layout(imp, like)
    assert lay.threads == 32 and lay.groups == 4 and "lifted" in lay.provenance.derived
    for lane in range(32):
        base = lane & 0b10011                       # the lane at the same position in quad-pair 0
        assert [cell_at(lay, lane, i) for i in range(4)] == [cell_at(lay, base, i) for i in range(4)]
        assert lay.group_of(lane) == like.group_of(lane)


def test_substitute_replaces_every_lane():
    f = parse_formula("row = %laneid + x\nx = %laneid * 2 if %laneid < 4\ncol = i", "a")
    g = substitute(f, {"lane": BinOp("+", Var("lane"), Num(1))})
    assert [evaluate(g, "row", 2, 0), evaluate(g, "row", 3, 0)] == [9, None]


def test_table_layouts_get_a_lookup_z3_face_that_agrees_with_the_formula():
    import z3
    like = _spec_layout("m16n8k16", "B", "f16")
    entries = [{"lane": ln, "i": i, "row": (ln * 7 + i) % 16, "col": ln % 8} for ln in range(32) for i in range(4)
               if (ln, i) not in ((5, 2), (6, 1))]
    entries.append({"lane": 6, "i": 1, "row": None, "col": 3})
    lay = to_layout(import_table(json.dumps(entries), "b", operand="B"), like)
    assert isinstance(lay.map, LookupMap)
    lane, i = z3.BitVecs("lane i", 16)
    ok, row, col = z3_cell_of(lay, lane, i)
    for ln in range(32):
        for ix in range(4):
            s = z3.Solver()
            s.add(lane == ln, i == ix)
            assert s.check() == z3.sat
            m = s.model()
            want = cell_at(lay, ln, ix)
            got = (m.eval(row).as_signed_long(), m.eval(col).as_signed_long()) if z3.is_true(m.eval(ok)) else None
            assert got == want, (ln, ix)
