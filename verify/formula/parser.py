"""Recursive-descent parser of the formula language: tokens -> ``Formula``.

The documentation writes layouts as pseudo-code over ``%laneid`` and the element
index ``i``::

    groupID           = %laneid >> 2
    row = groupID      for ai where 0 <= i < 2 || 4 <= i < 6
          groupID + 8  Otherwise

``%tid`` is the thread index of the layout's domain (0..127 for a warpgroup layout, where
``%laneid`` would read as the lane inside one warp); both name the same variable, so a 32-thread
formula may use either.

Spec text is untrusted, so nothing here ever evaluates a string.  Every error
carries the line and column it refers to.
"""
from __future__ import annotations

import functools

from .ast import (MAX_CASES, MAX_DEFINITIONS, MAX_DEPTH, MAX_INLINE_DEPTH, MAX_NESTING, BinOp, BoolOp, Case,
                  Compare, Cond, Definition, Expr, Formula, FormulaError, InSet, Neg, Num, Pos, Ref, Span, Var,
                  children, deepest, walk)
from .lexer import KEYWORDS, Token, tokenize

# ----------------------------------------------------------------------------- parser

_BINARY_LEVELS: tuple[tuple[str, ...], ...] = (
    ("|",),
    ("^",),
    ("&",),
    ("<<", ">>"),
    ("+", "-"),
    ("*", "/", "%"),
)
_PRECEDENCE = {op: level for level, ops in enumerate(_BINARY_LEVELS) for op in ops}
_RELOPS = {"<", "<=", ">", ">=", "==", "=", "!="}


def is_keyword(tok: Token, word: str) -> bool:
    return tok.kind == "NAME" and tok.text.lower() == word


class ExpressionParser:
    """Recursive descent over the tokens of one logical line: expressions and conditions (C syntax)."""

    def __init__(self, tokens: list[Token], prefix: str, source_lines: list[str], params: tuple[str, ...] = ()) -> None:
        self.toks = tokens
        self.i = 0
        self.prefix = prefix
        self.lines = source_lines
        self.nesting = 0
        self.params = params  # names of layout parameters (wgmma N): variables, like i

    def _enter(self, tok: Token) -> None:
        """One more level of parentheses, brackets or unary signs (bounded: the parser recurses)."""
        self.nesting += 1
        if self.nesting > MAX_NESTING:
            raise self.error(f"nested more than {MAX_NESTING} levels deep", tok)

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
        return is_keyword(self.tok, word)

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
        """Operators of precedence ``level`` (an index into ``_BINARY_LEVELS``) or tighter, left-associative
        (precedence climbing: one call per operand, not one per level)."""
        left = self._unary()
        while True:
            t = self.tok
            prec = _PRECEDENCE.get(t.text, -1) if t.kind == "OP" else -1
            if prec < level:
                return left
            self.i += 1
            left = BinOp(t.text, left, self._binary(prec + 1), Pos(t.line, t.col))

    def _unary(self) -> Expr:
        t = self.tok
        if self.at_op("-", "+"):
            self.i += 1
            self._enter(t)
            try:
                inner = self._unary()
            finally:
                self.nesting -= 1
            return Neg(inner, Pos(t.line, t.col)) if t.text == "-" else inner
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
            if t.text == "i" or t.text in self.params:
                return Var(t.text, pos)
            return Ref(t.text, pos)
        if self.at_op("(", "["):
            self.i += 1
            self._enter(t)
            try:
                if t.text == "(":
                    e = self.expr()
                    self.expect_op(")")
                    return e
                first = self.expr()
                if not self.at_op("...", ".."):
                    raise self.error(f"expected '...' in a column range, found {self._describe(self.tok)}")
                self.i += 1
                last = self.expr()
                self.expect_op("]")
                return Span(first, last, pos)
            finally:
                self.nesting -= 1
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
        except FormulaError as err:
            if self.toks[start].kind == "OP" and self.toks[start].text == "(" and "nested more than" not in err.message:
                self.i = start + 1
                self._enter(self.toks[start])
                try:
                    c = self.cond()
                    self.expect_op(")")
                finally:
                    self.nesting -= 1
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



class LineParser(ExpressionParser):
    """One line of a formula: ``expr [for SELECTOR] [if COND] [otherwise]`` (the doc's case syntax)."""

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


def is_definition_start(line: list[Token], at: int) -> bool:
    return (
        len(line) > at + 1
        and line[at].kind == "NAME"
        and line[at].text.lower() not in KEYWORDS
        and line[at + 1].kind == "OP"
        and line[at + 1].text == "="
    )


