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
from typing import Any, Iterable, Sequence

from ..layout.model import Layout

# CuTe's SVGColor_TV / TikzColor_TV: eight colours, chosen by thread index % 8.
PALETTE = ("#afafff", "#afffaf", "#ffffaf", "#ffafaf", "#d2d2ff", "#d2ffd2", "#ffffd2", "#ffd2d2")
COLLISION = "#d00000"
HIGHLIGHT = "#0050c8"
MAX_OUTSIDE_LINES = 24
COMPACT_CELLS = 4096
MAX_WIDTH = 1240  # computations are drawn side by side while they fit in this width  # above this many cells per grid, draw colours only (no labels)


def esc(text: object) -> str:
    """Escape text for XML/HTML content and attribute values."""
    return html.escape(str(text), quote=True)


def colour(lane: int) -> str:
    return PALETTE[lane % 8]


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


def fragment_svg(layout: Layout, entries: Sequence[dict[str, Any]], *, title: str | None = None,
                 highlight: Iterable[tuple[int, int, int]] = (),
                 highlight_elements: Iterable[tuple[int, int]] = (), uid: str = "f") -> str:
    """The SVG picture of ``layout`` from its table entries (``verify.render.table_entries``).

    ``highlight`` holds (group, row, col) cells to outline, ``highlight_elements`` (lane, i)
    pairs to emphasise in the list of elements outside the matrix; ``uid`` makes the ids inside
    the picture unique when several pictures are inlined into one HTML page.
    """
    hl = set(highlight)
    hl_el = set(highlight_elements)
    grids = _grids(layout, entries)
    compact = layout.rows * layout.cols > COMPACT_CELLS
    cw, ch = (12, 12) if compact else (56, 32)
    pad_left = 36  # row indices
    pat = f"hatch-{uid}"
    any_outside = any(outside for _, outside in grids)
    outside_w = 250 if any_outside else 0
    grid_w = layout.cols * cw
    grid_h = layout.rows * ch
    head_h = 36 if layout.groups > 1 else 18  # computation title + column indices
    max_outside = max((len(o) for _, o in grids), default=0)
    outside_h = 30 + 16 * (min(max_outside, MAX_OUTSIDE_LINES) + 1) if any_outside else 0
    block_w = pad_left + grid_w + (20 + outside_w if any_outside else 0) + 24
    block_h = head_h + max(grid_h, outside_h) + 16
    per_row = max(1, min(layout.groups, MAX_WIDTH // block_w))
    n_rows = -(-layout.groups // per_row)
    top = 48
    legend_h = 28
    width = max(8 + per_row * block_w, 600)
    height = top + n_rows * block_h + legend_h

    o: list[str] = []
    a = o.append
    a(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
      f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">')
    a("<defs>")
    a(f'<pattern id="{esc(pat)}" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">'
      '<rect width="6" height="6" fill="#e4e4e4"/><line x1="0" y1="0" x2="0" y2="6" stroke="#9a9a9a" stroke-width="2"/>'
      "</pattern>")
    a("</defs>")
    a(f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>')
    heading = title if title is not None else layout.id
    a(f'<text x="8" y="20" font-size="15" font-weight="bold">{esc(heading)}</text>')
    a(f'<text x="8" y="38" font-size="11" fill="#444444">{esc(_subtitle(layout))}</text>')

    step = 8 if compact else 1
    for g, (grid, outside) in enumerate(grids):
        bx = 8 + (g % per_row) * block_w
        by = top + (g // per_row) * block_h
        left = bx + pad_left
        gy = by + head_h
        if layout.groups > 1:
            a(f'<text x="{left}" y="{by + 14}" font-size="12" font-weight="bold">MMA computation {g + 1}</text>')
        for c in range(0, layout.cols, step):
            a(f'<text x="{left + c * cw + cw // 2}" y="{gy - 5}" font-size="10" text-anchor="middle" '
              f'fill="#666666">{c}</text>')
        for r in range(0, layout.rows, step):
            a(f'<text x="{left - 6}" y="{gy + r * ch + ch // 2 + 4}" font-size="10" text-anchor="end" '
              f'fill="#666666">{r}</text>')
        shared: list[tuple[int, int]] = []
        for r in range(layout.rows):
            for c in range(layout.cols):
                x, y = left + c * cw, gy + r * ch
                owners = grid.get((r, c))
                if not owners:
                    a(f'<rect x="{x}" y="{y}" width="{cw}" height="{ch}" fill="url(#{esc(pat)})" '
                      f'stroke="#888888" stroke-width="1"/>')
                    if not compact:
                        a(f'<text x="{x + cw // 2}" y="{y + ch // 2 + 4}" font-size="10" font-style="italic" '
                          f'text-anchor="middle" fill="#555555">empty</text>')
                    continue
                a(f'<rect x="{x}" y="{y}" width="{cw}" height="{ch}" fill="{colour(owners[0]["lane"])}" '
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
                    a(f'<text x="{x + cw // 2}" y="{y + 14}" font-size="9" font-weight="bold" '
                      f'text-anchor="middle" fill="{COLLISION}">{esc(first)}</text>')
                    a(f'<text x="{x + cw // 2}" y="{y + 26}" font-size="9" font-weight="bold" '
                      f'text-anchor="middle" fill="{COLLISION}">{esc(second)}</text>')
        # borders drawn after all cells, so neighbours do not paint over them
        for r, c in shared:
            names = ", ".join(_label(e) for e in grid[(r, c)])
            a(f'<rect x="{left + c * cw + 1}" y="{gy + r * ch + 1}" width="{cw - 2}" height="{ch - 2}" '
              f'fill="none" stroke="{COLLISION}" stroke-width="3"><title>{esc(f"({r}, {c}): {names}")}</title></rect>')
        for hg, r, c in sorted(hl):
            if hg == g and 0 <= r < layout.rows and 0 <= c < layout.cols:
                a(f'<rect x="{left + c * cw - 3}" y="{gy + r * ch - 3}" width="{cw + 6}" height="{ch + 6}" '
                  f'fill="none" stroke="{HIGHLIGHT}" stroke-width="2" stroke-dasharray="5,3"/>')
        a(f'<rect x="{left}" y="{gy}" width="{grid_w}" height="{grid_h}" fill="none" stroke="#000000" stroke-width="1"/>')
        if outside:
            ox = left + grid_w + 20
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
    y0 = top + n_rows * block_h

    # legend
    ly = y0 + 4
    a(f'<text x="8" y="{ly + 10}" font-size="11">lane % 8:</text>')
    for k, col in enumerate(PALETTE):
        a(f'<rect x="{64 + 26 * k}" y="{ly}" width="22" height="14" fill="{col}" stroke="#555555" stroke-width="1"/>')
        a(f'<text x="{75 + 26 * k}" y="{ly + 11}" font-size="10" text-anchor="middle">{k}</text>')
    lx = 64 + 26 * 8 + 16
    a(f'<rect x="{lx}" y="{ly}" width="22" height="14" fill="#ffffff" stroke="{COLLISION}" stroke-width="3"/>')
    a(f'<text x="{lx + 28}" y="{ly + 11}" font-size="11">several owners</text>')
    lx += 130
    a(f'<rect x="{lx}" y="{ly}" width="22" height="14" fill="url(#{esc(pat)})" stroke="#888888" stroke-width="1"/>')
    a(f'<text x="{lx + 28}" y="{ly + 11}" font-size="11">no owner</text>')
    if hl or hl_el:
        lx += 90
        a(f'<rect x="{lx}" y="{ly}" width="22" height="14" fill="none" stroke="{HIGHLIGHT}" stroke-width="2" '
          f'stroke-dasharray="5,3"/>')
        a(f'<text x="{lx + 28}" y="{ly + 11}" font-size="11" fill="{HIGHLIGHT}">counterexample</text>')
    a("</svg>")
    return "\n".join(o) + "\n"


def _subtitle(layout: Layout) -> str:
    per = f"{layout.threads} threads x {layout.n_elements} elements"
    grid = f"{layout.rows} x {layout.cols}"
    if layout.groups > 1:
        grid += f" per MMA computation, {layout.groups} computations"
    return f"{grid}, {per}; cell = T<lane> / element"


def summary_counts(layout: Layout, entries: Sequence[dict[str, Any]]) -> dict[str, int]:
    """Shared cells, empty cells and elements outside the matrix, over all computations."""
    shared = empty = outside = 0
    for grid, out in _grids(layout, entries):
        shared += sum(1 for v in grid.values() if len(v) > 1)
        empty += layout.rows * layout.cols - len(grid)
        outside += len(out)
    return {"shared": shared, "empty": empty, "outside": outside}
