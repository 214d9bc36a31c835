// A hand-written TMA multicast in a cluster of two CTAs (inline PTX, sm_90a): D[16, 16] (f32, row-major) =
// A[16, 16] (f16, row-major) * B[16, 16] (f16, row-major), by one cluster of two CTAs of one warp each.
// Thread 0 of each CTA initialises the CTA's mbarrier and expects A's 512 bytes on it, and the cluster meets at
// barrier.cluster (both mbarriers are initialised before the copy can reach them).  Thread 0 of CTA 0 then issues
// one cp.async.bulk.tensor...multicast::cluster with the CTA mask 0b11: A's 16 x 16 box (the tensor map: no
// swizzle) lands in both CTAs' shared memory at sA's offset, and each CTA's mbarrier at bar's offset takes its
// bytes.  Every thread of each CTA waits on its own mbarrier, reads its A fragment from sA, its B fragment from
// global memory (CTA r's columns 8r .. 8r + 7), and one mma.sync.m16n8k16 computes D[:, 8r .. 8r + 7].
// -DMASK=1: the copy reaches CTA 0 only (a planted bug: CTA 1 waits for ever).
#include <cuda_fp16.h>
#include <stdint.h>

#ifndef MASK
#define MASK 3
#endif

struct __align__(64) TensorMap { unsigned char bytes[128]; };

__device__ __forceinline__ uint32_t smem(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

extern "C" __global__ void __cluster_dims__(2, 1, 1) multicast_mma(const __grid_constant__ TensorMap tmA,
                                                                    const half* B, float* D) {
  __shared__ __align__(128) half sA[16 * 16];
  __shared__ __align__(8) uint64_t bar;
  int lane = threadIdx.x, g = lane / 4, t = lane % 4;
  uint32_t rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
  if (lane == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(smem(&bar)));
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 512;\n" ::"r"(smem(&bar)) : "memory");
  }
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
  if (rank == 0 && lane == 0)
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
                 " [%0], [%1, {%2, %3}], [%4], %5;\n"
                 ::"r"(smem(sA)), "l"(&tmA), "r"(0), "r"(0), "r"(smem(&bar)), "h"((uint16_t)MASK) : "memory");
  asm volatile("{\n.reg .pred done;\nWAIT_%=:\n"
               "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], 0;\n"
               "@!done bra WAIT_%=;\n}\n" ::"r"(smem(&bar)) : "memory");
  const uint32_t* a32 = reinterpret_cast<const uint32_t*>(sA);
  uint32_t a0 = a32[(g * 16 + 2 * t) / 2], a1 = a32[((g + 8) * 16 + 2 * t) / 2];
  uint32_t a2 = a32[(g * 16 + 2 * t + 8) / 2], a3 = a32[((g + 8) * 16 + 2 * t + 8) / 2];
  int n = 8 * rank + g;
  half2 h0 = __halves2half2(B[(2 * t) * 16 + n], B[(2 * t + 1) * 16 + n]);
  half2 h1 = __halves2half2(B[(2 * t + 8) * 16 + n], B[(2 * t + 9) * 16 + n]);
  uint32_t b0 = *reinterpret_cast<uint32_t*>(&h0), b1 = *reinterpret_cast<uint32_t*>(&h1);
  float c[4] = {0.f, 0.f, 0.f, 0.f};
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
               "{%0, %1, %2, %3};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  int col = 8 * rank + 2 * t;
  D[g * 16 + col] = c[0];
  D[g * 16 + col + 1] = c[1];
  D[(g + 8) * 16 + col] = c[2];
  D[(g + 8) * 16 + col + 1] = c[3];
}
