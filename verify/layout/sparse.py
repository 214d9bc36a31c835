"""The sparse-A layout of ``mma.sp``: compressed cells, logical columns, metadata and selector.

The doc gives sparse A as ``col = [firstcol ... lastcol]``: a lane holds the *kept* (non-zero)
elements of the chunks in that logical column range, in register order.  This module makes that
precise (docs/sparse.md has the full definition):

* rank(lane, i): how many elements i' < i of the same lane have the same row and the same
  ``firstcol`` (the order of i among the lane's elements of that (row, range)).
* compressed column: ``firstcol / chunk * kept + rank``; the element is well placed when the
  range is chunk-aligned and ``rank < (lastcol - firstcol + 1) / chunk * kept``.  Sparse A's
  in_range / injective / surjective are then about rows x (K * kept / chunk) compressed slots.
* its chunk: ``firstcol / chunk + rank / kept`` (absolute chunk of the row), ``j = rank % kept``
  its position among the chunk's kept elements.
* logical column under a chunk's 4-bit metadata field m: with 2-bit indices (two per chunk,
  LSB first, each naming a ``w = kept / 2`` wide sub-chunk): ``chunk * chunk_width +
  w * ((m >> 2 * (j / w)) & 3) + j % w``; with the .tf32 4-bit index: ``chunk * 2 + ((m & 3) >> 1)``
  (derived decode: the doc states only that 0b0100 and 0b1110 are the meaningful values).

``SparseMap`` is a fragment's named map (``verify.layout.fragment_maps``) whose cells are the compressed cells, with three independent
evaluations from the AST: ``py_*`` with ``verify.engines.oracle`` (one point), ``info`` with
``verify.engines.vector`` (every point) and ``z3_*`` with ``verify.engines.smt`` (symbolic).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Hashable, Mapping, Sequence

import numpy as np
import z3

from ..engines import oracle, smt, vector
from ..formula import Case, Definition, Formula, Span, parse_lane_expression
from ..formula.bounds import value_bound
from .memo import held
from .fragment_maps import FragmentKind
from .domain import Cells, Codomain, Domain, Env
from .records import Shape

NIBBLES_PER_REGISTER = 8  # every chunk has a 4-bit metadata field; a .b32 holds eight
CANONICAL_METADATA = 0x44444444  # every chunk: indices 0 and 1 (0b0100), valid in every scheme


# ----------------------------------------------------------------------------- model parameters

@dataclass(frozen=True)
class SparseModel:
    kept: int
    chunk: int
    index_bits: int
    fields: int
    valid: tuple[int, ...]
    ordered: tuple[int, ...]
    selectors: tuple[int, ...]
    selector: Formula
    metadata: Formula | None
    metadata_derived: str
    canonical: int
    k: int  # logical K
    lanes_needed: int  # metadata-supplying lanes per group of four
    stated: tuple[str, ...] = ()  # which fields the spec gives (the rest are defaults, docs/sparse.md)
    defaults: tuple[str, ...] = field(default=())

    @property
    def invalid(self) -> tuple[int, ...]:
        return tuple(m for m in range(16) if m not in self.valid)

    @property
    def chunks_per_row(self) -> int:
        return self.k // self.chunk

    @property
    def width(self) -> int:
        """Elements named by one 2-bit index (1, or 2 for the pair-wise 4:8 of .u4/.s4)."""
        return max(1, self.kept // 2)


def _default_kept_chunk(types: Sequence[str], shape: Shape) -> tuple[int, int]:
    t = set(types)
    assert isinstance(shape.k, int)  # an mma.sp shape is concrete (no family parameter)
    if t & {"tf32"}:
        return 1, 2
    if t & {"u4", "s4"} or (t == {"e2m1"} and shape.k >= 128):
        return 4, 8
    return 2, 4


def build_model(table: Mapping[str, Any], types: Sequence[str], shape: Shape, rows: int, threads: int) -> SparseModel:
    """The sparse parameters of a sparse-A layout: the spec's ``[fragment.sparse]`` fields, else
    the doc's general rules."""
    sp = dict(table)
    stated = tuple(sorted(k for k in sp if not k.endswith("_formula")))
    kept, chunk = (sp["kept"], sp["chunk"]) if "kept" in sp else _default_kept_chunk(types, shape)
    index_bits = sp.get("index_bits", 4 if chunk == 2 else 2)
    fields = sp.get("fields", 32 // index_bits)
    if index_bits == 2:
        valid = tuple(m for m in range(16) if (m & 3) != (m >> 2))
        ordered = tuple(m for m in range(16) if (m & 3) < (m >> 2))
    else:
        valid = ordered = (0b0100, 0b1110)
    if "invalid" in sp:
        valid = tuple(m for m in range(16) if m not in sp["invalid"])
    valid = tuple(sp.get("valid", valid))
    ordered = tuple(sp.get("ordered", ordered))
    k = shape.k
    assert isinstance(k, int)  # an mma.sp shape is concrete (no family parameter)
    groups_of_four = max(1, threads // 4)
    bits = rows * (k // max(chunk, 1)) * 4
    lanes_needed = max(1, bits // groups_of_four // 32)
    selectors = tuple(sp.get("selectors", range(max(1, 4 // lanes_needed))))
    if "selector_formula" in sp:
        selector = sp["selector_formula"]
    else:
        text = {1: "%laneid % 4", 2: "(%laneid % 4) >> 1"}.get(lanes_needed, "0")
        selector = parse_lane_expression(text, "selector")
    return SparseModel(kept, chunk, index_bits, fields, valid, ordered, selectors, selector,
                       sp.get("metadata_formula"), sp.get("metadata_derived", ""),
                       sp.get("canonical", CANONICAL_METADATA), k, lanes_needed, stated)


def is_sparse(layout: Any) -> bool:
    """True for a sparse A (its map is a ``SparseMap``)."""
    return isinstance(getattr(layout, "map", None), SparseMap)


def is_range_formula(formula: Formula) -> bool:
    """True when ``col`` gives a column range (``[firstcol ... lastcol]``): a sparse A."""
    return any(isinstance(c.expr, Span) for c in formula.get("col").cases)


def normalized(formula: Formula) -> Formula:
    """``col`` with every case a Span (a plain column c is the range [c ... c])."""
    defs = []
    for d in formula.definitions:
        if d.name == "col":
            d = Definition(d.name, tuple(c if isinstance(c.expr, Span) else Case(Span(c.expr, c.expr, c.pos), c.cond, c.pos)
                                         for c in d.cases), d.pos)
        defs.append(d)
    return Formula(tuple(defs), formula.element_prefix)


def logical_column(md: SparseModel, chunk_index: int, j: int, m: int) -> int:
    """The logical column of kept element j of a chunk under its 4-bit metadata field m."""
    base = chunk_index * md.chunk
    if md.index_bits == 4:
        return base + ((m & 3) >> 1)
    w = md.width
    return base + w * ((m >> (2 * (j // w))) & 3) + j % w


# ----------------------------------------------------------------------------- one point (oracle)

@dataclass
class PointInfo:
    row: int
    first: int
    last: int
    rank: int
    ok: bool
    reason: str
    col: int | None
    chunk: int | None
    j: int | None


def _reason(md: SparseModel, first: int, last: int, rank: int) -> str:
    """Why an element is not well placed ('' when it is)."""
    width = last - first + 1
    if width <= 0:
        return f"empty range [{first} ... {last}]"
    if oracle.c_rem(first, md.chunk) != 0 or width % md.chunk:
        return f"range [{first} ... {last}] is not made of whole {md.chunk}-wide chunks"
    if rank >= width // md.chunk * md.kept:
        return (f"it is kept element {rank + 1} of range [{first} ... {last}], which holds only "
                f"{width // md.chunk * md.kept} ({md.kept} per {md.chunk}-wide chunk)")
    return ""


# ----------------------------------------------------------------------------- every point (vector)

@dataclass(frozen=True)
class SparseInfo:
    """Every (lane, i) of a sparse A at once; arrays ``[threads, elements]``."""

    defined: np.ndarray
    ok: np.ndarray  # defined and well placed
    row: np.ndarray
    first: np.ndarray
    last: np.ndarray
    rank: np.ndarray
    col: np.ndarray  # compressed column (where ok)
    chunk: np.ndarray
    j: np.ndarray


# ----------------------------------------------------------------------------- the map

# Evaluations are memoised on the map itself (``held``: a memo that pickles empty, so maps stay picklable).


def clear_caches() -> None:
    _evaluated_table.cache_clear()


@dataclass(frozen=True)
class SparseMap(FragmentKind):
    """Sparse A: (lane, i) -> (row, compressed column), plus the logical view under metadata (a partial map:
    an element that is not well placed has no cell)."""

    formula: Formula  # as the doc states it (col is a column range)
    table: Mapping[str, Any]  # the validated [fragment.sparse] table
    model: SparseModel
    elements: int  # per lane: the rank of an element counts the lane's earlier ones
    notation: str = "formula"
    domain: Domain | None = None
    codomain: Codomain | None = None

    @property
    def normal(self) -> Formula:
        return normalized(self.formula)

    def _key(self) -> Hashable:
        return (self.formula, self.model, self.elements)

    def cell_bound(self, domain: Domain) -> int:
        return value_bound(self.formula, domain.threads - 1, domain.count - 1)

    # -- one point: the oracle
    def _lane(self, lane: int) -> list[tuple[int, int, int] | None]:
        return held(self, "_lanes", lane, lambda: self._lane_points(lane))

    def _lane_points(self, lane: int) -> list[tuple[int, int, int] | None]:
        out: list[tuple[int, int, int] | None] = []
        formula = self.normal
        for i in range(self.elements):
            ev = oracle.Evaluator(formula, lane, i)
            try:
                r, span = ev.value("row"), ev.value("col")
            except oracle.Undefined:
                out.append(None)
                continue
            if isinstance(r, tuple) or not isinstance(span, tuple):
                raise oracle.EvalError("sparse A needs a number for row and a range for col",
                                       self.formula.get("col").pos)
            out.append((r, span[0], span[1]))
        return out

    def point_info(self, lane: int, i: int) -> PointInfo | None:
        """Everything about one element, by the oracle."""
        elems = self._lane(lane)
        e = elems[i]
        if e is None:
            return None
        row, first, last = e
        rank = sum(1 for k in range(i) if (ek := elems[k]) is not None and ek[0] == row and ek[1] == first)
        md = self.model
        reason = _reason(md, first, last, rank)
        if reason:
            return PointInfo(row, first, last, rank, False, reason, None, None, None)
        col = oracle.c_div(first, md.chunk) * md.kept + rank
        chunk_index = oracle.c_div(first, md.chunk) + rank // md.kept
        return PointInfo(row, first, last, rank, True, "", col, chunk_index, rank % md.kept)

    def _point(self, thread: int, i: int) -> tuple[int, int] | None:
        info = self.point_info(thread, i)
        if info is None or not info.ok:
            return None
        return info.row, info.col  # type: ignore[return-value]

    def point_logical(self, lane: int, i: int, m: int) -> int | None:
        info = self.point_info(lane, i)
        if info is None or not info.ok:
            return None
        return logical_column(self.model, info.chunk, info.j, m)  # type: ignore[arg-type]

    # -- every point: the vectorised engine
    def info(self, domain: Domain) -> SparseInfo:
        """Every element at once (memoised per map and domain: each sparse check asks)."""
        return held(self, "_info", domain, lambda: self._info(domain))

    def _info(self, domain: Domain) -> SparseInfo:
        shape = (domain.threads, domain.count)
        ev = vector.VectorEvaluator(self.normal, np.arange(domain.threads)[:, None], np.arange(domain.count)[None, :])
        r, c = ev.full("row"), ev.full("col")
        err = vector.either(r.err, vector.within(r.ok, c.err))
        defined = vector.both(r.ok, c.ok)
        bad_kind = None if r.span is None else vector.within(defined, r.span)
        if c.span is not None:
            bad_kind = vector.either(bad_kind, vector.within(defined, ~c.span))
        if (err is not None and err.any()) or (bad_kind is not None and bad_kind.any()):
            for lane in range(domain.threads):  # the oracle names the first failing point exactly
                self._lane(lane)
            raise AssertionError("the vectorised engine reported an error that the oracle does not find")
        d = np.ones(shape, bool) if defined is None else np.ascontiguousarray(defined, bool)
        row = np.asarray(r.lo, np.int64)
        first = np.asarray(c.lo, np.int64)
        last = np.asarray(c.hi, np.int64)
        n = domain.count
        earlier = np.tri(n, n, -1, dtype=bool).T  # earlier[k, i]: k < i
        same = (row[:, :, None] == row[:, None, :]) & (first[:, :, None] == first[:, None, :]) & d[:, :, None] & d[:, None, :]
        rank = (same & earlier[None, :, :]).sum(axis=1).astype(np.int64)
        md = self.model
        width = last - first + 1
        rem = first - md.chunk * _cdiv(first, md.chunk)
        placed = d & (width > 0) & (rem == 0) & (np.where(width > 0, width, 1) % md.chunk == 0)
        placed &= rank < np.where(width > 0, width, 0) // md.chunk * md.kept
        base = _cdiv(first, md.chunk)
        return SparseInfo(d, placed, row, first, last, rank, base * md.kept + rank, base + rank // md.kept,
                          rank % md.kept)

    def grid(self, domain: Domain, env: Env | None = None) -> Cells:
        inf = self.info(domain)
        return Cells(inf.row, inf.col, inf.ok, domain.group_array())

    def logical(self, inf: SparseInfo, m: int | np.ndarray) -> np.ndarray:
        """Logical columns of every element under metadata field(s) ``m`` (where ``inf.ok``)."""
        return self.logical_at(inf.chunk, inf.j, m)

    def logical_at(self, chunk: np.ndarray, j: np.ndarray, m: int | np.ndarray) -> np.ndarray:
        """Logical columns of kept elements ``j`` of chunks ``chunk`` under metadata field(s) ``m``."""
        md = self.model
        base = chunk * md.chunk
        m = np.asarray(m, np.int64)
        if md.index_bits == 4:
            return base + ((m & 3) >> 1)
        w = md.width
        return base + w * ((m >> (2 * (j // w))) & 3) + j % w

    # -- symbolic: the SMT engine
    def z3_info(self, lane: z3.BitVecRef, i: z3.BitVecRef) -> dict[str, Any]:
        """Terms for one symbolic element (memoised per symbolic point: checks share them).  The map is
        encoded once per width, over a point of its own; each point asked for is substituted into those
        terms (encoding the formula and its rank sum again for a second point costs ten times more)."""
        def at_point() -> dict[str, Any]:
            lane0, i0, info = self._z3_base(lane.size())
            return {k: t if t is smt.TRUE else smt.substitute(t, (lane0, lane), (i0, i)) for k, t in info.items()}
        return held(self, "_z3_info", (lane.sexpr(), i.sexpr(), lane.size()), at_point)

    def _z3_base(self, w: int) -> tuple[z3.ExprRef, z3.ExprRef, dict[str, Any]]:
        def encode() -> tuple[z3.ExprRef, z3.ExprRef, dict[str, Any]]:
            lane0, i0 = z3.BitVec("sparse lane", w), z3.BitVec("sparse i", w)  # names no formula can use
            return lane0, i0, self._z3_info(lane0, i0)
        return held(self, "_z3_base", w, encode)

    def _z3_info(self, lane: z3.BitVecRef, i: z3.BitVecRef) -> dict[str, Any]:
        w = lane.size()
        md = self.model
        enc = smt.Encoder(self.normal, lane, i)
        row, col = enc.definition("row"), enc.definition("col")
        first, last = col.value
        defined = smt.conj(row.ok, col.ok)
        rank = z3.simplify(_rank(row.value, first, defined, i, self.elements))
        chunk_bv, kept_bv = smt.bv(md.chunk, w), smt.bv(md.kept, w)
        width = last - first + 1
        placed = z3.And(width > 0, z3.SRem(first, chunk_bv) == 0, z3.SRem(width, chunk_bv) == 0,
                        rank < (width / chunk_bv) * kept_bv)
        return {"defined": defined, "ok": smt.conj(defined, placed), "row": row.value, "first": first,
                "last": last, "rank": rank, "col": (first / chunk_bv) * kept_bv + rank,
                "chunk": first / chunk_bv + rank / kept_bv, "j": z3.SRem(rank, kept_bv)}

    def _z3(self, thread: z3.BitVecRef, i: z3.BitVecRef,
            env: Mapping[str, z3.ExprRef] | None = None) -> tuple[z3.BoolRef, z3.ExprRef, z3.ExprRef]:
        info = self.z3_info(thread, i)
        return info["ok"], info["row"], info["col"]

    def z3_logical(self, info: Mapping[str, Any], m: z3.BitVecRef) -> z3.ExprRef:
        md = self.model
        w = m.size()
        base = info["chunk"] * smt.bv(md.chunk, w)
        if md.index_bits == 4:
            return base + z3.LShR(m & smt.bv(3, w), smt.bv(1, w))
        ww = smt.bv(md.width, w)
        j = info["j"]
        idx = z3.LShR(m, smt.bv(2, w) * (j / ww)) & smt.bv(3, w)
        return base + ww * idx + z3.SRem(j, ww)


def _rank(row: z3.ExprRef, first: z3.ExprRef, defined: z3.BoolRef, i: z3.BitVecRef, n: int) -> z3.ExprRef:
    """How many elements k < i of the lane share the element's row and ``firstcol``: the term "element k
    counts" is built once over a symbolic k, and each k in 0..n-1 substituted into it."""
    w = i.size()
    k = z3.BitVec("rank k", w)  # the name cannot occur in a formula (it has a space)
    at_k = [(i, k)]
    defined_k = smt.TRUE if defined is smt.TRUE else smt.substitute(defined, *at_k)
    counts = smt.conj(k < i, defined_k, smt.substitute(row, *at_k) == row, smt.substitute(first, *at_k) == first)
    return count_true([smt.substitute(counts, (k, smt.bv(kk, w))) for kk in range(n)], w)


def count_true(conds: Sequence[z3.BoolRef], w: int) -> z3.ExprRef:
    """How many of ``conds`` hold, as a ``w``-bit term (``If(c, 1, 0) + ...``, built through the C API)."""
    one, zero = smt.bv(1, w), smt.bv(0, w)
    ctx = zero.ctx
    total = zero
    for c in conds:  # every intermediate term wrapped at once: the wrapper holds Z3's reference to it
        term = z3.BitVecRef(z3.Z3_mk_ite(ctx.ref(), c.as_ast(), one.as_ast(), zero.as_ast()), ctx)
        total = z3.BitVecRef(z3.Z3_mk_bvadd(ctx.ref(), total.as_ast(), term.as_ast()), ctx)
    return total


# ----------------------------------------------------------------------------- the metadata layout

def selector_of(md: SparseModel, lane: int) -> int | None:
    """The sparsity-selector value that names ``lane`` (the oracle; memoised per formula and lane)."""
    return _selector(md.selector, lane)


def metadata_cell(md: SparseModel, lane: int, n: int) -> tuple[int, int] | None:
    """(row, chunk) whose index field nibble ``n`` of ``lane``'s metadata register holds (the oracle)."""
    assert md.metadata is not None
    return _metadata_cell(md.metadata, lane, n)


@lru_cache(maxsize=1 << 14)
def _selector(selector: Formula, lane: int) -> int | None:
    v = oracle.evaluate(selector, "selector", lane, 0)
    return v if isinstance(v, int) else None


@lru_cache(maxsize=1 << 14)
def _metadata_cell(metadata: Formula, lane: int, n: int) -> tuple[int, int] | None:
    ev = oracle.Evaluator(metadata, lane, n)
    try:
        r, c = ev.value("row"), ev.value("col")
    except oracle.Undefined:
        return None
    return (r, c) if isinstance(r, int) and isinstance(c, int) else None


_FAILS = object()  # a point where the vectorised engine finds an evaluation error


@dataclass(frozen=True)
class MetadataTable:
    """The selector and the metadata layout at every lane and nibble, evaluated by the vectorised engine
    (the enumeration side of the metadata checks scans these instead of asking the oracle point by point).
    At a point where evaluation fails the oracle is asked, and raises its error there: a scan stops at
    the first failing point it reaches, as a scan with the oracle did."""

    md: SparseModel
    names: list[Any]  # per lane: the selector value naming it, None, or _FAILS
    cells: list[list[Any]]  # per lane and nibble: (row, chunk), None, or _FAILS

    def selector(self, lane: int) -> int | None:
        """The selector value that names ``lane`` (as ``selector_of``)."""
        v = self.names[lane]
        return selector_of(self.md, lane) if v is _FAILS else v

    def cell(self, lane: int, n: int) -> tuple[int, int] | None:
        """(row, chunk) of nibble ``n`` of ``lane`` (as ``metadata_cell``)."""
        v = self.cells[lane][n]
        return metadata_cell(self.md, lane, n) if v is _FAILS else v


def metadata_table(md: SparseModel, threads: int) -> MetadataTable:
    """The table of ``md``'s selector and metadata layout over ``threads`` lanes (evaluated once per formulas;
    an error is raised by the oracle with ``md``'s own formulas, so at their positions)."""
    assert md.metadata is not None
    return MetadataTable(md, *_evaluated_table(md.selector, md.metadata, threads))


@lru_cache(maxsize=64)
def _evaluated_table(selector: Formula, metadata: Formula, threads: int) -> tuple[list[Any], list[list[Any]]]:
    lanes = np.arange(threads)
    sel = vector.evaluate(selector, "selector", lanes, np.zeros_like(lanes))
    names = _values(sel.lo, sel.ok, sel.err, _mask(sel.span)).tolist()
    ev = vector.VectorEvaluator(metadata, lanes[:, None], np.arange(NIBBLES_PER_REGISTER)[None, :])
    r, c = ev.full("row"), ev.full("col")
    err = vector.either(r.err, vector.within(r.ok, c.err))  # col is evaluated where row is defined
    rows = _values(r.lo, vector.both(r.ok, c.ok), err, _mask(r.span) | _mask(c.span)).tolist()
    cells = [[x if x is None or x is _FAILS else (x, int(cc)) for x, cc in zip(rr, cr)]
             for rr, cr in zip(rows, np.asarray(c.lo).tolist())]
    return names, cells


def _mask(m: np.ndarray | None) -> np.ndarray:
    return np.zeros((), bool) if m is None else m


def _values(lo: np.ndarray, ok: np.ndarray | None, err: np.ndarray | None, span: np.ndarray) -> np.ndarray:
    """Object array of the values: int where defined and a number, None where undefined or a column
    range (the oracle's ``None``), ``_FAILS`` where evaluation fails."""
    lo = np.asarray(lo)
    good = (np.ones(lo.shape, bool) if ok is None else np.asarray(ok, bool)) & ~span
    out = np.full(lo.shape, None, object)
    out[good] = [int(x) for x in lo[good].tolist()]
    if err is not None:
        out[err] = _FAILS
    return out


def metadata_owner(md: SparseModel, threads: int, selector: int) -> dict[tuple[int, int], tuple[int, int]]:
    """(row, chunk) -> (lane, nibble) for one selector value (enumeration)."""
    out: dict[tuple[int, int], tuple[int, int]] = {}
    if md.metadata is None:
        return out
    for lane in range(threads):
        if selector_of(md, lane) != selector:
            continue
        for n in range(NIBBLES_PER_REGISTER):
            cell = metadata_cell(md, lane, n)
            if cell is not None:
                out.setdefault(cell, (lane, n))
    return out



def _cdiv(a: np.ndarray, b: int) -> np.ndarray:
    """C division (truncating) of an int64 array by a positive constant."""
    q = np.abs(a) // b
    return np.where(a >= 0, q, -q)
