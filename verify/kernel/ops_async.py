"""The asynchronous proxy's copies and their barriers: TMA (``cp.async.bulk.tensor`` loads and stores through a tensor
map the launch describes), ``mbarrier`` (init, arrive, expect_tx, try_wait/test_wait, inval) with phases and
transaction counts, ``cp.async.bulk.commit_group``/``wait_group``, and ``elect.sync``.

A TMA load reads global memory when it is issued and lands in shared memory when a wait on its mbarrier needs it
to complete the phase: with every expected arrival made, the copies in flight on the barrier complete in the order
they were issued, each taking its bytes off the transaction count, until the count is zero.  A read of its bytes
before then is a finding (``read_in_flight``), as is a wait that can never complete (an error: the kernel would
hang).  The box's elements land where the tensor map's swizzle puts them (``verify.kernel.fragments``: the
project's TMA layout, the swizzle on address bits); elements outside the tensor are zero (the map's OOB fill).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..ptx.syntax import Imm, Instr, PredPair, Sink, Sym, TensorAddr
from .bytes import CONCRETE, U64
from .descriptors import BadDescriptor, tma_box_addresses
from .launch import TensorMap, map_order
from .machine import CTA, Program, Step
from .memory import PARAM_WINDOW, SHARED_WINDOW
from . import ops_mem  # noqa: F401  (its cp.async, which ``cp`` here extends, registered first)
from .access import address, hold, read_global, read_shared_async, release, write_global, write_shared
from .ops_base import HANDLERS, dest, handler
from .order import cluster_acquire, cluster_release, cluster_write_race, merge_release


# ----------------------------------------------------------------------------- state

@dataclass
class BulkCopy:
    """A TMA load in flight: where its elements land, what they are, its bytes."""

    instr: int
    thread: int
    dst: np.ndarray  # int64[n]: shared address of each element
    tags: np.ndarray  # [n, element bytes]
    bits: np.ndarray
    nbytes: int


@dataclass
class Barrier:
    """An ``mbarrier`` object in shared memory: arrivals expected per phase, arrivals and transaction bytes still
    outstanding in this phase, phases completed, the copies in flight that complete on it."""

    addr: int
    count: int
    pending: int
    tx: int = 0
    phase: int = 0
    line: int = 0
    copies: list[BulkCopy] = field(default_factory=list)
    commits: list[Any] = field(default_factory=list)  # tcgen05.commit: land() its results, then arrive once
    released: dict[int, int] = field(default_factory=dict)  # what its arrivals released (``order.ClusterSync``)


@dataclass
class AsyncState:
    barriers: dict[int, Barrier] = field(default_factory=dict)
    bulk_open: list[np.ndarray] = field(default_factory=list)  # shared bytes TMA stores read, not yet committed
    bulk_groups: list[list[np.ndarray]] = field(default_factory=list)  # committed groups not yet waited for


def state(cta: CTA) -> AsyncState:
    st = cta.state.get("async")
    if st is None:
        st = cta.state["async"] = AsyncState()
    return st


def _rows(m: np.ndarray | None, T: int) -> np.ndarray:
    return np.arange(T) if m is None else np.flatnonzero(m)


def shared_address(cta: CTA, ins: Instr, o: Any, m: np.ndarray | None, space: str) -> np.ndarray:
    """An address operand as shared-memory addresses (a generic address in the shared window is converted)."""
    a = address(cta, o, m).astype(np.int64)
    if space != "shared":
        a = np.where(a >= SHARED_WINDOW, a - SHARED_WINDOW, a)
    return a


def _space(ins: Instr) -> str:
    return "shared" if any(p.startswith("shared") for p in ins.parts[1:]) else "generic"


def barrier_at(cta: CTA, ins: Instr, addr: int) -> Barrier:
    b = state(cta).barriers.get(addr)
    if b is None:
        of = f" of CTA rank {cta.rank}" if cta.cluster is not None else ""
        raise cta.prog.error(ins, f"{ins.opcode}: shared 0x{addr:x}{of} holds no initialised mbarrier (no mbarrier.init "
                                  "before it)")
    return b


def complete_phase(cta: CTA, b: Barrier) -> None:
    """The phase completes when no arrival and no transaction byte is outstanding."""
    if b.pending == 0 and b.tx == 0:
        b.phase += 1
        b.pending = b.count


def land(cta: CTA, c: BulkCopy) -> None:
    """A TMA load's bytes land in shared memory (written by the asynchronous proxy)."""
    sm = cta.smem
    eb = c.tags.shape[1]
    inside = (c.dst >= 0) & (c.dst + eb <= sm.size)
    idx = c.dst[inside][:, None] + np.arange(eb)[None, :]
    if idx.size:
        np.subtract.at(sm.pending, idx.reshape(-1), 1)
    saved = cta.step
    cta.step = cta.prog.steps[c.instr]
    try:
        write_shared(cta, cta.step.instr, c.dst, c.tags, c.bits, np.full(len(c.dst), c.thread, np.int64), c.instr,
                     proxy="async")
    finally:
        cta.step = saved


