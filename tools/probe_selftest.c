/* SPDX-License-Identifier: Apache-2.0 */
/*
 * probe_selftest.c -- the self-test: SAXPY on 2^24 floats and SGEMM 1024^3 on the GPU, through
 * cudaload_saxpy / cudaload_sgemm, against a CPU reference in float64, timed with CUDA events.
 */
#define _GNU_SOURCE
#include "probe_internal.h"

#include "cudaload_tables.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long long rng = 0x9e3779b97f4a7c15ULL;
static float frand(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (float)((rng >> 40) & 0xffffff) / 16777216.0f * 2.0f - 1.0f;
}

static int cmpf(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

#define ST_CHECK(t, what, call)                                                                     \
    do {                                                                                            \
        cudaError_t e_ = (call);                                                                    \
        if (e_ != cudaSuccess) {                                                                    \
            snprintf((t)->error, sizeof (t)->error, "%s failed: %s (%s)", what, rt->cudaGetErrorName(e_), \
                     rt->cudaGetErrorString(e_));                                                   \
            goto out;                                                                               \
        }                                                                                           \
    } while (0)

static const char *backend_name(cudaload_backend b) {
    return b == CUDALOAD_BACKEND_BUNDLED ? "bundled" : b == CUDALOAD_BACKEND_CUBLAS ? "cublas" : "auto";
}

/* Median milliseconds of reps runs of launch (which returns a status). */
typedef cudaload_status (*launch_fn)(void *ctx);
static int time_median(const cudaload_cudart_table *rt, launch_fn fn, void *ctx, int reps, float *ms) {
    cudaEvent_t a = NULL, b = NULL;
    float t[16];
    int ok = rt->cudaEventCreate(&a) == cudaSuccess && rt->cudaEventCreate(&b) == cudaSuccess;
    for (int r = 0; ok && r < reps; r++) {
        ok = rt->cudaEventRecord(a, NULL) == cudaSuccess && fn(ctx) == CUDALOAD_OK &&
             rt->cudaEventRecord(b, NULL) == cudaSuccess && rt->cudaEventSynchronize(b) == cudaSuccess &&
             rt->cudaEventElapsedTime(&t[r], a, b) == cudaSuccess;
    }
    if (a) rt->cudaEventDestroy(a);
    if (b) rt->cudaEventDestroy(b);
    if (!ok) return 0;
    qsort(t, (size_t)reps, sizeof t[0], cmpf);
    *ms = t[reps / 2];
    return 1;
}

typedef struct saxpy_args {
    long long n;
    float a;
    float *x, *y;
} saxpy_args;
static cudaload_status run_saxpy(void *c) {
    saxpy_args *s = c;
    return cudaload_saxpy(s->n, s->a, s->x, s->y, NULL);
}

typedef struct sgemm_args {
    int n;
    float *A, *B, *C;
} sgemm_args;
static cudaload_status run_sgemm(void *c) {
    sgemm_args *s = c;
    return cudaload_sgemm(CUDALOAD_OP_N, CUDALOAD_OP_N, s->n, s->n, s->n, 1.0f, s->A, s->n, s->B, s->n, 0.0f, s->C, s->n,
                          NULL);
}

static void selftest_saxpy(const cudaload_cudart_table *rt, test_result *t) {
    const long long n = 1LL << 24;
    const size_t bytes = (size_t)n * sizeof(float);
    float *x = malloc(bytes), *y = malloc(bytes), *out = malloc(bytes), *dx = NULL, *dy = NULL;
    t->ran = 1;
    if (!x || !y || !out) {
        snprintf(t->error, sizeof t->error, "out of host memory");
        goto out;
    }
    for (long long i = 0; i < n; i++) x[i] = frand(), y[i] = frand();
    ST_CHECK(t, "cudaMalloc", rt->cudaMalloc((void **)&dx, bytes));
    ST_CHECK(t, "cudaMalloc", rt->cudaMalloc((void **)&dy, bytes));
    ST_CHECK(t, "cudaMemcpy", rt->cudaMemcpy(dx, x, bytes, cudaMemcpyHostToDevice));
    ST_CHECK(t, "cudaMemcpy", rt->cudaMemcpy(dy, y, bytes, cudaMemcpyHostToDevice));
    saxpy_args s = {n, 0.75f, dx, dy};
    cudaload_status st = run_saxpy(&s);
    if (st != CUDALOAD_OK) {
        snprintf(t->error, sizeof t->error, "%s: %s", cudaload_status_name(st), cudaload_last_error());
        goto out;
    }
    ST_CHECK(t, "cudaMemcpy", rt->cudaMemcpy(out, dy, bytes, cudaMemcpyDeviceToHost));
    cudaload_kernels_info k = {.size = sizeof k};
    cudaload_kernels_info_get(-1, &k);
    t->backend = backend_name(k.last_backend);
    for (long long i = 0; i < n; i++) {
        double want = 0.75 * (double)x[i] + y[i];
        double err = fabs(out[i] - want) / (fabs(want) + 1e-6);
        if (err > t->max_rel_err) t->max_rel_err = err;
    }
    float ms = 0;
    if (!time_median(rt, run_saxpy, &s, 11, &ms)) {
        snprintf(t->error, sizeof t->error, "timing failed: %s", cudaload_last_error());
        goto out;
    }
    t->ms = ms;
    t->rate = 12.0 * (double)n / (ms / 1e3) / 1e9;
    t->pass = t->max_rel_err < 1e-5;
out:
    if (dx) rt->cudaFree(dx);
    if (dy) rt->cudaFree(dy);
    free(x), free(y), free(out);
}

static void selftest_sgemm(const cudaload_cudart_table *rt, test_result *t) {
    const int n = 1024;
    const size_t elems = (size_t)n * n, bytes = elems * sizeof(float);
    float *A = malloc(bytes), *B = malloc(bytes), *C = malloc(bytes), *dA = NULL, *dB = NULL, *dC = NULL;
    t->ran = 1;
    if (!A || !B || !C) {
        snprintf(t->error, sizeof t->error, "out of host memory");
        goto out;
    }
    for (size_t i = 0; i < elems; i++) A[i] = frand(), B[i] = frand(), C[i] = NAN; /* beta = 0: C must not be read */
    ST_CHECK(t, "cudaMalloc", rt->cudaMalloc((void **)&dA, bytes));
    ST_CHECK(t, "cudaMalloc", rt->cudaMalloc((void **)&dB, bytes));
    ST_CHECK(t, "cudaMalloc", rt->cudaMalloc((void **)&dC, bytes));
    ST_CHECK(t, "cudaMemcpy", rt->cudaMemcpy(dA, A, bytes, cudaMemcpyHostToDevice));
    ST_CHECK(t, "cudaMemcpy", rt->cudaMemcpy(dB, B, bytes, cudaMemcpyHostToDevice));
    ST_CHECK(t, "cudaMemcpy", rt->cudaMemcpy(dC, C, bytes, cudaMemcpyHostToDevice));
    sgemm_args s = {n, dA, dB, dC};
    cudaload_status st = run_sgemm(&s);
    if (st != CUDALOAD_OK) {
        snprintf(t->error, sizeof t->error, "%s: %s", cudaload_status_name(st), cudaload_last_error());
        goto out;
    }
    ST_CHECK(t, "cudaMemcpy", rt->cudaMemcpy(C, dC, bytes, cudaMemcpyDeviceToHost));
    cudaload_kernels_info k = {.size = sizeof k};
    cudaload_kernels_info_get(-1, &k);
    t->backend = backend_name(k.last_backend);
    for (int s_ = 0; s_ < 512; s_++) { /* a sample of entries, in float64 */
        int i = (int)((unsigned)(s_ * 2654435761u) % (unsigned)n), j = (s_ * 37 + 11) % n;
        double ref = 0, mag = 0;
        for (int p = 0; p < n; p++) {
            ref += (double)A[i + (size_t)p * n] * B[p + (size_t)j * n];
            mag += fabs((double)A[i + (size_t)p * n] * B[p + (size_t)j * n]);
        }
        double err = fabs(C[i + (size_t)j * n] - ref) / (mag + 1e-30);
        if (!(err <= t->max_rel_err)) t->max_rel_err = isnan(err) ? INFINITY : err;
    }
    float ms = 0;
    if (!time_median(rt, run_sgemm, &s, 11, &ms)) {
        snprintf(t->error, sizeof t->error, "timing failed: %s", cudaload_last_error());
        goto out;
    }
    t->ms = ms;
    t->rate = 2.0 * n * (double)n * n / (ms / 1e3) / 1e12;
    t->pass = t->max_rel_err < 1e-5;
out:
    if (dA) rt->cudaFree(dA);
    if (dB) rt->cudaFree(dB);
    if (dC) rt->cudaFree(dC);
    free(A), free(B), free(C);
}

/* The self-test needs the driver, a device and the runtime, whatever cuBLAS's state: the bundled
 * kernels need nothing else. On every device (its memory from cudaMalloc with it current; the
 * calls run where the memory is) it runs the backend the process uses (CUDALOAD_BACKEND, else
 * auto: the bundled kernels when built, else cuBLAS); then, on device 0, when that was the
 * bundled kernels and cuBLAS is loaded and CUDALOAD_BACKEND chose nothing, cuBLAS as well. */
void probe_selftest(probe *p) {
    const cudaload_cudart_table *rt = cudaload_cudart();
    if (!p->selftest || p->find_only || p->dev_status != CUDALOAD_OK || p->ndev < 1 || !rt) return;
    int cublas = LIB(p, CUDALOAD_LIB_CUBLAS)->status == CUDALOAD_OK;
    if (!p->kinfo.built && !cublas) {
        p->selftest_skipped = "nothing to run it with: this libcudaload was built without the bundled kernels "
                              "(no nvcc) and cuBLAS is not loaded";
        return;
    }
    p->selftest_attempted = 1;
    int current = 0;
    if (rt->cudaGetDevice(&current) != cudaSuccess) current = 0;
    for (int i = 0; i < p->ndev && i < MAX_DEVICES; i++) {
        cudaError_t e = rt->cudaSetDevice(i);
        if (e != cudaSuccess) { /* the device's tests cannot run: each says why */
            test_result *t = &p->dev[i].saxpy;
            t->ran = 1;
            snprintf(t->error, sizeof t->error, "cudaSetDevice(%d) failed: %s (%s)", i, rt->cudaGetErrorName(e),
                     rt->cudaGetErrorString(e));
            p->dev[i].sgemm = *t;
            continue;
        }
        selftest_saxpy(rt, &p->dev[i].saxpy);
        selftest_sgemm(rt, &p->dev[i].sgemm);
    }
    const char *chosen = getenv("CUDALOAD_BACKEND");
    const test_result *first = &p->dev[0].saxpy;
    if (cublas && !(chosen && chosen[0]) && first->backend && strcmp(first->backend, "bundled") == 0 &&
        rt->cudaSetDevice(0) == cudaSuccess && cudaload_set_backend(CUDALOAD_BACKEND_CUBLAS) == CUDALOAD_OK) {
        selftest_saxpy(rt, &p->saxpy_cublas);
        selftest_sgemm(rt, &p->sgemm_cublas);
        cudaload_set_backend(CUDALOAD_BACKEND_AUTO);
    }
    rt->cudaSetDevice(current);
}

int probe_selftest_count(const probe *p) { return 2 * (p->ndev < MAX_DEVICES ? p->ndev : MAX_DEVICES) + 2; }

const test_result *probe_selftest_at(const probe *p, int i, const char **name, int *dev) {
    int ndev = p->ndev < MAX_DEVICES ? p->ndev : MAX_DEVICES;
    int cublas = i >= 2 * ndev;
    int d = cublas ? 0 : i / 2, sgemm = i % 2;
    if (name) *name = sgemm ? (cublas ? "SGEMM (cublas)" : "SGEMM") : (cublas ? "SAXPY (cublas)" : "SAXPY");
    if (dev) *dev = d;
    if (cublas) return sgemm ? &p->sgemm_cublas : &p->saxpy_cublas;
    return sgemm ? &p->dev[d].sgemm : &p->dev[d].saxpy;
}
