/* SPDX-License-Identifier: Apache-2.0 */
/*
 * search.c -- step 1 of the walk: the ordered list of roots and, within a root, the
 * directories that may hold a library of a given major. Nothing here opens a library.
 *
 * Order (docs/search-order.md is the contract): override dirs, caller roots, self,
 * venv, conda, cuda_home; the system search (dlopen by SONAME) comes after every root and
 * has no directory of its own. The current directory is never a root.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifndef _WIN32
#include <sys/mman.h>
#endif

#if defined(__x86_64__)
#define CL_MACHINE CL_MACHINE_X86_64
#define CL_LDCACHE_ARCH_FLAGS CL_LDCACHE_X8664_LIB64
#define CL_MULTIARCH "x86_64-linux-gnu"
#elif defined(__aarch64__)
#define CL_MACHINE CL_MACHINE_AARCH64
#define CL_LDCACHE_ARCH_FLAGS CL_LDCACHE_AARCH64_LIB64
#define CL_MULTIARCH "aarch64-linux-gnu"
#else
#error "libcudaload supports x86_64 and aarch64 Linux"
#endif

#ifdef _WIN32
/* Windows layouts: conda puts DLLs in Library\bin; the toolkit in %CUDA_PATH%\bin\x64 (13.x)
 * and bin (12.x and older); a venv's site-packages is Lib\site-packages (no python3.X level). */
#define CL_WIN_CONDA_DIRS "Library/bin", "bin"
#define CL_WIN_HOME_DIRS "bin/x64", "bin"
#endif

#define CL_KNOWN_MAJOR_(major, branch) major,
const int cl_known_majors[CL_MAX_MAJORS] = {CL_CUDA_MAJORS(CL_KNOWN_MAJOR_)};
#undef CL_KNOWN_MAJOR_

size_t cl_search_dirs(const cl_root *root, const cl_row *row, const cl_flavor *fl, char *dirs[CL_MAX_DIRS]) {
    size_t n = 0;
    const char *path = root->pub.path;
    /* the wheel layout of this major: nvidia/cu13/lib (CUDA 13 shares one dir), nvidia/cufft/lib
     * (CUDA 12: one dir per component), nvidia/cudnn/lib (libraries with their own wheels) */
    if (fl->wheel_dir) dirs[n++] = cl_path_join(path, fl->wheel_dir);
    if (fl->alt_dir) dirs[n++] = cl_path_join(path, fl->alt_dir); /* an older release's layout */
    /* the root itself: a plain library directory (conda lib, CUDA_HOME/lib64, CUDALOAD_PATH) */
    dirs[n++] = cl_strdup(path);
    /* a prefix's own place for this library (CUDA_HOME/nvvm/lib64), searched with its first root */
    if (row->prefix_dir && root->prefix && root->prefix_first) dirs[n++] = cl_path_join(root->prefix, row->prefix_dir);
    size_t out = 0;
    for (size_t i = 0; i < n; i++)
        if (dirs[i]) dirs[out++] = dirs[i];
        else cl_oom(); /* a directory not searched: the walk says OUT_OF_MEMORY if it finds nothing */
    return out;
}

size_t cl_search_include_dirs(const cl_root *root, const cl_row *row, char *dirs[CL_MAX_FLAVORS + 2]) {
    size_t n = 0;
    const char *path = root->pub.path;
    /* the wheels' include dirs, newest major first */
    for (size_t f = 0; f < CL_MAX_FLAVORS; f++)
        if (row->flavor[f].soname && row->flavor[f].include_dir) dirs[n++] = cl_path_join(path, row->flavor[f].include_dir);
    /* a prefix's include/ (conda, CUDA_HOME), or the include/ next to a plain lib dir */
    if (root->prefix) dirs[n++] = cl_path_join(root->prefix, "include");
    else dirs[n++] = cl_path_join(path, "../include");
    size_t out = 0;
    for (size_t i = 0; i < n; i++)
        if (dirs[i]) dirs[out++] = dirs[i];
    return out;
}

