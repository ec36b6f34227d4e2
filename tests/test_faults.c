/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_faults.c -- the rows of the fault matrix (docs/reliability.md) that no other test file
 * covered: CUDALOAD_* variables holding garbage, relative paths, empty elements, paths longer
 * than PATH_MAX and non-UTF-8 bytes; no library in any searched place; an optional driver
 * symbol missing (presence false, the call returns a status); AT_SECURE in a real setuid-root
 * program run by an unprivileged user; repeated init; every call before init; accessors used
 * while other threads run init (the TSan target, make check-tsan).
 *
 * Every scenario runs in a forked child (tests/harness.h). The setuid scenario execs a copy
 * of this very binary ("--setuid-helper" mode, see main) made setuid root in a temp dir.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cudaload.h"
#include "cudaload_tables.h"
#include "harness.h"

#define SRC(s) CUDALOAD_SOURCE_BIT(CUDALOAD_SOURCE_##s)

static char driver_path[PATH_MAX];
static char driver_env[PATH_MAX + 64];

static int setup(void **state) {
    (void)state;
    const char *b = th_require_build(1);
    if (!b) return -1;
    snprintf(driver_path, sizeof driver_path, "%s/fake/libcuda.so.1", b);
    snprintf(driver_env, sizeof driver_env, "CUDALOAD_DRIVER_PATH=%s", driver_path);
    return 0;
}

/* The child exited normally (no crash, no hang), init returned want and its message holds
 * every one of words (NULL-terminated). */
static void expect_init(const th_result *r, int want, const char *const *words) {
    if (!r->exited || r->exit_code != 0)
        fail_msg("child did not exit cleanly (signaled=%d exit=%d)", r->signaled, r->exit_code);
    if (r->init_status != want)
        fail_msg("init returned %s, want %s; message:\n%s", cudaload_status_name((cudaload_status)r->init_status),
                 cudaload_status_name((cudaload_status)want), r->error);
    for (size_t i = 0; words && words[i]; i++)
        if (!strstr(r->error, words[i])) fail_msg("init's message lacks '%s':\n%s", words[i], r->error);
}

/* ---- CUDALOAD_* variables holding garbage ---- */

typedef struct env_case {
    const char *var;   /* the variable */
    const char *value; /* its value (NULL: built by the test) */
    int want;          /* init's status */
    const char *words[4]; /* NULL-terminated: at most 3 */
} env_case;

static void test_env_garbage(void **state) {
    (void)state;
    const char *roots[] = {th_fixture("toolkit-cu13-wheel")};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER), 0);
    /* a path of PATH_MAX + 10 bytes, absolute */
    static char longpath[PATH_MAX + 16];
    longpath[0] = '/';
    memset(longpath + 1, 'a', PATH_MAX + 9);
    longpath[PATH_MAX + 10] = 0;
    const env_case cases[] = {
        {"CUDALOAD_SOURCES", "caller,\x01\xff\xfe", CUDALOAD_ERROR_INVALID_OPTION, {"CUDALOAD_SOURCES", "unknown source"}},
        {"CUDALOAD_SOURCES", ",,,", CUDALOAD_ERROR_INVALID_OPTION, {"CUDALOAD_SOURCES", "unknown source ''"}},
        {"CUDALOAD_SOURCES", "caller;system", CUDALOAD_ERROR_INVALID_OPTION, {"CUDALOAD_SOURCES", "caller;system"}},
        {"CUDALOAD_CUDA_MAJOR", "13abc", CUDALOAD_ERROR_INVALID_OPTION, {"CUDALOAD_CUDA_MAJOR", "'13abc'", "12 or 13"}},
        {"CUDALOAD_CUDA_MAJOR", "99999999999999999999999", CUDALOAD_ERROR_INVALID_OPTION, {"CUDALOAD_CUDA_MAJOR", "12 or 13"}},
        {"CUDALOAD_CUDA_MAJOR", "-13", CUDALOAD_ERROR_INVALID_OPTION, {"CUDALOAD_CUDA_MAJOR", "12 or 13"}},
        {"CUDALOAD_BACKEND", "\xff\xfe", CUDALOAD_ERROR_INVALID_OPTION, {"CUDALOAD_BACKEND", "auto, bundled, cublas"}},
        /* relative paths: refused, naming the variable */
        {"CUDALOAD_PATH", "lib64", CUDALOAD_ERROR_INVALID_OPTION, {"CUDALOAD_PATH: 'lib64' is a relative path"}},
        {"CUDALOAD_PATH", "/opt/x:./lib", CUDALOAD_ERROR_INVALID_OPTION, {"CUDALOAD_PATH: './lib' is a relative path"}},
        {"CUDALOAD_CUDART_PATH", "libcudart.so.13", CUDALOAD_ERROR_INVALID_OPTION,
         {"CUDALOAD_CUDART_PATH: 'libcudart.so.13' is a relative path"}},
        {"CUDALOAD_DRIVER_PATH", "../libcuda.so.1", CUDALOAD_ERROR_INVALID_OPTION,
         {"CUDALOAD_DRIVER_PATH: '../libcuda.so.1' is a relative path"}},
        {"CUDALOAD_CUBLAS_PATH", "~/libcublas.so.13", CUDALOAD_ERROR_INVALID_OPTION, {"CUDALOAD_CUBLAS_PATH", "relative path"}},
        /* longer than PATH_MAX */
        {"CUDALOAD_PATH", longpath, CUDALOAD_ERROR_INVALID_OPTION, {"CUDALOAD_PATH", "longer than PATH_MAX"}},
        {"CUDALOAD_CUDART_PATH", longpath, CUDALOAD_ERROR_INVALID_OPTION, {"CUDALOAD_CUDART_PATH", "longer than PATH_MAX"}},
        {"CUDALOAD_CUBLASLT_PATH", longpath, CUDALOAD_ERROR_INVALID_OPTION, {"CUDALOAD_CUBLASLT_PATH", "longer than PATH_MAX"}},
        /* non-UTF-8 bytes in an absolute path: a file that is not there, loudly */
        {"CUDALOAD_CUDART_PATH", "/nonexistent/\xff\xfe\x80/libcudart.so.13", CUDALOAD_ERROR_OVERRIDE_UNUSABLE,
         {"CUDALOAD_CUDART_PATH", "/nonexistent/\xff\xfe\x80/libcudart.so.13"}},
    };
    th_result *r = th_result_new();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        static char kv[PATH_MAX + 64];
        snprintf(kv, sizeof kv, "%s=%s", cases[i].var, cases[i].value);
        const char *env[] = {driver_env, kv, NULL};
        /* the driver variable under test replaces the fake's */
        if (strcmp(cases[i].var, "CUDALOAD_DRIVER_PATH") == 0) env[0] = kv, env[1] = NULL;
        th_run(r, env, th_init_child, &o);
        print_message("%s=%.40s%s -> %s\n", cases[i].var, cases[i].value, strlen(cases[i].value) > 40 ? "..." : "",
                      cudaload_status_name((cudaload_status)r->init_status));
        expect_init(r, cases[i].want, cases[i].words);
        /* nothing was loaded from a refused configuration */
        if (cases[i].want == CUDALOAD_ERROR_INVALID_OPTION)
            assert_int_equal(r->maps_count[CUDALOAD_LIB_CUDART], 0);
    }
    th_result_free(r);
}

