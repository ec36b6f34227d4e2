/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_install.c -- what a user of the installed library gets: `make install` into a
 * prefix, examples/c/hello built through pkg-config (shared and embedded), run against a
 * crafted wheel tree; the exported symbols and the absence of any CUDA DT_NEEDED; and a
 * clean `make uninstall`. Runs the real make, pkg-config, readelf and nm.
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
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

static char top[PATH_MAX], prefix[PATH_MAX], build[PATH_MAX];
/* the environment the built programs run in: the toolkit's libraries (th_cuda_home(): the
 * toolkit the build used), found through CUDA_HOME */
static char run_env[PATH_MAX + 64];

static int setup(void **state) {
    (void)state;
    const char *b = getenv("CUDALOAD_TEST_BUILD");
    if (!b) return -1;
    snprintf(build, sizeof build, "%s", b);
    snprintf(prefix, sizeof prefix, "%s/install-test", b);
    snprintf(run_env, sizeof run_env, "CUDALOAD_SOURCES=cuda_home CUDA_HOME='%s'", th_cuda_home());
    return th_make_install(build, prefix, top, sizeof top);
}

static void test_installed_files(void **state) {
    (void)state;
    static const char *const files[] = {"lib/libcudaload.so." CUDALOAD_VERSION_STRING, "lib/libcudaload.so.0", "lib/libcudaload.so",
                                        "lib/libcudaload.a", "lib/pkgconfig/cudaload.pc", "include/cudaload.h",
                                        "include/cudaload_tables.h", "bin/cudaload-probe"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char p[PATH_MAX + 64];
        snprintf(p, sizeof p, "%s/%s", prefix, files[i]);
        if (access(p, F_OK) != 0) fail_msg("make install did not install %s", p);
    }
    const char *out;
    assert_int_equal(th_sh(&out, "PKG_CONFIG_PATH='%s/lib/pkgconfig' pkg-config --modversion cudaload", prefix), 0);
    assert_string_equal(out, CUDALOAD_VERSION_STRING "\n");
    /* The Cflags carry the CUDA headers the build used: cudaload_tables.h compiles with them alone. */
    assert_int_equal(th_sh(&out, "test -f \"$(PKG_CONFIG_PATH='%s/lib/pkgconfig' pkg-config --variable=cudaincludedir cudaload)/cuda.h\"", prefix), 0);
    assert_int_equal(th_sh(&out, "printf '#include <cudaload_tables.h>\\nint main(void){return cudaload_cudart()!=0;}\\n' | "
                              "cc -std=c11 -x c -fsyntax-only $(PKG_CONFIG_PATH='%s/lib/pkgconfig' pkg-config --cflags cudaload) - 2>&1", prefix), 0);
    /* every generated table header, with the tables header, as a file compiled with or without
     * per-thread default streams sees them (the members must not collide after the CUDA
     * headers' renaming macros) */
    const char *modes[] = {"", "-DCUDA_API_PER_THREAD_DEFAULT_STREAM=1"};
    /* the libraries that ship as wheels of their own: their headers from the pinned wheels (the
     * build's WHEEL_FILES; without it, those table headers are left out here); cufile.h needs
     * _GNU_SOURCE (loff_t) */
    const char *wheels = getenv("WHEEL_FILES");
    char winc[8192] = "", skip[1024] = "";
    if (top[0]) {
        const char *w;
        assert_int_equal(th_sh(&w, "sed -n 's/^STUB_WHEEL_\\([a-z0-9]*\\) := \\(.*\\)/\\1 \\2/p' '%s/stubs/gen/stubs.mk'", top), 0);
        for (const char *l = w; *l;) {
            char id[64], dir[512];
            if (sscanf(l, "%63s %511s", id, dir) != 2) break;
            size_t n = strlen(winc), k = strlen(skip);
            if (wheels && *wheels) snprintf(winc + n, sizeof winc - n, "-I%s/%s ", wheels, dir); /* ahead of the toolkit's */
            else snprintf(skip + k, sizeof skip - k, "cudaload_%s.h ", id);
            l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l);
        }
    }
    for (int m = 0; m < 2; m++) {
        int st = th_sh(&out, "cd '%s/include' && for h in cudaload_*.h; do case ' %s' in *\" $h \"*) continue;; esac; "
                          "printf '#include <%%s>\\n#include <cudaload_tables.h>\\n"
                          "int main(void){return cudaload_cudart()!=0;}\\n' $h | cc -std=c11 -D_GNU_SOURCE -x c -fsyntax-only -Wall -Werror "
                          "-Wno-deprecated-declarations %s %s $(PKG_CONFIG_PATH='%s/lib/pkgconfig' pkg-config --cflags cudaload) - 2>&1 "
                          "|| echo \"^ $h\"; done", prefix, skip, modes[m], winc, prefix);
        if (st != 0 || out[0]) fail_msg("a table header does not compile (%s):\n%s", modes[m], out);
    }
}

