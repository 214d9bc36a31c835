// A hand-written GEMM with an f16 accumulator read back packed (sm_100a): D[128, 32] (f16, row-major) =
// A[128, 32] (f16, row-major) * B[32, 32] (f16, row-major), by one CTA of 128 threads.  Warp 0 allocates 128 Tensor
// Memory columns.  A and B go to shared memory K-major without swizzle (8 x 8 core matrices of 128 bytes: LBO 128 B,
// SBO 512 B); thread 0 issues two tcgen05.mma.cta_group::1.kind::f16 (M = 128, N = 32, K = 16 each, D f16: one 16-bit
// element in the lower half of each of columns 0-31) and one tcgen05.commit; every thread waits on its mbarrier.
// Each warp then reads its lane quarter of D with tcgen05.ld.32x32b.x16.pack::16b (two adjacent columns a register),
// stores the 16 registers back into columns 64-127 with tcgen05.st.16x128b.x8.unpack::16b, waits, loads them again
// with tcgen05.ld.16x128b.x8.pack::16b, and each thread writes its row of D, two f16 a 32-bit store.
#include <cuda_fp16.h>
#include <stdint.h>

#define M 128
#define N 32
#define K 32
#define RCOL 64  // the round trip's first Tensor Memory column

__device__ __forceinline__ uint32_t smem(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

// a tcgen05 shared-memory descriptor: start, LBO and SBO (bytes), the fixed 0b001 in bits 48-46, no swizzle
__device__ __forceinline__ uint64_t descriptor(uint32_t a, uint32_t lbo, uint32_t sbo) {
  return (uint64_t)((a & 0x3FFFF) >> 4) | ((uint64_t)(lbo >> 4) << 16) | ((uint64_t)(sbo >> 4) << 32) | (1ull << 46);
}

extern "C" __global__ void pack_mma(const half* A, const half* B, uint32_t* D) {
  __shared__ __align__(1024) half sA[M * K];
  __shared__ __align__(1024) half sB[N * K];
  __shared__ __align__(8) uint64_t bar;
  __shared__ uint32_t taddr;
  int tid = threadIdx.x, warp = tid / 32;
  for (int i = tid; i < M * K; i += 128) {
    int m = i / K, k = i % K;
    sA[(m % 8) * 8 + (k % 8) + (k / 8) * 64 + (m / 8) * (K / 8) * 64] = A[i];
  }
  for (int i = tid; i < N * K; i += 128) {
    int n = i % N, k = i / N;
    sB[(n % 8) * 8 + (k % 8) + (k / 8) * 64 + (n / 8) * (K / 8) * 64] = B[k * N + n];
  }
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  if (warp == 0) {
    asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], 128;\n" ::"r"(smem(&taddr)));
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n");
  }
  if (tid == 0) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(smem(&bar)));
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  asm volatile("tcgen05.fence::before_thread_sync;\n" ::: "memory");
  __syncthreads();
  asm volatile("tcgen05.fence::after_thread_sync;\n" ::: "memory");
  uint32_t tmem = taddr;
  if (tid == 0) {
    // kind::f16: D f16 (bits 5-4 = 0), A and B f16 K-major, N >> 3 in bits 22-17, M >> 4 in bits 28-24
    uint32_t idesc = ((uint32_t)(N >> 3) << 17) | ((uint32_t)(M >> 4) << 24);
    for (int kb = 0; kb < K / 16; ++kb) {
      uint64_t da = descriptor(smem(sA) + kb * 256, 128, (K / 8) * 128);
      uint64_t db = descriptor(smem(sB) + kb * 256, 128, (K / 8) * 128);
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"
                   "tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, p;\n}\n"
                   ::"r"(tmem), "l"(da), "l"(db), "r"(idesc), "r"(kb));
    }
    asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];\n" ::"r"(smem(&bar)));
  }
  asm volatile("{\n.reg .pred done;\nWAIT_%=:\n"
               "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], 0;\n"
               "@!done bra WAIT_%=;\n}\n" ::"r"(smem(&bar)));
  asm volatile("tcgen05.fence::after_thread_sync;\n" ::: "memory");
  uint32_t lane = tmem + ((uint32_t)(warp * 32) << 16);
  uint32_t r[16];
  asm volatile("tcgen05.ld.sync.aligned.32x32b.x16.pack::16b.b32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, "
               "%12, %13, %14, %15}, [%16];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]), "=r"(r[7]),
                 "=r"(r[8]), "=r"(r[9]), "=r"(r[10]), "=r"(r[11]), "=r"(r[12]), "=r"(r[13]), "=r"(r[14]),
                 "=r"(r[15])
               : "r"(lane));
  asm volatile("tcgen05.wait::ld.sync.aligned;\n" ::: "memory");
  asm volatile("tcgen05.st.sync.aligned.16x128b.x8.unpack::16b.b32 [%0], {%1, %2, %3, %4, %5, %6, %7, %8, %9, %10, "
               "%11, %12, %13, %14, %15, %16};\n"
               ::"r"(lane + RCOL), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]), "r"(r[4]), "r"(r[5]), "r"(r[6]),
                 "r"(r[7]), "r"(r[8]), "r"(r[9]), "r"(r[10]), "r"(r[11]), "r"(r[12]), "r"(r[13]), "r"(r[14]),
                 "r"(r[15]));
  asm volatile("tcgen05.wait::st.sync.aligned;\n" ::: "memory");
  uint32_t q[16];
  asm volatile("tcgen05.ld.sync.aligned.16x128b.x8.pack::16b.b32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, "
               "%12, %13, %14, %15}, [%16];\n"
               : "=r"(q[0]), "=r"(q[1]), "=r"(q[2]), "=r"(q[3]), "=r"(q[4]), "=r"(q[5]), "=r"(q[6]), "=r"(q[7]),
                 "=r"(q[8]), "=r"(q[9]), "=r"(q[10]), "=r"(q[11]), "=r"(q[12]), "=r"(q[13]), "=r"(q[14]),
                 "=r"(q[15])
               : "r"(lane + RCOL));
  asm volatile("tcgen05.wait::ld.sync.aligned;\n" ::: "memory");
  for (int j = 0; j < N / 2; ++j) D[tid * (N / 2) + j] = q[j];
  asm volatile("tcgen05.fence::before_thread_sync;\n" ::: "memory");
  __syncthreads();
  if (warp == 0) asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, 128;\n" ::"r"(tmem));
}
