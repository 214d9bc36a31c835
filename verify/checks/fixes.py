"""Suggested corrections: the smallest change of one integer constant that makes a layout a bijection.

Used by reports for layouts whose spec records no correction.  Each candidate is screened by
enumeration and the first that passes is proved by both engines (``check_layout``), so a
suggestion is never a guess.

The search is bounded twice: by ``max_delta`` (at most ``MAX_DELTA_LIMIT``) and by a budget derived
from the solver budget ``timeout``, counted in work units (one candidate screened, plus its points
over ``POINTS_PER_UNIT``; a confirmation by both engines costs a quarter of the budget), never in
seconds, so where it stops does not depend on load.  A search that stops early says so
(``FixSearch.complete_to``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..engines import oracle
from ..formula import Formula, FormulaError, Num, Pos, parse_formula, replace_node, walk
from ..layout.model import Layout
from ..results.fixes import MAX_DELTA, ConstantFix
from ..layout.enumerate import decide
from .fragment import DEFAULT_TIMEOUT, BoundError, check_layout
from ..layout.model import cells_of

BIJECTION_CHECKS = ("in_range", "injective", "surjective")
MAX_DELTA_LIMIT = 64  # the largest --max-delta accepted (constants of real layouts are below 256)
UNITS_PER_SECOND = 500  # candidates screened per second of the solver budget (about 1 ms each, 2-core sandbox)
POINTS_PER_UNIT = 4096  # a candidate of more (lane, element) points costs one more unit per this many


def formula_constants(layout: Layout) -> list[tuple[str, Num]]:
    """Every integer literal of the formula, in definition order, pre-order within each."""
    return [(d.name, n) for d in layout.formula.definitions for n in walk(d) if isinstance(n, Num)]


_NUM_AT = re.compile(r"0[xX][0-9a-fA-F]+|0[bB][01]+|[0-9]+")


def patch_text(text: str, pos: Pos, new: int) -> tuple[str, str, str] | None:
    """The formula text with the literal at ``pos`` replaced: (text, old line, new line)."""
    lines = text.split("\n")
    if not (1 <= pos.line <= len(lines)):
        return None
    line = lines[pos.line - 1]
    m = _NUM_AT.match(line, pos.col - 1)
    if m is None:
        return None
    lit = m.group()
    rep = hex(new) if lit[:2].lower() == "0x" else bin(new) if lit[:2].lower() == "0b" else str(new)
    new_line = line[: m.start()] + rep + line[m.end():]
    lines[pos.line - 1] = new_line
    return "\n".join(lines), line, new_line


def quick_bijection(layout: Layout) -> bool:
    """Enumeration screen: every element inside, no cell twice, every cell held."""
    try:
        e = decide(cells_of(layout), layout.rows, layout.cols, layout.groups, layout.element_name)
    except (oracle.EvalError, BoundError, ArithmeticError, ValueError, TypeError):
        return False
    return e.in_range is None and e.injective is None and e.surjective is None


@dataclass(frozen=True)
class FixSearch:
    """What the search found, and how far it got: every change of size up to ``complete_to`` was tried
    (``max_delta`` unless the budget ran out first)."""

    fix: ConstantFix | None
    max_delta: int
    complete_to: int
    tried: int

    @property
    def stopped(self) -> bool:
        """The budget ran out before every change up to ``max_delta`` was tried."""
        return self.fix is None and self.complete_to < self.max_delta


def constant_fix(layout: Layout, timeout: float = DEFAULT_TIMEOUT, max_delta: int = MAX_DELTA) -> ConstantFix | None:
    """The smallest change to one integer constant that makes ``layout`` a bijection (``search_fix``'s fix)."""
    return search_fix(layout, timeout, max_delta).fix


def search_fix(layout: Layout, timeout: float = DEFAULT_TIMEOUT, max_delta: int = MAX_DELTA) -> FixSearch:
    """The smallest change to one integer constant that makes ``layout`` a bijection, and how far the search got.

    Candidates in a fixed order: |change| = 1, 2, ..., ``max_delta``; within one size,
    constants in formula order; +change before -change; negative values skipped.  Each
    candidate is screened by enumeration with early exit, and the first one that passes
    is confirmed by both engines (``check_layout``: Z3 and full enumeration agree that
    in_range, injective and surjective are proved).  No fix when no candidate works, or when
    the budget (see the module docstring) runs out first.
    """
    if not 0 <= max_delta <= MAX_DELTA_LIMIT:
        raise ValueError(f"max_delta {max_delta} is outside 0..{MAX_DELTA_LIMIT}")
    consts = formula_constants(layout)
    budget = int(UNITS_PER_SECOND * timeout)
    cost = 1 + (layout.threads * layout.max_elements) // POINTS_PER_UNIT
    confirm_cost = max(1, budget // 4)
    tried = 0
    for delta in range(1, max_delta + 1):
        for name, num in consts:
            for sign in (1, -1):
                value = num.value + sign * delta
                if value < 0:
                    continue
                if budget < cost:
                    return FixSearch(None, max_delta, delta - 1, tried)
                budget -= cost
                tried += 1
                new_formula = replace_node(layout.formula, num, Num(value, num.pos))
                assert isinstance(new_formula, Formula)  # a constant of it replaced: still a formula
                patched = patch_text(layout.provenance.formula_text, num.pos, value)
                text = patched[0] if patched else layout.provenance.formula_text
                cand = layout.with_formula(new_formula, text, id=f"{layout.id}#fix", expect={})
                if not quick_bijection(cand):
                    continue
                budget -= confirm_cost
                try:
                    res = check_layout(cand, timeout)
                except (oracle.EvalError, BoundError, ValueError):
                    continue
                if not all(res.get(c).status == "proved" for c in BIJECTION_CHECKS):
                    continue
                if patched is not None:
                    try:
                        same = parse_formula(patched[0], layout.formula.element_prefix) == new_formula
                    except FormulaError:
                        same = False
                    if not same:  # the text patch must say exactly what was proved
                        patched = None
                old_line = patched[1] if patched else ""
                new_line = patched[2] if patched else ""
                return FixSearch(ConstantFix(name, num.pos, num.value, value, old_line.strip(), new_line.strip(),
                                             text if patched else "", cand, res, tried - 1), max_delta, delta, tried)
    return FixSearch(None, max_delta, max_delta, tried)
