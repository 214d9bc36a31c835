// The other shapes of integer mma.sync on packed elements narrower than a byte, as mma_subbyte.cu computes them:
// C[M, N] (s32, row-major) = A[M, K] * B[N, K] (both packed row-major, B given as its transpose), one warp per CTA.
// -DWIDE: m16n8k64 .s4 (or with -DB1 m16n8k256 .b1 .and.popc): four A registers and two B registers, the second
// pair of A and the second B register a half K step further.  Default: m8n8k32 .s4 (with -DB1 m8n8k128 .b1
// .and.popc): one A and one B register, an 8 x 8 tile.
#include <stdint.h>

#ifdef B1
#define PER 32
#else
#define PER 8
#endif
#ifdef WIDE
#define KSTEP (8 * PER)
#ifdef B1
#define MMA "mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc"
#else
#define MMA "mma.sync.aligned.m16n8k64.row.col.s32.s4.s4.s32"
#endif
#else
#define KSTEP (4 * PER)
#ifdef B1
#define MMA "mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.and.popc"
#else
#define MMA "mma.sync.aligned.m8n8k32.row.col.s32.s4.s4.s32"
#endif
#endif

extern "C" __global__ void packed_shapes(const uint32_t* A, const uint32_t* B, int* C, int M, int N, int K) {
  int lane = threadIdx.x % 32;
  int g = lane / 4, t = lane % 4;
  int words = K / PER;  // 32-bit words of a row
#ifdef WIDE
  int m0 = blockIdx.y * 16, n0 = blockIdx.x * 8;
  int acc[4] = {0, 0, 0, 0};
  for (int k0 = 0; k0 < K; k0 += KSTEP) {
    int w = k0 / PER + t;
    uint32_t a0 = A[(m0 + g) * words + w], a1 = A[(m0 + g + 8) * words + w];
    uint32_t a2 = A[(m0 + g) * words + w + 4], a3 = A[(m0 + g + 8) * words + w + 4];
    uint32_t b0 = B[(n0 + g) * words + w], b1 = B[(n0 + g) * words + w + 4];
    asm volatile(MMA " {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+r"(acc[0]), "+r"(acc[1]), "+r"(acc[2]), "+r"(acc[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  }
  int r = m0 + g, c = n0 + 2 * t;
  C[r * N + c] = acc[0];
  C[r * N + c + 1] = acc[1];
  C[(r + 8) * N + c] = acc[2];
  C[(r + 8) * N + c + 1] = acc[3];
#else
  int m0 = blockIdx.y * 8, n0 = blockIdx.x * 8;
  int acc[2] = {0, 0};
  for (int k0 = 0; k0 < K; k0 += KSTEP) {
    int w = k0 / PER + t;
    uint32_t a0 = A[(m0 + g) * words + w], b0 = B[(n0 + g) * words + w];
    asm volatile(MMA " {%0, %1}, {%2}, {%3}, {%0, %1};\n" : "+r"(acc[0]), "+r"(acc[1]) : "r"(a0), "r"(b0));
  }
  C[(m0 + g) * N + n0 + 2 * t] = acc[0];
  C[(m0 + g) * N + n0 + 2 * t + 1] = acc[1];
#endif
}
