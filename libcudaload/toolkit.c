/* SPDX-License-Identifier: Apache-2.0 */
/*
 * toolkit.c -- the toolkit's parts that are not shared libraries (programs, static archives,
 * bitcode: catalogue.c's cl_parts) and a toolkit root for build tools made of them.
 *
 * A part is searched like a library (search.c's roots in order, then the system) but never
 * opened: a candidate is a file of the right kind (an ELF program of this machine, an ar
 * archive, LLVM bitcode). The system is PATH for programs, then /usr/local/cuda as a prefix.
 *
 * cudaload_toolkit_root(): nvcc's root decides; every part the toolkit needs must be under it.
 * A prefix (CUDA_HOME, conda, /usr/local/cuda) is a toolkit as it lies and is answered as is.
 * The wheels' nvidia/cu13 is not: nvcc links with -L$(TOP)/lib64 (the wheels have lib/), CMake's
 * find_library wants libcudart.so (the wheels have libcudart.so.13), and the wheels may sit in
 * two site-packages. So a tree of symbolic links is made in a cache directory: nvcc finds
 * nvcc.profile next to the path it was started by (a link is not resolved), so the wheels' own
 * profile, linked in, makes the tree nvcc's TOP. Nothing is written into site-packages.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifndef _WIN32
#include <dirent.h>
#include <sys/mman.h>
#endif

#define G cl_ctx

/* Where a toolkit is when no root has one and PATH names no nvcc: the toolkit's installers'
 * default prefix, which FindCUDAToolkit and nvcc-based builds fall back to as well. */
#define CL_SYSTEM_TOOLKIT "/usr/local/cuda"

#ifndef _WIN32

/* ---- one candidate file ---- */

static void cl_part_record(size_t p, const char *path, cudaload_source source, cudaload_status result, const cl_why *w) {
    cl_part_state *ps = &G.part[p];
    long i = cl_cands_add(&ps->cands, &ps->details, &ps->n_cands, &ps->cap_cands, path, source, result, w);
    if (i >= 0) cl_debug("%s candidate %s [%s]: %s", cl_part_at(p)->name, path, cudaload_source_name(source), ps->cands[i].reason);
}

/* Is path a usable file of the part's kind? OK, or NOT_FOUND with why. */
static cudaload_status cl_part_check(const cl_part *part, const char *path, cl_buf *why) {
    struct stat st;
    if (stat(path, &st) != 0) {
        cl_buf_printf(why, "cannot stat: %s", strerror(errno));
        return CUDALOAD_ERROR_NOT_FOUND;
    }
    if (!S_ISREG(st.st_mode)) {
        cl_buf_printf(why, "not a regular file");
        return CUDALOAD_ERROR_NOT_FOUND;
    }
    unsigned char hdr[64] = {0};
    FILE *f = fopen(path, "rb");
    if (!f) {
        cl_buf_printf(why, "cannot open: %s", strerror(errno));
        return CUDALOAD_ERROR_NOT_FOUND;
    }
    size_t n = fread(hdr, 1, sizeof hdr, f);
    fclose(f);
    switch (part->kind) {
    case CUDALOAD_PART_BINARY: {
        /* an ELF executable or PIE of this machine; a shell script wrapper (#!) is a program too */
        if (n >= 2 && hdr[0] == '#' && hdr[1] == '!') break;
        cl_buf elf = {0};
        /* the shared-library check refuses ET_EXEC ("not a shared library"): a program is one,
         * so its header is checked as if it were ET_DYN (machine, class, truncation all apply) */
        unsigned char as_dyn[sizeof hdr];
        memcpy(as_dyn, hdr, sizeof hdr);
        if (n >= 18 && as_dyn[16] == 2 && as_dyn[17] == 0) as_dyn[16] = 3;
        cudaload_status st_elf = cl_elf_check_header(as_dyn, n, (unsigned long long)st.st_size, &elf);
        if (st_elf != CUDALOAD_OK) {
            cl_buf_printf(why, "%s", cl_buf_str(&elf));
            cl_buf_free(&elf);
            return CUDALOAD_ERROR_NOT_FOUND;
        }
        cl_buf_free(&elf);
        if (access(path, X_OK) != 0) {
            cl_buf_printf(why, "not executable (mode %o)", (unsigned)(st.st_mode & 07777));
            return CUDALOAD_ERROR_NOT_FOUND;
        }
        break;
    }
    case CUDALOAD_PART_STATIC:
        if (n < 8 || (memcmp(hdr, "!<arch>\n", 8) != 0 && memcmp(hdr, "!<thin>\n", 8) != 0)) {
            cl_buf_printf(why, "not an ar archive (%lld bytes, does not start with !<arch>)", (long long)st.st_size);
            return CUDALOAD_ERROR_NOT_FOUND;
        }
        break;
    case CUDALOAD_PART_BITCODE:
        /* raw bitcode starts "BC" 0xC0DE; the wrapper's magic is 0x0B17C0DE, little-endian */
        if (n < 4 || (memcmp(hdr, "BC\xc0\xde", 4) != 0 && memcmp(hdr, "\xde\xc0\x17\x0b", 4) != 0)) {
            cl_buf_printf(why, "not LLVM bitcode (%lld bytes, no BC 0xC0DE magic)", (long long)st.st_size);
            return CUDALOAD_ERROR_NOT_FOUND;
        }
        break;
    default: break;
    }
    return CUDALOAD_OK;
}

/* ---- versions read from files (never by running them) ---- */

/* nvcc's release, from the banner its --version prints ("Cuda compilation tools, release 13.0,"),
 * which is a string in the program: 13000, or 0. */
static int cl_nvcc_release(const char *path) {
    static const char banner[] = "Cuda compilation tools, release ";
    int v = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && st.st_size > 0) {
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fileno(f), 0);
        if (m != MAP_FAILED) {
            const char *hit = memmem(m, (size_t)st.st_size, banner, sizeof banner - 1);
            if (hit) {
                const char *p = hit + sizeof banner - 1, *end = (const char *)m + st.st_size;
                int maj = 0, min = 0, dot = 0;
                for (; p < end && ((*p >= '0' && *p <= '9') || (*p == '.' && !dot)); p++) {
                    if (*p == '.') dot = 1;
                    else if (dot) min = min * 10 + (*p - '0');
                    else maj = maj * 10 + (*p - '0');
                }
                if (dot && maj > 0 && maj < 100 && min < 100) v = maj * 1000 + min * 10;
            }
            munmap(m, (size_t)st.st_size);
        }
    }
    fclose(f);
    return v;
}

