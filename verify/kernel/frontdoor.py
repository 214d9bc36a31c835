"""The front door of ``ptx-verify kernel`` and ``api.verify_kernel``: a launch file, or the launch's fields with a
``.ptx``, a ``.cu`` (nvcc) or a Triton kernel (compiled on the CPU in a subprocess), into a ``KernelResult``."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

from ..errors import UsageError
from ..ptx import parse_module
from .launch import Fields, Launch, from_fields, read_launch
from .load import compile_triton, load, pick_entry, triton_launch
from .result import KernelResult
from .verdict import verify_launch


def launch_of(launch: str | Path | Launch | None, where: str = "<api>", **fields: Any) -> Launch:
    """A ``Launch``: read from a file, given, or built from ``fields`` (checked as a launch file's are)."""
    given = {k: v for k, v in fields.items() if v is not None}
    if launch is not None:
        if given:
            raise UsageError(f"give a launch file or its fields ({', '.join(sorted(given))}), not both")
        return launch if isinstance(launch, Launch) else read_launch(str(launch))
    doc: dict[str, Any] = {}
    for k, v in given.items():
        doc[k] = str(v) if isinstance(v, Path) else list(v) if isinstance(v, (tuple, list)) else v
    return from_fields(doc, Fields(where))


def verify(launch: str | Path | Launch | None = None, *, ptx: str | Path | None = None, cu: str | Path | None = None,
           arch: str | None = None, triton: str | None = None, constexprs: Mapping[str, int] | None = None,
           target: str = "sm_80", num_warps: int = 4, num_stages: int = 3, entry: str | None = None,
           grid: Sequence[int] | None = None, block: Sequence[int] | None = None, shared: int | None = None,
           cluster: Sequence[int] | None = None,
           computes: str | None = None, args: Sequence[Any] | None = None, where: str = "<api>") -> KernelResult:
    if triton is not None:
        if launch is not None or ptx is not None or cu is not None:
            raise UsageError("give a Triton kernel or a launch file or a .ptx/.cu, not several")
        lau = launch_of(None, where, ptx="<triton>", entry=entry, grid=grid, block=block or [32 * num_warps],
                        shared=shared, computes=computes, args=args, cluster=cluster)
        kern = compile_triton(triton, dict(constexprs or {}), lau.args, target, num_warps, num_stages)
        lau = triton_launch(lau, kern)
        name = triton.rsplit(":", 1)[0].rsplit(".", 1)[0] + ".ptx"
        module = parse_module(kern.ptx, name)
        fn = pick_entry(module, kern.name, (where, 1, 1))
        return verify_launch(module, fn, lau, where)
    if constexprs:
        raise UsageError("constexprs are for a Triton kernel (triton=FILE.py:KERNEL)")
    lau = launch_of(launch, where, ptx=ptx, cu=cu, arch=arch, entry=entry, grid=grid, block=block, shared=shared,
                    cluster=cluster,
                    computes=computes, args=args)
    module, fn = load(lau)
    return verify_launch(module, fn, lau, lau.path if launch is not None else where)


__all__ = ["launch_of", "verify"]
