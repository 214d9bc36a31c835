"""Properties of any named map, each decided by both engines: the checks every kind of layout gets.

A shared-memory layout (``(row, col) -> offset``), a swizzle, a Tensor Memory layout, a block tile
over ``(warp, lane, i)`` or a composition built by ``verify.layout.algebra`` has no register facts, but
the same questions apply to it as to a fragment:

* ``in_range``: every input point is defined and lands inside the output box;
* ``injective``: no two input points land on the same output point;
* ``surjective``: every output point is reached;
* ``equal`` (``same``): two maps with the same inputs and outputs agree at every point.

Both engines decide each: enumeration over every point of the input box (``evaluate``), and Z3 over
symbolic inputs (``encode``) with a family's parameters free, so one query covers every parameter
value.  Witnesses are canonical (the first in lexicographic order of (parameters, inputs), the first
input outermost), Z3's is minimised to the same point, and the scalar reference (``at``) confirms it.
Counterexamples name points by their dimensions: ``{"params": {...}, "point": {"lane": 5, "i": 3},
"at": {"row": 9, "col": 2}}``.
"""
from __future__ import annotations

import dataclasses
import time
from typing import Any, Callable, Iterable, Mapping

import numpy as np
import z3

from ..engines import oracle, smt
from ..errors import SpecError
from ..layout.descriptor import MODELS as DESCRIPTOR_MODELS
from ..layout.zero_column import MODELS as ZERO_COLUMN_MODELS
from ..layout.dims import Dim, names
from ..layout.family import Param
from ..layout.model import MAP_CHECKS, MapLayout
from ..layout.named import (NamedMap, Values, bindings, evaluate_all, extent_term, first_collision, in_box, inside,
                            output_keys, variables, width)
from ..results import CheckResult, Finding, MapResult, combine_engines
from ..witnesses import DomainDiffers, OutputUnreached, PointDiffers, PointOutside, PointsCollide, Witness

DEFAULT_TIMEOUT = 10.0  # seconds of solver budget per check (``smt.Budget``); every check module's default


def point_text(point: Mapping[str, int]) -> str:
    """``lane 5, i 3``"""
    return ", ".join(f"{k} {v}" for k, v in point.items())


def _params_text(env: Mapping[str, int]) -> str:
    return ", ".join(f"{k} = {v}" for k, v in env.items())


def _prefix(env: Mapping[str, int]) -> str:
    return f"{_params_text(env)}: " if env else ""


def param_constraint(params: tuple[Param, ...], env: Mapping[str, z3.ExprRef], w: int) -> z3.BoolRef:
    """Every parameter takes one of its values (per arithmetic run: first <= v <= last, on the step)."""
    ge, le = smt.CMP[">="], smt.CMP["<="]
    parts = []
    for p in params:
        v = env[p.name]
        runs = []
        for first, step, count in p.runs():
            last = first + step * (count - 1)
            cond = [ge(v, smt.bv(first, w)), le(v, smt.bv(last, w))]
            if step > 1 and count > 1:
                cond.append(z3.URem(v - smt.bv(first, w), smt.bv(step, w)) == 0)
            runs.append(smt.all_of(cond))
        parts.append(smt.any_of(runs))
    return smt.all_of(parts) if parts else z3.BoolVal(True)


def parameters(params: tuple[Param, ...], w: int, prefix: str = "param_") -> tuple[dict[str, z3.BitVecRef], z3.BoolRef]:
    """One unknown per parameter (named ``prefix`` + its name, in declared order), each confined to its values
    by the constraint returned with them, so declared with only the bits its largest value needs
    (``smt.natural_in``)."""
    env = {p.name: smt.natural_in(f"{prefix}{p.name}", w, p.values) for p in params}
    return env, param_constraint(params, env, w)


def _symbolic(m: NamedMap, w: int) -> tuple[dict[str, z3.BitVecRef], z3.BoolRef]:
    return parameters(m.params, w)


def _env_of(model: z3.ModelRef, env: Mapping[str, z3.ExprRef]) -> dict[str, int]:
    return {k: smt.as_int(model, v) for k, v in env.items()}


def _hint(*groups: tuple[Mapping[str, Any], Mapping[str, int]]) -> list[int]:
    """The enumeration's witness as ``solve_min``'s hint: for each (Z3 keys, the witness's values) group, the
    values in the keys' order."""
    return [int(values[k]) for keys, values in groups for k in keys]


