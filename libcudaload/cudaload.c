/*
 * cudaload.c -- the walk and the public API.
 *
 * For each library, in one pass:
 *   1. reuse a copy already in the process (dlopen(soname, RTLD_NOLOAD)): never load twice;
 *   2. an exact file given by CUDALOAD_*_PATH or the options: used or failed loudly;
 *   3. the roots, in order (search.c); within a root the newest major the driver runs;
 *   4. the system search (dlopen by SONAME).
 * Each candidate goes through open.c (file check, dlopen), resolve.c (tables) and gate.c
 * (majors, versions); a failed one is recorded with its reason and the walk goes on.
 *
 * State is process-global, built once under one mutex, and never torn down: libraries
 * stay loaded for the life of the process (unloading the CUDA runtime is unsafe), so every
 * string and array handed out stays valid.
 */
#define _GNU_SOURCE
#include "cudaload_tables.h"
#include "internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>

typedef struct cl_lib_state {
    cudaload_status status;
    int attempted;
    int loaded;
    void *handle;
    char *path;
    const char *soname;
    cudaload_source source;
    int already_loaded;
    int major;
    int version;
    long root_index; /* root it came from, -1 for loaded/override/system */
    cudaload_candidate *cands;
    size_t n_cands, cap_cands;
    char *error;     /* the step's message when status != OK */
    char *note;      /* why an exact file given by env/options was not used ("CUDALOAD_CUDART_PATH=...
                        cannot be used: ..."), printed at the top of the library's message */
} cl_lib_state;

static struct {
    pthread_mutex_t mu;
    int done;
    cudaload_status status;
    char *error;
    cl_config cfg;
    cl_roots roots;
    cl_driver_facts drv;
    cl_lib_state lib[CUDALOAD_LIB_COUNT_];
    int cublas_done;
    int devices_done;
    cudaload_status devices_status;
    int device_count;
    char *devices_error;
} g = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* Set (release) once a library's table is final, so the table accessors need no lock. */
static atomic_int cl_table_ready[CUDALOAD_LIB_COUNT_];

static const char *const cl_lib_names[CUDALOAD_LIB_COUNT_] = {"cuda", "cudart", "cublasLt", "cublas"};

const char *cudaload_lib_name(cudaload_lib lib) {
    return (unsigned)lib < CUDALOAD_LIB_COUNT_ ? cl_lib_names[lib] : "unknown";
}

/* fork() while another thread holds the mutex would leave the child's copy locked */
static pthread_once_t cl_atfork_once = PTHREAD_ONCE_INIT;
static void cl_lock_prepare(void) { pthread_mutex_lock(&g.mu); }
static void cl_unlock_parent(void) { pthread_mutex_unlock(&g.mu); }
static void cl_atfork_register(void) { pthread_atfork(cl_lock_prepare, cl_unlock_parent, cl_unlock_parent); }
void cl_atfork_init(void) { pthread_once(&cl_atfork_once, cl_atfork_register); }

static void cl_lock(void) {
    cl_atfork_init();
    pthread_mutex_lock(&g.mu);
}
static void cl_unlock(void) { pthread_mutex_unlock(&g.mu); }

/* ---- candidates ---- */

static void cl_add_candidate(cl_lib_state *ls, const char *path, cudaload_source source, cudaload_status result,
                             const char *reason) {
    cl_debug("%s candidate %s [%s]: %s", cl_lib_names[ls - g.lib], path, cudaload_source_name(source), reason);
    if (ls->n_cands == ls->cap_cands) {
        size_t cap = ls->cap_cands ? ls->cap_cands * 2 : 8;
        cudaload_candidate *p = realloc(ls->cands, cap * sizeof *p);
        if (!p) return; /* the candidate is lost from the report, the walk goes on */
        ls->cands = p;
        ls->cap_cands = cap;
    }
    cudaload_candidate *c = &ls->cands[ls->n_cands];
    c->path = cl_strdup(path);
    c->reason = cl_strdup(reason);
    if (!c->path || !c->reason) {
        free((char *)c->path);
        free((char *)c->reason);
        return;
    }
    c->source = source;
    c->result = result;
    ls->n_cands++;
}

static int cl_lexists(const char *path) {
    struct stat st;
    return lstat(path, &st) == 0;
}

/* A candidate path that cannot even be looked at (a directory on the way is not
 * searchable) is recorded, not silently passed over: the user may expect a copy there. */
static void cl_note_unsearchable(cudaload_lib lib, const char *path, cudaload_source source) {
    struct stat st;
    if (lstat(path, &st) == 0 || errno != EACCES) return;
    char *dir = cl_strdup(path);
    char *slash = dir ? strrchr(dir, '/') : NULL;
    if (slash) *slash = 0;
    cl_buf why = {0};
    cl_buf_printf(&why, "cannot look in %s: %s", dir ? dir : path, strerror(EACCES));
    cl_add_candidate(&g.lib[lib], path, source, CUDALOAD_ERROR_NOT_FOUND, cl_buf_str(&why));
    cl_buf_free(&why);
    free(dir);
}

static int cl_find_only(void) { return (g.cfg.flags & CUDALOAD_FLAG_FIND_ONLY) != 0; }

/* The CUDA major in a file name such as libcudart.so.13 or libcudart.so.13.0.96; 0 if none. */
static int cl_major_from_name(const char *path) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *so = strstr(base, ".so.");
    if (!so) return 0;
    int m = atoi(so + 4);
    return (m == 12 || m == 13) ? m : 0;
}

static void cl_take(cl_lib_state *ls, void *h, const char *path, const char *soname, cudaload_source source,
                    int already, int major, long root_index) {
    ls->handle = h;
    ls->loaded = h != NULL;
    free(ls->path); /* a cublasLt taken, closed again and taken from another directory */
    ls->path = cl_strdup(path);
    ls->soname = soname;
    ls->source = source;
    ls->already_loaded = already;
    ls->major = major;
    ls->root_index = root_index;
    ls->status = CUDALOAD_OK;
}

