"""The kernel counterexample picture (``ptx-verify kernel ... --svg FILE``): the output tensor as a grid, every
element coloured by what the verdict says of it, the first wrong element outlined with its chain beside it.

* green: exactly its einsum sum, each product once (the cell names the thread that wrote it, ``T<thread>`` of its
  CTA); red: wrong (the cell shows what it holds: its first wrong product, ``A[1,8]`` over ``xB[0,0]``, or what it
  lacks); orange: its value exact but written more than once; hatched grey: never written; purple: the first
  write out of bounds, drawn where the element would be if the tensor went on (a row past the end), else named;
* thick lines: the borders between the tiles of different CTAs (the CTA that wrote each element);
* the first wrong element (else the first never written, else the first written twice) outlined in dashed blue,
  and beside the grid its finding, its chain (the store, the ``mma`` with warp, lane and register, the
  ``ldmatrix`` / ``cp.async`` / loads, each with its PTX line and the kernel's source line) and the other findings;
* a legend with every verdict's count.

A grid wider than 1400 px with the chain beside it, or of more than 128 rows, is condensed as the fragment pictures
are (``verify.outputs.svg``): the first element outlined and the first of each other verdict with 2 rows and
columns of context, the first and last 2, then rows and columns holding wrong elements, then leading ones; elided
runs are grey dashed bands.  ``full``: every cell (above 4096 cells colours only).  An output of one dimension is
wrapped in rows of 32; of more than two, one grid per leading index (at most 4: the outlined element's first).

Hand-written XML, integer coordinates, fixed attribute order: the same result gives the same bytes.
"""
from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..kernel.cells import EXACT, NEVER, TWICE, WRONG, OutputCells
from ..kernel.result import Finding, KernelResult
from .kernel import _name, _src
from .svg import COMPACT_CELLS, CONTEXT, EDGE, GAP_FILL, HIGHLIGHT, MAX_GRID_H, MIN_FONT, condense, esc
from .svg import _axis as svg_axis
from .svg import _col_gap as col_gap
from .svg import _row_gap as row_gap

FONT = "DejaVu Sans Mono, monospace"
CHAR = 0.62  # the advance of a monospace character, in em (DejaVu Sans Mono: 0.602)
CELL_H = 30
MARGIN = 44  # row indices
SCREEN = 1240  # the whole picture, chain beside the grid, fits this width (a first screen), else the grid is condensed
NOTE_CHARS = 150  # the lines above the grid are wrapped at this many characters
PANEL_CHARS = 58  # the chain's lines are wrapped at this many characters
PANEL_GAP = 28
WRAP = 32  # an output of one dimension: elements per row
MAX_PANELS = 4
MAX_FINDING_LINES = 4
FILLS = {EXACT: "#c8f0c8", WRONG: "#ffb4b4", TWICE: "#ffd28c"}
OOB_FILL = "#d8b4ff"
RED = "#d00000"
TILE = "#000000"


def _w(text: str, size: int) -> int:
    """The width ``text`` takes at ``size`` px in the picture's monospace font (rounded up)."""
    return math.ceil(len(text) * size * CHAR)


def _wrap(text: str, width: int, indent: str = "", first: str = "") -> list[str]:
    """``text`` in lines of at most ``width`` characters, broken at spaces but not inside brackets (``A[1, 8]``
    stays whole); the first line starts with ``first``, the next ones with ``indent``.  A word longer than a line
    is cut."""
    out: list[str] = []
    line = first
    for word in re.findall(r"(?:[^\s\[]|\[[^\]]*\])+", text):
        lead = indent if out else first
        while len(lead) + len(word) > width:
            if line.strip():
                out.append(line)
            lead = indent
            cut = width - len(lead)
            out.append(lead + word[:cut])
            word = word[cut:]
            line = indent
        trial = f"{line} {word}" if line.strip() else line + word
        if len(trial) > width:
            out.append(line)
            line = indent + word
        else:
            line = trial
    if line.strip():
        out.append(line)
    return out