Ask = Callable[[int, Mapping[str, z3.ExprRef]], tuple[list[dict[str, z3.BitVecRef]], list[z3.BoolRef]]]


def _refute(m: NamedMap, budget: smt.Budget, ask: Ask, enum: tuple[Mapping[str, int], ...] | None
            ) -> tuple[str, tuple[dict[str, int], list[dict[str, int]]] | None]:
    """Z3's search for the smallest witness of a refutation: ``ask(width, params)`` gives the symbolic input
    points (in the order they are minimised, after the parameters) and the constraints on them; ``enum``, the
    enumeration's parameters and points in that order, is tried first (``solve_min``'s hint).  Returns the
    status and, when satisfiable, the parameters and the points."""
    w = width(m)
    env, valid = _symbolic(m, w)
    points, cs = ask(w, env)
    hint = None if enum is None else _hint((env, enum[0]), *zip(points, enum[1:]))
    res, model = smt.solve_min([valid, *cs], [*env.values(), *(v for p in points for v in p.values())], budget, hint)
    if res != "sat" or model is None:
        return res, None
    return res, (_env_of(model, env), [{k: smt.as_int(model, v) for k, v in p.items()} for p in points])


def _flat_point(dims: tuple[Dim, ...], shape: tuple[int, ...], k: int) -> dict[str, int]:
    idx = np.unravel_index(k, shape)
    return {d.name: int(x) for d, x in zip(dims, idx)}


# ----------------------------------------------------------------------------- in_range

Evaluated = Callable[[Mapping[str, int]], Values]  # a map's values at every input point, per binding


def evaluations(m: NamedMap) -> Evaluated:
    """``evaluate_all(m, env)``, each binding evaluated once for as long as the returned function is kept (one
    run of a map's checks: in_range, injective and surjective each walk every binding)."""
    seen: dict[tuple[tuple[str, int], ...], Values] = {}

    def at(env: Mapping[str, int]) -> Values:
        key = tuple(env.items())
        if key not in seen:
            seen[key] = evaluate_all(m, env)
        return seen[key]
    return at


def _enum_in_range(m: NamedMap, evaluated: Evaluated, partial: bool = False) -> PointOutside | None:
    for env in bindings(m):
        v = evaluated(env)
        box = inside(v.out, m.outputs, env)
        good = (~v.ok | box) if partial else (v.ok & box)
        bad = np.flatnonzero(~np.asarray(good).reshape(-1))
        if bad.size:
            return _outside_witness(m, env, _flat_point(m.inputs, good.shape, int(bad[0])))
    return None


def _outside_witness(m: NamedMap, env: Mapping[str, int], point: dict[str, int]) -> PointOutside:
    return PointOutside(dict(env), point, m.at(point, env))


def _in_range_message(m: NamedMap):
    def message(c: PointOutside) -> str:
        where = point_text(c.point)
        if c.at is None:
            return f"{_prefix(c.params)}{where} is undefined (no case applies)"
        box = ", ".join(f"{d.name} < {d.at(c.params)}" for d in m.outputs)
        return f"{_prefix(c.params)}{where} lands at ({point_text(c.at)}), outside {box}"
    return message


def _outside(m: NamedMap, w: int, env: Mapping[str, z3.ExprRef], x: Mapping[str, z3.BitVecRef],
             partial: bool = False) -> z3.BoolRef:
    """The symbolic input point ``x`` is in the input box and undefined or lands outside the output box."""
    return _outside_at(m, w, env, x, *m.encode(x, env), partial=partial)


def _outside_at(m: NamedMap, w: int, env: Mapping[str, z3.ExprRef], x: Mapping[str, z3.BitVecRef], ok: z3.BoolRef,
                y: Mapping[str, z3.ExprRef], partial: bool = False) -> z3.BoolRef:
    """``_outside`` with ``x`` already encoded (``ok``, ``y``).  ``partial``: undefined points are not part of the
    map (a selector picks the points), so only a defined point outside the box counts."""
    if partial:
        return smt.all_of([in_box(x, m.inputs, env, w), ok, smt.not_(in_box(y, m.outputs, env, w))])
    return smt.all_of([in_box(x, m.inputs, env, w), smt.not_(smt.all_of([ok, in_box(y, m.outputs, env, w)]))])


