/* SPDX-License-Identifier: Apache-2.0 */
/* harness.c -- see harness.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* environ, mkdtemp, setenv, strdup with -std=c11 */
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

extern char **environ;

/* Set in a scenario child: the parent-side entry points stop a child that came back into
 * the test runner (a cmocka assertion failed in its function, which longjmps). */
static int th_in_child;

static void th_check_not_child(const char *what) {
    if (!th_in_child) return;
    fprintf(stderr, "harness: %s called inside a scenario child: the child left its function through a failed "
                    "cmocka assertion or a signal cmocka caught (child functions must record into th_result and "
                    "return); stopping it\n",
            what);
    _exit(TH_EXIT_ESCAPED);
}

th_result *th_result_new(void) {
    th_check_not_child("th_result_new");
    void *p = mmap(NULL, sizeof(th_result), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) fail_msg("mmap of the shared result failed: %s", strerror(errno));
    return p;
}

void th_result_free(th_result *r) {
    if (r) munmap(r, sizeof *r);
}

/* Variables that steer the search or the fake driver, besides every CUDALOAD_* but the test
 * suite's own (CUDALOAD_TEST_*, CUDALOAD_GPU_SITE: never read by the library). */
static const char *const th_cleared[] = {
    "CUDA_HOME", "CUDA_PATH", "CONDA_PREFIX", "VIRTUAL_ENV", "TH_LOAD_CUBLAS",
};

static int th_clear_by_prefix(void) {
    for (char **e = environ; e && *e; e++) {
        int ours = strncmp(*e, "CUDALOAD_", 9) == 0 && strncmp(*e, "CUDALOAD_TEST_", 14) != 0 &&
                   strncmp(*e, "CUDALOAD_GPU_SITE=", 18) != 0;
        ours |= strncmp(*e, "FAKE_CUDA_", 10) == 0;
        if (!ours) continue;
        char name[256];
        size_t n = strcspn(*e, "=");
        snprintf(name, sizeof name, "%.*s", (int)(n < sizeof name ? n : sizeof name - 1), *e);
        unsetenv(name); /* changes environ: the caller scans again */
        return 1;
    }
    return 0;
}

static void th_child_env(const char *const *env) {
    while (th_clear_by_prefix()) {
    }
    for (size_t i = 0; i < sizeof th_cleared / sizeof th_cleared[0]; i++) unsetenv(th_cleared[i]);
    for (size_t i = 0; env && env[i]; i++) {
        const char *eq = strchr(env[i], '=');
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(eq - env[i]), env[i]);
        setenv(name, eq + 1, 1);
    }
}

static double th_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void th_run_raw(th_result *r, const char *const *env, void (*child)(th_result *r, void *arg), void *arg) {
    th_check_not_child("th_run");
    for (size_t i = 0; env && env[i]; i++) {
        const char *eq = strchr(env[i], '=');
        if (!eq || eq == env[i] || eq - env[i] >= 255) fail_msg("th_run: environment entry '%s' is not K=V", env[i]);
    }
    const char *t = getenv("TH_TIMEOUT_S");
    int timeout_s = t && atoi(t) > 0 ? atoi(t) : TH_TIMEOUT_S;

    memset(r, 0, sizeof *r);
    r->init_status = -1;
    r->cublas_status = -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) fail_msg("fork failed: %s", strerror(errno));
    if (pid == 0) {
        th_in_child = 1;
#if !defined(__SANITIZE_ADDRESS__)
        /* cmocka catches these in the test runner and longjmps back into it: a crash in the
         * child would pass for a failed assertion. Let them end the child, for the parent to
         * report. (Under ASan, its handler was replaced by cmocka's anyway: leave them.) */
        static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGSYS};
        for (size_t i = 0; i < sizeof crash_signals / sizeof crash_signals[0]; i++) signal(crash_signals[i], SIG_DFL);
