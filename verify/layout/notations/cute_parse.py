"""The two CuTe layout grammars: ``shape:stride`` text and C++ ``Layout<Shape<...>, Stride<...>>`` types.

``parse_cute`` reads either into a ``CuteLayout``.  The lexer (``iter_tokens``/``lex``, with a ``cpp``
mode for whole headers), the positioned parse trees (``PNode``, ``TNode``), the C++ type parser
(``TypeParser``) and its interpreter (``Interpreter``) are shared with the CuTe header, shared-memory
and TiledMMA readers.

Text is untrusted: both grammars are hand-written, nesting is bounded (``MAX_DEPTH``), numbers are
length-checked before conversion, and every error is a positioned ``NotationError``.
"""
from __future__ import annotations

from typing import Any, cast

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from .cute_layout import MAX_DEPTH, CuteLayout, IntTuple, compact_left, flatten, tuple_text
from .errors import NotationError, decode_source

MAX_LEAVES = 256          # flattened modes of one layout
MAX_SIZE = 1 << 20        # product of a shape
MAX_STRIDE = (1 << 31) - 1
MAX_DIGITS = 10           # longest integer literal accepted (2^31 has 10 digits)


# ----------------------------------------------------------------------------- lexer

# kinds: NUM (value set; "_4" is NUM 4), NAME, P (punctuation), STR (cpp only), END
Token = tuple  # (kind, text, value, line, col)

_LEX = re.compile(
    r"""
    (?P<ws>[ \t\r\n\f\v]+)
  | (?P<lc>//[^\n]*)
  | (?P<bc>/\*.*?\*/)
  | (?P<ubc>/\*)
  | (?P<num>[0-9][0-9A-Za-z_'.]*)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<str>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<pp>\#)
  | (?P<p>::|[(){}<>\[\],:;=+\-*/%&|^!~?.])
    """,
    re.VERBOSE | re.DOTALL,
)
_USCORE_NUM = re.compile(r"_[0-9]+\Z")
_DIGITS = re.compile(r"[0-9]+\Z")


def _short(s: str, limit: int = 40) -> str:
    """Long user text shortened for a message."""
    return s if len(s) <= limit else s[:limit] + "..."


def _int_value(text: str) -> int | None:
    """Decimal literal -> int, or None when it is not a plain decimal (``1.0f``, ``0x1F``)."""
    digits = text.removeprefix("_")
    if not _DIGITS.match(digits):
        return None
    if len(digits) > MAX_DIGITS:
        return -1  # marker: too large; callers report it with the position
    return int(digits)


class TokenStream:
    """Tokens lexed on demand, so a parser that rejects at token 33 never lexes a megabyte."""

    def __init__(self, tokens: Iterator[Token]) -> None:
        self._gen, self._buf = tokens, []  # type: ignore[var-annotated]
        self._end: Token | None = None

    def __getitem__(self, k: int) -> Token:
        buf = self._buf
        while k >= len(buf):
            if self._end is not None:
                return self._end
            try:
                buf.append(next(self._gen))
            except StopIteration:  # past the end: the end token again (the lexer yields it last)
                self._end = buf[-1]
        return buf[k]


def lex(text: str, source: str = "argument", *, cpp: bool = False, line0: int = 1, col0: int = 1,
        max_tokens: int | None = None) -> list[Token]:
    """All tokens of ``text`` (see ``iter_tokens``); more than ``max_tokens`` is an error."""
    toks: list[Token] = []
    for t in iter_tokens(text, source, cpp=cpp, line0=line0, col0=col0):
        toks.append(t)
        if max_tokens is not None and len(toks) > max_tokens:
            raise NotationError(f"more than {max_tokens} tokens", t[3], t[4], source)
    return toks


