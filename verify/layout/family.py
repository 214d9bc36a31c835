"""Layout families: one layout written over a named parameter (wgmma ``N``, tcgen05 ``.num``).

A family is proved once for every value of its parameter: Z3 gets the parameter as a free variable
constrained to its valid values (one query for all N), the enumeration engine checks every value,
and counts written in the parameter (``N/4`` registers, ``X = N/2 - 4``) are proved symbolically as
polynomials in the parameter (``engines.polynomial``).  Everything that needs a concrete layout (a table, a
picture, a probe, an instruction check) takes an *instance*: the family with the parameter bound.

* ``Param``: a name and its valid values, given as arithmetic progressions (``8..256 step 8``) or a
  list; ``runs()`` splits the values into maximal progressions, which is what the count identities reason
  over (``N = 8 + 8 j``, j integer).
* ``Extent``: an integer, or an expression over the parameters (the AST of ``N/2``).
* ``substitute``: a formula with the parameter replaced by a value (what an instance evaluates).

Polynomials are built from the parsed AST and never from strings (spec text is untrusted).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Mapping, Union

from ..engines import oracle, polynomial
from ..formula import BinOp, Case, Definition, Expr, Formula, Neg, Num, Ref, Span, Var, render, replace_node, walk
from .memo import held

Extent = Union[int, Expr]


def concrete(x: Extent) -> int:
    """``int(x)`` of an extent of a concrete layout; a ``TypeError`` (as ``int`` gives) for an expression over a
    family's parameters."""
    if isinstance(x, (Num, Var, Ref, BinOp, Neg, Span)):
        raise TypeError(f"int() argument must be a number, not '{type(x).__name__}': a family's extent: bind it")
    return int(x)


MAX_VALUES = 4096


@dataclass(frozen=True)
class Param:
    """A named parameter of a layout family and the values it may take (ascending, distinct)."""

    name: str
    values: tuple[int, ...]

    def runs(self) -> tuple[tuple[int, int, int], ...]:
        """The values as maximal arithmetic progressions (first, step, count), in order."""
        out: list[tuple[int, int, int]] = []
        vals = list(self.values)
        k = 0
        while k < len(vals):
            if k + 1 == len(vals):
                out.append((vals[k], 1, 1))
                break
            step = vals[k + 1] - vals[k]
            n = 2
            while k + n < len(vals) and vals[k + n] - vals[k + n - 1] == step:
                n += 1
            out.append((vals[k], step, n))
            k += n
        return tuple(out)

    def describe(self) -> str:
        return ", ".join(f"{a}" if n == 1 else f"{a}..{a + s * (n - 1)} step {s}" for a, s, n in self.runs())


def extent_text(x: Extent) -> str:
    """``24`` or ``N / 2`` (the expression as the spec writes it, canonically spaced)."""
    if isinstance(x, int):
        return str(x)
    return _text(x)


def _text(e: Expr) -> str:
    s = _render(e)
    return s[1:-1] if s.startswith("(") and s.endswith(")") else s


def _render(e: Expr) -> str:
    """An extent as text, parameters by name (``formula.render`` prints every other variable as ``i``)."""
    if isinstance(e, Var):
        return {"lane": "%laneid"}.get(e.name, e.name)
    if isinstance(e, BinOp):
        return f"({_render(e.left)} {e.op} {_render(e.right)})"
    if isinstance(e, Neg):
        return f"-{_render(e.operand)}"
    return render(e)


def extent_at(x: Extent, env: Mapping[str, int]) -> int:
    """The value of an extent for one binding of the parameters (C semantics, like every formula)."""
    if isinstance(x, int):
        return x
    key = tuple(sorted(env.items()))
    return held(x, "extent_at", key, lambda: _extent_value(x, key))  # on the expression: never hashed again


@lru_cache(maxsize=4096)
def _extent_value(x: Expr, env: tuple[tuple[str, int], ...]) -> int:
    """An extent's value at one binding (memoised: every layout of a section has the same extents, and each
    family instance asks for four; an evaluation error is raised each time, never stored)."""
    v = oracle.evaluate(Formula((Definition("value", (Case(x, None),)),), "x"), "value", 0, 0, dict(env))
    assert isinstance(v, int)
    return v


def is_symbolic(x: Any) -> bool:
    return not isinstance(x, int)


def substitute(formula: Formula, env: Mapping[str, "int | Expr"]) -> Formula:
    """The formula with every variable named in ``env`` replaced by its value (an instance's formula: a
    parameter by an integer) or by an expression (the lane of a group formula by ``lane % 32``).  The one
    rewriter of formula ASTs (``formula.replace_node`` underneath; untouched subtrees are shared)."""
    out: Any = formula
    for node in _variables(formula):
        if node.name in env:
            v = env[node.name]
            out = replace_node(out, node, Num(v, node.pos) if isinstance(v, int) else v)
    return out


def clear_caches() -> None:
    """Forget the memoised instance pieces (``layout.model.clear_cells`` calls it: cold benchmark runs)."""
    _extent_value.cache_clear()


def _variables(formula: Formula) -> tuple[Var, ...]:
    """The Var nodes of ``formula`` in walk order (memoised on the formula object: the nodes are replaced
    by identity; a family's formula is substituted once per parameter value)."""
    def build() -> tuple[Var, ...]:
        nodes = (n for d in formula.definitions for n in walk(d))  # (``walk`` does not descend into a Formula)
        return tuple(n for n in nodes if isinstance(n, Var))
    return held(formula, "_variables", None, build)


# ----------------------------------------------------------------------------- count identities

@lru_cache(maxsize=4096)
def prove_identity(lhs: Expr | int, rhs: Expr | int, param: Param) -> tuple[str, dict[str, int] | None]:
    """``lhs == rhs`` for every value of ``param``?  Reasoned per arithmetic run of the values (``N = first +
    step * j``, j a non-negative integer below the run's length) as polynomials in j
    (``engines.polynomial``): ``proved``; else ``refuted`` with the first value where the two sides differ
    (found by evaluating the run), or ``unknown`` when the polynomials do not decide and no value differs."""
    undecided = False
    for first, step, count in param.runs():
        if polynomial.identity_on_run(lhs, rhs, param.name, first, step):
            continue
        for v in range(first, first + step * count, step):
            if extent_at(lhs, {param.name: v}) != extent_at(rhs, {param.name: v}):
                return "refuted", {param.name: v}
        undecided = True
    return ("unknown" if undecided else "proved"), None
