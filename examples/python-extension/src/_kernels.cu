/* SPDX-License-Identifier: Apache-2.0 */
// _kernels.cu -- saxpy_demo's CUDA code, written as for -lcudart -lcufft: a kernel launched
// with <<<>>> and a cuFFT plan. setup.py compiles it with nvcc -cudart none and links it with
// libcudaload's stubs (libcudaload-cufft.a, libcudaload-cudart.a) and libcudaload.a: the
// module has no CUDA DT_NEEDED, and the runtime and cuFFT are the ones libcudaload finds from
// the roots the module passes at import (docs/stubs.md in libcudaload).
#include <cuda_runtime.h>
#include <cufft.h>

#include <math.h>
#include <stdlib.h>

#include "_kernels.h"

__global__ void scale_kernel(float a, float *x, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}

static int fail(demo_error *err, const char *step, const char *library, int code) {
    err->step = step;
    err->library = library;
    err->code = code;
    return -1;
}

#define CUDA_TRY(call)                                                  \
    do {                                                                \
        cudaError_t e_ = (call);                                        \
        if (e_ != cudaSuccess) {                                        \
            rc = fail(err, #call, "CUDA runtime", (int)e_);             \
            goto out;                                                   \
        }                                                               \
    } while (0)
#define CUFFT_TRY(call)                                                 \
    do {                                                                \
        cufftResult r_ = (call);                                        \
        if (r_ != CUFFT_SUCCESS) {                                      \
            rc = fail(err, #call, "cuFFT", (int)r_);                    \
            goto out;                                                   \
        }                                                               \
    } while (0)

extern "C" int demo_scale(float a, float *x, long long n, demo_error *err) {
    int rc = 0;
    float *d = NULL;
    size_t bytes = (size_t)n * sizeof(float);
    if (n <= 0) return 0;
    CUDA_TRY(cudaMalloc((void **)&d, bytes));
    CUDA_TRY(cudaMemcpy(d, x, bytes, cudaMemcpyHostToDevice));
    scale_kernel<<<(unsigned)((n + 255) / 256), 256>>>(a, d, n);
    CUDA_TRY(cudaGetLastError());
    CUDA_TRY(cudaMemcpy(x, d, bytes, cudaMemcpyDeviceToHost));
out:
    if (d) cudaFree(d);
    return rc;
}

extern "C" int demo_fft_roundtrip(const float *x, long long n, double *max_err, demo_error *err) {
    int rc = 0;
    cufftHandle plan = 0;
    int have_plan = 0;
    cufftComplex *h = NULL, *d = NULL;
    size_t bytes = (size_t)n * sizeof(cufftComplex);
    *max_err = 0.0;
    if (n <= 0) return 0;
    if (n > 1 << 28) return fail(err, "n too large", "saxpy_demo", (int)CUFFT_INVALID_SIZE);
    h = (cufftComplex *)malloc(bytes);
    if (!h) return fail(err, "malloc", "saxpy_demo", (int)CUFFT_ALLOC_FAILED);
    for (long long i = 0; i < n; i++) {
        h[i].x = x[i];
        h[i].y = 0.0f;
    }
    CUFFT_TRY(cufftPlan1d(&plan, (int)n, CUFFT_C2C, 1));
    have_plan = 1;
    CUDA_TRY(cudaMalloc((void **)&d, bytes));
    CUDA_TRY(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice));
    CUFFT_TRY(cufftExecC2C(plan, d, d, CUFFT_FORWARD));
    CUFFT_TRY(cufftExecC2C(plan, d, d, CUFFT_INVERSE));
    CUDA_TRY(cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost));
    for (long long i = 0; i < n; i++) {
        double re = h[i].x / (double)n - x[i], im = h[i].y / (double)n;
        double e = sqrt(re * re + im * im);
        if (e > *max_err) *max_err = e;
    }
out:
    if (have_plan) cufftDestroy(plan);
    if (d) cudaFree(d);
    free(h);
    return rc;
}

extern "C" const char *demo_cuda_error_name(int code) { return cudaGetErrorName((cudaError_t)code); }
