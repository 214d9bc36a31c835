"""Writer against reader: does a consumer read every element where its producer wrote it?

A *writer* is a named map from element coordinates to storage locations (a quantization kernel's scale-factor
layout ``(l, m, kb) -> offset``, a TMA copy, tcgen05.cp ``-> (tmem_lane, tmem_col, byte)``, a host packer, an
MMA's data-path layout); a *reader* is a map from the same coordinates to the same kind of location (the MMA's
scale-factor ids, a loader).  Both may be families over the same parameters (M, K, batch); every verdict holds
for every parameter value at once: Z3 decides each property with the parameters free, the enumeration engine
evaluates every instance, and ``results.combine_engines`` joins them.

The writer may have inputs the reader lacks (``copy``: tcgen05.cp ``.warpx4`` multicasts one element to four
lane quarters): the element is written at every copy, and a read is right when it reads one of them.  Where a
map is undefined, it does not write (padding rows beyond M) or does not read that element.

Properties (each proved or refuted with the first witness in canonical order: parameters, then the element,
then its copy):

``writer_in_range``  every location written lies inside the writer's buffer (its output box)
``reader_in_range``  every location read lies inside the writer's buffer: a read out of range
``written_once``     no two elements (or copies) are written at one location
``same_place``       every element both write and read is read from a place it was written
``no_foreign_read``  no element is read from the place where another element was written
``no_padding_read``  every element read was written (the reader reads no padding)

The decision is ``consistent`` when all hold; else its status names the first kind of failure
(``mismatch``, ``out_of_range``, ``overwrite``, ``padding_read``) and every failing property keeps its witness.
"""
from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import z3

from ..engines import smt
from ..layout.dims import Dim, describe, names
from ..layout.named import NamedMap, _bindings, grid, in_box, inside, merge_params, variables, width
from ..layout.family import concrete
from ..results import CheckResult, combine_engines
from ..results.consistency import PROPERTIES, Decision
from ..witnesses import BufferPlace
from .fragment import DEFAULT_TIMEOUT
from .maps import param_constraint, point_text

MAX_COPIES = 4096  # a writer's copies (a 128-row broadcast is 128): Z3 holds them symbolic


# ----------------------------------------------------------------------------- pipelines

def chain(maps: Sequence[NamedMap], params: Mapping[str, int] | None = None) -> NamedMap:
    """Maps applied in order (storage -> shared-memory rows -> tcgen05.cp): each next map reads the outputs of
    the ones before by name; an input of a later map that nothing before produces (``copy`` of a multicast)
    becomes an input of the whole pipeline.  ``params`` binds parameters of any step that has them.

    Pre: each step's inputs are outputs of the pipeline so far or new names.  Post: the pipeline's inputs are the
    first map's then the new ones, its outputs the last map's; it is ``A.compose`` and ``A.product`` (with an
    identity of the new inputs) of the steps; a name in ``params`` that no step has is left alone."""
    from ..layout import algebra as A
    env = dict(params or {})

    def bound(m: NamedMap) -> NamedMap:
        mine = {k: v for k, v in env.items() if k in {p.name for p in m.params}}
        return A.bind(m, **mine) if mine else m

    if not maps:
        raise ValueError("a pipeline needs at least one map")
    out = bound(maps[0])
    for nxt in maps[1:]:
        nxt = bound(nxt)
        have = names(out.outputs)
        extra = tuple(d for d in nxt.inputs if d.name not in have)
        if len(extra) == len(nxt.inputs):
            raise ValueError(f"the next map reads {describe(nxt.inputs)}, none of which the pipeline so far "
                             f"produces {describe(out.outputs)}")
        if extra:
            out = A.product(out, A.identity(*extra))
        out = A.compose(nxt, out)
    return out


# ----------------------------------------------------------------------------- shapes

