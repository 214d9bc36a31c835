// A hand-written integer tensor-core GEMM on packed elements narrower than a byte, with inline mma.sync:
// C[M, N] (s32, row-major) = A[M, K] * B[N, K] (both packed row-major: B is given as its transpose).
// Default: .s4 (two elements to a byte, the lower k in the low nibble), mma.m16n8k32.  With -DB1: .b1 (eight to a
// byte, the lower k in the low bit), mma.m16n8k128 with .and.popc (the sum over k of a AND b).  Each lane loads its
// packed 32-bit words of A and B straight from global memory.  One warp per CTA computes a 16 x 8 tile.
#include <stdint.h>

#ifdef B1
#define PER 32
#define KSTEP 128
#define MMA "mma.sync.aligned.m16n8k128.row.col.s32.b1.b1.s32.and.popc"
#else
#define PER 8
#define KSTEP 32
#define MMA "mma.sync.aligned.m16n8k32.row.col.s32.s4.s4.s32"
#endif

extern "C" __global__ void packed_gemm(const uint32_t* A, const uint32_t* B, int* C, int M, int N, int K) {
  int lane = threadIdx.x % 32;
  int g = lane / 4, t = lane % 4;
  int m0 = blockIdx.y * 16, n0 = blockIdx.x * 8;
  int words = K / PER;  // 32-bit words of a row
  int acc[4] = {0, 0, 0, 0};
  for (int k0 = 0; k0 < K; k0 += KSTEP) {
    int w = k0 / PER + t;
    uint32_t a0 = A[(m0 + g) * words + w], a1 = A[(m0 + g + 8) * words + w];
    uint32_t b0 = B[(n0 + g) * words + w];
    asm volatile(MMA " {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};\n"
                 : "+r"(acc[0]), "+r"(acc[1]), "+r"(acc[2]), "+r"(acc[3])
                 : "r"(a0), "r"(a1), "r"(b0));
  }
  int r = m0 + g, c = n0 + 2 * t;
  C[r * N + c] = acc[0];
  C[r * N + c + 1] = acc[1];
  C[(r + 8) * N + c] = acc[2];
  C[(r + 8) * N + c + 1] = acc[3];
}
