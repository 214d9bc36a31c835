"""Triton TTGIR: the layout attributes compilers print, lowered to linear layouts by Triton's documented rules.

A TTGIR dump (``MLIR_ENABLE_DUMP=1``, ``kernel.asm["ttgir"]``) names each distributed layout once and uses it
in tensor types::

    #mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 4], instrShape = [16, 8]}>
    ... tensor<128x256xf32, #mma> ...
    ... tensor<128x32xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>> ...

This module reads such text (a whole dump, or just the lines that matter) with its own bounded grammar: the
alias definitions ``#name = #ttg.KIND<{key = value, ...}>`` and the tensor types ``tensor<DIMSxTYPE, LAYOUT>``
with an encoding.  The layout given is the one tensor type of the text (``tensor=`` picks one by its alias,
its shape or both when there are several), over that tensor's shape.  Kinds:

* ``#ttg.nvidia_mma`` (``versionMajor`` 2: Ampere ``mma.sync``; 3: Hopper ``wgmma``), ``warpsPerCTA``,
  ``instrShape`` (``[16, 8]``; ``[16, N, K]``);
* ``#ttg.dot_op<{opIdx = 0|1, parent = #mma, kWidth = K}>``: the A or B operand of that MMA;
* ``#ttg.blocked<{sizePerThread, threadsPerWarp, warpsPerCTA, order}>``;
* ``#ttg.slice<{dim = D, parent = ...}>``: the parent with dimension ``D`` removed (a 1-D tensor; shown as an
  ``N x 1`` column for ``dim = 1``, a ``1 x N`` row for ``dim = 0``);
* ``#ttg.linear<{register = ..., lane = ..., warp = ..., block = ...}>``: bases as written.

Lowering follows Triton's ``LinearLayoutConversions.cpp`` (``verify.layout.notations.linear`` has the
operations): MMA ``nvidiaMmaTile`` (``kWidth`` registers along the inner dimension, 4 lanes along it, 8 lanes
along the outer, ``m / 8`` registers along the outer, ``n / (4 kWidth)`` registers along the inner) times the
warps (order ``[1, 0]`` for version 2: warp ``w`` at ``(w / wn, w % wn)``; ``[0, 1]`` for version 3, so that a
warpgroup's four warps stack along M), the dot operand's tile (A: 16 x 8 kWidth, B: 8 kWidth x 8, K the inner
dimension) with the warps along the other operand's dimension broadcast, blocked ``sizePerThread`` x
``threadsPerWarp`` x ``warpsPerCTA`` in ``order``; then the tensor's shape: register bases repeat each
dimension that is too small (the inner first), and the largest bases of a dimension that is too large become
zero (broadcast).  ``tests/test_block_tiles.py`` checks the bases against the triton wheel's
``to_linear_layout`` for many attributes (an optional extra, in a subprocess).  One CTA only (``CTAsPerCGA``
all 1).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .errors import NotationError, Positions
from .linear import Linear, identity1d, identity_nd, not_larger, not_smaller, zeros1d

NAMES = ("dim0", "dim1")
MAX_DEPTH = 8
MAX_RANK = 2
MAX_DIM = 1 << 16
KINDS = ("nvidia_mma", "dot_op", "blocked", "slice", "linear")
_PREFIXES = ("ttg.", "triton_gpu.")


def looks_like_ttgir(text: str) -> bool:
    """Whether ``text`` is TTGIR with a layout kind this module reads (else the linear-layout reader)."""
    return bool(re.search(r"#(ttg|triton_gpu)\.(nvidia_mma|dot_op|blocked|slice)\b", text) or
                re.search(r"\btensor\s*<", text))


# ----------------------------------------------------------------------------- tokens

_TOKEN = re.compile(r"""
    (?P<ws>[ \t\r\n]+)
  | (?P<num>-?[0-9]+)
  | (?P<attr>\#[A-Za-z_][A-Za-z0-9_$.-]*)
  | (?P<name>[A-Za-z_][A-Za-z0-9_.]*)
  | (?P<str>"[^"\n]{0,200}")
  | (?P<p>[\[\](){}<>,=:])
""", re.VERBOSE)


@dataclass(frozen=True)
class Tok:
    kind: str
    text: str
    at: int


@dataclass(frozen=True)
class Attr:
    """A parsed attribute: its kind (``nvidia_mma``...) or an alias reference (``kind = "ref"``), its fields,
    and where it was written (an offset into the text)."""

    kind: str
    fields: tuple[tuple[str, Any], ...]
    at: int
    name: str = ""  # the alias referred to (kind "ref")

    def get(self, key: str, default: Any = None) -> Any:
        return dict(self.fields).get(key, default)


@dataclass(frozen=True)
class Val:
    value: Any
    at: int


class _Parser:
    def __init__(self, text: str, source: str, pos: Positions) -> None:
        self.text, self.source, self.pos = text, source, pos

    def error(self, message: str, at: int) -> NotationError:
        line, col = self.pos.at(at)
        return NotationError(message, line, col, self.source)

    def tokens(self, start: int) -> list[Tok]:
        """The tokens of one attribute from ``start``: ``#alias``, or ``#ttg.KIND<...>`` up to its closing ``>``."""
        out: list[Tok] = []
        k, angle, depth, n = start, 0, 0, len(self.text)
        while k < n:
            m = _TOKEN.match(self.text, k)
            if m is None:
                raise self.error(f"unexpected character {self.text[k]!r}", k)
            k = m.end()
            if m.lastgroup == "ws":
                continue
            t = Tok(m.lastgroup or "", m.group(), m.start())
            if len(out) == 1 and t.text != "<":
                return out  # an alias reference (or a kind without parameters)
            out.append(t)
            if t.text in ("<", "{", "["):
                depth += 1
                angle += t.text == "<"
                if depth > MAX_DEPTH * 3:
                    raise self.error(f"attribute nested deeper than {MAX_DEPTH} levels", t.at)
            elif t.text in (">", "}", "]"):
                depth -= 1
                angle -= t.text == ">"
                if angle == 0 and t.text == ">":
                    return out
            if len(out) > 1 << 16:
                raise self.error("attribute longer than 65536 tokens", t.at)
        return out

    def attr(self, toks: list[Tok], k: int, depth: int = 0) -> tuple[Attr, int]:
        t = toks[k] if k < len(toks) else Tok("end", "", len(self.text))
        if t.kind != "attr":
            raise self.error(f"expected a layout attribute (#ttg.KIND<...> or #alias), found {_found(t)}", t.at)
        name = t.text[1:]
        kind = next((name[len(p):] for p in _PREFIXES if name.startswith(p)), None)
        if kind is None:
            return Attr("ref", (), t.at, name), k + 1
        if kind not in KINDS:
            raise self.error(f"layout kind {kind!r} is not read here (one of {', '.join(KINDS)})", t.at)
        k += 1
        if depth > MAX_DEPTH:
            raise self.error(f"attribute nested deeper than {MAX_DEPTH} levels", t.at)
        k = self.expect(toks, k, "<", f"after #{name}")
        k = self.expect(toks, k, "{", f"after #{name}<")
        fields: list[tuple[str, Any]] = []
        seen: set[str] = set()
        while not self.at(toks, k, "}"):
            key = toks[k] if k < len(toks) else Tok("end", "", len(self.text))
            if key.kind not in ("name", "str"):
                raise self.error(f"expected a field name, found {_found(key)}", key.at)
            kname = key.text.strip('"')
            if kname in seen:
                raise self.error(f"{kname!r} given twice", key.at)
            seen.add(kname)
            k = self.expect(toks, k + 1, "=", f"after {kname}")
            value, k = self.value(toks, k, depth)
            if self.at(toks, k, ":"):  # a typed integer: 3 : i32
                k += 2
            fields.append((kname, value))
            if self.at(toks, k, ","):
                k += 1
            elif not self.at(toks, k, "}"):
                t2 = toks[k] if k < len(toks) else Tok("end", "", len(self.text))
                raise self.error(f"expected ',' or '}}', found {_found(t2)}", t2.at)
        k = self.expect(toks, k + 1, ">", f"to close #{name}<{{...}}")
        return Attr(kind, tuple(fields), t.at), k

    def value(self, toks: list[Tok], k: int, depth: int) -> tuple[Any, int]:
        t = toks[k] if k < len(toks) else Tok("end", "", len(self.text))
        if t.kind == "num":
            if len(t.text.lstrip("-")) > 9:
                raise self.error(f"number {t.text[:12]} is too large", t.at)
            return Val(int(t.text), t.at), k + 1
        if t.kind == "name" and t.text in ("true", "false"):
            return Val(t.text == "true", t.at), k + 1
        if t.kind == "attr":
            return self.attr(toks, k, depth + 1)
        if t.text == "[":
            items: list[Any] = []
            k += 1
            while not self.at(toks, k, "]"):
                v, k = self.value(toks, k, depth + 1)
                items.append(v)
                if self.at(toks, k, ","):
                    k += 1
                elif not self.at(toks, k, "]"):
                    t2 = toks[k] if k < len(toks) else Tok("end", "", len(self.text))
                    raise self.error(f"expected ',' or ']', found {_found(t2)}", t2.at)
            return Val(tuple(items), t.at), k + 1
        raise self.error(f"expected a number, a list or an attribute, found {_found(t)}", t.at)

    @staticmethod
    def at(toks: list[Tok], k: int, p: str) -> bool:
        return k < len(toks) and toks[k].text == p

    def expect(self, toks: list[Tok], k: int, p: str, where: str) -> int:
        if not self.at(toks, k, p):
            t = toks[k] if k < len(toks) else Tok("end", "", len(self.text))
            raise self.error(f"expected {p!r} {where}, found {_found(t)}", t.at)
        return k + 1


def _found(t: Tok) -> str:
    return "end of input" if t.kind == "end" else repr(t.text)


# ----------------------------------------------------------------------------- the text

@dataclass(frozen=True)
class Tensor:
    """One tensor type with an encoding: its shape, the layout (an alias or inline), where it was written."""

    shape: tuple[int, ...]
    layout: Attr
    at: int


_ALIAS = re.compile(r"^[ \t]*#([A-Za-z_][A-Za-z0-9_$.]*)[ \t]*=[ \t]*(?=#)", re.MULTILINE)
_TENSOR = re.compile(r"\btensor\s*<\s*((?:[0-9]+\s*x\s*)+)")


def read_text(text: str, source: str) -> tuple[dict[str, Attr], list[Tensor], Positions]:
    """The alias definitions of layout kinds and the tensor types with an encoding."""
    pos = Positions(text)
    p = _Parser(text, source, pos)
    aliases: dict[str, Attr] = {}
    for m in _ALIAS.finditer(text):
        start = m.end()
        head = text[start:start + 40]
        if not re.match(r"#(ttg|triton_gpu)\.(nvidia_mma|dot_op|blocked|slice|linear)\b", head):
            continue  # #loc, #shared, #smem...: not a distributed layout
        toks = p.tokens(start)
        attr, _ = p.attr(toks, 0)
        if m.group(1) in aliases:
            raise p.error(f"#{m.group(1)} is defined twice", m.start())
        aliases[m.group(1)] = attr
    tensors: list[Tensor] = []
    for m in _TENSOR.finditer(text):
        dims = [int(x) for x in re.findall(r"[0-9]+", m.group(1))]
        k, depth = m.end(), 0
        while k < len(text):  # the element type, up to the ',' before the encoding (``!tt.ptr<f16>`` nests)
            c = text[k]
            if c == "<":
                depth += 1
            elif c == ">":
                if depth == 0:
                    break
                depth -= 1
            elif (c == "," and depth == 0) or c == "\n":
                break
            k += 1
        if k >= len(text) or text[k] != ",":
            continue  # no encoding: tensor<128xf32>
        k += 1
        while k < len(text) and text[k] in " \t":
            k += 1
        if k >= len(text) or text[k] != "#":
            continue
        toks = p.tokens(k)
        attr, _ = p.attr(toks, 0)
        if any(d < 1 or d > MAX_DIM for d in dims):
            raise p.error(f"tensor dimension outside 1..{MAX_DIM}", m.start())
        tensors.append(Tensor(tuple(dims), attr, m.start()))
    return aliases, tensors, pos


def _norm(v: Any) -> Any:
    """An attribute or value without positions (two inline layouts written alike are the same)."""
    if isinstance(v, Attr):
        return (v.kind, v.name, tuple((k, _norm(x)) for k, x in v.fields))
    if isinstance(v, Val):
        return tuple(_norm(x) for x in v.value) if isinstance(v.value, tuple) else v.value
    return v


def _attr_text(attr: Attr) -> str:
    if attr.kind == "ref":
        return f"#{attr.name}"
    inner = ", ".join(f"{k} = {_val_text(v)}" for k, v in attr.fields)
    return f"#ttg.{attr.kind}<{{{inner}}}>"


def _val_text(v: Any) -> str:
    if isinstance(v, Attr):
        return _attr_text(v)
    if isinstance(v, Val) and isinstance(v.value, tuple):
        return "[" + ", ".join(_val_text(x) for x in v.value) + "]"
    if isinstance(v, Val) and isinstance(v.value, bool):
        return "true" if v.value else "false"
    return str(v.value) if isinstance(v, Val) else str(v)


def select(text: str, source: str, tensor: str | None = None) -> tuple[Attr, tuple[int, ...], dict[str, Attr], _Parser]:
    """The layout and shape the text gives: its one tensor type (``tensor``: ``#mma``, ``128x256`` or
    ``128x256, #mma`` picks among several)."""
    aliases, tensors, pos = read_text(text, source)
    p = _Parser(text, source, pos)
    want_alias, want_shape, want_inline = None, None, None
    if tensor is not None and "#" in tensor and re.search(r"#(ttg|triton_gpu)\.", tensor):
        at = tensor.index("#")
        q = _Parser(tensor[at:], "--tensor", Positions(tensor[at:]))
        want_inline = _norm(q.attr(q.tokens(0), 0)[0])
        dims = re.findall(r"[0-9]+", tensor[:at])
        want_shape = tuple(int(x) for x in dims) if dims else None
    elif tensor is not None:
        m = re.fullmatch(r"\s*(?:tensor\s*<\s*)?(?:((?:[0-9]+\s*x\s*)*[0-9]+)(?:\s*x\s*[A-Za-z!][^,]*)?)?\s*,?\s*"
                         r"(?:#([A-Za-z_][A-Za-z0-9_$.]*))?\s*>?\s*", tensor)
        if m is None or not (m.group(1) or m.group(2)):
            raise NotationError(f"--tensor {tensor!r}: write '#alias', a shape '128x256' or both '128x256, #mma'",
                                1, 1, source)
        want_shape = tuple(int(x) for x in re.findall(r"[0-9]+", m.group(1))) if m.group(1) else None
        want_alias = m.group(2)
    found: dict[tuple[tuple[int, ...], str], Tensor] = {}
    for t in tensors:
        key = (t.shape, t.layout.name if t.layout.kind == "ref" else repr(_norm(t.layout)))
        if want_shape is not None and t.shape != want_shape:
            continue
        if want_alias is not None and (t.layout.kind != "ref" or t.layout.name != want_alias):
            continue
        if want_inline is not None and (t.layout.kind == "ref" or _norm(t.layout) != want_inline):
            continue
        if t.layout.kind == "ref" and t.layout.name not in aliases:
            continue  # a shared-memory or other layout
        if t.layout.kind != "ref" and t.layout.kind not in KINDS:
            continue
        found.setdefault(key, t)
    if not found and not tensors and len(aliases) >= 1:
        raise NotationError("a TTGIR layout needs the tensor's shape: add the tensor type that uses it, e.g. "
                            f"tensor<128x256xf32, #{next(iter(aliases))}>", 1, 1, source)
    if not found:
        what = f" matching --tensor {tensor!r}" if tensor is not None else ""
        raise NotationError(f"no tensor type with a distributed layout{what} (tensor<DIMSxTYPE, #alias>)", 1, 1, source)
    if len(found) > 1:
        shown = "; ".join(f"{'x'.join(map(str, t.shape))}, {_attr_text(t.layout)} (line {pos.at(t.at)[0]}:"
                          f"{pos.at(t.at)[1]})"
                          for t in list(found.values())[:6])
        raise NotationError(f"{len(found)} tensors with distributed layouts: {shown}{'; ...' if len(found) > 6 else ''}"
                            " -- give --tensor '#alias', a shape or both to pick one", 1, 1, source)
    t = next(iter(found.values()))
    return t.layout, t.shape, aliases, p


# ----------------------------------------------------------------------------- lowering

def _ints(p: _Parser, attr: Attr, key: str, n: int | None = None, required: bool = True) -> tuple[int, ...]:
    v = attr.get(key)
    if v is None:
        if required:
            raise p.error(f"#ttg.{attr.kind} needs {key}", attr.at)
        return ()
    if not isinstance(v, Val) or not isinstance(v.value, tuple) or not all(
            isinstance(x, Val) and isinstance(x.value, int) and not isinstance(x.value, bool) for x in v.value):
        raise p.error(f"{key} must be a list of integers", getattr(v, "at", attr.at))
    out = tuple(x.value for x in v.value)
    if n is not None and len(out) != n:
        raise p.error(f"{key} has {len(out)} entries; a {n}-D layout needs {n}", v.at)
    return out


def _int(p: _Parser, attr: Attr, key: str, allowed: tuple[int, ...] | None = None) -> int:
    v = attr.get(key)
    if not isinstance(v, Val) or not isinstance(v.value, int) or isinstance(v.value, bool):
        raise p.error(f"#ttg.{attr.kind} needs {key} = an integer", getattr(v, "at", attr.at))
    if allowed is not None and v.value not in allowed:
        raise p.error(f"{key} = {v.value} is not read here (one of {', '.join(map(str, allowed))})", v.at)
    return v.value


def _pow2(p: _Parser, attr: Attr, key: str, values: tuple[int, ...]) -> None:
    for x in values:
        if x < 1 or x & (x - 1) or x > MAX_DIM:
            raise p.error(f"{key} entry {x} is not a power of two in 1..{MAX_DIM}", attr.get(key).at)


_KNOWN = {
    "nvidia_mma": {"versionMajor", "versionMinor", "warpsPerCTA", "instrShape", "CTAsPerCGA", "CTASplitNum",
                   "CTAOrder", "CGALayout"},
    "dot_op": {"opIdx", "parent", "kWidth"},
    "blocked": {"sizePerThread", "threadsPerWarp", "warpsPerCTA", "order", "CTAsPerCGA", "CTASplitNum", "CTAOrder",
                "CGALayout"},
    "slice": {"dim", "parent"},
    "linear": {"register", "lane", "warp", "block"},
}


def _check_fields(p: _Parser, attr: Attr) -> None:
    for k, v in attr.fields:
        if k not in _KNOWN[attr.kind]:
            raise p.error(f"#ttg.{attr.kind} has no field {k!r} that is read here "
                          f"({', '.join(sorted(_KNOWN[attr.kind]))})", getattr(v, "at", attr.at))
    for key in ("CTAsPerCGA", "CTASplitNum"):
        if attr.get(key) is not None and any(x != 1 for x in _ints(p, attr, key)):
            raise p.error(f"{key} other than all 1: a layout over several CTAs is not read here (one CTA)",
                          attr.get(key).at)
    cga = attr.get("CGALayout")
    if cga is not None and isinstance(cga, Val) and isinstance(cga.value, tuple) and cga.value:
        raise p.error("CGALayout: a layout over several CTAs is not read here (one CTA)", cga.at)


def _resolve(p: _Parser, attr: Attr, aliases: dict[str, Attr], seen: tuple[str, ...] = ()) -> Attr:
    if attr.kind != "ref":
        return attr
    if attr.name in seen:
        raise p.error(f"#{attr.name} refers to itself", attr.at)
    if attr.name not in aliases:
        raise p.error(f"#{attr.name} is not defined in the text (#{attr.name} = #ttg.KIND<...>)", attr.at)
    return _resolve(p, aliases[attr.name], aliases, seen + (attr.name,))


def _combine(cta: Linear, shape: tuple[int, ...], broadcast_registers: bool = True) -> Linear:
    """Triton's ``combineCtaCgaWithShape`` for one CTA: repeat what is too small, broadcast what is too large
    (register bases of a blocked layout are removed instead: the wheel's lowering does so)."""
    names = NAMES[:len(shape)]
    want = dict(zip(names, shape))
    cta = not_larger(not_smaller(cta, want), want, broadcast_registers)
    return cta.transpose_outs(names)


def _mma_tile(tile: tuple[int, int], kwidth: int, order: tuple[int, int], rep_order: tuple[int, int]) -> Linear:
    """Triton's ``nvidiaMmaTile``."""
    cta = identity_nd("register", [1, 1], rep_order, NAMES)
    inner, outer = order
    m, n = tile[outer], tile[inner]
    part = (identity1d(kwidth, "register", NAMES[inner]) * identity1d(4, "lane", NAMES[inner]) *
            identity1d(8, "lane", NAMES[outer]) * identity1d(m // 8, "register", NAMES[outer]) *
            identity1d(n // (kwidth * 4), "register", NAMES[inner]))
    return cta * part


def _mma_params(p: _Parser, mma: Attr) -> tuple[int, tuple[int, ...], tuple[int, ...], tuple[int, int]]:
    _check_fields(p, mma)
    version = _int(p, mma, "versionMajor", (2, 3))
    warps = _ints(p, mma, "warpsPerCTA", 2)
    _pow2(p, mma, "warpsPerCTA", warps)
    instr = _ints(p, mma, "instrShape")
    if version == 2 and (len(instr) != 2 or instr[0] != 16 or instr[1] != 8):
        raise p.error(f"instrShape {list(instr)}: an Ampere mma (versionMajor = 2) is [16, 8]", mma.get("instrShape").at)
    if version == 3 and (len(instr) != 3 or instr[0] != 16 or instr[1] % 8 or not 8 <= instr[1] <= 256):
        raise p.error(f"instrShape {list(instr)}: a Hopper mma (versionMajor = 3) is [16, N, K] with N in 8..256 "
                      "step 8", mma.get("instrShape").at)
    if version == 3 and instr[1] & (instr[1] - 1):
        raise p.error(f"instrShape N = {instr[1]} is not a power of two: a linear layout spans a power-of-two extent",
                      mma.get("instrShape").at)
    warp_order = (1, 0) if version == 2 else (0, 1)
    return version, warps, instr, warp_order


def lower(p: _Parser, attr: Attr, shape: tuple[int, ...], aliases: dict[str, Attr], depth: int = 0) -> Linear:
    """``attr`` over ``shape`` as Triton's linear layout (outputs ``dim0``, ``dim1``...)."""
    attr = _resolve(p, attr, aliases)
    if depth > MAX_DEPTH:
        raise p.error(f"layouts nested deeper than {MAX_DEPTH} levels", attr.at)
    if attr.kind == "slice":
        _check_fields(p, attr)
        dim = _int(p, attr, "dim")
        parent = attr.get("parent")
        if not isinstance(parent, Attr):
            raise p.error("#ttg.slice needs parent = a layout", attr.at)
        if len(shape) + 1 > MAX_RANK or not 0 <= dim <= len(shape):
            raise p.error(f"slice dim = {dim} of a {len(shape) + 1}-D parent: only 2-D parents are read here", attr.at)
        pshape = shape[:dim] + (1,) + shape[dim:]
        lay = lower(p, parent, pshape, aliases, depth + 1)
        keep = [j for j in range(len(pshape)) if j != dim]
        ins = []
        for name, bases in lay.ins:
            bs = tuple(tuple(b[j] for j in keep) for b in bases)
            if name == "register":
                bs = tuple(b for b in bs if any(b))
            ins.append((name, bs))
        return Linear(tuple(ins), tuple((NAMES[k], lay.out_log2(NAMES[j])) for k, j in enumerate(keep)))
    if len(shape) != 2:
        raise p.error(f"a {len(shape)}-D tensor: only 2-D tensors (and 1-D slices of them) are read here", attr.at)
    _pow2_shape(p, shape, attr)
    if attr.kind == "nvidia_mma":
        _, warps, instr, warp_order = _mma_params(p, attr)
        cta = _mma_tile((instr[0], instr[1]), 2, (1, 0), (1, 0))
        cta = cta * identity_nd("warp", list(warps), warp_order, NAMES).transpose_outs(cta.out_names())
        return _combine(cta, shape)
    if attr.kind == "dot_op":
        _check_fields(p, attr)
        op = _int(p, attr, "opIdx", (0, 1))
        kwidth = _int(p, attr, "kWidth", (1, 2, 4, 8, 16))
        parent = _resolve(p, attr.get("parent") if isinstance(attr.get("parent"), Attr) else
                          _missing(p, attr, "parent"), aliases)
        if parent.kind != "nvidia_mma":
            raise p.error(f"a dot operand of #ttg.{parent.kind} is not read here (parent = an nvidia_mma)", parent.at)
        version, warps, _, warp_order = _mma_params(p, parent)
        if op == 1 and version == 3:
            raise p.error("a Hopper (versionMajor = 3) B operand is read from shared memory, not registers", attr.at)
        a = op == 0
        tile = (16, kwidth * 8) if a else (kwidth * 8, 8)
        tile_order = (1, 0) if a else (0, 1)
        cta = _mma_tile(tile, kwidth, tile_order, tile_order)
        inner = 1 if a else 0
        wl = identity_nd("warp", [1, 1], warp_order, NAMES)
        for d in warp_order:
            wl = wl * (zeros1d(warps[d], "warp", NAMES[d]) if d == inner else identity1d(warps[d], "warp", NAMES[d]))
        cta = cta * wl.transpose_outs(cta.out_names())
        return _combine(cta, shape)
    if attr.kind == "blocked":
        _check_fields(p, attr)
        size, thr, warps, order = (_ints(p, attr, k, 2) for k in ("sizePerThread", "threadsPerWarp", "warpsPerCTA",
                                                                  "order"))
        for k, v in (("sizePerThread", size), ("threadsPerWarp", thr), ("warpsPerCTA", warps)):
            _pow2(p, attr, k, v)
        if sorted(order) != [0, 1]:
            raise p.error(f"order {list(order)} is not a permutation of [0, 1]", attr.get("order").at)
        if thr[0] * thr[1] != 32:
            raise p.error(f"threadsPerWarp {list(thr)}: a warp has 32 threads", attr.get("threadsPerWarp").at)
        cta = (identity_nd("register", list(size), order, NAMES) * identity_nd("lane", list(thr), order, NAMES) *
               identity_nd("warp", list(warps), order, NAMES))
        return _combine(cta, shape, broadcast_registers=False)
    if attr.kind == "linear":
        _check_fields(p, attr)
        ins = []
        for key in ("register", "lane", "warp", "block"):
            v = attr.get(key)
            bases = () if v is None else tuple(tuple(_coord(p, x) for x in _list(p, b)) for b in _list(p, v))
            if any(len(b) != 2 for b in bases):
                raise p.error(f"{key} bases must be [row, col] pairs", getattr(v, "at", attr.at))
            if key == "block" and any(any(b) for b in bases):
                raise p.error("block (CTA) bases must be zero: one CTA", v.at)
            ins.append((key, bases))
        lay = Linear(tuple(ins), tuple((n, s.bit_length() - 1) for n, s in zip(NAMES, shape)))
        return lay
    raise p.error(f"layout kind {attr.kind!r} is not read here", attr.at)  # pragma: no cover


def _missing(p: _Parser, attr: Attr, key: str) -> Any:
    raise p.error(f"#ttg.{attr.kind} needs {key} = a layout", attr.at)


def _list(p: _Parser, v: Any) -> tuple[Any, ...]:
    if not isinstance(v, Val) or not isinstance(v.value, tuple):
        raise p.error("expected a list", getattr(v, "at", 0))
    return v.value


def _coord(p: _Parser, v: Any) -> int:
    if not isinstance(v, Val) or not isinstance(v.value, int) or isinstance(v.value, bool) or not 0 <= v.value < MAX_DIM:
        raise p.error(f"a basis coordinate is an integer in 0..{MAX_DIM - 1}", getattr(v, "at", 0))
    return v.value


def _pow2_shape(p: _Parser, shape: tuple[int, ...], attr: Attr) -> None:
    for d in shape:
        if d & (d - 1):
            raise p.error(f"tensor dimension {d} is not a power of two (a Triton layout spans a power-of-two "
                          "extent)", attr.at)


def bases_2d(lay: Linear, shape: tuple[int, ...], sliced: int | None) -> tuple[dict[str, tuple[tuple[int, int], ...]],
                                                                                  tuple[int, int]]:
    """Per input, (row, col) bases and the (rows, cols) extent: a 1-D slice along dim 1 removed is an ``N x 1``
    column, along dim 0 a ``1 x N`` row."""
    out: dict[str, tuple[tuple[int, int], ...]] = {}
    for name, bases in lay.ins:
        if len(shape) == 2:
            out[name] = tuple((b[0], b[1]) for b in bases)
        elif sliced == 0:
            out[name] = tuple((0, b[0]) for b in bases)
        else:
            out[name] = tuple((b[0], 0) for b in bases)
    if len(shape) == 2:
        return out, (shape[0], shape[1])
    return out, ((1, shape[0]) if sliced == 0 else (shape[0], 1))


def parse(text: str, source: str, tensor: str | None = None) -> tuple[dict[str, tuple[tuple[int, int], ...]],
                                                                     tuple[int, int], str]:
    """TTGIR text -> (bases per input as (row, col), extent, a one-line description of what was read)."""
    attr, shape, aliases, p = select(text, source, tensor)
    resolved = _resolve(p, attr, aliases)
    lay = lower(p, attr, shape, aliases)
    sliced = _int(p, resolved, "dim") if resolved.kind == "slice" else None
    bases, extent = bases_2d(lay, shape, sliced)
    what = f"tensor<{'x'.join(map(str, shape))}, {_attr_text(attr)}> (#ttg.{resolved.kind})"
    return bases, extent, what


__all__ = ["Attr", "Tensor", "looks_like_ttgir", "lower", "parse", "read_text", "select"]
