/*
 * walk.c -- the walk for one catalogue library, the same for every row:
 *
 *   1. a copy already in the process (dlopen(soname, RTLD_NOLOAD)) is reused, never loaded twice;
 *   2. the exact file given by CUDALOAD_<NAME>_PATH or the options: used, or failed loudly;
 *   3. the roots in order (search.c), the root the CUDA runtime came from first; within a root
 *      the newest CUDA major allowed, each of the root's directories for it;
 *   4. the system search (dlopen by SONAME).
 *
 * Every candidate goes through open.c (file check, dlopen), resolve.c (typed tables) and gate.c
 * (version, majors); its dependencies are taken first from the same root. A failed candidate
 * is recorded with a reason code and the walk goes on. Driver-like rows (the driver, NVML)
 * have steps 1, 2 and 4 only.
 *
 * One CUDA major for the process: the first library taken whose major is known pins it
 * (cl_ctx.major_pin); later libraries are searched in that major only.
 *
 * Run by one thread at a time (cl_ctx.walking, cudaload.c), with the context's lock held except
 * around foreign code: dlopen (constructors), dlclose (destructors), dlsym and the driver's
 * calls that fill a table, a library's version call, NVML (the cl_dl* helpers below,
 * cl_foreign_begin). The candidates' results are recorded with the lock held. A table is filled
 * in scratch and committed only for a candidate kept; it is published when its library's step
 * ends (the driver's by init, once the cuda-compat decision is made) and never changes after.
 */
#define _GNU_SOURCE
#include "cudaload_tables.h"
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define G cl_ctx

void (*cl_test_before_dlopen)(const char *path);
void (*cl_test_during_deps)(const char *path);
void (*cl_test_after_dlopen)(const char *path);

static const cl_row *row_of(int lib) { return cl_row_at((size_t)lib); }

/* lib's step ended, a load's (finished) or a find's (found): no walk searches it again, but a
 * load that forgets a find first (cl_unfind) */
static int cl_step_ended(int lib) { return G.lib[lib].finished || G.lib[lib].found; }

/* The catalogue id of row's dependency i, required ones first then optional ones (i below
 * 2 * CL_MAX_DEPS), or -1 for an empty slot or a name not in the catalogue. */
static int cl_dep_at(const cl_row *row, size_t i) {
    const char *name = i < CL_MAX_DEPS ? row->deps[i] : row->opt_deps[i - CL_MAX_DEPS];
    return name ? cl_catalogue_find(name) : -1;
}

/* This walk locates files without loading them: CUDALOAD_FLAG_FIND_ONLY, or cudaload_find_library. */
static int cl_find_only(void) { return (G.cfg.flags & CUDALOAD_FLAG_FIND_ONLY) != 0 || G.walk_find_only; }

/* ---- foreign code: each with the lock let go (cl_foreign_begin), lib the library it belongs to ---- */

static void *cl_dlopen(int lib, const char *path, cl_buf *why) {
    cl_foreign_begin(lib, "dlopen (its constructors)");
    void *h = cl_open_path(path, why);
    cl_foreign_end();
    return h;
}

static void *cl_dlopen_loaded(int lib, const char *soname, char **real) {
    cl_foreign_begin(lib, "dlopen (RTLD_NOLOAD)");
    void *h = cl_open_loaded(soname, real);
    cl_foreign_end();
    return h;
}

static void cl_dlclose(int lib, void *h) {
    cl_foreign_begin(lib, "dlclose (its destructors)");
    cl_plat_close(h);
    cl_foreign_end();
}

/* lib's table filled from h into the scratch table (dlsym; the driver's version call and
 * cuGetProcAddress); committed by the caller once the candidate is kept */
static cudaload_status cl_fill_scratch(int lib, void *h, cl_buf *why) {
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

/* ---- candidates ---- */

long cl_cands_add(cudaload_candidate **cands, cudaload_candidate_detail **details, size_t *n, size_t *cap,
                  const char *path, cudaload_source source, cudaload_status result, const cl_why *w) {
    cudaload_candidate_detail d = {w->reason, w->major, w->value, w->needed, NULL};
    cl_buf text = {0};
    cl_render_reason(&d, cl_buf_str(&w->text), &text);
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 8;
        cudaload_candidate *p = realloc(*cands, c * sizeof *p);
        if (p) *cands = p;
        cudaload_candidate_detail *q = p ? realloc(*details, c * sizeof *q) : NULL;
        if (q) *details = q;
        if (!p || !q) {
            cl_buf_free(&text);
            cl_oom();
            return -1;
        }
        *cap = c;
    }
    cudaload_candidate *cd = &(*cands)[*n];
    cd->path = cl_strdup(path);
    cd->reason = cl_strdup(cl_buf_str(&text));
    d.text = cl_strdup(cl_buf_str(&w->text));
    cl_buf_free(&text);
    if (!cd->path || !cd->reason || !d.text) {
        free((char *)cd->path);
        free((char *)cd->reason);
        free((char *)d.text);
        cl_oom();
        return -1;
    }
    cd->source = source;
    cd->result = result;
    (*details)[*n] = d;
    return (long)(*n)++;
}

