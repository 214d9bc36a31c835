"""``st.async`` and ``red.async``: a store (an atomic update) into a cluster's CTA's shared memory, through a
``shared::cluster`` address, that completes on the mbarrier at ``[mbar]`` in that CTA with the bytes it stores
(``.mbarrier::complete_tx::bytes``).

The bytes are written into the destination CTA's shared memory when the instruction runs, as the storing CTA's
(``access.write_cluster_shared``); their count is taken off the mbarrier's transaction count, and the store is a
release on the mbarrier (``order``): a wait of the destination CTA that completes the mbarrier's phase acquires it,
and that is what orders the store before the destination's reads.  A read of the bytes without it is the cluster's
race (``order.cluster_race``); a transaction count that the bytes delivered do not meet is a wait that can never
complete (the existing mbarrier accounting).  ``red.async`` follows ``ops_atom``'s rules (only the updates whose
final value no order changes; the rest refused at their line)."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..ptx.syntax import TYPE_BITS, Instr, Vec
from .access import address, aligned, rows_of, vector_of, write_cluster_shared
from .machine import CTA, Program, Step
from . import ops_atom, ops_mem  # noqa: F401  (their st and red, which the handlers here extend, registered first)
from .ops_async import barrier_at, cluster_target, complete_phase
from .ops_base import HANDLERS, handler, source_bytes, types_of
from .order import cluster_release, merge_release

COMPLETE_TX = "mbarrier::complete_tx::bytes"


def _form(prog: Program, ins: Instr) -> None:
    """The one form followed: ``.shared::cluster.mbarrier::complete_tx::bytes``."""
    if "shared::cluster" not in ins.parts or COMPLETE_TX not in ins.parts:
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}' (only .shared::cluster"
                              f".{COMPLETE_TX}: a store completing on an mbarrier of the destination CTA)")


def complete_tx(cta: CTA, ins: Instr, addr: np.ndarray, bar: np.ndarray, rows: np.ndarray, n: int) -> None:
    """Each thread of ``rows`` delivered ``n`` bytes at ``addr`` (written before this): the mbarrier at ``bar`` in
    the CTA ``addr`` names takes them off its transaction count, and the store is a release on it."""
    for t in rows:
        owner, a = cluster_target(cta, ins, int(addr[t]))
        towner, b_addr = cluster_target(cta, ins, int(bar[t]))
        if towner is not owner:
            raise cta.prog.error(ins, f"{ins.opcode} (thread {int(t)}): the mbarrier is in CTA rank {towner.rank}, "
                                      f"the stored bytes in CTA rank {owner.rank} (they must be one CTA)")
        b = barrier_at(owner, ins, b_addr)
        b.tx -= n
        if cta.cluster is not None:
            merge_release(b.released, cluster_release(cta))
        complete_phase(owner, b)


_ST = HANDLERS["st"]  # ops_mem's st (every other form)
_RED = HANDLERS["red"]  # ops_atom's red


@handler("st")
def _st_async(prog: Program, ins: Instr, index: int) -> Step:
    if "async" not in ins.parts[1:]:
        return _ST(prog, ins, index)
    _form(prog, ins)
    vec = vector_of(ins)
    ts = types_of(ins)
    if not ts:
        raise prog.error(ins, f"{ins.opcode}: no type")
    eb = TYPE_BITS[ts[-1]] // 8
    if len(ins.operands) != 3:
        raise prog.error(ins, f"{ins.opcode} takes [a], b, [mbar]")
    addr_o, src, bar_o = ins.operands
    items = list(src.items) if isinstance(src, Vec) else [src]
    if len(items) != vec:
        raise prog.error(ins, f"{ins.opcode} stores {vec} values, the operand has {len(items)}")
    n = vec * eb

    def run(cta: CTA, m: np.ndarray | None) -> None:
        rows = rows_of(m, cta.T)
        addr = address(cta, addr_o, m)
        bar = address(cta, bar_o, m)
        aligned(prog, ins, addr[rows], rows, n)
        write_cluster_shared(cta, ins, addr, *source_bytes(cta, items, eb, rows), rows)
        complete_tx(cta, ins, addr, bar, rows, n)
    return Step(ins, index, "op", run)


@handler("red")
def _red_async(prog: Program, ins: Instr, index: int) -> Step:
    """``red.async``: ``ops_atom``'s ``red`` on ``[a], b`` (its rules, its refusals), then the bytes it updated
    completed on ``[mbar]``."""
    if "async" not in ins.parts[1:]:
        return _RED(prog, ins, index)
    _form(prog, ins)
    if len(ins.operands) != 3:
        raise prog.error(ins, f"{ins.opcode} takes [a], b, [mbar]")
    ts = types_of(ins)
    if not ts:
        raise prog.error(ins, f"{ins.opcode}: no type")
    n = vector_of(ins) * TYPE_BITS[ts[-1]] // 8
    addr_o, bar_o = ins.operands[0], ins.operands[2]
    inner = _RED(prog, replace(ins, operands=ins.operands[:2]), index)
    update = inner.run
    assert update is not None

    def run(cta: CTA, m: np.ndarray | None) -> None:
        update(cta, m)
        complete_tx(cta, ins, address(cta, addr_o, m), address(cta, bar_o, m), rows_of(m, cta.T), n)
    return Step(ins, index, "op", run)

__all__ = ["complete_tx"]
