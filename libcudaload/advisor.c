/* SPDX-License-Identifier: Apache-2.0 */
/*
 * advisor.c -- the one place where reasons become text and failures become fixes.
 *
 * The walk records each candidate as a reason code with its parameters (cudaload_reason,
 * cudaload_candidate_detail). Here those are rendered to the candidate's text, once; and a
 * library that failed gets its fixes derived from the codes, the catalogue's row (the pip
 * packages per CUDA major) and the driver's facts (its CUDA version and branch), as data
 * (cudaload_fix_at) and as the fix lines of the library's message. Nothing parses text.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <stdio.h>
#include <string.h>

#define G cl_ctx

void cl_render_reason(const cudaload_candidate_detail *d, const char *text, cl_buf *out) {
    const char *t = text ? text : "";
    int m = d->major;
    switch (d->reason) {
    case CUDALOAD_REASON_NONE: break;
    case CUDALOAD_REASON_TAKEN: cl_buf_printf(out, "taken"); break;
    case CUDALOAD_REASON_REUSED: cl_buf_printf(out, "already loaded in the process: reused"); break;
    case CUDALOAD_REASON_FOUND: cl_buf_printf(out, "found (find-only: not loaded)"); break;
    case CUDALOAD_REASON_FILE_UNUSABLE:
    case CUDALOAD_REASON_DLOPEN_FAILED:
    case CUDALOAD_REASON_VERSION_FAILED: cl_buf_printf(out, "%s", t); break;
    case CUDALOAD_REASON_SYMBOL_MISSING: cl_buf_printf(out, "missing required symbol %s", t); break;
    case CUDALOAD_REASON_MAJOR_NOT_ASKED:
        cl_buf_printf(out, "skipped: CUDA %d, but CUDA %d was asked for (CUDALOAD_CUDA_MAJOR / options.cuda_major)", m,
                      d->needed);
        break;
    case CUDALOAD_REASON_DRIVER_TOO_OLD:
        cl_buf_printf(out, "skipped: CUDA %d runtime needs a CUDA %d driver (branch >= %d); this driver supports CUDA "
                           "%d.%d (cuDriverGetVersion %d%s%s)",
                      m, m, cl_min_branch_for_major(m), d->value / 1000, (d->value % 1000) / 10, d->value,
                      t[0] ? ", branch " : "", t);
        break;
    case CUDALOAD_REASON_DRIVER_BRANCH:
        cl_buf_printf(out, "skipped: CUDA %d needs driver branch >= %d; this driver is %s", m, d->needed, t);
        break;
    case CUDALOAD_REASON_MAJOR_MIXED:
        if (t[0])
            cl_buf_printf(out, "not used: CUDA %d, but CUDA %d's copy already loaded in the process (%s) is kept: one "
                               "process holds one copy, and majors are never mixed", m, d->needed, t);
        else
            cl_buf_printf(out, "skipped: CUDA %d, but the CUDA runtime taken is CUDA %d (majors are never mixed)", m,
                          d->needed);
        break;
    case CUDALOAD_REASON_VERSION_NOT_NAME:
        if (d->needed == CL_VERSION_PROPERTY || d->needed == CL_VERSION_INT || d->needed == CL_VERSION_SIZE_T)
            cl_buf_printf(out, "file is named for CUDA %d but reports version %d.%d.%d", m, d->value / 10000,
                          (d->value / 100) % 100, d->value % 100);
        else
            cl_buf_printf(out, "file is named for CUDA %d but %s reports %d.%d", m, t, d->value / 1000,
                          (d->value % 1000) / 10);
        break;
    case CUDALOAD_REASON_DEPENDENCY:
        cl_buf_printf(out, "skipped: its dependency %s cannot be used (see %s candidates)", t, t);
        break;
    case CUDALOAD_REASON_DEPENDENCY_DROPPED:
        cl_buf_printf(out, "closed again: no usable lib%s goes with it (see %s candidates)", t, t);
        break;
    case CUDALOAD_REASON_LOADED_ELSEWHERE:
        cl_buf_printf(out, "not used: a copy is already loaded in the process from %s, and a loaded copy is always "
                           "reused (never a second copy); the exact file is ignored", t);
        break;
    case CUDALOAD_REASON_SAME_AS_LOADED:
        cl_buf_printf(out, "the copy already loaded in the process is this file: reused");
        break;
    case CUDALOAD_REASON_NOT_IN_SYSTEM:
        cl_buf_printf(out, "not in LD_LIBRARY_PATH, /etc/ld.so.cache or the default directories");
        break;
    case CUDALOAD_REASON_UNSEARCHABLE: cl_buf_printf(out, "cannot look in %s: Permission denied", t); break;
    case CUDALOAD_REASON_DRIVER_LOADED:
        cl_buf_printf(out, "skipped: a libcuda.so.1 is already loaded from %s; a second driver cannot be loaded", t);
        break;
    case CUDALOAD_REASON_STUB_LIBRARY:
        cl_buf_printf(out, "cuDriverGetVersion failed: %s (%d): this is the toolkit's link stub, not a driver", t,
                      d->value);
        break;
    case CUDALOAD_REASON_DRIVER_FAILED: cl_buf_printf(out, "cuDriverGetVersion failed: %s (%d)", t, d->value); break;
    case CUDALOAD_REASON_NOT_PRESENT: cl_buf_printf(out, "not there"); break;
    case CUDALOAD_REASON_COMPAT_NOT_NEWER:
        cl_buf_printf(out, "skipped: a forward-compatibility libcuda %s, not newer than the kernel module's %s: "
                           "it would fail with CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803)", t, G.drv.branch ? G.drv.branch : "?");
        break;
    case CUDALOAD_REASON_COMPAT_NOT_NEEDED:
        cl_buf_printf(out, "not needed: a forward-compatibility libcuda %s, but the driver runs CUDA %d.%d and the runtime "
                           "needs %d.%d", t, d->value / 1000, d->value % 1000 / 10, d->needed / 1000, d->needed % 1000 / 10);
        break;
    case CUDALOAD_REASON_COMPAT_AVAILABLE:
        cl_buf_printf(out, "not taken: a forward-compatibility libcuda %s for the runtime's CUDA %d.%d (the driver runs "
                           "%d.%d), and CUDALOAD_COMPAT=never, find-only, or the kernel module's branch (%s) unknown; use it "
                           "with CUDALOAD_DRIVER_PATH set to this file, on a GPU that supports forward compatibility (others "
                           "fail with CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, 804)", t, d->needed / 1000,
                      d->needed % 1000 / 10, d->value / 1000, d->value % 1000 / 10, G.drv.branch ? G.drv.branch : "?");
        break;
    case CUDALOAD_REASON_COMPAT_TAKEN:
        cl_buf_printf(out, "taken: a forward-compatibility libcuda %s, newer than the kernel module's %s, in place of the "
                           "system's driver, which runs CUDA %d.%d where the runtime needs %d.%d (on a GPU without forward "
                           "compatibility the first call fails with 804: set CUDALOAD_COMPAT=never)", t,
                      G.drv.branch ? G.drv.branch : "?", d->value / 1000, d->value % 1000 / 10, d->needed / 1000,
                      d->needed % 1000 / 10);
        break;
    case CUDALOAD_REASON_COMPAT_REPLACED:
        cl_buf_printf(out, "closed again: runs CUDA %d.%d, the runtime needs %d.%d; the forward-compatibility libcuda %s "
                           "runs instead", d->value / 1000, d->value % 1000 / 10, d->needed / 1000, d->needed % 1000 / 10, t);
        break;
    case CUDALOAD_REASON_COMPAT_TOO_OLD:
        cl_buf_printf(out, "not taken: a forward-compatibility libcuda %s that runs CUDA %d.%d, the runtime needs %d.%d", t,
                      d->value / 1000, d->value % 1000 / 10, d->needed / 1000, d->needed % 1000 / 10);
        break;
    case CUDALOAD_REASON_COMPAT_BLOCKED:
        cl_buf_printf(out, "not taken: a forward-compatibility libcuda %s that runs the runtime's CUDA %d.%d, but the "
                           "system's driver stays in the process (loaded before libcudaload, or not unloadable); start the "
                           "process with CUDALOAD_DRIVER_PATH set to this file", t, d->needed / 1000, d->needed % 1000 / 10);
        break;
    case CUDALOAD_REASON_FILE_CHANGED: cl_buf_printf(out, "%s", t); break;
    case CUDALOAD_REASON_PATH_TOO_LONG:
        cl_buf_printf(out, "not searched: the path is %d bytes long, more than the system's limit of %d (PATH_MAX); "
                           "use a shorter directory than %s", d->value, d->needed - 1, t);
        break;
    case CUDALOAD_REASON_BELOW_FLOOR: {
        /* value and needed as major*10000 + minor*100 + patch (cl_version_triplet): X.Y, or X.Y.Z */
        char have[32], need[32];
        cl_version_text(d->value, have, sizeof have);
        cl_version_text(d->needed, need, sizeof need);
        cl_buf_printf(out, "version %s is below the minimum %s (%s)", have, need, t);
        break;
    }
    case CUDALOAD_REASON_STUB_DIR:
        cl_buf_printf(out, "skipped: in a stubs/ directory, the toolkit's link stubs (never a driver); not opened");
        break;
    case CUDALOAD_REASON_OTHER_ROOT:
        cl_buf_printf(out, "not used: the toolkit's root is %s (where nvcc is), and one toolkit comes from one root", t);
        break;
    case CUDALOAD_REASON_TOOLKIT_MISMATCH:
        cl_buf_printf(out, "not used: the runtime headers (%s) are CUDA %d.%d, nvcc is CUDA %d.%d: one toolkit is one release",
                      t, d->value / 1000, d->value % 1000 / 10, d->needed / 1000, d->needed % 1000 / 10);
        break;
    case CUDALOAD_REASON_NOT_IN_ROOT: cl_buf_printf(out, "not under the toolkit's root %s", t); break;
    case CUDALOAD_REASON_TREE_INCOMPLETE:
        cl_buf_printf(out, "not reused: the toolkit tree libcudaload made lacks this link to %s (or it points "
                           "elsewhere)", t);
        break;
    case CUDALOAD_REASON_COUNT_: break;
    }
}