#endif
        th_child_env(env);
        child(r, arg);
        fflush(NULL);
        _exit(0);
    }
    int status = 0;
    double deadline = th_now() + timeout_s;
    long sleep_ns = 1000 * 1000; /* 1 ms, doubling to 20 ms */
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) break;
        if (w < 0 && errno != EINTR) fail_msg("waitpid failed: %s", strerror(errno));
        if (th_now() > deadline) {
            kill(pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
            r->timed_out = 1;
            break;
        }
        struct timespec ts = {0, sleep_ns};
        nanosleep(&ts, NULL);
        if (sleep_ns < 20 * 1000 * 1000) sleep_ns *= 2;
    }
    r->exited = WIFEXITED(status);
    r->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r->signaled = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

void th_run(th_result *r, const char *const *env, void (*child)(th_result *r, void *arg), void *arg) {
    th_run_raw(r, env, child, arg);
    const char *t = getenv("TH_TIMEOUT_S");
    if (r->timed_out)
        fail_msg("scenario child hung: killed after %d s (TH_TIMEOUT_S); init status %d; message:\n%s",
                 t && atoi(t) > 0 ? atoi(t) : TH_TIMEOUT_S, r->init_status, r->error);
    if (r->signaled)
        fail_msg("scenario child died of signal %d (%s); init status %d; message:\n%s", r->signaled,
                 strsignal(r->signaled), r->init_status, r->error);
    if (r->exited && r->exit_code == TH_EXIT_ESCAPED)
        fail_msg("scenario child failed a cmocka assertion inside its function (see its output above): exit code %d",
                 TH_EXIT_ESCAPED);
}

int th_count_maps(const char *prefix) {
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return -1;
    char line[PATH_MAX + 256];
    static char seen[64][PATH_MAX]; /* static: keep a child's small stack free */
    int n = 0;
    size_t pl = strlen(prefix);
    while (fgets(line, sizeof line, f)) {
        char *path = strchr(line, '/');
        if (!path) continue;
        path[strcspn(path, "\n")] = 0;
        const char *base = strrchr(path, '/') + 1;
        if (strncmp(base, prefix, pl) != 0) continue;
        int dup = 0;
        for (int i = 0; i < n && !dup; i++) dup = strcmp(seen[i], path) == 0;
        if (!dup && n < 64) snprintf(seen[n++], PATH_MAX, "%s", path);
    }
    fclose(f);
    return n;
}

void th_capture(th_result *r, cudaload_status init_status) {
    r->init_status = init_status;
    snprintf(r->error, sizeof r->error, "%s", cudaload_last_error());
    for (int lib = 0; lib < CUDALOAD_LIB_COUNT_; lib++) {
        cudaload_library_info info;
        memset(&info, 0, sizeof info);
        info.size = sizeof info;
        th_lib *l = &r->lib[lib];
        memset(l, 0, sizeof *l);
        if (cudaload_get_library_info((cudaload_lib)lib, &info) != CUDALOAD_OK) {
            l->status = -1;
            continue;
        }
        l->status = info.status;
        l->loaded = info.loaded;
        l->source = info.source;
        l->major = info.major;
        l->version = info.version;
        l->already_loaded = info.already_loaded;
        snprintf(l->path, sizeof l->path, "%s", info.path ? info.path : "");
        snprintf(l->soname, sizeof l->soname, "%s", info.soname ? info.soname : "");
        snprintf(l->branch, sizeof l->branch, "%s", info.driver_branch ? info.driver_branch : "");
        l->n_candidates = (int)info.n_candidates;
        for (size_t i = 0; i < info.n_candidates && i < TH_MAX_CANDS; i++) {
            l->cand[i].result = info.candidates[i].result;
            l->cand[i].source = info.candidates[i].source;
            snprintf(l->cand[i].path, sizeof l->cand[i].path, "%s",
                     info.candidates[i].path ? info.candidates[i].path : "");
            snprintf(l->cand[i].reason, sizeof l->cand[i].reason, "%s",
                     info.candidates[i].reason ? info.candidates[i].reason : "");
            if (info.details) {
                l->cand[i].code = info.details[i].reason;
                l->cand[i].major = info.details[i].major;
                l->cand[i].value = info.details[i].value;
                l->cand[i].needed = info.details[i].needed;
                snprintf(l->cand[i].text, sizeof l->cand[i].text, "%s", info.details[i].text ? info.details[i].text : "");
            }
        }
    }
    size_t n = 0;
    const cudaload_root *roots = cudaload_roots(&n);
    r->n_roots = (int)n;
    for (size_t i = 0; roots && i < n && i < TH_MAX_ROOTS; i++) {
        snprintf(r->roots[i], sizeof r->roots[i], "%s", roots[i].path ? roots[i].path : "");
        r->root_source[i] = roots[i].source;
    }
    static const char *const prefixes[CUDALOAD_LIB_COUNT_] = {"libcuda.so", "libcudart.so", "libcublasLt.so",
                                                              "libcublas.so."};
    for (int lib = 0; lib < CUDALOAD_LIB_COUNT_; lib++) r->maps_count[lib] = th_count_maps(prefixes[lib]);
}

