"""A reduction inside a fragment: does a ``shfl.xor`` butterfly combine exactly the lanes that own each row?

FlashAttention's softmax reduces every row of the m16n8 accumulator: each lane first combines its own
elements of a row, then a butterfly ``x = op(x, __shfl_xor_sync(mask, x, m))`` for each ``m`` of a list of
masks (``1, 2`` for the m16n8 accumulator, whose row ``g`` is held by lanes ``4g .. 4g+3``).  After the
butterfly, lane ``l`` holds the combination over the lanes ``l ^ x`` for every ``x`` the masks span (every
XOR of a subset of them: ``reach(l)``).  The reduction of a row is exact when, for every lane ``l`` and every
row ``r`` it holds a cell of, ``reach(l)`` is exactly the set of lanes that hold a cell of ``r`` (``owners(r)``,
rows of one MMA computation apart from another's): a lane reached that owns no cell of ``r`` mixes another
row in, an owner not reached leaves part of the row out.  Columns likewise (``axis = "col"``).

**Decided by both engines.**  Enumeration: ``owners`` from the evaluated cells of every (lane, i); ``reach``
from the span of the masks; the first lane ``l`` (then the first (MMA computation, line) it holds, then the
first lane ``l2``) where ``owners(r)`` and ``reach(l)`` differ at ``l2``.  Z3: one query for a (lane, i) and a
lane ``l2`` where "``l2`` holds a cell of the line of (lane, i)" (a disjunction over ``l2``'s elements) differs
from "``l ^ l2`` is a XOR of the masks" (a disjunction over the span), minimised to the same order.  Both
must agree and name the same pair (``ReductionLanes``), which the scalar reference re-evaluates.

A shuffle moves values only inside a warp: the masks are 1 .. 31, so a line whose owners span warps is
never exact (the lanes of the other warp are never reached; that reduction goes through shared memory).
"""
from __future__ import annotations

import time
from typing import Any, Sequence

import numpy as np
import z3

from ..engines import smt
from ..layout.model import Layout, cells_of
from ..results import combine_engines
from ..results.reduce import ReduceResult, span
from ..witnesses import ReductionLanes
from .equivalence import point_of
from .fragment import DEFAULT_TIMEOUT, width
from ..layout.model import z3_cell_of

AXES = ("row", "col")
WARP = 32


class ReduceError(ValueError):
    """A reduction that cannot be asked: an axis other than row or col, a mask outside 1 .. 31, no mask."""


def check_masks(axis: str, masks: Sequence[int]) -> tuple[int, ...]:
    if axis not in AXES:
        raise ReduceError(f"reduce along row or col, not {axis!r}")
    if not masks:
        raise ReduceError("give the butterfly's shfl.xor masks, e.g. --xor 1,2")
    bad = [m for m in masks if not 1 <= m < WARP]
    if bad:
        raise ReduceError(f"shfl.xor mask {bad[0]}: a lane mask is 1 to 31 (a shuffle stays inside its warp)")
    return tuple(masks)


