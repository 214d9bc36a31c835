"""Enumeration oracle: evaluate a formula AST at concrete (lane, i) with C semantics.

This is the second, independent engine.  It shares nothing with the SMT
encoding except the AST: plain Python integers, C's truncating ``/`` and ``%``,
arithmetic ``>>``.  Every intermediate value must fit in a signed 64-bit word,
so that the bit-vector encoding is exact on the same domain; a value outside it
is a ``EvalError`` (bad input), never a silent wrap-around.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

from ..formula import (BinOp, BoolOp, Compare, Cond, Expr, Formula, InSet, Neg, Num, Pos,
                      Ref, Span, Var)

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


class EvalError(ValueError):
    """A formula that is undefined at some point (division by zero, overflow)."""

    def __init__(self, message: str, pos: Pos) -> None:
        super().__init__(message)
        self.message = message
        self.pos = pos


class Undefined(Exception):
    """No case of a piecewise definition applies at this (lane, i)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def _check(v: int, pos: Pos) -> int:
    if v < INT64_MIN or v > INT64_MAX:
        raise EvalError(f"value {v} does not fit in 64 bits", pos)
    return v


def c_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def c_rem(a: int, b: int) -> int:
    return a - b * c_div(a, b)


def _binop(op: str, a: int, b: int, pos: Pos) -> int:
    if op == "+":
        v = a + b
    elif op == "-":
        v = a - b
    elif op == "*":
        v = a * b
    elif op in ("/", "%"):
        if b == 0:
            raise EvalError("division by zero", pos)
        v = c_div(a, b) if op == "/" else c_rem(a, b)
    elif op in ("<<", ">>"):
        if b < 0 or b > 63:
            raise EvalError(f"shift by {b} (must be 0..63)", pos)
        v = a << b if op == "<<" else a >> b
    elif op == "&":
        return a & b
    elif op == "|":
        return a | b
    elif op == "^":
        return a ^ b
    else:
        raise AssertionError(op)
    return v if INT64_MIN <= v <= INT64_MAX else _check(v, pos)


_CMP: dict[str, Callable[[int, int], bool]] = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
}


@dataclass
class Evaluator:
    """Evaluates the definitions of one formula at one point, memoising each name."""

    formula: Formula
    lane: int
    i: int
    env: Mapping[str, int] | None = None  # layout parameters (wgmma N)

    def __post_init__(self) -> None:
        self._memo: dict[str, int | tuple[int, int] | Undefined] = {}
        self._defs = {d.name: d for d in self.formula.definitions}

    def value(self, name: str) -> int | tuple[int, int]:
        if name not in self._memo:
            self._memo[name] = self._piecewise(name)
        v = self._memo[name]
        if isinstance(v, Undefined):
            raise v
        return v

    def _piecewise(self, name: str) -> int | tuple[int, int] | Undefined:
        for case in self._defs[name].cases:
            if case.cond is None or self.cond(case.cond):
                return self.expr(case.expr)
        return Undefined(name)

    def expr(self, e: Expr) -> int | tuple[int, int]:
        # ``type(e) is``: the checker narrows ``e`` to the node's class from it, and it is the fastest test
        if type(e) is BinOp:
            return _binop(e.op, self.scalar(e.left), self.scalar(e.right), e.pos)
        if type(e) is Num:
            return e.value
        if type(e) is Var:
            name = e.name
            if name == "lane":
                return self.lane
            if name == "i":
                return self.i
            if self.env is None or name not in self.env:
                raise EvalError(f"parameter {name!r} has no value here", e.pos)
            return self.env[name]
        if type(e) is Ref:
            return self.value(e.name)
        if type(e) is Neg:
            return _check(-self.scalar(e.operand), e.pos)
        if type(e) is Span:
            return (self.scalar(e.first), self.scalar(e.last))
        raise TypeError(type(e))

    def scalar(self, e: Expr) -> int:
        v = self.expr(e)
        if isinstance(v, tuple):
            raise EvalError("a column range used as a number", e.pos)
        return v

    def cond(self, c: Cond) -> bool:
        if type(c) is Compare:
            vals = [self.scalar(o) for o in c.operands]
            for op, a, b in zip(c.ops, vals, vals[1:]):
                if not _CMP[op](a, b):
                    return False
            return True
        if type(c) is InSet:
            return self.scalar(c.operand) in c.values
        if type(c) is BoolOp:
            if c.op == "and":
                return all(self.cond(o) for o in c.operands)
            return any(self.cond(o) for o in c.operands)
        raise TypeError(type(c))


def evaluate(formula: Formula, name: str, lane: int, i: int,
             env: Mapping[str, int] | None = None) -> int | tuple[int, int] | None:
    """Value of definition ``name`` at (lane, i); ``None`` when no case applies."""
    try:
        return Evaluator(formula, lane, i, env).value(name)
    except Undefined:
        return None
