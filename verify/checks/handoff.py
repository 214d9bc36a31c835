"""Can the fragment one instruction produces feed another instruction's operand, lane for lane?

FlashAttention-2 feeds the f32 accumulator of two adjacent ``m16n8k16`` n-tiles, converted to f16 in
registers, straight into the A operand of the next ``m16n8k16``: no shuffle, because every lane
already holds the cells it needs.  Triton issue #3580 did the same with the int8 path
(``m16n8k32``: s32 accumulator as s8 A) and got wrong results: there each thread holds 2 adjacent
columns of C but 4 of A, so values must move between lanes.  This check tells the two apart.

**The model.** The produced matrix is consumed as is: FROM's cell (row, col) is TO's cell
(row, col) (no transpose).  A stack (ldmatrix's or stmatrix's matrices one under another, where each goes in
the tile is the row addresses' choice) taller than the other side is first placed on the other side's rows
as the catalog's relations place it (``place_stacks``: lane t addresses tile row t % rows, column C (t /
rows)), so ``handoff ldmatrix .x4 -> mma A`` is the relation ``ldmatrix_x4_is_mma_a``.  FROM is tiled to cover TO (``verify.layout.tile``: TO's rows / FROM's
rows tiles down, TO's cols / FROM's cols across, element ``t * N + j`` of a lane = element ``j`` of
tile ``t``, tiles row-major); both must have the same threads and MMA computations, and FROM's
extent must divide TO's.

**Statuses**, each decided by both engines:

* ``free``: for every (lane, i) of TO the tiled FROM holds the same cell (same MMA computation) in
  the same lane.  Z3: one quantifier-free query for a (lane, i) of TO whose cell equals none of the
  lane's tiled elements (a disjunction over the concrete element indices j), minimised to the
  first in (lane, i) order; enumeration: the first such point.  Both must agree and name the same
  point.  The element mapping (``A a4 <- C tile 1 c0``) is read from the enumeration and Z3
  confirms it (one query over the whole plan, the plan encoded as multiplexer trees).
* ``shuffle``: some lane lacks a cell it needs; the plan says, for every (lane, i) of TO, which
  (lane, element) of the tiled FROM holds its cell (its own lane when it can, else the first lane
  that holds it), with the count of lanes and values that move.  Z3 confirms the plan the same way.
* ``shared`` (several warps: block layouts, a warpgroup's fragment): some cell a lane needs is held by no
  lane of its own warp, so the values go through shared memory (a shuffle moves values only inside a warp).
  The plan then takes a source in the lane's own warp where there is one; ``warp_exchange`` counts the values
  each pair of warps exchanges.  A ``shuffle`` over several warps has every source in the destination's warp.
  Decided by both engines: the enumeration's first (lane, i) whose warp lacks the cell, and Z3's, from one
  query with the warp's lanes and elements universally quantified (``ForAll``), minimised to the first point;
  the two must name the same point.  Where the enumeration finds none, Z3 proves it on the plan (every planned
  source in its destination's warp holds the cell, every needed cell planned: quantifier-free).
* ``missing``: some cell of TO is held by no lane of the tiled FROM at all (FROM is not a
  bijection onto its tile); the plan is partial.
* ``unspecified``: FROM or TO is a layout whose map the doc leaves unspecified (wmma: "unspecified
  and target architecture dependent"): no lane is stated to hold any cell, so nothing can be decided
  (exit 1, never ``free``).
* ``unknown`` / ``error``: Z3 gave no answer / the engines disagree.

**Sparse A** (``mma.sp``): its cells are the *compressed* rows x K/2 slots (the kept values a lane
holds, in register order), so a handoff into it compares FROM with that compressed view, and says so
(``views``, ``notes``): the consumer also needs the sparsity metadata (which columns of each chunk are
kept) and values already pruned to that pattern, which no lane-for-lane comparison can show.
"""
from __future__ import annotations

import time
from typing import Any

import z3

