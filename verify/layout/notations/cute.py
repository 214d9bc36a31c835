"""CuTe TV layouts as formulas: the ``--cute`` notation.

An MMA atom's TV layout (a ``CuteLayout``, read by ``cute_parse``) has two top-level modes,
(thread, value), and maps them to a column-major index into the operand tile.  ``tv_to_formula``
turns that into the formula AST the engines evaluate, so a CuTe atom can be proved equal to the PTX
fragment layout; ``import_cute`` parses and lowers in one step, and the notation registers here.
"""
from __future__ import annotations

from typing import Any

from verify.formula import (
    BinOp,
    BoolOp,
    Case,
    Compare,
    Definition,
    Expr,
    Formula,
    InSet,
    Num,
    Ref,
    Var,
)

from .cute_layout import CuteLayout
from .cute_parse import parse_cute
from .errors import NotationError, TVImport
from .registry import Notation, Option, register

OPERANDS = ("A", "B", "C", "D")


# ----------------------------------------------------------------------------- TV layout -> formula

def domain_condition(threads: int, values: int) -> BoolOp:
    """``%laneid < threads && i < values``: row and col are undefined outside the imported domain."""
    lane, i = Var("lane"), Var("i")
    return BoolOp("and", (Compare(("<",), (lane, Num(threads))), Compare(("<",), (i, Num(values)))))


def _thread_definition(tv: CuteLayout, thr_id: CuteLayout | None, source: str) -> tuple[Definition, int]:
    """``thread`` as a function of ``%laneid``: the identity, or the inverse of CuTe's ``ThrID``
    (one case per thread; lanes outside ThrID's image are left undefined)."""
    nthreads = tv.mode(0).size()
    lane = Var("lane")
    if thr_id is not None and thr_id.size() != nthreads:
        raise NotationError(f"ThrID has {thr_id.size()} threads but the layout's thread mode has {nthreads}",
                            1, 1, source)
    if thr_id is None or all(thr_id(t) == t for t in range(nthreads)):
        return Definition("thread", (Case(lane, None),)), nthreads
    lanes = [thr_id(t) for t in range(nthreads)]
    if len(set(lanes)) != len(lanes):
        raise NotationError(f"ThrID {thr_id} maps two threads to one lane", 1, 1, source)
    cases = tuple(Case(Num(t), InSet(lane, (ln,))) for t, ln in enumerate(lanes))
    return Definition("thread", cases), max(lanes) + 1


def _digits(name: str, var: Ref | Var, mode: CuteLayout, defs: list[Definition]) -> list[tuple[str, int]]:
    """One definition per leaf coordinate that matters (extent > 1, stride != 0); returns the
    (name, stride) terms of ``idx``.  Leaves are split colexicographically: ``(x / below) % extent``."""
    terms, below = [], 1
    for k, (s, d) in enumerate(mode.leaves()):
        if s > 1 and d != 0:
            e = var if below == 1 else BinOp("/", var, Num(below))
            defs.append(Definition(f"{name}{k}", (Case(BinOp("%", e, Num(s)), None),)))
            terms.append((f"{name}{k}", d))
        below *= s
    return terms