static int cl_is_dir(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static cudaload_status cl_roots_add(cl_roots *r, const char *path, cudaload_source source, const char *prefix) {
    if (!path || !path[0] || !cl_plat_is_absolute(path)) return CUDALOAD_OK; /* never relative, never "" */
    char *copy = strdup(path);
    if (!copy) return CUDALOAD_ERROR_OUT_OF_MEMORY;
    cl_plat_path_normalize(copy); /* C:\x (CUDA_PATH as Windows sets it) -> C:/x */
    /* strip trailing slashes first, so that "/x/" and "/x" are one root */
    for (size_t l = strlen(copy); l > 1 && copy[l - 1] == '/'; l--) copy[l - 1] = 0;
    /* duplicates are compared on the canonical path (a symlinked alias is the same root); a
     * root that does not resolve (missing) is compared as written */
    char *canon = cl_plat_realpath(copy);
    if (!canon && !(canon = strdup(copy))) {
        free(copy);
        return CUDALOAD_ERROR_OUT_OF_MEMORY;
    }
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->items[i].canon, canon) == 0) {
            cl_debug("root %s (%s) already listed as %s (%s): skipped", copy, cudaload_source_name(source),
                     r->items[i].pub.path, cudaload_source_name(r->items[i].pub.source));
            free(copy);
            free(canon);
            return CUDALOAD_OK;
        }
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 16;
        cl_root *p = realloc(r->items, cap * sizeof *p);
        if (!p) {
            free(copy);
            free(canon);
            return CUDALOAD_ERROR_OUT_OF_MEMORY;
        }
        r->items = p;
        r->cap = cap;
    }
    r->items[r->n].pub.path = copy;
    r->items[r->n].canon = canon;
    r->items[r->n].prefix = NULL;
    r->items[r->n].prefix_first = 0;
    if (prefix) {
        int first = 1;
        for (size_t i = 0; i < r->n; i++)
            if (r->items[i].prefix && strcmp(r->items[i].prefix, prefix) == 0) first = 0;
        if (!(r->items[r->n].prefix = strdup(prefix))) {
            free(copy);
            free(canon);
            return CUDALOAD_ERROR_OUT_OF_MEMORY;
        }
        r->items[r->n].prefix_first = first;
    }
    r->items[r->n].pub.source = source;
    r->items[r->n].pub.exists = cl_is_dir(copy);
    cl_debug("root %zu: %s (%s)%s", r->n, copy, cudaload_source_name(source),
             r->items[r->n].pub.exists ? "" : " [does not exist]");
    r->n++;
    return CUDALOAD_OK;
}

/* $prefix/lib{,64}/python3.<minor>/site-packages of a virtual environment */
static cudaload_status cl_roots_add_venv(cl_roots *r, const char *prefix) {
#ifdef _WIN32
    /* a Windows venv: %VIRTUAL_ENV%\Lib\site-packages */
    char *win_site = cl_path_join(prefix, "Lib/site-packages");
    if (!win_site) return CUDALOAD_ERROR_OUT_OF_MEMORY;
    cudaload_status win_st = cl_is_dir(win_site) ? cl_roots_add(r, win_site, CUDALOAD_SOURCE_VENV, NULL) : CUDALOAD_OK;
    free(win_site);
    return win_st;
#endif
    static const char *const libdirs[] = {"lib", "lib64"};
    cudaload_status st = CUDALOAD_OK;
    for (size_t i = 0; i < 2 && st == CUDALOAD_OK; i++) {
        char *lib = cl_path_join(prefix, libdirs[i]);
        if (!lib) return CUDALOAD_ERROR_OUT_OF_MEMORY;
        DIR *d = opendir(lib);
        if (d) {
            /* sorted by name would need a second pass; venvs hold one python3.X in practice */
            struct dirent *e;
            while ((e = readdir(d)) && st == CUDALOAD_OK) {
                if (strncmp(e->d_name, "python3", 7) != 0) continue;
                char *py = cl_path_join(lib, e->d_name);
                char *site = py ? cl_path_join(py, "site-packages") : NULL;
                if (site && cl_is_dir(site)) st = cl_roots_add(r, site, CUDALOAD_SOURCE_VENV, NULL);
                free(site);
                free(py);
            }
            closedir(d);
        }
        free(lib);
    }
    return st;
}

/* A CUDA install prefix (conda, CUDA_HOME): its library directories in the toolkit's order. */
static cudaload_status cl_roots_add_prefix(cl_roots *r, const char *prefix, cudaload_source source,
                                           const char *const *subdirs, size_t n) {
    for (size_t i = 0; i < n; i++) {
        char *dir = cl_path_join(prefix, subdirs[i]);
        if (!dir) return CUDALOAD_ERROR_OUT_OF_MEMORY;
        cudaload_status st = cl_roots_add(r, dir, source, prefix);
        free(dir);
        if (st != CUDALOAD_OK) return st;
    }
    return CUDALOAD_OK;
}

