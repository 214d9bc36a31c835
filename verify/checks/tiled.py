"""Block tiles: is a layout over several warps the spec's fragment tiled over a block?  ``tiled``.

A kernel's accumulator is 4 to 16 warps (or one to three warpgroups) tiled over a block tile, each warp
holding the instruction's fragment at several places (register repeats).  ``tiled`` decides that a given
layout is exactly that, with both engines, and reads off which warp holds which sub-tile.

**Terms.**  The spec ``S`` has ``T`` threads (its lanes: 32 for a warp's fragment, 128 for a warpgroup's),
``N`` elements per thread, an ``R x C`` extent and one MMA computation, and is defined at lane 0 element 0.
The given ``G`` has ``T' = k T`` threads and ``N' = r N`` elements per thread and covers a block ``M x Nb``
(its own extent, or ``--block``).  Thread ``t'`` of the given is lane ``l = t' mod T`` of *unit*
``u = t' div T`` (a warp when ``T = 32``, a warpgroup when ``T = 128``).  Element ``i`` of a thread is spec
element ``e(i)`` of *register repeat* ``t(i)``, for a set ``B`` of *repeat bits* of ``i``: ``t(i)`` is the
bits ``B`` of ``i`` read as a number, ``e(i)`` the other bits (``pext``), and ``i0(i) = i & mask(B)`` the
element of the same repeat that plays spec element 0.  (``N`` or ``N'`` not a power of two: whole blocks,
``e = i mod N``, ``t = i div N``, ``i0 = i - e``.)

**The decision.**  ``G`` is *tiled* from ``S`` when, for some ``B``:

1. **structure**: at every point ``(t', i)`` of the given, ``G`` is defined exactly where ``S`` is at
   ``(l, e(i))``, and where defined ``G(t', i) - S(l, e(i)) = G(u T, i0(i)) - S(0, 0)`` (row and col):
   the part of unit ``u`` in repeat ``t`` is the spec moved by one offset ``off(u, t)``, the same for every
   lane and element of it, read at lane 0 element 0.  This is one quantifier-free claim over a symbolic
   point, so Z3 decides it with one query per candidate ``B`` (a violating point, minimised to the first in
   (thread, i) order), and the enumeration evaluates it at every point.  The candidates are tried in one
   order by both engines (highest bits first, so the first is ``i = e + N t``: the instruction's elements
   together, repeats outermost, the convention of Triton's MMA layouts and of CuTe's ``TiledMMA``), at most
   256 of them, and both must pick the same ``B``; where none holds, the witness is the first candidate's
   first violating point, the same from both engines.
2. **coverage**: the ``k r`` sub-tiles ``off(u, t) + [0, R) x [0, C)`` cover the block, every cell the same
   number ``m`` of times (``m = k r R C / (M Nb)``; ``m = 1`` for an accumulator, more where warps hold
   copies, as the A operand of warps side by side along N).  For ``m = 1`` this is the given's own
   ``in_range``, ``injective`` and ``surjective`` over the block, decided by both engines
   (``verify.checks.family.check_any``): the witness is the first point outside, the first cell held twice,
   or the first cell held by no thread.  For ``m > 1``: Z3 proves ``in_range`` over the block, and the
   enumeration counts the points on every cell of ``G``, which must agree with the count over the proved
   sub-tiles (arithmetic); the witness is the first cell held by another number of points.

When (1) and (2) hold the status is ``tiled`` and the placements are reported: per unit and repeat, the
sub-tile's origin; as bases (the offset of each unit bit and each repeat bit) where the placement is linear,
as the warps' rows and columns, and as a map of sub-tiles.  (1) failing is ``differs`` with its witness;
(1) holding and (2) failing is ``differs`` with the placements and the coverage witness.
"""
from __future__ import annotations

import dataclasses
import itertools
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import z3

from ..engines import smt
from ..layout.elements import number_ranges
from ..layout.model import Codomain, Layout, cells_of
from ..results import CheckResult, combine_engines
from ..witnesses import CellCoverage, DomainDiffers, TileDiffers
from .equivalence import cell_dict, point_of, where
from .fragment import DEFAULT_TIMEOUT, width
from ..layout.model import z3_cell_of

MAX_CANDIDATES = 256


def unit_name(threads: int) -> str:
    """What one copy of a ``threads``-thread fragment is called: a warp, a warpgroup."""
    return {32: "warp", 128: "warpgroup"}.get(threads, f"group of {threads} threads")


def _pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