def iter_tokens(text: str, source: str = "argument", *, cpp: bool = False, line0: int = 1,
                col0: int = 1) -> Iterator[Token]:
    """Tokens with 1-based positions.  ``cpp`` mode also skips preprocessor lines and lexes string
    and character literals and any other character (as opaque punctuation), for whole headers."""
    line, line_start, k, n = line0, 0, 0, len(text)
    first_col = col0 - 1  # column offset applies to the first line only
    at_line_start = True
    match = _LEX.match
    while k < n:
        m = match(text, k)
        col = k - line_start + 1 + (first_col if line == line0 else 0)
        if m is None:
            ch = text[k]
            if not cpp:
                raise NotationError(f"unexpected character {ch!r}", line, col, source)
            yield ("P", ch, None, line, col)
            at_line_start = False
            k += 1
            continue
        kind = m.lastgroup
        s = m.group()
        if kind in ("ws", "lc", "bc"):
            nl = s.count("\n")
            if nl:
                line += nl
                line_start = k + s.rfind("\n") + 1
                at_line_start = True
        elif kind == "ubc":
            raise NotationError("unterminated /* comment", line, col, source)
        elif kind == "pp":
            if not cpp:
                raise NotationError("unexpected character '#'", line, col, source)
            if not at_line_start:
                yield ("P", "#", None, line, col)
                k = m.end()
                continue
            # skip the directive, with backslash continuations
            end = k
            while True:
                nlpos = text.find("\n", end)
                if nlpos < 0:
                    end = n
                    break
                if text[nlpos - 1] == "\\" or (nlpos >= 2 and text[nlpos - 1] == "\r" and text[nlpos - 2] == "\\"):
                    line += 1
                    line_start = nlpos + 1
                    end = nlpos + 1
                    continue
                end = nlpos
                break
            k = end
            continue
        elif kind == "num" or (kind == "name" and _USCORE_NUM.match(s)):
            v = _int_value(s)
            if not cpp and v is None:
                raise NotationError(f"malformed number {_short(s)!r}", line, col, source)
            if v == -1:
                if not cpp:
                    raise NotationError(f"number {_short(s)} is too large", line, col, source)
                v = None  # in a header: only an error if a layout uses it
            yield ("NUM", s, v, line, col)
            at_line_start = False
        elif kind == "name":
            yield ("NAME", s, None, line, col)
            at_line_start = False
        elif kind == "str":
            if not cpp:
                raise NotationError("unexpected string literal", line, col, source)
            yield ("STR", s, None, line, col)
            at_line_start = False
            nl = s.count("\n")  # a backslash-newline continues a literal
            if nl:
                line += nl
                line_start = k + s.rfind("\n") + 1
        else:
            yield ("P", s, None, line, col)
            at_line_start = False
        k = m.end()
    col = k - line_start + 1 + (first_col if line == line0 else 0)
    yield ("END", "", None, line, col)


# ----------------------------------------------------------------------------- parse trees

@dataclass(frozen=True)
class PNode:
    """A parsed int tuple with the position of each node (for congruence errors)."""

    value: IntTuple
    line: int
    col: int
    children: tuple[PNode, ...] | None = None


def _check_congruent(shape: PNode, stride: PNode, source: str) -> None:
    stack = [(shape, stride)]
    while stack:
        s, d = stack.pop()
        if (s.children is None) != (d.children is None) or (
                s.children is not None and len(s.children) != len(d.children)):  # type: ignore[arg-type]
            raise NotationError(
                f"stride {tuple_text(d.value)} is not congruent with shape {tuple_text(s.value)} "
                f"(shape written at {s.line}:{s.col})", d.line, d.col, source)
        if s.children is not None:
            stack.extend(zip(s.children, d.children))  # type: ignore[arg-type]


def _pnode_leaves(p: PNode) -> Iterator[PNode]:
    stack = [iter((p,))]
    while stack:
        for x in stack[-1]:
            if x.children is not None:
                stack.append(iter(x.children))
                break
            yield x
        else:
            stack.pop()


