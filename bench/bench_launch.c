/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_launch.c -- host cost of a small call (the launch cost of docs/performance.md): cudaload_saxpy(n = 1)
 * and cudaload_sgemm(16^3) against a raw cuLaunchKernel of the very same kernel (the module
 * loaded here from libcudaload's own fatbin) and against cublasSaxpy_v2 / cublasSgemm_v2 (the
 * handle made here, on the same stream), in one process on device 0.
 *
 * Each contender makes CALLS calls in a row on the legacy default stream and is timed on the
 * host (CLOCK_MONOTONIC) from the first call to the return of the last; the GPU is drained
 * before each batch, and batches are short enough that the launch queue never fills, so the
 * figure is the host path of a call, in ns. ROUNDS rounds, the contenders interleaved within
 * each round (their order rotated each round); the medians over the rounds are reported.
 * The ratios are the medians of each round's own ratio (ours / raw of the same round): the
 * host's speed drifts by more than the few percent compared (the raw launch's median moves
 * by 40% between processes), and a round's two batches run a few ms apart.
 *
 * Two devices: with --device D the operands live on device D while device 0 is current (the
 * pointer-chosen device pushes D's context for the launch), a case the raw launch does not
 * have; reported as its own rows.
 *
 * usage: bench_launch [--rounds N] [--calls N] [--root SITE_PACKAGES] [--device D]
 * Output, tab-separated: RESULT <name> <ns_median>, RATIO <name> <ours/peer, median of the rounds'>,
 * DIFF <name> <ours - raw, ns, of the medians>, INFO <key> <value>.
 */
#include "bench_clock.h"
#include "cudaload_tables.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

extern const unsigned char cl_fatbin_start[]; /* libcudaload.a's embedded kernels (fatbin.S) */

static const cudaload_cudart_table *rt;
static const cudaload_driver_table *drv;
static const cudaload_cublas_table *bl;
static cublasHandle_t handle;

static void die(const char *what, int code) {
    fprintf(stderr, "bench_launch: %s failed (%d): %s\n", what, code, cudaload_last_error());
    exit(1);
}

/* the operands: x, y of 16 floats for SAXPY; A, B, C of 16 x 16 for SGEMM */
static float *x, *y, *A, *B, *C;
static float *xd, *yd, *Ad, *Bd, *Cd; /* the same on --device D */
static CUfunction raw_saxpy, raw_sgemm;

/* One batch of calls of contender w; returns ns per call. */
enum { OURS_SAXPY, RAW_SAXPY, CUBLAS_SAXPY, OURS_SGEMM, RAW_SGEMM, CUBLAS_SGEMM, OURS_SAXPY_DEV, OURS_SGEMM_DEV, NCONT };
static const char *const names[NCONT] = {"saxpy_n1_ours",  "saxpy_n1_raw",   "saxpy_n1_cublas",      "sgemm_16_ours",
                                         "sgemm_16_raw",   "sgemm_16_cublas", "saxpy_n1_ours_other_device",
                                         "sgemm_16_ours_other_device"};

static double batch(int w, int calls) {
    if (rt->cudaDeviceSynchronize() != cudaSuccess) die("cudaDeviceSynchronize", 0);
    long long n1 = 1;
    float a = 1.0f, one = 1.0f, zero = 0.0f;
    int m = 16, ld = 16;
    void *sargs[] = {&n1, &a, &x, &y};
    /* the kernel's arguments as libcudaload passes them: one split (kc = k, no split stride) */
    void *gargs[] = {&m, &m, &m, &one, &A, &(long long){16}, &B, &(long long){16}, &zero, &C, &(long long){16}, &m,
                     &(long long){0}};
    double t0 = now_ns();
    int bad = 0;
    for (int i = 0; i < calls; i++) {
        switch (w) {
        case OURS_SAXPY: bad |= cudaload_saxpy(1, a, x, y, NULL); break;
        case RAW_SAXPY: bad |= drv->cuLaunchKernel(raw_saxpy, 1, 1, 1, 256, 1, 1, 0, NULL, sargs, NULL); break;
        case CUBLAS_SAXPY: bad |= bl->cublasSaxpy(handle, 1, &a, x, 1, y, 1); break;
        case OURS_SGEMM:
            bad |= cudaload_sgemm(CUDALOAD_OP_N, CUDALOAD_OP_N, 16, 16, 16, 1.0f, A, 16, B, 16, 0.0f, C, 16, NULL);
            break;
        case RAW_SGEMM: bad |= drv->cuLaunchKernel(raw_sgemm, 1, 1, 1, 128, 1, 1, 0, NULL, gargs, NULL); break;
        case CUBLAS_SGEMM: bad |= bl->cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, 16, 16, 16, &one, A, ld, B, ld, &zero, C, ld); break;
        case OURS_SAXPY_DEV: bad |= cudaload_saxpy(1, a, xd, yd, NULL); break;
        case OURS_SGEMM_DEV:
            bad |= cudaload_sgemm(CUDALOAD_OP_N, CUDALOAD_OP_N, 16, 16, 16, 1.0f, Ad, 16, Bd, 16, 0.0f, Cd, 16, NULL);
            break;
        }
    }
    double t = (now_ns() - t0) / calls;
    if (bad) die(names[w], bad);
    return t;
}

