/*
 * gpu_kernels.c -- `make check-gpu`: cudaload_saxpy and cudaload_sgemm on a real GPU,
 * through both backends (the bundled kernels and cuBLAS), against a float64 CPU reference.
 *
 * Inputs are random with a fresh seed each run (printed; CUDALOAD_TEST_SEED repeats one).
 * Outputs are poisoned before each run: C is NaN when beta == 0 (so a kernel that reads C
 * then fails), and the padding rows of C (ldc > m) hold a sentinel that must survive.
 * Sizes are not multiples of the tiles (1, 7, 1000, 4097, 1 x N, N x 1), both SGEMM
 * kernels (the 256 x 128 one needs aligned operands and a large product), all four
 * transpose combinations, leading dimensions larger than needed, alpha/beta including
 * beta = 0, alpha = 0 and k = 0, misaligned (scalar-path) SAXPY, and a non-default stream.
 * Skipped with the reason when there is no driver or no GPU.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cudaload_tables.h"
#include "harness.h"

static const cudaload_cudart_table *rt;
static char skip_reason[2048];
static unsigned long long seed_state;

static double rnd(void) { /* xorshift64*, uniform in [-1, 1) */
    seed_state ^= seed_state >> 12;
    seed_state ^= seed_state << 25;
    seed_state ^= seed_state >> 27;
    return (double)((seed_state * 2685821657736338717ULL) >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static int setup(void **state) {
    (void)state;
    const char *s = getenv("CUDALOAD_TEST_SEED");
    unsigned long long seed = s && s[0] ? strtoull(s, NULL, 0) : ((unsigned long long)time(NULL) << 20) ^ (unsigned long long)getpid();
    seed_state = seed ? seed : 1;
    fprintf(stderr, "gpu_kernels: seed %llu (CUDALOAD_TEST_SEED=%llu repeats this run)\n", seed, seed);
    th_gpu_init(skip_reason, sizeof skip_reason);
    if (!skip_reason[0]) rt = cudaload_cudart();
    return 0;
}

#define SKIP_WITHOUT_GPU() TH_SKIP_IF(skip_reason)

static void *dalloc(size_t bytes) {
    void *p = NULL;
    assert_int_equal(rt->cudaMalloc(&p, bytes ? bytes : 4), cudaSuccess);
    return p;
}

static void h2d(void *d, const void *h, size_t bytes) { assert_int_equal(rt->cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice), cudaSuccess); }
static void d2h(void *h, const void *d, size_t bytes) { assert_int_equal(rt->cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost), cudaSuccess); }

/* Set by test_calls_under_another_context: a context of the device, not its primary one, made
 * current around each cudaload call (the operands are allocated before, in the primary one). */
static CUcontext foreign_ctx;

static void foreign_enter(void) {
    if (foreign_ctx) assert_int_equal(cudaload_driver()->cuCtxPushCurrent(foreign_ctx), CUDA_SUCCESS);
}

/* The call left the caller's context current: the one popped is the one pushed. */
static void foreign_leave(void) {
    CUcontext popped = NULL;
    if (!foreign_ctx) return;
    assert_int_equal(cudaload_driver()->cuCtxPopCurrent(&popped), CUDA_SUCCESS);
    assert_ptr_equal(popped, foreign_ctx);
}

static const cudaload_backend backends[] = {CUDALOAD_BACKEND_BUNDLED, CUDALOAD_BACKEND_CUBLAS};
static const char *const backend_names[] = {"auto", "bundled", "cublas"};

