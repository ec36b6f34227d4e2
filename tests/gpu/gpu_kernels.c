/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpu_kernels.c -- `make check-gpu`: cudaload_saxpy and cudaload_sgemm on a real GPU,
 * through both backends (the bundled kernels and cuBLAS), against a float64 CPU reference.
 *
 * Inputs are random with a fresh seed each run (printed; CUDALOAD_TEST_SEED repeats one), each
 * SGEMM entry checked within a rounding bound that grows with sqrt(k) (sgemm_tol); and small
 * integers, whose products and sums are exact in FP32, compared exactly. The checks are shown
 * to catch a wrong product: one with a k step or a slice of k dropped (test_sgemm_planted_defects).
 * Outputs are poisoned before each run: C is NaN when beta == 0 (so a kernel that reads C
 * then fails), and the padding rows of C (ldc > m) hold a sentinel that must survive.
 * Sizes are not multiples of the tiles (1, 7, 1000, 4097, 1 x N, N x 1, 2 x 4194340: more
 * tiles of columns than one grid holds), both SGEMM
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
    int exact; /* small-integer operands: every entry must equal the float64 product */
} gemm_data;

/* How far an entry of an FP32 product may be from the exact one: a probabilistic bound of
 * rounding errors (Higham and Mary, "A new approach to probabilistic rounding error analysis",
 * SIAM J. Sci. Comput. 41(5), 2019, theorem 4.2 for inner products): whatever the order and
 * grouping of the sums (a kernel's per-thread chain, split k's partial products and their
 * sum), an inner product of n terms computed with unit roundoff u is within
 * gamma(n) * sum |a_p b_p|, gamma(n) = exp(lambda sqrt(n) u + n u^2 / (1 - u)) - 1 (about
 * lambda sqrt(n) u), with probability at least 1 - 2n exp(-lambda^2 (1 - u)^2 / 2) when the
 * rounding errors are independent with mean zero, as they are for random operands of both
 * signs. n = k + 2 counts the scaling by alpha and the sum with beta * C (mag includes
 * |beta * C|); u = 2^-24. lambda = 10: a false alarm has probability below 2n e^-50 < 1e-16 per
 * entry at k = 70001, below 1e-8 over the ~1e8 entries one check-gpu checks. The former
 * tolerance, 4e-7 (k + 4) sum |a_p b_p| (sgemm_tol_linear: the deterministic worst case), grew
 * with k^2 for random operands: at k = 4096 it exceeds any single product of operands in
 * [-1, 1), so a dropped k step passed unseen. */
static double sgemm_tol(long long k, double mag) {
    const double u = 1.0 / 16777216.0, lambda = 10.0, n = (double)k + 2.0;
    return expm1(lambda * sqrt(n) * u + n * u * u / (1.0 - u)) * mag + 1e-30;
}
static double sgemm_tol_linear(long long k, double mag) { return 4e-7 * (double)(k + 4) * (mag + 1e-30) + 1e-30; }

/* C(i, j) against the float64 product: exactly for small integers, else within sgemm_tol. */
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
    double err = fabs(got - ref), tol = g->exact ? 0.0 : sgemm_tol(c->k, mag);
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
/* An operand value: uniform in [-1, 1), or (exact) an integer in -4..4. */
static float operand(int exact) { return exact ? (float)(int)floor((rnd() + 1.0) * 4.5) - 4.0f : (float)rnd(); }

/* Whether small-integer operands give an exact product (sgemm_case_checked): the products are
 * integers of at most 16 in magnitude, and every partial sum, in any order and grouping, an
 * integer of at most 16 k, exact in FP32 up to 2^24. Scaled by alpha (a power of 2: exact) and
 * summed with beta * C (beta and C integers), the result is a multiple of g = min(|alpha|, 1) of
 * at most 16 k |alpha| + 4 |beta|, exact while that is at most 2^24 g: for alpha = 1, beta = 0,
 * k up to 2^20. */
static int exact_fits(const gemm_case *c) {
    int e;
    double g = fabs(c->alpha) < 1.0 ? fabs(c->alpha) : 1.0;
    return frexpf(fabsf(c->alpha), &e) == 0.5f && c->beta == floorf(c->beta) &&
           16.0 * (double)c->k * fabs(c->alpha) + 4.0 * fabs(c->beta) <= 16777216.0 * g;
}

