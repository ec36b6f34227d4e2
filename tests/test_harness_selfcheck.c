/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_harness_selfcheck.c -- tests of the test harness itself (tests/harness.c), with child
 * functions that do not use libcudaload: the environment a scenario child sees, exit codes,
 * a crash and a hang reported as such, a cmocka assertion failing inside a child, the
 * /proc/self/maps count, the fixture lookups and the small-tree helpers.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* setenv, strdup, readlink, lstat, clock_gettime with -std=c11 */
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

/* ---- th_run: the child's environment ---- */

static const char *const env_names[] = {
    "CUDALOAD_PATH", "CUDALOAD_BACKEND", "CUDALOAD_SOMETHING_NEW", "CUDALOAD_TEST_KEEP", "CUDALOAD_GPU_SITE",
    "CUDA_HOME", "CUDA_PATH", "CONDA_PREFIX", "VIRTUAL_ENV", "FAKE_CUDA_VERSION", "TH_LOAD_CUBLAS", "TH_SET", "TH_EQ",
    "TH_EMPTY", "TH_SELFCHECK_UNRELATED",
};
#define N_ENV_NAMES (sizeof env_names / sizeof env_names[0])

/* Records, for each name, whether it is set (user_int[i]) and its value (user, '\n'-separated). */
static void child_env(th_result *r, void *arg) {
    (void)arg;
    size_t off = 0;
    for (size_t i = 0; i < N_ENV_NAMES; i++) {
        const char *v = getenv(env_names[i]);
        r->user_int[i] = v != NULL;
        off += (size_t)snprintf(r->user + off, sizeof r->user - off, "%s\n", v ? v : "");
    }
}

/* The value the child recorded for env_names[i]. */
static const char *child_value(const th_result *r, size_t i, char *buf, size_t n) {
    const char *p = r->user;
    for (size_t k = 0; k < i; k++) p = strchr(p, '\n') + 1;
    snprintf(buf, n, "%.*s", (int)strcspn(p, "\n"), p);
    return buf;
}

static void test_env_cleared_then_applied(void **state) {
    (void)state;
    /* what a developer's shell might hold */
    setenv("CUDALOAD_PATH", "/parent/lib", 1);
    setenv("CUDALOAD_BACKEND", "cublas", 1);
    setenv("CUDALOAD_SOMETHING_NEW", "1", 1);
    setenv("CUDALOAD_TEST_KEEP", "kept", 1);
    setenv("CUDALOAD_GPU_SITE", "/site", 1);
    setenv("CUDA_HOME", "/parent/cuda", 1);
    setenv("CONDA_PREFIX", "/parent/conda", 1);
    setenv("VIRTUAL_ENV", "/parent/venv", 1);
    setenv("FAKE_CUDA_VERSION", "11000", 1);
    setenv("TH_LOAD_CUBLAS", "1", 1);
    setenv("TH_SELFCHECK_UNRELATED", "stays", 1);
    const char *env[] = {"TH_SET=1", "CUDA_PATH=/scenario/cuda", "TH_EQ=a=b", "TH_EMPTY=", "FAKE_CUDA_VERSION=12040",
                         NULL};
    th_result *r = th_result_new();
    th_run(r, env, child_env, NULL);
    assert_int_equal(r->exited, 1);
    assert_int_equal(r->exit_code, 0);
    assert_int_equal(r->signaled, 0);
    assert_int_equal(r->timed_out, 0);
    assert_int_equal(r->init_status, -1); /* th_run clears the result; nothing set it */
    struct {
        const char *name;
        int set;
        const char *value;
    } want[] = {
        {"CUDALOAD_PATH", 0, ""},          {"CUDALOAD_BACKEND", 0, ""},
        {"CUDALOAD_SOMETHING_NEW", 0, ""}, {"CUDALOAD_TEST_KEEP", 1, "kept"},
        {"CUDALOAD_GPU_SITE", 1, "/site"},
        {"CUDA_HOME", 0, ""},              {"CUDA_PATH", 1, "/scenario/cuda"},
        {"CONDA_PREFIX", 0, ""},           {"VIRTUAL_ENV", 0, ""},
        {"FAKE_CUDA_VERSION", 1, "12040"}, {"TH_LOAD_CUBLAS", 0, ""},
        {"TH_SET", 1, "1"},                {"TH_EQ", 1, "a=b"},
        {"TH_EMPTY", 1, ""},               {"TH_SELFCHECK_UNRELATED", 1, "stays"},
    };
    assert_int_equal(sizeof want / sizeof want[0], N_ENV_NAMES);
    for (size_t i = 0; i < N_ENV_NAMES; i++) {
        char v[256];
        assert_string_equal(env_names[i], want[i].name);
        if (r->user_int[i] != want[i].set || strcmp(child_value(r, i, v, sizeof v), want[i].value) != 0)
            fail_msg("%s in the child: set %d '%s', want set %d '%s'", want[i].name, r->user_int[i], v, want[i].set,
                     want[i].value);
    }
    /* the parent's environment is untouched */
    assert_string_equal(getenv("CUDALOAD_PATH"), "/parent/lib");
    assert_null(getenv("TH_SET"));
    /* NULL env: only the clearing */
    th_run(r, NULL, child_env, NULL);
    assert_int_equal(r->user_int[0], 0);
    assert_int_equal(r->user_int[3], 1);
    for (size_t i = 0; i < N_ENV_NAMES; i++) unsetenv(env_names[i]);
    th_result_free(r);
}

