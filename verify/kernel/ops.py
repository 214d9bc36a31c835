"""Every instruction the executor knows, by base opcode (``HANDLERS``, in ``ops_base``): the handlers register
themselves in ``ops_int`` (integer arithmetic and bits), ``ops_move`` (comparison, selection, moves), ``ops_float``
(floats and conversions), ``ops_mem`` (ld/st, ``cp.async``, barriers, fences), ``ops_atom`` (``atom`` and ``red``),
``ops_tc`` (the warp-collective and tensor-core instructions), ``ops_wgmma`` (warpgroup MMA), ``ops_async`` (TMA,
bulk copies, mbarriers, elect), ``ops_async_store`` (``st.async``/``red.async`` into a cluster's CTA), ``ops_tcgen05`` (Tensor Memory and tcgen05), ``ops_tcgen05_cp`` (``tcgen05.cp``), ``ops_tcgen05_ldst`` (``tcgen05.ld``/``st`` and their waits) and ``ops_blockscale`` (block-scaled
tcgen05.mma)."""
from __future__ import annotations

from . import (ops_async, ops_async_store, ops_atom, ops_blockscale, ops_float, ops_int, ops_mem, ops_move, ops_tc,  # noqa: F401  (registration)
               ops_tcgen05, ops_tcgen05_cp, ops_tcgen05_ldst, ops_wgmma)
from .ops_base import HANDLERS

__all__ = ["HANDLERS"]
