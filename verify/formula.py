"""The formula language of the PTX ISA fragment layouts, parsed by hand.

The documentation writes layouts as pseudo-code over ``%laneid`` and the element
index ``i``::

    groupID           = %laneid >> 2
    row = groupID      for ai where 0 <= i < 2 || 4 <= i < 6
          groupID + 8  Otherwise

This module turns such text into an immutable typed AST (``Formula``).  It is a
lexer plus a recursive-descent parser: spec text is untrusted, so nothing here
ever evaluates a string.  Every error carries the line and column it refers to.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Iterator, Union

MAX_LITERAL = 2**31 - 1


class FormulaError(ValueError):
    """A formula that cannot be parsed or resolved; carries a source position."""

    def __init__(self, message: str, line: int, col: int, text: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.col = col
        self.text = text


@dataclass(frozen=True)
class Pos:
    """1-based line and column in the formula text (not in the spec file)."""

    line: int
    col: int


# ----------------------------------------------------------------------------- AST

@dataclass(frozen=True)
class Num:
    value: int
    pos: Pos = field(compare=False, default=Pos(0, 0))


@dataclass(frozen=True)
class Var:
    """A free variable: ``lane`` (``%laneid``) or ``i`` (the element index)."""

    name: str
    pos: Pos = field(compare=False, default=Pos(0, 0))


@dataclass(frozen=True)
class Ref:
    """A reference to a named definition (``groupID``, ``firstcol``...)."""

    name: str
    pos: Pos = field(compare=False, default=Pos(0, 0))


@dataclass(frozen=True)
class BinOp:
    op: str  # one of + - * / % << >> & | ^
    left: "Expr"
    right: "Expr"
    pos: Pos = field(compare=False, default=Pos(0, 0))


@dataclass(frozen=True)
class Neg:
    operand: "Expr"
    pos: Pos = field(compare=False, default=Pos(0, 0))


@dataclass(frozen=True)
class Span:
    """``[firstcol ... lastcol]``: the sparse-A column range of the doc."""

    first: "Expr"
    last: "Expr"
    pos: Pos = field(compare=False, default=Pos(0, 0))


Expr = Union[Num, Var, Ref, BinOp, Neg, Span]


@dataclass(frozen=True)
class Compare:
    """A comparison chain ``e0 op0 e1 op1 e2`` (``0 <= i < 2``)."""

    ops: tuple[str, ...]  # each one of < <= > >= == !=
    operands: tuple[Expr, ...]
    pos: Pos = field(compare=False, default=Pos(0, 0))


@dataclass(frozen=True)
class InSet:
    """``i = {0,..,3}`` or ``for a0 and a2`` (membership in a finite set)."""

    operand: Expr
    values: tuple[int, ...]
    pos: Pos = field(compare=False, default=Pos(0, 0))


@dataclass(frozen=True)
class BoolOp:
    op: str  # "and" | "or"
    operands: tuple["Cond", ...]
    pos: Pos = field(compare=False, default=Pos(0, 0))


Cond = Union[Compare, InSet, BoolOp]


@dataclass(frozen=True)
class Case:
    """One line of a piecewise definition; ``cond is None`` means always/otherwise."""

    expr: Expr
    cond: Cond | None
    pos: Pos = field(compare=False, default=Pos(0, 0))


@dataclass(frozen=True)
class Definition:
    name: str
    cases: tuple[Case, ...]
    pos: Pos = field(compare=False, default=Pos(0, 0))


@dataclass(frozen=True)
class Formula:
    """All definitions of one fragment, in source order; ``row`` and ``col`` required."""

    definitions: tuple[Definition, ...]
    element_prefix: str

    def get(self, name: str) -> Definition:
        for d in self.definitions:
            if d.name == name:
                return d
        raise KeyError(name)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(d.name for d in self.definitions)


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
  | (?P<lane>%laneid\b)
  | (?P<name>[A-Za-z_][A-Za-z_0-9]*)
  | (?P<op>\.\.\.|\.\.|\|\||&&|<<|>>|<=|>=|==|!=|[-+*/%&|^<>=(){}\[\],.:])
    """,
    re.VERBOSE,
)

