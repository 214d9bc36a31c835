"""Reading documentation pages: markdown, flattened HTML text, or saved HTML.

Every page is normalised into the same model: ``Page`` -> ``Section`` (numbered
heading, title, anchor) -> ordered ``Block``s (text lines and bullets, tables,
code blocks, images, figure captions).  Every block keeps the 1-based line of the
page it came from, and every code line keeps the line *and column* of its first
character, so that a formula error can be reported at ``page:line:col``.

Three inputs are understood:

* markdown conversions of the PTX ISA, in either flavour of the exports we know: tables
  with ``|`` on both sides and fenced code, possibly inside ``>`` blockquotes with blank
  lines between formula lines (the 9.0 pages); or a YAML header (``title``, ``section``,
  ``url``), headings with ``[title](<#anchor>)`` links up to eight ``#`` deep, tables with
  no outer ``|`` (``a | b`` over ``---|---``; a caption may run into the header row) and
  code indented under a line of spaces, inside lists and blockquotes (the 9.1 export);
* flattened HTML text (tables as ``|``-terminated lines, formulas running into
  the next heading: ``... i = {0,..,3}9.7.14.5.9. Matrix Fragments ...``);
* saved HTML (``<h5>``, ``<table>``, ``<pre>``, ``<img>``, captions).

Nothing here interprets the content (that is ``verify.ingest``); page text is
untrusted and is only matched with regular expressions.
"""
from __future__ import annotations

import functools

import html
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from ..errors import SpecError
from .spec import read_utf8


class PageError(SpecError):
    """A page that cannot be read at all; carries a position (bad input, like a bad spec)."""


# ----------------------------------------------------------------------------- model

@dataclass(frozen=True)
class Text:
    """A paragraph or list item (continuation lines joined with a space)."""

    text: str
    line: int
    col: int = 1
    bullet: bool = False
    links: tuple[str, ...] = ()  # link targets (URLs or #anchors), in order


@dataclass(frozen=True)
class Cell:
    text: str
    col: int       # column of the cell's first character in the page line
    line: int = 0  # page line of the cell when it differs from its row's (flattened tables)


@dataclass(frozen=True)
class Row:
    cells: tuple[Cell, ...]
    line: int
    raw: str = ""


@dataclass(frozen=True)
class Table:
    header: tuple[str, ...]
    rows: tuple[Row, ...]
    line: int


@dataclass(frozen=True)
class CodeLine:
    text: str
    line: int  # page line
    col: int   # page column of text[0]


@dataclass(frozen=True)
class Code:
    lines: tuple[CodeLine, ...]
    line: int

    @property
    def text(self) -> str:
        return "\n".join(cl.text for cl in self.lines)


@dataclass(frozen=True)
class Image:
    src: str
    line: int

    @property
    def stem(self) -> str:
        name = self.src.rsplit("/", 1)[-1]
        return name.rsplit(".", 1)[0] if "." in name else name


@dataclass(frozen=True)
class Caption:
    number: int
    text: str
    anchor: str
    line: int


Block = Text | Table | Code | Image | Caption


@dataclass(frozen=True)
class Heading:
    number: str  # "9.7.14.5.7"
    title: str
    anchor: str
    line: int
    level: int = 0


@dataclass(frozen=True)
class Section:
    heading: Heading
    blocks: tuple[Block, ...]
    page: str

    @property
    def number(self) -> str:
        return self.heading.number


@dataclass(frozen=True)
class Page:
    path: str
    format: str  # "markdown" | "flat" | "html"
    sections: tuple[Section, ...]
    lines: tuple[str, ...] = field(default=(), repr=False)


# ----------------------------------------------------------------------------- helpers

# a link's target is ``(url)`` or ``(<url>)`` (CommonMark's pointed brackets), with an optional title
_LINK = re.compile(r"(!?)\[([^\]]*)\]\((?:<([^<>\n]*)>|([^)\s]*))(?:\s+\"[^\"]*\")?\)")
_PERMALINK = re.compile(r"\[\]\(<?([^)\s<>]*)>?\s+\"Permalink to this [a-z]+\"\)")
_HEADING_NUM = re.compile(r"^(\d+(?:\.\d+)+)\.?\s+(.*\S)\s*$")


