"""A kernel verified end to end (verify.kernel.frontdoor)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any



if TYPE_CHECKING:
    pass


def verify_kernel(launch: str | Path | Any | None = None, *, ptx: str | Path | None = None, cu: str | Path | None = None,
                  arch: str | None = None, triton: str | None = None, constexprs: Mapping[str, int] | None = None,
                  target: str = "sm_80", num_warps: int = 4, num_stages: int = 3, entry: str | None = None,
                  grid: Sequence[int] | None = None, block: Sequence[int] | None = None, shared: int | None = None,
                  computes: str | None = None, args: Sequence[Any] | None = None,
                  cluster: Sequence[int] | None = None) -> Any:
    """Verify a compiled kernel: its PTX executed exactly on the CPU for every thread of every CTA of the launch,
    with the catalog's layouts as the tensor-core instructions' meaning (``verify.kernel``).  Returns a
    ``verify.kernel.result.KernelResult``: ``status`` ``proved``, ``refuted`` (findings with their chains) or
    ``error`` (the two engines disagree).

    Give a launch file (``launch="mm.toml"``, docs/kernels.md), or the same fields as keywords: ``ptx=`` (or
    ``cu=`` with ``arch=``, compiled with nvcc, or ``triton="mm.py:matmul_kernel"`` with ``constexprs=``,
    ``target=``, ``num_warps=``, ``num_stages=``, compiled by Triton in a subprocess), ``grid``, ``block``,
    ``cluster``, ``computes="C[m, n] = A[m, k] * B[k, n]"`` and ``args`` (as in the launch file: ``{"tensor": "A",
    "type": "f16", "shape": [128, 64]}``, numbers, ``{"type": "f16", "value": 1.0}``, ``{"tensor_map": "A", "box":
    [64, 64], "swizzle": "128B"}``...).  Bad input raises
    ``SpecError`` (with its position) or ``UsageError``."""
    from ..kernel import frontdoor
    return frontdoor.verify(launch, ptx=ptx, cu=cu, arch=arch, triton=triton, constexprs=constexprs, target=target,
                            num_warps=num_warps, num_stages=num_stages, entry=entry, grid=grid, block=block,
                            shared=shared, computes=computes, args=args, cluster=cluster)
