/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_fake_driver.c -- the contract of the one fake (tests/fake/fake_cuda.c, a libcuda.so.1
 * that reports a chosen CUDA version and device count), checked on the built files
 * ($CUDALOAD_TEST_BUILD/fake/libcuda.so.1, fake/missing-symbol/libcuda.so.1 and
 * fake/launch/libcuda.so.1) through dlopen, each scenario in a forked child (the fake's cuInit
 * state and counters are per process).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* setenv, strdup, readlink, lstat, clock_gettime with -std=c11 */
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cuda.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"

static char fake[PATH_MAX], fake_missing[PATH_MAX], fake_launch[PATH_MAX];

static int setup(void **state) {
    (void)state;
    const char *b = th_require_build(0);
    if (!b) return -1;
    snprintf(fake, sizeof fake, "%s/fake/libcuda.so.1", b);
    snprintf(fake_missing, sizeof fake_missing, "%s/fake/missing-symbol/libcuda.so.1", b);
    snprintf(fake_launch, sizeof fake_launch, "%s/fake/launch/libcuda.so.1", b);
    return 0;
}

/* The driver's answers, recorded by the child into user_int[] and user. */
enum { U_LOADED, U_INIT, U_VERSION, U_COUNT_ST, U_COUNT, U_GET_ST, U_MAJOR, U_MINOR, U_SMS, U_BAD_ATTR, U_MEM_GIB,
       U_BAD_DEV, U_UNKNOWN_NAME, U_NAME_ST };

#define SYM(h, name) ((__typeof__(&name))dlsym(h, CUDALOAD_SYMBOL_NAME(name)))
#define CUDALOAD_SYMBOL_NAME_(x) #x
#define CUDALOAD_SYMBOL_NAME(x) CUDALOAD_SYMBOL_NAME_(x)