static float *dev_floats(size_t n) {
    float *p = NULL;
    if (rt->cudaMalloc((void **)&p, n * sizeof(float)) != cudaSuccess) die("cudaMalloc", 0);
    rt->cudaMemset(p, 0, n * sizeof(float));
    return p;
}

int main(int argc, char **argv) {
    int rounds = 101, calls = 500, other = -1;
    const char *root = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--calls") && i + 1 < argc) calls = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--root") && i + 1 < argc) root = argv[++i];
        else if (!strcmp(argv[i], "--device") && i + 1 < argc) other = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_launch [--rounds N] [--calls N] [--root SITE_PACKAGES] [--device D]\n");
            return 2;
        }
    }
    if (rounds < 1 || rounds > 1001 || calls < 1) return 2;
    cudaload_options o;
    cudaload_options_init(&o);
    const char *roots[] = {root};
    if (root) o.roots = roots, o.n_roots = 1;
    cudaload_status st = cudaload_init(&o);
    if (st != CUDALOAD_OK) die("cudaload_init", st);
    if ((st = cudaload_load_cublas()) != CUDALOAD_OK) die("cudaload_load_cublas", st);
    rt = cudaload_cudart(), drv = cudaload_driver(), bl = cudaload_cublas();
    int ndev = 0;
    if (cudaload_device_count(&ndev) != CUDALOAD_OK) die("cudaload_device_count", 0);
    if (other >= ndev) other = -1;
    if (other > 0) {
        rt->cudaSetDevice(other);
        xd = dev_floats(16), yd = dev_floats(16), Ad = dev_floats(256), Bd = dev_floats(256), Cd = dev_floats(256);
    }
    rt->cudaSetDevice(0);
    x = dev_floats(16), y = dev_floats(16), A = dev_floats(256), B = dev_floats(256), C = dev_floats(256);
    /* the raw contender: the same fatbin, loaded into the primary context (current now) */
    CUmodule mod;
    int r = drv->cuModuleLoadData(&mod, cl_fatbin_start);
    if (r == CUDA_SUCCESS) r = drv->cuModuleGetFunction(&raw_saxpy, mod, "cudaload_saxpy_scalar");
    if (r == CUDA_SUCCESS) r = drv->cuModuleGetFunction(&raw_sgemm, mod, "cudaload_sgemm_64x64_nn");
    if (r != CUDA_SUCCESS) die("loading the fatbin for the raw launch", r);
    if (bl->cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) die("cublasCreate", 0);
    if (cudaload_set_backend(CUDALOAD_BACKEND_BUNDLED) != CUDALOAD_OK) die("cudaload_set_backend", 0);
    int ncont = other > 0 ? NCONT : OURS_SAXPY_DEV;
    for (int w = 0; w < ncont; w++) batch(w, calls); /* warm-up: modules, handles, first launches */
    static double t[NCONT][1001];
    for (int k = 0; k < rounds; k++)
        for (int j = 0; j < ncont; j++) {
            int w = (j + k) % ncont;
            t[w][k] = batch(w, calls);
        }
    /* the paired ratios, before the sort below reorders each contender's rounds */
    static double ratio[4][1001];
    static const int pair[4][2] = {{OURS_SAXPY, RAW_SAXPY}, {OURS_SAXPY, CUBLAS_SAXPY}, {OURS_SGEMM, RAW_SGEMM},
                                   {OURS_SGEMM, CUBLAS_SGEMM}};
    static const char *const ratio_names[4] = {"saxpy_n1_ours_vs_raw", "saxpy_n1_ours_vs_cublas", "sgemm_16_ours_vs_raw",
                                               "sgemm_16_ours_vs_cublas"};
    for (int q = 0; q < 4; q++)
        for (int k = 0; k < rounds; k++) ratio[q][k] = t[pair[q][0]][k] / t[pair[q][1]][k];
    double med[NCONT];
    for (int w = 0; w < ncont; w++) {
        qsort(t[w], (size_t)rounds, sizeof(double), cmp_double);
        med[w] = t[w][rounds / 2];
        printf("RESULT\t%s\t%.0f\n", names[w], med[w]);
    }
    for (int q = 0; q < 4; q++) {
        qsort(ratio[q], (size_t)rounds, sizeof(double), cmp_double);
        printf("RATIO\t%s\t%.3f\n", ratio_names[q], ratio[q][rounds / 2]);
    }
    printf("DIFF\tsaxpy_n1_ours_minus_raw_ns\t%.0f\n", med[OURS_SAXPY] - med[RAW_SAXPY]);
    printf("DIFF\tsgemm_16_ours_minus_raw_ns\t%.0f\n", med[OURS_SGEMM] - med[RAW_SGEMM]);
    printf("INFO\trounds\t%d\nINFO\tcalls_per_batch\t%d\nINFO\tdevices\t%d\n", rounds, calls, ndev);
    rt->cudaDeviceSynchronize();
    return 0;
}
