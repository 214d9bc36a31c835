"""Index code for a shared-memory tile: definitions over ``row`` and ``col`` whose last one is the offset.

    off = row * 128 + col * 2            # bytes
    swz = off ^ (((off >> 7) & 7) << 4)

The text is index code (``verify.formula.index``: one ``NAME = ...`` per line, ``#`` comments, ``//`` floor
division, C's ``/ % >> & ^``, cases); ``row`` and ``col`` are the tile's coordinates and the last definition is
the offset, in bytes (``unit="bytes"``, the default: what index code usually computes) or elements.  A byte
offset becomes an element offset by ``* 8 / bits``; an offset that is not a whole element is undefined there
(reported by the checks as a point outside the layout).  The code may read parameters given by value
(``params``: a family's, bound with ``--param``).  Its buffer (the output box) is what the code reaches, or,
given, ``buffer`` elements (``consistent``: the declared tile, so that a write past it is out of range).
Nothing is evaluated while parsing; errors are positioned.
"""
from __future__ import annotations

from typing import Mapping

from ...formula import Case, Compare, Definition, Formula, FormulaError, Num, Ref
from ...formula.index import parse_index
from ..dims import Dim
from ..family import substitute
from ...engines.oracle import EvalError
from ..named import FormulaMap, evaluate_all
from ..shared import SharedLayout, from_map, op
from .registry import SharedReader, register_reader
from .errors import NotationError, decode_source

MAX_SPAN = 1 << 24


def import_index_shared(text: str | bytes, tile: tuple[int, int], type_bits: int, unit: str = "bytes", base: int = 0,
                        source: str = "argument", params: Mapping[str, int] | None = None,
                        buffer: int | None = None) -> SharedLayout:
    """Index code (module docstring) over a ``tile`` of (rows, cols) elements of ``type_bits`` bits; ``params``:
    values of parameters the code may read; ``buffer``: the buffer's size in elements (default: what the code
    reaches)."""
    if unit not in ("bytes", "elements"):
        raise ValueError(f"unit is 'bytes' or 'elements', not {unit!r}")
    text = decode_source(text, source, limit=1 << 16)
    values = dict(params or {})
    try:
        f = parse_index(text, "x", ("row", "col"), (), tuple(values),
                        must="the last definition is the offset (e.g. off = row * 64 + col)")
    except FormulaError as e:
        raise NotationError(e.message, e.line, e.col, source) from None
    if values:
        f = substitute(f, values)
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
    try:  # the output box: what the code reaches (so the checks never scan a huge empty box), or ``buffer``
        v = evaluate_all(named)
    except EvalError as e:
        raise NotationError(e.message, e.pos.line, e.pos.col, source) from None
    reach = v.out["offset"][v.ok]
    if reach.size and (int(reach.max()) >= MAX_SPAN or int(reach.min()) < -MAX_SPAN):
        raise NotationError(f"the offsets reach {int(reach.max())}: more than {MAX_SPAN} elements", 1, 1, source)
    top = int(reach.max()) + 1 if reach.size else 1
    if buffer is not None:
        top = buffer
    named = FormulaMap(formula, named.inputs, (Dim("offset", max(1, top)),), definitions=(("offset", out),))
    raw = text.decode("utf-8", "replace") if isinstance(text, (bytes, bytearray)) else text
    return from_map(named, type_bits, base, "index", raw.strip())


def _read_shared(text: str | bytes, *, bits: int | None = None, tile: tuple[int, int] | None = None, base: int = 0,
                 unit: str = "bytes", source: str = "argument", params: Mapping[str, int] | None = None,
                 buffer: int | None = None, **_: object) -> SharedLayout:
    if tile is None or bits is None:
        raise ValueError("index code needs the tile (rows, cols) and the element type")
    return import_index_shared(text, tile, bits, unit, base, source, params, buffer)


register_reader("shared", SharedReader("index", _read_shared, reads_params=True, order=3, flag="--formula",
                                       metavar="FILE", inline=False, needs_tile=True,
                                       help="index code over row and col; the last definition is the offset"))


__all__ = ["import_index_shared"]