def settle(cta: CTA, b: Barrier) -> None:
    """Complete what is in flight on ``b`` until its phase completes: the ``tcgen05.commit`` arrivals (their MMAs'
    results land first), then, with every arrival made, the copies in issue order until the transaction count is
    zero (a copy beyond that stays in flight)."""
    phase = b.phase
    while b.phase == phase:
        if b.commits and b.pending > 0:
            c = b.commits.pop(0)
            c.land()
            b.pending -= 1
        elif b.pending == 0 and b.tx > 0 and b.copies:
            cp = b.copies.pop(0)
            land(cta, cp)
            b.tx -= cp.nbytes
        else:
            complete_phase(cta, b)
            return
        complete_phase(cta, b)


# ----------------------------------------------------------------------------- elect.sync

@handler("elect")
def _elect(prog: Program, ins: Instr, index: int) -> Step:
    if "sync" not in ins.parts or len(ins.operands) != 2:
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}' (elect.sync d|p, membermask)")
    d_o, mask_o = ins.operands
    if isinstance(d_o, PredPair):
        d, p = dest(prog, ins, d_o.first), dest(prog, ins, d_o.second)
    else:
        d, p = dest(prog, ins, d_o), None

    def run(cta: CTA, m: np.ndarray | None) -> None:
        mask, _ = cta.int_value(mask_o, 32, False, m, "a member mask")
        mask = np.broadcast_to(np.asarray(mask, U64), (cta.T,))
        lane = cta.lane
        active = np.ones(cta.T, bool) if m is None else m
        member = active & (((mask >> lane.astype(U64)) & np.uint64(1)) == 1)
        W = cta.T // 32
        mw = member[: W * 32].reshape(W, 32)
        leader = np.where(mw.any(axis=1), np.argmax(mw, axis=1), 0)
        is_leader = np.zeros(cta.T, bool)
        is_leader[: W * 32] = (mw & (np.arange(32)[None, :] == leader[:, None])).reshape(-1)
        if d is not None:
            cta.put(d.id, np.repeat(leader, 32)[: cta.T].astype(U64), None, m)
        if p is not None:
            cta.put(p.id, is_leader, None, m)
    return Step(ins, index, "op", run)


# ----------------------------------------------------------------------------- mbarrier

