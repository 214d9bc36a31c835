"""The wgmma shared-memory page (9.7.15.5.1.2) read into map layouts and the errata of its text: the swizzle atoms,
the canonical layouts, the LBO/SBO definitions, the worked examples and the matrix-descriptor table
(``verify.catalog.shared_pages`` says what is checked against what)."""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

from ..checks import maps
from ..formula import Var
from ..layout.descriptor import stride_roles
from ..layout.named import FormulaMap
from ..layout.shared import Swizzle, make_shared, op
from ..witnesses import PointsCollide
from .page_model import Code, Page, Section, Table, Text
from .shared_symbolic import (SymError, _value, atom_family, canonical_family, concrete_map,
                              parse_symbolic)

from .shared_page_context import (CANONICAL, TYPE_BITS, WGMMA, WGMMA_ATOMS, WGMMA_T, captioned, table_cells, column_of,
                                  PageContext, finding, add_map, report_unread, Where, major_of_words, mode_of_words)


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


def atoms_of(table: Table) -> dict[tuple[str, str], tuple[int, int, int]]:
    """Table 38 / 53: (major, mode) -> (mn units, k units, line); '–' rows are left out."""
    out: dict[tuple[str, str], tuple[int, int, int]] = {}
    for texts, _, line in table_cells(table, 3):
        mode, major, shape = mode_of_words(texts[0]), major_of_words(texts[1]), texts[2]
        m = re.fullmatch(r"(\d+)\s*x\s*(\d+)", shape)
        if mode is None or major is None or m is None:
            continue
        a, b = int(m.group(1)), int(m.group(2))
        out[(major, mode)] = (a, b, line)
    return out


def read_wgmma(ctx: PageContext) -> None:
    sec, page = ctx.pages[WGMMA]
    number = sec.number
    found38 = captioned(sec, WGMMA_ATOMS)
    t38, n38 = found38 if found38 is not None else (None, "Table 38")
    if t38 is None:
        report_unread(ctx, WGMMA, f"the table of swizzle atoms ('{WGMMA_ATOMS}')")
    atoms = atoms_of(t38) if t38 is not None else {}
    canon = canonical_table(ctx)
    widths = {c.mode: 1 << c.swizzle.bits for c in canon.values()}
    swizzles = {c.mode: c.swizzle for c in canon.values()}
    # atoms: bijections of their swizzle; widths against the canonical swizzles
    for (major, mode), (a, b, line) in sorted(atoms.items()):
        units = a if major == "MN" else b
        rows_k = b if major == "MN" else a
        w = widths.get(mode)
        if w is not None and (units != w or rows_k != 8):
            ctx.findings.append(finding(
                "smem-table", ctx.where(WGMMA, line, f"{a}x{b}"),
                f"{n38} gives the {major}-major {mode} atom {a}x{b} (16-byte units), but the canonical layout's "
                f"{swizzles[mode].text()} swizzles rows of {w} units in groups of 8",
                {"table": [a, b], "swizzle_units": w}, number))
        sw = swizzles.get(mode)
        if sw is None:
            continue
        add_map(ctx, f"wgmma.shared.atom.{major}.{mode}", WGMMA, line, atom_family(major, a if major == "MN" else a,
             b, sw, WGMMA_T), f"{a}x{b} 128b elements, {sw.text()}", "wgmma",
             f"{n38} atom in elements of 128/T bits, swizzled as the canonical table's swizzle for its width",
             checks=("in_range", "injective", "surjective"))
    scale_example(ctx, WGMMA, sec, atoms)
    # canonical families
    for (major, mode), c in sorted(canon.items()):
        units = 1 << c.swizzle.bits
        try:
            fm, dense = canonical_family(c.row, c.colm, c.swizzle, WGMMA_T, units, stride_roles(major, mode))
        except SymError as e:
            ctx.findings.append(finding("smem-layout", Where(page.path, c.line, c.col + e.offset, c.text),
                                         f"the canonical layout cannot be read: {e}", {"layout": c.text},
                                         ctx.number(CANONICAL)))
            continue
        add_map(ctx, f"wgmma.shared.{major}.{mode}", WGMMA, c.line, fm, f"{c.swizzle.text()} o {c.text}", "wgmma",
             "T = 128 / bits; m, k repeats; LBO, SBO dense: " + ", ".join(f"{k} = {_show(v)}" for k, v in dense.items()))
        _injective_where(ctx, c, fm)
    _definitions(ctx, canon)
    _examples(ctx, canon)
    _descriptor(ctx, canon)


