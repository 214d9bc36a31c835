"""The markdown reader of ``verify.catalog.docpage``: either export's shape (9.0: ``|`` tables, fenced code, blockquotes;
9.1: a YAML header, tables with no outer ``|``, indented code inside lists and quotes)."""
from __future__ import annotations


import re

from .page_model import (CAPTION, IMAGE, SEP_ROW, Block, Caption, Cell, Code, CodeLine, Heading, Image, Row, Table, Text, anchor_of, clean_inline, heading_of)



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
    if q1 != q or "|" not in sep or not SEP_ROW.match(sep.strip()):
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
        if SEP_ROW.match(body) and rows:  # the row above heads another table
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
        if qa == q and "|" in ra and not ra.strip().startswith("#") and not SEP_ROW.match(ra.strip()):
            return items, k
    return items, items[-1][1]  # no row follows: the table ends after the list


def _fenced_code(lines: list[str], i: int, cut: int) -> tuple[Code, int]:
    """The fenced code block whose opening fence is line ``i`` (its text at column ``cut``): its lines, each with
    the fence's indentation (or the quote's prefix) removed, and the index of the line after its closing fence."""
    lineno = i + 1
    fence_indent = cut
    qp = _quote_prefix(lines[i])
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
    return Code(tuple(code), lineno), i + 1


def _pipe_table(lines: list[str], i: int, body: str, cut: int) -> tuple[Table, int]:
    """The pipe table whose header is line ``i`` (``body``, at column ``cut``): its header and rows (separator
    rows left out), and the index of the first line after it."""
    header = [c.text for c in _split_cells(body, cut)]
    rows: list[Row] = []
    tline = i + 1
    i += 1
    while i < len(lines):
        b, c = _strip_prefix(lines[i])
        if not b.startswith("|"):
            break
        if not SEP_ROW.match(b.strip()):
            rows.append(Row(tuple(_split_cells(b, c)), i + 1, b))
        i += 1
    return Table(tuple(header), tuple(rows), tline), i


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
            block, i = _fenced_code(lines, i, cut)
            out.append(block)
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
            h = heading_of(hm.group(2), lineno, len(hm.group(1)))
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
            table, i = _pipe_table(lines, i, body, cut)
            out.append(table)
            continue
        imgs = IMAGE.findall(body)
        if imgs and not IMAGE.sub("", body).strip():
            flush()
            for src in imgs:
                out.append(Image(src, lineno))
            i += 1
            continue
        words, links = clean_inline(body)
        cm = CAPTION.match(words)
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


