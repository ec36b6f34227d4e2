/* SPDX-License-Identifier: Apache-2.0 */
#include <cuda_runtime.h>
__device__ float twice(float x);
__global__ void scale(float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = twice(y[i]);
}
// doubles n floats on the GPU; returns the first CUDA error
int scale_on_gpu(float *host, int n) {
    float *d = nullptr;
    cudaError_t e = cudaMalloc(&d, n * sizeof(float));
    if (e != cudaSuccess) return e;
    cudaMemcpy(d, host, n * sizeof(float), cudaMemcpyHostToDevice);
    scale<<<(n + 127) / 128, 128>>>(d, n);
    e = cudaMemcpy(host, d, n * sizeof(float), cudaMemcpyDeviceToHost);
    cudaFree(d);
    return e;
}
