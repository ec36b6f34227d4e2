/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_catalogue.c -- the catalogue's rows against the real files, and the one walk for the
 * libraries beyond cudart and cuBLAS: cuFFT, cuRAND, cuSOLVER (with its dependencies from its
 * own root), cuSPARSE, NVRTC, nvJitLink, laid out from the toolkit's real files as CUDA 13
 * wheel trees; exact files, scoped search, find-only, a corrupt candidate, one major for the
 * process, a cublasLt already loaded alone, the header finder and the advisor's fixes.
 *
 * Assertions are on statuses, sources, paths and reason codes, never on message text.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness.h"
#include "internal.h"

#define SRC(s) CUDALOAD_SOURCE_BIT(CUDALOAD_SOURCE_##s)

static const char *driver_env; /* the fake driver (th_fake_driver_env) */
static const char *toolkit;    /* the toolkit's library directory (fixtures.env) */

/* What a child saw of up to 8 libraries, by name: in shared memory (the children are forks). */
typedef struct seen_lib {
    char name[32];
    int status, source, major, loaded, version, n_cands;
    char path[PATH_MAX];
    int code[TH_MAX_CANDS], result[TH_MAX_CANDS];
    char cand[TH_MAX_CANDS][512];
    int maps;                 /* distinct files of it mapped */
    int fix_kind, fix_major;  /* the advisor's first fix */
    char fix_packages[128];
} seen_lib;
typedef struct seen {
    int init_status;
    seen_lib lib[8];
    char include_dir[PATH_MAX];
} seen;
static seen *S;

