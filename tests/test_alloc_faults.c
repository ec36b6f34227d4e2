/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_alloc_faults.c -- every allocation libcudaload makes may fail: with the Nth one failed
 * (tests/failalloc.c, linked with --wrap so that only the allocations of libcudaload, the
 * probe's report and the stubs count), for N = 1, 2, ... until a run makes fewer than N,
 *
 *   - init and a library load (the walk: cudart, then cuBLAS and its dependency cuBLASLt);
 *   - the probe's report (cudaload-probe --json, built with the injector);
 *   - a stub's first call (a cuBLAS + runtime program linked to the stubs, built with it)
 *
 * each give a status (the normal outcome or CUDALOAD_ERROR_OUT_OF_MEMORY; the programs exit
 * with their normal codes), never a crash, and nothing leaks: under ASan the child runs
 * LeakSanitizer before it ends (make check-sanitize); under valgrind every child's definite
 * leaks fail the run (make check-valgrind).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cudaload.h"
#include "failalloc.h"
#include "harness.h"
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

#define SRC(s) CUDALOAD_SOURCE_BIT(CUDALOAD_SOURCE_##s)
#define MAX_N 20000 /* far more allocations than any of the runs makes */

static const char *driver_env;

static int setup(void **state) {
    (void)state;
    if (!th_require_build(1)) return -1;
    driver_env = th_fake_driver_env();
    return 0;
}

/* LeakSanitizer on the child's heap now (the harness's children end with _exit, which skips
 * the check at exit): 1 when something leaked. Without ASan: 0 (valgrind checks every child). */
static int leaked(void) {
#if defined(__SANITIZE_ADDRESS__)
    return __lsan_do_recoverable_leak_check() != 0;
#else
    return 0;
#endif
}

/* ---- init and the walk, in the process ---- */

typedef struct walk_job {
    long n;
    const cudaload_options *o;
} walk_job;

static void child_walk(th_result *r, void *arg) {
    const walk_job *j = arg;
    fa_arm(j->n);
    cudaload_status st = cudaload_init(j->o);
    /* under valgrind, init alone: cuBLASLt's 500 MB take it seconds to map, in each of ~60 runs */
    r->user_int[0] = RUNNING_ON_VALGRIND ? CUDALOAD_OK : cudaload_load_cublas();
    /* the report of both: what a caller reads next */
    cudaload_library_info info;
    memset(&info, 0, sizeof info);
    info.size = sizeof info;
    r->user_int[3] = cudaload_get_library_info(CUDALOAD_LIB_CUBLAS, &info);
    r->user_int[1] = (int)fa_disarm();
    r->user_int[2] = fa_failed_once();
    th_capture(r, st);
    r->user_int[4] = leaked();
}

static int is_oom_or(int st, int normal) { return st == normal || st == CUDALOAD_ERROR_OUT_OF_MEMORY; }

/* One configuration of init, every N. */
static void walk_every_n(const char *what, const cudaload_options *o) {
    const char *env[] = {driver_env, NULL};
    th_result *r = th_result_new();
    walk_job j = {0, o};
    th_run(r, env, child_walk, &j); /* nothing fails: the normal outcome */
    assert_int_equal(r->init_status, CUDALOAD_OK);
    assert_int_equal(r->user_int[0], CUDALOAD_OK);
    int runs = 0, ooms = 0;
    for (j.n = 1; j.n < MAX_N; j.n++) {
        th_run(r, env, child_walk, &j);
        if (!r->exited || r->exit_code != 0)
            fail_msg("%s, N=%ld: the child did not end normally (exit %d)", what, j.n, r->exit_code);
        if (!is_oom_or(r->init_status, CUDALOAD_OK) || !is_oom_or(r->user_int[0], CUDALOAD_OK) ||
            (r->user_int[3] != CUDALOAD_OK && r->user_int[3] != CUDALOAD_ERROR_OUT_OF_MEMORY))
            fail_msg("%s, N=%ld: init %s, load_cublas %s, get_library_info %s; want OK or OUT_OF_MEMORY; message:\n%s", what,
                     j.n, cudaload_status_name((cudaload_status)r->init_status),
                     cudaload_status_name((cudaload_status)r->user_int[0]),
                     cudaload_status_name((cudaload_status)r->user_int[3]), r->error);
        if (r->user_int[4]) fail_msg("%s, N=%ld: LeakSanitizer found a leak (its report is above)", what, j.n);
        runs++;
        ooms += r->init_status == CUDALOAD_ERROR_OUT_OF_MEMORY || r->user_int[0] == CUDALOAD_ERROR_OUT_OF_MEMORY;
        if (!r->user_int[2]) break; /* fewer than N allocations: every one has failed once */
    }
    print_message("%s: %d runs, the last made %d allocations; %d ended OUT_OF_MEMORY\n", what, runs, r->user_int[1], ooms);
    assert_true(j.n < MAX_N);
    assert_true(ooms > 0);
    th_result_free(r);
}

/* A caller root (the walk's roots, a dependency beside its library), the system search (ld.so's
 * by SONAME: the toolkit's, through ld.so.cache) and find-only (located, checked, not loaded). */
static void test_walk_every_allocation_fails(void **state) {
    (void)state;
    const char *roots[] = {th_fixture("toolkit-cu13-wheel")};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER), 0);
    walk_every_n("a caller root", &o);
    char where[PATH_MAX];
    if (!th_loader_resolves("libcudart.so.13", where, sizeof where)) {
        print_message("the system search part skipped: ld.so finds no libcudart.so.13 here\n");
    } else {
        o = th_opts(NULL, 0, SRC(SYSTEM), 0);
        walk_every_n("the system search", &o);
    }
    o = th_opts(roots, 1, SRC(CALLER), CUDALOAD_FLAG_FIND_ONLY);
    walk_every_n("find-only", &o);
}