def anchor_of(target: str) -> str:
    """``https://.../#warp-level-x`` or ``#warp-level-x`` -> ``warp-level-x``."""
    return target.split("#", 1)[1] if "#" in target else ""


def clean_inline(text: str) -> tuple[str, tuple[str, ...]]:
    """Markdown inline text -> plain words, plus the link targets it held."""
    links: list[str] = []

    def link(m: re.Match[str]) -> str:  # a permalink: its target kept, its text dropped
        links.append(m.group(1))
        return ""

    text = _PERMALINK.sub(link, text)

    def repl(m: re.Match[str]) -> str:
        if m.group(1):  # image: drop
            return ""
        links.append(m.group(3) if m.group(3) is not None else m.group(4))
        return m.group(2)

    text = _LINK.sub(repl, text)
    text = text.replace("`", "")
    return re.sub(r"[ \t]+", " ", text).strip(), tuple(links)


def normalise(text: str) -> str:
    """Drop a byte-order mark; \r\n and \r become \n."""
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.replace("\r\n", "\n").replace("\r", "\n")


def read_page(path: str | Path) -> Page:
    return parse_page(normalise(read_utf8(path, PageError)), str(path))


def detect_format(text: str, path: str = "") -> str:
    head = text[:4096].lower()
    if path.lower().endswith((".html", ".htm")) or re.search(r"<(html|body|h[1-6]|table|div)\b", head):
        return "html"
    lines = text.split("\n")
    if any(re.match(r"\s*#{1,6}\s", ln) for ln in lines) or any("```" in ln for ln in lines):
        return "markdown"
    if any(re.fullmatch(r"\s*\|(?:-{3,}\|)+\s*", ln) for ln in lines):
        return "flat"
    return "markdown"


def parse_page(text: str, path: str = "<page>") -> Page:
    """A page's blocks and sections (memoised: a pure function of (text, path) with an immutable result)."""
    return _parse_page(text, path)


@functools.lru_cache(maxsize=256)
def _parse_page(text: str, path: str) -> Page:
    fmt = detect_format(text, path)
    if fmt == "html":
        blocks = _HtmlReader(path).run(text)
    elif fmt == "flat":
        blocks = _parse_flat(text)
    else:
        blocks = _parse_markdown(text)
    return Page(path, fmt, _sectionize(blocks, path), tuple(text.split("\n")))


def _sectionize(items: list[Heading | Block], path: str) -> tuple[Section, ...]:
    sections: list[Section] = []
    cur: Heading | None = None
    blocks: list[Block] = []
    for it in items:
        if isinstance(it, Heading):
            if cur is not None and it.number == cur.number and not blocks:
                # "# 9.7.14.5.3. Title" page title followed by the real heading: merge
                cur = Heading(cur.number, it.title or cur.title, it.anchor or cur.anchor,
                              it.line if it.anchor else cur.line, it.level)
                continue
            if cur is not None:
                sections.append(Section(cur, tuple(blocks), path))
            cur, blocks = it, []
        elif cur is not None:
            blocks.append(it)
    if cur is not None:
        sections.append(Section(cur, tuple(blocks), path))
    return tuple(sections)


def _heading(text: str, line: int, level: int) -> Heading | None:
    words, links = clean_inline(text)
    m = _HEADING_NUM.match(words)
    if not m:
        return None
    anchor = next((anchor_of(t) for t in links if anchor_of(t)), "")
    return Heading(m.group(1), m.group(2).strip(), anchor, line, level)


_CAPTION = re.compile(r"^Figure\s+(\d+)\b\s*(.*)$")
_IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)")
_SEP_ROW = re.compile(r"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")


# ----------------------------------------------------------------------------- markdown

def _strip_prefix(raw: str) -> tuple[str, int]:
    """Remove indentation and ``>`` quote markers; return (text, chars removed)."""
    i = 0
    n = len(raw)
    while True:
        while i < n and raw[i] in " \t":
            i += 1
        if i < n and raw[i] == ">":
            i += 1
            if i < n and raw[i] == " ":
                i += 1
            continue
        break
    return raw[i:], i


