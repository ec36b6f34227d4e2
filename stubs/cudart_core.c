/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cudart_core.c -- the hand-written part of the cudart stub: nvcc's registration and launch
 * entry points (declared for C++ only, in crt/host_runtime.h and crt/device_functions.h).
 *
 * The host code nvcc generates registers each translation unit's fatbinary and kernels from a
 * static constructor: before main, before PyInit, before the program may call cudaload_init()
 * with its own roots. Loading the runtime then would fix the search too early, so every
 * registration is kept here and replayed, in order, when the runtime is loaded by the first
 * real call (cl_stub_cudart_loaded, run by stub_core.c before any call goes through).
 *
 * The handle returned to nvcc's code is always this file's record, never the runtime's: the
 * same value stays valid before and after the load, and each later call maps it to the real
 * handle.
 *
 * Locks: the registrations' lock (cl_reg_lock) guards the record list and each record's fields,
 * and is never held while the runtime's code runs (a registration may come from a constructor
 * that dlopen runs under the dynamic loader's own lock, which the runtime may want too). The
 * replay runs under the stubs' lock (stub_core.c: it is part of the runtime's first load), so
 * the runtime's code does run under that one: other threads' first calls wait for the replay to
 * end, and a call back into a stub from it fails fast. The replay walks the list one record at
 * a time, each pinned while it is used: a record unregistered meanwhile stays in the list, and
 * the last one to let it go unregisters it from the runtime and frees it.
 */
#define _GNU_SOURCE
#include "stub.h"

#include "cudaload_stubs.h"
#include "cudaload_tables.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern cl_stub_lib cl_stub_cudart;

/* The entry points, looked up in the loaded runtime when it loads. */
typedef struct cl_reg_fns {
    void **(*register_fatbinary)(void *);
    void (*register_fatbinary_end)(void **);
    void (*unregister_fatbinary)(void **);
    void (*register_function)(void **, const char *, char *, const char *, int, uint3 *, uint3 *, dim3 *, dim3 *, int *);
    void (*register_var)(void **, char *, char *, const char *, int, size_t, int, int);
    void (*register_managed_var)(void **, void **, char *, const char *, int, size_t, int, int);
    char (*init_module)(void **);
    unsigned (*push_call_configuration)(dim3, dim3, size_t, struct CUstream_st *);
    cudaError_t (*pop_call_configuration)(dim3 *, dim3 *, size_t *, void *);
    cudaError_t (*get_kernel)(cudaKernel_t *, const void *);
    cudaError_t (*launch_kernel)(cudaKernel_t, dim3, dim3, void **, size_t, cudaStream_t);
    cudaError_t (*launch_kernel_ptsz)(cudaKernel_t, dim3, dim3, void **, size_t, cudaStream_t);
} cl_reg_fns;

static cl_reg_fns cl_fns; /* written once, before cl_stub_cudart.ready is published */

typedef enum { CL_OP_FUNCTION, CL_OP_VAR, CL_OP_MANAGED_VAR, CL_OP_END } cl_op_kind;

/* One registration call made before the runtime was there, with its arguments. */
typedef struct cl_reg_op {
    struct cl_reg_op *next;
    cl_op_kind kind;
    const char *host;        /* hostFun / hostVar (managed: the void ** as a char *) */
    char *device;            /* deviceFun / deviceAddress */
    const char *name;
    int thread_limit, ext, constant, global;
    size_t size;
    uint3 *tid, *bid;
    dim3 *bdim, *gdim;
    int *wsize;
} cl_reg_op;

typedef enum { CL_REC_KEPT, CL_REC_REPLAYING, CL_REC_LIVE } cl_rec_state;

/* A registered fatbinary: the handle nvcc's code holds. Every field is read and written under
 * cl_reg_lock, but real, which its replayer writes there and others read once it is live. */
typedef struct cl_fatbin {
    struct cl_fatbin *next;
    void *fatbin;
    void **real;             /* the runtime's handle once registered there */
    cl_rec_state state;
    cl_reg_op *ops, **ops_tail; /* kept while not live, in call order */
    int pins;                /* the replay walks it: neither unlinked nor freed while > 0 */
    int unregistered;        /* __cudaUnregisterFatBinary came while it was pinned */
} cl_fatbin;

static pthread_mutex_t cl_reg_lock = PTHREAD_MUTEX_INITIALIZER;
/* Taken around fork so that a child never starts with it held by a thread it does not have.
 * Nothing else is taken or called while it is held, but the replay takes it under the stubs'
 * lock: its handler is registered before the stubs' one (here at the first registration, or by
 * stub_core.c's cl_stub_inner_atfork), so at fork it is taken after the stubs' lock (prepare
 * handlers run in reverse order). */
