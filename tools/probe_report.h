/* SPDX-License-Identifier: Apache-2.0 */
/*
 * probe_report.h -- the probe's report: gathered once after cudaload_init(), written as text
 * or as JSON (schema: docs/probe.md). Shared by cudaload-probe (tools/cudaload-probe.c) and
 * the Python package's extension (python-shim: cudaload.probe(), python -m cudaload), so
 * both give the same report from the same code: gathered (probe_gather.c), diagnosed
 * (probe_diagnose.c), written (probe_render.c), a library's fields from one list
 * (probe_fields.h).
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
    PROBE_EXIT_USAGE = 4        /* usage error: the CLI's own, or an invalid CUDALOAD_* value or option */
};

typedef struct probe_report probe_report;

/* What the report is about, and for whom. */
typedef struct probe_request {
    cudaload_status init_status; /* what cudaload_init() returned (whatever it was) */
    const char *init_error;      /* cudaload_last_error() right after it; NULL or "" when it succeeded */
    int find_only;               /* nothing was loaded (CUDALOAD_FLAG_FIND_ONLY): no device is queried */
    int selftest;                /* run the SAXPY/SGEMM self-test when a GPU, cudart and cuBLAS are there */
    const cudaload_lib *libs;    /* catalogue libraries to report too, after the core four (the caller
                                    searched them: cudaload_load_library or cudaload_find_library) */
    size_t n_libs;
    const char *python;          /* NULL: the report is cudaload-probe's; else the Python interpreter it is
                                    for: its commands are `<python> -m pip`, `python -m cudaload` */
} probe_request;

/* Gathers the report (after cudaload_init()), runs the self-test when asked, diagnoses.
 * Returns NULL when out of memory. */
probe_report *probe_report_collect(const probe_request *rq);

/* The exit code the report gives (PROBE_EXIT_*). */
int probe_report_exit_code(const probe_report *r);

/* The text report (80 columns; ANSI colours when color is 1). */
void probe_report_text(probe_report *r, FILE *out, int color);

/* The JSON report: one object, no trailing newline (docs/probe.md). */
void probe_report_json(const probe_report *r, FILE *out);

void probe_report_free(probe_report *r);

/* The fix lines the report would give for these libraries (the advisor's fixes, merged: one pip
 * command per CUDA major), and with devices those for a driver that shows no device, worded for
 * python as in probe_request (NULL: cudaload-probe). Commands are in `backquotes`. Each line is
 * malloc'd (the caller frees it); at most max; returns how many. Searches nothing. */
size_t probe_fix_lines(const char *python, const cudaload_lib *libs, size_t n, int devices, char **lines, size_t max);

/* The report's warnings about the caller roots the search could not use (after cudaload_init():
 * one that does not exist, is not a directory or cannot be examined), worded as the report's
 * Warnings are, for python as in probe_request: for the modes that make no report (--cflags,
 * --libs, --parts, --cuda-root). Each line is malloc'd (the caller frees it); at most max;
 * returns how many. */
size_t probe_root_warning_lines(const char *python, char **lines, size_t max);

#endif
