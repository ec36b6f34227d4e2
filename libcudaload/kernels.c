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

/* The kernels of the fatbin, by the name the loader asks for: CL_K_SGEMM_FIRST + 4 * tile + 2 * ta
 * + tb for the product kernels (internal.h's CL_SGEMM_TILES). */
enum { CL_K_SAXPY_VEC4, CL_K_SAXPY_SCALAR, CL_K_SGEMM_SPLITK_REDUCE, CL_K_SGEMM_FIRST, CL_K_COUNT = CL_KERNEL_COUNT };
#define CL_K_TILE_NAMES_(name, bm, bn, bk, threads, per_sm, vec, kv, weighed, wide, one_wave, nn, nt, tn, tt)           \
    (nn) ? "cudaload_sgemm_" #name "_nn" : NULL, (nt) ? "cudaload_sgemm_" #name "_nt" : NULL,                           \
        (tn) ? "cudaload_sgemm_" #name "_tn" : NULL, (tt) ? "cudaload_sgemm_" #name "_tt" : NULL,
static const char *const cl_kernel_names[CL_K_COUNT] = {
    "cudaload_saxpy_vec4", "cudaload_saxpy_scalar", "cudaload_sgemm_splitk_reduce", CL_SGEMM_TILES(CL_K_TILE_NAMES_)};