/* Post-open checks of a handle: fill the table and read/verify the version. */
static cudaload_status cl_accept_handle(cudaload_lib lib, void *h, int major, int *version, cl_buf *why) {
    cudaload_status st = cl_resolve(lib, h, why);
    if (st != CUDALOAD_OK) return st;
    if (lib == CUDALOAD_LIB_CUDART) {
        st = cl_gate_cudart(&g.drv, major, version, why);
    } else {
        *version = cl_gate_cublas_version(lib);
        if (major && *version / 10000 != major) {
            cl_buf_printf(why, "file is named for CUDA %d but reports version %d.%d.%d", major, *version / 10000,
                          (*version / 100) % 100, *version % 100);
            st = CUDALOAD_ERROR_MAJOR_MISMATCH;
        }
    }
    if (st != CUDALOAD_OK) cl_resolve_clear(lib);
    return st;
}

/* The gate of a major for lib, nothing recorded: the asked-for major, what the driver can
 * run, and for cuBLAS/cublasLt the runtime's major (never mixed). */
static cudaload_status cl_major_check(cudaload_lib lib, int major, cl_buf *why) {
    cudaload_status st = cl_gate_major(&g.drv, g.cfg.cuda_major, major, why);
    if (st == CUDALOAD_OK && (lib == CUDALOAD_LIB_CUBLAS || lib == CUDALOAD_LIB_CUBLASLT)) {
        int rt = g.lib[CUDALOAD_LIB_CUDART].major;
        if (rt && rt != major) {
            cl_buf_printf(why, "CUDA %d, but the CUDA runtime taken is CUDA %d (majors are never mixed)", major, rt);
            st = CUDALOAD_ERROR_MAJOR_MISMATCH;
        }
    }
    return st;
}

static void cl_add_skip(cudaload_lib lib, const char *path, cudaload_source source, cudaload_status st,
                        const cl_buf *why) {
    cl_buf b = {0};
    cl_buf_printf(&b, "skipped: %s", cl_buf_str(why));
    cl_add_candidate(&g.lib[lib], path, source, st, cl_buf_str(&b));
    cl_buf_free(&b);
}

/* Gate a major before touching a file of it; records the skip. Returns the gate's status. */
static cudaload_status cl_major_gate(cudaload_lib lib, const char *path, cudaload_source source, int major) {
    cl_buf why = {0};
    cudaload_status st = cl_major_check(lib, major, &why);
    if (st != CUDALOAD_OK) cl_add_skip(lib, path, source, st, &why);
    cl_buf_free(&why);
    return st;
}

/* "<origin>=<path> cannot be used: <reason>": the first line of the library's message when an
 * exact file given by env/options failed, so the user sees which setting to fix. */
static void cl_set_note(cl_lib_state *ls, const char *origin, const char *path, const char *reason) {
    cl_buf b = {0};
    cl_buf_printf(&b, "%s=%s cannot be used: %s", origin ? origin : "exact file", path, reason ? reason : "");
    free(ls->note);
    ls->note = cl_strdup(cl_buf_str(&b));
    cl_debug("%s", cl_buf_str(&b));
    cl_buf_free(&b);
}

/* A cublasLt libcudaload took for a libcublas that then could not be used is let go: closed,
 * its table cleared, and the candidate that said "taken" says why it was not kept. One
 * that was already in the process is never ours to close and is kept. */
static void cl_drop_cublaslt(cudaload_status why_st, const char *reason) {
    cl_lib_state *lt = &g.lib[CUDALOAD_LIB_CUBLASLT];
    if (lt->status != CUDALOAD_OK || lt->source == CUDALOAD_SOURCE_LOADED) return;
    if (lt->handle) {
        dlclose(lt->handle);
        cl_resolve_clear(CUDALOAD_LIB_CUBLASLT);
    }
    lt->handle = NULL;
    lt->loaded = 0;
    free(lt->path);
    lt->path = NULL;
    lt->soname = NULL;
    lt->source = CUDALOAD_SOURCE_NONE;
    lt->major = lt->version = 0;
    lt->status = CUDALOAD_ERROR_NOT_ATTEMPTED;
    for (size_t i = lt->n_cands; i-- > 0;) {
        if (lt->cands[i].result != CUDALOAD_OK) continue;
        char *r = cl_strdup(reason);
        if (r) { /* out of memory: the old reason stays, the result still changes */
            free((char *)lt->cands[i].reason);
            lt->cands[i].reason = r;
        }
        lt->cands[i].result = why_st;
        break;
    }
}

/* cublasLt is held for every libcublas candidate: a copy already in the process, or the
 * CUDALOAD_CUBLASLT_PATH file (taken before the walk). */
static int cl_cublaslt_fixed(void) {
    const cl_lib_state *lt = &g.lib[CUDALOAD_LIB_CUBLASLT];
    return lt->status == CUDALOAD_OK && (lt->source == CUDALOAD_SOURCE_LOADED || lt->source == CUDALOAD_SOURCE_OVERRIDE);
}

/*
 * Tries one file for lib (not the driver). For cuBLAS, its libcublasLt is tried first
 * from the same directory (unless one is held for every candidate), because libcublas
 * needs it and ld.so would otherwise look for it elsewhere. Records the candidate either way.
 * major is 0 for an exact file whose name and DT_SONAME carry none: the version the loaded
 * file reports then decides it, and it is gated like any other candidate.
 */
