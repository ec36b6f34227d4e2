/*
 * probe_diagnose.c -- what is wrong (one problem line each) and what fixes it, from what was
 * gathered; the exit code.
 */
#define _GNU_SOURCE
#include "probe_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Appends a note unless the same text is already there. */
void probe_note(char **list, int *n, const char *fmt, ...) {
    if (*n >= MAX_NOTES) return;
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0) s = NULL;
    va_end(ap);
    for (int i = 0; s && i < *n; i++)
        if (strcmp(list[i], s) == 0) {
            free(s);
            return;
        }
    if (s) list[(*n)++] = s;
}

/* The pip commands for a CUDA major's runtime + cuBLAS, and for cuBLAS alone. CUDA 13 wheels
 * have no -cuXX suffix: pin the major so that a later major is not pulled in. */
const char *probe_pip_pair(int major) {
    return major == 12 ? "pip install nvidia-cuda-runtime-cu12 nvidia-cublas-cu12"
                       : "pip install \"nvidia-cuda-runtime==13.*\" \"nvidia-cublas==13.*\"";
}
static const char *pip_cublas(int major) {
    return major == 12 ? "pip install nvidia-cublas-cu12" : "pip install \"nvidia-cublas==13.*\"";
}
#define SITE_HINT                                                                                  \
    "if the wheels are installed already, point the probe at their environment: activate it "      \
    "(VIRTUAL_ENV), or run, with that environment's python3: `cudaload-probe --root \"$(python3 -c " \
    "'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])')\"`"

/* A pip requirement for package, from the fix of lib for a CUDA major: pinned to that major
 * ("nvidia-cublas==13.*") when the name does not say it (no -cuNN suffix) and the package's own
 * version is the CUDA version: the runtime's and cuBLAS's wheels (nvidia-cuda-runtime 13.0.96,
 * nvidia-cublas 13.1.0.3). cuFFT's (12.x in CUDA 13) and the -cuNN wheels are not pinned. */
void probe_requirement(cudaload_lib lib, int major, const char *package, char *out, size_t n) {
    size_t len = strlen(package), d = len;
    while (d > 0 && package[d - 1] >= '0' && package[d - 1] <= '9') d--;
    int suffixed = d < len && d >= 3 && strncmp(package + d - 3, "-cu", 3) == 0;
    int cuda_versioned = lib == CUDALOAD_LIB_CUDART || lib == CUDALOAD_LIB_CUBLASLT || lib == CUDALOAD_LIB_CUBLAS;
    if (major > 0 && !suffixed && cuda_versioned) snprintf(out, n, "%s==%d.*", package, major);
    else snprintf(out, n, "%s", package);
}

/* The CUDA major of the driver (13 for cuDriverGetVersion 13000), 0 when no driver is loaded. */
static int driver_major(const probe *p) {
    const cudaload_library_info *d = LIB(p, CUDALOAD_LIB_DRIVER);
    return d->status == CUDALOAD_OK && d->loaded && d->version > 0 ? d->version / 1000 : 0;
}

/* A root other programs cannot see through LD_LIBRARY_PATH: a site-packages the search had. */
const cudaload_root *probe_wheel_root(const probe *p) {
    for (size_t i = 0; i < p->n_roots; i++)
        if (p->roots[i].exists && (p->roots[i].source == CUDALOAD_SOURCE_CALLER || p->roots[i].source == CUDALOAD_SOURCE_SELF ||
                                   p->roots[i].source == CUDALOAD_SOURCE_VENV))
            return &p->roots[i];
    return NULL;
}

/* The reason that best explains why lib was not taken: the first candidate refused for the
 * library's own status, else the last candidate's reason. */
static const char *lib_reason(const cudaload_library_info *l) {
    for (size_t c = 0; c < l->n_candidates; c++)
        if (l->candidates[c].result == l->status) return l->candidates[c].reason;
    if (l->n_candidates) return l->candidates[l->n_candidates - 1].reason;
    return NULL;
}

/* What is wrong (problems) and the commands that fix it (fixes), from what was gathered.
 * The library's generic fix lines are replaced by ones that know the driver's version. */
