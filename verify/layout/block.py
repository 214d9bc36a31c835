"""Block tiles built with the layout algebra: an instruction's fragment over warps and register repeats.

A kernel's accumulator is the instruction's fragment (``T`` threads x ``N`` elements over ``R x C``) held by
``wm x wn`` units (warps, or warpgroups for a warpgroup's fragment) and repeated ``rm x rn`` times in each
unit's registers, over a block of ``M = rm wm R`` rows by ``Nb = rn wn C`` columns.  ``block_tile`` builds it
from the fragment with the algebra (``verify.layout.algebra``), as a fragment ``Layout`` of ``k T`` threads
(thread ``= lane + T u``, unit ``u``) and ``r N`` elements (element ``i = e + N t``: the instruction's elements
together, repeat ``t`` outermost)::

    merge(merge(product(relabel(fragment, thread -> l, i -> e), place(u, t) -> (row, col) in sub-tiles),
                (l, u) -> thread), (e, t) -> i)

``place`` puts unit ``u`` at sub-tile ``(wr, wc)`` of the unit grid and repeat ``t`` at ``(tr, tc)`` of the
repeat grid, and the sub-tile at ``(wr + wm tr, wc + wn tc)``: the units tile a ``wm R x wn C`` patch, and the
repeats repeat the patch.  Which unit and which repeat sit where is a convention (``ORDERS``):

* ``triton`` (Triton's ``#ttg.nvidia_mma`` version 2, Ampere): warp ``w`` at ``(w / wn, w % wn)`` (warps along N
  first: ``warpOrder = [1, 0]``), repeat ``t`` at ``(t / rn, t % rn)`` (repeats along N first);
* ``triton-hopper`` (version 3, Hopper): warp ``w`` at ``(w % wm, w / wm)`` (along M first, so a warpgroup's four
  warps stack along M), repeats along N first;
* ``cute`` (CuTe's ``TiledMMA`` with an ``AtomLayoutMNK`` of default, column-major strides and no permutation):
  unit ``u`` at ``(u % wm, u / wm)``, repeat ``t`` at ``(t % rm, t / rm)`` (the values ``(FrgV, (RestM, RestN))``,
  RestM fastest).

``block_tile(..., warp_at=..., repeat_at=...)`` takes explicit grids instead (a CuTe ``ThrLayoutVMNK`` with other
strides).  ``tests/test_block_tiles.py`` checks the conventions against Triton's own lowering (the TTGIR of
``verify.layout.notations.ttgir``) and against CuTe's printed ``TiledMMA`` layouts.
"""
from __future__ import annotations

import dataclasses
from typing import Sequence

from . import algebra as A

from . import reshape
from .dims import Dim
from .model import Codomain, Layout
from .named import NamedMap, TableMap

ORDERS = {"triton": ("n", "n"), "triton-hopper": ("m", "n"), "cute": ("m", "m")}