typedef struct cl_sgemm_tile {
    int bm, bn, threads, per_sm, vec, kv;
    int weighed;  /* the plan weighs it (0: only moved to, as a wide or one_wave tile) */
    int wide;     /* CL_SGEMM_TILE_*: the tile a split product moves to (internal.h), itself for none */
    int one_wave; /* CL_SGEMM_TILE_*: the tile an unsplit product of one wave moves to, itself for none */
    int speed[4]; /* NN, NT, TN, TT: percent of cuBLAS, 0: not built (internal.h) */
} cl_sgemm_tile;
#define CL_K_TILE_ROW_(name, bm, bn, bk, threads, per_sm, vec, kv, weighed, wide, one_wave, nn, nt, tn, tt)            \
    {bm, bn, threads, per_sm, vec, kv, weighed, CL_SGEMM_TILE_##wide, CL_SGEMM_TILE_##one_wave, {nn, nt, tn, tt}},
static const cl_sgemm_tile cl_sgemm_tiles[CL_SGEMM_TILE_COUNT] = {CL_SGEMM_TILES(CL_K_TILE_ROW_)};

/* The state (devices, backend, lock) is cl_ctx.kernels (internal.h). */
#define K cl_ctx.kernels
static _Thread_local cudaload_backend cl_last_backend = CUDALOAD_BACKEND_AUTO;
static _Thread_local int cl_last_device = -1;

/* fork() while another thread holds the kernels lock (K.mu) would leave the child's copy
 * locked forever, as for the loader's mutex. Its handler is registered after the loader's:
 * prepare handlers run in reverse order of registration, so fork takes K.mu first, then the
 * loader's (the order cudaload_kernels_info_get nests them in). No foreign code runs under
 * K.mu, but a fork from the thread that holds it (a signal handler) must not wait for itself:
 * the handler leaves the lock alone then, as the loader's does (cudaload.c). */
static _Thread_local int cl_klock_held_here, cl_kfork_skipped;
static void cl_klock_prepare(void) {
    if (cl_klock_held_here) {
        cl_kfork_skipped = 1;
        return;
    }
    pthread_mutex_lock(&K.mu);
}
static void cl_kunlock_parent(void) {
    if (cl_kfork_skipped) {
        cl_kfork_skipped = 0;
        return;
    }
    pthread_mutex_unlock(&K.mu);
}
/* The child has only the forking thread: a preparation another thread had under way will
 * never end there, so it is forgotten (the child's next call prepares the device again),
 * and nobody waits on the condition variable. */
static void cl_kunlock_child(void) {
    if (cl_kfork_skipped) {
        cl_kfork_skipped = 0;
        return;
    }
    for (int i = 0; i < CL_MAX_DEVICES; i++) K.dev[i].preparing = 0;
    pthread_cond_init(&K.cv, NULL);
    pthread_mutex_unlock(&K.mu);
}
static void cl_katfork_register(void) {
    cl_atfork_init();
    cl_plat_atfork(cl_klock_prepare, cl_kunlock_parent, cl_kunlock_child);
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
static void cl_kwait(void) {
    cl_klock_held_here = 0;
    pthread_cond_wait(&K.cv, &K.mu);
    cl_klock_held_here = 1;
}

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

/* The runtime's current device (cudaSetDevice): where a call runs when no single device owns
 * its pointers. */
static cudaload_status cl_current_device(int *dev) {
    const cudaload_cudart_table *rt = cudaload_cudart();
    if (!rt) {
        cl_set_error("the operands are not device memory of one device and no CUDA runtime is loaded to say which device "
                     "is current: call cudaload_init() first");
        return CUDALOAD_ERROR_NOT_INITIALIZED;
    }
    cudaError_t e = rt->cudaGetDevice(dev);
    if (e != cudaSuccess) {
        cl_set_errorf("cudaGetDevice failed: %s (%d)", rt->cudaGetErrorName(e), (int)e);
        return e == cudaErrorNoDevice ? CUDALOAD_ERROR_NO_DEVICE
               : e == cudaErrorInsufficientDriver ? CUDALOAD_ERROR_DRIVER_TOO_OLD
                                                  : CUDALOAD_ERROR_CUDA;
    }
    return CUDALOAD_OK;
}

/* The device whose memory p is, or -1: managed memory (any device may use it), host memory
 * (mapped or not), or a pointer the driver does not know. One driver call, which answers
 * CUDA_SUCCESS with zeroed attributes for a pointer it does not know. */
static int cl_pointer_device(const cudaload_driver_table *d, const void *p) {
    CUpointer_attribute attrs[3] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                    CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
    /* each attribute into a zeroed 8-byte slot: the driver writes 1 (bool) or 4 (enum, int) bytes */
    uint64_t slot[3] = {0, 0, 0};
    void *data[3] = {&slot[0], &slot[1], &slot[2]};
    if (d->cuPointerGetAttributes(3, attrs, data, (CUdeviceptr)(uintptr_t)p) != CUDA_SUCCESS) return -1;
    unsigned type;
    int ordinal;
    memcpy(&type, &slot[0], sizeof type);
    memcpy(&ordinal, &slot[2], sizeof ordinal);
    if (type != CU_MEMORYTYPE_DEVICE || slot[1] != 0) return -1;
    return ordinal;
}

/* The device a call runs on: the one that owns its pointers (names: "x", "y", ... for the
 * message); pointers on two devices are DEVICE_MISMATCH. When none is owned by one device,
 * or the driver cannot say (no cuPointerGetAttributes), the runtime's current device. With
 * one device visible, that device. */
static cudaload_status cl_call_device(const char *fn, const void *const *ptrs, const char *const *names, int n, int *dev) {
    /* one device: it owns whatever a call is given, so the driver is not asked (most machines,
     * and the cheapest call); the count is asked once, lock-free after */
    int ndev = atomic_load_explicit(&K.ndev, memory_order_relaxed);
    if (ndev == 0 && cudaload_device_count(&ndev) == CUDALOAD_OK)
        atomic_store_explicit(&K.ndev, ndev, memory_order_relaxed);
    if (ndev == 1) {
        *dev = 0;
        return CUDALOAD_OK;
    }
    const cudaload_driver_table *d = cudaload_driver();
    int owner = -1, first = -1;
    for (int i = 0; d && d->has.cuPointerGetAttributes && i < n; i++) {
        int on = ptrs[i] ? cl_pointer_device(d, ptrs[i]) : -1;
        if (on < 0) continue;
        if (owner < 0) {
            owner = on, first = i;
        } else if (on != owner) {
            cl_set_errorf("%s: %s is on device %d and %s on device %d: a call's operands must be on one device (libcudaload "
                          "uses no peer access); copy one of them to the other's device",
                          fn, names[first], owner, names[i], on);
            return CUDALOAD_ERROR_DEVICE_MISMATCH;
        }
    }
    cudaload_status st = owner >= 0 ? CUDALOAD_OK : cl_current_device(&owner);
    if (st != CUDALOAD_OK) return st;
    if (owner >= CL_MAX_DEVICES) {
        cl_set_errorf("%s: device %d is beyond the %d devices libcudaload tracks", fn, owner, CL_MAX_DEVICES);
        return CUDALOAD_ERROR_INVALID_ARGUMENT;
    }
    *dev = owner;
    return CUDALOAD_OK;
}

/* dev's pool for SGEMM's scratch (split-k partial products), or NULL: then k is not split and
 * every call is one launch per tile grid
 * (a driver older than CUDA 11.2, or a device without stream-ordered allocation, still runs
 * the kernels). Its own pool, not the device's default one that the runtime and frameworks
 * share: its release threshold keeps up to CL_SCRATCH_KEEP bytes mapped between calls, so a
 * call's cuMemAllocFromPoolAsync does not map memory again after every synchronisation. */
#define CL_SCRATCH_KEEP (256ULL << 20)
static CUmemoryPool cl_scratch_pool(const cudaload_driver_table *d, CUdevice cu, int dev) {
    int supported = 0;
    if (!d->has.cuMemPoolCreate || !d->has.cuMemPoolSetAttribute || !d->has.cuMemAllocFromPoolAsync ||
        !d->has.cuMemFreeAsync ||
        d->cuDeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, cu) != CUDA_SUCCESS || !supported) {
        cl_debug("kernels: device %d: no stream-ordered allocation, SGEMM takes no scratch", dev);
        return NULL;
    }
    CUmemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = dev;
    CUmemoryPool pool = NULL;
    CUresult r = d->cuMemPoolCreate(&pool, &props);
    cuuint64_t keep = CL_SCRATCH_KEEP;
    if (r == CUDA_SUCCESS) d->cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep);
    if (r != CUDA_SUCCESS) {
        cl_debug("kernels: device %d: cuMemPoolCreate failed (%s), SGEMM takes no scratch", dev, cl_cu_name(d, r));
        return NULL;
    }
    return pool;
}