static void test_exports_and_no_cuda_needed(void **state) {
    (void)state;
    const char *out;
    assert_int_equal(th_sh(&out, "nm -D --defined-only '%s/lib/libcudaload.so' | awk '{print $3}' | grep -v '^cudaload_'", prefix), 1);
    assert_int_equal(th_sh(&out, "readelf -d '%s/lib/libcudaload.so' | grep NEEDED", prefix), 0);
    if (strstr(out, "libcud") || strstr(out, "libcublas") || strstr(out, "libnvrtc")) fail_msg("CUDA in DT_NEEDED:\n%s", out);
    assert_non_null(strstr(out, "libc.so.6"));
    assert_int_equal(th_sh(&out, "readelf -d '%s/lib/libcudaload.so' | grep SONAME", prefix), 0);
    assert_non_null(strstr(out, "[libcudaload.so.0]"));
    /* the archive's objects: every global definition but the API is hidden */
    assert_int_equal(th_sh(&out, "readelf -sW '%s/lib/libcudaload.a' | awk '$5 == \"GLOBAL\" && $7 != \"UND\" && $6 != \"HIDDEN\" "
                              "{print $8}' | grep -v '^cudaload_'", prefix), 1);
    assert_string_equal(out, "");
}

/* Builds exe from a C source through the pkg-config module cudaload-<lib> (its --cflags and
 * --libs) and checks what it needs: the stub's run-time file, libcudaload-<lib>.so.0, and nothing
 * whose name holds absent (the library's own). */
static void build_through_module(const char *exe, const char *lib, const char *source, const char *absent) {
    const char *out;
    char src[PATH_MAX + 8], needed[64];
    snprintf(src, sizeof src, "%s.c", exe);
    th_write(src, source, strlen(source));
    int st = th_sh(&out, "cc -std=c11 -o '%s' $(PKG_CONFIG_PATH='%s/lib/pkgconfig' pkg-config --cflags cudaload-%s) '%s' "
                         "$(PKG_CONFIG_PATH='%s/lib/pkgconfig' pkg-config --libs cudaload-%s) 2>&1",
                   exe, prefix, lib, src, prefix, lib);
    if (st != 0) fail_msg("linking through cudaload-%s failed:\n%s", lib, out);
    unlink(src);
    assert_int_equal(th_sh(&out, "readelf -d '%s' | grep NEEDED", exe), 0);
    snprintf(needed, sizeof needed, "[libcudaload-%s.so.0]", lib);
    if (!strstr(out, needed) || strstr(out, absent)) fail_msg("%s needs, against %s and without %s:\n%s", exe, needed, absent, out);
}

/* A program written against the CUDA runtime, linked through the cudaload-cudart module (the
 * shared stub) instead of -lcudart: no CUDA DT_NEEDED, and the toolkit's runtime at run time. */
static void test_stub_through_pkg_config(void **state) {
    (void)state;
    const char *out;
    char exe[PATH_MAX + 32];
    snprintf(exe, sizeof exe, "%s/stub-rt", prefix);
    assert_int_equal(th_sh(&out, "PKG_CONFIG_PATH='%s/lib/pkgconfig' pkg-config --libs cudaload-cudart", prefix), 0);
    assert_non_null(strstr(out, "-lcudaload-cudart"));
    assert_non_null(strstr(out, "-lcudaload"));
    build_through_module(exe, "cudart", "#include <cuda_runtime_api.h>\n"
                                        "int main(void){int v=0;return cudaRuntimeGetVersion(&v)==0&&v==13000?0:1;}\n",
                         "libcudart");
    int st = th_sh(&out, "LD_LIBRARY_PATH='%s/lib' %s '%s' 2>&1", prefix, run_env, exe);
    if (st != 0) fail_msg("the stub-linked program failed (%d):\n%s", st, out);
    unlink(exe);
}