static cudaload_status cl_try_file(cudaload_lib lib, const char *path, cudaload_source source, int major,
                                   long root_index) {
    cl_lib_state *ls = &g.lib[lib];
    cl_buf why = {0};
    cudaload_status st;
    int lt_fixed = cl_cublaslt_fixed();
    if (lib == CUDALOAD_LIB_CUBLAS && !lt_fixed) {
        /* no major in the name: the runtime's (cuBLAS never mixes majors) */
        int lt_major = major ? major : g.lib[CUDALOAD_LIB_CUDART].major;
        char *dir = cl_strdup(path);
        char *slash = dir ? strrchr(dir, '/') : NULL;
        if (slash) *slash = 0;
        char *lt = slash ? cl_path_join(dir, cl_soname(CUDALOAD_LIB_CUBLASLT, lt_major)) : NULL;
        free(dir);
        if (!lt) return CUDALOAD_ERROR_OUT_OF_MEMORY;
        st = cl_try_file(CUDALOAD_LIB_CUBLASLT, lt, source, lt_major, root_index);
        if (st != CUDALOAD_OK) {
            cl_buf_printf(&why, "skipped: its dependency %s cannot be used (see cublasLt candidates)", lt);
            cl_add_candidate(ls, path, source, st, cl_buf_str(&why));
            free(lt);
            cl_buf_free(&why);
            return st;
        }
        free(lt);
    }
    st = cl_open_check_file(path, &why);
    if (st == CUDALOAD_OK && cl_find_only()) {
        cl_add_candidate(ls, path, source, CUDALOAD_OK, "found (find-only: not loaded)");
        cl_take(ls, NULL, path, major ? cl_soname(lib, major) : NULL, source, 0, major, root_index);
        cl_buf_free(&why);
        return CUDALOAD_OK;
    }
    void *h = NULL;
    int version = 0;
    if (st == CUDALOAD_OK) {
        h = cl_open_path(path, &why);
        if (!h) st = CUDALOAD_ERROR_NOT_FOUND;
    }
    if (st == CUDALOAD_OK) {
        st = cl_accept_handle(lib, h, major, &version, &why);
        if (st == CUDALOAD_OK && !major) {
            major = lib == CUDALOAD_LIB_CUDART ? version / 1000 : version / 10000;
            st = cl_major_check(lib, major, &why);
            if (st != CUDALOAD_OK) cl_resolve_clear(lib);
        }
        if (st != CUDALOAD_OK) {
            dlclose(h);
            h = NULL;
        }
    }
    if (st != CUDALOAD_OK) {
        cl_add_candidate(ls, path, source, st, cl_buf_str(&why));
        cl_buf_free(&why);
        /* cuBLAS rejected: drop the cublasLt that was loaded for it */
        if (lib == CUDALOAD_LIB_CUBLAS && !lt_fixed)
            cl_drop_cublaslt(st, "closed again: the libcublas next to it cannot be used (see cublas candidates)");
        return st;
    }
    cl_add_candidate(ls, path, source, CUDALOAD_OK, "taken");
    cl_take(ls, h, path, cl_soname(lib, major), source, 0, major, root_index);
    ls->version = version;
    cl_buf_free(&why);
    return CUDALOAD_OK;
}

/* Majors to try for lib, newest first: cuBLAS only in cudart's major. */
static size_t cl_majors_for(cudaload_lib lib, int majors[CL_MAX_MAJORS]) {
    size_t n = 0;
    int cudart_major = g.lib[CUDALOAD_LIB_CUDART].major;
    for (size_t i = 0; i < CL_MAX_MAJORS; i++) {
        if ((lib == CUDALOAD_LIB_CUBLAS || lib == CUDALOAD_LIB_CUBLASLT) && cudart_major &&
            cl_known_majors[i] != cudart_major)
            continue;
        majors[n++] = cl_known_majors[i];
    }
    return n;
}

/* Step 1: a copy already in the process. */
static int cl_try_loaded(cudaload_lib lib) {
    cl_lib_state *ls = &g.lib[lib];
    for (size_t i = 0; i < CL_MAX_MAJORS; i++) {
        int major = cl_known_majors[i];
        const char *soname = cl_soname(lib, major);
        char *real = NULL;
        void *h = cl_open_loaded(soname, &real);
        if (!h) continue;
        const char *where = real ? real : soname;
        if (cl_major_gate(lib, where, CUDALOAD_SOURCE_LOADED, major) != CUDALOAD_OK) {
            dlclose(h); /* drops only the reference NOLOAD took */
            free(real);
            continue;
        }
        cl_buf why = {0};
        int version = 0;
        cudaload_status st = cl_accept_handle(lib, h, major, &version, &why);
        if (st != CUDALOAD_OK) {
            cl_add_candidate(ls, where, CUDALOAD_SOURCE_LOADED, st, cl_buf_str(&why));
            dlclose(h);
        } else {
            cl_add_candidate(ls, where, CUDALOAD_SOURCE_LOADED, CUDALOAD_OK, "already loaded in the process: reused");
            cl_take(ls, h, where, soname, CUDALOAD_SOURCE_LOADED, 1, major, -1);
            ls->version = version;
        }
        cl_buf_free(&why);
        free(real);
        if (st == CUDALOAD_OK) return 1;
    }
    return 0;
}

/* A copy already in the process won over an exact file given for lib: the rule (a library is
 * never loaded twice) stays, but the file is recorded as a candidate that says so. */
static void cl_note_loaded_over_exact(cudaload_lib lib) {
    const char *file = g.cfg.file[lib];
    cl_lib_state *ls = &g.lib[lib];
    if (!file || ls->status != CUDALOAD_OK) return;
    char *real = realpath(file, NULL);
    int same = real && ls->path && strcmp(real, ls->path) == 0;
    free(real);
    cl_buf why = {0};
    if (same)
        cl_buf_printf(&why, "the copy already loaded in the process is this file: reused");
    else
        cl_buf_printf(&why, "not used: %s is already loaded in the process from %s, and a loaded copy is always "
                            "reused (never a second copy); %s is ignored",
                      ls->soname ? ls->soname : cudaload_lib_name(lib), ls->path ? ls->path : "?",
                      g.cfg.file_origin[lib] ? g.cfg.file_origin[lib] : "the exact file");
    cl_add_candidate(ls, file, CUDALOAD_SOURCE_OVERRIDE, same ? CUDALOAD_OK : CUDALOAD_ERROR_OVERRIDE_UNUSABLE,
                     cl_buf_str(&why));
    cl_buf_free(&why);
}

/* The system search for one library of a major: dlopen by SONAME, so ld.so picks the file
 * (LD_LIBRARY_PATH, ld.so.cache, the default directories), or with find-only that file
 * located the same way without loading it. Records the candidate, takes the library when it
 * passes; returns its status. */
