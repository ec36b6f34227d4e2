/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_two_embedders.c -- two modules that each embed libcudaload.a (tests/embedder.c, built
 * twice) share one process, as two Python extensions built against different libcudaload
 * releases would: neither exports anything of libcudaload (not even with RTLD_GLOBAL), each
 * has its own state (init in one leaves the other uninitialized), and the second one reuses
 * the libcudart the first one loaded (source `loaded`, one mapping) instead of loading
 * another copy.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

static const char *build;

typedef struct embedder {
    void *handle;
    int (*init)(const char *root);
    int (*is_initialized)(void);
    int (*cudart)(char *path, size_t n);
    void *(*init_address)(void);
} embedder;

/* dlopen build/tests/embedder_<name>.so with mode and look up its four functions; 0 on failure
 * (the reason in r->user). */
static int embedder_open(th_result *r, embedder *e, const char *name, int mode) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/tests/embedder_%s.so", build, name);
    memset(e, 0, sizeof *e);
    if (!(e->handle = dlopen(path, mode))) {
        snprintf(r->user, sizeof r->user, "dlopen %s: %s", path, dlerror());
        return 0;
    }
    *(void **)&e->init = dlsym(e->handle, "embedder_init");
    *(void **)&e->is_initialized = dlsym(e->handle, "embedder_is_initialized");
    *(void **)&e->cudart = dlsym(e->handle, "embedder_cudart");
    *(void **)&e->init_address = dlsym(e->handle, "embedder_init_address");
    if (!e->init || !e->is_initialized || !e->cudart || !e->init_address) {
        snprintf(r->user, sizeof r->user, "%s lacks an embedder_* function", path);
        return 0;
    }
    return 1;
}

/* user_int: [0] both opened, [1] cudaload_init visible to dlsym(RTLD_DEFAULT), [2] a's and b's
 * cudaload_init are distinct, [3]/[4] a/b initialized before any init, [5] a's init status,
 * [6] b initialized after a's init, [7] b's init status, [8] a's cudart source, [9] b's,
 * [10] libcudart files mapped. user: a's path '\n' b's path. */
static void child_two(th_result *r, void *arg) {
    const char *const *roots = arg;
    embedder a, b;
    /* the second one RTLD_GLOBAL: the worst case for symbol interposition */
    r->user_int[0] = embedder_open(r, &a, "a", RTLD_NOW | RTLD_LOCAL) && embedder_open(r, &b, "b", RTLD_NOW | RTLD_GLOBAL);
    if (!r->user_int[0]) return;
    r->user_int[1] = dlsym(RTLD_DEFAULT, "cudaload_init") != NULL || dlsym(RTLD_DEFAULT, "cl_search") != NULL;
    r->user_int[2] = a.init_address() != b.init_address();
    r->user_int[3] = a.is_initialized();
    r->user_int[4] = b.is_initialized();
    r->user_int[5] = a.init(roots[0]);
    r->user_int[6] = b.is_initialized();
    r->user_int[7] = b.init(roots[1]);
    char pa[PATH_MAX] = "", pb[PATH_MAX] = "";
    r->user_int[8] = a.cudart(pa, sizeof pa);
    r->user_int[9] = b.cudart(pb, sizeof pb);
    r->user_int[10] = th_count_maps("libcudart.so");
    snprintf(r->user, sizeof r->user, "%s\n%s", pa, pb);
}

static void test_two_embedders_share_a_process(void **state) {
    (void)state;
    /* a: a cu13 wheel tree of the toolkit's files; b: a venv with the CUDA 12 runtime wheel */
    const char *roots[] = {th_fixture("toolkit-cu13-wheel"), th_fixture_env("VENV_CU12_SITE")};
    th_result *r = th_result_new();
    th_run(r, NULL, child_two, (void *)roots);
    if (!r->user_int[0]) fail_msg("%s", r->user);
    assert_int_equal(r->user_int[1], 0);        /* nothing of libcudaload exported */
    assert_int_equal(r->user_int[2], 1);        /* each has its own copy of the code */
    assert_int_equal(r->user_int[3], 0);
    assert_int_equal(r->user_int[4], 0);
    assert_int_equal(r->user_int[5], CUDALOAD_OK);
    assert_int_equal(r->user_int[6], 0);        /* a's init is not b's state */
    assert_int_equal(r->user_int[7], CUDALOAD_OK);
    char want[PATH_MAX + 64];
    snprintf(want, sizeof want, "%s/nvidia/cu13/lib/libcudart.so.13\n", roots[0]);
    if (strncmp(r->user, want, strlen(want)) != 0) fail_msg("a took %s, want %s", r->user, want);
    assert_int_equal(r->user_int[8], CUDALOAD_SOURCE_CALLER);
    /* b reuses the copy a loaded (its own root has only CUDA 12): same file, source loaded */
    assert_int_equal(r->user_int[9], CUDALOAD_SOURCE_LOADED);
    const char *nl = strchr(r->user, '\n');
    assert_non_null(nl);
    if (strlen(nl + 1) != (size_t)(nl - r->user) || strncmp(nl + 1, r->user, (size_t)(nl - r->user)) != 0)
        fail_msg("b's cudart is not a's: %s", r->user);
    assert_int_equal(r->user_int[10], 1);
    th_result_free(r);
}

int main(void) {
    if (!(build = th_require_build(1))) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_embedders_share_a_process),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
