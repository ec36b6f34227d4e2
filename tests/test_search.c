/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_search.c -- the walk end to end, on real CUDA library files: the toolkit's
 * libcudart/libcublas arranged as a CUDA 13 wheel tree, a conda prefix and a CUDA_HOME;
 * real pip wheels (nvidia-cuda-runtime-cu12, nvidia-cublas-cu12, nvidia-cuda-runtime) in
 * venvs made by tests/fixtures.sh. The driver is the one fake (tests/fake/fake_cuda.c):
 * it reports the CUDA version a scenario needs. Every scenario runs in a forked child,
 * since libcudaload's state is per process.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cudaload.h"
#include "harness.h"

#define SRC(s) CUDALOAD_SOURCE_BIT(CUDALOAD_SOURCE_##s)

static char driver_env[PATH_MAX + 64];
static char missing_symbol_driver_env[PATH_MAX + 64];

static const char *site_cu12(void) { return th_fixture_env("VENV_CU12_SITE"); }
static const char *site_cu13(void) { return th_fixture_env("VENV_CU13_SITE"); }
static const char *toolkit_lib(void) { return th_fixture_env("CUDA_TOOLKIT_LIB"); }

static int setup(void **state) {
    (void)state;
    const char *b = th_require_build(1);
    if (!b) return -1;
    snprintf(driver_env, sizeof driver_env, "CUDALOAD_DRIVER_PATH=%s/fake/libcuda.so.1", b);
    snprintf(missing_symbol_driver_env, sizeof missing_symbol_driver_env,
             "CUDALOAD_DRIVER_PATH=%s/fake/missing-symbol/libcuda.so.1", b);
    return 0;
}

static void expect_status(const th_result *r, int want) {
    if (!r->exited || r->exit_code != 0) fail_msg("child did not exit cleanly (signaled=%d exit=%d)", r->signaled, r->exit_code);
    if (r->init_status != want)
        fail_msg("init returned %s, want %s; message:\n%s", cudaload_status_name((cudaload_status)r->init_status),
                 cudaload_status_name((cudaload_status)want), r->error);
}

static void expect_reason(const th_result *r, int lib, const char *path_part, int result, const char *words) {
    int i = th_find_candidate(r, lib, path_part);
    if (i < 0) fail_msg("no %s candidate matching '%s'; message:\n%s", cudaload_lib_name((cudaload_lib)lib), path_part, r->error);
    const char *reason = r->lib[lib].cand[i].reason;
    if (r->lib[lib].cand[i].result != result || !strstr(reason, words))
        fail_msg("%s candidate %s: result %s reason '%s'; want %s with '%s'", cudaload_lib_name((cudaload_lib)lib),
                 r->lib[lib].cand[i].path, cudaload_status_name((cudaload_status)r->lib[lib].cand[i].result), reason,
                 cudaload_status_name((cudaload_status)result), words);
}

/* The candidate's reason as data: its status and reason code. */
static void expect_code(const th_result *r, int lib, const char *path_part, int result, int code) {
    int i = th_find_candidate(r, lib, path_part);
    if (i < 0) fail_msg("no %s candidate matching '%s'; message:\n%s", cudaload_lib_name((cudaload_lib)lib), path_part, r->error);
    const th_cand *c = &r->lib[lib].cand[i];
    if (c->result != result || c->code != code)
        fail_msg("%s candidate %s: result %s reason %s ('%s'); want %s with %s", cudaload_lib_name((cudaload_lib)lib),
                 c->path, cudaload_status_name((cudaload_status)c->result), cudaload_reason_name((cudaload_reason)c->code),
                 c->reason, cudaload_status_name((cudaload_status)result), cudaload_reason_name((cudaload_reason)code));
}

/* Runs cudaload_init(o) in a child with env, checks its status, returns the result. */
static th_result *init_expect(const char *const *env, cudaload_options *o, int want) {
    th_result *r = th_result_new();
    th_run(r, env, th_init_child, o);
    expect_status(r, want);
    return r;
}

/* A fresh directory holding the toolkit's files: copied (copy = 1) or symlinked. */
static char *toolkit_dir(const char *const *files, int copy) {
    char *dir = th_tmpdir();
    char p[PATH_MAX], src[PATH_MAX];
    for (size_t i = 0; files[i]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        snprintf(src, sizeof src, "%s/%s", toolkit_lib(), files[i]);
        if (copy) th_copy(src, p);
        else th_symlink(src, p);
    }
    return dir;
}

/* For a find-only test of the system step (which reads LD_LIBRARY_PATH at init; a real load
 * would not see it set after the start): "" when the dynamic loader itself resolves soname here
 * (the toolkit installed, in ld.so.cache), else "LD_LIBRARY_PATH=<a dir linking the toolkit's
 * files>": a toolkit made of pip's wheels is in no loader path. Static storage. */
static const char *system_step_env(const char *soname, const char *const *files) {
    static char llp[PATH_MAX + 32];
    char found[PATH_MAX];
    llp[0] = 0;
    if (th_loader_resolves(soname, found, sizeof found)) return llp;
    char *dir = toolkit_dir(files, 0);
    snprintf(llp, sizeof llp, "LD_LIBRARY_PATH=%s", dir);
    print_message("note: the dynamic loader finds no %s here (%s): the system step is given %s\n", soname, found, llp);
    free(dir);
    return llp;
}

/* ---- layouts ---- */

static void test_cu13_wheel_tree(void **state) {
    (void)state;
    const char *roots[] = {th_fixture("toolkit-cu13-wheel")};
    const char *env[] = {driver_env, "FAKE_CUDA_VERSION=13000", NULL};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER), CUDALOAD_FLAG_LOAD_CUBLAS);
    th_result *r = init_expect(env, &o, CUDALOAD_OK);
    th_assert_taken(r, CUDALOAD_LIB_CUDART, th_fixture("toolkit-cu13-wheel/nvidia/cu13/lib/libcudart.so.13"), CUDALOAD_SOURCE_CALLER);
    th_assert_taken(r, CUDALOAD_LIB_CUBLASLT, th_fixture("toolkit-cu13-wheel/nvidia/cu13/lib/libcublasLt.so.13"), CUDALOAD_SOURCE_CALLER);
    th_assert_taken(r, CUDALOAD_LIB_CUBLAS, th_fixture("toolkit-cu13-wheel/nvidia/cu13/lib/libcublas.so.13"), CUDALOAD_SOURCE_CALLER);
    assert_int_equal(r->lib[CUDALOAD_LIB_CUDART].major, 13);
    assert_int_equal(r->lib[CUDALOAD_LIB_CUDART].version / 1000, 13);
    assert_int_equal(r->lib[CUDALOAD_LIB_CUBLAS].version / 10000, 13);
    assert_int_equal(r->lib[CUDALOAD_LIB_DRIVER].version, 13000);
    assert_int_equal(r->lib[CUDALOAD_LIB_DRIVER].source, CUDALOAD_SOURCE_OVERRIDE);
    assert_string_equal(r->lib[CUDALOAD_LIB_CUDART].soname, "libcudart.so.13");
    th_result_free(r);
}

static void test_real_cu12_wheels(void **state) {
    (void)state;
    const char *roots[] = {site_cu12()};
    const char *env[] = {driver_env, "FAKE_CUDA_VERSION=12040", NULL};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER), CUDALOAD_FLAG_LOAD_CUBLAS);
    th_result *r = init_expect(env, &o, CUDALOAD_OK);
    char want[PATH_MAX];
    snprintf(want, sizeof want, "%s/nvidia/cuda_runtime/lib/libcudart.so.12", site_cu12());
    th_assert_taken(r, CUDALOAD_LIB_CUDART, want, CUDALOAD_SOURCE_CALLER);
    assert_int_equal(r->lib[CUDALOAD_LIB_CUDART].version / 1000, 12);
    snprintf(want, sizeof want, "%s/nvidia/cublas/lib/libcublas.so.12", site_cu12());
    th_assert_taken(r, CUDALOAD_LIB_CUBLAS, want, CUDALOAD_SOURCE_CALLER);
    snprintf(want, sizeof want, "%s/nvidia/cublas/lib/libcublasLt.so.12", site_cu12());
    th_assert_taken(r, CUDALOAD_LIB_CUBLASLT, want, CUDALOAD_SOURCE_CALLER);
    assert_int_equal(r->lib[CUDALOAD_LIB_CUBLAS].version / 10000, 12);
    th_result_free(r);
}

static void child_optional_symbol(th_result *r, void *arg) {
    th_init_child(r, arg);
    r->user_int[0] = cudaload_has_symbol(CUDALOAD_LIB_CUDART, "cudaMemGetDefaultMemPool");
    r->user_int[1] = cudaload_has_symbol(CUDALOAD_LIB_CUBLAS, "cublasSgemm");
    r->user_int[2] = cudaload_has_symbol(CUDALOAD_LIB_CUBLAS, "cublasSgemm_v2");
}

static void test_optional_symbol_presence(void **state) {
    (void)state;
    const char *roots12[] = {site_cu12()}, *roots13[] = {site_cu13()};
    const char *env12[] = {driver_env, "FAKE_CUDA_VERSION=12040", NULL};
    const char *env13[] = {driver_env, "FAKE_CUDA_VERSION=13000", NULL};
    th_result *r = th_result_new();
    cudaload_options o = th_opts(roots12, 1, SRC(CALLER), CUDALOAD_FLAG_LOAD_CUBLAS);
    th_run(r, env12, child_optional_symbol, &o);
    expect_status(r, CUDALOAD_OK);
    assert_int_equal(r->user_int[0], 0);
    assert_int_equal(r->user_int[1], 1); /* the macro name and the exported name both work */
    assert_int_equal(r->user_int[2], 1);
    o = th_opts(roots13, 1, SRC(CALLER), 0);
    th_run(r, env13, child_optional_symbol, &o);
    expect_status(r, CUDALOAD_OK);
    assert_int_equal(r->user_int[0], 1);
    th_result_free(r);
}