static cudaload_status cl_system_take(cudaload_lib lib, int major) {
    cl_lib_state *ls = &g.lib[lib];
    const char *soname = cl_soname(lib, major);
    char label[96];
    snprintf(label, sizeof label, "%s (system search)", soname);
    cl_buf why = {0};
    cudaload_status st;
    if (cl_find_only()) {
        char *path = cl_search_system_path(soname, g.cfg.secure);
        if (!path) {
            cl_add_candidate(ls, label, CUDALOAD_SOURCE_SYSTEM, CUDALOAD_ERROR_NOT_FOUND,
                             "not in LD_LIBRARY_PATH, /etc/ld.so.cache or the default directories");
            return CUDALOAD_ERROR_NOT_FOUND;
        }
        st = cl_open_check_file(path, &why);
        cl_add_candidate(ls, path, CUDALOAD_SOURCE_SYSTEM, st,
                         st == CUDALOAD_OK ? "found (find-only: not loaded)" : cl_buf_str(&why));
        if (st == CUDALOAD_OK) cl_take(ls, NULL, path, soname, CUDALOAD_SOURCE_SYSTEM, 0, major, -1);
        free(path);
        cl_buf_free(&why);
        return st;
    }
    void *h = cl_open_path(soname, &why);
    int version = 0;
    st = h ? cl_accept_handle(lib, h, major, &version, &why) : CUDALOAD_ERROR_NOT_FOUND;
    char *real = h ? cl_handle_path(h) : NULL;
    const char *where = real ? real : label;
    cl_add_candidate(ls, where, CUDALOAD_SOURCE_SYSTEM, st, st == CUDALOAD_OK ? "taken" : cl_buf_str(&why));
    if (st == CUDALOAD_OK) {
        cl_take(ls, h, where, soname, CUDALOAD_SOURCE_SYSTEM, 0, major, -1);
        ls->version = version;
    } else if (h) {
        dlclose(h);
    }
    free(real);
    cl_buf_free(&why);
    return st;
}

/* Step 4: the system search, dlopen by SONAME (or its find-only emulation). */
static int cl_try_system(cudaload_lib lib, int major) {
    cl_lib_state *ls = &g.lib[lib];
    const char *soname = cl_soname(lib, major);
    char label[96];
    snprintf(label, sizeof label, "%s (system search)", soname);
    cl_buf gwhy = {0};
    cudaload_status gst = cl_major_check(lib, major, &gwhy);
    if (gst != CUDALOAD_OK) {
        /* A SONAME the gate skips is located first, without loading (the find-only
         * emulation): one installed nowhere is NOT_FOUND, not "too old", so that a user with
         * no runtime at all is told to install one; one that exists is recorded by its path. */
        char *found = cl_search_system_path(soname, g.cfg.secure);
        if (!found)
            cl_add_candidate(ls, label, CUDALOAD_SOURCE_SYSTEM, CUDALOAD_ERROR_NOT_FOUND,
                             "not in LD_LIBRARY_PATH, /etc/ld.so.cache or the default directories");
        else
            cl_add_skip(lib, found, CUDALOAD_SOURCE_SYSTEM, gst, &gwhy);
        free(found);
        cl_buf_free(&gwhy);
        return 0;
    }
    cl_buf_free(&gwhy);
    if (lib == CUDALOAD_LIB_CUBLAS && !cl_cublaslt_fixed()) {
        /* cublasLt first, by SONAME, as ld.so would pick it for libcublas (unless one is held
         * already: a loaded copy or the CUDALOAD_CUBLASLT_PATH file); find-only locates it
         * the same way, so it reports the cublasLt a real load takes */
        cudaload_status lt_st = cl_system_take(CUDALOAD_LIB_CUBLASLT, major);
        if (lt_st != CUDALOAD_OK) {
            cl_add_candidate(ls, label, CUDALOAD_SOURCE_SYSTEM, lt_st,
                             "skipped: its dependency cublasLt cannot be used (see cublasLt candidates)");
            return 0;
        }
    }
    return cl_system_take(lib, major) == CUDALOAD_OK;
}

/* Step 3 for one root: the newest allowed major first, each of the root's directories. */
static int cl_try_root(cudaload_lib lib, size_t r) {
    const cl_root *root = &g.roots.items[r];
    if (!root->pub.exists) return 0;
    int majors[CL_MAX_MAJORS];
    size_t nm = cl_majors_for(lib, majors);
    for (size_t mi = 0; mi < nm; mi++) {
        char *dirs[3];
        size_t nd = cl_search_dirs(root->pub.path, lib, majors[mi], dirs);
        int taken = 0;
        for (size_t d = 0; d < nd; d++) {
            char *path = taken ? NULL : cl_path_join(dirs[d], cl_soname(lib, majors[mi]));
            if (path && !cl_lexists(path)) cl_note_unsearchable(lib, path, root->pub.source);
            else if (path && cl_major_gate(lib, path, root->pub.source, majors[mi]) == CUDALOAD_OK)
                taken = cl_try_file(lib, path, root->pub.source, majors[mi], (long)r) == CUDALOAD_OK;
            free(path);
            free(dirs[d]);
        }
        if (taken) return 1;
    }
    return 0;
}

/* Did the walk of lib skip a candidate of this major for the driver? */
static int cl_skipped_major_for_driver(const cl_lib_state *ls, int major) {
    char needle[32];
    snprintf(needle, sizeof needle, "CUDA %d runtime needs", major);
    for (size_t i = 0; i < ls->n_cands; i++)
        if (ls->cands[i].result == CUDALOAD_ERROR_DRIVER_TOO_OLD && strstr(ls->cands[i].reason, needle)) return 1;
    return 0;
}

/* The fix for DRIVER_TOO_OLD depends on the driver: a CUDA 11 driver can run no runtime
 * libcudaload supports, so only a driver upgrade helps; a CUDA 12 driver can run the CUDA 12
 * wheels in place of CUDA 13 ones. */
static void cl_describe_driver_fix(const cl_lib_state *ls, cl_buf *b) {
    int dv = g.drv.version, dmaj = dv / 1000;
    if (g.drv.loaded && dv > 0 && dmaj < 12) {
        cl_buf_printf(b, "  fix: upgrade the NVIDIA driver: it supports CUDA %d.%d, and libcudaload needs a CUDA 12 "
                         "driver (branch >= 525) or a CUDA 13 driver (branch >= 580); no runtime can help\n",
                      dmaj, (dv % 1000) / 10);
    } else if (g.drv.loaded && dmaj == 12 && cl_skipped_major_for_driver(ls, 13) &&
               (g.drv.branch_major == 0 || g.drv.branch_major >= cl_min_branch_for_major(12))) {
        cl_buf_printf(b, "  fix: install the CUDA 12 wheels (pip install nvidia-cuda-runtime-cu12 nvidia-cublas-cu12), "
                         "which this driver (CUDA %d.%d) runs, or upgrade the NVIDIA driver to branch >= 580 (CUDA 13)\n",
                      dmaj, (dv % 1000) / 10);
    } else {
        cl_buf_printf(b, "  fix: upgrade the NVIDIA driver (CUDA 13 needs branch >= 580, CUDA 12 branch >= 525)\n");
    }
}

