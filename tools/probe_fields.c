/* SPDX-License-Identifier: Apache-2.0 */
/*
 * probe_fields.c -- the one list of a library's fields (probe_fields.h): for each, its JSON
 * key, its value, and how the text report shows it.
 */
#define _GNU_SOURCE
#include "probe_fields.h"

#include "probe_platform.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- text helpers: the fields', and the report's (probe_gather.c, probe_diagnose.c) ---- */

size_t probe_appendf(char *out, size_t n, size_t len, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    /* past the end: only the length is counted (a NULL buffer of size 0 is valid C11) */
    int w = len < n ? vsnprintf(out + len, n - len, fmt, ap) : vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    return len + (w > 0 ? (size_t)w : 0);
}

/* A pip requirement for package, from the fix of lib for a CUDA major: pinned to that major
 * ("nvidia-cublas==13.*") when the name does not say it (no -cuNN suffix) and the package's own
 * version is the CUDA version, as lib's catalogue row says (pip_cuda_version: the runtime's,
 * cuBLAS's, NVRTC's and nvJitLink's wheels, nvidia-cuda-runtime 13.0.96, nvidia-cublas 13.1.0.3).
 * cuFFT's (12.x in CUDA 13) and the -cuNN wheels are not pinned. */
void probe_requirement(cudaload_lib lib, int major, const char *package, char *out, size_t n) {
    if (strpbrk(package, "<>=")) { /* a requirement already (a floor's "nvidia-cudnn-cu13>=9.10") */
        snprintf(out, n, "%s", package);
        return;
    }
    size_t len = strlen(package), d = len;
    while (d > 0 && package[d - 1] >= '0' && package[d - 1] <= '9') d--;
    int suffixed = d < len && d >= 3 && strncmp(package + d - 3, "-cu", 3) == 0;
    cudaload_catalogue_info c = {.size = sizeof c};
    int cuda_versioned = cudaload_catalogue_entry(lib, &c) == CUDALOAD_OK && c.pip_cuda_version;
    if (major > 0 && !suffixed && cuda_versioned) snprintf(out, n, "%s==%d.*", package, major);
    else snprintf(out, n, "%s", package);
}

void probe_lib_fill(cudaload_lib lib, probe_lib *out) {
    memset(out, 0, sizeof *out);
    out->info.size = sizeof out->info;
    cudaload_get_library_info(lib, &out->info);
    cudaload_fix f = {.size = sizeof f};
    size_t n = cudaload_fix_at(lib, 0, &f);
    for (size_t i = 0; i < n && out->n_fixes < PROBE_MAX_FIXES; i++) {
        cudaload_fix *dst = &out->fixes[out->n_fixes];
        dst->size = sizeof *dst;
        if (cudaload_fix_at(lib, i, dst) > i) out->n_fixes++;
    }
}

const char *probe_lib_state(const cudaload_library_info *l) {
    if (l->status == CUDALOAD_OK) return l->loaded ? "loaded" : "found";
    if (l->status == CUDALOAD_ERROR_NOT_FOUND || l->status == CUDALOAD_ERROR_NOT_ATTEMPTED) return "not_found";
    return "error";
}

const char *probe_fix_kind_name(cudaload_fix_kind kind) {
    switch (kind) {
    case CUDALOAD_FIX_PIP_INSTALL: return "pip_install";
    case CUDALOAD_FIX_UPGRADE_DRIVER: return "upgrade_driver";
    case CUDALOAD_FIX_INSTALL_DRIVER: return "install_driver";
    case CUDALOAD_FIX_CHECK_SETTING: return "check_setting";
    case CUDALOAD_FIX_NONE: break;
    }
    return "none";
}

static probe_value v_null(void) { return (probe_value){PV_NULL, NULL, 0}; }
static probe_value v_str(const char *s) { return s ? (probe_value){PV_STR, s, 0} : v_null(); }
static probe_value v_int(long long i) { return (probe_value){PV_INT, NULL, i}; }
static probe_value v_pos(long long i) { return i > 0 ? v_int(i) : v_null(); }
static probe_value v_bool(int b) { return (probe_value){PV_BOOL, NULL, b != 0}; }
static probe_value v_words(const char *s) { return s ? (probe_value){PV_WORDS, s, 0} : v_null(); }
static probe_value v_items(size_t n) { return (probe_value){PV_ITEMS, NULL, (long long)n}; }

static int ok(const probe_lib *l) { return l->info.status == CUDALOAD_OK; }

/* ---- the library ---- */

