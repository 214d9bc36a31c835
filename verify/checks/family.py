"""The per-fragment properties of a layout family, for every value of its parameter at once.

* Z3 proves ``in_range`` and ``injective`` with the parameter a free variable constrained to its valid
  values: one query for all N, not one per N.  Its witness is the smallest failing (N, lane, i).
* The enumeration engine checks every value (each instance evaluated whole); its witness is the first
  failing value, then the first (lane, i): the same order, so the two witnesses must be equal.
* ``surjective`` by pigeonhole for the whole family: Z3 shows threads x elements(N) = rows(N) x cols(N)
  for every valid N, and in_range and injective hold for every N.  Otherwise per value, as for a plain
  layout (counting, a confirmed hole, or checked witnesses).
* ``count`` (``N/2`` registers x 1 x 128 threads = 64 x N): exact polynomials prove the identity for every
  value (``engines.polynomial``, per arithmetic run of the values, ``N = 8 + 8j``) and the arithmetic engine
  checks each instance; ``elements`` and ``packing`` per instance.

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
from ..layout.fragment_maps import FormulaFragment
from ..layout.enumerate import decide
from ..layout.family import Extent, extent_at, prove_identity
from ..layout.model import Layout, cells_of, on_clear
from ..results import CheckResult, LayoutResult, combine_engines
from ..witnesses import DomainDiffers, RegisterCount, Witness, at_member, fragment_witness
from . import fragment
from .maps import parameters
from ..layout.model import cell_at, z3_cell_of

BIJECTION = ("in_range", "injective", "surjective")


def _binding(env: dict[str, int]) -> str:
    return ", ".join(f"{k} = {v}" for k, v in env.items())


def _with_params(cex: Any, env: dict[str, int]) -> Any:
    """``cex`` at the member ``env``: a typed witness by ``at_member``, an engine's fields (a dict the
    fragment witness is built from later) with ``"params"`` first."""
    if isinstance(cex, Witness):
        return at_member(cex, dict(env))
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
                                       counterexample=_with_params(r.counterexample, env) if env else r.counterexample,
                                       message=f"{_binding(env)}: {r.message}" if env else r.message)
    return dataclasses.replace(r, expected=layout.expect.get(name, "proved"))  # type: ignore[possibly-undefined]


def check_count(layout: Layout) -> CheckResult:
    """registers(N) x elements per register x threads = rows(N) x cols(N): as polynomials in N for every N, the
    arithmetic engine instance by instance (which also compares the element list's length).  With
    several parameters the arithmetic engine alone decides (every combination is an instance)."""
    arith = _per_instance(layout, "count", fragment.check_count)
    if len(layout.domain.params) != 1:
        return arith
    [param] = layout.domain.params
    lhs = _times(_times(layout.registers, layout.elements_per_register), layout.lanes_per_group)
    rhs = _times(layout.codomain.rows, layout.codomain.cols)
    sym, where = prove_identity(lhs, rhs, param)
    engines = {"polynomial": sym, "arithmetic": arith.status}
    if sym == "refuted" and arith.status == "proved":
        return dataclasses.replace(arith, status="error", engines=engines,
                                   message=f"engines disagree: the polynomials refute the count at {where}, every "
                                           "instance holds")
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


def _width(layout: Layout) -> int:
    """A bit width for every value the family's formulas and extents take, over all its instances (not
    memoised: benchmarks/bench_memos.py measured no gain)."""
    def widest() -> int:
        top = max(max(p.values) for p in layout.domain.params)
        floor = smt.width_for(4 * top * max(layout.threads, 1) + 64)
        if not isinstance(layout.map, FormulaFragment):  # a composed map: bound instance by instance
            return max([fragment.width(inst) for _, inst in layout.instances()] + [floor])
        # one interval analysis with each parameter in [0, its largest value]: sound for every instance
        # (the analysis is monotone in its input intervals) without building the instances
        d, c = layout.domain, layout.codomain
        ext = {x: max(extent_at(x, env) for env in d.bindings()) for x in (d.elements, c.rows, c.cols)}
        bound = max(layout.threads, layout.groups, *ext.values(), d.bound(),
                    layout.map.cell_bound(dataclasses.replace(d, elements=ext[d.elements])))
        w = smt.width_for(bound)
        if w > smt.MAX_WIDTH:
            raise fragment.BoundError(f"{layout.id}: formula values may reach {bound}, beyond 64 bits")
        return max(w, floor)
    return widest()


def _symbolic(layout: Layout, w: int) -> tuple[list[z3.BitVecRef], dict[str, z3.ExprRef], z3.BoolRef]:
    """One bit-vector per parameter (in declared order, named as the parameter), each constrained to its valid
    values."""
    env, valid = parameters(layout.domain.params, w, prefix="")
    return list(env.values()), env, valid


def _binding_of(layout: Layout, m: z3.ModelRef, vs: list[z3.BitVecRef]) -> dict[str, int]:
    return {p.name: smt.as_int(m, v) for p, v in zip(layout.domain.params, vs)}


def _params_hint(layout: Layout, cex: dict[str, Any] | None, rest: list[int] | None) -> list[int] | None:
    """An enumeration witness of a family as ``smt.solve_min`` keys: its binding, then ``rest``."""
    if cex is None or rest is None:
        return None
    env = cex.get("params", {})
    if any(p.name not in env for p in layout.domain.params):
        return None
    return [env[p.name] for p in layout.domain.params] + rest


def z3_in_range(layout: Layout, budget: smt.Budget,
                enum_cex: dict[str, Any] | None = None) -> tuple[str, dict[str, Any] | None]:
    w = _width(layout)
    v, env, valid = _symbolic(layout, w)
    lane, i = layout.domain.z3_point("lane i", w)
    n, rows, cols = (_extent_term(x, env, w) for x in (layout.domain.elements, layout.codomain.rows, layout.codomain.cols))
    ok, r, c = z3_cell_of(layout, lane, i, env)
    g = layout.domain.z3_group(lane)
    inside = z3.And(ok, r >= 0, r < rows, c >= 0, c < cols, g >= 0, g < layout.groups)
    dom = z3.And(lane >= 0, lane < layout.threads, i >= 0, i < n)
    res, m = smt.solve_min([valid, dom, z3.Not(inside)], [*v, lane, i], budget,
                           _params_hint(layout, enum_cex, fragment.point_hint(enum_cex)))
    if res != "sat":
        return res, None
    assert m is not None
    env_v = _binding_of(layout, m, v)
    inst = layout.instance(**env_v)
    ln, ix = smt.as_int(m, lane), smt.as_int(m, i)
    defined = z3.is_true(m.eval(ok, model_completion=True))
    return res, _with_params(fragment._mma(inst, {**fragment._element(inst, ln, ix),
                                                   "row": smt.as_int(m, r) if defined else None,
                                                   "col": smt.as_int(m, c) if defined else None},
                                           smt.as_int(m, g)), env_v)


def z3_injective(layout: Layout, budget: smt.Budget,
                 enum_cex: dict[str, Any] | None = None) -> tuple[str, dict[str, Any] | None]:
    w = _width(layout)
    v, env, valid = _symbolic(layout, w)
    (l1, i1), (l2, i2) = layout.domain.z3_point("lane1 i1", w), layout.domain.z3_point("lane2 i2", w)
    n = _extent_term(layout.domain.elements, env, w)
    ok1, r1, c1 = z3_cell_of(layout, l1, i1, env)
    ok2, r2, c2 = z3_cell_of(layout, l2, i2, env)
    g1, g2 = layout.domain.z3_group(l1), layout.domain.z3_group(l2)
    dom = [z3.And(x >= 0, x < layout.threads, y >= 0, y < n) for x, y in ((l1, i1), (l2, i2))]
    cs = [valid, *dom, z3.Or(l1 < l2, z3.And(l1 == l2, i1 < i2)), ok1, ok2, g1 == g2, r1 == r2, c1 == c2]
    res, m = smt.solve_min(cs, [*v, l2, i2, l1, i1], budget,
                           _params_hint(layout, enum_cex, fragment.pair_hint(enum_cex)))
    if res != "sat":
        return res, None
    assert m is not None
    env_v = _binding_of(layout, m, v)
    inst = layout.instance(**env_v)
    return res, _with_params(fragment._mma(inst, {"first": fragment._element(inst, smt.as_int(m, l1), smt.as_int(m, i1)),
                                                   "second": fragment._element(inst, smt.as_int(m, l2), smt.as_int(m, i2)),
                                                   "row": smt.as_int(m, r1), "col": smt.as_int(m, c1)},
                                           smt.as_int(m, g1)), env_v)


def z3_counts_match(layout: Layout, budget: smt.Budget) -> str:
    """Z3: threads x elements(N) = groups x rows(N) x cols(N) for every valid N (``unsat`` = always)."""
    w = _width(layout)
    _vs, env, valid = _symbolic(layout, w)
    n, rows, cols = (_extent_term(x, env, w) for x in (layout.domain.elements, layout.codomain.rows, layout.codomain.cols))
    return smt.solve([valid, smt.bv(layout.threads, w) * n != smt.bv(layout.groups, w) * rows * cols], budget)[0]


# ----------------------------------------------------------------------------- the family's checks

# The catalog repeats itself (every wgmma D is one map; a corrected element list leaves the map as it is):
# a family's engine verdicts are computed once per process per mathematical object, as for plain layouts.
_FAMILY_MEMO: dict[tuple, tuple[tuple[CheckResult, ...], float]] = {}


def check_family(layout: Layout, timeout: float) -> LayoutResult:
    """Every property of a family: in_range/injective by Z3 once (the parameter free) and by the
    enumeration of every instance; surjective by pigeonhole for all N (or per instance)."""
    results = [check_count(layout), _per_instance(layout, "elements", fragment.check_elements),
               _per_instance(layout, "packing", fragment.check_packing)]
    return fragment.with_engines(layout, results, _FAMILY_MEMO, fragment.engine_key(layout),
                                 lambda: _check_family_engines(layout, timeout))


def clear_family_memo() -> None:
    _FAMILY_MEMO.clear()


on_clear(clear_family_memo)  # fragment.clear_caches (benchmarks time cold runs) clears it with the cells


def _check_family_engines(layout: Layout, timeout: float) -> tuple[tuple[CheckResult, ...], float]:
    results: list[CheckResult] = []
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
        prior[name], cex = fn(layout, smt.Budget(timeout), enum[name])
        results.append(_combine(name, layout, prior[name], cex, enum[name], time.perf_counter() - t0))
    t0 = time.perf_counter()
    res, cex, method = _surjective(layout, timeout, prior, enum["surjective"])
    sur = _combine("surjective", layout, res, cex, enum["surjective"], time.perf_counter() - t0)
    results.append(dataclasses.replace(sur, engines={**sur.engines, "z3_method": method}))
    return tuple(results), enum_seconds


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

    return combine_engines(check, layout.expect.get(check, "proved"), smt.status(z3_res),
                           fragment_witness(check, z3_cex), fragment_witness(check, enum_cex),
                           _prefixed(message), seconds, confirm=lambda c: _confirm(check, layout, dict(c)),
                           same_witness=True)


# ----------------------------------------------------------------------------- unspecified layouts (wmma)

NOT_APPLICABLE = "n/a"


def check_replicated_count(layout: Layout) -> CheckResult:
    """An unspecified layout: registers x elements per register x threads = rows x cols x replication
    (each matrix element held by ``replication`` points: the doc's counts force it, e.g. wmma
    ``.m16n16k16 .f16`` A: eight ``.f16x2`` per thread = 512 values for a 16 x 16 matrix, each element
    twice), and the element list (when the doc gives one) names registers x elements per register."""
    regs, per = layout.registers, layout.elements_per_register
    per_thread = regs * per  # type: ignore[operator]
    total = per_thread * layout.lanes_per_group
    rep = layout.domain.replication
    want = layout.rows * layout.cols * rep  # type: ignore[operator]
    problems = []
    if total != want:
        copies = total / (layout.rows * layout.cols) if layout.rows * layout.cols else 0  # type: ignore[operator]
        problems.append(f"{regs} registers x {per} elements x {layout.lanes_per_group} threads = {total}, but the "
                        f"{layout.rows} x {layout.cols} matrix held {rep} time{'s' if rep != 1 else ''} is {want}"
                        + (f" ({total} values would hold each element {copies:g} times)" if total else ""))
    if layout.element_list is not None and len(layout.element_list) != per_thread:
        problems.append(f"{regs} registers x {per} elements = {per_thread} per thread, but the element list "
                        f"names {len(layout.element_list)}")
    cex = None
    if problems:
        cex = RegisterCount(regs, per, per_thread, len(layout.element_list) if layout.element_list else None,
                            layout.lanes_per_group, total, layout.rows * layout.cols,  # type: ignore[operator]
                            replication=rep)
    return CheckResult("count", "refuted" if problems else "proved", layout.expect.get("count", "proved"), cex,
                       "; ".join(problems), 0.0, {"arithmetic": "refuted" if problems else "proved"})


def check_unspecified(layout: Layout) -> LayoutResult:
    """count (with replication), elements and packing; the bijection checks do not apply (status ``n/a``,
    never ``proved``): the doc states no cell for any (lane, i)."""
    why = "not applicable: the doc leaves the layout unspecified"
    checks = [check_replicated_count(layout), fragment.check_elements(layout), fragment.check_packing(layout)]
    checks += [CheckResult(name, NOT_APPLICABLE, NOT_APPLICABLE, None, why, 0.0, {}) for name in BIJECTION]
    return fragment.layout_result(layout, tuple(checks), 0.0)


# ----------------------------------------------------------------------------- partial layouts (selectors)

def _partial_in_range_enum(inst: Layout) -> dict[str, Any] | None:
    """Enumeration: the first defined (lane, i) whose cell lies outside the matrix (undefined points
    are not part of a partial layout)."""
    import numpy as np
    c = cells_of(inst)
    g = np.broadcast_to(c.group[:, None], c.ok.shape)
    outside = c.ok & ~((g >= 0) & (g < inst.groups) & (c.row >= 0) & (c.row < inst.rows)
                       & (c.col >= 0) & (c.col < inst.cols))
    hits = np.flatnonzero(outside.ravel())
    if not hits.size:
        return None
    lane, i = divmod(int(hits[0]), inst.n_elements)
    return fragment._mma(inst, {**fragment._element(inst, lane, i), "row": int(c.row[lane, i]),
                                "col": int(c.col[lane, i])}, int(c.group[lane]))


def _partial_in_range_z3(inst: Layout, budget: smt.Budget,
                         enum_cex: dict[str, Any] | None = None) -> tuple[str, dict[str, Any] | None]:
    lane, i = inst.domain.z3_point("lane i", fragment.width(inst))
    ok, r, c = z3_cell_of(inst, lane, i)
    g = inst.domain.z3_group(lane)
    inside = z3.And(r >= 0, r < inst.rows, c >= 0, c < inst.cols, g >= 0, g < inst.groups)
    res, m = smt.solve_min([inst.domain.z3_contains(lane, i), ok, z3.Not(inside)], [lane, i], budget,
                           fragment.point_hint(enum_cex))
    if res != "sat":
        return res, None
    assert m is not None
    return res, fragment._mma(inst, {**fragment._element(inst, smt.as_int(m, lane), smt.as_int(m, i)),
                                     "row": smt.as_int(m, r), "col": smt.as_int(m, c)}, smt.as_int(m, g))


def _partial_surjective_z3(inst: Layout, budget: smt.Budget,
                           hole: dict[str, Any] | None) -> tuple[str, dict[str, Any] | None, str]:
    """Never by pigeonhole (undefined points hold nothing): the enumeration's first hole confirmed
    unreached, or every cell's first preimage checked."""
    w = fragment.width(inst)
    if hole is not None:
        q, _ = smt.solve([fragment._covered_query(inst, w, hole.get("mma", 0), hole["row"], hole["col"])], budget)
        return ({"unsat": "sat", "sat": "unsat", "unknown": "unknown"}[q],
                dict(hole) if q == "unsat" else None, "hole")
    pts = fragment.preimages(cells_of(inst), inst.rows, inst.cols, inst.groups)
    if len(pts) != inst.groups * inst.rows * inst.cols or len(pts) > fragment.MAX_WITNESSES:
        return "unknown", None, "witnesses"
    return fragment.z3_witnesses(inst, w, pts, budget), None, "witnesses"


