"""Storage maps in other notations: element coordinates -> a location, for ``consistent``'s writer and reader.

A storage layout (``specs/storage.*.toml``: ``(l, m, kb) -> offset``) names its coordinates; the notations people
write them in do not.  Each importer here takes the names (and sizes) from the caller, normally from the layout
on the other side of the comparison:

* ``cute_map``: CuTe's ``shape:stride`` (printed form or ``Layout<Shape<...>, Stride<...>>``), one top-level
  mode per coordinate, the coordinate split colexicographically over its mode (CuTe's ``L(c0, c1, ...)``);
  the output is the offset CuTe gives, its box the layout's cosize;
* ``index_map``: index code over the coordinate names (``verify.formula.index``), defining each output, reading
  the family's parameters by name;
* ``bases_map``: Triton's linear layout of a buffer, ``#ttg.shared_linear<{offset = [[c0, c1, ...], ...]}>``
  (or just ``offset = [[...], ...]``): bit k of the offset is at the coordinates of basis k; the map is its
  inverse over GF(2) (the coordinates' extents powers of two, the bases a basis).

Bad text is one ``NotationError`` at its line and column.
"""
from __future__ import annotations

import re
from typing import Mapping, Sequence

from ...formula import Case, Definition, Expr, Formula, FormulaError, Num, Var, walk
from ..dims import Dim
from ..family import Param, substitute
from ..named import FormulaMap, formula_map
from ..shared import mode_offset, op
from .cute_layout import flatten
from .cute_parse import parse_cute
from .errors import NotationError, Positions, decode_source
from .triton_shared import _gf2_inverse, _pow2, _xor_expr

_BASES = re.compile(r"offset\s*=\s*\[")


def _names(rank: int, names: Sequence[str] | None, source: str) -> list[str]:
    if names is None:
        return ["row", "col"] if rank == 2 else [f"c{k}" for k in range(rank)]
    if len(names) != rank:
        raise NotationError(f"the layout has {rank} top-level mode(s), one per coordinate; the other side has "
                            f"{len(names)} coordinate(s) ({', '.join(names)})", 1, 1, source)
    return list(names)


def match_modes(sizes: Sequence[int], dims: Sequence[Dim], source: str = "argument") -> list[str]:
    """Names for modes of ``sizes`` (in order) from the coordinates ``dims``, where their numbers differ: the one
    order-preserving match of equal extents.  Fewer modes: each is a coordinate (the others are the other side's,
    a writer's copies); more modes: each coordinate is a mode, the modes left over are named ``broadcast``,
    ``broadcast1``... (a reader must not depend on them: ``consistent`` proves it).  ``NotationError`` when no
    such match exists or several do."""
    few, many = (list(sizes), [d.at() for d in dims]) if len(sizes) < len(dims) else \
        ([d.at() for d in dims], list(sizes))  # (concrete extents: cute_map passes no others)
    found: list[tuple[int, ...]] = []

    def walk_(i: int, j: int, picked: tuple[int, ...]) -> None:
        if len(found) > 1:
            return
        if i == len(few):
            found.append(picked)
            return
        for k in range(j, len(many) - (len(few) - i) + 1):
            if many[k] == few[i]:
                walk_(i + 1, k + 1, picked + (k,))

    walk_(0, 0, ())
    have = ", ".join(f"{d.name}:{d.size}" for d in dims)
    if len(found) != 1:
        why = "no" if not found else "more than one"
        raise NotationError(f"the layout has {len(sizes)} top-level mode(s) of extents {tuple(sizes)}, the other side "
                            f"{len(dims)} coordinate(s) ({have}): {why} way to match them by extent in order", 1, 1,
                            source)
    if len(sizes) < len(dims):
        return [dims[k].name for k in found[0]]
    taken = {d.name for d in dims}
    out: list[str] = []
    spare = 0
    for k in range(len(sizes)):
        if k in found[0]:
            out.append(dims[found[0].index(k)].name)
            continue
        name = "broadcast" if spare == 0 else f"broadcast{spare}"
        while name in taken:
            spare += 1
            name = f"broadcast{spare}"
        taken.add(name)
        spare += 1
        out.append(name)
    return out


