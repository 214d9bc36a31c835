"""Tiles: one fragment repeated over a grid of tiles, as a layout of the model.

A producer's fragment (the f32 accumulator of ``mma.m16n8k16``: 16 x 8) often feeds a consumer
that reads a larger tile (the f16 A operand of the next ``m16n8k16``: 16 x 16, two accumulators
side by side).  ``TileMap`` is the producer over a grid of ``grid = (tiles along rows, tiles along
cols)`` copies, each lane holding its elements of every tile, **tile after tile**: element
``i = t * N + j`` of a lane is element ``j`` of tile ``t``, and tile ``t`` sits at tile row
``t // grid[1]``, tile column ``t % grid[1]`` (row-major over the grid), so its cells are the base
cells shifted by ``(rows * (t // grid[1]), cols * (t % grid[1]))``.

It is a ``LayoutMap`` with the three faces, built from the base map's faces (so it works for any
notation): ``cells`` evaluates the base once and shifts copies of it; ``point`` splits ``i``;
``z3_cell`` encodes the base at ``j = i % N`` and adds the offsets of ``t = i / N`` as terms.
"""
from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..engines import smt
from .model import Cells, Codomain, Domain, Env, Layout, LayoutMap

if TYPE_CHECKING:  # pragma: no cover
    import z3


@dataclass(frozen=True)
class TileMap:
    """``base`` (over ``base_domain``, a ``rows`` x ``cols`` tile) repeated over ``grid`` tiles."""

    base: LayoutMap
    base_domain: Domain
    rows: int
    cols: int
    grid: tuple[int, int]
    notation: str = "tile"

    @property
    def tiles(self) -> int:
        return self.grid[0] * self.grid[1]

    def offset(self, t: int) -> tuple[int, int]:
        """(row, col) offset of tile ``t``."""
        return self.rows * (t // self.grid[1]), self.cols * (t % self.grid[1])

    def key(self) -> Hashable:
        return ("tile", self.base.key(), self.base_domain, self.rows, self.cols, self.grid)

    def bound(self, domain: Domain) -> int:
        return (self.base.bound(self.base_domain) + self.rows * self.grid[0] + self.cols * self.grid[1]
                + domain.elements + self.base_domain.elements)

    def cells(self, domain: Domain, env: Env | None = None) -> Cells:
        b = self.base.cells(self.base_domain, env)
        rows, cols, oks = [], [], []
        for t in range(self.tiles):
            dr, dc = self.offset(t)
            rows.append(b.row + dr)
            cols.append(b.col + dc)
            oks.append(b.ok)
        return Cells(np.concatenate(rows, axis=1), np.concatenate(cols, axis=1), np.concatenate(oks, axis=1), b.group)

    def point(self, thread: int, i: int) -> tuple[int, int] | None:
        t, j = divmod(i, self.base_domain.elements)
        p = self.base.point(thread, j)
        if p is None:
            return None
        dr, dc = self.offset(t)
        return p[0] + dr, p[1] + dc

    def z3_cell(self, thread: "z3.BitVecRef", i: "z3.BitVecRef",
                env: Mapping[str, "z3.ExprRef"] | None = None) -> tuple["z3.BoolRef", "z3.ExprRef", "z3.ExprRef"]:
        w = thread.size()
        n = smt.bv(self.base_domain.elements, w)
        t, j = i / n, i % n  # i >= 0 on the domain: C and floor semantics agree
        ok, r, c = self.base.z3_cell(thread, j, env)
        gc = smt.bv(self.grid[1], w)
        return ok, r + smt.bv(self.rows, w) * (t / gc), c + smt.bv(self.cols, w) * (t % gc)  # type: ignore[operator]


def tile(base: Layout, grid: tuple[int, int], layout_id: str | None = None) -> Layout:
    """``base`` repeated over ``grid`` tiles (see the module docstring): a layout of the model over
    ``grid[0] * rows`` x ``grid[1] * cols`` cells, with ``tiles * N`` elements per thread."""
    import dataclasses  # noqa: PLC0415
    gr, gc = grid
    if gr < 1 or gc < 1:
        raise ValueError(f"a tile grid needs at least one tile each way, not {gr} x {gc}")
    tm = TileMap(base.map, base.domain, base.rows, base.cols, (gr, gc))
    n = base.n_elements * tm.tiles
    return dataclasses.replace(
        base, id=layout_id or f"{base.id} x{gr}x{gc}", domain=dataclasses.replace(base.domain, elements=n),
        codomain=Codomain(base.rows * gr, base.cols * gc), map=tm, registers=base.registers * tm.tiles,
        element_list=None, elements_text=None, expect={}, corrected=False, erratum="",
        derived=f"{base.id} repeated over {gr} x {gc} tiles, element t*{base.n_elements}+j = tile t element j")
