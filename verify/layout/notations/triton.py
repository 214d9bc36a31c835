"""Triton linear layouts: per input dimension, one basis vector per index bit.

Triton describes every distributed layout as a linear map over GF(2): the (row, col) of register
``r`` in lane ``l`` of warp ``w`` is the XOR of the bases of the set bits of ``r``, ``l`` and ``w``.
A zero basis means replication (two indices hold the same cell).  This module reads such a
layout — as JSON, as gluon's printed ``DistributedLinearLayout(reg_bases=..., ...)``, or as the
MLIR attribute ``#ttg.linear<{register = ..., lane = ..., warp = ..., block = ...}>`` — with its
own small grammars (no ``eval``, no unbounded ``json``) and turns it into a formula over
``%laneid`` and ``i`` using only ``& ^ >> *`` on non-negative values.

Bases need not be powers of two.  A basis such as ``[3, 0]`` is a legal GF(2) vector — Triton's
``LinearLayout`` accepts any vector below the output size, and swizzled layouts use multi-bit
bases — so it is accepted and XORed in like any other.  What *is* required: two coordinates per
basis (a 2-D fragment), non-negative values below the shape, and power-of-two shape entries (an
F2-linear layout always spans a power-of-two extent).
"""
from __future__ import annotations

from typing import Any, cast

import re
from collections.abc import Iterator
from dataclasses import dataclass

from verify.formula import BinOp, Case, Definition, Formula, Num, Ref, Var

from .cute import domain_condition
from .cute_parse import TokenStream
from ...files import json_text
from .errors import JsonDoc, NotationError, TVImport, decode_source, load_json
from .registry import Notation, Option, register

MAX_BASES = {"register": 16, "lane": 6, "warp": 5, "block": 8}
MAX_EXTENT = 1 << 20
MAX_TTGIR_CHARS = 8 << 20  # a whole TTGIR dump of a large kernel
MAX_LIST_DEPTH = 4
_KEYS = {
    "register": "register", "reg_bases": "register", "reg": "register",
    "lane": "lane", "lane_bases": "lane",
    "warp": "warp", "warp_bases": "warp",
    "block": "block", "block_bases": "block",
    "shape": "shape",
}

Basis = tuple[int, int]


@dataclass(frozen=True)
class TritonLayout:
    """A 2-D distributed linear layout: bases per input dimension, and the output shape."""

    register: tuple[Basis, ...]
    lane: tuple[Basis, ...]
    warp: tuple[Basis, ...] = ()
    block: tuple[Basis, ...] = ()
    shape: tuple[int, int] = (1, 1)

    @property
    def values(self) -> int:
        return 1 << len(self.register)

    @property
    def threads(self) -> int:
        """Lanes times warps: the thread index is ``lane + (1 << len(lane)) * warp``."""
        return 1 << (len(self.lane) + len(self.warp))

    def __call__(self, register: int, lane: int, warp: int = 0, block: int = 0) -> tuple[int, int]:
        """(row, col) = XOR of the bases of the set bits of each input index."""
        row = col = 0
        for index, bases in ((register, self.register), (lane, self.lane), (warp, self.warp),
                             (block, self.block)):
            if not 0 <= index < (1 << len(bases)):
                raise ValueError(f"index {index} outside 0..{(1 << len(bases)) - 1}")
            for b, (r, c) in enumerate(bases):
                if index >> b & 1:
                    row ^= r
                    col ^= c
        return row, col

    def at_thread(self, thread: int, i: int) -> tuple[int, int]:
        """(row, col) of element ``i`` of thread ``thread`` (lane bits low, warp bits above)."""
        nl = len(self.lane)
        return self(i, thread & ((1 << nl) - 1), thread >> nl)


# ----------------------------------------------------------------------------- printed form

_TOKEN = re.compile(r"""
    (?P<ws>[ \t\r\n]+)
  | (?P<num>-?[0-9]+)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<str>"[A-Za-z_][A-Za-z0-9_]*")
  | (?P<p>[\[\](){}<>,=:.\#])
""", re.VERBOSE)


