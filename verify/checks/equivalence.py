"""Are two layouts the same map?  Decided by both engines, with the first point where they differ.

Bijectivity cannot see a layout that is a bijection but not the hardware's (two registers swapped, a
stride that still covers the tile, warps in another order); equality with the reference can.  Used by
``conform`` (a layout someone wrote against the spec), ``diff`` (two releases of the doc) and checks of
doc pages against the reviewed specs.

Two layouts are *equal* when they have the same domain (threads, elements per thread, MMA computations)
and every (lane, i) is undefined in both or lands on the same cell of the same MMA computation.  The
witness is the first (lane, i) in scan order where they differ.
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from ..engines import smt
from ..layout.family import extent_text
from ..layout.model import Cells, Layout, cells_of
from ..results import CheckResult, combine_engines
from ..witnesses import DomainDiffers, FragmentDiffers, PointDiffers, at_member
from ..layout.reshape import relabel
from . import maps
from .fragment import DEFAULT_TIMEOUT
from ..layout.model import cell_at


@dataclass(frozen=True)
class Point:
    """Where one layout puts (lane, i): None when undefined there."""

    mma: int
    row: int
    col: int


def register_facts(lay: Layout) -> dict[str, str]:
    """What the doc says of a fragment's registers, as text (families: as written in the parameter):
    two layouts with the same map can still disagree here (a count or an element list changed)."""
    return {"registers": extent_text(lay.regs.count), "elements_per_register": str(lay.regs.elements_per_register),
            "register_type": lay.regs.type, "elements": " ".join((lay.regs.elements_text or "").split()),
            "domain": f"{lay.threads} threads x {extent_text(lay.domain.elements)}",
            "matrix": f"{extent_text(lay.codomain.rows)} x {extent_text(lay.codomain.cols)}"}


def family_message(lay: Layout, what: str) -> str:
    """Why ``what`` (handoff, conform) refuses a family: it compares one concrete layout."""
    def values(p: Any) -> str:
        runs = [(a, d, n) for a, d, n in p.runs()]
        return ", ".join(", ".join(str(a + d * j) for j in range(n)) if n <= 3 else f"{a}, {a + d}, ..., {a + d * (n - 1)}"
                         for a, d, n in runs)
    params = "; ".join(f"{p.name} in {{{values(p)}}}" for p in lay.domain.params)
    example = ", ".join(f"{p.name}={p.values[0]}" for p in lay.domain.params)
    return (f"{lay.id} is a family ({params}); {what} compares one member: in Python, "
            f"api.layout(specs, {lay.id!r}).instance({example})")


def unspecified_message(lays: list[Layout]) -> str:
    """Why no lane-for-lane verdict exists when the doc leaves a map unspecified (wmma)."""
    ids = " and ".join(lay.id for lay in lays)
    return (f"the doc leaves the map of {ids} unspecified (\"unspecified and target architecture "
            "dependent\"): no lane is stated to hold any cell, so this cannot be decided")


def point_of(layout: Layout, lane: int, i: int) -> Point | None:
    """The scalar reference (for witnesses): one point of one layout."""
    if not (0 <= lane < layout.threads and 0 <= i < layout.n_elements):
        return None
    cell = cell_at(layout, lane, i)
    return None if cell is None else Point(layout.group_of(lane), cell[0], cell[1])


def cell_dict(lay: Layout, lane: int, i: int) -> dict[str, int] | None:
    """``{"row", "col"}`` (plus ``"mma"`` when the layout has several MMA computations) of one point,
    by the scalar reference; None where undefined."""
    p = point_of(lay, lane, i)
    if p is None:
        return None
    return {"row": p.row, "col": p.col} | ({"mma": p.mma} if lay.groups > 1 else {})


def where(c: dict[str, int] | None) -> str:
    """A ``cell_dict`` in words: ``(13, 2)``, ``(1, 3) of MMA computation 2`` or ``undefined``."""
    if c is None:
        return "undefined"
    return f"({c['row']}, {c['col']})" + (f" of MMA computation {c['mma']}" if "mma" in c else "")


def cell_keys(*cells: Cells) -> list[np.ndarray]:
    """One int64 key per point, equal exactly when (MMA computation, row, col) are; -1 where undefined."""
    groups = [np.broadcast_to(c.group[:, None], c.ok.shape) for c in cells]
    parts = [(g, c.row, c.col) for g, c in zip(groups, cells)]
    lo = [min(int(p[k][c.ok].min()) if c.ok.any() else 0 for p, c in zip(parts, cells)) for k in range(3)]
    hi = [max(int(p[k][c.ok].max()) if c.ok.any() else 0 for p, c in zip(parts, cells)) for k in range(3)]
    span = [h - lo_ + 1 for lo_, h in zip(lo, hi)]
    if span[0] * span[1] * span[2] >= 2**62:  # far beyond any layout: exact, slowly
        table: dict[tuple[int, int, int], int] = {}
        out = []
        for p, c in zip(parts, cells):
            k = np.full(c.ok.shape, -1, np.int64)
            for idx in zip(*np.nonzero(c.ok)):
                k[idx] = table.setdefault((int(p[0][idx]), int(p[1][idx]), int(p[2][idx])), len(table))
            out.append(k)
        return out
    return [np.where(c.ok, ((p[0] - lo[0]) * span[1] + (p[1] - lo[1])) * span[2] + (p[2] - lo[2]), -1)
            .astype(np.int64) for p, c in zip(parts, cells)]


def _domain_problem(a: Layout, b: Layout) -> DomainDiffers | None:
    for name, x, y in (("threads", a.threads, b.threads), ("elements", a.n_elements, b.n_elements),
                       ("groups", a.groups, b.groups)):
        if x != y:
            return DomainDiffers(name, x, y)
    return None


def first_difference(a: Layout, b: Layout) -> FragmentDiffers | None:
    """The enumeration's first (lane, i) where ``a`` and ``b`` differ (both evaluated everywhere): a finder for
    callers that only filter (``references.equal_maps``), never a verdict (``same_map`` asks ``checks.maps``)."""
    ca, cb = cells_of(a), cells_of(b)
    ga = np.broadcast_to(ca.group[:, None], ca.ok.shape)
    gb = np.broadcast_to(cb.group[:, None], cb.ok.shape)
    both = ca.ok & cb.ok
    diff = (ca.ok != cb.ok) | (both & ((ca.row != cb.row) | (ca.col != cb.col) | (ga != gb)))
    hits = np.flatnonzero(diff.ravel())
    if not hits.size:
        return None
    lane, i = divmod(int(hits[0]), a.n_elements)
    return _witness(a, b, lane, i)


def _witness(a: Layout, b: Layout, lane: int, i: int) -> FragmentDiffers:
    def cell(p: Point | None) -> dict[str, int] | None:
        return None if p is None else ({"row": p.row, "col": p.col} | ({"mma": p.mma} if a.groups > 1 else {}))
    return FragmentDiffers(lane, i, a.element_name(i), cell(point_of(a, lane, i)), cell(point_of(b, lane, i)))


def _describe(a: Layout, b: Layout, names: tuple[str, str]) -> Any:
    def where(c: dict[str, int] | None) -> str:
        if c is None:
            return "undefined"
        mma = f" of MMA computation {c['mma']}" if "mma" in c else ""
        return f"({c['row']}, {c['col']}){mma}"

    def message(c: dict[str, Any]) -> str:
        if c["kind"] == "domain":
            return f"{c['what']} differ: {names[0]} has {c['first']}, {names[1]} has {c['second']}"
        return (f"lane {c['lane']} element {c['element']}: {names[0]} {where(c['first'])}, "
                f"{names[1]} {where(c['second'])}")
    return message


def same_map(a: Layout, b: Layout, timeout: float = DEFAULT_TIMEOUT, names: tuple[str, str] = ("spec", "given"),
             expected: str = "proved", check: str = "equal") -> CheckResult:
    """``proved`` when ``a`` and ``b`` are the same map (for every binding of a family's parameters), ``refuted``
    with the first differing (binding, lane, i) (``lane 5 element a2: spec (13, 2), given (5, 10)``;
    ``N = 24: ...``) otherwise.  The one decider (``checks.maps.same`` on the two layouts' maps, both engines,
    the parameters free for Z3) decides; this says it in the fragment's terms, after the domains (parameters,
    threads, elements, MMA computations) are compared."""
    t0 = time.perf_counter()
    describe = _describe(a, b, names)

    def message(c: Any) -> str:  # a witness (read as its JSON mapping) or its fields
        return (f"{_binding(c['params'])}: " if c.get("params") else "") + describe(
            {k: v for k, v in c.items() if k != "params"})

    pa, pb = [(p.name, p.values) for p in a.domain.params], [(p.name, p.values) for p in b.domain.params]
    cex: Any = None
    if pa != pb:
        cex = DomainDiffers("parameters", str(pa), str(pb))
        return CheckResult(check, "refuted", expected, cex, message(cex), time.perf_counter() - t0,
                           {"arithmetic": "refuted"})
    for env, ai in a.instances():
        problem = _domain_problem(ai, b.instance(**env) if env else b)
        if problem is not None:
            cex = at_member(problem, env) if env else problem
            return CheckResult(check, "refuted", expected, cex, message(cex), time.perf_counter() - t0,
                               {"arithmetic": "refuted"})
    am, bm = a.map, b.map
    if am.row_col != bm.row_col:  # one cell named in another axis vocabulary (a matrix's row/col, Tensor Memory's)
        bm = relabel(bm, outputs=dict(zip(bm.row_col, am.row_col)))
    r = maps.same(am, bm, timeout, names, expected, check)
    w = r.counterexample
    if r.status == "error" or (w is not None and not isinstance(w, PointDiffers)):
        return dataclasses.replace(r, seconds=time.perf_counter() - t0)
    if w is not None:
        env = dict(w.params)
        ai, bi = (a.instance(**env), b.instance(**env)) if env else (a, b)
        thread = next(d.name for d in a.map.inputs if d.name != "i")
        cex = _witness(ai, bi, w.point[thread], w.point["i"])
        cex = at_member(cex, env) if env else cex
    z3_res = {"proved": "unsat", "refuted": "sat"}.get(r.engines.get("z3", ""), "unknown")

    def confirm(c: dict[str, Any]) -> bool:
        pt = dict(c.get("params") or {})
        x, y = (a.instance(**pt), b.instance(**pt)) if pt else (a, b)
        return point_of(x, c["lane"], c["i"]) != point_of(y, c["lane"], c["i"])

    return combine_engines(check, expected, smt.status(z3_res), cex if z3_res == "sat" else None, cex, message,
                           time.perf_counter() - t0,
                           f"{names[0]} and {names[1]} are the same map for every "
                           + ", ".join(p.name for p in a.domain.params) if a.is_family else
                           f"{names[0]} and {names[1]} are the same map, (lane, i) for (lane, i)",
                           confirm, same_witness=True)


def _binding(env: Mapping[str, int]) -> str:
    return ", ".join(f"{k} = {v}" for k, v in env.items())