def grid(count: tuple[int, int], fastest: str) -> tuple[tuple[int, int], ...]:
    """Index -> (row, col) over a ``count[0] x count[1]`` grid, ``fastest`` (``m`` or ``n``) varying first."""
    rows, cols = count
    if fastest == "n":
        return tuple((x // cols, x % cols) for x in range(rows * cols))
    return tuple((x % rows, x // rows) for x in range(rows * cols))


class BlockError(ValueError):
    """A block that the warps and the fragment do not tile."""


def repeats_of(layout: Layout, warps: tuple[int, int], block: tuple[int, int]) -> tuple[int, int]:
    """(rm, rn): how many times each unit repeats the fragment along rows and columns."""
    wm, wn = warps
    M, N = block
    R, C = layout.rows, layout.cols
    if wm < 1 or wn < 1:
        raise BlockError(f"warps {wm} x {wn}: at least one each way")
    if M % (wm * R) or N % (wn * C):
        raise BlockError(f"a {M} x {N} block is not a whole number of {wm} x {wn} units of {R} x {C} "
                         f"(rows a multiple of {wm * R}, cols a multiple of {wn * C})")
    return M // (wm * R), N // (wn * C)


def block_tile(layout: Layout, warps: tuple[int, int], block: tuple[int, int], order: str = "triton", *,
               warp_at: Sequence[tuple[int, int]] | None = None, repeat_at: Sequence[tuple[int, int]] | None = None,
               layout_id: str | None = None) -> Layout:
    """``layout`` (a plain fragment of one MMA computation) held by ``warps = (wm, wn)`` units over ``block =
    (M, N)``, in the convention ``order`` (``ORDERS``) or with explicit ``warp_at``/``repeat_at`` grids (unit u's
    and repeat t's (row, col) in the unit and repeat grids).  See the module docstring."""
    if layout.is_family:
        raise BlockError(f"{layout.id} is a family: tile one member (layout.instance(...))")
    if layout.groups != 1:
        raise BlockError(f"{layout.id} runs {layout.groups} MMA computations per warp; tile a fragment of one")
    if order not in ORDERS:
        raise BlockError(f"order {order!r}: one of {', '.join(ORDERS)}")
    rm, rn = repeats_of(layout, warps, block)
    wm, wn = warps
    k, r = wm * wn, rm * rn
    units = tuple(warp_at) if warp_at is not None else grid((wm, wn), ORDERS[order][0])
    reps = tuple(repeat_at) if repeat_at is not None else grid((rm, rn), ORDERS[order][1])
    if sorted(units) != sorted(grid((wm, wn), "n")) or sorted(reps) != sorted(grid((rm, rn), "n")):
        raise BlockError("warp_at and repeat_at must place each unit and each repeat once on their grids")
    N = layout.n_elements
    places = tuple((u, t, wr + wm * tr, wc + wn * tc) for u, (wr, wc) in enumerate(units) for t, (tr, tc) in enumerate(reps))
    unit = {32: "warps", 128: "warpgroups"}.get(layout.threads, f"groups of {layout.threads} threads")
    return tile_at(layout, k, r, places, block, layout_id=layout_id or
                   f"{layout.id} over {wm} x {wn} {unit}, {block[0]} x {block[1]} ({order})",
                   derived=f"{layout.id} held by {wm} x {wn} {unit} and repeated {rm} x {rn} times over {block[0]} x "
                           f"{block[1]} ({order}: element i = e + {N} t)")


def tile_at(layout: Layout, units: int, repeats: int, places: Sequence[tuple[int, int, int, int]],
            block: tuple[int, int], repeat_bits: Sequence[int] | None = None, *, layout_id: str, derived: str) -> Layout:
    """``layout`` (a plain fragment of one MMA computation) held by ``units`` units of its threads, each repeated
    ``repeats`` times, unit ``u``'s repeat ``t`` at the sub-tile ``(tr, tc)`` of ``places`` (rows ``(u, t, tr, tc)``:
    its cells moved by ``(tr R, tc C)``), over ``block``: thread ``= lane + T u``; element ``i = e + N t``, or, with
    ``repeat_bits`` (bits of ``i``, ``N`` and ``repeats`` powers of two), ``t`` the bits ``repeat_bits`` of ``i`` and
    ``e`` the others (``verify.checks.tiled.Repeats``).  The algebra: ``product`` with the table of places, ``merge``
    of lane and unit into the thread, ``split`` and ``merge`` of the elements' bits."""
    T, N = layout.threads, layout.n_elements
    frag = layout.map
    rname, cname = (d.name for d in frag.outputs if d.name != "mma")  # row and col, or the codomain's own axes
    grid_r = max((p[2] for p in places), default=0) + 1
    grid_c = max((p[3] for p in places), default=0) + 1
    place = TableMap((Dim("u", units), Dim("t", repeats)), (Dim(rname, grid_r), Dim(cname, grid_c)), tuple(places))
    base = reshape.relabel(frag, inputs={frag.thread: "l", "i": "e"})
    tiled: NamedMap = reshape.merge(A.product(base, place), ("l", "u"), "thread")
    nbits = (N * repeats).bit_length() - 1
    top = tuple(range(nbits - 1, nbits - 1 - len(repeat_bits or ()), -1))
    if not repeat_bits or tuple(repeat_bits) == top:  # the repeats outermost: i = e + N t
        tiled = reshape.merge(tiled, ("e", "t"), "i")
    else:
        bits = sorted(repeat_bits)
        keep = [b for b in range(nbits) if b not in bits]
        tiled = reshape.split(reshape.split(tiled, "e", [(f"e{k}", 2) for k in range(len(keep))]), "t",
                        [(f"t{k}", 2) for k in range(len(bits))])
        tiled = reshape.merge(tiled, [f"t{bits.index(b)}" if b in bits else f"e{keep.index(b)}" for b in range(nbits)], "i")
    if T * units <= 32:
        tiled = reshape.relabel(tiled, inputs={"thread": "lane"})
    return layout.with_map(
        tiled, id=layout_id, domain=dataclasses.replace(layout.domain, threads=T * units, elements=N * repeats),
        codomain=Codomain(block[0], block[1], layout.codomain.dims),
        provenance=dataclasses.replace(layout.provenance, erratum="", derived=derived),
        regs=dataclasses.replace(layout.regs, count=layout.register_count * repeats, element_list=None,
                                 elements_text=None))


__all__ = ["BlockError", "ORDERS", "block_tile", "grid", "repeats_of", "tile_at"]
