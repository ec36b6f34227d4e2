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

/* Runs a shell command; returns its exit status and its output (static buffer). */
static int sh(const char **out, const char *fmt, ...) {
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    static char buf[65536];
    FILE *p = popen(cmd, "r");
    size_t n = p ? fread(buf, 1, sizeof buf - 1, p) : 0;
    buf[n] = 0;
    int st = p ? pclose(p) : -1;
    if (out) *out = buf;
    return st == -1 ? -1 : WEXITSTATUS(st);
}

static int setup(void **state) {
    (void)state;
    const char *b = getenv("CUDALOAD_TEST_BUILD");
    if (!b) return -1;
    snprintf(build, sizeof build, "%s", b);
    /* The source tree: given by the Makefile; B's parent only for a run by hand with B=build. */
    const char *t = getenv("CUDALOAD_TEST_TOP");
    if (t && *t)
        snprintf(top, sizeof top, "%s", t);
    else
        snprintf(top, sizeof top, "%s/..", b);
    snprintf(prefix, sizeof prefix, "%s/install-test", b);
    const char *out;
    /* B= the build under test, so a nested build directory (make B=build/x check) installs itself. */
    if (sh(&out, "rm -rf '%s' && make -s -C '%s' B='%s' install PREFIX='%s' 2>&1", prefix, top, build, prefix) != 0) {
        fprintf(stderr, "make install failed:\n%s\n", out);
        return -1;
    }
    return 0;
}

static void test_installed_files(void **state) {
    (void)state;
    static const char *const files[] = {"lib/libcudaload.so.0.1.0", "lib/libcudaload.so.0", "lib/libcudaload.so",
                                        "lib/libcudaload.a", "lib/pkgconfig/cudaload.pc", "include/cudaload.h",
                                        "include/cudaload_tables.h", "bin/cudaload-probe"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char p[PATH_MAX + 64];
        snprintf(p, sizeof p, "%s/%s", prefix, files[i]);
        if (access(p, F_OK) != 0) fail_msg("make install did not install %s", p);
    }
    const char *out;
    assert_int_equal(sh(&out, "PKG_CONFIG_PATH='%s/lib/pkgconfig' pkg-config --modversion cudaload", prefix), 0);
    assert_string_equal(out, "0.1.0\n");
    /* The Cflags carry the CUDA headers the build used: cudaload_tables.h compiles with them alone. */
    assert_int_equal(sh(&out, "test -f \"$(PKG_CONFIG_PATH='%s/lib/pkgconfig' pkg-config --variable=cudaincludedir cudaload)/cuda.h\"", prefix), 0);
    assert_int_equal(sh(&out, "printf '#include <cudaload_tables.h>\\nint main(void){return cudaload_cudart()!=0;}\\n' | "
                              "cc -std=c11 -x c -fsyntax-only $(PKG_CONFIG_PATH='%s/lib/pkgconfig' pkg-config --cflags cudaload) - 2>&1", prefix), 0);
}

static void test_exports_and_no_cuda_needed(void **state) {
    (void)state;
    const char *out;
    assert_int_equal(sh(&out, "nm -D --defined-only '%s/lib/libcudaload.so' | awk '{print $3}' | grep -v '^cudaload_'", prefix), 1);
    assert_int_equal(sh(&out, "readelf -d '%s/lib/libcudaload.so' | grep NEEDED", prefix), 0);
    if (strstr(out, "libcud") || strstr(out, "libcublas") || strstr(out, "libnvrtc")) fail_msg("CUDA in DT_NEEDED:\n%s", out);
    assert_non_null(strstr(out, "libc.so.6"));
    assert_int_equal(sh(&out, "readelf -d '%s/lib/libcudaload.so' | grep SONAME", prefix), 0);
    assert_non_null(strstr(out, "[libcudaload.so.0]"));
    /* the archive's objects: every global definition but the API is hidden */
    assert_int_equal(sh(&out, "readelf -sW '%s/lib/libcudaload.a' | awk '$5 == \"GLOBAL\" && $7 != \"UND\" && $6 != \"HIDDEN\" "
                              "{print $8}' | grep -v '^cudaload_'", prefix), 1);
    assert_string_equal(out, "");
}

static void test_example_through_pkg_config(void **state) {
    (void)state;
    const char *out;
    const char *root = th_fixture("toolkit-cu13-wheel");
    int st = sh(&out, "cd '%s/examples/c' && make -s clean && PKG_CONFIG_PATH='%s/lib/pkgconfig' make -s hello hello-static 2>&1", top, prefix);
    if (st != 0) fail_msg("building examples/c failed:\n%s", out);
    /* shared: needs libcudaload.so.0, and nothing of CUDA */
    assert_int_equal(sh(&out, "readelf -d '%s/examples/c/hello' | grep NEEDED", top), 0);
    assert_non_null(strstr(out, "libcudaload.so.0"));
    assert_null(strstr(out, "libcudart"));
    st = sh(&out, "LD_LIBRARY_PATH='%s/lib' CUDALOAD_SOURCES=caller '%s/examples/c/hello' '%s' 2>&1", prefix, top, root);
    if (st != 0) fail_msg("hello failed:\n%s", out);
    assert_non_null(strstr(out, "cudart 13.0 from"));
    assert_non_null(strstr(out, "toolkit-cu13-wheel/nvidia/cu13/lib/libcudart.so.13 [caller]"));
    assert_non_null(strstr(out, "libcublas.so.13 [caller]"));
    /* embedded: no libcudaload.so needed at run time */
    assert_int_equal(sh(&out, "readelf -d '%s/examples/c/hello-static' | grep NEEDED", top), 0);
    assert_null(strstr(out, "libcudaload"));
    st = sh(&out, "CUDALOAD_SOURCES=caller '%s/examples/c/hello-static' '%s' 2>&1", top, root);
    if (st != 0) fail_msg("hello-static failed:\n%s", out);
    assert_non_null(strstr(out, "[caller]"));
    sh(NULL, "make -s -C '%s/examples/c' clean", top);
}

static void test_uninstall(void **state) {
    (void)state;
    const char *out;
    assert_int_equal(sh(&out, "make -s -C '%s' B='%s' uninstall PREFIX='%s' 2>&1 && find '%s' -type f -o -type l", top, build, prefix, prefix), 0);
    assert_string_equal(out, "");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_installed_files),
        cmocka_unit_test(test_exports_and_no_cuda_needed),
        cmocka_unit_test(test_example_through_pkg_config),
        cmocka_unit_test(test_uninstall),
    };
    return cmocka_run_group_tests_name("install", tests, setup, NULL);
}