def in_range(m: NamedMap, timeout: float = DEFAULT_TIMEOUT, expected: str = "proved",
             z3_unsat: bool = False, evaluated: Evaluated | None = None,
             budget: smt.Budget | None = None, partial: bool = False) -> CheckResult:
    """Every input point is defined and lands inside the output box (both engines).  ``z3_unsat``: Z3 has
    already proved it (``_joint_unsat``), so it is not asked again; ``evaluated``: the map's values shared
    with the other checks of this run (``evaluations``); ``budget``: the solver budget, when the joint query
    has drawn on it (default: ``timeout``'s).  ``partial``: a map whose undefined points hold nothing (a
    selector picks the points): every defined point lands inside the box."""
    t0 = time.perf_counter()
    enum = _enum_in_range(m, evaluated or evaluations(m), partial)
    res, z3_cex = "unsat", None
    if not z3_unsat:
        def ask(w: int, env: Mapping[str, z3.ExprRef]) -> tuple[list[dict[str, z3.BitVecRef]], list[z3.BoolRef]]:
            x = variables(m.inputs, w, params=m.params)
            return [x], [_outside(m, w, env, x, partial)]
        res, found = _refute(m, budget or smt.Budget(timeout), ask, None if enum is None else (enum.params, enum.point))
        if found is not None:
            z3_cex = _outside_witness(m, found[0], found[1][0])

    def confirm(c: PointOutside) -> bool:
        at = m.at(c.point, c.params)
        if at is None:
            return not partial
        return not all(0 <= at[d.name] < d.at(c.params) for d in m.outputs)

    return combine_engines("in_range", expected, smt.status(res), z3_cex, enum, _in_range_message(m),
                           time.perf_counter() - t0, "every point is defined and inside the output box", confirm,
                           same_witness=True)


# ----------------------------------------------------------------------------- injective

def _enum_injective(m: NamedMap, evaluated: Evaluated, anywhere: bool = False) -> PointsCollide | None:
    for env in bindings(m):
        found = first_collision(m, env, evaluated(env), anywhere)  # the first point that lands where an earlier did
        if found is not None:
            return PointsCollide(dict(env), found[0], found[1], m.at(found[1], env))
    return None


def _lex_less(a: list[z3.ExprRef], b: list[z3.ExprRef]) -> z3.BoolRef:
    """``a < b`` lexicographically."""
    if not a:
        return z3.BoolVal(False)
    if len(a) == 1:
        return smt.CMP["<"](a[0], b[0])
    return smt.any_of([smt.CMP["<"](a[0], b[0]), smt.all_of([smt.CMP["=="](a[0], b[0]), _lex_less(a[1:], b[1:])])])


def _collision(m: NamedMap, w: int, env: Mapping[str, z3.ExprRef], anywhere: bool = False
               ) -> tuple[dict[str, z3.BitVecRef], dict[str, z3.BitVecRef], list[z3.BoolRef]]:
    """Two symbolic input points x1 < x2 (in order), both defined and in range (``anywhere``: wherever they
    land), that land on one output point."""
    return _collision_at(m, w, env, anywhere)[:3]


def _collision_at(m: NamedMap, w: int, env: Mapping[str, z3.ExprRef], anywhere: bool = False
                  ) -> tuple[dict[str, z3.BitVecRef], dict[str, z3.BitVecRef], list[z3.BoolRef],
                             tuple[z3.BoolRef, dict[str, z3.ExprRef]]]:
    """``_collision`` and the first point's encoding (defined, outputs)."""
    x1, x2 = variables(m.inputs, w, "1", m.params), variables(m.inputs, w, "2", m.params)
    pair = getattr(m, "encode_pair", None)  # a map that encodes two points at once (its terms built once)
    (ok1, y1), (ok2, y2) = pair(x1, x2, env) if pair is not None else (m.encode(x1, env), m.encode(x2, env))
    boxed = [] if anywhere else [in_box(y1, m.outputs, env, w), in_box(y2, m.outputs, env, w)]
    return x1, x2, [in_box(x1, m.inputs, env, w), in_box(x2, m.inputs, env, w), ok1, ok2, *boxed,
                    _lex_less(list(x1.values()), list(x2.values())),
                    *[smt.CMP["=="](y1[d.name], y2[d.name]) for d in m.outputs]], (ok1, y1)


