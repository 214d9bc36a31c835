"""The ``tcgen05.cp`` probes of the ``tmem`` kind: one probe per copy shape of the catalog (``.32x128b.warpx4``,
``.128x256b``, ``.128x128b``, ``.4x256b``, ``.64x128b.warpx2::02_13`` and ``::01_23``).

Each probe (built by ``tmem_kind``, which owns the probe record; ``tmem_readback`` the decoding dispatch and the SIMULATED device)
places a coded block in shared memory, runs ``tcgen05.cp.cta_group::1.<shape>[.<multicast>] [base], sdesc`` into
a sentinel-filled allocation of 32 columns, and reads every lane (0..127) of columns 0..7 back with
``tcgen05.ld.32x32b`` (a shape writes 4 or 8 columns; every cell it must not write has to keep the sentinel).
Twice: every byte of the block codes its offset ``o`` (experiment 0: ``o & 0xFF``, experiment 1: ``(o >> 8) +
1``), so each Tensor Memory byte decodes to the offset of the source byte it holds (``0xFF`` in experiment 1:
nothing).  The prediction is the copy layout (``src_row``, ``src_byte``[, ``copy``] -> lane, column, byte)
composed with its source layout (offset -> ``src_row``, ``src_byte``):

* ``.32x128b.warpx4``: the catalog's ``tcgen05.cp.source.32x128b`` (32 rows 16 bytes apart), probed with it;
* every other shape: the descriptor model the kernel executor reads ``s-desc`` with (``verify/kernel``'s
  K-major 8-bit reader, ``tmem_kind._kmajor``'s tile): 8-row x 16-byte core matrices, row r's bytes
  ``16 (r % 8)`` into its core matrix, a row's 16-byte chunks LBO = 128 bytes apart, 8-row groups SBO = 128 x
  chunks apart (a ``.4x256b`` copy reads rows 0..3 of one 8-row group).  The descriptor's fields are
  ``tmem_program.desc``'s (CUTLASS ``UMMA::SmemDescriptor``, no swizzle).  A wrong model shows as misplaced or
  foreign offsets: a contradiction, never a silent pass.

``.64x128b.warpx2::01_23`` also carries the other reading of it (``meta["alt"]``, as ``tmem_kind.PAIRED``
probes do): JAX Mosaic GPU's layout object for ``::01_23`` is, cell for cell, the spec's ``::02_13``
(``tests/test_references_mosaic_cp.py``), so the result says whether the device's cells are ``::02_13``'s
(Mosaic's reading) where they are not CuTe's (docs/references.md: the open question this probe settles).

This module is below ``tmem_kind`` (it imports none of the kind): the PTX text, the source block, the codes,
the prediction from the two layouts' cells, and the decoding and encoding of the read-back words.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..layout.named import evaluate_all

Key = tuple[int, int]

READ_COLS = 8                             # Tensor Memory columns read back (the widest shape writes 8)
ALLOC = 32                                # columns allocated (the minimum)
LBO = 128                                 # bytes between a row's 16-byte chunks (the descriptor model)
# The other reading of a copy layout, compared too: layout id -> (the layout whose cells it has, what it is).
OTHER_READING = {"tcgen05.cp.64x128b.warpx2.01_23": ("tcgen05.cp.64x128b.warpx2.02_13",
                                                     "JAX Mosaic GPU's reading of ::01_23, the spec's ::02_13")}


def ptx(layout_id: str) -> str:
    """The instruction a copy layout's (doc) id names: ``tcgen05.cp.64x128b.warpx2.01_23`` ->
    ``tcgen05.cp.cta_group::1.64x128b.warpx2::01_23``."""
    parts = layout_id.split(".")[2:]
    if not parts:
        raise ValueError(f"{layout_id}: no copy shape in the id")
    text = "tcgen05.cp.cta_group::1." + parts[0]
    if len(parts) > 1:
        text += "." + parts[1]
    if len(parts) > 2:
        text += "::" + parts[2]
    return text


def shape_of(copy: Any) -> tuple[int, int]:
    """(source rows, bytes per row) of a copy layout (its ``src_row`` and ``src_byte`` inputs)."""
    sizes = {d.name: int(d.at()) for d in copy.inputs}
    return sizes["src_row"], sizes["src_byte"]


def block(rows: int, row_bytes: int) -> tuple[int, int, Callable[[int, int], int | None]]:
    """(span in bytes, SBO, (row, byte) -> offset) of the descriptor model's block of ``rows`` x ``row_bytes``."""
    chunks = row_bytes // 16
    sbo = LBO * chunks
    span = -(-rows // 8) * sbo

    def offset(r: int, b: int) -> int:
        return (r // 8) * sbo + (b // 16) * LBO + (r % 8) * 16 + b % 16
    return span, sbo, offset


def looked_up(back: Mapping[tuple[int, int], int]) -> Callable[[int, int], int | None]:
    """(row, byte) -> offset through a source layout's table (``source_offsets``; None: not in the block)."""
    def offset(r: int, b: int) -> int | None:
        return back.get((r, b))
    return offset


def source_offsets(src: Any) -> tuple[int, dict[tuple[int, int], int]]:
    """(span, (row, byte) -> offset) of a source layout (offset -> ``src_row``, ``src_byte``)."""
    v = evaluate_all(src.map)
    shape = np.shape(v.ok)
    arr = {k: np.broadcast_to(a, shape) for k, a in v.out.items()}
    back = {(int(arr["src_row"][o]), int(arr["src_byte"][o])): int(o) for (o,) in np.ndindex(shape) if v.ok[o]}
    return int(shape[0]), back


def words(span: int) -> list[int]:
    """The shared-memory words of both experiments: byte o = ``o & 0xFF``, then ``(o >> 8) + 1``."""
    out: list[int] = []
    for e in range(2):
        bs = [(o & 0xFF) if e == 0 else ((o >> 8) + 1) for o in range(span)]
        out += [bs[i] | bs[i + 1] << 8 | bs[i + 2] << 16 | bs[i + 3] << 24 for i in range(0, span, 4)]
    return out


def cells(inverse: Mapping[Key, Any], offset: Callable[[int, int], int | None]) -> dict[Key, int | None]:
    """(lane, byte column) -> the source offset the copy puts there: ``inverse`` (the copy layout's inverse:
    key -> (src_row, src_byte[, copy]) or None) composed with ``offset``."""
    return {key: (None if pt is None else offset(pt[0], pt[1])) for key, pt in inverse.items()}


def decode(w: np.ndarray, span: int) -> dict[Key, Any]:
    """Key -> the offset a Tensor Memory byte holds (None: the sentinel; a string: no offset's code)."""
    top = (span - 1) >> 8
    res: dict[Key, Any] = {}
    for lane in range(w.shape[1]):
        for c in range(w.shape[2]):
            for j in range(4):
                lo, hi = (int(w[e, lane, c]) >> (8 * j) & 0xFF for e in range(2))
                res[(lane, 4 * c + j)] = (None if hi == 0xFF else ((hi - 1) << 8 | lo) if 1 <= hi <= top + 1
                                          else f"bytes {lo:#04x}/{hi:#04x}")
    return res


def encode(pred: Mapping[Key, Any], w: np.ndarray) -> None:
    """The words a device holding ``pred``'s offsets reads back (``w``: sentinel-filled, written in place)."""
    for (lane, bc), off in pred.items():
        c, j = divmod(bc, 4)
        for e in range(2):
            byte = 0xFF if off is None else (off & 0xFF if e == 0 else (off >> 8) + 1)
            w[e, lane, c] = (int(w[e, lane, c]) & ~(0xFF << (8 * j)) & 0xFFFFFFFF) | (byte << (8 * j))


def other_reading(layout_id: str, peers: Sequence[Any]) -> tuple[str, str, Any] | tuple[str, str, None]:
    """(the other layout's id, what it is, the layout or None where it is not loaded) for a copy layout (its doc
    id) that ``OTHER_READING`` names; ("", "", None) for the others."""
    if layout_id not in OTHER_READING:
        return "", "", None
    other, what = OTHER_READING[layout_id]
    return other, what, next((x for x in peers if x.id == other), None)


__all__ = ["ALLOC", "LBO", "OTHER_READING", "READ_COLS", "block", "cells", "decode", "encode",
           "looked_up", "other_reading", "ptx", "shape_of", "source_offsets", "words"]