void cl_version_text(int triplet, char *out, size_t n) {
    if (triplet % 100) snprintf(out, n, "%d.%d.%d", triplet / 10000, triplet / 100 % 100, triplet % 100);
    else snprintf(out, n, "%d.%d", triplet / 10000, triplet / 100 % 100);
}

/* ---- fixes ---- */

#define CL_MAX_FIXES 4

static int cl_skipped_for_driver(const cl_lib_state *ls, int major) {
    for (size_t i = 0; i < ls->n_cands; i++)
        if (ls->details[i].reason == CUDALOAD_REASON_DRIVER_TOO_OLD && ls->details[i].major == major) return 1;
    return 0;
}

static const char *cl_packages(int lib, int major) {
    const cl_flavor *fl = cl_row_flavor(cl_row_at((size_t)lib), major);
    return fl ? fl->pkg : NULL;
}

static size_t cl_advise(int lib, cudaload_fix *fix) {
    const cl_lib_state *ls = &G.lib[lib];
    const cl_row *row = cl_row_at((size_t)lib);
    size_t n = 0;
    /* a step that ended (a load, or a find) and failed; never one a walk is changing now */
    if ((!ls->finished && !ls->found) || ls->status == CUDALOAD_OK) return 0;
    memset(fix, 0, CL_MAX_FIXES * sizeof *fix);
    switch (ls->status) {
    case CUDALOAD_ERROR_NOT_FOUND:
    case CUDALOAD_ERROR_MAJOR_MISMATCH: {
        /* NVML and the like come with the driver, never from pip */
        if (row->flags & CL_ROW_DRIVER_LIKE) {
            if (ls->status == CUDALOAD_ERROR_NOT_FOUND)
                fix[n++] = (cudaload_fix){sizeof *fix, CUDALOAD_FIX_INSTALL_DRIVER, 0, 0, NULL,
                                          row->env_alias ? row->env_alias : cl_row_env_name((size_t)lib)};
            break;
        }
        /* the process's major once pinned (a mismatch is fixed by the package of that major),
         * else each major the row has that the loaded driver can run, newest first */
        int drv_major = G.drv.loaded && G.drv.version > 0 ? G.drv.version / 1000 : 0;
        int newest = 0;
        for (size_t f = 0; f < CL_MAX_FLAVORS && n < CL_MAX_FIXES; f++) {
            const cl_flavor *fl = &row->flavor[f];
            if (!fl->soname || !fl->pkg || (G.major_pin && fl->major != G.major_pin)) continue;
            if (G.cfg.cuda_major && fl->major != G.cfg.cuda_major) continue;
            if (fl->major > newest) newest = fl->major;
            if (!G.major_pin && drv_major && fl->major > drv_major) continue;
            fix[n++] = (cudaload_fix){sizeof *fix, CUDALOAD_FIX_PIP_INSTALL, fl->major, 0, fl->pkg, NULL};
        }
        /* a driver that runs none of the row's majors: upgrading it comes first, then the
         * newest major's package */
        if (n == 0 && newest && drv_major && newest > drv_major) {
            fix[n++] = (cudaload_fix){sizeof *fix, CUDALOAD_FIX_UPGRADE_DRIVER, newest, cl_min_branch_for_major(newest),
                                      NULL, NULL};
            const cl_flavor *fl = cl_row_flavor(row, newest);
            if (fl && fl->pkg) fix[n++] = (cudaload_fix){sizeof *fix, CUDALOAD_FIX_PIP_INSTALL, newest, 0, fl->pkg, NULL};
        }
        break;
    }
    case CUDALOAD_ERROR_DRIVER_TOO_OLD: {
        int dv = G.drv.version, dmaj = dv / 1000;
        if (G.drv.loaded && dmaj == 12 && cl_skipped_for_driver(ls, 13) && cl_packages(lib, 12) &&
            (G.drv.branch_major == 0 || G.drv.branch_major >= cl_min_branch_for_major(12)))
            fix[n++] = (cudaload_fix){sizeof *fix, CUDALOAD_FIX_PIP_INSTALL, 12, 0, cl_packages(lib, 12), NULL};
        int want = dmaj < 12 ? 12 : 13;
        fix[n++] = (cudaload_fix){sizeof *fix, CUDALOAD_FIX_UPGRADE_DRIVER, want, cl_min_branch_for_major(want), NULL, NULL};
        break;
    }
    case CUDALOAD_ERROR_NO_DRIVER:
        fix[n++] = (cudaload_fix){sizeof *fix, CUDALOAD_FIX_INSTALL_DRIVER, 0, 0, NULL,
                                  row->env_alias ? row->env_alias : cl_row_env_name((size_t)lib)};
        break;
    case CUDALOAD_ERROR_OVERRIDE_UNUSABLE:
        fix[n++] = (cudaload_fix){sizeof *fix, CUDALOAD_FIX_CHECK_SETTING, 0, 0, NULL,
                                  G.cfg.file_origin[lib] ? G.cfg.file_origin[lib] : cl_row_env_name((size_t)lib)};
        break;
    case CUDALOAD_ERROR_BELOW_FLOOR:
        /* a newer copy: the driver from NVIDIA, a library from its wheel at the floor or later */
        if (lib == CUDALOAD_LIB_DRIVER)
            fix[n++] = (cudaload_fix){sizeof *fix, CUDALOAD_FIX_UPGRADE_DRIVER, G.cfg.floor[lib] / 1000,
                                      cl_min_branch_for_major(G.cfg.floor[lib] / 1000), NULL, NULL};
        else if (G.cfg.floor_req[lib])
            fix[n++] = (cudaload_fix){sizeof *fix, CUDALOAD_FIX_PIP_INSTALL, G.cfg.floor_major[lib], 0,
                                      G.cfg.floor_req[lib], NULL};
        break;
    default: break;
    }
    return n;
}

