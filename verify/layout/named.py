"""Layout maps over named dimensions, with their three faces.

A ``NamedMap`` goes from a product of named input dimensions (``lane``, ``warp``, ``i``, ``offset``,
``row``...) to named outputs, and is read only through three faces that share nothing but the map's
definition:

* ``evaluate(point, env)``: every point at once.  ``point`` binds each input name to an integer array;
  the arrays broadcast against each other (``grid`` gives one axis per input).  The result is a
  ``Values``: one array per output, and ``ok`` (the map is defined there).  The enumeration engine.
* ``at(point, env)``: one point with Python integers, the scalar reference (``None`` where undefined).
* ``encode(point, env)``: ``(defined, {output: term})`` as Z3 bit-vector terms over symbolic inputs.
  The SMT engine.

``env`` binds a family's parameters (integers for ``evaluate``/``at``, Z3 terms for ``encode``).
Faces are asked only about points inside the input box (``0 <= x < size`` for every input);
``in_box`` states that box for Z3.  ``bound()`` is a sound bound on |value| of every sub-term over the
box, which fixes the bit width so that the Z3 encoding is exact.

Maps here: ``FormulaMap`` (definitions of the formula language over named variables: the doc's
pseudo-code and every imported notation) and ``TableMap`` (a finite table: tables, inverses).
``verify.layout.fragment_maps`` places such maps on a register fragment's domain; ``verify.layout.algebra``
builds new maps from any of them.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Hashable, Mapping, Protocol

import numpy as np

from ..engines import oracle, smt, vector
from ..formula import Case, Definition, Formula
from ..formula.bounds import value_bound
from .dims import Dim, find, unique
from .family import Extent, Param, extent_at

if TYPE_CHECKING:  # pragma: no cover
    import z3

Env = Mapping[str, int]


@dataclass(frozen=True)
class Values:
    """A map evaluated at many points: ``out[name]`` per output and ``ok`` (defined), all one shape."""

    out: Mapping[str, np.ndarray]
    ok: np.ndarray


class NamedMap(Protocol):
    """What every layout map provides (see the module docstring)."""

    # read-only members (frozen dataclass fields and properties both provide them)
    @property
    def inputs(self) -> tuple[Dim, ...]: ...

    @property
    def outputs(self) -> tuple[Dim, ...]: ...

    @property
    def params(self) -> tuple[Param, ...]: ...

    def key(self) -> Hashable:
        """The mathematical object: two maps with equal keys are the same map."""

    def evaluate(self, point: Mapping[str, np.ndarray], env: Env | None = None) -> Values:
        """Every point at once (the enumeration engine)."""

    def at(self, point: Mapping[str, int], env: Env | None = None) -> dict[str, int] | None:
        """One point, Python integers (the scalar reference); None where undefined."""

    def encode(self, point: Mapping[str, "z3.ExprRef"],
               env: Mapping[str, "z3.ExprRef"] | None = None) -> tuple["z3.BoolRef", dict[str, "z3.ExprRef"]]:
        """(defined, outputs) as Z3 terms (the SMT engine)."""

    def bound(self) -> int:
        """A sound bound on |value| of every sub-term over the input box and every parameter value."""


# ----------------------------------------------------------------------------- helpers over any map

_ONCE = "_once_"  # the prefix of what ``computed_once`` keeps in an object's own dict


def computed_once(method):
    """A frozen map's argument-less method computed once per object and kept on it (a map never changes, so
    its ``bound()`` is a value of the map: composed maps ask their parts for it again and again)."""
    name = _ONCE + method.__name__

    def once(self):
        cache = self.__dict__
        if name not in cache:
            cache[name] = method(self)  # the instance's own dict: not a dataclass field, not compared or hashed
        return cache[name]
    once.__doc__ = method.__doc__
    once.__name__ = method.__name__
    return once


def keep_computed(obj: object, method: str, value: Any) -> None:
    """Give ``obj``'s ``computed_once`` method ``method`` its value now (a constructor that has it already)."""
    obj.__dict__[_ONCE + method] = value


