/* SPDX-License-Identifier: Apache-2.0 */
// stub_prog.cu -- an ordinary CUDA program (a kernel launched with <<<>>>, cudaMalloc), built by
// nvcc with -cudart none and linked to libcudaload's stubs (test_stubs.c). Its kernel is
// registered by nvcc's static constructor before main. With STUB_ROOT set, main first calls
// cudaload_init with that directory only (no system search), as an application that brings its own
// roots does, so the runtime can load only then and the registration is replayed.
// Prints key=value lines: numbers, and last errstr= (cudaGetErrorString of count_err's code).
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include "cudaload.h"
#include "cudaload_stubs.h"

__global__ void add_one(float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}

int main() {
    size_t fatbins = 0, kept = 0;
    cudaload_stub_registrations(&fatbins, &kept);
    printf("fatbins=%zu\nkept_before=%zu\n", fatbins, kept);
    const char *root = getenv("STUB_ROOT");
    if (root) {
        cudaload_options o;
        cudaload_options_init(&o);
        o.lib_dirs = root;
        o.sources = CUDALOAD_SOURCE_BIT(CUDALOAD_SOURCE_OVERRIDE);
        o.flags = CUDALOAD_FLAG_DRIVER_OPTIONAL;
        printf("init=%d\n", (int)cudaload_init(&o));
    }
    int v = 0;
    cudaError_t e = cudaRuntimeGetVersion(&v);
    printf("runtime_err=%d\nruntime_version=%d\n", (int)e, v);
    cudaload_stub_registrations(&fatbins, &kept);
    printf("kept_after=%zu\n", kept);
    int n = -1;
    cudaError_t count_err = cudaGetDeviceCount(&n);
    printf("count_err=%d\n", (int)count_err);
    float *x = NULL;
    printf("malloc_err=%d\n", (int)cudaMalloc(&x, 256 * sizeof(float)));
    if (x) cudaMemset(x, 0, 256 * sizeof(float));
    add_one<<<1, 256>>>(x, 256);
    printf("launch_err=%d\n", (int)cudaGetLastError());
    /* on a GPU: the kernel ran (every element 1.0) */
    float h[256] = {0};
    int ok = 0;
    if (x && cudaMemcpy(h, x, sizeof h, cudaMemcpyDeviceToHost) == cudaSuccess)
        for (int i = 0; i < 256; i++) ok += h[i] == 1.0f;
    printf("kernel_ok=%d\n", ok);
    cudaload_library_info info = {};
    info.size = sizeof info;
    cudaload_get_library_info(CUDALOAD_LIB_CUDART, &info);
    printf("cudart_source=%d\ncudart_loaded=%d\n", (int)info.source, info.loaded);
    printf("errstr=%s\n", cudaGetErrorString(count_err));
    return 0;
}