def injective(m: NamedMap, timeout: float = DEFAULT_TIMEOUT, expected: str = "proved",
              z3_unsat: bool = False, evaluated: Evaluated | None = None,
              budget: smt.Budget | None = None, anywhere: bool = False) -> CheckResult:
    """No two defined, in-range input points land on the same output point (both engines).  The witness is
    the first point (in order) that lands where an earlier one did, with that earlier one.  ``z3_unsat``: Z3
    has already proved it (``_joint_unsat``), so it is not asked again; ``evaluated`` and ``budget`` as for
    ``in_range``.  ``anywhere``: defined points collide wherever they land, inside the output box or not (the
    fragment model's injectivity; where ``in_range`` holds the two are one property)."""
    t0 = time.perf_counter()
    enum = _enum_injective(m, evaluated or evaluations(m), anywhere)
    res, z3_cex = "unsat", None
    if not z3_unsat:
        def ask(w: int, env: Mapping[str, z3.ExprRef]) -> tuple[list[dict[str, z3.BitVecRef]], list[z3.BoolRef]]:
            x1, x2, cs = _collision(m, w, env, anywhere)
            return [x2, x1], cs  # the later point first: the witness is the first point that lands on an earlier one
        res, found = _refute(m, budget or smt.Budget(timeout), ask,
                             None if enum is None else (enum.params, enum.second, enum.first))
        if found is not None:
            e, (p2, p1) = found
            z3_cex = PointsCollide(e, p1, p2, m.at(p2, e))

    def message(c: PointsCollide) -> str:
        return (f"{_prefix(c.params)}{point_text(c.first)} and {point_text(c.second)} both land at "
                f"({point_text(c.at or {})})")

    def confirm(c: PointsCollide) -> bool:
        a, b = m.at(c.first, c.params), m.at(c.second, c.params)
        return a is not None and a == b

    return combine_engines("injective", expected, smt.status(res), z3_cex, enum, message, time.perf_counter() - t0,
                           "no two points land on the same output point", confirm, same_witness=True)


# ----------------------------------------------------------------------------- surjective

def _hole(m: NamedMap, env: Mapping[str, int], evaluated: Evaluated) -> dict[str, int] | None:
    v = evaluated(env)
    good = np.asarray(v.ok & inside(v.out, m.outputs, env)).reshape(-1)
    keys = output_keys(v.out, m.outputs, env).reshape(-1)[good]
    size = 1
    for d in m.outputs:
        size *= d.at(env)
    hit = np.zeros(size, bool)
    hit[keys] = True
    miss = np.flatnonzero(~hit)
    if not miss.size:
        return None
    shape = tuple(d.at(env) for d in m.outputs)
    return _flat_point(m.outputs, shape, int(miss[0]))


def _reaches(m: NamedMap, env: Mapping[str, int], target: Mapping[str, int], budget: smt.Budget) -> str:
    """Z3: some input point reaches ``target`` (``sat``), none does (``unsat``)."""
    w = width(m)
    z_env = {k: smt.bv(v, w) for k, v in env.items()}
    x = variables(m.inputs, w)
    ok, y = m.encode(x, z_env)
    return smt.solve([in_box(x, m.inputs, z_env, w), ok, *[y[k] == smt.bv(v, w) for k, v in target.items()]],
                     budget)[0]