/* The runtime headers' release: CUDART_VERSION in dir/cuda_runtime_api.h (13000), or 0. */
static int cl_headers_release(const char *dir) {
    char *path = cl_path_join(dir, "cuda_runtime_api.h");
    FILE *f = path ? fopen(path, "r") : NULL;
    free(path);
    if (!f) return 0;
    char line[512];
    int v = 0;
    while (!v && fgets(line, sizeof line, f)) {
        const char *p = line + strspn(line, " \t");
        if (strncmp(p, "#define", 7) != 0) continue;
        p += 7;
        p += strspn(p, " \t");
        if (strncmp(p, "CUDART_VERSION", 14) != 0 || (p[14] != ' ' && p[14] != '\t')) continue;
        v = atoi(p + 14);
    }
    fclose(f);
    return v;
}

/* ---- the places a part may be ---- */

/* The CUDA major a wheel directory belongs to: the one flavor that has it, else 0. */
static int cl_part_major_of_dir(const cl_part *part, const char *wheel_dir) {
    int found = 0, n = 0;
    for (size_t f = 0; f < CL_MAX_FLAVORS; f++)
        if (part->flavor[f].wheel_dir && strcmp(part->flavor[f].wheel_dir, wheel_dir) == 0) {
            found = part->flavor[f].major;
            n++;
        }
    return n == 1 ? found : 0;
}

/* The major of a toolkit prefix: its runtime headers' release, else 0. */
static int cl_prefix_major(const char *prefix) {
    char *inc = cl_path_join(prefix, "include");
    int v = inc ? cl_headers_release(inc) : 0;
    free(inc);
    return v / 1000;
}

typedef struct cl_part_try {
    size_t p;
    int found;      /* set once a file was taken */
    int asked_major;
} cl_part_try;

/* Tries dir/file: absent files are not candidates (as for libraries); a file of the wrong kind
 * or an unasked major is recorded with why. */
static void cl_part_try_file(cl_part_try *t, const char *dir, cudaload_source source, int major, long root_index) {
    if (t->found || !dir) return;
    const cl_part *part = cl_part_at(t->p);
    char *path = cl_path_join(dir, part->file);
    if (!path) {
        cl_oom();
        return;
    }
    cl_part_state *ps = &G.part[t->p];
    for (size_t i = 0; i < ps->n_cands; i++)
        if (strcmp(ps->cands[i].path, path) == 0) { /* one file reached twice (PATH lists a dir twice) */
            free(path);
            return;
        }
    if (strlen(path) >= CL_PATH_LIMIT || !cl_plat_lexists(path)) {
        free(path);
        return;
    }
    cl_buf why = {0};
    cl_why w = {0};
    cudaload_status st = cl_part_check(part, path, &why);
    if (st != CUDALOAD_OK) {
        cl_why_set(&w, CUDALOAD_REASON_FILE_UNUSABLE, major, 0, 0, "%s", cl_buf_str(&why));
        cl_part_record(t->p, path, source, st, &w);
    } else if (t->asked_major && major && major != t->asked_major) {
        cl_why_set(&w, CUDALOAD_REASON_MAJOR_NOT_ASKED, major, 0, t->asked_major, "%s", "");
        cl_part_record(t->p, path, source, CUDALOAD_ERROR_NOT_FOUND, &w);
    } else {
        cl_why_set(&w, CUDALOAD_REASON_FOUND, major, 0, 0, "%s", "");
        cl_part_record(t->p, path, source, CUDALOAD_OK, &w);
        /* the path as found, not resolved: a program finds its companions next to the name it
         * was started by (nvcc its nvcc.profile), which a resolved link would change */
        ps->path = cl_strdup(path);
        if (!ps->path) cl_oom();
        ps->source = source;
        ps->major = major;
        ps->root_index = root_index;
        if (strcmp(part->name, "nvcc") == 0) ps->cuda_version = cl_nvcc_release(path);
        if (!ps->major && ps->cuda_version) ps->major = ps->cuda_version / 1000;
        t->found = 1;
    }
    cl_why_free(&w);
    cl_buf_free(&why);
    free(path);
}

/* A prefix's places for the part: its prefix_dirs, and for an archive the targets/<triple>/lib
 * of a cross-capable toolkit. */
static void cl_part_try_prefix(cl_part_try *t, const char *prefix, cudaload_source source, long root_index) {
    const cl_part *part = cl_part_at(t->p);
    int major = cl_prefix_major(prefix);
    const char *w = part->prefix_dirs;
    char sub[64];
    while (!t->found && cl_row_next_word(&w, sub, sizeof sub)) {
        char *dir = cl_path_join(prefix, sub);
        cl_part_try_file(t, dir, source, major, root_index);
        free(dir);
    }
}

/* The places of root r, in order: each flavor's wheel dir (site-packages), a prefix's dirs (on
 * its first root: CUDA_HOME's lib64, lib and targets/ are one prefix), and a plain library dir
 * itself for an archive (CUDALOAD_PATH). */
static void cl_part_try_root(cl_part_try *t, size_t r) {
    const cl_root *root = &G.roots.items[r];
    const cl_part *part = cl_part_at(t->p);
    if (root->prefix) {
        /* the prefix's own dirs (bin/, nvvm/) whether or not this library dir exists */
        if (root->prefix_first) cl_part_try_prefix(t, root->prefix, root->pub.source, (long)r);
        if (!root->pub.exists) return;
        /* a prefix's targets/<triple>/lib root holds archives too */
        if (part->kind == CUDALOAD_PART_STATIC) cl_part_try_file(t, root->pub.path, root->pub.source, cl_prefix_major(root->prefix), (long)r);
        return;
    }
    if (!root->pub.exists) return;
    for (size_t f = 0; f < CL_MAX_FLAVORS && !t->found; f++) {
        if (!part->flavor[f].wheel_dir) continue;
        char *dir = cl_path_join(root->pub.path, part->flavor[f].wheel_dir);
        cl_part_try_file(t, dir, root->pub.source, cl_part_major_of_dir(part, part->flavor[f].wheel_dir), (long)r);
        free(dir);
    }
    if (part->kind == CUDALOAD_PART_STATIC) cl_part_try_file(t, root->pub.path, root->pub.source, 0, (long)r);
}

/* The system: PATH's directories for a program (what a shell and CMake run), then
 * /usr/local/cuda. A program found on PATH in <prefix>/bin reports <prefix>'s major. */
static void cl_part_try_system(cl_part_try *t) {
    const cl_part *part = cl_part_at(t->p);
    if (!(G.cfg.sources & CUDALOAD_SOURCE_BIT(CUDALOAD_SOURCE_SYSTEM))) return;
    const char *path_env = G.cfg.secure ? NULL : getenv("PATH");
    if (part->kind == CUDALOAD_PART_BINARY && path_env) {
        const char *p = path_env;
        while (!t->found && *p) {
            size_t len = strcspn(p, ":");
            char *dir = len ? strndup(p, len) : NULL;
            /* an empty entry or a relative one means the current directory: never searched */
            if (dir && dir[0] == '/') {
                char *prefix = cl_path_join(dir, "..");
                cl_part_try_file(t, dir, CUDALOAD_SOURCE_SYSTEM, prefix ? cl_prefix_major(prefix) : 0, -1);
                free(prefix);
            }
            free(dir);
            p += len;
            if (*p == ':') p++;
        }
    }
    if (!t->found) cl_part_try_prefix(t, CL_SYSTEM_TOOLKIT, CUDALOAD_SOURCE_SYSTEM, -1);
}

