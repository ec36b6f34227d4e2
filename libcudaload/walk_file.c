/* SPDX-License-Identifier: Apache-2.0 */
/*
 * walk_file.c -- one candidate file of the walk: open -> resolve -> gate.
 *
 * The file is checked and opened once (platform_*.c: cl_file_open), its dependencies taken
 * (walk_deps.c), then it is loaded with dlopen and the mapping compared with the file checked;
 * its table is filled in scratch (resolve.c), its version read and its major gated (gate.c:
 * what the driver runs, the major asked for, the process's major once pinned, the caller's
 * floor). A copy that passes is kept (cl_take) and its table committed; one that fails is
 * closed, with what was taken for it, and recorded with why (candidates.c).
 *
 * The foreign code of this step (dlopen and its constructors, dlclose, dlsym and the driver's
 * calls that fill a table, a library's version call) runs with the context's lock let go
 * (cl_foreign_begin); every wrapper of the walk for it is here.
 */
#define _GNU_SOURCE
#include "cudaload_tables.h"
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#define G cl_ctx

void (*cl_test_before_dlopen)(const char *path);
void (*cl_test_during_deps)(const char *path);
void (*cl_test_after_dlopen)(const char *path);

/* ---- foreign code: each with the lock let go (cl_foreign_begin), lib the library it belongs to ---- */

void *cl_dlopen(int lib, const char *path, cl_buf *why) {
    cl_foreign_begin(lib, "dlopen (its constructors)");
    void *h = cl_open_path(path, why);
    cl_foreign_end();
    return h;
}

void *cl_dlopen_loaded(int lib, const char *soname, char **real) {
    cl_foreign_begin(lib, "dlopen (RTLD_NOLOAD)");
    void *h = cl_open_loaded(soname, real);
    cl_foreign_end();
    return h;
}

void cl_dlclose(int lib, void *h) {
    cl_foreign_begin(lib, "dlclose (its destructors)");
    cl_plat_close(h);
    cl_foreign_end();
}

/* lib's table filled from h into the scratch table (dlsym; the driver's version call and
 * cuGetProcAddress); committed by the caller once the candidate is kept */
cudaload_status cl_fill_scratch(int lib, void *h, cl_buf *why) {
    cl_foreign_begin(lib, "dlsym (its table)");
    cudaload_status st = cl_resolve_fill((cudaload_lib)lib, h, why);
    cl_foreign_end();
    return st;
}

static cudaload_status cl_version_call(int lib, void *h, int *version, cl_buf *why) {
    const cl_row *row = cl_row_at((size_t)lib);
    cl_foreign_begin(lib, row->version_fn ? row->version_fn : "its version call");
    cudaload_status st = cl_read_version(row, h, version, why);
    cl_foreign_end();
    return st;
}

const char *cl_flavor_soname(int lib, int major) {
    const cl_flavor *fl = cl_row_flavor(cl_row_of(lib), major);
    if (fl) return fl->soname;
    /* major unknown: the newest flavor's name */
    return cl_row_of(lib)->flavor[0].soname;
}

/* ---- a copy kept ---- */

void cl_take(int lib, void *h, const char *path, const char *soname, cudaload_source source, int already,
             int major, int version, long root_index) {
    cl_lib_state *ls = &G.lib[lib];
    ls->handle = h;
    ls->loaded = h != NULL;
    free(ls->path); /* a dependency taken, closed again and taken from another directory */
    ls->path = cl_strdup(path);
    ls->soname = soname;
    ls->source = source;
    ls->already_loaded = already;
    ls->major = major;
    ls->version = version;
    ls->root_index = root_index;
    ls->status = CUDALOAD_OK;
    ls->attempted = 1;
    if (major && !G.major_pin) {
        G.major_pin = major;
        cl_debug("CUDA %d: the major of every library from now on (pinned by %s)", major, cl_row_of(lib)->name);
    }
}

/* ---- gates ---- */

/* The gate of a major, nothing recorded: the asked-for major, what the driver can run, and the
 * process's major once pinned (never mixed). major 0 (unknown) passes. */
cudaload_status cl_major_check(int lib, int major, cl_why *w) {
    if (!major || (cl_row_of(lib)->flags & CL_ROW_DRIVER_LIKE)) return CUDALOAD_OK;
    cudaload_status st = cl_gate_major(&G.drv, G.cfg.cuda_major, major, w);
    if (st == CUDALOAD_OK && G.major_pin && G.major_pin != major) {
        cl_why_set(w, CUDALOAD_REASON_MAJOR_MIXED, major, 0, G.major_pin, "%s", "");
        st = CUDALOAD_ERROR_MAJOR_MISMATCH;
    }
    return st;
}

/* Gate a major before touching a file of it; records the skip. */
cudaload_status cl_major_gate(int lib, const char *path, cudaload_source source, int major) {
    cl_why w = {0};
    cudaload_status st = cl_major_check(lib, major, &w);
    if (st != CUDALOAD_OK) cl_record(lib, path, source, st, &w);
    cl_why_free(&w);
    return st;
}

/* The caller's floor for lib (CUDALOAD_MIN_<NAME>, options.min_versions): BELOW_FLOOR with the
 * reason in w when version is under it, else CUDALOAD_OK. */
cudaload_status cl_floor_check(int lib, int major, int version, cl_why *w) {
    if (!G.cfg.floor[lib] || version >= G.cfg.floor[lib]) return CUDALOAD_OK;
    cl_why_set(w, CUDALOAD_REASON_BELOW_FLOOR, major, cl_version_triplet(cl_row_of(lib), version),
               cl_version_triplet(cl_row_of(lib), G.cfg.floor[lib]), "%s", G.cfg.floor_origin[lib]);
    return CUDALOAD_ERROR_BELOW_FLOOR;
}

