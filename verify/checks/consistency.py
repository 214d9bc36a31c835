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
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import z3

from ..engines import smt
from ..layout.dims import Dim, describe, names
from ..layout.named import NamedMap, _bindings, grid, in_box, inside, merge_params, variables, width
from ..results import CheckResult, combine_engines
from ..witnesses import BufferPlace, witness_json
from .fragment import DEFAULT_TIMEOUT
from .maps import param_constraint, point_text

PROPERTIES = ("writer_in_range", "reader_in_range", "written_once", "same_place", "no_foreign_read", "no_padding_read")
STATUS_OF = {"same_place": "mismatch", "no_foreign_read": "mismatch", "reader_in_range": "out_of_range",
             "writer_in_range": "out_of_range", "written_once": "overwrite", "no_padding_read": "padding_read"}
STATUS_ORDER = ("mismatch", "out_of_range", "overwrite", "padding_read")
MAX_COPIES = 64


@dataclass(frozen=True)
class Decision:
    """Writer against reader: the status, and each property with its verdict and witness."""

    writer: str
    reader: str
    checks: tuple[CheckResult, ...]
    params: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    writer_map: Any = field(default=None, compare=False, repr=False)  # the maps decided (for the picture)
    reader_map: Any = field(default=None, compare=False, repr=False)

    @property
    def status(self) -> str:
        bad = [c for c in self.checks if c.status != "proved"]
        if any(c.status in ("unknown", "error") for c in bad):
            return next(c.status for c in bad if c.status in ("error", "unknown"))
        kinds = {STATUS_OF[c.check] for c in bad}
        return next((k for k in STATUS_ORDER if k in kinds), "consistent")

    @property
    def consistent(self) -> bool:
        return self.status == "consistent"

    def get(self, name: str) -> CheckResult:
        return next(c for c in self.checks if c.check == name)

    def to_json(self) -> dict[str, Any]:
        return {"writer": self.writer, "reader": self.reader, "status": self.status,
                "params": {k: list(v) for k, v in self.params.items()},
                "checks": {c.check: {"status": c.status, "engines": dict(c.engines), "message": c.message,
                                     "counterexample": witness_json(c.counterexample)} for c in self.checks}}


# ----------------------------------------------------------------------------- pipelines

def chain(maps: Sequence[NamedMap], params: Mapping[str, int] | None = None) -> NamedMap:
    """Maps applied in order (storage -> shared-memory rows -> tcgen05.cp): each next map reads the outputs of
    the ones before by name; an input of a later map that nothing before produces (``copy`` of a multicast)
    becomes an input of the whole pipeline.  ``params`` binds parameters of any step that has them.

    Pre: each step's inputs are outputs of the pipeline so far or new names.  Post: the pipeline's inputs are the
    first map's then the new ones, its outputs the last map's; it is ``A.compose`` and ``A.product`` (with an
    identity of the new inputs) of the steps; a name in ``params`` that no step has is left alone."""
    from ..layout import algebra as A  # noqa: PLC0415
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


def _copies(writer: NamedMap, reader: NamedMap) -> tuple[tuple[Dim, ...], list[dict[str, int]]]:
    extra = tuple(d for d in writer.inputs if d.name not in names(reader.inputs))
    pts = [dict(zip([d.name for d in extra], c)) for c in itertools.product(*(range(int(d.size)) for d in extra))]
    if len(pts) > MAX_COPIES:
        raise ValueError(f"the writer's copies {describe(extra)} are more than {MAX_COPIES}")
    return extra, pts


# ----------------------------------------------------------------------------- enumeration

@dataclass
class _Instance:
    """One binding evaluated: reader at every element, writer at every (element, copy)."""

    env: dict[str, int]
    xdims: tuple[Dim, ...]
    shape: tuple[int, ...]
    r_ok: np.ndarray
    r_out: dict[str, np.ndarray]
    w_ok: list[np.ndarray]        # per copy
    w_out: list[dict[str, np.ndarray]]
    w_in: list[np.ndarray]        # per copy: defined and inside the writer's box
    r_in: np.ndarray              # reader defined and inside the writer's box