/* out->size: any size from the struct's first version up, as the other info structs take it, so
 * that members appended later leave a program built before them working: what its size covers
 * is written, the rest of a larger size zeroed. */
size_t cudaload_fix_at(cudaload_lib lib, size_t i, cudaload_fix *out) {
    if ((size_t)lib >= cl_catalogue_count() || !out || out->size < CL_FIX_SIZE_V1) return 0;
    cudaload_fix fix[CL_MAX_FIXES];
    cl_lock();
    size_t n = cl_advise((int)lib, fix);
    cl_unlock();
    if (i < n) cl_info_copy_out(out, out->size, &fix[i], sizeof fix[i]);
    return n;
}

/* A pip requirement for the packages of a fix for CUDA major: each pinned to that major
 * ('nvidia-cublas==13.*') when its name does not say the major (no -cuNN) and the row's packages
 * are numbered after CUDA itself (CL_ROW_PIP_CUDA_VERSION); as they are otherwise. The probe's
 * probe_requirement words the same rule for its own lines. */
static void cl_render_requirement(int lib, int major, const char *packages, cl_buf *b) {
    int pin = major > 0 && (cl_row_at((size_t)lib)->flags & CL_ROW_PIP_CUDA_VERSION);
    for (const char *p = packages; *p;) {
        size_t len = strcspn(p, " ");
        if (len) {
            size_t d = len;
            while (d > 0 && p[d - 1] >= '0' && p[d - 1] <= '9') d--;
            int suffixed = d < len && d >= 3 && strncmp(p + d - 3, "-cu", 3) == 0;
            if (pin && !suffixed && !memchr(p, '=', len)) cl_buf_printf(b, "'%.*s==%d.*'", (int)len, p, major);
            else cl_buf_printf(b, "%.*s", (int)len, p);
        }
        p += len;
        while (*p == ' ') p++;
        if (*p) cl_buf_printf(b, " ");
    }
}

