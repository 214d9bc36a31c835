"""The per-fragment properties of a layout family, for every value of its parameter at once.

* Z3 proves ``in_range`` and ``injective`` with the parameter a free variable constrained to its valid
  values: one query for all N, not one per N.  Its witness is the smallest failing (N, lane, i).
* The enumeration engine checks every value (each instance evaluated whole); its witness is the first
  failing value, then the first (lane, i): the same order, so the two witnesses must be equal.
* ``surjective`` by pigeonhole for the whole family: Z3 shows threads x elements(N) = rows(N) x cols(N)
  for every valid N, and in_range and injective hold for every N.  Otherwise per value, as for a plain
  layout (counting, a confirmed hole, or checked witnesses).
* ``count`` (``N/2`` registers x 1 x 128 threads = 64 x N): sympy proves the identity for every value
  (reasoning per arithmetic run of the values, ``N = 8 + 8j``) and the arithmetic engine checks each
  instance; ``elements`` and ``packing`` per instance.

Every counterexample names the parameter value: ``N = 24: lane 5, element d3 ...``.
"""
from __future__ import annotations

import dataclasses
import time
from typing import Any, Callable

import z3

from ..engines import oracle, smt
from ..errors import SpecError
from ..formula import BinOp, Case, Definition, Expr, Formula, Num
from ..layout.enumerate import decide
from ..layout.family import Extent, prove_identity
from ..layout.model import Layout, cells_of
from ..results import CheckResult, LayoutResult, combine_engines
from . import fragment

BIJECTION = ("in_range", "injective", "surjective")


def _binding(env: dict[str, int]) -> str:
    return ", ".join(f"{k} = {v}" for k, v in env.items())


def _with_params(cex: dict[str, Any] | None, env: dict[str, int]) -> dict[str, Any] | None:
    return None if cex is None else {"params": dict(env), **cex}


def _prefixed(message: Callable[[dict[str, Any]], str]) -> Callable[[dict[str, Any]], str]:
    return lambda c: (f"{_binding(c['params'])}: " if c.get("params") else "") + message(c)


# ----------------------------------------------------------------------------- arithmetic checks

def _per_instance(layout: Layout, name: str, check: Callable[[Layout], CheckResult]) -> CheckResult:
    """A field check run on every instance; the first failing value is the verdict's witness."""
    for env, inst in layout.instances():
        r = check(inst)
        if r.status != "proved":
            return dataclasses.replace(r, expected=layout.expect.get(name, "proved"),
                                       counterexample=_with_params(r.counterexample, env),
                                       message=f"{_binding(env)}: {r.message}")
    return dataclasses.replace(r, expected=layout.expect.get(name, "proved"))  # type: ignore[possibly-undefined]


def check_count(layout: Layout) -> CheckResult:
    """registers(N) x elements per register x threads = rows(N) x cols(N): sympy for every N, the
    arithmetic engine instance by instance (which also compares the element list's length)."""
    arith = _per_instance(layout, "count", fragment.check_count)
    [param] = layout.domain.params
    lhs = _times(_times(layout.registers, layout.elements_per_register), layout.lanes_per_group)
    rhs = _times(layout.codomain.rows, layout.codomain.cols)
    sym, where = prove_identity(lhs, rhs, param)
    engines = {"sympy": {"proved": "proved", "refuted": "refuted", "unknown": "unknown"}[sym],
               "arithmetic": arith.status}
    if sym == "refuted" and arith.status == "proved":
        return dataclasses.replace(arith, status="error", engines=engines,
                                   message=f"engines disagree: sympy refutes the count at {where}, every instance holds")
    return dataclasses.replace(arith, engines=engines)


def _times(a: Extent, b: Extent) -> Extent:
    if isinstance(a, int) and isinstance(b, int):
        return a * b
    return BinOp("*", a if not isinstance(a, int) else Num(a), b if not isinstance(b, int) else Num(b))


# ----------------------------------------------------------------------------- Z3, the parameter free

def _extent_term(x: Extent, env: dict[str, z3.ExprRef], w: int) -> z3.ExprRef:
    if isinstance(x, int):
        return smt.bv(x, w)
    f = Formula((Definition("value", (Case(x, None),)),), "x")
    return smt.Encoder(f, smt.bv(0, w), smt.bv(0, w), env).definition("value").value  # type: ignore[return-value]