def check_partial(layout: Layout, timeout: float) -> LayoutResult:
    """A layout whose undefined points hold nothing (a selector picks the points), for every binding of
    its parameters: the defined points land inside the matrix, on distinct cells, covering it.

    The enumeration evaluates every binding; Z3 decides ``in_range`` and ``injective`` in one query with
    the parameters free (a family) and ``surjective`` binding by binding (never by pigeonhole: undefined
    points hold nothing).  The first failing binding (in parameter order) is the witness."""
    results = [_partial_count(layout), _per_instance(layout, "elements", fragment.check_elements),
               _per_instance(layout, "packing", fragment.check_packing)]
    t0 = time.perf_counter()
    insts = layout.instances()
    enum: dict[str, tuple[dict[str, int], dict[str, Any]] | None] = {c: None for c in BIJECTION}
    for env, inst in insts:
        e = decide(cells_of(inst), inst.rows, inst.cols, inst.groups, inst.element_name)
        found = {"in_range": _partial_in_range_enum(inst), "injective": e.injective, "surjective": e.surjective}
        for c in BIJECTION:
            if enum[c] is None and found[c] is not None:
                enum[c] = (env, found[c])  # type: ignore[assignment]
    enum_seconds = time.perf_counter() - t0
    for name in ("in_range", "injective"):
        t0 = time.perf_counter()
        hit = enum[name]
        seen = None if hit is None else {"params": hit[0], **hit[1]}
        if layout.is_family:
            res, z3_cex = (_partial_in_range_family(layout, smt.Budget(timeout), seen) if name == "in_range"
                           else z3_injective(layout, smt.Budget(timeout), seen))
        else:
            res, z3_cex = (_partial_in_range_z3(layout, smt.Budget(timeout), seen) if name == "in_range"
                           else fragment.z3_injective(layout, smt.Budget(timeout), seen))
        env = (hit[0] if hit else (z3_cex or {}).get("params", {})) or {}
        inst = layout.instance(**env) if env else insts[0][1]
        z3_plain = None if z3_cex is None else {k: v for k, v in z3_cex.items() if k != "params"}
        r = _instance_verdict(name, layout, inst, env, res, z3_plain, hit[1] if hit else None)
        if z3_cex is not None and hit is not None and z3_cex.get("params", {}) != hit[0]:
            r = dataclasses.replace(r, status="error", message=f"the engines' witnesses differ: Z3 at "
                                    f"{_binding(z3_cex.get('params', {}))}, enumeration at {_binding(hit[0])}")
        results.append(dataclasses.replace(r, seconds=time.perf_counter() - t0))
    verdict: CheckResult | None = None
    t0 = time.perf_counter()
    budget = smt.Budget(timeout)  # one budget for the check, binding after binding
    for env, inst in insts:
        hole = enum["surjective"][1] if enum["surjective"] and enum["surjective"][0] == env else None
        res, z3_cex, method = _partial_surjective_z3(inst, budget, hole)
        r = _instance_verdict("surjective", layout, inst, env, res, z3_cex, hole)
        verdict = dataclasses.replace(r, engines={**r.engines, "z3_method": method})
        if r.status != "proved":
            break
    assert verdict is not None
    results.append(dataclasses.replace(verdict, seconds=time.perf_counter() - t0))
    return fragment.layout_result(layout, tuple(results), enum_seconds)


