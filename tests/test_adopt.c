/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_adopt.c -- switching an unchanged CUDA project to the stubs, as docs/stubs.md says:
 * every block of docs/stubs.md marked `<!-- recipe: NAME -->` is run as written (bash -e) in a
 * copy of examples/stubs, with CUDALOAD a `make install` prefix and CUDA_HOME the toolkit, and
 * what it built is checked: no NVIDIA library in DT_NEEDED, no RPATH into CUDA, and a run that
 * ends in the CUDA runtime's own answer (no driver here: cudaErrorInsufficientDriver, exit 2;
 * on a GPU, the right results, exit 0). Also the CMake switch's lists, the switch refusing to be
 * read any other way, and the stub targets' and pkg-config modules' link graph.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

static char top[PATH_MAX], prefix[PATH_MAX], work[PATH_MAX];
/* the toolkit the build used (th_cuda_home(): $CUDA_HOME for one made of pip's wheels, else
 * /usr/local/cuda) */
static const char *cuda_home;
/* the environment the built programs run in: the toolkit's libraries, found through CUDA_HOME */
static char run_env[PATH_MAX + 64];
/* an NVIDIA library's SONAME in readelf -d's output (libcudaload-*.so.0 is not one) */
#define NVIDIA_NEEDED "\\[lib(cuda|cudart|cublas|cublasLt|cufft|curand|cusolver|cusparse|nvrtc|nvJitLink|cudadevrt)\\.so"

static int setup(void **state) {
    (void)state;
    const char *b = getenv("CUDALOAD_TEST_BUILD");
    if (!b) return -1;
    snprintf(prefix, sizeof prefix, "%s/adopt-test/prefix", b);
    snprintf(work, sizeof work, "%s/adopt-test/work", b);
    cuda_home = th_cuda_home();
    snprintf(run_env, sizeof run_env, "CUDALOAD_SOURCES=cuda_home CUDA_HOME='%s'", cuda_home);
    return th_make_install(b, prefix, top, sizeof top) == 0 && th_sh(NULL, "rm -rf '%s'", work) == 0 ? 0 : -1;
}

static void need_nvcc(void) {
    char nvcc[PATH_MAX];
    snprintf(nvcc, sizeof nvcc, "%s/bin/nvcc", cuda_home);
    if (access(nvcc, X_OK) != 0) TH_SKIP("no nvcc at %s: the recipes compile CUDA", nvcc);
}

/* cmake 3.24 or newer on PATH (the switch needs a dependency provider) */
static void need_cmake_324(void) {
    const char *out;
    if (th_sh(&out, "cmake --version 2>/dev/null | awk 'NR==1{split($3,v,\".\"); exit !(v[1]>3 || (v[1]==3 && v[2]>=24))}'") != 0)
        TH_SKIP("no cmake 3.24 or newer on PATH (apt-get install cmake): the switch needs a dependency provider");
}

/* Runs docs/stubs.md's recipe NAME in the work dir (a fresh copy of examples/stubs when fresh). */
static void run_recipe(const char *name, int fresh) {
    const char *out;
    if (fresh) assert_int_equal(th_sh(&out, "rm -rf '%s' && mkdir -p '%s' && cp -a '%s/examples/stubs/.' '%s/'", work, work, top, work), 0);
    char script[PATH_MAX + 32];
    snprintf(script, sizeof script, "%s/recipe-%s.sh", work, name);
    assert_int_equal(th_sh(&out, "awk -v name='%s' '$0 == \"<!-- recipe: \" name \" -->\" {f=1; next} "
                                 "f && /^```sh$/ {c=1; next} c && /^```$/ {exit} c' '%s/docs/stubs.md' > '%s' && grep -c . '%s'",
                           name, top, script, script), 0);
    int st = th_sh(&out, "cd '%s' && PATH='%s/bin':\"$PATH\" CUDALOAD='%s' CUDA_HOME='%s' bash -e '%s' 2>&1", work, cuda_home, prefix,
                   cuda_home, script);
    if (st != 0) fail_msg("docs/stubs.md's recipe %s failed (%d):\n%s", name, st, out);
}

