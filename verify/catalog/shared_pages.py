"""The shared-memory pages: the wgmma operand layouts (9.7.15.5.1.2) and the tcgen05 swizzle pages
(9.7.16.10.3 valid combinations, 9.7.16.10.6 layouts and swizzling), read into map layouts and the errata of
their text.

``read(pages, against)`` is the one entry ``verify.catalog.pages.load`` calls: it returns one ``Spec`` per page
section group with the layouts the page states (``MapLayout``s, every one at its page line) and the findings
computed from the page's own statements, one against another (``IngestFinding``s, page:line:column, the
doc's words, a witness); a fixed page gives none.  Expectations of the maps come from the reviewed specs
of the same ids (``specs/wgmma.shared.toml``, ``specs/tcgen05.shared.toml``), never from the page.

What is read, and checked against what:

* Table 38 / Table 53 (swizzle atoms in 128-bit units): each atom becomes a family over ``T`` (elements per
  16 bytes) with its swizzle (the canonical table's ``Swizzle<B,4,3>`` for its width; CuTe's
  ``Swizzle<2,5,2>`` for tcgen05's 128B swizzling with 32B atomicity, whose swizzle no page states),
  checked as a bijection of the atom; the atom widths are held against the canonical table's swizzles, the
  "multiplied along the leading dimension" example against the table, and Table 53 against Table 38.
* The canonical table (CuTe notation over T, m, k, LBO, SBO): each row becomes a family over ``T``, ``m``,
  ``k`` with LBO and SBO at the dense values the page's examples use, each by its role (the next atom along
  M/N, then K: ``verify.layout.descriptor.stride_roles``), checked injective onto its span for every
  parameter value; a row that is not says for which values.  The family is compared with the reviewed map of
  its id (``verify.checks.review``), so a row that swaps the names LBO and SBO states another layout.
* The LBO/SBO definition tables: each definition ("offset from the first 8 rows to the next 8 rows") is
  held against the stride the canonical layout gives LBO or SBO.
* The five worked examples: the exact layout (checked injective), the canonical layout it names (against the
  table), T against the type, the exact layout against the canonical one instantiated with the stated T, m,
  k, LBO and SBO, and the stated descriptor encodings against ``(x) >> 4``.
* The descriptor table: field widths against bit ranges, overlaps, the 14-bit ``matrix-descriptor-encode``;
  the base-offset rule: the boundaries against the canonical swizzles' periods, and the formula against
  "must be a non-zero value" for patterns that start on a row of their swizzle width.
* Table 52 (tcgen05 valid combinations) against Table 53: a mode a majorness is allowed must have an atom.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

from ..checks import maps
from ..formula import Var, parse_formula
from ..layout.descriptor import stride_roles
from ..layout.dims import Dim
from ..layout.model import MapLayout, Provenance, Shape, Source, Spec
from ..layout.named import FormulaMap
from ..layout.shared import Swizzle, make_shared, op
from ..witnesses import PointsCollide
from .docpage import Code, Page, PageError, Section, Table, Text, read_page
from .known import KNOWN, SectionIndex, release_of, squeeze
from .sections import IngestFinding, freeze
from .shared_symbolic import (SymError, _value, atom_family, canonical_family, concrete_map,
                              parse_symbolic)

# the sections read, found by anchor or title (``verify.catalog.known``), never by number: 9.7.15.5.1.2 and its
# subsections, 9.7.16.10.3 and 9.7.16.10.6 in PTX ISA 9.0 and 9.1
WGMMA = "wgmma.shared"
TC_VALID = "tcgen05.valid"
TC_SWIZZLE = "tcgen05.swizzle"
CANONICAL = "wgmma.shared.canonical"
TC_DESCRIPTOR = "tcgen05.descriptor"
PAGE_MAPS = ("tcgen05.descriptor.fields", "tcgen05.descriptor.swizzle")  # the maps of kind "map" a page states
ROLES = (WGMMA, "wgmma.shared.lbo", "wgmma.shared.sbo", "wgmma.shared.canonical", "wgmma.shared.descriptor",
         TC_VALID, TC_SWIZZLE, TC_DESCRIPTOR, "tcgen05.lbo", "tcgen05.canonical")

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
class _Where:
    page: str
    line: int
    col: int
    words: str


def _finding(kind: str, w: _Where, message: str, witness: dict, section: str) -> IngestFinding:
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


def _cells(table: Table, ncols: int) -> list[tuple[list[str], list[int], int]]:
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


def _captioned(sec: Section, title: str) -> tuple[Table, str] | None:
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


def _table_name(sec: Section, table: Table) -> str:
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


def _col_in(page: Page, line: int, words: str) -> int:
    text = page.lines[line - 1] if 0 < line <= len(page.lines) else ""
    k = text.find(words[:24]) if words else -1
    return k + 1 if k >= 0 else 1


@dataclass
class _Ctx:
    pages: dict[str, tuple[Section, Page]]  # role (``verify.catalog.known``) -> its section and page
    findings: list[IngestFinding]
    maps: list[MapLayout]
    release: str = ""

    def where(self, role: str, line: int, words: str) -> _Where:
        _, page = self.pages[role]
        return _Where(page.path, line, _col_in(page, line, words), words)

    def number(self, role: str) -> str:
        """The section's number as its release states it (findings carry it)."""
        return self.pages[role][0].number


def _sections(pages: Sequence[Page]) -> dict[str, tuple[Section, Page]]:
    """Each role's section among the pages (its first copy), found by what it says."""
    index = SectionIndex(pages)
    out: dict[str, tuple[Section, Page]] = {}
    for role in ROLES:
        found = index.find(role)
        if found is not None:
            out[role] = (found.section, found.page)
    return out


def _read(paths: Iterable[str]) -> list[Page]:
    out = []
    for p in paths:
        try:
            out.append(read_page(p))
        except PageError:
            continue
    return out


def _siblings(paths: Sequence[str], pages: list[Page], have: dict[str, tuple[Section, Page]], want: str) -> None:
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
            pages.extend(_read([str(q)]))
            have.update({r: v for r, v in _sections(pages).items() if r not in have})
            if want in have:
                return


def _source(ctx: _Ctx, role: str, line: int) -> Source:
    sec, page = ctx.pages[role]
    return Source(page.path, line, sec.number, sec.heading.title, version=ctx.release, anchor=sec.heading.anchor)


