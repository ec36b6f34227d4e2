/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fake_cuda.c -- a stand-in libcuda.so.1 for the CPU tests.
 *
 * Why it exists: it is the one fake in the test suite, because the thing it fakes cannot be
 * had on a machine without a GPU: a driver that reports a chosen CUDA version and device
 * count. Everything else the tests load is a real CUDA library file (the toolkit's, or pip
 * wheels'). It exports the driver symbols that libcudaload requires (the REQUIRED entries of
 * CUDALOAD_DRIVER_SYMBOLS in include/cudaload_tables.h), with the real prototypes from cuda.h
 * and under the names cuda.h maps them to: cuDeviceTotalMem is defined through the macro, so
 * the exported symbol is cuDeviceTotalMem_v2, exactly as in the real driver (`nm -D` shows it).
 *
 * Behaviour, read from the environment at each call:
 *   FAKE_CUDA_VERSION     cuDriverGetVersion's answer (default 13000 = CUDA 13.0)
 *   FAKE_CUDA_COMPAT_VERSION  the answer instead when this copy's own file lies in a directory
 *                         whose path holds "compat" (a copy standing for a cuda-compat libcuda
 *                         beside one standing for the system's driver, both in one process)
 *   FAKE_CUDA_DEVICES     device count (default 1); 0 makes cuInit fail with
 *                         CUDA_ERROR_NO_DEVICE (100)
 *   FAKE_CUDA_CC          compute capability as "90" (9.0), "86", "120" or "8.6" (default 90); a
 *                         comma-separated list gives device i the i-th ("90,70,130"), the last
 *                         one repeating for the devices beyond it
 *   FAKE_CUDA_INIT_ERROR  a CUresult (int) for cuInit to return; unset or 0: normal behaviour;
 *                         FAKE_CUDA_INIT_ERROR_COUNT > 0 limits it to the first N calls
 *   FAKE_CUDA_DEVICE_GET_DELAY_MS  cuDeviceGet sleeps this long first (a slow driver: lets a
 *                         test fork while another thread is inside libcudaload's kernel setup)
 *   FAKE_CUDA_DRIVER_GET_VERSION_DELAY_MS  cuDriverGetVersion sleeps this long first (lets a
 *                         test fork, or read, while another thread is inside cudaload_init,
 *                         which calls it in the middle of its walk)
 *   FAKE_CUDA_FORK_IN_DRIVER_GET_VERSION  when 1, cuDriverGetVersion forks (foreign code that
 *                         forks in the middle of libcudaload's walk, on the walking thread); the
 *                         child exits at once, the parent waits for it
 *   FAKE_CUDA_HOOK        when 1, cuDriverGetVersion calls the test program's exported
 *                         th_foreign_hook("cuDriverGetVersion") (foreign code that calls back
 *                         into libcudaload from its walk)
 * Like the real driver, device queries before a successful cuInit return
 * CUDA_ERROR_NOT_INITIALIZED, and cuGetErrorName/String return CUDA_ERROR_INVALID_VALUE (and
 * NULL) for a code they do not know.
 *
 * Build (the Makefile does this as build/fake/libcuda.so.1):
 *   cc -std=c11 -Wall -Wextra -Werror -shared -fPIC -Wl,-soname,libcuda.so.1 \
 *      -I/usr/local/cuda/include -o build/fake/libcuda.so.1 tests/fake/fake_cuda.c
 * With -DFAKE_CUDA_OMIT_DEVICE_GET_NAME it lacks cuDeviceGetName: a driver missing a required
 * symbol (build/fake/missing-symbol/libcuda.so.1).
 *
 * With -DFAKE_CUDA_LAUNCH_API (build/fake/launch/libcuda.so.1) it also exports the optional
 * symbols the bundled kernels need (cuDevicePrimaryCtxRetain/Release, cuCtxPushCurrent,
 * cuCtxPopCurrent, cuCtxGetCurrent, cuModuleLoadData, cuModuleUnload, cuModuleGetFunction,
 * cuLaunchKernel), which do no device work: a context is a per-device token, a module and
 * its functions are tokens of the device whose context was current at the load (an image without a
 * fatbin's header, magic 0xBA55ED50 and version 1, is refused: CUDA_ERROR_INVALID_IMAGE), a launch only
 * checks that a context is current (CUDA_ERROR_INVALID_CONTEXT) and that it is the function's
 * (CUDA_ERROR_INVALID_HANDLE, as the real driver refuses a function of another context). Each thread has a
 * context stack as in the real driver (push, pop, get current); a pop on an empty stack
 * fails with CUDA_ERROR_INVALID_CONTEXT and is counted as unbalanced. Forced failures, read
 * at each call like the rest:
 *   FAKE_CUDA_RETAIN_ERROR, FAKE_CUDA_PUSH_ERROR, FAKE_CUDA_MODULE_LOAD_ERROR
 *                         a CUresult for cuDevicePrimaryCtxRetain, cuCtxPushCurrent or
 *                         cuModuleLoadData to return instead of succeeding
 *   FAKE_CUDA_RETAIN_ERROR_COUNT, FAKE_CUDA_PUSH_ERROR_COUNT, FAKE_CUDA_MODULE_LOAD_ERROR_COUNT
 *                         only the process's first N calls of that function fail (later ones
 *                         succeed); unset or 0: every call fails while the error is set
 * Memory and streams, for choosing the device a call runs on (no memory is ever touched):
 *   device memory of device d is the addresses FAKE_DEVPTR(d) + offset, offset < 2^36
 *   (fake_cuda_devptr(d, offset) gives one); managed memory is FAKE_MANAGED + offset
 *   (fake_cuda_managed(offset)); cuPointerGetAttributes answers for them as the real driver
 *   does (memory type, is-managed, device ordinal), and for any other address CUDA_SUCCESS with
 *   zeroed attributes (host memory the driver does not know);
 *   a stream of device d is fake_cuda_stream(d); cuStreamGetCtx gives d's primary context, and
 *   cuLaunchKernel on it fails with CUDA_ERROR_INVALID_HANDLE unless d's context is current.
 * Launches are counted per device too: fake_cuda_launches_on(d).
 * cuLaunchKernelEx launches as cuLaunchKernel does, counted as "launch_ex" too, and as
 * "launch_dependent" when it asks for programmatic stream serialization;
 * FAKE_CUDA_LAUNCH_EX_ERROR: a CUresult it returns instead (nothing launched).
 * FAKE_CUDA_POOLS=1: the devices have stream-ordered memory (cuMemPoolCreate,
 * cuMemPoolSetAttribute, cuMemAllocFromPoolAsync: an address of the pool's device, counted as
 * "pool_alloc"; cuMemFreeAsync: counted as "pool_free").
 * What happened is counted per process, and read through the exported
 * int fake_cuda_stat(const char *name) (dlsym on the loaded fake): "retain", "release",
 * "release_unbalanced", "push", "push_failed", "pop", "pop_unbalanced", "module_load",
 * "module_unload", "launch", "launch_no_context", "retained" (retains not yet released, all
 * devices), "pointer_query" (cuPointerGetAttributes calls), "launch_ex", "launch_dependent",
 * "pool_alloc", "pool_free", "launch_other_context" (launches refused: the function is of another
 * context's module, CUDA_ERROR_INVALID_HANDLE), "ctx_get_current" (cuCtxGetCurrent calls); -1 for
 * an unknown name.
 *
 * Built with mingw-w64 it is the fake nvcuda.dll of the Windows tests (tests/windows/): the same
 * exports, without the fork of FAKE_CUDA_FORK_IN_DRIVER_GET_VERSION.
 *
 * NVML, for the branch libcudaload reads where /proc/driver/nvidia/version is not there
 * (containers, WSL): every build also exports nvmlInit_v2, nvmlShutdown and
 * nvmlSystemGetDriverVersion, so a copy named libnvidia-ml.so.1 stands for the driver's NVML.
 *   FAKE_NVML_DRIVER_VERSION   the branch nvmlSystemGetDriverVersion gives (default 580.65.06)
 */
#define _POSIX_C_SOURCE 200809L
#ifndef _WIN32
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#endif
#include <cuda.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#ifndef _WIN32
#include <sys/wait.h>
#include <unistd.h>
#endif
#include <string.h>
#include <time.h>

static int env_int(const char *name, int fallback) {
    const char *v = getenv(name);
    return v && v[0] ? atoi(v) : fallback;
}

static int device_count(void) {
    int n = env_int("FAKE_CUDA_DEVICES", 1);
    return n < 0 ? 0 : n;
}

/* FAKE_CUDA_CC for device dev: "90" -> 9.0, "120" -> 12.0, or "8.6" -> 8.6; the dev-th item of
 * a comma-separated list (the last one for the devices beyond it). */
static void compute_capability(int dev, int *major, int *minor) {
    const char *v = getenv("FAKE_CUDA_CC");
    if (!v || !v[0]) v = "90";
    for (int i = 0; i < dev && strchr(v, ','); i++) v = strchr(v, ',') + 1;
    const char *dot = strchr(v, '.'), *comma = strchr(v, ',');
    if (dot && (!comma || dot < comma)) {
        *major = atoi(v);
        *minor = atoi(dot + 1);
    } else {
        int cc = atoi(v);
        *major = cc / 10;
        *minor = cc % 10;
    }
}

static int initialized;

static void delay_from_env(const char *name) {
    int ms = env_int(name, 0);
    if (ms <= 0) return;
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static atomic_int init_calls;
CUresult CUDAAPI cuInit(unsigned int flags) {
    if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
    int forced = env_int("FAKE_CUDA_INIT_ERROR", 0);
    int limit = env_int("FAKE_CUDA_INIT_ERROR_COUNT", 0); /* > 0: only the first N calls fail */
    int n = atomic_fetch_add(&init_calls, 1) + 1;
    if (forced && (limit <= 0 || n <= limit)) return (CUresult)forced;
    if (device_count() == 0) return CUDA_ERROR_NO_DEVICE;
    initialized = 1;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDriverGetVersion(int *version) {
    delay_from_env("FAKE_CUDA_DRIVER_GET_VERSION_DELAY_MS");
#ifndef _WIN32 /* the Windows build (nvcuda.dll, tests/windows/): no fork there */
    if (env_int("FAKE_CUDA_FORK_IN_DRIVER_GET_VERSION", 0) == 1) {
        pid_t pid = fork();
        if (pid == 0) _exit(0);
        if (pid > 0) waitpid(pid, NULL, 0);
    }
#endif
#ifndef _WIN32
    if (env_int("FAKE_CUDA_HOOK", 0) == 1) {
        /* foreign code calling back into libcudaload: the test program's th_foreign_hook */
        void *p = dlsym(RTLD_DEFAULT, "th_foreign_hook");
        void (*hook)(const char *);
        if (p) {
            memcpy(&hook, &p, sizeof p);
            hook("cuDriverGetVersion");
        }
    }
#endif
    if (!version) return CUDA_ERROR_INVALID_VALUE;
    *version = env_int("FAKE_CUDA_VERSION", 13000);
#ifndef _WIN32
    Dl_info self;
    if (getenv("FAKE_CUDA_COMPAT_VERSION") && dladdr((void *)cuDriverGetVersion, &self) && self.dli_fname &&
        strstr(self.dli_fname, "compat"))
        *version = env_int("FAKE_CUDA_COMPAT_VERSION", *version);
#endif
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetCount(int *count) {
    if (!count) return CUDA_ERROR_INVALID_VALUE;
    if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
    *count = device_count();
    return CUDA_SUCCESS;
}

/* The checks every per-device query makes, in the real driver's order. */
static CUresult check_device(const void *out, CUdevice dev) {
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
    if (dev < 0 || dev >= device_count()) return CUDA_ERROR_INVALID_DEVICE;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal) {
    delay_from_env("FAKE_CUDA_DEVICE_GET_DELAY_MS");
    CUresult st = check_device(device, ordinal);
    if (st != CUDA_SUCCESS) return st;
    *device = ordinal;
    return CUDA_SUCCESS;
}

#ifndef FAKE_CUDA_OMIT_DEVICE_GET_NAME
CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice dev) {
    if (len <= 0) return CUDA_ERROR_INVALID_VALUE;
    CUresult st = check_device(name, dev);
    if (st != CUDA_SUCCESS) return st;
    strncpy(name, "Fake CUDA Device", (size_t)len - 1);
    name[len - 1] = 0;
    return CUDA_SUCCESS;
}
#endif

CUresult CUDAAPI cuDeviceGetAttribute(int *value, CUdevice_attribute attrib, CUdevice dev) {
    CUresult st = check_device(value, dev);
    if (st != CUDA_SUCCESS) return st;
    if ((int)attrib <= 0 || attrib >= CU_DEVICE_ATTRIBUTE_MAX) return CUDA_ERROR_INVALID_VALUE;
    int major, minor;
    compute_capability(dev, &major, &minor);
    /* An H100-like device; anything not listed is 0 ("not supported"). */
    switch (attrib) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = major; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *value = minor; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *value = 132; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: *value = 2048; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: *value = 32; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *value = 32; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: *value = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: *value = 64; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: *value = 2147483647; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: *value = 65535; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *value = 48 * 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *value = 227 * 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: *value = 228 * 1024; break;
    case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: *value = 64 * 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK:
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: *value = 65536; break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *value = 1980000; break;        /* kHz */
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: *value = 2619000; break; /* kHz */
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: *value = 5120; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *value = 50 * 1024 * 1024; break;
    case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: *value = 3; break;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: *value = 0x18 + dev; break;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS:
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
    case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY:
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY:
    case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH:
    case CU_DEVICE_ATTRIBUTE_ECC_ENABLED: *value = 1; break;
#ifdef FAKE_CUDA_LAUNCH_API
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: *value = env_int("FAKE_CUDA_POOLS", 0) != 0; break;
#endif
    default: *value = 0; break; /* COMPUTE_MODE 0 = default, INTEGRATED 0, TCC_DRIVER 0, ... */
    }
    return CUDA_SUCCESS;
}

/* "0000:18:00.0" for device 0, 0x19 for device 1, ...: as the PCI_BUS_ID attribute */
CUresult CUDAAPI cuDeviceGetPCIBusId(char *id, int len, CUdevice dev) {
    if (len <= 0) return CUDA_ERROR_INVALID_VALUE;
    CUresult st = check_device(id, dev);
    if (st != CUDA_SUCCESS) return st;
    snprintf(id, (size_t)len, "0000:%02x:00.0", 0x18 + dev);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceTotalMem(size_t *bytes, CUdevice dev) { /* exported as cuDeviceTotalMem_v2 */
    CUresult st = check_device(bytes, dev);
    if (st != CUDA_SUCCESS) return st;
    *bytes = (size_t)80 << 30;
    return CUDA_SUCCESS;
}

/* The names and texts of the real driver, for the codes this fake returns and the codes a
 * test is likely to force through FAKE_CUDA_INIT_ERROR. */
static const struct {
    CUresult code;
    const char *name;
    const char *text;
} fake_errors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {CUDA_ERROR_STUB_LIBRARY, "CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library"},
    {CUDA_ERROR_DEVICE_UNAVAILABLE, "CUDA_ERROR_DEVICE_UNAVAILABLE", "CUDA-capable device(s) is/are busy or unavailable"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {CUDA_ERROR_OPERATING_SYSTEM, "CUDA_ERROR_OPERATING_SYSTEM", "OS call failed or operation not supported on this OS"},
    {CUDA_ERROR_SYSTEM_NOT_READY, "CUDA_ERROR_SYSTEM_NOT_READY", "system not yet initialized"},
    {CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
     "system has unsupported display driver / cuda driver combination"},
    {CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
     "forward compatibility was attempted on non supported HW"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {CUDA_ERROR_NO_BINARY_FOR_GPU, "CUDA_ERROR_NO_BINARY_FOR_GPU", "no kernel image is available for execution on the device"},
    {CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", "the provided PTX was compiled with an unsupported toolchain."},
    {CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready"},
    {CUDA_ERROR_LAUNCH_TIMEOUT, "CUDA_ERROR_LAUNCH_TIMEOUT", "the launch timed out and was terminated"},
    {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

static CUresult lookup_error(CUresult code, const char **str, int want_text) {
    if (!str) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof fake_errors / sizeof fake_errors[0]; i++) {
        if (fake_errors[i].code == code) {
            *str = want_text ? fake_errors[i].text : fake_errors[i].name;
            return CUDA_SUCCESS;
        }
    }
    *str = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuGetErrorName(CUresult error, const char **str) { return lookup_error(error, str, 0); }

CUresult CUDAAPI cuGetErrorString(CUresult error, const char **str) { return lookup_error(error, str, 1); }

#ifdef FAKE_CUDA_LAUNCH_API
/* ---- the launch API (build/fake/launch/libcuda.so.1 only): tokens, a context stack, counters ---- */

enum { S_RETAIN, S_RELEASE, S_RELEASE_UNBALANCED, S_PUSH, S_PUSH_FAILED, S_POP, S_POP_UNBALANCED, S_MODULE_LOAD,
       S_MODULE_UNLOAD, S_LAUNCH, S_LAUNCH_NO_CONTEXT, S_RETAINED, S_POINTER_QUERY, S_LAUNCH_EX, S_LAUNCH_DEPENDENT,
       S_POOL_ALLOC, S_POOL_FREE, S_LAUNCH_OTHER_CONTEXT, S_CTX_GET_CURRENT, S_COUNT };
static const char *const stat_names[S_COUNT] = {"retain", "release", "release_unbalanced", "push", "push_failed", "pop",
                                                "pop_unbalanced", "module_load", "module_unload", "launch",
                                                "launch_no_context", "retained", "pointer_query", "launch_ex",
                                                "launch_dependent", "pool_alloc", "pool_free", "launch_other_context",
                                                "ctx_get_current"};
static atomic_int stats[S_COUNT];
/* calls of each function that can be forced to fail, for the _COUNT variables */
static atomic_int retain_calls, push_calls, module_load_calls;

int fake_cuda_stat(const char *name); /* exported for the tests; no header */
int fake_cuda_stat(const char *name) {
    for (int i = 0; name && i < S_COUNT; i++)
        if (strcmp(stat_names[i], name) == 0) return atomic_load(&stats[i]);
    return -1;
}

/* FAKE_CUDA_<what>_ERROR, limited to the first FAKE_CUDA_<what>_ERROR_COUNT calls when that is > 0;
 * *calls counts this function's calls in the process. */
static CUresult forced(const char *error_var, const char *count_var, atomic_int *calls) {
    int n = atomic_fetch_add(calls, 1) + 1;
    int code = env_int(error_var, 0);
    int count = env_int(count_var, 0);
    if (code == 0 || (count > 0 && n > count)) return CUDA_SUCCESS;
    return (CUresult)code;
}

#define FAKE_MAX_DEVICES 64
#define FAKE_STACK 16
static char primary_ctx[FAKE_MAX_DEVICES];      /* device d's context is &primary_ctx[d] */
static atomic_int primary_refs[FAKE_MAX_DEVICES];
static _Thread_local CUcontext ctx_stack[FAKE_STACK];
static _Thread_local int ctx_depth;
/* device d's module and its functions are the tokens &module_token[d], &function_token[d]: a
 * module belongs to the context current when it was loaded, as in the real driver */
static char module_token[FAKE_MAX_DEVICES], function_token[FAKE_MAX_DEVICES];

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev) {
    CUresult st = check_device(pctx, dev);
    if (st != CUDA_SUCCESS) return st;
    if (dev >= FAKE_MAX_DEVICES) return CUDA_ERROR_INVALID_DEVICE;
    if ((st = forced("FAKE_CUDA_RETAIN_ERROR", "FAKE_CUDA_RETAIN_ERROR_COUNT", &retain_calls)) != CUDA_SUCCESS) return st;
    atomic_fetch_add(&primary_refs[dev], 1);
    atomic_fetch_add(&stats[S_RETAIN], 1);
    atomic_fetch_add(&stats[S_RETAINED], 1);
    *pctx = (CUcontext)(void *)&primary_ctx[dev];
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev) { /* exported as cuDevicePrimaryCtxRelease_v2 */
    if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
    if (dev < 0 || dev >= device_count() || dev >= FAKE_MAX_DEVICES) return CUDA_ERROR_INVALID_DEVICE;
    int refs = atomic_load(&primary_refs[dev]);
    while (refs > 0 && !atomic_compare_exchange_weak(&primary_refs[dev], &refs, refs - 1)) {
    }
    if (refs <= 0) {
        atomic_fetch_add(&stats[S_RELEASE_UNBALANCED], 1);
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    atomic_fetch_add(&stats[S_RELEASE], 1);
    atomic_fetch_sub(&stats[S_RETAINED], 1);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPushCurrent(CUcontext ctx) { /* exported as cuCtxPushCurrent_v2 */
    CUresult st = forced("FAKE_CUDA_PUSH_ERROR", "FAKE_CUDA_PUSH_ERROR_COUNT", &push_calls);
    if (st == CUDA_SUCCESS && !ctx) st = CUDA_ERROR_INVALID_CONTEXT;
    if (st == CUDA_SUCCESS && ctx_depth == FAKE_STACK) st = CUDA_ERROR_OUT_OF_MEMORY;
    if (st != CUDA_SUCCESS) {
        atomic_fetch_add(&stats[S_PUSH_FAILED], 1);
        return st;
    }
    ctx_stack[ctx_depth++] = ctx;
    atomic_fetch_add(&stats[S_PUSH], 1);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPopCurrent(CUcontext *pctx) { /* exported as cuCtxPopCurrent_v2 */
    if (ctx_depth == 0) {
        atomic_fetch_add(&stats[S_POP_UNBALANCED], 1);
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    CUcontext top = ctx_stack[--ctx_depth];
    if (pctx) *pctx = top;
    atomic_fetch_add(&stats[S_POP], 1);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetCurrent(CUcontext *pctx) {
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    atomic_fetch_add(&stats[S_CTX_GET_CURRENT], 1);
    *pctx = ctx_depth ? ctx_stack[ctx_depth - 1] : NULL;
    return CUDA_SUCCESS;
}

/* The device whose primary context is current on this thread; a context must be current. */
static int current_device(void) { return (int)((char *)(void *)ctx_stack[ctx_depth - 1] - primary_ctx); }

CUresult CUDAAPI cuModuleLoadData(CUmodule *module, const void *image) {
    if (!module || !image) return CUDA_ERROR_INVALID_VALUE;
    if (!ctx_depth) return CUDA_ERROR_INVALID_CONTEXT;
    CUresult st = forced("FAKE_CUDA_MODULE_LOAD_ERROR", "FAKE_CUDA_MODULE_LOAD_ERROR_COUNT", &module_load_calls);
    if (st != CUDA_SUCCESS) return st;
    /* a fatbin, as the real driver checks first: its header's magic and version 1 (anything
     * else, such as bytes read from the wrong place of a file, is refused as the driver does) */
    const unsigned char *h = image;
    if (h[0] != 0x50 || h[1] != 0xed || h[2] != 0x55 || h[3] != 0xba || h[4] != 1 || h[5] != 0) return CUDA_ERROR_INVALID_IMAGE;
    atomic_fetch_add(&stats[S_MODULE_LOAD], 1);
    *module = (CUmodule)(void *)&module_token[current_device()];
    return CUDA_SUCCESS;
}

static int module_device(CUmodule module) {
    char *t = (char *)(void *)module;
    return t >= module_token && t < module_token + FAKE_MAX_DEVICES ? (int)(t - module_token) : -1;
}

CUresult CUDAAPI cuModuleUnload(CUmodule module) {
    if (module_device(module) < 0) return CUDA_ERROR_INVALID_HANDLE;
    atomic_fetch_add(&stats[S_MODULE_UNLOAD], 1);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleGetFunction(CUfunction *fn, CUmodule module, const char *name) {
    if (!fn || !name) return CUDA_ERROR_INVALID_VALUE;
    int dev = module_device(module);
    if (dev < 0) return CUDA_ERROR_INVALID_HANDLE;
    *fn = (CUfunction)(void *)&function_token[dev];
    return CUDA_SUCCESS;
}

/* ---- memory and streams: address ranges standing for device d's memory, managed memory, d's streams ---- */
#define FAKE_DEVPTR(d) (0x100000000000ULL + ((unsigned long long)(d) << 36))
#define FAKE_MANAGED 0x200000000000ULL
#define FAKE_STREAM(d) (0x300000000000ULL + (unsigned long long)(d) * 16)
void *fake_cuda_devptr(int dev, unsigned long long offset); /* exported for the tests; no header */
void *fake_cuda_managed(unsigned long long offset);
void *fake_cuda_stream(int dev);
int fake_cuda_launches_on(int dev);
void *fake_cuda_devptr(int dev, unsigned long long offset) { return (void *)(uintptr_t)(FAKE_DEVPTR(dev) + offset); }
void *fake_cuda_managed(unsigned long long offset) { return (void *)(uintptr_t)(FAKE_MANAGED + offset); }
void *fake_cuda_stream(int dev) { return (void *)(uintptr_t)FAKE_STREAM(dev); }

/* The device of a fake stream, or -1 (not one: NULL, the legacy or per-thread stream, or junk). */
static int stream_device(CUstream s) {
    unsigned long long v = (unsigned long long)(uintptr_t)s;
    if (v < FAKE_STREAM(0) || v >= FAKE_STREAM(FAKE_MAX_DEVICES) || (v - FAKE_STREAM(0)) % 16) return -1;
    return (int)((v - FAKE_STREAM(0)) / 16);
}

CUresult CUDAAPI cuPointerGetAttributes(unsigned int n, CUpointer_attribute *attrs, void **data, CUdeviceptr ptr) {
    if (!attrs || !data) return CUDA_ERROR_INVALID_VALUE;
    if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
    atomic_fetch_add(&stats[S_POINTER_QUERY], 1);
    unsigned long long p = (unsigned long long)ptr;
    int dev = -1, managed = 0;
    if (p >= FAKE_DEVPTR(0) && p < FAKE_DEVPTR(device_count())) dev = (int)((p - FAKE_DEVPTR(0)) >> 36);
    else if (p >= FAKE_MANAGED && p < FAKE_MANAGED + (1ULL << 36)) dev = 0, managed = 1;
    for (unsigned int i = 0; i < n; i++) {
        if (!data[i]) return CUDA_ERROR_INVALID_VALUE;
        switch (attrs[i]) {
        case CU_POINTER_ATTRIBUTE_MEMORY_TYPE: *(unsigned int *)data[i] = dev >= 0 ? CU_MEMORYTYPE_DEVICE : 0; break;
        case CU_POINTER_ATTRIBUTE_IS_MANAGED: *(unsigned char *)data[i] = (unsigned char)managed; break; /* a bool */
        case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *(int *)data[i] = dev >= 0 ? dev : -2; break;
        default: return CUDA_ERROR_INVALID_VALUE; /* libcudaload asks for these three only */
        }
    }
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamGetCtx(CUstream stream, CUcontext *pctx) {
    int dev = stream_device(stream);
    if (!pctx || dev < 0 || dev >= device_count()) return CUDA_ERROR_INVALID_HANDLE;
    *pctx = (CUcontext)(void *)&primary_ctx[dev];
    return CUDA_SUCCESS;
}

static atomic_int launches_on[FAKE_MAX_DEVICES];
int fake_cuda_launches_on(int dev) { return dev >= 0 && dev < FAKE_MAX_DEVICES ? atomic_load(&launches_on[dev]) : -1; }

CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                                unsigned int by, unsigned int bz, unsigned int shared, CUstream stream, void **params,
                                void **extra);

/* cuLaunchKernelEx: FAKE_CUDA_LAUNCH_EX_ERROR, a CUresult to return instead (nothing launched);
 * else cuLaunchKernel's checks and counts, and "launch_ex" (and "launch_dependent" with the
 * programmatic stream serialization attribute set). */
CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **params, void **extra) {
    if (!config || (config->numAttrs && !config->attrs)) return CUDA_ERROR_INVALID_VALUE;
    int forced_error = env_int("FAKE_CUDA_LAUNCH_EX_ERROR", 0);
    if (forced_error) return (CUresult)forced_error;
    CUresult r = cuLaunchKernel(f, config->gridDimX, config->gridDimY, config->gridDimZ, config->blockDimX,
                                config->blockDimY, config->blockDimZ, config->sharedMemBytes, config->hStream, params, extra);
    if (r != CUDA_SUCCESS) return r;
    atomic_fetch_add(&stats[S_LAUNCH_EX], 1);
    for (unsigned int i = 0; i < config->numAttrs; i++)
        if (config->attrs[i].id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION &&
            config->attrs[i].value.programmaticStreamSerializationAllowed)
            atomic_fetch_add(&stats[S_LAUNCH_DEPENDENT], 1);
    return CUDA_SUCCESS;
}

/* Stream-ordered memory (with FAKE_CUDA_POOLS=1 the devices say they have it): a pool is a
 * token of its device; an allocation is an address of that device's memory, counted, never
 * touched; a free is counted. */
static char pool_token[FAKE_MAX_DEVICES];
static atomic_ullong pool_next;

CUresult CUDAAPI cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *props) {
    if (!pool || !props || props->location.type != CU_MEM_LOCATION_TYPE_DEVICE || props->location.id < 0 ||
        props->location.id >= device_count() || props->location.id >= FAKE_MAX_DEVICES)
        return CUDA_ERROR_INVALID_VALUE;
    *pool = (CUmemoryPool)(void *)&pool_token[props->location.id];
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value) {
    (void)attr;
    return pool && value ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytes, CUmemoryPool pool, CUstream stream) {
    (void)stream;
    char *t = (char *)(void *)pool;
    if (!dptr || !bytes || t < pool_token || t >= pool_token + FAKE_MAX_DEVICES) return CUDA_ERROR_INVALID_VALUE;
    unsigned long long off = atomic_fetch_add(&pool_next, (bytes + 255) & ~255ULL) % (1ULL << 35);
    *dptr = (CUdeviceptr)fake_cuda_devptr((int)(t - pool_token), off);
    atomic_fetch_add(&stats[S_POOL_ALLOC], 1);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr dptr, CUstream stream) {
    (void)stream;
    if (!dptr) return CUDA_ERROR_INVALID_VALUE;
    atomic_fetch_add(&stats[S_POOL_FREE], 1);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                                unsigned int by, unsigned int bz, unsigned int shared, CUstream stream, void **params,
                                void **extra) {
    (void)shared, (void)params, (void)extra;
    char *ft = (char *)(void *)f;
    if (ft < function_token || ft >= function_token + FAKE_MAX_DEVICES || !gx || !gy || !gz || !bx || !by || !bz)
        return CUDA_ERROR_INVALID_VALUE;
    if (gx > 2147483647u || gy > 65535 || gz > 65535) return CUDA_ERROR_INVALID_VALUE; /* the driver's grid limits */
    if (!ctx_depth) {
        atomic_fetch_add(&stats[S_LAUNCH_NO_CONTEXT], 1);
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    int dev = current_device(), sdev = stream_device(stream);
    if ((int)(ft - function_token) != dev) { /* a function of another context's module */
        atomic_fetch_add(&stats[S_LAUNCH_OTHER_CONTEXT], 1);
        return CUDA_ERROR_INVALID_HANDLE;
    }
    if (sdev >= 0 && sdev != dev) return CUDA_ERROR_INVALID_HANDLE; /* a stream of another context */
    atomic_fetch_add(&stats[S_LAUNCH], 1);
    atomic_fetch_add(&launches_on[dev], 1);
    return CUDA_SUCCESS;
}
#endif

/* ---- NVML: the three calls libcudaload makes for the driver branch ---- */
int nvmlInit_v2(void);
int nvmlShutdown(void);
int nvmlSystemGetDriverVersion(char *version, unsigned int length);
int nvmlInit_v2(void) { return 0; }
int nvmlShutdown(void) { return 0; }
int nvmlSystemGetDriverVersion(char *version, unsigned int length) {
    const char *v = getenv("FAKE_NVML_DRIVER_VERSION");
    if (!v || !v[0]) v = "580.65.06";
    if (!version || length <= strlen(v)) return 7; /* NVML_ERROR_INSUFFICIENT_SIZE */
    strcpy(version, v);
    return 0;
}