def _instance(writer: NamedMap, reader: NamedMap, env: dict[str, int], copies: list[dict[str, int]]) -> _Instance:
    xdims = tuple(reader.inputs)
    g = grid(xdims, env)
    shape = tuple(d.at(env) for d in xdims)
    rv = reader.evaluate(g, env)
    r_out = {k: np.broadcast_to(np.asarray(v), shape) for k, v in rv.out.items()}
    r_ok = np.broadcast_to(np.asarray(rv.ok, bool), shape)
    w_ok, w_out, w_in = [], [], []
    for c in copies:
        pt = dict(g)
        pt.update({k: np.asarray(v, np.int64) for k, v in c.items()})
        wv = writer.evaluate(pt, env)
        out = {k: np.broadcast_to(np.asarray(v), shape) for k, v in wv.out.items()}
        ok = np.broadcast_to(np.asarray(wv.ok, bool), shape)
        w_ok.append(ok)
        w_out.append(out)
        w_in.append(ok & inside(out, writer.outputs, env))
    r_in = r_ok & inside(r_out, writer.outputs, env)
    return _Instance(env, xdims, shape, r_ok, r_out, w_ok, w_out, w_in, r_in)


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


# ----------------------------------------------------------------------------- the decision

def decide(writer: NamedMap, reader: NamedMap, timeout: float = DEFAULT_TIMEOUT,
           names_: tuple[str, str] = ("writer", "reader")) -> Decision:
    """Writer against reader, every property by both engines (see the module docstring).  ``ValueError`` when
    the two maps cannot be compared (different element coordinates or location names)."""
    params = merge_params(writer.params, reader.params)
    problem = _shape_problem(writer, reader, params)
    if problem is not None:
        raise ValueError(problem)
    extra, copies = _copies(writer, reader)
    insts = [_instance(writer, reader, env, copies) for env in _bindings(params)]
    ordered = all(list(p.values) == sorted(p.values) for p in params)
    z = _Z3(writer, reader, params, extra, copies, timeout)
    wname, rname = names_
    outs = tuple(writer.outputs)

    def loc(v: Mapping[str, int] | None) -> str:
        return "nowhere (undefined)" if v is None else "(" + point_text({d.name: v[d.name] for d in outs}) + ")"

    def pre(c: Mapping[str, Any]) -> str:
        return ", ".join(f"{k} = {v}" for k, v in c["params"].items()) + ": " if c["params"] else ""

    def elem(p: Mapping[str, int]) -> str:
        return "element (" + point_text(p) + ")"

    def w_at(c: Mapping[str, Any], p: Mapping[str, int], cp: Mapping[str, int]) -> dict[str, int] | None:
        return writer.at({**p, **cp}, c["params"])

    results: list[CheckResult] = []

    # writer_in_range
    def enum_w_range() -> dict[str, Any] | None:
        for inst in insts:
            for ci, cp in enumerate(copies):
                k = _first(inst.w_ok[ci] & ~inst.w_in[ci])
                if k is not None:
                    p = _point(inst, k)
                    return {"params": inst.env, "element": p, "copy": cp, "at": writer.at({**p, **cp}, inst.env)}
        return None

    results.append(_join("writer_in_range", enum_w_range(), z.writer_range(),
                         lambda c: f"{pre(c)}{wname} writes {elem(c['element'])}{_copy(c['copy'])} at {loc(c['at'])}, "
                                   f"outside its buffer {_box(outs, c['params'])}",
                         f"every location the {wname} writes is inside its buffer", False))

    # reader_in_range
    def enum_r_range() -> dict[str, Any] | None:
        for inst in insts:
            k = _first(inst.r_ok & ~inst.r_in)
            if k is not None:
                p = _point(inst, k)
                return {"params": inst.env, "element": p, "at": reader.at(p, inst.env)}
        return None

    results.append(_join("reader_in_range", enum_r_range(), z.reader_range(),
                         lambda c: f"{pre(c)}{rname} reads {elem(c['element'])} from {loc(c['at'])}, outside the "
                                   f"{wname}'s buffer {_box(outs, c['params'])}",
                         f"every location the {rname} reads is inside the {wname}'s buffer", ordered))

    # written_once
    def enum_once() -> dict[str, Any] | None:
        for inst in insts:
            seen: dict[int, tuple[int, int]] = {}
            n = int(np.prod(inst.shape))
            keys = [_key(o, outs, inst.env).reshape(-1) for o in inst.w_out]
            oks = [np.asarray(m).reshape(-1) for m in inst.w_in]
            for k in range(n):
                for ci in range(len(copies)):
                    if not oks[ci][k]:
                        continue
                    key = int(keys[ci][k])
                    if key in seen:
                        k0, c0 = seen[key]
                        p0, p1 = _point(inst, k0), _point(inst, k)
                        return {"params": inst.env, "first": p0, "first_copy": copies[c0], "second": p1,
                                "second_copy": copies[ci], "at": writer.at({**p1, **copies[ci]}, inst.env)}
                    seen[key] = (k, ci)
        return None

    results.append(_join("written_once", enum_once(), z.written_once(),
                         lambda c: f"{pre(c)}{wname} writes {elem(c['first'])}{_copy(c['first_copy'])} and "
                                   f"{elem(c['second'])}{_copy(c['second_copy'])} at one place {loc(c['at'])}",
                         "no two elements are written at one place", False))

    # same_place
    def enum_same() -> dict[str, Any] | None:
        for inst in insts:
            written = np.zeros(inst.shape, bool)
            hit = np.zeros(inst.shape, bool)
            for ci in range(len(copies)):
                written |= inst.w_ok[ci]
                eq = inst.w_ok[ci].copy()
                for d in outs:
                    eq &= inst.w_out[ci][d.name] == inst.r_out[d.name]
                hit |= eq
            k = _first(inst.r_ok & written & ~hit)
            if k is not None:
                p = _point(inst, k)
                return {"params": inst.env, "element": p, "written": writer.at({**p, **copies[_first_written(inst, k)]}, inst.env),
                        "read": reader.at(p, inst.env)}
        return None

    results.append(_join("same_place", enum_same(), z.same_place(),
                         lambda c: f"{pre(c)}{elem(c['element'])} is written at {loc(c['written'])} and read from "
                                   f"{loc(c['read'])}",
                         "every element is read from a place where it was written", ordered))

    # no_foreign_read
    def enum_foreign() -> dict[str, Any] | None:
        for inst in insts:
            owner: dict[int, tuple[int, int]] = {}
            for ci in range(len(copies)):
                keys = _key(inst.w_out[ci], outs, inst.env).reshape(-1)
                for k in np.flatnonzero(np.asarray(inst.w_in[ci]).reshape(-1)).tolist():
                    owner.setdefault(int(keys[k]), (k, ci))
            rkeys = _key(inst.r_out, outs, inst.env).reshape(-1)
            rin = np.asarray(inst.r_in).reshape(-1)
            for k in np.flatnonzero(rin).tolist():
                hit = owner.get(int(rkeys[k]))
                if hit is not None and hit[0] != k:
                    p, q = _point(inst, k), _point(inst, hit[0])
                    return {"params": inst.env, "element": p, "at": reader.at(p, inst.env), "owner": q,
                            "owner_copy": copies[hit[1]]}
        return None

    results.append(_join("no_foreign_read", enum_foreign(), z.foreign(),
                         lambda c: f"{pre(c)}{rname} reads {elem(c['element'])} from {loc(c['at'])}, where the "
                                   f"{wname} writes {elem(c['owner'])}{_copy(c['owner_copy'])}",
                         "no element is read from another element's place", False))

    # no_padding_read
    def enum_padding() -> dict[str, Any] | None:
        for inst in insts:
            written = np.zeros(inst.shape, bool)
            for ci in range(len(copies)):
                written |= inst.w_ok[ci]
            k = _first(inst.r_ok & ~written)
            if k is not None:
                p = _point(inst, k)
                return {"params": inst.env, "element": p, "at": reader.at(p, inst.env)}
        return None

    results.append(_join("no_padding_read", enum_padding(), z.padding(),
                         lambda c: f"{pre(c)}{rname} reads {elem(c['element'])} from {loc(c['at'])}, which the "
                                   f"{wname} never writes (padding)",
                         "every element read was written", ordered))
    return Decision(wname, rname, tuple(results), {p.name: tuple(p.values) for p in params}, writer, reader)