def _quote_prefix(raw: str) -> int:
    """Length of the indentation + ``>`` markers (keeping the text's own spaces)."""
    i = 0
    last = 0
    n = len(raw)
    while True:
        j = i
        while j < n and raw[j] in " \t":
            j += 1
        if j < n and raw[j] == ">":
            j += 1
            if j < n and raw[j] == " ":
                j += 1
            i = last = j
            continue
        break
    return last


def _split_cells(raw: str, offset: int) -> list[Cell]:
    s = raw
    start = offset
    body = s.strip()
    lead = len(s) - len(s.lstrip())
    pos = start + lead
    if body.startswith("|"):
        body = body[1:]
        pos += 1
    if body.endswith("|"):
        body = body[:-1]
    cells: list[Cell] = []
    for part in body.split("|"):
        inner_lead = len(part) - len(part.lstrip())
        words, _ = clean_inline(part)
        cells.append(Cell(words, pos + inner_lead + 1))
        pos += len(part) + 1
    return cells


_FRONT_KEY = re.compile(r"^[A-Za-z_][\w-]*\s*:")
_BULLET = re.compile(r"^(?:[*+-]|\d{1,3}[.)])\s")


def front_matter(lines: list[str]) -> int:
    """The number of lines of a YAML header (``---``, ``key: value`` lines, ``---``) at the top of a page,
    or 0.  Its lines are passed over, not interpreted: the page's headings state its sections."""
    if not lines or lines[0].strip() != "---":
        return 0
    for k in range(1, min(len(lines), 64)):
        t = lines[k].strip()
        if t in ("---", "..."):
            return k + 1
        if t and not _FRONT_KEY.match(t) and not lines[k].startswith((" ", "\t", "-")):
            return 0
    return 0


def _quote_depth(raw: str) -> tuple[int, str]:
    """(length of the ``>`` markers and the indentation before them, the rest of the line)."""
    q = _quote_prefix(raw)
    return q, raw[q:]


def _indented_code(lines: list[str], i: int) -> tuple[list[CodeLine], int] | None:
    """Code indented under a line of spaces (the 9.1 export's ``<pre>``): at ``lines[i]``, a line of four or
    more spaces (after any ``>`` markers) whose next line is indented four or more and is not a list item.
    The block runs to the first empty line, a line of other ``>`` markers, or a line indented less than four;
    the common indentation is removed (each line keeps its page column).  None when no block starts here."""
    q, rest = _quote_depth(lines[i])
    if rest.strip() or len(rest.expandtabs()) < 4 or i + 1 >= len(lines):
        return None
    q1, first = _quote_depth(lines[i + 1])
    lead = len(first) - len(first.lstrip(" "))
    if q1 != q or not first.strip() or lead < 4 or _BULLET.match(first.lstrip(" ")):
        return None
    j = i + 1
    block: list[tuple[str, int, int]] = []  # (text after the markers, page line, its column offset)
    while j < len(lines):
        qj, r = _quote_depth(lines[j])
        if not r or qj != q:  # an empty line (nothing after the markers), or other markers, ends the block
            break
        if r.strip() and len(r) - len(r.lstrip(" ")) < 4:
            break
        block.append((r, j + 1, qj))
        j += 1
    indent = min(len(r) - len(r.lstrip(" ")) for r, _, _ in block if r.strip())
    code = [CodeLine(r[indent:].rstrip(), ln, qj + indent + 1) if r.strip() else CodeLine("", ln, qj + 1)
            for r, ln, qj in block]
    while code and not code[-1].text:
        code.pop()
    return code, j