/* "fix: ..." for one fix, with no indent and no newline (the caller places it). */
static void cl_render_fix(int lib, const cudaload_fix *f, cl_buf *b) {
    int dv = G.drv.version;
    switch (f->kind) {
    case CUDALOAD_FIX_PIP_INSTALL:
        if (G.lib[lib].status == CUDALOAD_ERROR_DRIVER_TOO_OLD)
            cl_buf_printf(b, "fix: install the CUDA %d wheels (pip install %s), which this driver (CUDA %d.%d) runs",
                          f->major, f->packages, dv / 1000, (dv % 1000) / 10);
        else if (G.lib[lib].status == CUDALOAD_ERROR_BELOW_FLOOR)
            cl_buf_printf(b, "fix: pip install '%s' (CUDA %d), which meets %s", f->packages, f->major,
                          G.cfg.floor_origin[lib]);
        else {
            cl_buf_printf(b, "fix: pip install ");
            cl_render_requirement(lib, f->major, f->packages, b);
            cl_buf_printf(b, " (CUDA %d)", f->major);
        }
        break;
    case CUDALOAD_FIX_UPGRADE_DRIVER:
        if (G.drv.loaded && dv > 0)
            cl_buf_printf(b, "fix: upgrade the NVIDIA driver: it supports CUDA %d.%d, and CUDA %d needs branch >= %d",
                          dv / 1000, (dv % 1000) / 10, f->major, f->branch);
        else {
            /* no driver to compare with: every major's branch, newest first ("CUDA 13 needs branch >=
             * 580, CUDA 12 branch >= 525") */
            cl_buf_printf(b, "fix: upgrade the NVIDIA driver (");
            for (size_t i = 0; i < CL_MAX_MAJORS; i++)
                cl_buf_printf(b, "%sCUDA %d %sbranch >= %d", i ? ", " : "", cl_known_majors[i], i ? "" : "needs ",
                              cl_min_branch_for_major(cl_known_majors[i]));
            cl_buf_printf(b, ")");
        }
        break;
    case CUDALOAD_FIX_INSTALL_DRIVER:
        cl_buf_printf(b, "fix: install the NVIDIA driver (it provides %s; pip wheels never do), or set "
                         "%s to its absolute path", cl_row_at((size_t)lib)->flavor[0].soname, f->setting);
        break;
    case CUDALOAD_FIX_CHECK_SETTING:
        cl_buf_printf(b, "fix: correct or unset %s", f->setting);
        break;
    case CUDALOAD_FIX_NONE: break;
    }
}

