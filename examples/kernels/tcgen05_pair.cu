// A hand-written CTA-pair GEMM with inline PTX (tcgen05.mma.cta_group::2, sm_100a): D[256, 64] (f32, row-major) =
// A[256, 32] (f16, row-major) * B[32, 64] (f16, row-major), by one cluster of two CTAs of 128 threads.
// Each CTA of the pair copies its half of the operands into its own shared memory, K-major without swizzle (8 x 8
// core matrices of 128 bytes: LBO 128 B between core matrices adjacent in K, SBO 512 B between those adjacent in M
// or N): A's rows 128 x rank .. + 127 and B's columns 32 x rank .. + 31.  Warp 0 of each CTA allocates 64 Tensor
// Memory columns (tcgen05.alloc.cta_group::2), thread 0 initialises the CTA's mbarrier, and the cluster meets at
// barrier.cluster.  Thread 0 of the even CTA then issues two tcgen05.mma.cta_group::2.kind::f16 (M = 256, N = 64,
// K = 16 each; the second k-block by adding 256 bytes to both descriptors' start): the pair's MMA reads A's halves
// and B's halves from both CTAs' shared memory with the one pair of descriptors and writes D's rows 0-127 to the even
// CTA's Tensor Memory and rows 128-255 to the odd CTA's (Layout A).  One tcgen05.commit.cta_group::2 with
// .multicast::cluster arrives on the mbarrier of both CTAs (CTA mask 0b11); every thread of each CTA waits on its
// own, reads its row from its lane with tcgen05.ld.32x32b.x16 and stores it.  Then thread 0 of the odd CTA arrives
// on the even CTA's second mbarrier through the address mapa gives (shared::cluster), and the even CTA waits on it
// before the cluster meets again and each CTA frees its columns.  -DONE_CTA_A: the odd CTA does not copy
// its half of A (the planted "cta_group::2 with one CTA's operand"); -DEVEN_B: the B descriptor of the second
// k-block is the first one's (a plant on K).
#include <cuda_fp16.h>
#include <stdint.h>

#define MH 128  // rows of A (and D) per CTA
#define NH 32   // columns of B per CTA
#define N 64
#define K 32

__device__ __forceinline__ uint32_t smem(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

// a tcgen05 shared-memory descriptor: start, LBO and SBO (bytes), the fixed 0b001 in bits 48-46, no swizzle
__device__ __forceinline__ uint64_t descriptor(uint32_t a, uint32_t lbo, uint32_t sbo) {
  return (uint64_t)((a & 0x3FFFF) >> 4) | ((uint64_t)(lbo >> 4) << 16) | ((uint64_t)(sbo >> 4) << 32) | (1ull << 46);
}

#define LD16(r, addr)                                                                                              \
  asm volatile("tcgen05.ld.sync.aligned.32x32b.x16.b32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, "  \
               "%13, %14, %15}, [%16];\n"                                                                          \
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]), "=r"(r[7]),   \
                 "=r"(r[8]), "=r"(r[9]), "=r"(r[10]), "=r"(r[11]), "=r"(r[12]), "=r"(r[13]), "=r"(r[14]),          \
                 "=r"(r[15])                                                                                       \
               : "r"(addr))

extern "C" __global__ void __cluster_dims__(2, 1, 1) pair_mma(const half* A, const half* B, float* D) {
  __shared__ __align__(1024) half sA[MH * K];
  __shared__ __align__(1024) half sB[NH * K];
  __shared__ __align__(8) uint64_t bar;
  __shared__ __align__(8) uint64_t done;  // the even CTA's: the odd CTA has read its Tensor Memory
  __shared__ uint32_t taddr;
  int tid = threadIdx.x, warp = tid / 32;
  uint32_t rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
#ifdef ONE_CTA_A
  if (rank == 0)
#endif
  for (int i = tid; i < MH * K; i += 128) {
    int r = i / K, k = i % K;
    sA[(r % 8) * 8 + (k % 8) + (k / 8) * 64 + (r / 8) * (K / 8) * 64] = A[(rank * MH + r) * K + k];
  }
  for (int i = tid; i < NH * K; i += 128) {
    int n = i % NH, k = i / NH;
    sB[(n % 8) * 8 + (k % 8) + (k / 8) * 64 + (n / 8) * (K / 8) * 64] = B[k * N + rank * NH + n];
  }
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  if (warp == 0) {
    asm volatile("tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%0], 64;\n" ::"r"(smem(&taddr)));
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;\n");
  }
  if (tid == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(smem(&bar)));
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(smem(&done)));
  }
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  asm volatile("tcgen05.fence::before_thread_sync;\n" ::: "memory");
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
  asm volatile("tcgen05.fence::after_thread_sync;\n" ::: "memory");
  uint32_t tmem = taddr;
  if (rank == 0 && tid == 0) {
    // kind::f16: D f32 (bits 5-4 = 1), A and B f16 K-major, N >> 3 in bits 22-17, M >> 4 in bits 28-24
    uint32_t idesc = (1u << 4) | ((uint32_t)(N >> 3) << 17) | ((uint32_t)(2 * MH >> 4) << 24);
    for (int kb = 0; kb < K / 16; ++kb) {
      uint64_t da = descriptor(smem(sA) + kb * 256, 128, (K / 8) * 128);
#ifdef EVEN_B
      uint64_t db = descriptor(smem(sB), 128, (K / 8) * 128);
#else
      uint64_t db = descriptor(smem(sB) + kb * 256, 128, (K / 8) * 128);
#endif
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"
                   "tcgen05.mma.cta_group::2.kind::f16 [%0], %1, %2, %3, p;\n}\n"
                   ::"r"(tmem), "l"(da), "l"(db), "r"(idesc), "r"(kb));
    }
    asm volatile("tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%0], %1;\n"
                 ::"r"(smem(&bar)), "h"((uint16_t)3));
  }
  asm volatile("{\n.reg .pred done;\nWAIT_%=:\n"
               "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], 0;\n"
               "@!done bra WAIT_%=;\n}\n" ::"r"(smem(&bar)));
  asm volatile("tcgen05.fence::after_thread_sync;\n" ::: "memory");
  uint32_t r[4][16];
  uint32_t lane_base = tmem + ((uint32_t)(warp * 32) << 16);
  LD16(r[0], lane_base);
  LD16(r[1], lane_base + 16);
  LD16(r[2], lane_base + 32);
  LD16(r[3], lane_base + 48);
  asm volatile("tcgen05.wait::ld.sync.aligned;\n" ::: "memory");
  float* row = D + (rank * MH + tid) * N;
  for (int c = 0; c < 4; ++c)
    for (int j = 0; j < 16; ++j) row[c * 16 + j] = __uint_as_float(r[c][j]);
  asm volatile("tcgen05.fence::before_thread_sync;\n" ::: "memory");
  if (rank == 1 && tid == 0) {
    uint32_t remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, 0;\n" : "=r"(remote) : "r"(smem(&done)));
    asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(remote) : "memory");
  }
  if (rank == 0)
    asm volatile("{\n.reg .pred ok;\nDONE_%=:\n"
                 "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 ok, [%0], 0;\n"
                 "@!ok bra DONE_%=;\n}\n" ::"r"(smem(&done)));
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
  if (warp == 0) asm volatile("tcgen05.dealloc.cta_group::2.sync.aligned.b32 %0, 64;\n" ::"r"(tmem));
}
