/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_walk.c -- guarantees of the one walk that the catalogue redesign added or fixed, each on
 * real files (the toolkit's, the pip wheels' in the fixture venvs) and the fake driver:
 *
 *   - a loaded copy decides: one that fails a check is refused and no second file of that
 *     library is mapped behind it;
 *   - a loaded CUDA 12 runtime is kept over installed CUDA 13 wheels, and the wheels' file is
 *     reported as not used (MAJOR_MIXED);
 *   - foreign code that forks in the middle of the walk (here the driver's cuDriverGetVersion,
 *     as a constructor or cuInit could) does not deadlock;
 *   - foreign code run by the walk (a constructor, the driver's cuDriverGetVersion) that calls
 *     back into libcudaload gets REENTRANT for a call that would walk, answers for the others,
 *     and another thread's getters answer while it runs (no lock held across it);
 *   - the driver's table is published once, after the cuda-compat decision, never changed;
 *   - find-only and load in every order across cuSOLVER and its dependencies;
 *   - cuBLAS asked for after cudart failed is reported with cudart's status, not "not attempted";
 *   - a file swapped after its check (before dlopen, during its dependencies' load, or in and back
 *     around dlopen) is refused: the mapping's device and inode are the checked descriptor's;
 *   - a root, CUDA_HOME or CONDA_PREFIX near PATH_MAX: each candidate that does not fit is
 *     recorded (PATH_TOO_LONG), none truncated or passed over;
 *   - cudaload_device_count asks the driver again after a transient failure, keeps a permanent one;
 *   - every catalogue library of the toolkit: order, corrupt candidate, exact file, find-only.
 *
 * Assertions are on statuses, sources, reason codes and /proc/self/maps, not on text.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "internal.h"

#define SRC(s) CUDALOAD_SOURCE_BIT(CUDALOAD_SOURCE_##s)

static const char *driver_env; /* the fake driver (th_fake_driver_env) */
static const char *toolkit;    /* the toolkit's library directory (fixtures.env) */

static int setup(void **state) {
    (void)state;
    if (!th_require_build(1)) return -1;
    driver_env = th_fake_driver_env();
    toolkit = th_fixture_env("CUDA_TOOLKIT_LIB");
    return 0;
}

static int find_code(const th_result *r, int lib, const char *part, int result, int code) {
    for (int i = 0; i < r->lib[lib].n_candidates && i < TH_MAX_CANDS; i++) {
        const th_cand *c = &r->lib[lib].cand[i];
        if (strstr(c->path, part) && c->result == result && c->code == code) return 1;
    }
    print_message("no %s candidate matching '%s' with %s / %s; message:\n%s\n", cudaload_lib_name((cudaload_lib)lib), part,
                  cudaload_status_name((cudaload_status)result), cudaload_reason_name((cudaload_reason)code), r->error);
    for (int i = 0; i < r->lib[lib].n_candidates && i < TH_MAX_CANDS; i++)
        print_message("  %s: %s %s\n", r->lib[lib].cand[i].path, cudaload_status_name((cudaload_status)r->lib[lib].cand[i].result),
                      cudaload_reason_name((cudaload_reason)r->lib[lib].cand[i].code));
    return 0;
}

/* dlopen the file named by arg's preload (RTLD_LOCAL, as torch's extension would), then init. */
typedef struct preload_job {
    const char *preload;
    cudaload_options *opts;
} preload_job;

static void child_preload_init(th_result *r, void *arg) {
    preload_job *j = arg;
    if (!dlopen(j->preload, RTLD_NOW | RTLD_LOCAL)) {
        snprintf(r->user, sizeof r->user, "preload failed: %s", dlerror());
        return;
    }
    th_init_child(r, j->opts);
}

/* A loaded CUDA 13 runtime, with CUDA 12 asked for: the loaded copy is refused with its code,
 * and no CUDA 12 runtime is mapped behind it (one process, one runtime). */
static void test_loaded_copy_that_fails_stops_the_search(void **state) {
    (void)state;
    char pre[PATH_MAX];
    snprintf(pre, sizeof pre, "%s/libcudart.so.13", toolkit);
    const char *roots[] = {th_fixture_env("VENV_CU12_SITE")};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER), 0);
    o.cuda_major = 12;
    preload_job j = {pre, &o};
    const char *env[] = {driver_env, NULL};
    th_result *r = th_result_new();
    th_run(r, env, child_preload_init, &j);
    assert_string_equal(r->user, "");
    assert_int_equal(r->init_status, CUDALOAD_ERROR_MAJOR_MISMATCH);
    assert_true(find_code(r, CUDALOAD_LIB_CUDART, "libcudart.so.13", CUDALOAD_ERROR_MAJOR_MISMATCH,
                          CUDALOAD_REASON_MAJOR_NOT_ASKED));
    assert_int_equal(r->lib[CUDALOAD_LIB_CUDART].n_candidates, 1); /* nothing after it */
    assert_int_equal(r->maps_count[CUDALOAD_LIB_CUDART], 1);
    th_result_free(r);
}

/* torch loaded CUDA 12's runtime; CUDA 13 wheels are installed too: the loaded one is kept,
 * the process's major is 12, and the CUDA 13 file is reported as not used. */
static void test_loaded_older_major_kept_and_reported(void **state) {
    (void)state;
    char pre[PATH_MAX];
    snprintf(pre, sizeof pre, "%s/nvidia/cuda_runtime/lib/libcudart.so.12", th_fixture_env("VENV_CU12_SITE"));
    const char *roots[] = {th_fixture("toolkit-cu13-wheel")};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER), 0);
    preload_job j = {pre, &o};
    const char *env[] = {driver_env, NULL};
    th_result *r = th_result_new();
    th_run(r, env, child_preload_init, &j);
    assert_int_equal(r->init_status, CUDALOAD_OK);
    th_assert_taken(r, CUDALOAD_LIB_CUDART, th_fixture_env("VENV_CU12_SITE"), CUDALOAD_SOURCE_LOADED);
    assert_int_equal(r->lib[CUDALOAD_LIB_CUDART].major, 12);
    assert_true(find_code(r, CUDALOAD_LIB_CUDART, "toolkit-cu13-wheel/nvidia/cu13/lib/libcudart.so.13",
                          CUDALOAD_ERROR_MAJOR_MISMATCH, CUDALOAD_REASON_MAJOR_MIXED));
    assert_int_equal(r->maps_count[CUDALOAD_LIB_CUDART], 1);
    th_result_free(r);
}

/* The driver's cuDriverGetVersion forks in the middle of init's walk, on the walking thread: the
 * atfork handler must not wait for that walk (a deadlock otherwise, killed after the harness's
 * timeout). */
static void test_fork_in_foreign_code_of_the_walk(void **state) {
    (void)state;
    const char *roots[] = {th_fixture("toolkit-cu13-wheel")};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER), 0);
    const char *env[] = {driver_env, "FAKE_CUDA_FORK_IN_DRIVER_GET_VERSION=1", NULL};
    th_result *r = th_result_new();
    th_run_raw(r, env, th_init_child, &o);
    assert_int_equal(r->timed_out, 0);
    assert_int_equal(r->exited, 1);
    assert_int_equal(r->init_status, CUDALOAD_OK);
    th_result_free(r);
}

/* A signal handler forks while its thread holds the context's lock and the kernels' lock (after
 * cl_lock/cl_klock returned, before cl_kunlock/cl_unlock: what fork_guard.h handles). The
 * prepare handlers must not wait for those locks (a deadlock, killed after the harness's
 * timeout); parent and child each go on, release them, and take them again. */
static volatile sig_atomic_t fork_signal_pid = -1; /* fork()'s answer in the handler: 0 in the child */
static void fork_in_handler(int sig) {
    (void)sig;
    fork_signal_pid = fork();
}
static void child_fork_from_signal_handler(th_result *r, void *arg) {
    r->init_status = cudaload_init(arg); /* the loader's fork handlers are registered */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fork_in_handler;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    cl_klock();
    cl_lock();
    raise(SIGUSR1); /* delivered before raise returns, on this thread */
    cl_unlock();
    cl_kunlock();
    if (fork_signal_pid == 0) _exit(cudaload_is_initialized() ? 0 : 3); /* the lock taken again */
    r->user_int[0] = fork_signal_pid > 0 ? th_wait_or_kill((int)fork_signal_pid, 20) : -1;
    r->user_int[1] = cudaload_is_initialized();
    cl_klock(); /* the kernels' lock again, in the parent */
    cl_kunlock();
}

static void test_fork_from_a_signal_handler_holding_the_lock(void **state) {
    (void)state;
    const char *roots[] = {th_fixture("toolkit-cu13-wheel")};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER), 0);
    const char *env[] = {driver_env, NULL};
    th_result *r = th_result_new();
    th_run_raw(r, env, child_fork_from_signal_handler, &o);
    assert_int_equal(r->timed_out, 0);
    assert_int_equal(r->exited, 1);
    assert_int_equal(r->init_status, CUDALOAD_OK);
    assert_int_equal(r->user_int[0], 0); /* the child: exited 0, not hung (TH_WAIT_HUNG) */
    assert_int_equal(r->user_int[1], 1);
    th_result_free(r);
}

/* cuBLAS asked for when cudart was not found: its status is cudart's (searched: no), and the
 * info says so instead of NOT_ATTEMPTED. */
static void child_cublas_after_failed_cudart(th_result *r, void *arg) {
    cudaload_status st = cudaload_init(arg);
    r->user_int[0] = cudaload_load_cublas();
    th_capture(r, st);
}

static void test_cublas_after_cudart_failed(void **state) {
    (void)state;
    char *empty = th_tmpdir();
    const char *roots[] = {empty};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER), 0);
    const char *env[] = {driver_env, NULL};
    th_result *r = th_result_new();
    th_run(r, env, child_cublas_after_failed_cudart, &o);
    assert_int_equal(r->init_status, CUDALOAD_ERROR_NOT_FOUND);
    assert_int_equal(r->user_int[0], CUDALOAD_ERROR_NOT_FOUND);
    assert_int_equal(r->lib[CUDALOAD_LIB_CUBLAS].status, CUDALOAD_ERROR_NOT_FOUND);
    th_result_free(r);
    free(empty);
}

/* A file replaced after its check: the mapped file is not the one whose header was read (the
 * descriptor opened for the check), so the candidate is refused (FILE_CHANGED) and the walk goes
 * on to the next root. Three moments: just before dlopen; once its dependencies are loaded (their
 * constructors could do it); and swapped in before dlopen and back after it, which a second stat
 * of the path would not see. Each swap puts the same bytes under another inode. */
static char swap_from[PATH_MAX], swap_to[PATH_MAX], swap_keep[PATH_MAX];
static void swap_in(const char *path) {
    if (strcmp(path, swap_to) != 0) return;
    if (rename(swap_to, swap_keep) != 0 || rename(swap_from, swap_to) != 0) perror("rename");
}
static void swap_back(const char *path) {
    if (strcmp(path, swap_to) != 0) return;
    if (rename(swap_to, swap_from) != 0 || rename(swap_keep, swap_to) != 0) perror("rename");
}

