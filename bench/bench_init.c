/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_init.c -- loader cost, one measurement per process.
 *
 * What it measures (milliseconds, CLOCK_MONOTONIC, one number "%.4f" on stdout):
 *
 *   floor-init   <driver|-|probe> <cudart>
 *       dlopen(driver, RTLD_NOW|RTLD_LOCAL) + dlopen(cudart, RTLD_NOW|RTLD_LOCAL) of the
 *       absolute files libcudaload takes. With no driver: "-" times cudart only; "probe"
 *       also times one dlopen("libcuda.so.1") by SONAME, which fails: the least any loader
 *       must do to learn that there is no driver (a full ld.so search: cache, default dirs).
 *   init         <root> <driver|->
 *       cudaload_init() with roots = {root}, sources = caller|system (system is where
 *       libcuda.so.1 comes from), CUDALOAD_FLAG_IGNORE_ENV, and CUDALOAD_FLAG_DRIVER_OPTIONAL
 *       when the driver argument is "-". Ready = driver + cudart loaded, tables filled, gated.
 *   tables       <root> <driver|->
 *       untimed: cudaload_init() as in "init"; timed: the tables' first ask,
 *       cudaload_driver() (with a driver) and cudaload_cudart(): the generated entries the
 *       walk leaves to it (the driver's through cuGetProcAddress, cudart's by dlsym).
 *   init-tables  <root> <driver|->
 *       "init" and "tables" timed together: what a program that asks for both tables pays.
 *   floor-cublas <driver|-|probe> <cudart> <cublasLt> <cublas>
 *       untimed: dlopen driver + cudart (the state libcudaload is in after init);
 *       timed:   dlopen cublasLt + dlopen cublas.
 *   cublas       <root> <driver|->
 *       untimed: cudaload_init() as in "init"; timed: cudaload_load_cublas() alone.
 *
 * -d (after -v, if any) turns on libcudaload's trace (CUDALOAD_FLAG_DEBUG) on stderr and reads the
 * environment (CUDALOAD_DEBUG=time: each line with its microseconds), to see where the time of a
 * step goes; never in a timed comparison.
 * -v (first argument) prints what was loaded to stderr, one "path <lib> <file>" line per
 * library (plus "source"/"version" lines for libcudaload's modes), for the driver script.
 *
 * Why the pairing is fair: both sides run in the same binary (same startup, same libc, the
 * library linked statically in both), in a fresh process each, so no dlopen is ever served
 * from an in-process cache; the OS page cache is warm for both after the first run (the
 * script discards warm-up runs and interleaves floor and ours). The floor opens exactly
 * the files libcudaload opened (the script reads them from a -v run), with the same flags,
 * so the difference is the loader's own work: the search, the ELF checks, the RTLD_NOLOAD
 * probes, the dlsym of the tables and the version gate. For cuBLAS both sides start from
 * the same state (driver + cudart already loaded) and time only the cuBLAS step.
 * Without a driver there is no file to open; the script then judges against the "probe"
 * floor (cudart + one failed SONAME lookup of libcuda.so.1) and shows the "-" floor too.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cudaload.h"
#include "cudaload_tables.h" /* the table accessors */

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int verbose;
static int trace; /* -d: CUDALOAD_FLAG_DEBUG, libcudaload's trace on stderr (to place the time) */

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int usage(void) {
    fprintf(stderr,
            "usage: bench_init [-v] [-d] floor-init <driver|-|probe> <cudart>\n"
            "       bench_init [-v] init <root> <driver|->\n"
            "       bench_init [-v] tables <root> <driver|->\n"
            "       bench_init [-v] init-tables <root> <driver|->\n"
            "       bench_init [-v] floor-cublas <driver|-|probe> <cudart> <cublasLt> <cublas>\n"
            "       bench_init [-v] cublas <root> <driver|->\n");
    return 2;
}

/* dlopen an absolute file the way libcudaload does; reports the path ld.so recorded. */
static void *open_abs(const char *path) {
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "bench_init: dlopen %s: %s\n", path, dlerror());
        return NULL;
    }
    return h;
}

/* The driver argument: an absolute file, "-" (none) or "probe" (dlopen by SONAME, which is
 * expected to fail on a host without a driver). Returns 0, or 1 when an absolute file failed. */
static int open_driver(const char *arg, void **h) {
    *h = NULL;
    if (strcmp(arg, "-") == 0) return 0;
    if (strcmp(arg, "probe") == 0) {
        *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        return 0;
    }
    return (*h = open_abs(arg)) ? 0 : 1;
}

static void print_handle(const char *label, void *h) {
    struct link_map *lm = NULL;
    if (verbose && h && dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm)
        fprintf(stderr, "path %s %s\n", label, lm->l_name);
}

