/*
 * kernels.c -- step 5 of the walk: launch. The bundled SAXPY and SGEMM kernels (kernels/saxpy.cu and sgemm.cu,
 * compiled into one fatbin embedded in the library by fatbin.S), loaded from memory into
 * the device's primary context on first use, gated, and launched with cuLaunchKernel on the
 * caller's stream; cuBLAS is the fallback.
 *
 * Gate, per device, before the first launch:
 *   - the driver must be of the toolkit's major or newer (SASS built by CUDA 13 needs a
 *     CUDA 13 driver; within a major, minor-version compatibility lets 13.x SASS run);
 *   - the device's compute capability must have SASS in the fatbin (same major, minor <=
 *     the device's), or else the PTX can be JIT-compiled: PTX arch <= the device's and a
 *     driver at least as new as the toolkit that wrote the PTX (an older one fails with
 *     CUDA_ERROR_UNSUPPORTED_PTX_VERSION).
 * The primary context is the one the runtime uses, so pointers from cudaMalloc, PyTorch
 * and CuPy work unchanged.
 */
#define _GNU_SOURCE
#include "cudaload_tables.h"
#include "internal.h"

#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CL_NO_KERNELS
#include "kernels_build.h" /* generated: toolkit version, SASS list, PTX arch */
extern const unsigned char cl_fatbin_start[];
extern const unsigned char cl_fatbin_end[];
#define CL_KERNELS_BUILT 1
#else
#define CL_KERNELS_BUILT 0
#define CL_KERNELS_TOOLKIT_VERSION 0
#define CL_KERNELS_SASS_ARCHS ""
#define CL_KERNELS_PTX_ARCH 0
#endif

/* The kernels of the fatbin, by the name the loader asks for. */
enum {
    CL_K_SAXPY_VEC4,
    CL_K_SAXPY_SCALAR,
    CL_K_SGEMM_BIG_NN,
    CL_K_SGEMM_BIG_NT,
    CL_K_SGEMM_BIG_TN,
    CL_K_SGEMM_BIG_TT,
    CL_K_SGEMM_SMALL_NN,
    CL_K_SGEMM_SMALL_NT,
    CL_K_SGEMM_SMALL_TN,
    CL_K_SGEMM_SMALL_TT,
    CL_K_COUNT
};
_Static_assert(CL_K_COUNT == CL_KERNEL_COUNT, "CL_KERNEL_COUNT in internal.h: the kernels of the fatbin");
static const char *const cl_kernel_names[CL_K_COUNT] = {
    "cudaload_saxpy_vec4",       "cudaload_saxpy_scalar",     "cudaload_sgemm_256x128_nn", "cudaload_sgemm_256x128_nt",
    "cudaload_sgemm_256x128_tn", "cudaload_sgemm_256x128_tt", "cudaload_sgemm_128x64_nn",  "cudaload_sgemm_128x64_nt",
    "cudaload_sgemm_128x64_tn",  "cudaload_sgemm_128x64_tt",
};

/* The state (devices, backend, lock) is cl_ctx.kernels (internal.h). */
#define K cl_ctx.kernels
static _Thread_local cudaload_backend cl_last_backend = CUDALOAD_BACKEND_AUTO;

/* fork() while another thread holds the kernels lock (K.mu) would leave the child's copy
 * locked forever, as for the loader's mutex. K.mu is taken before the loader's lock
 * (cl_device_prepare calls the loader under it), so its handler is registered after the
 * loader's: prepare handlers run in reverse order of registration, so fork takes K.mu first,
 * then the loader's. Foreign code run under this lock (cuInit, cuModuleLoadData, cuBLAS) that forks runs the
 * handler on the thread that holds it: the handler leaves the lock alone then, as the loader's
 * does (cudaload.c). */