/* Records a candidate of lib. Returns its index, or -1 when it could not be recorded (out of
 * memory: noted by cl_oom, so that the library's walk ends OUT_OF_MEMORY if it finds nothing). */
static long cl_record(int lib, const char *path, cudaload_source source, cudaload_status result, const cl_why *w) {
    cl_lib_state *ls = &G.lib[lib];
    long i = cl_cands_add(&ls->cands, &ls->details, &ls->n_cands, &ls->cap_cands, path, source, result, w);
    if (i >= 0) cl_debug("%s candidate %s [%s]: %s", row_of(lib)->name, path, cudaload_source_name(source), ls->cands[i].reason);
    return i;
}

/* A candidate with a reason that has no parameter but the major. */
static long cl_record_code(int lib, const char *path, cudaload_source source, cudaload_status result,
                           cudaload_reason reason, int major) {
    cl_why w = {0};
    cl_why_set(&w, reason, major, 0, 0, "%s", "");
    long i = cl_record(lib, path, source, result, &w);
    cl_why_free(&w);
    return i;
}

/* Candidate i of lib says something else now (a copy taken, then let go): its result, and its
 * reason rendered again from w. Out of memory: the old reason stays, the result still changes. */
static void cl_record_rewrite(int lib, size_t i, cudaload_status result, const cl_why *w) {
    cl_lib_state *ls = &G.lib[lib];
    cudaload_candidate_detail det = {w->reason, w->major, w->value, w->needed, NULL};
    cl_buf text = {0};
    cl_render_reason(&det, cl_buf_str(&w->text), &text);
    char *r = cl_strdup(cl_buf_str(&text)), *t = cl_strdup(cl_buf_str(&w->text));
    cl_buf_free(&text);
    if (r && t) {
        free((char *)ls->cands[i].reason);
        free((char *)ls->details[i].text);
        ls->cands[i].reason = r;
        det.text = t;
        ls->details[i] = det;
    } else {
        free(r);
        free(t);
        cl_oom();
    }
    ls->cands[i].result = result;
}

static int cl_already_candidate(int lib, const char *path) {
    const cl_lib_state *ls = &G.lib[lib];
    for (size_t i = 0; i < ls->n_cands; i++)
        if (strcmp(ls->cands[i].path, path) == 0) return 1;
    return 0;
}

static int cl_lexists(const char *path) { return cl_plat_lexists(path); }

/* A candidate path too long for the system (CL_PATH_LIMIT) is recorded with PATH_TOO_LONG, not
 * silently passed over (the system calls would fail on it with ENAMETOOLONG and it would look
 * absent): 1 when path does not fit. */
static int cl_path_too_long(int lib, const char *path, cudaload_source source, int major) {
    size_t len = strlen(path);
    if (len < CL_PATH_LIMIT) return 0;
    if (!cl_already_candidate(lib, path)) {
        char *dir = cl_dir_of(path);
        cl_why w = {0};
        cl_why_set(&w, CUDALOAD_REASON_PATH_TOO_LONG, major, len > INT_MAX ? INT_MAX : (int)len, CL_PATH_LIMIT, "%s",
                   dir ? dir : "");
        cl_record(lib, path, source, CUDALOAD_ERROR_NOT_FOUND, &w);
        cl_why_free(&w);
        free(dir);
    }
    return 1;
}

/* A candidate path that cannot even be looked at (a directory on the way is not searchable) is
 * recorded, not silently passed over: the user may expect a copy there. */
static void cl_note_unsearchable(int lib, const char *path, cudaload_source source) {
    if (!cl_plat_unsearchable(path)) return;
    char *dir = cl_dir_of(path);
    cl_why w = {0};
    cl_why_set(&w, CUDALOAD_REASON_UNSEARCHABLE, 0, 0, 0, "%s", dir ? dir : path);
    cl_record(lib, path, source, CUDALOAD_ERROR_NOT_FOUND, &w);
    cl_why_free(&w);
    free(dir);
}

static void cl_take(int lib, void *h, const char *path, const char *soname, cudaload_source source, int already,
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
        cl_debug("CUDA %d: the major of every library from now on (pinned by %s)", major, row_of(lib)->name);
    }
}

/* ---- gates ---- */

/* The gate of a major, nothing recorded: the asked-for major, what the driver can run, and the
 * process's major once pinned (never mixed). major 0 (unknown) passes. */