/* Empty elements of CUDALOAD_PATH never mean the current directory: the child's cwd holds a
 * good libcudart.so.13, and CUDALOAD_PATH=":::" with a non-UTF-8 directory must not find it. */
static void child_in_dir(th_result *r, void *arg) {
    const char *const *a = arg; /* a[0]: the dir to chdir to; then the options */
    if (chdir(a[0]) != 0) {
        r->user_int[0] = errno;
        return;
    }
    th_init_child(r, (void *)a[1]);
}

static void test_empty_elements_never_cwd(void **state) {
    (void)state;
    char *cwd = th_tmpdir(), p[PATH_MAX], src[PATH_MAX];
    snprintf(p, sizeof p, "%s/libcudart.so.13", cwd);
    snprintf(src, sizeof src, "%s/libcudart.so.13", th_fixture_env("CUDA_TOOLKIT_LIB"));
    th_copy(src, p);
    const char *roots[] = {th_fixture("toolkit-cu13-wheel")};
    cudaload_options o = th_opts(roots, 1, SRC(OVERRIDE) | SRC(CALLER), 0);
    const char *arg[] = {cwd, (const char *)&o};
    const char *env[] = {driver_env, "CUDALOAD_PATH=:::/nonexistent/\xff\xfe::", NULL};
    th_result *r = th_result_new();
    th_run(r, env, child_in_dir, arg);
    assert_int_equal(r->user_int[0], 0);
    expect_init(r, CUDALOAD_OK, NULL);
    th_assert_taken(r, CUDALOAD_LIB_CUDART, th_fixture("toolkit-cu13-wheel"), CUDALOAD_SOURCE_CALLER);
    assert_int_equal(th_find_candidate(r, CUDALOAD_LIB_CUDART, cwd), -1);
    /* the non-UTF-8 directory is a root (searched, not there), the empty elements are none */
    int found = 0;
    for (int i = 0; i < r->n_roots && i < TH_MAX_ROOTS; i++) {
        if (strcmp(r->roots[i], "/nonexistent/\xff\xfe") == 0 && r->root_source[i] == CUDALOAD_SOURCE_OVERRIDE) found = 1;
        if (r->roots[i][0] != '/') fail_msg("a relative root: '%s'", r->roots[i]);
    }
    if (!found) fail_msg("the CUDALOAD_PATH directory is not among the %d roots", r->n_roots);
    for (int c = 0; c < r->lib[CUDALOAD_LIB_CUDART].n_candidates && c < TH_MAX_CANDS; c++)
        if (r->lib[CUDALOAD_LIB_CUDART].cand[c].path[0] != '/')
            fail_msg("a candidate with a relative path: '%s'", r->lib[CUDALOAD_LIB_CUDART].cand[c].path);
    th_result_free(r);
    free(cwd);
}

/* ---- no library anywhere ---- */

static void test_no_library_anywhere(void **state) {
    (void)state;
    /* every source but the system step (this machine's ld.so.cache has the toolkit), each
     * pointed at its own empty directory (roots are deduplicated: one directory would be
     * one root) */
    char *top = th_tmpdir();
    static const char *const names[] = {"override", "caller", "venv", "conda", "cuda_home"};
    static const int sources[] = {CUDALOAD_SOURCE_OVERRIDE, CUDALOAD_SOURCE_CALLER, CUDALOAD_SOURCE_VENV,
                                  CUDALOAD_SOURCE_CONDA, CUDALOAD_SOURCE_CUDA_HOME};
    char dirs[5][PATH_MAX];
    for (int i = 0; i < 5; i++) {
        snprintf(dirs[i], sizeof dirs[i], "%s/%s", top, names[i]);
        th_mkdirs(dirs[i]);
    }
    char sp[PATH_MAX + 64]; /* a venv is searched through its site-packages */
    snprintf(sp, sizeof sp, "%s/lib/python3.11/site-packages", dirs[2]);
    th_mkdirs(sp);
    char path[PATH_MAX + 32], venv[PATH_MAX + 32], conda[PATH_MAX + 32], home[PATH_MAX + 32];
    snprintf(path, sizeof path, "CUDALOAD_PATH=%s", dirs[0]);
    snprintf(venv, sizeof venv, "VIRTUAL_ENV=%s", dirs[2]);
    snprintf(conda, sizeof conda, "CONDA_PREFIX=%s", dirs[3]);
    snprintf(home, sizeof home, "CUDA_HOME=%s", dirs[4]);
    const char *env[] = {driver_env, path, venv, conda, home, NULL};
    const char *roots[] = {dirs[1]};
    cudaload_options o = th_opts(roots, 1, CUDALOAD_SOURCES_ALL & ~SRC(SYSTEM), CUDALOAD_FLAG_LOAD_CUBLAS);
    th_result *r = th_result_new();
    th_run(r, env, th_init_child, &o);
    const char *words[] = {"cudart: library not found", "system search scoped out", "pip install", NULL};
    expect_init(r, CUDALOAD_ERROR_NOT_FOUND, words);
    assert_int_equal(r->lib[CUDALOAD_LIB_CUDART].status, CUDALOAD_ERROR_NOT_FOUND);
    assert_int_equal(r->lib[CUDALOAD_LIB_CUDART].loaded, 0);
    assert_int_equal(r->maps_count[CUDALOAD_LIB_CUDART], 0);
    assert_int_equal(r->lib[CUDALOAD_LIB_CUDART].n_candidates, 0); /* no file of that name anywhere */
    assert_non_null(strstr(r->error, "no candidate file was found"));
    /* each source's directory was searched */
    for (int s = 0; s < 5; s++) {
        int found = 0;
        for (int i = 0; i < r->n_roots && i < TH_MAX_ROOTS; i++)
            found |= strncmp(r->roots[i], dirs[s], strlen(dirs[s])) == 0 && r->root_source[i] == sources[s];
        if (!found) fail_msg("no %s root under %s; message:\n%s", names[s], dirs[s], r->error);
    }
    th_result_free(r);
    free(top);
}

