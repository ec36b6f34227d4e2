/*
 * probe_report.h -- the probe's report: gathered once after cudaload_init(), written as text
 * or as JSON (schema: docs/probe.md). Shared by cudaload-probe (tools/cudaload-probe.c) and
 * the Python package's extension (python-shim: cudaload.probe(), python -m cudaload), so
 * both give the same report from the same code.
 *
 * Not thread-safe (the text writer keeps a small static pool of escaped strings): one
 * thread at a time, as the probe and the extension (under the GIL) use it.
 */
#ifndef CUDALOAD_PROBE_REPORT_H
#define CUDALOAD_PROBE_REPORT_H

#include <stdio.h>

#include "cudaload.h"

/* Exit codes of cudaload-probe, also the report's "exit_code". */
enum {
    PROBE_EXIT_OK = 0,          /* driver, cudart and cuBLAS usable; with a GPU the self-test passed */
    PROBE_EXIT_LIB_MISSING = 1, /* cudart, cublasLt or cuBLAS not found or unusable */
    PROBE_EXIT_NO_GPU = 2,      /* the libraries are there, but no driver or no device */
    PROBE_EXIT_SELFTEST = 3,    /* the self-test failed */
    PROBE_EXIT_USAGE = 4        /* usage error (the CLI's own) */
};

typedef struct probe_report probe_report;

/* Gathers the report. Call after cudaload_init() (whatever it returned); init_status is
 * what it returned and init_error the cudaload_last_error() text right after it (NULL or ""
 * when it succeeded). find_only: nothing was loaded (CUDALOAD_FLAG_FIND_ONLY), so no device
 * is queried. selftest: run the SAXPY/SGEMM self-test when a GPU, cudart and cuBLAS are
 * there. Returns NULL when out of memory. */
probe_report *probe_report_collect(cudaload_status init_status, const char *init_error, int find_only, int selftest);
/* The same, reporting these catalogue libraries too (searched by the caller before: loaded or
 * found), after the core four. */
probe_report *probe_report_collect_libs(cudaload_status init_status, const char *init_error, int find_only, int selftest,
                                        const cudaload_lib *extra, size_t n_extra);

/* The exit code the report gives (PROBE_EXIT_*). */
int probe_report_exit_code(const probe_report *r);

/* The text report (80 columns; ANSI colours when color is 1). */
void probe_report_text(probe_report *r, FILE *out, int color);

/* The JSON report: one object, no trailing newline (docs/probe.md). */
void probe_report_json(const probe_report *r, FILE *out);

void probe_report_free(probe_report *r);

#endif