def _shape_problem(writer: NamedMap, reader: NamedMap, params: tuple[Any, ...]) -> str | None:
    wi, ri = {d.name: d for d in writer.inputs}, {d.name: d for d in reader.inputs}
    missing = [n for n in ri if n not in wi]
    if missing:
        return f"the reader's inputs {', '.join(missing)} are not inputs of the writer {describe(writer.inputs)}"
    if set(names(writer.outputs)) != set(names(reader.outputs)):
        return f"the writer writes {describe(writer.outputs)} and the reader reads {describe(reader.outputs)}"
    for env in _bindings(params):
        for n, d in ri.items():
            if wi[n].at(env) != d.at(env):
                at = ", ".join(f"{k} = {v}" for k, v in env.items())
                return f"input {n} has {wi[n].at(env)} points in the writer and {d.at(env)} in the reader" + (f" ({at})" if at else "")
    for n in wi:
        if n not in ri and not isinstance(wi[n].size, int):
            return f"the writer's extra input {n} (a copy) needs a fixed size"
    return None


def _broadcast(writer: NamedMap, reader: NamedMap, timeout: float) -> tuple[NamedMap, tuple[Dim, ...]]:
    """The reader with its inputs the writer lacks fixed at 0, and those inputs, where the reader's reads do not
    change along them (a broadcast: stride 0), which both engines prove (``maps.same`` of the reader and the
    reader with the input held at 0).  ``ValueError`` where they change (the names differ: not comparable) or
    where that is not decided."""
    from ..layout import algebra as A
    from ..layout import reshape
    from .maps import same
    bdims = tuple(d for d in reader.inputs if d.name not in names(writer.inputs))
    if not bdims:
        return reader, ()
    held = {d.name for d in bdims}
    proj = A.Affine(tuple(reader.inputs), tuple(reader.inputs),
                    tuple((d.name, () if d.name in held else ((d.name, 1),)) for d in reader.inputs), reader.params)
    verdict = same(reader, A.compose(reader, proj), timeout, ("reader", f"the reader at {' = '.join(held)} = 0"))
    which = ", ".join(d.name for d in bdims)
    if verdict.status == "refuted":
        raise ValueError(f"the reader's inputs {which} are not inputs of the writer {describe(writer.inputs)}, and "
                         f"what the reader reads changes along them ({verdict.message}): name the reader's coordinates "
                         "as the writer does, or read the same place for every value of them (a broadcast)")
    if verdict.status != "proved":
        raise ValueError(f"whether the reader's reads change along {which} (not inputs of the writer) is not decided: "
                         f"{verdict.message}")
    out = reader
    for d in bdims:
        out = reshape.fix(out, d.name, 0)
    return out, bdims


def _copies(writer: NamedMap, reader: NamedMap) -> tuple[Dim, ...]:
    """The writer's inputs the reader lacks (its copies: the element is written at each)."""
    extra = tuple(d for d in writer.inputs if d.name not in names(reader.inputs))
    count = 1
    for d in extra:
        count *= concrete(d.size)
    if count > MAX_COPIES:
        raise ValueError(f"the writer's copies {describe(extra)} are {count}, more than {MAX_COPIES}")
    return extra


# ----------------------------------------------------------------------------- enumeration

@dataclass
class _Instance:
    """One binding evaluated: the reader at every element, the writer at every (element, copy); the writer's
    arrays are (elements, copies), elements in the reader's input order, copies in the copy dims' order."""

    env: dict[str, int]
    xdims: tuple[Dim, ...]
    shape: tuple[int, ...]
    cdims: tuple[Dim, ...]
    r_ok: np.ndarray              # (elements,)
    r_out: dict[str, np.ndarray]
    r_in: np.ndarray              # reader defined and inside the writer's box
    w_ok: np.ndarray              # (elements, copies)
    w_out: dict[str, np.ndarray]
    w_in: np.ndarray              # writer defined and inside its box

    def copy(self, c: int) -> dict[str, int]:
        idx = np.unravel_index(c, tuple(concrete(d.size) for d in self.cdims)) if self.cdims else ()
        return {d.name: int(x) for d, x in zip(self.cdims, idx)}