def surjective(m: NamedMap, timeout: float = DEFAULT_TIMEOUT, expected: str = "proved",
               z3_proved: frozenset[str] = frozenset(), evaluated: Evaluated | None = None) -> CheckResult:
    """Every output point is reached by some input point (both engines).

    Enumeration: the first output point (in order) that no input reaches.  Z3, per parameter binding:
    with a hole, it confirms that no input reaches it; without one it proves surjectivity by counting
    where the input and output boxes have one size (``_by_counting``: in range and injective for every
    parameter value at once), and otherwise confirms, output point by output point, that the point the
    enumeration names reaches it (one ground query, ``holds_everywhere``).

    ``z3_proved``: the properties of this same map (``in_range``, ``injective``) that Z3 has already proved
    with the parameters free (``check_map_layout`` passes its own results); the counting argument then uses
    those verdicts instead of asking Z3 the same two queries again.  ``evaluated`` as for ``in_range``."""
    t0 = time.perf_counter()
    budget = smt.Budget(timeout)
    evaluated = evaluated or evaluations(m)
    enum, z3_res, z3_cex = None, "unsat", None
    counted: str | None = None
    for env in bindings(m):
        hole = _hole(m, env, evaluated)
        if hole is not None:
            enum = OutputUnreached(dict(env), hole)
            r = _reaches(m, env, hole, budget)
            z3_res = {"unsat": "sat", "sat": "unsat", "unknown": "unknown"}[r]
            z3_cex = enum if r == "unsat" else None
            break
        if counted is None:
            counted = _by_counting(m, budget, z3_proved)
        r = "unsat" if counted == "unsat" else _all_reached(m, env, budget, evaluated)
        if r != "unsat":
            z3_res = r
            break

    def message(c: OutputUnreached) -> str:
        return f"{_prefix(c.params)}({point_text(c.at)}) is reached by no point"

    return combine_engines("surjective", expected, smt.status(z3_res), z3_cex, enum, message,
                           time.perf_counter() - t0, "every output point is reached")


def _by_counting(m: NamedMap, budget: smt.Budget, z3_proved: frozenset[str] = frozenset()) -> str:
    """Z3's surjectivity by counting: ``unsat`` (every output point is reached) when, for every parameter
    value, the input box has as many points as the output box and Z3 proves (parameters free) that every
    input point lands inside the output box and no two land on the same point: an injective map between
    finite sets of one size is onto.  ``unknown`` when the sizes differ somewhere or a query is not unsat."""
    for env in bindings(m):
        n_in = n_out = 1
        for d in m.inputs:
            n_in *= d.at(env)
        for d in m.outputs:
            n_out *= d.at(env)
        if n_in != n_out:
            return "unknown"
    if {"in_range", "injective"} <= z3_proved:
        return "unsat"
    w = width(m)
    env_z, valid = _symbolic(m, w)
    if smt.solve([valid, _outside(m, w, env_z, variables(m.inputs, w, "1", m.params))], budget)[0] != "unsat":
        return "unknown"
    return smt.solve([valid, *_collision(m, w, env_z)[2]], budget)[0]


def _all_reached(m: NamedMap, env: Mapping[str, int], budget: smt.Budget, evaluated: Evaluated) -> str:
    """Z3 confirms the enumeration's witnesses: for every output point, the first input point that reaches
    it does (``unsat``: no listed point fails)."""
    rows = first_preimages(m, env, evaluated)
    w = width(m)
    z_env = {k: smt.bv(val, w) for k, val in env.items()}
    x = variables(m.inputs, w)
    ok, y = m.encode(x, z_env)
    outs = {d.name: z3.BitVec(f"target_{d.name}", w) for d in m.outputs}
    term = z3.And(ok, *[y[n] == outs[n] for n in outs])
    return smt.holds_everywhere(term, [*x.values(), *outs.values()], rows, budget)


def first_preimages(m: NamedMap, env: Mapping[str, int], evaluated: Evaluated) -> list[tuple[int, ...]]:
    """The enumeration's table for ``_all_reached``: for every output point reached, in output order, the first
    input point that reaches it, as (input values..., output values...)."""
    v = evaluated(env)
    good = np.asarray(v.ok & inside(v.out, m.outputs, env)).reshape(-1)
    keys = output_keys(v.out, m.outputs, env).reshape(-1)
    idx = np.flatnonzero(good)
    uniq, first_pos = np.unique(keys[idx], return_index=True)  # the first point that reaches each output point
    ins = np.unravel_index(idx[first_pos], v.ok.shape)
    outs_ix = np.unravel_index(uniq, tuple(d.at(env) for d in m.outputs))
    return [tuple(int(a) for a in r) for r in zip(*ins, *outs_ix)]


def bijective(m: NamedMap, timeout: float = DEFAULT_TIMEOUT) -> tuple[CheckResult, CheckResult, CheckResult]:
    """``in_range``, ``injective`` and ``surjective`` of one map."""
    r, i, s = _run(m, MAP_CHECKS, timeout, {})
    return r, i, s


# ----------------------------------------------------------------------------- verdicts for readers

