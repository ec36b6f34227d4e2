/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cuda_compat.c -- forward compatibility: a cuda-compat libcuda (the driver's user-mode part of
 * a newer branch, for an older kernel module) in place of the system's driver, where that driver
 * does not run the runtime found. Decided by init after its walk (cudaload.c), before the
 * driver's table is published; the other copies are recorded as the driver's candidates, each
 * with why it is not the one running.
 */
#define _GNU_SOURCE
#include "cudaload_tables.h"
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define G cl_ctx

/* The CUDA version the runtime needs from the driver: the one taken's, else the newest major
 * skipped because the driver is too old; 0 when there is no runtime to go by. */
static int cl_runtime_need(void) {
    const cl_lib_state *rt = &G.lib[CUDALOAD_LIB_CUDART];
    if (rt->status == CUDALOAD_OK) return cl_cuda_version_of(cl_row_of(CUDALOAD_LIB_CUDART), rt->version);
    int need = 0;
    for (size_t i = 0; i < rt->n_cands; i++)
        if (rt->details[i].reason == CUDALOAD_REASON_DRIVER_TOO_OLD && rt->details[i].major * 1000 > need)
            need = rt->details[i].major * 1000;
    return need;
}

/* The forward-compatibility libcuda copies on this machine, in order, each once (resolved, not
 * the driver in use): $CUDA_HOME (or $CUDA_PATH)/compat and compat/lib (older NGC images lay it
 * out so), /usr/local/cuda/compat and compat/lib, and $CONDA_PREFIX/cuda-compat (conda's
 * cuda-compat package puts its libcuda.so.1 there). n of them into real[] (malloc'd) and src[]. */
#define CL_COMPAT_MAX 5
static int cl_compat_copies(char *real[CL_COMPAT_MAX], cudaload_source src[CL_COMPAT_MAX]) {
    const char *home = cl_config_env(&G.cfg, "CUDA_HOME");
    if (!home || !cl_plat_is_absolute(home)) home = cl_config_env(&G.cfg, "CUDA_PATH");
    const char *conda = cl_config_env(&G.cfg, "CONDA_PREFIX");
    /* each place as a prefix and the directory under it that holds the driver's SONAME (its
     * catalogue row's): joined by cl_path_join, never truncated */
    const char *prefix[CL_COMPAT_MAX], *sub[CL_COMPAT_MAX];
    cudaload_source from[CL_COMPAT_MAX];
    int n_dirs = 0, n = 0;
    if (cl_plat_is_absolute(home)) {
        prefix[n_dirs] = home, sub[n_dirs] = "compat", from[n_dirs++] = CUDALOAD_SOURCE_CUDA_HOME;
        prefix[n_dirs] = home, sub[n_dirs] = "compat/lib", from[n_dirs++] = CUDALOAD_SOURCE_CUDA_HOME;
    }
    if (!cl_plat_is_absolute(home) || strcmp(home, "/usr/local/cuda") != 0) { /* listed once */
        prefix[n_dirs] = "/usr/local/cuda", sub[n_dirs] = "compat", from[n_dirs++] = CUDALOAD_SOURCE_CUDA_HOME;
        prefix[n_dirs] = "/usr/local/cuda", sub[n_dirs] = "compat/lib", from[n_dirs++] = CUDALOAD_SOURCE_CUDA_HOME;
    }
    if (cl_plat_is_absolute(conda))
        prefix[n_dirs] = conda, sub[n_dirs] = "cuda-compat", from[n_dirs++] = CUDALOAD_SOURCE_CONDA;
    const char *soname = cl_row_of(CUDALOAD_LIB_DRIVER)->flavor[0].soname;
    char *in_use = NULL;
    for (int i = 0; i < n_dirs; i++) {
        char rel[64]; /* "compat/lib/libcuda.so.1": the catalogue's SONAME under a fixed directory */
        snprintf(rel, sizeof rel, "%s/%s", sub[i], soname);
        char *path = cl_path_join(prefix[i], rel);
        if (!path) cl_oom();
        /* a prefix too long for a file the system opens: a driver candidate that says so */
        int too_long = path && cl_path_too_long(CUDALOAD_LIB_DRIVER, path, from[i], 0);
        /* one stat first: realpath walks every component, and these are mostly absent */
        char *r = path && !too_long && cl_plat_lexists(path) ? cl_plat_realpath(path) : NULL;
        free(path);
        if (r && !in_use) in_use = cl_plat_realpath(G.lib[CUDALOAD_LIB_DRIVER].path ? G.lib[CUDALOAD_LIB_DRIVER].path : "");
        int dup = !r || (in_use && strcmp(r, in_use) == 0);
        for (int k = 0; r && !dup && k < n; k++) dup = strcmp(real[k], r) == 0;
        if (dup) {
            free(r);
            continue;
        }
        real[n] = r, src[n++] = from[i];
    }
    free(in_use);
    return n;
}