void cl_describe_failure(int lib, cl_buf *b) {
    const cl_lib_state *ls = &G.lib[lib];
    const cl_row *row = cl_row_at((size_t)lib);
    cl_buf_printf(b, "%s: %s (%s)\n", row->name, cudaload_status_string(ls->status), cudaload_status_name(ls->status));
    if (ls->note) cl_buf_printf(b, "  %s\n", ls->note);
    if (ls->n_cands == 0) {
        cl_buf_printf(b, "  no candidate file was found\n");
    } else {
        cl_buf_printf(b, "  candidates, in the order tried:\n");
        for (size_t i = 0; i < ls->n_cands; i++)
            cl_buf_printf(b, "  %2zu. %s [%s]: %s\n", i + 1, ls->cands[i].path, cudaload_source_name(ls->cands[i].source),
                          ls->cands[i].reason);
    }
    if (!(row->flags & CL_ROW_DRIVER_LIKE)) {
        cl_buf_printf(b, "  roots searched:");
        if (G.roots.n == 0) cl_buf_printf(b, " none");
        for (size_t i = 0; i < G.roots.n; i++)
            cl_buf_printf(b, "%s %s (%s%s)", i ? "," : "", G.roots.items[i].pub.path,
                          cudaload_source_name(G.roots.items[i].pub.source), G.roots.items[i].pub.exists ? "" : ", missing");
        cl_buf_printf(b, "%s\n", (G.cfg.sources & CUDALOAD_SOURCE_BIT(CUDALOAD_SOURCE_SYSTEM)) ? "; then the system search"
                                                                                                : "; system search scoped out");
    }
    cudaload_fix fix[CL_MAX_FIXES];
    size_t n = cl_advise(lib, fix);
    for (size_t i = 0; i < n; i++) {
        cl_buf_printf(b, "  ");
        cl_render_fix(lib, &fix[i], b);
        cl_buf_printf(b, "\n");
    }
}

