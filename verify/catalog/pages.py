"""Doc pages as input: find them, ingest them into specs, write spec files atomically (``ingest --out``).

``check`` and ``report`` accept pages (or directories of pages) wherever they accept spec files;
``load`` sorts the paths it is given into the two kinds.  A page's spec is built from its ingested
sections directly (``page_spec``: the spec reader fed the sections' tables, positions on the page); spec
text is written only by ``ingest``.  Writing is all-or-nothing: every spec is rendered first, then written
to a temporary file in the output directory and renamed into place.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import dataclasses

from ..errors import SpecError
from ..layout.ids import layout_id
from ..layout.model import Spec, TextErratum, Unbuilt
from ..layout.records import Shape, Source
from . import bundled, review
from ..results.diff import Named
from .known import applies, names_of, release_of
from .review import Reviewed
from .sections import FragmentSpec, SectionSpec
from .spec import Locator, fragment_ids, load_spec_text, load_specs, read_fragments, spec_files
from .tables import fragment_as_read, instruction_table, source_table

if TYPE_CHECKING:  # ingestion is imported when a page is read: checking spec files never pays for it
    from .ingest import IngestFinding, IngestResult

PAGE_SUFFIXES = (".md", ".txt", ".html", ".htm")


class IngestError(SpecError):
    """Bad input in a doc page, reported like a bad spec: one line ``file:line:col: error: msg``."""


def expand_pages(paths: Sequence[str | Path]) -> list[str]:
    """Files as given; directories expand to their page files, sorted."""
    out: list[str] = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(str(q) for q in sorted(p.iterdir()) if q.is_file() and q.suffix.lower() in PAGE_SUFFIXES)
        elif p.exists():  # a file; anything else is refused, with what it is, by the reader
            out.append(str(p))
        else:
            raise IngestError(str(p), 1, 1, "no such file or directory")
    return out


def ingest(paths: Sequence[str | Path], docs: Sequence[str | Path] = ()) -> IngestResult:
    """The sections of the pages ``paths`` (files, or directories of pages); cross references and
    anchors resolve among them and the reference pages ``docs`` (files or directories), nothing else."""
    from .page_model import PageError
    from .ingest import ingest_pages
    try:
        return ingest_pages(expand_pages(paths), expand_pages(docs))
    except PageError as e:
        raise IngestError(e.path, e.line, e.col, e.message) from None


def specs_from_pages(paths: Sequence[str | Path], docs: Sequence[str | Path] = ()) -> list[tuple[str, str]]:
    """[(spec file name, TOML text)] for every matrix-fragment section of the pages.

    Every text is checked with ``load_spec_text`` before it is returned, so a caller
    never receives a spec the loader would reject.
    """
    result = ingest(paths, docs)
    out = result.specs()
    for name, text in out:
        load_spec_text(text, name)
    return out


def write_all(out_dir: Path, specs: list[tuple[str, str]]) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    temps: list[tuple[Path, Path]] = []
    try:
        for name, text in specs:
            fd, tmp = tempfile.mkstemp(prefix=".ingest-", suffix=".toml.tmp", dir=out_dir)
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
            temps.append((Path(tmp), out_dir / name))
        for written, final in temps:
            os.replace(written, final)
    except BaseException:
        for written, _ in temps:
            try:
                written.unlink()
            except OSError:
                pass
        raise
    return [final for _, final in temps]


def is_page(p: Path) -> bool:
    return p.is_file() and p.suffix.lower() in PAGE_SUFFIXES


def load(paths: Sequence[str | Path], against: Sequence[str | Path] | None = None,
         docs: Sequence[str | Path] = (), release: str | None = None) -> tuple[list[Spec], tuple[IngestFinding, ...]]:
    """Specs from spec files, directories of specs and doc pages (ingested on the fly), plus the
    errata ``ingest`` found in the text of the pages (warnings and errors).  ``docs``: reference
    pages, read only so that the pages' cross references resolve (``ingest``).

    Page specs are judged by the reviewed specs ``against`` (default: the bundled specs), never by
    what the page says about itself (``verify.catalog.review``); their positions are page positions.

    ``release`` (``"9.0"``): the facts that apply are those recorded from that release or an earlier one (a spec
    file's ``[source] version``); a spec file of a later release is left out, and pages are judged only by the
    reviewed specs of their release.  Without it, spec files all apply and pages are judged by the facts of
    the release they state (``known.release_of``).
    """
    pages, spec_paths = _sort_paths(paths)
    specs = [s for s in load_specs(spec_paths) if applies(s.source, release or "")] if spec_paths else []
    doc_findings: tuple[IngestFinding, ...] = ()
    if pages:
        result = ingest([str(p) for p in pages], docs)
        built = [page_spec(section, section.name + ".toml") for section in result.sections]
        judged_by = release if release is not None else page_release(pages)
        reviewed = Reviewed.of([s for s in reviewed_specs(against, built) if applies(s.source, judged_by)])
        specs += [review.apply(spec, reviewed) for spec in built]
        doc_findings = tuple(f for f in result.findings if f.severity in ("error", "warning"))
        specs, doc_findings = _with_shared(specs, doc_findings, pages, against, judged_by)
        specs += statement_specs(pages, against, judged_by)
    return specs, doc_findings


def _sort_paths(paths: Sequence[str | Path]) -> tuple[list[Path], list[str | Path]]:
    """(the doc pages among ``paths``, directories of pages expanded; the other paths: spec files)."""
    spec_paths: list[str | Path] = []
    pages: list[Path] = []
    for p in map(Path, paths):
        if is_page(p):
            pages.append(p)
        elif p.is_dir() and not any(p.rglob("*.toml")) and any(q.suffix.lower() in PAGE_SUFFIXES for q in p.iterdir()):
            pages.extend(sorted(q for q in p.iterdir() if is_page(q)))
        else:
            spec_paths.append(p)
    return pages, spec_paths


def page_release(pages: Sequence[Path]) -> str:
    """The release the pages state (``known.release_of``; "" where they state none)."""
    from .docpage import read_page
    from .page_model import PageError
    read = []
    for p in pages:
        try:
            read.append(read_page(p))
        except PageError:
            continue  # reported where the page is ingested
    return release_of(read)


def release(paths: Sequence[str | Path]) -> tuple[str, tuple[Named, ...]]:
    """The release the doc pages among ``paths`` state (``known.release_of``) and their sections, each as the
    release states it (number, title, anchor); ``("", ())`` where no page is among them."""
    from .docpage import read_page
    from .page_model import PageError
    pages = []
    for p in _sort_paths(paths)[0]:
        try:
            pages.append(read_page(p))
        except PageError as e:
            raise IngestError(e.path, e.line, e.col, e.message) from None
    return (release_of(pages), names_of(pages)) if pages else ("", ())


def reviewed_specs(against: Sequence[str | Path] | None, built: Sequence[Spec]) -> list[Spec]:
    """The reviewed specs the page specs ``built`` are judged by: every spec of ``against``; of the bundled
    specs (the default), those that state a layout of the pages (``spec.fragment_ids``, which parses no
    formula), in the bundled order.  ``review.Reviewed`` answers only for the ids it is asked about, the
    pages' ids, so the answers are those of the whole bundled set; the bundled specs are checked in full
    by ``check`` with no path."""
    if against is not None:
        return load_specs(list(against))
    ids = {x for spec in built for x in (*(lay.doc_id for lay in spec.layouts),
                                                   *(f.layout for f in spec.syntax_findings),
                                                   *(u.layout for u in spec.unbuilt),
                                                   *(t.layout for t in spec.text_errata))}
    # a section none of whose layouts could be read is judged by the reviewed spec of its instruction and shape
    unread = tuple(f"{spec.instruction}.{spec.shape}." for spec in built if not _states_any(spec))
    files: list[str | Path] = []
    for path in spec_files([bundled.resolve().path]):
        try:
            mine = fragment_ids(path)
            if mine & ids or any(x.startswith(unread) for x in mine):
                files.append(path)
        except SpecError:  # read in full, where the error is reported
            files.append(path)
    return load_specs(files) if files else []


# The errors ingest finds in a page's text that are judged as text errata, and the check of the reviewed
# record that covers each.  Every other ``error`` kind has a check of its own: ``formula-syntax`` the
# ``syntax`` check, ``evaluation`` the ``evaluation`` finding, ``not-bijective`` and
# ``correction-not-bijective`` the layout's in_range / injective / surjective (expected as reviewed).
OWN_CHECK = frozenset({"formula-syntax", "evaluation", "not-bijective", "correction-not-bijective",
                       "unread-section"})  # an unread section: the reviewed layouts it no longer gives
TEXT_ERRATUM_CHECK = {"count-words": "count", "count-matrix": "count", "count-list": "count", "packing": "packing",
                      "element-list-punctuation": "elements", "element-list-prefix": "elements",
                      "element-list-duplicate": "elements", "element-list-gap": "elements",
                      "element-list-range": "elements"}


def text_errata(section: SectionSpec) -> tuple[TextErratum, ...]:
    """The ``error`` findings of a section's text, one per layout of the table row they are on (a row
    with no formula: the id its layout would have; a finding of no row: the section)."""
    out: list[TextErratum] = []
    for f in section.findings:
        if f.severity != "error" or f.kind in OWN_CHECK:
            continue
        ids = [fr.layout_id for fr in section.fragments
               if fr.operand == f.operand and fr.types == f.types and fr.page in ("", section.page)]
        if not ids:
            ids = [layout_id(section.instruction, section.shape, f.operand, f.types, None, section.tag)
                   if f.operand else section.name]
        out += [TextErratum(lid, f.kind, TEXT_ERRATUM_CHECK.get(f.kind, ""), f.page, f.line, f.column, f.message)
                for lid in dict.fromkeys(ids)]
    return tuple(out)


def _states_any(spec: Spec) -> bool:
    return bool(spec.layouts or spec.syntax_findings or spec.unbuilt or spec.text_errata)


def _with_shared(specs: list[Spec], found: tuple, pages: list[Path], against: Sequence[str | Path] | None,
                 release: str = "") -> tuple[list[Spec], tuple]:
    """The shared-memory pages' map layouts and errata (``verify.catalog.shared_pages``) added."""
    from .shared_pages import read
    more, errata = read(pages, against, release)
    return specs + more, tuple(sorted(found + tuple(errata), key=lambda f: (f.page, f.line, f.column, f.kind)))