/* A compat copy's version, from its file name (libcuda.so.580.95.05): the text after the
 * driver's SONAME less its number ("libcuda.so."). */
static const char *cl_compat_version(const char *real) {
    const char *soname = cl_row_of(CUDALOAD_LIB_DRIVER)->flavor[0].soname, *dot = strrchr(soname, '.');
    size_t stem = dot ? (size_t)(dot - soname) + 1 : strlen(soname);
    const char *base = strrchr(real, '/');
    return base && strncmp(base + 1, soname, stem) == 0 ? base + 1 + stem : "?";
}

/* Takes the compat copy at real in place of the system's driver, which this walk loaded (it runs
 * CUDA drv_version, the runtime needs need). The copy answers cuDriverGetVersion first, while the
 * system's driver is still there: one that does not reach need is closed again (COMPAT_TOO_OLD).
 * Its table is then filled in scratch and its checks made (cl_driver_usable): one that fails them
 * is closed and the system's driver stays, untouched. Only then is the system's driver closed;
 * when it stays in the process (not unloadable), it is kept, with its table as it was, and the
 * copy closed (COMPAT_BLOCKED): cudart would find it by its SONAME, never the copy. Otherwise the
 * copy's table is committed. Init publishes the driver's table after this decision, never before
 * (nothing reads it until then). 1 when the copy runs. */
static int cl_compat_switch(const char *real, cudaload_source src, int need) {
    cl_lib_state *ls = &G.lib[CUDALOAD_LIB_DRIVER];
    const char *ver = cl_compat_version(real);
    int drv_version = G.drv.version;
    cl_buf why = {0};
    cl_why w = {0};
    void *h = cl_dlopen(CUDALOAD_LIB_DRIVER, real, &why);
    int v = 0;
    if (h) {
        cl_foreign_begin(CUDALOAD_LIB_DRIVER, "cuDriverGetVersion");
        void *sym = cl_plat_sym(h, "cuDriverGetVersion", NULL);
        int (*get)(int *) = NULL;
        memcpy(&get, &sym, sizeof get); /* a data pointer to a function pointer, as the tables do */
        if (!get || get(&v) != CUDA_SUCCESS) v = 0;
        cl_foreign_end();
    }
    if (!h) cl_why_set(&w, CUDALOAD_REASON_DLOPEN_FAILED, 0, 0, 0, "%s", cl_buf_str(&why));
    else if (v < need) cl_why_set(&w, CUDALOAD_REASON_COMPAT_TOO_OLD, 0, v, need, "%s", ver);
    if (w.reason != CUDALOAD_REASON_NONE) {
        cl_record(CUDALOAD_LIB_DRIVER, real, src, CUDALOAD_ERROR_NOT_ATTEMPTED, &w);
        if (h) cl_dlclose(CUDALOAD_LIB_DRIVER, h);
        cl_buf_free(&why);
        cl_why_free(&w);
        return 0;
    }
    int version = 0;
    /* the copy's table in scratch and its checks; failed: recorded and closed, the system's
     * driver goes on as it was */
    if (cl_driver_usable(CUDALOAD_LIB_DRIVER, h, real, src, &version) != CUDALOAD_OK) {
        cl_debug("cuda-compat %s: not taken (its checks failed)", real);
        cl_buf_free(&why);
        return 0;
    }
    size_t sys = ls->n_cands;
    for (size_t i = 0; i < ls->n_cands; i++)
        if (ls->cands[i].result == CUDALOAD_OK) sys = i;
    char *sys_path = cl_strdup(ls->path);
    void *sys_handle = ls->handle;
    cl_dlclose(CUDALOAD_LIB_DRIVER, sys_handle);
    cl_foreign_begin(CUDALOAD_LIB_DRIVER, "dlopen (RTLD_NOLOAD)");
    void *still = sys_path ? cl_plat_open_if_loaded(sys_path) : NULL;
    cl_foreign_end();
    int switched = 0;
    if (still) {
        /* the same mapping, so the same table (left as it was); the copy would be a second
         * libcuda nobody calls */
        ls->handle = still;
        cl_dlclose(CUDALOAD_LIB_DRIVER, h);
        cl_why_set(&w, CUDALOAD_REASON_COMPAT_BLOCKED, 0, drv_version, need, "%s", ver);
        cl_record(CUDALOAD_LIB_DRIVER, real, src, CUDALOAD_ERROR_NOT_ATTEMPTED, &w);
    } else {
        /* the branch is the kernel module's, whichever libcuda runs: kept as read (/proc or NVML) */
        char *kernel_branch = G.drv.branch;
        G.drv.branch = NULL;
        size_t before = ls->n_cands;
        cl_driver_take(CUDALOAD_LIB_DRIVER, h, real, src, version); /* commits the copy's table */
        if (kernel_branch) {
            free(G.drv.branch);
            G.drv.branch = kernel_branch;
            G.drv.branch_major = atoi(kernel_branch);
        }
        cl_why_set(&w, CUDALOAD_REASON_COMPAT_TAKEN, 0, drv_version, need, "%s", ver);
        if (ls->n_cands > before) cl_record_rewrite(CUDALOAD_LIB_DRIVER, ls->n_cands - 1, CUDALOAD_OK, &w);
        if (sys < ls->n_cands) {
            cl_why_free(&w);
            cl_why_set(&w, CUDALOAD_REASON_COMPAT_REPLACED, 0, drv_version, need, "%s", real);
            cl_record_rewrite(CUDALOAD_LIB_DRIVER, sys, CUDALOAD_ERROR_DRIVER_TOO_OLD, &w);
        }
        switched = 1;
    }
    cl_debug("cuda-compat %s: %s", real, switched ? "taken" : "not taken");
    free(sys_path);
    cl_buf_free(&why);
    cl_why_free(&w);
    return switched;
}

