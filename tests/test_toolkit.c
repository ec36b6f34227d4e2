/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_toolkit.c -- the toolkit's parts (cudaload_part: programs, static archives, bitcode) and
 * cudaload_toolkit_root(), on real files: the CUDA 13 toolkit of this machine ($CUDA_HOME, else
 * /usr/local/cuda) arranged as pip wheel trees (site-packages/nvidia/cu13/..., the CUDA 12
 * nvidia/cuda_nvcc/...) and as a toolkit prefix, by hard links (symbolic links where a hard link
 * cannot be made: another file system, protected_hardlinks). Files of the wrong kind are crafted
 * beside them: a text file named nvcc, a non-executable copy of ptxas, a text libcudadevrt.a, a
 * truncated libdevice, runtime headers of another release.
 *
 * Every scenario runs in a forked child (libcudaload's state is per process) whose search is
 * scoped to the crafted trees (options.sources) or asserts that they come first; trees made by
 * cudaload_toolkit_root() go to a temporary CUDALOAD_CACHE_DIR. No driver is needed (find-only).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cudaload.h"
#include "harness.h"

#define SRC(s) CUDALOAD_SOURCE_BIT(CUDALOAD_SOURCE_##s)

/* ---- paths ---- */

static char cuda[PATH_MAX];     /* the real toolkit */
static char cuda_lib[PATH_MAX]; /* its lib64 (a full install), else lib (made of the wheels) */
static char probe[PATH_MAX];

/* A path made with printf arguments; kept until exit (a ring would be overwritten under a
 * test's feet). */
static const char *pth(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static const char *pth(const char *fmt, ...) {
    char buf[PATH_MAX];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof buf) fail_msg("path too long: %s", buf);
    char *p = strdup(buf);
    if (!p) fail_msg("out of memory");
    return p;
}

/* The real file for a toolkit-relative name: "lib/" names are looked up in cuda_lib. */
static const char *real(const char *rel) {
    if (strncmp(rel, "lib/", 4) == 0) return pth("%s/%s", cuda_lib, rel + 4);
    return pth("%s/%s", cuda, rel);
}

static const char *resolved(const char *path) {
    char buf[PATH_MAX];
    if (!realpath(path, buf)) return pth("(realpath %s: %s)", path, strerror(errno));
    return pth("%s", buf);
}

static void mkdirs_of(const char *path) {
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = 0;
        th_mkdirs(dir);
    }
}

/* at := the real file target: a hard link, as pip installs a file; a symbolic link where a hard
 * link cannot be made (another file system, or protected_hardlinks for files of another owner).
 * A hard link shares the real file: nothing here ever writes through one. */
static void place(const char *target, const char *at) {
    mkdirs_of(at);
    if (unlink(at) != 0 && errno != ENOENT) fail_msg("unlink %s: %s", at, strerror(errno));
    /* the file itself: link() does not follow a symbolic link, and a toolkit's libcudart.so.13 is
     * one, relative (-> libcudart.so.13.0.96), which would dangle in the crafted tree */
    char file[PATH_MAX];
    if (!realpath(target, file)) snprintf(file, sizeof file, "%s", target);
    if (link(file, at) != 0) th_symlink(file, at);
}

/* A file of our own at path (never through a link to a real file: the link is removed first). */
static void write_file(const char *path, const char *text, mode_t mode) {
    mkdirs_of(path);
    if (unlink(path) != 0 && errno != ENOENT) fail_msg("unlink %s: %s", path, strerror(errno));
    th_write(path, text, strlen(text));
    if (chmod(path, mode) != 0) fail_msg("chmod %s: %s", path, strerror(errno));
}

/* The first n bytes (all when n is 0) of src, as a file of our own at dst with mode. */
static void copy_file(const char *src, const char *dst, size_t n, mode_t mode) {
    mkdirs_of(dst);
    if (unlink(dst) != 0 && errno != ENOENT) fail_msg("unlink %s: %s", dst, strerror(errno));
    th_copy(src, dst);
    if (n && truncate(dst, (off_t)n) != 0) fail_msg("truncate %s: %s", dst, strerror(errno));
    if (chmod(dst, mode) != 0) fail_msg("chmod %s: %s", dst, strerror(errno));
}

static int exists(const char *path) {
    struct stat st;
    return lstat(path, &st) == 0;
}

/* Every entry under dir with its type, size and inode, sorted: what "nothing touched" compares. */
static const char *listing(const char *dir) {
    const char *out;
    if (th_sh(&out, "cd '%s' && find . -printf '%%p %%y %%s %%i\\n' | sort", dir) != 0) fail_msg("cannot list %s", dir);
    return pth("%s", out);
}

/* ---- crafted trees ---- */

/* The CUDA 13 wheels' files: where nvidia-cuda-nvcc, nvidia-nvvm, nvidia-cuda-runtime and
 * nvidia-cuda-culibos put them in site-packages, and where a toolkit keeps them. part: the
 * catalogue's name, or NULL for a companion that is no part. */
static const struct {
    const char *part, *wheel, *toolkit;
} cu13_files[] = {
    {"nvcc", "nvidia/cu13/bin/nvcc", "bin/nvcc"},
    {NULL, "nvidia/cu13/bin/nvcc.profile", "bin/nvcc.profile"},
    {"ptxas", "nvidia/cu13/bin/ptxas", "bin/ptxas"},
    {"fatbinary", "nvidia/cu13/bin/fatbinary", "bin/fatbinary"},
    {"nvlink", "nvidia/cu13/bin/nvlink", "bin/nvlink"},
    {"cudafe++", "nvidia/cu13/bin/cudafe++", "bin/cudafe++"},
    {"bin2c", "nvidia/cu13/bin/bin2c", "bin/bin2c"},
    {"cicc", "nvidia/cu13/nvvm/bin/cicc", "nvvm/bin/cicc"},
    {"libdevice", "nvidia/cu13/nvvm/libdevice/libdevice.10.bc", "nvvm/libdevice/libdevice.10.bc"},
    {"cudadevrt", "nvidia/cu13/lib/libcudadevrt.a", "lib/libcudadevrt.a"},
    {"cudart_static", "nvidia/cu13/lib/libcudart_static.a", "lib/libcudart_static.a"},
    {"culibos", "nvidia/cu13/lib/libculibos.a", "lib/libculibos.a"},
    {NULL, "nvidia/cu13/lib/libcudart.so.13", "lib/libcudart.so.13"},
};
#define N_CU13 (sizeof cu13_files / sizeof cu13_files[0])

/* A CUDA 13 site-packages at site: every file above but the one of part omit (NULL: none),
 * bin/crt (a directory of nvidia-cuda-nvcc), and include/: the real headers, or include_dir. */
static void make_cu13_site(const char *site, const char *omit, const char *include_dir) {
    for (size_t i = 0; i < N_CU13; i++) {
        if (omit && cu13_files[i].part && strcmp(omit, cu13_files[i].part) == 0) continue;
        place(real(cu13_files[i].toolkit), pth("%s/%s", site, cu13_files[i].wheel));
    }
    th_symlink(real("bin/crt"), pth("%s/nvidia/cu13/bin/crt", site));
    th_symlink(include_dir ? include_dir : real("include"), pth("%s/nvidia/cu13/include", site));
}

/* A toolkit prefix at prefix (bin/, nvvm/, lib64/, include/), as a full install lays it out. */
static void make_prefix(const char *prefix) {
    for (size_t i = 0; i < N_CU13; i++) {
        const char *t = cu13_files[i].toolkit;
        const char *at = strncmp(t, "lib/", 4) == 0 ? pth("%s/lib64/%s", prefix, t + 4) : pth("%s/%s", prefix, t);
        place(real(t), at);
    }
    th_symlink("libcudart.so.13", pth("%s/lib64/libcudart.so", prefix));
    th_symlink(real("bin/crt"), pth("%s/bin/crt", prefix));
    th_symlink(real("include"), pth("%s/include", prefix));
}

/* The real headers with cuda_runtime_api.h saying CUDART_VERSION version: a directory of links
 * to every real entry but that one, a changed copy. */
static const char *headers_of_release(int version) {
    const char *dir = pth("%s/include-%d", th_tmpdir(), version);
    th_mkdirs(dir);
    const char *out;
    if (th_sh(&out, "cd '%s' && for e in * .[!.]*; do [ -e \"$e\" ] && [ \"$e\" != cuda_runtime_api.h ] && "
                    "ln -s \"$PWD/$e\" '%s/'\"$e\"; done; sed 's/^#define CUDART_VERSION .*/#define CUDART_VERSION %d/' "
                    "cuda_runtime_api.h > '%s/cuda_runtime_api.h' && grep -q '^#define CUDART_VERSION %d$' '%s/cuda_runtime_api.h'",
              real("include"), dir, version, dir, version, dir) != 0)
        fail_msg("cannot make headers of CUDART_VERSION %d in %s:\n%s", version, dir, out);
    return dir;
}

/* The crafted trees every test shares, made once. */
static const char *site13;   /* a complete CUDA 13 site-packages */
static const char *prefix13; /* a toolkit prefix */
static const char *prefix13_link; /* a symbolic link to it: what CUDA_HOME names */

static void need_trees(void) {
    if (site13) return;
    const char *t = th_tmpdir();
    const char *s = pth("%s/site-packages", t);
    make_cu13_site(s, NULL, NULL);
    const char *p = pth("%s/cuda-13", t);
    make_prefix(p);
    prefix13_link = pth("%s/cuda", t);
    th_symlink(p, prefix13_link);
    site13 = s;
    prefix13 = p;
}