def statement_specs(pages: Sequence[Path], against: Sequence[str | Path] | None, release: str = "") -> list[Spec]:
    """What the pages state beyond the layouts read above (``verify.catalog.page_statements``): one spec per page
    that has statements, carrying them and the reviewed layouts and maps they are judged by
    (``verify.checks.statements``): every layout of ``against``, else of the bundled specs that state the
    instructions the statements are about."""
    from .docpage import read_page
    from .page_model import PageError
    from .page_statements import read as read_statements
    read: list[Any] = []
    for p in pages:
        try:
            read.append(read_page(p))
        except PageError:
            continue  # reported where the page is ingested
    found = read_statements(read)
    if not found.statements:
        return []
    reviewed = tuple(x for spec in _reviewed_with_prefixes(against, found.prefixes) if applies(spec.source, release)
                     for x in spec.all_layouts)
    out: list[Spec] = []
    for page in dict.fromkeys(st.page for st in found.statements):
        mine = tuple(st for st in found.statements if st.page == page)
        first = mine[0]
        src = Source(page, first.line, first.section, "statements of the page", version=release)
        out.append(Spec(page, src, "", Shape(0, 0, 0, "page"), (), page=page, reviewed=reviewed, statements=mine))
    return out


def _reviewed_with_prefixes(against: Sequence[str | Path] | None, prefixes: frozenset[str]) -> list[Spec]:
    """The reviewed specs (``against``, default the bundled ones) whose fragment or ``[[layout]]`` ids start with one
    of ``prefixes``: of the bundled specs, only those files are read."""
    if against is not None:
        return load_specs(list(against))
    files: list[str | Path] = []
    for path in spec_files([bundled.resolve().path]):
        try:
            ids = fragment_ids(path) | _layout_ids(str(path))
        except SpecError:  # read in full, where the error is reported
            files.append(path)
            continue
        if any(x.startswith(tuple(prefixes)) for x in ids):
            files.append(path)
    return load_specs(files) if files else []