static pthread_once_t cl_reg_atfork_once = PTHREAD_ONCE_INIT;
static void cl_reg_fork_prepare(void) { pthread_mutex_lock(&cl_reg_lock); }
static void cl_reg_fork_done(void) { pthread_mutex_unlock(&cl_reg_lock); }
static void cl_reg_atfork_register(void) { pthread_atfork(cl_reg_fork_prepare, cl_reg_fork_done, cl_reg_fork_done); }
void cl_stub_inner_atfork(void);
void cl_stub_inner_atfork(void) { pthread_once(&cl_reg_atfork_once, cl_reg_atfork_register); }
static cl_fatbin *cl_fatbins, **cl_fatbins_tail = &cl_fatbins;
static int cl_runtime_live;  /* the runtime is loaded: new fatbinaries register at once */

static void cl_replay_ops(cl_fatbin *r, cl_reg_op *op) {
    while (op) {
        cl_reg_op *next = op->next;
        switch (op->kind) {
        case CL_OP_FUNCTION:
            cl_fns.register_function(r->real, op->host, op->device, op->name, op->thread_limit, op->tid, op->bid,
                                     op->bdim, op->gdim, op->wsize);
            break;
        case CL_OP_VAR:
            cl_fns.register_var(r->real, (char *)op->host, op->device, op->name, op->ext, op->size, op->constant,
                                op->global);
            break;
        case CL_OP_MANAGED_VAR:
            cl_fns.register_managed_var(r->real, (void **)op->host, op->device, op->name, op->ext, op->size,
                                        op->constant, op->global);
            break;
        case CL_OP_END:
            if (cl_fns.register_fatbinary_end) cl_fns.register_fatbinary_end(r->real);
            break;
        }
        free(op);
        op = next;
    }
}

/* Registers r in the runtime and replays its kept calls; calls made meanwhile by another thread
 * are kept too (state REPLAYING) and replayed by the loop before r goes live. The caller keeps
 * r from being freed (a pin, or the handle not yet returned). */
static void cl_replay(cl_fatbin *r) {
    pthread_mutex_lock(&cl_reg_lock);
    if (r->state != CL_REC_KEPT || r->unregistered) {
        pthread_mutex_unlock(&cl_reg_lock);
        return;
    }
    r->state = CL_REC_REPLAYING;
    pthread_mutex_unlock(&cl_reg_lock);
    void **real = cl_fns.register_fatbinary(r->fatbin);
    pthread_mutex_lock(&cl_reg_lock);
    r->real = real;
    pthread_mutex_unlock(&cl_reg_lock);
    for (;;) {
        pthread_mutex_lock(&cl_reg_lock);
        cl_reg_op *ops = r->ops;
        r->ops = NULL;
        r->ops_tail = &r->ops;
        if (!ops) {
            r->state = CL_REC_LIVE;
            pthread_mutex_unlock(&cl_reg_lock);
            return;
        }
        pthread_mutex_unlock(&cl_reg_lock);
        cl_replay_ops(r, ops);
    }
}

/* Unlinks r from the list (cl_reg_lock held). */
static void cl_unlink_locked(cl_fatbin *r) {
    for (cl_fatbin **p = &cl_fatbins; *p; p = &(*p)->next)
        if (*p == r) {
            *p = r->next;
            if (cl_fatbins_tail == &r->next) cl_fatbins_tail = p;
            return;
        }
}

/* Unregisters r from the runtime when it went live there, and frees it with its kept calls
 * (unlinked already; no lock held: the runtime's code runs). */
static void cl_release(cl_fatbin *r, int live, void **real, cl_reg_op *ops) {
    /* at exit, the runtime may already be gone: it unregisters what it holds itself then */
    if (live && real && cl_fns.unregister_fatbinary) cl_fns.unregister_fatbinary(real);
    while (ops) {
        cl_reg_op *next = ops->next;
        free(ops);
        ops = next;
    }
    free(r);
}

/* Lets go of a pinned record (cl_reg_lock held); returns 1 when the caller must release it
 * (unregistered while pinned, and this was the last pin): then it is unlinked already. */
static int cl_unpin_locked(cl_fatbin *r) {
    if (--r->pins > 0 || !r->unregistered) return 0;
    cl_unlink_locked(r);
    return 1;
}