static void child_query(th_result *r, void *arg) {
    void *h = dlopen((const char *)arg, RTLD_NOW | RTLD_LOCAL);
    r->user_int[U_LOADED] = h != NULL;
    if (!h) return;
    int *u = r->user_int;
    u[U_INIT] = SYM(h, cuInit)(0);
    SYM(h, cuDriverGetVersion)(&u[U_VERSION]);
    u[U_COUNT_ST] = SYM(h, cuDeviceGetCount)(&u[U_COUNT]);
    CUdevice dev = -1;
    u[U_GET_ST] = SYM(h, cuDeviceGet)(&dev, 0);
    SYM(h, cuDeviceGetAttribute)(&u[U_MAJOR], CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    SYM(h, cuDeviceGetAttribute)(&u[U_MINOR], CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    SYM(h, cuDeviceGetAttribute)(&u[U_SMS], CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
    int junk;
    u[U_BAD_ATTR] = SYM(h, cuDeviceGetAttribute)(&junk, (CUdevice_attribute)100000, dev);
    size_t mem = 0;
    SYM(h, cuDeviceTotalMem)(&mem, dev);
    u[U_MEM_GIB] = (int)(mem >> 30);
    u[U_BAD_DEV] = SYM(h, cuDeviceGetAttribute)(&junk, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 7);
    const char *s = "untouched";
    u[U_UNKNOWN_NAME] = SYM(h, cuGetErrorName)((CUresult)12345, &s);
    size_t off = (size_t)snprintf(r->user, sizeof r->user, "unknown->%s|", s ? s : "NULL");
    const char *name = NULL, *text = NULL;
    SYM(h, cuGetErrorName)((CUresult)u[U_INIT], &name);
    SYM(h, cuGetErrorString)((CUresult)u[U_INIT], &text);
    off += (size_t)snprintf(r->user + off, sizeof r->user - off, "init->%s:%s|", name ? name : "NULL", text ? text : "NULL");
    __typeof__(&cuDeviceGetName) get_name = SYM(h, cuDeviceGetName);
    char dn[64] = "";
    u[U_NAME_ST] = get_name ? (int)get_name(dn, sizeof dn, dev) : -1;
    snprintf(r->user + off, sizeof r->user - off, "name->%s|", dn);
}

static th_result *query(const char *lib, const char *const *env) {
    th_result *r = th_result_new();
    th_run(r, env, child_query, (void *)lib);
    if (!r->user_int[U_LOADED]) fail_msg("cannot dlopen %s", lib);
    return r;
}

static void test_defaults(void **state) {
    (void)state;
    th_result *r = query(fake, NULL);
    int *u = r->user_int;
    assert_int_equal(u[U_INIT], CUDA_SUCCESS);
    assert_int_equal(u[U_VERSION], 13000);
    assert_int_equal(u[U_COUNT_ST], CUDA_SUCCESS);
    assert_int_equal(u[U_COUNT], 1);
    assert_int_equal(u[U_GET_ST], CUDA_SUCCESS);
    assert_int_equal(u[U_MAJOR], 9);
    assert_int_equal(u[U_MINOR], 0);
    assert_true(u[U_SMS] > 0);
    assert_int_equal(u[U_BAD_ATTR], CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(u[U_MEM_GIB], 80);
    assert_int_equal(u[U_BAD_DEV], CUDA_ERROR_INVALID_DEVICE);
    assert_int_equal(u[U_UNKNOWN_NAME], CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(u[U_NAME_ST], CUDA_SUCCESS);
    assert_non_null(strstr(r->user, "unknown->NULL|"));
    assert_non_null(strstr(r->user, "init->CUDA_SUCCESS:no error|"));
    assert_non_null(strstr(r->user, "name->Fake CUDA Device|"));
    th_result_free(r);
}

static void test_environment(void **state) {
    (void)state;
    const char *env[] = {"FAKE_CUDA_VERSION=12040", "FAKE_CUDA_DEVICES=3", "FAKE_CUDA_CC=86", NULL};
    th_result *r = query(fake, env);
    assert_int_equal(r->user_int[U_VERSION], 12040);
    assert_int_equal(r->user_int[U_COUNT], 3);
    assert_int_equal(r->user_int[U_MAJOR], 8);
    assert_int_equal(r->user_int[U_MINOR], 6);
    const char *env2[] = {"FAKE_CUDA_CC=120", NULL};
    th_run(r, env2, child_query, fake);
    assert_int_equal(r->user_int[U_MAJOR], 12);
    assert_int_equal(r->user_int[U_MINOR], 0);
    const char *env3[] = {"FAKE_CUDA_CC=10.3", NULL};
    th_run(r, env3, child_query, fake);
    assert_int_equal(r->user_int[U_MAJOR], 10);
    assert_int_equal(r->user_int[U_MINOR], 3);
    th_result_free(r);
}

static void test_no_device(void **state) {
    (void)state;
    const char *env[] = {"FAKE_CUDA_DEVICES=0", NULL};
    th_result *r = query(fake, env);
    assert_int_equal(r->user_int[U_INIT], CUDA_ERROR_NO_DEVICE);
    assert_int_equal(r->user_int[U_INIT], 100);
    assert_int_equal(r->user_int[U_COUNT_ST], CUDA_ERROR_NOT_INITIALIZED); /* as the real driver after a failed cuInit */
    assert_int_equal(r->user_int[U_VERSION], 13000);                       /* needs no cuInit */
    assert_non_null(strstr(r->user, "init->CUDA_ERROR_NO_DEVICE:no CUDA-capable device is detected|"));
    th_result_free(r);
}

static void test_forced_init_error(void **state) {
    (void)state;
    const char *env[] = {"FAKE_CUDA_INIT_ERROR=999", NULL};
    th_result *r = query(fake, env);
    assert_int_equal(r->user_int[U_INIT], CUDA_ERROR_UNKNOWN);
    assert_non_null(strstr(r->user, "init->CUDA_ERROR_UNKNOWN:unknown error|"));
    const char *env2[] = {"FAKE_CUDA_INIT_ERROR=803", NULL};
    th_run(r, env2, child_query, fake);
    assert_int_equal(r->user_int[U_INIT], CUDA_ERROR_SYSTEM_DRIVER_MISMATCH);
    assert_non_null(strstr(r->user, "init->CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:"));
    th_result_free(r);
}

/* The two delays (FAKE_CUDA_DEVICE_GET_DELAY_MS, FAKE_CUDA_DRIVER_GET_VERSION_DELAY_MS) that
 * let the fork tests hold a lock of libcudaload's: each call takes at least that long, and
 * without the variable it does not wait. */
static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void child_delays(th_result *r, void *arg) {
    void *h = dlopen((const char *)arg, RTLD_NOW | RTLD_LOCAL);
    r->user_int[0] = h != NULL;
    if (!h) return;
    int v = 0;
    double t0 = now_s();
    r->user_int[1] = SYM(h, cuDriverGetVersion)(&v);
    double t1 = now_s();
    SYM(h, cuInit)(0);
    CUdevice dev = -1;
    double t2 = now_s();
    r->user_int[2] = SYM(h, cuDeviceGet)(&dev, 0);
    double t3 = now_s();
    r->user_int[3] = (int)((t1 - t0) * 1000);
    r->user_int[4] = (int)((t3 - t2) * 1000);
    r->user_int[5] = v;
}

static void test_delays(void **state) {
    (void)state;
    const char *env[] = {"FAKE_CUDA_DRIVER_GET_VERSION_DELAY_MS=300", "FAKE_CUDA_DEVICE_GET_DELAY_MS=200", NULL};
    th_result *r = th_result_new();
    th_run(r, env, child_delays, fake);
    assert_int_equal(r->user_int[0], 1);
    assert_int_equal(r->user_int[1], CUDA_SUCCESS);
    assert_int_equal(r->user_int[2], CUDA_SUCCESS);
    assert_int_equal(r->user_int[5], 13000);
    if (r->user_int[3] < 300 || r->user_int[4] < 200)
        fail_msg("cuDriverGetVersion took %d ms (want >= 300), cuDeviceGet %d ms (want >= 200)", r->user_int[3],
                 r->user_int[4]);
    th_run(r, NULL, child_delays, fake);
    if (r->user_int[3] >= 300 || r->user_int[4] >= 200)
        fail_msg("without the variables: cuDriverGetVersion took %d ms, cuDeviceGet %d ms", r->user_int[3], r->user_int[4]);
    th_result_free(r);
}

static void test_exports(void **state) {
    (void)state;
    void *h = dlopen(fake, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(h);
    /* the versioned ABI names, as the real driver exports them (cuda.h maps the plain names) */
    assert_non_null(dlsym(h, "cuDeviceTotalMem_v2"));
    assert_null(dlsym(h, "cuDeviceTotalMem"));
    static const char *const required[] = {"cuInit", "cuDriverGetVersion", "cuDeviceGetCount", "cuDeviceGet",
                                           "cuDeviceGetName", "cuDeviceGetAttribute", "cuGetErrorName",
                                           "cuGetErrorString"};
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
        if (!dlsym(h, required[i])) fail_msg("%s does not export %s", fake, required[i]);
    void *m = dlopen(fake_missing, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(m);
    assert_true(m != h);
    assert_null(dlsym(m, "cuDeviceGetName"));
    assert_non_null(dlsym(m, "cuInit"));
    /* the launch API is in the launch build only (the default one is a driver without it) */
    void *l = dlopen(fake_launch, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(l);
    static const char *const launch[] = {"cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRelease_v2", "cuCtxPushCurrent_v2",
                                         "cuCtxPopCurrent_v2", "cuCtxGetCurrent", "cuModuleLoadData", "cuModuleUnload",
                                         "cuModuleGetFunction", "cuLaunchKernel", "fake_cuda_stat"};
    for (size_t i = 0; i < sizeof launch / sizeof launch[0]; i++) {
        if (!dlsym(l, launch[i])) fail_msg("%s does not export %s", fake_launch, launch[i]);
        if (dlsym(h, launch[i])) fail_msg("%s exports %s", fake, launch[i]);
    }
    dlclose(l);
    dlclose(m);
    dlclose(h);
}

/* The launch build's context stack, tokens, forced failures and counters. */
enum { LA_RETAIN1, LA_RETAIN2, LA_LOAD_NOCTX, LA_PUSH, LA_CURRENT_IS_CTX, LA_LOAD, LA_FN, LA_LAUNCH, LA_PUSH_FORCED,
       LA_POP, LA_POP_EMPTY, LA_LAUNCH_NOCTX, LA_RELEASE, LA_RELEASE_AGAIN, LA_N };

static void child_launch_api(th_result *r, void *arg) {
    void *h = dlopen((const char *)arg, RTLD_NOW | RTLD_LOCAL);
    r->user_int[LA_N] = h != NULL;
    if (!h) return;
    int *u = r->user_int;
    SYM(h, cuInit)(0);
    CUcontext ctx = NULL, cur = NULL, popped = NULL;
    u[LA_RETAIN1] = SYM(h, cuDevicePrimaryCtxRetain)(&ctx, 0); /* FAKE_CUDA_RETAIN_ERROR=2, _COUNT=1 */
    u[LA_RETAIN2] = SYM(h, cuDevicePrimaryCtxRetain)(&ctx, 0);
    CUmodule mod = NULL;
    static const unsigned char image[16] = {0x50, 0xed, 0x55, 0xba, 1}; /* a fatbin's header (the fake checks it) */
    u[LA_LOAD_NOCTX] = SYM(h, cuModuleLoadData)(&mod, image);
    u[LA_PUSH] = SYM(h, cuCtxPushCurrent)(ctx);
    SYM(h, cuCtxGetCurrent)(&cur);
    u[LA_CURRENT_IS_CTX] = ctx != NULL && cur == ctx;
    u[LA_LOAD] = SYM(h, cuModuleLoadData)(&mod, image);
    CUfunction fn = NULL;
    u[LA_FN] = SYM(h, cuModuleGetFunction)(&fn, mod, "cudaload_saxpy_vec4");
    u[LA_LAUNCH] = SYM(h, cuLaunchKernel)(fn, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
    setenv("FAKE_CUDA_PUSH_ERROR", "2", 1);
    u[LA_PUSH_FORCED] = SYM(h, cuCtxPushCurrent)(ctx);
    unsetenv("FAKE_CUDA_PUSH_ERROR");
    u[LA_POP] = SYM(h, cuCtxPopCurrent)(&popped);
    u[LA_POP_EMPTY] = SYM(h, cuCtxPopCurrent)(&popped);
    u[LA_LAUNCH_NOCTX] = SYM(h, cuLaunchKernel)(fn, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
    u[LA_RELEASE] = SYM(h, cuDevicePrimaryCtxRelease)(0);
    u[LA_RELEASE_AGAIN] = SYM(h, cuDevicePrimaryCtxRelease)(0);
    int (*stat)(const char *) = (int (*)(const char *))dlsym(h, "fake_cuda_stat");
    static const char *const names[] = {"retain", "release", "release_unbalanced", "retained", "push", "push_failed",
                                        "pop", "pop_unbalanced", "module_load", "launch", "launch_no_context", "nonsense"};
    size_t off = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && off < sizeof r->user; i++)
        off += (size_t)snprintf(r->user + off, sizeof r->user - off, "%s=%d ", names[i], stat ? stat(names[i]) : -100);
}

static void test_launch_api(void **state) {
    (void)state;
    const char *env[] = {"FAKE_CUDA_RETAIN_ERROR=2", "FAKE_CUDA_RETAIN_ERROR_COUNT=1", NULL};
    th_result *r = th_result_new();
    th_run(r, env, child_launch_api, fake_launch);
    const int *u = r->user_int;
    assert_int_equal(u[LA_N], 1);
    assert_int_equal(u[LA_RETAIN1], CUDA_ERROR_OUT_OF_MEMORY); /* the first retain only */
    assert_int_equal(u[LA_RETAIN2], CUDA_SUCCESS);
    assert_int_equal(u[LA_LOAD_NOCTX], CUDA_ERROR_INVALID_CONTEXT);
    assert_int_equal(u[LA_PUSH], CUDA_SUCCESS);
    assert_int_equal(u[LA_CURRENT_IS_CTX], 1);
    assert_int_equal(u[LA_LOAD], CUDA_SUCCESS);
    assert_int_equal(u[LA_FN], CUDA_SUCCESS);
    assert_int_equal(u[LA_LAUNCH], CUDA_SUCCESS);
    assert_int_equal(u[LA_PUSH_FORCED], CUDA_ERROR_OUT_OF_MEMORY);
    assert_int_equal(u[LA_POP], CUDA_SUCCESS);
    assert_int_equal(u[LA_POP_EMPTY], CUDA_ERROR_INVALID_CONTEXT);
    assert_int_equal(u[LA_LAUNCH_NOCTX], CUDA_ERROR_INVALID_CONTEXT);
    assert_int_equal(u[LA_RELEASE], CUDA_SUCCESS);
    assert_int_equal(u[LA_RELEASE_AGAIN], CUDA_ERROR_INVALID_CONTEXT);
    const char *want = "retain=1 release=1 release_unbalanced=1 retained=0 push=1 push_failed=1 pop=1 pop_unbalanced=1 "
                       "module_load=1 launch=1 launch_no_context=1 nonsense=-1 ";
    if (strcmp(r->user, want) != 0) fail_msg("counters: %s\nwant:     %s", r->user, want);
    th_result_free(r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),         cmocka_unit_test(test_environment),
        cmocka_unit_test(test_no_device),        cmocka_unit_test(test_forced_init_error),
        cmocka_unit_test(test_exports),         cmocka_unit_test(test_delays),
        cmocka_unit_test(test_launch_api),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