static void test_real_cu13_wheel(void **state) {
    (void)state;
    const char *roots[] = {site_cu13()};
    const char *env[] = {driver_env, "FAKE_CUDA_VERSION=13000", NULL};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER), 0);
    th_result *r = init_expect(env, &o, CUDALOAD_OK);
    char want[PATH_MAX];
    snprintf(want, sizeof want, "%s/nvidia/cu13/lib/libcudart.so.13", site_cu13());
    th_assert_taken(r, CUDALOAD_LIB_CUDART, want, CUDALOAD_SOURCE_CALLER);
    /* cuBLAS stays unloaded until asked for */
    assert_int_equal(r->lib[CUDALOAD_LIB_CUBLAS].status, CUDALOAD_ERROR_NOT_ATTEMPTED);
    assert_int_equal(r->maps_count[CUDALOAD_LIB_CUBLAS], 0);
    th_result_free(r);
}

/* ---- driver gating ---- */

/* One root holding both majors, in both wheel layouts, from real files. */
static const char *mixed_root(void) {
    static char root[PATH_MAX];
    if (root[0]) return root;
    char *tmp = th_tmpdir();
    char p[PATH_MAX], src[PATH_MAX];
    snprintf(root, sizeof root, "%s/site-packages", tmp);
    snprintf(p, sizeof p, "%s/nvidia/cu13/lib", root);
    th_mkdirs(p);
    snprintf(p, sizeof p, "%s/nvidia/cu13/lib/libcudart.so.13", root);
    snprintf(src, sizeof src, "%s/libcudart.so.13", toolkit_lib());
    th_copy(src, p);
    snprintf(p, sizeof p, "%s/nvidia/cuda_runtime/lib", root);
    th_mkdirs(p);
    snprintf(p, sizeof p, "%s/nvidia/cuda_runtime/lib/libcudart.so.12", root);
    snprintf(src, sizeof src, "%s/nvidia/cuda_runtime/lib/libcudart.so.12", site_cu12());
    th_copy(src, p);
    free(tmp);
    return root;
}

static void test_driver_12_takes_cudart_12_from_same_root(void **state) {
    (void)state;
    const char *roots[] = {mixed_root()};
    const char *env[] = {driver_env, "FAKE_CUDA_VERSION=12040", NULL};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER), 0);
    th_result *r = init_expect(env, &o, CUDALOAD_OK);
    char want[PATH_MAX];
    snprintf(want, sizeof want, "%s/nvidia/cuda_runtime/lib/libcudart.so.12", mixed_root());
    th_assert_taken(r, CUDALOAD_LIB_CUDART, want, CUDALOAD_SOURCE_CALLER);
    expect_reason(r, CUDALOAD_LIB_CUDART, "cu13/lib/libcudart.so.13", CUDALOAD_ERROR_DRIVER_TOO_OLD,
                  "CUDA 13 runtime needs a CUDA 13 driver");
    assert_int_equal(r->maps_count[CUDALOAD_LIB_CUDART], 1); /* the skipped .so.13 was never mapped */
    th_result_free(r);
}

static void test_driver_13_takes_cudart_13(void **state) {
    (void)state;
    const char *roots[] = {mixed_root()};
    const char *env[] = {driver_env, "FAKE_CUDA_VERSION=13000", NULL};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER), 0);
    th_result *r = init_expect(env, &o, CUDALOAD_OK);
    char want[PATH_MAX];
    snprintf(want, sizeof want, "%s/nvidia/cu13/lib/libcudart.so.13", mixed_root());
    th_assert_taken(r, CUDALOAD_LIB_CUDART, want, CUDALOAD_SOURCE_CALLER);
    th_result_free(r);
}

static void test_wanted_major(void **state) {
    (void)state;
    const char *roots[] = {mixed_root()};
    const char *env[] = {driver_env, "FAKE_CUDA_VERSION=13000", "CUDALOAD_CUDA_MAJOR=12", NULL};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER), 0);
    th_result *r = init_expect(env, &o, CUDALOAD_OK);
    assert_int_equal(r->lib[CUDALOAD_LIB_CUDART].major, 12);
    expect_reason(r, CUDALOAD_LIB_CUDART, "libcudart.so.13", CUDALOAD_ERROR_MAJOR_MISMATCH, "CUDA 12 was asked for");
    th_result_free(r);
}

static void test_driver_too_old(void **state) {
    (void)state;
    const char *roots[] = {th_fixture("toolkit-cu13-wheel")};
    const char *env[] = {driver_env, "FAKE_CUDA_VERSION=12020", NULL};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER), 0);
    th_result *r = init_expect(env, &o, CUDALOAD_ERROR_DRIVER_TOO_OLD);
    assert_non_null(strstr(r->error, "this driver supports CUDA 12.2 (cuDriverGetVersion 12020"));
    assert_non_null(strstr(r->error, "fix:"));
    assert_int_equal(r->maps_count[CUDALOAD_LIB_CUDART], 0);
    th_result_free(r);
}

static void test_no_driver(void **state) {
    (void)state;
    /* this machine has no libcuda.so.1 at all: the real "no driver" case */
    const char *roots[] = {th_fixture("toolkit-cu13-wheel")};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER), 0);
    th_result *r = th_result_new();
    th_run(r, NULL, th_init_child, &o);
    if (r->lib[CUDALOAD_LIB_DRIVER].status == CUDALOAD_OK) {
        /* libcudaload has no scope that keeps the system's libcuda.so.1 out (CUDALOAD_SOURCES
         * does not apply to the driver, docs/search-order.md), so this case needs a machine
         * without one; test_no_driver_deterministic covers NO_DRIVER everywhere */
        print_message("skipped: this machine has a driver (libcuda.so.1 loads from %s): the real "
                      "\"cannot open shared object file\" case needs a machine without one\n",
                      r->lib[CUDALOAD_LIB_DRIVER].path);
        th_result_free(r);
        skip();
    }
    expect_status(r, CUDALOAD_ERROR_NO_DRIVER);
    assert_non_null(strstr(r->error, "libcuda.so.1"));
    assert_non_null(strstr(r->error, "cannot open shared object file"));
    /* the runtime is still searched, ungated, so a report can say what is there */
    th_assert_taken(r, CUDALOAD_LIB_CUDART, th_fixture("toolkit-cu13-wheel/nvidia/cu13/lib/libcudart.so.13"), CUDALOAD_SOURCE_CALLER);
    /* cuBLAS needs a completed init in which cudart was taken, not a successful one */
    const char *lazy[] = {"TH_LOAD_CUBLAS=1", NULL};
    th_run(r, lazy, th_init_child, &o);
    expect_status(r, CUDALOAD_ERROR_NO_DRIVER);
    assert_int_equal(r->cublas_status, CUDALOAD_OK);
    o.flags = CUDALOAD_FLAG_DRIVER_OPTIONAL;
    th_run(r, NULL, th_init_child, &o);
    expect_status(r, CUDALOAD_OK);
    th_result_free(r);
}

/* NO_DRIVER on every machine, driver or not. libcudaload has no scope that leaves the system
 * driver out (CUDALOAD_SOURCES does not apply to it), and a test-only switch in the library
 * would be a path users never take; what any process can hold instead is the toolkit's link
 * stub as its libcuda.so.1 (a program linked with -L.../stubs -lcuda whose stub was found
 * at run time). libcudaload reuses the libcuda.so.1 in the process (by DT_SONAME), whose
 * cuDriverGetVersion fails with CUDA_ERROR_STUB_LIBRARY: NO_DRIVER, and the rest of the
 * no-driver behaviour follows (cudart found ungated, cuBLAS loadable, DRIVER_OPTIONAL). */
static void child_stub_loaded(th_result *r, void *arg) {
    char stub[PATH_MAX];
    snprintf(stub, sizeof stub, "%s/stubs/libcuda.so", toolkit_lib());
    void *h = dlopen(stub, RTLD_NOW | RTLD_LOCAL);
    r->user_int[0] = h != NULL;
    if (!h) {
        snprintf(r->user, sizeof r->user, "%s", dlerror());
        return;
    }
    th_init_child(r, arg);
}

