"""The picture of ``consistent``: writer against reader, element by element (``consistent ... --svg FILE``).

The grid is the elements' coordinates (the reader's inputs: the two largest, in their declared order, a tie going
to the later (minor) one; further inputs are panels, one grid per value).  Every cell shows where the writer
writes that element (top line; with copies, the first) and where the reader reads it from (bottom line), and its
fill says which of them holds:

* green: read from a place it was written;
* red: written and read, but read from another place (the ``mismatch`` of ``same_place``);
* orange: read from a place outside the writer's buffer (``reader_in_range``);
* yellow: read but never written (padding, ``no_padding_read``);
* grey: written, not read; hatched: neither.

A cell whose place the writer also writes for another element has a red border (``written_once``).  The elements
of the decision's witness (the property its status names) are outlined in dashed blue, and a family is drawn at
that witness's member (else its first).  At most ``MAX_PANELS`` panels are drawn (the witness's first); a grid of
more than 32 columns, or taller than its share of 1200 px, is condensed around the witness as fragment pictures are
(``full``: every cell).  Hand-written XML with integer coordinates: the same decision gives the same bytes.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from ..layout.named import _bindings, grid, inside, merge_params
from .svg import CONTEXT, EDGE, FULL_COLS, GAP_FILL, HIGHLIGHT, MAX_GRID_H, MAX_GRID_W, condense, esc
from .svg import _axis as svg_axis
from .svg import _col_gap as col_gap
from .svg import _row_gap as row_gap

CELL_H = 28
MARGIN = 48
MAX_PANELS = 4
FULL_W = 1400  # a grid at most this wide (and of at most FULL_COLS columns) keeps every column
MAX_COPIES = 64
FILLS = {"same": "#c8f0c8", "moved": "#ffb4b4", "outside": "#ffd28c", "padding": "#fff0a0", "unread": "#e4e4e4",
         "none": "#ffffff"}
WORDS = {"same": "read where written", "moved": "read from another place", "outside": "read outside the buffer",
         "padding": "read, never written", "unread": "written, not read", "none": "neither"}
RED = "#d00000"


def _member(decision: Any) -> dict[str, int]:
    """The binding drawn: the member of the witness of the property the status names, else the first."""
    from ..results.consistency import PROPERTIES, STATUS_OF
    for name in PROPERTIES:
        c = decision.get(name)
        if STATUS_OF.get(name) == decision.status and c.counterexample is not None:
            return dict(c.counterexample.params)
    params = merge_params(decision.writer_map.params, decision.reader_map.params)
    return _bindings(params)[0]


def _witness(decision: Any) -> tuple[str, list[dict[str, int]], str]:
    """(the property, its elements, its words) of the witness drawn; ("", [], "") when consistent."""
    from ..results.consistency import PROPERTIES, STATUS_OF
    for name in PROPERTIES:
        c = decision.get(name)
        if STATUS_OF.get(name) == decision.status and c.counterexample is not None:
            w = c.counterexample
            pts = [dict(p) for p in (w.element, w.first, w.second, w.owner) if p]
            return name, pts, c.message
    return "", [], ""


def _dims(sizes: Sequence[int]) -> tuple[list[int], list[int]]:
    """(the two grid inputs, the panel inputs) as indices: the two largest, a tie to the later one, in order."""
    if len(sizes) <= 2:
        return list(range(len(sizes))), []
    big = sorted(sorted(range(len(sizes)), key=lambda k: (-sizes[k], -k))[:2])
    return big, [k for k in range(len(sizes)) if k not in big]


def _place(out: Mapping[str, np.ndarray], names: Sequence[str], pt: tuple[int, ...]) -> str:
    return ",".join(str(int(out[n][pt])) for n in names)


@dataclass(frozen=True)
class _Elements:
    """Every element as the writer writes it (each copy: where, ``w_out``, and whether, ``w_ok``) and the reader reads
    it (``r_out``, ``r_ok``), with each element's kind (a key of ``FILLS``) and whether its place is written twice."""
    shape: tuple[int, ...]
    outs: list[str]
    extra: list[Any]
    copies: list[tuple[int, ...]]
    w_ok: list[np.ndarray]
    w_out: list[dict[str, np.ndarray]]
    r_ok: np.ndarray
    r_out: dict[str, np.ndarray]
    kind: np.ndarray
    twice: np.ndarray


