"""Is a layout someone wrote the spec's layout?  ``equal``, ``permuted``, ``replicated`` or ``differs``.

Bijectivity cannot see a layout that is a bijection but not the hardware's (two registers swapped, a
stride that still covers the tile, warps in another order); comparing with the spec can.  Every
status is decided by both engines (Z3 and enumeration, joined by ``verify.results.combine_engines``:
a disagreement is an ``error``, a Z3 ``unknown`` stays ``unknown``), in this order:

0. **unspecified**: the doc leaves the spec's map unspecified (wmma: "unspecified and target
   architecture dependent"): there is nothing to compare with, so the status is ``unspecified``
   (exit 1), never ``equal`` or ``differs``.
1. **extent** (arithmetic): the given covers the spec's rows x cols; else ``differs``.  A table's
   cells are read from its data first (no evaluation, no solver): a cell outside the spec's
   rows x cols (where the spec's own cells are all inside) is ``differs`` at once.
2. **equal** (same domain: threads, elements, MMA computations): every (lane, i) lands on the same
   cell of the same MMA computation in both, or is undefined in both (``same_map``).  Z3: one query
   for a differing point, minimised to the first in (lane, i) order; enumeration: the first
   differing point.  Both witnesses must be the same point.
3. **permuted** (same domain, not equal): every lane holds the same cells as in the spec, each once,
   in another element order: for every lane ``l`` a permutation ``p_l`` with
   ``given(l, i) = spec(l, p_l(i))``.  Both engines decide four sub-properties, in this order, and the
   first that fails is the witness (the same one from both):

   a. every (l, i) of the given is defined and equals ``spec(l, j)`` for some j;
   b. no two elements of one given lane hold the same cell;
   c. every (l, j) of the spec is defined and equals ``given(l, i)`` for some i;
   d. no two elements of one spec lane hold the same cell.

   Z3 decides each with one quantifier-free query: "some j" is a disjunction over the N concrete
   values of j; (b)/(d) use two symbolic elements of one symbolic lane.  (a)-(d) together say that
   each lane's cells form the same set of N distinct cells.  The permutation is then read from the
   enumeration, and Z3 confirms it: no (l, i) with ``given(l, i) != spec(l, P(l, i))``, where
   ``P`` is the permutation as a term (an ``If`` chain over i, or over (l, i) when lanes differ).
4. **replicated** (the given has more points): the given is ``k > 1`` consistent copies of the spec,
   lane for lane.  Precisely, with the spec over T threads x N elements and the given over
   T' = kt * T threads x N' = kv * N elements: thread ``t`` of the given acts as spec lane
   ``t mod T`` (copies along the thread bits above the spec's lanes: warps), and element ``i`` acts as
   spec element ``pext(i)``, ``i`` with ``log2 kv`` *copy bits* removed (N and N' powers of two; for
   other N the copies are whole blocks, ``i mod N``), and ``given(t, i) = spec(t mod T, pext(i))``
   at every point.  So each spec point, and each cell, is held exactly k = kt * kv times, every copy
   in the spec's element order.  The candidate copy-bit sets are finite (at most 256 are tried,
   highest bits first); each engine tries them in the same order, and both must name the same set.
   Z3 decides each candidate with one query (a point where the given differs from the projection).
5. Otherwise ``differs``, with the first difference (the same-domain witness of step 2, or what
   rules out the last step that applied).

Whatever the status, the given layout's own ``in_range`` / ``injective`` / ``surjective`` (against its
own extent, both engines, ``verify.checks.family.check_any``) are reported with it (``given_checks``):
a ``differs`` can hide that the given itself collides.  A CuTe layout of an operand with several MMA
computations (SM70 ``m8n8k4``: one quad-pair) given without ``ThrID`` that does not conform gets a
``hint`` to give it.

A family (wgmma ``N``, ldmatrix ``NUM``) is not compared as a whole: ``ConformError`` names it.
"""
from __future__ import annotations

