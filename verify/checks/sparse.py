"""The sparse checks of ``mma.sp``: chunks, metadata values, and the metadata layout.

* ``chunk_ranges``: every kept element lies in a whole-chunk ``[firstcol ... lastcol]`` inside
  [0, K) with room for it;
* ``metadata_distinct`` / ``metadata_ordered`` / ``metadata_invalid``: what each metadata value
  does to the logical columns of a chunk's kept elements;
* ``metadata_budget`` / ``metadata_group``: which lane supplies which (row, chunk) index field
  (derived layouts, see docs/sparse.md).

Each is decided by Z3 (from ``SparseMap``'s symbolic face) and by enumeration (its vectorised
face, and the scalar oracle for witnesses); ``verify.results.combine_engines`` joins them.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import z3

from ..engines import smt
from ..layout.model import Layout
from ..layout.sparse import (NIBBLES_PER_REGISTER, MetadataTable, PointInfo, SparseInfo, SparseMap, SparseModel,
                             count_true, metadata_owner, metadata_table, selector_of as _py_selector,
                             metadata_cell as _py_meta)
from ..results import CheckResult, combine_engines
from ..witnesses import MetadataBudget, MetadataField, SparseMetadata, SparseRange, Witness
from .fragment import width


class _Sparse:
    """One sparse A as the checks see it: its layout, model and map, with evaluations shared."""

    def __init__(self, layout: Layout) -> None:
        assert isinstance(layout.map, SparseMap)
        self.layout = layout
        self.map: SparseMap = layout.map
        self.model: SparseModel = layout.map.model
        self.formula = layout.map.normal
        self.memo: dict[str, Any] = {}  # Z3 terms and the joint query, built once for every check of the layout

    def py_info(self, lane: int, i: int) -> PointInfo | None:
        return self.map.point_info(lane, i)

    def py_logical(self, lane: int, i: int, m: int) -> int | None:
        return self.map.point_logical(lane, i, m)

    def z3_info(self, lane: z3.BitVecRef, i: z3.BitVecRef) -> dict[str, Any]:
        return self.map.z3_info(lane, i)

    def z3_logical(self, info: dict[str, Any], m: z3.BitVecRef) -> z3.ExprRef:
        return self.map.z3_logical(info, m)

    def once(self, name: str, build: Callable[[], Any]) -> Any:
        """``build()``, computed on the first call for this layout (the checks share terms and queries)."""
        if name not in self.memo:
            self.memo[name] = build()
        return self.memo[name]


def _width(cells: _Sparse) -> int:
    md = cells.model
    return max(width(cells.layout), smt.width_for(max(md.k * 4, md.chunk * 16, 64, cells.layout.threads * 4)))


def _el(layout: Layout, lane: int, i: int) -> dict[str, Any]:
    return {"lane": lane, "i": i, "element": layout.element_name(i)}


def _result(name: str, expect: str, z3_status: str, z3_cex: Witness | None, enum_cex: Witness | None,
            message: Callable[[Any], str], confirm: Callable[[Any], bool] | None,
            seconds: float, note: str = "") -> CheckResult:
    return combine_engines(name, expect, z3_status, z3_cex, enum_cex, message, seconds, note, confirm)


def _in_set(x: z3.ExprRef, values: tuple[int, ...], w: int) -> z3.BoolRef:
    return smt.any_of([smt.CMP["=="](x, smt.bv(v, w)) for v in values]) if values else z3.BoolVal(False)


def check_chunk_ranges(cells: _Sparse, timeout: float) -> CheckResult:
    """Every kept element lies in a whole-chunk range inside [0, K) with room for it."""
    lay, md = cells.layout, cells.model
    t0 = time.perf_counter()
    proved, budget = _joint(cells, timeout, t0)
    enum_cex: SparseRange | None = None
    inf = cells.map.info(lay.domain)  # every element at once; the first bad one described by the oracle
    bad = np.flatnonzero((inf.defined & (~inf.ok | (inf.first < 0) | (inf.last >= md.k))).ravel())
    if bad.size:
        lane, i = divmod(int(bad[0]), lay.n_elements)
        point = cells.py_info(lane, i)
        assert point is not None
        reason = point.reason or f"range [{point.first} ... {point.last}] leaves [0, {md.k})"
        enum_cex = SparseRange(lane, i, lay.element_name(i), point.row, point.first, point.last, point.rank, reason)
    lane, i, info, misplaced = _range_terms(cells)
    res, m = ("unsat", None) if proved else smt.solve([misplaced], budget)
    z3_cex: SparseRange | None = None
    if m is not None:
        ln, ix = smt.as_int(m, lane), smt.as_int(m, i)
        pi = cells.py_info(ln, ix)
        reason = (pi.reason or f"range [{pi.first} ... {pi.last}] leaves [0, {md.k})") if pi else "undefined"
        z3_cex = SparseRange(ln, ix, lay.element_name(ix), smt.as_int(m, info["row"]), smt.as_int(m, info["first"]),
                             smt.as_int(m, info["last"]), smt.as_int(m, info["rank"]), reason)

    def confirm(c: dict[str, Any]) -> bool:
        p = cells.py_info(c["lane"], c["i"])
        return p is not None and (not p.ok or p.first < 0 or p.last >= md.k)

    return _result("chunk_ranges", "proved", smt.status(res), z3_cex, enum_cex,
                   lambda c: f"{lay.id}: lane {c['lane']} element {c['element']} (row {c['row']}): {c['reason']}",
                   confirm, time.perf_counter() - t0,
                   f"every kept element lies in its lane's [firstcol ... lastcol], whole {md.chunk}-wide chunks "
                   f"inside [0, {md.k}), at most {md.kept} kept per chunk")


def _range_terms(cells: _Sparse) -> tuple[z3.BitVecRef, z3.BitVecRef, dict[str, Any], z3.BoolRef]:
    """(lane, i, the element's terms, "it is defined and not well placed inside [0, K)")."""
    def build() -> tuple[z3.BitVecRef, z3.BitVecRef, dict[str, Any], z3.BoolRef]:
        lay, md = cells.layout, cells.model
        lane, i = lay.domain.z3_point("lane1 i1", _width(cells))
        info = cells.z3_info(lane, i)
        good = z3.And(info["ok"], info["first"] >= 0, info["last"] < md.k)
        return lane, i, info, z3.And(smt.in_domain(lane, i, lay.threads, lay.n_elements), info["defined"], z3.Not(good))
    return cells.once("range", build)


def _pairs_enum(cells: _Sparse, values: tuple[int, ...], ordered: bool) -> SparseMetadata | None:
    """Enumeration: two kept elements of one (row, chunk) on one logical column (or out of order).

    The pairs are the same for both engines: two distinct well-placed elements of one (row, chunk),
    the first before the second in (compressed column, lane, i) order; ``distinct`` fails when they
    land on one logical column, ``ordered`` when the first's logical column is not below the second's.
    Vectorised over the whole domain; the witness is the first in (metadata value, row, chunk, first,
    second) order, as a loop over the elements would find it.
    """
    lay, md = cells.layout, cells.model
    inf = cells.map.info(lay.domain)
    ln, ix = np.nonzero(inf.ok)  # (lane, i) order
    row, col, chunk, j = (a[ln, ix] for a in (inf.row, inf.col, inf.chunk, inf.j))
    order = np.lexsort((ix, ln, col, chunk, row))  # by (row, chunk), then (compressed column, lane, i)
    s_row, s_chunk = row[order], chunk[order]
    # how many elements share each (row, chunk), counted on one integer per pair: np.unique over the stacked rows
    # sorts void views element by element (2% of a whole check's instructions)
    c0 = int(chunk.min()) if chunk.size else 0
    span = int(chunk.max()) - c0 + 1 if chunk.size else 1
    _, sizes = np.unique(row.astype(np.int64) * span + (chunk - c0), return_counts=True)
    widest = int(sizes.max()) if sizes.size else 0
    for m in values:
        lc = cells.map.logical_at(chunk, j, m)
        outside = (lc < chunk * md.chunk) | (lc >= (chunk + 1) * md.chunk)
        if outside.any():
            k = int(np.argmax(outside))
            return SparseMetadata(m, _el(lay, int(ln[k]), int(ix[k])), None, int(row[k]), int(chunk[k]), int(lc[k]))
        s_lc = lc[order]
        best: tuple[int, int] | None = None
        for d in range(1, widest):  # element k of the sorted order against element k + d of its group
            same = (s_row[:-d] == s_row[d:]) & (s_chunk[:-d] == s_chunk[d:])
            bad = same & ((s_lc[:-d] == s_lc[d:]) | (ordered & (s_lc[:-d] >= s_lc[d:])))
            if bad.any():
                k = int(np.argmax(bad))
                best = min(best or (k, k + d), (k, k + d))
        if best is not None:
            a, b = (int(order[k]) for k in best)
            la, lb = int(lc[a]), int(lc[b])
            return SparseMetadata(m, _el(lay, int(ln[a]), int(ix[a])), _el(lay, int(ln[b]), int(ix[b])), int(row[a]),
                                  int(chunk[a]), la if la == lb else None, (la, lb), (int(col[a]), int(col[b])))
    return None


@dataclass(frozen=True)
class _Pairs:
    """The Z3 terms of the metadata pair queries (two symbolic elements, a symbolic metadata value)."""

    l1: z3.BitVecRef
    i1: z3.BitVecRef
    l2: z3.BitVecRef
    i2: z3.BitVecRef
    mv: z3.BitVecRef
    a: dict[str, Any]
    b: dict[str, Any]
    la: z3.ExprRef
    lb: z3.ExprRef
    first: list[z3.BoolRef]  # the first element is in the domain and well placed
    outside: z3.BoolRef  # its logical column leaves its chunk
    second: list[z3.BoolRef]  # a second well-placed element of its (row, chunk), after it


def _pair_terms(cells: _Sparse) -> _Pairs:
    def build() -> _Pairs:
        lay, md = cells.layout, cells.model
        w = _width(cells)
        (l1, i1), (l2, i2) = lay.domain.z3_point("lane1 i1", w), lay.domain.z3_point("lane2 i2", w)
        mv = smt.natural("metadata", w, 15)  # a 4-bit metadata value: every query bounds it (ULT 16, or a set)
        a, b = cells.z3_info(l1, i1), cells.z3_info(l2, i2)
        la, lb = cells.z3_logical(a, mv), cells.z3_logical(b, mv)
        base = a["chunk"] * smt.bv(md.chunk, w)
        before = z3.Or(a["col"] < b["col"], z3.And(a["col"] == b["col"], z3.Or(l1 < l2, z3.And(l1 == l2, i1 < i2))))
        return _Pairs(l1, i1, l2, i2, mv, a, b, la, lb, [smt.in_domain(l1, i1, lay.threads, lay.n_elements), a["ok"]],
                      z3.Not(z3.And(la >= base, la < base + smt.bv(md.chunk, w))),
                      [smt.in_domain(l2, i2, lay.threads, lay.n_elements), b["ok"], a["row"] == b["row"],
                       a["chunk"] == b["chunk"], before])
    return cells.once("pairs", build)


def _pairs_refuting(cells: _Sparse) -> z3.BoolRef:
    """A kept element leaves its chunk under some value 0..15, or two kept elements of a chunk collide under a
    valid value, or come out of order under an ::ordered_metadata value (what the pair checks expect to prove)."""
    md, p = cells.model, _pair_terms(cells)
    w = p.mv.size()
    bad = z3.Or(z3.And(_in_set(p.mv, md.valid, w), p.la == p.lb), z3.And(_in_set(p.mv, md.ordered, w), z3.Not(p.la < p.lb)))
    return z3.And(p.first + [z3.ULT(p.mv, smt.bv(16, w)), z3.Or(p.outside, z3.And(p.second + [bad]))])


JOINT_SHARE = 0.25  # of a check's --timeout, for the joint query


def _all_proved(cells: _Sparse, timeout: float) -> bool:
    """One query for what the element checks expect to prove: the disjunction of the conditions refuting
    ``chunk_ranges``, ``metadata_distinct``, ``metadata_ordered`` and the in-chunk half of ``metadata_invalid``
    (all over the same one or two symbolic elements).  ``unsat`` proves each of them (each of their queries is
    this one restricted), so a catalog layout needs no other element query but ``metadata_invalid``'s pairs;
    otherwise each check asks its own, within its own budget as before (the joint query has a budget of its
    own, a quarter of a check's: it can add proofs, never take one away; the check that asks it first
    keeps the rest of its time, see ``_joint``).  Asked once per layout.
    (The metadata layout's queries stay apart: joined to these they cost Z3 more than they save.)"""
    def ask() -> bool:
        query = z3.Or(_range_terms(cells)[3], _pairs_refuting(cells))
        return smt.solve([query], smt.Budget(timeout * JOINT_SHARE))[0] == "unsat"
    return cells.once("all_proved", ask)


def _joint(cells: _Sparse, timeout: float, start: float) -> tuple[bool, smt.Budget]:
    """The joint verdict, and the budget of the check that asks for it, started when the check started
    (the first check to ask pays for the joint query out of its own time)."""
    return _all_proved(cells, timeout), smt.Budget(timeout, start)


def _pairs_z3(cells: _Sparse, values: tuple[int, ...], ordered: bool, proved: bool, timeout: smt.Budget
              ) -> tuple[str, SparseMetadata | None]:
    """Z3's side of a pair check under ``values``: a kept element outside its chunk, else two kept elements
    of one chunk colliding (``ordered``: not increasing); settled by the joint query where it covers them."""
    lay, md, p = cells.layout, cells.model, _pair_terms(cells)
    if proved and (set(values) <= set(md.ordered) or (not ordered and set(values) <= set(md.valid))):
        return "unsat", None
    m = p.mv
    dom = p.first + [_in_set(m, values, m.size())]
    if not proved:
        res, mod = smt.solve(dom + [p.outside], timeout)
        if mod is not None:
            return "sat", SparseMetadata(smt.as_int(mod, m), _el(lay, smt.as_int(mod, p.l1), smt.as_int(mod, p.i1)),
                                         None, smt.as_int(mod, p.a["row"]), smt.as_int(mod, p.a["chunk"]),
                                         smt.as_int(mod, p.la))
        if res == "unknown":
            return "unknown", None
    res, mod = smt.solve(dom + p.second + [z3.Not(p.la < p.lb) if ordered else p.la == p.lb], timeout)
    if mod is None:
        return res, None
    lva, lvb = smt.as_int(mod, p.la), smt.as_int(mod, p.lb)
    return "sat", SparseMetadata(smt.as_int(mod, m), _el(lay, smt.as_int(mod, p.l1), smt.as_int(mod, p.i1)),
                                 _el(lay, smt.as_int(mod, p.l2), smt.as_int(mod, p.i2)), smt.as_int(mod, p.a["row"]),
                                 smt.as_int(mod, p.a["chunk"]), lva if lva == lvb else None, (lva, lvb),
                                 (smt.as_int(mod, p.a["col"]), smt.as_int(mod, p.b["col"])))


def _pair_confirm(cells: _Sparse, ordered: bool) -> Callable[[dict[str, Any]], bool]:
    def confirm(c: dict[str, Any]) -> bool:
        m = c["metadata"]
        la = cells.py_logical(c["first"]["lane"], c["first"]["i"], m)
        if c["second"] is None:
            p = cells.py_info(c["first"]["lane"], c["first"]["i"])
            return p is not None and la is not None and not (p.chunk * cells.model.chunk <= la < (p.chunk + 1) * cells.model.chunk)  # type: ignore[operator]
        lb = cells.py_logical(c["second"]["lane"], c["second"]["i"], m)
        return la is not None and lb is not None and (la == lb or (ordered and not la < lb))
    return confirm


def _pair_message(lay: Layout, what: str) -> Callable[[dict[str, Any]], str]:
    def message(c: dict[str, Any]) -> str:
        m = f"metadata 0b{c['metadata']:04b}"
        if c["second"] is None:
            return (f"{lay.id}: under {m} lane {c['first']['lane']} element {c['first']['element']} lands on logical "
                    f"column {c['logical_col']}, outside its chunk {c['chunk']} (row {c['row']})")
        a, b = c["first"], c["second"]
        if c["logical_col"] is not None:
            return (f"{lay.id}: under {m} lane {a['lane']} element {a['element']} and lane {b['lane']} element "
                    f"{b['element']} both land on logical column {c['logical_col']} of row {c['row']} {what}")
        return (f"{lay.id}: under {m} lane {a['lane']} element {a['element']} and lane {b['lane']} element "
                f"{b['element']} land on logical columns {c['logical_cols'][0]}, {c['logical_cols'][1]} of row "
                f"{c['row']}: not increasing {what}")
    return message


def check_metadata_distinct(cells: _Sparse, timeout: float) -> CheckResult:
    md, lay = cells.model, cells.layout
    t0 = time.perf_counter()
    proved, budget = _joint(cells, timeout, t0)
    enum = _pairs_enum(cells, md.valid, False)
    res, cex = _pairs_z3(cells, md.valid, False, proved, budget)
    return _result("metadata_distinct", "proved", smt.status(res), cex, enum, _pair_message(lay, "(a valid value)"),
                   _pair_confirm(cells, False), time.perf_counter() - t0,
                   f"for all {len(md.valid)} valid metadata values the kept elements of every chunk land on "
                   f"distinct logical columns inside the chunk")


def check_metadata_ordered(cells: _Sparse, timeout: float) -> CheckResult:
    md, lay = cells.model, cells.layout
    t0 = time.perf_counter()
    proved, budget = _joint(cells, timeout, t0)
    enum = _pairs_enum(cells, md.ordered, True)
    res, cex = _pairs_z3(cells, md.ordered, True, proved, budget)
    return _result("metadata_ordered", "proved", smt.status(res), cex, enum,
                   _pair_message(lay, "(a ::ordered_metadata value)"), _pair_confirm(cells, True),
                   time.perf_counter() - t0,
                   f"for all {len(md.ordered)} ::ordered_metadata values the logical columns of a chunk's kept "
                   f"elements increase with the compressed column")


def check_metadata_invalid(cells: _Sparse, timeout: float) -> CheckResult:
    """Expected refuted: under a doc-invalid value (equal indices) two kept elements collide."""
    md, lay = cells.model, cells.layout
    t0 = time.perf_counter()
    proved, budget = _joint(cells, timeout, t0)
    invalid = md.invalid
    per_value = [_pairs_enum(cells, (m,), False) for m in invalid]  # the witness for all: the first value's
    enum = next((e for e in per_value if e is not None), None)
    res, cex = _pairs_z3(cells, invalid, False, proved, budget)
    every = all(e is not None for e in per_value)
    r = _result("metadata_invalid", "refuted", smt.status(res), cex, enum, _pair_message(lay, "(a doc-invalid value)"),
                _pair_confirm(cells, False), time.perf_counter() - t0,
                "no doc-invalid value makes two kept elements collide")
    if r.status == "refuted":
        extra = (f"; each of the {len(invalid)} invalid values ({', '.join(f'0b{v:04b}' for v in invalid)}) collides"
                 if every else "; some invalid values do not collide")
        r = CheckResult(r.check, r.status, r.expected, r.counterexample, r.message + extra, r.seconds, r.engines)
    return r


# -- metadata layout (which lane / nibble holds which (row, chunk)); derived, see docs/sparse.md

def _budget_enum(table: MetadataTable, md: SparseModel, threads: int, rows: int, chunks: int
                 ) -> MetadataField | None:
    """Enumeration of ``metadata_budget``: for each selector value in order, the first (lane, nibble)
    whose field is undefined, outside rows x chunks or a second copy of an earlier one, else the first
    (row, chunk) no named lane holds."""
    for s in md.selectors:
        seen: dict[tuple[int, int], tuple[int, int]] = {}
        enum = None
        for lane in range(threads):
            if table.selector(lane) != s:
                continue
            for n in range(NIBBLES_PER_REGISTER):
                cell = table.cell(lane, n)
                if cell is None or not (0 <= cell[0] < rows and 0 <= cell[1] < chunks):
                    enum = enum or MetadataField(s, "in_range", cell[0] if cell else None, cell[1] if cell else None,
                                                 lane, n)
                    continue
                if cell in seen and enum is None:
                    enum = MetadataField(s, "injective", cell[0], cell[1], seen[cell][0], seen[cell][1], lane, n)
                seen.setdefault(cell, (lane, n))
        if enum is None and len(seen) < rows * chunks:
            r, c = next((r, c) for r in range(rows) for c in range(chunks) if (r, c) not in seen)
            enum = MetadataField(s, "surjective", r, c)
        if enum:
            return enum
    return None


def _budget_problems(md: SparseModel, rows: int, chunks: int) -> list[str]:
    """What the register budget rules out by arithmetic (fields x bits, lanes x selector values)."""
    problems = []
    if md.fields * md.index_bits != 32:
        problems.append(f"{md.fields} {md.index_bits}-bit fields do not fill one .b32 register")
    if md.lanes_needed * len(md.selectors) > 4 or 4 % md.lanes_needed:
        problems.append(f"{rows} rows x {chunks} chunks x 4 bits need {md.lanes_needed} lanes per group of four, "
                        f"which does not allow {len(md.selectors)} selector values")
    return problems


@dataclass(frozen=True)
class _Meta:
    """The Z3 terms of ``metadata_budget``: nibble ``n`` of ``lane`` (and ``n2`` of ``lane2``) under a symbolic
    selector value ``sel`` (in ``sel_ok``), which ``named1`` (``named2``) says names the lane."""

    sel: z3.BitVecRef
    lane: z3.BitVecRef
    n: z3.BitVecRef
    lane2: z3.BitVecRef
    n2: z3.BitVecRef
    row: z3.BitVecRef
    ch: z3.BitVecRef
    sel_ok: z3.BoolRef
    ok1: z3.BoolRef
    r1: z3.ExprRef
    c1: z3.ExprRef
    named1: z3.BoolRef
    ok2: z3.BoolRef
    r2: z3.ExprRef
    c2: z3.ExprRef
    named2: z3.BoolRef


def _meta_terms(cells: _Sparse) -> _Meta:
    md, lay = cells.model, cells.layout
    assert md.metadata is not None
    w = _width(cells)
    # the selector among its values, each (lane, nibble) in the domain (``named``): only the bits they need
    sel = smt.natural_in("selector", w, md.selectors)
    lane, n, lane2, n2 = smt.naturals("lane nibble lane2 nibble2", w, (lay.threads - 1, NIBBLES_PER_REGISTER - 1) * 2)
    row, ch = z3.BitVecs("row chunk", w)

    def term(ln: z3.BitVecRef, nb: z3.BitVecRef) -> tuple[z3.BoolRef, z3.ExprRef, z3.ExprRef, z3.BoolRef]:
        e = smt.Encoder(md.metadata, ln, nb)  # type: ignore[arg-type]
        r, c = e.definition("row"), e.definition("col")
        st = smt.Encoder(md.selector, ln, smt.bv(0, w)).definition("selector")
        named = z3.And(st.ok, st.value == sel, smt.in_domain(ln, nb, lay.threads, NIBBLES_PER_REGISTER))
        return z3.And(r.ok, c.ok), r.value, c.value, named

    return _Meta(sel, lane, n, lane2, n2, row, ch, _in_set(sel, md.selectors, w), *term(lane, n), *term(lane2, n2))


def _budget_z3(cells: _Sparse, enum: MetadataField | None, budget: smt.Budget) -> tuple[str, MetadataField | None]:
    """Z3's side of ``metadata_budget``, with the selector symbolic over the allowed values: fields in range,
    injective, and every (row, chunk) supplied (the enumeration's hole confirmed, or by pigeonhole)."""
    md, lay, t = cells.model, cells.layout, _meta_terms(cells)
    rows, chunks = lay.rows, md.chunks_per_row
    res, m = smt.solve([t.sel_ok, t.named1, z3.Not(z3.And(t.ok1, t.r1 >= 0, t.r1 < rows, t.c1 >= 0, t.c1 < chunks))],
                       budget)
    if m is not None:
        d = z3.is_true(m.eval(t.ok1, model_completion=True))
        return "sat", MetadataField(smt.as_int(m, t.sel), "in_range", smt.as_int(m, t.r1) if d else None,
                                    smt.as_int(m, t.c1) if d else None, smt.as_int(m, t.lane), smt.as_int(m, t.n))
    if res == "unsat":
        res, m = smt.solve([t.sel_ok, t.named1, t.named2, t.ok1, t.ok2,
                            z3.Or(t.lane < t.lane2, z3.And(t.lane == t.lane2, t.n < t.n2)), t.r1 == t.r2, t.c1 == t.c2],
                           budget)
        if m is not None:
            return "sat", MetadataField(smt.as_int(m, t.sel), "injective", smt.as_int(m, t.r1), smt.as_int(m, t.c1),
                                        smt.as_int(m, t.lane), smt.as_int(m, t.n), smt.as_int(m, t.lane2),
                                        smt.as_int(m, t.n2))
    if res != "unsat":
        return res, None
    hit = z3.And(t.named1, t.ok1, t.r1 == t.row, t.c1 == t.ch)
    if enum is not None and enum.kind == "surjective":
        res, _ = smt.solve([t.sel == enum.selector, hit, t.row == enum.row, t.ch == enum.chunk], budget)
        if res == "unsat":
            return "sat", enum
        return ("unsat" if res == "sat" else res), None  # sat: Z3 finds the field supplied (the engines disagree)
    # in range and injective (proved above); so, per selector value, as many (lane, nibble) as (row, chunk)
    # means every field is supplied: Z3 counts the lanes each value names
    w = t.sel.size()
    named = count_true([smt.substitute(t.named1, (t.lane, smt.bv(ln, w)), (t.n, smt.bv(0, w))) for ln in range(lay.threads)], w)
    res, _ = smt.solve([t.sel_ok, named * smt.bv(NIBBLES_PER_REGISTER, w) != smt.bv(rows * chunks, w)], budget)
    if res == "sat":  # counts differ for some value: check the owners the enumeration names
        table: list[tuple[int, ...]] = [(sv, ln, nb, r, c) for sv in md.selectors
                 for (r, c), (ln, nb) in sorted(metadata_owner(md, lay.threads, sv).items())]
        res = smt.holds_everywhere(hit, [t.sel, t.lane, t.n, t.row, t.ch], table, budget)
    return res, None


def check_metadata_budget(cells: _Sparse, timeout: float) -> CheckResult:
    """For each selector value: (named lane, nibble) -> (row, chunk) is a bijection onto rows x chunks."""
    md, lay = cells.model, cells.layout
    t0 = time.perf_counter()
    budget = smt.Budget(timeout)
    rows, chunks = lay.rows, md.chunks_per_row
    problems = _budget_problems(md, rows, chunks)
    if problems:
        return CheckResult("metadata_budget", "refuted", "proved", MetadataBudget(tuple(md.selectors),
                           md.lanes_needed, md.fields), "; ".join(problems), 0.0,
                           {"arithmetic": "refuted"})
    enum = _budget_enum(metadata_table(md, lay.threads), md, lay.threads, rows, chunks)
    res, z3_cex = _budget_z3(cells, enum, budget)
    status = smt.status(res)

    def confirm(c: dict[str, Any]) -> bool:
        s = c["selector"]
        if c["kind"] == "in_range":
            cell = _py_meta(md, c["lane"], c["nibble"])
            return _py_selector(md, c["lane"]) == s and (cell is None or not (0 <= cell[0] < rows and 0 <= cell[1] < chunks))
        if c["kind"] == "injective":
            return (_py_selector(md, c["lane"]) == s == _py_selector(md, c["lane2"])
                    and _py_meta(md, c["lane"], c["nibble"]) == _py_meta(md, c["lane2"], c["nibble2"]) == (c["row"], c["chunk"]))
        return (c["row"], c["chunk"]) not in metadata_owner(md, lay.threads, s)

    def message(c: dict[str, Any]) -> str:
        s = c["selector"]
        if c["kind"] == "in_range":
            return (f"selector {s}: lane {c['lane']} bits [{4 * c['nibble'] + 3}..{4 * c['nibble']}] hold "
                    f"(row {c['row']}, chunk {c['chunk']}), outside {rows} rows x {chunks} chunks")
        if c["kind"] == "injective":
            return (f"selector {s}: lane {c['lane']} bits [{4 * c['nibble'] + 3}..{4 * c['nibble']}] and lane "
                    f"{c['lane2']} bits [{4 * c['nibble2'] + 3}..{4 * c['nibble2']}] both hold the indices of row "
                    f"{c['row']} chunk {c['chunk']}")
        return (f"selector {s}: no lane named by the selector holds the indices of row {c['row']} chunk "
                f"{c['chunk']} (columns {c['chunk'] * md.chunk}..{c['chunk'] * md.chunk + md.chunk - 1})")

    return _result("metadata_budget", "proved", status, z3_cex, enum, message, confirm, time.perf_counter() - t0,
                   f"for each selector in {list(md.selectors)}, the {md.lanes_needed} named lane(s) of every group "
                   f"of four hold each (row, chunk) index field of the {rows} x {chunks} chunks exactly once")


def _group_rows(inf: SparseInfo) -> dict[int, set[int]]:
    """group of four -> the rows its lanes hold in A (defined elements)."""
    lanes, idx = np.nonzero(inf.defined)
    out: dict[int, set[int]] = {}
    for g, r in set(zip((lanes >> 2).tolist(), inf.row[lanes, idx].tolist())):
        out.setdefault(g, set()).add(r)
    return out


def _group_enum(table: MetadataTable, md: SparseModel, threads: int, group_rows: dict[int, set[int]]
                ) -> MetadataField | None:
    """Enumeration of ``metadata_group``: the first (lane, nibble), of a lane an allowed selector value
    names, holding the field of a row its group of four does not hold."""
    for lane in range(threads):
        s = table.selector(lane)
        if s not in md.selectors:
            continue
        for n in range(NIBBLES_PER_REGISTER):
            cell = table.cell(lane, n)
            if cell is not None and cell[0] not in group_rows.get(lane >> 2, set()):
                return MetadataField(s, None, cell[0], cell[1], lane, n)
    return None


def _group_z3(cells: _Sparse, budget: smt.Budget) -> tuple[str, MetadataField | None]:
    """Z3: an allowed selector value names a lane whose field's row no element of its group of four holds."""
    md, lay = cells.model, cells.layout
    w = _width(cells)
    lane, n = smt.naturals("lane nibble", w, (lay.threads - 1, NIBBLES_PER_REGISTER - 1))
    e = smt.Encoder(md.metadata, lane, n)  # type: ignore[arg-type]
    r, c = e.definition("row"), e.definition("col")
    st = smt.Encoder(md.selector, lane, smt.bv(0, w)).definition("selector")
    lo, io = z3.BitVecs("lane_a i_a", w)  # A encoded once, at a symbolic point; instances by substitution
    enc = smt.Encoder(cells.formula, lo, io)
    ra, ca = enc.definition("row"), enc.definition("col")
    holds_row = smt.all_of([ra.ok, ca.ok, smt.CMP["=="](ra.value, r.value)])
    add, quad = smt.OPS["+"], smt.OPS["&"](lane, smt.bv(~3, w))
    held = [smt.substitute(holds_row, (lo, add(quad, smt.bv(t, w))), (io, smt.bv(i, w)))
            for t in range(4) for i in range(lay.n_elements)]
    cs = [smt.in_domain(lane, n, lay.threads, NIBBLES_PER_REGISTER), st.ok, _in_set(st.value, md.selectors, w),
          r.ok, c.ok, smt.not_(smt.any_of(held))]
    res, m = smt.solve(cs, budget)
    if m is None:
        return res, None
    return res, MetadataField(smt.as_int(m, st.value), None, smt.as_int(m, r.value), smt.as_int(m, c.value),
                              smt.as_int(m, lane), smt.as_int(m, n))


def check_metadata_group(cells: _Sparse, timeout: float) -> CheckResult:
    """A metadata-supplying lane holds indices only for rows that its own group of four holds in A."""
    md, lay = cells.model, cells.layout
    t0 = time.perf_counter()
    budget = smt.Budget(timeout)
    assert md.metadata is not None
    group_rows = _group_rows(cells.map.info(lay.domain))
    enum = _group_enum(metadata_table(md, lay.threads), md, lay.threads, group_rows)
    res, z3_cex = _group_z3(cells, budget)

    def confirm(cx: dict[str, Any]) -> bool:
        cell = _py_meta(md, cx["lane"], cx["nibble"])
        return cell is not None and cell[0] not in group_rows.get(cx["lane"] >> 2, set())

    return _result("metadata_group", "proved", smt.status(res), z3_cex, enum,
                   lambda cx: (f"selector {cx['selector']}: lane {cx['lane']} bits [{4 * cx['nibble'] + 3}.."
                               f"{4 * cx['nibble']}] hold indices of row {cx['row']}, which its group of four "
                               f"(lanes {cx['lane'] & ~3}..{(cx['lane'] & ~3) + 3}) does not hold in A"),
                   confirm, time.perf_counter() - t0,
                   "every metadata field a lane supplies belongs to a row that its group of four holds in A")


def sparse_checks(layout: Layout, timeout: float) -> tuple[list[CheckResult], dict[str, str]]:
    """All sparse-semantics checks of one sparse A; second value: provenance of derived checks."""
    cells = _Sparse(layout)
    md = cells.model
    out = [check_chunk_ranges(cells, timeout), check_metadata_distinct(cells, timeout),
           check_metadata_ordered(cells, timeout)]
    if md.index_bits == 2:
        out.append(check_metadata_invalid(cells, timeout))
    derived: dict[str, str] = {}
    if md.index_bits == 4:
        derived["metadata_distinct"] = derived["metadata_ordered"] = (
            "decode of the .tf32 4-bit index (position = low 2-bit index / 2) is derived, not stated: "
            "it reproduces exactly the doc's meaningful values 0b0100 and 0b1110")
    if md.metadata is not None:
        out.append(check_metadata_budget(cells, timeout))
        out.append(check_metadata_group(cells, timeout))
        derived["metadata_budget"] = derived["metadata_group"] = md.metadata_derived
    return out, derived


