"""The result of comparing a layout with a hardware observation (``check --observations``): a finding like the
checks' own, read by every renderer.  Whether it came from a GPU or a simulated device is part of it."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..witnesses import Witness, witness_json


@dataclass(frozen=True)
class HardwareResult:
    """One layout compared with one observation (a ``check`` finding: check = "hardware")."""

    layout: str
    instruction: str
    status: str  # "confirmed" | "contradicted" | "observed" (a map the doc leaves unspecified: wmma)
    message: str
    gpu: str
    simulated: bool
    violations: tuple[str, ...] = ()
    counterexample: Witness | None = None  # the relations an observation broke: a ``Facts`` witness (``as_witness``)
    observation: str = ""
    check: str = "hardware"
    expected: str = "confirmed"

    @property
    def as_expected(self) -> bool:
        return self.status == self.expected

    def to_json(self) -> dict[str, Any]:
        return {"layout": self.layout, "check": self.check, "status": self.status,
                "expected": self.expected, "as_expected": self.as_expected, "message": self.message,
                "counterexample": witness_json(self.counterexample), "instruction": self.instruction, "gpu": self.gpu,
                "simulated": self.simulated, "observation": self.observation,
                "violations": list(self.violations)}

    def text_line(self) -> str:
        tag = "SIMULATED " if self.simulated else ""
        mark = {"confirmed": "ok", "observed": "observed"}.get(self.status, "FAIL")
        head = f"{self.layout:44s} {tag}hardware:{mark}"
        if not self.as_expected:
            head += f"  <-- UNEXPECTED (expected {self.expected})"
        elif self.status == "contradicted":
            head += "  (known erratum)"
        return f"{head}  ({self.instruction} on {self.gpu})" + (f"\n    {self.message}" if self.status != "confirmed" else "")