def _elements(writer: Any, reader: Any, env: dict[str, int]) -> _Elements:
    """What ``writer`` and ``reader`` do with every element of the reader's inputs at the member ``env``."""
    xdims = tuple(reader.inputs)
    shape = tuple(d.at(env) for d in xdims)
    g = grid(xdims, env)
    rv = reader.evaluate(g, env)
    r_ok = np.broadcast_to(np.asarray(rv.ok, bool), shape)
    r_out = {k: np.broadcast_to(np.asarray(v, np.int64), shape) for k, v in rv.out.items()}
    outs = [d.name for d in writer.outputs]
    extra = [d for d in writer.inputs if d.name not in {x.name for x in xdims}]
    copies = list(itertools.product(*(range(int(d.size)) for d in extra)))[:MAX_COPIES]
    w_ok, w_out = [], []
    for cp in copies:
        point = dict(g)
        point.update({d.name: np.asarray(v, np.int64) for d, v in zip(extra, cp)})
        wv = writer.evaluate(point, env)
        w_ok.append(np.broadcast_to(np.asarray(wv.ok, bool), shape))
        w_out.append({k: np.broadcast_to(np.asarray(v, np.int64), shape) for k, v in wv.out.items()})
    written = np.zeros(shape, bool)
    same = np.zeros(shape, bool)
    for ok, wo in zip(w_ok, w_out):
        written |= ok
        eq = ok & r_ok
        for n in outs:
            eq = eq & (wo[n] == r_out[n])
        same |= eq
    r_in = r_ok & inside(r_out, tuple(writer.outputs), env)
    kind = np.full(shape, "none", dtype=object)
    kind[written & ~r_ok] = "unread"
    kind[r_ok & ~written] = "padding"
    kind[r_ok & written & ~same] = "moved"
    kind[r_ok & ~r_in] = "outside"
    kind[same] = "same"
    twice = _written_twice(w_ok, w_out, outs, shape)
    return _Elements(shape, outs, extra, copies, w_ok, w_out, r_ok, r_out, kind, twice)


def _written_twice(w_ok: Sequence[np.ndarray], w_out: Sequence[Mapping[str, np.ndarray]], outs: Sequence[str],
                   shape: tuple[int, ...]) -> np.ndarray:
    """The elements whose place is written for more than one element (or copy)."""
    keys: dict[tuple[int, ...], int] = {}
    twice = np.zeros(shape, bool)
    for ok, wo in zip(w_ok, w_out):
        for pt in zip(*np.nonzero(ok)):
            key = tuple(int(wo[n][pt]) for n in outs)
            keys[key] = keys.get(key, 0) + 1
    for ok, wo in zip(w_ok, w_out):
        for pt in zip(*np.nonzero(ok)):
            if keys[tuple(int(wo[n][pt]) for n in outs)] > 1:
                twice[pt] = True
    return twice


@dataclass(frozen=True)
class _Axes:
    """The elements' inputs laid out: ``grid_in`` the rows' and columns' inputs, ``panel_in`` one panel per value
    (``combos``, the witness's first)."""
    names: list[str]
    sizes: list[int]
    grid_in: list[int]
    panel_in: list[int]
    rows: int
    cols: int
    combos: list[tuple[int, ...]]

    def index(self, r: int, c: int, combo: tuple[int, ...]) -> tuple[int, ...]:
        """The element at row ``r`` and column ``c`` of panel ``combo``."""
        if len(self.sizes) == 1:
            return (c,)
        pt = [0] * len(self.sizes)
        pt[self.grid_in[0]], pt[self.grid_in[1]] = r, c
        for k, v in zip(self.panel_in, combo):
            pt[k] = v
        return tuple(pt)

    def pos(self, p: Mapping[str, int]) -> tuple[int, int, tuple[int, ...]]:
        """(row, column, panel) of the element ``p``."""
        t = tuple(int(p[n]) for n in self.names)
        if len(self.sizes) == 1:
            return 0, t[0], ()
        return t[self.grid_in[0]], t[self.grid_in[1]], tuple(t[k] for k in self.panel_in)