typedef struct swap_job {
    int when; /* 0: before dlopen, 1: during the dependencies' load, 2: in before dlopen, back after */
    int lib;
    const cudaload_options *o;
} swap_job;

static void child_swap(th_result *r, void *arg) {
    const swap_job *j = arg;
    if (j->when == 1) cl_test_during_deps = swap_in;
    else cl_test_before_dlopen = swap_in;
    if (j->when == 2) cl_test_after_dlopen = swap_back;
    cudaload_status st = cudaload_init(j->o);
    if (j->lib == CUDALOAD_LIB_CUBLAS) r->user_int[0] = cudaload_load_cublas();
    th_capture(r, st);
}

static void run_swap(int when, int lib, const char *file) {
    char *site = th_tmpdir(), dir[PATH_MAX], src[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/nvidia/cu13/lib", site);
    th_mkdirs(dir);
    snprintf(src, sizeof src, "%s/%s", toolkit, file);
    snprintf(swap_to, sizeof swap_to, "%s/%s", dir, file);
    snprintf(swap_from, sizeof swap_from, "%s/other-copy", dir);
    snprintf(swap_keep, sizeof swap_keep, "%s/kept-copy", dir);
    th_copy(src, swap_to);
    th_copy(src, swap_from); /* the same bytes, another inode */
    /* cuBLAS: its dependency beside it, and the runtime (whose root is searched first) */
    static const char *const beside[] = {"libcublasLt.so.13", "libcudart.so.13"};
    for (size_t i = 0; lib == CUDALOAD_LIB_CUBLAS && i < 2; i++) {
        char link[PATH_MAX], target[PATH_MAX];
        snprintf(link, sizeof link, "%s/%s", dir, beside[i]);
        snprintf(target, sizeof target, "%s/%s", toolkit, beside[i]);
        th_symlink(target, link);
    }
    const char *roots[] = {site, th_fixture("toolkit-cu13-wheel")};
    cudaload_options o = th_opts(roots, 2, SRC(CALLER), 0);
    swap_job j = {when, lib, &o};
    const char *env[] = {driver_env, NULL};
    th_result *r = th_result_new();
    th_run(r, env, child_swap, &j);
    assert_int_equal(r->init_status, CUDALOAD_OK);
    if (lib == CUDALOAD_LIB_CUBLAS) assert_int_equal(r->user_int[0], CUDALOAD_OK);
    assert_true(find_code(r, lib, site, CUDALOAD_ERROR_NOT_FOUND, CUDALOAD_REASON_FILE_CHANGED));
    th_assert_taken(r, lib, th_fixture("toolkit-cu13-wheel"), CUDALOAD_SOURCE_CALLER);
    th_result_free(r);
    free(site);
}

static void test_file_swapped_before_dlopen(void **state) {
    (void)state;
    run_swap(0, CUDALOAD_LIB_CUDART, "libcudart.so.13");
}

static void test_file_swapped_during_dependencies(void **state) {
    (void)state;
    run_swap(1, CUDALOAD_LIB_CUBLAS, "libcublas.so.13");
}

static void test_file_swapped_and_swapped_back(void **state) {
    (void)state;
    run_swap(2, CUDALOAD_LIB_CUDART, "libcudart.so.13");
}

/* Paths longer than the system's limit (PATH_MAX): a root near the limit whose candidates do not
 * fit, and CUDA_HOME and CONDA_PREFIX near it (their library directories and cuda-compat copies
 * do not fit). Each such candidate is recorded with PATH_TOO_LONG, never truncated nor passed
 * over as if absent. */
static int find_source_code(const th_result *r, int lib, int source, int code) {
    for (int i = 0; i < r->lib[lib].n_candidates && i < TH_MAX_CANDS; i++)
        if (r->lib[lib].cand[i].source == source && r->lib[lib].cand[i].code == code) return 1;
    print_message("no %s candidate from %s with %s; message:\n%s\n", cudaload_lib_name((cudaload_lib)lib),
                  cudaload_source_name((cudaload_source)source), cudaload_reason_name((cudaload_reason)code), r->error);
    return 0;
}

/* dir/xxx...x/xxx...x/... made (mkdir each) until it is len bytes long (PATH_MAX - len small) */
static void long_dir(char *out, size_t cap, const char *dir, size_t len, int make) {
    snprintf(out, cap, "%s", dir);
    while (strlen(out) < len) {
        size_t l = strlen(out), add = len - l - 1 > 200 ? 200 : len - l - 1;
        out[l] = '/';
        memset(out + l + 1, 'x', add);
        out[l + 1 + add] = 0;
        if (make) th_mkdirs(out);
    }
}

static void test_root_near_path_max(void **state) {
    (void)state;
    char *site = th_tmpdir(), cwd[PATH_MAX], src[PATH_MAX];
    static char root[PATH_MAX];
    long_dir(root, sizeof root, site, PATH_MAX - 12, 1); /* "<root>/libcudart.so.13" does not fit */
    snprintf(src, sizeof src, "%s/libcudart.so.13", toolkit);
    /* the file is there, reached by a relative path from inside the root */
    if (!getcwd(cwd, sizeof cwd) || chdir(root) != 0) fail_msg("chdir into the long root failed");
    th_copy(src, "libcudart.so.13");
    if (chdir(cwd) != 0) fail_msg("chdir back failed");
    const char *roots[] = {root, th_fixture("toolkit-cu13-wheel")};
    cudaload_options o = th_opts(roots, 2, SRC(CALLER), 0);
    const char *env[] = {driver_env, NULL};
    th_result *r = th_result_new();
    th_run(r, env, th_init_child, &o);
    assert_int_equal(r->init_status, CUDALOAD_OK);
    th_assert_taken(r, CUDALOAD_LIB_CUDART, th_fixture("toolkit-cu13-wheel"), CUDALOAD_SOURCE_CALLER);
    assert_true(find_code(r, CUDALOAD_LIB_CUDART, site, CUDALOAD_ERROR_NOT_FOUND, CUDALOAD_REASON_PATH_TOO_LONG));
    th_result_free(r);
    free(site);
}

static void test_cuda_home_and_conda_near_path_max(void **state) {
    (void)state;
    char *site = th_tmpdir();
    static char home[PATH_MAX + 16], conda[PATH_MAX + 16];
    char home_dir[PATH_MAX], conda_dir[PATH_MAX];
    snprintf(home_dir, sizeof home_dir, "%s/home", site);
    snprintf(conda_dir, sizeof conda_dir, "%s/conda", site);
    long_dir(home + 10, sizeof home - 10, home_dir, PATH_MAX - 10, 0); /* lib64/... does not fit */
    long_dir(conda + 13, sizeof conda - 13, conda_dir, PATH_MAX - 10, 0);
    memcpy(home, "CUDA_HOME=", 10);
    memcpy(conda, "CONDA_PREFIX=", 13);
    cudaload_options o = th_opts(NULL, 0, SRC(CUDA_HOME) | SRC(CONDA), 0);
    const char *env[] = {driver_env, home, conda, NULL};
    th_result *r = th_result_new();
    th_run(r, env, th_init_child, &o);
    assert_int_equal(r->init_status, CUDALOAD_ERROR_NOT_FOUND);
    assert_true(find_source_code(r, CUDALOAD_LIB_CUDART, CUDALOAD_SOURCE_CUDA_HOME, CUDALOAD_REASON_PATH_TOO_LONG));
    assert_true(find_source_code(r, CUDALOAD_LIB_CUDART, CUDALOAD_SOURCE_CONDA, CUDALOAD_REASON_PATH_TOO_LONG));
    /* their cuda-compat copies, the driver's candidates */
    assert_true(find_source_code(r, CUDALOAD_LIB_DRIVER, CUDALOAD_SOURCE_CUDA_HOME, CUDALOAD_REASON_PATH_TOO_LONG));
    assert_true(find_source_code(r, CUDALOAD_LIB_DRIVER, CUDALOAD_SOURCE_CONDA, CUDALOAD_REASON_PATH_TOO_LONG));
    th_result_free(r);
    free(site);
}

/* cudaload_device_count: a transient cuInit failure is asked again on the next call, a
 * permanent one is kept (the fake driver fails only its first cuInit). */
static void child_device_count_twice(th_result *r, void *arg) {
    th_init_child(r, arg);
    int n = -1;
    r->user_int[0] = cudaload_device_count(&n);
    r->user_int[1] = cudaload_device_count(&n);
    r->user_int[2] = n;
    r->user_int[3] = cudaload_device_cu_result();
}

static void test_device_count_retries_transient_errors(void **state) {
    (void)state;
    const char *roots[] = {th_fixture("toolkit-cu13-wheel")};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER), 0);
    const char *transient[] = {driver_env, "FAKE_CUDA_INIT_ERROR=2", "FAKE_CUDA_INIT_ERROR_COUNT=1", NULL}; /* OUT_OF_MEMORY */
    const char *permanent[] = {driver_env, "FAKE_CUDA_INIT_ERROR=34", "FAKE_CUDA_INIT_ERROR_COUNT=1", NULL}; /* STUB_LIBRARY */
    th_result *r = th_result_new();
    th_run(r, transient, child_device_count_twice, &o);
    assert_int_equal(r->user_int[0], CUDALOAD_ERROR_CUDA);
    assert_int_equal(r->user_int[1], CUDALOAD_OK);
    assert_int_equal(r->user_int[2], 1);
    assert_int_equal(r->user_int[3], 0); /* the second call succeeded */
    th_run(r, permanent, child_device_count_twice, &o);
    assert_int_equal(r->user_int[0], CUDALOAD_ERROR_CUDA);
    assert_int_equal(r->user_int[1], CUDALOAD_ERROR_CUDA);
    assert_int_equal(r->user_int[3], 34);
    /* a libcuda that does not go with the kernel module (a cuda-compat copy of an older branch,
     * as on the H100 machine): the driver's own code, as data */
    const char *mismatch[] = {driver_env, "FAKE_CUDA_INIT_ERROR=803", NULL};
    th_run(r, mismatch, child_device_count_twice, &o);
    assert_int_equal(r->user_int[0], CUDALOAD_ERROR_CUDA);
    assert_int_equal(r->user_int[3], CUDA_ERROR_SYSTEM_DRIVER_MISMATCH);
    th_result_free(r);
}

/* ---- per library of the toolkit: order, a corrupt candidate, the exact file, find-only ---- */

