"""From shared memory to registers, as one equality of maps (both engines, ``verify.checks.maps.same``).

``ldmatrix_fragment`` builds, with the layout algebra, the map ``(lane, i) -> (row, col)`` that an
``ldmatrix`` (or, read backwards, ``stmatrix``) makes of a shared-memory tile:

    (lane, i)  --ldmatrix spec-->  (src, e)      src: the lane whose row address the element comes from,
                                                 e: the element inside that 16-byte row
    src        --lane pattern-->   (row, col)    the cell lane src addresses (its row address)
    (row, col) --the layout-->     offset        where the writer put that cell
    (e, src)   --product-->        offset = e + (elements per row) x (offset of src's row / that)
    offset     --inverse(layout)-> (row, col)    the tile cell whose element lands at that offset

so "this layout + these lane addresses + ldmatrix.x4 gives mma.m16n8k16 A" is ``same(that map, mma A)``,
and a row address that is not 16-byte aligned (the row's elements not contiguous in the writer's layout)
shows as a difference at its first element.  ``writer_reader`` compares a writer's layout with a reader's
(``same`` on ``(row, col) -> offset``): the first cell read from another place.
"""
from __future__ import annotations

from typing import Any

from ..formula import Case, Compare, Definition, Formula, Num, Var
from ..layout import algebra as A
from ..layout import reshape
from ..layout.dims import Dim
from ..layout.model import Layout
from ..layout.named import FormulaMap

from ..layout.shared import SharedLayout, op
from ..layout.smem_access import Pattern
from ..results import CheckResult
from .fragment import DEFAULT_TIMEOUT
from .maps import same


def _chunk(span: int, per_row: int) -> FormulaMap:
    """``raw -> offset = raw / per_row`` where ``raw`` is a multiple of ``per_row`` (undefined elsewhere: a
    row address that is not the start of a whole 16-byte row of the layout)."""
    whole = Compare(("==",), (op(Var("raw"), "%", per_row), Num(0)))
    f = Formula((Definition("offset", (Case(op(Var("raw"), "/", per_row), whole),)),), "x")
    return FormulaMap(f, (Dim("raw", span),), (Dim("offset", max(1, -(-span // per_row))),))


def ldmatrix_fragment(lay: SharedLayout, movement: Layout, pat: Pattern) -> Any:
    """``(lane, i) -> (row, col)`` of the tile, for the data-movement fragment ``movement`` (an ldmatrix or
    stmatrix spec layout, one member: its rows are the stacked 16-byte rows, row r addressed by lane r)."""
    per_row = movement.cols
    span = int(lay.map.outputs[0].at())
    src = reshape.relabel(movement.map, outputs={"row": "src", "col": "e"})
    rows_of = A.compose(lay.map, reshape.relabel(pat.map, inputs={"lane": "src"}))           # src -> offset
    chunk = A.compose(_chunk(span, per_row), reshape.relabel(rows_of, outputs={"offset": "raw"}))  # src -> row start
    element = A.product(A.iota(Dim("e", per_row), "offset"), chunk)                   # (e, src) -> offset
    return A.compose(A.inverse(lay.map), A.compose(element, src))                       # (lane, i) -> (row, col)


def ldmatrix_is(lay: SharedLayout, movement: Layout, pat: Pattern, target: Layout,
                timeout: float = DEFAULT_TIMEOUT) -> CheckResult:
    """Does the ldmatrix of ``lay`` through ``pat`` give exactly the fragment ``target`` (lane for lane,
    element for element)?  ``equal`` proved, or refuted at the first (lane, i)."""
    given = ldmatrix_fragment(lay, movement, pat)
    return same(target.map, given, timeout, (target.id, "ldmatrix"))


def writer_reader(writer: SharedLayout, reader: SharedLayout, timeout: float = DEFAULT_TIMEOUT) -> CheckResult:
    """Does the reader read every cell where the writer wrote it?  Refuted at the first (row, col)."""
    if writer.element_bits != reader.element_bits:
        raise ValueError(f"the writer stores {writer.element_bits}-bit elements, the reader reads {reader.element_bits}-bit")
    if writer.base != reader.base:
        raise ValueError("the writer and the reader describe buffers at different base addresses")
    return same(writer.map, reader.map, timeout, ("writer", "reader"))


__all__ = ["ldmatrix_fragment", "ldmatrix_is", "writer_reader"]
