// Two more forms of sparse mma.sp::ordered_metadata, as mma_sparse.cu computes them (one warp per CTA, a 16 x 8
// tile, the kept elements of A loaded straight from global memory, the metadata computed):
// default: m16n8k32 .s8, 2:4 sparse, C[M, N] (s32) = A[M, K] (s8, positions 0, 1 of each chunk of 4 kept on even
//   rows, 1, 3 on odd rows: gathered from A's words with __byte_perm) * B[N, K] (s8, B given as its transpose);
//   the metadata in lanes 0 and 1 of each group of four (selector 0: rows g and g + 8), 0b1110 in lanes 2 and 3;
// -DTF32: m16n8k8 .tf32, 1:2 sparse, C[M, N] (f32) = A[M, K] (position 0 of each pair kept on even rows, 1 on odd
//   rows) * B[K, N]; the metadata (0b0100: position 0, 0b1110: position 1) in lane 0 of each group of four
//   (selector 0), the other lanes holding the other row parity's.
#include <stdint.h>

#ifdef TF32
extern "C" __global__ void sp_tf32_gemm(const float* A, const float* B, float* C, int M, int N, int K) {
  int lane = threadIdx.x % 32;
  int g = lane / 4, t = lane % 4;
  int m0 = blockIdx.y * 16, n0 = blockIdx.x * 8;
  int j = g & 1;  // the kept position of each pair (rows g and g + 8 have the same parity)
  uint32_t mine = j ? 0xEEEEEEEEu : 0x44444444u, other = j ? 0x44444444u : 0xEEEEEEEEu;
  uint32_t e = (t == 0) ? mine : other;
  float acc[4] = {0.f, 0.f, 0.f, 0.f};
  for (int k0 = 0; k0 < K; k0 += 8) {
    uint32_t a0 = __float_as_uint(A[(m0 + g) * K + k0 + 2 * t + j]);
    uint32_t a1 = __float_as_uint(A[(m0 + g + 8) * K + k0 + 2 * t + j]);
    uint32_t b0 = __float_as_uint(B[(k0 + t) * N + n0 + g]), b1 = __float_as_uint(B[(k0 + t + 4) * N + n0 + g]);
    asm volatile("mma.sp::ordered_metadata.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, "
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
#else
extern "C" __global__ void sp_s8_gemm(const uint32_t* A, const uint32_t* B, int* C, int M, int N, int K) {
  int lane = threadIdx.x % 32;
  int g = lane / 4, t = lane % 4;
  int m0 = blockIdx.y * 16, n0 = blockIdx.x * 8;
  int words = K / 4;  // 32-bit words (chunks of 4 elements) of a row
  uint32_t sel = (g & 1) ? 0x7531u : 0x5410u;  // bytes 1, 3 of each chunk word, or bytes 0, 1
  uint32_t e = (t < 2) ? ((g & 1) ? 0xDDDDDDDDu : 0x44444444u) : 0xEEEEEEEEu;
  int acc[4] = {0, 0, 0, 0};
  for (int k0 = 0; k0 < K; k0 += 32) {
    int w = k0 / 4 + 2 * t;  // chunks 2t and 2t + 1 of this K step
    const uint32_t* lo = A + (m0 + g) * words + w;
    const uint32_t* hi = A + (m0 + g + 8) * words + w;
    uint32_t a0 = __byte_perm(lo[0], lo[1], sel), a1 = __byte_perm(hi[0], hi[1], sel);
    uint32_t b0 = B[(n0 + g) * words + k0 / 4 + t], b1 = B[(n0 + g) * words + k0 / 4 + 4 + t];
    asm volatile("mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, "
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
#endif
