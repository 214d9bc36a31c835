// A hand-written GEMM with A in Tensor Memory for the kinds of other element widths than tcgen05_a_tmem.cu's f16, and
// for M = 64 (sm_100a): D[M, 32] = A[M, K] (row-major) * B[K, 32] (row-major), by one CTA of 128 threads, each row of
// A 64 bytes (two k-blocks of 32 bytes: K = 16 tf32, or 64 8-bit elements).  Pick the kind with -DKIND_TF32
// (kind::tf32, D f32), -DKIND_E4M3 (kind::f8f6f4 with E4M3 A and B, D f32) or -DKIND_S8 (kind::i8, s8, D s32);
// -DM64 makes M = 64 (else 128).  Warp 0 allocates 64 Tensor Memory columns: D in columns 0-31, A in columns 32-47.
// Each row of A goes to Tensor Memory as 16 32-bit words (the elements in memory order, the lower k in the lower
// bytes: the catalog's tcgen05.packing.A.b32 / .mxf8f6f4).  M = 128 (Layout D): thread t writes row t to lane t with
// tcgen05.st.32x32b.x16 and reads D's row t back with tcgen05.ld.32x32b.x32.  M = 64 (Layout F, lane alignment 0):
// row 16 x warp + r sits in lane r (0-15) of the warp's lane quarter; threads r and r + 16 of the warp write its
// words 0-7 and 8-15 with tcgen05.st.16x32bx2.x8 and read D's columns 0-15 and 16-31 with tcgen05.ld.16x32bx2.x16.  B goes to shared memory K-major without swizzle
// (8 rows x 16 bytes core matrices: LBO 128 B, SBO 512 B).  Thread 0 issues two MMAs (N = 32, 32 bytes of K each):
// the second k-block's A 8 columns on, its B descriptor's start 256 bytes on; one tcgen05.commit arrives on the
// mbarrier, every thread waits on it, reads D and stores it.
// Planted: -DA_COL_OFF: A's Tensor Memory column one 32-bit column on (one tf32, four 8-bit elements);
// -DQUARTER_SWAP: warps 0 and 1 (and 2 and 3) write each other's rows of A (a lane quarter swapped).
#include <stdint.h>

#if defined(KIND_TF32)
typedef float elem;
typedef float acc;
#define KIND "tf32"
#define TYPES ((2u << 7) | (2u << 10) | (1u << 4))  // A, B tf32; D f32
#elif defined(KIND_E4M3)
typedef uint8_t elem;
typedef float acc;
#define KIND "f8f6f4"
#define TYPES (1u << 4)  // A, B E4M3 (code 0); D f32
#elif defined(KIND_S8)
typedef int8_t elem;
typedef int32_t acc;
#define KIND "i8"
#define TYPES ((1u << 7) | (1u << 10) | (2u << 4))  // A, B s8; D s32
#else
#error "pick a kind: -DKIND_TF32, -DKIND_E4M3 or -DKIND_S8"
#endif

#ifdef M64
#define M 64
#else
#define M 128
#endif
#define N 32
#define KB 64                      // bytes of K in a row of A and of B^T
#define K (KB / (int)sizeof(elem))  // elements of K
#define CE (16 / (int)sizeof(elem))  // elements in 16 bytes (a core matrix row)
#define ACOL 32                    // A's first Tensor Memory column

