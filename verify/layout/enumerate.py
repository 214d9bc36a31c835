"""The enumeration engine's verdicts on a layout, from every point evaluated at once.

``decide`` finds the first point outside the matrix, the first collision and the first hole
of a ``Cells`` evaluation, canonically ordered, so that the checks, doc ingestion and the fix
search all judge a layout the same way.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .model import Cells


@dataclass(frozen=True)
class Enumeration:
    """Every (lane, i) evaluated; the verdicts of the second engine with witnesses."""

    in_range: dict[str, Any] | None
    injective: dict[str, Any] | None
    surjective: dict[str, Any] | None


def decide(cells: Cells, rows: int, cols: int, groups: int, name: Callable[[int], str]) -> Enumeration:
    """First bad element, first collision, first hole, from every point of a layout at once.

    Witnesses are the first in (lane, i) order; a collision pairs the first point whose cell
    an earlier point already holds with that earlier point (cells outside the matrix count
    too); holes are the first in (mma, row, col) order.
    """
    threads, n = cells.ok.shape
    g = np.broadcast_to(cells.group[:, None], (threads, n))
    good_group = (g >= 0) & (g < groups)
    inside = cells.ok & good_group & (cells.row >= 0) & (cells.row < rows) & (cells.col >= 0) & (cells.col < cols)

    def elem(p: int) -> dict[str, Any]:
        lane, i = divmod(int(p), n)
        return {"lane": lane, "i": i, "element": name(i)}

    def mma(d: dict[str, Any], grp: int) -> dict[str, Any]:
        return {**d, "mma": int(grp)} if groups > 1 else d

    bad_range = None
    bad = np.flatnonzero(~inside.ravel())
    if bad.size:
        p = int(bad[0])
        lane, i = divmod(p, n)
        ok = bool(cells.ok[lane, i])
        bad_range = mma({**elem(p), "row": int(cells.row[lane, i]) if ok else None,
                         "col": int(cells.col[lane, i]) if ok else None}, int(cells.group[lane]))
    collision = None
    flat_g, flat_r, flat_c = g.ravel(), cells.row.ravel(), cells.col.ravel()
    hole = None
    if bad_range is None:
        # every point defined and inside: cells are numbered g*rows*cols + r*cols + c and counted
        key = (flat_g * rows + flat_r) * cols + flat_c
        counts = np.bincount(key, minlength=groups * rows * cols)
        if counts.max(initial=0) > 1:
            collision = _first_collision(key, np.arange(key.size), elem, mma, flat_r, flat_c, cells.group, n)
        holes = np.flatnonzero(counts == 0)
    else:
        defined = np.flatnonzero(cells.ok.ravel())
        if defined.size:
            key = _keys(flat_g[defined], flat_r[defined], flat_c[defined])
            collision = _first_collision(key, defined, elem, mma, flat_r, flat_c, cells.group, n)
        covered = np.zeros((groups, rows, cols), bool)
        covered[g[inside], cells.row[inside], cells.col[inside]] = True
        holes = np.flatnonzero(~covered.ravel())
    if holes.size:
        grp, rest = divmod(int(holes[0]), rows * cols)
        r, c = divmod(rest, cols)
        hole = mma({"row": r, "col": c}, grp)
    return Enumeration(bad_range, collision, hole)


def _keys(g: np.ndarray, r: np.ndarray, c: np.ndarray) -> np.ndarray:
    """One integer per cell (cells outside the matrix too), or rows of (g, r, c) when the values are
    too spread out to number them in 63 bits (hostile formulas)."""
    spans = [int(x.max()) - int(x.min()) + 1 for x in (g, r, c)]
    if spans[0] * spans[1] * spans[2] < 2**62:
        return ((g - g.min()) * spans[1] + (r - r.min())) * spans[2] + (c - c.min())
    return np.stack([g, r, c], axis=1)


def _first_collision(key: np.ndarray, points: np.ndarray, elem: Callable[[int], dict[str, Any]],
                     mma: Callable[[dict[str, Any], int], dict[str, Any]], flat_r: np.ndarray, flat_c: np.ndarray,
                     group: np.ndarray, n: int) -> dict[str, Any] | None:
    """The first point (scan order) whose cell an earlier point holds, with that earlier point."""
    _, first, inverse = np.unique(key, axis=0 if key.ndim > 1 else None, return_index=True, return_inverse=True)
    owner = first[np.asarray(inverse).ravel()]
    dup = np.flatnonzero(owner != np.arange(key.shape[0]))
    if not dup.size:
        return None
    k = int(dup[0])
    p, q = int(points[owner[k]]), int(points[k])
    return mma({"first": elem(p), "second": elem(q), "row": int(flat_r[q]), "col": int(flat_c[q])}, int(group[q // n]))