static probe_value get_status(const probe_lib *l, size_t k, char *b, size_t n) {
    (void)k, (void)b, (void)n;
    return v_str(probe_lib_state(&l->info));
}
static const char *show_status(const probe_lib *l, size_t k, char *b, size_t n) {
    (void)k, (void)b, (void)n;
    return ok(l) ? probe_lib_state(&l->info) : cudaload_status_string(l->info.status);
}
static probe_value get_status_code(const probe_lib *l, size_t k, char *b, size_t n) {
    (void)k, (void)b, (void)n;
    return v_str(cudaload_status_name(l->info.status));
}
static const char *show_status_code(const probe_lib *l, size_t k, char *b, size_t n) {
    (void)k;
    if (ok(l)) return "";
    snprintf(b, n, "(%s)", cudaload_status_name(l->info.status));
    return b;
}
static probe_value get_soname(const probe_lib *l, size_t k, char *b, size_t n) {
    (void)k, (void)b, (void)n;
    return v_str(ok(l) ? l->info.soname : NULL);
}
static probe_value get_major(const probe_lib *l, size_t k, char *b, size_t n) {
    (void)k, (void)b, (void)n;
    return v_pos(l->info.major);
}
static const char *show_major(const probe_lib *l, size_t k, char *b, size_t n) {
    (void)k;
    if (!ok(l) || l->info.major <= 0) return "";
    snprintf(b, n, "(CUDA %d)", l->info.major);
    return b;
}
static probe_value get_source(const probe_lib *l, size_t k, char *b, size_t n) {
    (void)k, (void)b, (void)n;
    return v_str(ok(l) ? cudaload_source_name(l->info.source) : NULL);
}
static const char *show_source(const probe_lib *l, size_t k, char *b, size_t n) {
    (void)k;
    if (!ok(l)) return "";
    snprintf(b, n, ", from %s", cudaload_source_name(l->info.source));
    return b;
}
static probe_value get_newer_than_driver(const probe_lib *l, size_t k, char *b, size_t n) {
    (void)k, (void)b, (void)n;
    return v_bool(ok(l) && l->info.newer_than_driver);
}
static probe_value get_already_loaded(const probe_lib *l, size_t k, char *b, size_t n) {
    (void)k, (void)b, (void)n;
    return v_bool(l->info.already_loaded);
}
static const char *show_already_loaded(const probe_lib *l, size_t k, char *b, size_t n) {
    (void)k, (void)b, (void)n;
    return l->info.already_loaded ? "(already loaded)" : "";
}
static probe_value get_branch(const probe_lib *l, size_t k, char *b, size_t n) {
    (void)k, (void)b, (void)n;
    return v_str(l->info.driver_branch);
}
static const char *show_branch(const probe_lib *l, size_t k, char *b, size_t n) {
    (void)k;
    if (!l->info.driver_branch) return "";
    snprintf(b, n, ", branch %s", l->info.driver_branch);
    return b;
}
static probe_value get_path(const probe_lib *l, size_t k, char *b, size_t n) {
    (void)k, (void)b, (void)n;
    return v_str(ok(l) ? l->info.path : NULL);
}
static const char *show_path(const probe_lib *l, size_t k, char *b, size_t n) {
    (void)k, (void)b, (void)n;
    return ok(l) && l->info.path ? l->info.path : "";
}
static probe_value get_version(const probe_lib *l, size_t k, char *b, size_t n) {
    (void)k, (void)b, (void)n;
    return v_pos(l->info.version);
}
/* The library's version in its own form, as its catalogue row says: the driver's, the
 * runtime's, NVRTC's as CUDA writes it (13000: CUDA 13.0); cuBLAS's, cuFFT's, cuDNN's
 * major.minor.patch (130100: 13.1.0). */
static const char *show_version(const probe_lib *l, size_t k, char *b, size_t n) {
    (void)k;
    const cudaload_library_info *i = &l->info;
    if (!ok(l)) return "";
    cudaload_catalogue_info c = {.size = sizeof c};
    int style = cudaload_catalogue_entry(i->lib, &c) == CUDALOAD_OK ? c.version_style : 0;
    if (i->version <= 0) snprintf(b, n, "%s", i->loaded ? "version unknown" : "version not read (not loaded)");
    else if (style == 2) snprintf(b, n, "%d.%d.%d", i->version / 10000, i->version / 100 % 100, i->version % 100);
    else snprintf(b, n, "CUDA %d.%d (%d)", i->version / 1000, i->version % 1000 / 10, i->version);
    return b;
}
static probe_value get_candidates(const probe_lib *l, size_t k, char *b, size_t n) {
    (void)k, (void)b, (void)n;
    return v_items(l->info.n_candidates);
}
/* The candidates are listed unless the one taken is all there is (the lines above show it). */
static const char *show_candidates(const probe_lib *l, size_t k, char *b, size_t n) {
    (void)k, (void)b, (void)n;
    return ok(l) && l->info.n_candidates == 1 ? "" : "candidates";
}
static probe_value get_fixes(const probe_lib *l, size_t k, char *b, size_t n) {
    (void)k, (void)b, (void)n;
    return v_items(l->n_fixes);
}

