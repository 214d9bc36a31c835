"""The lexer of the formula language: text -> tokens, every token with its line and column."""
from __future__ import annotations

import re
from dataclasses import dataclass

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
    tokens: list[Token] = []
    line, line_start, pos = 1, 0, 0
    while pos < len(text):
        m = _TOKEN_RE.match(text, pos)
        col = pos - line_start + 1
        if m is None:
            ch = text[pos]
            raise FormulaError(f"unexpected character {ch!r}", line, col)
        kind = m.lastgroup
        s = m.group()
        if kind == "comment" and _CODE_AFTER.match(s):
            raise FormulaError("'//' starts a comment in a spec formula (the doc's pseudo-code), and code follows it "
                               "here: a division is '/' (C's); floor division '//' is index code's "
                               "(docs/layouts.md, 'Index code')", line, col)
        if kind == "nl":
            tokens.append(Token("NL", s, 0, line, col))
            line += 1
            line_start = m.end()
        elif kind == "num":
            if m.end() < len(text) and (text[m.end()].isalnum() or text[m.end()] == "_"):
                raise FormulaError(f"malformed number {s + text[m.end()]!r}", line, col)
            if len(s) > 1 and s[0] == "0" and s[1].isdigit():
                raise FormulaError(f"literal {s!r} has a leading zero (octal in C, decimal in the doc?)", line, col)
            value = int(s[2:], 16) if s[:2] in ("0x", "0X") else int(s[2:], 2) if s[:2] in ("0b", "0B") else int(s)
            if value > MAX_LITERAL:
                raise FormulaError(f"literal {s} is too large (limit {MAX_LITERAL})", line, col)
            tokens.append(Token("NUM", s, value, line, col))
        elif kind == "lane":
            tokens.append(Token("LANE", s, 0, line, col))
        elif kind == "name":
            tokens.append(Token("NAME", s, 0, line, col))
        elif kind == "op":
            tokens.append(Token("OP", s, 0, line, col))
        pos = m.end()
    tokens.append(Token("EOF", "", 0, line, pos - line_start + 1))
    return tokens


