"""Pictures of layouts with no register facts (``MapLayout``): shared memory, Tensor Memory, storage.

* A shared-memory tile ``(row, col) -> offset`` is drawn as CuTe draws a swizzled layout
  (``verify.outputs.svg_shared``): the offset in every cell, cells coloured by the bank of their byte
  address, the swizzle atoms outlined (the spec's ``Swizzle<B,M,S>`` says which; an atom is one aligned
  block of the swizzle's atom bytes, so the outline follows memory, not a guess of the cell grid).  The
  element width comes from ``T`` (128 / bits) where the layout is a family over it, else from the type
  named at the end of its id, else from ``unit = "bytes"``.
* Every other map is a grid over its two largest inputs (in their declared order; further inputs are
  panels, one grid per value; a map of one input is wrapped in rows of ``WRAP``), each cell labelled with
  its outputs.  Tensor Memory cells are coloured by TMEM lane quarter (the warp of a warpgroup that can
  reach them; the second CTA of a pair in lighter shades), offsets by the 128-byte line they fall in.
  Cells that share their outputs with another cell are outlined in red, undefined cells hatched.

A family is drawn at one member (``env``; by default its smallest, named in the title).  Large grids are
condensed around their collisions unless ``full``; above ``MAX_LABELLED`` cells they are drawn in colour
only.  Hand-written XML with integer coordinates: the same input gives the same bytes.
"""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from functools import partial
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..layout.model import MapLayout
from ..layout.named import bindings, evaluate_all
from .progress import NONE as NO_PROGRESS
from .progress import Progress
from .svg import COLLISION, GAP, PALETTE, condense, esc, picture_name
from .svg import _axis as svg_axis

CELL_H = 18
MARGIN = 48
MAX_LABELLED = 4096      # cells drawn with their labels (a full picture above this: colours only)
FULL_ROWS, FULL_W = 128, 1400  # a grid within these is drawn whole
BUDGET_W, BUDGET_H = 1100, 1200  # what a condensed grid is fitted into
WRAP = 32                # a map of one input, drawn in rows of this many points
MAX_PANELS = 16          # panels (values of the inputs beyond the grid's two) drawn
UNDEFINED = "#e4e4e4"


# ----------------------------------------------------------------------------- the member drawn

def member(lay: MapLayout, env: Mapping[str, int] | None = None) -> dict[str, int]:
    """The binding drawn: ``env`` (every parameter named), or the smallest member (each parameter's first value)."""
    if not lay.params:
        return {}
    if env:
        return {p.name: int(env[p.name]) for p in lay.params}
    return dict(bindings(lay.map)[0])


def _member_text(env: Mapping[str, int]) -> str:
    return ("  (" + ", ".join(f"{k} = {v}" for k, v in env.items()) + ")") if env else ""


# ----------------------------------------------------------------------------- shared memory

_SWIZZLE = re.compile(r"Swizzle\s*<\s*(\d)\s*,\s*(\d{1,2})\s*,\s*(\d{1,2})\s*>")


def element_bits_of(lay: MapLayout, env: Mapping[str, int]) -> int | None:
    """The element width of a shared-memory layout: 128 / T, the type ending its id, or 8 for byte offsets."""
    from ..layout.shared import element_bits
    if "T" in env and env["T"] > 0 and 128 % env["T"] == 0:
        return 128 // env["T"]
    last = lay.doc_id.rsplit(".", 1)[-1]
    try:
        return element_bits(last)
    except ValueError:
        pass
    return 8 if lay.unit == "bytes" else None