static _Thread_local int cl_klock_held_here, cl_kfork_skipped;
static void cl_klock_prepare(void) {
    if (cl_klock_held_here) {
        cl_kfork_skipped = 1;
        return;
    }
    pthread_mutex_lock(&K.mu);
}
static void cl_kunlock_after(void) {
    if (cl_kfork_skipped) {
        cl_kfork_skipped = 0;
        return;
    }
    pthread_mutex_unlock(&K.mu);
}
static void cl_katfork_register(void) {
    cl_atfork_init();
    pthread_atfork(cl_klock_prepare, cl_kunlock_after, cl_kunlock_after);
}
static void cl_klock(void) {
    pthread_once(&K.atfork_once, cl_katfork_register);
    pthread_mutex_lock(&K.mu);
    cl_klock_held_here = 1;
}
static void cl_kunlock(void) {
    cl_klock_held_here = 0;
    pthread_mutex_unlock(&K.mu);
}

cudaload_status cudaload_set_backend(cudaload_backend backend) {
    if (backend != CUDALOAD_BACKEND_AUTO && backend != CUDALOAD_BACKEND_BUNDLED && backend != CUDALOAD_BACKEND_CUBLAS) {
        cl_set_errorf("cudaload_set_backend: %d is not a backend (0 auto, 1 bundled, 2 cublas)", (int)backend);
        return CUDALOAD_ERROR_INVALID_ARGUMENT;
    }
    cl_klock();
    K.backend = backend;
    K.backend_from_env_done = 1; /* an explicit choice outranks the environment */
    cl_kunlock();
    return CUDALOAD_OK;
}

/* CUDALOAD_BACKEND as validated by cudaload_init() (config.c: a bad value fails init with
 * INVALID_OPTION, so it is never silently taken as auto); taken once, unless
 * cudaload_set_backend() chose first. */
static void cl_backend_from_env(void) {
    if (K.backend_from_env_done) return;
    K.backend_from_env_done = 1;
    int b = cl_config_backend();
    if (b >= 0) K.backend = (cudaload_backend)b;
}

static const char *cl_cu_name(const cudaload_driver_table *d, CUresult r) {
    const char *name = NULL;
    if (d->cuGetErrorName(r, &name) != CUDA_SUCCESS || !name) name = "unknown CUDA error";
    return name;
}

/* Is there SASS for cc in the list "75,80,..."? Same major, minor <= the device's. */
static int cl_sass_covers(const char *archs, int major, int minor) {
    for (const char *p = archs; *p;) {
        int a = atoi(p);
        if (a / 10 == major && a % 10 <= minor) return 1;
        const char *comma = strchr(p, ',');
        if (!comma) break;
        p = comma + 1;
    }
    return 0;
}

cudaload_status cl_kernels_gate(int built, int toolkit_version, const char *sass_archs, int ptx_arch, int driver_version,
                                int cc_major, int cc_minor, int *has_sass, int *would_jit, cl_buf *why) {
    *has_sass = *would_jit = 0;
    if (!built) {
        cl_buf_printf(why, "libcudaload was built without nvcc, so it has no bundled kernels");
        return CUDALOAD_ERROR_KERNELS_NOT_BUILT;
    }
    if (driver_version / 1000 < toolkit_version / 1000) {
        cl_buf_printf(why, "the bundled kernels were built by CUDA %d.%d and need a CUDA %d driver; this driver supports "
                           "CUDA %d.%d (cuDriverGetVersion %d)",
                      toolkit_version / 1000, (toolkit_version % 1000) / 10, toolkit_version / 1000, driver_version / 1000,
                      (driver_version % 1000) / 10, driver_version);
        return CUDALOAD_ERROR_DRIVER_TOO_OLD;
    }
    int cc = cc_major * 10 + cc_minor;
    if (cl_sass_covers(sass_archs, cc_major, cc_minor)) {
        *has_sass = 1;
        return CUDALOAD_OK;
    }
    if (ptx_arch && ptx_arch <= cc && driver_version >= toolkit_version) {
        *would_jit = 1;
        return CUDALOAD_OK;
    }
    if (ptx_arch && ptx_arch <= cc)
        cl_buf_printf(why, "no SASS for sm_%d in the bundled kernels (%s), and their PTX (compute_%d, CUDA %d.%d) needs a "
                           "driver of CUDA %d.%d or newer to JIT; this driver supports CUDA %d.%d",
                      cc, sass_archs, ptx_arch, toolkit_version / 1000, (toolkit_version % 1000) / 10, toolkit_version / 1000,
                      (toolkit_version % 1000) / 10, driver_version / 1000, (driver_version % 1000) / 10);
    else
        cl_buf_printf(why, "no SASS for sm_%d in the bundled kernels (%s) and no PTX at or below it (compute_%d)", cc,
                      sass_archs, ptx_arch);
    return CUDALOAD_ERROR_NO_KERNEL_IMAGE;
}

