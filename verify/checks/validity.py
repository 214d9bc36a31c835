"""A given layout on its own: plain bijectivity, and Triton's rule for a legal layout, each decided by both engines.

A Triton linear layout is legal when it is a bijection once its zero bases are removed: a zero basis (a lane or
register bit that moves no element: broadcast, the same cell held by several threads) is fine, a nonzero basis
given twice is not.  Plain bijectivity (``in_range``, ``injective``, ``surjective``) calls both "injective
refuted".  ``valid`` is that rule for a layout in any notation, over the bits of its inputs:

* an input bit is **broadcast** when flipping it never moves any point's cell (nor makes one defined or
  undefined): ``maps.same(m, m o flip_bit)``, both engines, one query per bit.  Only the bits a flip keeps inside
  the input's extent are asked (the low bits of an extent's power-of-two factor: all of them for Triton's
  extents); for a linear layout a bit is broadcast exactly when its basis is zero;
* the layout is **valid** when the map restricted to the points whose broadcast bits are all 0 (a map of the
  remaining bits, ``compose(m, deposit)``) is in range, injective and surjective: ``maps.bijective``, both
  engines.  Its witnesses are read back to the layout's own (thread, element) before they are shown.

``check_given`` returns the plain checks (``family.check_any``, the fragment checks of ``check``) and ``valid``
with the broadcast bits.
"""
from __future__ import annotations

import dataclasses
import time
from typing import Any, Mapping

from ..formula import BinOp, Case, Definition, Expr, Formula, Num, Var
from ..layout.algebra import compose
from ..layout.dims import Dim
from ..layout.model import Layout
from ..layout.named import FormulaMap
from ..layout.family import concrete
from ..results import CheckResult
from ..results.given import PLAIN, Bit, GivenCheck
from ..witnesses import OutputUnreached, PointOutside, PointsCollide
from .family import check_any
from .fragment import DEFAULT_TIMEOUT
from .maps import bijective, same

class ValidityError(ValueError):
    """A layout this check does not take (a family: one member at a time)."""


def _bit(x: Expr, b: int) -> Expr:
    return BinOp("&", x if b == 0 else BinOp(">>", x, Num(b)), Num(1))


def _flip(inputs: tuple[Dim, ...], dim: str, bit: int) -> FormulaMap:
    """``inputs -> inputs``: ``dim`` with bit ``bit`` flipped, the others as they are."""
    defs = tuple(Definition(f"out_{d.name}", (Case(BinOp("^", Var(d.name), Num(1 << bit)) if d.name == dim
                                                    else Var(d.name), None),)) for d in inputs)
    return FormulaMap(Formula(defs, "x"), inputs, inputs, definitions=tuple((d.name, f"out_{d.name}") for d in inputs))


def _candidates(size: int) -> int:
    """The low bits a flip keeps inside ``0 .. size - 1``: the exponent of ``size``'s power-of-two factor."""
    return (size & -size).bit_length() - 1


def _deposit(inputs: tuple[Dim, ...], broadcast: Mapping[str, tuple[int, ...]]) -> tuple[FormulaMap, dict]:
    """``compact -> inputs``: each input's kept bits packed low to high (a broadcast bit is 0), the bits above its
    candidates as they are.  Also the compact point -> original point function, for witnesses."""
    dims, defs, plan = [], [], {}
    for d in inputs:
        size = concrete(d.size)
        low = _candidates(size)
        gone = broadcast.get(d.name, ())
        kept = [b for b in range(low) if b not in gone]
        dims.append(Dim(d.name, size >> len(gone)))
        x = Var(d.name)
        expr: Expr = BinOp("<<", BinOp(">>", x, Num(len(kept))), Num(low)) if size >> low > 1 else Num(0)
        for k, b in enumerate(kept):
            term = BinOp("<<", _bit(x, k), Num(b)) if b else _bit(x, k)
            expr = term if isinstance(expr, Num) and expr.value == 0 else BinOp("|", expr, term)
        defs.append(Definition(f"out_{d.name}", (Case(expr, None),)))
        plan[d.name] = (low, kept)
    m = FormulaMap(Formula(tuple(defs), "x"), tuple(dims), inputs,
                   definitions=tuple((d.name, f"out_{d.name}") for d in inputs))
    return m, plan


