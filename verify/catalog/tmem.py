"""Tensor Memory data-path layouts read by tcgen05.ld/st, built with the layout algebra.

A data-path layout (``specs/tcgen05.datapath.toml``, a ``MapLayout`` of kind ``tmem``) places element
(row, col) of an MMA's matrix at (tmem_lane, tmem_col) (and, for cta_group::2, in one CTA of the pair).  A
tcgen05.ld/st shape is a register fragment of one warp over Tensor Memory lanes relative to taddr; the
warpgroup places warp w at lane 32 (w % 4) + ``base`` (the lane quarter rule of 9.7.16.8.1, the lane bases of
CuTe's make_tmem_copy).  Reading the layout with the shape is then

    (thread, i)  --warpgroup view-->  (tmem_lane, tmem_col)  --inverse of the layout-->  (row, col)

so the result says which register of which thread holds D(row, col).  ``read_map`` builds it (defined
where the load touches a lane and column that hold an element of the matrix); the relations in
``verify.catalog.relations`` state what it is, and the checks decide it with both engines.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping

from ..layout import algebra as A

from ..layout import reshape
from ..layout.dims import Dim, names
from ..layout.named import NamedMap
from ..layout.model import Codomain, Layout, MapLayout

WARPS = 4  # a warpgroup: warp w reads lane quarter w % 4


def warpgroup_view(ld: Layout, base: int = 0) -> Any:
    """A per-warp tcgen05.ld/st fragment (32 lanes, rows = TMEM lanes relative to taddr) placed for a warpgroup:
    warp w at lane 32 w + ``base``, ``thread = lane + 32 warp``; outputs ``(tmem_lane, tmem_col)`` over all 128
    lanes.

    Pre: ``ld`` has no parameters left (an instance), 32 threads, and ``base + rows <= 32``.  Post: a named map
    ``(thread 128, i) -> (tmem_lane 128, tmem_col)``."""
    if ld.threads != 32:
        raise ValueError(f"{ld.id}: a per-warp tcgen05 fragment has 32 threads, not {ld.threads}")
    frag = ld.map
    lanes = next(d.name for d in frag.outputs if d.name != "mma")
    placed = A.product(reshape.embed(frag, lanes, 32, base), A.iota(Dim("warp", WARPS), lanes))
    return reshape.merge(placed, ("lane", "warp"), "thread")


def read_map(datapath: MapLayout, ld: Layout, env: Mapping[str, int], base: int = 0, cta: int | None = None) -> Any:
    """Which (row, col) of the matrix each (thread, i) of a warpgroup's tcgen05.ld reads: the warpgroup view of
    ``ld`` (an instance) followed by the inverse of ``datapath`` at ``env`` (every parameter bound).

    Pre: ``datapath`` is injective at ``env`` (``algebra.inverse`` checks it); for a cta_group::2 layout (an
    output ``cta``) ``cta`` names the CTA whose Tensor Memory is read.  Post: ``(thread, i) -> (row, col)``,
    undefined where the load reads a lane/column that holds no element of the matrix."""
    inv: NamedMap = A.inverse(A.bind(datapath.map, **env))
    if "cta" in names(inv.inputs):
        if cta is None:
            raise ValueError(f"{datapath.id} spans a CTA pair: say which CTA's Tensor Memory is read")
        inv = reshape.fix(inv, "cta", cta)
    elif cta is not None:
        raise ValueError(f"{datapath.id} is one CTA's layout: no cta to choose")
    return A.compose(inv, warpgroup_view(ld, base))


def as_read_fragment(composed: Any, ld: Layout, matrix: tuple[int, int], layout_id: str) -> Layout:
    """A map ``(thread, i) -> (row, col)`` as a fragment ``Layout`` over the matrix (rows x cols), with ``ld``'s
    register facts (so every fragment check and the relations decide it)."""
    return ld.with_map(composed, id=layout_id, domain=replace(ld.domain, threads=32 * WARPS),
                       codomain=Codomain(matrix[0], matrix[1], ("row", "col")))


def matrix_of(datapath: MapLayout, env: Mapping[str, int]) -> tuple[int, int]:
    """(rows, cols) of a data-path layout's matrix at ``env``."""
    ins = {d.name: d for d in datapath.inputs}
    return ins["row"].at(env), ins["col"].at(env)


__all__ = ["WARPS", "as_read_fragment", "matrix_of", "read_map", "warpgroup_view"]
