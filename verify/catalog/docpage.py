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

import re
from pathlib import Path

from .spec import read_utf8
from .page_model import (Block, Heading, Page, PageError, Section, normalise)

from .docpage_markdown import _parse_markdown
from .docpage_flat import _parse_flat
from .docpage_html import _HtmlReader


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