def _original(plan: Mapping[str, tuple[int, list[int]]], point: Mapping[str, int]) -> dict[str, int]:
    out = {}
    for name, v in point.items():
        low, kept = plan[name]
        x = (v >> len(kept)) << low
        for k, b in enumerate(kept):
            x |= ((v >> k) & 1) << b
        out[name] = x
    return out


def _words(lay: Layout, thread: str, p: Mapping[str, int]) -> str:
    return f"{thread} {p[thread]} element {lay.element_name(p['i'])}"


def _cell(at: Mapping[str, int] | None) -> str:
    return "undefined" if at is None else "(" + ", ".join(str(v) for k, v in at.items() if k != "mma") + ")"


def _translated(lay: Layout, thread: str, plan: Mapping[str, Any], c: CheckResult) -> tuple[Any, str]:
    """The witness of a check of the reduced map in the layout's own (thread, element), with its words."""
    w = c.counterexample
    if isinstance(w, PointsCollide):
        a, b = _original(plan, w.first), _original(plan, w.second)
        return (dataclasses.replace(w, first=a, second=b),
                f"{_words(lay, thread, a)} and {_words(lay, thread, b)} both land at cell {_cell(w.at)}")
    if isinstance(w, PointOutside):
        a = _original(plan, w.point)
        where = "is undefined" if w.at is None else f"lands at cell {_cell(w.at)}, outside the {lay.rows} x {lay.cols} tile"
        return dataclasses.replace(w, point=a), f"{_words(lay, thread, a)} {where}"
    if isinstance(w, OutputUnreached):
        return w, f"cell {_cell(w.at)} is held by no {thread}"
    return w, c.message


def check_given(lay: Layout, timeout: float = DEFAULT_TIMEOUT) -> GivenCheck:
    """The plain checks and ``valid`` (module docstring) of a layout that is not a family."""
    if lay.params:
        raise ValidityError(f"{lay.id} is a family ({', '.join(p.name for p in lay.params)}): give --param to "
                            "check one member")
    t0 = time.perf_counter()
    own = check_any(lay, timeout)
    plain = tuple(own.get(n) for n in PLAIN)
    m = lay.map
    thread = m.thread
    bits = tuple(Bit(d.name, b, same(m, compose(m, _flip(m.inputs, d.name, b)), timeout, ("the layout", "flipped"),
                                     check="broadcast"))
                 for d in m.inputs for b in range(_candidates(int(d.size))))
    undecided = [b for b in bits if b.check.status not in ("proved", "refuted")]
    if undecided:
        u = undecided[0].check
        valid = CheckResult("valid", u.status, "proved", u.counterexample,
                            f"whether {undecided[0].text()} is broadcast is {u.status}: {u.message}",
                            time.perf_counter() - t0, dict(u.engines))
        return GivenCheck(lay, plain + (valid,), bits)
    gone: dict[str, tuple[int, ...]] = {}
    for b in bits:
        if b.broadcast:
            gone[b.dim] = gone.get(b.dim, ()) + (b.bit,)
    deposit, plan = _deposit(m.inputs, gone)
    reduced = compose(m, deposit)
    results = bijective(reduced, timeout)
    removed = ", ".join(b.text() for b in bits if b.broadcast) or "none"
    bad = next((r for r in results if r.status != "proved"), None)
    engines = {"z3": "proved", "enumeration": "proved"} if bad is None else dict(bad.engines)
    if bad is None:
        valid = CheckResult("valid", "proved", "proved", None,
                            f"bijective once the broadcast bits are removed ({removed}): Triton's rule",
                            time.perf_counter() - t0, engines)
    else:
        cex, words = _translated(lay, thread, plan, bad)
        status = bad.status
        valid = CheckResult("valid", status, "proved", cex,
                            f"with the broadcast bits removed ({removed}), not {bad.check}: {words}"
                            if status == "refuted" else bad.message, time.perf_counter() - t0, engines)
    return GivenCheck(lay, plain + (valid,), bits)


__all__ = ["Bit", "GivenCheck", "ValidityError", "check_given"]
