"""Shared-memory pictures: a tile drawn as CuTe draws swizzled layouts (``print_latex`` of a
``ComposedLayout``): every cell (row, col) shows its offset, cells are coloured by the bank of their byte
address (32 colours), swizzle atoms are outlined, and a bank-conflict witness is marked (the two lanes'
cells in red, the worst wavefront group's cells outlined in blue).

Hand-written XML, integer coordinates, fixed attribute order: the same input gives the same bytes.
A tile of more than 32 columns or 128 rows is condensed as a fragment picture is (``--full``: every cell);
a picture of more than ``MAX_CELLS`` cells draws colours only (no labels).
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ..layout.named import evaluate_all
from ..layout.shared import SharedLayout
from ..witnesses import BankConflict
from .svg import CONTEXT, EDGE, FULL_COLS, FULL_ROWS, MAX_GRID_H, MAX_GRID_W, condense, esc
from .svg import _axis as svg_axis
from .svg import _col_gap as col_gap
from .svg import _row_gap as row_gap

CELL_W, CELL_H, MARGIN = 34, 18, 40
MAX_CELLS = 64 * 128  # cells drawn with their labels (more: colours only)
CONFLICT = "#d00000"
GROUP = "#0050c8"


def bank_colour(bank: int) -> str:
    """32 distinguishable fills: 8 hues x 4 lightnesses, neighbouring banks far apart in hue."""
    hue = (bank * 5) % 8 * 45
    light = (88, 80, 72, 64)[bank // 8]
    return _hsl(hue, 70, light)


def _hsl(h: int, s: int, lum: int) -> str:
    import colorsys
    r, g, b = colorsys.hls_to_rgb(h / 360, lum / 100, s / 100)
    return f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"


def needs_condensing(rows: int, cols: int) -> bool:
    """Whether a ``rows x cols`` tile is drawn condensed: more than ``FULL_COLS`` columns or ``FULL_ROWS`` rows, the
    fragment pictures' rule (``verify.outputs.svg``)."""
    return cols > FULL_COLS or rows > FULL_ROWS