__device__ __forceinline__ uint32_t smem(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

// a tcgen05 shared-memory descriptor: start, LBO and SBO (bytes), the fixed 0b001 in bits 48-46, no swizzle
__device__ __forceinline__ uint64_t descriptor(uint32_t a, uint32_t lbo, uint32_t sbo) {
  return (uint64_t)((a & 0x3FFFF) >> 4) | ((uint64_t)(lbo >> 4) << 16) | ((uint64_t)(sbo >> 4) << 32) | (1ull << 46);
}

extern "C" __global__ void a_tmem_kinds(const elem* A, const elem* B, acc* D) {
  __shared__ __align__(1024) elem sB[N * K];
  __shared__ __align__(8) uint64_t bar;
  __shared__ uint32_t taddr;
  int tid = threadIdx.x, warp = tid / 32;
  for (int i = tid; i < N * K; i += 128) {
    int n = i % N, k = i / N;
    sB[(n % 8) * CE + (k % CE) + (k / CE) * 8 * CE + (n / 8) * (K / CE) * 8 * CE] = B[k * N + n];
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
#ifdef M64
  int row = 16 * warp + tid % 16, half = tid % 32 / 16;  // Layout F: lanes 0-15 of each lane quarter
#else
  int row = tid;
#endif
#ifdef QUARTER_SWAP
  int arow = row ^ (M / 4);  // the neighbouring lane quarter's rows
#else
  int arow = row;
#endif
  const uint32_t* Aw = reinterpret_cast<const uint32_t*>(A);
#ifdef M64
  // lanes 0-15 of the warp's quarter: thread t < 16 writes words 0-7 of row t, thread t + 16 words 8-15
  uint32_t a[8];
  for (int j = 0; j < 8; ++j) a[j] = Aw[arow * (KB / 4) + half * 8 + j];
  asm volatile("tcgen05.st.sync.aligned.16x32bx2.x8.b32 [%0], 8, {%1, %2, %3, %4, %5, %6, %7, %8};\n"
               ::"r"(tmem + ((uint32_t)(warp * 32) << 16) + ACOL), "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]),
                 "r"(a[4]), "r"(a[5]), "r"(a[6]), "r"(a[7]));
#else
  uint32_t a[16];
  for (int j = 0; j < 16; ++j) a[j] = Aw[arow * (KB / 4) + j];
  asm volatile("tcgen05.st.sync.aligned.32x32b.x16.b32 [%0], {%1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, "
               "%13, %14, %15, %16};\n"
               ::"r"(tmem + ((uint32_t)(warp * 32) << 16) + ACOL), "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]),
                 "r"(a[4]), "r"(a[5]), "r"(a[6]), "r"(a[7]), "r"(a[8]), "r"(a[9]), "r"(a[10]), "r"(a[11]),
                 "r"(a[12]), "r"(a[13]), "r"(a[14]), "r"(a[15]));
#endif
  asm volatile("tcgen05.wait::st.sync.aligned;\n" ::: "memory");
  asm volatile("tcgen05.fence::before_thread_sync;\n" ::: "memory");
  __syncthreads();
  asm volatile("tcgen05.fence::after_thread_sync;\n" ::: "memory");
  if (tid == 0) {
    // the kind's types, N >> 3 in bits 22-17, M >> 4 in bits 28-24; A and B K-major
    uint32_t idesc = TYPES | ((uint32_t)(N >> 3) << 17) | ((uint32_t)(M >> 4) << 24);
    for (int kb = 0; kb < 2; ++kb) {
#ifdef A_COL_OFF
      uint32_t ta = tmem + ACOL + kb * 8 + 1;
#else
      uint32_t ta = tmem + ACOL + kb * 8;
#endif
      uint64_t db = descriptor(smem(sB) + kb * 256, 128, (KB / 16) * 128);
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"
                   "tcgen05.mma.cta_group::1.kind::" KIND " [%0], [%1], %2, %3, p;\n}\n"
                   ::"r"(tmem), "r"(ta), "l"(db), "r"(idesc), "r"(kb));
    }
    asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];\n" ::"r"(smem(&bar)));
  }
  asm volatile("{\n.reg .pred done;\nWAIT_%=:\n"
               "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], 0;\n"
               "@!done bra WAIT_%=;\n}\n" ::"r"(smem(&bar)));
  asm volatile("tcgen05.fence::after_thread_sync;\n" ::: "memory");
#ifdef M64
  // thread t < 16 reads columns 0-15 of its quarter's lane t, thread t + 16 columns 16-31
  uint32_t r[16];
  asm volatile("tcgen05.ld.sync.aligned.16x32bx2.x16.b32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, "
               "%13, %14, %15}, [%16], 16;\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]), "=r"(r[7]),
                 "=r"(r[8]), "=r"(r[9]), "=r"(r[10]), "=r"(r[11]), "=r"(r[12]), "=r"(r[13]), "=r"(r[14]),
                 "=r"(r[15])
               : "r"(tmem + ((uint32_t)(warp * 32) << 16)));
  asm volatile("tcgen05.wait::ld.sync.aligned;\n" ::: "memory");
  for (int j = 0; j < 16; ++j) reinterpret_cast<uint32_t*>(D)[row * N + half * 16 + j] = r[j];
#else
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
  for (int j = 0; j < N; ++j) reinterpret_cast<uint32_t*>(D)[row * N + j] = r[j];
#endif
  asm volatile("tcgen05.fence::before_thread_sync;\n" ::: "memory");
  __syncthreads();
  if (warp == 0) asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, 64;\n" ::"r"(tmem));
}
