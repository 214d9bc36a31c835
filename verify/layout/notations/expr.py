"""Index code: the layout as a kernel engineer writes it, ``row = lane / 4 + 8 * (i // 2)``.

The notation is the spec formula language (``README.md``, "Formula language") with three changes
that make hand-written index code paste in unchanged:

* ``lane``, ``tid`` and ``laneid`` name the thread index (``%laneid`` and ``%tid`` are accepted too, so a
  spec's own formula pastes in);
* ``a // b`` is floor division (rounds toward minus infinity, like Python);
* ``#`` starts a comment (``//`` is an operator here, so it cannot start one).

Everything else is the spec language: one definition ``NAME = ...`` per line, further lines add
cases (``8 + x if i >= 4``, ``for ai where ...``, ``otherwise``), ``/`` and ``%`` keep C's
truncating semantics, ``>>`` is arithmetic, and the text must define ``row`` and ``col`` over
the thread and the element index ``i``.

The formula grammar for specs is not changed: this module is a pre-pass.  Its own lexer turns
the text into the formula lexer's tokens (``lane``/``tid`` become ``%laneid``, positions are the
user's own file:line:col), and a subclass of the formula line parser reads ``//`` at the level of
``* / %`` and builds floor division from C operations:

* ``a // 2^s`` (a positive power of two) is ``a >> s``: an arithmetic shift is a floor;
* any other ``a // b`` is ``(a - ((a % b) + b) % b) / b``.  ``((a % b) + b) % b`` is the floor
  remainder (sign of ``b``) for every ``b != 0`` under C's ``%``, so the division is exact and
  the result is the floor for negative operands too, without a case split.  ``a`` and ``b`` are
  evaluated once: when they are not a number, ``lane`` or ``i`` they become helper definitions
  (named ``floordiv#N.num``/``floordiv#N.den``, which user text cannot spell), so nesting stays linear.
  ``b = 0`` is a division by zero at the ``//``.

Nothing is evaluated while parsing; errors are ``NotationError`` at the user's line and column.
"""
from __future__ import annotations

import re
from typing import Any, Mapping

import numpy as np

from verify.formula import (
    MAX_LITERAL,
    BinOp,
    Case,
    Definition,
    Expr,
    Formula,
    FormulaError,
    Num,
    Pos,
    Ref,
    Token,
    Var,
)
from verify.formula.ast import MAX_DEFINITIONS, MAX_LINE, MAX_TEXT
from verify.formula import walk
from verify.formula.parser import LineParser, read_line, resolve, split_lines

from ..family import substitute

from .errors import NotationError, TVImport, decode_source
from .registry import Notation, Option, register

LANE_NAMES = frozenset({"lane", "tid", "laneid"})

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


def tokenize(text: str, source: str = "argument") -> list[Token]:
    """Index code -> formula tokens (``LANE`` for the thread, ``OP '//'`` for floor division)."""
    if len(text) > MAX_TEXT:
        raise NotationError(f"index code of {len(text)} characters is too long (limit {MAX_TEXT})", 1, 1, source)
    tokens: list[Token] = []
    line, line_start, pos, n = 1, 0, 0, len(text)
    while pos < n:
        m = _TOKEN_RE.match(text, pos)
        col = pos - line_start + 1
        if col > MAX_LINE:
            raise NotationError(f"line longer than {MAX_LINE} characters", line, col, source)
        if m is None:
            raise NotationError(f"unexpected character {text[pos]!r}", line, col, source)
        kind, s = m.lastgroup, m.group()
        if kind == "nl":
            tokens.append(Token("NL", s, 0, line, col))
            line += 1
            line_start = m.end()
        elif kind == "num":
            end = m.end()
            if end < n and (text[end].isalnum() or text[end] == "_"):
                raise NotationError(f"malformed number {s + text[end]!r}", line, col, source)
            digits = s.replace("_", "")
            if s.endswith("_") or "__" in s or digits[:2].lower() in ("0x", "0b") and len(digits) == 2:
                raise NotationError(f"malformed number {s!r}", line, col, source)
            if len(digits) > 1 and digits[0] == "0" and digits[1].isdigit():
                raise NotationError(f"literal {s!r} has a leading zero (octal in C, an error in Python)", line, col,
                                    source)
            if len(digits) > 40:
                raise NotationError(f"literal {s[:20]}... is too large (limit {MAX_LITERAL})", line, col, source)
            value = int(digits, 0)
            if value > MAX_LITERAL:
                raise NotationError(f"literal {s} is too large (limit {MAX_LITERAL})", line, col, source)
            tokens.append(Token("NUM", s, value, line, col))
        elif kind == "lane" or (kind == "name" and s in LANE_NAMES):
            tokens.append(Token("LANE", s, 0, line, col))
        elif kind == "name":
            tokens.append(Token("NAME", s, 0, line, col))
        elif kind == "op":
            tokens.append(Token("OP", s, 0, line, col))
        pos = m.end()
    tokens.append(Token("EOF", "", 0, line, pos - line_start + 1))
    return tokens


class _IndexLineParser(LineParser):
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