static void cl_part_describe_failure(size_t p, cl_buf *out);

/* Searches part p once (under the lock). */
static void cl_part_search(size_t p) {
    cl_part_state *ps = &G.part[p];
    if (ps->attempted) return;
    ps->attempted = 1;
    ps->root_index = -1;
    cl_part_try t = {.p = p, .asked_major = G.cfg.cuda_major};
    for (size_t r = 0; r < G.roots.n && !t.found; r++) cl_part_try_root(&t, r);
    if (!t.found) cl_part_try_system(&t);
    ps->status = t.found ? CUDALOAD_OK : CUDALOAD_ERROR_NOT_FOUND;
    if (!t.found) {
        cl_buf msg = {0};
        cl_part_describe_failure(p, &msg);
        ps->error = cl_strdup(cl_buf_str(&msg));
        cl_buf_free(&msg);
    }
}

/* The pip packages that ship part p ("nvidia-cuda-nvcc (CUDA 13)"), those of one CUDA major
 * when major is not 0 and has one, or how to get it. */
static void cl_part_fix_major(const cl_part *part, int major, cl_buf *out) {
    int any = 0, has_major = 0;
    for (size_t f = 0; f < CL_MAX_FLAVORS; f++) has_major |= major && part->flavor[f].major == major;
    for (size_t f = 0; f < CL_MAX_FLAVORS; f++)
        if (part->flavor[f].pkg && (!has_major || part->flavor[f].major == major)) {
            cl_buf_printf(out, "%s%s (CUDA %d)", any ? ", " : "pip install ", part->flavor[f].pkg, part->flavor[f].major);
            any = 1;
        }
    if (!any) cl_buf_printf(out, "no pip wheel ships it: install the full CUDA toolkit and set CUDA_HOME");
}

static void cl_part_fix(const cl_part *part, cl_buf *out) { cl_part_fix_major(part, 0, out); }

static void cl_part_describe_failure(size_t p, cl_buf *out) {
    const cl_part *part = cl_part_at(p);
    const cl_part_state *ps = &G.part[p];
    cl_buf_printf(out, "%s (%s) not found in the %zu roots searched%s%s", part->name, part->file, G.roots.n,
                  part->kind == CUDALOAD_PART_BINARY ? ", PATH" : "", ", or " CL_SYSTEM_TOOLKIT);
    for (size_t i = 0; i < ps->n_cands; i++)
        cl_buf_printf(out, "\n  %s [%s]: %s", ps->cands[i].path, cudaload_source_name(ps->cands[i].source), ps->cands[i].reason);
    cl_buf_printf(out, "\n  fix: ");
    cl_part_fix(part, out);
}

#else /* _WIN32 */

static void cl_part_search(size_t p) {
    cl_part_state *ps = &G.part[p];
    if (ps->attempted) return;
    ps->attempted = 1;
    ps->root_index = -1;
    ps->status = CUDALOAD_ERROR_NOT_FOUND;
    ps->error = cl_strdup("toolkit parts are catalogued for Linux only");
}

#endif

/* ---- the public calls ---- */

/* Takes the lock for a call that needs a completed init: OK with the lock held, else
 * NOT_INITIALIZED (the message set) and the lock not held. */
static cudaload_status cl_lock_initialized(void) {
    cl_lock();
    if (G.done) return CUDALOAD_OK;
    cl_unlock();
    cl_set_error("libcudaload is not initialized: call cudaload_init() first");
    return CUDALOAD_ERROR_NOT_INITIALIZED;
}

size_t cudaload_part_count(void) { return cl_part_count(); }

static void cl_part_fill(size_t p, cudaload_part_info *out) {
    const cl_part *part = cl_part_at(p);
    const cl_part_state *ps = &G.part[p];
    cudaload_part_info full = {0};
    full.size = sizeof full;
    full.index = p;
    full.name = part->name;
    full.kind = (cudaload_part_kind)part->kind;
    full.file = part->file;
    full.library = part->library;
    for (size_t f = 0; f < CL_MAX_FLAVORS; f++)
        if (part->flavor[f].major) {
            full.majors[full.n_majors] = part->flavor[f].major;
            full.wheel_dirs[full.n_majors] = part->flavor[f].wheel_dir;
            full.pip_packages[full.n_majors] = part->flavor[f].pkg;
            full.n_majors++;
        }
    full.prefix_dirs = part->prefix_dirs;
    full.needed_by_toolkit = (part->flags & CL_PART_TOOLKIT) != 0;
    full.status = ps->attempted ? ps->status : CUDALOAD_ERROR_NOT_ATTEMPTED;
    if (ps->attempted) {
        full.path = ps->path;
        full.source = ps->source;
        full.major = ps->major;
        full.cuda_version = ps->cuda_version;
        full.n_candidates = ps->n_cands;
        full.candidates = ps->cands;
        full.details = ps->details;
    }
    cl_info_copy_out(out, out->size, &full, sizeof full);
}

cudaload_status cudaload_part_at(size_t i, cudaload_part_info *out) {
    if (!out || out->size < offsetof(cudaload_part_info, status) || i >= cl_part_count()) {
        cl_set_errorf("cudaload_part_at: %s", !out ? "out is NULL" : i >= cl_part_count() ? "index out of range" : "out->size too small");
        return CUDALOAD_ERROR_INVALID_ARGUMENT;
    }
    cl_lock();
    cl_part_fill(i, out);
    cl_unlock();
    return CUDALOAD_OK;
}

cudaload_status cudaload_part(const char *name, cudaload_part_info *out) {
    if (!name || !out || out->size < offsetof(cudaload_part_info, status)) {
        cl_set_error("cudaload_part: name and out (with its size set) are required");
        return CUDALOAD_ERROR_INVALID_ARGUMENT;
    }
    char *end = NULL;
    int p = name[0] == '#' ? (name[1] >= '0' && name[1] <= '9' ? (int)strtol(name + 1, &end, 10) : -1) : cl_part_find(name);
    if (p < 0 || (size_t)p >= cl_part_count() || (end && *end)) {
        /* the known names, not a program that lists them: the caller may be any program */
        cl_buf b = {0};
        cl_buf_printf(&b, "cudaload_part: no part named \"%.64s\"; known:", name);
        for (size_t i = 0; i < cl_part_count(); i++) cl_buf_printf(&b, " %s", cl_part_at(i)->name);
        cl_set_error(cl_buf_str(&b));
        cl_buf_free(&b);
        return CUDALOAD_ERROR_INVALID_ARGUMENT;
    }
    if (cl_lock_initialized() != CUDALOAD_OK) return CUDALOAD_ERROR_NOT_INITIALIZED;
    cl_part_search((size_t)p);
    cl_part_fill((size_t)p, out);
    cudaload_status st = G.part[p].status;
    if (st != CUDALOAD_OK) cl_set_error(G.part[p].error ? G.part[p].error : "out of memory");
    cl_unlock();
    return st;
}

