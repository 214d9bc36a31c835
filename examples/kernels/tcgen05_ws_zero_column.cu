// A hand-written weight-stationary GEMM with zero-column masks (tcgen05.mma.ws.cta_group::1.kind::f16 with its
// zero-column-mask-desc operand, PTX ISA 9.1 9.7.16.4.3 Table 45; sm_100a): D[64, 64] (f32, row-major) = A[64, 16]
// (f16, row-major) * B[16, 64] (f16, row-major), by one CTA of 128 threads.  A goes to shared memory K-major without
// swizzle (8 x 8 core matrices of 128 bytes: LBO 128 B, SBO 256 B); B likewise, but column n of B at row n + 2 of
// its tile: both MMAs' masks shift B's columns by 2 (MMA column n reads column n + 2 of the tile the B descriptor
// describes), and rows 0-1 of the tile are never written.  Thread 0 issues two MMAs of M = 64, N = 64, K = 16
// (Layout E: rows 0-63 in lanes 0-63 for columns 0-31, in lanes 64-127 for 32-63) into the same Tensor Memory
// columns: the first (enable-input-d 0) with mask P, the second (enable-input-d 1) with mask ~P, so that each column
// of D is one MMA's sum and the other's no products: D = A * B.  P: two sub-masks of 32 columns (M = 64), skip span 2
// (3 columns zeroed), use span 4 (5 columns used), start counts 1 and 3, first spans 1 and 0; ~P: the spans swapped
// and the first spans flipped.  One tcgen05.commit arrives on the mbarrier; warp w reads lanes 32w-32w+31 with
// tcgen05.ld.32x32b.x32: rows 32 (w % 2) + lane, columns 32 (w / 2) + j.
// tests/test_kernel_ws_zero_column.py plants its bugs in the PTX.
#include <cuda_fp16.h>
#include <stdint.h>

#define M 64
#define N 64
#define K 16
#define SHIFT 2

__device__ __forceinline__ uint32_t smem(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

// a tcgen05 shared-memory descriptor: start, LBO and SBO (bytes), the fixed 0b001 in bits 48-46, no swizzle
__device__ __forceinline__ uint64_t descriptor(uint32_t a, uint32_t lbo, uint32_t sbo) {
  return (uint64_t)((a & 0x3FFFF) >> 4) | ((uint64_t)(lbo >> 4) << 16) | ((uint64_t)(sbo >> 4) << 32) | (1ull << 46);
}

// a zero-column mask descriptor (Table 45): start counts sc0, sc1 (bits 0-15), first spans fs0, fs1 (32, 33), the
// non-zero-mask bit (39), skip span (40-47), use span (48-55), column shift (56-61)
__device__ __forceinline__ uint64_t zero_column_mask(uint32_t sc0, uint32_t sc1, uint32_t fs0, uint32_t fs1,
                                                     uint32_t skip, uint32_t use, uint32_t shift) {
  return (uint64_t)sc0 | ((uint64_t)sc1 << 8) | ((uint64_t)fs0 << 32) | ((uint64_t)fs1 << 33) | (1ull << 39) |
         ((uint64_t)skip << 40) | ((uint64_t)use << 48) | ((uint64_t)shift << 56);
}

extern "C" __global__ void ws_zero_column(const half* A, const half* B, float* D) {
  __shared__ __align__(1024) half sA[M * K];
  __shared__ __align__(1024) half sB[(N + 8) * K];
  __shared__ __align__(8) uint64_t bar;
  __shared__ uint32_t taddr;
  int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  for (int i = tid; i < M * K; i += 128) {
    int m = i / K, k = i % K;
    sA[(m % 8) * 8 + (k % 8) + (k / 8) * 64 + (m / 8) * (K / 8) * 64] = A[m * K + k];
  }
  for (int i = tid; i < N * K; i += 128) {
    int n = i % N, k = i / N, r = n + SHIFT;
    sB[(r % 8) * 8 + (k % 8) + (k / 8) * 64 + (r / 8) * (K / 8) * 64] = B[k * N + n];
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
    // kind::f16: D f32 (bits 5-4 = 1), A and B f16 K-major, N >> 3 in bits 22-17, M >> 4 in bits 28-24 (M = 64)
    uint32_t idesc = (1u << 4) | ((uint32_t)(N >> 3) << 17) | ((uint32_t)(M >> 4) << 24);
    uint64_t db = descriptor(smem(sB), 128, (K / 8) * 128);
    uint64_t da = descriptor(smem(sA), 128, (K / 8) * 128);
    uint64_t p = zero_column_mask(1, 3, 1, 0, 2, 4, SHIFT);
    uint64_t q = zero_column_mask(1, 3, 0, 1, 4, 2, SHIFT);
    asm volatile("tcgen05.mma.ws.cta_group::1.kind::f16 [%0], %1, %2, %3, 0, %4;\n"
                 ::"r"(tmem), "l"(da), "l"(db), "r"(idesc), "l"(p));
    asm volatile("tcgen05.mma.ws.cta_group::1.kind::f16 [%0], %1, %2, %3, 1, %4;\n"
                 ::"r"(tmem), "l"(da), "l"(db), "r"(idesc), "l"(q));
    asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];\n" ::"r"(smem(&bar)));
  }
  asm volatile("{\n.reg .pred done;\nWAIT_%=:\n"
               "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], 0;\n"
               "@!done bra WAIT_%=;\n}\n" ::"r"(smem(&bar)));
  asm volatile("tcgen05.fence::after_thread_sync;\n" ::: "memory");
  int row = (warp % 2) * 32 + lane, col = (warp / 2) * 32;
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
  for (int j = 0; j < 32; ++j) D[row * N + col + j] = __uint_as_float(r[j]);
  asm volatile("tcgen05.fence::before_thread_sync;\n" ::: "memory");
  __syncthreads();
  if (warp == 0) asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, 32;\n" ::"r"(tmem));
}
