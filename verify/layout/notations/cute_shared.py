"""CuTe shared-memory layouts: swizzled ``(rows, cols)`` tiles, as CuTe prints and declares them.

Accepted (text is untrusted: the existing CuTe lexer and type parser, bounded, every error positioned):

* print form: ``Sw<3,4,3> o smem_ptr[16b](unset) o (_8,_64):(_64,_1)`` (the swizzle on the shared-memory
  address, CuTe's ``smem_ptr`` composition), ``Sw<3,4,3> o _0 o (_8,_64):(_64,_1)`` (on the element offset:
  a plain composition), ``Swizzle<3,4,3> o ((8,2),(8,2)):((1,8),(16,128))`` (the PTX pages' form: on the
  address), or a bare ``shape:stride``;
* C++ types: ``ComposedLayout<Swizzle<3,4,3>, smem_ptr_flag_bits<16>, Layout<Shape<_8,_64>,Stride<_64,_1>>>``
  (``smem_ptr_flag_bits<B>``: the address, elements of B bits; ``_0``/``Int<0>``: the element offset),
  ``Layout<...>``, and the GMMA/UMMA atoms ``GMMA::Layout_{K,MN}_{INTER,SW32,SW64,SW128}_Atom<T>`` and
  ``UMMA::Layout_MN_SW128_32B_Atom<T>`` as CuTe's ``mma_traits_sm90_gmma.hpp``/``mma_traits_sm100.hpp`` define
  them (an atom in bits ``upcast`` to ``T``);
* calls: ``composition(Swizzle<3,4,3>{}, Layout<...>{})`` (element offset) and
  ``tile_to_shape(ATOM{}, Shape<_64,_64>{} [, Step<_2,_1>{}])`` (CuTe's blocked product of the atom over the
  shape, column-major order of atoms unless a ``Step`` says otherwise).

The result is a ``verify.layout.shared.SharedLayout`` over (row = mode 0, col = mode 1).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..shared import SharedLayout, Swizzle, make_shared
from .cute_layout import CuteLayout, flatten, product
from .cute_parse import (
    Interpreter,
    PNode,
    TNode,
    TokenStream,
    TypeParser,
    _describe,
    iter_tokens,
    parse_cute,
)
from .registry import SharedReader, register_reader
from .errors import NotationError, decode_source

# CuTe value types -> bits in shared memory
CUTE_TYPES = {
    "half_t": 16, "cutlass::half_t": 16, "__half": 16, "half": 16, "bfloat16_t": 16, "cutlass::bfloat16_t": 16,
    "__nv_bfloat16": 16, "tfloat32_t": 32, "cutlass::tfloat32_t": 32, "float": 32, "int32_t": 32, "uint32_t": 32,
    "double": 64, "int8_t": 8, "uint8_t": 8, "float_e4m3_t": 8, "float_e5m2_t": 8, "cutlass::float_e4m3_t": 8,
    "cutlass::float_e5m2_t": 8, "uint16_t": 16, "int16_t": 16, "float_e2m1_t": 4, "int4b_t": 4, "uint4b_t": 4,
    "float_e2m3_unpacksmem_t": 8, "float_e3m2_unpacksmem_t": 8, "float_e2m1_unpacksmem_t": 8, "uint128_t": 128,
}
_ATOM = re.compile(r"(?:(?:cute::)?(?:GMMA|UMMA|SM90::GMMA|SM100::UMMA)::)?Layout_(K|MN)_(INTER|SW32|SW64|SW128|SW128_32B)_Atom")
_SWZ = {"INTER": Swizzle(0, 4, 3), "SW32": Swizzle(1, 4, 3), "SW64": Swizzle(2, 4, 3), "SW128": Swizzle(3, 4, 3),
        "SW128_32B": Swizzle(2, 5, 2)}
_WIDTH_BITS = {"INTER": 128, "SW32": 256, "SW64": 512, "SW128": 1024, "SW128_32B": 1024}


@dataclass(frozen=True)
class Swizzled:
    """``swizzle o [smem_ptr] o layout``: ``on`` is ``"address"`` (an ``smem_ptr`` composition) or
    ``"elements"``; ``bits``: the element width the notation states (0: not stated)."""

    layout: CuteLayout
    swizzle: Swizzle | None
    on: str
    bits: int
    atom: tuple[int, int] | None = None


def _type_bits(node: TNode, source: str) -> int:
    name = node.text.removeprefix("cute::")
    if node.kind == "name" and node.args is None and name in CUTE_TYPES:
        return CUTE_TYPES[name]
    if name in ("float_e2m3_t", "float_e3m2_t"):
        raise NotationError(f"{name}: 6-bit types sit in 8-bit containers in shared memory (use "
                            f"{name.replace('_t', '_unpacksmem_t')})", node.line, node.col, source)
    raise NotationError(f"unknown element type {node.text!r} (known: {', '.join(sorted(CUTE_TYPES)[:8])}, ...)",
                        node.line, node.col, source)


def atom(kind: str, major: str, bits: int, line: int = 1, col: int = 1, source: str = "argument") -> Swizzled:
    """``GMMA::Layout_<major>_<kind>_Atom<T>`` for ``bits``-bit T: the atom in bits, upcast to T."""
    if kind == "SW128_32B" and major != "MN":
        raise NotationError("Layout_K_SW128_32B_Atom does not exist (128B swizzling with 32B atomicity is M/N-major)",
                            line, col, source)
    width = _WIDTH_BITS[kind]
    rows = 4 if kind == "SW128_32B" else 8
    if width % bits:
        raise NotationError(f"a {bits}-bit type does not divide the {width}-bit atom row", line, col, source)
    w = width // bits
    lay = CuteLayout((w, rows), (1, w)) if major == "MN" else CuteLayout((rows, w), (w, 1))
    shape = (w, rows) if major == "MN" else (rows, w)
    return Swizzled(lay, _SWZ[kind], "address", bits, shape)


class _Reader:
    """Values of the C++ forms: layouts, swizzles, pointer flags, atoms, shapes."""

    def __init__(self, toks: TokenStream, source: str) -> None:
        self.toks, self.source = toks, source
        self.interp = Interpreter(source, resolve=self._resolve)

    def error(self, message: str, t: tuple) -> NotationError:
        return NotationError(message, t[3], t[4], self.source)

    def is_p(self, k: int, p: str) -> bool:
        t = self.toks[k]
        return t[0] == "P" and t[1] == p

    # a value: call | type ['{' '}']
    def value(self, k: int, depth: int = 0) -> tuple[object, int]:
        if depth > 8:
            raise self.error("calls nested deeper than 8 levels", self.toks[k])
        t = self.toks[k]
        if t[0] == "NAME" and self.is_p(k + 1, "("):
            return self.call(k, depth)
        parser = TypeParser(self.toks, k, self.source)
        node = parser.type()
        k = parser.k
        if self.is_p(k, "{"):
            if not self.is_p(k + 1, "}"):
                raise self.error(f"expected '}}', found {_describe(self.toks[k + 1])}", self.toks[k + 1])
            k += 2
        return self.interp.value(node), k

    def call(self, k: int, depth: int) -> tuple[object, int]:
        name_tok = self.toks[k]
        name = name_tok[1].removeprefix("cute::")
        k += 2
        args = []
        while True:
            v, k = self.value(k, depth + 1)
            args.append((v, self.toks[k]))
            if self.is_p(k, ","):
                k += 1
                continue
            if self.is_p(k, ")"):
                k += 1
                break
            raise self.error(f"expected ',' or ')', found {_describe(self.toks[k])}", self.toks[k])
        vals = [a for a, _ in args]
        if name == "composition":
            if len(vals) != 2 or not isinstance(vals[0], Swizzle) or not isinstance(vals[1], CuteLayout):
                raise self.error("composition(Swizzle<B,M,S>{}, Layout<...>{}) is the form understood", name_tok)
            return Swizzled(vals[1], vals[0], "elements", 0), k
        if name == "tile_to_shape":
            if len(vals) not in (2, 3):
                raise self.error("tile_to_shape(ATOM{}, Shape<...>{} [, Step<...>{}])", name_tok)
            return self.tile(vals[0], vals[1], vals[2] if len(vals) == 3 else None, name_tok), k
        if name in ("make_shape", "make_stride"):
            kids = []
            for v in vals:
                if not isinstance(v, PNode):
                    raise self.error(f"{name} takes integers", name_tok)
                kids.append(v)
            return PNode(tuple(x.value for x in kids), name_tok[3], name_tok[4], tuple(kids)), k
        raise self.error(f"unknown function {name!r} (composition, tile_to_shape, make_shape)", name_tok)

    def tile(self, blk: object, shape: object, order: object, where: tuple) -> Swizzled:
        if isinstance(blk, CuteLayout):
            blk = Swizzled(blk, None, "", 0)
        if not isinstance(blk, Swizzled) or not isinstance(shape, PNode):
            raise self.error("tile_to_shape needs a layout (or atom) and a Shape<...>", where)
        lay = blk.layout
        if lay.rank() != 2 or not isinstance(shape.value, tuple) or len(shape.value) != 2:
            raise self.error("tile_to_shape: a rank-2 atom tiled to a rank-2 shape", where)
        target = [product(x) for x in shape.value]
        bshape = [lay.mode(0).size(), lay.mode(1).size()]
        reps = []
        for tgt, b in zip(target, bshape):
            if tgt % b:
                raise self.error(f"tile_to_shape: {tgt} is not a multiple of the atom's {b}", where)
            reps.append(tgt // b)
        col_major = True
        if order is not None:
            if not isinstance(order, PNode) or not isinstance(order.value, tuple) or len(order.value) != 2:
                raise self.error("tile_to_shape: the order is Step<_1,_2> or Step<_2,_1>", where)
            col_major = tuple(order.value) != (2, 1)
        cos = lay.cosize()
        bstride = [1, reps[0]] if col_major else [reps[1], 1]
        modes = []
        for k in range(2):
            m = lay.mode(k)
            shp = tuple(flatten(m.shape)) + (reps[k],)
            std = tuple(flatten(m.stride)) + (cos * bstride[k],)
            modes.append((shp, std))
        return Swizzled(CuteLayout(tuple(x[0] for x in modes), tuple(x[1] for x in modes)), blk.swizzle, blk.on,
                        blk.bits, blk.atom or (bshape[0], bshape[1]))

    def _resolve(self, node: TNode, interp: Interpreter) -> object | None:
        name = node.text.removeprefix("cute::")
        if name == "Swizzle" and node.args is not None:
            if len(node.args) != 3:
                raise NotationError("Swizzle<B,M,S> takes three integers", node.line, node.col, self.source)
            b, m, s = (interp.integer(a) for a in node.args)
            try:
                return Swizzle(b, m, s)
            except ValueError as e:
                raise NotationError(str(e), node.line, node.col, self.source) from None
        if name in ("smem_ptr_flag_bits", "smem_ptr_flag"):
            bits = interp.integer(node.args[0]) if node.args else 1
            return ("smem_ptr", bits)
        if name == "ComposedLayout" and node.args is not None:
            if len(node.args) != 3:
                raise NotationError("ComposedLayout<Swizzle<...>, OFFSET, Layout<...>> takes three arguments",
                                    node.line, node.col, self.source)
            sw = interp.value(node.args[0])
            mid = interp.value(node.args[1])
            lay = interp.value(node.args[2])
            if not isinstance(sw, Swizzle) or not isinstance(lay, CuteLayout):
                raise NotationError("ComposedLayout<Swizzle<B,M,S>, ..., Layout<...>> is the form understood",
                                    node.line, node.col, self.source)
            if isinstance(mid, tuple) and mid[0] == "smem_ptr":
                return Swizzled(lay, sw, "address", mid[1])
            if isinstance(mid, PNode) and mid.value == 0:
                return Swizzled(lay, sw, "elements", 0)
            raise NotationError("the middle of a ComposedLayout is smem_ptr_flag_bits<B> or _0",
                                node.line, node.col, self.source)
        am = _ATOM.fullmatch(node.text)
        if am and node.args is not None:
            if len(node.args) != 1:
                raise NotationError(f"{node.text}<T> takes one type", node.line, node.col, self.source)
            bits = _type_bits(node.args[0], self.source)
            return atom(am.group(2), am.group(1), bits, node.line, node.col, self.source)
        if am:
            raise NotationError(f"{node.text} needs its element type: {node.text}<half_t>", node.line, node.col,
                                self.source)
        return None


_PRINT = re.compile(r"\s*(Sw|Swizzle)\s*<\s*(\d{1,2})\s*,\s*(\d{1,2})\s*,\s*(\d{1,2})\s*>\s*o\s*")
_PTR = re.compile(r"smem_ptr\[(\d{1,3})b\](?:\([A-Za-z0-9_]{0,16}\))?\s*o\s*")
_ZERO = re.compile(r"(?:_0|0|Int<0>)\s*o\s*")


def parse_cute_shared(text: str | bytes, source: str = "argument") -> Swizzled:
    """Parse any form of the module docstring into a ``Swizzled`` layout."""
    text = decode_source(text, source, limit=1 << 20)
    m = _PRINT.match(text)
    if m:
        try:
            sw = Swizzle(int(m.group(2)), int(m.group(3)), int(m.group(4)))
        except ValueError as e:
            raise NotationError(str(e), 1, m.start(1) + 1, source) from None
        k = m.end()
        on, bits = "address", 0
        p = _PTR.match(text, k)
        z = _ZERO.match(text, k)
        if p:
            bits, k, on = int(p.group(1)), p.end(), "address"
        elif z:
            k, on = z.end(), "elements"
        rest = text[k:]
        lay = _shifted(lambda: parse_cute(rest, source), text, k, source)
        return Swizzled(lay, sw, on, bits)
    toks = TokenStream(iter_tokens(text, source))
    if toks[0][0] == "END":
        raise NotationError("empty layout", 1, 1, source)
    if toks[0][0] == "NAME" or (toks[0][0] == "P" and toks[0][1] == "::"):
        r = _Reader(toks, source)
        v, k = r.value(0)
        if r.is_p(k, ";"):
            k += 1
        if toks[k][0] != "END":
            raise r.error(f"unexpected {_describe(toks[k])} after the layout", toks[k])
        if isinstance(v, CuteLayout):
            return Swizzled(v, None, "", 0)
        if isinstance(v, Swizzled):
            return v
        raise NotationError("expected a layout, an atom, a ComposedLayout or tile_to_shape(...)", 1, 1, source)
    return Swizzled(parse_cute(text, source), None, "", 0)


def _shifted(fn, text: str, k: int, source: str):
    """Run a parser on ``text[k:]`` and report its errors at positions of the whole text."""
    try:
        return fn()
    except NotationError as e:
        line0 = text.count("\n", 0, k) + 1
        col0 = k - (text.rfind("\n", 0, k) + 1)
        raise NotationError(e.message, e.line + line0 - 1, e.col + (col0 if e.line == 1 else 0), source) from None


def import_cute_shared(text: str | bytes, type_bits: int | None = None, base: int = 0,
                       source: str = "argument") -> SharedLayout:
    """A CuTe shared-memory layout as a ``SharedLayout`` (row = mode 0, col = mode 1).  ``type_bits``
    (``--type``) must agree with a width the text states; one of the two is required."""
    sw = parse_cute_shared(text, source)
    bits = sw.bits or type_bits
    if bits is None:
        raise NotationError("the element width is not in the text: give --type", 1, 1, source)
    if type_bits is not None and sw.bits and sw.bits != type_bits:
        raise NotationError(f"the layout is for {sw.bits}-bit elements, but --type says {type_bits}-bit", 1, 1,
                            source)
    lay = sw.layout
    if lay.rank() != 2:
        raise NotationError(f"a shared-memory tile has two modes (rows, cols); this layout has {lay.rank()}",
                            1, 1, source)
    r, c = lay.mode(0), lay.mode(1)
    raw = text.decode("utf-8", "replace") if isinstance(text, (bytes, bytearray)) else text
    try:
        return make_shared(r.size(), c.size(), (list(flatten(r.shape)), list(flatten(r.stride))),
                           (list(flatten(c.shape)), list(flatten(c.stride))), bits, sw.swizzle,
                           sw.on or "address", base, atom=sw.atom, notation="cute", text=raw.strip())
    except ValueError as e:
        raise NotationError(str(e), 1, 1, source) from None


_SHARED_CUTE = re.compile(r"\bSw\s*<|\bSwizzle\s*<|smem_ptr|ComposedLayout|GMMA\s*::|UMMA\s*::|tile_to_shape|composition")


def _read_shared(text: str | bytes, *, bits: int | None = None, base: int = 0, source: str = "argument",
                 **_: object) -> SharedLayout:
    return import_cute_shared(text, bits, base, source)


register_reader("shared", SharedReader("cute", _read_shared, looks_shared=lambda t: _SHARED_CUTE.search(t) is not None,
                                       order=1, flag="--cute", metavar="TEXT", help=(
    "CuTe: Sw<3,4,3> o smem_ptr[16b](unset) o (8,64):(64,1), GMMA::Layout_K_SW128_Atom<half_t>, "
    "tile_to_shape(ATOM{}, Shape<_64,_64>{}), ComposedLayout<...>")))


__all__ = ["CUTE_TYPES", "Swizzled", "atom", "import_cute_shared", "parse_cute_shared"]