/* ---- a scenario: init (find-only, no driver needed), then the calls, in a child ---- */

#define TK_PARTS 64
#define TK_CANDS 8
#define TK_CHECKS 32 /* the toolkit check's candidates: a part each, the headers */

typedef struct tk_cand {
    int result, source, code, major, value, needed;
    char path[1024];
} tk_cand;

typedef struct tk_part {
    char name[32];
    int status, source, major, cuda_version, n_cands;
    char path[1024];
    tk_cand cand[TK_CANDS];
} tk_part;

typedef struct tk_out {
    int init_status;
    int root_status[2];  /* cudaload_toolkit_root's, per call; -1 when not called */
    char root[2][PATH_MAX];
    int same_pointer;    /* the second call answered the first's string */
    char root_error[8192];
    int n_parts;
    tk_part part[TK_PARTS];
    /* cudaload_get_toolkit_info after the calls: its status, versions and the check's candidates */
    int info_status, info_same_root, info_cuda_version, info_headers_version, n_tk;
    tk_cand tk[TK_CHECKS];
    char planted[PATH_MAX]; /* the directory the child planted (tk_scene's plant), or "" */
} tk_out;

typedef struct tk_scene {
    const char *roots[4]; /* caller roots */
    size_t n_roots;
    unsigned sources;     /* options.sources: 0 is every source */
    int toolkit_calls;    /* cudaload_toolkit_root(dir) this many times (0, 1, 2), before the parts */
    const char *dir;
    int parts;            /* every part searched (cudaload_part) and recorded */
    const char *plant;    /* before the calls: the directory <plant>.<the child's pid> is made, holding a
                             link bin/nvcc to the real nvcc (another maker's half-made tree of the
                             child's pid, as a process of another container sharing the cache has it) */
} tk_scene;

static tk_out *out; /* shared with the children (MAP_SHARED) */

static void copy_cand(tk_cand *k, const cudaload_candidate *c, const cudaload_candidate_detail *d) {
    k->result = c->result;
    k->source = c->source;
    k->code = d->reason;
    k->major = d->major;
    k->value = d->value;
    k->needed = d->needed;
    snprintf(k->path, sizeof k->path, "%s", c->path);
}

static void tk_child(th_result *r, void *arg) {
    const tk_scene *s = arg;
    memset(out, 0, sizeof *out);
    out->root_status[0] = out->root_status[1] = -1;
    cudaload_options o = th_opts(s->roots, s->n_roots, s->sources, CUDALOAD_FLAG_FIND_ONLY | CUDALOAD_FLAG_DRIVER_OPTIONAL);
    /* a site without libcudart answers NOT_FOUND, and the parts are searched all the same */
    out->init_status = r->init_status = cudaload_init(&o);
    snprintf(r->error, sizeof r->error, "%s", cudaload_last_error());
    if (s->plant) {
        snprintf(out->planted, sizeof out->planted, "%s.%ld", s->plant, (long)getpid());
        char nvcc[PATH_MAX];
        snprintf(nvcc, sizeof nvcc, "%s/bin", out->planted);
        if (mkdir(out->planted, 0755) != 0 || mkdir(nvcc, 0755) != 0) return;
        char target[PATH_MAX];
        snprintf(nvcc, sizeof nvcc, "%s/bin/nvcc", out->planted);
        snprintf(target, sizeof target, "%s/bin/nvcc", cuda);
        if (symlink(target, nvcc) != 0) return;
    }
    const char *first = NULL;
    for (int i = 0; i < s->toolkit_calls && i < 2; i++) {
        const char *root = NULL;
        out->root_status[i] = cudaload_toolkit_root(s->dir, &root);
        snprintf(out->root[i], sizeof out->root[i], "%s", root ? root : "");
        if (out->root_status[i] != CUDALOAD_OK) snprintf(out->root_error, sizeof out->root_error, "%s", cudaload_last_error());
        if (i == 0) first = root;
        else out->same_pointer = root == first;
    }
    if (s->toolkit_calls) {
        cudaload_toolkit_info ti = {.size = sizeof ti};
        out->info_status = cudaload_get_toolkit_info(s->dir, &ti);
        out->info_same_root = ti.root == first;
        out->info_cuda_version = ti.cuda_version;
        out->info_headers_version = ti.headers_version;
        for (size_t c = 0; c < ti.n_candidates && c < TK_CHECKS; c++) copy_cand(&out->tk[c], &ti.candidates[c], &ti.details[c]);
        out->n_tk = (int)(ti.n_candidates < TK_CHECKS ? ti.n_candidates : TK_CHECKS);
    }
    if (!s->parts) return;
    size_t n = cudaload_part_count();
    for (size_t i = 0; i < n && i < TK_PARTS; i++) {
        cudaload_part_info info = {.size = sizeof info};
        cudaload_part_at(i, &info);
        tk_part *p = &out->part[i];
        snprintf(p->name, sizeof p->name, "%s", info.name);
        p->status = cudaload_part(info.name, &info);
        p->source = info.source;
        p->major = info.major;
        p->cuda_version = info.cuda_version;
        p->n_cands = (int)info.n_candidates;
        snprintf(p->path, sizeof p->path, "%s", info.path ? info.path : "");
        for (size_t c = 0; c < info.n_candidates && c < TK_CANDS; c++) copy_cand(&p->cand[c], &info.candidates[c], &info.details[c]);
    }
    out->n_parts = (int)(n < TK_PARTS ? n : TK_PARTS);
}

/* Runs the scene with env ("K=V", NULL-terminated; CUDALOAD_*, CUDA_HOME and the like are
 * cleared first by the harness). */
static void run_scene(const tk_scene *s, const char *const *env) {
    th_result *r = th_result_new();
    th_run(r, env, tk_child, (void *)s);
    int clean = r->exited && r->exit_code == 0;
    th_result_free(r);
    if (!clean) fail_msg("the scenario's child did not exit cleanly");
}

static const tk_part *part(const char *name) {
    for (int i = 0; i < out->n_parts; i++)
        if (strcmp(out->part[i].name, name) == 0) return &out->part[i];
    fail_msg("part %s not recorded (%d parts)", name, out->n_parts);
    return NULL;
}

static void dump_part(const tk_part *p) {
    print_message("%s: %s at '%s' [%s] major %d, %d candidates\n", p->name, cudaload_status_name((cudaload_status)p->status),
                  p->path, cudaload_source_name((cudaload_source)p->source), p->major, p->n_cands);
    for (int c = 0; c < p->n_cands && c < TK_CANDS; c++)
        print_message("  %s [%s]: %s %s major %d needed %d\n", p->cand[c].path, cudaload_source_name((cudaload_source)p->cand[c].source),
                      cudaload_status_name((cudaload_status)p->cand[c].result), cudaload_reason_name((cudaload_reason)p->cand[c].code),
                      p->cand[c].major, p->cand[c].needed);
}

/* The part was found at path (exactly: as found, not resolved) from source, of major. */
static void expect_found(const char *name, const char *path, int source, int major) {
    const tk_part *p = part(name);
    if (p->status != CUDALOAD_OK || strcmp(p->path, path) != 0 || p->source != source || p->major != major) {
        dump_part(p);
        fail_msg("%s: want OK at %s [%s] major %d", name, path, cudaload_source_name((cudaload_source)source), major);
    }
}

/* The part's candidate at path has this result and reason code (and major/needed when >= 0). */
static void expect_cand(const char *name, const char *path, int result, int code, int major, int needed) {
    const tk_part *p = part(name);
    for (int c = 0; c < p->n_cands && c < TK_CANDS; c++) {
        const tk_cand *k = &p->cand[c];
        if (strcmp(k->path, path) != 0) continue;
        if (k->result == result && k->code == code && (major < 0 || k->major == major) && (needed < 0 || k->needed == needed)) return;
        dump_part(p);
        fail_msg("%s candidate %s: want %s %s (major %d, needed %d)", name, path, cudaload_status_name((cudaload_status)result),
                 cudaload_reason_name((cudaload_reason)code), major, needed);
    }
    dump_part(p);
    fail_msg("%s: no candidate %s", name, path);
}

/* The toolkit check's candidate at path (cudaload_get_toolkit_info) has this result and reason
 * code (and value/needed when >= 0). */
static void expect_tk_cand(const char *path, int result, int code, int value, int needed) {
    for (int c = 0; c < out->n_tk; c++) {
        const tk_cand *k = &out->tk[c];
        if (strcmp(k->path, path) != 0) continue;
        if (k->result == result && k->code == code && (value < 0 || k->value == value) && (needed < 0 || k->needed == needed)) return;
        fail_msg("toolkit candidate %s: %s %s (value %d, needed %d), want %s %s", path, cudaload_status_name((cudaload_status)k->result),
                 cudaload_reason_name((cudaload_reason)k->code), k->value, k->needed, cudaload_status_name((cudaload_status)result),
                 cudaload_reason_name((cudaload_reason)code));
    }
    for (int c = 0; c < out->n_tk; c++)
        print_message("  %s: %s\n", out->tk[c].path, cudaload_reason_name((cudaload_reason)out->tk[c].code));
    fail_msg("no toolkit candidate %s among %d", path, out->n_tk);
}

static void expect_root(int call, int status) {
    if (out->root_status[call] != status)
        fail_msg("cudaload_toolkit_root call %d: %s, want %s; message:\n%s", call + 1,
                 out->root_status[call] < 0 ? "not called" : cudaload_status_name((cudaload_status)out->root_status[call]),
                 cudaload_status_name((cudaload_status)status), out->root_error);
}

