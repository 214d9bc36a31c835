"""The order between CTAs: a cluster's vector clocks (``ClusterSync``), released and acquired at ``barrier.cluster``
and mbarriers, and the races of two CTAs' unordered accesses of one CTA's shared memory (a read of another CTA's
write, ``cluster_race``; a write of bytes another CTA read or wrote, ``cluster_write_race``); and a grid's CTAs, unordered, whose writes
of one output byte race unless both are atomic updates (``global_race``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..ptx.syntax import Instr
from .machine import CTA
from .memory import writer_parts


@dataclass
class ClusterSync:
    """One CTA's view of the cluster's order (vector clocks): ``clock`` counts its releases (``barrier.cluster.arrive``,
    an ``mbarrier`` arrive), ``seen[r]`` is the last release of CTA rank ``r`` it has acquired (through
    ``barrier.cluster.wait``, an ``mbarrier`` wait that completed), ``arrivals[k]`` what its ``k``-th cluster arrival
    released.  A write by CTA ``r`` at clock ``c`` is ordered before another CTA's read when ``seen[r] >= c``."""

    clock: int = 0
    seen: dict[int, int] = field(default_factory=dict)
    arrivals: list[dict[int, int]] = field(default_factory=list)


def cluster_sync(cta: CTA) -> ClusterSync:
    s = cta.state.get("cluster_sync")
    if s is None:
        s = cta.state["cluster_sync"] = ClusterSync()
    return s


def cluster_release(cta: CTA) -> dict[int, int]:
    """What a release by ``cta`` publishes: what it has seen, and its own writes so far."""
    s = cluster_sync(cta)
    out = dict(s.seen)
    out[cta.rank] = s.clock
    s.clock += 1
    return out


def cluster_acquire(cta: CTA, released: dict[int, int]) -> None:
    s = cluster_sync(cta)
    for r, c in released.items():
        if c > s.seen.get(r, -1):
            s.seen[r] = c


def merge_release(into: dict[int, int], released: dict[int, int]) -> None:
    for r, c in released.items():
        if c > into.get(r, -1):
            into[r] = c


def cluster_race(owner: CTA, reader: CTA, step: int, idx: np.ndarray, ok: np.ndarray, who: np.ndarray,
                  a: np.ndarray, update: bool = False) -> None:
    """A race: bytes ``idx`` [k, n] of ``owner``'s shared memory that ``reader`` reads, last written by a third CTA
    (or by ``owner``, read by another) with no release and acquire between the write and the read.  ``update``: the
    read of an atomic update, which another CTA's atomic update of the bytes does not race."""
    sm = owner.smem
    wc = sm.w_cta[idx]
    known = _known(owner, cluster_sync(reader).seen)
    other = (wc >= 0) & (wc != reader.rank)
    late = other & (sm.w_clock[idx] > known[np.clip(wc, 0, len(known) - 1)])
    if update:
        late &= ~sm.c_atomic[idx]
    bad = late.any(axis=1) & ok
    if bad.any():
        k = int(np.argmax(bad))
        j = int(np.argmax(late[k]))
        wi = int(sm.writer[idx[k, j]]) & 0xFFFFFF
        of = "its own" if owner is reader else f"CTA rank {owner.rank}'s"
        reader.prog.events.add("race", step, reader.index, int(who[k]), int(a[k]), "shared",
                               f"CTA rank {reader.rank} reads shared 0x{int(a[k]):x} ({of} shared memory), which CTA "
                               f"rank {int(wc[k, j])} wrote at line {reader.prog.steps[wi].instr.line} with no "
                               "barrier.cluster (or mbarrier) between", int(bad.sum()))


def _known(owner: CTA, seen: dict[int, int]) -> np.ndarray:
    """``seen`` as an array by rank (-1: nothing acquired of that rank)."""
    ranks = sorted(owner.cluster.ctas) if owner.cluster is not None else [0]
    known = np.full(max(ranks) + 1, -1, np.int64)
    for r in ranks:
        known[r] = seen.get(r, -1)
    return known


def cluster_read(owner: CTA, reader: CTA, step: int, idx: np.ndarray) -> None:
    """Bytes ``idx`` of ``owner``'s shared memory read by ``reader`` (``owner`` itself, or another CTA of the cluster
    through a ``shared::cluster`` address) at the instruction ``step``: recorded with ``reader``'s release clock, for
    ``cluster_write_race``."""
    sm = owner.smem
    rec = sm.r_cluster.get(reader.rank)
    if rec is None:
        n = len(sm.tags)
        rec = sm.r_cluster[reader.rank] = (np.full(n, -1, np.int64), np.full(n, -1, np.int64))
    flat = idx.reshape(-1)
    rec[0][flat] = cluster_sync(reader).clock
    rec[1][flat] = step