/* exe (relative to the work dir) needs no NVIDIA library and has no RPATH into CUDA */
static void assert_no_cuda_needed(const char *exe) {
    const char *out;
    assert_int_equal(th_sh(&out, "readelf -d '%s/%s'", work, exe), 0);
    if (th_sh(NULL, "readelf -d '%s/%s' | grep -E '%s'", work, exe, NVIDIA_NEEDED) == 0) fail_msg("%s needs CUDA:\n%s", exe, out);
    if (th_sh(NULL, "readelf -d '%s/%s' | grep -E 'R(UN)?PATH' | grep -Ei 'cuda|nvidia'", work, exe) == 0)
        fail_msg("%s has an RPATH into CUDA:\n%s", exe, out);
}

/* Runs exe with the toolkit findable: the runtime's own answer, exit 2 without a GPU (the
 * driver is missing: cudaErrorInsufficientDriver, 35), 0 with one. Returns its output. */
static const char *run_clean(const char *exe, const char *want_line) {
    const char *out;
    int st = th_sh(&out, "cd '%s' && %s ./%s 2>/dev/null", work, run_env, exe);
    int gpu = access("/dev/nvidiactl", F_OK) == 0;
    if (st != (gpu ? 0 : 2)) fail_msg("%s exited %d (%s GPU):\n%s", exe, st, gpu ? "a" : "no", out);
    if (!gpu && want_line && !strstr(out, want_line)) fail_msg("%s: no \"%s\" in:\n%s", exe, want_line, out);
    return out;
}

static void test_recipe_nvcc(void **state) {
    (void)state;
    need_nvcc();
    run_recipe("nvcc", 1);
    assert_no_cuda_needed("runtime_only");
    run_clean("runtime_only", "cudaMalloc=35\n");
}

/* `cc` as the linker failed on nvcc's C++ host code (__cxa_guard_acquire): the recipe uses c++ */
static void test_recipe_makefile(void **state) {
    (void)state;
    need_nvcc();
    run_recipe("makefile", 1);
    assert_no_cuda_needed("runtime_only");
    run_clean("runtime_only", "cudaMalloc=35\n");
}

/* -rdc=true in one nvcc command: nvcc's runtime is the stub (lib/cudaload-nvcc's scripts) */
static void test_recipe_nvcc_rdc(void **state) {
    (void)state;
    need_nvcc();
    if (th_sh(NULL, "command -v pkg-config") != 0) TH_SKIP("no pkg-config (apt-get install pkg-config)");
    run_recipe("nvcc-rdc", 1);
    assert_no_cuda_needed("solver");
    const char *out = run_clean("solver", "kernel=35\n");
    assert_non_null(strstr(out, "runtime_version=13000\n"));
}

/* -rdc=true: a kernel calling a __device__ function of another file, the device link apart */
static void test_recipe_rdc_then_pkg_config(void **state) {
    (void)state;
    need_nvcc();
    const char *out;
    run_recipe("rdc", 1);
    assert_no_cuda_needed("solver");
    out = run_clean("solver", "kernel=35\n");
    assert_non_null(strstr(out, "runtime_version=13000\n"));
    assert_non_null(strstr(out, "cusolver_version_status=0\n"));
    /* the pkg-config recipe links the same objects, through the modules' graph */
    if (th_sh(NULL, "command -v pkg-config") != 0) TH_SKIP("no pkg-config (apt-get install pkg-config)");
    run_recipe("pkg-config", 0);
    assert_no_cuda_needed("solver");
    assert_no_cuda_needed("solver-shared");
    assert_int_equal(th_sh(&out, "readelf -d '%s/solver' | grep NEEDED", work), 0);
    assert_null(strstr(out, "libcudaload")); /* the -static modules: the archives */
    assert_int_equal(th_sh(&out, "readelf -d '%s/solver-shared' | grep NEEDED", work), 0);
    assert_non_null(strstr(out, "[libcudaload-cusolver.so.0]"));
    assert_non_null(strstr(out, "[libcudaload-cudart.so.0]"));
    /* no LD_LIBRARY_PATH: the program's rpath finds the stubs, theirs ($ORIGIN) libcudaload.so.0 */
    out = run_clean("solver-shared", "kernel=35\n");
    assert_non_null(strstr(out, "runtime_version=13000\n"));
    run_clean("solver", "kernel=35\n");
}

