/*
 * probe_internal.h -- what the parts of the probe's report share (not an interface of the
 * probe or of the Python package: those use probe_report.h). The report is built in steps,
 * one file each:
 *
 *   probe_gather.c    what libcudaload found: the libraries, roots, devices, kernels, build
 *                     flags, NVRTC, and the environment checks
 *   probe_selftest.c  SAXPY and SGEMM on the GPU against a CPU reference
 *   probe_diagnose.c  what is wrong (problems) and what fixes it (fixes); the exit code
 *   probe_render.c    the text and JSON writers
 *   probe_report.c    the entry points (probe_report.h), in that order
 */
#ifndef CUDALOAD_PROBE_INTERNAL_H
#define CUDALOAD_PROBE_INTERNAL_H

#include <limits.h>
#include <stddef.h>
#include <stdio.h>

#include "cudaload.h"
#include "probe_fields.h"
#include "probe_report.h"

#define SCHEMA_VERSION 1
#define MAX_DEVICES 16
#define MAX_NOTES 32

typedef struct device {
    char name[256];
    int cc_major, cc_minor;
    size_t memory;
    int has_sass, would_jit;
    cudaload_status runnable;
    char why[512];
} device;

typedef struct test_result {
    int ran, pass;
    double max_rel_err, ms, rate; /* GB/s or TFLOP/s */
    const char *backend;
    char error[512];
} test_result;

#define PROBE_MAX_LIBS 128
struct probe_report {
    int find_only, selftest, color, code;
    cudaload_status init_status;
    char init_error[16384];
    probe_lib lib[PROBE_MAX_LIBS]; /* the core four (by their ids), then the libraries asked for */
    size_t n_libs;
    const cudaload_root *roots;
    size_t n_roots;
    int ndev;
    cudaload_status dev_status;
    char dev_error[1024];
    device dev[MAX_DEVICES];
    cudaload_kernels_info kinfo;
    test_result saxpy, sgemm;
    int selftest_attempted;
    char *warnings[MAX_NOTES];
    int n_warnings;
    char *fixes[MAX_NOTES];
    int n_fixes;
    char *problems[MAX_NOTES]; /* one line per thing that is wrong, for the Result section */
    int n_problems;
    int system_search;         /* the system search is in scope (CUDALOAD_SOURCES) */
    char include_dirs[2][PATH_MAX];
    char lib_dirs[2][PATH_MAX];   /* cudart's directory, cuBLAS's when another one */
    char origin_rel[2][PATH_MAX]; /* those directories relative to a site-packages root, or "" */
    char link_flags[4 * PATH_MAX];
    char nvrtc[PATH_MAX]; /* libnvrtc beside the runtime, when present (reported, not loaded) */
};
typedef struct probe_report probe;

/* The info of library i of the report (for the core four, i is the id: CUDALOAD_LIB_CUDART). */
#define LIB(p, i) (&(p)->lib[i].info)

/* probe_gather.c */
extern const char *const probe_env_names[];
extern const size_t probe_n_env_names;
void probe_gather(probe *p, const cudaload_lib *extra, size_t n_extra);
void probe_checks(probe *p);

/* probe_selftest.c */
void probe_selftest(probe *p);

/* probe_diagnose.c */
void probe_note(char **list, int *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
const char *probe_pip_pair(int major);
void probe_requirement(cudaload_lib lib, int major, const char *package, char *out, size_t n);
const cudaload_root *probe_wheel_root(const probe *p);
void probe_diagnose(probe *p);
int probe_exit_code_of(const probe *p);

/* probe_render.c */
void probe_render_text(FILE *o, const probe *p);
void probe_render_json(FILE *o, const probe *p);

#endif