def cute_map(text: str | bytes, names: Sequence[str] | None = None, out: str = "offset",
             source: str = "argument", dims: Sequence[Dim] | None = None) -> FormulaMap:
    """A CuTe ``shape:stride`` as ``(names...) -> out``: coordinate k runs over top-level mode k.  ``dims``: the
    other side's coordinates with their extents, in place of ``names``: as many modes as coordinates take their
    names in order, another number of modes is matched to them by extent (``match_modes``)."""
    cl = parse_cute(text, source)
    shape = cl.shape if isinstance(cl.shape, tuple) else (cl.shape,)
    stride = cl.stride if isinstance(cl.stride, tuple) else (cl.stride,)
    if dims is not None and len(dims) != len(shape) and all(isinstance(d.size, int) for d in dims):
        sizes = []
        for s_ in shape:
            size = 1
            for x in flatten(s_):
                size *= x
            sizes.append(size)
        names = match_modes(sizes, dims, source)
    elif dims is not None:
        names = [d.name for d in dims]
    ns = _names(len(shape), names, source)
    expr: Expr = Num(0)
    dims = []
    for name, s, d in zip(ns, shape, stride):
        sh, st = list(flatten(s)), list(flatten(d))
        expr = op(expr, "+", mode_offset(Var(name), sh, st))
        size = 1
        for x in sh:
            size *= x
        dims.append(Dim(name, size))
    f = Formula((Definition(out, (Case(expr, None),)),), "x")
    return FormulaMap(f, tuple(dims), (Dim(out, max(1, cl.cosize())),))


def index_map(text: str | bytes, inputs: tuple[Dim, ...], outputs: tuple[Dim, ...],
              source: str = "argument", params: tuple[Param, ...] = (),
              values: Mapping[str, int] | None = None) -> FormulaMap:
    """Index code (``verify.formula.index``) over the names of ``inputs`` defining every name of ``outputs``.
    It may read the parameters ``params`` (a family's, on the other side) by name: one bound in ``values``
    reads its value, any other makes the map a family over it (the decision then holds for every value)."""
    return read_params(_index_map(text, inputs, outputs, source, params, values), values or {})


def index_reads(text: str | bytes, inputs: tuple[Dim, ...], outputs: tuple[Dim, ...], source: str = "argument",
                params: tuple[Param, ...] = (), values: Mapping[str, int] | None = None) -> tuple[str, ...]:
    """The names of ``values`` that ``index_map``'s code reads (``layout.params``: they are its side's)."""
    from ..params import reads
    return reads(_index_map(text, inputs, outputs, source, params, values).formula, values or {})


def _index_map(text: str | bytes, inputs: tuple[Dim, ...], outputs: tuple[Dim, ...], source: str,
               params: tuple[Param, ...], values: Mapping[str, int] | None) -> FormulaMap:
    """``index_map`` before its parameters are read (the parse is memoised)."""
    src = decode_source(text, source, limit=1 << 20)
    given = tuple(Param(k, (v,)) for k, v in (values or {}).items() if k not in {p.name for p in params})
    try:
        return formula_map(src, inputs, outputs, tuple(params) + given, index_code=True)
    except FormulaError as e:
        raise NotationError(e.message, e.line, e.col, source) from None


def read_params(m: FormulaMap, values: Mapping[str, int]) -> FormulaMap:
    """``m`` over only the parameters its formula reads, those in ``values`` bound to their values."""
    read = {n.name for d in m.formula.definitions for n in walk(d) if isinstance(n, Var)}
    keep = tuple(p for p in m.params if p.name in read and p.name not in values)
    bound = {k: v for k, v in values.items() if k in read}
    formula = substitute(m.formula, bound) if bound else m.formula
    return FormulaMap(formula, m.inputs, m.outputs, params=keep)