#ifndef _WIN32
/* ---- the toolkit root ---- */

/* The parts of a toolkit under root: T (a site-packages or a prefix) and what is linked where. */
typedef struct cl_link {
    char *at;     /* relative to the tree: "bin/nvcc" */
    char *target; /* absolute */
} cl_link;

typedef struct cl_plan {
    cl_link *links;
    size_t n, cap;
    int oom;
} cl_plan;

static void cl_plan_add(cl_plan *pl, const char *at, const char *target) {
    for (size_t i = 0; i < pl->n; i++)
        if (strcmp(pl->links[i].at, at) == 0) return; /* the first wins */
    if (pl->n == pl->cap) {
        size_t c = pl->cap ? pl->cap * 2 : 64;
        cl_link *p = realloc(pl->links, c * sizeof *p);
        if (!p) {
            pl->oom = 1;
            return;
        }
        pl->links = p;
        pl->cap = c;
    }
    char *a = cl_strdup(at), *t = cl_strdup(target);
    if (!a || !t) {
        free(a);
        free(t);
        pl->oom = 1;
        return;
    }
    pl->links[pl->n].at = a;
    pl->links[pl->n].target = t;
    pl->n++;
}

static void cl_plan_free(cl_plan *pl) {
    for (size_t i = 0; i < pl->n; i++) {
        free(pl->links[i].at);
        free(pl->links[i].target);
    }
    free(pl->links);
}

/* Links every entry of dir under at/ (the wheels' shared lib dir: the libraries, cmake/), and
 * the unversioned name of each libX.so.N that has none (libcudart.so -> libcudart.so.13), which
 * is what find_library and -lcudart look for. */
static void cl_plan_dir_entries(cl_plan *pl, const char *dir, const char *at) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char *target = cl_path_join(dir, e->d_name);
        char *rel = cl_path_join(at, e->d_name);
        if (target && rel) cl_plan_add(pl, rel, target);
        free(rel);
        const char *so = strstr(e->d_name, ".so.");
        if (target && so && strncmp(e->d_name, "lib", 3) == 0 && !strchr(so + 4, '/')) {
            char *dev = strndup(e->d_name, (size_t)(so - e->d_name) + 3);
            char *dev_rel = dev ? cl_path_join(at, dev) : NULL;
            if (dev && !cl_file_exists(dir, dev) && dev_rel) cl_plan_add(pl, dev_rel, target);
            free(dev_rel);
            free(dev);
        }
        free(target);
    }
    closedir(d);
}

/* 64-bit FNV-1a over the plan: the tree's directory name, so that a different set of parts
 * never reuses a tree made for another. */
static uint64_t cl_plan_hash(const cl_plan *pl, const char *top) {
    uint64_t h = 1469598103934665603ULL;
    const char *parts[3];
    for (size_t i = 0; i <= pl->n; i++) {
        parts[0] = i < pl->n ? pl->links[i].at : top;
        parts[1] = i < pl->n ? pl->links[i].target : "";
        parts[2] = "\n";
        for (size_t k = 0; k < 3; k++)
            for (const unsigned char *c = (const unsigned char *)parts[k]; *c; c++) h = (h ^ *c) * 1099511628211ULL;
    }
    return h;
}

static int cl_mkdirs(const char *path) {
    char *p = cl_strdup(path);
    if (!p) return -1;
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = 0;
            if (mkdir(p, 0755) != 0 && errno != EEXIST) {
                free(p);
                return -1;
            }
            *s = '/';
        }
    int rc = mkdir(p, 0755) != 0 && errno != EEXIST ? -1 : 0;
    free(p);
    return rc;
}

#define CL_TREE_MARK ".cudaload-toolkit"

/* 1 when path holds only what a tree of this file has (links, directories, the marker), so
 * that removing it removes nothing of anyone else's. Checked whole before anything is removed. */
static int cl_tree_only_ours(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0) return errno == ENOENT;
    if (S_ISLNK(st.st_mode)) return 1;
    if (!S_ISDIR(st.st_mode)) return 0;
    DIR *d = opendir(path);
    if (!d) return 0;
    struct dirent *e;
    int ok = 1;
    while (ok && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        char *c = cl_path_join(path, e->d_name);
        struct stat cs;
        if (!c) ok = 0;
        else if (strcmp(e->d_name, CL_TREE_MARK) == 0) ok = lstat(c, &cs) == 0 && S_ISREG(cs.st_mode);
        else ok = cl_tree_only_ours(c);
        free(c);
    }
    closedir(d);
    return ok;
}

/* Removes a tree this file made: its links, its marker and its directories, nothing else (a
 * regular file other than the marker stops it; callers check cl_tree_only_ours first). 0 when gone. */
static int cl_tree_remove(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0) return errno == ENOENT ? 0 : -1;
    if (S_ISLNK(st.st_mode)) return unlink(path);
    if (!S_ISDIR(st.st_mode)) return -1;
    DIR *d = opendir(path);
    if (!d) return -1;
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        char *c = cl_path_join(path, e->d_name);
        if (!c) rc = -1;
        else if (strcmp(e->d_name, CL_TREE_MARK) == 0) rc = unlink(c);
        else rc = cl_tree_remove(c);
        free(c);
    }
    closedir(d);
    return rc == 0 ? rmdir(path) : rc;
}

/* Makes the plan's links under dir (which exists and is empty), then the marker. */
static int cl_tree_write(const char *dir, const cl_plan *pl, const char *what, cl_buf *why) {
    for (size_t i = 0; i < pl->n; i++) {
        char *at = cl_path_join(dir, pl->links[i].at);
        char *parent = at ? cl_dir_of(at) : NULL;
        int ok = at && parent && cl_mkdirs(parent) == 0 && symlink(pl->links[i].target, at) == 0;
        if (!ok) cl_buf_printf(why, "cannot make %s -> %s: %s", at ? at : pl->links[i].at, pl->links[i].target, strerror(errno));
        free(parent);
        free(at);
        if (!ok) return -1;
    }
    char *mark = cl_path_join(dir, CL_TREE_MARK);
    FILE *f = mark ? fopen(mark, "w") : NULL;
    if (!f || fputs(what, f) < 0 || fclose(f) != 0) {
        cl_buf_printf(why, "cannot write %s: %s", mark ? mark : CL_TREE_MARK, strerror(errno));
        free(mark);
        return -1;
    }
    free(mark);
    return 0;
}