class Undecided(RuntimeError):
    """The two engines did not settle a property a reader asked about: they disagree (the check's ``error``) or
    Z3 gave no answer within its budget (``unknown``).  Never turned into an answer: no silent pick of one engine."""


def settled(r: CheckResult) -> Witness | None:
    """A check's agreed verdict: ``None`` where both engines prove it, the (canonical, shared) witness where both
    refute it; ``Undecided`` otherwise."""
    if r.status == "proved":
        return None
    if r.status == "refuted" and r.counterexample is not None:
        return r.counterexample
    raise Undecided(f"{r.check}: {r.status}: {r.message}")


def decide_all(m: NamedMap, checks: "Iterable[str]" = MAP_CHECKS, timeout: float = DEFAULT_TIMEOUT,
               evaluated: Evaluated | None = None, anywhere: bool = False,
               partial: bool = False) -> tuple[CheckResult, ...]:
    """The named checks of ``m`` in order (each expected ``proved``): the checks a fragment is put through
    (``verify.checks.fragment`` and ``verify.checks.family``, on ``layout.map``).  ``evaluated`` and ``anywhere``
    as for ``verdicts``; ``partial`` as for ``in_range`` (surjectivity is then never by counting: undefined
    points hold nothing)."""
    return _run(m, checks, timeout, {}, evaluated, anywhere, partial)


def verdicts(m: NamedMap, checks: "Iterable[str]" = MAP_CHECKS, timeout: float = DEFAULT_TIMEOUT,
             evaluated: Evaluated | None = None, anywhere: bool = False) -> tuple[Witness | None, ...]:
    """The agreed verdicts (``settled``) of the named checks of ``m``, in order: what the page readers
    (``verify.catalog.ingest``, ``verify.catalog.shared_pages``) take, the facts of a page fed to the one decider.
    ``evaluated``: the map's values the caller has already evaluated (``evaluations``); ``anywhere``: as for
    ``injective``."""
    return tuple(settled(r) for r in _run(m, checks, timeout, {}, evaluated, anywhere))


def injective_at_each(m: NamedMap, timeout: float = DEFAULT_TIMEOUT) -> tuple[PointsCollide, ...]:
    """Every parameter binding at which ``m`` is not injective, in ``bindings`` order, each with its first
    collision (the witness carries the binding), both engines agreeing on every binding's verdict.  First the
    whole family (``injective``: Z3 with the parameters free).  Where it is not injective: the first colliding
    binding is decided as the member ``bind(m, **env)`` (both engines, one canonical witness); Z3 confirms the
    enumeration's collision at each later colliding binding (one ground query, ``smt.holds_everywhere``) and
    proves, in one query with the parameters free, that no other binding has one."""
    from ..layout.algebra import bind
    if settled(injective(m, timeout)) is None:
        return ()
    budget = smt.Budget(timeout)
    evaluated = evaluations(m)
    colliding = [(env, found) for env in bindings(m) for found in [first_collision(m, env, evaluated(env))]
                 if found is not None]
    env0 = colliding[0][0]
    first = settled(injective(bind(m, **env0) if env0 else m, timeout))
    assert isinstance(first, PointsCollide)
    out = [dataclasses.replace(first, params=dict(env0))]
    out += [PointsCollide(dict(env), p1, p2, m.at(p2, env)) for env, (p1, p2) in colliding[1:]]
    w = width(m)
    env_z = {p.name: z3.BitVec(f"param_{p.name}", w) for p in m.params}
    x1, x2 = variables(m.inputs, w, "1"), variables(m.inputs, w, "2")  # plain constants: each row substitutes them
    (ok1, y1), (ok2, y2) = m.encode(x1, env_z), m.encode(x2, env_z)
    collide = [in_box(x1, m.inputs, env_z, w), in_box(x2, m.inputs, env_z, w), ok1, ok2, in_box(y1, m.outputs, env_z, w),
               in_box(y2, m.outputs, env_z, w), _lex_less(list(x1.values()), list(x2.values())),
               *[y1[d.name] == y2[d.name] for d in m.outputs]]
    rows = [(*env.values(), *c.first.values(), *c.second.values()) for env, c in zip((e for e, _ in colliding[1:]), out[1:])]
    confirmed = smt.holds_everywhere(smt.all_of(collide), [*env_z.values(), *x1.values(), *x2.values()], rows, budget)
    env_n, valid = _symbolic(m, w)
    others = [z3.Not(smt.all_of([env_n[k] == smt.bv(v, w) for k, v in env.items()])) for env, _ in colliding]
    elsewhere = smt.solve([valid, *others, *_collision(m, w, env_n)[2]], budget)[0]
    if (confirmed, elsewhere) != ("unsat", "unsat"):
        raise Undecided(f"injective: Z3 says {confirmed} on the enumeration's collisions and {elsewhere} where it "
                        "finds none")
    return tuple(out)


