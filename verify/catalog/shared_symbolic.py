"""The shared-memory page's symbolic CuTe layouts (``((8,m),(T,2k)):((1T,SBO),(1,LBO))``) read by a small grammar
of their own (never evaluated as Python) and turned into formula maps: a canonical layout as a family over the
page's ``T``, ``m`` and ``k``, one concrete member, a swizzle atom; ``pow2_rewrite`` gives Z3 a faster form of a
power-of-two product.
"""
from __future__ import annotations

import re
from typing import Any, Iterable, Sequence, cast

from ..formula import BinOp, Case, Definition, Expr, Formula, Num, Ref, Var
from ..layout.dims import Dim
from ..layout.family import Param
from ..layout.named import FormulaMap
from ..layout.shared import Swizzle, mode_offset, op, round_up, unit_swizzle_expr

REPEATS_M = (1, 2, 3)         # m: the repeats of the canonical layouts along M/N
REPEATS_K = (1, 2, 3, 4, 5)   # k: along K (far enough for the limit of every mode to show: 5 for 128B)


_SYM_TOKEN = re.compile(r"\s+|(?P<term>(?P<coef>\d{1,6})(?P<name>[A-Za-z][A-Za-z0-9_]{0,15})?|(?P<bare>[A-Za-z][A-Za-z0-9_]{0,15}))"
                        r"|(?P<p>[(),:])")


SYMBOLS = ("T", "m", "k", "LBO", "SBO")


PARAM_OF = {"m": Var("Rm"), "k": Var("Rk")}  # the page's m and k as family parameters (capitalised, as specs name them)


class SymError(ValueError):
    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.offset = offset


def _sym_terms(text: str) -> list[tuple[str, Any, int]]:
    out: list[tuple[str, Any, int]] = []
    k = 0
    while k < len(text):
        m = _SYM_TOKEN.match(text, k)
        if m is None or m.end() == k:
            raise SymError(f"unexpected {text[k]!r}", k)
        if m.group("p"):
            out.append(("p", m.group("p"), k))
        elif m.group("term"):
            coef, name = m.group("coef"), m.group("name") or m.group("bare")
            if name is not None and name not in SYMBOLS:
                raise SymError(f"unknown symbol {name!r} (the page's are {', '.join(SYMBOLS)})", k)
            c = int(coef) if coef else 1
            term: Any = c if name is None else (Var(name) if c == 1 else BinOp("*", Num(c), Var(name)))
            out.append(("t", term, k))
        k = m.end()
    out.append(("end", None, len(text)))
    return out


def parse_symbolic(text: str) -> tuple[list[tuple[Any, Any]], list[tuple[Any, Any]]]:
    """``((T,8,m),(8,k)):((1,T,LBO),(8T,SBO))`` -> the (shape, stride) leaves of the row mode and of the col
    mode (integers or expressions over the page's symbols).  ``SymError`` (with an offset) otherwise."""
    toks = _sym_terms(text)
    k = 0

    def tup(depth: int = 0) -> Any:
        nonlocal k
        t = toks[k]
        if t[0] == "t":
            k += 1
            return t[1]
        if t[0] == "p" and t[1] == "(":
            if depth > 4:
                raise SymError("nested too deep", t[2])
            k += 1
            items = [tup(depth + 1)]
            while toks[k][0] == "p" and toks[k][1] == ",":
                k += 1
                items.append(tup(depth + 1))
            if not (toks[k][0] == "p" and toks[k][1] == ")"):
                raise SymError("expected ',' or ')'", toks[k][2])
            k += 1
            return tuple(items)
        raise SymError("expected a term or '('", t[2])

    shape = tup()
    if not (toks[k][0] == "p" and toks[k][1] == ":"):
        raise SymError("expected ':' between shape and stride", toks[k][2])
    k += 1
    stride = tup()
    if toks[k][0] != "end":
        raise SymError("unexpected text after the layout", toks[k][2])
    if not (isinstance(shape, tuple) and isinstance(stride, tuple) and len(shape) == 2 and len(stride) == 2):
        raise SymError("a canonical layout has two modes (rows, columns)", 0)

    def leaves(s: Any, d: Any) -> list[tuple[Any, Any]]:
        if isinstance(s, tuple) != isinstance(d, tuple) or (isinstance(s, tuple) and len(s) != len(d)):
            raise SymError("shape and stride are not congruent", 0)
        if isinstance(s, tuple):
            out: list[tuple[Any, Any]] = []
            for a, b in zip(s, d):
                if isinstance(a, tuple):
                    raise SymError("nested deeper than a canonical layout", 0)
                out.append((a, b))
            return out
        return [(s, d)]

    return leaves(shape[0], stride[0]), leaves(shape[1], stride[1])


