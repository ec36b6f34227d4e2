/* SPDX-License-Identifier: Apache-2.0 */
// kernels.cu -- cuRAND's host API and a kernel launched with <<<>>>, written as for
// -lcurand -lcudart. Linked with libcudaload's stubs instead (meson.build): they forward each
// call to the libcurand and libcudart libcudaload finds at run time.
#include <cuda_runtime.h>
#include <curand.h>

#include "kernels.h"

__global__ void to_symmetric(float *x, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        x[i] = 2.0f * x[i] - 1.0f;
}

static int curand_failed(rng_error *err, const char *call, curandStatus_t st) {
    *err = rng_error{call, "curand", (int)st, st == CURAND_STATUS_INITIALIZATION_FAILED};
    return -1;
}

static int runtime_failed(rng_error *err, const char *call, cudaError_t e) {
    *err = rng_error{call, "cudart", (int)e, e == cudaErrorSharedObjectInitFailed};
    return -1;
}

extern "C" int rng_curand_version(int *version, rng_error *err) {
    curandStatus_t st = curandGetVersion(version);
    return st == CURAND_STATUS_SUCCESS ? 0 : curand_failed(err, "curandGetVersion", st);
}

extern "C" int rng_uniform_symmetric(float *x, size_t n, unsigned long long seed, rng_error *err) {
    if (n == 0) return 0;
    curandGenerator_t gen;
    curandStatus_t st = curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_XORWOW);
    if (st != CURAND_STATUS_SUCCESS) return curand_failed(err, "curandCreateGenerator", st);
    st = curandSetPseudoRandomGeneratorSeed(gen, seed);
    if (st == CURAND_STATUS_SUCCESS) st = curandGenerateUniform(gen, x, n);
    curandDestroyGenerator(gen);
    if (st != CURAND_STATUS_SUCCESS) return curand_failed(err, "curandGenerateUniform", st);
    size_t blocks = (n + 255) / 256;
    to_symmetric<<<(unsigned)(blocks < 4096 ? blocks : 4096), 256>>>(x, n);
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    return e == cudaSuccess ? 0 : runtime_failed(err, "to_symmetric<<<>>>", e);
}
