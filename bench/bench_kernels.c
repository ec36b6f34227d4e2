/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_kernels.c -- the bundled SAXPY and SGEMM against cuBLAS called through
 * libcudaload's own table, in the same process and run (make bench; bench/run-kernels.sh
 * adds torch in one process with ours and cuBLAS: bench/torch_kernels.py). Device events time
 * each launch; every figure is the median of RUNS timed runs (default 25) after WARMUP rounds
 * (default 10) of every contender, which bring the GPU's clocks up before the first timed run;
 * ours and cuBLAS alternate run by run so clock and thermal drift hit both alike.
 *
 *   SAXPY n = 2^28 (1 GiB per vector, far beyond L2): effective GB/s = 12 bytes x n / t
 *   (read x, read y, write y); the device-to-device copy of one vector is the roofline
 *   reference (GB/s = 2 x bytes / t). Twice: on an idle GPU (the interval between the
 *   events then includes the host's launch path, a few microseconds of a ~1 ms kernel), and
 *   queued: a 256 MiB cudaMemsetAsync of a scratch buffer is enqueued before the first
 *   event, so the launch is already waiting when that event fires and the interval is the
 *   GPU's work alone (the method of nvbench's blocking kernel), for every contender alike.
 *   SGEMM FP32 (cuBLAS in its default math mode: no TF32), every shape class of
 *   bench/sgemm_shapes.txt (square, odd, transposes, tall-skinny, short-wide, small, padded
 *   leading dimensions), beta = 0: TFLOP/s = 2mnk / t queued (the GPU's work alone: the
 *   goal is judged on it), the ratio and the row's goal, then the ratio on an idle GPU (each
 *   contender's host path included: cublasSgemm's is several microseconds longer than a
 *   bundled launch, which flatters ours on small products).
 *
 * usage: bench_kernels [--runs N] [--warmup N] [--root SITE_PACKAGES] [--quick] [--only saxpy|sgemm]
 *                      [--shapes FILE (default bench/sgemm_shapes.txt)]
 */
#include "cudaload_tables.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cudaload_cudart_table *rt;
static const cudaload_cublas_table *bl;
static cublasHandle_t handle;
static int runs = 25;
static int warmup = 10;

static int cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static float median(float *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_float);
    return n % 2 ? v[n / 2] : 0.5f * (v[n / 2 - 1] + v[n / 2]);
}

#define CHECK_RT(call)                                                                          \
    do {                                                                                        \
        cudaError_t e_ = (call);                                                                \
        if (e_ != cudaSuccess) {                                                                \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, rt->cudaGetErrorName(e_)); \
            exit(1);                                                                            \
        }                                                                                       \
    } while (0)

/* One timed run of each contender, alternating; which: 0 ours, 1 cuBLAS, 2 copy. */
typedef int (*run_fn)(int which, void *ctx);

/* Scratch for the queued mode: enough memset work (~0.1 ms) to cover a launch's host path. */
static void *scratch;
static const size_t scratch_bytes = (size_t)256 << 20;

static void measure(run_fn fn, void *ctx, int contenders, int queued, float med[3]) {
    cudaEvent_t a, b;
    CHECK_RT(rt->cudaEventCreate(&a));
    CHECK_RT(rt->cudaEventCreate(&b));
    float *t[3];
    for (int c = 0; c < contenders; c++) t[c] = calloc((size_t)runs, sizeof(float));
    for (int w = 0; w < warmup; w++)
        for (int c = 0; c < contenders; c++)
            if (fn(c, ctx) != 0) exit(1);
    CHECK_RT(rt->cudaDeviceSynchronize());
    for (int r = 0; r < runs; r++)
        for (int c0 = 0; c0 < contenders; c0++) {
            int c = (c0 + r) % contenders; /* rotate who goes first */
            if (queued) CHECK_RT(rt->cudaMemsetAsync(scratch, c0 + r, scratch_bytes, NULL));
            CHECK_RT(rt->cudaEventRecord(a, NULL));
            if (fn(c, ctx) != 0) exit(1);
            CHECK_RT(rt->cudaEventRecord(b, NULL));
            CHECK_RT(rt->cudaEventSynchronize(b));
            CHECK_RT(rt->cudaEventElapsedTime(&t[c][r], a, b));
        }
    for (int c = 0; c < contenders; c++) {
        med[c] = median(t[c], runs);
        free(t[c]);
    }
    rt->cudaEventDestroy(a);
    rt->cudaEventDestroy(b);
}

typedef struct saxpy_ctx {
    long long n;
    float *x, *y;
} saxpy_ctx;

