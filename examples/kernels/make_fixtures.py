"""The command that made the PTX fixtures of this folder (run from the repository root):

    python examples/kernels/make_fixtures.py

* ``triton_fp16.ptx``: ``matmul.py`` for sm_80, BM = BN = 128, BK = 64, f16 inputs, f32 accumulator, 4 warps,
  3 stages (Triton 3.9.0; the benchmark's kernel);
* ``triton_fp16_64.ptx``: the same with BM = BN = 64, BK = 32, 2 stages (small: the tests' mutants);
* ``mma_inline.ptx``, ``mma_inline_swizzled.ptx``, ``mma_inline_read_swizzled.ptx``: ``mma_inline.cu`` by
  ``nvcc -ptx -arch=sm_80 -lineinfo`` (CUDA 13.0), without and with ``-DSWIZZLE`` / ``-DSWIZZLE_READ_ONLY``.

Each file starts with one comment line that says how it was made; the rest is the compiler's output as it was,
except the paths of its ``.file`` directives, made relative (to the repository, or to Python's site-packages) so the
fixtures name no machine's folders.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def relative_files(ptx: str) -> str:
    """``.file`` paths relative to the repository (or to site-packages)."""
    site = sysconfig.get_paths()["purelib"]

    def fix(m: re.Match) -> str:  # type: ignore[type-arg]
        path = m.group(2)
        for base, shown in ((str(ROOT) + "/", ""), (site + "/", "site-packages/")):
            if path.startswith(base):
                path = shown + path[len(base):]
        return m.group(1) + '"' + path + '"'
    return re.sub(r'(\.file\s+\d+\s+)"([^"]*)"', fix, ptx)


def triton(name: str, bm: int, bn: int, bk: int, warps: int, stages: int) -> None:
    sys.path.insert(0, str(ROOT))
    from verify.kernel.launch import Scalar, Tensor  # noqa: PLC0415
    from verify.kernel.load import compile_triton  # noqa: PLC0415
    M, N, K = 2 * bm, 2 * bn, 4 * bk
    args = (Tensor("A", "f16", (M, K), (K, 1)), Tensor("B", "f16", (K, N), (N, 1)), Tensor("C", "f32", (M, N), (N, 1)),
            *[Scalar(x) for x in (M, N, K, K, 1, N, 1, N, 1)])
    cwd = os.getcwd()
    os.chdir(HERE)
    try:
        k = compile_triton("matmul.py:matmul_kernel", {"BM": bm, "BN": bn, "BK": bk, "INT": 0}, args, "sm_80", warps,
                           stages)
    finally:
        os.chdir(cwd)
    head = (f"// made by examples/kernels/make_fixtures.py: Triton {k.version} matmul.py:matmul_kernel BM={bm} BN={bn} "
            f"BK={bk} INT=0, f16, sm_80, num_warps={warps}, num_stages={stages}; shared {k.shared} bytes\n")
    (HERE / name).write_text(head + relative_files(k.ptx), encoding="utf-8")


def nvcc(name: str, *defines: str) -> None:
    cmd = ["nvcc", "-ptx", "-arch=sm_80", "-lineinfo", *defines, "mma_inline.cu", "-o", name]
    subprocess.run(cmd, cwd=HERE, check=True)
    text = (HERE / name).read_text(encoding="utf-8")
    (HERE / name).write_text(f"// made by examples/kernels/make_fixtures.py: {' '.join(cmd)}\n" + relative_files(text),
                             encoding="utf-8")


if __name__ == "__main__":
    triton("triton_fp16.ptx", 128, 128, 64, 4, 3)
    triton("triton_fp16_64.ptx", 64, 64, 32, 4, 2)
    nvcc("mma_inline.ptx")
    nvcc("mma_inline_swizzled.ptx", "-DSWIZZLE")
    nvcc("mma_inline_read_swizzled.ptx", "-DSWIZZLE_READ_ONLY")
