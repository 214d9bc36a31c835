"""Shared-memory layouts: ``(row, col) -> offset`` maps with swizzles applied as the hardware applies them.

A swizzle ``Swizzle<B,M,S>`` (CuTe's ``swizzle.hpp``) XORs bits ``[M+S, M+S+B)`` of an integer into bits
``[M, M+B)``.  Where it acts is the point of most shared-memory bugs, so this module keeps it explicit:

* ``"address"``: on the absolute byte address (CuTe's ``Swizzle o smem_ptr o layout``, the GMMA/UMMA atoms,
  the wgmma/tcgen05 descriptors, TMA): the buffer's base address is part of the map;
* ``"bytes"``: on the byte offset from the buffer's start (Triton's shared encodings, index code such as
  ``swz = off ^ (((off >> 7) & 7) << 4)``): the same as ``"address"`` only when the base is aligned to the
  swizzle's period;
* ``"elements"``: on the element offset (CuTe's plain ``composition(Swizzle<...>{}, layout)``).

Every layout here is a ``NamedMap`` of ``verify.layout.named`` from ``(row, col)`` to ``offset`` (elements,
counted from the buffer's start), built as ``compose(swizzle, linear)`` with ``verify.layout.algebra``; a
linear part written in CuTe's ``shape:stride`` (with parameters, as the PTX pages write the canonical
layouts) becomes a formula AST here, so both engines evaluate it.  ``row`` is the M (or N) index of an
operand tile and ``col`` its K index, as CuTe writes shared-memory tiles and as the PTX pages call the
128-bit normalised matrix's rows and columns.

The canonical layouts of the wgmma page (9.7.15.5.1.2) and the swizzle modes of both descriptors are
here as data (``MODES``, ``canonical_text``); ``verify.catalog.shared_pages`` reads the same facts from the
pages and checks them against each other.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Hashable, Mapping, Sequence

from ..formula import BinOp, Case, Definition, Expr, Formula, Num, Ref, Var
from .algebra import compose
from .reshape import relabel
from .dims import Dim
from .family import Extent, Param, concrete
from .named import FormulaMap
from .types import ELEMENT_BITS

# ----------------------------------------------------------------------------- element types

# Element storage widths in shared memory (6-bit types sit in 8-bit containers; 4-bit types are packed).
SMEM_BITS: Mapping[str, int] = {**{k: v for k, v in ELEMENT_BITS.items() if k not in ("b8x16",)},
                                "b64": 64, "b128": 128, "f8": 8, "e2m1x2": 8}


def element_bits(type_name: str) -> int:
    """Bits of one element of ``type_name`` in shared memory (``ValueError`` for an unknown type)."""
    t = type_name.strip().lstrip(".").lower()
    if t not in SMEM_BITS:
        raise ValueError(f"unknown element type {type_name!r} (known: {', '.join(sorted(SMEM_BITS))})")
    return SMEM_BITS[t]


# ----------------------------------------------------------------------------- swizzles

@dataclass(frozen=True)
class Swizzle:
    """CuTe's ``Swizzle<B,M,S>``: bits ``[M+S, M+S+B)`` XORed into bits ``[M, M+B)`` (``S >= B`` keeps it a
    bijection on every aligned block of ``2**(M+S+B)``)."""

    bits: int
    base: int
    shift: int

    def __post_init__(self) -> None:
        if not (0 <= self.bits <= 8 and 0 <= self.base <= 16 and 0 <= self.shift <= 16):
            raise ValueError(f"Swizzle<{self.bits},{self.base},{self.shift}>: B, M, S out of range")
        if self.bits and self.shift < self.bits:
            raise ValueError(f"Swizzle<{self.bits},{self.base},{self.shift}>: S must be at least B")

    def apply(self, x: int) -> int:
        mask = (1 << self.bits) - 1
        return x ^ (((x >> (self.base + self.shift)) & mask) << self.base)

    @property
    def period(self) -> int:
        """The pattern repeats every ``2**(M+S+B)`` (bytes, for an address swizzle)."""
        return 1 << (self.base + self.shift + self.bits) if self.bits else 1

    @property
    def identity(self) -> bool:
        return self.bits == 0

    def text(self) -> str:
        return f"Swizzle<{self.bits},{self.base},{self.shift}>"


@dataclass(frozen=True)
class Mode:
    """A swizzle mode of the matrix descriptors.

    ``units``: 16-byte units along the leading dimension of one swizzle row (the atom's width: 1, 2, 4, 8);
    ``rows``: rows of the atom along the other dimension (8; 4 for tcgen05's 128B swizzle with 32B
    atomicity); ``wgmma``/``tcgen05``: the descriptor's encoding (None: the instruction has no such mode)."""

    name: str
    swizzle: Swizzle
    units: int
    rows: int
    wgmma: int | None
    tcgen05: int | None
    majors: tuple[str, ...] = ("K", "MN")

    @property
    def width(self) -> int:
        """Bytes of one swizzle row (16 for no swizzle)."""
        return 16 * self.units

    @property
    def period(self) -> int:
        """Bytes after which the swizzle pattern repeats (the alignment a swizzled buffer needs)."""
        return self.swizzle.period if not self.swizzle.identity else 16

    @property
    def atom_bytes(self) -> int:
        return self.width * self.rows


MODES: Mapping[str, Mode] = {
    "none": Mode("none", Swizzle(0, 4, 3), 1, 8, 0, 0),
    "32B": Mode("32B", Swizzle(1, 4, 3), 2, 8, 3, 6),
    "64B": Mode("64B", Swizzle(2, 4, 3), 4, 8, 2, 4),
    "128B": Mode("128B", Swizzle(3, 4, 3), 8, 8, 1, 2),
    # tcgen05 only, M/N-major only: CuTe's Layout_MN_SW128_32B_Atom (Swizzle<2,5,2>, 128 B x 4 rows)
    "128B_base32B": Mode("128B_base32B", Swizzle(2, 5, 2), 8, 4, None, 1, ("MN",)),
}
MODE_ALIASES = {"interleave": "none", "inter": "none", "0": "none", "sw32": "32B", "sw64": "64B", "sw128": "128B",
                "32": "32B", "64": "64B", "128": "128B", "128b_32b": "128B_base32B", "sw128_32b": "128B_base32B",
                "128b_base32b": "128B_base32B"}


def mode(name: str) -> Mode:
    key = name.strip()
    if key in MODES:
        return MODES[key]
    low = key.lower()
    for k in MODES:
        if k.lower() == low:
            return MODES[k]
    if low in MODE_ALIASES:
        return MODES[MODE_ALIASES[low]]
    raise ValueError(f"unknown swizzle mode {name!r} (known: {', '.join(MODES)})")


def mode_of_swizzle(s: Swizzle | None) -> Mode | None:
    """The descriptor mode whose swizzle is ``s`` (None when no mode has it)."""
    s = s or Swizzle(0, 4, 3)
    for m in MODES.values():
        if m.swizzle == s or (s.identity and m.swizzle.identity):
            return m
    return None


# ----------------------------------------------------------------------------- AST helpers

def num(v: int) -> Num:
    return Num(int(v))


def op(a: Expr | int, o: str, b: Expr | int) -> Expr:
    """``a o b`` with integers folded and the identities ``x * 1``, ``x + 0``, ``x / 1`` removed."""
    a = num(a) if isinstance(a, int) else a
    b = num(b) if isinstance(b, int) else b
    if isinstance(a, Num) and isinstance(b, Num) and o in "+-*":
        return num({"+": a.value + b.value, "-": a.value - b.value, "*": a.value * b.value}[o])
    if o == "*" and isinstance(b, Num) and b.value == 1:
        return a
    if o == "*" and isinstance(a, Num) and a.value == 1:
        return b
    if o == "*" and ((isinstance(a, Num) and a.value == 0) or (isinstance(b, Num) and b.value == 0)):
        return num(0)
    if o in "+-" and isinstance(b, Num) and b.value == 0:
        return a
    if o == "+" and isinstance(a, Num) and a.value == 0:
        return b
    if o == "/" and isinstance(b, Num) and b.value == 1:
        return a
    if o in ("<<", ">>") and isinstance(b, Num) and b.value == 0:
        return a
    return BinOp(o, a, b)


Term = int | Expr  # an integer or an expression over a family's parameters


def mode_offset(coord: Expr, shape: Sequence[Term], stride: Sequence[Term]) -> Expr:
    """CuTe's offset of one mode: ``coord`` split colexicographically over ``shape`` (first entry fastest),
    each digit times its stride.  The last digit is not reduced (the coordinate is inside the mode)."""
    out: Expr = num(0)
    below: Term = 1
    for k, (s, d) in enumerate(zip(shape, stride)):
        digit = op(coord, "/", below) if not (isinstance(below, int) and below == 1) else coord
        if k + 1 < len(shape):
            if isinstance(s, int) and s == 1:
                digit = num(0)
            else:
                digit = op(digit, "%", s)
        out = op(out, "+", op(digit, "*", d))
        below = below * s if isinstance(below, int) and isinstance(s, int) else op(below, "*", s)
    return out


def _formula(defs: Sequence[tuple[str, Expr]]) -> Formula:
    return Formula(tuple(Definition(n, (Case(e, None),)) for n, e in defs), "x")


# ----------------------------------------------------------------------------- maps

def linear_map(rows: Extent, cols: Extent, row_modes: tuple[Sequence[Term], Sequence[Term]],
               col_modes: tuple[Sequence[Term], Sequence[Term]], span: Extent,
               params: tuple[Param, ...] = (), out: str = "offset") -> FormulaMap:
    """``(row, col) -> out = row_offset(row) + col_offset(col)``, each a CuTe mode ``(shape, stride)``."""
    expr = op(mode_offset(Var("row"), *row_modes), "+", mode_offset(Var("col"), *col_modes))
    return FormulaMap(_formula([(out, expr)]), (Dim("row", rows), Dim("col", cols)), (Dim(out, span),),
                      params=params)


def swizzle_expr(x: Expr, s: Swizzle) -> Expr:
    """``x ^ (((x >> (M + S)) & mask) << M)`` as an AST."""
    mask = (1 << s.bits) - 1
    return op(x, "^", op(op(op(x, ">>", s.base + s.shift), "&", mask), "<<", s.base))


def swizzle_map(s: Swizzle, element_bits_: int, where: str, span_in: Extent, span_out: Extent, base: int = 0,
                params: tuple[Param, ...] = (), source: str = "lin", target: str = "offset") -> FormulaMap:
    """``source -> target``: an element offset swizzled where ``where`` says (module docstring).  For
    ``"address"`` the byte address is ``base + offset * bits / 8``, computed in bits so sub-byte types are
    exact; the result is again an element offset from the buffer's start (negative or past the buffer when
    the base is not aligned to the swizzle's period: that shows as an ``in_range`` failure)."""
    x: Expr = Var(source)
    if where == "elements":
        expr = swizzle_expr(x, s)
    elif where in ("bytes", "address"):
        origin = base * 8 if where == "address" else 0
        bits = op(num(origin), "+", op(x, "*", element_bits_))
        shifted = Swizzle(s.bits, s.base + 3, s.shift)  # byte-address bits as bit-address bits
        expr = op(op(swizzle_expr(Ref("bits"), shifted), "-", origin), "/", element_bits_)
        f = _formula([("bits", bits), (target, expr)])
        return FormulaMap(f, (Dim(source, span_in),), (Dim(target, span_out),),
                          definitions=((target, target),), params=params)
    else:
        raise ValueError(f"a swizzle acts on 'address', 'bytes' or 'elements', not {where!r}")
    return FormulaMap(_formula([(target, expr)]), (Dim(source, span_in),), (Dim(target, span_out),), params=params)


def unit_swizzle_expr(x: Expr, s: Swizzle, T: Term) -> Expr:
    """A byte-address swizzle (``M >= 4``) on an element offset ``x`` of elements that pack ``T`` to 16 bytes,
    for a base aligned to the swizzle's period: the 16-byte unit index ``x / T`` is swizzled by
    ``Swizzle<B, M - 4, S>``, the position inside the unit kept.  (The form the canonical families use: no
    bit addresses, ``T`` a parameter.)"""
    unit = op(x, "/", T)
    inner = op(x, "%", T)
    return op(op(swizzle_expr(unit, Swizzle(s.bits, s.base - 4, s.shift)), "*", T), "+", inner)


def round_up(x: Term, to: Term) -> Term:
    if isinstance(x, int) and isinstance(to, int):
        return -(-x // to) * to
    return op(op(op(x, "+", op(to, "-", 1)), "/", to), "*", to)


# ----------------------------------------------------------------------------- the user-facing object

@dataclass(frozen=True)
class SharedLayout:
    """A shared-memory tile: ``map`` (``(row, col) -> offset`` in elements from the buffer's start),
    the element width, the buffer's base address, and how it was written (for messages and pictures).

    ``swizzle``/``swizzle_on`` describe the swizzle when the notation states one (``None`` for index code,
    where it is part of the arithmetic); ``atom`` is the swizzle atom's (rows, cols) in elements, drawn by
    the pictures."""

    map: Any  # NamedMap (row, col) -> offset
    element_bits: int
    base: int = 0
    swizzle: Swizzle | None = None
    swizzle_on: str = ""
    atom: tuple[int, int] | None = None
    notation: str = ""
    text: str = ""
    cute: Any = field(default=None, compare=False)  # (shape, stride) of the linear part, when known

    @property
    def rows(self) -> Extent:
        return self.map.inputs[0].size

    @property
    def cols(self) -> Extent:
        return self.map.inputs[1].size

    @property
    def params(self) -> tuple[Param, ...]:
        return self.map.params

    def offset(self, row: int, col: int, env: Mapping[str, int] | None = None) -> int | None:
        out = self.map.at({"row": row, "col": col}, env)
        return None if out is None else int(out["offset"])

    def address(self, row: int, col: int, env: Mapping[str, int] | None = None) -> int | None:
        """The byte address of element (row, col) (the byte holding it, for sub-byte types)."""
        off = self.offset(row, col, env)
        return None if off is None else self.base + (off * self.element_bits) // 8

    def key(self) -> Hashable:
        return ("shared", self.map.key(), self.element_bits, self.base)


def make_shared(rows: Extent, cols: Extent, row_mode: tuple[Sequence[int], Sequence[int]],
                col_mode: tuple[Sequence[int], Sequence[int]], element_bits_: int,
                swizzle: Swizzle | None = None, swizzle_on: str = "address", base: int = 0,
                params: tuple[Param, ...] = (), atom: tuple[int, int] | None = None, notation: str = "",
                text: str = "") -> SharedLayout:
    """A CuTe-style layout ``Swizzle o (row_mode, col_mode)`` over integers (no parameters) as a
    ``SharedLayout``: ``compose(swizzle, linear)`` with the algebra."""
    if params:
        raise ValueError("make_shared builds concrete layouts; families come from their specs")
    span = 1 + sum((concrete(s) - 1) * concrete(d) for s, d in zip(row_mode[0], row_mode[1])) + \
        sum((concrete(s) - 1) * concrete(d) for s, d in zip(col_mode[0], col_mode[1]))
    if swizzle is None or swizzle.identity:
        lin = linear_map(rows, cols, row_mode, col_mode, span)
        return SharedLayout(lin, element_bits_, base, swizzle, swizzle_on if swizzle else "", atom, notation, text,
                            (row_mode, col_mode))
    lin = linear_map(rows, cols, row_mode, col_mode, span, out="lin")
    if swizzle_on == "elements":
        out_span = round_up(span, swizzle.period)
    else:
        period_el = max(1, swizzle.period * 8 // element_bits_)
        out_span = round_up(span, period_el)
    sw = swizzle_map(swizzle, element_bits_, swizzle_on, span, out_span, base)
    return SharedLayout(compose(sw, lin), element_bits_, base, swizzle, swizzle_on, atom, notation, text,
                        (row_mode, col_mode))


def from_map(named: Any, element_bits_: int, base: int = 0, notation: str = "", text: str = "",
             swizzle: Swizzle | None = None, swizzle_on: str = "", atom: tuple[int, int] | None = None) -> SharedLayout:
    """Any named map ``(row, col) -> offset`` as a ``SharedLayout`` (index code, Triton's encodings)."""
    ins = [d.name for d in named.inputs]
    outs = [d.name for d in named.outputs]
    if ins != ["row", "col"]:
        raise ValueError(f"a shared-memory layout maps (row, col), not ({', '.join(ins)})")
    if outs != ["offset"]:
        if len(outs) != 1:
            raise ValueError(f"a shared-memory layout has one output (offset), not ({', '.join(outs)})")
        named = relabel(named, outputs={outs[0]: "offset"})
    return SharedLayout(named, element_bits_, base, swizzle, swizzle_on, atom, notation, text)


# ----------------------------------------------------------------------------- canonical layouts (wgmma 9.7.15.5.1.2)

# The page's canonical table in its own words (CuTe notation over T, m, k, LBO, SBO); ``shared_pages`` reads the
# page and compares, the specs transcribe them as formulas.  Keyed by (major, mode).
CANONICAL_TEXT: Mapping[tuple[str, str], str] = {
    ("MN", "none"): "((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))",
    ("MN", "32B"): "((T,2,m),(8,k)):((1,T,LBO),(2T,SBO))",
    ("MN", "64B"): "((T,4,m),(8,k)):((1,T,LBO),(4T,SBO))",
    ("MN", "128B"): "((T,8,m),(8,k)):((1,T,LBO),(8T,SBO))",
    ("K", "none"): "((8,m),(T,2k)):((1T,SBO),(1,LBO))",
    ("K", "32B"): "((8,m),(T,2k)):((2T,SBO),(1,T))",
    ("K", "64B"): "((8,m),(T,2k)):((4T,SBO),(1,T))",
    ("K", "128B"): "((8,m),(T,2k)):((8T,SBO),(1,T))",
}


def canonical_modes(major: str, md: Mode, T: int, m: int, k: int, lbo: int, sbo: int,
                    ) -> tuple[tuple[list[int], list[int]], tuple[list[int], list[int]]]:
    """(row mode, col mode) of the canonical layout in elements, LBO/SBO in elements, with one K group of
    ``k_groups`` = ``k`` (MN-major: groups of 8 rows along K; K-major: pairs of 16-byte units, the page's
    ``2k``).  The 128B-with-32B-atomicity mode (tcgen05) groups 4 rows along K."""
    W = md.units
    if major == "MN":
        if md.name == "none":
            return ([T, 1, m], [1, T, sbo]), ([8, k], [T, lbo])
        return ([T, W, m], [1, T, lbo]), ([md.rows, k], [W * T, sbo])
    if md.name == "none":
        return ([8, m], [T, sbo]), ([T, 2 * k], [1, lbo])
    return ([8, m], [W * T, sbo]), ([T, 2 * k], [1, T])


def canonical(major: str, mode_name: str, type_bits: int, m: int = 1, k: int = 1, lbo: int | None = None,
              sbo: int | None = None, base: int = 0) -> SharedLayout:
    """The canonical layout of one majorness and swizzle mode for one element width, as a ``SharedLayout``
    over (row = M/N, col = K).  LBO and SBO are in bytes (as the descriptor holds them); left out, they take
    the dense values of the page's examples (the next atom along M/N right after this one, then K)."""
    md = mode(mode_name)
    if major not in md.majors:
        raise ValueError(f"{md.name} swizzling has no {major}-major layout")
    if 128 % type_bits:
        raise ValueError(f"{type_bits}-bit elements do not pack a 16-byte unit")
    T = 128 // type_bits
    atom_el = md.atom_bytes * 8 // type_bits
    if major == "MN":
        rows, cols = T * md.units * m, md.rows * k
        d_m, d_k = atom_el, atom_el * m  # the repeat along MN, then along K (in elements)
        if md.name == "none":
            lbo_e, sbo_e = d_k, d_m
        else:
            lbo_e, sbo_e = d_m, d_k
    else:
        rows, cols = 8 * m, T * 2 * k
        if md.name == "none":
            sbo_e, lbo_e = 8 * T, 8 * T * m
        else:
            sbo_e, lbo_e = atom_el, 0
    if lbo is not None:
        lbo_e = lbo * 8 // type_bits
    if sbo is not None:
        sbo_e = sbo * 8 // type_bits
    row_mode, col_mode = canonical_modes(major, md, T, m, k, lbo_e, sbo_e)
    atom = (T * md.units, md.rows) if major == "MN" else (8, T * md.units)
    return make_shared(rows, cols, row_mode, col_mode, type_bits, md.swizzle, "address", base, atom=atom,
                       notation="canonical", text=f"{md.swizzle.text()} o {major}-major {md.name}")


__all__ = ["CANONICAL_TEXT", "MODES", "TMA_BOX_SYNTAX", "Mode", "SharedLayout", "Swizzle", "TmaBox", "canonical",
           "element_bits", "from_map", "linear_map", "make_shared", "mode", "mode_offset", "parse_tma_box", "swizzle_map",
           "tma_layout", "unit_swizzle_expr"]


TMA_BOX_SYNTAX = "ROWSxCOLS:MODE, or ROWSxCOLS:MODE:col for a column-major box (e.g. 64x64:128B, 64x64:128B:col)"


@dataclass(frozen=True)
class TmaBox:
    """A TMA box as written (``64x64:128B``, ``64x64:128B:col``): ``order`` ``row`` has the columns contiguous
    (the box's inner dimension is ``cols``), ``col`` the rows (a transposed, column-major box: an MN-major
    operand's tile)."""

    rows: int
    cols: int
    mode: str
    order: str = "row"


def parse_tma_box(text: str | bytes) -> TmaBox:
    """``ROWSxCOLS:MODE[:row|:col]`` (``ValueError`` saying the syntax for anything else)."""
    import re
    raw = text.decode("utf-8", "replace") if isinstance(text, (bytes, bytearray)) else text
    m = re.fullmatch(r"\s*(\d{1,4})\s*x\s*(\d{1,4})\s*:\s*(\w{1,16})\s*(?::\s*(row|col|row-major|col-major)\s*)?",
                     raw, re.IGNORECASE)
    if m is None:
        raise ValueError(f"a TMA box is {TMA_BOX_SYNTAX}; not {raw.strip()[:40]!r}")
    order = (m.group(4) or "row").lower().partition("-")[0]
    return TmaBox(int(m.group(1)), int(m.group(2)), m.group(3), order)


def tma_layout(rows: int, cols: int, element_bits_: int, mode_name: str, base: int = 0,
               order: str = "row") -> SharedLayout:
    """The tile a TMA load with ``rows x cols`` box writes in shared memory with swizzle mode ``mode_name``:
    ``order`` ``row``: ``cols`` the inner, contiguous dimension, box rows packed at its byte width; ``col`` (a
    column-major box): ``rows`` the inner dimension, columns packed at its byte width.  The mode's swizzle is
    applied to the address bits (``ValueError`` for a box TMA refuses: an inner extent that is not a multiple of
    16 bytes, or wider than the swizzle span)."""
    if order not in ("row", "col"):
        raise ValueError(f"a TMA box is row- or column-major (row, col), not {order!r}")
    md = mode(mode_name)
    if md.tcgen05 == 1:
        raise ValueError("TMA has no 128B-with-32B-atomicity swizzle in this model")
    inner_el = cols if order == "row" else rows
    inner = inner_el * element_bits_
    if inner % 128:
        raise ValueError(f"the inner box dimension is {inner // 8} bytes: TMA needs a multiple of 16")
    if not md.swizzle.identity and inner // 8 > md.width:
        raise ValueError(f"the inner box dimension is {inner // 8} bytes, wider than the {md.width}-byte span of "
                         f"{md.name} swizzling")
    if order == "col":
        return make_shared(rows, cols, ([rows], [1]), ([cols], [rows]), element_bits_, md.swizzle, "address", base,
                           atom=(rows, 8), notation="tma",
                           text=f"TMA box {rows}x{cols} column-major, {md.name} swizzle")
    pitch = inner // element_bits_
    return make_shared(rows, cols, ([rows], [pitch]), ([cols], [1]), element_bits_, md.swizzle, "address", base,
                       atom=(8, cols), notation="tma", text=f"TMA box {rows}x{cols}, {md.name} swizzle")