def _bare_table(lines: list[str], i: int) -> tuple[Table, int] | None:
    """A table with no outer ``|`` (``a | b`` over ``---|---``, as GFM allows) at ``lines[i]``: its rows run
    to the first blank line, heading, list item or line of other ``>`` markers; a row without ``|`` is a
    row of one cell (a header spanning the columns); a separator under a row makes that row the header of
    the next table (two tables with no blank line between them).  None when no table starts here."""
    q, rest = _quote_depth(lines[i])
    if "|" not in rest or rest.lstrip().startswith("|") or i + 1 >= len(lines):
        return None
    q1, sep = _quote_depth(lines[i + 1])
    if q1 != q or "|" not in sep or not _SEP_ROW.match(sep.strip()):
        return None
    header = tuple(c.text for c in _split_cells(rest, q))
    tline = i + 1
    rows: list[Row] = []
    j = i + 2
    while j < len(lines):
        qj, r = _quote_depth(lines[j])
        body = r.strip()
        if qj != q or not body or body.startswith(("#", "```", "![")) or _BULLET.match(body):
            break
        if _SEP_ROW.match(body) and rows:  # the row above heads another table
            head = rows.pop()
            return Table(header, tuple(rows), tline), head.line - 1
        cells = _split_cells(r, qj)
        line = j + 1
        j += 1
        if body.endswith("|"):
            # a row that ends in '|' over a list: the export's <td><ul>...</ul></td>; the list is its last cell
            items, j = _cell_list(lines, j, q)
            if items:
                cells.append(Cell(" ".join(f"* {t}" for t, _, _ in items), items[0][2], items[0][1]))
        rows.append(Row(tuple(cells), line, body))
    return Table(header, tuple(rows), tline), j


def _cell_list(lines: list[str], j: int, q: int) -> tuple[list[tuple[str, int, int]], int]:
    """The list items (text, page line, column) that fill a table cell (after blank lines), and the index of
    the line after them: the table's next row when one follows (blank lines passed over), else the first
    line after the list."""
    k = j
    while k < len(lines) and not _quote_depth(lines[k])[1].strip():
        k += 1
    items: list[tuple[str, int, int]] = []
    while k < len(lines):
        qk, r = _quote_depth(lines[k])
        body = r.strip()
        m = _BULLET.match(body)
        if qk != q or not m:
            break
        words, _ = clean_inline(body[m.end():])
        items.append((words, k + 1, qk + len(r) - len(r.lstrip()) + m.end() + 1))
        k += 1
        while k < len(lines) and not _quote_depth(lines[k])[1].strip():
            k += 1
    if not items:
        return [], j
    if k < len(lines):
        qa, ra = _quote_depth(lines[k])
        if qa == q and "|" in ra and not ra.strip().startswith("#") and not _SEP_ROW.match(ra.strip()):
            return items, k
    return items, items[-1][1]  # no row follows: the table ends after the list


