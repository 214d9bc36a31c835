"""Index code for a shared-memory tile: definitions over ``row`` and ``col`` whose last one is the offset.

    off = row * 128 + col * 2
    swz = off ^ (((off >> 7) & 7) << 4)

The text is the spec formula language (one ``NAME = ...`` per line, ``//`` comments, C's ``/ % >> & ^``,
cases); ``row`` and ``col`` are the tile's coordinates and the last definition is the offset, in bytes
(``unit="bytes"``, the default: what index code usually computes) or elements.  A byte offset becomes an
element offset by ``* 8 / bits``; an offset that is not a whole element is undefined there (reported by
the checks as a point outside the layout).  Nothing is evaluated while parsing; errors are positioned.
"""
from __future__ import annotations

from ...formula import Case, Compare, Definition, Formula, FormulaError, Num, Ref, parse_formula
from ..dims import Dim
from ...engines.oracle import EvalError
from ..named import FormulaMap, evaluate_all
from ..shared import SharedLayout, from_map, op
from .errors import NotationError, decode_source

MAX_SPAN = 1 << 24


def import_index_shared(text: str | bytes, tile: tuple[int, int], type_bits: int, unit: str = "bytes", base: int = 0,
                        source: str = "argument") -> SharedLayout:
    """Index code (module docstring) over a ``tile`` of (rows, cols) elements of ``type_bits`` bits."""
    if unit not in ("bytes", "elements"):
        raise ValueError(f"unit is 'bytes' or 'elements', not {unit!r}")
    text = decode_source(text, source, limit=1 << 16)
    try:
        f = parse_formula(text, "x", ("row", "col"), ())
    except FormulaError as e:
        raise NotationError(e.message, e.line, e.col, source) from None
    if not f.definitions:
        raise NotationError("no definitions: the last definition is the offset (e.g. off = row * 64 + col)", 1, 1,
                            source)
    for d in f.definitions:
        if d.name in ("row", "col"):
            raise NotationError(f"'{d.name}' is a coordinate of the tile and cannot be defined", d.pos.line,
                                d.pos.col, source)
    last = f.definitions[-1].name
    rows, cols = tile
    span = MAX_SPAN
    defs = list(f.definitions)
    out = last
    if unit == "bytes":
        # offset = bytes * 8 / bits, defined where that is a whole element
        bits_expr = op(Ref(last), "*", 8)
        whole = Compare(("==",), (op(bits_expr, "%", type_bits), Num(0)))
        defs.append(Definition("offset#elements", (Case(op(bits_expr, "/", type_bits), whole),)))
        out = "offset#elements"
    formula = Formula(tuple(defs), "x")
    named = FormulaMap(formula, (Dim("row", rows), Dim("col", cols)), (Dim("offset", span),),
                       definitions=(("offset", out),))
    try:  # the output box: what the code reaches (so the checks never scan a huge empty box)
        v = evaluate_all(named)
    except EvalError as e:
        raise NotationError(e.message, e.pos.line, e.pos.col, source) from None
    reach = v.out["offset"][v.ok]
    if reach.size and (int(reach.max()) >= MAX_SPAN or int(reach.min()) < -MAX_SPAN):
        raise NotationError(f"the offsets reach {int(reach.max())}: more than {MAX_SPAN} elements", 1, 1, source)
    top = int(reach.max()) + 1 if reach.size else 1
    named = FormulaMap(formula, named.inputs, (Dim("offset", max(1, top)),), definitions=(("offset", out),))
    raw = text.decode("utf-8", "replace") if isinstance(text, (bytes, bytearray)) else text
    return from_map(named, type_bits, base, "index", raw.strip())


__all__ = ["import_index_shared"]