def without_computed(obj: object) -> dict[str, Any]:
    """``obj``'s state without what ``computed_once`` keeps (for pickling: a string's hash differs between
    processes, and kept arrays are rebuilt faster than they travel)."""
    return {k: v for k, v in obj.__dict__.items() if not k.startswith(_ONCE)}


def first_repeat(keys: np.ndarray) -> tuple[int, int] | None:
    """The first position (in order) whose key an earlier position already has, with that earlier position
    (``(earlier, later)``), or ``None`` when the keys are distinct: where a map stops being injective."""
    uniq, first = np.unique(keys, return_index=True)
    if uniq.size == keys.size:
        return None
    again = np.ones(keys.size, bool)
    again[first] = False
    later = int(np.flatnonzero(again)[0])
    return int(first[int(np.searchsorted(uniq, keys[later]))]), later


def grid(dims: tuple[Dim, ...], env: Env | None = None) -> dict[str, np.ndarray]:
    """An open grid over ``dims``: input k varies along axis k (so a flattened result is in
    lexicographic order of the inputs, the first input outermost)."""
    n = len(dims)
    out = {}
    for k, d in enumerate(dims):
        shape = [1] * n
        shape[k] = d.at(env)
        out[d.name] = np.arange(d.at(env), dtype=np.int64).reshape(shape)
    return out


def evaluate_all(m: NamedMap, env: Env | None = None) -> Values:
    """``m`` at every point of its input box, outputs broadcast to the box's shape."""
    return m.evaluate(grid(m.inputs, env), env)


def full(v: Values) -> Values:
    """``v`` with every array broadcast to one common shape."""
    shape = np.broadcast_shapes(np.shape(v.ok), *(np.shape(a) for a in v.out.values()))
    return Values({k: np.broadcast_to(a, shape) for k, a in v.out.items()}, np.broadcast_to(v.ok, shape))


def max_extent(x: Extent, params: tuple[Param, ...]) -> int:
    """The largest value an extent takes over every binding of ``params``."""
    if isinstance(x, int):
        return x
    best = 0
    for env in _bindings(params):
        best = max(best, extent_at(x, env))
    return best


def _bindings(params: tuple[Param, ...]) -> list[dict[str, int]]:
    import itertools
    return [dict(zip([p.name for p in params], combo)) for combo in itertools.product(*(p.values for p in params))]


def bindings(m: NamedMap) -> list[dict[str, int]]:
    """Every binding of ``m``'s parameters (``[{}]`` without parameters), in declaration order."""
    return _bindings(m.params)


def box_bound(dims: tuple[Dim, ...], params: tuple[Param, ...]) -> int:
    """The largest size of any of ``dims`` (the inputs' values stay below it)."""
    return max([max_extent(d.size, params) for d in dims] + [1])


def extent_term(x: Extent, env: Mapping[str, "z3.ExprRef"] | None, w: int) -> "z3.ExprRef":
    """An extent as a Z3 term (a family's extent over its symbolic parameters)."""
    if isinstance(x, int):
        return smt.bv(x, w)
    f = Formula((Definition("value", (Case(x, None),)),), "x")
    return smt.Encoder(f, smt.bv(0, w), smt.bv(0, w), env).definition("value").value


def in_box(point: Mapping[str, "z3.ExprRef"], dims: tuple[Dim, ...], env: Mapping[str, "z3.ExprRef"] | None,
           w: int) -> "z3.BoolRef":
    """``0 <= point[d] < size(d)`` for every dimension ``d`` (Z3)."""
    ge, lt, zero = smt.CMP[">="], smt.CMP["<"], smt.bv(0, w)
    return smt.all_of([smt.all_of([ge(point[d.name], zero), lt(point[d.name], extent_term(d.size, env, w))])
                       for d in dims])


def inside(values: Mapping[str, np.ndarray], dims: tuple[Dim, ...], env: Env | None = None) -> np.ndarray:
    """Where every ``values[d]`` lies in ``0 .. size(d) - 1`` (numpy)."""
    ok: Any = True
    for d in dims:
        v = values[d.name]
        ok = ok & (v >= 0) & (v < d.at(env))
    return np.asarray(ok, bool)