def _partial_in_range_family(layout: Layout, budget: smt.Budget,
                             enum_cex: dict[str, Any] | None = None) -> tuple[str, dict[str, Any] | None]:
    """Z3 with the parameters free: a defined point outside the matrix (the smallest binding, lane, i)."""
    w = _width(layout)
    vs, env, valid = _symbolic(layout, w)
    lane, i = layout.domain.z3_point("lane i", w)
    n, rows, cols = (_extent_term(x, env, w) for x in (layout.domain.elements, layout.codomain.rows,
                                                      layout.codomain.cols))
    ok, r, c = z3_cell_of(layout, lane, i, env)
    g = layout.domain.z3_group(lane)
    inside = z3.And(r >= 0, r < rows, c >= 0, c < cols, g >= 0, g < layout.groups)
    dom = z3.And(lane >= 0, lane < layout.threads, i >= 0, i < n)
    res, m = smt.solve_min([valid, dom, ok, z3.Not(inside)], [*vs, lane, i], budget,
                           _params_hint(layout, enum_cex, fragment.point_hint(enum_cex)))
    if res != "sat":
        return res, None
    assert m is not None
    bind = _binding_of(layout, m, vs)
    inst = layout.instance(**bind)
    return res, {"params": bind, **fragment._mma(inst, {**fragment._element(inst, smt.as_int(m, lane), smt.as_int(m, i)),
                                                       "row": smt.as_int(m, r), "col": smt.as_int(m, c)},
                                                smt.as_int(m, g))}


