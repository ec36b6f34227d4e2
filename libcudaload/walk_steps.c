/* SPDX-License-Identifier: Apache-2.0 */
/*
 * walk_steps.c -- the places the walk looks, in its order (walk.c: cl_search):
 *
 *   1. a copy already in the process (dlopen(soname, RTLD_NOLOAD)): reused, never loaded twice,
 *      or refused and the search stops;
 *   2. the exact file given by CUDALOAD_<NAME>_PATH or the options: used, or failed loudly;
 *   3. a root (search.c): the row's directories there for each major allowed, newest first;
 *   4. the system search (dlopen by SONAME: LD_LIBRARY_PATH, ld.so.cache, the default dirs).
 *
 * Each file found goes through cl_try_file (walk_file.c). Driver-like rows have their own
 * steps (driver_like.c).
 */
#define _GNU_SOURCE
#include "cudaload_tables.h"
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define G cl_ctx

/* ---- step 1: a copy already in the process ---- */

/* A loaded copy of an older major than one installed in a root is kept (one process holds one
 * copy), and the newer one is reported as not used, with why. */
static void cl_note_newer_not_used(int lib) {
    const cl_lib_state *ls = &G.lib[lib];
    const cl_row *row = cl_row_of(lib);
    for (size_t f = 0; f < CL_MAX_FLAVORS; f++) {
        const cl_flavor *fl = &row->flavor[f];
        if (!fl->soname || !ls->major || fl->major <= ls->major) continue;
        for (size_t r = 0; r < G.roots.n; r++) {
            if (!G.roots.items[r].pub.exists) continue;
            char *dirs[CL_MAX_DIRS];
            size_t nd = cl_search_dirs(&G.roots.items[r], row, fl, dirs);
            for (size_t i = 0; i < nd; i++) {
                char *p = cl_path_join(dirs[i], fl->soname);
                if (p && cl_plat_lexists(p) && !cl_already_candidate(lib, p)) {
                    cl_why w = {0};
                    cl_why_set(&w, CUDALOAD_REASON_MAJOR_MIXED, fl->major, 0, ls->major, "%s", ls->path ? ls->path : "");
                    cl_record(lib, p, G.roots.items[r].pub.source, CUDALOAD_ERROR_MAJOR_MISMATCH, &w);
                    cl_why_free(&w);
                }
                free(p);
                free(dirs[i]);
            }
        }
    }
}

int cl_try_loaded(int lib) {
    const cl_row *row = cl_row_of(lib);
    /* the row's distinct names: each flavor's SONAME, newest first, then the other file names */
    const char *names[2 * CL_MAX_FLAVORS];
    size_t n = 0;
    for (size_t f = 0; f < 2 * CL_MAX_FLAVORS; f++) {
        const cl_flavor *fl = &row->flavor[f % CL_MAX_FLAVORS];
        const char *name = f < CL_MAX_FLAVORS ? fl->soname : fl->alt_name;
        int seen = !name;
        for (size_t k = 0; k < n && !seen; k++) seen = strcmp(names[k], name) == 0;
        if (!seen) names[n++] = name;
    }
    for (size_t k = 0; k < n; k++) {
        const char *soname = names[k];
        char *real = NULL;
        void *h = cl_dlopen_loaded(lib, soname, &real);
        if (!h) continue;
        const char *where = real ? real : soname;
        int major = cl_row_major_of_soname(row, soname);
        cl_why w = {0};
        int version = 0;
        cudaload_status st = cl_accept_handle(lib, h, &major, &version, &w);
        if (st != CUDALOAD_OK) {
            /* kept out, and never a second file of the same SONAME mapped behind it: the search
             * stops here (a later dlopen by any path would return this copy again) */
            cl_record(lib, where, CUDALOAD_SOURCE_LOADED, st, &w);
            G.lib[lib].attempted = 1;
            G.lib[lib].status = st;
            cl_dlclose(lib, h); /* drops only the reference NOLOAD took */
        } else {
            cl_record_code(lib, where, CUDALOAD_SOURCE_LOADED, CUDALOAD_OK, CUDALOAD_REASON_REUSED, major);
            cl_take(lib, h, where, soname, CUDALOAD_SOURCE_LOADED, 1, major, version, -1);
            cl_note_newer_not_used(lib);
        }
        cl_why_free(&w);
        free(real);
        return 1; /* a loaded copy decides, taken or refused */
    }
    return 0;
}