/* The switch: the project configured as is links NVIDIA's libraries; with the one option, the
 * stubs, and the cache lists say what was switched, left and given the stub runtime. */
static void test_recipe_cmake_switch(void **state) {
    (void)state;
    need_nvcc();
    need_cmake_324();
    const char *out;
    run_recipe("cmake-switch", 1);
    assert_no_cuda_needed("build/solver");
    assert_no_cuda_needed("build/runtime_only");
    assert_int_equal(th_sh(&out, "grep '^CUDALOAD_STUBS_' '%s/build/CMakeCache.txt' | sort", work), 0);
    assert_non_null(strstr(out, "CUDALOAD_STUBS_RUNTIME:INTERNAL=solver;runtime_only\n"));
    /* nvJitLink, linked by find_library's path, went to its stub too */
    assert_non_null(strstr(out, "CUDALOAD_STUBS_BY_PATH:INTERNAL=solver: /"));
    assert_non_null(strstr(out, "/libnvJitLink.so\n"));
    /* CUDA::cuda_driver is FindCUDAToolkit's target for the toolkit's driver link stub: a toolkit
     * made of pip's wheels has none, so no such target to switch */
    int stub = th_driver_stub() != NULL;
    if (!stub) print_message("note: no driver link stub in %s, so no CUDA::cuda_driver to switch\n", cuda_home);
    for (const char *t = "cudart\0cudart_static\0cuda_driver\0cublas\0cublasLt\0cufft\0curand\0cusolver\0cusparse\0"; *t; t += strlen(t) + 1) {
        if (!stub && strcmp(t, "cuda_driver") == 0) continue;
        char want[64];
        snprintf(want, sizeof want, "CUDA::%s;", t);
        char want_last[64];
        snprintf(want_last, sizeof want_last, "CUDA::%s\n", t);
        const char *sw = strstr(out, "CUDALOAD_STUBS_SWITCHED:INTERNAL=");
        assert_non_null(sw);
        if (!strstr(sw, want) && !strstr(sw, want_last)) fail_msg("%s not switched:\n%s", t, out);
    }
    assert_non_null(strstr(out, "CUDALOAD_STUBS_LEFT:INTERNAL="));
    out = run_clean("build/solver", "kernel=35\n");
    assert_non_null(strstr(out, "runtime_version=13000\n"));
    assert_non_null(strstr(out, "nvjitlink_version=13.0\n"));
    run_clean("build/runtime_only", "cudaMalloc=35\n");
    /* nothing findable: the stub's own load-failure code (cudaErrorSharedObjectInitFailed) */
    int st = th_sh(&out, "cd '%s' && CUDALOAD_SOURCES=override ./build/solver 2>/dev/null", work);
    assert_int_equal(st, 1);
    assert_non_null(strstr(out, "runtime_version_status=303\n"));
    /* the control: the same project configured without the switch needs NVIDIA's libraries */
    /* (nvcc from the toolkit's bin, as the recipe has it: CMake looks in /usr/local/cuda/bin by
     * itself, not in a toolkit of pip wheels) */
    st = th_sh(&out, "cd '%s' && PATH='%s/bin':\"$PATH\" && cmake -S . -B plain >/dev/null 2>&1 && cmake --build plain 2>&1 && "
                     "readelf -d plain/solver plain/runtime_only", work, cuda_home);
    if (st != 0) fail_msg("the project without the switch did not build:\n%s", out);
    assert_non_null(strstr(out, "[libcusolver.so.12]"));
    assert_non_null(strstr(out, "[libnvJitLink.so.13]"));
    assert_non_null(strstr(out, "[libcudart.so.13]"));
}

