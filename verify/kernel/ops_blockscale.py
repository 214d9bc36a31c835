"""Block-scaled ``tcgen05.mma`` (``kind::mxf8f6f4``, ``mxf4``, ``mxf4nvf4`` with ``.block_scale``): each product
carries the scale factor of its A element's K block and of its B element's, read from Tensor Memory where the
catalog's scale-factor layouts say (``tcgen05.sf.A.4x1``, ``tcgen05.sf.B.4x1``: the K block ``SF_ID + j`` of the
MMA's scale-factor ids from the instruction descriptor, each lane quarter reading its own copy of B's factors), so a
launch's ``computes`` can say ``C[m, n] = A[m, k] * B[k, n] * SFA[m, k / 32] * SFB[n, k / 32]``.  The number of
scale factors per row (``.scale_vec::NX`` or its ``.blockN`` alias) is the catalog's ``tcgen05.scale_vec.kinds``
(Table 55): a spelling the kind does not take (``kind::mxf4`` with ``.block16``) is an error at its line.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..ptx.syntax import Addr, Imm, Instr
from .fragments import SCALE_QUALIFIERS, NoLayout, datapath, scale_cells, scale_factor_ids, scale_vectors
from .descriptors import BadDescriptor, descriptor_bit_addresses
from .machine import CTA, Program, Step
from .access import hold
from .subbyte import read_packed, smem_bits
from .ops_tcgen05 import BLOCK_SCALED, tmem_cells, face_of, thread_rows, tmem_address, mma_operands, read_desc, tmem
from .tmem import CELL, TMEM_WINDOW, split

def block_scaled_mma(prog: Program, ins: Instr, index: int, kind: str) -> Step:
    parts = ins.parts
    if "ws" in parts:
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}' (.ws)")
    ops = list(ins.operands)
    if len(ops) != 7 or not isinstance(ops[4], Addr) or not isinstance(ops[5], Addr):
        raise prog.error(ins, f"{ins.opcode} takes [d-tmem], a-desc, b-desc, idesc, [scale-A-tmem], [scale-B-tmem], "
                              "enable-input-d")
    d_o, a_o, b_o, i_o, sa_o, sb_o, en_o = ops
    if isinstance(a_o, Addr):
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}' (A in Tensor Memory is not executed yet)")
    vs = _scale_vector(prog, ins, kind)
    face = face_of(prog)

    def run(cta: CTA, m: np.ndarray | None) -> None:
        dom = prog.domain
        tm = tmem(cta)
        en = cta.pred(en_o) if not isinstance(en_o, Imm) else np.full(cta.T, bool(en_o.value))
        for t in (int(x) for x in thread_rows(m, cta.T)):
            dv, av, bv, iv, idesc = mma_operands(cta, ins, index, t, kind, d_o, a_o, b_o, i_o, m, False)
            M, N, K = idesc.m, idesc.n, idesc.k
            bits = [smem_bits(x) for x in (idesc.atype, idesc.btype)]
            if idesc.negate_a or idesc.negate_b:
                raise prog.error(ins, f"{ins.opcode} (thread {t}): negated operands are not executed")
            size = K // vs  # the K elements of one scale factor's block (K = 32 or 64: the kind's, IDESC_K)
            try:
                dp = datapath(M, N, 1, False, False, 0, face)
                sfa = scale_cells("A", vs, M, face)
                sfb = scale_cells("B", vs, N, face)
                ids, stypes = scale_factor_ids(vs)
            except NoLayout as e:
                raise prog.error(ins, f"{ins.opcode} (thread {t}): {e}") from None
            bad = [f"{x} {v}" for x, v in (("SFA_ID", idesc.sfa_id), ("SFB_ID", idesc.sfb_id)) if v not in ids]
            if bad:
                raise prog.error(ins, f"{ins.opcode} (thread {t}): the instruction descriptor {iv:#010x} names "
                                      f"{' and '.join(bad)}, but .scale_vec::{vs}X allows scale-factor ids "
                                      f"{', '.join(map(str, ids))}")
            if idesc.scale_type not in stypes:
                raise prog.error(ins, f"{ins.opcode} (thread {t}): scale factors of type {idesc.scale_type} with "
                                      f".scale_vec::{vs}X (it takes {', '.join(stypes)})")
            lane0, col0 = split(dv)
            dcells = tmem_cells(cta, ins, index, tm, lane0 + dp.lane, col0 + dp.col, -1, "mma")
            held = []
            ops_ = []
            for v, tr, b, rows, what in ((av, idesc.transpose_a, bits[0], M, "A"), (bv, idesc.transpose_b, bits[1], N,
                                                                                    "B")):
                major = "MN" if tr else "K"
                if b < 8 and kind != "mxf8f6f4":  # two e2m1 to a byte (mxf4); mxf8f6f4's: containers (read_desc)
                    addr, X = _read_packed(cta, ins, index, v, major, b, rows, K, t, what)
                else:
                    addr, X = read_desc(cta, ins, index, v, major, b, rows, K, t, what)
                held.append(hold(cta, addr, max(b // 8, 1), index))
                ops_.append(X)
            A, Bt = ops_
            j = np.arange(K) // size  # each k's block within the MMA
            # A's factors: row m, K block sfa_id + j (the MMA's blocks of the 4-block tile)
            sa_addr = int(tmem_address(cta, ins, sa_o, m, "the scale-A address")[t])
            sb_addr = int(tmem_address(cta, ins, sb_o, m, "the scale-B address")[t])
            kb_a = idesc.sfa_id + j
            kb_b = idesc.sfb_id + j
            if kb_a.max() > 3 or kb_b.max() > 3:
                raise prog.error(ins, f"{ins.opcode} (thread {t}): scale-factor ids {idesc.sfa_id}/{idesc.sfb_id} with "
                                      f"{vs} blocks per MMA run past the 4 blocks of a scale-factor tile")
            la, ca = split(sa_addr)
            lanes = la + sfa.lane[:, kb_a]  # [M, K]
            cols = ca + sfa.col[:, kb_a]
            SA = _factors(cta, ins, index, tm, lanes, cols, sfa.byte[:, kb_a], t, "A")
            lb, cb = split(sb_addr)
            lanes = lb + sfb.lane[:, :, kb_b]  # [4, N, K]
            cols = cb + sfb.col[:, :, kb_b]
            SB = _factors(cta, ins, index, tm, lanes, cols, sfb.byte[:, :, kb_b], t, "B").transpose(0, 2, 1)
            C = dom.zeros((1, M, N))
            if en[t]:
                flat = dcells.reshape(-1)
                C[0] = dom.elements(tm.ntags[flat], tm.nbits[flat]).reshape(M, N)
            info = np.array([[index, cta.index, t, np.uint64(av).view(np.int64), np.uint64(bv).view(np.int64), iv]],
                            np.int64)
            D = dom.matmul(cta, index, "tcgen05", A[None], Bt.T[None], C, 4, info, SA[None], SB[None])
            tags, bts = dom.memory_bytes(D.reshape(-1), 4)
            tm.issue(index, dcells.reshape(-1), tags, bts, t, held)
    return Step(ins, index, "op", run)


def _scale_vector(prog: Program, ins: Instr, kind: str) -> int:
    """The number of scale factors per row of scale_A (the N of ``.scale_vec::NX``) that the MMA's spelled
    ``.scale_vectorsize`` means for ``kind``: the catalog's ``tcgen05.scale_vec.kinds`` (Table 55); a spelling the
    kind does not take is an error at the instruction's line."""
    spelled = [p for p in ins.parts if p in SCALE_QUALIFIERS]
    try:
        takes = scale_vectors(kind)
    except NoLayout as e:
        raise prog.error(ins, f"{ins.opcode}: {e}") from None
    q = spelled[0] if len(spelled) == 1 else ""
    if len(spelled) > 1 or q not in takes:
        listed = [f".{x}" for x in takes if x] + (["no .scale_vectorsize"] if "" in takes else [])
        what = " with ".join(f".{x}" for x in spelled)
        wrong = f", not {what}" if spelled else ", and none is spelled"
        raise prog.error(ins, f"{ins.opcode}: .kind::{kind} takes {', '.join(listed[:-1])} or {listed[-1]}{wrong} "
                              "(tcgen05.scale_vec.kinds: PTX ISA 9.0 Table 55)")
    return takes[q]


