/*
 * probe_report.c -- the probe's report (probe_report.h): gathering what libcudaload found,
 * the diagnosis (problems and the commands that fix them), the SAXPY/SGEMM self-test, and
 * the text and JSON writers. Used by cudaload-probe and by the Python package's extension.
 */
#define _GNU_SOURCE
#include "probe_report.h"

#include "cudaload_tables.h"
#include "probe_json.h"

#include <grp.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SCHEMA_VERSION 1
#define MAX_DEVICES 16
#define MAX_NOTES 32

typedef struct device {
    char name[256];
    int cc_major, cc_minor;
    size_t memory;
    int has_sass, would_jit;
    cudaload_status runnable;
    char why[512];
} device;

typedef struct test_result {
    int ran, pass;
    double max_rel_err, ms, rate; /* GB/s or TFLOP/s */
    const char *backend;
    char error[512];
} test_result;

#define PROBE_MAX_LIBS 128
struct probe_report {
    int find_only, selftest, color, code;
    cudaload_status init_status;
    char init_error[16384];
    cudaload_library_info lib[PROBE_MAX_LIBS]; /* the core four, then the libraries asked for */
    size_t n_libs;
    const cudaload_root *roots;
    size_t n_roots;
    int ndev;
    cudaload_status dev_status;
    char dev_error[1024];
    device dev[MAX_DEVICES];
    cudaload_kernels_info kinfo;
    test_result saxpy, sgemm;
    int selftest_attempted;
    char *warnings[MAX_NOTES];
    int n_warnings;
    char *fixes[MAX_NOTES];
    int n_fixes;
    char *problems[MAX_NOTES]; /* one line per thing that is wrong, for the Result section */
    int n_problems;
    int system_search;         /* the system search is in scope (CUDALOAD_SOURCES) */
    char include_dirs[2][PATH_MAX];
    char lib_dirs[2][PATH_MAX];   /* cudart's directory, cuBLAS's when another one */
    char origin_rel[2][PATH_MAX]; /* those directories relative to a site-packages root, or "" */
    char link_flags[4 * PATH_MAX];
    char nvrtc[PATH_MAX]; /* libnvrtc beside the runtime, when present (reported, not loaded) */
};
typedef struct probe_report probe;

/* Appends a note unless the same text is already there. */
static void note(char **list, int *n, const char *fmt, ...) {
    if (*n >= MAX_NOTES) return;
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0) s = NULL;
    va_end(ap);
    for (int i = 0; s && i < *n; i++)
        if (strcmp(list[i], s) == 0) {
            free(s);
            return;
        }
    if (s) list[(*n)++] = s;
}

/* ---- gathering ---- */

static const char *const env_names[] = {
    "CUDALOAD_PATH",   "CUDALOAD_CUDART_PATH", "CUDALOAD_CUBLAS_PATH", "CUDALOAD_CUBLASLT_PATH",
    "CUDALOAD_DRIVER_PATH", "CUDALOAD_CUDA_MAJOR", "CUDALOAD_SOURCES", "CUDALOAD_DEBUG",
    "CUDALOAD_BACKEND", "CUDA_HOME", "CUDA_PATH", "CONDA_PREFIX", "VIRTUAL_ENV", "LD_LIBRARY_PATH",
    "CUDA_VISIBLE_DEVICES",
};

static void dirname_of(const char *path, char *out, size_t n) {
    snprintf(out, n, "%s", path);
    char *slash = strrchr(out, '/');
    if (slash && slash != out) *slash = 0;
}

static int file_exists(const char *dir, const char *name) {
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return access(p, F_OK) == 0;
}

/* <libdir>/../include when it holds the header (wheel and toolkit layouts alike). */
static int include_dir_for(const char *lib_path, const char *header, char *out, size_t n) {
    char dir[PATH_MAX], inc[PATH_MAX + 16];
    dirname_of(lib_path, dir, sizeof dir);
    snprintf(inc, sizeof inc, "%s/../include", dir);
    char *real = realpath(inc, NULL);
    if (!real) return 0;
    int ok = file_exists(real, header);
    if (ok) snprintf(out, n, "%s", real);
    free(real);
    return ok;
}

/* The directory of a library relative to the site-packages root it was found under
 * ("nvidia/cu13/lib"), for a $ORIGIN-relative rpath; "" when it is not in a wheel layout. */
static void origin_rel_of(const probe *p, const char *dir, char *out, size_t n) {
    out[0] = 0;
    for (size_t i = 0; i < p->n_roots; i++) {
        const cudaload_root *r = &p->roots[i];
        if (r->source != CUDALOAD_SOURCE_CALLER && r->source != CUDALOAD_SOURCE_SELF && r->source != CUDALOAD_SOURCE_VENV)
            continue;
        size_t len = strlen(r->path);
        while (len > 1 && r->path[len - 1] == '/') len--;
        if (strncmp(dir, r->path, len) == 0 && strncmp(dir + len, "/nvidia/", 8) == 0) {
            char rel[PATH_MAX]; /* dir and out may be fields of one struct: copy through a local */
            snprintf(rel, sizeof rel, "%s", dir + len + 1);
            snprintf(out, n, "%s", rel);
            return;
        }
    }
}

static void build_flags(probe *p) {
    const cudaload_library_info *rt = &p->lib[CUDALOAD_LIB_CUDART], *bl = &p->lib[CUDALOAD_LIB_CUBLAS];
    if (rt->status != CUDALOAD_OK) return;
    int have_bl = bl->status == CUDALOAD_OK && bl->path;
    include_dir_for(rt->path, "cuda_runtime_api.h", p->include_dirs[0], PATH_MAX);
    if (have_bl && !include_dir_for(bl->path, "cublas_v2.h", p->include_dirs[1], PATH_MAX))
        p->include_dirs[1][0] = 0;
    if (p->include_dirs[1][0] && strcmp(p->include_dirs[0], p->include_dirs[1]) == 0) p->include_dirs[1][0] = 0;
    char *rdir = p->lib_dirs[0], *bdir = p->lib_dirs[1];
    dirname_of(rt->path, rdir, PATH_MAX);
    if (have_bl) dirname_of(bl->path, bdir, PATH_MAX);
    if (strcmp(bdir, rdir) == 0) bdir[0] = 0;
    for (int i = 0; i < 2; i++)
        if (p->lib_dirs[i][0]) origin_rel_of(p, p->lib_dirs[i], p->origin_rel[i], PATH_MAX);
    int n = snprintf(p->link_flags, sizeof p->link_flags, "-L%s -l:%s", rdir, rt->soname);
    if (have_bl) {
        if (bdir[0]) n += snprintf(p->link_flags + n, sizeof p->link_flags - (size_t)n, " -L%s", bdir);
        n += snprintf(p->link_flags + n, sizeof p->link_flags - (size_t)n, " -l:%s", bl->soname);
    }
    n += snprintf(p->link_flags + n, sizeof p->link_flags - (size_t)n, " -Wl,--disable-new-dtags -Wl,-rpath,%s", rdir);
    if (bdir[0]) snprintf(p->link_flags + n, sizeof p->link_flags - (size_t)n, " -Wl,-rpath,%s", bdir);
}

/* NVRTC is optional and libcudaload does not load it: report a libnvrtc.so.<major> next to
 * the runtime taken (same directory: CUDA 13 wheels, toolkits, conda) or in the CUDA 12
 * wheel layout (site-packages/nvidia/cuda_nvrtc/lib). */
static void find_nvrtc(probe *p) {
    const cudaload_library_info *rt = &p->lib[CUDALOAD_LIB_CUDART];
    if (rt->status != CUDALOAD_OK || !rt->major) return;
    char dir[PATH_MAX], name[32], cand[PATH_MAX + 64];
    dirname_of(rt->path, dir, sizeof dir);
    snprintf(name, sizeof name, "libnvrtc.so.%d", rt->major);
    snprintf(cand, sizeof cand, "%s/%s", dir, name);
    if (access(cand, F_OK) != 0) snprintf(cand, sizeof cand, "%s/../../cuda_nvrtc/lib/%s", dir, name);
    char *real = access(cand, F_OK) == 0 ? realpath(cand, NULL) : NULL;
    if (real) snprintf(p->nvrtc, sizeof p->nvrtc, "%s", real);
    free(real);
}

/* Who besides its owner may write a file or directory of status st, in words for the
 * warnings: by every user (o+w: *by "every user", *who "anyone"), else by its group (g+w:
 * *by "its group, group 27 (sudo)", *who "every member of that group"). 0 when nobody else
 * may. */