/* ---- the toolkit's target triples of this machine ---- */

size_t cl_target_triples(int machine, int tegra, const char *out[CL_MAX_TRIPLES]) {
    size_t n = 0;
    if (machine == CL_MACHINE_AARCH64) {
        /* both layouts exist on aarch64: the server toolkit (sbsa-linux: Grace, Ampere Altra + a
         * GPU) and Jetson/DRIVE's (aarch64-linux, L4T). A prefix can be either (a container built
         * for one, run on the other, still finds its own files), so both are searched, this
         * machine's kind first. */
        out[n++] = tegra ? "aarch64-linux" : "sbsa-linux";
        out[n++] = tegra ? "sbsa-linux" : "aarch64-linux";
    } else {
        out[n++] = "x86_64-linux";
    }
    return n;
}

/* Whether the file at root/rel holds needle (binary-safe: device-tree strings are NUL-separated).
 * Reads at most 4 KiB: compatible lists are a few dozen bytes. */
static int cl_file_has(const char *root, const char *rel, const char *needle) {
    char *path = cl_path_join(root, rel);
    FILE *f = path && strlen(path) < CL_PATH_LIMIT ? fopen(path, "rb") : NULL;
    free(path);
    if (!f) return 0;
    char buf[4096];
    size_t got = fread(buf, 1, sizeof buf, f), len = strlen(needle);
    fclose(f);
    for (size_t i = 0; len && i + len <= got; i++)
        if (memcmp(buf + i, needle, len) == 0) return 1;
    return 0;
}

int cl_detect_tegra(const char *root, const char **why) {
    *why = "no /etc/nv_tegra_release, no \"nvidia,tegra\" in /proc/device-tree/compatible";
    char *path = cl_path_join(root, "etc/nv_tegra_release"); /* "/" + it: "/etc/nv_tegra_release" */
    int l4t = path && strlen(path) < CL_PATH_LIMIT && access(path, F_OK) == 0;
    free(path);
    if (l4t) {
        *why = "/etc/nv_tegra_release exists (L4T)";
        return 1;
    }
    /* a container without L4T's /etc still sees the board's device tree */
    if (cl_file_has(root, "proc/device-tree/compatible", "nvidia,tegra")) {
        *why = "/proc/device-tree/compatible names nvidia,tegra";
        return 1;
    }
    return 0;
}

int cl_search_tegra(const cl_config *cfg) {
    if (cfg->platform != CL_PLATFORM_AUTO) {
        cl_debug("platform: %s (CUDALOAD_PLATFORM)", cfg->platform == CL_PLATFORM_TEGRA ? "tegra" : "sbsa");
        return cfg->platform == CL_PLATFORM_TEGRA;
    }
    if (CL_MACHINE != CL_MACHINE_AARCH64) return 0; /* only aarch64 has two toolkit layouts */
    const char *why;
    int tegra = cl_detect_tegra("/", &why);
    cl_debug("platform: %s (%s)", tegra ? "tegra" : "sbsa", why);
    return tegra;
}

char *cl_site_packages_of(const char *path) {
    char *real = cl_plat_realpath(path);
    if (!real) return NULL;
    char *slash;
    while ((slash = strrchr(real, '/')) != NULL && slash != real) {
        const char *base = slash + 1;
        if (strcmp(base, "site-packages") == 0 || strcmp(base, "dist-packages") == 0) return real;
        *slash = 0;
    }
    free(real);
    return NULL;
}

