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
    defined = np.flatnonzero(cells.ok.ravel())
    if defined.size:
        keys = np.stack([g.ravel()[defined], cells.row.ravel()[defined], cells.col.ravel()[defined]], axis=1)
        _, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
        owner = first[np.asarray(inverse).ravel()]
        dup = np.flatnonzero(owner != np.arange(defined.size))
        if dup.size:
            k = int(dup[0])
            p, q = int(defined[owner[k]]), int(defined[k])
            lane = q // n
            collision = mma({"first": elem(p), "second": elem(q), "row": int(cells.row.ravel()[q]),
                             "col": int(cells.col.ravel()[q])}, int(cells.group[lane]))
    covered = np.zeros((groups, rows, cols), bool)
    covered[g[inside], cells.row[inside], cells.col[inside]] = True
    hole = None
    holes = np.flatnonzero(~covered.ravel())
    if holes.size:
        grp, rest = divmod(int(holes[0]), rows * cols)
        r, c = divmod(rest, cols)
        hole = mma({"row": r, "col": c}, grp)
    return Enumeration(bad_range, collision, hole)