/* Run by stub_core.c once the runtime is loaded, before its table is published. */
void cl_stub_cudart_loaded(const void *table);
void cl_stub_cudart_loaded(const void *table) {
    (void)table;
    cudaload_lib lib;
    void *h = cudaload_lib_by_name("cudart", &lib) == CUDALOAD_OK ? cudaload_handle(lib) : NULL;
    if (!h) return;
#define CL_REG_SYM(field, name) *(void **)&cl_fns.field = dlsym(h, name)
    CL_REG_SYM(register_fatbinary, "__cudaRegisterFatBinary");
    CL_REG_SYM(register_fatbinary_end, "__cudaRegisterFatBinaryEnd");
    CL_REG_SYM(unregister_fatbinary, "__cudaUnregisterFatBinary");
    CL_REG_SYM(register_function, "__cudaRegisterFunction");
    CL_REG_SYM(register_var, "__cudaRegisterVar");
    CL_REG_SYM(register_managed_var, "__cudaRegisterManagedVar");
    CL_REG_SYM(init_module, "__cudaInitModule");
    CL_REG_SYM(push_call_configuration, "__cudaPushCallConfiguration");
    CL_REG_SYM(pop_call_configuration, "__cudaPopCallConfiguration");
    CL_REG_SYM(get_kernel, "__cudaGetKernel");
    CL_REG_SYM(launch_kernel, "__cudaLaunchKernel");
    CL_REG_SYM(launch_kernel_ptsz, "__cudaLaunchKernel_ptsz");
#undef CL_REG_SYM
    if (!cl_fns.register_fatbinary || !cl_fns.register_function) return; /* not a runtime nvcc code can use */
    /* From here on a new record is registered by its own registration (live); those already in
     * the list are replayed here, each pinned while it is used and while its next is read. A
     * record added meanwhile is walked too and skipped (not kept: its registrant replays it). */
    pthread_mutex_lock(&cl_reg_lock);
    cl_runtime_live = 1;
    cl_fatbin *r = cl_fatbins;
    if (r) r->pins++;
    pthread_mutex_unlock(&cl_reg_lock);
    while (r) {
        cl_replay(r);
        pthread_mutex_lock(&cl_reg_lock);
        cl_fatbin *next = r->next;
        if (next) next->pins++;
        int release = cl_unpin_locked(r);
        int live = r->state == CL_REC_LIVE;
        void **real = r->real;
        cl_reg_op *ops = release ? r->ops : NULL;
        pthread_mutex_unlock(&cl_reg_lock);
        if (release) cl_release(r, live, real, ops);
        r = next;
    }
}

/* The runtime, loading it when a registration needs it no more (a real call has come). */
static int cl_runtime_ready(void) {
    return atomic_load_explicit(&cl_stub_cudart.ready, memory_order_acquire) != NULL && cl_fns.register_fatbinary;
}

/* ---- the entry points ---- */

CL_STUB_EXPORT void **__cudaRegisterFatBinary(void *fatCubin);
CL_STUB_EXPORT void **__cudaRegisterFatBinary(void *fatCubin) {
    pthread_once(&cl_reg_atfork_once, cl_reg_atfork_register);
    cl_fatbin *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->fatbin = fatCubin;
    r->ops_tail = &r->ops;
    pthread_mutex_lock(&cl_reg_lock);
    *cl_fatbins_tail = r;
    cl_fatbins_tail = &r->next;
    int live = cl_runtime_live;
    pthread_mutex_unlock(&cl_reg_lock);
    if (live) cl_replay(r); /* loaded already: registered now (nothing kept yet) */
    return (void **)r;
}

static void cl_keep_or_call(cl_fatbin *r, cl_reg_op *op) {
    pthread_mutex_lock(&cl_reg_lock);
    if (r->state != CL_REC_LIVE) {
        *r->ops_tail = op;
        r->ops_tail = &op->next;
        pthread_mutex_unlock(&cl_reg_lock);
        return;
    }
    pthread_mutex_unlock(&cl_reg_lock);
    op->next = NULL;
    cl_replay_ops(r, op);
}

/* Keeps a copy of one registration call for the replay, or passes it on when its fatbinary is live. */
static void cl_keep(void **handle, cl_reg_op op) {
    cl_reg_op *p = handle ? malloc(sizeof *p) : NULL;
    if (!p) return;
    *p = op;
    p->next = NULL;
    cl_keep_or_call((cl_fatbin *)handle, p);
}

CL_STUB_EXPORT void __cudaRegisterFatBinaryEnd(void **fatCubinHandle);
CL_STUB_EXPORT void __cudaRegisterFatBinaryEnd(void **fatCubinHandle) {
    cl_keep(fatCubinHandle, (cl_reg_op){.kind = CL_OP_END});
}

