// A hand-written tensor-core GEMM with inline mma.m8n8k4 (the quad-pair form, f16 inputs, f32 accumulator):
// C[M, N] (f32, row-major) = A[M, K] (f16, row-major) * B[K, N] (f16, row-major).  mma.m8n8k4 is four MMA
// computations, one per quad-pair (lanes 4q .. 4q + 3 and 4q + 16 .. 4q + 19): here quad-pair q computes rows
// 8q .. 8q + 7 of the CTA's 32 x 8 tile, each lane loading its A row and B column straight from global memory.
// One warp per CTA; M % 32 == 0, N % 8 == 0, K % 4 == 0.
#include <cuda_fp16.h>
#include <stdint.h>

__device__ __forceinline__ uint32_t pack(half lo, half hi) {
  half2 h = __halves2half2(lo, hi);
  return *reinterpret_cast<uint32_t*>(&h);
}

extern "C" __global__ void qp_gemm(const half* A, const half* B, float* C, int M, int N, int K) {
  int lane = threadIdx.x % 32;
  int q = (lane >> 2) & 3;                  // the quad-pair
  int r = (lane & 3) + 4 * (lane >> 4);     // A's row and B's column of this lane in its quad-pair's 8 x 8
  int m0 = blockIdx.y * 32 + 8 * q, n0 = blockIdx.x * 8;
  float acc[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
  for (int k0 = 0; k0 < K; k0 += 4) {
    const half* a = A + (m0 + r) * K + k0;
    uint32_t a0 = pack(a[0], a[1]), a1 = pack(a[2], a[3]);
    uint32_t b0 = pack(B[k0 * N + n0 + r], B[(k0 + 1) * N + n0 + r]);
    uint32_t b1 = pack(B[(k0 + 2) * N + n0 + r], B[(k0 + 3) * N + n0 + r]);
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 {%0, %1, %2, %3, %4, %5, %6, %7}, {%8, %9}, "
                 "{%10, %11}, {%0, %1, %2, %3, %4, %5, %6, %7};\n"
                 : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]), "+f"(acc[4]), "+f"(acc[5]),
                   "+f"(acc[6]), "+f"(acc[7])
                 : "r"(a0), "r"(a1), "r"(b0), "r"(b1));
  }
  for (int i = 0; i < 8; i++) {
    int row = (lane & 1) + 2 * ((i >> 1) & 1) + 4 * (lane >> 4);
    int col = (lane & 2) + (i & 1) + 4 * (i >> 2);
    C[(m0 + row) * N + n0 + col] = acc[i];
  }
}
