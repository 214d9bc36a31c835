"""The Triton matmul that ptx-verify's kernel fixtures and tests compile (docs/kernels.md).

C[M, N] = A[M, K] x B[K, N], one BM x BN tile per program, K in steps of BK; INT=1 accumulates in int32 (int8
inputs), else in float32 (f16, bf16, tf32 from f32 inputs).  A's strides are arguments, so the same kernel reads A
row-major (stride_ak = 1) or transposed (stride_am = 1): Triton then loads it with ldmatrix .trans.
"""
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, INT: tl.constexpr):
    pid = tl.program_id(0)
    num_n = tl.cdiv(N, BN)
    pid_m = pid // num_n
    pid_n = pid % num_n
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    if INT:
        acc = tl.zeros((BM, BN), dtype=tl.int32)
    else:
        acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc += tl.dot(tl.load(a), tl.load(b))
        a += BK * stride_ak
        b += BK * stride_bk
    c = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(c, acc)


@triton.jit
def matmul_masked(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """The same for any M, N, K: loads masked (0 outside the matrices), stores masked."""
    pid = tl.program_id(0)
    num_n = tl.cdiv(N, BN)
    pid_m = pid // num_n
    pid_n = pid % num_n
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * stride_am + (k + rk)[None, :] * stride_ak,
                    mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * stride_bk + rn[None, :] * stride_bn,
                    mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    c = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(c, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def matmul_tma(a_desc, b_desc, c_ptr, M, N, K, stride_cm,
               BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """The same with A and B loaded through tensor descriptors (TMA: cp.async.bulk.tensor into swizzled shared
    memory, completing on mbarriers)."""
    pid = tl.program_id(0)
    num_n = tl.cdiv(N, BN)
    pid_m = pid // num_n
    pid_n = pid % num_n
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = a_desc.load([pid_m * BM, k])
        b = b_desc.load([k, pid_n * BN])
        acc += tl.dot(a, b)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc)


@triton.jit
def matmul_scaled(a_ptr, b_ptr, sa_ptr, sb_ptr, c_ptr, M, N, K,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """mxfp8: C[m, n] = sum over k of A[m, k] * B[k, n] * SA[m, k / 32] * SB[n, k / 32] (e4m3 elements, e8m0 scale
    factors, one per 32 elements of K; tl.dot_scaled: on sm_100 a block-scaled tcgen05.mma)."""
    pid = tl.program_id(0)
    num_n = tl.cdiv(N, BN)
    pid_m = pid // num_n
    pid_n = pid % num_n
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    rs = tl.arange(0, BK // 32)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        sa = tl.load(sa_ptr + rm[:, None] * (K // 32) + (k // 32 + rs)[None, :])
        sb = tl.load(sb_ptr + rn[:, None] * (K // 32) + (k // 32 + rs)[None, :])
        acc = tl.dot_scaled(a, sa, "e4m3", b, sb, "e4m3", acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


@triton.jit
def matmul_scaled_fp4(a_ptr, b_ptr, sa_ptr, sb_ptr, c_ptr, M, N, K,
                      BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """mxfp4: C[m, n] = sum over k of A[m, k] * B[n, k] * SA[m, k / 32] * SB[n, k / 32] (e2m1 elements packed two
    to a byte along K, the lower k in the low nibble; e8m0 scale factors, one per 32 elements of K; tl.dot_scaled:
    on sm_100 a block-scaled tcgen05.mma of kind::mxf4)."""
    pid = tl.program_id(0)
    num_n = tl.cdiv(N, BN)
    pid_m = pid // num_n
    pid_n = pid % num_n
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK // 2)
    rs = tl.arange(0, BK // 32)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * (K // 2) + (k // 2 + rk)[None, :])
        b = tl.load(b_ptr + rn[:, None] * (K // 2) + (k // 2 + rk)[None, :])
        sa = tl.load(sa_ptr + rm[:, None] * (K // 32) + (k // 32 + rs)[None, :])
        sb = tl.load(sb_ptr + rn[:, None] * (K // 32) + (k // 32 + rs)[None, :])
        acc = tl.dot_scaled(a, sa, "e2m1", tl.trans(b), sb, "e2m1", acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


@triton.jit
def matmul_scaled_nvfp4(a_ptr, b_ptr, sa_ptr, sb_ptr, c_ptr, M, N, K,
                        BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """nvfp4: C[m, n] = sum over k of A[m, k] * B[n, k] * SA[m, k / 16] * SB[n, k / 16] (e2m1 elements packed two
    to a byte along K; e4m3 scale factors, one per 16 elements of K; on sm_100 kind::mxf4nvf4, .scale_vec::4X)."""
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK // 2)
    rs = tl.arange(0, BK // 16)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * (K // 2) + (k // 2 + rk)[None, :])
        b = tl.load(b_ptr + rn[:, None] * (K // 2) + (k // 2 + rk)[None, :])
        sa = tl.load(sa_ptr + rm[:, None] * (K // 16) + (k // 16 + rs)[None, :])
        sb = tl.load(sb_ptr + rn[:, None] * (K // 16) + (k // 16 + rs)[None, :])
        acc = tl.dot_scaled(a, sa, "e2m1", tl.trans(b), sb, "e2m1", acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


@triton.jit
def matmul_convert_a(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """One tile, A converted to bf16 after its load: on sm_90 wgmma takes A from registers (the catalog's wgmma A
    fragment), B from shared memory."""
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a.to(tl.bfloat16), b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


@triton.jit
def matmul_tma_store(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """matmul_tma with C stored through a tensor descriptor too (a TMA store from shared memory)."""
    pid = tl.program_id(0)
    num_n = tl.cdiv(N, BN)
    pid_m = pid // num_n
    pid_n = pid % num_n
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = a_desc.load([pid_m * BM, k])
        b = b_desc.load([k, pid_n * BN])
        acc += tl.dot(a, b)
    c_desc.store([pid_m * BM, pid_n * BN], acc)


@triton.jit
def matmul_scaled_mixed(a_ptr, b_ptr, sa_ptr, sb_ptr, c_ptr, M, N, K,
                        BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """mxfp4 x mxfp8: C[m, n] = sum over k of A[m, k] * B[k, n] * SA[m, k / 32] * SB[n, k / 32] (A e2m1 packed two
    to a byte along K, the lower k in the low nibble; B e4m3; e8m0 scale factors, one per 32 elements of K;
    tl.dot_scaled: on sm_100 a block-scaled tcgen05.mma of kind::mxf8f6f4, A's e2m1 in 8-bit containers)."""
    pid = tl.program_id(0)
    num_n = tl.cdiv(N, BN)
    pid_m = pid // num_n
    pid_n = pid % num_n
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rka = tl.arange(0, BK // 2)
    rk = tl.arange(0, BK)
    rs = tl.arange(0, BK // 32)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * (K // 2) + (k // 2 + rka)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        sa = tl.load(sa_ptr + rm[:, None] * (K // 32) + (k // 32 + rs)[None, :])
        sb = tl.load(sb_ptr + rn[:, None] * (K // 32) + (k // 32 + rs)[None, :])
        acc = tl.dot_scaled(a, sa, "e2m1", b, sb, "e4m3", acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)