def _parse_markdown(text: str) -> list[Heading | Block]:
    out: list[Heading | Block] = []
    lines = text.split("\n")
    i = front_matter(lines)
    para: list[tuple[str, int, int, bool]] = []  # pieces of the current paragraph

    def flush() -> None:
        if not para:
            return
        joined = " ".join(p[0] for p in para)
        words, links = clean_inline(joined)
        if words:
            out.append(Text(words, para[0][1], para[0][2], para[0][3], links))
        para.clear()

    while i < len(lines):
        raw = lines[i]
        body, cut = _strip_prefix(raw)
        lineno = i + 1
        if body.startswith("```"):
            flush()
            fence_indent = cut
            qp = _quote_prefix(raw)
            code: list[CodeLine] = []
            i += 1
            while i < len(lines):
                r = lines[i]
                b, c = _strip_prefix(r)
                if b.startswith("```"):
                    break
                q = _quote_prefix(r)
                if q:
                    t, tcol = r[q:], q
                else:
                    k = 0
                    limit = max(fence_indent - qp, 0) if qp else fence_indent
                    while k < len(r) and k < limit and r[k] in " \t":
                        k += 1
                    t, tcol = r[k:], k
                code.append(CodeLine(t.rstrip(), i + 1, tcol + 1))
                i += 1
            out.append(Code(tuple(code), lineno))
            i += 1
            continue
        if not body.strip():
            flush()
            indented = _indented_code(lines, i)
            if indented is not None:
                code_lines, i = indented
                if code_lines:
                    out.append(Code(tuple(code_lines), code_lines[0].line))
                continue
            i += 1
            continue
        hm = re.match(r"^(#{1,8})\s+(.*)$", body)
        if hm:
            flush()
            h = _heading(hm.group(2), lineno, len(hm.group(1)))
            if h is not None:
                out.append(h)
            else:
                words, links = clean_inline(hm.group(2))
                out.append(Text(words, lineno, cut + 1, False, links))
            i += 1
            continue
        bare = None if body.startswith("|") else _bare_table(lines, i)
        if bare is not None:
            flush()
            out.append(bare[0])
            i = bare[1]
            continue
        if body.startswith("|"):
            flush()
            header = [c.text for c in _split_cells(body, cut)]
            rows: list[Row] = []
            tline = lineno
            i += 1
            while i < len(lines):
                b, c = _strip_prefix(lines[i])
                if not b.startswith("|"):
                    break
                if not _SEP_ROW.match(b.strip()):
                    rows.append(Row(tuple(_split_cells(b, c)), i + 1, b))
                i += 1
            out.append(Table(tuple(header), tuple(rows), tline))
            continue
        imgs = _IMAGE.findall(body)
        if imgs and not _IMAGE.sub("", body).strip():
            flush()
            for src in imgs:
                out.append(Image(src, lineno))
            i += 1
            continue
        words, links = clean_inline(body)
        cm = _CAPTION.match(words)
        if cm:
            flush()
            anchor = next((anchor_of(t) for t in reversed(links) if anchor_of(t)), "")
            out.append(Caption(int(cm.group(1)), words, anchor, lineno))
            i += 1
            continue
        if words == "Copy to clipboard":
            flush()
            i += 1
            continue
        bm = re.match(r"^([*+-])\s+(.*)$", body)
        if bm:
            flush()
            para.append((bm.group(2), lineno, cut + 3, True))
        else:
            para.append((body, lineno, cut + 1, False))
        i += 1
    flush()
    return out


# ----------------------------------------------------------------------------- flattened text

_TYPE_WORD = r"\.(?:f16|bf16|tf32|f32|f64|s8|u8|s4|u4|b1|s32|e4m3|e5m2|e3m2|e2m3|e2m1)"
_OPERAND_HEAD = r"(?:Multiplicand [AB]\s*:|Accumulators\s*(?:\(C or D\)|C \(or D\))\s*:|Metadata\s*:)"
# structural markers that the flattening glued onto the end of the previous line
_GLUE = [
    re.compile(r"(?<=\S)(" + _OPERAND_HEAD + r".*)$"),
    re.compile(r"(?<=[\w)\]}])(" + _TYPE_WORD + r"(?:\s*(?:and|or|/|,)\s*" + _TYPE_WORD + r")*\s*:)\s*$"),
    re.compile(r"(?<=[^\s\d.])(\d+(?:\.\d+){2,}\.\s+\S.*)$"),
    re.compile(r"(?<=\})(\d+(?:\.\d+){2,}\.\s+\S.*)$"),
]


def _split_glued(text: str, line: int) -> list[tuple[str, int, int]]:
    """Split one flattened line into pieces (text, line, col) at glued markers."""
    pieces: list[tuple[str, int, int]] = []
    start = 0
    rest = text
    while True:
        best = None
        for rx in _GLUE:
            m = rx.search(rest)
            if m and m.start(1) > 0 and (best is None or m.start(1) < best):
                best = m.start(1)
        if best is None:
            pieces.append((rest, line, start + 1))
            return pieces
        pieces.append((rest[:best], line, start + 1))
        start += best
        rest = rest[best:]


def _is_struct(t: str) -> bool:
    s = t.strip()
    return bool(
        re.match(_OPERAND_HEAD, s)
        or re.fullmatch(_TYPE_WORD + r"(?:\s*(?:and|or|/|,)\s*" + _TYPE_WORD + r")*\s*:", s)
        or _HEADING_NUM.match(s) and re.match(r"^\d+(?:\.\d+){2,}\.\s", s)
        or s.endswith("|") or s.startswith("|")
        or _CAPTION.match(s)
        or s.startswith("The layout of")
        or s.startswith("Matrix fragments for")
        or s.startswith("Elements of")
        or s.startswith("A warp executing")
    )