def parse_index_code(text: str | bytes, prefix: str = "a", source: str = "argument",
                     params: tuple[str, ...] = ()) -> Formula:
    """Index code -> a ``Formula`` defining ``row`` and ``col`` (see the module docstring); ``params``: the
    names of a family's parameters (wgmma ``N``) the code may read."""
    text = decode_source(text, source, limit=MAX_TEXT * 4)
    try:
        return _parse(text, prefix, source, params)
    except FormulaError as e:
        raise NotationError(e.message, e.line, e.col, source) from None


def _parse(text: str, prefix: str, source: str, params: tuple[str, ...] = ()) -> Formula:
    lines = text.split("\n")
    helpers: list[Definition] = []
    defs: list[tuple[str, Pos, list[Case]]] = []
    for line in split_lines(tokenize(text, source)):
        p = _IndexLineParser(line, prefix, lines, helpers, params)
        if line[0].kind == "LANE" and len(line) > 1 and line[1].kind == "OP" and line[1].text == "=":
            raise p.error(f"'{line[0].text}' is the thread index and cannot be defined", line[0])
        read_line(p, line, defs, params,
                  no_definition="expected a definition 'NAME = ...' (the code must define row and col)")
    if not defs:
        raise FormulaError("no definitions: the code must define row and col", 1, 1)
    if len(defs) + len(helpers) > MAX_DEFINITIONS:
        raise FormulaError(f"more than {MAX_DEFINITIONS} definitions with the floor-division helpers", 1, 1)
    formula = Formula(tuple(helpers) + tuple(Definition(n, tuple(cs), pos) for n, pos, cs in defs), prefix)
    resolve(formula, lines)
    return formula


def import_index_code(text: str | bytes, threads: int, values: int, prefix: str = "a", *,
                      operand: str | None = None, source: str = "argument",
                      params: Mapping[str, int] | None = None) -> TVImport:
    """``parse_index_code`` as a ``TVImport`` over ``threads`` x ``values`` (the spec's domain: index
    code does not state its own).  ``params``: a family member's parameter values (``{"N": 24}``), which the
    code may read by name; the import is that member's layout (``TVImport.params`` names those it read)."""
    formula = parse_index_code(text, prefix, source, tuple(params or {}))
    read = tuple(sorted({n.name for d in formula.definitions for n in walk(d)
                         if isinstance(n, Var) and n.name in (params or {})}))
    if read:
        formula = substitute(formula, dict(params or {}))
    raw = text.decode("utf-8") if isinstance(text, (bytes, bytearray)) else text
    return TVImport(formula, threads, values, raw, "index", None, operand.upper() if operand else None, params=read)


# ----------------------------------------------------------------------------- threads beyond the spec's

MAX_THREADS = 1024  # a CUDA block


def thread_reach(formula: Formula, threads: int, values: int) -> tuple[Pos, str] | None:
    """Where index code reads the thread beyond ``threads`` (a block tile written against one warp's spec):
    the first sub-expression, in source order, that is constant over threads ``0 .. threads - 1`` (every
    element) but takes another value for some thread up to ``MAX_THREADS`` (``tid // 32``, ``tid >> 5``,
    ``tid - tid % 32``), or a case condition that holds for no thread of the spec but for a later one
    (``if tid >= 32``).  A condition that holds for every thread of the spec (a domain guard ``lane < 32``) is
    not one.  None when there is none; else (its position, what it is)."""
    from ...engines.vector import VectorEvaluator  # noqa: PLC0415
    probes: list[tuple[str, Pos, str, Any]] = []
    defs = list(formula.definitions)
    for d in formula.definitions:
        for case in d.cases:
            for node in walk(case.expr):
                if isinstance(node, BinOp):
                    name = f"probe#{len(probes)}"
                    defs.append(Definition(name, (Case(node, None, node.pos),), node.pos))
                    probes.append((name, node.pos, "expr", node))
            if case.cond is not None:
                name = f"probe#{len(probes)}"
                pos = getattr(case.cond, "pos", d.pos)
                defs.append(Definition(name, (Case(Num(1, pos), case.cond, pos), Case(Num(0, pos), None, pos)), pos))
                probes.append((name, pos, "cond", case.cond))
    if not probes:
        return None
    top = max(MAX_THREADS, threads * 2)
    lane = np.arange(top, dtype=np.int64)[:, None]
    idx = np.arange(max(1, values), dtype=np.int64)[None, :]
    ev = VectorEvaluator(Formula(tuple(defs), formula.element_prefix), lane, idx)
    inside = np.broadcast_to(lane < threads, (top, max(1, values)))
    found: list[tuple[tuple[int, int], Pos, str, Any]] = []
    for name, pos, kind, node in probes:
        try:
            v = ev.full(name)
        except (ArithmeticError, ValueError, TypeError):
            continue
        good = np.ones((top, max(1, values)), bool)
        if v.ok is not None:
            good &= np.broadcast_to(v.ok, good.shape)
        if v.err is not None:
            good &= ~np.broadcast_to(v.err, good.shape)
        val = np.broadcast_to(v.lo, good.shape)
        here, beyond = val[inside & good], val[~inside & good]
        if kind == "cond":
            if here.size and not here.any() and beyond.size and beyond.any():
                found.append(((pos.line, pos.col), pos, f"this case holds for no thread of the spec, only from thread "
                                                        f"{threads} on", node))
            continue
        if here.size and beyond.size and (here == here.flat[0]).all() and (beyond != here.flat[0]).any():
            found.append(((pos.line, pos.col), pos, f"this expression is {int(here.flat[0])} for every thread of the "
                                                    f"spec, not from thread {threads} on", node))
    flagged = {id(f[3]) for f in found}
    # the innermost: ``8 * (tid // 32)`` is reported at the ``//``, not at the ``*``
    inner = [f for f in found if not any(id(n) in flagged for n in walk(f[3]) if n is not f[3])]
    if not inner:
        return None
    _, pos, what, _ = min(inner, key=lambda f: f[0])
    return pos, what