/* ---- an optional symbol missing: presence false, the call that needs it returns a status ---- */

static void child_optional_driver_symbol(th_result *r, void *arg) {
    th_init_child(r, arg);
    const cudaload_driver_table *d = cudaload_driver();
    r->user_int[0] = cudaload_has_symbol(CUDALOAD_LIB_DRIVER, "cuLaunchKernel");
    r->user_int[1] = d != NULL && d->cuLaunchKernel == NULL && d->has.cuLaunchKernel == 0;
    r->user_int[2] = cudaload_has_symbol(CUDALOAD_LIB_DRIVER, "cuInit"); /* a required one, present */
    /* the kernels' per-device check needs the launch symbols: it must say so, not call NULL */
    cudaload_kernels_info k = {.size = sizeof k};
    r->user_int[3] = cudaload_kernels_info_get(0, &k);
    r->user_int[4] = k.built;
    r->user_int[5] = k.runnable;
    snprintf(r->user, sizeof r->user, "%s", cudaload_last_error());
}

static void test_optional_symbol_missing_returns_status(void **state) {
    (void)state;
    /* the fake driver exports the required driver symbols only: cuLaunchKernel,
     * cuModuleLoadData, ... (optional in the driver table) are absent. It reports one
     * device of compute capability 9.0 and CUDA 13.0. */
    const char *roots[] = {th_fixture("toolkit-cu13-wheel")};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER), 0);
    const char *env[] = {driver_env, "FAKE_CUDA_DEVICES=1", "FAKE_CUDA_VERSION=13000", NULL};
    th_result *r = th_result_new();
    th_run(r, env, child_optional_driver_symbol, &o);
    expect_init(r, CUDALOAD_OK, NULL);
    assert_int_equal(r->user_int[0], 0);
    assert_int_equal(r->user_int[1], 1);
    assert_int_equal(r->user_int[2], 1);
    assert_int_equal(r->user_int[3], CUDALOAD_OK);
    if (r->user_int[4]) {
        /* with kernels: the presence flags are checked and the reason given */
        if (r->user_int[5] != CUDALOAD_ERROR_SYMBOL_MISSING)
            fail_msg("runnable is %s, want CUDALOAD_ERROR_SYMBOL_MISSING; message: %s",
                     cudaload_status_name((cudaload_status)r->user_int[5]), r->user);
        assert_non_null(strstr(r->user, "lacks a symbol the kernel launch needs"));
    } else {
        /* a build without nvcc (the sanitizer builds) stops earlier, also with a status */
        print_message("(no kernels in this build: runnable is KERNELS_NOT_BUILT)\n");
        assert_int_equal(r->user_int[5], CUDALOAD_ERROR_KERNELS_NOT_BUILT);
    }
    th_result_free(r);
}

/* ---- AT_SECURE: a real setuid-root program, run by an unprivileged user ---- */

/* The helper's side (main, argv: --setuid-helper ROOT DRIVER): reads nothing but options; the
 * environment it was started with carries overrides that would make init fail. */
static int setuid_helper(const char *root, const char *driver) {
    const char *roots[] = {root};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER), 0);
    o.driver_path = driver;
    cudaload_status st = cudaload_init(&o);
    cudaload_library_info info = {.size = sizeof info};
    cudaload_get_library_info(CUDALOAD_LIB_CUDART, &info);
    int bad = 0;
    for (size_t i = 0; i < info.n_candidates; i++)
        if (info.candidates[i].path && strstr(info.candidates[i].path, "bad/text")) bad = 1;
    printf("at_secure=%lu uid=%d euid=%d init=%s cudart_source=%s bad_candidate=%d path=%s\nmessage=%s\n",
           getauxval(AT_SECURE), (int)getuid(), (int)geteuid(), cudaload_status_name(st),
           cudaload_source_name(info.source), bad, info.path ? info.path : "(none)", cudaload_last_error());
    fflush(stdout);
    return 0;
}