def _layout_ids(path: str) -> frozenset[str]:
    """The ids of a spec file's ``[[layout]]`` tables, read without building them."""
    from ..files import read_text
    from .spec import parse_toml
    data = parse_toml(path, read_text(path))
    tables = data.get("layout")
    return frozenset(t["id"] for t in tables if isinstance(t, dict) and isinstance(t.get("id"), str)) \
        if isinstance(tables, list) else frozenset()


class PageLocator(Locator):
    """Where the tables of an ingested section (``verify.catalog.tables``) are: on the page.  A layout's
    formula lines are where ingest read them (``FragmentSpec.where``); anything the spec reader refuses is
    reported on the table row of its fragment (the section's heading for its header)."""

    def __init__(self, section: SectionSpec, name: str, fragments: Sequence[FragmentSpec]) -> None:
        super().__init__(name, "")
        self.section = section
        self.fragments = tuple(fragments)

    def spec_path(self, k: int) -> str:
        return self.fragments[k].page or self.section.page

    def text_map(self, k: int) -> tuple[tuple[int, int], ...]:
        return self.fragments[k].where

    def formula_at(self, k: int, ftext: str, line: int = 1, col: int = 1) -> tuple[int, int]:
        fr = self.fragments[k]
        where = fr.where[line - 1] if 0 < line <= len(fr.where) else (0, 0)
        if (line, col) == (1, 1) or not where[0]:  # the formula's line (the page line ingest names it by)
            return fr.formula_line, 1
        return where[0], where[1] + col - 1

    def syntax_at(self, k: int, ftext: str, line: int, col: int) -> tuple[int, int]:
        fr = self.fragments[k]  # the doc's formula does not parse: where ingest found the error
        return (fr.syntax_error[0], fr.syntax_error[1]) if fr.syntax_error else self.formula_at(k, ftext, line, col)

    def in_header(self, e: SpecError) -> SpecError:
        return IngestError(self.section.page, self.section.line, 1, f"section {self.section.number}: {e.message}")

    def in_fragment(self, k: int, e: SpecError) -> SpecError:
        fr = self.fragments[k]
        return IngestError(fr.page or self.section.page, fr.row.line, 1, f"section {self.section.number}: {e.message}")