def _threads_option(value: str | None, name: str, source: str) -> int | None:
    if value is None:
        return None
    text = str(value).strip()
    if not text.isdigit() or len(text) > 5 or not 1 <= int(text) <= MAX_THREADS * (4 if name == "elements" else 1):
        top = MAX_THREADS * (4 if name == "elements" else 1)
        raise NotationError(f"--{name} {value!r}: give a whole number of {name} in 1..{top}", 1, 1, source)
    return int(text)


def block_extent(formula: Formula, threads: int, values: int, source: str) -> tuple[int, int]:
    """The rows x cols a block tile of index code covers: one past its largest row and column."""
    from ...engines.vector import VectorEvaluator  # noqa: PLC0415
    lane = np.arange(threads, dtype=np.int64)[:, None]
    idx = np.arange(values, dtype=np.int64)[None, :]
    ev = VectorEvaluator(formula, lane, idx)
    out = []
    for name in ("row", "col"):
        v = ev.full(name)
        good = np.ones((threads, values), bool)
        if v.ok is not None:
            good &= np.broadcast_to(v.ok, good.shape)
        if v.err is not None:
            good &= ~np.broadcast_to(v.err, good.shape)
        vals = np.broadcast_to(v.lo, good.shape)[good]
        if not vals.size:
            raise NotationError(f"the index code defines no {name} for any of the {threads} threads", 1, 1, source)
        out.append(int(vals.max()) + 1)
    return out[0], out[1]


def _read(text: str | bytes, like: Any, *, source: str = "argument", threads: str | None = None,
          elements: str | None = None) -> TVImport:
    """Index code against ``like`` (its domain); with ``threads`` a block tile of that many threads (thread =
    lane + 32 * warp) and ``elements`` elements per thread (default the spec's), over the rows x cols it
    reaches.  Without ``threads``, code that reads the thread beyond the spec's threads is an error
    (``thread_reach``): it would be judged on the spec's threads only."""
    n_threads = _threads_option(threads, "threads", source)
    n_elements = _threads_option(elements, "elements", source)
    if n_threads is None:
        if n_elements is not None:
            raise NotationError("--elements needs --threads (a block tile's elements per thread)", 1, 1, source)
        imp = import_index_code(text, like.threads, like.n_elements, like.prefix, operand=like.operand, source=source,
                                params=dict(like.params_bound))
        check_reach(imp.formula, like.threads, like.n_elements, source)
        return imp
    values = n_elements if n_elements is not None else like.n_elements
    imp = import_index_code(text, n_threads, values, like.prefix, operand=like.operand, source=source,
                            params=dict(like.params_bound))
    rows, cols = block_extent(imp.formula, n_threads, values, source)
    return TVImport(imp.formula, n_threads, values, imp.text, "index", (rows, cols), imp.operand, params=imp.params)


def check_reach(formula: Formula, threads: int, values: int, source: str) -> None:
    """``NotationError`` at the first place the code reads the thread beyond the spec's ``threads``."""
    hit = thread_reach(formula, threads, values)
    if hit is None:
        return
    pos, what = hit
    raise NotationError(f"the index code reads the thread beyond the spec's {threads} threads ({what}): it would "
                        f"be judged on threads 0..{threads - 1} "
                        "only; give --threads N (the block's threads) to judge it as a block tile", pos.line, pos.col,
                        source)


register(Notation(
    "index", "--formula", "FILE", False, "index code: row = ... and col = ... over lane and i", _read, order=3,
    options=(Option("threads", "--threads", "N", "with --formula: the index code is a block tile of N threads "
                    "(tid = lane + 32 * warp), judged tile by tile against the spec (status tiled)"),
             Option("elements", "--elements", "N", "with --formula --threads: elements per thread (default the "
                    "spec's)")),
    api_doc="Hand-written index code: ``row = ...`` and ``col = ...`` over ``lane`` (or ``tid``) and ``i``, in the "
            "spec formula language plus ``//`` (floor division) and ``#`` comments (``docs/layouts.md``); a family's "
            "parameters (``N``) may be read by name.  ``threads=\"384\"`` (and ``elements=``): a block tile of "
            "that many threads.", api_name="index_code"))