/* ---- a candidate ---- */

static const cudaload_candidate *cand(const probe_lib *l, size_t k) { return &l->info.candidates[k]; }
/* A system-search attempt that found no file has no path: the library names it
 * "<SONAME> (system search)". */
static int cand_absolute(const probe_lib *l, size_t k) { return probe_is_absolute(cand(l, k)->path); }

static probe_value get_c_path(const probe_lib *l, size_t k, char *b, size_t n) {
    (void)b, (void)n;
    return v_str(cand_absolute(l, k) ? cand(l, k)->path : NULL);
}
static const char *show_c_path(const probe_lib *l, size_t k, char *b, size_t n) {
    (void)b, (void)n;
    return cand(l, k)->path ? cand(l, k)->path : "";
}
/* The SONAME a system-search attempt asked the dynamic loader for: the first word of that
 * label (the candidate record has no field of its own for it). */
static probe_value get_c_soname(const probe_lib *l, size_t k, char *b, size_t n) {
    const char *p = cand(l, k)->path;
    if (cand_absolute(l, k) || !p) return v_null();
    snprintf(b, n, "%.*s", (int)strcspn(p, " "), p);
    return v_str(b);
}
static probe_value get_c_source(const probe_lib *l, size_t k, char *b, size_t n) {
    (void)b, (void)n;
    return v_str(cudaload_source_name(cand(l, k)->source));
}
static const char *show_c_source(const probe_lib *l, size_t k, char *b, size_t n) {
    snprintf(b, n, "[%s]", cudaload_source_name(cand(l, k)->source));
    return b;
}
static probe_value get_c_result(const probe_lib *l, size_t k, char *b, size_t n) {
    (void)b, (void)n;
    return v_str(cand(l, k)->result == CUDALOAD_OK ? "taken" : "skipped");
}
static const char *show_c_result(const probe_lib *l, size_t k, char *b, size_t n) {
    (void)b, (void)n;
    return cand(l, k)->result == CUDALOAD_OK ? "+" : "-";
}
static probe_value get_c_status_code(const probe_lib *l, size_t k, char *b, size_t n) {
    (void)b, (void)n;
    return v_str(cudaload_status_name(cand(l, k)->result));
}
static probe_value get_c_reason_code(const probe_lib *l, size_t k, char *b, size_t n) {
    (void)b, (void)n;
    return v_str(l->info.details ? cudaload_reason_name(l->info.details[k].reason) : NULL);
}
/* The code of a candidate skipped, before its reason ("DRIVER_TOO_OLD: skipped: ..."); a
 * candidate taken has its + mark. */
static const char *show_c_reason_code(const probe_lib *l, size_t k, char *b, size_t n) {
    if (!l->info.details || cand(l, k)->result == CUDALOAD_OK) return "";
    snprintf(b, n, "%s:", cudaload_reason_name(l->info.details[k].reason));
    return b;
}
static probe_value get_c_reason(const probe_lib *l, size_t k, char *b, size_t n) {
    (void)b, (void)n;
    return v_str(cand(l, k)->reason);
}

static const probe_field candidate_fields[] = {
    {"path", get_c_path, NULL, PROBE_TEXT_HEAD, 1, 0, show_c_path},
    {"soname", get_c_soname, NULL, PROBE_TEXT_NONE, 0, 0, NULL}, /* the text's path says it */
    {"source", get_c_source, NULL, PROBE_TEXT_HEAD, 1, 0, show_c_source},
    {"result", get_c_result, NULL, PROBE_TEXT_MARK, 0, 0, show_c_result},
    {"status_code", get_c_status_code, NULL, PROBE_TEXT_NONE, 0, 0, NULL},
    {"reason_code", get_c_reason_code, NULL, PROBE_TEXT_LINE, 0, 0, show_c_reason_code},
    {"reason", get_c_reason, NULL, PROBE_TEXT_CONT, 0, 0, NULL},
    {NULL, NULL, NULL, PROBE_TEXT_NONE, 0, 0, NULL},
};

