"""``tcgen05.ld`` with ``.pack::16b`` and ``tcgen05.st`` with ``.unpack::16b`` (PTX ISA 9.0, 9.7.16.8.2 and the
ld/st pages 9.7.16.8.3-4): the register layout is the catalog's ``tcgen05.<ld|st>.<shape>`` fragment, as without the
qualifier, but each 32-bit register holds two 16-bit elements of two adjacent Tensor Memory columns.  Register
element ``(lane, i)`` that the fragment puts in column ``c`` relative to the address is, packed, the lower 16 bits of
column ``2c`` (the register's lower half) and of column ``2c + 1`` (its upper half): the register's bits counted as
16-bit halves are the columns in order, as the fragment counts 32-bit columns (CuTe's ``SM100_TMEM_LOAD_*_16b``
value layouts, ``((16, 2), ...) : ((1, 32), ...)`` bits, say the same); a 16-bit element of Tensor Memory sits in the
lower half of its 32-bit word (the catalog's ``tcgen05.packing.D.b16.unpacked``).  ``.16x32bx2``'s second access is
then ``2 x .num`` columns on (its ``immHalfSplitoff``).

``.unpack::16b`` writes each half into the lower 16 bits of its column; the doc does not say what the upper 16 bits
of those words hold, so they are written undefined (a later read of them as data is a finding, never a guess).
"""
from __future__ import annotations

import numpy as np

from ..ptx.syntax import Instr
from .bytes import U64, UNDEF
from .machine import Program
from .tmem import CELL, TMEM_WINDOW, TensorMemory

HALF = 2  # bytes of a 16-bit half of a register, and of the low half of a Tensor Memory word the half sits in


def packing(prog: Program, ins: Instr, verb: str) -> bool:
    """Whether ``ins`` (``tcgen05.ld``/``st``) packs (``.pack::16b`` on ld, ``.unpack::16b`` on st); any other
    packing qualifier is an error at its line."""
    q = [p for p in ins.parts if p.startswith("pack::") or p.startswith("unpack::")]
    if not q:
        return False
    want = "pack::16b" if verb == "ld" else "unpack::16b"
    if q != [want]:
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}' (tcgen05.{verb} takes .{want}, not "
                              f".{'.'.join(q)})")
    return True


def columns(col: np.ndarray) -> np.ndarray:
    """The fragment's 32-bit columns ``[32, n]`` -> the Tensor Memory columns ``[32, n, 2]`` of each register's lower
    and upper 16-bit half."""
    return np.stack([2 * col, 2 * col + 1], axis=-1)


def byte_addresses(cells: np.ndarray) -> np.ndarray:
    """The chain's address of each byte ``[32, 4]`` of registers whose halves are in ``cells`` ``[32, 2]``."""
    base = TMEM_WINDOW + CELL * cells.astype(np.int64)
    return np.stack([base[:, 0], base[:, 0] + 1, base[:, 1], base[:, 1] + 1], axis=1).astype(U64)


def gather(t: TensorMemory, cells: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The tags ``[32, 4]`` and bytes ``[32, 4]`` of the registers a ``.pack::16b`` load makes of ``cells``
    ``[32, 2]``: the low 16 bits of the lower column, then of the upper one."""
    tags = np.concatenate([t.tags[cells[:, 0], :HALF], t.tags[cells[:, 1], :HALF]], axis=1)
    bits = np.concatenate([t.bits[cells[:, 0], :HALF], t.bits[cells[:, 1], :HALF]], axis=1)
    return tags, bits


def scatter(t: TensorMemory, cells: np.ndarray, tags: np.ndarray, bits: np.ndarray) -> None:
    """A ``.unpack::16b`` store of registers (tags and bytes ``[32, 4]``) into ``cells`` ``[32, 2]``: each half in
    the low 16 bits of its column, the upper 16 bits undefined."""
    n = len(cells)
    new_t = np.full((n, 2, CELL), UNDEF, np.int64)
    new_b = np.zeros((n, 2, CELL), np.uint8)
    for h in range(2):
        new_t[:, h, :HALF] = tags[:, h * HALF:(h + 1) * HALF]
        new_b[:, h, :HALF] = bits[:, h * HALF:(h + 1) * HALF]
    t.write_now(cells.reshape(-1), new_t.reshape(-1, CELL), new_b.reshape(-1, CELL))


__all__ = ["HALF", "byte_addresses", "columns", "gather", "packing", "scatter"]
