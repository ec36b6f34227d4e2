/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_call.c -- per-call cost of a CUDA call made through a libcudaload table, against
 * the same call linked directly (ns per call, and the ratio).
 *
 * The calls are cheap CPU-side entry points that need no GPU and no driver, so the bench
 * runs anywhere libcudart (and libcublas) can be loaded:
 *   cudart.cudaRuntimeGetVersion(&v)                  -- the cudart table
 *   cublas.cublasGetProperty(MAJOR_VERSION, &v)       -- the cuBLAS table
 * Both return after a few instructions, so the call path (table indirection vs PLT) is a
 * large share of what is timed: the worst case for the table, which is what we want.
 *
 * Two builds of this file:
 *   bench_call          (libcudaload.a only) times the table path in a process where
 *                       libcudaload found and dlopened the libraries itself. Info only.
 *   bench_call_direct   (-DBENCH_DIRECT, also linked -l:libcudart.so.13 with a RUNPATH;
 *                       with -DBENCH_DIRECT_CUBLAS also -l:libcublas.so.13) times the table
 *                       path and the direct call in the same process, interleaved. This is
 *                       the ratio that is judged.
 *
 * Why the pairing is fair: in bench_call_direct the libraries are loaded once, by ld.so
 * from DT_NEEDED; libcudaload's init finds them already loaded (RTLD_NOLOAD, source
 * "loaded") and its table points at the very same functions the direct calls reach
 * through the PLT. Same process, same file, same code, same loop shape (each loop is its
 * own noinline function; the result goes to a volatile sink so nothing is optimised
 * away). The table pointer is fetched once and kept, which is how the table is meant to be
 * used; "accessor per call" (cudaload_cudart()->fn each time) is shown for information.
 * Repetitions alternate order (A,B then B,A) so drift and order effects cancel; the
 * reported numbers are medians over the repetitions.
 *
 * usage: bench_call[_direct] <root> <driver|-> [reps] [calls]
 * Output, one line per item, tab-separated:
 *   INFO  <key> <value>
 *   RESULT <name> <table_ns> <direct_ns|-> <accessor_ns|->
 *   SKIP  <name> <reason>
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cudaload.h"
#include "cudaload_tables.h"
#include "bench_clock.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_REPS 1001

static volatile int sink;
static const cudaload_cudart_table *g_rt;
static const cudaload_cublas_table *g_blas;

/* ---- the loops: one per variant, identical shape ---- */

static __attribute__((noinline)) void cudart_table(long n) {
    const cudaload_cudart_table *t = g_rt;
    int v = 0;
    for (long i = 0; i < n; i++) {
        cudaError_t e = t->cudaRuntimeGetVersion(&v);
        sink = v + (int)e;
    }
}

static __attribute__((noinline)) void cudart_accessor(long n) {
    int v = 0;
    for (long i = 0; i < n; i++) {
        cudaError_t e = cudaload_cudart()->cudaRuntimeGetVersion(&v);
        sink = v + (int)e;
    }
}

static __attribute__((noinline)) void cublas_table(long n) {
    const cudaload_cublas_table *t = g_blas;
    int v = 0;
    for (long i = 0; i < n; i++) {
        cublasStatus_t e = t->cublasGetProperty(MAJOR_VERSION, &v);
        sink = v + (int)e;
    }
}

static __attribute__((noinline)) void cublas_accessor(long n) {
    int v = 0;
    for (long i = 0; i < n; i++) {
        cublasStatus_t e = cudaload_cublas()->cublasGetProperty(MAJOR_VERSION, &v);
        sink = v + (int)e;
    }
}

#ifdef BENCH_DIRECT
static __attribute__((noinline)) void cudart_direct(long n) {
    int v = 0;
    for (long i = 0; i < n; i++) {
        cudaError_t e = cudaRuntimeGetVersion(&v);
        sink = v + (int)e;
    }
}

#ifdef BENCH_DIRECT_CUBLAS
static __attribute__((noinline)) void cublas_direct(long n) {
    int v = 0;
    for (long i = 0; i < n; i++) {
        cublasStatus_t e = cublasGetProperty(MAJOR_VERSION, &v);
        sink = v + (int)e;
    }
}
#endif /* BENCH_DIRECT_CUBLAS */
#endif /* BENCH_DIRECT */

/* ---- timing ---- */

typedef void (*loop_fn)(long n);

