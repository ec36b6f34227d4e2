/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpu_loader.c -- `make check-gpu`: the loader against a real driver and GPU.
 *
 * On the H100 machine (driver 580, pip cu13 wheels in /opt/torch/.venv, a toolkit in
 * /usr/local/cuda that ld.so.cache also lists):
 *   - with the venv's site-packages as a caller root, cudart and cuBLAS come from its
 *     nvidia/cu13/lib, not /usr/local/cuda; the driver reports >= 13000 and a branch;
 *   - with CUDALOAD_SOURCES=system they come from the system copy instead;
 *   - the tables really work: SAXPY through cuBLAS on the GPU gives the CPU's answer;
 *   - a copy already loaded (as torch would) is reused, one mapping only.
 * The site-packages dir comes from CUDALOAD_GPU_SITE, else from `$PYTHON` (python3).
 * Without a driver or a device every test is skipped with the reason.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cudaload_tables.h"
#include "harness.h"

static char site[PATH_MAX];
static char skip_reason[512];

static int setup(void **state) {
    (void)state;
    const char *s = getenv("CUDALOAD_GPU_SITE");
    if (s && s[0]) {
        snprintf(site, sizeof site, "%s", s);
    } else {
        const char *py = getenv("PYTHON");
        char cmd[512];
        snprintf(cmd, sizeof cmd, "%s -c 'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])' 2>/dev/null",
                 py && py[0] ? py : "python3");
        FILE *p = popen(cmd, "r");
        if (p) {
            if (fgets(site, sizeof site, p)) site[strcspn(site, "\n")] = 0;
            pclose(p);
        }
    }
    void *drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!drv) snprintf(skip_reason, sizeof skip_reason, "no NVIDIA driver (libcuda.so.1: %s)", dlerror());
    else dlclose(drv);
    return 0;
}

#define SKIP_WITHOUT_GPU() TH_SKIP_IF(skip_reason)

static int has_cu13_wheels(void) {
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/nvidia/cu13/lib/libcudart.so.13", site);
    return site[0] && access(p, F_OK) == 0;
}