cudaload_status cl_search_build_roots(cl_roots *r, const cl_config *cfg, const char *self_path) {
    cudaload_status st = CUDALOAD_OK;
    unsigned src = cfg->sources;
    const char *v;
#define CL_TRY(expr)                                 \
    do {                                             \
        if ((st = (expr)) != CUDALOAD_OK) return st; \
    } while (0)

    if (src & CUDALOAD_SOURCE_BIT(CUDALOAD_SOURCE_OVERRIDE))
        for (size_t i = 0; i < cfg->n_override_dirs; i++)
            CL_TRY(cl_roots_add(r, cfg->override_dirs[i], CUDALOAD_SOURCE_OVERRIDE, NULL));
    if (src & CUDALOAD_SOURCE_BIT(CUDALOAD_SOURCE_CALLER))
        for (size_t i = 0; i < cfg->n_caller_roots; i++)
            CL_TRY(cl_roots_add(r, cfg->caller_roots[i], CUDALOAD_SOURCE_CALLER, NULL));
    if ((src & CUDALOAD_SOURCE_BIT(CUDALOAD_SOURCE_SELF)) && self_path) {
        char *site = cl_site_packages_of(self_path);
        if (site) {
            st = cl_roots_add(r, site, CUDALOAD_SOURCE_SELF, NULL);
            free(site);
            if (st != CUDALOAD_OK) return st;
        } else {
            cl_debug("self: %s is not inside a site-packages directory", self_path);
        }
    }
    if ((src & CUDALOAD_SOURCE_BIT(CUDALOAD_SOURCE_VENV)) && (v = cl_config_env(cfg, "VIRTUAL_ENV")) &&
        cl_plat_is_absolute(v))
        CL_TRY(cl_roots_add_venv(r, v));
    /* a prefix's targets/<triple>/lib dirs: x86_64-linux, or on aarch64 both sbsa-linux and
     * aarch64-linux (Jetson), the machine's own kind first (cl_target_triples) */
    const char *triples[CL_MAX_TRIPLES];
    size_t n_triples = 0;
    if (src & (CUDALOAD_SOURCE_BIT(CUDALOAD_SOURCE_CONDA) | CUDALOAD_SOURCE_BIT(CUDALOAD_SOURCE_CUDA_HOME)))
        n_triples = cl_target_triples(CL_MACHINE, cl_search_tegra(cfg), triples);
    char targets[CL_MAX_TRIPLES][64];
    for (size_t t = 0; t < n_triples; t++) snprintf(targets[t], sizeof targets[t], "targets/%s/lib", triples[t]);
    if ((src & CUDALOAD_SOURCE_BIT(CUDALOAD_SOURCE_CONDA)) && (v = cl_config_env(cfg, "CONDA_PREFIX")) &&
        cl_plat_is_absolute(v)) {
#ifdef _WIN32
        const char *conda_dirs[] = {CL_WIN_CONDA_DIRS};
        size_t n = sizeof conda_dirs / sizeof conda_dirs[0];
#else
        const char *conda_dirs[2 + CL_MAX_TRIPLES] = {"lib", "lib64"};
        size_t n = 2;
        for (size_t t = 0; t < n_triples; t++) conda_dirs[n++] = targets[t];
#endif
        CL_TRY(cl_roots_add_prefix(r, v, CUDALOAD_SOURCE_CONDA, conda_dirs, n));
    }
    if (src & CUDALOAD_SOURCE_BIT(CUDALOAD_SOURCE_CUDA_HOME)) {
#ifdef _WIN32
        const char *home_dirs[] = {CL_WIN_HOME_DIRS};
        size_t n = sizeof home_dirs / sizeof home_dirs[0];
#else
        const char *home_dirs[2 + CL_MAX_TRIPLES] = {"lib64", "lib"};
        size_t n = 2;
        for (size_t t = 0; t < n_triples; t++) home_dirs[n++] = targets[t];
#endif
        static const char *const vars[] = {"CUDA_HOME", "CUDA_PATH"};
        for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
            if ((v = cl_config_env(cfg, vars[i])) && cl_plat_is_absolute(v))
                CL_TRY(cl_roots_add_prefix(r, v, CUDALOAD_SOURCE_CUDA_HOME, home_dirs, n));
    }
#undef CL_TRY
    r->pub = calloc(r->n ? r->n : 1, sizeof *r->pub);
    if (!r->pub) return CUDALOAD_ERROR_OUT_OF_MEMORY;
    for (size_t i = 0; i < r->n; i++) r->pub[i] = r->items[i].pub;
    return CUDALOAD_OK;
}

void cl_roots_free(cl_roots *r) {
    for (size_t i = 0; i < r->n; i++) {
        free((char *)r->items[i].pub.path);
        free(r->items[i].canon);
        free(r->items[i].prefix);
    }
    free(r->items);
    free(r->pub);
    memset(r, 0, sizeof *r);
}

/* ---- find-only system search: what dlopen(soname) would pick, without loading (Linux;
 * platform_windows.c has the Windows one) ---- */
