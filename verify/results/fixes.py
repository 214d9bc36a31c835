"""The constant-fix search's result (``checks.fixes``): one integer constant of a formula changed so that the
fragment is a bijection, shown by ``ptx-verify report``."""
from __future__ import annotations

from dataclasses import dataclass

from ..formula import Pos
from ..layout.model import Layout
from . import LayoutResult


MAX_DELTA = 8


@dataclass(frozen=True)
class ConstantFix:
    """One integer constant of the formula changed so that the fragment is a bijection."""

    definition: str  # the definition that holds the constant (row, col, groupID, ...)
    pos: Pos  # line/column in the formula text
    old: int
    new: int
    old_line: str  # the formula text line, before and after
    new_line: str
    formula_text: str  # the whole formula with the constant changed
    layout: Layout
    result: LayoutResult
    tried: int  # candidates evaluated before this one (the search is deterministic)