/* The device the caller's pointers live on: the runtime's current device. */
static cudaload_status cl_current_device(int *dev) {
    const cudaload_cudart_table *rt = cudaload_cudart();
    if (!rt) return CUDALOAD_ERROR_NOT_INITIALIZED;
    cudaError_t e = rt->cudaGetDevice(dev);
    if (e != cudaSuccess) {
        cl_set_errorf("cudaGetDevice failed: %s (%d)", rt->cudaGetErrorName(e), (int)e);
        return e == cudaErrorNoDevice ? CUDALOAD_ERROR_NO_DEVICE
               : e == cudaErrorInsufficientDriver ? CUDALOAD_ERROR_DRIVER_TOO_OLD
                                                  : CUDALOAD_ERROR_CUDA;
    }
    if (*dev < 0 || *dev >= CL_MAX_DEVICES) {
        cl_set_errorf("device %d is beyond the %d devices libcudaload tracks", *dev, CL_MAX_DEVICES);
        return CUDALOAD_ERROR_INVALID_ARGUMENT;
    }
    return CUDALOAD_OK;
}


/* Gate and load the module on dev. Caller holds the kernels lock (K.mu). The outcome is kept (k->checked)
 * when it is OK or a permanent failure; a transient one (cl_cu_permanent) is reported to
 * this call and the next call prepares the device again. */