KEYWORDS = {"for", "where", "if", "otherwise", "and", "or"}


def tokenize(text: str) -> list[Token]:
    """Split formula text into tokens; reject any character outside the language."""
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


# ----------------------------------------------------------------------------- parser

_BINARY_LEVELS: tuple[tuple[str, ...], ...] = (
    ("|",),
    ("^",),
    ("&",),
    ("<<", ">>"),
    ("+", "-"),
    ("*", "/", "%"),
)
_RELOPS = {"<", "<=", ">", ">=", "==", "=", "!="}


def _is_kw(tok: Token, word: str) -> bool:
    return tok.kind == "NAME" and tok.text.lower() == word


class LineParser:
    """Recursive descent over the tokens of one logical line."""

    def __init__(self, tokens: list[Token], prefix: str, source_lines: list[str]) -> None:
        self.toks = tokens
        self.i = 0
        self.prefix = prefix
        self.lines = source_lines

    # -- helpers
    @property
    def tok(self) -> Token:
        return self.toks[self.i]

    def error(self, message: str, tok: Token | None = None) -> FormulaError:
        t = tok or self.tok
        text = self.lines[t.line - 1] if 0 < t.line <= len(self.lines) else ""
        return FormulaError(message, t.line, t.col, text)

    def at_op(self, *ops: str) -> bool:
        return self.tok.kind == "OP" and self.tok.text in ops

    def at_kw(self, word: str) -> bool:
        return _is_kw(self.tok, word)

    def expect_op(self, op: str) -> Token:
        if not self.at_op(op):
            raise self.error(f"expected '{op}', found {self._describe(self.tok)}")
        t = self.tok
        self.i += 1
        return t

    @staticmethod
    def _describe(t: Token) -> str:
        return "end of line" if t.kind in ("EOF", "NL") else repr(t.text)

    def at_end(self) -> bool:
        return self.tok.kind in ("EOF", "NL")

    # -- expressions
    def expr(self) -> Expr:
        return self._binary(0)

    def _binary(self, level: int) -> Expr:
        if level == len(_BINARY_LEVELS):
            return self._unary()
        left = self._binary(level + 1)
        while self.at_op(*_BINARY_LEVELS[level]):
            op_tok = self.tok
            self.i += 1
            right = self._binary(level + 1)
            left = BinOp(op_tok.text, left, right, Pos(op_tok.line, op_tok.col))
        return left

    def _unary(self) -> Expr:
        t = self.tok
        if self.at_op("-"):
            self.i += 1
            return Neg(self._unary(), Pos(t.line, t.col))
        if self.at_op("+"):
            self.i += 1
            return self._unary()
        return self._primary()

    def _primary(self) -> Expr:
        t = self.tok
        pos = Pos(t.line, t.col)
        if t.kind == "NUM":
            self.i += 1
            return Num(t.value, pos)
        if t.kind == "LANE":
            self.i += 1
            return Var("lane", pos)
        if t.kind == "NAME":
            if t.text.lower() in KEYWORDS:
                raise self.error(f"expected an expression, found keyword {t.text!r}")
            self.i += 1
            if self.at_op("("):
                raise self.error(f"'{t.text}(' looks like a function call; the formula language has none", t)
            if t.text == "i":
                return Var("i", pos)
            return Ref(t.text, pos)
        if self.at_op("("):
            self.i += 1
            e = self.expr()
            self.expect_op(")")
            return e
        if self.at_op("["):
            self.i += 1
            first = self.expr()
            if not self.at_op("...", ".."):
                raise self.error(f"expected '...' in a column range, found {self._describe(self.tok)}")
            self.i += 1
            last = self.expr()
            self.expect_op("]")
            return Span(first, last, pos)
        raise self.error(f"expected an expression, found {self._describe(t)}")

    # -- conditions
    def cond(self) -> Cond:
        return self._or()

    def _or(self) -> Cond:
        first = self.tok
        parts = [self._and()]
        while self.at_op("||") or self.at_kw("or"):
            self.i += 1
            parts.append(self._and())
        return parts[0] if len(parts) == 1 else BoolOp("or", tuple(parts), Pos(first.line, first.col))

    def _and(self) -> Cond:
        first = self.tok
        parts = [self._atom()]
        while self.at_op("&&"):
            self.i += 1
            parts.append(self._atom())
        return parts[0] if len(parts) == 1 else BoolOp("and", tuple(parts), Pos(first.line, first.col))

    def _atom(self) -> Cond:
        start = self.i
        first = self.tok
        try:
            left = self.expr()
            if not self.at_op(*_RELOPS):
                raise self.error(f"expected a comparison, found {self._describe(self.tok)}")
        except FormulaError:
            if self.toks[start].kind == "OP" and self.toks[start].text == "(":
                self.i = start + 1
                c = self.cond()
                self.expect_op(")")
                return c
            raise
        ops: list[str] = []
        operands: list[Expr] = [left]
        while self.at_op(*_RELOPS):
            op = self.tok.text
            self.i += 1
            if op in ("=", "==") and self.at_op("{"):
                if ops:
                    raise self.error("a set membership cannot be part of a comparison chain")
                return InSet(left, self._set(), Pos(first.line, first.col))
            ops.append("==" if op == "=" else op)
            operands.append(self.expr())
        return Compare(tuple(ops), tuple(operands), Pos(first.line, first.col))

    def _set(self) -> tuple[int, ...]:
        """``{0,..,3}``, ``{0, ...,63}``, ``{0, 1, 2, 3}``."""
        self.expect_op("{")
        values: list[int] = []
        while True:
            if self.at_op("..", "..."):
                if not values:
                    raise self.error("a range in a set needs a first value")
                self.i += 1
                if self.at_op(","):
                    self.i += 1
                hi = self._set_number()
                lo = values[-1]
                if hi < lo:
                    raise self.error(f"empty range {lo}..{hi}")
                if hi - lo > 4096:
                    raise self.error(f"range {lo}..{hi} is too large")
                values.extend(range(lo + 1, hi + 1))
            else:
                values.append(self._set_number())
            if self.at_op(","):
                self.i += 1
                continue
            self.expect_op("}")
            break
        if len(set(values)) != len(values):
            raise self.error("a value appears twice in the set")
        return tuple(values)

    def _set_number(self) -> int:
        t = self.tok
        if t.kind != "NUM":
            raise self.error(f"expected a number in the set, found {self._describe(t)}")
        self.i += 1
        return t.value

    # -- element selectors: "for ai where ...", "for a0 and a2"
    def element_selector(self) -> Cond | None:
        t = self.tok
        pos = Pos(t.line, t.col)
        indices: list[int] = []
        generic = False
        while True:
            t = self.tok
            if t.kind != "NAME":
                raise self.error(f"expected an element name such as {self.prefix}i or {self.prefix}0, found {self._describe(t)}")
            name = t.text
            if not name.startswith(self.prefix) or len(name) == len(self.prefix):
                raise self.error(f"element {name!r} does not belong to this fragment (elements are {self.prefix}0, {self.prefix}1, ...)")
            rest = name[len(self.prefix):]
            if rest == "i":
                generic = True
            elif rest.isdigit():
                indices.append(int(rest))
            else:
                raise self.error(f"malformed element name {name!r}")
            self.i += 1
            if self.at_kw("and") or self.at_op(","):
                self.i += 1
                continue
            break
        if generic and indices:
            raise self.error(f"mixing {self.prefix}i with numbered elements")
        conds: list[Cond] = []
        if indices:
            if len(set(indices)) != len(indices):
                raise self.error("an element is named twice")
            conds.append(InSet(Var("i", pos), tuple(indices), pos))
        if self.at_kw("where"):
            if not generic:
                raise self.error(f"'where' after numbered elements; write {self.prefix}i")
            self.i += 1
            conds.append(self.cond())
        if not conds:
            return None
        return conds[0] if len(conds) == 1 else BoolOp("and", tuple(conds), pos)

    def case(self) -> Case:
        """``expr [for SEL] [if COND] [otherwise]`` on one line."""
        t = self.tok
        e = self.expr()
        conds: list[Cond] = []
        if self.at_kw("for"):
            self.i += 1
            sel = self.element_selector()
            if sel is not None:
                conds.append(sel)
        if self.at_kw("if"):
            self.i += 1
            conds.append(self.cond())
        if self.at_kw("otherwise"):
            self.i += 1
        if not self.at_end():
            raise self.error(f"unexpected {self._describe(self.tok)} after the expression")
        cond: Cond | None
        if not conds:
            cond = None
        elif len(conds) == 1:
            cond = conds[0]
        else:
            cond = BoolOp("and", tuple(conds), Pos(t.line, t.col))
        return Case(e, cond, Pos(t.line, t.col))