import dataclasses
import itertools
import time
from typing import Any, Mapping

import numpy as np
import z3

from ..engines import smt
from ..layout.model import Codomain, Layout, cells_of
from ..layout.dims import thread_dim_name
from ..witnesses import DomainDiffers, NotPermuted, ReplicaDiffers, SpecGivenDiffer, Witness
from ..results import CheckResult, combine_engines
from ..results.conform import ConformResult, Permutation, Replication
from .equivalence import cell_dict as _cell
from .equivalence import cell_keys as _keys
from .equivalence import family_message, point_of, same_map, unspecified_message, where
from .fragment import DEFAULT_TIMEOUT, width
from ..layout.model import z3_cell_of

MAX_CANDIDATES = 256
GIVEN_CHECKS = ("in_range", "injective", "surjective")
SM70_THR_ID = "(4,2):(1,16)"  # CuTe's ThrID of every SM70 MMA atom (mma_traits_sm70.hpp): one quad-pair


class ConformError(ValueError):
    """The spec (or the given) cannot be conformed as a whole: a family over a parameter."""


# ----------------------------------------------------------------------------- helpers

def _same_point(a: Layout, b: Layout, la: z3.ExprRef, ia: z3.ExprRef, lb: z3.ExprRef,
                ib: z3.ExprRef) -> tuple[z3.BoolRef, z3.BoolRef, z3.BoolRef]:
    """(defined in a, defined in b, same cell of the same MMA computation) as Z3 terms."""
    oka, ra, ca = z3_cell_of(a, la, ia)
    okb, rb, cb = z3_cell_of(b, lb, ib)
    return oka, okb, z3.And(ra == rb, ca == cb, a.domain.z3_group(la) == b.domain.z3_group(lb))


# ----------------------------------------------------------------------------- permutations

def _enum_missing(kx: np.ndarray, ky: np.ndarray) -> tuple[int, int] | None:
    """First (l, i) where x is undefined or its cell is not among y's cells of lane l."""
    for lane in range(kx.shape[0]):
        have = ky[lane][ky[lane] >= 0]
        bad = (kx[lane] < 0) | ~np.isin(kx[lane], have)
        hits = np.flatnonzero(bad)
        if hits.size:
            return lane, int(hits[0])
    return None


def _enum_lane_collision(kx: np.ndarray) -> tuple[int, int, int] | None:
    """First (l, i2, i1): element i2 of lane l holds the cell of an earlier element i1 (the first)."""
    for lane in range(kx.shape[0]):
        seen: dict[int, int] = {}
        for i, key in enumerate(kx[lane].tolist()):
            if key < 0:
                continue
            if key in seen:
                return lane, i, seen[key]
            seen[key] = i
    return None


def _z3_missing(x: Layout, y: Layout, w: int, budget: smt.Budget,
                hint: tuple[int, ...] | None = None) -> tuple[str, tuple[int, int] | None]:
    lane, i = z3.BitVecs("lane i", w)
    okx, _, _ = z3_cell_of(x, lane, i)
    held = []
    for j in range(y.n_elements):
        _, oky, same = _same_point(x, y, lane, i, lane, smt.bv(j, w))
        held.append(z3.And(oky, same))
    res, m = smt.solve_min([x.domain.z3_contains(lane, i), z3.Not(z3.And(okx, z3.Or(held)))], [lane, i], budget,
                           list(hint) if hint is not None else None)
    return res, (smt.as_int(m, lane), smt.as_int(m, i)) if res == "sat" and m is not None else None