def _parse_flat(text: str) -> list[Heading | Block]:
    pieces: list[tuple[str, int, int]] = []
    for n, raw in enumerate(text.split("\n"), 1):
        pieces.extend(_split_glued(raw, n))
    out: list[Heading | Block] = []
    k = 0
    while k < len(pieces):
        t, ln, col = pieces[k]
        s = t.strip()
        if not s:
            k += 1
            continue
        lead = len(t) - len(t.lstrip())
        hm = _HEADING_NUM.match(s)
        if hm and re.match(r"^\d+(?:\.\d+){2,}\.\s", s) and not s.endswith("|"):
            out.append(Heading(hm.group(1), hm.group(2).strip(), "", ln))
            k += 1
            continue
        if s.endswith("|") or s.startswith("|"):
            # a table: cells end with "|", one or more per line, a |---| separator after the header
            cells: list[tuple[Cell, int]] = []
            header: list[str] | None = None
            tline = ln
            while k < len(pieces):
                t2, ln2, col2 = pieces[k]
                s2 = t2.strip()
                if not (s2.endswith("|") or s2.startswith("|")) or not s2:
                    break
                if _SEP_ROW.match(s2):
                    header = [c.text for c, _ in cells]
                    cells = []
                    k += 1
                    continue
                lead2 = len(t2) - len(t2.lstrip())
                body = s2[:-1] if s2.endswith("|") else s2
                parts = body.split("|")
                pos = col2 + lead2
                for part in parts:
                    il = len(part) - len(part.lstrip())
                    cells.append((Cell(part.strip(), pos + il, ln2), ln2))
                    pos += len(part) + 1
                k += 1
            if header is None:
                header = [c.text for c, _ in cells]
                cells = []
            width = max(len(header), 1)
            rows: list[Row] = []
            for j in range(0, len(cells), width):
                chunk = cells[j:j + width]
                rows.append(Row(tuple(c for c, _ in chunk), chunk[0][1],
                                " | ".join(c.text for c, _ in chunk)))
            out.append(Table(tuple(header), tuple(rows), tline))
            continue
        cm = _CAPTION.match(s)
        if cm:
            out.append(Caption(int(cm.group(1)), s, "", ln))
            k += 1
            continue
        if s.endswith("can be computed as:"):
            out.append(Text(s, ln, col + lead))
            k += 1
            code: list[CodeLine] = []
            while k < len(pieces):
                t2, ln2, col2 = pieces[k]
                s2 = t2.strip()
                if s2 and _is_struct(s2):
                    break
                if s2:
                    lead2 = len(t2) - len(t2.lstrip())
                    code.append(CodeLine(t2.rstrip()[lead2:] if code == [] else t2.rstrip(),
                                         ln2, col2 + (lead2 if code == [] else 0)))
                k += 1
            if code:
                out.append(Code(tuple(code), code[0].line))
            continue
        out.append(Text(s, ln, col + lead, bool(re.match(_OPERAND_HEAD, s))))
        k += 1
    return out


# ----------------------------------------------------------------------------- saved HTML