def _tokens(text: str, source: str) -> Iterator[tuple[str, str, int, int]]:
    """(kind, text, line, col) on demand: a parser that gives up early never lexes the rest."""
    line, line_start, k = 1, 0, 0
    while k < len(text):
        m = _TOKEN.match(text, k)
        col = k - line_start + 1
        if m is None:
            raise NotationError(f"unexpected character {text[k]!r}", line, col, source)
        s = m.group()
        if m.lastgroup == "ws":
            if "\n" in s:
                line += s.count("\n")
                line_start = k + s.rfind("\n") + 1
        elif m.lastgroup == "num":
            if len(s.lstrip("-")) > 9:
                raise NotationError(f"number {s[:20]}{'...' if len(s) > 20 else ''} is too large", line, col, source)
            yield ("num", s, line, col)
        elif m.lastgroup == "str":
            yield ("name", s[1:-1], line, col)
        else:
            yield (m.lastgroup, s, line, col)  # type: ignore[misc]
        k = m.end()
    yield ("end", "", line, len(text) - line_start + 1)


@dataclass(frozen=True)
class _Val:
    """A parsed number or list with where it was written (lists hold ``_Val`` items)."""

    value: int | tuple[_Val, ...]
    line: int
    col: int

    @property
    def is_list(self) -> bool:
        return isinstance(self.value, tuple)


def _parse_printed(text: str, source: str) -> dict[str, tuple[_Val, int, int]]:
    """``Head(k=v, ...)``, ``#ttg.linear<{k = v, ...}>`` or ``{k: v, ...}`` -> {key: (value, line, col)}."""
    toks = TokenStream(_tokens(text, source))
    k = 0

    def err(message: str, t: tuple) -> NotationError:
        return NotationError(message, t[2], t[3], source)

    def is_p(t: tuple, p: str) -> bool:
        return t[0] == "p" and t[1] == p

    def dotted_name(k: int) -> int:
        k += 1
        while is_p(toks[k], ".") and toks[k + 1][0] == "name":
            k += 2
        return k

    def found(t: tuple) -> str:
        return repr(t[1]) if t[0] != "end" else "end of input"

    closers: list[str] = []
    if is_p(toks[k], "#") and toks[k + 1][0] == "name":  # MLIR attribute: #ttg.linear<{ ... }>
        k = dotted_name(k + 1)
        if not is_p(toks[k], "<"):
            raise err(f"expected '<' after the attribute name, found {found(toks[k])}", toks[k])
        k += 1
        closers.append(">")
    elif toks[k][0] == "name" and not (is_p(toks[k + 1], "=") or is_p(toks[k + 1], ":")):
        k = dotted_name(k)  # DistributedLinearLayout(...) / LinearLayout(...)
        if not is_p(toks[k], "("):
            raise err(f"expected '(' after the layout name, found {found(toks[k])}", toks[k])
        k += 1
        closers.append(")")
    if is_p(toks[k], "{"):
        k += 1
        closers.append("}")
    if not closers:
        raise err("expected a linear layout: DistributedLinearLayout(...), #ttg.linear<{...}> or JSON",
                  toks[k])
    out: dict[str, tuple[_Val, int, int]] = {}
    while not is_p(toks[k], closers[-1]):
        key = toks[k]
        if key[0] != "name":
            raise err(f"expected a key such as reg_bases or lane, found {found(key)}", key)
        if key[1] not in _KEYS:
            raise err(f"unknown key {key[1]!r} (expected register/reg_bases, lane, warp, block, shape)", key)
        name = _KEYS[key[1]]
        if name in out:
            raise err(f"{key[1]!r} given twice", key)
        k += 1
        if not (is_p(toks[k], "=") or is_p(toks[k], ":")):
            raise err(f"expected '=' after {key[1]}, found {found(toks[k])}", toks[k])
        k += 1
        value, k = _parse_list(toks, k, source)
        out[name] = (value, key[2], key[3])
        if is_p(toks[k], ","):
            k += 1
        elif not is_p(toks[k], closers[-1]):
            raise err(f"expected ',' or {closers[-1]!r}, found {found(toks[k])}", toks[k])
    while closers:
        if not is_p(toks[k], closers[-1]):
            raise err(f"expected {closers[-1]!r}, found {found(toks[k])}", toks[k])
        closers.pop()
        k += 1
    if toks[k][0] != "end":
        raise err(f"unexpected {found(toks[k])} after the layout", toks[k])
    return out


