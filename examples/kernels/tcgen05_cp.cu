// A GEMM whose A reaches Tensor Memory by tcgen05.cp (shared memory to Tensor Memory, sm_100a):
// D[128, 32] (f32, row-major) = A[128, 32] (f16, row-major) * B[32, 32] (f16, row-major), one CTA of 128 threads.
// Warp 0 allocates 64 Tensor Memory columns: D in columns 0-31, A in columns 32-47.  A goes to shared memory as
// rows of bytes in K-major core matrices without swizzle (8 rows x 16 bytes), in three blocks: bytes 0-31 of each
// row (k 0-15: LBO 128 B, SBO 256 B), bytes 32-47 (k 16-23) and bytes 48-63 (k 24-31: SBO 128 B).  Thread 0 copies
// them into Tensor Memory with tcgen05.cp.cta_group::1.128x256b (row m to lane m, columns 32-39) and two
// tcgen05.cp.cta_group::1.128x128b (columns 40-43 and 44-47): each lane's bytes in order, two f16 to a 32-bit
// column, the lower k in the lower half (the catalog's tcgen05.packing.A.b16.packed).  B goes to shared memory as in
// tcgen05_a_tmem.cu.  Thread 0 then issues two MMAs (M = 128, N = 32, K = 16 each) with A in Tensor Memory (columns
// 32 and 40): the copies and the MMAs are one thread's, in its tensor-core pipeline's order.  One tcgen05.commit
// arrives on the mbarrier, every thread waits on it, reads its row of D with tcgen05.ld.32x32b.x32 and stores it.
// Planted: -DCP_SHAPE: the second copy made .64x128b.warpx2::01_23.
#include <cuda_fp16.h>
#include <stdint.h>

#define M 128
#define N 32
#define K 32
#define ACOL 32  // A's first Tensor Memory column
#ifdef CP_SHAPE  // planted: the second copy's shape .64x128b.warpx2::01_23 (rows 0-31 to lane quarters 0 and 1)
#define CP_SECOND "tcgen05.cp.cta_group::1.64x128b.warpx2::01_23"
#else
#define CP_SECOND "tcgen05.cp.cta_group::1.128x128b"
#endif

__device__ __forceinline__ uint32_t smem(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

// a tcgen05 shared-memory descriptor: start, LBO and SBO (bytes), the fixed 0b001 in bits 48-46, no swizzle
__device__ __forceinline__ uint64_t descriptor(uint32_t a, uint32_t lbo, uint32_t sbo) {
  return (uint64_t)((a & 0x3FFFF) >> 4) | ((uint64_t)(lbo >> 4) << 16) | ((uint64_t)(sbo >> 4) << 32) | (1ull << 46);
}

// byte b of row m of A (b < 64) in shared memory: three blocks of 16-byte core-matrix rows
__device__ __forceinline__ int a_byte(int m, int b) {
  if (b < 32) return (m % 8) * 16 + (b % 16) + (b / 16) * 128 + (m / 8) * 256;
  return 4096 + (b / 48) * 2048 + (m % 8) * 16 + (b % 16) + (m / 8) * 128;
}

extern "C" __global__ void cp_mma(const half* A, const half* B, float* D) {
  __shared__ __align__(1024) unsigned char sA[M * K * 2];
  __shared__ __align__(1024) half sB[N * K];
  __shared__ __align__(8) uint64_t bar;
  __shared__ uint32_t taddr;
  int tid = threadIdx.x, warp = tid / 32;
  for (int i = tid; i < M * K; i += 128) {
    int m = i / K, k = i % K;
    *reinterpret_cast<half*>(&sA[a_byte(m, 2 * k)]) = A[i];
  }
  for (int i = tid; i < N * K; i += 128) {
    int n = i % N, k = i / N;
    sB[(n % 8) * 8 + (k % 8) + (k / 8) * 64 + (n / 8) * (K / 8) * 64] = B[k * N + n];
  }
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  if (warp == 0) {
    asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], 64;\n" ::"r"(smem(&taddr)));
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n");
  }
  if (tid == 0) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(smem(&bar)));
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  asm volatile("tcgen05.fence::before_thread_sync;\n" ::: "memory");
  __syncthreads();
  asm volatile("tcgen05.fence::after_thread_sync;\n" ::: "memory");
  uint32_t tmem = taddr;
  if (tid == 0) {
    asm volatile("tcgen05.cp.cta_group::1.128x256b [%0], %1;\n" ::"r"(tmem + ACOL), "l"(descriptor(smem(sA), 128, 256)));
    asm volatile(CP_SECOND " [%0], %1;\n" ::"r"(tmem + ACOL + 8), "l"(descriptor(smem(sA) + 4096, 128, 128)));
    asm volatile("tcgen05.cp.cta_group::1.128x128b [%0], %1;\n"
                 ::"r"(tmem + ACOL + 12), "l"(descriptor(smem(sA) + 6144, 128, 128)));
    // kind::f16: D f32 (bits 5-4 = 1), A and B f16 K-major, N >> 3 in bits 22-17, M >> 4 in bits 28-24
    uint32_t idesc = (1u << 4) | ((uint32_t)(N >> 3) << 17) | ((uint32_t)(M >> 4) << 24);
    for (int kb = 0; kb < K / 16; ++kb) {
      uint64_t db = descriptor(smem(sB) + kb * 256, 128, (K / 8) * 128);
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"
                   "tcgen05.mma.cta_group::1.kind::f16 [%0], [%1], %2, %3, p;\n}\n"
                   ::"r"(tmem), "r"(tmem + ACOL + kb * 8), "l"(db), "r"(idesc), "r"(kb));
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
  if (warp == 0) asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, 64;\n" ::"r"(tmem));
}