/* ---- one line: what a stub prints where the dynamic loader would have printed its own ---- */

/* The file names lib goes by: the pinned major's, else every major's ("libcublas.so.13 or
 * libcublas.so.12"). */
static void cl_render_sonames(const cl_row *row, cl_buf *b) {
    int n = 0;
    for (size_t f = 0; f < CL_MAX_FLAVORS; f++) {
        const cl_flavor *fl = &row->flavor[f];
        if (!fl->soname || (G.major_pin && fl->major && fl->major != G.major_pin && cl_row_flavor(row, G.major_pin)))
            continue;
        /* one name once: NCCL's libnccl.so.2 is both majors' */
        int seen = 0;
        for (size_t g = 0; g < f; g++) seen |= row->flavor[g].soname && strcmp(row->flavor[g].soname, fl->soname) == 0;
        if (seen) continue;
        cl_buf_printf(b, "%s%s", n++ ? " or " : "", fl->soname);
    }
    if (!n) cl_buf_printf(b, "%s", row->name);
}

/* The candidate that says most about a failure: the first file that was there and refused, not
 * one of the places that merely had no such file. NULL when every place had none. */
static const cudaload_candidate *cl_decisive_candidate(const cl_lib_state *ls) {
    for (size_t i = 0; i < ls->n_cands; i++) {
        cudaload_reason r = ls->details[i].reason;
        if (r == CUDALOAD_REASON_NOT_PRESENT || r == CUDALOAD_REASON_NOT_IN_SYSTEM || r == CUDALOAD_REASON_STUB_DIR ||
            r == CUDALOAD_REASON_UNSEARCHABLE || r == CUDALOAD_REASON_DEPENDENCY_DROPPED)
            continue;
        /* the system search's "no such file" is a place with none, as NOT_IN_SYSTEM */
        if (r == CUDALOAD_REASON_DLOPEN_FAILED && ls->cands[i].source == CUDALOAD_SOURCE_SYSTEM &&
            ls->cands[i].path[0] != '/')
            continue;
        return &ls->cands[i];
    }
    return NULL;
}