/* The default place for trees: $CUDALOAD_CACHE_DIR, $XDG_CACHE_HOME/cudaload, ~/.cache/cudaload. */
static char *cl_cache_base(void) {
    const char *v = cl_config_env(&G.cfg, "CUDALOAD_CACHE_DIR");
    if (v && v[0] == '/') return cl_strdup(v);
    if ((v = cl_config_env(&G.cfg, "XDG_CACHE_HOME")) && v[0] == '/') return cl_path_join(v, "cudaload");
    if ((v = getenv("HOME")) && v[0] == '/') return cl_path_join(v, ".cache/cudaload");
    return NULL;
}

/* Writes the plan as the tree at dir: dir made if absent; an empty dir or an earlier tree (its
 * marker) is used; anything else is refused. */
static cudaload_status cl_tree_at(const char *dir, const cl_plan *pl, const char *what, cl_buf *why) {
    char *mark = cl_path_join(dir, CL_TREE_MARK);
    struct stat st;
    int has_mark = mark && lstat(mark, &st) == 0;
    free(mark);
    if (has_mark && !cl_tree_only_ours(dir)) {
        cl_buf_printf(why, "%s is a toolkit tree libcudaload made, but holds files of someone else's now: not touched", dir);
        return CUDALOAD_ERROR_INVALID_ARGUMENT;
    }
    if (has_mark && cl_tree_remove(dir) != 0) {
        cl_buf_printf(why, "cannot clear the earlier toolkit tree %s: %s", dir, strerror(errno));
        return CUDALOAD_ERROR_INVALID_ARGUMENT;
    }
    if (cl_mkdirs(dir) != 0) {
        cl_buf_printf(why, "cannot make %s: %s", dir, strerror(errno));
        return CUDALOAD_ERROR_INVALID_ARGUMENT;
    }
    DIR *d = opendir(dir);
    int empty = 1;
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) empty = 0;
    if (d) closedir(d);
    if (!d || !empty) {
        cl_buf_printf(why, "%s is not empty and not a toolkit tree libcudaload made (no %s): not touched", dir, CL_TREE_MARK);
        return CUDALOAD_ERROR_INVALID_ARGUMENT;
    }
    return cl_tree_write(dir, pl, what, why) == 0 ? CUDALOAD_OK : CUDALOAD_ERROR_INVALID_ARGUMENT;
}

/* A maker's own directory (.toolkit-<hash>.XXXXXX) lives for the milliseconds its links take; one
 * untouched for longer than this was left by a maker that was killed. (An .old.XXXXXX one holds a
 * tree being moved out, which may be older: removing it is what its maker does next anyway, and
 * two removals of one tree both end with it gone.) */
#define CL_TREE_ABANDONED_S (60 * 60)

/* Removes the cache's trees whose nvcc is gone (made for a build environment pip has since
 * deleted, or wheels since uninstalled): a tree that lost its nvcc is no toolkit any more, and
 * one is left behind by every isolated build. Also the makers' directories that no maker has
 * touched for CL_TREE_ABANDONED_S (a maker killed half-way: they are never renamed in, so
 * nothing else would remove them). Only trees of links this file made are touched. */
static void cl_tree_prune(const char *base) {
    DIR *d = opendir(base);
    if (!d) return;
    const time_t now = time(NULL);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, ".toolkit-", 9) == 0) {
            char *tmp = cl_path_join(base, e->d_name);
            struct stat st;
            if (tmp && lstat(tmp, &st) == 0 && S_ISDIR(st.st_mode) && now - st.st_mtime > CL_TREE_ABANDONED_S &&
                cl_tree_only_ours(tmp))
                cl_tree_remove(tmp);
            free(tmp);
            continue;
        }
        if (strncmp(e->d_name, "toolkit-", 8) != 0) continue;
        char *tree = cl_path_join(base, e->d_name);
        char *nvcc = tree ? cl_path_join(tree, "bin/nvcc") : NULL;
        char *mark = tree ? cl_path_join(tree, CL_TREE_MARK) : NULL;
        struct stat st;
        if (nvcc && mark && lstat(mark, &st) == 0 && lstat(nvcc, &st) == 0 && stat(nvcc, &st) != 0 && errno == ENOENT &&
            cl_tree_only_ours(tree))
            cl_tree_remove(tree);
        free(mark);
        free(nvcc);
        free(tree);
    }
    closedir(d);
}

/* Records a candidate of the toolkit's check (a part, nvcc's profile, a header) on the answer,
 * and for one that fails adds it and its fix to msg. */
static void cl_tk_record(struct cl_toolkit_answer *a, const char *path, cudaload_source source, cudaload_status result,
                         cudaload_reason reason, int value, int needed, const char *text, const char *fix, cl_buf *msg) {
    cl_why w = {0};
    cl_why_set(&w, reason, 0, value, needed, "%s", text ? text : "");
    long i = cl_cands_add(&a->cands, &a->details, &a->n_cands, &a->cap_cands, path, source, result, &w);
    cl_why_free(&w);
    if (result == CUDALOAD_OK) return;
    cl_buf_printf(msg, "\n  %s [%s]: %s", path, cudaload_source_name(source), i >= 0 ? a->cands[i].reason : "out of memory");
    if (fix) cl_buf_printf(msg, "\n    fix: %s", fix);
}

/* The first of the plan's links that the tree at dir lacks, or that points elsewhere than the
 * plan says (its index in the plan), or -1 when the tree has every one. A marker says that its
 * maker finished, not that the directory renamed in was whole: a tree is reused only when this
 * finds nothing. A path that cannot be made (out of memory) counts as lacking: nothing is reused
 * on a check that did not happen. */
static long cl_tree_lacks(const char *dir, const cl_plan *pl) {
    char target[PATH_MAX];
    for (size_t i = 0; i < pl->n; i++) {
        char *at = cl_path_join(dir, pl->links[i].at);
        ssize_t n = at ? readlink(at, target, sizeof target - 1) : -1;
        free(at);
        if (n < 0) return (long)i;
        target[n] = 0;
        if (strcmp(target, pl->links[i].target) != 0) return (long)i;
    }
    return -1;
}

/* Records on a that the tree at dir lacks the plan's link i (TREE_INCOMPLETE), with fix for
 * the message when it is refused (NULL when it is made again). */
static void cl_tree_record_lack(struct cl_toolkit_answer *a, cudaload_source source, const char *dir, const cl_plan *pl,
                                long i, const char *fix, cl_buf *msg) {
    char *at = cl_path_join(dir, pl->links[i].at);
    cl_tk_record(a, at ? at : dir, source, CUDALOAD_ERROR_NOT_FOUND, CUDALOAD_REASON_TREE_INCOMPLETE, 0, 0,
                 pl->links[i].target, fix, msg);
    free(at);
}

/* Moves the tree at final out of the way (into a fresh directory of base, by rename: a reader
 * sees the old tree or none) and removes it there. 0 when final is gone, by this process or by
 * another that moved it first. */
