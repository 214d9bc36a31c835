"""Regenerate the TTGIR fixtures of tests/test_block_tiles.py: Triton's own lowering of a matmul.

    pip install triton        # the wheel; no GPU is needed to compile to TTGIR
    python tests/data/ttgir/make_ttgir.py 80 8 128 256 32 f16 > tests/data/ttgir/ampere_matmul_f16.ttgir
    python tests/data/ttgir/make_ttgir.py 90 8 128 256 64 f16 > tests/data/ttgir/hopper_matmul_f16.ttgir
    python tests/data/ttgir/make_ttgir.py 80 4 64 128 64 i8 > tests/data/ttgir/ampere_matmul_i8.ttgir

Arguments: compute capability, num_warps, BLOCK_M, BLOCK_N, BLOCK_K, input type (f16 or i8).  The kernel is
the textbook tiled matmul (tl.dot over K), compiled for ``cuda:<cc>`` with num_stages=3; the dump is
``kernel.asm["ttgir"]`` (triton 3.9.0 made the committed ones).
"""
import sys

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from triton.compiler.compiler import compile as triton_compile


@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
           ACC: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * N + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=ACC)
    for k in range(0, K, BK):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK
        b_ptrs += BK * N
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


def main() -> None:
    cc, warps, bm, bn, bk = (int(x) for x in sys.argv[1:6])
    dtype = sys.argv[6]
    elem, out, acc = ("*fp16", "*fp32", tl.float32) if dtype == "f16" else ("*i8", "*i32", tl.int32)
    src = ASTSource(matmul, {"a_ptr": elem, "b_ptr": elem, "c_ptr": out, "M": "i32", "N": "i32", "K": "i32",
                             "BM": "constexpr", "BN": "constexpr", "BK": "constexpr", "ACC": "constexpr"},
                    constexprs={"BM": bm, "BN": bn, "BK": bk, "ACC": acc})
    kernel = triton_compile(src, target=GPUTarget("cuda", cc, 32), options={"num_warps": warps, "num_stages": 3})
    sys.stdout.write(kernel.asm["ttgir"])


if __name__ == "__main__":
    main()