static void test_no_driver_deterministic(void **state) {
    (void)state;
    char stub[PATH_MAX];
    snprintf(stub, sizeof stub, "%s/stubs/libcuda.so", toolkit_lib());
    const char *roots[] = {th_fixture("toolkit-cu13-wheel")};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER), 0);
    th_result *r = th_result_new();
    cudaload_options opt = o;
    /* the stub's part needs the real stub (a toolkit of pip wheels has none: skipped at the end,
     * after the rest) */
    int have_stub = access(stub, R_OK) == 0;
    if (have_stub) {
        th_run(r, NULL, child_stub_loaded, &o);
        if (!r->user_int[0]) fail_msg("dlopen(%s) failed: %s", stub, r->user);
        expect_status(r, CUDALOAD_ERROR_NO_DRIVER);
        assert_int_equal(r->lib[CUDALOAD_LIB_DRIVER].status, CUDALOAD_ERROR_NO_DRIVER);
        assert_int_equal(r->lib[CUDALOAD_LIB_DRIVER].loaded, 0);
        expect_reason(r, CUDALOAD_LIB_DRIVER, "stubs/libcuda.so", CUDALOAD_ERROR_NO_DRIVER,
                      "this is the toolkit's link stub, not a driver");
        assert_int_equal(r->lib[CUDALOAD_LIB_DRIVER].cand[0].source, CUDALOAD_SOURCE_LOADED);
        assert_int_equal(r->lib[CUDALOAD_LIB_DRIVER].n_candidates, 1); /* no second driver was looked for */
        assert_non_null(strstr(r->error, "CUDA driver (libcuda.so.1) not found"));
        assert_non_null(strstr(r->error, "fix: install the NVIDIA driver"));
        th_assert_taken(r, CUDALOAD_LIB_CUDART, th_fixture("toolkit-cu13-wheel/nvidia/cu13/lib/libcudart.so.13"),
                        CUDALOAD_SOURCE_CALLER);
        const char *lazy[] = {"TH_LOAD_CUBLAS=1", NULL};
        th_run(r, lazy, child_stub_loaded, &o);
        expect_status(r, CUDALOAD_ERROR_NO_DRIVER);
        assert_int_equal(r->cublas_status, CUDALOAD_OK);
        opt.flags = CUDALOAD_FLAG_DRIVER_OPTIONAL;
        th_run(r, NULL, child_stub_loaded, &opt);
        expect_status(r, CUDALOAD_OK);
        assert_int_equal(r->lib[CUDALOAD_LIB_DRIVER].status, CUDALOAD_ERROR_NO_DRIVER);
    }

    /* an exact driver file that does not exist is OVERRIDE_UNUSABLE (not NO_DRIVER), from the
     * environment or the options, and the system's libcuda.so.1 is never tried instead */
    const char *missing = "/nonexistent/cudaload-test/libcuda.so.1";
    char drv[PATH_MAX + 32], want[PATH_MAX + 64];
    snprintf(drv, sizeof drv, "CUDALOAD_DRIVER_PATH=%s", missing);
    const char *env[] = {drv, NULL};
    th_run(r, env, th_init_child, &o);
    expect_status(r, CUDALOAD_ERROR_OVERRIDE_UNUSABLE);
    expect_reason(r, CUDALOAD_LIB_DRIVER, missing, CUDALOAD_ERROR_OVERRIDE_UNUSABLE, "No such file or directory");
    assert_int_equal(r->lib[CUDALOAD_LIB_DRIVER].n_candidates, 1);
    snprintf(want, sizeof want, "CUDALOAD_DRIVER_PATH=%s cannot be used: No such file or directory", missing);
    if (!strstr(r->error, want)) fail_msg("message lacks '%s':\n%s", want, r->error);
    opt = o;
    opt.driver_path = missing;
    th_run(r, NULL, th_init_child, &opt);
    expect_status(r, CUDALOAD_ERROR_OVERRIDE_UNUSABLE);
    assert_int_equal(r->lib[CUDALOAD_LIB_DRIVER].n_candidates, 1);
    snprintf(want, sizeof want, "options.driver_path=%s cannot be used", missing);
    if (!strstr(r->error, want)) fail_msg("message lacks '%s':\n%s", want, r->error);
    th_result_free(r);
    if (!have_stub) TH_SKIP_NO_DRIVER_STUB(stub);
}

static void test_driver_missing_symbol_and_stub(void **state) {
    (void)state;
    const char *roots[] = {th_fixture("toolkit-cu13-wheel")};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER), 0);
    th_result *r = th_result_new();
    const char *env[] = {missing_symbol_driver_env, NULL};
    th_run(r, env, th_init_child, &o);
    expect_status(r, CUDALOAD_ERROR_OVERRIDE_UNUSABLE);
    expect_reason(r, CUDALOAD_LIB_DRIVER, "missing-symbol/libcuda.so.1", CUDALOAD_ERROR_OVERRIDE_UNUSABLE,
                  "missing required symbol cuDeviceGetName");
    /* the toolkit's link stub is not a driver (real file; a toolkit of pip wheels has none) */
    char stub[PATH_MAX + 32], env_stub[PATH_MAX + 64];
    snprintf(stub, sizeof stub, "%s/stubs/libcuda.so", toolkit_lib());
    if (access(stub, R_OK) != 0) {
        th_result_free(r);
        TH_SKIP_NO_DRIVER_STUB(stub);
    }
    snprintf(env_stub, sizeof env_stub, "CUDALOAD_DRIVER_PATH=%s", stub);
    const char *env2[] = {env_stub, NULL};
    th_run(r, env2, th_init_child, &o);
    expect_status(r, CUDALOAD_ERROR_OVERRIDE_UNUSABLE);
    expect_reason(r, CUDALOAD_LIB_DRIVER, "stubs/libcuda.so", CUDALOAD_ERROR_OVERRIDE_UNUSABLE, "link stub");
    th_result_free(r);
}

static void child_devices(th_result *r, void *arg) {
    th_init_child(r, arg);
    int n = -1;
    r->user_int[0] = cudaload_device_count(&n);
    r->user_int[1] = n;
    snprintf(r->user, sizeof r->user, "%s", cudaload_last_error());
}

static void test_device_count(void **state) {
    (void)state;
    const char *roots[] = {th_fixture("toolkit-cu13-wheel")};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER), 0);
    th_result *r = th_result_new();
    const char *env0[] = {driver_env, "FAKE_CUDA_DEVICES=0", NULL};
    th_run(r, env0, child_devices, &o);
    expect_status(r, CUDALOAD_OK);
    assert_int_equal(r->user_int[0], CUDALOAD_ERROR_NO_DEVICE);
    assert_int_equal(r->user_int[1], 0);
    assert_non_null(strstr(r->user, "CUDA_ERROR_NO_DEVICE"));
    const char *env2[] = {driver_env, "FAKE_CUDA_DEVICES=2", NULL};
    th_run(r, env2, child_devices, &o);
    expect_status(r, CUDALOAD_OK);
    assert_int_equal(r->user_int[0], CUDALOAD_OK);
    assert_int_equal(r->user_int[1], 2);
    th_result_free(r);
}

/* ---- order ---- */

/* ---- the self source: a copy of this program inside a site-packages ----
 * `self` is the site-packages that holds the file embedding libcudaload (dladdr on
 * cudaload_init; for a program, its absolute argv[0]: see search.c and cudaload.c). This
 * program embeds libcudaload.a, so a copy of it in <tmp>/site-packages/cudaload_selftest/,
 * exec'ed with "--self-helper ROOT", has that site-packages as its self root, as a Python
 * extension module in site-packages has its own (tests/python/test_example_extension.py
 * tests that case with the real module). The helper runs one init (caller root ROOT, every
 * other setting from the environment the scenario child gives it) and writes its th_result
 * to stdout; the scenario child reads it back. The copy's name matches check-valgrind's
 * --trace-children-skip (*\/cudaload-*-helper): it runs natively there. */

static int self_helper(const char *root) {
    static th_result res; /* ~200 KB: not on the stack */
    const char *roots[] = {root};
    cudaload_options o = th_opts(roots, 1, 0, 0);
    th_init_child(&res, &o);
    const char *p = (const char *)&res;
    size_t left = sizeof res;
    while (left > 0) {
        ssize_t n = write(1, p, left);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return 1;
        p += n;
        left -= (size_t)n;
    }
    return 0;
}

typedef struct self_run {
    const char *exe;  /* the copy of this program inside the site-packages */
    const char *root; /* its caller root */
} self_run;

static void child_via_self_copy(th_result *r, void *arg) {
    const self_run *sr = arg;
    int fd[2];
    if (pipe(fd) != 0) {
        snprintf(r->error, sizeof r->error, "pipe: %s", strerror(errno));
        r->init_status = -2;
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        char *const argv[] = {(char *)sr->exe, "--self-helper", (char *)sr->root, NULL};
        execv(sr->exe, argv);
        _exit(127);
    }
    close(fd[1]);
    static th_result got;
    size_t have = 0;
    ssize_t n = 0;
    while (have < sizeof got && ((n = read(fd[0], (char *)&got + have, sizeof got - have)) > 0 || (n < 0 && errno == EINTR)))
        if (n > 0) have += (size_t)n;
    close(fd[0]);
    int st = 0;
    while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    if (pid < 0 || have != sizeof got || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        r->init_status = -2;
        snprintf(r->error, sizeof r->error, "the self helper %s failed: read %zu of %zu bytes, wait status %#x",
                 sr->exe, have, sizeof got, (unsigned)st);
        return;
    }
    memcpy(r, &got, sizeof got); /* th_run fills exited, exit_code, ... after the child ends */
}