static int other_writers(const struct stat *st, char *by, size_t n, const char **who) {
    if (st->st_mode & S_IWOTH) {
        snprintf(by, n, "every user");
        *who = "anyone";
        return 1;
    }
    if (!(st->st_mode & S_IWGRP)) return 0;
    struct group *g = getgrgid(st->st_gid);
    if (g && g->gr_name) snprintf(by, n, "its group, group %u (%s)", (unsigned)st->st_gid, g->gr_name);
    else snprintf(by, n, "its group, group %u", (unsigned)st->st_gid); /* no name for it (no NSS entry) */
    *who = "every member of that group";
    return 1;
}

/* A library (or its directory) that other users may write to can be replaced under the
 * program that loads it: by every user (o+w), or by every member of its group (g+w). A
 * warning, not a refusal (docs/security.md). A sticky directory (/tmp-like) lets nobody
 * replace another user's file, so only its files are judged. */
static void check_writable(probe *p) {
    for (int i = 0; i < CUDALOAD_LIB_COUNT_; i++) {
        const cudaload_library_info *l = &p->lib[i];
        if (l->status != CUDALOAD_OK || !l->path) continue;
        char dir[PATH_MAX], by[320];
        const char *who;
        dirname_of(l->path, dir, sizeof dir);
        struct stat fs, ds;
        if (stat(l->path, &fs) == 0 && other_writers(&fs, by, sizeof by, &who))
            note(p->warnings, &p->n_warnings, "%s is writable by %s (mode %03o): %s can replace the code this process "
                 "runs", l->path, by, (unsigned)(fs.st_mode & 0777), who);
        /* a directory once, naming every library taken from it */
        char holding[128] = "", other[PATH_MAX];
        int first = 1;
        for (int j = 0; j < CUDALOAD_LIB_COUNT_; j++) {
            const cudaload_library_info *m = &p->lib[j];
            if (m->status != CUDALOAD_OK || !m->path) continue;
            dirname_of(m->path, other, sizeof other);
            if (strcmp(other, dir) != 0) continue;
            if (j < i) first = 0;
            size_t hl = strlen(holding);
            snprintf(holding + hl, sizeof holding - hl, "%s%s", hl ? ", " : "", m->name);
        }
        if (first && stat(dir, &ds) == 0 && !(ds.st_mode & S_ISVTX) && other_writers(&ds, by, sizeof by, &who))
            note(p->warnings, &p->n_warnings, "%s (holding %s) is writable by %s (mode %03o): %s can put another "
                 "library there", dir, holding, by, (unsigned)(ds.st_mode & 0777), who);
    }
}

/* The pip commands for a CUDA major's runtime + cuBLAS, and for cuBLAS alone. CUDA 13 wheels
 * have no -cuXX suffix: pin the major so that a later major is not pulled in. */
static const char *pip_pair(int major) {
    return major == 12 ? "pip install nvidia-cuda-runtime-cu12 nvidia-cublas-cu12"
                       : "pip install \"nvidia-cuda-runtime==13.*\" \"nvidia-cublas==13.*\"";
}
static const char *pip_cublas(int major) {
    return major == 12 ? "pip install nvidia-cublas-cu12" : "pip install \"nvidia-cublas==13.*\"";
}
#define SITE_HINT                                                                                  \
    "if the wheels are installed already, point the probe at their environment: activate it "      \
    "(VIRTUAL_ENV), or run, with that environment's python3: `cudaload-probe --root \"$(python3 -c " \
    "'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])')\"`"

/* The CUDA major of the driver (13 for cuDriverGetVersion 13000), 0 when no driver is loaded. */
static int driver_major(const probe *p) {
    const cudaload_library_info *d = &p->lib[CUDALOAD_LIB_DRIVER];
    return d->status == CUDALOAD_OK && d->loaded && d->version > 0 ? d->version / 1000 : 0;
}

/* A root other programs cannot see through LD_LIBRARY_PATH: a site-packages the search had. */
static const cudaload_root *wheel_root(const probe *p) {
    for (size_t i = 0; i < p->n_roots; i++)
        if (p->roots[i].exists && (p->roots[i].source == CUDALOAD_SOURCE_CALLER || p->roots[i].source == CUDALOAD_SOURCE_SELF ||
                                   p->roots[i].source == CUDALOAD_SOURCE_VENV))
            return &p->roots[i];
    return NULL;
}

/* Appends s to out (of size n, holding len bytes) quoted for a POSIX shell when it holds
 * anything but plain path characters. */
static size_t shell_word(char *out, size_t n, size_t len, const char *s) {
    int plain = s[0] != 0;
    for (const char *c = s; *c; c++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._:+-,=@%", *c)) plain = 0;
    if (plain) return len + (size_t)snprintf(out + len, len < n ? n - len : 0, "%s", s);
    len += (size_t)snprintf(out + len, len < n ? n - len : 0, "'");
    for (const char *c = s; *c; c++)
        len += (size_t)snprintf(out + len, len < n ? n - len : 0, *c == '\'' ? "'\\''" : "%c", *c);
    return len + (size_t)snprintf(out + len, len < n ? n - len : 0, "'");
}

/* What libcudaload took, in words for the LD_LIBRARY_PATH warning and its fix; NULL when it
 * took nothing. */
static const char *taken_words(const cudaload_library_info *l) {
    if (l->status != CUDALOAD_OK || !l->path) return NULL;
    switch (l->source) {
    case CUDALOAD_SOURCE_CALLER:
    case CUDALOAD_SOURCE_SELF:
    case CUDALOAD_SOURCE_VENV: return "the pip wheels";
    case CUDALOAD_SOURCE_CONDA: return "the conda environment's copy";
    case CUDALOAD_SOURCE_CUDA_HOME: return "the CUDA_HOME/CUDA_PATH toolkit";
    case CUDALOAD_SOURCE_OVERRIDE: return "the copy the CUDALOAD_* override names";
    case CUDALOAD_SOURCE_LOADED: return "the copy already loaded in the process";
    default: return "the copy libcudaload took";
    }
}

/* Whether two paths name the same file, symbolic links resolved (0 when either is missing). */
static int same_file(const char *a, const char *b) {
    char *ra = a ? realpath(a, NULL) : NULL, *rb = b ? realpath(b, NULL) : NULL;
    int same = ra && rb && strcmp(ra, rb) == 0;
    free(ra);
    free(rb);
    return same;
}

/* LD_LIBRARY_PATH dirs holding a CUDA runtime, cublasLt or cuBLAS that is not the very file
 * libcudaload took: every program that loads CUDA by SONAME (torch, cupy, ctypes) takes
 * those first. A name there that resolves to the file taken (a symlink to it) shadows
 * nothing. The fix removes just those directories: LD_LIBRARY_PATH often also names the
 * driver's (in containers). */
static void check_ld_library_path(probe *p) {
    const char *llp = getenv("LD_LIBRARY_PATH");
    if (!llp || !llp[0]) return;
    char *copy = strdup(llp), *save = NULL;
    if (!copy) return;
    char *bad[64], *keep[64];
    int n_bad = 0, n_keep = 0;
    const char *fix_words = NULL; /* what the first shadowed library was taken from */
    int fix_any = 0;
    for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        static const struct {
            const char *name;
            cudaload_lib lib;
        } names[] = {{"libcudart.so.13", CUDALOAD_LIB_CUDART},     {"libcudart.so.12", CUDALOAD_LIB_CUDART},
                     {"libcublasLt.so.13", CUDALOAD_LIB_CUBLASLT}, {"libcublasLt.so.12", CUDALOAD_LIB_CUBLASLT},
                     {"libcublas.so.13", CUDALOAD_LIB_CUBLAS},     {"libcublas.so.12", CUDALOAD_LIB_CUBLAS}};
        int shadowing = 0;
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
            if (!file_exists(d, names[i].name)) continue;
            const cudaload_library_info *taken = &p->lib[names[i].lib];
            const char *took = taken->status == CUDALOAD_OK ? taken->path : NULL;
            char file[PATH_MAX + 64];
            snprintf(file, sizeof file, "%s/%s", d, names[i].name);
            int same = took && same_file(file, took);
            if (same && taken->source == CUDALOAD_SOURCE_SYSTEM) {
                note(p->warnings, &p->n_warnings,
                     "%s was taken from LD_LIBRARY_PATH (%s), by the system search: no wheel, conda or "
                     "CUDA_HOME copy was found before it", names[i].name, d);
                const cudaload_root *w = wheel_root(p);
                if (w)
                    note(p->fixes, &p->n_fixes, "to use pip wheels instead, install them into the environment of %s: "
                         "`%s`, then take %s out of LD_LIBRARY_PATH", w->path, pip_pair(taken->major), d);
            } else if (!same) {
                const char *words = taken_words(taken);
                if (words)
                    note(p->warnings, &p->n_warnings,
                         "LD_LIBRARY_PATH puts %s ahead of %s for every program that loads CUDA by SONAME (torch, "
                         "cupy, ctypes), while libcudaload took %s", file, words, took);
                else
                    note(p->warnings, &p->n_warnings,
                         "LD_LIBRARY_PATH puts %s first for every program that loads CUDA by SONAME (torch, cupy, "
                         "ctypes), while libcudaload took no %s", file, taken->name);
                if (!fix_any) fix_words = words, fix_any = 1;
                shadowing = 1;
            }
        }
        if (shadowing && n_bad < 64) bad[n_bad++] = d;
        else if (!shadowing && n_keep < 64) keep[n_keep++] = d;
    }
    if (n_bad) {
        char rest[8192] = "", cmd[8192 + 64], why[128];
        size_t len = 0;
        for (int i = 0; i < n_keep; i++) {
            if (i) len += (size_t)snprintf(rest + len, len < sizeof rest ? sizeof rest - len : 0, ":");
            len = shell_word(rest, sizeof rest, len, keep[i]);
        }
        if (n_keep) snprintf(cmd, sizeof cmd, "export LD_LIBRARY_PATH=%s", rest);
        else snprintf(cmd, sizeof cmd, "unset LD_LIBRARY_PATH");
        /* worded by what libcudaload took: wheels, conda, CUDA_HOME, ... */
        if (fix_words) snprintf(why, sizeof why, "so every program takes %s, as libcudaload did", fix_words);
        else snprintf(why, sizeof why, "so it no longer puts a CUDA copy first");
        note(p->fixes, &p->n_fixes, "`%s` (%s %s%s) %s", cmd, n_keep ? "the same without" : "it names only", bad[0],
             n_bad > 1 ? " and the other directories warned about" : "", why);
    }
    free(copy);
}