def _validate(shape: PNode, stride: PNode, source: str, max_size: int = MAX_SIZE) -> CuteLayout:
    """Congruence and value bounds, each error at the offending entry."""
    _check_congruent(shape, stride, source)
    leaves = list(_pnode_leaves(shape))
    if len(leaves) > MAX_LEAVES:
        raise NotationError(f"layout has {len(leaves)} modes (limit {MAX_LEAVES})", leaves[MAX_LEAVES].line,
                            leaves[MAX_LEAVES].col, source)
    size = 1
    for p in leaves:
        v = cast(int, p.value)  # a leaf (no children): an integer
        if v < 1:
            raise NotationError(f"shape entry {v} must be >= 1", p.line, p.col, source)
        size *= v
        if size > max_size:
            raise NotationError(f"layout size exceeds {max_size} (2^{max_size.bit_length() - 1}) at this mode",
                                p.line, p.col, source)
    for p in _pnode_leaves(stride):
        v = cast(int, p.value)  # a leaf, as above
        if v < 0:
            raise NotationError(f"stride {v} is negative (not supported)", p.line, p.col, source)
        if v > MAX_STRIDE:
            raise NotationError(f"stride {v} is too large (limit 2^31 - 1)", p.line, p.col, source)
    return CuteLayout(shape.value, stride.value)


def _compact_node(shape: PNode) -> PNode:
    strides = iter(flatten(compact_left(shape.value)))

    def build(p: PNode) -> PNode:
        if p.children is None:
            return PNode(next(strides), p.line, p.col)
        kids = tuple(build(c) for c in p.children)
        return PNode(tuple(k.value for k in kids), p.line, p.col, kids)
    return build(shape)


# ----------------------------------------------------------------------------- printed form

def _parse_printed_tuple(toks: TokenStream, k: int, source: str) -> tuple[PNode, int]:
    """``NUM | '(' tuple {',' tuple} ')'`` with an explicit stack (no recursion)."""
    stack: list[tuple[list[PNode], Token]] = []
    while True:
        t = toks[k]
        if t[0] == "P" and t[1] == "(":
            if len(stack) >= MAX_DEPTH:
                raise NotationError(f"tuple nested deeper than {MAX_DEPTH} levels", t[3], t[4], source)
            stack.append(([], t))
            k += 1
            if toks[k][0] == "P" and toks[k][1] == ")":
                raise NotationError("empty tuple", toks[k][3], toks[k][4], source)
            continue
        if t[0] == "P" and t[1] == "-":
            raise NotationError("negative numbers are not supported", t[3], t[4], source)
        if t[0] != "NUM":
            raise NotationError(f"expected a number or '(', found {_describe(t)}", t[3], t[4], source)
        node = PNode(t[2], t[3], t[4])
        k += 1
        while True:
            if not stack:
                return node, k
            stack[-1][0].append(node)
            t = toks[k]
            if t[0] == "P" and t[1] == ",":
                k += 1
                break
            if t[0] == "P" and t[1] == ")":
                items, open_tok = stack.pop()
                node = PNode(tuple(c.value for c in items), open_tok[3], open_tok[4], tuple(items))
                k += 1
                continue
            raise NotationError(f"expected ',' or ')', found {_describe(t)} (tuple opened at "
                                f"{stack[-1][1][3]}:{stack[-1][1][4]})", t[3], t[4], source)


def _describe(t: Token) -> str:
    return "end of input" if t[0] == "END" else repr(_short(t[1]))


def _parse_printed(toks: TokenStream, source: str, max_size: int = MAX_SIZE) -> CuteLayout:
    shape, k = _parse_printed_tuple(toks, 0, source)
    t = toks[k]
    if t[0] == "END":
        return _validate(shape, _compact_node(shape), source, max_size)
    if not (t[0] == "P" and t[1] == ":"):
        raise NotationError(f"expected ':' between shape and stride, found {_describe(t)}", t[3], t[4], source)
    stride, k = _parse_printed_tuple(toks, k + 1, source)
    if toks[k][0] != "END":
        raise NotationError(f"unexpected {_describe(toks[k])} after the layout", toks[k][3], toks[k][4], source)
    return _validate(shape, stride, source, max_size)


# ----------------------------------------------------------------------------- C++ form

@dataclass(frozen=True)
class TNode:
    """A C++ template type or integer constant expression, as written (before interpretation)."""

    kind: str            # "num" | "name" | "op"
    text: str            # number text, (qualified) name, or operator
    value: int | None
    args: tuple[TNode, ...] | None   # template arguments (name<...>) or operands (op)
    line: int
    col: int