static void test_each_source_beats_the_next(void **state) {
    (void)state;
    char conda[PATH_MAX + 32], home[PATH_MAX + 32], venv[PATH_MAX + 32], path[PATH_MAX + 32];
    snprintf(conda, sizeof conda, "CONDA_PREFIX=%s", th_fixture("conda"));
    snprintf(home, sizeof home, "CUDA_HOME=%s", th_fixture("cudahome"));
    snprintf(venv, sizeof venv, "VIRTUAL_ENV=%s", th_fixture("venv-cu13"));
    snprintf(path, sizeof path, "CUDALOAD_PATH=%s", th_fixture("conda/lib"));
    const char *roots[] = {th_fixture("toolkit-cu13-wheel")};

    /* self: a site-packages holding a cu13 wheel tree and the copy of this program */
    char *tmp = th_tmpdir();
    char site[PATH_MAX], p[PATH_MAX + 64], src[PATH_MAX], exe[PATH_MAX + 64], me[PATH_MAX];
    snprintf(site, sizeof site, "%s/site-packages", tmp);
    snprintf(p, sizeof p, "%s/nvidia/cu13/lib", site);
    th_mkdirs(p);
    snprintf(p, sizeof p, "%s/nvidia/cu13/lib/libcudart.so.13", site);
    snprintf(src, sizeof src, "%s/libcudart.so.13", toolkit_lib());
    th_symlink(src, p);
    snprintf(p, sizeof p, "%s/cudaload_selftest", site);
    th_mkdirs(p);
    ssize_t n = readlink("/proc/self/exe", me, sizeof me - 1);
    assert_true(n > 0);
    me[n] = 0;
    snprintf(exe, sizeof exe, "%s/cudaload_selftest/cudaload-self-helper", site);
    th_copy(me, exe);
    char *site_real = realpath(site, NULL);
    assert_non_null(site_real);
    char self_want[PATH_MAX + 64];
    snprintf(self_want, sizeof self_want, "%s/nvidia/cu13/lib/libcudart.so.13", site_real);
    struct statvfs vfs;
    int with_self = !(statvfs(tmp, &vfs) == 0 && (vfs.f_flag & ST_NOEXEC));
    if (!with_self)
        print_message("note: %s is on a noexec file system, so the self step is left out (set TMPDIR elsewhere)\n", tmp);
    self_run sr = {exe, roots[0]};

    /* the system step: the file the dynamic loader resolves the SONAME to */
    char system_want[PATH_MAX];
    int system_has = th_loader_resolves("libcudart.so.13", system_want, sizeof system_want) ||
                     th_loader_resolves("libcudart.so.12", system_want, sizeof system_want);
    th_result *r = th_result_new();
    if (!system_has)
        print_message("note: the dynamic loader finds no libcudart.so.13 or .so.12 on this system (%s): the system "
                      "step must then be NOT_FOUND\n", system_want);

    struct {
        const char *sources;
        const char *want_prefix;
        cudaload_source want_source;
    } steps[] = {
        {"override,caller,self,venv,conda,cuda_home,system", th_fixture("conda/lib/libcudart.so.13"), CUDALOAD_SOURCE_OVERRIDE},
        {"caller,self,venv,conda,cuda_home,system", th_fixture("toolkit-cu13-wheel/nvidia/cu13/lib"), CUDALOAD_SOURCE_CALLER},
        {"self,venv,conda,cuda_home,system", self_want, CUDALOAD_SOURCE_SELF},
        {"venv,conda,cuda_home,system", th_fixture("venv-cu13/lib"), CUDALOAD_SOURCE_VENV},
        {"conda,cuda_home,system", th_fixture("conda/lib/libcudart.so.13"), CUDALOAD_SOURCE_CONDA},
        {"cuda_home,system", th_fixture("cudahome/lib64/libcudart.so.13"), CUDALOAD_SOURCE_CUDA_HOME},
        {"system", system_want, CUDALOAD_SOURCE_SYSTEM},
    };
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        if (!with_self && steps[i].want_source == CUDALOAD_SOURCE_SELF) continue;
        char sources[256];
        snprintf(sources, sizeof sources, "CUDALOAD_SOURCES=%s", steps[i].sources);
        const char *env[] = {driver_env, conda, home, venv, path, sources, NULL};
        cudaload_options o = th_opts(roots, 1, 0, 0);
        if (with_self) th_run(r, env, child_via_self_copy, &sr);
        else th_run(r, env, th_init_child, &o);
        if (r->init_status == -2) fail_msg("%s", r->error);
        /* while self is in scope, its root is there: the sources before it beat a real copy */
        if (with_self && strstr(steps[i].sources, "self")) {
            int found = 0;
            for (int k = 0; k < r->n_roots && k < TH_MAX_ROOTS; k++)
                found |= r->root_source[k] == CUDALOAD_SOURCE_SELF && strcmp(r->roots[k], site_real) == 0;
            if (!found) fail_msg("step %zu (%s): no self root %s among the %d roots", i, steps[i].sources, site_real, r->n_roots);
        }
        if (steps[i].want_source == CUDALOAD_SOURCE_SYSTEM && !system_has) {
            expect_status(r, CUDALOAD_ERROR_NOT_FOUND);
            continue;
        }
        expect_status(r, CUDALOAD_OK);
        if (steps[i].want_source == CUDALOAD_SOURCE_SYSTEM) {
            th_assert_taken(r, CUDALOAD_LIB_CUDART, "/", CUDALOAD_SOURCE_SYSTEM);
            /* the same file the dynamic loader resolves the SONAME to (paths compared resolved:
             * ld.so.cache may name a symlink) */
            char *got = realpath(r->lib[CUDALOAD_LIB_CUDART].path, NULL);
            if (!got || strcmp(got, system_want) != 0)
                fail_msg("system step took %s (resolved: %s); the dynamic loader resolves the SONAME to %s",
                         r->lib[CUDALOAD_LIB_CUDART].path, got ? got : "?", system_want);
            free(got);
        } else {
            th_assert_taken(r, CUDALOAD_LIB_CUDART, steps[i].want_prefix, (int)steps[i].want_source);
        }
    }
    th_result_free(r);
    free(site_real);
    free(tmp);
}

static void test_scoped_search_keeps_system_out(void **state) {
    (void)state;
    char *empty = th_tmpdir();
    const char *roots[] = {empty};
    const char *env[] = {driver_env, "CUDALOAD_SOURCES=caller", NULL};
    cudaload_options o = th_opts(roots, 1, 0, 0);
    th_result *r = init_expect(env, &o, CUDALOAD_ERROR_NOT_FOUND);
    assert_non_null(strstr(r->error, "system search scoped out"));
    assert_non_null(strstr(r->error, "pip install nvidia-cuda-runtime"));
    assert_int_equal(r->lib[CUDALOAD_LIB_CUDART].n_candidates, 0);
    assert_int_equal(r->maps_count[CUDALOAD_LIB_CUDART], 0);
    /* an unknown source name is an error, never ignored */
    const char *env2[] = {driver_env, "CUDALOAD_SOURCES=caller,sytem", NULL};
    th_run(r, env2, th_init_child, &o);
    expect_status(r, CUDALOAD_ERROR_INVALID_OPTION);
    assert_non_null(strstr(r->error, "unknown source 'sytem'"));
    th_result_free(r);
    free(empty);
}

/* ---- overrides ---- */

static void test_exact_file_override(void **state) {
    (void)state;
    char rt[PATH_MAX + 32];
    snprintf(rt, sizeof rt, "CUDALOAD_CUDART_PATH=%s", th_fixture("cudahome/lib64/libcudart.so.13"));
    const char *roots[] = {th_fixture("toolkit-cu13-wheel")};
    const char *env[] = {driver_env, rt, NULL};
    cudaload_options o = th_opts(roots, 1, 0, 0);
    th_result *r = init_expect(env, &o, CUDALOAD_OK);
    th_assert_taken(r, CUDALOAD_LIB_CUDART, th_fixture("cudahome/lib64/libcudart.so.13"), CUDALOAD_SOURCE_OVERRIDE);

    /* unusable: fails loudly, no fallback to the good root */
    snprintf(rt, sizeof rt, "CUDALOAD_CUDART_PATH=%s", th_fixture("bad/text/lib/libcudart.so.13"));
    th_run(r, env, th_init_child, &o);
    expect_status(r, CUDALOAD_ERROR_OVERRIDE_UNUSABLE);
    assert_non_null(strstr(r->error, "not an ELF file"));
    assert_int_equal(r->maps_count[CUDALOAD_LIB_CUDART], 0);

    /* relative: refused with the reason */
    const char *env3[] = {driver_env, "CUDALOAD_CUDART_PATH=lib/libcudart.so.13", NULL};
    th_run(r, env3, th_init_child, &o);
    expect_status(r, CUDALOAD_ERROR_INVALID_OPTION);
    assert_non_null(strstr(r->error, "CUDALOAD_CUDART_PATH: 'lib/libcudart.so.13' is a relative path"));

    /* secure mode ignores every environment override: CUDALOAD_CUDART_PATH (a text file) and
     * CUDALOAD_DRIVER_PATH (the driver missing a symbol) would each fail init if read; the
     * driver given in the options (code, not environment) is the one taken */
    snprintf(rt, sizeof rt, "CUDALOAD_CUDART_PATH=%s", th_fixture("bad/text/lib/libcudart.so.13"));
    const char *env4[] = {missing_symbol_driver_env, rt, NULL};
    const char *good_driver = driver_env + strlen("CUDALOAD_DRIVER_PATH=");
    o.flags = CUDALOAD_FLAG_SECURE;
    o.sources = SRC(CALLER);
    o.driver_path = good_driver;
    th_run(r, env4, th_init_child, &o);
    expect_status(r, CUDALOAD_OK);
    th_assert_taken(r, CUDALOAD_LIB_DRIVER, good_driver, CUDALOAD_SOURCE_OVERRIDE);
    assert_int_equal(th_find_candidate(r, CUDALOAD_LIB_DRIVER, "missing-symbol"), -1);
    th_assert_taken(r, CUDALOAD_LIB_CUDART, th_fixture("toolkit-cu13-wheel"), CUDALOAD_SOURCE_CALLER);
    assert_int_equal(th_find_candidate(r, CUDALOAD_LIB_CUDART, "bad/text"), -1);
    /* control: the same environment without secure mode is read, and fails on the driver */
    o.flags = 0;
    th_run(r, env4, th_init_child, &o);
    expect_status(r, CUDALOAD_ERROR_OVERRIDE_UNUSABLE);
    expect_reason(r, CUDALOAD_LIB_DRIVER, "missing-symbol/libcuda.so.1", CUDALOAD_ERROR_OVERRIDE_UNUSABLE,
                  "missing required symbol cuDeviceGetName");
    th_result_free(r);
}

/* ---- reuse of a loaded copy ---- */

static void child_preload(th_result *r, void *arg) {
    void *h = dlopen(th_fixture("conda/lib/libcudart.so.13"), RTLD_NOW | RTLD_LOCAL);
    r->user_int[0] = h != NULL;
    th_init_child(r, arg);
}

static void test_already_loaded_is_reused(void **state) {
    (void)state;
    const char *roots[] = {th_fixture("toolkit-cu13-wheel")};
    const char *env[] = {driver_env, NULL};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER), 0);
    th_result *r = th_result_new();
    th_run(r, env, child_preload, &o);
    assert_int_equal(r->user_int[0], 1);
    expect_status(r, CUDALOAD_OK);
    th_assert_taken(r, CUDALOAD_LIB_CUDART, th_fixture("conda/lib/libcudart.so.13"), CUDALOAD_SOURCE_LOADED);
    assert_int_equal(r->lib[CUDALOAD_LIB_CUDART].already_loaded, 1);
    assert_int_equal(r->maps_count[CUDALOAD_LIB_CUDART], 1); /* one copy in /proc/self/maps */
    th_result_free(r);
}