static int setup(void **state) {
    (void)state;
    const char *b = th_require_build(0);
    if (!b) return -1;
    snprintf(probe, sizeof probe, "%s/cudaload-probe", b);
    const char *h = getenv("CUDA_HOME");
    snprintf(cuda, sizeof cuda, "%s", h && h[0] == '/' ? h : "/usr/local/cuda");
    snprintf(cuda_lib, sizeof cuda_lib, "%s/lib64/libcudadevrt.a", cuda);
    snprintf(cuda_lib, sizeof cuda_lib, "%s/%s", cuda, access(cuda_lib, F_OK) == 0 ? "lib64" : "lib");
    static const char *const need[] = {"bin/nvcc", "bin/nvcc.profile", "bin/crt/link.stub", "nvvm/bin/cicc", "nvvm/libdevice/libdevice.10.bc",
                                       "lib/libcudadevrt.a", "lib/libcudart_static.a", "lib/libcudart.so.13", "include/cuda_runtime_api.h"};
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) {
        const char *p = strncmp(need[i], "lib/", 4) == 0 ? pth("%s/%s", cuda_lib, need[i] + 4) : pth("%s/%s", cuda, need[i]);
        if (access(p, R_OK) != 0) {
            fprintf(stderr, "test_toolkit: %s missing: the CUDA 13 toolkit is needed (CUDA_HOME=%s)\n", p, cuda);
            return -1;
        }
    }
    out = mmap(NULL, sizeof *out, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    return out == MAP_FAILED ? -1 : 0;
}

/* ---- 1. the parts in a CUDA 13 site-packages ---- */

static void test_cu13_site_every_part(void **state) {
    (void)state;
    need_trees();
    tk_scene s = {.roots = {site13}, .n_roots = 1, .sources = SRC(CALLER), .parts = 1};
    run_scene(&s, NULL);
    assert_int_equal(out->init_status, CUDALOAD_OK);
    assert_int_equal(out->n_parts, (int)cudaload_part_count());
    for (int i = 0; i < out->n_parts; i++) {
        const tk_part *p = &out->part[i];
        const char *wheel = NULL;
        for (size_t f = 0; f < N_CU13; f++)
            if (cu13_files[f].part && strcmp(cu13_files[f].part, p->name) == 0) wheel = cu13_files[f].wheel;
        if (wheel) {
            expect_found(p->name, pth("%s/%s", site13, wheel), CUDALOAD_SOURCE_CALLER, 13);
            expect_cand(p->name, pth("%s/%s", site13, wheel), CUDALOAD_OK, CUDALOAD_REASON_FOUND, 13, -1);
        } else if (p->status != CUDALOAD_ERROR_NOT_FOUND || p->n_cands != 0) {
            /* not in the site, and nothing else is searched */
            dump_part(p);
            fail_msg("%s: not in the site, want NOT_FOUND without candidates", p->name);
        }
    }
    /* nvcc's release, read from the real binary; the other parts report none */
    assert_int_equal(part("nvcc")->cuda_version, 13000);
    assert_int_equal(part("ptxas")->cuda_version, 0);
    /* every part the toolkit needs is among those placed (a new one needs a line above) */
    for (size_t i = 0; i < cudaload_part_count(); i++) {
        cudaload_part_info info = {.size = sizeof info};
        assert_int_equal(cudaload_part_at(i, &info), CUDALOAD_OK);
        if (info.needed_by_toolkit) assert_int_equal(part(info.name)->status, CUDALOAD_OK);
    }
}

/* With every source on (CUDA_HOME=the real toolkit, PATH holding its bin/, /usr/local/cuda),
 * the caller's site comes first. */
static void test_cu13_site_beats_the_system(void **state) {
    (void)state;
    need_trees();
    const char *env[] = {pth("CUDA_HOME=%s", cuda), NULL};
    tk_scene s = {.roots = {site13}, .n_roots = 1, .sources = 0, .parts = 1};
    run_scene(&s, env);
    expect_found("nvcc", pth("%s/nvidia/cu13/bin/nvcc", site13), CUDALOAD_SOURCE_CALLER, 13);
    expect_found("cicc", pth("%s/nvidia/cu13/nvvm/bin/cicc", site13), CUDALOAD_SOURCE_CALLER, 13);
    expect_found("cudadevrt", pth("%s/nvidia/cu13/lib/libcudadevrt.a", site13), CUDALOAD_SOURCE_CALLER, 13);
    expect_found("libdevice", pth("%s/nvidia/cu13/nvvm/libdevice/libdevice.10.bc", site13), CUDALOAD_SOURCE_CALLER, 13);
    /* and without the site, the same search finds the real toolkit: the precedence above is real */
    tk_scene none = {.sources = 0, .parts = 1};
    run_scene(&none, env);
    const tk_part *p = part("nvcc");
    if (p->status != CUDALOAD_OK || p->source == CUDALOAD_SOURCE_CALLER) {
        dump_part(p);
        fail_msg("nvcc: want the real toolkit's without the site");
    }
}

/* ---- 2. files of the wrong kind ---- */

/* A site whose nvcc is a text file, whose ptxas is a copy of the real one without mode x, whose
 * libcudadevrt.a is text and whose libdevice.10.bc is cut after 2 bytes. */
static const char *bad_site(void) {
    static const char *site;
    if (site) return site;
    const char *s = pth("%s/bad-site", th_tmpdir());
    write_file(pth("%s/nvidia/cu13/bin/nvcc", s), "nvcc: this is not a program\n", 0755);
    copy_file(real("bin/ptxas"), pth("%s/nvidia/cu13/bin/ptxas", s), 0, 0644);
    write_file(pth("%s/nvidia/cu13/lib/libcudadevrt.a", s), "INPUT(-lcudadevrt_real)\n", 0644);
    copy_file(real("nvvm/libdevice/libdevice.10.bc"), pth("%s/nvidia/cu13/nvvm/libdevice/libdevice.10.bc", s), 2, 0644);
    site = s;
    return site;
}

static const char *const bad_parts[][2] = {
    {"nvcc", "nvidia/cu13/bin/nvcc"},
    {"ptxas", "nvidia/cu13/bin/ptxas"},
    {"cudadevrt", "nvidia/cu13/lib/libcudadevrt.a"},
    {"libdevice", "nvidia/cu13/nvvm/libdevice/libdevice.10.bc"},
};

static void test_wrong_kind_files_unusable(void **state) {
    (void)state;
    const char *bad = bad_site();
    tk_scene s = {.roots = {bad}, .n_roots = 1, .sources = SRC(CALLER), .parts = 1};
    run_scene(&s, NULL);
    for (size_t i = 0; i < sizeof bad_parts / sizeof bad_parts[0]; i++) {
        const tk_part *p = part(bad_parts[i][0]);
        if (p->status != CUDALOAD_ERROR_NOT_FOUND || p->n_cands != 1 || p->path[0]) {
            dump_part(p);
            fail_msg("%s: want NOT_FOUND with one candidate", p->name);
        }
        expect_cand(bad_parts[i][0], pth("%s/%s", bad, bad_parts[i][1]), CUDALOAD_ERROR_NOT_FOUND, CUDALOAD_REASON_FILE_UNUSABLE, 13, -1);
    }
}

static void test_wrong_kind_then_good_copy_taken(void **state) {
    (void)state;
    need_trees();
    const char *bad = bad_site();
    tk_scene s = {.roots = {bad, site13}, .n_roots = 2, .sources = SRC(CALLER), .parts = 1};
    run_scene(&s, NULL);
    for (size_t i = 0; i < sizeof bad_parts / sizeof bad_parts[0]; i++) {
        const char *name = bad_parts[i][0];
        expect_found(name, pth("%s/%s", site13, bad_parts[i][1]), CUDALOAD_SOURCE_CALLER, 13);
        assert_int_equal(part(name)->n_cands, 2);
        expect_cand(name, pth("%s/%s", bad, bad_parts[i][1]), CUDALOAD_ERROR_NOT_FOUND, CUDALOAD_REASON_FILE_UNUSABLE, -1, -1);
        expect_cand(name, pth("%s/%s", site13, bad_parts[i][1]), CUDALOAD_OK, CUDALOAD_REASON_FOUND, 13, -1);
    }
    assert_int_equal(part("nvcc")->cuda_version, 13000);
}

/* ---- 3. the CUDA 12 wheels' layout ---- */

static const char *cu12_site(void) {
    static const char *site;
    if (site) return site;
    const char *s = pth("%s/site-packages-12", th_tmpdir());
    place(real("bin/ptxas"), pth("%s/nvidia/cuda_nvcc/bin/ptxas", s));
    place(real("nvvm/libdevice/libdevice.10.bc"), pth("%s/nvidia/cuda_nvcc/nvvm/libdevice/libdevice.10.bc", s));
    site = s;
    return site;
}

static void test_cu12_layout(void **state) {
    (void)state;
    const char *s12 = cu12_site();
    tk_scene s = {.roots = {s12}, .n_roots = 1, .sources = SRC(CALLER), .parts = 1};
    run_scene(&s, NULL);
    expect_found("ptxas", pth("%s/nvidia/cuda_nvcc/bin/ptxas", s12), CUDALOAD_SOURCE_CALLER, 12);
    expect_found("libdevice", pth("%s/nvidia/cuda_nvcc/nvvm/libdevice/libdevice.10.bc", s12), CUDALOAD_SOURCE_CALLER, 12);
    assert_int_equal(part("nvcc")->status, CUDALOAD_ERROR_NOT_FOUND); /* no CUDA 12 nvcc wheel */
}