void th_init_child(th_result *r, void *arg) {
    const cudaload_options *o = arg;
    cudaload_status st = cudaload_init(o);
    /* keep init's message: loading cuBLAS and the capture below replace the last error */
    static char saved[sizeof r->error];
    snprintf(saved, sizeof saved, "%s", cudaload_last_error());
    int flag = o && o->size >= offsetof(cudaload_options, flags) + sizeof o->flags &&
               (o->flags & CUDALOAD_FLAG_LOAD_CUBLAS) && st == CUDALOAD_OK;
    const char *lc = getenv("TH_LOAD_CUBLAS");
    if (flag || (lc && strcmp(lc, "1") == 0)) {
        r->cublas_status = cudaload_load_cublas();
    } else {
        cudaload_library_info info;
        memset(&info, 0, sizeof info);
        info.size = sizeof info;
        cudaload_get_library_info(CUDALOAD_LIB_CUBLAS, &info);
        r->cublas_status = info.status;
    }
    th_capture(r, st);
    if (st != CUDALOAD_OK) snprintf(r->error, sizeof r->error, "%s", saved);
}

static void th_dump(const th_result *r, int lib) {
    const th_lib *l = &r->lib[lib];
    fprintf(stderr, "%s: status %s, path '%s', source %s, %d candidate(s):\n", cudaload_lib_name((cudaload_lib)lib),
            l->status < 0 ? "(no info)" : cudaload_status_name((cudaload_status)l->status), l->path,
            cudaload_source_name((cudaload_source)l->source), l->n_candidates);
    for (int i = 0; i < l->n_candidates && i < TH_MAX_CANDS; i++)
        fprintf(stderr, "  %s [%s] %s: %s\n", l->cand[i].path, cudaload_source_name((cudaload_source)l->cand[i].source),
                cudaload_status_name((cudaload_status)l->cand[i].result), l->cand[i].reason);
    fprintf(stderr, "roots:\n");
    for (int i = 0; i < r->n_roots && i < TH_MAX_ROOTS; i++)
        fprintf(stderr, "  %s [%s]\n", r->roots[i], cudaload_source_name((cudaload_source)r->root_source[i]));
    fprintf(stderr, "child: exited %d code %d signal %d; init: %s\nmessage:\n%s\n", r->exited, r->exit_code,
            r->signaled, r->init_status < 0 ? "(not called)" : cudaload_status_name((cudaload_status)r->init_status),
            r->error);
}

void th_assert_taken(const th_result *r, int lib, const char *path_prefix, int source) {
    if (lib < 0 || lib >= CUDALOAD_LIB_COUNT_) fail_msg("th_assert_taken: bad lib %d", lib);
    const th_lib *l = &r->lib[lib];
    if (l->status != CUDALOAD_OK || strncmp(l->path, path_prefix, strlen(path_prefix)) != 0 || l->source != source) {
        th_dump(r, lib);
        fail_msg("%s: want taken from '%s...' [%s], got %s '%s' [%s]", cudaload_lib_name((cudaload_lib)lib),
                 path_prefix, cudaload_source_name((cudaload_source)source),
                 l->status < 0 ? "(no info)" : cudaload_status_name((cudaload_status)l->status), l->path,
                 cudaload_source_name((cudaload_source)l->source));
    }
}

