"""``tcgen05.ld`` and ``tcgen05.st`` (each warp's registers to and from its lane quarter of Tensor Memory, where the
catalog's ``tcgen05.<ld|st>.<shape>`` fragment puts them; ``.pack::16b``/``.unpack::16b`` through
``verify.kernel.tmem_pack``) and ``tcgen05.wait::ld``/``::st`` (a load's registers held until its wait; a store's
cells until the warp's wait, an MMA reading them before it a finding)."""
from __future__ import annotations

import re

import numpy as np

from ..ptx.syntax import Imm, Instr, Vec
from . import tmem_pack
from .bytes import CONCRETE, U64, UNDEF, from_bytes, to_bytes
from .fragments import NoLayout, tmem_access
from .machine import CTA, Program, Step, hold_registers, release_registers
from .ops_base import dest, value
from .ops_tcgen05 import LD_ST, _whole_warps, face_of, tmem, tmem_address, tmem_cells
from .tmem import COLS, TMEM_WINDOW, split


def _ld_st(prog: Program, ins: Instr, index: int, verb: str) -> Step:
    parts = ins.parts
    shape = next((p for p in parts if re.fullmatch(r"\d+x\d+bx?\d*", p)), None)
    num = next((int(p[1:]) for p in parts if re.fullmatch(r"x\d+", p)), None)
    if shape is None or num is None or "b32" not in parts:
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}' (.shape, .num and .b32)")
    packed = tmem_pack.packing(prog, ins, verb)  # .pack::16b / .unpack::16b: two 16-bit halves a register
    try:
        form = tmem_access(verb, shape, num, face_of(prog))
    except NoLayout as e:
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}': {e}") from None
    ops = list(ins.operands)
    if verb == "ld":
        regs_o, addr_o = ops[0], ops[1]
        rest = ops[2:]
    else:
        addr_o, regs_o = ops[0], ops[-1]
        rest = ops[1:-1]
    split_off = 2 * num if packed else num  # the catalog's second access, .num 32-bit columns (2 x .num packed) on
    if rest and not (len(rest) == 1 and isinstance(rest[0], Imm) and rest[0].value == split_off):
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}' (an immHalfSplitoff other than "
                              f"{'2 x .num' if packed else '.num'}, the catalog's)")
    items = list(regs_o.items) if isinstance(regs_o, Vec) else [regs_o]
    if len(items) != form.registers:
        raise prog.error(ins, f"{ins.opcode}: {len(items)} registers, the catalog's layout has {form.registers}")

    def run(cta: CTA, m: np.ndarray | None) -> None:
        warps = _whole_warps(cta, ins, m)
        t = tmem(cta)
        addr = tmem_address(cta, ins, addr_o, m)
        T = cta.T
        for w in (int(x) for x in warps):
            th = np.arange(w * 32, w * 32 + 32)
            a = addr[th]
            if (a != a[0]).any():
                raise prog.error(ins, f"{ins.opcode}: the lanes of warp {w} give different addresses")
            lane0, col0 = split(int(a[0]))
            if packed:  # [32, n, 2]: each register's lower and upper half
                cells = tmem_cells(cta, ins, index, t, (lane0 + form.row)[..., None].repeat(2, axis=-1),
                                   col0 + tmem_pack.columns(form.col), w, verb)
            else:
                cells = tmem_cells(cta, ins, index, t, lane0 + form.row, col0 + form.col, w, verb)  # [32, n]
            if verb == "st":
                for i, o in enumerate(items):
                    b, g = value(cta, o, 4)
                    b = np.broadcast_to(np.asarray(b, U64), (T,))[th]
                    tags = np.full((32, 4), CONCRETE, np.int64) if g is None else g[th]
                    at = tmem_pack.byte_addresses(cells[:, i]) if packed else \
                        (TMEM_WINDOW + 4 * cells[:, i]).astype(U64)
                    if prog.trace:
                        tags = prog.domain.moved(cta, index, th, tags, at, "tmem")
                    if packed:
                        tmem_pack.scatter(t, cells[:, i], tags, to_bytes(b, 4))
                    else:
                        t.write_now(cells[:, i], tags, to_bytes(b, 4))
                    t.stored[cells[:, i]] = th[:, None] if packed else th
                    t.stored_instr[cells[:, i]] = index
                continue
            flat = cells.reshape(-1)
            pend = t.pending[flat] > 0
            if pend.any():
                k = int(np.argmax(pend))
                src = prog.steps[int(t.pending_instr[flat[k]])].instr
                cta.prog.events.add("read_in_flight", index, cta.index, w * 32, int(flat[k]), "tmem",
                                    f"tcgen05.ld (warp {w}) reads Tensor Memory lane {int(flat[k]) // COLS}, column "
                                    f"{int(flat[k]) % COLS} before the tcgen05.{src.parts[1]} at line {src.line} that "
                                    "writes it has completed (no wait on the mbarrier of its tcgen05.commit between "
                                    "them)",
                                    int(pend.sum()))
            read = t.tags[flat][:, :tmem_pack.HALF] if packed else t.tags[flat]  # the bytes the load reads
            never = (read == UNDEF).all(axis=1) & ~pend
            if never.any():
                k = int(np.argmax(never))
                cta.prog.events.add("unwritten_read", index, cta.index, w * 32, int(flat[k]), "tmem",
                                    f"tcgen05.ld (warp {w}) reads Tensor Memory lane {int(flat[k]) // COLS}, column "
                                    f"{int(flat[k]) % COLS}, which nothing wrote", int(never.sum()))
            mine = np.zeros(T, bool)
            mine[th] = True
            for i, o in enumerate(items):
                r = dest(prog, ins, o)
                if r is None:
                    continue
                if packed:
                    tags, raw = tmem_pack.gather(t, cells[:, i])
                    at = tmem_pack.byte_addresses(cells[:, i])
                else:
                    tags, raw = t.tags[cells[:, i]], t.bits[cells[:, i]]
                    at = (TMEM_WINDOW + 4 * cells[:, i]).astype(U64)
                bits = from_bytes(raw)
                if prog.trace:
                    tags = prog.domain.moved(cta, index, th, tags, at, "tmem")
                full_b = np.zeros(T, U64)
                full_b[th] = bits
                full_t = np.full((T, 4), CONCRETE, np.int64)
                full_t[th] = tags
                cta.put_raw(r.id, full_b, None if (full_t == CONCRETE).all() else full_t,
                            mine if m is None else (m & mine))
                release_registers(cta, [r.id], mine, every=True)  # one tcgen05.ld in flight per register
                hold_registers(cta, [r.id], mine, index)
    return Step(ins, index, "op", run, collective="warp")


def _wait(prog: Program, ins: Instr, index: int, sub: str) -> Step:
    def run(cta: CTA, m: np.ndarray | None) -> None:
        warps = _whole_warps(cta, ins, m)
        mine = np.zeros(cta.T, bool)
        for w in warps:
            mine[int(w) * 32:int(w) * 32 + 32] = True
        if sub == "wait::ld":
            for r in list(cta.async_regs):
                if prog.steps[cta.async_regs[r][1]].instr.base == "tcgen05":
                    release_registers(cta, [r], mine, every=True)
        else:
            t = tmem(cta)
            done = (t.stored >= 0) & mine[np.clip(t.stored, 0, cta.T - 1)]
            t.stored[done] = -1
    return Step(ins, index, "op", run, collective="warp")


LD_ST.update({"ld": _ld_st, "st": _ld_st, "wait::ld": _wait, "wait::st": _wait})