def read_line(p: LineParser, line: list[Token], defs: list[tuple[str, Pos, list[Case]]],
              params: tuple[str, ...] = (), no_definition: str = "expected a definition 'NAME = ...'") -> None:
    """One line of a formula block into ``defs``: a definition ``[where] NAME = ...``, another case of the
    definition above, or a lone ``Where`` (skipped).  Shared by doc formulas and kernel index code."""
    if len(line) == 2 and is_keyword(line[0], "where"):
        return  # "Where" on a line of its own
    start = 1 if is_keyword(line[0], "where") else 0
    if start == 1 and not is_definition_start(line, 1):
        raise p.error("expected 'where NAME = ...'")
    if is_definition_start(line, start):
        name_tok = line[start]
        if name_tok.text == "i":
            raise p.error("'i' is the element index and cannot be defined", name_tok)
        if name_tok.text in params:
            raise p.error(f"{name_tok.text!r} is a parameter of the layout and cannot be defined", name_tok)
        if any(d[0] == name_tok.text for d in defs):
            raise p.error(f"{name_tok.text!r} is defined twice", name_tok)
        if len(defs) == MAX_DEFINITIONS:
            raise p.error(f"more than {MAX_DEFINITIONS} definitions", name_tok)
        p.i = start + 2
        if p.at_end():
            raise p.error(f"definition of {name_tok.text!r} has no value")
        defs.append((name_tok.text, Pos(name_tok.line, name_tok.col), [p.case()]))
    else:
        if not defs:
            raise p.error(no_definition)
        if len(defs[-1][2]) == MAX_CASES:
            raise p.error(f"more than {MAX_CASES} cases in the definition of {defs[-1][0]!r}")
        defs[-1][2].append(p.case())


def parse_formula(text: str, element_prefix: str, params: tuple[str, ...] = (),
                  required: tuple[str, ...] = ("row", "col")) -> Formula:
    """Parse a whole formula block (several definitions) into a ``Formula``.

    Memoised by value (a ``Formula`` is frozen; a refusal is raised again, never cached): the catalog's
    formulas recur, in every spec read from a new path and every ingestion of a page (the catalog and the
    pages hold 221 distinct texts, 1.9 MiB parsed).  Loading every doc page a second time in one process takes
    0.08 s instead of 0.14 s; the test suite parsed 7,500 texts.

    A line ``NAME = ...`` (or ``where NAME = ...``) starts a definition; any other
    non-empty line adds a case to the definition above it.  A line holding only
    ``Where`` introduces helper definitions (the sparse ``firstcol``/``lastcol``).
    ``params`` are the layout's parameter names (wgmma ``N``): variables, not definitions.
    ``required``: the definitions the text must make (a fragment's ``row`` and ``col``; a named map's
    outputs).
    """
    return _parse_formula(text, element_prefix, tuple(params), tuple(required))


@functools.lru_cache(maxsize=1024)
def _parse_formula(text: str, element_prefix: str, params: tuple[str, ...], required: tuple[str, ...]) -> Formula:
    source_lines = text.split("\n")
    tokens = tokenize(text)
    defs: list[tuple[str, Pos, list[Case]]] = []
    for line in split_lines(tokens):
        read_line(LineParser(line, element_prefix, source_lines, params), line, defs, params)
    formula = Formula(
        tuple(Definition(n, tuple(cs), pos) for n, pos, cs in defs), element_prefix
    )
    resolve(formula, source_lines, required)
    return formula



# ----------------------------------------------------------------------------- resolution

def resolve(formula: Formula, lines: list[str], required: tuple[str, ...] = ("row", "col"),
            unknown_hint: str = "") -> None:
    """Unknown names, cycles, misplaced spans, missing row/col, and trees too deep to evaluate.  ``unknown_hint``
    follows an unknown name's message, ``NAME`` replaced by the name (index code: it may be a parameter)."""
    names = {d.name: d for d in formula.definitions}

    def err(msg: str, pos: Pos) -> FormulaError:
        text = lines[pos.line - 1] if 0 < pos.line <= len(lines) else ""
        return FormulaError(msg, pos.line, pos.col, text)

    for d in formula.definitions:
        for c in d.cases:
            for part in children(c):
                depth, node = deepest(part)
                if depth > MAX_DEPTH:
                    raise err(f"expression nested more than {MAX_DEPTH} levels deep (split it into named definitions)",
                              getattr(node, "pos", c.pos))
        for n in walk(d):
            if isinstance(n, Ref) and n.name not in names:
                hint = f" ({unknown_hint.replace('NAME', n.name)})" if unknown_hint else ""
                raise err(f"unknown identifier {n.name!r}{hint}", n.pos)
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
    for name in required:
        if name not in names:
            raise FormulaError(f"the formula defines no {name!r}", 1, 1, lines[0] if lines else "")
    _check_references(formula, names, err)