def swizzle_of(lay: MapLayout) -> Any:
    """The swizzle the spec states (``Swizzle<B,M,S>`` in its note), or None."""
    from ..layout.shared import Swizzle
    m = _SWIZZLE.search(f"{lay.note} {lay.provenance.derived}")
    if not m:
        return None
    try:
        return Swizzle(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return None


def shared_view(lay: MapLayout, env: Mapping[str, int]) -> Any:
    """A ``(row, col) -> offset`` layout of kind shared as a ``SharedLayout`` at ``env`` (None: not such a tile,
    or its element width is unknown)."""
    from ..layout.algebra import bind
    from ..layout.shared import from_map
    if lay.kind != "shared" or [d.name for d in lay.inputs] != ["row", "col"] or len(lay.outputs) != 1:
        return None
    bits = element_bits_of(lay, env)
    if bits is None:
        return None
    m = bind(lay.map, **env) if env else lay.map
    if lay.unit == "bytes" and bits != 8:
        return None
    sw = swizzle_of(lay)
    return from_map(m, bits, 0, "spec", lay.id, swizzle=sw, swizzle_on="address" if sw else "")


# ----------------------------------------------------------------------------- any map

def _grid_dims(lay: MapLayout, env: Mapping[str, int]) -> tuple[list[int], list[int]]:
    """(the two grid inputs, the panel inputs) as indices into the inputs: the two largest, in order."""
    sizes = [d.at(env) for d in lay.inputs]
    if len(sizes) <= 2:
        return list(range(len(sizes))), []
    big = sorted(sorted(range(len(sizes)), key=lambda k: (-sizes[k], k))[:2])
    return big, [k for k in range(len(sizes)) if k not in big]


def _colours(lay: MapLayout, out: Mapping[str, np.ndarray]) -> tuple[np.ndarray, list[tuple[str, str]], str]:
    """A palette index per point, the legend entries (colour, words) and what the colour says."""
    names = [d.name for d in lay.outputs]
    if "tmem_lane" in names:
        q = np.asarray(out["tmem_lane"], np.int64) // 32
        cta = np.asarray(out["cta"], np.int64) if "cta" in names else np.zeros_like(q)
        idx = (q % 4) + 4 * (cta % 2)
        legend = [(PALETTE[k], f"lanes {32 * k}-{32 * k + 31}") for k in range(4)]
        if "cta" in names:
            legend += [(PALETTE[4 + k], f"CTA 1, lanes {32 * k}-{32 * k + 31}") for k in range(4)]
        return idx, legend, "TMEM lane quarter (the warp of a warpgroup that reaches it)"
    if "offset" in names:
        off = np.asarray(out["offset"], np.int64)
        if lay.unit == "bytes":
            return (off // 128) % 8, [(PALETTE[k], str(k)) for k in range(8)], "128-byte line of the offset, mod 8"
        return (off // 32) % 8, [(PALETTE[k], str(k)) for k in range(8)], "offset / 32, mod 8"
    first = np.asarray(out[names[0]], np.int64)
    return first % 8, [(PALETTE[k], str(k)) for k in range(8)], f"{names[0]} mod 8"


def _axis(runs: Sequence[tuple[int, int]], n: int, size: int) -> tuple[dict[int, int], list[tuple[int, int, int]], int]:
    return svg_axis(runs, n, size, 0)


def map_svg(lay: MapLayout, env: Mapping[str, int] | None = None, full: bool = False) -> str:
    """The picture of ``lay`` at ``env`` (default: its smallest member)."""
    env = member(lay, env)
    title = lay.id + _member_text(env)
    shared = shared_view(lay, env)
    if shared is not None:
        from .svg_shared import shared_svg
        return shared_svg(shared, title=title, full=full)
    return _generic_svg(lay, env, title, full)


def needs_condensing(lay: MapLayout, env: Mapping[str, int] | None = None) -> bool:
    """Whether the default picture of ``lay`` (at ``env``) is condensed (a ``.full.svg`` goes beside it)."""
    env = member(lay, env)
    if shared_view(lay, env) is not None:
        from .svg_shared import needs_condensing as shared_condensed
        rows, cols = (d.at(env) for d in lay.inputs)
        return shared_condensed(rows, cols)
    rows, cols, cw, _ = _shape(lay, env)
    return rows > FULL_ROWS or cols * cw > FULL_W


def _values(lay: MapLayout, env: Mapping[str, int]) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    v = evaluate_all(lay.map, env)
    shape = tuple(d.at(env) for d in lay.inputs)
    ok = np.broadcast_to(np.asarray(v.ok, bool), shape)
    out = {k: np.broadcast_to(np.asarray(x, np.int64), shape) for k, x in v.out.items()}
    return ok, out


def _labels_width(lay: MapLayout, env: Mapping[str, int]) -> int:
    longest = sum(len(str(max(0, d.at(env) - 1))) + 1 for d in lay.outputs)
    return max(28, 6 * longest + 8)


def _shape(lay: MapLayout, env: Mapping[str, int]) -> tuple[int, int, int, int]:
    """(grid rows, grid cols, cell width, panels)."""
    sizes = [d.at(env) for d in lay.inputs]
    cw = _labels_width(lay, env)
    if len(sizes) == 1:
        n = sizes[0]
        return -(-n // WRAP), min(WRAP, n), cw, 1
    (a, b), rest = _grid_dims(lay, env)
    panels = int(np.prod([sizes[k] for k in rest])) if rest else 1
    return sizes[a], sizes[b], cw, panels


def _collisions(lay: MapLayout, env: Mapping[str, int], ok: np.ndarray, out: Mapping[str, np.ndarray]
                ) -> tuple[np.ndarray, tuple[tuple[Any, ...], tuple[Any, ...]] | None]:
    """The defined points whose outputs another defined point has too, over the member, and the first two such
    points that share a place (None when there are none)."""
    key = np.zeros(ok.shape, np.int64)
    for d in lay.outputs:
        key = key * max(1, d.at(env)) + out[d.name]
    flat_ok, flat_key = ok.reshape(-1), key.reshape(-1)
    u, inv, cnt = np.unique(flat_key[flat_ok], return_inverse=True, return_counts=True)
    shared_flat = np.zeros(flat_ok.size, bool)
    shared_flat[np.flatnonzero(flat_ok)] = cnt[inv] > 1
    shared_pts = shared_flat.reshape(ok.shape)
    first_collision = None
    if shared_flat.any():
        k0 = int(np.flatnonzero(shared_flat)[0])
        k1 = int(next(k for k in np.flatnonzero(shared_flat)[1:] if flat_key[k] == flat_key[k0]))
        first_collision = (np.unravel_index(k0, ok.shape), np.unravel_index(k1, ok.shape))
    return shared_pts, first_collision


def _panels(lay: MapLayout, env: Mapping[str, int]) -> tuple[list[tuple[str, tuple[int, ...] | None]], str, str]:
    """The panels (caption, the panel inputs' values; None for a map of one input, wrapped in rows of ``WRAP``),
    and the words of the rows and the columns."""
    ins = [d.name for d in lay.inputs]
    sizes = [d.at(env) for d in lay.inputs]
    panels: list[tuple[str, tuple[int, ...] | None]]
    if len(sizes) == 1:
        panels = [("", None)]
        row_name, col_name = f"{ins[0]} / {WRAP}", f"{ins[0]} % {WRAP}"
    else:
        (a, b), rest = _grid_dims(lay, env)
        row_name, col_name = ins[a], ins[b]
        combos = list(itertools.product(*(range(sizes[k]) for k in rest))) if rest else [()]
        panels = [(", ".join(f"{ins[k]} = {v}" for k, v in zip(rest, combo)), combo) for combo in combos]
    return panels, row_name, col_name


def _point_at(sizes: Sequence[int], dims: tuple[list[int], list[int]], r: int, c: int,
              combo: Any) -> tuple[int, ...] | None:
    """The input point drawn at row ``r`` and column ``c`` of panel ``combo`` (``dims``: ``_grid_dims``); None past
    the end of a wrapped map of one input."""
    if len(sizes) == 1:
        k = r * WRAP + c
        return (k,) if k < sizes[0] else None
    (a, b), rest = dims
    pt = [0] * len(sizes)
    pt[a], pt[b] = r, c
    for k, v in zip(rest, combo):
        pt[k] = v
    return tuple(pt)


@dataclass(frozen=True)
class _MapGrid:
    """A panel's grid: the cell size, whether cells are labelled, the rows and columns shown (index -> offset), the
    elided runs between them and the grid's size; ``shown_rows``/``shown_cols`` how many of its ``rows``/``cols``
    are drawn."""
    rows: int
    cols: int
    cw: int
    ch: int
    labelled: bool
    xs: dict[int, int]
    ys: dict[int, int]
    col_gaps: list[tuple[int, int, int]]
    row_gaps: list[tuple[int, int, int]]
    grid_w: int
    grid_h: int
    condensed: bool
    shown_rows: int
    shown_cols: int


def _map_grid(lay: MapLayout, env: Mapping[str, int], full: bool,
              first_collision: tuple[tuple[Any, ...], tuple[Any, ...]] | None) -> _MapGrid:
    """The grid's geometry: labelled unless a full picture is too large, whole when ``full`` or when it fits, else
    condensed around the first collision."""
    rows, cols, cw, npanels = _shape(lay, env)
    labelled = (rows * cols * min(npanels, MAX_PANELS) <= MAX_LABELLED) or (not full)
    if not labelled:
        cw = 10
    ch = CELL_H if labelled else 10
    focus_r = focus_c = []
    if first_collision is not None and len(lay.inputs) > 1:
        (a, b), _ = _grid_dims(lay, env)
        focus_r = [int(first_collision[0][a]), int(first_collision[1][a])]
        focus_c = [int(first_collision[0][b]), int(first_collision[1][b])]
    row_runs = [(0, rows)] if full or rows <= FULL_ROWS else condense(rows, ch, BUDGET_H, focus_r)
    col_runs = [(0, cols)] if full or cols * cw <= FULL_W else condense(cols, cw, BUDGET_W, focus_c)
    condensed = row_runs != [(0, rows)] or col_runs != [(0, cols)]
    ys, row_gaps, grid_h = _axis(row_runs, rows, ch)
    xs, col_gaps, grid_w = _axis(col_runs, cols, cw)
    return _MapGrid(rows, cols, cw, ch, labelled, xs, ys, col_gaps, row_gaps, grid_w, grid_h, condensed,
                    sum(b - a for a, b in row_runs), sum(b - a for a, b in col_runs))


def _map_panel(grid: _MapGrid, ok: np.ndarray, out: Mapping[str, np.ndarray], outs: Sequence[str],
               fill_idx: np.ndarray, shared_pts: np.ndarray, point: Callable[[int, int], tuple[int, ...] | None],
               gy: int) -> list[str]:
    """One panel's grid at height ``gy``: indices, cells (each point's place, coloured), elided runs, the red
    borders of points sharing their place, and the frame; ``point`` the input point of a row and a column."""
    o: list[str] = []
    a_ = o.append
    cw, ch, xs, ys = grid.cw, grid.ch, grid.xs, grid.ys
    if grid.labelled:
        o.extend(f'<text x="{MARGIN + xs[c] + cw // 2}" y="{gy - 4}" text-anchor="middle" fill="#666666">{c}</text>'
                 for c in sorted(xs))
    marks = []
    for r in sorted(ys):
        y = gy + ys[r]
        if grid.labelled:
            a_(f'<text x="{MARGIN - 4}" y="{y + ch - 5}" text-anchor="end" fill="#666666">{r}</text>')
        for c in sorted(xs):
            pt = point(r, c)
            if pt is None:
                continue
            x = MARGIN + xs[c]
            if ok[pt]:
                fill = PALETTE[int(fill_idx[pt])]
                text = ",".join(str(int(out[n][pt])) for n in outs)
            else:
                fill, text = UNDEFINED, "-"
            a_(f'<rect x="{x}" y="{y}" width="{cw}" height="{ch}" fill="{fill}" stroke="#ffffff"/>')
            if grid.labelled:
                a_(f'<text x="{x + cw // 2}" y="{y + ch - 5}" text-anchor="middle">{text}</text>')
            if shared_pts[pt]:
                marks.append((x, y))
    for gx, lo, hi in grid.col_gaps:
        a_(f'<rect x="{MARGIN + gx}" y="{gy}" width="{GAP}" height="{grid.grid_h}" fill="#f2f2f2" stroke="#999999" '
           f'stroke-dasharray="3,2"><title>columns {lo}-{hi - 1} not shown</title></rect>')
    for gyy, lo, hi in grid.row_gaps:
        a_(f'<rect x="{MARGIN}" y="{gy + gyy}" width="{grid.grid_w}" height="{GAP}" fill="#f2f2f2" stroke="#999999" '
           f'stroke-dasharray="3,2"><title>rows {lo}-{hi - 1} not shown</title></rect>')
    o.extend(f'<rect x="{x + 1}" y="{y + 1}" width="{cw - 2}" height="{ch - 2}" fill="none" stroke="{COLLISION}" '
             f'stroke-width="2"/>' for x, y in marks)
    a_(f'<rect x="{MARGIN}" y="{gy}" width="{grid.grid_w}" height="{grid.grid_h}" fill="none" stroke="#000000"/>')
    return o


def _generic_svg(lay: MapLayout, env: Mapping[str, int], title: str, full: bool) -> str:
    ok, out = _values(lay, env)
    ins = [d.name for d in lay.inputs]
    outs = [d.name for d in lay.outputs]
    sizes = [d.at(env) for d in lay.inputs]
    fill_idx, legend, colour_says = _colours(lay, out)
    shared_pts, first_collision = _collisions(lay, env, ok, out)
    panels, row_name, col_name = _panels(lay, env)
    dims = _grid_dims(lay, env)
    grid = _map_grid(lay, env, full, first_collision)
    rows, cols = grid.rows, grid.cols
    drawn = panels[:MAX_PANELS]
    panel_h = grid.grid_h + (36 if drawn[0][0] else 20)
    sub = (f"({', '.join(f'{n} {s}' for n, s in zip(ins, sizes))}) -> ({', '.join(outs)})"
           f"{' in ' + lay.unit if lay.unit else ''}; rows: {row_name}, columns: {col_name}; cell: {','.join(outs)}; "
           f"colour: {colour_says}")
    notes = []
    if grid.condensed:
        notes.append(f"condensed: {grid.shown_rows} of {rows} rows, {grid.shown_cols} "
                     f"of {cols} columns drawn (--full draws every cell)")
    if len(panels) > len(drawn):
        notes.append(f"{len(drawn)} of {len(panels)} panels drawn (table --format json lists every point)")
    if first_collision is not None:
        p, q = first_collision
        at = {o: int(out[o][p]) for o in outs}
        notes.append(f"red: cells sharing their place; first: ({', '.join(map(str, map(int, p)))}) and "
                     f"({', '.join(map(str, map(int, q)))}) both at ({', '.join(f'{k} {v}' for k, v in at.items())})")
    top = 44 + 14 * len(notes)
    width = max(MARGIN + grid.grid_w + 24, 640, 9 * len(title) + 16,
                int(6.7 * max([len(sub)] + [len(n) for n in notes])) + 16)
    height = top + len(drawn) * panel_h + 40
    o: list[str] = []
    a_ = o.append
    a_(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
       'font-family="DejaVu Sans Mono, monospace" font-size="10">')
    a_(f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>')
    a_(f'<text x="8" y="18" font-size="14" font-weight="bold">{esc(title)}</text>')
    a_(f'<text x="8" y="34" font-size="11" fill="#444444">{esc(sub)}</text>')
    for k, n in enumerate(notes):
        a_(f'<text x="8" y="{48 + 14 * k}" font-size="11" fill="{COLLISION if n.startswith("red") else "#444444"}">'
           f'{esc(n)}</text>')
    for pi, (caption, combo) in enumerate(drawn):
        py = top + pi * panel_h
        if caption:
            a_(f'<text x="{MARGIN}" y="{py + 12}" font-size="11" font-weight="bold">{esc(caption)}</text>')
            py += 16
        o.extend(_map_panel(grid, ok, out, outs, fill_idx, shared_pts,
                            partial(_point_at, sizes, dims, combo=combo), py + 16))
    ly = top + len(drawn) * panel_h + 10
    x = 8
    for fill, words in legend:
        a_(f'<rect x="{x}" y="{ly}" width="14" height="12" fill="{fill}" stroke="#555555"/>')
        a_(f'<text x="{x + 18}" y="{ly + 10}">{esc(words)}</text>')
        x += 26 + 6 * len(words)
    a_("</svg>")
    return "\n".join(o) + "\n"


def map_picture_files(maps: Sequence[MapLayout], full: bool = False,
                      progress: Progress = NO_PROGRESS) -> dict[str, str]:
    """File name -> SVG for every map layout at its smallest member (named in the title): ``<id>.svg``, and
    ``<id>.full.svg`` beside a condensed one (as ``verify.outputs.svg.picture_files`` does for fragments)."""
    files: dict[str, str] = {}
    with progress.stage("pictures of map layouts", total=len(maps)) as step:
        for lay in maps:
            files[picture_name(lay.id)] = map_svg(lay, full=full)
            if not full and needs_condensing(lay):
                files[picture_name(lay.id, full=True)] = map_svg(lay, full=True)
            step(1)
    return dict(sorted(files.items()))


__all__ = ["element_bits_of", "map_picture_files", "map_svg", "member", "needs_condensing", "shared_view",
           "swizzle_of"]