/* A relative CONDA_PREFIX, CUDA_HOME, CUDA_PATH or VIRTUAL_ENV is ignored by the search (it
 * never depends on the current directory): said, since the user set it to be used. */
static void check_relative_env(probe *p) {
    static const char *const vars[] = {"VIRTUAL_ENV", "CONDA_PREFIX", "CUDA_HOME", "CUDA_PATH"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (!v || !v[0] || v[0] == '/') continue;
        char word[PATH_MAX];
        shell_word(word, sizeof word, 0, v);
        note(p->warnings, &p->n_warnings, "%s=%s is not used: relative values are ignored (the search never depends "
             "on the current directory); give an absolute path: `export %s=\"$(realpath -- %s)\"`", vars[i], v,
             vars[i], word);
    }
}

/* The reason that best explains why lib was not taken: the first candidate refused for the
 * library's own status, else the last candidate's reason. */
static const char *lib_reason(const cudaload_library_info *l) {
    for (size_t c = 0; c < l->n_candidates; c++)
        if (l->candidates[c].result == l->status) return l->candidates[c].reason;
    if (l->n_candidates) return l->candidates[l->n_candidates - 1].reason;
    return NULL;
}

/* What is wrong (problems) and the commands that fix it (fixes), from what was gathered.
 * The library's generic fix lines are replaced by ones that know the driver's version. */
static void diagnose(probe *p) {
    int dmaj = driver_major(p);
    const cudaload_library_info *drv = &p->lib[CUDALOAD_LIB_DRIVER], *rt = &p->lib[CUDALOAD_LIB_CUDART];
    char dver[64] = "";
    if (dmaj) snprintf(dver, sizeof dver, "CUDA %d.%d", drv->version / 1000, drv->version % 1000 / 10);
    static const cudaload_lib order[] = {CUDALOAD_LIB_CUDART, CUDALOAD_LIB_CUBLASLT, CUDALOAD_LIB_CUBLAS, CUDALOAD_LIB_DRIVER};
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
        const cudaload_library_info *l = &p->lib[order[k]];
        if (l->status == CUDALOAD_OK || l->status == CUDALOAD_ERROR_NOT_ATTEMPTED) continue;
        const char *why = lib_reason(l);
        if (why && strncmp(why, "skipped: ", 9) == 0) why += 9;
        if (l->status == CUDALOAD_ERROR_NOT_FOUND && !why)
            why = p->system_search ? "no candidate file in the roots above, nor by the system search"
                                   : "no candidate file in the roots above (the system search is scoped out)";
        note(p->problems, &p->n_problems, "%s: %s%s%s", l->name, cudaload_status_string(l->status), why ? ": " : "",
             why ? why : "");
        int major = rt->status == CUDALOAD_OK && rt->major ? rt->major : dmaj >= 13 ? 13 : 12;
        switch (l->status) {
        case CUDALOAD_ERROR_NOT_FOUND:
            if (l->lib == CUDALOAD_LIB_DRIVER) goto no_driver;
            if (l->lib != CUDALOAD_LIB_CUDART) {
                note(p->fixes, &p->n_fixes, "`%s` (cuBLAS for the CUDA %d runtime taken)", pip_cublas(major), major);
            } else if (dmaj >= 13) {
                note(p->fixes, &p->n_fixes, "`%s` (this driver runs %s)", pip_pair(13), dver);
            } else if (dmaj == 12) {
                note(p->fixes, &p->n_fixes, "`%s` (this driver runs %s; CUDA 13 needs branch >= 580)", pip_pair(12), dver);
            } else if (dmaj > 0) {
                note(p->fixes, &p->n_fixes, "upgrade the NVIDIA driver (it runs %s; CUDA 12 needs branch >= 525, CUDA 13 "
                     "branch >= 580), then `%s`", dver, pip_pair(13));
            } else {
                note(p->fixes, &p->n_fixes, "`%s` (CUDA 13, driver branch >= 580)", pip_pair(13));
                note(p->fixes, &p->n_fixes, "or `%s` (CUDA 12, driver branch >= 525)", pip_pair(12));
            }
            note(p->fixes, &p->n_fixes, SITE_HINT);
            break;
        case CUDALOAD_ERROR_DRIVER_TOO_OLD:
            if (dmaj == 12)
                note(p->fixes, &p->n_fixes, "`%s` (this driver runs %s), or upgrade the NVIDIA driver to branch >= 580 "
                     "for CUDA 13", pip_pair(12), dver);
            else if (dmaj > 0 && dmaj < 12)
                note(p->fixes, &p->n_fixes, "upgrade the NVIDIA driver: it runs %s, and libcudaload needs CUDA 12 (branch "
                     ">= 525) or CUDA 13 (branch >= 580); no CUDA 12 or 13 wheel can run on it", dver);
            else
                note(p->fixes, &p->n_fixes, "upgrade the NVIDIA driver, or install a runtime of the major it runs");
            break;
        case CUDALOAD_ERROR_MAJOR_MISMATCH:
            note(p->fixes, &p->n_fixes, "`%s` (cuBLAS of the runtime's major, CUDA %d)", pip_cublas(major), major);
            break;
        case CUDALOAD_ERROR_OVERRIDE_UNUSABLE:
            note(p->fixes, &p->n_fixes, "unset the CUDALOAD_*_PATH or CUDALOAD_PATH variable that names the file "
                 "refused for %s above, or point it at a usable one", l->name);
            break;
        case CUDALOAD_ERROR_NO_DRIVER:
        no_driver:
            note(p->fixes, &p->n_fixes, "install the NVIDIA driver (it provides libcuda.so.1; pip wheels never do); in a "
                 "container, start it with the GPUs exposed (`docker run --gpus all`, NVIDIA Container Toolkit); or set "
                 "CUDALOAD_DRIVER_PATH to the absolute path of libcuda.so.1");
            break;
        default:
            break;
        }
    }
    /* a cuBLAS taken with no cublasLt located for it (the library reports none): libcublas
     * cannot load without it, so it is a problem, not a silent "not attempted" */
    if (p->lib[CUDALOAD_LIB_CUBLAS].status == CUDALOAD_OK && p->lib[CUDALOAD_LIB_CUBLASLT].status == CUDALOAD_ERROR_NOT_ATTEMPTED)
        note(p->problems, &p->n_problems, "cublasLt: not located, while cublas was (%s): libcublas cannot be loaded "
             "without it", p->lib[CUDALOAD_LIB_CUBLAS].path);
    if (!p->find_only && drv->status == CUDALOAD_OK && p->dev_status != CUDALOAD_OK &&
        p->dev_status != CUDALOAD_ERROR_NOT_ATTEMPTED) {
        note(p->problems, &p->n_problems, "devices: %s", p->dev_error[0] ? p->dev_error : cudaload_status_string(p->dev_status));
        const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
        if (cvd)
            note(p->fixes, &p->n_fixes, "CUDA_VISIBLE_DEVICES=%s may hide the GPUs: `unset CUDA_VISIBLE_DEVICES`", cvd);
        note(p->fixes, &p->n_fixes, "check that `nvidia-smi` lists a GPU; in a container, start it with the GPUs exposed "
             "(`docker run --gpus all`)");
    }
    for (int i = 0; i < p->ndev && i < MAX_DEVICES; i++)
        if (p->dev[i].runnable == CUDALOAD_ERROR_DRIVER_TOO_OLD)
            note(p->warnings, &p->n_warnings, "device %d: the bundled kernels need a newer driver (%s); SAXPY and SGEMM "
                 "fall back to cuBLAS until the NVIDIA driver is upgraded", i, p->kinfo.toolkit_version >= 13000 ?
                 "branch >= 580" : "branch >= 525");
    const test_result *t[2] = {&p->saxpy, &p->sgemm};
    static const char *const tname[2] = {"SAXPY", "SGEMM"};
    for (int i = 0; p->selftest_attempted && i < 2; i++) {
        if (t[i]->error[0]) note(p->problems, &p->n_problems, "self-test %s: %s", tname[i], t[i]->error);
        else if (!t[i]->pass)
            note(p->problems, &p->n_problems, "self-test %s: max relative error %.3g exceeds 1e-5 (backend %s)", tname[i],
                 t[i]->max_rel_err, t[i]->backend);
    }
    /* fix lines of the library's own message for anything not handled above */
    if (p->n_fixes == 0 && p->init_error[0]) {
        const char *s = p->init_error;
        while ((s = strstr(s, "fix: ")) != NULL) {
            s += 5;
            size_t len = strcspn(s, "\n");
            note(p->fixes, &p->n_fixes, "%.*s", (int)len, s);
            s += len;
        }
    }
}

