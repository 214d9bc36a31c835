"""Shared-memory pictures: a tile drawn as CuTe draws swizzled layouts (``print_latex`` of a
``ComposedLayout``): every cell (row, col) shows its offset, cells are coloured by the bank of their byte
address (32 colours), swizzle atoms are outlined, and a bank-conflict witness is marked (the two lanes'
cells in red, the worst wavefront group's cells outlined in blue).

Hand-written XML, integer coordinates, fixed attribute order: the same input gives the same bytes.
Tiles above ``MAX_CELLS`` cells draw colours only (no labels).
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ..layout.named import evaluate_all
from ..layout.shared import SharedLayout
from ..witnesses import BankConflict
from .svg import esc

CELL_W, CELL_H, MARGIN = 34, 18, 40
MAX_CELLS = 64 * 128
CONFLICT = "#d00000"
GROUP = "#0050c8"


def bank_colour(bank: int) -> str:
    """32 distinguishable fills: 8 hues x 4 lightnesses, neighbouring banks far apart in hue."""
    hue = (bank * 5) % 8 * 45
    light = (88, 80, 72, 64)[bank // 8]
    return _hsl(hue, 70, light)


def _hsl(h: int, s: int, lum: int) -> str:
    import colorsys  # noqa: PLC0415
    r, g, b = colorsys.hls_to_rgb(h / 360, lum / 100, s / 100)
    return f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"


def shared_svg(lay: SharedLayout, banks: Any = None, env: Mapping[str, int] | None = None,
               title: str | None = None) -> str:
    """The tile of ``lay`` (a family: the member ``env``, default the first) as an SVG document; ``title``
    replaces the notation and text in the heading (a spec layout: its id and member).

    Swizzle atoms: the cell rectangles of ``lay.atom`` where the notation states them; else, when the swizzle
    is known, the borders between cells in different aligned blocks of the swizzle mode's atom bytes (the
    atom as memory holds it: 8 rows of the swizzle's width, 4 for 128B with 32B atomicity).  Cells that share
    an offset with another cell get a red border (without a bank-conflict witness to show)."""
    from ..layout.named import bindings  # noqa: PLC0415
    env = dict(env or (bindings(lay.map)[0] if lay.params else {}))
    v = evaluate_all(lay.map, env)
    rows, cols = v.ok.shape
    offs = np.asarray(v.out["offset"], np.int64)
    ok = np.asarray(v.ok, bool)
    addr = lay.base + ((offs * lay.element_bits) >> 3)
    bank = (addr >> 2) % 32
    labels = rows * cols <= MAX_CELLS
    head = title if title is not None else f"{lay.notation} {lay.text}"[:160]
    title = (head + f" — {rows} x {cols}, {lay.element_bits}-bit elements, base "
             f"{lay.base:#x}; offset in elements, colour = bank of the byte address")
    W, H = max(2 * MARGIN + cols * CELL_W, MARGIN + 6 * len(title) + 8), 2 * MARGIN + rows * CELL_H + 40
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
           'font-family="monospace" font-size="10">']
    out.append(f'<text x="{MARGIN}" y="20">{esc(title)}</text>')
    if labels:
        out.extend(f'<text x="{MARGIN + c * CELL_W + CELL_W // 2}" y="{MARGIN - 4}" text-anchor="middle">{c}</text>'
                   for c in range(cols))
    for r in range(rows):
        y = MARGIN + r * CELL_H
        if labels:
            out.append(f'<text x="{MARGIN - 4}" y="{y + CELL_H - 5}" text-anchor="end">{r}</text>')
        for c in range(cols):
            x = MARGIN + c * CELL_W
            fill = bank_colour(int(bank[r, c])) if ok[r, c] else "#f2f2f2"
            out.append(f'<rect x="{x}" y="{y}" width="{CELL_W}" height="{CELL_H}" fill="{fill}" stroke="#ffffff"/>')
            if labels:
                text = str(int(offs[r, c])) if ok[r, c] else "-"
                out.append(f'<text x="{x + CELL_W // 2}" y="{y + CELL_H - 5}" text-anchor="middle">{text}</text>')
    if lay.atom:
        ar, ac = lay.atom
        for r0 in range(0, rows, ar):
            for c0 in range(0, cols, ac):
                h, w = min(ar, rows - r0), min(ac, cols - c0)
                out.append(f'<rect x="{MARGIN + c0 * CELL_W}" y="{MARGIN + r0 * CELL_H}" width="{w * CELL_W}" '
                           f'height="{h * CELL_H}" fill="none" stroke="#000000" stroke-width="2"/>')
    elif lay.swizzle is not None:
        out.extend(_block_borders(addr, ok, lay.swizzle))
    coll: list[str] = []
    if banks is not None:
        out.extend(_banks_marks(banks))
    else:
        coll = _collisions(offs, ok)
        out.extend(coll)
    legend = _legend(banks) if (lay.atom or lay.swizzle is not None) else \
        _legend(banks).replace("; thick outline: a swizzle atom", "").replace("thick outline: a swizzle atom",
                                                                             "no swizzle stated")
    if coll:
        legend += "; red: a cell whose offset another cell has too"
    legend_y = MARGIN + rows * CELL_H + 24
    out.append(f'<text x="{MARGIN}" y="{legend_y}">{esc(legend)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _block_borders(addr: np.ndarray, ok: np.ndarray, swizzle: Any) -> list[str]:
    """Thick segments between cells whose byte addresses lie in different atoms (aligned blocks of the swizzle
    mode's atom bytes), and around the tile."""
    from ..layout.shared import mode_of_swizzle  # noqa: PLC0415
    md = mode_of_swizzle(swizzle)
    size = md.atom_bytes if md is not None else max(16, swizzle.period)
    block = np.where(ok, addr // size, -1)
    rows, cols = block.shape
    out = []
    seg = 'stroke="#000000" stroke-width="2"/>'
    for r in range(rows):
        for c in range(cols):
            x, y = MARGIN + c * CELL_W, MARGIN + r * CELL_H
            if c + 1 == cols or block[r, c] != block[r, c + 1]:
                out.append(f'<line x1="{x + CELL_W}" y1="{y}" x2="{x + CELL_W}" y2="{y + CELL_H}" {seg}')
            if r + 1 == rows or block[r, c] != block[r + 1, c]:
                out.append(f'<line x1="{x}" y1="{y + CELL_H}" x2="{x + CELL_W}" y2="{y + CELL_H}" {seg}')
            if c == 0:
                out.append(f'<line x1="{x}" y1="{y}" x2="{x}" y2="{y + CELL_H}" {seg}')
            if r == 0:
                out.append(f'<line x1="{x}" y1="{y}" x2="{x + CELL_W}" y2="{y}" {seg}')
    return out


def _collisions(offs: np.ndarray, ok: np.ndarray) -> list[str]:
    """A red border on every placed cell whose offset another placed cell has too."""
    flat = offs[ok]
    if flat.size == 0:
        return []
    u, cnt = np.unique(flat, return_counts=True)
    dup = set(u[cnt > 1].tolist())
    return [_cell_rect(int(r), int(c), CONFLICT, 2) for r, c in zip(*np.nonzero(ok)) if int(offs[r, c]) in dup]


def _cell_rect(r: int, c: int, colour: str, width: int) -> str:
    return (f'<rect x="{MARGIN + c * CELL_W + 1}" y="{MARGIN + r * CELL_H + 1}" width="{CELL_W - 2}" '
            f'height="{CELL_H - 2}" fill="none" stroke="{colour}" stroke-width="{width}"/>')


def _banks_marks(banks: Any) -> list[str]:
    out = []
    w = banks.worst
    if w:
        out.extend(_cell_rect(r, c, GROUP, 2) for r, c in w.get("cells", ()))
    chk = banks.get("conflict_free")
    cex = chk.counterexample if chk.status == "refuted" else None
    if isinstance(cex, BankConflict):
        for r, c in cex.cells:
            out.append(_cell_rect(r, c, CONFLICT, 3))
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


__all__ = ["bank_colour", "shared_svg"]