static int setup(void **state) {
    (void)state;
    if (!th_require_build(1)) return -1;
    driver_env = th_fake_driver_env();
    toolkit = th_fixture_env("CUDA_TOOLKIT_LIB");
    S = mmap(NULL, sizeof *S, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    return S == MAP_FAILED ? -1 : 0;
}

/* The library names a child loads (NULL-terminated), and the file prefix counted in maps. */
typedef struct job {
    cudaload_options *opts;
    const char *names[8];
    const char *maps_prefix[8];
    const char *include_of;   /* a library whose include dir to find */
    const char *preload;      /* a file dlopen'ed before init */
    const char *observe[4];   /* libraries only looked at after the loads (never asked for) */
} job;

static void record(seen_lib *s, const char *name, cudaload_status st) {
    cudaload_lib lib;
    cudaload_library_info info = {.size = sizeof info};
    snprintf(s->name, sizeof s->name, "%s", name);
    s->status = (int)st;
    if (cudaload_lib_by_name(name, &lib) != CUDALOAD_OK || cudaload_get_library_info(lib, &info) != CUDALOAD_OK) return;
    s->status = info.status;
    s->source = info.source;
    s->major = info.major;
    s->loaded = info.loaded;
    s->version = info.version;
    s->n_cands = (int)info.n_candidates;
    snprintf(s->path, sizeof s->path, "%s", info.path ? info.path : "");
    for (size_t i = 0; i < info.n_candidates && i < TH_MAX_CANDS; i++) {
        s->code[i] = info.details[i].reason;
        s->result[i] = info.candidates[i].result;
        snprintf(s->cand[i], sizeof s->cand[i], "%s", info.candidates[i].path);
    }
    cudaload_fix fix = {.size = sizeof fix};
    if (cudaload_fix_at(lib, 0, &fix) > 0) {
        s->fix_kind = fix.kind;
        s->fix_major = fix.major;
        snprintf(s->fix_packages, sizeof s->fix_packages, "%s", fix.packages ? fix.packages : "");
    }
}

static void child_load(th_result *r, void *arg) {
    (void)r;
    job *j = arg;
    memset(S, 0, sizeof *S);
    if (j->preload && !dlopen(j->preload, RTLD_NOW | RTLD_LOCAL)) return;
    S->init_status = cudaload_init(j->opts);
    for (size_t i = 0; i < 8 && j->names[i]; i++) {
        cudaload_library_info info = {.size = sizeof info};
        cudaload_status st = cudaload_library(j->names[i], &info);
        record(&S->lib[i], j->names[i], st);
    }
    for (size_t i = 0; i < 8 && j->names[i]; i++)
        S->lib[i].maps = th_count_maps(j->maps_prefix[i] ? j->maps_prefix[i] : "-none-");
    for (size_t i = 0, k = 4; i < 4 && j->observe[i]; i++, k++) record(&S->lib[k], j->observe[i], CUDALOAD_OK);
    if (j->include_of) {
        cudaload_lib lib;
        const char *d = cudaload_lib_by_name(j->include_of, &lib) == CUDALOAD_OK ? cudaload_include_dir(lib) : NULL;
        snprintf(S->include_dir, sizeof S->include_dir, "%s", d ? d : "");
    }
}

static const seen_lib *lib_named(const char *name) {
    for (size_t i = 0; i < 8; i++)
        if (strcmp(S->lib[i].name, name) == 0) return &S->lib[i];
    fail_msg("no record of %s", name);
    return NULL;
}

static void print_lib(const seen_lib *s) {
    print_message("%s: %s source %s major %d path %s\n", s->name, cudaload_status_name((cudaload_status)s->status),
                  cudaload_source_name((cudaload_source)s->source), s->major, s->path);
    for (int i = 0; i < s->n_cands && i < TH_MAX_CANDS; i++)
        print_message("  %s: %s %s\n", s->cand[i], cudaload_status_name((cudaload_status)s->result[i]),
                      cudaload_reason_name((cudaload_reason)s->code[i]));
}

static void expect_taken(const char *name, const char *prefix, int source) {
    const seen_lib *s = lib_named(name);
    if (s->status != CUDALOAD_OK || s->source != source || strncmp(s->path, prefix, strlen(prefix)) != 0) {
        print_lib(s);
        fail_msg("%s: want taken from %s [%s]", name, prefix, cudaload_source_name((cudaload_source)source));
    }
}

static int find_code(const seen_lib *s, const char *path_part, int code) {
    for (int i = 0; i < s->n_cands && i < TH_MAX_CANDS; i++)
        if (strstr(s->cand[i], path_part) && s->code[i] == code) return 1;
    print_lib(s);
    return 0;
}

/* A CUDA 13 wheel tree under a fresh site-packages: nvidia/cu13/lib with these toolkit files
 * (symbolic links, except copies where a test needs a file of its own). */
static char *cu13_site(const char *const *files) {
    char *site = th_tmpdir();
    char dir[PATH_MAX], p[PATH_MAX], src[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/nvidia/cu13/lib", site);
    th_mkdirs(dir);
    for (size_t i = 0; files[i]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        snprintf(src, sizeof src, "%s/%s", toolkit, files[i]);
        th_symlink(src, p);
    }
    return site;
}

static const char *const cusolver_files[] = {"libcudart.so.13", "libcublasLt.so.13", "libcublas.so.13", "libcusparse.so.12",
                                             "libnvJitLink.so.13", "libcusolver.so.12", "libcufft.so.12", "libcurand.so.10",
                                             "libnvrtc.so.13", NULL};

/* ---- rows against the real files ---- */

/* Every row is well formed; every SONAME a row names for CUDA 13 that the toolkit has is that
 * file's DT_SONAME; and every library file of the toolkit is a row (or a named exception). */
static void test_rows_match_real_files(void **state) {
    (void)state;
    size_t n = cudaload_library_count();
    assert_true(n >= 45);
    int checked = 0;
    for (size_t i = 0; i < n; i++) {
        cudaload_catalogue_info c = {.size = sizeof c};
        assert_int_equal(cudaload_catalogue_entry((cudaload_lib)i, &c), CUDALOAD_OK);
        cudaload_lib back;
        assert_int_equal(cudaload_lib_by_name(c.name, &back), CUDALOAD_OK);
        assert_int_equal(back, i);
        assert_non_null(c.header);
        assert_non_null(strstr(c.env_name, "CUDALOAD_"));
        for (size_t j = 0; j < i; j++) {
            cudaload_catalogue_info o = {.size = sizeof o};
            cudaload_catalogue_entry((cudaload_lib)j, &o);
            if (strcmp(o.env_name, c.env_name) == 0) fail_msg("%s and %s share %s", o.name, c.name, c.env_name);
        }
        const cl_row *row = cl_row_at(i);
        for (size_t d = 0; d < CL_MAX_DEPS; d++) {
            if (row->deps[d] && cl_catalogue_find(row->deps[d]) < 0) fail_msg("%s: dependency %s is no row", row->name, row->deps[d]);
            if (row->opt_deps[d] && cl_catalogue_find(row->opt_deps[d]) < 0)
                fail_msg("%s: optional dependency %s is no row", row->name, row->opt_deps[d]);
        }
        if (c.driver_like) continue;
        assert_true(c.n_majors >= 1);
        for (int k = 0; k < c.n_majors; k++) {
            assert_non_null(c.pip_packages[k]);
            assert_non_null(c.wheel_dirs[k]);
            if (c.majors[k] != 13) continue;
            char p[PATH_MAX];
            snprintf(p, sizeof p, "%s/%s", toolkit, c.sonames[k]);
            if (access(p, F_OK) != 0) continue;
            char *so = cl_elf_file_soname(p);
            if (!so || strcmp(so, c.sonames[k]) != 0) fail_msg("%s: row says %s, the file's DT_SONAME is %s", c.name, c.sonames[k], so ? so : "none");
            free(so);
            checked++;
        }
    }
    /* at least so many: an installed toolkit has 15 or more of the rows' libraries; one made of
     * pip's wheels (its files links into a site-packages' nvidia/cu13/lib) the 13 of
     * tools/cuda-pins.txt's wheels, no cuPTI, NVTX, cuDNN or NCCL */
    char cudart[PATH_MAX], cudart_real[PATH_MAX];
    snprintf(cudart, sizeof cudart, "%s/libcudart.so.13", toolkit);
    int wheels = realpath(cudart, cudart_real) && strstr(cudart_real, "/nvidia/cu13/lib/");
    int least = wheels ? 13 : 15;
    print_message("%d SONAMEs checked against the toolkit's files (%s: at least %d)\n", checked,
                  wheels ? "a toolkit made of pip's wheels" : "an installed toolkit", least);
    assert_true(checked >= least);

    /* the other way round: each versioned library file of the toolkit is some row's SONAME */
    static const char *const not_rows[] = {"libnvrtc-builtins", "libnvrtc.alt", "libcudnn_", NULL};
    char cmd[PATH_MAX + 64];
    snprintf(cmd, sizeof cmd, "ls '%s' | grep -E '^lib.*\\.so\\.[0-9]+$'", toolkit);
    FILE *ls = popen(cmd, "r");
    assert_non_null(ls);
    char line[512];
    int files = 0;
    while (fgets(line, sizeof line, ls)) {
        line[strcspn(line, "\n")] = 0;
        int skip = 0;
        for (size_t k = 0; not_rows[k]; k++) skip |= strncmp(line, not_rows[k], strlen(not_rows[k])) == 0;
        if (skip) continue;
        int found = 0;
        for (size_t i = 0; i < n && !found; i++) found = cl_row_major_of_soname(cl_row_at(i), line) != 0 ||
                                                          (cl_row_at(i)->flavor[0].soname && strcmp(cl_row_at(i)->flavor[0].soname, line) == 0);
        if (!found) fail_msg("the toolkit's %s is in no catalogue row", line);
        files++;
    }
    pclose(ls);
    assert_true(files >= least);
    cudaload_lib lib;
    assert_int_equal(cudaload_lib_by_name("no-such-library", &lib), CUDALOAD_ERROR_NOT_FOUND);
    assert_int_equal(cudaload_lib_by_name("CUFFT", &lib), CUDALOAD_OK); /* typed by hand */
}

/* No row depends on itself, directly or through others (the walk would recurse). */
static int dep_cycle(int lib, int *state) {
    if (state[lib] == 1) return 1;
    if (state[lib] == 2) return 0;
    state[lib] = 1;
    const cl_row *row = cl_row_at((size_t)lib);
    for (size_t d = 0; d < 2 * CL_MAX_DEPS; d++) {
        const char *name = d < CL_MAX_DEPS ? row->deps[d] : row->opt_deps[d - CL_MAX_DEPS];
        if (name && dep_cycle(cl_catalogue_find(name), state)) {
            print_message("dependency cycle through %s -> %s\n", row->name, name);
            return 1;
        }
    }
    state[lib] = 2;
    return 0;
}

static void test_no_dependency_cycle(void **state) {
    (void)state;
    int st[CL_CATALOGUE_MAX];
    for (size_t i = 0; i < cudaload_library_count(); i++) {
        memset(st, 0, sizeof st);
        assert_false(dep_cycle((int)i, st));
    }
}

/* The major rules: a SONAME's number is not the CUDA major. */
static void test_major_rules(void **state) {
    (void)state;
    const cl_row *cufft = cl_row_at((size_t)cl_catalogue_find("cufft"));
    const cl_row *curand = cl_row_at((size_t)cl_catalogue_find("curand"));
    const cl_row *nvrtc = cl_row_at((size_t)cl_catalogue_find("nvrtc"));
    assert_int_equal(cl_row_major_of_soname(cufft, "libcufft.so.12"), 13);
    assert_int_equal(cl_row_major_of_soname(cufft, "libcufft.so.11"), 12);
    assert_int_equal(cl_row_major_of_soname(curand, "libcurand.so.10"), 0); /* in CUDA 12 and 13 alike */
    assert_int_equal(cl_row_major_of_version(cufft, 120000), 13);             /* cuFFT 12.0.0 is CUDA 13's */
    assert_int_equal(cl_row_major_of_version(cufft, 110400), 12);
    assert_int_equal(cl_row_major_of_version(nvrtc, 13000), 13);
    assert_int_equal(cl_row_major_of_version(curand, 100400), 0);
    /* and how each reads its version, for the people who print it */
    static const struct {
        const char *name;
        int style;
    } styles[] = {{"cuda", 1}, {"cudart", 1}, {"nvrtc", 1}, {"cufft", 2}, {"cublas", 2}, {"cudnn", 2}, {"nccl", 2}, {"nvml", 0}};
    for (size_t i = 0; i < sizeof styles / sizeof styles[0]; i++) {
        cudaload_lib lib;
        cudaload_catalogue_info c = {.size = sizeof c};
        assert_int_equal(cudaload_lib_by_name(styles[i].name, &lib), CUDALOAD_OK);
        assert_int_equal(cudaload_catalogue_entry(lib, &c), CUDALOAD_OK);
        if (c.version_style != styles[i].style) fail_msg("%s: version_style %d", styles[i].name, c.version_style);
    }
}

/* ---- the walk ---- */

/* cuSOLVER from a CUDA 13 wheel tree: its dependencies (cuBLAS, cublasLt, cuSPARSE, nvJitLink)
 * first, from the same root; one copy of each mapped; lazily (init maps none of them). */
static void test_cusolver_with_deps_from_its_root(void **state) {
    (void)state;
    char *site = cu13_site(cusolver_files);
    const char *roots[] = {site};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER), 0);
    /* only cuSOLVER is asked for; its dependencies are then looked at, not asked for */
    job j = {&o, {"cusolver"}, {"libcusolver.so"}, NULL, NULL, {"cublas", "cublasLt", "cusparse", "nvJitLink"}};
    const char *env[] = {driver_env, NULL};
    th_result *r = th_result_new();
    th_run(r, env, child_load, &j);
    assert_int_equal(S->init_status, CUDALOAD_OK);
    expect_taken("cusolver", site, CUDALOAD_SOURCE_CALLER);
    assert_int_equal(S->lib[0].maps, 1);
    for (size_t i = 0; i < 4; i++) {
        expect_taken(j.observe[i], site, CUDALOAD_SOURCE_CALLER);
        assert_int_equal(lib_named(j.observe[i])->major, 13);
        assert_int_equal(lib_named(j.observe[i])->loaded, 1);
    }
    assert_true(lib_named("cusolver")->version >= 120000); /* cuSOLVER 12.x is CUDA 13's */
    th_result_free(r);
    free(site);
}

