/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_kernels.c -- the CPU side of the bundled kernels: the gate (which driver and GPU
 * can run the embedded fatbin, and the named status when not), argument checks of
 * cudaload_saxpy / cudaload_sgemm (they fail before any device work), the fatbin really
 * embedded, and the driver calls around a launch through the fake driver's launch API
 * (build/fake/launch: context push/pop pairing, which preparation failures are kept and
 * which are tried again). The launches themselves are tested on a GPU (tests/gpu/gpu_kernels.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cudaload.h"
#include "harness.h"
#include "internal.h"

static char driver_env[PATH_MAX + 64];
static char launch_driver[PATH_MAX], launch_env[PATH_MAX + 64];

static int setup(void **state) {
    (void)state;
    const char *b = getenv("CUDALOAD_TEST_BUILD");
    if (!b) return -1;
    snprintf(driver_env, sizeof driver_env, "CUDALOAD_DRIVER_PATH=%s/fake/libcuda.so.1", b);
    snprintf(launch_driver, sizeof launch_driver, "%s/fake/launch/libcuda.so.1", b);
    snprintf(launch_env, sizeof launch_env, "CUDALOAD_DRIVER_PATH=%s", launch_driver);
    return 0;
}

static void expect_gate(int built, int driver, int ccmaj, int ccmin, cudaload_status want, int sass, int jit,
                        const char *words) {
    cl_buf why = {0};
    int has_sass = -1, would_jit = -1;
    cudaload_status st = cl_kernels_gate(built, 13000, "75,80,86,89,90,100,120", 75, driver, ccmaj, ccmin, &has_sass,
                                         &would_jit, &why);
    if (st != want || has_sass != sass || would_jit != jit || (words && !strstr(cl_buf_str(&why), words)))
        fail_msg("gate(built %d, driver %d, sm_%d%d) = %s sass %d jit %d '%s'; want %s sass %d jit %d '%s'", built, driver,
                 ccmaj, ccmin, cudaload_status_name(st), has_sass, would_jit, cl_buf_str(&why), cudaload_status_name(want),
                 sass, jit, words ? words : "");
    cl_buf_free(&why);
}

static void test_gate(void **state) {
    (void)state;
    expect_gate(1, 13000, 9, 0, CUDALOAD_OK, 1, 0, NULL);          /* H100: SASS */
    expect_gate(1, 13020, 8, 6, CUDALOAD_OK, 1, 0, NULL);          /* newer minor driver */
    expect_gate(1, 13000, 8, 7, CUDALOAD_OK, 1, 0, NULL);          /* sm_80 SASS runs on 8.7 */
    expect_gate(1, 13000, 10, 3, CUDALOAD_OK, 1, 0, NULL);         /* sm_100 SASS runs on 10.3 */
    expect_gate(1, 13000, 13, 0, CUDALOAD_OK, 0, 1, NULL);         /* a future GPU: PTX JIT */
    expect_gate(1, 12080, 9, 0, CUDALOAD_ERROR_DRIVER_TOO_OLD, 0, 0, "need a CUDA 13 driver; this driver supports CUDA 12.8");
    expect_gate(1, 13000, 7, 0, CUDALOAD_ERROR_NO_KERNEL_IMAGE, 0, 0, "no SASS for sm_70");
    expect_gate(0, 13000, 9, 0, CUDALOAD_ERROR_KERNELS_NOT_BUILT, 0, 0, "built without nvcc");
    /* PTX written by CUDA 13.1 cannot be JIT-compiled by a 13.0 driver */
    cl_buf why = {0};
    int s, j;
    assert_int_equal(cl_kernels_gate(1, 13010, "90", 90, 13000, 12, 0, &s, &j, &why), CUDALOAD_ERROR_NO_KERNEL_IMAGE);
    assert_non_null(strstr(cl_buf_str(&why), "needs a driver of CUDA 13.1 or newer to JIT"));
    cl_buf_free(&why);
}

static void test_fatbin_embedded(void **state) {
    (void)state;
    cudaload_kernels_info info = {.size = sizeof info};
    assert_int_equal(cudaload_kernels_info_get(-1, &info), CUDALOAD_OK);
    if (!info.built) {
        print_message("skipped: this build has no nvcc, so no kernels (CUDALOAD_ERROR_KERNELS_NOT_BUILT)\n");
        skip();
    }
    assert_true(info.toolkit_version >= 12000);
    assert_non_null(strstr(info.sass_archs, "90"));
    /* the PTX is the newest architecture's (the last of the list) */
    const char *last = strrchr(info.sass_archs, ',');
    assert_int_equal(info.ptx_arch, atoi(last ? last + 1 : info.sass_archs));
    assert_true(info.fatbin_bytes > 10000);
    assert_true(info.fatbin_bytes < 1100 * 1000); /* one SASS per family: 1.0 MB with CUDA 13.0 */
    assert_null(info.image_file);                  /* embedded (the Python package's module reads a file) */
    /* every architecture the toolkit's nvcc lists from sm_75 runs SASS of the fatbin, none JIT */
    const char *list = NULL;
    if (th_sh(&list, "'%s/bin/nvcc' --list-gpu-code 2>/dev/null", th_cuda_home()) == 0 && list) {
        int seen = 0;
        for (const char *p = strstr(list, "sm_"); p; p = strstr(p + 3, "sm_")) {
            int cc = atoi(p + 3);
            if (cc < 75) continue;
            int has_sass = 0, would_jit = 0;
            cl_buf why = {0};
            cudaload_status st = cl_kernels_gate(1, info.toolkit_version, info.sass_archs, info.ptx_arch, info.toolkit_version,
                                                 cc / 10, cc % 10, &has_sass, &would_jit, &why);
            if (st != CUDALOAD_OK || !has_sass)
                fail_msg("sm_%d has no SASS in the fatbin (%s): %s", cc, info.sass_archs, cl_buf_str(&why));
            cl_buf_free(&why);
            seen++;
        }
        assert_true(seen >= 7);
    }
    info.size = 3;
    assert_int_equal(cudaload_kernels_info_get(-1, &info), CUDALOAD_ERROR_INVALID_ARGUMENT);
}

/* Argument checks need no device: each call must fail with INVALID_ARGUMENT and a message. */
static void child_args(th_result *r, void *arg) {
    (void)arg;
    th_init_child(r, NULL);
    float *p = (float *)(uintptr_t)0x10000, *odd = (float *)(uintptr_t)0x10002;
    int i = 0;
    size_t off = 0;
    /* each status in user_int[], each message on its own line of user */
#define CHECK(call)                                                                                          \
    do {                                                                                                     \
        r->user_int[i++] = (call);                                                                           \
        if (off < sizeof r->user)                                                                            \
            off += (size_t)snprintf(r->user + off, sizeof r->user - off, "%d: %s\n", i - 1, cudaload_last_error()); \
    } while (0)
    CHECK(cudaload_saxpy(-1, 1.f, p, p, NULL));
    CHECK(cudaload_saxpy(10, 1.f, NULL, p, NULL));
    CHECK(cudaload_saxpy(10, 1.f, p, odd, NULL));
    CHECK(cudaload_sgemm(CUDALOAD_OP_N, CUDALOAD_OP_N, 4, 4, 4, 1.f, p, 3, p, 4, 0.f, p, 4, NULL)); /* lda < m */
    CHECK(cudaload_sgemm(CUDALOAD_OP_T, CUDALOAD_OP_N, 8, 4, 2, 1.f, p, 1, p, 2, 0.f, p, 8, NULL)); /* lda < k */
    CHECK(cudaload_sgemm(CUDALOAD_OP_N, CUDALOAD_OP_N, -1, 4, 4, 1.f, p, 4, p, 4, 0.f, p, 4, NULL));
    CHECK(cudaload_sgemm(CUDALOAD_OP_N, CUDALOAD_OP_N, 4, 4, 4, 1.f, p, 4, p, 4, 0.f, NULL, 4, NULL));
    CHECK(cudaload_sgemm(CUDALOAD_OP_N, CUDALOAD_OP_N, 2, INT_MAX, 2, 1.f, p, 2, p, 2, 0.f, p, LLONG_MAX / 2, NULL));
    CHECK(cudaload_sgemm((cudaload_op)7, CUDALOAD_OP_N, 4, 4, 4, 1.f, p, 4, p, 4, 0.f, p, 4, NULL));
    CHECK(cudaload_sgemm(CUDALOAD_OP_N, CUDALOAD_OP_N, 4, 4, 4, 1.f, odd, 4, p, 4, 0.f, p, 4, NULL));
    CHECK(cudaload_sgemm(CUDALOAD_OP_N, CUDALOAD_OP_N, (long long)INT_MAX + 1, 1, 1, 1.f, p, (long long)INT_MAX + 1, p, 1, 0.f, p,
                         (long long)INT_MAX + 1, NULL));
    /* 11..14: NULL A, NULL B (k > 0 and alpha != 0, so both are read), B and C misaligned */
    CHECK(cudaload_sgemm(CUDALOAD_OP_N, CUDALOAD_OP_N, 4, 4, 4, 1.f, NULL, 4, p, 4, 0.f, p, 4, NULL));
    CHECK(cudaload_sgemm(CUDALOAD_OP_N, CUDALOAD_OP_N, 4, 4, 4, 1.f, p, 4, NULL, 4, 0.f, p, 4, NULL));
    CHECK(cudaload_sgemm(CUDALOAD_OP_N, CUDALOAD_OP_N, 4, 4, 4, 1.f, p, 4, odd, 4, 0.f, p, 4, NULL));
    CHECK(cudaload_sgemm(CUDALOAD_OP_N, CUDALOAD_OP_N, 4, 4, 4, 1.f, p, 4, p, 4, 0.f, odd, 4, NULL));
    /* quick returns: nothing to do is success, without touching the pointers */
    r->user_int[i++] = cudaload_saxpy(0, 1.f, NULL, NULL, NULL) == CUDALOAD_OK &&
                       cudaload_sgemm(CUDALOAD_OP_N, CUDALOAD_OP_N, 0, 5, 5, 1.f, NULL, 1, NULL, 5, 0.f, NULL, 1, NULL) ==
                           CUDALOAD_OK;
#undef CHECK
}

static void test_argument_checks(void **state) {
    (void)state;
    const char *env[] = {driver_env, "CUDALOAD_SOURCES=caller", NULL};
    th_result *r = th_result_new();
    th_run(r, env, child_args, NULL);
    for (int i = 0; i < 15; i++)
        if (r->user_int[i] != CUDALOAD_ERROR_INVALID_ARGUMENT)
            fail_msg("check %d returned %s; messages:\n%s", i, cudaload_status_name((cudaload_status)r->user_int[i]),
                     r->user);
    assert_int_equal(r->user_int[15], 1); /* the quick returns */
    /* each refusal says why (one message per check, numbered) */
    static const char *const words[] = {
        "10: cudaload_sgemm: m = 2147483648, n = 1, k = 1: each must be in 0..",
        "11: cudaload_sgemm: NULL pointer (A = (nil), B = 0x10000, C = 0x10000)",
        "12: cudaload_sgemm: NULL pointer (A = 0x10000, B = (nil), C = 0x10000)",
        "13: cudaload_sgemm: pointer not aligned to 4 bytes (A = 0x10000, B = 0x10002, C = 0x10000)",
        "14: cudaload_sgemm: pointer not aligned to 4 bytes (A = 0x10000, B = 0x10000, C = 0x10002)",
        "1: cudaload_saxpy: x = (nil), y = 0x10000: NULL pointer",
        "6: cudaload_sgemm: NULL pointer (A = 0x10000, B = 0x10000, C = (nil))",
    };
    for (size_t w = 0; w < sizeof words / sizeof words[0]; w++)
        if (!strstr(r->user, words[w])) fail_msg("no '%s' among the messages:\n%s", words[w], r->user);
    th_result_free(r);
}

/* k past CL_SGEMM_K_MAX (one past it, and INT_MAX, where the kernels' 32-bit count of k slices
 * would wrap and leave C = beta * C) is refused before any device work, with the limit named. */
static void child_k_limit(th_result *r, void *arg) {
    (void)arg;
    th_init_child(r, NULL);
    float *p = (float *)(uintptr_t)0x10000;
    r->user_int[0] = cudaload_sgemm(CUDALOAD_OP_N, CUDALOAD_OP_N, 1, 1, CL_SGEMM_K_MAX + 1LL, 1.f, p, 1, p, CL_SGEMM_K_MAX + 1LL,
                                    0.f, p, 1, NULL);
    size_t off = (size_t)snprintf(r->user, sizeof r->user, "%s\n", cudaload_last_error());
    r->user_int[1] = cudaload_sgemm(CUDALOAD_OP_T, CUDALOAD_OP_T, 1, 1, INT_MAX, 1.f, p, INT_MAX, p, 1, 0.f, p, 1, NULL);
    snprintf(r->user + off, sizeof r->user - off, "%s\n", cudaload_last_error());
}

static void test_sgemm_k_limit(void **state) {
    (void)state;
    const char *env[] = {driver_env, "CUDALOAD_SOURCES=caller", NULL};
    th_result *r = th_result_new();
    th_run(r, env, child_k_limit, NULL);
    if (r->user_int[0] != CUDALOAD_ERROR_INVALID_ARGUMENT || r->user_int[1] != CUDALOAD_ERROR_INVALID_ARGUMENT ||
        !strstr(r->user, "k = 2147483633: at most 2147483632") || !strstr(r->user, "k = 2147483647: at most 2147483632"))
        fail_msg("k = CL_SGEMM_K_MAX + 1: %s, k = INT_MAX: %s; messages:\n%s", cudaload_status_name(r->user_int[0]),
                 cudaload_status_name(r->user_int[1]), r->user);
    th_result_free(r);
}

static void child_quick(th_result *r, void *arg) {
    (void)arg;
    th_init_child(r, NULL);
    r->user_int[0] = cudaload_saxpy(0, 1.f, NULL, NULL, NULL);
    r->user_int[1] = cudaload_sgemm(CUDALOAD_OP_N, CUDALOAD_OP_N, 0, 5, 5, 1.f, NULL, 1, NULL, 5, 0.f, NULL, 1, NULL);
    r->user_int[2] = cudaload_set_backend((cudaload_backend)9);
    r->user_int[3] = cudaload_set_backend(CUDALOAD_BACKEND_CUBLAS);
}

static void test_quick_returns(void **state) {
    (void)state;
    const char *env[] = {driver_env, NULL};
    th_result *r = th_result_new();
    th_run(r, env, child_quick, NULL);
    assert_int_equal(r->user_int[0], CUDALOAD_OK);
    assert_int_equal(r->user_int[1], CUDALOAD_OK);
    assert_int_equal(r->user_int[2], CUDALOAD_ERROR_INVALID_ARGUMENT);
    assert_int_equal(r->user_int[3], CUDALOAD_OK);
    th_result_free(r);
}

/* The gate through the fake driver: a too-old driver, an old GPU, no GPU. */
static void child_kinfo(th_result *r, void *arg) {
    const char *const *roots = arg;
    cudaload_options o = th_opts(roots, 1, CUDALOAD_SOURCE_BIT(CUDALOAD_SOURCE_CALLER), 0);
    th_init_child(r, &o);
    cudaload_kernels_info k = {.size = sizeof k};
    r->user_int[0] = cudaload_kernels_info_get(0, &k);
    r->user_int[1] = k.runnable;
    r->user_int[2] = k.has_sass;
    r->user_int[3] = k.would_jit;
    r->user_int[4] = k.cc_major * 10 + k.cc_minor;
    snprintf(r->user, sizeof r->user, "%s", k.runnable == CUDALOAD_OK ? "" : cudaload_last_error());
}

static void test_gate_through_driver(void **state) {
    (void)state;
    cudaload_kernels_info info = {.size = sizeof info};
    cudaload_kernels_info_get(-1, &info);
    if (!info.built) TH_SKIP("this build has no nvcc, so no kernels");
    const char *roots[] = {th_fixture("toolkit-cu13-wheel"), NULL};
    th_result *r = th_result_new();
    const char *old[] = {driver_env, "FAKE_CUDA_VERSION=12040", NULL};
    th_run(r, old, child_kinfo, roots);
    assert_int_equal(r->user_int[0], CUDALOAD_OK);
    assert_int_equal(r->user_int[1], CUDALOAD_ERROR_DRIVER_TOO_OLD);
    assert_non_null(strstr(r->user, "need a CUDA 13 driver"));
    const char *volta[] = {driver_env, "FAKE_CUDA_CC=70", NULL};
    th_run(r, volta, child_kinfo, roots);
    assert_int_equal(r->user_int[1], CUDALOAD_ERROR_NO_KERNEL_IMAGE);
    assert_int_equal(r->user_int[4], 70);
    assert_non_null(strstr(r->user, "no SASS for sm_70"));
    const char *none[] = {driver_env, "FAKE_CUDA_DEVICES=0", NULL};
    th_run(r, none, child_kinfo, roots);
    assert_int_equal(r->user_int[1], CUDALOAD_ERROR_NO_DEVICE);
    /* an H100-like device passes the gate; the fake driver has no module API, so loading
     * then stops with a named status instead of a crash */
    const char *h100[] = {driver_env, "FAKE_CUDA_CC=90", NULL};
    th_run(r, h100, child_kinfo, roots);
    assert_int_equal(r->user_int[2], 1);
    assert_int_equal(r->user_int[3], 0);
    assert_int_equal(r->user_int[1], CUDALOAD_ERROR_SYMBOL_MISSING);
    const char *future[] = {driver_env, "FAKE_CUDA_CC=130", "FAKE_CUDA_VERSION=13000", NULL};
    th_run(r, future, child_kinfo, roots);
    assert_int_equal(r->user_int[2], 0);
    assert_int_equal(r->user_int[3], 1);
    th_result_free(r);
}

/* ---- the launch path, through the fake driver's launch API (build/fake/launch/libcuda.so.1):
 * each child records up to three statuses and the fake's counters ---- */

enum { L_ST1, L_ST2, L_ST3, L_RETAIN, L_RELEASE, L_RELEASE_UNBALANCED, L_RETAINED, L_PUSH, L_PUSH_FAILED, L_POP,
       L_POP_UNBALANCED, L_MODULE_LOAD, L_MODULE_UNLOAD, L_LAUNCH, L_LAUNCH_NO_CONTEXT, L_N };
static const char *const launch_stats[] = {"retain", "release", "release_unbalanced", "retained", "push", "push_failed",
                                           "pop", "pop_unbalanced", "module_load", "module_unload", "launch",
                                           "launch_no_context"};

/* The launch build of the fake driver's counters (fake_cuda_stat("launch"), ...), from the copy
 * loaded in this process; NULL when it is not loaded. */
typedef int (*fake_stat_fn)(const char *);
static fake_stat_fn fake_stat(void) {
    void *h = dlopen(launch_driver, RTLD_NOW | RTLD_NOLOAD);
    if (!h) return NULL;
    fake_stat_fn fn = (fake_stat_fn)dlsym(h, "fake_cuda_stat");
    dlclose(h); /* still loaded: libcudaload holds it */
    return fn;
}

/* The fake's counters (fake_cuda_stat) into user_int[L_RETAIN..]; -100 when they cannot be read. */
static void record_launch_stats(th_result *r) {
    fake_stat_fn stat = fake_stat();
    for (int i = 0; i < L_N - L_RETAIN; i++) r->user_int[L_RETAIN + i] = stat ? stat(launch_stats[i]) : -100;
}

static void init_launch_child(th_result *r, void *arg) {
    const char *const *roots = arg;
    cudaload_options o = th_opts(roots, 1, CUDALOAD_SOURCE_BIT(CUDALOAD_SOURCE_CALLER), 0);
    th_init_child(r, &o);
}

static int kernels_runnable(int device) {
    cudaload_kernels_info k = {.size = sizeof k};
    cudaload_status st = cudaload_kernels_info_get(device, &k);
    return st == CUDALOAD_OK ? (int)k.runnable : (int)st;
}

static int kernels_built(void) {
    cudaload_kernels_info info = {.size = sizeof info};
    cudaload_kernels_info_get(-1, &info);
    if (!info.built) print_message("skipped: this build has no kernels, so nothing is launched\n");
    return info.built;
}

static void fail_launch(const th_result *r, const char *what) {
    char buf[1024];
    size_t off = (size_t)snprintf(buf, sizeof buf, "%s: statuses %s, %s, %s; fake:", what,
                                  cudaload_status_name((cudaload_status)r->user_int[L_ST1]),
                                  cudaload_status_name((cudaload_status)r->user_int[L_ST2]),
                                  cudaload_status_name((cudaload_status)r->user_int[L_ST3]));
    for (int i = 0; i < L_N - L_RETAIN && off < sizeof buf; i++)
        off += (size_t)snprintf(buf + off, sizeof buf - off, " %s %d", launch_stats[i], r->user_int[L_RETAIN + i]);
    fail_msg("%s; message: %s", buf, r->user);
}

/* The device is prepared (one push and pop, balanced); then every push fails: a launch must
 * report it and pop nothing (a pop after a failed push would pop the caller's context);
 * with pushes working again the same call launches. No context is current in the child: each
 * call's first launch is refused for it (launch_no_context), and made in the pushed context. */
static void child_launch_push_fails(th_result *r, void *arg) {
    init_launch_child(r, arg);
    float *p = (float *)(uintptr_t)0x10000; /* never dereferenced: the fake launches nothing */
    r->user_int[L_ST1] = kernels_runnable(0);
    cudaload_set_backend(CUDALOAD_BACKEND_BUNDLED);
    setenv("FAKE_CUDA_PUSH_ERROR", "201", 1); /* CUDA_ERROR_INVALID_CONTEXT, from now on */
    r->user_int[L_ST2] = cl_kernels_saxpy_on(0, 1000, 2.f, p, p, NULL);
    snprintf(r->user, sizeof r->user, "%s", cudaload_last_error());
    unsetenv("FAKE_CUDA_PUSH_ERROR");
    r->user_int[L_ST3] = cl_kernels_saxpy_on(0, 1000, 2.f, p, p, NULL);
    record_launch_stats(r);
}

/* Runs child with the fake launch driver's one sm_90 device over the toolkit's runtime; init
 * must succeed there. */
static th_result *run_one_device(void (*child)(th_result *, void *)) {
    const char *roots[] = {th_fixture("toolkit-cu13-wheel"), NULL};
    const char *env[] = {launch_env, "FAKE_CUDA_CC=90", NULL};
    th_result *r = th_result_new();
    th_run(r, env, child, roots);
    assert_int_equal(r->init_status, CUDALOAD_OK);
    return r;
}

static void test_launch_pops_only_after_a_push(void **state) {
    (void)state;
    if (!kernels_built()) TH_SKIP("this build has no nvcc, so no kernels");
    th_result *r = run_one_device(child_launch_push_fails);
    const int *u = r->user_int;
    if (u[L_ST1] != CUDALOAD_OK || u[L_ST2] != CUDALOAD_ERROR_CUDA || u[L_ST3] != CUDALOAD_OK || u[L_PUSH_FAILED] != 1 ||
        u[L_POP_UNBALANCED] != 0 || u[L_PUSH] != u[L_POP] || u[L_LAUNCH_NO_CONTEXT] != 2 || u[L_LAUNCH] != 1)
        fail_launch(r, "a failed push in the launch");
    th_result_free(r);
}

/* Three preparations of device 0 in a row (cudaload_kernels_info_get), each with the fake's
 * forced failures of env. */
static void child_prepare_thrice(th_result *r, void *arg) {
    init_launch_child(r, arg);
    r->user_int[L_ST1] = kernels_runnable(0);
    snprintf(r->user, sizeof r->user, "%s", cudaload_last_error());
    r->user_int[L_ST2] = kernels_runnable(0);
    r->user_int[L_ST3] = kernels_runnable(0);
    record_launch_stats(r);
}

typedef struct prepare_case {
    const char *what;
    const char *env[3];
    int st[3];                 /* the three statuses */
    int retain, retained, push_failed, module_load;
} prepare_case;

static void run_prepare_case(const prepare_case *c) {
    const char *roots[] = {th_fixture("toolkit-cu13-wheel"), NULL};
    const char *env[6] = {launch_env, "FAKE_CUDA_CC=90"};
    for (int i = 0; i < 3 && c->env[i]; i++) env[2 + i] = c->env[i];
    th_result *r = th_result_new();
    th_run(r, env, child_prepare_thrice, roots);
    assert_int_equal(r->init_status, CUDALOAD_OK);
    const int *u = r->user_int;
    if (u[L_ST1] != c->st[0] || u[L_ST2] != c->st[1] || u[L_ST3] != c->st[2] || u[L_RETAIN] != c->retain ||
        u[L_RETAINED] != c->retained || u[L_PUSH_FAILED] != c->push_failed || u[L_MODULE_LOAD] != c->module_load ||
        u[L_POP_UNBALANCED] != 0 || u[L_RELEASE_UNBALANCED] != 0 || u[L_PUSH] != u[L_POP] || u[L_MODULE_UNLOAD] != 0)
        fail_launch(r, c->what);
    th_result_free(r);
}

/* A transient failure (out of memory, not ready, a failed push, ...) is reported to that
 * call and tried again on the next; what it had retained is released, so one reference to
 * the primary context is left once it works. A permanent one (no kernel image for the GPU)
 * is kept: the driver is not asked again. */
static void test_prepare_retries_transient_failures(void **state) {
    (void)state;
    if (!kernels_built()) TH_SKIP("this build has no nvcc, so no kernels");
    enum { OK = CUDALOAD_OK, CUDA = CUDALOAD_ERROR_CUDA, NOIMG = CUDALOAD_ERROR_NO_KERNEL_IMAGE };
    static const prepare_case cases[] = {
        {"no failure", {NULL}, {OK, OK, OK}, 1, 1, 0, 1},
        {"retain out of memory once", {"FAKE_CUDA_RETAIN_ERROR=2", "FAKE_CUDA_RETAIN_ERROR_COUNT=1"}, {CUDA, OK, OK}, 1, 1, 0, 1},
        {"retain not ready twice", {"FAKE_CUDA_RETAIN_ERROR=600", "FAKE_CUDA_RETAIN_ERROR_COUNT=2"}, {CUDA, CUDA, OK}, 1, 1, 0, 1},
        {"push fails once", {"FAKE_CUDA_PUSH_ERROR=201", "FAKE_CUDA_PUSH_ERROR_COUNT=1"}, {CUDA, OK, OK}, 2, 1, 1, 1},
        {"module load out of memory twice", {"FAKE_CUDA_MODULE_LOAD_ERROR=2", "FAKE_CUDA_MODULE_LOAD_ERROR_COUNT=2"},
         {CUDA, CUDA, OK}, 3, 1, 0, 1},
        {"module load launch timeout once", {"FAKE_CUDA_MODULE_LOAD_ERROR=702", "FAKE_CUDA_MODULE_LOAD_ERROR_COUNT=1"},
         {CUDA, OK, OK}, 2, 1, 0, 1},
        /* permanent: the first answer stays, though the driver would load the module now */
        {"no binary for the GPU once", {"FAKE_CUDA_MODULE_LOAD_ERROR=209", "FAKE_CUDA_MODULE_LOAD_ERROR_COUNT=1"},
         {NOIMG, NOIMG, NOIMG}, 1, 0, 0, 0},
        {"unsupported PTX once", {"FAKE_CUDA_MODULE_LOAD_ERROR=222", "FAKE_CUDA_MODULE_LOAD_ERROR_COUNT=1"},
         {NOIMG, NOIMG, NOIMG}, 1, 0, 0, 0},
        {"invalid device once", {"FAKE_CUDA_RETAIN_ERROR=101", "FAKE_CUDA_RETAIN_ERROR_COUNT=1"}, {CUDA, CUDA, CUDA}, 0, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_prepare_case(&cases[i]);
}

/* ---- several devices: the fake driver's three devices of different compute capabilities
 * (FAKE_CUDA_CC=90,70,130: SASS, none at all, PTX only), its device memory and streams ---- */

#define MULTI_CC "FAKE_CUDA_CC=90,70,130"
typedef struct fake_mem {
    void *(*devptr)(int, unsigned long long);
    void *(*managed)(unsigned long long);
    void *(*stream)(int);
    int (*launches_on)(int);
} fake_mem;

static int fake_mem_get(fake_mem *f) {
    void *h = dlopen(launch_driver, RTLD_NOW | RTLD_NOLOAD);
    if (!h) return 0;
    f->devptr = (void *(*)(int, unsigned long long))dlsym(h, "fake_cuda_devptr");
    f->managed = (void *(*)(unsigned long long))dlsym(h, "fake_cuda_managed");
    f->stream = (void *(*)(int))dlsym(h, "fake_cuda_stream");
    f->launches_on = (int (*)(int))dlsym(h, "fake_cuda_launches_on");
    dlclose(h); /* still loaded: libcudaload holds it */
    return f->devptr && f->managed && f->stream && f->launches_on;
}

static int last_device(void) {
    cudaload_kernels_info k = {.size = sizeof k};
    cudaload_kernels_info_get(-1, &k);
    return k.last_device;
}

/* Runs child with the fake launch driver's three devices (MULTI_CC) over the toolkit's runtime;
 * init must succeed there. */
static th_result *run_three_devices(void (*child)(th_result *, void *)) {
    const char *roots[] = {th_fixture("toolkit-cu13-wheel"), NULL};
    const char *env[] = {launch_env, MULTI_CC, "FAKE_CUDA_DEVICES=3", NULL};
    th_result *r = th_result_new();
    th_run(r, env, child, roots);
    assert_int_equal(r->init_status, CUDALOAD_OK);
    return r;
}

/* Each device's gate, from its own compute capability. */
static void child_multi_kinfo(th_result *r, void *arg) {
    init_launch_child(r, arg);
    for (int d = 0; d < 4; d++) {
        cudaload_kernels_info k = {.size = sizeof k};
        cudaload_status st = cudaload_kernels_info_get(d, &k);
        r->user_int[4 * d] = st == CUDALOAD_OK ? (int)k.runnable : (int)st;
        r->user_int[4 * d + 1] = k.cc_major * 10 + k.cc_minor;
        r->user_int[4 * d + 2] = k.has_sass;
        r->user_int[4 * d + 3] = k.would_jit;
    }
}

static void test_devices_gated_each(void **state) {
    (void)state;
    if (!kernels_built()) TH_SKIP("this build has no nvcc, so no kernels");
    th_result *r = run_three_devices(child_multi_kinfo);
    const int *u = r->user_int;
    const int want[4][4] = {{CUDALOAD_OK, 90, 1, 0},
                            {CUDALOAD_ERROR_NO_KERNEL_IMAGE, 70, 0, 0},
                            {CUDALOAD_OK, 130, 0, 1},
                            {CUDALOAD_ERROR_CUDA, 0, 0, 0}}; /* no device 3: CUDA_ERROR_INVALID_DEVICE */
    for (int d = 0; d < 4; d++)
        for (int i = 0; i < 4; i++)
            if (u[4 * d + i] != want[d][i])
                fail_msg("device %d: field %d is %d, want %d (status, cc, sass, jit)", d, i, u[4 * d + i], want[d][i]);
    th_result_free(r);
}

/* cudaload_saxpy/sgemm run on the device that owns the pointers, whatever is current. */
enum { M_ON2, M_DEV2, M_LAUNCH2, M_LAUNCH0, M_MISMATCH, M_MISMATCH_LAUNCHES, M_MANAGED, M_MANAGED_DEV, M_GEMM, M_GEMM_DEV,
       M_GEMM_MISMATCH, M_GEMM_ALPHA0, M_STREAM_OTHER, M_STREAM_OWN, M_NOIMG, M_N /* the fake's counters agree */ };
_Static_assert(M_N < 16, "th_result.user_int holds 16");

static void child_multi_calls(th_result *r, void *arg) {
    init_launch_child(r, arg);
    fake_mem f;
    if (!fake_mem_get(&f)) {
        snprintf(r->user, sizeof r->user, "the fake driver's memory functions are not there");
        return;
    }
    cudaload_set_backend(CUDALOAD_BACKEND_BUNDLED);
    int n = 0;
    cudaload_device_count(&n); /* cuInit: a process holding device memory has initialised the driver */
    int *u = r->user_int;
    size_t off = 0;
#define NOTE(i, call)                                                                                          \
    do {                                                                                                       \
        u[i] = (call);                                                                                         \
        if (u[i] != CUDALOAD_OK && off < sizeof r->user)                                                       \
            off += (size_t)snprintf(r->user + off, sizeof r->user - off, "%d: %s\n", i, cudaload_last_error()); \
    } while (0)
    float *x2 = f.devptr(2, 0), *y2 = f.devptr(2, 4096), *x0 = f.devptr(0, 0), *m = f.managed(0);
    NOTE(M_ON2, cudaload_saxpy(1000, 2.f, x2, y2, NULL));
    u[M_DEV2] = last_device();
    u[M_LAUNCH2] = f.launches_on(2);
    u[M_LAUNCH0] = f.launches_on(0);
    int before = f.launches_on(0) + f.launches_on(2);
    NOTE(M_MISMATCH, cudaload_saxpy(1000, 2.f, x0, y2, NULL));
    u[M_MISMATCH_LAUNCHES] = f.launches_on(0) + f.launches_on(2) - before;
    NOTE(M_MANAGED, cudaload_saxpy(1000, 2.f, m, y2, NULL)); /* managed memory follows the other operand */
    u[M_MANAGED_DEV] = last_device();
    float *A = f.devptr(0, 1 << 20), *B = f.devptr(0, 2 << 20), *C = f.devptr(0, 3 << 20);
    NOTE(M_GEMM, cudaload_sgemm(CUDALOAD_OP_N, CUDALOAD_OP_N, 64, 64, 64, 1.f, A, 64, B, 64, 0.f, C, 64, NULL));
    u[M_GEMM_DEV] = last_device();
    float *C2 = f.devptr(2, 3 << 20);
    NOTE(M_GEMM_MISMATCH, cudaload_sgemm(CUDALOAD_OP_N, CUDALOAD_OP_T, 64, 64, 64, 1.f, A, 64, B, 64, 0.f, C2, 64, NULL));
    /* alpha = 0: A and B are not read, so their device does not matter */
    NOTE(M_GEMM_ALPHA0, cudaload_sgemm(CUDALOAD_OP_N, CUDALOAD_OP_N, 64, 64, 64, 0.f, A, 64, B, 64, 2.f, C2, 64, NULL));
    NOTE(M_STREAM_OTHER, cudaload_saxpy(1000, 2.f, x2, y2, f.stream(0)));
    NOTE(M_STREAM_OWN, cudaload_saxpy(1000, 2.f, x2, y2, f.stream(2)));
    NOTE(M_NOIMG, cudaload_saxpy(1000, 2.f, f.devptr(1, 0), f.devptr(1, 4096), NULL));
#undef NOTE
    /* the launches balanced their pushes, and only devices 0 and 2 were loaded, once each */
    th_result *st = calloc(1, sizeof *st); /* a scratch result: only its user_int is used */
    if (!st) return;
    record_launch_stats(st);
    const int *v = st->user_int;
    u[M_N] = v[L_PUSH] == v[L_POP] && v[L_POP_UNBALANCED] == 0 && v[L_MODULE_LOAD] == 2;
    if (!u[M_N] && off < sizeof r->user)
        snprintf(r->user + off, sizeof r->user - off, "push %d pop %d unbalanced %d module loads %d\n", v[L_PUSH], v[L_POP],
                 v[L_POP_UNBALANCED], v[L_MODULE_LOAD]);
    free(st);
}

static void test_calls_run_where_the_pointers_are(void **state) {
    (void)state;
    if (!kernels_built()) TH_SKIP("this build has no nvcc, so no kernels");
    th_result *r = run_three_devices(child_multi_calls);
    const int *u = r->user_int;
    struct { int i, want; const char *what; } checks[] = {
        {M_ON2, CUDALOAD_OK, "saxpy on device 2"},
        {M_DEV2, 2, "it ran on device 2"},
        {M_LAUNCH2, 1, "one launch on device 2"},
        {M_LAUNCH0, 0, "none on the current device 0"},
        {M_MISMATCH, CUDALOAD_ERROR_DEVICE_MISMATCH, "x on 0, y on 2"},
        {M_MISMATCH_LAUNCHES, 0, "nothing launched for the mismatch"},
        {M_MANAGED, CUDALOAD_OK, "managed x with y on device 2"},
        {M_MANAGED_DEV, 2, "ran on y's device"},
        {M_GEMM, CUDALOAD_OK, "sgemm on device 0"},
        {M_GEMM_DEV, 0, "it ran on device 0"},
        {M_GEMM_MISMATCH, CUDALOAD_ERROR_DEVICE_MISMATCH, "A and B on 0, C on 2"},
        {M_GEMM_ALPHA0, CUDALOAD_OK, "alpha 0: only C's device counts"},
        {M_STREAM_OTHER, CUDALOAD_ERROR_DEVICE_MISMATCH, "a stream of device 0 for device 2's operands"},
        {M_STREAM_OWN, CUDALOAD_OK, "device 2's own stream"},
        {M_NOIMG, CUDALOAD_ERROR_NO_KERNEL_IMAGE, "device 1 (sm_70) has no image, the others still run"},
        {M_N, 1, "pushes balanced, one module load on each of devices 0 and 2"},
    };
    for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++)
        if (u[checks[i].i] != checks[i].want)
            fail_msg("%s: got %d (%s), want %d\n%s", checks[i].what, u[checks[i].i],
                     cudaload_status_name((cudaload_status)u[checks[i].i]), checks[i].want, r->user);
    th_result_free(r);
}

/* With one device visible, a call asks the driver nothing about its pointers (the one device
 * owns them); with three, one query per operand. */
static void child_pointer_queries(th_result *r, void *arg) {
    init_launch_child(r, arg);
    fake_mem f;
    fake_stat_fn stat = fake_stat();
    if (!fake_mem_get(&f) || !stat) return;
    cudaload_set_backend(CUDALOAD_BACKEND_BUNDLED);
    int n = 0;
    cudaload_device_count(&n);
    r->user_int[0] = cudaload_saxpy(1000, 2.f, f.devptr(0, 0), f.devptr(0, 4096), NULL);
    r->user_int[1] = cudaload_sgemm(CUDALOAD_OP_N, CUDALOAD_OP_N, 8, 8, 8, 1.f, f.devptr(0, 0), 8, f.devptr(0, 4096), 8, 0.f,
                                    f.devptr(0, 8192), 8, NULL);
    r->user_int[2] = stat("pointer_query");
    r->user_int[3] = f.launches_on(0);
}

static void test_one_device_asks_nothing_per_call(void **state) {
    (void)state;
    if (!kernels_built()) TH_SKIP("this build has no nvcc, so no kernels");
    const char *roots[] = {th_fixture("toolkit-cu13-wheel"), NULL};
    const char *one[] = {launch_env, "FAKE_CUDA_DEVICES=1", NULL};
    th_result *r = th_result_new();
    th_run(r, one, child_pointer_queries, roots);
    assert_int_equal(r->user_int[0], CUDALOAD_OK);
    assert_int_equal(r->user_int[1], CUDALOAD_OK);
    assert_int_equal(r->user_int[2], 0);
    assert_int_equal(r->user_int[3], 2);
    th_result_free(r);
    r = run_three_devices(child_pointer_queries);
    assert_int_equal(r->user_int[0], CUDALOAD_OK);
    assert_int_equal(r->user_int[1], CUDALOAD_OK);
    assert_int_equal(r->user_int[2], 2 + 3);
    assert_int_equal(r->user_int[3], 2);
    th_result_free(r);
}

/* A call whose device's primary context is current (as after any runtime call of the thread)
 * makes one driver call, the launch: no context query, no push. With none current, the launch is
 * refused, and made again in the pushed context, popped after. */
enum { Q_ST1, Q_ST2, Q_GET, Q_PUSH, Q_LAUNCH, Q_COLD_ST1, Q_COLD_ST2, Q_COLD_REFUSED, Q_COLD_PUSH, Q_COLD_POP, Q_COLD_LAUNCH, Q_N };

static void child_no_context_query(th_result *r, void *arg) {
    init_launch_child(r, arg);
    fake_mem f;
    fake_stat_fn stat = fake_stat();
    const cudaload_driver_table *d = cudaload_driver();
    CUcontext primary = NULL, popped = NULL;
    if (!fake_mem_get(&f) || !stat || !d || kernels_runnable(0) != CUDALOAD_OK) return;
    cudaload_set_backend(CUDALOAD_BACKEND_BUNDLED);
    float *x = f.devptr(0, 0), *y = f.devptr(0, 4096), *C = f.devptr(0, 8192);
    int *u = r->user_int;
    /* cold: nothing current */
    int refused = stat("launch_no_context"), push = stat("push"), pop = stat("pop"), launch = stat("launch");
    u[Q_COLD_ST1] = cudaload_saxpy(1000, 2.f, x, y, NULL);
    u[Q_COLD_ST2] = cudaload_sgemm(CUDALOAD_OP_N, CUDALOAD_OP_N, 16, 16, 16, 1.f, x, 16, y, 16, 0.f, C, 16, NULL);
    u[Q_COLD_REFUSED] = stat("launch_no_context") - refused, u[Q_COLD_PUSH] = stat("push") - push;
    u[Q_COLD_POP] = stat("pop") - pop, u[Q_COLD_LAUNCH] = stat("launch") - launch;
    /* warm: the primary context current */
    if (d->cuDevicePrimaryCtxRetain(&primary, 0) != CUDA_SUCCESS || d->cuCtxPushCurrent(primary) != CUDA_SUCCESS) return;
    int get = stat("ctx_get_current");
    push = stat("push"), launch = stat("launch");
    u[Q_ST1] = cudaload_saxpy(1000, 2.f, x, y, NULL);
    u[Q_ST2] = cudaload_sgemm(CUDALOAD_OP_N, CUDALOAD_OP_N, 16, 16, 16, 1.f, x, 16, y, 16, 0.f, C, 16, NULL);
    u[Q_GET] = stat("ctx_get_current") - get, u[Q_PUSH] = stat("push") - push, u[Q_LAUNCH] = stat("launch") - launch;
    d->cuCtxPopCurrent(&popped);
    d->cuDevicePrimaryCtxRelease(0);
}

static void test_launch_asks_no_context(void **state) {
    (void)state;
    if (!kernels_built()) TH_SKIP("this build has no nvcc, so no kernels");
    th_result *r = run_one_device(child_no_context_query);
    const int *u = r->user_int;
    /* warm: two calls, two driver calls (the launches), no query, no push */
    assert_int_equal(u[Q_ST1], CUDALOAD_OK);
    assert_int_equal(u[Q_ST2], CUDALOAD_OK);
    assert_int_equal(u[Q_GET], 0);
    assert_int_equal(u[Q_PUSH], 0);
    assert_int_equal(u[Q_LAUNCH], 2);
    /* cold: each call's launch refused once, then made in the pushed context, popped after */
    assert_int_equal(u[Q_COLD_ST1], CUDALOAD_OK);
    assert_int_equal(u[Q_COLD_ST2], CUDALOAD_OK);
    assert_int_equal(u[Q_COLD_REFUSED], 2);
    assert_int_equal(u[Q_COLD_PUSH], 2);
    assert_int_equal(u[Q_COLD_POP], 2);
    assert_int_equal(u[Q_COLD_LAUNCH], 2);
    th_result_free(r);
}

/* Split k through the fake's stream-ordered memory (FAKE_CUDA_POOLS=1): 1024^3 takes scratch and
 * two launches, the split-k sum as a programmatic dependent of the partial products' kernel on
 * sm_90 (cuLaunchKernelEx), an ordinary launch below it; a cuLaunchKernelEx that refuses
 * leaves the ordinary launch to run it. 16^3 takes neither. */
enum { D_ST, D_LAUNCH, D_EX, D_DEPENDENT, D_ALLOC, D_FREE, D_SMALL_ST, D_SMALL_LAUNCH, D_SMALL_ALLOC, D_N };

static void child_split_launches(th_result *r, void *arg) {
    init_launch_child(r, arg);
    fake_mem f;
    fake_stat_fn stat = fake_stat();
    if (!fake_mem_get(&f) || !stat) return;
    cudaload_set_backend(CUDALOAD_BACKEND_BUNDLED);
    int *u = r->user_int;
    float *A = f.devptr(0, 0), *B = f.devptr(0, 8 << 20), *C = f.devptr(0, 16 << 20);
    u[D_ST] = cudaload_sgemm(CUDALOAD_OP_N, CUDALOAD_OP_N, 1024, 1024, 1024, 1.f, A, 1024, B, 1024, 0.f, C, 1024, NULL);
    snprintf(r->user, sizeof r->user, "%s", u[D_ST] == CUDALOAD_OK ? "" : cudaload_last_error());
    u[D_LAUNCH] = stat("launch"), u[D_EX] = stat("launch_ex"), u[D_DEPENDENT] = stat("launch_dependent");
    u[D_ALLOC] = stat("pool_alloc"), u[D_FREE] = stat("pool_free");
    u[D_SMALL_ST] = cudaload_sgemm(CUDALOAD_OP_N, CUDALOAD_OP_N, 16, 16, 16, 1.f, A, 16, B, 16, 0.f, C, 16, NULL);
    u[D_SMALL_LAUNCH] = stat("launch") - u[D_LAUNCH];
    u[D_SMALL_ALLOC] = stat("pool_alloc") - u[D_ALLOC];
}

static void test_split_sum_launched_as_dependent(void **state) {
    (void)state;
    if (!kernels_built()) TH_SKIP("this build has no nvcc, so no kernels");
    const char *roots[] = {th_fixture("toolkit-cu13-wheel"), NULL};
    static const struct {
        const char *cc, *ex_error;
        int ex, dependent; /* cuLaunchKernelEx launches, those as programmatic dependents */
    } cases[] = {
        {"FAKE_CUDA_CC=90", NULL, 1, 1},
        {"FAKE_CUDA_CC=100", NULL, 1, 1},
        {"FAKE_CUDA_CC=86", NULL, 0, 0},                            /* no programmatic launch before sm_90 */
        {"FAKE_CUDA_CC=90", "FAKE_CUDA_LAUNCH_EX_ERROR=801", 0, 0}, /* CUDA_ERROR_NOT_SUPPORTED: ordinary */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *env[] = {launch_env, "FAKE_CUDA_POOLS=1", cases[i].cc, cases[i].ex_error, NULL};
        th_result *r = th_result_new();
        th_run(r, env, child_split_launches, roots);
        assert_int_equal(r->init_status, CUDALOAD_OK);
        const int *u = r->user_int;
        if (u[D_ST] != CUDALOAD_OK || u[D_LAUNCH] != 2 || u[D_EX] != cases[i].ex || u[D_DEPENDENT] != cases[i].dependent ||
            u[D_ALLOC] != 1 || u[D_FREE] != 1 || u[D_SMALL_ST] != CUDALOAD_OK || u[D_SMALL_LAUNCH] != 1 ||
            u[D_SMALL_ALLOC] != 0)
            fail_msg("%s %s: status %s (%s), launches %d (ex %d, dependent %d), scratch %d/%d freed; 16^3: %s, %d "
                     "launches, %d scratch",
                     cases[i].cc, cases[i].ex_error ? cases[i].ex_error : "", cudaload_status_name(u[D_ST]), r->user,
                     u[D_LAUNCH], u[D_EX], u[D_DEPENDENT], u[D_FREE], u[D_ALLOC], cudaload_status_name(u[D_SMALL_ST]),
                     u[D_SMALL_LAUNCH], u[D_SMALL_ALLOC]);
        th_result_free(r);
    }
}

/* 16 threads make their first call at once, on three devices (a slow cuDeviceGet widens the
 * window): each device is prepared exactly once, and every thread gets its device's answer. */
#define FIRST_THREADS 16
typedef struct first_call {
    fake_mem *f;
    int dev;
    cudaload_status st;
    int ran_on;
} first_call;

static void *thread_first_call(void *arg) {
    first_call *c = arg;
    c->st = cudaload_saxpy(4096, 1.f, c->f->devptr(c->dev, 0), c->f->devptr(c->dev, 1 << 20), NULL);
    c->ran_on = c->st == CUDALOAD_OK ? last_device() : -1;
    return NULL;
}

static void child_first_calls(th_result *r, void *arg) {
    init_launch_child(r, arg);
    fake_mem f;
    if (!fake_mem_get(&f)) return;
    cudaload_set_backend(CUDALOAD_BACKEND_BUNDLED);
    int n = 0;
    cudaload_device_count(&n); /* cuInit: a process holding device memory has initialised the driver */
    first_call c[FIRST_THREADS];
    pthread_t t[FIRST_THREADS];
    for (int i = 0; i < FIRST_THREADS; i++) {
        c[i] = (first_call){&f, i % 3, -1, -1};
        pthread_create(&t[i], NULL, thread_first_call, &c[i]);
    }
    for (int i = 0; i < FIRST_THREADS; i++) pthread_join(t[i], NULL);
    int built = kernels_built();
    int bad = 0;
    for (int i = 0; i < FIRST_THREADS; i++) {
        cudaload_status want = !built ? CUDALOAD_ERROR_KERNELS_NOT_BUILT
                               : c[i].dev == 1 ? CUDALOAD_ERROR_NO_KERNEL_IMAGE
                                               : CUDALOAD_OK;
        if (c[i].st != want || (want == CUDALOAD_OK && c[i].ran_on != c[i].dev)) bad++;
    }
    r->user_int[L_ST1] = bad;
    r->user_int[L_ST2] = built;
    r->user_int[L_ST3] = f.launches_on(0) + f.launches_on(2);
    record_launch_stats(r);
}

static void test_first_calls_on_many_devices_at_once(void **state) {
    (void)state;
    const char *roots[] = {th_fixture("toolkit-cu13-wheel"), NULL};
    const char *env[] = {launch_env, MULTI_CC, "FAKE_CUDA_DEVICES=3", "FAKE_CUDA_DEVICE_GET_DELAY_MS=50", NULL};
    th_result *r = th_result_new();
    th_run(r, env, child_first_calls, roots);
    assert_int_equal(r->init_status, CUDALOAD_OK);
    const int *u = r->user_int;
    int built = u[L_ST2];
    /* 11 threads on devices 0 and 2, one launch each (4096 floats: the vector kernel alone) */
    if (u[L_ST1] != 0 || u[L_ST3] != (built ? 11 : 0) || u[L_MODULE_LOAD] != (built ? 2 : 0) ||
        u[L_RETAINED] != (built ? 2 : 0) || u[L_PUSH] != u[L_POP] || u[L_POP_UNBALANCED] != 0)
        fail_msg("%d threads got a wrong answer; launches %d, module loads %d, retained %d, push %d, pop %d", u[L_ST1],
                 u[L_ST3], u[L_MODULE_LOAD], u[L_RETAINED], u[L_PUSH], u[L_POP]);
    th_result_free(r);
}

/* A library built without nvcc: the gate says so, by name, on a device that could run them. */
static void test_build_without_kernels(void **state) {
    (void)state;
    cudaload_kernels_info info = {.size = sizeof info};
    cudaload_kernels_info_get(-1, &info);
    if (info.built) {
        print_message("skipped: this build embeds kernels (make check also runs a build without nvcc)\n");
        skip();
    }
    assert_int_equal(info.toolkit_version, 0);
    assert_int_equal(info.fatbin_bytes, 0);
    assert_null(info.image_file);
    const char *roots[] = {th_fixture("toolkit-cu13-wheel"), NULL};
    const char *h100[] = {driver_env, "FAKE_CUDA_CC=90", NULL};
    th_result *r = th_result_new();
    th_run(r, h100, child_kinfo, roots);
    assert_int_equal(r->user_int[1], CUDALOAD_ERROR_KERNELS_NOT_BUILT);
    assert_non_null(strstr(r->user, "built without nvcc"));
    th_result_free(r);
}

/* The cuBLAS fallback reports why cuBLAS could not be loaded (its own status and message),
 * not a blanket NOT_FOUND. */
static void child_blas_status(th_result *r, void *arg) {
    const char *const *roots = arg;
    cudaload_options o = th_opts(roots, 1, CUDALOAD_SOURCE_BIT(CUDALOAD_SOURCE_CALLER), 0);
    th_init_child(r, &o);
    const struct cudaload_cublas_table *b = (const void *)1;
    r->user_int[0] = cl_kernels_cublas(&b);
    r->user_int[1] = b == NULL;
    snprintf(r->user, sizeof r->user, "%s", cudaload_last_error());
}

static void test_cublas_fallback_status(void **state) {
    (void)state;
    char blas[PATH_MAX + 32];
    snprintf(blas, sizeof blas, "CUDALOAD_CUBLAS_PATH=%s", th_fixture("bad/text/lib/libcudart.so.13"));
    const char *roots[] = {th_fixture("toolkit-cu13-wheel"), NULL};
    const char *env[] = {driver_env, blas, NULL};
    th_result *r = th_result_new();
    th_run(r, env, child_blas_status, roots);
    assert_int_equal(r->init_status, CUDALOAD_OK);
    assert_int_equal(r->user_int[0], CUDALOAD_ERROR_OVERRIDE_UNUSABLE);
    assert_int_equal(r->user_int[1], 1);
    assert_non_null(strstr(r->user, "CUDALOAD_CUBLAS_PATH="));
    th_result_free(r);
}

/* fork() while another thread is inside the kernels' lock (here: a slow cuDeviceGet under
 * cudaload_kernels_info_get, with the loader's lock free) must leave the child a usable
 * lock, as for the loader's. */
static void *thread_kinfo(void *arg) {
    (void)arg;
    cudaload_kernels_info k = {.size = sizeof k};
    cudaload_kernels_info_get(0, &k);
    return NULL;
}

static void child_fork_busy(th_result *r, void *arg) {
    const char *const *roots = arg;
    cudaload_options o = th_opts(roots, 1, CUDALOAD_SOURCE_BIT(CUDALOAD_SOURCE_CALLER), 0);
    th_init_child(r, &o);
    pthread_t t;
    pthread_create(&t, NULL, thread_kinfo, NULL);
    struct timespec ts = {0, 300 * 1000000L}; /* the thread now sleeps in cuDeviceGet, cl_kmu held */
    nanosleep(&ts, NULL);
    pid_t pid = fork();
    if (pid == 0) {
        /* takes the kernels' lock, then the loader's */
        cudaload_status a = cudaload_set_backend(CUDALOAD_BACKEND_AUTO);
        cudaload_kernels_info k = {.size = sizeof k};
        cudaload_status b = cudaload_kernels_info_get(0, &k);
        _exit(a == CUDALOAD_OK && b == CUDALOAD_OK ? 0 : 1);
    }
    r->user_int[0] = th_wait_or_kill(pid, 10); /* TH_WAIT_HUNG: deadlocked */
    pthread_join(t, NULL);
}

/* The plan's shortcut for small products (a product inside one block of the 64 x 64 tile, too
 * small to split) gives what weighing every tile gives, on any GPU, in every transpose case and
 * alignment, up to and past the sizes where the shortcut stops. */
static void test_sgemm_plan_small(void **state) {
    (void)state;
    const float *ptrs[] = {(const float *)(uintptr_t)0x100000, (const float *)(uintptr_t)0x100004};
    static const long long sms_list[] = {1, 2, 132};
    static const int ks[] = {0, 1, 16, 1000, 32767, 32768, 40000, 1 << 20};
    static const long long dims[] = {1, 3, 16, 17, 63, 64, 65, 128};
    int shortcut = 0;
    for (size_t g = 0; g < sizeof sms_list / sizeof sms_list[0]; g++)
        for (int op = 0; op < 4; op++)
            for (size_t a = 0; a < 4; a++)
                for (size_t mi = 0; mi < sizeof dims / sizeof dims[0]; mi++)
                    for (size_t ni = 0; ni < sizeof dims / sizeof dims[0]; ni++)
                        for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
                            long long m = dims[mi], n = dims[ni], ld = a & 1 ? 1001 : 1024;
                            int k = ks[ki];
                            cl_sgemm_plan made, weighed;
                            cl_sgemm_plan_make(&made, 1, sms_list[g], op >> 1, op & 1, m, n, k, ptrs[a >> 1], ld, ptrs[a & 1], ld);
                            cl_sgemm_plan_weigh(&weighed, 1, sms_list[g], op >> 1, op & 1, m, n, k, ptrs[a >> 1], ld, ptrs[a & 1],
                                                ld);
                            assert_int_equal(made.tile, weighed.tile);
                            assert_int_equal(made.tiles_m, weighed.tiles_m);
                            assert_int_equal(made.tiles_n, weighed.tiles_n);
                            assert_int_equal(made.launch_n, weighed.launch_n);
                            assert_int_equal(made.splits, weighed.splits);
                            assert_int_equal(made.kc, weighed.kc);
                            assert_int_equal(made.bytes_w, weighed.bytes_w);
                            shortcut += made.tile == CL_SGEMM_TILE_64x64 && made.splits == 1;
                        }
    assert_true(shortcut > 0);
}

/* How a product is run (kernels.c: cl_sgemm_plan_make), on an H100's 132 SMs: the 256 x 128 tile
 * when A is not transposed, the operands contiguous along m or n are aligned and the GPU fills;
 * the 128 x 128 tile for large products it cannot take; smaller tiles for products that do not
 * fill the GPU; split k over more blocks only with scratch (a pool) and a product of at least
 * 512^3. */
static void test_sgemm_plan(void **state) {
    (void)state;
    const float *al = (const float *)(uintptr_t)0x100000, *odd = (const float *)(uintptr_t)0x100004;
    cl_sgemm_plan p;
    /* which tile takes a large product (no split: the tiles fill the GPU) */
    static const struct {
        int ta, tb, size, a_odd, b_odd; /* m = n = k = size; *_odd: the pointer off 16 bytes by 4 */
        long long lda, ldb;
        int tile, splits; /* 2: the waves' last one mostly empty (3001: 576 tiles, 264 slots) */
    } large[] = {
        /* aligned, NN and NT: the large tile */
        {0, 0, 4096, 0, 0, 4096, 4096, CL_SGEMM_TILE_256x128, 1},
        {0, 1, 4096, 0, 0, 4096, 4096, CL_SGEMM_TILE_256x128, 1},
        /* TN and TT, aligned, k a multiple of 4: the tiles of 16-byte copies along k, TN on the
         * large one (the large tile of copies along m or n is not built for A transposed); else
         * the 128 x 128 tile of 4-byte copies */
        {1, 0, 4096, 0, 0, 4096, 4096, CL_SGEMM_TILE_256x128k, 1},
        {1, 1, 4096, 0, 0, 4096, 4096, CL_SGEMM_TILE_128x128k16, 1},
        {1, 1, 4096, 1, 0, 4096, 4096, CL_SGEMM_TILE_128x128, 1},
        {1, 0, 4094, 0, 0, 4096, 4096, CL_SGEMM_TILE_128x128, 1},
        {1, 0, 4096, 1, 0, 4096, 4096, CL_SGEMM_TILE_128x128, 1},
        {1, 1, 3001, 0, 0, 3001, 3001, CL_SGEMM_TILE_128x128, 2},
        /* unaligned: leading dimensions 2061 (2048 + 13), a misaligned pointer, 3001: the
         * 128 x 128 tile reads them as they are; NN in one wave of its tiles, two per SM (2048),
         * the any-alignment 256 x 128 tile, one per SM (the same work: its C passes through
         * shared memory); NT has no such tile */
        {0, 0, 2048, 0, 0, 2061, 2061, CL_SGEMM_TILE_256x128a, 1},
        {0, 1, 2048, 0, 0, 2061, 2061, CL_SGEMM_TILE_128x128, 1},
        {1, 1, 2048, 0, 0, 2061, 2061, CL_SGEMM_TILE_128x128, 1},
        {0, 0, 4096, 1, 0, 4096, 4096, CL_SGEMM_TILE_128x128, 1},
        {0, 0, 3001, 0, 0, 3001, 3001, CL_SGEMM_TILE_128x128, 2},
        /* NN reads B along k and NT reads A along k element by element: only the operand
         * contiguous along m or n needs alignment for the large tile */
        {0, 0, 4096, 0, 1, 4096, 4097, CL_SGEMM_TILE_256x128, 1},
        {0, 1, 4096, 0, 1, 4096, 4096, CL_SGEMM_TILE_128x128, 1},
    };
    for (size_t i = 0; i < sizeof large / sizeof large[0]; i++) {
        int s = large[i].size;
        cl_sgemm_plan_make(&p, 1, 132, large[i].ta, large[i].tb, s, s, s, large[i].a_odd ? odd : al, large[i].lda,
                           large[i].b_odd ? odd : al, large[i].ldb);
        assert_int_equal(p.tile, large[i].tile);
        assert_int_equal(p.splits, large[i].splits);
        if (large[i].splits == 1) assert_true(p.kc == s && p.bytes_w == 0);
        else /* 3001: 1504 + 1497; the partial products' scratch in 256-byte units */
            assert_true(p.kc == 1504 && p.bytes_w == ((size_t)2 * s * s * 4 + 255) / 256 * 256);
    }
    /* TN on a grid the large tile leaves half empty: 1024 x 2048 x 2048, 64 tiles of 256 x 128
     * on 132 SMs, 128 of 128 x 128 */
    cl_sgemm_plan_make(&p, 0, 132, 1, 0, 1024, 2048, 2048, al, 2048, al, 2048);
    assert_int_equal(p.tile, CL_SGEMM_TILE_128x128k);
    /* short k, several waves: tiles of two blocks per SM, not the large tile (8192 x 8192 x 128,
     * 65536 x 128 x 128, 8192 x 8192 x 256); from k = 512, the large tile; in one wave of it
     * (2048 x 2048 x 128: 128 tiles), the large tile too */
    static const struct {
        long long m, n;
        int k, large;
    } short_k[] = {{8192, 8192, 128, 0}, {65536, 128, 128, 0}, {8192, 8192, 256, 0}, {8192, 8192, 511, 0},
                   {8192, 8192, 512, 1}, {65536, 128, 512, 1}, {2048, 2048, 128, 1}};
    for (size_t i = 0; i < sizeof short_k / sizeof short_k[0]; i++) {
        cl_sgemm_plan_make(&p, 0, 132, 0, 0, short_k[i].m, short_k[i].n, short_k[i].k, al, short_k[i].m, al, short_k[i].k);
        assert_int_equal(p.tile == CL_SGEMM_TILE_256x128, short_k[i].large);
        assert_int_equal(cl_sgemm_tiles[p.tile].per_sm, short_k[i].large ? 1 : 2);
    }
    /* within 2% of the least cost, the larger tile: 65536 x 128 x 128 on 128 x 128 (costed 662),
     * not on 128 x 64 (655), whose two columns of tiles read A twice */
    cl_sgemm_plan_make(&p, 0, 132, 0, 0, 65536, 128, 128, al, 65536, al, 128);
    assert_int_equal(p.tile, CL_SGEMM_TILE_128x128);
    /* 1024^3: 128 tiles of 128 x 64 fill the GPU best, in 4 slices; split the same way, the 64
     * tiles of 128 x 128 fill 256 of 264 slots: those (the wide tile, NN) */
    cl_sgemm_plan_make(&p, 1, 132, 0, 0, 1024, 1024, 1024, al, 1024, al, 1024);
    assert_true(p.tile == CL_SGEMM_TILE_128x128v && p.splits == 4 && p.tiles_m == 8 && p.tiles_n == 8);
    /* NT: no wide tile is built for it, the 128 x 64 one stays */
    cl_sgemm_plan_make(&p, 1, 132, 0, 1, 1024, 1024, 1024, al, 1024, al, 1024);
    assert_true(p.tile == CL_SGEMM_TILE_128x64 && p.splits == 4 && p.tiles_m == 8 && p.tiles_n == 16);
    /* 768^3: 72 tiles of 128 x 64 in 6 slices; the wide tile's 216 blocks would fill 82% of its
     * 264 slots: not taken */
    cl_sgemm_plan_make(&p, 1, 132, 0, 0, 768, 768, 768, al, 768, al, 768);
    assert_true(p.tile == CL_SGEMM_TILE_128x64 && p.splits == 6 && p.kc == 128);
    /* the one-wave move: 2000 x 2000 unaligned, 256 tiles of 128 x 128 (two on 124 SMs) or 128
     * of 256 x 128 (8 x 16, one each); 1500 x 1500, 144 tiles (two on 12 SMs) or 72. Not 1000 x
     * 1000, whose 64 tiles of 128 x 128 would put half the work on an SM (smaller ones in a
     * split take it); nor 2048 x 2112, whose 272 tiles of 128 x 128 take more than a wave (the
     * 64 x 64 tile takes it); nor, on a GPU of 100 SMs, 2048 x 2048, whose 128 large tiles
     * would not fit one wave. */
    cl_sgemm_plan_make(&p, 1, 132, 0, 0, 2000, 2000, 61, odd, 2001, odd, 2001);
    assert_true(p.tile == CL_SGEMM_TILE_256x128a && p.tiles_m == 8 && p.tiles_n == 16 && p.splits == 1 && p.kc == 61);
    cl_sgemm_plan_make(&p, 1, 132, 0, 0, 1500, 1500, 1500, al, 1501, al, 1501);
    assert_true(p.tile == CL_SGEMM_TILE_256x128a && p.tiles_m == 6 && p.tiles_n == 12 && p.splits == 1);
    cl_sgemm_plan_make(&p, 1, 132, 0, 0, 1000, 1000, 1000, al, 1001, al, 1001);
    assert_true(p.tile != CL_SGEMM_TILE_256x128a);
    cl_sgemm_plan_make(&p, 1, 132, 0, 0, 2048, 2112, 2048, al, 2061, al, 2061);
    assert_true(p.tile != CL_SGEMM_TILE_256x128a);
    cl_sgemm_plan_make(&p, 1, 100, 0, 0, 2048, 2048, 2048, al, 2061, al, 2061);
    assert_int_equal(p.tile, CL_SGEMM_TILE_128x128);
    /* misaligned A: the wide tile (VEC) cannot take it; nor, then, 128 x 64 */
    cl_sgemm_plan_make(&p, 1, 132, 0, 0, 1024, 1024, 1024, odd, 1024, al, 1024);
    assert_true(p.tile != CL_SGEMM_TILE_128x128v && p.tile != CL_SGEMM_TILE_128x64);
    /* 512^3: 64 tiles of 64 x 64 for 528 slots, k split in 4 slices of 128 */
    cl_sgemm_plan_make(&p, 1, 132, 0, 0, 512, 512, 512, al, 512, al, 512);
    assert_int_equal(p.tile, CL_SGEMM_TILE_64x64);
    assert_int_equal(p.splits, 4);
    assert_int_equal(p.kc, 128);
    assert_int_equal(p.bytes_w, 4 * 512 * 512 * 4);
    /* short-wide 128 x 8192 x 8192: 128 tiles of 128 x 64, four slices (two waves of blocks);
     * then the 64 wide tiles in the same four slices (cuBLAS's own plan there) */
    cl_sgemm_plan_make(&p, 1, 132, 0, 0, 128, 8192, 8192, al, 128, al, 8192);
    assert_int_equal(p.tile, CL_SGEMM_TILE_128x128v);
    assert_int_equal(p.splits, 4);
    assert_int_equal(p.kc, 2048);
    assert_true(p.tiles_m == 1 && p.tiles_n == 64 && p.bytes_w == (size_t)4 * 128 * 8192 * 4);
    /* 1000^3: four slices of 256 (the last 232), on the 64 wide tiles */
    cl_sgemm_plan_make(&p, 1, 132, 0, 0, 1000, 1000, 1000, al, 1000, al, 1000);
    assert_int_equal(p.tile, CL_SGEMM_TILE_128x128v);
    assert_int_equal(p.splits, 4);
    assert_int_equal(p.kc, 256);
    /* without scratch, no split, and so no move to the wide tile */
    cl_sgemm_plan_make(&p, 0, 132, 0, 0, 1000, 1000, 1000, al, 1000, al, 1000);
    assert_true(p.tile == CL_SGEMM_TILE_128x64 && p.splits == 1);
    /* k = 300: slices of 128 would be 2; up to 4 of at least 64 are taken instead: 80, 80, 80
     * and 60 (a partial last slice) */
    cl_sgemm_plan_make(&p, 1, 132, 0, 0, 256, 2048, 300, al, 256, al, 300);
    assert_int_equal(p.splits, 4);
    assert_int_equal(p.kc, 80);
    /* 256^3 (unaligned: lda 257): 16 tiles of 64 x 64, four slices of 64 */
    cl_sgemm_plan_make(&p, 1, 132, 0, 0, 256, 256, 256, al, 257, al, 256);
    assert_true(p.tile == CL_SGEMM_TILE_64x64 && p.splits == 4 && p.kc == 64);
    /* k = 2048 (256 x 2048 x 2048): slices of at least 128 only, 8 of 256 for 64 tiles */
    cl_sgemm_plan_make(&p, 1, 132, 0, 0, 256, 2048, 2048, al, 256, al, 2048);
    assert_true(p.splits == 8 && p.kc == 256);
    /* below 256^3, or without a pool: as it is */
    cl_sgemm_plan_make(&p, 1, 132, 0, 0, 255, 256, 256, al, 257, al, 256);
    assert_true(p.splits == 1 && p.bytes_w == 0 && p.tile == CL_SGEMM_TILE_64x64);
    cl_sgemm_plan_make(&p, 0, 132, 0, 0, 512, 512, 512, al, 513, al, 512);
    assert_true(p.splits == 1 && p.bytes_w == 0);
    /* more than 1 GiB of partial products (a GPU of a million SMs): no split */
    cl_sgemm_plan_make(&p, 1, 1 << 20, 0, 0, 16384, 16384, 4096, al, 16384, al, 4096);
    assert_true(p.splits == 1 && p.bytes_w == 0 && p.kc == 4096);
    /* alpha = 0 or k = 0 reads no operand: no split */
    cl_sgemm_plan_make(&p, 1, 132, 0, 0, 4096, 4096, 0, odd, 4097, odd, 1);
    assert_true(p.splits == 1 && p.bytes_w == 0);
}

/* ---- SGEMM plan invariants (kernels.c: cl_sgemm_plan_make) ----
 * What every plan must satisfy for the kernels (kernels/sgemm.cu) to compute the product: a
 * tile built for the transpose case and given the alignment it needs, enough tiles to cover C,
 * grids within the driver's limits and the kernels' 32-bit block numbering and indices, k summed
 * exactly once over the split slices and, within each, over the kernel's own slices of BK as
 * its 32-bit arithmetic counts them, and scratch within its bound. The tiles' facts come from
 * internal.h's CL_SGEMM_TILES. */
typedef struct tile_facts {
    int bm, bn, bk, vec, kv, speed[4];
} tile_facts;
#define TILE_FACTS_(name, bm, bn, bk, threads, per_sm, vec, kv, weighed, wide, one_wave, nn, nt, tn, tt)                    \
    {bm, bn, bk, vec, kv, {nn, nt, tn, tt}},
static const tile_facts tile_facts_of[CL_SGEMM_TILE_COUNT] = {CL_SGEMM_TILES(TILE_FACTS_)};

typedef enum plan_fault {
    PLAN_OK,
    PLAN_TILE,     /* no such tile, or not built for the transpose case */
    PLAN_ALIGN,    /* a VEC or KV tile on operands that do not meet its alignment, or a chunk that breaks it */
    PLAN_TILES,    /* tiles_m, tiles_n not the tiles that cover C */
    PLAN_GRID,     /* a grid dimension past the driver's limits (x 2^31 - 1, y and z 65535) */
    PLAN_BLOCKS,   /* a launch's blocks past 2^32 - 1 (the grouped tiles' 32-bit block number) */
    PLAN_INDEX,    /* a row or column index of a launch past INT_MAX */
    PLAN_K,        /* k not summed exactly once */
    PLAN_SCRATCH,  /* scratch missing, too small, past CL_SCRATCH_MAX, or taken unsplit */
} plan_fault;
static const char *const plan_fault_names[] = {"ok", "tile", "align", "tiles", "grid", "blocks", "index", "k", "scratch"};

typedef struct plan_call {
    int scratch;
    long long sms;
    int ta, tb;
    long long m, n;
    int k;
    const float *A, *B;
    long long lda, ldb;
} plan_call;

/* The k steps a block of the kernel sums for a slice of kz (sgemm_body): the partial slice
 * first, from kst = kz % BK - BK (its steps below 0 are zeros), then whole slices, their count
 * (kz - kst) / BK in 32-bit int, which the GPU wraps. Exactly kz when the count is right. */
static long long kernel_k_summed(int kz, int bk) {
    if (kz <= 0) return 0;
    int kst = kz % bk == 0 ? 0 : kz % bk - bk;
    int32_t span = (int32_t)((uint32_t)kz - (uint32_t)kst); /* the kernel's int k - kst */
    int slices = span / bk;
    return slices > 0 ? (long long)kst + (long long)slices * bk : 0;
}

static int aligned16(const float *p, long long ld) { return ((uintptr_t)p & 15) == 0 && ld % 4 == 0; }

#define PLAN_FAIL(code, ...) return (snprintf(why, len, __VA_ARGS__), (code))
static plan_fault plan_check(const cl_sgemm_plan *p, const plan_call *c, char *why, size_t len) {
    why[0] = 0;
    if (p->tile < 0 || p->tile >= CL_SGEMM_TILE_COUNT) PLAN_FAIL(PLAN_TILE, "tile %d", p->tile);
    const tile_facts *T = &tile_facts_of[p->tile];
    int op = 2 * c->ta + c->tb;
    if (!T->speed[op]) PLAN_FAIL(PLAN_TILE, "tile %d is not built for case %d", p->tile, op);
    /* operands contiguous along m or n: A unless transposed, B when transposed; along k the others */
    int a_ok = aligned16(c->A, c->lda), b_ok = aligned16(c->B, c->ldb);
    if (T->vec && !((c->ta || a_ok) && (!c->tb || b_ok))) PLAN_FAIL(PLAN_ALIGN, "VEC tile %d, operands unaligned", p->tile);
    if (T->kv && !(c->k % 4 == 0 && (!c->ta || a_ok) && (c->tb || b_ok)))
        PLAN_FAIL(PLAN_ALIGN, "KV tile %d, operands along k unaligned or k %% 4", p->tile);
    if (p->tiles_m != (c->m + T->bm - 1) / T->bm || p->tiles_n != (c->n + T->bn - 1) / T->bn)
        PLAN_FAIL(PLAN_TILES, "%lld x %lld tiles of %d x %d for %lld x %lld", p->tiles_m, p->tiles_n, T->bm, T->bn, c->m, c->n);
    if (p->tiles_m < 1 || p->tiles_m > INT_MAX || p->launch_n < 1 || p->launch_n > 65535 || p->launch_n > p->tiles_n ||
        p->splits < 1 || p->splits > 65535 || (p->splits > 1 && p->launch_n != p->tiles_n))
        PLAN_FAIL(PLAN_GRID, "grid %lld x %lld (of %lld) x %d", p->tiles_m, p->launch_n, p->tiles_n, p->splits);
    if (p->tiles_m * p->launch_n > 4294967295LL)
        PLAN_FAIL(PLAN_BLOCKS, "%lld x %lld blocks in a launch", p->tiles_m, p->launch_n);
    /* a chunk of columns offsets B and C by launch_n * bn columns: a VEC tile needs a multiple of 4 */
    if (p->launch_n < p->tiles_n && (p->launch_n * T->bn) % 4 != 0)
        PLAN_FAIL(PLAN_ALIGN, "chunks of %lld columns", p->launch_n * T->bn);
    if (p->tiles_m * T->bm - 1 > INT_MAX || p->launch_n * T->bn - 1 > INT_MAX)
        PLAN_FAIL(PLAN_INDEX, "last row %lld, last column of a launch %lld", p->tiles_m * T->bm - 1, p->launch_n * T->bn - 1);
    /* k: slice z of the split (the kernel's entry point: k0 = z * kc, kz = min(kc, k - k0)) */
    if (p->splits == 1 ? p->kc != c->k : p->kc <= 0 || p->kc % 16 != 0)
        PLAN_FAIL(PLAN_K, "slices of %d for k = %d in %d", p->kc, c->k, p->splits);
    long long covered = 0;
    for (int z = 0; z < p->splits; z++) {
        long long k0 = (long long)z * p->kc;
        int kz = c->k - k0 < p->kc ? (int)(c->k - k0) : p->kc;
        if (kz <= 0 && c->k > 0) PLAN_FAIL(PLAN_K, "slice %d of %d is empty (k = %d, kc = %d)", z, p->splits, c->k, p->kc);
        long long summed = kernel_k_summed(kz, T->bk);
        if (k0 != covered || summed != kz)
            PLAN_FAIL(PLAN_K, "slice %d: k from %lld, %lld of its %d summed (bk %d)", z, k0, summed, kz, T->bk);
        covered += summed;
    }
    if (covered != (c->k > 0 ? c->k : 0)) PLAN_FAIL(PLAN_K, "%lld of k = %d summed", covered, c->k);
    if (p->splits == 1 ? p->bytes_w != 0
                       : !c->scratch || p->bytes_w % 256 != 0 || p->bytes_w > CL_SCRATCH_MAX ||
                             p->bytes_w < (size_t)p->splits * (size_t)c->m * (size_t)c->n * sizeof(float))
        PLAN_FAIL(PLAN_SCRATCH, "%zu bytes for %d slices of %lld x %lld (pool %d)", p->bytes_w, p->splits, c->m, c->n, c->scratch);
    return PLAN_OK;
}
#undef PLAN_FAIL

static plan_fault plan_made(cl_sgemm_plan *p, const plan_call *c, char *why, size_t len) {
    cl_sgemm_plan_make(p, c->scratch, c->sms, c->ta, c->tb, c->m, c->n, c->k, c->A, c->lda, c->B, c->ldb);
    return plan_check(p, c, why, len);
}

/* Every plan over a sweep of shapes, from 1 to the largest sizes cudaload_sgemm accepts (m, n
 * INT_MAX, k CL_SGEMM_K_MAX), the four transposes, aligned and unaligned operands, with and
 * without scratch, on GPUs of 1 to 2^20 SMs, satisfies every invariant; and the sweep reaches
 * every tile, split products and products launched in chunks. */
static void test_sgemm_plan_invariants(void **state) {
    (void)state;
    const float *al = (const float *)(uintptr_t)0x100000, *odd = (const float *)(uintptr_t)0x100004;
    static const long long dims[] = {1,    2,    3,      4,       7,       16,       17,        63,        64,
                                     65,   128,  129,    255,     256,     257,      1000,      2048,      3001,
                                     8192, 65535, 65536, 8388480, 8388481, 1 << 24,  1 << 30,   INT_MAX - 255,
                                     INT_MAX - 254, INT_MAX};
    static const int ks[] = {0,    1,     3,      4,       8,       9,       15,      16,       17,        61,
                             64,   300,   1000,   2048,    4096,    70001,   1 << 24, 1 << 30,  CL_SGEMM_K_MAX - 16,
                             CL_SGEMM_K_MAX - 1,  CL_SGEMM_K_MAX};
    static const long long sms_list[] = {1, 132, 1 << 20};
    const size_t nd = sizeof dims / sizeof dims[0], nk = sizeof ks / sizeof ks[0];
    long long plans = 0, split = 0, chunked = 0, per_tile[CL_SGEMM_TILE_COUNT] = {0};
    char why[256];
    for (size_t g = 0; g < sizeof sms_list / sizeof sms_list[0]; g++)
        for (int scratch = 0; scratch < 2; scratch++)
            for (int op = 0; op < 4; op++)
                for (int a = 0; a < 4; a++) /* A, B: 16-byte aligned with ld % 4 == 0, or not */
                    for (size_t mi = 0; mi < nd; mi++)
                        for (size_t ni = 0; ni < nd; ni++)
                            for (size_t ki = 0; ki < nk; ki++) {
                                plan_call c = {scratch, sms_list[g], op >> 1, op & 1, dims[mi], dims[ni], ks[ki],
                                               a & 2 ? odd : al, a & 1 ? odd : al, a & 2 ? 1001 : 1024, a & 1 ? 1001 : 1024};
                                cl_sgemm_plan p;
                                plan_fault f = plan_made(&p, &c, why, sizeof why);
                                if (f != PLAN_OK)
                                    fail_msg("plan of %c%c %lld x %lld x %d (sms %lld, scratch %d, alignment %d): %s: %s",
                                             c.ta ? 'T' : 'N', c.tb ? 'T' : 'N', c.m, c.n, c.k, c.sms, scratch, a,
                                             plan_fault_names[f], why);
                                plans++, split += p.splits > 1, chunked += p.launch_n < p.tiles_n, per_tile[p.tile]++;
                            }
    print_message("%lld plans: %lld split, %lld in chunks of columns\n", plans, split, chunked);
    assert_true(split > 0 && chunked > 0);
    for (int t = 0; t < CL_SGEMM_TILE_COUNT; t++)
        if (!per_tile[t]) fail_msg("no shape of the sweep took tile %d", t);
}

/* The checker above catches a wrong plan: planted defects, each a valid plan perturbed (a
 * dropped k slice, a dropped k step, slices that overlap, too few tiles, a grid past the
 * driver's limits, too little scratch, a tile the operands are misaligned for, the chunking
 * of columns as it was: at most 65535 tiles of columns, whatever the rows), each reported
 * with its fault. And the plan of k = INT_MAX, which cudaload_sgemm refuses, is wrong: the
 * kernels' 32-bit count of k slices wraps and they sum nothing (C would become beta * C);
 * CL_SGEMM_K_MAX is the largest k every tile sums, and the tile of 16-k slices fails one past it. */
static void test_sgemm_plan_checker_catches_defects(void **state) {
    (void)state;
    const float *al = (const float *)(uintptr_t)0x100000, *odd = (const float *)(uintptr_t)0x100004;
    char why[256];
    cl_sgemm_plan p, q;
    /* a split product (1024^3: four slices of 256 on the wide tile) */
    plan_call split = {1, 132, 0, 0, 1024, 1024, 1024, al, al, 1024, 1024};
    assert_int_equal(plan_made(&p, &split, why, sizeof why), PLAN_OK);
    assert_true(p.splits == 4 && p.kc == 256);
    static const struct {
        const char *what;
        int field, delta;
        plan_fault want;
    } split_defects[] = {
        {"the last slice dropped", 0, -1, PLAN_K},     {"slices of kc - 16", 1, -16, PLAN_K},
        {"slices of 2 kc (the last two empty)", 1, 256, PLAN_K}, {"kc not a multiple of 16", 1, 1, PLAN_K},
        {"one tile row short", 2, -1, PLAN_TILES},     {"one tile column short", 3, -1, PLAN_TILES},
        {"256 bytes of scratch short", 4, -256, PLAN_SCRATCH},
    };
    for (size_t i = 0; i < sizeof split_defects / sizeof split_defects[0]; i++) {
        q = p;
        switch (split_defects[i].field) {
        case 0: q.splits += split_defects[i].delta; break;
        case 1: q.kc += split_defects[i].delta; break;
        case 2: q.tiles_m += split_defects[i].delta, q.launch_n = q.tiles_n; break;
        case 3: q.tiles_n += split_defects[i].delta, q.launch_n = q.tiles_n; break;
        default: q.bytes_w += (size_t)(long long)split_defects[i].delta; break;
        }
        plan_fault f = plan_check(&q, &split, why, sizeof why);
        if (f != split_defects[i].want)
            fail_msg("%s: checker says %s (%s), want %s", split_defects[i].what, plan_fault_names[f], why,
                     plan_fault_names[split_defects[i].want]);
    }
    /* the split taken without a pool */
    split.scratch = 0;
    assert_int_equal(plan_check(&p, &split, why, sizeof why), PLAN_SCRATCH);
    /* an unsplit product, one k step dropped (kc = k - 1), or a whole slice of 8 */
    plan_call whole = {0, 132, 0, 0, 4096, 4096, 4096, al, al, 4096, 4096};
    assert_int_equal(plan_made(&p, &whole, why, sizeof why), PLAN_OK);
    assert_true(p.splits == 1 && p.tile == CL_SGEMM_TILE_256x128);
    q = p, q.kc = 4095;
    assert_int_equal(plan_check(&q, &whole, why, sizeof why), PLAN_K);
    q = p, q.kc = 4088;
    assert_int_equal(plan_check(&q, &whole, why, sizeof why), PLAN_K);
    /* the aligned tile on an operand off 16 bytes, and the TN tile taking NN */
    plan_call misaligned = whole;
    misaligned.A = odd;
    assert_int_equal(plan_check(&p, &misaligned, why, sizeof why), PLAN_ALIGN);
    q = p, q.tile = CL_SGEMM_TILE_128x128k, q.tiles_m = q.tiles_n = q.launch_n = 32;
    assert_int_equal(plan_check(&q, &whole, why, sizeof why), PLAN_TILE);
    /* INT_MAX x 2^20: chunks of 65535 tiles of columns, whatever the rows, would number a
     * launch's blocks past 32 bits */
    plan_call huge = {0, 132, 0, 0, INT_MAX, 1 << 20, 1, odd, odd, INT_MAX, 1};
    assert_int_equal(plan_made(&p, &huge, why, sizeof why), PLAN_OK);
    assert_true(p.launch_n < p.tiles_n);
    q = p, q.launch_n = p.tiles_n < 65535 ? p.tiles_n : 65535;
    assert_int_equal(plan_check(&q, &huge, why, sizeof why), PLAN_BLOCKS);
    /* 2^24 columns in one launch: past the grid's 65535 */
    plan_call wide = {0, 132, 0, 0, 64, 1 << 24, 64, al, al, 64, 64};
    assert_int_equal(plan_made(&p, &wide, why, sizeof why), PLAN_OK);
    q = p, q.launch_n = q.tiles_n;
    assert_int_equal(plan_check(&q, &wide, why, sizeof why), PLAN_GRID);
    /* k near INT_MAX, no scratch (one slice: the kernel counts all of k), each tile forced:
     * every tile sums k up to CL_SGEMM_K_MAX; past it the tile of slices of 16 does not, and at
     * k = INT_MAX none does (the kernel would leave C = beta * C; the KV tile takes only k a
     * multiple of 4) */
    int bk_max = 0;
    for (int t = 0; t < CL_SGEMM_TILE_COUNT; t++) bk_max = tile_facts_of[t].bk > bk_max ? tile_facts_of[t].bk : bk_max;
    assert_int_equal(CL_SGEMM_K_MAX, 2147483648LL - bk_max);
    for (int t = 0; t < CL_SGEMM_TILE_COUNT; t++) {
        const tile_facts *T = &tile_facts_of[t];
        int op = 0; /* the first transpose case the tile is built for */
        while (!T->speed[op]) op++;
        static const int near[] = {CL_SGEMM_K_MAX - 7, CL_SGEMM_K_MAX, CL_SGEMM_K_MAX + 1, INT_MAX - 7, INT_MAX};
        for (size_t i = 0; i < sizeof near / sizeof near[0]; i++) {
            if (T->kv && near[i] % 4) continue;
            plan_call c = {0, 132, op >> 1, op & 1, 1, 1, near[i], al, al, 4, 4};
            cl_sgemm_plan_make(&p, 0, 132, c.ta, c.tb, 1, 1, c.k, al, 4, al, 4);
            p.tile = t, p.tiles_m = p.tiles_n = p.launch_n = 1;
            long long rounded = ((long long)near[i] + T->bk - 1) / T->bk * T->bk; /* k - kst in the kernel */
            plan_fault want = rounded > INT_MAX ? PLAN_K : PLAN_OK;
            if (near[i] == INT_MAX || (near[i] == CL_SGEMM_K_MAX + 1 && T->bk == bk_max)) assert_int_equal(want, PLAN_K);
            if (near[i] <= CL_SGEMM_K_MAX) assert_int_equal(want, PLAN_OK);
            plan_fault f = plan_check(&p, &c, why, sizeof why);
            if (f != want)
                fail_msg("tile %d (bk %d), k = %d: checker says %s (%s), want %s", t, T->bk, near[i], plan_fault_names[f], why,
                         plan_fault_names[want]);
        }
    }
}

/* cudaload_sgemm at its size limits, through the fake launch driver (no pool: no split, so a
 * kernel counts all of k): k = CL_SGEMM_K_MAX runs in one launch (one more is refused:
 * test_argument_checks); m = INT_MAX by 2^20 columns runs in chunks of columns whose blocks
 * fit 32 bits, each launch within the driver's grid limits (the fake refuses larger grids, as
 * the driver does). */
enum { Z_KMAX, Z_KMAX_LAUNCHES, Z_HUGE, Z_HUGE_LAUNCHES, Z_HUGE_WANT, Z_N };

static void child_size_limits(th_result *r, void *arg) {
    init_launch_child(r, arg);
    fake_mem f;
    fake_stat_fn stat = fake_stat();
    if (!fake_mem_get(&f) || !stat) return;
    cudaload_set_backend(CUDALOAD_BACKEND_BUNDLED);
    int *u = r->user_int;
    float *A = f.devptr(0, 0), *B = f.devptr(0, 1 << 20), *C = f.devptr(0, 2 << 20);
    size_t off = 0;
    int before = stat("launch");
    u[Z_KMAX] = cudaload_sgemm(CUDALOAD_OP_N, CUDALOAD_OP_N, 1, 1, CL_SGEMM_K_MAX, 1.f, A, 1, B, CL_SGEMM_K_MAX, 0.f, C, 1, NULL);
    u[Z_KMAX_LAUNCHES] = stat("launch") - before;
    if (u[Z_KMAX] != CUDALOAD_OK) off += (size_t)snprintf(r->user + off, sizeof r->user - off, "%s\n", cudaload_last_error());
    before = stat("launch");
    u[Z_HUGE] = cudaload_sgemm(CUDALOAD_OP_N, CUDALOAD_OP_N, INT_MAX, 1 << 20, 1, 1.f, A, INT_MAX, B, 1, 0.f, C, INT_MAX, NULL);
    u[Z_HUGE_LAUNCHES] = stat("launch") - before;
    if (u[Z_HUGE] != CUDALOAD_OK) snprintf(r->user + off, sizeof r->user - off, "%s\n", cudaload_last_error());
    /* the plan of that call on this fake's 132 SMs: its launches */
    cl_sgemm_plan p;
    cl_sgemm_plan_make(&p, 0, 132, 0, 0, INT_MAX, 1 << 20, 1, A, INT_MAX, B, 1);
    u[Z_HUGE_WANT] = (int)((p.tiles_n + p.launch_n - 1) / p.launch_n);
}

static void test_sgemm_size_limits(void **state) {
    (void)state;
    if (!kernels_built()) skip();
    th_result *r = run_one_device(child_size_limits);
    const int *u = r->user_int;
    if (u[Z_KMAX] != CUDALOAD_OK || u[Z_KMAX_LAUNCHES] != 1)
        fail_msg("k = CL_SGEMM_K_MAX: %s, %d launches; %s", cudaload_status_name(u[Z_KMAX]), u[Z_KMAX_LAUNCHES], r->user);
    if (u[Z_HUGE] != CUDALOAD_OK || u[Z_HUGE_LAUNCHES] != u[Z_HUGE_WANT] || u[Z_HUGE_WANT] < 2)
        fail_msg("%d x 2^20: %s, %d launches, want %d; %s", INT_MAX, cudaload_status_name(u[Z_HUGE]), u[Z_HUGE_LAUNCHES],
                 u[Z_HUGE_WANT], r->user);
    th_result_free(r);
}

static void test_fork_while_kernels_busy(void **state) {
    (void)state;
    const char *roots[] = {th_fixture("toolkit-cu13-wheel"), NULL};
    const char *env[] = {driver_env, "FAKE_CUDA_DEVICE_GET_DELAY_MS=1500", NULL};
    th_result *r = th_result_new();
    th_run(r, env, child_fork_busy, roots);
    assert_int_equal(r->init_status, CUDALOAD_OK);
    if (r->user_int[0] == TH_WAIT_HUNG) fail_msg("the forked child deadlocked on the kernels' lock");
    assert_int_equal(r->user_int[0], 0);
    th_result_free(r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_build_without_kernels),
        cmocka_unit_test(test_gate),
        cmocka_unit_test(test_sgemm_plan),
        cmocka_unit_test(test_sgemm_plan_small),
        cmocka_unit_test(test_sgemm_plan_invariants),
        cmocka_unit_test(test_sgemm_plan_checker_catches_defects),
        cmocka_unit_test(test_sgemm_size_limits),
        cmocka_unit_test(test_fatbin_embedded),
        cmocka_unit_test(test_argument_checks),
        cmocka_unit_test(test_sgemm_k_limit),
        cmocka_unit_test(test_quick_returns),
        cmocka_unit_test(test_gate_through_driver),
        cmocka_unit_test(test_launch_pops_only_after_a_push),
        cmocka_unit_test(test_prepare_retries_transient_failures),
        cmocka_unit_test(test_cublas_fallback_status),
        cmocka_unit_test(test_fork_while_kernels_busy),
        cmocka_unit_test(test_devices_gated_each),
        cmocka_unit_test(test_calls_run_where_the_pointers_are),
        cmocka_unit_test(test_first_calls_on_many_devices_at_once),
        cmocka_unit_test(test_one_device_asks_nothing_per_call),
        cmocka_unit_test(test_split_sum_launched_as_dependent),
        cmocka_unit_test(test_launch_asks_no_context),
    };
    return cmocka_run_group_tests_name("kernels", tests, setup, NULL);
}