def _names(e: Any) -> set[str]:
    from ..formula import walk
    if isinstance(e, int):
        return set()
    return {n.name for n in walk(e) if isinstance(n, Var)}


def _subst(e: Any, env: dict[str, Any]) -> Any:
    if isinstance(e, int):
        return e
    if isinstance(e, Var):
        return env.get(e.name, e)
    if isinstance(e, BinOp):
        return op(_subst(e.left, env), e.op, _subst(e.right, env))
    return e


def _value(e: Any, env: dict[str, int]) -> int:
    from ..engines import oracle
    if isinstance(e, int):
        return e
    f = Formula((Definition("v", (Case(e, None),)),), "x")
    return int(cast(int, oracle.Evaluator(f, 0, 0, dict(env)).value("v")))  # ``e`` is a number, not a column range


def _product(items: Iterable[Any]) -> Any:
    out: Any = 1
    for x in items:
        out = out * x if isinstance(out, int) and isinstance(x, int) else op(out, "*", x)
    return out


def _cosize(leaves: Sequence[tuple[Any, Any]]) -> Any:
    out: Any = 1
    for s, d in leaves:
        out = op(out, "+", op(op(s, "-", 1), "*", d))
    return out


def canonical_family(row: list[tuple[Any, Any]], col: list[tuple[Any, Any]], swizzle: Swizzle, T_values: Sequence[int],
                     units: int, roles: dict[str, str | None]) -> tuple[FormulaMap, dict[str, Any]]:
    """A canonical layout of the page as a family over T, m, k: LBO and SBO at the dense values of their roles
    (``roles``, ``verify.layout.descriptor.stride_roles``: the field that steps along M/N is one atom, ``8 x
    units x T`` elements; the one that steps along K, ``m`` atoms; LBO where it is not used, 16 bytes, the
    "assumed 1"), whichever leaf the text puts the name on, so a text that swaps the names states another map;
    the swizzle on 16-byte units (a base aligned to its period)."""
    row = [(_subst(s_, PARAM_OF), _subst(d, PARAM_OF)) for s_, d in row]
    col = [(_subst(s_, PARAM_OF), _subst(d, PARAM_OF)) for s_, d in col]
    T, m = Var("T"), Var("Rm")
    atom = op(Num(8 * units), "*", T)
    value = {"MN": atom, "K": op(atom, "*", m), None: T}
    dense: dict[str, Any] = {}
    for s, d in row + col:
        if isinstance(d, Var) and d.name in ("LBO", "SBO"):
            dense[d.name] = value[roles.get(d.name)]
    row2 = [(s, _subst(d, dense)) for s, d in row]
    col2 = [(s, _subst(d, dense)) for s, d in col]
    for _, d in row2 + col2:
        left = _names(d) - {"T", "Rm", "Rk"}
        if left:
            raise SymError(f"stride {sorted(left)[0]} is neither LBO nor SBO on an m or k repeat", 0)
    lin = op(mode_offset(Var("row"), [s for s, _ in row2], [d for _, d in row2]),
             "+", mode_offset(Var("col"), [s for s, _ in col2], [d for _, d in col2]))
    body = unit_swizzle_expr(Ref("lin"), swizzle, T) if not swizzle.identity else Ref("lin")
    rows, cols = _product(s for s, _ in row2), _product(s for s, _ in col2)
    span = round_up(_cosize(row2 + col2), atom)
    f = _fast(Formula((Definition("lin", (Case(lin, None),)), Definition("offset", (Case(body, None),))), "x"),
              T_values)
    params = (Param("T", tuple(T_values)), Param("Rm", REPEATS_M), Param("Rk", REPEATS_K))
    fm = FormulaMap(f, (Dim("row", rows), Dim("col", cols)), (Dim("offset", span),),
                    definitions=(("offset", "offset"),), params=params)
    return fm, dense