def _first_written(inst: _Instance, k: int) -> int:
    for ci, ok in enumerate(inst.w_ok):
        if np.asarray(ok).reshape(-1)[k]:
            return ci
    return 0


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
    cex, enum = _place(name, cex), _place(name, enum)
    return combine_engines(name, "proved", smt.status(status), cex, enum, message, time.perf_counter() - t0, note, confirm,
                           same_witness=same_witness and cex is not None and enum is not None)


# ----------------------------------------------------------------------------- Z3

class _Z3:
    """The Z3 side of each property: one query with the parameters free, the witness minimised to the canonical
    point and re-checked with the scalar reference."""

    def __init__(self, writer: NamedMap, reader: NamedMap, params: tuple[Any, ...], extra: tuple[Dim, ...],
                 copies: list[dict[str, int]], timeout: float) -> None:
        self.writer, self.reader, self.params, self.extra, self.copies = writer, reader, params, extra, copies
        self.timeout = timeout
        self.w = width(writer, reader)
        self.env = {p.name: z3.BitVec(f"param_{p.name}", self.w) for p in params}
        self.valid = param_constraint(params, self.env, self.w)
        self.xdims = tuple(reader.inputs)
        self.outs = tuple(writer.outputs)

    def _x(self, tag: str) -> dict[str, z3.BitVecRef]:
        return variables(self.xdims, self.w, tag)

    def _box_x(self, x: Mapping[str, z3.ExprRef]) -> z3.BoolRef:
        return in_box(x, self.xdims, self.env, self.w)

    def _wcopy(self, x: Mapping[str, z3.ExprRef], cp: Mapping[str, int]) -> tuple[z3.BoolRef, dict[str, z3.ExprRef]]:
        pt = dict(x)
        pt.update({k: smt.bv(v, self.w) for k, v in cp.items()})
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
        x = self._x("")
        best: tuple[str, dict[str, Any] | None] = ("unsat", None)
        for cp in self.copies:  # the first copy (in order) with a point outside, at its first element
            ok, y = self._wcopy(x, cp)
            res, m = self._solve([self._box_x(x), ok, z3.Not(self._inside(y))], list(x.values()))
            if res == "unknown":
                best = ("unknown", None)
                break
            if res == "sat" and m is not None:
                e, p = self._params_of(m), self._pt(m, x)
                cand = {"params": e, "element": p, "copy": cp, "at": self._wat(p, cp, e)}
                if best[1] is None or _order(cand, best[1]):
                    best = ("sat", cand)
        return best[0], best[1], lambda c: (c["at"] is not None and
                                            not self._inside_at(self._wat(c["element"], c["copy"], c["params"]), c["params"]))

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
        x1, x2 = self._x("1"), self._x("2")
        n = len(self.copies)
        c1, c2 = z3.BitVec("copy_1", self.w), z3.BitVec("copy_2", self.w)
        alts = []
        for i, cpa in enumerate(self.copies):
            ok1, y1 = self._wcopy(x1, cpa)
            for j, cpb in enumerate(self.copies):
                ok2, y2 = self._wcopy(x2, cpb)
                alts.append(z3.And(c1 == i, c2 == j, ok1, ok2, self._inside(y1), self._inside(y2),
                                   *[y1[d.name] == y2[d.name] for d in self.outs]))
        k1 = [*x1.values(), c1]
        k2 = [*x2.values(), c2]
        res, m = self._solve([self._box_x(x1), self._box_x(x2), c1 < n, c2 < n, c1 >= 0, c2 >= 0,
                              _lex_less(k1, k2), z3.Or(alts)], [*k2, *k1])
        cex = None
        if res == "sat" and m is not None:
            e = self._params_of(m)
            p1, p2 = self._pt(m, x1), self._pt(m, x2)
            a, b = self.copies[smt.as_int(m, c1)], self.copies[smt.as_int(m, c2)]
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
        x, xo = self._x("r"), self._x("w")
        okr, yr = self.reader.encode(x, self.env)
        c = z3.BitVec("copy_w", self.w)
        alts = []
        for i, cp in enumerate(self.copies):
            okw, yw = self._wcopy(xo, cp)
            alts.append(z3.And(c == i, okw, self._inside(yw), *[yw[d.name] == yr[d.name] for d in self.outs]))
        differ = z3.Or([x[d.name] != xo[d.name] for d in self.xdims])
        res, m = self._solve([self._box_x(x), self._box_x(xo), okr, self._inside(yr), differ, c >= 0,
                              c < len(self.copies), z3.Or(alts)], [*x.values(), *xo.values(), c])
        cex = None
        if res == "sat" and m is not None:
            e, p, q = self._params_of(m), self._pt(m, x), self._pt(m, xo)
            cex = {"params": e, "element": p, "at": self.reader.at(p, e), "owner": q,
                   "owner_copy": self.copies[smt.as_int(m, c)]}

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


def _order(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """``a`` comes before ``b`` (parameters, element, then copy order)."""
    ka = (tuple(a["params"].values()), tuple(a["element"].values()))
    kb = (tuple(b["params"].values()), tuple(b["element"].values()))
    return ka < kb


def _lex_less(a: Sequence[z3.ExprRef], b: Sequence[z3.ExprRef]) -> z3.BoolRef:
    if not a:
        return z3.BoolVal(False)
    return z3.Or(a[0] < b[0], z3.And(a[0] == b[0], _lex_less(a[1:], b[1:])))


__all__ = ["Decision", "PROPERTIES", "chain", "decide"]