/* Runs helper as uid/gid 65534 with a hostile environment; its stdout and stderr in out. */
static int run_as_nobody(const char *helper, char *out, size_t cap) {
    int fd[2];
    if (pipe(fd) != 0) fail_msg("pipe: %s", strerror(errno));
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) fail_msg("fork: %s", strerror(errno));
    if (pid == 0) {
        dup2(fd[1], 1);
        dup2(fd[1], 2);
        close(fd[0]);
        if (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0) _exit(125);
        static char rt[PATH_MAX + 32];
        snprintf(rt, sizeof rt, "CUDALOAD_CUDART_PATH=%s", th_fixture("bad/text/lib/libcudart.so.13"));
        char *const envp[] = {"PATH=/usr/bin:/bin", rt, "CUDALOAD_SOURCES=bogus", "CUDALOAD_DRIVER_PATH=relative/libcuda.so.1",
                              "CUDA_HOME=/nonexistent", NULL};
        char *const argv[] = {(char *)helper, "--setuid-helper", (char *)th_fixture("toolkit-cu13-wheel"), driver_path, NULL};
        execve(helper, argv, envp);
        _exit(126);
    }
    close(fd[1]);
    size_t len = 0;
    ssize_t n;
    while (len + 1 < cap && ((n = read(fd[0], out + len, cap - 1 - len)) > 0 || (n < 0 && errno == EINTR)))
        if (n > 0) len += (size_t)n;
    out[len] = 0;
    close(fd[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void test_at_secure_setuid(void **state) {
    (void)state;
    if (geteuid() != 0) {
        print_message("skipped: making a setuid-root helper needs root (CUDALOAD_FLAG_SECURE is tested in "
                      "test_search.c:test_exact_file_override)\n");
        skip();
    }
    char *dir = th_tmpdir();
    struct statvfs vfs;
    if (statvfs(dir, &vfs) == 0 && (vfs.f_flag & ST_NOSUID)) {
        print_message("skipped: %s is on a nosuid file system (set TMPDIR elsewhere)\n", dir);
        free(dir);
        skip();
    }
    char suid[PATH_MAX], plain[PATH_MAX], self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    assert_true(n > 0);
    self[n] = 0;
    /* the names are in check-valgrind's --trace-children-skip: valgrind cannot run a setuid program */
    snprintf(suid, sizeof suid, "%s/cudaload-setuid-helper", dir);
    snprintf(plain, sizeof plain, "%s/cudaload-plain-helper", dir);
    th_copy(self, suid);
    th_copy(self, plain);
    assert_int_equal(chmod(dir, 0755), 0);
    assert_int_equal(chown(suid, 0, 0), 0);
    assert_int_equal(chmod(suid, 04755), 0);
    static char out[16384];

    /* control: the same program without the setuid bit reads the environment and fails on it */
    int rc = run_as_nobody(plain, out, sizeof out);
    print_message("plain helper as nobody (exit %d):\n%s", rc, out);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "at_secure=0 uid=65534 euid=65534 "));
    assert_non_null(strstr(out, "init=CUDALOAD_ERROR_INVALID_OPTION"));
    assert_non_null(strstr(out, "CUDALOAD_DRIVER_PATH: 'relative/libcuda.so.1' is a relative path"));
    assert_null(strstr(out, "Sanitizer"));

    /* setuid root: AT_SECURE is set, no variable is read, the options alone decide */
    rc = run_as_nobody(suid, out, sizeof out);
    print_message("setuid helper as nobody (exit %d):\n%s", rc, out);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "at_secure=1 uid=65534 euid=0 "));
    assert_non_null(strstr(out, "init=CUDALOAD_OK "));
    assert_non_null(strstr(out, "cudart_source=caller bad_candidate=0 "));
    char want[PATH_MAX + 16];
    snprintf(want, sizeof want, "path=%s/", th_fixture("toolkit-cu13-wheel"));
    assert_non_null(strstr(out, want));
    assert_null(strstr(out, "Sanitizer")); /* a sanitizer build's report would land here */
    free(dir);
}

/* ---- repeated init: the first result stands ---- */

static void child_repeated_init(th_result *r, void *arg) {
    const cudaload_options *good = arg;
    const char *bad_roots[] = {"relative/root"};
    cudaload_options bad = th_opts(bad_roots, 1, SRC(CALLER), 0);
    r->user_int[0] = cudaload_init(good);
    cudaload_library_info a = {.size = sizeof a};
    cudaload_get_library_info(CUDALOAD_LIB_CUDART, &a);
    char first[4096];
    snprintf(first, sizeof first, "%s", a.path ? a.path : "");
    r->user_int[1] = cudaload_init(&bad); /* options ignored */
    r->user_int[2] = cudaload_init(NULL);
    cudaload_library_info b = {.size = sizeof b};
    cudaload_get_library_info(CUDALOAD_LIB_CUDART, &b);
    r->user_int[3] = strcmp(first, b.path ? b.path : "") == 0;
    r->user_int[4] = cudaload_is_initialized();
    for (int i = 0; i < 1000; i++)
        if (cudaload_init(i % 2 ? &bad : NULL) != (cudaload_status)r->user_int[0]) r->user_int[5]++;
    th_capture(r, (cudaload_status)r->user_int[0]);
}

static void test_repeated_init(void **state) {
    (void)state;
    const char *roots[] = {th_fixture("toolkit-cu13-wheel")};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER), 0);
    const char *env[] = {driver_env, NULL};
    th_result *r = th_result_new();
    th_run(r, env, child_repeated_init, &o);
    expect_init(r, CUDALOAD_OK, NULL);
    assert_int_equal(r->user_int[1], CUDALOAD_OK);
    assert_int_equal(r->user_int[2], CUDALOAD_OK);
    assert_int_equal(r->user_int[3], 1);
    assert_int_equal(r->user_int[4], 1);
    assert_int_equal(r->user_int[5], 0);
    assert_int_equal(r->maps_count[CUDALOAD_LIB_CUDART], 1);
    /* a failed first init stays failed: good options later do not redo it */
    const char *env2[] = {driver_env, "CUDALOAD_SOURCES=bogus", NULL};
    th_run(r, env2, child_repeated_init, &o);
    assert_int_equal(r->user_int[0], CUDALOAD_ERROR_INVALID_OPTION);
    assert_int_equal(r->user_int[1], CUDALOAD_ERROR_INVALID_OPTION);
    assert_int_equal(r->user_int[2], CUDALOAD_ERROR_INVALID_OPTION);
    assert_int_equal(r->user_int[4], 1);
    assert_int_equal(r->user_int[5], 0);
    assert_int_equal(r->maps_count[CUDALOAD_LIB_CUDART], 0);
    th_result_free(r);
}