def _axes(names: list[str], sizes: list[int]) -> _Axes:
    """The rows, columns and panels of elements with inputs ``names`` of ``sizes`` (``_dims``)."""
    grid_in: list[int]
    panel_in: list[int]
    if len(sizes) == 1:
        grid_in, panel_in = [0], []
        rows, cols = 1, sizes[0]
    else:
        grid_in, panel_in = _dims(sizes)
        rows, cols = sizes[grid_in[0]], sizes[grid_in[1]]
    combos: list[tuple[int, ...]] = list(itertools.product(*(range(sizes[k]) for k in panel_in))) if panel_in else [()]
    return _Axes(names, sizes, grid_in, panel_in, rows, cols, combos)


def _witness_first(combos: list[tuple[int, ...]], focus: Sequence[tuple[int, int, tuple[int, ...]]]
                   ) -> list[tuple[int, ...]]:
    """``combos`` with the witness's panel first."""
    if focus:
        first = combos.index(focus[0][2]) if focus[0][2] in combos else 0
        combos = [combos[first]] + combos[:first] + combos[first + 1:]
    return combos


@dataclass(frozen=True)
class _Geometry:
    """The grids' cells: their width, the columns and rows shown (index -> offset), the elided runs between them,
    the grid's size, how many rows are shown and whether any row or column is left out."""
    cw: int
    xs: dict[int, int]
    col_gaps: list
    grid_w: int
    ys: dict[int, int]
    row_gaps: list
    grid_h: int
    rows_shown: int
    condensed: bool