def output_keys(values: Mapping[str, np.ndarray], dims: tuple[Dim, ...], env: Env | None) -> np.ndarray:
    """One integer per point: its output point in row-major order of ``dims``."""
    out: Any = 0
    for d in dims:
        out = out * d.at(env) + np.asarray(values[d.name], np.int64)
    return np.asarray(out, np.int64)


_I64_MAX, _I64_MIN = int(np.iinfo(np.int64).max), int(np.iinfo(np.int64).min)


def _distinct(keys: np.ndarray, good: np.ndarray, span: int) -> bool:
    """The keys at the ``good`` positions, each in ``0 .. span - 1``, are distinct, decided by counting them
    (linear, where sorting them is not); ``False`` also where the span is too wide to count in (the caller then
    sorts)."""
    if span > max(1 << 16, 4 * keys.size):
        return False
    counts = np.bincount(np.where(good, keys, span), minlength=span + 1)
    return int(counts[:span].max(initial=0)) <= 1


def first_collision(m: "NamedMap", env: Env, v: "Values | None" = None, anywhere: bool = False
                    ) -> tuple[dict[str, int], dict[str, int]] | None:
    """The enumeration engine's injectivity at one binding: the first input point (in row-major order of
    ``m.inputs``) that lands, inside the output box, where an earlier one did, with that earlier point
    (``(earlier, later)``); ``None`` where ``m`` is injective at ``env``.  ``v``: ``evaluate_all(m, env)`` when
    the caller has it.  ``anywhere``: defined points landing on one output point collide wherever it is, inside
    the output box or not (the fragment model's injectivity: no two elements on one cell).  The one place a map's
    collisions are found by enumeration (``checks.maps.injective`` pairs it with Z3)."""
    v = evaluate_all(m, env) if v is None else v
    if anywhere:  # any output values: numbered over the span they take (ranks where that passes 62 bits)
        good = np.broadcast_to(np.asarray(v.ok), np.shape(v.ok)).reshape(-1)
        cols = [np.broadcast_to(np.asarray(v.out[d.name], np.int64), np.shape(v.ok)).reshape(-1) for d in m.outputs]
        any_good = bool(good.any())
        lows = [int(c.min(where=good, initial=_I64_MAX)) if any_good else 0 for c in cols]
        spans = [int(c.max(where=good, initial=_I64_MIN)) - lo + 1 if any_good else 1 for c, lo in zip(cols, lows)]
        span: int | None = None
        if int(np.prod([float(s) for s in spans])) < 2**62:
            keys = np.zeros(good.size, np.int64)
            for c, lo, s in zip(cols, lows, spans):
                keys = keys * s + (c - lo)
            span = int(np.prod(spans, dtype=object))
        else:
            keys = np.unique(np.stack(cols, axis=1), axis=0, return_inverse=True)[1].reshape(-1)
    else:
        good = np.asarray(v.ok & inside(v.out, m.outputs, env)).reshape(-1)
        keys = output_keys(v.out, m.outputs, env).reshape(-1)
        span = int(np.prod([d.at(env) for d in m.outputs], dtype=object))
    if span is not None and _distinct(keys, good, span):
        return None
    idx = np.flatnonzero(good)
    repeat = first_repeat(keys[idx])
    if repeat is None:
        return None
    shape = np.shape(v.ok)

    def point(k: int) -> dict[str, int]:
        at = np.unravel_index(k, shape)
        return {d.name: int(x) for d, x in zip(m.inputs, at)}
    return point(int(idx[repeat[0]])), point(int(idx[repeat[1]]))


def merge_params(*groups: tuple[Param, ...]) -> tuple[Param, ...]:
    """The parameters of several maps, each once; ``ValueError`` when one name has two value sets."""
    out: dict[str, Param] = {}
    for g in groups:
        for p in g:
            if p.name in out and out[p.name] != p:
                raise ValueError(f"parameter {p.name} takes different values in the two maps")
            out.setdefault(p.name, p)
    return tuple(out.values())


