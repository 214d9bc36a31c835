"""Where a ``tcgen05.mma`` with A in Tensor Memory reads A: the catalog's packing of A (``tcgen05.packing.A.*``,
by the element's width) for the column and the slot of each element, the MMA's data-path layout (Layout D for
M = 128, Layout F for M = 64) for its lane."""
from __future__ import annotations

import functools

import numpy as np

from ..catalog.instructions import effective
from ..layout.named import FormulaMap
from .fragments import NoLayout, ScaleCells, _spec, _specs_dir, datapath

# The packing of A in Tensor Memory by the element's bits (9.7.16.10.4): the catalog's tcgen05.packing spec for
# each width the executor reads (lanes as Layout D: row m at lane m; M = 64 maps the row through Layout F).
A_PACKING = {16: "tcgen05.packing.A.b16.packed", 32: "tcgen05.packing.A.b32", 8: "tcgen05.packing.A.mxf8f6f4"}


@functools.lru_cache(maxsize=32)
def tmem_a_cells(bits: int, rows: int, k: int, face: str = "vector", specs: str | None = None,
                 base: int = 0) -> ScaleCells:
    """Where a ``tcgen05.mma`` (``cta_group::1``) with A in Tensor Memory reads element ``(row, k)`` of its ``rows``
    x ``k`` A tile of ``bits``-bit elements, relative to the A address: ``lane/col/byte[row, k]`` (``byte`` the
    element's first byte in its 32-bit cell: its slot x its bytes), the catalog's ``tcgen05.packing.A`` layout of
    that width for the column and slot; its lane (row m at lane m, Layout D's) is the row of the MMA's data-path
    layout that the lane stands for: Layout D's for M = 128, Layout F's (lane alignment ``base``, 0 or 16) for
    M = 64, relative to the address's lane (the aligned lane plus ``base``)."""
    lid = A_PACKING.get(bits)
    if lid is None:
        raise NoLayout(f"no catalog packing of {bits}-bit A elements in Tensor Memory (9.7.16.10.4)")
    path = _specs_dir(specs) / "tcgen05.packing.toml"
    lays = [x for x in effective(_spec(str(path)).maps) if x.doc_id == lid]
    if not lays:
        raise NoLayout(f"the catalog has no {lid}")
    lay = lays[0]
    fm = lay.map
    if not isinstance(fm, FormulaMap):
        raise NoLayout(f"{lay.id} is not a formula map")
    size = {d.name: d.size for d in fm.inputs}
    ks, rs = size.get("k"), size.get("row")
    if not isinstance(rs, int) or rs < rows or not isinstance(ks, int) or ks < k:
        raise NoLayout(f"{lay.id} places {rs} x {ks} elements, the MMA's A is {rows} x {k}")
    grids = np.indices((rows, k)).reshape(2, -1)
    if face == "vector":
        v = fm.evaluate({"row": grids[0], "k": grids[1]}, {})
        if not np.all(v.ok):
            raise NoLayout(f"{lay.id} leaves some elements of A without a cell")
        out = [np.broadcast_to(v.out[n], grids.shape[1:]).reshape(rows, k).astype(np.int64)
               for n in ("tmem_lane", "tmem_col", "slot")]
    else:
        out = [np.zeros((rows, k), np.int64) for _ in range(3)]
        for j in range(grids.shape[1]):
            cell = fm.at({"row": int(grids[0, j]), "k": int(grids[1, j])}, {})
            if cell is None:
                raise NoLayout(f"{lay.id} leaves an element of A without a cell")
            r, c = int(grids[0, j]), int(grids[1, j])
            for a, n in zip(out, ("tmem_lane", "tmem_col", "slot")):
                a[r, c] = cell[n]
    # the packing's lane is the data-path row it holds (Layout D's lane m): the MMA's data path places that row
    dp = datapath(rows, 8, 1, False, False, base, face, specs)
    if (dp.lane != dp.lane[:, :1]).any():
        raise NoLayout(f"{dp.layout_id}: a row's lane depends on its column; A in Tensor Memory is not read there")
    if (out[0] < 0).any() or (out[0] >= rows).any():
        raise NoLayout(f"{lay.id} puts a row of A in a lane outside {dp.layout_id}'s {rows} rows")
    out[0] = dp.lane[out[0], 0] - base
    out[2] = out[2] * (bits // 8)
    for a in out:
        a.setflags(write=False)
    return ScaleCells(f"{lay.id}+{dp.layout_id}" if rows != 128 else lay.id, *out)


__all__ = ["A_PACKING", "tmem_a_cells"]
