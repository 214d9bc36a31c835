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
from typing import Any, Callable

import numpy as np
import z3

from ..engines import smt
from ..layout.model import Layout
from ..layout.sparse import (NIBBLES_PER_REGISTER, PointInfo, SparseMap, SparseModel,
                             metadata_owner, selector_of as _py_selector, metadata_cell as _py_meta)
from ..results import CheckResult, combine_engines
from .fragment import width


class _Sparse:
    """One sparse A as the checks see it: its layout, model and map, with evaluations shared."""

    def __init__(self, layout: Layout) -> None:
        assert isinstance(layout.map, SparseMap)
        self.layout = layout
        self.map: SparseMap = layout.map
        self.model: SparseModel = layout.map.model
        self.formula = layout.map.normal

    def py_info(self, lane: int, i: int) -> PointInfo | None:
        return self.map.point_info(lane, i)

    def py_logical(self, lane: int, i: int, m: int) -> int | None:
        return self.map.point_logical(lane, i, m)

    def z3_info(self, lane: z3.BitVecRef, i: z3.BitVecRef) -> dict[str, Any]:
        return self.map.z3_info(lane, i)

    def z3_logical(self, info: dict[str, Any], m: z3.BitVecRef) -> z3.ExprRef:
        return self.map.z3_logical(info, m)


def _width(cells: _Sparse) -> int:
    md = cells.model
    return max(width(cells.layout), smt.width_for(max(md.k * 4, md.chunk * 16, 64, cells.layout.threads * 4)))


def _el(layout: Layout, lane: int, i: int) -> dict[str, Any]:
    return {"lane": lane, "i": i, "element": layout.element_name(i)}


def _result(name: str, expect: str, z3_status: str, z3_cex: dict[str, Any] | None, enum_cex: dict[str, Any] | None,
            message: Callable[[dict[str, Any]], str], confirm: Callable[[dict[str, Any]], bool] | None,
            seconds: float, note: str = "") -> CheckResult:
    return combine_engines(name, expect, z3_status, z3_cex, enum_cex, message, seconds, note, confirm)  # type: ignore[arg-type]


def _in_set(x: z3.ExprRef, values: tuple[int, ...], w: int) -> z3.BoolRef:
    return z3.Or([x == smt.bv(v, w) for v in values]) if values else z3.BoolVal(False)


def check_chunk_ranges(cells: _Sparse, timeout: float) -> CheckResult:
    """Every kept element lies in a whole-chunk range inside [0, K) with room for it."""
    lay, md = cells.layout, cells.model
    t0 = time.perf_counter()
    budget = smt.Budget(timeout)
    enum_cex = None
    inf = cells.map.info(lay.domain)  # every element at once; the first bad one described by the oracle
    bad = np.flatnonzero((inf.defined & (~inf.ok | (inf.first < 0) | (inf.last >= md.k))).ravel())
    if bad.size:
        lane, i = divmod(int(bad[0]), lay.n_elements)
        info = cells.py_info(lane, i)
        assert info is not None
        reason = info.reason or f"range [{info.first} ... {info.last}] leaves [0, {md.k})"
        enum_cex = {**_el(lay, lane, i), "row": info.row, "firstcol": info.first, "lastcol": info.last,
                    "rank": info.rank, "reason": reason}
    w = _width(cells)
    lane, i = z3.BitVecs("lane1 i1", w)
    info = cells.z3_info(lane, i)
    good = z3.And(info["ok"], info["first"] >= 0, info["last"] < md.k)
    res, m = smt.solve([smt.in_domain(lane, i, lay.threads, lay.n_elements), info["defined"], z3.Not(good)], budget)
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

    return _result("chunk_ranges", "proved", smt.status(res), z3_cex, enum_cex,
                   lambda c: f"{lay.id}: lane {c['lane']} element {c['element']} (row {c['row']}): {c['reason']}",
                   confirm, time.perf_counter() - t0,
                   f"every kept element lies in its lane's [firstcol ... lastcol], whole {md.chunk}-wide chunks "
                   f"inside [0, {md.k}), at most {md.kept} kept per chunk")


def _pairs_enum(cells: _Sparse, values: tuple[int, ...], ordered: bool) -> dict[str, Any] | None:
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
    _, sizes = np.unique(np.stack([row, chunk]), axis=1, return_counts=True)
    widest = int(sizes.max()) if sizes.size else 0
    for m in values:
        lc = cells.map.logical_at(chunk, j, m)
        outside = (lc < chunk * md.chunk) | (lc >= (chunk + 1) * md.chunk)
        if outside.any():
            k = int(np.argmax(outside))
            return {"metadata": m, "first": _el(lay, int(ln[k]), int(ix[k])), "second": None, "row": int(row[k]),
                    "logical_col": int(lc[k]), "chunk": int(chunk[k])}
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
            return {"metadata": m, "first": _el(lay, int(ln[a]), int(ix[a])), "second": _el(lay, int(ln[b]), int(ix[b])),
                    "row": int(row[a]), "chunk": int(chunk[a]), "logical_col": la if la == lb else None,
                    "logical_cols": [la, lb], "compressed_cols": [int(col[a]), int(col[b])]}
    return None


