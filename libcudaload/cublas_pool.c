/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cublas_pool.c -- the cuBLAS fallback of SAXPY and SGEMM: cuBLAS loaded on first use, the
 * call's device made current for it, and a pool of idle handles per device (a handle's stream
 * and workspace are state: a call takes one for itself and gives it back; up to CL_BLAS_POOL
 * are kept).
 */
#define _GNU_SOURCE
#include "cudaload_tables.h"
#include "internal.h"

/* The state (devices, backend, lock) is cl_ctx.kernels (internal.h). */
#define K cl_ctx.kernels

cudaload_status cl_kernels_cublas(const cudaload_cublas_table **out) {
    *out = NULL;
    cudaload_status st = cudaload_load_cublas();
    if (st != CUDALOAD_OK) return st;
    *out = cudaload_cublas();
    return *out ? CUDALOAD_OK : CUDALOAD_ERROR_NOT_FOUND; /* not reached: loaded means a table */
}

/* cuBLAS runs on the runtime's current device, and ties a handle to the device current when it
 * is made: dev becomes current for the call; *prev is the device to go back to, or -1. */
cudaload_status cl_blas_enter(int dev, int *prev) {
    const cudaload_cudart_table *rt = cudaload_cudart();
    int cur = -1;
    *prev = -1;
    cudaError_t e = rt ? rt->cudaGetDevice(&cur) : cudaErrorInitializationError;
    if (e == cudaSuccess && cur != dev && (e = rt->cudaSetDevice(dev)) == cudaSuccess) *prev = cur;
    if (e != cudaSuccess) {
        cl_set_errorf("making device %d current for cuBLAS failed: %s (%d)", dev,
                      rt ? rt->cudaGetErrorName(e) : "no CUDA runtime loaded", (int)e);
        return CUDALOAD_ERROR_CUDA;
    }
    return CUDALOAD_OK;
}

void cl_blas_leave(int prev) {
    if (prev >= 0) cudaload_cudart()->cudaSetDevice(prev);
}

/* A cuBLAS handle of dev for this call alone, on stream: an idle one, else a new one (dev is
 * current: cl_blas_enter). No lock is held while cuBLAS runs, and no two threads share a
 * handle (its stream and workspace are state). */
cudaload_status cl_blas_take(int dev, void *stream, const cudaload_cublas_table **out, cublasHandle_t *h) {
    /* the status of loading cuBLAS itself (NOT_FOUND, OVERRIDE_UNUSABLE, MAJOR_MISMATCH, ...),
     * with its message already set by cudaload_load_cublas */
    const cudaload_cublas_table *b = NULL;
    cudaload_status st = cl_kernels_cublas(&b);
    if (st != CUDALOAD_OK) return st;
    cl_device_kernels *k = &K.dev[dev];
    *h = NULL;
    cl_klock();
    if (k->n_blas_idle > 0) *h = k->blas_idle[--k->n_blas_idle];
    cl_kunlock();
    cublasStatus_t s = CUBLAS_STATUS_SUCCESS;
    if (!*h) s = b->cublasCreate(h);
    if (s == CUBLAS_STATUS_SUCCESS) s = b->cublasSetStream(*h, (cudaStream_t)stream);
    if (s != CUBLAS_STATUS_SUCCESS) {
        cl_set_errorf("cuBLAS handle on device %d: %s", dev, b->cublasGetStatusName(s));
        if (*h) b->cublasDestroy(*h);
        *h = NULL;
        return CUDALOAD_ERROR_CUDA;
    }
    *out = b;
    return CUDALOAD_OK;
}

/* Back to dev's idle handles; beyond CL_BLAS_POOL of them it is destroyed (dev is current). */
void cl_blas_give(int dev, const cudaload_cublas_table *b, cublasHandle_t h) {
    cl_device_kernels *k = &K.dev[dev];
    cl_klock();
    int kept = k->n_blas_idle < CL_BLAS_POOL;
    if (kept) k->blas_idle[k->n_blas_idle++] = h;
    cl_kunlock();
    if (!kept) b->cublasDestroy(h);
}

cudaload_status cl_blas_status(const cudaload_cublas_table *b, cublasStatus_t s, const char *what) {
    if (s == CUBLAS_STATUS_SUCCESS) return CUDALOAD_OK;
    cl_set_errorf("%s failed: %s (%s)", what, b->cublasGetStatusName(s), b->cublasGetStatusString(s));
    return CUDALOAD_ERROR_CUDA;
}