/* ---- bad candidates are skipped with their reason ---- */

static void test_bad_candidates_skipped(void **state) {
    (void)state;
    const char *roots[] = {
        th_fixture("bad/empty/lib"),   th_fixture("bad/text/lib"),     th_fixture("bad/truncated/lib"),
        th_fixture("bad/missing-symbol/lib"), th_fixture("bad/aarch64/lib"), th_fixture("bad/elf32/lib"),
        th_fixture("bad/dangling/lib"), th_fixture("bad/dir/lib"),      th_fixture("toolkit-cu13-wheel"),
    };
    const char *env[] = {driver_env, NULL};
    cudaload_options o = th_opts(roots, sizeof roots / sizeof roots[0], SRC(CALLER), 0);
    th_result *r = init_expect(env, &o, CUDALOAD_OK);
    th_assert_taken(r, CUDALOAD_LIB_CUDART, th_fixture("toolkit-cu13-wheel"), CUDALOAD_SOURCE_CALLER);
    expect_reason(r, CUDALOAD_LIB_CUDART, "bad/empty", CUDALOAD_ERROR_NOT_FOUND, "empty file (0 bytes)");
    expect_reason(r, CUDALOAD_LIB_CUDART, "bad/text", CUDALOAD_ERROR_NOT_FOUND, "not an ELF file");
    expect_reason(r, CUDALOAD_LIB_CUDART, "bad/truncated", CUDALOAD_ERROR_NOT_FOUND, "truncated ELF: file is 4096 bytes");
    expect_reason(r, CUDALOAD_LIB_CUDART, "bad/missing-symbol", CUDALOAD_ERROR_SYMBOL_MISSING,
                  "missing required symbol cudaRuntimeGetVersion");
    expect_reason(r, CUDALOAD_LIB_CUDART, "bad/aarch64", CUDALOAD_ERROR_NOT_FOUND, "ELF for aarch64");
    expect_reason(r, CUDALOAD_LIB_CUDART, "bad/elf32", CUDALOAD_ERROR_NOT_FOUND, "32-bit ELF");
    expect_reason(r, CUDALOAD_LIB_CUDART, "bad/dangling", CUDALOAD_ERROR_NOT_FOUND, "dangling symbolic link");
    expect_reason(r, CUDALOAD_LIB_CUDART, "bad/dir", CUDALOAD_ERROR_NOT_FOUND, "is a directory");
    assert_int_equal(r->maps_count[CUDALOAD_LIB_CUDART], 1);
    th_result_free(r);
}

static void test_all_bad_lists_every_candidate(void **state) {
    (void)state;
    const char *roots[] = {th_fixture("bad/empty/lib"), th_fixture("bad/text/lib")};
    const char *env[] = {driver_env, NULL};
    cudaload_options o = th_opts(roots, 2, SRC(CALLER), 0);
    th_result *r = init_expect(env, &o, CUDALOAD_ERROR_NOT_FOUND);
    assert_non_null(strstr(r->error, "bad/empty/lib/libcudart.so.13 [caller]: empty file (0 bytes)"));
    assert_non_null(strstr(r->error, "bad/text/lib/libcudart.so.13 [caller]: not an ELF file"));
    th_result_free(r);
}

/* Unreadable files and directories matter only to an unprivileged user: the child drops
 * to nobody before init (the tests run as root on CI). */
static void child_as_nobody(th_result *r, void *arg) {
    if (getuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) {
        r->user_int[0] = -1;
        return;
    }
    th_init_child(r, arg);
}

static void test_unreadable_file_and_directory(void **state) {
    (void)state;
    static const char *const files[] = {"libcudart.so.13", NULL};
    char *noread = toolkit_dir(files, 1), *nosearch = toolkit_dir(files, 1), *good = toolkit_dir(files, 1);
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/libcudart.so.13", noread);
    assert_int_equal(chmod(p, 0), 0);
    assert_int_equal(chmod(noread, 0755), 0);
    assert_int_equal(chmod(nosearch, 0), 0);
    assert_int_equal(chmod(good, 0755), 0);
    const char *roots[] = {noread, nosearch, good};
    const char *env[] = {driver_env, NULL};
    cudaload_options o = th_opts(roots, 3, SRC(CALLER), CUDALOAD_FLAG_DRIVER_OPTIONAL);
    th_result *r = th_result_new();
    th_run(r, env, child_as_nobody, &o);
    if (r->user_int[0] == -1) fail_msg("could not drop to uid 65534");
    if (getuid() != 0) print_message("(not root: running as this user)\n");
    expect_status(r, CUDALOAD_OK);
    expect_reason(r, CUDALOAD_LIB_CUDART, noread, CUDALOAD_ERROR_NOT_FOUND, "cannot read: Permission denied");
    expect_reason(r, CUDALOAD_LIB_CUDART, nosearch, CUDALOAD_ERROR_NOT_FOUND, "cannot look in");
    th_assert_taken(r, CUDALOAD_LIB_CUDART, good, CUDALOAD_SOURCE_CALLER);
    th_result_free(r);
    chmod(nosearch, 0700);
    free(noread), free(nosearch), free(good);
}

/* ---- cuBLAS ---- */

static void test_cublas_from_cudart_root(void **state) {
    (void)state;
    /* root A has only cuBLAS (13); root B has the runtime and cuBLAS: cuBLAS comes from B */
    static const char *const files[] = {"libcublas.so.13", "libcublasLt.so.13", NULL};
    char *a = toolkit_dir(files, 0);
    const char *roots[] = {a, th_fixture("toolkit-cu13-wheel")};
    const char *env[] = {driver_env, NULL};
    cudaload_options o = th_opts(roots, 2, SRC(CALLER), CUDALOAD_FLAG_LOAD_CUBLAS);
    th_result *r = init_expect(env, &o, CUDALOAD_OK);
    th_assert_taken(r, CUDALOAD_LIB_CUDART, th_fixture("toolkit-cu13-wheel"), CUDALOAD_SOURCE_CALLER);
    th_assert_taken(r, CUDALOAD_LIB_CUBLAS, th_fixture("toolkit-cu13-wheel"), CUDALOAD_SOURCE_CALLER);
    th_assert_taken(r, CUDALOAD_LIB_CUBLASLT, th_fixture("toolkit-cu13-wheel"), CUDALOAD_SOURCE_CALLER);
    th_result_free(r);
    free(a);
}

static void test_cublas_major_mix_refused(void **state) {
    (void)state;
    /* runtime 13 from a root without cuBLAS; the only cuBLAS is CUDA 12: refused */
    static const char *const files[] = {"libcudart.so.13", NULL};
    char *a = toolkit_dir(files, 1);
    const char *roots[] = {a, site_cu12()};
    const char *env[] = {driver_env, NULL};
    cudaload_options o = th_opts(roots, 2, SRC(CALLER), CUDALOAD_FLAG_LOAD_CUBLAS);
    th_result *r = init_expect(env, &o, CUDALOAD_ERROR_NOT_FOUND);
    assert_int_equal(r->lib[CUDALOAD_LIB_CUDART].status, CUDALOAD_OK);
    assert_int_equal(r->cublas_status, CUDALOAD_ERROR_NOT_FOUND);
    assert_non_null(strstr(r->error, "fix: pip install 'nvidia-cublas==13.*' (CUDA 13)"));
    assert_int_equal(r->maps_count[CUDALOAD_LIB_CUBLAS], 0);
    /* with the CUDA 12 runtime asked for, the same roots give a consistent CUDA 12 pair */
    const char *env12[] = {driver_env, "CUDALOAD_CUDA_MAJOR=12", NULL};
    th_run(r, env12, th_init_child, &o);
    expect_status(r, CUDALOAD_OK);
    assert_int_equal(r->lib[CUDALOAD_LIB_CUBLAS].major, 12);
    assert_int_equal(r->lib[CUDALOAD_LIB_CUDART].major, 12);
    th_result_free(r);
    free(a);
}

static void child_lazy_cublas(th_result *r, void *arg) {
    th_init_child(r, arg);
    r->user_int[0] = th_count_maps("libcublas.so.");
    r->user_int[1] = cudaload_load_cublas();
    r->user_int[2] = th_count_maps("libcublas.so.");
    r->user_int[3] = cudaload_load_cublas(); /* idempotent */
    th_capture(r, (cudaload_status)r->init_status);
}

static void test_cublas_lazy(void **state) {
    (void)state;
    const char *roots[] = {th_fixture("toolkit-cu13-wheel")};
    const char *env[] = {driver_env, NULL};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER), 0);
    th_result *r = th_result_new();
    th_run(r, env, child_lazy_cublas, &o);
    expect_status(r, CUDALOAD_OK);
    assert_int_equal(r->user_int[0], 0);
    assert_int_equal(r->user_int[1], CUDALOAD_OK);
    assert_int_equal(r->user_int[2], 1);
    assert_int_equal(r->user_int[3], CUDALOAD_OK);
    th_assert_taken(r, CUDALOAD_LIB_CUBLAS, th_fixture("toolkit-cu13-wheel"), CUDALOAD_SOURCE_CALLER);
    th_result_free(r);
}

/* ---- find-only, threads, fork, before init ---- */

