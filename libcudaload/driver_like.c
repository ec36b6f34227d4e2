/* SPDX-License-Identifier: Apache-2.0 */
/*
 * driver_like.c -- the walk of a driver-like row (the driver, libcuda.so.1, and NVML): the
 * system only. A copy already in the process, else the exact file (CUDALOAD_DRIVER_PATH,
 * options.driver_path), else the dynamic loader's search for its SONAME, then the row's
 * system_dirs (or CUDALOAD_DRIVER_DIRS). Never from wheels or roots, and never the unversioned
 * libcuda.so (the toolkit's link stub). The driver's copy kept sets the driver's facts
 * (cl_ctx.drv: its CUDA version, its branch).
 */
#define _GNU_SOURCE
#include "cudaload_tables.h"
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define G cl_ctx

/* Fills an open driver-like file's table in scratch and, for the driver, asks its version
 * (*version); cl_driver_take commits the table. When it cannot be used: records the candidate and
 * closes the handle (never the process's loaded copy), and returns why. */
cudaload_status cl_driver_usable(int lib, void *h, const char *where, cudaload_source source, int *version) {
    cl_buf why = {0};
    cl_why w = {0};
    *version = 0;
    cudaload_status st = cl_fill_scratch(lib, h, &why);
    if (st != CUDALOAD_OK) cl_why_set(&w, CUDALOAD_REASON_SYMBOL_MISSING, 0, 0, 0, "%s", cl_buf_str(&why));
    if (st == CUDALOAD_OK && lib == CUDALOAD_LIB_DRIVER) {
        const cudaload_driver_table *d = cl_resolve_scratch(CUDALOAD_LIB_DRIVER);
        const char *name = NULL;
        cl_foreign_begin(lib, "cuDriverGetVersion");
        CUresult r = d->cuDriverGetVersion(version);
        if ((r != CUDA_SUCCESS || *version <= 0) && d->cuGetErrorName(r, &name) != CUDA_SUCCESS) name = NULL;
        cl_foreign_end();
        if (r != CUDA_SUCCESS || *version <= 0) {
            cl_why_set(&w, r == CUDA_ERROR_STUB_LIBRARY ? CUDALOAD_REASON_STUB_LIBRARY : CUDALOAD_REASON_DRIVER_FAILED,
                       0, (int)r, 0, "%s", name ? name : "unknown error");
            st = CUDALOAD_ERROR_NO_DRIVER;
        } else {
            st = cl_floor_check(lib, 0, *version, &w);
        }
    }
    if (st != CUDALOAD_OK) {
        cudaload_status rep = source == CUDALOAD_SOURCE_OVERRIDE ? CUDALOAD_ERROR_OVERRIDE_UNUSABLE : st;
        long i = cl_record(lib, where, source, rep, &w);
        if (source == CUDALOAD_SOURCE_OVERRIDE)
            cl_set_note(lib, G.cfg.file_origin[lib], where, i >= 0 ? G.lib[lib].cands[i].reason : cl_buf_str(&w.text));
        if (source != CUDALOAD_SOURCE_LOADED) cl_dlclose(lib, h);
        st = rep;
    }
    cl_buf_free(&why);
    cl_why_free(&w);
    return st;
}

/* Keeps a usable driver-like copy (h NULL in find-only mode): its table, filled in scratch by
 * cl_driver_usable, committed. */
void cl_driver_take(int lib, void *h, const char *where, cudaload_source source, int version) {
    cl_lib_state *ls = &G.lib[lib];
    if (h) cl_resolve_commit((cudaload_lib)lib);
    cl_record_code(lib, where, source, CUDALOAD_OK,
                   !h ? CUDALOAD_REASON_FOUND
                      : source == CUDALOAD_SOURCE_LOADED ? CUDALOAD_REASON_REUSED : CUDALOAD_REASON_TAKEN, 0);
    /* the driver's CUDA version is no library major: it does not pin the process's major */
    cl_take(lib, h, where, cl_row_of(lib)->flavor[0].soname, source, source == CUDALOAD_SOURCE_LOADED, 0, version, -1);
    if (lib != CUDALOAD_LIB_DRIVER || !h) return;
    ls->major = version / 1000;
    G.drv.loaded = 1;
    G.drv.version = version;
    cl_foreign_begin(-1, "NVML (the driver's branch)");
    char *branch = cl_read_driver_branch(where);
    cl_foreign_end();
    G.drv.branch = branch;
    G.drv.branch_major = G.drv.branch ? atoi(G.drv.branch) : 0;
    cl_debug("driver: CUDA %d.%d (cuDriverGetVersion %d), branch %s, from %s", version / 1000, (version % 1000) / 10,
             version, G.drv.branch ? G.drv.branch : "unknown", where);
}

