/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kernels_launch.c -- where and how a bundled kernel is launched: the device a call runs on
 * (the one that owns its pointers, else the runtime's current one), dev's primary context made
 * current only where another one is, and the launch itself (cuLaunchKernel, or cuLaunchKernelEx
 * for a programmatic dependent), with a failure told in words.
 */
#define _GNU_SOURCE
#include "cudaload_tables.h"
#include "internal.h"

#include <stdint.h>
#include <string.h>

/* The state (devices, backend, lock) is cl_ctx.kernels (internal.h). */
#define K cl_ctx.kernels

/* ---- the device of a call ---- */

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
cudaload_status cl_call_device(const char *fn, const void *const *ptrs, const char *const *names, int n, int *dev) {
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

/* ---- the launch ---- */

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
cudaload_status cl_ctx_enter(const cudaload_driver_table *d, int dev, const char *what, int *pushed) {
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

void cl_ctx_leave(const cudaload_driver_table *d, int pushed) {
    CUcontext popped;
    if (pushed) d->cuCtxPopCurrent(&popped); /* only after a successful push (cl_ctx_enter) */
}

/* Launches kernel `which` on dev (its context current: cl_ctx_enter). */
cudaload_status cl_launch_in(const cudaload_driver_table *d, int dev, int which, unsigned gx, unsigned gy,
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
cudaload_status cl_launch_dependent(const cudaload_driver_table *d, int dev, int which, unsigned gx,
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
cudaload_status cl_launch(int dev, int which, unsigned gx, unsigned gy, unsigned block, void **args, void *stream) {
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