/* The shared stubs of the libraries that version none of their exports (NCCL, NVML, cuFile,
 * cuSPARSELt; docs/stubs.md): installed as two files, libcudaload-<lib>.so (to link: its exports
 * @@CUDALOAD_STUB_0) and libcudaload-<lib>.so.0 (to run: @CUDALOAD_STUB_0, hidden), neither a
 * link; cudaload-nccl in pkg-config is the shared stub, and a program linked through it runs with
 * .so.0: nothing findable, NCCL's own error from the stub; the toolkit's NCCL answers its version. */
static void test_unversioned_stubs_installed(void **state) {
    (void)state;
    const char *out;
    char a[PATH_MAX + 64];
    snprintf(a, sizeof a, "%s/lib/libcudaload-nccl.a", prefix);
    if (access(a, R_OK) != 0) TH_SKIP("no NCCL stub installed: the wheels' headers could not be fetched (tools/wheel_files.py headers)");
    static const char *const ids[] = {"nccl", "nvml", "cufile", "cusparselt"};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        int st = th_sh(&out, "cd '%s/lib' && test -f libcudaload-%s.so && test ! -L libcudaload-%s.so && test -f libcudaload-%s.so.0 && "
                          "test ! -L libcudaload-%s.so.0 && "
                          "echo link=$(readelf --dyn-syms -W libcudaload-%s.so | grep -c '@@CUDALOAD_STUB_0$') "
                          "run=$(readelf --dyn-syms -W libcudaload-%s.so.0 | grep -c '[^@]@CUDALOAD_STUB_0$') "
                          "run_default=$(readelf --dyn-syms -W libcudaload-%s.so.0 | grep -c '@@CUDALOAD_STUB_0$')",
                       prefix, ids[i], ids[i], ids[i], ids[i], ids[i], ids[i], ids[i]);
        if (st != 0) fail_msg("%s: libcudaload-%s.so and .so.0 are not two files", prefix, ids[i]);
        int link = -1, run = -1, run_default = -1;
        if (sscanf(out, "link=%d run=%d run_default=%d", &link, &run, &run_default) != 3 || link < 10 || run != link || run_default != 0)
            fail_msg("%s: %s", ids[i], out);
    }
    char exe[PATH_MAX + 32];
    snprintf(exe, sizeof exe, "%s/stub-nccl", prefix);
    assert_int_equal(th_sh(&out, "PKG_CONFIG_PATH='%s/lib/pkgconfig' pkg-config --libs cudaload-nccl", prefix), 0);
    assert_non_null(strstr(out, "-lcudaload-nccl "));
    assert_null(strstr(out, ".a"));
    build_through_module(exe, "nccl", "#include <stdio.h>\nint ncclGetVersion(int *);\n"
                                      "int main(void){int v=0;int st=ncclGetVersion(&v);printf(\"st=%d v=%d\\n\",st,v);return 0;}\n",
                         "libnccl");
    assert_int_equal(th_sh(&out, "LD_LIBRARY_PATH='%s/lib' CUDALOAD_SOURCES=override '%s'", prefix, exe), 0);
    assert_string_equal(out, "st=2 v=0\n"); /* ncclSystemError, from the stub */
    char nccl[PATH_MAX];
    snprintf(nccl, sizeof nccl, "%s/lib64/libnccl.so.2", th_cuda_home());
    if (access(nccl, R_OK) == 0) {
        assert_int_equal(th_sh(&out, "LD_LIBRARY_PATH='%s/lib' %s '%s'", prefix, run_env, exe), 0);
        assert_non_null(strstr(out, "st=0 v=2"));
    }
    unlink(exe);
}

/* examples/c/vecadd.cu, a plain CUDA program (kernel, runtime, cuBLAS), built unchanged against
 * the installed stubs by its Makefile: no CUDA DT_NEEDED; the toolkit's runtime at the first call,
 * and without a GPU the runtime's own error through the stub (exit 1); nothing findable: 303. */
