/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kernels_device.c -- the bundled kernels on one device: gated, loaded into its primary context
 * once, on first use, and what they were built with (kernels_build.h; the fatbin itself, embedded
 * or read from a file, comes from kernels_image.c). With kernels_image.c, the only files of the
 * launch step that know how the kernels were built.
 *
 * Gate, per device, before the first launch:
 *   - the driver must be of the toolkit's major or newer (SASS built by CUDA 13 needs a
 *     CUDA 13 driver; within a major, minor-version compatibility lets 13.x SASS run);
 *   - the device's compute capability must have SASS in the fatbin (same major, minor <=
 *     the device's), or else the PTX can be JIT-compiled: PTX arch <= the device's and a
 *     driver at least as new as the toolkit that wrote the PTX (an older one fails with
 *     CUDA_ERROR_UNSUPPORTED_PTX_VERSION).
 *
 * Also the launch step's lock (cl_ctx.kernels.mu) and its fork handler.
 */
#define _GNU_SOURCE
#include "cudaload_tables.h"
#include "internal.h"
#include "fork_guard.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CL_NO_KERNELS
#include "kernels_build.h" /* generated: toolkit version, SASS list, PTX arch */
#define CL_KERNELS_BUILT 1
#else
#define CL_KERNELS_BUILT 0
#define CL_KERNELS_TOOLKIT_VERSION 0
#define CL_KERNELS_SASS_ARCHS ""
#define CL_KERNELS_PTX_ARCH 0
#endif

/* How the bundled kernels were built: into info's built, toolkit_version, sass_archs, ptx_arch
 * and fatbin_bytes (cudaload_kernels_info_get). */
void cl_kernels_build_info(cudaload_kernels_info *info) {
    info->built = CL_KERNELS_BUILT;
    info->toolkit_version = CL_KERNELS_TOOLKIT_VERSION;
    info->sass_archs = CL_KERNELS_SASS_ARCHS;
    info->ptx_arch = CL_KERNELS_PTX_ARCH;
    info->fatbin_bytes = cl_kernels_image_bytes();
    info->image_file = cl_kernels_image_file();
}

/* The kernels' names in the fatbin, by CL_K_* (a transpose case a tile is not built for: NULL). */
#define CL_K_TILE_NAMES_(name, bm, bn, bk, threads, per_sm, vec, kv, weighed, wide, one_wave, nn, nt, tn, tt)           \
    (nn) ? "cudaload_sgemm_" #name "_nn" : NULL, (nt) ? "cudaload_sgemm_" #name "_nt" : NULL,                           \
        (tn) ? "cudaload_sgemm_" #name "_tn" : NULL, (tt) ? "cudaload_sgemm_" #name "_tt" : NULL,
const char *const cl_kernel_names[CL_K_COUNT] = {
    "cudaload_saxpy_vec4", "cudaload_saxpy_scalar", "cudaload_sgemm_splitk_reduce", CL_SGEMM_TILES(CL_K_TILE_NAMES_)};

/* The state (devices, backend, lock) is cl_ctx.kernels (internal.h). */
#define K cl_ctx.kernels

/* fork() while another thread holds the kernels lock (K.mu) would leave the child's copy
 * locked forever, as for the loader's mutex. Its handler is registered after the loader's:
 * prepare handlers run in reverse order of registration, so fork takes K.mu first, then the
 * loader's (the order cudaload_kernels_info_get nests them in). No foreign code runs under
 * K.mu, but a fork from the thread that holds it (a signal handler) must not wait for itself:
 * the handler leaves the lock alone then, as the loader's does (cudaload.c). */
static _Thread_local cl_fork_guard cl_kguard; /* this thread holds K.mu (fork_guard.h) */
static void cl_klock_prepare(void) { (void)cl_fork_guard_prepare(&cl_kguard, &K.mu); }
static void cl_kunlock_parent(void) {
    if (cl_fork_guard_taken(&cl_kguard)) pthread_mutex_unlock(&K.mu);
}
/* The child has only the forking thread: a preparation another thread had under way will
 * never end there, so it is forgotten (the child's next call prepares the device again),
 * and nobody waits on the condition variable. */
static void cl_kunlock_child(void) {
    if (!cl_fork_guard_taken(&cl_kguard)) return;
    for (int i = 0; i < CL_MAX_DEVICES; i++) K.dev[i].preparing = 0;
    pthread_cond_init(&K.cv, NULL);
    pthread_mutex_unlock(&K.mu);
}
static void cl_katfork_register(void) {
    cl_atfork_init();
    cl_plat_atfork(cl_klock_prepare, cl_kunlock_parent, cl_kunlock_child);
}
void cl_klock(void) {
    pthread_once(&K.atfork_once, cl_katfork_register);
    cl_fork_guard_lock(&cl_kguard, &K.mu);
}
void cl_kunlock(void) { cl_fork_guard_unlock(&cl_kguard, &K.mu); }
static void cl_kwait(void) { cl_fork_guard_wait(&cl_kguard, &K.cv, &K.mu); }

const char *cl_cu_name(const cudaload_driver_table *d, CUresult r) {
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
    /* the fatbin: embedded, or read from its file (kernels_image.c), before the context is retained */
    const void *image;
    k->status = cl_kernels_image_get(&image, &why);
    if (k->status != CUDALOAD_OK) {
        permanent = k->status != CUDALOAD_ERROR_OUT_OF_MEMORY;
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
        r = d->cuModuleLoadData(&k->module, image);
        if (r == CUDA_SUCCESS) loaded = 1;
        for (int i = 0; r == CUDA_SUCCESS && i < CL_K_COUNT; i++)
            if (cl_kernel_names[i]) r = d->cuModuleGetFunction(&k->fn[i], k->module, cl_kernel_names[i]);
        if (r != CUDA_SUCCESS && loaded) d->cuModuleUnload(k->module); /* a kernel is missing: none is used */
        CUcontext popped;
        d->cuCtxPopCurrent(&popped); /* follows the successful push above, and only it */
    }
    cl_kernels_image_release(image); /* the driver keeps its own copy of a loaded module */
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
cudaload_status cl_device_ready(int dev) {
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
