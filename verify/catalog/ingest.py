"""Documentation pages -> spec TOML text (docs/reference/spec-format.md) plus findings.

``ingest_pages(paths)`` reads pages with ``verify.docpage``, finds the sections
"Matrix Fragments for [sparse] mma.mMnNkK ...", and for each operand block
pairs the fragment table rows (types, register count and type, elements per
register, element list) with the formula that follows, keeping every page line.

While doing so it checks the text itself and reports ``IngestFinding``s: element
lists with duplicates, gaps or stray punctuation; register counts that contradict
the element list or the matrix size; missing element cells; a table header naming
the wrong operand; formulas that do not parse (with the position, and the repair
that was tried); figures whose image belongs to another operand or instruction;
and, by enumerating the formula over every (lane, i), layouts that do not cover
the matrix exactly once.

The TOML is written by a small emitter (no dependency), deterministically: the
same pages give byte-identical text.  Known errata that need a reviewed
correction (a bijectivity error cannot be repaired mechanically) are listed in
``REVIEWED_ERRATA``; each is applied only while the doc text still matches.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Sequence

from ..layout.ids import layout_id
from ..layout.types import ACCUMULATOR_TYPES
from .docpage import read_page
from .page_model import Caption, Code, Image, Page, PageError, Section, Table, Text
from .catalog_errata import catalog_findings
from .known import release_of
from .page_facts import _short
from .section_reader import _read_section
from .sections import (FragmentSpec, IngestFinding,
                       SectionSpec)


@dataclass(frozen=True)
class IngestResult:
    sections: tuple[SectionSpec, ...]
    findings: tuple[IngestFinding, ...]
    pages: tuple[str, ...] = ()

    def specs(self) -> list[tuple[str, str]]:
        """[(spec file name, TOML text)] of every section: written by ``ingest --out`` (checks read the
        sections directly, ``verify.catalog.pages.page_spec``)."""
        from .emit import emit_toml
        return [(s.name + ".toml", emit_toml(s)) for s in self.sections if s.fragments]  # an unread one: its error

    @property
    def fragments(self) -> int:
        return sum(len(s.fragments) for s in self.sections)


# ----------------------------------------------------------------------------- element lists


# ----------------------------------------------------------------------------- fragment cells


# ----------------------------------------------------------------------------- the section reader


# ----------------------------------------------------------------------------- pages -> sections

class _Library:
    """The sections of the pages that take part, and nothing else: the pages given (judged) and the
    reference pages (``docs``: read only so that cross references and anchors resolve).  No directory
    is searched and no environment variable is read, so a page's verdict depends on the pages named."""

    def __init__(self) -> None:
        self.pages: dict[str, Page] = {}
        self.resolved: set[str] = set()

    def load(self, path: str) -> Page:
        if path not in self.pages:
            self.pages[path] = read_page(path)
            self.resolved.add(str(Path(path).resolve()))
        return self.pages[path]

    def add_reference(self, path: str) -> None:
        """A reference page, unless it is one of the pages given (by its real path)."""
        if path not in self.pages and str(Path(path).resolve()) not in self.resolved:
            self.load(path)

    def sections(self) -> list[Section]:
        return [s for p in self.pages.values() for s in p.sections]


def _norm_title(t: str) -> str:
    return re.sub(r"[^a-z0-9.]+", " ", t.lower().replace("`", "")).strip()