static void test_cu12_layout_not_asked(void **state) {
    (void)state;
    const char *s12 = cu12_site();
    const char *env[] = {"CUDALOAD_CUDA_MAJOR=13", NULL};
    tk_scene s = {.roots = {s12}, .n_roots = 1, .sources = SRC(CALLER), .parts = 1};
    run_scene(&s, env);
    static const char *const names[][2] = {{"ptxas", "nvidia/cuda_nvcc/bin/ptxas"},
                                           {"libdevice", "nvidia/cuda_nvcc/nvvm/libdevice/libdevice.10.bc"}};
    for (size_t i = 0; i < 2; i++) {
        const tk_part *p = part(names[i][0]);
        assert_int_equal(p->status, CUDALOAD_ERROR_NOT_FOUND);
        assert_string_equal(p->path, "");
        expect_cand(names[i][0], pth("%s/%s", s12, names[i][1]), CUDALOAD_ERROR_NOT_FOUND, CUDALOAD_REASON_MAJOR_NOT_ASKED, 12, 13);
    }
}

/* Both majors in one root: 13 first; with 12 asked, 13's copy is passed over for 12's. */
static void test_both_majors_in_one_site(void **state) {
    (void)state;
    const char *s = pth("%s/site-packages-both", th_tmpdir());
    place(real("bin/ptxas"), pth("%s/nvidia/cu13/bin/ptxas", s));
    place(real("bin/ptxas"), pth("%s/nvidia/cuda_nvcc/bin/ptxas", s));
    tk_scene sc = {.roots = {s}, .n_roots = 1, .sources = SRC(CALLER), .parts = 1};
    run_scene(&sc, NULL);
    expect_found("ptxas", pth("%s/nvidia/cu13/bin/ptxas", s), CUDALOAD_SOURCE_CALLER, 13);
    const char *env[] = {"CUDALOAD_CUDA_MAJOR=12", NULL};
    run_scene(&sc, env);
    expect_found("ptxas", pth("%s/nvidia/cuda_nvcc/bin/ptxas", s), CUDALOAD_SOURCE_CALLER, 12);
    expect_cand("ptxas", pth("%s/nvidia/cu13/bin/ptxas", s), CUDALOAD_ERROR_NOT_FOUND, CUDALOAD_REASON_MAJOR_NOT_ASKED, 13, 12);
}

/* ---- 4. a toolkit prefix named by CUDA_HOME ---- */

static void test_prefix_parts_from_cuda_home(void **state) {
    (void)state;
    need_trees();
    const char *env[] = {pth("CUDA_HOME=%s", prefix13_link), NULL};
    tk_scene s = {.sources = SRC(CUDA_HOME), .parts = 1};
    run_scene(&s, env);
    /* paths under CUDA_HOME as it is spelled; the major from the prefix's headers */
    expect_found("nvcc", pth("%s/bin/nvcc", prefix13_link), CUDALOAD_SOURCE_CUDA_HOME, 13);
    assert_int_equal(part("nvcc")->cuda_version, 13000);
    expect_found("ptxas", pth("%s/bin/ptxas", prefix13_link), CUDALOAD_SOURCE_CUDA_HOME, 13);
    expect_found("cicc", pth("%s/nvvm/bin/cicc", prefix13_link), CUDALOAD_SOURCE_CUDA_HOME, 13);
    expect_found("libdevice", pth("%s/nvvm/libdevice/libdevice.10.bc", prefix13_link), CUDALOAD_SOURCE_CUDA_HOME, 13);
    expect_found("cudadevrt", pth("%s/lib64/libcudadevrt.a", prefix13_link), CUDALOAD_SOURCE_CUDA_HOME, 13);
    expect_found("cudart_static", pth("%s/lib64/libcudart_static.a", prefix13_link), CUDALOAD_SOURCE_CUDA_HOME, 13);
    /* with every source on, CUDA_HOME still comes before PATH and /usr/local/cuda */
    tk_scene all = {.sources = 0, .parts = 1};
    run_scene(&all, env);
    expect_found("nvcc", pth("%s/bin/nvcc", prefix13_link), CUDALOAD_SOURCE_CUDA_HOME, 13);
    expect_found("cicc", pth("%s/nvvm/bin/cicc", prefix13_link), CUDALOAD_SOURCE_CUDA_HOME, 13);
}

/* ---- 5. the toolkit root made of a pip site ---- */

/* at (in a tree) is the real file: the same file through links (symbolic to the site's, which
 * may be hard links to the real ones). */
static void expect_link_to(const char *at, const char *real_file) {
    struct stat a, b;
    if (stat(at, &a) != 0) fail_msg("%s: missing from the tree (%s)", at, strerror(errno));
    if (stat(real_file, &b) != 0) fail_msg("%s: %s", real_file, strerror(errno));
    if (a.st_dev != b.st_dev || a.st_ino != b.st_ino) fail_msg("%s (resolving to %s) is not %s", at, resolved(at), real_file);
}

static void test_toolkit_root_from_site(void **state) {
    (void)state;
    need_trees();
    const char *cache = th_tmpdir();
    const char *before = listing(site13);
    const char *env[] = {pth("CUDALOAD_CACHE_DIR=%s", cache), NULL};
    tk_scene s = {.roots = {site13}, .n_roots = 1, .sources = SRC(CALLER), .toolkit_calls = 2};
    run_scene(&s, env);
    expect_root(0, CUDALOAD_OK);
    expect_root(1, CUDALOAD_OK);
    assert_true(out->same_pointer);
    assert_true(out->info_same_root); /* cudaload_get_toolkit_info: the same answer */
    assert_int_equal(out->info_status, CUDALOAD_OK);
    const char *root = pth("%s", out->root[0]);
    assert_string_equal(out->root[1], root);
    /* a directory of its own in the cache */
    if (strncmp(root, cache, strlen(cache)) != 0 || root[strlen(cache)] != '/' || strchr(root + strlen(cache) + 1, '/'))
        fail_msg("root %s is not a directory right in the cache %s", root, cache);
    /* the toolkit's layout, linked to the wheels' (the real) files */
    for (size_t i = 0; i < N_CU13; i++) {
        const char *at = pth("%s/%s", root, cu13_files[i].toolkit);
        expect_link_to(at, real(cu13_files[i].toolkit));
        struct stat st;
        if (lstat(at, &st) != 0 || !S_ISLNK(st.st_mode)) fail_msg("%s is not a symbolic link", at);
    }
    expect_link_to(pth("%s/bin/crt/link.stub", root), real("bin/crt/link.stub"));
    expect_link_to(pth("%s/include/cuda_runtime.h", root), real("include/cuda_runtime.h"));
    expect_link_to(pth("%s/include/crt/host_config.h", root), real("include/crt/host_config.h"));
    /* the unversioned library find_library and -lcudart look for */
    expect_link_to(pth("%s/lib/libcudart.so", root), real("lib/libcudart.so.13"));
    /* lib64, where nvcc.profile's -L points, is lib */
    char l64[PATH_MAX];
    ssize_t n = readlink(pth("%s/lib64", root), l64, sizeof l64 - 1);
    assert_true(n > 0);
    l64[n] = 0;
    assert_string_equal(l64, "lib");
    expect_link_to(pth("%s/lib64/libcudadevrt.a", root), real("lib/libcudadevrt.a"));
    /* nothing written into site-packages */
    assert_string_equal(listing(site13), before);

    /* a second process: the same directory, not made again */
    struct stat st1, st2;
    assert_int_equal(stat(root, &st1), 0);
    tk_scene one = {.roots = {site13}, .n_roots = 1, .sources = SRC(CALLER), .toolkit_calls = 1};
    run_scene(&one, env);
    expect_root(0, CUDALOAD_OK);
    assert_string_equal(out->root[0], root);
    assert_int_equal(stat(root, &st2), 0);
    assert_true(st1.st_ino == st2.st_ino && st1.st_dev == st2.st_dev);
    /* one tree in the cache (the makers' temporary directories are gone) */
    const char *ls;
    assert_int_equal(th_sh(&ls, "ls -A '%s' | wc -l", cache), 0);
    assert_int_equal(atoi(ls), 1);
}

/* A tree in the cache whose nvcc is gone (a build environment pip deleted) is removed when
 * another tree is made, and so is a maker's directory that a killed maker left (untouched for
 * more than an hour); a live tree, a maker's directory of a minute ago, and a directory of
 * someone else's, are left. */