static void cl_device_prepare(int dev) {
    cl_device_kernels *k = &K.dev[dev];
    if (k->checked) return;
    /* a fresh attempt: nothing of a previous, transient failure is kept but the cuBLAS handle */
    free(k->error);
    cublasHandle_t blas = k->blas;
    memset(k, 0, sizeof *k);
    k->blas = blas;
    int permanent = 1; /* the failures before the CUDA calls depend on nothing that changes */
    cl_buf why = {0};
    const cudaload_driver_table *d = cudaload_driver();
    int version = 0;
    if (!d || cudaload_driver_version(&version) != CUDALOAD_OK) {
        k->status = CUDALOAD_ERROR_NO_DRIVER;
        cl_buf_printf(&why, "no CUDA driver is loaded: %s", cudaload_last_error());
        goto out;
    }
    int n = 0;
    if ((k->status = cudaload_device_count(&n)) != CUDALOAD_OK) {
        /* no driver or no device is final; a failed cuInit/cuDeviceGetCount (ERROR_CUDA) is
         * asked again (the loader answers from what it keeps) */
        permanent = k->status != CUDALOAD_ERROR_CUDA;
        cl_buf_printf(&why, "%s", cudaload_last_error());
        goto out;
    }
    CUdevice cu;
    CUresult r = d->cuDeviceGet(&cu, dev);
    if (r == CUDA_SUCCESS) r = d->cuDeviceGetAttribute(&k->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, cu);
    if (r == CUDA_SUCCESS) r = d->cuDeviceGetAttribute(&k->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, cu);
    if (r == CUDA_SUCCESS) r = d->cuDeviceGetAttribute(&k->sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, cu);
    if (r != CUDA_SUCCESS) {
        k->status = CUDALOAD_ERROR_CUDA;
        permanent = cl_cu_permanent(r);
        cl_buf_printf(&why, "querying device %d failed: %s", dev, cl_cu_name(d, r));
        goto out;
    }
    k->status = cl_kernels_gate(CL_KERNELS_BUILT, CL_KERNELS_TOOLKIT_VERSION, CL_KERNELS_SASS_ARCHS, CL_KERNELS_PTX_ARCH,
                                version, k->cc_major, k->cc_minor, &k->has_sass, &k->would_jit, &why);
    if (k->status != CUDALOAD_OK) goto out;
#ifndef CL_NO_KERNELS
    if (!d->has.cuDevicePrimaryCtxRetain || !d->has.cuDevicePrimaryCtxRelease || !d->has.cuCtxPushCurrent ||
        !d->has.cuCtxPopCurrent || !d->has.cuModuleLoadData || !d->has.cuModuleUnload || !d->has.cuModuleGetFunction ||
        !d->has.cuLaunchKernel || !d->has.cuCtxGetCurrent) {
        k->status = CUDALOAD_ERROR_SYMBOL_MISSING;
        cl_buf_printf(&why, "the driver lacks a symbol the kernel launch needs (cuDevicePrimaryCtxRetain, "
                            "cuModuleLoadData, cuLaunchKernel, ...)");
        goto out;
    }
    const char *step = "retaining the primary context";
    r = d->cuDevicePrimaryCtxRetain(&k->ctx, cu);
    if (r != CUDA_SUCCESS) {
        k->ctx = NULL;
    } else if ((r = d->cuCtxPushCurrent(k->ctx)) != CUDA_SUCCESS) {
        step = "making the primary context current";
    } else {
        /* pushed: the module goes into the primary context, then the context is popped */
        int loaded = 0;
        step = "loading the bundled kernels";
        r = d->cuModuleLoadData(&k->module, cl_fatbin_start);
        if (r == CUDA_SUCCESS) loaded = 1;
        for (int i = 0; r == CUDA_SUCCESS && i < CL_K_COUNT; i++)
            r = d->cuModuleGetFunction(&k->fn[i], k->module, cl_kernel_names[i]);
        if (r != CUDA_SUCCESS && loaded) d->cuModuleUnload(k->module); /* a kernel is missing: none is used */
        CUcontext popped;
        d->cuCtxPopCurrent(&popped); /* follows the successful push above, and only it */
    }
    if (r != CUDA_SUCCESS) {
        /* nothing of the device is kept: the retained context is released (a retry retains it again) */
        if (k->ctx) d->cuDevicePrimaryCtxRelease(cu);
        k->ctx = NULL;
        k->module = NULL;
        memset(k->fn, 0, sizeof k->fn);
        k->status = r == CUDA_ERROR_UNSUPPORTED_PTX_VERSION || r == CUDA_ERROR_NO_BINARY_FOR_GPU ? CUDALOAD_ERROR_NO_KERNEL_IMAGE
                                                                                              : CUDALOAD_ERROR_CUDA;
        permanent = cl_cu_permanent(r);
        cl_buf_printf(&why, "%s on device %d (sm_%d%d) failed: %s", step, dev, k->cc_major, k->cc_minor, cl_cu_name(d, r));
        goto out;
    }
    cl_debug("kernels: device %d sm_%d%d, %s", dev, k->cc_major, k->cc_minor, k->has_sass ? "SASS" : "PTX JIT");
#endif
out:
    k->checked = k->status == CUDALOAD_OK || permanent;
    if (k->status != CUDALOAD_OK) {
        if (!permanent) cl_buf_printf(&why, " (transient: tried again on the next call)");
        k->error = cl_strdup(cl_buf_str(&why));
        cl_debug("kernels: device %d: %s", dev, k->error);
    }
    cl_buf_free(&why);
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
    full.built = CL_KERNELS_BUILT;
    full.toolkit_version = CL_KERNELS_TOOLKIT_VERSION;
    full.sass_archs = CL_KERNELS_SASS_ARCHS;
    full.ptx_arch = CL_KERNELS_PTX_ARCH;
#ifndef CL_NO_KERNELS
    full.fatbin_bytes = (size_t)(cl_fatbin_end - cl_fatbin_start);
#endif
    full.device = device;
    full.last_backend = cl_last_backend;
    full.runnable = CUDALOAD_ERROR_NOT_ATTEMPTED;
    cudaload_status st = CUDALOAD_OK;
    if (device >= CL_MAX_DEVICES) {
        cl_set_errorf("device %d is beyond the %d devices libcudaload tracks", device, CL_MAX_DEVICES);
        st = CUDALOAD_ERROR_INVALID_ARGUMENT;
    } else if (device >= 0 && !cudaload_is_initialized()) {
        cl_set_error("libcudaload is not initialized: call cudaload_init() first");
        st = CUDALOAD_ERROR_NOT_INITIALIZED;
    } else if (device >= 0) {
        cl_klock();
        cl_device_prepare(device);
        cl_device_kernels *k = &K.dev[device];
        full.cc_major = k->cc_major;
        full.cc_minor = k->cc_minor;
        full.has_sass = k->has_sass;
        full.would_jit = k->would_jit;
        full.runnable = k->status;
        if (k->status != CUDALOAD_OK) cl_set_error(k->error);
        cl_kunlock();
    }
    cl_info_copy_out(out, out->size, &full, sizeof full);
    return st;
}

