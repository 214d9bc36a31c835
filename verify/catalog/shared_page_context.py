"""The frame every shared-memory page reader shares: the sections read (found by anchor or title, never by
number), the words of swizzle modes and majorness, table cells, and the context a reader appends its map
layouts and findings to (``verify.catalog.shared_pages``)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from ..layout.model import MapLayout
from ..layout.records import Provenance, Source
from ..layout.named import FormulaMap
from ..layout.shared import Swizzle
from .docpage import read_page
from .page_model import Page, PageError, Section, Table, Text
from .known import KNOWN, SectionIndex, squeeze
from .sections import IngestFinding, freeze

# the sections read, found by anchor or title (``verify.catalog.known``), never by number: 9.7.15.5.1.2 and its
# subsections, 9.7.16.10.3 and 9.7.16.10.6 in PTX ISA 9.0 and 9.1
WGMMA = "wgmma.shared"
TC_VALID = "tcgen05.valid"
TC_SWIZZLE = "tcgen05.swizzle"
CANONICAL = "wgmma.shared.canonical"
TC_DESCRIPTOR = "tcgen05.descriptor"
TC_ZERO_COLUMN = "tcgen05.zero_column"
PAGE_MAPS = ("tcgen05.descriptor.fields", "tcgen05.descriptor.swizzle", "tcgen05.zero_column.fields",
             "tcgen05.zero_column.coverage.m128", "tcgen05.zero_column.coverage.m64", "tcgen05.zero_column.coverage.m32")  # the maps of kind "map" a page states
ROLES = (WGMMA, "wgmma.shared.lbo", "wgmma.shared.sbo", "wgmma.shared.canonical", "wgmma.shared.descriptor",
         TC_VALID, TC_SWIZZLE, TC_DESCRIPTOR, "tcgen05.lbo", "tcgen05.canonical",
         TC_ZERO_COLUMN)

# family values: T = 128 / bits of the element types each instruction reads from shared memory
WGMMA_T = (4, 8, 16)          # 32-, 16- and 8-bit types
TCGEN05_T = (4, 8, 16, 32)    # 32-, 16-, 8- and 4-bit types (6-bit types sit in 8-bit containers)
TYPE_BITS = {"tf32": 32, "f32": 32, "bf16": 16, "f16": 16, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8, "b1": 1}
# the swizzle of tcgen05's 128B swizzling with 32B atomicity: no page states it; CuTe's UMMA atom does
BASE32B_SWIZZLE = Swizzle(2, 5, 2)
BASE32B_NOTE = ("swizzle from CUTLASS CuTe include/cute/atom/mma_traits_sm100.hpp Layout_MN_SW128_32B_Atom_Bits = "
                "ComposedLayout<Swizzle<2,5,2>, smem_ptr_flag, Layout<Shape<_1024,_4>,Stride<_1,_1024>>> (the page "
                "states the atom's 8x4 shape, not its swizzle)")


@dataclass(frozen=True)
class Where:
    page: str
    line: int
    col: int
    words: str


def finding(kind: str, w: Where, message: str, witness: dict, section: str) -> IngestFinding:
    return IngestFinding(kind, "warning", w.page, w.line, w.col, w.words[:120], message,
                         tuple((k, freeze(v)) for k, v in witness.items()), section)




# ----------------------------------------------------------------------------- reading the page

_MODE_WORDS = [(re.compile(r"128B\s+Swizzling\s+with\s+32B\s+atomicity|128[- ]?Byte\s+with\s+32B\s+atomic", re.I),
                "128B_base32B"),
               (re.compile(r"\b128[ -]?B(yte)?\b", re.I), "128B"), (re.compile(r"\b64[ -]?B(yte)?\b", re.I), "64B"),
               (re.compile(r"\b32[ -]?B(yte)?\b", re.I), "32B"),
               (re.compile(r"\b(none|no[- ]swizzl\w*|interleave\w*)\b", re.I), "none")]


def mode_of_words(text: str) -> str | None:
    for rx, name in _MODE_WORDS:
        if rx.search(text):
            return name
    return None


def mode_words(mode: str) -> str:
    return {"128B_base32B": "128B swizzling with 32B atomicity", "none": "no swizzling"}.get(mode, f"{mode} swizzling")


def major_of_words(text: str) -> str | None:
    t = text.replace(" ", "").replace("-", "").lower()
    if t.startswith(("mn", "m/n")):
        return "MN"
    if t.startswith("k"):
        return "K"
    return None


def table_cells(table: Table, ncols: int) -> list[tuple[list[str], list[int], int]]:
    """Rows as (texts, columns, line) with merged leading cells filled from the row above (the pages print a
    row-spanning first cell once)."""
    out: list[tuple[list[str], list[int], int]] = []
    prev: list[str] = []
    prev_cols: list[int] = []
    for r in table.rows:
        texts = [c.text.replace("\\*", "*").strip() for c in r.cells]
        cols = [c.col for c in r.cells]
        if len(texts) < ncols and prev:
            texts = prev[: ncols - len(texts)] + texts
            cols = prev_cols[: ncols - len(cols)] + cols
        out.append((texts, cols, r.line))
        prev, prev_cols = texts, cols
    return out


# the tables read, by their captions' titles (their numbers move between releases: tcgen05's swizzle atoms are
# Table 53 in PTX ISA 9.0 and Table 55 in 9.1)
WGMMA_ATOMS = "Various combinations of swizzling mode, leading dimension and swizzle-atom layout"
TC_ATOMS = "Layout for swizzle atoms"
TC_COMBINATIONS = "Valid Combinations of Type-Size, Major-ness and Swizzling"
_CAPTION_NUMBER = re.compile(r"^Table (\d+)\s+(.*)$")


def captioned(sec: Section, title: str) -> tuple[Table, str] | None:
    """The table captioned ``title`` and its name as the page numbers it ("Table 53"): the caption a line of
    its own before the table (9.0), or run into the table's header row (9.1)."""
    want = squeeze(title)
    name = ""
    for b in sec.blocks:
        if isinstance(b, Text):
            m = _CAPTION_NUMBER.match(b.text)
            name = f"Table {m.group(1)}" if m and squeeze(m.group(2)).startswith(want) else ""
        elif isinstance(b, Table):
            m = _CAPTION_NUMBER.match(b.header[0]) if b.header else None
            if m and squeeze(m.group(2)).startswith(want):
                return b, f"Table {m.group(1)}"
            if name:
                return b, name
    return None