/* Is path's directory called stubs (the toolkit's lib64/stubs, conda's lib/stubs)? */
static int cl_in_stubs_dir(const char *path) {
    const char *slash = strrchr(path, '/');
    if (!slash || slash - path < 6) return 0;
    return strncmp(slash - 6, "/stubs", 6) == 0;
}

/* One place a driver-like row's file may be: the dynamic loader's search for its SONAME (dir
 * NULL), or dir/<SONAME>. Recorded as a candidate either way; CUDALOAD_OK when taken. */
static cudaload_status cl_driver_try(int lib, const char *dir, cudaload_status missing) {
    const char *soname = cl_row_of(lib)->flavor[0].soname;
    char label[128];
    snprintf(label, sizeof label, "%s (system search)", soname);
    char *path = dir ? cl_path_join(dir, soname) : NULL;
    char *real = NULL;
    void *h = NULL;
    cl_buf why = {0};
    cl_why w = {0};
    cudaload_status st = missing;
    const char *where = dir ? path : label;
    cl_file file = {.fd = -1}; /* dir/<SONAME>, opened once: what is loaded is compared with it */
    if (dir && !path) {
        st = CUDALOAD_ERROR_OUT_OF_MEMORY;
    } else if (dir && cl_path_too_long(lib, path, CUDALOAD_SOURCE_SYSTEM, 0)) {
        /* recorded: a directory of the driver's list too long to hold a file the system opens */
    } else if (dir && !cl_plat_file_id(path, &(cl_file_id){0, 0})) {
        cl_record_code(lib, where, CUDALOAD_SOURCE_SYSTEM, missing, CUDALOAD_REASON_NOT_PRESENT, 0);
    } else if (dir && cl_file_open(path, &file, &why) != CUDALOAD_OK) {
        cl_why_set(&w, CUDALOAD_REASON_FILE_UNUSABLE, 0, 0, 0, "%s", cl_buf_str(&why));
        cl_record(lib, where, CUDALOAD_SOURCE_SYSTEM, missing, &w);
    } else if (cl_find_only()) {
        real = dir ? cl_plat_realpath(path) : cl_search_system_path(soname, G.cfg.secure);
        if (!real) cl_record_code(lib, where, CUDALOAD_SOURCE_SYSTEM, missing, CUDALOAD_REASON_NOT_IN_SYSTEM, 0);
    } else if (!(h = cl_dlopen(lib, dir ? path : soname, &why))) {
        cl_why_set(&w, CUDALOAD_REASON_DLOPEN_FAILED, 0, 0, 0, "%s", cl_buf_str(&why));
        cl_record(lib, where, CUDALOAD_SOURCE_SYSTEM, missing, &w);
    } else if (dir && !cl_file_is_mapped(&file, h, &why)) {
        cl_why_set(&w, CUDALOAD_REASON_FILE_CHANGED, 0, 0, 0, "%s", cl_buf_str(&why));
        cl_record(lib, where, CUDALOAD_SOURCE_SYSTEM, missing, &w);
        cl_dlclose(lib, h);
        h = NULL;
    } else {
        real = cl_handle_path(h);
    }
    cl_file_close(&file);
    if (real) where = real;
    if ((h || real) && cl_in_stubs_dir(where)) {
        /* a stub that came first in LD_LIBRARY_PATH or a directory list: never called */
        cl_record_code(lib, where, CUDALOAD_SOURCE_SYSTEM, missing, CUDALOAD_REASON_STUB_DIR, 0);
        if (h) cl_dlclose(lib, h);
    } else if (h) {
        int version = 0;
        st = cl_driver_usable(lib, h, where, CUDALOAD_SOURCE_SYSTEM, &version);
        if (st == CUDALOAD_OK) cl_driver_take(lib, h, where, CUDALOAD_SOURCE_SYSTEM, version);
        else if (st != CUDALOAD_ERROR_OUT_OF_MEMORY) st = missing; /* the candidate says why; go on */
    } else if (real) {
        cl_driver_take(lib, NULL, where, CUDALOAD_SOURCE_SYSTEM, 0); /* find-only: located, not loaded */
        st = CUDALOAD_OK;
    }
    free(path);
    free(real);
    cl_buf_free(&why);
    cl_why_free(&w);
    return st;
}

/* No usable copy: BELOW_FLOOR when a copy was found too old for the caller's floor, else missing. */
static cudaload_status cl_driver_missing(int lib, cudaload_status missing) {
    for (size_t i = 0; i < G.lib[lib].n_cands; i++)
        if (G.lib[lib].cands[i].result == CUDALOAD_ERROR_BELOW_FLOOR) return CUDALOAD_ERROR_BELOW_FLOOR;
    return missing;
}