def _z3_lane_collision(x: Layout, w: int, budget: smt.Budget,
                       hint: tuple[int, ...] | None = None) -> tuple[str, tuple[int, int, int] | None]:
    lane, i1, i2 = z3.BitVecs("lane i1 i2", w)
    ok1, ok2, same = _same_point(x, x, lane, i1, lane, i2)
    cs = [x.domain.z3_contains(lane, i1), x.domain.z3_contains(lane, i2), i1 < i2, ok1, ok2, same]
    res, m = smt.solve_min(cs, [lane, i2, i1], budget, list(hint) if hint is not None else None)
    return res, (smt.as_int(m, lane), smt.as_int(m, i2), smt.as_int(m, i1)) if res == "sat" and m is not None else None


def _perm_witness(spec: Layout, given: Layout, part: str, pt: tuple[int, ...]) -> NotPermuted:
    side, lay = ("given", given) if part in ("a", "b") else ("spec", spec)
    if part in ("a", "c"):
        lane, i = pt
        return NotPermuted("not_held", side, lane, _cell(lay, lane, i), i=i, element=lay.element_name(i))
    lane, i2, i1 = pt
    return NotPermuted("lane_repeats", side, lane, _cell(lay, lane, i2),
                       first={"i": i1, "element": lay.element_name(i1)},
                       second={"i": i2, "element": lay.element_name(i2)})


def _perm_message(c: dict[str, Any], who: str = "lane") -> str:
    other = "spec" if c["side"] == "given" else "given"
    if c["kind"] == "not_held":
        if c["cell"] is None:
            return f"{c['side']} {who} {c['lane']} element {c['element']} is undefined"
        return (f"{c['side']} {who} {c['lane']} element {c['element']} holds {where(c['cell'])}, "
                f"which {other} {who} {c['lane']} does not hold")
    return (f"{c['side']} {who} {c['lane']} elements {c['first']['element']} and {c['second']['element']} "
            f"both hold {where(c['cell'])}")


def _confirm_perm(spec: Layout, given: Layout, c: Mapping[str, Any]) -> bool:
    lay = given if c["side"] == "given" else spec
    other = spec if lay is given else given
    if c["kind"] == "not_held":
        mine = point_of(lay, c["lane"], c["i"])
        return mine is None or all(point_of(other, c["lane"], j) != mine for j in range(other.n_elements))
    a, b = point_of(lay, c["lane"], c["first"]["i"]), point_of(lay, c["lane"], c["second"]["i"])
    return a is not None and a == b


def permuted(spec: Layout, given: Layout, timeout: float = DEFAULT_TIMEOUT) -> tuple[CheckResult, Permutation | None]:
    """Decide ``permuted`` (see the module docstring, step 3) with both engines; the permutation
    when proved (read from the enumeration, confirmed by Z3)."""
    t0 = time.perf_counter()
    ks, kg = _keys(cells_of(spec), cells_of(given))
    enum: NotPermuted | None = None
    enum_at: tuple[str, tuple[int, ...]] | None = None  # (part, point): the hint for Z3's query of that part
    for part, found in (("a", lambda: _enum_missing(kg, ks)), ("b", lambda: _enum_lane_collision(kg)),
                        ("c", lambda: _enum_missing(ks, kg)), ("d", lambda: _enum_lane_collision(ks))):
        pt = found()
        if pt is not None:
            enum = _perm_witness(spec, given, part, pt)
            enum_at = (part, pt)
            break
    w = max(width(spec), width(given))
    budget = smt.Budget(timeout)
    z3_res, z3_cex = "unsat", None

    def hint(part: str) -> tuple[int, ...] | None:
        return enum_at[1] if enum_at is not None and enum_at[0] == part else None
    for part, query in (("a", lambda: _z3_missing(given, spec, w, budget, hint("a"))),
                        ("b", lambda: _z3_lane_collision(given, w, budget, hint("b"))),
                        ("c", lambda: _z3_missing(spec, given, w, budget, hint("c"))),
                        ("d", lambda: _z3_lane_collision(spec, w, budget, hint("d")))):
        res, pt = query()
        if res != "unsat":
            z3_res = res
            z3_cex = _perm_witness(spec, given, part, pt) if pt is not None else None
            break
    result = combine_engines("permuted", "proved", smt.status(z3_res), z3_cex, enum,
                             lambda c: _perm_message(c, thread_dim_name(spec.threads)),
                             time.perf_counter() - t0, "every lane holds the spec's cells, in another element order",
                             lambda c: _confirm_perm(spec, given, c), same_witness=True)
    if result.status != "proved":
        return result, None
    perm = _read_permutation(ks, kg, spec.prefix)
    confirm = _z3_confirm_permutation(spec, given, perm, w, budget)
    if confirm != "unsat":
        status = "unknown" if confirm == "unknown" else "error"
        return CheckResult("permuted", status, "proved", None,
                           "Z3 could not confirm the permutation read from the enumeration"
                           if status == "unknown" else "Z3 refutes the permutation read from the enumeration",
                           time.perf_counter() - t0, {**result.engines, "z3_permutation": smt.status(confirm)}), None
    return CheckResult("permuted", "proved", "proved", None, f"permutation (given <- spec): {perm.text()}",
                       time.perf_counter() - t0, {**result.engines, "z3_permutation": "proved"}), perm


