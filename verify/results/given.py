"""A given layout's own verdicts (``ptx-verify conform --given-check``): what ``checks.validity`` decides and
``outputs.given_check`` words."""
from __future__ import annotations

from dataclasses import dataclass

from ..layout.model import Layout
from . import CheckResult


PLAIN = ("in_range", "injective", "surjective")


@dataclass(frozen=True)
class Bit:
    """Input ``dim``'s bit ``bit`` (``lane`` bit 0), and whether it is broadcast (the check that says so)."""

    dim: str
    bit: int
    check: CheckResult

    @property
    def broadcast(self) -> bool:
        return self.check.status == "proved"

    def text(self) -> str:
        """``lane bit 0``, ``warp bit 1`` (a block's thread bit 6), ``element bit 2`` (a register bit)."""
        if self.dim == "thread":
            return f"lane bit {self.bit}" if self.bit < 5 else f"warp bit {self.bit - 5}"
        return f"{'element' if self.dim == 'i' else self.dim} bit {self.bit}"


@dataclass(frozen=True)
class GivenCheck:
    """A given layout's own verdicts: ``checks`` (in_range, injective, surjective, valid) and its input ``bits``."""

    layout: Layout
    checks: tuple[CheckResult, ...]
    bits: tuple[Bit, ...]

    def get(self, name: str) -> CheckResult:
        return next(c for c in self.checks if c.check == name)

    @property
    def broadcast(self) -> tuple[Bit, ...]:
        return tuple(b for b in self.bits if b.broadcast)

    @property
    def valid(self) -> bool:
        return self.get("valid").status == "proved"

    @property
    def bijective(self) -> bool:
        return all(self.get(n).status == "proved" for n in PLAIN)
