// A CTA pair's tcgen05.cp (tcgen05.cp.cta_group::2, sm_100a) feeding a CTA pair's GEMM: D[256, 64] (f32, row-major)
// = A[256, 32] (f16, row-major) * B[32, 64] (f16, row-major), by one cluster of two CTAs of 128 threads.
// Each CTA stages all of A in its shared memory (the same bytes at the same addresses in both CTAs), as rows of
// bytes in K-major core matrices without swizzle (8 rows x 16 bytes), in four blocks of 4096 bytes: rows 128 h ..
// + 127, bytes 32 j .. + 31 of each row in block 2 h + j (LBO 128 B, SBO 256 B).  Warp 0 of each CTA allocates 128
// Tensor Memory columns (tcgen05.alloc.cta_group::2).  Thread 0 of the even CTA copies the four blocks with
// tcgen05.cp.cta_group::2.128x256b into the Tensor Memory of both CTAs (row m to lane m, block (h, j) to columns
// 64 + 16 h + 8 j) and commits them with one tcgen05.commit.cta_group::2 multicast to both CTAs' first mbarrier.
// Every thread of CTA rank r waits on it, reads A's row 128 r + (its lane) from columns 64 + 16 r .. + 15 of its lane
// with tcgen05.ld.32x32b.x16 (two f16 to a 32-bit column, the lower k in the lower half) and stores it as the MMA's
// A operand (tcgen05_pair.cu's layout: 8 x 8 core matrices, LBO 128 B, SBO 512 B); B's columns 32 r .. + 31 go to
// shared memory as in tcgen05_pair.cu.  After a proxy fence and barrier.cluster, thread 0 of the even CTA issues
// tcgen05_pair.cu's two tcgen05.mma.cta_group::2.kind::f16 (M = 256, N = 64, K = 16 each), commits them to both CTAs'
// second mbarrier, and every thread reads and stores its row of D.
// Variants: -DCP_COLUMN (planted): the last copy one Tensor Memory column on (89, not 88); -DCP_ORDER: the four
// copies issued in the other order (the same meaning); -DOWN_HALF: each CTA stages A's halves in its own order, so
// the peer's bytes at a copy's addresses are not the issuer's (the copy is refused: whose shared memory the peer's
// copy reads is not stated).
#include <cuda_fp16.h>
#include <stdint.h>

#define MH 128  // rows of A (and D) per CTA
#define NH 32   // columns of B per CTA
#define N 64
#define K 32
#define ACOL 64  // A's first Tensor Memory column