/* The message for a library that could not be taken: every candidate, and how to fix it. */
static void cl_describe_failure(cudaload_lib lib, cl_buf *b) {
    cl_lib_state *ls = &g.lib[lib];
    cl_buf_printf(b, "%s: %s (%s)\n", cl_lib_names[lib], cudaload_status_string(ls->status),
                  cudaload_status_name(ls->status));
    if (ls->note) cl_buf_printf(b, "  %s\n", ls->note);
    if (ls->n_cands == 0) {
        cl_buf_printf(b, "  no candidate file was found\n");
    } else {
        cl_buf_printf(b, "  candidates, in the order tried:\n");
        for (size_t i = 0; i < ls->n_cands; i++)
            cl_buf_printf(b, "  %2zu. %s [%s]: %s\n", i + 1, ls->cands[i].path, cudaload_source_name(ls->cands[i].source),
                          ls->cands[i].reason);
    }
    if (lib == CUDALOAD_LIB_CUDART || lib == CUDALOAD_LIB_CUBLAS || lib == CUDALOAD_LIB_CUBLASLT) {
        cl_buf_printf(b, "  roots searched:");
        if (g.roots.n == 0) cl_buf_printf(b, " none");
        for (size_t i = 0; i < g.roots.n; i++)
            cl_buf_printf(b, "%s %s (%s%s)", i ? "," : "", g.roots.items[i].pub.path,
                          cudaload_source_name(g.roots.items[i].pub.source),
                          g.roots.items[i].pub.exists ? "" : ", missing");
        cl_buf_printf(b, "%s\n", (g.cfg.sources & CUDALOAD_SOURCE_BIT(CUDALOAD_SOURCE_SYSTEM))
                                     ? "; then the system search" : "; system search scoped out");
    }
    if (ls->status == CUDALOAD_ERROR_NOT_FOUND && lib == CUDALOAD_LIB_CUDART)
        cl_buf_printf(b, "  fix: pip install nvidia-cuda-runtime (CUDA 13) or nvidia-cuda-runtime-cu12 (CUDA 12)\n");
    if (ls->status == CUDALOAD_ERROR_NOT_FOUND && (lib == CUDALOAD_LIB_CUBLAS || lib == CUDALOAD_LIB_CUBLASLT))
        cl_buf_printf(b, "  fix: pip install %s\n",
                      g.lib[CUDALOAD_LIB_CUDART].major == 12 ? "nvidia-cublas-cu12" : "nvidia-cublas (CUDA 13)");
    if (ls->status == CUDALOAD_ERROR_DRIVER_TOO_OLD) cl_describe_driver_fix(ls, b);
    if (ls->status == CUDALOAD_ERROR_NO_DRIVER)
        cl_buf_printf(b, "  fix: install the NVIDIA driver (it provides libcuda.so.1; pip wheels never do), or set "
                         "CUDALOAD_DRIVER_PATH to its absolute path\n");
}

static void cl_finish_lib(cudaload_lib lib, cudaload_status st) {
    cl_lib_state *ls = &g.lib[lib];
    ls->status = st;
    if (st == CUDALOAD_OK && ls->loaded) {
        atomic_store_explicit(&cl_table_ready[lib], 1, memory_order_release);
        /* cublasLt is finished as a side effect of cuBLAS */
        if (lib == CUDALOAD_LIB_CUBLAS && g.lib[CUDALOAD_LIB_CUBLASLT].loaded) {
            g.lib[CUDALOAD_LIB_CUBLASLT].status = CUDALOAD_OK;
            atomic_store_explicit(&cl_table_ready[CUDALOAD_LIB_CUBLASLT], 1, memory_order_release);
        }
    }
    if (st != CUDALOAD_OK) {
        cl_buf b = {0};
        cl_describe_failure(lib, &b);
        free(ls->error);
        ls->error = cl_strdup(cl_buf_str(&b));
        cl_buf_free(&b);
    }
}

/* The status for a library none of whose candidates was taken: the most telling reason. */
static cudaload_status cl_failure_status(const cl_lib_state *ls) {
    for (size_t i = 0; i < ls->n_cands; i++)
        if (ls->cands[i].result == CUDALOAD_ERROR_DRIVER_TOO_OLD) return CUDALOAD_ERROR_DRIVER_TOO_OLD;
    for (size_t i = 0; i < ls->n_cands; i++)
        if (ls->cands[i].result == CUDALOAD_ERROR_MAJOR_MISMATCH) return CUDALOAD_ERROR_MAJOR_MISMATCH;
    return CUDALOAD_ERROR_NOT_FOUND;
}

/* Step 2: the exact file given for lib: used, or failed loudly with no fallback (the user
 * asked for this file). A name without a major (a copy renamed libcudart.so) is gated by the
 * major in its DT_SONAME, before it is opened, like any other candidate. */
static cudaload_status cl_try_exact(cudaload_lib lib) {
    cl_lib_state *ls = &g.lib[lib];
    const char *path = g.cfg.file[lib];
    int major = cl_major_from_name(path);
    if (!major) {
        char *so = cl_elf_file_soname(path);
        if (so) major = cl_major_from_name(so);
        free(so);
    }
    cudaload_status st = major ? cl_major_gate(lib, path, CUDALOAD_SOURCE_OVERRIDE, major) : CUDALOAD_OK;
    if (st == CUDALOAD_OK) st = cl_try_file(lib, path, CUDALOAD_SOURCE_OVERRIDE, major, -1);
    if (st == CUDALOAD_OK) return CUDALOAD_OK;
    cl_set_note(ls, g.cfg.file_origin[lib], path,
                ls->n_cands ? ls->cands[ls->n_cands - 1].reason : cudaload_status_string(st));
    return CUDALOAD_ERROR_OVERRIDE_UNUSABLE;
}