def width(*maps: NamedMap) -> int:
    """A Z3 bit width that holds every value the maps compute (exact encoding)."""
    return smt.width_for(max([m.bound() for m in maps] + [1]))


def variables(dims: tuple[Dim, ...], w: int, tag: str = "",
              params: tuple[Param, ...] | None = None) -> dict[str, "z3.BitVecRef"]:
    """One Z3 bit-vector per dimension, named ``name`` (``name_tag`` with a tag).  With ``params`` (the map's),
    a point the query keeps in its box (``in_box``): each coordinate declared with the bits of the largest
    size it takes (``smt.natural``)."""
    import z3
    names = {d.name: f"{d.name}_{tag}" if tag else d.name for d in dims}
    if params is None:
        return {d.name: z3.BitVec(names[d.name], w) for d in dims}
    return {d.name: smt.natural(names[d.name], w, max_extent(d.size, params) - 1) for d in dims}


# ----------------------------------------------------------------------------- formula maps

@dataclass(frozen=True)
class FormulaMap:
    """Outputs defined by the formula language over named variables.

    ``variables`` pairs each input dimension with the formula variable that reads it (``("lane",
    "lane")``, ``("i", "i")``, ``("row", "row")``...); ``definitions`` pairs each output with the
    definition that computes it.  The engines evaluate ``lane`` and ``i`` as their two point arguments
    and every other variable from the environment, so any names work.
    """

    formula: Formula
    inputs: tuple[Dim, ...]
    outputs: tuple[Dim, ...]
    variables: tuple[tuple[str, str], ...] = ()
    definitions: tuple[tuple[str, str], ...] = ()
    params: tuple[Param, ...] = ()

    def __post_init__(self) -> None:
        unique(self.inputs, "inputs")
        unique(self.outputs, "outputs")
        if not self.variables:
            object.__setattr__(self, "variables", tuple((d.name, d.name) for d in self.inputs))
        if not self.definitions:
            object.__setattr__(self, "definitions", tuple((d.name, d.name) for d in self.outputs))
        known = {d.name for d in self.formula.definitions}
        for out, name in self.definitions:
            if name not in known:
                raise ValueError(f"the formula does not define {name!r} (output {out})")

    def key(self) -> Hashable:
        return ("formula", self.formula, self.inputs, self.outputs, self.variables, self.definitions, self.params)

    @computed_once
    def bound(self) -> int:
        maxima = {var: max_extent(find(self.inputs, dim).size, self.params) - 1 for dim, var in self.variables}
        env_max = {k: v for k, v in maxima.items() if k not in ("lane", "i")}
        env_max.update({p.name: max(abs(v) for v in p.values) for p in self.params})
        # the output box too: the checks compare outputs with their extents (a box wider than the values reached)
        return max(value_bound(self.formula, maxima.get("lane", 0), maxima.get("i", 0), env_max),
                   box_bound(self.inputs, self.params), box_bound(self.outputs, self.params))

    def _split(self, point: Mapping[str, Any], env: Mapping[str, Any] | None) -> tuple[Any, Any, dict[str, Any]]:
        lane, i, rest = 0, 0, dict(env or {})
        for dim, var in self.variables:
            if var == "lane":
                lane = point[dim]
            elif var == "i":
                i = point[dim]
            else:
                rest[var] = point[dim]
        return lane, i, rest

    def evaluate(self, point: Mapping[str, np.ndarray], env: Env | None = None) -> Values:
        lane, i, rest = self._split(point, env)
        ev = vector.VectorEvaluator(self.formula, np.asarray(lane), np.asarray(i), rest)
        out, ok, err = {}, None, None
        for dim, name in self.definitions:
            v = ev.full(name)
            err = vector.either(err, vector.within(ok, v.err))
            if v.span is not None:
                err = vector.either(err, vector.within(vector.both(ok, v.ok), v.span))
            ok = vector.both(ok, v.ok)
            out[dim] = np.asarray(v.lo, np.int64) if v.lo.dtype != object else v.lo
        if err is not None and err.any():
            self._raise_first_error(point, env, err)
        okm = np.ones(ev.shape, bool) if ok is None else np.asarray(ok, bool)
        return full(Values(out, okm))

    def _raise_first_error(self, point: Mapping[str, np.ndarray], env: Env | None, err: np.ndarray) -> None:
        """The oracle names the failing point exactly (position in the formula)."""
        shape = err.shape
        k = int(np.flatnonzero(err.reshape(-1))[0])
        idx = np.unravel_index(k, shape)
        one = {d: int(np.broadcast_to(a, shape)[idx]) for d, a in point.items()}
        self.at(one, env)
        raise AssertionError("the vectorised engine reported an error that the oracle does not find")

    def at(self, point: Mapping[str, int], env: Env | None = None) -> dict[str, int] | None:
        lane, i, rest = self._split(point, env)
        ev = oracle.Evaluator(self.formula, int(lane), int(i), rest)
        out = {}
        try:
            for dim, name in self.definitions:
                v = ev.value(name)
                if isinstance(v, tuple):
                    raise oracle.EvalError("a range where a single value is needed", self.formula.get(name).pos)
                out[dim] = v
        except oracle.Undefined:
            return None
        return out

    def encode(self, point: Mapping[str, "z3.ExprRef"],
               env: Mapping[str, "z3.ExprRef"] | None = None) -> tuple["z3.BoolRef", dict[str, "z3.ExprRef"]]:
        lane, i, rest = self._split(point, env)
        w = next(iter(point.values())).size() if point else 32
        lane = lane if not isinstance(lane, int) else smt.bv(lane, w)
        i = i if not isinstance(i, int) else smt.bv(i, w)
        enc = smt.Encoder(self.formula, lane, i, rest)
        oks, out = [], {}
        for dim, name in self.definitions:
            t = enc.definition(name)
            oks.append(t.ok)
            out[dim] = t.value
        return smt.conj(*oks), out


