/* harness.c -- see harness.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

th_result *th_result_new(void) {
    void *p = mmap(NULL, sizeof(th_result), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) fail_msg("mmap of the shared result failed: %s", strerror(errno));
    return p;
}

void th_result_free(th_result *r) { munmap(r, sizeof *r); }

static const char *const th_cleared[] = {
    "CUDALOAD_PATH", "CUDALOAD_CUDART_PATH", "CUDALOAD_CUBLAS_PATH", "CUDALOAD_CUBLASLT_PATH",
    "CUDALOAD_DRIVER_PATH", "CUDALOAD_CUDA_MAJOR", "CUDALOAD_SOURCES", "CUDALOAD_DEBUG",
    "CUDA_HOME", "CUDA_PATH", "CONDA_PREFIX", "VIRTUAL_ENV", "TH_LOAD_CUBLAS",
    "FAKE_CUDA_VERSION", "FAKE_CUDA_DEVICES", "FAKE_CUDA_CC", "FAKE_CUDA_INIT_ERROR",
};

void th_run(th_result *r, const char *const *env, void (*child)(th_result *r, void *arg), void *arg) {
    memset(r, 0, sizeof *r);
    r->init_status = -1;
    r->cublas_status = -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) fail_msg("fork failed: %s", strerror(errno));
    if (pid == 0) {
        for (size_t i = 0; i < sizeof th_cleared / sizeof th_cleared[0]; i++) unsetenv(th_cleared[i]);
        for (size_t i = 0; env && env[i]; i++) {
            const char *eq = strchr(env[i], '=');
            if (!eq) _exit(90);
            char name[256];
            snprintf(name, sizeof name, "%.*s", (int)(eq - env[i]), env[i]);
            setenv(name, eq + 1, 1);
        }
        child(r, arg);
        _exit(0);
    }
    int status = 0;
    for (int waited_ms = 0;; waited_ms += 10) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) break;
        if (w < 0 && errno != EINTR) fail_msg("waitpid failed: %s", strerror(errno));
        if (waited_ms > 120000) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            r->timed_out = 1;
            break;
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    r->exited = WIFEXITED(status);
    r->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r->signaled = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    if (r->timed_out) fail_msg("scenario child hung (killed after 120 s)");
    if (r->signaled) fail_msg("scenario child died of signal %d", r->signaled);
}

int th_count_maps(const char *prefix) {
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return -1;
    char line[PATH_MAX + 256];
    char seen[16][PATH_MAX];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        char *path = strchr(line, '/');
        if (!path) continue;
        path[strcspn(path, "\n")] = 0;
        const char *base = strrchr(path, '/') + 1;
        if (strncmp(base, prefix, strlen(prefix)) != 0) continue;
        int dup = 0;
        for (int i = 0; i < n; i++) dup |= strcmp(seen[i], path) == 0;
        if (!dup && n < 16) snprintf(seen[n++], PATH_MAX, "%s", path);
    }
    fclose(f);
    return n;
}

void th_capture(th_result *r, cudaload_status init_status) {
    r->init_status = init_status;
    snprintf(r->error, sizeof r->error, "%s", cudaload_last_error());
    for (int lib = 0; lib < CUDALOAD_LIB_COUNT_; lib++) {
        cudaload_library_info info = {.size = sizeof info};
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
            snprintf(l->cand[i].path, sizeof l->cand[i].path, "%s", info.candidates[i].path);
            snprintf(l->cand[i].reason, sizeof l->cand[i].reason, "%s", info.candidates[i].reason);
        }
    }
    size_t n = 0;
    const cudaload_root *roots = cudaload_roots(&n);
    r->n_roots = (int)n;
    for (size_t i = 0; i < n && i < TH_MAX_ROOTS; i++) {
        snprintf(r->roots[i], sizeof r->roots[i], "%s", roots[i].path);
        r->root_source[i] = roots[i].source;
    }
    static const char *const prefixes[CUDALOAD_LIB_COUNT_] = {"libcuda.so", "libcudart.so", "libcublasLt.so",
                                                              "libcublas.so."};
    for (int lib = 0; lib < CUDALOAD_LIB_COUNT_; lib++) r->maps_count[lib] = th_count_maps(prefixes[lib]);
}

void th_init_child(th_result *r, void *arg) {
    cudaload_status st = cudaload_init((const cudaload_options *)arg);
    const char *lc = getenv("TH_LOAD_CUBLAS");
    /* keep init's message: the capture below reads the last error */
    char saved[sizeof r->error];
    snprintf(saved, sizeof saved, "%s", cudaload_last_error());
    if (lc && strcmp(lc, "1") == 0) r->cublas_status = cudaload_load_cublas();
    else {
        cudaload_library_info info = {.size = sizeof info};
        cudaload_get_library_info(CUDALOAD_LIB_CUBLAS, &info);
        r->cublas_status = info.status;
    }
    th_capture(r, st);
    if (st != CUDALOAD_OK) snprintf(r->error, sizeof r->error, "%s", saved);
}