static void test_toolkit_root_stale_trees_pruned(void **state) {
    (void)state;
    need_trees();
    const char *t = th_tmpdir();
    const char *cache = pth("%s/cache", t), *gone = pth("%s/site-gone", t), *live = pth("%s/site-live", t);
    make_cu13_site(gone, NULL, NULL);
    make_cu13_site(live, "culibos", NULL); /* another set of parts: another tree */
    const char *env[] = {pth("CUDALOAD_CACHE_DIR=%s", cache), NULL};
    tk_scene a = {.roots = {gone}, .n_roots = 1, .sources = SRC(CALLER), .toolkit_calls = 1};
    run_scene(&a, env);
    expect_root(0, CUDALOAD_OK);
    const char *stale = pth("%s", out->root[0]);
    tk_scene b = {.roots = {live}, .n_roots = 1, .sources = SRC(CALLER), .toolkit_calls = 1};
    run_scene(&b, env);
    expect_root(0, CUDALOAD_OK);
    const char *kept = pth("%s", out->root[0]);
    assert_string_not_equal(stale, kept);
    /* someone else's directory named like a tree */
    write_file(pth("%s/toolkit-0000000000000000/notes.txt", cache), "mine\n", 0644);
    /* the first site's nvcc is gone: its tree is stale */
    assert_int_equal(unlink(pth("%s/nvidia/cu13/bin/nvcc", gone)), 0);
    /* makers' directories: one killed two hours ago, half-way through its links; one of a minute
     * ago (a maker at work); an old one that holds a file of someone else's */
    const char *killed = pth("%s/.toolkit-00000000000000aa.Kx3PqZ", cache);
    const char *working = pth("%s/.toolkit-00000000000000bb.Wm7TzQ", cache);
    const char *foreign = pth("%s/.toolkit-00000000000000cc.old.Fr9LpA", cache);
    const char *dirs[] = {killed, working, foreign};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(mkdir(dirs[i], 0755), 0);
        assert_int_equal(mkdir(pth("%s/bin", dirs[i]), 0755), 0);
        assert_int_equal(symlink(pth("%s/bin/nvcc", kept), pth("%s/bin/nvcc", dirs[i])), 0);
    }
    write_file(pth("%s/notes.txt", foreign), "mine\n", 0644);
    const time_t now = time(NULL);
    const long age[] = {2 * 3600, 60, 2 * 3600};
    for (int i = 0; i < 3; i++) {
        struct timespec ts[2] = {{.tv_sec = now - age[i]}, {.tv_sec = now - age[i]}};
        assert_int_equal(utimensat(AT_FDCWD, dirs[i], ts, 0), 0);
    }
    tk_scene c = {.roots = {site13}, .n_roots = 1, .sources = SRC(CALLER), .toolkit_calls = 1};
    run_scene(&c, env);
    expect_root(0, CUDALOAD_OK);
    assert_false(exists(stale));
    assert_true(exists(pth("%s/bin/nvcc", kept)));
    assert_true(exists(pth("%s/toolkit-0000000000000000/notes.txt", cache)));
    assert_false(exists(killed));
    assert_true(exists(pth("%s/bin/nvcc", working)));
    assert_true(exists(pth("%s/notes.txt", foreign)));
}

/* An explicit dir: made when absent; a non-empty dir that is no tree is refused, untouched; an
 * earlier tree there is replaced by the new one. */
static void test_toolkit_root_explicit_dir(void **state) {
    (void)state;
    need_trees();
    const char *t = th_tmpdir();
    const char *cache = pth("%s/cache", t);
    const char *env[] = {pth("CUDALOAD_CACHE_DIR=%s", cache), NULL};

    const char *dir = pth("%s/tk/cuda", t); /* its parent is absent too */
    tk_scene s = {.roots = {site13}, .n_roots = 1, .sources = SRC(CALLER), .toolkit_calls = 2, .dir = dir};
    run_scene(&s, env);
    expect_root(0, CUDALOAD_OK);
    assert_string_equal(out->root[0], resolved(dir));
    assert_true(out->same_pointer);
    expect_link_to(pth("%s/bin/nvcc", dir), real("bin/nvcc"));
    expect_link_to(pth("%s/nvvm/bin/cicc", dir), real("nvvm/bin/cicc"));
    assert_false(exists(cache)); /* the cache is not used for an explicit dir */

    /* non-empty, no tree: refused and left as it was */
    const char *mine = pth("%s/mine", t);
    write_file(pth("%s/notes.txt", mine), "my notes\n", 0644);
    th_mkdirs(pth("%s/bin", mine));
    const char *before = listing(mine);
    tk_scene m = {.roots = {site13}, .n_roots = 1, .sources = SRC(CALLER), .toolkit_calls = 1, .dir = mine};
    run_scene(&m, env);
    expect_root(0, CUDALOAD_ERROR_INVALID_ARGUMENT);
    assert_string_equal(out->root[0], "");
    assert_string_equal(listing(mine), before);

    /* the earlier tree in dir, made from site13 (with culibos), replaced by one from a site
     * without libculibos.a */
    const char *site2 = pth("%s/site-2", t);
    make_cu13_site(site2, "culibos", NULL);
    assert_true(exists(pth("%s/lib/libculibos.a", dir)));
    tk_scene again = {.roots = {site2}, .n_roots = 1, .sources = SRC(CALLER), .toolkit_calls = 1, .dir = dir};
    run_scene(&again, env);
    expect_root(0, CUDALOAD_OK);
    assert_string_equal(out->root[0], resolved(dir));
    char target[PATH_MAX];
    ssize_t n = readlink(pth("%s/bin/nvcc", dir), target, sizeof target - 1);
    assert_true(n > 0);
    target[n] = 0;
    if (strncmp(target, resolved(site2), strlen(resolved(site2))) != 0)
        fail_msg("%s/bin/nvcc -> %s, want a link into %s", dir, target, site2);
    assert_false(exists(pth("%s/lib/libculibos.a", dir)));
    expect_link_to(pth("%s/lib/libcudart.so", dir), real("lib/libcudart.so.13"));
}

/* ---- 5b. the cached tree: reused only whole, made by one maker at a time ---- */

/* The tree at root has every link of the toolkit's layout, to the real files. */
static void expect_whole_tree(const char *root) {
    for (size_t i = 0; i < N_CU13; i++) expect_link_to(pth("%s/%s", root, cu13_files[i].toolkit), real(cu13_files[i].toolkit));
    expect_link_to(pth("%s/lib/libcudart.so", root), real("lib/libcudart.so.13"));
    expect_link_to(pth("%s/include/cuda_runtime.h", root), real("include/cuda_runtime.h"));
    assert_true(exists(pth("%s/.cudaload-toolkit", root)));
}

/* How many entries dir holds (hidden ones too). */
static int entries(const char *dir) {
    const char *ls;
    if (th_sh(&ls, "ls -A '%s' | wc -l", dir) != 0) fail_msg("cannot list %s", dir);
    return atoi(ls);
}

/* A tree in the cache with its marker but a link missing, or pointing elsewhere (a maker whose
 * temporary directory was emptied under it by another, and renamed in all the same), is not
 * reused: it is made again, in the same place, and the check says why (TREE_INCOMPLETE). One
 * that also holds a file of someone else's is refused and left as it is. */
static void test_toolkit_root_incomplete_tree_not_reused(void **state) {
    (void)state;
    need_trees();
    const char *cache = th_tmpdir();
    const char *env[] = {pth("CUDALOAD_CACHE_DIR=%s", cache), NULL};
    tk_scene s = {.roots = {site13}, .n_roots = 1, .sources = SRC(CALLER), .toolkit_calls = 1};
    run_scene(&s, env);
    expect_root(0, CUDALOAD_OK);
    const char *root = pth("%s", out->root[0]);
    expect_whole_tree(root);

    /* a link missing: made again */
    const char *cicc = pth("%s/nvvm/bin/cicc", root);
    assert_int_equal(unlink(cicc), 0);
    run_scene(&s, env);
    expect_root(0, CUDALOAD_OK);
    assert_string_equal(out->root[0], root);
    expect_whole_tree(root);
    expect_tk_cand(cicc, CUDALOAD_ERROR_NOT_FOUND, CUDALOAD_REASON_TREE_INCOMPLETE, -1, -1);
    assert_int_equal(entries(cache), 1); /* nothing left beside it: no temporary, no old tree */

    /* a link pointing elsewhere: made again */
    const char *ptxas = pth("%s/bin/ptxas", root);
    assert_int_equal(unlink(ptxas), 0);
    th_symlink(real("bin/nvlink"), ptxas);
    run_scene(&s, env);
    expect_root(0, CUDALOAD_OK);
    expect_whole_tree(root);
    expect_tk_cand(ptxas, CUDALOAD_ERROR_NOT_FOUND, CUDALOAD_REASON_TREE_INCOMPLETE, -1, -1);
    assert_int_equal(entries(cache), 1);

    /* whole: reused as it is, with no such candidate */
    struct stat st1, st2;
    assert_int_equal(stat(root, &st1), 0);
    run_scene(&s, env);
    expect_root(0, CUDALOAD_OK);
    assert_int_equal(stat(root, &st2), 0);
    assert_true(st1.st_ino == st2.st_ino && st1.st_dev == st2.st_dev);
    for (int c = 0; c < out->n_tk; c++) assert_int_not_equal(out->tk[c].code, CUDALOAD_REASON_TREE_INCOMPLETE);

    /* a link missing and a file of someone else's: refused, left whole, the reason given */
    assert_int_equal(unlink(cicc), 0);
    write_file(pth("%s/notes.txt", root), "mine\n", 0644);
    const char *before = listing(root);
    run_scene(&s, env);
    expect_root(0, CUDALOAD_ERROR_INVALID_ARGUMENT);
    expect_tk_cand(cicc, CUDALOAD_ERROR_NOT_FOUND, CUDALOAD_REASON_TREE_INCOMPLETE, -1, -1);
    if (!strstr(out->root_error, cicc) || !strstr(out->root_error, "not touched")) fail_msg("the message:\n%s", out->root_error);
    assert_string_equal(listing(root), before);
    assert_int_equal(entries(cache), 1);
}

/* A half-made tree of another maker (a temporary directory of the cache: here named as a
 * maker of this very pid would have named it, as a process of another container sharing $HOME
 * may be) is neither removed nor used; nor is one of another name. */