def shared_svg(lay: SharedLayout, banks: Any = None, env: Mapping[str, int] | None = None,
               title: str | None = None, full: bool = False) -> str:
    """The tile of ``lay`` (a family: the member ``env``, default the first) as an SVG document; ``title``
    replaces the notation and text in the heading (a spec layout: its id and member).

    Swizzle atoms: the cell rectangles of ``lay.atom`` where the notation states them; else, when the swizzle
    is known, the borders between cells in different aligned blocks of the swizzle mode's atom bytes (the
    atom as memory holds it: 8 rows of the swizzle's width, 4 for 128B with 32B atomicity).  Cells that share
    an offset with another cell get a red border (without a bank-conflict witness to show).

    A tile of more than ``FULL_COLS`` columns or ``FULL_ROWS`` rows is condensed as a fragment picture is, unless
    ``full``: the cells in focus (the bank conflict's two cells and the worst group's, else the first cells that
    share an offset) with ``CONTEXT`` rows and columns around them, the first and last ``EDGE``, and as many
    leading ones as fit; every elided run is a marked gap, and a note says how to get every cell."""
    from ..layout.named import bindings
    env = dict(env or (bindings(lay.map)[0] if lay.params else {}))
    v = evaluate_all(lay.map, env)
    rows, cols = v.ok.shape
    offs = np.asarray(v.out["offset"], np.int64)
    ok = np.asarray(v.ok, bool)
    addr = lay.base + ((offs * lay.element_bits) >> 3)
    bank = (addr >> 2) % 32
    dup = _duplicates(offs, ok) if banks is None else set()
    focus = _focus(banks, offs, ok, dup)
    col_runs = [(0, cols)] if full or cols <= FULL_COLS else condense(cols, CELL_W, MAX_GRID_W, [c for _, c in focus])
    row_runs = [(0, rows)] if full or rows <= FULL_ROWS else condense(rows, CELL_H, MAX_GRID_H, [r for r, _ in focus])
    condensed = col_runs != [(0, cols)] or row_runs != [(0, rows)]
    top = MARGIN + 14 * (2 if condensed else 1)  # the lines above the grid: what it shows, the condensed note
    xs, col_gaps, grid_w = svg_axis(col_runs, cols, CELL_W, MARGIN)
    ys, row_gaps, grid_h = svg_axis(row_runs, rows, CELL_H, top)
    labels = len(xs) * len(ys) <= MAX_CELLS
    head = title if title is not None else _heading(lay)
    what = (f"{rows} x {cols}, {lay.element_bits}-bit elements, base {lay.base:#x}; cell = offset in elements, "
            "colour = bank of the byte address")
    note = ""
    if condensed:
        shown = []
        if len(xs) < cols:
            shown.append(f"{len(xs)} of {cols} columns")
        if len(ys) < rows:
            shown.append(f"{len(ys)} of {rows} rows")
        note = (f"condensed: {' and '.join(shown)} shown (the cells in focus with {CONTEXT} on each side, the first "
                f"and last {EDGE}); every cell: the same command with --full")
    W = max(2 * MARGIN + grid_w, MARGIN + 6 * max(len(what), len(note)) + 8, MARGIN + 8 * len(head) + 8)
    H = top + grid_h + MARGIN + 40
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
           'font-family="monospace" font-size="10">']
    out.append(f'<rect x="0" y="0" width="{W}" height="{H}" fill="#ffffff"/>')
    out.append(f'<text x="{MARGIN}" y="20" font-size="13" font-weight="bold">{esc(head)}</text>')
    out.append(f'<text x="{MARGIN}" y="36" fill="#444444">{esc(what)}</text>')
    if note:
        out.append(f'<text x="{MARGIN}" y="50" fill="#444444">{esc(note)}</text>')
    if labels:
        out.extend(f'<text x="{x + CELL_W // 2}" y="{top - 4}" text-anchor="middle">{c}</text>'
                   for c, x in sorted(xs.items()))
    for r, y in sorted(ys.items()):
        if labels:
            out.append(f'<text x="{MARGIN - 4}" y="{y + CELL_H - 5}" text-anchor="end">{r}</text>')
        for c, x in sorted(xs.items()):
            fill = bank_colour(int(bank[r, c])) if ok[r, c] else "#f2f2f2"
            out.append(f'<rect x="{x}" y="{y}" width="{CELL_W}" height="{CELL_H}" fill="{fill}" stroke="#ffffff"/>')
            if labels:
                text = str(int(offs[r, c])) if ok[r, c] else "-"
                out.append(f'<text x="{x + CELL_W // 2}" y="{y + CELL_H - 5}" text-anchor="middle">{text}</text>')
    for gx, lo, hi in col_gaps:
        col_gap(out.append, gx, top, grid_h, lo, hi)
    for gy, lo, hi in row_gaps:
        row_gap(out.append, MARGIN, gy, grid_w, lo, hi)
    if lay.atom:
        ar, ac = lay.atom
        rr, cc = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
        out.extend(_block_borders(np.where(ok, (rr // ar) * (cols + ac) + cc // ac, -1), xs, ys))
    elif lay.swizzle is not None:
        out.extend(_block_borders(_swizzle_blocks(addr, ok, lay.swizzle), xs, ys))
    if banks is not None:
        out.extend(_banks_marks(banks, xs, ys))
    else:
        out.extend(_cell_rect(int(r), int(c), xs, ys, CONFLICT, 2) for r, c in zip(*np.nonzero(ok))
                   if int(offs[r, c]) in dup and int(r) in ys and int(c) in xs)
    legend = _legend(banks) if (lay.atom or lay.swizzle is not None) else \
        _legend(banks).replace("; thick outline: a swizzle atom", "").replace("thick outline: a swizzle atom",
                                                                             "no swizzle stated")
    if dup:
        legend += "; red: a cell whose offset another cell has too"
    if condensed:
        legend += "; grey dashed band: rows or columns not shown"
    out.append(f'<text x="{MARGIN}" y="{top + grid_h + 24}">{esc(legend)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _heading(lay: SharedLayout) -> str:
    """The notation and the first line of its text (index code is many lines), at most 100 characters."""
    first = next((ln.strip() for ln in lay.text.splitlines() if ln.strip()), "")
    more = len([ln for ln in lay.text.splitlines() if ln.strip()]) > 1
    head = f"{lay.notation} {first}" + (" \u2026" if more else "")
    return head if len(head) <= 100 else head[:99] + "\u2026"


def _swizzle_blocks(addr: np.ndarray, ok: np.ndarray, swizzle: Any) -> np.ndarray:
    """Per cell, the aligned block of the swizzle mode's atom bytes its byte address lies in (-1: no cell)."""
    from ..layout.shared import mode_of_swizzle
    md = mode_of_swizzle(swizzle)
    size = md.atom_bytes if md is not None else max(16, swizzle.period)
    return np.where(ok, addr // size, -1)


def _block_borders(block: np.ndarray, xs: Mapping[int, int], ys: Mapping[int, int]) -> list[str]:
    """Thick segments between drawn neighbouring cells in different blocks, and around every drawn run (the edge of
    the tile or of an elided gap)."""
    out = []
    seg = 'stroke="#000000" stroke-width="2"/>'
    for r, y in ys.items():
        for c, x in xs.items():
            right = c + 1 not in xs or xs[c + 1] != x + CELL_W or block[r, c] != block[r, c + 1]
            below = r + 1 not in ys or ys[r + 1] != y + CELL_H or block[r, c] != block[r + 1, c]
            if right:
                out.append(f'<line x1="{x + CELL_W}" y1="{y}" x2="{x + CELL_W}" y2="{y + CELL_H}" {seg}')
            if below:
                out.append(f'<line x1="{x}" y1="{y + CELL_H}" x2="{x + CELL_W}" y2="{y + CELL_H}" {seg}')
            if c - 1 not in xs or xs[c - 1] != x - CELL_W:
                out.append(f'<line x1="{x}" y1="{y}" x2="{x}" y2="{y + CELL_H}" {seg}')
            if r - 1 not in ys or ys[r - 1] != y - CELL_H:
                out.append(f'<line x1="{x}" y1="{y}" x2="{x + CELL_W}" y2="{y}" {seg}')
    return out


def _duplicates(offs: np.ndarray, ok: np.ndarray) -> set[int]:
    """The offsets more than one placed cell has."""
    flat = offs[ok]
    if flat.size == 0:
        return set()
    u, cnt = np.unique(flat, return_counts=True)
    return set(u[cnt > 1].tolist())


def _focus(banks: Any, offs: np.ndarray, ok: np.ndarray, dup: set[int]) -> list[tuple[int, int]]:
    """The cells a condensed tile keeps in sight: the bank conflict's cells and the worst group's, else the first
    two cells that share an offset (row-major)."""
    if banks is not None:
        cells = [tuple(c) for c in ((banks.worst or {}).get("cells") or ())]
        chk = banks.get("conflict_free")
        if chk.status == "refuted" and isinstance(chk.counterexample, BankConflict):
            cells = [tuple(c) for c in chk.counterexample.cells] + cells
        return [(int(r), int(c)) for r, c in cells]
    if not dup:
        return []
    first = min(dup, key=lambda o: tuple(np.argwhere(ok & (offs == o))[0]))
    return [(int(r), int(c)) for r, c in np.argwhere(ok & (offs == first))[:2]]


def _cell_rect(r: int, c: int, xs: Mapping[int, int], ys: Mapping[int, int], colour: str, width: int) -> str:
    return (f'<rect x="{xs[c] + 1}" y="{ys[r] + 1}" width="{CELL_W - 2}" height="{CELL_H - 2}" fill="none" '
            f'stroke="{colour}" stroke-width="{width}"/>')


def _banks_marks(banks: Any, xs: Mapping[int, int], ys: Mapping[int, int]) -> list[str]:
    out: list[str] = []
    w = banks.worst
    if w:
        out.extend(_cell_rect(r, c, xs, ys, GROUP, 2) for r, c in w.get("cells", ()) if r in ys and c in xs)
    chk = banks.get("conflict_free")
    cex = chk.counterexample if chk.status == "refuted" else None
    if isinstance(cex, BankConflict):
        out.extend(_cell_rect(r, c, xs, ys, CONFLICT, 3) for r, c in cex.cells if r in ys and c in xs)
    return out


def _legend(banks: Any) -> str:
    if banks is None:
        return "thick outline: a swizzle atom"
    chk = banks.get("conflict_free")
    c = chk.counterexample
    if chk.status == "refuted" and isinstance(c, BankConflict):
        return (f"{banks.access.text}: red: lanes {c.lanes[0]} and {c.lanes[1]} at origin {c.origin} hit "
                f"bank {c.bank} in one wavefront group (degree {banks.degree}); thick outline: a swizzle atom")
    return f"{banks.access.text}: conflict-free; thick outline: a swizzle atom"


__all__ = ["bank_colour", "needs_condensing", "shared_svg"]