@handler("mbarrier")
def _mbarrier(prog: Program, ins: Instr, index: int) -> Step:
    parts = ins.parts
    verb = parts[1] if len(parts) > 1 else ""
    space = _space(ins)
    if any(p.startswith("shared::cluster") for p in parts) and verb != "arrive":
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}' (another CTA's mbarrier)")
    ops = ins.operands
    if verb == "init":
        if len(ops) != 2:
            raise prog.error(ins, f"{ins.opcode} takes [addr], count")

        def init(cta: CTA, m: np.ndarray | None) -> None:
            addr = shared_address(cta, ins, ops[0], m, space)
            cnt, _ = cta.int_value(ops[1], 32, False, m, "an arrival count")
            cnt = np.broadcast_to(np.asarray(cnt, U64), (cta.T,))
            st = state(cta)
            for t in _rows(m, cta.T):
                a = int(addr[t])
                old = st.barriers.get(a)
                if old is not None and old.copies:
                    cta.prog.events.add("barrier_reinitialised", index, cta.index, int(t), a, "shared",
                                        f"mbarrier.init re-initialises shared 0x{a:x} while {len(old.copies)} TMA "
                                        "copies still complete on it", 1)
                st.barriers[a] = Barrier(a, int(cnt[t]), int(cnt[t]), line=ins.line)
        return Step(ins, index, "op", init)
    if verb == "inval":
        def inval(cta: CTA, m: np.ndarray | None) -> None:
            addr = shared_address(cta, ins, ops[0], m, space)
            st = state(cta)
            for t in _rows(m, cta.T):
                b = st.barriers.pop(int(addr[t]), None)
                if b is not None and (b.copies or b.commits):
                    cta.prog.events.add("barrier_invalidated", index, cta.index, int(t), b.addr, "shared",
                                        f"mbarrier.inval invalidates shared 0x{b.addr:x} while {len(b.copies)} TMA "
                                        f"copies and {len(b.commits)} tcgen05.commit still complete on it (their "
                                        "bytes never land)", 1)
        return Step(ins, index, "op", inval)
    if verb in ("arrive", "arrive_drop", "expect_tx", "complete_tx"):
        return _arrive(prog, ins, index, verb, space)
    if verb in ("try_wait", "test_wait"):
        return _wait(prog, ins, index, space)
    raise prog.error(ins, f"unsupported instruction '{ins.opcode}'")


def _arrive(prog: Program, ins: Instr, index: int, verb: str, space: str) -> Step:
    parts = ins.parts
    ops = list(ins.operands)
    expect = "expect_tx" in parts
    remote = any(p.startswith("shared::cluster") for p in parts)
    if "noComplete" in parts:
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}' (.noComplete)")
    if verb in ("expect_tx", "complete_tx"):
        state_o, addr_o, rest = None, ops[0], ops[1:]
    else:
        if len(ops) < 2:
            raise prog.error(ins, f"{ins.opcode} takes state, [addr]")
        state_o, addr_o, rest = ops[0], ops[1], ops[2:]
    d = dest(prog, ins, state_o) if state_o is not None and not isinstance(state_o, Sink) else None
    tx_o = rest[0] if (expect or verb == "complete_tx") and rest else None
    cnt_o = rest[1] if expect and len(rest) > 1 else (rest[0] if not expect and verb != "complete_tx" and rest else None)
    if (expect or verb == "complete_tx") and tx_o is None:
        raise prog.error(ins, f"{ins.opcode} needs a transaction count")

    def run(cta: CTA, m: np.ndarray | None) -> None:
        addr = shared_address(cta, ins, addr_o, m, space)
        tx = np.broadcast_to(np.asarray(cta.int_value(tx_o, 32, False, m, "a transaction count")[0], U64),
                             (cta.T,)) if tx_o is not None else None
        cnt = np.broadcast_to(np.asarray(cta.int_value(cnt_o, 32, False, m, "an arrival count")[0], U64),
                              (cta.T,)) if cnt_o is not None else None
        out = np.zeros(cta.T, U64)
        for t in _rows(m, cta.T):
            owner, a = cluster_target(cta, ins, int(addr[t])) if remote else (cta, int(addr[t]))
            b = barrier_at(owner, ins, a)
            out[t] = b.phase
            if tx is not None:
                b.tx += int(tx[t]) if verb != "complete_tx" else -int(tx[t])
            if verb in ("arrive", "arrive_drop"):
                if cta.cluster is not None:
                    merge_release(b.released, cluster_release(cta))
                n = int(cnt[t]) if cnt is not None else 1
                if n > b.pending:
                    cta.prog.events.add("barrier_overarrived", index, cta.index, int(t), b.addr, "shared",
                                        f"{ins.opcode.split('.')[0]}.{verb} arrives {n} times on shared 0x{b.addr:x}, "
                                        f"whose phase expects {b.pending} more", 1)
                    n = b.pending
                b.pending -= n
                if verb == "arrive_drop":
                    b.count -= n
            complete_phase(cta, b)
        if d is not None:
            cta.put(d.id, out, None, m)
    return Step(ins, index, "op", run)