void probe_diagnose(probe *p) {
    int dmaj = driver_major(p);
    const cudaload_library_info *drv = LIB(p, CUDALOAD_LIB_DRIVER), *rt = LIB(p, CUDALOAD_LIB_CUDART);
    char dver[64] = "";
    if (dmaj) snprintf(dver, sizeof dver, "CUDA %d.%d", drv->version / 1000, drv->version % 1000 / 10);
    static const cudaload_lib order[] = {CUDALOAD_LIB_CUDART, CUDALOAD_LIB_CUBLASLT, CUDALOAD_LIB_CUBLAS, CUDALOAD_LIB_DRIVER};
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
        const cudaload_library_info *l = LIB(p, order[k]);
        if (l->status == CUDALOAD_OK || l->status == CUDALOAD_ERROR_NOT_ATTEMPTED) continue;
        const char *why = lib_reason(l);
        if (why && strncmp(why, "skipped: ", 9) == 0) why += 9;
        if (l->status == CUDALOAD_ERROR_NOT_FOUND && !why)
            why = p->system_search ? "no candidate file in the roots above, nor by the system search"
                                   : "no candidate file in the roots above (the system search is scoped out)";
        probe_note(p->problems, &p->n_problems, "%s: %s%s%s", l->name, cudaload_status_string(l->status), why ? ": " : "",
             why ? why : "");
        int major = rt->status == CUDALOAD_OK && rt->major ? rt->major : dmaj >= 13 ? 13 : 12;
        switch (l->status) {
        case CUDALOAD_ERROR_NOT_FOUND:
            if (l->lib == CUDALOAD_LIB_DRIVER) goto no_driver;
            if (l->lib != CUDALOAD_LIB_CUDART) {
                probe_note(p->fixes, &p->n_fixes, "`%s` (cuBLAS for the CUDA %d runtime taken)", pip_cublas(major), major);
            } else if (dmaj >= 13) {
                probe_note(p->fixes, &p->n_fixes, "`%s` (this driver runs %s)", probe_pip_pair(13), dver);
            } else if (dmaj == 12) {
                probe_note(p->fixes, &p->n_fixes, "`%s` (this driver runs %s; CUDA 13 needs branch >= 580)", probe_pip_pair(12), dver);
            } else if (dmaj > 0) {
                probe_note(p->fixes, &p->n_fixes, "upgrade the NVIDIA driver (it runs %s; CUDA 12 needs branch >= 525, CUDA 13 "
                     "branch >= 580), then `%s`", dver, probe_pip_pair(13));
            } else {
                probe_note(p->fixes, &p->n_fixes, "`%s` (CUDA 13, driver branch >= 580)", probe_pip_pair(13));
                probe_note(p->fixes, &p->n_fixes, "or `%s` (CUDA 12, driver branch >= 525)", probe_pip_pair(12));
            }
            probe_note(p->fixes, &p->n_fixes, SITE_HINT);
            break;
        case CUDALOAD_ERROR_DRIVER_TOO_OLD:
            if (dmaj == 12)
                probe_note(p->fixes, &p->n_fixes, "`%s` (this driver runs %s), or upgrade the NVIDIA driver to branch >= 580 "
                     "for CUDA 13", probe_pip_pair(12), dver);
            else if (dmaj > 0 && dmaj < 12)
                probe_note(p->fixes, &p->n_fixes, "upgrade the NVIDIA driver: it runs %s, and libcudaload needs CUDA 12 (branch "
                     ">= 525) or CUDA 13 (branch >= 580); no CUDA 12 or 13 wheel can run on it", dver);
            else
                probe_note(p->fixes, &p->n_fixes, "upgrade the NVIDIA driver, or install a runtime of the major it runs");
            break;
        case CUDALOAD_ERROR_MAJOR_MISMATCH:
            probe_note(p->fixes, &p->n_fixes, "`%s` (cuBLAS of the runtime's major, CUDA %d)", pip_cublas(major), major);
            break;
        case CUDALOAD_ERROR_OVERRIDE_UNUSABLE:
            probe_note(p->fixes, &p->n_fixes, "unset the CUDALOAD_*_PATH or CUDALOAD_PATH variable that names the file "
                 "refused for %s above, or point it at a usable one", l->name);
            break;
        case CUDALOAD_ERROR_NO_DRIVER:
        no_driver:
            probe_note(p->fixes, &p->n_fixes, "install the NVIDIA driver (it provides libcuda.so.1; pip wheels never do); in a "
                 "container, start it with the GPUs exposed (`docker run --gpus all`, NVIDIA Container Toolkit); or set "
                 "CUDALOAD_DRIVER_PATH to the absolute path of libcuda.so.1");
            break;
        default:
            break;
        }
    }
    /* a cuBLAS taken with no cublasLt located for it (the library reports none): libcublas
     * cannot load without it, so it is a problem, not a silent "not attempted" */
    if (LIB(p, CUDALOAD_LIB_CUBLAS)->status == CUDALOAD_OK && LIB(p, CUDALOAD_LIB_CUBLASLT)->status == CUDALOAD_ERROR_NOT_ATTEMPTED)
        probe_note(p->problems, &p->n_problems, "cublasLt: not located, while cublas was (%s): libcublas cannot be loaded "
             "without it", LIB(p, CUDALOAD_LIB_CUBLAS)->path);
    if (!p->find_only && drv->status == CUDALOAD_OK && p->dev_status != CUDALOAD_OK &&
        p->dev_status != CUDALOAD_ERROR_NOT_ATTEMPTED) {
        probe_note(p->problems, &p->n_problems, "devices: %s", p->dev_error[0] ? p->dev_error : cudaload_status_string(p->dev_status));
        const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
        if (cvd)
            probe_note(p->fixes, &p->n_fixes, "CUDA_VISIBLE_DEVICES=%s may hide the GPUs: `unset CUDA_VISIBLE_DEVICES`", cvd);
        probe_note(p->fixes, &p->n_fixes, "check that `nvidia-smi` lists a GPU; in a container, start it with the GPUs exposed "
             "(`docker run --gpus all`)");
    }
    for (int i = 0; i < p->ndev && i < MAX_DEVICES; i++)
        if (p->dev[i].runnable == CUDALOAD_ERROR_DRIVER_TOO_OLD)
            probe_note(p->warnings, &p->n_warnings, "device %d: the bundled kernels need a newer driver (%s); SAXPY and SGEMM "
                 "fall back to cuBLAS until the NVIDIA driver is upgraded", i, p->kinfo.toolkit_version >= 13000 ?
                 "branch >= 580" : "branch >= 525");
    const test_result *t[2] = {&p->saxpy, &p->sgemm};
    static const char *const tname[2] = {"SAXPY", "SGEMM"};
    for (int i = 0; p->selftest_attempted && i < 2; i++) {
        if (t[i]->error[0]) probe_note(p->problems, &p->n_problems, "self-test %s: %s", tname[i], t[i]->error);
        else if (!t[i]->pass)
            probe_note(p->problems, &p->n_problems, "self-test %s: max relative error %.3g exceeds 1e-5 (backend %s)", tname[i],
                 t[i]->max_rel_err, t[i]->backend);
    }
    /* fix lines of the library's own message for anything not handled above */
    if (p->n_fixes == 0 && p->init_error[0]) {
        const char *s = p->init_error;
        while ((s = strstr(s, "fix: ")) != NULL) {
            s += 5;
            size_t len = strcspn(s, "\n");
            probe_note(p->fixes, &p->n_fixes, "%.*s", (int)len, s);
            s += len;
        }
    }
}

int probe_exit_code_of(const probe *p) {
    int extra_missing = 0;
    for (size_t i = CUDALOAD_LIB_COUNT_; i < p->n_libs; i++) extra_missing |= LIB(p, i)->status != CUDALOAD_OK;
    if (LIB(p, CUDALOAD_LIB_CUDART)->status != CUDALOAD_OK || LIB(p, CUDALOAD_LIB_CUBLASLT)->status != CUDALOAD_OK ||
        LIB(p, CUDALOAD_LIB_CUBLAS)->status != CUDALOAD_OK || extra_missing)
        return PROBE_EXIT_LIB_MISSING;
    if (LIB(p, CUDALOAD_LIB_DRIVER)->status != CUDALOAD_OK || (!p->find_only && (p->dev_status != CUDALOAD_OK || p->ndev < 1)))
        return PROBE_EXIT_NO_GPU;
    if (p->selftest_attempted && (!p->saxpy.pass || !p->sgemm.pass || p->saxpy.error[0] || p->sgemm.error[0]))
        return PROBE_EXIT_SELFTEST;
    return PROBE_EXIT_OK;
}
