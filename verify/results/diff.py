"""``ptx-verify diff``'s result (``checks.diff``): two sets of layouts (spec files or releases' doc pages) compared,
their sections paired, worded by ``outputs.reports_text``."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..witnesses import Witness, as_witness, witness_json


@dataclass(frozen=True)
class Named:
    """A section as a release states it: its number, title and anchor ("" where the page gives none)."""

    number: str
    title: str
    anchor: str = ""


@dataclass(frozen=True)
class Change:
    """One layout present in both sets whose map or register facts differ."""

    layout: str
    what: tuple[str, ...]  # "map", "registers", "elements", "register_type", ...
    message: str
    counterexample: Witness | None = None
    engines: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "counterexample", as_witness(self.counterexample))


@dataclass(frozen=True)
class DiffResult:
    added: tuple[str, ...]
    removed: tuple[str, ...]
    changed: tuple[Change, ...]
    unchanged: tuple[str, ...]
    errata_added: tuple[str, ...] = ()  # new in NEW
    errata_removed: tuple[str, ...] = ()  # fixed: OLD's, not in NEW
    undecided: tuple[Change, ...] = ()  # the engines could not decide (unknown, or they disagree)
    outside: tuple[str, ...] = ()  # spec-file layouts no doc page states, against pages: not compared
    outside_instructions: tuple[str, ...] = ()  # their instructions
    errata_compared: bool = True  # False when one side is spec files (they record no text)
    errata_persisting: tuple[str, ...] = ()  # in both (as NEW states them)
    sections: "SectionChanges | None" = None  # both sides doc pages: their sections paired
    releases: tuple[str, str] = ("", "")  # the releases the two sides' pages state ("" for spec files)

    @property
    def differs(self) -> bool:
        """A layout or an erratum differs (sections renumbered, retitled, added or removed are listed, not a
        difference in meaning)."""
        return bool(self.added or self.removed or self.changed or self.errata_added or self.errata_removed
                    or self.undecided)

    def to_json(self) -> dict[str, Any]:
        return {"schema": 1, "differs": self.differs, "releases": {"old": self.releases[0], "new": self.releases[1]},
                "added": list(self.added), "removed": list(self.removed),
                "changed": [{"layout": c.layout, "what": list(c.what), "message": c.message,
                             "counterexample": witness_json(c.counterexample), "engines": c.engines} for c in self.changed],
                "undecided": [{"layout": c.layout, "message": c.message, "engines": c.engines} for c in self.undecided],
                "unchanged": list(self.unchanged), "errata_added": list(self.errata_added),
                "errata_removed": list(self.errata_removed), "errata_persisting": list(self.errata_persisting),
                "outside": list(self.outside), "errata_compared": self.errata_compared,
                "sections": self.sections.to_json() if self.sections is not None else None}


@dataclass(frozen=True)
class SectionChanges:
    """The sections of two releases paired by what they say (``pair_sections``); retitled: the titles differ in
    more than spacing and punctuation (an export that lost the spaces around code retitles nothing)."""

    paired: int
    renumbered: tuple[tuple[Named, Named], ...]
    retitled: tuple[tuple[Named, Named], ...]
    added: tuple[Named, ...]  # NEW states them, OLD does not
    removed: tuple[Named, ...]

    def to_json(self) -> dict[str, Any]:
        def one(n: Named) -> dict[str, str]:
            return {"number": n.number, "title": n.title, "anchor": n.anchor}
        return {"paired": self.paired,
                "renumbered": [{"old": one(a), "new": one(b)} for a, b in self.renumbered],
                "retitled": [{"old": one(a), "new": one(b)} for a, b in self.retitled],
                "added": [one(n) for n in self.added], "removed": [one(n) for n in self.removed]}