def split_lines(tokens: list[Token]) -> list[list[Token]]:
    lines: list[list[Token]] = []
    cur: list[Token] = []
    for t in tokens:
        if t.kind in ("NL", "EOF"):
            if cur:
                cur.append(Token("EOF", "", 0, t.line, t.col))
                lines.append(cur)
            cur = []
        else:
            cur.append(t)
    return lines


def _is_definition_start(line: list[Token], at: int) -> bool:
    return (
        len(line) > at + 1
        and line[at].kind == "NAME"
        and line[at].text.lower() not in KEYWORDS
        and line[at + 1].kind == "OP"
        and line[at + 1].text == "="
    )


def parse_formula(text: str, element_prefix: str) -> Formula:
    """Parse a whole formula block (several definitions) into a ``Formula``.

    A line ``NAME = ...`` (or ``where NAME = ...``) starts a definition; any other
    non-empty line adds a case to the definition above it.  A line holding only
    ``Where`` introduces helper definitions (the sparse ``firstcol``/``lastcol``).
    """
    source_lines = text.split("\n")
    tokens = tokenize(text)
    defs: list[tuple[str, Pos, list[Case]]] = []
    for line in split_lines(tokens):
        p = LineParser(line, element_prefix, source_lines)
        if len(line) == 2 and _is_kw(line[0], "where"):
            continue  # "Where" on a line of its own
        start = 1 if _is_kw(line[0], "where") else 0
        if start == 1 and not _is_definition_start(line, 1):
            raise p.error("expected 'where NAME = ...'")
        if _is_definition_start(line, start):
            name_tok = line[start]
            if name_tok.text == "i":
                raise p.error("'i' is the element index and cannot be defined", name_tok)
            if any(d[0] == name_tok.text for d in defs):
                raise p.error(f"{name_tok.text!r} is defined twice", name_tok)
            p.i = start + 2
            if p.at_end():
                raise p.error(f"definition of {name_tok.text!r} has no value")
            defs.append((name_tok.text, Pos(name_tok.line, name_tok.col), [p.case()]))
        else:
            if not defs:
                raise p.error("expected a definition 'NAME = ...'")
            defs[-1][2].append(p.case())
    formula = Formula(
        tuple(Definition(n, tuple(cs), pos) for n, pos, cs in defs), element_prefix
    )
    _resolve(formula, source_lines)
    return formula


