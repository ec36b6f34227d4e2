/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cudaload.c -- the public API: init, the lazy loads, and the getters.
 *
 * The walk itself is in walk.c and its parts (one library, every row alike), the catalogue in
 * catalogue.c, the advisor in advisor.c, the context, its lock and who walks in context.c.
 * Here: init (configuration, roots, the driver, cudart), the lazy loads of every other library,
 * and what callers read back. Nothing below calls into this file.
 *
 * Readers (the getters, the accessors) never wait for a walk: they see every library whose step
 * ended, and the others as not attempted. A library's step ends once (finished); its fields and
 * its table never change after that, and its table is published then (the driver's after init's
 * cuda-compat decision). A call that needs a walk while another thread walks waits for it; the
 * walking thread itself, called back from the foreign code it runs, is refused with
 * CUDALOAD_ERROR_REENTRANT.
 */
#define _GNU_SOURCE
#include "cudaload_tables.h"
#include "internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define g cl_ctx

const char *cudaload_lib_name(cudaload_lib lib) {
    const cl_row *row = cl_row_at((size_t)lib);
    return row ? row->name : "unknown";
}

/* Waits, under the lock, until no other thread walks. REENTRANT (message set) when this thread
 * walks already: it is called back from the foreign code of its own walk (asked: the library
 * asked for, -1 for init). */
static cudaload_status cl_wait_walk(int asked) {
    int lib;
    const char *call;
    if (cl_walk_is_mine(&lib, &call)) {
        cl_buf b = {0};
        cl_describe_reentrant(asked, lib, call, &b);
        cl_set_error(cl_buf_str(&b));
        cl_buf_free(&b);
        return CUDALOAD_ERROR_REENTRANT;
    }
    cl_walk_wait_others();
    return CUDALOAD_OK;
}

/* ---- public API ---- */

/* Walks init's rows after the driver (cudart), then cuBLAS when the caller asked for it at init
 * (*blas). again: a row searched before without success is forgotten and searched again (the
 * driver changed under it). The first failure among the rows, or OK. */
static cudaload_status cl_walk_runtime_rows(int again, cudaload_status *blas) {
    cudaload_status rt = CUDALOAD_OK;
    for (size_t i = 0; i < cl_catalogue_count(); i++) {
        if (!(cl_row_at(i)->flags & CL_ROW_AT_INIT) || i == CUDALOAD_LIB_DRIVER) continue;
        if (again && g.lib[i].status != CUDALOAD_OK) cl_lib_forget((int)i);
        if (g.lib[i].finished) continue;
        cudaload_status r = cl_walk((int)i);
        if (r != CUDALOAD_OK && rt == CUDALOAD_OK) rt = r;
    }
    if ((g.cfg.flags & CUDALOAD_FLAG_LOAD_CUBLAS) && rt == CUDALOAD_OK && !g.lib[CUDALOAD_LIB_CUBLAS].finished)
        *blas = cl_walk(CUDALOAD_LIB_CUBLAS);
    return rt;
}