static void test_find_only_loads_nothing(void **state) {
    (void)state;
    const char *roots[] = {th_fixture("toolkit-cu13-wheel")};
    const char *env[] = {driver_env, NULL};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER), CUDALOAD_FLAG_FIND_ONLY | CUDALOAD_FLAG_LOAD_CUBLAS);
    th_result *r = init_expect(env, &o, CUDALOAD_OK);
    assert_int_equal(r->lib[CUDALOAD_LIB_CUDART].loaded, 0);
    assert_non_null(strstr(r->lib[CUDALOAD_LIB_CUDART].path, "toolkit-cu13-wheel/nvidia/cu13/lib/libcudart.so.13"));
    assert_non_null(strstr(r->lib[CUDALOAD_LIB_CUBLAS].path, "toolkit-cu13-wheel/nvidia/cu13/lib/libcublas.so.13"));
    for (int lib = 0; lib < CUDALOAD_LIB_COUNT_; lib++) assert_int_equal(r->maps_count[lib], 0);
    /* the system search is emulated from ld.so.cache (or LD_LIBRARY_PATH) without loading */
    static const char *const rt[] = {"libcudart.so.13", NULL};
    const char *llp = system_step_env("libcudart.so.13", rt);
    const char *env2[] = {driver_env, llp[0] ? llp : NULL, NULL};
    o = th_opts(roots, 0, SRC(SYSTEM), CUDALOAD_FLAG_FIND_ONLY);
    th_run(r, env2, th_init_child, &o);
    expect_status(r, CUDALOAD_OK);
    assert_int_equal(r->lib[CUDALOAD_LIB_CUDART].source, CUDALOAD_SOURCE_SYSTEM);
    assert_int_equal(r->maps_count[CUDALOAD_LIB_CUDART], 0);
    th_result_free(r);
}

/* Find-only with cuBLAS from the system search: its cublasLt is located too, as a real load
 * takes it (by SONAME, before libcublas), with its candidate; and every path is the file
 * itself, symbolic links resolved, as a real load reports it (dlinfo + realpath). The
 * find-only emulation reads LD_LIBRARY_PATH at init, so a directory of symlinks there keeps
 * ld.so.cache's content out of the result. */
static void test_find_only_system_takes_cublaslt(void **state) {
    (void)state;
    static const char *const files[] = {"libcudart.so.13", "libcublasLt.so.13", "libcublas.so.13", NULL};
    static const int libs[] = {CUDALOAD_LIB_CUDART, CUDALOAD_LIB_CUBLASLT, CUDALOAD_LIB_CUBLAS};
    char *dir = toolkit_dir(files, 0), llp[PATH_MAX + 32];
    snprintf(llp, sizeof llp, "LD_LIBRARY_PATH=%s", dir);
    const char *env[] = {driver_env, llp, NULL};
    cudaload_options o = th_opts(NULL, 0, SRC(SYSTEM), CUDALOAD_FLAG_FIND_ONLY | CUDALOAD_FLAG_LOAD_CUBLAS);
    th_result *r = init_expect(env, &o, CUDALOAD_OK);
    for (size_t i = 0; i < 3; i++) {
        char link[PATH_MAX + 32];
        snprintf(link, sizeof link, "%s/%s", dir, files[i]);
        char *real = realpath(link, NULL);
        assert_non_null(real);
        const th_lib *l = &r->lib[libs[i]];
        th_assert_taken(r, libs[i], real, CUDALOAD_SOURCE_SYSTEM);
        assert_string_equal(l->path, real);
        assert_string_equal(l->soname, files[i]);
        assert_int_equal(l->loaded, 0);
        assert_int_equal(l->n_candidates, 1);
        assert_int_equal(l->cand[0].result, CUDALOAD_OK);
        assert_string_equal(l->cand[0].path, real);
        free(real);
    }
    for (int lib = 0; lib < CUDALOAD_LIB_COUNT_; lib++) assert_int_equal(r->maps_count[lib], 0);
    th_result_free(r);
    free(dir);
}

static cudaload_options thread_opts;
static void *thread_init(void *arg) {
    (void)arg;
    return (void *)(intptr_t)cudaload_init(&thread_opts);
}

static void child_threads(th_result *r, void *arg) {
    thread_opts = *(cudaload_options *)arg;
    pthread_t t[32];
    for (int i = 0; i < 32; i++) pthread_create(&t[i], NULL, thread_init, NULL);
    int same = 1;
    for (int i = 0; i < 32; i++) {
        void *ret;
        pthread_join(t[i], &ret);
        if ((intptr_t)ret != CUDALOAD_OK) same = 0;
    }
    r->user_int[0] = same;
    th_capture(r, cudaload_init(NULL));
}

static void test_32_threads_one_load(void **state) {
    (void)state;
    const char *roots[] = {th_fixture("toolkit-cu13-wheel")};
    const char *env[] = {driver_env, NULL};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER), 0);
    th_result *r = th_result_new();
    th_run(r, env, child_threads, &o);
    expect_status(r, CUDALOAD_OK);
    assert_int_equal(r->user_int[0], 1);
    assert_int_equal(r->lib[CUDALOAD_LIB_CUDART].n_candidates, 1);
    assert_int_equal(r->maps_count[CUDALOAD_LIB_CUDART], 1);
    th_result_free(r);
}

static void child_fork(th_result *r, void *arg) {
    th_init_child(r, arg);
    pid_t pid = fork();
    if (pid == 0) {
        /* the grandchild sees the same, completed state and can use the tables */
        _exit(cudaload_init(NULL) == (cudaload_status)r->init_status && cudaload_is_initialized() ? 0 : 1);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    r->user_int[0] = WIFEXITED(st) ? WEXITSTATUS(st) : 99;
}

static void test_init_after_fork(void **state) {
    (void)state;
    const char *roots[] = {th_fixture("toolkit-cu13-wheel")};
    const char *env[] = {driver_env, NULL};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER), 0);
    th_result *r = th_result_new();
    th_run(r, env, child_fork, &o);
    expect_status(r, CUDALOAD_OK);
    assert_int_equal(r->user_int[0], 0);
    th_result_free(r);
}

static void child_before_init(th_result *r, void *arg) {
    (void)arg;
    int v = 0, n = 0;
    cudaload_library_info info = {.size = sizeof info};
    r->user_int[0] = cudaload_driver_version(&v);
    r->user_int[1] = cudaload_device_count(&n);
    r->user_int[2] = cudaload_load_cublas();
    r->user_int[3] = cudaload_get_library_info(CUDALOAD_LIB_CUDART, &info) == CUDALOAD_OK &&
                     info.status == CUDALOAD_ERROR_NOT_ATTEMPTED;
    r->user_int[4] = cudaload_handle(CUDALOAD_LIB_CUDART) == NULL && cudaload_is_initialized() == 0;
    size_t count = 7;
    r->user_int[5] = cudaload_roots(&count) == NULL && count == 0;
    snprintf(r->user, sizeof r->user, "%s", cudaload_last_error());
    r->init_status = 0;
}

static void test_api_before_init(void **state) {
    (void)state;
    th_result *r = th_result_new();
    th_run(r, NULL, child_before_init, NULL);
    assert_int_equal(r->user_int[0], CUDALOAD_ERROR_NOT_INITIALIZED);
    assert_int_equal(r->user_int[1], CUDALOAD_ERROR_NOT_INITIALIZED);
    assert_int_equal(r->user_int[2], CUDALOAD_ERROR_NOT_INITIALIZED);
    assert_int_equal(r->user_int[3], 1);
    assert_int_equal(r->user_int[4], 1);
    assert_int_equal(r->user_int[5], 1);
    assert_non_null(strstr(r->user, "call cudaload_init() first"));
    th_result_free(r);
}

/* ---- review fixes: each scenario failed before its fix ---- */

/* A SONAME the gate skips is located before it is recorded: one installed nowhere is
 * NOT_FOUND (with "not in ..."), not DRIVER_TOO_OLD; one that exists is recorded by its path. */
static void test_system_gate_checks_existence(void **state) {
    (void)state;
    const char *env[] = {driver_env, "FAKE_CUDA_VERSION=11080", "CUDALOAD_SOURCES=system", NULL};
    cudaload_options o = th_opts(NULL, 0, 0, 0);
    th_result *r = init_expect(env, &o, CUDALOAD_ERROR_DRIVER_TOO_OLD); /* the toolkit's .so.13 is in ld.so.cache */
    expect_reason(r, CUDALOAD_LIB_CUDART, "libcudart.so.12 (system search)", CUDALOAD_ERROR_NOT_FOUND,
                  "not in LD_LIBRARY_PATH, /etc/ld.so.cache or the default directories");
    int i = th_find_candidate(r, CUDALOAD_LIB_CUDART, "libcudart.so.13");
    assert_true(i >= 0);
    assert_int_equal(r->lib[CUDALOAD_LIB_CUDART].cand[i].result, CUDALOAD_ERROR_DRIVER_TOO_OLD);
    assert_true(r->lib[CUDALOAD_LIB_CUDART].cand[i].path[0] == '/'); /* the file found, not a label */
    assert_int_equal(r->maps_count[CUDALOAD_LIB_CUDART], 0);
    /* a CUDA 11 driver: only a driver upgrade helps; no wheel is suggested */
    assert_non_null(strstr(r->error, "fix: upgrade the NVIDIA driver: it supports CUDA 11.8"));
    assert_null(strstr(r->error, "pip install"));
    th_result_free(r);
}

/* The advisor's fixes for cudart, as data: user_int[0] = count, then kind, major, branch per
 * fix; the packages of each, space-separated, on lines of user. */