#ifndef _WIN32

static char *cl_file_in(const char *dir, const char *name) {
    char *p = cl_path_join(dir, name);
    if (p && access(p, F_OK) == 0) return p;
    free(p);
    return NULL;
}

char *cl_ldcache_lookup(const unsigned char *data, size_t size, const char *soname) {
    return cl_ldcache_lookup_arch(data, size, soname, CL_LDCACHE_ARCH_FLAGS);
}

char *cl_ldcache_lookup_arch(const unsigned char *data, size_t size, const char *soname, int arch_flags) {
    static const char magic[] = "glibc-ld.so.cache1.1", old_magic[] = "ld.so-1.7.0";
    const size_t header = 48, entry = 24, old_header = 16, old_entry = 12;
    /* the compat format (what ldconfig wrote before glibc 2.32, e.g. Ubuntu 20.04 and so
     * JetPack 5): the old table first, then the new one at the next 8-byte boundary; the new
     * table's string offsets count from its own header. The old table has no 64-bit arch
     * flags to tell x86-64 from aarch64 entries, so only the new one is read. */
    if (size >= old_header && memcmp(data, old_magic, sizeof old_magic - 1) == 0) {
        uint32_t n_old;
        memcpy(&n_old, data + 12, 4);
        if (n_old > (size - old_header) / old_entry) return NULL;
        size_t off = (old_header + (size_t)n_old * old_entry + 7) & ~(size_t)7;
        if (off >= size) return NULL;
        data += off;
        size -= off;
    }
    if (size < header || memcmp(data, magic, sizeof magic - 1) != 0) return NULL;
    uint32_t nlibs;
    memcpy(&nlibs, data + 20, 4);
    if (nlibs > (size - header) / entry) return NULL;
    for (uint32_t i = 0; i < nlibs; i++) {
        const unsigned char *e = data + header + (size_t)i * entry;
        int32_t flags;
        uint32_t key, value;
        memcpy(&flags, e, 4);
        memcpy(&key, e + 4, 4);
        memcpy(&value, e + 8, 4);
        if ((flags & 0xff) != 3 /* FLAG_ELF_LIBC6 */ || (flags & 0xff00) != arch_flags) continue;
        if (key >= size || value >= size) continue;
        const char *k = (const char *)data + key;
        const char *kend = memchr(k, 0, size - key);
        if (!kend || strcmp(k, soname) != 0) continue;
        const char *val = (const char *)data + value;
        const char *vend = memchr(val, 0, size - value);
        if (!vend) continue;
        return strndup(val, (size_t)(vend - val));
    }
    return NULL;
}

/* The file found, with its symbolic links resolved: a real load reports the file ld.so mapped
 * (cl_handle_path), and find-only reports the same file, whichever alias (an LD_LIBRARY_PATH
 * or ld.so.cache symlink such as /usr/local/lib/libcudart.so.13) led to it. */
static char *cl_resolved(char *found) {
    char *real = found ? realpath(found, NULL) : NULL;
    if (!real) return found; /* cannot be resolved (a race, ENOMEM): the path as found */
    free(found);
    return real;
}

char *cl_search_system_path(const char *soname, int secure) {
    char *found = NULL;
    const char *llp = secure ? NULL : getenv("LD_LIBRARY_PATH");
    if (llp) {
        char *copy = strdup(llp), *save = NULL;
        for (char *d = copy ? strtok_r(copy, ":", &save) : NULL; d && !found; d = strtok_r(NULL, ":", &save))
            if (d[0] == '/') found = cl_file_in(d, soname);
        free(copy);
        if (found) return cl_resolved(found);
    }
    int fd = open("/etc/ld.so.cache", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        struct stat st;
        if (fstat(fd, &st) == 0 && st.st_size > 0) {
            void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
            if (map != MAP_FAILED) {
                found = cl_ldcache_lookup(map, (size_t)st.st_size, soname);
                munmap(map, (size_t)st.st_size);
            }
        }
        close(fd);
        if (found) return cl_resolved(found);
    }
    static const char *const defaults[] = {"/lib/" CL_MULTIARCH, "/usr/lib/" CL_MULTIARCH, "/lib64",
                                           "/usr/lib64", "/lib", "/usr/lib"};
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0] && !found; i++)
        found = cl_file_in(defaults[i], soname);
    return cl_resolved(found);
}
#endif /* !_WIN32 */
