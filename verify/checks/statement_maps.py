"""What a page says of a fragment's map, decided by both engines (for ``verify.checks.statements``).

Prose such as "a group of four consecutive threads loads an entire row", "each thread loads 4 consecutive columns
across 2 rows", "thread 0 receiving the first fragment" or "the elements of the second matrix are loaded in the
next register" is a property of the reviewed layout's map.  Each is decided here twice, by the enumeration engine
(every (lane, i) of the map, numpy) and by Z3 (the map's encoding, symbolic lanes and elements), and the two are
joined by ``results.combine_engines`` (a disagreement is an ``error``, Z3's ``unknown`` is never proved).

The map is the fragment's named map ``(lane, i) -> (row, col)`` (``layout.map``, ``verify.layout.fragment_maps``) of one
member of a family; ``transposed`` reads it in the loaded matrix's orientation (row and column exchanged), as a
``.trans``-only shape's text speaks of it.
"""
from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np

from ..engines import smt
from ..layout.model import Layout
from ..layout.named import evaluate_all, in_box, variables, width
from ..results import CheckResult, combine_engines


class Fragment:
    """One member of a reviewed fragment, as arrays (enumeration) and as an encoding (Z3)."""

    def __init__(self, lay: Layout, env: dict[str, int], transposed: bool = False) -> None:
        self.layout = lay.instance(**env) if env else lay
        self.map = self.layout.map
        self.lane = self.map.inputs[0].name
        names = [d.name for d in self.map.outputs if d.name != "mma"]
        self.row, self.col = (names[1], names[0]) if transposed else (names[0], names[1])
        v = evaluate_all(self.map)
        self.ok = np.asarray(v.ok)
        self.rows = np.asarray(v.out[self.row])
        self.cols = np.asarray(v.out[self.col])
        self.threads, self.n = self.ok.shape

    def line(self, which: str) -> tuple[np.ndarray, np.ndarray, str, str]:
        """(the coordinate that names a line, the one along it) as arrays, and as output names."""
        if which == "row":
            return self.rows, self.cols, self.row, self.col
        return self.cols, self.rows, self.col, self.row

    def encoded(self, tag: str, w: int) -> tuple[dict[str, Any], Any, dict[str, Any]]:
        x = variables(self.map.inputs, w, tag)
        ok, out = self.map.encode(x, None)
        return x, smt.all_of([ok, in_box(x, self.map.inputs, None, w)]), out


def _decide(name: str, enum_cex: dict[str, int] | None, z3_res: str, z3_cex: dict[str, int] | None,
            said: Callable[[dict[str, int]], str], holds: str, t0: float) -> CheckResult:
    return combine_engines(name, "proved", smt.status(z3_res), z3_cex, enum_cex, lambda w: said(dict(w.to_json())),
                           time.perf_counter() - t0, holds)


def _model(model: Any, terms: dict[str, Any]) -> dict[str, int] | None:
    if model is None:
        return None
    return {k: smt.as_int(model, v) for k, v in terms.items()}