typedef struct lib_case {
    const char *name, *file, *maps, *dir; /* dir: its wheel directory under site-packages */
    int major;                            /* the major the walk can tell for it */
} lib_case;
#define CU13 "nvidia/cu13/lib"
static const lib_case cases[] = {
    {"cufft", "libcufft.so.12", "libcufft.so", CU13, 13},       {"curand", "libcurand.so.10", "libcurand.so", CU13, 13},
    {"cusparse", "libcusparse.so.12", "libcusparse.so", CU13, 13}, {"nvrtc", "libnvrtc.so.13", "libnvrtc.so", CU13, 13},
    {"nvJitLink", "libnvJitLink.so.13", "libnvJitLink.so", CU13, 13},
    {"cusolver", "libcusolver.so.12", "libcusolver.so", CU13, 13}, {"cufftw", "libcufftw.so.12", "libcufftw.so", CU13, 13},
    {"nvblas", "libnvblas.so.13", "libnvblas.so", CU13, 13},    {"cupti", "libcupti.so.13", "libcupti.so", CU13, 13},
    {"nvvm", "libnvvm.so.4", "libnvvm.so", CU13, 13},
    /* wheels of their own, one directory for both majors: no dist-info in these trees, so the
     * major stays unknown (0); test_dist_info_tells_the_major gives it one */
    {"cudnn", "libcudnn.so.9", "libcudnn.so", "nvidia/cudnn/lib", 0}, {"nccl", "libnccl.so.2", "libnccl.so", "nvidia/nccl/lib", 0},
};

/* One library, by name, in a child: what it saw, in the result's user fields. */
typedef struct one {
    const char *name, *maps;
    cudaload_options *opts;
} one;
static void child_one(th_result *r, void *arg) {
    const one *o = arg;
    th_init_child(r, o->opts);
    cudaload_library_info info = {.size = sizeof info};
    r->user_int[0] = cudaload_library(o->name, &info);
    r->user_int[1] = info.source;
    r->user_int[2] = info.loaded;
    r->user_int[3] = info.major;
    r->user_int[4] = th_count_maps(o->maps);
    r->user_int[5] = (int)info.n_candidates;
    snprintf(r->user, sizeof r->user, "%s", info.path ? info.path : "");
    /* the reason codes, one per candidate, as user_int[6..] */
    for (size_t i = 0; i < info.n_candidates && i < 10; i++) r->user_int[6 + i] = info.details[i].reason;
}

static th_result *run_one(const lib_case *c, cudaload_options *opts, const char *const *env) {
    one arg = {c->name, c->maps, opts};
    th_result *r = th_result_new();
    th_run(r, env, child_one, &arg);
    return r;
}

/* A site-packages with the toolkit's cudart and the cases' files in their wheel directories
 * (all of them, or only cudart with a corrupt copy of one case's file). */
static char *tree(const lib_case *corrupt) {
    char *site = th_tmpdir();
    char dir[PATH_MAX], p[PATH_MAX], src[PATH_MAX];
    static const char *const base[] = {"libcudart.so.13", "libcublasLt.so.13", "libcublas.so.13", NULL};
    snprintf(dir, sizeof dir, "%s/" CU13, site);
    th_mkdirs(dir);
    for (size_t i = 0; base[i] && (!corrupt || i == 0); i++) {
        snprintf(p, sizeof p, "%s/%s", dir, base[i]);
        snprintf(src, sizeof src, "%s/%s", toolkit, base[i]);
        th_symlink(src, p);
    }
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const lib_case *c = &cases[k];
        if (corrupt && c != corrupt) continue;
        snprintf(dir, sizeof dir, "%s/%s", site, c->dir);
        th_mkdirs(dir);
        snprintf(p, sizeof p, "%s/%s", dir, c->file);
        snprintf(src, sizeof src, "%s/%s", toolkit, c->file);
        if (corrupt) th_write(p, "not a library\n", 14);
        else th_symlink(src, p);
    }
    return site;
}

/* Whether the toolkit has case c's file; else, the first time, its name is added to missing. */
static int toolkit_has(const lib_case *c, char *missing, size_t n) {
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/%s", toolkit, c->file);
    if (access(p, R_OK) == 0) return 1;
    if (!strstr(missing, c->file)) snprintf(missing + strlen(missing), n - strlen(missing), " %s", c->file);
    return 0;
}

static void test_every_toolkit_library(void **state) {
    (void)state;
    char *good = tree(NULL);
    const char *env[] = {driver_env, NULL};
    /* the cases whose file the toolkit lacks (a toolkit made of pip's wheels has only the pins
     * of tools/cuda-pins.txt: no cuPTI, cuDNN, NCCL): every other case runs, then the test
     * skips naming them */
    char missing[512] = "";
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const lib_case *c = &cases[k];
        if (!toolkit_has(c, missing, sizeof missing)) continue;
        char *bad = tree(c), exact[PATH_MAX + 64];
        const char *roots[] = {bad, good};
        print_message("%s\n", c->name);

        /* order: the corrupt copy in the first root is skipped with its code, the second root's taken */
        cudaload_options o = th_opts(roots, 2, SRC(CALLER), 0);
        th_result *r = run_one(c, &o, env);
        if (r->user_int[0] != CUDALOAD_OK || strncmp(r->user, good, strlen(good)) != 0)
            fail_msg("%s: status %s path %s", c->name, cudaload_status_name((cudaload_status)r->user_int[0]), r->user);
        assert_int_equal(r->user_int[1], CUDALOAD_SOURCE_CALLER);
        assert_int_equal(r->user_int[2], 1);
        assert_int_equal(r->user_int[4], 1); /* one copy mapped */
        assert_int_equal(r->user_int[6], CUDALOAD_REASON_FILE_UNUSABLE);
        /* the version tells the major where the row has a rule; else the wheel dir does */
        assert_int_equal(r->user_int[3], c->major);
        th_result_free(r);

        /* find-only: the same file, nothing mapped */
        o = th_opts(roots, 2, SRC(CALLER), CUDALOAD_FLAG_FIND_ONLY);
        r = run_one(c, &o, env);
        assert_int_equal(r->user_int[0], CUDALOAD_OK);
        assert_int_equal(strncmp(r->user, good, strlen(good)), 0);
        assert_int_equal(r->user_int[2], 0);
        assert_int_equal(r->user_int[4], 0);
        th_result_free(r);

        /* the exact file wins over the roots; a corrupt one fails loudly */
        char upper[64];
        size_t n = 0;
        for (const char *p = c->name; *p; p++) upper[n++] = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
        upper[n] = 0;
        snprintf(exact, sizeof exact, "CUDALOAD_%s_PATH=%s/%s/%s", upper, good, c->dir, c->file);
        const char *env2[] = {driver_env, exact, NULL};
        o = th_opts(roots, 1, SRC(CALLER), 0);
        r = run_one(c, &o, env2);
        assert_int_equal(r->user_int[0], CUDALOAD_OK);
        assert_int_equal(r->user_int[1], CUDALOAD_SOURCE_OVERRIDE);
        th_result_free(r);
        snprintf(exact, sizeof exact, "CUDALOAD_%s_PATH=%s/%s/%s", upper, bad, c->dir, c->file);
        r = run_one(c, &o, env2);
        assert_int_equal(r->user_int[0], CUDALOAD_ERROR_OVERRIDE_UNUSABLE);
        assert_int_equal(r->user_int[4], 0);
        th_result_free(r);
        free(bad);
    }
    free(good);
    if (missing[0]) TH_SKIP("the toolkit in %s lacks%s (the other libraries were checked)", toolkit, missing);
}

/* cuDNN's wheels put CUDA 12's and 13's build in the same nvidia/cudnn/lib: the package
 * installed in the root (its dist-info) tells the major. */
static void test_dist_info_tells_the_major(void **state) {
    (void)state;
    char missing[128] = "";
    if (!toolkit_has(&cases[10], missing, sizeof missing))
        TH_SKIP("the toolkit in %s has no%s (a CUDA toolkit made of pip's wheels has no cuDNN)", toolkit, missing);
    char *site = tree(NULL), p[PATH_MAX];
    snprintf(p, sizeof p, "%s/nvidia_cudnn_cu13-9.19.0.56.dist-info", site);
    th_mkdirs(p);
    const char *roots[] = {site};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER), 0);
    const char *env[] = {driver_env, NULL};
    th_result *r = run_one(&cases[10], &o, env);
    assert_int_equal(r->user_int[0], CUDALOAD_OK);
    assert_int_equal(r->user_int[3], 13);
    th_result_free(r);
    /* the CUDA 12 package there instead: a CUDA 12 cuDNN, refused beside the CUDA 13 runtime */
    char p12[PATH_MAX];
    snprintf(p12, sizeof p12, "%s/nvidia_cudnn_cu12-9.19.0.56.dist-info", site);
    if (rename(p, p12) != 0) fail_msg("rename %s", p);
    r = run_one(&cases[10], &o, env);
    assert_int_equal(r->user_int[0], CUDALOAD_ERROR_MAJOR_MISMATCH);
    assert_int_equal(r->user_int[6], CUDALOAD_REASON_MAJOR_MIXED);
    assert_int_equal(r->user_int[4], 0);
    th_result_free(r);
    free(site);
}

/* NCCL's and nvSHMEM's wheels, like cuDNN's, put CUDA 12's and 13's build in one directory
 * (nvidia/nccl/lib, nvidia/nvshmem/lib), and both need the runtime's major: the package installed
 * in the root (nvidia-nccl-cu13, nvidia-nvshmem-cu12: its dist-info) tells the file's, and a CUDA
 * 12 one is refused beside the CUDA 13 runtime before it is opened. Located only (find-only): the
 * file is a stand-in (the toolkit's cudart), so this machine need have neither library. */
static void test_dist_info_gates_nccl_and_nvshmem(void **state) {
    (void)state;
    static const lib_case own[] = {{"nccl", "libnccl.so.2", "libnccl.so", "nvidia/nccl/lib", 0},
                                   {"nvshmem_host", "libnvshmem_host.so.3", "libnvshmem_host.so", "nvidia/nvshmem/lib", 0}};
    static const char *const pkg[] = {"nvidia_nccl", "nvidia_nvshmem"};
    const char *env[] = {driver_env, NULL};
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) {
        char *site = th_tmpdir(), dir[PATH_MAX], p[PATH_MAX], src[PATH_MAX], info[PATH_MAX];
        snprintf(dir, sizeof dir, "%s/" CU13, site);
        th_mkdirs(dir);
        snprintf(p, sizeof p, "%s/libcudart.so.13", dir);
        snprintf(src, sizeof src, "%s/libcudart.so.13", toolkit);
        th_symlink(src, p);
        snprintf(dir, sizeof dir, "%s/%s", site, own[i].dir);
        th_mkdirs(dir);
        snprintf(p, sizeof p, "%s/%s", dir, own[i].file);
        th_symlink(src, p);
        const char *roots[] = {site};
        cudaload_options o = th_opts(roots, 1, SRC(CALLER), CUDALOAD_FLAG_FIND_ONLY);
        for (int major = 13; major >= 12; major--) {
            print_message("%s, %s_cu%d installed\n", own[i].name, pkg[i], major);
            snprintf(info, sizeof info, "%s/%s_cu%d-1.0.dist-info", site, pkg[i], major);
            th_mkdirs(info);
            th_result *r = run_one(&own[i], &o, env);
            if (major == 13) {
                assert_int_equal(r->user_int[0], CUDALOAD_OK);
                assert_int_equal(r->user_int[3], 13);
                assert_int_equal(strncmp(r->user, site, strlen(site)), 0);
            } else {
                assert_int_equal(r->user_int[0], CUDALOAD_ERROR_MAJOR_MISMATCH);
                assert_int_equal(r->user_int[6], CUDALOAD_REASON_MAJOR_MIXED);
            }
            assert_int_equal(r->user_int[4], 0); /* nothing mapped */
            th_result_free(r);
            if (rmdir(info) != 0) fail_msg("rmdir %s", info);
        }
        free(site);
    }
}

