/* SPDX-License-Identifier: Apache-2.0 */
// kernel.cu -- a kernel launch and the runtime's version through whatever runtime the target
// links (tests/adopt/ways/runtimes): kernel=<cudaError_t of the launch>, cudart=<status>/<version>.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void touch(int *p) {
    if (p) *p = 1;
}

int main() {
    int v = 0;
    int st = cudaRuntimeGetVersion(&v);
    touch<<<1, 1>>>(nullptr);
    printf("cudart=%d/%d\nkernel=%d\n", st, v, (int)cudaGetLastError());
    return st != 0;
}
