"""Vectorised enumeration: a formula AST evaluated over a whole domain at once with numpy.

The same semantics as ``verify.engines.oracle`` (which evaluates one point at a time), kept
exactly: C's truncating ``/`` and ``%``, arithmetic ``>>``, first matching case wins, a name
that no case defines makes everything that uses it undefined, and an error (division by
zero, a shift outside 0..63, a value beyond 64 bits, a column range used as a number) counts
only at points where the oracle would really evaluate the failing operation (``&&``/``||``
short-circuit, later operands of an operator are not evaluated once an earlier one is
undefined).  It shares nothing with the SMT encoding but the AST.

Every result is a ``Value``: the values, a mask ``ok`` (defined, no error) and a mask ``err``
(evaluation raises there); points in neither are undefined.  ``None`` stands for an all-true
``ok`` or an all-false ``err``, so formulas that cannot be undefined or fail cost no masks.

Values are int64 where the interval analysis (``verify.formula.bounds``) proves that no
intermediate value leaves +-2^62; otherwise Python integers in object arrays, range-checked
after every operation like the oracle.  Callers that need the oracle's exact error message
re-run the failing points with the oracle (``first_error``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

import numpy as np

from ..formula import BinOp, BoolOp, Compare, Cond, Expr, Formula, InSet, Neg, Num, Ref, Span, Var
from ..formula.bounds import value_bound

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
FAST_LIMIT = 2**62  # int64 arithmetic is exact below this bound


# Two kinds of mask, each with None as its cheap common case:
#   ok  (defined, no error): None means true everywhere;
#   err (evaluation raises):  None means false everywhere.

def both(a: np.ndarray | None, b: np.ndarray | None) -> np.ndarray | None:
    """ok AND ok."""
    if a is None:
        return b
    if b is None:
        return a
    return a & b


def either(a: np.ndarray | None, b: np.ndarray | None) -> np.ndarray | None:
    """err OR err."""
    if a is None:
        return b
    if b is None:
        return a
    return a | b


def within(ok: np.ndarray | None, err: np.ndarray | None) -> np.ndarray | None:
    """The errors of ``err`` at points where ``ok`` holds (a later operand is evaluated only there)."""
    if err is None or ok is None:
        return err
    return ok & err


@dataclass
class Value:
    """Values over the domain; ``lo``/``hi`` differ only for column ranges (``[a ... b]``)."""

    lo: np.ndarray
    hi: np.ndarray
    span: np.ndarray | None  # True where the value is a column range (None: nowhere)
    ok: np.ndarray | None    # None: defined everywhere
    err: np.ndarray | None   # None: no error anywhere


_CMP: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
    "==": np.equal, "!=": np.not_equal,
}


class VectorEvaluator:
    """Evaluates the definitions of one formula over every point of a domain.

    ``lane`` and ``i`` are integer arrays that broadcast to the domain's shape (for a
    layout: ``lane[:, None]`` and ``i[None, :]``); ``env`` binds other variables (layout
    parameters) to arrays or ints.
    """

    def __init__(self, formula: Formula, lane: np.ndarray, i: np.ndarray,
                 env: Mapping[str, np.ndarray | int] | None = None) -> None:
        self.formula = formula
        self._defs = {d.name: d for d in formula.definitions}
        self.shape = np.broadcast_shapes(np.shape(lane), np.shape(i),
                                         *(np.shape(v) for v in (env or {}).values()))
        lane_max = int(np.max(lane)) if np.size(lane) else 0
        i_max = int(np.max(i)) if np.size(i) else 0
        env_max = {k: int(np.max(np.abs(v))) if np.size(v) else 0 for k, v in (env or {}).items()}
        self.fast = value_bound(formula, lane_max, i_max, env_max) < FAST_LIMIT
        dtype = np.int64 if self.fast else object
        # every array keeps the shape it needs ([threads, 1] for the lane, [1, n] for i) and numpy
        # broadcasts: a value that depends on the lane only is computed once per lane
        self._vars = {"lane": np.asarray(lane, dtype=dtype), "i": np.asarray(i, dtype=dtype)}
        for k, v in (env or {}).items():
            self._vars[k] = np.asarray(v, dtype=dtype)
        self.dtype = dtype
        self._memo: dict[str, Value] = {}
        self._consts: dict[int, Value] = {}

    # -- helpers
    def _full(self, v: int) -> np.ndarray:
        return np.asarray(v, dtype=self.dtype)  # 0-d: broadcasts against anything

    def full(self, name: str) -> Value:
        """Definition ``name`` with every array broadcast to the whole domain (for callers that index it)."""
        v = self.value(name)
        b = (lambda a: None if a is None else np.broadcast_to(a, self.shape))  # noqa: E731
        return Value(np.broadcast_to(v.lo, self.shape), np.broadcast_to(v.hi, self.shape), b(v.span), b(v.ok), b(v.err))

    def _range_err(self, v: np.ndarray) -> np.ndarray | None:
        """Points where a value leaves 64 bits (object mode only; int64 mode cannot reach it)."""
        if self.fast:
            return None
        bad = np.asarray((v < INT64_MIN) | (v > INT64_MAX), dtype=bool)
        return bad if bad.any() else None

    def _clean(self, v: np.ndarray, bad: np.ndarray | None) -> np.ndarray:
        """Zero the values at failed points so later operations stay small and defined."""
        if bad is None or not bad.any():
            return v
        return np.where(bad, np.asarray(0, dtype=self.dtype), v)

    # -- definitions
    def value(self, name: str) -> Value:
        if name not in self._memo:
            self._memo[name] = self._piecewise(name)
        return self._memo[name]

    def _piecewise(self, name: str) -> Value:
        cases = self._defs[name].cases
        if len(cases) == 1 and cases[0].cond is None:
            return self.expr(cases[0].expr)  # no case analysis: the expression itself
        reach: np.ndarray | None = None  # points that get to this case (None: all)
        parts: list[tuple[np.ndarray | None, Value]] = []
        err: np.ndarray | None = None
        has_else = False  # an unconditional last case was reached: it takes every point left
        partial = False  # a condition undefined somewhere: its points take no case
        for case in cases:
            if reach is not None and not reach.any():
                break
            if case.cond is None:
                parts.append((reach, self.expr(case.expr)))
                reach = np.zeros((), bool)
                has_else = True
                break
            truth, cok, cerr = self.cond(case.cond)
            partial = partial or cok is not None
            if cerr is not None:
                err = either(err, cerr if reach is None else (cerr & reach))
            here = both(reach, cok)
            take = truth if here is None else (here & truth)
            reach = ~truth if here is None else (here & ~truth)
            parts.append((take, self.expr(case.expr)))
        if err is None and has_else and not partial and all(
                e.ok is None and e.err is None and e.span is None and e.hi is e.lo for _, e in parts):
            # the common shape (cases ending in ``otherwise``, all defined everywhere): one ``where`` per
            # earlier case, the first matching case winning; every point is defined
            lo = parts[-1][1].lo
            for take, e in reversed(parts[:-1]):
                lo = np.where(take, e.lo, lo)
            return Value(lo, lo, None, None, None)
        lo = self._full(0)
        hi: np.ndarray = self._full(0)
        span: np.ndarray | None = None
        ok: np.ndarray = np.zeros((), bool)
        ranges = any(e.hi is not e.lo for _, e in parts)  # a column range among the cases (sparse A)
        for take, e in reversed(parts):  # the first matching case wins: apply the cases last to first
            sel = np.ones((), bool) if take is None else take
            if e.err is not None:
                err = either(err, sel & e.err)
            good = sel if e.ok is None else (sel & e.ok)
            ok = good | ok
            lo = np.where(good, e.lo, lo)
            if ranges:
                hi = np.where(good, e.hi, hi)
            if e.span is not None or span is not None:
                span = np.where(good, e.span if e.span is not None else False, span if span is not None else False)
        if not ranges:
            hi = lo
        if err is not None:
            ok = ok & ~err
        ok_all = bool(np.all(ok))
        return Value(lo, hi, span if span is not None and span.any() else None, None if ok_all else ok,
                     err if err is not None and err.any() else None)

    # -- expressions
    def expr(self, e: Expr) -> Value:
        if isinstance(e, Num):
            c = self._consts.get(e.value)
            if c is None:
                v = self._full(e.value)
                c = self._consts[e.value] = Value(v, v, None, None, None)
            return c
        if isinstance(e, Var):
            v = self._vars[e.name]
            return Value(v, v, None, None, None)
        if isinstance(e, Ref):
            return self.value(e.name)
        if isinstance(e, Neg):
            a = self.scalar(e.operand)
            v = -a.lo
            bad = self._range_err(v)
            return self._result(self._clean(v, bad), a.ok, a.err, bad)
        if isinstance(e, BinOp):
            return self._binop(e)
        if isinstance(e, Span):
            a = self.scalar(e.first)
            b = self.scalar(e.last)
            return Value(a.lo, b.lo, np.ones((), bool), both(a.ok, b.ok), either(a.err, within(a.ok, b.err)))
        raise TypeError(type(e))

    def scalar(self, e: Expr) -> Value:
        """A number: a column range where a number is needed is an error there."""
        v = self.expr(e)
        if v.span is None:
            return v
        bad = v.span if v.ok is None else (v.span & v.ok)
        if not bad.any():
            return Value(v.lo, v.lo, None, v.ok, v.err)
        return Value(v.lo, v.lo, None, both(v.ok, ~bad), either(v.err, bad))

    def _result(self, v: np.ndarray, ok: np.ndarray | None, err: np.ndarray | None,
                op_err: np.ndarray | None) -> Value:
        """Combine an operation's own failures (where its operands were fine) with theirs."""
        op_err = within(ok, op_err)
        if op_err is not None and op_err.any():
            err = either(err, op_err)
            ok = both(ok, ~op_err)
        return Value(v, v, None, ok, err)

    def _binop(self, e: BinOp) -> Value:
        a = self.scalar(e.left)
        b = self.scalar(e.right)
        # the right operand is evaluated only where the left one is defined
        err = either(a.err, within(a.ok, b.err))
        ok = both(a.ok, b.ok)
        x, y = a.lo, b.lo
        op = e.op
        op_err: np.ndarray | None = None
        # a constant right operand, the common case (``% 4``, ``>> 2``): its checks decided here
        const = e.right.value if isinstance(e.right, Num) else None
        if op in ("/", "%"):
            zero = (y == 0) if const is None or const == 0 else None
            if zero is not None and np.any(zero):
                op_err = np.asarray(zero, dtype=bool)
                y = np.where(zero, 1, y)
            if self.fast and (const > 0 if const is not None else np.ndim(y) == 0 and y > 0) and np.all(x >= 0):
                v = x // y if op == "/" else x % y  # non-negative by positive: C and floor agree
            else:
                q = np.abs(x) // np.abs(y)
                q = np.where((x >= 0) == (y >= 0), q, -q)
                v = q if op == "/" else x - y * q
        elif op in ("<<", ">>"):
            out = (y < 0) | (y > 63) if const is None or not 0 <= const <= 63 else None
            if out is not None and np.any(out):
                op_err = np.asarray(out, dtype=bool)
                y = np.where(out, 0, y)
            v = np.left_shift(x, y) if op == "<<" else np.right_shift(x, y)
        elif op == "+":
            v = x + y
        elif op == "-":
            v = x - y
        elif op == "*":
            v = x * y
        elif op == "&":
            v = x & y
        elif op == "|":
            v = x | y
        elif op == "^":
            v = x ^ y
        else:
            raise AssertionError(op)
        op_err = either(op_err, self._range_err(v))
        return self._result(self._clean(v, op_err), ok, err, op_err)

    # -- conditions: (truth, ok, err); truth is meaningful where ok
    def cond(self, c: Cond) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
        if isinstance(c, Compare):
            vals = []
            ok: np.ndarray | None = None
            err: np.ndarray | None = None
            for o in c.operands:  # eager, left to right: stops at the first undefined one
                v = self.scalar(o)
                err = either(err, within(ok, v.err))
                ok = both(ok, v.ok)
                vals.append(v.lo)
            truth: np.ndarray = np.ones((), bool)
            for op, x, y in zip(c.ops, vals, vals[1:]):
                truth = truth & np.asarray(_CMP[op](x, y), dtype=bool)
            return truth, ok, err
        if isinstance(c, InSet):
            v = self.scalar(c.operand)
            lo = np.asarray(v.lo)
            if (len(c.values) > 16 and lo.dtype == np.int64 and INT64_MIN <= min(c.values)
                    and max(c.values) <= INT64_MAX):  # a table's keys: one sorted lookup, not a test per value
                return np.isin(lo, np.asarray(c.values, dtype=np.int64)), v.ok, v.err
            truth = np.zeros((), bool)
            for value in c.values:  # small sets: equality tests broadcast where np.isin would flatten
                truth = truth | np.asarray(v.lo == value, dtype=bool)
            return truth, v.ok, v.err
        if isinstance(c, BoolOp):
            is_and = c.op == "and"
            reach: np.ndarray = np.ones((), bool)     # points that evaluate this operand
            decided: np.ndarray = np.zeros((), bool)  # short-circuited: a false (and) / a true (or)
            errs: np.ndarray = np.zeros((), bool)
            for part in c.operands:
                t, ok, e = self.cond(part)
                if e is not None:
                    errs = errs | (reach & e)
                good = reach if ok is None else (reach & ok)
                stop = good & (~t if is_and else t)
                decided = decided | stop
                reach = good & ~stop
            # ``reach`` now holds the points that passed every operand (all true / all false)
            truth = reach if is_and else decided
            okm = reach | decided
            return truth, (None if okm.all() else okm), (errs if errs.any() else None)
        raise TypeError(type(c))


def evaluate(formula: Formula, name: str, lane: np.ndarray, i: np.ndarray,
             env: Mapping[str, np.ndarray | int] | None = None) -> Value:
    """Definition ``name`` of ``formula`` at every point of the (lane, i) domain, broadcast to it."""
    return VectorEvaluator(formula, lane, i, env).full(name)