from ..engines import smt
from ..layout.model import Layout, cells_of
from ..layout.named import mux
from ..layout.sparse import is_sparse
from ..layout.tile import is_stack, stack_onto, tile
from ..results import combine_engines
from ..results.handoff import WARP, HandoffResult, Step, warp_of
from ..witnesses import CellHeldBy
from .equivalence import cell_dict, cell_keys, family_message, point_of, unspecified_message, where
from .fragment import DEFAULT_TIMEOUT, width
from ..layout.model import z3_cell_of


class HandoffError(ValueError):
    """FROM cannot be tiled onto TO (threads, MMA computations or extents do not fit)."""


def grid_for(source: Layout, target: Layout) -> tuple[int, int]:
    """How many FROM tiles cover TO, down and across; ``HandoffError`` when they cannot."""
    for lay in (source, target):
        if lay.is_family:
            raise HandoffError(family_message(lay, "handoff"))
    if source.threads != target.threads:
        raise HandoffError(f"{source.id} has {source.threads} threads but {target.id} has {target.threads}")
    if source.groups != target.groups:
        raise HandoffError(f"{source.id} runs {source.groups} MMA computations but {target.id} runs {target.groups}")
    if target.rows % source.rows or target.cols % source.cols:
        raise HandoffError(f"{source.id} ({source.rows} x {source.cols}) does not tile {target.id} "
                           f"({target.rows} x {target.cols})")
    return target.rows // source.rows, target.cols // source.cols


def _sparse_notes(source: Layout, target: Layout) -> tuple[str, ...]:
    """What a handoff into (or out of) a sparse A compares, and what else the consumer needs."""
    out = []
    for role, lay in (("FROM", source), ("TO", target)):
        if not is_sparse(lay):
            continue
        md = lay.map.model
        out.append(f"{role} {lay.id} is a sparse A: compared is its compressed {lay.rows} x {lay.cols} view "
                   f"(the {md.kept} kept values of every {md.chunk} columns that each lane holds), not the "
                   f"logical {lay.rows} x {md.k} matrix")
        if role == "TO":
            out.append(f"the consumer also needs the sparsity metadata (operand e: which {md.kept} of every "
                       f"{md.chunk} columns each kept value is) and values already pruned to that "
                       f"{md.kept}:{md.chunk} pattern; a lane-for-lane handoff says nothing about either")
    return tuple(out)


