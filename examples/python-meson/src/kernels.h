/* SPDX-License-Identifier: Apache-2.0 */
/* kernels.h -- the CUDA part of rng_meson (kernels.cu), callable from C. */
#ifndef RNG_MESON_KERNELS_H
#define RNG_MESON_KERNELS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What failed: the call, its library (the catalogue name: "curand", "cudart") and its code.
 * load_code: the code is the one the stub returns when it could not load the library (which
 * the library itself may also return: the caller asks libcudaload whether it is loaded). */
typedef struct rng_error {
    const char *call;
    const char *library;
    int code;
    int load_code;
} rng_error;

/* curandGetVersion: 0, or -1 with *err set. */
int rng_curand_version(int *version, rng_error *err);
/* n uniform floats in [-1, 1) at device address x: cuRAND's XORWOW generator seeded with seed,
 * then this module's kernel maps [0, 1) to [-1, 1); synchronous. 0, or -1 with *err set. */
int rng_uniform_symmetric(float *x, size_t n, unsigned long long seed, rng_error *err);

#ifdef __cplusplus
}
#endif

#endif
