"""Memory instructions: ``ld``/``st`` (param, global, shared, generic; vectors; predicated), ``cp.async`` with
``commit_group``/``wait_group`` (a copy lands in shared memory where the PTX says it completes; a read of its bytes
before then is a finding), ``bar.sync`` (a barrier epoch: a read of shared memory another warp wrote in the same
epoch is a race), fences and hints (no effect on values).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..ptx.syntax import TYPE_BITS, Addr, Imm, Instr, Reg, Sym, Vec
from .access import (address, read_bytes, read_global, rows_of, space_of, vector_of, write_after_read,
                     write_bytes, write_shared)
from .bytes import CONCRETE, U64, UNDEF, from_bytes
from .machine import CTA, Program, Step
from .memory import Copy
from .ops_base import HANDLERS, dest, handler, source_bytes, types_of
from .order import cluster_acquire, cluster_release, cluster_sync


def _regs(prog: Program, ins: Instr, o: Any, n: int) -> list[Reg | None]:
    items = list(o.items) if isinstance(o, Vec) else [o]
    if len(items) != n:
        raise prog.error(ins, f"{ins.opcode} moves {n} values, the operand has {len(items)}")
    out: list[Reg | None] = []
    for x in items:
        out.append(dest(prog, ins, x))
    return out


@handler("ld")
def _ld(prog: Program, ins: Instr, index: int) -> Step:
    space = space_of(ins)
    vec = vector_of(ins)
    t = types_of(ins)[-1]
    eb = TYPE_BITS[t] // 8
    if len(ins.operands) < 2:
        raise prog.error(ins, f"{ins.opcode} needs a destination and an address")
    regs = _regs(prog, ins, ins.operands[0], vec)
    addr_o = ins.operands[1]
    n = vec * eb
    if space == "param" and isinstance(addr_o, Addr) and isinstance(addr_o.base, Sym) and \
            addr_o.base.name not in prog.param_off:
        def run_retval(cta: CTA, m: np.ndarray | None) -> None:  # a call's return value (vprintf's): undefined
            for r in regs:
                if r is not None:
                    cta.put(r.id, np.uint64(0), np.full((cta.T, max(1, eb)), UNDEF, np.int64), m)
        return Step(ins, index, "op", run_retval)
    if space == "param":
        if not isinstance(addr_o, Addr) or not isinstance(addr_o.base, Sym) or addr_o.base.name not in prog.param_off:
            raise prog.error(ins, f"{ins.opcode}: expected [a parameter of {prog.fn.name} + offset]")
        off, size = prog.param_off[addr_o.base.name]
        start = off + addr_o.offset
        if addr_o.offset < 0 or addr_o.offset + n > size:
            raise prog.error(ins, f"{ins.opcode} reads bytes {addr_o.offset}..{addr_o.offset + n} of "
                                  f"{addr_o.base.name}, which has {size}")
        data = prog.params[start:start + n]

        def run_param(cta: CTA, m: np.ndarray | None) -> None:
            for k, r in enumerate(regs):
                if r is not None:
                    v = int.from_bytes(data[k * eb:(k + 1) * eb], "little")
                    cta.put(r.id, np.uint64(v), None, m)
        return Step(ins, index, "op", run_param)
    if space == "const":
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}' (.{space} memory)")

    def run(cta: CTA, m: np.ndarray | None) -> None:
        rows = rows_of(m, cta.T)
        addr = address(cta, addr_o, m)
        tags, bits = read_bytes(cta, ins, space, addr, n, rows)
        T = cta.T
        for k, r in enumerate(regs):
            if r is None:
                continue
            tk = np.full((T, eb), CONCRETE, np.int64)
            bk = np.zeros((T, eb), np.uint8)
            tk[rows] = tags[:, k * eb:(k + 1) * eb]
            bk[rows] = bits[:, k * eb:(k + 1) * eb]
            g = None if (tk == CONCRETE).all() else tk
            cta.put(r.id, from_bytes(bk), g, m)
    return Step(ins, index, "op", run)


@handler("st")
def _st(prog: Program, ins: Instr, index: int) -> Step:
    space = space_of(ins)
    vec = vector_of(ins)
    t = types_of(ins)[-1]
    eb = TYPE_BITS[t] // 8
    if len(ins.operands) != 2:
        raise prog.error(ins, f"{ins.opcode} needs an address and a value")
    addr_o, src = ins.operands
    items = list(src.items) if isinstance(src, Vec) else [src]
    if len(items) != vec:
        raise prog.error(ins, f"{ins.opcode} stores {vec} values, the operand has {len(items)}")
    if space == "param" and isinstance(addr_o, Addr) and isinstance(addr_o.base, Sym) and \
            addr_o.base.name not in prog.param_off:
        return Step(ins, index, "nop")  # an argument of a call (its call is what the executor follows or refuses)
    if space in ("param", "const"):
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}' (.{space} memory)")

    def run(cta: CTA, m: np.ndarray | None) -> None:
        rows = rows_of(m, cta.T)
        addr = address(cta, addr_o, m)
        write_bytes(cta, ins, space, addr, *source_bytes(cta, items, eb, rows), rows)
    return Step(ins, index, "op", run)


# ----------------------------------------------------------------------------- cp.async

@handler("cp")
def _cp(prog: Program, ins: Instr, index: int) -> Step:
    parts = ins.parts
    if len(parts) < 2 or parts[1] != "async":
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}'")
    rest = parts[2:]
    if rest and rest[0] == "commit_group":
        def commit(cta: CTA, m: np.ndarray | None) -> None:
            sm = cta.smem
            sm.groups.append(sm.open_group)
            sm.open_group = []
        return Step(ins, index, "op", commit, collective="cta")
    if rest and rest[0] in ("wait_group", "wait_all"):
        if rest[0] == "wait_all":
            keep = 0
        else:
            if len(ins.operands) != 1 or not isinstance(ins.operands[0], Imm):
                raise prog.error(ins, f"{ins.opcode} needs an immediate group count")
            keep = ins.operands[0].value
        wait_all = rest[0] == "wait_all"

        def wait(cta: CTA, m: np.ndarray | None) -> None:
            sm = cta.smem
            if wait_all:
                sm.groups.append(sm.open_group)
                sm.open_group = []
            while len(sm.groups) > keep:
                for c in sm.groups.pop(0):
                    complete(cta, c)
        return Step(ins, index, "op", wait, collective="cta")
    if not (rest and rest[0] in ("ca", "cg")):
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}'")
    ops = ins.operands
    if len(ops) < 3:
        raise prog.error(ins, f"{ins.opcode} needs [dst], [src], cp-size")
    dst_o, src_o, size_o = ops[0], ops[1], ops[2]
    if not isinstance(size_o, Imm) or size_o.value not in (4, 8, 16):
        raise prog.error(ins, f"{ins.opcode}: cp-size must be 4, 8 or 16")
    size = size_o.value
    src_size_o: Any = None
    ignore_o: Any = None
    for o in ops[3:]:
        if isinstance(o, Reg) and prog.widths[o.id] == 1:
            ignore_o = o
        elif src_size_o is None and isinstance(o, (Reg, Imm)) and not (isinstance(o, Reg) and prog.widths[o.id] == 64):
            src_size_o = o

    def run(cta: CTA, m: np.ndarray | None) -> None:
        rows = rows_of(m, cta.T)
        dst = address(cta, dst_o, m)
        src = address(cta, src_o, m)
        if src_size_o is not None:
            ss, u = cta.int_value(src_size_o, 32, False, m, "a source size")
            if u is not None:
                raise prog.error(ins, f"{ins.opcode}: the source size is undefined")
            ss = np.broadcast_to(np.asarray(ss, U64), (cta.T,)).astype(np.int64)[rows]
        else:
            ss = np.full(len(rows), size, np.int64)
        if ignore_o is not None:
            ss = np.where(cta.pred(ignore_o)[rows], 0, ss)
        if (ss > size).any():
            raise prog.error(ins, f"{ins.opcode}: source size {int(ss.max())} is larger than cp-size {size}")
        tags = np.full((len(rows), size), CONCRETE, np.int64)
        bits = np.zeros((len(rows), size), np.uint8)
        for s in np.unique(ss):
            if s <= 0:
                continue
            sel = ss == s
            t, b = read_global(cta, ins, src, int(s), rows[sel])
            tags[sel, :s] = t
            bits[sel, :s] = b
        sm = cta.smem
        d = dst[rows].astype(np.int64)
        c = Copy(index, d, rows, tags, bits)
        inside = (d >= 0) & (d + size <= sm.size)
        idx = d[inside][:, None] + np.arange(size)[None, :]
        if idx.size:
            write_after_read(cta, index, idx, cta.warp[rows][inside], rows[inside], d[inside],
                              "cp.async (warp {}) overwrites")
            np.add.at(sm.pending, idx.reshape(-1), 1)
            sm.pending_instr[idx.reshape(-1)] = index
        sm.open_group.append(c)
    return Step(ins, index, "op", run)


def complete(cta: CTA, c: Copy) -> None:
    """A copy's bytes land in shared memory (at the ``wait_group`` that completes its group)."""
    sm = cta.smem
    size = c.tags.shape[1]
    inside = (c.dst >= 0) & (c.dst + size <= sm.size)
    idx = c.dst[inside][:, None] + np.arange(size)[None, :]
    if idx.size:
        np.subtract.at(sm.pending, idx.reshape(-1), 1)
    addr = np.zeros(cta.T, U64)
    addr[c.threads] = c.dst.astype(np.uint64)
    saved = cta.step
    cta.step = cta.prog.steps[c.instr]
    try:
        write_shared(cta, cta.step.instr, addr, c.tags, c.bits, c.threads, c.instr, proxy="cp.async")
    finally:
        cta.step = saved


