"""An algebra of layout maps: new maps from old, over any map, never over formula text.

Every operation takes ``NamedMap``s (``verify.layout.named``) and returns one, built from the
operands' three faces (so it works for every notation and kind: fragments, shared-memory offsets,
Tensor Memory, tables), and states its preconditions (checked: ``ValueError``) and postconditions
(what the result is, pointwise).  Sizes are integers or expressions over a family's parameters.

=============  =================================================================================
``compose``    ``outer`` after ``inner``: inner's outputs feed outer's inputs of the same names
``product``    ``b`` tiles ``a``: shared outputs become ``a + size_a * b`` (a minor), inputs concatenate
``bind``       a family's parameters given values (one member)
``inverse``    the inverse of a bijection, as a table read by the enumeration engine
``identity``   each input to the output of the same name
``iota``       one input to one output, ``out = stride * in``
=============  =================================================================================

The operations that reshape one map's dimensions (merge, split, restrict, fix, embed, relabel) are in
``verify.layout.reshape``. The comparisons (equal, permuted, replicated, tiled) decide properties and so use
the engines: they are in ``verify.checks``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Hashable, Mapping

import numpy as np

from ..engines import smt
from ..formula import BinOp, Num, Var
from .dims import Dim, describe, find, names, unique
from .family import Extent, Param, extent_at
from .named import (Env, NamedMap, TableMap, Values, box_bound, computed_once, evaluate_all, extent_term,
                    first_repeat, full, in_box, inside, max_extent, merge_params)

if TYPE_CHECKING:  # pragma: no cover
    import z3


def _times(a: Extent, b: Extent) -> Extent:
    """``a * b`` as an extent (an int when both are)."""
    if isinstance(a, int) and isinstance(b, int):
        return a * b
    if a == 1:
        return b
    if b == 1:
        return a
    return BinOp("*", a if not isinstance(a, int) else Num(a), b if not isinstance(b, int) else Num(b))


def _size_value(x: Extent, env: Mapping[str, Any] | None) -> Any:
    """An extent at ``env`` (ints) for numpy and Python points."""
    return extent_at(x, dict(env or {}))


def _width_of(point: Mapping[str, "z3.ExprRef"]) -> int:
    return next(iter(point.values())).size()


# ----------------------------------------------------------------------------- compose

@dataclass(frozen=True)
class Compose:
    """``outer`` after ``inner`` (build with ``compose``)."""

    outer: Any
    inner: Any

    @property
    def inputs(self) -> tuple[Dim, ...]:
        return self.inner.inputs

    @property
    def outputs(self) -> tuple[Dim, ...]:
        return self.outer.outputs

    @property
    def params(self) -> tuple[Param, ...]:
        return merge_params(self.inner.params, self.outer.params)

    def key(self) -> Hashable:
        return ("compose", self.outer.key(), self.inner.key())

    @computed_once
    def bound(self) -> int:
        return max(self.outer.bound(), self.inner.bound())

    def evaluate(self, point: Mapping[str, np.ndarray], env: Env | None = None) -> Values:
        v = self.inner.evaluate(point, env)
        mid = {d.name: v.out[d.name] for d in self.outer.inputs}
        good = v.ok & inside(mid, self.outer.inputs, env)
        w = self.outer.evaluate({k: np.where(good, a, 0) for k, a in mid.items()}, env)
        return full(Values(dict(w.out), good & w.ok))

    def at(self, point: Mapping[str, int], env: Env | None = None) -> dict[str, int] | None:
        y = self.inner.at(point, env)
        if y is None:
            return None
        mid = {d.name: y[d.name] for d in self.outer.inputs}
        if not all(0 <= mid[d.name] < d.at(env) for d in self.outer.inputs):
            return None
        return self.outer.at(mid, env)

    def encode(self, point: Mapping[str, "z3.ExprRef"],
               env: Mapping[str, "z3.ExprRef"] | None = None) -> tuple["z3.BoolRef", dict[str, "z3.ExprRef"]]:
        import z3
        ok1, y = self.inner.encode(point, env)
        mid = {d.name: y[d.name] for d in self.outer.inputs}
        ok2, z = self.outer.encode(mid, env)
        return z3.And(ok1, in_box(mid, self.outer.inputs, env, _width_of(point)), ok2), z


def compose(outer: NamedMap, inner: NamedMap) -> Compose:
    """``outer`` after ``inner``.

    Pre: every input of ``outer`` is an output of ``inner`` (by name); a parameter shared by both has the
    same values.  Post: inputs are ``inner``'s, outputs ``outer``'s; at a point x the result is
    ``outer(inner(x))``, defined where ``inner`` is defined at x, ``inner(x)`` lies in ``outer``'s input
    box, and ``outer`` is defined there.  Outputs of ``inner`` that ``outer`` does not read are dropped.
    """
    missing = [d.name for d in outer.inputs if d.name not in names(inner.outputs)]
    if missing:
        raise ValueError(f"compose: the outer map reads {', '.join(missing)}, which the inner map "
                         f"{describe(inner.outputs)} does not produce")
    merge_params(inner.params, outer.params)
    return Compose(outer, inner)


# ----------------------------------------------------------------------------- product

@dataclass(frozen=True)
class Product:
    """``b`` tiles ``a`` (build with ``product``)."""

    a: Any
    b: Any

    @property
    def inputs(self) -> tuple[Dim, ...]:
        return tuple(self.a.inputs) + tuple(self.b.inputs)

    @property
    def outputs(self) -> tuple[Dim, ...]:
        a_out = {d.name: d for d in self.a.outputs}
        b_out = {d.name: d for d in self.b.outputs}
        out = [Dim(n, _times(d.size, b_out[n].size)) if n in b_out else d for n, d in a_out.items()]
        return tuple(out) + tuple(d for n, d in b_out.items() if n not in a_out)

    @property
    def params(self) -> tuple[Param, ...]:
        return merge_params(self.a.params, self.b.params)

    def key(self) -> Hashable:
        return ("product", self.a.key(), self.b.key())

    @computed_once
    def bound(self) -> int:
        ps = self.params
        sizes = max([max_extent(d.size, ps) for d in self.a.outputs] + [1])
        return max(self.a.bound(), self.b.bound(), sizes * (self.b.bound() + 1) + self.a.bound(),
                   box_bound(self.outputs, ps))

    def _shared(self) -> list[str]:
        return [d.name for d in self.a.outputs if d.name in names(self.b.outputs)]

    def evaluate(self, point: Mapping[str, np.ndarray], env: Env | None = None) -> Values:
        va = self.a.evaluate({d.name: point[d.name] for d in self.a.inputs}, env)
        vb = self.b.evaluate({d.name: point[d.name] for d in self.b.inputs}, env)
        out = dict(va.out)
        for n, arr in vb.out.items():
            out[n] = out[n] + _size_value(find(self.a.outputs, n).size, env) * arr if n in out else arr
        return full(Values(out, va.ok & vb.ok))

    def at(self, point: Mapping[str, int], env: Env | None = None) -> dict[str, int] | None:
        ya = self.a.at({d.name: point[d.name] for d in self.a.inputs}, env)
        yb = self.b.at({d.name: point[d.name] for d in self.b.inputs}, env)
        if ya is None or yb is None:
            return None
        out = dict(ya)
        for n, v in yb.items():
            out[n] = out[n] + _size_value(find(self.a.outputs, n).size, env) * v if n in out else v
        return out

    def encode(self, point: Mapping[str, "z3.ExprRef"],
               env: Mapping[str, "z3.ExprRef"] | None = None) -> tuple["z3.BoolRef", dict[str, "z3.ExprRef"]]:
        import z3
        w = _width_of(point)
        oka, ya = self.a.encode({d.name: point[d.name] for d in self.a.inputs}, env)
        okb, yb = self.b.encode({d.name: point[d.name] for d in self.b.inputs}, env)
        out = dict(ya)
        for n, v in yb.items():
            out[n] = out[n] + extent_term(find(self.a.outputs, n).size, env, w) * v if n in out else v
        return z3.And(oka, okb), out


def product(a: NamedMap, b: NamedMap) -> Product:
    """``b`` tiles ``a``: Triton's ``a * b``, CuTe's blocked product with ``a`` the tile.

    Pre: ``a`` and ``b`` have no input name in common.  Post: inputs are ``a``'s then ``b``'s; an output
    that both have is ``a_out + size_a(out) * b_out`` with size ``size_a * size_b``; an output of only one
    side passes through.  Defined where both are.  If ``a`` and ``b`` are bijections onto their output
    boxes, so is the product (onto the product box).
    """
    unique(tuple(a.inputs) + tuple(b.inputs), "product: inputs of the two maps")
    merge_params(a.params, b.params)
    return Product(a, b)


# ----------------------------------------------------------------------------- parameters

@dataclass(frozen=True)
class Bind:
    """``base`` with parameters given values (build with ``bind``)."""

    base: Any
    env: tuple[tuple[str, int], ...]

    @property
    def inputs(self) -> tuple[Dim, ...]:
        e = dict(self.env)
        return tuple(Dim(d.name, _bound_size(d, e)) for d in self.base.inputs)

    @property
    def outputs(self) -> tuple[Dim, ...]:
        e = dict(self.env)
        return tuple(Dim(d.name, _bound_size(d, e)) for d in self.base.outputs)

    @property
    def params(self) -> tuple[Param, ...]:
        e = dict(self.env)
        return tuple(p for p in self.base.params if p.name not in e)

    def key(self) -> Hashable:
        return ("bind", self.base.key(), self.env)

    @computed_once
    def bound(self) -> int:
        return self.base.bound()

    def evaluate(self, point: Mapping[str, np.ndarray], env: Env | None = None) -> Values:
        return self.base.evaluate(point, {**dict(env or {}), **dict(self.env)})

    def at(self, point: Mapping[str, int], env: Env | None = None) -> dict[str, int] | None:
        return self.base.at(point, {**dict(env or {}), **dict(self.env)})

    def encode(self, point: Mapping[str, "z3.ExprRef"],
               env: Mapping[str, "z3.ExprRef"] | None = None) -> tuple["z3.BoolRef", dict[str, "z3.ExprRef"]]:
        w = _width_of(point)
        return self.base.encode(point, {**dict(env or {}), **{k: smt.bv(v, w) for k, v in self.env}})


def _bound_size(d: Dim, env: Mapping[str, int]) -> Extent:
    """``d``'s size with the bound parameters replaced by their values: an integer when nothing else is left,
    else an expression over the parameters still free."""
    if _only(d.size, env):
        return d.at(env)
    from ..formula import replace_node, walk
    out: Any = d.size
    for n in list(walk(d.size)):
        if isinstance(n, Var) and n.name in env:
            out = replace_node(out, n, Num(env[n.name], n.pos))
    return out


def _only(x: Extent, env: Mapping[str, int]) -> bool:
    """``x`` is fixed once ``env`` is bound."""
    from ..formula import walk
    if isinstance(x, int):
        return True
    return all(not isinstance(n, Var) or n.name in env for n in walk(x))


def bind(base: NamedMap, **env: int) -> Bind:
    """One member of a family: parameters given values (``bind(wgmma_d, N=24)``).

    Pre: each name is a parameter of ``base`` and each value one of its values.  Post: those parameters
    are gone; sizes that depended only on them are integers, sizes over free parameters too have the bound
    values substituted; the map is ``base`` at that binding.
    """
    params = {p.name: p for p in base.params}
    for k, v in env.items():
        if k not in params:
            known = ", ".join(params) or "none"
            raise ValueError(f"bind: {k!r} is not a parameter of the map (its parameters: {known})")
        if v not in params[k].values:
            raise ValueError(f"bind: {k} = {v} is not one of its values ({params[k].describe()})")
    return Bind(base, tuple(sorted(env.items())))


# ----------------------------------------------------------------------------- basic maps

@dataclass(frozen=True)
class Affine:
    """Each output is a sum of ``stride * input`` (build with ``identity`` or ``iota``)."""

    inputs: tuple[Dim, ...]
    outputs: tuple[Dim, ...]
    terms: tuple[tuple[str, tuple[tuple[str, int], ...]], ...]  # output -> ((input, stride), ...)
    params: tuple[Param, ...] = ()

    def key(self) -> Hashable:
        return ("affine", self.inputs, self.outputs, self.terms)

    @computed_once
    def bound(self) -> int:
        worst = 0
        for _, ts in self.terms:
            worst = max(worst, sum(abs(s) * max_extent(find(self.inputs, n).size, self.params) for n, s in ts))
        return max(worst, box_bound(self.inputs, self.params), box_bound(self.outputs, self.params))

    def _apply(self, point: Mapping[str, Any], w: int = 0) -> dict[str, Any]:
        out = {}
        for o, ts in self.terms:
            v: Any = smt.bv(0, w) if w else 0
            for n, s in ts:
                v = v + point[n] * (smt.bv(s, w) if w else s)
            out[o] = v
        return out

    def evaluate(self, point: Mapping[str, np.ndarray], env: Env | None = None) -> Values:
        out = {k: np.asarray(v, np.int64) for k, v in self._apply(point).items()}
        shape = np.broadcast_shapes(*(np.shape(point[d.name]) for d in self.inputs))
        return full(Values(out, np.ones(shape, bool)))

    def at(self, point: Mapping[str, int], env: Env | None = None) -> dict[str, int] | None:
        return {k: int(v) for k, v in self._apply(point).items()}

    def encode(self, point: Mapping[str, "z3.ExprRef"],
               env: Mapping[str, "z3.ExprRef"] | None = None) -> tuple["z3.BoolRef", dict[str, "z3.ExprRef"]]:
        import z3
        return z3.BoolVal(True), self._apply(point, _width_of(point))


def identity(*dims: Dim) -> Affine:
    """Each input to the output of the same name and size (a bijection)."""
    dims = unique(dims, "identity")
    return Affine(dims, dims, tuple((d.name, ((d.name, 1),)) for d in dims))


def iota(source: Dim, target: str, stride: int = 1, params: tuple[Param, ...] = ()) -> Affine:
    """One input to one output: ``target = stride * source``, of size ``stride * (size(source) - 1) + 1``
    (its span).  ``params``: the parameters ``source``'s size is written in.  Tiled by ``product``,
    ``iota(Dim("warp", 4), "row")`` stacks four warps' fragments along rows."""
    size = source.size if stride == 1 else (stride * (source.size - 1) + 1 if isinstance(source.size, int) else
                                           BinOp("+", BinOp("*", Num(stride), BinOp("-", source.size, Num(1))), Num(1)))
    return Affine((source,), (Dim(target, size),), ((target, ((source.name, stride),)),), params)