def _unread(ctx: _Ctx, role: str, what: str) -> None:
    """A section found whose table could not be read: an error at its heading that says which and why (its layouts
    are then not checked), never silence."""
    sec, page = ctx.pages[role]
    ctx.findings.append(IngestFinding(
        "unread-section", "error", page.path, sec.heading.line, 1, sec.heading.title[:120],
        f"section {sec.number} ({sec.heading.title}): {what} could not be read from this page, so its layouts are not "
        "checked", (("why", what),), sec.number))


def _map(ctx: _Ctx, lid: str, role: str, line: int, fm: FormulaMap, text: str, instruction: str, note: str,
         derived: str = "", checks: tuple[str, ...] = ("in_range", "injective"), kind: str = "shared",
         unit: str = "elements") -> None:
    sec, page = ctx.pages[role]
    prov = Provenance(_source(ctx, role, line), page.path, line, text, derived=derived)
    ctx.maps.append(MapLayout(id=lid, kind=kind, map=fm, provenance=prov, checks=checks, instruction=instruction,
                              unit=unit, note=note))


# ----------------------------------------------------------------------------- the wgmma page

@dataclass
class _Canonical:
    major: str
    mode: str
    text: str
    swizzle: Swizzle
    line: int
    col: int
    row: list[tuple[Any, Any]]
    colm: list[tuple[Any, Any]]


