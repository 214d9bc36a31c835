"""CuTe's ``mma_traits_sm*.hpp`` read as text (``layout.notations.cute_headers``): the original ``crosscheck``.

Needs no compiler: it reads the explicit specialisations a small reader can resolve (no templated
GMMA traits, no copy traits), and a few CUTLASS declarations beside them (``rasters``, ``descriptor``,
``cute_zcm``).  Same origin as the compiled reference (``cute``).
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

from ...layout.notations import find_mma_headers, read_headers
from ..crosscheck import CrosscheckReport, crosscheck
from ..fragment import DEFAULT_TIMEOUT
from . import cute_zcm, descriptor, rasters
from .common import conform_rows

NAME = "cute-text"


def _root(path: str | Path | None) -> Path | None:
    if path is not None:
        return Path(path)
    from .cute import installed_headers
    return installed_headers()


def probe() -> str:
    root = _root(None)
    if root is None:
        return "no CuTe headers: pip install 'ptx-layout-verify[refs]' (nvidia-cutlass), or give --cute PATH"
    return "" if find_mma_headers(root) else f"no mma_traits_sm*.hpp under {root}"


def evaluate_default(specs: list, timeout: float = DEFAULT_TIMEOUT, path: str | Path | None = None) -> CrosscheckReport:
    root = _root(path)
    if root is None:
        raise FileNotFoundError(probe())
    headers = [root] if root.is_file() else find_mma_headers(root)
    report = crosscheck(read_headers(headers), specs, root, timeout)
    if root.is_file():
        return report
    extra = conform_rows([*rasters.cutlass_items(specs, root),      # CUTLASS's threadblock swizzle (rasters.py)
                          *descriptor.swizzle_items(specs, root),   # UMMA::LayoutType (descriptor.py)
                          *cute_zcm.zero_column_items(specs, root)], timeout)   # MaskAndShiftB (cute_zcm.py)
    return dataclasses.replace(report, rows=report.rows + tuple(extra))