def _parse_list(toks: TokenStream, k: int, source: str) -> tuple[_Val, int]:
    """``INT | '[' [value {',' value} [',']] ']'`` with an explicit stack, ``MAX_LIST_DEPTH`` deep."""
    stack: list[tuple[list[_Val], tuple]] = []
    while True:
        t = toks[k]
        if t[0] == "p" and t[1] == "[":
            if len(stack) >= MAX_LIST_DEPTH:
                raise NotationError(f"list nested deeper than {MAX_LIST_DEPTH} levels", t[2], t[3], source)
            stack.append(([], t))
            k += 1
            if not (toks[k][0] == "p" and toks[k][1] == "]"):
                continue
            items, o = stack.pop()
            value = _Val((), o[2], o[3])
            k += 1
        elif t[0] == "num":
            value = _Val(int(t[1]), t[2], t[3])
            k += 1
        else:
            raise NotationError(f"expected a number or '[', found {t[1]!r}" if t[0] != "end" else
                                "expected a number or '[', found end of input", t[2], t[3], source)
        while True:  # attach ``value``; close every list that ends here
            if not stack:
                return value, k
            stack[-1][0].append(value)
            t = toks[k]
            if t[0] == "p" and t[1] == ",":
                k += 1
                if not (toks[k][0] == "p" and toks[k][1] == "]"):  # else: a trailing comma
                    break
                t = toks[k]
            if t[0] == "p" and t[1] == "]":
                items, o = stack.pop()
                value = _Val(tuple(items), o[2], o[3])
                k += 1
                continue
            o = stack[-1][1]
            raise NotationError(f"expected ',' or ']' (list opened at {o[2]}:{o[3]}), found "
                                f"{repr(t[1]) if t[0] != 'end' else 'end of input'}", t[2], t[3], source)


# ----------------------------------------------------------------------------- validation

def _from_json(doc: JsonDoc) -> dict[str, tuple[_Val, int, int]]:
    obj = doc.value
    if not isinstance(obj, dict):
        raise doc.error("expected a JSON object with register/lane/warp/block bases", obj)
    out: dict[str, tuple[_Val, int, int]] = {}

    def convert(v: object, line: int, col: int) -> _Val:
        """JSON ints and lists -> ``_Val`` (depth already bounded by load_json)."""
        if isinstance(v, list):
            return _Val(tuple(convert(y, *doc.where(v, j)) for j, y in enumerate(v)), line, col)
        if isinstance(v, bool) or not isinstance(v, int):
            raise NotationError(f"expected an integer, found {json_text(v)}", line, col, doc.source)
        if abs(v) >= 1 << 30:
            raise NotationError(f"number {v} is too large", line, col, doc.source)
        return _Val(v, line, col)

    for key, value in obj.items():
        kline, kcol = doc.key_where(obj, key)
        if key == "meta":
            continue
        if key not in _KEYS:
            raise NotationError(f"unknown key {key!r} (expected register/reg_bases, lane, warp, block, shape, meta)",
                                kline, kcol, doc.source)
        name = _KEYS[key]
        if name in out:
            raise NotationError(f"{key!r} repeats {name!r}", kline, kcol, doc.source)
        out[name] = (convert(value, *doc.where(obj, key)), kline, kcol)
    return out