/* Post-open checks of a handle: fill the table, read the version, settle the major (from the
 * name, else from the version) and gate it. *major is updated when the version tells it. */
cudaload_status cl_accept_handle(int lib, void *h, int *major, int *version, cl_why *w) {
    const cl_row *row = cl_row_of(lib);
    cl_buf why = {0};
    cudaload_status st = cl_fill_scratch(lib, h, &why);
    if (st != CUDALOAD_OK) {
        cl_why_set(w, CUDALOAD_REASON_SYMBOL_MISSING, *major, 0, 0, "%s", cl_buf_str(&why));
        cl_buf_free(&why);
        return st;
    }
    st = cl_version_call(lib, h, version, &why);
    if (st != CUDALOAD_OK) {
        cl_why_set(w, st == CUDALOAD_ERROR_SYMBOL_MISSING ? CUDALOAD_REASON_SYMBOL_MISSING : CUDALOAD_REASON_VERSION_FAILED,
                   *major, 0, 0, "%s", cl_buf_str(&why));
    } else {
        int vmajor = cl_row_major_of_version(row, *version);
        if (*major && vmajor && vmajor != *major) {
            cl_why_set(w, CUDALOAD_REASON_VERSION_NOT_NAME, *major, *version, (int)row->version_kind, "%s",
                       row->version_fn);
            st = CUDALOAD_ERROR_MAJOR_MISMATCH;
        } else {
            if (!*major) *major = vmajor;
            st = cl_major_check(lib, *major, w);
        }
    }
    /* below the caller's floor: closed, and the search goes on to another copy */
    if (st == CUDALOAD_OK) st = cl_floor_check(lib, *major, *version, w);
    cl_buf_free(&why);
    if (st != CUDALOAD_OK) return st; /* its table was never committed */
    cl_resolve_commit((cudaload_lib)lib);
    /* the generated entries carry the headers' prototypes: kept for the headers' major only */
    if (*major && *major != CL_HEADERS_MAJOR) cl_resolve_keep_stable((cudaload_lib)lib);
    return st;
}

/* ---- one file ---- */

/*
 * Tries one file for lib: the file check, its dependencies, then dlopen, the tables and the
 * gates. Records the candidate either way. major is 0 when neither the file's name nor the
 * directory tells it: the version the loaded file reports then decides it.
 */
cudaload_status cl_try_file(int lib, const char *path, cudaload_source source, int major, long root_index) {
    cl_buf why = {0};
    cl_why w = {0};
    /* the file first, opened once: a corrupt or foreign file costs no dependency load, and what
     * is loaded below is compared with this open file */
    cl_file file;
    cudaload_status st = cl_file_open(path, &file, &why);
    if (st != CUDALOAD_OK) {
        cl_why_set(&w, CUDALOAD_REASON_FILE_UNUSABLE, major, 0, 0, "%s", cl_buf_str(&why));
        cl_record(lib, path, source, st, &w);
        cl_why_free(&w);
        cl_buf_free(&why);
        return st;
    }
    cl_dep_list taken = {{0}, 0};
    G.lib[lib].busy = 1;
    st = cl_take_deps(lib, path, source, major, root_index, &taken);
    G.lib[lib].busy = 0;
    if (cl_test_during_deps) cl_test_during_deps(path);
    if (st != CUDALOAD_OK) {
        cl_file_close(&file);
        cl_buf_free(&why);
        return st;
    }
    if (cl_find_only()) {
        cl_file_close(&file);
        cl_record_code(lib, path, source, CUDALOAD_OK, CUDALOAD_REASON_FOUND, major);
        cl_take(lib, NULL, path, major ? cl_flavor_soname(lib, major) : NULL, source, 0, major, 0, root_index);
        cl_buf_free(&why);
        return CUDALOAD_OK;
    }
    int version = 0;
    if (cl_test_before_dlopen) cl_test_before_dlopen(path);
    void *h = cl_dlopen(lib, path, &why);
    if (h && cl_test_after_dlopen) cl_test_after_dlopen(path);
    if (!h) {
        st = CUDALOAD_ERROR_NOT_FOUND;
        cl_why_set(&w, CUDALOAD_REASON_DLOPEN_FAILED, major, 0, 0, "%s", cl_buf_str(&why));
    } else {
        /* the file ld.so mapped is the file checked, whatever happened to the path since */
        cl_buf_free(&why);
        if (!cl_file_is_mapped(&file, h, &why)) {
            st = CUDALOAD_ERROR_NOT_FOUND;
            cl_why_set(&w, CUDALOAD_REASON_FILE_CHANGED, major, 0, 0, "%s", cl_buf_str(&why));
        }
    }
    cl_file_close(&file);
    if (st == CUDALOAD_OK) st = cl_accept_handle(lib, h, &major, &version, &w);
    if (st != CUDALOAD_OK && h) cl_dlclose(lib, h);
    cl_buf_free(&why);
    if (st != CUDALOAD_OK) {
        cl_record(lib, path, source, st, &w);
        cl_why_free(&w);
        cl_drop_deps(&taken, st, lib);
        return st;
    }
    cl_why_free(&w);
    cl_record_code(lib, path, source, CUDALOAD_OK, CUDALOAD_REASON_TAKEN, major);
    cl_take(lib, h, path, cl_flavor_soname(lib, major), source, 0, major, version, root_index);
    return CUDALOAD_OK;
}