static void saxpy_case(cudaload_backend be, long long n, int offset, cudaStream_t stream) {
    size_t bytes = (size_t)(n + offset) * sizeof(float);
    float *hx = malloc(bytes), *hy = malloc(bytes), *out = malloc(bytes);
    for (long long i = 0; i < n + offset; i++) hx[i] = (float)rnd(), hy[i] = (float)rnd();
    float a = (float)rnd() * 3.0f;
    float *dx = dalloc(bytes), *dy = dalloc(bytes);
    h2d(dx, hx, bytes);
    h2d(dy, hy, bytes);
    assert_int_equal(cudaload_set_backend(be), CUDALOAD_OK);
    foreign_enter();
    cudaload_status st = cudaload_saxpy(n, a, dx + offset, dy + offset, stream);
    foreign_leave();
    if (st != CUDALOAD_OK) fail_msg("saxpy n=%lld backend %s: %s: %s", n, backend_names[be], cudaload_status_name(st), cudaload_last_error());
    assert_int_equal(rt->cudaDeviceSynchronize(), cudaSuccess);
    d2h(out, dy, bytes);
    for (long long i = 0; i < n + offset; i++) {
        double want = i < offset ? hy[i] : (double)a * hx[i] + hy[i];
        if (fabs(out[i] - want) > 1e-6 * (fabs(want) + 1.0))
            fail_msg("saxpy %s n=%lld offset=%d: y[%lld] = %.9g, want %.9g", backend_names[be], n, offset, i, out[i], want);
    }
    cudaload_kernels_info k = {.size = sizeof k};
    cudaload_kernels_info_get(-1, &k);
    assert_int_equal(k.last_backend, be);
    rt->cudaFree(dx);
    rt->cudaFree(dy);
    free(hx), free(hy), free(out);
}

static void test_saxpy(void **state) {
    (void)state;
    SKIP_WITHOUT_GPU();
    cudaStream_t s;
    assert_int_equal(rt->cudaStreamCreate(&s), cudaSuccess);
    static const long long sizes[] = {1, 7, 1000, 4097, (1 << 20) + 3};
    for (size_t b = 0; b < 2; b++)
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            saxpy_case(backends[b], sizes[i], 0, NULL);
            saxpy_case(backends[b], sizes[i], 1, s); /* 4-byte aligned only: the scalar path */
        }
    rt->cudaStreamDestroy(s);
}

typedef struct gemm_case {
    int ta, tb;
    long long m, n, k;
    long long pad_a, pad_b, pad_c; /* extra rows in the leading dimensions */
    float alpha, beta;
} gemm_case;

static const float SENTINEL = -12345.25f;

typedef struct gemm_data { /* the host copies a case's check reads */
    const gemm_case *c;
    const float *A, *B, *C, *out;
    long long lda, ldb, ldc;
    cudaload_backend be;
} gemm_data;

/* C(i, j) against the float64 product; the tolerance grows with k and the terms' magnitude. */
static void check_entry(const gemm_data *g, long long i, long long j) {
    const gemm_case *c = g->c;
    float got = g->out[i + j * g->ldc];
    double ref = 0, mag = 0;
    for (long long p = 0; p < c->k && c->alpha != 0.0f; p++) {
        double a = c->ta ? g->A[p + i * g->lda] : g->A[i + p * g->lda];
        double b = c->tb ? g->B[j + p * g->ldb] : g->B[p + j * g->ldb];
        ref += a * b;
        mag += fabs(a * b);
    }
    ref *= c->alpha;
    mag *= fabs(c->alpha);
    if (c->beta != 0.0f) {
        ref += (double)c->beta * g->C[i + j * g->ldc];
        mag += fabs((double)c->beta * g->C[i + j * g->ldc]);
    }
    double err = fabs(got - ref), tol = 4e-7 * (double)(c->k + 4) * (mag + 1e-30) + 1e-30;
    if (!(err <= tol))
        fail_msg("sgemm %s %c%c m=%lld n=%lld k=%lld lda=%lld ldb=%lld ldc=%lld alpha=%g beta=%g: C(%lld,%lld) = %.9g, want %.9g "
                 "(tol %.3g)",
                 backend_names[g->be], c->ta ? 'T' : 'N', c->tb ? 'T' : 'N', c->m, c->n, c->k, g->lda, g->ldb, g->ldc, c->alpha,
                 c->beta, i, j, got, ref, tol);
}

/* One call on fresh random inputs. Every entry of C is checked for the sentinel in its padding
 * and, with beta = 0, for the NaN it was poisoned with; against float64 either every entry, or
 * (sampled: products too large for a CPU reference of every entry) the first and last two rows
 * and columns (the edge tiles) and 4096 random entries. */