/* ---- a program built with the injector, run for N = 1, 2, ... ---- */

/* Runs argv with CUDALOAD_TEST_FAIL_ALLOC=n (and env); its exit code, or 128 + signal, and
 * whether the nth allocation was reached (from CUDALOAD_TEST_FAIL_ALLOC_LOG). */
static int run_program(char *const argv[], const char *const *env, long n, int *reached) {
    static char log[PATH_MAX];
    if (!log[0]) {
        char *dir = th_tmpdir();
        snprintf(log, sizeof log, "%s/failalloc.log", dir);
        free(dir);
    }
    unlink(log);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        char nb[32];
        snprintf(nb, sizeof nb, "%ld", n ? n : MAX_N * 10); /* 0: counted, never reached */
        setenv("CUDALOAD_TEST_FAIL_ALLOC", nb, 1);
        setenv("CUDALOAD_TEST_FAIL_ALLOC_LOG", log, 1);
        for (size_t i = 0; env && env[i]; i++) putenv((char *)env[i]);
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) dup2(devnull, 1);
        execv(argv[0], argv);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    long count = 0;
    int failed = 0;
    FILE *f = fopen(log, "r");
    if (f) {
        if (fscanf(f, "%ld %d", &count, &failed) != 2) failed = 0;
        fclose(f);
    }
    *reached = failed;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* A program run under every N: each run ends with its normal exit code (the run where nothing
 * fails) or with oom_code (what it says for a lack of memory). */
static void every_n(const char *what, char *const argv[], const char *const *env, int oom_code) {
    int reached = 0;
    int normal = run_program(argv, env, 0, &reached);
    assert_true(normal < 128);
    long n;
    for (n = 1; n < MAX_N; n++) {
        int code = run_program(argv, env, n, &reached);
        if (code != normal && code != oom_code)
            fail_msg("%s, allocation %ld failed: exit code %d (over 128: a signal), want %d or %d", what, n, code, normal,
                     oom_code);
        if (!reached) break;
    }
    print_message("%s: every one of %ld allocations failed once, no crash\n", what, n - 1);
    assert_true(n < MAX_N);
}

/* The programs are run ~80 times each: under valgrind (which follows them) that is an hour, so
 * there they are left to check-sanitize, where LeakSanitizer checks each run. */
#define SKIP_UNDER_VALGRIND()                                                                              \
    do {                                                                                                   \
        if (RUNNING_ON_VALGRIND)                                                                           \
            TH_SKIP("under valgrind: ~80 runs of a program that maps cuBLASLt (minutes each there); make " \
                    "check-sanitize runs it with LeakSanitizer");                                          \
    } while (0)

static void test_probe_every_allocation_fails(void **state) {
    (void)state;
    SKIP_UNDER_VALGRIND();
    char probe[PATH_MAX], roots_env[PATH_MAX + 32];
    snprintf(probe, sizeof probe, "%s/tests/cudaload-probe-failalloc", th_require_build(0));
    snprintf(roots_env, sizeof roots_env, "CUDALOAD_PATH=%s/nvidia/cu13/lib", th_fixture("toolkit-cu13-wheel"));
    char *argv[] = {probe, "--json", NULL};
    const char *env[] = {driver_env, roots_env, "CUDALOAD_SOURCES=override", NULL};
    /* out of memory: exit code 1 (a library cannot be used, or the report cannot be made) */
    every_n("cudaload-probe --json", argv, env, 1);
}

static void test_stub_first_call_every_allocation_fails(void **state) {
    (void)state;
    SKIP_UNDER_VALGRIND();
    char prog[PATH_MAX], roots_env[PATH_MAX + 32];
    snprintf(prog, sizeof prog, "%s/tests/stub_blas_failalloc", th_require_build(0));
    snprintf(roots_env, sizeof roots_env, "CUDALOAD_PATH=%s/nvidia/cu13/lib", th_fixture("toolkit-cu13-wheel"));
    char *argv[] = {prog, NULL};
    const char *env[] = {driver_env, roots_env, "CUDALOAD_SOURCES=override", NULL};
    every_n("a stub's first call (cuBLAS, the runtime)", argv, env, 0); /* the program's statuses go to stdout */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_walk_every_allocation_fails),
        cmocka_unit_test(test_probe_every_allocation_fails),
        cmocka_unit_test(test_stub_first_call_every_allocation_fails),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