/* ---- th_run: how the child ended ---- */

static void child_exit_7(th_result *r, void *arg) {
    (void)r;
    (void)arg;
    _exit(7);
}

static void child_writes(th_result *r, void *arg) {
    r->user_int[0] = *(int *)arg;
    snprintf(r->user, sizeof r->user, "from pid %d", (int)getpid());
}

static void no_core(void) {
    struct rlimit rl = {0, 0};
    setrlimit(RLIMIT_CORE, &rl);
}

static void child_segv(th_result *r, void *arg) {
    (void)arg;
    r->user_int[0] = 1; /* written before the crash: still visible to the parent */
    no_core();
    raise(SIGSEGV);
}

static void child_hangs(th_result *r, void *arg) {
    (void)arg;
    r->user_int[0] = 1;
    for (;;) pause();
}

static void test_exit_code_and_result(void **state) {
    (void)state;
    th_result *r = th_result_new();
    int value = 42;
    th_run(r, NULL, child_writes, &value);
    assert_int_equal(r->user_int[0], 42);
    assert_non_null(strstr(r->user, "from pid"));
    assert_int_equal(r->exit_code, 0);
    th_run(r, NULL, child_exit_7, NULL);
    assert_int_equal(r->exited, 1);
    assert_int_equal(r->exit_code, 7);
    assert_int_equal(r->signaled, 0);
    assert_int_equal(r->user_int[0], 0); /* cleared between runs */
    th_result_free(r);
}

/* Under AddressSanitizer cmocka's handler stays in the child (see th_run_raw): no signal. */
#if defined(__SANITIZE_ADDRESS__)
#define SKIP_UNDER_ASAN() TH_SKIP("under AddressSanitizer cmocka's handler stays in the child: no signal to see")
#else
#define SKIP_UNDER_ASAN() ((void)0)
#endif

static void test_crash_reported_as_signaled(void **state) {
    (void)state;
    SKIP_UNDER_ASAN();
    th_result *r = th_result_new();
    th_run_raw(r, NULL, child_segv, NULL);
    assert_int_equal(r->exited, 0);
    assert_int_equal(r->exit_code, -1);
    assert_int_equal(r->signaled, SIGSEGV);
    assert_int_equal(r->timed_out, 0);
    assert_int_equal(r->user_int[0], 1);
    th_result_free(r);
}