def _bases(name: str, raw: tuple[_Val, int, int] | None, source: str) -> tuple[Basis, ...]:
    if raw is None:
        return ()
    value = raw[0]
    items = value.value
    if not isinstance(items, tuple):  # (not value.is_list)
        raise NotationError(f"{name} bases must be a list of [row, col] pairs", value.line, value.col, source)
    if len(items) > MAX_BASES[name]:
        raise NotationError(f"{len(items)} {name} bases (limit {MAX_BASES[name]})", value.line, value.col, source)
    out: list[Basis] = []
    for b in items:
        coords = b.value
        if not isinstance(coords, tuple):
            raise NotationError(f"a {name} basis must be a [row, col] pair, found {b.value}", b.line, b.col, source)
        if len(coords) != 2:
            raise NotationError(f"a {name} basis has {len(coords)} coordinates; only 2-D layouts (row, col) "
                                f"are supported", b.line, b.col, source)
        pair: list[int] = []
        for x in coords:
            v = x.value
            if isinstance(v, tuple):
                raise NotationError(f"a {name} basis coordinate must be an integer", x.line, x.col, source)
            if v < 0:
                raise NotationError(f"{name} basis coordinate {x.value} is negative", x.line, x.col, source)
            if v >= MAX_EXTENT:
                raise NotationError(f"{name} basis coordinate {x.value} is too large (limit 2^20 - 1)", x.line,
                                    x.col, source)
            pair.append(v)
        out.append((pair[0], pair[1]))
    return tuple(out)


def _validate(fields: dict[str, tuple[_Val, int, int]], source: str) -> TritonLayout:
    if "register" not in fields and "lane" not in fields:
        raise NotationError("no register or lane bases given", 1, 1, source)
    reg = _bases("register", fields.get("register"), source)
    lane = _bases("lane", fields.get("lane"), source)
    warp = _bases("warp", fields.get("warp"), source)
    block = _bases("block", fields.get("block"), source)
    if any(b != (0, 0) for b in block):
        first = fields["block"][0]
        raise NotationError("block (CTA) bases must be zero: a fragment layout lives in one CTA", first.line,
                            first.col, source)
    span = [0, 0]
    for b in reg + lane + warp:
        span[0] |= b[0]
        span[1] |= b[1]
    if "shape" in fields:
        value = fields["shape"][0]
        dims = value.value
        if not isinstance(dims, tuple) or len(dims) != 2 or any(x.is_list for x in dims):
            raise NotationError("shape must be [rows, cols]", value.line, value.col, source)
        shape = []
        for d, x in enumerate(dims):
            v = cast(int, x.value)  # a number: no list (just tested)
            if v < 1 or v > MAX_EXTENT or v & (v - 1):
                raise NotationError(f"shape entry {v} is not a power of two in 1..2^20 (an F2-linear layout "
                                    f"spans a power-of-two extent)", x.line, x.col, source)
            if span[d] >= v:
                raise NotationError(f"bases reach {'row' if d == 0 else 'col'} {span[d]}, outside shape {v}",
                                    x.line, x.col, source)
            shape.append(v)
    else:
        shape = [1 << s.bit_length() for s in span]
    return TritonLayout(reg, lane, warp, block, (shape[0], shape[1]))


def parse_triton(text: str | bytes, source: str = "argument", tensor: str | None = None) -> TritonLayout:
    """A layout from JSON (``{"register": [[0,1],...], "lane": ..., "shape": [16, 8]}``, also
    Triton's ``reg_bases``/``lane_bases``/... names), gluon's ``DistributedLinearLayout(...)``
    printout, the MLIR ``#ttg.linear<{...}>`` attribute, or TTGIR as compilers print it (``#mma =
    #ttg.nvidia_mma<{...}>`` with ``tensor<128x256xf32, #mma>``, dot_op, blocked, slice:
    ``verify.layout.notations.ttgir``; ``tensor`` picks one tensor type of a dump)."""
    text = decode_source(text, source, limit=MAX_TTGIR_CHARS)
    stripped = text.lstrip()
    if not stripped:
        raise NotationError("empty layout", 1, 1, source)
    from . import ttgir
    if ttgir.looks_like_ttgir(text):
        bases, extent, _ = ttgir.parse(text, source, tensor)
        for name in ("register", "lane", "warp"):
            if len(bases.get(name, ())) > MAX_BASES[name]:
                raise NotationError(f"{len(bases[name])} {name} bases (limit {MAX_BASES[name]})", 1, 1, source)
        if len(bases.get("lane", ())) != 5:
            raise NotationError(f"{1 << len(bases.get('lane', ()))} lanes: a warp has 32", 1, 1, source)
        return TritonLayout(bases.get("register", ()), bases.get("lane", ()), bases.get("warp", ()), (), extent)
    if tensor is not None:
        raise NotationError("--tensor picks a tensor type of TTGIR text; this is a linear layout", 1, 1, source)
    if len(text) > 1 << 20:
        raise NotationError(f"input is {len(text)} characters (limit {1 << 20})", 1, 1, source)
    if stripped.startswith("{") and re.match(r'\{\s*("|\})', stripped):
        fields = _from_json(load_json(text, source, max_depth=MAX_LIST_DEPTH + 1))
    else:
        fields = _parse_printed(text, source)
    return _validate(fields, source)