Value = CuteLayout | PNode
# a reader's own names (``cute_shared``'s swizzles and pointer flags, ``cute_headers``' members): its own kinds
# of value, or None for a name it does not know
Resolver = Callable[[TNode, "Interpreter"], Any]


class TypeParser:
    """Recursive descent over C++ template types, depth-bounded by ``MAX_DEPTH``.

    ``type := NUM | qname ['<' arg {',' arg} '>']``; ``arg := expr`` where ``expr`` is an integer
    constant expression (``+ - * / %``, parentheses) whose atoms are types — enough for
    ``Int<N/8>`` in CuTe's template aliases.
    """

    def __init__(self, toks: list[Token] | TokenStream, k: int, source: str) -> None:
        self.toks, self.k, self.source, self.depth = toks, k, source, 0

    @property
    def tok(self) -> Token:
        return self.toks[self.k]

    def at(self, p: str) -> bool:
        t = self.tok
        return t[0] == "P" and t[1] == p

    def error(self, message: str, t: Token | None = None) -> NotationError:
        t = t or self.tok
        return NotationError(message, t[3], t[4], self.source)

    def expect(self, p: str) -> Token:
        if not self.at(p):
            raise self.error(f"expected '{p}', found {_describe(self.tok)}")
        t = self.tok
        self.k += 1
        return t

    def _enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.error(f"type nested deeper than {MAX_DEPTH} levels")

    def qname(self) -> tuple[str, Token]:
        first = self.tok
        parts = []
        if self.at("::"):
            self.k += 1
        while True:
            t = self.tok
            if t[0] != "NAME":
                raise self.error(f"expected a type name, found {_describe(t)}")
            parts.append(t[1])
            self.k += 1
            if self.at("::") and self.toks[self.k + 1][0] == "NAME":
                self.k += 1
                continue
            return "::".join(parts), first

    def type(self) -> TNode:
        self._enter()
        t = self.tok
        if t[0] == "NUM":
            if t[2] is None:
                raise self.error(f"unsupported number {_short(t[1])!r} (only decimal integers below 2^31)")
            self.k += 1
            self.depth -= 1
            return TNode("num", t[1], t[2], None, t[3], t[4])
        if t[0] == "NAME" and t[1] == "typename":
            self.k += 1
        name, first = self.qname()
        args = None
        if self.at("<"):
            self.k += 1
            items = [self.expr()]
            while self.at(","):
                self.k += 1
                items.append(self.expr())
            if not self.at(">"):
                raise self.error(f"expected ',' or '>' in the arguments of {name}<...>, found {_describe(self.tok)}")
            self.k += 1
            args = tuple(items)
        self.depth -= 1
        return TNode("name", name, None, args, first[3], first[4])

    # integer constant expressions inside template arguments
    def expr(self) -> TNode:
        self._enter()
        left = self.term()
        while self.at("+") or self.at("-"):
            op = self.tok
            self.k += 1
            left = TNode("op", op[1], None, (left, self.term()), op[3], op[4])
        self.depth -= 1
        return left

    def term(self) -> TNode:
        left = self.atom()
        while self.at("*") or self.at("/") or self.at("%"):
            op = self.tok
            self.k += 1
            left = TNode("op", op[1], None, (left, self.atom()), op[3], op[4])
        return left

    def atom(self) -> TNode:
        if self.at("("):
            self._enter()
            self.k += 1
            e = self.expr()
            self.expect(")")
            self.depth -= 1
            return e
        return self.type()


