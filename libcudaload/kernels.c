/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kernels.c -- step 5 of the walk: launch. The public calls: cudaload_saxpy and cudaload_sgemm
 * (their arguments checked, the device their operands are on, the backend chosen, then the
 * bundled kernels or cuBLAS), cudaload_set_backend and cudaload_kernels_info_get.
 *
 * The bundled SAXPY and SGEMM kernels (kernels/saxpy.cu and sgemm.cu, compiled into one fatbin
 * embedded in the library by fatbin.S) are loaded from memory into the device's primary context
 * on first use and gated there (kernels_device.c); a product is planned (sgemm_plan.c) and the
 * kernels launched with cuLaunchKernel on the caller's stream (kernels_launch.c); cuBLAS is the
 * fallback (cublas_pool.c). The primary context is the one the runtime uses, so pointers from
 * cudaMalloc, PyTorch and CuPy work unchanged.
 */
#define _GNU_SOURCE
#include "cudaload_tables.h"
#include "internal.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The state (devices, backend, lock) is cl_ctx.kernels (internal.h). */
#define K cl_ctx.kernels
static _Thread_local cudaload_backend cl_last_backend = CUDALOAD_BACKEND_AUTO;
static _Thread_local int cl_last_device = -1;

cudaload_status cudaload_set_backend(cudaload_backend backend) {
    if (backend != CUDALOAD_BACKEND_AUTO && backend != CUDALOAD_BACKEND_BUNDLED && backend != CUDALOAD_BACKEND_CUBLAS) {
        cl_set_errorf("cudaload_set_backend: %d is not a backend (0 auto, 1 bundled, 2 cublas)", (int)backend);
        return CUDALOAD_ERROR_INVALID_ARGUMENT;
    }
    /* an explicit choice outranks the environment: once stored, cl_backend_now never reads it */
    atomic_store_explicit(&K.backend, (int)backend + 1, memory_order_release);
    return CUDALOAD_OK;
}

/* The backend of a call: cudaload_set_backend's, else CUDALOAD_BACKEND as validated by
 * cudaload_init() (config.c: a bad value fails init with INVALID_OPTION, so it is never
 * silently taken as auto), read once; one atomic load once chosen. */
static cudaload_backend cl_backend_now(void) {
    int b = atomic_load_explicit(&K.backend, memory_order_acquire);
    if (b > 0) return (cudaload_backend)(b - 1);
    int env = cl_config_backend(), none = 0;
    b = (env >= 0 ? env : (int)CUDALOAD_BACKEND_AUTO) + 1;
    /* only if nothing was chosen meanwhile: a cudaload_set_backend() of another thread wins */
    if (!atomic_compare_exchange_strong(&K.backend, &none, b)) b = none;
    return (cudaload_backend)(b - 1);
}

/* Which backend a call takes on dev. */
static cudaload_status cl_choose(int dev, cudaload_backend *use) {
    cudaload_backend want = cl_backend_now();
    if (want == CUDALOAD_BACKEND_CUBLAS) {
        *use = CUDALOAD_BACKEND_CUBLAS;
        return CUDALOAD_OK;
    }
    cudaload_status st = cl_device_ready(dev);
    if (st == CUDALOAD_OK) {
        *use = CUDALOAD_BACKEND_BUNDLED;
        return CUDALOAD_OK;
    }
    if (want == CUDALOAD_BACKEND_BUNDLED) return st;
    /* AUTO: the bundled kernels cannot run here; cuBLAS can do the same work */
    cl_debug("kernels: falling back to cuBLAS on device %d: %s", dev, cudaload_last_error());
    *use = CUDALOAD_BACKEND_CUBLAS;
    return CUDALOAD_OK;
}