static void print_info(cudaload_lib lib) {
    cudaload_library_info info;
    memset(&info, 0, sizeof info);
    info.size = sizeof info;
    if (!verbose || cudaload_get_library_info(lib, &info) != CUDALOAD_OK) return;
    const char *name = cudaload_lib_name(lib);
    if (info.loaded && info.path) {
        fprintf(stderr, "path %s %s\n", name, info.path);
        fprintf(stderr, "source %s %s\n", name, cudaload_source_name(info.source));
        fprintf(stderr, "version %s %d\n", name, info.version);
    } else {
        fprintf(stderr, "missing %s %s\n", name, cudaload_status_name(info.status));
    }
}

static cudaload_status do_init(const char *root, const char *driver) {
    const char *roots[1] = {root};
    cudaload_options o;
    cudaload_options_init(&o);
    o.roots = roots;
    o.n_roots = 1;
    o.sources = CUDALOAD_SOURCE_BIT(CUDALOAD_SOURCE_CALLER) | CUDALOAD_SOURCE_BIT(CUDALOAD_SOURCE_SYSTEM);
    o.flags = CUDALOAD_FLAG_IGNORE_ENV;
    if (strcmp(driver, "-") == 0) o.flags |= CUDALOAD_FLAG_DRIVER_OPTIONAL;
    if (trace) o.flags = (o.flags | CUDALOAD_FLAG_DEBUG) & ~CUDALOAD_FLAG_IGNORE_ENV; /* CUDALOAD_DEBUG=time read */
    return cudaload_init(&o);
}

static int fail(const char *what, cudaload_status st) {
    fprintf(stderr, "bench_init: %s: %s\n%s\n", what, cudaload_status_name(st), cudaload_last_error());
    return 1;
}

/* The tables' first ask: 0, or 1 when a table is not handed out. */
static int ask_tables(const char *driver) {
    if (strcmp(driver, "-") != 0 && !cudaload_driver()) return fail("cudaload_driver", CUDALOAD_ERROR_NO_DRIVER);
    if (!cudaload_cudart()) return fail("cudaload_cudart", CUDALOAD_ERROR_NOT_FOUND);
    return 0;
}

int main(int argc, char **argv) {
    int a = 1;
    if (a < argc && strcmp(argv[a], "-v") == 0) {
        verbose = 1;
        a++;
    }
    if (a < argc && strcmp(argv[a], "-d") == 0) {
        trace = 1;
        a++;
    }
    if (a >= argc) return usage();
    const char *mode = argv[a++];
    int n = argc - a;
    char **arg = argv + a;
    double t0, t1;

    if (strcmp(mode, "floor-init") == 0 && n == 2) {
        void *d, *r;
        t0 = now_ms();
        if (open_driver(arg[0], &d)) return 1;
        if (!(r = open_abs(arg[1]))) return 1;
        t1 = now_ms();
        print_handle("cuda", d);
        print_handle("cudart", r);
    } else if (strcmp(mode, "init") == 0 && n == 2) {
        t0 = now_ms();
        cudaload_status st = do_init(arg[0], arg[1]);
        t1 = now_ms();
        if (st != CUDALOAD_OK) return fail("cudaload_init", st);
        print_info(CUDALOAD_LIB_DRIVER);
        print_info(CUDALOAD_LIB_CUDART);
    } else if ((strcmp(mode, "tables") == 0 || strcmp(mode, "init-tables") == 0) && n == 2) {
        int both = strcmp(mode, "init-tables") == 0;
        t0 = now_ms();
        cudaload_status st = do_init(arg[0], arg[1]);
        if (st != CUDALOAD_OK) return fail("cudaload_init", st);
        if (!both) t0 = now_ms();
        if (ask_tables(arg[1])) return 1;
        t1 = now_ms();
    } else if (strcmp(mode, "floor-cublas") == 0 && n == 4) {
        void *d, *r, *lt, *b;
        if (open_driver(arg[0], &d)) return 1;
        if (!(r = open_abs(arg[1]))) return 1;
        t0 = now_ms();
        if (!(lt = open_abs(arg[2]))) return 1;
        if (!(b = open_abs(arg[3]))) return 1;
        t1 = now_ms();
        print_handle("cuda", d);
        print_handle("cudart", r);
        print_handle("cublasLt", lt);
        print_handle("cublas", b);
    } else if (strcmp(mode, "cublas") == 0 && n == 2) {
        cudaload_status st = do_init(arg[0], arg[1]);
        if (st != CUDALOAD_OK) return fail("cudaload_init", st);
        t0 = now_ms();
        st = cudaload_load_cublas();
        t1 = now_ms();
        if (st != CUDALOAD_OK) return fail("cudaload_load_cublas", st);
        for (int lib = 0; lib < CUDALOAD_LIB_COUNT_; lib++) print_info((cudaload_lib)lib);
    } else {
        return usage();
    }
    printf("%.4f\n", t1 - t0);
    return 0;
}