# ----------------------------------------------------------------------------- resolution

def walk(node: object) -> Iterator[object]:
    """Every AST node below ``node`` (pre-order)."""
    yield node
    if isinstance(node, BinOp):
        yield from walk(node.left)
        yield from walk(node.right)
    elif isinstance(node, Neg):
        yield from walk(node.operand)
    elif isinstance(node, Span):
        yield from walk(node.first)
        yield from walk(node.last)
    elif isinstance(node, Compare):
        for o in node.operands:
            yield from walk(o)
    elif isinstance(node, InSet):
        yield from walk(node.operand)
    elif isinstance(node, BoolOp):
        for o in node.operands:
            yield from walk(o)
    elif isinstance(node, Case):
        yield from walk(node.expr)
        if node.cond is not None:
            yield from walk(node.cond)
    elif isinstance(node, Definition):
        for c in node.cases:
            yield from walk(c)


def _resolve(formula: Formula, lines: list[str]) -> None:
    """Unknown names, cycles, misplaced spans and missing row/col are errors."""
    names = {d.name: d for d in formula.definitions}

    def err(msg: str, pos: Pos) -> FormulaError:
        text = lines[pos.line - 1] if 0 < pos.line <= len(lines) else ""
        return FormulaError(msg, pos.line, pos.col, text)

    for d in formula.definitions:
        for n in walk(d):
            if isinstance(n, Ref) and n.name not in names:
                raise err(f"unknown identifier {n.name!r}", n.pos)
            if isinstance(n, Span) and d.name != "col":
                raise err("a column range [first ... last] is only allowed as the value of col", n.pos)
        for c in d.cases:
            if c.cond is not None:
                for n in walk(c.cond):
                    if isinstance(n, Span):
                        raise err("a column range cannot appear in a condition", n.pos)
            for n in walk(c.expr):
                if isinstance(n, Span) and n is not c.expr:
                    raise err("a column range must be the whole value of col", n.pos)
    for required in ("row", "col"):
        if required not in names:
            raise FormulaError(f"the formula defines no {required!r}", 1, 1, lines[0] if lines else "")
    # cycle detection
    state: dict[str, int] = {}

    def visit(name: str, via: Pos) -> None:
        if state.get(name) == 1:
            raise err(f"definition of {name!r} refers to itself", via)
        if state.get(name) == 2:
            return
        state[name] = 1
        for n in walk(names[name]):
            if isinstance(n, Ref):
                visit(n.name, n.pos)
        state[name] = 2

    for d in formula.definitions:
        visit(d.name, d.pos)