def page_spec(section: SectionSpec, name: str) -> Spec:
    """The spec of one ingested section, built from its tables (``verify.catalog.tables``) by the spec reader
    (``verify.catalog.spec.read_fragments``) with no text in between: every position is on the page."""
    unbuilt = tuple(Unbuilt(fr.layout_id, fr.page or section.page, fr.syntax_error[0], fr.syntax_error[1],
                            fr.syntax_error[2]) for fr in section.fragments if not fr.formula and fr.syntax_error)
    errata = text_errata(section)
    built = [fr for fr in section.fragments if fr.formula]
    if not built:  # nothing to build: the section's findings say why
        shape = Shape.parse(section.shape)
        assert shape is not None
        return Spec(section.page, Source(section.page, section.line, section.number, section.title,
                                         version=section.version), section.instruction, shape, (), (),
                    page=section.page, unbuilt=unbuilt, text_errata=errata)
    spec = read_fragments(PageLocator(section, name, built), source_table(section), instruction_table(section),
                          [fragment_as_read(fr) for fr in built])
    return dataclasses.replace(spec, path=section.page, page=section.page, unbuilt=unbuilt, text_errata=errata)


def doc_findings(pages: Sequence[str | Path], docs: Sequence[str | Path] = ()) -> tuple[IngestFinding, ...]:
    """Only the errata ``ingest`` finds in the text of doc pages (warnings and errors)."""
    return tuple(f for f in ingest([str(p) for p in pages], docs).findings if f.severity in ("error", "warning"))


def why_nothing(paths: Sequence[str | Path]) -> str:
    """Why the doc pages among ``paths`` gave nothing to check, page by page ("" when none is a page): a page
    with no numbered section heading is not in a shape the reader knows; one whose sections state no layout
    the tool reads from pages says which sections it has."""
    from .docpage import read_page
    from .page_model import PageError
    reasons: list[str] = []
    for p in expand_pages([q for q in map(Path, paths) if is_page(q) or q.is_dir()]):
        try:
            page = read_page(p)
        except PageError:
            continue  # reported where it is loaded
        if not page.sections:
            reasons.append(f"{p}: no numbered section heading ('#### 9.7.14.5.7. Title', '<h5>9.7.14.5.7. Title</h5>' "
                           f"or a flattened '9.7.14.5.7. Title' line) in this {page.format} page")
        else:
            shown = ", ".join(s.number for s in page.sections[:4]) + (", ..." if len(page.sections) > 4 else "")
            reasons.append(f"{p}: its sections ({shown}) state no layout read from pages (mma and mma.sp fragment "
                           "sections, the wgmma and tcgen05 shared-memory pages)")
    return "".join(f"; {r}" for r in reasons[:4]) + ("; ..." if len(reasons) > 4 else "")
