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
from .fragments import NoLayout, SparseWarpgroupForm, WarpgroupForm, sparse_wgmma_form, wgmma_form
from .descriptors import BadDescriptor, descriptor_addresses, descriptor_bit_addresses
from .machine import CTA, Program, Step, hold_registers, release_registers, whole_groups
from .access import hold, read_shared_async, release
from .ops_base import dest, handler
from .subbyte import read_packed

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


@dataclass(frozen=True)
class _MmaAsync:
    """A ``wgmma.mma_async``'s form and operands, decoded once from its text."""

    form: WarpgroupForm | SparseWarpgroupForm
    dregs: list[Reg]
    aregs: list[Reg] | None  # A in registers, or None: A by its descriptor
    a_o: Any
    b_o: Any
    sd_o: Any
    major_a: str
    major_b: str
    d_eb: int
    a_eb: int
    b_eb: int
    a_cols: int  # A's tile in shared memory: M x a_cols
    place: SparsePlacement | None
    face: Any


def _decode_mma_async(prog: Program, ins: Instr) -> _MmaAsync:
    """A ``wgmma.mma_async``'s shape, types and operands checked and decoded (errors at the line)."""
    parts = ins.parts
    sparse = "sp" in parts
    shape = next((p for p in parts if re.fullmatch(r"m\d+n\d+k\d+", p)), None)
    types = [p for p in parts[2:] if p in TYPES]
    if shape is None or len(types) != 3:
        raise prog.error(ins, f"{ins.opcode}: expected .shape and three types (D, A, B)")
    dt, at, bt = types
    if at == "b1" and ("and" not in parts or "popc" not in parts):  # popc(a AND b) is a sum of products of bits
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}' (.b1 is executed with .and.popc only: "
                              "popc(a XOR b) is not a sum of products)")
    form: WarpgroupForm | SparseWarpgroupForm
    try:
        form = sparse_wgmma_form(shape, dt, at, bt, _face(prog)) if sparse else wgmma_form(shape, dt, at, bt,
                                                                                            _face(prog))
    except NoLayout as e:
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}': {e}") from None
    ops = ins.operands
    a_regs_given = len(ops) > 1 and isinstance(ops[1], Vec)
    halves = at in ("f16", "bf16")
    integer = at in ("s8", "u8", "b1")
    x = 2 if sparse else 0  # sp-meta and sp-sel come after b-desc
    want = 4 + x if integer else (6 + x + (0 if not halves else (1 if a_regs_given else 2)))
    if len(ops) != want:
        raise prog.error(ins, f"{ins.opcode} takes {want} operands here (d, a, b-desc, "
                              f"{'sp-meta, sp-sel, ' if sparse else ''}scale-d"
                              f"{'' if integer else ', imm-scale-a, imm-scale-b'}"
                              f"{', imm-trans-a' if halves and not a_regs_given else ''}{', imm-trans-b' if halves else ''})"
                              f", found {len(ops)}")
    K = form.shape[2]
    dregs = _regs(prog, ins, ops[0], form.d.registers, "D")
    aregs = _regs(prog, ins, ops[1], form.a.registers, "A") if a_regs_given else None
    a_o, b_o, sd_o = ops[1], ops[2], ops[3 + x]
    if not integer:
        for o, what in ((ops[4 + x], "imm-scale-a"), (ops[5 + x], "imm-scale-b")):
            if _imm(prog, ins, o, (1, -1), what) == -1:
                raise prog.error(ins, f"unsupported instruction '{ins.opcode}': {what} = -1 (negated products) is not "
                                      "executed")
    trans_a = _imm(prog, ins, ops[6 + x], (0, 1), "imm-trans-a") if halves and not a_regs_given else 0
    trans_b = _imm(prog, ins, ops[-1], (0, 1), "imm-trans-b") if halves else 0
    major_a = "MN" if trans_a else "K"
    major_b = "MN" if trans_b else "K"
    d_eb = form.d.element_bits // 8
    a_eb, b_eb = max(form.a_bits // 8, 1), max(form.b_bits // 8, 1)  # bytes held (a byte of packed .b1)
    face = _face(prog)
    a_cols = form.stored_cols if isinstance(form, SparseWarpgroupForm) else K  # A's tile in shared memory: M x a_cols
    place = _sparse_placement(prog, ins, form, ops[3], ops[4]) if isinstance(form, SparseWarpgroupForm) else None
    return _MmaAsync(form, dregs, aregs, a_o, b_o, sd_o, major_a, major_b, d_eb, a_eb, b_eb, a_cols, place, face)


def _read_desc(prog: Program, ins: Instr, face: Any, cta: CTA, g: int, value: int, major: str, bits: int, rows: int,
               cols: int, what: str) -> tuple[np.ndarray, Any]:
    """The shared-memory addresses a descriptor reads for warpgroup ``g`` and the elements there."""
    warps = np.arange(g * 4, g * 4 + 4)
    try:
        if bits < 8:  # packed .b1: each element at its bit address, read from its byte
            at_ = descriptor_bit_addresses("wgmma", value, major, bits, rows, cols, face)
            return read_packed(cta, ins, at_, bits, warps, g * GROUP)
        addr = descriptor_addresses("wgmma", value, major, bits, rows, cols, face)
    except BadDescriptor as e:
        raise prog.error(ins, f"{ins.opcode}: the {what} descriptor {value:#018x} (warpgroup {g}) cannot be read: "
                              f"{e}") from None
    tags, bits_ = read_shared_async(cta, ins, addr.reshape(-1), bits // 8, warps, g * GROUP)
    return addr, prog.domain.elements(tags, bits_).reshape(rows, cols)


def _mma_async(prog: Program, ins: Instr, index: int) -> Step:
    d = _decode_mma_async(prog, ins)
    form, dregs, aregs, place = d.form, d.dregs, d.aregs, d.place
    a_o, b_o, sd_o, d_eb, a_eb, b_eb = d.a_o, d.b_o, d.sd_o, d.d_eb, d.a_eb, d.b_eb
    M, N, K = form.shape
    prog.tracks_fences = True

    def run(cta: CTA, m: np.ndarray | None) -> None:
        gs = warpgroups(cta, ins, m)
        W = len(gs)
        dom = prog.domain
        st = _state(cta)
        sd = cta.pred(sd_o) if not isinstance(sd_o, Imm) else np.full(cta.T, bool(sd_o.value))
        threads = (gs[:, None] * GROUP + np.arange(GROUP)[None, :])
        dvals = dom.register_elements([cta.get_raw(r.id) for r in dregs], d_eb, form.d.per_register, cta.T)
        avals = None
        if aregs is not None and form.a_bits < 8:  # packed .b1: ``per_register`` elements from the low bits
            avals = dom.packed_ids([cta.get_raw(r.id) for r in aregs], form.a_bits, form.a.per_register, cta.T)
        elif aregs is not None:
            avals = dom.register_elements([cta.get_raw(r.id) for r in aregs], a_eb, form.a.per_register, cta.T)
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
            fields = place.fields(cta, g, m) if place is not None else None
            if avals is not None:  # A in registers (``aregs``)
                if place is not None and fields is not None:  # the stored elements at the logical columns the metadata gives
                    A[w, form.a.row, place.register_cols(fields)] = avals[th]
                else:
                    A[w, form.a.row, form.a.col] = avals[th]
                a_desc = -1
            else:
                a_desc = uniform(cta, ins, a_o, g, m, "A descriptor")
                addr, vals = _read_desc(prog, ins, d.face, cta, g, a_desc, d.major_a, form.a_bits, M, d.a_cols, "A")
                if place is not None and fields is not None:
                    A[w, np.arange(M)[:, None], place.tile_cols(fields)] = vals
                else:
                    A[w] = vals
                held.append(hold(cta, addr, a_eb, index))
            b_desc = uniform(cta, ins, b_o, g, m, "B descriptor")
            addr, vals = _read_desc(prog, ins, d.face, cta, g, b_desc, d.major_b, form.b_bits, N, K, "B")
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


@dataclass
class SparsePlacement:
    """Where a ``wgmma.mma_async.sp`` puts A's stored elements: for each (row, chunk) of A the thread of the
    warpgroup and the nibble of its metadata register that hold its field under the instruction's sparsity selector
    (the catalog's metadata layout), and the logical column each stored element gets from its field."""

    prog: Program
    ins: Instr
    form: SparseWarpgroupForm
    meta: Any
    sel: int
    owner: np.ndarray  # int64[M, chunks]: thread * 8 + nibble

    def fields(self, cta: CTA, g: int, m: np.ndarray | None) -> np.ndarray:
        """The 4-bit metadata field of every (row, chunk) of warpgroup ``g``'s A, ``int64[M, chunks]``; a field that
        is undefined or not one of the valid values is an error naming it."""
        v, undef = self.cta_meta(cta, m)
        thr, nib = self.owner // 8, self.owner % 8
        f = (v[g * GROUP + thr] >> (4 * nib)) & 15
        bad = ~np.isin(f, self.form.valid)
        if undef is not None:
            bad |= undef[g * GROUP + thr]
        if bad.any():
            r, c = (int(x) for x in np.argwhere(bad)[0])
            t, n = int(thr[r, c]), int(nib[r, c])
            what = "undefined" if undef is not None and undef[g * GROUP + t] else \
                f"{int(f[r, c]):#06b}, not a valid metadata value"
            raise self.prog.error(self.ins, f"{self.ins.opcode}: warpgroup {g}'s metadata for row {r}, chunk {c} "
                                            f"(thread {g * GROUP + t}, bits {4 * n}-{4 * n + 3}) is {what}")
        return f

    def cta_meta(self, cta: CTA, m: np.ndarray | None) -> tuple[np.ndarray, np.ndarray | None]:
        v, undef = cta.int_value(self.meta, 32, False, m, "the sparse metadata")
        v = np.broadcast_to(np.asarray(v, np.uint64), (cta.T,)).astype(np.int64)
        return v, None if undef is None else np.broadcast_to(undef, (cta.T,))

    def register_cols(self, fields: np.ndarray) -> np.ndarray:
        """The logical column of each stored element of the A registers, ``[128, elements]``."""
        f = self.form
        return np.asarray(f.logical(f.chunk, f.j, fields[f.a.row, f.chunk]), np.int64)  # type: ignore[operator]

    def tile_cols(self, fields: np.ndarray) -> np.ndarray:
        """The logical column of each element of the compressed A tile a descriptor reads, ``[M, stored_cols]``."""
        f = self.form
        c = np.arange(f.stored_cols)
        chunk, j = c // f.kept, c % f.kept
        return np.asarray(f.logical(chunk[None, :], j[None, :], fields[:, chunk]), np.int64)  # type: ignore[operator]


def _sparse_placement(prog: Program, ins: Instr, form: SparseWarpgroupForm, meta: Any, sel_o: Any) -> SparsePlacement:
    """The placement of a ``wgmma.mma_async.sp``'s stored A elements under its (constant) sparsity selector."""
    if not isinstance(sel_o, Imm):
        raise prog.error(ins, f"{ins.opcode}: the sparsity selector must be a constant")
    sel = int(sel_o.value)
    if sel not in form.selectors:
        raise prog.error(ins, f"{ins.opcode}: sparsity selector {sel} is not one of {list(form.selectors)} for "
                              f"{form.a.layout_id}")
    M, chunks = form.shape[0], form.shape[2] // form.width
    owner = np.full((M, chunks), -1, np.int64)
    for t in np.flatnonzero(form.selector == sel):
        for n in range(form.meta_row.shape[1]):
            r, c = int(form.meta_row[t, n]), int(form.meta_chunk[t, n])
            if 0 <= r < M and 0 <= c < chunks and owner[r, c] < 0:
                owner[r, c] = t * 8 + n
    if (owner < 0).any():
        r, c = (int(x) for x in np.argwhere(owner < 0)[0])
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}': {form.a.layout_id}'s metadata layout gives no "
                              f"thread for row {r}, chunk {c} under selector {sel}")
    owner.setflags(write=False)
    return SparsePlacement(prog, ins, form, meta, sel, owner)


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


def form_of(ins: Instr) -> WarpgroupForm | SparseWarpgroupForm:
    """The catalog's form of a ``wgmma.mma_async`` or ``wgmma.mma_async.sp`` (for the chain's words)."""
    parts = ins.parts
    shape = next(p for p in parts if re.fullmatch(r"m\d+n\d+k\d+", p))
    dt, at, bt = [p for p in parts[2:] if p in TYPES]
    return sparse_wgmma_form(shape, dt, at, bt) if "sp" in parts else wgmma_form(shape, dt, at, bt)


__all__ = ["GROUP", "form_of", "warpgroups"]