static int run_saxpy(int which, void *p) {
    saxpy_ctx *c = p;
    const float a = 1.0001f;
    if (which == 0) {
        cudaload_status st = cudaload_saxpy(c->n, a, c->x, c->y, NULL);
        if (st != CUDALOAD_OK) fprintf(stderr, "cudaload_saxpy: %s\n", cudaload_last_error());
        return st != CUDALOAD_OK;
    }
    if (which == 1) return bl->cublasSaxpy(handle, (int)c->n, &a, c->x, 1, c->y, 1) != CUBLAS_STATUS_SUCCESS;
    return rt->cudaMemcpyAsync(c->y, c->x, (size_t)c->n * sizeof(float), cudaMemcpyDeviceToDevice, NULL) != cudaSuccess;
}

typedef struct sgemm_ctx {
    int ta, tb;
    int m, n, k, lda, ldb, ldc;
    float *A, *B, *C;
} sgemm_ctx;

static int run_sgemm(int which, void *p) {
    sgemm_ctx *c = p;
    const float alpha = 1.0f, beta = 0.0f;
    if (which == 0) {
        cudaload_status st = cudaload_sgemm(c->ta ? CUDALOAD_OP_T : CUDALOAD_OP_N, c->tb ? CUDALOAD_OP_T : CUDALOAD_OP_N, c->m, c->n,
                                            c->k, alpha, c->A, c->lda, c->B, c->ldb, beta, c->C, c->ldc, NULL);
        if (st != CUDALOAD_OK) fprintf(stderr, "cudaload_sgemm: %s\n", cudaload_last_error());
        return st != CUDALOAD_OK;
    }
    return bl->cublasSgemm(handle, c->ta ? CUBLAS_OP_T : CUBLAS_OP_N, c->tb ? CUBLAS_OP_T : CUBLAS_OP_N, c->m, c->n, c->k, &alpha,
                           c->A, c->lda, c->B, c->ldb, &beta, c->C, c->ldc) != CUBLAS_STATUS_SUCCESS;
}

static void fill(float *d, size_t n) {
    float *h = malloc(n * sizeof(float));
    unsigned s = 12345;
    for (size_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        h[i] = (float)((s >> 8) & 0xffff) / 65536.0f - 0.5f;
    }
    CHECK_RT(rt->cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice));
    free(h);
}

/* SAXPY n = 2^28 (2^24 with --quick): ours, cuBLAS and the D2D copy, idle and queued. */
static void bench_saxpy(int quick) {
    float med[3];
    saxpy_ctx sc = {.n = quick ? (1LL << 24) : (1LL << 28)};
    CHECK_RT(rt->cudaMalloc((void **)&sc.x, (size_t)sc.n * 4));
    CHECK_RT(rt->cudaMalloc((void **)&sc.y, (size_t)sc.n * 4));
    fill(sc.x, (size_t)sc.n);
    fill(sc.y, (size_t)sc.n);
    double gb = 12.0 * (double)sc.n / 1e9;
    for (int queued = 0; queued < 2; queued++) {
        measure(run_saxpy, &sc, 3, queued, med);
        printf("| SAXPY n=2^%d, %s (GB/s) | %.0f | %.0f | %.3f | D2D copy %.0f GB/s |\n", quick ? 24 : 28,
               queued ? "queued" : "idle GPU", gb / (med[0] / 1e3), gb / (med[1] / 1e3), med[1] / med[0],
               2.0 * sc.n * 4 / 1e9 / (med[2] / 1e3));
    }
    rt->cudaFree(sc.x);
    rt->cudaFree(sc.y);
}

/* SGEMM: every row of the shapes file (bench/sgemm_shapes.txt; the first only with --quick),
 * ours against cuBLAS, with the row's goal. */