CLUSTER_SHIFT = 24  # a shared::cluster address: (rank + 1) << 24 | the shared address in that CTA (mapa's result);
# an address below 1 << 24 is the executing CTA's own shared memory (a shared::cta address is a shared::cluster one)


def cluster_address(rank: int, addr: int) -> int:
    return ((rank + 1) << CLUSTER_SHIFT) | (addr & ((1 << CLUSTER_SHIFT) - 1))


def cluster_target(cta: CTA, ins: Instr, addr: int) -> tuple[CTA, int]:
    """The CTA and its shared address a ``shared::cluster`` address names."""
    tag = addr >> CLUSTER_SHIFT
    if tag == 0:
        return cta, addr
    rank = tag - 1
    if cta.cluster is None:
        if rank == cta.rank:
            return cta, addr & ((1 << CLUSTER_SHIFT) - 1)
        raise cta.prog.error(ins, f"{ins.opcode}: shared::cluster 0x{addr:x} is in CTA rank {rank} of a cluster of "
                                  "one CTA")
    return cta.cluster.peer(cta, rank, ins), addr & ((1 << CLUSTER_SHIFT) - 1)


@handler("mapa")
def _mapa(prog: Program, ins: Instr, index: int) -> Step:
    """``mapa[.shared::cluster].u32/u64 d, a, rank``: the address of ``a``'s shared variable in CTA ``rank`` of the
    cluster (``CLUSTER_SHIFT``; a generic address stays in the shared window)."""
    if len(ins.operands) != 3:
        raise prog.error(ins, f"{ins.opcode} takes d, a, rank")
    d = dest(prog, ins, ins.operands[0])
    if d is None:
        raise prog.error(ins, f"{ins.opcode}: the destination must be a register")
    a_o, r_o = ins.operands[1], ins.operands[2]
    generic = not any(p.startswith("shared") for p in ins.parts[1:])
    n = prog.launch.cluster[0] * prog.launch.cluster[1] * prog.launch.cluster[2]

    def run(cta: CTA, m: np.ndarray | None) -> None:
        a, ua = cta.int_value(a_o, 64, False, m, "an address")
        r, ur = cta.int_value(r_o, 32, False, m, "a CTA rank")
        a = np.broadcast_to(np.asarray(a, U64), (cta.T,)).astype(np.int64)
        r = np.broadcast_to(np.asarray(r, U64), (cta.T,)).astype(np.int64)
        rows = _rows(m, cta.T)
        if ((ua is not None and ua[rows].any()) or (ur is not None and ur[rows].any())):
            raise prog.error(ins, f"{ins.opcode}: an undefined address or rank")
        if (r[rows] >= n).any():
            t = int(rows[np.argmax(r[rows] >= n)])
            raise prog.error(ins, f"{ins.opcode} (thread {t}): rank {int(r[t])} is not in the cluster of "
                                  f"{n} CTAs")
        off = np.where(a >= SHARED_WINDOW, a - SHARED_WINDOW, a) if generic else a
        if (off[rows] >= 1 << CLUSTER_SHIFT).any() or (off[rows] >= cta.prog.shared_size).any():
            t = int(rows[np.argmax((off[rows] >= 1 << CLUSTER_SHIFT) | (off[rows] >= cta.prog.shared_size))])
            raise prog.error(ins, f"{ins.opcode} (thread {t}): 0x{int(a[t]):x} is not a shared address of this CTA")
        out = ((r + 1) << CLUSTER_SHIFT) | off
        if generic:
            out = out + SHARED_WINDOW
        cta.put(d.id, out.astype(U64), None, m)
    return Step(ins, index, "op", run)


