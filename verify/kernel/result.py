"""What ``ptx-verify kernel`` decides: a ``KernelResult`` (the verdict, the findings with their chains, both engines'
figures), immutable, with its JSON (keys in the contract's order) for ``--format json`` and the renderers."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .cells import OutputCells

NOTES = ("conversions (cvt) are the identity on the input elements: this verifies where every element goes and "
         "which products are summed (the layouts), not rounding or overflow",)


@dataclass(frozen=True)
class Link:
    """One step of a chain: an instruction, where it is (PTX line and column, the kernel's source line from .loc)
    and what it did."""

    opcode: str
    line: int
    col: int
    source: str
    words: str

    def text(self) -> str:
        where = f"{self.opcode.split('.')[0] if len(self.opcode) > 40 else self.opcode} at line {self.line}"
        src = f" [{self.source}]" if self.source else ""
        return f"{where}{src} {self.words}".rstrip()

    def to_json(self) -> dict[str, Any]:
        return {"opcode": self.opcode, "line": self.line, "column": self.col, "source": self.source or None,
                "words": self.words}


@dataclass(frozen=True)
class Finding:
    """A finding: ``kind`` (``wrong_element``, ``never_written``, ``written_twice``, ``global_out_of_bounds``,
    ``input_written``, ``unwritten_read``, ``read_in_flight``, ``race``, ``shared_out_of_bounds``,
    ``engines_disagree``; the asynchronous units': ``register_in_flight``, ``overwrite_in_flight``,
    ``wgmma_fence_missing``, ``proxy_fence_missing``, ``tma_misaligned``, ``barrier_reinitialised``,
    ``barrier_invalidated``, ``barrier_overarrived``, ``tmem_lane_quarter``, ``tmem_unallocated``,
    ``tmem_bad_dealloc``, ``tmem_not_freed``, ``tmem_alloc_after_relinquish``, ``tmem_store_in_flight``), the output
    element in the user's terms when there is one, words, the PTX position, how many such there are, and the chain
    that made it."""

    kind: str
    words: str
    element: str = ""
    line: int = 0
    col: int = 0
    source: str = ""
    count: int = 1
    chain: tuple[Link, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "element": self.element or None, "words": self.words,
                "line": self.line or None, "column": self.col or None, "source": self.source or None,
                "count": self.count, "chain": [c.to_json() for c in self.chain]}


@dataclass(frozen=True)
class KernelResult:
    """``status``: ``proved`` (every output element exactly its einsum sum, each product once, nothing else
    written, no finding), ``refuted`` (findings), or ``error`` (the two engines disagree).  ``cells``: what the
    verdict says of every output element (``verify.kernel.cells.OutputCells``: the kernel picture draws it); not in
    the JSON."""

    status: str
    ptx: str
    kernel: str
    launch: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    computes: str
    findings: tuple[Finding, ...]
    engines: dict[str, dict[str, Any]] = field(default_factory=dict)
    stats: dict[str, int] = field(default_factory=dict)
    notes: tuple[str, ...] = NOTES
    cells: "OutputCells | None" = field(default=None, compare=False, repr=False)  # every output element (pictures)

    @property
    def proved(self) -> bool:
        return self.status == "proved"

    def to_json(self) -> dict[str, Any]:
        return {"schema": 1, "status": self.status, "ptx": self.ptx, "kernel": self.kernel, "launch": self.launch,
                "grid": list(self.grid), "block": list(self.block), "computes": self.computes,
                "findings": [f.to_json() for f in self.findings], "engines": self.engines, "stats": self.stats,
                "notes": list(self.notes)}


__all__ = ["Finding", "KernelResult", "Link", "NOTES"]