static void bench_sgemm(const char *shapes, int quick) {
    float med[3];
    FILE *f = fopen(shapes, "r");
    if (!f) {
        perror(shapes);
        exit(1);
    }
    char line[256], cls[64], op[8];
    while (fgets(line, sizeof line, f)) {
        sgemm_ctx g = {0};
        int pad;
        double goal;
        if (line[0] == '#' || sscanf(line, "%63s %7s %d %d %d %d %lf", cls, op, &g.m, &g.n, &g.k, &pad, &goal) != 7) continue;
        g.ta = op[0] == 'T', g.tb = op[1] == 'T';
        g.lda = (g.ta ? g.k : g.m) + pad, g.ldb = (g.tb ? g.n : g.k) + pad, g.ldc = g.m + pad;
        size_t na = (size_t)g.lda * (size_t)(g.ta ? g.m : g.k), nb = (size_t)g.ldb * (size_t)(g.tb ? g.k : g.n),
               nc = (size_t)g.ldc * (size_t)g.n;
        CHECK_RT(rt->cudaMalloc((void **)&g.A, na * 4));
        CHECK_RT(rt->cudaMalloc((void **)&g.B, nb * 4));
        CHECK_RT(rt->cudaMalloc((void **)&g.C, nc * 4));
        fill(g.A, na);
        fill(g.B, nb);
        float idle[3];
        measure(run_sgemm, &g, 2, 1, med);
        measure(run_sgemm, &g, 2, 0, idle);
        double tf = 2.0 * g.m * g.n * (double)g.k / 1e12, ratio = med[1] / med[0];
        char ld[48] = "";
        if (pad) snprintf(ld, sizeof ld, ", ld +%d", pad);
        printf("| SGEMM %s %s %dx%dx%d%s (TFLOP/s, queued) | %.1f | %.1f | %.3f | goal >= %.2f: %s; idle GPU %.3f |\n", cls,
               op, g.m, g.n, g.k, ld, tf / (med[0] / 1e3), tf / (med[1] / 1e3), ratio, goal, ratio >= goal ? "met" : "not met",
               idle[1] / idle[0]);
        rt->cudaFree(g.A), rt->cudaFree(g.B), rt->cudaFree(g.C);
        if (quick) break;
    }
    fclose(f);
}

int main(int argc, char **argv) {
    const char *root = getenv("CUDALOAD_GPU_SITE");
    int quick = 0;
    const char *only = "";
    const char *shapes = "bench/sgemm_shapes.txt";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--runs") && i + 1 < argc) runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--root") && i + 1 < argc) root = argv[++i];
        else if (!strcmp(argv[i], "--warmup") && i + 1 < argc) warmup = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--only") && i + 1 < argc && (!strcmp(argv[i + 1], "saxpy") || !strcmp(argv[i + 1], "sgemm")))
            only = argv[++i];
        else if (!strcmp(argv[i], "--shapes") && i + 1 < argc) shapes = argv[++i];
        else if (!strcmp(argv[i], "--quick")) quick = 1;
        else {
            fprintf(stderr, "usage: bench_kernels [--runs N] [--warmup N] [--root SITE_PACKAGES] [--quick] [--only saxpy|sgemm] [--shapes FILE]\n");
            return 2;
        }
    }
    if (runs < 1) runs = 1;
    if (warmup < 0) warmup = 0;
    cudaload_options o;
    cudaload_options_init(&o);
    const char *roots[] = {root};
    if (root && root[0]) o.roots = roots, o.n_roots = 1;
    o.flags = CUDALOAD_FLAG_LOAD_CUBLAS;
    int ndev = 0;
    if (cudaload_init(&o) != CUDALOAD_OK || cudaload_device_count(&ndev) != CUDALOAD_OK) {
        printf("bench_kernels: skipped: %s\n", cudaload_last_error());
        return 0;
    }
    rt = cudaload_cudart();
    bl = cudaload_cublas();
    if (!bl || bl->cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "bench_kernels: cuBLAS: %s\n", cudaload_last_error());
        return 1;
    }
    cudaload_set_backend(CUDALOAD_BACKEND_BUNDLED);
    cudaload_kernels_info ki = {.size = sizeof ki};
    cudaload_kernels_info_get(0, &ki);
    cudaload_library_info li = {.size = sizeof li};
    cudaload_get_library_info(CUDALOAD_LIB_CUBLAS, &li);
    printf("bundled kernels: toolkit %d, SASS %s, fatbin %zu bytes, device sm_%d%d (%s); cuBLAS %s (%d.%d.%d)\n",
           ki.toolkit_version, ki.sass_archs, ki.fatbin_bytes, ki.cc_major, ki.cc_minor, ki.has_sass ? "SASS" : "PTX JIT",
           li.path, li.version / 10000, li.version / 100 % 100, li.version % 100);
    printf("medians of %d timed runs after %d warm-up rounds, contenders alternating\n\n", runs, warmup);
    printf("| benchmark | libcudaload | cuBLAS (same table) | ratio | reference, goal |\n|---|---|---|---|---|\n");

    CHECK_RT(rt->cudaMalloc(&scratch, scratch_bytes)); /* the queued mode's (SAXPY and SGEMM) */
    if (strcmp(only, "sgemm") != 0) bench_saxpy(quick);
    if (strcmp(only, "saxpy") != 0) bench_sgemm(shapes, quick);
    rt->cudaFree(scratch);
    bl->cublasDestroy(handle);
    return 0;
}