def _wait(prog: Program, ins: Instr, index: int, space: str) -> Step:
    parts = ins.parts
    ops = ins.operands
    parity = "parity" in parts
    if len(ops) < 3:
        raise prog.error(ins, f"{ins.opcode} takes waitComplete, [addr], {'phaseParity' if parity else 'state'}")
    d = dest(prog, ins, ops[0])
    addr_o, tok_o = ops[1], ops[2]

    def run(cta: CTA, m: np.ndarray | None) -> None:
        addr = shared_address(cta, ins, addr_o, m, space)
        tok, _ = cta.int_value(tok_o, 64, False, m, "a phase")
        tok = np.broadcast_to(np.asarray(tok, U64), (cta.T,))
        done = np.zeros(cta.T, bool)
        rows = _rows(m, cta.T)
        for t in rows:
            b = barrier_at(cta, ins, int(addr[t]))
            target = (int(tok[t]) & 1) if parity else int(tok[t])

            def ok() -> bool:
                return (b.phase & 1) != target if parity else b.phase > target
            if not ok():
                settle(cta, b)
            done[t] = ok()
            if done[t] and b.released:
                cluster_acquire(cta, b.released)
        if not done[rows].all():
            stuck = np.zeros(cta.T, bool)
            stuck[rows[~done[rows]]] = True
            here = cta.here if cta.here is not None else np.ones(cta.T, bool)
            if not cta.resumed and (cta.others or (here & ~stuck).any() or cta.peers):
                cta.park = stuck  # other threads may still arrive: these wait here while they run
                if d is not None:
                    cta.put(d.id, done, None, m)
                return
            t = int(rows[np.argmax(~done[rows])])
            b = barrier_at(cta, ins, int(addr[t]))
            why = (f"{b.pending} of its {b.count} arrivals" if b.pending else f"{b.tx} transaction bytes") + \
                " are still outstanding and nothing left in flight brings them" if b.pending or b.tx > 0 else \
                f"{-b.tx} bytes more than its transaction count were delivered (the count never returns to zero)"
            who = f"CTA rank {cta.rank}, thread {t}" if cta.cluster is not None else f"thread {t}"
            raise cta.prog.error(ins, f"{ins.opcode} ({who}) waits for phase {b.phase} of the mbarrier at shared "
                                      f"0x{b.addr:x} (initialised at line {b.line}), which can never complete: "
                                      f"{why} (the kernel would hang){cta.cluster.blocked(cta) if cta.cluster else ''}")
        if d is not None:
            cta.put(d.id, done, None, m)
    return Step(ins, index, "op", run)


# ----------------------------------------------------------------------------- TMA and bulk copies

def tensor_map_at(cta: CTA, ins: Instr, o: Any, t: int, m: np.ndarray | None) -> TensorMap:
    """The tensor map a TMA operand names (a parameter, or its parameter-space or generic address)."""
    prog = cta.prog
    if isinstance(o, Sym):
        off = prog.param_off.get(o.name, (None, 0))[0]
    else:
        v, _ = cta.int_value(o, 64, False, m, "a tensor map's address")
        off = int(np.broadcast_to(np.asarray(v, U64), (cta.T,))[t])
        if off >= PARAM_WINDOW:
            off -= PARAM_WINDOW
    tm = prog.tensor_maps.get(off) if off is not None else None
    if tm is None:
        where = f"0x{off:x}" if isinstance(off, int) else str(off)
        raise prog.error(ins, f"{ins.opcode} (thread {t}): no tensor map at {where}: give the parameter as "
                              "{ tensor_map = \"A\", box = [...], swizzle = \"128B\" } in the launch")
    return tm


