// A hand-written sparse tensor-core GEMM with inline PTX (mma.sp::ordered_metadata, 2:4 structured sparsity):
// C[M, N] (f32, row-major) = A[M, K] (f16, row-major, 2:4 sparse) * B[K, N] (f16, row-major).
// A's sparsity pattern: in every chunk of 4 of a row's K elements, positions 0 and 1 are kept on even rows,
// 1 and 3 on odd rows (the launch says so: sparse = { chunk = 4, keep = [[0, 1], [1, 3]] }).  The kernel loads the
// kept elements of A straight from global memory into the sparse A fragment and gives their positions as the
// metadata: 0b0100 (indices 0, 1) on even rows, 0b1101 (indices 1, 3) on odd rows, in the lanes the sparsity
// selector 0 names (the first lane of each group of four); the other lanes hold 0b1110 (indices 2, 3), which the
// selector does not read.  One warp per CTA computes a 16 x 8 tile with mma.m16n8k16; M % 16 == 0, N % 8 == 0,
// K % 16 == 0.
#include <cuda_fp16.h>
#include <stdint.h>

__device__ __forceinline__ uint32_t pack(half lo, half hi) {
  half2 h = __halves2half2(lo, hi);
  return *reinterpret_cast<uint32_t*>(&h);
}

extern "C" __global__ void sp_gemm(const half* A, const half* B, float* C, int M, int N, int K) {
  int lane = threadIdx.x % 32;
  int g = lane / 4, t = lane % 4;
  int m0 = blockIdx.y * 16, n0 = blockIdx.x * 8;
  float acc[4] = {0.f, 0.f, 0.f, 0.f};
  int j0 = (g & 1) ? 1 : 0, j1 = (g & 1) ? 3 : 1;  // rows g and g + 8 have the same parity
  uint32_t e = (t == 0) ? ((g & 1) ? 0xDDDDDDDDu : 0x44444444u) : 0xEEEEEEEEu;
  for (int k0 = 0; k0 < K; k0 += 16) {
    const half* lo = A + (m0 + g) * K + k0 + 4 * t;
    const half* hi = A + (m0 + g + 8) * K + k0 + 4 * t;
    uint32_t a0 = pack(lo[j0], lo[j1]);
    uint32_t a1 = pack(hi[j0], hi[j1]);
    uint32_t b0 = pack(B[(k0 + 2 * t) * N + n0 + g], B[(k0 + 2 * t + 1) * N + n0 + g]);
    uint32_t b1 = pack(B[(k0 + 2 * t + 8) * N + n0 + g], B[(k0 + 2 * t + 9) * N + n0 + g]);
    asm volatile("mma.sp::ordered_metadata.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
                 "{%4, %5}, {%6, %7}, {%0, %1, %2, %3}, %8, 0x0;\n"
                 : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
                 : "r"(a0), "r"(a1), "r"(b0), "r"(b1), "r"(e));
  }
  int r = m0 + g, c = n0 + 2 * t;
  C[r * N + c] = acc[0];
  C[r * N + c + 1] = acc[1];
  C[(r + 8) * N + c] = acc[2];
  C[(r + 8) * N + c + 1] = acc[3];
}
