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
from ..layout.family import Extent, extent_at, prove_identity
from ..layout.model import Layout, on_clear
from ..results import CheckResult, LayoutResult, combine_engines
from ..witnesses import RegisterCount, Witness, at_member, fragment_witness
from . import fragment
from . import maps
from .maps import parameters

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
    return dataclasses.replace(r, expected=layout.expect.get(name, "proved"))


def check_count(layout: Layout) -> CheckResult:
    """registers(N) x elements per register x threads = rows(N) x cols(N): as polynomials in N for every N, the
    arithmetic engine instance by instance (which also compares the element list's length).  With
    several parameters the arithmetic engine alone decides (every combination is an instance)."""
    arith = _per_instance(layout, "count", fragment.check_count)
    if len(layout.domain.params) != 1:
        return arith
    [param] = layout.domain.params
    lhs = _times(_times(layout.regs.count, layout.regs.elements_per_register), layout.lanes_per_group)
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
    return smt.Encoder(f, smt.bv(0, w), smt.bv(0, w), env).definition("value").value


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
    values (for the instruction checks' queries over a family)."""
    env, valid = parameters(layout.domain.params, w, prefix="")
    return list(env.values()), env, valid


def _binding_of(layout: Layout, m: z3.ModelRef, vs: list[z3.BitVecRef]) -> dict[str, int]:
    return {p.name: smt.as_int(m, v) for p, v in zip(layout.domain.params, vs)}


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
    """in_range, injective and surjective of the family's named map (``layout.map``, its parameters free),
    decided by the one decider (``checks.maps``: Z3 with the parameters free, the enumeration binding by binding;
    injectivity ``anywhere``, as for a plain fragment), each verdict said in the fragment's words at the member
    its witness names, and Z3's method for surjectivity."""
    _width(layout)  # a formula whose values may pass 64 bits is refused (``BoundError``)
    t0 = time.perf_counter()
    m = layout.map
    evaluated = maps.evaluations(m)
    for env in layout.domain.bindings():
        evaluated(env)
    enum_seconds = time.perf_counter() - t0
    decided = maps.decide_all(m, BIJECTION, timeout, evaluated, anywhere=True)
    results = [_in_family_words(layout, r) for r in decided]
    method = _surjective_method(layout, decided, timeout)
    results[2] = dataclasses.replace(results[2], engines={**results[2].engines, "z3_method": method})
    return tuple(results), enum_seconds


def _in_family_words(layout: Layout, r: CheckResult) -> CheckResult:
    """A verdict of ``checks.maps`` on the family's map as the family check says it: the witness in the doc's terms
    at its member (``N = 24: lane 5, element d3 ...``), confirmed there by the scalar oracle."""
    if r.status == "error":
        return dataclasses.replace(r, expected=layout.expect.get(r.check, "proved"))
    cex = None
    if r.counterexample is not None:
        env = dict(r.counterexample.member() or {})
        inst = layout.instance(**env) if env else layout
        cex = fragment.fragment_cex(r.check, r.counterexample, inst)
        cex = _with_params(cex, env) if env else cex
    z3_res = {"proved": "unsat", "refuted": "sat"}.get(r.engines.get("z3", ""), "unknown")
    return _combine(r.check, layout, z3_res, cex if z3_res == "sat" else None, cex, r.seconds or 0.0)


def _surjective_method(layout: Layout, decided: tuple[CheckResult, ...], timeout: float) -> str:
    """How Z3 decided surjectivity for the whole family: ``pigeonhole`` (in_range and injective proved with the
    parameters free, and as many points as cells for every binding), ``per value`` (binding by binding, every one
    onto), or, at the first binding that is not, the method a plain fragment names there."""
    z3_says = {r.check: r.engines.get("z3") for r in decided}
    counts = all(layout.threads * extent_at(layout.domain.elements, env)
                 == layout.groups * extent_at(layout.codomain.rows, env) * extent_at(layout.codomain.cols, env)
                 for env in layout.domain.bindings())
    sur = decided[2]
    if z3_says.get("surjective") == "proved":
        both = (z3_says.get("in_range"), z3_says.get("injective")) == ("proved", "proved")
        return "pigeonhole" if both and counts else "per value"
    w = sur.counterexample
    env = dict(w.member() or {}) if w is not None else next(iter(layout.domain.bindings()))
    inst = layout.instance(**env)
    at_member = {r.check: r.engines.get("z3") for r in maps.decide_all(inst.map, ("in_range", "injective"), timeout,
                                                                      anywhere=True)}
    return fragment.surjective_method(inst, at_member, w is not None)


def _confirm(check: str, layout: Layout, cex: dict[str, Any]) -> bool:
    env = cex.get("params", {})
    inst = layout.instance(**env) if env else layout
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
    regs, per = layout.regs.count, layout.regs.elements_per_register
    per_thread = regs * per  # type: ignore[operator]
    total = per_thread * layout.lanes_per_group
    rep = layout.domain.replication
    want = layout.rows * layout.cols * rep
    problems = []
    if total != want:
        copies = total / (layout.rows * layout.cols) if layout.rows * layout.cols else 0
        problems.append(f"{regs} registers x {per} elements x {layout.lanes_per_group} threads = {total}, but the "
                        f"{layout.rows} x {layout.cols} matrix held {rep} time{'s' if rep != 1 else ''} is {want}"
                        + (f" ({total} values would hold each element {copies:g} times)" if total else ""))
    if layout.regs.element_list is not None and len(layout.regs.element_list) != per_thread:
        problems.append(f"{regs} registers x {per} elements = {per_thread} per thread, but the element list "
                        f"names {len(layout.regs.element_list)}")
    cex = None
    if problems:
        cex = RegisterCount(regs, per, per_thread, len(layout.regs.element_list) if layout.regs.element_list else None,
                            layout.lanes_per_group, total, layout.rows * layout.cols,
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

def check_partial(layout: Layout, timeout: float) -> LayoutResult:
    """A layout whose undefined points hold nothing (a selector picks the points), for every binding of
    its parameters: the defined points land inside the matrix, on distinct cells, covering it.

    The one decider (``checks.maps``, ``partial``) decides the three on the layout's map: the enumeration
    binding by binding, Z3 with the parameters free for ``in_range`` and ``injective`` and binding by binding
    for ``surjective`` (never by counting: undefined points hold nothing).  The first failing binding (in
    parameter order) is the witness."""
    results = [_partial_count(layout), _per_instance(layout, "elements", fragment.check_elements),
               _per_instance(layout, "packing", fragment.check_packing)]
    _width(layout) if layout.is_family else fragment.width(layout)  # values past 64 bits are refused
    t0 = time.perf_counter()
    m = layout.map
    evaluated = maps.evaluations(m)
    for env in layout.domain.bindings():
        evaluated(env)
    enum_seconds = time.perf_counter() - t0
    decided = maps.decide_all(m, BIJECTION, timeout, evaluated, anywhere=True, partial=True)
    checks = [_in_family_words(layout, r) for r in decided]
    method = "hole" if decided[2].counterexample is not None else "witnesses"
    checks[2] = dataclasses.replace(checks[2], engines={**checks[2].engines, "z3_method": method})
    return fragment.layout_result(layout, tuple(results + checks), enum_seconds)


def _partial_count(layout: Layout) -> CheckResult:
    """A partial layout: the register vector has room for the matrix (registers x elements per register x
    threads >= rows x cols, every binding); that exactly rows x cols points are selected is the bijection."""
    for env, inst in layout.instances():
        per = inst.regs.count * inst.regs.elements_per_register  # type: ignore[operator]
        room, want = per * inst.lanes_per_group, inst.rows * inst.cols
        if room < want or (inst.regs.element_list is not None and len(inst.regs.element_list) != per):
            cex = RegisterCount(inst.regs.count, inst.regs.elements_per_register, per,
                                len(inst.regs.element_list) if inst.regs.element_list else None, inst.lanes_per_group, room,
                                want, params=env or None, params_last=True)
            return CheckResult("count", "refuted", layout.expect.get("count", "proved"), cex,
                               (f"{_binding(env)}: " if env else "") + f"{per} elements per thread x "
                               f"{inst.lanes_per_group} threads = {room} slots for a {inst.rows} x {inst.cols} "
                               f"matrix ({want}), or the element list disagrees", 0.0, {"arithmetic": "refuted"})
    return CheckResult("count", "proved", layout.expect.get("count", "proved"), None, "", 0.0, {"arithmetic": "proved"})


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
        raise SpecError(layout.provenance.spec_path or layout.provenance.source.file, layout.provenance.formula_line, 1, str(e)) from None


__all__ = ["NOT_APPLICABLE", "check_any", "check_family", "check_count", "check_partial", "check_replicated_count",
           "check_unspecified", "Expr"]
