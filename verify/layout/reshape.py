"""One map's dimensions reshaped: the same map's values over inputs merged, split, restricted or fixed, an output
embedded in a larger box, dimensions renamed.  Like ``verify.layout.algebra``'s operations, each takes a
``NamedMap`` and returns one built from its three faces, with its pre- and postconditions stated.

=============  =================================================================================
``merge``      several inputs become one (the first minor): ``i = e + 4 * j``
``split``      one input becomes several (the inverse of ``merge``): ``thread -> (lane, warp)``
``restrict``   an input limited to ``start .. start + size - 1`` and renumbered from 0
``fix``        an input held at one value and removed
``relabel``    dimensions renamed
``embed``      an output placed at an offset inside a larger output box
=============  =================================================================================
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Hashable, Mapping, Sequence

import numpy as np

from ..engines import smt
from .algebra import _size_value, _times, _width_of
from .dims import Dim, describe, find, names, unique
from .family import Extent, Param, extent_at, extent_text
from .named import Env, NamedMap, Values, bindings, box_bound, computed_once, extent_term

if TYPE_CHECKING:  # pragma: no cover
    import z3


# ----------------------------------------------------------------------------- what the operations share

class _ThroughPoint:
    """An operation that renames the point and asks its base map: the three faces read ``base`` at
    ``_point(point, env, z3_w)`` (Merge's merged input is non-negative inside the box, where C and floor
    division agree, so the Z3 face divides as the others do)."""

    base: Any

    def _point(self, point: Mapping[str, Any], env: Any, z3_w: int = 0) -> dict[str, Any]:
        raise NotImplementedError

    def evaluate(self, point: Mapping[str, np.ndarray], env: Env | None = None) -> Values:
        return self.base.evaluate(self._point(point, env), env)

    def at(self, point: Mapping[str, int], env: Env | None = None) -> dict[str, int] | None:
        return self.base.at(self._point(point, env), env)

    def encode(self, point: Mapping[str, "z3.ExprRef"],
               env: Mapping[str, "z3.ExprRef"] | None = None) -> tuple["z3.BoolRef", dict[str, "z3.ExprRef"]]:
        return self.base.encode(self._point(point, env, _width_of(point)), env)


class _SameOutputs:
    """An operation whose outputs are its base map's."""

    base: Any

    @property
    def outputs(self) -> tuple[Dim, ...]:
        return self.base.outputs


class _SameParams:
    """An operation whose parameters are its base map's."""

    base: Any

    @property
    def params(self) -> tuple[Param, ...]:
        return self.base.params


# ----------------------------------------------------------------------------- reshaping inputs

@dataclass(frozen=True)
class Merge(_ThroughPoint, _SameOutputs, _SameParams):
    """Inputs ``parts`` of ``base`` read from one input ``into`` (build with ``merge``)."""

    base: Any
    parts: tuple[str, ...]
    into: str

    def _dims(self) -> list[Dim]:
        return [find(self.base.inputs, p) for p in self.parts]

    @property
    def inputs(self) -> tuple[Dim, ...]:
        size: Extent = 1
        for d in self._dims():
            size = _times(size, d.size)
        out, placed = [], False
        for d in self.base.inputs:
            if d.name in self.parts:
                if not placed:
                    out.append(Dim(self.into, size))
                    placed = True
            else:
                out.append(d)
        return tuple(out)

    def key(self) -> Hashable:
        return ("merge", self.base.key(), self.parts, self.into)

    @computed_once
    def bound(self) -> int:
        return max(self.base.bound(), box_bound(self.inputs, self.params))

    def _spread(self, x: Any, env: Any, *, z3_w: int = 0) -> dict[str, Any]:
        out = {}
        for d in self._dims():
            size = extent_term(d.size, env, z3_w) if z3_w else _size_value(d.size, env)
            out[d.name] = x % size
            x = x / size if z3_w else x // size
        return out

    def _point(self, point: Mapping[str, Any], env: Any, z3_w: int = 0) -> dict[str, Any]:
        pt = {k: v for k, v in point.items() if k != self.into}
        pt.update(self._spread(point[self.into], env, z3_w=z3_w))
        return pt