static void child_lazy(th_result *r, void *arg) {
    (void)r;
    memset(S, 0, sizeof *S);
    S->init_status = cudaload_init(arg);
    record(&S->lib[0], "cufft", CUDALOAD_OK);
    S->lib[0].maps = th_count_maps("libcufft.so");
}

/* init searches the driver and cudart only: cuFFT is not touched until asked for. */
static void test_init_is_lazy(void **state) {
    (void)state;
    char *site = cu13_site(cusolver_files);
    const char *roots[] = {site};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER), 0);
    const char *env[] = {driver_env, NULL};
    th_result *r = th_result_new();
    th_run(r, env, child_lazy, &o);
    assert_int_equal(S->init_status, CUDALOAD_OK);
    assert_int_equal(S->lib[0].status, CUDALOAD_ERROR_NOT_ATTEMPTED);
    assert_int_equal(S->lib[0].n_cands, 0);
    assert_int_equal(S->lib[0].maps, 0);
    th_result_free(r);
    free(site);
}

/* Roots in order, a corrupt candidate skipped with its code, find-only, the exact file. */
static void test_order_corrupt_find_only_exact(void **state) {
    (void)state;
    static const char *const rt[] = {"libcudart.so.13", NULL};
    char *bad = cu13_site(rt), *good = cu13_site(cusolver_files), p[PATH_MAX];
    snprintf(p, sizeof p, "%s/nvidia/cu13/lib/libcufft.so.12", bad);
    th_write(p, "not a library\n", 14);
    const char *roots[] = {bad, good};
    const char *env[] = {driver_env, NULL};
    th_result *r = th_result_new();

    cudaload_options o = th_opts(roots, 2, SRC(CALLER), 0);
    job j = {&o, {"cufft", "curand"}, {"libcufft.so", "libcurand.so"}, NULL, NULL, {NULL}};
    th_run(r, env, child_load, &j);
    expect_taken("cufft", good, CUDALOAD_SOURCE_CALLER);
    assert_true(find_code(lib_named("cufft"), bad, CUDALOAD_REASON_FILE_UNUSABLE));
    assert_int_equal(lib_named("cufft")->maps, 1);
    expect_taken("curand", good, CUDALOAD_SOURCE_CALLER);
    /* curand's SONAME is the same in CUDA 12 and 13: the directory (nvidia/cu13/lib) says 13 */
    assert_int_equal(lib_named("curand")->major, 13);

    /* find-only: located and checked, nothing loaded */
    o = th_opts(roots, 2, SRC(CALLER), CUDALOAD_FLAG_FIND_ONLY);
    th_run(r, env, child_load, &j);
    expect_taken("cufft", good, CUDALOAD_SOURCE_CALLER);
    assert_int_equal(lib_named("cufft")->loaded, 0);
    assert_int_equal(lib_named("cufft")->maps, 0);
    assert_true(find_code(lib_named("cufft"), good, CUDALOAD_REASON_FOUND));

    /* the exact file, by the variable the row's name gives */
    char exact[PATH_MAX + 64];
    snprintf(exact, sizeof exact, "CUDALOAD_CUFFT_PATH=%s/libcufft.so.12", toolkit);
    const char *env2[] = {driver_env, exact, NULL};
    o = th_opts(roots, 2, SRC(CALLER) | SRC(OVERRIDE), 0);
    th_run(r, env2, child_load, &j);
    expect_taken("cufft", toolkit, CUDALOAD_SOURCE_OVERRIDE);

    /* an unusable exact file fails loudly, no fallback */
    snprintf(exact, sizeof exact, "CUDALOAD_CUFFT_PATH=%s/nvidia/cu13/lib/libcufft.so.12", bad);
    th_run(r, env2, child_load, &j);
    assert_int_equal(lib_named("cufft")->status, CUDALOAD_ERROR_OVERRIDE_UNUSABLE);
    assert_int_equal(lib_named("cufft")->fix_kind, CUDALOAD_FIX_CHECK_SETTING);

    /* and options.lib_paths does the same from code */
    char entry[PATH_MAX + 16];
    snprintf(entry, sizeof entry, "cufft=%s/libcufft.so.12", toolkit);
    const char *paths[] = {entry};
    o = th_opts(roots, 2, SRC(CALLER) | SRC(OVERRIDE), 0);
    o.lib_paths = paths;
    o.n_lib_paths = 1;
    th_run(r, env, child_load, &j);
    expect_taken("cufft", toolkit, CUDALOAD_SOURCE_OVERRIDE);
    th_result_free(r);
    free(bad);
    free(good);
}

