/* SPDX-License-Identifier: Apache-2.0 */
/*
 * walk_deps.c -- a candidate's dependencies (the row's deps, then its opt_deps), taken before
 * the candidate itself is loaded, from the same root: the same directory first, then the
 * dependency's own directories of that root (CUDA 12 wheels keep each component apart), or by
 * SONAME for the system search. A copy already in the process is never loaded twice. What was
 * taken for a candidate that then fails is let go again (cl_drop_deps).
 */
#define _GNU_SOURCE
#include "cudaload_tables.h"
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#define G cl_ctx

/* A dependency libcudaload took for a library that then could not be used is let go: closed, its
 * table cleared, and the candidate that said "taken" says why it was not kept (an exact file
 * too: nothing uses it). One that was already in the process is never ours to drop. */
void cl_drop_dep(int dep, cudaload_status why_st, const char *for_name) {
    cl_lib_state *d = &G.lib[dep];
    if (d->status != CUDALOAD_OK || d->source == CUDALOAD_SOURCE_LOADED) return;
    if (d->handle) {
        cl_resolve_clear((cudaload_lib)dep); /* never published: its step had not ended */
        cl_dlclose(dep, d->handle);
    }
    d->handle = NULL;
    d->loaded = 0;
    free(d->path);
    d->path = NULL;
    d->soname = NULL;
    d->source = CUDALOAD_SOURCE_NONE;
    d->major = d->version = 0;
    d->status = CUDALOAD_ERROR_NOT_ATTEMPTED;
    for (size_t i = d->n_cands; i-- > 0;) {
        if (d->cands[i].result != CUDALOAD_OK) continue;
        cl_why w = {0};
        cl_why_set(&w, CUDALOAD_REASON_DEPENDENCY_DROPPED, d->details[i].major, 0, 0, "%s", for_name);
        cl_record_rewrite(dep, i, why_st, &w);
        cl_why_free(&w);
        break;
    }
}

void cl_drop_deps(cl_dep_list *taken, cudaload_status st, int lib) {
    while (taken->n > 0) cl_drop_dep(taken->lib[--taken->n], st, cl_row_of(lib)->name);
}

/* Takes dependency dep for a candidate of lib at path (from source, root_index): a copy held
 * already; else one in the same directory; else one in the dependency's own directories of the
 * same root (CUDA 12 wheels keep each component apart); else, for the system search, by SONAME. */
static cudaload_status cl_take_dep(int dep, const char *path, cudaload_source source, int major, long root_index,
                                   cl_dep_list *taken) {
    cl_lib_state *d = &G.lib[dep];
    if (d->status == CUDALOAD_OK) return CUDALOAD_OK;
    /* a library whose step ended is not searched again: its answer is final (a find-only answer
     * only for another find: a load forgot it first, cl_unfind) */
    if (cl_step_ended(dep)) return d->status == CUDALOAD_ERROR_NOT_ATTEMPTED ? CUDALOAD_ERROR_NOT_FOUND : d->status;
    /* a dependency cycle (a row naming itself, directly or not): never recursed into; the
     * row-consistency test keeps the catalogue free of them */
    if (d->busy) return CUDALOAD_ERROR_NOT_FOUND;
    if (!d->attempted && cl_try_loaded(dep)) return CUDALOAD_OK; /* in the process alone: never a second copy */
    d->attempted = 1;
    cudaload_status st = CUDALOAD_ERROR_NOT_FOUND;
    const char *soname = cl_flavor_soname(dep, major);
    if (!soname) return CUDALOAD_ERROR_NOT_FOUND;
    if (source == CUDALOAD_SOURCE_SYSTEM) {
        st = cl_system_take(dep, major, soname);
    } else {
        char *dir = cl_dir_of(path);
        char *same = dir ? cl_path_join(dir, soname) : NULL;
        free(dir);
        if (!same) {
            cl_oom();
            return CUDALOAD_ERROR_OUT_OF_MEMORY;
        }
        int tried = 0;
        if (cl_path_too_long(dep, same, source, major)) {
            tried = 1;
        } else if (cl_plat_lexists(same)) {
            st = cl_try_file(dep, same, source, major, root_index);
            tried = 1;
        }
        if (!tried && root_index >= 0) {
            const cl_row *row = cl_row_of(dep);
            const cl_flavor *fl = cl_row_flavor(row, major);
            const cl_root *root = &G.roots.items[root_index];
            char *dirs[CL_MAX_DIRS];
            size_t nd = fl ? cl_search_dirs(root, row, fl, dirs) : 0;
            for (size_t i = 0; i < nd; i++) {
                char *p = tried ? NULL : cl_path_join(dirs[i], soname);
                if (!tried && !p) cl_oom();
                if (p && cl_path_too_long(dep, p, source, major)) tried = 1;
                else if (p && cl_plat_lexists(p) && !cl_already_candidate(dep, p)) {
                    st = cl_try_file(dep, p, source, major, root_index);
                    tried = 1;
                }
                free(p);
                free(dirs[i]);
            }
        }
        if (!tried) {
            cl_why w = {0};
            cl_why_set(&w, CUDALOAD_REASON_FILE_UNUSABLE, major, 0, 0, "not next to %s, nor elsewhere in its root", path);
            cl_record(dep, same, source, CUDALOAD_ERROR_NOT_FOUND, &w);
            cl_why_free(&w);
        }
        free(same);
    }
    if (st == CUDALOAD_OK && taken->n < sizeof taken->lib / sizeof taken->lib[0]) taken->lib[taken->n++] = dep;
    return st;
}

/* All dependencies of a candidate, required then optional. A required one that fails fails the
 * candidate (recorded, with what was taken for it let go); an optional one is only reported. */
cudaload_status cl_take_deps(int lib, const char *path, cudaload_source source, int major, long root_index,
                             cl_dep_list *taken) {
    const cl_row *row = cl_row_of(lib);
    for (size_t i = 0; i < CL_MAX_DEPS && row->deps[i]; i++) {
        int dep = cl_catalogue_find(row->deps[i]);
        if (dep < 0) continue; /* the row-consistency test keeps this from happening */
        cudaload_status st = cl_take_dep(dep, path, source, major, root_index, taken);
        if (st != CUDALOAD_OK) {
            cl_why w = {0};
            cl_why_set(&w, CUDALOAD_REASON_DEPENDENCY, major, 0, 0, "%s", cl_row_of(dep)->name);
            cl_record(lib, path, source, st, &w);
            cl_why_free(&w);
            cl_drop_deps(taken, st, lib);
            return st;
        }
    }
    for (size_t i = 0; i < CL_MAX_DEPS && row->opt_deps[i]; i++) {
        int dep = cl_catalogue_find(row->opt_deps[i]);
        if (dep >= 0 && cl_take_dep(dep, path, source, major, root_index, taken) != CUDALOAD_OK)
            cl_debug("%s: optional dependency %s not taken for %s", row->name, cl_row_of(dep)->name, path);
    }
    return CUDALOAD_OK;
}