def merge(base: NamedMap, parts: Sequence[str], into: str) -> Merge:
    """Inputs ``parts`` (the first minor) read from one new input ``into`` of their sizes' product.

    Pre: every part is an input of ``base``; ``into`` is not another input's name.  Post: the new input
    takes the place of the first part; the result at ``into = x`` is ``base`` at ``parts[0] = x % s0``,
    ``parts[1] = (x / s0) % s1``, ...  (``merge(m, ("e", "j"), "i")``: ``i = e + size_e * j``).  A
    bijection stays a bijection.
    """
    parts = tuple(parts)
    if len(parts) < 1:
        raise ValueError("merge: give at least one input")
    for p in parts:
        find(base.inputs, p) if p in names(base.inputs) else _missing("merge", p, base.inputs)
    if into in names(base.inputs) and into not in parts:
        raise ValueError(f"merge: {into!r} is already an input")
    unique([Dim(p, 1) for p in parts], "merge: parts")
    return Merge(base, parts, into)


def _missing(op: str, name: str, dims: tuple[Dim, ...]) -> None:
    raise ValueError(f"{op}: {name!r} is not an input of the map {describe(dims)}")


@dataclass(frozen=True)
class Split(_ThroughPoint, _SameOutputs, _SameParams):
    """Input ``dim`` of ``base`` read from several new inputs (build with ``split``)."""

    base: Any
    dim: str
    into: tuple[tuple[str, Extent], ...]

    @property
    def inputs(self) -> tuple[Dim, ...]:
        out: list[Dim] = []
        for d in self.base.inputs:
            out.extend(Dim(n, s) for n, s in self.into) if d.name == self.dim else out.append(d)
        return tuple(out)

    def key(self) -> Hashable:
        return ("split", self.base.key(), self.dim, self.into)

    @computed_once
    def bound(self) -> int:
        return max(self.base.bound(), box_bound(self.base.inputs, self.params))

    def _point(self, point: Mapping[str, Any], env: Any, z3_w: int = 0) -> dict[str, Any]:
        pt = {k: v for k, v in point.items() if k not in dict(self.into)}
        x: Any = 0
        scale: Any = 1
        for n, s in self.into:
            x = x + point[n] * scale
            size = extent_term(s, env, z3_w) if z3_w else _size_value(s, env)
            scale = scale * size
        pt[self.dim] = x
        return pt



def split(base: NamedMap, dim: str, into: Sequence[tuple[str, Extent]]) -> Split:
    """Input ``dim`` read from new inputs ``into`` = ((name, size), ...), the first minor:
    ``dim = n0 + s0 * (n1 + s1 * ...)`` (``split(m, "thread", [("lane", 32), ("warp", 4)])``).

    Pre: ``dim`` is an input; the sizes multiply to its size (checked for every parameter value); the new
    names are not other inputs.  Post: the new inputs take ``dim``'s place, in the order given; the result
    at (n0, n1, ...) is ``base`` at ``dim = n0 + s0 * n1 + ...``.  The inverse of ``merge``.
    """
    into = tuple((n, s) for n, s in into)
    if dim not in names(base.inputs):
        _missing("split", dim, base.inputs)
    d = find(base.inputs, dim)
    for env in bindings(base):
        total = 1
        for _, s in into:
            total *= extent_at(s, env)
        if total != d.at(env):
            raise ValueError(f"split: {' x '.join(extent_text(s) for _, s in into)} = {total} is not the size of "
                             f"{dim} ({d.at(env)})")
    others = [x for x in names(base.inputs) if x != dim]
    unique([Dim(n, 1) for n, _ in into] + [Dim(n, 1) for n in others], "split: inputs")
    return Split(base, dim, into)


@dataclass(frozen=True)
class Restrict(_SameOutputs, _SameParams):
    """Input ``dim`` of ``base`` limited to ``start .. start + size - 1`` (build with ``restrict``)."""

    base: Any
    dim: str
    start: int
    size: Extent

    @property
    def inputs(self) -> tuple[Dim, ...]:
        return tuple(Dim(d.name, self.size) if d.name == self.dim else d for d in self.base.inputs)

    def key(self) -> Hashable:
        return ("restrict", self.base.key(), self.dim, self.start, self.size)

    @computed_once
    def bound(self) -> int:
        return max(self.base.bound(), self.start + box_bound(self.inputs, self.params))

    def _point(self, point: Mapping[str, Any], w: int = 0) -> dict[str, Any]:
        pt = dict(point)
        pt[self.dim] = point[self.dim] + (smt.bv(self.start, w) if w else self.start)
        return pt

    def evaluate(self, point: Mapping[str, np.ndarray], env: Env | None = None) -> Values:
        return self.base.evaluate(self._point(point), env)

    def at(self, point: Mapping[str, int], env: Env | None = None) -> dict[str, int] | None:
        return self.base.at(self._point(point), env)

    def encode(self, point: Mapping[str, "z3.ExprRef"],
               env: Mapping[str, "z3.ExprRef"] | None = None) -> tuple["z3.BoolRef", dict[str, "z3.ExprRef"]]:
        return self.base.encode(self._point(point, _width_of(point)), env)


