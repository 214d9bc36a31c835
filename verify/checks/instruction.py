"""Whole instructions: the operands of one ``mma`` / ``mma.sp`` checked against each other.

A spec's layouts are grouped into instructions (A with a B of the same types and a C its types
allow; a corrected layout replaces the doc's).  Checks (docs/checks.md "Per fragment, per
instruction, across instructions", docs/sparse.md):

* ``shapes``     A is M x K (sparse: M x K*kept/chunk compressed), B is K x N, C is M x N: declared
                 extents, and the rows / columns each fragment reaches are exactly those.
* ``k``          the set of k that A reaches (sparse: the logical [firstcol ... lastcol] ranges) equals
                 the set B reaches equals [0, K), in every MMA computation.
* ``registers``  registers x elements per register = element list = register bits / element bits
                 ... = rows x cols / threads, for every operand as the doc states it.
* ``lane_groups`` (m8n8k4) every MMA computation has threads/groups lanes, the lanes holding A,
                 B and C/D of it are the same, and each operand is a bijection onto its local matrix.
* sparse (mma.sp): ``chunk_ranges``, ``metadata_distinct``, ``metadata_ordered``,
                 ``metadata_invalid`` (expected refuted), ``metadata_budget``, ``metadata_group``
                 (``verify.sparse``).

Properties over (lane, i) are decided by Z3 and by enumeration, like the layout checks.
"""
from __future__ import annotations

import dataclasses

import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

import numpy as np
import z3

from ..catalog.instructions import Instruction, doc_layout, instructions
from ..engines import smt
from ..layout.model import Layout, Spec, cells_of, held
from ..layout.sparse import SparseMap, is_sparse
from ..layout.types import ELEMENT_BITS, REGISTER_BITS, elements_per_thread, packs
from ..results import CheckResult, InstructionResult, LayoutResult, combine_engines
from ..witnesses import AxisCoverage, KCoverage, LaneGroups, OperandExtent, OperandRegisters, at_member
from .fragment import width
from .sparse import sparse_checks
from .tmem_lanes import check_tmem_lanes
from ..layout.model import z3_cell_of

# ----------------------------------------------------------------------------- helpers

def _el(lay: Layout, lane: int, i: int) -> dict[str, Any]:
    return {"lane": lane, "i": i, "element": lay.element_name(i)}


def _extent(lay: Layout, shape: Any) -> tuple[int, int]:
    """The rows x cols an operand must cover in one MMA computation."""
    m, n, k = shape.m, shape.n, shape.k
    if lay.operand == "A":
        if isinstance(lay.map, SparseMap):
            md = lay.map.model
            return m, k * md.kept // md.chunk
        return m, k
    if lay.operand == "B":
        return k, n
    return m, n


