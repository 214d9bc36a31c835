"""Layouts given by a formula: the doc's pseudo-code, and every notation imported into it.

``FormulaMap`` evaluates the definitions ``row`` and ``col`` of a formula AST: over the whole
domain with ``verify.engines.vector``, at one point with ``verify.engines.oracle``, and
symbolically with ``verify.engines.smt``.  The three share nothing but the AST.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Hashable, Mapping

import numpy as np

from ..engines import oracle, smt, vector
from ..formula import Formula
from ..formula.bounds import value_bound
from .elements import MAX_ELEMENTS
from .model import Cells, Domain, Env

# Z3 terms of one formula at one symbolic point, shared by every check that asks (building Z3 terms
# from Python is most of a check's cost); keyed by the variables' AST ids.
_Z3_CELL: dict[tuple, tuple] = {}

if TYPE_CHECKING:  # pragma: no cover
    import z3


@dataclass(frozen=True)
class FormulaMap:
    """(thread, i) -> (row, col) by the definitions ``row`` and ``col`` of ``formula``."""

    formula: Formula
    notation: str = "formula"

    def key(self) -> Hashable:
        return self.formula

    def bound(self, domain: Domain) -> int:
        env_max = {p.name: max(p.values) for p in domain.params}
        i_max = domain.elements - 1 if isinstance(domain.elements, int) else MAX_ELEMENTS
        return value_bound(self.formula, domain.threads - 1, i_max, env_max)

    def point(self, thread: int, i: int) -> tuple[int, int] | None:
        """(row, col), or None where no case applies; a column range here is an error."""
        ev = oracle.Evaluator(self.formula, thread, i)
        try:
            r, c = ev.value("row"), ev.value("col")
        except oracle.Undefined:
            return None
        if isinstance(r, tuple) or isinstance(c, tuple):
            raise oracle.EvalError("a column range where a single cell is needed", self.formula.get("col").pos)
        return r, c

    def cells(self, domain: Domain, env: Env | None = None) -> Cells:
        ev = vector.VectorEvaluator(self.formula, np.arange(domain.threads)[:, None],
                                    np.arange(domain.elements)[None, :], env)
        r, c = ev.full("row"), ev.full("col")
        shape = (domain.threads, domain.elements)
        # the oracle evaluates row, then col (only where row is defined), then rejects ranges
        err = vector.either(r.err, vector.within(r.ok, c.err))
        ok = vector.both(r.ok, c.ok)
        for v in (r, c):
            if v.span is not None:
                err = vector.either(err, vector.within(ok, v.span))
        try:
            group = domain.group_array()
        except oracle.EvalError:
            group = None
        if group is None or (err is not None and err.any()):
            self._raise_first_error(domain)  # the oracle names the first failing point exactly
        okm = np.ones(shape, bool) if ok is None else np.ascontiguousarray(ok, bool)
        return Cells(np.ascontiguousarray(r.lo, np.int64), np.ascontiguousarray(c.lo, np.int64), okm, group)  # type: ignore[arg-type]

    def _raise_first_error(self, domain: Domain) -> None:
        for lane in range(domain.threads):
            domain.group_of(lane)
            for i in range(domain.elements):
                self.point(lane, i)
        raise AssertionError("the vectorised engine reported an error that the oracle does not find")

    def z3_cell(self, thread: "z3.BitVecRef", i: "z3.BitVecRef",
                env: Mapping[str, "z3.ExprRef"] | None = None) -> tuple["z3.BoolRef", "z3.ExprRef", "z3.ExprRef"]:
        key = (self.formula, thread.get_id(), i.get_id(), tuple(sorted((k, v.get_id()) for k, v in (env or {}).items())))
        hit = _Z3_CELL.get(key)
        if hit is None:  # the entry keeps the variables alive, so their ids are never reused
            if len(_Z3_CELL) > 1 << 12:
                _Z3_CELL.clear()
            enc = smt.Encoder(self.formula, thread, i, env)
            r, c = enc.definition("row"), enc.definition("col")
            hit = _Z3_CELL[key] = ((thread, i, env), (smt.conj(r.ok, c.ok), r.value, c.value))
        return hit[1]  # type: ignore[return-value]
