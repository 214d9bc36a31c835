"""Warp-collective instructions: ``ldmatrix``, ``stmatrix``, ``movmatrix``, ``shfl.sync`` and ``mma.sync``.

Their meaning is the catalog's (``verify.kernel.fragments``): ``ldmatrix`` element ``(lane, i)`` is element ``col``
of the row whose address lane ``row`` supplies; ``mma`` multiplies the operands the A, B and C layouts say.  The
value domain (atoms and sums, or random integers) does the arithmetic of ``mma`` (``domain.mma``).
"""
from __future__ import annotations

import numpy as np

from ..ptx.syntax import Imm, Instr, Reg, Vec
from .bytes import CONCRETE, U64, from_bytes, to_bytes
from .fragments import NoLayout, Operand, matrix_load, mma_form, sparse_mma_form, transpose_form
from .machine import CTA, Program, Step, whole_groups
from .access import address, read_shared, write_shared
from .ops_base import dest, handler, value

FACE = {"symbolic": "vector", "numeric": "scalar"}


def _face(prog: Program) -> str:
    return FACE.get(getattr(prog.domain, "name", ""), "vector")


def _whole_warps(cta: CTA, ins: Instr, m: np.ndarray | None) -> np.ndarray:
    """The warps the instruction runs for; a warp with some lanes off is an error (``.aligned`` needs them all)."""
    return whole_groups(cta, ins, m)


def _regs(prog: Program, ins: Instr, o: object, n: int) -> list[Reg | None]:
    items = list(o.items) if isinstance(o, Vec) else [o]
    if len(items) != n:
        raise prog.error(ins, f"{ins.opcode}: expected {n} registers, found {len(items)}")
    return [dest(prog, ins, x) for x in items]


def _matrix_form(prog: Program, ins: Instr) -> tuple[int, Operand]:
    """``ldmatrix``/``stmatrix`` ``.<shape>.x<num>[.trans].b16``: (num, the catalog's layout)."""
    parts = ins.parts
    shape = next((p for p in parts[1:] if p.startswith("m") and "n" in p), "m8n8")
    num = next((int(p[1:]) for p in parts[1:] if p in ("x1", "x2", "x4")), 0)
    if not num:
        raise prog.error(ins, f"{ins.opcode}: no .num (.x1, .x2, .x4)")
    if "b16" not in parts:
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}' (only .b16 matrices)")
    if len(ins.operands) != 2:
        raise prog.error(ins, f"{ins.opcode} takes a register list and an address")
    try:
        return num, matrix_load(ins.base, shape, num, "trans" in parts, _face(prog))
    except NoLayout as e:
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}': {e}") from None


@handler("ldmatrix")
def _ldmatrix(prog: Program, ins: Instr, index: int) -> Step:
    num, form = _matrix_form(prog, ins)
    regs = _regs(prog, ins, ins.operands[0], num)
    addr_o = ins.operands[1]
    nrows = 8 * num
    # byte k of register j of lane l: element 2j + k // 2 (byte k % 2), which is memory row R, bytes 2C + k % 2
    el = np.arange(2 * num)
    R = form.row[:, el]  # [32, 2num]
    C = form.col[:, el]

    def run(cta: CTA, m: np.ndarray | None) -> None:
        warps = _whole_warps(cta, ins, m)
        addr = address(cta, addr_o, m)
        row_threads = (warps[:, None] * 32 + np.arange(nrows)[None, :]).reshape(-1)
        tags, bits = read_shared(cta, ins, addr, 16, row_threads)  # [W * nrows, 16]
        tags = tags.reshape(len(warps), nrows, 16)
        bits = bits.reshape(len(warps), nrows, 16)
        T = cta.T
        lanes = np.arange(32)
        for j, r in enumerate(regs):
            if r is None:
                continue
            rt = np.full((T, 4), CONCRETE, np.int64)
            rb = np.zeros((T, 4), np.uint8)
            for e in range(2):
                i = 2 * j + e
                rr, cc = R[:, i], C[:, i]
                for k in range(2):
                    t = tags[:, rr, 2 * cc + k]  # [W, 32]
                    b = bits[:, rr, 2 * cc + k]
                    th = (warps[:, None] * 32 + lanes[None, :]).reshape(-1)
                    rt[th, 2 * e + k] = t.reshape(-1)
                    rb[th, 2 * e + k] = b.reshape(-1)
            cta.put(r.id, from_bytes(rb), None if (rt == CONCRETE).all() else rt, m)
    return Step(ins, index, "op", run, collective="warp")