int th_find_candidate(const th_result *r, int lib, const char *part) {
    if (lib < 0 || lib >= CUDALOAD_LIB_COUNT_) return -1;
    const th_lib *l = &r->lib[lib];
    for (int i = 0; i < l->n_candidates && i < TH_MAX_CANDS; i++)
        if (strstr(l->cand[i].path, part)) return i;
    return -1;
}

/* Strings handed out for the life of the test process, freed at exit (valgrind-clean). */
static char **th_kept;
static size_t th_n_kept;
static void th_free_kept(void) {
    for (size_t i = 0; i < th_n_kept; i++) free(th_kept[i]);
    free(th_kept);
    th_kept = NULL;
    th_n_kept = 0;
}

static char *th_keep(const char *s) {
    char *p = strdup(s);
    char **list = realloc(th_kept, (th_n_kept + 1) * sizeof *list);
    if (!p || !list) fail_msg("out of memory");
    if (!th_kept) atexit(th_free_kept);
    th_kept = list;
    th_kept[th_n_kept++] = p;
    return p;
}

const char *th_fixture(const char *relpath) {
    const char *dir = getenv("CUDALOAD_TEST_FIXTURES");
    if (!dir || dir[0] != '/')
        fail_msg("CUDALOAD_TEST_FIXTURES is not set to an absolute dir: run the tests through `make check`");
    char buf[PATH_MAX];
    snprintf(buf, sizeof buf, "%s/%s", dir, relpath);
    return th_keep(buf);
}

const char *th_fixture_env(const char *key) {
    const char *dir = getenv("CUDALOAD_TEST_FIXTURES");
    if (!dir || dir[0] != '/')
        fail_msg("CUDALOAD_TEST_FIXTURES is not set to an absolute dir: run the tests through `make check`");
    char path[PATH_MAX], line[PATH_MAX + 128];
    snprintf(path, sizeof path, "%s/fixtures.env", dir);
    FILE *f = fopen(path, "r");
    if (!f) fail_msg("cannot read %s: %s (run tests/fixtures.sh %s)", path, strerror(errno), dir);
    size_t kl = strlen(key);
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, key, kl) == 0 && line[kl] == '=') {
            fclose(f);
            line[strcspn(line, "\n")] = 0;
            return th_keep(line + kl + 1);
        }
    }
    fclose(f);
    fail_msg("%s has no %s (rerun tests/fixtures.sh %s)", path, key, dir);
    return NULL;
}

/* ---- temp dirs: removed at exit by the process that made them ---- */

struct th_tmp_entry {
    char *path;
    pid_t owner;
};
static struct th_tmp_entry *th_tmp;
static size_t th_n_tmp;

/* rm -rf, making unreadable or unsearchable directories (tests chmod them 0) removable. */
static void th_rm_rf(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0) return;
    if (S_ISDIR(st.st_mode)) {
        chmod(path, 0700);
        DIR *d = opendir(path);
        if (d) {
            struct dirent *e;
            while ((e = readdir(d))) {
                if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
                char sub[PATH_MAX];
                if (snprintf(sub, sizeof sub, "%s/%s", path, e->d_name) < (int)sizeof sub) th_rm_rf(sub);
            }
            closedir(d);
        }
        rmdir(path);
    } else {
        unlink(path);
    }
}

/* At exit: each process removes the temp dirs it made itself (a forked child inherits the
 * list and this handler, and must not remove its parent's). */
static void th_remove_tmp(void) {
    const char *keep = getenv("TH_KEEP_TMP");
    int keep_all = keep && strcmp(keep, "1") == 0;
    for (size_t i = 0; i < th_n_tmp; i++) {
        if (th_tmp[i].owner == getpid() && !keep_all) th_rm_rf(th_tmp[i].path);
        free(th_tmp[i].path);
    }
    free(th_tmp);
    th_tmp = NULL;
    th_n_tmp = 0;
}