/* ---- the driver's places after the dynamic loader (NixOS, WSL, containers) ---- */

typedef struct driver_tree {
    char *top;
    char nix[PATH_MAX], wsl[PATH_MAX], stubs[PATH_MAX], container[PATH_MAX], env[4 * PATH_MAX + 64];
} driver_tree;

/* top/nix: nothing; top/wsl: the toolkit's real link stub as libcuda.so.1 (answers
 * CUDA_ERROR_STUB_LIBRARY); top/tk/lib64/stubs: the same stub; top/container: the fake driver.
 * NULL (the test skipped, saying why) when ld.so finds a libcuda.so.1 of its own (a GPU
 * machine), or when the test needs the stub (need_stub) and the toolkit has none (one made of
 * pip's wheels); without it, and not needed, top/wsl and the stubs directory stay empty. */
static driver_tree *make_driver_tree(int need_stub) {
    char sys[PATH_MAX];
    if (th_loader_resolves("libcuda.so.1", sys, sizeof sys)) {
        print_message("skipped: this machine's dynamic loader finds %s before any place tried here\n", sys);
        return NULL;
    }
    char stub[PATH_MAX], fake[PATH_MAX];
    snprintf(stub, sizeof stub, "%s/stubs/libcuda.so", toolkit);
    int have_stub = access(stub, R_OK) == 0;
    if (need_stub && !have_stub) {
        print_message("skipped: no driver link stub %s: a CUDA toolkit made of pip's wheels has none\n", stub);
        return NULL;
    }
    snprintf(fake, sizeof fake, "%s/fake/libcuda.so.1", getenv("CUDALOAD_TEST_BUILD"));
    driver_tree *t = calloc(1, sizeof *t);
    t->top = th_tmpdir();
    snprintf(t->nix, sizeof t->nix, "%s/run/opengl-driver/lib", t->top);
    snprintf(t->wsl, sizeof t->wsl, "%s/usr/lib/wsl/lib", t->top);
    snprintf(t->stubs, sizeof t->stubs, "%s/tk/lib64/stubs", t->top);
    snprintf(t->container, sizeof t->container, "%s/usr/local/nvidia/lib64", t->top);
    const char *dirs[] = {t->nix, t->wsl, t->stubs, t->container};
    for (int i = 0; i < 4; i++) th_mkdirs(dirs[i]);
    char p[PATH_MAX + 16];
    if (have_stub) {
        snprintf(p, sizeof p, "%s/libcuda.so.1", t->wsl);
        th_copy(stub, p);
        snprintf(p, sizeof p, "%s/libcuda.so.1", t->stubs);
        th_copy(stub, p);
    }
    snprintf(p, sizeof p, "%s/libcuda.so.1", t->container);
    th_copy(fake, p);
    return t;
}

static void free_driver_tree(driver_tree *t) {
    free(t->top);
    free(t);
}

/* The dynamic loader has no libcuda.so.1: each place is tried in order, each attempt is a
 * candidate with its reason; the stub that answers CUDA_ERROR_STUB_LIBRARY is closed and the
 * search goes on; a stubs/ directory is never opened; the fake in the last place is taken,
 * and its version is what the driver reports. */
static void test_driver_found_after_the_loader_in_order(void **state) {
    (void)state;
    driver_tree *t = make_driver_tree(1);
    if (!t) skip();
    snprintf(t->env, sizeof t->env, "CUDALOAD_DRIVER_DIRS=%s:%s:%s:%s", t->nix, t->wsl, t->stubs, t->container);
    const char *env[] = {t->env, "FAKE_CUDA_VERSION=12080", NULL};
    th_result *r = th_result_new();
    th_run(r, env, th_init_child, NULL);
    const th_lib *d = &r->lib[CUDALOAD_LIB_DRIVER];
    assert_int_equal(d->status, CUDALOAD_OK);
    assert_int_equal(d->version, 12080);
    assert_int_equal(d->source, CUDALOAD_SOURCE_SYSTEM);
    assert_non_null(strstr(d->path, "/usr/local/nvidia/lib64/libcuda.so.1"));
    /* then, where the machine has one, its /usr/local/cuda/compat copy, never taken */
    assert_true(d->n_candidates >= 5);
    for (int i = 5; i < d->n_candidates && i < TH_MAX_CANDS; i++)
        assert_int_equal(d->cand[i].result, CUDALOAD_ERROR_NOT_ATTEMPTED);
    const int want_code[] = {CUDALOAD_REASON_DLOPEN_FAILED, CUDALOAD_REASON_NOT_PRESENT, CUDALOAD_REASON_STUB_LIBRARY,
                             CUDALOAD_REASON_STUB_DIR, CUDALOAD_REASON_TAKEN};
    const char *want_path[] = {"libcuda.so.1 (system search)", "/run/opengl-driver/lib/libcuda.so.1",
                               "/usr/lib/wsl/lib/libcuda.so.1", "/tk/lib64/stubs/libcuda.so.1",
                               "/usr/local/nvidia/lib64/libcuda.so.1"};
    for (int i = 0; i < 5; i++) {
        assert_int_equal(d->cand[i].code, want_code[i]);
        assert_non_null(strstr(d->cand[i].path, want_path[i]));
        assert_int_equal(d->cand[i].result, i == 4 ? CUDALOAD_OK : CUDALOAD_ERROR_NO_DRIVER);
    }
    assert_int_equal(d->cand[2].value, CUDA_ERROR_STUB_LIBRARY);
    assert_int_equal(r->maps_count[CUDALOAD_LIB_DRIVER], 1); /* the stub was closed again */
    th_result_free(r);
    free_driver_tree(t);
}

/* Nothing usable anywhere: NO_DRIVER, every place a candidate; a relative directory in
 * CUDALOAD_DRIVER_DIRS is an invalid option, never a search of the current directory. */
static void test_driver_nowhere_and_a_bad_list(void **state) {
    (void)state;
    driver_tree *t = make_driver_tree(1);
    if (!t) skip();
    snprintf(t->env, sizeof t->env, "CUDALOAD_DRIVER_DIRS=%s:%s", t->nix, t->wsl);
    const char *env[] = {t->env, NULL};
    th_result *r = th_result_new();
    th_run(r, env, th_init_child, NULL);
    assert_int_equal(r->init_status, CUDALOAD_ERROR_NO_DRIVER);
    const th_lib *d = &r->lib[CUDALOAD_LIB_DRIVER];
    assert_int_equal(d->n_candidates, 3);
    assert_int_equal(d->cand[1].code, CUDALOAD_REASON_NOT_PRESENT);
    assert_int_equal(d->cand[2].code, CUDALOAD_REASON_STUB_LIBRARY);
    assert_int_equal(r->maps_count[CUDALOAD_LIB_DRIVER], 0);
    th_result_free(r);
    const char *bad[] = {"CUDALOAD_DRIVER_DIRS=usr/lib/wsl/lib", NULL};
    r = th_result_new();
    th_run(r, bad, th_init_child, NULL);
    assert_int_equal(r->init_status, CUDALOAD_ERROR_INVALID_OPTION);
    assert_non_null(strstr(r->error, "CUDALOAD_DRIVER_DIRS"));
    th_result_free(r);
    free_driver_tree(t);
}

/* The tests that read the branch from the fake NVML need /proc/driver/nvidia/version absent
 * (its branch comes first): 1 when it is, else the test is to skip. */
static int no_proc_driver_version(void) {
    if (access("/proc/driver/nvidia/version", F_OK) != 0) return 1;
    print_message("skipped: this machine has /proc/driver/nvidia/version\n");
    return 0;
}

/* The fake, copied as libnvidia-ml.so.1 beside the tree's driver. */
static void add_nvml(const driver_tree *t) {
    char src[PATH_MAX], dst[PATH_MAX + 32];
    snprintf(src, sizeof src, "%s/fake/libcuda.so.1", getenv("CUDALOAD_TEST_BUILD"));
    snprintf(dst, sizeof dst, "%s/libnvidia-ml.so.1", t->container);
    th_copy(src, dst);
}

/* No /proc/driver/nvidia/version (a container, WSL): the branch comes from NVML beside the
 * driver taken (the fake, copied as libnvidia-ml.so.1 into the driver's directory), not from
 * the loader's search, which has no NVML here. Without that copy: no branch. */
static void test_branch_from_nvml_beside_the_driver(void **state) {
    (void)state;
    driver_tree *t = no_proc_driver_version() ? make_driver_tree(0) : NULL;
    if (!t) skip();
    snprintf(t->env, sizeof t->env, "CUDALOAD_DRIVER_DIRS=%s", t->container);
    const char *env[] = {t->env, "FAKE_NVML_DRIVER_VERSION=580.82.07", NULL};
    th_result *r = th_result_new();
    th_run(r, env, th_init_child, NULL);
    assert_int_equal(r->lib[CUDALOAD_LIB_DRIVER].status, CUDALOAD_OK);
    assert_string_equal(r->lib[CUDALOAD_LIB_DRIVER].branch, "");
    th_result_free(r);
    add_nvml(t);
    r = th_result_new();
    th_run(r, env, th_init_child, NULL);
    assert_int_equal(r->lib[CUDALOAD_LIB_DRIVER].status, CUDALOAD_OK);
    assert_string_equal(r->lib[CUDALOAD_LIB_DRIVER].branch, "580.82.07");
    th_result_free(r);
    free_driver_tree(t);
}

/* cuda-compat: a forward-compatibility libcuda under $CUDA_HOME/compat that does not help is
 * seen, not taken, and recorded with why: not newer than the kernel module (803), not needed (the
 * driver runs the runtime's CUDA), or newer but running no newer CUDA than the driver itself
 * (every copy here is the same fake, answering FAKE_CUDA_VERSION). The kernel module's branch
 * comes from the fake NVML beside the fake driver (no /proc here). */
