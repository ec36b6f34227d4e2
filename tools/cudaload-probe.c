/*
 * cudaload-probe -- tell a user which CUDA libraries libcudaload searched, found, took or
 * skipped, and why.
 *
 * This is the first, text-only probe (roots, libraries with every candidate, driver,
 * devices). Exit codes (docs/api.md):
 *   0  driver, cudart and cuBLAS loaded and at least one device
 *   1  a required library (cudart or cuBLAS) was not found or could not be used
 *   2  the libraries were found, but there is no driver or no device
 *   3  usage error
 */
#define _GNU_SOURCE
#include "cudaload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { EXIT_FOUND_ALL = 0, EXIT_LIB_MISSING = 1, EXIT_NO_GPU = 2, EXIT_USAGE = 3 };

static void usage(FILE *f) {
    fprintf(f,
            "usage: cudaload-probe [--root DIR]... [--find-only] [--quiet] [--help] [--version]\n"
            "  --root DIR    search DIR first (a site-packages dir or a library dir), like the\n"
            "                roots the Python package passes; repeatable\n"
            "  --find-only   locate the libraries without loading any of them\n"
            "  --quiet       print nothing; the exit code tells (0 ok, 1 library missing,\n"
            "                2 no driver or no device, 3 usage)\n"
            "Environment: CUDALOAD_PATH, CUDALOAD_{CUDART,CUBLAS,CUBLASLT,DRIVER}_PATH,\n"
            "CUDALOAD_CUDA_MAJOR, CUDALOAD_SOURCES, CUDALOAD_DEBUG (docs/search-order.md).\n");
}

static void print_version(const char *label, int v, int cublas_style) {
    if (v <= 0) return;
    if (cublas_style)
        printf("  %-10s %d.%d.%d\n", label, v / 10000, (v / 100) % 100, v % 100);
    else
        printf("  %-10s %d.%d (%d)\n", label, v / 1000, (v % 1000) / 10, v);
}

static void print_library(cudaload_lib lib) {
    cudaload_library_info info = {.size = sizeof info};
    if (cudaload_get_library_info(lib, &info) != CUDALOAD_OK) return;
    printf("%s\n", info.name);
    if (info.status == CUDALOAD_OK) {
        printf("  %-10s %s\n", "status", info.loaded ? "loaded" : "found (not loaded)");
        printf("  %-10s %s\n", "path", info.path);
        printf("  %-10s %s\n", "soname", info.soname);
        printf("  %-10s %s%s\n", "source", cudaload_source_name(info.source),
               info.already_loaded ? " (already loaded in the process)" : "");
        print_version("version", info.version, lib == CUDALOAD_LIB_CUBLAS || lib == CUDALOAD_LIB_CUBLASLT);
        if (info.driver_branch) printf("  %-10s %s\n", "branch", info.driver_branch);
    } else {
        printf("  %-10s %s (%s)\n", "status", cudaload_status_string(info.status), cudaload_status_name(info.status));
    }
    for (size_t i = 0; i < info.n_candidates; i++) {
        const cudaload_candidate *c = &info.candidates[i];
        printf("  %s %s [%s]\n      %s\n", c->result == CUDALOAD_OK ? "+" : "-", c->path,
               cudaload_source_name(c->source), c->reason);
    }
}

int main(int argc, char **argv) {
    const char **roots = calloc((size_t)argc, sizeof *roots);
    size_t n_roots = 0;
    int find_only = 0, quiet = 0;
    if (!roots) return EXIT_USAGE;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--root") == 0 && i + 1 < argc) {
            roots[n_roots++] = argv[++i];
        } else if (strcmp(argv[i], "--find-only") == 0) {
            find_only = 1;
        } else if (strcmp(argv[i], "--quiet") == 0) {
            quiet = 1;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            free(roots);
            return 0;
        } else if (strcmp(argv[i], "--version") == 0) {
            printf("cudaload-probe %s\n", cudaload_version_string());
            free(roots);
            return 0;
        } else {
            fprintf(stderr, "cudaload-probe: unknown or incomplete argument '%s'\n", argv[i]);
            usage(stderr);
            free(roots);
            return EXIT_USAGE;
        }
    }
    cudaload_options opts;
    cudaload_options_init(&opts);
    opts.roots = roots;
    opts.n_roots = n_roots;
    opts.flags = CUDALOAD_FLAG_LOAD_CUBLAS | CUDALOAD_FLAG_DRIVER_OPTIONAL | (find_only ? CUDALOAD_FLAG_FIND_ONLY : 0);
    cudaload_status st = cudaload_init(&opts);
    if (st == CUDALOAD_ERROR_INVALID_OPTION || st == CUDALOAD_ERROR_INVALID_ARGUMENT) {
        if (!quiet) fprintf(stderr, "cudaload-probe: %s\n", cudaload_last_error());
        free(roots);
        return EXIT_USAGE;
    }
    cudaload_library_info rt = {.size = sizeof rt}, blas = {.size = sizeof blas}, drv = {.size = sizeof drv};
    cudaload_get_library_info(CUDALOAD_LIB_CUDART, &rt);
    cudaload_get_library_info(CUDALOAD_LIB_CUBLAS, &blas);
    cudaload_get_library_info(CUDALOAD_LIB_DRIVER, &drv);
    int devices = 0;
    cudaload_status dev_st = find_only ? CUDALOAD_ERROR_NOT_ATTEMPTED : cudaload_device_count(&devices);
    const char *dev_err = dev_st == CUDALOAD_OK ? "" : cudaload_last_error();

    int code = EXIT_FOUND_ALL;
    if (rt.status != CUDALOAD_OK || blas.status != CUDALOAD_OK)
        code = EXIT_LIB_MISSING;
    else if (drv.status != CUDALOAD_OK || (!find_only && dev_st != CUDALOAD_OK))
        code = EXIT_NO_GPU;
    if (quiet) {
        free(roots);
        return code;
    }

    printf("libcudaload %s%s\n\n", cudaload_version_string(), find_only ? " (find-only: nothing loaded)" : "");
    size_t n = 0;
    const cudaload_root *r = cudaload_roots(&n);
    printf("search roots, in order%s\n", n ? "" : ": none (only the system search)");
    for (size_t i = 0; i < n; i++)
        printf("  %2zu. %-9s %s%s\n", i + 1, cudaload_source_name(r[i].source), r[i].path,
               r[i].exists ? "" : "  (does not exist)");
    printf("  then the system search (dlopen by SONAME)\n\n");
    for (int lib = 0; lib < CUDALOAD_LIB_COUNT_; lib++) {
        print_library((cudaload_lib)lib);
        printf("\n");
    }
    printf("devices\n");
    if (dev_st == CUDALOAD_OK)
        printf("  %d CUDA device(s)\n", devices);
    else if (dev_st == CUDALOAD_ERROR_NOT_ATTEMPTED)
        printf("  not queried (find-only)\n");
    else
        printf("  none: %s\n", dev_err);
    printf("\nresult: %s\n", code == EXIT_FOUND_ALL     ? "ok"
                             : code == EXIT_LIB_MISSING ? "a required library is missing (exit 1)"
                                                        : "libraries found, but no driver or no device (exit 2)");
    free(roots);
    return code;
}