char *th_tmpdir(void) {
    static int registered;
    const char *base = getenv("TMPDIR");
    char tmpl[PATH_MAX];
    snprintf(tmpl, sizeof tmpl, "%s/cudaload-test-XXXXXX", base && base[0] == '/' ? base : "/tmp");
    if (!mkdtemp(tmpl)) fail_msg("mkdtemp %s failed: %s", tmpl, strerror(errno));
    char *mine = strdup(tmpl), *theirs = strdup(tmpl);
    struct th_tmp_entry *list = realloc(th_tmp, (th_n_tmp + 1) * sizeof *list);
    if (!mine || !theirs || !list) fail_msg("out of memory");
    if (!registered) {
        registered = 1;
        atexit(th_remove_tmp);
    }
    th_tmp = list;
    th_tmp[th_n_tmp].path = mine;
    th_tmp[th_n_tmp].owner = getpid();
    th_n_tmp++;
    return theirs; /* the caller's to free (or to keep: tests/lsan.supp names th_tmpdir) */
}

void th_mkdirs(const char *path) {
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) fail_msg("mkdir: path too long: %s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(buf, 0755) != 0 && errno != EEXIST) fail_msg("mkdir %s: %s", buf, strerror(errno));
        *p = '/';
    }
    if (mkdir(buf, 0755) != 0 && errno != EEXIST) fail_msg("mkdir %s: %s", buf, strerror(errno));
    struct stat st;
    if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode)) fail_msg("mkdir %s: exists and is not a directory", buf);
}

void th_symlink(const char *target, const char *linkpath) {
    if (unlink(linkpath) != 0 && errno != ENOENT) fail_msg("unlink %s: %s", linkpath, strerror(errno));
    if (symlink(target, linkpath) != 0) fail_msg("symlink %s -> %s: %s", linkpath, target, strerror(errno));
}

void th_copy(const char *src, const char *dst) {
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0) fail_msg("copy: open %s: %s", src, strerror(errno));
    int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
    if (out < 0) {
        int e = errno;
        close(in);
        fail_msg("copy: create %s: %s", dst, strerror(e));
    }
    static char buf[1 << 16];
    ssize_t n;
    while ((n = read(in, buf, sizeof buf)) > 0) {
        for (ssize_t off = 0; off < n;) {
            ssize_t w = write(out, buf + off, (size_t)(n - off));
            if (w < 0 && errno == EINTR) continue;
            if (w < 0) fail_msg("copy: write %s: %s", dst, strerror(errno));
            off += w;
        }
    }
    int read_errno = n < 0 ? errno : 0;
    close(in);
    if (close(out) != 0 || read_errno)
        fail_msg("copy %s -> %s failed: %s", src, dst, strerror(read_errno ? read_errno : errno));
}

void th_write(const char *path, const void *data, size_t n) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) fail_msg("write: create %s: %s", path, strerror(errno));
    const char *p = data;
    for (size_t off = 0; off < n;) {
        ssize_t w = write(fd, p + off, n - off);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) fail_msg("write %s: %s", path, strerror(errno));
        off += (size_t)w;
    }
    if (close(fd) != 0) fail_msg("write: close %s: %s", path, strerror(errno));
}

cudaload_options th_opts(const char *const *roots, size_t n, unsigned sources, unsigned flags) {
    cudaload_options o;
    cudaload_options_init(&o);
    o.roots = roots;
    o.n_roots = n;
    o.sources = sources;
    o.flags = flags;
    return o;
}

const char *th_require_build(int fixtures) {
    const char *b = getenv("CUDALOAD_TEST_BUILD");
    if (!b || (fixtures && !getenv("CUDALOAD_TEST_FIXTURES"))) {
        fprintf(stderr, "run through `make check` (CUDALOAD_TEST_BUILD%s unset)\n",
                fixtures ? " or CUDALOAD_TEST_FIXTURES" : "");
        return NULL;
    }
    return b;
}