static void test_compat_seen_not_taken(void **state) {
    (void)state;
    driver_tree *t = no_proc_driver_version() ? make_driver_tree(0) : NULL;
    if (!t) skip();
    add_nvml(t);
    char src[PATH_MAX], home[PATH_MAX], env_home[PATH_MAX + 16], compat[PATH_MAX + 16];
    snprintf(src, sizeof src, "%s/fake/libcuda.so.1", getenv("CUDALOAD_TEST_BUILD"));
    snprintf(home, sizeof home, "%s/cuda", t->top);
    snprintf(compat, sizeof compat, "%s/compat", home);
    th_mkdirs(compat);
    snprintf(env_home, sizeof env_home, "CUDA_HOME=%s", home);
    snprintf(t->env, sizeof t->env, "CUDALOAD_DRIVER_DIRS=%s", t->container);
    /* "cuda_home,system": the toolkit's runtime, from the system search; where the dynamic
     * loader finds none (a toolkit made of pip's wheels is in no loader path), the same file in
     * that CUDA_HOME's lib64 */
    char found[PATH_MAX];
    if (!th_loader_resolves("libcudart.so.13", found, sizeof found)) {
        char lib64[PATH_MAX + 16], rt_src[PATH_MAX], rt_dst[PATH_MAX + 32];
        snprintf(lib64, sizeof lib64, "%s/lib64", home);
        th_mkdirs(lib64);
        snprintf(rt_src, sizeof rt_src, "%s/libcudart.so.13", toolkit);
        snprintf(rt_dst, sizeof rt_dst, "%s/libcudart.so.13", lib64);
        th_symlink(rt_src, rt_dst);
        print_message("note: the dynamic loader finds no libcudart.so.13 here: the toolkit's runtime is linked "
                      "into %s\n", lib64);
    }
    const char *roots[] = {th_fixture_env("VENV_CU13_SITE")};
    struct {
        const char *version;   /* the compat copy's */
        const char *sources;   /* where cudart comes from */
        int code;
    } compat_cases[] = {
        {"575.51.03", "cuda_home,system", CUDALOAD_REASON_COMPAT_NOT_NEWER},   /* older branch than 580.82.07 */
        {"580.95.05", "cuda_home,system", CUDALOAD_REASON_COMPAT_NOT_NEWER},   /* same branch (the H100's) */
        {"590.10.01", "cuda_home,system", CUDALOAD_REASON_COMPAT_NOT_NEEDED},  /* the toolkit's 13.0 runtime */
        {"590.10.01", "caller", CUDALOAD_REASON_COMPAT_TOO_OLD},               /* the wheel's 13.5: it runs 13.0 */
    };
    for (size_t i = 0; i < sizeof compat_cases / sizeof compat_cases[0]; i++) {
        char file[PATH_MAX + 64], link[PATH_MAX + 32], srcs[64];
        snprintf(link, sizeof link, "%s/libcuda.so.1", compat);
        unlink(link);
        snprintf(file, sizeof file, "%s/libcuda.so.%s", compat, compat_cases[i].version);
        th_copy(src, file);
        th_symlink(file, link);
        snprintf(srcs, sizeof srcs, "CUDALOAD_SOURCES=%s", compat_cases[i].sources);
        const char *env[] = {t->env, env_home, srcs, "FAKE_NVML_DRIVER_VERSION=580.82.07", "FAKE_CUDA_VERSION=13000", NULL};
        cudaload_options o = th_opts(roots, 1, 0, 0);
        th_result *r = th_result_new();
        th_run(r, env, th_init_child, strcmp(compat_cases[i].sources, "caller") == 0 ? &o : NULL);
        const th_lib *d = &r->lib[CUDALOAD_LIB_DRIVER];
        assert_int_equal(d->status, CUDALOAD_OK);
        assert_non_null(strstr(d->path, t->container)); /* the system's driver runs, never the compat copy */
        assert_true(find_code(r, CUDALOAD_LIB_DRIVER, file, CUDALOAD_ERROR_NOT_ATTEMPTED, compat_cases[i].code));
        assert_int_equal(r->maps_count[CUDALOAD_LIB_DRIVER], 1); /* the copy tried was closed again */
        if (compat_cases[i].code == CUDALOAD_REASON_COMPAT_TOO_OLD) {
            const th_cand *c = &d->cand[d->n_candidates - 1];
            assert_int_equal(c->value, 13000); /* what the copy runs */
            assert_true(c->needed > 13000);    /* the wheel's runtime */
        }
        th_result_free(r);
        unlink(file);
    }
    free_driver_tree(t);
}

/* cuda-compat used when it helps: the system's driver runs CUDA 12.8 (the CUDA 13 runtime is
 * skipped) or 13.0 (the 13.5 runtime taken under minor version compatibility), and a copy under
 * $CUDA_HOME/compat of a newer branch than the kernel module (575, from the fake NVML) runs 13.9
 * (FAKE_CUDA_COMPAT_VERSION: the fake answers so from a compat directory). The copy is taken, the
 * system's driver is closed and leaves the process (one libcuda mapped), its candidate says why,
 * and a runtime skipped before is found again. CUDALOAD_COMPAT=never keeps the system's driver. */
static void test_compat_taken_when_it_helps(void **state) {
    (void)state;
    driver_tree *t = no_proc_driver_version() ? make_driver_tree(0) : NULL;
    if (!t) skip();
    add_nvml(t);
    char src[PATH_MAX], home[PATH_MAX], env_home[PATH_MAX + 16], compat[PATH_MAX + 16], file[PATH_MAX + 64],
        link[PATH_MAX + 32];
    snprintf(src, sizeof src, "%s/fake/libcuda.so.1", getenv("CUDALOAD_TEST_BUILD"));
    snprintf(home, sizeof home, "%s/cuda", t->top);
    snprintf(compat, sizeof compat, "%s/compat", home);
    th_mkdirs(compat);
    snprintf(file, sizeof file, "%s/libcuda.so.590.10.01", compat);
    snprintf(link, sizeof link, "%s/libcuda.so.1", compat);
    th_copy(src, file);
    th_symlink(file, link);
    snprintf(env_home, sizeof env_home, "CUDA_HOME=%s", home);
    snprintf(t->env, sizeof t->env, "CUDALOAD_DRIVER_DIRS=%s", t->container);
    const char *roots[] = {th_fixture_env("VENV_CU13_SITE")};
    struct {
        const char *system_version; /* what the system's driver runs */
        const char *mode;           /* CUDALOAD_COMPAT */
        int taken;
    } runs[] = {
        {"FAKE_CUDA_VERSION=12080", "CUDALOAD_COMPAT=auto", 1}, /* the runtime's major: skipped, then found */
        {"FAKE_CUDA_VERSION=13000", "CUDALOAD_COMPAT=auto", 1}, /* the runtime's minor (13.5 on 13.0) */
        {"FAKE_CUDA_VERSION=12080", "CUDALOAD_COMPAT=never", 0},
    };
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        const char *env[] = {t->env, env_home, runs[i].system_version, runs[i].mode, "FAKE_CUDA_COMPAT_VERSION=13090",
                             "FAKE_NVML_DRIVER_VERSION=575.51.03", NULL};
        cudaload_options o = th_opts(roots, 1, 0, 0);
        th_result *r = th_result_new();
        th_run(r, env, th_init_child, &o);
        const th_lib *d = &r->lib[CUDALOAD_LIB_DRIVER], *rt = &r->lib[CUDALOAD_LIB_CUDART];
        int system = atoi(strchr(runs[i].system_version, '=') + 1);
        assert_int_equal(d->status, CUDALOAD_OK);
        assert_int_equal(r->maps_count[CUDALOAD_LIB_DRIVER], 1); /* one libcuda in the process */
        if (runs[i].taken) {
            assert_int_equal(r->init_status, CUDALOAD_OK);
            assert_non_null(strstr(d->path, file));
            assert_int_equal(d->version, 13090);
            assert_string_equal(d->branch, "575.51.03"); /* the kernel module's, kept */
            assert_true(find_code(r, CUDALOAD_LIB_DRIVER, file, CUDALOAD_OK, CUDALOAD_REASON_COMPAT_TAKEN));
            assert_true(find_code(r, CUDALOAD_LIB_DRIVER, t->container, CUDALOAD_ERROR_DRIVER_TOO_OLD,
                                  CUDALOAD_REASON_COMPAT_REPLACED));
            for (int c = 0; c < d->n_candidates && c < TH_MAX_CANDS; c++)
                if (d->cand[c].code == CUDALOAD_REASON_COMPAT_TAKEN) {
                    assert_int_equal(d->cand[c].value, system);
                    assert_true(d->cand[c].needed > system);
                }
            assert_int_equal(rt->status, CUDALOAD_OK);
            assert_non_null(strstr(rt->path, "nvidia/cu13/lib/libcudart.so.13"));
            /* the runtime's search was done again, not appended to: no stale DRIVER_TOO_OLD */
            for (int c = 0; c < rt->n_candidates && c < TH_MAX_CANDS; c++)
                assert_int_not_equal(rt->cand[c].code, CUDALOAD_REASON_DRIVER_TOO_OLD);
        } else {
            assert_non_null(strstr(d->path, t->container));
            assert_int_equal(d->version, system);
            assert_true(find_code(r, CUDALOAD_LIB_DRIVER, file, CUDALOAD_ERROR_NOT_ATTEMPTED, CUDALOAD_REASON_COMPAT_AVAILABLE));
            assert_int_equal(r->init_status, CUDALOAD_ERROR_DRIVER_TOO_OLD);
        }
        th_result_free(r);
    }
    free_driver_tree(t);
}

/* ---- version floors (CUDALOAD_MIN_<NAME>, options.min_versions) ---- */

/* The toolkit's runtime (13.0) comes first, the CUDA 13 wheel's (13.5 in the fixtures) second:
 * a floor of 13.1 skips the first with BELOW_FLOOR and the numbers, and takes the second; from
 * the options too; the variable beats the option; a floor above both leaves BELOW_FLOOR. */
static void test_floors(void **state) {
    (void)state;
    const char *roots[] = {toolkit, th_fixture_env("VENV_CU13_SITE")};
    cudaload_options o = th_opts(roots, 2, SRC(CALLER), 0);
    const char *env[] = {driver_env, "FAKE_CUDA_VERSION=13090", "CUDALOAD_MIN_CUDART=13.1", NULL};
    th_result *r = th_result_new();
    th_run(r, env, th_init_child, &o);
    const th_lib *rt = &r->lib[CUDALOAD_LIB_CUDART];
    if (rt->status == CUDALOAD_OK && rt->version <= 13010) {
        print_message("skipped: the fixture's CUDA 13 runtime is %d, not above 13.1\n", rt->version);
        th_result_free(r);
        skip();
    }
    assert_int_equal(r->init_status, CUDALOAD_OK);
    assert_int_equal(rt->status, CUDALOAD_OK);
    assert_true(rt->version > 13010);
    assert_non_null(strstr(rt->path, "nvidia/cu13/lib/libcudart.so.13"));
    assert_true(find_code(r, CUDALOAD_LIB_CUDART, toolkit, CUDALOAD_ERROR_BELOW_FLOOR, CUDALOAD_REASON_BELOW_FLOOR));
    const th_cand *c = &rt->cand[0];
    assert_int_equal(c->value, 130000); /* 13.0 and 13.1, as major*10000 + minor*100 + patch */
    assert_int_equal(c->needed, 130100);
    assert_string_equal(c->text, "CUDALOAD_MIN_CUDART");
    assert_int_equal(r->maps_count[CUDALOAD_LIB_CUDART], 1); /* the one below the floor was closed */
    th_result_free(r);

    /* the same from the options; the variable wins over them */
    const char *floors[] = {"cudart=13.1"};
    o.min_versions = floors, o.n_min_versions = 1;
    const char *env2[] = {driver_env, "FAKE_CUDA_VERSION=13090", NULL};
    r = th_result_new();
    th_run(r, env2, th_init_child, &o);
    assert_int_equal(r->lib[CUDALOAD_LIB_CUDART].status, CUDALOAD_OK);
    assert_true(find_code(r, CUDALOAD_LIB_CUDART, toolkit, CUDALOAD_ERROR_BELOW_FLOOR, CUDALOAD_REASON_BELOW_FLOOR));
    assert_string_equal(r->lib[CUDALOAD_LIB_CUDART].cand[0].text, "options.min_versions");
    th_result_free(r);
    const char *env3[] = {driver_env, "FAKE_CUDA_VERSION=13090", "CUDALOAD_MIN_CUDART=13.0", NULL};
    r = th_result_new();
    th_run(r, env3, th_init_child, &o);
    assert_int_equal(r->lib[CUDALOAD_LIB_CUDART].status, CUDALOAD_OK);
    assert_non_null(strstr(r->lib[CUDALOAD_LIB_CUDART].path, toolkit));
    th_result_free(r);

    /* above every copy: BELOW_FLOOR, each candidate saying so */
    const char *env4[] = {driver_env, "FAKE_CUDA_VERSION=13090", "CUDALOAD_MIN_CUDART=13.9", NULL};
    o.n_min_versions = 0;
    r = th_result_new();
    th_run(r, env4, th_init_child, &o);
    assert_int_equal(r->init_status, CUDALOAD_ERROR_BELOW_FLOOR);
    assert_int_equal(r->lib[CUDALOAD_LIB_CUDART].status, CUDALOAD_ERROR_BELOW_FLOOR);
    assert_int_equal(r->lib[CUDALOAD_LIB_CUDART].n_candidates, 2);
    assert_int_equal(r->maps_count[CUDALOAD_LIB_CUDART], 0);
    th_result_free(r);
}

