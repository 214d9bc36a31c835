"""The triton wheel's own lowering of TTGIR layouts, for tests/test_block_tiles.py (run in a subprocess).

Reads JSON from stdin: a list of {"defs": alias definition lines, "tensor": "tensor<...>"}; parses each as an
MLIR module with the wheel's parser (a function taking that tensor), asks the wheel's ``to_linear_layout`` for
the layout over the tensor's shape, and writes a JSON list of {"register", "lane", "warp", "block", "shape"}
(or {"error": ...}) to stdout.  Needs ``pip install triton``; no GPU.
"""
from __future__ import annotations

import json
import os
import sys
import tempfile


def main() -> int:
    from triton._C.libtriton import gluon_ir, ir
    ctx = ir.context()
    ir.load_dialects(ctx)
    builder = gluon_ir.GluonOpBuilder(ctx)
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for k, item in enumerate(json.load(sys.stdin)):
            path = os.path.join(tmp, f"m{k}.mlir")
            with open(path, "w", encoding="utf-8") as f:
                f.write(item["defs"] + "\nmodule attributes {\"ttg.num-warps\" = %d : i32, \"ttg.num-ctas\" = 1 : i32, "
                        "\"ttg.threads-per-warp\" = 32 : i32} {\n  tt.func public @f(%%arg0: %s) {\n    tt.return\n  }\n}\n"
                        % (item.get("warps", 4), item["tensor"]))
            try:
                mod = ir.parse_mlir_module(path, ctx)
                arg = mod.get_function("f").args(0)
                layout = builder.get_gluon_layout_from_tensor(arg)
                ll = builder.to_linear_layout(layout._to_ir(builder), item["shape"])
                out.append({"register": ll.reg_bases, "lane": ll.lane_bases, "warp": ll.warp_bases,
                            "block": ll.block_bases, "shape": list(ll.shape)})
            except Exception as e:
                out.append({"error": f"{type(e).__name__}: {e}"})
    json.dump(out, sys.stdout)
    sys.stdout.flush()
    os._exit(0)  # the wheel's bindings report leaks at exit; nothing to clean up


if __name__ == "__main__":
    sys.exit(main())