static void test_hang_killed_after_timeout(void **state) {
    (void)state;
    const char *old = getenv("TH_TIMEOUT_S");
    char *saved = old ? strdup(old) : NULL;
    setenv("TH_TIMEOUT_S", "1", 1);
    th_result *r = th_result_new();
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    th_run_raw(r, NULL, child_hangs, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    if (saved) setenv("TH_TIMEOUT_S", saved, 1);
    else unsetenv("TH_TIMEOUT_S");
    free(saved);
    assert_int_equal(r->timed_out, 1);
    assert_int_equal(r->signaled, SIGKILL);
    assert_int_equal(r->user_int[0], 1);
    if (s < 0.9 || s > 10) fail_msg("the 1 s timeout took %.2f s", s);
    th_result_free(r);
}

/* ---- th_run's own failures, seen from outside: a small cmocka run in a forked process ---- */

static void child_asserts(th_result *r, void *arg) {
    (void)r;
    (void)arg;
    assert_int_equal(1, 2); /* what a child function must not do */
}

static void child_ok(th_result *r, void *arg) {
    (void)arg;
    r->user_int[0] = 1;
}

static void inner_crash(void **state) {
    (void)state;
    th_result *r = th_result_new();
    th_run(r, NULL, child_segv, NULL); /* fails the inner test */
    th_result_free(r);
}

static void inner_escape(void **state) {
    (void)state;
    th_result *r = th_result_new();
    th_run(r, NULL, child_asserts, NULL); /* fails the inner test: the child escaped */
    th_result_free(r);
}

static void inner_after(void **state) {
    (void)state;
    th_result *r = th_result_new();
    th_run(r, NULL, child_ok, NULL);
    assert_int_equal(r->user_int[0], 1);
    th_result_free(r);
}

/* Runs tests in a forked process with its output in a file; returns cmocka's result (the
 * number of failed tests) and the output in out. */
static int run_inner(const struct CMUnitTest *tests, size_t n, char *out, size_t out_size) {
    char *dir = th_tmpdir();
    char log[PATH_MAX];
    snprintf(log, sizeof log, "%s/inner.log", dir);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        free(dir); /* the child's copy of the parent's string: valgrind follows this process */
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) _exit(100);
        dup2(fd, 1);
        dup2(fd, 2);
        unsetenv("CMOCKA_MESSAGE_OUTPUT");
        unsetenv("CMOCKA_XML_FILE");
        _exit(_cmocka_run_group_tests("inner", tests, n, NULL, NULL));
    }
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    FILE *f = fopen(log, "r");
    assert_non_null(f);
    size_t got = fread(out, 1, out_size - 1, f);
    out[got] = 0;
    fclose(f);
    free(dir);
    if (!WIFEXITED(status)) fail_msg("inner run died (status %d):\n%s", status, out);
    return WEXITSTATUS(status);
}

static void test_th_run_fails_on_crash(void **state) {
    (void)state;
    SKIP_UNDER_ASAN();
    const struct CMUnitTest tests[] = {cmocka_unit_test(inner_crash), cmocka_unit_test(inner_after)};
    static char out[65536];
    int failed = run_inner(tests, 2, out, sizeof out);
    if (failed != 1 || !strstr(out, "scenario child died of signal 11"))
        fail_msg("want 1 failure naming signal 11, got %d:\n%s", failed, out);
}

static void test_assertion_inside_child_stops_it(void **state) {
    (void)state;
    const struct CMUnitTest tests[] = {cmocka_unit_test(inner_escape), cmocka_unit_test(inner_after)};
    static char out[65536];
    int failed = run_inner(tests, 2, out, sizeof out);
    /* inner_escape fails in the parent with the harness's message, inner_after passes there;
     * the escaped child ran into inner_after's th_run and was stopped there */
    if (failed != 1 || !strstr(out, "failed a cmocka assertion inside its function") ||
        !strstr(out, "called inside a scenario child"))
        fail_msg("want 1 failure and the escape reported, got %d:\n%s", failed, out);
}

/* ---- /proc/self/maps ---- */

static void child_maps(th_result *r, void *arg) {
    (void)arg;
    r->user_int[0] = th_count_maps("libz.so");
    void *h = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
    r->user_int[1] = h != NULL;
    r->user_int[2] = th_count_maps("libz.so");
    r->user_int[3] = th_count_maps("libc.so");
    r->user_int[4] = th_count_maps("no-such-library.so");
}

