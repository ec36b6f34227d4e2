/* SPDX-License-Identifier: Apache-2.0 */
/* kernels.h -- the CUDA part of scale_cmake (kernels.cu), callable from C. */
#ifndef SCALE_CMAKE_KERNELS_H
#define SCALE_CMAKE_KERNELS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* cudaRuntimeGetVersion: the cudaError_t (0 = success). */
int scale_runtime_version(int *version);
/* x[i] *= factor for n floats of device memory, on the default stream, then a synchronize:
 * the cudaError_t of the first call that failed (0 = success). */
int scale_device(float *x, size_t n, float factor);
/* 1 when code is what the stub returns for a runtime it could not load
 * (cudaErrorSharedObjectInitFailed; the runtime itself may return it too) */
int scale_runtime_missing(int code);
/* cudaGetErrorName */
const char *scale_error_name(int code);

#ifdef __cplusplus
}
#endif

#endif
