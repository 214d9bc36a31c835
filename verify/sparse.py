"""The sparse-A model of ``mma.sp``: compressed cells, logical columns, metadata and selector.

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

Two independent implementations, both from the AST: ``py_*`` with ``verify.oracle`` (Python
integers), ``z3_*`` with ``verify.smt`` (bit-vector terms).  They share only the AST and the
model parameters.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

import z3

from . import oracle, smt
from .formula import Case, Definition, Formula, Span
from .results import CheckResult, combine_engines
from .spec import ELEMENT_BITS, Layout, _parse_lane_expr

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


def _default_kept_chunk(layout: Layout) -> tuple[int, int]:
    t = set(layout.types)
    if t & {"tf32"}:
        return 1, 2
    if t & {"u4", "s4"} or (t == {"e2m1"} and layout.shape.k >= 128):
        return 4, 8
    return 2, 4


def model(layout: Layout) -> SparseModel:
    """The sparse parameters of a sparse-A layout: spec fields, else the doc's general rules."""
    sp = dict(layout.sparse)
    stated = tuple(sorted(k for k in sp if not k.endswith("_formula")))
    kept, chunk = (sp["kept"], sp["chunk"]) if "kept" in sp else _default_kept_chunk(layout)
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
    k = layout.shape.k
    m_rows = layout.rows
    groups_of_four = max(1, layout.threads // 4)
    bits = m_rows * (k // max(chunk, 1)) * 4
    lanes_needed = max(1, bits // groups_of_four // 32)
    selectors = tuple(sp.get("selectors", range(max(1, 4 // lanes_needed))))
    if "selector_formula" in sp:
        selector = sp["selector_formula"]
    else:
        text = {1: "%laneid % 4", 2: "(%laneid % 4) >> 1"}.get(lanes_needed, "0")
        selector = _parse_lane_expr(text, "selector")
    return SparseModel(kept, chunk, index_bits, fields, valid, ordered, selectors, selector,
                       sp.get("metadata_formula"), sp.get("metadata_derived", ""),
                       sp.get("canonical", CANONICAL_METADATA), k, lanes_needed, stated)


def _normalized(formula: Formula) -> Formula:
    """``col`` with every case a Span (a plain column c is the range [c ... c])."""
    defs = []
    for d in formula.definitions:
        if d.name == "col":
            d = Definition(d.name, tuple(c if isinstance(c.expr, Span) else Case(Span(c.expr, c.expr, c.pos), c.cond, c.pos)
                                         for c in d.cases), d.pos)
        defs.append(d)
    return Formula(tuple(defs), formula.element_prefix)


# ----------------------------------------------------------------------------- enumeration engine

def _py_logical(md: SparseModel, chunk_index: int, j: int, m: int) -> int:
    base = chunk_index * md.chunk
    if md.index_bits == 4:
        return base + ((m & 3) >> 1)
    w = md.width
    return base + w * ((m >> (2 * (j // w))) & 3) + j % w


@dataclass
class _PyInfo:
    row: int
    first: int
    last: int
    rank: int
    ok: bool
    reason: str
    col: int | None
    chunk: int | None
    j: int | None


class CompressedCells:
    """CellMap of a sparse A layout (compressed columns), plus the logical view."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.model = model(layout)
        self.formula = _normalized(layout.formula)
        self._lanes: dict[int, list[tuple[int, int, int] | None]] = {}
        self._z3: dict[tuple[str, str, int], dict[str, Any]] = {}  # terms per symbolic (lane, i)

    # -- enumeration (Python integers, verify.oracle)
    def _lane(self, lane: int) -> list[tuple[int, int, int] | None]:
        if lane not in self._lanes:
            out: list[tuple[int, int, int] | None] = []
            for i in range(self.layout.n_elements):
                ev = oracle.Evaluator(self.formula, lane, i)
                try:
                    r, span = ev.value("row"), ev.value("col")
                except oracle.Undefined:
                    out.append(None)
                    continue
                if isinstance(r, tuple) or not isinstance(span, tuple):
                    raise oracle.EvalError("sparse A needs a number for row and a range for col",
                                           self.layout.formula.get("col").pos)
                out.append((r, span[0], span[1]))
            self._lanes[lane] = out
        return self._lanes[lane]

    def py_info(self, lane: int, i: int) -> _PyInfo | None:
        elems = self._lane(lane)
        e = elems[i]
        if e is None:
            return None
        row, first, last = e
        rank = sum(1 for k in range(i) if elems[k] is not None and elems[k][0] == row and elems[k][1] == first)  # type: ignore[index]
        md = self.model
        width = last - first + 1
        reason = ""
        if width <= 0:
            reason = f"empty range [{first} ... {last}]"
        elif oracle.c_rem(first, md.chunk) != 0 or width % md.chunk:
            reason = f"range [{first} ... {last}] is not made of whole {md.chunk}-wide chunks"
        elif rank >= width // md.chunk * md.kept:
            reason = (f"it is kept element {rank + 1} of range [{first} ... {last}], which holds only "
                      f"{width // md.chunk * md.kept} ({md.kept} per {md.chunk}-wide chunk)")
        if reason:
            return _PyInfo(row, first, last, rank, False, reason, None, None, None)
        col = oracle.c_div(first, md.chunk) * md.kept + rank
        chunk_index = oracle.c_div(first, md.chunk) + rank // md.kept
        return _PyInfo(row, first, last, rank, True, "", col, chunk_index, rank % md.kept)

    def placed(self) -> list[tuple[int, int, _PyInfo]]:
        """Every well-placed (lane, i) with its info (enumeration, cached)."""
        if not hasattr(self, "_placed"):
            infos = [(lane, i, self.py_info(lane, i)) for lane in range(self.layout.threads)
                     for i in range(self.layout.n_elements)]
            self._placed = [(ln, i, p) for ln, i, p in infos if p is not None and p.ok]
        return self._placed  # type: ignore[return-value]

    def py_cell(self, lane: int, i: int) -> tuple[int, int] | None:
        info = self.py_info(lane, i)
        if info is None or not info.ok:
            return None
        return info.row, info.col  # type: ignore[return-value]

    def py_logical(self, lane: int, i: int, m: int) -> int | None:
        info = self.py_info(lane, i)
        if info is None or not info.ok:
            return None
        return _py_logical(self.model, info.chunk, info.j, m)  # type: ignore[arg-type]

    # -- Z3 (bit-vector terms, verify.smt)
    def z3_info(self, lane: z3.BitVecRef, i: z3.BitVecRef) -> dict[str, Any]:
        key = (lane.sexpr(), i.sexpr(), lane.size())
        if key not in self._z3:
            self._z3[key] = self._z3_info(lane, i)
        return self._z3[key]

    def _z3_info(self, lane: z3.BitVecRef, i: z3.BitVecRef) -> dict[str, Any]:
        w = lane.size()
        md = self.model
        enc = smt.Encoder(self.formula, lane, i)
        row, col = enc.definition("row"), enc.definition("col")
        first, last = col.value  # type: ignore[misc]
        defined = z3.And(row.ok, col.ok)
        rank: z3.ExprRef = smt.bv(0, w)
        for k in range(self.layout.n_elements):
            ek = smt.Encoder(self.formula, lane, smt.bv(k, w))
            rk, ck = ek.definition("row"), ek.definition("col")
            same = z3.And(smt.bv(k, w) < i, rk.ok, ck.ok, rk.value == row.value, ck.value[0] == first)  # type: ignore[index]
            rank = rank + z3.If(same, smt.bv(1, w), smt.bv(0, w))
        rank = z3.simplify(rank)
        chunk_bv, kept_bv = smt.bv(md.chunk, w), smt.bv(md.kept, w)
        width = last - first + 1
        placed = z3.And(width > 0, z3.SRem(first, chunk_bv) == 0, z3.SRem(width, chunk_bv) == 0,
                        rank < (width / chunk_bv) * kept_bv)
        return {"defined": defined, "ok": z3.And(defined, placed), "row": row.value, "first": first,
                "last": last, "rank": rank, "col": (first / chunk_bv) * kept_bv + rank,
                "chunk": first / chunk_bv + rank / kept_bv, "j": z3.SRem(rank, kept_bv)}

    def z3_cell(self, lane: z3.BitVecRef, i: z3.BitVecRef) -> tuple[z3.BoolRef, z3.ExprRef, z3.ExprRef]:
        info = self.z3_info(lane, i)
        return info["ok"], info["row"], info["col"]

    def z3_logical(self, info: dict[str, Any], m: z3.BitVecRef) -> z3.ExprRef:
        md = self.model
        w = m.size()
        base = info["chunk"] * smt.bv(md.chunk, w)
        if md.index_bits == 4:
            return base + z3.LShR(m & smt.bv(3, w), smt.bv(1, w))
        ww = smt.bv(md.width, w)
        j = info["j"]
        idx = z3.LShR(m, smt.bv(2, w) * (j / ww)) & smt.bv(3, w)
        return base + ww * idx + z3.SRem(j, ww)


def compressed_cells(layout: Layout) -> CompressedCells:
    return CompressedCells(layout)


# ----------------------------------------------------------------------------- checks

def _width(cells: CompressedCells) -> int:
    from .checks import width  # noqa: PLC0415
    md = cells.model
    return max(width(cells.layout), smt.width_for(max(md.k * 4, md.chunk * 16, 64, cells.layout.threads * 4)))


def _el(layout: Layout, lane: int, i: int) -> dict[str, Any]:
    return {"lane": lane, "i": i, "element": layout.element_name(i)}


def _result(name: str, expect: str, z3_status: str, z3_cex: dict[str, Any] | None, enum_cex: dict[str, Any] | None,
            message: Callable[[dict[str, Any]], str], confirm: Callable[[dict[str, Any]], bool] | None,
            seconds: float, note: str = "") -> CheckResult:
    return combine_engines(name, expect, z3_status, z3_cex, enum_cex, message, seconds, note, confirm)  # type: ignore[arg-type]


def _solve(cs: list[z3.BoolRef], timeout: float) -> tuple[str, z3.ModelRef | None]:
    from .checks import _solve as solve  # noqa: PLC0415
    return solve(cs, timeout)


def _status(res: str) -> str:
    return {"sat": "refuted", "unsat": "proved", "unknown": "unknown"}[res]


def _in_set(x: z3.ExprRef, values: tuple[int, ...], w: int) -> z3.BoolRef:
    return z3.Or([x == smt.bv(v, w) for v in values]) if values else z3.BoolVal(False)


def check_chunk_ranges(cells: CompressedCells, timeout: float) -> CheckResult:
    """Every kept element lies in a whole-chunk range inside [0, K) with room for it."""
    lay, md = cells.layout, cells.model
    t0 = time.perf_counter()
    enum_cex = None
    for lane in range(lay.threads):
        for i in range(lay.n_elements):
            info = cells.py_info(lane, i)
            if info is None:
                continue
            reason = info.reason or ("" if 0 <= info.first and info.last < md.k else
                                     f"range [{info.first} ... {info.last}] leaves [0, {md.k})")
            if reason:
                enum_cex = {**_el(lay, lane, i), "row": info.row, "firstcol": info.first, "lastcol": info.last,
                            "rank": info.rank, "reason": reason}
                break
        if enum_cex:
            break
    w = _width(cells)
    lane, i = z3.BitVecs("lane1 i1", w)
    info = cells.z3_info(lane, i)
    good = z3.And(info["ok"], info["first"] >= 0, info["last"] < md.k)
    res, m = _solve([smt.in_domain(lane, i, lay.threads, lay.n_elements), info["defined"], z3.Not(good)], timeout)
    z3_cex = None
    if m is not None:
        ln, ix = smt.as_int(m, lane), smt.as_int(m, i)
        pi = cells.py_info(ln, ix)
        reason = (pi.reason or f"range [{pi.first} ... {pi.last}] leaves [0, {md.k})") if pi else "undefined"
        z3_cex = {**_el(lay, ln, ix), "row": smt.as_int(m, info["row"]), "firstcol": smt.as_int(m, info["first"]),
                  "lastcol": smt.as_int(m, info["last"]), "rank": smt.as_int(m, info["rank"]), "reason": reason}

    def confirm(c: dict[str, Any]) -> bool:
        p = cells.py_info(c["lane"], c["i"])
        return p is not None and (not p.ok or p.first < 0 or p.last >= md.k)

    return _result("chunk_ranges", "proved", _status(res), z3_cex, enum_cex,
                   lambda c: f"{lay.id}: lane {c['lane']} element {c['element']} (row {c['row']}): {c['reason']}",
                   confirm, time.perf_counter() - t0,
                   f"every kept element lies in its lane's [firstcol ... lastcol], whole {md.chunk}-wide chunks "
                   f"inside [0, {md.k}), at most {md.kept} kept per chunk")


def _pairs_enum(cells: CompressedCells, values: tuple[int, ...], ordered: bool) -> dict[str, Any] | None:
    """Enumeration: two kept elements of one (row, chunk) on one logical column (or out of order)."""
    lay, md = cells.layout, cells.model
    infos = cells.placed()
    for m in values:
        by_chunk: dict[tuple[int, int], list[tuple[int, int, int, int]]] = {}
        for ln, i, p in infos:
            lc = _py_logical(md, p.chunk, p.j, m)  # type: ignore[arg-type]
            if not (p.chunk * md.chunk <= lc < (p.chunk + 1) * md.chunk):  # type: ignore[operator]
                return {"metadata": m, "first": _el(lay, ln, i), "second": None, "row": p.row,
                        "logical_col": lc, "chunk": p.chunk}
            by_chunk.setdefault((p.row, p.chunk), []).append((p.col, lc, ln, i))  # type: ignore[arg-type]
        for (row, ch), items in sorted(by_chunk.items()):
            items.sort()
            for a in range(len(items)):
                for b in range(a + 1, len(items)):
                    (ca, la, lna, ia), (cb, lb, lnb, ib) = items[a], items[b]
                    if la == lb or (ordered and not la < lb):
                        first, second = sorted([(lna, ia), (lnb, ib)])
                        return {"metadata": m, "first": _el(lay, *first), "second": _el(lay, *second), "row": row,
                                "chunk": ch, "logical_col": la if la == lb else None,
                                "logical_cols": [la, lb], "compressed_cols": [ca, cb]}
    return None


def _pairs_z3(cells: CompressedCells, values: tuple[int, ...], ordered: bool, timeout: float
              ) -> tuple[str, dict[str, Any] | None]:
    lay, md = cells.layout, cells.model
    w = _width(cells)
    l1, i1, l2, i2, mv = z3.BitVecs("lane1 i1 lane2 i2 metadata", w)
    a, b = cells.z3_info(l1, i1), cells.z3_info(l2, i2)
    la, lb = cells.z3_logical(a, mv), cells.z3_logical(b, mv)
    dom = [smt.in_domain(l1, i1, lay.threads, lay.n_elements), _in_set(mv, values, w), a["ok"]]
    base = a["chunk"] * smt.bv(md.chunk, w)
    res, m = _solve(dom + [z3.Not(z3.And(la >= base, la < base + smt.bv(md.chunk, w)))], timeout)
    if m is not None:
        return "sat", {"metadata": smt.as_int(m, mv), "first": _el(lay, smt.as_int(m, l1), smt.as_int(m, i1)),
                       "second": None, "row": smt.as_int(m, a["row"]), "logical_col": smt.as_int(m, la),
                       "chunk": smt.as_int(m, a["chunk"])}
    if res == "unknown":
        return "unknown", None
    bad = z3.Not(la < lb) if ordered else la == lb
    cs = dom + [smt.in_domain(l2, i2, lay.threads, lay.n_elements), b["ok"],
                a["row"] == b["row"], a["chunk"] == b["chunk"], a["col"] < b["col"], bad]
    res, m = _solve(cs, timeout)
    if m is None:
        return res, None
    first = (smt.as_int(m, l1), smt.as_int(m, i1))
    second = (smt.as_int(m, l2), smt.as_int(m, i2))
    lva, lvb = smt.as_int(m, la), smt.as_int(m, lb)
    return "sat", {"metadata": smt.as_int(m, mv), "first": _el(lay, *min(first, second)),
                   "second": _el(lay, *max(first, second)), "row": smt.as_int(m, a["row"]),
                   "chunk": smt.as_int(m, a["chunk"]), "logical_col": lva if lva == lvb else None,
                   "logical_cols": [lva, lvb], "compressed_cols": [smt.as_int(m, a["col"]), smt.as_int(m, b["col"])]}


def _pair_confirm(cells: CompressedCells, ordered: bool) -> Callable[[dict[str, Any]], bool]:
    def confirm(c: dict[str, Any]) -> bool:
        m = c["metadata"]
        la = cells.py_logical(c["first"]["lane"], c["first"]["i"], m)
        if c["second"] is None:
            p = cells.py_info(c["first"]["lane"], c["first"]["i"])
            return p is not None and la is not None and not (p.chunk * cells.model.chunk <= la < (p.chunk + 1) * cells.model.chunk)  # type: ignore[operator]
        lb = cells.py_logical(c["second"]["lane"], c["second"]["i"], m)
        return la is not None and lb is not None and (la == lb or (ordered and sorted(c["logical_cols"]) != c["logical_cols"]))
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


def check_metadata_distinct(cells: CompressedCells, timeout: float) -> CheckResult:
    md, lay = cells.model, cells.layout
    t0 = time.perf_counter()
    enum = _pairs_enum(cells, md.valid, False)
    res, cex = _pairs_z3(cells, md.valid, False, timeout)
    return _result("metadata_distinct", "proved", _status(res), cex, enum, _pair_message(lay, "(a valid value)"),
                   _pair_confirm(cells, False), time.perf_counter() - t0,
                   f"for all {len(md.valid)} valid metadata values the kept elements of every chunk land on "
                   f"distinct logical columns inside the chunk")


def check_metadata_ordered(cells: CompressedCells, timeout: float) -> CheckResult:
    md, lay = cells.model, cells.layout
    t0 = time.perf_counter()
    enum = _pairs_enum(cells, md.ordered, True)
    res, cex = _pairs_z3(cells, md.ordered, True, timeout)
    return _result("metadata_ordered", "proved", _status(res), cex, enum,
                   _pair_message(lay, "(a ::ordered_metadata value)"), _pair_confirm(cells, True),
                   time.perf_counter() - t0,
                   f"for all {len(md.ordered)} ::ordered_metadata values the logical columns of a chunk's kept "
                   f"elements increase with the compressed column")


def check_metadata_invalid(cells: CompressedCells, timeout: float) -> CheckResult:
    """Expected refuted: under a doc-invalid value (equal indices) two kept elements collide."""
    md, lay = cells.model, cells.layout
    t0 = time.perf_counter()
    invalid = md.invalid
    enum = _pairs_enum(cells, invalid, False)
    res, cex = _pairs_z3(cells, invalid, False, timeout)
    every = all(_pairs_enum(cells, (m,), False) is not None for m in invalid)
    r = _result("metadata_invalid", "refuted", _status(res), cex, enum, _pair_message(lay, "(a doc-invalid value)"),
                _pair_confirm(cells, False), time.perf_counter() - t0,
                "no doc-invalid value makes two kept elements collide")
    if r.status == "refuted":
        extra = (f"; each of the {len(invalid)} invalid values ({', '.join(f'0b{v:04b}' for v in invalid)}) collides"
                 if every else "; some invalid values do not collide")
        r = CheckResult(r.check, r.status, r.expected, r.counterexample, r.message + extra, r.seconds, r.engines)
    return r


# -- metadata layout (which lane / nibble holds which (row, chunk)); derived, see docs/sparse.md

def _py_selector(md: SparseModel, lane: int) -> int | None:
    v = oracle.evaluate(md.selector, "selector", lane, 0)
    return v if isinstance(v, int) else None


def _py_meta(md: SparseModel, lane: int, n: int) -> tuple[int, int] | None:
    assert md.metadata is not None
    ev = oracle.Evaluator(md.metadata, lane, n)
    try:
        r, c = ev.value("row"), ev.value("col")
    except oracle.Undefined:
        return None
    return (r, c) if isinstance(r, int) and isinstance(c, int) else None


def metadata_owner(cells: CompressedCells, selector: int) -> dict[tuple[int, int], tuple[int, int]]:
    """(row, chunk) -> (lane, nibble) for one selector value (enumeration)."""
    md = cells.model
    out: dict[tuple[int, int], tuple[int, int]] = {}
    if md.metadata is None:
        return out
    for lane in range(cells.layout.threads):
        if _py_selector(md, lane) != selector:
            continue
        for n in range(NIBBLES_PER_REGISTER):
            cell = _py_meta(md, lane, n)
            if cell is not None:
                out.setdefault(cell, (lane, n))
    return out


def check_metadata_budget(cells: CompressedCells, timeout: float) -> CheckResult:
    """For each selector value: (named lane, nibble) -> (row, chunk) is a bijection onto rows x chunks."""
    md, lay = cells.model, cells.layout
    t0 = time.perf_counter()
    rows, chunks = lay.rows, md.chunks_per_row
    problems = []
    if md.fields * md.index_bits != 32:
        problems.append(f"{md.fields} {md.index_bits}-bit fields do not fill one .b32 register")
    if md.lanes_needed * len(md.selectors) > 4 or 4 % md.lanes_needed:
        problems.append(f"{rows} rows x {chunks} chunks x 4 bits need {md.lanes_needed} lanes per group of four, "
                        f"which does not allow {len(md.selectors)} selector values")
    if problems:
        return CheckResult("metadata_budget", "refuted", "proved", {"selectors": list(md.selectors),
                           "lanes_needed": md.lanes_needed, "fields": md.fields}, "; ".join(problems), 0.0,
                           {"arithmetic": "refuted"})
    # enumeration
    enum = None
    for s in md.selectors:
        seen: dict[tuple[int, int], tuple[int, int]] = {}
        for lane in range(lay.threads):
            if _py_selector(md, lane) != s:
                continue
            for n in range(NIBBLES_PER_REGISTER):
                cell = _py_meta(md, lane, n)
                if cell is None or not (0 <= cell[0] < rows and 0 <= cell[1] < chunks):
                    enum = enum or {"selector": s, "kind": "in_range", "lane": lane, "nibble": n,
                                    "row": cell[0] if cell else None, "chunk": cell[1] if cell else None}
                    continue
                if cell in seen and enum is None:
                    enum = {"selector": s, "kind": "injective", "lane": seen[cell][0], "nibble": seen[cell][1],
                            "lane2": lane, "nibble2": n, "row": cell[0], "chunk": cell[1]}
                seen.setdefault(cell, (lane, n))
        if enum is None:
            for r in range(rows):
                for c in range(chunks):
                    if (r, c) not in seen and enum is None:
                        enum = {"selector": s, "kind": "surjective", "row": r, "chunk": c}
        if enum:
            break
    # Z3, with the selector symbolic over the allowed values
    assert md.metadata is not None
    w = _width(cells)
    sel, lane, n, lane2, n2, row, ch = z3.BitVecs("selector lane nibble lane2 nibble2 row chunk", w)

    def term(ln: z3.BitVecRef, nb: z3.BitVecRef) -> tuple[z3.BoolRef, z3.ExprRef, z3.ExprRef, z3.BoolRef]:
        e = smt.Encoder(md.metadata, ln, nb)  # type: ignore[arg-type]
        r, c = e.definition("row"), e.definition("col")
        st = smt.Encoder(md.selector, ln, smt.bv(0, w)).definition("selector")
        named = z3.And(st.ok, st.value == sel, smt.in_domain(ln, nb, lay.threads, NIBBLES_PER_REGISTER))
        return z3.And(r.ok, c.ok), r.value, c.value, named

    ok1, r1, c1, named1 = term(lane, n)
    ok2, r2, c2, named2 = term(lane2, n2)
    sel_ok = _in_set(sel, md.selectors, w)
    z3_cex, status = None, "proved"
    res, m = _solve([sel_ok, named1, z3.Not(z3.And(ok1, r1 >= 0, r1 < rows, c1 >= 0, c1 < chunks))], timeout)
    if m is not None:
        d = z3.is_true(m.eval(ok1, model_completion=True))
        z3_cex = {"selector": smt.as_int(m, sel), "kind": "in_range", "lane": smt.as_int(m, lane),
                  "nibble": smt.as_int(m, n), "row": smt.as_int(m, r1) if d else None,
                  "chunk": smt.as_int(m, c1) if d else None}
    if res == "unsat":
        res, m = _solve([sel_ok, named1, named2, ok1, ok2, z3.Or(lane < lane2, z3.And(lane == lane2, n < n2)),
                         r1 == r2, c1 == c2], timeout)
        if m is not None:
            z3_cex = {"selector": smt.as_int(m, sel), "kind": "injective", "lane": smt.as_int(m, lane),
                      "nibble": smt.as_int(m, n), "lane2": smt.as_int(m, lane2), "nibble2": smt.as_int(m, n2),
                      "row": smt.as_int(m, r1), "chunk": smt.as_int(m, c1)}
    if res == "unsat":
        hit = z3.And(named1, ok1, r1 == row, c1 == ch)
        res, m = _solve([sel_ok, row >= 0, row < rows, ch >= 0, ch < chunks, z3.ForAll([lane, n], z3.Not(hit))],
                        timeout)
        if m is not None:
            z3_cex = {"selector": smt.as_int(m, sel), "kind": "surjective", "row": smt.as_int(m, row),
                      "chunk": smt.as_int(m, ch)}
    status = _status(res)

    def confirm(c: dict[str, Any]) -> bool:
        s = c["selector"]
        if c["kind"] == "in_range":
            cell = _py_meta(md, c["lane"], c["nibble"])
            return _py_selector(md, c["lane"]) == s and (cell is None or not (0 <= cell[0] < rows and 0 <= cell[1] < chunks))
        if c["kind"] == "injective":
            return (_py_selector(md, c["lane"]) == s == _py_selector(md, c["lane2"])
                    and _py_meta(md, c["lane"], c["nibble"]) == _py_meta(md, c["lane2"], c["nibble2"]) == (c["row"], c["chunk"]))
        return (c["row"], c["chunk"]) not in metadata_owner(cells, s)

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


def check_metadata_group(cells: CompressedCells, timeout: float) -> CheckResult:
    """A metadata-supplying lane holds indices only for rows that its own group of four holds in A."""
    md, lay = cells.model, cells.layout
    t0 = time.perf_counter()
    assert md.metadata is not None
    group_rows: dict[int, set[int]] = {}
    for lane in range(lay.threads):
        for i in range(lay.n_elements):
            p = cells.py_info(lane, i)
            if p is not None:
                group_rows.setdefault(lane >> 2, set()).add(p.row)
    enum = None
    for lane in range(lay.threads):
        s = _py_selector(md, lane)
        if s not in md.selectors:
            continue
        for n in range(NIBBLES_PER_REGISTER):
            cell = _py_meta(md, lane, n)
            if cell is not None and cell[0] not in group_rows.get(lane >> 2, set()):
                enum = {"selector": s, "lane": lane, "nibble": n, "row": cell[0], "chunk": cell[1]}
                break
        if enum:
            break
    w = _width(cells)
    lane, n = z3.BitVecs("lane nibble", w)
    e = smt.Encoder(md.metadata, lane, n)
    r, c = e.definition("row"), e.definition("col")
    st = smt.Encoder(md.selector, lane, smt.bv(0, w)).definition("selector")
    held = []
    for t in range(4):
        other = (lane & smt.bv(~3, w)) + smt.bv(t, w)
        for i in range(lay.n_elements):
            enc = smt.Encoder(cells.formula, other, smt.bv(i, w))
            ra = enc.definition("row")
            held.append(z3.And(ra.ok, enc.definition("col").ok, ra.value == r.value))
    cs = [smt.in_domain(lane, n, lay.threads, NIBBLES_PER_REGISTER), st.ok, _in_set(st.value, md.selectors, w),
          r.ok, c.ok, z3.Not(z3.Or(held))]
    res, m = _solve(cs, timeout)
    z3_cex = None
    if m is not None:
        z3_cex = {"selector": smt.as_int(m, st.value), "lane": smt.as_int(m, lane), "nibble": smt.as_int(m, n),
                  "row": smt.as_int(m, r.value), "chunk": smt.as_int(m, c.value)}

    def confirm(cx: dict[str, Any]) -> bool:
        cell = _py_meta(md, cx["lane"], cx["nibble"])
        return cell is not None and cell[0] not in group_rows.get(cx["lane"] >> 2, set())

    return _result("metadata_group", "proved", _status(res), z3_cex, enum,
                   lambda cx: (f"selector {cx['selector']}: lane {cx['lane']} bits [{4 * cx['nibble'] + 3}.."
                               f"{4 * cx['nibble']}] hold indices of row {cx['row']}, which its group of four "
                               f"(lanes {cx['lane'] & ~3}..{(cx['lane'] & ~3) + 3}) does not hold in A"),
                   confirm, time.perf_counter() - t0,
                   "every metadata field a lane supplies belongs to a row that its group of four holds in A")


def sparse_checks(layout: Layout, timeout: float, cells: CompressedCells | None = None
                  ) -> tuple[list[CheckResult], dict[str, str]]:
    """All sparse-semantics checks of one sparse A; second value: provenance of derived checks."""
    cells = cells or compressed_cells(layout)
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


# ----------------------------------------------------------------------------- table

def _nibble_for(cells: CompressedCells, metadata: int) -> Callable[[int, int], int]:
    """(row, chunk) -> the 4-bit field, when every supplying lane holds the register ``metadata``."""
    md = cells.model
    owner = metadata_owner(cells, md.selectors[0]) if md.metadata is not None else {}

    def nib(row: int, chunk: int) -> int:
        if (row, chunk) in owner:
            n = owner[(row, chunk)][1]
        else:  # no metadata layout in the spec: nibble = chunk within the register
            n = chunk % NIBBLES_PER_REGISTER
        return (metadata >> (4 * n)) & 0xF
    return nib


def table_entries(layout: Layout, metadata: int | None = None) -> list[dict[str, Any]]:
    """Every (lane, i) of a sparse A: compressed cell, chunk, and logical column under ``metadata``.

    ``metadata`` is the .b32 register every metadata-supplying lane holds (default
    ``CANONICAL_METADATA`` = 0x44444444: each chunk keeps its first positions).
    """
    cells = compressed_cells(layout)
    md = cells.model
    reg = md.canonical if metadata is None else metadata
    nib = _nibble_for(cells, reg)
    out = []
    for lane in range(layout.threads):
        for i in range(layout.n_elements):
            p = cells.py_info(lane, i)
            e: dict[str, Any] = {"lane": lane, "i": i, "element": layout.element_name(i),
                                 "row": p.row if p else None, "col": p.col if p else None,
                                 "chunk": p.chunk if p else None, "logical_col": None, "metadata": None,
                                 "valid": None}
            if p is not None and p.ok:
                m = nib(p.row, p.chunk)  # type: ignore[arg-type]
                e["metadata"] = m
                e["logical_col"] = _py_logical(md, p.chunk, p.j, m)  # type: ignore[arg-type]
                e["valid"] = m in md.valid
            out.append(e)
    return out


def table_text(layout: Layout, metadata: int | None = None) -> str:
    """Compressed view (rows x K*kept/chunk) and logical view (rows x K) side by side."""
    cells = compressed_cells(layout)
    md = cells.model
    reg = md.canonical if metadata is None else metadata
    entries = table_entries(layout, reg)
    comp: dict[tuple[int, int], list[str]] = {}
    logi: dict[tuple[int, int], list[str]] = {}
    bad = []
    for e in entries:
        label = f"T{e['lane']}:{e['element']}"
        if e["col"] is None:
            bad.append(label)
            continue
        comp.setdefault((e["row"], e["col"]), []).append(label)
        logi.setdefault((e["row"], e["logical_col"]), []).append(label)
    cw = max([len(v[0]) + 1 for v in list(comp.values()) + list(logi.values())] + [6])

    def cell(grid: dict[tuple[int, int], list[str]], r: int, c: int) -> str:
        v = grid.get((r, c))
        return f"{'.' if not v else v[0] + ('!' if len(v) > 1 else ''):>{cw}}"

    ccols, lcols = layout.cols, md.k
    out = [f"{layout.id}  (sparse {md.kept}:{md.chunk}; compressed {layout.rows} x {ccols} | logical "
           f"{layout.rows} x {lcols}; metadata register 0x{reg:08x} in every supplying lane)"]
    out.append("compressed".ljust(5 + cw * ccols) + " | logical ('.' = pruned zero)")
    out.append("     " + "".join(f"{c:>{cw}}" for c in range(ccols)) + " | "
               + "".join(f"{c:>{cw}}" for c in range(lcols)))
    for r in range(layout.rows):
        out.append(f"{r:>4} " + "".join(cell(comp, r, c) for c in range(ccols)) + " | "
                   + "".join(cell(logi, r, c) for c in range(lcols)))
    shared = sorted((k, v) for k, v in logi.items() if len(v) > 1)
    if shared:
        out.append("  logical cells with several owners (!): " + "; ".join(f"({r},{c}) {' '.join(v)}" for (r, c), v in shared[:12]))
    invalid = sorted({e["metadata"] for e in entries if e.get("valid") is False})
    if invalid:
        out.append("  invalid metadata fields used: " + ", ".join(f"0b{m:04b}" for m in invalid))
    if bad:
        out.append("  misplaced or undefined: " + " ".join(bad[:16]) + (" ..." if len(bad) > 16 else ""))
    return "\n".join(out) + "\n"


__all__ = ["CANONICAL_METADATA", "CompressedCells", "SparseModel", "compressed_cells", "model", "sparse_checks",
           "table_entries", "table_text", "ELEMENT_BITS"]
