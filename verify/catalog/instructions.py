"""Instructions, declared once: which layouts of a spec form one instruction.

Like CuTe's ``MMA_Traits`` (the instruction is the unit, declared with the same fields in the same order),
an ``Instruction`` names its id, PTX name, shape, operands (in role order), threads, parameters and the
minimal architecture; the checks (``verify.checks.instruction``), the probes (``verify.hardware``), the
reports and SARIF read it from here and never work it out again.

Which layouts form an instruction depends on the instruction family, so each family registers one
grouping rule (``register``): ``mma``/``mma.sp`` (A x B x C over consistent types; a sparse A whose B the
doc gives only as a figure stands alone with its sparse checks), ``wgmma``/``wgmma.sp`` (A from registers
with each D its types allow; B comes from shared memory), ``tcgen05.ld``/``st`` (one register layout each).
A family without a rule (ldmatrix, stmatrix, movmatrix, wmma, block scaling) forms no instruction: its
layouts are checked one by one and through the relations.

Where the spec records a correction of a doc layout (``ID@corrected``), the instruction uses the correction
(``effective``): it is what the hardware does.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from ..layout.family import Param
from ..layout.corrections import prefer_corrections
from ..layout.ids import canonical_types
from ..layout.model import Layout, Spec
from ..layout.records import Shape
from ..layout.sparse import is_sparse
from ..layout.types import ACCUMULATOR_TYPES


@dataclass(frozen=True)
class Instruction:
    """One instruction: the same fields in the same order for every family.

    ``kind`` says which instruction checks apply (``mma``, ``sparse_a``, ``warpgroup``, ``tmem``);
    ``operands`` are in role order (A, B, C for mma; A, D for wgmma; R for tcgen05.ld/st)."""

    id: str
    name: str
    shape: Shape
    kind: str
    operands: tuple[Layout, ...]
    threads: int
    params: tuple[Param, ...]
    arch: str
    spec: Spec

    def operand(self, role: str) -> Layout:
        for lay in self.operands:
            if lay.operand == role:
                return lay
        raise KeyError(role)

    def doc_layout(self, lay: Layout) -> Layout | None:
        """The doc's own layout of ``lay`` (itself, or the layout ``lay`` corrects)."""
        return doc_layout(self.spec, lay)


def doc_layout(spec: Spec, lay: Layout) -> Layout | None:
    """The doc's own layout of ``lay`` in ``spec`` (itself, or the layout ``lay`` corrects)."""
    return next((x for x in spec.layouts if x.id == lay.doc_id), None)


def effective(layouts: Sequence[Layout]) -> list[Layout]:
    """Each layout, or its correction where the spec has one (in spec order)."""
    return prefer_corrections(layouts)


def accumulator_fits(a: Layout, c: Layout) -> bool:
    """C/D's types are an accumulator type A's types allow (``verify.layout.types.ACCUMULATOR_TYPES``)."""
    allowed: set[str] = set()
    for t in a.types:
        if t not in ACCUMULATOR_TYPES:
            return True
        allowed |= ACCUMULATOR_TYPES[t]
    return bool(allowed & set(c.types))


Grouping = Callable[[Spec], list[Instruction]]
_RULES: dict[str, Grouping] = {}


def register(*names: str) -> Callable[[Grouping], Grouping]:
    """Register the grouping rule of the instruction families ``names`` (a decorator)."""
    def add(rule: Grouping) -> Grouping:
        for n in names:
            _RULES[n] = rule
        return rule
    return add


def instructions(spec: Spec) -> list[Instruction]:
    """The instructions one spec declares, in a stable order (none for a family without a rule)."""
    rule = _RULES.get(spec.instruction)
    return rule(spec) if rule is not None else []


def _make(iid: str, spec: Spec, kind: str, ops: Sequence[Layout]) -> Instruction:
    fam = next((x for x in ops if x.is_family), None)
    return Instruction(iid, spec.instruction, spec.shape, kind, tuple(ops), max(x.threads for x in ops),
                       fam.domain.params if fam is not None else (), next((x.provenance.arch for x in ops if x.provenance.arch), ""), spec)


def _unique(items: list[tuple[str, Sequence[Layout]]]) -> list[tuple[str, Sequence[Layout]]]:
    """Ids made unique in order (a second ``X`` is ``X#2``)."""
    seen: dict[str, int] = {}
    out = []
    for iid, ops in items:
        n = seen.get(iid, 0)
        seen[iid] = n + 1
        out.append((iid if n == 0 else f"{iid}#{n + 1}", ops))
    return out


@register("mma", "mma.sp")
def _mma(spec: Spec) -> list[Instruction]:
    lays = effective(spec.layouts)
    As = [x for x in lays if x.operand == "A"]
    Bs = [x for x in lays if x.operand == "B"]
    Cs = [x for x in lays if x.operand == "C"]
    combos: list[tuple[str, Sequence[Layout]]] = []
    for a in As:
        for b in Bs:
            if not set(a.types) & set(b.types):
                continue
            for c in Cs:
                if not accumulator_fits(a, c):
                    continue
                parts = [spec.instruction, str(spec.shape), canonical_types(a.types)]
                if a.variant or b.variant:
                    parts += [a.variant or "-", b.variant or "-"]
                parts.append(canonical_types(c.types))
                combos.append((".".join(parts), (a, b, c)))
    out = [_make(iid, spec, "mma", ops) for iid, ops in _unique(combos)]
    # A sparse A whose B the doc gives only as a figure forms no instruction; its sparse semantics (chunks,
    # metadata, selector) are still checked, on their own.
    covered = {ins.operands[0].id for ins in out}
    out += [_make(f"{a.id}.sparse", spec, "sparse_a", (a,)) for a in As if is_sparse(a) and a.id not in covered]
    return out


@register("wgmma", "wgmma.sp")
def _warpgroup(spec: Spec) -> list[Instruction]:
    lays = effective(spec.layouts)
    out = []
    for a in (x for x in lays if x.operand == "A"):
        for d in (x for x in lays if x.operand == "D"):
            if accumulator_fits(a, d):
                iid = ".".join([spec.instruction, str(spec.shape), canonical_types(a.types), canonical_types(d.types)])
                out.append(_make(iid, spec, "warpgroup", (a, d)))
    return out


@register("tcgen05.ld", "tcgen05.st")
def _tmem(spec: Spec) -> list[Instruction]:
    return [_make(".".join([spec.instruction, str(spec.shape), canonical_types(lay.types)]), spec, "tmem", (lay,))
            for lay in effective(spec.layouts) if lay.operand == "R"]


__all__ = ["Instruction", "accumulator_fits", "doc_layout", "effective", "instructions", "register"]