def _int_list(text: str, k: int, pos: Positions, source: str) -> tuple[list[list[int]], int]:
    """``[[a, b, ...], ...]`` from ``text[k]`` (the opening bracket): the bases and the index after them."""
    out: list[list[int]] = []
    num = re.compile(r"\s*(\d{1,9})\s*")

    def fail(at: int, msg: str) -> NotationError:
        return NotationError(msg, *pos.at(min(at, len(text))), source)

    k += 1
    while True:
        while k < len(text) and text[k].isspace():
            k += 1
        if k < len(text) and text[k] == "]":
            return out, k + 1
        if k >= len(text) or text[k] != "[":
            raise fail(k, "expected [ (a basis: one non-negative integer per coordinate)")
        k += 1
        vec: list[int] = []
        while True:
            m = num.match(text, k)
            if not m:
                raise fail(k, "expected a non-negative integer")
            vec.append(int(m.group(1)))
            k = m.end()
            if k < len(text) and text[k] == ",":
                k += 1
                continue
            if k < len(text) and text[k] == "]":
                k += 1
                break
            raise fail(k, "expected , or ] in a basis")
        out.append(vec)
        if len(out) > 40:
            raise fail(k, "more than 40 offset bases")
        while k < len(text) and text[k].isspace():
            k += 1
        if k < len(text) and text[k] == ",":
            k += 1


def bases_map(text: str | bytes, inputs: tuple[Dim, ...], out: str = "offset", source: str = "argument") -> FormulaMap:
    """Triton offset bases (module docstring) as ``(inputs...) -> out``, the inverse of offset -> coordinates."""
    src = decode_source(text, source, limit=1 << 20)
    pos = Positions(src)
    m = _BASES.search(src)
    if m is None:
        raise NotationError("no offset bases (#ttg.shared_linear<{offset = [[...], ...]}>)", 1, 1, source)
    bases, _ = _int_list(src, m.end() - 1, pos, source)
    where = pos.at(m.start())
    sizes = [int(d.at()) for d in inputs]
    for d, n in zip(inputs, sizes):
        if not _pow2(n):
            raise NotationError(f"coordinate {d.name} runs over {n} values: a linear layout spans powers of two",
                                *where, source)
    bits = [n.bit_length() - 1 for n in sizes]
    total = sum(bits)
    for b in bases:
        if len(b) != len(inputs):
            raise NotationError(f"basis {b} has {len(b)} coordinate(s); the layout has {len(inputs)} "
                                f"({', '.join(d.name for d in inputs)})", *where, source)
        for d, n, x in zip(inputs, sizes, b):
            if x >= n:
                raise NotationError(f"basis {b}: {d.name} = {x} is outside 0..{n - 1}", *where, source)
    if len(bases) != total:
        raise NotationError(f"{len(bases)} offset bases cannot cover {' x '.join(map(str, sizes))} coordinates exactly "
                            f"once ({total} needed)", *where, source)
    shift = [sum(bits[k + 1:]) for k in range(len(bits))]  # the first coordinate's bits highest
    cols = [sum(x << s for x, s in zip(b, shift)) for b in bases]
    inv = _gf2_inverse(cols, total)
    if inv is None:
        raise NotationError("the offset bases are not linearly independent: two offsets share coordinates", *where,
                            source)
    terms = []
    for j in range(total):  # coordinate bit j of the packed coordinates
        k = next(i for i in range(len(bits)) if shift[i] <= j < shift[i] + bits[i])
        val = sum(1 << r for r in range(total) if inv[r] >> j & 1)
        terms.append((Var(inputs[k].name), j - shift[k], val))
    f = Formula((Definition(out, (Case(_xor_expr(terms), None),)),), "x")
    return FormulaMap(f, tuple(inputs), (Dim(out, 1 << total),))


__all__ = ["bases_map", "cute_map", "index_map", "match_modes", "read_params"]
