/* SPDX-License-Identifier: Apache-2.0 */
/*
 * walk.c -- the walk for one catalogue library, the same for every row, as one data path:
 *
 *     catalogue (the row: catalogue.c) -> search (the places below, in order: walk_steps.c;
 *     the roots and their directories: search.c) -> open (the file checked, its dependencies
 *     first, then dlopen: walk_file.c, walk_deps.c) -> resolve (its table: resolve.c) -> gate
 *     (its version and major: walk_file.c, gate.c) -> the step ends (cl_finish, below);
 *     launch, for the bundled kernels, comes after (kernels.c)
 *
 * The places, in order (cl_search):
 *
 *   1. a copy already in the process (dlopen(soname, RTLD_NOLOAD)) is reused, never loaded twice;
 *   2. the exact file given by CUDALOAD_<NAME>_PATH or the options: used, or failed loudly;
 *   3. the roots in order (search.c), the root the CUDA runtime came from first; within a root
 *      the newest CUDA major allowed, each of the root's directories for it;
 *   4. the system search (dlopen by SONAME).
 *
 * Every candidate goes through the file check and dlopen (platform_*.c), resolve.c (typed
 * tables) and gate.c (version, majors); its dependencies are taken first from the same root. A
 * failed candidate is recorded with a reason code (candidates.c) and the walk goes on.
 * Driver-like rows (the driver, NVML) have steps 1, 2 and 4 only (driver_like.c); the
 * cuda-compat decision comes after init's walk (cuda_compat.c).
 *
 * One CUDA major for the process: the first library taken whose major is known pins it
 * (cl_ctx.major_pin); later libraries are searched in that major only (walk_majors.c).
 *
 * Run by one thread at a time (cl_ctx.walking, cudaload.c), with the context's lock held except
 * around foreign code: dlopen (constructors), dlclose (destructors), dlsym and the driver's
 * calls that fill a table, a library's version call, NVML (the cl_dl* helpers of walk_file.c,
 * cl_foreign_begin). The candidates' results are recorded with the lock held. A table is filled
 * in scratch and committed only for a candidate kept; it is published when its library's step
 * ends (the driver's by init, once the cuda-compat decision is made) and never changes after.
 */
#define _GNU_SOURCE
#include "cudaload_tables.h"
#include "internal.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define G cl_ctx

/* lib's step ended, a load's (finished) or a find's (found): no walk searches it again, but a
 * load that forgets a find first (cl_unfind) */
int cl_step_ended(int lib) { return G.lib[lib].finished || G.lib[lib].found; }

/* The catalogue id of row's dependency i, required ones first then optional ones (i below
 * 2 * CL_MAX_DEPS), or -1 for an empty slot or a name not in the catalogue. */
static int cl_dep_at(const cl_row *row, size_t i) {
    const char *name = i < CL_MAX_DEPS ? row->deps[i] : row->opt_deps[i - CL_MAX_DEPS];
    return name ? cl_catalogue_find(name) : -1;
}

/* This walk locates files without loading them: CUDALOAD_FLAG_FIND_ONLY, or cudaload_find_library. */
int cl_find_only(void) { return (G.cfg.flags & CUDALOAD_FLAG_FIND_ONLY) != 0 || G.walk_find_only; }

/* ---- the walk ---- */

/* The status for a library none of whose candidates was taken: the most telling reason. */
static cudaload_status cl_failure_status(const cl_lib_state *ls) {
    for (size_t i = 0; i < ls->n_cands; i++)
        if (ls->cands[i].result == CUDALOAD_ERROR_DRIVER_TOO_OLD) return CUDALOAD_ERROR_DRIVER_TOO_OLD;
    for (size_t i = 0; i < ls->n_cands; i++)
        if (ls->cands[i].result == CUDALOAD_ERROR_BELOW_FLOOR) return CUDALOAD_ERROR_BELOW_FLOOR;
    for (size_t i = 0; i < ls->n_cands; i++)
        if (ls->cands[i].result == CUDALOAD_ERROR_MAJOR_MISMATCH) return CUDALOAD_ERROR_MAJOR_MISMATCH;
    return CUDALOAD_ERROR_NOT_FOUND;
}

