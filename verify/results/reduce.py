"""``ptx-verify reduce``'s result (``checks.reduce``): whether a shfl.xor butterfly reaches exactly the lanes that own
each row (or column), worded by ``outputs.text_results``."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from ..layout.model import Layout
from ..witnesses import Witness, witness_json
from . import CheckResult


def span(masks: Sequence[int]) -> tuple[int, ...]:
    """Every XOR of a subset of ``masks`` (the lanes a butterfly reaches are ``lane ^ x`` for these ``x``)."""
    out = {0}
    for m in masks:
        out |= {x ^ m for x in out}
    return tuple(sorted(out))


@dataclass(frozen=True)
class ReduceResult:
    layout: Layout
    axis: str
    masks: tuple[int, ...]
    status: str  # exact | inexact | unknown | error
    check: CheckResult
    owners: tuple[int, ...]  # how many lanes own a line, over every line (sorted, distinct)
    hint: tuple[int, ...] | None = None  # masks that reach exactly the owners (both engines), where the given do not
    seconds: float = field(default=0.0, compare=False)

    @property
    def counterexample(self) -> Witness | None:
        return self.check.counterexample

    @property
    def engines(self) -> dict[str, str]:
        return dict(self.check.engines)

    def exit_code(self, *_: Any) -> int:
        return 0 if self.status == "exact" else 1

    def to_json(self) -> dict[str, Any]:
        return {"schema": 1, "reduce": {
            "layout": self.layout.id,
            **({"params": dict(self.layout.params_bound)} if self.layout.params_bound else {}),
            "axis": self.axis, "masks": list(self.masks), "reach": list(span(self.masks)),
            "status": self.status, "owners_per_line": list(self.owners),
            "counterexample": witness_json(self.counterexample), "message": self.check.message,
            "hint": None if self.hint is None else list(self.hint), "engines": dict(self.check.engines)}}