/* cuBLAS SAXPY on the device through the tables; user_int[0] = 1 when the result is right. */
static void child_saxpy(th_result *r, void *arg) {
    th_init_child(r, arg);
    int n_dev = 0;
    r->user_int[1] = cudaload_device_count(&n_dev);
    r->user_int[2] = n_dev;
    const cudaload_cudart_table *rt = cudaload_cudart();
    const cudaload_cublas_table *bl = cudaload_cublas();
    if (!rt || !bl || n_dev < 1) {
        snprintf(r->user, sizeof r->user, "tables: %s", cudaload_last_error());
        return;
    }
    enum { N = 1 << 20 };
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    for (int i = 0; i < N; i++) {
        x[i] = (float)(i % 1000) * 0.001f;
        y[i] = 1.0f - (float)(i % 7);
    }
    float *dx = NULL, *dy = NULL;
    cublasHandle_t h = NULL;
    const float a = 2.5f;
    int ok = rt->cudaMalloc((void **)&dx, N * sizeof(float)) == cudaSuccess &&
             rt->cudaMalloc((void **)&dy, N * sizeof(float)) == cudaSuccess &&
             rt->cudaMemcpy(dx, x, N * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess &&
             rt->cudaMemcpy(dy, y, N * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess &&
             bl->cublasCreate(&h) == CUBLAS_STATUS_SUCCESS && bl->cublasSaxpy(h, N, &a, dx, 1, dy, 1) == CUBLAS_STATUS_SUCCESS &&
             rt->cudaMemcpy(y, dy, N * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess;
    double max_err = 0;
    for (int i = 0; ok && i < N; i++) {
        double want = 2.5 * ((double)(i % 1000) * 0.001) + (1.0 - (i % 7));
        double err = fabs(y[i] - want);
        if (err > max_err) max_err = err;
    }
    r->user_int[0] = ok && max_err < 1e-5;
    snprintf(r->user, sizeof r->user, "ok=%d max_err=%g last=%s", ok, max_err, rt->cudaGetErrorName(rt->cudaGetLastError()));
    if (h) bl->cublasDestroy(h);
    rt->cudaFree(dx);
    rt->cudaFree(dy);
    free(x);
    free(y);
}

static void test_wheels_beat_the_system_copy(void **state) {
    (void)state;
    SKIP_WITHOUT_GPU();
    if (!has_cu13_wheels()) {
        print_message("skipped: no nvidia/cu13/lib under '%s' (set CUDALOAD_GPU_SITE)\n", site);
        skip();
    }
    const char *roots[] = {site};
    cudaload_options o;
    cudaload_options_init(&o);
    o.roots = roots;
    o.n_roots = 1;
    o.flags = CUDALOAD_FLAG_LOAD_CUBLAS;
    th_result *r = th_result_new();
    th_run(r, NULL, child_saxpy, &o);
    if (r->init_status != CUDALOAD_OK) fail_msg("init: %s\n%s", cudaload_status_name((cudaload_status)r->init_status), r->error);
    char want[PATH_MAX + 32];
    snprintf(want, sizeof want, "%s/nvidia/cu13/lib/", site);
    th_assert_taken(r, CUDALOAD_LIB_CUDART, want, CUDALOAD_SOURCE_CALLER);
    th_assert_taken(r, CUDALOAD_LIB_CUBLAS, want, CUDALOAD_SOURCE_CALLER);
    th_assert_taken(r, CUDALOAD_LIB_CUBLASLT, want, CUDALOAD_SOURCE_CALLER);
    assert_true(r->lib[CUDALOAD_LIB_DRIVER].version >= 13000);
    assert_true(r->lib[CUDALOAD_LIB_DRIVER].branch[0] != 0);
    print_message("driver %d branch %s; cudart %s (%d); cublas %s (%d); %d device(s); %s\n",
                  r->lib[CUDALOAD_LIB_DRIVER].version, r->lib[CUDALOAD_LIB_DRIVER].branch, r->lib[CUDALOAD_LIB_CUDART].path,
                  r->lib[CUDALOAD_LIB_CUDART].version, r->lib[CUDALOAD_LIB_CUBLAS].path, r->lib[CUDALOAD_LIB_CUBLAS].version,
                  r->user_int[2], r->user);
    assert_int_equal(r->user_int[1], CUDALOAD_OK);
    assert_true(r->user_int[2] >= 1);
    if (!r->user_int[0]) fail_msg("SAXPY through the tables failed: %s", r->user);
    assert_int_equal(r->maps_count[CUDALOAD_LIB_CUDART], 1);
    th_result_free(r);
}

static void test_system_scope_takes_the_system_copy(void **state) {
    (void)state;
    SKIP_WITHOUT_GPU();
    const char *roots[] = {site};
    cudaload_options o;
    cudaload_options_init(&o);
    o.roots = roots;
    o.n_roots = site[0] ? 1 : 0;
    o.flags = CUDALOAD_FLAG_LOAD_CUBLAS;
    const char *env[] = {"CUDALOAD_SOURCES=system", NULL};
    th_result *r = th_result_new();
    th_run(r, env, child_saxpy, &o);
    if (r->init_status != CUDALOAD_OK) fail_msg("init: %s\n%s", cudaload_status_name((cudaload_status)r->init_status), r->error);
    assert_int_equal(r->lib[CUDALOAD_LIB_CUDART].source, CUDALOAD_SOURCE_SYSTEM);
    assert_int_equal(r->lib[CUDALOAD_LIB_CUBLAS].source, CUDALOAD_SOURCE_SYSTEM);
    assert_null(site[0] ? strstr(r->lib[CUDALOAD_LIB_CUDART].path, site) : NULL);
    /* the very files the dynamic linker resolves the SONAMEs to (on the H100 machine:
     * /usr/local/cuda, from ld.so.cache) */
    const char *sonames[] = {"libcudart.so.13", "libcublas.so.13"};
    const cudaload_lib libs[] = {CUDALOAD_LIB_CUDART, CUDALOAD_LIB_CUBLAS};
    for (int i = 0; i < 2; i++) {
        char want[PATH_MAX], got[PATH_MAX];
        if (!th_loader_resolves(sonames[i], want, sizeof want)) {
            print_message("system scope: %s: the dynamic linker resolves none to compare with (%s)\n", sonames[i], want);
            continue;
        }
        print_message("system scope: %s: the dynamic linker's choice is %s\n", sonames[i], want);
        assert_non_null(realpath(r->lib[libs[i]].path, got));
        if (strcmp(want, got) != 0) fail_msg("system scope: %s is %s, ld.so.cache names %s", sonames[i], got, want);
    }
    print_message("system scope: cudart %s; cublas %s; %s\n", r->lib[CUDALOAD_LIB_CUDART].path,
                  r->lib[CUDALOAD_LIB_CUBLAS].path, r->user);
    if (!r->user_int[0]) fail_msg("SAXPY through the tables failed: %s", r->user);
    th_result_free(r);
}

static void child_preloaded(th_result *r, void *arg) {
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/nvidia/cu13/lib/libcudart.so.13", site);
    /* as a framework imported first would have done */
    r->user_int[3] = dlopen(p, RTLD_NOW | RTLD_GLOBAL) != NULL;
    child_saxpy(r, arg);
}

static void test_reuses_a_loaded_runtime(void **state) {
    (void)state;
    SKIP_WITHOUT_GPU();
    if (!has_cu13_wheels()) TH_SKIP("no nvidia/cu13/lib under CUDALOAD_GPU_SITE");
    cudaload_options o;
    cudaload_options_init(&o);
    o.flags = CUDALOAD_FLAG_LOAD_CUBLAS;
    th_result *r = th_result_new();
    th_run(r, NULL, child_preloaded, &o);
    assert_int_equal(r->user_int[3], 1);
    if (r->init_status != CUDALOAD_OK) fail_msg("init: %s\n%s", cudaload_status_name((cudaload_status)r->init_status), r->error);
    assert_int_equal(r->lib[CUDALOAD_LIB_CUDART].source, CUDALOAD_SOURCE_LOADED);
    assert_int_equal(r->lib[CUDALOAD_LIB_CUDART].already_loaded, 1);
    assert_int_equal(r->maps_count[CUDALOAD_LIB_CUDART], 1);
    if (!r->user_int[0]) fail_msg("SAXPY through the tables failed: %s", r->user);
    th_result_free(r);
}

/* Every driver entry the table holds is the ABI its prototype declares: where the driver
 * exports the entry under its own name (cuStreamGetCtx, cuStreamGetCtx_v2, cuMemAlloc_v2,
 * ..._ptsz), the table's pointer is that export. cuGetProcAddress asked for a newer version than
 * the entry's hands out the newer ABI (cuStreamGetCtx at 12050 is cuStreamGetCtx_v2, which takes
 * a third argument); a call through the old prototype then writes through garbage. Then the
 * entry that was wrong so, called: cuStreamGetCtx of the legacy stream of the current context. */
static const cudaload_driver_table *abi_d;
static void *abi_h;
static int abi_checked, abi_wrong;
static char abi_names[1024];
static void abi_check(const char *symbol, void *entry, int has) {
    void *exported = dlsym(abi_h, symbol);
    if (!has || !exported) return;
    abi_checked++;
    if (exported != entry) {
        abi_wrong++;
        size_t n = strlen(abi_names);
        snprintf(abi_names + n, sizeof abi_names - n, "%s%s", n ? " " : "", symbol);
    }
}
#define ABI_CHECK(member, symbol, since, ret, params) abi_check(#symbol, (void *)abi_d->member, abi_d->has.member);

static void child_driver_abi(th_result *r, void *arg) {
    th_init_child(r, arg);
    abi_d = cudaload_driver();
    const cudaload_library_info *li = NULL;
    cudaload_library_info info = {.size = sizeof info};
    if (cudaload_get_library_info(CUDALOAD_LIB_DRIVER, &info) == CUDALOAD_OK) li = &info;
    abi_h = li && li->path ? dlopen(li->path, RTLD_NOW | RTLD_NOLOAD) : NULL;
    if (!abi_d || !abi_h) {
        snprintf(r->user, sizeof r->user, "no driver table or handle: %s", cudaload_last_error());
        return;
    }
    CUDALOAD_CUDA_API(ABI_CHECK)
    r->user_int[0] = abi_checked;
    r->user_int[1] = abi_wrong;
    int n = 0;
    CUcontext ctx = NULL, got = NULL;
    CUdevice dev;
    r->user_int[2] = cudaload_device_count(&n) == CUDALOAD_OK && abi_d->cuDeviceGet(&dev, 0) == CUDA_SUCCESS &&
                     abi_d->cuDevicePrimaryCtxRetain(&ctx, dev) == CUDA_SUCCESS && abi_d->cuCtxPushCurrent(ctx) == CUDA_SUCCESS &&
                     abi_d->has.cuStreamGetCtx && abi_d->cuStreamGetCtx(CU_STREAM_LEGACY, &got) == CUDA_SUCCESS && got == ctx;
    snprintf(r->user, sizeof r->user, "%s", abi_names);
}

static void test_driver_entries_are_their_declared_abi(void **state) {
    (void)state;
    SKIP_WITHOUT_GPU();
    th_result *r = th_result_new();
    th_run(r, NULL, child_driver_abi, NULL);
    if (r->init_status != CUDALOAD_OK) fail_msg("init: %s\n%s", cudaload_status_name((cudaload_status)r->init_status), r->error);
    print_message("%d driver entries exported under their own name, %d not the export: %s\n", r->user_int[0], r->user_int[1],
                  r->user);
    assert_true(r->user_int[0] > 300);
    assert_int_equal(r->user_int[1], 0);
    assert_int_equal(r->user_int[2], 1);
    th_result_free(r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wheels_beat_the_system_copy),
        cmocka_unit_test(test_system_scope_takes_the_system_copy),
        cmocka_unit_test(test_reuses_a_loaded_runtime),
        cmocka_unit_test(test_driver_entries_are_their_declared_abi),
    };
    return cmocka_run_group_tests_name("gpu_loader", tests, setup, NULL);
}
