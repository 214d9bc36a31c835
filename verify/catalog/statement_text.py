"""Where the words of a page's plain text are on the page, and the small vocabulary the statement readers share.

The page model (``verify.catalog.docpage``) gives a paragraph's or a table cell's plain text (links reduced to
their words, code spans to their code) with the position of its first character.  A statement is reported at the
word that states it, so ``Sink.at`` aligns a block's plain text with the page's raw lines, character by
character, skipping what the markup added (backticks, link targets, escapes, list and quote markers).
``Sink.add`` records a ``verify.layout.statements.Statement`` there.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..layout.statements import Statement
from .page_model import Page

NUMBER_WORDS = {"one": 1, "single": 1, "a single": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
                "seven": 7, "eight": 8, "nine": 9, "ten": 10, "twelve": 12, "sixteen": 16, "thirty two": 32,
                "thirty-two": 32, "sixty four": 64}
NUMBER = r"(?:a single|single|one|two|three|four|five|six|seven|eight|nine|ten|twelve|sixteen|thirty[ -]two|sixty four|\d+)"

_LINK = re.compile(r"!?\[([^\]]*)\]\((?:<[^<>\n]*>|[^)\s]*)(?:\s+\"[^\"]*\")?\)")
_SKIP = set("`\\*>+|#_ \t\u00a0")


def number(word: str) -> int | None:
    """``four`` -> 4, ``16`` -> 16, anything else None."""
    w = " ".join(word.lower().split())
    if w.isdigit():
        return int(w)
    return NUMBER_WORDS.get(w)


def _raw_chars(line: str, start_col: int) -> list[tuple[str, int]]:
    """The characters of a raw page line from ``start_col`` (1-based) with their columns, link targets dropped."""
    out: list[tuple[str, int]] = []
    k = start_col - 1
    while k < len(line):
        m = _LINK.match(line, k)
        if m:
            out += [(ch, m.start(1) + j + 1) for j, ch in enumerate(m.group(1))]
            k = m.end()
            continue
        out.append((line[k], k + 1))
        k += 1
    return out


def align(page: Page, line: int, col: int, text: str) -> list[tuple[int, int]]:
    """The page position of every character of ``text``, a block's plain text starting at (line, col)."""
    stream: list[tuple[str, int, int]] = []
    for n in range(line, min(len(page.lines), line + 60) + 1):
        stream += [(ch, n, c) for ch, c in _raw_chars(page.lines[n - 1], col if n == line else 1)]
        stream.append((" ", n, len(page.lines[n - 1]) + 1))
    out: list[tuple[int, int]] = []
    j = 0
    last = (line, col)
    lost = False
    for ch in text:
        if ch.isspace() or lost:
            out.append(last)
            continue
        k = j
        while k < len(stream) and stream[k][0] != ch and (stream[k][0] in _SKIP or stream[k][0].isspace()):
            k += 1
        if k < len(stream) and stream[k][0] == ch:
            last = (stream[k][1], stream[k][2])
            j = k + 1
        elif ch in _SKIP:  # markup the plain text kept and the page does not have here
            pass
        else:
            lost = True
        out.append(last)
    return out


@dataclass
class Sink:
    """The statements read from one section of one page."""

    page: Page
    section: str
    out: list[Statement] = field(default_factory=list)
    _aligned: dict[tuple[int, int, str], list[tuple[int, int]]] = field(default_factory=dict)

    def at(self, line: int, col: int, text: str, offset: int) -> tuple[int, int]:
        """The page position of ``text[offset]`` (``text``: plain text starting at line, col)."""
        key = (line, col, text)
        if key not in self._aligned:
            self._aligned[key] = align(self.page, line, col, text)
        pos = self._aligned[key]
        return pos[min(max(offset, 0), len(pos) - 1)] if pos else (line, col)

    def add(self, kind: str, subject: str, value: Any, pos: tuple[int, int], words: str, unread: str = "") -> None:
        self.out.append(Statement(self.page.path, pos[0], pos[1], self.section, kind, subject,
                                  None if unread else value, " ".join(words.split())[:160], unread))


__all__ = ["NUMBER", "NUMBER_WORDS", "Sink", "align", "number"]