def formula_map(text: str, inputs: tuple[Dim, ...], outputs: tuple[Dim, ...],
                params: tuple[Param, ...] = (), *, index_code: bool = False) -> FormulaMap:
    """A map from formula text over the input names (``off = row * 64 + col``).  The text is parsed by
    the formula grammar (never evaluated as Python); every input name is a variable, and the text must
    define every output.  ``index_code``: the text is code someone wrote, read by the index-code grammar
    (``verify.formula.index``: ``#`` comments, ``//`` floor division), not the doc's pseudo-code."""
    from ..formula import parse_formula
    from ..formula.index import parse_index
    ins = tuple(d.name for d in inputs if d.name != "i")
    outs = tuple(d.name for d in outputs)
    if index_code:
        f = parse_index(text, "x", ins, outs, tuple(p.name for p in params))
    else:
        f = parse_formula(text, "x", ins + tuple(p.name for p in params), outs)
    return FormulaMap(f, inputs, outputs, params=params)


# ----------------------------------------------------------------------------- tables

@dataclass(frozen=True)
class TableMap:
    """A finite function given point by point: ``rows`` are (input values..., output values...) in the
    order of ``inputs`` then ``outputs``; a point not listed is undefined.  Z3 reads it as a
    multiplexer over the bits of the point's row-major index (the table is data, never evaluated)."""

    inputs: tuple[Dim, ...]
    outputs: tuple[Dim, ...]
    rows: tuple[tuple[int, ...], ...]
    params: tuple[Param, ...] = ()

    def __post_init__(self) -> None:
        unique(self.inputs + self.outputs, "table")
        for d in self.inputs:
            if not isinstance(d.size, int):
                raise ValueError("a table's inputs have fixed sizes")

    @classmethod
    def from_dense(cls, inputs: tuple[Dim, ...], outputs: tuple[Dim, ...], values: np.ndarray,
                   defined: np.ndarray) -> "TableMap":
        """The table of the points where ``defined`` holds (indexed by the input point's row-major index), their
        outputs ``values[j]`` per output; rows in point order.  Pre: ``values`` has one row per output and
        ``defined.size`` columns, the product of the inputs' sizes.  Post: ``_dense()`` is these arrays (kept,
        not rebuilt from the rows)."""
        ok = np.asarray(defined, bool).reshape(-1)
        vals = np.asarray(values, np.int64).reshape(len(outputs), ok.size)
        at = np.flatnonzero(ok)
        point = np.unravel_index(at, tuple(int(d.size) for d in inputs))  # type: ignore[arg-type]
        rows = tuple(zip(*(c.tolist() for c in (*point, *vals[:, at]))))
        table = cls(inputs, outputs, rows)
        keep_computed(table, "_dense", (vals, ok))
        return table

    def key(self) -> Hashable:
        return ("table", self.inputs, self.outputs, self.rows)

    @computed_once
    def __hash__(self) -> int:
        """The table's hash, computed once (a frozen table's rows never change; hashing thousands of rows on
        every cache lookup cost more than the lookups saved)."""
        return hash((self.inputs, self.outputs, self.rows, self.params))

    def __getstate__(self) -> dict[str, Any]:
        """Pickled (to worker processes) without what it keeps on itself (``without_computed``)."""
        return without_computed(self)

    @computed_once
    def bound(self) -> int:
        rows = np.asarray(self.rows, np.int64)
        top = int(np.abs(rows).max()) if rows.size else 0
        return max(top, box_bound(self.inputs, ()), self._size())

    def _size(self) -> int:
        n = 1
        for d in self.inputs:
            n *= d.size  # type: ignore[operator]
        return n

    def _index(self, point: Mapping[str, Any]) -> Any:
        k: Any = 0
        for d in self.inputs:
            k = k * d.size + point[d.name]
        return k

    @computed_once
    def _dense(self) -> tuple[np.ndarray, np.ndarray]:
        """(values per output, defined) indexed by the point's row-major index, built once per table."""
        return _dense_table(self.inputs, self.outputs, self.rows)

    @computed_once
    def _by_point(self) -> dict[tuple[int, ...], tuple[int, ...]]:
        """Input point -> outputs (the first row for a point wins), for the scalar face."""
        n = len(self.inputs)
        out: dict[tuple[int, ...], tuple[int, ...]] = {}
        for r in self.rows:
            out.setdefault(r[:n], r[n:])
        return out

    def evaluate(self, point: Mapping[str, np.ndarray], env: Env | None = None) -> Values:
        vals, ok = self._dense()
        k = np.asarray(self._index({d.name: np.asarray(point[d.name], np.int64) for d in self.inputs}))
        good = (k >= 0) & (k < ok.size)
        kk = np.where(good, k, 0)
        return full(Values({d.name: vals[j][kk] for j, d in enumerate(self.outputs)}, good & ok[kk]))

    def at(self, point: Mapping[str, int], env: Env | None = None) -> dict[str, int] | None:
        r = self._by_point().get(tuple(int(point[d.name]) for d in self.inputs))
        return None if r is None else {d.name: v for d, v in zip(self.outputs, r)}

    def encode(self, point: Mapping[str, "z3.ExprRef"],
               env: Mapping[str, "z3.ExprRef"] | None = None) -> tuple["z3.BoolRef", dict[str, "z3.ExprRef"]]:
        import z3
        w = next(iter(point.values())).size()
        size = self._size()
        k = self._index(point)
        bits = max(1, (size - 1).bit_length())
        if w < bits:
            raise ValueError(f"a {w}-bit encoding cannot index a table of {size} points")
        inside_ = z3.And(k >= smt.bv(0, w), k < smt.bv(size, w))
        key, trees = _mux_trees(self, w)
        kv = (key, z3.Extract(bits - 1, 0, k))
        oks, out = [inside_], {}
        for d, (ok, v) in zip(self.outputs, trees):  # the tree built once per table, the point substituted in
            oks.append(z3.substitute(ok, kv))
            out[d.name] = z3.substitute(v, kv)
        return z3.And(oks), out