/* Gates dev and loads the module there, into *k (a scratch copy, zeroed), with no lock held:
 * it runs the driver (cuInit, cuModuleLoadData). Returns 1 when the outcome is final (OK, or
 * a permanent failure); a transient one (cl_cu_permanent) is reported to this call and the
 * next call prepares the device again. */
static int cl_device_prepare(int dev, cl_device_kernels *k) {
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
            if (cl_kernel_names[i]) r = d->cuModuleGetFunction(&k->fn[i], k->module, cl_kernel_names[i]);
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
    k->pool = cl_scratch_pool(d, cu, dev);
    k->dependent_launch = k->cc_major >= 9 && d->has.cuLaunchKernelEx;
    k->drv = d;
#endif
out:
    if (k->status != CUDALOAD_OK) {
        if (!permanent) cl_buf_printf(&why, " (transient: tried again on the next call)");
        k->error = cl_strdup(cl_buf_str(&why));
        cl_debug("kernels: device %d: %s", dev, k->error);
    }
    cl_buf_free(&why);
    return k->status == CUDALOAD_OK || permanent;
}

/* dev's kernels, prepared on first use: OK, or the reason they cannot run (its text set).
 * Lock-free once the outcome is final; else one thread prepares, with no lock held, while the
 * others asking for the same device wait for its outcome. */
