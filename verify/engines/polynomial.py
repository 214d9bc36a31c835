"""Exact polynomials over a run of a parameter: the symbolic engine of a family's count identities.

A family's extents (``N / 4`` registers, ``16 * N`` columns) are sums of products of one parameter, constants
and floors.  Over an arithmetic run of the parameter's values (``N = first + step * j``, j = 0, 1, ...) each
extent is a polynomial with rational coefficients in ``j`` and in *floor atoms*, the floors that are not
polynomials in j themselves (``floor(j / 4 + 1/2)``).  Two extents are equal on the whole run when their
difference is the zero polynomial: every atom is a function of j, so equal polynomials are equal values.

A floor is normalised before it becomes an atom: ``floor(p / c) = I + floor(R)`` where I takes the integer
part of every coefficient of ``p / c`` (an integer-coefficient polynomial in integers is an integer) and R the
fractional parts; a constant R (in [0, 1)) has floor 0, otherwise ``floor(R)`` is the atom, one per distinct
R.  So ``N / 8`` written twice is one atom and cancels, and ``(8 N + 4) / 8`` over ``N = 1 + j`` is ``1 + j``.

Plain ``Fraction`` arithmetic on sorted tuples: exact, deterministic, nothing to import (the computer algebra
system it replaced took a fifth of a second to import on every ``check``; ``tests/test_speed_equivalence.py``
holds this engine to it on generated identities).  What it does not decide (a divisor or shift that depends
on j) is ``None``: the caller then evaluates the run, never guesses.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Union

from ..formula import BinOp, Expr, Neg, Num, Var, render

# A monomial: sorted ((variable, power), ...), the variable "j" or a floor atom (a Poly, as a tuple);
# a Poly: sorted ((monomial, coefficient), ...) without zero coefficients; the zero polynomial is ``()``.
Monomial = tuple
Poly = tuple
Extent = Union[int, Expr]
J = "j"


def _make(terms: dict) -> Poly:
    return tuple(sorted(((m, c) for m, c in terms.items() if c != 0), key=_order))


def _order(item: tuple) -> str:
    return repr(item[0])  # a total, deterministic order of monomials (atoms are nested tuples)


def const(c: int | Fraction) -> Poly:
    return _make({(): Fraction(c)})


def var(name: object) -> Poly:
    return ((((name, 1),), Fraction(1)),)


def add(a: Poly, b: Poly) -> Poly:
    out = dict(a)
    for m, c in b:
        out[m] = out.get(m, Fraction(0)) + c
    return _make(out)


def scale(a: Poly, k: Fraction) -> Poly:
    return _make({m: c * k for m, c in a})


def _times(m1: Monomial, m2: Monomial) -> Monomial:
    powers = dict(m1)
    for v, p in m2:
        powers[v] = powers.get(v, 0) + p
    return tuple(sorted(powers.items(), key=repr))


def mul(a: Poly, b: Poly) -> Poly:
    out: dict = {}
    for m1, c1 in a:
        for m2, c2 in b:
            m = _times(m1, m2)
            out[m] = out.get(m, Fraction(0)) + c1 * c2
    return _make(out)


def constant_of(a: Poly) -> Fraction | None:
    """The value of a constant polynomial, else ``None``."""
    if not a:
        return Fraction(0)
    return a[0][1] if len(a) == 1 and a[0][0] == () else None


def floor_div(a: Poly, b: Poly) -> Poly | None:
    """``floor(a / b)`` for a non-zero constant ``b`` (``None`` for any other divisor)."""
    k = constant_of(b)
    if k is None or k == 0:
        return None
    whole, frac = {}, {}
    for m, c in a:
        c = c / k
        whole[m], frac[m] = Fraction(c.numerator // c.denominator), c - c.numerator // c.denominator
    rest = _make(frac)
    if constant_of(rest) is not None:  # a constant in [0, 1): its floor is 0
        return _make(whole)
    return add(_make(whole), var(rest))


def of_extent(x: Extent, param: str, first: int, step: int) -> Poly | None:
    """The extent as a polynomial over the run ``param = first + step * j`` (``/``, ``%`` and ``>>`` as floors,
    exact for the non-negative values extents take), or ``None`` where this engine does not decide it.
    ``ValueError`` for a variable other than ``param``."""
    if isinstance(x, int):
        return const(x)
    memo: dict[int, Poly | None] = {}
    stack: list[tuple[Expr, bool]] = [(x, False)]
    while stack:  # iterative post-order: no recursion on untrusted input
        node, visited = stack.pop()
        if isinstance(node, Num):
            memo[id(node)] = const(node.value)
        elif isinstance(node, Var):
            if node.name != param:
                raise ValueError(f"not an extent in {param}: {render(node)}")
            memo[id(node)] = add(const(first), scale(var(J), Fraction(step)))
        elif isinstance(node, Neg):
            if visited:
                a = memo[id(node.operand)]
                memo[id(node)] = None if a is None else scale(a, Fraction(-1))
            else:
                stack += [(node, True), (node.operand, False)]
        elif isinstance(node, BinOp):
            if visited:
                memo[id(node)] = _binop(node.op, memo[id(node.left)], memo[id(node.right)])
            else:
                stack += [(node, True), (node.left, False), (node.right, False)]
        else:
            raise ValueError(f"not an extent: {render(node)}")
    return memo[id(x)]


def _binop(op: str, a: Poly | None, b: Poly | None) -> Poly | None:
    if a is None or b is None:
        return None
    if op == "+":
        return add(a, b)
    if op == "-":
        return add(a, scale(b, Fraction(-1)))
    if op == "*":
        return mul(a, b)
    if op == "/":
        return floor_div(a, b)
    if op == "%":
        q = floor_div(a, b)
        return None if q is None else add(a, scale(mul(b, q), Fraction(-1)))
    if op in ("<<", ">>"):
        k = constant_of(b)
        if k is None or k.denominator != 1 or k < 0:
            return None  # a shift by an amount that depends on j (or a negative one)
        p = const(2 ** int(k))
        return mul(a, p) if op == "<<" else floor_div(a, p)
    raise ValueError(f"operator {op!r} is not supported in an extent")


def identity_on_run(lhs: Extent, rhs: Extent, param: str, first: int, step: int) -> bool | None:
    """``lhs == rhs`` as polynomials over the run ``param = first + step * j``: True (identical, so equal at
    every value), False (different polynomials: they may still agree at the run's few values), None
    (undecided)."""
    a, b = of_extent(lhs, param, first, step), of_extent(rhs, param, first, step)
    if a is None or b is None:
        return None
    return not add(a, scale(b, Fraction(-1)))


__all__ = ["Poly", "add", "const", "constant_of", "floor_div", "identity_on_run", "mul", "of_extent", "scale",
           "var"]