/* A copy already in the process won over an exact file given for lib: the rule (a library is
 * never loaded twice) stays, but the file is recorded as a candidate that says so. */
void cl_note_loaded_over_exact(int lib) {
    const char *file = G.cfg.file[lib];
    cl_lib_state *ls = &G.lib[lib];
    if (!file || ls->status != CUDALOAD_OK) return;
    char *real = cl_plat_realpath(file);
    int same = real && ls->path && strcmp(real, ls->path) == 0;
    free(real);
    cl_why w = {0};
    cl_why_set(&w, same ? CUDALOAD_REASON_SAME_AS_LOADED : CUDALOAD_REASON_LOADED_ELSEWHERE, ls->major, 0, 0,
               "%s", same ? "" : (ls->path ? ls->path : "?"));
    cl_record(lib, file, CUDALOAD_SOURCE_OVERRIDE, same ? CUDALOAD_OK : CUDALOAD_ERROR_OVERRIDE_UNUSABLE, &w);
    cl_why_free(&w);
}

/* ---- step 2: the exact file ---- */

/* The exact file given for lib: used, or failed loudly with no fallback (the user asked for this
 * file). Its major (from its SONAME) is gated before it is opened, like any other candidate. */
cudaload_status cl_try_exact(int lib) {
    cl_lib_state *ls = &G.lib[lib];
    const char *path = G.cfg.file[lib];
    int major = cl_major_of_file(lib, path);
    size_t before = ls->n_cands;
    cudaload_status st = major ? cl_major_gate(lib, path, CUDALOAD_SOURCE_OVERRIDE, major) : CUDALOAD_OK;
    if (st == CUDALOAD_OK) st = cl_try_file(lib, path, CUDALOAD_SOURCE_OVERRIDE, major, -1);
    if (st == CUDALOAD_OK) return CUDALOAD_OK;
    /* the file's own record, when it could be made (not one of an earlier candidate) */
    cl_set_note(lib, G.cfg.file_origin[lib], path,
                ls->n_cands > before ? ls->cands[ls->n_cands - 1].reason : cudaload_status_string(st));
    return CUDALOAD_ERROR_OVERRIDE_UNUSABLE;
}

/* ---- step 3: the roots ---- */

int cl_try_root(int lib, size_t r) {
    const cl_root *root = &G.roots.items[r];
    /* a root too long to be looked at is walked anyway: its candidates say PATH_TOO_LONG */
    if (!root->pub.exists && strlen(root->pub.path) < CL_PATH_LIMIT) return 0;
    const cl_row *row = cl_row_of(lib);
    int majors[CL_MAX_FLAVORS];
    size_t nm = cl_majors_for(lib, majors);
    for (size_t mi = 0; mi < nm; mi++) {
        const cl_flavor *fl = cl_row_flavor(row, majors[mi]);
        char *dirs[CL_MAX_DIRS];
        size_t nd = cl_search_dirs(root, row, fl, dirs);
        int taken = 0;
        const char *names[2] = {fl->soname, fl->alt_name};
        for (size_t d = 0; d < nd; d++) {
            for (size_t k = 0; k < 2 && names[k] && !taken; k++) {
                char *path = cl_path_join(dirs[d], names[k]);
                if (!path) cl_oom();
                else if (cl_path_too_long(lib, path, root->pub.source, k == 0 ? fl->major : 0)) {
                    /* recorded; nothing there can be opened */
                } else if (!cl_plat_lexists(path)) {
                    if (k == 0) cl_note_unsearchable(lib, path, root->pub.source);
                } else if (!cl_already_candidate(lib, path)) {
                    int major = cl_major_in_dir(row, fl, root->pub.path, dirs[d]);
                    if (!major || cl_major_gate(lib, path, root->pub.source, major) == CUDALOAD_OK)
                        taken = cl_try_file(lib, path, root->pub.source, major, (long)r) == CUDALOAD_OK;
                }
                free(path);
            }
            free(dirs[d]);
        }
        if (taken) return 1;
    }
    return 0;
}

/* ---- step 4: the system ---- */

/* The file check alone, for a find-only walk (nothing is loaded). */
static cudaload_status cl_open_check_file(const char *path, cl_buf *why) {
    cl_file f;
    cudaload_status st = cl_file_open(path, &f, why);
    cl_file_close(&f);
    return st;
}