static int cl_tree_retire(const char *base, const char *name, const char *final) {
    char pattern[96];
    snprintf(pattern, sizeof pattern, ".%s.old.XXXXXX", name);
    char *aside = cl_path_join(base, pattern);
    if (!aside || !mkdtemp(aside)) {
        free(aside);
        return -1;
    }
    /* a directory renamed onto an empty one replaces it */
    int rc = rename(final, aside);
    if (rc != 0 && errno == ENOENT) rc = 0; /* another maker moved it first */
    if (rc != 0) rmdir(aside); /* nothing moved in: the empty directory made for it goes */
    /* checked again where it lies now: only a tree of this file's is removed; a file someone
     * put there since the check stays (with the tree, out of the way) */
    else if (cl_tree_only_ours(aside)) cl_tree_remove(aside);
    free(aside);
    return rc;
}

/* The plan's tree in the cache: <base>/toolkit-<hash>, reused when whole (every link the plan
 * wants, pointing where it says). Else made in a directory of its own (mkdtemp beside it: no
 * other maker, in this container or another sharing the cache, ever uses or removes it) and
 * renamed in, so that a reader never sees half a tree and two makers agree: the second finds
 * the first's whole tree there and takes it. A tree there that is not whole is moved out and
 * replaced when it holds nothing but what this file makes, else refused (TREE_INCOMPLETE on a,
 * either way). */
static cudaload_status cl_tree_cached(struct cl_toolkit_answer *a, cudaload_source source, const cl_plan *pl,
                                      const char *what, char **root, cl_buf *why) {
    char *base = cl_cache_base();
    if (!base) {
        cl_buf_printf(why, "no cache directory: set CUDALOAD_CACHE_DIR, XDG_CACHE_HOME or HOME, or pass a directory");
        return CUDALOAD_ERROR_INVALID_ARGUMENT;
    }
    char name[64], pattern[96];
    snprintf(name, sizeof name, "toolkit-%016llx", (unsigned long long)cl_plan_hash(pl, what));
    snprintf(pattern, sizeof pattern, ".%s.XXXXXX", name);
    char *final = cl_path_join(base, name), *tmp = cl_path_join(base, pattern);
    char *mark = final ? cl_path_join(final, CL_TREE_MARK) : NULL;
    cudaload_status st = CUDALOAD_OK;
    int made = 0;      /* tmp holds a tree of this process's, to be renamed in or removed */
    int recorded = 0;  /* a tree there that is not whole was recorded on a */
    struct stat sb;
    if (!final || !tmp || !mark) st = CUDALOAD_ERROR_OUT_OF_MEMORY;
    else if (lstat(mark, &sb) == 0 && cl_tree_lacks(final, pl) < 0) { /* made before, whole: reused */
    } else if (cl_mkdirs(base) != 0) {
        cl_buf_printf(why, "cannot make %s: %s", base, strerror(errno));
        st = CUDALOAD_ERROR_INVALID_ARGUMENT;
    } else if (!mkdtemp(tmp)) {
        cl_buf_printf(why, "cannot make a directory %s: %s", tmp, strerror(errno));
        st = CUDALOAD_ERROR_INVALID_ARGUMENT;
    } else {
        made = 1;
        cl_tree_prune(base);
        /* mkdtemp's mode is 0700; a tree is readable by all, as mkdir(0755) made it before */
        if (chmod(tmp, 0755) != 0) {
            cl_buf_printf(why, "cannot chmod %s: %s", tmp, strerror(errno));
            st = CUDALOAD_ERROR_INVALID_ARGUMENT;
        } else if (cl_tree_write(tmp, pl, what, why) != 0) {
            st = CUDALOAD_ERROR_INVALID_ARGUMENT;
        }
        /* rename in; when a tree is there already: taken when whole, else replaced (a few times
         * at most: other makers may be replacing it too) */
        for (int tries = 0; st == CUDALOAD_OK; tries++) {
            if (rename(tmp, final) == 0) {
                made = 0;
                break;
            }
            if (errno != EEXIST && errno != ENOTEMPTY) {
                cl_buf_printf(why, "cannot rename %s to %s: %s", tmp, final, strerror(errno));
                st = CUDALOAD_ERROR_INVALID_ARGUMENT;
                break;
            }
            int marked = lstat(mark, &sb) == 0;
            long lack = marked ? cl_tree_lacks(final, pl) : -1;
            if (marked && lack < 0) break; /* another maker's whole tree: taken, ours removed below */
            if (!marked) {
                cl_buf_printf(why, "%s is not a toolkit tree libcudaload made (no %s): not touched", final, CL_TREE_MARK);
                st = CUDALOAD_ERROR_INVALID_ARGUMENT;
            } else if (!cl_tree_only_ours(final)) {
                cl_buf fix = {0};
                cl_buf_printf(&fix, "move your files out of %s, or remove it: it is not replaced while it holds them", final);
                if (!recorded) cl_tree_record_lack(a, source, final, pl, lack, cl_buf_str(&fix), why);
                cl_buf_free(&fix);
                cl_buf_printf(why, "\n  %s is a toolkit tree libcudaload made, but incomplete and holding files of "
                              "someone else's: not touched", final);
                st = CUDALOAD_ERROR_INVALID_ARGUMENT;
            } else if (tries == 3) {
                cl_buf_printf(why, "%s is replaced by other makers as fast as this one replaces it: try again", final);
                st = CUDALOAD_ERROR_INVALID_ARGUMENT;
            } else {
                if (!recorded) cl_tree_record_lack(a, source, final, pl, lack, NULL, why);
                recorded = 1;
                if (cl_tree_retire(base, name, final) != 0) {
                    cl_buf_printf(why, "cannot move the incomplete toolkit tree %s out of the way: %s", final, strerror(errno));
                    st = CUDALOAD_ERROR_INVALID_ARGUMENT;
                }
            }
        }
    }
    /* a tree of ours not renamed in (another maker's whole one taken, or a failure): removed */
    if (made && cl_tree_only_ours(tmp)) cl_tree_remove(tmp);
    free(mark);
    free(tmp);
    free(base);
    if (st == CUDALOAD_OK) *root = final;
    else free(final);
    return st;
}

/* The site-packages or prefix a found part lies under: its root's, or for the system the
 * prefix above the program's bin/ (or /usr/local/cuda). */
static char *cl_part_top(size_t p) {
    const cl_part_state *ps = &G.part[p];
    if (ps->root_index >= 0) {
        const cl_root *root = &G.roots.items[ps->root_index];
        return cl_strdup(root->prefix ? root->prefix : root->pub.path);
    }
    if (ps->source == CUDALOAD_SOURCE_SYSTEM && ps->path) {
        char *bin = cl_dir_of(ps->path);
        char *top = bin ? cl_dir_of(bin) : NULL;
        free(bin);
        return top;
    }
    return NULL;
}

/* Looks for part p under top only (a site-packages: its wheel dir for major; a prefix: its prefix dirs),
 * without touching the part's own search: the toolkit's check. The path (as found) or NULL. */