def groups_hold_lines(f: Fragment, group: int, which: str, timeout: float) -> CheckResult:
    """"A group of ``group`` consecutive threads holds an entire ``which`` (row or column)": the cells of one line
    are held by one group of lanes (``lane / group``), and every lane of that group holds cells of each line the
    group holds."""
    t0 = time.perf_counter()
    lines, _, lname, _ = f.line(which)
    enum = None
    lanes = np.arange(f.threads)
    seen: dict[int, int] = {}
    for t in lanes:
        for i in range(f.n):
            if f.ok[t, i]:
                v = int(lines[t, i])
                g = int(t) // group
                if seen.setdefault(v, g) != g and enum is None:
                    enum = {"lane": int(t), "i": i, "line": v}
    if enum is None:
        for t in lanes:
            mine = {int(lines[t, i]) for i in range(f.n) if f.ok[t, i]}
            first = int(t) // group * group
            theirs = {int(lines[first, i]) for i in range(f.n) if f.ok[first, i]}
            if mine != theirs:
                enum = {"lane": int(t), "i": 0, "line": min(mine ^ theirs)}
                break
    w = max(width(f.map), smt.width_for(max(f.threads, group) * 2))
    xa, oka, ya = f.encoded("a", w)
    xb, okb, yb = f.encoded("b", w)
    g = smt.bv(group, w)
    import z3
    split = z3.And(oka, okb, ya[lname] == yb[lname], z3.UDiv(xa[f.lane], g) != z3.UDiv(xb[f.lane], g))
    res, model = smt.solve([split], timeout)
    cex = _model(model, {"lane": xb[f.lane], "i": xb["i"], "line": yb[lname]}) if res == "sat" else None
    if res == "unsat":  # every lane of a group holds the lines of the group's first lane
        lane = xa[f.lane]
        first = z3.UDiv(lane, g) * g
        i1 = xa["i"]
        p1 = {f.lane: first, "i": i1}
        ok1, y1 = f.map.encode(p1, None)
        others = [f.map.encode({f.lane: lane, "i": smt.bv(i, w)}, None) for i in range(f.n)]
        held = smt.any_of([z3.And(ok2, y2[lname] == y1[lname]) for ok2, y2 in others])
        res, model = smt.solve([oka, ok1, z3.ULT(lane, smt.bv(f.threads, w)), z3.ULT(i1, smt.bv(f.n, w)), z3.Not(held)],
                               timeout)
        cex = _model(model, {"lane": lane, "i": i1, "line": y1[lname]}) if res == "sat" else None
    return _decide("groups", enum, res, cex,
                   lambda c: f"lane {c['lane']}: {which} {c['line']} is not held by exactly the group of {group} "
                             f"consecutive lanes lane {c['lane']} is in",
                   holds="each line held by one group", t0=t0)


def lane_cells(f: Fragment, which: str, lines: int, run: int, timeout: float) -> CheckResult:
    """"Each thread holds ``run`` consecutive columns across ``lines`` rows" (``which`` = "row"; for "column" the
    roles exchange): the lane's cells lie in exactly ``lines`` distinct rows, and (``run`` > 0) their columns are
    exactly ``run`` consecutive values."""
    t0 = time.perf_counter()
    a, b, aname, bname = f.line(which)
    enum = None
    for t in range(f.threads):
        idx = [i for i in range(f.n) if f.ok[t, i]]
        rows_ = {int(a[t, i]) for i in idx}
        cols_ = sorted({int(b[t, i]) for i in idx})
        bad = len(rows_) != lines or (run > 0 and (len(cols_) != run or cols_[-1] - cols_[0] != run - 1))
        if bad:
            enum = {"lane": t, "lines": len(rows_), "run": len(cols_)}
            break
    import z3
    w = max(width(f.map), smt.width_for(f.n * 2 + 2))
    lane = variables(f.map.inputs[:1], w, "l")[f.lane]
    cells = [f.map.encode({f.lane: lane, "i": smt.bv(i, w)}, None) for i in range(f.n)]

    def distinct(vals: list[Any]) -> Any:
        ones = [smt.ite(smt.all_of([v != u for u in vals[:k]]) if k else z3.BoolVal(True), smt.bv(1, w), smt.bv(0, w))
                for k, v in enumerate(vals)]
        return sum(ones[1:], ones[0])

    rows_z = [y[aname] for _, y in cells]
    cols_z = [y[bname] for _, y in cells]
    wrong = [distinct(rows_z) != smt.bv(lines, w)]
    if run > 0:
        lo = cols_z[0]
        for c in cols_z[1:]:
            lo = smt.ite(z3.ULT(c, lo), c, lo)
        wrong.append(distinct(cols_z) != smt.bv(run, w))
        wrong.append(smt.any_of([z3.Or(z3.ULT(c, lo), z3.UGE(c - lo, smt.bv(run, w))) for c in cols_z]))
    defined = smt.all_of([ok for ok, _ in cells])
    res, model = smt.solve([z3.ULT(lane, smt.bv(f.threads, w)), defined, smt.any_of(wrong)], timeout)
    cex = None
    if res == "sat" and model is not None:
        t = smt.as_int(model, lane)
        rows_t = {int(a[t, i]) for i in range(f.n) if f.ok[t, i]}
        cols_t = {int(b[t, i]) for i in range(f.n) if f.ok[t, i]}
        cex = {"lane": t, "lines": len(rows_t), "run": len(cols_t)}
    run_words = f"{run} consecutive {'columns' if which == 'row' else 'rows'} " if run else ""
    return _decide("cells", enum, res, cex,
                   lambda c: f"lane {c['lane']} holds cells in {c['lines']} {which}(s) and {c['run']} "
                             f"{'column' if which == 'row' else 'row'}(s), not {run_words}across {lines} {which}(s)",
                   holds="each lane's cells as stated", t0=t0)


