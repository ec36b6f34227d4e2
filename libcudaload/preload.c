/* SPDX-License-Identifier: Apache-2.0 */
/*
 * preload.c -- for code that cannot be relinked: a prebuilt extension whose DT_NEEDED names
 * libcublas.so.13 with no RPATH into the nvidia directories. The dynamic loader matches a
 * DT_NEEDED entry against the SONAMEs of what the process has loaded already, so loading the
 * chosen copies first, dependencies before dependents, is enough for it to bind there instead of
 * searching (and failing, or finding another copy). Each is also made global (RTLD_GLOBAL), as
 * frameworks that preload do, so that code dlopened later resolves symbols against these copies.
 *
 * The search is libcudaload's own (cudaload_load_library: a library and its dependencies from one
 * place); this file adds the closure's order, the files a library dlopens itself from its own
 * directory (the catalogue's companions: cuDNN's sub-libraries), and the list of what was loaded.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#define G cl_ctx

/* What one call is building: the output array and the rows already listed. */
typedef struct cl_preload_run {
    cudaload_preloaded *out;
    size_t cap, n;
    unsigned char listed[CL_CATALOGUE_MAX];
} cl_preload_run;

static void cl_preload_put(cl_preload_run *run, const char *name, const char *path, cudaload_source source, int lib) {
    if (run->n < run->cap) run->out[run->n] = (cudaload_preloaded){name, path, source, lib};
    run->n++;
}

/* The copy of lib that was loaded, visible to code loaded later: its path and source. 0 when
 * lib is not loaded. */
static int cl_preload_copy(int lib, const char **path, cudaload_source *source, void **handle) {
    cudaload_library_info info;
    memset(&info, 0, sizeof info);
    info.size = sizeof info;
    if (cudaload_get_library_info((cudaload_lib)lib, &info) != CUDALOAD_OK || info.status != CUDALOAD_OK || !info.loaded)
        return 0;
    *path = info.path;
    *source = info.source;
    *handle = cudaload_handle((cudaload_lib)lib);
    return *handle != NULL;
}

/* The files lib's row names as its companions, from the directory of its copy (path), loaded in
 * the row's order and kept for the process (cl_ctx.companions). */
static cudaload_status cl_preload_companions(int lib, const char *path, cudaload_source source, cl_preload_run *run) {
    const char *list = cl_row_at((size_t)lib)->companions;
    const char *slash = strrchr(path, '/');
    if (!list || !slash) return CUDALOAD_OK;
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, " ");
        if (len == 0) {
            p++;
            continue;
        }
        cl_buf file = {0};
        cl_buf_printf(&file, "%.*s/%.*s", (int)(slash - path), path, (int)len, p);
        p += len;
        if (file.oom) {
            cl_buf_free(&file);
            return CUDALOAD_ERROR_OUT_OF_MEMORY;
        }
        /* an older release of the library has fewer sub-libraries: one it lacks is not an error */
        if (!cl_plat_lexists(cl_buf_str(&file))) {
            cl_buf_free(&file);
            continue;
        }
        cl_lock();
        struct cl_companion *c = G.companions;
        while (c && strcmp(c->path, cl_buf_str(&file)) != 0) c = c->next;
        cl_unlock();
        if (!c) {
            cl_buf why = {0};
            void *h = cl_open_path(cl_buf_str(&file), &why); /* no lock held: its constructors run */
            if (!h) {
                cl_set_errorf("cudaload_preload: %s, which %s loads from its own directory, cannot be loaded: %s",
                              cl_buf_str(&file), cl_row_at((size_t)lib)->name, cl_buf_str(&why));
                cl_buf_free(&why);
                cl_buf_free(&file);
                return CUDALOAD_ERROR_NOT_FOUND;
            }
            cl_buf_free(&why);
            (void)cl_plat_make_global(cl_buf_str(&file));
            c = calloc(1, sizeof *c);
            char *kept = cl_strdup(cl_buf_str(&file));
            if (!c || !kept) {
                free(c);
                free(kept);
                cl_buf_free(&file);
                return CUDALOAD_ERROR_OUT_OF_MEMORY; /* the handle stays open: nothing unloads it */
            }
            c->path = kept;
            c->name = strrchr(kept, '/') + 1;
            c->source = source;
            c->handle = h;
            cl_lock();
            c->next = G.companions;
            G.companions = c;
            cl_unlock();
        }
        cl_preload_put(run, c->name, c->path, c->source, -1);
        cl_buf_free(&file);
    }
    return CUDALOAD_OK;
}

/* lib's loaded dependencies (the row's deps, then its opt_deps that were there), depth first,
 * then lib itself and its companions: the order the dynamic loader needs them in. A row that is
 * not loaded (an optional dependency that is not there) is passed over. */
static cudaload_status cl_preload_closure(int lib, cl_preload_run *run, int depth) {
    const char *path;
    cudaload_source source;
    void *h;
    if (lib < 0 || run->listed[lib] || depth > (int)CL_CATALOGUE_MAX || !cl_preload_copy(lib, &path, &source, &h))
        return CUDALOAD_OK;
    run->listed[lib] = 1;
    const cl_row *row = cl_row_at((size_t)lib);
    const char *const *lists[2] = {row->deps, row->opt_deps};
    for (int l = 0; l < 2; l++)
        for (size_t i = 0; i < CL_MAX_DEPS && lists[l][i]; i++) {
            cudaload_status st = cl_preload_closure(cl_catalogue_find(lists[l][i]), run, depth + 1);
            if (st != CUDALOAD_OK) return st;
        }
    (void)cl_plat_make_global(path);
    cl_preload_put(run, row->name, path, source, lib);
    return cl_preload_companions(lib, path, source, run);
}

cudaload_status cudaload_preload(const char *const *names, size_t n_names, cudaload_preloaded *out, size_t cap,
                                 size_t *n_out) {
    if (n_out) *n_out = 0;
    if ((n_names && !names) || (cap && !out)) {
        cl_set_error("cudaload_preload: names or out is NULL with a count that is not 0");
        return CUDALOAD_ERROR_INVALID_ARGUMENT;
    }
    cl_preload_run *run = calloc(1, sizeof *run);
    if (!run) return CUDALOAD_ERROR_OUT_OF_MEMORY;
    run->out = out;
    run->cap = cap;
    cudaload_status st = CUDALOAD_OK;
    for (size_t i = 0; i < n_names && st == CUDALOAD_OK; i++) {
        cudaload_lib lib;
        if (!names[i] || cudaload_lib_by_name(names[i], &lib) != CUDALOAD_OK) {
            cl_set_errorf("cudaload_preload: \"%s\" is not a library of the catalogue (cudaload_lib_by_name)",
                          names[i] ? names[i] : "(null)");
            st = CUDALOAD_ERROR_INVALID_ARGUMENT;
            break;
        }
        st = cudaload_load_library(lib); /* its message stays: cudaload_last_error() says why */
        if (st == CUDALOAD_OK) st = cl_preload_closure((int)lib, run, 0);
    }
    if (n_out) *n_out = run->n;
    free(run);
    return st;
}
