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

static void cl_lock(void) {
    pthread_once(&cl_atfork_once, cl_atfork_register);
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

/*
 * Tries one file for lib (not the driver). For cuBLAS, its libcublasLt is tried first
 * from the same directory (or the cublasLt override), because libcublas needs it and
 * ld.so would otherwise look for it elsewhere. Records the candidate either way.
 */
static cudaload_status cl_try_file(cudaload_lib lib, const char *path, cudaload_source source, int major,
                                   long root_index) {
    cl_lib_state *ls = &g.lib[lib];
    cl_buf why = {0};
    cudaload_status st;
    if (lib == CUDALOAD_LIB_CUBLAS && !(g.lib[CUDALOAD_LIB_CUBLASLT].status == CUDALOAD_OK &&
                                        g.lib[CUDALOAD_LIB_CUBLASLT].source == CUDALOAD_SOURCE_LOADED)) {
        char *lt = NULL;
        if (g.cfg.file[CUDALOAD_LIB_CUBLASLT]) {
            lt = cl_strdup(g.cfg.file[CUDALOAD_LIB_CUBLASLT]);
        } else {
            char *dir = cl_strdup(path);
            char *slash = dir ? strrchr(dir, '/') : NULL;
            if (slash) *slash = 0;
            lt = slash ? cl_path_join(dir, cl_soname(CUDALOAD_LIB_CUBLASLT, major)) : NULL;
            free(dir);
        }
        if (!lt) return CUDALOAD_ERROR_OUT_OF_MEMORY;
        cudaload_source lt_source = g.cfg.file[CUDALOAD_LIB_CUBLASLT] ? CUDALOAD_SOURCE_OVERRIDE : source;
        st = cl_try_file(CUDALOAD_LIB_CUBLASLT, lt, lt_source, major, root_index);
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
        cl_take(ls, NULL, path, cl_soname(lib, major), source, 0, major, root_index);
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
        if (st == CUDALOAD_OK && !major) major = lib == CUDALOAD_LIB_CUDART ? version / 1000 : version / 10000;
        if (st != CUDALOAD_OK) {
            dlclose(h);
            h = NULL;
        }
    }
    if (st != CUDALOAD_OK) {
        cl_add_candidate(ls, path, source, st, cl_buf_str(&why));
        cl_buf_free(&why);
        /* cuBLAS rejected: drop the cublasLt that was loaded for it */
        if (lib == CUDALOAD_LIB_CUBLAS && g.lib[CUDALOAD_LIB_CUBLASLT].handle &&
            g.lib[CUDALOAD_LIB_CUBLASLT].source != CUDALOAD_SOURCE_LOADED) {
            cl_lib_state *lt = &g.lib[CUDALOAD_LIB_CUBLASLT];
            dlclose(lt->handle);
            cl_resolve_clear(CUDALOAD_LIB_CUBLASLT);
            lt->handle = NULL;
            lt->loaded = 0;
            lt->status = CUDALOAD_ERROR_NOT_ATTEMPTED;
        }
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

/* Gate a major before touching a file of it; records the skip. */
static int cl_major_allowed(cudaload_lib lib, const char *path, cudaload_source source, int major) {
    cl_buf why = {0};
    cudaload_status st = cl_gate_major(&g.drv, g.cfg.cuda_major, major, &why);
    if (st == CUDALOAD_OK && (lib == CUDALOAD_LIB_CUBLAS || lib == CUDALOAD_LIB_CUBLASLT)) {
        int rt = g.lib[CUDALOAD_LIB_CUDART].major;
        if (rt && rt != major) {
            cl_buf_printf(&why, "CUDA %d, but the CUDA runtime taken is CUDA %d (majors are never mixed)", major, rt);
            st = CUDALOAD_ERROR_MAJOR_MISMATCH;
        }
    }
    if (st != CUDALOAD_OK) {
        cl_buf b = {0};
        cl_buf_printf(&b, "skipped: %s", cl_buf_str(&why));
        cl_add_candidate(&g.lib[lib], path, source, st, cl_buf_str(&b));
        cl_buf_free(&b);
    }
    cl_buf_free(&why);
    return st == CUDALOAD_OK;
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
        if (!cl_major_allowed(lib, where, CUDALOAD_SOURCE_LOADED, major)) {
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

/* Step 4: the system search, dlopen by SONAME (or its find-only emulation). */
static int cl_try_system(cudaload_lib lib, int major) {
    cl_lib_state *ls = &g.lib[lib];
    const char *soname = cl_soname(lib, major);
    char label[96];
    snprintf(label, sizeof label, "%s (system search)", soname);
    if (!cl_major_allowed(lib, label, CUDALOAD_SOURCE_SYSTEM, major)) return 0;
    if (cl_find_only()) {
        char *path = cl_search_system_path(soname, g.cfg.secure);
        if (!path) {
            cl_add_candidate(ls, label, CUDALOAD_SOURCE_SYSTEM, CUDALOAD_ERROR_NOT_FOUND,
                             "not in LD_LIBRARY_PATH, /etc/ld.so.cache or the default directories");
            return 0;
        }
        cl_buf why = {0};
        cudaload_status st = cl_open_check_file(path, &why);
        cl_add_candidate(ls, path, CUDALOAD_SOURCE_SYSTEM, st,
                         st == CUDALOAD_OK ? "found (find-only: not loaded)" : cl_buf_str(&why));
        if (st == CUDALOAD_OK) cl_take(ls, NULL, path, soname, CUDALOAD_SOURCE_SYSTEM, 0, major, -1);
        cl_buf_free(&why);
        free(path);
        return st == CUDALOAD_OK;
    }
    if (lib == CUDALOAD_LIB_CUBLAS) {
        /* let ld.so pick cublasLt the same way, by SONAME, and record which one */
        cl_lib_state *lt = &g.lib[CUDALOAD_LIB_CUBLASLT];
        if (!lt->loaded) {
            cl_buf why = {0};
            void *h = cl_open_path(cl_soname(CUDALOAD_LIB_CUBLASLT, major), &why);
            int version = 0;
            cudaload_status st = h ? cl_accept_handle(CUDALOAD_LIB_CUBLASLT, h, major, &version, &why)
                                   : CUDALOAD_ERROR_NOT_FOUND;
            char *real = h ? cl_handle_path(h) : NULL;
            const char *where = real ? real : cl_soname(CUDALOAD_LIB_CUBLASLT, major);
            cl_add_candidate(lt, where, CUDALOAD_SOURCE_SYSTEM, st, st == CUDALOAD_OK ? "taken" : cl_buf_str(&why));
            if (st == CUDALOAD_OK) {
                cl_take(lt, h, where, cl_soname(CUDALOAD_LIB_CUBLASLT, major), CUDALOAD_SOURCE_SYSTEM, 0, major, -1);
                lt->version = version;
            } else if (h) {
                dlclose(h);
            }
            free(real);
            if (st != CUDALOAD_OK) {
                cl_add_candidate(ls, label, CUDALOAD_SOURCE_SYSTEM, st,
                                 "skipped: its dependency cublasLt cannot be used (see cublasLt candidates)");
                cl_buf_free(&why);
                return 0;
            }
            cl_buf_free(&why);
        }
    }
    cl_buf why = {0};
    void *h = cl_open_path(soname, &why);
    int version = 0;
    cudaload_status st = h ? cl_accept_handle(lib, h, major, &version, &why) : CUDALOAD_ERROR_NOT_FOUND;
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
    return st == CUDALOAD_OK;
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
            else if (path && cl_major_allowed(lib, path, root->pub.source, majors[mi]))
                taken = cl_try_file(lib, path, root->pub.source, majors[mi], (long)r) == CUDALOAD_OK;
            free(path);
            free(dirs[d]);
        }
        if (taken) return 1;
    }
    return 0;
}

/* The message for a library that could not be taken: every candidate, and how to fix it. */
static void cl_describe_failure(cudaload_lib lib, cl_buf *b) {
    cl_lib_state *ls = &g.lib[lib];
    cl_buf_printf(b, "%s: %s (%s)\n", cl_lib_names[lib], cudaload_status_string(ls->status),
                  cudaload_status_name(ls->status));
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
    if (ls->status == CUDALOAD_ERROR_DRIVER_TOO_OLD)
        cl_buf_printf(b, "  fix: install an older runtime (e.g. pip install nvidia-cuda-runtime-cu12) or upgrade "
                         "the NVIDIA driver\n");
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
            return ls->status;
        }
    } else if (cl_try_loaded(lib)) {
        return CUDALOAD_OK;
    }

    /* 2. exact file: used or failed loudly, no fallback (the user asked for this file) */
    if (g.cfg.file[lib]) {
        const char *path = g.cfg.file[lib];
        int major = cl_major_from_name(path);
        cudaload_status st = CUDALOAD_OK;
        if (major && !cl_major_allowed(lib, path, CUDALOAD_SOURCE_OVERRIDE, major))
            st = ls->cands[ls->n_cands - 1].result;
        else
            st = cl_try_file(lib, path, CUDALOAD_SOURCE_OVERRIDE, major, -1);
        if (st == CUDALOAD_OK) return CUDALOAD_OK;
        cl_buf b = {0};
        cl_buf_printf(&b, "%s=%s cannot be used", g.cfg.file_origin[lib], path);
        cl_debug("%s", cl_buf_str(&b));
        cl_buf_free(&b);
        return CUDALOAD_ERROR_OVERRIDE_UNUSABLE;
    }

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
        cl_finish_lib(CUDALOAD_LIB_CUBLAS, blas);
        if (blas != CUDALOAD_OK && g.lib[CUDALOAD_LIB_CUBLASLT].status == CUDALOAD_ERROR_NOT_ATTEMPTED)
            cl_finish_lib(CUDALOAD_LIB_CUBLASLT, cl_failure_status(&g.lib[CUDALOAD_LIB_CUBLASLT]));
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
            cudaload_status s = cl_find(CUDALOAD_LIB_CUBLAS);
            cl_finish_lib(CUDALOAD_LIB_CUBLAS, s);
            if (s != CUDALOAD_OK && g.lib[CUDALOAD_LIB_CUBLASLT].status == CUDALOAD_ERROR_NOT_ATTEMPTED)
                cl_finish_lib(CUDALOAD_LIB_CUBLASLT, cl_failure_status(&g.lib[CUDALOAD_LIB_CUBLASLT]));
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
    if ((unsigned)lib >= CUDALOAD_LIB_COUNT_ || !out || out->size < sizeof *out) {
        cl_set_errorf("cudaload_library_info: invalid lib %d or out (size %zu, need %zu)", (int)lib,
                      out ? out->size : 0, sizeof *out);
        return CUDALOAD_ERROR_INVALID_ARGUMENT;
    }
    cl_lock();
    const cl_lib_state *ls = &g.lib[lib];
    size_t size = out->size;
    memset(out, 0, sizeof *out);
    out->size = size;
    out->lib = lib;
    out->name = cl_lib_names[lib];
    out->status = g.done && ls->attempted ? ls->status : CUDALOAD_ERROR_NOT_ATTEMPTED;
    out->loaded = ls->loaded;
    out->path = ls->status == CUDALOAD_OK ? ls->path : NULL;
    out->soname = ls->status == CUDALOAD_OK ? ls->soname : NULL;
    out->source = ls->status == CUDALOAD_OK ? ls->source : CUDALOAD_SOURCE_NONE;
    out->already_loaded = ls->already_loaded;
    out->major = ls->major;
    out->version = ls->version;
    out->driver_branch = lib == CUDALOAD_LIB_DRIVER ? g.drv.branch : NULL;
    out->n_candidates = ls->n_cands;
    out->candidates = ls->cands;
    cl_unlock();
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
    if (!version) return CUDALOAD_ERROR_INVALID_ARGUMENT;
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
    if (!count) return CUDALOAD_ERROR_INVALID_ARGUMENT;
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