static cudaload_status cl_major_check(int lib, int major, cl_why *w) {
    if (!major || (row_of(lib)->flags & CL_ROW_DRIVER_LIKE)) return CUDALOAD_OK;
    cudaload_status st = cl_gate_major(&G.drv, G.cfg.cuda_major, major, w);
    if (st == CUDALOAD_OK && G.major_pin && G.major_pin != major) {
        cl_why_set(w, CUDALOAD_REASON_MAJOR_MIXED, major, 0, G.major_pin, "%s", "");
        st = CUDALOAD_ERROR_MAJOR_MISMATCH;
    }
    return st;
}

/* Gate a major before touching a file of it; records the skip. */
static cudaload_status cl_major_gate(int lib, const char *path, cudaload_source source, int major) {
    cl_why w = {0};
    cudaload_status st = cl_major_check(lib, major, &w);
    if (st != CUDALOAD_OK) cl_record(lib, path, source, st, &w);
    cl_why_free(&w);
    return st;
}

/* The caller's floor for lib (CUDALOAD_MIN_<NAME>, options.min_versions): BELOW_FLOOR with the
 * reason in w when version is under it, else CUDALOAD_OK. */
static cudaload_status cl_floor_check(int lib, int major, int version, cl_why *w) {
    if (!G.cfg.floor[lib] || version >= G.cfg.floor[lib]) return CUDALOAD_OK;
    cl_why_set(w, CUDALOAD_REASON_BELOW_FLOOR, major, cl_version_triplet(row_of(lib), version),
               cl_version_triplet(row_of(lib), G.cfg.floor[lib]), "%s", G.cfg.floor_origin[lib]);
    return CUDALOAD_ERROR_BELOW_FLOOR;
}

/* Post-open checks of a handle: fill the table, read the version, settle the major (from the
 * name, else from the version) and gate it. *major is updated when the version tells it. */