# ----------------------------------------------------------------------------- formula

def _bit(var: Var, b: int) -> BinOp:
    return BinOp("&", var if b == 0 else BinOp(">>", var, Num(b)), Num(1))


def triton_to_formula(layout: TritonLayout, prefix: str | None = None, *, operand: str | None = None,
                      text: str = "") -> TVImport:
    """``row``/``col`` as XORs of basis-weighted index bits.

    ``i`` is the register index; ``%laneid`` is the thread index, whose low ``len(lane)`` bits are
    the lane and the bits above the warp (so 32 lanes x 4 warps is a 128-thread domain).  The
    element prefix defaults to the operand letter (``a`` when no operand is given).
    """
    lane_var, i_var = Var("lane"), Var("i")
    defs: list[Definition] = []
    used: list[tuple[str, Basis]] = []
    nl = len(layout.lane)
    for label, var, bases, shift in (("r", i_var, layout.register, 0), ("l", lane_var, layout.lane, 0),
                                     ("w", lane_var, layout.warp, nl)):
        for b, basis in enumerate(bases):
            if basis != (0, 0):  # a zero basis (replication) contributes nothing
                defs.append(Definition(f"{label}{b}", (Case(_bit(var, b + shift), None),)))
                used.append((f"{label}{b}", basis))
    dom = domain_condition(layout.threads, layout.values)
    for coord, out in ((0, "row"), (1, "col")):
        expr = None
        for name, basis in used:
            w = basis[coord]
            if w:
                term = Ref(name) if w == 1 else BinOp("*", Ref(name), Num(w))
                expr = term if expr is None else BinOp("^", expr, term)
        defs.append(Definition(out, (Case(expr if expr is not None else Num(0), dom),)))
    op = operand.upper() if operand else None
    formula = Formula(tuple(defs), prefix if prefix is not None else (op.lower() if op else "a"))
    return TVImport(formula, layout.threads, layout.values, text, "triton", layout.shape, op)


def import_triton(text: str | bytes, prefix: str | None = None, *, operand: str | None = None,
                  source: str = "argument", tensor: str | None = None) -> TVImport:
    """``parse_triton`` then ``triton_to_formula`` (the ``conform --triton FILE`` path)."""
    layout = parse_triton(text, source, tensor)
    raw = text.decode("utf-8") if isinstance(text, (bytes, bytearray)) else text
    return triton_to_formula(layout, prefix, operand=operand, text=raw.strip())


def _read(text: str | bytes, like: Any, *, source: str = "argument", tensor: str | None = None) -> TVImport:
    return import_triton(text, like.prefix, operand=like.operand, source=source, tensor=tensor)


register(Notation(
    "triton", "--triton", "FILE", False,
    "Triton layout: bases JSON, DistributedLinearLayout(...), or TTGIR (#mma = #ttg.nvidia_mma<...> with "
    "tensor<128x256xf32, #mma>; dot_op, blocked, slice, linear)", _read,
    options=(Option("tensor", "--tensor", "TEXT", "with --triton: the tensor type of a TTGIR dump to read, by its "
                    "layout alias, its shape or both ('#mma', '128x256', '128x32, #ttg.dot_op<{...}>')"),),
    order=2, api_doc="A Triton layout: bases JSON, ``DistributedLinearLayout(...)``, ``#ttg.linear<...>``, or TTGIR "
                     "as compilers print it (``#mma = #ttg.nvidia_mma<{...}>`` with ``tensor<128x256xf32, #mma>``; "
                     "``dot_op``, ``blocked``, ``slice``); ``tensor=`` picks a tensor type of a dump."))