@handler("stmatrix")
def _stmatrix(prog: Program, ins: Instr, index: int) -> Step:
    num, form = _matrix_form(prog, ins)
    addr_o = ins.operands[0]
    srcs = list(ins.operands[1].items) if isinstance(ins.operands[1], Vec) else [ins.operands[1]]
    if len(srcs) != num:
        raise prog.error(ins, f"{ins.opcode}: expected {num} registers")
    nrows = 8 * num

    def run(cta: CTA, m: np.ndarray | None) -> None:
        warps = _whole_warps(cta, ins, m)
        addr = address(cta, addr_o, m)
        W = len(warps)
        tags = np.full((W, nrows, 16), -2, np.int64)
        bits = np.zeros((W, nrows, 16), np.uint8)
        th = (warps[:, None] * 32 + np.arange(32)[None, :])
        for j, o in enumerate(srcs):
            b, g = value(cta, o, 4)
            bb = to_bytes(np.broadcast_to(np.asarray(b, U64), (cta.T,)), 4)
            gg = np.full((cta.T, 4), CONCRETE, np.int64) if g is None else g
            for e in range(2):
                i = 2 * j + e
                rr, cc = form.row[:, i], form.col[:, i]
                for k in range(2):
                    tags[:, rr, 2 * cc + k] = gg[th, 2 * e + k]
                    bits[:, rr, 2 * cc + k] = bb[th, 2 * e + k]
        row_threads = (warps[:, None] * 32 + np.arange(nrows)[None, :]).reshape(-1)
        write_shared(cta, ins, addr, tags.reshape(-1, 16), bits.reshape(-1, 16), row_threads)
    return Step(ins, index, "op", run, collective="warp")


@handler("movmatrix")
def _movmatrix(prog: Program, ins: Instr, index: int) -> Step:
    if "trans" not in ins.parts or "b16" not in ins.parts:
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}'")
    try:
        a_form, d_form = transpose_form(_face(prog))
    except NoLayout as e:
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}': {e}") from None
    if len(ins.operands) != 2:
        raise prog.error(ins, f"{ins.opcode} takes two registers")
    d = dest(prog, ins, ins.operands[0])
    src = ins.operands[1]

    def run(cta: CTA, m: np.ndarray | None) -> None:
        warps = _whole_warps(cta, ins, m)
        b, g = value(cta, src, 4)
        bb = to_bytes(np.broadcast_to(np.asarray(b, U64), (cta.T,)), 4)
        gg = np.full((cta.T, 4), CONCRETE, np.int64) if g is None else g
        W = len(warps)
        th = warps[:, None] * 32 + np.arange(32)[None, :]
        mt = np.full((W, 8, 8, 2), -2, np.int64)
        mb = np.zeros((W, 8, 8, 2), np.uint8)
        for i in range(2):
            mt[:, a_form.row[:, i], a_form.col[:, i], :] = gg[th][:, :, 2 * i:2 * i + 2]
            mb[:, a_form.row[:, i], a_form.col[:, i], :] = bb[th][:, :, 2 * i:2 * i + 2]
        rt = np.full((cta.T, 4), CONCRETE, np.int64)
        rb = np.zeros((cta.T, 4), np.uint8)
        for i in range(2):  # D holds R = A^T: R[r, c] = A[c, r]
            rt[th.reshape(-1), 2 * i:2 * i + 2] = mt[:, d_form.col[:, i], d_form.row[:, i], :].reshape(-1, 2)
            rb[th.reshape(-1), 2 * i:2 * i + 2] = mb[:, d_form.col[:, i], d_form.row[:, i], :].reshape(-1, 2)
        if d is not None:
            cta.put(d.id, from_bytes(rb), None if (rt == CONCRETE).all() else rt, m)
    return Step(ins, index, "op", run, collective="warp")


