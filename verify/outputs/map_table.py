"""A layout with no register facts (``MapLayout``) as a table: every input point with its outputs.

Two inputs draw as a grid (the first input down, the second across; each cell the outputs, ``.`` where
undefined), as CuTe draws a shared-memory layout: a ``(row, col) -> offset`` layout shows the offset of
every cell.  Other maps list their points.  JSON lists every point either way.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..layout.model import MapLayout
from ..layout.named import evaluate_all
from ..results import SCHEMA

MAX_GRID = 256  # inputs wider than this are listed, not drawn


def map_entries(lay: MapLayout) -> list[dict[str, Any]]:
    """Every input point (in order, the first input outermost) with its outputs (None where undefined)."""
    v = evaluate_all(lay.map)
    shape = v.ok.shape
    ins = [d.name for d in lay.inputs]
    outs = [d.name for d in lay.outputs]
    idx = np.indices(shape).reshape(len(shape), -1)
    ok = np.asarray(v.ok).reshape(-1)
    vals = [np.asarray(v.out[o]).reshape(-1) for o in outs]
    out = []
    for k in range(ok.size):
        e: dict[str, Any] = {n: int(idx[j][k]) for j, n in enumerate(ins)}
        e.update({o: (int(vals[j][k]) if ok[k] else None) for j, o in enumerate(outs)})
        out.append(e)
    return out


def map_table_json(lay: MapLayout) -> dict[str, Any]:
    return {"schema": SCHEMA, "id": lay.id, "kind": lay.kind,
            "inputs": [{"name": d.name, "size": d.at()} for d in lay.inputs],
            "outputs": [{"name": d.name, "size": d.at()} for d in lay.outputs],
            "unit": lay.unit or None, "entries": map_entries(lay)}


def _cell(e: dict[str, Any], outs: list[str]) -> str:
    if any(e[o] is None for o in outs):
        return "."
    return ",".join(str(e[o]) for o in outs)


def map_table_text(lay: MapLayout) -> str:
    ins = [d.name for d in lay.inputs]
    outs = [d.name for d in lay.outputs]
    sizes = [d.at() for d in lay.inputs]
    head = (f"{lay.id}  ({', '.join(f'{n} {s}' for n, s in zip(ins, sizes))} -> "
            f"{', '.join(f'{d.name} {d.at()}' for d in lay.outputs)}{' ' + lay.unit if lay.unit else ''})")
    entries = map_entries(lay)
    lines = [head]
    if len(ins) == 2 and sizes[1] <= MAX_GRID:
        cells = [_cell(e, outs) for e in entries]
        width = max([len(c) for c in cells] + [len(str(sizes[1] - 1))])
        lines.append(f"{ins[0]} \\ {ins[1]}")
        lines.append(" " * 5 + "".join(f"{c:>{width + 1}}" for c in range(sizes[1])))
        for r in range(sizes[0]):
            row = cells[r * sizes[1]:(r + 1) * sizes[1]]
            lines.append(f"{r:>4} " + "".join(f"{c:>{width + 1}}" for c in row))
    else:
        for e in entries:
            lines.append("  " + ", ".join(f"{n} {e[n]}" for n in ins) + " -> " + _cell(e, outs))
    return "\n".join(lines) + "\n"


__all__ = ["map_entries", "map_table_json", "map_table_text"]