def _check_references(formula: Formula, names: dict[str, Definition], err) -> None:
    """No definition refers to itself (directly or not), and none is too deep once its references are
    inlined (that is what the evaluators recurse over).  Iterative: any chain length is safe here."""
    inline: dict[str, int] = {}
    state: dict[str, int] = {}
    for root in formula.definitions:
        if root.name in inline:
            continue
        stack: list[tuple[str, Pos, bool]] = [(root.name, root.pos, False)]
        while stack:
            name, via, done = stack.pop()
            if done:
                depth = 0
                for c in names[name].cases:
                    for part in children(c):
                        depth = max(depth, _inline_depth(part, inline))
                inline[name] = depth
                state[name] = 2
                if depth > MAX_INLINE_DEPTH:
                    raise err(f"{name!r} is nested more than {MAX_INLINE_DEPTH} levels deep once the definitions "
                              "it uses are written out", names[name].pos if names[name].pos.line else via)
                continue
            if state.get(name) == 2:
                continue
            if state.get(name) == 1:
                raise err(f"definition of {name!r} refers to itself", via)
            state[name] = 1
            stack.append((name, via, True))
            for n in walk(names[name]):
                if isinstance(n, Ref):
                    if state.get(n.name) == 1:
                        raise err(f"definition of {n.name!r} refers to itself", n.pos)
                    if state.get(n.name) != 2:
                        stack.append((n.name, n.pos, False))


def _inline_depth(node: object, inline: dict[str, int]) -> int:
    """Depth of a tree whose references count as the (already known) depth of what they name."""
    best = 0
    stack = [(node, 1)]
    while stack:
        n, d = stack.pop()
        best = max(best, d + inline.get(n.name, 0) if isinstance(n, Ref) else d)
        stack.extend((c, d + 1) for c in children(n))
    return best


def parse_lane_expression(text: str, name: str) -> Formula:
    """One expression over ``%laneid`` (no ``i``, no names), as a formula defining ``name``.

    The lane -> MMA computation map of m8n8k4 (``group``) and the sparsity selector's lane
    rule (``selector``) are written this way.
    """
    lines = text.split("\n")
    body = split_lines(tokenize(text))
    if len(body) != 1:
        raise FormulaError(f"a {name} formula is one expression over %laneid", 1, 1, text)
    case = LineParser(body[0], "x", lines).case()
    for n in walk(case):
        if isinstance(n, Ref):
            raise FormulaError(f"unknown identifier {n.name!r} (a {name} formula uses %laneid only)",
                               n.pos.line, n.pos.col, text)
    if any(isinstance(n, Var) and n.name == "i" for n in walk(case)):
        raise FormulaError(f"a {name} formula cannot depend on i", 1, 1, text)
    return Formula((Definition(name, (case,)),), "x")


def parse_expression(text: str, params: tuple[str, ...] = ()) -> Expr:
    """One integer expression over the layout's parameters and literals (a register count written
    ``N/4``, an element count ``N/2``): no definitions, no ``%laneid``, no ``i``."""
    lines = text.split("\n")
    body = split_lines(tokenize(text))
    if len(body) != 1:
        raise FormulaError("expected one expression", 1, 1, text)
    p = ExpressionParser(body[0], "x", lines, params)
    e = p.expr()
    if not p.at_end():
        raise p.error(f"unexpected {p._describe(p.tok)} after the expression")
    for n in walk(e):
        if isinstance(n, Ref):
            raise FormulaError(f"unknown name {n.name!r} (parameters: {', '.join(params) or 'none'})",
                               n.pos.line, n.pos.col, text)
        if isinstance(n, Var) and n.name in ("lane", "i"):
            raise FormulaError("an extent cannot depend on the lane or the element", n.pos.line, n.pos.col, text)
        if isinstance(n, Span):
            raise FormulaError("a column range is not a number", n.pos.line, n.pos.col, text)
    depth, node = deepest(e)
    if depth > MAX_DEPTH:
        raise FormulaError(f"expression nested more than {MAX_DEPTH} levels deep", 1, 1, text)
    return e
