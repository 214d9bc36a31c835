// A hand-written double-precision tensor-core GEMM with inline mma.m8n8k4 .f64 (one 8 x 8 x 4 MMA per warp):
// C[M, N] (f64, row-major) = A[M, K] (f64, row-major) * B[K, N] (f64, row-major).  One warp per CTA computes an
// 8 x 8 tile, each lane loading its element of A and of B straight from global memory.  M % 8 == 0, N % 8 == 0,
// K % 4 == 0.
extern "C" __global__ void dmma_gemm(const double* A, const double* B, double* C, int M, int N, int K) {
  int lane = threadIdx.x % 32;
  int g = lane / 4, t = lane % 4;
  int m0 = blockIdx.y * 8, n0 = blockIdx.x * 8;
  double c0 = 0.0, c1 = 0.0;
  for (int k0 = 0; k0 < K; k0 += 4) {
    double a = A[(m0 + g) * K + k0 + t];
    double b = B[(k0 + t) * N + n0 + g];
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\n"
                 : "+d"(c0), "+d"(c1) : "d"(a), "d"(b));
  }
  C[(m0 + g) * N + n0 + 2 * t] = c0;
  C[(m0 + g) * N + n0 + 2 * t + 1] = c1;
}
