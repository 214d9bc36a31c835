"""Index code: the formula language as people write it, read by every option that takes code you write.

The spec formula language (``parser``) is the doc's pseudo-code, where ``//`` starts a comment as it does on
the PTX pages.  Code you write is read by this grammar instead, the same everywhere it is taken (``conform
--formula`` for fragments and for ``[[layout]]`` maps, ``table --formula``, ``banks``/``descriptor --formula``,
``banks --addresses``, ``consistent index:``, the ``formula`` of a ``[[layout]]``, ``api.index_code``,
``api.shared_layout("index", ...)``); one rule (``docs/layouts.md``, "Index code"):

* ``#`` starts a comment, to the end of the line;
* ``a // b`` is **floor** division (rounds toward minus infinity, like Python), at the level of ``* / %``;
* a line that starts with ``//`` is an error, and so is any error on a line that holds ``//``: it says that
  ``//`` is floor division and comments start with ``#`` (so a C comment is never read as code without a word,
  and code is never read as a comment);
* ``lane``, ``tid`` and ``laneid`` name the thread where the code has one (``thread=True``: fragments, lane
  addresses); ``%laneid`` and ``%tid`` always do; digits may be grouped with ``_`` (``1_024``).

Everything else is the spec language: one definition ``NAME = ...`` per line, further lines add cases, ``/``
and ``%`` truncate like C, ``>>`` is arithmetic.  Floor division is built from C operations, so both engines
evaluate it unchanged:

* ``a // 2^s`` (a positive power of two) is ``a >> s``: an arithmetic shift is a floor;
* any other ``a // b`` is ``(a - ((a % b) + b) % b) / b``.  ``((a % b) + b) % b`` is the floor remainder (sign
  of ``b``) for every ``b != 0`` under C's ``%``, so the division is exact and the result is the floor for
  negative operands too, without a case split.  ``a`` and ``b`` are evaluated once: when they are not a number
  or a variable they become helper definitions (``floordiv#N.num``/``floordiv#N.den``, which text cannot
  spell), so nesting stays linear.  ``b = 0`` is a division by zero at the ``//``.

Nothing is evaluated while parsing; errors are ``FormulaError`` at the text's own line and column.
"""
from __future__ import annotations

import functools
import re

from .ast import (MAX_DEFINITIONS, MAX_LINE, MAX_LITERAL, MAX_TEXT, BinOp, Case, Definition, Expr, Formula,
                  FormulaError, Num, Pos, Ref, Var)
from .lexer import Token, scan
from .parser import LineParser, read_line, resolve, split_lines

THREAD_NAMES = frozenset({"lane", "tid", "laneid"})
HINT = "in index code '//' is floor division; a comment starts with '#'"
# after an unknown name: index code reads parameters by name, which only a family or --param gives a value
UNKNOWN_HINT = "not defined nor an input; a parameter is bound with --param NAME=VALUE"

_TOKEN_RE = re.compile(
    r"""
    (?P<ws>[ \t\r\f]+)
  | (?P<comment>\#[^\n]*)
  | (?P<nl>\n)
  | (?P<num>0[xX][0-9a-fA-F_]+|0[bB][01_]+|[0-9][0-9_]*)
  | (?P<lane>%laneid\b|%tid\b)
  | (?P<name>[A-Za-z_][A-Za-z_0-9]*)
  | (?P<op>//|\.\.\.|\.\.|\|\||&&|<<|>>|<=|>=|==|!=|[-+*/%&|^<>=(){}\[\],.:])
    """,
    re.VERBOSE,
)

# the formula parser's precedence levels, with floor division beside * / %
_LEVELS: tuple[tuple[str, ...], ...] = (("|",), ("^",), ("&",), ("<<", ">>"), ("+", "-"), ("*", "/", "%", "//"))


def tokenize_index(text: str, thread: bool = True) -> list[Token]:
    """Index code -> formula tokens (``LANE`` for the thread, ``OP '//'`` for floor division)."""
    if len(text) > MAX_TEXT:
        raise FormulaError(f"index code of {len(text)} characters is too long (limit {MAX_TEXT})", 1, 1)

    def number(s: str, end: int, line: int, col: int) -> int:
        if end < len(text) and (text[end].isalnum() or text[end] == "_"):
            raise FormulaError(f"malformed number {s + text[end]!r}", line, col)
        digits = s.replace("_", "")
        if s.endswith("_") or "__" in s or digits[:2].lower() in ("0x", "0b") and len(digits) == 2:
            raise FormulaError(f"malformed number {s!r}", line, col)
        if len(digits) > 1 and digits[0] == "0" and digits[1].isdigit():
            raise FormulaError(f"literal {s!r} has a leading zero (octal in C, an error in Python)", line, col)
        if len(digits) > 40:
            raise FormulaError(f"literal {s[:20]}... is too large (limit {MAX_LITERAL})", line, col)
        value = int(digits, 0)
        if value > MAX_LITERAL:
            raise FormulaError(f"literal {s} is too large (limit {MAX_LITERAL})", line, col)
        return value

    return scan(text, _TOKEN_RE, number, THREAD_NAMES if thread else frozenset(), max_col=MAX_LINE)


