"""The per-fragment properties, each decided by two independent engines.

``count``/``elements``/``packing`` are arithmetic on the spec's fields.
``in_range``/``injective``/``surjective`` are decided by Z3 (``verify.smt``) and by
exhaustive enumeration (``verify.oracle``); the verdict is theirs jointly, and a
disagreement is an ``error``, never silently resolved.
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Protocol

import z3

from . import oracle, smt
from .formula import Span
from .results import CheckResult, Finding, LayoutResult, combine_engines
from .spec import ELEMENT_BITS, REGISTER_BITS, Layout, Spec, SpecError, split_element_list

DEFAULT_TIMEOUT = 10.0


# ----------------------------------------------------------------------------- cell maps

class CellMap(Protocol):
    """Where element i of a lane lands, for both engines (dense or sparse A)."""

    def py_cell(self, lane: int, i: int) -> tuple[int, int] | None: ...

    def z3_cell(self, lane: z3.BitVecRef, i: z3.BitVecRef) -> tuple[z3.BoolRef, z3.ExprRef, z3.ExprRef]: ...


@dataclass(frozen=True)
class FormulaCells:
    """Dense layouts: the cell is (row, col) of the formula (memoised: the domain is tiny)."""

    layout: Layout
    _memo: dict = field(default_factory=dict, compare=False, repr=False)

    def py_cell(self, lane: int, i: int) -> tuple[int, int] | None:
        key = (lane, i)
        if key not in self._memo:
            self._memo[key] = self._py_cell(lane, i)
        return self._memo[key]

    def _py_cell(self, lane: int, i: int) -> tuple[int, int] | None:
        ev = oracle.Evaluator(self.layout.formula, lane, i)
        try:
            r, c = ev.value("row"), ev.value("col")
        except oracle.Undefined:
            return None
        if isinstance(r, tuple) or isinstance(c, tuple):
            raise oracle.EvalError("a column range where a single cell is needed", self.layout.formula.get("col").pos)
        return r, c

    def z3_cell(self, lane: z3.BitVecRef, i: z3.BitVecRef) -> tuple[z3.BoolRef, z3.ExprRef, z3.ExprRef]:
        enc = smt.Encoder(self.layout.formula, lane, i)
        r, c = enc.definition("row"), enc.definition("col")
        return z3.And(r.ok, c.ok), r.value, c.value  # type: ignore[return-value]


def is_sparse_range(layout: Layout) -> bool:
    return any(isinstance(c.expr, Span) for c in layout.formula.get("col").cases)


_CELLS: dict[int, tuple[Layout, CellMap]] = {}


def cells_for(layout: Layout) -> CellMap:
    """The cell map of a layout (one per layout object, so evaluations are shared by all
    checks); sparse A goes through the sparse model."""
    hit = _CELLS.get(id(layout))
    if hit is not None and hit[0] is layout:
        return hit[1]
    if is_sparse_range(layout):
        from .sparse import compressed_cells  # noqa: PLC0415
        cells: CellMap = compressed_cells(layout)
    else:
        cells = FormulaCells(layout)
    _CELLS[id(layout)] = (layout, cells)
    return cells


# ----------------------------------------------------------------------------- helpers

class BoundError(ValueError):
    """Formula values may leave the 64-bit range: bad input, reported with a position."""


def width(layout: Layout) -> int:
    """Bit-vector width for this layout, from a sound interval bound on every value."""
    bound = max(layout.threads, layout.n_elements, layout.rows, layout.cols, layout.groups,
                smt.value_bound(layout.formula, layout.threads - 1, layout.n_elements - 1),
                smt.value_bound(layout.group, layout.threads - 1, 0) if layout.group else 0)
    w = smt.width_for(bound)
    if w > smt.MAX_WIDTH:
        raise BoundError(f"{layout.id}: formula values may reach {bound}, beyond 64 bits")
    return w

def _element(layout: Layout, lane: int, i: int) -> dict[str, Any]:
    return {"lane": lane, "i": i, "element": layout.element_name(i)}


def _group_py(layout: Layout, lane: int) -> int:
    return layout.group_of(lane)


def _group_z3(layout: Layout, lane: z3.BitVecRef) -> z3.ExprRef:
    if layout.group is None:
        return smt.bv(0, lane.size())
    return smt.Encoder(layout.group, lane, smt.bv(0, lane.size())).definition("group").value  # type: ignore[return-value]


def _mma(layout: Layout, d: dict[str, Any], group: int) -> dict[str, Any]:
    if layout.groups > 1:
        d["mma"] = group
    return d


def _solve(constraints: list[z3.BoolRef], timeout: float) -> tuple[str, z3.ModelRef | None]:
    """One query; quantified ones go through quantifier elimination first (10x faster)."""
    quantified = any(z3.is_quantifier(c) for c in constraints)
    makers = ([lambda: z3.Then("simplify", "qe", "smt").solver(), z3.Solver] if quantified
              else [lambda: z3.SolverFor("BV")])
    deadline = time.perf_counter() + timeout
    for make in makers:
        left = deadline - time.perf_counter()
        if left <= 0:
            break
        s = make()
        s.set("timeout", max(1, int(left * 1000)))
        s.add(*constraints)
        r = s.check()
        if r == z3.sat:
            return "sat", s.model()
        if r == z3.unsat:
            return "unsat", None
    return "unknown", None


def _solve_min(constraints: list[z3.BoolRef], keys: list[z3.ExprRef],
               timeout: float) -> tuple[str, z3.ModelRef | None]:
    """Solve, then make the witness canonical: lexicographically smallest ``keys``.

    Z3's models differ between runs in one process; a binary search per key pins the
    witness to the one the enumeration engine finds first, so outputs are reproducible
    and the two engines' witnesses can be compared exactly.
    """
    deadline = time.perf_counter() + timeout
    res, m = _solve(constraints, timeout)
    if res != "sat":
        return res, m
    fixed = list(constraints)
    for key in keys:
        assert m is not None
        lo, hi = 0, smt.as_int(m, key)
        while lo < hi:
            mid = (lo + hi) // 2
            r, m2 = _solve(fixed + [key <= mid], max(0.001, deadline - time.perf_counter()))
            if r == "sat":
                hi, m = smt.as_int(m2, key), m2  # type: ignore[arg-type]
            elif r == "unsat":
                lo = mid + 1
            else:
                return "sat", m  # out of time: keep the (valid, non-minimal) witness
        fixed.append(key == hi)
    return "sat", m


# ----------------------------------------------------------------------------- arithmetic checks

def check_count(layout: Layout) -> CheckResult:
    per_thread = layout.registers * layout.elements_per_register
    total = per_thread * layout.lanes_per_group
    want = layout.rows * layout.cols
    problems = []
    if total != want:
        problems.append(f"{layout.registers} registers x {layout.elements_per_register} elements x "
                        f"{layout.lanes_per_group} threads = {total}, but the matrix has "
                        f"{layout.rows} x {layout.cols} = {want} elements")
    if layout.element_list is not None and len(layout.element_list) != per_thread:
        problems.append(f"{layout.registers} registers x {layout.elements_per_register} elements = "
                        f"{per_thread} per thread, but the element list names {len(layout.element_list)}")
    if layout.n_elements * layout.lanes_per_group != want and layout.element_list is not None:
        problems.append(f"the element list ({layout.n_elements} per thread) x {layout.lanes_per_group} "
                        f"threads != {want}")
    cex = None
    if problems:
        cex = {"registers": layout.registers, "elements_per_register": layout.elements_per_register,
               "per_thread": per_thread, "listed": len(layout.element_list) if layout.element_list else None,
               "threads": layout.lanes_per_group, "total": total, "matrix": want}
    return CheckResult("count", "refuted" if problems else "proved", layout.expect.get("count", "proved"),
                       cex, "; ".join(problems), 0.0, {"arithmetic": "refuted" if problems else "proved"})


def check_elements(layout: Layout) -> CheckResult:
    """The doc's element list names prefix0..prefixN-1, in order, comma-separated."""
    expect = layout.expect.get("elements", "proved")
    if layout.elements_text is None:
        return CheckResult("elements", "proved", expect, None, "no element list in the doc; names generated",
                           0.0, {"arithmetic": "proved"})
    text = layout.elements_text.strip()
    names = split_element_list(text)
    want = [layout.element_name(k) for k in range(len(names))]
    for k, (got, exp) in enumerate(zip(names, want)):
        if got != exp:
            cex = {"position": k, "found": got, "expected": exp, "list": text}
            return CheckResult("elements", "refuted", expect, cex,
                               f"element list {text!r}: position {k} is {got!r}, expected {exp!r}",
                               0.0, {"arithmetic": "refuted"})
    return CheckResult("elements", "proved", expect, None, "", 0.0, {"arithmetic": "proved"})