static cudaload_status cl_init_locked(const cudaload_options *opts) {
    cl_buf err = {0};
    for (size_t i = 0; i < cl_catalogue_count(); i++) g.lib[i].status = CUDALOAD_ERROR_NOT_ATTEMPTED;
    cudaload_status st = cl_config_build(&g.cfg, opts, &err);
    if (st != CUDALOAD_OK) {
        g.error = cl_strdup(cl_buf_str(&err));
        cl_buf_free(&err);
        return st;
    }
    cl_foreign_begin(-1, "dladdr"); /* ld.so's lock: never taken under ours */
    char *self_path = cl_plat_self_path((const void *)cudaload_init);
    cl_foreign_end();
    st = cl_search_build_roots(&g.roots, &g.cfg, self_path);
    free(self_path);
    if (st != CUDALOAD_OK) {
        g.error = cl_strdup("out of memory while building the search roots");
        return st;
    }

    /* init searches only the rows marked for it (the driver, then cudart); the rest on first ask */
    cudaload_status drv = CUDALOAD_OK, blas = CUDALOAD_OK;
    if (!g.lib[CUDALOAD_LIB_DRIVER].finished) drv = cl_walk(CUDALOAD_LIB_DRIVER);
    cudaload_status rt = cl_walk_runtime_rows(0, &blas);
    /* forward compatibility, where the system's driver does not run the runtime found: a runtime
     * skipped for that driver is searched again under the compat copy */
    if (cl_use_compat() && rt != CUDALOAD_OK) rt = cl_walk_runtime_rows(1, &blas);
    cl_note_compat(); /* the other compat copies, each with why it is not the one running */
    /* the driver's table is published once the compat decision is made, and never changes */
    if (g.lib[CUDALOAD_LIB_DRIVER].status == CUDALOAD_OK && g.lib[CUDALOAD_LIB_DRIVER].loaded)
        cl_publish_table(CUDALOAD_LIB_DRIVER);
    /* a missing driver is reported first (it explains a too-old or absent runtime), unless the
     * caller said it can live without one */
    int drv_fatal = drv != CUDALOAD_OK && !(drv == CUDALOAD_ERROR_NO_DRIVER && (g.cfg.flags & CUDALOAD_FLAG_DRIVER_OPTIONAL));
    st = drv_fatal ? drv : rt != CUDALOAD_OK ? rt : blas;
    if (st != CUDALOAD_OK) {
        cl_buf_printf(&err, "libcudaload init failed: %s\n", cudaload_status_string(st));
        if (drv != CUDALOAD_OK) cl_buf_printf(&err, "%s", g.lib[CUDALOAD_LIB_DRIVER].error);
        if (rt != CUDALOAD_OK) cl_buf_printf(&err, "%s", g.lib[CUDALOAD_LIB_CUDART].error);
        if (blas != CUDALOAD_OK) cl_buf_printf(&err, "%s", g.lib[CUDALOAD_LIB_CUBLAS].error);
        g.error = cl_strdup(cl_buf_str(&err));
    }
    cl_buf_free(&err);
    return st;
}

cudaload_status cudaload_init(const cudaload_options *opts) {
    cl_lock();
    /* a second thread waits for the first one's init; the initializing thread itself, called
     * back from a constructor or a version call its init runs, is refused */
    cudaload_status st = g.done ? CUDALOAD_OK : cl_wait_walk(-1);
    if (st == CUDALOAD_OK && !g.done) {
        cl_walk_begin(0);
        g.status = cl_init_locked(opts);
        g.done = 1;
        cl_walk_end();
        cl_debug("init: %s", cudaload_status_name(g.status));
    }
    if (st == CUDALOAD_OK) {
        st = g.status;
        if (st != CUDALOAD_OK) cl_set_error(g.error);
    }
    cl_unlock();
    return st;
}

int cudaload_is_initialized(void) {
    cl_lock();
    int d = g.done;
    cl_unlock();
    return d;
}

static cudaload_status cl_need_init(void) {
    if (g.done) return CUDALOAD_OK;
    cl_set_error("libcudaload is not initialized: call cudaload_init() first");
    return CUDALOAD_ERROR_NOT_INITIALIZED;
}

/* Has lib's step ended for a call of this kind: its load (finished), or for a find-only call its
 * load or its find (found)? Then the answer needs no walk. */
static int cl_lib_settled(int lib, int find_only) { return g.lib[lib].finished || (find_only && g.lib[lib].found); }

/* lib's fields as a reader may see them: its step ended (never changed after, but for a found
 * library whose load then starts: its arrays are retired, not freed), or no walk runs now. 0 for
 * an id outside the catalogue. */
static int cl_lib_visible(int lib) {
    if (lib < 0 || (size_t)lib >= cl_catalogue_count()) return 0;
    const cl_lib_state *ls = &g.lib[lib];
    return g.done && ls->attempted && (ls->finished || ls->found || !g.walking);
}

/* Loads (or with find_only, locates) any library once. A walk runs when its step has not ended:
 * after another thread's walk (init's included) when one runs, never from the walking thread's
 * own foreign code (REENTRANT). */