def _pairs_z3(cells: _Sparse, values: tuple[int, ...], ordered: bool, timeout: smt.Budget
              ) -> tuple[str, dict[str, Any] | None]:
    lay, md = cells.layout, cells.model
    w = _width(cells)
    l1, i1, l2, i2, mv = z3.BitVecs("lane1 i1 lane2 i2 metadata", w)
    a, b = cells.z3_info(l1, i1), cells.z3_info(l2, i2)
    la, lb = cells.z3_logical(a, mv), cells.z3_logical(b, mv)
    dom = [smt.in_domain(l1, i1, lay.threads, lay.n_elements), _in_set(mv, values, w), a["ok"]]
    base = a["chunk"] * smt.bv(md.chunk, w)
    res, m = smt.solve(dom + [z3.Not(z3.And(la >= base, la < base + smt.bv(md.chunk, w)))], timeout)
    if m is not None:
        return "sat", {"metadata": smt.as_int(m, mv), "first": _el(lay, smt.as_int(m, l1), smt.as_int(m, i1)),
                       "second": None, "row": smt.as_int(m, a["row"]), "logical_col": smt.as_int(m, la),
                       "chunk": smt.as_int(m, a["chunk"])}
    if res == "unknown":
        return "unknown", None
    bad = z3.Not(la < lb) if ordered else la == lb
    before = z3.Or(a["col"] < b["col"], z3.And(a["col"] == b["col"], z3.Or(l1 < l2, z3.And(l1 == l2, i1 < i2))))
    cs = dom + [smt.in_domain(l2, i2, lay.threads, lay.n_elements), b["ok"],
                a["row"] == b["row"], a["chunk"] == b["chunk"], before, bad]
    res, m = smt.solve(cs, timeout)
    if m is None:
        return res, None
    first = (smt.as_int(m, l1), smt.as_int(m, i1))
    second = (smt.as_int(m, l2), smt.as_int(m, i2))
    lva, lvb = smt.as_int(m, la), smt.as_int(m, lb)
    return "sat", {"metadata": smt.as_int(m, mv), "first": _el(lay, *first),
                   "second": _el(lay, *second), "row": smt.as_int(m, a["row"]),
                   "chunk": smt.as_int(m, a["chunk"]), "logical_col": lva if lva == lvb else None,
                   "logical_cols": [lva, lvb], "compressed_cols": [smt.as_int(m, a["col"]), smt.as_int(m, b["col"])]}


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
    budget = smt.Budget(timeout)
    enum = _pairs_enum(cells, md.valid, False)
    res, cex = _pairs_z3(cells, md.valid, False, budget)
    return _result("metadata_distinct", "proved", smt.status(res), cex, enum, _pair_message(lay, "(a valid value)"),
                   _pair_confirm(cells, False), time.perf_counter() - t0,
                   f"for all {len(md.valid)} valid metadata values the kept elements of every chunk land on "
                   f"distinct logical columns inside the chunk")


def check_metadata_ordered(cells: _Sparse, timeout: float) -> CheckResult:
    md, lay = cells.model, cells.layout
    t0 = time.perf_counter()
    budget = smt.Budget(timeout)
    enum = _pairs_enum(cells, md.ordered, True)
    res, cex = _pairs_z3(cells, md.ordered, True, budget)
    return _result("metadata_ordered", "proved", smt.status(res), cex, enum,
                   _pair_message(lay, "(a ::ordered_metadata value)"), _pair_confirm(cells, True),
                   time.perf_counter() - t0,
                   f"for all {len(md.ordered)} ::ordered_metadata values the logical columns of a chunk's kept "
                   f"elements increase with the compressed column")


def check_metadata_invalid(cells: _Sparse, timeout: float) -> CheckResult:
    """Expected refuted: under a doc-invalid value (equal indices) two kept elements collide."""
    md, lay = cells.model, cells.layout
    t0 = time.perf_counter()
    budget = smt.Budget(timeout)
    invalid = md.invalid
    enum = _pairs_enum(cells, invalid, False)
    res, cex = _pairs_z3(cells, invalid, False, budget)
    every = all(_pairs_enum(cells, (m,), False) is not None for m in invalid)
    r = _result("metadata_invalid", "refuted", smt.status(res), cex, enum, _pair_message(lay, "(a doc-invalid value)"),
                _pair_confirm(cells, False), time.perf_counter() - t0,
                "no doc-invalid value makes two kept elements collide")
    if r.status == "refuted":
        extra = (f"; each of the {len(invalid)} invalid values ({', '.join(f'0b{v:04b}' for v in invalid)}) collides"
                 if every else "; some invalid values do not collide")
        r = CheckResult(r.check, r.status, r.expected, r.counterexample, r.message + extra, r.seconds, r.engines)
    return r


