"""Fragment pictures: one layout as an SVG grid, in the style of CuTe's ``print_svg``/``print_latex``.

Every cell of the matrix shows its owner ``T<lane>`` and element name (``a3``), filled
with one of eight fixed colours by ``lane % 8`` (CuTe's palette).  A cell with several
owners gets a red border and lists them; a cell with no owner is hatched grey and
labelled ``empty``; elements that land outside the matrix (or where no case of the
formula applies) are listed beside the grid.  An optional ``highlight`` set of cells
gets a dashed outline (the counterexample of a finding).

Written by hand: the output is a few hundred lines of plain XML, and building it here
keeps it byte-stable (integer coordinates only, fixed attribute order, no ids or
timestamps from a library).  All text goes through :func:`esc`.
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

from ..layout.enumerate import decide
from ..layout.model import Layout, cells_of
from .progress import NONE as NO_PROGRESS
from .progress import Progress
from .table import table_entries

# CuTe's SVGColor_TV / TikzColor_TV: eight colours, chosen by thread index % 8.
PALETTE = ("#afafff", "#afffaf", "#ffffaf", "#ffafaf", "#d2d2ff", "#d2ffd2", "#ffffd2", "#ffd2d2")
COLLISION = "#d00000"
HIGHLIGHT = "#0050c8"
GAP_FILL = "#f2f2f2"
MAX_OUTSIDE_LINES = 24
COMPACT_CELLS = 4096  # a full picture with more cells than this draws colours only (no labels)
MAX_WIDTH = 1240  # MMA computations are drawn side by side while they fit in this width
FULL_COLS = 32  # a grid of at most this many columns is drawn whole (1792 px at cell size; wider: condensed)
FULL_ROWS = 128  # likewise for rows (4096 px): a 64 x 24 wgmma accumulator is drawn whole
MAX_GRID_W = 1100  # the width a condensed grid is fitted into (at cell size)
MAX_GRID_H = 1200  # likewise for its height
CONTEXT = 2  # rows/columns kept on each side of a cell in focus
EDGE = 2  # first and last rows/columns always kept
GAP = 24  # px of an elided run of rows or columns
MIN_FONT = 10  # px: no label of any picture is smaller; each picture states it as its root's font-size


def esc(text: object) -> str:
    """Escape text for XML/HTML content and attribute values."""
    return html.escape(str(text), quote=True)


def colour(lane: int) -> str:
    return PALETTE[lane % 8]


# A block tile drawn by warp: one colour per warp (16 hues, far apart for neighbouring warps).
WARP_PALETTE = ("#afafff", "#ffd28c", "#afffaf", "#ffafd2", "#8cd2ff", "#ffffaf", "#d2afff", "#afffe6",
                "#ffafaf", "#c8e68c", "#e6c8ff", "#8cffc8", "#ffc8af", "#afc8ff", "#e6e6af", "#ffafff")


def warp_colour(thread: int) -> str:
    return WARP_PALETTE[(thread // 32) % len(WARP_PALETTE)]


def _grids(layout: Layout, entries: Sequence[dict[str, Any]]) -> list[tuple[dict[tuple[int, int], list[dict[str, Any]]], list[dict[str, Any]]]]:
    """Per MMA computation: cell -> owners (in (lane, i) order), and the entries outside the matrix."""
    out = []
    for g in range(layout.groups):
        grid: dict[tuple[int, int], list[dict[str, Any]]] = {}
        outside: list[dict[str, Any]] = []
        for e in entries:
            if e.get("mma", 0) != g:
                continue
            r, c = e["row"], e["col"]
            if r is None or c is None or not (0 <= r < layout.rows and 0 <= c < layout.cols):
                outside.append(e)
            else:
                grid.setdefault((r, c), []).append(e)
        out.append((grid, outside))
    # lanes whose group index is outside 0..groups-1 are reported with group 0's outside list
    stray = [e for e in entries if not (0 <= e.get("mma", 0) < layout.groups)]
    if stray and out:
        out[0][1].extend(stray)
    return out


def _label(e: dict[str, Any]) -> str:
    return f"T{e['lane']}:{e['element']}"


def _outside_text(e: dict[str, Any]) -> str:
    if e["row"] is None or e["col"] is None:
        return f"{_label(e)}: undefined (no case applies)"
    return f"{_label(e)} \u2192 ({e['row']}, {e['col']})"


def _runs(keep: Iterable[int]) -> list[tuple[int, int]]:
    """Sorted indices as runs [(start, end)] (end exclusive)."""
    out: list[tuple[int, int]] = []
    for k in sorted(keep):
        if out and out[-1][1] == k:
            out[-1] = (out[-1][0], k + 1)
        else:
            out.append((k, k + 1))
    return out


def _extent(runs: Sequence[tuple[int, int]], n: int, size: int) -> int:
    gaps = sum(1 for a, b in zip(runs, runs[1:])) + (1 if runs and runs[0][0] > 0 else 0) + (
        1 if runs and runs[-1][1] < n else 0)
    return sum(b - a for a, b in runs) * size + gaps * GAP


def condense(n: int, size: int, budget: int, focus: Iterable[int],
             order: Iterable[int] | None = None) -> list[tuple[int, int]]:
    """The runs of rows or columns to draw: all of them when they fit in ``budget`` px, else the
    first and last ``EDGE``, ``CONTEXT`` on each side of every focus index, and then as many
    leading ones (``order``: in that order) as still fit (every other run is drawn as a marked gap)."""
    if n * size <= budget:
        return [(0, n)]
    keep = set(range(min(EDGE, n))) | set(range(max(0, n - EDGE), n))
    for f in focus:
        if 0 <= f < n:
            keep |= set(range(max(0, f - CONTEXT), min(n, f + CONTEXT + 1)))
    for k in (range(n) if order is None else order):
        if k in keep:
            continue
        trial = keep | {k}
        if _extent(_runs(trial), n, size) > budget:
            break
        keep = trial
    return _runs(keep)


Grids = Sequence[tuple[dict[tuple[int, int], list[dict[str, Any]]], list[dict[str, Any]]]]


def _axis(runs: Sequence[tuple[int, int]], n: int, size: int,
          origin: int) -> tuple[dict[int, int], list[tuple[int, int, int]], int]:
    """Positions of the drawn indices, the gaps as (position, first elided, end elided), total px."""
    pos: dict[int, int] = {}
    gaps: list[tuple[int, int, int]] = []
    x = origin
    nxt = 0
    for a, b in runs:
        if a > nxt:
            gaps.append((x, nxt, a))
            x += GAP
        for k in range(a, b):
            pos[k] = x
            x += size
        nxt = b
    if nxt < n:
        gaps.append((x, nxt, n))
        x += GAP
    return pos, gaps, x - origin


def needs_condensing(layout: Layout) -> bool:
    """Whether the default picture of ``layout`` is condensed: only a really large one (more than
    ``FULL_COLS`` columns or ``FULL_ROWS`` rows, such as m16n8k256 A's 256 columns); every other grid is
    drawn whole, as it fits at cell size."""
    return layout.cols > FULL_COLS or layout.rows > FULL_ROWS


def focus_cells(layout: Layout, grids: Grids,
                highlight: Iterable[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """The cells a condensed picture keeps in sight: the counterexample cells given, else the first
    cell with several owners and the first hole (row-major, per MMA computation)."""
    hl = sorted(set(highlight))
    if hl:
        return hl
    out = []
    for g, (grid, _) in enumerate(grids):
        shared = sorted(k for k, v in grid.items() if len(v) > 1)
        if shared:
            out.append((g, *shared[0]))
        hole = next(((r, c) for r in range(layout.rows) for c in range(layout.cols) if (r, c) not in grid), None)
        if hole is not None:
            out.append((g, *hole))
    return out


@dataclass(frozen=True)
class _GridGeometry:
    """How each computation's grid is drawn: the cell size (``compact``: colours only), the rows and columns shown
    (index -> offset) and the elided runs between them, the grid's size, the hatch pattern's id and the colour of a
    lane (``paint``); ``focus`` the cells kept in sight, ``shown_rows``/``shown_cols`` how many are drawn."""
    cw: int
    ch: int
    compact: bool
    xs: dict[int, int]
    ys: dict[int, int]
    col_gaps: list
    row_gaps: list
    grid_w: int
    grid_h: int
    pat: str
    paint: Callable[[int], str]
    focus: list[tuple[int, int, int]]
    condensed: bool
    shown_rows: int
    shown_cols: int


def _grid_geometry(layout: Layout, grids: Grids, hl: set[tuple[int, int, int]], full: bool, uid: str,
                   paint: Callable[[int], str]) -> _GridGeometry:
    """The grids' geometry: whole when ``full`` or when they fit at cell size, else condensed around the focus."""
    compact = full and layout.rows * layout.cols > COMPACT_CELLS
    cw, ch = (12, 12) if compact else (56, 32)
    focus = focus_cells(layout, grids, hl) if not full else []
    col_runs = [(0, layout.cols)] if full or layout.cols <= FULL_COLS else \
        condense(layout.cols, cw, MAX_GRID_W, [c for _, _, c in focus])
    row_runs = [(0, layout.rows)] if full or layout.rows <= FULL_ROWS else \
        condense(layout.rows, ch, MAX_GRID_H, [r for _, r, _ in focus])
    condensed = col_runs != [(0, layout.cols)] or row_runs != [(0, layout.rows)]
    xs, col_gaps, grid_w = _axis(col_runs, layout.cols, cw, 0)
    ys, row_gaps, grid_h = _axis(row_runs, layout.rows, ch, 0)
    shown_rows, shown_cols = sum(b - e for e, b in row_runs), sum(b - e for e, b in col_runs)
    return _GridGeometry(cw, ch, compact, xs, ys, col_gaps, row_gaps, grid_w, grid_h, f"hatch-{uid}", paint, focus,
                         condensed, shown_rows, shown_cols)


def _grid_indices(geo: _GridGeometry, left: int, gy: int) -> list[str]:
    """The column indices above a grid at (``left``, ``gy``) and the row indices left of it (every 8th if compact)."""
    o: list[str] = []
    a = o.append
    step = 8 if geo.compact else 1
    for c in sorted(geo.xs):
        if c % step == 0:
            a(f'<text x="{left + geo.xs[c] + geo.cw // 2}" y="{gy - 5}" font-size="10" text-anchor="middle" '
              f'fill="#666666">{c}</text>')
    for r in sorted(geo.ys):
        if r % step == 0:
            a(f'<text x="{left - 6}" y="{gy + geo.ys[r] + geo.ch // 2 + 4}" font-size="10" text-anchor="end" '
              f'fill="#666666">{r}</text>')
    return o


def _grid_cells(geo: _GridGeometry, grid: dict[tuple[int, int], list[dict[str, Any]]], left: int, gy: int
                ) -> tuple[list[str], list[tuple[int, int]]]:
    """The cells of a grid at (``left``, ``gy``), each in its owner's colour with its label (hatched when empty),
    and the cells with several owners."""
    o: list[str] = []
    a = o.append
    cw, ch, compact, pat = geo.cw, geo.ch, geo.compact, geo.pat
    shared: list[tuple[int, int]] = []
    for r in sorted(geo.ys):
        for c in sorted(geo.xs):
            x, y = left + geo.xs[c], gy + geo.ys[r]
            owners = grid.get((r, c))
            if not owners:
                a(f'<rect x="{x}" y="{y}" width="{cw}" height="{ch}" fill="url(#{esc(pat)})" '
                  f'stroke="#888888" stroke-width="1"/>')
                if not compact:
                    a(f'<text x="{x + cw // 2}" y="{y + ch // 2 + 4}" font-size="10" font-style="italic" '
                      f'text-anchor="middle" fill="#555555">empty</text>')
                continue
            a(f'<rect x="{x}" y="{y}" width="{cw}" height="{ch}" fill="{geo.paint(owners[0]["lane"])}" '
              f'stroke="#555555" stroke-width="1"/>')
            if len(owners) > 1:
                shared.append((r, c))
            if compact:
                continue
            if len(owners) == 1:
                e = owners[0]
                a(f'<text x="{x + cw // 2}" y="{y + 14}" font-size="11" font-weight="bold" '
                  f'text-anchor="middle">T{e["lane"]}</text>')
                a(f'<text x="{x + cw // 2}" y="{y + 27}" font-size="10" text-anchor="middle">'
                  f'{esc(e["element"])}</text>')
            else:
                first = _label(owners[0])
                second = _label(owners[1]) + (f" +{len(owners) - 2}" if len(owners) > 2 else "")
                a(f'<text x="{x + cw // 2}" y="{y + 14}" font-size="{MIN_FONT}" font-weight="bold" '
                  f'text-anchor="middle" fill="{COLLISION}">{esc(first)}</text>')
                a(f'<text x="{x + cw // 2}" y="{y + 26}" font-size="{MIN_FONT}" font-weight="bold" '
                  f'text-anchor="middle" fill="{COLLISION}">{esc(second)}</text>')
    return o, shared


def _grid_marks(geo: _GridGeometry, g: int, grid: dict[tuple[int, int], list[dict[str, Any]]],
                shared: Sequence[tuple[int, int]], hl: set[tuple[int, int, int]], left: int, gy: int) -> list[str]:
    """Over computation ``g``'s grid: the elided runs, the borders of cells with several owners, the outlines of
    the counterexample's cells and the frame."""
    o: list[str] = []
    a = o.append
    cw, ch, xs, ys = geo.cw, geo.ch, geo.xs, geo.ys
    for gx, lo, hi in geo.col_gaps:
        _col_gap(a, left + gx, gy, geo.grid_h, lo, hi)
    for gyy, lo, hi in geo.row_gaps:
        _row_gap(a, left, gy + gyy, geo.grid_w, lo, hi)
    # borders drawn after all cells, so neighbours do not paint over them
    for r, c in shared:
        names = ", ".join(_label(e) for e in grid[(r, c)])
        a(f'<rect x="{left + xs[c] + 1}" y="{gy + ys[r] + 1}" width="{cw - 2}" height="{ch - 2}" '
          f'fill="none" stroke="{COLLISION}" stroke-width="3"><title>{esc(f"({r}, {c}): {names}")}</title></rect>')
    for hg, r, c in sorted(hl):
        if hg == g and r in ys and c in xs:
            a(f'<rect x="{left + xs[c] - 3}" y="{gy + ys[r] - 3}" width="{cw + 6}" height="{ch + 6}" '
              f'fill="none" stroke="{HIGHLIGHT}" stroke-width="2" stroke-dasharray="5,3"/>')
    a(f'<rect x="{left}" y="{gy}" width="{geo.grid_w}" height="{geo.grid_h}" fill="none" stroke="#000000" '
      'stroke-width="1"/>')
    return o


def _outside_list(outside: Sequence[dict[str, Any]], hl_el: set[tuple[int, int]], ox: int, gy: int) -> list[str]:
    """The elements outside the matrix, listed at (``ox``, ``gy``): the highlighted ones first, then by lane."""
    o: list[str] = []
    a = o.append
    a(f'<text x="{ox}" y="{gy + 12}" font-size="12" font-weight="bold" fill="{COLLISION}">'
      f'outside the matrix ({len(outside)}):</text>')
    shown = sorted(outside, key=lambda e: ((e["lane"], e["i"]) not in hl_el, e["lane"], e["i"]))
    for k, e in enumerate(shown[:MAX_OUTSIDE_LINES]):
        mark = (f' font-weight="bold" fill="{HIGHLIGHT}"' if (e["lane"], e["i"]) in hl_el else "")
        a(f'<text x="{ox}" y="{gy + 30 + 16 * k}" font-size="11" font-family="DejaVu Sans Mono, monospace"'
          f'{mark}>{esc(_outside_text(e))}</text>')
    if len(outside) > MAX_OUTSIDE_LINES:
        a(f'<text x="{ox}" y="{gy + 30 + 16 * MAX_OUTSIDE_LINES}" font-size="11">'
          f'\u2026 and {len(outside) - MAX_OUTSIDE_LINES} more</text>')
    return o


def _fragment_legend(layout: Layout, ly: int, pat: str, by_warp: bool, counterexample: bool,
                     condensed: bool) -> list[str]:
    """The legend at height ``ly``: the lane (or warp) colours, several owners, no owner, the counterexample and
    the elided runs."""
    o: list[str] = []
    a = o.append
    swatches = PALETTE if not by_warp else WARP_PALETTE[:min(len(WARP_PALETTE), max(1, -(-layout.threads // 32)))]
    a(f'<text x="8" y="{ly + 10}" font-size="11">{"warp:" if by_warp else "lane % 8:"}</text>')
    for k, col in enumerate(swatches):
        a(f'<rect x="{64 + 26 * k}" y="{ly}" width="22" height="14" fill="{col}" stroke="#555555" stroke-width="1"/>')
        a(f'<text x="{75 + 26 * k}" y="{ly + 11}" font-size="10" text-anchor="middle">{k}</text>')
    lx = 64 + 26 * max(8, len(swatches)) + 16
    a(f'<rect x="{lx}" y="{ly}" width="22" height="14" fill="#ffffff" stroke="{COLLISION}" stroke-width="3"/>')
    a(f'<text x="{lx + 28}" y="{ly + 11}" font-size="11">several owners</text>')
    lx += 130
    a(f'<rect x="{lx}" y="{ly}" width="22" height="14" fill="url(#{esc(pat)})" stroke="#888888" stroke-width="1"/>')
    a(f'<text x="{lx + 28}" y="{ly + 11}" font-size="11">no owner</text>')
    if counterexample:
        lx += 90
        a(f'<rect x="{lx}" y="{ly}" width="22" height="14" fill="none" stroke="{HIGHLIGHT}" stroke-width="2" '
          f'stroke-dasharray="5,3"/>')
        a(f'<text x="{lx + 28}" y="{ly + 11}" font-size="11" fill="{HIGHLIGHT}">counterexample</text>')
    if condensed:
        lx += 130
        a(f'<rect x="{lx}" y="{ly}" width="22" height="14" fill="{GAP_FILL}" stroke="#999999" stroke-width="1" '
          f'stroke-dasharray="3,2"/>')
        a(f'<text x="{lx + 28}" y="{ly + 11}" font-size="11">not shown (elided)</text>')
    return o


def fragment_svg(layout: Layout, entries: Sequence[dict[str, Any]], *, title: str | None = None,
                 highlight: Iterable[tuple[int, int, int]] = (),
                 highlight_elements: Iterable[tuple[int, int]] = (), uid: str = "f", full: bool = False,
                 by_warp: bool = False) -> str:
    """The SVG picture of ``layout`` from its table entries (``verify.outputs.table.table_entries``).

    ``highlight`` holds (group, row, col) cells to outline, ``highlight_elements`` (lane, i)
    pairs to emphasise in the list of elements outside the matrix; ``uid`` makes the ids inside
    the picture unique when several pictures are inlined into one HTML page.

    A layout too large to read at cell size (m16n8k256 A: 256 columns) is drawn condensed unless
    ``full``: the counterexample cells (``highlight``, else the first collision and hole) with
    ``CONTEXT`` rows and columns around them, the first and last ``EDGE``, and elided runs drawn
    as marked gaps; the cells in focus and their owners are listed under the grid.  With ``full``
    every cell is drawn (colours only, no labels, above ``COMPACT_CELLS`` cells).

    ``by_warp`` (a block tile over several warps): cells are coloured by the warp of their thread (thread // 32),
    still labelled ``T<thread>``, and the legend names the warps.
    """
    paint = warp_colour if by_warp else colour
    hl = set(highlight)
    hl_el = set(highlight_elements)
    grids = _grids(layout, entries)
    geo = _grid_geometry(layout, grids, hl, full, uid, paint)
    condensed = geo.condensed
    pad_left = 36  # row indices
    pat = geo.pat
    any_outside = any(outside for _, outside in grids)
    outside_w = 250 if any_outside else 0
    head_h = 36 if layout.groups > 1 else 18  # computation title + column indices
    max_outside = max((len(o) for _, o in grids), default=0)
    outside_h = 30 + 16 * (min(max_outside, MAX_OUTSIDE_LINES) + 1) if any_outside else 0
    captions = _focus_captions(grids, geo.focus) if condensed else []
    caption_h = 8 + 16 * len(captions) if captions else 0
    block_w = pad_left + geo.grid_w + (20 + outside_w if any_outside else 0) + 24
    block_h = head_h + max(geo.grid_h + caption_h, outside_h) + 16
    per_row = max(1, min(layout.groups, MAX_WIDTH // block_w))
    n_rows = -(-layout.groups // per_row)
    top = 62 if condensed else 48
    legend_h = 28
    heading = title if title is not None else layout.id
    note = _condensed_note(layout, geo.shown_rows, geo.shown_cols) if condensed else ""
    n_swatches = len(PALETTE) if not by_warp else min(len(WARP_PALETTE), max(1, -(-layout.threads // 32)))
    legend_w = _legend_width(n_swatches, bool(hl or hl_el), condensed)
    # text is not measured by the renderer: estimate ~6.3 px per character at 11 px, ~9 at 15 px bold
    width = max(8 + per_row * block_w, 600, legend_w, 16 + int(6.3 * max(len(note), len(_subtitle(layout, by_warp)))),
                16 + int(9.5 * len(heading)))
    height = top + n_rows * block_h + legend_h

    o: list[str] = []
    a = o.append
    a(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
      f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="{MIN_FONT}">')
    a("<defs>")
    a(f'<pattern id="{esc(pat)}" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">'
      '<rect width="6" height="6" fill="#e4e4e4"/><line x1="0" y1="0" x2="0" y2="6" stroke="#9a9a9a" stroke-width="2"/>'
      "</pattern>")
    a("</defs>")
    a(f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>')
    a(f'<text x="8" y="20" font-size="15" font-weight="bold">{esc(heading)}</text>')
    a(f'<text x="8" y="38" font-size="11" fill="#444444">{esc(_subtitle(layout, by_warp))}</text>')
    if condensed:
        a(f'<text x="8" y="54" font-size="11" fill="#444444">{esc(note)}</text>')

    for g, (grid, outside) in enumerate(grids):
        bx = 8 + (g % per_row) * block_w
        by = top + (g // per_row) * block_h
        left = bx + pad_left
        gy = by + head_h
        if layout.groups > 1:
            a(f'<text x="{left}" y="{by + 14}" font-size="12" font-weight="bold">MMA computation {g + 1}</text>')
        o.extend(_grid_indices(geo, left, gy))
        cells, shared = _grid_cells(geo, grid, left, gy)
        o.extend(cells)
        o.extend(_grid_marks(geo, g, grid, shared, hl, left, gy))
        mine = [(t, bad) for cg, t, bad in captions if cg == g]
        for k, (text, bad) in enumerate(mine):
            a(f'<text x="{left}" y="{gy + geo.grid_h + 20 + 16 * k}" font-size="11" '
              f'font-family="DejaVu Sans Mono, monospace"{_fill(COLLISION) if bad else ""}>{esc(text)}</text>')
        if outside:
            o.extend(_outside_list(outside, hl_el, left + geo.grid_w + 20, gy))
    y0 = top + n_rows * block_h
    o.extend(_fragment_legend(layout, y0 + 4, pat, by_warp, bool(hl or hl_el), condensed))
    a("</svg>")
    return "\n".join(o) + "\n"


def _legend_width(swatches: int, counterexample: bool, condensed: bool) -> int:
    """Where the legend's last label ends (+ a margin), as ``fragment_svg`` places its entries: the swatches, then
    ``several owners``, ``no owner`` 130 px on, ``counterexample`` 90 px on, ``not shown (elided)`` 130 px on."""
    x = 64 + 26 * max(8, swatches) + 16  # several owners
    ends = [x + 28 + int(6.3 * len("several owners"))]
    x += 130  # no owner
    ends.append(x + 28 + int(6.3 * len("no owner")))
    if counterexample:
        x += 90
        ends.append(x + 28 + int(6.3 * len("counterexample")))
    if condensed:
        x += 130
        ends.append(x + 28 + int(6.3 * len("not shown (elided)")))
    return max(ends) + 16


def _fill(colour_: str) -> str:
    return f' fill="{colour_}"'


def _col_gap(a: Any, x: int, y: int, h: int, lo: int, hi: int) -> None:
    n = hi - lo
    what = f"column {lo}" if n == 1 else f"columns {lo}\u2013{hi - 1}"
    a(f'<rect x="{x}" y="{y}" width="{GAP}" height="{h}" fill="{GAP_FILL}" stroke="#999999" stroke-width="1" '
      f'stroke-dasharray="3,2"><title>{esc(what)} not shown ({n})</title></rect>')
    a(f'<text x="{x + GAP // 2}" y="{y - 5}" font-size="10" text-anchor="middle" fill="#666666">\u22ef</text>')
    cx, cy = x + GAP // 2 + 4, y + h // 2
    label = f"{n} not shown" if h < 150 else f"{what}: {n} not shown"
    a(f'<text x="{cx}" y="{cy}" font-size="10" text-anchor="middle" fill="#555555" '
      f'transform="rotate(-90 {cx} {cy})">{esc(label)}</text>')


def _row_gap(a: Any, x: int, y: int, w: int, lo: int, hi: int) -> None:
    n = hi - lo
    what = f"row {lo}" if n == 1 else f"rows {lo}\u2013{hi - 1}"
    a(f'<rect x="{x}" y="{y}" width="{w}" height="{GAP}" fill="{GAP_FILL}" stroke="#999999" stroke-width="1" '
      f'stroke-dasharray="3,2"><title>{esc(what)} not shown ({n})</title></rect>')
    a(f'<text x="{x + 8}" y="{y + GAP // 2 + 4}" font-size="10" fill="#555555">{esc(what)}: {n} not shown</text>')


def _focus_captions(grids: Grids,
                    focus: Sequence[tuple[int, int, int]]) -> list[tuple[int, str, bool]]:
    """Under a condensed grid: each cell in focus with its owners (group, text, is-a-problem)."""
    out = []
    for g, r, c in focus:
        if not 0 <= g < len(grids):
            continue
        owners = grids[g][0].get((r, c), [])
        if not owners:
            out.append((g, f"cell ({r}, {c}): no owner", True))
        elif len(owners) > 1:
            out.append((g, f"cell ({r}, {c}): {len(owners)} owners: " + ", ".join(_label(e) for e in owners), True))
        else:
            out.append((g, f"cell ({r}, {c}): {_label(owners[0])}", False))
    return out


def _condensed_note(layout: Layout, rows: int, cols: int) -> str:
    parts = []
    if cols < layout.cols:
        parts.append(f"{cols} of {layout.cols} columns")
    if rows < layout.rows:
        parts.append(f"{rows} of {layout.rows} rows")
    return (f"condensed: {' and '.join(parts)} shown (the cells in focus with {CONTEXT} on each side, the first and "
            f"last {EDGE}); every cell: " + (f"ptx-verify table {layout.id} --format svg --full" if " " not in layout.id
                                             else "the same command with --full"))


def _subtitle(layout: Layout, by_warp: bool = False) -> str:
    """What the picture shows; its cells' ``T<n>`` is a lane of one warp, else a thread (a warpgroup's fragment,
    a block tile), and a block tile coloured by warp says so."""
    per = f"{layout.threads} threads x {layout.n_elements} elements"
    grid = f"{layout.rows} x {layout.cols}"
    if layout.groups > 1:
        grid += f" per MMA computation, {layout.groups} computations"
    who = "lane" if layout.threads <= 32 else "thread"
    return f"{grid}, {per}; cell = T<{who}> / element" + ("; colour = warp (thread / 32)" if by_warp else "")


def summary_counts(layout: Layout, entries: Sequence[dict[str, Any]]) -> dict[str, int]:
    """Shared cells, empty cells and elements outside the matrix, over all computations."""
    shared = empty = outside = 0
    for grid, out in _grids(layout, entries):
        shared += sum(1 for v in grid.values() if len(v) > 1)
        empty += layout.rows * layout.cols - len(grid)
        outside += len(out)
    return {"shared": shared, "empty": empty, "outside": outside}


# ----------------------------------------------------------------------------- pictures of layouts

def picture_name(layout_id: str, full: bool = False) -> str:
    """``<layout id>.svg`` (``.full.svg`` for the every-cell picture beside a condensed one)."""
    return re.sub(r"[^A-Za-z0-9_.@+-]", "-", layout_id) + (".full.svg" if full else ".svg")


def witnesses(layout: Layout) -> tuple[set[tuple[int, int, int]], set[tuple[int, int]]]:
    """The enumeration's canonical counterexamples (the ones ``check`` reports): the first collision
    and the first hole as (group, row, col), the first element outside the matrix as (lane, i)."""
    en = decide(cells_of(layout), layout.rows, layout.cols, layout.groups, layout.element_name)
    cells = {(int(c.get("mma", 0)), int(c["row"]), int(c["col"])) for c in (en.injective, en.surjective) if c}
    elements = {(int(en.in_range["lane"]), int(en.in_range["i"]))} if en.in_range else set()
    return cells, elements


def layout_svg(layout: Layout, full: bool = False, uid: str = "f", by_warp: bool = False) -> str:
    """The picture of one layout with its counterexamples outlined (condensed when large, unless ``full``);
    ``by_warp``: coloured by warp (a block tile)."""
    cells, elements = witnesses(layout)
    member = ("  (" + ", ".join(f"{k} = {v}" for k, v in layout.params_bound) + ")") if layout.params_bound else ""
    return fragment_svg(layout, table_entries(layout), highlight=cells, highlight_elements=elements, uid=uid,
                        full=full, by_warp=by_warp,
                        title=layout.id + member + ("  (every cell)" if full and needs_condensing(layout) else ""))


def picture_files(layouts: Sequence[Layout], full: bool = False,
                  progress: Progress = NO_PROGRESS) -> dict[str, str]:
    """File name -> SVG for every layout: ``<id>.svg`` (condensed when large, unless ``full``) and, beside
    a condensed one, ``<id>.full.svg`` with every cell.  A family is drawn at its smallest member, and the
    picture's title names it (``table ID --param`` draws any other)."""
    files: dict[str, str] = {}
    with progress.stage("pictures", total=len(layouts)) as step:
        for lay in layouts:
            lay = lay.representative()
            files[picture_name(lay.id)] = layout_svg(lay, full=full)
            if not full and needs_condensing(lay):
                files[picture_name(lay.id, full=True)] = layout_svg(lay, full=True)
            step(1)
    return dict(sorted(files.items()))