def _joint_unsat(m: NamedMap, budget: smt.Budget, anywhere: bool = False, partial: bool = False) -> bool:
    """Z3, one query for ``in_range`` and ``injective`` together: is there a point that is undefined or lands
    outside the box, or two points that collide?  ``unsat`` proves both properties (the query is the
    disjunction of the two refutations; a third of the time of asking both, on the catalog's maps).  Anything
    else (a refutation, or the budget spent) says nothing: each property is then asked alone, for its own
    canonical witness.  ``budget``: the first of the two checks', which the query draws on."""
    w = width(m)
    env, valid = _symbolic(m, w)
    x1, _, collide, (ok1, y1) = _collision_at(m, w, env, anywhere)
    outside = _outside_at(m, w, env, x1, ok1, y1, partial)
    return smt.solve([valid, smt.any_of([outside, smt.all_of(collide)])], budget)[0] == "unsat"


def _run(m: NamedMap, checks: "Iterable[str]", timeout: float, expect: Mapping[str, str],
         evaluated: Evaluated | None = None, anywhere: bool = False, partial: bool = False) -> tuple[CheckResult, ...]:
    """The named checks of ``m`` in order, each against its expectation (default ``proved``).  With both
    ``in_range`` and ``injective`` asked, Z3 first tries to prove them in one query (``_joint_unsat``);
    surjective by counting uses the in_range and injective verdicts Z3 has already given here."""
    out: list[CheckResult] = []
    checks = tuple(checks)
    t0 = time.perf_counter()
    pending = "in_range" in checks and "injective" in checks  # the first of the two takes the joint query's
    shared = smt.Budget(timeout)  # solver units and time
    joint = pending and _joint_unsat(m, shared, anywhere, partial)
    joint_seconds = time.perf_counter() - t0
    evaluated = evaluated or evaluations(m)  # each binding evaluated once for the three checks
    for c in checks:
        if c == "surjective":
            # a partial map's in_range says nothing of its undefined points: counting asks Z3 afresh
            proved = frozenset() if partial else frozenset(r.check for r in out if r.engines.get("z3") == "proved")
            out.append(surjective(m, timeout, expect.get(c, "proved"), proved, evaluated))
        else:
            budget = shared if pending else None
            r = (injective(m, timeout, expect.get(c, "proved"), joint, evaluated, budget, anywhere) if c == "injective"
                 else in_range(m, timeout, expect.get(c, "proved"), joint, evaluated, budget, partial))
            if pending and r.seconds is not None:
                r = dataclasses.replace(r, seconds=r.seconds + joint_seconds)
            pending = False
            out.append(r)
    return tuple(out)


# the tool's models of catalog maps (the descriptor's fields and codes, the zero-column mask descriptor's fields
# and coverage): ``check`` proves each map the same as its model with both engines
MODELS = {**DESCRIPTOR_MODELS, **ZERO_COLUMN_MODELS}


def check_map_layout(lay: MapLayout, timeout: float = DEFAULT_TIMEOUT) -> MapResult:
    """The checks a map layout states (``lay.checks``), each against its expectation.  A formula that cannot
    be evaluated on its input box is bad input: a ``SpecError`` at the spec's line."""
    try:
        checks = _run(lay.map, lay.checks, timeout, lay.expect)
        model = MODELS.get(lay.id)
        if model is not None and not lay.corrected:  # the tool's own model of what this map states
            checks = (*checks, same(lay.map, model(), timeout, (lay.id, "the descriptor command's model"), check="model"))
        return MapResult(lay, checks)
    except oracle.EvalError as e:
        raise SpecError(*lay.locate(e.pos.line, e.pos.col), f"{lay.id}: {e.message}") from None