static void test_toolkit_root_other_makers_temporary_left_alone(void **state) {
    (void)state;
    need_trees();
    const char *t = th_tmpdir();
    const char *first = pth("%s/cache-1", t), *cache = pth("%s/cache-2", t);
    /* the tree's name: a hash of what it holds, the same in every cache */
    const char *env1[] = {pth("CUDALOAD_CACHE_DIR=%s", first), NULL};
    tk_scene s = {.roots = {site13}, .n_roots = 1, .sources = SRC(CALLER), .toolkit_calls = 1};
    run_scene(&s, env1);
    expect_root(0, CUDALOAD_OK);
    const char *name = strrchr(out->root[0], '/') + 1;
    name = pth("%s", name);
    /* others' temporary directories, each with a link */
    const char *other[] = {pth("%s/.%s.1", cache, name), pth("%s/.%s.aB3xYz", cache, name)};
    const char *before[2];
    for (size_t i = 0; i < 2; i++) {
        th_mkdirs(pth("%s/bin", other[i]));
        th_symlink(real("bin/nvcc"), pth("%s/bin/nvcc", other[i]));
        before[i] = listing(other[i]);
    }
    const char *env[] = {pth("CUDALOAD_CACHE_DIR=%s", cache), NULL};
    tk_scene p = s;
    p.plant = pth("%s/.%s", cache, name);
    run_scene(&p, env);
    expect_root(0, CUDALOAD_OK);
    assert_string_equal(out->root[0], pth("%s/%s", cache, name));
    expect_whole_tree(out->root[0]);
    const char *planted = pth("%s", out->planted);
    assert_true(planted[0] != 0);
    const char *dirs[] = {planted, other[0], other[1]};
    for (size_t i = 0; i < 3; i++) {
        if (!exists(pth("%s/bin/nvcc", dirs[i]))) fail_msg("%s: removed or emptied", dirs[i]);
        assert_int_equal(entries(dirs[i]), 1);
        assert_int_equal(entries(pth("%s/bin", dirs[i])), 1);
        assert_false(exists(pth("%s/.cudaload-toolkit", dirs[i])));
        if (i > 0) assert_string_equal(listing(dirs[i]), before[i - 1]);
    }
    /* the tree, and the three left as they were: this maker's own temporary is gone */
    assert_int_equal(entries(cache), 4);
}

/* Two makers at once, each in a PID namespace of its own where it can have one (as root), so
 * that both have the same pid (1), as processes of two containers sharing $HOME may: both
 * answer the same tree, whole, and leave nothing else in the cache. A few rounds, each with an
 * empty cache; both start together (a pipe closed). */
typedef struct race_out {
    int status[2];
    int pid[2];
    char root[2][PATH_MAX];
    char error[2][2048];
} race_out;

static race_out *race;

/* A maker: init, ready (a byte on ready), then cudaload_toolkit_root when go closes. */
static void race_maker(int i, int ready, int go) {
    race->pid[i] = (int)getpid();
    const char *roots[] = {site13};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER), CUDALOAD_FLAG_FIND_ONLY | CUDALOAD_FLAG_DRIVER_OPTIONAL);
    cudaload_status st = cudaload_init(&o);
    char c = 1, buf;
    if (write(ready, &c, 1) != 1) _exit(3);
    while (read(go, &buf, 1) < 0 && errno == EINTR) {
    }
    const char *root = NULL;
    if (st == CUDALOAD_OK) st = cudaload_toolkit_root(NULL, &root);
    race->status[i] = st;
    snprintf(race->root[i], sizeof race->root[i], "%s", root ? root : "");
    if (st != CUDALOAD_OK) snprintf(race->error[i], sizeof race->error[i], "%s", cudaload_last_error());
    fflush(NULL);
    _exit(0);
}

static void race_child(th_result *r, void *arg) {
    (void)arg;
    int ready[2], go[2];
    if (pipe(ready) != 0 || pipe(go) != 0) return;
    pid_t racer[2];
    for (int i = 0; i < 2; i++) {
        racer[i] = fork();
        if (racer[i] < 0) return;
        if (racer[i] > 0) continue;
        close(go[1]);
        close(ready[0]);
        /* a PID namespace: the next child is its pid 1 (not root: an ordinary child, another pid) */
        r->user_int[2 + i] = unshare(CLONE_NEWPID) == 0;
        pid_t maker = fork();
        if (maker < 0) _exit(2);
        if (maker == 0) race_maker(i, ready[1], go[0]);
        int status = 0;
        while (waitpid(maker, &status, 0) < 0 && errno == EINTR) {
        }
        _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 4);
    }
    close(go[0]);
    close(ready[1]);
    char buf[2];
    size_t got = 0;
    while (got < 2) {
        ssize_t n = read(ready[0], buf + got, 2 - got);
        if (n <= 0 && errno != EINTR) break;
        if (n > 0) got += (size_t)n;
    }
    close(go[1]); /* both start */
    for (int i = 0; i < 2; i++) r->user_int[i] = th_wait_or_kill(racer[i], 120);
}

static void test_toolkit_root_concurrent_makers(void **state) {
    (void)state;
    need_trees();
    if (!race) {
        race = mmap(NULL, sizeof *race, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        assert_true(race != MAP_FAILED);
    }
    for (int round = 0; round < 4; round++) {
        const char *cache = pth("%s/cache", th_tmpdir());
        const char *env[] = {pth("CUDALOAD_CACHE_DIR=%s", cache), NULL};
        memset(race, 0, sizeof *race);
        race->status[0] = race->status[1] = -1;
        th_result *r = th_result_new();
        th_run(r, env, race_child, NULL);
        int codes[2] = {r->user_int[0], r->user_int[1]}, same_pid_ns = r->user_int[2] && r->user_int[3];
        th_result_free(r);
        if (round == 0)
            print_message("makers' pids %d and %d%s\n", race->pid[0], race->pid[1],
                          same_pid_ns ? " (each in a PID namespace of its own)" : " (no PID namespace here)");
        for (int i = 0; i < 2; i++) {
            if (codes[i] != 0) fail_msg("round %d: maker %d exited %d", round, i, codes[i]);
            if (race->status[i] != CUDALOAD_OK)
                fail_msg("round %d: maker %d (pid %d): %s\n%s", round, i, race->pid[i],
                         cudaload_status_name((cudaload_status)race->status[i]), race->error[i]);
        }
        assert_string_equal(race->root[0], race->root[1]);
        expect_whole_tree(race->root[0]);
        assert_int_equal(entries(cache), 1); /* the tree alone: neither maker's temporary is left */
    }
}

/* ---- 6. toolkit roots refused ---- */

static void test_toolkit_root_part_missing(void **state) {
    (void)state;
    need_trees();
    const char *t = th_tmpdir();
    const char *site = pth("%s/site-no-cicc", t), *cache = pth("%s/cache", t);
    make_cu13_site(site, "cicc", NULL);
    const char *env[] = {pth("CUDALOAD_CACHE_DIR=%s", cache), NULL};
    tk_scene s = {.roots = {site}, .n_roots = 1, .sources = SRC(CALLER), .toolkit_calls = 2, .parts = 1};
    run_scene(&s, env);
    expect_root(0, CUDALOAD_ERROR_NOT_FOUND);
    expect_root(1, CUDALOAD_ERROR_NOT_FOUND);
    assert_string_equal(out->root[0], "");
    assert_int_equal(part("cicc")->status, CUDALOAD_ERROR_NOT_FOUND);
    assert_false(exists(cache)); /* no tree made */
    /* as data: where cicc would be under nvcc's root, and the parts that are there */
    assert_int_equal(out->info_status, CUDALOAD_ERROR_NOT_FOUND);
    expect_tk_cand(pth("%s/nvidia/cu13/nvvm/bin/cicc", site), CUDALOAD_ERROR_NOT_FOUND, CUDALOAD_REASON_NOT_IN_ROOT, -1, -1);
    expect_tk_cand(pth("%s/nvidia/cu13/bin/ptxas", site), CUDALOAD_OK, CUDALOAD_REASON_FOUND, -1, -1);

    /* cicc in another root: found as a part, but a toolkit comes from nvcc's root only */
    const char *other = pth("%s/site-cicc", t);
    place(real("nvvm/bin/cicc"), pth("%s/nvidia/cu13/nvvm/bin/cicc", other));
    tk_scene two = {.roots = {site, other}, .n_roots = 2, .sources = SRC(CALLER), .toolkit_calls = 1, .parts = 1};
    run_scene(&two, env);
    expect_root(0, CUDALOAD_ERROR_NOT_FOUND);
    expect_found("cicc", pth("%s/nvidia/cu13/nvvm/bin/cicc", other), CUDALOAD_SOURCE_CALLER, 13);
    expect_found("nvcc", pth("%s/nvidia/cu13/bin/nvcc", site), CUDALOAD_SOURCE_CALLER, 13);
    assert_false(exists(cache));
    /* the copy elsewhere is named, as data, and not used */
    expect_tk_cand(pth("%s/nvidia/cu13/nvvm/bin/cicc", other), CUDALOAD_ERROR_NOT_FOUND, CUDALOAD_REASON_OTHER_ROOT, -1, -1);

    /* no nvcc at all */
    tk_scene none = {.roots = {cu12_site()}, .n_roots = 1, .sources = SRC(CALLER), .toolkit_calls = 1};
    run_scene(&none, env);
    expect_root(0, CUDALOAD_ERROR_NOT_FOUND);
}

static void test_toolkit_root_headers_of_another_release(void **state) {
    (void)state;
    const char *t = th_tmpdir();
    const char *site = pth("%s/site-13.5-headers", t), *cache = pth("%s/cache", t);
    make_cu13_site(site, NULL, headers_of_release(13050));
    const char *env[] = {pth("CUDALOAD_CACHE_DIR=%s", cache), NULL};
    tk_scene s = {.roots = {site}, .n_roots = 1, .sources = SRC(CALLER), .toolkit_calls = 1, .parts = 1};
    run_scene(&s, env);
    expect_root(0, CUDALOAD_ERROR_MAJOR_MISMATCH);
    assert_string_equal(out->root[0], "");
    assert_false(exists(cache));
    assert_int_equal(out->info_status, CUDALOAD_ERROR_MAJOR_MISMATCH);
    assert_int_equal(out->info_cuda_version, 13000);
    assert_int_equal(out->info_headers_version, 13050);
    expect_tk_cand(pth("%s/nvidia/cu13/include/cuda_runtime_api.h", site), CUDALOAD_ERROR_MAJOR_MISMATCH,
                   CUDALOAD_REASON_TOOLKIT_MISMATCH, 13050, 13000);
    /* the parts themselves are fine */
    expect_found("nvcc", pth("%s/nvidia/cu13/bin/nvcc", site), CUDALOAD_SOURCE_CALLER, 13);
    assert_int_equal(part("nvcc")->cuda_version, 13000);
}

/* ---- 7. a toolkit prefix is answered as it lies ---- */

static void test_toolkit_root_prefix(void **state) {
    (void)state;
    need_trees();
    const char *t = th_tmpdir();
    const char *cache = pth("%s/cache", t), *dir = pth("%s/unused", t);
    const char *env[] = {pth("CUDA_HOME=%s", prefix13_link), pth("CUDALOAD_CACHE_DIR=%s", cache), NULL};
    const char *before = listing(prefix13);
    tk_scene s = {.sources = SRC(CUDA_HOME), .toolkit_calls = 1};
    run_scene(&s, env);
    expect_root(0, CUDALOAD_OK);
    assert_string_equal(out->root[0], resolved(prefix13));
    assert_false(exists(cache));
    /* with a dir: still the prefix, and the dir is not made */
    tk_scene d = {.sources = SRC(CUDA_HOME), .toolkit_calls = 1, .dir = dir};
    run_scene(&d, env);
    expect_root(0, CUDALOAD_OK);
    assert_string_equal(out->root[0], resolved(prefix13));
    assert_false(exists(dir));
    assert_string_equal(listing(prefix13), before);
    /* a prefix without cicc is no toolkit */
    const char *bare = pth("%s/cuda-no-cicc", t);
    make_prefix(bare);
    assert_int_equal(unlink(pth("%s/nvvm/bin/cicc", bare)), 0);
    const char *env2[] = {pth("CUDA_HOME=%s", bare), pth("CUDALOAD_CACHE_DIR=%s", cache), NULL};
    run_scene(&s, env2);
    expect_root(0, CUDALOAD_ERROR_NOT_FOUND);
}

/* ---- 8. the tree is a working toolkit: nvcc compiles and links with it ---- */

/* PATH without the directories that hold an nvcc: the tree's must be the only one. */
static const char *path_without_nvcc(void) {
    const char *p = getenv("PATH");
    char buf[8192] = "";
    size_t len = 0;
    while (p && *p) {
        size_t n = strcspn(p, ":");
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%.*s", (int)(n < sizeof dir - 6 ? n : sizeof dir - 6), p);
        if (dir[0] == '/' && access(pth("%s/nvcc", dir), X_OK) != 0 && len + n + 2 < sizeof buf)
            len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", len ? ":" : "", dir);
        p += n;
        if (*p == ':') p++;
    }
    return pth("%s", len ? buf : "/usr/bin:/bin");
}

/* Whether the linker's trace (one input file a line) opened file from dir (as nvcc spells it in
 * its -L, TOP/bin/..//lib64/), and from nowhere else. */
static int traced_from(const char *trace, const char *file, const char *dir) {
    int from_dir = 0, elsewhere = 0;
    for (const char *l = trace; *l;) {
        size_t n = strcspn(l, "\n");
        char line[PATH_MAX];
        snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line ? n : sizeof line - 1), l);
        const char *f = strstr(line, file);
        if (f && (f == line || f[-1] == '/') && f[strlen(file)] == 0) {
            if (strncmp(line, dir, strlen(dir)) == 0) from_dir = 1;
            else elsewhere = 1;
        }
        l += n;
        if (*l) l++;
    }
    return from_dir && !elsewhere;
}