def cluster_write_race(owner: CTA, writer: CTA, step: int, idx: np.ndarray, who: np.ndarray, a: np.ndarray,
                       atomic: bool = False) -> None:
    """A race: bytes ``idx`` [k, n] of ``owner``'s shared memory that ``writer`` writes (``atomic``: updates) at the
    instruction ``step`` (the threads ``who``, shared addresses ``a`` [k]), which another CTA of the cluster read
    (a write after a read) or wrote (two writes; two atomic updates are none) with no release and acquire between
    that access and this write.  The other order, a read after another CTA's write, is ``cluster_race``'s."""
    sm = owner.smem
    seen = cluster_sync(writer).seen
    of = "its own" if owner is writer else f"CTA rank {owner.rank}'s"
    opcode = writer.prog.steps[step].instr.opcode
    verb = "updates" if atomic else "writes"
    for rank, (clock, at) in sorted(sm.r_cluster.items()):
        if rank == writer.rank:
            continue
        late = clock[idx] > seen.get(rank, -1)
        bad = late.any(axis=1)
        if bad.any():
            k = int(np.argmax(bad))
            j = int(np.argmax(late[k]))
            writer.prog.events.add("race", step, writer.index, int(who[k]), int(a[k]), "shared",
                                   f"{opcode} of CTA rank {writer.rank} {verb} shared 0x{int(a[k]):x} ({of} shared "
                                   f"memory), which CTA rank {rank} read at line "
                                   f"{writer.prog.steps[int(at[idx[k, j]])].instr.line} with no barrier.cluster (or "
                                   "mbarrier) between: a write after a read (the read may find the new bytes)",
                                   int(bad.sum()))
            return
    wc = sm.w_cta[idx]
    known = _known(owner, seen)
    late = (wc >= 0) & (wc != writer.rank) & (sm.w_clock[idx] > known[np.clip(wc, 0, len(known) - 1)])
    if atomic:
        late &= ~sm.c_atomic[idx]
    bad = late.any(axis=1)
    if bad.any():
        k = int(np.argmax(bad))
        j = int(np.argmax(late[k]))
        wi = int(sm.writer[idx[k, j]]) & 0xFFFFFF
        writer.prog.events.add("race", step, writer.index, int(who[k]), int(a[k]), "shared",
                               f"{opcode} of CTA rank {writer.rank} {verb} shared 0x{int(a[k]):x} ({of} shared "
                               f"memory), which CTA rank {int(wc[k, j])} wrote at line "
                               f"{writer.prog.steps[wi].instr.line} with no barrier.cluster (or mbarrier) between: two "
                               "writes (the value left depends on their order)", int(bad.sum()))


def global_race(cta: CTA, ins: Instr, region: Any, idx: np.ndarray, a: np.ndarray, who: np.ndarray,
                atomic: bool) -> None:
    """A race: bytes ``idx`` [k, n] of an output ``region`` that ``cta`` writes (``atomic``: updates), last written
    by another CTA, one of the two a plain store.  A grid's CTAs are unordered (the executor follows no flag between
    them; a spin on one is refused), except a cluster's, which ``barrier.cluster`` may order: those are not judged
    here."""
    prev = region.writer[idx]
    pc = prev >> 40
    late = (prev >= 0) & (pc != cta.index)
    if cta.cluster is not None:
        late &= ~np.isin(pc, [c.index for c in cta.cluster.ctas.values()])
    if atomic:
        assert region.atomic is not None
        late &= ~region.atomic[idx]
    bad = late.any(axis=1)
    if not bad.any():
        return
    k = int(np.argmax(bad))
    j = int(np.argmax(late[k]))
    other, _, wi = writer_parts(int(prev[k, j]))
    prog = cta.prog
    was = "updated" if region.atomic is not None and region.atomic[idx[k, j]] else "wrote"
    gm = prog.gmem
    assert gm is not None
    assert cta.step is not None
    prog.events.add("race", cta.step.index, cta.index, int(who[k]), int(a[k]), "global",
                    f"{ins.opcode} {'updates' if atomic else 'writes'} {gm.describe(int(a[k]))}, which CTA {other} "
                    f"{was} at line {prog.steps[wi].instr.line}, with nothing ordering the two CTAs: a race (the "
                    "value left depends on their order; an update is lost)", int(bad.sum()))


__all__ = ["ClusterSync", "cluster_acquire", "cluster_race", "cluster_read", "cluster_release", "cluster_sync",
           "cluster_write_race", "global_race", "merge_release"]