/* th_loader_resolves: libc's SONAME resolves to a real file named for it; a SONAME nothing
 * provides resolves to none, with dlerror's text. */
static void test_loader_resolves(void **state) {
    (void)state;
    char out[PATH_MAX];
    assert_int_equal(th_loader_resolves("libc.so.6", out, sizeof out), 1);
    struct stat st;
    assert_int_equal(stat(out, &st), 0);
    assert_true(out[0] == '/' && strstr(out, "/libc"));
    assert_int_equal(th_loader_resolves("libcudaload-no-such-library.so.99", out, sizeof out), 0);
    assert_non_null(strstr(out, "libcudaload-no-such-library.so.99"));
}

static void test_maps_count(void **state) {
    (void)state;
    th_result *r = th_result_new();
    th_run(r, NULL, child_maps, NULL);
    if (!r->user_int[1]) TH_SKIP("no libz.so.1 on this machine");
    assert_int_equal(r->user_int[2], r->user_int[0] + 1);
    assert_int_equal(r->user_int[3], 1); /* many mappings, one file */
    assert_int_equal(r->user_int[4], 0);
    th_result_free(r);
}

/* ---- assertions on a result ---- */

static void test_find_candidate_and_taken(void **state) {
    (void)state;
    th_result *r = th_result_new();
    th_lib *l = &r->lib[CUDALOAD_LIB_CUDART];
    l->status = CUDALOAD_OK;
    l->source = CUDALOAD_SOURCE_CONDA;
    snprintf(l->path, sizeof l->path, "/opt/conda/lib/libcudart.so.13");
    l->n_candidates = 2;
    snprintf(l->cand[0].path, sizeof l->cand[0].path, "/x/nvidia/cu13/lib/libcudart.so.13");
    l->cand[0].result = CUDALOAD_ERROR_DRIVER_TOO_OLD;
    snprintf(l->cand[1].path, sizeof l->cand[1].path, "/opt/conda/lib/libcudart.so.13");
    assert_int_equal(th_find_candidate(r, CUDALOAD_LIB_CUDART, "cu13/lib"), 0);
    assert_int_equal(th_find_candidate(r, CUDALOAD_LIB_CUDART, "conda"), 1);
    assert_int_equal(th_find_candidate(r, CUDALOAD_LIB_CUDART, "cuda_runtime"), -1);
    assert_int_equal(th_find_candidate(r, CUDALOAD_LIB_CUBLAS, "conda"), -1);
    assert_int_equal(th_find_candidate(r, 99, "conda"), -1);
    th_assert_taken(r, CUDALOAD_LIB_CUDART, "/opt/conda/", CUDALOAD_SOURCE_CONDA);
    th_result_free(r);
}

/* ---- fixtures ---- */

static void test_fixture_paths_and_env(void **state) {
    (void)state;
    char *dir = th_tmpdir();
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/fixtures.env", dir);
    const char env[] = "FIXTURES=/f\nKEY2=second\nKEY=first value\nEMPTY=\nLAST=no newline";
    th_write(p, env, sizeof env - 1);
    const char *old = getenv("CUDALOAD_TEST_FIXTURES");
    char *saved = old ? strdup(old) : NULL;
    setenv("CUDALOAD_TEST_FIXTURES", dir, 1);
    snprintf(p, sizeof p, "%s/venv-cu12/lib", dir);
    assert_string_equal(th_fixture("venv-cu12/lib"), p);
    assert_string_equal(th_fixture_env("KEY"), "first value");
    assert_string_equal(th_fixture_env("KEY2"), "second");
    assert_string_equal(th_fixture_env("EMPTY"), "");
    assert_string_equal(th_fixture_env("LAST"), "no newline");
    if (saved) setenv("CUDALOAD_TEST_FIXTURES", saved, 1);
    else unsetenv("CUDALOAD_TEST_FIXTURES");
    free(saved);
    free(dir);
}

/* ---- small trees ---- */

