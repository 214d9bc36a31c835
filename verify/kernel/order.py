"""A cluster's memory order: each CTA's vector clock (``ClusterSync``), released and acquired at ``barrier.cluster``
and mbarriers, and the race a read of another CTA's unordered write is.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .machine import CTA


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


__all__ = ["ClusterSync", "cluster_acquire", "cluster_race", "cluster_release", "cluster_sync", "merge_release"]
