/* SPDX-License-Identifier: Apache-2.0 */
// A kernel, a cuBLAS call and the runtime: what a CUDA project's build needs from a toolkit
// (nvcc, cicc, ptxas, fatbinary, the headers, libcudart, libcublas). Without a GPU it reports
// the runtime's answer and exits 0: the point is that it builds, links and starts.
#include <cstdio>
#include <cublas_v2.h>
#include <cuda_runtime.h>

__global__ void saxpy(int n, float a, const float *x, float *y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

int main() {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    std::printf("cudaGetDeviceCount: %s, %d device(s)\n", cudaGetErrorString(e), n);
    if (e != cudaSuccess || n == 0) return 0;
    const int N = 1 << 10;
    float *x, *y;
    cudaMalloc(&x, N * sizeof(float));
    cudaMalloc(&y, N * sizeof(float));
    saxpy<<<(N + 255) / 256, 256>>>(N, 2.0f, x, y);
    cublasHandle_t h;
    if (cublasCreate(&h) == CUBLAS_STATUS_SUCCESS) {
        float alpha = 1.0f;
        cublasSaxpy(h, N, &alpha, x, 1, y, 1);
        cublasDestroy(h);
    }
    std::printf("kernel and cublasSaxpy: %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
    cudaFree(x);
    cudaFree(y);
    return 0;
}
