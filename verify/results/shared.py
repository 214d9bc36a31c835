"""Shared-memory results: bank conflicts of an access (``checks.banks``) and a wgmma/tcgen05 descriptor derived or
checked against a layout (``checks.descriptor``), worded by ``outputs.shared_text``."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from ..layout.descriptor import Descriptor
from ..layout.smem_access import Access
from . import CheckResult


@dataclass(frozen=True)
class BanksResult:
    access: Access
    checks: tuple[CheckResult, ...]
    degree: int
    worst: Mapping[str, Any] | None       # the worst group: params, origin, group, bank, lanes, words
    wavefronts: int                        # at the worst placement, all groups
    ideal: int                             # wavefronts without conflicts
    placements: int

    def get(self, name: str) -> CheckResult:
        return next(c for c in self.checks if c.check == name)

    @property
    def ok(self) -> bool:
        return all(c.status == "proved" for c in self.checks)

    def to_json(self) -> dict[str, Any]:
        return {"access": self.access.text, "bytes": self.access.bytes, "lanes": self.access.lanes,
                "group": self.access.group, "placements": self.placements, "degree": self.degree,
                "wavefronts": self.wavefronts, "ideal_wavefronts": self.ideal, "worst": self.worst,
                "checks": {c.check: c.to_json() for c in self.checks}}


@dataclass(frozen=True)
class DescriptorResult:
    """``status``: ``found`` (``descriptor`` reads the layout), ``none`` (no descriptor does: ``reasons``),
    ``reads`` / ``differs`` (a given descriptor against the layout: ``check`` has the first cell)."""

    status: str
    instr: str
    major: str | None
    descriptor: Descriptor | None
    advances: tuple[int, ...]
    reasons: tuple[str, ...] = ()
    check: CheckResult | None = None
    tile: tuple[int, int] = (0, 0)
    k_block: int = 0
    tried: tuple[tuple[str, str], ...] = field(default=())

    @property
    def ok(self) -> bool:
        return self.status in ("found", "reads")

    def to_json(self) -> dict[str, Any]:
        d = self.descriptor
        return {
            "status": self.status, "instruction": self.instr, "major": self.major,
            "tile": {"rows": self.tile[0], "cols": self.tile[1]}, "k_block": self.k_block,
            "descriptor": None if d is None else {
                "value": f"{d.encode():#018x}", "start": d.start, "lbo": d.lbo, "sbo": d.sbo,
                "base_offset": d.base_offset, "swizzle": d.mode.name, "fields": d.fields()},
            "advances": list(self.advances), "reasons": list(self.reasons),
            "check": None if self.check is None else self.check.to_json(),
        }


def first_cell(res: DescriptorResult) -> Mapping[str, Any] | None:
    """The first (row, col) the descriptor reads from the wrong place, from the check's witness."""
    if res.check is None or res.check.counterexample is None:
        return None
    cex = res.check.counterexample
    return {"row": cex["point"]["row"], "col": cex["point"]["col"], "layout": cex.get("layout"),
            "descriptor": cex.get("descriptor")}