static void test_cuda_program_on_stubs(void **state) {
    (void)state;
    const char *out;
    char nvcc[PATH_MAX];
    snprintf(nvcc, sizeof nvcc, "%s/bin/nvcc", th_cuda_home());
    if (access(nvcc, X_OK) != 0) TH_SKIP("no nvcc at %s", nvcc);
    int st = th_sh(&out, "cd '%s/examples/c' && rm -f vecadd && PKG_CONFIG_PATH='%s/lib/pkgconfig' make -s vecadd NVCC=%s 2>&1", top,
                prefix, nvcc);
    if (st != 0) fail_msg("building examples/c/vecadd failed:\n%s", out);
    assert_int_equal(th_sh(&out, "readelf -d '%s/examples/c/vecadd' | grep NEEDED", top), 0);
    if (strstr(out, "libcud") || strstr(out, "libcublas")) fail_msg("CUDA in DT_NEEDED:\n%s", out);
    st = th_sh(&out, "%s '%s/examples/c/vecadd' 2>&1", run_env, top);
    assert_non_null(strstr(out, "CUDA runtime 13.0"));
    if (access("/dev/nvidiactl", F_OK) != 0) {
        assert_int_equal(st, 1);
        assert_non_null(strstr(out, "(35)")); /* cudaErrorInsufficientDriver, from the real runtime */
    } else {
        assert_int_equal(st, 0);
    }
    st = th_sh(&out, "CUDALOAD_SOURCES=override '%s/examples/c/vecadd' 2>&1", top);
    assert_int_equal(st, 1);
    assert_non_null(strstr(out, "(303)")); /* cudaErrorSharedObjectInitFailed: no runtime anywhere */
    th_sh(&out, "rm -f '%s/examples/c/vecadd'", top);
}

/* tests/cmake: a CMake project with find_package(cudaload CONFIG) and the imported targets
 * (shared, static, a stub), against the install and against a copy of it moved elsewhere (the
 * package is relocatable). */
static int cmake_build(const char **out, const char *pfx, const char *bdir) {
    return th_sh(out, "rm -rf '%s' && cmake -S '%s/tests/cmake' -B '%s' -DCMAKE_PREFIX_PATH='%s' >/dev/null 2>&1 && "
                   "cmake --build '%s' 2>&1", bdir, top, bdir, pfx, bdir);
}

static void test_cmake_package(void **state) {
    (void)state;
    const char *out;
    if (th_sh(&out, "command -v cmake") != 0) TH_SKIP("cmake is not installed (apt-get install cmake)");
    char bdir[PATH_MAX + 32], moved[PATH_MAX + 32];
    snprintf(bdir, sizeof bdir, "%s/cmake-build", build);
    snprintf(moved, sizeof moved, "%s/install-moved", build);
    if (cmake_build(&out, prefix, bdir) != 0) fail_msg("the CMake consumer did not build:\n%s", out);
    assert_int_equal(th_sh(&out, "readelf -d '%s/use_shared' | grep NEEDED", bdir), 0);
    assert_non_null(strstr(out, "[libcudaload.so.0]"));
    assert_int_equal(th_sh(&out, "readelf -d '%s/use_static' '%s/use_stub' | grep NEEDED", bdir, bdir), 0);
    if (strstr(out, "libcudaload") || strstr(out, "libcud") || strstr(out, "libcublas")) fail_msg("DT_NEEDED:\n%s", out);
    assert_int_equal(th_sh(&out, "LD_LIBRARY_PATH='%s/lib' %s '%s/use_shared'", prefix, run_env, bdir), 0);
    assert_non_null(strstr(out, "version=" CUDALOAD_VERSION_STRING "\n"));
    assert_non_null(strstr(out, "cudart_status=0\ncudart_version=13000\n"));
    assert_int_equal(th_sh(&out, "%s '%s/use_stub'", run_env, bdir), 0);
    assert_non_null(strstr(out, "runtime_err=0\nruntime_version=13000\n"));
    /* NCCL's shared stub (where the build made it): linked through libcudaload-nccl.so, the
     * program needs .so.0 and reaches the stub (nothing findable: NCCL's ncclSystemError) */
    char nccl_a[PATH_MAX + 64];
    snprintf(nccl_a, sizeof nccl_a, "%s/lib/libcudaload-nccl.a", prefix);
    if (access(nccl_a, R_OK) == 0) {
        assert_int_equal(th_sh(&out, "readelf -d '%s/use_nccl_shared' | grep NEEDED", bdir), 0);
        assert_non_null(strstr(out, "[libcudaload-nccl.so.0]"));
        assert_int_equal(th_sh(&out, "LD_LIBRARY_PATH='%s/lib' CUDALOAD_SOURCES=override '%s/use_nccl_shared'", prefix, bdir), 0);
        assert_non_null(strstr(out, "nccl_get_version=2\n"));
    }
    /* relocatable: the same install, moved, found and linked from its new place */
    assert_int_equal(th_sh(&out, "rm -rf '%s' && cp -a '%s' '%s'", moved, prefix, moved), 0);
    if (cmake_build(&out, moved, bdir) != 0) fail_msg("the CMake consumer did not build against the moved install:\n%s", out);
    assert_int_equal(th_sh(&out, "cat '%s'/CMakeFiles/use_static.dir/link.txt", bdir), 0);
    char want[PATH_MAX + 64];
    snprintf(want, sizeof want, "%s/lib/libcudaload.a", moved);
    assert_non_null(strstr(out, want));
    assert_int_equal(th_sh(&out, "%s '%s/use_static'", run_env, bdir), 0);
    assert_non_null(strstr(out, "cudart_status=0\n"));
    th_sh(&out, "rm -rf '%s' '%s'", moved, bdir);
}