const char *th_cuda_home(void) {
    static char home[PATH_MAX];
    const char *h = getenv("CUDA_HOME");
    if (!home[0]) snprintf(home, sizeof home, "%s", h && h[0] == '/' ? h : "/usr/local/cuda");
    return home;
}

const char *th_driver_stub(void) {
    static char stub[PATH_MAX + 32];
    snprintf(stub, sizeof stub, "%s/lib64/stubs/libcuda.so", th_cuda_home());
    return access(stub, R_OK) == 0 ? stub : NULL;
}

const char *th_fake_driver_env(void) {
    static char env[PATH_MAX + 64];
    const char *b = getenv("CUDALOAD_TEST_BUILD");
    if (!env[0] && b) snprintf(env, sizeof env, "CUDALOAD_DRIVER_PATH=%s/fake/libcuda.so.1", b);
    return env;
}

int th_wait_or_kill(int pid, int timeout_s) {
    int st = 0, waited = 0;
    for (int i = 0; i < timeout_s * 10 && !(waited = waitpid(pid, &st, WNOHANG) == pid); i++) {
        struct timespec w = {0, 100 * 1000000L};
        nanosleep(&w, NULL);
    }
    if (!waited) {
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
        return TH_WAIT_HUNG;
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : TH_WAIT_SIGNALED;
}

/* th_loader_resolves' child: dlopen(arg) and the realpath of what the loader mapped. */
static void th_resolve_child(th_result *r, void *arg) {
    void *h = dlopen((const char *)arg, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(r->user, sizeof r->user, "%s", dlerror());
        return;
    }
    struct link_map *lm = NULL;
    char *real = dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm ? realpath(lm->l_name, NULL) : NULL;
    snprintf(r->user, sizeof r->user, "%s", real ? real : "");
    r->user_int[0] = real != NULL;
    free(real);
}

int th_loader_resolves(const char *soname, char *out, size_t n) {
    th_result *r = th_result_new();
    th_run(r, NULL, th_resolve_child, (void *)soname);
    int ok = r->user_int[0];
    snprintf(out, n, "%s", r->user);
    th_result_free(r);
    return ok;
}

int th_gpu_init(char *why, size_t n) {
    cudaload_options o;
    cudaload_options_init(&o);
    const char *site = getenv("CUDALOAD_GPU_SITE");
    const char *roots[] = {site};
    if (site && site[0]) {
        o.roots = roots;
        o.n_roots = 1;
    }
    int ndev = 0;
    why[0] = 0;
    if (cudaload_init(&o) != CUDALOAD_OK || cudaload_device_count(&ndev) != CUDALOAD_OK || ndev < 1)
        snprintf(why, n, "no usable GPU: %s", cudaload_last_error());
    return ndev;
}

int th_sh(const char **out, const char *fmt, ...) {
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    if (len < 0 || (size_t)len >= sizeof cmd) fail_msg("th_sh: command longer than %zu bytes", sizeof cmd);
    static char buf[65536];
    FILE *p = popen(cmd, "r");
    size_t n = p ? fread(buf, 1, sizeof buf - 1, p) : 0;
    buf[n] = 0;
    int st = p ? pclose(p) : -1;
    if (out) *out = buf;
    return st == -1 ? -1 : WEXITSTATUS(st);
}

int th_make_install(const char *build, const char *prefix, char *top, size_t top_size) {
    /* the make below is our own: under `make -j N check` it would otherwise see the parent's
     * jobserver without its descriptors and warn on stderr */
    unsetenv("MAKEFLAGS");
    unsetenv("MFLAGS");
    const char *t = getenv("CUDALOAD_TEST_TOP");
    if (t && *t)
        snprintf(top, top_size, "%s", t);
    else
        snprintf(top, top_size, "%s/..", build);
    const char *out;
    if (th_sh(&out, "rm -rf '%s' && make -s -C '%s' B='%s' install PREFIX='%s' 2>&1", prefix, top, build, prefix) != 0) {
        fprintf(stderr, "make install failed:\n%s\n", out);
        return -1;
    }
    return 0;
}
