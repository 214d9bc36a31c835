"""A documentation page as the readers see it, whatever its format: ``Page`` -> ``Section`` (numbered heading,
title, anchor) -> ``Block``s (text, tables, code, images, captions), each at its page line; and the inline helpers
every format's reader shares (links, headings).  Read by ``verify.catalog.docpage``."""
from __future__ import annotations


import re
from dataclasses import dataclass, field

from ..errors import SpecError


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
HEADING_NUM = re.compile(r"^(\d+(?:\.\d+)+)\.?\s+(.*\S)\s*$")


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


def heading_of(text: str, line: int, level: int) -> Heading | None:
    words, links = clean_inline(text)
    m = HEADING_NUM.match(words)
    if not m:
        return None
    anchor = next((anchor_of(t) for t in links if anchor_of(t)), "")
    return Heading(m.group(1), m.group(2).strip(), anchor, line, level)


CAPTION = re.compile(r"^Figure\s+(\d+)\b\s*(.*)$")
IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)")
SEP_ROW = re.compile(r"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")


