/*
 * cudaload-probe -- tell a user exactly which CUDA libraries libcudaload searched, found,
 * took or skipped and why, whether the driver and the GPU really run, and how to build
 * against what was found. Text (default) or JSON (--json, schema in docs/probe.md).
 * The report itself (gathering, diagnosis, self-test, both writers) is tools/probe_report.c,
 * which the Python package's extension compiles too.
 *
 * Exit codes (docs/probe.md):
 *   0  driver, cudart and cuBLAS usable and, with a GPU, the self-test passed
 *   1  a required library (cudart, cublasLt or cuBLAS) was not found or cannot be used
 *   2  the libraries are there, but there is no driver or no device
 *   3  the self-test failed
 *   4  usage error
 */
#define _GNU_SOURCE
#include "cudaload.h"
#include "probe_report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f) {
    fprintf(f,
            "usage: cudaload-probe [--json] [--root DIR]... [--find-only] [--no-selftest]\n"
            "                      [--quiet] [--help] [--version]\n"
            "  --json          machine-readable report (schema: docs/probe.md)\n"
            "  --root DIR      search DIR first (a site-packages or library dir), like the\n"
            "                  roots the Python package passes; repeatable\n"
            "  --find-only     locate the libraries without loading any of them\n"
            "  --no-selftest   skip the SAXPY/SGEMM self-test on the GPU\n"
            "  --quiet         print nothing, usage errors included; the exit code tells\n"
            "Exit: 0 ok, 1 library missing, 2 no driver or no device, 3 self-test failed,\n"
            "4 usage error. The loader's environment applies (docs/search-order.md):\n"
            "CUDALOAD_PATH, CUDALOAD_{CUDART,CUBLAS,CUBLASLT,DRIVER}_PATH,\n"
            "CUDALOAD_CUDA_MAJOR, CUDALOAD_SOURCES, CUDALOAD_DEBUG.\n"
            "Colour only on a terminal, and never with NO_COLOR set.\n");
}

static const char **roots; /* the --root arguments, freed at exit */
static void free_roots(void) { free(roots); }

int main(int argc, char **argv) {
    int json = 0, find_only = 0, selftest = 1, quiet = 0;
    roots = calloc((size_t)argc + 1, sizeof *roots);
    atexit(free_roots);
    size_t n_roots = 0;
    if (!roots) return PROBE_EXIT_USAGE;
    /* --quiet first, wherever it stands, so that it silences the usage errors too (the word
     * after --root is that root's name, not a flag) */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--root") == 0) i++;
        else if (strcmp(argv[i], "--quiet") == 0) quiet = 1;
    }
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--root") == 0 && i + 1 < argc) roots[n_roots++] = argv[++i];
        else if (strncmp(argv[i], "--root=", 7) == 0) roots[n_roots++] = argv[i] + 7;
        else if (strcmp(argv[i], "--json") == 0) json = 1;
        else if (strcmp(argv[i], "--find-only") == 0) find_only = 1;
        else if (strcmp(argv[i], "--no-selftest") == 0) selftest = 0;
        else if (strcmp(argv[i], "--quiet") == 0) quiet = 1;
        else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return PROBE_EXIT_OK;
        } else if (strcmp(argv[i], "--version") == 0) {
            printf("cudaload-probe %s\n", cudaload_version_string());
            return PROBE_EXIT_OK;
        } else {
            if (!quiet) {
                fprintf(stderr, "cudaload-probe: unknown or incomplete argument '%s'\n", argv[i]);
                usage(stderr);
            }
            return PROBE_EXIT_USAGE;
        }
    }
    for (size_t i = 0; i < n_roots; i++)
        if (roots[i][0] != '/') {
            if (!quiet) fprintf(stderr, "cudaload-probe: --root %s: give an absolute path\n", roots[i]);
            return PROBE_EXIT_USAGE;
        }
    cudaload_options opts;
    cudaload_options_init(&opts);
    opts.roots = roots;
    opts.n_roots = n_roots;
    opts.flags = CUDALOAD_FLAG_LOAD_CUBLAS | CUDALOAD_FLAG_DRIVER_OPTIONAL | (find_only ? CUDALOAD_FLAG_FIND_ONLY : 0);
    cudaload_status st = cudaload_init(&opts);
    const char *init_error = st != CUDALOAD_OK ? cudaload_last_error() : NULL;
    if (st == CUDALOAD_ERROR_INVALID_OPTION || st == CUDALOAD_ERROR_INVALID_ARGUMENT) {
        if (!quiet) fprintf(stderr, "cudaload-probe: %s\n", init_error);
        return PROBE_EXIT_USAGE;
    }
    probe_report *r = probe_report_collect(st, init_error, find_only, selftest);
    if (!r) {
        if (!quiet) fprintf(stderr, "cudaload-probe: out of memory\n");
        return PROBE_EXIT_LIB_MISSING;
    }
    int code = probe_report_exit_code(r);
    if (!quiet && json) probe_report_json(r, stdout);
    else if (!quiet) probe_report_text(r, stdout, isatty(STDOUT_FILENO) && !getenv("NO_COLOR"));
    probe_report_free(r);
    return code;
}