CL_STUB_EXPORT void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun,
                                           const char *deviceName, int thread_limit, uint3 *tid, uint3 *bid,
                                           dim3 *bDim, dim3 *gDim, int *wSize);
CL_STUB_EXPORT void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun,
                                           const char *deviceName, int thread_limit, uint3 *tid, uint3 *bid,
                                           dim3 *bDim, dim3 *gDim, int *wSize) {
    cl_keep(fatCubinHandle, (cl_reg_op){.kind = CL_OP_FUNCTION, .host = hostFun, .device = deviceFun, .name = deviceName,
                                        .thread_limit = thread_limit, .tid = tid, .bid = bid, .bdim = bDim, .gdim = gDim,
                                        .wsize = wSize});
}

CL_STUB_EXPORT void __cudaRegisterVar(void **fatCubinHandle, char *hostVar, char *deviceAddress, const char *deviceName,
                                      int ext, size_t size, int constant, int global);
CL_STUB_EXPORT void __cudaRegisterVar(void **fatCubinHandle, char *hostVar, char *deviceAddress, const char *deviceName,
                                      int ext, size_t size, int constant, int global) {
    cl_keep(fatCubinHandle, (cl_reg_op){.kind = CL_OP_VAR, .host = hostVar, .device = deviceAddress, .name = deviceName,
                                        .ext = ext, .size = size, .constant = constant, .global = global});
}

CL_STUB_EXPORT void __cudaRegisterManagedVar(void **fatCubinHandle, void **hostVarPtrAddress, char *deviceAddress,
                                             const char *deviceName, int ext, size_t size, int constant, int global);
CL_STUB_EXPORT void __cudaRegisterManagedVar(void **fatCubinHandle, void **hostVarPtrAddress, char *deviceAddress,
                                             const char *deviceName, int ext, size_t size, int constant, int global) {
    cl_keep(fatCubinHandle, (cl_reg_op){.kind = CL_OP_MANAGED_VAR, .host = (const char *)hostVarPtrAddress,
                                        .device = deviceAddress, .name = deviceName, .ext = ext, .size = size,
                                        .constant = constant, .global = global});
}

CL_STUB_EXPORT void __cudaUnregisterFatBinary(void **fatCubinHandle);
CL_STUB_EXPORT void __cudaUnregisterFatBinary(void **fatCubinHandle) {
    cl_fatbin *r = (cl_fatbin *)fatCubinHandle;
    if (!r) return;
    pthread_mutex_lock(&cl_reg_lock);
    if (r->pins > 0) {
        /* the replay uses it now: it releases it when it lets it go */
        r->unregistered = 1;
        pthread_mutex_unlock(&cl_reg_lock);
        return;
    }
    cl_unlink_locked(r);
    int live = r->state == CL_REC_LIVE;
    void **real = r->real;
    cl_reg_op *ops = r->ops;
    pthread_mutex_unlock(&cl_reg_lock);
    cl_release(r, live, real, ops);
}

CL_STUB_EXPORT char __cudaInitModule(void **fatCubinHandle);
CL_STUB_EXPORT char __cudaInitModule(void **fatCubinHandle) {
    cl_fatbin *r = (cl_fatbin *)fatCubinHandle;
    if (!r || !cl_stub_table(&cl_stub_cudart) || !cl_fns.init_module) return 0;
    pthread_mutex_lock(&cl_reg_lock);
    void **real = r->real;
    pthread_mutex_unlock(&cl_reg_lock);
    return real ? cl_fns.init_module(real) : 0;
}

/* The launch sequence of <<<>>>: push the configuration, pop it in the kernel's host stub, then
 * __cudaGetKernel + __cudaLaunchKernel (CUDA 13) or cudaLaunchKernel. A push is the first call
 * of a launch, so it loads the runtime (and replays) when needed. */
CL_STUB_EXPORT unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
                                                    struct CUstream_st *stream);
CL_STUB_EXPORT unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
                                                    struct CUstream_st *stream) {
    if (__builtin_expect(!cl_runtime_ready(), 0) && (!cl_stub_table(&cl_stub_cudart) || !cl_fns.push_call_configuration))
        return (unsigned)cudaErrorSharedObjectInitFailed;
    return cl_fns.push_call_configuration(gridDim, blockDim, sharedMem, stream);
}

CL_STUB_EXPORT cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem, void *stream);
CL_STUB_EXPORT cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem, void *stream) {
    if (__builtin_expect(!cl_runtime_ready(), 0) && (!cl_stub_table(&cl_stub_cudart) || !cl_fns.pop_call_configuration))
        return cudaErrorSharedObjectInitFailed;
    return cl_fns.pop_call_configuration(gridDim, blockDim, sharedMem, stream);
}