static cudaload_status cl_search(int lib) {
    cl_lib_state *ls = &G.lib[lib];
    const cl_row *row = cl_row_of(lib);
    ls->attempted = 1;
    ls->root_index = -1;
    cl_debug("searching %s", row->name);
    if (row->flags & CL_ROW_DRIVER_LIKE) return cl_walk_driver_like(lib);

    /* 1. a loaded copy decides (taken, or refused and the search stops) */
    if (cl_try_loaded(lib)) {
        if (ls->status != CUDALOAD_OK) return ls->status;
        /* its dependencies are in the process too (ld.so loaded them for it) */
        for (size_t i = 0; i < CL_MAX_DEPS && row->deps[i]; i++) {
            int dep = cl_catalogue_find(row->deps[i]);
            if (dep < 0 || G.lib[dep].status == CUDALOAD_OK || cl_step_ended(dep)) continue;
            G.lib[dep].attempted = 1;
            if (!cl_try_loaded(dep)) G.lib[dep].status = CUDALOAD_ERROR_NOT_FOUND;
            else cl_note_loaded_over_exact(dep);
        }
        cl_note_loaded_over_exact(lib);
        return CUDALOAD_OK;
    }
    /* a dependency that is in the process alone, or given as an exact file, is the dependency
     * of every candidate: taken first (the exact file used, or failed loudly) */
    for (size_t i = 0; i < CL_MAX_DEPS && row->deps[i]; i++) {
        int dep = cl_catalogue_find(row->deps[i]);
        if (dep < 0 || G.lib[dep].status == CUDALOAD_OK) continue;
        if (!G.lib[dep].attempted && !cl_step_ended(dep)) {
            G.lib[dep].attempted = 1;
            if (cl_try_loaded(dep)) {
                cl_note_loaded_over_exact(dep);
                if (G.lib[dep].status == CUDALOAD_OK) continue;
            }
        }
        if (G.cfg.file[dep] && G.lib[dep].status != CUDALOAD_OK &&
            (cl_step_ended(dep) || cl_try_exact(dep) != CUDALOAD_OK)) {
            cl_buf b = {0};
            cl_buf_printf(&b, "not searched, because its dependency cannot be used: %s", G.lib[dep].note ? G.lib[dep].note : "");
            free(ls->note);
            ls->note = cl_strdup(cl_buf_str(&b));
            cl_buf_free(&b);
            return CUDALOAD_ERROR_OVERRIDE_UNUSABLE;
        }
    }

    /* 2. the exact file */
    if (G.cfg.file[lib]) return cl_try_exact(lib);

    /* 3. the roots: the root the runtime came from first */
    long first = -1;
    if (lib != CUDALOAD_LIB_CUDART && G.lib[CUDALOAD_LIB_CUDART].status == CUDALOAD_OK &&
        G.lib[CUDALOAD_LIB_CUDART].root_index >= 0) {
        first = G.lib[CUDALOAD_LIB_CUDART].root_index;
        if (cl_try_root(lib, (size_t)first)) return CUDALOAD_OK;
    }
    for (size_t r = 0; r < G.roots.n; r++)
        if ((long)r != first && cl_try_root(lib, r)) return CUDALOAD_OK;

    /* 4. the system */
    if (G.cfg.sources & CUDALOAD_SOURCE_BIT(CUDALOAD_SOURCE_SYSTEM)) {
        int majors[CL_MAX_FLAVORS];
        size_t nm = cl_majors_for(lib, majors);
        for (size_t i = 0; i < nm; i++)
            if (cl_try_system(lib, majors[i])) return CUDALOAD_OK;
    }
    return cl_failure_status(ls);
}

void cl_publish_table(int lib) {
    if (lib >= 0 && lib < CL_CATALOGUE_MAX) atomic_store_explicit(&G.table_ready[lib], 1, memory_order_release);
}

/* Ends a library's step: its status, its message when it failed, its table published. A
 * find-only walk ends its find (found), which a later load searches again; a load ends its load
 * (finished), final. A copy already in the process that a find-only walk reused is loaded: its
 * load ended too. The driver's table is published by init, after the cuda-compat decision. */
static void cl_finish(int lib, cudaload_status st) {
    cl_lib_state *ls = &G.lib[lib];
    ls->status = st;
    if (cl_find_only() && !(st == CUDALOAD_OK && ls->loaded)) ls->found = 1;
    else ls->finished = 1;
    if (st == CUDALOAD_OK && ls->loaded && ls->finished && lib != CUDALOAD_LIB_DRIVER) cl_publish_table(lib);
    if (st != CUDALOAD_OK) {
        cl_buf b = {0};
        cl_describe_failure(lib, &b);
        free(ls->error);
        ls->error = cl_strdup(cl_buf_str(&b));
        cl_buf_free(&b);
    }
}

/* After lib's walk: its dependencies' steps end with it. One taken is finished OK; one that was
 * searched and not kept gets its own failure status (an exact file that failed: OVERRIDE_UNUSABLE). */
static void cl_finish_deps(int lib) {
    const cl_row *row = cl_row_of(lib);
    for (size_t i = 0; i < CL_MAX_DEPS * 2; i++) {
        int dep = cl_dep_at(row, i);
        if (dep < 0 || cl_step_ended(dep) || !G.lib[dep].attempted) continue;
        cl_lib_state *d = &G.lib[dep];
        if (d->status == CUDALOAD_OK) {
            cl_finish_deps(dep);
            cl_finish(dep, CUDALOAD_OK);
        } else if (i < CL_MAX_DEPS) {
            cl_finish(dep, d->note ? CUDALOAD_ERROR_OVERRIDE_UNUSABLE
                                   : d->status == CUDALOAD_ERROR_NOT_ATTEMPTED || d->status == CUDALOAD_OK
                                         ? cl_failure_status(d) : d->status);
        }
    }
}

