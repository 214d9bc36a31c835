"""A layout as a table: every (lane, i) with its cell, and the grid drawn as text.

The data behind ``ptx-verify table`` (text and JSON) and the pictures; sparse A adds its chunk
and its logical column under a metadata value.
"""
from __future__ import annotations

from typing import Any, Callable

from ..layout.model import Layout, cells_of
from ..layout.sparse import NIBBLES_PER_REGISTER, SparseMap, SparseModel, logical_column, metadata_owner


def table_entries(lay: Layout) -> list[dict[str, Any]]:
    """Every (lane, i) with its cell (``row``/``col`` None where undefined; ``mma`` for m8n8k4)."""
    cells = cells_of(lay)
    out = []
    for lane in range(lay.threads):
        for i in range(lay.n_elements):
            ok = bool(cells.ok[lane, i])
            e: dict[str, Any] = {"lane": lane, "i": i, "element": lay.element_name(i),
                                 "row": int(cells.row[lane, i]) if ok else None,
                                 "col": int(cells.col[lane, i]) if ok else None}
            if lay.groups > 1:
                e["mma"] = int(cells.group[lane])
            out.append(e)
    return out


def table_text(lay: Layout, metadata: int | None = None) -> str:
    """The matrix as a grid; each cell ``T<lane>:<element>``, '.' empty, '!' shared.

    Sparse A shows the compressed view and the logical view (under ``metadata``) side by side.
    """
    if isinstance(lay.map, SparseMap):
        return sparse_grid_text(lay, metadata)
    entries = table_entries(lay)
    out: list[str] = [f"{lay.id}  ({lay.rows} x {lay.cols}, {lay.threads} threads x {lay.n_elements} elements)"]
    for g in range(lay.groups):
        grid: dict[tuple[int, int], list[str]] = {}
        outside: list[str] = []
        for e in entries:
            if e.get("mma", 0) != g:
                continue
            label = f"T{e['lane']}:{e['element']}"
            if e["row"] is None or not (0 <= e["row"] < lay.rows and 0 <= e["col"] < lay.cols):
                outside.append(f"{label}->({e['row']},{e['col']})")
                continue
            grid.setdefault((e["row"], e["col"]), []).append(label)
        shared = {k: v for k, v in grid.items() if len(v) > 1}
        width = max([len(v[0]) for v in grid.values()] + [6])
        # a grid with shared cells gives every cell a marker slot after its label ('!' or ' '), so the
        # marker never touches the next cell and labels stay aligned in their column
        mark = 1 if shared else 0
        if lay.groups > 1:
            out.append(f"MMA computation {g + 1} (\"mma\": {g} in JSON):")
        out.append(" " * 5 + "".join(f"{c:>{width + 1}}" + " " * mark for c in range(lay.cols)).rstrip())
        for r in range(lay.rows):
            row = f"{r:>4} "
            for c in range(lay.cols):
                owners = grid.get((r, c))
                s = "." if not owners else owners[0]
                row += f"{s:>{width + 1}}" + ("!" if owners and len(owners) > 1 else " ") * mark
            out.append(row.rstrip() if mark else row)
        empty = sum(1 for r in range(lay.rows) for c in range(lay.cols) if (r, c) not in grid)
        if shared:
            out.append("  cells with several owners (!): " + "; ".join(
                f"({r},{c}) {' '.join(v)}" for (r, c), v in sorted(shared.items())))
        if empty:
            out.append(f"  empty cells (.): {empty}")
        if outside:
            out.append("  outside the matrix or undefined: " + " ".join(outside[:16])
                       + (" ..." if len(outside) > 16 else ""))
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------------------- sparse A

def _nibble_for(md: SparseModel, threads: int, metadata: int) -> Callable[[int, int], int]:
    """(row, chunk) -> the 4-bit field, when every supplying lane holds the register ``metadata``."""
    owner = metadata_owner(md, threads, md.selectors[0]) if md.metadata is not None else {}

    def nib(row: int, chunk: int) -> int:
        if (row, chunk) in owner:
            n = owner[(row, chunk)][1]
        else:  # no metadata layout in the spec: nibble = chunk within the register
            n = chunk % NIBBLES_PER_REGISTER
        return (metadata >> (4 * n)) & 0xF
    return nib