/* ---- every call before init (test_search.c:test_api_before_init has the loader's) ---- */

static void child_all_before_init(th_result *r, void *arg) {
    (void)arg;
    float *p = (float *)(uintptr_t)0x100000; /* valid-looking, never dereferenced */
    int i = 0;
    r->user_int[i++] = cudaload_saxpy(16, 1.f, p, p, NULL);
    r->user_int[i++] = cudaload_sgemm(CUDALOAD_OP_N, CUDALOAD_OP_N, 4, 4, 4, 1.f, p, 4, p, 4, 0.f, p, 4, NULL);
    cudaload_kernels_info k = {.size = sizeof k};
    r->user_int[i++] = cudaload_kernels_info_get(0, &k);
    r->user_int[i++] = cudaload_has_symbol(CUDALOAD_LIB_CUDART, "cudaGetDeviceCount");
    r->user_int[i++] = cudaload_driver() == NULL && cudaload_cudart() == NULL && cudaload_cublas() == NULL &&
                       cudaload_cublaslt() == NULL;
    const char *name = NULL;
    int req = -1, present = -1;
    r->user_int[i++] = cudaload_symbol_at(CUDALOAD_LIB_CUDART, 0, &name, &req, &present) > 0 && name && present == 0;
    r->user_int[i++] = cudaload_get_library_info(CUDALOAD_LIB_CUDART, NULL);
    r->user_int[i++] = cudaload_is_initialized();
    /* cudaload_set_backend needs no init (kernels.c): a valid backend is taken (it then
     * outranks CUDALOAD_BACKEND), an invalid one is INVALID_ARGUMENT; neither initialises */
    r->user_int[i++] = cudaload_set_backend(CUDALOAD_BACKEND_CUBLAS);
    r->user_int[i++] = cudaload_set_backend((cudaload_backend)9);
    snprintf(r->user, sizeof r->user, "%s", cudaload_last_error());
    r->user_int[i++] = cudaload_is_initialized();
    cudaload_kernels_info k2 = {.size = sizeof k2};
    r->user_int[i++] = cudaload_kernels_info_get(-1, &k2) == CUDALOAD_OK && k2.last_backend == CUDALOAD_BACKEND_AUTO &&
                       k2.runnable == CUDALOAD_ERROR_NOT_ATTEMPTED;
    r->init_status = 0;
}

static void test_every_call_before_init(void **state) {
    (void)state;
    th_result *r = th_result_new();
    th_run(r, NULL, child_all_before_init, NULL);
    assert_true(r->exited && r->exit_code == 0);
    assert_int_equal(r->user_int[0], CUDALOAD_ERROR_NOT_INITIALIZED);
    assert_int_equal(r->user_int[1], CUDALOAD_ERROR_NOT_INITIALIZED);
    assert_int_equal(r->user_int[2], CUDALOAD_ERROR_NOT_INITIALIZED);
    assert_int_equal(r->user_int[3], 0);
    assert_int_equal(r->user_int[4], 1);
    assert_int_equal(r->user_int[5], 1);
    assert_int_equal(r->user_int[6], CUDALOAD_ERROR_INVALID_ARGUMENT); /* NULL out */
    assert_int_equal(r->user_int[7], 0);
    assert_int_equal(r->user_int[8], CUDALOAD_OK);                     /* set_backend(CUBLAS) */
    assert_int_equal(r->user_int[9], CUDALOAD_ERROR_INVALID_ARGUMENT); /* set_backend(9) */
    assert_non_null(strstr(r->user, "cudaload_set_backend: 9 is not a backend"));
    assert_int_equal(r->user_int[10], 0); /* still not initialised */
    assert_int_equal(r->user_int[11], 1); /* no call ran: last_backend AUTO, nothing attempted */
    th_result_free(r);
}

/* ---- accessors while other threads run init (make check-tsan) ---- */

#define N_INIT 8
#define N_READ 8
static cudaload_options conc_opts;
static atomic_int conc_stop;
static atomic_int conc_anomalies;
static atomic_int conc_reads_before; /* reads that saw no completed init yet */
static char conc_first_anomaly[512];
static atomic_flag conc_anomaly_taken = ATOMIC_FLAG_INIT;

static void anomaly(const char *what, int value) {
    atomic_fetch_add(&conc_anomalies, 1);
    if (!atomic_flag_test_and_set(&conc_anomaly_taken))
        snprintf(conc_first_anomaly, sizeof conc_first_anomaly, "%s (%d)", what, value);
}

static void *conc_init(void *arg) {
    (void)arg;
    return (void *)(intptr_t)cudaload_init(&conc_opts);
}

static void *conc_read(void *arg) {
    (void)arg;
    int after = 0;
    while (after < 200) {
        int done = cudaload_is_initialized();
        cudaload_library_info info = {.size = sizeof info};
        cudaload_status st = cudaload_get_library_info(CUDALOAD_LIB_CUDART, &info);
        if (st != CUDALOAD_OK) anomaly("get_library_info", st);
        int v = 0;
        cudaload_status dv = cudaload_driver_version(&v);
        size_t n = 99;
        const cudaload_root *roots = cudaload_roots(&n);
        const char *err = cudaload_last_error();
        if (!err) anomaly("last_error NULL", 0);
        const cudaload_cudart_table *rt = cudaload_cudart();
        void *h = cudaload_handle(CUDALOAD_LIB_CUDART);
        int sym = cudaload_has_symbol(CUDALOAD_LIB_CUDART, "cudaGetDeviceCount");
        if (!done) {
            atomic_fetch_add(&conc_reads_before, 1);
            if (dv != CUDALOAD_OK && dv != CUDALOAD_ERROR_NOT_INITIALIZED) anomaly("driver_version before", dv);
        } else {
            /* init had completed before these calls: all of it must be visible */
            if (info.status != CUDALOAD_OK || !info.path) anomaly("cudart info after init", info.status);
            if (dv != CUDALOAD_OK || v != 13000) anomaly("driver_version after init", v);
            if (!roots || n != 1 || !roots[0].path) anomaly("roots after init", (int)n);
            /* a hand-written entry (filled by the walk) and a generated one (by the table's
             * first ask, which these threads race to make): both there when it is handed out */
            if (!rt || !rt->cudaGetDeviceCount || !rt->cudaStreamBeginCapture || !rt->has.cudaStreamBeginCapture)
                anomaly("cudart table after init", 0);
            if (!h) anomaly("handle after init", 0);
            if (sym != 1) anomaly("has_symbol after init", sym);
            if (atomic_load(&conc_stop)) after++;
        }
    }
    return NULL;
}

