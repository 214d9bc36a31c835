"""``ptx-verify consistent``'s result (``checks.consistency``): a writer against a reader, each property's verdict,
worded by ``outputs.reports_text`` and drawn by ``outputs.svg_consistent``."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from ..layout.dims import Dim, extent_text
from ..witnesses import witness_json
from . import CheckResult


PROPERTIES = ("writer_in_range", "reader_in_range", "written_once", "same_place", "no_foreign_read", "no_padding_read")


STATUS_OF = {"same_place": "mismatch", "no_foreign_read": "mismatch", "reader_in_range": "out_of_range",
             "writer_in_range": "out_of_range", "written_once": "overwrite", "no_padding_read": "padding_read"}


STATUS_ORDER = ("mismatch", "out_of_range", "overwrite", "padding_read")


@dataclass(frozen=True)
class Decision:
    """Writer against reader: the status, and each property with its verdict and witness."""

    writer: str
    reader: str
    checks: tuple[CheckResult, ...]
    params: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    copies: tuple[Dim, ...] = ()      # the writer's inputs the reader lacks: each element is written at each
    broadcast: tuple[Dim, ...] = ()   # the reader's inputs the writer lacks, along which its reads are the same
    writer_map: Any = field(default=None, compare=False, repr=False)  # the maps decided (for the picture)
    reader_map: Any = field(default=None, compare=False, repr=False)

    @property
    def status(self) -> str:
        bad = [c for c in self.checks if c.status != "proved"]
        if any(c.status in ("unknown", "error") for c in bad):
            return next(c.status for c in bad if c.status in ("error", "unknown"))
        kinds = {STATUS_OF[c.check] for c in bad}
        return next((k for k in STATUS_ORDER if k in kinds), "consistent")

    @property
    def consistent(self) -> bool:
        return self.status == "consistent"

    def get(self, name: str) -> CheckResult:
        return next(c for c in self.checks if c.check == name)

    def to_json(self) -> dict[str, Any]:
        extra = {k: [{"name": d.name, "size": extent_text(d.size)} for d in v]
                 for k, v in (("copies", self.copies), ("broadcast", self.broadcast)) if v}
        return {"writer": self.writer, "reader": self.reader, "status": self.status,
                "params": {k: list(v) for k, v in self.params.items()}, **extra,
                "checks": {c.check: {"status": c.status, "engines": dict(c.engines), "message": c.message,
                                     "counterexample": witness_json(c.counterexample)} for c in self.checks}}