/* The driver's floor is its CUDA version; values that are no version of the row, and a row
 * libcudaload reads no version of, are invalid options. */
static void test_floor_driver_and_bad_values(void **state) {
    (void)state;
    const char *env[] = {driver_env, "FAKE_CUDA_VERSION=12080", "CUDALOAD_MIN_CUDA=13.0", NULL};
    th_result *r = th_result_new();
    th_run(r, env, th_init_child, NULL);
    assert_int_equal(r->lib[CUDALOAD_LIB_DRIVER].status, CUDALOAD_ERROR_OVERRIDE_UNUSABLE); /* the exact file */
    assert_true(find_code(r, CUDALOAD_LIB_DRIVER, "libcuda.so.1", CUDALOAD_ERROR_OVERRIDE_UNUSABLE,
                          CUDALOAD_REASON_BELOW_FLOOR));
    assert_int_equal(r->lib[CUDALOAD_LIB_DRIVER].cand[0].value, 120800);
    th_result_free(r);
    const char *bad[][2] = {{"CUDALOAD_MIN_CUDART=13.1.2", NULL}, {"CUDALOAD_MIN_CUDART=thirteen", NULL},
                            {"CUDALOAD_MIN_NVML=12.0", NULL}, {"CUDALOAD_MIN_CUBLAS=13.1.0.4", NULL}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        r = th_result_new();
        th_run(r, bad[i], th_init_child, NULL);
        assert_int_equal(r->init_status, CUDALOAD_ERROR_INVALID_OPTION);
        assert_non_null(strstr(r->error, "CUDALOAD_MIN_"));
        th_result_free(r);
    }
    cudaload_options o = th_opts(NULL, 0, 0, 0);
    const char *unknown[] = {"cudartx=13.1"};
    o.min_versions = unknown, o.n_min_versions = 1;
    r = th_result_new();
    th_run(r, NULL, th_init_child, &o);
    assert_int_equal(r->init_status, CUDALOAD_ERROR_INVALID_OPTION);
    th_result_free(r);
}

/* ---- foreign code calling back: no lock held across it, a re-entrant load refused ---- */

/* What the foreign code (a constructor, the fake driver's cuDriverGetVersion) does when it calls
 * th_foreign_hook: set by each child. The hook is exported (test_walk is linked -rdynamic). */
static void (*foreign_hook)(const char *where);
void th_foreign_hook(const char *where);
void th_foreign_hook(const char *where) {
    if (foreign_hook) foreign_hook(where);
}

static th_result *hook_result; /* the child's result, for the hook to write into */
#define NVRTC ((cudaload_lib)cl_catalogue_find("nvrtc"))
static atomic_int hook_calls;

/* From foreign code of the walking thread: every call that would start a walk is refused with
 * REENTRANT (init under way, or a library whose step has not ended); one whose answer is known
 * is answered. user_int[0..7]: the statuses; [8]: the hook's calls. */
static void reenter_calls(const char *where) {
    th_result *r = hook_result;
    if (atomic_fetch_add(&hook_calls, 1) > 0) return; /* the first call is recorded */
    snprintf(r->user, sizeof r->user, "%s", where);
    r->user_int[0] = cudaload_init(NULL);
    r->user_int[1] = cudaload_load_library(CUDALOAD_LIB_CUBLAS);
    r->user_int[2] = cudaload_find_library(CUDALOAD_LIB_CUBLAS);
    /* an accessor that loads: no table, and the status of the load it asked for */
    r->user_int[3] = cudaload_cublas() ? CUDALOAD_OK : cudaload_load_library(CUDALOAD_LIB_CUBLAS);
    r->user_int[4] = cudaload_load_library(CUDALOAD_LIB_CUDART);
    r->user_int[5] = cudaload_is_initialized();
    cudaload_library_info info = {.size = sizeof info};
    r->user_int[6] = cudaload_get_library_info(CUDALOAD_LIB_CUDART, &info) == CUDALOAD_OK ? (int)info.status : -1;
    r->user_int[7] = (int)strlen(cudaload_last_error());
}

static void child_reenter_init(th_result *r, void *arg) {
    hook_result = r;
    foreign_hook = reenter_calls;
    cudaload_status st = cudaload_init(arg);
    foreign_hook = NULL;
    r->user_int[8] = atomic_load(&hook_calls);
    r->user_int[9] = cudaload_load_cublas(); /* the refused calls left nothing behind */
    r->user_int[10] = cudaload_cublas() != NULL;
    th_capture(r, st);
}

/* The driver's cuDriverGetVersion (a version call, run by init's walk) and a runtime's
 * constructor (dlopen, run by init's walk) call back into libcudaload on the same thread: before
 * the walk let its lock go around foreign code, this waited on itself forever. Now each call
 * that would walk returns REENTRANT at once; init goes on and succeeds. */
static void test_reentrant_call_from_foreign_code_of_init(void **state) {
    (void)state;
    const char *roots[] = {th_fixture("toolkit-cu13-wheel")};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER), 0);
    char reenter[PATH_MAX + 32];
    snprintf(reenter, sizeof reenter, "%s/tests/libreenter.so", getenv("CUDALOAD_TEST_BUILD"));
    char exact[PATH_MAX + 64];
    const char *version_call[] = {driver_env, "FAKE_CUDA_HOOK=1", NULL};
    th_result *r = th_result_new();
    th_run(r, version_call, child_reenter_init, &o);
    assert_int_equal(r->init_status, CUDALOAD_OK);
    assert_true(r->user_int[8] >= 1);
    assert_string_equal(r->user, "cuDriverGetVersion");
    assert_int_equal(r->user_int[0], CUDALOAD_ERROR_REENTRANT); /* init, from its own walk */
    assert_int_equal(r->user_int[1], CUDALOAD_ERROR_REENTRANT); /* a load while init walks */
    assert_int_equal(r->user_int[2], CUDALOAD_ERROR_REENTRANT);
    assert_int_equal(r->user_int[3], CUDALOAD_ERROR_REENTRANT);
    assert_int_equal(r->user_int[4], CUDALOAD_ERROR_REENTRANT);
    assert_int_equal(r->user_int[5], 0);
    assert_int_equal(r->user_int[6], CUDALOAD_ERROR_NOT_ATTEMPTED); /* init's answer not out yet */
    assert_true(r->user_int[7] > 0);
    assert_int_equal(r->user_int[9], CUDALOAD_OK);
    assert_int_equal(r->user_int[10], 1);

    /* the runtime's constructor, during init: refused the same way; the file is no runtime */
    snprintf(exact, sizeof exact, "CUDALOAD_CUDART_PATH=%s", reenter);
    const char *constructor[] = {driver_env, exact, NULL};
    th_run(r, constructor, child_reenter_init, &o);
    assert_int_equal(r->init_status, CUDALOAD_ERROR_OVERRIDE_UNUSABLE);
    assert_int_equal(r->user_int[8], 1);
    assert_string_equal(r->user, "constructor");
    for (int i = 0; i < 5; i++) assert_int_equal(r->user_int[i], CUDALOAD_ERROR_REENTRANT);
    assert_int_equal(r->user_int[9], CUDALOAD_ERROR_OVERRIDE_UNUSABLE); /* cuBLAS: cudart's failure */
    th_result_free(r);
}

/* A load after init whose candidate's constructor calls back: the calls that would walk are
 * refused (REENTRANT), those whose answer is known (init done, cudart loaded) are answered; the
 * constructor's library then fails its checks (it has no nvrtc symbols) and a later load of
 * cuBLAS works. */
static void child_reenter_load(th_result *r, void *arg) {
    cudaload_status st = cudaload_init(arg);
    hook_result = r;
    foreign_hook = reenter_calls;
    r->user_int[11] = cudaload_load_library(NVRTC);
    foreign_hook = NULL;
    r->user_int[8] = atomic_load(&hook_calls);
    r->user_int[9] = cudaload_load_cublas();
    r->user_int[10] = cudaload_cublas() != NULL;
    th_capture(r, st);
}

static void test_reentrant_call_from_a_constructor(void **state) {
    (void)state;
    const char *roots[] = {th_fixture("toolkit-cu13-wheel")};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER), 0);
    char exact[PATH_MAX + 64];
    snprintf(exact, sizeof exact, "CUDALOAD_NVRTC_PATH=%s/tests/libreenter.so", getenv("CUDALOAD_TEST_BUILD"));
    const char *env[] = {driver_env, exact, NULL};
    th_result *r = th_result_new();
    th_run(r, env, child_reenter_load, &o);
    assert_int_equal(r->init_status, CUDALOAD_OK);
    assert_int_equal(r->user_int[8], 1);
    assert_string_equal(r->user, "constructor");
    assert_int_equal(r->user_int[0], CUDALOAD_OK);               /* init: done, answered */
    assert_int_equal(r->user_int[1], CUDALOAD_ERROR_REENTRANT);  /* cuBLAS: not loaded yet */
    assert_int_equal(r->user_int[2], CUDALOAD_ERROR_REENTRANT);
    assert_int_equal(r->user_int[3], CUDALOAD_ERROR_REENTRANT);
    assert_int_equal(r->user_int[4], CUDALOAD_OK);               /* cudart: loaded by init */
    assert_int_equal(r->user_int[5], 1);
    assert_int_equal(r->user_int[6], CUDALOAD_OK);
    assert_int_equal(r->user_int[11], CUDALOAD_ERROR_OVERRIDE_UNUSABLE);
    assert_int_equal(r->user_int[9], CUDALOAD_OK);
    assert_int_equal(r->user_int[10], 1);
    th_result_free(r);
}