def _lines(lay: Layout, axis: str) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """(own: lanes x lines, whether a lane holds a cell of the line, the lanes padded to whole warps with lanes
    that own nothing; the lines as (MMA computation, index), in order)."""
    c = cells_of(lay)
    vals = c.row if axis == "row" else c.col
    group = np.broadcast_to(c.group[:, None], c.ok.shape)
    ts, js = np.nonzero(c.ok)
    pairs = list(zip(group[ts, js].tolist(), vals[ts, js].tolist()))
    keys = sorted(set(pairs))
    index = {k: n for n, k in enumerate(keys)}
    own = np.zeros((-(-lay.threads // WARP) * WARP, len(keys)), bool)
    own[ts, [index[p] for p in pairs]] = True
    return own, keys


def _enumerate(lay: Layout, axis: str, masks: tuple[int, ...]) -> tuple[ReductionLanes | None, tuple[int, ...]]:
    own, keys = _lines(lay, axis)
    lanes = own.shape[0]
    xs = span(masks)
    counts = tuple(sorted({int(n) for n in own.sum(axis=0)}))
    # reach(l) is the coset l ^ span: a line is exact iff its owners are the coset of its first owner (then every
    # owner's coset is the same one); every owner of a line that is not, breaks it
    bad_keys = []
    for k in range(own.shape[1]):
        owners = np.flatnonzero(own[:, k])
        l0 = int(owners[0])
        reach = {l0 ^ x for x in xs}
        if set(owners.tolist()) != reach:
            bad_keys.append(k)
    if not bad_keys:
        return None, counts
    bad = np.asarray(bad_keys)
    lane = int(np.flatnonzero(own[:, bad].any(axis=1))[0])
    k = int(next(k for k in bad_keys if own[lane, k]))
    reach_mask = np.zeros(lanes, bool)
    reach_mask[[lane ^ x for x in xs]] = True  # masks below 32, lanes whole warps: every partner is a lane
    other = int(np.flatnonzero(own[:, k] != reach_mask)[0])
    g, line = keys[k]
    return _witness(lay, axis, masks, lane, g, line, other), counts


def _witness(lay: Layout, axis: str, masks: tuple[int, ...], lane: int, g: int, line: int,
             other: int) -> ReductionLanes:
    return ReductionLanes(lane, axis, line, other, (lane ^ other) in span(masks), masks,
                          g if lay.groups > 1 else None)


def _owns(lay: Layout, axis: str, lane: int, g: int, line: int) -> bool:
    """The scalar reference: whether ``lane`` holds a cell of line ``line`` of MMA computation ``g``."""
    for j in range(lay.n_elements):
        p = point_of(lay, lane, j)
        if p is not None and p.mma == g and (p.row if axis == "row" else p.col) == line:
            return True
    return False


def _z3_first(lay: Layout, axis: str, masks: tuple[int, ...], budget: smt.Budget,
              hint: ReductionLanes | None) -> tuple[str, ReductionLanes | None]:
    lanes = -(-lay.threads // WARP) * WARP
    w = max(width(lay), (lanes - 1).bit_length() + 2)
    lane, i, other, g, line = z3.BitVecs("lane i other g line", w)
    ok, r, c = z3_cell_of(lay, lane, i)
    held = []
    for j in range(lay.n_elements):
        ok2, r2, c2 = z3_cell_of(lay, other, smt.bv(j, w))
        held.append(z3.And(z3.ULT(other, lay.threads), ok2, (r2 if axis == "row" else c2) == line,
                           lay.domain.z3_group(other) == g))
    owns = z3.Or(held)
    reached = z3.Or([(lane ^ other) == smt.bv(x, w) for x in span(masks)])
    cs = [z3.ULT(lane, lay.threads), z3.ULT(i, lay.n_elements), ok, line == (r if axis == "row" else c),
          g == lay.domain.z3_group(lane), z3.ULT(other, lanes), owns != reached]
    keys = [lane, g, line, other]
    h = None if hint is None else [hint.lane, hint.mma or 0, hint.line, hint.other]
    res, m = smt.solve_min(cs, keys, budget, h)
    if res != "sat" or m is None:
        return res, None
    return res, _witness(lay, axis, masks, smt.as_int(m, lane), smt.as_int(m, g), smt.as_int(m, line),
                         smt.as_int(m, other))


def reduction(lay: Layout, axis: str, masks: Sequence[int], timeout: float = DEFAULT_TIMEOUT,
              hint: bool = True) -> ReduceResult:
    """Whether a ``shfl.xor`` butterfly by ``masks`` reduces every ``axis`` line of ``lay`` over exactly its
    owners (module docstring); ``hint``: when it does not, look for masks that would (proved the same way)."""
    t0 = time.perf_counter()
    masks = check_masks(axis, masks)
    enum_cex, counts = _enumerate(lay, axis, masks)
    res, z3_cex = _z3_first(lay, axis, masks, smt.Budget(timeout), enum_cex)

    def confirm(c: Any) -> bool:
        g = c.mma or 0
        return _owns(lay, axis, c.lane, g, c.line) and (
            _owns(lay, axis, c.other, g, c.line) if c.other < lay.threads else False) != c.reached

    chk = combine_engines("exact", "proved", smt.status(res), z3_cex, enum_cex, lambda c: c.describe(),
                          time.perf_counter() - t0, f"every lane's butterfly reaches exactly the lanes that own each of "
                          f"its {axis}s", confirm, same_witness=True)
    status = {"proved": "exact", "refuted": "inexact"}.get(chk.status, chk.status)
    better = None
    if hint and status == "inexact":
        found = _masks_that_fit(lay, axis)
        if found is not None and found != masks and reduction(lay, axis, found, timeout, hint=False).status == "exact":
            better = found
    return ReduceResult(lay, axis, masks, status, chk, counts, better, time.perf_counter() - t0)


def _masks_that_fit(lay: Layout, axis: str) -> tuple[int, ...] | None:
    """A basis of the lane XORs inside the first line's owners, when those XORs are closed (a subspace of
    lanes inside one warp): the masks a butterfly over exactly those owners would use.  A candidate only:
    ``reduction`` proves it before anything says so."""
    own, _ = _lines(lay, axis)
    owners = np.flatnonzero(own[:, 0]).tolist()
    diffs = {owners[0] ^ o for o in owners}
    if any(d >= WARP for d in diffs) or any((a ^ b) not in diffs for a in diffs for b in diffs):
        return None
    basis: list[int] = []
    for d in sorted(diffs):
        if d and d not in span(basis):
            basis.append(d)
    return tuple(basis) or None


__all__ = ["AXES", "ReduceError", "ReduceResult", "check_masks", "reduction", "span"]