static void sgemm_case_checked(cudaload_backend be, const gemm_case *c, cudaStream_t stream, int sampled) {
    long long ar = c->ta ? c->k : c->m, ac = c->ta ? c->m : c->k;
    long long br = c->tb ? c->n : c->k, bc = c->tb ? c->k : c->n;
    long long lda = (ar > 1 ? ar : 1) + c->pad_a, ldb = (br > 1 ? br : 1) + c->pad_b, ldc = (c->m > 1 ? c->m : 1) + c->pad_c;
    size_t na = (size_t)(lda * (ac ? ac : 1)), nb = (size_t)(ldb * (bc ? bc : 1)), nc = (size_t)(ldc * c->n);
    float *A = malloc(na * 4), *B = malloc(nb * 4), *C = malloc(nc * 4), *out = malloc(nc * 4);
    assert_true(A && B && C && out);
    for (size_t i = 0; i < na; i++) A[i] = (float)rnd();
    for (size_t i = 0; i < nb; i++) B[i] = (float)rnd();
    for (long long j = 0; j < c->n; j++)
        for (long long i = 0; i < ldc; i++)
            C[i + j * ldc] = i >= c->m ? SENTINEL : c->beta == 0.0f ? NAN : (float)rnd();
    float *dA = dalloc(na * 4), *dB = dalloc(nb * 4), *dC = dalloc(nc * 4);
    h2d(dA, A, na * 4);
    h2d(dB, B, nb * 4);
    h2d(dC, C, nc * 4);
    assert_int_equal(cudaload_set_backend(be), CUDALOAD_OK);
    foreign_enter();
    cudaload_status st = cudaload_sgemm(c->ta ? CUDALOAD_OP_T : CUDALOAD_OP_N, c->tb ? CUDALOAD_OP_T : CUDALOAD_OP_N, c->m, c->n,
                                        c->k, c->alpha, dA, lda, dB, ldb, c->beta, dC, ldc, stream);
    foreign_leave();
    if (st != CUDALOAD_OK)
        fail_msg("sgemm %s %c%c %lldx%lldx%lld: %s: %s", backend_names[be], c->ta ? 'T' : 'N', c->tb ? 'T' : 'N', c->m, c->n, c->k,
                 cudaload_status_name(st), cudaload_last_error());
    assert_int_equal(stream ? rt->cudaStreamSynchronize(stream) : rt->cudaDeviceSynchronize(), cudaSuccess);
    d2h(out, dC, nc * 4);
    gemm_data g = {c, A, B, C, out, lda, ldb, ldc, be};
    for (long long j = 0; j < c->n; j++)
        for (long long i = 0; i < ldc; i++) {
            float got = out[i + j * ldc];
            if (i >= c->m && got != SENTINEL) fail_msg("sgemm %s wrote into the padding of C at (%lld, %lld)", backend_names[be], i, j);
            if (i < c->m && isnan(got)) fail_msg("sgemm %s left C(%lld, %lld) NaN (unwritten, or C read with beta = 0)", backend_names[be], i, j);
            if (!sampled && i < c->m) check_entry(&g, i, j);
        }
    if (sampled) {
        for (long long e = 0; e < 2 && e < c->m; e++)
            for (long long j = 0; j < c->n; j++) check_entry(&g, e, j), check_entry(&g, c->m - 1 - e, j);
        for (long long e = 0; e < 2 && e < c->n; e++)
            for (long long i = 0; i < c->m; i++) check_entry(&g, i, e), check_entry(&g, i, c->n - 1 - e);
        for (int r = 0; r < 4096; r++) {
            long long i = (long long)((rnd() + 1.0) * 0.5 * (double)c->m), j = (long long)((rnd() + 1.0) * 0.5 * (double)c->n);
            check_entry(&g, i < c->m ? i : c->m - 1, j < c->n ? j : c->n - 1);
        }
    }
    rt->cudaFree(dA), rt->cudaFree(dB), rt->cudaFree(dC);
    free(A), free(B), free(C), free(out);
}

static void sgemm_case(cudaload_backend be, const gemm_case *c, cudaStream_t stream) { sgemm_case_checked(be, c, stream, 0); }