/* Another thread reads while a load runs foreign code: the constructor waits (up to 10 s) until
 * the main thread has called the getters and loads whose answers are known. Before the lock was
 * let go around dlopen, every one of them waited for the constructor: the wait timed out. */
static atomic_int in_constructor, reader_done;

static void wait_for_reader(const char *where) {
    (void)where;
    atomic_store(&in_constructor, 1);
    for (int i = 0; i < 1000 && !atomic_load(&reader_done); i++) {
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
    hook_result->user_int[12] = atomic_load(&reader_done) ? 1 : 0;
}

static void *load_nvrtc(void *arg) {
    (void)arg;
    return (void *)(intptr_t)cudaload_load_library(NVRTC);
}

static void child_reader_during_constructor(th_result *r, void *arg) {
    cudaload_status st = cudaload_init(arg);
    hook_result = r;
    foreign_hook = wait_for_reader;
    pthread_t t;
    pthread_create(&t, NULL, load_nvrtc, NULL);
    while (!atomic_load(&in_constructor)) {
        struct timespec ts = {0, 1000000L};
        nanosleep(&ts, NULL);
    }
    /* the other thread is inside the constructor, in the middle of nvrtc's walk */
    r->user_int[0] = cudaload_is_initialized();
    cudaload_library_info info = {.size = sizeof info};
    r->user_int[1] = cudaload_get_library_info(CUDALOAD_LIB_CUDART, &info) == CUDALOAD_OK ? (int)info.status : -1;
    int v = 0;
    r->user_int[2] = cudaload_driver_version(&v);
    r->user_int[3] = cudaload_cudart() != NULL;
    r->user_int[4] = cudaload_load_library(CUDALOAD_LIB_CUDART); /* known: answered, no wait */
    r->user_int[5] = cudaload_handle(CUDALOAD_LIB_CUDART) != NULL;
    cudaload_library_info nv = {.size = sizeof nv};
    r->user_int[6] = cudaload_get_library_info(NVRTC, &nv) == CUDALOAD_OK ? (int)nv.status : -1;
    r->user_int[7] = (int)nv.n_candidates;
    (void)cudaload_last_error();
    atomic_store(&reader_done, 1);
    void *ret = NULL;
    pthread_join(t, &ret);
    foreign_hook = NULL;
    r->user_int[8] = (int)(intptr_t)ret;
    th_capture(r, st);
}

static void test_getters_while_foreign_code_runs(void **state) {
    (void)state;
    const char *roots[] = {th_fixture("toolkit-cu13-wheel")};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER), 0);
    char exact[PATH_MAX + 64];
    snprintf(exact, sizeof exact, "CUDALOAD_NVRTC_PATH=%s/tests/libreenter.so", getenv("CUDALOAD_TEST_BUILD"));
    const char *env[] = {driver_env, exact, NULL};
    th_result *r = th_result_new();
    th_run(r, env, child_reader_during_constructor, &o);
    assert_int_equal(r->init_status, CUDALOAD_OK);
    if (r->user_int[12] != 1) fail_msg("the reads waited for the constructor: the loader's lock was held across dlopen");
    assert_int_equal(r->user_int[0], 1);
    assert_int_equal(r->user_int[1], CUDALOAD_OK);
    assert_int_equal(r->user_int[2], CUDALOAD_OK);
    assert_int_equal(r->user_int[3], 1);
    assert_int_equal(r->user_int[4], CUDALOAD_OK);
    assert_int_equal(r->user_int[5], 1);
    /* nvrtc's step had not ended: read as not attempted, no candidates handed out */
    assert_int_equal(r->user_int[6], CUDALOAD_ERROR_NOT_ATTEMPTED);
    assert_int_equal(r->user_int[7], 0);
    assert_int_equal(r->user_int[8], CUDALOAD_ERROR_OVERRIDE_UNUSABLE);
    th_result_free(r);
}

/* ---- the driver's table: published once, after the cuda-compat decision ---- */

/* A reader reads the driver's table the way a lock-free caller does, from the moment it is
 * published (cl_ctx.table_ready), while init runs and switches to a compat copy: the table it
 * sees must be the final one. Each cuDriverGetVersion init makes (FAKE_CUDA_HOOK) waits for the
 * reader to have read once more. user_int[0]: reads that saw NULL entries or entries that then
 * changed; [1]: reads during init; [2]: the table after init is the one first seen. */
static atomic_int init_returned, read_request;
static void wait_for_a_read(const char *where) {
    (void)where;
    atomic_store(&read_request, 1);
    for (int i = 0; i < 1000 && atomic_load(&read_request); i++) {
        struct timespec ts = {0, 1000000L};
        nanosleep(&ts, NULL);
    }
}
static void *read_driver_table(void *arg) {
    th_result *r = arg;
    const void *first_fn = NULL;
    while (!atomic_load(&init_returned)) {
        int asked = atomic_load(&read_request);
        const cudaload_driver_table *d = NULL;
        if (atomic_load_explicit(&cl_ctx.table_ready[CUDALOAD_LIB_DRIVER], memory_order_acquire)) d = cudaload_driver();
        if (d) {
            const void *fn = NULL;
            memcpy(&fn, &d->cuDriverGetVersion, sizeof fn);
            if (!fn || !d->cuInit || (first_fn && fn != first_fn)) r->user_int[0]++;
            if (!first_fn) first_fn = fn;
            r->user_int[1]++;
        }
        if (asked) atomic_store(&read_request, 0);
    }
    const cudaload_driver_table *d = cudaload_driver();
    const void *fn = NULL;
    if (d) memcpy(&fn, &d->cuDriverGetVersion, sizeof fn);
    r->user_int[2] = d && fn && (!first_fn || fn == first_fn);
    return NULL;
}

static void child_compat_reader(th_result *r, void *arg) {
    foreign_hook = wait_for_a_read;
    pthread_t t;
    pthread_create(&t, NULL, read_driver_table, r);
    cudaload_status st = cudaload_init(arg);
    foreign_hook = NULL;
    atomic_store(&init_returned, 1);
    pthread_join(t, NULL);
    /* the status and the table agree */
    cudaload_library_info info = {.size = sizeof info};
    cudaload_get_library_info(CUDALOAD_LIB_DRIVER, &info);
    r->user_int[3] = (info.status == CUDALOAD_OK) == (cudaload_driver() != NULL);
    int v = 0;
    const cudaload_driver_table *d = cudaload_driver();
    r->user_int[4] = d && d->cuDriverGetVersion(&v) == CUDA_SUCCESS ? v : -1;
    th_capture(r, st);
}

/* The system's driver runs CUDA 12.8, the runtime is 13's, a compat copy runs 13.9: init takes
 * the copy. Before, the walk published the system's table, then zeroed it, closed the system's
 * driver and filled it again from the copy, while the reader read it without a lock (NULL
 * entries, then other pointers). Now the table is published once, after the decision. Then a
 * compat copy that fails its checks (a required symbol missing): the system's driver is kept,
 * never closed, its table the one published, and the copy's candidate says why. */
static void test_compat_table_published_once(void **state) {
    (void)state;
    driver_tree *t = no_proc_driver_version() ? make_driver_tree(0) : NULL;
    if (!t) skip();
    add_nvml(t);
    char home[PATH_MAX], env_home[PATH_MAX + 16], compat[PATH_MAX + 16], file[PATH_MAX + 64], link[PATH_MAX + 32];
    snprintf(home, sizeof home, "%s/cuda", t->top);
    snprintf(compat, sizeof compat, "%s/compat", home);
    th_mkdirs(compat);
    snprintf(file, sizeof file, "%s/libcuda.so.590.10.01", compat);
    snprintf(link, sizeof link, "%s/libcuda.so.1", compat);
    snprintf(env_home, sizeof env_home, "CUDA_HOME=%s", home);
    snprintf(t->env, sizeof t->env, "CUDALOAD_DRIVER_DIRS=%s", t->container);
    const char *roots[] = {th_fixture_env("VENV_CU13_SITE")};
    static const char *const copies[] = {"fake/libcuda.so.1", "fake/missing-symbol/libcuda.so.1"};
    for (size_t i = 0; i < 2; i++) {
        char src[PATH_MAX];
        snprintf(src, sizeof src, "%s/%s", getenv("CUDALOAD_TEST_BUILD"), copies[i]);
        unlink(link);
        unlink(file);
        th_copy(src, file);
        th_symlink(file, link);
        const char *env[] = {t->env, env_home, "FAKE_CUDA_VERSION=12080", "FAKE_CUDA_COMPAT_VERSION=13090",
                             "FAKE_NVML_DRIVER_VERSION=575.51.03", "FAKE_CUDA_HOOK=1", NULL};
        cudaload_options o = th_opts(roots, 1, 0, 0);
        th_result *r = th_result_new();
        th_run(r, env, child_compat_reader, &o);
        const th_lib *d = &r->lib[CUDALOAD_LIB_DRIVER];
        print_message("%s: %d reads of a published table during init\n", copies[i], r->user_int[1]);
        if (r->user_int[0]) fail_msg("%d reads saw the published driver table change or hold NULL entries", r->user_int[0]);
        assert_int_equal(r->user_int[2], 1);
        assert_int_equal(r->user_int[3], 1);
        assert_int_equal(d->status, CUDALOAD_OK);
        assert_int_equal(r->maps_count[CUDALOAD_LIB_DRIVER], 1);
        if (i == 0) {
            assert_int_equal(r->init_status, CUDALOAD_OK);
            assert_non_null(strstr(d->path, file));
            assert_int_equal(r->user_int[4], 13090);
            assert_true(find_code(r, CUDALOAD_LIB_DRIVER, file, CUDALOAD_OK, CUDALOAD_REASON_COMPAT_TAKEN));
        } else {
            assert_int_equal(r->init_status, CUDALOAD_ERROR_DRIVER_TOO_OLD); /* the runtime: 13 on a 12.8 driver */
            assert_non_null(strstr(d->path, t->container));
            assert_int_equal(d->version, 12080);
            assert_int_equal(r->user_int[4], 12080);
            assert_true(find_code(r, CUDALOAD_LIB_DRIVER, file, CUDALOAD_ERROR_SYMBOL_MISSING, CUDALOAD_REASON_SYMBOL_MISSING));
        }
        th_result_free(r);
    }
    free_driver_tree(t);
}

/* ---- find-only and load, in every order ---- */

/* The steps: find cuSOLVER (its dependencies located, nothing loaded), load cuBLAS, cuBLAS's
 * accessor (which loads it), load cuSOLVER. Every order gives OK, the table, and in the end every
 * library of the chain loaded once with its table. user_int[k]: step k's outcome (OK, or a
 * status; the accessor: OK when it gave a table). */
enum { STEP_FIND_CUSOLVER, STEP_LOAD_CUBLAS, STEP_CUBLAS_TABLE, STEP_LOAD_CUSOLVER, STEPS };
static const char *const step_name[STEPS] = {"find cusolver", "load cublas", "cudaload_cublas()", "load cusolver"};