/* Keeps what a reader may still hold of lib's find-only answer (its path, candidates and
 * messages: cudaload_get_library_info hands them out) alive for the process, when a load starts
 * lib's search again. */
static void cl_retire(cl_lib_state *ls) {
    struct cl_retired *r = malloc(sizeof *r);
    if (!r) return; /* out of memory: leaked rather than freed under a reader */
    r->next = G.retired;
    r->cands = ls->cands;
    r->details = ls->details;
    r->path = ls->path;
    r->error = ls->error;
    r->note = ls->note;
    G.retired = r;
}

/* Before a load: lib and its dependencies that only a find-only walk located (found, not loaded)
 * are forgotten, so that the load searches and loads them; their earlier answers stay readable. */
static void cl_unfind(int lib) {
    cl_lib_state *ls = &G.lib[lib];
    const cl_row *row = cl_row_of(lib);
    if (ls->busy || ls->finished) return;
    if (ls->found) {
        cl_retire(ls);
        memset(ls, 0, sizeof *ls);
        ls->status = CUDALOAD_ERROR_NOT_ATTEMPTED;
    }
    ls->busy = 1; /* the catalogue has no cycle (test_catalogue); this keeps one from recursing */
    for (size_t i = 0; i < CL_MAX_DEPS * 2; i++) {
        int dep = cl_dep_at(row, i);
        if (dep >= 0) cl_unfind(dep);
    }
    ls->busy = 0;
}

/* cuBLAS asked for when the CUDA runtime was not loaded: cuBLAS is searched in the runtime's
 * major and root, so it is not searched, and takes the runtime's failure. */
static cudaload_status cl_without_runtime(int lib) {
    cl_lib_state *ls = &G.lib[lib], *rt = &G.lib[CUDALOAD_LIB_CUDART];
    cl_buf b = {0};
    cl_buf_printf(&b, "%s: not searched: cuBLAS needs the CUDA runtime, which was not loaded\n%s", cl_row_of(lib)->name,
                  rt->error ? rt->error : "");
    ls->attempted = 1;
    /* init ended before the runtime's search (out of memory): init's status */
    ls->status = rt->status != CUDALOAD_ERROR_NOT_ATTEMPTED ? rt->status : G.status;
    if (cl_find_only()) ls->found = 1;
    else ls->finished = 1;
    free(ls->error);
    ls->error = cl_strdup(cl_buf_str(&b));
    cl_buf_free(&b);
    return ls->status;
}

cudaload_status cl_walk(int lib) {
    unsigned long oom_before = G.n_oom;
    if (!cl_find_only()) cl_unfind(lib);
    if (lib == CUDALOAD_LIB_CUBLAS && G.lib[CUDALOAD_LIB_CUDART].status != CUDALOAD_OK) return cl_without_runtime(lib);
    cudaload_status st = cl_search(lib);
    /* an allocation failed on the way: the search was not complete, and the status says so */
    if (st != CUDALOAD_OK && G.n_oom != oom_before) st = CUDALOAD_ERROR_OUT_OF_MEMORY;
    if (st != CUDALOAD_OK) {
        /* no dependency is kept for a library that failed (one in the process before is) */
        const cl_row *row = cl_row_of(lib);
        for (size_t i = 0; i < CL_MAX_DEPS && row->deps[i]; i++) {
            int dep = cl_catalogue_find(row->deps[i]);
            if (dep >= 0 && !G.lib[dep].finished) cl_drop_dep(dep, st, row->name);
        }
    }
    cl_finish(lib, st);
    cl_finish_deps(lib);
    return st;
}

/* ---- searched again ---- */

/* Forgets lib's search (its candidates, its message) so that it can be searched again: a runtime
 * skipped for a driver that cl_use_compat then replaced. Only for a library nothing was kept of. */
void cl_lib_forget(int lib) {
    cl_lib_state *ls = &G.lib[lib];
    if (ls->handle || ls->status == CUDALOAD_OK) return;
    for (size_t i = 0; i < ls->n_cands; i++) {
        free((char *)ls->cands[i].path);
        free((char *)ls->cands[i].reason);
        free((char *)ls->details[i].text);
    }
    free(ls->cands);
    free(ls->details);
    free(ls->path);
    free(ls->error);
    free(ls->note);
    memset(ls, 0, sizeof *ls);
    ls->status = CUDALOAD_ERROR_NOT_ATTEMPTED;
}