/* Forward compatibility, used when it helps: the system's driver does not run the runtime found
 * (a major it does not run: the runtime was skipped; or a newer minor: taken under minor version
 * compatibility) and a compat copy newer than the kernel module is there (one of the same or an
 * older branch fails with 803). The first such copy whose cuDriverGetVersion reaches the runtime's
 * need is taken (cl_compat_switch). Never with CUDALOAD_COMPAT=never, in find-only mode, for a
 * driver the process had loaded before or the caller named (CUDALOAD_DRIVER_PATH), or when the
 * kernel module's branch is unknown. On a GPU without forward compatibility the copy's cuInit
 * fails with 804: cudaload_device_cu_result() and the probe say so. 1 when the driver changed. */
int cl_use_compat(void) {
    cl_lib_state *ls = &G.lib[CUDALOAD_LIB_DRIVER];
    int need = cl_runtime_need();
    if (!G.drv.loaded || ls->status != CUDALOAD_OK || cl_find_only() || ls->source == CUDALOAD_SOURCE_OVERRIDE ||
        G.drv.branch_major <= 0 || !need || need <= G.drv.version || G.cfg.compat_never)
        return 0;
    char *real[CL_COMPAT_MAX];
    cudaload_source src[CL_COMPAT_MAX];
    int n = cl_compat_copies(real, src), switched = 0;
    for (int i = 0; i < n && !switched; i++) {
        if (atoi(cl_compat_version(real[i])) <= G.drv.branch_major) continue; /* 803: cl_note_compat says so */
        if (ls->source == CUDALOAD_SOURCE_LOADED) {
            /* the process runs that driver already: cudart finds it by its SONAME */
            cl_why w = {0};
            cl_why_set(&w, CUDALOAD_REASON_COMPAT_BLOCKED, 0, G.drv.version, need, "%s", cl_compat_version(real[i]));
            cl_record(CUDALOAD_LIB_DRIVER, real[i], src[i], CUDALOAD_ERROR_NOT_ATTEMPTED, &w);
            cl_why_free(&w);
            break;
        }
        switched = cl_compat_switch(real[i], src[i], need);
    }
    for (int i = 0; i < n; i++) free(real[i]);
    return switched;
}

/* The compat copies not already weighed by cl_use_compat, each recorded as a candidate of the
 * driver with why it is not what runs: not newer than the kernel module (803), not needed (the
 * driver runs the runtime's CUDA), or available (CUDALOAD_COMPAT=never, find-only, the branch
 * unknown, or a driver named by the caller). Called after init's walk, with the driver loaded
 * (its branch is the kernel module's). */
void cl_note_compat(void) {
    if (!G.drv.loaded || G.lib[CUDALOAD_LIB_DRIVER].status != CUDALOAD_OK) return;
    char *real[CL_COMPAT_MAX];
    cudaload_source src[CL_COMPAT_MAX];
    int n = cl_compat_copies(real, src), need = cl_runtime_need();
    for (int i = 0; i < n; i++) {
        if (cl_already_candidate(CUDALOAD_LIB_DRIVER, real[i])) continue;
        const char *ver = cl_compat_version(real[i]);
        int major = atoi(ver);
        cl_why w = {0};
        if (major > 0 && G.drv.branch_major > 0 && major <= G.drv.branch_major)
            cl_why_set(&w, CUDALOAD_REASON_COMPAT_NOT_NEWER, 0, major, G.drv.branch_major, "%s", ver);
        else if (need && need <= G.drv.version)
            cl_why_set(&w, CUDALOAD_REASON_COMPAT_NOT_NEEDED, 0, G.drv.version, need, "%s", ver);
        else
            cl_why_set(&w, CUDALOAD_REASON_COMPAT_AVAILABLE, 0, G.drv.version, need, "%s", ver);
        cl_record(CUDALOAD_LIB_DRIVER, real[i], src[i], CUDALOAD_ERROR_NOT_ATTEMPTED, &w);
        cl_debug("cuda-compat %s: %s", real[i], cudaload_reason_name(w.reason));
        cl_why_free(&w);
    }
    for (int i = 0; i < n; i++) free(real[i]);
}