/* An executable of the work dir needs no NVIDIA library (RPATHs aside: a project's own link
 * directories give them). */
static void assert_no_nvidia_needed(const char *exe) {
    const char *out;
    assert_int_equal(th_sh(&out, "readelf -d '%s/%s'", work, exe), 0);
    if (th_sh(NULL, "readelf -d '%s/%s' | grep NEEDED | grep -v '\\[libcudaload' | grep -E '\\[lib(cu|nv|nccl)'", work, exe) == 0)
        fail_msg("%s needs NVIDIA's libraries:\n%s", exe, out);
}

/* The switch installed by setup, for -DCMAKE_PROJECT_TOP_LEVEL_INCLUDES */
#define SWITCH_FILE "%s/lib/cmake/cudaload/cudaload-cuda-stubs.cmake"

/* tests/adopt/ways configured and built with the switch into the work dir's DIR (EXTRA: more
 * cmake options); returns the build's exit status, its output in *out. */
static int build_ways(const char *dir, const char *extra, const char **out) {
    return th_sh(out, "rm -rf '%s/%s' && PATH='%s/bin':\"$PATH\" cmake -S '%s/tests/adopt/ways' -B '%s/%s' %s "
                      "-DCMAKE_PROJECT_TOP_LEVEL_INCLUDES='" SWITCH_FILE "' 2>&1 && cmake --build '%s/%s' -- -k 2>&1",
                 work, dir, cuda_home, top, work, dir, extra, prefix, work, dir);
}

/* needs the toolkit's FILE (lib64/...) */
static void need_toolkit_file(const char *file) {
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/%s", cuda_home, file);
    if (access(p, R_OK) != 0) TH_SKIP("no %s: tests/adopt/ways links it", p);
}

/* Every way a CMake project names an NVIDIA library (tests/adopt/ways): imported targets of each
 * type (UNKNOWN, SHARED, STATIC, INTERFACE, a location for one configuration, a chain behind an
 * alias, one made in a subdirectory, one of a FetchContent project), a bare name, -l<name>,
 * -l:<file>, a -l link option, a path, generator expressions (a path, a bare name), a static
 * library's $<LINK_ONLY:...>, and CUDA code under each runtime choice (nvcc's default, the
 * CUDA_RUNTIME_LIBRARY property and the CMAKE_CUDA_RUNTIME_LIBRARY variable, Static, Shared,
 * None) and CUDA::cudart_static. With the switch, no executable needs an NVIDIA library, the
 * configure lists each item it switched, and each executable runs to its library's own answer
 * through the stub (and, with nothing findable, to the stub's load failure: no real copy is
 * linked in statically). */