/* The whole walk for cudart or cuBLAS. */
static cudaload_status cl_find(cudaload_lib lib) {
    cl_lib_state *ls = &g.lib[lib];
    ls->attempted = 1;
    ls->root_index = -1;
    cl_debug("searching %s", cl_lib_names[lib]);
    if (lib == CUDALOAD_LIB_CUBLAS) {
        /* cublasLt first: when cuBLAS is already loaded, so is its cublasLt */
        g.lib[CUDALOAD_LIB_CUBLASLT].attempted = 1;
        if (cl_try_loaded(CUDALOAD_LIB_CUBLAS)) {
            if (!cl_try_loaded(CUDALOAD_LIB_CUBLASLT)) g.lib[CUDALOAD_LIB_CUBLASLT].status = CUDALOAD_ERROR_NOT_FOUND;
            else cl_note_loaded_over_exact(CUDALOAD_LIB_CUBLASLT);
            cl_note_loaded_over_exact(CUDALOAD_LIB_CUBLAS);
            return ls->status;
        }
        /* CUDALOAD_CUBLASLT_PATH: that file is the cublasLt of every libcublas candidate (exact
         * file, roots, system), so it is taken first: used, or failed loudly */
        if (g.cfg.file[CUDALOAD_LIB_CUBLASLT] && cl_try_exact(CUDALOAD_LIB_CUBLASLT) != CUDALOAD_OK) {
            cl_lib_state *lt = &g.lib[CUDALOAD_LIB_CUBLASLT];
            cl_buf b = {0};
            cl_buf_printf(&b, "not searched, because its dependency cannot be used: %s", lt->note ? lt->note : "");
            free(ls->note);
            ls->note = cl_strdup(cl_buf_str(&b));
            cl_buf_free(&b);
            return CUDALOAD_ERROR_OVERRIDE_UNUSABLE;
        }
    } else if (cl_try_loaded(lib)) {
        cl_note_loaded_over_exact(lib);
        return CUDALOAD_OK;
    }

    /* 2. exact file */
    if (g.cfg.file[lib]) return cl_try_exact(lib);

    /* 3. roots: cuBLAS looks first in the root its runtime came from */
    long first = -1;
    if (lib == CUDALOAD_LIB_CUBLAS && g.lib[CUDALOAD_LIB_CUDART].root_index >= 0) {
        first = g.lib[CUDALOAD_LIB_CUDART].root_index;
        if (cl_try_root(lib, (size_t)first)) return CUDALOAD_OK;
    }
    for (size_t r = 0; r < g.roots.n; r++)
        if ((long)r != first && cl_try_root(lib, r)) return CUDALOAD_OK;

    /* 4. system */
    if (g.cfg.sources & CUDALOAD_SOURCE_BIT(CUDALOAD_SOURCE_SYSTEM)) {
        int majors[CL_MAX_MAJORS];
        size_t nm = cl_majors_for(lib, majors);
        for (size_t i = 0; i < nm; i++)
            if (cl_try_system(lib, majors[i])) return CUDALOAD_OK;
    }
    return cl_failure_status(ls);
}

/* Ends the cuBLAS step (init with CUDALOAD_FLAG_LOAD_CUBLAS, or cudaload_load_cublas). When
 * cuBLAS failed, libcudaload holds no cublasLt: one it opened for cuBLAS is closed again and
 * its status is not OK, so cudaload_cublaslt() and the info never present a cublasLt that
 * nothing uses. (A cublasLt that was in the process before is never taken without its
 * libcublas, see cl_find.) */
static void cl_finish_cublas(cudaload_status st) {
    cl_finish_lib(CUDALOAD_LIB_CUBLAS, st);
    if (st == CUDALOAD_OK) return;
    cl_lib_state *lt = &g.lib[CUDALOAD_LIB_CUBLASLT];
    cl_drop_cublaslt(st, "closed again: no usable libcublas goes with it (see cublas candidates)");
    if (lt->status == CUDALOAD_OK) return; /* a copy in the process before libcudaload looked */
    cudaload_status lt_st = lt->note ? CUDALOAD_ERROR_OVERRIDE_UNUSABLE : cl_failure_status(lt);
    cl_finish_lib(CUDALOAD_LIB_CUBLASLT, lt->status == CUDALOAD_ERROR_NOT_ATTEMPTED ? lt_st : lt->status);
}

/* The driver: a loaded copy, the driver override, or the system's libcuda.so.1. Never from
 * wheels or roots, and never the unversioned libcuda.so (the toolkit's link stub). */