__device__ __forceinline__ uint32_t smem(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

// a tcgen05 shared-memory descriptor: start, LBO and SBO (bytes), the fixed 0b001 in bits 48-46, no swizzle
__device__ __forceinline__ uint64_t descriptor(uint32_t a, uint32_t lbo, uint32_t sbo) {
  return (uint64_t)((a & 0x3FFFF) >> 4) | ((uint64_t)(lbo >> 4) << 16) | ((uint64_t)(sbo >> 4) << 32) | (1ull << 46);
}

// the copy of block (h, j): rows 128 h .. + 127, bytes 32 j .. + 31, to columns ACOL + 16 h + 8 j of both CTAs
__device__ __forceinline__ void copy_block(uint32_t tmem, const unsigned char* staged, int h, int j) {
  uint32_t col = ACOL + 16 * h + 8 * j;
#ifdef CP_COLUMN
  if (h == 1 && j == 1) col += 1;
#endif
  asm volatile("tcgen05.cp.cta_group::2.128x256b [%0], %1;\n"
               ::"r"(tmem + col), "l"(descriptor(smem(staged) + (2 * h + j) * 4096, 128, 256)));
}

extern "C" __global__ void __cluster_dims__(2, 1, 1) cp_pair(const half* A, const half* B, float* D) {
  __shared__ __align__(1024) unsigned char sS[2 * MH * K * 2];  // all of A, staged for the copies
  __shared__ __align__(1024) half sA[MH * K];
  __shared__ __align__(1024) half sB[NH * K];
  __shared__ __align__(8) uint64_t copied;
  __shared__ __align__(8) uint64_t bar;
  __shared__ __align__(8) uint64_t done;  // the even CTA's: the odd CTA has read its Tensor Memory
  __shared__ uint32_t taddr;
  int tid = threadIdx.x, warp = tid / 32;
  uint32_t rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
  for (int i = tid; i < 2 * MH * K; i += 128) {
    int m = i / K, b = 2 * (i % K);
    int h = m / MH, r = m % MH;
#ifdef OWN_HALF
    h ^= rank;
#endif
    int at = (2 * h + b / 32) * 4096 + (r % 8) * 16 + (b % 16) + ((b % 32) / 16) * 128 + (r / 8) * 256;
    *reinterpret_cast<half*>(&sS[at]) = A[i];
  }
  for (int i = tid; i < NH * K; i += 128) {
    int n = i % NH, k = i / NH;
    sB[(n % 8) * 8 + (k % 8) + (k / 8) * 64 + (n / 8) * (K / 8) * 64] = B[k * N + rank * NH + n];
  }
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  if (warp == 0) {
    asm volatile("tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%0], 128;\n" ::"r"(smem(&taddr)));
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;\n");
  }
  if (tid == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(smem(&copied)));
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(smem(&bar)));
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(smem(&done)));
  }
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  asm volatile("tcgen05.fence::before_thread_sync;\n" ::: "memory");
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
  asm volatile("tcgen05.fence::after_thread_sync;\n" ::: "memory");
  uint32_t tmem = taddr;
  if (rank == 0 && tid == 0) {
#ifdef CP_ORDER
    for (int c = 3; c >= 0; --c) copy_block(tmem, sS, c / 2, c % 2);
#else
    for (int c = 0; c < 4; ++c) copy_block(tmem, sS, c / 2, c % 2);
#endif
    asm volatile("tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%0], %1;\n"
                 ::"r"(smem(&copied)), "h"((uint16_t)3));
  }
  asm volatile("{\n.reg .pred ok;\nCOPIED_%=:\n"
               "mbarrier.try_wait.parity.shared::cta.b64 ok, [%0], 0;\n"
               "@!ok bra COPIED_%=;\n}\n" ::"r"(smem(&copied)));
  asm volatile("tcgen05.fence::after_thread_sync;\n" ::: "memory");
  uint32_t lane_base = tmem + ((uint32_t)(warp * 32) << 16);
  uint32_t a[16];
  asm volatile("tcgen05.ld.sync.aligned.32x32b.x16.b32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, "
               "%13, %14, %15}, [%16];\n"
               : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3]), "=r"(a[4]), "=r"(a[5]), "=r"(a[6]), "=r"(a[7]),
                 "=r"(a[8]), "=r"(a[9]), "=r"(a[10]), "=r"(a[11]), "=r"(a[12]), "=r"(a[13]), "=r"(a[14]), "=r"(a[15])
               : "r"(lane_base + ACOL + 16 * rank));
  asm volatile("tcgen05.wait::ld.sync.aligned;\n" ::: "memory");
  for (int j = 0; j < 16; ++j) {
    int r = tid, k = 2 * j;
    *reinterpret_cast<uint32_t*>(&sA[(r % 8) * 8 + (k % 8) + (k / 8) * 64 + (r / 8) * (K / 8) * 64]) = a[j];
  }
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  asm volatile("tcgen05.fence::before_thread_sync;\n" ::: "memory");
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
  asm volatile("tcgen05.fence::after_thread_sync;\n" ::: "memory");
  if (rank == 0 && tid == 0) {
    // kind::f16: D f32 (bits 5-4 = 1), A and B f16 K-major, N >> 3 in bits 22-17, M >> 4 in bits 28-24
    uint32_t idesc = (1u << 4) | ((uint32_t)(N >> 3) << 17) | ((uint32_t)(2 * MH >> 4) << 24);
    for (int kb = 0; kb < K / 16; ++kb) {
      uint64_t da = descriptor(smem(sA) + kb * 256, 128, (K / 8) * 128);
      uint64_t db = descriptor(smem(sB) + kb * 256, 128, (K / 8) * 128);
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"
                   "tcgen05.mma.cta_group::2.kind::f16 [%0], %1, %2, %3, p;\n}\n"
                   ::"r"(tmem), "l"(da), "l"(db), "r"(idesc), "r"(kb));
    }
    asm volatile("tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%0], %1;\n"
                 ::"r"(smem(&bar)), "h"((uint16_t)3));
  }
  asm volatile("{\n.reg .pred ok;\nWAIT_%=:\n"
               "mbarrier.try_wait.parity.shared::cta.b64 ok, [%0], 0;\n"
               "@!ok bra WAIT_%=;\n}\n" ::"r"(smem(&bar)));
  asm volatile("tcgen05.fence::after_thread_sync;\n" ::: "memory");
  float* row = D + (rank * MH + tid) * N;
  for (int c = 0; c < 4; ++c) {
    uint32_t r[16];
    asm volatile("tcgen05.ld.sync.aligned.32x32b.x16.b32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, "
                 "%13, %14, %15}, [%16];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]), "=r"(r[7]),
                   "=r"(r[8]), "=r"(r[9]), "=r"(r[10]), "=r"(r[11]), "=r"(r[12]), "=r"(r[13]), "=r"(r[14]),
                   "=r"(r[15])
                 : "r"(lane_base + 16 * c));
    asm volatile("tcgen05.wait::ld.sync.aligned;\n" ::: "memory");
    for (int j = 0; j < 16; ++j) row[c * 16 + j] = __uint_as_float(r[j]);
  }
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
  if (warp == 0) asm volatile("tcgen05.dealloc.cta_group::2.sync.aligned.b32 %0, 128;\n" ::"r"(tmem));
}