static void test_sgemm(void **state) {
    (void)state;
    SKIP_WITHOUT_GPU();
    int quick = getenv("CUDALOAD_TEST_QUICK") != NULL; /* under compute-sanitizer */
    cudaStream_t s;
    assert_int_equal(rt->cudaStreamCreate(&s), cudaSuccess);
    const gemm_case shapes[] = {
        {0, 0, 1, 1, 1, 0, 0, 0, 1.0f, 0.0f},        {0, 0, 7, 7, 7, 1, 2, 3, 1.5f, -0.5f},
        {0, 0, 1, 4097, 33, 0, 3, 0, 1.0f, 0.0f},    {0, 0, 4097, 1, 33, 5, 0, 2, -1.0f, 2.0f},
        /* the 256 x 128 tile for NN and NT (operands 16-byte aligned, leading dimensions multiples
         * of 4, one wave of its tiles on an H100: libcudaload/kernels.c): edge tiles, a partial
         * first slice */
        {0, 0, 2000, 1996, 44, 4, 8, 3, 1.25f, 0.0f},
        /* unaligned: the 128 x 128 tile, all four cases; NN one wave of the any-alignment
         * 256 x 128 tile (C through shared memory), edge tiles both ways, beta != 0 and 0 */
        {0, 0, 2000, 2000, 61, 1, 1, 1, 1.0f, 0.5f}, {0, 0, 1999, 2001, 45, 3, 1, 6, 1.25f, 0.0f},
        {0, 0, 1000, 1000, 64, 4, 4, 4, 1.0f, 0.0f}, /* the 128 x 64 tile (NN, NT) */
        {0, 0, 129, 130, 257, 3, 5, 7, 0.75f, 0.0f}, {0, 0, 1000, 7, 1000, 0, 0, 0, 1.0f, 1.0f},
        {0, 0, 300, 200, 0, 0, 0, 4, 2.0f, 0.5f},    /* k = 0: C = beta * C */
        {0, 0, 300, 200, 50, 0, 0, 0, 0.0f, 3.0f},   /* alpha = 0: A and B not read */
        {0, 0, 1000, 1001, 64, 4, 4, 4, 1.0f, 0.0f}, /* beyond one wave of tiles */
        {0, 0, 2048, 2048, 64, 0, 0, 0, 1.0f, 0.5f}, /* the 256 x 128 kernel, full tiles, beta != 0 */
    };
    size_t nshapes = quick ? 7 : sizeof shapes / sizeof shapes[0];
    for (size_t b = 0; b < 2; b++)
        for (int t = 0; t < 4; t++)
            for (size_t i = 0; i < nshapes; i++) {
                gemm_case c = shapes[i];
                c.ta = t >> 1;
                c.tb = t & 1;
                sgemm_case(backends[b], &c, (i % 2) ? s : NULL);
            }
    rt->cudaStreamDestroy(s);
}

/* The SGEMM shape classes, read from bench/sgemm_shapes.txt (the benchmark's rows), at
 * their benchmark sizes, through the bundled kernels: odd sizes, the four transposes,
 * tall-skinny and short-wide, small, padded leading dimensions; beta = 0 on NaN-poisoned C,
 * and the padded shape once more with beta != 0. Sampled against float64 where the product is
 * large. Under compute-sanitizer (CUDALOAD_TEST_QUICK) only the shapes of at most 2^31
 * multiply-adds. */
static void test_sgemm_shape_classes(void **state) {
    (void)state;
    SKIP_WITHOUT_GPU();
    int quick = getenv("CUDALOAD_TEST_QUICK") != NULL;
    const char *top = getenv("CUDALOAD_TEST_TOP");
    char path[4096];
    snprintf(path, sizeof path, "%s/bench/sgemm_shapes.txt", top && top[0] ? top : ".");
    FILE *f = fopen(path, "r");
    if (!f) fail_msg("%s: %s (CUDALOAD_TEST_TOP names the source tree)", path, strerror(errno));
    char line[256], cls[64], op[8];
    int rows = 0;
    while (fgets(line, sizeof line, f)) {
        gemm_case c = {.alpha = 1.0f};
        long long pad;
        double goal;
        if (line[0] == '#' || sscanf(line, "%63s %7s %lld %lld %lld %lld %lf", cls, op, &c.m, &c.n, &c.k, &pad, &goal) != 7) continue;
        c.ta = op[0] == 'T', c.tb = op[1] == 'T';
        c.pad_a = c.pad_b = c.pad_c = pad;
        rows++;
        double fma = (double)c.m * (double)c.n * (double)c.k;
        if (quick && fma > 2147483648.0) continue;
        print_message("sgemm %s %s %lldx%lldx%lld pad %lld\n", cls, op, c.m, c.n, c.k, pad);
        sgemm_case_checked(CUDALOAD_BACKEND_BUNDLED, &c, NULL, fma > 1e9);
        if (pad) {
            c.alpha = 0.5f, c.beta = 0.25f;
            sgemm_case_checked(CUDALOAD_BACKEND_BUNDLED, &c, NULL, fma > 1e9);
        }
    }
    fclose(f);
    assert_true(rows >= 16);
}