def sparse_entries(layout: Layout, metadata: int | None = None) -> list[dict[str, Any]]:
    """Every (lane, i) of a sparse A: compressed cell, chunk, and logical column under ``metadata``.

    ``metadata`` is the .b32 register every metadata-supplying lane holds (default
    ``CANONICAL_METADATA`` = 0x44444444: each chunk keeps its first positions).
    """
    smap: SparseMap = layout.map
    md = smap.model
    reg = md.canonical if metadata is None else metadata
    nib = _nibble_for(md, layout.threads, reg)
    inf = smap.info(layout.domain)  # every element at once (the enumeration engine, shared with the checks)
    defined, ok, rows, cols, chunks, js = (a.tolist() for a in (inf.defined, inf.ok, inf.row, inf.col, inf.chunk, inf.j))
    names = [layout.element_name(i) for i in range(layout.n_elements)]
    out = []
    for lane in range(layout.threads):
        for i in range(layout.n_elements):
            placed = ok[lane][i]
            row = rows[lane][i] if defined[lane][i] else None
            col, chunk = (cols[lane][i], chunks[lane][i]) if placed else (None, None)
            e: dict[str, Any] = {"lane": lane, "i": i, "element": names[i], "row": row, "col": col, "chunk": chunk,
                                 "logical_col": None, "metadata": None, "valid": None}
            if placed:
                m = nib(row, chunk)  # type: ignore[arg-type]
                e["metadata"] = m
                e["logical_col"] = logical_column(md, chunk, js[lane][i], m)  # type: ignore[arg-type]
                e["valid"] = m in md.valid
            out.append(e)
    return out


def sparse_grid_text(layout: Layout, metadata: int | None = None) -> str:
    """Compressed view (rows x K*kept/chunk) and logical view (rows x K) side by side."""
    md = layout.map.model
    reg = md.canonical if metadata is None else metadata
    entries = sparse_entries(layout, reg)
    comp: dict[tuple[int, int], list[str]] = {}
    logi: dict[tuple[int, int], list[str]] = {}
    bad = []
    for e in entries:
        label = f"T{e['lane']}:{e['element']}"
        if e["col"] is None:
            bad.append(label)
            continue
        comp.setdefault((e["row"], e["col"]), []).append(label)
        logi.setdefault((e["row"], e["logical_col"]), []).append(label)
    cw = max([len(v[0]) + 1 for v in list(comp.values()) + list(logi.values())] + [6])
    # with shared cells, every cell gets a marker slot after its label ('!' or ' '): see table_text
    mark = 1 if any(len(v) > 1 for v in list(comp.values()) + list(logi.values())) else 0

    def cell(grid: dict[tuple[int, int], list[str]], r: int, c: int) -> str:
        v = grid.get((r, c))
        return f"{'.' if not v else v[0]:>{cw}}" + ("!" if v and len(v) > 1 else " ") * mark

    ccols, lcols = layout.cols, md.k
    out = [f"{layout.id}  (sparse {md.kept}:{md.chunk}; compressed {layout.rows} x {ccols} | logical "
           f"{layout.rows} x {lcols}; metadata register 0x{reg:08x} in every supplying lane)"]
    out.append("compressed".ljust(5 + (cw + mark) * ccols) + " | logical ('.' = pruned zero)")
    out.append("     " + "".join(f"{c:>{cw}}" + " " * mark for c in range(ccols)) + " | "
               + "".join(f"{c:>{cw}}" + " " * mark for c in range(lcols)))
    for r in range(layout.rows):
        out.append(f"{r:>4} " + "".join(cell(comp, r, c) for c in range(ccols)) + " | "
                   + "".join(cell(logi, r, c) for c in range(lcols)))
    shared = sorted((k, v) for k, v in logi.items() if len(v) > 1)
    if shared:
        out.append("  logical cells with several owners (!): " + "; ".join(f"({r},{c}) {' '.join(v)}" for (r, c), v in shared[:12]))
    invalid = sorted({e["metadata"] for e in entries if e.get("valid") is False})
    if invalid:
        out.append("  invalid metadata fields used: " + ", ".join(f"0b{m:04b}" for m in invalid))
    if bad:
        out.append("  misplaced or undefined: " + " ".join(bad[:16]) + (" ..." if len(bad) > 16 else ""))
    return "\n".join(out) + "\n"
