// A hand-written tensor-core GEMM with inline PTX (ldmatrix + mma.sync), as llama.cpp's and Marlin's kernels write
// them: C[M, N] (f32, row-major) = A[M, K] (f16, row-major) * B[K, N] (f16, row-major).
// Each CTA of 4 warps computes a 32 x 16 tile; each warp a 16 x 8 tile with mma.m16n8k16.
// M % 32 == 0, N % 16 == 0, K % 16 == 0.
// With -DSWIZZLE the two 16-byte halves of each row of sA trade places on odd rows, where the tile is written and
// where ldmatrix reads it: a different shared layout, the same meaning.  -DSWIZZLE_READ_ONLY swizzles the reads only.
#include <cuda_fp16.h>
#include <stdint.h>

#if defined(SWIZZLE) || defined(SWIZZLE_READ_ONLY)
#define SW_READ(row, col) ((col) ^ (((row) & 1) * 8))
#else
#define SW_READ(row, col) (col)
#endif
#if defined(SWIZZLE)
#define SW_WRITE(row, col) ((col) ^ (((row) & 1) * 8))
#else
#define SW_WRITE(row, col) (col)
#endif

extern "C" __global__ void mma_gemm(const half* A, const half* B, float* C, int M, int N, int K) {
  __shared__ __align__(16) half sA[32][16];
  __shared__ __align__(16) half sB[16][16];
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  int wm = warp / 2, wn = warp % 2;
  int m0 = blockIdx.y * 32, n0 = blockIdx.x * 16;
  float acc[4] = {0.f, 0.f, 0.f, 0.f};
  for (int k0 = 0; k0 < K; k0 += 16) {
    for (int i = threadIdx.x; i < 32 * 16; i += 128) sA[i / 16][SW_WRITE(i / 16, i % 16)] = A[(m0 + i / 16) * K + k0 + i % 16];
    for (int i = threadIdx.x; i < 16 * 16; i += 128) sB[i / 16][i % 16] = B[(k0 + i / 16) * N + n0 + i % 16];
    __syncthreads();
    uint32_t a[4], b[2];
    uint32_t pa = (uint32_t)__cvta_generic_to_shared(&sA[16 * wm + lane % 16][SW_READ(lane % 16, 8 * (lane / 16))]);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3]) : "r"(pa));
    uint32_t pb = (uint32_t)__cvta_generic_to_shared(&sB[lane % 16][8 * wn]);
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(b[0]), "=r"(b[1]) : "r"(pb));
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                 "{%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    __syncthreads();
  }
  int g = lane / 4, t = lane % 4;
  int r = m0 + 16 * wm + g, c = n0 + 8 * wn + 2 * t;
  C[r * N + c] = acc[0];
  C[r * N + c + 1] = acc[1];
  C[(r + 8) * N + c] = acc[2];
  C[(r + 8) * N + c + 1] = acc[3];
}