/* The paths that use scratch (kernels.c: cl_sgemm_plan_make; test_kernels checks which shape
 * takes which): split k with its partial products summed by a second kernel, on aligned and
 * unaligned operands, for the four transposes, with beta = 0 on NaN-poisoned C and beta != 0,
 * on the default stream and on a stream of the caller's (the scratch is stream-ordered). Every
 * entry checked against float64. */
static void test_sgemm_scratch_paths(void **state) {
    (void)state;
    SKIP_WITHOUT_GPU();
    cudaStream_t s;
    assert_int_equal(rt->cudaStreamCreate(&s), cudaSuccess);
    const gemm_case shapes[] = {
        {0, 0, 600, 500, 700, 1, 2, 3, 1.25f, 0.0f},  /* lda, ldb odd, split */
        {0, 0, 512, 384, 1024, 0, 0, 0, 1.0f, 0.5f},  /* aligned, split in 8 */
        {0, 0, 256, 2048, 300, 0, 0, 1, -0.5f, 0.0f}, /* split in 2, the last slice partial */
        {0, 0, 1100, 1000, 301, 5, 0, 0, 1.0f, 2.0f},  /* A unaligned, not split (the tiles fill the GPU) */
        {0, 0, 600, 500, 700, 0, 3, 0, 1.0f, 0.0f},    /* B alone unaligned */
        {0, 0, 8, 240, 70001, 1, 0, 0, 1.0f, 0.0f},    /* k > 65535, split in 16 */
    };
    for (int t = 0; t < 4; t++)
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
            gemm_case c = shapes[i];
            c.ta = t >> 1;
            c.tb = t & 1;
            sgemm_case(CUDALOAD_BACKEND_BUNDLED, &c, (i + t) % 2 ? s : NULL);
        }
    rt->cudaStreamDestroy(s);
}

/* Calls made while another context of the device is current (a driver-API program's own, from
 * cuCtxCreate), on operands of the primary context, where the kernels run: the launch the
 * library makes first, without asking which context is current, is refused there, and made
 * again in the primary context; the caller's context is current again after each call, and
 * nothing ran in it (it synchronises without error). One launch (SAXPY, a small and a large
 * product), and split k (512^3, 1024^3: scratch, two launches) on the default and a caller's
 * stream. */