static cudaload_status cl_accept_handle(int lib, void *h, int *major, int *version, cl_why *w) {
    const cl_row *row = row_of(lib);
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

/* ---- dependencies ---- */

/* The dependencies taken for one candidate: let go again when the candidate fails. */
typedef struct cl_dep_list {
    int lib[2 * CL_MAX_DEPS];
    size_t n;
} cl_dep_list;

/* A dependency libcudaload took for a library that then could not be used is let go: closed, its
 * table cleared, and the candidate that said "taken" says why it was not kept (an exact file
 * too: nothing uses it). One that was already in the process is never ours to drop. */
static void cl_drop_dep(int dep, cudaload_status why_st, const char *for_name) {
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

static void cl_drop_deps(cl_dep_list *taken, cudaload_status st, int lib) {
    while (taken->n > 0) cl_drop_dep(taken->lib[--taken->n], st, row_of(lib)->name);
}

static cudaload_status cl_try_file(int lib, const char *path, cudaload_source source, int major, long root_index);
static cudaload_status cl_system_take(int lib, int major, const char *soname);
static int cl_try_loaded(int lib);

static const char *cl_flavor_soname(int lib, int major) {
    const cl_flavor *fl = cl_row_flavor(row_of(lib), major);
    if (fl) return fl->soname;
    /* major unknown: the newest flavor's name */
    return row_of(lib)->flavor[0].soname;
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
        } else if (cl_lexists(same)) {
            st = cl_try_file(dep, same, source, major, root_index);
            tried = 1;
        }
        if (!tried && root_index >= 0) {
            const cl_row *row = row_of(dep);
            const cl_flavor *fl = cl_row_flavor(row, major);
            const cl_root *root = &G.roots.items[root_index];
            char *dirs[CL_MAX_DIRS];
            size_t nd = fl ? cl_search_dirs(root, row, fl, dirs) : 0;
            for (size_t i = 0; i < nd; i++) {
                char *p = tried ? NULL : cl_path_join(dirs[i], soname);
                if (!tried && !p) cl_oom();
                if (p && cl_path_too_long(dep, p, source, major)) tried = 1;
                else if (p && cl_lexists(p) && !cl_already_candidate(dep, p)) {
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
static cudaload_status cl_take_deps(int lib, const char *path, cudaload_source source, int major, long root_index,
                                    cl_dep_list *taken) {
    const cl_row *row = row_of(lib);
    for (size_t i = 0; i < CL_MAX_DEPS && row->deps[i]; i++) {
        int dep = cl_catalogue_find(row->deps[i]);
        if (dep < 0) continue; /* the row-consistency test keeps this from happening */
        cudaload_status st = cl_take_dep(dep, path, source, major, root_index, taken);
        if (st != CUDALOAD_OK) {
            cl_why w = {0};
            cl_why_set(&w, CUDALOAD_REASON_DEPENDENCY, major, 0, 0, "%s", row_of(dep)->name);
            cl_record(lib, path, source, st, &w);
            cl_why_free(&w);
            cl_drop_deps(taken, st, lib);
            return st;
        }
    }
    for (size_t i = 0; i < CL_MAX_DEPS && row->opt_deps[i]; i++) {
        int dep = cl_catalogue_find(row->opt_deps[i]);
        if (dep >= 0 && cl_take_dep(dep, path, source, major, root_index, taken) != CUDALOAD_OK)
            cl_debug("%s: optional dependency %s not taken for %s", row->name, row_of(dep)->name, path);
    }
    return CUDALOAD_OK;
}

/* ---- one file ---- */

/*
 * Tries one file for lib: the file check, its dependencies, then dlopen, the tables and the
 * gates. Records the candidate either way. major is 0 when neither the file's name nor the
 * directory tells it: the version the loaded file reports then decides it.
 */
static cudaload_status cl_try_file(int lib, const char *path, cudaload_source source, int major, long root_index) {
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

/* ---- step 1: a copy already in the process ---- */

/* A loaded copy of an older major than one installed in a root is kept (one process holds one
 * copy), and the newer one is reported as not used, with why. */
static void cl_note_newer_not_used(int lib) {
    const cl_lib_state *ls = &G.lib[lib];
    const cl_row *row = row_of(lib);
    for (size_t f = 0; f < CL_MAX_FLAVORS; f++) {
        const cl_flavor *fl = &row->flavor[f];
        if (!fl->soname || !ls->major || fl->major <= ls->major) continue;
        for (size_t r = 0; r < G.roots.n; r++) {
            if (!G.roots.items[r].pub.exists) continue;
            char *dirs[CL_MAX_DIRS];
            size_t nd = cl_search_dirs(&G.roots.items[r], row, fl, dirs);
            for (size_t i = 0; i < nd; i++) {
                char *p = cl_path_join(dirs[i], fl->soname);
                if (p && cl_lexists(p) && !cl_already_candidate(lib, p)) {
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

static int cl_try_loaded(int lib) {
    const cl_row *row = row_of(lib);
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
static void cl_note_loaded_over_exact(int lib) {
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

/* "<origin>=<path> cannot be used: <reason>": the first line of the library's message when an
 * exact file given by env/options failed, so the user sees which setting to fix. */
static void cl_set_note(int lib, const char *origin, const char *path, const char *reason) {
    cl_lib_state *ls = &G.lib[lib];
    cl_buf b = {0};
    cl_buf_printf(&b, "%s=%s cannot be used: %s", origin ? origin : "exact file", path, reason ? reason : "");
    free(ls->note);
    ls->note = cl_strdup(cl_buf_str(&b));
    cl_debug("%s", cl_buf_str(&b));
    cl_buf_free(&b);
}

/* ---- step 2: the exact file ---- */

/* The CUDA major a file belongs to by its DT_SONAME (or, without one, its name). */
static int cl_major_of_file(int lib, const char *path) {
    const cl_row *row = row_of(lib);
    char *so = cl_elf_file_soname(path);
    int major = so ? cl_row_major_of_soname(row, so) : 0;
    free(so);
    if (!major) {
        const char *base = strrchr(path, '/');
        major = cl_row_major_of_soname(row, base ? base + 1 : path);
    }
    return major;
}

/* The exact file given for lib: used, or failed loudly with no fallback (the user asked for this
 * file). Its major (from its SONAME) is gated before it is opened, like any other candidate. */
static cudaload_status cl_try_exact(int lib) {
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

/* CUDA majors to try for lib, newest first: the process's major once pinned. */
static size_t cl_majors_for(int lib, int majors[CL_MAX_FLAVORS]) {
    const cl_row *row = row_of(lib);
    size_t n = 0;
    for (size_t f = 0; f < CL_MAX_FLAVORS; f++) {
        const cl_flavor *fl = &row->flavor[f];
        if (!fl->soname || !fl->major) continue;
        if (G.major_pin && fl->major != G.major_pin) continue;
        majors[n++] = fl->major;
    }
    return n;
}

/* Is a wheel of pip package pkg installed in site-packages dir root (its <name>-<version>.dist-info
 * directory, the name normalised as pip writes it: lower case, '-' and '.' as '_')? */
static int cl_has_dist_info(const char *root, const char *pkg) {
    char want[96];
    size_t n = 0;
    for (const char *p = pkg; *p && n < sizeof want - 2; p++)
        want[n++] = (char)(*p == '-' || *p == '.' ? '_' : (*p >= 'A' && *p <= 'Z' ? *p + 32 : *p));
    want[n++] = '-';
    want[n] = 0;
    DIR *d = opendir(root);
    if (!d) return 0;
    int found = 0;
    struct dirent *e;
    while (!found && (e = readdir(d))) {
        size_t l = strlen(e->d_name);
        found = strncasecmp(e->d_name, want, n) == 0 && l > 10 && strcmp(e->d_name + l - 10, ".dist-info") == 0;
    }
    closedir(d);
    return found;
}

/* The major a file found in a directory belongs to: a SONAME no other flavor has tells; so does
 * the flavor's own wheel directory when no other flavor shares it; where two majors' wheels share
 * a directory (cuDNN's nvidia/cudnn/lib), the root's installed package does (nvidia-cudnn-cu13);
 * otherwise (a libcurand.so.10 in a plain directory) nothing tells, and only the version may. */
static int cl_major_in_dir(const cl_row *row, const cl_flavor *fl, const char *root, const char *dir) {
    if (cl_row_major_of_soname(row, fl->soname)) return fl->major;
    const char *wheel_dirs[2] = {fl->wheel_dir, fl->alt_dir};
    int in_wheel_dir = 0;
    for (size_t i = 0; i < 2 && !in_wheel_dir; i++) {
        if (!wheel_dirs[i]) continue;
        char *wd = cl_path_join(root, wheel_dirs[i]);
        in_wheel_dir = wd && strcmp(wd, dir) == 0;
        free(wd);
    }
    if (!in_wheel_dir) return 0;
    int shared = 0, other_major = 0, others_installed = 0;
    for (size_t f = 0; f < CL_MAX_FLAVORS; f++) {
        const cl_flavor *o = &row->flavor[f];
        if (o == fl || !o->soname) continue;
        int same_dir = (o->wheel_dir && fl->wheel_dir && strcmp(o->wheel_dir, fl->wheel_dir) == 0) ||
                       (o->alt_dir && fl->wheel_dir && strcmp(o->alt_dir, fl->wheel_dir) == 0) ||
                       (o->wheel_dir && fl->alt_dir && strcmp(o->wheel_dir, fl->alt_dir) == 0);
        shared |= same_dir;
        if (same_dir && o->pkg && cl_has_dist_info(root, o->pkg)) {
            others_installed++;
            other_major = o->major;
        }
    }
    if (!shared) return fl->major;
    int mine = fl->pkg && cl_has_dist_info(root, fl->pkg);
    if (mine && !others_installed) return fl->major;
    if (!mine && others_installed == 1) return other_major; /* the file is the other major's */
    return 0;
}

static int cl_try_root(int lib, size_t r) {
    const cl_root *root = &G.roots.items[r];
    /* a root too long to be looked at is walked anyway: its candidates say PATH_TOO_LONG */
    if (!root->pub.exists && strlen(root->pub.path) < CL_PATH_LIMIT) return 0;
    const cl_row *row = row_of(lib);
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
                } else if (!cl_lexists(path)) {
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
static cudaload_status cl_system_take(int lib, int major, const char *soname) {
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

static int cl_try_system(int lib, int major) {
    const cl_row *row = row_of(lib);
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

/* ---- driver-like rows: the system only ---- */

/* Fills an open driver-like file's table in scratch and, for the driver, asks its version
 * (*version); cl_driver_take commits the table. When it cannot be used: records the candidate and
 * closes the handle (never the process's loaded copy), and returns why. */
static cudaload_status cl_driver_usable(int lib, void *h, const char *where, cudaload_source source, int *version) {
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
static void cl_driver_take(int lib, void *h, const char *where, cudaload_source source, int version) {
    cl_lib_state *ls = &G.lib[lib];
    if (h) cl_resolve_commit((cudaload_lib)lib);
    cl_record_code(lib, where, source, CUDALOAD_OK,
                   !h ? CUDALOAD_REASON_FOUND
                      : source == CUDALOAD_SOURCE_LOADED ? CUDALOAD_REASON_REUSED : CUDALOAD_REASON_TAKEN, 0);
    /* the driver's CUDA version is no library major: it does not pin the process's major */
    cl_take(lib, h, where, row_of(lib)->flavor[0].soname, source, source == CUDALOAD_SOURCE_LOADED, 0, version, -1);
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
    const char *soname = row_of(lib)->flavor[0].soname;
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
    const char *p = row_of(lib)->system_dirs;
    char dir[256];
    while (cl_row_next_word(&p, dir, sizeof dir))
        if ((st = cl_driver_try(lib, dir, missing)) != missing) return st;
    return cl_driver_missing(lib, missing);
}

/* The driver: a loaded copy, the exact file, or the system's (cl_driver_from_system). Never from
 * wheels or roots, and never the unversioned libcuda.so (the toolkit's link stub). NVML likewise. */
static cudaload_status cl_walk_driver_like(int lib) {
    cl_lib_state *ls = &G.lib[lib];
    const char *soname = row_of(lib)->flavor[0].soname;
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

/* ---- forward compatibility (cuda-compat) ---- */

/* The CUDA version the runtime needs from the driver: the one taken's, else the newest major
 * skipped because the driver is too old; 0 when there is no runtime to go by. */
static int cl_runtime_need(void) {
    const cl_lib_state *rt = &G.lib[CUDALOAD_LIB_CUDART];
    if (rt->status == CUDALOAD_OK) return cl_cuda_version_of(row_of(CUDALOAD_LIB_CUDART), rt->version);
    int need = 0;
    for (size_t i = 0; i < rt->n_cands; i++)
        if (rt->details[i].reason == CUDALOAD_REASON_DRIVER_TOO_OLD && rt->details[i].major * 1000 > need)
            need = rt->details[i].major * 1000;
    return need;
}

/* The forward-compatibility libcuda copies on this machine, in order, each once (resolved, not
 * the driver in use): $CUDA_HOME (or $CUDA_PATH)/compat and compat/lib (older NGC images lay it
 * out so), /usr/local/cuda/compat and compat/lib, and $CONDA_PREFIX/cuda-compat (conda's
 * cuda-compat package puts its libcuda.so.1 there). n of them into real[] (malloc'd) and src[]. */
#define CL_COMPAT_MAX 5
static int cl_compat_copies(char *real[CL_COMPAT_MAX], cudaload_source src[CL_COMPAT_MAX]) {
    const char *home = cl_config_env(&G.cfg, "CUDA_HOME");
    if (!home || !cl_plat_is_absolute(home)) home = cl_config_env(&G.cfg, "CUDA_PATH");
    const char *conda = cl_config_env(&G.cfg, "CONDA_PREFIX");
    /* each place as a prefix and the file under it: joined by cl_path_join, never truncated */
    const char *prefix[CL_COMPAT_MAX], *rel[CL_COMPAT_MAX];
    cudaload_source from[CL_COMPAT_MAX];
    int n_dirs = 0, n = 0;
    if (cl_plat_is_absolute(home)) {
        prefix[n_dirs] = home, rel[n_dirs] = "compat/libcuda.so.1", from[n_dirs++] = CUDALOAD_SOURCE_CUDA_HOME;
        prefix[n_dirs] = home, rel[n_dirs] = "compat/lib/libcuda.so.1", from[n_dirs++] = CUDALOAD_SOURCE_CUDA_HOME;
    }
    if (!cl_plat_is_absolute(home) || strcmp(home, "/usr/local/cuda") != 0) { /* listed once */
        prefix[n_dirs] = "/usr/local/cuda", rel[n_dirs] = "compat/libcuda.so.1", from[n_dirs++] = CUDALOAD_SOURCE_CUDA_HOME;
        prefix[n_dirs] = "/usr/local/cuda", rel[n_dirs] = "compat/lib/libcuda.so.1", from[n_dirs++] = CUDALOAD_SOURCE_CUDA_HOME;
    }
    if (cl_plat_is_absolute(conda))
        prefix[n_dirs] = conda, rel[n_dirs] = "cuda-compat/libcuda.so.1", from[n_dirs++] = CUDALOAD_SOURCE_CONDA;
    char *in_use = NULL;
    for (int i = 0; i < n_dirs; i++) {
        char *path = cl_path_join(prefix[i], rel[i]);
        if (!path) cl_oom();
        /* a prefix too long for a file the system opens: a driver candidate that says so */
        int too_long = path && cl_path_too_long(CUDALOAD_LIB_DRIVER, path, from[i], 0);
        /* one stat first: realpath walks every component, and these are mostly absent */
        char *r = path && !too_long && cl_plat_lexists(path) ? cl_plat_realpath(path) : NULL;
        free(path);
        if (r && !in_use) in_use = cl_plat_realpath(G.lib[CUDALOAD_LIB_DRIVER].path ? G.lib[CUDALOAD_LIB_DRIVER].path : "");
        int dup = !r || (in_use && strcmp(r, in_use) == 0);
        for (int k = 0; r && !dup && k < n; k++) dup = strcmp(real[k], r) == 0;
        if (dup) {
            free(r);
            continue;
        }
        real[n] = r, src[n++] = from[i];
    }
    free(in_use);
    return n;
}

/* A compat copy's version, from its file name (libcuda.so.580.95.05): the text after the SONAME. */
static const char *cl_compat_version(const char *real) {
    const char *base = strrchr(real, '/');
    return base && strncmp(base + 1, "libcuda.so.", 11) == 0 ? base + 12 : "?";
}

/* Takes the compat copy at real in place of the system's driver, which this walk loaded (it runs
 * CUDA drv_version, the runtime needs need). The copy answers cuDriverGetVersion first, while the
 * system's driver is still there: one that does not reach need is closed again (COMPAT_TOO_OLD).
 * Its table is then filled in scratch and its checks made (cl_driver_usable): one that fails them
 * is closed and the system's driver stays, untouched. Only then is the system's driver closed;
 * when it stays in the process (not unloadable), it is kept, with its table as it was, and the
 * copy closed (COMPAT_BLOCKED): cudart would find it by its SONAME, never the copy. Otherwise the
 * copy's table is committed. Init publishes the driver's table after this decision, never before
 * (nothing reads it until then). 1 when the copy runs. */
static int cl_compat_switch(const char *real, cudaload_source src, int need) {
    cl_lib_state *ls = &G.lib[CUDALOAD_LIB_DRIVER];
    const char *ver = cl_compat_version(real);
    int drv_version = G.drv.version;
    cl_buf why = {0};
    cl_why w = {0};
    void *h = cl_dlopen(CUDALOAD_LIB_DRIVER, real, &why);
    int v = 0;
    if (h) {
        cl_foreign_begin(CUDALOAD_LIB_DRIVER, "cuDriverGetVersion");
        void *sym = cl_plat_sym(h, "cuDriverGetVersion", NULL);
        int (*get)(int *) = NULL;
        memcpy(&get, &sym, sizeof get); /* a data pointer to a function pointer, as the tables do */
        if (!get || get(&v) != CUDA_SUCCESS) v = 0;
        cl_foreign_end();
    }
    if (!h) cl_why_set(&w, CUDALOAD_REASON_DLOPEN_FAILED, 0, 0, 0, "%s", cl_buf_str(&why));
    else if (v < need) cl_why_set(&w, CUDALOAD_REASON_COMPAT_TOO_OLD, 0, v, need, "%s", ver);
    if (w.reason != CUDALOAD_REASON_NONE) {
        cl_record(CUDALOAD_LIB_DRIVER, real, src, CUDALOAD_ERROR_NOT_ATTEMPTED, &w);
        if (h) cl_dlclose(CUDALOAD_LIB_DRIVER, h);
        cl_buf_free(&why);
        cl_why_free(&w);
        return 0;
    }
    int version = 0;
    /* the copy's table in scratch and its checks; failed: recorded and closed, the system's
     * driver goes on as it was */
    if (cl_driver_usable(CUDALOAD_LIB_DRIVER, h, real, src, &version) != CUDALOAD_OK) {
        cl_debug("cuda-compat %s: not taken (its checks failed)", real);
        cl_buf_free(&why);
        return 0;
    }
    size_t sys = ls->n_cands;
    for (size_t i = 0; i < ls->n_cands; i++)
        if (ls->cands[i].result == CUDALOAD_OK) sys = i;
    char *sys_path = cl_strdup(ls->path);
    void *sys_handle = ls->handle;
    cl_dlclose(CUDALOAD_LIB_DRIVER, sys_handle);
    cl_foreign_begin(CUDALOAD_LIB_DRIVER, "dlopen (RTLD_NOLOAD)");
    void *still = sys_path ? cl_plat_open_if_loaded(sys_path) : NULL;
    cl_foreign_end();
    int switched = 0;
    if (still) {
        /* the same mapping, so the same table (left as it was); the copy would be a second
         * libcuda nobody calls */
        ls->handle = still;
        cl_dlclose(CUDALOAD_LIB_DRIVER, h);
        cl_why_set(&w, CUDALOAD_REASON_COMPAT_BLOCKED, 0, drv_version, need, "%s", ver);
        cl_record(CUDALOAD_LIB_DRIVER, real, src, CUDALOAD_ERROR_NOT_ATTEMPTED, &w);
    } else {
        /* the branch is the kernel module's, whichever libcuda runs: kept as read (/proc or NVML) */
        char *kernel_branch = G.drv.branch;
        G.drv.branch = NULL;
        size_t before = ls->n_cands;
        cl_driver_take(CUDALOAD_LIB_DRIVER, h, real, src, version); /* commits the copy's table */
        if (kernel_branch) {
            free(G.drv.branch);
            G.drv.branch = kernel_branch;
            G.drv.branch_major = atoi(kernel_branch);
        }
        cl_why_set(&w, CUDALOAD_REASON_COMPAT_TAKEN, 0, drv_version, need, "%s", ver);
        if (ls->n_cands > before) cl_record_rewrite(CUDALOAD_LIB_DRIVER, ls->n_cands - 1, CUDALOAD_OK, &w);
        if (sys < ls->n_cands) {
            cl_why_free(&w);
            cl_why_set(&w, CUDALOAD_REASON_COMPAT_REPLACED, 0, drv_version, need, "%s", real);
            cl_record_rewrite(CUDALOAD_LIB_DRIVER, sys, CUDALOAD_ERROR_DRIVER_TOO_OLD, &w);
        }
        switched = 1;
    }
    cl_debug("cuda-compat %s: %s", real, switched ? "taken" : "not taken");
    free(sys_path);
    cl_buf_free(&why);
    cl_why_free(&w);
    return switched;
}

/* Forward compatibility, used when it helps: the system's driver does not run the runtime found
 * (a major it does not run: the runtime was skipped; or a newer minor: taken under minor version
 * compatibility) and a compat copy newer than the kernel module is there (one of the same or an
 * older branch fails with 803). The first such copy whose cuDriverGetVersion reaches the runtime's
 * need is taken (cl_compat_switch). Never with CUDALOAD_COMPAT=never, in find-only mode, for a
 * driver the process had loaded before or the caller named (CUDALOAD_DRIVER_PATH), or when the
 * kernel module's branch is unknown. On a GPU without forward compatibility the copy's cuInit
 * fails with 804: cudaload_device_cu_result() and the probe say so. 1 when the driver changed. */
int cl_use_compat(void) {
    cl_lib_state *ls = &G.lib[CUDALOAD_LIB_DRIVER];
    int need = cl_runtime_need();
    if (!G.drv.loaded || ls->status != CUDALOAD_OK || cl_find_only() || ls->source == CUDALOAD_SOURCE_OVERRIDE ||
        G.drv.branch_major <= 0 || !need || need <= G.drv.version || G.cfg.compat_never)
        return 0;
    char *real[CL_COMPAT_MAX];
    cudaload_source src[CL_COMPAT_MAX];
    int n = cl_compat_copies(real, src), switched = 0;
    for (int i = 0; i < n && !switched; i++) {
        if (atoi(cl_compat_version(real[i])) <= G.drv.branch_major) continue; /* 803: cl_note_compat says so */
        if (ls->source == CUDALOAD_SOURCE_LOADED) {
            /* the process runs that driver already: cudart finds it by its SONAME */
            cl_why w = {0};
            cl_why_set(&w, CUDALOAD_REASON_COMPAT_BLOCKED, 0, G.drv.version, need, "%s", cl_compat_version(real[i]));
            cl_record(CUDALOAD_LIB_DRIVER, real[i], src[i], CUDALOAD_ERROR_NOT_ATTEMPTED, &w);
            cl_why_free(&w);
            break;
        }
        switched = cl_compat_switch(real[i], src[i], need);
    }
    for (int i = 0; i < n; i++) free(real[i]);
    return switched;
}

/* The compat copies not already weighed by cl_use_compat, each recorded as a candidate of the
 * driver with why it is not what runs: not newer than the kernel module (803), not needed (the
 * driver runs the runtime's CUDA), or available (CUDALOAD_COMPAT=never, find-only, the branch
 * unknown, or a driver named by the caller). Called after init's walk, with the driver loaded
 * (its branch is the kernel module's). */
void cl_note_compat(void) {
    if (!G.drv.loaded || G.lib[CUDALOAD_LIB_DRIVER].status != CUDALOAD_OK) return;
    char *real[CL_COMPAT_MAX];
    cudaload_source src[CL_COMPAT_MAX];
    int n = cl_compat_copies(real, src), need = cl_runtime_need();
    for (int i = 0; i < n; i++) {
        if (cl_already_candidate(CUDALOAD_LIB_DRIVER, real[i])) continue;
        const char *ver = cl_compat_version(real[i]);
        int major = atoi(ver);
        cl_why w = {0};
        if (major > 0 && G.drv.branch_major > 0 && major <= G.drv.branch_major)
            cl_why_set(&w, CUDALOAD_REASON_COMPAT_NOT_NEWER, 0, major, G.drv.branch_major, "%s", ver);
        else if (need && need <= G.drv.version)
            cl_why_set(&w, CUDALOAD_REASON_COMPAT_NOT_NEEDED, 0, G.drv.version, need, "%s", ver);
        else
            cl_why_set(&w, CUDALOAD_REASON_COMPAT_AVAILABLE, 0, G.drv.version, need, "%s", ver);
        cl_record(CUDALOAD_LIB_DRIVER, real[i], src[i], CUDALOAD_ERROR_NOT_ATTEMPTED, &w);
        cl_debug("cuda-compat %s: %s", real[i], cudaload_reason_name(w.reason));
        cl_why_free(&w);
    }
    for (int i = 0; i < n; i++) free(real[i]);
}

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
    const cl_row *row = row_of(lib);
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
    const cl_row *row = row_of(lib);
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
    const cl_row *row = row_of(lib);
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
    cl_buf_printf(&b, "%s: not searched: cuBLAS needs the CUDA runtime, which was not loaded\n%s", row_of(lib)->name,
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
        const cl_row *row = row_of(lib);
        for (size_t i = 0; i < CL_MAX_DEPS && row->deps[i]; i++) {
            int dep = cl_catalogue_find(row->deps[i]);
            if (dep >= 0 && !G.lib[dep].finished) cl_drop_dep(dep, st, row->name);
        }
    }
    cl_finish(lib, st);
    cl_finish_deps(lib);
    return st;
}
