"""The lexer of the formula language: text -> tokens, every token with its line and column."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from .ast import MAX_LINE, MAX_LITERAL, MAX_TEXT, FormulaError

# ----------------------------------------------------------------------------- lexer

@dataclass(frozen=True)
class Token:
    kind: str  # NUM NAME LANE OP NL EOF
    text: str
    value: int
    line: int
    col: int


_TOKEN_RE = re.compile(
    r"""
    (?P<ws>[ \t\r]+)
  | (?P<comment>//[^\n]*)
  | (?P<nl>\n)
  | (?P<num>0[xX][0-9a-fA-F]+|0[bB][01]+|[0-9]+)
  | (?P<lane>%laneid\b|%tid\b)
  | (?P<name>[A-Za-z_][A-Za-z_0-9]*)
  | (?P<op>\.\.\.|\.\.|\|\||&&|<<|>>|<=|>=|==|!=|[-+*/%&|^<>=(){}\[\],.:])
    """,
    re.VERBOSE,
)

KEYWORDS = {"for", "where", "if", "otherwise", "and", "or"}

# a ``//`` comment that starts like code (a number, a bracket, a sign, ``%laneid``, a name right after the ``//``
# or a name and an operator): never read as a comment.  The doc's comments are prose (``// As per the mapping``).
_CODE_AFTER = re.compile(r"//(?:\s*[0-9(%]|\s*-\s*[0-9(A-Za-z_]|[A-Za-z_]|\s*[A-Za-z_]\w*\s*(?:[-+*/%&|^)]|<<|>>))")


def tokenize(text: str) -> list[Token]:
    """Split formula text into tokens; reject any character outside the language and oversized text."""
    if len(text) > MAX_TEXT:
        raise FormulaError(f"formula text of {len(text)} characters is too long (limit {MAX_TEXT})", 1, 1)
    for n, line in enumerate(text.split("\n"), 1):
        if len(line) > MAX_LINE:
            raise FormulaError(f"line of {len(line)} characters is too long (limit {MAX_LINE})", n, MAX_LINE + 1)

    def number(s: str, end: int, line: int, col: int) -> int:
        if end < len(text) and (text[end].isalnum() or text[end] == "_"):
            raise FormulaError(f"malformed number {s + text[end]!r}", line, col)
        if len(s) > 1 and s[0] == "0" and s[1].isdigit():
            raise FormulaError(f"literal {s!r} has a leading zero (octal in C, decimal in the doc?)", line, col)
        value = int(s[2:], 16) if s[:2] in ("0x", "0X") else int(s[2:], 2) if s[:2] in ("0b", "0B") else int(s)
        if value > MAX_LITERAL:
            raise FormulaError(f"literal {s} is too large (limit {MAX_LITERAL})", line, col)
        return value

    def comment(s: str, line: int, col: int) -> None:
        if _CODE_AFTER.match(s):
            raise FormulaError("'//' starts a comment in a spec formula (the doc's pseudo-code), and code follows it "
                               "here: a division is '/' (C's); floor division '//' is index code's "
                               "(docs/layouts.md, 'Index code')", line, col)

    return scan(text, _TOKEN_RE, number, comment=comment)


def scan(text: str, pattern: "re.Pattern[str]", number: Callable[[str, int, int, int], int],
         lane_names: frozenset[str] = frozenset(), comment: Callable[[str, int, int], None] | None = None,
         max_col: int = 0) -> list[Token]:
    """The tokens of ``text`` by ``pattern``'s groups (``ws``, ``comment``, ``nl``, ``num``, ``lane``, ``name``,
    ``op``), every one with its line and column: the one scanning loop of the spec language and of index code.
    ``number(text, end, line, col)`` is a literal's value (or a positioned error); a name in ``lane_names`` is the
    thread; ``comment`` sees each comment; ``max_col``: a longer line is an error where it passes that column."""
    tokens: list[Token] = []
    line, line_start, pos, n = 1, 0, 0, len(text)
    while pos < n:
        m = pattern.match(text, pos)
        col = pos - line_start + 1
        if max_col and col > max_col:
            raise FormulaError(f"line longer than {max_col} characters", line, col)
        if m is None:
            raise FormulaError(f"unexpected character {text[pos]!r}", line, col)
        kind, s = m.lastgroup, m.group()
        if kind == "comment" and comment is not None:
            comment(s, line, col)
        if kind == "nl":
            tokens.append(Token("NL", s, 0, line, col))
            line += 1
            line_start = m.end()
        elif kind == "num":
            tokens.append(Token("NUM", s, number(s, m.end(), line, col), line, col))
        elif kind == "lane" or (kind == "name" and s in lane_names):
            tokens.append(Token("LANE", s, 0, line, col))
        elif kind == "name":
            tokens.append(Token("NAME", s, 0, line, col))
        elif kind == "op":
            tokens.append(Token("OP", s, 0, line, col))
        pos = m.end()
    tokens.append(Token("EOF", "", 0, line, pos - line_start + 1))
    return tokens
