"""The order between CTAs: a cluster's vector clocks (``ClusterSync``), released and acquired at ``barrier.cluster``
and mbarriers, and the race a read of another CTA's unordered write is; and a grid's CTAs, unordered, whose writes
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
                  a: np.ndarray) -> None:
    """A race: bytes ``idx`` [k, n] of ``owner``'s shared memory that ``reader`` reads, last written by a third CTA
    (or by ``owner``, read by another) with no release and acquire between the write and the read."""
    sm = owner.smem
    wc = sm.w_cta[idx]
    seen = cluster_sync(reader).seen
    ranks = sorted(owner.cluster.ctas) if owner.cluster is not None else [0]
    known = np.full(max(ranks) + 1, -1, np.int64)
    for r in ranks:
        known[r] = seen.get(r, -1)
    other = (wc >= 0) & (wc != reader.rank)
    late = other & (sm.w_clock[idx] > known[np.clip(wc, 0, len(known) - 1)])
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


__all__ = ["ClusterSync", "cluster_acquire", "cluster_race", "cluster_release", "cluster_sync", "global_race",
           "merge_release"]