def _read_permutation(ks: np.ndarray, kg: np.ndarray, prefix: str) -> Permutation:
    groups: dict[tuple[int, ...], list[int]] = {}
    for lane in range(ks.shape[0]):
        where_spec = {int(k): j for j, k in enumerate(ks[lane].tolist())}
        perm = tuple(where_spec[int(k)] for k in kg[lane].tolist())
        groups.setdefault(perm, []).append(lane)
    ordered = sorted(((tuple(lanes), perm) for perm, lanes in groups.items()), key=lambda g: g[0][0])
    return Permutation(tuple(ordered), prefix)


def _table_term(var: z3.BitVecRef, values: list[int], w: int) -> z3.ExprRef:
    """``values[var]`` as an If chain (``var`` ranges over 0..len-1)."""
    term: z3.ExprRef = smt.bv(values[-1], w)
    for k in range(len(values) - 2, -1, -1):
        term = z3.If(var == k, smt.bv(values[k], w), term)
    return term


def _z3_confirm_permutation(spec: Layout, given: Layout, perm: Permutation, w: int, budget: smt.Budget) -> str:
    lane, i = z3.BitVecs("lane i", w)
    if perm.uniform:
        p = _table_term(i, list(perm.groups[0][1]), w)
    else:
        p = _table_term(i, list(perm.of_lane(spec.threads - 1)), w)
        for ln in range(spec.threads - 2, -1, -1):
            p = z3.If(lane == ln, _table_term(i, list(perm.of_lane(ln)), w), p)
    okg, oks, same = _same_point(given, spec, lane, i, lane, p)
    return smt.solve([given.domain.z3_contains(lane, i), z3.Not(z3.And(okg, oks, same))], budget)[0]


# ----------------------------------------------------------------------------- replication

def _pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def replication_candidates(spec: Layout, given: Layout) -> list[Replication] | str:
    """Every way the given could be copies of the spec, in the order both engines try them; or why
    none can (a message: the domain does not allow it)."""
    T, N, T2, N2 = spec.threads, spec.n_elements, given.threads, given.n_elements
    if given.groups != spec.groups:
        return f"MMA computations differ: spec has {spec.groups}, given has {given.groups}"
    if T2 % T or N2 % N or T2 * N2 <= T * N:
        return (f"the given's {T2} threads x {N2} elements are not a multiple of the spec's {T} x {N} "
                "(in both threads and elements, and larger)")
    kt, kv = T2 // T, N2 // N
    if kv == 1:
        return [Replication(kt, 1, (), tuple(range(N2)), T)]
    if not (_pow2(N) and _pow2(N2)):
        return [Replication(kt, kv, None, tuple(i % N for i in range(N2)), T)]
    nbits, cbits = N2.bit_length() - 1, kv.bit_length() - 1
    combos = list(itertools.combinations(range(nbits - 1, -1, -1), cbits))
    if len(combos) > MAX_CANDIDATES:
        return f"{len(combos)} ways to choose {cbits} copy bits of {nbits} (more than {MAX_CANDIDATES} are not tried)"
    out = []
    for bits in combos:
        keep = [b for b in range(nbits) if b not in bits]
        proj = tuple(sum(((i >> b) & 1) << pos for pos, b in enumerate(keep)) for i in range(N2))
        out.append(Replication(kt, kv, tuple(sorted(bits, reverse=True)), proj, T))
    return out


