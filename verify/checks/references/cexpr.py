"""C integer expressions and straight-line C functions, read as text and evaluated here (never compiled).

Some references state a layout in CUDA C++ that cannot be compiled or run here (device code, a kernel's
operands): an index expression (``gid + (lane & 1) * 8``) or a small host/device function of integer
declarations and a ``return`` (TensorRT-LLM's ``get_sf_out_offset_128x4``).  This module reads them:

* expressions: decimal and hex integer literals (``u``/``l`` suffixes), names bound by the caller or by an
  earlier declaration, ``+ - * / % << >> & | ^``, unary ``-`` and ``~``, parentheses, and casts to an integer
  type (``(size_t)``, ``(int64_t)`` ...: no-ops here, every value is a small non-negative integer);
  ``/`` and ``%`` are C's (truncating toward zero); precedence is C's;
* a function body: comments, declarations ``[const] TYPE NAME = EXPR[, NAME = EXPR];`` of an integer type, and
  one ``return EXPR;``.

Anything else (a call, a member access, a loop, a branch, an assignment to an existing name) is refused with its
file:line:col (``pyfunc.Refused``).  Values are bounded like ``pyfunc``'s.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from .pyfunc import LIMIT, Refused

INT_TYPES = ("int", "int32_t", "int64_t", "uint32_t", "uint64_t", "size_t", "unsigned", "long", "auto")
_TOKEN = re.compile(r"\s*(?:(?P<num>0[xX][0-9a-fA-F]+|\d+)[uUlL]*|(?P<name>[A-Za-z_]\w*)|(?P<op><<|>>|[-+*/%&|^~()]))")
_BINARY = {"|": 1, "^": 2, "&": 3, "<<": 4, ">>": 4, "+": 5, "-": 5, "*": 6, "/": 6, "%": 6}


@dataclass(frozen=True)
class Where:
    """Where a piece of text starts in its file, for messages."""

    file: str
    line: int
    col: int = 0


def strip_comments(text: str) -> str:
    """``text`` with C comments replaced by spaces (line breaks kept, so positions stay)."""
    def blank(m: re.Match[str]) -> str:
        return re.sub(r"[^\n]", " ", m.group(0))
    return re.sub(r"//[^\n]*|/\*.*?\*/", blank, text, flags=re.S)


def _tokens(text: str, at: Where) -> list[tuple[str, str, int]]:
    out, pos = [], 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if m is None:
            lead = len(text[pos:]) - len(text[pos:].lstrip())
            raise Refused(f"{text[pos:].strip()[:20]!r} is outside the C integer subset", at.file, at.line,
                          at.col + pos + lead)
        kind = m.lastgroup or ""
        out.append((kind, m.group(kind), at.col + m.start(kind)))
        pos = m.end()
    return out


def evaluate(text: str, env: Mapping[str, int], at: Where) -> int:
    """The value of the C integer expression ``text`` with the names of ``env``."""
    toks = _tokens(text, at)
    if not toks:
        raise Refused("an empty expression", at.file, at.line, at.col)
    parser = _Parser(toks, env, at)
    v = parser.expr(0)
    if parser.k != len(toks):
        raise Refused(f"unexpected {toks[parser.k][1]!r}", at.file, at.line, toks[parser.k][2])
    return v


def _c_literal(text: str, fail, col: int) -> int:
    """A C integer literal's value: ``0x``/``0X`` hexadecimal, a leading ``0`` octal (``010`` is 8), else decimal;
    a leading-zero literal with a digit 8 or 9 is no C literal and is refused."""
    if text[:2] in ("0x", "0X"):
        return int(text[2:], 16)
    if len(text) > 1 and text[0] == "0":
        if not all(c in "01234567" for c in text):
            raise fail(f"{text!r} is no C integer literal (octal digits only after a leading 0)", col)
        return int(text, 8)
    return int(text, 10)


class _Parser:
    def __init__(self, toks: list[tuple[str, str, int]], env: Mapping[str, int], at: Where) -> None:
        self.toks, self.env, self.at, self.k = toks, env, at, 0

    def _peek(self) -> tuple[str, str, int] | None:
        return self.toks[self.k] if self.k < len(self.toks) else None

    def _fail(self, why: str, col: int | None = None) -> Refused:
        return Refused(why, self.at.file, self.at.line, self.at.col if col is None else col)

    def expr(self, floor: int) -> int:
        left = self.unary()
        while (t := self._peek()) is not None and t[0] == "op" and t[1] in _BINARY and _BINARY[t[1]] > floor:
            self.k += 1
            right = self.expr(_BINARY[t[1]])
            left = _apply(t[1], left, right, self._fail, t[2])
        return left

    def unary(self) -> int:
        t = self._peek()
        if t is None:
            raise self._fail("the expression ends early")
        self.k += 1
        if t[0] == "num":
            return _bounded(_c_literal(t[1], self._fail, t[2]), self._fail, t[2])
        if t[0] == "name":
            if t[1] not in self.env:
                raise self._fail(f"name {t[1]!r} is bound to no argument or declaration", t[2])
            return self.env[t[1]]
        if t[1] == "-":
            return _bounded(-self.unary(), self._fail, t[2])
        if t[1] == "~":
            return ~self.unary()
        if t[1] == "(":
            nxt = self._peek()
            after = self.toks[self.k + 1] if self.k + 1 < len(self.toks) else None
            if nxt is not None and nxt[0] == "name" and nxt[1] in INT_TYPES and after is not None and after[1] == ")":
                self.k += 2        # a cast to an integer type
                return self.unary()
            v = self.expr(0)
            close = self._peek()
            if close is None or close[1] != ")":
                raise self._fail("a '(' without its ')'", t[2])
            self.k += 1
            return v
        raise self._fail(f"unexpected {t[1]!r}", t[2])


def _bounded(v: int, fail, col: int) -> int:
    if not -LIMIT < v < LIMIT:
        raise fail("integer out of bounds", col)
    return v


def _apply(op: str, a: int, b: int, fail, col: int) -> int:
    if op in "/%" and b == 0:
        raise fail("division by zero", col)
    if op in ("<<", ">>") and not 0 <= b < 64:
        raise fail(f"shift by {b} (0..63 only)", col)
    if op == "/":
        q = abs(a) // abs(b)
        return _bounded(q if (a < 0) == (b < 0) else -q, fail, col)
    if op == "%":
        q = abs(a) // abs(b)
        q = q if (a < 0) == (b < 0) else -q
        return a - b * q
    ops = {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "<<": lambda: a << b, ">>": lambda: a >> b,
           "&": lambda: a & b, "|": lambda: a | b, "^": lambda: a ^ b}
    return _bounded(ops[op](), fail, col)


_DECL = re.compile(r"\s*(?:const\s+)?(?:(?:unsigned|signed|long)\s+)*(?P<type>[A-Za-z_]\w*)\s+(?P<rest>.*)", re.S)


def _closing_brace(text: str, open_at: int, unclosed: Refused) -> int:
    """The index of the ``}`` that closes the ``{`` at ``open_at``; ``unclosed`` raised where there is none."""
    depth = 0
    for k in range(max(open_at, 0), len(text)):
        depth += {"{": 1, "}": -1}.get(text[k], 0)
        if depth == 0 and text[k] == "}":
            return k
    raise unclosed


def function_body(text: str, signature: str, file: str) -> tuple[str, int]:
    """The body of the function whose text starts with ``signature`` (a regular expression, up to the opening
    ``{``), and the line it starts at; ``Refused`` when absent or unbalanced."""
    m = re.search(signature, text)
    if m is None:
        raise Refused(f"no function matching {signature!r}", file, 0)
    open_at = text.find("{", m.end() - 1)
    line = text.count("\n", 0, open_at) + 1
    k = _closing_brace(text, open_at, Refused("the function's braces do not close", file, line))
    return text[open_at + 1:k], line


def function_text(text: str, name: str, file: str) -> tuple[str, int]:
    """The text of function ``name`` from its name to its closing brace, and the line of its name."""
    m = re.search(r"\b" + re.escape(name) + r"\s*\(", text)
    if m is None:
        raise Refused(f"no function {name}", file, 0)
    line = text.count("\n", 0, m.start()) + 1
    k = _closing_brace(text, text.find("{", m.end()), Refused(f"{name}: the braces do not close", file, line))
    return text[m.start():k + 1], line


def run_function(body: str, line: int, env: Mapping[str, int], file: str) -> int:
    """Evaluates a straight-line body: integer declarations, then ``return EXPR;``."""
    body = strip_comments(body)
    names = dict(env)
    offset = 0
    for stmt in body.split(";"):
        start = offset + len(stmt) - len(stmt.lstrip())
        offset += len(stmt) + 1
        s = stmt.strip()
        if not s:
            continue
        at = Where(file, line + body.count("\n", 0, start), start - body.rfind("\n", 0, start) - 1)
        if s.startswith("return"):
            return evaluate(s[len("return"):], names, at)
        m = _DECL.fullmatch(s)
        if m is None or m.group("type") not in INT_TYPES:
            raise Refused(f"{s[:40]!r}: not an integer declaration or a return", at.file, at.line, at.col)
        for part in _split_commas(m.group("rest")):
            name, eq, value = part.partition("=")
            name = name.strip()
            if not eq or not re.fullmatch(r"[A-Za-z_]\w*", name) or name in names:
                raise Refused(f"{part.strip()[:40]!r}: a declaration NAME = EXPR of a new name expected", at.file,
                              at.line, at.col)
            names[name] = evaluate(value, names, at)
    raise Refused("the function returns nothing", file, line)


def _split_commas(text: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return out