static void test_switch_every_way(void **state) {
    (void)state;
    need_nvcc();
    need_cmake_324();
    for (const char *f = "lib64/libnccl.so\0lib64/libcudart_static.a\0lib64/libnvrtc.so\0lib64/libcurand.so\0"; *f; f += strlen(f) + 1)
        need_toolkit_file(f);
    const char *out;
    int st = build_ways("ways", "-DCMAKE_BUILD_TYPE=Release", &out);
    if (st != 0) fail_msg("tests/adopt/ways did not build with the switch:\n%s", out);
    int gpu = access("/dev/nvidiactl", F_OK) == 0;
    static const struct {
        const char *exe, *answer;
    } ways[] = {
        {"imported_unknown", "nccl=0/"},
        {"imported_interface", "nccl=0/"},
        {"imported_shared", "cufft=0/"},
        {"imported_static", "cudart=0/"},
        {"imported_config", "cublas=0/"},
        {"imported_chain", "cudart=0/"},
        {"sub/imported_subdir", "curand=0/"},
        {"_deps/fetched-build/fetched_imported", "nvrtc=0/"},
        {"bare_name", "cublas=0/"},
        {"dash_l", "cufft=0/"},
        {"dash_l_file", "cublas=0/"},
        {"link_option", "curand=0/"},
        {"plain_path", "cublas=0/"},
        {"toolkit_target", "cublas=0/"},
        {"genex_config", "cublas=0/"},
        {"genex_name", "cufft=0/"},
        {"link_only", "curand=0/"},
        {"runtimes/cudart_static_target", "cudart=0/"},
        {"runtimes/rt_default", "cudart=0/"},
        {"runtimes/rt_property_static", "cudart=0/"},
        {"runtimes/rt_property_shared", "cudart=0/"},
        {"runtimes/rt_var_static", "cudart=0/"},
        {"runtimes/rt_var_shared", "cudart=0/"},
        {"runtimes/rt_var_none", "cudart=0/"},
    };
    for (size_t i = 0; i < sizeof ways / sizeof ways[0]; i++) {
        char exe[PATH_MAX];
        snprintf(exe, sizeof exe, "ways/%s", ways[i].exe);
        assert_no_nvidia_needed(exe);
        st = th_sh(&out, "cd '%s' && %s ./%s 2>&1", work, run_env, exe);
        if (st != 0 || !strstr(out, ways[i].answer)) fail_msg("%s exited %d, not \"%s\":\n%s", exe, st, ways[i].answer, out);
        if (strncmp(ways[i].exe, "runtimes/rt_", 12) == 0 && !strstr(out, gpu ? "kernel=0\n" : "kernel=35\n"))
            fail_msg("%s: its kernel launch did not reach the runtime:\n%s", exe, out);
        /* the runtime, by whatever way: the stub's (nothing findable: its load failure, 303) */
        if (strncmp(ways[i].answer, "cudart=", 7) == 0) {
            th_sh(&out, "cd '%s' && CUDALOAD_SOURCES=override ./%s 2>/dev/null", work, exe);
            if (!strstr(out, "cudart=303/")) fail_msg("%s has a runtime of its own, not the stub's:\n%s", exe, out);
        }
    }
    /* the configure's account: every item switched, with its target */
    assert_int_equal(th_sh(&out, "grep '^CUDALOAD_STUBS_' '%s/ways/CMakeCache.txt'", work), 0);
    const char *by_path = strstr(out, "CUDALOAD_STUBS_BY_PATH:INTERNAL=");
    assert_non_null(by_path);
    for (const char *w = "nccl: /\0NCCL::nccl: /\0cufft_shared: /\0cudart_archive: /\0cublas_release: /\0rt_inner: /\0"
                         "curand_here: /\0fetched::nvrtc: /\0bare_name: cublas;\0dash_l_file: -l:libcublas.so.13;\0"
                         "link_option: -lcurand;\0genex_config: /\0genex_name: cufft;\0uses_curand: /\0";
         *w; w += strlen(w) + 1)
        if (!strstr(by_path, w)) fail_msg("\"%s\" not in the switched items:\n%s", w, out);
    assert_non_null(strstr(out, "CUDALOAD_STUBS_RUNTIME:INTERNAL=rt_default;rt_property_static;rt_property_shared;rt_var_static;rt_var_shared;rt_var_none\n"));
    /* left: FindCUDAToolkit's targets without a stub only (cuFFTW, when the toolkit has it) */
    assert_int_equal(th_sh(&out, "sed -n 's/^CUDALOAD_STUBS_LEFT:INTERNAL=//p' '%s/ways/CMakeCache.txt' | tr ';' '\\n' | "
                                 "grep -v '^CUDA::[A-Za-z_]*: /.*: no-stub$' | grep .", work), 1);
}