/* Where lib was looked for: the driver's places, or the first roots and the system search. */
#define CL_LINE_ROOTS 3
static void cl_render_places(const cl_row *row, const cl_lib_state *ls, cl_buf *b) {
    if (row->flags & CL_ROW_DRIVER_LIKE) {
        for (size_t i = 0; i < ls->n_cands; i++)
            cl_buf_printf(b, "%s%s", i ? ", " : "",
                          ls->cands[i].path[0] == '/' ? ls->cands[i].path : "the system search");
        if (!ls->n_cands) cl_buf_printf(b, "the system search");
        return;
    }
    for (size_t i = 0; i < G.roots.n && i < CL_LINE_ROOTS; i++)
        cl_buf_printf(b, "%s%s", i ? ", " : "", G.roots.items[i].pub.path);
    if (G.roots.n > CL_LINE_ROOTS) cl_buf_printf(b, " and %zu more roots", G.roots.n - CL_LINE_ROOTS);
    int sys = (G.cfg.sources & CUDALOAD_SOURCE_BIT(CUDALOAD_SOURCE_SYSTEM)) != 0;
    if (!G.roots.n) cl_buf_printf(b, sys ? "the system search (no root)" : "no place: no root, and CUDALOAD_SOURCES leaves out the system search");
    else if (sys) cl_buf_printf(b, ", then the system search");
}

void cl_describe_failure_line(int lib, cl_buf *b, int depth) {
    const cl_lib_state *ls = &G.lib[lib];
    const cl_row *row = cl_row_at((size_t)lib);
    cl_render_sonames(row, b);
    const cudaload_candidate *c = cl_decisive_candidate(ls);
    size_t at = c ? (size_t)(c - ls->cands) : 0;
    /* a dependency that failed: its own line says why, and its fix is the fix */
    if (c && ls->details[at].reason == CUDALOAD_REASON_DEPENDENCY && depth < 2) {
        int dep = cl_catalogue_find(ls->details[at].text);
        if (dep >= 0 && G.lib[dep].status != CUDALOAD_OK) {
            cl_buf_printf(b, ": needs %s, which cannot be used: ", cl_row_at((size_t)dep)->name);
            cl_describe_failure_line(dep, b, depth + 1);
            return;
        }
    }
    switch (ls->status) {
    case CUDALOAD_ERROR_NO_DRIVER:
        cl_buf_printf(b, ": no NVIDIA driver found");
        if (c) cl_buf_printf(b, " (%s: %s)", c->path, c->reason);
        cl_buf_printf(b, "; looked in ");
        cl_render_places(row, ls, b);
        break;
    case CUDALOAD_ERROR_NOT_FOUND:
        if (!c) {
            cl_buf_printf(b, ": not found; looked in ");
            cl_render_places(row, ls, b);
            break;
        }
        /* a copy was there and refused, which says more than "not found" */
        __attribute__((fallthrough));
    default:
        cl_buf_printf(b, ": %s", cudaload_status_string(ls->status));
        if (c) cl_buf_printf(b, ": %s: %s", c->path, c->reason);
        else if (ls->note) cl_buf_printf(b, ": %s", ls->note);
        break;
    }
    cudaload_fix fix[CL_MAX_FIXES];
    if (cl_advise(lib, fix) > 0) {
        cl_buf_printf(b, "; ");
        cl_render_fix(lib, &fix[0], b);
    }
}

void cl_describe_reentrant(int asked, int lib, const char *call, cl_buf *b) {
    const cl_row *what = asked >= 0 ? cl_row_at((size_t)asked) : NULL;
    const cl_row *whose = lib >= 0 ? cl_row_at((size_t)lib) : NULL;
    cl_buf_printf(b, "%s: %s (%s): the call came from %s%s%s, which a load of this thread is running; a load "
                     "cannot start inside another (it would wait on itself): make this call after that load "
                     "returns, not from a library's constructor or version call",
                  what ? what->name : "cudaload_init", cudaload_status_string(CUDALOAD_ERROR_REENTRANT),
                  cudaload_status_name(CUDALOAD_ERROR_REENTRANT), call ? call : "libcudaload's own code",
                  whose ? " of " : "", whose ? whose->name : "");
}