static void test_toolkit_root_compiles(void **state) {
    (void)state;
    const char *o;
    if (th_sh(&o, "'%s' --version 2>&1", real("bin/nvcc")) != 0) TH_SKIP("nvcc cannot run here: %.200s", o);
    need_trees();
    const char *t = th_tmpdir();
    const char *env[] = {pth("CUDALOAD_CACHE_DIR=%s/cache", t), NULL};
    tk_scene s = {.roots = {site13}, .n_roots = 1, .sources = SRC(CALLER), .toolkit_calls = 1};
    run_scene(&s, env);
    expect_root(0, CUDALOAD_OK);
    const char *root = pth("%s", out->root[0]);
    const char *src = pth("%s/x.cu", t);
    static const char cu[] = "__global__ void k(int *p) { *p = 1; }\n"
                             "int main(void) { k<<<1, 1>>>(0); return 0; }\n";
    th_write(src, cu, sizeof cu - 1);
    /* no other toolkit on PATH, LIBRARY_PATH or the include paths */
    const char *env_cmd = pth("env -u CUDA_HOME -u CUDA_PATH -u CUDACXX -u LIBRARY_PATH -u CPATH -u C_INCLUDE_PATH "
                              "-u CPLUS_INCLUDE_PATH PATH='%s'",
                              path_without_nvcc());
    /* nvcc takes the tree as its TOP: the tree's profile, not the wheels' directory */
    if (th_sh(&o, "%s '%s/bin/nvcc' --dryrun -arch=sm_75 -o '%s/x' '%s' 2>&1", env_cmd, root, t, src) != 0 ||
        !strstr(o, pth("TOP=%s/bin/..", root)))
        fail_msg("nvcc --dryrun does not take %s as its TOP:\n%s", root, o);
    /* the runtime linked is the tree's lib64 one (the linker's --trace names each archive it
     * opened: a libcudart_static.a elsewhere on the linker's default path must not stand in) */
    if (th_sh(&o, "cd '%s' && %s '%s/bin/nvcc' -arch=sm_75 -o x x.cu -Xlinker --trace 2>&1", t, env_cmd, root) != 0)
        fail_msg("%s/bin/nvcc -arch=sm_75 -o x x.cu failed:\n%s", root, o);
    assert_int_equal(access(pth("%s/x", t), X_OK), 0);
    if (!traced_from(o, "libcudart_static.a", pth("%s/bin/..//lib64/", root))) fail_msg("libcudart_static.a not linked from %s/lib64:\n%s", root, o);
    /* -rdc=true links libcudadevrt.a from there too */
    if (th_sh(&o, "cd '%s' && %s '%s/bin/nvcc' -arch=sm_75 -rdc=true -o xr x.cu -Xlinker --trace 2>&1", t, env_cmd, root) != 0)
        fail_msg("%s/bin/nvcc -arch=sm_75 -rdc=true -o xr x.cu failed:\n%s", root, o);
    assert_int_equal(access(pth("%s/xr", t), X_OK), 0);
    if (!traced_from(o, "libcudadevrt.a", pth("%s/bin/..//lib64/", root))) fail_msg("libcudadevrt.a not linked from %s/lib64:\n%s", root, o);
}

/* ---- 9. the probe ---- */

typedef struct run_out {
    int code;
    char text[65536];
} run_out;

/* The probe with args (NULL-terminated) in a clean environment (PATH=/usr/bin:/bin) plus env;
 * stdout and stderr together in o->text. */
static void run_probe(run_out *o, const char *const *env, const char *const *args) {
    const char *file = pth("%s/out", th_tmpdir());
    int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    assert_true(fd >= 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fd, 1);
        dup2(fd, 2);
        clearenv();
        setenv("PATH", "/usr/bin:/bin", 1);
        for (size_t i = 0; env && env[i]; i++) putenv((char *)env[i]);
        const char *argv[32] = {probe};
        size_t n = 1;
        for (size_t i = 0; args[i] && n < 31; i++) argv[n++] = args[i];
        execv(probe, (char *const *)argv);
        _exit(127);
    }
    close(fd);
    int code = th_wait_or_kill(pid, 120);
    if (code == TH_WAIT_HUNG || code == TH_WAIT_SIGNALED) fail_msg("the probe hung or died (%d)", code);
    o->code = code;
    FILE *f = fopen(file, "r");
    assert_non_null(f);
    size_t n = fread(o->text, 1, sizeof o->text - 1, f);
    o->text[n] = 0;
    fclose(f);
    unlink(file);
}