def _plan(tiled: Layout, target: Layout, source: Layout) -> tuple[list[Step], tuple[int, int] | None,
                                                                 tuple[int, int] | None]:
    """Enumeration: for every (lane, i) of TO, its source (its own lane first, else the first lane of its
    own warp that holds the cell, else the first lane anywhere); the first (lane, i) whose own lane lacks the
    cell, and the first whose own warp lacks it (target points that are undefined need nothing)."""
    kt, kd = cell_keys(cells_of(tiled), cells_of(target))
    anywhere: dict[int, tuple[int, int]] = {}
    in_warp: dict[tuple[int, int], tuple[int, int]] = {}
    for lane in range(kt.shape[0]):
        for j, key in enumerate(kt[lane].tolist()):
            if key >= 0:
                anywhere.setdefault(key, (lane, j))
                in_warp.setdefault((warp_of(lane), key), (lane, j))
    n = source.n_elements
    steps: list[Step] = []
    first = first_cross = None
    for lane in range(kd.shape[0]):
        own: dict[int, int] = {}
        for j, key in enumerate(kt[lane].tolist()):
            if key >= 0:
                own.setdefault(key, j)
        for i, key in enumerate(kd[lane].tolist()):
            if key < 0:
                steps.append(Step(lane, i, None, None, None, None))
                continue
            if key in own:
                src = (lane, own[key])
            else:
                if first is None:
                    first = (lane, i)
                src = in_warp.get((warp_of(lane), key))  # type: ignore[assignment]
                if src is None:
                    if first_cross is None:
                        first_cross = (lane, i)
                    src = anywhere.get(key)
            if src is None:
                steps.append(Step(lane, i, None, None, None, None))
            else:
                steps.append(Step(lane, i, src[0], src[1], src[1] // n, source.element_name(src[1] % n)))
    return steps, first, first_cross


def _witness(tiled: Layout, target: Layout, source: Layout, steps: list[Step], pt: tuple[int, int]) -> CellHeldBy:
    lane, i = pt
    s = steps[lane * target.n_elements + i]
    held = None if s.src_lane is None else {"lane": s.src_lane, "i": s.j, "tile": s.tile, "element": s.element}
    return CellHeldBy(lane, i, target.element_name(i), cell_dict(target, lane, i), held)


def _message(source: Layout, target: Layout, grid: tuple[int, int]):
    def msg(c: dict[str, Any]) -> str:
        h = c["held_by"]
        base = f"lane {c['lane']} element {c['element']} needs {where(c['cell'])}"
        if h is None:
            return base + f", which no lane of the tiled {source.operand} holds"
        tile_part = f"tile {h['tile']} " if grid != (1, 1) else ""
        return base + f", held by lane {h['lane']} ({source.operand} {tile_part}{h['element']})"
    return msg


def _z3_first_not_local(tiled: Layout, target: Layout, w: int, budget: smt.Budget,
                        hint: tuple[int, int] | None = None) -> tuple[str, tuple[int, int] | None]:
    lane, i = z3.BitVecs("lane i", w)
    okd, rd, cd = z3_cell_of(target, lane, i)
    gd = target.domain.z3_group(lane)
    held = []
    for j in range(tiled.n_elements):
        okt, rt, ct = z3_cell_of(tiled, lane, smt.bv(j, w))
        held.append(z3.And(okt, rt == rd, ct == cd, tiled.domain.z3_group(lane) == gd))
    res, m = smt.solve_min([target.domain.z3_contains(lane, i), okd, z3.Not(z3.Or(held))], [lane, i], budget,
                           list(hint) if hint is not None else None)
    return res, (smt.as_int(m, lane), smt.as_int(m, i)) if res == "sat" and m is not None else None


def _z3_first_not_in_warp(tiled: Layout, target: Layout, w: int, budget: smt.Budget,
                           hint: tuple[int, int] | None = None) -> tuple[str, tuple[int, int] | None]:
    """Z3: the first (lane, i) of TO whose cell no lane of its own warp holds in the tiled FROM (one query
    with the warp's lanes and elements universally quantified, minimised to the first in (lane, i) order)."""
    w = max(w, (tiled.threads - 1).bit_length() + 1, (WARP - 1).bit_length() + 1)
    lane, i, other, j = z3.BitVecs("lane i other j", w)
    okd, rd, cd = z3_cell_of(target, lane, i)
    src = z3.UDiv(lane, WARP) * WARP + other
    okt, rt, ct = z3_cell_of(tiled, src, j)
    held = z3.And(z3.ULT(other, WARP), z3.ULT(src, tiled.threads), z3.ULT(j, tiled.n_elements), okt, rt == rd,
                  ct == cd, tiled.domain.z3_group(src) == target.domain.z3_group(lane))
    res, m = smt.solve_min([target.domain.z3_contains(lane, i), okd, z3.ForAll([other, j], z3.Not(held))], [lane, i],
                           budget, list(hint) if hint is not None else None)
    return res, (smt.as_int(m, lane), smt.as_int(m, i)) if res == "sat" and m is not None else None


def _z3_confirm_plan(tiled: Layout, target: Layout, steps: list[Step], w: int, budget: smt.Budget,
                     same_warp: bool = False) -> str:
    """Z3 checks the plan read from the enumeration at every (lane, i) it names: the plan is a table
    (lane, i) -> (source lane, source element), encoded as multiplexer trees (``named.mux``), and one query
    asks for a planned point whose source holds another cell (``unsat``: the whole plan holds).  ``same_warp``:
    also a planned source outside the lane's warp, or a defined point of TO the plan does not name (``unsat``:
    every cell a lane needs is held in its own warp, quantifier-free, where the ``ForAll`` query of
    ``_z3_first_not_in_warp`` can run out of budget on a warpgroup's large fragments)."""
    rows = [(s, s.src_lane, s.j) for s in steps if s.src_lane is not None and s.j is not None]  # (a step sets both)
    if not rows:
        return "unsat"
    bits_i = max(1, (target.n_elements - 1).bit_length())
    bits_t = max(1, (target.threads - 1).bit_length())
    w = max(w, bits_t + bits_i + 1)
    lane, i = z3.BitVecs("lane i", w)
    key = lane * (1 << bits_i) + i
    planned, sl = mux(key, bits_t + bits_i, {(s.lane << bits_i) | s.i: src for s, src, _ in rows}, w)
    _, sj = mux(key, bits_t + bits_i, {(s.lane << bits_i) | s.i: j for s, _, j in rows}, w)
    okd, rd, cd = z3_cell_of(target, lane, i)
    okt, rt, ct = z3_cell_of(tiled, sl, sj)
    term = z3.And(okd, okt, rd == rt, cd == ct, target.domain.z3_group(lane) == tiled.domain.z3_group(sl))
    if not same_warp:
        return smt.solve([z3.ULT(lane, target.threads), z3.ULT(i, target.n_elements), planned, z3.Not(term)], budget)[0]
    term = z3.And(term, z3.UDiv(sl, WARP) == z3.UDiv(lane, WARP))
    wrong = z3.Or(z3.And(planned, z3.Not(term)), z3.And(okd, z3.Not(planned)))
    return smt.solve([z3.ULT(lane, target.threads), z3.ULT(i, target.n_elements), wrong], budget)[0]


def place_stacks(source: Layout, target: Layout) -> tuple[Layout, Layout, tuple[str, ...]]:
    """A stack (ldmatrix's, stmatrix's matrices one under another: ``verify.layout.tile.is_stack``) taller than
    the other side, placed on the other side's rows as row addresses usually place it (``stack_onto``: lane t
    addresses tile row t % rows, column C (t / rows)), the placement the catalog's relations
    ``ldmatrix_x4_is_mma_a`` and ``stmatrix_x4_accumulator_pair`` prove; with a note that says so.  Anything
    else as it is."""
    out, notes = [source, target], []
    for k, (role, lay, other) in enumerate((("FROM", source, target), ("TO", target, source))):
        if not is_stack(lay) or other.is_family or lay.rows <= other.rows or lay.rows % other.rows:
            continue
        rows, R, C = other.rows, lay.rows, lay.cols
        out[k] = stack_onto(lay, rows)
        notes.append(f"{role} {lay.id}: its matrices, stacked {R} x {C}, are placed on {rows} rows as their row "
                     f"addresses usually place them: lane t addresses tile row t % {rows}, column {C} (t / {rows}) "
                     f"({rows} x {C * (R // rows)}; the placement of the catalog's ldmatrix_x4_is_mma_a and "
                     "stmatrix_x4_accumulator_pair)")
    return out[0], out[1], tuple(notes)


def handoff(source: Layout, target: Layout, timeout: float = DEFAULT_TIMEOUT) -> HandoffResult:
    """Decide whether ``source`` (tiled) feeds ``target`` lane for lane (see the module docstring)."""
    t0 = time.perf_counter()
    placed_from = (source.rows, source.cols), (target.rows, target.cols)
    source, target, placed = place_stacks(source, target)
    try:
        grid = grid_for(source, target)
    except HandoffError as e:
        stacks = [f"{role}'s {r} x {c} stack of matrices placed on {lay.rows} rows"
                  for role, lay, (r, c) in (("FROM", source, placed_from[0]), ("TO", target, placed_from[1]))
                  if (lay.rows, lay.cols) != (r, c)]
        if not stacks:
            raise
        raise HandoffError(f"{e} ({'; '.join(stacks)})") from None
    unspecified = [lay for lay in (source, target) if lay.unspecified]
    if unspecified:
        return HandoffResult(source, target, source, grid, "unspecified", (), None, unspecified_message(unspecified),
                             {}, (), time.perf_counter() - t0, notes=placed + _sparse_notes(source, target))
    notes = placed + _sparse_notes(source, target)
    tiled = tile(source, grid)
    steps, first, first_cross = _plan(tiled, target, source)
    enum_cex = _witness(tiled, target, source, steps, first) if first is not None else None
    w = max(width(tiled), width(target))
    budget = smt.Budget(timeout)
    res, pt = _z3_first_not_local(tiled, target, w, budget, first)
    z3_cex = _witness(tiled, target, source, steps, pt) if pt is not None else None
    message = _message(source, target, grid)

    def confirm(c: Any) -> bool:
        mine = point_of(target, c["lane"], c["i"])
        return mine is not None and all(point_of(tiled, c["lane"], j) != mine for j in range(tiled.n_elements))

    free = combine_engines("free", "proved", smt.status(res), z3_cex, enum_cex, message, time.perf_counter() - t0,
                           "every lane already holds the cells it needs", confirm, same_witness=True)
    checks = [free]
    engines = dict(free.engines)
    missing = [s for s in steps if s.src_lane is None and point_of(target, s.lane, s.i) is not None]
    if free.status in ("proved", "refuted"):
        plan_res = _z3_confirm_plan(tiled, target, steps, w, budget)
        engines["z3_plan"] = smt.status(plan_res)
        if plan_res != "unsat":
            status = "unknown" if plan_res == "unknown" else "error"
            text = ("Z3 could not confirm the plan read from the enumeration" if status == "unknown"
                    else "Z3 refutes the plan read from the enumeration")
            return HandoffResult(source, target, tiled, grid, status, tuple(steps), free.counterexample, text,
                                 engines, tuple(checks), time.perf_counter() - t0, notes)
    if free.status == "refuted" and not missing and target.threads > WARP:  # several warps: shuffle or not?
        if first_cross is None:  # Z3 proves it on the plan: every planned source in its lane's warp holds the cell
            res_w, pt_w = _z3_confirm_plan(tiled, target, steps, w, budget, same_warp=True), None
        else:
            res_w, pt_w = _z3_first_not_in_warp(tiled, target, w, budget, first_cross)
        z3_w = _witness(tiled, target, source, steps, pt_w) if pt_w is not None else None
        enum_w = _witness(tiled, target, source, steps, first_cross) if first_cross is not None else None

        def confirm_w(c: Any) -> bool:
            mine = point_of(target, c["lane"], c["i"])
            base = warp_of(c["lane"]) * WARP
            return mine is not None and all(point_of(tiled, t, j) != mine for t in range(base, base + WARP)
                                            for j in range(tiled.n_elements))

        in_warps = combine_engines("within_warps", "proved", smt.status(res_w), z3_w, enum_w, message,
                                   time.perf_counter() - t0, "every cell a lane needs is held in its own warp",
                                   confirm_w, same_witness=True)
        checks.append(in_warps)
        engines["z3_warps"], engines["enumeration_warps"] = (in_warps.engines.get("z3", "?"),
                                                             in_warps.engines.get("enumeration", "?"))
        if in_warps.status == "refuted":
            c = in_warps.counterexample
            assert c is not None  # a refuted check carries its witness
            text = ("first across warps: " + in_warps.message + f" (lane {c['lane']} is in warp {warp_of(c['lane'])}, "
                    f"lane {c['held_by']['lane']} in warp {warp_of(c['held_by']['lane'])})")
            return HandoffResult(source, target, tiled, grid, "shared", tuple(steps), in_warps.counterexample, text,
                                 engines, tuple(checks), time.perf_counter() - t0, notes)
        if in_warps.status != "proved":
            return HandoffResult(source, target, tiled, grid, in_warps.status, tuple(steps), in_warps.counterexample,
                                 in_warps.message, engines, tuple(checks), time.perf_counter() - t0, notes)
    if free.status == "proved":
        status, text = "free", ""
    elif free.status == "refuted":
        status = "missing" if missing else "shuffle"
        text = "first: " + free.message
        if missing:
            text += (f"; {len(missing)} cells of {target.operand} are held by no lane of the tiled "
                     f"{source.operand}, first {where(cell_dict(target, missing[0].lane, missing[0].i))}")
    else:
        status, text = free.status, free.message
    return HandoffResult(source, target, tiled, grid, status, tuple(steps), free.counterexample, text, engines,
                         tuple(checks), time.perf_counter() - t0, notes)


__all__ = ["HandoffError", "HandoffResult", "Step", "grid_for", "handoff", "place_stacks"]