class _Reach:
    """The k each element of an operand reaches (A: its column, B: its row; a sparse A element: the
    logical columns of its ``[firstcol ... lastcol]``), for the k check, from both engines."""

    def __init__(self, lay: Layout) -> None:
        self.lay = lay
        self.sparse = is_sparse(lay)

    def _ranges(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Where each (lane, i) is defined, and the first and last k it reaches."""
        lay = self.lay
        if self.sparse:
            inf = lay.map.info(lay.domain)
            return inf.defined, inf.first, inf.last
        cells = cells_of(lay)
        k = cells.col if lay.operand == "A" else cells.row
        return cells.ok, k, k

    def reaches(self, g: int, k: int) -> bool:
        """Some defined (lane, i) of MMA computation ``g`` reaches ``k`` (every k of its range)."""
        defined, lo, hi = self._ranges()
        return bool(np.any(defined & (self.lay.domain.group_array() == g)[:, None] & (lo <= k) & (k <= hi)))

    def firsts(self, g: int, span: int) -> dict[int, tuple[int, int]]:
        """For each k that some defined (lane, i) of MMA computation ``g`` reaches (a range: at most ``span`` + 1
        of its k), the first such (lane, i) in (lane, i) order."""
        memo = self.__dict__.setdefault("_firsts", {})
        if (g, span) not in memo:
            defined, lo, hi = self._ranges()
            lanes, idx = np.nonzero(defined & (self.lay.domain.group_array() == g)[:, None])  # in (lane, i) order
            first = lo[lanes, idx].astype(np.int64)
            count = np.maximum(np.minimum(hi[lanes, idx], first + span) - first + 1, 0)
            point = np.repeat(np.arange(lanes.size), count)  # each point's k in turn, points in order
            ks = first[point] + np.arange(point.size) - np.repeat(np.cumsum(count) - count, count)
            uniq, at = np.unique(ks, return_index=True)  # the first occurrence: the first point reaching k
            memo[(g, span)] = dict(zip(uniq.tolist(), zip(lanes[point[at]].tolist(), idx[point[at]].tolist())))
        return memo[(g, span)]

    def z3_k(self, lane: z3.BitVecRef, i: z3.BitVecRef, k: z3.BitVecRef) -> z3.BoolRef:
        """(lane, i) is defined and reaches k (sparse A: k inside its [firstcol ... lastcol])."""
        dom = self.lay.domain.z3_contains(lane, i)
        if self.sparse:
            info = self.lay.map.z3_info(lane, i)
            return z3.And(dom, info["defined"], info["first"] <= k, k <= info["last"])
        ok, r, c = z3_cell_of(self.lay, lane, i)
        return z3.And(dom, ok, (c if self.lay.operand == "A" else r) == k)


# ----------------------------------------------------------------------------- checks

def check_registers(spec: Spec, ops: Sequence[Layout], shape: Any) -> CheckResult:
    """Registers x packing x element list = rows x cols / threads, for each operand as the doc has it."""
    expect = "proved"
    problems: list[tuple[str, OperandRegisters]] = []
    for lay in ops:
        doc = doc_layout(spec, lay) or lay
        candidates = [doc] if doc is lay else [doc, lay]
        for x in candidates:
            if not x.corrected and (x.expect.get("count") == "refuted" or x.expect.get("packing") == "refuted"):
                expect = "refuted"
            rows, cols = _extent(x, shape)
            want = elements_per_thread(rows, cols, x.lanes_per_group)
            per = x.register_count * x.regs.elements_per_register
            rbits = REGISTER_BITS[x.regs.type]
            ebits = x.regs.element_bits or max([ELEMENT_BITS.get(t, 0) for t in x.types] or [0]) or None
            fits = rbits // ebits if ebits else None
            listed = len(x.regs.element_list) if x.regs.element_list is not None else None
            why = []
            if want is None or per != want:
                why.append(f"{x.regs.count} .{x.regs.type} registers x {x.regs.elements_per_register} = {per} elements "
                           f"per thread, but {rows} x {cols} / {x.lanes_per_group} threads = "
                           f"{rows * cols / x.lanes_per_group:g}")
            if fits is not None and packs(x.regs.type, ebits) != x.regs.elements_per_register:
                why.append(f"a .{x.regs.type} ({rbits} bits) holds {fits} .{x.types[0]} ({ebits} bits), "
                           f"not {x.regs.elements_per_register}")
            if listed is not None and listed != per:
                why.append(f"the element list names {listed}")
            if why:
                problems.append((f"{x.operand} ({x.id}{'' if x.corrected else ', as the doc states it'}): "
                                 + "; ".join(why),
                                 OperandRegisters(x.operand, x.id, x.regs.count, x.regs.type, rbits,
                                                  x.regs.elements_per_register, ebits, listed, per, want, rows, cols,
                                                  x.lanes_per_group, shape.k)))
    if not problems:
        return CheckResult("registers", "proved", expect, None, "", 0.0, {"arithmetic": "proved"})
    others = [f"{o.operand}: {o.register_count * o.regs.elements_per_register} per thread" for o in ops
              if o.id != problems[0][1].layout]
    k_text = f"K = {shape.k}; " if getattr(shape, "k", None) is not None else ""
    msg = "; ".join(p[0] for p in problems) + (f" ({k_text}" + ", ".join(others) + ")" if others else "")
    return CheckResult("registers", "refuted", expect, problems[0][1], msg, 0.0, {"arithmetic": "refuted"})


def _first_reaching(cells: Any, groups: int) -> dict[str, dict[int, dict[int, tuple[int, int]]]]:
    """axis -> mma -> value -> the first (lane, i) of that MMA computation whose row (col) is it."""
    out: dict[str, dict[int, dict[int, tuple[int, int]]]] = {"row": {}, "col": {}}
    lanes, idx = np.nonzero(cells.ok)  # scan order: (lane, i) ascending
    if not lanes.size:
        return out
    g = cells.group[lanes].astype(np.int64)
    for axis, values in (("row", cells.row[lanes, idx]), ("col", cells.col[lanes, idx])):
        lo = int(values.min())
        span = int(values.max()) - lo + 1
        _, first = np.unique((g - int(g.min())) * span + (values - lo), return_index=True)  # one int key per (group, value)
        for k in first.tolist():
            out[axis].setdefault(int(g[k]), {})[int(values[k])] = (int(lanes[k]), int(idx[k]))
    return out


def _span_problems(cells: Any, rows: int, cols: int, groups: int) -> list[tuple[int, str, int | None, int | None]]:
    """(mma, axis, first missing value, first value outside) for each MMA computation and axis whose
    reached rows (cols) are not exactly ``range(rows)`` (``range(cols)``), in (mma, axis) order (memoised on the
    cells: the D of a wgmma section is the same instance for every A it pairs with, and every map equal to it
    shares its cells, so each is summarised once)."""
    return held(cells, "_span_problems", (rows, cols, groups), lambda: _span_scan(cells, rows, cols, groups))


def _span_scan(cells: Any, rows: int, cols: int, groups: int) -> list[tuple[int, str, int | None, int | None]]:
    lanes, idx = np.nonzero(cells.ok)
    g = cells.group[lanes]
    out = []
    for gg in range(groups):
        mine = g == gg
        for axis, values, n in (("row", cells.row, rows), ("col", cells.col, cols)):
            v = values[lanes[mine], idx[mine]]
            inside = (v >= 0) & (v < n)
            seen = np.zeros(n, bool)
            seen[v[inside]] = True
            missing = int(np.argmin(seen)) if n and not seen.all() else None
            extra = int(v[~inside].min()) if not inside.all() else None
            if missing is not None or extra is not None:
                out.append((gg, axis, missing, extra))
    return out


def _z3_extent(lay: Layout, cells: Any, enum_cex: AxisCoverage | None,
               budget: smt.Budget) -> tuple[str, AxisCoverage | None]:
    """Z3's side of ``shapes`` for one operand, without quantifiers: a row/col outside the extent
    (symbolic), the enumeration's first missing row/col confirmed unreached, otherwise every
    row/col shown reached by the point the enumeration names."""
    w = width(lay)
    lane, i, v, grp = z3.BitVecs("lane i v group", w)
    ok, r, c = z3_cell_of(lay, lane, i)
    g = lay.domain.z3_group(lane)
    dom = lay.domain.z3_contains(lane, i)
    mma = (lambda m: smt.as_int(m, g)) if lay.groups > 1 else (lambda m: None)
    verdict = "proved"
    first = _first_reaching(cells, lay.groups)
    for axis, term, n in (("row", r, lay.rows), ("col", c, lay.cols)):
        res, m = smt.solve([dom, ok, z3.Or(term < 0, term >= n)], budget)
        if m is not None:
            return "refuted", AxisCoverage(lay.operand, lay.id, axis, None, smt.as_int(m, term), mma(m))
        if res == "unknown":
            verdict = "unknown"
        mine = enum_cex if enum_cex is not None and enum_cex.layout == lay.id and enum_cex.axis == axis else None
        if mine is not None and mine.missing is not None:
            gm = mine.mma or 0
            res, _ = smt.solve([dom, ok, g == gm, term == mine.missing], budget)
            if res == "unsat":
                return "refuted", mine
            verdict = "unknown" if res == "unknown" else verdict  # sat: Z3 reaches it (the engines disagree)
            continue
        rows: list[tuple[int, ...]] = [(ln, ix, gg, x) for gg in range(lay.groups) for x, (ln, ix) in sorted(first[axis].get(gg, {}).items())
                if 0 <= x < n]
        if len(rows) < lay.groups * n:
            continue  # the enumeration misses a value it did not report: combine_engines flags it
        res = smt.holds_everywhere(z3.And(dom, ok, g == grp, term == v), [lane, i, grp, v], rows, budget)
        if res == "sat":
            return "refuted", None  # a witness does not hold: the engines disagree
        if res == "unknown":
            verdict = "unknown"
    return verdict, None


def _z3_k(a: Layout, b: Layout, K: int, ra: _Reach, rb: _Reach,
          firsts: dict[int, tuple[dict[int, tuple[int, int]], dict[int, tuple[int, int]]]],
          enum_cex: KCoverage | None, budget: smt.Budget) -> tuple[str, KCoverage | None]:
    """Z3's side of ``k``, without quantifiers: a k outside [0, K) on either side (symbolic), the
    enumeration's first k missing on a side confirmed unreached there, otherwise every k of [0, K)
    shown reached on both sides by the points the enumeration names."""
    w = max(width(a), width(b), smt.width_for(4 * K + 64))
    la, ia, lb, ib, k, g = z3.BitVecs("lane_a i_a lane_b i_b k group", w)
    inA, inB = ra.z3_k(la, ia, k), rb.z3_k(lb, ib, k)
    ga, gb = a.domain.z3_group(la), b.domain.z3_group(lb)
    mma = (lambda m, t: smt.as_int(m, t)) if a.groups > 1 else (lambda m, t: None)
    verdict = "proved"
    for side, cs, lane, i, lay, gt in (("A", [inA, z3.Or(k < 0, k >= K)], la, ia, a, ga),
                                       ("B", [inB, z3.Or(k < 0, k >= K)], lb, ib, b, gb)):
        res, m = smt.solve(cs, budget)
        if m is not None:
            el = _el(lay, smt.as_int(m, lane), smt.as_int(m, i))
            return "refuted", KCoverage(smt.as_int(m, k), el if side == "A" else None, el if side == "B" else None,
                                        mma(m, gt))
        if res == "unknown":
            verdict = "unknown"
    if enum_cex is not None and 0 <= enum_cex.k < K and (enum_cex.A is None or enum_cex.B is None):
        missing_side = (inA, ga) if enum_cex.A is None else (inB, gb)
        res, _ = smt.solve([missing_side[0], missing_side[1] == (enum_cex.mma or 0), k == enum_cex.k], budget)
        if res == "unsat":
            return "refuted", enum_cex
        return ("unknown" if res == "unknown" else verdict), None
    groups = max(a.groups, b.groups)
    rows_a: list[tuple[int, ...]] = [(ln, ix, gg, kk) for gg in range(groups) for kk, (ln, ix) in sorted(firsts[gg][0].items()) if 0 <= kk < K]
    rows_b: list[tuple[int, ...]] = [(ln, ix, gg, kk) for gg in range(groups) for kk, (ln, ix) in sorted(firsts[gg][1].items()) if 0 <= kk < K]
    for term, lane, i, gt, rows in ((inA, la, ia, ga, rows_a), (inB, lb, ib, gb, rows_b)):
        if len(rows) < groups * K:
            continue  # the enumeration misses a k it did not report: combine_engines flags it
        res = smt.holds_everywhere(z3.And(term, gt == g), [lane, i, g, k], rows, budget)
        if res == "sat":
            return "refuted", None  # a witness does not hold: the engines disagree
        if res == "unknown":
            verdict = "unknown"
    return verdict, None


def check_shapes(ops: Sequence[Layout], shape: Any, reaches: dict[str, _Reach],
                 layout_results: dict[str, LayoutResult], timeout: float) -> CheckResult:
    t0 = time.perf_counter()
    # declared extents (arithmetic)
    for lay in ops:
        rows, cols = _extent(lay, shape)
        if (lay.rows, lay.cols) != (rows, cols):
            cex = OperandExtent(lay.operand, lay.id, (lay.rows, lay.cols), (rows, cols))
            return CheckResult("shapes", "refuted", "proved", cex,
                               f"{lay.operand} ({lay.id}) is declared {lay.rows} x {lay.cols}, but {shape} needs "
                               f"{rows} x {cols}", time.perf_counter() - t0, {"arithmetic": "refuted"})
    budget = smt.Budget(timeout)
    enum_cex: AxisCoverage | None = None
    z3_cex: AxisCoverage | None = None
    verdicts: list[str] = []
    for lay in ops:
        cells = cells_of(lay)  # placed elements (a sparse A element outside its chunk reaches nothing)
        problems = _span_problems(cells, lay.rows, lay.cols, lay.groups)
        if problems and enum_cex is None:
            g, axis, missing, extra = problems[0]
            enum_cex = AxisCoverage(lay.operand, lay.id, axis, missing, extra, g if lay.groups > 1 else None)
        # Z3 needs nothing more when it proved in_range and surjective: both extents are then exact
        lr = layout_results.get(lay.id)
        if (lr is not None and lr.get("in_range").engines.get("z3") == "proved"
                and lr.get("surjective").engines.get("z3") == "proved"):
            continue
        if z3_cex is None:
            verdict, z3_cex = _z3_extent(lay, cells, enum_cex, budget)
            verdicts.append(verdict)
    z3_status = "refuted" if z3_cex is not None or "refuted" in verdicts else (
        "unknown" if "unknown" in verdicts else "proved")
    if z3_cex is not None and enum_cex is not None:
        z3_cex = enum_cex if (enum_cex.layout, enum_cex.axis) == (z3_cex.layout, z3_cex.axis) else z3_cex

    def message(c: dict[str, Any]) -> str:
        mma = f" in MMA computation {c['mma'] + 1}" if "mma" in c else ""
        lay = next(x for x in ops if x.id == c["layout"])
        other = [x.id for x in ops if x.id != lay.id]
        if c["missing"] is not None:
            return (f"{lay.operand} ({lay.id}) reaches no element in {c['axis']} {c['missing']}{mma}, but the "
                    f"{lay.rows} x {lay.cols} operand of {shape} needs it (with {', '.join(other)})")
        return f"{lay.operand} ({lay.id}) reaches {c['axis']} {c['extra']}{mma}, outside {lay.rows} x {lay.cols}"

    return combine_engines("shapes", "proved", z3_status, z3_cex, enum_cex, message, time.perf_counter() - t0,
                    "A is M x K, B is K x N, C is M x N, each reaching exactly its extent")


def check_k(a: Layout, b: Layout, shape: Any, reaches: dict[str, _Reach], layout_results: dict[str, LayoutResult],
            sparse_ok: bool, timeout: float) -> CheckResult:
    """The k values A reaches == those B reaches == [0, K), per MMA computation; witness: a k on one side only."""
    t0 = time.perf_counter()
    K = shape.k
    ra, rb = reaches[a.id], reaches[b.id]
    enum_cex: KCoverage | None = None
    firsts: dict[int, tuple[dict[int, tuple[int, int]], dict[int, tuple[int, int]]]] = {}
    for g in range(max(a.groups, b.groups)):
        ka, kb = ra.firsts(g, 4 * K + 64), rb.firsts(g, 4 * K + 64)
        firsts[g] = (ka, kb)
        for k in sorted(set(ka) | set(kb) | set(range(K))):
            if k in ka and k in kb and 0 <= k < K:
                continue
            enum_cex = KCoverage(k, _el(a, *ka[k]) if k in ka else None, _el(b, *kb[k]) if k in kb else None,
                                 g if a.groups > 1 else None)
            break
        if enum_cex:
            break
    # Z3
    def exact(lay: Layout) -> bool:
        lr = layout_results.get(lay.id)
        return (lr is not None and lr.get("in_range").engines.get("z3") == "proved"
                and lr.get("surjective").engines.get("z3") == "proved")

    dense_k = (lambda x: x.cols == K) if not ra.sparse else (lambda x: True)
    if exact(a) and exact(b) and b.rows == K and dense_k(a) and (not ra.sparse or sparse_ok):
        z3_status, z3_cex = "proved", None  # both reach exactly [0, K) (Z3-proved extents; sparse: chunk_ranges)
    else:
        z3_status, z3_cex = _z3_k(a, b, K, ra, rb, firsts, enum_cex, smt.Budget(timeout))

    def message(c: dict[str, Any]) -> str:
        mma = f" in MMA computation {c['mma'] + 1}" if "mma" in c else ""
        k = c["k"]
        if c["A"] and c["B"]:
            return f"k = {k}{mma} is reached by A ({a.id}) and B ({b.id}) but lies outside [0, {K})"
        if c["A"]:
            e = c["A"]
            side = f"outside [0, {K})" if not 0 <= k < K else f"but B ({b.id}) holds no element with row k = {k}{mma}"
            return (f"A ({a.id}) lane {e['lane']} element {e['element']} reaches k = {k}{mma}, {side}")
        if c["B"]:
            e = c["B"]
            side = f"outside [0, {K})" if not 0 <= k < K else f"but A ({a.id}) holds no element with column k = {k}{mma}"
            return (f"B ({b.id}) lane {e['lane']} element {e['element']} reaches k = {k}{mma}, {side}")
        return f"k = {k}{mma} is reached by neither A ({a.id}) nor B ({b.id})"

    def confirm(c: dict[str, Any]) -> bool:
        k = c["k"]
        g = c.get("mma", 0)
        return not (ra.reaches(g, k) and rb.reaches(g, k) and 0 <= k < K)

    if z3_cex is not None and enum_cex is not None and z3_cex.k == enum_cex.k:
        z3_cex = enum_cex
    return combine_engines("k", "proved", z3_status, z3_cex, enum_cex, message, time.perf_counter() - t0,
                    f"A ({a.id}) and B ({b.id}) reach the same k, exactly [0, {K})", confirm)


def check_lane_groups(ops: Sequence[Layout], layout_results: dict[str, LayoutResult], timeout: float,
                      memo: dict[Any, Any] | None = None) -> CheckResult:
    """m8n8k4: each MMA computation has threads/groups lanes; A, B, C/D of it live in the same lanes;
    each operand is a bijection onto its local matrix there."""
    t0 = time.perf_counter()
    first = ops[0]
    groups, threads, per = first.groups, first.threads, first.lanes_per_group
    # enumeration
    enum_cex = None
    lane_group = first.domain.group_array()
    sizes = {g: [ln for ln in range(threads) if lane_group[ln] == g] for g in range(groups)}
    stray = [ln for ln in range(threads) if not 0 <= lane_group[ln] < groups]
    if stray:
        enum_cex = LaneGroups("range", int(lane_group[stray[0]]), lane=stray[0])
    else:
        for g, lanes in sizes.items():
            if len(lanes) != per:
                enum_cex = LaneGroups("size", g, lanes=len(lanes), expected=per)
                break
    if enum_cex is None:
        holds = {lay.id: {int(ln) for ln in np.flatnonzero(cells_of(lay).ok.any(axis=1))} for lay in ops}
        for x in ops:
            for y in ops:
                diff = sorted(holds[x.id] - holds[y.id])
                if diff and enum_cex is None:
                    ln = diff[0]
                    enum_cex = LaneGroups("holders", int(lane_group[ln]), lane=ln, holds=x.id, lacks=y.id)
    # Z3 (the group part and each operand pair are shared between instructions: memo)
    memo = {} if memo is None else memo
    w = max(width(x) for x in ops)
    lane, g = z3.BitVecs("lane group", w)
    gz = first.domain.z3_group(lane)
    dom = z3.And(lane >= 0, lane < threads)

    def group_part() -> tuple[str, LaneGroups | None]:
        res, m = smt.solve([dom, z3.Or(gz < 0, gz >= groups)], timeout)
        if m is not None:
            return "refuted", LaneGroups("range", smt.as_int(m, gz), lane=smt.as_int(m, lane))
        status = "unknown" if res == "unknown" else "proved"
        count = sum(z3.If(first.domain.z3_group(smt.bv(ln, w)) == g, smt.bv(1, w), smt.bv(0, w)) for ln in range(threads))
        res, m = smt.solve([g >= 0, g < groups, count != per], timeout)
        if m is not None:
            return "refuted", LaneGroups("size", smt.as_int(m, g), lanes=smt.as_int(m, count), expected=per)
        return ("unknown" if res == "unknown" else status), None

    def holds_z3(lay: Layout) -> z3.BoolRef:
        key = ("holds", lay.id, w)
        if key not in memo:
            memo[key] = z3.Or([z3_cell_of(lay, lane, smt.bv(i, w))[0] for i in range(lay.n_elements)])
        return memo[key]

    def pair_part(x: Layout, y: Layout) -> tuple[str, LaneGroups | None]:
        res, m = smt.solve([dom, holds_z3(x), z3.Not(holds_z3(y))], timeout)
        if m is not None:
            ln = smt.as_int(m, lane)
            return "refuted", LaneGroups("holders", smt.as_int(m, gz), lane=ln, holds=x.id, lacks=y.id)
        return ("unknown" if res == "unknown" else "proved"), None

    gkey = ("group", first.group, threads, groups)
    if gkey not in memo:
        memo[gkey] = group_part()
    z3_status, z3_cex = memo[gkey]
    if z3_cex is None:
        for x in ops:
            for y in ops:
                if x is y or z3_cex is not None:
                    continue
                pkey = ("pair", x.id, y.id)
                if pkey not in memo:
                    memo[pkey] = pair_part(x, y)
                st, z3_cex = memo[pkey]
                if st == "unknown":
                    z3_status = "unknown"
    if z3_cex is not None:
        z3_status = "refuted"
    result = combine_engines("lane_groups", "proved", z3_status, z3_cex, enum_cex, _lane_message(per),
                      time.perf_counter() - t0,
                      f"each of the {groups} MMA computations has {per} lanes holding A, B and C/D of it")
    if result.status != "proved":
        return result
    # within each group, every operand is a bijection onto its local matrix (layout checks, both engines)
    for lay in ops:
        lr = layout_results.get(lay.id)
        if lr is None:
            continue
        for name in ("in_range", "injective", "surjective"):
            c = lr.get(name)
            if c.status != "proved":
                return CheckResult("lane_groups", c.status, "proved", c.counterexample,
                                   f"{lay.operand} ({lay.id}) is not a bijection onto its local "
                                   f"{lay.rows} x {lay.cols} matrix: {name} {c.status}: {c.message}",
                                   time.perf_counter() - t0, dict(c.engines))
    return result


def _lane_message(per: int) -> Callable[[dict[str, Any]], str]:
    def message(c: dict[str, Any]) -> str:
        if c["kind"] == "range":
            return f"lane {c['lane']} is assigned MMA computation index {c['mma']}, which does not exist"
        if c["kind"] == "size":
            return (f"MMA computation {c['mma'] + 1} has {c['lanes']} lanes, expected {c['expected']} "
                    f"(the group formula does not split the warp evenly)")
        return (f"lane {c['lane']} (MMA computation {c['mma'] + 1}) holds elements of {c['holds']} but none of "
                f"{c['lacks']}")
    return message


# ----------------------------------------------------------------------------- driver

def _sparse_key(a: Layout) -> tuple:
    """What the sparse checks depend on: two A layouts (say .u4/.s4 and .e2m1 of one section)
    with the same key are the same mathematical object, so one check serves both."""
    return (a.formula, repr(sorted(a.sparse.items())), a.threads, a.n_elements, a.rows, a.cols, str(a.shape))


def _sparse_checks_cached(a: Layout, timeout: float,
                          memo: dict[tuple, tuple[str, list[CheckResult], dict[str, str]]]
                          ) -> tuple[list[CheckResult], dict[str, str]]:
    key = _sparse_key(a)
    if key not in memo:
        res, derived = sparse_checks(a, timeout)
        memo[key] = (a.id, res, derived)
    first_id, res, derived = memo[key]
    if first_id == a.id:
        return list(res), dict(derived)
    renamed = [dataclasses.replace(c, message=c.message.replace(first_id, a.id)) for c in res]
    return renamed, dict(derived)


# ----------------------------------------------------------------------------- warpgroups (wgmma) and TMEM

def _first_failing(results: list[tuple[dict[str, int], CheckResult]], name: str, expect: str) -> CheckResult:
    """One verdict from a check run per parameter binding: the first that is not proved (its witness and
    message name the binding), else the last proved."""
    for env, r in results:
        if r.status != "proved":
            tag = ", ".join(f"{k} = {v}" for k, v in env.items())
            cex = None if r.counterexample is None else (at_member(r.counterexample, env) if env else r.counterexample)
            return dataclasses.replace(r, expected=expect, counterexample=cex,
                                       message=f"{tag}: {r.message}" if tag else r.message)
    last = results[-1][1] if results else CheckResult(name, "proved", expect, None, "", 0.0, {"arithmetic": "proved"})
    return dataclasses.replace(last, expected=expect)


def _bindings(*lays: Layout) -> list[dict[str, int]]:
    """Every binding of the parameters of ``lays`` (they share them: wgmma N, tcgen05 .num)."""
    fam = next((x for x in lays if x.is_family), None)
    return [env for env, _ in fam.instances()] if fam is not None else [{}]


def _at(lay: Layout, env: dict[str, int]) -> Layout:
    return lay.instance(**{p.name: env[p.name] for p in lay.domain.params}) if lay.is_family else lay


def _shape_at(shape: Any, env: dict[str, int]) -> Any:
    return dataclasses.replace(shape, **{f: env[v] for f, v in (("m", shape.m), ("n", shape.n), ("k", shape.k))
                                         if isinstance(v, str) and v in env})


def check_family_instruction(spec: Spec, ops: Sequence[Layout], by_id: dict[str, LayoutResult],
                             timeout: float) -> list[CheckResult]:
    """``shapes`` and ``registers`` of an instruction whose operands are families, for every parameter value
    (one Z3 shortcut per operand: a family whose in_range and surjective Z3 proved for all N reaches
    exactly its extent at every N)."""
    shapes: list[tuple[dict[str, int], CheckResult]] = []
    regs: list[tuple[dict[str, int], CheckResult]] = []
    expect_regs = "proved"
    docs = [d for d in (doc_layout(spec, x) for x in ops) if d is not None]
    plain = [x for x in ops if not x.is_family]  # checked once: their extent does not depend on the parameter
    plain_shapes = check_shapes(plain, spec.shape, {x.id: _Reach(x) for x in plain}, by_id, timeout) if plain else None
    for env in _bindings(*ops):
        inst = [_at(x, env) for x in ops]
        shape = _shape_at(spec.shape, env)
        fam = [x for x in inst if x.id not in {p.id for p in plain}]
        r_shapes = plain_shapes if plain_shapes is not None and plain_shapes.status != "proved" else None
        if r_shapes is None:
            r_shapes = check_shapes(fam, shape, {x.id: _Reach(x) for x in fam}, by_id, timeout) if fam else plain_shapes
        assert r_shapes is not None  # no family operand: the plain ones were checked (ops is never empty)
        shapes.append((env, r_shapes))
        doc_insts = dataclasses.replace(spec, layouts=tuple(_at(x, env) for x in {id(d): d for d in [*docs, *ops]}.values()))
        r = check_registers(doc_insts, inst, shape)
        expect_regs = r.expected if r.expected == "refuted" else expect_regs
        regs.append((env, r))
        if shapes[-1][1].status != "proved" and regs[-1][1].status != "proved":
            break
    return [_first_failing(shapes, "shapes", "proved"), _first_failing(regs, "registers", expect_regs)]


class _Memos:
    """What instructions of one run share: the same operand pair is checked once."""

    def __init__(self) -> None:
        self.sparse: dict[tuple, tuple[str, list[CheckResult], dict[str, str]]] = {}
        self.shapes: dict[tuple[str, ...], CheckResult] = {}
        self.k: dict[tuple[str, str], CheckResult] = {}
        self.lanes: dict[Any, Any] = {}
        self.reaches: dict[str, _Reach] = {}


Checker = Callable[[Instruction, "dict[str, LayoutResult]", float, _Memos], "tuple[list[CheckResult], dict[str, str]]"]
_CHECKERS: dict[str, Checker] = {}


def checks_for(kind: str) -> Callable[[Checker], Checker]:
    """Register the instruction checks of one kind of instruction (``verify.catalog.instructions``)."""
    def add(fn: Checker) -> Checker:
        _CHECKERS[kind] = fn
        return fn
    return add


def check_instructions(specs: Iterable[Spec], results: Iterable[LayoutResult] = (),
                       timeout: float = 10.0) -> list[InstructionResult]:
    """Every instruction the specs declare (``verify.catalog.instructions``), with its consistency checks."""
    by_id = {r.layout.id: r for r in results}
    memos = _Memos()
    out: list[InstructionResult] = []
    for spec in specs:
        for ins in instructions(spec):
            t0 = time.perf_counter()
            checks, derived = _CHECKERS[ins.kind](ins, by_id, timeout, memos)
            out.append(InstructionResult(ins.id, ins.name, ins.shape, ins.operands, tuple(checks), dict(derived),
                                         time.perf_counter() - t0))
    return out


@checks_for("mma")
def _mma_checks(ins: Instruction, by_id: dict[str, LayoutResult], timeout: float,
                memos: _Memos) -> tuple[list[CheckResult], dict[str, str]]:
    a, b, c = ins.operands
    for x in ins.operands:
        memos.reaches.setdefault(x.id, _Reach(x))
    checks: list[CheckResult] = []
    derived: dict[str, str] = {}
    key = tuple(x.id for x in ins.operands)
    if key not in memos.shapes:
        memos.shapes[key] = check_shapes(ins.operands, ins.shape, memos.reaches, by_id, timeout)
    checks.append(memos.shapes[key])
    sparse_results: list[CheckResult] = []
    if is_sparse(a):
        sparse_results, derived = _sparse_checks_cached(a, timeout, memos.sparse)
    ranges_ok = all(r.status == "proved" for r in sparse_results if r.check == "chunk_ranges")
    if (a.id, b.id) not in memos.k:
        memos.k[(a.id, b.id)] = check_k(a, b, ins.shape, memos.reaches, by_id, ranges_ok, timeout)
    checks.append(memos.k[(a.id, b.id)])
    checks.append(check_registers(ins.spec, ins.operands, ins.shape))
    if a.groups > 1:
        checks.append(check_lane_groups(ins.operands, by_id, timeout, memos.lanes))
    checks.extend(sparse_results)
    return checks, derived


@checks_for("sparse_a")
def _sparse_a_checks(ins: Instruction, by_id: dict[str, LayoutResult], timeout: float,
                     memos: _Memos) -> tuple[list[CheckResult], dict[str, str]]:
    res, derived = _sparse_checks_cached(ins.operands[0], timeout, memos.sparse)
    return list(res), derived


@checks_for("warpgroup")
def _warpgroup_checks(ins: Instruction, by_id: dict[str, LayoutResult], timeout: float,
                      memos: _Memos) -> tuple[list[CheckResult], dict[str, str]]:
    a = ins.operands[0]
    checks = check_family_instruction(ins.spec, ins.operands, by_id, timeout)
    derived: dict[str, str] = {}
    if is_sparse(a):
        sparse_results, derived = _sparse_checks_cached(a, timeout, memos.sparse)
        checks.extend(sparse_results)
    derived["shapes"] = "the A and D layouts are transcribed from CuTe (the doc shows them only as figures)"
    return checks, derived


@checks_for("tmem")
def _tmem_checks(ins: Instruction, by_id: dict[str, LayoutResult], timeout: float,
                 memos: _Memos) -> tuple[list[CheckResult], dict[str, str]]:
    """tcgen05.ld/st: each register layout with ``registers`` (every .num) and the Tensor Memory access rule
    (``tmem_lanes``)."""
    [lay] = ins.operands
    spec = ins.spec
    regs = []
    for env in _bindings(lay):
        doc_insts = dataclasses.replace(spec, layouts=tuple(_at(x, env) for x in spec.layouts))
        inst = _at(lay, env)
        regs.append((env, check_registers(doc_insts, [inst], _TmemShape(inst.rows, inst.cols))))
    expect = "refuted" if any(r.expected == "refuted" for _, r in regs) else "proved"
    checks = [_first_failing(regs, "registers", expect), check_tmem_lanes(lay, timeout)]
    return checks, {"tmem_lanes": "the per-warp layout is transcribed from CuTe; the warps' taddr lane "
                                  "bases are CuTe's make_tmem_copy: 32 * (w % 4), and + 16 for a "
                                  "16-lane shape"}


@dataclass(frozen=True)
class _TmemShape:
    """The extent ``check_registers`` compares a tcgen05 fragment with: TMEM lanes x 32-bit columns."""

    m: int
    n: int
    k: Any = None


__all__ = ["InstructionResult", "check_family_instruction", "check_instructions", "checks_for"]