static void test_tree_helpers(void **state) {
    (void)state;
    char *dir = th_tmpdir();
    struct stat st;
    assert_int_equal(stat(dir, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(strncmp(dir + strlen(dir) - 21, "/cudaload-test-", 15), 0);
    char *other = th_tmpdir();
    assert_string_not_equal(dir, other);

    char deep[PATH_MAX], file[PATH_MAX + 64], copy[PATH_MAX + 64], link[PATH_MAX + 64], target[PATH_MAX + 64];
    snprintf(deep, sizeof deep, "%s/site-packages/nvidia/cu13/lib", dir);
    th_mkdirs(deep);
    th_mkdirs(deep); /* idempotent */
    assert_int_equal(stat(deep, &st), 0);
    assert_true(S_ISDIR(st.st_mode));

    snprintf(file, sizeof file, "%s/libcudart.so.13", deep);
    const char data[] = "\177ELF not really";
    th_write(file, data, sizeof data - 1);
    assert_int_equal(stat(file, &st), 0);
    assert_int_equal(st.st_size, sizeof data - 1);
    th_write(file, "", 0); /* zero bytes, truncating */
    assert_int_equal(stat(file, &st), 0);
    assert_int_equal(st.st_size, 0);
    th_write(file, data, sizeof data - 1);

    snprintf(copy, sizeof copy, "%s/copy.so", other);
    th_copy(file, copy);
    char buf[64] = {0};
    FILE *f = fopen(copy, "rb");
    assert_non_null(f);
    assert_int_equal(fread(buf, 1, sizeof buf, f), sizeof data - 1);
    fclose(f);
    assert_memory_equal(buf, data, sizeof data - 1);
    assert_int_equal(stat(copy, &st), 0);
    assert_true(st.st_mode & S_IXUSR);

    snprintf(link, sizeof link, "%s/libcublas.so.13", deep);
    th_symlink(copy, link);
    th_symlink(file, link); /* replaces */
    ssize_t n = readlink(link, target, sizeof target - 1);
    assert_true(n > 0);
    target[n] = 0;
    assert_string_equal(target, file);
    snprintf(link, sizeof link, "%s/dangling.so", deep);
    th_symlink("/nonexistent/libcudart.so.13", link); /* dangling links are allowed */
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    free(dir);
    free(other);
}

/* A process that made temp dirs removes them at exit (its parent's stay). */
static void test_tmpdirs_removed_at_exit(void **state) {
    (void)state;
    char *mine = th_tmpdir();
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        free(mine); /* the child's copy of the parent's string: valgrind follows this process */
        char *d = th_tmpdir();
        char sub[PATH_MAX];
        snprintf(sub, sizeof sub, "%s/locked/inner", d);
        th_mkdirs(sub);
        snprintf(sub, sizeof sub, "%s/locked", d);
        chmod(sub, 0); /* removed all the same */
        if (write(fds[1], d, strlen(d) + 1) < 0) _exit(2);
        free(d);
        exit(0); /* runs the atexit handlers */
    }
    close(fds[1]);
    char childs[PATH_MAX] = {0};
    assert_true(read(fds[0], childs, sizeof childs - 1) > 0);
    close(fds[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    struct stat st;
    const char *keep = getenv("TH_KEEP_TMP");
    if (!(keep && strcmp(keep, "1") == 0)) assert_int_equal(stat(childs, &st), -1);
    assert_int_equal(stat(mine, &st), 0); /* the parent's dir stays until the parent exits */
    free(mine);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_env_cleared_then_applied),
        cmocka_unit_test(test_exit_code_and_result),
        cmocka_unit_test(test_crash_reported_as_signaled),
        cmocka_unit_test(test_hang_killed_after_timeout),
        cmocka_unit_test(test_th_run_fails_on_crash),
        cmocka_unit_test(test_assertion_inside_child_stops_it),
        cmocka_unit_test(test_loader_resolves),
        cmocka_unit_test(test_maps_count),
        cmocka_unit_test(test_find_candidate_and_taken),
        cmocka_unit_test(test_fixture_paths_and_env),
        cmocka_unit_test(test_tree_helpers),
        cmocka_unit_test(test_tmpdirs_removed_at_exit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
