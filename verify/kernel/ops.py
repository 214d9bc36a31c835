"""Every instruction the executor knows, by base opcode (``HANDLERS``): the handlers register themselves in
``ops_int`` (integers, logic, moves, conversions), ``ops_mem`` (memory, ``cp.async``, barriers), ``ops_tc`` (the
warp-collective and tensor-core instructions), ``ops_wgmma`` (warpgroup MMA), ``ops_async`` (TMA, bulk copies,
mbarriers, elect), ``ops_tcgen05`` (Tensor Memory and tcgen05) and ``ops_blockscale`` (block-scaled tcgen05.mma)."""
from __future__ import annotations

from . import ops_async, ops_blockscale, ops_mem, ops_tc, ops_tcgen05, ops_wgmma  # noqa: F401  (registration)
from .ops_int import HANDLERS

__all__ = ["HANDLERS"]