cudaload_status cudaload_kernels_info_get(int device, cudaload_kernels_info *out) {
    if (!out || out->size < CL_KERNELS_INFO_SIZE_V1) {
        cl_set_errorf("cudaload_kernels_info_get: out is NULL or its size (%zu) is smaller than the first version's "
                      "cudaload_kernels_info (%zu): set it to sizeof(cudaload_kernels_info)",
                      out ? out->size : 0, (size_t)CL_KERNELS_INFO_SIZE_V1);
        return CUDALOAD_ERROR_INVALID_ARGUMENT;
    }
    cudaload_kernels_info full;
    memset(&full, 0, sizeof full);
    full.size = sizeof full;
    cl_kernels_build_info(&full);
    full.device = device;
    full.last_backend = cl_last_backend;
    full.last_device = cl_last_device;
    full.runnable = CUDALOAD_ERROR_NOT_ATTEMPTED;
    cudaload_status st = CUDALOAD_OK;
    if (device >= CL_MAX_DEVICES) {
        cl_set_errorf("device %d is beyond the %d devices libcudaload tracks", device, CL_MAX_DEVICES);
        st = CUDALOAD_ERROR_INVALID_ARGUMENT;
    } else if (device >= 0 && !cudaload_is_initialized()) {
        cl_set_error("libcudaload is not initialized: call cudaload_init() first");
        st = CUDALOAD_ERROR_NOT_INITIALIZED;
    } else if (device >= 0) {
        full.runnable = cl_device_ready(device);
        cl_klock(); /* the fields of a device not ready yet (a transient failure) may change */
        cl_device_kernels *k = &K.dev[device];
        full.cc_major = k->cc_major;
        full.cc_minor = k->cc_minor;
        full.has_sass = k->has_sass;
        full.would_jit = k->would_jit;
        cl_kunlock();
    }
    cl_info_copy_out(out, out->size, &full, sizeof full);
    return st;
}

/* ---- SAXPY ---- */

cudaload_status cudaload_saxpy(long long n, float a, const float *x, float *y, void *stream) {
    if (n < 0) {
        cl_set_errorf("cudaload_saxpy: n = %lld is negative", n);
        return CUDALOAD_ERROR_INVALID_ARGUMENT;
    }
    if (n == 0) return CUDALOAD_OK;
    if (!x || !y || cl_misaligned(x, sizeof(float)) || cl_misaligned(y, sizeof(float))) {
        cl_set_errorf("cudaload_saxpy: x = %p, y = %p: %s", (const void *)x, (void *)y,
                      !x || !y ? "NULL pointer" : "not aligned to 4 bytes (a float)");
        return CUDALOAD_ERROR_INVALID_ARGUMENT;
    }
    int dev;
    const void *ptrs[] = {x, y};
    static const char *const names[] = {"x", "y"};
    cudaload_status st = cl_call_device("cudaload_saxpy", ptrs, names, 2, &dev);
    if (st != CUDALOAD_OK) return st;
    return cl_kernels_saxpy_on(dev, n, a, x, y, stream);
}

cudaload_status cl_kernels_saxpy_on(int dev, long long n, float a, const float *x, float *y, void *stream) {
    cudaload_status st;
    if (dev < 0 || dev >= CL_MAX_DEVICES) {
        cl_set_errorf("device %d is beyond the %d devices libcudaload tracks", dev, CL_MAX_DEVICES);
        return CUDALOAD_ERROR_INVALID_ARGUMENT;
    }
    cudaload_backend use = CUDALOAD_BACKEND_AUTO;
    if ((st = cl_choose(dev, &use)) != CUDALOAD_OK) return st;
    cl_last_backend = use;
    cl_last_device = dev;
    if (use == CUDALOAD_BACKEND_BUNDLED) {
        /* float4 path when both are 16-byte aligned; the scalar kernel does the rest */
        long long n4 = (!cl_misaligned(x, 16) && !cl_misaligned(y, 16)) ? n / 4 : 0;
        if (n4 > 0) {
            /* one float4 per thread in blocks of 1024: kernels/saxpy.cu VEC_PER_THREAD, SAXPY_THREADS */
            const long long per_block = 1024;
            long long blocks = (n4 + per_block - 1) / per_block;
            if (blocks > INT_MAX) {
                cl_set_errorf("cudaload_saxpy: n = %lld needs %lld blocks, more than a grid holds", n, blocks);
                return CUDALOAD_ERROR_INVALID_ARGUMENT;
            }
            void *args[] = {&n4, &a, &x, &y};
            if ((st = cl_launch(dev, CL_K_SAXPY_VEC4, (unsigned)blocks, 1, (unsigned)per_block, args, stream)) != CUDALOAD_OK)
                return st;
        }
        long long rest = n - n4 * 4;
        if (rest > 0) {
            const float *xr = x + n4 * 4;
            float *yr = y + n4 * 4;
            long long blocks = (rest + 255) / 256;
            long long sms = K.dev[dev].sms > 0 ? K.dev[dev].sms : 1;
            if (blocks > sms * 32) blocks = sms * 32;
            void *args[] = {&rest, &a, &xr, &yr};
            st = cl_launch(dev, CL_K_SAXPY_SCALAR, (unsigned)blocks, 1, 256, args, stream);
        }
        return st;
    }
    const cudaload_cublas_table *b = NULL;
    cublasHandle_t h = NULL;
    int prev = -1;
    if ((st = cl_blas_enter(dev, &prev)) == CUDALOAD_OK && (st = cl_blas_take(dev, stream, &b, &h)) == CUDALOAD_OK) {
        for (long long done = 0; st == CUDALOAD_OK && done < n;) {
            int chunk = n - done > INT_MAX ? INT_MAX : (int)(n - done);
            st = cl_blas_status(b, b->cublasSaxpy(h, chunk, &a, x + done, 1, y + done, 1), "cublasSaxpy_v2");
            done += chunk;
        }
        cl_blas_give(dev, b, h);
    }
    cl_blas_leave(prev);
    return st;
}

