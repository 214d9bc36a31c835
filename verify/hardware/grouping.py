"""Which layouts form one instruction: the one place in ``verify.hardware`` that works it out.

``instruction_groups`` puts together the layouts of one instruction as the spec files state it: the same
spec file, the same instruction family and the same shape (an mma's A, B and C/D; a wgmma's A and D; the
variants of an ldmatrix; the selectors of a block-scaled mma).  Every probe kind starts from these groups.
Today the grouping reads the layouts' own fields; when the catalog declares each instruction once, this
module is what to replace by that declaration (nothing else in ``verify.hardware`` groups layouts).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from ..catalog.instructions import effective
from ..layout.model import Layout


def preferred(lays: Sequence[Layout]) -> list[Layout]:
    """One layout per base id: the corrected one when the spec has it (its registers and map are what the
    hardware is expected to do), else the doc's (``verify.catalog.instructions.effective``)."""
    return effective(lays)


@dataclass(frozen=True)
class InstructionGroup:
    """The layouts (doc and corrected) of one instruction: one spec file, family and shape."""

    family: str  # the PTX instruction family: "mma", "wgmma.sp", "ldmatrix", ...
    shape: str
    spec_path: str
    layouts: tuple[Layout, ...]

    def operand(self, name: str) -> list[Layout]:
        """The preferred layouts of one operand (``"A"``, ``"C"``, ``"R"``, ...), in id order."""
        return sorted((x for x in preferred(self.layouts) if x.operand == name), key=lambda x: x.doc_id)

    def tested(self, *chosen: Layout) -> tuple[Layout, ...]:
        """Every layout (doc and corrected) whose base id is one of ``chosen``'s, in id order: what a probe
        built from ``chosen`` tests."""
        bases = {x.doc_id for x in chosen}
        return tuple(sorted((x for x in self.layouts if x.doc_id in bases), key=lambda x: x.id))


def instruction_groups(layouts: Iterable[Layout]) -> list[InstructionGroup]:
    """The layouts grouped into instructions, in (spec file, family, shape) order."""
    by: dict[tuple[str, str, str], list[Layout]] = {}
    for lay in layouts:
        by.setdefault((lay.provenance.spec_path, lay.instruction, str(lay.shape)), []).append(lay)
    return [InstructionGroup(fam, shape, path, tuple(lays)) for (path, fam, shape), lays in sorted(by.items())]
