/* SPDX-License-Identifier: Apache-2.0 */
/*
 * probe_gather.c -- the report's first step: what libcudaload found (every library's info, the
 * roots, the kernels, the devices), the build flags and NVRTC beside the runtime, and the
 * environment checks (caller roots the search could not use, LD_LIBRARY_PATH shadowing, files
 * other users may write, relative prefixes).
 */
#define _GNU_SOURCE
#include "probe_internal.h"
#include "probe_platform.h"

#include "cudaload_tables.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The variables that steer the search, in the order reported; each library reported adds its
 * exact-file variable (the catalogue's CUDALOAD_<NAME>_PATH) after CUDALOAD_PATH. */
static const char *const env_before[] = {"CUDALOAD_PATH"};
static const char *const env_after[] = {"CUDALOAD_CUDA_MAJOR", "CUDALOAD_SOURCES", "CUDALOAD_DEBUG", "CUDALOAD_BACKEND",
                                        "CUDA_HOME", "CUDA_PATH", "CONDA_PREFIX", "VIRTUAL_ENV", "LD_LIBRARY_PATH",
                                        "CUDA_VISIBLE_DEVICES"};

static void add_env(probe *p, const char *name) {
    for (int i = 0; i < p->n_env; i++)
        if (strcmp(p->env[i], name) == 0) return;
    if (name && p->n_env < (int)(sizeof p->env / sizeof p->env[0])) p->env[p->n_env++] = name;
}

static void gather_env_names(probe *p) {
    for (size_t i = 0; i < sizeof env_before / sizeof env_before[0]; i++) add_env(p, env_before[i]);
    for (size_t i = 0; i < p->n_libs; i++) add_env(p, LIB(p, i)->env_name);
    for (size_t i = 0; i < sizeof env_after / sizeof env_after[0]; i++) add_env(p, env_after[i]);
}

static void dirname_of(const char *path, char *out, size_t n) {
    snprintf(out, n, "%s", path);
    char *slash = strrchr(out, '/');
    if (slash && slash != out) *slash = 0;
}

static int file_exists(const char *dir, const char *name) {
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return probe_exists(p);
}

/* <libdir>/../include when it holds the header (wheel and toolkit layouts alike). */
static int include_dir_for(const char *lib_path, const char *header, char *out, size_t n) {
    char dir[PATH_MAX], inc[PATH_MAX + 16];
    dirname_of(lib_path, dir, sizeof dir);
    snprintf(inc, sizeof inc, "%s/../include", dir);
    char *real = probe_realpath(inc);
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
    cudaload_catalogue_info rc = {.size = sizeof rc}, bc = {.size = sizeof bc};
    if (cudaload_catalogue_entry(CUDALOAD_LIB_CUDART, &rc) == CUDALOAD_OK && rc.header)
        include_dir_for(rt->path, rc.header, p->include_dirs[0], PATH_MAX);
    if (have_bl && (cudaload_catalogue_entry(CUDALOAD_LIB_CUBLAS, &bc) != CUDALOAD_OK || !bc.header ||
                    !include_dir_for(bl->path, bc.header, p->include_dirs[1], PATH_MAX)))
        p->include_dirs[1][0] = 0;
    if (p->include_dirs[1][0] && strcmp(p->include_dirs[0], p->include_dirs[1]) == 0) p->include_dirs[1][0] = 0;
    char *rdir = p->lib_dirs[0], *bdir = p->lib_dirs[1];
    dirname_of(rt->path, rdir, PATH_MAX);
    if (have_bl) dirname_of(bl->path, bdir, PATH_MAX);
    if (strcmp(bdir, rdir) == 0) bdir[0] = 0;
    for (int i = 0; i < 2; i++)
        if (p->lib_dirs[i][0]) origin_rel_of(p, p->lib_dirs[i], p->origin_rel[i], PATH_MAX);
    char *lf = p->link_flags;
    size_t n = probe_appendf(lf, sizeof p->link_flags, 0, "-L%s -l:%s", rdir, rt->soname);
    if (have_bl) {
        if (bdir[0]) n = probe_appendf(lf, sizeof p->link_flags, n, " -L%s", bdir);
        n = probe_appendf(lf, sizeof p->link_flags, n, " -l:%s", bl->soname);
    }
    n = probe_appendf(lf, sizeof p->link_flags, n, " -Wl,--disable-new-dtags -Wl,-rpath,%s", rdir);
    if (bdir[0]) n = probe_appendf(lf, sizeof p->link_flags, n, " -Wl,-rpath,%s", bdir);
    /* flags cut short would link against a directory that is not there: none rather than those
     * (the text report builds its lines from lib_dirs) */
    if (n >= sizeof p->link_flags) lf[0] = 0;
}

/* The index of major in a catalogue row's flavors, or -1. */
static int flavor_of(const cudaload_catalogue_info *c, int major) {
    for (int k = 0; k < c->n_majors; k++)
        if (c->majors[k] == major) return k;
    return -1;
}

/* NVRTC is optional and not loaded for the report (a search would be final for the process):
 * its file of the runtime's CUDA major (the catalogue's row) next to the runtime taken (CUDA 13
 * wheels, toolkits, conda), or in its own wheel directory of the site-packages the runtime's
 * wheel is in (CUDA 12: nvidia/cuda_nvrtc/lib beside nvidia/cuda_runtime/lib). */
static void find_nvrtc(probe *p) {
    const cudaload_library_info *rt = LIB(p, CUDALOAD_LIB_CUDART);
    cudaload_lib nv;
    cudaload_catalogue_info cn = {.size = sizeof cn}, cr = {.size = sizeof cr};
    if (rt->status != CUDALOAD_OK || !rt->major || !rt->path || cudaload_lib_by_name("nvrtc", &nv) != CUDALOAD_OK ||
        cudaload_catalogue_entry(nv, &cn) != CUDALOAD_OK || cudaload_catalogue_entry(CUDALOAD_LIB_CUDART, &cr) != CUDALOAD_OK)
        return;
    int k = flavor_of(&cn, rt->major), kr = flavor_of(&cr, rt->major);
    if (k < 0) return;
    char dir[PATH_MAX], cand[2 * PATH_MAX];
    dirname_of(rt->path, dir, sizeof dir);
    snprintf(cand, sizeof cand, "%s/%s", dir, cn.sonames[k]);
    size_t dl = strlen(dir), wl = kr >= 0 && cr.wheel_dirs[kr] ? strlen(cr.wheel_dirs[kr]) : 0;
    if (!probe_exists(cand) && wl && cn.wheel_dirs[k] && dl > wl && dir[dl - wl - 1] == '/' &&
        strcmp(dir + dl - wl, cr.wheel_dirs[kr]) == 0)
        snprintf(cand, sizeof cand, "%.*s/%s/%s", (int)(dl - wl - 1), dir, cn.wheel_dirs[k], cn.sonames[k]);
    char *real = probe_exists(cand) ? probe_realpath(cand) : NULL;
    if (real) snprintf(p->nvrtc, sizeof p->nvrtc, "%s", real);
    free(real);
}

/* ---- the environment checks: facts, which probe_diagnose.c words ---- */

/* Every library file taken that users other than its owner may write (o+w or g+w), and every
 * directory holding one, once, with the libraries taken from it: either can be replaced under
 * the program that loads it (docs/security.md). A sticky directory (/tmp-like) lets nobody
 * replace another user's file, so only its files count. */
static void check_writable(probe *p) {
    for (size_t i = 0; i < p->n_libs; i++) {
        const cudaload_library_info *l = LIB(p, i);
        if (l->status != CUDALOAD_OK || !l->path) continue;
        char dir[PATH_MAX], other[PATH_MAX], holding[512] = "";
        dirname_of(l->path, dir, sizeof dir);
        unsigned mode = 0, gid = 0;
        if (probe_others_may_write(l->path, 0, &mode, &gid) &&
            p->n_writable < (int)(sizeof p->writable / sizeof p->writable[0])) {
            writable_file *w = &p->writable[p->n_writable++];
            snprintf(w->path, sizeof w->path, "%s", l->path);
            w->is_dir = 0, w->mode = mode, w->gid = gid;
        }
        int first = 1; /* the directory once, naming every library taken from it */
        for (size_t j = 0; j < p->n_libs; j++) {
            const cudaload_library_info *m = LIB(p, j);
            if (m->status != CUDALOAD_OK || !m->path) continue;
            dirname_of(m->path, other, sizeof other);
            if (strcmp(other, dir) != 0) continue;
            if (j < i) first = 0;
            size_t hl = strlen(holding);
            snprintf(holding + hl, sizeof holding - hl, "%s%s", hl ? ", " : "", m->name);
        }
        if (first && probe_others_may_write(dir, 1, &mode, &gid) &&
            p->n_writable < (int)(sizeof p->writable / sizeof p->writable[0])) {
            writable_file *w = &p->writable[p->n_writable++];
            snprintf(w->path, sizeof w->path, "%s", dir);
            snprintf(w->holding, sizeof w->holding, "%s", holding);
            w->is_dir = 1, w->mode = mode, w->gid = gid;
        }
    }
}

/* Appends s to out (of size n, holding len bytes) quoted for a POSIX shell when it holds
 * anything but plain path characters. */
size_t probe_shell_word(char *out, size_t n, size_t len, const char *s) {
    int plain = s[0] != 0;
    for (const char *c = s; *c; c++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._:+-,=@%", *c)) plain = 0;
    if (plain) return probe_appendf(out, n, len, "%s", s);
    len = probe_appendf(out, n, len, "'");
    for (const char *c = s; *c; c++) len = *c == '\'' ? probe_appendf(out, n, len, "'\\''") : probe_appendf(out, n, len, "%c", *c);
    return probe_appendf(out, n, len, "'");
}

/* Whether two paths name the same file, symbolic links resolved (0 when either is missing). */
static int same_file(const char *a, const char *b) {
    char *ra = a ? probe_realpath(a) : NULL, *rb = b ? probe_realpath(b) : NULL;
    int same = ra && rb && strcmp(ra, rb) == 0;
    free(ra);
    free(rb);
    return same;
}

/* What LD_LIBRARY_PATH holds of the libraries reported: each directory, and in it each SONAME
 * the catalogue gives a reported library (every CUDA major of its row; the driver-like rows
 * left out: the driver's directory in LD_LIBRARY_PATH is how containers provide it), noting
 * whether the file is the very one libcudaload took. Every program that loads CUDA by SONAME
 * (torch, cupy, ctypes) takes such a file first. */
static void check_ld_library_path(probe *p) {
    const char *llp = getenv("LD_LIBRARY_PATH");
    if (!llp || !llp[0] || !(p->llp = strdup(llp))) return;
    char *save = NULL;
    for (char *d = strtok_r(p->llp, ":", &save); d && p->n_llp_dirs < MAX_LLP; d = strtok_r(NULL, ":", &save)) {
        int di = p->n_llp_dirs++;
        p->llp_dirs[di] = d;
        for (size_t i = 0; i < p->n_libs; i++) {
            const cudaload_library_info *l = LIB(p, i);
            cudaload_catalogue_info c = {.size = sizeof c};
            if (cudaload_catalogue_entry(l->lib, &c) != CUDALOAD_OK || c.driver_like) continue;
            for (int k = 0; k < c.n_majors && k < 2; k++) {
                if (!c.sonames[k] || (k && c.sonames[0] && strcmp(c.sonames[k], c.sonames[0]) == 0)) continue;
                if (!file_exists(d, c.sonames[k]) || p->n_llp_hits >= MAX_LLP) continue;
                llp_hit *h = &p->llp_hits[p->n_llp_hits++];
                h->dir = di, h->lib = i;
                snprintf(h->file, sizeof h->file, "%s/%s", d, c.sonames[k]);
                h->same = l->status == CUDALOAD_OK && l->path && same_file(h->file, l->path);
            }
        }
    }
}

/* A relative CONDA_PREFIX, CUDA_HOME, CUDA_PATH or VIRTUAL_ENV is ignored by the search (it
 * never depends on the current directory). */
static void check_relative_env(probe *p) {
    static const char *const vars[] = {"VIRTUAL_ENV", "CONDA_PREFIX", "CUDA_HOME", "CUDA_PATH"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && v[0] && !probe_is_absolute(v)) p->relative[p->n_relative++] = (relative_var){vars[i], v};
    }
}

const char *probe_root_warning_name(root_warning_code code) {
    switch (code) {
    case ROOT_WARN_NOT_FOUND: return "ROOT_NOT_FOUND";
    case ROOT_WARN_NOT_A_DIRECTORY: return "ROOT_NOT_A_DIRECTORY";
    case ROOT_WARN_UNREADABLE: return "ROOT_UNREADABLE";
    }
    return "?"; /* not reached: every code has its name above (a compiler may not know that) */
}

/* Every caller root the search could not use (libcudaload's exists is 0): what is at its path.
 * Only the caller's roots: a CUDA_HOME lib or lib64 that is not there is the normal case of a
 * toolkit, not a mistake of the user's. */
void probe_check_roots(probe *p) {
    for (size_t i = 0; i < p->n_roots && p->n_root_warnings < MAX_NOTES; i++) {
        const cudaload_root *r = &p->roots[i];
        if (r->exists || r->source != CUDALOAD_SOURCE_CALLER) continue;
        int err = 0;
        probe_dir_state st = probe_dir_state_of(r->path, &err);
        if (st == PROBE_DIR_OK) continue; /* made since the search looked: nothing to say of it */
        root_warning *w = &p->root_warnings[p->n_root_warnings++];
        w->root = i, w->err = err;
        w->code = st == PROBE_DIR_MISSING ? ROOT_WARN_NOT_FOUND : st == PROBE_DIR_NOT_A_DIR ? ROOT_WARN_NOT_A_DIRECTORY
                                                                                           : ROOT_WARN_UNREADABLE;
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
            if (!d->has.cuDeviceGetPCIBusId || d->cuDeviceGetPCIBusId(dv->pci_bus_id, sizeof dv->pci_bus_id, cu) != CUDA_SUCCESS)
                dv->pci_bus_id[0] = 0;
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
    gather_env_names(p);
    gather_devices(p);
    build_flags(p);
    find_nvrtc(p);
}

void probe_checks(probe *p) {
    probe_check_roots(p);
    check_ld_library_path(p);
    check_writable(p);
    check_relative_env(p);
}
