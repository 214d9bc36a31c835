// wgmma_sparse.cu's kernel on .s8 (wgmma.mma_async.sp m64n16k64, s32 += s8 x s8, 2:4 sparse A, sm_90a): C[M, N] (s32)
// = A[M, K] (s8, row-major, positions 0, 1 of each chunk of 4 kept on even rows, 1, 3 on odd rows) * B[K, N] (s8,
// row-major), K = 128 in two k-steps of 64: the first with A's kept elements gathered from A's words with
// __byte_perm into the sparse A register fragment, the second with them stored compressed (64 x 32 bytes) in shared
// memory behind a descriptor (K-major, no swizzle: LBO 128 B, SBO 256 B).  B is copied K-major (LBO 128 B, SBO
// 512 B).  Every thread supplies metadata for the .s8 kind (selector 0): the fields of the one row it holds, 0b0100
// (indices 0, 1) on even rows, 0b1101 (indices 1, 3) on odd rows.
// -DE4M3: the same on .e4m3 (m64n16k64 f32 += e4m3 x e4m3; the bytes are moved as they are).
#include <stdint.h>

#ifdef E4M3
#define KERNEL sp_wgmma_e4m3
#define ACC float
#define ACC_OUT "=f"
#define ACC_IN "+f"
#define TYPES ".f32.e4m3.e4m3"
#define SCALES ", 1, 1"
#else
#define KERNEL sp_wgmma_s8
#define ACC int
#define ACC_OUT "=r"
#define ACC_IN "+r"
#define TYPES ".s32.s8.s8"
#define SCALES ""
#endif

#define KTILE 64
#define NTILE 16

__device__ __forceinline__ uint64_t descriptor(const void* p, uint32_t lbo, uint32_t sbo) {
  uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(p));
  return (uint64_t)((a & 0x3FFFF) >> 4) | ((uint64_t)(lbo >> 4) << 16) | ((uint64_t)(sbo >> 4) << 32);
}

extern "C" __global__ void KERNEL(const int8_t* A, const int8_t* B, ACC* C, int M, int N, int K) {
  __shared__ __align__(128) int8_t sB[2][KTILE * NTILE];  // the two k-steps' B tiles, K-major
  __shared__ __align__(128) int8_t sA[64 * 32];            // the second k-step's compressed A, K-major
  int tid = threadIdx.x;
  int w = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  int m0 = blockIdx.y * 64, n0 = blockIdx.x * NTILE;
  for (int i = tid; i < 2 * KTILE * NTILE; i += 128) {
    int s = i / (KTILE * NTILE), k = (i / NTILE) % KTILE, n = i % NTILE;
    sB[s][(n % 8) * 16 + (k % 16) + (k / 16) * 128 + (n / 8) * 512] = B[(s * KTILE + k) * N + n0 + n];
  }
  for (int i = tid; i < 64 * 32; i += 128) {  // compressed column c: kept element c % 2 of chunk c / 2
    int m = i / 32, c = i % 32;
    int kept = (m & 1) ? ((c & 1) ? 3 : 1) : (c & 1);
    sA[(m % 8) * 16 + (c % 16) + (c / 16) * 128 + (m / 8) * 256] = A[(m0 + m) * K + KTILE + 4 * (c / 2) + kept];
  }
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();

  const uint32_t* words = reinterpret_cast<const uint32_t*>(A);  // chunk q of row r is word r * K / 4 + q
  int r = m0 + 16 * w + g;  // rows r and r + 8 have the same parity
  uint32_t sel = (g & 1) ? 0x7531u : 0x5410u;  // bytes 1, 3 of each chunk word, or bytes 0, 1
  const uint32_t* lo = words + r * (K / 4) + 2 * t;
  const uint32_t* hi = words + (r + 8) * (K / 4) + 2 * t;
  uint32_t a0 = __byte_perm(lo[0], lo[1], sel), a1 = __byte_perm(hi[0], hi[1], sel);
  uint32_t a2 = __byte_perm(lo[8], lo[9], sel), a3 = __byte_perm(hi[8], hi[9], sel);
  uint32_t e = (g & 1) ? 0xDDDDDDDDu : 0x44444444u;
  uint64_t db0 = descriptor(sB[0], 128, 512), db1 = descriptor(sB[1], 128, 512);
  uint64_t da = descriptor(sA, 128, 256);
  ACC d[8];
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %14, 0;\n"
               "wgmma.mma_async.sp.sync.aligned.m64n16k64" TYPES " {%0, %1, %2, %3, %4, %5, %6, %7}, "
               "{%8, %9, %10, %11}, %12, %13, 0, p" SCALES ";\n}\n"
               : ACC_OUT(d[0]), ACC_OUT(d[1]), ACC_OUT(d[2]), ACC_OUT(d[3]), ACC_OUT(d[4]), ACC_OUT(d[5]),
                 ACC_OUT(d[6]), ACC_OUT(d[7])
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(db0), "r"(e), "r"(0));
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %11, 0;\n"
               "wgmma.mma_async.sp.sync.aligned.m64n16k64" TYPES " {%0, %1, %2, %3, %4, %5, %6, %7}, "
               "%8, %9, %10, 0, p" SCALES ";\n}\n"
               : ACC_IN(d[0]), ACC_IN(d[1]), ACC_IN(d[2]), ACC_IN(d[3]), ACC_IN(d[4]), ACC_IN(d[5]), ACC_IN(d[6]),
                 ACC_IN(d[7])
               : "l"(da), "l"(db1), "r"(e), "r"(1));
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  for (int i = 0; i < 8; ++i) {
    int row = r + ((i % 4) >= 2 ? 8 : 0), col = n0 + 8 * (i >> 2) + 2 * t + (i & 1);
    C[row * N + col] = d[i];
  }
}
