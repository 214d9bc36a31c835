// A hand-written GEMM on 4-bit A with tcgen05.mma.cta_group::1.kind::f8f6f4 (sm_100a, no block scaling): D[128, 32]
// (f32, row-major) = A[128, 64] (e2m1, packed two to a byte along K, the lower k in the low nibble) * B[32, 64] (e4m3,
// given as its transpose: N x K), by one CTA of 128 threads.  In shared memory A's elements sit in 8-bit containers
// (PTX ISA 9.7.16.10.4.4): the descriptor addresses 16 containers a 16-byte unit, the unit holding its 16 elements
// packed in its low 8 bytes (then 8 bytes of padding, never written here).  Each thread copies its row of A byte by
// byte: the 8 packed bytes of k 16 j .. 16 j + 15 to the low half of the unit of (row, j), K-major without swizzle
// (8 x 16-byte core matrices: LBO 128 B, SBO 512 B); B's bytes likewise, one byte a container.  Thread 0 issues two
// MMAs (M = 128, N = 32, K = 32 each: the second's descriptors 256 bytes on); one tcgen05.commit arrives on the
// mbarrier, every thread waits on it, reads its row of D with tcgen05.ld.32x32b.x32 and stores it.
#include <stdint.h>

#define M 128
#define N 32
#define K 64
#define KB (K / 2)  // bytes of a packed row of A

__device__ __forceinline__ uint32_t smem(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

// a tcgen05 shared-memory descriptor: start, LBO and SBO (bytes), the fixed 0b001 in bits 48-46, no swizzle
__device__ __forceinline__ uint64_t descriptor(uint32_t a, uint32_t lbo, uint32_t sbo) {
  return (uint64_t)((a & 0x3FFFF) >> 4) | ((uint64_t)(lbo >> 4) << 16) | ((uint64_t)(sbo >> 4) << 32) | (1ull << 46);
}

// the 16-byte unit of 8-bit containers (r, 16 j .. 16 j + 15) of a K-major tile of K containers a row
__device__ __forceinline__ int unit(int r, int j) { return (r % 8) * 16 + j * 128 + (r / 8) * (K / 16) * 128; }

extern "C" __global__ void fp4_mma(const uint8_t* A, const uint8_t* B, float* D) {
  __shared__ __align__(1024) uint8_t sA[M * K];
  __shared__ __align__(1024) uint8_t sB[N * K];
  __shared__ __align__(8) uint64_t bar;
  __shared__ uint32_t taddr;
  int tid = threadIdx.x, warp = tid / 32;
  for (int b = 0; b < KB; ++b)  // packed byte b of row tid: k 2 b and 2 b + 1, unit k / 16, byte (k % 16) / 2
    sA[unit(tid, b / 8) + b % 8] = A[tid * KB + b];
  for (int i = tid; i < N * K; i += 128) {
    int n = i / K, k = i % K;
    sB[unit(n, k / 16) + k % 16] = B[n * K + k];
  }
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  if (warp == 0) {
    asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], 32;\n" ::"r"(smem(&taddr)));
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n");
  }
  if (tid == 0) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(smem(&bar)));
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  asm volatile("tcgen05.fence::before_thread_sync;\n" ::: "memory");
  __syncthreads();
  asm volatile("tcgen05.fence::after_thread_sync;\n" ::: "memory");
  uint32_t tmem = taddr;
  if (tid == 0) {
    // kind::f8f6f4: D f32 (bits 5-4 = 1), A e2m1 (bits 9-7 = 5), B e4m3 (bits 12-10 = 0), both K-major,
    // N >> 3 in bits 22-17, M >> 4 in bits 28-24
    uint32_t idesc = (1u << 4) | (5u << 7) | ((uint32_t)(N >> 3) << 17) | ((uint32_t)(M >> 4) << 24);
    for (int kb = 0; kb < K / 32; ++kb) {
      uint64_t da = descriptor(smem(sA) + kb * 256, 128, (K / 16) * 128);
      uint64_t db = descriptor(smem(sB) + kb * 256, 128, (K / 16) * 128);
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"
                   "tcgen05.mma.cta_group::1.kind::f8f6f4 [%0], %1, %2, %3, p;\n}\n"
                   ::"r"(tmem), "l"(da), "l"(db), "r"(idesc), "r"(kb));
    }
    asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];\n" ::"r"(smem(&bar)));
  }
  asm volatile("{\n.reg .pred done;\nWAIT_%=:\n"
               "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], 0;\n"
               "@!done bra WAIT_%=;\n}\n" ::"r"(smem(&bar)));
  asm volatile("tcgen05.fence::after_thread_sync;\n" ::: "memory");
  uint32_t r[32];
  asm volatile("tcgen05.ld.sync.aligned.32x32b.x32.b32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, "
               "%14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, [%32];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]), "=r"(r[7]),
                 "=r"(r[8]), "=r"(r[9]), "=r"(r[10]), "=r"(r[11]), "=r"(r[12]), "=r"(r[13]), "=r"(r[14]),
                 "=r"(r[15]), "=r"(r[16]), "=r"(r[17]), "=r"(r[18]), "=r"(r[19]), "=r"(r[20]), "=r"(r[21]),
                 "=r"(r[22]), "=r"(r[23]), "=r"(r[24]), "=r"(r[25]), "=r"(r[26]), "=r"(r[27]), "=r"(r[28]),
                 "=r"(r[29]), "=r"(r[30]), "=r"(r[31])
               : "r"(tmem + ((uint32_t)(warp * 32) << 16)));
  asm volatile("tcgen05.wait::ld.sync.aligned;\n" ::: "memory");
  for (int j = 0; j < N; ++j) D[tid * N + j] = __uint_as_float(r[j]);
  asm volatile("tcgen05.fence::before_thread_sync;\n" ::: "memory");
  __syncthreads();
  if (warp == 0) asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, 32;\n" ::"r"(tmem));
}