static void sgemm_case_checked(cudaload_backend be, const gemm_case *c, cudaStream_t stream, int sampled, int exact) {
    if (exact && c->alpha != 0.0f && !exact_fits(c))
        fail_msg("sgemm %lldx%lldx%lld alpha=%g beta=%g: small integers are not exact in FP32 there", c->m, c->n, c->k, c->alpha,
                 c->beta);
    long long ar = c->ta ? c->k : c->m, ac = c->ta ? c->m : c->k;
    long long br = c->tb ? c->n : c->k, bc = c->tb ? c->k : c->n;
    long long lda = (ar > 1 ? ar : 1) + c->pad_a, ldb = (br > 1 ? br : 1) + c->pad_b, ldc = (c->m > 1 ? c->m : 1) + c->pad_c;
    size_t na = (size_t)(lda * (ac ? ac : 1)), nb = (size_t)(ldb * (bc ? bc : 1)), nc = (size_t)(ldc * c->n);
    float *A = malloc(na * 4), *B = malloc(nb * 4), *C = malloc(nc * 4), *out = malloc(nc * 4);
    assert_true(A && B && C && out);
    for (size_t i = 0; i < na; i++) A[i] = operand(exact);
    for (size_t i = 0; i < nb; i++) B[i] = operand(exact);
    for (long long j = 0; j < c->n; j++)
        for (long long i = 0; i < ldc; i++)
            C[i + j * ldc] = i >= c->m ? SENTINEL : c->beta == 0.0f ? NAN : operand(exact);
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
    gemm_data g = {c, A, B, C, out, lda, ldb, ldc, be, exact};
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

static void sgemm_case(cudaload_backend be, const gemm_case *c, cudaStream_t stream) { sgemm_case_checked(be, c, stream, 0, 0); }

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
        /* 65535 x 64 + 100 columns: 65537 tiles of 64 x 64, more than a grid's y holds, run in
         * two launches, chunks of columns (kernels.c: the plan's launch_n) */
        {0, 0, 2, 65535LL * 64 + 100, 3, 0, 0, 1, 1.0f, 0.5f},
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
        sgemm_case_checked(CUDALOAD_BACKEND_BUNDLED, &c, NULL, fma > 1e9, 0);
        if (pad) {
            c.alpha = 0.5f, c.beta = 0.25f;
            sgemm_case_checked(CUDALOAD_BACKEND_BUNDLED, &c, NULL, fma > 1e9, 0);
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

/* Small integers (-4..4: exact_fits), every entry compared exactly with the float64 product,
 * through both backends and the four transposes: the tiles and paths of test_sgemm and
 * test_sgemm_scratch_paths (the 256 x 128 tile aligned, the 128 x 128 and one-wave 256 x 128
 * tiles unaligned, 128 x 64, split k with its sum, deep k), alpha a power of 2, beta 0 on
 * NaN-poisoned C and beta != 0. A missing or doubled k step, a wrong operand element or a
 * slice summed twice changes an entry by an integer: no tolerance hides it. Products of more
 * than 2^28 multiply-adds are sampled (the edge rows and columns and 4096 entries). */
static void test_sgemm_small_integers(void **state) {
    (void)state;
    SKIP_WITHOUT_GPU();
    int quick = getenv("CUDALOAD_TEST_QUICK") != NULL;
    cudaStream_t s;
    assert_int_equal(rt->cudaStreamCreate(&s), cudaSuccess);
    const gemm_case shapes[] = {
        {0, 0, 7, 7, 7, 1, 2, 3, 1.0f, -1.0f},         {0, 0, 2000, 1996, 44, 4, 8, 3, -2.0f, 0.0f},
        {0, 0, 1999, 2001, 45, 3, 1, 6, 1.0f, 2.0f},    {0, 0, 2000, 2000, 61, 1, 1, 1, 0.5f, 0.0f},
        {0, 0, 1000, 1000, 64, 4, 4, 4, 1.0f, 0.0f},    {0, 0, 512, 384, 1024, 0, 0, 0, 2.0f, 1.0f},
        {0, 0, 600, 500, 700, 1, 2, 3, 1.0f, 0.0f},     {0, 0, 256, 2048, 300, 0, 0, 1, -1.0f, 0.0f},
        {0, 0, 256, 192, 8192, 0, 0, 0, 1.0f, -3.0f},   {0, 0, 8, 240, 70001, 1, 0, 0, 1.0f, 0.0f},
        {0, 0, 1024, 1024, 1024, 0, 0, 0, 1.0f, 0.0f},
    };
    size_t nshapes = sizeof shapes / sizeof shapes[0];
    if (quick)
        print_message("under compute-sanitizer (CUDALOAD_TEST_QUICK): the bundled backend only, products of at most 2^28 "
                      "multiply-adds (the others run in the plain run)\n");
    for (size_t b = 0; b < (quick ? 1u : 2u); b++)
        for (int t = 0; t < 4; t++)
            for (size_t i = 0; i < nshapes; i++) {
                gemm_case c = shapes[i];
                c.ta = t >> 1;
                c.tb = t & 1;
                double fma = (double)c.m * (double)c.n * (double)c.k;
                if (quick && fma > 268435456.0) continue;
                sgemm_case_checked(backends[b], &c, (i % 2) ? s : NULL, fma > 268435456.0, 1);
            }
    rt->cudaStreamDestroy(s);
}

/* The checks catch a wrong product. At k = 4096 and 8192 (160 x 96, NN: split k on the GPU),
 * the product computed by cudaload_sgemm with its last k step dropped (k - 1 on the same
 * operands), its last slice of 8 (k - 8) and its last sixteenth (k - k / 16, a slice of split
 * k) is compared with the float64 product
 * of all k: on random operands the sqrt(k) bound (sgemm_tol) flags most entries, where the
 * former bound (sgemm_tol_linear) flags none for a dropped step (it exceeds any single product
 * of operands in [-1, 1)); on small integers the exact comparison flags every entry whose
 * dropped products do not cancel. The full product passes both. */
static void test_sgemm_planted_defects(void **state) {
    (void)state;
    SKIP_WITHOUT_GPU();
    assert_int_equal(cudaload_set_backend(CUDALOAD_BACKEND_BUNDLED), CUDALOAD_OK);
    const long long m = 160, n = 96;
    static const long long ks[] = {4096, 8192};
    for (size_t ki = 0; ki < 2; ki++)
        for (int exact = 0; exact < 2; exact++) {
            const long long k = ks[ki];
            size_t na = (size_t)(m * k), nb = (size_t)(k * n), nc = (size_t)(m * n);
            float *A = malloc(na * 4), *B = malloc(nb * 4), *out = malloc(nc * 4), *nan_c = malloc(nc * 4);
            double *ref = calloc(nc, sizeof(double)), *mag = calloc(nc, sizeof(double));
            assert_true(A && B && out && nan_c && ref && mag);
            for (size_t i = 0; i < na; i++) A[i] = operand(exact);
            for (size_t i = 0; i < nb; i++) B[i] = operand(exact);
            for (size_t i = 0; i < nc; i++) nan_c[i] = NAN;
            for (long long j = 0; j < n; j++) /* the product of all k, column by column */
                for (long long p = 0; p < k; p++) {
                    double b = B[p + j * k];
                    for (long long i = 0; i < m; i++) {
                        double ab = (double)A[i + p * m] * b;
                        ref[i + j * m] += ab, mag[i + j * m] += fabs(ab);
                    }
                }
            float *dA = dalloc(na * 4), *dB = dalloc(nb * 4), *dC = dalloc(nc * 4);
            h2d(dA, A, na * 4);
            h2d(dB, B, nb * 4);
            /* none; the last step; the last slice of BK; the last sixteenth (a slice of split k: on
             * the H100 160 x 96 x k is split in 16) */
            const long long dropped[] = {0, 1, 8, k / 16};
            for (size_t d = 0; d < 4; d++) {
                h2d(dC, nan_c, nc * 4);
                cudaload_status st = cudaload_sgemm(CUDALOAD_OP_N, CUDALOAD_OP_N, m, n, k - dropped[d], 1.0f, dA, m, dB, k, 0.0f,
                                                    dC, m, NULL);
                if (st != CUDALOAD_OK)
                    fail_msg("sgemm k=%lld: %s: %s", k - dropped[d], cudaload_status_name(st), cudaload_last_error());
                assert_int_equal(rt->cudaDeviceSynchronize(), cudaSuccess);
                d2h(out, dC, nc * 4);
                long long flagged = 0, flagged_linear = 0;
                for (size_t e = 0; e < nc; e++) {
                    double err = fabs(out[e] - ref[e]);
                    flagged += exact ? err != 0.0 : !(err <= sgemm_tol(k, mag[e]));
                    flagged_linear += !(err <= sgemm_tol_linear(k, mag[e]));
                }
                print_message("k = %lld, %s operands, last %lld k dropped: %lld of %zu entries flagged (%s), %lld by the "
                              "former bound\n",
                              k, exact ? "small-integer" : "random", dropped[d], flagged, nc, exact ? "exact" : "sqrt(k) bound",
                              flagged_linear);
                if (dropped[d] == 0 && (flagged || flagged_linear))
                    fail_msg("k = %lld: the full product is flagged in %lld entries (%lld by the former bound)", k, flagged,
                             flagged_linear);
                /* expected: a dropped step, random: P(|a b| > sgemm_tol) ~ 0.83 at 4096, 0.65 at 8192; small
                 * integers: P(a b != 0) = (8/9)^2 ~ 0.79; a dropped slice of 8: ~0.9 and more */
                if (dropped[d] && flagged * 2 < (long long)nc)
                    fail_msg("k = %lld, %s operands, last %lld k dropped: only %lld of %zu entries flagged", k,
                             exact ? "small-integer" : "random", dropped[d], flagged, nc);
                if (dropped[d] == 1 && !exact) assert_int_equal(flagged_linear, 0); /* what the former bound missed */
            }
            rt->cudaFree(dA), rt->cudaFree(dB), rt->cudaFree(dC);
            free(A), free(B), free(out), free(nan_c), free(ref), free(mag);
        }
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
    sgemm_case_checked(CUDALOAD_BACKEND_BUNDLED, &wide, NULL, 1, 0);
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
        cmocka_unit_test(test_sgemm_small_integers),
        cmocka_unit_test(test_sgemm_planted_defects),
        cmocka_unit_test(test_sgemm_shape_classes),
        cmocka_unit_test(test_calls_under_another_context),
    };
    return cmocka_run_group_tests_name("gpu_kernels", tests, setup, NULL);
}
