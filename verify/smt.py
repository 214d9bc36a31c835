"""SMT encoding: formula ASTs -> Z3 bit-vector terms over symbolic (lane, i).

The first engine.  Every definition becomes a pair (value, defined): ``defined``
is false exactly where the enumeration oracle finds no applicable case.  Values
are 64-bit signed bit-vectors with C semantics (``bvsdiv``/``bvsrem`` truncate,
``>>`` is arithmetic); the oracle rejects any formula whose values leave the
64-bit range on the domain, so the encoding is exact there.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import z3

from .formula import BinOp, BoolOp, Compare, Cond, Expr, Formula, InSet, Neg, Num, Ref, Span, Var

MAX_WIDTH = 64


def bv(value: int, width: int) -> z3.BitVecRef:
    return z3.BitVecVal(value, width)


@dataclass(frozen=True)
class Term:
    value: z3.ExprRef | tuple[z3.ExprRef, z3.ExprRef]
    ok: z3.BoolRef


_OPS: dict[str, Callable[[z3.BitVecRef, z3.BitVecRef], z3.BitVecRef]] = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a / b,  # bvsdiv: truncates toward zero, like C
    "%": lambda a, b: z3.SRem(a, b),  # sign of the dividend, like C
    "<<": lambda a, b: a << b,
    ">>": lambda a, b: a >> b,  # arithmetic shift
    "&": lambda a, b: a & b,
    "|": lambda a, b: a | b,
    "^": lambda a, b: a ^ b,
}

_CMP: dict[str, Callable[[z3.BitVecRef, z3.BitVecRef], z3.BoolRef]] = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
}


class Encoder:
    """Encodes one formula at one symbolic point; memoises each definition."""

    def __init__(self, formula: Formula, lane: z3.BitVecRef, i: z3.BitVecRef) -> None:
        self.formula = formula
        self.lane = lane
        self.i = i
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
                    value = (z3.If(ct, et.value[0], value[0]), z3.If(ct, et.value[1], value[1]))  # type: ignore[index]
                else:
                    value = z3.If(ct, et.value, value)
                ok = z3.And(cok, z3.If(ct, et.ok, ok))
            assert value is not None
            self._memo[name] = Term(value, z3.simplify(ok))  # type: ignore[arg-type]
        return self._memo[name]

    def expr(self, e: Expr) -> Term:
        if isinstance(e, Num):
            return Term(bv(e.value, self.width), z3.BoolVal(True))
        if isinstance(e, Var):
            return Term(self.lane if e.name == "lane" else self.i, z3.BoolVal(True))
        if isinstance(e, Ref):
            return self.definition(e.name)
        if isinstance(e, Neg):
            t = self.expr(e.operand)
            return Term(-t.value, t.ok)  # type: ignore[operator]
        if isinstance(e, BinOp):
            a, b = self.expr(e.left), self.expr(e.right)
            return Term(_OPS[e.op](a.value, b.value), z3.And(a.ok, b.ok))  # type: ignore[arg-type]
        if isinstance(e, Span):
            a, b = self.expr(e.first), self.expr(e.last)
            return Term((a.value, b.value), z3.And(a.ok, b.ok))  # type: ignore[arg-type]
        raise TypeError(type(e))

    def cond(self, c: Cond) -> tuple[z3.BoolRef, z3.BoolRef]:
        """(truth, defined) of a condition."""
        if isinstance(c, Compare):
            terms = [self.expr(o) for o in c.operands]
            truth = z3.And([_CMP[op](a.value, b.value) for op, a, b in zip(c.ops, terms, terms[1:])])  # type: ignore[arg-type]
            return truth, z3.And([t.ok for t in terms])
        if isinstance(c, InSet):
            t = self.expr(c.operand)
            return z3.Or([t.value == bv(v, self.width) for v in c.values]), t.ok  # type: ignore[union-attr]
        if isinstance(c, BoolOp):
            parts = [self.cond(o) for o in c.operands]
            # Short-circuit like the oracle: a later operand's definedness only matters
            # when the earlier ones did not already decide the result.
            truth: z3.BoolRef = z3.BoolVal(c.op == "and")
            ok: z3.BoolRef = z3.BoolVal(True)
            for pt, pok in reversed(parts):
                if c.op == "and":
                    ok = z3.And(pok, z3.Or(z3.Not(pt), ok))
                    truth = z3.And(pt, truth)
                else:
                    ok = z3.And(pok, z3.Or(pt, ok))
                    truth = z3.Or(pt, truth)
            return truth, ok
        raise TypeError(type(c))


def in_domain(lane: z3.BitVecRef, i: z3.BitVecRef, threads: int, n: int) -> z3.BoolRef:
    return z3.And(lane >= 0, lane < threads, i >= 0, i < n)


def as_int(model: z3.ModelRef, term: z3.ExprRef) -> int:
    return model.eval(term, model_completion=True).as_signed_long()  # type: ignore[attr-defined]


# ----------------------------------------------------------------------------- bit width

def _interval(lo_hi: tuple[int, int], op: str, other: tuple[int, int]) -> tuple[int, int]:
    (a0, a1), (b0, b1) = lo_hi, other
    if op in ("+", "-", "*"):
        if op == "+":
            return a0 + b0, a1 + b1
        if op == "-":
            return a0 - b1, a1 - b0
        prods = [a0 * b0, a0 * b1, a1 * b0, a1 * b1]
        return min(prods), max(prods)
    if op in ("/", "%"):
        m = max(abs(a0), abs(a1))
        if op == "%":
            m = min(m, max(abs(b0), abs(b1)))
        return -m, m
    if op in ("<<", ">>"):
        s = max(0, min(b1, 64))
        if op == "<<":
            return min(a0 << s, a0), max(a1 << s, a1)
        return min(a0, 0), max(a1, 0)
    # & | ^ : bound by the widest operand, sign included
    m = max(abs(a0), abs(a1), abs(b0), abs(b1))
    top = (1 << m.bit_length()) - 1
    if min(a0, b0) >= 0:
        return 0, top
    return -(top + 1), top


def value_bound(formula: Formula, lane_max: int, i_max: int) -> int:
    """A sound bound on |value| of every sub-term over the domain (interval analysis).

    Conditions are ignored (every case is assumed reachable), so the bound holds
    for the untaken branches too; the bit-vector width is chosen above it.
    """
    defs = {d.name: d for d in formula.definitions}
    memo: dict[str, tuple[int, int]] = {}
    worst = [max(lane_max, i_max, 1)]

    def expr(e: Expr) -> tuple[int, int]:
        if isinstance(e, Num):
            r = (e.value, e.value)
        elif isinstance(e, Var):
            r = (0, lane_max if e.name == "lane" else i_max)
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
            for o in c.operands:
                cond(o)

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


def width_for(bound: int) -> int:
    """Bits for a signed bit-vector that holds +-bound, with room for +1 and compare."""
    return max(8, bound.bit_length() + 2)
