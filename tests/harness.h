/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness.h -- helpers for the cmocka tests.
 *
 * libcudaload's state is per process and built once, so each scenario runs in a forked
 * child: th_run() forks, clears every variable that steers the search, applies the
 * scenario's environment, runs the child function and collects a th_result in shared
 * memory (MAP_SHARED | MAP_ANONYMOUS) for the parent to assert on.
 *
 * Needs cudaload.h only (no CUDA header). Include cmocka first, as cmocka requires:
 *     #include <setjmp.h>, <stdarg.h>, <stddef.h>, <stdint.h>, <cmocka.h>, then "harness.h"
 * Link: tests/harness.c build/libcudaload.a -lcmocka -ldl -lpthread.
 *
 * A child function records what it saw in its th_result and returns: it must not use cmocka
 * assertions (a failure would longjmp into the child's copy of the test runner). The harness
 * stops a child that escaped that way at its next th_run() with exit code TH_EXIT_ESCAPED.
 */
#ifndef CUDALOAD_TEST_HARNESS_H
#define CUDALOAD_TEST_HARNESS_H

#include <stddef.h>

#include "cudaload.h"

#define TH_MAX_CANDS 24
#define TH_MAX_ROOTS 32
#define TH_TIMEOUT_S 60      /* default child timeout; the environment's TH_TIMEOUT_S overrides */
#define TH_EXIT_ESCAPED 86   /* a child that left its function through a failed cmocka assertion */

typedef struct th_cand {
    int result;              /* cudaload_status */
    int source;              /* cudaload_source */
    char path[1024];
    char reason[512];
    int code;                /* cudaload_reason (info.details) */
    int major, value, needed;/* its parameters */
    char text[512];
} th_cand;

typedef struct th_lib {
    int status;              /* cudaload_status from cudaload_get_library_info; -1 if that failed */
    int loaded, source, major, version, already_loaded;
    char path[4096];
    char soname[64];
    char branch[64];         /* driver only */
    int n_candidates;        /* as reported (may exceed TH_MAX_CANDS; only that many are kept) */
    th_cand cand[TH_MAX_CANDS];
} th_lib;

typedef struct th_result {
    /* filled by th_run in the parent */
    int exited;              /* 1 when the child exited normally */
    int exit_code;           /* its exit status, -1 when it did not exit */
    int signaled;            /* the signal that ended it, 0 if none */
    int timed_out;           /* 1 when the harness killed it after the timeout */
    /* filled by the child (th_capture, th_init_child) */
    int init_status;         /* cudaload_init's status; -1 when not called */
    int cublas_status;       /* cudaload_load_cublas's (or cuBLAS's info) status; -1 when not known */
    char error[16384];       /* cudaload_last_error() after init (init's message when init failed) */
    th_lib lib[CUDALOAD_LIB_COUNT_];
    int n_roots;
    char roots[TH_MAX_ROOTS][512];
    int root_source[TH_MAX_ROOTS];
    int maps_count[CUDALOAD_LIB_COUNT_]; /* distinct files of that library mapped in the child
                                            (/proc/self/maps; by base name: libcuda.so*,
                                            libcudart.so*, libcublasLt.so*, libcublas.so.*) */
    int user_int[16];        /* free for the scenario's own child function */
    char user[4096];
} th_result;

/* A zeroed result in shared memory (the child writes it, the parent reads it). */
th_result *th_result_new(void);
void th_result_free(th_result *r);

/* Runs child(r, arg) in a forked process and waits for it. In the child, before child runs:
 * every CUDALOAD_* variable except the test suite's own (CUDALOAD_TEST_*, CUDALOAD_GPU_SITE)
 * is unset, and CUDA_HOME, CUDA_PATH,
 * CONDA_PREFIX, VIRTUAL_ENV, TH_LOAD_CUBLAS and every FAKE_CUDA_*; then each "K=V" of env
 * (NULL-terminated, may be NULL) is set. LD_LIBRARY_PATH cannot change after start: it stays.
 * The child ends with _exit(0) when child returns. r is cleared first (init_status and
 * cublas_status -1); exited, exit_code, signaled and timed_out are filled on return.
 * th_run fails the test when the child died of a signal, hung past the timeout (killed) or
 * escaped its function (TH_EXIT_ESCAPED); th_run_raw only reports them (to test crashes). */
void th_run(th_result *r, const char *const *env, void (*child)(th_result *r, void *arg), void *arg);
void th_run_raw(th_result *r, const char *const *env, void (*child)(th_result *r, void *arg), void *arg);

/* In a child: record init_status, the last error, every library's info, the roots and the
 * mapping counts. */
void th_capture(th_result *r, cudaload_status init_status);

/* A child: cudaload_init(arg as const cudaload_options *, or NULL); then, when arg's flags
 * include CUDALOAD_FLAG_LOAD_CUBLAS (and init succeeded) or TH_LOAD_CUBLAS=1,
 * cudaload_load_cublas() into cublas_status (else cuBLAS's info status); then th_capture.
 * r->error keeps init's message when init failed. */
void th_init_child(th_result *r, void *arg);

/* Distinct files whose base name starts with prefix in /proc/self/maps (-1 if unreadable). */
int th_count_maps(const char *prefix);

/* Fails the test (printing the library's candidates, init's status and the message) unless
 * lib was taken (status OK) from a path starting with path_prefix, with that source. */
void th_assert_taken(const th_result *r, int lib, const char *path_prefix, int source);
/* Index of lib's first candidate whose path contains part, or -1. */
int th_find_candidate(const th_result *r, int lib, const char *part);

/* Fixtures (tests/fixtures.sh, dir in CUDALOAD_TEST_FIXTURES): an absolute path under it,
 * and a value from its fixtures.env (the test fails when the key is absent). The returned
 * strings live until exit. */
const char *th_fixture(const char *relpath);
const char *th_fixture_env(const char *key);

/* Waits up to timeout_s for the forked child pid, polling every 100 ms, and kills it (SIGKILL)
 * when it is still running then. Returns its exit status, TH_WAIT_HUNG when it had to be
 * killed (a deadlock), TH_WAIT_SIGNALED when a signal ended it. For tests that fork on their
 * own (a fork while another thread holds a lock). */
#define TH_WAIT_HUNG 98
#define TH_WAIT_SIGNALED 99
int th_wait_or_kill(int pid, int timeout_s);

/* The file the dynamic loader itself resolves soname to (dlopen by SONAME, in a th_run child
 * that holds no CUDA library yet: this program's RUNPATH, LD_LIBRARY_PATH, ld.so.cache, the
 * default directories), realpath'ed into out[n]; returns 1. 0 when it resolves none, with
 * dlerror's text in out. */
int th_loader_resolves(const char *soname, char *out, size_t n);

/* Small trees: a fresh directory under $TMPDIR (or /tmp), its path malloc'd (the caller may
 * free it); the directory itself is removed when the process that made it exits, unless
 * TH_KEEP_TMP=1. File operations that fail the test loudly on error: mkdir -p, ln -sf,
 * cp (mode 0755), write (mode 0644). */
char *th_tmpdir(void);

/* $CUDALOAD_TEST_BUILD (with fixtures: also requiring $CUDALOAD_TEST_FIXTURES), or NULL
 * after telling stderr to run the test through `make check`. For a group setup. */
const char *th_require_build(int fixtures);

/* The CUDA toolkit the tests use: $CUDA_HOME when it is absolute, else /usr/local/cuda. make
 * exports CUDA_HOME only for a toolkit it made of pip's wheels (docs/toolkit.md); a machine with
 * a toolkit installed runs with /usr/local/cuda, as before. (static storage) */
const char *th_cuda_home(void);
/* The toolkit's driver link stub, <th_cuda_home()>/lib64/stubs/libcuda.so, or NULL when there is
 * none: no pip wheel ships it, so a toolkit made of wheels has none. A test of the real stub's
 * behaviour (cuDriverGetVersion fails with CUDA_ERROR_STUB_LIBRARY) skips then, saying so, with
 * TH_SKIP_NO_DRIVER_STUB(the path it wanted). (static storage) */
const char *th_driver_stub(void);
#define TH_SKIP_NO_DRIVER_STUB(path) \
    TH_SKIP("no driver link stub %s: a CUDA toolkit made of pip's wheels has none", (path))

/* "CUDALOAD_DRIVER_PATH=<build>/fake/libcuda.so.1": the fake driver for a scenario's env
 * (static storage; needs CUDALOAD_TEST_BUILD). */
const char *th_fake_driver_env(void);

/* cudaload_options from cudaload_options_init(), with these roots, sources and flags. */
cudaload_options th_opts(const char *const *roots, size_t n, unsigned sources, unsigned flags);
/* The GPU tests' set-up (tests/gpu): cudaload_init with CUDALOAD_GPU_SITE as the one root when
 * it is set, then the device count. Returns the count; *why (n bytes) is "" when a GPU is
 * usable, else the reason to skip. */
int th_gpu_init(char *why, size_t n);
/* Skips the running test, saying why (printf arguments, the first a string literal): prints
 * "skipped: <reason>", the line tests/run-tests.sh lists with the test's name (a skip without
 * one fails the run; under CI=true so does one tests/expected-skips.txt does not expect). */
/* RUNNING_ON_VALGRIND: nonzero under valgrind (its header where installed, else 0) */
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif

#define TH_SKIP(...)                                  \
    do {                                              \
        print_message("skipped: " __VA_ARGS__);       \
        print_message("\n");                          \
        skip();                                       \
    } while (0)
/* Skips the running test with the reason when why is not empty. */
#define TH_SKIP_IF(why)                                   \
    do {                                                  \
        if ((why)[0]) {                                   \
            print_message("skipped: %.300s\n", (why));    \
            skip();                                       \
        }                                                 \
    } while (0)
void th_mkdirs(const char *path);
void th_symlink(const char *target, const char *linkpath);
void th_copy(const char *src, const char *dst);
void th_write(const char *path, const void *data, size_t n);
/* Runs a shell command (printf-style); returns its exit status (-1 when it could not run) and,
 * when out is given, its stdout (a static buffer of 64 KiB, valid until the next call). */
int th_sh(const char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* `make install PREFIX=prefix` of the build under test (B=build, so a nested build directory
 * installs itself) into a fresh prefix, from the source tree (CUDALOAD_TEST_TOP, given by the
 * Makefile; build's parent for a run by hand), which it writes to top. Returns 0, or -1 with
 * make's output on stderr. */
int th_make_install(const char *build, const char *prefix, char *top, size_t top_size);

#endif