def box_elements(cta: CTA, tm: TensorMap, coords: list[int]) -> tuple[np.ndarray, np.ndarray, int, int]:
    """(global byte address of each element of the box, inside the tensor?, box rows, box inner extent): the box at
    ``coords`` (innermost first), elements in box order (the innermost fastest)."""
    t = cta.prog.launch.tensors()[tm.name]
    gm = cta.prog.gmem
    assert gm is not None
    base = gm.base_of(tm.name)
    box = tm.box  # outermost first, in the map's order
    order = map_order(t)
    idx = np.indices(box).reshape(len(box), -1)  # [rank, n], row-major: the innermost fastest
    start = np.array(coords[::-1], np.int64)[:, None]  # outermost first
    g = idx + start
    shape = np.array([t.shape[d] for d in order], np.int64)[:, None]
    inside = np.all((g >= 0) & (g < shape), axis=0)
    strides = np.array([t.strides[d] for d in order], np.int64)[:, None]
    addr = base + (np.where(inside[None, :], g, 0) * strides).sum(axis=0) * t.element_bytes
    inner = box[-1]
    return addr, inside, int(np.prod(box[:-1])) if len(box) > 1 else 1, inner


def bulk_copy(prog: Program, ins: Instr, index: int) -> Step:
    """``cp.async.bulk.tensor`` (loads into shared memory completing on an mbarrier; stores from shared memory in
    bulk groups), ``cp.async.bulk.commit_group``, ``cp.async.bulk.wait_group``."""
    parts = ins.parts
    rest = parts[2:]
    if rest[:1] == ("mbarrier",):
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}' (cp.async.mbarrier.arrive)")
    if rest[1:2] == ("commit_group",):
        def commit(cta: CTA, m: np.ndarray | None) -> None:
            st = state(cta)
            st.bulk_groups.append(st.bulk_open)
            st.bulk_open = []
        return Step(ins, index, "op", commit)
    if rest[1:2] == ("wait_group",) or rest[1:2] == ("wait_group_read",):
        if len(ins.operands) != 1 or not isinstance(ins.operands[0], Imm):
            raise prog.error(ins, f"{ins.opcode} needs an immediate group count")
        keep = ins.operands[0].value

        def wait(cta: CTA, m: np.ndarray | None) -> None:
            st = state(cta)
            while len(st.bulk_groups) > keep:
                for idx in st.bulk_groups.pop(0):
                    release(cta, idx)
        return Step(ins, index, "op", wait)
    if len(rest) < 2 or rest[1] != "tensor":
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}' (bulk copies other than .tensor)")
    dims = next((int(p[:-1]) for p in rest if len(p) == 2 and p.endswith("d") and p[0].isdigit()), 0)
    if any(p in ("im2col", "im2col_no_offs", "tile::gather4", "tile::scatter4") or p.startswith("im2col")
           for p in parts):
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}' (only the tile mode)")
    load = any(p.startswith("shared") for p in parts[parts.index("tensor") + 2: parts.index("tensor") + 3])
    multicast = "multicast::cluster" in parts
    if multicast and not load:
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}' (a multicast store)")
    if load:
        return _tma_load(prog, ins, index, dims, multicast)
    return _tma_store(prog, ins, index, dims)


def _coords(cta: CTA, ins: Instr, ta: TensorAddr, dims: int, m: np.ndarray | None) -> np.ndarray:
    items = list(ta.coords.items)
    if len(items) != dims:
        raise cta.prog.error(ins, f"{ins.opcode}: {len(items)} coordinates for a {dims}d copy")
    out = []
    for o in items:
        v, u = cta.int_value(o, 32, True, m, "a coordinate")
        if u is not None:
            raise cta.prog.error(ins, f"{ins.opcode}: coordinate {getattr(o, 'name', o)} is undefined")
        out.append(np.broadcast_to(np.asarray(v, U64).view(np.int64), (cta.T,)))
    return np.stack(out, axis=1)  # [T, dims], innermost first


def _face(prog: Program) -> str:
    return {"symbolic": "vector", "numeric": "scalar"}.get(getattr(prog.domain, "name", ""), "vector")