typedef struct order_job {
    cudaload_options *opts;
    int step[STEPS];
} order_job;

static void child_order(th_result *r, void *arg) {
    const order_job *j = arg;
    cudaload_status st = cudaload_init(j->opts);
    cudaload_lib cusolver = (cudaload_lib)cl_catalogue_find("cusolver");
    for (int k = 0; k < STEPS; k++) {
        int s = -1;
        switch (j->step[k]) {
        case STEP_FIND_CUSOLVER: s = cudaload_find_library(cusolver); break;
        case STEP_LOAD_CUBLAS: s = cudaload_load_cublas(); break;
        case STEP_CUBLAS_TABLE: s = cudaload_cublas() ? CUDALOAD_OK : cudaload_load_cublas() == CUDALOAD_OK ? -1 : -2; break;
        case STEP_LOAD_CUSOLVER: s = cudaload_load_library(cusolver); break;
        }
        r->user_int[k] = s;
    }
    r->user_int[4] = cudaload_cublas() != NULL;
    r->user_int[5] = cudaload_cublaslt() != NULL;
    r->user_int[6] = cudaload_cusolver() != NULL;
    r->user_int[7] = cudaload_cusparse() != NULL;
    const char *const names[] = {"cublas", "cublasLt", "cusparse", "nvJitLink", "cusolver"};
    for (int i = 0; i < 5; i++) {
        cudaload_library_info info = {.size = sizeof info};
        cudaload_lib lib = (cudaload_lib)cl_catalogue_find(names[i]);
        r->user_int[8 + i] = cudaload_get_library_info(lib, &info) == CUDALOAD_OK && info.status == CUDALOAD_OK && info.loaded;
    }
    r->user_int[13] = th_count_maps("libcublas.so.");
    r->user_int[14] = th_count_maps("libcusolver.so");
    th_capture(r, st);
}

/* find cuBLAS, then cuBLASLt's accessor (which never loads): NULL, its info found and not
 * loaded; then load cuBLAS: both tables. user_int[0..5]. */
static void child_find_then_load_cublas(th_result *r, void *arg) {
    cudaload_status st = cudaload_init(arg);
    r->user_int[0] = cudaload_find_library(CUDALOAD_LIB_CUBLAS);
    r->user_int[1] = cudaload_cublaslt() != NULL;
    cudaload_library_info info = {.size = sizeof info};
    cudaload_get_library_info(CUDALOAD_LIB_CUBLASLT, &info);
    r->user_int[2] = info.status == CUDALOAD_OK && !info.loaded;
    r->user_int[3] = cudaload_load_cublas();
    r->user_int[4] = cudaload_cublaslt() != NULL && cudaload_cublas() != NULL;
    r->user_int[5] = cudaload_find_library(CUDALOAD_LIB_CUBLAS); /* a find after the load: its result */
    th_capture(r, st);
}

/* Find-only with the runtime already in the process: the loaded copy is reused, so its table is
 * handed out, and a later load answers with it (its load ended: nothing searched again). */
static void child_find_only_over_loaded(th_result *r, void *arg) {
    preload_job *j = arg;
    if (!dlopen(j->preload, RTLD_NOW | RTLD_LOCAL)) {
        snprintf(r->user, sizeof r->user, "preload failed: %s", dlerror());
        return;
    }
    cudaload_status st = cudaload_init(j->opts);
    r->user_int[0] = cudaload_cudart() != NULL;
    r->user_int[1] = cudaload_load_library(CUDALOAD_LIB_CUDART);
    r->user_int[2] = cudaload_cudart() != NULL;
    th_capture(r, st);
}

static void test_find_only_reuses_a_loaded_copy(void **state) {
    (void)state;
    char pre[PATH_MAX];
    snprintf(pre, sizeof pre, "%s/libcudart.so.13", toolkit);
    const char *roots[] = {th_fixture("toolkit-cu13-wheel")};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER), CUDALOAD_FLAG_FIND_ONLY);
    preload_job j = {pre, &o};
    const char *env[] = {driver_env, NULL};
    th_result *r = th_result_new();
    th_run(r, env, child_find_only_over_loaded, &j);
    assert_string_equal(r->user, "");
    assert_int_equal(r->init_status, CUDALOAD_OK);
    /* the file loaded, its links resolved (the toolkit's lib64 may be a link, or, in a toolkit
     * made of pip's wheels, each file a link into the site-packages) */
    char real[PATH_MAX];
    assert_non_null(realpath(pre, real));
    th_assert_taken(r, CUDALOAD_LIB_CUDART, real, CUDALOAD_SOURCE_LOADED);
    assert_int_equal(r->lib[CUDALOAD_LIB_CUDART].loaded, 1);
    assert_int_equal(r->user_int[0], 1);
    assert_int_equal(r->user_int[1], CUDALOAD_OK);
    assert_int_equal(r->user_int[2], 1);
    assert_int_equal(r->lib[CUDALOAD_LIB_CUDART].n_candidates, 1); /* not searched again */
    th_result_free(r);
}

/* One order of the steps, in a process of its own: every step OK, and in the end every table
 * and library there. */
static void run_order(const int perm[STEPS], cudaload_options *o, const char *const *env) {
    order_job j = {o, {0}};
    char order[256] = "";
    for (int k = 0; k < STEPS; k++) {
        j.step[k] = perm[k];
        snprintf(order + strlen(order), sizeof order - strlen(order), "%s%s", k ? ", " : "", step_name[perm[k]]);
    }
    th_result *r = th_result_new();
    th_run(r, env, child_order, &j);
    assert_int_equal(r->init_status, CUDALOAD_OK);
    for (int k = 0; k < STEPS; k++)
        if (r->user_int[k] != CUDALOAD_OK)
            fail_msg("%s: step %d (%s) gave %d (%s)", order, k + 1, step_name[perm[k]], r->user_int[k],
                     r->user_int[k] >= 0 ? cudaload_status_name((cudaload_status)r->user_int[k])
                                         : r->user_int[k] == -1 ? "no table, the load said OK" : "no table");
    for (int i = 4; i <= 12; i++)
        if (r->user_int[i] != 1) fail_msg("%s: in the end, check %d is %d (tables, then libraries loaded)", order, i, r->user_int[i]);
    assert_int_equal(r->user_int[13], 1);
    assert_int_equal(r->user_int[14], 1);
    th_result_free(r);
}

/* perm becomes the next permutation in lexicographic order; 0 after the last. */
static int next_order(int perm[STEPS]) {
    int i = STEPS - 2;
    while (i >= 0 && perm[i] > perm[i + 1]) i--;
    if (i < 0) return 0;
    int k = STEPS - 1;
    while (perm[k] < perm[i]) k--;
    int tmp = perm[i];
    perm[i] = perm[k];
    perm[k] = tmp;
    for (int a = i + 1, b = STEPS - 1; a < b; a++, b--) tmp = perm[a], perm[a] = perm[b], perm[b] = tmp;
    return 1;
}

static void test_find_and_load_in_every_order(void **state) {
    (void)state;
    char *site = tree(NULL);
    char src[PATH_MAX], p[PATH_MAX];
    /* cuSOLVER's required dependencies beside it: cuBLAS(Lt) (tree's), cuSPARSE, nvJitLink */
    static const char *const more[] = {"libcusparse.so.12", "libnvJitLink.so.13", NULL};
    for (size_t i = 0; more[i]; i++) {
        snprintf(p, sizeof p, "%s/" CU13 "/%s", site, more[i]);
        snprintf(src, sizeof src, "%s/%s", toolkit, more[i]);
        if (access(p, F_OK) != 0) th_symlink(src, p);
    }
    const char *roots[] = {site};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER), 0);
    const char *env[] = {driver_env, NULL};
    int perm[STEPS] = {0, 1, 2, 3}, orders = 0;
    /* each order is a process loading cuBLAS and cuSOLVER: under valgrind (half a minute each)
     * every sixth of them, one starting with each step; the other runners run all 24 */
    int stride = RUNNING_ON_VALGRIND ? 6 : 1;
    if (stride > 1) print_message("under valgrind: every %dth order of the 24\n", stride);
    do {
        if (orders++ % stride == 0) run_order(perm, &o, env);
    } while (next_order(perm));
    assert_int_equal(orders, 24);

    th_result *r = th_result_new();
    th_run(r, env, child_find_then_load_cublas, &o);
    assert_int_equal(r->user_int[0], CUDALOAD_OK);
    assert_int_equal(r->user_int[1], 0);
    assert_int_equal(r->user_int[2], 1);
    assert_int_equal(r->user_int[3], CUDALOAD_OK);
    assert_int_equal(r->user_int[4], 1);
    assert_int_equal(r->user_int[5], CUDALOAD_OK);
    assert_int_equal(r->lib[CUDALOAD_LIB_CUBLAS].loaded, 1);
    assert_int_equal(r->lib[CUDALOAD_LIB_CUBLASLT].loaded, 1);
    assert_int_equal(r->maps_count[CUDALOAD_LIB_CUBLAS], 1);
    assert_int_equal(r->maps_count[CUDALOAD_LIB_CUBLASLT], 1);
    th_result_free(r);
    free(site);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_loaded_copy_that_fails_stops_the_search),
        cmocka_unit_test(test_loaded_older_major_kept_and_reported),
        cmocka_unit_test(test_fork_in_foreign_code_of_the_walk),
        cmocka_unit_test(test_fork_from_a_signal_handler_holding_the_lock),
        cmocka_unit_test(test_cublas_after_cudart_failed),
        cmocka_unit_test(test_file_swapped_before_dlopen),
        cmocka_unit_test(test_file_swapped_during_dependencies),
        cmocka_unit_test(test_file_swapped_and_swapped_back),
        cmocka_unit_test(test_root_near_path_max),
        cmocka_unit_test(test_cuda_home_and_conda_near_path_max),
        cmocka_unit_test(test_device_count_retries_transient_errors),
        cmocka_unit_test(test_every_toolkit_library),
        cmocka_unit_test(test_dist_info_tells_the_major),
        cmocka_unit_test(test_dist_info_gates_nccl_and_nvshmem),
        cmocka_unit_test(test_driver_found_after_the_loader_in_order),
        cmocka_unit_test(test_driver_nowhere_and_a_bad_list),
        cmocka_unit_test(test_branch_from_nvml_beside_the_driver),
        cmocka_unit_test(test_compat_seen_not_taken),
        cmocka_unit_test(test_compat_taken_when_it_helps),
        cmocka_unit_test(test_floors),
        cmocka_unit_test(test_floor_driver_and_bad_values),
        cmocka_unit_test(test_reentrant_call_from_foreign_code_of_init),
        cmocka_unit_test(test_reentrant_call_from_a_constructor),
        cmocka_unit_test(test_getters_while_foreign_code_runs),
        cmocka_unit_test(test_compat_table_published_once),
        cmocka_unit_test(test_find_and_load_in_every_order),
        cmocka_unit_test(test_find_only_reuses_a_loaded_copy),
    };
    return cmocka_run_group_tests_name("walk", tests, setup, NULL);
}
