// A hand-written sparse warpgroup GEMM with inline PTX (wgmma.mma_async.sp, 2:4 structured sparsity, sm_90a):
// C[M, N] (f32, row-major) = A[M, K] (f16, row-major, 2:4 sparse) * B[K, N] (f16, row-major), K = 64.
// A's sparsity pattern: in every chunk of 4 of a row's K elements, positions 0 and 1 are kept on even rows, 1 and 3
// on odd rows (the launch says so: sparse = { chunk = 4, keep = [[0, 1], [1, 3]] }).  One warpgroup per CTA computes
// a 64 x 16 tile in two k-steps of wgmma.mma_async.sp.m64n16k32: the first with A's kept elements loaded from
// global memory into the sparse A register fragment, the second with them stored compressed (64 x 16) in shared
// memory and read through a matrix descriptor.  B is copied into shared memory K-major without swizzle (8 x 8 core
// matrices of 128 bytes: LBO 128 B between core matrices adjacent in K, SBO 512 B between those adjacent in N) and
// read through a descriptor.  The metadata gives the kept positions: 0b0100 (indices 0, 1) in every field of the
// threads holding even rows, 0b1101 (indices 1, 3) of those holding odd rows, in the thread pair the sparsity
// selector 0 names (threads 0 and 1 of each group of four); the other pair holds 0b1110 (indices 2, 3), which the
// selector does not read.
#include <cuda_fp16.h>
#include <stdint.h>

#define KTILE 32
#define NTILE 16

__device__ __forceinline__ uint32_t pack(half lo, half hi) {
  half2 h = __halves2half2(lo, hi);
  return *reinterpret_cast<uint32_t*>(&h);
}

// a shared-memory matrix descriptor: start address, LBO and SBO (bytes), no swizzle, base offset 0
__device__ __forceinline__ uint64_t descriptor(const void* p, uint32_t lbo, uint32_t sbo) {
  uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(p));
  return (uint64_t)((a & 0x3FFFF) >> 4) | ((uint64_t)(lbo >> 4) << 16) | ((uint64_t)(sbo >> 4) << 32);
}

extern "C" __global__ void sp_wgmma(const half* A, const half* B, float* C, int M, int N, int K) {
  __shared__ __align__(128) half sB[2][KTILE * NTILE];  // the two k-steps' B tiles, K-major
  __shared__ __align__(128) half sA[64 * 16];            // the second k-step's compressed A, K-major
  int tid = threadIdx.x;
  int w = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  int m0 = blockIdx.y * 64, n0 = blockIdx.x * NTILE;
  for (int i = tid; i < 2 * KTILE * NTILE; i += 128) {
    int s = i / (KTILE * NTILE), k = (i / NTILE) % KTILE, n = i % NTILE;
    sB[s][(n % 8) * 8 + (k % 8) + (k / 8) * 64 + (n / 8) * 256] = B[(s * KTILE + k) * N + n0 + n];
  }
  for (int i = tid; i < 64 * 16; i += 128) {  // compressed column c: kept element c % 2 of chunk c / 2
    int m = i / 16, c = i % 16;
    int kept = (m & 1) ? ((c & 1) ? 3 : 1) : (c & 1);
    sA[(m % 8) * 8 + (c % 8) + (c / 8) * 64 + (m / 8) * 128] = A[(m0 + m) * K + KTILE + 4 * (c / 2) + kept];
  }
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();

  int r = m0 + 16 * w + g;  // rows r and r + 8 have the same parity
  int j0 = (g & 1) ? 1 : 0, j1 = (g & 1) ? 3 : 1;
  uint32_t a0 = pack(A[r * K + 4 * t + j0], A[r * K + 4 * t + j1]);
  uint32_t a1 = pack(A[(r + 8) * K + 4 * t + j0], A[(r + 8) * K + 4 * t + j1]);
  uint32_t a2 = pack(A[r * K + 16 + 4 * t + j0], A[r * K + 16 + 4 * t + j1]);
  uint32_t a3 = pack(A[(r + 8) * K + 16 + 4 * t + j0], A[(r + 8) * K + 16 + 4 * t + j1]);
  uint32_t e = (t < 2) ? ((g & 1) ? 0xDDDDDDDDu : 0x44444444u) : 0xEEEEEEEEu;
  uint64_t db0 = descriptor(sB[0], 128, 512), db1 = descriptor(sB[1], 128, 512);
  uint64_t da = descriptor(sA, 128, 256);
  float d[8];
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %14, 0;\n"
               "wgmma.mma_async.sp.sync.aligned.m64n16k32.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7}, "
               "{%8, %9, %10, %11}, %12, %13, 0, p, 1, 1, 0;\n}\n"
               : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3]), "=f"(d[4]), "=f"(d[5]), "=f"(d[6]), "=f"(d[7])
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(db0), "r"(e), "r"(0));
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %11, 0;\n"
               "wgmma.mma_async.sp.sync.aligned.m64n16k32.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7}, "
               "%8, %9, %10, 0, p, 1, 1, 0, 0;\n}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
               : "l"(da), "l"(db1), "r"(e), "r"(1));
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  for (int i = 0; i < 8; ++i) {
    int row = r + ((i % 4) >= 2 ? 8 : 0), col = n0 + 8 * (i >> 2) + 2 * t + (i & 1);
    C[row * N + col] = d[i];
  }
}