def _swizzle_of(text: str) -> Swizzle | None:
    """The ``Swizzle<B,M,S>`` a cell writes; None where it writes none, or one that is no swizzle (S < B: the cell
    is then reported unread by the page's statements, ``verify.catalog.statements_shared``)."""
    m = re.search(r"Swizzle\s*<\s*(\d)\s*,\s*(\d)\s*,\s*(\d)\s*>", text)
    try:
        sw = Swizzle(int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else None
    except ValueError:
        return None
    return None if sw is not None and not sw.identity and sw.base != 4 else sw  # a swizzle of 16-byte units only


def _atoms(table: Table) -> dict[tuple[str, str], tuple[int, int, int]]:
    """Table 38 / 53: (major, mode) -> (mn units, k units, line); '–' rows are left out."""
    out: dict[tuple[str, str], tuple[int, int, int]] = {}
    for texts, _, line in _cells(table, 3):
        mode, major, shape = mode_of_words(texts[0]), major_of_words(texts[1]), texts[2]
        m = re.fullmatch(r"(\d+)\s*x\s*(\d+)", shape)
        if mode is None or major is None or m is None:
            continue
        a, b = int(m.group(1)), int(m.group(2))
        out[(major, mode)] = (a, b, line)
    return out


def _wgmma(ctx: _Ctx) -> None:
    sec, page = ctx.pages[WGMMA]
    number = sec.number
    found38 = _captioned(sec, WGMMA_ATOMS)
    t38, n38 = found38 if found38 is not None else (None, "Table 38")
    if t38 is None:
        _unread(ctx, WGMMA, f"the table of swizzle atoms ('{WGMMA_ATOMS}')")
    atoms = _atoms(t38) if t38 is not None else {}
    canon = _canonical_table(ctx)
    widths = {c.mode: 1 << c.swizzle.bits for c in canon.values()}
    swizzles = {c.mode: c.swizzle for c in canon.values()}
    # atoms: bijections of their swizzle; widths against the canonical swizzles
    for (major, mode), (a, b, line) in sorted(atoms.items()):
        units = a if major == "MN" else b
        rows_k = b if major == "MN" else a
        w = widths.get(mode)
        if w is not None and (units != w or rows_k != 8):
            ctx.findings.append(_finding(
                "smem-table", ctx.where(WGMMA, line, f"{a}x{b}"),
                f"{n38} gives the {major}-major {mode} atom {a}x{b} (16-byte units), but the canonical layout's "
                f"{swizzles[mode].text()} swizzles rows of {w} units in groups of 8",
                {"table": [a, b], "swizzle_units": w}, number))
        sw = swizzles.get(mode)
        if sw is None:
            continue
        _map(ctx, f"wgmma.shared.atom.{major}.{mode}", WGMMA, line, atom_family(major, a if major == "MN" else a,
             b, sw, WGMMA_T), f"{a}x{b} 128b elements, {sw.text()}", "wgmma",
             f"{n38} atom in elements of 128/T bits, swizzled as the canonical table's swizzle for its width",
             checks=("in_range", "injective", "surjective"))
    _scale_example(ctx, WGMMA, sec, atoms)
    # canonical families
    for (major, mode), c in sorted(canon.items()):
        units = 1 << c.swizzle.bits
        try:
            fm, dense = canonical_family(c.row, c.colm, c.swizzle, WGMMA_T, units, stride_roles(major, mode))
        except SymError as e:
            ctx.findings.append(_finding("smem-layout", _Where(page.path, c.line, c.col + e.offset, c.text),
                                         f"the canonical layout cannot be read: {e}", {"layout": c.text},
                                         ctx.number(CANONICAL)))
            continue
        _map(ctx, f"wgmma.shared.{major}.{mode}", WGMMA, c.line, fm, f"{c.swizzle.text()} o {c.text}", "wgmma",
             "T = 128 / bits; m, k repeats; LBO, SBO dense: " + ", ".join(f"{k} = {_show(v)}" for k, v in dense.items()))
        _injective_where(ctx, c, fm)
    _definitions(ctx, canon)
    _examples(ctx, canon)
    _descriptor(ctx, canon)


def _show(e: Any) -> str:
    from ..layout.family import extent_text
    return extent_text(e)


def _canonical_table(ctx: _Ctx, role: str = CANONICAL) -> dict[tuple[str, str], _Canonical]:
    if role not in ctx.pages:
        return {}
    sec, page = ctx.pages[role]
    number = sec.number
    table = next((b for b in sec.blocks if isinstance(b, Table) and any("Canonical" in h for h in b.header)), None)
    out: dict[tuple[str, str], _Canonical] = {}
    if table is None:
        _unread(ctx, role, "the table of canonical layouts (a header naming 'Canonical Layout')")
        return out
    for texts, cols, line in _cells(table, 4):
        major, mode, text, swz = major_of_words(texts[0]), mode_of_words(texts[1]), texts[2], _swizzle_of(texts[3])
        if major is None or mode is None or swz is None:
            continue
        try:
            row, colm = parse_symbolic(text)
        except SymError as e:
            ctx.findings.append(_finding("smem-layout", _Where(page.path, line, cols[2] + e.offset, text),
                                         f"the canonical layout cannot be read: {e}", {"layout": text}, number))
            continue
        out[(major, mode)] = _Canonical(major, mode, text, swz, line, cols[2], row, colm)
    return out


def _injective_where(ctx: _Ctx, c: _Canonical, fm: FormulaMap) -> None:
    """Enumerate every parameter value: the values for which the canonical family is not injective."""
    found = _not_injective(fm)
    if found is None:
        return
    bad = [dict(env) for env in found[0]]
    env, (p1, p2, off) = bad[0], found[1]
    ks = sorted({e["Rk"] for e in bad})
    by_t = {t: min(e["Rk"] for e in bad if e["T"] == t) for t in sorted({e["T"] for e in bad})}
    ctx.findings.append(_finding(
        "smem-injective", _Where(ctx.pages[CANONICAL][1].path, c.line, c.col, c.text),
        f"{c.major}-major {c.mode} canonical layout {c.text} maps two cells to one offset for k = "
        f"{', '.join(map(str, ks))} (first: T = {env['T']}, m = {env['Rm']}, k = {env['Rk']}: (row {p1[0]}, col {p1[1]}) and "
        f"(row {p2[0]}, col {p2[1]}) both at element offset {off}); the k repeats stay inside one swizzle row only "
        f"while 2k x 16 bytes fit its width",
        {"params": {"T": env["T"], "m": env["Rm"], "k": env["Rk"]}, "first": {"row": p1[0], "col": p1[1]}, "second": {"row": p2[0], "col": p2[1]}, "offset": off,
         "k_values": ks, "smallest_k_by_T": by_t}, ctx.number(CANONICAL)))


@functools.lru_cache(maxsize=64)
def _not_injective(fm: FormulaMap) -> tuple[tuple[tuple[tuple[str, int], ...], ...],
                                            tuple[tuple[int, int], tuple[int, int], int]] | None:
    """The parameter values at which ``fm`` maps two cells to one offset, and the first collision at the
    first of them; None where it is injective at every value.  The verdicts are the one decider's
    (``verify.checks.maps.injective_at_each``: both engines, per parameter value); this reader only words them.

    Memoised by the map's value (frozen): every read of the wgmma shared-memory page rebuilds the same eight
    canonical layouts, and each is decided at all 45 values once per process (the test suite reads the pages
    91 times)."""
    found = maps.injective_at_each(fm)
    if not found:
        return None
    first = found[0]
    return (tuple(tuple(c.params.items()) for c in found),
            _cells_of(fm, dict(first.params), (dict(first.first), dict(first.second))))


def _cells_of(fm: Any, env: dict[str, int], found: tuple[dict[str, int], dict[str, int]]
              ) -> tuple[tuple[int, int], tuple[int, int], int]:
    """A collision's two (row, col) cells and the offset both reach."""
    p1, p2 = (tuple(p[d.name] for d in fm.inputs) for p in found)
    return p1, p2, int(fm.at(found[1], env)["offset"])  # type: ignore[return-value]


def _scale_example(ctx: _Ctx, role: str, sec: Section, atoms: dict[tuple[str, str], tuple[int, int, int]]) -> None:
    """"128B MN major swizzle atom would have a shape of (8*(128/32))x8 = 32x8 for tf32"."""
    number = ctx.number(role)
    rx = re.compile(r"(\d+)B\s+(MN|K)\s+major swizzle atom would have a shape of\s*\(?\s*(\d+)\s*\*\s*\(\s*128\s*/\s*"
                    r"(\d+)\s*\)\s*\)?\s*x\s*(\d+)\s*=\s*(\d+)\s*x\s*(\d+)", re.I)
    page = ctx.pages[role][1]
    for b in sec.blocks:
        if not isinstance(b, Text):
            continue
        m = rx.search(b.text.replace("\\*", "*"))
        if not m:
            continue
        mode, major = f"{m.group(1)}B", m.group(2).upper()
        a, bits, kk, ra, rb = (int(m.group(i)) for i in (3, 4, 5, 6, 7))
        line = _line_of(page, b.line, "shape of")
        w = _Where(page.path, line, _col_in(page, line, "("), m.group(0))
        atom = atoms.get((major, mode))
        problems = []
        if a * (128 // bits) != ra or kk != rb:
            problems.append(f"({a}*(128/{bits}))x{kk} is {a * (128 // bits)}x{kk}, not {ra}x{rb}")
        if atom is not None and (atom[0], atom[1]) != (a, kk):
            problems.append(f"the table's {major}-major {mode} atom is {atom[0]}x{atom[1]}, the example starts from {a}x{kk}")
        if problems:
            ctx.findings.append(_finding("smem-table", w, "the atom-size example: " + "; ".join(problems),
                                         {"example": m.group(0)}, number))


def _line_of(page: Page, start: int, needle: str) -> int:
    """The first page line from ``start`` (a few lines on: a paragraph's continuation) that has ``needle``."""
    for line in range(start, min(start + 6, len(page.lines)) + 1):
        if needle in page.lines[line - 1]:
            return line
    return start


def _definition_clauses(cell: str) -> list[tuple[str, str]]:
    """``* No-Swizzling: ... * Swizzled layouts: ...`` -> [(condition, statement)]; no bullets: [("", cell)]."""
    parts = [p.strip() for p in cell.split("*") if p.strip()]
    out = []
    for p in parts:
        m = re.match(r"(No-Swizzling|Interleave\w*|Swizzled layouts?)\s*:\s*(.*)", p, re.I)
        out.append((m.group(1).lower(), m.group(2)) if m else ("", p))
    return out


_OFFSET_DEF = re.compile(r"offset from the first\s+(?:(\d+|\(swizzle-byte-size/16\))\s+)?(rows?|columns?)\s+to the "
                         r"(?:next|second)\s+(?:\d+\s+|\(swizzle-byte-size/16\)\s+)?(rows?|columns?)", re.I)


def _stated(statement: str, units: int) -> tuple[str, int] | str | None:
    """A definition as (dimension, count of 16-byte units or rows), ``"unused"``, or None (not understood)."""
    if re.search(r"not used", statement, re.I):
        return "unused"
    m = _OFFSET_DEF.search(statement)
    if not m:
        return None
    n = m.group(1)
    count = 1 if n is None else (units if n.startswith("(") else int(n))
    return ("rows" if m.group(2).lower().startswith("row") else "columns"), count


def _implied(c: _Canonical, name: str) -> tuple[str, int] | str:
    """Where the canonical layout puts stride ``name``: (dimension, how many rows or 16-byte units before
    it), or "unused".  Rows are the M/N index, columns the K index (the page's normalised matrix)."""
    for dim, leaves, contiguous in (("rows", c.row, c.major == "MN"), ("columns", c.colm, c.major == "K")):
        before: Any = 1
        for s, d in leaves:
            if isinstance(d, Var) and d.name == name:
                env = {"T": 8, "m": 2, "k": 2}
                count = _value(before, env)
                if contiguous:
                    count //= env["T"]
                return dim, count
            before = op(before, "*", s)
    return "unused"


def _definitions(ctx: _Ctx, canon: dict[tuple[str, str], _Canonical]) -> None:
    for role, name in (("wgmma.shared.lbo", "LBO"), ("wgmma.shared.sbo", "SBO")):
        if role not in ctx.pages:
            continue
        sec, page = ctx.pages[role]
        number = sec.number
        table = next((b for b in sec.blocks if isinstance(b, Table)), None)
        if table is None:
            continue
        for texts, cols, line in _cells(table, 2):
            major = major_of_words(texts[0])
            if major is None:
                continue
            for cond, statement in _definition_clauses(texts[1]):
                for (mj, mode), c in sorted(canon.items()):
                    if mj != major:
                        continue
                    applies = (cond == "" or (cond.startswith(("no-swizzl", "interleave")) and mode == "none")
                               or (cond.startswith("swizzled") and mode != "none"))
                    if not applies:
                        continue
                    stated = _stated(statement, 1 << c.swizzle.bits)
                    if stated is None:
                        continue
                    implied = _implied(c, name)
                    if stated != implied:
                        ctx.findings.append(_finding(
                            "smem-definition", _Where(page.path, line, cols[1], statement),
                            f"{name} of {major}-major {mode}: the definition says {_said(stated)}, but the canonical "
                            f"layout {c.text} (line {c.line}) gives {name} {_said(implied)}",
                            {"stated": stated, "canonical": implied, "layout": c.text}, number))


def _said(x: Any) -> str:
    if x == "unused":
        return "not used"
    dim, n = x
    return f"the offset after the first {n} {dim}"


def _param_table(table: Table) -> dict[str, tuple[str, int, int]]:
    out = {}
    for texts, cols, line in _cells(table, 2):
        if len(texts) >= 2:
            out[texts[0].strip()] = (texts[1].strip(), line, cols[1])
    return out


_EXAMPLE_HEAD = re.compile(r"(K|MN)-Major,\s*(.+?)\s+and\s+(\w+)\s+type", re.I)


def _examples(ctx: _Ctx, canon: dict[tuple[str, str], _Canonical]) -> None:
    from ..layout.notations.cute import flatten
    from ..layout.notations.cute_shared import parse_cute_shared
    from ..layout.notations.errors import NotationError
    if CANONICAL not in ctx.pages:
        return
    sec, page = ctx.pages[CANONICAL]
    number = sec.number
    blocks = list(sec.blocks)
    for k, b in enumerate(blocks):
        if not isinstance(b, Text):
            continue
        h = _EXAMPLE_HEAD.match(b.text)
        if not h:
            continue
        major, mode, tname = h.group(1).upper(), mode_of_words(h.group(2)), h.group(3).lower()
        exact = canonical_text = table = None
        for b2 in blocks[k + 1:]:
            if isinstance(b2, Text) and _EXAMPLE_HEAD.match(b2.text):
                break
            if isinstance(b2, Text) and b2.text.startswith("Exact layout"):
                exact = b2
            elif isinstance(b2, Text) and b2.text.startswith("Canonical Layout"):
                canonical_text = b2
            elif isinstance(b2, Table) and table is None:
                table = b2
        if mode is None or exact is None or tname not in TYPE_BITS:
            continue
        bits = TYPE_BITS[tname]
        lid = f"wgmma.shared.example.{major}.{mode}.{tname}"
        ex_text = exact.text.split(":", 1)[1].strip()
        ex_line = exact.line
        ex_col = _col_in(page, ex_line, ex_text)
        try:
            sw = parse_cute_shared(ex_text, f"{page.path}")
        except NotationError as e:
            ctx.findings.append(_finding("smem-layout", _Where(page.path, ex_line, ex_col + e.col - 1, ex_text),
                                         f"the exact layout cannot be read: {e.message}", {"layout": ex_text}, number))
            continue
        lay = sw.layout
        r, cm = lay.mode(0), lay.mode(1)
        row_mode = (list(flatten(r.shape)), list(flatten(r.stride)))
        col_mode = (list(flatten(cm.shape)), list(flatten(cm.stride)))
        if 128 % bits:
            continue
        try:
            shared = make_shared(r.size(), cm.size(), row_mode, col_mode, bits, sw.swizzle, "address", 0)
            fm = concrete_map(row_mode, col_mode, sw.swizzle, 128 // bits)
        except ValueError as e:  # a swizzle of other than 16-byte units: reported by the page's statements
            ctx.findings.append(_finding("smem-layout", _Where(page.path, ex_line, ex_col, ex_text),
                                         f"the exact layout cannot be read: {e}", {"layout": ex_text}, number))
            continue
        _map(ctx, lid, CANONICAL, ex_line, fm, ex_text, "wgmma",
             f"exact layout of the {major}-major {mode} {tname} example, {bits}-bit elements, offsets in elements")
        _exact_injective(ctx, number, lid, shared, ex_text, ex_line, ex_col, page)
        c = canon.get((major, mode))
        if c is None:
            continue
        params = _param_table(table) if table is not None else {}
        _example_facts(ctx, number, page, c, major, mode, tname, bits, sw, params, canonical_text, ex_text, ex_line,
                       ex_col, row_mode, col_mode)


def _exact_injective(ctx: _Ctx, number: str, lid: str, shared: Any, text: str, line: int, col: int, page: Page) -> None:
    found = maps.settled(maps.injective(shared.map))  # the one decider's verdict (both engines)
    if found is None:
        return
    assert isinstance(found, PointsCollide)
    p1, p2, o = _cells_of(shared.map, {}, (dict(found.first), dict(found.second)))
    ctx.findings.append(_finding(
        "smem-injective", _Where(page.path, line, col, text),
        f"the exact layout {text} maps two cells to one offset: (row {p1[0]}, col {p1[1]}) and "
        f"(row {p2[0]}, col {p2[1]}) both at element offset {o}",
        {"first": {"row": p1[0], "col": p1[1]}, "second": {"row": p2[0], "col": p2[1]}, "offset": o}, number))


_SIZEOF = re.compile(r"^(\d+)\s*\*\s*sizeof\((\w+)\)$")
_ENCODING = re.compile(r"^\((LBO|SBO)\)\s*>>\s*(\d+)\s*=\s*(\d+)$")


def _example_facts(ctx: _Ctx, number: str, page: Page, c: _Canonical, major: str, mode: str, tname: str, bits: int,
                   sw: Any, params: dict[str, tuple[str, int, int]], canonical_text: Text | None, ex_text: str,
                   ex_line: int, ex_col: int, row_mode: Any, col_mode: Any) -> None:
    head = f"the {major}-major {mode} {tname} example"
    # the canonical layout it names, its swizzle and the exact layout as an instance of it are compared as layouts,
    # by both engines, with the page's statements (``verify.catalog.statements_shared``, ``verify.checks.statements``)
    env: dict[str, int] = {}
    for key in ("T", "m", "k"):
        if key in params and params[key][0].isdigit():
            env[key] = int(params[key][0])
    if "T" in env and env["T"] * bits != 128:
        v, line, col = params["T"]
        ctx.findings.append(_finding("smem-example", _Where(page.path, line, col, v),
                                     f"{head}: T = {env['T']}, but T = 128 / {bits} bits = {128 // bits}",
                                     {"T": env["T"], "bits": bits}, number))
    for name in ("LBO", "SBO"):
        if name not in params:
            continue
        v, line, col = params[name]
        m = _SIZEOF.match(v)
        if m:
            if m.group(2).lower() != tname:
                ctx.findings.append(_finding("smem-example", _Where(page.path, line, col, v),
                                             f"{head}: {name} = {v} counts {m.group(2)} elements in a {tname} example",
                                             {}, number))
        enc_key = f"Encoding of {name} in descriptor"
        if enc_key in params:
            ev, eline, ecol = params[enc_key]
            em = _ENCODING.match(ev)
            if m and em:
                got = (int(m.group(1)) * bits // 8) >> int(em.group(2))
                if got != int(em.group(3)):
                    ctx.findings.append(_finding(
                        "smem-example", _Where(page.path, eline, ecol, ev),
                        f"{head}: {name} = {v} = {int(m.group(1)) * bits // 8} bytes, and ({name}) >> {em.group(2)} = "
                        f"{got}, not {em.group(3)}", {"bytes": int(m.group(1)) * bits // 8, "stated": int(em.group(3))},
                        number))
                if got >= 1 << 14:
                    ctx.findings.append(_finding("smem-example", _Where(page.path, eline, ecol, ev),
                                                 f"{head}: the encoded {name} {got} does not fit the 14-bit field",
                                                 {"encoded": got}, number))


# ----------------------------------------------------------------------------- descriptor format

_RANGE = re.compile(r"^(\d{1,2})\s*[–-]\s*(\d{1,2})$")


def _descriptor(ctx: _Ctx, canon: dict[tuple[str, str], _Canonical]) -> None:
    if "wgmma.shared.descriptor" not in ctx.pages:
        return
    sec, page = ctx.pages["wgmma.shared.descriptor"]
    number = sec.number
    tables = [b for b in sec.blocks if isinstance(b, Table)]
    if not tables:
        return
    fields = _descriptor_fields(tables[0])
    code = next((b for b in sec.blocks if isinstance(b, Code) and "matrix-descriptor-encode" in b.text), None)
    _field_checks(ctx, page, number, fields, code)
    # swizzle codes fit their field and name distinct modes
    for lo, hi, size, desc, line, cols, _ in fields:
        codes = re.findall(r"(\d+)\s*:\s*([^*]+?)(?=\s*\*|$)", desc)
        if len(codes) >= 2:
            seen: dict[str | None, int] = {}
            for v, words in codes:
                if int(v) >= 1 << size:
                    ctx.findings.append(_finding("descriptor-format", _Where(page.path, line, cols[2], f"{v}:"),
                                                 f"swizzle code {v} does not fit the {size}-bit field", {}, number))
                md = mode_of_words(words)
                if md in seen:
                    ctx.findings.append(_finding("descriptor-format", _Where(page.path, line, cols[2], f"{v}:"),
                                                 f"codes {seen[md]} and {v} both name {md}", {}, number))
                seen[md] = int(v)
    _base_offset(ctx, number, sec, page, canon)


def _descriptor_fields(table: Table) -> list[tuple[int, int, int, str, int, list[int], tuple[int, int]]]:
    """A descriptor table's rows ``bits | size | description`` as (lo, hi, size, description, line, columns, the range
    as the page writes it): wgmma's page writes ``13–0``, tcgen05's ``0-13`` (and ``52`` for one bit)."""
    out = []
    for texts, cols, line in _cells(table, 3):
        m = _RANGE.match(texts[0]) or re.fullmatch(r"(\d{1,2})()", texts[0])
        if not m or len(texts) < 3 or not texts[1].isdigit():
            continue
        a = int(m.group(1))
        b = int(m.group(2)) if m.group(2) else a
        out.append((min(a, b), max(a, b), int(texts[1]), texts[2], line, cols, (a, b)))
    return out


def _field_checks(ctx: _Ctx, page: Page, number: str, fields: Sequence[tuple[int, int, int, str, int, list[int],
                                                                           tuple[int, int]]], encode: Any) -> None:
    """A descriptor table against itself: each field's size against its bit range, a bit past 63, two fields that
    overlap, and ``matrix-descriptor-encode``'s width (the ``encode`` block's ``(x & MASK) >> S``) against the
    fields it encodes."""
    for lo, hi, size, desc, line, cols, shown in fields:
        if hi - lo + 1 != size:
            ctx.findings.append(_finding("descriptor-format", _Where(page.path, line, cols[1], str(size)),
                                         f"bits {shown[0]}-{shown[1]} are {hi - lo + 1} bits, the table says {size}",
                                         {"range": list(shown), "size": size}, number))
        if hi > 63:
            ctx.findings.append(_finding("descriptor-format", _Where(page.path, line, cols[0], f"{shown[0]}-{shown[1]}"),
                                         f"bit {hi} is outside a 64-bit descriptor", {"range": list(shown)}, number))
    for i, a in enumerate(fields):
        for b in fields[i + 1:]:
            if a[0] <= b[1] and b[0] <= a[1]:
                ctx.findings.append(_finding(
                    "descriptor-format", _Where(page.path, b[4], b[5][0], f"{b[6][0]}–{b[6][1]}"),
                    f"bits {b[6][0]}-{b[6][1]} overlap bits {a[6][0]}-{a[6][1]} (line {a[4]})",
                    {"first": list(a[6]), "second": list(b[6])}, number))
    m = re.search(r"\(x\s*&\s*0x([0-9A-Fa-f]+)\)\s*>>\s*(\d+)", encode.text) if encode is not None else None
    if m is None:
        return
    width = int(m.group(1), 16).bit_length() - int(m.group(2))
    for lo, hi, size, desc, line, cols, _ in fields:
        if "matrix-descriptor-encode" in desc and size != width:
            ctx.findings.append(_finding(
                "descriptor-format", _Where(page.path, line, cols[1], str(size)),
                f"matrix-descriptor-encode keeps {width} bits ({m.group(0)}), the field has {size}",
                {"encode_bits": width, "field_bits": size}, number))


def _base_offset(ctx: _Ctx, number: str, sec: Section, page: Page, canon: dict[tuple[str, str], _Canonical]) -> None:
    tables = [b for b in sec.blocks if isinstance(b, Table)]
    table = next((t for t in tables if any("Starting address" in h for h in t.header)), None)
    code: Any = next((b for b in sec.blocks if isinstance(b, Code) and "base offset" in b.text), None)
    rule = next((b for b in sec.blocks if isinstance(b, Text) and "non-zero" in b.text), None)
    if code is None and rule is not None and re.search(r"base offset\s*=", rule.text):
        code = rule  # the formula inline in the rule's sentence (9.1's tcgen05 page)
    if table is None:
        return
    periods = {c.mode: c.swizzle.period for c in canon.values() if not c.swizzle.identity}
    fm = re.search(r"\(\s*pattern start addr\s*>>\s*(0x[0-9a-fA-F]+|\d+)\s*\)\s*&\s*(0x[0-9a-fA-F]+|\d+)",
                   code.text) if code is not None else None
    for texts, cols, line in _cells(table, 2):
        mode = mode_of_words(texts[0])
        m = re.match(r"(\d+)-Byte boundary", texts[1])
        if mode is None or m is None:
            continue
        boundary = int(m.group(1))
        if mode in periods and periods[mode] != boundary:
            ctx.findings.append(_finding(
                "base-offset", _Where(page.path, line, cols[1], texts[1]),
                f"the {mode} pattern is said to start on a {boundary}-byte boundary, but the canonical swizzle of "
                f"{mode} repeats every {periods[mode]} bytes", {"boundary": boundary, "period": periods[mode]}, number))
        if fm is None or rule is None:
            continue
        shift, mask = int(fm.group(1), 0), int(fm.group(2), 0)
        row = int(lead.group(1)) if (lead := re.match(r"(\d+)", texts[0])) else 16
        for start in range(row, 1 << 14, row):
            if start % boundary and (start >> shift) & mask == 0:
                ctx.findings.append(_finding(
                    "base-offset", _Where(page.path, code.line, _col_in(page, code.line, "base offset ="
                                          if isinstance(code, Text) else "base offset"), code.text),
                    f"{texts[0]}: a pattern starting at {start:#x} (a {row}-byte row, not a {boundary}-byte boundary) must "
                    f"have a non-zero base offset (line {rule.line}), but ({start:#x} >> {fm.group(1)}) & {fm.group(2)} = 0",
                    {"mode": mode, "start": start, "boundary": boundary, "formula": fm.group(0)}, number))
                break


# ----------------------------------------------------------------------------- the tcgen05 pages

def _tcgen05(ctx: _Ctx) -> None:
    t53_atoms: dict[tuple[str, str], tuple[int, int, int]] = {}
    n53 = ""
    if TC_SWIZZLE in ctx.pages:
        sec, page = ctx.pages[TC_SWIZZLE]
        found53 = _captioned(sec, TC_ATOMS)
        if found53 is None:
            _unread(ctx, TC_SWIZZLE, f"the table of swizzle atoms ('{TC_ATOMS}')")
        if found53 is not None:
            t53, n53 = found53
            t53_atoms = _atoms(t53)
            where = f" ({ctx.number(CANONICAL)})" if CANONICAL in ctx.pages else ""
            canon_sw = {"none": Swizzle(0, 4, 3), "32B": Swizzle(1, 4, 3), "64B": Swizzle(2, 4, 3), "128B": Swizzle(3, 4, 3)}
            for (major, mode), (a, b, line) in sorted(t53_atoms.items()):
                sw = BASE32B_SWIZZLE if mode == "128B_base32B" else canon_sw[mode]
                derived = BASE32B_NOTE if mode == "128B_base32B" else (
                    f"swizzle {sw.text()} as the wgmma canonical layouts{where} give it for {mode}")
                _map(ctx, f"tcgen05.shared.atom.{major}.{mode}", TC_SWIZZLE, line, atom_family(major, a, b, sw, TCGEN05_T),
                     f"{a}x{b} 128b elements, {sw.text()}", "tcgen05",
                     f"{n53} atom in elements of 128/T bits", derived, ("in_range", "injective", "surjective"))
            _scale_example(ctx, TC_SWIZZLE, sec, t53_atoms)
            # Table 53 against Table 38 (the same modes, the same atoms)
            if WGMMA in ctx.pages:
                s38 = ctx.pages[WGMMA][0]
                found38 = _captioned(s38, WGMMA_ATOMS)
                if found38 is not None:
                    t38, n38 = found38
                    a38 = _atoms(t38)
                    for key, (a, b, line) in sorted(t53_atoms.items()):
                        if key in a38 and (a38[key][0], a38[key][1]) != (a, b):
                            ctx.findings.append(_finding(
                                "smem-table", ctx.where(TC_SWIZZLE, line, f"{a}x{b}"),
                                f"{n53} gives the {key[0]}-major {key[1]} atom {a}x{b}, {n38} (wgmma, "
                                f"{Path(ctx.pages[WGMMA][1].path).name}:{a38[key][2]}) {a38[key][0]}x{a38[key][1]}",
                                {"table53": [a, b], "table38": list(a38[key][:2])}, ctx.number(TC_SWIZZLE)))
    if TC_VALID in ctx.pages and t53_atoms:
        _valid_combinations(ctx, t53_atoms, n53)


_MAJOR_OF = {("row", "A"): "K", ("column", "B"): "K", ("column", "A"): "MN", ("row", "B"): "MN"}
ALL_MODES = ("128B_base32B", "128B", "64B", "32B", "none")


def _valid_combinations(ctx: _Ctx, atoms: dict[tuple[str, str], tuple[int, int, int]], atoms_name: str) -> None:
    sec, page = ctx.pages[TC_VALID]
    found = _captioned(sec, TC_COMBINATIONS)
    table = found[0] if found is not None else next((b for b in sec.blocks if isinstance(b, Table)), None)
    if table is None:
        return
    name = found[1] if found is not None else _table_name(sec, table)
    known = sorted({mode for _, mode in atoms})
    for texts, cols, line in _cells(table, 4):
        if len(texts) < 4:
            continue
        sizes, majorness, matrix, supported = texts[:4]
        word = majorness.split("(")[0].strip().lower()
        major = _MAJOR_OF.get((word, matrix.strip()))
        if major is None:
            continue
        s = supported.lower()
        modes: list[str | None]
        if s.startswith("all except"):
            modes = [m for m in known if m != mode_of_words(supported[len("all except"):])]
        elif s.startswith("only"):
            modes = [mode_of_words(supported[len("only"):])]
        elif s.startswith("all"):
            modes = list(known)
        else:
            continue
        for mode in modes:
            if mode is not None and (major, mode) not in atoms:
                t53 = [v[2] for k, v in atoms.items() if k[1] == mode]
                ctx.findings.append(_finding(
                    "smem-table", _Where(page.path, line, cols[3], supported),
                    f"{name} allows {major}-major ({majorness} {matrix}) operands of {sizes} {mode_words(mode)} "
                    f"('{supported}'), but {atoms_name} gives that mode no {major}-major atom"
                    + (f" (its row, line {t53[0]}, is {'/'.join(m for (m, md) in atoms if md == mode)} only)" if t53 else ""),
                    {"major": major, "mode": mode, "types": sizes}, ctx.number(TC_VALID)))


# ----------------------------------------------------------------------------- the tcgen05 descriptor page (9.1)

_FIXED = re.compile(r"Fixed constant value of\s+(0b[01]+|0x[0-9A-Fa-f]+|\d+)\b")
_CODES = re.compile(r"(?<![\w-])(\d)\\?\.\s+(.*?)(?=\s+\d\\?\.\s|\s+Note\b|$)")
# the fields of Table 40 by what their descriptions say, in the order the model (``layout.descriptor``) names them
_FIELD_WORDS = (("start", r"start address"), ("lbo", r"Leading dimension byte (?:offset|address)"),
                ("sbo", r"Stride dimension byte offset"), ("version", r"Fixed constant"),
                ("base_offset", r"base offset"), ("lbo_mode", r"Leading dimension stride mode"),
                ("fixed", r"Fixed constant"), ("swizzle", r"swizzling mode"))


def _field_name(desc: str, taken: set[str]) -> str:
    for name, rx in _FIELD_WORDS:
        if name not in taken and re.search(rx, desc, re.I):
            return name
    return ""


def _tcgen05_descriptor(ctx: _Ctx) -> None:
    """Table 40 (9.7.16.4.1, new in this copy with PTX ISA 9.1): the fields as the map ``(field, bit) -> position``
    and the swizzle codes as ``mode -> code`` (the ids of ``specs/tcgen05.descriptor.toml``, which judges them);
    its errata from its own statements: a field's size against its bit range, overlaps, the encode's width, a
    fixed constant that does not fit its field, the swizzle codes against their field and the invalid ones the
    note names, the leading-dimension mode bit against the strides page's "Bit #52", and the base-offset rule as
    for wgmma."""
    from ..layout.descriptor import FIELDS, SWIZZLE_ORDER, fields_formula, fields_map
    sec, page = ctx.pages[TC_DESCRIPTOR]
    number = sec.number
    table = next((b for b in sec.blocks if isinstance(b, Table) and b.header and "Bit-field" in b.header[0]), None)
    if table is None:
        _unread(ctx, TC_DESCRIPTOR, "the table of the descriptor's fields (headed 'Bit-field | Size in bits | ...')")
        return
    rows = sorted(_descriptor_fields(table), key=lambda r: r[0])
    enc = next((b for b in sec.blocks if isinstance(b, (Text, Code)) and "matrix-descriptor-encode(x)" in b.text), None)
    _field_checks(ctx, page, number, rows, enc)
    for lo, hi, size, desc, line, cols, _ in rows:
        fm = _FIXED.search(desc)
        if fm and int(fm.group(1), 0).bit_length() > hi - lo + 1:
            value = int(fm.group(1), 0)
            ctx.findings.append(_finding(
                "descriptor-format", _Where(page.path, line, cols[2] + max(desc.find(fm.group(1)), 0), fm.group(1)),
                f"bits {lo}-{hi} ({hi - lo + 1} bits) are given the fixed constant {fm.group(1)}, a "
                f"{value.bit_length()}-bit value", {"range": [lo, hi], "value": fm.group(1),
                                                    "value_bits": value.bit_length()}, number))
    # the fields as a map, in bit order; named by their descriptions
    taken: set[str] = set()
    names = []
    for lo, hi, size, desc, line, cols, _ in rows:
        names.append(_field_name(desc, taken))
        taken.add(names[-1])
    model = [f.name for f in FIELDS["tcgen05"]]
    if rows and names == model:
        ranges = [(r[0], r[1] - r[0] + 1) for r in rows]
        _map(ctx, "tcgen05.descriptor.fields", TC_DESCRIPTOR, table.line, fields_map(ranges), fields_formula(ranges),
             "tcgen05", "Table 40: " + "; ".join(f"{n} bits {r[0]}-{r[1]}" for n, r in zip(names, rows)), kind="map",
             unit="")
    elif rows:
        ctx.findings.append(_finding(
            "descriptor-format", _Where(page.path, table.line, 1, table.header[0]),
            f"the table's fields, by their descriptions ({', '.join(n or '?' for n in names)}), are not the tcgen05 "
            f"descriptor's ({', '.join(model)})", {"page": names, "model": model}, number))
    # the swizzle codes
    for lo, hi, size, desc, line, cols, _ in rows:
        if "swizzling mode" not in desc:
            continue
        codes = [(int(c), words) for c, words in _CODES.findall(desc)]
        seen: dict[str, int] = {}
        for v, words in codes:
            md = mode_of_words(words)
            if v >= 1 << size:
                ctx.findings.append(_finding("descriptor-format", _Where(page.path, line, cols[2], f"{v}"),
                                             f"swizzle code {v} does not fit the {size}-bit field", {}, number))
            if md is not None and md in seen:
                ctx.findings.append(_finding("descriptor-format", _Where(page.path, line, cols[2], f"{v}"),
                                             f"codes {seen[md]} and {v} both name {md}", {}, number))
            if md is not None:
                seen.setdefault(md, v)
        inv = re.search(r"Values?\s+([\d,\sand]+?)\s+(?:are|is)\s+invalid", desc)
        if inv:
            said = sorted(int(x) for x in re.findall(r"\d+", inv.group(1)))
            rest = sorted(set(range(1 << size)) - {v for v, _ in codes})
            if said != rest:
                ctx.findings.append(_finding(
                    "descriptor-format", _Where(page.path, line, cols[2] + max(desc.find(inv.group(0)), 0), inv.group(0)),
                    f"the note calls {', '.join(map(str, said))} invalid, but the codes the field names leave "
                    f"{', '.join(map(str, rest)) or 'none'} unnamed", {"invalid": said, "unnamed": rest}, number))
        if seen:
            cases = "\n".join(f"{'code =' if k == 0 else '      '} {seen[md]} if mode == {k}"
                               for k, md in enumerate(SWIZZLE_ORDER) if md in seen)
            text = cases + "\n"
            _map(ctx, "tcgen05.descriptor.swizzle", TC_DESCRIPTOR, line,
                 FormulaMap(parse_formula(text, "x", ("mode",), ("code",)), (Dim("mode", len(SWIZZLE_ORDER)),),
                            (Dim("code", 1 << size),)), text, "tcgen05",
                 "Table 40 swizzle codes, modes in the order " + ", ".join(SWIZZLE_ORDER), kind="map", unit="")
    # the strides page's "Bit #52" names the mode field
    if "tcgen05.lbo" in ctx.pages:
        lsec, lpage = ctx.pages["tcgen05.lbo"]
        bit_text = next((b for b in lsec.blocks if isinstance(b, Text) and re.search(r"Bit #(\d+)", b.text)), None)
        mode_row = next((r for r in rows if re.search(r"Leading dimension stride mode", r[3], re.I)), None)
        if bit_text is not None and mode_row is not None:
            bit = int(re.search(r"Bit #(\d+)", bit_text.text).group(1))  # type: ignore[union-attr]
            if not mode_row[0] <= bit <= mode_row[1]:
                ctx.findings.append(_finding(
                    "descriptor-format", _Where(lpage.path, bit_text.line, _col_in(lpage, bit_text.line, "Bit #"), bit_text.text),
                    f"'Bit #{bit}' distinguishes the leading-dimension stride modes, but the descriptor's table "
                    f"({Path(page.path).name}:{mode_row[4]}) has the mode in bits {mode_row[0]}-{mode_row[1]}",
                    {"said": bit, "table": [mode_row[0], mode_row[1]]}, lsec.number))
    canon = _canonical_table(ctx, "tcgen05.canonical") or _canonical_table(ctx)
    _base_offset(ctx, number, sec, page, canon)


# ----------------------------------------------------------------------------- entry

def read(paths: Sequence[str | Path], against: Sequence[str | Path] | None = None,
         release: str = "") -> tuple[list[Spec], list[IngestFinding]]:
    """The specs (map layouts) and findings of the shared-memory sections among ``paths`` (module
    docstring); other pages give nothing.  Expectations come from the reviewed maps of the same ids."""
    strs = [str(p) for p in paths]
    pages = _read(strs)
    have = _sections(pages)
    if not have:
        return [], []
    if TC_SWIZZLE in have or TC_VALID in have:
        _siblings(strs, pages, have, TC_SWIZZLE)
        _siblings(strs, pages, have, TC_VALID)
        _siblings(strs, pages, have, WGMMA)
    ctx = _Ctx(have, [], [], release_of(pages))
    specs: list[Spec] = []
    reviewed = _reviewed(against, release)
    given = {str(Path(p).resolve()) for p in strs}
    for group, fn, instr in ((WGMMA, _wgmma, "wgmma"), (TC_SWIZZLE, _tcgen05, "tcgen05"),
                             (TC_DESCRIPTOR, _tcgen05_descriptor, "tcgen05")):
        if group not in have and not (group == TC_SWIZZLE and TC_VALID in have):
            continue
        before_maps, before_f = len(ctx.maps), len(ctx.findings)
        fn(ctx)
        role = group if group in have else TC_VALID
        sec, page = have[role]
        maps = tuple(_expect(m, reviewed) for m in ctx.maps[before_maps:] if str(Path(m.provenance.spec_path).resolve()) in given)
        ctx.findings[before_f:] = [f for f in ctx.findings[before_f:] if str(Path(f.page).resolve()) in given]
        if maps:
            src = Source(page.path, sec.heading.line, sec.number, sec.heading.title, version=ctx.release,
                         anchor=sec.heading.anchor)
            specs.append(Spec(page.path, src, instr, Shape(0, 0, 0, "shared"), (), maps=maps, page=page.path,
                              reviewed=tuple(reviewed[m.id] for m in maps if m.id in reviewed)))
    out = sorted(ctx.findings, key=lambda f: (f.page, f.line, f.column, f.kind, f.message))
    return specs, out


def _reviewed(against: Sequence[str | Path] | None, release: str = "") -> dict[str, MapLayout]:
    """The reviewed maps (``against``, default the bundled specs) of the facts that apply to ``release``."""
    from . import bundled
    from .known import applies
    from .spec import load_specs
    # a reviewed spec that does not load is an error (SpecError, one line, exit 2), never "no expectations"
    specs = load_specs(list(against) if against is not None else [bundled.resolve().path])
    return {m.id: m for s in specs if applies(s.source, release) for m in s.maps}


def _expect(m: MapLayout, reviewed: dict[str, MapLayout]) -> MapLayout:
    import dataclasses
    ref = reviewed.get(m.id)
    expect = {k: v for k, v in (ref.expect.items() if ref is not None else ()) if k in m.checks}
    return dataclasses.replace(m, expect=expect, provenance=dataclasses.replace(
        m.provenance, erratum=ref.provenance.erratum if ref is not None else ""))


__all__ = ["PAGE_MAPS", "SymError", "atom_family", "canonical_family", "parse_symbolic", "read"]


