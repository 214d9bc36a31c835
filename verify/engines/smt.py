"""SMT encoding: formula ASTs -> Z3 bit-vector terms over symbolic (lane, i).

The first engine.  Every definition becomes a pair (value, defined): ``defined``
is false exactly where the enumeration oracle finds no applicable case.  Values
are 64-bit signed bit-vectors with C semantics (``bvsdiv``/``bvsrem`` truncate,
``>>`` is arithmetic); the oracle rejects any formula whose values leave the
64-bit range on the domain, so the encoding is exact there.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import z3
from z3.z3 import _to_expr_ref

from ..formula import BinOp, BoolOp, Compare, Cond, Expr, Formula, InSet, Neg, Num, Ref, Span, Var

MAX_WIDTH = 64


_BV: dict[tuple[int, int], z3.BitVecRef] = {}


def bv(value: int, width: int) -> z3.BitVecRef:
    """A bit-vector constant (memoised: building Z3 terms from Python is most of a check's cost)."""
    key = (value, width)
    hit = _BV.get(key)
    if hit is None:
        if len(_BV) > 1 << 16:
            _BV.clear()
        hit = _BV[key] = z3.BitVecVal(value, width)
    return hit


TRUE = z3.BoolVal(True)  # one object, so "defined everywhere" is an identity test, not a Z3 call


def _nary(make: Callable) -> Callable[[Sequence[z3.BoolRef]], z3.BoolRef]:
    """An n-ary Boolean connective through Z3's C API, the same term z3's ``And``/``Or`` make (one
    application over every part), without their coercion: a sort comparison per part."""
    def op(parts: Sequence[z3.BoolRef]) -> z3.BoolRef:
        ctx = parts[0].ctx if parts else z3.main_ctx()
        return z3.BoolRef(make(ctx.ref(), len(parts), (z3.Ast * len(parts))(*[p.as_ast() for p in parts])), ctx)
    return op


all_of = _nary(z3.Z3_mk_and)  # z3.And(parts) of Z3 Boolean terms (Python bools are not coerced: pass terms)
any_of = _nary(z3.Z3_mk_or)  # z3.Or(parts), likewise


def not_(a: z3.BoolRef) -> z3.BoolRef:
    """``z3.Not(a)`` of a Z3 Boolean term through the C API."""
    ctx = a.ctx
    return z3.BoolRef(z3.Z3_mk_not(ctx.ref(), a.as_ast()), ctx)


def ite(c: z3.BoolRef, a: z3.ExprRef, b: z3.ExprRef) -> z3.ExprRef:
    """``z3.If(c, a, b)`` through the C API: ``a`` and ``b`` of one sort (Boolean, or bit-vectors of one width)."""
    ctx = c.ctx
    kind = z3.BoolRef if isinstance(a, z3.BoolRef) else z3.BitVecRef
    return kind(z3.Z3_mk_ite(ctx.ref(), c.as_ast(), a.as_ast(), b.as_ast()), ctx)


def substitute(term: z3.ExprRef, *pairs: tuple[z3.ExprRef, z3.ExprRef]) -> z3.ExprRef:
    """``z3.substitute`` through the C API: each pair of one sort (by construction here); z3's Python-side
    checks of every pair cost twice the substitution itself."""
    ctx = term.ctx
    src = (z3.Ast * len(pairs))(*(a.as_ast() for a, _ in pairs))
    dst = (z3.Ast * len(pairs))(*(b.as_ast() for _, b in pairs))
    return _to_expr_ref(z3.Z3_substitute(ctx.ref(), term.as_ast(), len(pairs), src, dst), ctx)


def conj(*parts: z3.BoolRef) -> z3.BoolRef:
    """``And`` without the trivially true parts (most definedness terms are TRUE): building Z3 terms
    from Python is the bulk of a check's cost, and z3's own ``And`` coerces every argument."""
    kept = [p for p in parts if p is not TRUE]
    if not kept:
        return TRUE
    return kept[0] if len(kept) == 1 else all_of(kept)


@dataclass(frozen=True)
class Term:
    value: z3.ExprRef | tuple[z3.ExprRef, z3.ExprRef]
    ok: z3.BoolRef


def _raw(make: Callable, result: type) -> Callable[[z3.BitVecRef, z3.BitVecRef], z3.ExprRef]:
    """A binary operator through Z3's C API: both operands are bit-vectors of one width, so z3's
    Python-side coercion (a sort comparison per operand) is pure cost."""
    def op(a: z3.BitVecRef, b: z3.BitVecRef) -> z3.ExprRef:
        ctx = a.ctx
        return result(make(ctx.ref(), a.as_ast(), b.as_ast()), ctx)
    return op


def _distinct(a: z3.BitVecRef, b: z3.BitVecRef) -> z3.BoolRef:
    ctx = a.ctx
    return z3.BoolRef(z3.Z3_mk_distinct(ctx.ref(), 2, (z3.Ast * 2)(a.as_ast(), b.as_ast())), ctx)


# the formula language's operators on two bit-vectors of one width (the encoder's, and the terms other modules
# build)
OPS: dict[str, Callable[[z3.BitVecRef, z3.BitVecRef], z3.BitVecRef]] = {
    "+": _raw(z3.Z3_mk_bvadd, z3.BitVecRef),
    "-": _raw(z3.Z3_mk_bvsub, z3.BitVecRef),
    "*": _raw(z3.Z3_mk_bvmul, z3.BitVecRef),
    "/": _raw(z3.Z3_mk_bvsdiv, z3.BitVecRef),  # truncates toward zero, like C
    "%": _raw(z3.Z3_mk_bvsrem, z3.BitVecRef),  # sign of the dividend, like C
    "<<": _raw(z3.Z3_mk_bvshl, z3.BitVecRef),
    ">>": _raw(z3.Z3_mk_bvashr, z3.BitVecRef),  # arithmetic shift
    "&": _raw(z3.Z3_mk_bvand, z3.BitVecRef),
    "|": _raw(z3.Z3_mk_bvor, z3.BitVecRef),
    "^": _raw(z3.Z3_mk_bvxor, z3.BitVecRef),
}

# signed comparisons of two bit-vectors of one width (the encoder's, and the terms other modules build)
CMP: dict[str, Callable[[z3.BitVecRef, z3.BitVecRef], z3.BoolRef]] = {
    "<": _raw(z3.Z3_mk_bvslt, z3.BoolRef),
    "<=": _raw(z3.Z3_mk_bvsle, z3.BoolRef),
    ">": _raw(z3.Z3_mk_bvsgt, z3.BoolRef),
    ">=": _raw(z3.Z3_mk_bvsge, z3.BoolRef),
    "==": _raw(z3.Z3_mk_eq, z3.BoolRef),
    "!=": _distinct,
}


class Encoder:
    """Encodes one formula at one symbolic point; memoises each definition."""

    def __init__(self, formula: Formula, lane: z3.BitVecRef, i: z3.BitVecRef,
                 env: "Mapping[str, z3.ExprRef] | None" = None) -> None:
        self.formula = formula
        self.lane = lane
        self.i = i
        self.env = dict(env or {})  # layout parameters (wgmma N): symbolic or constant
        self._defs = {d.name: d for d in formula.definitions}
        self._memo: dict[str, Term] = {}
        self.width = lane.size()

    def definition(self, name: str) -> Term:
        if name not in self._memo:
            cases = self._defs[name].cases
            value: object = None
            ok: z3.BoolRef = z3.BoolVal(False)
            for case in reversed(cases):
                et = self.expr(case.expr)
                if case.cond is None:
                    value, ok = et.value, et.ok
                    continue
                ct, cok = self.cond(case.cond)
                if value is None:
                    value = et.value
                elif isinstance(et.value, tuple):
                    value = (ite(ct, et.value[0], value[0]), ite(ct, et.value[1], value[1]))  # type: ignore[index]
                else:
                    value = ite(ct, et.value, value)
                ok = conj(cok, ok if et.ok is TRUE and ok is TRUE else ite(ct, et.ok, ok))
            assert value is not None
            self._memo[name] = Term(value, ok if ok is TRUE else z3.simplify(ok))
        return self._memo[name]

    def expr(self, e: Expr) -> Term:
        if isinstance(e, Num):
            return Term(bv(e.value, self.width), TRUE)
        if isinstance(e, Var):
            if e.name in ("lane", "i"):
                return Term(self.lane if e.name == "lane" else self.i, TRUE)
            return Term(self.env[e.name], TRUE)
        if isinstance(e, Ref):
            return self.definition(e.name)
        if isinstance(e, Neg):
            t = self.expr(e.operand)
            return Term(-t.value, t.ok)  # type: ignore[operator]
        if isinstance(e, BinOp):
            a, b = self.expr(e.left), self.expr(e.right)
            return Term(OPS[e.op](a.value, b.value), conj(a.ok, b.ok))
        if isinstance(e, Span):
            a, b = self.expr(e.first), self.expr(e.last)
            return Term((a.value, b.value), conj(a.ok, b.ok))
        raise TypeError(type(e))

    def cond(self, c: Cond) -> tuple[z3.BoolRef, z3.BoolRef]:
        """(truth, defined) of a condition."""
        if isinstance(c, Compare):
            terms = [self.expr(o) for o in c.operands]
            truth = conj(*[CMP[op](a.value, b.value) for op, a, b in zip(c.ops, terms, terms[1:])])
            return truth, conj(*[t.ok for t in terms])
        if isinstance(c, InSet):
            t = self.expr(c.operand)
            eq = CMP["=="]
            return any_of([eq(t.value, bv(v, self.width)) for v in c.values]), t.ok
        if isinstance(c, BoolOp):
            parts = [self.cond(o) for o in c.operands]
            # Short-circuit like the oracle: a later operand's definedness only matters
            # when the earlier ones did not already decide the result.
            truth = z3.BoolVal(c.op == "and")
            ok: z3.BoolRef = TRUE
            for pt, pok in reversed(parts):
                if c.op == "and":
                    ok = conj(pok, TRUE if ok is TRUE else any_of([not_(pt), ok]))
                    truth = all_of([pt, truth])
                else:
                    ok = conj(pok, TRUE if ok is TRUE else any_of([pt, ok]))
                    truth = any_of([pt, truth])
            return truth, ok
        raise TypeError(type(c))


_IN_DOMAIN: dict[tuple[int, int, int, int], tuple[z3.BitVecRef, z3.BitVecRef, z3.BoolRef]] = {}


def in_domain(lane: z3.BitVecRef, i: z3.BitVecRef, threads: int, n: int) -> z3.BoolRef:
    """``0 <= lane < threads and 0 <= i < n`` (memoised: every check asks it of the same variables)."""
    key = (lane.get_id(), i.get_id(), threads, n)
    hit = _IN_DOMAIN.get(key)
    if hit is None:  # the entry keeps lane and i alive, so their ids are never reused
        if len(_IN_DOMAIN) > 1 << 12:
            _IN_DOMAIN.clear()
        w = lane.size()
        ge, lt, wi = CMP[">="], CMP["<"], i.size()
        hit = _IN_DOMAIN[key] = (lane, i, all_of([ge(lane, bv(0, w)), lt(lane, bv(threads, w)), ge(i, bv(0, wi)),
                                                  lt(i, bv(n, wi))]))
    return hit[2]


def as_int(model: z3.ModelRef, term: z3.ExprRef) -> int:
    return model.eval(term, model_completion=True).as_signed_long()


def width_for(bound: int) -> int:
    """Bits for a signed bit-vector that holds +-bound, with room for +1 and compare."""
    return max(8, bound.bit_length() + 2)


NARROW = True  # False: every ``natural`` at full width (tests hold the two encodings to the same answers)


def natural(name: str, width: int, top: int) -> z3.BitVecRef:
    """A ``width``-bit unknown whose query confines it to ``0 .. top`` (a lane, an element index, a box's
    coordinate, a parameter): declared with the bits ``top`` needs and zero-extended, so that the bit-blaster
    sees its high bits as constant zeros and every adder, multiplier, divider and comparison that reads it
    shrinks (the catalog's solving takes a quarter less time; ``benchmarks/instructions.py``).

    Precondition, kept by every caller: each constraint that reads the unknown holds only where it lies in
    ``0 .. top`` (it is conjoined with the unknown's domain or box bound, or with the parameter's values).
    The values the narrow declaration drops are then values no satisfying assignment needs, so the query is
    satisfiable exactly when it was with a full-width unknown, and a model's value (``as_int``) is the same.
    An unknown quantified over (``z3.ForAll``) must be a plain constant: this is not for those."""
    bits = max(1, top.bit_length())
    if not NARROW or top < 0 or bits >= width:
        return z3.BitVec(name, width)
    return z3.ZeroExt(width - bits, z3.BitVec(name, bits))


def natural_in(name: str, width: int, values: Sequence[int]) -> z3.BitVecRef:
    """``natural`` for an unknown its query confines to one of ``values`` (a parameter's, a selector's)."""
    return natural(name, width, max(values) if values and min(values) >= 0 else -1)


def naturals(names: str, width: int, tops: Sequence[int]) -> list[z3.BitVecRef]:
    """``natural`` for each of the space-separated ``names``, with its ``top``."""
    words = names.split()
    assert len(words) == len(tops), (names, tops)
    return [natural(n, width, t) for n, t in zip(words, tops)]


# ----------------------------------------------------------------------------- solving

# Z3's resource counter (``rlimit``) is deterministic: the same query on the same Z3 uses the same
# units on any machine under any load.  Every query gets a budget of units derived from --timeout
# (measured here at 2-25 M units per second of solving), so a verdict never depends on how busy
# the machine is; the wall-clock timeout stays as a safety net that a calibrated budget reaches
# first.
RLIMIT_PER_SECOND = 1_000_000


class Budget:
    """The solver work one check may do: rlimit units (deterministic) and a wall-clock deadline.

    Queries draw on one budget, so a check that makes several queries (a canonical witness is a
    binary search) stays inside its ``--timeout`` as a whole.
    """

    def __init__(self, timeout: float, start: float | None = None) -> None:
        """``start``: when the check began (``time.perf_counter()``), if work it did before its first query
        counts against its time too; the units stay ``timeout``'s, so verdicts do not depend on load."""
        self.timeout = timeout
        self.units = int(RLIMIT_PER_SECOND * timeout)
        self.deadline = (time.perf_counter() if start is None else start) + timeout

    @property
    def spent(self) -> bool:
        return self.units <= 0 or time.perf_counter() >= self.deadline

    def limit(self, s: z3.Solver) -> None:
        """Give ``s`` what is left of the budget for its next ``check``."""
        s.set(rlimit=max(1, self.units),  # relative: this many more units for this query
              timeout=max(1, int((self.deadline - time.perf_counter()) * 1000)))

    def charge(self, s: z3.Solver) -> None:
        """Spend what the query used: the context's counter now, less what it was after the last query
        (reading Z3's statistics costs a quarter millisecond: once per query)."""
        global _LAST_COUNT
        now = _rlimit_count(s)
        self.units -= max(0, now - _LAST_COUNT)
        _LAST_COUNT = now


_QF_BV: list[z3.Solver] = []


def _qf_bv_solver() -> z3.Solver:
    """The solver of every quantifier-free query: one per process, running Z3's QF_BV tactic, each query asked
    between a ``push`` and a ``pop``.  A solver built from a tactic is not incremental: each ``check`` runs the
    tactic on the assertions of the open scopes alone, as a fresh solver would, so a query's verdict and model
    are those of a solver of its own.  ``SolverFor("QF_BV")`` runs the same tactic on a query asked once, but
    builds the tactic and checks its parameter table anew for every solver: 3.5 M instructions of each of the
    catalog's 400 queries (counted with callgrind, ``benchmarks/instructions.py``)."""
    if not _QF_BV:
        _QF_BV.append(z3.Tactic("qfbv").solver())
    return _QF_BV[0]


_LAST_COUNT = 0  # Z3's resource counter after the last query (it is cumulative for the whole context)


def _rlimit_count(s: z3.Solver) -> int:
    st = s.statistics()
    return int(next((st.get_key_value(k) for k in st.keys() if k == "rlimit count"), 0))


def _budget(timeout: "float | Budget") -> Budget:
    return timeout if isinstance(timeout, Budget) else Budget(timeout)


def solve(constraints: list[z3.BoolRef], timeout: "float | Budget") -> tuple[str, z3.ModelRef | None]:
    """One query within the budget: ``sat`` (with a model), ``unsat``, or ``unknown`` (budget spent)."""
    budget = _budget(timeout)
    if budget.spent:
        return "unknown", None
    if any(z3.is_quantifier(c) for c in constraints):
        return _check(z3.Solver(), constraints, budget)
    s = _qf_bv_solver()
    s.push()
    try:
        return _check(s, constraints, budget)
    finally:
        s.pop()


def _check(s: z3.Solver, constraints: list[z3.BoolRef], budget: Budget) -> tuple[str, z3.ModelRef | None]:
    s.add(*constraints)
    budget.limit(s)
    r = s.check()
    budget.charge(s)
    if r == z3.sat:
        return "sat", s.model()  # a model of its own: it outlives the scope's pop
    if r == z3.unsat:
        return "unsat", None
    return "unknown", None


def _lex_less(keys: list[z3.ExprRef], values: "list[int] | tuple[int, ...]") -> z3.BoolRef:
    """``keys`` lexicographically smaller than ``values`` (signed, like the binary search)."""
    out: z3.BoolRef = z3.BoolVal(False)
    for key, v in reversed(list(zip(keys, values))):
        c = bv(v, key.size())
        out = z3.Or(key < c, z3.And(key == c, out))
    return out


def solve_min(constraints: list[z3.BoolRef], keys: list[z3.ExprRef],
              timeout: "float | Budget", hint: "list[int] | tuple[int, ...] | None" = None) -> tuple[str, z3.ModelRef | None]:
    """Solve, then make the witness canonical: lexicographically smallest ``keys``.

    Z3's models differ between runs in one process; a binary search per key pins the
    witness to the one the enumeration engine finds first, so outputs are reproducible
    and the two engines' witnesses can be compared exactly.

    ``hint``: the values of ``keys`` at the enumeration's first witness, when it found one.  Z3 then
    checks that point itself (one ground query: cheap, so it still fits when the search would not)
    and asks for anything lexicographically smaller; nothing smaller (``unsat``) makes it Z3's minimum
    too, and a budget spent on that second query leaves the confirmed point as the witness (both
    engines refute; its minimality rests on the exhaustive enumeration).  Z3 finding something
    smaller, or rejecting the point, falls back to its own search: the witnesses then differ, an error.
    """
    budget = _budget(timeout)
    if hint is not None and len(hint) == len(keys):
        at = [k == bv(int(v), k.size()) for k, v in zip(keys, hint)]
        r, mh = solve(list(constraints) + at, budget)
        if r == "sat":
            r2, m2 = solve(list(constraints) + [_lex_less(keys, list(hint))], budget)
            if r2 != "sat":
                return "sat", mh
            return _search(list(constraints), keys, m2, budget)
    res, m = solve(constraints, budget)
    if res != "sat":
        return res, m
    return _search(list(constraints), keys, m, budget)


def _search(constraints: list[z3.BoolRef], keys: list[z3.ExprRef], m: z3.ModelRef | None,
            budget: Budget) -> tuple[str, z3.ModelRef | None]:
    """The binary search of ``solve_min`` from a model ``m`` that satisfies ``constraints``."""
    fixed = list(constraints)
    for key in keys:
        assert m is not None
        lo, hi = 0, as_int(m, key)
        while lo < hi:
            mid = (lo + hi) // 2
            r, m2 = solve(fixed + [key <= mid], budget)
            if r == "sat":
                hi, m = as_int(m2, key), m2
            elif r == "unsat":
                lo = mid + 1
            else:
                return "sat", m  # out of budget: keep the (valid, non-minimal) witness
        fixed.append(key == hi)
    return "sat", m


def holds_everywhere(term: z3.BoolRef, variables: list[z3.ExprRef], rows: list[tuple[int, ...]],
                     timeout: "float | Budget") -> str:
    """Z3 checks that ``term`` holds at each listed assignment of ``variables`` (a table of witnesses
    from the enumeration engine): one ground query, ``unsat`` when every row holds, ``sat`` when
    one does not, ``unknown`` when the budget runs out."""
    if not rows:
        return "unsat"
    budget = _budget(timeout)
    # Built with Z3's C functions, the variables' array once: ``z3.substitute``, ``z3.Not`` and ``z3.Or`` check
    # the sorts of their arguments again on each row, most of the time on a table of thousands of rows.
    # Each result is wrapped (and so referenced) before the next call, and a row's constants are held while
    # the substitution reads them (``bv``'s memo may be cleared in between).
    ctx, n, widths = term.ctx, len(variables), [v.size() for v in variables]
    source = (z3.Ast * n)(*(v.as_ast() for v in variables))
    holds = []
    for k, row in enumerate(rows):
        if k % 64 == 63 and budget.spent:  # building the query is work inside the budget too
            return "unknown"
        consts = [bv(x, w) for x, w in zip(row, widths)]
        target = (z3.Ast * n)(*(c.as_ast() for c in consts))
        holds.append(z3.BoolRef(z3.Z3_substitute(ctx.ref(), term.as_ast(), n, source, target), ctx))
    return solve([z3.Not(all_of(holds))], budget)[0]  # some row fails


def status(res: str) -> str:
    """A solver answer as a verdict on the property: a model refutes it, unsat proves it."""
    return {"sat": "refuted", "unsat": "proved", "unknown": "unknown"}[res]
