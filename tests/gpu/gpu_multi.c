/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpu_multi.c -- `make check-gpu` on a machine with two or more GPUs: cudaload_saxpy and
 * cudaload_sgemm run on the device that owns the pointers, whatever device is current, on both
 * backends; operands or a stream of two devices are CUDALOAD_ERROR_DEVICE_MISMATCH; 16 threads
 * make the process's first calls at once, each on its own device; managed memory follows the
 * other operand. Results against a float64 CPU reference, with a fresh seed each run (printed;
 * CUDALOAD_TEST_SEED repeats one). Skipped with the reason when fewer than two GPUs are visible
 * (CUDA_VISIBLE_DEVICES=1 leaves one).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cudaload_tables.h"
#include "harness.h"

static const cudaload_cudart_table *rt;
static char skip_reason[2048];
static int ndev;
static unsigned long long seed;

/* xorshift64*, uniform in [-1, 1); one state per caller (threads have their own) */
static float rnd(unsigned long long *s) {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return (float)((double)((*s * 2685821657736338717ULL) >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

static int setup(void **state) {
    (void)state;
    const char *s = getenv("CUDALOAD_TEST_SEED");
    seed = s && s[0] ? strtoull(s, NULL, 0) : ((unsigned long long)time(NULL) << 20) ^ (unsigned long long)getpid();
    if (!seed) seed = 1;
    fprintf(stderr, "gpu_multi: seed %llu (CUDALOAD_TEST_SEED=%llu repeats this run)\n", seed, seed);
    ndev = th_gpu_init(skip_reason, sizeof skip_reason);
    if (!skip_reason[0] && ndev < 2)
        snprintf(skip_reason, sizeof skip_reason, "needs two GPUs; %d visible (CUDA_VISIBLE_DEVICES=%s)", ndev,
                 getenv("CUDA_VISIBLE_DEVICES") ? getenv("CUDA_VISIBLE_DEVICES") : "(unset)");
    if (!skip_reason[0]) rt = cudaload_cudart();
    return 0;
}

#define SKIP_WITHOUT_TWO_GPUS() TH_SKIP_IF(skip_reason)

#define CU_OK(call)                                                                                  \
    do {                                                                                             \
        cudaError_t e_ = (call);                                                                     \
        if (e_ != cudaSuccess) fail_msg("%s: %s", #call, rt->cudaGetErrorName(e_));                 \
    } while (0)

static int current(void) {
    int d = -1;
    CU_OK(rt->cudaGetDevice(&d));
    return d;
}

static int last_device(void) {
    cudaload_kernels_info k = {.size = sizeof k};
    cudaload_kernels_info_get(-1, &k);
    return k.last_device;
}

/* A device array of n floats on dev, filled from h (then dev stays current). */
static float *on_device(int dev, const float *h, size_t n) {
    float *d = NULL;
    CU_OK(rt->cudaSetDevice(dev));
    CU_OK(rt->cudaMalloc((void **)&d, n * sizeof(float)));
    CU_OK(rt->cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice));
    return d;
}

static void back(float *h, int dev, const float *d, size_t n) {
    int was = current();
    CU_OK(rt->cudaSetDevice(dev));
    CU_OK(rt->cudaDeviceSynchronize());
    CU_OK(rt->cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost));
    CU_OK(rt->cudaSetDevice(was));
}

/* ---- 16 threads, the process's first calls, each thread's operands on its own device ---- */

#define THREADS 16
#define TN (1 << 20)
typedef struct first_call {
    int dev;
    cudaload_status st;
    int ran_on, wrong;
    char why[256];
} first_call;

static void *first_call_thread(void *arg) {
    first_call *c = arg;
    unsigned long long s = seed ^ (0x9e3779b97f4a7c15ULL * (unsigned long long)(c->dev + 1)) ^ (unsigned long long)(uintptr_t)c;
    float *x = malloc(TN * sizeof(float)), *y = malloc(TN * sizeof(float)), *out = malloc(TN * sizeof(float));
    for (int i = 0; i < TN; i++) x[i] = rnd(&s), y[i] = rnd(&s);
    float *dx = on_device(c->dev, x, TN), *dy = on_device(c->dev, y, TN);
    /* another device current at the call: the pointers choose */
    rt->cudaSetDevice((c->dev + 1) % ndev);
    c->st = cudaload_saxpy(TN, 0.5f, dx, dy, NULL);
    if (c->st != CUDALOAD_OK) snprintf(c->why, sizeof c->why, "%s", cudaload_last_error());
    c->ran_on = last_device();
    back(out, c->dev, dy, TN);
    for (int i = 0; i < TN; i++)
        if (fabs(out[i] - (0.5 * x[i] + y[i])) > 1e-6 * (fabs(0.5 * x[i] + y[i]) + 1.0)) c->wrong++;
    rt->cudaSetDevice(c->dev);
    rt->cudaFree(dx), rt->cudaFree(dy);
    free(x), free(y), free(out);
    return NULL;
}

/* First in this file: no device is prepared yet. */
static void test_first_calls_from_16_threads(void **state) {
    (void)state;
    SKIP_WITHOUT_TWO_GPUS();
    first_call c[THREADS];
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) {
        c[i] = (first_call){.dev = i % ndev, .st = -1, .ran_on = -1};
        assert_int_equal(pthread_create(&t[i], NULL, first_call_thread, &c[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
    for (int i = 0; i < THREADS; i++)
        if (c[i].st != CUDALOAD_OK || c[i].ran_on != c[i].dev || c[i].wrong)
            fail_msg("thread %d (device %d): %s on device %d, %d wrong elements: %s", i, c[i].dev,
                     cudaload_status_name(c[i].st), c[i].ran_on, c[i].wrong, c[i].why);
    print_message("16 threads on %d devices: every call ran on its operands' device, all correct\n", ndev);
}

/* ---- each device's kernels, and calls on the last device while device 0 is current ---- */

static void test_every_device_runs_the_kernels(void **state) {
    (void)state;
    SKIP_WITHOUT_TWO_GPUS();
    for (int d = 0; d < ndev; d++) {
        cudaload_kernels_info k = {.size = sizeof k};
        assert_int_equal(cudaload_kernels_info_get(d, &k), CUDALOAD_OK);
        print_message("device %d sm_%d%d: sass %d jit %d %s\n", d, k.cc_major, k.cc_minor, k.has_sass, k.would_jit,
                      cudaload_status_name(k.runnable));
        if (k.built) assert_int_equal(k.runnable, CUDALOAD_OK);
    }
}

static void saxpy_on(cudaload_backend be, int dev, int cur) {
    enum { N = 100003 }; /* not a multiple of 4: both kernels */
    unsigned long long s = seed + (unsigned long long)(dev * 7 + (int)be);
    float *x = malloc(N * sizeof(float)), *y = malloc(N * sizeof(float)), *out = malloc(N * sizeof(float));
    for (int i = 0; i < N; i++) x[i] = rnd(&s), y[i] = rnd(&s);
    float *dx = on_device(dev, x, N), *dy = on_device(dev, y, N);
    CU_OK(rt->cudaSetDevice(cur));
    assert_int_equal(cudaload_set_backend(be), CUDALOAD_OK);
    cudaload_status st = cudaload_saxpy(N, -1.5f, dx, dy, NULL);
    if (st != CUDALOAD_OK) fail_msg("saxpy on device %d, %d current: %s: %s", dev, cur, cudaload_status_name(st), cudaload_last_error());
    assert_int_equal(last_device(), dev);
    assert_int_equal(current(), cur); /* the caller's device is left as it was */
    back(out, dev, dy, N);
    for (int i = 0; i < N; i++) {
        double want = -1.5 * x[i] + y[i];
        if (fabs(out[i] - want) > 1e-6 * (fabs(want) + 1.0))
            fail_msg("saxpy backend %d on device %d: y[%d] = %.9g, want %.9g", (int)be, dev, i, out[i], want);
    }
    CU_OK(rt->cudaSetDevice(dev));
    rt->cudaFree(dx), rt->cudaFree(dy);
    CU_OK(rt->cudaSetDevice(cur));
    free(x), free(y), free(out);
}

static void sgemm_on(cudaload_backend be, int dev, int cur, int ta, int tb) {
    enum { M = 333, N = 517, K = 129 };
    unsigned long long s = seed + (unsigned long long)(dev * 131 + ta * 2 + tb);
    int lda = ta ? K : M, ldb = tb ? N : K;
    float *A = malloc(sizeof(float) * M * K), *B = malloc(sizeof(float) * K * N), *C = malloc(sizeof(float) * M * N);
    for (int i = 0; i < M * K; i++) A[i] = rnd(&s);
    for (int i = 0; i < K * N; i++) B[i] = rnd(&s);
    for (int i = 0; i < M * N; i++) C[i] = NAN; /* beta = 0: C is not read */
    float *dA = on_device(dev, A, M * K), *dB = on_device(dev, B, K * N), *dC = on_device(dev, C, M * N);
    CU_OK(rt->cudaSetDevice(cur));
    assert_int_equal(cudaload_set_backend(be), CUDALOAD_OK);
    cudaload_status st = cudaload_sgemm(ta ? CUDALOAD_OP_T : CUDALOAD_OP_N, tb ? CUDALOAD_OP_T : CUDALOAD_OP_N, M, N, K, 1.0f, dA,
                                        lda, dB, ldb, 0.0f, dC, M, NULL);
    if (st != CUDALOAD_OK) fail_msg("sgemm on device %d, %d current: %s: %s", dev, cur, cudaload_status_name(st), cudaload_last_error());
    assert_int_equal(last_device(), dev);
    assert_int_equal(current(), cur);
    back(C, dev, dC, M * N);
    for (int j = 0; j < N; j++)
        for (int i = 0; i < M; i++) {
            double ref = 0, mag = 0;
            for (int p = 0; p < K; p++) {
                double a = ta ? A[p + i * lda] : A[i + p * lda], b = tb ? B[j + p * ldb] : B[p + j * ldb];
                ref += a * b, mag += fabs(a * b);
            }
            if (!(fabs(C[i + j * M] - ref) <= 4e-7 * (K + 4) * (mag + 1e-30)))
                fail_msg("sgemm backend %d %c%c on device %d: C(%d,%d) = %.9g, want %.9g", (int)be, ta ? 'T' : 'N', tb ? 'T' : 'N',
                         dev, i, j, C[i + j * M], ref);
        }
    CU_OK(rt->cudaSetDevice(dev));
    rt->cudaFree(dA), rt->cudaFree(dB), rt->cudaFree(dC);
    CU_OK(rt->cudaSetDevice(cur));
    free(A), free(B), free(C);
}

static void test_calls_run_where_the_pointers_are(void **state) {
    (void)state;
    SKIP_WITHOUT_TWO_GPUS();
    const cudaload_backend be[] = {CUDALOAD_BACKEND_BUNDLED, CUDALOAD_BACKEND_CUBLAS};
    int last = ndev - 1;
    for (int b = 0; b < 2; b++) {
        saxpy_on(be[b], last, 0);
        saxpy_on(be[b], 0, last);
        for (int t = 0; t < 4; t++) sgemm_on(be[b], last, 0, t >> 1, t & 1);
        sgemm_on(be[b], 0, last, 1, 0);
    }
    cudaload_set_backend(CUDALOAD_BACKEND_AUTO);
}

/* ---- two devices in one call ---- */

static void test_operands_on_two_devices(void **state) {
    (void)state;
    SKIP_WITHOUT_TWO_GPUS();
    float h[64] = {0};
    float *x0 = on_device(0, h, 64), *y1 = on_device(1, h, 64), *c1 = on_device(1, h, 64);
    const cudaload_backend be[] = {CUDALOAD_BACKEND_BUNDLED, CUDALOAD_BACKEND_CUBLAS};
    for (int b = 0; b < 2; b++) {
        assert_int_equal(cudaload_set_backend(be[b]), CUDALOAD_OK);
        assert_int_equal(cudaload_saxpy(64, 1.0f, x0, y1, NULL), CUDALOAD_ERROR_DEVICE_MISMATCH);
        assert_int_equal(cudaload_sgemm(CUDALOAD_OP_N, CUDALOAD_OP_N, 8, 8, 8, 1.0f, x0, 8, y1, 8, 0.0f, c1, 8, NULL),
                         CUDALOAD_ERROR_DEVICE_MISMATCH);
    }
    /* alpha = 0: A and B are not read, so only C's device counts */
    assert_int_equal(cudaload_sgemm(CUDALOAD_OP_N, CUDALOAD_OP_N, 8, 8, 8, 0.0f, x0, 8, y1, 8, 1.0f, c1, 8, NULL), CUDALOAD_OK);
    /* a stream of device 0 for operands on device 1: the launch fails, and is named; not under
     * compute-sanitizer (CUDALOAD_TEST_QUICK), which reports that failing launch as an error */
    if (getenv("CUDALOAD_TEST_QUICK")) {
        print_message("a stream of another device: not tried under compute-sanitizer\n");
        rt->cudaFree(x0);
        CU_OK(rt->cudaSetDevice(1));
        rt->cudaFree(y1), rt->cudaFree(c1);
        CU_OK(rt->cudaSetDevice(0));
        cudaload_set_backend(CUDALOAD_BACKEND_AUTO);
        return;
    }
    cudaStream_t s0;
    CU_OK(rt->cudaSetDevice(0));
    CU_OK(rt->cudaStreamCreate(&s0));
    assert_int_equal(cudaload_set_backend(CUDALOAD_BACKEND_BUNDLED), CUDALOAD_OK);
    cudaload_status st = cudaload_saxpy(64, 1.0f, y1, c1, s0);
    print_message("saxpy on device 1 with a stream of device 0: %s: %s\n", cudaload_status_name(st), cudaload_last_error());
    assert_int_equal(st, CUDALOAD_ERROR_DEVICE_MISMATCH);
    CU_OK(rt->cudaDeviceSynchronize());
    rt->cudaStreamDestroy(s0);
    rt->cudaFree(x0);
    CU_OK(rt->cudaSetDevice(1));
    rt->cudaFree(y1), rt->cudaFree(c1);
    CU_OK(rt->cudaSetDevice(0));
    cudaload_set_backend(CUDALOAD_BACKEND_AUTO);
}

/* Managed memory belongs to no one device: it follows the other operand's. */
static void test_managed_follows_the_device_operand(void **state) {
    (void)state;
    SKIP_WITHOUT_TWO_GPUS();
    enum { N = 4096 };
    float *mx = NULL, h[N], out[N];
    CU_OK(rt->cudaSetDevice(0));
    CU_OK(rt->cudaMallocManaged((void **)&mx, N * sizeof(float), cudaMemAttachGlobal));
    for (int i = 0; i < N; i++) mx[i] = (float)i, h[i] = 1.0f;
    float *y1 = on_device(1, h, N);
    CU_OK(rt->cudaSetDevice(0));
    assert_int_equal(cudaload_set_backend(CUDALOAD_BACKEND_BUNDLED), CUDALOAD_OK);
    cudaload_status st = cudaload_saxpy(N, 2.0f, mx, y1, NULL);
    if (st != CUDALOAD_OK) fail_msg("managed x, y on device 1: %s: %s", cudaload_status_name(st), cudaload_last_error());
    assert_int_equal(last_device(), 1);
    back(out, 1, y1, N);
    for (int i = 0; i < N; i++)
        if (out[i] != 2.0f * i + 1.0f) fail_msg("y[%d] = %g, want %g", i, out[i], 2.0f * i + 1.0f);
    rt->cudaFree(mx);
    CU_OK(rt->cudaSetDevice(1));
    rt->cudaFree(y1);
    CU_OK(rt->cudaSetDevice(0));
    cudaload_set_backend(CUDALOAD_BACKEND_AUTO);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_calls_from_16_threads),
        cmocka_unit_test(test_every_device_runs_the_kernels),
        cmocka_unit_test(test_calls_run_where_the_pointers_are),
        cmocka_unit_test(test_operands_on_two_devices),
        cmocka_unit_test(test_managed_follows_the_device_operand),
    };
    return cmocka_run_group_tests_name("gpu_multi", tests, setup, NULL);
}
