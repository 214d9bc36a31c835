"""Tensor Memory: one CTA's 128 lanes x 512 columns of 32-bit cells, what each byte holds (bits and a tag, as
``verify.kernel.bytes``), which columns ``tcgen05.alloc`` holds, and what the asynchronous tensor-core pipeline has
issued but not completed.

A ``tcgen05.mma`` writes its result when it is issued into the *issued* view (``ntags``/``nbits``: what a later MMA
of the same pipeline reads, as MMAs complete in order), and into the cells ``tcgen05.ld`` reads only when its
``tcgen05.commit``'s mbarrier phase is waited for (``land``); a ``tcgen05.ld`` of a cell still pending is a finding.
An address is 32 bits: the lane in bits 31-16, the column in bits 15-0.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .bytes import UNDEF

if TYPE_CHECKING:
    from .machine import CTA

LANES = 128
COLS = 512
CELL = 4  # bytes of a cell
TMEM_WINDOW = 0x7D00_0000_0000  # the chain's addresses of Tensor Memory cells: window + 4 x (lane x COLS + column)


def split(taddr: int) -> tuple[int, int]:
    """(lane, column) of a Tensor Memory address."""
    return (taddr >> 16) & 0xFFFF, taddr & 0xFFFF


@dataclass
class Snapshot:
    """What one MMA wrote: cells (flat ``lane * COLS + col``) and their bytes; lands at its commit's wait."""

    instr: int
    cells: np.ndarray
    tags: np.ndarray  # [n, CELL]
    bits: np.ndarray
    held: list[np.ndarray] = field(default_factory=list)  # shared-memory bytes it reads until it completes
    tmem: "TensorMemory | None" = None  # another CTA's Tensor Memory (a CTA pair's MMA), else the commit's
    cta: CTA | None = None  # the CTA whose shared memory ``held`` is in (None: the commit's)


@dataclass
class Commit:
    """``tcgen05.commit``: the MMAs (and copies) a thread issued before it; their results land, and the commit
    arrives once on its mbarrier, when a wait on that mbarrier needs it."""

    instr: int
    thread: int
    snapshots: list[Snapshot]
    tmem: "TensorMemory"
    landed: bool = False

    def land(self) -> None:
        """Its MMAs' results land (once: a multicast commit arrives on several CTAs' mbarriers)."""
        if self.landed:
            return
        self.landed = True
        for s in self.snapshots:
            (s.tmem or self.tmem).land(s)


@dataclass
class TensorMemory:
    tags: np.ndarray = field(default_factory=lambda: np.full((LANES * COLS, CELL), UNDEF, np.int64))
    bits: np.ndarray = field(default_factory=lambda: np.zeros((LANES * COLS, CELL), np.uint8))
    ntags: np.ndarray = field(default_factory=lambda: np.full((LANES * COLS, CELL), UNDEF, np.int64))
    nbits: np.ndarray = field(default_factory=lambda: np.zeros((LANES * COLS, CELL), np.uint8))
    pending: np.ndarray = field(default_factory=lambda: np.zeros(LANES * COLS, np.int32))
    pending_instr: np.ndarray = field(default_factory=lambda: np.full(LANES * COLS, -1, np.int64))
    stored: np.ndarray = field(default_factory=lambda: np.full(LANES * COLS, -1, np.int64))  # tcgen05.st not waited: thread
    stored_instr: np.ndarray = field(default_factory=lambda: np.full(LANES * COLS, -1, np.int64))
    allocated: np.ndarray = field(default_factory=lambda: np.zeros(COLS, bool))
    blocks: dict[int, int] = field(default_factory=dict)  # first column -> columns, of each allocation
    relinquished: bool = False
    uncommitted: dict[int, list[Snapshot]] = field(default_factory=dict)  # thread -> MMAs since its last commit

    def allocate(self, ncols: int) -> int | None:
        """The first column of a free, aligned block of ``ncols`` columns (None: none is free)."""
        for start in range(0, COLS, ncols):
            if not self.allocated[start:start + ncols].any():
                self.allocated[start:start + ncols] = True
                self.blocks[start] = ncols
                return start
        return None

    def free(self, start: int, ncols: int) -> bool:
        if self.blocks.get(start) != ncols:
            return False
        del self.blocks[start]
        self.allocated[start:start + ncols] = False
        return True

    def issue(self, instr: int, cells: np.ndarray, tags: np.ndarray, bits: np.ndarray, thread: int,
              held: list[np.ndarray] | None = None) -> None:
        """An asynchronous write (an MMA's D) of ``cells``: in the issued view now, landed at its commit's wait."""
        self.ntags[cells] = tags
        self.nbits[cells] = bits
        np.add.at(self.pending, cells, 1)
        self.pending_instr[cells] = instr
        self.uncommitted.setdefault(thread, []).append(Snapshot(instr, cells, tags, bits, list(held or ())))

    def land(self, s: Snapshot) -> None:
        self.tags[s.cells] = s.tags
        self.bits[s.cells] = s.bits
        np.subtract.at(self.pending, s.cells, 1)

    def write_now(self, cells: np.ndarray, tags: np.ndarray, bits: np.ndarray) -> None:
        """A write both views see at once (``tcgen05.st``, ``tcgen05.cp``)."""
        self.tags[cells] = tags
        self.bits[cells] = bits
        self.ntags[cells] = tags
        self.nbits[cells] = bits



COLLECTOR_OPS = ("fill", "use", "lastuse", "discard")


def collector_b(cta: CTA, buffer: int, op: str, B: np.ndarray, line: int, resolve: Any) -> tuple[np.ndarray, str]:
    """B of a ``tcgen05.mma.ws`` with ``.collector::b<buffer>::<op>`` (9.7.16.10.9.3): ``fill`` keeps the B read from
    memory in collector buffer ``buffer`` (of the CTA), ``use`` and ``lastuse`` may read it from there (``lastuse``
    then frees it), ``discard`` frees it.  The B that ``use``/``lastuse`` give is the buffer's, and it must be the B
    the descriptor reads now (the hardware may read either): (B, '') or (B, why not) when there is no valid fill of
    that shape, or the two differ (``resolve``: the domain's, to compare a value and the moves of it)."""
    bufs: dict[int, tuple[np.ndarray, int]] = cta.state.setdefault("collector", {})
    held = bufs.get(buffer)
    if op == "fill":
        bufs[buffer] = (B.copy(), line)
        return B, ""
    if op == "discard":
        bufs.pop(buffer, None)
        return B, ""
    if held is None:
        return B, f"collector buffer b{buffer} holds no B (no .collector::b{buffer}::fill before it, or it was freed)"
    kept, at = held
    if op == "lastuse":
        del bufs[buffer]
    if kept.shape != B.shape:
        return B, f"collector buffer b{buffer} holds a {kept.shape[1]} x {kept.shape[2]} B (filled at line {at}), " \
                  f"the MMA's is {B.shape[1]} x {B.shape[2]}"
    same = resolve(kept) == resolve(B) if resolve is not None else kept == B
    if not np.all(same):
        k, n = (int(x) for x in np.argwhere(~same)[0][1:])
        return B, f"collector buffer b{buffer} (filled at line {at}) holds another B than the descriptor reads " \
                  f"now (element ({k}, {n}) differs): the MMA may read either"
    return kept, ""

__all__ = ["CELL", "COLLECTOR_OPS", "COLS", "Commit", "LANES", "Snapshot", "TMEM_WINDOW", "TensorMemory", "collector_b", "split"]