# ----------------------------------------------------------------------------- structure

@dataclass(frozen=True)
class Repeats:
    """How a thread's elements split into spec element and register repeat (see the module docstring)."""

    bits: tuple[int, ...] | None  # repeat bits of i, highest first; None: blocks (i = e + N t)
    n: int  # the spec's elements
    total: int  # the given's elements

    def e(self, i: np.ndarray) -> np.ndarray:
        if self.bits is None:
            return i % self.n
        keep = [b for b in range(self.total.bit_length() - 1) if b not in self.bits]
        return sum((((i >> b) & 1) << pos for pos, b in enumerate(keep)), i * 0)

    def t(self, i: np.ndarray) -> np.ndarray:
        if self.bits is None:
            return i // self.n
        return sum((((i >> b) & 1) << pos for pos, b in enumerate(sorted(self.bits))), i * 0)

    def i0(self, i: np.ndarray) -> np.ndarray:
        if self.bits is None:
            return i - i % self.n
        return i & sum((1 << b for b in self.bits), 0)

    def of_repeat(self, t: int) -> int:
        """The element of repeat ``t`` that plays spec element 0."""
        if self.bits is None:
            return t * self.n
        return sum(((t >> pos) & 1) << b for pos, b in enumerate(sorted(self.bits)))

    @property
    def count(self) -> int:
        return self.total // self.n

    def describe(self, prefix: str) -> str:
        if self.count == 1:
            return f"a thread's element {prefix}<i> is the spec's {prefix}<i>"
        if self.bits is None or tuple(self.bits) == tuple(range(self.total.bit_length() - 2,
                                                             self.total.bit_length() - 2 - len(self.bits), -1)):
            return f"a thread's element {prefix}<i> is the spec's {prefix}<i % {self.n}> of repeat i / {self.n}"
        bits = ", ".join(map(str, sorted(self.bits)))
        s = "s" if len(self.bits) > 1 else ""
        return (f"a thread's element {prefix}<i> is the spec's {prefix}<i without bit{s} {bits}> of repeat "
                f"(bit{s} {bits} of i)")

    def to_json(self) -> Any:
        return list(self.bits) if self.bits is not None else "blocks"


def candidates(spec: Layout, given: Layout) -> list[Repeats] | str:
    """Every repeat structure to try, in the order both engines try them; or why the given cannot be a tile
    of the spec at all (arithmetic on the domains)."""
    T, N, T2, N2 = spec.threads, spec.n_elements, given.threads, given.n_elements
    if spec.groups != 1 or given.groups != 1:
        return (f"the spec runs {spec.groups} MMA computations per warp; a block tile is compared with a fragment "
                "of one") if spec.groups != 1 else f"the given has {given.groups} MMA computations"
    if T2 % T or N2 % N:
        return (f"the given's {T2} threads x {N2} elements are not whole copies of the spec's {T} x {N} "
                f"(threads a multiple of {T}, elements a multiple of {N})")
    r = N2 // N
    if r == 1:
        return [Repeats((), N, N2)]
    if not (_pow2(N) and _pow2(N2)):
        return [Repeats(None, N, N2)]
    nbits, rbits = N2.bit_length() - 1, r.bit_length() - 1
    combos = list(itertools.combinations(range(nbits - 1, -1, -1), rbits))
    if len(combos) > MAX_CANDIDATES:
        return f"{len(combos)} ways to choose {rbits} repeat bits of {nbits} (more than {MAX_CANDIDATES} are not tried)"
    return [Repeats(tuple(bits), N, N2) for bits in combos]


def _enum_violation(spec: Layout, given: Layout, rep: Repeats, origin: tuple[int, int]) -> tuple[int, int] | None:
    cs, cg = cells_of(spec), cells_of(given)
    T = spec.threads
    threads = np.arange(given.threads, dtype=np.int64)
    lanes, base = threads % T, threads - threads % T
    idx = np.arange(given.n_elements, dtype=np.int64)
    e, i0 = np.asarray(rep.e(idx), np.int64), np.asarray(rep.i0(idx), np.int64)
    oks = cs.ok[lanes[:, None], e[None, :]]
    sr, sc = cs.row[lanes[:, None], e[None, :]], cs.col[lanes[:, None], e[None, :]]
    ok0 = cg.ok[base[:, None], i0[None, :]]
    r0, c0 = cg.row[base[:, None], i0[None, :]], cg.col[base[:, None], i0[None, :]]
    moved = ok0 & (cg.row - sr == r0 - origin[0]) & (cg.col - sc == c0 - origin[1])
    bad = (cg.ok != oks) | (cg.ok & ~moved)
    hits = np.flatnonzero(bad.ravel())
    return None if not hits.size else divmod(int(hits[0]), given.n_elements)


