"""Proofs: symbolic variables, a layout's cell and domain, and prove."""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import z3

from ..checks.fragment import DEFAULT_TIMEOUT
from ..checks.fragment import width as _layout_width
from ..engines import smt as _smt
from ..layout.model import z3_cell_of as _z3_cell_of
from ..layout.model import Layout
from .catalog import _timeout

if TYPE_CHECKING:
    pass


@dataclass(frozen=True)
class Proof:
    """Result of ``prove``: ``proved``, ``refuted`` (with a model), ``vacuous`` (the assumptions cannot
    all hold, so nothing is proved), ``may_overflow`` (some arithmetic operation can overflow its bit
    width, or divide by zero, under the assumptions: no verdict is given, ``message`` names the
    operation and ``counterexample`` the values) or ``unknown``."""

    status: str
    counterexample: dict[str, int] | None = None
    message: str = ""


And, Or, Implies, If, Not = z3.And, z3.Or, z3.Implies, z3.If, z3.Not


def variables(names: str, width: int = 64) -> list[z3.BitVecRef]:
    """Symbolic integers for proof scripts: ``lane, i = api.variables("lane i")``: signed 64-bit
    bit-vectors by default.  ``prove`` checks that no operation of the claim overflows, so a
    narrower ``width`` gives ``may_overflow`` rather than a wrong verdict; use one width for all."""
    if isinstance(width, bool) or not isinstance(width, int) or not 2 <= width <= 512:
        raise ValueError(f"width = {width!r} must be a number of bits from 2 to 512")
    return list(z3.BitVecs(names, width))


def _same_width(*terms: z3.ExprRef) -> int:
    widths = {t.size() for t in terms if isinstance(t, z3.BitVecRef)}
    if len(widths) > 1:
        raise ValueError(f"mixed bit widths {sorted(widths)}: make every variable with the same "
                         "api.variables(..., width=W)")
    return widths.pop() if widths else 64


def cell(lay: Layout, lane: z3.BitVecRef, i: z3.BitVecRef) -> tuple[z3.BoolRef, z3.ExprRef, z3.ExprRef]:
    """(defined, row, col) of element i of ``lane`` as Z3 terms (sparse A: compressed col)."""
    w = _same_width(lane, i)
    need = _layout_width(lay)
    if w < need:
        raise ValueError(f"{lay.id} needs bit-vectors of at least {need} bits; lane and i have {w}")
    return _z3_cell_of(lay, lane, i)


def domain(lay: Layout, lane: z3.BitVecRef, i: z3.BitVecRef) -> z3.BoolRef:
    """0 <= lane < threads and 0 <= i < elements."""
    _same_width(lane, i)
    return z3.And(lane >= 0, lane < lay.threads, i >= 0, i < lay.n_elements)


_GUARDS = {
    z3.Z3_OP_BADD: lambda a, b: [z3.BVAddNoOverflow(a, b, True), z3.BVAddNoUnderflow(a, b)],
    z3.Z3_OP_BSUB: lambda a, b: [z3.BVSubNoOverflow(a, b), z3.BVSubNoUnderflow(a, b, True)],
    z3.Z3_OP_BMUL: lambda a, b: [z3.BVMulNoOverflow(a, b, True), z3.BVMulNoUnderflow(a, b)],
    z3.Z3_OP_BSDIV: lambda a, b: [b != 0, z3.BVSDivNoOverflow(a, b)],
    z3.Z3_OP_BSREM: lambda a, b: [b != 0], z3.Z3_OP_BSMOD: lambda a, b: [b != 0],
    z3.Z3_OP_BUDIV: lambda a, b: [b != 0], z3.Z3_OP_BUREM: lambda a, b: [b != 0],
    z3.Z3_OP_BSHL: lambda a, b: [z3.ULT(b, a.size()), ((a << b) >> b) == a],
}
_DIVISIONS = {z3.Z3_OP_BSDIV, z3.Z3_OP_BSREM, z3.Z3_OP_BSMOD, z3.Z3_OP_BUDIV, z3.Z3_OP_BUREM}


_MAX_GUARD_VISITS = 200_000