def _instance(writer: NamedMap, reader: NamedMap, env: dict[str, int], cdims: tuple[Dim, ...]) -> _Instance:
    xdims = tuple(reader.inputs)
    shape = tuple(d.at(env) for d in xdims)
    n = int(np.prod(shape, dtype=np.int64))
    rv = reader.evaluate(grid(xdims, env), env)
    r_out = {k: np.broadcast_to(np.asarray(v), shape).reshape(n) for k, v in rv.out.items()}
    r_ok = np.broadcast_to(np.asarray(rv.ok, bool), shape).reshape(n)
    full = shape + tuple(concrete(d.size) for d in cdims)
    c = int(np.prod([concrete(d.size) for d in cdims], dtype=np.int64))
    wv = writer.evaluate(grid(xdims + cdims, env), env)
    w_out = {k: np.broadcast_to(np.asarray(v), full).reshape(n, c) for k, v in wv.out.items()}
    w_ok = np.broadcast_to(np.asarray(wv.ok, bool), full).reshape(n, c)
    w_in = w_ok & inside(w_out, writer.outputs, env)
    r_in = r_ok & inside(r_out, writer.outputs, env)
    return _Instance(env, xdims, shape, cdims, r_ok, r_out, r_in, w_ok, w_out, w_in)


def _point(inst: _Instance, k: int) -> dict[str, int]:
    idx = np.unravel_index(k, inst.shape)
    return {d.name: int(x) for d, x in zip(inst.xdims, idx)}


def _first(mask: np.ndarray) -> int | None:
    hits = np.flatnonzero(np.asarray(mask).reshape(-1))
    return int(hits[0]) if hits.size else None


def _key(out: Mapping[str, np.ndarray], dims: tuple[Dim, ...], env: Mapping[str, int]) -> np.ndarray:
    k: Any = 0
    for d in dims:
        k = k * d.at(env) + np.asarray(out[d.name], np.int64)
    return np.asarray(k, np.int64)