static void child_fixes(th_result *r, void *arg) {
    th_init_child(r, arg);
    cudaload_fix f = {.size = sizeof f};
    size_t n = cudaload_fix_at(CUDALOAD_LIB_CUDART, 0, &f);
    r->user_int[0] = (int)n;
    for (size_t i = 0; i < n && i < 2; i++) { /* user_int[1..6]; [8..13] below */
        cudaload_fix_at(CUDALOAD_LIB_CUDART, i, &f);
        r->user_int[1 + 3 * i] = f.kind;
        r->user_int[2 + 3 * i] = f.major;
        r->user_int[3 + 3 * i] = f.branch;
        size_t l = strlen(r->user);
        snprintf(r->user + l, sizeof r->user - l, "%s\n", f.packages ? f.packages : "");
    }
    /* a caller built with a larger cudaload_fix (members appended later): this version's fields,
     * zeros after them, its size kept; one smaller than the first version's: 0 fixes, untouched */
    struct {
        cudaload_fix f;
        unsigned char newer[16];
    } big;
    memset(&big, 0xA5, sizeof big);
    big.f.size = sizeof big;
    r->user_int[8] = (int)cudaload_fix_at(CUDALOAD_LIB_CUDART, 0, &big.f);
    r->user_int[9] = big.f.size == sizeof big;
    r->user_int[10] = 1;
    for (size_t i = 0; i < sizeof big.newer; i++) r->user_int[10] &= big.newer[i] == 0;
    r->user_int[11] = big.f.kind;
    cudaload_fix small;
    memset(&small, 0xA5, sizeof small);
    small.size = offsetof(cudaload_fix, setting) + sizeof small.setting - 1; /* the first version: through setting */
    r->user_int[12] = (int)cudaload_fix_at(CUDALOAD_LIB_CUDART, 0, &small);
    r->user_int[13] = small.kind == (cudaload_fix_kind)0xA5A5A5A5;
}

/* The DRIVER_TOO_OLD fix fits the driver: a CUDA 12 driver with only CUDA 13 files gets the CUDA
 * 12 wheels (which it runs) or a driver of branch >= 580. */
static void test_driver_too_old_fix_for_cuda12_driver(void **state) {
    (void)state;
    const char *roots[] = {th_fixture("toolkit-cu13-wheel")};
    const char *env[] = {driver_env, "FAKE_CUDA_VERSION=12040", NULL};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER), 0);
    th_result *r = th_result_new();
    th_run(r, env, child_fixes, &o);
    expect_status(r, CUDALOAD_ERROR_DRIVER_TOO_OLD);
    assert_int_equal(r->user_int[0], 2);
    assert_int_equal(r->user_int[1], CUDALOAD_FIX_PIP_INSTALL);
    assert_int_equal(r->user_int[2], 12);
    assert_string_equal(r->user, "nvidia-cuda-runtime-cu12\n\n");
    assert_int_equal(r->user_int[4], CUDALOAD_FIX_UPGRADE_DRIVER);
    assert_int_equal(r->user_int[5], 13);
    assert_int_equal(r->user_int[6], 580);
    assert_int_equal(r->user_int[8], 2); /* a larger struct: the same fixes */
    assert_int_equal(r->user_int[9], 1);
    assert_int_equal(r->user_int[10], 1);
    assert_int_equal(r->user_int[11], CUDALOAD_FIX_PIP_INSTALL);
    assert_int_equal(r->user_int[12], 0); /* smaller than the first version's: none, untouched */
    assert_int_equal(r->user_int[13], 1);
    expect_code(r, CUDALOAD_LIB_CUDART, "libcudart.so.13", CUDALOAD_ERROR_DRIVER_TOO_OLD, CUDALOAD_REASON_DRIVER_TOO_OLD);
    th_result_free(r);
}

/* CUDALOAD_CUBLASLT_PATH fails loudly, naming itself, the path and the reason. */
static void test_cublaslt_override_unusable(void **state) {
    (void)state;
    char lt[PATH_MAX + 32];
    snprintf(lt, sizeof lt, "CUDALOAD_CUBLASLT_PATH=%s", th_fixture("bad/text/lib/libcudart.so.13"));
    const char *roots[] = {th_fixture("toolkit-cu13-wheel")};
    const char *env[] = {driver_env, lt, NULL};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER), CUDALOAD_FLAG_LOAD_CUBLAS);
    th_result *r = init_expect(env, &o, CUDALOAD_ERROR_OVERRIDE_UNUSABLE);
    assert_int_equal(r->lib[CUDALOAD_LIB_CUDART].status, CUDALOAD_OK);
    assert_int_equal(r->lib[CUDALOAD_LIB_CUBLAS].status, CUDALOAD_ERROR_OVERRIDE_UNUSABLE);
    assert_int_equal(r->lib[CUDALOAD_LIB_CUBLASLT].status, CUDALOAD_ERROR_OVERRIDE_UNUSABLE);
    char want[PATH_MAX + 64];
    snprintf(want, sizeof want, "CUDALOAD_CUBLASLT_PATH=%s cannot be used: not an ELF file",
             th_fixture("bad/text/lib/libcudart.so.13"));
    if (!strstr(r->error, want)) fail_msg("message lacks '%s':\n%s", want, r->error);
    assert_int_equal(r->maps_count[CUDALOAD_LIB_CUBLAS], 0); /* no fallback to the good root */
    th_result_free(r);
}

/* CUDALOAD_CUBLASLT_PATH is honoured when cuBLAS comes from the system step too. */
static void test_cublaslt_override_with_system_cublas(void **state) {
    (void)state;
    /* a real load from the system step: LD_LIBRARY_PATH cannot be given after the process
     * started, so only the loader's own paths serve */
    char found[PATH_MAX];
    if (!th_loader_resolves("libcublas.so.13", found, sizeof found))
        TH_SKIP("the dynamic loader finds no libcublas.so.13 here (%s): a CUDA toolkit made of pip's wheels is in "
                "no loader path", found);
    static const char *const rt_only[] = {"libcudart.so.13", NULL};
    char *a = toolkit_dir(rt_only, 1);
    char *ltdir = th_tmpdir(), ltpath[PATH_MAX], src[PATH_MAX], lt[PATH_MAX + 32];
    snprintf(ltpath, sizeof ltpath, "%s/libcublasLt.so.13", ltdir);
    snprintf(src, sizeof src, "%s/libcublasLt.so.13", toolkit_lib());
    th_symlink(src, ltpath);
    snprintf(lt, sizeof lt, "CUDALOAD_CUBLASLT_PATH=%s", ltpath);
    const char *roots[] = {a};
    const char *env[] = {driver_env, lt, NULL};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER) | SRC(SYSTEM), CUDALOAD_FLAG_LOAD_CUBLAS);
    th_result *r = init_expect(env, &o, CUDALOAD_OK);
    th_assert_taken(r, CUDALOAD_LIB_CUBLAS, "/", CUDALOAD_SOURCE_SYSTEM);
    th_assert_taken(r, CUDALOAD_LIB_CUBLASLT, ltpath, CUDALOAD_SOURCE_OVERRIDE);
    assert_int_equal(r->maps_count[CUDALOAD_LIB_CUBLASLT], 1);
    th_result_free(r);
    free(a), free(ltdir);
}

/* Override failures name the variable, or the option when the path came from code. */
static void test_override_message_names_its_origin(void **state) {
    (void)state;
    const char *bad = th_fixture("bad/text/lib/libcudart.so.13");
    char rt[PATH_MAX + 32], want[PATH_MAX + 64];
    snprintf(rt, sizeof rt, "CUDALOAD_CUDART_PATH=%s", bad);
    const char *env[] = {driver_env, rt, NULL};
    cudaload_options o = th_opts(NULL, 0, SRC(CALLER), 0);
    th_result *r = init_expect(env, &o, CUDALOAD_ERROR_OVERRIDE_UNUSABLE);
    snprintf(want, sizeof want, "CUDALOAD_CUDART_PATH=%s cannot be used: not an ELF file", bad);
    if (!strstr(r->error, want)) fail_msg("message lacks '%s':\n%s", want, r->error);
    const char *env2[] = {driver_env, NULL};
    o.cudart_path = bad;
    th_run(r, env2, th_init_child, &o);
    expect_status(r, CUDALOAD_ERROR_OVERRIDE_UNUSABLE);
    snprintf(want, sizeof want, "options.cudart_path=%s cannot be used", bad);
    if (!strstr(r->error, want)) fail_msg("message lacks '%s':\n%s", want, r->error);
    /* the driver's exact file too */
    char drv[PATH_MAX + 32];
    snprintf(drv, sizeof drv, "CUDALOAD_DRIVER_PATH=%s", bad);
    const char *env3[] = {drv, NULL};
    o.cudart_path = NULL;
    th_run(r, env3, th_init_child, &o);
    expect_status(r, CUDALOAD_ERROR_OVERRIDE_UNUSABLE);
    snprintf(want, sizeof want, "CUDALOAD_DRIVER_PATH=%s cannot be used: not an ELF file", bad);
    if (!strstr(r->error, want)) fail_msg("message lacks '%s':\n%s", want, r->error);
    th_result_free(r);
}

/* A bad CUDALOAD_BACKEND is an error naming the variable and the allowed values. */
static void test_bad_backend_is_an_error(void **state) {
    (void)state;
    const char *roots[] = {th_fixture("toolkit-cu13-wheel")};
    const char *env[] = {driver_env, "CUDALOAD_BACKEND=fast", NULL};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER), 0);
    th_result *r = init_expect(env, &o, CUDALOAD_ERROR_INVALID_OPTION);
    assert_non_null(strstr(r->error, "CUDALOAD_BACKEND: 'fast' is not one of auto, bundled, cublas"));
    const char *env2[] = {driver_env, "CUDALOAD_BACKEND=cublas", NULL};
    th_run(r, env2, th_init_child, &o);
    expect_status(r, CUDALOAD_OK);
    th_result_free(r);
}

