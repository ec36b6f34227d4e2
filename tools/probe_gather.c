/*
 * probe_gather.c -- the report's first step: what libcudaload found (every library's info, the
 * roots, the kernels, the devices), the build flags and NVRTC beside the runtime, and the
 * environment checks (LD_LIBRARY_PATH shadowing, files other users may write, relative
 * prefixes).
 */
#define _GNU_SOURCE
#include "probe_internal.h"

#include "cudaload_tables.h"

#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const probe_env_names[] = {
    "CUDALOAD_PATH",   "CUDALOAD_CUDART_PATH", "CUDALOAD_CUBLAS_PATH", "CUDALOAD_CUBLASLT_PATH",
    "CUDALOAD_DRIVER_PATH", "CUDALOAD_CUDA_MAJOR", "CUDALOAD_SOURCES", "CUDALOAD_DEBUG",
    "CUDALOAD_BACKEND", "CUDA_HOME", "CUDA_PATH", "CONDA_PREFIX", "VIRTUAL_ENV", "LD_LIBRARY_PATH",
    "CUDA_VISIBLE_DEVICES",
};
const size_t probe_n_env_names = sizeof probe_env_names / sizeof probe_env_names[0];

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
    const cudaload_library_info *rt = LIB(p, CUDALOAD_LIB_CUDART), *bl = LIB(p, CUDALOAD_LIB_CUBLAS);
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
    const cudaload_library_info *rt = LIB(p, CUDALOAD_LIB_CUDART);
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
        const cudaload_library_info *l = LIB(p, i);
        if (l->status != CUDALOAD_OK || !l->path) continue;
        char dir[PATH_MAX], by[320];
        const char *who;
        dirname_of(l->path, dir, sizeof dir);
        struct stat fs, ds;
        if (stat(l->path, &fs) == 0 && other_writers(&fs, by, sizeof by, &who))
            probe_note(p->warnings, &p->n_warnings, "%s is writable by %s (mode %03o): %s can replace the code this process "
                 "runs", l->path, by, (unsigned)(fs.st_mode & 0777), who);
        /* a directory once, naming every library taken from it */
        char holding[128] = "", other[PATH_MAX];
        int first = 1;
        for (int j = 0; j < CUDALOAD_LIB_COUNT_; j++) {
            const cudaload_library_info *m = LIB(p, j);
            if (m->status != CUDALOAD_OK || !m->path) continue;
            dirname_of(m->path, other, sizeof other);
            if (strcmp(other, dir) != 0) continue;
            if (j < i) first = 0;
            size_t hl = strlen(holding);
            snprintf(holding + hl, sizeof holding - hl, "%s%s", hl ? ", " : "", m->name);
        }
        if (first && stat(dir, &ds) == 0 && !(ds.st_mode & S_ISVTX) && other_writers(&ds, by, sizeof by, &who))
            probe_note(p->warnings, &p->n_warnings, "%s (holding %s) is writable by %s (mode %03o): %s can put another "
                 "library there", dir, holding, by, (unsigned)(ds.st_mode & 0777), who);
    }
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
            const cudaload_library_info *taken = LIB(p, names[i].lib);
            const char *took = taken->status == CUDALOAD_OK ? taken->path : NULL;
            char file[PATH_MAX + 64];
            snprintf(file, sizeof file, "%s/%s", d, names[i].name);
            int same = took && same_file(file, took);
            if (same && taken->source == CUDALOAD_SOURCE_SYSTEM) {
                probe_note(p->warnings, &p->n_warnings,
                     "%s was taken from LD_LIBRARY_PATH (%s), by the system search: no wheel, conda or "
                     "CUDA_HOME copy was found before it", names[i].name, d);
                const cudaload_root *w = probe_wheel_root(p);
                if (w)
                    probe_note(p->fixes, &p->n_fixes, "to use pip wheels instead, install them into the environment of %s: "
                         "`%s`, then take %s out of LD_LIBRARY_PATH", w->path, probe_pip_pair(taken->major), d);
            } else if (!same) {
                const char *words = taken_words(taken);
                if (words)
                    probe_note(p->warnings, &p->n_warnings,
                         "LD_LIBRARY_PATH puts %s ahead of %s for every program that loads CUDA by SONAME (torch, "
                         "cupy, ctypes), while libcudaload took %s", file, words, took);
                else
                    probe_note(p->warnings, &p->n_warnings,
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
        probe_note(p->fixes, &p->n_fixes, "`%s` (%s %s%s) %s", cmd, n_keep ? "the same without" : "it names only", bad[0],
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
        probe_note(p->warnings, &p->n_warnings, "%s=%s is not used: relative values are ignored (the search never depends "
             "on the current directory); give an absolute path: `export %s=\"$(realpath -- %s)\"`", vars[i], v,
             vars[i], word);
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

void probe_gather(probe *p, const cudaload_lib *extra, size_t n_extra) {
    for (int i = 0; i < CUDALOAD_LIB_COUNT_; i++) probe_lib_fill((cudaload_lib)i, &p->lib[i]);
    p->n_libs = CUDALOAD_LIB_COUNT_;
    for (size_t i = 0; i < n_extra && p->n_libs < PROBE_MAX_LIBS; i++) {
        int seen = (int)extra[i] < CUDALOAD_LIB_COUNT_; /* the core four are always there */
        for (size_t j = CUDALOAD_LIB_COUNT_; !seen && j < p->n_libs; j++) seen = LIB(p, j)->lib == extra[i];
        if (!seen) probe_lib_fill(extra[i], &p->lib[p->n_libs++]);
    }
    p->roots = cudaload_roots(&p->n_roots);
    p->kinfo.size = sizeof p->kinfo;
    cudaload_kernels_info_get(-1, &p->kinfo);
    p->system_search = system_in_scope();
    gather_devices(p);
    build_flags(p);
    find_nvrtc(p);
}

void probe_checks(probe *p) {
    check_ld_library_path(p);
    check_writable(p);
    check_relative_env(p);
}