def concrete_map(row_mode: Any, col_mode: Any, swizzle: Swizzle | None, T: int) -> FormulaMap:
    """A layout with integer modes, its address swizzle on 16-byte units (``T`` elements each; a base aligned
    to the swizzle's period), as one formula ``(row, col) -> offset``."""
    lin = op(mode_offset(Var("row"), *row_mode), "+", mode_offset(Var("col"), *col_mode))
    body = unit_swizzle_expr(Ref("lin"), swizzle, T) if swizzle is not None and not swizzle.identity else Ref("lin")
    rows, cols = _product(row_mode[0]), _product(col_mode[0])
    span = _value(round_up(_cosize(list(zip(*row_mode)) + list(zip(*col_mode))), swizzle.period * T // 16
                           if swizzle is not None and not swizzle.identity else 1), {})
    f = Formula((Definition("lin", (Case(lin, None),)), Definition("offset", (Case(body, None),))), "x")
    return FormulaMap(f, (Dim("row", rows), Dim("col", cols)), (Dim("offset", span),), definitions=(("offset", "offset"),))


def _fast(f: Formula, T_values: Sequence[int]) -> Formula:
    """``f`` with ``T`` (a power of two) as shifts by ``lt = log2(T)`` (``pow2_rewrite``)."""
    from ..formula import Compare
    lt = Definition("lt", tuple(Case(Num(t.bit_length() - 1), Compare(("==",), (Var("T"), Num(t)))) for t in T_values))
    defs = tuple(Definition(d.name, tuple(Case(pow2_rewrite(c.expr, "T", Ref("lt")), c.cond) for c in d.cases))
                 for d in f.definitions)
    return Formula((lt,) + defs, f.element_prefix)


def atom_family(major: str, mn_units: int, k_units: int, swizzle: Swizzle, T_values: Sequence[int]) -> FormulaMap:
    """A swizzle atom of ``mn_units x k_units`` 16-byte units as a family over T: M/N-major, M/N contiguous
    (``T x mn_units`` elements) with ``k_units`` rows along K; K-major, ``mn_units`` rows of ``T x k_units``
    elements.  Offsets in elements, swizzled on 16-byte units."""
    T = Var("T")
    rows: Expr | int
    cols: Expr | int
    if major == "MN":
        rows, cols = op(T, "*", mn_units), k_units
        lin = op(Var("row"), "+", op(Var("col"), "*", op(T, "*", mn_units)))
    else:
        rows, cols = mn_units, op(T, "*", k_units)
        lin = op(op(Var("row"), "*", op(T, "*", k_units)), "+", Var("col"))
    body = unit_swizzle_expr(Ref("lin"), swizzle, T) if not swizzle.identity else Ref("lin")
    f = _fast(Formula((Definition("lin", (Case(lin, None),)), Definition("offset", (Case(body, None),))), "x"),
              T_values)
    return FormulaMap(f, (Dim("row", rows), Dim("col", cols)), (Dim("offset", op(T, "*", mn_units * k_units)),),
                      definitions=(("offset", "offset"),), params=(Param("T", tuple(T_values)),))


def pow2_rewrite(e: Any, name: str, log: Any) -> Any:
    """``e`` with every product, quotient and remainder by the parameter ``name`` (a power of two whose
    base-2 logarithm is the expression ``log``) written as shifts and masks, so Z3 bit-blasts a barrel shift
    instead of a divider (exact for the non-negative values a layout computes)."""
    def coef(x: Any) -> tuple[int, bool] | None:
        """x as (integer, times `name`?) when it is a product of integers and at most one `name`."""
        if isinstance(x, int):
            return x, False
        if isinstance(x, Num):
            return x.value, False
        if isinstance(x, Var) and x.name == name:
            return 1, True
        if isinstance(x, BinOp) and x.op == "*":
            a, b = coef(x.left), coef(x.right)
            if a is not None and b is not None and not (a[1] and b[1]):
                return a[0] * b[0], a[1] or b[1]
        return None

    def shift(c: int) -> Any:
        return log if c == 1 else op(log, "+", c.bit_length() - 1)

    def go(x: Any) -> Any:
        if not isinstance(x, BinOp):
            return x
        a, b = go(x.left), go(x.right)
        if x.op in ("*", "/", "%"):
            cb = coef(x.right)
            ca = coef(x.left) if x.op == "*" else None
            if cb is not None and cb[1] and cb[0] > 0 and cb[0] & (cb[0] - 1) == 0:
                if x.op == "*":
                    return op(a, "<<", shift(cb[0]))
                if x.op == "/":
                    return op(a, ">>", shift(cb[0]))
                return op(a, "&", op(op(Num(1), "<<", shift(cb[0])), "-", 1))
            if ca is not None and ca[1] and ca[0] > 0 and ca[0] & (ca[0] - 1) == 0:
                return op(b, "<<", shift(ca[0]))
        return BinOp(x.op, a, b)

    return go(e)