@handler("shfl")
def _shfl(prog: Program, ins: Instr, index: int) -> Step:
    mode = next((p for p in ins.parts[1:] if p in ("up", "down", "bfly", "idx")), None)
    if mode is None or "sync" not in ins.parts:
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}' (shfl.sync.up/down/bfly/idx)")
    ops = ins.operands
    if len(ops) != 5:
        raise prog.error(ins, f"{ins.opcode} takes d[|p], a, b, c, membermask")
    from ..ptx.syntax import PredPair
    if isinstance(ops[0], PredPair):
        d, p_d = dest(prog, ins, ops[0].first), dest(prog, ins, ops[0].second)
    else:
        d, p_d = dest(prog, ins, ops[0]), None
    a_o, b_o, c_o = ops[1], ops[2], ops[3]

    def run(cta: CTA, m: np.ndarray | None) -> None:
        T = cta.T
        a, g = value(cta, a_o, 4)
        a = np.broadcast_to(np.asarray(a, U64), (T,))
        bv = np.broadcast_to(np.asarray(cta.int_value(b_o, 32, False, m, "a lane")[0], U64), (T,)).astype(np.int64) & 31
        cv = np.broadcast_to(np.asarray(cta.int_value(c_o, 32, False, m, "a clamp")[0], U64), (T,)).astype(np.int64)
        lane = cta.lane
        mask = (cv >> 8) & 31
        clamp = cv & 31
        max_lane = (lane & mask) | (clamp & ~mask)
        min_lane = lane & mask
        if mode == "up":
            j = lane - bv
            ok = j >= max_lane
        elif mode == "down":
            j = lane + bv
            ok = j <= max_lane
        elif mode == "bfly":
            j = lane ^ bv
            ok = j <= max_lane
        else:
            j = min_lane | (bv & ~mask)
            ok = j <= max_lane
        j = np.where(ok, j, lane)
        src = cta.warp * 32 + j
        active = np.ones(T, bool) if m is None else m
        inactive = ~active[np.clip(src, 0, T - 1)] & active
        if inactive.any():
            k = int(np.argmax(inactive))
            raise prog.error(ins, f"{ins.opcode}: thread {k} reads lane {int(j[k])}, which does not take part")
        bits = a[src]
        tags = None if g is None else g[src]
        if d is not None:
            cta.put(d.id, bits, tags, m)
        if p_d is not None:
            cta.put(p_d.id, ok, None, m)
    return Step(ins, index, "op", run, collective="warp")


@handler("mma")
def _mma(prog: Program, ins: Instr, index: int) -> Step:
    parts = ins.parts
    if "block_scale" in parts or any(p.startswith("kind::") for p in parts):
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}' (mma with .kind:: or .block_scale (sm_120) is "
                              "not executed yet)")
    if "sp" in parts or "sp::ordered_metadata" in parts:
        return _mma_sparse(prog, ins, index)
    if "sync" not in parts or "aligned" not in parts:
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}'")
    if "b1" in parts and "and" not in parts:  # popc(a AND b) is the sum of products of bits; popc(a XOR b) is not
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}' (.b1 is executed with .and.popc only)")
    shape = next((p for p in parts if p.startswith("m") and "n" in p and "k" in p), None)
    types = [p for p in parts if p in ("f16", "bf16", "tf32", "f32", "f64", "s8", "u8", "s4", "u4", "s32", "e4m3",
                                       "e5m2", "b1")]
    if shape is None or len(types) != 4:
        raise prog.error(ins, f"{ins.opcode}: expected .shape and four types (D, A, B, C)")
    dt, at, bt, ct = types
    layouts = [p for p in parts if p in ("row", "col")]
    try:
        form = mma_form(shape, dt, at, bt, ct, ".".join(layouts) if shape == "m8n8k4" else "", _face(prog))
    except NoLayout as e:
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}': {e}") from None
    if len(ins.operands) != 4:
        raise prog.error(ins, f"{ins.opcode} takes four register lists (D, A, B, C)")
    dregs = _regs(prog, ins, ins.operands[0], form.d.registers)
    ops = [list(o.items) if isinstance(o, Vec) else [o] for o in ins.operands[1:]]
    for o, f, name in zip(ops, (form.a, form.b, form.c), "ABC"):
        if len(o) != f.registers:
            raise prog.error(ins, f"{ins.opcode}: operand {name} has {len(o)} registers, the catalog's "
                                  f"{f.layout_id} has {f.registers}")

    def run(cta: CTA, m: np.ndarray | None) -> None:
        warps = _whole_warps(cta, ins, m)
        vals = []
        for o, f in zip(ops, (form.a, form.b, form.c)):
            nb = f.register_bits // 8
            vals.append([value(cta, x, nb) for x in o])
        out = prog.domain.mma(cta, index, form, warps, vals[0], vals[1], vals[2])
        for r, (bits, tags) in zip(dregs, out):
            if r is not None:
                cta.put(r.id, bits, tags, m)
    return Step(ins, index, "op", run, collective="warp")


