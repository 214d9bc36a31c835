"""``ptx-verify crosscheck``'s result (``checks.crosscheck``): each trait operand of a reference against the spec,
worded by ``outputs.reports_text``."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..witnesses import Witness, as_witness, witness_json


KINDS = ("agree", "differ", "malformed", "unmatched")


@dataclass(frozen=True)
class Row:
    """One trait operand (or one unreadable trait) and its verdict."""

    kind: str          # agree | differ | malformed | unmatched
    trait: str
    operand: str       # A | B | C | D, "" for a whole trait
    header: str        # path relative to the root
    line: int
    spec: str = ""     # the layout id it was compared with
    status: str = ""   # conform's status
    detail: str = ""   # first difference, reason, or the reader's error
    counterexample: Witness | None = None
    layout: str = ""   # the CuTe layout, printed
    params: tuple[tuple[str, int], ...] = ()   # the family member compared (wgmma N, ldmatrix NUM), if any

    def __post_init__(self) -> None:
        object.__setattr__(self, "counterexample", as_witness(self.counterexample))

    def to_json(self) -> dict[str, Any]:
        out = {"kind": self.kind, "trait": self.trait, "operand": self.operand or None, "header": self.header,
               "line": self.line, "spec": self.spec or None, "status": self.status or None,
               "layout": self.layout or None, "detail": self.detail, "counterexample": witness_json(self.counterexample)}
        if self.params:
            out["params"] = dict(self.params)
        return out


@dataclass(frozen=True)
class CrosscheckReport:
    root: str
    headers: tuple[str, ...]
    rows: tuple[Row, ...]
    templated: dict[str, int]
    seconds: float = field(default=0.0, compare=False)
    reference: str = "cute-text"   # which reference produced the rows (``verify.checks.references``)
    title: str = "CuTe MMA_Traits"  # what was read, for the text's first line

    def count(self, kind: str) -> int:
        return sum(1 for r in self.rows if r.kind == kind)

    def exit_code(self) -> int:
        return 1 if self.count("differ") or self.count("malformed") else 0

    def summary(self) -> dict[str, int]:
        return {k: self.count(k) for k in KINDS} | {"templated": sum(self.templated.values())}

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"root": self.root, "headers": list(self.headers),
                                "summary": self.summary(), "rows": [r.to_json() for r in self.rows],
                                "templated": dict(self.templated)}
        if self.reference != "cute-text":
            body = {"reference": self.reference, **body}
        return {"schema": 1, "crosscheck": body}