/* The system's copy of a driver-like row: the dynamic loader's search for its SONAME
 * (LD_LIBRARY_PATH, ld.so.cache, the default directories), then each directory of the row's
 * system_dirs (or CUDALOAD_DRIVER_DIRS), in order, until one is usable. A copy that answers as
 * the toolkit's stub (CUDA_ERROR_STUB_LIBRARY) or fails its version call is closed and the
 * search goes on: another place may hold the real driver. */
static cudaload_status cl_driver_from_system(int lib, cudaload_status missing) {
    cudaload_status st = cl_driver_try(lib, NULL, missing);
    if (st != missing) return st;
    if (G.cfg.driver_dirs_set) {
        for (size_t i = 0; i < G.cfg.n_driver_dirs; i++)
            if ((st = cl_driver_try(lib, G.cfg.driver_dirs[i], missing)) != missing) return st;
        return cl_driver_missing(lib, missing);
    }
    const char *p = cl_row_of(lib)->system_dirs;
    char dir[256];
    while (cl_row_next_word(&p, dir, sizeof dir))
        if ((st = cl_driver_try(lib, dir, missing)) != missing) return st;
    return cl_driver_missing(lib, missing);
}

/* The driver: a loaded copy, the exact file, or the system's (cl_driver_from_system). Never from
 * wheels or roots, and never the unversioned libcuda.so (the toolkit's link stub). NVML likewise. */
cudaload_status cl_walk_driver_like(int lib) {
    cl_lib_state *ls = &G.lib[lib];
    const char *soname = cl_row_of(lib)->flavor[0].soname;
    int is_driver = lib == CUDALOAD_LIB_DRIVER;
    cudaload_status missing = is_driver ? CUDALOAD_ERROR_NO_DRIVER : CUDALOAD_ERROR_NOT_FOUND;
    const char *override = G.cfg.file[lib];
    char *real = NULL;
    void *h = cl_dlopen_loaded(lib, soname, &real);
    cudaload_source source = CUDALOAD_SOURCE_LOADED;
    if (!h && !override) {
        /* the driver is always searched in the system (it never comes from anywhere else); a
         * driver-like library that is not the driver follows the scope */
        if (!(G.cfg.sources & CUDALOAD_SOURCE_BIT(CUDALOAD_SOURCE_SYSTEM)) && !is_driver) return missing;
        return cl_driver_from_system(lib, missing);
    }
    cl_buf why = {0};
    cl_why w = {0};
    cudaload_status st = CUDALOAD_OK;
    if (h && override) {
        cl_why_set(&w, CUDALOAD_REASON_DRIVER_LOADED, 0, 0, 0, "%s", real ? real : "?");
        cl_record(lib, override, CUDALOAD_SOURCE_OVERRIDE, CUDALOAD_ERROR_OVERRIDE_UNUSABLE, &w);
    } else if (!h) {
        source = CUDALOAD_SOURCE_OVERRIDE;
        real = cl_strdup(override);
        cl_file file; /* opened once: what is loaded is compared with it */
        cudaload_reason reason = CUDALOAD_REASON_FILE_UNUSABLE;
        st = cl_file_open(override, &file, &why);
        if (st == CUDALOAD_OK && !cl_find_only()) {
            reason = CUDALOAD_REASON_DLOPEN_FAILED;
            h = cl_dlopen(lib, override, &why);
            if (!h) {
                st = CUDALOAD_ERROR_NOT_FOUND;
            } else if (!cl_file_is_mapped(&file, h, &why)) {
                reason = CUDALOAD_REASON_FILE_CHANGED;
                cl_dlclose(lib, h);
                h = NULL;
                st = CUDALOAD_ERROR_NOT_FOUND;
            }
        }
        cl_file_close(&file);
        if (st != CUDALOAD_OK) {
            cl_why_set(&w, reason, 0, 0, 0, "%s", cl_buf_str(&why));
            long i = cl_record(lib, override, source, CUDALOAD_ERROR_OVERRIDE_UNUSABLE, &w);
            cl_set_note(lib, G.cfg.file_origin[lib], override, i >= 0 ? ls->cands[i].reason : cl_buf_str(&w.text));
            st = CUDALOAD_ERROR_OVERRIDE_UNUSABLE;
        }
    }
    const char *where = real ? real : soname;
    int version = 0;
    if (st == CUDALOAD_OK && !h) cl_driver_take(lib, NULL, where, source, 0); /* find-only: the exact file checked */
    else if (st == CUDALOAD_OK && (st = cl_driver_usable(lib, h, where, source, &version)) == CUDALOAD_OK)
        cl_driver_take(lib, h, where, source, version);
    cl_buf_free(&why);
    cl_why_free(&w);
    free(real);
    return st;
}