def _instance_verdict(check: str, layout: Layout, inst: Layout, env: dict[str, int], res: str,
                      z3_cex: dict[str, Any] | None, enum_cex: dict[str, Any] | None) -> CheckResult:
    def message(c: dict[str, Any]) -> str:
        return (f"{_binding(env)}: " if env else "") + fragment._message(check, inst, {k: v for k, v in c.items()
                                                                                     if k != "params"})

    def confirm(c: dict[str, Any]) -> bool:
        c = {k: v for k, v in c.items() if k != "params"}
        if check == "in_range":  # a partial layout: the witness is a defined point outside the matrix
            cell = cell_at(inst, c["lane"], c["i"])
            return cell is not None and not (0 <= cell[0] < inst.rows and 0 <= cell[1] < inst.cols)
        return fragment._confirm_with_oracle(check, c, inst)

    def wrap(c: dict[str, Any] | None) -> dict[str, Any] | None:
        return None if c is None else ({"params": dict(env), **c} if env else dict(c))

    return combine_engines(check, layout.expect.get(check, "proved"), smt.status(res),
                           fragment_witness(check, wrap(z3_cex)), fragment_witness(check, wrap(enum_cex)),
                           message, 0.0, confirm=confirm, same_witness=True)


def _partial_count(layout: Layout) -> CheckResult:
    """A partial layout: the register vector has room for the matrix (registers x elements per register x
    threads >= rows x cols, every binding); that exactly rows x cols points are selected is the bijection."""
    for env, inst in layout.instances():
        per = inst.registers * inst.elements_per_register  # type: ignore[operator]
        room, want = per * inst.lanes_per_group, inst.rows * inst.cols  # type: ignore[operator]
        if room < want or (inst.element_list is not None and len(inst.element_list) != per):
            cex = RegisterCount(inst.registers, inst.elements_per_register, per,
                                len(inst.element_list) if inst.element_list else None, inst.lanes_per_group, room,
                                want, params=env or None, params_last=True)
            return CheckResult("count", "refuted", layout.expect.get("count", "proved"), cex,
                               (f"{_binding(env)}: " if env else "") + f"{per} elements per thread x "
                               f"{inst.lanes_per_group} threads = {room} slots for a {inst.rows} x {inst.cols} "
                               f"matrix ({want}), or the element list disagrees", 0.0, {"arithmetic": "refuted"})
    return CheckResult("count", "proved", layout.expect.get("count", "proved"), None, "", 0.0, {"arithmetic": "proved"})