/* An exact file whose name has no major is gated by its DT_SONAME before it is opened. */
static void test_exact_file_without_major_is_gated(void **state) {
    (void)state;
    char *dir = th_tmpdir(), p[PATH_MAX], src[PATH_MAX], rt[PATH_MAX + 32];
    snprintf(p, sizeof p, "%s/libcudart.so", dir);
    snprintf(src, sizeof src, "%s/libcudart.so.13", toolkit_lib());
    th_copy(src, p);
    snprintf(rt, sizeof rt, "CUDALOAD_CUDART_PATH=%s", p);
    const char *env[] = {driver_env, rt, "CUDALOAD_CUDA_MAJOR=12", NULL};
    cudaload_options o = th_opts(NULL, 0, SRC(CALLER), 0);
    th_result *r = init_expect(env, &o, CUDALOAD_ERROR_OVERRIDE_UNUSABLE);
    expect_reason(r, CUDALOAD_LIB_CUDART, p, CUDALOAD_ERROR_MAJOR_MISMATCH, "CUDA 12 was asked for");
    assert_int_equal(r->maps_count[CUDALOAD_LIB_CUDART], 0);
    /* without the major constraint it is taken, and knows its major */
    const char *env2[] = {driver_env, rt, NULL};
    th_run(r, env2, th_init_child, &o);
    expect_status(r, CUDALOAD_OK);
    th_assert_taken(r, CUDALOAD_LIB_CUDART, p, CUDALOAD_SOURCE_OVERRIDE);
    assert_int_equal(r->lib[CUDALOAD_LIB_CUDART].major, 13);
    th_result_free(r);
    free(dir);
}

/* A loaded copy still wins over an exact file, but the file is a candidate that says so. */
static void test_loaded_copy_over_exact_file_is_visible(void **state) {
    (void)state;
    char rt[PATH_MAX + 32];
    snprintf(rt, sizeof rt, "CUDALOAD_CUDART_PATH=%s", th_fixture("cudahome/lib64/libcudart.so.13"));
    const char *roots[] = {th_fixture("toolkit-cu13-wheel")};
    const char *env[] = {driver_env, rt, NULL};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER), 0);
    th_result *r = th_result_new();
    th_run(r, env, child_preload, &o);
    expect_status(r, CUDALOAD_OK);
    th_assert_taken(r, CUDALOAD_LIB_CUDART, th_fixture("conda/lib/libcudart.so.13"), CUDALOAD_SOURCE_LOADED);
    expect_reason(r, CUDALOAD_LIB_CUDART, "cudahome/lib64/libcudart.so.13", CUDALOAD_ERROR_OVERRIDE_UNUSABLE,
                  "is already loaded in the process from");
    expect_code(r, CUDALOAD_LIB_CUDART, "cudahome/lib64/libcudart.so.13", CUDALOAD_ERROR_OVERRIDE_UNUSABLE,
                CUDALOAD_REASON_LOADED_ELSEWHERE);
    assert_int_equal(r->maps_count[CUDALOAD_LIB_CUDART], 1);
    th_result_free(r);
}

/* When cuBLAS fails, no cublasLt is presented as taken: the one opened for it is closed. */
static void child_cublaslt_table(th_result *r, void *arg) {
    th_init_child(r, arg);
    r->user_int[0] = cudaload_handle(CUDALOAD_LIB_CUBLASLT) != NULL;
    r->user_int[1] = th_count_maps("libcublasLt.so");
}

static void test_cublaslt_not_kept_without_cublas(void **state) {
    (void)state;
    char lt[PATH_MAX + 32], blas[PATH_MAX + 32];
    snprintf(lt, sizeof lt, "CUDALOAD_CUBLASLT_PATH=%s", th_fixture("toolkit-cu13-wheel/nvidia/cu13/lib/libcublasLt.so.13"));
    snprintf(blas, sizeof blas, "CUDALOAD_CUBLAS_PATH=%s", th_fixture("bad/text/lib/libcudart.so.13"));
    const char *roots[] = {th_fixture("toolkit-cu13-wheel")};
    const char *env[] = {driver_env, lt, blas, NULL};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER), CUDALOAD_FLAG_LOAD_CUBLAS);
    th_result *r = th_result_new();
    th_run(r, env, child_cublaslt_table, &o);
    expect_status(r, CUDALOAD_ERROR_OVERRIDE_UNUSABLE);
    assert_int_not_equal(r->lib[CUDALOAD_LIB_CUBLASLT].status, CUDALOAD_OK);
    assert_int_equal(r->lib[CUDALOAD_LIB_CUBLASLT].loaded, 0);
    assert_int_equal(r->user_int[0], 0);
    /* the cublasLt candidate that was "taken" now carries cuBLAS's failure (the exact file
     * for cuBLAS could not be used) and says why it was closed */
    expect_reason(r, CUDALOAD_LIB_CUBLASLT, "libcublasLt.so.13", CUDALOAD_ERROR_OVERRIDE_UNUSABLE,
                  "closed again: no usable libcublas goes with it");
    th_result_free(r);
}

/* cuBLAS retried in a second root after its cublasLt was taken in the first: nothing leaks
 * (the sanitizer build checks the child's heap; elsewhere the walk itself is checked). */
extern int __lsan_do_recoverable_leak_check(void) __attribute__((weak));
/* libcublasLt keeps a buffer of its own that dlclose leaves behind: not libcudaload's leak */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) { return "leak:libcublasLt.so\n"; }

static void child_leak_check(th_result *r, void *arg) {
    th_init_child(r, arg);
    r->user_int[0] = __lsan_do_recoverable_leak_check ? __lsan_do_recoverable_leak_check() : 0;
    r->user_int[1] = __lsan_do_recoverable_leak_check != NULL;
}

static void test_cublaslt_retry_no_leak(void **state) {
    (void)state;
    static const char *const files[] = {"libcudart.so.13", NULL};
    char *bad = toolkit_dir(files, 1), p[PATH_MAX], src[PATH_MAX];
    snprintf(p, sizeof p, "%s/libcublasLt.so.13", bad);
    snprintf(src, sizeof src, "%s/libcublasLt.so.13", toolkit_lib());
    th_symlink(src, p);
    /* a real ELF library that is not cuBLAS (the system's zlib): it passes the file check, so
     * its cublasLt is taken first, and it fails its symbols after dlopen */
    snprintf(p, sizeof p, "%s/libcublas.so.13", bad);
    th_copy(th_fixture("bad/missing-symbol/lib/libcudart.so.13"), p);
    const char *roots[] = {bad, th_fixture("toolkit-cu13-wheel")};
    const char *env[] = {driver_env, NULL};
    cudaload_options o = th_opts(roots, 2, SRC(CALLER), CUDALOAD_FLAG_LOAD_CUBLAS);
    th_result *r = th_result_new();
    th_run(r, env, child_leak_check, &o);
    expect_status(r, CUDALOAD_OK);
    th_assert_taken(r, CUDALOAD_LIB_CUDART, bad, CUDALOAD_SOURCE_CALLER);
    th_assert_taken(r, CUDALOAD_LIB_CUBLASLT, th_fixture("toolkit-cu13-wheel"), CUDALOAD_SOURCE_CALLER);
    th_assert_taken(r, CUDALOAD_LIB_CUBLAS, th_fixture("toolkit-cu13-wheel"), CUDALOAD_SOURCE_CALLER);
    /* the cublasLt taken for it carries cuBLAS's failure and says it was closed again */
    expect_code(r, CUDALOAD_LIB_CUBLASLT, bad, CUDALOAD_ERROR_SYMBOL_MISSING, CUDALOAD_REASON_DEPENDENCY_DROPPED);
    if (r->user_int[0] != 0) fail_msg("LeakSanitizer found leaks in the child (see its report above)");
    if (!r->user_int[1]) print_message("(no LeakSanitizer in this build: leak check skipped)\n");
    th_result_free(r);
    free(bad);
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "--self-helper") == 0) {
        int rc = self_helper(argv[2]);
        fflush(NULL);
        _exit(rc); /* like a scenario child (th_run): the state kept for the process is not a leak */
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cu13_wheel_tree),
        cmocka_unit_test(test_real_cu12_wheels),
        cmocka_unit_test(test_real_cu13_wheel),
        cmocka_unit_test(test_optional_symbol_presence),
        cmocka_unit_test(test_driver_12_takes_cudart_12_from_same_root),
        cmocka_unit_test(test_driver_13_takes_cudart_13),
        cmocka_unit_test(test_wanted_major),
        cmocka_unit_test(test_driver_too_old),
        cmocka_unit_test(test_no_driver),
        cmocka_unit_test(test_no_driver_deterministic),
        cmocka_unit_test(test_driver_missing_symbol_and_stub),
        cmocka_unit_test(test_device_count),
        cmocka_unit_test(test_each_source_beats_the_next),
        cmocka_unit_test(test_scoped_search_keeps_system_out),
        cmocka_unit_test(test_exact_file_override),
        cmocka_unit_test(test_already_loaded_is_reused),
        cmocka_unit_test(test_bad_candidates_skipped),
        cmocka_unit_test(test_all_bad_lists_every_candidate),
        cmocka_unit_test(test_unreadable_file_and_directory),
        cmocka_unit_test(test_cublas_from_cudart_root),
        cmocka_unit_test(test_cublas_major_mix_refused),
        cmocka_unit_test(test_cublas_lazy),
        cmocka_unit_test(test_find_only_loads_nothing),
        cmocka_unit_test(test_find_only_system_takes_cublaslt),
        cmocka_unit_test(test_32_threads_one_load),
        cmocka_unit_test(test_init_after_fork),
        cmocka_unit_test(test_api_before_init),
        cmocka_unit_test(test_system_gate_checks_existence),
        cmocka_unit_test(test_driver_too_old_fix_for_cuda12_driver),
        cmocka_unit_test(test_cublaslt_override_unusable),
        cmocka_unit_test(test_cublaslt_override_with_system_cublas),
        cmocka_unit_test(test_override_message_names_its_origin),
        cmocka_unit_test(test_bad_backend_is_an_error),
        cmocka_unit_test(test_exact_file_without_major_is_gated),
        cmocka_unit_test(test_loaded_copy_over_exact_file_is_visible),
        cmocka_unit_test(test_cublaslt_not_kept_without_cublas),
        cmocka_unit_test(test_cublaslt_retry_no_leak),
    };
    return cmocka_run_group_tests_name("search", tests, setup, NULL);
}