def check_packing(layout: Layout) -> CheckResult:
    """Elements per register must equal register width / element width, for every type."""
    expect = layout.expect.get("packing", "proved")
    rbits = REGISTER_BITS[layout.register_type]
    for t in layout.types:
        ebits = layout.element_bits or ELEMENT_BITS.get(t)
        if ebits is None:
            return CheckResult("packing", "error", expect, None, f"unknown element type {t!r}", 0.0, {})
        if rbits // ebits != layout.elements_per_register or rbits % ebits:
            cex = {"register_type": layout.register_type, "register_bits": rbits, "type": t,
                   "element_bits": ebits, "elements_per_register": layout.elements_per_register,
                   "fits": rbits // ebits}
            return CheckResult("packing", "refuted", expect, cex,
                               f"a .{layout.register_type} register ({rbits} bits) holds {rbits // ebits} "
                               f".{t} ({ebits} bits), not {layout.elements_per_register}",
                               0.0, {"arithmetic": "refuted"})
    return CheckResult("packing", "proved", expect, None, "", 0.0, {"arithmetic": "proved"})


# ----------------------------------------------------------------------------- enumeration engine

@dataclass(frozen=True)
class Enumeration:
    """Every (lane, i) evaluated; the verdicts of the second engine with witnesses."""

    in_range: dict[str, Any] | None
    injective: dict[str, Any] | None
    surjective: dict[str, Any] | None


def enumerate_cells(cell: Callable[[int, int], tuple[int, int] | None], group: Callable[[int], int],
                    threads: int, n: int, rows: int, cols: int, groups: int,
                    name: Callable[[int], str]) -> Enumeration:
    """The oracle pass over every (lane, i): first bad element, first collision, first hole.

    ``cell`` gives (row, col) or None (no case applies); witnesses are the first in
    (lane, i) order, holes the first in (mma, row, col) order.
    """
    bad_range = None
    collision = None
    owners: dict[tuple[int, int, int], tuple[int, int]] = {}

    def elem(lane: int, i: int) -> dict[str, Any]:
        return {"lane": lane, "i": i, "element": name(i)}

    def mma(d: dict[str, Any], g: int) -> dict[str, Any]:
        return {**d, "mma": g} if groups > 1 else d

    for lane in range(threads):
        g = group(lane)
        for i in range(n):
            c = cell(lane, i)
            if c is None or not (0 <= g < groups) or not (0 <= c[0] < rows and 0 <= c[1] < cols):
                if bad_range is None:
                    bad_range = mma({**elem(lane, i), "row": c[0] if c else None, "col": c[1] if c else None}, g)
            if c is None:
                continue
            key = (g, c[0], c[1])
            if key in owners and collision is None:
                l0, i0 = owners[key]
                collision = mma({"first": elem(l0, i0), "second": elem(lane, i), "row": c[0], "col": c[1]}, g)
            owners.setdefault(key, (lane, i))
    hole = next((mma({"row": r, "col": c}, g) for g in range(groups) for r in range(rows) for c in range(cols)
                 if (g, r, c) not in owners), None)
    return Enumeration(bad_range, collision, hole)


def enumerate_layout(layout: Layout, cells: CellMap) -> Enumeration:
    return enumerate_cells(cells.py_cell, layout.group_of, layout.threads, layout.n_elements,
                           layout.rows, layout.cols, layout.groups, layout.element_name)


# ----------------------------------------------------------------------------- Z3 engine

def z3_in_range(layout: Layout, cells: CellMap, timeout: float) -> tuple[str, dict[str, Any] | None]:
    lane, i = z3.BitVecs("lane i", width(layout))
    ok, r, c = cells.z3_cell(lane, i)
    g = _group_z3(layout, lane)
    inside = z3.And(ok, r >= 0, r < layout.rows, c >= 0, c < layout.cols, g >= 0, g < layout.groups)
    res, m = _solve_min([smt.in_domain(lane, i, layout.threads, layout.n_elements), z3.Not(inside)],
                        [lane, i], timeout)
    if res != "sat":
        return res, None
    assert m is not None
    ln, ix = smt.as_int(m, lane), smt.as_int(m, i)
    defined = z3.is_true(m.eval(ok, model_completion=True))
    return res, _mma(layout, {**_element(layout, ln, ix), "row": smt.as_int(m, r) if defined else None,
                              "col": smt.as_int(m, c) if defined else None}, smt.as_int(m, g))


def z3_injective(layout: Layout, cells: CellMap, timeout: float) -> tuple[str, dict[str, Any] | None]:
    l1, i1, l2, i2 = z3.BitVecs("lane1 i1 lane2 i2", width(layout))
    ok1, r1, c1 = cells.z3_cell(l1, i1)
    ok2, r2, c2 = cells.z3_cell(l2, i2)
    g1, g2 = _group_z3(layout, l1), _group_z3(layout, l2)
    cs = [smt.in_domain(l1, i1, layout.threads, layout.n_elements),
          smt.in_domain(l2, i2, layout.threads, layout.n_elements),
          # order the pair so the witness is canonical: (l1, i1) < (l2, i2)
          z3.Or(l1 < l2, z3.And(l1 == l2, i1 < i2)),
          ok1, ok2, g1 == g2, r1 == r2, c1 == c2]
    res, m = _solve_min(cs, [l2, i2, l1, i1], timeout)
    if res != "sat":
        return res, None
    assert m is not None
    return res, _mma(layout, {"first": _element(layout, smt.as_int(m, l1), smt.as_int(m, i1)),
                              "second": _element(layout, smt.as_int(m, l2), smt.as_int(m, i2)),
                              "row": smt.as_int(m, r1), "col": smt.as_int(m, c1)}, smt.as_int(m, g1))


def _covered_query(layout: Layout, cells: CellMap, w: int, g: int, r: int, c: int) -> z3.BoolRef:
    lane, i = z3.BitVecs("lane i", w)
    ok, rr, cc = cells.z3_cell(lane, i)
    return z3.And(smt.in_domain(lane, i, layout.threads, layout.n_elements), ok,
                  _group_z3(layout, lane) == g, rr == r, cc == c)


def _ground_hole_query(layout: Layout, cells: CellMap, w: int, row: z3.ExprRef, col: z3.ExprRef,
                       grp: z3.ExprRef) -> list[z3.BoolRef]:
    """The forall over the finite domain, expanded into one ground instance per (lane, i)."""
    out = []
    for ln in range(layout.threads):
        lane = z3.BitVecVal(ln, w)
        g = _group_z3(layout, lane)
        for ix in range(layout.n_elements):
            ok, r, c = cells.z3_cell(lane, z3.BitVecVal(ix, w))
            out.append(z3.Not(z3.And(ok, g == grp, r == row, c == col)))
    return out


def z3_surjective(layout: Layout, cells: CellMap, timeout: float, prior: dict[str, str],
                  enum_hole: dict[str, Any] | None) -> tuple[str, dict[str, Any] | None, str]:
    """Is some cell (of some lane group) reached by no (lane, i)?

    Proved by pigeonhole when Z3 already proved in_range and injective and the domain
    has exactly rows x cols points per group.  Otherwise an exists-forall query: first
    model-based instantiation, then quantifier elimination, then (complete, slower) the
    forall expanded over the finite domain.  The reported hole is the canonical one
    (first in (mma, row, col) order) once Z3 confirms, by a ground query, that nothing
    reaches it.
    """
    if (prior.get("in_range") == "unsat" and prior.get("injective") == "unsat"
            and layout.lanes_per_group * layout.n_elements == layout.rows * layout.cols):
        return "unsat", None, "pigeonhole"
    w = width(layout)
    row, col, grp = z3.BitVecs("row col group", w)
    lane, i = z3.BitVecs("lane i", w)
    ok, r, c = cells.z3_cell(lane, i)
    g = _group_z3(layout, lane)
    hits = z3.And(smt.in_domain(lane, i, layout.threads, layout.n_elements), ok, g == grp, r == row, c == col)
    box = [row >= 0, row < layout.rows, col >= 0, col < layout.cols, grp >= 0, grp < layout.groups]
    deadline = time.perf_counter() + timeout
    res, m, method = "unknown", None, "exists-forall"
    for make in (z3.Solver, lambda: z3.Then("simplify", "qe", "smt").solver()):
        left = min(deadline - time.perf_counter(), timeout / 3)
        if left <= 0:
            break
        s = make()
        s.set("timeout", max(1, int(left * 1000)))
        s.add(*box, z3.ForAll([lane, i], z3.Not(hits)))
        r0 = s.check()
        if r0 != z3.unknown:
            res, m = ("sat", s.model()) if r0 == z3.sat else ("unsat", None)
            break
    if res == "unknown" and deadline > time.perf_counter():
        method = "ground"
        res, m = _solve(box + _ground_hole_query(layout, cells, w, row, col, grp), deadline - time.perf_counter())
    if res != "sat":
        return res, None, method
    assert m is not None
    found = _mma(layout, {"row": smt.as_int(m, row), "col": smt.as_int(m, col)}, smt.as_int(m, grp))
    if enum_hole is not None:
        q, _ = _solve([_covered_query(layout, cells, w, enum_hole.get("mma", 0), enum_hole["row"], enum_hole["col"])],
                      max(0.001, deadline - time.perf_counter()))
        if q == "unsat":
            return "sat", dict(enum_hole), method
    return "sat", found, method


# ----------------------------------------------------------------------------- combination

def _confirm_with_oracle(check: str, cex: dict[str, Any], layout: Layout, cells: CellMap) -> bool:
    """Re-evaluate a Z3 counterexample with the oracle: every witness must be real."""
    if check == "in_range":
        cell = cells.py_cell(cex["lane"], cex["i"])
        g = _group_py(layout, cex["lane"])
        return cell is None or not (0 <= cell[0] < layout.rows and 0 <= cell[1] < layout.cols
                                    and 0 <= g < layout.groups)
    if check == "injective":
        a, b = cex["first"], cex["second"]
        ca, cb = cells.py_cell(a["lane"], a["i"]), cells.py_cell(b["lane"], b["i"])
        return (ca is not None and ca == cb == (cex["row"], cex["col"])
                and _group_py(layout, a["lane"]) == _group_py(layout, b["lane"]))
    if check == "surjective":
        g = cex.get("mma", 0)
        return all(cells.py_cell(ln, i) != (cex["row"], cex["col"])
                   for ln in range(layout.threads) if _group_py(layout, ln) == g
                   for i in range(layout.n_elements))
    raise AssertionError(check)


def _message(check: str, layout: Layout, cex: dict[str, Any] | None) -> str:
    if cex is None:
        return ""
    mma = f" of MMA computation {cex['mma'] + 1}" if "mma" in cex else ""
    if check == "in_range":
        if cex["row"] is None:
            return (f"lane {cex['lane']}, element {cex['element']}: no case of the formula applies "
                    f"(the formula does not define it)")
        return (f"lane {cex['lane']}, element {cex['element']} lands at cell ({cex['row']}, {cex['col']}), "
                f"outside the {layout.rows} x {layout.cols} matrix{mma}")
    if check == "injective":
        a, b = cex["first"], cex["second"]
        return (f"lane {a['lane']} element {a['element']} and lane {b['lane']} element {b['element']} "
                f"both land at cell ({cex['row']}, {cex['col']}){mma}")
    return f"cell ({cex['row']}, {cex['col']}){mma} is held by no lane"


def _combine(check: str, layout: Layout, z3_res: str, z3_cex: dict[str, Any] | None,
             enum_cex: dict[str, Any] | None, cells: CellMap, seconds: float) -> CheckResult:
    z3_status = {"sat": "refuted", "unsat": "proved", "unknown": "unknown"}[z3_res]
    return combine_engines(check, layout.expect.get(check, "proved"), z3_status, z3_cex, enum_cex,
                           lambda c: _message(check, layout, dict(c)), seconds,
                           confirm=lambda c: _confirm_with_oracle(check, dict(c), layout, cells),
                           same_witness=True)


def check_layout(layout: Layout, timeout: float = DEFAULT_TIMEOUT) -> LayoutResult:
    """Run every property of one layout with both engines.

    A formula that cannot be evaluated on its domain (division by zero, a shift out of
    range, values beyond 64 bits) is bad input: a ``SpecError`` at the spec file's line.
    """
    try:
        return _check_layout(layout, timeout)
    except oracle.EvalError as e:
        raise SpecError(layout.spec_path or layout.source.file, layout.formula_line + e.pos.line - 1, e.pos.col,
                        f"{layout.id}: {e.message}") from None
    except BoundError as e:
        raise SpecError(layout.spec_path or layout.source.file, layout.formula_line, 1, str(e)) from None


# Engine verdicts by what they depend on.  The catalog repeats itself (every m16n8kX C/D
# fragment is the same map; a section's .u8/.s8 and .e4m3/.e5m2 A fragments too): the
# same mathematical object is proved once per process, and each layout keeps its own
# expectations.
_ENGINE_MEMO: dict[tuple, tuple[tuple[CheckResult, ...], float]] = {}


def clear_caches() -> None:
    """Forget memoised verdicts and evaluations (benchmarks time cold runs)."""
    _ENGINE_MEMO.clear()
    _CELLS.clear()


def engine_key(layout: Layout) -> tuple:
    return (layout.formula, layout.group, layout.threads, layout.groups, layout.n_elements, layout.rows,
            layout.cols, repr(sorted(layout.sparse.items())), layout.operand)


def _check_layout(layout: Layout, timeout: float) -> LayoutResult:
    results = [check_count(layout), check_elements(layout), check_packing(layout)]
    key = engine_key(layout)
    if key in _ENGINE_MEMO:
        engine, enum_seconds = _ENGINE_MEMO[key]
        results += [dataclasses.replace(c, expected=layout.expect.get(c.check, "proved"), seconds=0.0) for c in engine]
        return LayoutResult(layout, tuple(results), 0.0, engine_cached=True)
    engine_results = _check_engines(layout, timeout)
    _ENGINE_MEMO[key] = (engine_results.checks, engine_results.enumeration_seconds)
    return LayoutResult(layout, tuple(results) + engine_results.checks, engine_results.enumeration_seconds)


def _check_engines(layout: Layout, timeout: float) -> LayoutResult:
    results: list[CheckResult] = []
    cells = cells_for(layout)
    t0 = time.perf_counter()
    enum = enumerate_layout(layout, cells)
    enum_seconds = time.perf_counter() - t0
    prior: dict[str, str] = {}
    for name, fn in (("in_range", z3_in_range), ("injective", z3_injective)):
        t0 = time.perf_counter()
        prior[name], cex = fn(layout, cells, timeout)
        results.append(_combine(name, layout, prior[name], cex, getattr(enum, name), cells,
                                time.perf_counter() - t0))
    t0 = time.perf_counter()
    res, cex, method = z3_surjective(layout, cells, timeout, prior, enum.surjective)
    sur = _combine("surjective", layout, res, cex, enum.surjective, cells, time.perf_counter() - t0)
    results.append(dataclasses.replace(sur, engines={**sur.engines, "z3_method": method}))
    return LayoutResult(layout, tuple(results), enum_seconds)


def findings_for(results: Iterable[LayoutResult]) -> list[Finding]:
    """Every check that is not plainly proved-as-expected becomes a finding."""
    out: list[Finding] = []
    for lr in results:
        for c in lr.checks:
            if c.status == "proved" and c.expected == "proved":
                continue
            out.append(Finding(lr.layout.id, c.check, c.status, c.expected,
                               c.message or f"{c.check} {c.status}", c.counterexample))
    return out


def syntax_findings(specs: Iterable[Spec]) -> list[Finding]:
    out = []
    for s in specs:
        for f in s.syntax_findings:
            out.append(Finding(f.layout, "syntax", "refuted", f.expected,
                               f"{s.path}:{f.line}:{f.col}: the doc's formula does not parse: {f.message}",
                               {"file": s.path, "line": f.line, "col": f.col}))
    return out