/* Whether the system search is in scope: CUDALOAD_SOURCES unset, empty or naming "system"
 * (the same parsing as the library's; an invalid value has already stopped the probe). */
static int system_in_scope(void) {
    const char *v = getenv("CUDALOAD_SOURCES");
    if (!v || !v[0]) return 1;
    for (const char *s = v; *s;) {
        size_t len = strcspn(s, ",");
        const char *e = s + len;
        while (s < e && (*s == ' ' || *s == '\t')) s++;
        while (e > s && (e[-1] == ' ' || e[-1] == '\t')) e--;
        if (e - s == 6 && strncmp(s, "system", 6) == 0) return 1;
        s += strcspn(s, ",");
        if (*s) s++;
    }
    return 0;
}

static void gather_devices(probe *p) {
    if (p->find_only) {
        p->dev_status = CUDALOAD_ERROR_NOT_ATTEMPTED;
        return;
    }
    p->dev_status = cudaload_device_count(&p->ndev);
    if (p->dev_status != CUDALOAD_OK) {
        snprintf(p->dev_error, sizeof p->dev_error, "%s", cudaload_last_error());
        return;
    }
    const cudaload_driver_table *d = cudaload_driver();
    for (int i = 0; i < p->ndev && i < MAX_DEVICES; i++) {
        device *dv = &p->dev[i];
        CUdevice cu;
        if (d->cuDeviceGet(&cu, i) == CUDA_SUCCESS) {
            if (d->cuDeviceGetName(dv->name, sizeof dv->name, cu) != CUDA_SUCCESS) snprintf(dv->name, sizeof dv->name, "?");
            d->cuDeviceTotalMem(&dv->memory, cu);
        }
        cudaload_kernels_info k = {.size = sizeof k};
        cudaload_kernels_info_get(i, &k);
        dv->cc_major = k.cc_major;
        dv->cc_minor = k.cc_minor;
        dv->has_sass = k.has_sass;
        dv->would_jit = k.would_jit;
        dv->runnable = k.runnable;
        if (k.runnable != CUDALOAD_OK) snprintf(dv->why, sizeof dv->why, "%s", cudaload_last_error());
    }
}

/* ---- self-test: SAXPY and SGEMM on random data against a CPU reference ---- */

static unsigned long long rng = 0x9e3779b97f4a7c15ULL;
static float frand(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (float)((rng >> 40) & 0xffffff) / 16777216.0f * 2.0f - 1.0f;
}