def _multicast_ctas(cta: CTA, ins: Instr, mask_o: Any, t: int, m: np.ndarray | None) -> list[CTA]:
    """The CTAs a multicast's 16-bit ``ctaMask`` names (bit r: the CTA of ``%cluster_ctarank`` r), for thread ``t``."""
    v, u = cta.int_value(mask_o, 16, False, m, "a CTA mask")
    if u is not None and np.asarray(u)[t].any():
        raise cta.prog.error(ins, f"{ins.opcode} (thread {t}): the CTA mask is undefined")
    mask = int(np.broadcast_to(np.asarray(v, U64), (cta.T,))[t]) & 0xFFFF
    n = len(cta.cluster.ctas) if cta.cluster is not None else 1
    if mask >> n:
        raise cta.prog.error(ins, f"{ins.opcode} (thread {t}): CTA mask 0x{mask:x} names a CTA rank outside the cluster "
                                  f"of {n} CTAs")
    if cta.cluster is None:
        return [cta] if mask else []
    return [cta.cluster.peer(cta, r, ins) for r in range(n) if mask >> r & 1]


def _tma_load(prog: Program, ins: Instr, index: int, dims: int, multicast: bool = False) -> Step:
    """A TMA load; with ``.multicast::cluster``, the box lands at the same shared-memory offset in every CTA of the
    mask, and each one's mbarrier at the same offset as ``mbar`` takes the box's bytes (a ``shared::cluster``
    address of the executing CTA is its CTA-relative offset)."""
    ops = ins.operands
    if len(ops) < (4 if multicast else 3) or not isinstance(ops[1], TensorAddr):
        raise prog.error(ins, f"{ins.opcode} takes [dstMem], [tensorMap, {{coordinates}}], [mbar]"
                              + (", ctaMask" if multicast else ""))
    dst_o, ta, bar_o = ops[0], ops[1], ops[2]
    mask_o = ops[3] if multicast else None
    face = _face(prog)

    def run(cta: CTA, m: np.ndarray | None) -> None:
        dst = shared_address(cta, ins, dst_o, m, "generic")
        bar = shared_address(cta, ins, bar_o, m, "generic")
        if multicast:  # CTA-relative offsets
            dst = dst & ((1 << CLUSTER_SHIFT) - 1)
            bar = bar & ((1 << CLUSTER_SHIFT) - 1)
        else:
            live = _rows(m, cta.T)
            for a in (dst, bar):  # a shared::cluster address of this CTA is its own shared memory
                tag = a[live] >> CLUSTER_SHIFT
                if ((tag != 0) & (tag != cta.rank + 1)).any():
                    raise prog.error(ins, f"unsupported instruction '{ins.opcode}' (a TMA load into another CTA's "
                                          "shared memory)")
            dst = dst & ((1 << CLUSTER_SHIFT) - 1)
            bar = bar & ((1 << CLUSTER_SHIFT) - 1)
        coords = _coords(cta, ins, ta, dims, m)
        for t in _rows(m, cta.T):
            tm = tensor_map_at(cta, ins, ta.base, int(t), m)
            if len(tm.box) != dims:
                raise prog.error(ins, f"{ins.opcode}: a {dims}d copy through the {len(tm.box)}d tensor map of {tm.name}")
            tensor = prog.launch.tensors()[tm.name]
            eb = tensor.element_bytes
            gaddr, inside, rows, inner = box_elements(cta, tm, [int(x) for x in coords[t]])
            n = len(gaddr)
            tags = np.full((n, eb), CONCRETE, np.int64)
            bits = np.zeros((n, eb), np.uint8)
            sel = np.flatnonzero(inside)
            if len(sel):
                g_t, g_b = read_global(cta, ins, gaddr[sel].astype(np.uint64), eb, np.arange(len(sel)),
                                       np.full(len(sel), t, np.int64))
                tags[sel] = g_t
                bits[sel] = g_b
            try:
                saddr = tma_box_addresses(rows, inner, 8 * eb, tm.swizzle, int(dst[t]), face).reshape(-1)
            except BadDescriptor as e:
                raise prog.error(ins, f"{ins.opcode} (thread {t}): the box of tensor map {tm.name} cannot be placed at "
                                      f"shared 0x{int(dst[t]):x}: {e}") from None
            if int(dst[t]) % 128:
                prog.events.add("tma_misaligned", index, cta.index, int(t), int(dst[t]), "shared",
                                f"cp.async.bulk.tensor writes the box of {tm.name} at shared 0x{int(dst[t]):x}, which is "
                                "not 128-byte aligned", 1)
            targets = _multicast_ctas(cta, ins, mask_o, int(t), m) if multicast else [cta]
            for target in targets:
                b = barrier_at(target, ins, int(bar[t]))
                c = BulkCopy(index, int(t), saddr.astype(np.int64), tags, bits, n * eb)
                sm = target.smem
                inb = (c.dst >= 0) & (c.dst + eb <= sm.size)
                idx = c.dst[inb][:, None] + np.arange(eb)[None, :]
                if idx.size:
                    if cta.cluster is not None:  # the box's bytes must not race another CTA's access of them
                        cluster_write_race(target, cta, index, idx, np.full(len(idx), t, np.int64), c.dst[inb])
                    np.add.at(sm.pending, idx.reshape(-1), 1)
                    sm.pending_instr[idx.reshape(-1)] = index
                b.copies.append(c)  # it lands at the wait that needs it (``settle``)
    return Step(ins, index, "op", run)