CL_STUB_EXPORT cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *fun);
CL_STUB_EXPORT cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *fun) {
    if (__builtin_expect(!cl_runtime_ready(), 0) && !cl_stub_table(&cl_stub_cudart)) return cudaErrorSharedObjectInitFailed;
    if (!cl_fns.get_kernel) return cudaErrorNotSupported;
    return cl_fns.get_kernel(kernel, fun);
}

CL_STUB_EXPORT cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
                                              size_t sharedMem, cudaStream_t stream);
CL_STUB_EXPORT cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
                                              size_t sharedMem, cudaStream_t stream) {
    if (__builtin_expect(!cl_runtime_ready(), 0) && !cl_stub_table(&cl_stub_cudart)) return cudaErrorSharedObjectInitFailed;
    if (!cl_fns.launch_kernel) return cudaErrorNotSupported;
    return cl_fns.launch_kernel(kernel, gridDim, blockDim, args, sharedMem, stream);
}

CL_STUB_EXPORT cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
                                                   size_t sharedMem, cudaStream_t stream);
CL_STUB_EXPORT cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
                                                   size_t sharedMem, cudaStream_t stream) {
    if (__builtin_expect(!cl_runtime_ready(), 0) && !cl_stub_table(&cl_stub_cudart)) return cudaErrorSharedObjectInitFailed;
    if (!cl_fns.launch_kernel_ptsz) return cudaErrorNotSupported;
    return cl_fns.launch_kernel_ptsz(kernel, gridDim, blockDim, args, sharedMem, stream);
}

/* ---- no driver at all: say so, not "insufficient" ---- */

/* With the runtime loaded but no usable driver, every call returns cudaErrorInsufficientDriver,
 * whose text ("CUDA driver version is insufficient for CUDA runtime version") misleads when there
 * is no driver at all. The first such call prints the driver's line (where libcudaload looked,
 * the fix), once; cudaGetErrorString then returns it for that code. */
static atomic_int cl_driver_checked;  /* the driver's state was read (once) */
static atomic_int cl_driver_said;     /* cl_driver_why is written (release) */
static char cl_driver_why[640];

void cl_stub_cudart_insufficient(void);
void cl_stub_cudart_insufficient(void) {
    if (atomic_exchange_explicit(&cl_driver_checked, 1, memory_order_acq_rel)) return;
    char line[sizeof cl_driver_why - 64];
    cudaload_status st = cudaload_failure_line(CUDALOAD_LIB_DRIVER, line, sizeof line);
    /* a driver that loaded and is too old: NVIDIA's own text is the right one */
    if (st == CUDALOAD_OK || st == CUDALOAD_ERROR_NOT_ATTEMPTED || !line[0]) return;
    snprintf(cl_driver_why, sizeof cl_driver_why, "libcudaload: the CUDA runtime loaded, but %s", line);
    atomic_store_explicit(&cl_driver_said, 1, memory_order_release);
    cl_stub_print(cl_driver_why);
}

/* By hand for the case above; otherwise the runtime's own text (or why it could not load). */
CL_STUB_EXPORT const char *cudaGetErrorString(cudaError_t error);
CL_STUB_EXPORT const char *cudaGetErrorString(cudaError_t error) {
    const cudaload_cudart_table *t = (const cudaload_cudart_table *)cl_stub_table(&cl_stub_cudart);
    if (!t) return cl_stub_why(&cl_stub_cudart);
    if (error == cudaErrorInsufficientDriver) {
        cl_stub_cudart_insufficient();
        if (atomic_load_explicit(&cl_driver_said, memory_order_acquire)) return cl_driver_why;
    }
    if (!t->cudaGetErrorString) {
        cl_stub_absent(&cl_stub_cudart, "cudaGetErrorString");
        return "libcudaload: cudaGetErrorString is not exported by the loaded cudart";
    }
    return t->cudaGetErrorString(error);
}

/* The registrations kept and replayed so far (include/cudaload_stubs.h). */
CL_STUB_EXPORT void cudaload_stub_registrations(size_t *fatbins, size_t *kept_fatbins) {
    size_t n = 0, k = 0;
    pthread_mutex_lock(&cl_reg_lock);
    for (cl_fatbin *r = cl_fatbins; r; r = r->next) {
        if (r->unregistered) continue; /* gone for nvcc's code; the replay still holds it */
        n++;
        k += r->state != CL_REC_LIVE;
    }
    pthread_mutex_unlock(&cl_reg_lock);
    if (fatbins) *fatbins = n;
    if (kept_fatbins) *kept_fatbins = k;
}
