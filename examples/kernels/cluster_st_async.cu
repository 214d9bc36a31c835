// A hand-written exchange of tiles between the two CTAs of a cluster by st.async (inline PTX, sm_90a):
// D[16, 16] (f32, row-major) = A[16, 16] (f16, row-major) * B[16, 16] (f16, row-major), by one cluster of two CTAs
// of one warp each.  CTA r copies A's rows 8r .. 8r + 7 into its own sA and sends them to the other CTA's sA with
// st.async.shared::cluster.mbarrier::complete_tx::bytes (two stores of 4 bytes per thread, through the addresses mapa
// gives for the other CTA's sA and mbarrier); each CTA's mbarrier expects the 256 bytes it receives
// (mbarrier.arrive.expect_tx), and its wait on the mbarrier's phase orders the other CTA's stores before its reads.
// Each CTA copies B's columns 8p .. 8p + 7 (p the other CTA's rank) into its sB (n-major: sB[n][k]) and one
// mma.sync.m16n8k16 computes D[:, 8p .. 8p + 7].  A barrier.cluster after the mbarriers' initialisation makes both
// initialised before either CTA stores into the other's; one before either CTA ends keeps both CTAs' shared memory
// alive while the other's stores land.  -DRED: each CTA zeroes its sA before the first barrier.cluster and the other
// CTA's half arrives by red.async...complete_tx::bytes.add.u32 onto those zeros (an add whose value no order changes).
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

extern "C" __global__ void __cluster_dims__(2, 1, 1) st_async_mma(const half* A, const half* B, float* D) {
  __shared__ __align__(16) half sA[16 * 16];  // A: rows 8r .. 8r + 7 from this CTA, the others from the other CTA
  __shared__ __align__(16) half sB[8 * 16];   // B's columns 8p .. 8p + 7, n-major
  __shared__ __align__(8) uint64_t received;  // completes when the other CTA's 256 bytes have landed
  int lane = threadIdx.x, g = lane / 4, t = lane % 4;
  uint32_t rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
  uint32_t peer = rank ^ 1;
  const uint32_t* A32 = reinterpret_cast<const uint32_t*>(A);
  uint32_t* sA32 = reinterpret_cast<uint32_t*>(sA);
#ifdef RED
  for (int i = lane; i < 16 * 8; i += 32) sA32[i] = 0;
#define SEND "red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32"
#else
#define SEND "st.async.shared::cluster.mbarrier::complete_tx::bytes.b32"
#endif
  if (lane == 0) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(smem(&received)));
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  cluster_sync();
  if (lane == 0)
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 256;\n" ::"r"(smem(&received)) : "memory");
  uint32_t peer_a = mapa(smem(sA), peer), peer_bar = mapa(smem(&received), peer);
  for (int i = lane; i < 8 * 8; i += 32) {  // 8 rows of 8 pairs of halves
    int w = (8 * rank + i / 8) * 8 + i % 8;
    uint32_t v = A32[w];
    sA32[w] = v;
    asm volatile(SEND " [%0], %1, [%2];\n"
                 ::"r"(peer_a + 4 * w), "r"(v), "r"(peer_bar) : "memory");
  }
  for (int i = lane; i < 8 * 16; i += 32) sB[i] = B[(i % 16) * 16 + 8 * peer + i / 16];
  __syncwarp();
  asm volatile("{\n.reg .pred ok;\nRECEIVED_%=:\n"
               "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 ok, [%0], 0;\n"
               "@!ok bra RECEIVED_%=;\n}\n" ::"r"(smem(&received)) : "memory");
  uint32_t* sB32 = reinterpret_cast<uint32_t*>(sB);
  uint32_t b0 = sB32[(g * 16 + 2 * t) / 2], b1 = sB32[(g * 16 + 2 * t + 8) / 2];
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
