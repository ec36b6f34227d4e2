/*
 * fake_cuda.c -- a stand-in libcuda.so.1 for the CPU tests.
 *
 * The one fake in the test suite, because the thing it fakes cannot be had on a machine
 * without a GPU: a driver that reports a chosen CUDA version and device count. Everything
 * else the tests load is a real CUDA library file. It exports the driver symbols that
 * libcudaload requires, under the names cuda.h maps them to (cuDeviceTotalMem is exported
 * as cuDeviceTotalMem_v2, exactly as the real driver does), with the real prototypes.
 *
 * Behaviour, read from the environment at each call:
 *   FAKE_CUDA_VERSION     cuDriverGetVersion's answer (default 13000)
 *   FAKE_CUDA_DEVICES     device count (default 1); 0 makes cuInit fail with NO_DEVICE
 *   FAKE_CUDA_CC          compute capability as "90", "80", ... (default 90)
 *   FAKE_CUDA_INIT_ERROR  a CUresult for cuInit to return
 * Built with -DFAKE_CUDA_OMIT_DEVICE_GET_NAME it lacks cuDeviceGetName (a driver missing a
 * required symbol).
 */
#include <cuda.h>
#include <stdlib.h>
#include <string.h>

static int env_int(const char *name, int fallback) {
    const char *v = getenv(name);
    return v && v[0] ? atoi(v) : fallback;
}

static int initialized;

CUresult CUDAAPI cuInit(unsigned int flags) {
    if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
    int forced = env_int("FAKE_CUDA_INIT_ERROR", 0);
    if (forced) return (CUresult)forced;
    if (env_int("FAKE_CUDA_DEVICES", 1) <= 0) return CUDA_ERROR_NO_DEVICE;
    initialized = 1;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDriverGetVersion(int *version) {
    if (!version) return CUDA_ERROR_INVALID_VALUE;
    *version = env_int("FAKE_CUDA_VERSION", 13000);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetCount(int *count) {
    if (!count) return CUDA_ERROR_INVALID_VALUE;
    if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
    *count = env_int("FAKE_CUDA_DEVICES", 1);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal) {
    if (!device) return CUDA_ERROR_INVALID_VALUE;
    if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
    if (ordinal < 0 || ordinal >= env_int("FAKE_CUDA_DEVICES", 1)) return CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return CUDA_SUCCESS;
}

#ifndef FAKE_CUDA_OMIT_DEVICE_GET_NAME
CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice dev) {
    if (!name || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
    if (dev < 0 || dev >= env_int("FAKE_CUDA_DEVICES", 1)) return CUDA_ERROR_INVALID_DEVICE;
    strncpy(name, "Fake CUDA Device", (size_t)len - 1);
    name[len - 1] = 0;
    return CUDA_SUCCESS;
}
#endif

CUresult CUDAAPI cuDeviceGetAttribute(int *value, CUdevice_attribute attrib, CUdevice dev) {
    if (!value) return CUDA_ERROR_INVALID_VALUE;
    if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
    if (dev < 0 || dev >= env_int("FAKE_CUDA_DEVICES", 1)) return CUDA_ERROR_INVALID_DEVICE;
    int cc = env_int("FAKE_CUDA_CC", 90);
    switch (attrib) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = cc / 10; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *value = cc % 10; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *value = 132; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = 1024; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *value = 32; break;
    default: *value = 0; break;
    }
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceTotalMem(size_t *bytes, CUdevice dev) {
    if (!bytes) return CUDA_ERROR_INVALID_VALUE;
    if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
    if (dev < 0 || dev >= env_int("FAKE_CUDA_DEVICES", 1)) return CUDA_ERROR_INVALID_DEVICE;
    *bytes = (size_t)80 << 30;
    return CUDA_SUCCESS;
}

static const struct {
    CUresult code;
    const char *name;
    const char *text;
} fake_errors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
};

static int fake_error_index(CUresult code) {
    for (size_t i = 0; i < sizeof fake_errors / sizeof fake_errors[0]; i++)
        if (fake_errors[i].code == code) return (int)i;
    return -1;
}

CUresult CUDAAPI cuGetErrorName(CUresult error, const char **str) {
    int i = fake_error_index(error);
    if (!str) return CUDA_ERROR_INVALID_VALUE;
    if (i < 0) {
        *str = NULL;
        return CUDA_ERROR_INVALID_VALUE;
    }
    *str = fake_errors[i].name;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetErrorString(CUresult error, const char **str) {
    int i = fake_error_index(error);
    if (!str) return CUDA_ERROR_INVALID_VALUE;
    if (i < 0) {
        *str = NULL;
        return CUDA_ERROR_INVALID_VALUE;
    }
    *str = fake_errors[i].text;
    return CUDA_SUCCESS;
}