def _geometry(el: _Elements, ax: _Axes, panels: int, focus: Sequence[tuple[int, int, tuple[int, ...]]],
              full: bool) -> _Geometry:
    """The cell width from the longest place, and the rows and columns shown: all when ``full`` or when they fit,
    else condensed around the ``focus`` elements (``panels`` grids share the height)."""
    shape, outs, w_ok, w_out, r_ok, r_out = el.shape, el.outs, el.w_ok, el.w_out, el.r_ok, el.r_out
    rows, cols = ax.rows, ax.cols
    longest = max([len(_place(w_out[0], outs, pt)) if w_out and w_ok[0][pt] else 1 for pt in np.ndindex(*shape)]
                  + [len(_place(r_out, outs, pt)) if r_ok[pt] else 1 for pt in np.ndindex(*shape)] + [2])
    cw = max(28, 7 * longest + 8)
    # the panels drawn share the height a fragment picture's grid gets (at least 8 rows each)
    row_budget = max(8 * CELL_H, MAX_GRID_H // panels)
    col_runs = [(0, cols)] if full or (cols <= FULL_COLS and cols * cw <= FULL_W) else \
        condense(cols, cw, MAX_GRID_W, [f[1] for f in focus])
    row_runs = [(0, rows)] if full or rows * CELL_H <= row_budget else \
        condense(rows, CELL_H, row_budget, [f[0] for f in focus])
    condensed = col_runs != [(0, cols)] or row_runs != [(0, rows)]
    xs, col_gaps, grid_w = svg_axis(col_runs, cols, cw, MARGIN)
    ys, row_gaps, grid_h = svg_axis(row_runs, rows, CELL_H, 0)
    return _Geometry(cw, xs, col_gaps, grid_w, ys, row_gaps, grid_h, sum(b - a for a, b in row_runs), condensed)


def _grid_panel(el: _Elements, ax: _Axes, geo: _Geometry, combo: tuple[int, ...], py: int, panel_cap: int,
                marked_cells: set[tuple[tuple[int, ...], int, int]]) -> list[str]:
    """The grid of panel ``combo`` at height ``py``: its caption, indices, cells (written at / read from), elided
    runs, the red borders of places written twice, the witness's outlines and the frame."""
    cw, xs, grid_w, grid_h = geo.cw, geo.xs, geo.grid_w, geo.grid_h
    o: list[str] = []
    a = o.append
    if ax.panel_in:
        caption = ", ".join(f"{ax.names[k]} = {v}" for k, v in zip(ax.panel_in, combo))
        a(f'<text x="{MARGIN}" y="{py + 13}" font-size="11" font-weight="bold">{esc(caption)}</text>')
    gy = py + panel_cap + 16
    for c, x in sorted(xs.items()):
        a(f'<text x="{x + cw // 2}" y="{gy - 4}" text-anchor="middle" fill="#666666">{c}</text>')
    borders, outlines = [], []
    for r, y0 in sorted(geo.ys.items()):
        y = gy + y0
        if len(ax.sizes) > 1:
            a(f'<text x="{MARGIN - 4}" y="{y + CELL_H // 2 + 4}" text-anchor="end" fill="#666666">{r}</text>')
        for c, x in sorted(xs.items()):
            pt = ax.index(r, c, combo)
            k = el.kind[pt]
            fill = "url(#hatch-consistent)" if k == "none" else FILLS[k]
            a(f'<rect x="{x}" y="{y}" width="{cw}" height="{CELL_H}" fill="{fill}" stroke="#ffffff"/>')
            wtext = next((_place(o_, el.outs, pt) for ok_, o_ in zip(el.w_ok, el.w_out) if ok_[pt]), "-")
            rtext = _place(el.r_out, el.outs, pt) if el.r_ok[pt] else "-"
            a(f'<text x="{x + cw // 2}" y="{y + 12}" text-anchor="middle">{esc(wtext)}</text>')
            a(f'<text x="{x + cw // 2}" y="{y + 24}" text-anchor="middle" font-weight="bold">{esc(rtext)}</text>')
            if el.twice[pt]:
                borders.append(f'<rect x="{x + 1}" y="{y + 1}" width="{cw - 2}" height="{CELL_H - 2}" fill="none" '
                               f'stroke="{RED}" stroke-width="2"/>')
            if (combo, r, c) in marked_cells:
                outlines.append(f'<rect x="{x - 3}" y="{y - 3}" width="{cw + 6}" height="{CELL_H + 6}" '
                                f'fill="none" stroke="{HIGHLIGHT}" stroke-width="2" stroke-dasharray="5,3"/>')
    for gx, lo, hi in geo.col_gaps:
        col_gap(a, gx, gy, grid_h, lo, hi)
    for gyy, lo, hi in geo.row_gaps:
        row_gap(a, MARGIN, gy + gyy, grid_w, lo, hi)
    o.extend(borders)
    o.extend(outlines)
    a(f'<rect x="{MARGIN}" y="{gy}" width="{grid_w}" height="{grid_h}" fill="none" stroke="#000000"/>')
    return o


def _legend(el: _Elements, legend_y: int, counterexample: bool, condensed: bool) -> list[str]:
    """The legend: each kind present, a place written twice, the counterexample, the elided runs."""
    o: list[str] = []
    a = o.append
    x = 8
    present = [k for k in FILLS if bool((el.kind == k).any())]
    for kd in present:
        fill = "url(#hatch-consistent)" if kd == "none" else FILLS[kd]
        a(f'<rect x="{x}" y="{legend_y}" width="14" height="12" fill="{fill}" stroke="#555555"/>')
        a(f'<text x="{x + 18}" y="{legend_y + 10}">{esc(WORDS[kd])}</text>')
        x += 30 + 6 * len(WORDS[kd])
    if bool(el.twice.any()):
        a(f'<rect x="{x}" y="{legend_y}" width="14" height="12" fill="#ffffff" stroke="{RED}" stroke-width="2"/>')
        a(f'<text x="{x + 18}" y="{legend_y + 10}">place written twice</text>')
        x += 30 + 6 * 19
    if counterexample:
        a(f'<rect x="{x}" y="{legend_y}" width="14" height="12" fill="none" stroke="{HIGHLIGHT}" stroke-width="2" '
          'stroke-dasharray="5,3"/>')
        a(f'<text x="{x + 18}" y="{legend_y + 10}" fill="{HIGHLIGHT}">counterexample</text>')
        x += 30 + 6 * 14
    if condensed:
        a(f'<rect x="{x}" y="{legend_y}" width="14" height="12" fill="{GAP_FILL}" stroke="#999999" '
          'stroke-dasharray="3,2"/>')
        a(f'<text x="{x + 18}" y="{legend_y + 10}">not shown (elided)</text>')
    return o


def consistent_svg(decision: Any, full: bool = False) -> str:
    """The picture of ``decision`` (``verify.results.consistency.Decision``, with its maps); see the module
    docstring."""
    writer, reader = decision.writer_map, decision.reader_map
    env = _member(decision)
    el = _elements(writer, reader, env)
    prop, marked, words = _witness(decision)
    names = [d.name for d in reader.inputs]
    sizes = list(el.shape)
    ax = _axes(names, sizes)
    rows, cols = ax.rows, ax.cols
    focus = [ax.pos(p) for p in marked if all(n in p for n in names)]
    combos = _witness_first(ax.combos, focus)
    drawn = combos[:MAX_PANELS]
    geo = _geometry(el, ax, len(drawn), focus, full)
    member = ", ".join(f"{k} = {v}" for k, v in env.items())
    title = f"consistent: {decision.writer} -> {decision.reader}: {decision.status}"
    sub = (f"elements ({', '.join(f'{n} {s}' for n, s in zip(names, sizes))})"
           + (f" at {member}" if member else "") + f"; rows: {names[ax.grid_in[0]] if len(sizes) > 1 else '-'}, "
           f"columns: {names[ax.grid_in[-1]]}; cell: written at (top) / read from (bottom), as ({', '.join(el.outs)})")
    notes = []
    if words:
        notes.append(f"{prop}: {words}")
    if geo.condensed:
        notes.append(f"condensed: {len(geo.xs)} of {cols} columns, {geo.rows_shown} of {rows} rows shown "
                     f"(the witness with {CONTEXT} on each side, the first and last {EDGE}); every cell: --full")
    if len(combos) > len(drawn):
        notes.append(f"{len(drawn)} of {len(combos)} panels drawn")
    if len(el.copies) > 1:
        notes.append(f"the writer writes every element {len(el.copies)} times ({', '.join(d.name for d in el.extra)}): "
                     "top line: the first copy; green: read from any copy")
    top = 48 + 14 * len(notes)
    panel_cap = 18 if ax.panel_in else 0
    panel_h = panel_cap + 16 + geo.grid_h + 12
    width = max(MARGIN + geo.grid_w + 24, 720, 16 + 9 * len(title),
                16 + int(6.8 * max([len(sub)] + [len(n) for n in notes])))
    legend_y = top + len(drawn) * panel_h + 8
    height = legend_y + 40
    o: list[str] = []
    a = o.append
    a(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
      'font-family="DejaVu Sans Mono, monospace" font-size="10">')
    a("<defs>")
    a('<pattern id="hatch-consistent" width="6" height="6" patternUnits="userSpaceOnUse" '
      'patternTransform="rotate(45)"><rect width="6" height="6" fill="#f4f4f4"/>'
      '<line x1="0" y1="0" x2="0" y2="6" stroke="#c8c8c8" stroke-width="2"/></pattern>')
    a("</defs>")
    a(f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>')
    a(f'<text x="8" y="20" font-size="14" font-weight="bold">{esc(title)}</text>')
    a(f'<text x="8" y="38" font-size="11" fill="#444444">{esc(sub)}</text>')
    for k, n in enumerate(notes):
        a(f'<text x="8" y="{52 + 14 * k}" font-size="11" fill="{RED if k == 0 and words else "#444444"}">'
          f'{esc(n)}</text>')
    marked_cells = {(f[2], f[0], f[1]) for f in focus}
    for pi, combo in enumerate(drawn):
        o.extend(_grid_panel(el, ax, geo, combo, top + pi * panel_h, panel_cap, marked_cells))
    o.extend(_legend(el, legend_y, bool(marked_cells), geo.condensed))
    a("</svg>")
    return "\n".join(o) + "\n"


__all__ = ["consistent_svg"]