def _guards(terms: Sequence[z3.ExprRef]) -> list[tuple[z3.BoolRef, z3.ExprRef, str]]:
    """(condition, operation, what) for every signed arithmetic operation below ``terms``: C's
    conditions for signed arithmetic (no wrap-around, no division by zero, shifts in range).  An
    operation inside a branch of an ``If`` is guarded only where that branch is taken (its path
    condition implies the guard); past ``_MAX_GUARD_VISITS`` (a DAG shared by very many paths) every
    operation is guarded unconditionally, which can only add ``may_overflow`` answers, never a wrong proof."""
    out: list[tuple[z3.BoolRef, z3.ExprRef, str]] = []
    true = z3.BoolVal(True)
    seen: set[tuple[int, int]] = set()
    stack: list[tuple[z3.ExprRef, z3.BoolRef]] = [(t, true) for t in terms]
    visits = 0
    while stack:
        t, path = stack.pop()
        if not z3.is_app(t) or (t.get_id(), path.get_id()) in seen:
            continue
        visits += 1
        if visits > _MAX_GUARD_VISITS and not z3.is_true(path):
            path = true
        seen.add((t.get_id(), path.get_id()))
        kids = [t.arg(k) for k in range(t.num_args())]
        kind = t.decl().kind()
        if kind == z3.Z3_OP_ITE:
            c = kids[0]
            stack += [(c, path), (kids[1], z3.And(path, c)), (kids[2], z3.And(path, z3.Not(c)))]
        else:
            stack.extend((k, path) for k in kids)
        guards: list[tuple[z3.BoolRef, str]] = []
        if kind == z3.Z3_OP_BNEG:
            guards = [(z3.BVSNegNoOverflow(kids[0]), "overflow")]
        elif kind in _GUARDS and len(kids) >= 2:
            acc = kids[0]
            for b in kids[1:]:  # n-ary terms fold left
                guards += [(g, "divide by zero" if k == 0 and kind in _DIVISIONS else "overflow")
                           for k, g in enumerate(_GUARDS[kind](acc, b))]
                acc = acc + b if kind == z3.Z3_OP_BADD else (acc * b if kind == z3.Z3_OP_BMUL else b)
        out.extend((g if z3.is_true(path) else z3.Implies(path, g), t, what) for g, what in guards)
    return out


def _model_values(m: z3.ModelRef) -> dict[str, int]:
    return {str(d): m[d].as_signed_long() for d in sorted(m.decls(), key=str) if isinstance(m[d], z3.BitVecNumRef)}


def prove(claim: z3.BoolRef, assuming: Sequence[z3.BoolRef] = (), timeout: float = DEFAULT_TIMEOUT) -> Proof:
    """Prove ``assuming => claim`` for all values of the free variables (Z3; unknown stays unknown).

    First, Z3 checks that the assumptions can hold at all: if no values satisfy them, the answer is
    ``vacuous`` (any claim would follow), never ``proved``.  Bit-vectors wrap around, integers do not:
    next, Z3 checks that under ``assuming`` no operation of the claim or the assumptions overflows its
    width (or divides by zero); if one can, the answer is ``may_overflow`` with the values, never a
    verdict that wrap-around made.  Solver work is bounded by the deterministic budget every check uses
    (``timeout`` seconds' worth of Z3 resource units, ``verify.engines.smt.Budget``), so ``unknown``
    does not depend on how busy the machine is.  Mixed bit widths are refused (``ValueError``), and so
    is anything but Z3 conditions (``TypeError``).
    """
    if not isinstance(claim, z3.BoolRef):
        raise TypeError(f"claim must be a Z3 condition over api.variables (such as lane < 32), not "
                        f"{type(claim).__name__}")
    if isinstance(assuming, (z3.ExprRef, str, bytes)) or not isinstance(assuming, Iterable):
        raise TypeError(f"assuming must be a list of Z3 conditions, not {type(assuming).__name__}")
    assuming = list(assuming)
    for k, a in enumerate(assuming):
        if not isinstance(a, z3.BoolRef):
            raise TypeError(f"assuming[{k}] must be a Z3 condition over api.variables, not {type(a).__name__}")
    budget = _smt.Budget(_timeout(timeout))
    terms = [claim, *assuming]
    consts: list[z3.ExprRef] = []
    for t in terms:
        stack, seen = [t], set()
        while stack:
            x = stack.pop()
            if x.get_id() in seen:
                continue
            seen.add(x.get_id())
            if z3.is_const(x) and x.decl().kind() == z3.Z3_OP_UNINTERPRETED:
                consts.append(x)
            stack.extend(x.arg(k) for k in range(x.num_args()) if z3.is_app(x))
    width = _same_width(*consts)
    if assuming:
        r, _ = _smt.solve(assuming, budget)
        if r == "unsat":
            wrap = (f"; their arithmetic can wrap around at {width} bits, which may be what makes them "
                    "contradict: use wider variables" if _guards(assuming) else "")
            return Proof("vacuous", None, "the assumptions cannot all hold (no values satisfy them), so any "
                                          f"claim would follow from them: nothing is proved{wrap}")
        if r == "unknown":
            return Proof("unknown", None, "Z3 could not decide whether the assumptions can hold within the budget")
    guards = _guards(terms)
    if guards:
        r, m = _smt.solve([*assuming, z3.Or([z3.Not(g) for g, _, _ in guards])], budget)
        if r == "sat":
            assert m is not None
            _, op, what = next((x for x in guards if z3.is_false(m.eval(x[0], model_completion=True))), guards[0])
            text = str(op)
            text = text if len(text) <= 120 else text[:117] + "..."
            return Proof("may_overflow", _model_values(m),
                         f"may {what}: {text} ({op.size() if isinstance(op, z3.BitVecRef) else '?'}-bit) under the "
                         "assumptions, so no verdict is given; use wider variables or bound them")
        if r != "unsat":
            return Proof("unknown", None, "Z3 could not decide whether the arithmetic may overflow")
    r, m = _smt.solve([*assuming, z3.Not(claim)], budget)
    if r == "unsat":
        return Proof("proved")
    if r == "sat":
        assert m is not None
        return Proof("refuted", _model_values(m))
    return Proof("unknown", None, "Z3 gave no answer within the budget; not reported as proved")