def table_name(sec: Section, table: Table) -> str:
    """The name the page gives ``table`` ("Table 52"), or "the table"."""
    name = "the table"
    for b in sec.blocks:
        if isinstance(b, Text):
            m = _CAPTION_NUMBER.match(b.text)
            name = f"Table {m.group(1)}" if m else "the table"
        elif b is table:
            m = _CAPTION_NUMBER.match(b.header[0]) if b.header else None
            return f"Table {m.group(1)}" if m else name
        else:
            name = "the table"
    return name


def column_of(page: Page, line: int, words: str) -> int:
    text = page.lines[line - 1] if 0 < line <= len(page.lines) else ""
    k = text.find(words[:24]) if words else -1
    return k + 1 if k >= 0 else 1


@dataclass
class PageContext:
    pages: dict[str, tuple[Section, Page]]  # role (``verify.catalog.known``) -> its section and page
    findings: list[IngestFinding]
    maps: list[MapLayout]
    release: str = ""

    def where(self, role: str, line: int, words: str) -> Where:
        _, page = self.pages[role]
        return Where(page.path, line, column_of(page, line, words), words)

    def number(self, role: str) -> str:
        """The section's number as its release states it (findings carry it)."""
        return self.pages[role][0].number


def sections_of(pages: Sequence[Page]) -> dict[str, tuple[Section, Page]]:
    """Each role's section among the pages (its first copy), found by what it says."""
    index = SectionIndex(pages)
    out: dict[str, tuple[Section, Page]] = {}
    for role in ROLES:
        found = index.find(role)
        if found is not None:
            out[role] = (found.section, found.page)
    return out


def read_pages(paths: Iterable[str]) -> list[Page]:
    out = []
    for p in paths:
        try:
            out.append(read_page(p))
        except PageError:
            continue
    return out


def add_siblings(paths: Sequence[str], pages: list[Page], have: dict[str, tuple[Section, Page]], want: str) -> None:
    """Load the page that states section ``want`` from the directory of the given pages (a cross-check needs
    it): a page is read only where its text names the section's anchor or title (``KNOWN[want]``)."""
    if want in have:
        return
    known = KNOWN[want]
    given = {str(Path(p).resolve()) for p in paths}
    needles = tuple(known.anchors) + ((known.title,) if known.title else ())
    for d in sorted({str(Path(p).resolve().parent) for p in paths}):
        for q in sorted(Path(d).iterdir()):
            if str(q) in given or q.suffix.lower() not in (".md", ".txt") or not q.is_file():
                continue
            try:
                text = q.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            if not any(n in text for n in needles):
                continue
            pages.extend(read_pages([str(q)]))
            have.update({r: v for r, v in sections_of(pages).items() if r not in have})
            if want in have:
                return


def _source(ctx: PageContext, role: str, line: int) -> Source:
    sec, page = ctx.pages[role]
    return Source(page.path, line, sec.number, sec.heading.title, version=ctx.release, anchor=sec.heading.anchor)


def report_unread(ctx: PageContext, role: str, what: str) -> None:
    """A section found whose table could not be read: an error at its heading that says which and why (its layouts
    are then not checked), never silence."""
    sec, page = ctx.pages[role]
    ctx.findings.append(IngestFinding(
        "unread-section", "error", page.path, sec.heading.line, 1, sec.heading.title[:120],
        f"section {sec.number} ({sec.heading.title}): {what} could not be read from this page, so its layouts are not "
        "checked", (("why", what),), sec.number))


def add_map(ctx: PageContext, lid: str, role: str, line: int, fm: FormulaMap, text: str, instruction: str, note: str,
         derived: str = "", checks: tuple[str, ...] = ("in_range", "injective"), kind: str = "shared",
         unit: str = "elements") -> None:
    sec, page = ctx.pages[role]
    prov = Provenance(_source(ctx, role, line), page.path, line, text, derived=derived)
    ctx.maps.append(MapLayout(id=lid, kind=kind, map=fm, provenance=prov, checks=checks, instruction=instruction,
                              unit=unit, note=note))