/* dlopen by SONAME, so ld.so picks the file (LD_LIBRARY_PATH, ld.so.cache, the default
 * directories), or with find-only that file located the same way without loading it. */
cudaload_status cl_system_take(int lib, int major, const char *soname) {
    char label[128];
    snprintf(label, sizeof label, "%s (system search)", soname);
    cl_buf why = {0};
    cl_why w = {0};
    cudaload_status st;
    if (cl_find_only()) {
        char *path = cl_search_system_path(soname, G.cfg.secure);
        if (!path) {
            cl_record_code(lib, label, CUDALOAD_SOURCE_SYSTEM, CUDALOAD_ERROR_NOT_FOUND, CUDALOAD_REASON_NOT_IN_SYSTEM, major);
            return CUDALOAD_ERROR_NOT_FOUND;
        }
        st = cl_open_check_file(path, &why);
        if (st == CUDALOAD_OK) {
            cl_record_code(lib, path, CUDALOAD_SOURCE_SYSTEM, CUDALOAD_OK, CUDALOAD_REASON_FOUND, major);
            cl_take(lib, NULL, path, soname, CUDALOAD_SOURCE_SYSTEM, 0, major, 0, -1);
        } else {
            cl_why_set(&w, CUDALOAD_REASON_FILE_UNUSABLE, major, 0, 0, "%s", cl_buf_str(&why));
            cl_record(lib, path, CUDALOAD_SOURCE_SYSTEM, st, &w);
        }
        free(path);
        cl_buf_free(&why);
        cl_why_free(&w);
        return st;
    }
    void *h = cl_dlopen(lib, soname, &why);
    int version = 0;
    if (h) {
        st = cl_accept_handle(lib, h, &major, &version, &w);
    } else {
        st = CUDALOAD_ERROR_NOT_FOUND;
        cl_why_set(&w, CUDALOAD_REASON_DLOPEN_FAILED, major, 0, 0, "%s", cl_buf_str(&why));
    }
    char *real = h ? cl_handle_path(h) : NULL;
    const char *where = real ? real : label;
    if (st == CUDALOAD_OK) {
        cl_record_code(lib, where, CUDALOAD_SOURCE_SYSTEM, CUDALOAD_OK, CUDALOAD_REASON_TAKEN, major);
        cl_take(lib, h, where, soname, CUDALOAD_SOURCE_SYSTEM, 0, major, version, -1);
    } else {
        cl_record(lib, where, CUDALOAD_SOURCE_SYSTEM, st, &w);
        if (h) cl_dlclose(lib, h);
    }
    free(real);
    cl_buf_free(&why);
    cl_why_free(&w);
    return st;
}

int cl_try_system(int lib, int major) {
    const cl_row *row = cl_row_of(lib);
    const cl_flavor *fl = cl_row_flavor(row, major);
    char label[128];
    snprintf(label, sizeof label, "%s (system search)", fl->soname);
    if (cl_already_candidate(lib, label)) return 0; /* a SONAME two majors share, tried once */
    int known = cl_row_major_of_soname(row, fl->soname);
    cl_why w = {0};
    cudaload_status gst = cl_major_check(lib, known, &w);
    if (gst != CUDALOAD_OK) {
        /* A SONAME the gate skips is located first, without loading: one installed nowhere is
         * NOT_FOUND, not "too old", so a user with no copy at all is told to install one. */
        char *found = cl_search_system_path(fl->soname, G.cfg.secure);
        if (!found) cl_record_code(lib, label, CUDALOAD_SOURCE_SYSTEM, CUDALOAD_ERROR_NOT_FOUND, CUDALOAD_REASON_NOT_IN_SYSTEM, known);
        else cl_record(lib, found, CUDALOAD_SOURCE_SYSTEM, gst, &w);
        free(found);
        cl_why_free(&w);
        return 0;
    }
    cl_why_free(&w);
    cl_dep_list taken = {{0}, 0};
    if (cl_take_deps(lib, label, CUDALOAD_SOURCE_SYSTEM, known, -1, &taken) != CUDALOAD_OK) return 0;
    cudaload_status st = cl_system_take(lib, known, fl->soname);
    if (st == CUDALOAD_OK) return 1;
    cl_drop_deps(&taken, st, lib);
    return 0;
}
