/* SPDX-License-Identifier: Apache-2.0 */
#include <cufft.h>
__global__ void touch(float *p) { p[threadIdx.x] = 0.0f; }
// a cuFFT plan and a kernel: the status of the first that fails, as an int
int fft_status(void) {
    cufftHandle plan = 0;
    int s = (int)cufftPlan1d(&plan, 64, CUFFT_C2C, 1);
    if (s != 0) return 1000 + s;
    float *d = nullptr;
    cudaError_t e = cudaMalloc(&d, 32 * sizeof(float));
    if (e != cudaSuccess) return 2000 + (int)e;
    touch<<<1, 32>>>(d);
    e = cudaDeviceSynchronize();
    cudaFree(d);
    cufftDestroy(plan);
    return (int)e;
}