static char *cl_part_under(size_t p, const char *top, int is_site, int major) {
    const cl_part *part = cl_part_at(p);
    for (size_t f = 0; f < CL_MAX_FLAVORS; f++) {
        /* a site-packages: the wheel dir of nvcc's major only (never CUDA 12's ptxas for a 13) */
        const char *w = is_site ? (part->flavor[f].major == major ? part->flavor[f].wheel_dir : NULL)
                                : (f == 0 ? part->prefix_dirs : NULL);
        char sub[128];
        while (w && cl_row_next_word(&w, sub, sizeof sub)) {
            char *dir = cl_path_join(top, sub);
            char *path = dir ? cl_path_join(dir, part->file) : NULL;
            cl_buf why = {0};
            int ok = path && cl_plat_lexists(path) && cl_part_check(part, path, &why) == CUDALOAD_OK;
            cl_buf_free(&why);
            free(dir);
            if (ok) return path;
            free(path);
            if (is_site) break; /* one wheel dir per flavor */
        }
    }
    return NULL;
}

/* The toolkit's check and plan. top: nvcc's site-packages or prefix; nvcc (the part's state) its
 * nvcc. Records a candidate per part, profile and header on a; adds every failure and its fix to
 * msg; returns the status. */
static cudaload_status cl_toolkit_plan(struct cl_toolkit_answer *a, const char *top, int is_site, const cl_part_state *nvcc,
                                       cl_plan *pl, cl_buf *msg) {
    cudaload_status st = CUDALOAD_OK;
    int release = nvcc->cuda_version;
    char *nvcc_dir = cl_dir_of(nvcc->path);
    /* the parts, each under top */
    for (size_t p = 0; p < cl_part_count(); p++) {
        const cl_part *part = cl_part_at(p);
        char *at = cl_part_under(p, top, is_site, release / 1000);
        if (at && (part->flags & CL_PART_TOOLKIT))
            cl_tk_record(a, at, nvcc->source, CUDALOAD_OK, CUDALOAD_REASON_FOUND, 0, 0, NULL, NULL, msg);
        if (!at && (part->flags & CL_PART_TOOLKIT)) {
            cl_buf fix = {0};
            cl_part_fix_major(part, release / 1000, &fix);
            cl_part_search(p); /* where else it is: named, never taken */
            const cl_part_state *ps = &G.part[p];
            /* where it would be: the wheel dir of nvcc's major, or the prefix's first dir */
            const char *sub = NULL;
            char first[128];
            for (size_t f = 0; f < CL_MAX_FLAVORS && is_site; f++)
                if (part->flavor[f].major == release / 1000) sub = part->flavor[f].wheel_dir;
            const char *w = part->prefix_dirs;
            if (!is_site && cl_row_next_word(&w, first, sizeof first)) sub = first;
            char *dir = sub ? cl_path_join(top, sub) : cl_strdup(top);
            char *where = dir ? cl_path_join(dir, part->file) : NULL;
            free(dir);
            if (ps->status == CUDALOAD_OK)
                cl_tk_record(a, ps->path, ps->source, CUDALOAD_ERROR_NOT_FOUND, CUDALOAD_REASON_OTHER_ROOT, 0, 0, top,
                             cl_buf_str(&fix), msg);
            else
                cl_tk_record(a, where ? where : top, nvcc->source, CUDALOAD_ERROR_NOT_FOUND, CUDALOAD_REASON_NOT_IN_ROOT, 0, 0,
                             top, cl_buf_str(&fix), msg);
            free(where);
            cl_buf_free(&fix);
            st = CUDALOAD_ERROR_NOT_FOUND;
        }
        if (at && is_site) {
            /* where a toolkit keeps it: archives in lib/ (lib64 is a link to it), the rest in
             * the first of its prefix dirs (bin, nvvm/bin, nvvm/libdevice) */
            char sub[128] = "lib";
            const char *w = part->prefix_dirs;
            if (part->kind == CUDALOAD_PART_STATIC || cl_row_next_word(&w, sub, sizeof sub)) {
                char *rel = cl_path_join(sub, part->file);
                if (rel) cl_plan_add(pl, rel, at);
                free(rel);
            }
        }
        free(at);
    }
    /* nvcc's own companions: the profile that makes the tree its TOP, and bin/crt (link.stub) */
    char *prof = nvcc_dir ? cl_path_join(nvcc_dir, "nvcc.profile") : NULL;
    if (!nvcc_dir || !cl_file_exists(nvcc_dir, "nvcc.profile")) {
        cl_tk_record(a, prof ? prof : nvcc->path, nvcc->source, CUDALOAD_ERROR_NOT_FOUND, CUDALOAD_REASON_NOT_IN_ROOT, 0, 0,
                     top, "reinstall nvcc's package (pip install --force-reinstall nvidia-cuda-nvcc)", msg);
        st = CUDALOAD_ERROR_NOT_FOUND;
    } else if (is_site) {
        char *crt = cl_path_join(nvcc_dir, "crt");
        if (prof) cl_plan_add(pl, "bin/nvcc.profile", prof);
        if (crt) cl_plan_add(pl, "bin/crt", crt);
        free(crt);
    }
    free(prof);
    /* the runtime headers: those of the wheels of nvcc's major, or the prefix's include/ */
    char *inc = NULL;
    if (is_site) {
        int row = cl_catalogue_find("cudart");
        const cl_flavor *fl = cl_row_flavor(cl_row_at((size_t)row), release / 1000);
        inc = fl && fl->include_dir ? cl_path_join(top, fl->include_dir) : NULL;
    } else {
        inc = cl_path_join(top, "include");
    }
    static const char *const headers[][2] = {{"cuda_runtime.h", "pip install nvidia-cuda-runtime"},
                                             {"crt/host_config.h", "pip install nvidia-cuda-crt"}};
    for (size_t h = 0; h < sizeof headers / sizeof headers[0]; h++) {
        char *path = cl_path_join(inc ? inc : top, headers[h][0]);
        int there = inc && cl_file_exists(inc, headers[h][0]);
        cl_tk_record(a, path ? path : headers[h][0], nvcc->source, there ? CUDALOAD_OK : CUDALOAD_ERROR_NOT_FOUND,
                     there ? CUDALOAD_REASON_FOUND : CUDALOAD_REASON_NOT_IN_ROOT, 0, 0, top, headers[h][1], msg);
        free(path);
        if (!there) st = CUDALOAD_ERROR_NOT_FOUND;
    }
    a->headers_version = inc ? cl_headers_release(inc) : 0;
    int hv = a->headers_version;
    if (st == CUDALOAD_OK && hv && release && hv / 10 != release / 10) {
        char *api = cl_path_join(inc, "cuda_runtime_api.h");
        char fix[256];
        snprintf(fix, sizeof fix, "pip install nvidia-cuda-runtime==%d.%d.* nvidia-cuda-crt==%d.%d.* (or nvidia-cuda-nvcc==%d.%d.*)",
                 release / 1000, release % 1000 / 10, release / 1000, release % 1000 / 10, hv / 1000, hv % 1000 / 10);
        cl_tk_record(a, api ? api : inc, nvcc->source, CUDALOAD_ERROR_MAJOR_MISMATCH, CUDALOAD_REASON_TOOLKIT_MISMATCH, hv,
                     release, inc, fix, msg);
        free(api);
        st = CUDALOAD_ERROR_MAJOR_MISMATCH;
    }
    if (is_site && inc) cl_plan_add(pl, "include", inc);
    /* the wheels' shared library dir (cudart's for nvcc's major): libraries, cmake/, and lib64 */
    if (is_site) {
        int row = cl_catalogue_find("cudart");
        const cl_flavor *fl = cl_row_flavor(cl_row_at((size_t)row), release / 1000);
        char *lib = fl && fl->wheel_dir ? cl_path_join(top, fl->wheel_dir) : NULL;
        if (lib) cl_plan_dir_entries(pl, lib, "lib");
        free(lib);
        cl_plan_add(pl, "lib64", "lib");
    }
    free(inc);
    free(nvcc_dir);
    if (pl->oom) st = CUDALOAD_ERROR_OUT_OF_MEMORY;
    return st;
}