def ingest_pages(paths: Sequence[str | Path], docs: Sequence[str | Path] = ()) -> IngestResult:
    """Read pages and return one ``SectionSpec`` per matrix-fragment section, with findings.

    A cross reference ("the same as in case of <section>") and the anchor of a per-section page
    resolve among ``paths`` first, then among the reference pages ``docs`` (read, never judged);
    nothing else is read."""
    lib = _Library()
    order: list[str] = []
    for p in paths:
        sp = str(p)
        lib.load(sp)
        if sp not in order:
            order.append(sp)
    for p in docs:
        lib.add_reference(str(p))
    findings: list[IngestFinding] = []
    specs: list[SectionSpec] = []
    release = release_of(lib.pages[sp] for sp in order)  # what the pages state (their version page), as specs record it
    first: dict[str, _Copy] = {}  # section number -> its first copy among the pages given
    refs_of: dict[str, list[dict[str, Any]]] = {}
    for sp in order:
        page = lib.pages[sp]
        for section in page.sections:
            seen = first.get(section.number)
            if seen is not None and seen.blocks == _blocks_key(section):
                continue  # the same blocks again (a parent page repeats its sections): the same statement
            spec, refs, fnd = _read_section(section, release)
            if spec is None:
                continue
            copy = _Copy(section, _blocks_key(section), _statement(spec, refs, fnd))
            if seen is not None:
                _same_statement(seen, copy)  # a copy that says something else is refused, never dropped
                continue
            first[section.number] = copy
            if not spec.fragments and not refs and not any(f.kind == "unread-section" for f in fnd):
                findings.extend(fnd)
                continue
            specs.append(spec)
            refs_of[section.number] = refs
            findings.extend(fnd)
    # "Matrix fragments for multiplicand B and accumulators C and D are the same as in case of ..."
    resolved: list[SectionSpec] = []
    for spec in specs:
        refs = refs_of.get(spec.number, [])
        extra: list[FragmentSpec] = []
        notes: list[tuple[int, str]] = []
        for ref in refs:
            target = _resolve(lib, spec, ref, specs)
            if target is None:
                findings.append(IngestFinding("unresolved-reference", "warning", spec.page, ref["line"], ref["col"],
                                              _short(ref["title"]), "cannot find the section this fragment refers to",
                                              (("anchor", ref["anchor"]), ("title", ref["title"])), spec.number))
                continue
            tspec, tfind = target
            a_types = {t for f in spec.fragments if f.operand == "A" for t in f.types}
            for op in ref["operands"]:
                for f in tspec.fragments:
                    if f.operand != op or not f.formula:
                        continue
                    if op == "B":
                        want = set(ref["types"]) or a_types
                        if not (set(f.types) & want):
                            continue
                    else:
                        acc = set().union(*(ACCUMULATOR_TYPES.get(t, frozenset()) for t in a_types)) if a_types else set()
                        if acc and not (set(f.types) & acc):
                            continue
                    note = (f"same as {tspec.number} per the doc's reference (line {ref['line']}); "
                            f"formula from {Path(tspec.page).name}:{f.formula_line}")
                    extra.append(replace(f, derived=note, formula_line=ref["line"],
                                         comments=(f"doc: {tspec.number} {tspec.title}",)))
            notes.append((ref["line"], f"{','.join(ref['operands'])} -> {tspec.number}"))
        resolved.append(replace(spec, fragments=spec.fragments + tuple(extra), references=tuple(notes)))
    # anchors: a per-section page has a bare heading; its parent page links it
    for k, spec in enumerate(resolved):
        if not spec.anchor:
            anchor = next((sec.heading.anchor for sec in lib.sections()
                           if sec.number == spec.number and sec.heading.anchor), "")
            if anchor:
                resolved[k] = replace(spec, anchor=anchor)
    resolved = _assign_ids(resolved)
    by_section = {s.number: s for s in resolved}
    final = []
    for s in resolved:
        mine = tuple(f for f in findings if f.section == s.number and f.page == s.page)
        final.append(replace(s, findings=mine))
    final.sort(key=lambda s: tuple(int(x) for x in s.number.split(".")))
    del by_section
    findings.extend(catalog_findings(order))  # wmma, ldmatrix/stmatrix/movmatrix, wgmma, tcgen05 pages
    findings.sort(key=lambda f: (f.page, f.line, f.column, f.kind, f.operand, f.types))
    return IngestResult(tuple(final), tuple(findings), tuple(order))


# ----------------------------------------------------------------------------- a section given twice

Item = tuple[str, str, tuple[int, int]]  # (what, the statement without positions, page (line, column))


@dataclass(frozen=True)
class _Copy:
    section: Section
    blocks: tuple[Any, ...]
    statement: tuple[Item, ...]


def _blocks_key(section: Section) -> tuple[Any, ...]:
    """A section's blocks without their positions: equal for two copies of the same text."""
    def key(b: Any) -> Any:
        if isinstance(b, Table):
            return ("table", b.header, tuple(tuple(c.text for c in r.cells) for r in b.rows))
        if isinstance(b, Code):
            return ("code", tuple(cl.text for cl in b.lines))
        if isinstance(b, Text):
            return ("text", b.text, b.bullet, b.links)
        if isinstance(b, Image):
            return ("image", b.src)
        if isinstance(b, Caption):
            return ("caption", b.number, b.text, b.anchor)
        return (type(b).__name__,)
    return (" ".join(section.heading.title.replace("\uf0c1", " ").split()),) + tuple(key(b) for b in section.blocks)