static void test_probe_parts_and_cuda_root(void **state) {
    (void)state;
    need_trees();
    const char *t = th_tmpdir();
    static run_out o;
    const char *env[] = {"CUDALOAD_SOURCES=caller", pth("CUDALOAD_CACHE_DIR=%s/cache", t), NULL};

    /* --parts nvcc --json: one object, as the library found it */
    const char *json[] = {"--root", site13, "--parts", "nvcc", "--json", NULL};
    run_probe(&o, env, json);
    if (o.code != 0) fail_msg("--parts nvcc --json: exit %d:\n%s", o.code, o.text);
    const char *file = pth("%s/parts.json", t);
    th_write(file, o.text, strlen(o.text));
    const char *py;
    int st = th_sh(&py,
                   "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); p=d[\"parts\"]; "
                   "assert len(p)==1, p; p=p[0]; "
                   "assert (p[\"name\"],p[\"status\"],p[\"path\"],p[\"source\"],p[\"major\"],p[\"cuda_version\"])=="
                   "(\"nvcc\",sys.argv[2],sys.argv[3],sys.argv[4],13,13000), p; "
                   "assert [c[\"reason_code\"] for c in p[\"candidates\"]]==[sys.argv[5]], p' '%s' '%s' '%s' '%s' '%s' 2>&1",
                   file, cudaload_status_name(CUDALOAD_OK), pth("%s/nvidia/cu13/bin/nvcc", site13),
                   cudaload_source_name(CUDALOAD_SOURCE_CALLER), cudaload_reason_name(CUDALOAD_REASON_FOUND));
    if (st != 0) fail_msg("the probe's JSON is not what the library found:\n%s\n%s", py, o.text);

    /* a part asked by name that is missing: exit 1 (the text report too) */
    const char *missing[] = {"--root", site13, "--parts", "nvcc,cuobjdump", NULL};
    run_probe(&o, env, missing);
    if (o.code != 1) fail_msg("--parts nvcc,cuobjdump: exit %d, want 1:\n%s", o.code, o.text);
    assert_non_null(strstr(o.text, pth("%s/nvidia/cu13/bin/nvcc", site13)));
    const char *missing_json[] = {"--root", site13, "--parts", "cuobjdump", "--json", NULL};
    run_probe(&o, env, missing_json);
    assert_int_equal(o.code, 1);

    /* --cuda-root: the tree (exit 0); a relative dir is a usage error (exit 4) */
    const char *root[] = {"--root", site13, "--cuda-root", NULL};
    run_probe(&o, env, root);
    if (o.code != 0) fail_msg("--cuda-root: exit %d:\n%s", o.code, o.text);
    o.text[strcspn(o.text, "\n")] = 0;
    assert_true(exists(pth("%s/bin/nvcc", o.text)));
    const char *rel[] = {"--root", site13, "--cuda-root", "relative/dir", NULL};
    run_probe(&o, env, rel);
    if (o.code != 4) fail_msg("--cuda-root relative/dir: exit %d, want 4:\n%s", o.code, o.text);
    assert_false(exists("relative"));
    /* no toolkit in the roots: exit 1 */
    const char *none[] = {"--root", cu12_site(), "--cuda-root", NULL};
    run_probe(&o, env, none);
    assert_int_equal(o.code, 1);
}

/* ---- files that only look right ---- */

/* A copy of the real fatbinary built for another machine (e_machine EM_AARCH64, 183) and a copy
 * of ptxas cut after 4096 bytes (an interrupted download), both executable: not programs this
 * machine can run. */
static void test_foreign_or_truncated_program_unusable(void **state) {
    (void)state;
    need_trees();
    const char *bad = pth("%s/bad-programs", th_tmpdir());
    const char *fat = pth("%s/nvidia/cu13/bin/fatbinary", bad), *ptxas = pth("%s/nvidia/cu13/bin/ptxas", bad);
    copy_file(real("bin/fatbinary"), fat, 0, 0755);
    int fd = open(fat, O_WRONLY);
    assert_true(fd >= 0);
    static const unsigned char aarch64[2] = {183, 0}; /* e_machine, little-endian, at offset 18 */
    assert_int_equal(pwrite(fd, aarch64, 2, 18), 2);
    close(fd);
    copy_file(real("bin/ptxas"), ptxas, 4096, 0755);
    tk_scene s = {.roots = {bad, site13}, .n_roots = 2, .sources = SRC(CALLER), .parts = 1};
    run_scene(&s, NULL);
    expect_cand("fatbinary", fat, CUDALOAD_ERROR_NOT_FOUND, CUDALOAD_REASON_FILE_UNUSABLE, -1, -1);
    expect_found("fatbinary", pth("%s/nvidia/cu13/bin/fatbinary", site13), CUDALOAD_SOURCE_CALLER, 13);
    expect_cand("ptxas", ptxas, CUDALOAD_ERROR_NOT_FOUND, CUDALOAD_REASON_FILE_UNUSABLE, -1, -1);
    expect_found("ptxas", pth("%s/nvidia/cu13/bin/ptxas", site13), CUDALOAD_SOURCE_CALLER, 13);
}

/* A CUDA_HOME with lib/ and no lib64/ (a conda environment, a toolkit made of the wheels without
 * the lib64 link) still holds the programs under bin/ and nvvm/bin/. */
static void test_prefix_without_lib64(void **state) {
    (void)state;
    const char *t = th_tmpdir();
    const char *prefix = pth("%s/cuda-lib-only", t);
    make_prefix(prefix);
    assert_int_equal(rename(pth("%s/lib64", prefix), pth("%s/lib", prefix)), 0);
    const char *env[] = {pth("CUDA_HOME=%s", prefix), pth("CUDALOAD_CACHE_DIR=%s/cache", t), NULL};
    tk_scene s = {.sources = SRC(CUDA_HOME), .toolkit_calls = 1, .parts = 1};
    run_scene(&s, env);
    expect_found("nvcc", pth("%s/bin/nvcc", prefix), CUDALOAD_SOURCE_CUDA_HOME, 13);
    expect_found("cicc", pth("%s/nvvm/bin/cicc", prefix), CUDALOAD_SOURCE_CUDA_HOME, 13);
    expect_found("cudadevrt", pth("%s/lib/libcudadevrt.a", prefix), CUDALOAD_SOURCE_CUDA_HOME, 13);
    expect_root(0, CUDALOAD_OK);
    assert_string_equal(out->root[0], resolved(prefix));
}

/* An earlier tree in which the user left a file of their own: refused, and left whole (not
 * half removed before the file is met). */
static void test_toolkit_root_tree_with_foreign_file_left_whole(void **state) {
    (void)state;
    need_trees();
    const char *t = th_tmpdir();
    const char *dir = pth("%s/tk", t);
    const char *env[] = {pth("CUDALOAD_CACHE_DIR=%s/cache", t), NULL};
    tk_scene s = {.roots = {site13}, .n_roots = 1, .sources = SRC(CALLER), .toolkit_calls = 1, .dir = dir};
    run_scene(&s, env);
    expect_root(0, CUDALOAD_OK);
    write_file(pth("%s/notes.txt", dir), "mine\n", 0644);
    const char *before = listing(dir);
    run_scene(&s, env);
    expect_root(0, CUDALOAD_ERROR_INVALID_ARGUMENT);
    assert_string_equal(listing(dir), before);
}

/* "#N" names part N; anything after the number is no part's name. */
static void child_part_names(th_result *r, void *arg) {
    (void)arg;
    r->init_status = cudaload_init(NULL);
    static const char *const names[] = {"#abc", "#1x", "# 1", "#1"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        cudaload_part_info info = {.size = sizeof info};
        r->user_int[i] = cudaload_part(names[i], &info);
    }
}

static void test_part_index_names_are_exact(void **state) {
    (void)state;
    th_result *r = th_result_new();
    const char *env[] = {"CUDALOAD_SOURCES=caller", NULL};
    th_run(r, env, child_part_names, NULL);
    assert_int_equal(r->user_int[0], CUDALOAD_ERROR_INVALID_ARGUMENT);
    assert_int_equal(r->user_int[1], CUDALOAD_ERROR_INVALID_ARGUMENT);
    assert_int_equal(r->user_int[2], CUDALOAD_ERROR_INVALID_ARGUMENT);
    assert_int_not_equal(r->user_int[3], CUDALOAD_ERROR_INVALID_ARGUMENT);
    th_result_free(r);
}

/* A name --parts does not know is an error, never an empty report that exits 0. */
static void test_probe_unknown_part_name(void **state) {
    (void)state;
    need_trees();
    static run_out o;
    const char *env[] = {"CUDALOAD_SOURCES=caller", NULL};
    const char *args[] = {"--root", site13, "--parts", "nvccc", NULL};
    run_probe(&o, env, args);
    if (o.code == 0) fail_msg("--parts nvccc: exit 0:\n%s", o.text);
    const char *json[] = {"--root", site13, "--parts", "nvcc,nvccc", "--json", NULL};
    run_probe(&o, env, json);
    if (o.code == 0) fail_msg("--parts nvcc,nvccc --json: exit 0:\n%s", o.text);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cu13_site_every_part),
        cmocka_unit_test(test_cu13_site_beats_the_system),
        cmocka_unit_test(test_wrong_kind_files_unusable),
        cmocka_unit_test(test_wrong_kind_then_good_copy_taken),
        cmocka_unit_test(test_cu12_layout),
        cmocka_unit_test(test_cu12_layout_not_asked),
        cmocka_unit_test(test_both_majors_in_one_site),
        cmocka_unit_test(test_prefix_parts_from_cuda_home),
        cmocka_unit_test(test_toolkit_root_from_site),
        cmocka_unit_test(test_toolkit_root_stale_trees_pruned),
        cmocka_unit_test(test_toolkit_root_explicit_dir),
        cmocka_unit_test(test_toolkit_root_incomplete_tree_not_reused),
        cmocka_unit_test(test_toolkit_root_other_makers_temporary_left_alone),
        cmocka_unit_test(test_toolkit_root_concurrent_makers),
        cmocka_unit_test(test_toolkit_root_part_missing),
        cmocka_unit_test(test_toolkit_root_headers_of_another_release),
        cmocka_unit_test(test_toolkit_root_prefix),
        cmocka_unit_test(test_toolkit_root_compiles),
        cmocka_unit_test(test_probe_parts_and_cuda_root),
        cmocka_unit_test(test_foreign_or_truncated_program_unusable),
        cmocka_unit_test(test_prefix_without_lib64),
        cmocka_unit_test(test_toolkit_root_tree_with_foreign_file_left_whole),
        cmocka_unit_test(test_part_index_names_are_exact),
        cmocka_unit_test(test_probe_unknown_part_name),
    };
    return cmocka_run_group_tests_name("toolkit", tests, setup, NULL);
}
