/* SPDX-License-Identifier: Apache-2.0 */
/*
 * failalloc.c -- fails the Nth allocation made by the code linked with it, for the
 * allocation-failure tests (test_alloc_faults.c; docs/reliability.md).
 *
 * Linked with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup,--wrap=strndup,
 * --wrap=realpath: only the calls made from the objects of that link (libcudaload.a, the
 * stubs, the probe's files, the test) go through here; the C library's own allocations
 * (inside dlopen, fopen, opendir) and those of the CUDA libraries loaded are not counted:
 * their failures are theirs to handle.
 *
 * Armed by fa_arm(n) in the process, or by CUDALOAD_TEST_FAIL_ALLOC=n in the environment (a
 * program run as a whole: the probe, a stub program). Exactly the nth counted call fails
 * (NULL, errno ENOMEM); the ones before and after succeed. With CUDALOAD_TEST_FAIL_ALLOC_LOG
 * set to a file, the process writes there at exit "<calls counted> <1 if the nth failed>",
 * so that a driver loop knows when n went past the last allocation.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "failalloc.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
char *__real_realpath(const char *path, char *resolved);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);
char *__wrap_realpath(const char *path, char *resolved);

static atomic_long fa_count, fa_fail_at;
static atomic_int fa_failed;

void fa_arm(long n) {
    atomic_store(&fa_count, 0);
    atomic_store(&fa_failed, 0);
    atomic_store(&fa_fail_at, n);
}

long fa_disarm(void) {
    atomic_store(&fa_fail_at, 0);
    return atomic_load(&fa_count);
}

int fa_failed_once(void) { return atomic_load(&fa_failed); }

/* 1 when this call is the one to fail */
static int fa_fail_now(void) {
    long at = atomic_load(&fa_fail_at);
    if (at <= 0) return 0;
    if (atomic_fetch_add(&fa_count, 1) + 1 != at) return 0;
    atomic_store(&fa_failed, 1);
    errno = ENOMEM;
    return 1;
}

void *__wrap_malloc(size_t n) { return fa_fail_now() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t size) { return fa_fail_now() ? NULL : __real_calloc(n, size); }
void *__wrap_realloc(void *p, size_t n) { return fa_fail_now() ? NULL : __real_realloc(p, n); }
char *__wrap_strdup(const char *s) { return fa_fail_now() ? NULL : __real_strdup(s); }
char *__wrap_strndup(const char *s, size_t n) { return fa_fail_now() ? NULL : __real_strndup(s, n); }
/* realpath allocates only when resolved is NULL */
char *__wrap_realpath(const char *path, char *resolved) {
    return !resolved && fa_fail_now() ? NULL : __real_realpath(path, resolved);
}

static void fa_report(void) {
    const char *log = getenv("CUDALOAD_TEST_FAIL_ALLOC_LOG");
    FILE *f = log ? fopen(log, "w") : NULL;
    if (!f) return;
    fprintf(f, "%ld %d\n", atomic_load(&fa_count), atomic_load(&fa_failed));
    fclose(f);
}

__attribute__((constructor)) static void fa_from_env(void) {
    const char *n = getenv("CUDALOAD_TEST_FAIL_ALLOC");
    if (!n || atol(n) <= 0) return;
    fa_arm(atol(n));
    atexit(fa_report);
}