static cudaload_status cl_load(int lib, int find_only) {
    cl_lock();
    cudaload_status st = CUDALOAD_OK;
    if (!g.done && g.walking) st = cl_wait_walk(lib); /* init under way: its answer first */
    if (st == CUDALOAD_OK) st = cl_need_init();
    if (st == CUDALOAD_OK && (g.status == CUDALOAD_ERROR_INVALID_OPTION || g.status == CUDALOAD_ERROR_INVALID_ARGUMENT)) {
        cl_set_error(g.error);
        st = g.status;
    }
    find_only |= (g.cfg.flags & CUDALOAD_FLAG_FIND_ONLY) != 0;
    if (st == CUDALOAD_OK && !cl_lib_settled(lib, find_only)) {
        st = cl_wait_walk(lib);
        if (st == CUDALOAD_OK && !cl_lib_settled(lib, find_only)) {
            cl_walk_begin(find_only);
            cl_walk(lib);
            cl_walk_end();
        }
    }
    if (st == CUDALOAD_OK) {
        st = g.lib[lib].status;
        if (st != CUDALOAD_OK) cl_set_error(g.lib[lib].error ? g.lib[lib].error : cudaload_status_string(st));
    }
    cl_unlock();
    return st;
}

cudaload_status cudaload_load_cublas(void) { return cudaload_load_library(CUDALOAD_LIB_CUBLAS); }

cudaload_status cudaload_load_library(cudaload_lib lib) {
    if ((size_t)lib >= cl_catalogue_count()) {
        cl_set_errorf("cudaload_load_library: %d is not a catalogue id (0..%zu)", (int)lib, cl_catalogue_count() - 1);
        return CUDALOAD_ERROR_INVALID_ARGUMENT;
    }
    return cl_load((int)lib, 0);
}

cudaload_status cudaload_find_library(cudaload_lib lib) {
    if ((size_t)lib >= cl_catalogue_count()) {
        cl_set_errorf("cudaload_find_library: %d is not a catalogue id (0..%zu)", (int)lib, cl_catalogue_count() - 1);
        return CUDALOAD_ERROR_INVALID_ARGUMENT;
    }
    /* a find-only walk: the library and its dependencies are located, not loaded */
    return cl_load((int)lib, 1);
}

size_t cudaload_library_count(void) { return cl_catalogue_count(); }

cudaload_status cudaload_lib_by_name(const char *name, cudaload_lib *lib) {
    int i = cl_catalogue_find(name);
    if (!lib) {
        cl_set_error("cudaload_lib_by_name: lib is NULL");
        return CUDALOAD_ERROR_INVALID_ARGUMENT;
    }
    if (i < 0) {
        cl_buf b = {0};
        cl_buf_printf(&b, "'%.64s' is not a library of the catalogue; known:", name ? name : "(null)");
        for (size_t r = 0; r < cl_catalogue_count(); r++) cl_buf_printf(&b, " %s", cl_row_at(r)->name);
        cl_set_error(cl_buf_str(&b));
        cl_buf_free(&b);
        return CUDALOAD_ERROR_NOT_FOUND;
    }
    *lib = (cudaload_lib)i;
    return CUDALOAD_OK;
}

cudaload_status cudaload_library(const char *name, cudaload_library_info *out) {
    cudaload_lib lib;
    cudaload_status st = cudaload_lib_by_name(name, &lib);
    if (st != CUDALOAD_OK) return st;
    cudaload_status load = cudaload_load_library(lib);
    if (out && (st = cudaload_get_library_info(lib, out)) != CUDALOAD_OK) return st;
    return load;
}