/* Scoped search: with only the caller's root (no system), a library absent there is NOT_FOUND,
 * and the advisor names the CUDA 13 pip package (the process's major). */
static void test_scoped_not_found_advice(void **state) {
    (void)state;
    static const char *const rt[] = {"libcudart.so.13", NULL};
    char *site = cu13_site(rt);
    const char *roots[] = {site};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER), 0);
    job j = {&o, {"cufft", "nccl"}, {"libcufft.so", "libnccl.so"}, NULL, NULL, {NULL}};
    const char *env[] = {driver_env, NULL};
    th_result *r = th_result_new();
    th_run(r, env, child_load, &j);
    const seen_lib *s = lib_named("cufft");
    assert_int_equal(s->status, CUDALOAD_ERROR_NOT_FOUND);
    assert_int_equal(s->maps, 0);
    assert_int_equal(s->fix_kind, CUDALOAD_FIX_PIP_INSTALL);
    assert_int_equal(s->fix_major, 13);
    assert_string_equal(s->fix_packages, "nvidia-cufft");
    assert_string_equal(lib_named("nccl")->fix_packages, "nvidia-nccl-cu13");
    th_result_free(r);
    free(site);
}

/* The advice fits the driver: with no runtime found and a CUDA 12 driver, only the CUDA 12
 * package is named; a CUDA 11 driver runs neither, so the fix is the driver. */
