// One CTA feeding the other's shared memory, stage after stage, in a cluster of two CTAs (inline PTX, sm_90a):
// D[16, 16] (f32, row-major) = A[16, 32] (f16, row-major) * B[32, 16] (f16, row-major), by one cluster of two CTAs
// of one warp each, in two k-blocks of 16.  CTA 0 is the loader: for each k-block it copies A's 16 x 16 block into
// its own sA and, through the address mapa gives for CTA 1's sA, into CTA 1's (st.shared::cluster).  The cluster
// meets at barrier.cluster; then each CTA reads its A fragment from its own sA and its B fragment from its own sB
// (B's columns 8r .. 8r + 7, n-major, every k), and one mma.sync.m16n8k16 a k-block accumulates D[:, 8r .. 8r + 7].
// One sA: the cluster meets again after the reads of the first k-block, before CTA 0 overwrites CTA 1's sA with the
// second (CTA 1 must have read the first block by then).  -DNO_SYNC: that barrier.cluster removed (a planted bug:
// CTA 0's stores into CTA 1's sA race CTA 1's reads of the first block, a write after a read).  -DDOUBLE: two sA
// buffers, the second k-block stored into the other one, so no barrier is needed between the reads and the stores.
#include <cuda_fp16.h>
#include <stdint.h>

__device__ __forceinline__ uint32_t smem(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

__device__ __forceinline__ uint32_t mapa(uint32_t a, uint32_t rank) {
  uint32_t d;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(d) : "r"(a), "r"(rank));
  return d;
}

__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

#ifdef DOUBLE
#define BUFFERS 2
#else
#define BUFFERS 1
#endif

extern "C" __global__ void __cluster_dims__(2, 1, 1) race_mma(const half* A, const half* B, float* D) {
  __shared__ __align__(16) half sA[BUFFERS][16 * 16];  // A's k-block (row-major), stored by CTA 0
  __shared__ __align__(16) half sB[8 * 32];            // B's columns 8r .. 8r + 7, n-major
  int lane = threadIdx.x, g = lane / 4, t = lane % 4;
  uint32_t rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
  const uint32_t* A32 = reinterpret_cast<const uint32_t*>(A);
  for (int i = lane; i < 8 * 32; i += 32) sB[i] = B[(i % 32) * 16 + 8 * rank + i / 32];
  const uint32_t* sB32 = reinterpret_cast<const uint32_t*>(sB);
  float c[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
  for (int kb = 0; kb < 2; ++kb) {
    uint32_t* sA32 = reinterpret_cast<uint32_t*>(sA[kb % BUFFERS]);
    if (rank == 0) {
      uint32_t peer_a = mapa(smem(sA32), 1);
      for (int i = lane; i < 16 * 8; i += 32) {  // 16 rows of 8 pairs of halves
        uint32_t v = A32[(i / 8) * 16 + 8 * kb + i % 8];
        sA32[i] = v;
        asm volatile("st.shared::cluster.u32 [%0], %1;\n" ::"r"(peer_a + 4 * i), "r"(v) : "memory");
      }
    }
    cluster_sync();  // the k-block stored before either CTA reads it
    uint32_t a0 = sA32[(g * 16 + 2 * t) / 2], a1 = sA32[((g + 8) * 16 + 2 * t) / 2];
    uint32_t a2 = sA32[(g * 16 + 2 * t + 8) / 2], a3 = sA32[((g + 8) * 16 + 2 * t + 8) / 2];
    uint32_t b0 = sB32[(g * 32 + 16 * kb + 2 * t) / 2], b1 = sB32[(g * 32 + 16 * kb + 2 * t + 8) / 2];
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%0, %1, %2, %3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
#if !defined(NO_SYNC) && !defined(DOUBLE)
    if (kb == 0) cluster_sync();  // CTA 1's reads of sA done before CTA 0 stores the next k-block there
#endif
  }
  int col = 8 * rank + 2 * t;
  D[g * 16 + col] = c[0];
  D[g * 16 + col + 1] = c[1];
  D[(g + 8) * 16 + col] = c[2];
  D[(g + 8) * 16 + col + 1] = c[3];
}