def _show(e: Any) -> str:
    from ..layout.family import extent_text
    return extent_text(e)


def canonical_table(ctx: PageContext, role: str = CANONICAL) -> dict[tuple[str, str], _Canonical]:
    if role not in ctx.pages:
        return {}
    sec, page = ctx.pages[role]
    number = sec.number
    table = next((b for b in sec.blocks if isinstance(b, Table) and any("Canonical" in h for h in b.header)), None)
    out: dict[tuple[str, str], _Canonical] = {}
    if table is None:
        report_unread(ctx, role, "the table of canonical layouts (a header naming 'Canonical Layout')")
        return out
    for texts, cols, line in table_cells(table, 4):
        major, mode, text, swz = major_of_words(texts[0]), mode_of_words(texts[1]), texts[2], _swizzle_of(texts[3])
        if major is None or mode is None or swz is None:
            continue
        try:
            row, colm = parse_symbolic(text)
        except SymError as e:
            ctx.findings.append(finding("smem-layout", Where(page.path, line, cols[2] + e.offset, text),
                                         f"the canonical layout cannot be read: {e}", {"layout": text}, number))
            continue
        out[(major, mode)] = _Canonical(major, mode, text, swz, line, cols[2], row, colm)
    return out


def _injective_where(ctx: PageContext, c: _Canonical, fm: FormulaMap) -> None:
    """Enumerate every parameter value: the values for which the canonical family is not injective."""
    found = _not_injective(fm)
    if found is None:
        return
    bad = [dict(env) for env in found[0]]
    env, (p1, p2, off) = bad[0], found[1]
    ks = sorted({e["Rk"] for e in bad})
    by_t = {t: min(e["Rk"] for e in bad if e["T"] == t) for t in sorted({e["T"] for e in bad})}
    ctx.findings.append(finding(
        "smem-injective", Where(ctx.pages[CANONICAL][1].path, c.line, c.col, c.text),
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


def scale_example(ctx: PageContext, role: str, sec: Section, atoms: dict[tuple[str, str], tuple[int, int, int]]) -> None:
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
        w = Where(page.path, line, column_of(page, line, "("), m.group(0))
        atom = atoms.get((major, mode))
        problems = []
        if a * (128 // bits) != ra or kk != rb:
            problems.append(f"({a}*(128/{bits}))x{kk} is {a * (128 // bits)}x{kk}, not {ra}x{rb}")
        if atom is not None and (atom[0], atom[1]) != (a, kk):
            problems.append(f"the table's {major}-major {mode} atom is {atom[0]}x{atom[1]}, the example starts from {a}x{kk}")
        if problems:
            ctx.findings.append(finding("smem-table", w, "the atom-size example: " + "; ".join(problems),
                                         {"example": m.group(0)}, number))


def _line_of(page: Page, start: int, needle: str) -> int:
    """The first page line from ``start`` (a few lines on: a paragraph's continuation) that has ``needle``."""
    for line in range(start, min(start + 6, len(page.lines)) + 1):
        if needle in page.lines[line - 1]:
            return line
    return start


def definition_rows(sec: Section) -> Iterator[tuple[str, str, str, str, list[int], int]]:
    """The LBO / SBO definition table's clauses: (major-ness, condition, statement, the cell, its columns, its line)
    of each row whose first cell names a major-ness; none where the section has no table."""
    table = next((b for b in sec.blocks if isinstance(b, Table)), None)
    if table is None:
        return
    for texts, cols, line in table_cells(table, 2):
        major = major_of_words(texts[0])
        if major is None:
            continue
        for cond, statement in definition_clauses(texts[1]):
            yield major, cond, statement, texts[1], cols, line


def definition_clauses(cell: str) -> list[tuple[str, str]]:
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


def _definitions(ctx: PageContext, canon: dict[tuple[str, str], _Canonical]) -> None:
    for role, name in (("wgmma.shared.lbo", "LBO"), ("wgmma.shared.sbo", "SBO")):
        if role not in ctx.pages:
            continue
        sec, page = ctx.pages[role]
        number = sec.number
        for major, cond, statement, _, cols, line in definition_rows(sec):
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
                    ctx.findings.append(finding(
                        "smem-definition", Where(page.path, line, cols[1], statement),
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
    for texts, cols, line in table_cells(table, 2):
        if len(texts) >= 2:
            out[texts[0].strip()] = (texts[1].strip(), line, cols[1])
    return out


_EXAMPLE_HEAD = re.compile(r"(K|MN)-Major,\s*(.+?)\s+and\s+(\w+)\s+type", re.I)


def _examples(ctx: PageContext, canon: dict[tuple[str, str], _Canonical]) -> None:
    from ..layout.notations.cute_layout import flatten
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
        ex_col = column_of(page, ex_line, ex_text)
        try:
            sw = parse_cute_shared(ex_text, f"{page.path}")
        except NotationError as e:
            ctx.findings.append(finding("smem-layout", Where(page.path, ex_line, ex_col + e.col - 1, ex_text),
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
            ctx.findings.append(finding("smem-layout", Where(page.path, ex_line, ex_col, ex_text),
                                         f"the exact layout cannot be read: {e}", {"layout": ex_text}, number))
            continue
        add_map(ctx, lid, CANONICAL, ex_line, fm, ex_text, "wgmma",
             f"exact layout of the {major}-major {mode} {tname} example, {bits}-bit elements, offsets in elements")
        _exact_injective(ctx, number, lid, shared, ex_text, ex_line, ex_col, page)
        c = canon.get((major, mode))
        if c is None:
            continue
        params = _param_table(table) if table is not None else {}
        _example_facts(ctx, number, page, c, major, mode, tname, bits, sw, params, canonical_text, ex_text, ex_line,
                       ex_col, row_mode, col_mode)


def _exact_injective(ctx: PageContext, number: str, lid: str, shared: Any, text: str, line: int, col: int, page: Page) -> None:
    found = maps.settled(maps.injective(shared.map))  # the one decider's verdict (both engines)
    if found is None:
        return
    assert isinstance(found, PointsCollide)
    p1, p2, o = _cells_of(shared.map, {}, (dict(found.first), dict(found.second)))
    ctx.findings.append(finding(
        "smem-injective", Where(page.path, line, col, text),
        f"the exact layout {text} maps two cells to one offset: (row {p1[0]}, col {p1[1]}) and "
        f"(row {p2[0]}, col {p2[1]}) both at element offset {o}",
        {"first": {"row": p1[0], "col": p1[1]}, "second": {"row": p2[0], "col": p2[1]}, "offset": o}, number))


_SIZEOF = re.compile(r"^(\d+)\s*\*\s*sizeof\((\w+)\)$")
_ENCODING = re.compile(r"^\((LBO|SBO)\)\s*>>\s*(\d+)\s*=\s*(\d+)$")


def _example_facts(ctx: PageContext, number: str, page: Page, c: _Canonical, major: str, mode: str, tname: str, bits: int,
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
        ctx.findings.append(finding("smem-example", Where(page.path, line, col, v),
                                     f"{head}: T = {env['T']}, but T = 128 / {bits} bits = {128 // bits}",
                                     {"T": env["T"], "bits": bits}, number))
    for name in ("LBO", "SBO"):
        if name not in params:
            continue
        v, line, col = params[name]
        m = _SIZEOF.match(v)
        if m:
            if m.group(2).lower() != tname:
                ctx.findings.append(finding("smem-example", Where(page.path, line, col, v),
                                             f"{head}: {name} = {v} counts {m.group(2)} elements in a {tname} example",
                                             {}, number))
        enc_key = f"Encoding of {name} in descriptor"
        if enc_key in params:
            ev, eline, ecol = params[enc_key]
            em = _ENCODING.match(ev)
            if m and em:
                got = (int(m.group(1)) * bits // 8) >> int(em.group(2))
                if got != int(em.group(3)):
                    ctx.findings.append(finding(
                        "smem-example", Where(page.path, eline, ecol, ev),
                        f"{head}: {name} = {v} = {int(m.group(1)) * bits // 8} bytes, and ({name}) >> {em.group(2)} = "
                        f"{got}, not {em.group(3)}", {"bytes": int(m.group(1)) * bits // 8, "stated": int(em.group(3))},
                        number))
                if got >= 1 << 14:
                    ctx.findings.append(finding("smem-example", Where(page.path, eline, ecol, ev),
                                                 f"{head}: the encoded {name} {got} does not fit the 14-bit field",
                                                 {"encoded": got}, number))


# ----------------------------------------------------------------------------- descriptor format

_RANGE = re.compile(r"^(\d{1,2})\s*[–-]\s*(\d{1,2})$")


def _descriptor(ctx: PageContext, canon: dict[tuple[str, str], _Canonical]) -> None:
    if "wgmma.shared.descriptor" not in ctx.pages:
        return
    sec, page = ctx.pages["wgmma.shared.descriptor"]
    number = sec.number
    tables = [b for b in sec.blocks if isinstance(b, Table)]
    if not tables:
        return
    fields = descriptor_fields(tables[0])
    code = next((b for b in sec.blocks if isinstance(b, Code) and "matrix-descriptor-encode" in b.text), None)
    field_checks(ctx, page, number, fields, code)
    # swizzle codes fit their field and name distinct modes
    for lo, hi, size, desc, line, cols, _ in fields:
        codes = re.findall(r"(\d+)\s*:\s*([^*]+?)(?=\s*\*|$)", desc)
        if len(codes) >= 2:
            seen: dict[str | None, int] = {}
            for v, words in codes:
                if int(v) >= 1 << size:
                    ctx.findings.append(finding("descriptor-format", Where(page.path, line, cols[2], f"{v}:"),
                                                 f"swizzle code {v} does not fit the {size}-bit field", {}, number))
                md = mode_of_words(words)
                if md in seen:
                    ctx.findings.append(finding("descriptor-format", Where(page.path, line, cols[2], f"{v}:"),
                                                 f"codes {seen[md]} and {v} both name {md}", {}, number))
                seen[md] = int(v)
    base_offset_rule(ctx, number, sec, page, canon)


def descriptor_fields(table: Table) -> list[tuple[int, int, int, str, int, list[int], tuple[int, int]]]:
    """A descriptor table's rows ``bits | size | description`` as (lo, hi, size, description, line, columns, the range
    as the page writes it): wgmma's page writes ``13–0``, tcgen05's ``0-13`` (and ``52`` for one bit)."""
    out = []
    for texts, cols, line in table_cells(table, 3):
        m = _RANGE.match(texts[0]) or re.fullmatch(r"(\d{1,2})()", texts[0])
        if not m or len(texts) < 3 or not texts[1].isdigit():
            continue
        a = int(m.group(1))
        b = int(m.group(2)) if m.group(2) else a
        out.append((min(a, b), max(a, b), int(texts[1]), texts[2], line, cols, (a, b)))
    return out


def field_checks(ctx: PageContext, page: Page, number: str, fields: Sequence[tuple[int, int, int, str, int, list[int],
                                                                           tuple[int, int]]], encode: Any) -> None:
    """A descriptor table against itself: each field's size against its bit range, a bit past 63, two fields that
    overlap, and ``matrix-descriptor-encode``'s width (the ``encode`` block's ``(x & MASK) >> S``) against the
    fields it encodes."""
    for lo, hi, size, desc, line, cols, shown in fields:
        if hi - lo + 1 != size:
            ctx.findings.append(finding("descriptor-format", Where(page.path, line, cols[1], str(size)),
                                         f"bits {shown[0]}-{shown[1]} are {hi - lo + 1} bits, the table says {size}",
                                         {"range": list(shown), "size": size}, number))
        if hi > 63:
            ctx.findings.append(finding("descriptor-format", Where(page.path, line, cols[0], f"{shown[0]}-{shown[1]}"),
                                         f"bit {hi} is outside a 64-bit descriptor", {"range": list(shown)}, number))
    for i, a in enumerate(fields):
        for b in fields[i + 1:]:
            if a[0] <= b[1] and b[0] <= a[1]:
                ctx.findings.append(finding(
                    "descriptor-format", Where(page.path, b[4], b[5][0], f"{b[6][0]}–{b[6][1]}"),
                    f"bits {b[6][0]}-{b[6][1]} overlap bits {a[6][0]}-{a[6][1]} (line {a[4]})",
                    {"first": list(a[6]), "second": list(b[6])}, number))
    m = re.search(r"\(x\s*&\s*0x([0-9A-Fa-f]+)\)\s*>>\s*(\d+)", encode.text) if encode is not None else None
    if m is None:
        return
    width = int(m.group(1), 16).bit_length() - int(m.group(2))
    for lo, hi, size, desc, line, cols, _ in fields:
        if "matrix-descriptor-encode" in desc and size != width:
            ctx.findings.append(finding(
                "descriptor-format", Where(page.path, line, cols[1], str(size)),
                f"matrix-descriptor-encode keeps {width} bits ({m.group(0)}), the field has {size}",
                {"encode_bits": width, "field_bits": size}, number))


def base_offset_rule(ctx: PageContext, number: str, sec: Section, page: Page, canon: dict[tuple[str, str], _Canonical]) -> None:
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
    for texts, cols, line in table_cells(table, 2):
        mode = mode_of_words(texts[0])
        m = re.match(r"(\d+)-Byte boundary", texts[1])
        if mode is None or m is None:
            continue
        boundary = int(m.group(1))
        if mode in periods and periods[mode] != boundary:
            ctx.findings.append(finding(
                "base-offset", Where(page.path, line, cols[1], texts[1]),
                f"the {mode} pattern is said to start on a {boundary}-byte boundary, but the canonical swizzle of "
                f"{mode} repeats every {periods[mode]} bytes", {"boundary": boundary, "period": periods[mode]}, number))
        if fm is None or rule is None:
            continue
        shift, mask = int(fm.group(1), 0), int(fm.group(2), 0)
        row = int(lead.group(1)) if (lead := re.match(r"(\d+)", texts[0])) else 16
        for start in range(row, 1 << 14, row):
            if start % boundary and (start >> shift) & mask == 0:
                ctx.findings.append(finding(
                    "base-offset", Where(page.path, code.line, column_of(page, code.line, "base offset ="
                                          if isinstance(code, Text) else "base offset"), code.text),
                    f"{texts[0]}: a pattern starting at {start:#x} (a {row}-byte row, not a {boundary}-byte boundary) must "
                    f"have a non-zero base offset (line {rule.line}), but ({start:#x} >> {fm.group(1)}) & {fm.group(2)} = 0",
                    {"mode": mode, "start": start, "boundary": boundary, "formula": fm.group(0)}, number))
                break