@lru_cache(maxsize=32)
def _mux_trees(table: TableMap, w: int) -> tuple[Any, list[tuple[Any, Any]]]:
    """(placeholder key, [(defined, value) per output]) of a table as multiplexer trees over the key's bits;
    the first row for a point wins, as in the other faces.  Keyed by the table's value (its hash is kept on
    it), so equal tables share one circuit."""
    import z3
    outputs = table.outputs
    vals, ok = table._dense()
    bits = max(1, (ok.size - 1).bit_length())
    key = z3.BitVec(f"table#key{bits}", bits)
    idx = np.flatnonzero(ok).tolist()
    trees = [mux(key, bits, dict(zip(idx, vals[j][idx].tolist())), w) for j in range(len(outputs))]
    return key, trees


def _dense_table(inputs: tuple[Dim, ...], outputs: tuple[Dim, ...],
                 rows: tuple[tuple[int, ...], ...]) -> tuple[np.ndarray, np.ndarray]:
    size = 1
    for d in inputs:
        size *= d.size  # type: ignore[operator]
    n = len(inputs)
    vals = np.zeros((len(outputs), size), np.int64)
    ok = np.zeros(size, bool)
    if not rows:
        return vals, ok
    table = np.asarray(rows, np.int64).reshape(len(rows), n + len(outputs))
    inb = np.ones(len(rows), bool)
    k = np.zeros(len(rows), np.int64)
    for j, d in enumerate(inputs):
        inb &= (table[:, j] >= 0) & (table[:, j] < d.size)  # type: ignore[operator]
        k = k * d.size + table[:, j]  # type: ignore[operator]
    idx = np.flatnonzero(inb)
    keys, first = np.unique(k[idx], return_index=True)  # the first row for a point wins, as in ``at``
    ok[keys] = True
    vals[:, keys] = table[idx[first], n:].T
    return vals, ok