static cudaload_status cl_find_driver(void) {
    cl_lib_state *ls = &g.lib[CUDALOAD_LIB_DRIVER];
    const char *soname = "libcuda.so.1";
    ls->attempted = 1;
    ls->root_index = -1;
    char *real = NULL;
    void *h = cl_open_loaded(soname, &real);
    cudaload_source source = CUDALOAD_SOURCE_LOADED;
    const char *override = g.cfg.file[CUDALOAD_LIB_DRIVER];
    cl_buf why = {0};
    cudaload_status st = CUDALOAD_OK;
    if (h) {
        if (override) {
            cl_buf_printf(&why, "skipped: a libcuda.so.1 is already loaded from %s; a second driver cannot be loaded",
                          real ? real : "?");
            cl_add_candidate(ls, override, CUDALOAD_SOURCE_OVERRIDE, CUDALOAD_ERROR_OVERRIDE_UNUSABLE, cl_buf_str(&why));
            cl_buf_free(&why);
        }
    } else if (override) {
        source = CUDALOAD_SOURCE_OVERRIDE;
        real = cl_strdup(override);
        st = cl_open_check_file(override, &why);
        if (st == CUDALOAD_OK && !cl_find_only()) {
            h = cl_open_path(override, &why);
            if (!h) st = CUDALOAD_ERROR_NOT_FOUND;
        }
        if (st != CUDALOAD_OK) {
            cl_add_candidate(ls, override, source, CUDALOAD_ERROR_OVERRIDE_UNUSABLE, cl_buf_str(&why));
            cl_set_note(ls, g.cfg.file_origin[CUDALOAD_LIB_DRIVER], override, cl_buf_str(&why));
            cl_buf_free(&why);
            free(real);
            return CUDALOAD_ERROR_OVERRIDE_UNUSABLE;
        }
    } else {
        source = CUDALOAD_SOURCE_SYSTEM;
        if (cl_find_only()) {
            real = cl_search_system_path(soname, g.cfg.secure);
            if (!real) {
                cl_add_candidate(ls, "libcuda.so.1 (system search)", source, CUDALOAD_ERROR_NO_DRIVER,
                                 "not in LD_LIBRARY_PATH, /etc/ld.so.cache or the default directories");
                return CUDALOAD_ERROR_NO_DRIVER;
            }
        } else {
            h = cl_open_path(soname, &why);
            if (!h) {
                cl_add_candidate(ls, "libcuda.so.1 (system search)", source, CUDALOAD_ERROR_NO_DRIVER, cl_buf_str(&why));
                cl_buf_free(&why);
                return CUDALOAD_ERROR_NO_DRIVER;
            }
            real = cl_handle_path(h);
        }
    }
    const char *where = real ? real : soname;
    if (cl_find_only() && !h) {
        cl_add_candidate(ls, where, source, CUDALOAD_OK, "found (find-only: not loaded)");
        cl_take(ls, NULL, where, soname, source, 0, 0, -1);
        free(real);
        return CUDALOAD_OK;
    }
    st = cl_resolve(CUDALOAD_LIB_DRIVER, h, &why);
    const cudaload_driver_table *d = cl_table_ptr(CUDALOAD_LIB_DRIVER);
    int version = 0;
    if (st == CUDALOAD_OK) {
        CUresult r = d->cuDriverGetVersion(&version);
        if (r != CUDA_SUCCESS || version <= 0) {
            const char *name = NULL;
            if (d->cuGetErrorName(r, &name) != CUDA_SUCCESS) name = NULL;
            cl_buf_printf(&why, "cuDriverGetVersion failed: %s (%d)%s", name ? name : "unknown error", (int)r,
                          r == 34 ? ": this is the toolkit's link stub, not a driver" : "");
            st = CUDALOAD_ERROR_NO_DRIVER;
            cl_resolve_clear(CUDALOAD_LIB_DRIVER);
        }
    }
    if (st != CUDALOAD_OK) {
        cudaload_status rep = source == CUDALOAD_SOURCE_OVERRIDE ? CUDALOAD_ERROR_OVERRIDE_UNUSABLE : st;
        cl_add_candidate(ls, where, source, rep, cl_buf_str(&why));
        if (source == CUDALOAD_SOURCE_OVERRIDE)
            cl_set_note(ls, g.cfg.file_origin[CUDALOAD_LIB_DRIVER], where, cl_buf_str(&why));
        if (source != CUDALOAD_SOURCE_LOADED) dlclose(h);
        cl_buf_free(&why);
        free(real);
        return rep;
    }
    cl_add_candidate(ls, where, source, CUDALOAD_OK,
                     source == CUDALOAD_SOURCE_LOADED ? "already loaded in the process: reused" : "taken");
    cl_take(ls, h, where, soname, source, source == CUDALOAD_SOURCE_LOADED, version / 1000, -1);
    ls->version = version;
    g.drv.loaded = 1;
    g.drv.version = version;
    g.drv.branch = cl_read_driver_branch();
    g.drv.branch_major = g.drv.branch ? atoi(g.drv.branch) : 0;
    cl_debug("driver: CUDA %d.%d (cuDriverGetVersion %d), branch %s", version / 1000, (version % 1000) / 10, version,
             g.drv.branch ? g.drv.branch : "unknown");
    cl_buf_free(&why);
    free(real);
    return CUDALOAD_OK;
}

int cl_config_backend(void) {
    cl_lock();
    int b = g.done ? g.cfg.backend : -1;
    cl_unlock();
    return b;
}

const char *cl_env(const char *name) {
    if (!g.done || (g.cfg.flags & CUDALOAD_FLAG_IGNORE_ENV)) return NULL;
    return cl_config_env(&g.cfg, name);
}

/* ---- public API ---- */