/* ---- a fix (the advisor's, as data; the text report words them in its Result section) ---- */

static probe_value get_f_kind(const probe_lib *l, size_t k, char *b, size_t n) {
    (void)b, (void)n;
    return v_str(probe_fix_kind_name(l->fixes[k].kind));
}
static probe_value get_f_major(const probe_lib *l, size_t k, char *b, size_t n) {
    (void)b, (void)n;
    return v_pos(l->fixes[k].major);
}
static probe_value get_f_branch(const probe_lib *l, size_t k, char *b, size_t n) {
    (void)b, (void)n;
    return v_pos(l->fixes[k].branch);
}
static probe_value get_f_packages(const probe_lib *l, size_t k, char *b, size_t n) {
    (void)b, (void)n;
    return v_words(l->fixes[k].kind == CUDALOAD_FIX_PIP_INSTALL ? l->fixes[k].packages : NULL);
}
/* The packages as pip requirements: pinned to the CUDA major where the name alone does not
 * say it (probe_requirement). */
static probe_value get_f_requirements(const probe_lib *l, size_t k, char *b, size_t n) {
    const cudaload_fix *f = &l->fixes[k];
    if (f->kind != CUDALOAD_FIX_PIP_INSTALL || !f->packages) return v_null();
    size_t len = 0;
    b[0] = 0;
    for (const char *s = f->packages; *s;) {
        size_t w = strcspn(s, " ");
        if (w) {
            char pkg[128], req[160];
            snprintf(pkg, sizeof pkg, "%.*s", (int)w, s);
            probe_requirement(l->info.lib, f->major, pkg, req, sizeof req);
            len = probe_appendf(b, n, len, "%s%s", len ? " " : "", req);
        }
        s += w;
        if (*s) s++;
    }
    return v_words(b);
}
static probe_value get_f_setting(const probe_lib *l, size_t k, char *b, size_t n) {
    (void)b, (void)n;
    return v_str(l->fixes[k].setting);
}

static const probe_field fix_fields[] = {
    {"kind", get_f_kind, NULL, PROBE_TEXT_NONE, 0, 0, NULL},
    {"major", get_f_major, NULL, PROBE_TEXT_NONE, 0, 0, NULL},
    {"branch", get_f_branch, NULL, PROBE_TEXT_NONE, 0, 0, NULL},
    {"packages", get_f_packages, NULL, PROBE_TEXT_NONE, 0, 0, NULL},
    {"requirements", get_f_requirements, NULL, PROBE_TEXT_NONE, 0, 0, NULL},
    {"setting", get_f_setting, NULL, PROBE_TEXT_NONE, 0, 0, NULL},
    {NULL, NULL, NULL, PROBE_TEXT_NONE, 0, 0, NULL},
};

/* The text's state line reads, for a library taken:
 *   loaded libcudart.so.13 (CUDA 13), from caller (already loaded), branch ...
 * and for one that failed:
 *   library not found (CUDALOAD_ERROR_NOT_FOUND)
 * then the path and the version on lines of their own, then the candidates. */
const probe_field probe_lib_fields[] = {
    {"status", get_status, NULL, PROBE_TEXT_HEAD, 0, 1, show_status},
    {"status_code", get_status_code, NULL, PROBE_TEXT_HEAD, 0, 0, show_status_code},
    {"soname", get_soname, NULL, PROBE_TEXT_HEAD, 1, 0, NULL},
    {"major", get_major, NULL, PROBE_TEXT_HEAD, 0, 0, show_major},
    {"source", get_source, NULL, PROBE_TEXT_HEAD, 0, 0, show_source},
    {"already_loaded", get_already_loaded, NULL, PROBE_TEXT_HEAD, 0, 0, show_already_loaded},
    {"branch", get_branch, NULL, PROBE_TEXT_HEAD, 0, 0, show_branch},
    {"path", get_path, NULL, PROBE_TEXT_LINE, 1, 0, show_path},
    {"version", get_version, NULL, PROBE_TEXT_LINE, 0, 0, show_version},
    /* minor version compatibility: the text says it under Warnings, with what fails */
    {"newer_than_driver", get_newer_than_driver, NULL, PROBE_TEXT_NONE, 0, 0, NULL},
    {"candidates", get_candidates, candidate_fields, PROBE_TEXT_ITEMS, 0, 0, show_candidates},
    {"fixes", get_fixes, fix_fields, PROBE_TEXT_NONE, 0, 0, NULL},
    {NULL, NULL, NULL, PROBE_TEXT_NONE, 0, 0, NULL},
};
