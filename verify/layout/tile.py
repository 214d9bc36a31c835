"""Tiles: one fragment repeated over a grid of tiles, built with the layout algebra.

A producer's fragment (the f32 accumulator of ``mma.m16n8k16``: 16 x 8) often feeds a consumer
that reads a larger tile (the f16 A operand of the next ``m16n8k16``: 16 x 16, two accumulators
side by side).  ``tile(base, grid)`` is the producer over a grid of ``grid = (tiles along rows,
tiles along cols)`` copies, each lane holding its elements of every tile, **tile after tile**:
element ``i = t * N + j`` of a lane is element ``j`` of tile ``t``, and tile ``t`` sits at tile row
``t // grid[1]``, tile column ``t % grid[1]`` (row-major over the grid), so its cells are the base
cells shifted by ``(rows * (t // grid[1]), cols * (t % grid[1]))``.

In the algebra (``verify.layout.algebra``): ``merge(product(base(lane, j), grid(t) -> (row, col)),
(j, t) -> i)``, a ``product`` placing tile ``t`` and a ``merge`` of the element and tile indices.
"""
from __future__ import annotations

import dataclasses

from . import algebra as A

from . import reshape
from .dims import Dim
from .model import Codomain, Layout
from .named import formula_map


STACKS = ("ldmatrix", "stmatrix")  # instructions whose matrix is its 8 x 8 (16 x 16) matrices one under another


def is_stack(lay: Layout) -> bool:
    """Whether ``lay``'s matrix is a stack: ldmatrix's (stmatrix's) ``.num`` matrices one under another, in
    the order of the lanes that address their rows, not a matrix of the program's (where each one goes is
    the row addresses' choice, see ``stack_onto``)."""
    return lay.instruction in STACKS and not lay.is_family


def stack_onto(base: Layout, rows: int, layout_id: str | None = None) -> Layout:
    """A stack of matrices (``is_stack``: ``R x C``, ``R`` a multiple of ``rows``) placed on a tile of ``rows``
    rows as row addresses usually place them, down the tile and then across: stacked row ``s`` is tile cell
    ``(s % rows, C (s / rows) + col)``, so lane t addresses tile row ``t % rows``, column ``C (t / rows)`` (an
    ldmatrix ``.x4`` of a 16 x 16 tile, the catalog's ``ldmatrix_x4_is_mma_a``).  Built with the algebra: the
    row addresses composed after the stack's cells; the stack itself when it has ``rows`` rows."""
    R, C = base.rows, base.cols
    if rows < 1 or R % rows:
        raise ValueError(f"{base.id} ({R} x {C}) is no stack of {rows}-row tiles")
    frag = base.map
    src = reshape.relabel(frag, outputs={"row": "src_row", "col": "src_col"})
    addresses = formula_map(f"row = src_row % {rows}\ncol = ({C} * (src_row / {rows})) + src_col\n",
                            (Dim("src_row", R), Dim("src_col", C)), (Dim("row", rows), Dim("col", C * (R // rows))))
    return base.with_map(A.compose(addresses, src), id=layout_id or base.id)


def tile(base: Layout, grid: tuple[int, int], layout_id: str | None = None) -> Layout:
    """``base`` repeated over ``grid`` tiles (see the module docstring): a layout of the model over
    ``grid[0] * rows`` x ``grid[1] * cols`` cells, with ``tiles * N`` elements per thread."""
    gr, gc = grid
    if gr < 1 or gc < 1:
        raise ValueError(f"a tile grid needs at least one tile each way, not {gr} x {gc}")
    tiles = gr * gc
    frag = base.map
    r, c = (d.name for d in frag.outputs if d.name != "mma")  # row and col, or the codomain's own axes
    places = formula_map(f"{r} = t / {gc}\n{c} = t % {gc}", (Dim("t", tiles),), (Dim(r, gr), Dim(c, gc)))
    tiled = reshape.merge(A.product(reshape.relabel(frag, inputs={"i": "j"}), places), ("j", "t"), "i")
    n = base.n_elements * tiles
    return base.with_map(
        tiled, id=layout_id or f"{base.id} x{gr}x{gc}", domain=dataclasses.replace(base.domain, elements=n),
        codomain=Codomain(base.rows * gr, base.cols * gc, base.codomain.dims),
        regs=dataclasses.replace(base.regs, count=base.register_count * tiles, element_list=None, elements_text=None),
        provenance=dataclasses.replace(
            base.provenance, erratum="",
            derived=f"{base.id} repeated over {gr} x {gc} tiles, element t*{base.n_elements}+j = tile t element j"))