static cudaload_status cl_init_locked(const cudaload_options *opts) {
    cl_buf err = {0};
    for (int i = 0; i < CUDALOAD_LIB_COUNT_; i++) g.lib[i].status = CUDALOAD_ERROR_NOT_ATTEMPTED;
    cudaload_status st = cl_config_build(&g.cfg, opts, &err);
    if (st != CUDALOAD_OK) {
        g.error = cl_strdup(cl_buf_str(&err));
        cl_buf_free(&err);
        return st;
    }
    Dl_info self;
    const char *self_path = NULL;
    void *self_addr = (void *)cudaload_init;
    if (dladdr(self_addr, &self) && self.dli_fname && self.dli_fname[0] == '/') self_path = self.dli_fname;
    if ((st = cl_search_build_roots(&g.roots, &g.cfg, self_path)) != CUDALOAD_OK) {
        g.error = cl_strdup("out of memory while building the search roots");
        return st;
    }

    cudaload_status drv = cl_find_driver();
    cl_finish_lib(CUDALOAD_LIB_DRIVER, drv);
    cudaload_status rt = cl_find(CUDALOAD_LIB_CUDART);
    cl_finish_lib(CUDALOAD_LIB_CUDART, rt);
    cudaload_status blas = CUDALOAD_OK;
    if ((g.cfg.flags & CUDALOAD_FLAG_LOAD_CUBLAS) && rt == CUDALOAD_OK) {
        blas = cl_find(CUDALOAD_LIB_CUBLAS);
        cl_finish_cublas(blas);
        g.cublas_done = 1;
    }
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
    if (!g.done) {
        g.status = cl_init_locked(opts);
        g.done = 1;
        cl_debug("init: %s", cudaload_status_name(g.status));
    }
    cudaload_status st = g.status;
    if (st != CUDALOAD_OK) cl_set_error(g.error);
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

cudaload_status cudaload_load_cublas(void) {
    cl_lock();
    cudaload_status st = cl_need_init();
    if (st == CUDALOAD_OK && !g.cublas_done) {
        cl_lib_state *rt = &g.lib[CUDALOAD_LIB_CUDART];
        if (rt->status != CUDALOAD_OK) {
            cl_buf b = {0};
            cl_buf_printf(&b, "cublas: not searched: cuBLAS needs the CUDA runtime, which was not loaded\n%s",
                          rt->error ? rt->error : "");
            g.lib[CUDALOAD_LIB_CUBLAS].status = rt->status;
            g.lib[CUDALOAD_LIB_CUBLAS].error = cl_strdup(cl_buf_str(&b));
            cl_buf_free(&b);
        } else {
            cl_finish_cublas(cl_find(CUDALOAD_LIB_CUBLAS));
        }
        g.cublas_done = 1;
    }
    if (st == CUDALOAD_OK) {
        st = g.lib[CUDALOAD_LIB_CUBLAS].status;
        if (st != CUDALOAD_OK) cl_set_error(g.lib[CUDALOAD_LIB_CUBLAS].error);
    }
    cl_unlock();
    return st;
}

cudaload_status cudaload_get_library_info(cudaload_lib lib, cudaload_library_info *out) {
    /* any size from the first version's up: an older caller gets the prefix it has, a newer
     * one zeros in the fields this version does not know */
    if ((unsigned)lib >= CUDALOAD_LIB_COUNT_ || !out || out->size < CL_LIBRARY_INFO_SIZE_V1) {
        cl_set_errorf("cudaload_get_library_info: invalid lib %d, or out is NULL or its size (%zu) is smaller than "
                      "the first version's cudaload_library_info (%zu): set it to sizeof(cudaload_library_info)",
                      (int)lib, out ? out->size : 0, (size_t)CL_LIBRARY_INFO_SIZE_V1);
        return CUDALOAD_ERROR_INVALID_ARGUMENT;
    }
    cudaload_library_info full;
    memset(&full, 0, sizeof full);
    cl_lock();
    const cl_lib_state *ls = &g.lib[lib];
    full.size = sizeof full;
    full.lib = lib;
    full.name = cl_lib_names[lib];
    full.status = g.done && ls->attempted ? ls->status : CUDALOAD_ERROR_NOT_ATTEMPTED;
    full.loaded = ls->loaded;
    full.path = ls->status == CUDALOAD_OK ? ls->path : NULL;
    full.soname = ls->status == CUDALOAD_OK ? ls->soname : NULL;
    full.source = ls->status == CUDALOAD_OK ? ls->source : CUDALOAD_SOURCE_NONE;
    full.already_loaded = ls->already_loaded;
    full.major = ls->major;
    full.version = ls->version;
    full.driver_branch = lib == CUDALOAD_LIB_DRIVER ? g.drv.branch : NULL;
    full.n_candidates = ls->n_cands;
    full.candidates = ls->cands;
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

cudaload_status cudaload_device_count(int *count) {
    if (!count) {
        cl_set_error("cudaload_device_count: count is NULL");
        return CUDALOAD_ERROR_INVALID_ARGUMENT;
    }
    *count = 0;
    cl_lock();
    cudaload_status st = cl_need_init();
    if (st == CUDALOAD_OK && !g.devices_done) {
        g.devices_done = 1;
        cl_buf b = {0};
        const cudaload_driver_table *d = cl_table_ptr(CUDALOAD_LIB_DRIVER);
        if (!g.drv.loaded) {
            g.devices_status = CUDALOAD_ERROR_NO_DRIVER;
            cl_buf_printf(&b, "no CUDA driver is loaded, so there is no device\n%s",
                          g.lib[CUDALOAD_LIB_DRIVER].error ? g.lib[CUDALOAD_LIB_DRIVER].error : "");
        } else {
            CUresult r = d->cuInit(0);
            int n = 0;
            if (r == CUDA_SUCCESS) r = d->cuDeviceGetCount(&n);
            const char *name = NULL;
            if (r != CUDA_SUCCESS && d->cuGetErrorName(r, &name) != CUDA_SUCCESS) name = NULL;
            if (r == CUDA_ERROR_NO_DEVICE || (r == CUDA_SUCCESS && n == 0)) {
                g.devices_status = CUDALOAD_ERROR_NO_DEVICE;
                cl_buf_printf(&b, "the CUDA driver (CUDA %d.%d) reports no device: %s", g.drv.version / 1000,
                              (g.drv.version % 1000) / 10, r == CUDA_SUCCESS ? "device count 0" : name ? name : "?");
            } else if (r != CUDA_SUCCESS) {
                g.devices_status = CUDALOAD_ERROR_CUDA;
                cl_buf_printf(&b, "cuInit/cuDeviceGetCount failed: %s (%d)", name ? name : "unknown error", (int)r);
            } else {
                g.devices_status = CUDALOAD_OK;
                g.device_count = n;
            }
        }
        if (g.devices_status != CUDALOAD_OK) g.devices_error = cl_strdup(cl_buf_str(&b));
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

int cudaload_has_symbol(cudaload_lib lib, const char *name) {
    cl_lock();
    int r = (unsigned)lib < CUDALOAD_LIB_COUNT_ && g.lib[lib].loaded ? cl_symbol_present(lib, name) : 0;
    cl_unlock();
    return r;
}

size_t cudaload_symbol_at(cudaload_lib lib, size_t i, const char **name, int *required, int *present) {
    cl_lock();
    size_t n = cl_symbol_count(lib);
    if (i < n) cl_symbol_info(lib, i, name, required, present);
    cl_unlock();
    return i < n ? n : 0;
}

void *cudaload_handle(cudaload_lib lib) {
    cl_lock();
    void *h = (unsigned)lib < CUDALOAD_LIB_COUNT_ && g.lib[lib].loaded ? g.lib[lib].handle : NULL;
    cl_unlock();
    return h;
}

static const void *cl_table_if_loaded(cudaload_lib lib) {
    if (atomic_load_explicit(&cl_table_ready[lib], memory_order_acquire)) return cl_table_ptr(lib);
    cl_lock();
    const void *t = NULL;
    if (g.done && g.lib[lib].loaded && g.lib[lib].status == CUDALOAD_OK) {
        t = cl_table_ptr(lib);
    } else if (!g.done) {
        cl_set_error("libcudaload is not initialized: call cudaload_init() first");
    } else {
        cl_set_error(g.lib[lib].error ? g.lib[lib].error : "library not loaded");
    }
    cl_unlock();
    return t;
}

const cudaload_driver_table *cudaload_driver(void) { return cl_table_if_loaded(CUDALOAD_LIB_DRIVER); }
const cudaload_cudart_table *cudaload_cudart(void) { return cl_table_if_loaded(CUDALOAD_LIB_CUDART); }
const cudaload_cublaslt_table *cudaload_cublaslt(void) { return cl_table_if_loaded(CUDALOAD_LIB_CUBLASLT); }

const cudaload_cublas_table *cudaload_cublas(void) {
    if (atomic_load_explicit(&cl_table_ready[CUDALOAD_LIB_CUBLAS], memory_order_acquire))
        return cl_table_ptr(CUDALOAD_LIB_CUBLAS);
    if (cudaload_load_cublas() != CUDALOAD_OK) return NULL;
    return cl_table_if_loaded(CUDALOAD_LIB_CUBLAS);
}
