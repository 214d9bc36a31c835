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


def shared_svg(lay: SharedLayout, banks: Any = None, env: Mapping[str, int] | None = None) -> str:
    """The tile of ``lay`` (a family: the member ``env``, default the first) as an SVG document."""
    from ..layout.named import bindings  # noqa: PLC0415
    env = dict(env or (bindings(lay.map)[0] if lay.params else {}))
    v = evaluate_all(lay.map, env)
    rows, cols = v.ok.shape
    offs = np.asarray(v.out["offset"], np.int64)
    ok = np.asarray(v.ok, bool)
    addr = lay.base + ((offs * lay.element_bits) >> 3)
    bank = (addr >> 2) % 32
    labels = rows * cols <= MAX_CELLS
    W, H = 2 * MARGIN + cols * CELL_W, 2 * MARGIN + rows * CELL_H + 40
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
           'font-family="monospace" font-size="10">']
    title = (f"{lay.notation} {lay.text}"[:160] + f" — {rows} x {cols}, {lay.element_bits}-bit elements, base "
             f"{lay.base:#x}; offset in elements, colour = bank of the byte address")
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
    if banks is not None:
        out.extend(_banks_marks(banks))
    legend_y = MARGIN + rows * CELL_H + 24
    out.append(f'<text x="{MARGIN}" y="{legend_y}">{esc(_legend(banks))}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


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