static void test_calls_under_another_context(void **state) {
    (void)state;
    SKIP_WITHOUT_GPU();
    if (getenv("CUDALOAD_TEST_API_ERRORS")) {
        /* sanitize.sh: compute-sanitizer reports every refused driver call, and this test's first
         * launches are refused by design; it runs apart, with API errors not reported */
        print_message("skipped: its refused first launches run apart under compute-sanitizer (sanitize.sh)\n");
        skip();
    }
    const cudaload_driver_table *d = cudaload_driver();
    if (!d->has.cuCtxCreate_v4 || !d->has.cuCtxDestroy_v2 || !d->has.cuCtxSynchronize) {
        print_message("skipped: this driver has no cuCtxCreate_v4 (CUDA 12.5)\n");
        skip();
    }
    int dev = 0;
    CUdevice cu;
    assert_int_equal(rt->cudaGetDevice(&dev), cudaSuccess);
    assert_int_equal(rt->cudaFree(NULL), cudaSuccess); /* the primary context made */
    assert_int_equal(d->cuDeviceGet(&cu, dev), CUDA_SUCCESS);
    CUctxCreateParams params;
    memset(&params, 0, sizeof params);
    CUcontext mine = NULL, popped = NULL;
    assert_int_equal(d->cuCtxCreate_v4(&mine, &params, 0, cu), CUDA_SUCCESS); /* made current: pushed */
    assert_int_equal(d->cuCtxPopCurrent(&popped), CUDA_SUCCESS);
    assert_ptr_equal(popped, mine);
    cudaStream_t s;
    assert_int_equal(rt->cudaStreamCreate(&s), cudaSuccess);
    foreign_ctx = mine;
    saxpy_case(CUDALOAD_BACKEND_BUNDLED, 4097, 0, NULL);
    saxpy_case(CUDALOAD_BACKEND_BUNDLED, 1000, 1, s);
    const gemm_case shapes[] = {
        {0, 0, 16, 16, 16, 0, 0, 0, 1.0f, 0.0f},      {0, 1, 200, 300, 100, 1, 2, 3, 1.5f, 0.5f},
        {0, 0, 512, 512, 512, 0, 0, 0, 1.0f, 0.0f},   {1, 0, 512, 512, 512, 0, 0, 0, 1.0f, 0.5f},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) sgemm_case(CUDALOAD_BACKEND_BUNDLED, &shapes[i], i % 2 ? s : NULL);
    const gemm_case wide = {0, 0, 1024, 1024, 1024, 0, 0, 0, 1.0f, 0.0f};
    sgemm_case_checked(CUDALOAD_BACKEND_BUNDLED, &wide, NULL, 1);
    foreign_ctx = NULL;
    assert_int_equal(d->cuCtxPushCurrent(mine), CUDA_SUCCESS);
    assert_int_equal(d->cuCtxSynchronize(), CUDA_SUCCESS);
    assert_int_equal(d->cuCtxPopCurrent(&popped), CUDA_SUCCESS);
    assert_int_equal(d->cuCtxDestroy_v2(mine), CUDA_SUCCESS);
    rt->cudaStreamDestroy(s);
}

static void test_auto_takes_bundled_on_this_gpu(void **state) {
    (void)state;
    SKIP_WITHOUT_GPU();
    int dev = 0;
    rt->cudaGetDevice(&dev);
    cudaload_kernels_info k = {.size = sizeof k};
    assert_int_equal(cudaload_kernels_info_get(dev, &k), CUDALOAD_OK);
    print_message("device %d sm_%d%d: sass %d jit %d runnable %s; fatbin %zu bytes, toolkit %d, SASS %s\n", dev, k.cc_major,
                  k.cc_minor, k.has_sass, k.would_jit, cudaload_status_name(k.runnable), k.fatbin_bytes, k.toolkit_version,
                  k.sass_archs);
    if (!k.built) TH_SKIP("this build has no nvcc, so no kernels");
    assert_int_equal(k.runnable, CUDALOAD_OK);
    assert_int_equal(cudaload_set_backend(CUDALOAD_BACKEND_AUTO), CUDALOAD_OK);
    float *d = dalloc(64 * sizeof(float));
    assert_int_equal(rt->cudaMemsetAsync(d, 0, 64 * sizeof(float), NULL), cudaSuccess);
    assert_int_equal(cudaload_saxpy(64, 1.0f, d, d, NULL), CUDALOAD_OK);
    cudaload_kernels_info_get(-1, &k);
    assert_int_equal(k.last_backend, CUDALOAD_BACKEND_BUNDLED);
    rt->cudaFree(d);
}

int main(void) {
    /* sanitize.sh runs the test under another context apart (CUDALOAD_TEST_OTHER_CONTEXT_ONLY) */
    const struct CMUnitTest apart[] = {cmocka_unit_test(test_calls_under_another_context)};
    if (getenv("CUDALOAD_TEST_OTHER_CONTEXT_ONLY")) return cmocka_run_group_tests_name("gpu_kernels", apart, setup, NULL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_auto_takes_bundled_on_this_gpu),
        cmocka_unit_test(test_saxpy),
        cmocka_unit_test(test_sgemm),
        cmocka_unit_test(test_sgemm_scratch_paths),
        cmocka_unit_test(test_sgemm_shape_classes),
        cmocka_unit_test(test_calls_under_another_context),
    };
    return cmocka_run_group_tests_name("gpu_kernels", tests, setup, NULL);
}