def _z3_pext(i: z3.BitVecRef, keep: list[int], w: int) -> z3.BitVecRef:
    out = smt.bv(0, w)
    for pos, b in enumerate(keep):
        out = out | (((i >> b) & 1) << pos)
    return out


def _z3_violation(spec: Layout, given: Layout, rep: Repeats, origin: tuple[int, int], w: int, budget: smt.Budget,
                  minimise: bool, hint: tuple[int, int] | None) -> tuple[str, tuple[int, int] | None]:
    t, i = z3.BitVecs("thread i", w)
    T = smt.bv(spec.threads, w)
    lane = z3.SRem(t, T)
    base = t - lane
    if rep.bits is None:
        e: z3.ExprRef = z3.SRem(i, smt.bv(rep.n, w))
        i0: z3.ExprRef = i - e
    else:
        keep = [b for b in range(given.n_elements.bit_length() - 1) if b not in rep.bits]
        e = _z3_pext(i, keep, w)
        i0 = i & smt.bv(sum(1 << b for b in rep.bits), w)
    okg, rg, cg = z3_cell_of(given, t, i)
    ok0, r0, c0 = z3_cell_of(given, base, i0)
    oks, rs, cs = z3_cell_of(spec, lane, e)
    orr, oc = smt.bv(origin[0], w), smt.bv(origin[1], w)
    holds = z3.And(okg == oks, z3.Implies(okg, z3.And(ok0, rg - rs == r0 - orr, cg - cs == c0 - oc)))
    cs_ = [given.domain.z3_contains(t, i), z3.Not(holds)]
    res, m = smt.solve_min(cs_, [t, i], budget, list(hint) if hint else None) if minimise else smt.solve(cs_, budget)
    return res, (smt.as_int(m, t), smt.as_int(m, i)) if res == "sat" and m is not None else None


def _witness(spec: Layout, given: Layout, rep: Repeats, origin: tuple[int, int], pt: tuple[int, int]) -> TileDiffers:
    t, i = pt
    T = spec.threads
    lane, u = t % T, t // T
    e = int(rep.e(np.asarray(i, np.int64)))
    i0 = int(rep.i0(np.asarray(i, np.int64)))
    ref = cell_dict(given, u * T, i0)
    offset = None if ref is None else [ref["row"] - origin[0], ref["col"] - origin[1]]
    return TileDiffers(unit_name(T), t, i, given.element_name(i), u, lane, int(rep.t(np.asarray(i, np.int64))), e,
                       spec.element_name(e), cell_dict(spec, lane, e), cell_dict(given, t, i),
                       {"thread": u * T, "i": i0, "element": given.element_name(i0), "cell": ref}, offset, rep.to_json())


def _moved(cell: dict[str, int] | None, offset: list[int] | None) -> dict[str, int] | None:
    if cell is None or offset is None:
        return None
    return {"row": cell["row"] + offset[0], "col": cell["col"] + offset[1]}


def _message(c: dict[str, Any]) -> str:
    head = (f"thread {c['thread']} ({c['unit']} {c['index']}, lane {c['lane']}) element {c['element']} "
            f"(repeat {c['repeat']}, as spec element {c['as_element']})")
    ref = c["reference"]
    if c["offset"] is None:
        return (f"{head}: the repeat's reference point, thread {ref['thread']} element {ref['element']}, is "
                "undefined, so the repeat is not the spec moved")
    expected = _moved(c["spec"], c["offset"])
    return (f"{head}: {c['unit']} {c['index']}'s repeat {c['repeat']} is the spec moved by "
            f"({c['offset'][0]:+d}, {c['offset'][1]:+d}) (read at thread {ref['thread']} element {ref['element']}), "
            f"so it should hold {where(expected)}; it holds {where(c['given'])}")


def _confirm(spec: Layout, given: Layout, c: dict[str, Any], origin: tuple[int, int]) -> bool:
    g = point_of(given, c["thread"], c["i"])
    s = point_of(spec, c["lane"], c["as_i"])
    ref = point_of(given, c["reference"]["thread"], c["reference"]["i"])
    if (g is None) != (s is None):
        return True
    if g is None or s is None:
        return False
    if ref is None:
        return True
    return (g.row - s.row, g.col - s.col) != (ref.row - origin[0], ref.col - origin[1])