def _enum_replica_difference(spec: Layout, given: Layout, rep: Replication) -> tuple[int, int] | None:
    ks, kg = _keys(cells_of(spec), cells_of(given))
    lanes = np.arange(given.threads) % spec.threads
    proj = np.asarray(rep.projection)
    want = ks[lanes[:, None], proj[None, :]]
    bad = np.flatnonzero(((kg != want) | (kg < 0)).ravel())
    return None if not bad.size else divmod(int(bad[0]), given.n_elements)


def _z3_replica_difference(spec: Layout, given: Layout, rep: Replication, w: int, budget: smt.Budget,
                           minimise: bool, hint: tuple[int, int] | None = None) -> tuple[str, tuple[int, int] | None]:
    t, i = z3.BitVecs("thread i", w)
    lane = z3.SRem(t, smt.bv(spec.threads, w))
    if rep.copy_bits is None:
        j: z3.ExprRef = z3.SRem(i, smt.bv(spec.n_elements, w))
    else:
        keep = [b for b in range(given.n_elements.bit_length() - 1) if b not in rep.copy_bits]
        j = smt.bv(0, w)
        for pos, b in enumerate(keep):
            j = j | (((i >> b) & 1) << pos)
    okg, oks, same = _same_point(given, spec, t, i, lane, j)
    cs = [given.domain.z3_contains(t, i), z3.Not(z3.And(okg, oks, same))]
    res, m = smt.solve_min(cs, [t, i], budget, list(hint) if hint else None) if minimise else smt.solve(cs, budget)
    return res, (smt.as_int(m, t), smt.as_int(m, i)) if res == "sat" and m is not None else None


def _replica_witness(spec: Layout, given: Layout, rep: Replication, pt: tuple[int, int]) -> ReplicaDiffers:
    t, i = pt
    lane, j = t % spec.threads, rep.projection[i]
    return ReplicaDiffers(list(rep.copy_bits) if rep.copy_bits is not None else "blocks", t, i, given.element_name(i),
                          lane, j, spec.element_name(j), _cell(spec, lane, j), _cell(given, t, i))


def _replica_message(c: dict[str, Any]) -> str:
    bits = c["copy_bits"]
    how = ("element blocks" if bits == "blocks" else
           f"element bit{'s' if len(bits) > 1 else ''} {', '.join(map(str, bits))}" if bits else "the threads")
    return (f"not a consistent replica (copies along {how}): thread {c['lane']} element {c['element']} "
            f"(as lane {c['as_lane']} element {c['as_element']}): spec {where(c['spec'])}, "
            f"given {where(c['given'])}")