cudaload_status cudaload_catalogue_entry(cudaload_lib lib, cudaload_catalogue_info *out) {
    const cl_row *row = cl_row_at((size_t)lib);
    if (!row || !out || out->size < CL_CATALOGUE_INFO_SIZE_V1) {
        cl_set_errorf("cudaload_catalogue_entry: invalid lib %d, or out is NULL or its size is too small", (int)lib);
        return CUDALOAD_ERROR_INVALID_ARGUMENT;
    }
    cudaload_catalogue_info full;
    memset(&full, 0, sizeof full);
    full.size = sizeof full;
    full.lib = lib;
    full.name = row->name;
    full.driver_like = (row->flags & CL_ROW_DRIVER_LIKE) != 0;
    for (size_t f = 0; f < CL_MAX_FLAVORS; f++) {
        const cl_flavor *fl = &row->flavor[f];
        if (!fl->soname) continue;
        if (!fl->major) { /* a driver-like row: one SONAME, no major */
            full.sonames[0] = fl->soname;
            continue;
        }
        int k = full.n_majors++;
        full.majors[k] = fl->major;
        full.sonames[k] = fl->soname;
        full.wheel_dirs[k] = fl->wheel_dir;
        full.pip_packages[k] = fl->pkg;
    }
    full.deps = cl_row_deps_text((size_t)lib, 0);
    full.optional_deps = cl_row_deps_text((size_t)lib, 1);
    full.header = row->header;
    /* the historic name where a row has one (the driver's CUDALOAD_DRIVER_PATH); both are read */
    full.env_name = row->env_alias ? row->env_alias : cl_row_env_name((size_t)lib);
    full.version_style = row->version_kind == CL_VERSION_NONE                                        ? 0
                         : row->version_kind == CL_VERSION_CUDA || row->version_kind == CL_VERSION_MAJMIN ? 1
                                                                                                  : 2;
    full.api_headers = row->api.headers;
    full.api_older_headers = row->api.older_headers;
    full.api_per_thread = row->api.per_thread;
    full.api_older_abis = row->api.older_abis;
    full.pip_cuda_version = (row->flags & CL_ROW_PIP_CUDA_VERSION) != 0;
    cl_info_copy_out(out, out->size, &full, sizeof full);
    return CUDALOAD_OK;
}

/* The first of a root's include dirs for row that holds its header (realpath'd), or NULL. */
static char *cl_include_in_root(const cl_root *root, const cl_row *row) {
    char *dirs[CL_MAX_FLAVORS + 2];
    size_t nd = cl_search_include_dirs(root, row, dirs);
    char *found = NULL;
    for (size_t i = 0; i < nd; i++) {
        if (!found && cl_file_exists(dirs[i], row->header)) found = cl_plat_realpath(dirs[i]);
        free(dirs[i]);
    }
    return found;
}

/* The include dir of lib: next to the copy taken first, then the roots in order. */
static char *cl_find_include_dir(int lib) {
    const cl_row *row = cl_row_at((size_t)lib);
    const cl_lib_state *ls = &g.lib[lib];
    char *found = NULL;
    if (!row->header) return NULL;
    if (cl_lib_visible(lib) && ls->status == CUDALOAD_OK && ls->path) {
        /* <root>/nvidia/cu13/lib/libx.so -> the row's include dirs under that root */
        if (ls->root_index >= 0 && (found = cl_include_in_root(&g.roots.items[ls->root_index], row))) return found;
        /* <prefix>/lib64/libx.so (an exact file, the system) -> <prefix>/include, up to three levels */
        char *dir = cl_dir_of(ls->path);
        static const char *const rel[] = {"../include", "../../include", "../../../include"};
        for (size_t i = 0; dir && !found && i < sizeof rel / sizeof rel[0]; i++) {
            char *inc = cl_path_join(dir, rel[i]);
            if (inc && cl_file_exists(inc, row->header)) found = cl_plat_realpath(inc);
            free(inc);
        }
        free(dir);
        if (found) return found;
    }
    for (size_t r = 0; r < g.roots.n && !found; r++)
        if (g.roots.items[r].pub.exists) found = cl_include_in_root(&g.roots.items[r], row);
    return found;
}