static int cmpf(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

#define ST_CHECK(t, what, call)                                                                     \
    do {                                                                                            \
        cudaError_t e_ = (call);                                                                    \
        if (e_ != cudaSuccess) {                                                                    \
            snprintf((t)->error, sizeof (t)->error, "%s failed: %s (%s)", what, rt->cudaGetErrorName(e_), \
                     rt->cudaGetErrorString(e_));                                                   \
            goto out;                                                                               \
        }                                                                                           \
    } while (0)

static const char *backend_name(cudaload_backend b) {
    return b == CUDALOAD_BACKEND_BUNDLED ? "bundled" : b == CUDALOAD_BACKEND_CUBLAS ? "cublas" : "auto";
}

/* Median milliseconds of reps runs of launch (which returns a status). */
typedef cudaload_status (*launch_fn)(void *ctx);
static int time_median(const cudaload_cudart_table *rt, launch_fn fn, void *ctx, int reps, float *ms) {
    cudaEvent_t a = NULL, b = NULL;
    float t[16];
    int ok = rt->cudaEventCreate(&a) == cudaSuccess && rt->cudaEventCreate(&b) == cudaSuccess;
    for (int r = 0; ok && r < reps; r++) {
        ok = rt->cudaEventRecord(a, NULL) == cudaSuccess && fn(ctx) == CUDALOAD_OK &&
             rt->cudaEventRecord(b, NULL) == cudaSuccess && rt->cudaEventSynchronize(b) == cudaSuccess &&
             rt->cudaEventElapsedTime(&t[r], a, b) == cudaSuccess;
    }
    if (a) rt->cudaEventDestroy(a);
    if (b) rt->cudaEventDestroy(b);
    if (!ok) return 0;
    qsort(t, (size_t)reps, sizeof t[0], cmpf);
    *ms = t[reps / 2];
    return 1;
}

typedef struct saxpy_args {
    long long n;
    float a;
    float *x, *y;
} saxpy_args;
static cudaload_status run_saxpy(void *c) {
    saxpy_args *s = c;
    return cudaload_saxpy(s->n, s->a, s->x, s->y, NULL);
}

typedef struct sgemm_args {
    int n;
    float *A, *B, *C;
} sgemm_args;
static cudaload_status run_sgemm(void *c) {
    sgemm_args *s = c;
    return cudaload_sgemm(CUDALOAD_OP_N, CUDALOAD_OP_N, s->n, s->n, s->n, 1.0f, s->A, s->n, s->B, s->n, 0.0f, s->C, s->n,
                          NULL);
}

static void selftest_saxpy(const cudaload_cudart_table *rt, test_result *t) {
    const long long n = 1LL << 24;
    const size_t bytes = (size_t)n * sizeof(float);
    float *x = malloc(bytes), *y = malloc(bytes), *out = malloc(bytes), *dx = NULL, *dy = NULL;
    t->ran = 1;
    if (!x || !y || !out) {
        snprintf(t->error, sizeof t->error, "out of host memory");
        goto out;
    }
    for (long long i = 0; i < n; i++) x[i] = frand(), y[i] = frand();
    ST_CHECK(t, "cudaMalloc", rt->cudaMalloc((void **)&dx, bytes));
    ST_CHECK(t, "cudaMalloc", rt->cudaMalloc((void **)&dy, bytes));
    ST_CHECK(t, "cudaMemcpy", rt->cudaMemcpy(dx, x, bytes, cudaMemcpyHostToDevice));
    ST_CHECK(t, "cudaMemcpy", rt->cudaMemcpy(dy, y, bytes, cudaMemcpyHostToDevice));
    saxpy_args s = {n, 0.75f, dx, dy};
    cudaload_status st = run_saxpy(&s);
    if (st != CUDALOAD_OK) {
        snprintf(t->error, sizeof t->error, "%s: %s", cudaload_status_name(st), cudaload_last_error());
        goto out;
    }
    ST_CHECK(t, "cudaMemcpy", rt->cudaMemcpy(out, dy, bytes, cudaMemcpyDeviceToHost));
    cudaload_kernels_info k = {.size = sizeof k};
    cudaload_kernels_info_get(-1, &k);
    t->backend = backend_name(k.last_backend);
    for (long long i = 0; i < n; i++) {
        double want = 0.75 * (double)x[i] + y[i];
        double err = fabs(out[i] - want) / (fabs(want) + 1e-6);
        if (err > t->max_rel_err) t->max_rel_err = err;
    }
    float ms = 0;
    if (!time_median(rt, run_saxpy, &s, 11, &ms)) {
        snprintf(t->error, sizeof t->error, "timing failed: %s", cudaload_last_error());
        goto out;
    }
    t->ms = ms;
    t->rate = 12.0 * (double)n / (ms / 1e3) / 1e9;
    t->pass = t->max_rel_err < 1e-5;
out:
    if (dx) rt->cudaFree(dx);
    if (dy) rt->cudaFree(dy);
    free(x), free(y), free(out);
}

static void selftest_sgemm(const cudaload_cudart_table *rt, test_result *t) {
    const int n = 1024;
    const size_t elems = (size_t)n * n, bytes = elems * sizeof(float);
    float *A = malloc(bytes), *B = malloc(bytes), *C = malloc(bytes), *dA = NULL, *dB = NULL, *dC = NULL;
    t->ran = 1;
    if (!A || !B || !C) {
        snprintf(t->error, sizeof t->error, "out of host memory");
        goto out;
    }
    for (size_t i = 0; i < elems; i++) A[i] = frand(), B[i] = frand(), C[i] = NAN; /* beta = 0: C must not be read */
    ST_CHECK(t, "cudaMalloc", rt->cudaMalloc((void **)&dA, bytes));
    ST_CHECK(t, "cudaMalloc", rt->cudaMalloc((void **)&dB, bytes));
    ST_CHECK(t, "cudaMalloc", rt->cudaMalloc((void **)&dC, bytes));
    ST_CHECK(t, "cudaMemcpy", rt->cudaMemcpy(dA, A, bytes, cudaMemcpyHostToDevice));
    ST_CHECK(t, "cudaMemcpy", rt->cudaMemcpy(dB, B, bytes, cudaMemcpyHostToDevice));
    ST_CHECK(t, "cudaMemcpy", rt->cudaMemcpy(dC, C, bytes, cudaMemcpyHostToDevice));
    sgemm_args s = {n, dA, dB, dC};
    cudaload_status st = run_sgemm(&s);
    if (st != CUDALOAD_OK) {
        snprintf(t->error, sizeof t->error, "%s: %s", cudaload_status_name(st), cudaload_last_error());
        goto out;
    }
    ST_CHECK(t, "cudaMemcpy", rt->cudaMemcpy(C, dC, bytes, cudaMemcpyDeviceToHost));
    cudaload_kernels_info k = {.size = sizeof k};
    cudaload_kernels_info_get(-1, &k);
    t->backend = backend_name(k.last_backend);
    for (int s_ = 0; s_ < 512; s_++) { /* a sample of entries, in float64 */
        int i = (int)((unsigned)(s_ * 2654435761u) % (unsigned)n), j = (s_ * 37 + 11) % n;
        double ref = 0, mag = 0;
        for (int p = 0; p < n; p++) {
            ref += (double)A[i + (size_t)p * n] * B[p + (size_t)j * n];
            mag += fabs((double)A[i + (size_t)p * n] * B[p + (size_t)j * n]);
        }
        double err = fabs(C[i + (size_t)j * n] - ref) / (mag + 1e-30);
        if (!(err <= t->max_rel_err)) t->max_rel_err = isnan(err) ? INFINITY : err;
    }
    float ms = 0;
    if (!time_median(rt, run_sgemm, &s, 11, &ms)) {
        snprintf(t->error, sizeof t->error, "timing failed: %s", cudaload_last_error());
        goto out;
    }
    t->ms = ms;
    t->rate = 2.0 * n * (double)n * n / (ms / 1e3) / 1e12;
    t->pass = t->max_rel_err < 1e-5;
out:
    if (dA) rt->cudaFree(dA);
    if (dB) rt->cudaFree(dB);
    if (dC) rt->cudaFree(dC);
    free(A), free(B), free(C);
}

/* ---- text output ---- */

static const char *c_on(const probe *p, const char *code) { return p->color ? code : ""; }
#define BOLD "\033[1m"
#define RED "\033[31m"
#define GREEN "\033[32m"
#define YELLOW "\033[33m"
#define RESET "\033[0m"

static const char *lib_state(const cudaload_library_info *l) {
    if (l->status == CUDALOAD_OK) return l->loaded ? "loaded" : "found";
    if (l->status == CUDALOAD_ERROR_NOT_FOUND || l->status == CUDALOAD_ERROR_NOT_ATTEMPTED) return "not_found";
    return "error";
}

static void print_version(const cudaload_library_info *l, char *buf, size_t n) {
    if (l->version <= 0) snprintf(buf, n, l->status == CUDALOAD_OK && !l->loaded ? "version not read (not loaded)" : "version unknown");
    else if (l->lib == CUDALOAD_LIB_CUBLAS || l->lib == CUDALOAD_LIB_CUBLASLT)
        snprintf(buf, n, "%d.%d.%d", l->version / 10000, l->version / 100 % 100, l->version % 100);
    else
        snprintf(buf, n, "CUDA %d.%d (%d)", l->version / 1000, l->version % 1000 / 10, l->version);
}

/* ---- 80-column layout ---- */

#define WIDTH 80

/* Visible columns of the first len bytes of s: colour sequences take none, a UTF-8 sequence
 * one column. */
static size_t vis_width(const char *s, size_t len) {
    size_t n = 0;
    for (size_t i = 0; i < len && s[i]; i++) {
        if (s[i] == '\033') {
            while (i < len && s[i] && s[i] != 'm') i++;
            continue;
        }
        if (((unsigned char)s[i] & 0xc0) != 0x80) n++;
    }
    return n;
}

/* The length of the next unit of s (n > 0 bytes there): a whole valid UTF-8 sequence, else
 * one byte. *esc is set when the text report must not write it as is, but as \xNN per byte:
 * a C0 control (ESC, newline) or DEL; a C1 control, U+0080-U+009F (UTF-8 c2 80-c2 9f),
 * which a terminal may take as CSI and the like; and any byte that is not part of valid
 * UTF-8 (a raw 0x80-0x9f is a C1 control to an 8-bit terminal). A path or a message then
 * cannot drive the terminal. */
static size_t text_unit(const unsigned char *s, size_t n, int *esc) {
    unsigned char c = s[0];
    *esc = 0;
    if (c < 0x80) {
        *esc = c < 0x20 || c == 0x7f;
        return 1;
    }
    size_t len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    /* the second byte's range excludes overlong forms, surrogates and code points past U+10FFFF */
    unsigned char lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80, hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
    int valid = len && len <= n && s[1] >= lo && s[1] <= hi;
    for (size_t i = 2; valid && i < len; i++) valid = (s[i] & 0xc0) == 0x80;
    if (!valid) {
        *esc = 1; /* not UTF-8: each byte on its own */
        return 1;
    }
    *esc = c == 0xc2 && s[1] <= 0x9f; /* C1 */
    return len;
}

/* Writes the n bytes at s as the text report does: units text_unit flags as \xNN. */
static void put_text(FILE *o, const char *s, size_t n) {
    for (size_t i = 0; i < n;) {
        int esc;
        size_t u = text_unit((const unsigned char *)s + i, n - i, &esc);
        for (size_t k = 0; k < u; k++)
            if (esc) fprintf(o, "\\x%02x", (unsigned char)s[i + k]);
            else fputc(s[i + k], o);
        i += u;
    }
}

/* Columns that put_text takes for the n bytes at s (an escaped byte: 4). */
static size_t text_width(const char *s, size_t n) {
    size_t w = 0;
    for (size_t i = 0; i < n;) {
        int esc;
        size_t u = text_unit((const unsigned char *)s + i, n - i, &esc);
        w += esc ? 4 * u : 1;
        i += u;
    }
    return w;
}

/* s made safe for a terminal (put_text's escaping). The result lives until eight later calls
 * (enough for one printf). */
static const char *tx(const char *s) {
    static char *pool[8];
    static unsigned next;
    if (!s) return "(null)";
    char **slot = &pool[next++ % 8];
    free(*slot);
    *slot = NULL;
    size_t len = strlen(s);
    char *buf = NULL;
    size_t size = 0;
    FILE *m = open_memstream(&buf, &size);
    if (!m) return ""; /* out of memory: nothing rather than raw bytes */
    put_text(m, s, len);
    if (fclose(m) != 0) {
        free(buf);
        return "";
    }
    *slot = buf;
    return buf;
}

/* Length in bytes of the word at s: up to a blank, where with marks a `quoted` span (a
 * command) counts as part of the word, blanks included. */
static size_t word_len(const char *s, int marks) {
    size_t i = 0;
    int quoted = 0;
    for (; s[i]; i++) {
        if (marks && s[i] == '`') quoted = !quoted;
        else if (!quoted && (s[i] == ' ' || s[i] == '\n')) break;
    }
    return i;
}

/* Prints prefix, then text word-wrapped to WIDTH columns, continuation lines indented by
 * indent spaces (a newline in text starts such a line too). A word wider than a line (a
 * long path) is put on a line of its own, never broken. With marks, the probe's own texts:
 * a command in `backquotes` is one word, printed without the quotes. */
static void wrap_marked(FILE *o, const char *prefix, int indent, const char *text, int marks) {
    size_t col = vis_width(prefix, strlen(prefix));
    fputs(prefix, o);
    int at_start = 1;
    for (const char *s = text; *s;) {
        if (*s == '\n') {
            s++;
            if (!*s) break;
            fprintf(o, "\n%*s", indent, "");
            col = (size_t)indent, at_start = 1;
            continue;
        }
        if (*s == ' ') {
            s++;
            continue;
        }
        size_t len = word_len(s, marks), w = 0;
        for (size_t i = 0, j; i < len; i = j + 1) { /* the spans between backquotes */
            for (j = i; j < len && !(marks && s[j] == '`'); j++) {}
            w += text_width(s + i, j - i);
        }
        if (col + (at_start ? 0 : 1) + w > WIDTH && col > (size_t)indent) { /* also after a long prefix */
            fprintf(o, "\n%*s", indent, "");
            col = (size_t)indent, at_start = 1;
        }
        if (!at_start) fputc(' ', o), col++;
        for (size_t i = 0, j; i < len; i = j + 1) {
            for (j = i; j < len && !(marks && s[j] == '`'); j++) {}
            put_text(o, s + i, j - i);
        }
        col += w, at_start = 0, s += len;
    }
    fputc('\n', o);
}

static void wrap(FILE *o, const char *prefix, int indent, const char *text) { wrap_marked(o, prefix, indent, text, 0); }

/* Prints a group of command-line items after label, all on one line when they fit, else
 * one item a line joined by " \" so the block still pastes into a shell. */
static void flag_block(FILE *o, const char *label, char *const *items, int n) {
    char line[8 * PATH_MAX];
    int len = snprintf(line, sizeof line, "  %-9s", label);
    for (int i = 0; i < n; i++) len += snprintf(line + len, sizeof line - (size_t)len, "%s%s", i ? " " : "", tx(items[i]));
    if (vis_width(line, strlen(line)) <= WIDTH || n == 1) {
        fprintf(o, "%s\n", line);
        return;
    }
    for (int i = 0; i < n; i++) fprintf(o, i ? "%11s%s%s\n" : "  %-9s%s%s\n", i ? "" : label, tx(items[i]), i + 1 < n ? " \\" : "");
}

static void heading(FILE *o, const probe *p, const char *title) { fprintf(o, "\n%s%s%s\n", c_on(p, BOLD), title, c_on(p, RESET)); }

static void text_build(FILE *o, const probe *p) {
    const cudaload_library_info *rt = &p->lib[CUDALOAD_LIB_CUDART], *bl = &p->lib[CUDALOAD_LIB_CUBLAS];
    int have_bl = bl->status == CUDALOAD_OK && bl->soname;
    char *items[4];
    int n = 0;
    heading(o, p, "Build against what was found");
    for (int i = 0; i < 2; i++)
        if (p->include_dirs[i][0] && asprintf(&items[n], "-I%s", p->include_dirs[i]) >= 0) n++;
    if (n) flag_block(o, "compile", items, n);
    else
        wrap(o, "  compile  ", 11, "(no cuda_runtime_api.h beside these libraries: the headers come with the toolkit, "
                                "or with the wheels: nvidia/cu13/include, nvidia/cuda_runtime/include)");
    while (n) free(items[--n]);
    /* each -L and -l: its own item, so that a long directory never drags a flag past 80 columns */
    if (asprintf(&items[n], "-L%s", p->lib_dirs[0]) >= 0) n++;
    if (asprintf(&items[n], "-l:%s", rt->soname) >= 0) n++;
    if (have_bl && p->lib_dirs[1][0] && asprintf(&items[n], "-L%s", p->lib_dirs[1]) >= 0) n++;
    if (have_bl && asprintf(&items[n], "-l:%s", bl->soname) >= 0) n++;
    flag_block(o, "link", items, n);
    while (n) free(items[--n]);
    if (asprintf(&items[n], "-Wl,--disable-new-dtags") >= 0) n++;
    for (int i = 0; i < 2; i++)
        if (p->lib_dirs[i][0] && asprintf(&items[n], "-Wl,-rpath,%s", p->lib_dirs[i]) >= 0) n++;
    flag_block(o, "run", items, n);
    while (n) free(items[--n]);
    wrap(o, "           ", 11, "(an RPATH, not a RUNPATH: LD_LIBRARY_PATH cannot override it)");
    if (p->origin_rel[0][0]) {
        for (int i = 0; i < 2; i++)
            if (p->origin_rel[i][0] && asprintf(&items[n], "-Wl,-rpath,'$ORIGIN/../%s'", p->origin_rel[i]) >= 0) n++;
        wrap(o, "  ", 4, "or, relocatable, for a module in site-packages/<package>/ of a wheel:");
        flag_block(o, "", items, n);
        while (n) free(items[--n]);
    }
    wrap_marked(o, "  ", 4, "or link no CUDA at all: embed libcudaload, `pkg-config --cflags --libs cudaload`", 1);
}

static void text_report(FILE *o, const probe *p, int code) {
    char buf[1024];
    fprintf(o, "%slibcudaload %s%s: cudaload-probe%s\n", c_on(p, BOLD), cudaload_version_string(),
           p->find_only ? " (find-only: nothing loaded)" : "", c_on(p, RESET));

    heading(o, p, "Search roots, in order");
    if (!p->n_roots) fprintf(o, "  (none)\n");
    for (size_t i = 0; i < p->n_roots; i++) {
        const char *path = tx(p->roots[i].path), *missing = p->roots[i].exists ? "" : "  (missing)";
        /* a path too long for the line gets a line of its own, nothing after it */
        if (17 + vis_width(path, strlen(path)) + strlen(missing) <= WIDTH)
            fprintf(o, "  %2zu  %-9s  %s%s\n", i + 1, cudaload_source_name(p->roots[i].source), path, missing);
        else
            fprintf(o, "  %2zu  %s%s\n      %s\n", i + 1, cudaload_source_name(p->roots[i].source), missing, path);
    }
    if (p->system_search) fprintf(o, "      then the system search (dlopen by SONAME)\n");
    else fprintf(o, "      (the system search is scoped out by CUDALOAD_SOURCES)\n");

    heading(o, p, "Libraries");
    for (size_t i = 0; i < p->n_libs; i++) {
        const cudaload_library_info *l = &p->lib[i];
        int ok = l->status == CUDALOAD_OK;
        char prefix[160];
        snprintf(prefix, sizeof prefix, "  %-9s %s%s%s ", l->name, c_on(p, ok ? GREEN : RED),
                 ok ? lib_state(l) : cudaload_status_string(l->status), c_on(p, RESET));
        if (ok) {
            char v[64];
            print_version(l, v, sizeof v);
            snprintf(buf, sizeof buf, "%s, from %s%s%s%s", l->soname, cudaload_source_name(l->source),
                     l->already_loaded ? " (already loaded)" : "", l->driver_branch ? ", branch " : "",
                     l->driver_branch ? l->driver_branch : "");
            wrap(o, prefix, 12, buf);
            fprintf(o, "            %s\n            %s\n", tx(l->path), v);
        } else {
            snprintf(buf, sizeof buf, "(%s)", cudaload_status_name(l->status));
            wrap(o, prefix, 12, buf);
        }
        for (size_t c = 0; c < l->n_candidates; c++) {
            const cudaload_candidate *cd = &l->candidates[c];
            if (ok && l->n_candidates == 1) break; /* the one taken is shown above */
            const char *path = tx(cd->path), *src = cudaload_source_name(cd->source);
            /* the source goes to a line of its own when the path leaves no room for it */
            int fits = 14 + vis_width(path, strlen(path)) + 3 + strlen(src) <= WIDTH;
            fprintf(o, "            %s %s%s[%s]\n", cd->result == CUDALOAD_OK ? "+" : "-", path,
                    fits ? " " : "\n              ", src);
            wrap(o, "              ", 14, cd->reason);
        }
    }
    fprintf(o, "  %-9s %s\n", "nvrtc", p->nvrtc[0] ? "found (optional; not loaded)" : "not found (optional)");
    if (p->nvrtc[0]) fprintf(o, "            %s\n", tx(p->nvrtc));

    heading(o, p, "Devices");
    if (p->dev_status == CUDALOAD_ERROR_NOT_ATTEMPTED) fprintf(o, "  not queried (find-only)\n");
    else if (p->dev_status != CUDALOAD_OK) wrap(o, "  none: ", 4, cudaload_status_string(p->dev_status));
    for (int i = 0; i < p->ndev && i < MAX_DEVICES; i++) {
        const device *d = &p->dev[i];
        fprintf(o, "  %d  %s  sm_%d%d  %.1f GiB\n", i, tx(d->name), d->cc_major, d->cc_minor, (double)d->memory / (1 << 30));
        if (d->runnable == CUDALOAD_OK && d->has_sass)
            snprintf(buf, sizeof buf, "bundled kernels: SASS for sm_%d%d", d->cc_major, d->cc_minor);
        else if (d->runnable == CUDALOAD_OK)
            snprintf(buf, sizeof buf, "bundled kernels: PTX compute_%d, JIT-compiled by the driver at first use",
                     p->kinfo.ptx_arch);
        else
            snprintf(buf, sizeof buf, "bundled kernels: %scannot run here (%s); SAXPY/SGEMM use cuBLAS.\n%s",
                     d->has_sass ? "SASS present, but " : d->would_jit ? "PTX present, but " : "",
                     cudaload_status_name(d->runnable), d->why);
        wrap(o, "     ", 5, buf);
    }

    heading(o, p, "Bundled kernels");
    if (p->kinfo.built) {
        char archs[256] = "";
        size_t an = 0;
        for (const char *a = p->kinfo.sass_archs; a && *a && an + 4 < sizeof archs; a++)
            an += (size_t)snprintf(archs + an, sizeof archs - an, *a == ',' ? ", " : "%c", *a);
        snprintf(buf, sizeof buf, "built by CUDA %d.%d, %zu KiB embedded: SASS for sm_%s; PTX compute_%d",
                 p->kinfo.toolkit_version / 1000, p->kinfo.toolkit_version % 1000 / 10, p->kinfo.fatbin_bytes / 1024,
                 archs, p->kinfo.ptx_arch);
        wrap(o, "  ", 4, buf);
    } else {
        wrap(o, "  ", 4, "not built (libcudaload was built without nvcc): SAXPY/SGEMM use cuBLAS");
    }

    heading(o, p, "Environment");
    int any = 0;
    for (size_t i = 0; i < sizeof env_names / sizeof env_names[0]; i++) {
        const char *v = getenv(env_names[i]);
        if (v) fprintf(o, "  %s=%s\n", env_names[i], tx(v)), any = 1;
    }
    if (!any) fprintf(o, "  (no variable that steers the search is set)\n");

    if (p->lib[CUDALOAD_LIB_CUDART].status == CUDALOAD_OK && p->lib_dirs[0][0]) text_build(o, p);

    if (p->selftest_attempted) {
        heading(o, p, "Self-test");
        const test_result *t[2] = {&p->saxpy, &p->sgemm};
        const char *names[2] = {"SAXPY n=2^24", "SGEMM 1024^3"};
        for (int i = 0; i < 2; i++) {
            if (!t[i]->ran) continue;
            if (t[i]->error[0]) {
                char prefix[64];
                snprintf(prefix, sizeof prefix, "  %-13s %sFAIL%s  ", names[i], c_on(p, RED), c_on(p, RESET));
                wrap(o, prefix, 22, t[i]->error);
                continue;
            }
            fprintf(o, "  %-13s %s%s%s  max rel err %.2g  %.3f ms  %.0f %s  (%s)\n", names[i],
                   c_on(p, t[i]->pass ? GREEN : RED), t[i]->pass ? "pass" : "FAIL", c_on(p, RESET), t[i]->max_rel_err,
                   t[i]->ms, t[i]->rate, i == 0 ? "GB/s" : "TFLOP/s", t[i]->backend);
        }
    }
    if (p->n_warnings) heading(o, p, "Warnings");
    for (int i = 0; i < p->n_warnings; i++) {
        char prefix[32];
        snprintf(prefix, sizeof prefix, "  %s!%s ", c_on(p, YELLOW), c_on(p, RESET));
        wrap_marked(o, prefix, 4, p->warnings[i], 1);
    }

    static const char *const what[] = {"ok", "a required library is missing or unusable",
                                       "libraries found, but no driver or no device", "the self-test failed"};
    fprintf(o, "\n%sResult%s: %s%s%s (exit %d)\n", c_on(p, BOLD), c_on(p, RESET), c_on(p, code ? RED : GREEN), what[code],
           c_on(p, RESET), code);
    for (int i = 0; i < p->n_problems; i++) wrap(o, "  ", 4, p->problems[i]);
    for (int i = 0; i < p->n_fixes; i++) wrap_marked(o, "  fix: ", 7, p->fixes[i], 1);
}

/* ---- JSON output ---- */

static void json_test(pj_writer *w, const test_result *t) {
    pj_begin_object(w);
    pj_key(w, "pass"), pj_bool(w, t->pass && !t->error[0]);
    pj_key(w, "backend"), pj_string(w, t->backend);
    pj_key(w, "max_rel_err"), t->error[0] ? pj_null(w) : pj_double(w, t->max_rel_err);
    pj_key(w, "ms"), t->error[0] ? pj_null(w) : pj_double(w, t->ms);
    pj_key(w, "error"), pj_string(w, t->error[0] ? t->error : NULL);
    pj_end_object(w);
}

static void json_report(FILE *out, const probe *p, int code) {
    pj_writer w = {.out = out};
    pj_begin_object(&w);
    pj_key(&w, "schema_version"), pj_int(&w, SCHEMA_VERSION);
    pj_key(&w, "cudaload_version"), pj_string(&w, cudaload_version_string());
    pj_key(&w, "exit_code"), pj_int(&w, code);
    pj_key(&w, "find_only"), pj_bool(&w, p->find_only);
    pj_key(&w, "init_status"), pj_string(&w, cudaload_status_name(p->init_status));
    pj_key(&w, "system_search"), pj_bool(&w, p->system_search);
    pj_key(&w, "roots"), pj_begin_array(&w);
    for (size_t i = 0; i < p->n_roots; i++) {
        pj_begin_object(&w);
        pj_key(&w, "path"), pj_string(&w, p->roots[i].path);
        pj_key(&w, "source"), pj_string(&w, cudaload_source_name(p->roots[i].source));
        pj_key(&w, "exists"), pj_bool(&w, p->roots[i].exists);
        pj_end_object(&w);
    }
    pj_end_array(&w);
    pj_key(&w, "libraries"), pj_begin_object(&w);
    for (size_t i = 0; i < p->n_libs; i++) {
        const cudaload_library_info *l = &p->lib[i];
        int ok = l->status == CUDALOAD_OK;
        pj_key(&w, l->name), pj_begin_object(&w);
        pj_key(&w, "status"), pj_string(&w, lib_state(l));
        pj_key(&w, "status_code"), pj_string(&w, cudaload_status_name(l->status));
        pj_key(&w, "path"), pj_string(&w, ok ? l->path : NULL);
        pj_key(&w, "soname"), pj_string(&w, ok ? l->soname : NULL);
        pj_key(&w, "source"), pj_string(&w, ok ? cudaload_source_name(l->source) : NULL);
        pj_key(&w, "already_loaded"), pj_bool(&w, l->already_loaded);
        pj_key(&w, "major"), l->major ? pj_int(&w, l->major) : pj_null(&w);
        pj_key(&w, "version"), l->version > 0 ? pj_int(&w, l->version) : pj_null(&w);
        pj_key(&w, "candidates"), pj_begin_array(&w);
        for (size_t c = 0; c < l->n_candidates; c++) {
            /* a system-search attempt has no path: the library names it "<SONAME> (system search)" */
            const char *cp = l->candidates[c].path;
            int absolute = cp && cp[0] == '/';
            char soname[128] = "";
            if (!absolute && cp) snprintf(soname, sizeof soname, "%.*s", (int)strcspn(cp, " "), cp);
            pj_begin_object(&w);
            pj_key(&w, "path"), pj_string(&w, absolute ? cp : NULL);
            pj_key(&w, "soname"), pj_string(&w, absolute ? NULL : soname);
            pj_key(&w, "source"), pj_string(&w, cudaload_source_name(l->candidates[c].source));
            pj_key(&w, "result"), pj_string(&w, l->candidates[c].result == CUDALOAD_OK ? "taken" : "skipped");
            pj_key(&w, "status_code"), pj_string(&w, cudaload_status_name(l->candidates[c].result));
            pj_key(&w, "reason"), pj_string(&w, l->candidates[c].reason);
            pj_key(&w, "reason_code"), pj_string(&w, l->details ? cudaload_reason_name(l->details[c].reason) : NULL);
            pj_end_object(&w);
        }
        pj_end_array(&w);
        pj_end_object(&w);
    }
    pj_key(&w, "nvrtc"), pj_begin_object(&w);
    pj_key(&w, "status"), pj_string(&w, p->nvrtc[0] ? "found" : "not_found");
    pj_key(&w, "path"), pj_string(&w, p->nvrtc[0] ? p->nvrtc : NULL);
    pj_end_object(&w);
    pj_end_object(&w);
    const cudaload_library_info *drv = &p->lib[CUDALOAD_LIB_DRIVER];
    pj_key(&w, "driver"), pj_begin_object(&w);
    pj_key(&w, "cuda_version"), drv->version > 0 ? pj_int(&w, drv->version) : pj_null(&w);
    pj_key(&w, "branch"), pj_string(&w, drv->driver_branch);
    pj_end_object(&w);
    pj_key(&w, "devices"), pj_begin_array(&w);
    for (int i = 0; i < p->ndev && i < MAX_DEVICES; i++) {
        const device *d = &p->dev[i];
        pj_begin_object(&w);
        pj_key(&w, "index"), pj_int(&w, i);
        pj_key(&w, "name"), pj_string(&w, d->name);
        pj_key(&w, "compute_capability"), pj_begin_array(&w), pj_int(&w, d->cc_major), pj_int(&w, d->cc_minor), pj_end_array(&w);
        pj_key(&w, "memory_bytes"), pj_int(&w, (long long)d->memory);
        pj_key(&w, "kernels"), pj_string(&w, d->runnable != CUDALOAD_OK ? "none" : d->has_sass ? "sass" : "ptx_jit");
        pj_key(&w, "has_sass"), pj_bool(&w, d->has_sass);
        pj_key(&w, "would_jit"), pj_bool(&w, d->would_jit);
        pj_key(&w, "kernels_status"), pj_string(&w, cudaload_status_name(d->runnable));
        pj_key(&w, "kernels_reason"), pj_string(&w, d->runnable == CUDALOAD_OK ? NULL : d->why);
        pj_end_object(&w);
    }
    pj_end_array(&w);
    pj_key(&w, "devices_status"), pj_string(&w, cudaload_status_name(p->dev_status));
    pj_key(&w, "kernels"), pj_begin_object(&w);
    pj_key(&w, "built"), pj_bool(&w, p->kinfo.built);
    pj_key(&w, "toolkit_version"), p->kinfo.built ? pj_int(&w, p->kinfo.toolkit_version) : pj_null(&w);
    pj_key(&w, "sass"), pj_begin_array(&w);
    for (const char *s = p->kinfo.sass_archs; s && *s;) {
        pj_int(&w, atoi(s));
        const char *comma = strchr(s, ',');
        s = comma ? comma + 1 : "";
    }
    pj_end_array(&w);
    pj_key(&w, "ptx"), p->kinfo.ptx_arch ? pj_int(&w, p->kinfo.ptx_arch) : pj_null(&w);
    pj_key(&w, "fatbin_bytes"), pj_int(&w, (long long)p->kinfo.fatbin_bytes);
    pj_end_object(&w);
    pj_key(&w, "environment"), pj_begin_object(&w);
    for (size_t i = 0; i < sizeof env_names / sizeof env_names[0]; i++) pj_key(&w, env_names[i]), pj_string(&w, getenv(env_names[i]));
    pj_end_object(&w);
    pj_key(&w, "build"), pj_begin_object(&w);
    pj_key(&w, "include_dirs"), pj_begin_array(&w);
    for (int i = 0; i < 2; i++)
        if (p->include_dirs[i][0]) pj_string(&w, p->include_dirs[i]);
    pj_end_array(&w);
    pj_key(&w, "link_flags"), pj_string(&w, p->link_flags[0] ? p->link_flags : NULL);
    pj_key(&w, "lib_dirs"), pj_begin_array(&w);
    for (int i = 0; i < 2; i++)
        if (p->lib_dirs[i][0]) pj_string(&w, p->lib_dirs[i]);
    pj_end_array(&w);
    pj_key(&w, "origin_rpath"), pj_begin_array(&w);
    for (int i = 0; i < 2; i++)
        if (p->origin_rel[i][0]) {
            char o[PATH_MAX + 32];
            snprintf(o, sizeof o, "$ORIGIN/../%s", p->origin_rel[i]);
            pj_string(&w, o);
        }
    pj_end_array(&w);
    pj_end_object(&w);
    pj_key(&w, "selftest");
    if (!p->selftest_attempted) {
        pj_null(&w);
    } else {
        pj_begin_object(&w);
        pj_key(&w, "saxpy"), json_test(&w, &p->saxpy);
        pj_key(&w, "saxpy_gbps"), p->saxpy.error[0] ? pj_null(&w) : pj_double(&w, p->saxpy.rate);
        pj_key(&w, "sgemm"), json_test(&w, &p->sgemm);
        pj_key(&w, "sgemm_tflops"), p->sgemm.error[0] ? pj_null(&w) : pj_double(&w, p->sgemm.rate);
        pj_end_object(&w);
    }
    pj_key(&w, "warnings"), pj_begin_array(&w);
    for (int i = 0; i < p->n_warnings; i++) pj_string(&w, p->warnings[i]);
    pj_end_array(&w);
    pj_key(&w, "problems"), pj_begin_array(&w);
    for (int i = 0; i < p->n_problems; i++) pj_string(&w, p->problems[i]);
    pj_end_array(&w);
    pj_key(&w, "fixes"), pj_begin_array(&w);
    for (int i = 0; i < p->n_fixes; i++) pj_string(&w, p->fixes[i]);
    pj_end_array(&w);
    pj_key(&w, "message"), pj_string(&w, p->init_error[0] ? p->init_error : NULL);
    pj_end_object(&w);
}

/* ---- the public entry points ---- */

probe_report *probe_report_collect(cudaload_status init_status, const char *init_error, int find_only, int selftest) {
    return probe_report_collect_libs(init_status, init_error, find_only, selftest, NULL, 0);
}

probe_report *probe_report_collect_libs(cudaload_status init_status, const char *init_error, int find_only, int selftest,
                                        const cudaload_lib *extra, size_t n_extra) {
    probe *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->find_only = find_only;
    p->selftest = selftest;
    p->init_status = init_status;
    if (init_status != CUDALOAD_OK && init_error) snprintf(p->init_error, sizeof p->init_error, "%s", init_error);
    for (int i = 0; i < CUDALOAD_LIB_COUNT_; i++) {
        p->lib[i].size = sizeof p->lib[i];
        cudaload_get_library_info((cudaload_lib)i, &p->lib[i]);
    }
    p->n_libs = CUDALOAD_LIB_COUNT_;
    int extra_missing = 0;
    for (size_t i = 0; i < n_extra && p->n_libs < PROBE_MAX_LIBS; i++) {
        if ((int)extra[i] < CUDALOAD_LIB_COUNT_) continue; /* the core four are always there */
        cudaload_library_info *l = &p->lib[p->n_libs++];
        l->size = sizeof *l;
        cudaload_get_library_info(extra[i], l);
        extra_missing |= l->status != CUDALOAD_OK;
    }
    p->roots = cudaload_roots(&p->n_roots);
    p->kinfo.size = sizeof p->kinfo;
    cudaload_kernels_info_get(-1, &p->kinfo);
    p->system_search = system_in_scope();
    gather_devices(p);
    build_flags(p);
    find_nvrtc(p);
    check_ld_library_path(p);
    check_writable(p);
    check_relative_env(p);
    const cudaload_cudart_table *rt = cudaload_cudart();
    if (p->selftest && !p->find_only && p->dev_status == CUDALOAD_OK && p->ndev > 0 && rt &&
        p->lib[CUDALOAD_LIB_CUBLAS].status == CUDALOAD_OK) {
        p->selftest_attempted = 1;
        selftest_saxpy(rt, &p->saxpy);
        selftest_sgemm(rt, &p->sgemm);
    }

    diagnose(p);
    int code = PROBE_EXIT_OK;
    if (p->lib[CUDALOAD_LIB_CUDART].status != CUDALOAD_OK || p->lib[CUDALOAD_LIB_CUBLASLT].status != CUDALOAD_OK ||
        p->lib[CUDALOAD_LIB_CUBLAS].status != CUDALOAD_OK || extra_missing)
        code = PROBE_EXIT_LIB_MISSING;
    else if (p->lib[CUDALOAD_LIB_DRIVER].status != CUDALOAD_OK ||
             (!p->find_only && (p->dev_status != CUDALOAD_OK || p->ndev < 1)))
        code = PROBE_EXIT_NO_GPU;
    else if (p->selftest_attempted && (!p->saxpy.pass || !p->sgemm.pass || p->saxpy.error[0] || p->sgemm.error[0]))
        code = PROBE_EXIT_SELFTEST;
    p->code = code;
    return p;
}

int probe_report_exit_code(const probe_report *r) { return r->code; }

void probe_report_text(probe_report *r, FILE *out, int color) {
    r->color = color;
    text_report(out, r, r->code);
}

void probe_report_json(const probe_report *r, FILE *out) { json_report(out, r, r->code); }

void probe_report_free(probe_report *r) {
    if (!r) return;
    for (int i = 0; i < r->n_warnings; i++) free(r->warnings[i]);
    for (int i = 0; i < r->n_fixes; i++) free(r->fixes[i]);
    for (int i = 0; i < r->n_problems; i++) free(r->problems[i]);
    free(r);
}
