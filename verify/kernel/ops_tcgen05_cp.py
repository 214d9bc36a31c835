"""``tcgen05.cp``: a block of shared memory copied into Tensor Memory through a matrix descriptor, each byte where the
catalog's copy layout of the shape puts it (``specs/tcgen05.cp.toml``), by one thread of a CTA (``cta_group::1``)
or of a CTA pair (``cta_group::2``: into the Tensor Memory of both CTAs of the pair).

Asynchronous, in the tensor-core pipeline of the issuing thread: a later ``tcgen05.mma`` of that thread reads the
copy (the issued view), a ``tcgen05.ld`` once its ``tcgen05.commit``'s mbarrier phase is waited for; the
shared-memory bytes are held until then.  Refused at their line (exit 2): ``.4x256b`` and the decompressing forms
(the facts they need are named in their messages), and a pair's copy whose two readings differ (below).
"""
from __future__ import annotations

import numpy as np

from ..ptx.syntax import Addr, Instr
from .access import hold, read_shared_async
from .fragments import NoLayout, copy_cells
from .descriptors import BadDescriptor, descriptor_addresses
from .machine import CTA, Program, Step
from .ops_tcgen05 import COPY, _cta_group, face_of, pair_of, thread_rows, tmem, tmem_address, tmem_cells
from .bytes import U64
from .tmem import CELL, TMEM_WINDOW, split

CP_SHAPES = ("128x256b", "4x256b", "128x128b", "64x128b", "32x128b")
CP_MULTICAST = ("warpx2::02_13", "warpx2::01_23", "warpx4")

# What the PTX ISA (9.0, and 9.1's tcgen05.cp page) leaves unsaid for the forms refused.
FOUR_ROWS = ("which shared-memory bytes its 4 rows are: the layouts a descriptor describes are made of 8-row units "
             "(9.0's 9.7.16.10.6 swizzle atoms, 9.1's 9.7.16.3.3 canonical layouts ((8,m),(T,2k)), SBO the offset "
             "from one 8 rows to the next), and neither the tcgen05.cp page nor the matrix-descriptor section says "
             "whether a 4-row copy reads rows 0-3 of such a unit (16 bytes apart, a row's second 16 bytes LBO on) or "
             "rows placed otherwise")
DECOMPRESS = ("it unpacks 4-bit or 6-bit elements into 8-bit containers, so one source byte's bits go to two "
              "destination bytes, and the executor follows data in whole bytes")


def copy_step(prog: Program, ins: Instr, index: int) -> Step:
    """``tcgen05.cp.cta_group::N.<shape>[.<multicast>] [taddr], s-desc``: the block the descriptor names in shared
    memory (rows along its stride dimension, each row's bytes along its leading dimension: the descriptor model's
    K-major 8-bit reader) copied into Tensor Memory where the catalog's ``tcgen05.cp`` layout of the shape puts each
    byte, relative to ``taddr``.

    ``cta_group::2``: PTX ISA 9.1's tcgen05.cp page (the 9.0 export lacks it) says the data is copied into the
    Tensor Memory of both the current and the peer CTA, at ``taddr`` in each; it does not say whose shared memory
    the peer's copy comes from: the issuing CTA's, where the descriptor locates the matrix (9.7.16.4.1: "in the
    shared memory of the current CTA"), or the peer's own at the same address, as the pair's ``tcgen05.mma`` reads
    its operands.  The copy is executed where the two readings agree (the peer's bytes at the block's addresses
    are the issuer's: the same values from the same places); where they differ it is refused at its line, naming
    the first byte that differs."""
    parts = ins.parts
    group = _cta_group(prog, ins)
    shape = next((p for p in parts if p in CP_SHAPES), None)
    multicast = next((p for p in parts if p in CP_MULTICAST), "")
    if shape is None:
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}' (a tcgen05.cp shape other than "
                              f"{', '.join('.' + x for x in CP_SHAPES)})")
    fmt = next((p for p in parts if p.startswith(("b6x16", "b4x16"))), None)
    if fmt is not None or any(p.startswith("b8x16") for p in parts):
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}' (decompression .b8x16.{fmt or 'b6x16_p32'} is "
                              f"not executed: {DECOMPRESS})")
    try:
        cells = copy_cells(shape, multicast, face_of(prog))
    except NoLayout as e:
        raise prog.error(ins, f"{ins.opcode}: {e} (.64x128b takes .warpx2::02_13 or ::01_23, .32x128b .warpx4, "
                              "the others none)") from None
    rows, nbytes, _ = cells.lane.shape
    if rows % 8:
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}' (.{shape} copies {rows} rows; the PTX ISA "
                              f"does not say {FOUR_ROWS})")
    ops = list(ins.operands)
    if len(ops) != 2 or not isinstance(ops[0], Addr) or isinstance(ops[1], Addr):
        raise prog.error(ins, f"{ins.opcode} takes [taddr], s-desc")
    t_o, s_o = ops

    def run(cta: CTA, m: np.ndarray | None) -> None:
        pair = [cta] if group == 1 else pair_of(cta, ins)
        taddr = tmem_address(cta, ins, t_o, m, "the destination address")
        sdesc = np.broadcast_to(np.asarray(cta.int_value(s_o, 64, False, m, "the source descriptor")[0], U64),
                                (cta.T,))
        for t in (int(x) for x in thread_rows(m, cta.T)):
            value = int(sdesc[t])
            try:
                addr = descriptor_addresses("tcgen05", value, "K", 8, rows, nbytes, face_of(prog))
            except BadDescriptor as e:
                raise prog.error(ins, f"{ins.opcode} (thread {t}): the source descriptor {value:#018x} cannot be "
                                      f"read: {e}") from None
            reads = [_read(c, cta, ins, addr, t) for c in pair]
            if group == 2:
                _agree(prog, ins, cta, pair, reads, addr, t)
            lane0, col0 = split(int(taddr[t]))
            for c, (tags, bts) in zip(pair, reads):
                _issue(prog, ins, index, cta, c, tags, bts, addr, cells, lane0, col0, t)
    return Step(ins, index, "op", run)