static void th_dump(const th_result *r, int lib) {
    const th_lib *l = &r->lib[lib];
    fprintf(stderr, "%s: status %s, path '%s', source %s\n", cudaload_lib_name((cudaload_lib)lib),
            cudaload_status_name((cudaload_status)l->status), l->path, cudaload_source_name((cudaload_source)l->source));
    for (int i = 0; i < l->n_candidates && i < TH_MAX_CANDS; i++)
        fprintf(stderr, "  %s [%s] %s: %s\n", l->cand[i].path, cudaload_source_name((cudaload_source)l->cand[i].source),
                cudaload_status_name((cudaload_status)l->cand[i].result), l->cand[i].reason);
    fprintf(stderr, "init: %s\nmessage:\n%s\n", cudaload_status_name((cudaload_status)r->init_status), r->error);
}

void th_assert_taken(const th_result *r, int lib, const char *path_prefix, int source) {
    const th_lib *l = &r->lib[lib];
    if (l->status != CUDALOAD_OK || strncmp(l->path, path_prefix, strlen(path_prefix)) != 0 || l->source != source) {
        th_dump(r, lib);
        fail_msg("%s: want taken from '%s...' [%s]", cudaload_lib_name((cudaload_lib)lib), path_prefix,
                 cudaload_source_name((cudaload_source)source));
    }
}

int th_find_candidate(const th_result *r, int lib, const char *part) {
    const th_lib *l = &r->lib[lib];
    for (int i = 0; i < l->n_candidates && i < TH_MAX_CANDS; i++)
        if (strstr(l->cand[i].path, part)) return i;
    return -1;
}

static char *th_keep(const char *s) {
    char *p = strdup(s);
    if (!p) fail_msg("out of memory");
    return p;
}

const char *th_fixture(const char *relpath) {
    const char *dir = getenv("CUDALOAD_TEST_FIXTURES");
    if (!dir) fail_msg("CUDALOAD_TEST_FIXTURES is not set: run the tests through `make check`");
    char buf[PATH_MAX];
    snprintf(buf, sizeof buf, "%s/%s", dir, relpath);
    return th_keep(buf);
}

const char *th_fixture_env(const char *key) {
    const char *dir = getenv("CUDALOAD_TEST_FIXTURES");
    if (!dir) fail_msg("CUDALOAD_TEST_FIXTURES is not set: run the tests through `make check`");
    char path[PATH_MAX], line[PATH_MAX + 128];
    snprintf(path, sizeof path, "%s/fixtures.env", dir);
    FILE *f = fopen(path, "r");
    if (!f) fail_msg("cannot read %s: %s", path, strerror(errno));
    size_t kl = strlen(key);
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, key, kl) == 0 && line[kl] == '=') {
            fclose(f);
            line[strcspn(line, "\n")] = 0;
            return th_keep(line + kl + 1);
        }
    }
    fclose(f);
    fail_msg("%s has no %s", path, key);
    return NULL;
}

char *th_tmpdir(void) {
    const char *base = getenv("TMPDIR");
    char tmpl[PATH_MAX];
    snprintf(tmpl, sizeof tmpl, "%s/cudaload-test-XXXXXX", base && base[0] == '/' ? base : "/tmp");
    if (!mkdtemp(tmpl)) fail_msg("mkdtemp failed: %s", strerror(errno));
    return th_keep(tmpl);
}

void th_mkdirs(const char *path) {
    char buf[PATH_MAX];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(buf, 0755) != 0 && errno != EEXIST) fail_msg("mkdir %s: %s", buf, strerror(errno));
        *p = '/';
    }
    if (mkdir(buf, 0755) != 0 && errno != EEXIST) fail_msg("mkdir %s: %s", buf, strerror(errno));
}

void th_symlink(const char *target, const char *linkpath) {
    unlink(linkpath);
    if (symlink(target, linkpath) != 0) fail_msg("symlink %s -> %s: %s", linkpath, target, strerror(errno));
}

void th_copy(const char *src, const char *dst) {
    int in = open(src, O_RDONLY);
    if (in < 0) fail_msg("open %s: %s", src, strerror(errno));
    int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0755);
    if (out < 0) fail_msg("create %s: %s", dst, strerror(errno));
    char buf[1 << 16];
    ssize_t n;
    while ((n = read(in, buf, sizeof buf)) > 0)
        if (write(out, buf, (size_t)n) != n) fail_msg("write %s: %s", dst, strerror(errno));
    close(in);
    if (close(out) != 0 || n < 0) fail_msg("copy %s -> %s failed", src, dst);
}

void th_write(const char *path, const void *data, size_t n) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) fail_msg("create %s: %s", path, strerror(errno));
    if (n && write(fd, data, n) != (ssize_t)n) fail_msg("write %s: %s", path, strerror(errno));
    close(fd);
}