class _View:
    """The output as panels of rows x columns: flat element index of (panel, row, col), None past the end."""

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape = shape
        size = math.prod(shape)
        if len(shape) <= 1:
            n = shape[0] if shape else 1
            self.cols = max(1, min(n, WRAP))
            self.rows = -(-n // self.cols)
            self.panels: list[tuple[int, ...]] = [()]
            self.wrapped = len(shape) == 1 and n > WRAP
        else:
            self.rows, self.cols = shape[-2], shape[-1]
            self.panels = [tuple(int(i) for i in p) for p in np.ndindex(*shape[:-2])] if len(shape) > 2 else [()]
            self.wrapped = False
        self.size = size

    def flat(self, panel: tuple[int, ...], r: int, c: int) -> int | None:
        if len(self.shape) <= 1:
            k = r * self.cols + c
            return k if k < self.size else None
        return int(np.ravel_multi_index(panel + (r, c), self.shape))

    def where(self, flat: int) -> tuple[tuple[int, ...], int, int]:
        if len(self.shape) <= 1:
            return (), flat // self.cols, flat % self.cols
        idx = tuple(int(i) for i in np.unravel_index(flat, self.shape))
        return idx[:-2], idx[-2], idx[-1]

    def row_label(self, r: int) -> str:
        return str(r * self.cols) if self.wrapped else str(r)


def _pick(n: int, size: int, budget: int, focus: Sequence[int]) -> list[tuple[int, int]]:
    """The runs of rows or columns drawn (``verify.outputs.svg.condense``): all when they fit in ``budget`` px; else
    the first and last ``EDGE``, ``CONTEXT`` around each focus index, then the ones after the first focus (nearest
    first), then those before it, while they fit: the outlined element stays near the top (left) of the picture,
    with what follows it in sight."""
    f0 = focus[0] if focus else 0
    return condense(n, size, budget, focus, sorted(range(n), key=lambda k: (0, k - f0) if k > f0 else (1, f0 - k)))


def _outlined(cells: OutputCells) -> tuple[int | None, str]:
    """The element outlined (flat) and its verdict's finding kind: the first wrong, else never written, else twice."""
    flat = cells.verdicts.reshape(-1)
    for code, kind in ((WRONG, "wrong_element"), (NEVER, "never_written"), (TWICE, "written_twice")):
        hit = np.flatnonzero(flat == code)
        if len(hit):
            return int(hit[0]), kind
    return None, ""


def _finding(result: KernelResult, kind: str) -> Finding | None:
    return next((f for f in result.findings if f.kind == kind), None)


def _panel(result: KernelResult, cells: OutputCells, outlined: int | None, kind: str) -> list[tuple[str, str]]:
    """The lines beside the grid, each (text, style): ``head`` (the outlined element), ``bold``, ``red``, ``text``."""
    lines: list[tuple[str, str]] = []
    if outlined is not None:
        f = _finding(result, kind)
        idx = tuple(int(i) for i in np.unravel_index(outlined, cells.shape))
        n = cells.count({"wrong_element": "wrong", "never_written": "never written",
                         "written_twice": "written twice"}[kind])
        what = kind.replace("_element", "").replace("_", " ")
        lines.append((f"{cells.name(idx)}: {what}" + (f" (the first of {n})" if n > 1 else ""), "head"))
        words = f.words if f is not None else ""
        wrapped = _wrap(words, PANEL_CHARS)
        if len(wrapped) > MAX_FINDING_LINES:
            wrapped = wrapped[:MAX_FINDING_LINES - 1] + [wrapped[MAX_FINDING_LINES - 1][:PANEL_CHARS - 1] + "\u2026"]
        lines.extend((w, "text") for w in wrapped)
        if f is not None and f.chain:
            lines.append(("", "text"))
            lines.append(("the chain that made it:", "bold"))
            for k, link in enumerate(f.chain):
                head = f"{'' if k == 0 else '<- '}{link.opcode} at line {link.line}{_src(link.source)}"
                lines.extend((w, "bold") for w in _wrap(head, PANEL_CHARS, "   "))
                lines.extend((w, "text") for w in _wrap(link.words, PANEL_CHARS, "   ", "   "))
    others = [f for f in result.findings if f.kind != kind or outlined is None]
    if others:
        lines.append(("", "text"))
        lines.append(("other findings:" if outlined is not None else "findings:", "bold"))
        for f in others:
            more = f" ({f.count} such)" if f.count > 1 else ""
            head = f"{f.kind.replace('_', ' ')}{more}: " + (f"{f.element}: " if f.element else "")
            where = f", line {f.line}" if f.line and not f.element else ""
            body = _wrap(head + f.words + where, PANEL_CHARS, "   ")
            if len(body) > MAX_FINDING_LINES:
                body = body[:MAX_FINDING_LINES - 1] + [body[MAX_FINDING_LINES - 1][:PANEL_CHARS - 1] + "\u2026"]
            lines.extend((w, "red" if k == 0 else "text") for k, w in enumerate(body))
    return lines


def _runs_where(first: Sequence[int], second: Sequence[int], differ: Callable[[int, int], bool]
                ) -> list[tuple[int, int, int]]:
    """(a + 1, b0, b1): for each drawn ``a`` whose next index is drawn too, the runs ``b0..b1`` of consecutive
    drawn ``second`` indices where ``differ(a, b)``."""
    out = []
    for a, a2 in zip(first, first[1:]):
        if a2 != a + 1:
            continue
        run: list[int] = []
        for b in second:
            if differ(a, b) and run and run[-1] + 1 == b:
                run.append(b)
                continue
            if run:
                out.append((a2, run[0], run[-1]))
            run = [b] if differ(a, b) else []
        if run:
            out.append((a2, run[0], run[-1]))
    return out


def _borders(block: Callable[[int, int], int], xs: dict[int, int], ys: dict[int, int], cw: int, ch: int,
             left: int, top: int) -> list[str]:
    """Thick lines between neighbouring drawn cells that different CTAs wrote (runs merged; a cell nothing wrote
    meets no tile)."""
    def differ(a: int, b: int) -> bool:
        return a >= 0 and b >= 0 and a != b
    seg = f'stroke="{TILE}" stroke-width="2"/>'
    rows, cols = sorted(ys), sorted(xs)
    out = [f'<line x1="{left + xs[c]}" y1="{top + ys[r0]}" x2="{left + xs[c]}" y2="{top + ys[r1] + ch}" {seg}'
           for c, r0, r1 in _runs_where(cols, rows, lambda c, r: differ(block(r, c), block(r, c + 1)))]
    out += [f'<line x1="{left + xs[c0]}" y1="{top + ys[r]}" x2="{left + xs[c1] + cw}" y2="{top + ys[r]}" {seg}'
            for r, c0, c1 in _runs_where(rows, cols, lambda r, c: differ(block(r, c), block(r + 1, c)))]
    return out


@dataclass(frozen=True)
class _OutOfBounds:
    """Where the first access out of bounds is drawn: its index, in a strip below the grid (``row``: a row past the
    end) or to its right (``col``: a column past the end); ``at`` is None when it is not drawn in place."""
    at: tuple[int, ...] | None
    row: bool
    col: bool


@dataclass(frozen=True)
class _Grid:
    """The grids' geometry: the panels drawn, the rows and columns shown (index -> offset), the elided runs between
    them, the cell size, and whether every cell is shown as colours only or the grid is condensed."""
    drawn: list[tuple[int, ...]]
    xs: dict[int, int]
    ys: dict[int, int]
    col_gaps: list
    row_gaps: list
    grid_w: int
    grid_h: int
    cw: int
    ch: int
    compact_all: bool
    condensed: bool


def _drawn_panels(view: _View, verd: np.ndarray, outlined: int | None) -> list[tuple[int, ...]]:
    """The panels drawn: the outlined element's first, then those with findings, then in order (``MAX_PANELS``)."""
    panels = view.panels
    if len(panels) > 1:
        bad = (verd.reshape(len(panels), -1) != EXACT).any(axis=1)
        lead = view.where(outlined)[0] if outlined is not None else None
        panels = [panels[k] for k in sorted(range(len(panels)), key=lambda k: (panels[k] != lead, not bad[k], k))]
    return panels[:MAX_PANELS]


def _out_of_bounds(cells: OutputCells) -> _OutOfBounds:
    """Where ``cells``' first access out of bounds is drawn, if it is one row or one column past a 2-D tensor."""
    oob = cells.out_of_bounds
    oob_at = oob.index if oob is not None and oob.index is not None and len(cells.shape) == 2 else None
    oob_row = oob_at is not None and oob_at[0] >= cells.shape[0] and 0 <= oob_at[1] < cells.shape[1]
    oob_col = oob_at is not None and not oob_row and oob_at[1] >= cells.shape[1] and 0 <= oob_at[0] < cells.shape[0]
    return _OutOfBounds(oob_at, oob_row, oob_col)


def _grid(cells: OutputCells, view: _View, outlined: int | None, oob: _OutOfBounds, full: bool,
          beside: int) -> _Grid:
    """The grids' geometry: the cell size from the longest label, the rows and columns that fit beside ``beside``
    px of chain (the focus elements and the out-of-bounds strip kept in sight), or all of them when ``full``."""
    verd = cells.verdicts.reshape(-1)
    thread = cells.thread.reshape(-1)
    drawn = _drawn_panels(view, verd, outlined)
    compact_all = full and view.rows * view.cols * len(drawn) > COMPACT_CELLS
    focus_flat = [k for k in (outlined, *(int(np.flatnonzero(verd == v)[0]) for v in (NEVER, TWICE)
                                          if (verd == v).any())) if k is not None]
    focus = [view.where(k) for k in focus_flat if view.where(k)[0] in drawn]
    focus_rows = [r for _, r, _ in focus] + ([view.rows - 1] if oob.row else [])
    focus_cols = [c for _, _, c in focus] + ([int(oob.at[1])] if oob.row and oob.at is not None else []) + \
        ([view.cols - 1] if oob.col else [])
    if oob.col and oob.at is not None:
        focus_rows.append(int(oob.at[0]))
    written = thread[thread >= 0]
    longest = max([len(h.first) for h in cells.holdings.values()] + [len(h.second) for h in cells.holdings.values()]
                  + [len(f"T{int(written.max())}") if len(written) else 0, len("never"), 3])
    cw, ch = (12, 12) if compact_all else (max(30, math.ceil(longest * 10 * CHAR) + 10), CELL_H)
    budget = SCREEN - 24 - MARGIN - beside
    budget = max(budget, 10 * cw)
    col_runs = [(0, view.cols)] if full else _pick(view.cols, cw, budget, focus_cols)
    row_runs = [(0, view.rows)] if full else _pick(view.rows, ch, max(8 * ch, MAX_GRID_H // len(drawn)), focus_rows)
    condensed = col_runs != [(0, view.cols)] or row_runs != [(0, view.rows)]
    xs, col_gaps, grid_w = svg_axis(col_runs, view.cols, cw, 0)
    ys, row_gaps, grid_h = svg_axis(row_runs, view.rows, ch, 0)
    return _Grid(drawn, xs, ys, col_gaps, row_gaps, grid_w, grid_h, cw, ch, compact_all, condensed)


def _notes(result: KernelResult, cells: OutputCells, view: _View, grid: _Grid) -> list[str]:
    """The lines under the title (wrapped): what the kernel computes, what a cell says, what is left out."""
    verd = cells.verdicts.reshape(-1)
    xs, ys, drawn = grid.xs, grid.ys, grid.drawn
    grid_txt = "x".join(str(x) for x in result.grid)
    block_txt = "x".join(str(x) for x in result.block)
    dims = " x ".join(str(n) for n in cells.shape) or "1"
    sub1 = f"{result.computes}; grid {grid_txt}, block {block_txt}; {cells.tensor}: {cells.type} {dims}"
    shape_words = "[row * 32 + col]" if view.wrapped else ("[..., row, col]" if len(cells.shape) > 2 else "[row, col]")
    sub2 = (f"cell = {cells.tensor}{shape_words}: the thread that wrote it (T<thread> in its CTA), or what a wrong "
            "element holds (its first wrong product)")
    notes = [sub1, sub2]
    if grid.condensed:
        shown = []
        if len(xs) < view.cols:
            shown.append(f"{len(xs)} of {view.cols} columns")
        if len(ys) < view.rows:
            shown.append(f"{len(ys)} of {view.rows} rows")
        bad_total = int((verd != EXACT).sum())
        in_sight = sum(1 for p in drawn for r in ys for c in xs
                       if (k := view.flat(p, r, c)) is not None and verd[k] != EXACT)
        sight = "every element that is not exact is in sight" if in_sight == bad_total else \
            f"{in_sight} of the {bad_total} elements that are not exact are in sight"
        notes.append(f"condensed: {' and '.join(shown)} shown: the outlined element with {CONTEXT} on each side and what "
                     f"follows it, the first and last {EDGE}; {sight}; every cell: the same command with --full")
    if len(drawn) < len(view.panels):
        notes.append(f"{len(drawn)} of {len(view.panels)} grids drawn (one per leading index)")
    elif grid.compact_all:
        notes.append("every cell, colours only (more than 4096 cells)")
    return [w for n in notes for w in _wrap(n, NOTE_CHARS, "  ")]


def _grid_cells(cells: OutputCells, view: _View, grid: _Grid, p: tuple[int, ...], left: int, gy: int,
                outlined: int | None) -> tuple[list[str], list[str]]:
    """The cells of panel ``p``'s grid at (``left``, ``gy``), with their labels and tips, and the dashed outline of
    the outlined element (drawn last, over the borders)."""
    verd = cells.verdicts.reshape(-1)
    cw, ch = grid.cw, grid.ch
    labels = not grid.compact_all
    o: list[str] = []
    a = o.append
    outline: list[str] = []
    for r, y0 in sorted(grid.ys.items()):
        for c, x0 in sorted(grid.xs.items()):
            k = view.flat(p, r, c)
            if k is None:
                continue
            x, y = left + x0, gy + y0
            v = int(verd[k])
            fill = "url(#hatch-kernel)" if v == NEVER else FILLS[v]
            title_el = f"<title>{esc(_tip(cells, k))}</title>" if labels or v != EXACT else ""
            a(f'<rect x="{x}" y="{y}" width="{cw}" height="{ch}" fill="{fill}" stroke="#ffffff">{title_el}</rect>')
            if labels:
                one, two = _label(cells, k)
                colour = RED if v == WRONG else "#555555" if v == NEVER else "#000000"
                style = ' font-style="italic"' if v == NEVER else ""
                if two:
                    a(f'<text x="{x + cw // 2}" y="{y + 13}" text-anchor="middle" fill="{colour}">{esc(one)}</text>')
                    a(f'<text x="{x + cw // 2}" y="{y + 25}" text-anchor="middle" fill="{colour}">{esc(two)}</text>')
                else:
                    a(f'<text x="{x + cw // 2}" y="{y + ch // 2 + 4}" text-anchor="middle" fill="{colour}"{style}>'
                      f'{esc(one)}</text>')
            if k == outlined:
                outline.append(f'<rect x="{x - 3}" y="{y - 3}" width="{cw + 6}" height="{ch + 6}" fill="none" '
                               f'stroke="{HIGHLIGHT}" stroke-width="2" stroke-dasharray="5,3"/>')
    return o, outline


def _oob_cell(cells: OutputCells, oob: _OutOfBounds, grid: _Grid, left: int, gy: int) -> list[str]:
    """The cell of the first access out of bounds, drawn past the grid at (``left``, ``gy``), with its words."""
    assert cells.out_of_bounds is not None and oob.at is not None
    cw, ch = grid.cw, grid.ch
    o: list[str] = []
    a = o.append
    words = f"{cells.name(oob.at)}: the first of {cells.out_of_bounds.count} accesses out of bounds, line " \
        f"{cells.out_of_bounds.line}"
    if oob.row:
        x, y = left + grid.xs[int(oob.at[1])], gy + grid.grid_h + 8
        a(f'<text x="{left - 6}" y="{y + ch // 2 + 4}" text-anchor="end" fill="#666666">{oob.at[0]}</text>')
    else:
        x, y = left + grid.grid_w + 8, gy + grid.ys[int(oob.at[0])]
    a(f'<rect x="{x}" y="{y}" width="{cw}" height="{ch}" fill="{OOB_FILL}" stroke="{RED}" stroke-width="2">'
      f'<title>{esc(words + ": " + cells.out_of_bounds.words)}</title></rect>')
    a(f'<text x="{x + cw // 2}" y="{y + ch // 2 + 4}" text-anchor="middle">'
      f'{"outside" if _w("outside", 10) + 4 <= cw else "out"}</text>')
    if oob.row:
        a(f'<text x="{left}" y="{y + ch + 13}" font-size="11" fill="{RED}">{esc(words)}</text>')
    return o


def _grid_panel(cells: OutputCells, view: _View, grid: _Grid, pi: int, by: int, cap_h: int, left: int,
                outlined: int | None, oob: _OutOfBounds) -> list[str]:
    """The ``pi``-th drawn grid at (``left``, ``by``): its caption, indices, cells, CTA borders, elided runs, frame,
    the out-of-bounds cell (first grid only) and the outline."""
    p = grid.drawn[pi]
    cw, ch = grid.cw, grid.ch
    cta = cells.cta.reshape(-1)
    ctas = {int(x) for x in np.unique(cta) if x >= 0}
    o: list[str] = []
    a = o.append
    gy = by + cap_h + 16
    if cap_h:
        cap = ", ".join(str(i) for i in p)
        a(f'<text x="{left}" y="{by + 13}" font-size="11" font-weight="bold">'
          f'{esc(f"{cells.tensor}[{cap}, row, col]")}</text>')
    step = 8 if grid.compact_all else 1
    for c, x in sorted(grid.xs.items()):
        if c % step == 0:
            a(f'<text x="{left + x + cw // 2}" y="{gy - 5}" text-anchor="middle" fill="#666666">{c}</text>')
    for r, y in sorted(grid.ys.items()):
        if r % step == 0:
            a(f'<text x="{left - 6}" y="{gy + y + ch // 2 + 4}" text-anchor="end" fill="#666666">'
              f'{esc(view.row_label(r))}</text>')
    drawn_cells, outline = _grid_cells(cells, view, grid, p, left, gy, outlined)
    o.extend(drawn_cells)

    def block(r: int, c: int) -> int:
        k = view.flat(p, r, c)
        return -2 if k is None else int(cta[k])
    if len(ctas) > 1:
        o.extend(_borders(block, grid.xs, grid.ys, cw, ch, left, gy))
    for gx, lo, hi in grid.col_gaps:
        col_gap(a, left + gx, gy, grid.grid_h, lo, hi)
    for gyy, lo, hi in grid.row_gaps:
        row_gap(a, left, gy + gyy, grid.grid_w, lo, hi)
    a(f'<rect x="{left}" y="{gy}" width="{grid.grid_w}" height="{grid.grid_h}" fill="none" stroke="#000000"/>')
    if pi == 0 and cells.out_of_bounds is not None and oob.at is not None and (oob.row or oob.col):
        o.extend(_oob_cell(cells, oob, grid, left, gy))
    o.extend(outline)
    return o


def _side_panel(panel: Sequence[tuple[str, str]], x: int, y: int) -> list[str]:
    """The lines beside the grid (``_panel``) at (``x``, ``y``), each in its style."""
    o: list[str] = []
    for k, (text, style) in enumerate(panel):
        if not text:
            continue
        attrs = {"head": f' font-size="11" font-weight="bold" fill="{HIGHLIGHT}"',
                 "bold": ' font-size="11" font-weight="bold"', "red": f' font-size="11" fill="{RED}"',
                 "text": ' font-size="11"'}[style]
        indent = len(text) - len(text.lstrip(" "))
        o.append(f'<text x="{x + _w(" " * indent, 11)}" y="{y + 11 + 15 * k}"{attrs}>{esc(text.lstrip(" "))}'
                 '</text>')
    return o


def kernel_svg(result: KernelResult, full: bool = False) -> str:
    """The picture of ``result`` (``api.verify_kernel``'s ``KernelResult``, with its ``cells``); see the module
    docstring."""
    cells = result.cells
    if cells is None:
        raise ValueError("this KernelResult has no cells (what the verdict says of each output element) to draw")
    view = _View(cells.shape)
    cta = cells.cta.reshape(-1)
    outlined, kind = _outlined(cells)
    panel = _panel(result, cells, outlined, kind) if result.findings else []
    panel_w = max([_w(t, 11) for t, _ in panel] + [0]) + 8 if panel else 0
    oob = _out_of_bounds(cells)
    grid = _grid(cells, view, outlined, oob, full, (PANEL_GAP + panel_w) if panel else 0)
    drawn, ys, ch = grid.drawn, grid.ys, grid.ch

    title = f"kernel {_name(result.kernel)} ({os.path.basename(result.ptx)}): {result.status}"
    notes = _notes(result, cells, view, grid)
    ctas = {int(x) for x in np.unique(cta) if x >= 0}
    legend = _legend(cells, outlined is not None, bool(panel), len(ctas) > 1, grid.condensed)
    cap_h = 18 if len(view.panels) > 1 else 0
    strip_h = (ch + 22) if oob.row else 0
    strip_w = (grid.cw + 14) if oob.col else 0
    grid_left = 8 + MARGIN
    width = max(grid_left + grid.grid_w + strip_w + (PANEL_GAP + panel_w if panel else 0) + 16, 720,
                16 + _w(title, 14), 16 + max(_w(n, 11) for n in notes))
    items: list[tuple[int, int, str, str]] = []
    lx, ly = 8, 32 + 14 * len(notes)
    for fill, text in legend:
        w = 22 + _w(text, 11) + 18
        if lx > 8 and lx + w > width - 8:
            lx, ly = 8, ly + 20
        items.append((lx, ly, fill, text))
        lx += w
    top = ly + 30
    block_h = cap_h + 16 + grid.grid_h + strip_h + 12
    panel_x = grid_left + grid.grid_w + strip_w + PANEL_GAP
    heights = [top + len(drawn) * block_h]
    panel_y = top + cap_h + 16
    if outlined is not None and view.where(outlined)[0] == drawn[0] and view.where(outlined)[1] in ys:
        panel_y += max(0, ys[view.where(outlined)[1]] - 4)
    if panel:
        heights.append(panel_y + 15 * len(panel) + 12)
    height = max(heights) + 8

    o: list[str] = []
    a = o.append
    a(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
      f'font-family="{FONT}" font-size="{MIN_FONT}">')
    a("<defs>")
    a('<pattern id="hatch-kernel" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">'
      '<rect width="6" height="6" fill="#e4e4e4"/><line x1="0" y1="0" x2="0" y2="6" stroke="#9a9a9a" '
      'stroke-width="2"/></pattern>')
    a("</defs>")
    a(f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>')
    status_fill = RED if result.status != "proved" else "#006000"
    a(f'<text x="8" y="20" font-size="14" font-weight="bold" fill="{status_fill}">{esc(title)}</text>')
    for k, n in enumerate(notes):
        a(f'<text x="8" y="{38 + 14 * k}" font-size="11" fill="#444444">{esc(n)}</text>')
    for pi in range(len(drawn)):
        o.extend(_grid_panel(cells, view, grid, pi, top + pi * block_h, cap_h, grid_left, outlined, oob))
    if panel:
        o.extend(_side_panel(panel, panel_x, panel_y))
    _draw_legend(a, items)
    a("</svg>")
    return "\n".join(o) + "\n"


def _label(cells: OutputCells, k: int) -> tuple[str, str]:
    """The two lines of element ``k``'s cell (flat index): its writer, or what a wrong element holds."""
    v = int(cells.verdicts.flat[k])
    if v == NEVER:
        return "never", ""
    if v == WRONG:
        h = cells.holdings.get(k)
        return (h.first, h.second) if h is not None else ("wrong", "")
    return f"T{int(cells.thread.flat[k])}", (f"\u00d7{int(cells.writes.flat[k])}" if v == TWICE else "")


def _tip(cells: OutputCells, k: int) -> str:
    """Element ``k``'s tooltip: its name, what the verdict says of it, who wrote it last."""
    idx = tuple(int(i) for i in np.unravel_index(k, cells.shape))
    v = int(cells.verdicts.flat[k])
    n = int(cells.writes.flat[k])
    who = cells.writer(idx)
    by = f" (last written by CTA ({', '.join(map(str, who[0]))}), thread {who[1]})" if who else ""
    h = cells.holdings.get(k)
    what = {EXACT: "exactly its sum", TWICE: f"written {n} times, its value exact", NEVER: "never written",
            WRONG: "wrong: " + (h.words if h is not None else "") + (f"; written {n} times" if n > 1 else "")}[v]
    return f"{cells.name(idx)}: {what}{by}"


def _legend(cells: OutputCells, outlined: bool, chain: bool, tiles: bool, condensed: bool) -> list[tuple[str, str]]:
    """The legend's entries (swatch, words): every verdict with its count, then the marks the picture has."""
    verd = cells.verdicts
    oob = cells.out_of_bounds
    out = [(FILLS[EXACT], f"exactly its sum ({int((verd == EXACT).sum())})"),
           (FILLS[WRONG], f"wrong: what it holds ({int((verd == WRONG).sum())})"),
           (FILLS[TWICE], f"written twice, value exact ({int((verd == TWICE).sum())})"),
           ("hatch", f"never written ({int((verd == NEVER).sum())})"),
           (OOB_FILL, f"out of bounds ({oob.count if oob is not None else 0} accesses)")]
    if outlined:
        out.append(("outline", "counterexample (its chain beside the grid)" if chain else "counterexample"))
    if tiles:
        out.append(("tile", "thick line: where one CTA's tile meets another's"))
    if condensed:
        out.append(("gap", "not shown (elided)"))
    return out


def _draw_legend(a: Callable[[str], None], items: Sequence[tuple[int, int, str, str]]) -> None:
    for x, y, fill, text in items:
        if fill == "hatch":
            a(f'<rect x="{x}" y="{y}" width="22" height="14" fill="url(#hatch-kernel)" stroke="#888888"/>')
        elif fill == "outline":
            a(f'<rect x="{x}" y="{y}" width="22" height="14" fill="none" stroke="{HIGHLIGHT}" stroke-width="2" '
              'stroke-dasharray="5,3"/>')
        elif fill == "tile":
            a(f'<line x1="{x + 11}" y1="{y}" x2="{x + 11}" y2="{y + 14}" stroke="{TILE}" stroke-width="2"/>')
        elif fill == "gap":
            a(f'<rect x="{x}" y="{y}" width="22" height="14" fill="{GAP_FILL}" stroke="#999999" '
              'stroke-dasharray="3,2"/>')
        else:
            a(f'<rect x="{x}" y="{y}" width="22" height="14" fill="{fill}" stroke="#555555"/>')
        colour = f' fill="{HIGHLIGHT}"' if fill == "outline" else ""
        a(f'<text x="{x + 28}" y="{y + 11}" font-size="11"{colour}>{esc(text)}</text>')


__all__ = ["kernel_svg"]