def _param_in_values(p: Any, v: z3.BitVecRef, w: int) -> z3.BoolRef:
    """The parameter takes one of its values: per arithmetic run, first <= v <= last and on the step."""
    parts = []
    for first, step, count in p.runs():
        last = first + step * (count - 1)
        cond = [v >= first, v <= last]
        if step > 1 and count > 1:
            cond.append(z3.URem(v - smt.bv(first, w), smt.bv(step, w)) == 0)
        parts.append(z3.And(cond))
    return z3.Or(parts)


def _width(layout: Layout) -> int:
    """A bit width for every value the family's formulas and extents take, over all its instances."""
    widths = [fragment.width(inst) for _, inst in layout.instances()]
    [p] = layout.domain.params
    return max(widths + [smt.width_for(4 * max(p.values) * max(layout.threads, 1) + 64)])


def _symbolic(layout: Layout, w: int) -> tuple[z3.BitVecRef, dict[str, z3.ExprRef], z3.BoolRef]:
    [p] = layout.domain.params
    v = z3.BitVec(p.name, w)
    return v, {p.name: v}, _param_in_values(p, v, w)


def z3_in_range(layout: Layout, budget: smt.Budget) -> tuple[str, dict[str, Any] | None]:
    w = _width(layout)
    v, env, valid = _symbolic(layout, w)
    lane, i = z3.BitVecs("lane i", w)
    n, rows, cols = (_extent_term(x, env, w) for x in (layout.domain.elements, layout.codomain.rows, layout.codomain.cols))
    ok, r, c = layout.map.z3_cell(lane, i, env)
    g = layout.domain.z3_group(lane)
    inside = z3.And(ok, r >= 0, r < rows, c >= 0, c < cols, g >= 0, g < layout.groups)
    dom = z3.And(lane >= 0, lane < layout.threads, i >= 0, i < n)
    res, m = smt.solve_min([valid, dom, z3.Not(inside)], [v, lane, i], budget)
    if res != "sat":
        return res, None
    assert m is not None
    env_v = {layout.domain.params[0].name: smt.as_int(m, v)}
    inst = layout.instance(**env_v)
    ln, ix = smt.as_int(m, lane), smt.as_int(m, i)
    defined = z3.is_true(m.eval(ok, model_completion=True))
    return res, _with_params(fragment._mma(inst, {**fragment._element(inst, ln, ix),
                                                   "row": smt.as_int(m, r) if defined else None,
                                                   "col": smt.as_int(m, c) if defined else None},
                                           smt.as_int(m, g)), env_v)


def z3_injective(layout: Layout, budget: smt.Budget) -> tuple[str, dict[str, Any] | None]:
    w = _width(layout)
    v, env, valid = _symbolic(layout, w)
    l1, i1, l2, i2 = z3.BitVecs("lane1 i1 lane2 i2", w)
    n = _extent_term(layout.domain.elements, env, w)
    ok1, r1, c1 = layout.map.z3_cell(l1, i1, env)
    ok2, r2, c2 = layout.map.z3_cell(l2, i2, env)
    g1, g2 = layout.domain.z3_group(l1), layout.domain.z3_group(l2)
    dom = [z3.And(x >= 0, x < layout.threads, y >= 0, y < n) for x, y in ((l1, i1), (l2, i2))]
    cs = [valid, *dom, z3.Or(l1 < l2, z3.And(l1 == l2, i1 < i2)), ok1, ok2, g1 == g2, r1 == r2, c1 == c2]
    res, m = smt.solve_min(cs, [v, l2, i2, l1, i1], budget)
    if res != "sat":
        return res, None
    assert m is not None
    env_v = {layout.domain.params[0].name: smt.as_int(m, v)}
    inst = layout.instance(**env_v)
    return res, _with_params(fragment._mma(inst, {"first": fragment._element(inst, smt.as_int(m, l1), smt.as_int(m, i1)),
                                                   "second": fragment._element(inst, smt.as_int(m, l2), smt.as_int(m, i2)),
                                                   "row": smt.as_int(m, r1), "col": smt.as_int(m, c1)},
                                           smt.as_int(m, g1)), env_v)


def z3_counts_match(layout: Layout, budget: smt.Budget) -> str:
    """Z3: threads x elements(N) = groups x rows(N) x cols(N) for every valid N (``unsat`` = always)."""
    w = _width(layout)
    v, env, valid = _symbolic(layout, w)
    n, rows, cols = (_extent_term(x, env, w) for x in (layout.domain.elements, layout.codomain.rows, layout.codomain.cols))
    return smt.solve([valid, smt.bv(layout.threads, w) * n != smt.bv(layout.groups, w) * rows * cols], budget)[0]


