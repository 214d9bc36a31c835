"""Triton split-K matmul for ptx-verify's atomic fixtures (docs/kernels.md).

C[M, N] += A[M, K] x B[K, N]: program (t, s) computes tile t over the s-th of SPLIT equal slices of K and adds its
partial sum onto C with ``tl.atomic_add`` (C starts at zero: the launch says ``init = "zero"``).  Triton 3.9 emits
``atom.global.gpu.acq_rel.add`` (its returned values unused) by default and ``red.global.gpu.relaxed.add`` with
RELAXED=1 (``.v4.f32`` on sm_90).  SWAP=1 is a planted bug: the tile is added at C's transposed place (row and
column swapped).
"""
import triton
import triton.language as tl


@triton.jit
def matmul_splitk(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, SPLIT: tl.constexpr,
                  RELAXED: tl.constexpr, SWAP: tl.constexpr):
    pid = tl.program_id(0)
    pid_k = tl.program_id(1)
    num_n = tl.cdiv(N, BN)
    pid_m = pid // num_n
    pid_n = pid % num_n
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    slice_k = K // SPLIT
    rk = pid_k * slice_k + tl.arange(0, BK)
    a = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, slice_k, BK):
        acc += tl.dot(tl.load(a), tl.load(b))
        a += BK * stride_ak
        b += BK * stride_bk
    if SWAP:
        c = c_ptr + rn[None, :] * stride_cm + rm[:, None] * stride_cn
    else:
        c = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    if RELAXED:
        tl.atomic_add(c, acc, sem="relaxed")
    else:
        tl.atomic_add(c, acc)