class Interpreter:
    """Gives meaning to a ``TNode``: ``Layout<...>``, ``Shape/Stride/tuple<...>``, ``_N``,
    ``Int<N>``/``C<N>``, integer expressions over ``env`` (template parameters), and — through
    ``resolve`` — aliases defined elsewhere (headers)."""

    _TUPLES = frozenset({"Shape", "Stride", "tuple", "Tile", "Coord", "Step"})
    _INTS = frozenset({"Int", "C", "integral_constant"})

    def __init__(self, source: str, env: dict[str, int] | None = None, resolve: Resolver | None = None) -> None:
        self.source, self.env, self.resolve = source, dict(env or {}), resolve

    def error(self, message: str, node: TNode) -> NotationError:
        return NotationError(message, node.line, node.col, self.source)

    @staticmethod
    def base(name: str) -> str:
        return name.removeprefix("cute::")

    def value(self, node: TNode, depth: int = 0) -> Value:
        if depth > MAX_DEPTH:
            raise self.error(f"type nested deeper than {MAX_DEPTH} levels", node)
        if node.kind == "num":
            return PNode(node.value, node.line, node.col)  # type: ignore[arg-type]
        if node.kind == "op":
            a, b = (self.integer(x, depth + 1) for x in node.args)  # type: ignore[union-attr]
            if node.text in "/%" and b == 0:
                raise self.error("division by zero", node)
            v = {"+": a + b, "-": a - b, "*": a * b, "/": a // b if b else 0, "%": a % b if b else 0}[node.text]
            if not 0 <= v <= MAX_STRIDE:
                raise self.error(f"value {v} out of range", node)
            return PNode(v, node.line, node.col)
        name = self.base(node.text)
        if node.args is None and name in self.env:
            return PNode(self.env[name], node.line, node.col)
        if name == "Layout" and node.args is not None:
            if len(node.args) not in (1, 2):
                raise self.error(f"Layout takes 1 or 2 arguments, got {len(node.args)}", node)
            shape = self.int_tuple(node.args[0], depth + 1)
            stride = self.int_tuple(node.args[1], depth + 1) if len(node.args) == 2 else _compact_node(shape)
            return _validate(shape, stride, self.source)
        if name in self._TUPLES and node.args is not None:
            kids = tuple(self.int_tuple(a, depth + 1) for a in node.args)
            return PNode(tuple(k.value for k in kids), node.line, node.col, kids)
        if name in self._INTS and node.args is not None:
            if len(node.args) != 1:
                raise self.error(f"{name} takes one argument", node)
            return PNode(self.integer(node.args[0], depth + 1), node.line, node.col)
        if self.resolve is not None:
            resolved = self.resolve(node, self)
            if resolved is not None:
                return resolved
        raise self.error(f"unknown type {_short(node.text)!r}" + ("<...>" if node.args else ""), node)

    def int_tuple(self, node: TNode, depth: int = 0) -> PNode:
        v = self.value(node, depth)
        if isinstance(v, CuteLayout):
            raise self.error("a layout where a shape or stride was expected", node)
        return v

    def integer(self, node: TNode, depth: int = 0) -> int:
        v = self.int_tuple(node, depth)
        if v.children is not None:
            raise self.error("a tuple where an integer was expected", node)
        return v.value  # type: ignore[return-value]

    def layout(self, node: TNode) -> CuteLayout:
        v = self.value(node)
        if isinstance(v, CuteLayout):
            return v
        raise self.error(f"expected a Layout<...>, found {node.text!r}", node)


# ----------------------------------------------------------------------------- entry points

def parse_cute(text: str | bytes, source: str = "argument", *, max_size: int = MAX_SIZE) -> CuteLayout:
    """Parse ``((4,8),(2,2)):((32,1),(16,8))`` or ``Layout<Shape<...>,Stride<...>>`` (a printed layout may
    be larger than ``MAX_SIZE`` where the caller says so: CuTe's Tensor Memory copy traits count bits)."""
    text = decode_source(text, source, limit=1 << 20)
    toks = TokenStream(iter_tokens(text, source))
    if toks[0][0] == "END":
        raise NotationError("empty layout", toks[0][3], toks[0][4], source)
    if toks[0][0] == "NAME" or (toks[0][0] == "P" and toks[0][1] == "::"):
        parser = TypeParser(toks, 0, source)
        node = parser.type()
        if parser.tok[0] == "P" and parser.tok[1] == ";":
            parser.k += 1
        if parser.tok[0] != "END":
            raise parser.error(f"unexpected {_describe(parser.tok)} after the layout")
        return Interpreter(source).layout(node)
    return _parse_printed(toks, source, max_size)