# ----------------------------------------------------------------------------- barriers, fences, hints

@handler("bar", "barrier")
def _bar(prog: Program, ins: Instr, index: int) -> Step:
    parts = ins.parts
    if parts[1:2] == ("cluster",):
        # barrier.cluster.arrive/wait: every thread of the cluster's CTAs meets.  A cluster's CTAs run together
        # (``machine.run_cluster``): the CTA's threads arrive together (an aligned collective), and its wait parks
        # them until every CTA of the cluster has arrived as often; a cluster of one CTA orders its own threads
        if "arrive" in parts:
            def cluster_arrive(cta: CTA, m: np.ndarray | None) -> None:
                cta.cluster_arrived += 1
                if cta.cluster is not None:
                    cluster_sync(cta).arrivals.append(cluster_release(cta))
            return Step(ins, index, "op", cluster_arrive, collective="cta")

        def cluster_wait(cta: CTA, m: np.ndarray | None) -> None:
            cl = cta.cluster
            if cl is not None:
                need = cta.cluster_waited + 1
                late = [c for r, c in sorted(cl.ctas.items()) if r not in cl.done and c.cluster_arrived < need]
                if late:
                    if cta.peers:
                        cta.park = cta.here.copy() if cta.here is not None else np.ones(cta.T, bool)
                        return
                    raise cta.prog.error(ins, f"{ins.opcode}: CTA rank {late[0].rank} of the cluster never arrives "
                                              f"at barrier.cluster #{need} (the kernel would hang){cl.blocked(cta)}")
            cta.cluster_waited += 1
            cta.smem.epoch += 1
            if cl is not None:  # what every CTA released at its arrival is ordered before this CTA's later accesses
                for c in cl.ctas.values():
                    arrivals = cluster_sync(c).arrivals
                    if len(arrivals) >= cta.cluster_waited:
                        cluster_acquire(cta, arrivals[cta.cluster_waited - 1])
        return Step(ins, index, "op", cluster_wait, collective="cta")
    if "arrive" in parts or "red" in parts or "warp" in parts:
        if "warp" in parts:  # bar.warp.sync: a warp's lanes meet; no effect on values
            return Step(ins, index, "op", lambda cta, m: None, collective="warp")
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}'")
    if len(ins.operands) > 1:
        cnt = ins.operands[1]
        if not isinstance(cnt, Imm) or cnt.value != prog.launch.threads:
            raise prog.error(ins, f"{ins.opcode}: a named barrier for part of the CTA is not supported")

    def run(cta: CTA, m: np.ndarray | None) -> None:
        cta.smem.epoch += 1
    return Step(ins, index, "op", run, collective="cta")