def restrict(base: NamedMap, dim: str, start: int, size: Extent) -> Restrict:
    """Input ``dim`` limited to ``start .. start + size - 1`` and renumbered from 0 (a sub-domain).

    Pre: ``dim`` is an input; ``0 <= start`` and ``start + size <= size(dim)`` for every parameter value.
    Post: the result at ``dim = x`` is ``base`` at ``dim = start + x``; other inputs unchanged.
    """
    if dim not in names(base.inputs):
        _missing("restrict", dim, base.inputs)
    d = find(base.inputs, dim)
    for env in bindings(base):
        if start < 0 or extent_at(size, env) < 1 or start + extent_at(size, env) > d.at(env):
            raise ValueError(f"restrict: {start} .. {start} + {extent_text(size)} - 1 is not inside {d}")
    return Restrict(base, dim, start, size)


@dataclass(frozen=True)
class Fix(_SameOutputs, _SameParams):
    """Input ``dim`` of ``base`` held at ``value`` (build with ``fix``)."""

    base: Any
    dim: str
    value: int

    @property
    def inputs(self) -> tuple[Dim, ...]:
        return tuple(d for d in self.base.inputs if d.name != self.dim)

    def key(self) -> Hashable:
        return ("fix", self.base.key(), self.dim, self.value)

    @computed_once
    def bound(self) -> int:
        return self.base.bound()

    def evaluate(self, point: Mapping[str, np.ndarray], env: Env | None = None) -> Values:
        return self.base.evaluate({**point, self.dim: np.asarray(self.value, np.int64)}, env)

    def at(self, point: Mapping[str, int], env: Env | None = None) -> dict[str, int] | None:
        return self.base.at({**point, self.dim: self.value}, env)

    def encode(self, point: Mapping[str, "z3.ExprRef"],
               env: Mapping[str, "z3.ExprRef"] | None = None) -> tuple["z3.BoolRef", dict[str, "z3.ExprRef"]]:
        w = _width_of(point) if point else smt.width_for(self.bound())
        return self.base.encode({**point, self.dim: smt.bv(self.value, w)}, env)


def fix(base: NamedMap, dim: str, value: int) -> Fix:
    """Input ``dim`` held at ``value`` and removed (warp 2's part of a block tile).

    Pre: ``dim`` is an input, ``0 <= value < size(dim)`` for every parameter value, and another input
    remains.  Post: the other inputs, in order; the result at x is ``base`` at (x, dim = value).
    """
    if dim not in names(base.inputs):
        _missing("fix", dim, base.inputs)
    if len(base.inputs) < 2:
        raise ValueError("fix: the map would have no input left")
    d = find(base.inputs, dim)
    for env in bindings(base):
        if not 0 <= value < d.at(env):
            raise ValueError(f"fix: {dim} = {value} is outside {d}")
    return Fix(base, dim, value)


@dataclass(frozen=True)
class Embed(_SameParams):
    """Output ``dim`` of ``base`` placed at ``offset`` in a box of ``size`` (build with ``embed``)."""

    base: Any
    dim: str
    size: Extent
    offset: int

    @property
    def inputs(self) -> tuple[Dim, ...]:
        return self.base.inputs

    @property
    def outputs(self) -> tuple[Dim, ...]:
        return tuple(Dim(d.name, self.size) if d.name == self.dim else d for d in self.base.outputs)

    def key(self) -> Hashable:
        return ("embed", self.base.key(), self.dim, self.size, self.offset)

    @computed_once
    def bound(self) -> int:
        return max(self.base.bound() + self.offset, box_bound(self.outputs, self.params))

    def evaluate(self, point: Mapping[str, np.ndarray], env: Env | None = None) -> Values:
        v = self.base.evaluate(point, env)
        return Values({**v.out, self.dim: v.out[self.dim] + self.offset}, v.ok)

    def at(self, point: Mapping[str, int], env: Env | None = None) -> dict[str, int] | None:
        y = self.base.at(point, env)
        return None if y is None else {**y, self.dim: y[self.dim] + self.offset}

    def encode(self, point: Mapping[str, "z3.ExprRef"],
               env: Mapping[str, "z3.ExprRef"] | None = None) -> tuple["z3.BoolRef", dict[str, "z3.ExprRef"]]:
        ok, y = self.base.encode(point, env)
        return ok, {**y, self.dim: y[self.dim] + smt.bv(self.offset, _width_of(point))}