def replicated(spec: Layout, given: Layout, timeout: float = DEFAULT_TIMEOUT) -> tuple[CheckResult, Replication | None]:
    """Decide ``replicated`` (module docstring, step 4) with both engines; the copy structure when proved."""
    t0 = time.perf_counter()
    cands = replication_candidates(spec, given)
    if isinstance(cands, str):
        return CheckResult("replicated", "refuted", "proved", DomainDiffers("replication"), cands,
                           time.perf_counter() - t0, {"arithmetic": "refuted"}), None
    enum_found, enum_cex, enum_pt = None, None, None
    for rep in cands:
        pt = _enum_replica_difference(spec, given, rep)
        if pt is None:
            enum_found = rep
            break
        if enum_cex is None:
            enum_cex, enum_pt = _replica_witness(spec, given, rep, pt), pt
    w = max(width(spec), width(given), smt.width_for(given.threads * given.n_elements))
    budget = smt.Budget(timeout)
    z3_found, z3_cex, z3_res = None, None, "sat"
    for k, rep in enumerate(cands):
        res, pt = _z3_replica_difference(spec, given, rep, w, budget, minimise=(k == 0), hint=enum_pt if k == 0 else None)
        if res == "unsat":
            z3_found, z3_res = rep, "unsat"
            break
        if res == "unknown":
            z3_res = "unknown"
            break
        if k == 0 and pt is not None:
            z3_cex = _replica_witness(spec, given, rep, pt)
    seconds = time.perf_counter() - t0
    if z3_res == "unsat" and enum_found is not None and z3_found != enum_found:
        return CheckResult("replicated", "error", "proved", None,
                           f"the engines find different copy structures: Z3 {z3_found.describe()}, "  # type: ignore[union-attr]
                           f"enumeration {enum_found.describe()}", seconds,
                           {"z3": "proved", "enumeration": "proved"}), None
    result = combine_engines("replicated", "proved", smt.status(z3_res), z3_cex if z3_res == "sat" else None,
                             None if enum_found is not None else enum_cex, _replica_message, seconds,
                             enum_found.describe() if enum_found is not None else "",
                             lambda c: point_of(spec, c["as_lane"], c["as_i"]) != point_of(given, c["lane"], c["i"]),
                             same_witness=True)
    return result, (enum_found if result.status == "proved" else None)


# ----------------------------------------------------------------------------- conform


def _point_message(c: Mapping[str, Any], who: str = "lane") -> str:
    return (f"first difference: {who} {c['lane']} element {c['element']}: spec {where(c['first'])}, "
            f"given {where(c['second'])}")


def conform(spec: Layout, given: Layout, timeout: float = DEFAULT_TIMEOUT, *, notation: str = "",
            text: str = "", block: tuple[int, int] | None = None) -> ConformResult:
    """Decide whether ``given`` is ``spec`` (see the module docstring for every status), and check the
    given itself (``given_checks``).  ``block``: the rows x cols the given must cover (a block tile: its own
    extent otherwise)."""
    for lay in (spec, given):
        if lay.is_family:
            raise ConformError(family_message(lay, "conform"))
    if block is not None:
        given = dataclasses.replace(given, codomain=Codomain(block[0], block[1], given.codomain.dims))
    t0 = time.perf_counter()
    notation = notation or getattr(given.map, "notation", "")
    text = text or given.provenance.formula_text
    result = _decide(spec, given, timeout, notation, text, t0)
    from .family import check_any
    own = check_any(given, timeout)
    return dataclasses.replace(result, given_checks=tuple(own.get(name) for name in GIVEN_CHECKS),
                               hint=_thr_id_hint(spec, given, notation, result.status),
                               seconds=time.perf_counter() - t0)


def _thr_id_hint(spec: Layout, given: Layout, notation: str, status: str) -> str:
    """A CuTe layout of one quad-pair (SM70 ``m8n8k4``) given without ``ThrID`` covers lanes 0-7, not the
    lanes of MMA computation 0 (0-3 and 16-19), so it is neither lifted to the warp nor conforms."""
    if (notation != "cute" or spec.groups <= 1 or given.provenance.derived or given.threads >= spec.threads
            or status in ("equal", "permuted", "replicated")):
        return ""
    return (f"{spec.id} runs {spec.groups} MMA computations per warp, one per quad-pair; a CuTe SM70 atom "
            f"describes one quad-pair of {given.threads} threads and needs its ThrID to say which lanes those "
            f"are: give --thr-id \"{SM70_THR_ID}\" (api.cute(..., thr_id=\"{SM70_THR_ID}\"))")


