// A hand-written warpgroup GEMM on packed .b1 with inline wgmma.mma_async (sm_90a): C[M, N] (s32, row-major) =
// sum over k of A[m, k] AND B[n, k] (.and.popc), A[M, K] and B[N, K] packed row-major (eight elements to a byte,
// the lower k in the low bit; B given as its transpose).  m64n8k256, K = 512 in two k-steps: the first with A's
// packed words loaded into the A register fragment (4 registers of 32 elements), the second with A copied, byte by
// byte, to shared memory behind a descriptor (K-major, no swizzle: LBO 128 B, SBO 256 B).  B is copied the same way
// for both k-steps (K-major, LBO 128 B).  One warpgroup per CTA computes a 64 x 8 tile.
#include <stdint.h>

#define KSTEP 256                 // elements of k per wgmma
#define KBYTES (KSTEP / 8)        // bytes of a row per wgmma
#define NTILE 8

__device__ __forceinline__ uint64_t descriptor(const void* p, uint32_t lbo, uint32_t sbo) {
  uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(p));
  return (uint64_t)((a & 0x3FFFF) >> 4) | ((uint64_t)(lbo >> 4) << 16) | ((uint64_t)(sbo >> 4) << 32);
}

// byte kb of row r of a K-major tile of 8-row, 16-byte core matrices (LBO 128 B along k, SBO 256 B along rows)
__device__ __forceinline__ int at(int r, int kb) { return (r % 8) * 16 + (kb % 16) + (kb / 16) * 128 + (r / 8) * 256; }

extern "C" __global__ void wgmma_b1(const uint8_t* A, const uint8_t* B, int* C, int M, int N, int K) {
  __shared__ __align__(128) uint8_t sA[64 * KBYTES];         // the second k-step's A, K-major
  __shared__ __align__(128) uint8_t sB[2][256];              // the two k-steps' B tiles, K-major
  int tid = threadIdx.x;
  int w = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  int m0 = blockIdx.y * 64, n0 = blockIdx.x * NTILE;
  int rowbytes = K / 8;
  for (int i = tid; i < 2 * NTILE * KBYTES; i += 128) {
    int s = i / (NTILE * KBYTES), n = (i / KBYTES) % NTILE, kb = i % KBYTES;
    sB[s][at(n, kb)] = B[(n0 + n) * rowbytes + s * KBYTES + kb];
  }
  for (int i = tid; i < 64 * KBYTES; i += 128) {
    int m = i / KBYTES, kb = i % KBYTES;
    sA[at(m, kb)] = A[(m0 + m) * rowbytes + KBYTES + kb];
  }
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();

  const uint32_t* words = reinterpret_cast<const uint32_t*>(A);  // word q of row r: bits k = 32 q .. 32 q + 31
  int r = m0 + 16 * w + g;
  int per_row = K / 32;
  uint32_t a0 = words[r * per_row + t], a1 = words[(r + 8) * per_row + t];
  uint32_t a2 = words[r * per_row + t + 4], a3 = words[(r + 8) * per_row + t + 4];
  uint64_t db0 = descriptor(sB[0], 128, 256), db1 = descriptor(sB[1], 128, 256);
  uint64_t da = descriptor(sA, 128, 256);
  int d[4];
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %9, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n8k256.s32.b1.b1.and.popc {%0, %1, %2, %3}, "
               "{%4, %5, %6, %7}, %8, p;\n}\n"
               : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(db0), "r"(0));
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n8k256.s32.b1.b1.and.popc {%0, %1, %2, %3}, %4, %5, p;\n}\n"
               : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
               : "l"(da), "l"(db1), "r"(1));
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  for (int i = 0; i < 4; ++i) {
    int row = r + ((i % 4) >= 2 ? 8 : 0), col = n0 + 2 * t + (i & 1);
    C[row * N + col] = d[i];
  }
}
