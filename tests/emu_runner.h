/* SPDX-License-Identifier: Apache-2.0 */
/*
 * emu_runner.h -- what the two emulated test runners share (tests/aarch64/test_aarch64.c under
 * qemu, tests/windows/test_windows.c under wine): neither target has cmocka, so each is a small
 * runner of its own with these checks. CHECK records a failed assertion with its line; a case
 * exits 1 when any failed. EMU_RUNNER_NAME names the program in messages.
 */
#ifndef CUDALOAD_EMU_RUNNER_H
#define CUDALOAD_EMU_RUNNER_H

#include "cudaload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond)                                                                      \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "  %s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                                  \
        }                                                                                \
    } while (0)
#define CHECK_INT(a, b)                                                                               \
    do {                                                                                              \
        long long a_ = (long long)(a), b_ = (long long)(b);                                           \
        if (a_ != b_) {                                                                               \
            fprintf(stderr, "  %s:%d: CHECK failed: %s == %s (%lld != %lld)\n", __FILE__, __LINE__, #a, \
                    #b, a_, b_);                                                                      \
            failures++;                                                                               \
        }                                                                                             \
    } while (0)

/* A variable the run script sets; without it the runner was not started by that script. */
static const char *env_or_die(const char *name) {
    const char *v = getenv(name);
    if (!v || !v[0]) {
        fprintf(stderr, "%s: %s is not set (run through its run.sh)\n", EMU_RUNNER_NAME, name);
        exit(2);
    }
    return v;
}

static int expected(const char *var) { return atoi(env_or_die(var)); }

/* Does s end with tail? Case-insensitive on Windows: wine reports the drive letter as it likes. */
static int ends_with(const char *s, const char *tail) {
    size_t ls = s ? strlen(s) : 0, lt = strlen(tail);
#ifdef _WIN32
    return s && ls >= lt && _stricmp(s + ls - lt, tail) == 0;
#else
    return s && ls >= lt && strcmp(s + ls - lt, tail) == 0;
#endif
}

static cudaload_library_info info_of(cudaload_lib lib) {
    cudaload_library_info info = {.size = sizeof info};
    CHECK_INT(cudaload_get_library_info(lib, &info), CUDALOAD_OK);
    return info;
}

/* A candidate whose path ends with path_tail, recorded with that reason. */
static int has_reason(const cudaload_library_info *info, const char *path_tail, cudaload_reason reason) {
    for (size_t i = 0; i < info->n_candidates; i++)
        if (ends_with(info->candidates[i].path, path_tail) && info->details[i].reason == reason) return 1;
    return 0;
}

/* A library's outcome and candidates, on stderr, for a failed case. */
static void dump(const cudaload_library_info *info) {
    fprintf(stderr, "  %s: %s path=%s source=%s major=%d version=%d\n", info->name, cudaload_status_name(info->status),
            info->path ? info->path : "-", cudaload_source_name(info->source), info->major, info->version);
    for (size_t i = 0; i < info->n_candidates; i++)
        fprintf(stderr, "    %s [%s] %s\n", info->candidates[i].path, cudaload_reason_name(info->details[i].reason),
                info->candidates[i].reason);
}

/* cudaload_init with the caller's roots r1, r2 (either may be NULL) and flags. */
static cudaload_status init_roots(const char *r1, const char *r2, unsigned flags) {
    const char *roots[2] = {r1, r2};
    cudaload_options o;
    cudaload_options_init(&o);
    o.roots = roots;
    o.n_roots = r2 ? 2 : r1 ? 1 : 0;
    o.flags = flags;
    return cudaload_init(&o);
}

#endif