def tv_to_formula(layout: CuteLayout, operand: str, m: int, n: int, k: int, prefix: str | None = None, *,
                  thr_id: CuteLayout | None = None, text: str | None = None,
                  source: str = "argument") -> TVImport:
    """A (thread, value) -> tile-index CuTe layout as ``row``/``col`` definitions.

    CuTe indexes A as M x K, B as N x K and C/D as M x N, all column-major (``idx = r + R * c``);
    PTX writes B as K x N, so B's row is ``idx / N`` and its column ``idx % N``.  The element index
    ``i`` is CuTe's value index.  ``%laneid`` is the thread index (``ThrID``'s inverse when given),
    so thread modes of 4 (Volta quads), 32 or 128 (warpgroups) are all representable.  Only
    ``/ % * +`` on non-negative values appear, where C and floor semantics agree.
    """
    op = operand.upper()
    if op not in OPERANDS:
        raise NotationError(f"operand must be one of A, B, C, D, not {operand!r}", 1, 1, source)
    for label, v in (("M", m), ("N", n), ("K", k)):
        if not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= 4096:
            raise NotationError(f"{label} = {v!r} is not an extent in 1..4096", 1, 1, source)
    if layout.rank() != 2:
        raise NotationError(f"a TV layout has two top-level modes (thread, value); {layout} has {layout.rank()}",
                            1, 1, source)
    tile_rows, tile_cols = {"A": (m, k), "B": (n, k), "C": (m, n), "D": (m, n)}[op]
    defs: list[Definition] = []
    thread_def, nlanes = _thread_definition(layout, thr_id, source)
    values = layout.mode(1).size()
    defs.append(thread_def)
    # a broadcast thread mode still mentions ``thread * 0``, so lanes outside ThrID stay undefined
    terms = _digits("t", Ref("thread"), layout.mode(0), defs) or [("thread", 0)]
    terms += _digits("v", Var("i"), layout.mode(1), defs)
    idx: Expr | None = None
    for name, d in terms:
        term = Ref(name) if d == 1 else BinOp("*", Ref(name), Num(d))
        idx = term if idx is None else BinOp("+", idx, term)
    defs.append(Definition("idx", (Case(idx, None),)))  # type: ignore[arg-type]
    fast, slow = BinOp("%", Ref("idx"), Num(tile_rows)), BinOp("/", Ref("idx"), Num(tile_rows))
    if op == "B":  # CuTe's (n, k) is PTX's (col, row)
        row, col, extent = slow, fast, (k, n)
    else:
        row, col, extent = fast, slow, (tile_rows, tile_cols)
    dom = domain_condition(nlanes, values)
    defs.append(Definition("row", (Case(row, dom),)))
    defs.append(Definition("col", (Case(col, dom),)))
    formula = Formula(tuple(defs), prefix if prefix is not None else op.lower())
    return TVImport(formula, nlanes, values, text if text is not None else str(layout), "cute", extent, op)


def import_cute(text: str | bytes, operand: str, m: int, n: int, k: int, prefix: str | None = None, *,
                thr_id: CuteLayout | None = None, source: str = "argument") -> TVImport:
    """``parse_cute`` then ``tv_to_formula``: the command-line path (``conform --cute TEXT``)."""
    layout = parse_cute(text, source)
    raw = text.decode("utf-8") if isinstance(text, (bytes, bytearray)) else text
    return tv_to_formula(layout, operand, m, n, k, prefix, thr_id=thr_id, text=raw.strip(), source=source)


# ----------------------------------------------------------------------------- registration

def _read(text: str | bytes, like: Any, *, source: str = "argument", thr_id: str | None = None) -> TVImport:
    """A CuTe TV layout as a layout of ``like``'s operand (``like.shape`` gives M, N, K)."""
    from ..sparse import is_sparse
    tid = parse_cute(thr_id, "--thr-id") if thr_id is not None else None
    # a sparse A's tile is its compressed rows x K * kept / chunk (the values a lane holds), not M x K
    k = like.cols if like.operand == "A" and is_sparse(like) else like.shape.k
    return import_cute(text, like.operand, like.shape.m, like.shape.n, k, like.prefix, thr_id=tid, source=source)


register(Notation(
    "cute", "--cute", "TEXT", True, "CuTe TV layout: ((4,8),(2,2,2)):((32,1),(16,8,128)) or Layout<...>", _read,
    (Option("thr_id", "--thr-id", "TEXT", "with --cute: CuTe's ThrID, e.g. (4,2):(1,16) for SM70"),), order=1,
    api_doc="A CuTe TV layout (``((4,8),(2,2,2)):((32,1),(16,8,128))`` or ``Layout<Shape<...>,Stride<...>>``); "
            "``thr_id``: CuTe's ``ThrID`` (``(4,2):(1,16)`` for SM70)."))