def embed(base: NamedMap, dim: str, size: Extent, offset: int = 0) -> Embed:
    """Output ``dim`` moved up by ``offset`` inside a box of ``size`` (a 16-lane Tensor Memory fragment at
    lane 16 of a warp's 32-lane quarter: ``embed(m, "tmem_lane", 32, 16)``).

    Pre: ``dim`` is an output and ``offset + size(dim) <= size`` for every parameter value.  Post: the same
    inputs; ``dim``'s value is ``base``'s plus ``offset``, its size ``size``; other outputs unchanged.
    """
    if dim not in names(base.outputs):
        raise ValueError(f"embed: {dim!r} is not an output of the map {describe(base.outputs)}")
    d = find(base.outputs, dim)
    for env in bindings(base):
        if offset < 0 or offset + d.at(env) > extent_at(size, env):
            raise ValueError(f"embed: {d} at offset {offset} does not fit in {extent_text(size)}")
    return Embed(base, dim, size, offset)


# ----------------------------------------------------------------------------- names

@dataclass(frozen=True)
class Relabel(_SameParams):
    """``base`` with dimensions renamed (build with ``relabel``)."""

    base: Any
    ins: tuple[tuple[str, str], ...]
    outs: tuple[tuple[str, str], ...]

    @property
    def inputs(self) -> tuple[Dim, ...]:
        m = dict(self.ins)
        return tuple(Dim(m.get(d.name, d.name), d.size) for d in self.base.inputs)

    @property
    def outputs(self) -> tuple[Dim, ...]:
        m = dict(self.outs)
        return tuple(Dim(m.get(d.name, d.name), d.size) for d in self.base.outputs)

    def key(self) -> Hashable:
        return ("relabel", self.base.key(), self.ins, self.outs)

    @computed_once
    def bound(self) -> int:
        return self.base.bound()

    def _in(self, point: Mapping[str, Any]) -> dict[str, Any]:
        back = {new: old for old, new in self.ins}
        return {back.get(k, k): v for k, v in point.items()}

    def _out(self, out: Mapping[str, Any]) -> dict[str, Any]:
        m = dict(self.outs)
        return {m.get(k, k): v for k, v in out.items()}

    def evaluate(self, point: Mapping[str, np.ndarray], env: Env | None = None) -> Values:
        v = self.base.evaluate(self._in(point), env)
        return Values(self._out(v.out), v.ok)

    def at(self, point: Mapping[str, int], env: Env | None = None) -> dict[str, int] | None:
        y = self.base.at(self._in(point), env)
        return None if y is None else self._out(y)

    def encode(self, point: Mapping[str, "z3.ExprRef"],
               env: Mapping[str, "z3.ExprRef"] | None = None) -> tuple["z3.BoolRef", dict[str, "z3.ExprRef"]]:
        ok, y = self.base.encode(self._in(point), env)
        return ok, self._out(y)


def relabel(base: NamedMap, inputs: Mapping[str, str] | None = None, outputs: Mapping[str, str] | None = None) -> Relabel:
    """Dimensions renamed (``relabel(m, outputs={"row": "col", "col": "row"})`` is the transpose).

    Pre: every old name exists on its side; the new names on each side are distinct.  Post: the same map,
    dimensions in the same order under their new names.
    """
    inputs, outputs = dict(inputs or {}), dict(outputs or {})
    for side, m, dims in (("input", inputs, base.inputs), ("output", outputs, base.outputs)):
        for old in m:
            if old not in names(dims):
                raise ValueError(f"relabel: {old!r} is not an {side} of the map {describe(dims)}")
        unique([Dim(m.get(d.name, d.name), 1) for d in dims], f"relabel: new {side}s")
    return Relabel(base, tuple(inputs.items()), tuple(outputs.items()))


__all__ = ["Embed", "Fix", "Merge", "Relabel", "Restrict", "Split", "embed", "fix", "merge", "relabel", "restrict",
           "split"]