# -- metadata layout (which lane / nibble holds which (row, chunk)); derived, see docs/sparse.md

def check_metadata_budget(cells: _Sparse, timeout: float) -> CheckResult:
    """For each selector value: (named lane, nibble) -> (row, chunk) is a bijection onto rows x chunks."""
    md, lay = cells.model, cells.layout
    t0 = time.perf_counter()
    budget = smt.Budget(timeout)
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
    res, m = smt.solve([sel_ok, named1, z3.Not(z3.And(ok1, r1 >= 0, r1 < rows, c1 >= 0, c1 < chunks))], budget)
    if m is not None:
        d = z3.is_true(m.eval(ok1, model_completion=True))
        z3_cex = {"selector": smt.as_int(m, sel), "kind": "in_range", "lane": smt.as_int(m, lane),
                  "nibble": smt.as_int(m, n), "row": smt.as_int(m, r1) if d else None,
                  "chunk": smt.as_int(m, c1) if d else None}
    if res == "unsat":
        res, m = smt.solve([sel_ok, named1, named2, ok1, ok2, z3.Or(lane < lane2, z3.And(lane == lane2, n < n2)),
                         r1 == r2, c1 == c2], budget)
        if m is not None:
            z3_cex = {"selector": smt.as_int(m, sel), "kind": "injective", "lane": smt.as_int(m, lane),
                      "nibble": smt.as_int(m, n), "lane2": smt.as_int(m, lane2), "nibble2": smt.as_int(m, n2),
                      "row": smt.as_int(m, r1), "chunk": smt.as_int(m, c1)}
    if res == "unsat":  # every (row, chunk) supplied: the enumeration's hole confirmed, or by pigeonhole
        hit = z3.And(named1, ok1, r1 == row, c1 == ch)
        if enum is not None and enum["kind"] == "surjective":
            res, _ = smt.solve([sel == enum["selector"], hit, row == enum["row"], ch == enum["chunk"]], budget)
            if res == "unsat":
                z3_cex, res = dict(enum), "sat"
            elif res == "sat":
                res = "unsat"  # Z3 finds the field supplied: the engines disagree
        else:
            # in range and injective (proved above); so, per selector value, as many (lane, nibble) as
            # (row, chunk) means every field is supplied: Z3 counts the lanes each value names
            named = [z3.If(z3.substitute(named1, (lane, smt.bv(ln, w)), (n, smt.bv(0, w))), smt.bv(1, w), smt.bv(0, w))
                     for ln in range(lay.threads)]
            count = z3.Sum(named) * smt.bv(NIBBLES_PER_REGISTER, w)
            res, _ = smt.solve([sel_ok, count != smt.bv(rows * chunks, w)], budget)
            if res == "sat":  # counts differ for some value: check the owners the enumeration names
                table = [(sv, ln, nb, r, c) for sv in md.selectors
                         for (r, c), (ln, nb) in sorted(metadata_owner(md, lay.threads, sv).items())]
                res = smt.holds_everywhere(hit, [sel, lane, n, row, ch], table, budget)
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


def check_metadata_group(cells: _Sparse, timeout: float) -> CheckResult:
    """A metadata-supplying lane holds indices only for rows that its own group of four holds in A."""
    md, lay = cells.model, cells.layout
    t0 = time.perf_counter()
    budget = smt.Budget(timeout)
    assert md.metadata is not None
    inf = cells.map.info(lay.domain)
    group_rows: dict[int, set[int]] = {}
    for lane, i in zip(*np.nonzero(inf.defined)):
        group_rows.setdefault(int(lane) >> 2, set()).add(int(inf.row[lane, i]))
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
    lo, io = z3.BitVecs("lane_a i_a", w)  # A encoded once, at a symbolic point; instances by substitution
    enc = smt.Encoder(cells.formula, lo, io)
    ra, ca = enc.definition("row"), enc.definition("col")
    holds_row = z3.And(ra.ok, ca.ok, ra.value == r.value)
    for t in range(4):
        other = (lane & smt.bv(~3, w)) + smt.bv(t, w)
        for i in range(lay.n_elements):
            held.append(z3.substitute(holds_row, (lo, other), (io, smt.bv(i, w))))
    cs = [smt.in_domain(lane, n, lay.threads, NIBBLES_PER_REGISTER), st.ok, _in_set(st.value, md.selectors, w),
          r.ok, c.ok, z3.Not(z3.Or(held))]
    res, m = smt.solve(cs, budget)
    z3_cex = None
    if m is not None:
        z3_cex = {"selector": smt.as_int(m, st.value), "lane": smt.as_int(m, lane), "nibble": smt.as_int(m, n),
                  "row": smt.as_int(m, r.value), "chunk": smt.as_int(m, c.value)}

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


