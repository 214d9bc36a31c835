// A hand-written sparse integer tensor-core GEMM on packed .s4 elements (mma.sp::ordered_metadata m16n8k64, 4:8
// structured sparsity, kept in pairs): C[M, N] (s32, row-major) = A[M, K] * B[N, K] (both packed row-major, two
// elements to a byte from the low nibble; B given as its transpose).  A's pattern: of each chunk of 8 elements of a
// row, positions 0-3 are kept on even rows, 2, 3, 6, 7 on odd rows (sparse = { chunk = 8, keep = [...] } in the
// launch): whole bytes of the chunk's 32-bit word, which the kernel gathers with __byte_perm (prmt) into the sparse
// A fragment.  The metadata (pairs 0 and 1: 0b0100 on even rows; pairs 1 and 3: 0b1101 on odd rows) is in the lanes
// the sparsity selector 0 names (lanes 0 and 1 of each group of four: rows g and g + 8); lanes 2 and 3 hold 0b1110.
// One warp per CTA computes a 16 x 8 tile; M % 16 == 0, N % 8 == 0, K % 64 == 0.
#include <stdint.h>

extern "C" __global__ void sp4_gemm(const uint32_t* A, const uint32_t* B, int* C, int M, int N, int K) {
  int lane = threadIdx.x % 32;
  int g = lane / 4, t = lane % 4;
  int m0 = blockIdx.y * 16, n0 = blockIdx.x * 8;
  int words = K / 8;  // 32-bit words (chunks of 8 elements) of a row
  int acc[4] = {0, 0, 0, 0};
  uint32_t sel = (g & 1) ? 0x7531u : 0x5410u;  // bytes 1, 3 of each chunk word, or bytes 0, 1
  uint32_t e = (t < 2) ? ((g & 1) ? 0xDDDDDDDDu : 0x44444444u) : 0xEEEEEEEEu;
  for (int k0 = 0; k0 < K; k0 += 64) {
    int w = k0 / 8 + 2 * t;  // chunks 2t and 2t + 1 of this K step
    const uint32_t* lo = A + (m0 + g) * words + w;
    const uint32_t* hi = A + (m0 + g + 8) * words + w;
    uint32_t a0 = __byte_perm(lo[0], lo[1], sel), a1 = __byte_perm(hi[0], hi[1], sel);
    uint32_t b0 = B[(n0 + g) * words + k0 / 8 + t], b1 = B[(n0 + g) * words + k0 / 8 + 4 + t];
    asm volatile("mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.s32.s4.s4.s32 {%0, %1, %2, %3}, "
                 "{%4, %5}, {%6, %7}, {%0, %1, %2, %3}, %8, 0x0;\n"
                 : "+r"(acc[0]), "+r"(acc[1]), "+r"(acc[2]), "+r"(acc[3])
                 : "r"(a0), "r"(a1), "r"(b0), "r"(b1), "r"(e));
  }
  int r = m0 + g, c = n0 + 2 * t;
  C[r * N + c] = acc[0];
  C[r * N + c + 1] = acc[1];
  C[(r + 8) * N + c] = acc[2];
  C[(r + 8) * N + c + 1] = acc[3];
}