/* What the switch can't take (an NVIDIA library without a stub, cuBLAS inside a linker option):
 * the configure lists both as left, with the reason; the post-link check fails the build naming
 * each SONAME and the item that brought it, and removes the file so that the next build checks
 * it again; with CUDALOAD_STUBS_CHECK=WARN the build goes through with the same account. */
static void test_switch_check_catches_leftovers(void **state) {
    (void)state;
    need_cmake_324();
    need_toolkit_file("lib64/libcufftw.so");
    need_toolkit_file("lib64/libcublas.so");
    const char *out;
    int st = build_ways("planted", "-DWAYS_PLANT=ON", &out);
    if (st == 0) fail_msg("the planted leftovers built:\n%s", out);
    for (const char *w = "planted_no_stub: \0libcufftw.so.12, brought by:\0planted_flag: LINKER:--no-as-needed,-lcublas: \0"
                         "libcublas.so.13, brought by:\0";
         *w; w += strlen(w) + 1)
        if (!strstr(out, w)) fail_msg("no \"%s\" in:\n%s", w, out);
    assert_int_equal(th_sh(NULL, "ls '%s/planted/planted/planted_no_stub' '%s/planted/planted/planted_flag' 2>/dev/null", work, work), 2);
    assert_int_equal(th_sh(&out, "grep '^CUDALOAD_STUBS_LEFT:' '%s/planted/CMakeCache.txt'", work), 0);
    assert_non_null(strstr(out, "planted_no_stub: "));
    assert_non_null(strstr(out, "/libcufftw.so: no-stub"));
    assert_non_null(strstr(out, "planted_flag: LINKER:--no-as-needed,-lcublas: link-option"));
    /* the next build links and checks again */
    st = th_sh(&out, "cmake --build '%s/planted' 2>&1", work);
    if (st == 0 || !strstr(out, "brought by:")) fail_msg("the second build did not check again (%d):\n%s", st, out);
    st = build_ways("planted-warn", "-DWAYS_PLANT=ON -DCUDALOAD_STUBS_CHECK=WARN", &out);
    if (st != 0) fail_msg("CUDALOAD_STUBS_CHECK=WARN: the build failed:\n%s", out);
    assert_non_null(strstr(out, "libcufftw.so.12, brought by:"));
    assert_non_null(strstr(out, "libcublas.so.13, brought by:"));
    assert_int_equal(th_sh(NULL, "test -x '%s/planted-warn/planted/planted_no_stub' && test -x '%s/planted-warn/planted/planted_flag'", work, work), 0);
}
/* A vendored subdirectory that enables CUDA and finds the toolkit itself, its static library
 * linked into the top level's module (jax-finufft's layout): switched there too, the module
 * needs no NVIDIA library and exports none of the stubs' functions (--exclude-libs). */
static void test_switch_vendored_module(void **state) {
    (void)state;
    need_nvcc();
    need_cmake_324();
    const char *out;
    int st = th_sh(&out, "rm -rf '%s/vendored' && PATH='%s/bin':\"$PATH\" cmake -S '%s/tests/adopt/vendored' -B '%s/vendored' "
                         "-DCMAKE_PROJECT_TOP_LEVEL_INCLUDES='%s/lib/cmake/cudaload/cudaload-cuda-stubs.cmake' >/dev/null 2>&1 && "
                         "cmake --build '%s/vendored' 2>&1", work, cuda_home, top, work, prefix, work);
    if (st != 0) fail_msg("tests/adopt/vendored did not build:\n%s", out);
    assert_no_cuda_needed("vendored/libext.so");
    assert_int_equal(th_sh(&out, "nm -D --defined-only '%s/vendored/libext.so' | awk '{print $3}' | grep -E '^(cuda|cufft|cu[A-Z])'", work), 1);
    assert_int_equal(th_sh(&out, "grep '^CUDALOAD_STUBS_RUNTIME' '%s/vendored/CMakeCache.txt'", work), 0);
    assert_string_equal(out, "CUDALOAD_STUBS_RUNTIME:INTERNAL=ext\n");
    /* loaded as Python loads a module: cuFFT's own answer through the stub (no driver here: its
     * error, not the stub's CUFFT_SETUP_FAILED for a library it could not load; 0 on a GPU) */
    if (th_sh(NULL, "command -v python3") != 0) TH_SKIP("no python3 to load the module with ctypes");
    st = th_sh(&out, "%s python3 -c \"import ctypes; print(ctypes.CDLL('%s/vendored/libext.so').ext_entry())\"", run_env, work);
    assert_int_equal(st, 0);
    int answer = atoi(out);
    if (access("/dev/nvidiactl", F_OK) == 0) {
        assert_int_equal(answer, 0);
    } else if (!(answer > 1000 && answer < 1100 && answer != 1000 + 7)) {
        fail_msg("the module's cuFFT call answered %d (1000 + cufftResult expected, not 7: the stub's own)", answer);
    }
}