# ----------------------------------------------------------------------------- two families, one map

def same_family_map(a: Layout, b: Layout, timeout: float = fragment.DEFAULT_TIMEOUT,
                    names: tuple[str, str] = ("first", "second"), expected: str = "proved",
                    check: str = "equal") -> CheckResult:
    """``a`` and ``b`` are the same map for every binding of their (common) parameters: Z3 with the
    parameters free (one query), the enumeration instance by instance; the witness is the first
    differing (binding, lane, i).  Plain layouts go to ``equivalence.same_map``."""
    from . import equivalence
    if not a.is_family and not b.is_family:
        return equivalence.same_map(a, b, timeout, names, expected, check)
    t0 = time.perf_counter()
    pa, pb = [(p.name, p.values) for p in a.domain.params], [(p.name, p.values) for p in b.domain.params]
    describe = equivalence._describe(a, b, names)

    def message(c: dict[str, Any]) -> str:
        return (f"{_binding(c['params'])}: " if c.get("params") else "") + describe(
            {k: v for k, v in c.items() if k != "params"})

    if pa != pb:
        cex = DomainDiffers("parameters", str(pa), str(pb))
        return CheckResult(check, "refuted", expected, cex, message(cex), time.perf_counter() - t0,
                           {"arithmetic": "refuted"})
    enum_cex = None
    for env, ai in a.instances():
        bi = b.instance(**env)
        problem = equivalence._domain_problem(ai, bi)
        if problem is not None:
            return CheckResult(check, "refuted", expected, at_member(problem, env), message(at_member(problem, env)),
                               time.perf_counter() - t0, {"arithmetic": "refuted"})
        d = equivalence.first_difference(ai, bi)
        if d is not None:
            enum_cex = at_member(d, env)
            break
    w = max(_width(a), _width(b))
    vs, env_z, valid = _symbolic(a, w)
    lane, i = a.domain.z3_point("lane i", w)
    n = _extent_term(a.domain.elements, env_z, w)
    oka, ra, ca = z3_cell_of(a, lane, i, env_z)
    okb, rb, cb = z3_cell_of(b, lane, i, env_z)
    ga, gb = a.domain.z3_group(lane), b.domain.z3_group(lane)
    same = z3.And(oka == okb, z3.Implies(oka, z3.And(ra == rb, ca == cb, ga == gb)))
    dom = z3.And(lane >= 0, lane < a.threads, i >= 0, i < n)
    res, m = smt.solve_min([valid, dom, z3.Not(same)], [*vs, lane, i], smt.Budget(timeout),
                           _params_hint(a, enum_cex, fragment.point_hint(enum_cex)))
    z3_cex = None
    if res == "sat":
        assert m is not None
        env = _binding_of(a, m, vs)
        z3_cex = at_member(equivalence._witness(a.instance(**env), b.instance(**env),
                                                smt.as_int(m, lane), smt.as_int(m, i)), env)

    def confirm(c: dict[str, Any]) -> bool:
        ai, bi = a.instance(**c["params"]), b.instance(**c["params"])
        return equivalence.point_of(ai, c["lane"], c["i"]) != equivalence.point_of(bi, c["lane"], c["i"])

    return combine_engines(check, expected, smt.status(res), z3_cex, enum_cex, message, time.perf_counter() - t0,
                           f"{names[0]} and {names[1]} are the same map for every " +
                           ", ".join(p.name for p in a.domain.params), confirm, same_witness=True)


def check_any(layout: Layout, timeout: float = fragment.DEFAULT_TIMEOUT) -> LayoutResult:
    """Every property of any layout: a family for all its parameter values, a plain layout as is; an
    unspecified layout (wmma) by its counts only; a partial one (a selector) over its defined points."""
    if layout.unspecified:
        return check_unspecified(layout)
    if not layout.is_family and not layout.partial:
        return fragment.check_layout(layout, timeout)
    try:
        return check_partial(layout, timeout) if layout.partial else check_family(layout, timeout)
    except oracle.EvalError as e:
        raise SpecError(*layout.locate(e.pos.line, e.pos.col), f"{layout.id}: {e.message}") from None
    except fragment.BoundError as e:
        raise SpecError(layout.spec_path or layout.source.file, layout.formula_line, 1, str(e)) from None


__all__ = ["NOT_APPLICABLE", "check_any", "check_family", "check_count", "check_partial", "check_replicated_count",
           "check_unspecified", "same_family_map", "z3_counts_match", "z3_in_range", "z3_injective", "Expr"]
