"""The lexer of PTX: text -> tokens, each with its line and column (1-based).

Tokens: ``WORD`` (identifiers, directives ``.reg``, opcodes with their modifiers ``mma.sync.aligned.m16n8k16``,
state spaces with ``::`` such as ``shared::cta``, registers ``%r12``, special registers ``%tid.x``, labels
``$L__BB0_2``), ``INT`` (decimal, hexadecimal ``0x``, octal ``0``, binary ``0b``, an optional ``U`` suffix), ``FLOAT``
(``0f3F800000``, ``0d...``, decimal ``1.5``), ``STR`` (``"..."``) and ``PUNCT`` (one character of ``{}()[],;:+-@!<>=|``).
Comments (``//`` to the end of the line, ``/* ... */``) are skipped.  Nothing is evaluated; a character outside the
language, a comment or a string that does not end is a ``SpecError`` at its position.
"""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass

from ..errors import SpecError

MAX_TOKEN = 4096  # characters of one token (C++ mangled names run to ~2,500)


@dataclass(frozen=True)
class Token:
    kind: str  # WORD INT FLOAT STR PUNCT EOF
    text: str
    line: int
    col: int
    value: int = 0  # INT: the value; FLOAT: the bits (32 for 0f / decimal, 64 for 0d)
    width: int = 0  # FLOAT: 32 or 64


_TOKEN = re.compile(r"""
    (?P<nl>\n)
  | (?P<ws>[ \t\r\f\v]+)
  | (?P<line_comment>//[^\n]*)
  | (?P<block_comment>/\*)
  | (?P<float>0[fF][0-9a-fA-F]{8}(?![0-9A-Za-z_])|0[dD][0-9a-fA-F]{16}(?![0-9A-Za-z_])
              |[0-9]+\.[0-9]*(?:[eE][+-]?[0-9]+)?(?![0-9A-Za-z_]))
  | (?P<int>(?:0[xX][0-9a-fA-F]+|0[bB][01]+|[0-9]+)U?(?![0-9A-Za-z_]))
  | (?P<word>[%.$A-Za-z_][A-Za-z0-9_$]*(?:(?:\.|::)[A-Za-z0-9_$]+)*)
  | (?P<str>"(?:[^"\\\n]|\\.)*")
  | (?P<punct>[{}()\[\],;:+\-@!<>=|*])
""", re.VERBOSE)


def _int_value(text: str) -> int:
    s = text[:-1] if text.endswith("U") else text
    if s[:2] in ("0x", "0X"):
        return int(s[2:], 16)
    if s[:2] in ("0b", "0B"):
        return int(s[2:], 2)
    if len(s) > 1 and s[0] == "0":
        if not all(c in "01234567" for c in s):
            raise ValueError(f"octal literal {text!r} has a digit that is not octal")
        return int(s, 8)
    return int(s)


def _float_bits(text: str) -> tuple[int, int]:
    if text[:2] in ("0f", "0F"):
        return int(text[2:], 16), 32
    if text[:2] in ("0d", "0D"):
        return int(text[2:], 16), 64
    return struct.unpack("<Q", struct.pack("<d", float(text)))[0], 64  # a decimal float literal is a double


def tokenize(text: str, path: str) -> list[Token]:
    """Tokens of PTX ``text`` (``path`` names it in errors), ending with one ``EOF``."""
    out: list[Token] = []
    line, line_start, pos, n = 1, 0, 0, len(text)
    append = out.append
    match = _TOKEN.match
    while pos < n:
        m = match(text, pos)
        col = pos - line_start + 1
        if m is None:
            if text[pos] == '"':
                raise SpecError(path, line, col, "string does not end on its line")
            raise SpecError(path, line, col, f"unexpected character {text[pos]!r}")
        kind = m.lastgroup
        end = m.end()
        if kind == "nl":
            line += 1
            line_start = end
        elif kind == "ws" or kind == "line_comment":
            pass
        elif kind == "block_comment":
            close = text.find("*/", end)
            if close < 0:
                raise SpecError(path, line, col, "comment '/*' does not end")
            lines = text.count("\n", pos, close)
            if lines:
                line += lines
                line_start = text.rfind("\n", pos, close) + 1
            end = close + 2
        else:
            s = m.group()
            if len(s) > MAX_TOKEN:
                raise SpecError(path, line, col, f"token of {len(s)} characters is too long (limit {MAX_TOKEN})")
            if kind == "int":
                try:
                    value = _int_value(s)
                except ValueError as e:
                    raise SpecError(path, line, col, str(e)) from None
                append(Token("INT", s, line, col, value))
            elif kind == "float":
                bits, width = _float_bits(s)
                append(Token("FLOAT", s, line, col, bits, width))
            elif kind == "word":
                append(Token("WORD", s, line, col))
            elif kind == "str":
                append(Token("STR", s[1:-1], line, col))
            else:
                append(Token("PUNCT", s, line, col))
        pos = end
    append(Token("EOF", "", line, pos - line_start + 1))
    return out