class IndexLineParser(LineParser):
    """The formula line parser with ``//`` (floor division) at the level of ``* / %``."""

    def __init__(self, tokens: list[Token], prefix: str, lines: list[str], helpers: list[Definition],
                 params: tuple[str, ...] = ()) -> None:
        super().__init__(tokens, prefix, lines, params)
        self.helpers = helpers

    def _binary(self, level: int) -> Expr:
        if level == len(_LEVELS):
            return self._unary()
        left = self._binary(level + 1)
        while self.at_op(*_LEVELS[level]):
            op_tok = self.tok
            self.i += 1
            right = self._binary(level + 1)
            pos = Pos(op_tok.line, op_tok.col)
            left = self._floor_div(left, right, pos) if op_tok.text == "//" else BinOp(op_tok.text, left, right, pos)
        return left

    def _hoist(self, e: Expr, role: str, pos: Pos) -> Expr:
        if isinstance(e, (Num, Var, Ref)):
            return e
        if len(self.helpers) >= MAX_DEFINITIONS:
            raise FormulaError(f"more than {MAX_DEFINITIONS} floor-division operands", pos.line, pos.col)
        name = f"floordiv#{len(self.helpers) + 1}.{role}"
        self.helpers.append(Definition(name, (Case(e, None, pos),), pos))
        return Ref(name, pos)

    def _floor_div(self, a: Expr, b: Expr, pos: Pos) -> Expr:
        if isinstance(b, Num) and b.value > 0 and b.value & (b.value - 1) == 0:
            shift = b.value.bit_length() - 1
            return a if shift == 0 else BinOp(">>", a, Num(shift, pos), pos)
        num = self._hoist(a, "num", pos)
        den = self._hoist(b, "den", pos)
        floor_rem = BinOp("%", BinOp("+", BinOp("%", num, den, pos), den, pos), den, pos)
        return BinOp("/", BinOp("-", num, floor_rem, pos), den, pos)


def parse_index(text: str, prefix: str = "x", variables: tuple[str, ...] = (), required: tuple[str, ...] = (),
                params: tuple[str, ...] = (), thread: bool = False, must: str = "") -> Formula:
    """Index code (module docstring) -> a ``Formula``.  ``variables``: the names of the code's inputs (a map's
    coordinates: ``row``, ``col``), read as variables and never defined; ``params``: a family's parameters
    (``N``), likewise; ``required``: the definitions the code must make; ``thread``: ``lane``/``tid``/``laneid``
    name the thread; ``must``: what the code must define, for messages (default: the ``required`` names).
    Memoised by value (a ``Formula`` is frozen; a refusal is raised again, never cached)."""
    return _parse_index(text, prefix, tuple(variables), tuple(required), tuple(params), bool(thread), must)


@functools.lru_cache(maxsize=512)
def _parse_index(text: str, prefix: str, variables: tuple[str, ...], required: tuple[str, ...],
                 params: tuple[str, ...], thread: bool, must: str) -> Formula:
    lines = text.split("\n")
    floors: dict[int, int] = {}  # line -> the column of its first ``//``
    try:
        tokens = tokenize_index(text, thread)
        for t in reversed(tokens):
            if t.kind == "OP" and t.text == "//":
                floors[t.line] = t.col
        return _parse_tokens(tokens, lines, prefix, variables, required, params, must)
    except FormulaError as e:  # an error after a ``//``: a comment in C's style, most likely
        if e.line in floors and e.col >= floors[e.line] and "floor division" not in e.message:
            raise FormulaError(f"{e.message} ({HINT})", e.line, e.col, e.text) from None
        raise


def _parse_tokens(tokens: list[Token], lines: list[str], prefix: str, variables: tuple[str, ...],
                  required: tuple[str, ...], params: tuple[str, ...], must: str) -> Formula:
    names = variables + tuple(p for p in params if p not in variables)
    helpers: list[Definition] = []
    defs: list[tuple[str, Pos, list[Case]]] = []
    must = must or (f"the code must define {' and '.join(required)}" if required else "")
    want = f" ({must})" if must else ""
    for line in split_lines(tokens):
        p = IndexLineParser(line, prefix, lines, helpers, names)
        first = line[0]
        if first.kind == "OP" and first.text == "//":
            raise p.error("'//' starts no comment here: in index code it is floor division; start a comment with '#'",
                          first)
        if len(line) > 1 and line[1].kind == "OP" and line[1].text == "=":
            if first.kind == "LANE":
                raise p.error(f"'{first.text}' is the thread index and cannot be defined", first)
            if first.kind == "NAME" and first.text in variables:
                raise p.error(f"'{first.text}' is an input of the code and cannot be defined", first)
        read_line(p, line, defs, names, no_definition="expected a definition 'NAME = ...'" + want)
    if not defs:
        raise FormulaError("no definitions" + (f": {must}" if must else ""), 1, 1)
    if len(defs) + len(helpers) > MAX_DEFINITIONS:
        raise FormulaError(f"more than {MAX_DEFINITIONS} definitions with the floor-division helpers", 1, 1)
    formula = Formula(tuple(helpers) + tuple(Definition(n, tuple(cs), pos) for n, pos, cs in defs), prefix)
    resolve(formula, lines, required, UNKNOWN_HINT)
    return formula


__all__ = ["HINT", "IndexLineParser", "THREAD_NAMES", "parse_index", "tokenize_index"]
