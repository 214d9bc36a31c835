"""The tile a TMA load writes, as its box is written: ``ROWSxCOLS:MODE[:col]`` (``64x64:128B``).

The one reader of a TMA box for every command (``layout.shared.parse_tma_box`` parses it, ``tma_layout`` builds
the tile): ``api.shared_layout("tma", ...)``, ``descriptor``/``banks --tma`` and ``consistent``'s ``tma:`` sides
all reach it through ``registry.reader("shared", "tma")``.
"""
from __future__ import annotations

from ..shared import SharedLayout, parse_tma_box, tma_layout
from .registry import NeedsType, SharedReader, register_reader


def read_tma(text: str | bytes, *, bits: int | None = None, base: int = 0, **_: object) -> SharedLayout:
    """The box's tile (``ValueError`` saying the syntax for bad text or the rule a box breaks; ``NeedsType``
    without the element type: the box's bytes, and so its swizzle, depend on it)."""
    box = parse_tma_box(text)
    if bits is None:
        raise NeedsType(f"the TMA box {box.rows}x{box.cols}:{box.mode} needs its element type (type=..., "
                        "--type f16): the box's bytes, and so its swizzle, depend on it", "TMA box")
    return tma_layout(box.rows, box.cols, bits, box.mode, base, box.order)


register_reader("shared", SharedReader("tma", read_tma, unpositioned=True, order=4, flag="--tma", metavar="BOX", help=(
    "the tile a TMA load writes: ROWSxCOLS:MODE, e.g. 64x64:128B (COLS contiguous; MODE none, 32B, 64B or "
    "128B), or ROWSxCOLS:MODE:col for a column-major (transposed) box, ROWS contiguous; needs --type")))

__all__ = ["read_tma"]
