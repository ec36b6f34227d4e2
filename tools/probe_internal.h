/* SPDX-License-Identifier: Apache-2.0 */
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

typedef struct test_result {
    int ran, pass;
    double max_rel_err, ms, rate; /* GB/s or TFLOP/s */
    const char *backend;
    char error[512];
} test_result;

typedef struct device {
    char name[256];
    char pci_bus_id[32]; /* "0000:18:00.0": which physical GPU this ordinal is (CUDA_VISIBLE_DEVICES) */
    int cc_major, cc_minor;
    size_t memory;
    int has_sass, would_jit;
    cudaload_status runnable;
    char why[512];
    test_result saxpy, sgemm; /* the self-test on this device (the backend the process uses) */
} device;

#define PROBE_MAX_LIBS 128
#define MAX_LLP 64

/* An LD_LIBRARY_PATH directory holding a SONAME of a library reported. */
typedef struct llp_hit {
    int dir;                  /* index into llp_dirs */
    size_t lib;               /* index into lib[] */
    char file[PATH_MAX + 64]; /* dir/SONAME */
    int same;                 /* it is the very file libcudaload took (symbolic links resolved) */
} llp_hit;

/* A library file, or its directory, that users other than its owner may write. */
typedef struct writable_file {
    char path[PATH_MAX];
    int is_dir;
    unsigned mode, gid;
    char holding[512]; /* a directory: the libraries taken from it ("cudart, cublasLt") */
} writable_file;

/* A prefix variable (VIRTUAL_ENV, CONDA_PREFIX, CUDA_HOME, CUDA_PATH) set to a relative path:
 * the search ignores it. */
typedef struct relative_var {
    const char *name, *value;
} relative_var;

/* A caller root (--root, or a directory the embedding program gave) that the search could not
 * use: nothing was searched there, so the libraries came from elsewhere, if anywhere. A warning,
 * as data (JSON "root_warnings"); probe_diagnose.c words it once. */
typedef enum root_warning_code {
    ROOT_WARN_NOT_FOUND,       /* nothing at that path */
    ROOT_WARN_NOT_A_DIRECTORY, /* a file (or another non-directory) */
    ROOT_WARN_UNREADABLE       /* it cannot be examined: err says why (EACCES on a component, ELOOP) */
} root_warning_code;
typedef struct root_warning {
    size_t root; /* index into roots */
    root_warning_code code;
    int err; /* ROOT_WARN_UNREADABLE: the system's error number (on Windows its error code); else 0 */
} root_warning;
const char *probe_root_warning_name(root_warning_code code);

/* A fix for libraries that failed: the advisor's (cudaload_fix_at), merged across them. */
#define MAX_PLAN 16
typedef struct plan_item {
    cudaload_fix_kind kind;
    int major, branch;
    const char *setting;
    const cudaload_library_info *lib; /* the first library it is for */
    char reqs[1024];                  /* PIP_INSTALL: pip requirements, space-separated */
    char libs[512];                   /* the libraries it is for, space-separated */
    int runs;                         /* PIP_INSTALL: 1 the driver runs this major, 0 it does not,
                                         -1 there is no driver to ask */
} plan_item;

struct probe_report {
    /* the request */
    int find_only, selftest, color, code;
    char *python; /* NULL: the report is for cudaload-probe; else for this Python interpreter */
    cudaload_status init_status;
    char init_error[16384];
    /* gathered (probe_gather.c) */
    probe_lib lib[PROBE_MAX_LIBS]; /* the core four (by their ids), then the libraries asked for */
    size_t n_libs;
    const cudaload_root *roots;
    size_t n_roots;
    int system_search; /* the system search is in scope (CUDALOAD_SOURCES) */
    const char *env[PROBE_MAX_LIBS + 16]; /* the variables reported (their names: static strings) */
    int n_env;
    int ndev;
    cudaload_status dev_status;
    char dev_error[1024];
    device dev[MAX_DEVICES];
    cudaload_kernels_info kinfo;
    char include_dirs[2][PATH_MAX];
    char lib_dirs[2][PATH_MAX];   /* cudart's directory, cuBLAS's when another one */
    char origin_rel[2][PATH_MAX]; /* those directories relative to a site-packages root, or "" */
    char link_flags[4 * PATH_MAX];
    char nvrtc[PATH_MAX]; /* libnvrtc beside the runtime, when present (reported, not loaded) */
    /* the environment checks (probe_gather.c): facts, worded by probe_diagnose.c */
    char *llp;                      /* a copy of LD_LIBRARY_PATH, cut at its colons */
    const char *llp_dirs[MAX_LLP];  /* its directories, in order */
    int n_llp_dirs;
    llp_hit llp_hits[MAX_LLP];
    int n_llp_hits;
    writable_file writable[2 * MAX_LLP];
    int n_writable;
    relative_var relative[4];
    int n_relative;
    root_warning root_warnings[MAX_NOTES];
    int n_root_warnings;
    /* the self-test (probe_selftest.c): on every device, in dev[i].saxpy and .sgemm, with the
     * backend the process uses (auto: bundled when built); then, on device 0: */
    test_result saxpy_cublas, sgemm_cublas; /* cuBLAS too, when loaded and the first pass ran bundled */
    int selftest_attempted;
    const char *selftest_skipped;         /* why no self-test ran although a device is there, or NULL */
    /* the diagnosis (probe_diagnose.c) */
    char *warnings[MAX_NOTES];
    int n_warnings;
    char *problems[MAX_NOTES]; /* one line per thing that is wrong, for the Result section */
    int n_problems;
    char *fixes[MAX_NOTES];
    int n_fixes;
    plan_item plan[MAX_PLAN]; /* the libraries' fixes as data (JSON "fix_plan") */
    size_t n_plan;
};
typedef struct probe_report probe;

/* The info of library i of the report (for the core four, i is the id: CUDALOAD_LIB_CUDART). */
#define LIB(p, i) (&(p)->lib[i].info)

/* probe_gather.c */
void probe_gather(probe *p, const cudaload_lib *extra, size_t n_extra);
void probe_checks(probe *p);
void probe_check_roots(probe *p); /* the caller roots the search could not use (in probe_checks) */
size_t probe_shell_word(char *out, size_t n, size_t len, const char *s);

/* probe_selftest.c */
void probe_selftest(probe *p);
/* The self-test's results in order: SAXPY and SGEMM of each device, then device 0's cuBLAS
 * pass; *name ("SGEMM (cublas)") and *dev when not NULL. */
int probe_selftest_count(const probe *p);
const test_result *probe_selftest_at(const probe *p, int i, const char **name, int *dev);

/* probe_diagnose.c */
void probe_note(char **list, int *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void probe_diagnose(probe *p);
void probe_word_roots(probe *p); /* the root warnings' words (in probe_diagnose) */
int probe_exit_code_of(const probe *p);

/* probe_render.c */
void probe_render_text(FILE *o, const probe *p);
void probe_render_json(FILE *o, const probe *p);

#endif