/* Fills answer a for dir: nvcc, its root, the check's candidates, the root made (or why not in msg). */
static cudaload_status cl_toolkit_make(struct cl_toolkit_answer *a, const char *dir, cl_buf *msg) {
    int nvcc = cl_part_find("nvcc");
    cl_part_search((size_t)nvcc);
    const cl_part_state *ns = &G.part[nvcc];
    if (ns->status != CUDALOAD_OK) {
        cl_buf_printf(msg, "no CUDA toolkit: %s", ns->error ? ns->error : "nvcc not found");
        return ns->status;
    }
    a->nvcc = cl_strdup(ns->path);
    a->cuda_version = ns->cuda_version;
    char *top = cl_part_top((size_t)nvcc);
    char *real_top = top ? cl_plat_realpath(top) : NULL;
    free(top);
    if (!real_top) {
        cl_buf_printf(msg, "no CUDA toolkit: cannot resolve the root of %s", ns->path);
        return CUDALOAD_ERROR_NOT_FOUND;
    }
    a->top = cl_strdup(real_top);
    /* a site-packages root holds nvcc in a wheel dir; anything else is a prefix (bin/nvcc) */
    int is_site = ns->root_index >= 0 && !G.roots.items[ns->root_index].prefix;
    cl_plan pl = {0};
    cl_buf why = {0};
    cudaload_status st = cl_toolkit_plan(a, real_top, is_site, ns, &pl, &why);
    if (st == CUDALOAD_OK && !is_site) {
        a->root = cl_strdup(real_top); /* a toolkit prefix as it lies */
        if (dir) cl_debug("toolkit root: %s is a toolkit prefix; %s not used", real_top, dir);
    } else if (st == CUDALOAD_OK) {
        char what[PATH_MAX + 64];
        snprintf(what, sizeof what, "libcudaload toolkit tree for %s (CUDA %d.%d)\n", real_top, ns->cuda_version / 1000,
                 ns->cuda_version % 1000 / 10);
        if (dir) {
            st = cl_tree_at(dir, &pl, what, &why);
            if (st == CUDALOAD_OK && !(a->root = cl_plat_realpath(dir))) st = CUDALOAD_ERROR_OUT_OF_MEMORY;
        } else {
            st = cl_tree_cached(a, ns->source, &pl, what, &a->root, &why);
        }
    }
    if (st != CUDALOAD_OK)
        cl_buf_printf(msg, "no usable CUDA toolkit at %s (nvcc %s, CUDA %d.%d, from %s):%s", real_top, ns->path,
                      ns->cuda_version / 1000, ns->cuda_version % 1000 / 10, cudaload_source_name(ns->source), cl_buf_str(&why));
    cl_buf_free(&why);
    cl_plan_free(&pl);
    free(real_top);
    return st;
}
#endif

/* The answer for dir (made on first ask, under the lock), or NULL out of memory. */
static struct cl_toolkit_answer *cl_toolkit_answer_for(const char *dir) {
    /* the same dir asked again: the first answer (a tree is made once per process) */
    for (struct cl_toolkit_answer *a = G.toolkit; a; a = a->next)
        if ((!a->dir && !dir) || (a->dir && dir && strcmp(a->dir, dir) == 0)) return a;
    struct cl_toolkit_answer *a = calloc(1, sizeof *a);
    if (!a || (dir && !(a->dir = cl_strdup(dir)))) {
        free(a);
        return NULL;
    }
    cl_buf msg = {0};
#ifndef _WIN32
    a->status = cl_toolkit_make(a, dir, &msg);
#else
    a->status = CUDALOAD_ERROR_NOT_FOUND;
    cl_buf_printf(&msg, "cudaload_toolkit_root: Linux only");
#endif
    if (a->status != CUDALOAD_OK) a->error = cl_strdup(cl_buf_str(&msg));
    cl_buf_free(&msg);
    a->next = G.toolkit;
    G.toolkit = a;
    return a;
}

cudaload_status cudaload_get_toolkit_info(const char *dir, cudaload_toolkit_info *out) {
    if (!out || out->size < offsetof(cudaload_toolkit_info, details) + sizeof out->details || (dir && dir[0] != '/')) {
        cl_set_error("cudaload_get_toolkit_info: out (with its size set) is required, and dir must be absolute (or NULL)");
        return CUDALOAD_ERROR_INVALID_ARGUMENT;
    }
    if (cl_lock_initialized() != CUDALOAD_OK) return CUDALOAD_ERROR_NOT_INITIALIZED;
    struct cl_toolkit_answer *a = cl_toolkit_answer_for(dir);
    cudaload_toolkit_info full = {.size = sizeof full, .status = a ? a->status : CUDALOAD_ERROR_OUT_OF_MEMORY};
    if (a) {
        full.root = a->root;
        full.top = a->top;
        full.nvcc = a->nvcc;
        full.cuda_version = a->cuda_version;
        full.headers_version = a->headers_version;
        full.n_candidates = a->n_cands;
        full.candidates = a->cands;
        full.details = a->details;
    }
    cl_info_copy_out(out, out->size, &full, sizeof full);
    if (full.status != CUDALOAD_OK) cl_set_error(a && a->error ? a->error : "out of memory");
    cl_unlock();
    return full.status;
}

cudaload_status cudaload_toolkit_root(const char *dir, const char **root) {
    if (!root) {
        cl_set_error("cudaload_toolkit_root: root is required");
        return CUDALOAD_ERROR_INVALID_ARGUMENT;
    }
    cudaload_toolkit_info info = {.size = sizeof info};
    cudaload_status st = cudaload_get_toolkit_info(dir, &info);
    *root = st == CUDALOAD_OK ? info.root : NULL;
    return st;
}
