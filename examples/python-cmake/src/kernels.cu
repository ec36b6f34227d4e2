/* SPDX-License-Identifier: Apache-2.0 */
// kernels.cu -- a kernel launched with <<<>>> and two runtime calls, written as for -lcudart.
// Compiled without a runtime (CMAKE_CUDA_RUNTIME_LIBRARY None): libcudaload's cudart stub
// defines cudaRuntimeGetVersion, cudaLaunchKernel and nvcc's registration entry points, and
// forwards them to the libcudart libcudaload finds at run time.
#include <cuda_runtime.h>

#include "kernels.h"

__global__ void scale_kernel(float *x, size_t n, float factor) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        x[i] *= factor;
}

int scale_runtime_version(int *version) { return (int)cudaRuntimeGetVersion(version); }

int scale_device(float *x, size_t n, float factor) {
    if (n == 0) return 0;
    size_t blocks = (n + 255) / 256;
    scale_kernel<<<(unsigned)(blocks < 4096 ? blocks : 4096), 256>>>(x, n, factor);
    cudaError_t e = cudaGetLastError();
    return (int)(e != cudaSuccess ? e : cudaDeviceSynchronize());
}

int scale_runtime_missing(int code) { return code == cudaErrorSharedObjectInitFailed; }

const char *scale_error_name(int code) { return cudaGetErrorName((cudaError_t)code); }
