"""Run inside a subprocess with Triton installed: Gluon layouts -> linear-layout bases, as JSON lines.

Reads a JSON list of requests on stdin (``{"key", "layout": "nvmma" | "dot", "version", "warps",
"instr", "op", "k_width", "shape", "arch"}``; ``"nvmma_shared"`` with ``swizzle``, ``bits``, ``transposed``,
``shape``: an ``NVMMASharedLayout``'s offset bases; ``"tmem"`` with ``block``, ``col_stride``, ``two_ctas``,
``cga`` (or ``scales``: a ``TensorMemoryScalesLayout``): the TMEM (lane, column) bases, and for a CGA layout
the block bases a ``BlockedLayout`` with the same ``cga_layout`` has over the shape (the print-only
``_TensorMemoryLinearLayout`` drops them); ``"tmem_reg"`` with ``variant``, ``block``: the registers of a
tcgen05.ld/st and the bases of the ``TensorMemoryLayout`` they access) and prints one JSON object
per request on stdout (with ``source``: the file, relative to the triton package, and line of the Python
object that states the layout):
``{"key", "reg_bases", "lane_bases", "warp_bases", "block_bases", "shape", "printed"}`` — the call
``gl.to_linear_layout`` makes inside a kernel (``GluonOpBuilder.to_linear_layout``), no GPU used.
Imports nothing from ``verify`` (it runs in Triton's environment).
"""
from __future__ import annotations

import json
import sys
from typing import Any


def _source(obj: object) -> list:
    """[file relative to the triton package, line] where ``obj`` is defined in the installed Triton."""
    import inspect
    import os

    import triton
    try:
        path = inspect.getsourcefile(obj) or ""   # type: ignore[arg-type]
        lines, line = inspect.getsourcelines(obj)   # type: ignore[arg-type]
        line += next((k for k, text in enumerate(lines) if text.lstrip().startswith(("class ", "def "))), 0)
    except (OSError, TypeError):
        return ["", 0]
    root = os.path.dirname(os.path.dirname(os.path.abspath(triton.__file__)))
    return [os.path.relpath(path, root).replace(os.sep, "/"), line]


def main() -> int:
    from triton._C.libtriton import gluon_ir, ir
    from triton.experimental.gluon import language as gl
    import triton

    requests = json.loads(sys.stdin.read())
    ctx = ir.context()
    ir.load_dialects(ctx)
    builders: dict[str, Any] = {}  # GluonOpBuilder (an untyped extension)
    print(json.dumps({"triton_version": triton.__version__}), flush=True)
    for r in requests:
        if r["layout"] == "nvmma_shared":   # a shared-memory layout: offset bits -> tensor (dim0, dim1)
            b = builders.get(r["arch"])
            if b is None:
                b = builders[r["arch"]] = gluon_ir.GluonOpBuilder(ctx, r["arch"])
            try:
                lay = gl.NVMMASharedLayout(swizzle_byte_width=r["swizzle"], element_bitwidth=r["bits"],
                                           transposed=r["transposed"])
                ll = b.to_linear_layout(lay._to_ir(b), r["shape"])
            except Exception as e:
                print(json.dumps({"key": r["key"], "error": f"{type(e).__name__}: {e}"}), flush=True)
                continue
            print(json.dumps({"key": r["key"], "printed": str(ll), "shape": r["shape"],
                              "offset_bases": [list(v) for v in ll.offset_bases],
                              "block_bases": [list(v) for v in ll.block_bases]}), flush=True)
            continue
        if r["layout"] == "tmem":   # a Tensor Memory layout: TMEM (lane, column) bits -> tensor (row, col)
            from triton.experimental.gluon.language.nvidia import blackwell as bw
            b = builders.get(r["arch"])
            if b is None:
                b = builders[r["arch"]] = gluon_ir.GluonOpBuilder(ctx, r["arch"])
            cga = [list(v) for v in r.get("cga", [])]
            try:
                if r.get("scales"):
                    t = bw.TensorMemoryScalesLayout(cga_layout=cga)
                else:
                    t = bw.TensorMemoryLayout(block=tuple(r["block"]), col_stride=r.get("col_stride", 1),
                                              cga_layout=cga, two_ctas=r.get("two_ctas", False))
                ll = b.to_linear_layout(t._to_ir(b), r["shape"])
                out = {"key": r["key"], "printed": str(ll), "shape": r["shape"], "source": _source(type(t)),
                       "rows": [list(v) for v in ll.rows], "cols": [list(v) for v in ll.cols]}
                if cga:   # the CTA bits: Triton's CGA layout over the same shape (makeCgaLayout)
                    blocked = gl.BlockedLayout([1, 1], [32, 1], [4, 1], [1, 0], cga_layout=cga)
                    out["block_bases"] = [list(v) for v in b.to_linear_layout(blocked._to_ir(b),
                                                                              r["shape"]).block_bases]
            except Exception as e:
                print(json.dumps({"key": r["key"], "error": f"{type(e).__name__}: {e}"}), flush=True)
                continue
            print(json.dumps(out), flush=True)
            continue
        if r["layout"] == "tmem_reg":   # the registers of a tcgen05.ld/st of a [M, C] 32-bit tile, 4 warps
            from triton.experimental.gluon.language.nvidia import blackwell as bw
            b = builders.get(r.get("arch", "cuda:100"))
            if b is None:
                b = builders[r.get("arch", "cuda:100")] = gluon_ir.GluonOpBuilder(ctx, r.get("arch", "cuda:100"))
            try:
                t = bw.TensorMemoryLayout(block=tuple(r.get("block", r["shape"])), col_stride=1)
                ll = bw._compute_tmem_reg_layout(gl.float32, r["shape"], r["shape"], t, r["num_warps"], r["variant"])
                tm = b.to_linear_layout(t._to_ir(b), r["shape"])
            except Exception as e:
                print(json.dumps({"key": r["key"], "error": f"{type(e).__name__}: {e}"}), flush=True)
                continue
            out = {"key": r["key"], "printed": str(ll), "shape": r["shape"],
                   "source": _source(bw._compute_tmem_reg_layout),
                   "tmem_rows": [list(v) for v in tm.rows], "tmem_cols": [list(v) for v in tm.cols]}
            for name in ("reg_bases", "lane_bases", "warp_bases", "block_bases"):
                out[name] = [list(v) for v in getattr(ll, name)]
            print(json.dumps(out), flush=True)
            continue
        b = builders.get(r["arch"])
        if b is None:
            b = builders[r["arch"]] = gluon_ir.GluonOpBuilder(ctx, r["arch"])
        parent = gl.NVMMADistributedLayout(version=r["version"], warps_per_cta=r["warps"], instr_shape=r["instr"])
        lay = parent if r["layout"] == "nvmma" else gl.DotOperandLayout(operand_index=r["op"], parent=parent,
                                                                         k_width=r["k_width"])
        ll = b.to_linear_layout(lay._to_ir(b), r["shape"])
        out = {"key": r["key"], "printed": str(ll), "shape": r["shape"]}
        for name in ("reg_bases", "lane_bases", "warp_bases", "block_bases"):
            out[name] = [list(v) for v in getattr(ll, name)]
        print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