# ----------------------------------------------------------------------------- the family's checks

def check_family(layout: Layout, timeout: float) -> LayoutResult:
    """Every property of a family: in_range/injective by Z3 once (the parameter free) and by the
    enumeration of every instance; surjective by pigeonhole for all N (or per instance)."""
    results = [check_count(layout), _per_instance(layout, "elements", fragment.check_elements),
               _per_instance(layout, "packing", fragment.check_packing)]
    t0 = time.perf_counter()
    enum: dict[str, dict[str, Any] | None] = {c: None for c in BIJECTION}
    for env, inst in layout.instances():
        e = decide(cells_of(inst), inst.rows, inst.cols, inst.groups, inst.element_name)
        for c in BIJECTION:
            if enum[c] is None and getattr(e, c) is not None:
                enum[c] = _with_params(getattr(e, c), env)
    enum_seconds = time.perf_counter() - t0
    prior: dict[str, str] = {}
    for name, fn in (("in_range", z3_in_range), ("injective", z3_injective)):
        t0 = time.perf_counter()
        prior[name], cex = fn(layout, smt.Budget(timeout))
        results.append(_combine(name, layout, prior[name], cex, enum[name], time.perf_counter() - t0))
    t0 = time.perf_counter()
    res, cex, method = _surjective(layout, timeout, prior, enum["surjective"])
    sur = _combine("surjective", layout, res, cex, enum["surjective"], time.perf_counter() - t0)
    results.append(dataclasses.replace(sur, engines={**sur.engines, "z3_method": method}))
    return LayoutResult(layout, tuple(results), enum_seconds)


def _surjective(layout: Layout, timeout: float, prior: dict[str, str],
                enum_hole: dict[str, Any] | None) -> tuple[str, dict[str, Any] | None, str]:
    budget = smt.Budget(timeout)
    if (prior.get("in_range"), prior.get("injective")) == ("unsat", "unsat") and z3_counts_match(layout, budget) == "unsat":
        return "unsat", None, "pigeonhole"
    for env, inst in layout.instances():  # no argument for the whole family: value by value
        hole = enum_hole if enum_hole is not None and enum_hole.get("params") == env else None
        if hole is not None:
            hole = {k: x for k, x in hole.items() if k != "params"}
        p = {"in_range": fragment.z3_in_range(inst, budget)[0], "injective": fragment.z3_injective(inst, budget)[0]}
        res, cex, method = fragment.z3_surjective(inst, budget, p, hole)
        if res != "unsat":
            return res, _with_params(cex, env), method
    return "unsat", None, "per value"


def _confirm(check: str, layout: Layout, cex: dict[str, Any]) -> bool:
    env = cex.get("params", {})
    inst = layout.instance(**env)
    return fragment._confirm_with_oracle(check, {k: v for k, v in cex.items() if k != "params"}, inst)


def _combine(check: str, layout: Layout, z3_res: str, z3_cex: dict[str, Any] | None,
             enum_cex: dict[str, Any] | None, seconds: float) -> CheckResult:
    def message(c: dict[str, Any]) -> str:
        inst = layout.instance(**c["params"]) if c.get("params") else layout
        return fragment._message(check, inst, {k: v for k, v in c.items() if k != "params"})

    return combine_engines(check, layout.expect.get(check, "proved"), smt.status(z3_res), z3_cex, enum_cex,
                           _prefixed(message), seconds, confirm=lambda c: _confirm(check, layout, dict(c)),
                           same_witness=True)


def check_any(layout: Layout, timeout: float = fragment.DEFAULT_TIMEOUT) -> LayoutResult:
    """Every property of any layout: a family for all its parameter values, a plain layout as is."""
    if not layout.is_family:
        return fragment.check_layout(layout, timeout)
    try:
        return check_family(layout, timeout)
    except oracle.EvalError as e:
        raise SpecError(*layout.locate(e.pos.line, e.pos.col), f"{layout.id}: {e.message}") from None
    except fragment.BoundError as e:
        raise SpecError(layout.spec_path or layout.source.file, layout.formula_line, 1, str(e)) from None


__all__ = ["check_any", "check_family", "check_count", "z3_counts_match", "z3_in_range", "z3_injective", "Expr"]