const char *cudaload_include_dir(cudaload_lib lib) {
    if ((size_t)lib >= cl_catalogue_count()) {
        cl_set_errorf("cudaload_include_dir: %d is not a catalogue id", (int)lib);
        return NULL;
    }
    cl_lock();
    const char *r = NULL;
    if (cl_need_init() == CUDALOAD_OK) {
        if (!g.include_dir[lib]) g.include_dir[lib] = cl_find_include_dir((int)lib);
        r = g.include_dir[lib];
        if (!r)
            cl_set_errorf("no include directory with %s found for %s next to the copy taken or in the %zu roots "
                          "searched", cl_row_at((size_t)lib)->header ? cl_row_at((size_t)lib)->header : "(no header)",
                          cl_row_at((size_t)lib)->name, g.roots.n);
    }
    cl_unlock();
    return r;
}

cudaload_status cudaload_get_library_info(cudaload_lib lib, cudaload_library_info *out) {
    /* any size from the first version's up: an older caller gets the prefix it has, a newer
     * one zeros in the fields this version does not know */
    if ((size_t)lib >= cl_catalogue_count() || !out || out->size < CL_LIBRARY_INFO_SIZE_V1) {
        cl_set_errorf("cudaload_get_library_info: invalid lib %d, or out is NULL or its size (%zu) is smaller than "
                      "the first version's cudaload_library_info (%zu): set it to sizeof(cudaload_library_info)",
                      (int)lib, out ? out->size : 0, (size_t)CL_LIBRARY_INFO_SIZE_V1);
        return CUDALOAD_ERROR_INVALID_ARGUMENT;
    }
    cudaload_library_info full;
    memset(&full, 0, sizeof full);
    cl_lock();
    /* a library a walk is changing now reads as not attempted (its step has not ended) */
    static const cl_lib_state none = {.status = CUDALOAD_ERROR_NOT_ATTEMPTED};
    const cl_lib_state *ls = cl_lib_visible((int)lib) ? &g.lib[lib] : &none;
    full.size = sizeof full;
    full.lib = lib;
    full.name = cl_row_at((size_t)lib)->name;
    full.status = ls->status;
    full.loaded = ls->loaded;
    full.path = ls->status == CUDALOAD_OK ? ls->path : NULL;
    full.soname = ls->status == CUDALOAD_OK ? ls->soname : NULL;
    full.source = ls->status == CUDALOAD_OK ? ls->source : CUDALOAD_SOURCE_NONE;
    full.already_loaded = ls->already_loaded;
    full.major = ls->major;
    full.version = ls->version;
    full.driver_branch = lib == CUDALOAD_LIB_DRIVER && g.done ? g.drv.branch : NULL;
    full.n_candidates = ls->n_cands;
    full.candidates = ls->cands;
    full.details = ls->details;
    full.env_name = cl_row_at((size_t)lib)->env_alias ? cl_row_at((size_t)lib)->env_alias : cl_row_env_name((size_t)lib);
    full.cuda_version = ls->status == CUDALOAD_OK ? cl_cuda_version_of(cl_row_at((size_t)lib), ls->version) : 0;
    /* minor version compatibility: the driver's major, a newer minor than it runs */
    full.newer_than_driver = full.cuda_version > 0 && g.drv.loaded && g.drv.version > 0 &&
                             full.cuda_version / 1000 == g.drv.version / 1000 && full.cuda_version > g.drv.version;
    cl_unlock();
    cl_info_copy_out(out, out->size, &full, sizeof full);
    return CUDALOAD_OK;
}

const cudaload_root *cudaload_roots(size_t *count) {
    cl_lock();
    const cudaload_root *r = g.done ? g.roots.pub : NULL;
    if (count) *count = r ? g.roots.n : 0;
    cl_unlock();
    return r;
}

cudaload_status cudaload_driver_version(int *version) {
    if (!version) {
        cl_set_error("cudaload_driver_version: version is NULL");
        return CUDALOAD_ERROR_INVALID_ARGUMENT;
    }
    cl_lock();
    cudaload_status st = cl_need_init();
    if (st == CUDALOAD_OK && !g.drv.loaded) {
        st = CUDALOAD_ERROR_NO_DRIVER;
        cl_set_error(g.lib[CUDALOAD_LIB_DRIVER].error ? g.lib[CUDALOAD_LIB_DRIVER].error : "driver not loaded");
    }
    if (st == CUDALOAD_OK) *version = g.drv.version;
    cl_unlock();
    return st;
}

