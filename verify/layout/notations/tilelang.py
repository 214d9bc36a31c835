"""TileLang ``Fragment`` layouts as TileLang prints them, read the other way round.

TileLang (``tilelang/layout/fragment.py``; ``FragmentNode::DebugOutput`` in ``src/layout/layout.cc``) prints a
register fragment as::

    Fragment([16, 64] -> [8], replicate: 1, thread: 128, forward_thread: _j % 32 // 8 * 32 + _i % 8 * 4 + _j % 8 // 2,
             forward_index: [_j // 32 * 4 + _i // 8 * 2 + _j % 2], thread_range: I.Range(0, 128))

(older releases print the shapes as tuples, ``Fragment((16, 16) -> (8,), ...)``).  Its direction is the
opposite of a TV layout: it maps a buffer cell ``(_i, _j)`` (row, col; a 1-D buffer ``[N]`` is read as an
``N x 1`` column) and a replica ``_rep`` (``0 <= _rep < replicate``) to ``(thread, index)``.  The expressions
are TVM's ``PrimExpr`` prints: integers, the placeholders, ``+ - *``, ``//`` (floor division) and ``%``
(floor modulo) by positive constants, parentheses.  This module reads that text with its own grammar (no
``eval``), builds the forward map in the formula language (``//`` by 2^s is ``>> s``, any other ``a // c`` is
``(a - m) / c`` and ``a % c`` is ``m = ((a % c) + c) % c``, exact for negative ``a`` too), inverts it with the
layout algebra (``inverse``: the enumeration, which names the first point that is not one-to-one) and has Z3
check that the table is the two-sided inverse of the printed formulas (``forward(inverse(t, e)) = (t, e)`` at
every (thread, index) and ``inverse(forward(x)) = x`` at every (row, col, rep)): both engines then hold the
Fragment for a bijection between the buffer's replicas and ``thread x index``.  The result is the fragment
``(thread, i) -> (row, col)`` over ``thread`` threads and ``index`` elements, a block tile when it spans
several warps.  One output dimension (``-> [E]``), ``thread_range`` from 0 only.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from verify.formula import BinOp, Case, Definition, Formula, Neg, Num, Pos, Var

from .errors import NotationError, Positions, TVImport, decode_source
from .registry import Notation, register

MAX_DIM = 1 << 16
MAX_POINTS = 1 << 20  # rows x cols x replicate enumerated to invert the map
MAX_DEPTH = 64        # nesting of parentheses and unary minus
_TOKEN = re.compile(r"""
    (?P<ws>[ \t\r\n]+)
  | (?P<num>[0-9]+)
  | (?P<name>[A-Za-z_][A-Za-z0-9_.]*)
  | (?P<op>//|->|[-+*%()\[\],:])
""", re.VERBOSE)
_PLACEHOLDERS = ("_i", "_j")


@dataclass(frozen=True)
class _Tok:
    kind: str
    text: str
    at: int


class _Parser:
    def __init__(self, text: str, start: int, source: str) -> None:
        self.text, self.source = text, source
        self.pos = Positions(text)
        self.toks: list[_Tok] = []
        at = start
        while at < len(text):
            m = _TOKEN.match(text, at)
            if m is None:
                raise self.error(f"unexpected character {text[at]!r}", at)
            if m.lastgroup != "ws":
                self.toks.append(_Tok(m.lastgroup or "", m.group(), at))
            at = m.end()
        self.toks.append(_Tok("end", "", len(text)))
        self.k = 0
        self.rank = 2
        self.depth = 0

    def error(self, message: str, at: int) -> NotationError:
        line, col = self.pos.at(at)
        return NotationError(message, line, col, self.source)

    @property
    def tok(self) -> _Tok:
        return self.toks[self.k]

    def take(self, text: str | None = None, kind: str | None = None, what: str = "") -> _Tok:
        t = self.tok
        if (text is not None and t.text != text) or (kind is not None and t.kind != kind):
            found = "the end of the text" if t.kind == "end" else repr(t.text)
            raise self.error(f"expected {what or repr(text)}, found {found}", t.at)
        self.k += 1
        return t

    def number(self, what: str) -> tuple[int, int]:
        t = self.take(kind="num", what=what)
        if len(t.text) > 9 or int(t.text) > MAX_DIM:
            raise self.error(f"{what} {t.text} is larger than {MAX_DIM}", t.at)
        return int(t.text), t.at

    def shape(self, what: str) -> tuple[tuple[int, ...], int]:
        at = self.tok.at
        close = {"[": "]", "(": ")"}.get(self.tok.text)
        if close is None:
            raise self.error(f"expected the {what} shape ('[16, 16]' or '(16, 16)')", at)
        self.k += 1
        dims = []
        while self.tok.text != close:
            n, n_at = self.number(f"a {what} size")
            if n < 1:
                raise self.error(f"a {what} size is at least 1", n_at)
            dims.append(n)
            if self.tok.text == ",":
                self.k += 1
            elif self.tok.text != close:
                self.take(close)
        self.k += 1
        if not dims:
            raise self.error(f"the {what} shape is empty", at)
        return tuple(dims), at

    def field(self, name: str) -> int:
        self.take(",")
        t = self.take(name, what=f"'{name}:'")
        self.take(":")
        return t.at

    # expressions: sum := prod {(+|-) prod}; prod := unary {(*|//|%) unary}; unary := - unary | atom
    def expr(self) -> Any:
        left = self.prod()
        while self.tok.text in ("+", "-"):
            t = self.take()
            left = BinOp(t.text, left, self.prod(), self._p(t.at))
        return left

    def prod(self) -> Any:
        left = self.unary()
        while self.tok.text in ("*", "//", "%"):
            t = self.take()
            right_at = self.tok.at
            right = self.unary()
            if t.text == "*":
                left = BinOp("*", left, right, self._p(t.at))
                continue
            if not isinstance(right, Num) or right.value < 1:
                raise self.error(f"'{t.text}' by {self.text[right_at:self.tok.at].strip() or 'this'}: only a positive "
                                 "constant divisor is read", right_at)
            left = _floordiv(left, right.value, self._p(t.at)) if t.text == "//" else _floormod(left, right.value,
                                                                                               self._p(t.at))
        return left

    def unary(self) -> Any:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.error(f"expression nested more than {MAX_DEPTH} deep", self.tok.at)
        try:
            t = self.tok
            if t.text == "-":
                self.k += 1
                return Neg(self.unary(), self._p(t.at))
            if t.kind == "num":
                n, _ = self.number("a constant")
                return Num(n, self._p(t.at))
            if t.text == "(":
                self.k += 1
                e = self.expr()
                self.take(")")
                return e
            if t.kind == "name":
                self.k += 1
                if t.text == "_rep":
                    return Var("rep", self._p(t.at))
                if t.text in _PLACEHOLDERS[:self.rank]:
                    return Var(("row", "col")[_PLACEHOLDERS.index(t.text)] if self.rank == 2 else "row", self._p(t.at))
                raise self.error(f"unknown name {t.text!r}: the expressions read the placeholders "
                                 f"{', '.join(_PLACEHOLDERS[:self.rank])} and _rep (a symbolic size is not read)", t.at)
            found = "the end of the text" if t.kind == "end" else repr(t.text)
            raise self.error(f"expected an expression, found {found}", t.at)
        finally:
            self.depth -= 1

    def _p(self, at: int) -> Pos:
        return Pos(*self.pos.at(at))


def _floordiv(a: Any, c: int, pos: Pos) -> Any:
    if c & (c - 1) == 0:
        s = c.bit_length() - 1
        return a if s == 0 else BinOp(">>", a, Num(s, pos), pos)
    return BinOp("/", BinOp("-", a, _floormod(a, c, pos), pos), Num(c, pos), pos)


def _floormod(a: Any, c: int, pos: Pos) -> Any:
    return BinOp("%", BinOp("+", BinOp("%", a, Num(c, pos), pos), Num(c, pos), pos), Num(c, pos), pos)


@dataclass(frozen=True)
class Fragment:
    """One parsed print: the input shape (rows, cols), replicate, threads, index extent, and the forward
    formula defining ``thread`` and ``index`` over ``row``, ``col`` and ``rep``."""

    rows: int
    cols: int
    replicate: int
    threads: int
    elements: int
    forward: Formula
    at: tuple[int, int]  # line, col of 'Fragment'


def parse_fragment(text: str, source: str = "argument", prefix: str = "c") -> Fragment:
    """The one ``Fragment(...)`` print in ``text`` (see the module docstring)."""
    starts = [m.start() for m in re.finditer(r"\bFragment\s*\(", text)]
    if not starts:
        raise NotationError("no 'Fragment(' print in the text (TileLang prints 'Fragment([16, 16] -> [8], "
                            "replicate: 1, thread: 32, forward_thread: ..., forward_index: [...])')", 1, 1, source)
    p = _Parser(text, starts[0], source)
    if len(starts) > 1:
        raise p.error(f"{len(starts)} 'Fragment(' prints in the text: keep the one to read", starts[1])
    at = p.take("Fragment").at
    p.take("(")
    shape, shape_at = p.shape("input")
    if len(shape) > 2:
        raise p.error(f"a {len(shape)}-D buffer {list(shape)}: only 1-D and 2-D fragments are read", shape_at)
    p.rank = len(shape)
    p.take("->")
    out, out_at = p.shape("output")
    if len(out) != 1:
        raise p.error(f"the output shape {list(out)} has {len(out)} dimensions: only one (the register index) is "
                      "read", out_at)
    p.field("replicate")
    replicate, _ = p.number("replicate")
    thread_at = p.field("thread")
    if p.tok.kind != "num" or p.toks[p.k + 1].text != ",":
        raise p.error("the thread extent is not a number (a symbolic thread count is not read)", p.tok.at)
    threads, _ = p.number("thread")
    p.field("forward_thread")
    ft = p.expr()
    p.field("forward_index")
    p.take("[")
    fi = [p.expr()]
    while p.tok.text == ",":
        p.k += 1
        fi.append(p.expr())
    if len(fi) != len(out):
        raise p.error(f"forward_index has {len(fi)} expressions for an output shape of {len(out)} dimension(s)",
                      p.tok.at)
    p.take("]")
    if p.tok.text == ",":
        p.k += 1
        p.take("thread_range")
        p.take(":")
        r_at = p.take("I.Range", what="'I.Range(start, end)'").at
        p.take("(")
        lo, _ = p.number("the thread range's start")
        p.take(",")
        hi, _ = p.number("the thread range's end")
        p.take(")")
        if lo != 0 or hi != threads:
            raise p.error(f"thread_range I.Range({lo}, {hi}): only a range 0..thread ({threads}) is read", r_at)
    p.take(")")
    if replicate < 1 or threads < 1:
        raise p.error("replicate and thread are at least 1", thread_at)
    rows, cols = (shape[0], shape[1]) if len(shape) == 2 else (shape[0], 1)
    if rows * cols * replicate > MAX_POINTS:
        raise p.error(f"{rows} x {cols} x {replicate} replicas is more than {MAX_POINTS} points", shape_at)
    pos = Pos(*p.pos.at(at))
    formula = Formula((Definition("thread", (Case(ft, None, pos),), pos),
                       Definition("index", (Case(fi[0], None, pos),), pos)), prefix)
    return Fragment(rows, cols, replicate, threads, out[0], formula, p.pos.at(at))


def invert(frag: Fragment, source: str = "argument", timeout: float = 10.0) -> Any:
    """The fragment's map ``(thread, i) -> (row, col)``: the forward map inverted by the enumeration
    (``algebra.inverse``), the inverse confirmed by Z3 both ways (module docstring).  A print that is not a
    bijection between the buffer's replicas and thread x index is a ``NotationError`` naming the first point."""
    import z3

    from verify.engines import smt

    from .. import algebra as A

    from .. import reshape
    from ..dims import Dim
    from ..named import FormulaMap, in_box, variables, width

    line, col = frag.at
    ins = (Dim("row", frag.rows), Dim("col", frag.cols), Dim("rep", frag.replicate))
    outs = (Dim("thread", frag.threads), Dim("index", frag.elements))
    forward = FormulaMap(frag.forward, ins, outs)
    if frag.rows * frag.cols * frag.replicate != frag.threads * frag.elements:
        raise NotationError(f"{frag.rows} x {frag.cols} cells x {frag.replicate} replicas = "
                            f"{frag.rows * frag.cols * frag.replicate} points for {frag.threads} threads x "
                            f"{frag.elements} = {frag.threads * frag.elements} registers: not a bijection", line, col,
                            source)
    try:
        inv = A.inverse(forward)
    except ValueError as e:
        raise NotationError(f"the Fragment is not a bijection between (_i, _j, _rep) and (thread, index): "
                            f"{str(e).removeprefix('inverse: ')}", line, col, source) from None
    # Z3: forward(inv(p)) = p on thread x index, and inv(forward(x)) = x on the buffer's replicas
    w = width(forward, inv) + 1
    budget = smt.Budget(timeout)
    for first, second, box in ((inv, forward, outs), (forward, inv, ins)):
        pt = variables(box, w, "p")
        ok1, mid = first.encode(pt)
        ok2, back = second.encode(mid)
        res = smt.solve([in_box(pt, box, None, w), z3.Not(z3.And(ok1, in_box(mid, second.inputs, None, w), ok2,
                                                                *(back[d.name] == pt[d.name] for d in box)))], budget)[0]
        if res != "unsat":
            what = "Z3 gave no answer within the budget" if res == "unknown" else "Z3 finds a point where it is not"
            raise NotationError(f"the inverse read from the enumeration is not confirmed: {what}", line, col, source)
    # drop the replica: (row, col, rep) -> (row, col), the inputs read as variables r, c
    proj = FormulaMap(Formula((Definition("row", (Case(Var("r"), None),)), Definition("col", (Case(Var("c"), None),))),
                              "x"), ins, ins[:2], variables=(("row", "r"), ("col", "c"), ("rep", "rep")))
    return reshape.relabel(A.compose(proj, inv), inputs={"index": "i"})


def read_tilelang(text: str | bytes, like: Any, source: str = "argument") -> TVImport:
    """A TileLang ``Fragment`` print as the fragment ``(thread, i) -> (row, col)`` (``TVImport.built``)."""
    from dataclasses import replace

    from ..model import Domain
    raw = decode_source(text, source, limit=1 << 20)
    if like.groups > 1:
        raise NotationError(f"{like.id} runs {like.groups} MMA computations per warp: a TileLang Fragment is read "
                            "against a spec with one", 1, 1, source)
    frag = parse_fragment(raw, source, like.prefix)
    named = invert(frag, source)
    epr = like.regs.elements_per_register if frag.elements % like.regs.elements_per_register == 0 else 1
    built = like.with_map(named, domain=Domain(frag.threads, frag.elements),
                        regs=replace(like.regs, count=max(1, frag.elements // epr), elements_per_register=epr,
                                     element_list=None, elements_text=None), params_bound=())
    built = replace(built, provenance=replace(
        built.provenance, derived=f"TileLang Fragment (row, col, rep) -> (thread, index), inverted: {frag.rows} x "
                                  f"{frag.cols} x {frag.replicate} replicas onto {frag.threads} threads x "
                                  f"{frag.elements} registers"))
    return TVImport(frag.forward, frag.threads, frag.elements, raw.strip(), "tilelang", (frag.rows, frag.cols),
                    like.operand, built=built)


def _read(text: str | bytes, like: Any, *, source: str = "argument") -> TVImport:
    return read_tilelang(text, like, source)


register(Notation(
    "tilelang", "--tilelang", "FILE",
    False, "TileLang Fragment as it prints: Fragment([16, 16] -> [8], replicate: 1, thread: 32, forward_thread: ..., "
           "forward_index: [...]) ((row, col, rep) -> (thread, index), inverted)", _read,
    order=5, api_doc="A TileLang ``Fragment`` print (``Fragment([16, 64] -> [8], replicate: 1, thread: 128, "
                     "forward_thread: ..., forward_index: [...])``): (row, col, rep) -> (thread, index), inverted "
                     "to the fragment (thread, i) -> (row, col) (a block tile over several warps)."))