def structure(spec: Layout, given: Layout, timeout: float = DEFAULT_TIMEOUT) -> tuple[CheckResult, Repeats | None]:
    """Step 1 of the module docstring, with both engines: the repeat structure when proved."""
    t0 = time.perf_counter()
    cands = candidates(spec, given)
    if isinstance(cands, str):
        return CheckResult("tiled", "refuted", "proved", DomainDiffers("tile"), cands,
                           time.perf_counter() - t0, {"arithmetic": "refuted"}), None
    origin_pt = point_of(spec, 0, 0)
    if origin_pt is None:
        return CheckResult("tiled", "refuted", "proved", DomainDiffers("origin"),
                           "the spec is undefined at lane 0 element 0, where each sub-tile is read",
                           time.perf_counter() - t0, {"arithmetic": "refuted"}), None
    origin = (origin_pt.row, origin_pt.col)
    enum_found, enum_cex, enum_pt = None, None, None
    for rep in cands:
        pt = _enum_violation(spec, given, rep, origin)
        if pt is None:
            enum_found = rep
            break
        if enum_cex is None:
            enum_cex, enum_pt = _witness(spec, given, rep, origin, pt), pt
    w = max(width(spec), width(given)) + 1
    budget = smt.Budget(timeout)
    z3_found, z3_cex, z3_res = None, None, "sat"
    for k, rep in enumerate(cands):
        res, pt = _z3_violation(spec, given, rep, origin, w, budget, minimise=(k == 0), hint=enum_pt if k == 0 else None)
        if res == "unsat":
            z3_found, z3_res = rep, "unsat"
            break
        if res == "unknown":
            z3_res = "unknown"
            break
        if k == 0 and pt is not None:
            z3_cex = _witness(spec, given, rep, origin, pt)
    seconds = time.perf_counter() - t0
    if z3_res == "unsat" and enum_found is not None and z3_found != enum_found:
        return CheckResult("tiled", "error", "proved", None,
                           f"the engines find different repeat structures: Z3 {z3_found.to_json()}, "  # type: ignore[union-attr]
                           f"enumeration {enum_found.to_json()}", seconds, {"z3": "proved", "enumeration": "proved"}), None
    result = combine_engines("tiled", "proved", smt.status(z3_res), z3_cex if z3_res == "sat" else None,
                             None if enum_found is not None else enum_cex, _message, seconds,
                             "every unit's repeat is the spec moved to a sub-tile",
                             lambda c: _confirm(spec, given, dict(c), origin), same_witness=True)
    return result, (enum_found if result.status == "proved" else None)


# ----------------------------------------------------------------------------- placements