static cudaload_status cl_device_ready(int dev) {
    cl_device_kernels *k = &K.dev[dev];
    if (!atomic_load_explicit(&k->ready, memory_order_acquire)) {
        cl_klock();
        while (k->preparing) cl_kwait();
        if (!atomic_load_explicit(&k->ready, memory_order_relaxed)) {
            k->preparing = 1;
            cl_kunlock();
            cl_device_kernels fresh;
            memset(&fresh, 0, sizeof fresh);
            int final = cl_device_prepare(dev, &fresh);
            cl_klock();
            /* the outcome replaces a previous, transient one's; the cuBLAS handles stay */
            free(k->error);
            k->status = fresh.status, k->error = fresh.error;
            k->cc_major = fresh.cc_major, k->cc_minor = fresh.cc_minor, k->sms = fresh.sms;
            k->has_sass = fresh.has_sass, k->would_jit = fresh.would_jit;
            k->ctx = fresh.ctx, k->module = fresh.module, k->pool = fresh.pool, k->drv = fresh.drv;
            k->dependent_launch = fresh.dependent_launch;
            memcpy(k->fn, fresh.fn, sizeof k->fn);
            k->preparing = 0;
            if (final) atomic_store_explicit(&k->ready, 1, memory_order_release);
            pthread_cond_broadcast(&K.cv);
            cudaload_status st = k->status;
            if (st != CUDALOAD_OK) cl_set_error(k->error);
            cl_kunlock();
            return st;
        }
        cl_kunlock();
    }
    if (k->status != CUDALOAD_OK) cl_set_error(k->error);
    return k->status;
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
    full.built = CL_KERNELS_BUILT;
    full.toolkit_version = CL_KERNELS_TOOLKIT_VERSION;
    full.sass_archs = CL_KERNELS_SASS_ARCHS;
    full.ptx_arch = CL_KERNELS_PTX_ARCH;
#ifndef CL_NO_KERNELS
    full.fatbin_bytes = (size_t)(cl_fatbin_end - cl_fatbin_start);
#endif
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

/* A failed launch on a caller's stream: when the stream is not of dev's primary context (a
 * stream of another device), DEVICE_MISMATCH says so; else CUDA with the error. Asked only
 * after a failure, so a launch that works pays nothing for it. */
static cudaload_status cl_launch_failed(const cudaload_driver_table *d, const cl_device_kernels *k, int dev, int which,
                                        CUresult r, void *stream) {
    CUcontext owner = NULL;
    int special = (uintptr_t)stream <= 2; /* NULL, CU_STREAM_LEGACY (1), CU_STREAM_PER_THREAD (2): any context's */
    if (!special && d->has.cuStreamGetCtx && d->cuStreamGetCtx((CUstream)stream, &owner) == CUDA_SUCCESS && owner &&
        owner != k->ctx) {
        cl_set_errorf("cuLaunchKernel(%s) failed: %s (%d): the stream %p is not of device %d's primary context, where the "
                      "operands are; use a stream of that device",
                      cl_kernel_names[which], cl_cu_name(d, r), (int)r, stream, dev);
        return CUDALOAD_ERROR_DEVICE_MISMATCH;
    }
    cl_set_errorf("cuLaunchKernel(%s) failed: %s (%d)", cl_kernel_names[which], cl_cu_name(d, r), (int)r);
    return CUDALOAD_ERROR_CUDA;
}

/* Makes dev's primary context (where the module lives) current for the calls that follow;
 * pushes it only when the thread's current context is another one (or none). *pushed: pop
 * it after (cl_ctx_leave). what: the call it is for, in the message. */
static cudaload_status cl_ctx_enter(const cudaload_driver_table *d, int dev, const char *what, int *pushed) {
    const cl_device_kernels *k = &K.dev[dev]; /* ready: its fields are final */
    CUcontext cur = NULL;
    *pushed = 0;
    if (d->cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur == k->ctx) return CUDALOAD_OK;
    CUresult p = d->cuCtxPushCurrent(k->ctx);
    if (p != CUDA_SUCCESS) {
        /* not pushed, so nothing to pop; a launch in another context would fail anyway */
        cl_set_errorf("cuCtxPushCurrent (device %d's primary context, for %s) failed: %s (%d)", dev, what, cl_cu_name(d, p),
                      (int)p);
        return CUDALOAD_ERROR_CUDA;
    }
    *pushed = 1;
    return CUDALOAD_OK;
}

static void cl_ctx_leave(const cudaload_driver_table *d, int pushed) {
    CUcontext popped;
    if (pushed) d->cuCtxPopCurrent(&popped); /* only after a successful push (cl_ctx_enter) */
}

/* Launches kernel `which` on dev (its context current: cl_ctx_enter). */
static cudaload_status cl_launch_in(const cudaload_driver_table *d, int dev, int which, unsigned gx, unsigned gy,
                                    unsigned gz, unsigned block, void **args, void *stream) {
    const cl_device_kernels *k = &K.dev[dev];
    CUresult r = d->cuLaunchKernel(k->fn[which], gx, gy, gz, block, 1, 1, 0, (CUstream)stream, args, NULL);
    return r == CUDA_SUCCESS ? CUDALOAD_OK : cl_launch_failed(d, k, dev, which, r, stream);
}

/* Launches kernel `which` (one-dimensional grid) on dev (its context current) to run after the
 * kernel launched just before it on stream, as its programmatic dependent where the device
 * allows it (dependent_launch): its blocks may then start as that kernel's last blocks end,
 * which hides the launch gap between the two (split k at 512^3: 1.8 us of 18 queued,
 * docs/performance.md), and wait in the kernel until its writes are visible
 * (kernels/sgemm.cu: cudaload_sgemm_splitk_reduce). */
static cudaload_status cl_launch_dependent(const cudaload_driver_table *d, int dev, int which, unsigned gx,
                                           unsigned block, void **args, void *stream) {
    const cl_device_kernels *k = &K.dev[dev];
    if (k->dependent_launch) {
        CUlaunchAttribute at;
        memset(&at, 0, sizeof at);
        at.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
        at.value.programmaticStreamSerializationAllowed = 1;
        CUlaunchConfig cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.gridDimX = gx, cfg.gridDimY = 1, cfg.gridDimZ = 1;
        cfg.blockDimX = block, cfg.blockDimY = 1, cfg.blockDimZ = 1;
        cfg.hStream = (CUstream)stream;
        cfg.attrs = &at, cfg.numAttrs = 1;
        if (d->cuLaunchKernelEx(&cfg, k->fn[which], args, NULL) == CUDA_SUCCESS) return CUDALOAD_OK;
        /* refused (a stream capture or a driver that takes no programmatic launch there): nothing
         * was queued, so the ordinary launch below runs it, and reports a real failure */
    }
    return cl_launch_in(d, dev, which, gx, 1, 1, block, args, stream);
}

/* Launches kernel `which` on dev without asking which context is current: the function belongs
 * to dev's primary context, which is current in nearly every call (any runtime call of the
 * thread on dev made it so), and the launch is then the call's only driver call. Where another
 * context (or none) is current, the driver refuses a function of another context, with nothing
 * queued, so the primary context is entered (cl_ctx_enter) and the launch made there; a launch
 * that fails for another reason fails there again and is reported. */
static cudaload_status cl_launch(int dev, int which, unsigned gx, unsigned gy, unsigned block, void **args, void *stream) {
    const cl_device_kernels *k = &K.dev[dev];
    const cudaload_driver_table *d = k->drv;
    if (d->cuLaunchKernel(k->fn[which], gx, gy, 1, block, 1, 1, 0, (CUstream)stream, args, NULL) == CUDA_SUCCESS)
        return CUDALOAD_OK;
    int pushed;
    cudaload_status st = cl_ctx_enter(d, dev, cl_kernel_names[which], &pushed);
    if (st != CUDALOAD_OK) return st;
    st = cl_launch_in(d, dev, which, gx, gy, 1, block, args, stream);
    cl_ctx_leave(d, pushed);
    return st;
}

/* ---- cuBLAS fallback ---- */

cudaload_status cl_kernels_cublas(const cudaload_cublas_table **out) {
    *out = NULL;
    cudaload_status st = cudaload_load_cublas();
    if (st != CUDALOAD_OK) return st;
    *out = cudaload_cublas();
    return *out ? CUDALOAD_OK : CUDALOAD_ERROR_NOT_FOUND; /* not reached: loaded means a table */
}

/* cuBLAS runs on the runtime's current device, and ties a handle to the device current when it
 * is made: dev becomes current for the call; *prev is the device to go back to, or -1. */
static cudaload_status cl_blas_enter(int dev, int *prev) {
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

static void cl_blas_leave(int prev) {
    if (prev >= 0) cudaload_cudart()->cudaSetDevice(prev);
}

/* A cuBLAS handle of dev for this call alone, on stream: an idle one, else a new one (dev is
 * current: cl_blas_enter). No lock is held while cuBLAS runs, and no two threads share a
 * handle (its stream and workspace are state). */
static cudaload_status cl_blas_take(int dev, void *stream, const cudaload_cublas_table **out, cublasHandle_t *h) {
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
static void cl_blas_give(int dev, const cudaload_cublas_table *b, cublasHandle_t h) {
    cl_device_kernels *k = &K.dev[dev];
    cl_klock();
    int kept = k->n_blas_idle < CL_BLAS_POOL;
    if (kept) k->blas_idle[k->n_blas_idle++] = h;
    cl_kunlock();
    if (!kept) b->cublasDestroy(h);
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

/* Below this many multiply-adds (256^3) a second launch costs more than it saves: no split.
 * (GPU time, queued: 256^3 on 64 x 64 tiles is 15.9 us whole and 11.7 us in 4 slices,
 * bench/sgemm_split_tune.cu.) */
#define CL_SCRATCH_MIN_FMA 16777216.0
/* A split k slice covers at least this many k: shorter ones spend more on the partial
 * products' traffic and the prologue than the extra blocks win; except that up to
 * CL_SPLIT_SHORT slices of at least CL_SPLIT_SHORT_K are taken (a small product's few tiles:
 * 256^3 in 4 slices of 64 is 11.7 us, in 2 of 128 14.0 us). */
#define CL_SPLIT_MIN_K 128
#define CL_SPLIT_SHORT 4
#define CL_SPLIT_SHORT_K 64
/* Two slices even out a grid of several waves whose last one is mostly empty only when k is at
 * least this: below it the partial products' traffic costs more than the waves save. */
#define CL_SPLIT_WAVES_MIN_K 2048

static size_t cl_round256(size_t b) { return (b + 255) & ~(size_t)255; }

/* The plan of a product on a device of sms SMs (internal.h). Each tile that can take the operands
 * (a VEC tile: those contiguous along m or n 16-byte aligned, with leading dimensions multiples
 * of 4; a KV tile: the same of those contiguous along k, and k a multiple of 4) and is built for
 * the transpose case is costed as waves x (its blocks an SM holds at once x tile area) / its
 * speed in this case, and the cheapest is taken: a wave of
 * small tiles on a GPU they do not fill runs as fast as their area allows, not as the tile's
 * speed at full occupancy. With scratch (a pool, and a product large enough), a product of too
 * few tiles to fill the GPU twice over (small, short-wide) splits k over more blocks, whose
 * partial products a second kernel sums. */
/* Whether tile T can take a call: built for its transpose case op, and the operands aligned as
 * it needs (vec, kvec: cl_sgemm_plan_weigh). */
static int cl_sgemm_tile_takes(const cl_sgemm_tile *T, int vec, int kvec, int op) {
    return (!T->vec || vec) && (!T->kv || kvec) && T->speed[op] > 0;
}

static void cl_sgemm_plan_tiles(cl_sgemm_plan *p, int scratch, long long sms, int ta, int tb, long long m, long long n, int k,
                                const float *A, long long lda, const float *B, long long ldb) {
    memset(p, 0, sizeof *p);
    /* 16-byte copies: of the operands contiguous along m or n (A unless transposed, B when
     * transposed), and of those contiguous along k (the others) */
    int a_ok = !cl_misaligned(A, 16) && lda % 4 == 0, b_ok = !cl_misaligned(B, 16) && ldb % 4 == 0;
    int vec = (ta || a_ok) && (!tb || b_ok), kvec = k % 4 == 0 && (!ta || a_ok) && (tb || b_ok);
    int op = 2 * ta + tb;
    double best = -1;
    /* unrolled over the constant table, the tile sizes' divisions become shifts: the plan is on
     * the path of every small call (bench/bench_hotpath.c) */
#pragma GCC unroll 8
    for (int t = 0; t < CL_SGEMM_TILE_COUNT; t++) {
        const cl_sgemm_tile *T = &cl_sgemm_tiles[t];
        if (!T->weighed || !cl_sgemm_tile_takes(T, vec, kvec, op)) continue;
        long long tm = (m + T->bm - 1) / T->bm, tn = (n + T->bn - 1) / T->bn, nt = tm * tn, slots = sms * T->per_sm;
        long long waves = 1, held = 1; /* a grid of at most one block per SM: no division */
        if (nt > sms) {
            held = nt > slots ? T->per_sm : (nt + sms - 1) / sms;
            waves = (nt + slots - 1) / slots;
        }
        double cost = (double)waves * (double)held * T->bm * T->bn / T->speed[op];
        if (best < 0 || cost < best) best = cost, p->tile = t, p->tiles_m = tm, p->tiles_n = tn;
    }
    const cl_sgemm_tile *T = &cl_sgemm_tiles[p->tile];
    long long tiles = p->tiles_m * p->tiles_n;
    p->splits = 1, p->kc = k;
    /* one wave of blocks: they all end at once, and their stores of C are the product's last
     * work, unhidden. The 128 x 128 tile stores an unaligned C one float at a time, each sector
     * written 4 times; the any-alignment 256 x 128 tile passes it through shared memory (kernels/
     * sgemm.cu: sgemm_store_staged). Taken when its blocks fit one wave and put no more work on
     * an SM than the choice's (2048^3, ld + 13, on the H100: 256 tiles of 128 x 128, two per SM,
     * or 128 of 256 x 128; 0.98 -> 1.03x cuBLAS). Several waves hide the stores behind other
     * blocks' work, and there the 128 x 128 tile is better (3001^3: 0.97 against 0.82). Decided
     * before the split below, which is for grids that leave SMs idle or a last wave mostly
     * empty: a move needs more blocks than SMs in one wave, neither of those. */
    const cl_sgemm_tile *O = &cl_sgemm_tiles[T->one_wave];
    if (O != T && cl_sgemm_tile_takes(O, vec, kvec, op) && tiles <= sms * T->per_sm) {
        long long om = (m + O->bm - 1) / O->bm, on = (n + O->bn - 1) / O->bn, o_tiles = om * on;
        /* in one wave, the busiest SM's work: the blocks it holds times a block's area */
        long long work = (long long)T->bm * T->bn * ((tiles + sms - 1) / sms);
        long long o_work = (long long)O->bm * O->bn * ((o_tiles + sms - 1) / sms);
        if (o_tiles <= sms * O->per_sm && o_work <= work) {
            p->tile = T->one_wave, p->tiles_m = om, p->tiles_n = on;
            return;
        }
    }
    scratch = scratch && k > 0 && (double)m * (double)n * (double)k >= CL_SCRATCH_MIN_FMA;
    /* split when the tiles fill at most half the slots, then into enough slices for two waves of
     * blocks: one wave leaves the SMs idle behind its last blocks (128 x 8192 x 8192 on 128 x 64
     * tiles: 1.03x cuBLAS in 4 slices, 0.97x in 2) */
    long long slots = sms * T->per_sm, want = tiles > 0 && 2 * tiles <= slots ? 2 * slots / tiles : 0;
    /* several waves whose last one is mostly empty: two slices fill the waves better (3001^3 on
     * 128 x 128 tiles: 576 blocks fill 73% of 3 waves of 264 slots, 1152 fill 87% of 5; 1.010x
     * cuBLAS against 0.966, bench/sgemm_split_tune.cu) */
    if (tiles > slots && k >= CL_SPLIT_WAVES_MIN_K) {
        double fill1 = (double)tiles / (double)(((tiles + slots - 1) / slots) * slots);
        double fill2 = (double)(2 * tiles) / (double)(((2 * tiles + slots - 1) / slots) * slots);
        if (fill2 >= 1.1 * fill1) want = 2;
    }
    long long most = k / CL_SPLIT_MIN_K, short_most = k / CL_SPLIT_SHORT_K;
    if (most < CL_SPLIT_SHORT) most = short_most < CL_SPLIT_SHORT ? short_most : CL_SPLIT_SHORT;
    if (want > most) want = most;
    if (want > 16) want = 16;
    if (scratch && want >= 2 && n <= CL_GRID_Y_MAX) {
        long long kc = ((k + want - 1) / want + 15) & ~15LL;
        int splits = (int)((k + kc - 1) / kc);
        size_t bytes = cl_round256((size_t)splits * (size_t)m * (size_t)n * sizeof(float));
        if (splits >= 2 && bytes <= CL_SCRATCH_MAX) p->splits = splits, p->kc = (int)kc, p->bytes_w = bytes;
    }
    /* split the same way, the tile of twice the columns keeps the same SMs busy with the same
     * work while it reads op(A) half as often: taken when its blocks fill at least 90% of one
     * wave (queued, against cuBLAS, 128 x 64 -> 128 x 128, 4 slices: 128 x 8192 x 8192 0.939 ->
     * 0.972, 1000^3 1.060 -> 1.114, 1024^3 1.086 -> 1.102; at 768^3 its 216 blocks fill 82%:
     * not taken) */
    const cl_sgemm_tile *W = &cl_sgemm_tiles[T->wide];
    if (p->splits > 1 && W != T && cl_sgemm_tile_takes(W, vec, kvec, op)) {
        long long wm = (m + W->bm - 1) / W->bm, wn = (n + W->bn - 1) / W->bn, blocks = wm * wn * p->splits,
                  wslots = sms * W->per_sm;
        if (blocks <= wslots && 10 * blocks >= 9 * wslots) p->tile = T->wide, p->tiles_m = wm, p->tiles_n = wn;
    }
}

/* The tile and the split (cl_sgemm_plan_tiles), then the launches: one, unless its grid would
 * exceed 65535 tiles of columns, or number its blocks past 32 bits (the tiles that take theirs
 * in groups: kernels/sgemm.cu); then column chunks of at most that many tiles each. A split
 * product has at most 65535 columns and 2^27 elements (two slices fill 1 GiB of scratch): always
 * one launch. */
void cl_sgemm_plan_weigh(cl_sgemm_plan *p, int scratch, long long sms, int ta, int tb, long long m, long long n, int k,
                         const float *A, long long lda, const float *B, long long ldb) {
    cl_sgemm_plan_tiles(p, scratch, sms, ta, tb, m, n, k, A, lda, B, ldb);
    p->launch_n = p->tiles_n;
    if (p->launch_n > CL_GRID_Y_MAX) p->launch_n = CL_GRID_Y_MAX;
    if (p->tiles_m * p->launch_n > CL_SGEMM_LAUNCH_BLOCKS_MAX) p->launch_n = CL_SGEMM_LAUNCH_BLOCKS_MAX / p->tiles_m;
}

/* The plan of every call. A product inside one block of the smallest tile and too small to
 * split (every small call: 16^3 is bench_launch's) runs on that tile: the answer the weighing
 * gives it on any GPU (test_kernels: test_sgemm_plan_small checks the two agree), taken without
 * weighing every tile, whose cost a small call's host path would carry. */
void cl_sgemm_plan_make(cl_sgemm_plan *p, int scratch, long long sms, int ta, int tb, long long m, long long n, int k,
                        const float *A, long long lda, const float *B, long long ldb) {
    const cl_sgemm_tile *S = &cl_sgemm_tiles[CL_SGEMM_TILE_64x64];
    if (m <= S->bm && n <= S->bn && (double)m * (double)n * (double)k < CL_SCRATCH_MIN_FMA) {
        memset(p, 0, sizeof *p);
        p->tile = CL_SGEMM_TILE_64x64, p->tiles_m = p->tiles_n = p->launch_n = 1, p->splits = 1, p->kc = k;
        return;
    }
    cl_sgemm_plan_weigh(p, scratch, sms, ta, tb, m, n, k, A, lda, B, ldb);
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
