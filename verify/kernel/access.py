"""Reading and writing bytes in each state space: addresses, shared memory (its bounds, unwritten bytes, copies in
flight, races between warps and, through ``order``, between a cluster's CTAs), another CTA's shared memory through
``shared::cluster`` addresses, global regions and local memory.  The handlers of ``ops_mem`` and the
tensor-core modules read and write through these.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..ptx.syntax import Addr, Instr, Reg
from .bytes import U64, UNDEF
from .machine import CTA
from .memory import SHARED_WINDOW, writer_code
from .order import cluster_race, cluster_read, cluster_sync, cluster_write_race, global_race

SPACES = ("param", "global", "shared", "local", "const")


def space_of(ins: Instr) -> str:
    for p in ins.parts[1:]:
        s = p.split("::")[0]
        if s in SPACES:
            return s
    return "generic"


def vector_of(ins: Instr) -> int:
    for p in ins.parts[1:]:
        if p in ("v2", "v4", "v8"):
            return int(p[1:])
    return 1


def address(cta: CTA, o: Any, m: np.ndarray | None) -> np.ndarray:
    """``[base + offset]`` as exact 64-bit addresses, one per thread."""
    if not isinstance(o, Addr):
        raise cta.prog.error(o, "expected an address [reg + offset]")
    base = o.base
    if base is None:
        a: Any = np.uint64(0)
    elif isinstance(base, Reg):
        a, undef = cta.int_value(base, 64, False, m, "an address")
        if undef is not None:
            raise cta.prog.error(o, f"the address {base.name} is undefined (thread {int(np.argmax(undef))})")
    else:
        if base.name in cta.prog.shared_addr:
            a = np.uint64(cta.prog.shared_addr[base.name])
        else:
            raise cta.prog.error(o, f"{base.name} is not a variable the executor knows")
    return np.broadcast_to((np.asarray(a, U64) + np.uint64(o.offset % (1 << 64))), (cta.T,))


def rows_of(m: np.ndarray | None, T: int) -> np.ndarray:
    return np.arange(T) if m is None else np.flatnonzero(m)


# ----------------------------------------------------------------------------- reading and writing bytes


def _shared_bytes(cta: CTA, step: int, a: np.ndarray, n: int, who: np.ndarray, what: str,
                  reader: CTA | None = None, update: bool = False
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Bytes ``[a, a + n)`` of shared memory (``a`` int64[k]) read by ``what`` for the threads ``who`` [k]: (tags,
    bits, byte indices [k, n], inside the allocation [k]); findings for an access outside the allocation, a byte never
    written, and a copy still in flight.  ``reader``: the CTA whose threads read (``cta``, the memory's owner,
    unless another CTA of the cluster reads it through a ``shared::cluster`` address).  In a cluster the read is
    checked against other CTAs' writes and recorded for the write-after-read check, ``order``; ``update``: the read
    of an atomic update (not recorded, its write is checked; another CTA's update of the bytes is no race)."""
    sm = cta.smem
    prog = cta.prog
    by = cta if reader is None else reader
    where = "" if by is cta else f" of CTA rank {cta.rank}"
    out = (a < 0) | (a + n > sm.size)
    if out.any():
        k = int(np.argmax(out))
        prog.events.add("shared_out_of_bounds", step, by.index, int(who[k]), int(a[k]), "shared",
                        f"{what} reads shared 0x{int(a[k]):x}{where}, outside the {sm.size} bytes of shared memory",
                        int(out.sum()))
    idx = np.clip(a[:, None] + np.arange(n)[None, :], 0, max(sm.size - 1, 0))
    tags = sm.tags[idx].copy()
    bits = sm.bits[idx].copy()
    tags[out] = UNDEF
    ok = ~out
    never = ((tags == UNDEF) & (sm.pending[idx] == 0)).any(axis=1) & ok  # a copy in flight is said below
    if never.any():
        k = int(np.argmax(never))
        prog.events.add("unwritten_read", step, by.index, int(who[k]), int(a[k]), "shared",
                        f"{what} reads shared 0x{int(a[k]):x}{where}, which nothing wrote", int(never.sum()))
    pend = (sm.pending[idx] > 0).any(axis=1) & ok
    if pend.any():
        k = int(np.argmax(pend))
        j = int(np.argmax(sm.pending[idx[k]] > 0))
        src = int(sm.pending_instr[idx[k, j]])
        w = prog.steps[src].instr if src >= 0 else None
        wait = "no mbarrier wait that completes it" if w is not None and "bulk" in w.parts else \
            "no cp.async.wait_group"
        prog.events.add("read_in_flight", step, by.index, int(who[k]), int(a[k]), "shared",
                        f"{what} reads shared 0x{int(a[k]):x}{where} before the {short_copy(w)} at line {w.line if w else 0} "
                        f"that writes it has completed ({wait} between them)", int(pend.sum()))
    if by.cluster is not None:
        cluster_race(cta, by, step, idx, ok, who, a, update)
        if not update:
            cluster_read(cta, by, step, idx[ok])
    return tags, bits, idx, ok


