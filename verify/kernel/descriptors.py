"""The shared-memory addresses the descriptor model and TMA give: each element's byte (or bit) address that a
``wgmma``/``tcgen05`` descriptor value reads (``verify.layout.descriptor``), a TMA box's swizzled addresses
(``verify.layout.shared.tma_layout``), a descriptor's fields in words, and the tcgen05.mma instruction descriptor
decoded; a numpy face and a one-point face, as ``fragments`` offers.
"""
from __future__ import annotations

import functools

import numpy as np


class BadDescriptor(ValueError):
    """A shared-memory descriptor the descriptor model cannot read (a reserved bit set, a swizzle code the
    instruction lacks, a tile its canonical layout cannot hold): the words say which."""


@functools.lru_cache(maxsize=4096)
def descriptor_addresses(instr: str, value: int, major: str, type_bits: int, rows: int, cols: int,
                         face: str = "vector") -> np.ndarray:
    """The shared-memory byte address of each element ``(row, col)`` (``row`` the M or N index, ``col`` the K index
    inside one instruction's K) that ``instr`` (``wgmma`` or ``tcgen05``) reads through the 64-bit descriptor
    ``value`` for a ``major``-major operand: this project's descriptor model (``verify.layout.descriptor``: the
    canonical layout of the descriptor's swizzle mode placed at its start address with its LBO, SBO and base
    offset, the swizzle on the address bits), by ``face``.  ``int64[rows, cols]``."""
    out = _descriptor_offsets(instr, value, major, type_bits, rows, cols, face) * type_bits // 8
    out.setflags(write=False)
    return out


def _descriptor_offsets(instr: str, value: int, major: str, type_bits: int, rows: int, cols: int,
                        face: str = "vector") -> np.ndarray:
    """The descriptor model's offset of each element, in elements (``type_bits`` bits each)."""
    from ..layout import descriptor as dm
    try:
        d = dm.decode(instr, value)
        lay = dm.reader(d, major, type_bits, rows, cols, cols)
    except ValueError as e:
        raise BadDescriptor(str(e)) from None
    fm = lay.map
    if face == "vector":
        v = fm.evaluate({"row": np.arange(rows, dtype=np.int64)[:, None], "col": np.arange(cols, dtype=np.int64)[None, :]})
        if not np.all(v.ok):
            raise BadDescriptor(f"descriptor {value:#018x} leaves some elements of the {rows} x {cols} tile unread")
        off = np.ascontiguousarray(np.broadcast_to(v.out["offset"], (rows, cols))).astype(np.int64)
    else:
        off = np.zeros((rows, cols), np.int64)
        for r in range(rows):
            for c in range(cols):
                cell = fm.at({"row": r, "col": c})
                if cell is None:
                    raise BadDescriptor(f"descriptor {value:#018x} leaves element ({r}, {c}) unread")
                off[r, c] = cell["offset"]
    return off


@functools.lru_cache(maxsize=1024)
def descriptor_bit_addresses(instr: str, value: int, major: str, type_bits: int, rows: int, cols: int,
                             face: str = "vector") -> np.ndarray:
    """As ``descriptor_addresses``, in bits: for elements narrower than a byte (``e2m1``) the bit address of each
    element, its byte ``// 8`` and its place in the byte ``% 8 // type_bits`` (the descriptor model's canonical
    layouts count sub-byte elements in bit addresses, the lower element in the lower bits)."""
    out = _descriptor_offsets(instr, value, major, type_bits, rows, cols, face) * type_bits
    out.setflags(write=False)
    return out


def descriptor_words(instr: str, value: int) -> str:
    """A descriptor's fields in words (``start 0x820, LBO 0 B ..., swizzle 128B``)."""
    from ..layout import descriptor as dm
    try:
        return dm.decode(instr, value).describe()
    except ValueError as e:
        return str(e)


@functools.lru_cache(maxsize=1024)
def tma_box_addresses(rows: int, cols: int, element_bits: int, mode: str, dst: int, face: str = "vector"
                      ) -> np.ndarray:
    """The shared-memory byte address of each element ``(row, col)`` of a TMA box of ``rows`` x ``cols`` (``cols``
    the inner, contiguous dimension; a box of more dimensions has its outer ones as ``rows``) written at ``dst``
    with swizzle mode ``mode`` (``verify.layout.shared.tma_layout``: the swizzle on the address bits), by
    ``face``.  ``int64[rows, cols]``."""
    from ..layout.shared import tma_layout
    try:
        lay = tma_layout(rows, cols, element_bits, mode, base=dst)
    except ValueError as e:
        raise BadDescriptor(str(e)) from None
    fm = lay.map
    if face == "vector":
        v = fm.evaluate({"row": np.arange(rows, dtype=np.int64)[:, None], "col": np.arange(cols, dtype=np.int64)[None, :]})
        off = np.ascontiguousarray(np.broadcast_to(v.out["offset"], (rows, cols))).astype(np.int64)
        ok = bool(np.all(v.ok))
    else:
        off = np.zeros((rows, cols), np.int64)
        ok = True
        for r in range(rows):
            for c in range(cols):
                cell = fm.at({"row": r, "col": c})
                ok = ok and cell is not None
                off[r, c] = cell["offset"] if cell is not None else 0
    if not ok:
        raise BadDescriptor(f"the TMA box {rows} x {cols} ({mode}) leaves some elements without an address")
    out = dst + off * element_bits // 8
    out.setflags(write=False)
    return out


def instruction_descriptor(kind: str, value: int):
    """A tcgen05.mma instruction descriptor decoded (``verify.layout.descriptor.decode_instruction``; a
    ``BadDescriptor`` for a value it refuses)."""
    from ..layout import descriptor as dm
    try:
        return dm.decode_instruction(kind, value)
    except ValueError as e:
        raise BadDescriptor(str(e)) from None


def descriptor_rows(instr: str, value: int, major: str, type_bits: int, rows: int, cols: int, face: str,
                    rows_at: np.ndarray | None) -> np.ndarray:
    """``descriptor_addresses`` of the rows ``rows_at`` only (all ``rows`` when None): a zero-column mask's kept
    columns moved by its shift, where a row past the tile's ``rows`` is where the descriptor model's canonical layout
    of as many whole tiles as reach it puts it.  ``int64[len(rows_at), cols]``."""
    if rows_at is None:
        return descriptor_addresses(instr, value, major, type_bits, rows, cols, face)
    ext = rows * max(1, -(-(int(rows_at.max()) + 1) // rows)) if len(rows_at) else rows
    return descriptor_addresses(instr, value, major, type_bits, ext, cols, face)[rows_at]


def zero_column_mask(value: int, m: int, n: int) -> tuple[np.ndarray, int]:
    """A ``tcgen05.mma.ws``'s zero-column mask descriptor ``value`` for an M x N MMA (``verify.layout.zero_column``,
    the examples' reading of the spans): (``bool[N]``, True where MMA column n is multiplied as zeros; the column
    shift: MMA column n reads column n + shift of the B the B descriptor describes).  ``BadDescriptor`` naming the
    field for reserved bits that are set, a shift above the page's maximum for M, an M with no mask."""
    from ..layout import zero_column as zc
    try:
        d = zc.decode(value)
        bits = zc.mask(d, m, n)
    except ValueError as e:
        raise BadDescriptor(str(e)) from None
    return np.array(bits, bool), d.shift


__all__ = ["BadDescriptor", "descriptor_addresses", "descriptor_bit_addresses", "descriptor_rows", "descriptor_words",
           "instruction_descriptor", "tma_box_addresses", "zero_column_mask"]