def _tma_store(prog: Program, ins: Instr, index: int, dims: int) -> Step:
    ops = ins.operands
    if len(ops) < 2 or not isinstance(ops[0], TensorAddr):
        raise prog.error(ins, f"{ins.opcode} takes [tensorMap, {{coordinates}}], [srcMem]")
    ta, src_o = ops[0], ops[1]
    face = _face(prog)

    def run(cta: CTA, m: np.ndarray | None) -> None:
        src = shared_address(cta, ins, src_o, m, "generic")
        coords = _coords(cta, ins, ta, dims, m)
        st = state(cta)
        for t in _rows(m, cta.T):
            tm = tensor_map_at(cta, ins, ta.base, int(t), m)
            tensor = prog.launch.tensors()[tm.name]
            eb = tensor.element_bytes
            gaddr, inside, rows, inner = box_elements(cta, tm, [int(x) for x in coords[t]])
            try:
                saddr = tma_box_addresses(rows, inner, 8 * eb, tm.swizzle, int(src[t]), face).reshape(-1)
            except BadDescriptor as e:
                raise prog.error(ins, f"{ins.opcode} (thread {t}): the box of tensor map {tm.name} cannot be read at "
                                      f"shared 0x{int(src[t]):x}: {e}") from None
            warps = np.array([int(t) // 32])
            tags, bits = read_shared_async(cta, ins, saddr, eb, warps, int(t))
            st.bulk_open.append(hold(cta, saddr, eb, index))
            sel = np.flatnonzero(inside)
            if len(sel):
                write_global(cta, ins, gaddr[sel].astype(np.uint64), tags[sel], bits[sel], np.arange(len(sel)),
                             np.full(len(sel), t, np.int64))
    return Step(ins, index, "op", run)


_CP = HANDLERS["cp"]  # ops_mem's cp.async (a warp's copies)


@handler("cp")
def _cp(prog: Program, ins: Instr, index: int) -> Step:
    """``cp.async.bulk...`` here (the asynchronous proxy's copies), every other ``cp.async`` in ``ops_mem``."""
    if ins.parts[1:2] == ("async",) and ins.parts[2:3] in (("bulk",), ("mbarrier",)):
        return bulk_copy(prog, ins, index)
    return _CP(prog, ins, index)


__all__ = ["AsyncState", "Barrier", "BulkCopy", "bulk_copy", "state"]