/* README's "Use from C" program, as printed there: built through pkg-config with an rpath to
 * the prefix, run without a GPU it finds the toolkit's runtime and cuFFT and exits 0. */
static void test_readme_snippet(void **state) {
    (void)state;
    const char *out;
    char src[PATH_MAX + 32], exe[PATH_MAX + 32];
    snprintf(src, sizeof src, "%s/readme-app.c", build);
    snprintf(exe, sizeof exe, "%s/readme-app", build);
    assert_int_equal(th_sh(&out, "awk '/^## Use from C/{f=1} f&&/^```c/{c=1;next} c&&/^```/{exit} c' '%s/README.md' > '%s' && "
                              "grep -c main '%s'", top, src, src), 0);
    int st = th_sh(&out, "cc -std=c11 -Wall -Wextra -Werror '%s' $(PKG_CONFIG_PATH='%s/lib/pkgconfig' pkg-config --cflags --libs "
                      "cudaload) -Wl,-rpath,'%s/lib' -o '%s' 2>&1", src, prefix, prefix, exe);
    if (st != 0) fail_msg("README's C program does not build:\n%s", out);
    st = th_sh(&out, "%s '%s' 2>&1", run_env, exe);
    if (st != 0) fail_msg("README's C program exited %d:\n%s", st, out);
    assert_non_null(strstr(out, "CUDA runtime 13.0, init: CUDALOAD_OK\n"));
    assert_non_null(strstr(out, "cuFFT 12"));
    th_sh(&out, "rm -f '%s' '%s'", src, exe);
}

static void test_example_through_pkg_config(void **state) {
    (void)state;
    const char *out;
    const char *root = th_fixture("toolkit-cu13-wheel");
    int st = th_sh(&out, "cd '%s/examples/c' && make -s clean && PKG_CONFIG_PATH='%s/lib/pkgconfig' make -s hello hello-static 2>&1", top, prefix);
    if (st != 0) fail_msg("building examples/c failed:\n%s", out);
    /* shared: needs libcudaload.so.0, and nothing of CUDA */
    assert_int_equal(th_sh(&out, "readelf -d '%s/examples/c/hello' | grep NEEDED", top), 0);
    assert_non_null(strstr(out, "libcudaload.so.0"));
    assert_null(strstr(out, "libcudart"));
    st = th_sh(&out, "LD_LIBRARY_PATH='%s/lib' CUDALOAD_SOURCES=caller '%s/examples/c/hello' '%s' 2>&1", prefix, top, root);
    if (st != 0) fail_msg("hello failed:\n%s", out);
    assert_non_null(strstr(out, "cudart 13.0 from"));
    assert_non_null(strstr(out, "toolkit-cu13-wheel/nvidia/cu13/lib/libcudart.so.13 [caller]"));
    assert_non_null(strstr(out, "libcublas.so.13 [caller]"));
    /* embedded: no libcudaload.so needed at run time */
    assert_int_equal(th_sh(&out, "readelf -d '%s/examples/c/hello-static' | grep NEEDED", top), 0);
    assert_null(strstr(out, "libcudaload"));
    st = th_sh(&out, "CUDALOAD_SOURCES=caller '%s/examples/c/hello-static' '%s' 2>&1", top, root);
    if (st != 0) fail_msg("hello-static failed:\n%s", out);
    assert_non_null(strstr(out, "[caller]"));
    th_sh(NULL, "make -s -C '%s/examples/c' clean", top);
}