def _read(c: CTA, issuer: CTA, ins: Instr, addr: np.ndarray, t: int) -> tuple[np.ndarray, np.ndarray]:
    """The block's bytes at ``addr`` in ``c``'s shared memory, read by thread ``t`` of ``issuer``."""
    saved = c.step
    c.step = issuer.step
    try:
        return read_shared_async(c, ins, addr.reshape(-1), 1, np.array([t // 32]), t)  # [rows * nbytes, 1]
    finally:
        c.step = saved


def _agree(prog: Program, ins: Instr, cta: CTA, pair: list[CTA], reads: list[tuple[np.ndarray, np.ndarray]],
           addr: np.ndarray, t: int) -> None:
    """Refuse a pair's copy whose peer bytes are not the issuer's (the two readings of the page differ)."""
    mine = pair.index(cta)
    (ta, ba), (tb, bb) = reads[mine], reads[1 - mine]
    resolve = getattr(prog.domain, "resolve", None)

    def origin(tags: np.ndarray) -> np.ndarray:
        if resolve is None:
            return tags
        out = tags.copy()
        v = tags >= 0
        if v.any():
            out[v] = resolve(tags[v] >> 3) * 8 + (tags[v] & 7)
        return out

    differ = ((origin(ta) != origin(tb)) | (ba != bb)).any(axis=1)
    if differ.any():
        k = int(np.argmax(differ))
        row, byte = divmod(k, addr.shape[1])
        peer = pair[1 - mine]
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}' (thread {t} of CTA rank {cta.rank}): a CTA "
                              "pair's copy goes to both CTAs' Tensor Memory, and the PTX ISA does not say whether "
                              "the peer's comes from the issuer's shared memory or the peer's own; here they differ "
                              f"(row {row}, byte {byte}: shared 0x{int(addr[row, byte]):x} of CTA rank {peer.rank} "
                              f"is not CTA rank {cta.rank}'s; {int(differ.sum())} such bytes), so the copy is not "
                              "executed")


def _issue(prog: Program, ins: Instr, index: int, issuer: CTA, c: CTA, tags: np.ndarray, bts: np.ndarray,
           addr: np.ndarray, cells, lane0: int, col0: int, t: int) -> None:
    """Issue thread ``t``'s copy into ``c``'s Tensor Memory (the bytes read from ``c``'s shared memory); a peer's
    copy completes at the issuing thread's commit, in its CTA, as a pair's MMA does."""
    rows, nbytes, _ = cells.lane.shape
    tm = tmem(c)
    held = [hold(c, addr, 1, index)]
    flat = tmem_cells(c, ins, index, tm, lane0 + cells.lane, col0 + cells.col, -1, "cp")  # [rows, nbytes, copies]
    copies = flat.shape[2]
    src_tags = np.repeat(tags.reshape(rows, nbytes, 1), copies, axis=2).reshape(-1)
    src_bits = np.repeat(bts.reshape(rows, nbytes, 1), copies, axis=2).reshape(-1)
    byte = np.asarray(cells.byte).reshape(-1)
    flat = flat.reshape(-1)
    target, inv = np.unique(flat, return_inverse=True)
    out_tags = tm.ntags[target].copy()  # a cell the copy fills only in part keeps its other bytes
    out_bits = tm.nbits[target].copy()
    out_tags[inv, byte] = src_tags
    out_bits[inv, byte] = src_bits
    if prog.trace:  # whole cells, so that an element of several bytes moves as one
        out_tags = prog.domain.moved(issuer, index, np.full(len(target), t, np.int64), out_tags,
                                     (TMEM_WINDOW + CELL * target).astype(U64), "tmem")
    tm.issue(index, target, out_tags, out_bits, t, held)
    if c is not issuer:
        snap = tm.uncommitted[t].pop()
        if not tm.uncommitted[t]:
            del tm.uncommitted[t]
        snap.tmem, snap.cta = tm, c
        tmem(issuer).uncommitted.setdefault(t, []).append(snap)


COPY["cp"] = copy_step

__all__ = ["CP_MULTICAST", "CP_SHAPES", "DECOMPRESS", "FOUR_ROWS", "copy_step"]