def mux(key: "z3.BitVecRef", bits: int, table: Mapping[int, int], w: int) -> tuple["z3.BoolRef", "z3.BitVecRef"]:
    """(defined, ``table[key]``) as a multiplexer tree over the low ``bits`` bits of ``key`` (identical
    halves shared, so a regular table gives a small circuit).  Built with one selector per bit and one
    leaf per distinct value, its if-then-else nodes made directly (every operand is already a term of the
    key's context): the same terms as ``z3.If``, three times faster on a 4096-point table."""
    import z3
    ctx = key.ctx
    conds = [z3.Extract(b, b, key) == 1 for b in range(bits)]

    def ite(c, a, b, cls):
        return cls(z3.Z3_mk_ite(ctx.ref(), c.as_ast(), a.as_ast(), b.as_ast()), ctx)

    # Bottom up, one level per bit.  Every distinct subtree gets one number (hash-consing: a node is numbered
    # by its two children's numbers), so equal subtrees are built once, whatever their size; the pairs of a
    # level are found with numpy, and only the distinct ones become terms.
    leaf_of = {v: n for n, v in enumerate(sorted(set(table.values())))}
    nodes: list[tuple] = [(z3.BoolVal(True, ctx), smt.bv(v, w)) for v in sorted(leaf_of)]
    nodes.append((z3.BoolVal(False, ctx), smt.bv(0, w)))  # undefined
    names = np.full(1 << bits, len(nodes) - 1, np.int64)
    if table:
        names[np.fromiter(table.keys(), np.int64, len(table))] = [leaf_of[v] for v in table.values()]
    for bit in range(bits):
        c = conds[bit]
        low, high = names[0::2], names[1::2]
        names = low.copy()
        differ = np.flatnonzero(low != high)
        if not differ.size:
            continue
        pairs, which = np.unique(low[differ] << 32 | high[differ], return_inverse=True)
        made = np.empty(pairs.size, np.int64)
        for t, pair in enumerate(pairs.tolist()):
            (ok0, v0), (ok1, v1) = nodes[pair >> 32], nodes[pair & 0xFFFFFFFF]
            nodes.append((ok0 if ok0.eq(ok1) else ite(c, ok1, ok0, z3.BoolRef),
                          v0 if v0.eq(v1) else ite(c, v1, v0, z3.BitVecRef)))
            made[t] = len(nodes) - 1
        names[differ] = made[which.reshape(-1)]
    return nodes[int(names[0])]
