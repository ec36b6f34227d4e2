/* SPDX-License-Identifier: Apache-2.0 */
// A kernel and the runtime, nothing else; its project chose nvcc's shared runtime.
#include <cstdio>
__global__ void fill(int *p) { p[threadIdx.x] = (int)threadIdx.x; }
int main() {
    int *d = nullptr;
    cudaError_t e = cudaMalloc(&d, 32 * sizeof(int));
    printf("cudaMalloc=%d\n", (int)e);
    if (e != cudaSuccess) return e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice ? 2 : 1;
    fill<<<1, 32>>>(d);
    int h[32];
    e = cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    int ok = e == cudaSuccess;
    for (int i = 0; i < 32; i++) ok = ok && h[i] == i;
    printf("result=%s\n", ok ? "ok" : "wrong");
    return ok ? 0 : 1;
}