/* Which backend a call takes on dev; *k is the device's state for the bundled path. */
static cudaload_status cl_choose(int dev, cudaload_backend *use, cl_device_kernels **k) {
    cl_klock();
    cudaload_status st = CUDALOAD_OK;
    cl_backend_from_env();
    cudaload_backend want = K.backend;
    if (want != CUDALOAD_BACKEND_CUBLAS) cl_device_prepare(dev);
    *k = &K.dev[dev];
    if (want == CUDALOAD_BACKEND_CUBLAS) {
        *use = CUDALOAD_BACKEND_CUBLAS;
    } else if ((*k)->status == CUDALOAD_OK) {
        *use = CUDALOAD_BACKEND_BUNDLED;
    } else if (want == CUDALOAD_BACKEND_BUNDLED) {
        st = (*k)->status;
        cl_set_error((*k)->error);
    } else {
        /* AUTO: the bundled kernels cannot run here; cuBLAS can do the same work */
        cl_debug("kernels: falling back to cuBLAS on device %d: %s", dev, (*k)->error);
        *use = CUDALOAD_BACKEND_CUBLAS;
    }
    cl_kunlock();
    return st;
}

static cudaload_status cl_launch(cl_device_kernels *k, int which, unsigned gx, unsigned gy, unsigned block, void **args,
                                 void *stream) {
    const cudaload_driver_table *d = cudaload_driver();
    CUcontext cur = NULL;
    /* launch in the primary context the module lives in; push it only when the thread's
     * current context is another one (or none) */
    int pushed = 0;
    if (d->cuCtxGetCurrent(&cur) != CUDA_SUCCESS || cur != k->ctx) {
        CUresult p = d->cuCtxPushCurrent(k->ctx);
        if (p != CUDA_SUCCESS) {
            /* not pushed, so nothing to pop; a launch in another context would fail anyway */
            cl_set_errorf("cuCtxPushCurrent (the primary context, for %s) failed: %s (%d)", cl_kernel_names[which],
                          cl_cu_name(d, p), (int)p);
            return CUDALOAD_ERROR_CUDA;
        }
        pushed = 1;
    }
    CUresult r = d->cuLaunchKernel(k->fn[which], gx, gy, 1, block, 1, 1, 0, (CUstream)stream, args, NULL);
    if (pushed) {
        CUcontext popped;
        d->cuCtxPopCurrent(&popped); /* only after the successful push above */
    }
    if (r != CUDA_SUCCESS) {
        cl_set_errorf("cuLaunchKernel(%s) failed: %s (%d)", cl_kernel_names[which], cl_cu_name(d, r), (int)r);
        return CUDALOAD_ERROR_CUDA;
    }
    return CUDALOAD_OK;
}