def replace_node(node: object, target: object, new: object) -> object:
    """Rebuild a frozen AST with ``target`` (by identity) replaced by ``new`` (for mutations
    and fix searches); untouched subtrees are shared."""
    if node is target:
        return new
    if isinstance(node, tuple):
        items = tuple(replace_node(x, target, new) for x in node)
        return items if any(a is not b for a, b in zip(items, node)) else node
    if dataclasses.is_dataclass(node) and not isinstance(node, (type, Pos)):
        changes = {}
        for f in dataclasses.fields(node):
            old = getattr(node, f.name)
            nv = replace_node(old, target, new)
            if nv is not old:
                changes[f.name] = nv
        return dataclasses.replace(node, **changes) if changes else node
    return node


def uses_lane_only(expr: object) -> bool:
    """True when the node mentions no element index (used for lane-group formulas)."""
    return not any(isinstance(n, Var) and n.name == "i" for n in walk(expr))


def render(node: object) -> str:
    """Canonical text of an AST node (fully parenthesised), for messages and tests."""
    if isinstance(node, Num):
        return str(node.value)
    if isinstance(node, Var):
        return "%laneid" if node.name == "lane" else "i"
    if isinstance(node, Ref):
        return node.name
    if isinstance(node, BinOp):
        return f"({render(node.left)} {node.op} {render(node.right)})"
    if isinstance(node, Neg):
        return f"-{render(node.operand)}"
    if isinstance(node, Span):
        return f"[{render(node.first)} ... {render(node.last)}]"
    if isinstance(node, Compare):
        out = render(node.operands[0])
        for op, o in zip(node.ops, node.operands[1:]):
            out += f" {op} {render(o)}"
        return out
    if isinstance(node, InSet):
        return f"{render(node.operand)} = {{{', '.join(map(str, node.values))}}}"
    if isinstance(node, BoolOp):
        sep = " || " if node.op == "or" else " && "
        return "(" + sep.join(render(o) for o in node.operands) + ")"
    if isinstance(node, Case):
        body = render(node.expr)
        return body if node.cond is None else f"{body} if {render(node.cond)}"
    if isinstance(node, Definition):
        return f"{node.name} = " + " ; ".join(render(c) for c in node.cases)
    raise TypeError(type(node))
