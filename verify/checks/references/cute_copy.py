"""CuTe's copy traits, compiled host-only for ``cute``: each ``Copy_Traits`` evaluated bit by bit against its spec.

``ldmatrix`` (``SM75_U32x{1,2,4}_LDSM_N``, ``SM75_U16x{2,4,8}_LDSM_T``, SM100's 8-bit forms), ``stmatrix``
(``SM90_*_STSM_*``, SM100's), ``movmatrix`` (``SM75_U32x1_MOVM_T``) and ``tcgen05.ld``/``st``
(``SM100_TMEM_LOAD/STORE_*``): the register side of the copy (``DstLayout`` of a load, ``SrcLayout`` of a store,
bits) is evaluated for every thread and element, and each element's cell found through the other side: for shared
memory the lane whose address covers the bit is the row and the bit's position in that lane's row the column; for
Tensor Memory ``ValID`` gives the address (TMEM lane ``addr / DP_b``, 32-bit column ``addr % DP_b / 32``).  An
element whose bits are not consecutive in one cell is a finding about the trait.  ``tcgen05.cp``
(``SM100_UTCCP_*_1cta``) goes through its ``ValID``.  ``copy_layouts`` is the entry, for ``cute`` and for
``tensor_layouts``'s copy atoms.
"""
from __future__ import annotations

import re
from typing import Any

import numpy as np

from ...layout.corrections import in_use_of
from ...layout.model import Layout
from ...layout.notations import NotationError
from ...layout.notations.cute import CuteLayout
from ...layout.notations.cute_compiled import Printed, Request
from .common import Evaluated, find
from .cute_sfb import eval_layout


DP_BITS = 21            # CuTe's TMEM::DP_b: a TMEM lane is 2^16 32-bit columns, addresses count bits
MAX_BITS = 1 << 24


def _tv(layout: CuteLayout) -> tuple[int, int]:
    if layout.rank() != 2:
        raise NotationError(f"{layout} is not a (thread, value) layout")
    return layout.mode(0).size(), layout.mode(1).size()


def _register_bits(layout: CuteLayout) -> np.ndarray:
    """tile bit of (thread, value bit), as a threads x bits array."""
    threads, bits = _tv(layout)
    if threads * bits > MAX_BITS:
        raise NotationError(f"{layout} has {threads * bits} points (limit {MAX_BITS})")
    t = np.arange(threads, dtype=np.int64)[:, None]
    v = np.arange(bits, dtype=np.int64)[None, :]
    return eval_layout(layout, t + threads * v)