def _first_of_keys(keys: np.ndarray, valid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For the valid positions of ``keys`` (flat, in order): the distinct keys and, for each, the first position
    that holds it (sorted by key, for ``searchsorted``)."""
    at = np.flatnonzero(valid)
    uniq, first = np.unique(keys[at], return_index=True)
    return uniq, at[first]


# ----------------------------------------------------------------------------- the decision

def decide(writer: NamedMap, reader: NamedMap, timeout: float = DEFAULT_TIMEOUT,
           names_: tuple[str, str] = ("writer", "reader")) -> Decision:
    """Writer against reader, every property by both engines (see the module docstring).  ``ValueError`` when
    the two maps cannot be compared (different element coordinates or location names)."""
    reader, bdims = _broadcast(writer, reader, timeout)
    params = merge_params(writer.params, reader.params)
    problem = _shape_problem(writer, reader, params)
    if problem is not None:
        raise ValueError(problem)
    cdims = _copies(writer, reader)
    insts = [_instance(writer, reader, env, cdims) for env in _bindings(params)]
    ordered = all(list(p.values) == sorted(p.values) for p in params)
    z = _Z3(writer, reader, params, cdims, timeout)
    wname, rname = names_
    outs = tuple(writer.outputs)

    def loc(v: Mapping[str, int] | None) -> str:
        return "nowhere (undefined)" if v is None else "(" + point_text({d.name: v[d.name] for d in outs}) + ")"

    def pre(c: Mapping[str, Any]) -> str:
        return ", ".join(f"{k} = {v}" for k, v in c["params"].items()) + ": " if c["params"] else ""

    def elem(p: Mapping[str, int]) -> str:
        return "element (" + point_text(p) + ")"

    results: list[CheckResult] = []

    # writer_in_range: the first copy (in order) that writes outside, at its first element
    results.append(_join("writer_in_range", _writer_outside(insts, writer), z.writer_range(),
                         lambda c: f"{pre(c)}{wname} writes {elem(c['element'])}{_copy(c['copy'])} at {loc(c['at'])}, "
                                   f"outside its buffer {_box(outs, c['params'])}",
                         f"every location the {wname} writes is inside its buffer", False))

    # reader_in_range
    results.append(_join("reader_in_range", _reader_outside(insts, reader), z.reader_range(),
                         lambda c: f"{pre(c)}{rname} reads {elem(c['element'])} from {loc(c['at'])}, outside the "
                                   f"{wname}'s buffer {_box(outs, c['params'])}",
                         f"every location the {rname} reads is inside the {wname}'s buffer", ordered))

    # written_once: the first (element, copy) in order whose place an earlier one took
    results.append(_join("written_once", _written_twice(insts, writer, outs), z.written_once(),
                         lambda c: f"{pre(c)}{wname} writes {elem(c['first'])}{_copy(c['first_copy'])} and "
                                   f"{elem(c['second'])}{_copy(c['second_copy'])} at one place {loc(c['at'])}",
                         "no two elements are written at one place", False))

    # same_place
    results.append(_join("same_place", _read_elsewhere(insts, writer, reader, outs), z.same_place(),
                         lambda c: f"{pre(c)}{elem(c['element'])} is written at {loc(c['written'])} and read from "
                                   f"{loc(c['read'])}",
                         "every element is read from a place where it was written", ordered))

    # no_foreign_read: the first element (in order) read from a place some other element is written at; the
    # owner named is the first such other element, at its first copy there (as Z3's minimum names them)
    results.append(_join("no_foreign_read", _foreign_read(insts, reader, outs), z.foreign(),
                         lambda c: f"{pre(c)}{rname} reads {elem(c['element'])} from {loc(c['at'])}, where the "
                                   f"{wname} writes {elem(c['owner'])}{_copy(c['owner_copy'])}",
                         "no element is read from another element's place", ordered))

    # no_padding_read
    results.append(_join("no_padding_read", _padding_read(insts, reader), z.padding(),
                         lambda c: f"{pre(c)}{rname} reads {elem(c['element'])} from {loc(c['at'])}, which the "
                                   f"{wname} never writes (padding)",
                         "every element read was written", ordered))
    return Decision(wname, rname, tuple(results), {p.name: tuple(p.values) for p in params}, cdims, bdims,
                    writer_map=writer, reader_map=reader)


def _writer_outside(insts: Sequence[_Instance], writer: NamedMap) -> dict[str, Any] | None:
    """The first copy (in order) the writer writes outside its buffer, at its first element."""
    for inst in insts:
        bad = (inst.w_ok & ~inst.w_in).T.reshape(-1)
        k = _first(bad)
        if k is not None:
            ci, e = divmod(k, inst.w_ok.shape[0])
            p, cp = _point(inst, e), inst.copy(ci)
            return {"params": inst.env, "element": p, "copy": cp, "at": writer.at({**p, **cp}, inst.env)}
    return None


def _reader_outside(insts: Sequence[_Instance], reader: NamedMap) -> dict[str, Any] | None:
    """The first element the reader reads from outside the writer's buffer."""
    for inst in insts:
        k = _first(inst.r_ok & ~inst.r_in)
        if k is not None:
            p = _point(inst, k)
            return {"params": inst.env, "element": p, "at": reader.at(p, inst.env)}
    return None


def _written_twice(insts: Sequence[_Instance], writer: NamedMap, outs: tuple[Dim, ...]) -> dict[str, Any] | None:
    """The first (element, copy) in order whose place an earlier one took."""
    for inst in insts:
        keys = _key(inst.w_out, outs, inst.env).reshape(-1)
        valid = inst.w_in.reshape(-1)
        uniq, first = _first_of_keys(keys, valid)
        at = np.flatnonzero(valid)
        earlier = first[np.searchsorted(uniq, keys[at])]
        dup = np.flatnonzero(earlier != at)
        if dup.size:
            k1, k0 = int(at[dup[0]]), int(earlier[dup[0]])
            (e0, c0), (e1, c1) = divmod(k0, inst.w_ok.shape[1]), divmod(k1, inst.w_ok.shape[1])
            p0, p1, cp0, cp1 = _point(inst, e0), _point(inst, e1), inst.copy(c0), inst.copy(c1)
            return {"params": inst.env, "first": p0, "first_copy": cp0, "second": p1, "second_copy": cp1,
                    "at": writer.at({**p1, **cp1}, inst.env)}
    return None


def _read_elsewhere(insts: Sequence[_Instance], writer: NamedMap, reader: NamedMap, outs: tuple[Dim, ...]) -> dict[str, Any] | None:
    """The first element read from a place where it was not written."""
    for inst in insts:
        written = inst.w_ok.any(axis=1)
        eq = inst.w_ok.copy()
        for d in outs:
            eq &= inst.w_out[d.name] == inst.r_out[d.name][:, None]
        k = _first(inst.r_ok & written & ~eq.any(axis=1))
        if k is not None:
            p = _point(inst, k)
            cp = inst.copy(int(np.argmax(inst.w_ok[k])))
            return {"params": inst.env, "element": p, "written": writer.at({**p, **cp}, inst.env),
                    "read": reader.at(p, inst.env)}
    return None


def _foreign_read(insts: Sequence[_Instance], reader: NamedMap, outs: tuple[Dim, ...]) -> dict[str, Any] | None:
    """The first element read from a place another element is written at, with that owner."""
    for inst in insts:
        n, c = inst.w_ok.shape
        keys = _key(inst.w_out, outs, inst.env).reshape(-1)
        pos = np.flatnonzero(inst.w_in.reshape(-1))  # (element, copy) in order, element outermost
        if not pos.size:
            continue
        order = np.lexsort((pos, keys[pos]))
        ks, ps = keys[pos][order], pos[order]
        start = np.r_[True, ks[1:] != ks[:-1]]
        uniq, first = ks[start], ps[start]
        group = np.cumsum(start) - 1
        elem = ps // c
        later = np.flatnonzero(~start & np.r_[True, elem[1:] != elem[:-1]])  # a second element at the place
        second = np.full(uniq.size, -1, np.int64)
        g, at = np.unique(group[later], return_index=True)
        second[g] = ps[later[at]]
        rkeys = _key(inst.r_out, outs, inst.env).reshape(-1)
        j = np.minimum(np.searchsorted(uniq, rkeys), uniq.size - 1)
        here = np.arange(n)
        owner = np.where(first[j] // c != here, first[j], second[j])
        k = _first(inst.r_in & (uniq[j] == rkeys) & (owner >= 0))
        if k is not None:
            p, q = _point(inst, k), _point(inst, int(owner[k]) // c)
            return {"params": inst.env, "element": p, "at": reader.at(p, inst.env), "owner": q,
                    "owner_copy": inst.copy(int(owner[k]) % c)}
    return None


def _padding_read(insts: Sequence[_Instance], reader: NamedMap) -> dict[str, Any] | None:
    """The first element read from a place the writer never writes."""
    for inst in insts:
        k = _first(inst.r_ok & ~inst.w_ok.any(axis=1))
        if k is not None:
            p = _point(inst, k)
            return {"params": inst.env, "element": p, "at": reader.at(p, inst.env)}
    return None


def _copy(cp: Mapping[str, int]) -> str:
    return f" ({point_text(cp)})" if cp else ""


def _box(dims: tuple[Dim, ...], env: Mapping[str, int]) -> str:
    return ", ".join(f"{d.name} < {d.at(env)}" for d in dims)


def _place(name: str, fields: Mapping[str, Any] | None) -> BufferPlace | None:
    """The witness of property ``name`` from the fields an engine found (``params``, the element, the places)."""
    return None if fields is None else BufferPlace(name, **fields)


def _join(name: str, enum: dict[str, Any] | None, z3_side: tuple[str, dict[str, Any] | None, Callable[[Mapping[str, Any]], bool]],
          message: Callable[[Mapping[str, Any]], str], note: str, same_witness: bool) -> CheckResult:
    t0 = time.perf_counter()
    status, cex, confirm = z3_side
    z3_place, enum_place = _place(name, cex), _place(name, enum)
    return combine_engines(name, "proved", smt.status(status), z3_place, enum_place, message, time.perf_counter() - t0,
                           note, confirm, same_witness=same_witness and z3_place is not None and enum_place is not None)


# ----------------------------------------------------------------------------- Z3

class _Z3:
    """The Z3 side of each property: one query with the parameters free, the witness minimised to the canonical
    point and re-checked with the scalar reference.  The writer's copies are unknowns like the element (in their
    box), so a query's size does not grow with their number; "no copy" (``same_place``, ``no_padding_read``) is
    a conjunction over every copy."""

    def __init__(self, writer: NamedMap, reader: NamedMap, params: tuple[Any, ...], cdims: tuple[Dim, ...],
                 timeout: float) -> None:
        self.writer, self.reader, self.params, self.cdims = writer, reader, params, cdims
        self.copies = [dict(zip([d.name for d in cdims], c))
                       for c in itertools.product(*(range(concrete(d.size)) for d in cdims))]
        self.timeout = timeout
        self.w = width(writer, reader)
        self.env = {p.name: z3.BitVec(f"param_{p.name}", self.w) for p in params}
        self.valid = param_constraint(params, self.env, self.w)
        self.xdims = tuple(reader.inputs)
        self.outs = tuple(writer.outputs)

    def _x(self, tag: str) -> dict[str, z3.BitVecRef]:
        return variables(self.xdims, self.w, tag)

    def _c(self, tag: str) -> dict[str, z3.BitVecRef]:
        return variables(self.cdims, self.w, "copy" + tag)

    def _box_x(self, x: Mapping[str, z3.ExprRef]) -> z3.BoolRef:
        return in_box(x, self.xdims, self.env, self.w)

    def _box_c(self, c: Mapping[str, z3.ExprRef]) -> z3.BoolRef:
        return in_box(c, self.cdims, self.env, self.w)

    def _wcopy(self, x: Mapping[str, z3.ExprRef], cp: Mapping[str, Any]) -> tuple[z3.BoolRef, dict[str, z3.ExprRef]]:
        pt = dict(x)
        pt.update({k: smt.bv(v, self.w) if isinstance(v, int) else v for k, v in cp.items()})
        return self.writer.encode(pt, self.env)

    def _inside(self, y: Mapping[str, z3.ExprRef]) -> z3.BoolRef:
        return in_box(y, self.outs, self.env, self.w)

    def _solve(self, cs: list[z3.BoolRef], keys: list[z3.ExprRef]) -> tuple[str, z3.ModelRef | None]:
        return smt.solve_min([self.valid, *cs], [*self.env.values(), *keys], smt.Budget(self.timeout))

    def _params_of(self, m: z3.ModelRef) -> dict[str, int]:
        return {k: smt.as_int(m, v) for k, v in self.env.items()}

    def _pt(self, m: z3.ModelRef, x: Mapping[str, z3.ExprRef]) -> dict[str, int]:
        return {k: smt.as_int(m, v) for k, v in x.items()}

    def _wat(self, p: Mapping[str, int], cp: Mapping[str, int], env: Mapping[str, int]) -> dict[str, int] | None:
        return self.writer.at({**p, **cp}, env)

    def _inside_at(self, y: Mapping[str, int] | None, env: Mapping[str, int]) -> bool:
        return y is not None and all(0 <= y[d.name] < d.at(env) for d in self.outs)

    def writer_range(self) -> tuple[str, dict[str, Any] | None, Callable[[Mapping[str, Any]], bool]]:
        x, c = self._x(""), self._c("")
        ok, y = self._wcopy(x, c)
        res, m = self._solve([self._box_x(x), self._box_c(c), ok, z3.Not(self._inside(y))],
                             [*x.values(), *c.values()])
        cex = None
        if res == "sat" and m is not None:
            e, p, cp = self._params_of(m), self._pt(m, x), self._pt(m, c)
            cex = {"params": e, "element": p, "copy": cp, "at": self._wat(p, cp, e)}
        return res, cex, lambda c_: (c_["at"] is not None and
                                     not self._inside_at(self._wat(c_["element"], c_["copy"], c_["params"]), c_["params"]))

    def reader_range(self) -> tuple[str, dict[str, Any] | None, Callable[[Mapping[str, Any]], bool]]:
        x = self._x("")
        ok, y = self.reader.encode(x, self.env)
        res, m = self._solve([self._box_x(x), ok, z3.Not(self._inside(y))], list(x.values()))
        cex = None
        if res == "sat" and m is not None:
            e, p = self._params_of(m), self._pt(m, x)
            cex = {"params": e, "element": p, "at": self.reader.at(p, e)}
        return res, cex, lambda c: (c["at"] is not None and not self._inside_at(self.reader.at(c["element"], c["params"]),
                                                                                 c["params"]))

    def written_once(self) -> tuple[str, dict[str, Any] | None, Callable[[Mapping[str, Any]], bool]]:
        x1, x2, c1, c2 = self._x("1"), self._x("2"), self._c("1"), self._c("2")
        ok1, y1 = self._wcopy(x1, c1)
        ok2, y2 = self._wcopy(x2, c2)
        k1 = [*x1.values(), *c1.values()]
        k2 = [*x2.values(), *c2.values()]
        res, m = self._solve([self._box_x(x1), self._box_x(x2), self._box_c(c1), self._box_c(c2), ok1, ok2,
                              self._inside(y1), self._inside(y2), *[y1[d.name] == y2[d.name] for d in self.outs],
                              _lex_less(k1, k2)], [*k2, *k1])
        cex = None
        if res == "sat" and m is not None:
            e = self._params_of(m)
            p1, p2, a, b = self._pt(m, x1), self._pt(m, x2), self._pt(m, c1), self._pt(m, c2)
            cex = {"params": e, "first": p1, "first_copy": a, "second": p2, "second_copy": b, "at": self._wat(p2, b, e)}

        def confirm(c: Mapping[str, Any]) -> bool:
            u = self._wat(c["first"], c["first_copy"], c["params"])
            v = self._wat(c["second"], c["second_copy"], c["params"])
            return u is not None and u == v
        return res, cex, confirm

    def same_place(self) -> tuple[str, dict[str, Any] | None, Callable[[Mapping[str, Any]], bool]]:
        x = self._x("")
        okr, yr = self.reader.encode(x, self.env)
        some_written, none_same = [], []
        for cp in self.copies:
            okw, yw = self._wcopy(x, cp)
            some_written.append(okw)
            none_same.append(z3.Or(z3.Not(okw), z3.Or([yw[d.name] != yr[d.name] for d in self.outs])))
        res, m = self._solve([self._box_x(x), okr, z3.Or(some_written), *none_same], list(x.values()))
        cex = None
        if res == "sat" and m is not None:
            e, p = self._params_of(m), self._pt(m, x)
            first = next((cp for cp in self.copies if self._wat(p, cp, e) is not None), self.copies[0])
            cex = {"params": e, "element": p, "written": self._wat(p, first, e), "read": self.reader.at(p, e)}

        def confirm(c: Mapping[str, Any]) -> bool:
            r = self.reader.at(c["element"], c["params"])
            ws = [self._wat(c["element"], cp, c["params"]) for cp in self.copies]
            return r is not None and any(w is not None for w in ws) and all(w is None or w != r for w in ws)
        return res, cex, confirm

    def foreign(self) -> tuple[str, dict[str, Any] | None, Callable[[Mapping[str, Any]], bool]]:
        x, xo, c = self._x("r"), self._x("w"), self._c("w")
        okr, yr = self.reader.encode(x, self.env)
        okw, yw = self._wcopy(xo, c)
        differ = z3.Or([x[d.name] != xo[d.name] for d in self.xdims])
        res, m = self._solve([self._box_x(x), self._box_x(xo), self._box_c(c), okr, self._inside(yr), differ, okw,
                              self._inside(yw), *[yw[d.name] == yr[d.name] for d in self.outs]],
                             [*x.values(), *xo.values(), *c.values()])
        cex = None
        if res == "sat" and m is not None:
            e, p, q = self._params_of(m), self._pt(m, x), self._pt(m, xo)
            cex = {"params": e, "element": p, "at": self.reader.at(p, e), "owner": q, "owner_copy": self._pt(m, c)}

        def confirm(cx: Mapping[str, Any]) -> bool:
            r = self.reader.at(cx["element"], cx["params"])
            return (r is not None and cx["element"] != cx["owner"]
                    and self._wat(cx["owner"], cx["owner_copy"], cx["params"]) == r)
        return res, cex, confirm

    def padding(self) -> tuple[str, dict[str, Any] | None, Callable[[Mapping[str, Any]], bool]]:
        x = self._x("")
        okr, _ = self.reader.encode(x, self.env)
        unwritten = [z3.Not(self._wcopy(x, cp)[0]) for cp in self.copies]
        res, m = self._solve([self._box_x(x), okr, *unwritten], list(x.values()))
        cex = None
        if res == "sat" and m is not None:
            e, p = self._params_of(m), self._pt(m, x)
            cex = {"params": e, "element": p, "at": self.reader.at(p, e)}

        def confirm(c: Mapping[str, Any]) -> bool:
            return (self.reader.at(c["element"], c["params"]) is not None
                    and all(self._wat(c["element"], cp, c["params"]) is None for cp in self.copies))
        return res, cex, confirm


def _lex_less(a: Sequence[z3.ExprRef], b: Sequence[z3.ExprRef]) -> z3.BoolRef:
    if not a:
        return z3.BoolVal(False)
    return z3.Or(a[0] < b[0], z3.And(a[0] == b[0], _lex_less(a[1:], b[1:])))


__all__ = ["Decision", "PROPERTIES", "chain", "decide"]