static void test_uninstall(void **state) {
    (void)state;
    const char *out;
    assert_int_equal(th_sh(&out, "make -s -C '%s' B='%s' uninstall PREFIX='%s' 2>&1 && find '%s' -type f -o -type l", top, build, prefix, prefix), 0);
    assert_string_equal(out, "");
}

/* The library and the probe built in a build dir of their own (no kernels: nvcc is not the
 * point), with extra make variables; asserts the build succeeded (-Werror) and that the
 * result has no CUDA DT_NEEDED. */
static void build_variant(const char *name, const char *vars) {
    const char *out;
    char b[PATH_MAX + 32];
    snprintf(b, sizeof b, "%s/variant-%s", build, name);
    int st = th_sh(&out, "rm -rf '%s' && make -s -C '%s' B='%s' NVCC= %s '%s/libcudaload.so." CUDALOAD_VERSION_STRING "' '%s/cudaload-probe' 2>&1", b, top,
                b, vars, b, b);
    if (st != 0) fail_msg("make %s failed:\n%s", vars, out);
    assert_int_equal(th_sh(&out, "readelf -d '%s/libcudaload.so." CUDALOAD_VERSION_STRING "' | grep NEEDED", b), 0);
    if (strstr(out, "libcud") || strstr(out, "libcublas")) fail_msg("CUDA in DT_NEEDED:\n%s", out);
    th_sh(NULL, "rm -rf '%s'", b);
}

/* The headers may come from the nvidia wheels instead of a toolkit (CUDA_INC): the venv of the
 * fixtures holds nvidia-cuda-runtime and nvidia-cublas 13, whose nvidia/cu13/include has
 * cuda.h, cuda_runtime_api.h, cublas_v2.h and cublasLt.h. */
static void test_build_with_wheel_headers(void **state) {
    (void)state;
    char inc[PATH_MAX + 64], vars[PATH_MAX + 96], tk_inc[PATH_MAX + 16], real[PATH_MAX];
    snprintf(inc, sizeof inc, "%s/nvidia/cu13/include", th_fixture_env("VENV_CU13_SITE"));
    /* a toolkit made of pip's wheels: its include is a link to their nvidia/cu13/include, every
     * header libcudaload includes (the fixtures' venv lacks cufft.h, crt/, nv/, ...: an installed
     * toolkit's /usr/local/include, where a machine has one, fills those in) */
    snprintf(tk_inc, sizeof tk_inc, "%s/include", th_cuda_home());
    if (realpath(tk_inc, real) && strstr(real, "/nvidia/cu13/include")) snprintf(inc, sizeof inc, "%s", real);
    else if (strcmp(th_fixture_env("CU13_CUBLAS"), "1") != 0) {
        print_message("skipped: the fixtures' CUDA 13 venv has no cuBLAS wheel (FIXTURES_CU13_CUBLAS=0), so no cublas_v2.h\n");
        skip();
    }
    snprintf(vars, sizeof vars, "CUDA_INC='%s' CUDA_HOME=/nonexistent", inc);
    build_variant("wheel-headers", vars);
}

/* The issue asks for gcc or clang: the same -Werror build with clang, when it is installed
 * (.ci/run installs it before make check). */
static void test_build_with_clang(void **state) {
    (void)state;
    const char *out;
    if (th_sh(&out, "command -v clang") != 0) {
        print_message("skipped: clang is not installed (tests/deps.sh fuzz installs it)\n");
        skip();
    }
    build_variant("clang", "CC=clang");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_build_with_wheel_headers),
        cmocka_unit_test(test_build_with_clang),
        cmocka_unit_test(test_installed_files),
        cmocka_unit_test(test_exports_and_no_cuda_needed),
        cmocka_unit_test(test_stub_through_pkg_config),
        cmocka_unit_test(test_unversioned_stubs_installed),
        cmocka_unit_test(test_cuda_program_on_stubs),
        cmocka_unit_test(test_cmake_package),
        cmocka_unit_test(test_readme_snippet),
        cmocka_unit_test(test_example_through_pkg_config),
        cmocka_unit_test(test_uninstall),
    };
    return cmocka_run_group_tests_name("install", tests, setup, NULL);
}
