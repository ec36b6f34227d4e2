/* SPDX-License-Identifier: Apache-2.0 */
// vecadd.cu -- a plain CUDA program, written as for -lcudart -lcublas: a kernel launched with
// <<<>>>, cudaMalloc/cudaMemcpy, and cuBLAS. `make vecadd` builds it unchanged against
// libcudaload's stubs (nvcc -cudart none): no CUDA library in DT_NEEDED; the runtime and cuBLAS
// are found at the first call, in libcudaload's order (docs/stubs.md).
//   y = 2*x + 1 (the kernel), then y += 3*x (cublasSaxpy): every element of y must be 5*x + 1
//   (to float rounding).
// Exit: 0 correct; 1 a CUDA or cuBLAS error (printed with its code); 2 a wrong result.
#include <cmath>
#include <cstdio>
#include <cublas_v2.h>
#include <cuda_runtime.h>

__global__ void affine(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i] + 1.0f;
}

#define CHECK(call)                                                                     \
    do {                                                                                \
        cudaError_t e_ = (call);                                                        \
        if (e_ != cudaSuccess) {                                                        \
            fprintf(stderr, "%s: %s (%d)\n", #call, cudaGetErrorName(e_), (int)e_);     \
            return 1;                                                                   \
        }                                                                               \
    } while (0)

int main() {
    const int n = 1 << 20;
    static float hx[1 << 20], hy[1 << 20];
    for (int i = 0; i < n; i++) hx[i] = (float)(i % 1000) / 7.0f;
    int rt = 0;
    CHECK(cudaRuntimeGetVersion(&rt));
    printf("CUDA runtime %d.%d\n", rt / 1000, rt % 1000 / 10);
    float *x, *y;
    CHECK(cudaMalloc(&x, n * sizeof(float)));
    CHECK(cudaMalloc(&y, n * sizeof(float)));
    CHECK(cudaMemcpy(x, hx, n * sizeof(float), cudaMemcpyHostToDevice));
    affine<<<(n + 255) / 256, 256>>>(x, y, n);
    CHECK(cudaGetLastError());
    cublasHandle_t h;
    cublasStatus_t s = cublasCreate(&h);
    if (s != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "cublasCreate: %s (%d)\n", cublasGetStatusName(s), (int)s);
        return 1;
    }
    const float three = 3.0f;
    s = cublasSaxpy(h, n, &three, x, 1, y, 1);
    if (s != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "cublasSaxpy: %s (%d)\n", cublasGetStatusName(s), (int)s);
        return 1;
    }
    CHECK(cudaMemcpy(hy, y, n * sizeof(float), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < n; i++) {
        float want = 5.0f * hx[i] + 1.0f; /* two roundings on the GPU, one here: within a few ulp */
        bad += fabsf(hy[i] - want) > 5e-7f * fabsf(want);
    }
    cublasDestroy(h);
    cudaFree(x);
    cudaFree(y);
    printf("%s: %d of %d elements wrong\n", bad ? "FAIL" : "PASS", bad, n);
    return bad ? 2 : 0;
}