/* Read any other way than CMAKE_PROJECT_TOP_LEVEL_INCLUDES, the file stops the configure. */
static void test_switch_refuses_include(void **state) {
    (void)state;
    need_cmake_324();
    const char *out;
    int st = th_sh(&out, "cmake -P '%s/lib/cmake/cudaload/cudaload-cuda-stubs.cmake' 2>&1", prefix);
    assert_int_not_equal(st, 0);
    assert_non_null(strstr(out, "CMAKE_PROJECT_TOP_LEVEL_INCLUDES"));
}

/* cudaload::stub_cusolver brings cuBLAS's and cuSPARSE's stubs; the shared variant runs with no
 * LD_LIBRARY_PATH (CMake's build rpath to the stubs, the stubs' $ORIGIN to libcudaload.so.0). */
static void test_stub_target_graph(void **state) {
    (void)state;
    const char *out;
    if (th_sh(NULL, "command -v cmake") != 0) TH_SKIP("cmake is not installed (apt-get install cmake)");
    int st = th_sh(&out, "rm -rf '%s/graph' && cmake -S '%s/tests/adopt/graph' -B '%s/graph' -DCMAKE_PREFIX_PATH='%s' >/dev/null 2>&1 && "
                         "cmake --build '%s/graph' 2>&1", work, top, work, prefix, work);
    if (st != 0) fail_msg("tests/adopt/graph did not build:\n%s", out);
    for (int shared = 0; shared < 2; shared++) {
        const char *exe = shared ? "graph/graph_shared" : "graph/graph_static";
        assert_no_cuda_needed(exe);
        st = th_sh(&out, "%s '%s/%s'", run_env, work, exe);
        if (st != 0) fail_msg("%s exited %d:\n%s", exe, st, out);
        assert_non_null(strstr(out, "cusolver=0/"));
        assert_non_null(strstr(out, "cublas=0/13\n"));
        assert_non_null(strstr(out, "cusparse=0/12\n"));
    }
}

/* The libraries that ship as wheels of their own, linked the ways projects do (CUDA::cupti, and
 * cuDNN and NCCL by find_library's paths): the switch makes them stubs, the program needs none
 * of them, and it runs on the toolkit's copies found through CUDA_HOME. */