/* ---- cuBLAS fallback ---- */

cudaload_status cl_kernels_cublas(const cudaload_cublas_table **out) {
    *out = NULL;
    cudaload_status st = cudaload_load_cublas();
    if (st != CUDALOAD_OK) return st;
    *out = cudaload_cublas();
    return *out ? CUDALOAD_OK : CUDALOAD_ERROR_NOT_FOUND; /* not reached: loaded means a table */
}

static cudaload_status cl_blas_handle(cl_device_kernels *k, void *stream, const cudaload_cublas_table **out) {
    /* the status of loading cuBLAS itself (NOT_FOUND, OVERRIDE_UNUSABLE, MAJOR_MISMATCH, ...),
     * with its message already set by cudaload_load_cublas */
    const cudaload_cublas_table *b = NULL;
    cudaload_status st = cl_kernels_cublas(&b);
    if (st != CUDALOAD_OK) return st;
    cublasStatus_t s = CUBLAS_STATUS_SUCCESS;
    if (!k->blas) s = b->cublasCreate(&k->blas);
    if (s == CUBLAS_STATUS_SUCCESS) s = b->cublasSetStream(k->blas, (cudaStream_t)stream);
    if (s != CUBLAS_STATUS_SUCCESS) {
        cl_set_errorf("cuBLAS handle: %s", b->cublasGetStatusName(s));
        return CUDALOAD_ERROR_CUDA;
    }
    *out = b;
    return CUDALOAD_OK;
}

static cudaload_status cl_blas_status(const cudaload_cublas_table *b, cublasStatus_t s, const char *what) {
    if (s == CUBLAS_STATUS_SUCCESS) return CUDALOAD_OK;
    cl_set_errorf("%s failed: %s (%s)", what, b->cublasGetStatusName(s), b->cublasGetStatusString(s));
    return CUDALOAD_ERROR_CUDA;
}

/* ---- SAXPY ---- */