/* ---- SGEMM ---- */

/* Elements a column-major rows x cols matrix with leading dimension ld spans, or -1 on overflow. */
static long long cl_span(long long rows, long long cols, long long ld) {
    long long s;
    if (rows == 0 || cols == 0) return 0;
    if (__builtin_mul_overflow(ld, cols - 1, &s) || __builtin_add_overflow(s, rows, &s)) return -1;
    if (s > (long long)(SIZE_MAX / sizeof(float))) return -1;
    return s;
}

/* C = alpha * op(A) op(B) + beta * C through the bundled kernels on dev (ready), k = 0 when
 * A and B are not to be read. */
static cudaload_status cl_sgemm_bundled(int dev, int ta, int tb, long long m, long long n, int k, float alpha, const float *A,
                                        long long lda, const float *B, long long ldb, float beta, float *C, long long ldc,
                                        void *stream) {
    const cl_device_kernels *kd = &K.dev[dev];
    const cudaload_driver_table *d = kd->drv;
    long long sms = kd->sms > 0 ? kd->sms : 1;
    cl_sgemm_plan p;
    cl_sgemm_plan_make(&p, kd->pool != NULL, sms, ta, tb, m, n, k, A, lda, B, ldb);
    int mi = (int)m;
    if (p.splits == 1 && p.launch_n == p.tiles_n) {
        /* one launch (no split, one grid of every tile: every small call), made without entering
         * the context first (cl_launch) */
        int ni = (int)n;
        long long c_split = 0;
        void *args[] = {&mi, &ni, &k, &alpha, &A, &lda, &B, &ldb, &beta, &C, &ldc, &k, &c_split};
        return cl_launch(dev, CL_K_SGEMM_FIRST + 4 * p.tile + 2 * ta + tb, (unsigned)p.tiles_m, (unsigned)p.tiles_n,
                         (unsigned)cl_sgemm_tiles[p.tile].threads, args, stream);
    }
    /* the scratch is allocated in the context, and the launches follow */
    int pushed;
    cudaload_status st = cl_ctx_enter(d, dev, "cudaload_sgemm", &pushed);
    if (st != CUDALOAD_OK) return st;
    CUdeviceptr scratch = 0;
    if (p.bytes_w && d->cuMemAllocFromPoolAsync(&scratch, p.bytes_w, kd->pool, (CUstream)stream) != CUDA_SUCCESS) {
        /* no memory for the partial products: no split, slower, the same result */
        cl_debug("sgemm: %zu bytes of scratch not had on device %d: no split", p.bytes_w, dev);
        scratch = 0;
        cl_sgemm_plan_make(&p, 0, sms, ta, tb, m, n, k, A, lda, B, ldb);
    }
    const cl_sgemm_tile *T = &cl_sgemm_tiles[p.tile];
    int which = CL_K_SGEMM_FIRST + 4 * p.tile + 2 * ta + tb;
    unsigned gx = (unsigned)p.tiles_m;
    if (p.splits > 1) {
        /* split k: the partial products into the scratch (m x n each, alpha 1, beta 0), then summed into C */
        float *W = (float *)(uintptr_t)scratch;
        int ni = (int)n, splits = p.splits;
        float one = 1.0f, zero = 0.0f;
        long long w_split = m * n, ldw = m;
        void *args[] = {&mi, &ni, &k, &one, &A, &lda, &B, &ldb, &zero, &W, &ldw, &p.kc, &w_split};
        st = cl_launch_in(d, dev, which, gx, (unsigned)p.tiles_n, (unsigned)splits, (unsigned)T->threads, args, stream);
        const float *Wc = W;
        void *rargs[] = {&mi, &ni, &splits, &Wc, &w_split, &alpha, &beta, &C, &ldc};
        if (st == CUDALOAD_OK)
            st = cl_launch_dependent(d, dev, CL_K_SGEMM_SPLITK_REDUCE, (unsigned)(((m + 3) / 4 * n + 255) / 256), 256, rargs,
                                     stream);
    } else {
        /* launch in column chunks of the plan's launch_n tiles (a multiple of 64 columns: a chunk
         * of a VEC tile's operand stays 16-byte aligned) */
        long long chunk_cols = p.launch_n * T->bn, c_split = 0;
        for (long long j = 0; st == CUDALOAD_OK && j < n; j += chunk_cols) {
            int nj = (int)(n - j < chunk_cols ? n - j : chunk_cols);
            const float *Bj = B ? B + (tb ? j : j * ldb) : B;
            float *Cj = C + j * ldc;
            void *args[] = {&mi, &nj, &k, &alpha, &A, &lda, &Bj, &ldb, &beta, &Cj, &ldc, &k, &c_split};
            /* one chunk (every product of one grid): the plan's count, no division */
            unsigned gy = nj == n ? (unsigned)p.tiles_n : (unsigned)((nj + T->bn - 1) / T->bn);
            st = cl_launch_in(d, dev, which, gx, gy, 1, (unsigned)T->threads, args, stream);
        }
    }
    /* stream-ordered: the memory returns to the pool once the kernels that read it are done */
    if (scratch) d->cuMemFreeAsync(scratch, (CUstream)stream);
    cl_ctx_leave(d, pushed);
    return st;
}

