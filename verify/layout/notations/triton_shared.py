"""Triton's shared-memory encodings, as TTGIR prints them, into ``(row, col) -> offset`` maps.

* ``#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>``: the layout the
  wgmma/tcgen05 descriptors read.  ``swizzlingByteWidth = 0`` (no swizzle) is, as Triton builds it, the row-major
  identity over the TMA block (every dimension at most 256 elements, ``getTMABlockShape``), blocks repeated along
  dim0 first, then dim1 (``ensureLayoutNotSmallerThan``); that branch reads no ``transposed``, and neither does
  this one.  Triton builds it (``nvmmaSharedToLinearLayout``) from a tile of 8 rows of
  ``swizzlingByteWidth`` bytes whose 16-byte vectors are XORed with ``(row / perPhase) % maxPhase`` (perPhase,
  maxPhase = 1, 8 for 128 B; 2, 4 for 64 B; 4, 2 for 32 B), tiles stacked along the rows first, then along
  the contiguous dimension (the last one, or the first when ``transposed``).  That is a byte swizzle of the
  offset from the buffer's start (``verify.layout.shared``: ``"bytes"``): the hardware's address swizzle only
  when the buffer is aligned to the swizzle period.
* ``#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>``: the column of element
  (r, c) (``order[0]`` the contiguous dimension) is ``c ^ ((vec * ((r / perPhase) % maxPhase)) % cols)``,
  XOR-linear over the bits of the row as Triton's ``swizzledSharedToLinearLayout`` builds it.
* ``#ttg.shared_linear<{offset = [[0, 1], [0, 2], ...]}>``: offset bit k -> the (dim0, dim1) of its basis
  vector; the map is the inverse over GF(2) (an error when the bases are not a basis).

The tensor's shape and element type come from a ``!ttg.memdesc<64x64xf16, ...>`` (or ``tensor<...>``) in the
same text (the one whose encoding is the attribute's alias, when it has one), or from the caller (``--tile``,
``--type``).  A 1-D memdesc (``!ttg.memdesc<128xf32, ...>``) is a 1 x N tile: Triton lays a 1-D buffer out as the
identity (``swizzled_shared`` and an unswizzled ``nvmma_shared``; swizzling needs two dimensions).  Multi-CTA fields (``CTAsPerCGA``...) are read and must
be all ones.  Every error is a ``NotationError`` at the file's line and column.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence

from ...formula import BinOp, Case, Definition, Expr, Formula, Num, Var
from ..dims import Dim
from ..named import FormulaMap
from ..shared import SharedLayout, Swizzle, from_map, op
from .registry import SharedReader, register_reader
from .errors import NotationError, Positions, decode_source

KINDS = ("nvmma_shared", "swizzled_shared", "shared_linear")
_ATTR = re.compile(r"#(?:ttg|triton_gpu)\.(nvmma_shared|swizzled_shared|shared_linear)\s*<\s*\{")
_MEMDESC = re.compile(r"(?:memdesc|tensor)\s*<\s*(\d{1,5})\s*x\s*(?:(\d{1,5})\s*x\s*)?([a-zA-Z][a-zA-Z0-9]{0,11})"
                      r"(?:\s*,\s*#([A-Za-z_][\w.$-]*))?")
_ALIAS = re.compile(r"#([A-Za-z_][\w.$-]*)\s*=\s*$")
_TOKEN = re.compile(r"\s+|(?P<num>-?\d{1,10})|(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<p>[\[\]{},=<>])")
_TYPES = {"f16": 16, "bf16": 16, "f32": 32, "tf32": 32, "i8": 8, "f8e4m3fn": 8, "f8e5m2": 8, "f8e4m3": 8,
          "i16": 16, "i32": 32, "f64": 64, "i64": 64, "i4": 4, "ui8": 8}
_SWIZZLE_PHASES = {32: (4, 2), 64: (2, 4), 128: (1, 8)}


@dataclass(frozen=True)
class Encoding:
    kind: str
    fields: dict[str, Any]
    line: int
    col: int


def _parse_attr(text: str, start: int, pos: Positions, source: str, kind: str) -> tuple[dict[str, Any], int]:
    """``key = value, ...}>`` from ``start`` (after ``{``): values are integers, true/false, or lists of them."""
    k = start
    fields: dict[str, Any] = {}

    def tok() -> tuple[str, str, int]:
        nonlocal k
        while True:
            m = _TOKEN.match(text, k)
            if m is None:
                line, col = pos.at(k)
                if k >= len(text):
                    raise NotationError(f"unterminated #ttg.{kind}<{{...}}>", line, col, source)
                raise NotationError(f"unexpected character {text[k]!r}", line, col, source)
            at = k
            k = m.end()
            if m.lastgroup:
                return m.lastgroup, m.group(), at
            if k >= len(text):
                line, col = pos.at(k)
                raise NotationError(f"unterminated #ttg.{kind}<{{...}}>", line, col, source)

    def err(message: str, at: int) -> NotationError:
        line, col = pos.at(at)
        return NotationError(message, line, col, source)

    def value(t: tuple[str, str, int], depth: int = 0) -> Any:
        if depth > 3:
            raise err("list nested deeper than 3 levels", t[2])
        if t[0] == "num":
            return int(t[1])
        if t[0] == "name" and t[1] in ("true", "false"):
            return t[1] == "true"
        if t == ("p", "[", t[2]):
            items: list[Any] = []
            t2 = tok()
            if t2[1] == "]":
                return items
            while True:
                items.append(value(t2, depth + 1))
                if len(items) > 64:
                    raise err("list longer than 64 entries", t2[2])
                t2 = tok()
                if t2[1] == "]":
                    return items
                if t2[1] != ",":
                    raise err(f"expected ',' or ']', found {t2[1]!r}", t2[2])
                t2 = tok()
        raise err(f"expected a number, true/false or a list, found {t[1]!r}", t[2])

    while True:
        t = tok()
        if t[1] == "}":
            break
        if t[0] != "name":
            raise err(f"expected a field name, found {t[1]!r}", t[2])
        if t[1] in fields:
            raise err(f"field {t[1]!r} given twice", t[2])
        eq = tok()
        if eq[1] != "=":
            raise err(f"expected '=' after {t[1]}, found {eq[1]!r}", eq[2])
        fields[t[1]] = (value(tok()), t[2])
        sep = tok()
        if sep[1] == "}":
            break
        if sep[1] != ",":
            raise err(f"expected ',' or '}}', found {sep[1]!r}", sep[2])
    close = tok()
    if close[1] != ">":
        raise err(f"expected '>' after '}}', found {close[1]!r}", close[2])
    return fields, k


def parse_encoding(text: str, source: str = "argument") -> tuple[Encoding, tuple[int, int, int] | None]:
    """The one shared encoding in ``text`` and, when the text has one, (rows, cols, element bits) of a
    ``memdesc``/``tensor`` type."""
    pos = Positions(text)
    found = list(_ATTR.finditer(text))
    if not found:
        raise NotationError("no Triton shared encoding (#ttg.nvmma_shared<{...}>, #ttg.swizzled_shared<{...}> or "
                            "#ttg.shared_linear<{...}>)", 1, 1, source)
    kinds = {m.group(1) for m in found}
    if len(found) > 1 and len(kinds) > 1:
        line, col = pos.at(found[1].start())
        raise NotationError("more than one shared encoding in the text: keep the one to check", line, col, source)
    m = found[0]
    fields, _ = _parse_attr(text, m.end(), pos, source, m.group(1))
    line, col = pos.at(m.start())
    enc = Encoding(m.group(1), fields, line, col)
    md = _memdesc(text, m.start())
    shape = None
    if md:
        t = md.group(3).lower()
        if t not in _TYPES:
            l2, c2 = pos.at(md.start(3))
            raise NotationError(f"unknown element type {md.group(3)!r} (known: {', '.join(sorted(_TYPES))})", l2, c2,
                                source)
        shape = (int(md.group(1)), int(md.group(2)), _TYPES[t]) if md.group(2) else (1, int(md.group(1)), _TYPES[t])
    return enc, shape


def _memdesc(text: str, at: int) -> "re.Match[str] | None":
    """The memdesc (or tensor) type of the encoding at ``at``: the one naming its alias (``#shared = #ttg...``), else
    the first 2-D one (a 1-D barrier's memdesc is not the tile), else the first."""
    line_start = text.rfind("\n", 0, at) + 1
    alias = _ALIAS.search(text, line_start, at)
    found = list(_MEMDESC.finditer(text))
    named = [md for md in found if alias is not None and md.group(4) == alias.group(1)]
    two_d = [md for md in found if md.group(2)]
    pick = named or two_d or found
    return pick[0] if pick else None


def _field(enc: Encoding, name: str, pos: Positions | None, source: str, kind: type, default: Any = None) -> Any:
    if name not in enc.fields:
        if default is not None:
            return default
        raise NotationError(f"#ttg.{enc.kind} needs the field {name!r}", enc.line, enc.col, source)
    v, at = enc.fields[name]
    ok = isinstance(v, kind) and not (kind is int and isinstance(v, bool))
    if not ok:
        line, col = pos.at(at) if pos else (enc.line, enc.col)
        raise NotationError(f"{name} must be {'true or false' if kind is bool else 'an integer' if kind is int else 'a list'}",
                            line, col, source)
    return v


def _where(enc: Encoding, name: str, pos: Positions) -> tuple[int, int]:
    return pos.at(enc.fields[name][1]) if name in enc.fields else (enc.line, enc.col)


def _pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def _xor_expr(bits_of: Sequence[tuple[Expr, int, int]]) -> Expr:
    """XOR over terms ``((x >> b) & 1) * value`` (``bits_of``: (x, bit, value))."""
    out: Expr = Num(0)
    for x, b, v in bits_of:
        if v == 0:
            continue
        term = op(op(op(x, ">>", b), "&", 1), "*", v)
        out = term if isinstance(out, Num) and out.value == 0 else BinOp("^", out, term)
    return out


def _nvmma(enc: Encoding, rows: int, cols: int, bits: int, pos: Positions, source: str) -> tuple[Expr, int, tuple[int, int]]:
    width = _field(enc, "swizzlingByteWidth", pos, source, int)
    transposed = _field(enc, "transposed", pos, source, bool, False)
    ebits = _field(enc, "elementBitWidth", pos, source, int, bits)
    if _field(enc, "fp4Padded", pos, source, bool, False):
        raise NotationError("fp4Padded = true is not modelled", *_where(enc, "fp4Padded", pos), source)
    if ebits != bits:
        raise NotationError(f"elementBitWidth = {ebits}, but the tensor's elements are {bits}-bit",
                            *_where(enc, "elementBitWidth", pos), source)
    if width == 0:
        return _unswizzled(enc, rows, cols, bits, source)
    if width not in _SWIZZLE_PHASES:
        raise NotationError(f"swizzlingByteWidth = {width}: 0 (no swizzle), 32, 64 or 128",
                            *_where(enc, "swizzlingByteWidth", pos), source)
    if rows == 1:
        raise NotationError(f"swizzlingByteWidth = {width} needs a 2-D tensor (Triton swizzles two dimensions); this "
                            f"memdesc is 1-D ({cols} elements)", *_where(enc, "swizzlingByteWidth", pos), source)
    per, maxp = _SWIZZLE_PHASES[width]
    vec = 128 // bits
    tile_cols = 8 * width // bits
    r, c = (Var("col"), Var("row")) if transposed else (Var("row"), Var("col"))
    n_r, n_c = (cols, rows) if transposed else (rows, cols)
    if n_c < tile_cols or n_r < 8:
        raise NotationError(f"the tensor ({rows} x {cols}) is smaller than one {8} x {tile_cols} swizzle tile",
                            enc.line, enc.col, source)
    if n_c % tile_cols or n_r % 8:
        raise NotationError(f"the tensor ({rows} x {cols}) is not whole {8} x {tile_cols} swizzle tiles",
                            enc.line, enc.col, source)
    # inside a tile: (r % 8) * tile_cols + ((c % tile_cols) / vec ^ phase(r)) * vec + c % vec
    phase = op(op(op(r, "%", 8), "/", per), "%", maxp)
    vec_idx = op(op(c, "%", tile_cols), "/", vec)
    inner = op(op(op(op(r, "%", 8), "*", tile_cols), "+", op(op(vec_idx, "^", phase), "*", vec)), "+", op(c, "%", vec))
    tile_r, tile_c = op(r, "/", 8), op(c, "/", tile_cols)
    tile_size = 8 * tile_cols
    expr = op(op(inner, "+", op(tile_r, "*", tile_size)), "+", op(tile_c, "*", tile_size * (n_r // 8)))
    atom = (tile_cols, 8) if transposed else (8, tile_cols)
    return expr, rows * cols, atom


TMA_BLOCK_MAX = 256  # getTMABlockShape: every dimension of a TMA block at most 256 elements


def _unswizzled(enc: Encoding, rows: int, cols: int, bits: int, source: str) -> tuple[Expr, int, tuple[int, int]]:
    """``swizzlingByteWidth = 0``: row-major inside TMA blocks of at most 256 x 256, blocks along dim0 first."""
    br, bc = min(rows, TMA_BLOCK_MAX), min(cols, TMA_BLOCK_MAX)
    if rows % br or cols % bc:
        raise NotationError(f"the tensor ({rows} x {cols}) is not whole {br} x {bc} TMA blocks", enc.line, enc.col,
                            source)
    r, c = Var("row"), Var("col")
    inner = op(op(op(r, "%", br), "*", bc), "+", op(c, "%", bc))
    block = op(op(r, "/", br), "+", op(op(c, "/", bc), "*", rows // br))
    return op(inner, "+", op(block, "*", br * bc)), rows * cols, (min(rows, 8), min(cols, max(1, 128 // bits)))


def _swizzled(enc: Encoding, rows: int, cols: int, pos: Positions, source: str) -> tuple[Expr, int, tuple[int, int] | None]:
    vec = _field(enc, "vec", pos, source, int)
    per = _field(enc, "perPhase", pos, source, int)
    maxp = _field(enc, "maxPhase", pos, source, int)
    if rows == 1 and "order" in enc.fields and len(enc.fields["order"][0] or []) == 1:
        if enc.fields["order"][0] != [0]:
            raise NotationError("order is [0] for a 1-D tensor", *_where(enc, "order", pos), source)
        return Var("col"), cols, None  # Triton's rank-1 shared layout: the identity
    order = _field(enc, "order", pos, source, list, [1, 0])
    if sorted(order) != [0, 1] or any(isinstance(x, bool) for x in order):
        raise NotationError("order is [1, 0] or [0, 1] for a 2-D tensor", *_where(enc, "order", pos), source)
    for name, v in (("vec", vec), ("perPhase", per), ("maxPhase", maxp)):
        if not _pow2(v):
            raise NotationError(f"{name} = {v}: a power of two", *_where(enc, name, pos), source)
    contiguous = order[0]
    r, c = (Var("col"), Var("row")) if contiguous == 0 else (Var("row"), Var("col"))
    n_r, n_c = (cols, rows) if contiguous == 0 else (rows, cols)
    if not (_pow2(n_r) and _pow2(n_c)):
        raise NotationError(f"the tensor ({rows} x {cols}) has a dimension that is not a power of two", enc.line,
                            enc.col, source)
    terms = []
    for b in range(n_r.bit_length() - 1):
        row = 1 << b
        terms.append((r, b, (vec * ((row // per) % maxp)) % n_c))
    swz = _xor_expr(terms)
    col = c if isinstance(swz, Num) else BinOp("^", c, swz)
    expr = op(op(r, "*", n_c), "+", col)
    return expr, rows * cols, (min(n_r, per * maxp), min(n_c, vec * maxp))


def _linear(enc: Encoding, rows: int, cols: int, pos: Positions, source: str) -> tuple[Expr, int, None]:
    bases = _field(enc, "offset", pos, source, list)
    where = _where(enc, "offset", pos)
    vecs = []
    for b in bases:
        if rows == 1 and isinstance(b, list) and len(b) == 1:  # a 1-D tensor's basis [dim0]: the tile's column
            b = [0, *b]
        if not (isinstance(b, list) and len(b) == 2 and all(isinstance(x, int) and not isinstance(x, bool) and x >= 0
                                                             for x in b)):
            raise NotationError("each offset basis is [dim0, dim1] of non-negative integers", *where, source)
        if b[0] >= rows or b[1] >= cols:
            raise NotationError(f"basis {b} lies outside the {rows} x {cols} tensor", *where, source)
        vecs.append((b[0], b[1]))
    if not (_pow2(rows) and _pow2(cols)) or (1 << len(vecs)) != rows * cols:
        raise NotationError(f"{len(vecs)} offset bases cannot cover a {rows} x {cols} tensor exactly once", *where,
                            source)
    cb = cols.bit_length() - 1
    # the matrix offset bits -> (row bits, col bits); invert it over GF(2)
    n = len(vecs)
    cols_vec = [(v[0] << cb) | v[1] for v in vecs]  # column k: the image of offset bit k (row bits high)
    inv = _gf2_inverse(cols_vec, n)
    if inv is None:
        raise NotationError("the offset bases are not linearly independent: two offsets share a cell", *where, source)
    # offset bit k = parity(inv_row_k & (row << cb | col))
    terms = []
    for j in range(n):  # input bit j of (row << cb | col)
        x, b = (Var("col"), j) if j < cb else (Var("row"), j - cb)
        val = 0
        for k in range(n):
            if inv[k] >> j & 1:
                val |= 1 << k
        terms.append((x, b, val))
    return _xor_expr(terms), rows * cols, None


def _gf2_inverse(columns: list[int], n: int) -> list[int] | None:
    """Rows of the inverse of the n x n GF(2) matrix whose column k is ``columns[k]`` (None if singular)."""
    # rows of M: row i, bit k = bit i of columns[k]
    rows = [sum(((columns[k] >> i) & 1) << k for k in range(n)) for i in range(n)]
    aug = [(rows[i], 1 << i) for i in range(n)]
    for col in range(n):
        piv = next((r for r in range(col, n) if aug[r][0] >> col & 1), None)
        if piv is None:
            return None
        aug[col], aug[piv] = aug[piv], aug[col]
        for r in range(n):
            if r != col and aug[r][0] >> col & 1:
                aug[r] = (aug[r][0] ^ aug[col][0], aug[r][1] ^ aug[col][1])
    return [aug[k][1] for k in range(n)]


def import_triton_shared(text: str | bytes, tile: tuple[int, int] | None = None, type_bits: int | None = None,
                         base: int = 0, source: str = "argument") -> SharedLayout:
    """A Triton shared encoding (module docstring) as a ``SharedLayout`` over the tensor's (dim0, dim1)."""
    text = decode_source(text, source, limit=1 << 20)
    enc, shape = parse_encoding(text, source)
    pos = Positions(text)
    rows, cols, bits = (shape if shape else (None, None, None))
    if tile is not None:
        if rows is not None and (rows, cols) != tile:
            raise NotationError(f"the memdesc is {rows} x {cols}, but --tile says {tile[0]} x {tile[1]}", 1, 1, source)
        rows, cols = tile
    if type_bits is not None:
        if bits is not None and bits != type_bits:
            raise NotationError(f"the memdesc's elements are {bits}-bit, but --type says {type_bits}-bit", 1, 1, source)
        bits = type_bits
    if rows is None or cols is None:
        raise NotationError("the tensor's shape is not in the text (a !ttg.memdesc<RxCxTYPE, ...>): give --tile",
                            enc.line, enc.col, source)
    if bits is None and enc.kind == "nvmma_shared" and "elementBitWidth" in enc.fields:
        bits = _field(enc, "elementBitWidth", pos, source, int)
    if bits is None:
        raise NotationError("the element type is not in the text: give --type", enc.line, enc.col, source)
    if bits not in (4, 8, 16, 32, 64):
        raise NotationError(f"{bits}-bit elements are not modelled", enc.line, enc.col, source)
    for name in ("CTAsPerCGA", "CTASplitNum"):
        if name in enc.fields and any(x != 1 for x in (enc.fields[name][0] or [])):
            raise NotationError(f"{name} other than all ones (several CTAs) is not modelled", *_where(enc, name, pos),
                                source)
    swz, swz_on = None, ""
    atom: tuple[int, int] | None
    if enc.kind == "nvmma_shared":
        expr, span, atom = _nvmma(enc, rows, cols, bits, pos, source)
        width = enc.fields["swizzlingByteWidth"][0]
        if width:
            swz, swz_on = Swizzle({32: 1, 64: 2, 128: 3}[width], 4, 3), "bytes"
    elif enc.kind == "swizzled_shared":
        expr, span, atom = _swizzled(enc, rows, cols, pos, source)
    else:
        expr, span, atom = _linear(enc, rows, cols, pos, source)
    f = Formula((Definition("offset", (Case(expr, None),)),), "x")
    named = FormulaMap(f, (Dim("row", rows), Dim("col", cols)), (Dim("offset", span),))
    return from_map(named, bits, base, "triton", text.strip()[:200], swz, swz_on, atom)


_SHARED_TRITON = re.compile(r"#(?:ttg|triton_gpu)\.(nvmma_shared|swizzled_shared)|memdesc\s*<")


def _read_shared(text: str | bytes, *, bits: int | None = None, tile: tuple[int, int] | None = None, base: int = 0,
                 source: str = "argument", **_: object) -> SharedLayout:
    return import_triton_shared(text, tile, bits, base, source)


register_reader("shared", SharedReader("triton", _read_shared,
                                       looks_shared=lambda t: _SHARED_TRITON.search(t) is not None, order=2,
                                       flag="--triton", metavar="FILE", inline=False, help=(
    "Triton: #ttg.nvmma_shared<{...}>, #ttg.swizzled_shared<{...}> or #ttg.shared_linear<{...}> (with a "
    "!ttg.memdesc<RxCxTYPE, ...> for its shape, or --tile/--type)")))


__all__ = ["KINDS", "Encoding", "import_triton_shared", "parse_encoding"]