def _statement(spec: SectionSpec, refs: list[dict[str, Any]], findings: list[IngestFinding]) -> tuple[Item, ...]:
    """What one copy of a section states, item by item, each with its page position: the layouts
    (table row facts, formula, figures), the cross references and the errata of its text."""
    items: list[Item] = [("section", f"{spec.instruction} {spec.shape} {spec.tag} groups {spec.groups} {spec.group}".strip(),
                          (spec.line, 1))]
    for f in spec.fragments:
        what = f"operand {f.operand} ({', '.join('.' + t for t in f.types)}{', ' + f.variant if f.variant else ''})"
        r = f.row
        facts = (f"{r.registers} .{r.register_type} registers, {r.per_register} elements each, elements "
                 f"{' '.join(r.elements.text.split()) if r.elements else '-'}")
        items.append((what + " table row", facts, (r.line, 1)))
        lines = f.formula.split("\n")
        where = list(f.where) if len(f.where) == len(lines) else [(f.formula_line, 1)] * len(lines)
        items += [(what + " formula", text, pos if pos[0] else (f.formula_line, 1)) for text, pos in zip(lines, where)]
        items.append((what + " formula end", "", (f.formula_line, 1)))
        items.append((what + " figures", ", ".join(f.figures), (f.formula_line, 1)))
    for ref in refs:
        items.append(("reference", f"{'/'.join(ref['operands'])} the same as {ref['title']} (#{ref['anchor']}) "
                                   f"{' '.join(ref['types'])}".strip(), (ref["line"], ref["col"])))
    for stmt_line, stmt in spec.sparsity:
        items.append(("sparsity", stmt, (stmt_line, 1)))
    for x in findings:
        items.append((f"{x.severity} {x.kind}", f"{x.operand} {' '.join(x.types)}: {x.message}".strip(),
                      (x.line, x.column)))
    return tuple(items)


def _same_statement(first: _Copy, other: _Copy) -> None:
    """Two copies of one section (a page saved as .md and .html, a page and a changed copy of it) are
    judged once only when they state the same; otherwise the second is bad input, at its first
    difference, naming both files."""
    a, b = first.statement, other.statement
    for k in range(max(len(a), len(b))):
        x = a[k] if k < len(a) else None
        y = b[k] if k < len(b) else None
        if x is not None and y is not None and x[:2] == y[:2]:
            continue
        line, col = y[2] if y is not None else (other.section.heading.line, 1)
        what = (y or x)[0]  # type: ignore[index]
        here = f"this copy has {what} {_short(y[1], 80)!r}" if y is not None else f"this copy has no {what}"
        there = (f"{first.section.page}:{x[2][0]}:{x[2][1]} has {x[0]} {_short(x[1], 80)!r}" if x is not None
                 else f"{first.section.page} has no {what}")
        raise PageError(other.section.page, line or other.section.heading.line, col or 1,
                        f"section {other.section.number} is given twice and the copies differ: {here}; {there}. "
                        "Give one copy of each section")


def _resolve(lib: _Library, spec: SectionSpec, ref: dict[str, Any],
             specs: list[SectionSpec]) -> tuple[SectionSpec, list[IngestFinding]] | None:
    def match(section: Section) -> bool:
        if ref["anchor"] and section.heading.anchor == ref["anchor"]:
            return True
        return bool(ref["title"]) and _norm_title(section.heading.title) == _norm_title(ref["title"])

    for s in specs:
        if (ref["anchor"] and s.anchor == ref["anchor"]) or _norm_title(s.title) == _norm_title(ref["title"]):
            return s, []
    for section in lib.sections():
        if match(section) and section.number != spec.number:
            tspec, _refs, fnd = _read_section(section, spec.version)
            if tspec is not None and tspec.fragments:
                return tspec, fnd
    return None


def _assign_ids(specs: list[SectionSpec]) -> list[SectionSpec]:
    """Layout ids by the one grammar (``verify.layout.ids``), as the spec loader computes them."""
    return [replace(s, fragments=tuple(replace(f, layout_id=layout_id(s.instruction, s.shape, f.operand, f.types,
                                                                      f.variant, s.tag))
                                       for f in s.fragments)) for s in specs]


def ingest_text(text: str, path: str = "<page>") -> IngestResult:
    """Ingest one page given as text (for tests and tools); cross references resolve within it."""
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / Path(path).name
        p.write_text(text, encoding="utf-8")
        res = ingest_pages([str(p)])
    fix = lambda s: s.replace(str(p), path)  # noqa: E731
    return IngestResult(tuple(replace(s, page=fix(s.page), findings=tuple(replace(f, page=fix(f.page)) for f in s.findings))
                              for s in res.sections),
                        tuple(replace(f, page=fix(f.page)) for f in res.findings), (path,))