def _smem_cells(reg: np.ndarray, addr: CuteLayout, w: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each register bit's (row, column, bit in cell) through the address side: the row is the smallest lane
    whose row address covers the bit, the column the bit's position in that row / element width."""
    bits = _register_bits(addr)
    threads, nb = bits.shape
    size = int(max(bits.max(), reg.max())) + 1
    lane = np.full(size, -1, dtype=np.int64)
    pos = np.full(size, -1, dtype=np.int64)
    for t in range(threads - 1, -1, -1):      # the smallest lane wins
        lane[bits[t]] = t
        pos[bits[t]] = np.arange(nb)
    row, p = lane[reg], pos[reg]
    return row, np.where(p >= 0, p // w, -1), np.where(p >= 0, p % w, -1)


def _tmem_cells(reg: np.ndarray, valid: CuteLayout, w: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each register bit's (TMEM lane, 32-bit column, bit in cell) through ``ValID``."""
    if valid.size() <= int(reg.max()):
        raise NotationError(f"ValID {valid} does not cover the register layout")
    addr = eval_layout(valid, reg)
    colbit = addr & ((1 << DP_BITS) - 1)
    return addr >> DP_BITS, colbit // w, colbit % w


def _entries(reg: np.ndarray, cells: tuple[np.ndarray, np.ndarray, np.ndarray], w: int,
             thr: CuteLayout) -> tuple[tuple[tuple[int, int, int | None, int | None], ...], str]:
    """Table entries (lane, i, row, col), one per w-bit element; '' or why the bits do not form elements."""
    row, col, bit = cells
    threads, nbits = reg.shape
    if nbits % w:
        return (), f"{nbits} bits per thread is not a whole number of {w}-bit elements"
    lanes = [thr(t) for t in range(threads)]
    out = []
    for t in range(threads):
        for e in range(nbits // w):
            sl = slice(e * w, (e + 1) * w)
            r, c, b = row[t, sl], col[t, sl], bit[t, sl]
            if (r < 0).any():
                return (), f"thread {t} bit {e * w + int(np.argmax(r < 0))} has no address"
            if not ((r == r[0]).all() and (c == c[0]).all() and (b == np.arange(w)).all()):
                return (), (f"thread {t} element {e}: its {w} bits are not one element "
                            f"(bits in cells {sorted(set(zip(r.tolist(), c.tolist())))[:3]})")
            out.append((lanes[t], e, int(r[0]), int(c[0])))
    return tuple(out), ""


# name pattern -> (spec id, params from the match, register side, element bits, memory)
_COPY = [
    (r"SM75_U32x(?P<n>[124])_LDSM_N", "ldmatrix.m8n8.R.b16", lambda m: int(m["n"]), "Dst", 16, "smem"),
    (r"SM75_U16x(?P<n>[248])_LDSM_T", "ldmatrix.m8n8.R.b16.trans", lambda m: int(m["n"]) // 2, "Dst", 16, "smem"),
    (r"SM90_U32x(?P<n>[124])_STSM_N", "stmatrix.m8n8.R.b16", lambda m: int(m["n"]), "Src", 16, "smem"),
    (r"SM90_U16x(?P<n>[248])_STSM_T", "stmatrix.m8n8.R.b16.trans", lambda m: int(m["n"]) // 2, "Src", 16, "smem"),
    (r"SM100_U8x(?P<n>8|16)_LDSM_T", "ldmatrix.m16n16.R.b8_b8x16.trans", lambda m: int(m["n"]) // 8, "Dst", 8,
     "smem"),
    (r"SM100_SU[46]_DU8x16_x(?P<n>[124])_LDSM_N", "ldmatrix.m8n16.R.b8x16", lambda m: int(m["n"]), "Dst", 8, "smem"),
    (r"SM100_U8x(?P<n>4|8|16)_STSM_T", "stmatrix.m16n8.R.b8.trans", lambda m: int(m["n"]) // 4, "Src", 8, "smem"),
    (r"SM100_TMEM_LOAD_(?P<s>32dp32b|16dp64b|16dp128b|16dp256b|16dp32b)(?P<n>\d+)x", "tcgen05.ld.{s}.R.b32",
     lambda m: int(m["n"]), "Dst", 32, "tmem"),
    (r"SM100_TMEM_STORE_(?P<s>32dp32b|16dp64b|16dp128b|16dp256b|16dp32b)(?P<n>\d+)x", "tcgen05.st.{s}.R.b32",
     lambda m: int(m["n"]), "Src", 32, "tmem"),
]
_TMEM_SHAPE = {"32dp32b": "32x32b", "16dp64b": "16x64b", "16dp128b": "16x128b", "16dp256b": "16x256b",
               "16dp32b": "16x32bx2"}
_UNMATCHED = [
    (r"SM100_TMEM_(LOAD|STORE)_.*_16b$", "Tensor Memory copy with .pack::16b/.unpack::16b: not in the catalog"),
    (r"SM100_UTCCP_.*_2cta$", "tcgen05.cp of a CTA pair (cta_group::2): the catalog does not state it"),
    (r"SM75_U32x1_MOVM_T", ""),
    (r"SM50_Shuffle_", "warp shuffle (shfl.sync): no tensor-core layout in the catalog"),
    (r"SM80_CP_ASYNC_|SM100_(LOAD|STORE)_256bit|UniversalCopy|AutoVectorizing",
     "a plain load or store: no tensor-core layout in the catalog"),
]


def copy_layouts(req: Request, p: Printed, layouts: list[Layout]) -> list[Evaluated]:
    """One copy trait as evaluated layouts paired with their spec (or why not)."""
    text = f"Copy_Traits<{req.name}>"
    for pattern, reason in _UNMATCHED:
        if re.match(pattern, req.name) and reason:
            return [Evaluated(req.name, "", req.header, req.line, None, unmatched=reason)]
    if req.name == "SM75_U32x1_MOVM_T":
        return _movmatrix(req, p, layouts)
    if req.name in _UTCCP:
        return [_utccp(req, p, layouts)]
    for pattern, spec_id, num, side, w, memory in _COPY:
        m = re.fullmatch(pattern, req.name)
        if not m:
            continue
        sid = spec_id.format(s=_TMEM_SHAPE.get(m.groupdict().get("s") or "", ""))
        spec = in_use_of({x.id: x for x in layouts}, sid)   # the reviewed correction first
        params = (("NUM", num(m)),)
        if spec is None:
            return [Evaluated(req.name, "R", req.header, req.line, None, params, unmatched=f"no spec {sid}")]
        if not spec.is_family or num(m) not in dict((q.name, q.values) for q in spec.domain.params).get("NUM", ()):
            return [Evaluated(req.name, "R", req.header, req.line, spec, params,
                              unmatched=f"{sid} has no member NUM={num(m)}")]
        try:
            reg_layout = p.layout(f"{side}Layout")
            reg = _register_bits(reg_layout)
            other = "Src" if side == "Dst" else "Dst"
            cells = _tmem_cells(reg, p.layout("ValID"), w) if memory == "tmem" else \
                _smem_cells(reg, p.layout(f"{other}Layout"), w)
            entries, why = _entries(reg, cells, w, p.layout("ThrID"))
        except (NotationError, KeyError) as e:
            why, entries = (e.message if isinstance(e, NotationError) else f"no {e.args[0]}"), ()
        shown = f"{text}::{side}Layout = {p.raw.get(side + 'Layout', ('?', 0))[0]}"
        return [Evaluated(req.name, "R", req.header, req.line, spec, params, entries, shown, error=why)]
    return [Evaluated(req.name, "", req.header, req.line, None, unmatched="no spec for this copy atom")]


# CuTe's tcgen05.cp atoms (cta_group::1): the spec, (rows, bits a row, copies), and the ValID index of bit ``b`` of
# source row ``r`` in copy ``c`` (CuTe's modes: [core_matrix_strided, core_matrix_leading, broadcast / repeat];
# .4x256b's copy bits enter its (128, 256) ValID through SrcLayout (4,256):(32,128); .64x128b.warpx2::01_23's source
# row r is row r % 32 of repeat r / 32, SrcLayout (32,128,2,2):(1,32,4096,0))
_UTCCP: dict[str, tuple[str, tuple[int, int, int], Any]] = {
    "SM100_UTCCP_128dp256bit_1cta": ("tcgen05.cp.128x256b", (128, 256, 1), lambda r, b, c: r + 128 * b),
    "SM100_UTCCP_128dp128bit_1cta": ("tcgen05.cp.128x128b", (128, 128, 1), lambda r, b, c: r + 128 * b),
    "SM100_UTCCP_4dp256bit_1cta": ("tcgen05.cp.4x256b", (4, 256, 1), lambda r, b, c: 32 * r + 128 * b),
    "SM100_UTCCP_4x32dp128bit_1cta": ("tcgen05.cp.32x128b.warpx4", (32, 128, 4),
                                      lambda r, b, c: r + 32 * b + 4096 * c),
    "SM100_UTCCP_2x64dp128bitlw0213_1cta": ("tcgen05.cp.64x128b.warpx2.02_13", (64, 128, 2),
                                            lambda r, b, c: r + 64 * b + 8192 * c),
    "SM100_UTCCP_2x64dp128bitlw0123_1cta": ("tcgen05.cp.64x128b.warpx2.01_23", (64, 128, 2),
                                            lambda r, b, c: r % 32 + 32 * b + 4096 * (r // 32) + 8192 * c),
}


def _utccp(req: Request, p: Printed, layouts: list) -> Evaluated:
    """A ``tcgen05.cp`` shape from ``ValID`` ((row, bit[, copy]) -> TMEM address in bits): byte ``src_byte`` of
    source row ``src_row``, copy ``copy``, is bits 8 src_byte .. 8 src_byte + 7 of that row, which must land in one
    byte of one 32-bit column: (tmem_lane, tmem_col, byte) = (addr / 2^21, addr % 2^21 / 32, addr % 32 / 8)."""
    sid, (nrows, nbits, ncopies), index = _UTCCP[req.name]
    spec = next((m for m in layouts if getattr(m, "id", "") == sid), None)
    shown = f"Copy_Traits<{req.name}>::ValID = {p.raw.get('ValID', ('?', 0))[0]}"
    if spec is None:
        return Evaluated(req.name, "", req.header, req.line, None, unmatched=f"no spec {sid}")
    try:
        valid = p.layout("ValID")
        if valid.size() != max(nrows, 128) * nbits * ncopies and valid.size() != nrows * nbits * ncopies:
            raise NotationError(f"ValID {valid} is not ({nrows} rows, {nbits} bits, {ncopies} copies)")
        rows = []
        for r in range(nrows):
            for sb in range(nbits // 8):
                for c in range(ncopies):
                    addr = [valid(index(r, 8 * sb + b, c)) for b in range(8)]
                    if addr != list(range(addr[0], addr[0] + 8)) or addr[0] % 8:
                        raise NotationError(f"row {r} byte {sb} copy {c}: its 8 bits are not one byte in Tensor Memory")
                    lane, col = addr[0] >> DP_BITS, addr[0] & ((1 << DP_BITS) - 1)
                    rows.append((r, sb, c, lane, col // 32, (col % 32) // 8) if ncopies > 1 else
                                (r, sb, lane, col // 32, (col % 32) // 8))
    except NotationError as e:
        return Evaluated(req.name, "", req.header, req.line, spec, text=shown, error=e.message)
    return Evaluated(req.name, "", req.header, req.line, spec, text=shown, map_rows=tuple(rows))


def _movmatrix(req: Request, p: Printed, layouts: list[Layout]) -> list[Evaluated]:
    """``movmatrix.trans``: the source fragment (A) and the destination fragment (D) of an 8x8 b16 matrix.
    CuTe's Src and Dst layouts are the same row fragment, 128 bits a row, each of its own matrix: A's of
    the source, D's of the result (the transposition is the instruction's, not the layout's), so a cell is
    (bit / 128, bit % 128 / 16) in both; the spec's D is the result's row fragment too."""
    out = []
    for part, side, sid in (("A", "Src", "movmatrix.m8n8.A.b16"), ("D", "Dst", "movmatrix.m8n8.D.b16")):
        spec = find(layouts, sid)
        shown = f"Copy_Traits<{req.name}>::{side}Layout = {p.raw.get(side + 'Layout', ('?', 0))[0]}"
        try:
            reg = _register_bits(p.layout(f"{side}Layout"))
            cells = (reg // 128, (reg % 128) // 16, reg % 16)
            entries, why = _entries(reg, cells, 16, p.layout("ThrID"))
        except (NotationError, KeyError) as e:
            entries, why = (), (e.message if isinstance(e, NotationError) else f"no {e.args[0]}")
        out.append(Evaluated(req.name, part, req.header, req.line, spec, (), entries, shown, error=why,
                             unmatched="" if spec is not None else f"no spec {sid}"))
    return out