@dataclass(frozen=True)
class Tiling:
    """Where each unit's repeats sit: ``placements[(u, t)] = (row, col)`` of the sub-tile's origin (the cell of
    spec lane 0 element 0 moved), for ``units`` units of ``unit`` threads and ``repeats.count`` repeats."""

    unit: int  # threads per unit (the spec's)
    units: int
    repeats: Repeats
    tile: tuple[int, int]  # the spec's R x C
    block: tuple[int, int]
    placements: tuple[tuple[int, int, int, int], ...]  # (unit, repeat, row, col) of each sub-tile
    multiplicity: int  # how many sub-tiles hold each cell (0: not a whole number)
    prefix: str = "c"
    operand: str = "C"

    @property
    def name(self) -> str:
        return unit_name(self.unit)

    def offset(self, u: int, t: int) -> tuple[int, int]:
        r, c = self.placements[u * self.repeats.count + t][2:]
        return r, c

    def bases(self) -> tuple[list[tuple[int, int]], list[tuple[int, int]]] | None:
        """(per unit bit, per repeat bit) offsets when the placement is linear in the bits (the origin at unit 0
        repeat 0 plus the offsets of the set bits), else None."""
        k, r = self.units, self.repeats.count
        if not (_pow2(k) and _pow2(r)):
            return None
        o = self.offset(0, 0)
        ub = [tuple(a - b for a, b in zip(self.offset(1 << j, 0), o)) for j in range(k.bit_length() - 1)]
        rb = [tuple(a - b for a, b in zip(self.offset(0, 1 << j), o)) for j in range(r.bit_length() - 1)]
        for u in range(k):
            for t in range(r):
                want = [o[0], o[1]]
                for j, b in enumerate(ub):
                    if u >> j & 1:
                        want = [want[0] + b[0], want[1] + b[1]]
                for j, b in enumerate(rb):
                    if t >> j & 1:
                        want = [want[0] + b[0], want[1] + b[1]]
                if tuple(want) != self.offset(u, t):
                    return None
        return ub, rb  # type: ignore[return-value]

    def _spans(self, starts: set[int], size: int) -> str:
        cells = sorted({s + d for s in starts for d in range(size)})
        return number_ranges(cells)

    def unit_line(self, u: int) -> str:
        """``warp 1: rows 16-31 x cols 0-255`` (a product of rows and columns), or its sub-tiles' origins."""
        offs = [self.offset(u, t) for t in range(self.repeats.count)]
        rows, cols = {o[0] for o in offs}, {o[1] for o in offs}
        if len(set(offs)) == len(rows) * len(cols) == len(offs):
            return (f"{self.name} {u}: rows {self._spans(rows, self.tile[0])} x cols "
                    f"{self._spans(cols, self.tile[1])}")
        shown = ", ".join(f"({r}, {c})" for r, c in offs[:8])
        return f"{self.name} {u}: sub-tiles at {shown}{', ...' if len(offs) > 8 else ''}"

    def grid(self) -> list[str]:
        """The block as sub-tiles, one character per sub-tile (the unit holding it, base 36; ``+`` where several
        units do, ``.`` where none), when the sub-tiles sit on the R x C grid and the map is small."""
        R, C = self.tile
        M, N = self.block
        if M % R or N % C or M // R > 32 or N // C > 64 or any(r % R or c % C for _, _, r, c in self.placements):
            return []
        holders: dict[tuple[int, int], set[int]] = {}
        for u, _, r, c in self.placements:
            holders.setdefault((r // R, c // C), set()).add(u)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"
        out = []
        for gr in range(M // R):
            line = ""
            for gc in range(N // C):
                h = holders.get((gr, gc), set())
                line += "." if not h else "+" if len(h) > 1 else digits[next(iter(h))] if next(iter(h)) < 36 else "#"
            out.append(line)
        return out

    def describe(self, covered: bool = True) -> list[str]:
        """The placement as text lines; ``covered``: the coverage was proved (else the counts are only stated)."""
        R, C = self.tile
        M, N = self.block
        n = len(self.placements)
        held = ("each cell held once" if self.multiplicity == 1 else
                f"each cell held by {self.multiplicity} sub-tiles (copies)" if self.multiplicity > 1 else "")
        if not covered or not held:
            held = f"{n * R * C} sub-tile cells for the block's {M * N}"
        lines = [f"block {M} x {N}: {n} sub-tiles of {R} x {C} (the spec's {self.operand}), {held}",
                 f"{self.units} {self.name}{'s' if self.units > 1 else ''} of {self.unit} threads x "
                 f"{self.repeats.count} register repeat{'s' if self.repeats.count > 1 else ''}; "
                 f"{self.repeats.describe(self.prefix)}"]
        bases = self.bases()
        if bases is not None and n > 1:
            ub, rb = bases
            o = self.offset(0, 0)
            parts = [f"{self.name} 0 repeat 0 at ({o[0]}, {o[1]})"]
            if ub:
                parts.append(f"each {self.name} bit adds " + ", ".join(f"({a}, {b})" for a, b in ub))
            if rb:
                parts.append("each repeat bit adds " + ", ".join(f"({a}, {b})" for a, b in rb))
            lines.append("placement (row, col): " + "; ".join(parts))
        shown = list(range(self.units)) if self.units <= 16 else list(range(8)) + [self.units - 1]
        for u in shown:
            if self.units > 16 and u == self.units - 1:
                lines.append("...")
            lines.append(self.unit_line(u))
        g = self.grid()
        if g and n > 1:
            lines.append(f"{self.name}s over the block, one character per {R} x {C} sub-tile:")
            lines.extend(f"  {x}" for x in g)
        return lines

    def to_json(self) -> dict[str, Any]:
        bases = self.bases()
        return {"unit": self.name, "unit_threads": self.unit, "units": self.units, "repeats": self.repeats.count,
                "repeat_bits": self.repeats.to_json(), "tile": list(self.tile), "block": list(self.block),
                "multiplicity": self.multiplicity,
                "bases": None if bases is None else {"origin": list(self.offset(0, 0)),
                                                     "unit": [list(b) for b in bases[0]],
                                                     "repeat": [list(b) for b in bases[1]]},
                "placements": [{"unit": u, "repeat": t, "row": r, "col": c} for u, t, r, c in self.placements]}


def placements(spec: Layout, given: Layout, rep: Repeats) -> Tiling:
    """Each sub-tile's origin, read from the enumeration once ``structure`` has proved ``rep``."""
    cg = cells_of(given)
    origin = point_of(spec, 0, 0)
    assert origin is not None
    k, T = given.threads // spec.threads, spec.threads
    out = []
    for u in range(k):
        for t in range(rep.count):
            i0 = rep.of_repeat(t)
            out.append((u, t, int(cg.row[u * T, i0]) - origin.row + 0, int(cg.col[u * T, i0]) - origin.col + 0))
    cells = k * rep.count * spec.rows * spec.cols
    block = given.rows * given.cols
    return Tiling(T, k, rep, (spec.rows, spec.cols), (given.rows, given.cols), tuple(out),
                  cells // block if cells % block == 0 else 0, spec.prefix, spec.operand)


# ----------------------------------------------------------------------------- coverage

def coverage(given: Layout, tiling: Tiling, timeout: float = DEFAULT_TIMEOUT) -> tuple[CheckResult, tuple[CheckResult, ...]]:
    """Step 2 of the module docstring: (the verdict, the given's own checks over the block)."""
    from .family import check_any
    t0 = time.perf_counter()
    own = check_any(given, timeout)
    checks = tuple(own.get(name) for name in ("in_range", "injective", "surjective"))
    m = tiling.multiplicity
    if m <= 1:  # once (or not a whole number of times: the first hole, collision or point outside says where)
        bad = next((c for c in checks if c.status != "proved"), None)
        if bad is None:
            return CheckResult("coverage", "proved", "proved", None, "the sub-tiles cover the block, each cell once",
                               time.perf_counter() - t0, {"z3": "proved", "enumeration": "proved"}), checks
        what = {"in_range": "a point outside the block", "injective": "a cell held twice",
                "surjective": "a cell held by no thread"}[bad.check]
        return CheckResult("coverage", bad.status, "proved", bad.counterexample,
                           f"the sub-tiles do not cover the {given.rows} x {given.cols} block exactly ({what}): "
                           f"{bad.message}", time.perf_counter() - t0, dict(bad.engines)), checks
    in_range = checks[0]
    if in_range.status != "proved":
        return CheckResult("coverage", in_range.status, "proved", in_range.counterexample,
                           f"the sub-tiles leave the {given.rows} x {given.cols} block: {in_range.message}",
                           time.perf_counter() - t0, dict(in_range.engines)), checks
    enum_counts = _enum_counts(given)
    arith_counts = _placement_counts(tiling)
    engines = {"z3": "proved", "enumeration": "proved", "arithmetic": "proved"}
    if not np.array_equal(enum_counts, arith_counts):
        return CheckResult("coverage", "error", "proved", None,
                           "the points counted on the given's cells and over its proved sub-tiles disagree",
                           time.perf_counter() - t0, {**engines, "arithmetic": "error"}), checks
    if m > 1 and bool((enum_counts == m).all()):
        return CheckResult("coverage", "proved", "proved", None,
                           f"the sub-tiles cover the block, each cell {m} times", time.perf_counter() - t0,
                           engines), checks
    zero = np.flatnonzero(enum_counts.ravel() == 0)
    odd = zero if zero.size else np.flatnonzero((enum_counts != (m or int(enum_counts.max()))).ravel())
    row, col = divmod(int(odd[0]), given.cols)
    held = int(enum_counts[row, col])
    cex = CellCoverage(row, col, held, m or None)
    msg = (f"the sub-tiles do not cover the {given.rows} x {given.cols} block "
           + (f"{m} times each" if m else "the same number of times") + f": cell (row {row}, col {col}) is held "
           + ("by no thread" if held == 0 else f"{held} times"))
    return CheckResult("coverage", "refuted", "proved", cex, msg, time.perf_counter() - t0,
                       {**engines, "enumeration": "refuted", "arithmetic": "refuted"}), checks


def _enum_counts(given: Layout) -> np.ndarray:
    c = cells_of(given)
    inside = c.ok & (c.row >= 0) & (c.row < given.rows) & (c.col >= 0) & (c.col < given.cols)
    keys = (c.row * given.cols + c.col)[inside]
    return np.bincount(keys, minlength=given.rows * given.cols).reshape(given.rows, given.cols)


def _placement_counts(tiling: Tiling) -> np.ndarray:
    R, C = tiling.tile
    out = np.zeros(tiling.block, np.int64)
    for _, _, r, c in tiling.placements:
        out[max(r, 0):max(r + R, 0), max(c, 0):max(c + C, 0)] += 1
    return out


# ----------------------------------------------------------------------------- a permuted tile

def _plural(threads: int) -> str:
    name = unit_name(threads)
    return name + "s" if threads in (32, 128) else f"groups of {threads} threads"


@dataclass(frozen=True)
class BlockPermutation:
    """A block tile whose threads hold the cells of the spec tiled over the block (``tiling``) in another element
    order: ``permutation`` (``verify.results.conform.Permutation`` over the given's threads: given element i holds
    the cell the tiled spec's element ``perm[i]`` holds), read per unit (warp, warpgroup) of ``unit`` threads."""

    permutation: Any
    unit: int
    units: int

    def entries(self) -> list[tuple[str, str]]:
        """(who, permutation) in unit order: whole units with one permutation grouped (``warps 0, 2-3``), a unit
        whose lanes differ by lane groups (``warp 1 lanes 0-3``)."""
        whole: dict[str, list[int]] = {}
        parts: list[tuple[int, str, str]] = []
        for u in range(self.units):
            lo, hi = u * self.unit, (u + 1) * self.unit
            mine = [([t - lo for t in threads if lo <= t < hi], perm) for threads, perm in self.permutation.groups]
            mine = [(lanes, perm) for lanes, perm in mine if lanes]
            if len(mine) == 1:
                whole.setdefault(self.permutation.cycles_text(mine[0][1]), []).append(u)
            else:
                parts.extend((u, f"{unit_name(self.unit)} {u} lane{'s' if len(lanes) > 1 else ''} {number_ranges(lanes)}",
                              self.permutation.cycles_text(perm)) for lanes, perm in mine)
        out = [(units[0], (f"{unit_name(self.unit)} {units[0]}" if len(units) == 1 else
                           f"{_plural(self.unit)} {number_ranges(units)}"), text) for text, units in whole.items()]
        same = "as spec"  # the permuted ones first, then the ones as the tiled spec, each in unit order
        return [(who, text) for _, who, text in sorted(out + parts, key=lambda x: (x[2] == same, x[0]))]

    def text(self) -> str:
        return "; ".join(f"{who}: {text}" for who, text in self.entries())

    def to_json(self) -> dict[str, Any]:
        return {**self.permutation.to_json(), "text": self.text(), "unit": unit_name(self.unit),
                "per_unit": [{"who": who, "permutation": text} for who, text in self.entries()]}


def _enum_permuted_tile(spec: Layout, given: Layout) -> tuple[Repeats, tuple[tuple[int, int, int, int], ...]] | None:
    """The repeat structure and the sub-tiles (unit, repeat, tile row, tile col) for which every thread of the given
    holds exactly the cells of the spec moved there (in any element order), read from the enumeration: each part's
    sub-tile is where its cells start (the smallest row and column), on the spec's R x C grid.  None when no
    candidate has it."""
    cands = candidates(spec, given)
    cs, cg = cells_of(spec), cells_of(given)
    if isinstance(cands, str) or not (bool(cs.ok.all()) and bool(cg.ok.all())):
        return None
    T, k, R, C = spec.threads, given.threads // spec.threads, spec.rows, spec.cols
    r0, c0 = int(cs.row.min()), int(cs.col.min())
    threads = np.arange(given.threads, dtype=np.int64)
    lanes, units = threads % T, threads // T
    idx = np.arange(given.n_elements, dtype=np.int64)
    wide = int(max(cg.col.max(), cs.col.max())) + 2 * C + 1
    kg = np.sort(cg.row * wide + cg.col, axis=1)
    if kg.shape[1] > 1 and not bool((np.diff(kg, axis=1) != 0).all()):
        return None  # a thread holding a cell twice is no permutation of a tile
    for rep in cands:
        e, t = np.asarray(rep.e(idx), np.int64), np.asarray(rep.t(idx), np.int64)
        sr, sc = cs.row[lanes[:, None], e[None, :]], cs.col[lanes[:, None], e[None, :]]
        for off in _offsets(cg, sr, sc, t, k, rep.count, T, (r0, c0)):
            if bool((off < 0).any() or (off[..., 0] % R).any() or (off[..., 1] % C).any()):
                continue
            er = sr + off[units[:, None], t[None, :], 0]
            ec = sc + off[units[:, None], t[None, :], 1]
            if np.array_equal(np.sort(er * wide + ec, axis=1), kg):
                return rep, tuple((u, tt, int(off[u, tt, 0]) // R, int(off[u, tt, 1]) // C)
                                  for u in range(k) for tt in range(rep.count))
    return None


def _offsets(cg: Any, sr: np.ndarray, sc: np.ndarray, t: np.ndarray, k: int, count: int, T: int,
             origin: tuple[int, int]) -> list[np.ndarray]:
    """Candidate offsets of every (unit, repeat) part (``[k, count, 2]``): the move most of its points make (the
    given's cell less the spec's: right where only a few elements are swapped, across repeats too; the smallest
    such move on a tie), and where its cells start (right for any order of the elements within the part)."""
    mode = np.zeros((k, count, 2), np.int64)
    start = np.zeros((k, count, 2), np.int64)
    for u in range(k):
        for tt in range(count):
            part = (slice(u * T, (u + 1) * T), t == tt)
            dr = (cg.row[part] - sr[part]).ravel()
            dc = (cg.col[part] - sc[part]).ravel()
            moves, n = np.unique(np.stack([dr, dc], axis=1), axis=0, return_counts=True)
            mode[u, tt] = moves[int(np.argmax(n))]
            start[u, tt] = (int(cg.row[part].min()) - origin[0], int(cg.col[part].min()) - origin[1])
    return [mode] if np.array_equal(mode, start) else [mode, start]


def tile_of_permuted(spec: Layout, given: Layout, timeout: float = DEFAULT_TIMEOUT
                     ) -> tuple[Layout, Tiling | None, CheckResult] | None:
    """For a given that is not ``tiled``: the spec tiled over the block at the sub-tiles where the given's threads hold
    its cells in some element order (two registers swapped in one warp), its tiling (None unless both engines prove
    it tiled) and that proof (``structure``); None when the enumeration finds no such sub-tiles.

    The candidate sub-tiles are read from the enumeration (``_enum_permuted_tile``); the tiled spec is built from
    the spec with the algebra (``verify.layout.block.tile_at``), and both engines prove it ``tiled`` (``structure``).
    Whether the given is a permutation of it is ``verify.checks.conform``'s ``permuted`` (the caller's)."""
    from ..layout.block import tile_at
    found = _enum_permuted_tile(spec, given)
    if found is None:
        return None
    rep, places = found
    tiled_spec = tile_at(spec, given.threads // spec.threads, rep.count, places, (given.rows, given.cols),
                         rep.bits or None, layout_id=f"{spec.id} tiled over {given.rows} x {given.cols}",
                         derived=f"{spec.id} at the given's sub-tiles")
    st, proved = structure(spec, tiled_spec, timeout)
    return tiled_spec, (placements(spec, tiled_spec, proved) if proved is not None else None), st


# ----------------------------------------------------------------------------- the check

def can_tile(spec: Layout, given: Layout) -> bool:
    """Whether ``tiled`` applies (arithmetic): a plain spec of one MMA computation that is defined at lane 0
    element 0, and a given with whole copies of its threads and elements and more points than it."""
    return (not spec.is_family and not given.is_family and not spec.unspecified and not given.unspecified
            and not spec.partial and spec.groups == 1 and given.groups == 1
            and given.threads % spec.threads == 0 and given.n_elements % spec.n_elements == 0
            and given.threads * given.n_elements > spec.threads * spec.n_elements)


def tiled(spec: Layout, given: Layout, timeout: float = DEFAULT_TIMEOUT, block: tuple[int, int] | None = None
          ) -> tuple[CheckResult, Tiling | None, CheckResult | None, tuple[CheckResult, ...]]:
    """Decide ``tiled`` (module docstring): (structure, the tiling when the structure holds, coverage, the
    given's own checks over the block).  ``block``: the block the given must cover (else its own extent)."""
    if block is not None:
        given = dataclasses.replace(given, codomain=Codomain(block[0], block[1], given.codomain.dims))
    st, rep = structure(spec, given, timeout)
    if rep is None:
        return st, None, None, ()
    tiling = placements(spec, given, rep)
    cov, own = coverage(given, tiling, timeout)
    return st, tiling, cov, own


__all__ = ["BlockPermutation", "Repeats", "Tiling", "can_tile", "candidates", "coverage", "placements",
           "structure", "tile_of_permuted", "tiled", "unit_name"]
