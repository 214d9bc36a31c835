"""Shared-memory accesses of one warp: which lanes supply addresses, how many bytes each address reads or
writes, which lanes share a wavefront, and which tile cell each lane addresses.

Shared memory has 32 banks of 4 bytes (bank = (address / 4) % 32).  A warp's request is served a group of
lanes at a time, 128 bytes per group: 32 lanes for accesses of up to 4 bytes, 16 for 8 bytes, 8 for 16
bytes (``ld.shared.v4.b32``, and every row address of ``ldmatrix``/``stmatrix``: a row is 16 bytes, a group is
one 8x8 matrix).  Inside a group, two lanes that touch different 4-byte words of one bank conflict (the same
word is a broadcast); the conflict degree of a group is the most distinct words of one bank, and each
degree above 1 is one more wavefront.

Accesses (``parse_access``):

* ``ldmatrix[.m8n8|.m16n16|.m8n16][.x1|.x2|.x4][.trans]...`` and ``stmatrix[.m8n8|.m16n8]...``: 16 bytes per row
  address; ``.m8n8``/``.m8n16``/``.m16n8``: lanes ``8k .. 8k+7`` give the rows of matrix k (``8 x num`` lanes);
  ``.m16n16``: lanes ``16k .. 16k+15`` (``16 x num`` lanes);
* ``ld.shared[.vN][.bW]`` / ``st.shared[.vN][.bW]`` (also ``.u32``, ``.f16``...; ``.vN`` alone is N 32-bit
  words): ``N x W / 8`` bytes per lane, every lane addressing.

The default lane addressing (``default_pattern``) is the mma-operand pattern: ``ldmatrix.x4`` lane l addresses
row ``l % 16``, column ``(l / 16) x (16 bytes)`` of a 16 x (32 bytes) tile, the four 8x8 matrices of an
``mma.m16n8k16`` A (``.x2``: rows 0-15, ``.x1``: rows 0-7); ``ld``/``st.shared`` lane l addresses row ``l / 4``,
column ``(l % 4) x (elements per access)`` (the accumulator's groups of four).  A file of definitions over
``%laneid`` (``row = ...``, ``col = ...``) gives another.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping

from ..formula import BinOp, Case, Definition, Formula, FormulaError, Num, Ref, Var
from ..formula.index import parse_index
from .dims import Dim
from .family import Extent, Param, substitute
from .named import FormulaMap, evaluate_all

BANKS = 32
BANK_BYTES = 4
WAVEFRONT_BYTES = 128


@dataclass(frozen=True)
class Access:
    """One warp-wide shared-memory access."""

    text: str
    kind: str          # ldmatrix | stmatrix | ld | st
    bytes: int         # bytes per address
    lanes: int         # lanes that supply an address
    group: int         # lanes served together (one wavefront when conflict-free)
    shape: str = ""    # m8n8, m16n16, m8n16, m16n8 (ldmatrix/stmatrix)
    num: int = 1
    trans: bool = False

    @property
    def words(self) -> int:
        """4-byte words one address touches."""
        return max(1, self.bytes // BANK_BYTES)


_VEC = re.compile(r"v(\d)\Z")
_WIDTH = re.compile(r"[bsuf](\d{1,3})\Z")


def parse_access(text: str) -> Access:
    """``ValueError`` with a one-line reason for an access this module does not know."""
    parts = [p for p in text.strip().split(".") if p]
    if not parts:
        raise ValueError("empty access (e.g. ldmatrix.x4, ld.shared.v4)")
    head = parts[0]
    if head in ("ldmatrix", "stmatrix"):
        shape, num, trans = "m8n8", None, False
        for p in parts[1:]:
            if p in ("sync", "aligned", "shared", "cta", "b16", "b8", "b8x16", "b6x16_p32", "b4x16_p64"):
                continue
            if p in ("m8n8", "m16n16", "m8n16", "m16n8"):
                shape = p
            elif p in ("x1", "x2", "x4"):
                num = int(p[1])
            elif p == "trans":
                trans = True
            else:
                raise ValueError(f"{text}: unknown qualifier .{p}")
        if head == "ldmatrix" and shape == "m16n8" or head == "stmatrix" and shape in ("m16n16", "m8n16"):
            raise ValueError(f"{text}: {head} has no .{shape}")
        num = num or (2 if shape == "m16n16" else 4)
        if shape == "m16n16" and num == 4:
            raise ValueError(f"{text}: .m16n16 takes .x1 or .x2")
        per = 16 if shape == "m16n16" else 8
        return Access(text, head, 16, per * num, 8, shape, num, trans)
    if head in ("ld", "st"):
        if len(parts) < 2 or parts[1] != "shared":
            raise ValueError(f"{text}: write {head}.shared[.vN][.bW]")
        vec, width = 1, 32
        for p in parts[2:]:
            if p in ("cta", "sync", "volatile", "relaxed", "weak"):
                continue
            m = _VEC.match(p)
            if m:
                vec = int(m.group(1))
                if vec not in (2, 4, 8):
                    raise ValueError(f"{text}: .v{vec} (2, 4 or 8)")
                continue
            m = _WIDTH.match(p)
            if m and int(m.group(1)) in (8, 16, 32, 64, 128):
                width = int(m.group(1))
                continue
            raise ValueError(f"{text}: unknown qualifier .{p}")
        nbytes = vec * width // 8
        if nbytes not in (1, 2, 4, 8, 16):
            raise ValueError(f"{text}: {nbytes} bytes per lane (a shared access is 1, 2, 4, 8 or 16)")
        return Access(text, head, nbytes, 32, WAVEFRONT_BYTES // max(nbytes, BANK_BYTES))
    raise ValueError(f"unknown access {text!r} (ldmatrix..., stmatrix..., ld.shared..., st.shared...)")


@dataclass(frozen=True)
class Pattern:
    """Lane -> tile cell: ``map`` is a named map ``lane -> (row, col)`` (undefined: the lane addresses
    nothing); ``rows``/``cols`` its footprint (columns include the elements of the last lane's access)."""

    map: Any
    rows: int
    cols: int
    text: str


def translated(pat: Pattern, step: tuple[int, int], counts: tuple[Extent, Extent],
               params: tuple[Param, ...] = ()) -> FormulaMap:
    """``(lane, a, b) -> (row, col)``: the pattern placed at origin ``(a step_rows, b step_cols)``, for ``a`` below
    ``counts[0]`` and ``b`` below ``counts[1]`` (extents, over ``params`` for a family's tile).  The pattern's
    own definitions are kept; two more, named so that no text can name them, add the origin."""
    m = pat.map
    f = m.formula
    origin = (("row", step[0], "a"), ("col", step[1], "b"))
    extra = tuple(Definition(f"{out}@placed", (Case(BinOp("+", Ref(dict(m.definitions)[out]),
                                                               BinOp("*", Num(k), Var(f"@{var}"))), None),))
                  for out, k, var in origin)
    formula = Formula(f.definitions + extra, f.element_prefix)
    inputs = (*m.inputs, Dim("a", counts[0]), Dim("b", counts[1]))
    return FormulaMap(formula, inputs, m.outputs, variables=(*m.variables, ("a", "@a"), ("b", "@b")),
                      definitions=tuple((out, f"{out}@placed") for out, _, _ in origin), params=params)


def per_access(access: Access, type_bits: int) -> int:
    """Elements one address covers (``ValueError`` when an access is smaller than one element)."""
    n = access.bytes * 8 // type_bits
    if n < 1 or access.bytes * 8 % type_bits:
        raise ValueError(f"{access.text} moves {access.bytes} bytes per address: not whole {type_bits}-bit elements")
    return n


def default_pattern(access: Access, type_bits: int) -> Pattern:
    e = per_access(access, type_bits)
    if access.kind in ("ldmatrix", "stmatrix"):
        if access.shape == "m16n16":
            text = f"row = %laneid % 16\ncol = (%laneid / 16) * {e}"
        else:
            text = f"row = (((%laneid / 8) % 2) * 8) + (%laneid % 8)\ncol = (%laneid / 16) * {e}"
    else:
        text = f"row = %laneid / 4\ncol = (%laneid % 4) * {e}"
    return pattern_from_text(text, access, type_bits, "default")


def pattern_from_text(text: str, access: Access, type_bits: int, source: str = "addresses",
                      params: Mapping[str, int] | None = None) -> Pattern:
    """Index code (``verify.formula.index``) defining ``row`` and ``col`` over the lane (``lane``, ``tid``,
    ``laneid`` or ``%laneid``); the lanes that do not supply an address (past ``access.lanes``) are left out
    whatever the text says.  ``params``: values the code may read by name (``--param``).  ``FormulaError`` for
    bad text."""
    f = parse_index(text, "x", (), ("row", "col"), tuple(params or {}), thread=True)
    if params:
        f = substitute(f, dict(params))
    probe = FormulaMap(f, (Dim("lane", access.lanes),), (Dim("row", 1 << 20), Dim("col", 1 << 20)))
    v = evaluate_all(probe)
    ok = v.ok
    if not ok.any():
        raise FormulaError("no lane addresses a cell", 1, 1)
    rows_v, cols_v = v.out["row"][ok], v.out["col"][ok]
    if rows_v.min() < 0 or cols_v.min() < 0:
        raise FormulaError("a lane addresses a negative row or column", 1, 1)
    e = per_access(access, type_bits)
    rows, cols = int(rows_v.max()) + 1, int(cols_v.max()) + e
    return Pattern(FormulaMap(f, (Dim("lane", access.lanes),), (Dim("row", rows), Dim("col", cols))), rows, cols, text)


__all__ = ["Access", "BANKS", "BANK_BYTES", "Pattern", "default_pattern", "parse_access", "pattern_from_text",
           "per_access", "translated"]