def inverse(base: NamedMap) -> TableMap:
    """The inverse of a bijection, read from the enumeration engine as a table.

    Pre: ``base`` has no parameters (bind a member first), is defined at every input point, lands inside
    its output box and is injective (checked here on every point; ``ValueError`` names the first point
    that breaks it).  Post: a ``TableMap`` from ``base``'s outputs to its inputs with
    ``inverse(base)(base(x)) = x`` for every x; output points that ``base`` does not reach (it was not
    surjective) are undefined.  Z3 reads the table as data, so a proof that uses the inverse rests on the
    enumeration that built it (``verify.checks.maps`` confirms tables it is given with Z3).
    """
    if base.params:
        raise ValueError("inverse: bind the family's parameters first (a table has fixed sizes)")
    v = evaluate_all(base)
    shape = v.ok.shape
    ok = np.asarray(v.ok, bool).reshape(-1)
    if not ok.all():
        k = int(np.flatnonzero(~ok)[0])
        raise ValueError(f"inverse: the map is undefined at {_point_text(base.inputs, shape, k)}")
    outs = [np.asarray(v.out[d.name]).reshape(-1) for d in base.outputs]
    inb = inside({d.name: o for d, o in zip(base.outputs, outs)}, base.outputs)
    if not inb.all():
        k = int(np.flatnonzero(~inb)[0])
        raise ValueError(f"inverse: the map leaves its output box at {_point_text(base.inputs, shape, k)}")
    keys: Any = 0
    size = 1  # the output box's points
    for d, o in zip(base.outputs, outs):
        keys = keys * int(d.at()) + o
        size *= int(d.at())
    flat = np.broadcast_to(np.asarray(keys, np.int64), ok.shape)  # each point's output, as a row-major index
    repeat = first_repeat(flat)
    if repeat is not None:
        earlier, k = repeat
        raise ValueError(f"inverse: the map is not injective: {_point_text(base.inputs, shape, earlier)} and "
                         f"{_point_text(base.inputs, shape, k)} land on the same point")
    defined, values = np.zeros(size, bool), np.zeros((len(shape), size), np.int64)
    defined[flat] = True
    values[:, flat] = np.unravel_index(np.arange(ok.size), shape)
    return TableMap.from_dense(tuple(Dim(d.name, d.at()) for d in base.outputs),
                               tuple(Dim(d.name, d.at()) for d in base.inputs), values, defined)


def _point_text(dims: tuple[Dim, ...], shape: tuple[int, ...], k: int) -> str:
    idx = np.unravel_index(k, shape)
    return "(" + ", ".join(f"{d.name} {int(x)}" for d, x in zip(dims, idx)) + ")"


__all__ = ["Affine", "Bind", "Compose", "Product", "bind", "compose", "identity", "inverse", "iota", "product"]