class _HtmlReader(HTMLParser):
    """A small reader for saved documentation HTML (Sphinx-style markup)."""

    def __init__(self, path: str) -> None:
        super().__init__(convert_charrefs=True)
        self.path = path
        self.out: list[Heading | Block] = []
        self.buf: list[str] | None = None
        self.buf_line = 0
        self.buf_kind = ""
        self.links: list[str] = []
        self.h_anchor = ""
        self.h_level = 0
        self.table: list[list[Cell]] | None = None
        self.row: list[Cell] | None = None
        self.row_lines: list[int] = []
        self.header: list[str] | None = None
        self.cell: list[str] | None = None
        self.cell_line = 0
        self.in_thead = False
        self.pre: list[str] | None = None
        self.pre_pos = (0, 0)
        self.table_line = 0

    def run(self, text: str) -> list[Heading | Block]:
        self.feed(text)
        self.close()
        return self.out

    def _start_text(self, kind: str) -> list[str]:
        """Start a block of text; its (empty) buffer."""
        buf: list[str] = []
        self.buf = buf
        self.buf_kind = kind
        self.buf_line = self.getpos()[0]
        self.links = []
        return buf

    def _end_text(self) -> None:
        if self.buf is None:
            return
        words = re.sub(r"\s+", " ", "".join(self.buf)).strip()
        words = words.replace("\u00b6", "").strip()
        kind = self.buf_kind
        self.buf = None
        if not words:
            return
        if kind.startswith("h"):
            m = _HEADING_NUM.match(words)
            if m:
                anchor = self.h_anchor or next((anchor_of(t) for t in self.links if anchor_of(t)), "")
                self.out.append(Heading(m.group(1), m.group(2), anchor, self.buf_line, self.h_level))
                return
        cm = _CAPTION.match(words)
        if cm:
            anchor = next((anchor_of(t) for t in reversed(self.links) if anchor_of(t)), "")
            self.out.append(Caption(int(cm.group(1)), words, anchor, self.buf_line))
            return
        self.out.append(Text(words, self.buf_line, 1, kind == "li", tuple(self.links)))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self._end_text()
            self._start_text("h")
            self.h_level = int(tag[1])
            self.h_anchor = a.get("id", "")
        elif tag == "section" and a.get("id"):
            self.h_anchor = a["id"]
        elif tag in ("p", "li", "figcaption") and self.table is None and self.pre is None:
            self._end_text()
            self._start_text("li" if tag == "li" else tag)
        elif tag == "a" and "href" in a:
            self.links.append(a["href"])
        elif tag == "img" and "src" in a:
            self.out.append(Image(a["src"], self.getpos()[0]))
        elif tag == "table":
            self._end_text()
            self.table, self.header, self.row_lines = [], None, []
            self.table_line = self.getpos()[0]
        elif tag == "thead":
            self.in_thead = True
        elif tag == "tr" and self.table is not None:
            self.row = []
            self.row_lines.append(self.getpos()[0])
        elif tag in ("td", "th") and self.row is not None:
            self.cell = []
            self.cell_line = self.getpos()[1] + 1
            if tag == "th":
                self._row_is_header = True
        elif tag == "pre":
            self._end_text()
            self.pre = []
            self.pre_pos = self.getpos()
        elif tag == "br" and self.pre is not None:
            self.pre.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6", "p", "li", "figcaption"):
            if self.table is None and self.pre is None:
                self._end_text()
        elif tag in ("td", "th") and self.cell is not None and self.row is not None:
            self.row.append(Cell(re.sub(r"\s+", " ", "".join(self.cell)).strip(), self.cell_line))
            self.cell = None
        elif tag == "tr" and self.row is not None and self.table is not None:
            if self.in_thead or (self.header is None and not self.table and self._row_is_header):
                self.header = [c.text for c in self.row]
                self.row_lines.pop()
            else:
                self.table.append(self.row)
            self.row = None
            self._row_is_header = False
        elif tag == "thead":
            self.in_thead = False
        elif tag == "table" and self.table is not None:
            rows = tuple(Row(tuple(r), ln) for r, ln in zip(self.table, self.row_lines))
            self.out.append(Table(tuple(self.header or ()), rows, self.table_line))
            self.table = None
        elif tag == "pre" and self.pre is not None:
            text = "".join(self.pre)
            line0, col0 = self.pre_pos
            code: list[CodeLine] = []
            # the text starts right after <pre ...>; the tag itself is on line0
            for n, t in enumerate(text.split("\n")):
                code.append(CodeLine(t.rstrip(), line0 + n, 1))
            while code and not code[0].text.strip():
                code.pop(0)
            while code and not code[-1].text.strip():
                code.pop()
            self.out.append(Code(tuple(code), code[0].line if code else line0))
            self.pre = None

    _row_is_header = False

    def handle_data(self, data: str) -> None:
        if self.pre is not None:
            self.pre.append(data)
        elif self.cell is not None:
            self.cell.append(data)
        elif self.buf is not None:
            self.buf.append(data)
        elif data.strip():
            self._start_text("p").append(data)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)


def unescape(text: str) -> str:
    return html.unescape(text)
