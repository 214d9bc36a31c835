"""The saved-HTML reader of ``verify.catalog.docpage`` (``<h5>``, ``<table>``, ``<pre>``, ``<img>``, captions)."""
from __future__ import annotations


import html
import re
from html.parser import HTMLParser

from .page_model import (CAPTION, HEADING_NUM, Block, Caption, Cell, Code, CodeLine, Heading, Image, Row, Table, Text, anchor_of)



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
            m = HEADING_NUM.match(words)
            if m:
                anchor = self.h_anchor or next((anchor_of(t) for t in self.links if anchor_of(t)), "")
                self.out.append(Heading(m.group(1), m.group(2), anchor, self.buf_line, self.h_level))
                return
        cm = CAPTION.match(words)
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