def _step_index(cta: CTA) -> int:
    """The index of the instruction ``cta`` is running (the accesses below are made by one)."""
    assert cta.step is not None
    return cta.step.index


def read_shared(cta: CTA, ins: Instr, addr: np.ndarray, n: int, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bytes ``[addr, addr + n)`` of shared memory for the threads ``rows``: (tags[r, n], bits[r, n]); findings for
    an access outside the allocation, a byte never written, a copy in flight, a race with another warp."""
    sm = cta.smem
    prog = cta.prog
    a = addr[rows].astype(np.int64)
    tags, bits, idx, ok = _shared_bytes(cta, _step_index(cta), a, n, rows, ins.opcode)
    warp = cta.warp[rows][:, None]
    race = ((sm.w_epoch[idx] == sm.epoch) & (sm.w_warp[idx] != warp) & (sm.w_warp[idx] >= 0)).any(axis=1) & ok
    if race.any():
        k = int(np.argmax(race))
        j = int(np.argmax((sm.w_epoch[idx[k]] == sm.epoch) & (sm.w_warp[idx[k]] != warp[k, 0])))
        wi = int(sm.writer[idx[k, j]]) & 0xFFFFFF
        prog.events.add("race", _step_index(cta), cta.index, int(rows[k]), int(a[k]), "shared",
                        f"warp {int(warp[k, 0])} reads shared 0x{int(a[k]):x}, which warp {int(sm.w_warp[idx[k, j]])} "
                        f"wrote at line {prog.steps[wi].instr.line} with no bar.sync between", int(race.sum()))
    flat = idx[ok].reshape(-1)
    bitsw = (np.uint64(1) << cta.warp[rows][ok].astype(np.uint64))
    same = sm.r_epoch[flat] == sm.epoch
    sm.r_warps[flat] = np.where(same, sm.r_warps[flat], np.uint64(0)) | np.repeat(bitsw, n)
    sm.r_epoch[flat] = sm.epoch
    if prog.trace:
        tags = prog.domain.moved(cta, _step_index(cta), rows, tags, a.astype(np.uint64), "shared")
    return tags, bits


def read_shared_async(cta: CTA, ins: Instr, addr: np.ndarray, n: int, warps: np.ndarray, thread: int
                      ) -> tuple[np.ndarray, np.ndarray]:
    """Bytes ``[addr, addr + n)`` of shared memory for each address of ``addr`` (``int64[k]``), read by an
    asynchronous-proxy unit on behalf of ``warps`` (a warpgroup's ``wgmma``, a ``tcgen05.mma``, a TMA store):
    (tags[k, n], bits[k, n]).  The findings of ``read_shared`` (outside the allocation, never written, a copy in
    flight, written by another warp in this barrier epoch), and bytes the generic proxy wrote with no
    ``fence.proxy.async`` since.  ``thread`` names the reader in findings and in the chain's run."""
    sm = cta.smem
    prog = cta.prog
    a = np.asarray(addr, np.int64).reshape(-1)
    k_n = len(a)
    step = cta.step.index if cta.step is not None else 0
    what = ins.opcode.split(".")[0]
    tags, bits, idx, ok = _shared_bytes(cta, step, a, n, np.full(k_n, thread, np.int64), what)
    pend = (sm.pending[idx] > 0).any(axis=1) & ok
    wset = np.zeros(64, bool)
    wset[np.asarray(warps, np.int64)] = True
    ww = sm.w_warp[idx]
    race = ((sm.w_epoch[idx] == sm.epoch) & (ww >= 0) & ~wset[np.clip(ww, 0, 63)]).any(axis=1) & ok
    if race.any():
        k = int(np.argmax(race))
        j = int(np.argmax((sm.w_epoch[idx[k]] == sm.epoch) & ~wset[np.clip(ww[k], 0, 63)] & (ww[k] >= 0)))
        wi = int(sm.writer[idx[k, j]]) & 0xFFFFFF
        prog.events.add("race", step, cta.index, thread, int(a[k]), "shared",
                        f"{what} (warps {int(warps[0])}-{int(warps[-1])}) reads shared 0x{int(a[k]):x}, which warp "
                        f"{int(ww[k, j])} wrote at line {prog.steps[wi].instr.line} with no bar.sync between",
                        int(race.sum()))
    unf = sm.unfenced[idx].any(axis=1) & ok & ~pend
    if unf.any():
        k = int(np.argmax(unf))
        j = int(np.argmax(sm.unfenced[idx[k]]))
        wi = int(sm.writer[idx[k, j]]) & 0xFFFFFF
        prog.events.add("proxy_fence_missing", step, cta.index, thread, int(a[k]), "shared",
                        f"{what} reads shared 0x{int(a[k]):x} through the asynchronous proxy, which "
                        f"{prog.steps[wi].instr.opcode.split('.')[0]} at line {prog.steps[wi].instr.line} wrote through "
                        "the generic proxy with no fence.proxy.async between them", int(unf.sum()))
    # the read is not a warp's (no bar.sync epoch is recorded): a write while it is in flight is what ``hold`` makes
    # a finding, and its warpgroup's warps meet at the collective
    if prog.trace:
        tags = prog.domain.moved(cta, step, np.full(k_n, thread, np.int64), tags, a.astype(np.uint64), "shared")
    return tags, bits


def short_copy(ins: Instr | None) -> str:
    if ins is None:
        return "copy"
    if ins.base == "cp" and "bulk" in ins.parts:
        return "TMA copy (cp.async.bulk)"
    return "cp.async" if ins.base == "cp" else ins.base


def hold(cta: CTA, addr: np.ndarray, n: int, instr: int) -> np.ndarray:
    """Mark bytes ``[addr, addr + n)`` as read by the asynchronous instruction ``instr`` until ``release``: a write of
    them before then is a finding.  The flat byte indices held."""
    sm = cta.smem
    a = np.asarray(addr, np.int64).reshape(-1)
    idx = (a[:, None] + np.arange(n)[None, :]).reshape(-1)
    idx = idx[(idx >= 0) & (idx < sm.size)]
    np.add.at(sm.reading, idx, 1)
    sm.reading_instr[idx] = instr
    return idx


def release(cta: CTA, idx: np.ndarray) -> None:
    np.subtract.at(cta.smem.reading, idx, 1)


def write_shared(cta: CTA, ins: Instr, addr: np.ndarray, tags: np.ndarray, bits: np.ndarray, rows: np.ndarray,
                 instr: int | None = None, proxy: str = "generic", by: CTA | None = None, atomic: bool = False
                 ) -> None:
    """Write ``tags``/``bits`` [r, n] at shared ``addr`` for the threads ``rows`` (checks as ``read_shared``; a write
    of bytes an asynchronous reader still reads is a finding).  ``proxy``: ``generic`` (``st``, ``stmatrix``: an
    asynchronous-proxy reader may read the bytes only after a ``fence.proxy.async``), ``cp.async`` (a warp's copy,
    read by ``wgmma`` with no proxy fence in CUTLASS's and CuTe's cp.async mainloops: not required here), or
    ``async`` (TMA: the bytes are no warp's, the mbarrier wait orders them before their readers).  ``by``: the
    CTA whose threads write (another CTA of the cluster, through a ``shared::cluster`` address: no warp of ``cta``
    writes, and a read by another CTA than ``by`` is ordered after it only through the cluster's barriers; a read or
    write of the bytes by another CTA than ``by`` must be ordered before it the same way, ``order.cluster_write_race``:
    a TMA load's, ``proxy`` ``async``, is checked when it is issued).  ``atomic``: an update (``_update_shared``)."""
    sm = cta.smem
    prog = cta.prog
    by = cta if by is None else by
    if by is not cta and proxy == "generic":
        proxy = "remote"
    n = tags.shape[1]
    a = addr[rows].astype(np.int64) if addr.shape[0] == cta.T else addr.astype(np.int64)
    out = (a < 0) | (a + n > sm.size)
    index = _step_index(cta) if instr is None else instr
    if out.any():
        k = int(np.argmax(out))
        where = "" if by is cta else f" of CTA rank {cta.rank}"
        prog.events.add("shared_out_of_bounds", index, by.index, int(rows[k]), int(a[k]), "shared",
                        f"{prog.steps[index].instr.opcode} writes shared 0x{int(a[k]):x}{where}, outside the {sm.size} "
                        "bytes of shared memory", int(out.sum()))
    ok = ~out
    idx = a[ok][:, None] + np.arange(n)[None, :]
    warp = cta.warp[rows][ok]
    if idx.size:
        if proxy not in ("async", "remote"):
            write_after_read(cta, index, idx, warp, rows[ok], a[ok], "warp {} writes")
        waw = ((sm.w_epoch[idx] == sm.epoch) & (sm.w_warp[idx] != warp[:, None]) & (sm.w_warp[idx] >= 0)).any(axis=1)
        if proxy in ("async", "remote"):
            waw[:] = False
        if waw.any():
            k = int(np.argmax(waw))
            prog.events.add("race", index, cta.index, int(rows[ok][k]), int(a[ok][k]), "shared",
                            f"warp {int(warp[k])} writes shared 0x{int(a[ok][k]):x}, which another warp wrote in the "
                            "same barrier epoch", int(waw.sum()))
        flat = idx.reshape(-1)
        busy = sm.reading[idx] > 0
        if busy.any():
            k = int(np.argmax(busy.any(axis=1)))
            j = int(np.argmax(busy[k]))
            reader = prog.steps[int(sm.reading_instr[idx[k, j]])].instr
            prog.events.add("overwrite_in_flight", index, cta.index, int(rows[ok][k]), int(a[ok][k]), "shared",
                            f"{prog.steps[index].instr.opcode.split('.')[0]} writes shared 0x{int(a[ok][k]):x}, which the "
                            f"{reader.base} at line {reader.line} still reads (no wait for it between them)",
                            int(busy.any(axis=1).sum()))
        if cta.cluster is not None and proxy != "async":
            cluster_write_race(cta, by, index, idx, rows[ok], a[ok], atomic)
        sm.tags[flat] = tags[ok].reshape(-1)
        sm.bits[flat] = bits[ok].reshape(-1)
        sm.unfenced[flat] = proxy in ("generic", "remote")
        sm.writer[flat] = np.repeat(writer_code(by.index, 0, index) + (rows[ok].astype(np.int64) << 24), n)
        sm.w_epoch[flat] = sm.epoch
        sm.w_warp[flat] = np.repeat(warp, n) if proxy not in ("async", "remote") else -1
        if cta.cluster is not None:
            sm.w_cta[flat] = by.rank if proxy != "async" else -1
            sm.w_clock[flat] = cluster_sync(by).clock
            sm.c_atomic[flat] = atomic


def _locate(cta: CTA, ins: Instr, addr: np.ndarray, n: int, rows: np.ndarray, verb: str,
            who: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(addresses, region index, offset, out of bounds) of ``n``-byte global accesses by the threads ``rows`` (``who``:
    the threads findings name, when the accesses are a bulk copy's elements); an access no tensor holds is a
    finding."""
    who = rows if who is None else who
    gm = cta.prog.gmem
    assert gm is not None
    a = addr[rows]
    reg, off = gm.locate(a, n)
    bad = reg < 0
    if bad.any():
        k = int(np.argmax(bad))
        what = "tensor" if verb == "reads" else "output tensor"
        cta.prog.events.add("global_out_of_bounds", _step_index(cta), cta.index, int(who[k]), int(a[k]), "global",
                            f"{ins.opcode} {verb} {gm.describe(int(a[k]))}: no {what} holds those {n} bytes",
                            int(bad.sum()))
    return a, reg, off, bad


def write_after_read(cta: CTA, index: int, idx: np.ndarray, warp: np.ndarray, rows: np.ndarray, a: np.ndarray,
                      verb: str) -> None:
    """A race: bytes ``idx`` [r, n] that the threads ``rows`` (of ``warp``) write, which another warp read in this
    barrier epoch.  ``verb`` words the write (``{}`` is the writer's warp)."""
    sm = cta.smem
    other = sm.r_warps[idx] & ~(np.uint64(1) << warp.astype(np.uint64))[:, None]
    war = ((sm.r_epoch[idx] == sm.epoch) & (other != 0)).any(axis=1)
    if war.any():
        k = int(np.argmax(war))
        cta.prog.events.add("race", index, cta.index, int(rows[k]), int(a[k]), "shared",
                            f"{verb.format(int(warp[k]))} shared 0x{int(a[k]):x} that another warp read with no "
                            "bar.sync between", int(war.sum()))


def read_global(cta: CTA, ins: Instr, addr: np.ndarray, n: int, rows: np.ndarray,
                who: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Bytes ``[addr, addr + n)`` of global memory for the threads ``rows`` (``who``: as ``_locate``)."""
    prog = cta.prog
    gm = prog.gmem
    assert gm is not None
    who = rows if who is None else who
    a, reg, off, bad = _locate(cta, ins, addr, n, rows, "reads", who)
    tags = np.full((len(rows), n), UNDEF, np.int64)
    bits = np.zeros((len(rows), n), np.uint8)
    for r in np.unique(reg[~bad]):
        sel = reg == r
        region = gm.regions[int(r)]
        idx = off[sel][:, None] + np.arange(n)[None, :]
        tags[sel] = region.tags[idx]
        bits[sel] = region.bits[idx]
    never = (tags == UNDEF).any(axis=1) & ~bad
    if never.any():
        k = int(np.argmax(never))
        prog.events.add("unwritten_read", _step_index(cta), cta.index, int(who[k]), int(a[k]), "global",
                        f"{ins.opcode} reads {gm.describe(int(a[k]))}, which nothing wrote", int(never.sum()))
    if prog.trace:
        tags = prog.domain.moved(cta, _step_index(cta), who, tags, a, "global")
    return tags, bits


def write_global(cta: CTA, ins: Instr, addr: np.ndarray, tags: np.ndarray, bits: np.ndarray, rows: np.ndarray,
                 who: np.ndarray | None = None, atomic: bool = False) -> None:
    """Write ``tags``/``bits`` [r, n] at global ``addr`` for the threads ``rows`` (``who``: as ``_locate``).
    ``atomic``: an atomic update (``atom``, ``red``: ``ops_atom``): it makes an element written but is not a second
    write of it; a write of bytes another CTA wrote, one of the two a plain store, is a race (``global_race``)."""
    prog = cta.prog
    gm = prog.gmem
    assert gm is not None
    n = tags.shape[1]
    who = rows if who is None else who
    a, reg, off, bad = _locate(cta, ins, addr, n, rows, "writes", who)
    for r in np.unique(reg[~bad]):
        sel = reg == r
        region = gm.regions[int(r)]
        if not region.output:
            k = int(np.argmax(sel))
            prog.events.add("input_written", _step_index(cta), cta.index, int(who[k]), int(a[k]), "global",
                            f"{ins.opcode} writes {gm.describe(int(a[k]))}, an input tensor", int(sel.sum()))
            continue
        idx = (off[sel][:, None] + np.arange(n)[None, :]).reshape(-1)
        gap = region_gaps(region, idx)
        if gap is not None and gap.any():
            k = int(np.argmax(gap))
            prog.events.add("global_out_of_bounds", _step_index(cta), cta.index, int(who[sel][k // n]),
                            int(region.base + idx[k]), "global",
                            f"{ins.opcode} writes {gm.describe(int(region.base + idx[k]))}, between the tensor's "
                            "elements", int(gap.sum()))
        global_race(cta, ins, region, idx.reshape(-1, n), a[sel], who[sel], atomic)
        region.tags[idx] = tags[sel].reshape(-1)
        region.bits[idx] = bits[sel].reshape(-1)
        if atomic:
            region.writes[idx] = np.maximum(region.writes[idx], 1)
        else:
            _count_writes(region, idx)
        assert region.atomic is not None
        region.atomic[idx] = atomic
        region.writer[idx] = np.repeat(writer_code(cta.index, 0, _step_index(cta)) + (who[sel].astype(np.int64) << 24), n)


def _count_writes(region: Any, idx: np.ndarray) -> None:
    u, c = np.unique(idx, return_counts=True)
    region.writes[u] = np.minimum(region.writes[u].astype(np.int64) + c, 255).astype(np.uint8)


def region_gaps(region: Any, idx: np.ndarray) -> np.ndarray | None:
    return None if region.gap is None else region.gap[idx]


def _local(cta: CTA, ins: Instr, addr: np.ndarray, n: int, rows: np.ndarray) -> np.ndarray:
    """Byte indices [r, n] of local accesses by the threads ``rows`` (an access outside the thread's local memory is
    an error: the executor cannot say what it reaches)."""
    a = addr[rows].astype(np.int64)
    bad = (a < 0) | (a + n > cta.prog.local_size)
    if bad.any():
        raise cta.prog.error(ins, f"{ins.opcode} (thread {int(rows[np.argmax(bad)])}) accesses local address "
                                  f"0x{int(a[np.argmax(bad)]):x}, outside the {cta.prog.local_size} bytes of its local "
                                  "variables")
    return a[:, None] + np.arange(n)[None, :]


def read_local(cta: CTA, ins: Instr, addr: np.ndarray, n: int, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    idx = _local(cta, ins, addr, n, rows)
    return cta.local_tags[rows[:, None], idx], cta.local_bits[rows[:, None], idx]


def write_local(cta: CTA, ins: Instr, addr: np.ndarray, tags: np.ndarray, bits: np.ndarray, rows: np.ndarray) -> None:
    idx = _local(cta, ins, addr, tags.shape[1], rows)
    cta.local_tags[rows[:, None], idx] = tags
    cta.local_bits[rows[:, None], idx] = bits


def _in_local(a: np.ndarray) -> np.ndarray:
    from .memory import LOCAL_WINDOW
    return (a >= np.uint64(LOCAL_WINDOW)) & (a < np.uint64(LOCAL_WINDOW + (1 << 32)))


CLUSTER_SHIFT = 24  # a shared::cluster address: (rank + 1) << 24 | the shared address in that CTA (``mapa``'s)


def _cluster_parts(cta: CTA, ins: Instr, a: np.ndarray) -> list[tuple[CTA, np.ndarray]]:
    """Shared addresses ``a`` [k] (``shared::cluster`` ones among them) by the CTA they are in: (CTA, which of the
    k); a ``shared::cluster`` address of the executing CTA is its own shared memory.  An address in a CTA of the
    cluster that has ended is an error (its shared memory is gone)."""
    a = np.asarray(a, np.uint64)
    tag = (a >> np.uint64(CLUSTER_SHIFT)).astype(np.int64)
    if not (tag > 0).any():
        return [(cta, np.ones(len(a), bool))]
    out: dict[int, np.ndarray] = {}
    for tg in np.unique(tag):
        rank = cta.rank if tg == 0 else int(tg) - 1
        sel = tag == tg
        out[rank] = out[rank] | sel if rank in out else sel
    parts = []
    for rank, sel in sorted(out.items()):
        if rank == cta.rank:
            parts.append((cta, sel))
            continue
        cl = cta.cluster
        k = int(np.argmax(sel))
        if cl is None:
            raise cta.prog.error(ins, f"{ins.opcode}: shared::cluster 0x{int(a[k]):x} is in CTA rank {rank} of a "
                                      "cluster of one CTA")
        other = cl.peer(cta, rank, ins)
        if rank in cl.done:
            raise cta.prog.error(ins, f"{ins.opcode} (CTA rank {cta.rank}): shared::cluster 0x{int(a[k]):x} is in CTA "
                                      f"rank {rank}, which has ended (its shared memory is gone: no barrier.cluster "
                                      "keeps it running until this access)")
        parts.append((other, sel))
    return parts


def _low(addr: np.ndarray) -> np.ndarray:
    return np.asarray(addr, np.uint64) & np.uint64((1 << CLUSTER_SHIFT) - 1)


def read_cluster_shared(cta: CTA, ins: Instr, addr: np.ndarray, n: int, rows: np.ndarray
                        ) -> tuple[np.ndarray, np.ndarray]:
    """``read_shared`` through ``shared::cluster`` addresses: each CTA's part of ``rows`` from that CTA's shared
    memory (findings name the reading CTA and thread; a read of another CTA's bytes is checked against the
    cluster's order, ``cluster_race``)."""
    parts = _cluster_parts(cta, ins, addr[rows])
    if len(parts) == 1 and parts[0][0] is cta:
        return read_shared(cta, ins, _low(addr), n, rows)
    step = cta.step.index if cta.step is not None else 0
    tags = np.empty((len(rows), n), np.int64)
    bits = np.empty((len(rows), n), np.uint8)
    low = _low(addr)
    for owner, sel in parts:
        if owner is cta:
            tags[sel], bits[sel] = read_shared(cta, ins, low, n, rows[sel])
            continue
        r = rows[sel]
        a = low[r].astype(np.int64)
        t, b, _, _ = _shared_bytes(owner, step, a, n, r, ins.opcode, reader=cta)
        if cta.prog.trace:
            t = cta.prog.domain.moved(cta, step, r, t, a.astype(np.uint64), "shared")
        tags[sel], bits[sel] = t, b
    return tags, bits


def write_cluster_shared(cta: CTA, ins: Instr, addr: np.ndarray, tags: np.ndarray, bits: np.ndarray,
                         rows: np.ndarray, moved: bool = True) -> None:
    """``write_shared`` through ``shared::cluster`` addresses: each CTA's part of ``rows`` into that CTA's shared
    memory (``moved``: the chain's run gives the data a value of its own, as ``st.shared`` does)."""
    step = cta.step.index if cta.step is not None else 0
    low = _low(addr)
    if moved and cta.prog.trace:
        tags = cta.prog.domain.moved(cta, step, rows, tags, low[rows], "shared")
    for owner, sel in _cluster_parts(cta, ins, addr[rows]):
        if owner is cta:
            write_shared(cta, ins, low, tags[sel], bits[sel], rows[sel])
        else:
            write_shared(owner, ins, low, tags[sel], bits[sel], rows[sel], instr=step, by=cta)


def read_bytes(cta: CTA, ins: Instr, space: str, addr: np.ndarray, n: int, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if space == "shared":
        return read_cluster_shared(cta, ins, addr, n, rows)
    if space == "global":
        return read_global(cta, ins, addr, n, rows)
    if space == "local":
        return read_local(cta, ins, addr, n, rows)
    if space == "generic" and _in_local(addr[rows]).all():
        from .memory import LOCAL_WINDOW
        return read_local(cta, ins, addr - np.uint64(LOCAL_WINDOW), n, rows)
    if space == "generic":
        a = addr[rows]
        sh = (a >= np.uint64(SHARED_WINDOW)) & (a < np.uint64(SHARED_WINDOW + (1 << 32)))
        tags = np.empty((len(rows), n), np.int64)
        bits = np.empty((len(rows), n), np.uint8)
        if sh.any():
            tags[sh], bits[sh] = read_cluster_shared(cta, ins, addr - np.uint64(SHARED_WINDOW), n, rows[sh])
        if (~sh).any():
            tags[~sh], bits[~sh] = read_global(cta, ins, addr, n, rows[~sh])
        return tags, bits
    raise cta.prog.error(ins, f"unsupported instruction '{ins.opcode}' (.{space} memory)")


def write_bytes(cta: CTA, ins: Instr, space: str, addr: np.ndarray, tags: np.ndarray, bits: np.ndarray,
                rows: np.ndarray) -> None:
    if space == "shared":
        return write_cluster_shared(cta, ins, addr, tags, bits, rows)
    if space == "global":
        return write_global(cta, ins, addr, tags, bits, rows)
    if space == "local":
        return write_local(cta, ins, addr, tags, bits, rows)
    if space == "generic" and _in_local(addr[rows]).all():
        from .memory import LOCAL_WINDOW
        return write_local(cta, ins, addr - np.uint64(LOCAL_WINDOW), tags, bits, rows)
    if space == "generic":
        a = addr[rows]
        sh = (a >= np.uint64(SHARED_WINDOW)) & (a < np.uint64(SHARED_WINDOW + (1 << 32)))
        if sh.any():
            shifted = addr - np.uint64(SHARED_WINDOW)
            write_cluster_shared(cta, ins, shifted, tags[sh], bits[sh], rows[sh], moved=False)
        if (~sh).any():
            write_global(cta, ins, addr, tags[~sh], bits[~sh], rows[~sh])
        return None
    raise cta.prog.error(ins, f"unsupported instruction '{ins.opcode}' (.{space} memory)")


# ----------------------------------------------------------------------------- ld / st


# ----------------------------------------------------------------------------- atomic updates

Combine = Callable[[np.ndarray, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


def update_bytes(cta: CTA, ins: Instr, space: str, addr: np.ndarray, n: int, rows: np.ndarray,
                 combine: Combine) -> None:
    """An atomic update of bytes ``[addr, addr + n)`` for the threads ``rows`` (no two at one address): each old
    value read (the findings of a read), ``combine(old tags, old bits, which of rows)`` written back.  Generic
    addresses go to shared memory or global memory as ``read_bytes`` sends them."""
    if space == "shared":
        return _update_shared(cta, ins, addr, n, rows, combine, np.ones(len(rows), bool))
    if space == "global":
        return _update_global(cta, ins, addr, n, rows, combine, np.ones(len(rows), bool))
    if space == "generic":
        a = addr[rows]
        if _in_local(a).any():
            raise cta.prog.error(ins, f"{ins.opcode}: an atomic on local memory (a generic address in the local window)")
        sh = (a >= np.uint64(SHARED_WINDOW)) & (a < np.uint64(SHARED_WINDOW + (1 << 32)))
        if sh.any():
            _update_shared(cta, ins, addr - np.uint64(SHARED_WINDOW), n, rows[sh], combine, sh)
        if (~sh).any():
            _update_global(cta, ins, addr, n, rows[~sh], combine, ~sh)
        return None
    raise cta.prog.error(ins, f"unsupported instruction '{ins.opcode}' (.{space} memory)")


def _update_global(cta: CTA, ins: Instr, addr: np.ndarray, n: int, rows: np.ndarray, combine: Combine,
                   which: np.ndarray) -> None:
    tags, bits = read_global(cta, ins, addr, n, rows)
    nt, nb = combine(tags, bits, which)
    write_global(cta, ins, addr, nt, nb, rows, atomic=True)


def _update_shared(cta: CTA, ins: Instr, addr: np.ndarray, n: int, rows: np.ndarray, combine: Combine,
                   which: np.ndarray) -> None:
    """``update_bytes`` in shared memory, through ``shared::cluster`` addresses as ``read_cluster_shared``.  The
    update's read is checked as any read (bounds, never written, a copy in flight, the cluster's order) and its
    write as ``write_shared`` (a plain read or store of another warp in the same barrier epoch: a race).  Two warps'
    atomic updates of one byte are no race: the update's bytes are left as no warp's plain write (a later plain
    read of them by another warp is not judged)."""
    step = _step_index(cta)
    low = _low(addr)
    pos = np.flatnonzero(which)
    for owner, sel in _cluster_parts(cta, ins, addr[rows]):
        r = rows[sel]
        a = low[r].astype(np.int64)
        tags, bits, idx, ok = _shared_bytes(owner, step, a, n, r, ins.opcode, reader=None if owner is cta else cta,
                                            update=True)
        if cta.prog.trace:
            tags = cta.prog.domain.moved(cta, step, r, tags, a.astype(np.uint64), "shared")
        part = np.zeros(len(which), bool)
        part[pos[sel]] = True
        nt, nb = combine(tags, bits, part)
        write_shared(owner, ins, low, nt, nb, r, instr=step, by=None if owner is cta else cta, atomic=True)
        if owner is cta and idx[ok].size:
            owner.smem.w_warp[idx[ok].reshape(-1)] = -1


def aligned(prog: Any, ins: Instr, a: np.ndarray, rows: np.ndarray, n: int) -> np.ndarray:
    """``a``, the addresses of the threads ``rows``, each aligned to the access's ``n`` bytes; the first that is
    not is an error at the instruction's line (an atomic, an ``st.async``: the hardware faults)."""
    bad = (a % np.uint64(n)) != 0
    if bad.any():
        k = int(np.argmax(bad))
        raise prog.error(ins, f"{ins.opcode} (thread {int(rows[k])}): address 0x{int(a[k]):x} is not aligned to "
                              f"its {n} bytes")
    return a