def _table_outside(spec: Layout, given: Layout) -> SpecGivenDiffer | None:
    """A table's first cell outside the spec's rows x cols, read from its data (no evaluation); None when
    there is none, the given is not a table, or the spec itself has cells outside (then only the full
    comparison can tell)."""
    first_outside = getattr(given.map, "first_outside", None)
    if first_outside is None:
        return None
    hit = first_outside(spec.rows, spec.cols)
    if hit is None:
        return None
    c = cells_of(spec)
    inside = (c.row >= 0) & (c.row < spec.rows) & (c.col >= 0) & (c.col < spec.cols)
    if bool((c.ok & ~inside).any()):
        return None
    lane, i, row, col = hit
    return SpecGivenDiffer("extent", [spec.rows, spec.cols], [given.rows, given.cols],
                           {"lane": lane, "i": i, "element": given.element_name(i), "row": row, "col": col})


def _decide(spec: Layout, given: Layout, timeout: float, notation: str, text: str, t0: float) -> ConformResult:
    def done(status: str, cex: Witness | None, message: str, engines: dict[str, str],
             checks: tuple[CheckResult, ...], **kw: Any) -> ConformResult:
        return ConformResult(spec, given, status, cex, message, engines, checks, notation=notation, text=text,
                             seconds=time.perf_counter() - t0, **kw)

    unspecified = [lay for lay in (spec, given) if lay.unspecified]
    if unspecified:
        return done("unspecified", None, unspecified_message(unspecified), {}, ())
    from .tiled import can_tile
    if (given.rows, given.cols) != (spec.rows, spec.cols) and can_tile(spec, given):
        return _decide_tiled(spec, given, timeout, done)
    if (given.rows, given.cols) != (spec.rows, spec.cols):
        cex = SpecGivenDiffer("extent", [spec.rows, spec.cols], [given.rows, given.cols])
        return done("differs", cex, f"the given covers a {given.rows} x {given.cols} tile; the spec's "
                    f"{spec.operand} is {spec.rows} x {spec.cols}", {"arithmetic": "refuted"}, ())
    outside = _table_outside(spec, given)
    if outside is not None:
        o = outside.outside or {}
        return done("differs", outside, f"{thread_dim_name(given.threads)} {o['lane']} element {o['element']} of the given holds "
                    f"({o['row']}, {o['col']}), outside the spec's {spec.rows} x {spec.cols} {spec.operand}",
                    {"arithmetic": "refuted"}, ())
    same_domain = (given.threads, given.n_elements, given.groups) == (spec.threads, spec.n_elements, spec.groups)
    if same_domain:
        eq = same_map(spec, given, timeout, check="equal")
        if eq.status == "proved":
            return done("equal", None, "", dict(eq.engines), (eq,))
        if eq.status != "refuted":
            return done(eq.status, eq.counterexample, eq.message, dict(eq.engines), (eq,))
        first = eq.counterexample
        assert first is not None  # a refuted check carries its witness
        who = thread_dim_name(spec.threads)  # a block's or a warpgroup's thread 64 is no lane 64
        perm, p = permuted(spec, given, timeout)
        if perm.status == "proved":
            return done("permuted", first, _point_message(first, who), dict(perm.engines), (eq, perm), permutation=p)
        if perm.status != "refuted":
            return done(perm.status, first, perm.message, dict(perm.engines), (eq, perm))
        return done("differs", first, _point_message(first, who) + f"\nnot a permutation within {who}s: {perm.message}",
                    dict(perm.engines), (eq, perm))
    rep, r = replicated(spec, given, timeout)
    if rep.status == "proved":
        return done("replicated", None, "", dict(rep.engines), (rep,), replication=r)
    if rep.status != "refuted":
        return done(rep.status, rep.counterexample, rep.message, dict(rep.engines), (rep,))
    what = "; ".join(f"{name} differ: spec has {a}, given has {b}" for name, a, b in
                     (("threads", spec.threads, given.threads), ("elements", spec.n_elements, given.n_elements),
                      ("MMA computations", spec.groups, given.groups)) if a != b)
    if isinstance(rep.counterexample, DomainDiffers):
        cex = SpecGivenDiffer("domain", {"threads": spec.threads, "elements": spec.n_elements, "groups": spec.groups},
                              {"threads": given.threads, "elements": given.n_elements, "groups": given.groups})
        return done("differs", cex, f"{what}\nnot a replica: {rep.message}", dict(rep.engines), (rep,))
    return done("differs", rep.counterexample, f"{what}\n{rep.message}", dict(rep.engines), (rep,))