def _read_packed(cta: CTA, ins: Instr, index: int, value: int, major: str, bits: int, rows: int, K: int, t: int,
                 what: str) -> tuple[np.ndarray, np.ndarray]:
    """(byte addresses [rows, K], values [rows, K]) of an operand of elements narrower than a byte (``e2m1``, two to
    a byte in shared memory: ``kind::mxf4``/``mxf4nvf4``) that the descriptor ``value`` reads: the descriptor model's
    bit address of each element, its byte's elements split from the low bits (the element at the lower bit address
    in the lower bits), each element taken at its place in its byte."""
    prog = cta.prog
    try:
        at = descriptor_bit_addresses("tcgen05", value, major, bits, rows, K, face_of(prog))
    except BadDescriptor as e:
        raise prog.error(ins, f"{ins.opcode} (thread {t}): the {what} descriptor {value:#018x} cannot be read: "
                              f"{e}") from None
    return read_packed(cta, ins, at, bits, np.array([t // 32]), t)


def _factors(cta: CTA, ins: Instr, index: int, tm: Any, lanes: np.ndarray, cols: np.ndarray, byte: np.ndarray,
             t: int, operand: str) -> np.ndarray:
    """The scale factors at Tensor Memory (lane, column, byte): values, in the shape of ``lanes``.  Cells outside
    the allocation, or a tcgen05.st not waited for, are findings; cells never written are undefined values."""
    prog = cta.prog
    shape = lanes.shape
    cells = tmem_cells(cta, ins, index, tm, lanes, cols, -1, "mma").reshape(-1)
    b = byte.reshape(-1)
    pend = tm.stored[cells] >= 0
    if pend.any():
        prog.events.add("tmem_store_in_flight", index, cta.index, t, int(cells[int(np.argmax(pend))]), "tmem",
                        f"tcgen05.mma (thread {t}) reads scale factors of {operand} that a tcgen05.st still writes (no "
                        "tcgen05.wait::st between them)", int(pend.sum()))
    tags = tm.ntags[cells, b][:, None]
    bits = tm.nbits[cells, b][:, None]
    if prog.trace:
        addr = (TMEM_WINDOW + CELL * cells + b).astype(np.uint64)
        tags = prog.domain.moved(cta, index, np.full(len(cells), t, np.int64), tags, addr, "tmem")
    return prog.domain.elements(tags, bits).reshape(shape)


BLOCK_SCALED["block_scale"] = block_scaled_mma

__all__ = ["block_scaled_mma"]
