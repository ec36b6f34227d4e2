/*
 * harness.h -- helpers for the cmocka tests.
 *
 * libcudaload's state is per process and built once, so each scenario runs in a forked
 * child: th_run() forks, clears every variable that steers the search, applies the
 * scenario's environment, runs the child function and collects a th_result in shared
 * memory for the parent to assert on.
 */
#ifndef CUDALOAD_TEST_HARNESS_H
#define CUDALOAD_TEST_HARNESS_H

#include <stddef.h>

#include "cudaload.h"

#define TH_MAX_CANDS 24
#define TH_MAX_ROOTS 32

typedef struct th_cand {
    int result;
    int source;
    char path[1024];
    char reason[512];
} th_cand;

typedef struct th_lib {
    int status, loaded, source, major, version, already_loaded;
    char path[4096];
    char soname[64];
    char branch[64];
    int n_candidates;
    th_cand cand[TH_MAX_CANDS];
} th_lib;

typedef struct th_result {
    int exited, exit_code, signaled, timed_out;
    int init_status;
    int cublas_status;
    char error[16384];
    th_lib lib[CUDALOAD_LIB_COUNT_];
    int n_roots;
    char roots[TH_MAX_ROOTS][512];
    int root_source[TH_MAX_ROOTS];
    int maps_count[CUDALOAD_LIB_COUNT_]; /* distinct files of that library mapped in the child */
    int user_int[16];                    /* free for the scenario's own child function */
    char user[4096];
} th_result;

/* A result in shared memory (the child writes it, the parent reads it). */
th_result *th_result_new(void);
void th_result_free(th_result *r);

/* Runs child(r, arg) in a forked process with env ("K=V" strings, NULL-terminated, may be
 * NULL) applied after the search variables were cleared. Waits up to 120 s. */
void th_run(th_result *r, const char *const *env, void (*child)(th_result *r, void *arg), void *arg);

/* In a child: record init_status, the last error, every library's info, the roots and the
 * mapping counts. */
void th_capture(th_result *r, cudaload_status init_status);

/* A child: cudaload_init(arg as const cudaload_options *, or NULL), then cuBLAS when
 * TH_LOAD_CUBLAS=1, then th_capture. */
void th_init_child(th_result *r, void *arg);

/* Distinct files whose base name starts with prefix in /proc/self/maps. */
int th_count_maps(const char *prefix);

/* Fails the test unless lib was taken from a path starting with path_prefix and source. */
void th_assert_taken(const th_result *r, int lib, const char *path_prefix, int source);
/* Index of lib's first candidate whose path contains part, or -1. */
int th_find_candidate(const th_result *r, int lib, const char *part);

/* Fixtures (tests/fixtures.sh, dir in CUDALOAD_TEST_FIXTURES): an absolute path under it,
 * and a value from its fixtures.env. Returned strings live until exit. */
const char *th_fixture(const char *relpath);
const char *th_fixture_env(const char *key);

/* Small trees: a fresh temp dir (malloc'd), and file operations that fail the test on error. */
char *th_tmpdir(void);
void th_mkdirs(const char *path);
void th_symlink(const char *target, const char *linkpath);
void th_copy(const char *src, const char *dst);
void th_write(const char *path, const void *data, size_t n);

#endif