def _permuted_tile(spec: Layout, given: Layout, timeout: float, done: Any) -> ConformResult | str:
    """``permuted`` for a block tile: every thread holds the cells of the spec tiled over the block
    (``verify.checks.tiled.tile_of_permuted``, proved tiled by both engines), each once, in another element order
    (``permuted``, both engines, the permutation confirmed by Z3), and the sub-tiles cover the block (``coverage``);
    the permutation is said per warp (``BlockPermutation``), the first difference is ``same_map``'s.  Otherwise
    what the caller's ``differs`` adds: "" when the given is no such tile, a line when a step is undecided (an
    ``unknown`` within the budget, or the engines disagree), so that an undecided step is never passed over."""
    from .tiled import BlockPermutation, coverage, tile_of_permuted
    found = tile_of_permuted(spec, given, timeout)
    if found is None:
        return ""
    tiled_spec, tiling, st = found

    def undecided(r: CheckResult) -> str:
        return (f"whether its threads hold the cells of the spec's {spec.operand} tiled over the block in another "
                f"element order is undecided: {r.check} {r.status} ({r.message})")
    if tiling is None:
        return undecided(st)
    first = same_map(tiled_spec, given, timeout, names=("tiled spec", "given"))
    perm, p = permuted(tiled_spec, given, timeout)
    for r in (first, perm):
        if r.status in ("unknown", "error"):
            return undecided(r)
    if first.status != "refuted" or perm.status != "proved" or p is None:
        return ""
    cov, _ = coverage(given, tiling, timeout)
    if cov.status in ("unknown", "error"):
        return undecided(cov)
    if cov.status != "proved":
        return ""
    c = first.counterexample
    assert c is not None  # a refuted check carries its witness
    message = (f"first difference: thread {c['lane']} element {c['element']}: tiled spec {where(c['first'])}, "
               f"given {where(c['second'])}")
    return done("permuted", c, message, dict(perm.engines), (first, perm, cov),
                permutation=BlockPermutation(p, spec.threads, given.threads // spec.threads), tiling=tiling)


def _decide_tiled(spec: Layout, given: Layout, timeout: float, done: Any) -> ConformResult:
    """A given over more threads or elements and a larger extent than the spec: ``tiled`` (``verify.checks.tiled``:
    each warp's repeats are the spec moved to a sub-tile, and the sub-tiles cover the block), else ``differs``."""
    from .tiled import tiled
    st, tiling, cov, _ = tiled(spec, given, timeout)
    if tiling is None:
        if st.status != "refuted":
            return done(st.status, st.counterexample, st.message, dict(st.engines), (st,))
        swapped = _permuted_tile(spec, given, timeout, done)
        if isinstance(swapped, ConformResult):
            return swapped
        return done("differs", st.counterexample, f"not the spec's {spec.operand} tiled over the block: {st.message}"
                    + (f"\n{swapped}" if swapped else ""), dict(st.engines), (st,))
    assert cov is not None
    if cov.status == "proved":
        return done("tiled", None, "", dict(st.engines), (st, cov), tiling=tiling)
    if cov.status != "refuted":
        return done(cov.status, cov.counterexample, cov.message, dict(cov.engines), (st, cov), tiling=tiling)
    return done("differs", cov.counterexample, cov.message, dict(cov.engines), (st, cov), tiling=tiling)
