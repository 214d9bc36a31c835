"""Layout families: one layout written over a named parameter (wgmma ``N``, tcgen05 ``.num``).

A family is proved once for every value of its parameter: Z3 gets the parameter as a free variable
constrained to its valid values (one query for all N), the enumeration engine checks every value,
and counts written in the parameter (``N/4`` registers, ``X = N/2 - 4``) are proved symbolically with
sympy.  Everything that needs a concrete layout (a table, a picture, a probe, an instruction check)
takes an *instance*: the family with the parameter bound.

* ``Param``: a name and its valid values, given as arithmetic progressions (``8..256 step 8``) or a
  list; ``runs()`` splits the values into maximal progressions, which is what sympy reasons over
  (``N = 8 + 8 j``, j integer).
* ``Extent``: an integer, or an expression over the parameters (the AST of ``N/2``).
* ``substitute``: a formula with the parameter replaced by a value (what an instance evaluates).

sympy expressions are built from the parsed AST here and never from strings (spec text is untrusted).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Mapping, Union

from ..engines import oracle
from ..formula import BinOp, Case, Definition, Expr, Formula, Neg, Num, Var, render, replace_node, walk

if TYPE_CHECKING:  # pragma: no cover
    import sympy

Extent = Union[int, Expr]
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
    return _extent_value(x, tuple(sorted(env.items())))


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
    return out  # type: ignore[no-any-return]


# id(formula) -> (formula, its Var nodes): a family's formula is substituted once per parameter value
_VARIABLES: dict[int, tuple[Formula, tuple[Var, ...]]] = {}


def clear_caches() -> None:
    """Forget the memoised instance pieces (``layout.model.clear_cells`` calls it: cold benchmark runs)."""
    _VARIABLES.clear()
    _extent_value.cache_clear()


def _variables(formula: Formula) -> tuple[Var, ...]:
    """The Var nodes of ``formula`` in walk order (memoised per formula object: the nodes are replaced
    by identity)."""
    hit = _VARIABLES.get(id(formula))
    if hit is None or hit[0] is not formula:
        if len(_VARIABLES) > 1 << 12:
            _VARIABLES.clear()
        nodes = (n for d in formula.definitions for n in walk(d))  # (``walk`` does not descend into a Formula)
        hit = _VARIABLES[id(formula)] = (formula, tuple(n for n in nodes if isinstance(n, Var)))
    return hit[1]


# ----------------------------------------------------------------------------- sympy

def preload_sympy() -> None:
    """Import sympy now (half a second): worker processes forked afterwards share it instead of each
    importing it again."""
    import sympy  # noqa: F401, PLC0415


def to_sympy(e: Expr, symbols: Mapping[str, "sympy.Symbol"]) -> "sympy.Expr":
    """The sympy form of an extent AST (``/`` is C division, exact floor for the non-negative values
    extents take; ``%`` likewise)."""
    import sympy  # noqa: PLC0415
    stack: list[tuple[Expr, bool]] = [(e, False)]
    done: dict[int, Any] = {}
    while stack:  # iterative post-order: extents are small, but no recursion on untrusted input
        node, visited = stack.pop()
        if isinstance(node, Num):
            done[id(node)] = sympy.Integer(node.value)
        elif isinstance(node, Var):
            done[id(node)] = symbols[node.name]
        elif isinstance(node, Neg):
            if visited:
                done[id(node)] = -done[id(node.operand)]
            else:
                stack += [(node, True), (node.operand, False)]
        elif isinstance(node, BinOp):
            if visited:
                a, b = done[id(node.left)], done[id(node.right)]
                done[id(node)] = _sympy_op(node.op, a, b)
            else:
                stack += [(node, True), (node.left, False), (node.right, False)]
        else:
            raise ValueError(f"not an extent: {render(node)}")
    return done[id(e)]


def _sympy_op(op: str, a: Any, b: Any) -> Any:
    import sympy  # noqa: PLC0415
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "/":
        return sympy.floor(a / b)
    if op == "%":
        return a - b * sympy.floor(a / b)
    if op == "<<":
        return a * 2**b
    if op == ">>":
        return sympy.floor(a / 2**b)
    raise ValueError(f"operator {op!r} is not supported in an extent")


def _nonzero_polynomial(d: "sympy.Expr", j: "sympy.Symbol") -> bool:
    """``d`` is an expanded polynomial in ``j`` with rational coefficients, so in canonical form: not 0
    means not identically 0, and ``sympy.simplify`` (whose first call imports sympy.physics, a tenth of a
    second) could only give an equal non-zero expression."""
    import sympy  # noqa: PLC0415
    if not d.is_polynomial(j):
        return False
    poly = sympy.Poly(d, j)
    return all(c.is_Rational for c in poly.all_coeffs()) and not poly.is_zero


@lru_cache(maxsize=4096)
def prove_identity(lhs: Expr | int, rhs: Expr | int, param: Param) -> tuple[str, dict[str, int] | None]:
    """sympy: ``lhs == rhs`` for every value of ``param``?  Reasoned per arithmetic run of the values
    (``N = first + step * j``, j a non-negative integer below the run's length): ``proved``; else
    ``refuted`` with the first value where the two sides differ (found by evaluating the run), or
    ``unknown`` when sympy cannot decide and no value differs."""
    import sympy  # noqa: PLC0415
    j = sympy.Symbol("j", integer=True, nonnegative=True)
    sym = sympy.Symbol(param.name, integer=True, positive=True)
    as_expr = (lambda x: sympy.Integer(x) if isinstance(x, int) else to_sympy(x, {param.name: sym}))
    diff = as_expr(lhs) - as_expr(rhs)
    undecided = False
    for first, step, count in param.runs():
        d = sympy.expand(diff.subs(sym, first + step * j))  # floors of integer expressions vanish already
        if d != 0 and not _nonzero_polynomial(d, j):
            d = sympy.simplify(d)
        if d == 0:
            continue
        for v in range(first, first + step * count, step):
            if extent_at(lhs, {param.name: v}) != extent_at(rhs, {param.name: v}):
                return "refuted", {param.name: v}
        undecided = True
    return ("unknown" if undecided else "proved"), None
