/* SPDX-License-Identifier: Apache-2.0 */
/* _kernels.h -- the CUDA part of saxpy_demo (_kernels.cu, compiled by nvcc -cudart none): a
 * kernel launched with <<<>>> and a cuFFT round trip, calling the CUDA runtime and cuFFT as any
 * CUDA code does. They link against libcudaload's stubs (setup.py), not libcudart/libcufft. */
#ifndef SAXPY_DEMO_KERNELS_H
#define SAXPY_DEMO_KERNELS_H

#ifdef __cplusplus
extern "C" {
#endif

/* What failed: the call (a string literal), its library ("CUDA runtime", "cuFFT") and its code. */
typedef struct demo_error {
    const char *step;
    const char *library;
    int code;
} demo_error;

/* x[i] *= a for n floats of host memory, on the GPU (a kernel). 0, or -1 with *err set. */
int demo_scale(float a, float *x, long long n, demo_error *err);

/* A complex-to-complex FFT of x (n floats as the real parts), forward then inverse, scaled by
 * 1/n: *max_err = max |result - x|. 0, or -1 with *err set. */
int demo_fft_roundtrip(const float *x, long long n, double *max_err, demo_error *err);

/* The runtime's name of a cudaError_t (cudaGetErrorName). */
const char *demo_cuda_error_name(int code);

#ifdef __cplusplus
}
#endif

#endif