static void child_concurrent(th_result *r, void *arg) {
    conc_opts = *(const cudaload_options *)arg;
    pthread_t ti[N_INIT], tr[N_READ];
    for (int i = 0; i < N_READ; i++) pthread_create(&tr[i], NULL, conc_read, NULL);
    for (int i = 0; i < N_INIT; i++) pthread_create(&ti[i], NULL, conc_init, NULL);
    int same = 1;
    for (int i = 0; i < N_INIT; i++) {
        void *ret;
        pthread_join(ti[i], &ret);
        if ((intptr_t)ret != CUDALOAD_OK) same = 0;
    }
    atomic_store(&conc_stop, 1);
    for (int i = 0; i < N_READ; i++) pthread_join(tr[i], NULL);
    r->user_int[0] = same;
    r->user_int[1] = atomic_load(&conc_anomalies);
    r->user_int[2] = atomic_load(&conc_reads_before);
    snprintf(r->user, sizeof r->user, "%s", conc_first_anomaly);
    th_capture(r, cudaload_init(NULL));
}

static void test_concurrent_accessors(void **state) {
    (void)state;
    const char *roots[] = {th_fixture("toolkit-cu13-wheel")};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER), 0);
    const char *env[] = {driver_env, NULL};
    th_result *r = th_result_new();
    th_run(r, env, child_concurrent, &o);
    expect_init(r, CUDALOAD_OK, NULL);
    assert_int_equal(r->user_int[0], 1);
    if (r->user_int[1] != 0) fail_msg("%d inconsistent reads; first: %s", r->user_int[1], r->user);
    print_message("%d reads before init completed\n", r->user_int[2]);
    assert_int_equal(r->maps_count[CUDALOAD_LIB_CUDART], 1);
    th_result_free(r);
}

/* ---- silence: nothing on stdout or stderr unless CUDALOAD_DEBUG=1 / CUDALOAD_FLAG_DEBUG ---- */

/* The child sends its fd 1 and fd 2 to two files, then runs init and more of the API (failing
 * and not); the parent reads the files. */
typedef struct captured_arg {
    char out[PATH_MAX], err[PATH_MAX];
    cudaload_options o;
} captured_arg;