static double time_per_call(loop_fn f, long calls) {
    double t0 = now_ns();
    f(calls);
    return (now_ns() - t0) / (double)calls;
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

/* Runs the variants (NULL entries skipped) reps times, rotating the order each
 * repetition, and writes the median ns/call of each into med[]. */
static void run_variants(loop_fn fns[3], int reps, long calls, double med[3]) {
    static double samples[3][MAX_REPS];
    int nf = 0;
    loop_fn order[3];
    int idx[3];
    for (int k = 0; k < 3; k++)
        if (fns[k]) {
            order[nf] = fns[k];
            idx[nf++] = k;
        }
    for (int k = 0; k < nf; k++) order[k](calls / 10); /* warm-up: caches, branch predictors */
    for (int r = 0; r < reps; r++)
        for (int j = 0; j < nf; j++) {
            int k = (r % 2 == 0) ? j : nf - 1 - j; /* A,B,C then C,B,A */
            samples[idx[k]][r] = time_per_call(order[k], calls);
        }
    for (int k = 0; k < 3; k++) med[k] = -1.0;
    for (int k = 0; k < nf; k++) med[idx[k]] = median(samples[idx[k]], reps);
}

static void print_result(const char *name, const double med[3]) {
    printf("RESULT\t%s\t%.4f\t", name, med[0]);
    if (med[1] >= 0) printf("%.4f\t", med[1]); else printf("-\t");
    if (med[2] >= 0) printf("%.4f\n", med[2]); else printf("-\n");
}

static void print_lib(cudaload_lib lib) {
    cudaload_library_info info;
    memset(&info, 0, sizeof info);
    info.size = sizeof info;
    if (cudaload_get_library_info(lib, &info) == CUDALOAD_OK && info.loaded && info.path)
        printf("INFO\t%s\t%s (source %s, version %d)\n", cudaload_lib_name(lib), info.path,
               cudaload_source_name(info.source), info.version);
}

int main(int argc, char **argv) {
    if (argc < 3 || argc > 5) {
        fprintf(stderr, "usage: %s <root> <driver|-> [reps] [calls]\n", argv[0]);
        return 2;
    }
    int reps = argc > 3 ? atoi(argv[3]) : 31;
    long calls = argc > 4 ? atol(argv[4]) : 1000000L;
    if (reps < 1 || reps > MAX_REPS || calls < 10) {
        fprintf(stderr, "bench_call: reps must be 1..%d and calls >= 10\n", MAX_REPS);
        return 2;
    }

    const char *roots[1] = {argv[1]};
    cudaload_options o;
    cudaload_options_init(&o);
    o.roots = roots;
    o.n_roots = 1;
    o.sources = CUDALOAD_SOURCE_BIT(CUDALOAD_SOURCE_CALLER) | CUDALOAD_SOURCE_BIT(CUDALOAD_SOURCE_SYSTEM);
    o.flags = CUDALOAD_FLAG_IGNORE_ENV;
    if (strcmp(argv[2], "-") == 0) o.flags |= CUDALOAD_FLAG_DRIVER_OPTIONAL;
    cudaload_status st = cudaload_init(&o);
    if (st != CUDALOAD_OK || !(g_rt = cudaload_cudart())) {
        fprintf(stderr, "bench_call: cudaload_init: %s\n%s\n", cudaload_status_name(st), cudaload_last_error());
        return 1;
    }
#ifdef BENCH_DIRECT
    printf("INFO\tbuild\tdirect (table and direct call in one process)\n");
    Dl_info dl;
    if (dladdr((void *)cudaRuntimeGetVersion, &dl) && dl.dli_fname)
        printf("INFO\tdirect-linked cudart\t%s\n", dl.dli_fname);
#ifdef BENCH_DIRECT_CUBLAS
    if (dladdr((void *)cublasGetProperty, &dl) && dl.dli_fname)
        printf("INFO\tdirect-linked cublas\t%s\n", dl.dli_fname);
#else
    printf("SKIP\tcublas.cublasGetProperty direct\tbuilt without -DBENCH_DIRECT_CUBLAS -l:libcublas.so.13\n");
#endif
#else
    printf("INFO\tbuild\ttable only (libcudaload loaded the libraries)\n");
#endif
    printf("INFO\treps x calls\t%d x %ld\n", reps, calls);
    print_lib(CUDALOAD_LIB_CUDART);

    double med[3];
    loop_fn rt[3] = {cudart_table, NULL, cudart_accessor};
#ifdef BENCH_DIRECT
    rt[1] = cudart_direct;
#endif
    run_variants(rt, reps, calls, med);
    print_result("cudart.cudaRuntimeGetVersion", med);

    st = cudaload_load_cublas();
    if (st != CUDALOAD_OK || !(g_blas = cudaload_cublas())) {
        printf("SKIP\tcublas.cublasGetProperty\tcudaload_load_cublas: %s\n", cudaload_status_name(st));
        fprintf(stderr, "%s\n", cudaload_last_error());
    } else {
        print_lib(CUDALOAD_LIB_CUBLAS);
        loop_fn bl[3] = {cublas_table, NULL, cublas_accessor};
#ifdef BENCH_DIRECT_CUBLAS
        bl[1] = cublas_direct;
#endif
        run_variants(bl, reps, calls, med);
        print_result("cublas.cublasGetProperty", med);
    }
    fflush(stdout);
    return 0;
}