/* cuInit and cuDeviceGetCount, asked with no lock held: cuInit is foreign code (it may load
 * modules, start threads or fork), and two threads asking at once is harmless. */
static void cl_ask_devices(const cudaload_driver_table *d, int driver_version, int *n, cudaload_status *st, int *cu_result,
                           cl_buf *why) {
    CUresult r = d->cuInit(0);
    *n = 0;
    if (r == CUDA_SUCCESS) r = d->cuDeviceGetCount(n);
    const char *name = NULL;
    if (r != CUDA_SUCCESS && d->cuGetErrorName(r, &name) != CUDA_SUCCESS) name = NULL;
    *cu_result = 0;
    if (r == CUDA_ERROR_NO_DEVICE || (r == CUDA_SUCCESS && *n == 0)) {
        *st = CUDALOAD_ERROR_NO_DEVICE;
        cl_buf_printf(why, "the CUDA driver (CUDA %d.%d) reports no device: %s", driver_version / 1000,
                      (driver_version % 1000) / 10, r == CUDA_SUCCESS ? "device count 0" : name ? name : "?");
    } else if (r != CUDA_SUCCESS) {
        *st = CUDALOAD_ERROR_CUDA;
        *cu_result = (int)r;
        cl_buf_printf(why, "cuInit/cuDeviceGetCount failed: %s (%d)", name ? name : "unknown error", (int)r);
    } else {
        *st = CUDALOAD_OK;
    }
}

cudaload_status cudaload_device_count(int *count) {
    if (!count) {
        cl_set_error("cudaload_device_count: count is NULL");
        return CUDALOAD_ERROR_INVALID_ARGUMENT;
    }
    *count = 0;
    cl_lock();
    cudaload_status st = cl_need_init();
    if (st == CUDALOAD_OK && !g.devices_done) {
        cl_buf b = {0};
        cudaload_status found = CUDALOAD_ERROR_NO_DRIVER;
        int n = 0, cu_result = 0;
        if (!g.drv.loaded) {
            cl_buf_printf(&b, "no CUDA driver is loaded, so there is no device\n%s",
                          g.lib[CUDALOAD_LIB_DRIVER].error ? g.lib[CUDALOAD_LIB_DRIVER].error : "");
        } else {
            /* the driver's table is committed once and never changes: usable after unlocking */
            const cudaload_driver_table *d = cl_table_ptr(CUDALOAD_LIB_DRIVER);
            int version = g.drv.version;
            cl_unlock();
            cl_ask_devices(d, version, &n, &found, &cu_result, &b);
            cl_lock();
        }
        /* another thread may have answered meanwhile: the first answer stays */
        if (!g.devices_done) {
            g.devices_done = 1;
            g.devices_status = found;
            g.devices_cu_result = cu_result;
            g.device_count = found == CUDALOAD_OK ? n : 0;
            /* a transient error (out of memory, not ready, ...) is not kept: the next call
             * asks the driver again, as the kernels' preparation does */
            if (found == CUDALOAD_ERROR_CUDA && !cl_cu_permanent((CUresult)cu_result)) g.devices_done = 0;
            if (found != CUDALOAD_OK) {
                free(g.devices_error); /* a transient failure's message, from an earlier call */
                g.devices_error = cl_strdup(cl_buf_str(&b));
            }
        }
        cl_buf_free(&b);
    }
    if (st == CUDALOAD_OK) {
        st = g.devices_status;
        *count = g.device_count;
        if (st != CUDALOAD_OK) cl_set_error(g.devices_error);
    }
    cl_unlock();
    return st;
}

int cudaload_device_cu_result(void) {
    cl_lock();
    int r = g.devices_done && g.devices_status == CUDALOAD_ERROR_CUDA ? g.devices_cu_result : 0;
    cl_unlock();
    return r;
}

