"""Interval analysis of the formula language: a sound bound on every value a formula takes.

Both engines need it and neither may guess: the SMT encoding picks a bit-vector width above the
bound (so the encoding is exact), and the vectorised evaluator uses 64-bit integers only where
the bound proves that no intermediate value can overflow them.
"""
from __future__ import annotations

from functools import lru_cache

from .ast import BinOp, BoolOp, Compare, Cond, Expr, Formula, InSet, Neg, Num, Ref, Span, Var

def _interval(lo_hi: tuple[int, int], op: str, other: tuple[int, int]) -> tuple[int, int]:
    (a0, a1), (b0, b1) = lo_hi, other
    if op in ("+", "-", "*"):
        if op == "+":
            return a0 + b0, a1 + b1
        if op == "-":
            return a0 - b1, a1 - b0
        prods = [a0 * b0, a0 * b1, a1 * b0, a1 * b1]
        return min(prods), max(prods)
    if op in ("/", "%") and a0 >= 0 and b0 > 0:  # non-negative by positive: C and floor division agree
        return (0, a1 // b0) if op == "/" else (0, min(a1, b1 - 1))
    if op in ("/", "%"):
        m = max(abs(a0), abs(a1))
        if op == "%":
            m = min(m, max(abs(b0), abs(b1)))
        return -m, m
    if op in ("<<", ">>"):
        s = max(0, min(b1, 64))
        if op == "<<":
            return min(a0 << s, a0), max(a1 << s, a1)
        if a0 >= 0 and b0 >= 0:  # a non-negative value shifted right by at least b0
            return 0, a1 >> min(b0, 64)
        return min(a0, 0), max(a1, 0)
    if op == "&" and min(a0, b0) >= 0:  # two non-negative values: no more than the smaller
        return 0, min(a1, b1)
    # & | ^ : bound by the widest operand, sign included
    m = max(abs(a0), abs(a1), abs(b0), abs(b1))
    top = (1 << m.bit_length()) - 1
    if min(a0, b0) >= 0:
        return 0, top
    return -(top + 1), top


def value_bound(formula: Formula, lane_max: int, i_max: int, env_max: "dict[str, int] | None" = None) -> int:
    """A sound bound on |value| of every sub-term over the domain (interval analysis).

    Conditions are ignored (every case is assumed reachable), so the bound holds
    for the untaken branches too; the bit-vector width is chosen above it.  Memoised: a pure function
    of its arguments, asked again by every evaluation and every family instance.
    """
    return _value_bound(formula, lane_max, i_max, tuple(sorted((env_max or {}).items())))


@lru_cache(maxsize=1 << 12)
def _value_bound(formula: Formula, lane_max: int, i_max: int, env_items: tuple[tuple[str, int], ...]) -> int:
    env_max = dict(env_items)
    defs = {d.name: d for d in formula.definitions}
    memo: dict[str, tuple[int, int]] = {}
    worst = [max(lane_max, i_max, 1, *(env_max or {}).values())]

    def expr(e: Expr) -> tuple[int, int]:
        if isinstance(e, Num):
            r = (e.value, e.value)
        elif isinstance(e, Var):
            r = (0, lane_max if e.name == "lane" else i_max if e.name == "i" else (env_max or {}).get(e.name, 0))
        elif isinstance(e, Ref):
            r = definition(e.name)
        elif isinstance(e, Neg):
            a = expr(e.operand)
            r = (-a[1], -a[0])
        elif isinstance(e, BinOp):
            r = _interval(expr(e.left), e.op, expr(e.right))
        elif isinstance(e, Span):
            a, b = expr(e.first), expr(e.last)
            r = (min(a[0], b[0]), max(a[1], b[1]))
        else:
            raise TypeError(type(e))
        worst[0] = max(worst[0], abs(r[0]), abs(r[1]))
        return r

    def cond(c: Cond) -> None:
        if isinstance(c, Compare):
            for o in c.operands:
                expr(o)
        elif isinstance(c, InSet):
            expr(c.operand)
            worst[0] = max([worst[0]] + [abs(v) for v in c.values])
        elif isinstance(c, BoolOp):
            for part in c.operands:
                cond(part)

    def definition(name: str) -> tuple[int, int]:
        if name not in memo:
            lo, hi = 0, 0
            first = True
            for case in defs[name].cases:
                if case.cond is not None:
                    cond(case.cond)
                a = expr(case.expr)
                lo, hi = (a if first else (min(lo, a[0]), max(hi, a[1])))
                first = False
            memo[name] = (lo, hi)
        return memo[name]

    for d in formula.definitions:
        definition(d.name)
    return worst[0]