def map_findings(results: "Iterable[MapResult]") -> list[Finding]:
    """Every check of a map layout that is not proved-as-expected, as a finding."""
    return [Finding(r.layout.id, c.check, c.status, c.expected, c.message, c.counterexample)
            for r in results for c in r.checks if not (c.status == "proved" and c.expected == "proved")]


# ----------------------------------------------------------------------------- equality

def same(a: NamedMap, b: NamedMap, timeout: float = DEFAULT_TIMEOUT, names_: tuple[str, str] = ("first", "second"),
         expected: str = "proved", check: str = "equal") -> CheckResult:
    """``a`` and ``b`` are the same map: same inputs (names and sizes), same output names, and at every
    input point (and parameter value) both undefined, or both defined with equal outputs.  The witness is
    the first point where they differ."""
    t0 = time.perf_counter()
    problem = _shape_problem(a, b)
    if problem is not None:
        return CheckResult(check, "refuted", expected, DomainDiffers(problem),
                           f"{names_[0]} and {names_[1]} differ: {problem}", time.perf_counter() - t0,
                           {"arithmetic": "refuted"})
    enum = None
    for env in bindings(a):
        va, vb = evaluate_all(a, env), evaluate_all(b, env)
        diff = va.ok != vb.ok
        for d in a.outputs:
            diff = diff | (va.ok & vb.ok & (va.out[d.name] != vb.out[d.name]))
        bad = np.flatnonzero(np.asarray(diff).reshape(-1))
        if bad.size:
            p = _flat_point(a.inputs, va.ok.shape, int(bad[0]))
            enum = PointDiffers(dict(env), p, names_, (a.at(p, env), b.at(p, env)))
            break
    w = width(a, b)
    env_z, valid = _symbolic(a, w)
    x = variables(a.inputs, w)
    oka, ya = a.encode(x, env_z)
    okb, yb = b.encode(x, env_z)
    agree = z3.And(oka == okb, z3.Implies(oka, z3.And([ya[d.name] == yb[d.name] for d in a.outputs])))
    hint = None if enum is None else _hint((env_z, enum.params), (x, enum.point))
    res, model = smt.solve_min([valid, in_box(x, a.inputs, env_z, w), z3.Not(agree)], [*env_z.values(), *x.values()],
                               smt.Budget(timeout), hint)
    z3_cex = None
    if res == "sat" and model is not None:
        e = _env_of(model, env_z)
        p = {k: smt.as_int(model, v) for k, v in x.items()}
        z3_cex = PointDiffers(e, p, names_, (a.at(p, e), b.at(p, e)))

    def show(v: Mapping[str, int] | None) -> str:
        return "undefined" if v is None else f"({point_text(v)})"

    def message(c: PointDiffers) -> str:
        return (f"{_prefix(c.params)}at {point_text(c.point)}: {names_[0]} {show(c.outputs[0])}, "
                f"{names_[1]} {show(c.outputs[1])}")

    def confirm(c: PointDiffers) -> bool:
        return a.at(c.point, c.params) != b.at(c.point, c.params)

    return combine_engines(check, expected, smt.status(res), z3_cex, enum, message, time.perf_counter() - t0,
                           f"{names_[0]} and {names_[1]} are the same map", confirm, same_witness=True)


def _shape_problem(a: NamedMap, b: NamedMap) -> str | None:
    if names(a.inputs) != names(b.inputs):
        return f"inputs {names(a.inputs)} against {names(b.inputs)}"
    if set(names(a.outputs)) != set(names(b.outputs)):
        return f"outputs {names(a.outputs)} against {names(b.outputs)}"
    if [p.name for p in a.params] != [p.name for p in b.params] or a.params != b.params:
        return "parameters differ"
    for env in bindings(a):
        for da, db in zip(a.inputs, b.inputs):
            if da.at(env) != db.at(env):
                return f"input {da.name} has {da.at(env)} points against {db.at(env)}" + (
                    f" ({_params_text(env)})" if env else "")
    return None


__all__ = ["DEFAULT_TIMEOUT", "Undecided", "bijective", "injective_at_each", "settled", "verdicts", "check_map_layout", "map_findings", "extent_term", "in_range", "injective", "param_constraint", "point_text", "same", "surjective"]