cudaload_status cudaload_sgemm(cudaload_op transa, cudaload_op transb, long long m, long long n, long long k, float alpha,
                               const float *A, long long lda, const float *B, long long ldb, float beta, float *C,
                               long long ldc, void *stream) {
    if ((transa != CUDALOAD_OP_N && transa != CUDALOAD_OP_T) || (transb != CUDALOAD_OP_N && transb != CUDALOAD_OP_T)) {
        cl_set_errorf("cudaload_sgemm: transa = %d, transb = %d: each must be CUDALOAD_OP_N (0) or CUDALOAD_OP_T (1)",
                      (int)transa, (int)transb);
        return CUDALOAD_ERROR_INVALID_ARGUMENT;
    }
    if (m < 0 || n < 0 || k < 0 || m > INT_MAX || n > INT_MAX || k > INT_MAX) {
        cl_set_errorf("cudaload_sgemm: m = %lld, n = %lld, k = %lld: each must be in 0..%d", m, n, k, INT_MAX);
        return CUDALOAD_ERROR_INVALID_ARGUMENT;
    }
    if (k > CL_SGEMM_K_MAX) { /* internal.h: the kernels count k in slices of up to 16, in 32 bits */
        cl_set_errorf("cudaload_sgemm: k = %lld: at most %d (INT_MAX - 15: the bundled kernels count k in slices of up "
                      "to 16 in 32 bits)", k, CL_SGEMM_K_MAX);
        return CUDALOAD_ERROR_INVALID_ARGUMENT;
    }
    long long a_rows = transa == CUDALOAD_OP_N ? m : k, a_cols = transa == CUDALOAD_OP_N ? k : m;
    long long b_rows = transb == CUDALOAD_OP_N ? k : n, b_cols = transb == CUDALOAD_OP_N ? n : k;
    if (lda < (a_rows > 1 ? a_rows : 1) || ldb < (b_rows > 1 ? b_rows : 1) || ldc < (m > 1 ? m : 1)) {
        cl_set_errorf("cudaload_sgemm: leading dimension too small: lda = %lld (needs >= %lld), ldb = %lld (needs >= %lld), "
                      "ldc = %lld (needs >= %lld)",
                      lda, a_rows > 1 ? a_rows : 1, ldb, b_rows > 1 ? b_rows : 1, ldc, m > 1 ? m : 1);
        return CUDALOAD_ERROR_INVALID_ARGUMENT;
    }
    if (cl_span(a_rows, a_cols, lda) < 0 || cl_span(b_rows, b_cols, ldb) < 0 || cl_span(m, n, ldc) < 0) {
        cl_set_errorf("cudaload_sgemm: a matrix extent overflows 64 bits (m = %lld, n = %lld, k = %lld, lda = %lld, "
                      "ldb = %lld, ldc = %lld)", m, n, k, lda, ldb, ldc);
        return CUDALOAD_ERROR_INVALID_ARGUMENT;
    }
    if (m == 0 || n == 0) return CUDALOAD_OK; /* BLAS: quick return */
    int uses_ab = k > 0 && alpha != 0.0f;
    if (!C || (uses_ab && (!A || !B))) {
        cl_set_errorf("cudaload_sgemm: NULL pointer (A = %p, B = %p, C = %p)", (const void *)A, (const void *)B, (void *)C);
        return CUDALOAD_ERROR_INVALID_ARGUMENT;
    }
    if (cl_misaligned(C, sizeof(float)) || (uses_ab && (cl_misaligned(A, sizeof(float)) || cl_misaligned(B, sizeof(float))))) {
        cl_set_errorf("cudaload_sgemm: pointer not aligned to 4 bytes (A = %p, B = %p, C = %p)", (const void *)A,
                      (const void *)B, (void *)C);
        return CUDALOAD_ERROR_INVALID_ARGUMENT;
    }
    int dev;
    /* A and B are not read when uses_ab is 0: their device does not matter then */
    const void *ptrs[] = {C, uses_ab ? A : NULL, uses_ab ? B : NULL};
    static const char *const names[] = {"C", "A", "B"};
    cudaload_status st = cl_call_device("cudaload_sgemm", ptrs, names, 3, &dev);
    if (st != CUDALOAD_OK) return st;
    cudaload_backend use = CUDALOAD_BACKEND_AUTO;
    if ((st = cl_choose(dev, &use)) != CUDALOAD_OK) return st;
    cl_last_backend = use;
    cl_last_device = dev;
    if (use == CUDALOAD_BACKEND_BUNDLED) {
        /* BLAS: with k == 0 or alpha == 0, A and B are not read and C = beta * C */
        return cl_sgemm_bundled(dev, transa == CUDALOAD_OP_T, transb == CUDALOAD_OP_T, m, n, uses_ab ? (int)k : 0,
                                uses_ab ? alpha : 0.0f, A, lda, B, ldb, beta, C, ldc, stream);
    }
    if (lda > INT_MAX || ldb > INT_MAX || ldc > INT_MAX) {
        cl_set_errorf("cudaload_sgemm: cuBLAS takes 32-bit leading dimensions (lda = %lld, ldb = %lld, ldc = %lld)", lda,
                      ldb, ldc);
        return CUDALOAD_ERROR_INVALID_ARGUMENT;
    }
    const cudaload_cublas_table *b = NULL;
    cublasHandle_t h = NULL;
    int prev = -1;
    if ((st = cl_blas_enter(dev, &prev)) == CUDALOAD_OK && (st = cl_blas_take(dev, stream, &b, &h)) == CUDALOAD_OK) {
        st = cl_blas_status(b,
                            b->cublasSgemm(h, transa == CUDALOAD_OP_T ? CUBLAS_OP_T : CUBLAS_OP_N,
                                           transb == CUDALOAD_OP_T ? CUBLAS_OP_T : CUBLAS_OP_N, (int)m, (int)n, (int)k, &alpha,
                                           A, (int)lda, B, (int)ldb, &beta, C, (int)ldc),
                            "cublasSgemm_v2");
        cl_blas_give(dev, b, h);
    }
    cl_blas_leave(prev);
    return st;
}
