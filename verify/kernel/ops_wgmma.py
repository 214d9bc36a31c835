"""Warpgroup MMA: ``wgmma.fence``, ``wgmma.mma_async`` (A from registers or from shared memory, B from shared memory,
both through 64-bit matrix descriptors), ``wgmma.commit_group`` and ``wgmma.wait_group``.

The meaning is the catalog's (``verify.kernel.fragments``): the A register fragment and the D accumulator of the
shape's ``wgmma`` spec across the 128 threads of a warpgroup, and the shared-memory tile a descriptor makes the
hardware read (this project's descriptor model: start address, LBO, SBO, base offset and swizzle mode, the
canonical layout of the operand's majorness, the swizzle on address bits).  An ``mma_async`` reads its operands when
it is issued and writes its accumulators then; until a ``wgmma.wait_group`` completes its group, a read or write of
its accumulator or A registers by another instruction, and a write of the shared memory it reads, are findings, as
is a register another instruction wrote with no ``wgmma.fence`` before the ``mma_async`` that uses it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..ptx.syntax import Imm, Instr, Reg, Vec
from .fragments import BadDescriptor, NoLayout, WarpgroupForm, descriptor_addresses, wgmma_form
from .machine import CTA, Program, Step, hold_registers, release_registers, whole_groups
from .ops_int import dest, handler
from .ops_mem import hold, read_shared_async, release

GROUP = 128  # threads of a warpgroup
TYPES = ("f16", "bf16", "tf32", "f32", "e4m3", "e5m2", "s8", "u8", "s32", "b1")


def _face(prog: Program) -> str:
    return {"symbolic": "vector", "numeric": "scalar"}.get(getattr(prog.domain, "name", ""), "vector")


@dataclass
class Pending:
    """One ``mma_async`` in flight: its step, the threads (a warpgroup), the registers it writes or reads, the
    shared-memory bytes it reads."""

    index: int
    threads: np.ndarray
    regs: list[int]
    held: list[np.ndarray]


@dataclass
class WgState:
    """Per warpgroup: the ``mma_async`` of the open group, the committed groups not yet waited for, and whether a
    ``wgmma.fence`` has run."""

    open: dict[int, list[Pending]] = field(default_factory=dict)
    groups: dict[int, list[list[Pending]]] = field(default_factory=dict)
    fenced: set[int] = field(default_factory=set)


def _state(cta: CTA) -> WgState:
    st = cta.state.get("wgmma")
    if st is None:
        st = cta.state["wgmma"] = WgState()
    return st


def warpgroups(cta: CTA, ins: Instr, m: np.ndarray | None) -> np.ndarray:
    """The warpgroups an ``.aligned`` warpgroup instruction runs for; part of a warpgroup is an error."""
    return whole_groups(cta, ins, m, GROUP, "threads", "warpgroup")


def complete(cta: CTA, p: Pending) -> None:
    """An ``mma_async`` completes: its registers and shared-memory bytes are free again."""
    release_registers(cta, p.regs, p.threads)
    for idx in p.held:
        release(cta, idx)


def uniform(cta: CTA, ins: Instr, o: Any, g: int, m: np.ndarray | None, what: str) -> int:
    """The value of a 64-bit operand that every thread of warpgroup ``g`` must give alike (a descriptor)."""
    v, undef = cta.int_value(o, 64, False, m, what)
    v = np.broadcast_to(np.asarray(v, np.uint64), (cta.T,))[g * GROUP:(g + 1) * GROUP]
    if undef is not None and undef[g * GROUP:(g + 1) * GROUP].any():
        raise cta.prog.error(ins, f"{ins.opcode}: {what} {getattr(o, 'name', '')} is undefined in warpgroup {g}")
    if (v != v[0]).any():
        t = int(np.argmax(v != v[0]))
        raise cta.prog.error(ins, f"{ins.opcode}: the threads of warpgroup {g} give different {what}s "
                                  f"({int(v[0]):#x} and {int(v[t]):#x} in thread {g * GROUP + t})")
    return int(v[0])


def _regs(prog: Program, ins: Instr, o: Any, n: int, what: str) -> list[Reg]:
    items = list(o.items) if isinstance(o, Vec) else [o]
    if len(items) != n:
        raise prog.error(ins, f"{ins.opcode}: {what} has {len(items)} registers, the catalog's layout {n}")
    out = []
    for x in items:
        r = dest(prog, ins, x)
        if r is None:
            raise prog.error(ins, f"{ins.opcode}: {what} cannot discard a register")
        out.append(r)
    return out


def _imm(prog: Program, ins: Instr, o: Any, allowed: tuple[int, ...], what: str) -> int:
    if not isinstance(o, Imm) or o.value not in allowed:
        raise prog.error(ins, f"{ins.opcode}: {what} must be one of {', '.join(map(str, allowed))}")
    return o.value


@handler("wgmma")
def _wgmma(prog: Program, ins: Instr, index: int) -> Step:
    parts = ins.parts
    sub = parts[1] if len(parts) > 1 else ""
    if "sync" not in parts or "aligned" not in parts:
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}'")
    if sub == "fence":
        return Step(ins, index, "op", lambda cta, m: _fence(cta, ins, m), collective="warp")
    if sub == "commit_group":
        return Step(ins, index, "op", lambda cta, m: _commit(cta, ins, m), collective="warp")
    if sub == "wait_group":
        if len(ins.operands) != 1 or not isinstance(ins.operands[0], Imm):
            raise prog.error(ins, f"{ins.opcode} needs an immediate group count")
        keep = ins.operands[0].value
        return Step(ins, index, "op", lambda cta, m: _wait(cta, ins, m, keep), collective="warp")
    if sub != "mma_async":
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}'")
    if "sp" in parts:
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}' (sparse wgmma is not executed yet)")
    return _mma_async(prog, ins, index)


def _fence(cta: CTA, ins: Instr, m: np.ndarray | None) -> None:
    gs = warpgroups(cta, ins, m)
    st = _state(cta)
    st.fenced.update(int(g) for g in gs)
    if cta.fence_dirty:
        keep = np.ones(cta.T, bool)
        for g in gs:
            keep[g * GROUP:(g + 1) * GROUP] = False
        for r in list(cta.fence_dirty):
            left = cta.fence_dirty[r] & keep
            if left.any():
                cta.fence_dirty[r] = left
            else:
                del cta.fence_dirty[r]


def _commit(cta: CTA, ins: Instr, m: np.ndarray | None) -> None:
    st = _state(cta)
    for g in (int(x) for x in warpgroups(cta, ins, m)):
        st.groups.setdefault(g, []).append(st.open.pop(g, []))


def _wait(cta: CTA, ins: Instr, m: np.ndarray | None, keep: int) -> None:
    st = _state(cta)
    for g in (int(x) for x in warpgroups(cta, ins, m)):
        groups = st.groups.get(g, [])
        while len(groups) > keep:
            for p in groups.pop(0):
                complete(cta, p)


def _mma_async(prog: Program, ins: Instr, index: int) -> Step:
    parts = ins.parts
    shape = next((p for p in parts if re.fullmatch(r"m\d+n\d+k\d+", p)), None)
    types = [p for p in parts[2:] if p in TYPES]
    if shape is None or len(types) != 3:
        raise prog.error(ins, f"{ins.opcode}: expected .shape and three types (D, A, B)")
    dt, at, bt = types
    try:
        form = wgmma_form(shape, dt, at, bt, _face(prog))
    except NoLayout as e:
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}': {e}") from None
    ops = ins.operands
    a_regs_given = len(ops) > 1 and isinstance(ops[1], Vec)
    halves = at in ("f16", "bf16")
    integer = at in ("s8", "u8")
    want = 4 if integer else (6 + (0 if not halves else (1 if a_regs_given else 2)))
    if len(ops) != want:
        raise prog.error(ins, f"{ins.opcode} takes {want} operands here (d, a, b-desc, scale-d"
                              f"{'' if integer else ', imm-scale-a, imm-scale-b'}"
                              f"{', imm-trans-a' if halves and not a_regs_given else ''}{', imm-trans-b' if halves else ''})"
                              f", found {len(ops)}")
    M, N, K = form.shape
    dregs = _regs(prog, ins, ops[0], form.d.registers, "D")
    aregs = _regs(prog, ins, ops[1], form.a.registers, "A") if a_regs_given else None
    a_o, b_o, sd_o = ops[1], ops[2], ops[3]
    if not integer:
        for o, what in ((ops[4], "imm-scale-a"), (ops[5], "imm-scale-b")):
            if _imm(prog, ins, o, (1, -1), what) == -1:
                raise prog.error(ins, f"unsupported instruction '{ins.opcode}': {what} = -1 (negated products) is not "
                                      "executed")
    trans_a = _imm(prog, ins, ops[6], (0, 1), "imm-trans-a") if halves and not a_regs_given else 0
    trans_b = _imm(prog, ins, ops[-1], (0, 1), "imm-trans-b") if halves else 0
    major_a = "MN" if trans_a else "K"
    major_b = "MN" if trans_b else "K"
    d_eb = form.d.element_bits // 8
    a_eb, b_eb = form.a_bits // 8, form.b_bits // 8
    face = _face(prog)
    prog.tracks_fences = True

    def read_desc(cta: CTA, g: int, value: int, major: str, bits: int, rows: int, what: str) -> tuple[np.ndarray, Any]:
        try:
            addr = descriptor_addresses("wgmma", value, major, bits, rows, K, face)
        except BadDescriptor as e:
            raise prog.error(ins, f"{ins.opcode}: the {what} descriptor {value:#018x} (warpgroup {g}) cannot be read: "
                                  f"{e}") from None
        warps = np.arange(g * 4, g * 4 + 4)
        tags, bits_ = read_shared_async(cta, ins, addr.reshape(-1), bits // 8, warps, g * GROUP)
        return addr, prog.domain.elements(tags, bits_).reshape(rows, K)

    def run(cta: CTA, m: np.ndarray | None) -> None:
        gs = warpgroups(cta, ins, m)
        W = len(gs)
        dom = prog.domain
        st = _state(cta)
        sd = cta.pred(sd_o) if not isinstance(sd_o, Imm) else np.full(cta.T, bool(sd_o.value))
        threads = (gs[:, None] * GROUP + np.arange(GROUP)[None, :])
        dvals = dom.register_elements([cta.get_raw(r.id) for r in dregs], d_eb, form.d.per_register, cta.T)
        avals = dom.register_elements([cta.get_raw(r.id) for r in aregs], a_eb, form.a.per_register, cta.T) \
            if aregs is not None else None
        A = dom.zeros((W, M, K))
        B = dom.zeros((W, K, N))
        C = dom.zeros((W, M, N))
        info = np.zeros((W, 5), np.int64)
        for w, g in enumerate(int(x) for x in gs):
            th = threads[w]
            mine = np.zeros(cta.T, bool)
            mine[th] = True
            s = sd[th]
            if s.any() and not s.all():
                raise prog.error(ins, f"{ins.opcode}: scale-d differs between the threads of warpgroup {g}")
            _fence_check(cta, ins, index, g, mine, dregs + (aregs or []))
            held: list[np.ndarray] = []
            if aregs is not None:
                A[w, form.a.row, form.a.col] = avals[th]
                a_desc = -1
            else:
                a_desc = uniform(cta, ins, a_o, g, m, "A descriptor")
                addr, vals = read_desc(cta, g, a_desc, major_a, form.a_bits, M, "A")
                A[w] = vals
                held.append(hold(cta, addr, a_eb, index))
            b_desc = uniform(cta, ins, b_o, g, m, "B descriptor")
            addr, vals = read_desc(cta, g, b_desc, major_b, form.b_bits, N, "B")
            B[w] = vals.T
            held.append(hold(cta, addr, b_eb, index))
            if s[0]:
                C[w, form.d.row, form.d.col] = dvals[th]
            info[w] = (index, cta.index, g, np.uint64(a_desc % (1 << 64)).view(np.int64),
                       np.uint64(b_desc).view(np.int64))
            regs = [r.id for r in dregs] + [r.id for r in (aregs or [])]
            hold_registers(cta, regs, mine, index)
            st.open.setdefault(g, []).append(Pending(index, mine, regs, held))
        D = dom.matmul(cta, index, "wgmma", A, B, C, d_eb, info)
        out = dom.register_bytes(D, threads, form.d.row, form.d.col, form.d.per_register, d_eb, 4, cta.T)
        for r, (bits, tags) in zip(dregs, out):
            cta.put_raw(r.id, bits, tags, m)
    return Step(ins, index, "op", run, collective="warp")


def _fence_check(cta: CTA, ins: Instr, index: int, g: int, mine: np.ndarray, regs: list[Reg]) -> None:
    """A finding when warpgroup ``g`` uses registers other instructions wrote with no ``wgmma.fence`` since (or has
    run no ``wgmma.fence`` at all)."""
    st = _state(cta)
    dirty = cta.fence_dirty or {}
    for r in regs:
        hit = dirty.get(r.id)
        if hit is not None and (hit & mine).any() or g not in st.fenced:
            t = int(np.argmax(mine))
            cta.prog.events.add("wgmma_fence_missing", index, cta.index, t, 0, "register",
                                f"wgmma.mma_async (warpgroup {g}) uses {r.name}, which another instruction wrote with no "
                                "wgmma.fence between them" if g in st.fenced else
                                f"wgmma.mma_async (warpgroup {g}) runs before any wgmma.fence", 1)
            return


def form_of(ins: Instr) -> WarpgroupForm:
    """The catalog's form of a ``wgmma.mma_async`` (for the chain's words)."""
    parts = ins.parts
    shape = next(p for p in parts if re.fullmatch(r"m\d+n\d+k\d+", p))
    dt, at, bt = [p for p in parts[2:] if p in TYPES]
    return wgmma_form(shape, dt, at, bt)


__all__ = ["GROUP", "form_of", "warpgroups"]