static void child_captured(th_result *r, void *arg) {
    const captured_arg *c = arg;
    fflush(NULL);
    int fo = open(c->out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int fe = open(c->err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fo < 0 || fe < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0) {
        r->user_int[15] = errno ? errno : -1;
        return;
    }
    close(fo);
    close(fe);
    th_init_child(r, (void *)&c->o);
    int v = 0, n = 0;
    cudaload_driver_version(&v);
    cudaload_device_count(&n);
    cudaload_load_cublas();
    cudaload_kernels_info k = {.size = sizeof k};
    cudaload_kernels_info_get(0, &k);
    cudaload_saxpy(-1, 1.f, NULL, NULL, NULL);
    cudaload_init(NULL);
    fflush(NULL);
}

/* The file's contents (at most cap - 1 bytes), NUL-terminated, in a static buffer. */
static const char *slurp(const char *path, char *buf, size_t cap) {
    FILE *f = fopen(path, "rb");
    if (!f) fail_msg("cannot read %s: %s", path, strerror(errno));
    size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static char cap_out[1 << 16], cap_err[1 << 18];

/* Runs c->o in a child with env; stdout and stderr land in cap_out and cap_err. */
static void run_captured(th_result *r, const char *const *env, captured_arg *c, const char *dir) {
    snprintf(c->out, sizeof c->out, "%s/stdout", dir);
    snprintf(c->err, sizeof c->err, "%s/stderr", dir);
    th_run(r, env, child_captured, c);
    if (!r->exited || r->exit_code != 0) fail_msg("child did not exit cleanly (exit %d)", r->exit_code);
    if (r->user_int[15]) fail_msg("could not redirect the child's stdout/stderr: %s", strerror(r->user_int[15]));
    slurp(c->out, cap_out, sizeof cap_out);
    slurp(c->err, cap_err, sizeof cap_err);
    /* stdout is never written, debug or not */
    if (cap_out[0]) fail_msg("the library wrote to stdout:\n%s", cap_out);
}

/* The scenarios: a failing init (every candidate bad), no library at all, a bad option, and a
 * successful init (bad candidates first, then cuBLAS loaded too). */
enum { SC_BAD, SC_NONE, SC_OPTION, SC_GOOD, SC_COUNT };

static void scenario(int which, const char *empty, captured_arg *c, const char **env_extra) {
    static const char *roots_bad[4], *roots_good[4], *roots_none[1];
    roots_bad[0] = roots_good[0] = th_fixture("bad/empty/lib");
    roots_bad[1] = roots_good[1] = th_fixture("bad/text/lib");
    roots_bad[2] = roots_good[2] = th_fixture("bad/missing-symbol/lib");
    roots_bad[3] = th_fixture("bad/truncated/lib");
    roots_good[3] = th_fixture("toolkit-cu13-wheel");
    roots_none[0] = empty;
    memset(&c->o, 0, sizeof c->o);
    *env_extra = NULL;
    switch (which) {
    case SC_BAD: c->o = th_opts(roots_bad, 4, SRC(CALLER), 0); break;
    case SC_NONE: c->o = th_opts(roots_none, 1, SRC(CALLER), 0); break;
    case SC_OPTION:
        c->o = th_opts(roots_good, 4, 0, 0);
        *env_extra = "CUDALOAD_SOURCES=caller,bogus";
        break;
    default: c->o = th_opts(roots_good, 4, SRC(CALLER), CUDALOAD_FLAG_LOAD_CUBLAS); break;
    }
}

static const int scenario_status[SC_COUNT] = {CUDALOAD_ERROR_NOT_FOUND, CUDALOAD_ERROR_NOT_FOUND,
                                              CUDALOAD_ERROR_INVALID_OPTION, CUDALOAD_OK};
static const char *const scenario_name[SC_COUNT] = {"every candidate bad", "no library", "bad option", "success"};

static void test_silent_without_debug(void **state) {
    (void)state;
    char *dir = th_tmpdir(), empty[PATH_MAX + 16];
    snprintf(empty, sizeof empty, "%s/empty", dir);
    th_mkdirs(empty);
    static captured_arg c;
    th_result *r = th_result_new();
    /* unset, and set to "0" (off) */
    static const char *const debug_values[] = {NULL, "CUDALOAD_DEBUG=0"};
    for (int sc = 0; sc < SC_COUNT; sc++) {
        for (size_t d = 0; d < 2; d++) {
            const char *extra;
            scenario(sc, empty, &c, &extra);
            const char *env[] = {driver_env, extra ? extra : debug_values[d], extra ? debug_values[d] : NULL, NULL};
            run_captured(r, env, &c, dir);
            if (r->init_status != scenario_status[sc])
                fail_msg("%s: init returned %s; message:\n%s", scenario_name[sc],
                         cudaload_status_name((cudaload_status)r->init_status), r->error);
            if (cap_err[0])
                fail_msg("%s (%s): the library wrote to stderr without CUDALOAD_DEBUG:\n%s", scenario_name[sc],
                         debug_values[d] ? debug_values[d] : "CUDALOAD_DEBUG unset", cap_err);
        }
        /* the failures have something to say: in the message, not on stderr */
        if (scenario_status[sc] != CUDALOAD_OK) assert_true(strlen(r->error) > 20);
    }
    assert_int_equal(r->cublas_status, CUDALOAD_OK); /* the last: success, cuBLAS loaded too */
    th_result_free(r);
    free(dir);
}

/* Every candidate of every library, as "cudaload: <lib> candidate <path> [<source>]: <reason>";
 * every line of the trace starts with "cudaload: ". Returns the number of candidates checked. */
static int expect_traced(const th_result *r, const char *trace, const char *what) {
    int checked = 0;
    for (int lib = 0; lib < CUDALOAD_LIB_COUNT_; lib++) {
        const th_lib *l = &r->lib[lib];
        for (int i = 0; i < l->n_candidates && i < TH_MAX_CANDS; i++) {
            char line[2048];
            snprintf(line, sizeof line, "cudaload: %s candidate %s [%s]: %s", cudaload_lib_name((cudaload_lib)lib),
                     l->cand[i].path, cudaload_source_name((cudaload_source)l->cand[i].source), l->cand[i].reason);
            if (!strstr(trace, line)) fail_msg("%s: the trace lacks '%s'; trace:\n%s", what, line, trace);
            checked++;
        }
    }
    for (const char *p = trace; *p;) {
        if (strncmp(p, "cudaload: ", 10) != 0) fail_msg("%s: a trace line without the prefix: %.80s", what, p);
        const char *nl = strchr(p, '\n');
        if (!nl) fail_msg("%s: the trace does not end with a newline", what);
        p = nl + 1;
    }
    return checked;
}

static void test_debug_traces_every_candidate(void **state) {
    (void)state;
    char *dir = th_tmpdir(), empty[PATH_MAX + 16], want[PATH_MAX + 64];
    snprintf(empty, sizeof empty, "%s/empty", dir);
    th_mkdirs(empty);
    static captured_arg c;
    th_result *r = th_result_new();
    const char *extra;

    /* CUDALOAD_DEBUG=1, a failing init: the driver, each bad candidate with its reason */
    scenario(SC_BAD, empty, &c, &extra);
    const char *env[] = {driver_env, "CUDALOAD_DEBUG=1", NULL};
    run_captured(r, env, &c, dir);
    assert_int_equal(r->init_status, CUDALOAD_ERROR_NOT_FOUND);
    assert_int_equal(r->lib[CUDALOAD_LIB_CUDART].n_candidates, 4);
    assert_int_equal(expect_traced(r, cap_err, "CUDALOAD_DEBUG=1, all bad"), 5); /* the driver + 4 */
    assert_non_null(strstr(cap_err, "cudaload: cudart candidate "));
    assert_non_null(strstr(cap_err, ": empty file (0 bytes)\n"));
    assert_non_null(strstr(cap_err, ": not an ELF file"));
    assert_non_null(strstr(cap_err, ": missing required symbol cudaRuntimeGetVersion"));
    assert_non_null(strstr(cap_err, ": truncated ELF"));
    assert_non_null(strstr(cap_err, "cudaload: init: CUDALOAD_ERROR_NOT_FOUND\n"));

    /* no library: no candidate, but each root and the result */
    scenario(SC_NONE, empty, &c, &extra);
    run_captured(r, env, &c, dir);
    assert_int_equal(r->init_status, CUDALOAD_ERROR_NOT_FOUND);
    assert_int_equal(r->lib[CUDALOAD_LIB_CUDART].n_candidates, 0);
    expect_traced(r, cap_err, "CUDALOAD_DEBUG=1, no library");
    snprintf(want, sizeof want, "cudaload: root 0: %s (caller)\n", empty);
    if (!strstr(cap_err, want)) fail_msg("the trace lacks '%s':\n%s", want, cap_err);
    assert_non_null(strstr(cap_err, "cudaload: init: CUDALOAD_ERROR_NOT_FOUND\n"));

    /* CUDALOAD_FLAG_DEBUG (no variable), a successful init with cuBLAS: every candidate of
     * every library, the skipped ones and the ones taken */
    scenario(SC_GOOD, empty, &c, &extra);
    c.o.flags |= CUDALOAD_FLAG_DEBUG;
    const char *env2[] = {driver_env, NULL};
    run_captured(r, env2, &c, dir);
    assert_int_equal(r->init_status, CUDALOAD_OK);
    assert_int_equal(r->cublas_status, CUDALOAD_OK);
    int n = expect_traced(r, cap_err, "CUDALOAD_FLAG_DEBUG, success");
    assert_true(n >= 7); /* driver, 3 bad + 1 cudart, cublasLt, cublas */
    snprintf(want, sizeof want, "cudaload: cudart candidate %s/nvidia/cu13/lib/libcudart.so.13 [caller]: taken\n",
             th_fixture("toolkit-cu13-wheel"));
    if (!strstr(cap_err, want)) fail_msg("the trace lacks '%s':\n%s", want, cap_err);
    assert_non_null(strstr(cap_err, "cudaload: init: CUDALOAD_OK\n"));

    /* CUDALOAD_DEBUG=time: the same lines, each stamped "[<us> us] " after the prefix, the
     * stamps never going back */
    scenario(SC_GOOD, empty, &c, &extra);
    const char *env3[] = {driver_env, "CUDALOAD_DEBUG=time", NULL};
    run_captured(r, env3, &c, dir);
    assert_int_equal(r->init_status, CUDALOAD_OK);
    double last = -1;
    int lines = 0;
    for (const char *p = cap_err; *p; lines++) {
        double us = -1;
        int used = 0;
        if (sscanf(p, "cudaload: [%lf us] %n", &us, &used) != 1 || used == 0)
            fail_msg("CUDALOAD_DEBUG=time: a line without its stamp: %.80s", p);
        if (us < last) fail_msg("CUDALOAD_DEBUG=time: %.1f us after %.1f us", us, last);
        last = us;
        const char *nl = strchr(p, '\n');
        if (!nl) fail_msg("CUDALOAD_DEBUG=time: the trace does not end with a newline");
        p = nl + 1;
    }
    assert_true(lines >= 8);
    assert_non_null(strstr(cap_err, " us] init: CUDALOAD_OK\n"));
    th_result_free(r);
    free(dir);
}

/* ---- fork while another thread is inside cudaload_init (its walk under way) ---- */

static atomic_int busy_started;

static void *busy_init(void *arg) {
    atomic_store(&busy_started, 1);
    return (void *)(intptr_t)cudaload_init((const cudaload_options *)arg);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void child_fork_during_init(th_result *r, void *arg) {
    pthread_t t;
    pthread_create(&t, NULL, busy_init, arg);
    while (!atomic_load(&busy_started)) {
        struct timespec w = {0, 1000000L};
        nanosleep(&w, NULL);
    }
    /* the thread is now in the fake cuDriverGetVersion (1500 ms), inside init's walk */
    struct timespec ts = {0, 300 * 1000000L};
    nanosleep(&ts, NULL);
    double t0 = now_s();
    pid_t pid = fork();
    if (pid == 0) {
        /* the atfork handler made fork wait until init's walk ended: this copy of the lock
         * is free and the state complete, the same as the parent's */
        int ok = cudaload_is_initialized() == 1;
        ok &= cudaload_init(NULL) == CUDALOAD_OK;
        cudaload_library_info info = {.size = sizeof info};
        ok &= cudaload_get_library_info(CUDALOAD_LIB_CUDART, &info) == CUDALOAD_OK && info.status == CUDALOAD_OK &&
              info.path != NULL && info.loaded == 1;
        int v = 0;
        ok &= cudaload_driver_version(&v) == CUDALOAD_OK && v == 13000;
        ok &= cudaload_cudart() != NULL;
        _exit(ok ? 0 : 1);
    }
    r->user_int[1] = (int)((now_s() - t0) * 1000); /* how long fork() waited */
    r->user_int[0] = th_wait_or_kill(pid, 10); /* TH_WAIT_HUNG: deadlocked */
    void *ret = NULL;
    pthread_join(t, &ret);
    th_capture(r, (cudaload_status)(intptr_t)ret);
}

static void test_fork_while_init_busy(void **state) {
    (void)state;
    const char *roots[] = {th_fixture("toolkit-cu13-wheel")};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER), 0);
    const char *env[] = {driver_env, "FAKE_CUDA_DRIVER_GET_VERSION_DELAY_MS=1500", NULL};
    th_result *r = th_result_new();
    th_run(r, env, child_fork_during_init, &o);
    expect_init(r, CUDALOAD_OK, NULL);
    if (r->user_int[0] == TH_WAIT_HUNG) fail_msg("the forked child deadlocked on the loader's lock");
    if (r->user_int[0] != 0) fail_msg("the forked child saw an incomplete or inconsistent state (exit %d)", r->user_int[0]);
    /* fork was called while init walked: it waited for init (~1200 ms) */
    if (r->user_int[1] < 500) fail_msg("fork() returned after %d ms: init was not running when it was called", r->user_int[1]);
    print_message("fork() waited %d ms for init to finish\n", r->user_int[1]);
    assert_int_equal(r->maps_count[CUDALOAD_LIB_CUDART], 1);
    th_result_free(r);
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "--setuid-helper") == 0) return setuid_helper(argv[2], argv[3]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_env_garbage),
        cmocka_unit_test(test_empty_elements_never_cwd),
        cmocka_unit_test(test_no_library_anywhere),
        cmocka_unit_test(test_optional_symbol_missing_returns_status),
        cmocka_unit_test(test_at_secure_setuid),
        cmocka_unit_test(test_repeated_init),
        cmocka_unit_test(test_every_call_before_init),
        cmocka_unit_test(test_concurrent_accessors),
        cmocka_unit_test(test_silent_without_debug),
        cmocka_unit_test(test_debug_traces_every_candidate),
        cmocka_unit_test(test_fork_while_init_busy),
    };
    return cmocka_run_group_tests_name("faults", tests, setup, NULL);
}
