// A hand-written exchange through distributed shared memory in a cluster of two CTAs (inline PTX, sm_90a):
// D[16, 16] (f32, row-major) = A[16, 16] (f16, row-major) * B[16, 16] (f16, row-major), by one cluster of two CTAs
// of one warp each.  CTA r copies A's rows 8r .. 8r + 7 into its own sA and, through the address mapa gives for the
// other CTA's sA, into the other CTA's (st.shared::cluster), and B's columns 8r .. 8r + 7 into its own sB (n-major:
// sB[n][k]).  The cluster meets at barrier.cluster; then each CTA reads its A fragment from its own sA (half of it
// stored there by the other CTA) and its B fragment from the other CTA's sB (ld.shared::cluster), and one
// mma.sync.m16n8k16 computes D[:, 8p .. 8p + 7], p the other CTA's rank.  The cluster meets again before either CTA
// ends (the other CTA still reads its sB until then).  -DEARLY_LOAD: the B fragment is read from the other CTA
// before the first barrier.cluster (a planted bug).  -DMBARRIER: the first barrier.cluster is an mbarrier of each
// CTA instead: the other CTA's 32 threads arrive on it (mbarrier.arrive.release.cluster through mapa's address) once
// they have stored, and each CTA waits on its own (acquire.cluster) before it reads; a barrier.cluster after the
// mbarriers' initialisation makes both initialised before either CTA arrives on the other's.
#include <cuda_fp16.h>
#include <stdint.h>

__device__ __forceinline__ uint32_t smem(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

__device__ __forceinline__ uint32_t mapa(uint32_t a, uint32_t rank) {
  uint32_t d;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(d) : "r"(a), "r"(rank));
  return d;
}

__device__ __forceinline__ uint32_t ld_remote(uint32_t a) {
  uint32_t v;
  asm volatile("ld.shared::cluster.u32 %0, [%1];\n" : "=r"(v) : "r"(a) : "memory");
  return v;
}

__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

extern "C" __global__ void __cluster_dims__(2, 1, 1) dsmem_mma(const half* A, const half* B, float* D) {
  __shared__ __align__(16) half sA[16 * 16];  // A: rows 8r .. 8r + 7 from this CTA, the others from the other CTA
  __shared__ __align__(16) half sB[8 * 16];   // B's columns 8r .. 8r + 7, n-major
  int lane = threadIdx.x, g = lane / 4, t = lane % 4;
  uint32_t rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
  uint32_t peer = rank ^ 1;
#ifdef MBARRIER
  __shared__ __align__(8) uint64_t stored;  // the other CTA's threads arrive on it once they have stored
  if (lane == 0) asm volatile("mbarrier.init.shared::cta.b64 [%0], 32;\n" ::"r"(smem(&stored)));
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  cluster_sync();
#endif
  uint32_t peer_a = mapa(smem(sA), peer);
  const uint32_t* A32 = reinterpret_cast<const uint32_t*>(A);
  uint32_t* sA32 = reinterpret_cast<uint32_t*>(sA);
  for (int i = lane; i < 8 * 8; i += 32) {  // 8 rows of 8 pairs of halves
    int w = (8 * rank + i / 8) * 8 + i % 8;
    uint32_t v = A32[w];
    sA32[w] = v;
    asm volatile("st.shared::cluster.u32 [%0], %1;\n" ::"r"(peer_a + 4 * w), "r"(v) : "memory");
  }
  for (int i = lane; i < 8 * 16; i += 32) sB[i] = B[(i % 16) * 16 + 8 * rank + i / 16];
  uint32_t peer_b = mapa(smem(sB), peer) + 2 * (g * 16 + 2 * t);
#ifdef EARLY_LOAD
  uint32_t b0 = ld_remote(peer_b), b1 = ld_remote(peer_b + 16);
#endif
#ifdef MBARRIER
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(mapa(smem(&stored), peer))
               : "memory");
  asm volatile("{\n.reg .pred ok;\nSTORED_%=:\n"
               "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 ok, [%0], 0;\n"
               "@!ok bra STORED_%=;\n}\n" ::"r"(smem(&stored)) : "memory");
#else
  cluster_sync();
#endif
#ifndef EARLY_LOAD
  uint32_t b0 = ld_remote(peer_b), b1 = ld_remote(peer_b + 16);
#endif
  uint32_t a0 = sA32[(g * 16 + 2 * t) / 2], a1 = sA32[((g + 8) * 16 + 2 * t) / 2];
  uint32_t a2 = sA32[(g * 16 + 2 * t + 8) / 2], a3 = sA32[((g + 8) * 16 + 2 * t + 8) / 2];
  float c[4] = {0.f, 0.f, 0.f, 0.f};
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
               "{%0, %1, %2, %3};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  cluster_sync();
  int col = 8 * peer + 2 * t;
  D[g * 16 + col] = c[0];
  D[g * 16 + col + 1] = c[1];
  D[(g + 8) * 16 + col] = c[2];
  D[(g + 8) * 16 + col + 1] = c[3];
}
