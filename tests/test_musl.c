/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_musl.c -- the stubs of the libraries that version none of their exports (NCCL, NVML,
 * cuFile, cuSPARSELt) in a build for musl, the C library of Alpine: `make CC=musl-gcc`, made
 * here afresh into <build>/tests/musl (libcudaload.so and those four stubs), and a musl program
 * linked with -lcudaload-nccl -lcudaload-nvml -lcudaload-cusparselt -lcudaload-cufile as a user
 * links them (tests/stubs/stub_unversioned.c, the program test_stubs runs on glibc).
 *
 * Their shared stubs' run-time files (libcudaload-<lib>.so.0) hide their exports' symbol version
 * (tools/hide_versions.py), which only glibc's dynamic loader binds: musl's ignores versions but
 * skips every symbol whose version is hidden, so a program linked to them stops before main
 * ("Error relocating ...: ncclGetVersion: symbol not found", exit 127; the control below makes
 * that build). A build whose compiler does not target glibc makes their archives only, says why
 * in one line, and refuses their .so files; the same link then takes the archives, and the
 * program runs (docs/stubs.md, "glibc only: musl gets their archives").
 *
 * Needs musl-gcc (Debian's musl-tools; .ci/run installs it): skipped, saying so, without it.
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

static char build[PATH_MAX];
static const char *top; /* the source tree the musl build is made from */

static int setup(void **state) {
    (void)state;
    const char *b = th_require_build(0);
    if (!b) return -1;
    snprintf(build, sizeof build, "%s", b);
    top = getenv("CUDALOAD_TEST_TOP");
    /* the makes below are our own: under `make -j N check` they would otherwise see the parent's
     * jobserver without its descriptors */
    unsetenv("MAKEFLAGS");
    unsetenv("MFLAGS");
    unsetenv("MAKELEVEL");
    /* made afresh each run: a .so left by an earlier build would be what -lcudaload-<lib> takes */
    return th_sh(NULL, "rm -rf '%s/tests/musl' '%s/tests/musl-glibc-rules'", build, build) == 0 ? 0 : -1;
}

/* The value of key in a program's key=value output, or INT_MIN. */
static long val(const char *out, const char *key) {
    size_t k = strlen(key);
    for (const char *p = out; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (strncmp(p, key, k) == 0 && p[k] == '=') return strtol(p + k + 1, NULL, 10);
    return INT_MIN;
}

/* Skips the running test when the musl build cannot be made here, saying why. */
#define SKIP_WITHOUT_MUSL()                                                                                                  \
    do {                                                                                                                     \
        if (th_sh(NULL, "command -v musl-gcc >/dev/null") != 0)                                                              \
            TH_SKIP("musl-gcc not installed (apt-get install musl-tools): the build for musl is not made");                 \
        if (!top) TH_SKIP("CUDALOAD_TEST_TOP unset (the build for musl is made from the source tree)");                      \
        char nccl_[PATH_MAX + 64];                                                                                           \
        snprintf(nccl_, sizeof nccl_, "%s/stubs/libcudaload-nccl.a", build);                                                 \
        if (access(nccl_, R_OK) != 0)                                                                                        \
            TH_SKIP("no NCCL stub in %s: the wheels' headers could not be fetched (tools/wheel_files.py headers)", build); \
    } while (0)

/* `make CC=musl-gcc B=<build>/tests/<dir> NVCC= <extra> goals` from the source tree (no kernels: nvcc
 * output is the same for every host, and none is needed here); its status, its output in *out */
static int musl_make(const char **out, const char *dir, const char *extra, const char *goals) {
    return th_sh(out, "make -C '%s' -j2 CC=musl-gcc B='%s/tests/%s' NVCC= %s %s 2>&1", top, build, dir, extra, goals);
}

static const char *const ids[] = {"nccl", "nvml", "cusparselt", "cufile"};

/* The build for musl: the four stubs' archives, no .so of theirs, and the reason said once; a
 * .so asked for by name is refused with it. */
static void test_musl_build_makes_archives_only(void **state) {
    (void)state;
    SKIP_WITHOUT_MUSL();
    const char *out;
    char goal[PATH_MAX + 64];
    snprintf(goal, sizeof goal, "'%s/tests/musl/tests/stub_unversioned'", build);
    int st = musl_make(&out, "musl", "", goal);
    if (st != 0) fail_msg("make CC=musl-gcc failed (%d):\n%s", st, out);
    const char *why = "cudaload: musl-gcc does not target glibc: cufile cusparselt nccl nvml get archives only, no shared stubs";
    if (!strstr(out, why)) fail_msg("make did not say why:\n%s", out);
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        assert_int_equal(th_sh(NULL, "test -f '%s/tests/musl/stubs/libcudaload-%s.a'", build, ids[i]), 0);
        if (th_sh(NULL, "test -e '%s/tests/musl/stubs/libcudaload-%s.so' || test -e '%s/tests/musl/stubs/libcudaload-%s.so.0'", build, ids[i], build,
                  ids[i]) == 0)
            fail_msg("a shared stub of %s was built for musl", ids[i]);
    }
    /* asked for by name: refused, with the reason */
    snprintf(goal, sizeof goal, "'%s/tests/musl/stubs/libcudaload-nccl.so.0'", build);
    st = musl_make(&out, "musl", "", goal);
    assert_int_not_equal(st, 0);
    if (!strstr(out, "libcudaload-nccl.so.0: not built: musl-gcc does not target glibc"))
        fail_msg("the refusal does not say why:\n%s", out);
    assert_int_equal(th_sh(NULL, "test -e '%s/tests/musl/stubs/libcudaload-nccl.so.0'", build), 1);
}

/* The musl program linked with -lcudaload-<lib> (the archives) and libcudaload.so.0 of the musl
 * build: musl's dynamic loader runs it; nothing to be found, each library's own code. */
static void test_musl_program_runs_with_the_archives(void **state) {
    (void)state;
    SKIP_WITHOUT_MUSL();
    const char *out;
    char prog[PATH_MAX + 64];
    snprintf(prog, sizeof prog, "%s/tests/musl/tests/stub_unversioned", build);
    int st = musl_make(&out, "musl", "", prog);
    if (st != 0) fail_msg("make CC=musl-gcc failed (%d):\n%s", st, out);
    assert_int_equal(th_sh(&out, "readelf -l '%s' | grep 'program interpreter'", prog), 0);
    assert_non_null(strstr(out, "ld-musl-"));
    assert_int_equal(th_sh(&out, "readelf -d '%s' | grep NEEDED", prog), 0);
    assert_non_null(strstr(out, "[libcudaload.so.0]"));
    assert_null(strstr(out, "libcudaload-"));
    st = th_sh(&out, "CUDALOAD_SOURCES=override CUDALOAD_QUIET=1 '%s' 2>&1", prog);
    if (st != 0) fail_msg("the musl program exited %d:\n%s", st, out);
    assert_int_equal(val(out, "nccl_get_version"), 2);   /* ncclSystemError */
    assert_int_equal(val(out, "nvml_init"), 12);         /* NVML_ERROR_LIBRARY_NOT_FOUND */
    assert_int_equal(val(out, "nvml_count"), 12);
    assert_int_equal(val(out, "cusparselt_init"), 1);    /* CUSPARSE_STATUS_NOT_INITIALIZED */
    assert_int_equal(val(out, "cufile_open_err"), 5030); /* CU_FILE_INTERNAL_ERROR */
    assert_int_equal(val(out, "done"), 1);
}

/* The control: the same build for musl made with glibc's rules (CC_LIBC=glibc on make's
 * command line: the shared stubs, .so.0 with the version hidden), into
 * <build>/tests/musl-glibc-rules. The link takes the .so files, and musl's loader finds none of
 * the hidden exports: the program stops before main, as it did before the build for musl said no. */
static void test_musl_control_hidden_version_stops_the_program(void **state) {
    (void)state;
    SKIP_WITHOUT_MUSL();
    const char *out;
    char prog[PATH_MAX + 64];
    snprintf(prog, sizeof prog, "%s/tests/musl-glibc-rules/tests/stub_unversioned", build);
    int st = musl_make(&out, "musl-glibc-rules", "CC_LIBC=glibc", prog);
    if (st != 0) fail_msg("make CC=musl-gcc CC_LIBC=glibc failed (%d):\n%s", st, out);
    assert_int_equal(th_sh(&out, "readelf -d '%s' | grep NEEDED", prog), 0);
    assert_non_null(strstr(out, "[libcudaload-nccl.so.0]"));
    st = th_sh(&out, "CUDALOAD_SOURCES=override CUDALOAD_QUIET=1 '%s' 2>&1", prog);
    if (st != 127 || !strstr(out, "symbol not found") || strstr(out, "done="))
        fail_msg("the control: the program linked to the hidden-version stubs exited %d (127 and \"symbol not found\" expected):\n%s", st,
                 out);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_musl_build_makes_archives_only),
        cmocka_unit_test(test_musl_program_runs_with_the_archives),
        cmocka_unit_test(test_musl_control_hidden_version_stops_the_program),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