static const void *cl_table_full(cudaload_lib lib);
/* A published table made whole before its entries are read (cudaload_has_symbol, ...). */
static void cl_table_full_if_ready(cudaload_lib lib) {
    if ((size_t)lib < cl_catalogue_count() && atomic_load_explicit(&g.table_ready[lib], memory_order_acquire))
        (void)cl_table_full(lib);
}

int cudaload_has_symbol(cudaload_lib lib, const char *name) {
    cl_table_full_if_ready(lib);
    cl_lock();
    int r = 0;
    void *h = NULL;
    int loaded = cl_lib_visible((int)lib) && g.lib[lib].loaded;
    if (loaded && cl_table_ptr(lib)) r = cl_symbol_present(lib, name);
    else if (loaded) h = g.lib[lib].handle; /* a row without a typed table: the library's own export */
    cl_unlock();
    /* dlsym takes ld.so's lock: never under ours (a finished library's handle is never closed) */
    if (h && name) r = cl_plat_sym(h, name, NULL) != NULL;
    return r;
}

size_t cudaload_symbol_at(cudaload_lib lib, size_t i, const char **name, int *required, int *present) {
    cl_table_full_if_ready(lib);
    cl_lock();
    size_t n = cl_symbol_count(lib);
    if (i < n) cl_symbol_info(lib, i, name, required, present);
    cl_unlock();
    return i < n ? n : 0;
}

void *cudaload_handle(cudaload_lib lib) {
    cl_lock();
    void *h = cl_lib_visible((int)lib) && g.lib[lib].loaded ? g.lib[lib].handle : NULL;
    cl_unlock();
    return h;
}

cudaload_status cudaload_report_missing_symbol(cudaload_lib lib, const char *symbol) {
    cl_lock();
    const char *name = cl_row_at((size_t)lib) ? cl_row_at((size_t)lib)->name : "?";
    int visible = cl_lib_visible((int)lib);
    if (visible && g.lib[lib].loaded && g.lib[lib].major && g.lib[lib].major != CL_HEADERS_MAJOR)
        cl_set_errorf("%s: the loaded %s (%s) is CUDA %d's; built with CUDA %d's headers, only the calls whose ABI is the "
                      "same in both go through", symbol ? symbol : "?", name, g.lib[lib].path ? g.lib[lib].path : "?",
                      g.lib[lib].major, CL_HEADERS_MAJOR);
    else if (visible && g.lib[lib].loaded)
        cl_set_errorf("%s: not exported by the loaded %s (%s, version %d): a newer release has it", symbol ? symbol : "?",
                      name, g.lib[lib].path ? g.lib[lib].path : "?", g.lib[lib].version);
    else
        cl_set_errorf("%s: %s is not loaded", symbol ? symbol : "?", name);
    cl_unlock();
    return CUDALOAD_ERROR_SYMBOL_MISSING;
}

cudaload_status cudaload_failure_line(cudaload_lib lib, char *buf, size_t n) {
    if ((size_t)lib >= cl_catalogue_count() || !buf || n == 0) return CUDALOAD_ERROR_INVALID_ARGUMENT;
    buf[0] = 0;
    cl_lock();
    cudaload_status st = cl_lib_visible((int)lib) ? g.lib[lib].status : CUDALOAD_ERROR_NOT_ATTEMPTED;
    cl_buf b = {0};
    if (st != CUDALOAD_OK && st != CUDALOAD_ERROR_NOT_ATTEMPTED) cl_describe_failure_line((int)lib, &b, 0);
    cl_unlock();
    if (b.oom) st = CUDALOAD_ERROR_OUT_OF_MEMORY;
    snprintf(buf, n, "%s", b.data ? cl_buf_str(&b) : "");
    cl_buf_free(&b);
    return st;
}