static void test_advice_fits_the_driver(void **state) {
    (void)state;
    char *empty = th_tmpdir(), v12[] = "FAKE_CUDA_VERSION=12040", v11[] = "FAKE_CUDA_VERSION=11080";
    const char *roots[] = {empty};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER), 0);
    job j = {&o, {"cufft"}, {"libcufft.so"}, NULL, NULL, {NULL}};
    const char *env12[] = {driver_env, v12, NULL}, *env11[] = {driver_env, v11, NULL};
    th_result *r = th_result_new();
    th_run(r, env12, child_load, &j);
    assert_int_equal(lib_named("cufft")->status, CUDALOAD_ERROR_NOT_FOUND);
    assert_int_equal(lib_named("cufft")->fix_kind, CUDALOAD_FIX_PIP_INSTALL);
    assert_int_equal(lib_named("cufft")->fix_major, 12);
    assert_string_equal(lib_named("cufft")->fix_packages, "nvidia-cufft-cu12");
    th_run(r, env11, child_load, &j);
    assert_int_equal(lib_named("cufft")->fix_kind, CUDALOAD_FIX_UPGRADE_DRIVER);
    assert_int_equal(lib_named("cufft")->fix_major, 13);
    th_result_free(r);
    free(empty);
}

/* One major for the process: with CUDA 12's runtime taken, CUDA 13's cuFFT is never taken. */
static void test_one_major(void **state) {
    (void)state;
    char *site = cu13_site(cusolver_files);
    const char *roots[] = {th_fixture_env("VENV_CU12_SITE"), site};
    cudaload_options o = th_opts(roots, 2, SRC(CALLER), 0);
    o.cuda_major = 12;
    job j = {&o, {"cudart", "cufft"}, {"libcudart.so", "libcufft.so"}, NULL, NULL, {NULL}};
    const char *env[] = {driver_env, NULL};
    th_result *r = th_result_new();
    th_run(r, env, child_load, &j);
    assert_int_equal(S->init_status, CUDALOAD_OK);
    assert_int_equal(lib_named("cudart")->major, 12);
    const seen_lib *s = lib_named("cufft");
    assert_int_not_equal(s->status, CUDALOAD_OK);
    assert_int_equal(s->maps, 0);
    assert_int_equal(s->fix_major, 12);
    assert_string_equal(s->fix_packages, "nvidia-cufft-cu12");
    th_result_free(r);
    free(site);
}

