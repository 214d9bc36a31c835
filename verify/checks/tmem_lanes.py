"""The Tensor Memory access rule of tcgen05.ld/st (``tmem_lanes``): warp w of a warpgroup reaches only TMEM
lanes 32 (w % 4) .. 32 (w % 4) + 31, decided by Z3 and by enumeration over every lane base and family member.

``tmem_views`` places a per-warp layout on the warpgroup; ``check_tmem_lanes`` is the check that
``verify.checks.instruction`` runs for every tcgen05.ld/st register layout.
"""
from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import numpy as np
import z3

from ..engines import smt
from ..layout import algebra as A
from ..layout import reshape
from ..layout.dims import Dim
from ..layout.model import Layout, cell_at, cells_of, z3_cell_of
from ..results import CheckResult, combine_engines
from ..witnesses import TmemLane
from . import fragment
from .family import _binding, _binding_of, _extent_term, _symbolic, _width

def tmem_views(lay: Layout) -> list[tuple[int, Layout]]:
    """The warpgroup views of a tcgen05 register layout: 128 threads, rows = absolute TMEM lanes.

    A per-warp layout (32 threads, rows = TMEM lanes relative to taddr) is placed at taddr lane
    32 (w % 4) + off for warp w, with off = 0 and, for a 16-lane shape, also off = 16 (the two lane bases
    CuTe's make_tmem_copy uses).  A layout written for the warpgroup already (threads a multiple of 32,
    more than 32) is its own view."""
    if lay.threads != 32:
        return [(0, lay)]
    offsets = [0] if lay.representative().rows > 16 else [0, 16]
    frag = lay.map
    lanes = next(d.name for d in frag.outputs if d.name != "mma")  # the TMEM lane output
    out = []
    for off in offsets:  # warp w at lane 32 w + off: (lane, warp) -> thread = lane + 32 warp
        placed = A.product(reshape.embed(frag, lanes, 32, off), A.iota(Dim("warp", 4), lanes))
        view = lay.with_map(reshape.merge(placed, ("lane", "warp"), "thread"), id=f"{lay.id}@warpgroup+{off}",
                           codomain=replace(lay.codomain, rows=128))
        out.append((off, view))
    return out


def check_tmem_lanes(lay: Layout, timeout: float = 10.0, expected: str = "proved") -> CheckResult:
    """Warp w (= thread >> 5) of a warpgroup touches only TMEM lanes 32 (w % 4) .. 32 (w % 4) + 31, for every
    parameter value and lane base.  Z3 (parameters free) and the enumeration of every instance; the witness
    is the first (offset, binding, thread, i) in that order whose lane is outside its warp's quarter."""
    t0 = time.perf_counter()
    enum_cex = z3_cex = None
    z3_status = "proved"
    for off, view in tmem_views(lay):
        e = _tmem_enum(view, off)
        z, zc = _tmem_z3(view, off, timeout)
        if enum_cex is None and e is not None:
            enum_cex = e
        if zc is not None and z3_cex is None:
            z3_cex = zc
        if z == "unknown" and z3_status == "proved":
            z3_status = "unknown"
        if z == "sat":
            z3_status = "refuted"
        if enum_cex is not None or z3_cex is not None:
            break

    def message(c: dict[str, Any]) -> str:
        pre = (f"{_binding(c['params'])}: " if c.get("params") else "") + (f"lane base +{c['offset']}: " if c["offset"] else "")
        where = "no TMEM lane (undefined)" if c["tmem_lane"] is None else f"TMEM lane {c['tmem_lane']}"
        return (f"{pre}warp {c['warp']} (thread {c['thread']}, lane {c['lane']}) element {c['element']} accesses "
                f"{where}, outside its quarter {c['allowed'][0]}-{c['allowed'][1]} (9.7.16.8.1)")

    def confirm(c: dict[str, Any]) -> bool:
        view = dict(tmem_views(lay))[c["offset"]]
        inst = view.instance(**c["params"]) if c.get("params") else view
        cell = cell_at(inst, c["thread"], c["i"])
        lo = 32 * ((c["thread"] >> 5) % 4)
        return cell is None or not lo <= cell[0] < lo + 32

    return combine_engines("tmem_lanes", expected, z3_status, z3_cex, enum_cex, message, time.perf_counter() - t0,
                           "every warp of the warpgroup accesses only its own quarter of the TMEM lanes", confirm,
                           same_witness=True)


def _tmem_cex(view: Layout, off: int, env: dict[str, int], t: int, i: int, row: int | None) -> TmemLane:
    lo = 32 * ((t >> 5) % 4)
    return TmemLane(off, t >> 5, t, t % 32, i, view.element_name(i), row, (lo, lo + 31), env or None)


def _tmem_enum(view: Layout, off: int) -> TmemLane | None:
    for env, inst in view.instances():
        c = cells_of(inst)
        t = np.arange(inst.threads)[:, None]
        lo = 32 * ((t >> 5) % 4)
        bad = ~c.ok | (c.row < lo) | (c.row >= lo + 32)
        hits = np.flatnonzero(bad.ravel())
        if hits.size:
            th, i = divmod(int(hits[0]), inst.n_elements)
            return _tmem_cex(view, off, env, th, i, int(c.row[th, i]) if c.ok[th, i] else None)
    return None


def _tmem_z3(view: Layout, off: int, timeout: float) -> tuple[str, TmemLane | None]:
    budget = smt.Budget(timeout)
    if view.is_family:
        w = _width(view)
        vs, env, valid = _symbolic(view, w)
        n = _extent_term(view.domain.elements, env, w)
    else:
        w, vs, env, valid = fragment.width(view), [], None, z3.BoolVal(True)
        n = smt.bv(view.n_elements, w)
    t, i = view.domain.z3_point("thread i", w)
    ok, r, _ = z3_cell_of(view, t, i, env)
    lo = smt.bv(32, w) * z3.URem(z3.LShR(t, 5), smt.bv(4, w))
    inside = z3.And(ok, r >= lo, r < lo + 32)
    dom = z3.And(t >= 0, t < view.threads, i >= 0, i < n)
    res, m = smt.solve_min([valid, dom, z3.Not(inside)], [*vs, t, i], budget)
    if res != "sat":
        return res, None
    assert m is not None
    bind = _binding_of(view, m, vs) if vs else {}
    th, ix = smt.as_int(m, t), smt.as_int(m, i)
    defined = z3.is_true(m.eval(ok, model_completion=True))
    return res, _tmem_cex(view, off, bind, th, ix, smt.as_int(m, r) if defined else None)


__all__ = ["check_tmem_lanes", "tmem_views"]
