"""Doc pages judged by what reviewed specs record, never by what the page says about itself.

A page's text is the thing under test: the errata ``ingest`` finds in it (a count that contradicts the
matrix, a formula that does not parse) must not become the expectations it is checked against, or every
new erratum would pass as "known".  So a page layout's expected verdicts come from the reviewed layout
of the same id (the bundled specs, or the specs given with ``--against``):

* a layout the reviewed specs record: its expectations (known errata stay known);
* a layout they do not record, or a correction ingest proposes that no reviewer made: every check
  expected to be proved;
* a doc formula that does not parse: expected only when the reviewed spec records that syntax erratum,
  with the same parse error (a formula broken in another way is a new erratum);
* an error in the text (a register count, a packing, an element list that contradicts the rest of the
  page): expected only when the reviewed layout of its row records an erratum of that check (expects its
  ``count``, ``packing`` or ``elements`` refuted, or a reviewer corrected those register facts); any
  other is a new erratum.

The maps themselves are compared by ``verify.checks.review`` (a page formula that still gives a
bijection, but another one, is a finding), which also reports the fragments that could not be built
and the reviewed layouts a page no longer states.
"""
from __future__ import annotations

import dataclasses
from typing import Sequence

from ..layout.model import UNPARSED, Layout, Spec
from ..layout.corrections import correction_of
from ..layout.ids import section_tag


# the register facts a correction of each check's erratum changes
_CORRECTION_FACTS = {"count": ("count", "elements_per_register", "elements_text"), "elements": ("elements_text",),
                     "packing": ("elements_per_register", "type", "element_bits")}  # of ``RegisterFacts``


@dataclasses.dataclass(frozen=True)
class Reviewed:
    """The reviewed record, by layout id."""

    layouts: dict[str, Layout]
    syntax: dict[str, str]  # id -> how the reviewed specs record its doc formula failing to parse
    sections: dict[str, tuple[str, ...]]  # reviewed spec path -> the ids of its doc layouts
    stating: dict[tuple[str, str, str], tuple[str, ...]] = dataclasses.field(default_factory=dict)
    # (instruction, shape, section tag) -> the ids of its doc layouts: what a section of that title states

    @staticmethod
    def of(specs: Sequence[Spec]) -> "Reviewed":
        layouts = {lay.id: lay for s in specs for lay in s.layouts}
        syntax = {f.layout: f.message for s in specs for f in s.syntax_findings}
        sections = {s.path: tuple(lay.id for lay in s.layouts if not lay.corrected)
                    + tuple(f.layout for f in s.syntax_findings) for s in specs}
        stating: dict[tuple[str, str, str], tuple[str, ...]] = {}
        for s in specs:
            key = (s.instruction, str(s.shape), section_tag(s.source.title))
            stating[key] = stating.get(key, ()) + sections[s.path]
        return Reviewed(layouts, syntax, sections, stating)

    def records(self, lid: str, check: str) -> bool:
        """An erratum of ``check`` in the text of layout ``lid`` is known: the reviewed layout expects that
        check refuted, or a reviewer corrected the register facts it is about (its correction states other
        ones)."""
        base, fixed = self.layouts.get(lid), correction_of(self.layouts, lid)
        if any(lay.expect.get(check) == "refuted" for lay in (base, fixed) if lay is not None):
            return True
        return base is not None and fixed is not None and any(
            getattr(base.regs, name) != getattr(fixed.regs, name) for name in _CORRECTION_FACTS.get(check, ()))

    def covering(self, ids: Sequence[str]) -> tuple[str, ...]:
        """The doc layouts of every reviewed spec that shares a layout with ``ids`` (what the page's
        section should state), in the reviewed specs' order."""
        mine = set(ids)
        out: list[str] = []
        for lids in self.sections.values():
            if mine & set(lids):
                out += [x for x in lids if x not in out]
        return tuple(out)


def apply(spec: Spec, reviewed: Reviewed) -> Spec:
    """A page's spec with the reviewed record's expectations, its reviewed counterparts and its coverage."""
    layouts = []
    counterparts = []
    for lay in spec.layouts:
        ref = reviewed.layouts.get(lay.id)
        layouts.append(dataclasses.replace(lay, expect=dict(ref.expect) if ref is not None else {}))
        if ref is not None:
            counterparts.append(ref)
    new = {lay.id: lay for lay in layouts}  # each doc layout holds its correction as reviewed here
    layouts = [dataclasses.replace(lay, correction=new.get(lay.correction.id, lay.correction))
               if lay.correction is not None else lay for lay in layouts]
    syntax = tuple(dataclasses.replace(f, expected="refuted" if reviewed.syntax.get(f.layout) == f.message else "proved")
                   for f in spec.syntax_findings)
    unbuilt = tuple(dataclasses.replace(u, expected="refuted" if _same_syntax(u.message, reviewed.syntax.get(u.layout))
                                        else "proved") for u in spec.unbuilt)
    errata = tuple(dataclasses.replace(t, expected="refuted" if reviewed.records(t.layout, t.check) else "proved")
                   for t in spec.text_errata)
    ids = [lay.id for lay in spec.layouts] + [f.layout for f in spec.syntax_findings] + [u.layout for u in unbuilt]
    covers = reviewed.covering(ids) if ids or errata else \
        reviewed.stating.get((spec.instruction, str(spec.shape), section_tag(spec.source.title)), ())  # an unread section
    return dataclasses.replace(spec, layouts=tuple(layouts), syntax_findings=syntax, reviewed=tuple(counterparts),
                               covers=covers, unbuilt=unbuilt, text_errata=errata)


def _same_syntax(unbuilt: str, recorded: str | None) -> bool:
    """An unbuilt fragment's parse error is the one the reviewed spec records (the message after the
    page's own prefix; a formula broken another way is a new erratum)."""
    return recorded is not None and unbuilt.removeprefix(UNPARSED) == recorded


__all__ = ["Reviewed", "apply"]