/* A cublasLt already in the process alone is reused for cuBLAS: never a second copy. */
static void test_cublaslt_loaded_alone_is_reused(void **state) {
    (void)state;
    char *site = cu13_site(cusolver_files);
    static const char *const lt[] = {"libcublasLt.so.13", NULL};
    char *other = cu13_site(lt), pre[PATH_MAX];
    snprintf(pre, sizeof pre, "%s/nvidia/cu13/lib/libcublasLt.so.13", other);
    const char *roots[] = {site};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER), 0);
    job j = {&o, {"cublas", "cublasLt"}, {"libcublas.so", "libcublasLt.so"}, NULL, pre, {NULL}};
    const char *env[] = {driver_env, NULL};
    th_result *r = th_result_new();
    th_run(r, env, child_load, &j);
    expect_taken("cublas", site, CUDALOAD_SOURCE_CALLER);
    const seen_lib *l = lib_named("cublasLt");
    assert_int_equal(l->status, CUDALOAD_OK);
    assert_int_equal(l->source, CUDALOAD_SOURCE_LOADED);
    assert_int_equal(l->maps, 1);
    th_result_free(r);
    free(site);
    free(other);
}

/* The header finder: the wheel's include dir of the copy taken. */
static void test_include_dir(void **state) {
    (void)state;
    char *site = cu13_site(cusolver_files), inc[PATH_MAX], p[PATH_MAX], src[PATH_MAX];
    snprintf(inc, sizeof inc, "%s/nvidia/cu13/include", site);
    th_mkdirs(inc);
    snprintf(p, sizeof p, "%s/cufft.h", inc);
    const char *home = getenv("CUDA_HOME");
    snprintf(src, sizeof src, "%s/include/cufft.h", home && home[0] ? home : "/usr/local/cuda");
    th_symlink(src, p);
    const char *roots[] = {site};
    cudaload_options o = th_opts(roots, 1, SRC(CALLER), CUDALOAD_FLAG_FIND_ONLY);
    job j = {&o, {"cufft"}, {"libcufft.so"}, "cufft", NULL, {NULL}};
    const char *env[] = {driver_env, NULL};
    th_result *r = th_result_new();
    th_run(r, env, child_load, &j);
    char *want = realpath(inc, NULL);
    assert_non_null(want);
    assert_string_equal(S->include_dir, want);
    free(want);
    th_result_free(r);
    free(site);
}