static void test_switch_wheel_libraries(void **state) {
    (void)state;
    need_cmake_324();
    const char *out;
    for (const char *f = "libcupti.so\0libcudnn.so\0libnccl.so\0include/cupti.h\0include/cudnn.h\0include/nccl.h\0"; *f; f += strlen(f) + 1) {
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/%s%s", cuda_home, strncmp(f, "include/", 8) == 0 ? "" : "lib64/", f);
        if (access(p, R_OK) != 0) TH_SKIP("no %s: the toolkit has no CUPTI, cuDNN or NCCL to link", p);
    }
    int st = th_sh(&out, "rm -rf '%s/wheel-libs' && PATH='%s/bin':\"$PATH\" cmake -S '%s/tests/adopt/wheel-libs' -B '%s/wheel-libs' "
                         "-DCMAKE_PROJECT_TOP_LEVEL_INCLUDES='%s/lib/cmake/cudaload/cudaload-cuda-stubs.cmake' 2>&1 && "
                         "cmake --build '%s/wheel-libs' 2>&1", work, cuda_home, top, work, prefix, work);
    if (st != 0) fail_msg("tests/adopt/wheel-libs did not build with the switch:\n%s", out);
    assert_int_equal(th_sh(&out, "grep '^CUDALOAD_STUBS_' '%s/wheel-libs/CMakeCache.txt'", work), 0);
    const char *sw = strstr(out, "CUDALOAD_STUBS_SWITCHED:INTERNAL=");
    assert_non_null(sw);
    if (!strstr(sw, "CUDA::cupti")) fail_msg("CUDA::cupti not switched:\n%s", out);
    assert_int_equal(th_sh(&out, "readelf -d '%s/wheel-libs/wheel_libs'", work), 0);
    if (strstr(out, "libcupti") || strstr(out, "libcudnn") || strstr(out, "libnccl")) fail_msg("wheel_libs needs them:\n%s", out);
    st = th_sh(&out, "%s '%s/wheel-libs/wheel_libs'", run_env, work);
    if (st != 0) fail_msg("wheel_libs exited %d:\n%s", st, out);
    assert_non_null(strstr(out, "cupti=0/"));
    assert_non_null(strstr(out, "nccl=0/"));
}

/* pkg-config: a stub module requires its graph's modules, the -static one their archives. */
static void test_pkg_config_graph(void **state) {
    (void)state;
    const char *out;
    if (th_sh(NULL, "command -v pkg-config") != 0) TH_SKIP("no pkg-config (apt-get install pkg-config)");
    assert_int_equal(th_sh(&out, "PKG_CONFIG_PATH='%s/lib/pkgconfig' pkg-config --libs cudaload-cusolver", prefix), 0);
    for (const char *l = "-lcudaload-cusolver \0-lcudaload-cublas \0-lcudaload-cublaslt \0-lcudaload-cusparse \0-lcudaload "; *l;
         l += strlen(l) + 1)
        if (!strstr(out, l)) fail_msg("no %s in: %s", l, out);
    assert_int_equal(th_sh(&out, "PKG_CONFIG_PATH='%s/lib/pkgconfig' pkg-config --libs cudaload-cusolver-static", prefix), 0);
    const char *solver = strstr(out, "libcudaload-cusolver.a"), *blas = strstr(out, "libcudaload-cublas.a"),
               *lt = strstr(out, "libcudaload-cublaslt.a"), *core = strstr(out, "/libcudaload.a");
    assert_non_null(solver);
    assert_non_null(blas);
    assert_non_null(lt);
    assert_non_null(core);
    assert_true(solver < blas && blas < lt && lt < core); /* static link order: a stub before what it needs */
    assert_null(strstr(out, "-lcudaload"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recipe_nvcc),
        cmocka_unit_test(test_recipe_makefile),
        cmocka_unit_test(test_recipe_nvcc_rdc),
        cmocka_unit_test(test_recipe_rdc_then_pkg_config),
        cmocka_unit_test(test_recipe_cmake_switch),
        cmocka_unit_test(test_switch_vendored_module),
        cmocka_unit_test(test_switch_refuses_include),
        cmocka_unit_test(test_stub_target_graph),
        cmocka_unit_test(test_pkg_config_graph),
        cmocka_unit_test(test_switch_wheel_libraries),
        cmocka_unit_test(test_switch_every_way),
        cmocka_unit_test(test_switch_check_catches_leftovers),
    };
    return cmocka_run_group_tests_name("test_adopt", tests, setup, NULL);
}