def point_is(f: Fragment, lane: int, i: int, cell: tuple[int, int], timeout: float) -> CheckResult:
    """Lane ``lane``'s element ``i`` is ``cell`` (row, col): the arrays and Z3 at that point."""
    t0 = time.perf_counter()
    got = (int(f.rows[lane, i]), int(f.cols[lane, i])) if lane < f.threads and i < f.n and f.ok[lane, i] else None
    enum = None if got == cell else {"lane": lane, "i": i, "row": got[0] if got else -1, "col": got[1] if got else -1}
    import z3
    w = max(width(f.map), smt.width_for(max(cell) + f.threads + f.n))
    ok, y = f.map.encode({f.lane: smt.bv(lane, w), "i": smt.bv(i, w)}, None)
    res, model = smt.solve([z3.Or(z3.Not(ok), y[f.row] != smt.bv(cell[0], w), y[f.col] != smt.bv(cell[1], w))], timeout)
    cex = None
    if res == "sat":
        cex = {"lane": lane, "i": i, "row": got[0] if got else -1, "col": got[1] if got else -1}
    return _decide("point", enum, res, cex,
                   lambda c: f"lane {lane}'s element {i} is (row {c['row']}, col {c['col']}), not {cell}",
                   holds=f"lane {lane}'s element {i} is {cell}", t0=t0)


def registers_hold_matrices(f: Fragment, per_register: int, rows_per_matrix: int, register: int, matrix: int,
                            timeout: float) -> CheckResult:
    """Register ``register`` (0-based: elements ``register * per_register ..``) of every lane holds cells of matrix
    ``matrix`` only (memory rows ``matrix * rows_per_matrix ..``)."""
    t0 = time.perf_counter()
    enum = None
    lo = register * per_register
    if lo >= f.n:
        enum = {"lane": 0, "i": lo, "row": -1}
    else:
        for t in range(f.threads):
            for i in range(lo, min(lo + per_register, f.n)):
                if f.ok[t, i] and int(f.rows[t, i]) // rows_per_matrix != matrix:
                    enum = {"lane": t, "i": i, "row": int(f.rows[t, i])}
                    break
            if enum:
                break
    import z3
    w = max(width(f.map), smt.width_for((register + 2) * per_register + (matrix + 2) * rows_per_matrix))
    x, ok, y = f.encoded("r", w)
    cex: dict[str, int] | None
    if lo >= f.n:
        res, cex = "sat", {"lane": 0, "i": lo, "row": -1}
    else:
        i = x["i"]
        res, model = smt.solve([ok, z3.UGE(i, smt.bv(lo, w)), z3.ULT(i, smt.bv(lo + per_register, w)),
                                z3.UDiv(y[f.row], smt.bv(rows_per_matrix, w)) != smt.bv(matrix, w)], timeout)
        cex = _model(model, {"lane": x[f.lane], "i": i, "row": y[f.row]}) if res == "sat" else None
    return _decide("registers", enum, res, cex,
                   lambda c: f"lane {c['lane']}'s element {c['i']} (register {register}) is in row {c['row']}, "
                             f"not in matrix {matrix}" if c["row"] >= 0 else f"there is no register {register}",
                   holds=f"register {register} holds matrix {matrix}", t0=t0)


__all__ = ["Fragment", "groups_hold_lines", "lane_cells", "point_is", "registers_hold_matrices"]