@handler("call")
def _call(prog: Program, ins: Instr, index: int) -> Step:
    """``call __assertfail`` (a device ``assert`` that failed: the kernel traps) is an error where it runs; ``vprintf``
    has no effect on values; any other call is not followed."""
    target = next((o.name for o in ins.operands if isinstance(o, Sym)), "")
    if target == "vprintf":
        return Step(ins, index, "nop")
    if target not in ("__assertfail", "__assert_fail"):
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}' (a call of {target or 'a function'}: the "
                              "executor runs one kernel body)")

    def run(cta: CTA, m: np.ndarray | None) -> None:
        t = 0 if m is None else int(np.argmax(m))
        raise prog.error(ins, f"the kernel calls {target} (CTA {cta.index}, thread {t}): a device assert fails here, "
                              "and the kernel traps")
    return Step(ins, index, "op", run)


def _nop(prog: Program, ins: Instr, index: int) -> Step:
    return Step(ins, index, "nop")


for _name in ("membar", "fence", "prefetch", "prefetchu", "nanosleep", "pmevent", "discard", "applypriority"):
    HANDLERS[_name] = _nop


@handler("fence")
def _fence(prog: Program, ins: Instr, index: int) -> Step:
    """``fence.proxy.async`` (for shared memory, or every state space): what the generic proxy wrote before it is
    ordered before the asynchronous proxy's later reads: the bytes its threads wrote, and the bytes written before
    the last barrier (which ordered them before the fence).  Other fences have no effect on values."""
    parts = ins.parts
    if len(parts) < 3 or parts[1:3] != ("proxy", "async") or (len(parts) > 3 and not parts[3].startswith("shared")):
        return Step(ins, index, "nop")

    def run(cta: CTA, m: np.ndarray | None) -> None:
        sm = cta.smem
        if not sm.unfenced.any():
            return
        idx = np.flatnonzero(sm.unfenced)
        if m is None:
            sm.unfenced[idx] = False
            return
        writer = (sm.writer[idx] >> 24) & 0xFFFF
        done = m[np.clip(writer, 0, cta.T - 1)] | (sm.w_epoch[idx] < sm.epoch)
        sm.unfenced[idx[done]] = False
    return Step(ins, index, "op", run)


__all__ = ["complete"]