static int cl_misaligned(const void *p, size_t a) { return ((uintptr_t)p & (a - 1)) != 0; }

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
    cudaload_status st = cl_current_device(&dev);
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
    cl_device_kernels *k;
    if ((st = cl_choose(dev, &use, &k)) != CUDALOAD_OK) return st;
    cl_last_backend = use;
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
            if ((st = cl_launch(k, CL_K_SAXPY_VEC4, (unsigned)blocks, 1, (unsigned)per_block, args, stream)) != CUDALOAD_OK)
                return st;
        }
        long long rest = n - n4 * 4;
        if (rest > 0) {
            const float *xr = x + n4 * 4;
            float *yr = y + n4 * 4;
            long long blocks = (rest + 255) / 256;
            if (blocks > (long long)k->sms * 32) blocks = (long long)k->sms * 32;
            void *args[] = {&rest, &a, &xr, &yr};
            st = cl_launch(k, CL_K_SAXPY_SCALAR, (unsigned)blocks, 1, 256, args, stream);
        }
        return st;
    }
    cl_klock();
    const cudaload_cublas_table *b = NULL;
    st = cl_blas_handle(k, stream, &b);
    for (long long done = 0; st == CUDALOAD_OK && done < n;) {
        int chunk = n - done > INT_MAX ? INT_MAX : (int)(n - done);
        st = cl_blas_status(b, b->cublasSaxpy(k->blas, chunk, &a, x + done, 1, y + done, 1), "cublasSaxpy_v2");
        done += chunk;
    }
    cl_kunlock();
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
    cudaload_status st = cl_current_device(&dev);
    if (st != CUDALOAD_OK) return st;
    cudaload_backend use = CUDALOAD_BACKEND_AUTO;
    cl_device_kernels *kd;
    if ((st = cl_choose(dev, &use, &kd)) != CUDALOAD_OK) return st;
    cl_last_backend = use;
    if (use == CUDALOAD_BACKEND_BUNDLED) {
        /* BLAS: with k == 0 or alpha == 0, A and B are not read and C = beta * C */
        int ki = uses_ab ? (int)k : 0;
        float alpha_eff = uses_ab ? alpha : 0.0f;
        /* Tile shapes and thread counts as in kernels/sgemm.cu: 256 x 128 (256 threads, one
         * block per SM) or 128 x 64 (128 threads, two blocks per SM, a quarter of the work
         * per tile). The large tile when both operands are 16-byte aligned (its unaligned
         * path is slower) and it needs no more waves of blocks than the small one, counting
         * one large wave as two small ones. */
        int vec_a = !cl_misaligned(A, 16) && lda % 4 == 0, vec_b = !cl_misaligned(B, 16) && ldb % 4 == 0;
        long long sms = kd->sms > 0 ? kd->sms : 1;
        long long big_tiles = ((m + 255) / 256) * ((n + 127) / 128), small_tiles = ((m + 127) / 128) * ((n + 63) / 64);
        long long big_waves = (big_tiles + sms - 1) / sms, small_waves = (small_tiles + 2 * sms - 1) / (2 * sms);
        int big = vec_a && vec_b && 2 * big_waves <= small_waves;
        int mi = (int)m, tile_m = big ? 256 : 128, tile_n = big ? 128 : 64, threads = big ? 256 : 128;
        int which = (big ? CL_K_SGEMM_BIG_NN : CL_K_SGEMM_SMALL_NN) + (transa == CUDALOAD_OP_T ? 2 : 0) +
                    (transb == CUDALOAD_OP_T ? 1 : 0);
        /* the grid's y dimension holds at most 65535 tiles of columns: launch in column chunks */
        long long chunk_cols = 65535LL * tile_n;
        for (long long j = 0; st == CUDALOAD_OK && j < n; j += chunk_cols) {
            int nj = (int)(n - j < chunk_cols ? n - j : chunk_cols);
            const float *Bj = B ? B + (transb == CUDALOAD_OP_N ? j * ldb : j) : B;
            float *Cj = C + j * ldc;
            int vb = vec_b && !cl_misaligned(Bj, 16);
            void *args[] = {&mi, &nj, &ki, &alpha_eff, &A, &lda, &Bj, &ldb, &beta, &Cj, &ldc, &vec_a, &vb};
            st = cl_launch(kd, which, (unsigned)((m + tile_m - 1) / tile_m), (unsigned)((nj + tile_n - 1) / tile_n),
                           (unsigned)threads, args, stream);
        }
        return st;
    }
    if (lda > INT_MAX || ldb > INT_MAX || ldc > INT_MAX) {
        cl_set_errorf("cudaload_sgemm: cuBLAS takes 32-bit leading dimensions (lda = %lld, ldb = %lld, ldc = %lld)", lda,
                      ldb, ldc);
        return CUDALOAD_ERROR_INVALID_ARGUMENT;
    }
    cl_klock();
    const cudaload_cublas_table *b = NULL;
    st = cl_blas_handle(kd, stream, &b);
    if (st == CUDALOAD_OK)
        st = cl_blas_status(b,
                            b->cublasSgemm(kd->blas, transa == CUDALOAD_OP_T ? CUBLAS_OP_T : CUBLAS_OP_N,
                                           transb == CUDALOAD_OP_T ? CUBLAS_OP_T : CUBLAS_OP_N, (int)m, (int)n, (int)k, &alpha,
                                           A, (int)lda, B, (int)ldb, &beta, C, (int)ldc),
                            "cublasSgemm_v2");
    cl_kunlock();
    return st;
}
