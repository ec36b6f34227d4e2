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
 *   FAKE_CUDA_DEVICES     device count (default 1); 0 makes cuInit fail with
 *                         CUDA_ERROR_NO_DEVICE (100)
 *   FAKE_CUDA_CC          compute capability as "90" (9.0), "86", "120" or "8.6" (default 90)
 *   FAKE_CUDA_INIT_ERROR  a CUresult (int) for cuInit to return; unset or 0: normal behaviour
 *   FAKE_CUDA_DEVICE_GET_DELAY_MS  cuDeviceGet sleeps this long first (a slow driver: lets a
 *                         test fork while another thread is inside libcudaload's kernel setup)
 *   FAKE_CUDA_DRIVER_GET_VERSION_DELAY_MS  cuDriverGetVersion sleeps this long first (lets a
 *                         test fork while another thread is inside cudaload_init, which calls
 *                         it with the loader's lock held)
 * Like the real driver, device queries before a successful cuInit return
 * CUDA_ERROR_NOT_INITIALIZED, and cuGetErrorName/String return CUDA_ERROR_INVALID_VALUE (and
 * NULL) for a code they do not know.
 *
 * Build (the Makefile does this as build/fake/libcuda.so.1):
 *   cc -std=c11 -Wall -Wextra -Werror -shared -fPIC -Wl,-soname,libcuda.so.1 \
 *      -I/usr/local/cuda/include -o build/fake/libcuda.so.1 tests/fake/fake_cuda.c
 * With -DFAKE_CUDA_OMIT_DEVICE_GET_NAME it lacks cuDeviceGetName: a driver missing a required
 * symbol (build/fake/missing-symbol/libcuda.so.1).
 */
#define _POSIX_C_SOURCE 200809L
#include <cuda.h>
#include <stdlib.h>
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

/* FAKE_CUDA_CC: "90" -> 9.0, "120" -> 12.0, or "8.6" -> 8.6. */
static void compute_capability(int *major, int *minor) {
    const char *v = getenv("FAKE_CUDA_CC");
    if (!v || !v[0]) v = "90";
    const char *dot = strchr(v, '.');
    if (dot) {
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

CUresult CUDAAPI cuInit(unsigned int flags) {
    if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
    int forced = env_int("FAKE_CUDA_INIT_ERROR", 0);
    if (forced) return (CUresult)forced;
    if (device_count() == 0) return CUDA_ERROR_NO_DEVICE;
    initialized = 1;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDriverGetVersion(int *version) {
    delay_from_env("FAKE_CUDA_DRIVER_GET_VERSION_DELAY_MS");
    if (!version) return CUDA_ERROR_INVALID_VALUE;
    *version = env_int("FAKE_CUDA_VERSION", 13000);
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
    compute_capability(&major, &minor);
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
    default: *value = 0; break; /* COMPUTE_MODE 0 = default, INTEGRATED 0, TCC_DRIVER 0, ... */
    }
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