def _mma_sparse(prog: Program, ins: Instr, index: int) -> Step:
    """``mma.sp[::ordered_metadata].sync.aligned.<shape>.row.col.<D>.<A>.<B>.<C> d, a, b, c, e, f``: A's stored
    elements are placed at the logical columns that the metadata ``e`` says (the catalog's sparse A and metadata
    layouts, the lanes the sparsity selector ``f`` names), the others of A are zero."""
    parts = ins.parts
    ordered = "sp::ordered_metadata" in parts
    if "sync" not in parts or "aligned" not in parts:
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}'")
    shape = next((p for p in parts if p.startswith("m") and "n" in p and "k" in p), None)
    types = [p for p in parts if p in ("f16", "bf16", "tf32", "f32", "s8", "u8", "s4", "u4", "s32", "e4m3", "e5m2",
                                       "e3m2", "e2m3", "e2m1")]
    if shape is None or len(types) != 4:
        raise prog.error(ins, f"{ins.opcode}: expected .shape and four types (D, A, B, C)")
    try:
        form = sparse_mma_form(shape, *types, face=_face(prog))
    except NoLayout as e:
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}': {e}") from None
    if len(ins.operands) != 6:
        raise prog.error(ins, f"{ins.opcode} takes four register lists (D, A, B, C), the metadata and the sparsity "
                              "selector")
    f_o = ins.operands[5]
    if not isinstance(f_o, Imm):
        raise prog.error(ins, f"{ins.opcode}: the sparsity selector must be a constant")
    sel = int(f_o.value)
    if sel not in form.selectors:
        raise prog.error(ins, f"{ins.opcode}: sparsity selector {sel} is not one of {list(form.selectors)} for "
                              f"{form.a.layout_id}")
    # the lane and nibble holding the metadata field of each (row, chunk), for this selector
    M = form.shape[0]
    chunks = int(form.chunk.max()) + 1
    owner = np.full((M, chunks), -1, np.int64)
    for lane in np.flatnonzero(form.selector == sel):
        for n in range(form.meta_row.shape[1]):
            r, c = int(form.meta_row[lane, n]), int(form.meta_chunk[lane, n])
            if 0 <= r < M and 0 <= c < chunks and owner[r, c] < 0:
                owner[r, c] = lane * 8 + n
    need = owner[form.a.row, form.chunk]  # [32, nA]
    if (need < 0).any():
        ln, i = (int(x) for x in np.argwhere(need < 0)[0])
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}': {form.a.layout_id}'s metadata layout gives no "
                              f"lane for row {int(form.a.row[ln, i])}, chunk {int(form.chunk[ln, i])} under "
                              f"selector {sel}")
    own_lane, own_nib = need // 8, need % 8
    allowed = np.zeros(16, bool)
    allowed[list(form.ordered if ordered else form.valid)] = True
    dregs = _regs(prog, ins, ins.operands[0], form.d.registers)
    ops = [list(o.items) if isinstance(o, Vec) else [o] for o in ins.operands[1:4]]
    for o, f, name in zip(ops, (form.a, form.b, form.c), "ABC"):
        if len(o) != f.registers:
            raise prog.error(ins, f"{ins.opcode}: operand {name} has {len(o)} registers, the catalog's "
                                  f"{f.layout_id} has {f.registers}")
    e_o = ins.operands[4]

    def run(cta: CTA, m: np.ndarray | None) -> None:
        warps = _whole_warps(cta, ins, m)
        ev, _ = cta.int_value(e_o, 32, False, m, "the sparse metadata")
        ev = np.broadcast_to(np.asarray(ev, U64), (cta.T,)).astype(np.int64)
        src = warps[:, None, None] * 32 + own_lane[None]  # [W, 32, nA]
        field = (ev[src] >> (4 * own_nib[None])) & 15
        bad = ~allowed[field]
        if bad.any():
            w, lane, i = (int(x) for x in np.argwhere(bad)[0])
            raise prog.error(ins, f"{ins.opcode}: warp {int(warps[w])}'s metadata for row {int(form.a.row[lane, i])}, "
                                  f"chunk {int(form.chunk[lane, i])} (lane {int(own_lane[lane, i])}, bits "
                                  f"{4 * int(own_nib[lane, i])}-{4 * int(own_nib[lane, i]) + 3}) is "
                                  f"{int(field[w, lane, i]):#06b}, not a valid "
                                  f"{'ordered ' if ordered else ''}metadata value")
        cols = np.asarray(form.logical(form.chunk[None], form.j[None], field), np.int64)  # type: ignore[operator]
        vals = []
        for o, f in zip(ops, (form.a, form.b, form.c)):
            nb = f.register_bits // 8
            vals.append([value(cta, x, nb) for x in o])
        out = prog.domain.mma(cta, index, form, warps, vals[0], vals[1], vals[2], a_cols=cols)
        for r, (bits, tags) in zip(dregs, out):
            if r is not None:
                cta.put(r.id, bits, tags, m)
    return Step(ins, index, "op", run, collective="warp")


def operand_registers(ins: Instr) -> list[list[str]]:
    """The register names of an mma's operand lists D, A, B, C (for the chain's words)."""
    return [[getattr(x, "name", "_") for x in (o.items if isinstance(o, Vec) else [o])] for o in ins.operands]


__all__ = ["operand_registers"]