cudaload_status cudaload_report_reentrant(cudaload_lib lib, const char *running) {
    /* no lock: the thread may be inside a load's foreign code; the rows and the per-thread
     * message need none */
    cl_buf b = {0};
    cl_describe_reentrant((size_t)lib < cl_catalogue_count() ? (int)lib : -1, -1, running, &b);
    cl_set_error(cl_buf_str(&b));
    cl_buf_free(&b);
    return CUDALOAD_ERROR_REENTRANT;
}

/* A published table made whole: its generated entries resolved (cl_resolve_rest) by each caller
 * that asks before it is, with no lock held, and committed under it by the first to finish (the
 * others found the same entries). Only then is the table handed out, so its entries never change
 * once a caller can see them. No thread waits for another, so a call back from that foreign code
 * (a constructor run while ld.so's lock is held) cannot deadlock. */
static const void *cl_table_full(cudaload_lib lib) {
    if (atomic_load_explicit(&g.table_full[lib], memory_order_acquire)) return cl_table_ptr(lib);
    cl_lock();
    void *h = g.lib[lib].handle; /* a published library's handle is never closed */
    int driver_version = g.drv.version;
    cl_unlock();
    int filled = cl_resolve_rest(lib, h, driver_version);
    cl_lock();
    if (!atomic_load_explicit(&g.table_full[lib], memory_order_relaxed)) {
        if (filled) cl_resolve_rest_commit(lib);
        atomic_store_explicit(&g.table_full[lib], 1, memory_order_release);
    }
    cl_unlock();
    return cl_table_ptr(lib);
}

static const void *cl_table_if_loaded(cudaload_lib lib) {
    if (atomic_load_explicit(&g.table_full[lib], memory_order_acquire)) return cl_table_ptr(lib);
    if (atomic_load_explicit(&g.table_ready[lib], memory_order_acquire)) return cl_table_full(lib);
    cl_lock();
    /* a table is handed out once published (its library's step ended loaded), never before */
    const void *t = NULL;
    int ready = 0;
    if (atomic_load_explicit(&g.table_ready[lib], memory_order_acquire)) {
        ready = 1;
    } else if (!g.done) {
        cl_set_error("libcudaload is not initialized: call cudaload_init() first");
    } else if (cl_lib_visible(lib) && g.lib[lib].error) {
        cl_set_error(g.lib[lib].error);
    } else {
        cl_set_errorf("%s: not loaded%s", cl_row_at((size_t)lib)->name,
                      g.lib[lib].found && !g.lib[lib].finished ? " (only located, find-only)" : "");
    }
    cl_unlock();
    return ready ? cl_table_full(lib) : t;
}

const cudaload_driver_table *cudaload_driver(void) { return cl_table_if_loaded(CUDALOAD_LIB_DRIVER); }
const cudaload_cudart_table *cudaload_cudart(void) { return cl_table_if_loaded(CUDALOAD_LIB_CUDART); }
const cudaload_cublaslt_table *cudaload_cublaslt(void) { return cl_table_if_loaded(CUDALOAD_LIB_CUBLASLT); }

/* A table loaded on first use: cuBLAS and every generated table (api_rows.inc). */
static const void *cl_table_on_demand(cudaload_lib lib) {
    if (atomic_load_explicit(&g.table_full[lib], memory_order_acquire)) return cl_table_ptr(lib);
    if (cudaload_load_library(lib) != CUDALOAD_OK) return NULL;
    return cl_table_if_loaded(lib);
}

const cudaload_cublas_table *cudaload_cublas(void) { return cl_table_on_demand(CUDALOAD_LIB_CUBLAS); }

/* cudaload_cufft(), cudaload_cusolver(), ...: the row's id found by name once */
#define CL_NEW_ACCESSOR_(row, id)                                               \
    const cudaload_##id##_table *cudaload_##id(void) {                          \
        static atomic_int lib_ = -1;                                            \
        int l = atomic_load_explicit(&lib_, memory_order_relaxed);              \
        if (l < 0) atomic_store_explicit(&lib_, l = cl_catalogue_find(row), memory_order_relaxed); \
        return cl_table_on_demand((cudaload_lib)l);                             \
    }
CL_API_NEW_ROWS(CL_NEW_ACCESSOR_)