/* NVIDIA's real nvJitLink wheels from PyPI, one per major, in the fixture venvs beside the
 * runtime: CUDA 12's in nvidia/nvjitlink/lib, CUDA 13's in nvidia/cu13/lib; the version call
 * confirms the major the directory told. */
static void test_real_nvjitlink_wheels(void **state) {
    (void)state;
    static const struct {
        const char *site_key, *dir;
        int major;
    } venvs[] = {{"VENV_CU12_SITE", "nvidia/nvjitlink/lib/libnvJitLink.so.12", 12},
                 {"VENV_CU13_SITE", "nvidia/cu13/lib/libnvJitLink.so.13", 13}};
    for (size_t v = 0; v < 2; v++) {
        const char *site = th_fixture_env(venvs[v].site_key);
        char want[PATH_MAX];
        snprintf(want, sizeof want, "%s/%s", site, venvs[v].dir);
        const char *roots[] = {site};
        cudaload_options o = th_opts(roots, 1, SRC(CALLER), 0);
        job j = {&o, {"nvJitLink"}, {"libnvJitLink.so"}, NULL, NULL, {NULL}};
        const char *env[] = {driver_env, NULL};
        th_result *r = th_result_new();
        th_run(r, env, child_load, &j);
        expect_taken("nvJitLink", want, CUDALOAD_SOURCE_CALLER);
        assert_int_equal(S->lib[0].major, venvs[v].major);
        assert_int_equal(S->lib[0].version / 1000, venvs[v].major);
        assert_int_equal(S->lib[0].maps, 1);
        th_result_free(r);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_match_real_files),
        cmocka_unit_test(test_no_dependency_cycle),
        cmocka_unit_test(test_major_rules),
        cmocka_unit_test(test_cusolver_with_deps_from_its_root),
        cmocka_unit_test(test_init_is_lazy),
        cmocka_unit_test(test_order_corrupt_find_only_exact),
        cmocka_unit_test(test_scoped_not_found_advice),
        cmocka_unit_test(test_advice_fits_the_driver),
        cmocka_unit_test(test_one_major),
        cmocka_unit_test(test_cublaslt_loaded_alone_is_reused),
        cmocka_unit_test(test_include_dir),
        cmocka_unit_test(test_real_nvjitlink_wheels),
    };
    return cmocka_run_group_tests_name("catalogue", tests, setup, NULL);
}
