/*
 * test_probe.c -- cudaload-probe as a user runs it: a separate process with a crafted
 * environment, over real CUDA files (wheel trees, the real cu12 wheels, conda, CUDA_HOME,
 * broken candidates) and the fake driver. The JSON is parsed by a real parser (Python's
 * json module); the exit code and the text report's key lines are asserted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

static char probe[PATH_MAX], fake_driver[PATH_MAX + 32];

static int setup(void **state) {
    (void)state;
    const char *b = getenv("CUDALOAD_TEST_BUILD");
    if (!b) return -1;
    snprintf(probe, sizeof probe, "%s/cudaload-probe", b);
    snprintf(fake_driver, sizeof fake_driver, "CUDALOAD_DRIVER_PATH=%s/fake/libcuda.so.1", b);
    return 0;
}

typedef struct run_out {
    int code;
    char path[64]; /* stdout saved here */
    char *text;
} run_out;

/* Runs the probe with argv (NULL-terminated) in a clean environment plus env. */
static void run_probe(run_out *o, const char *const *env, const char *const *args) {
    snprintf(o->path, sizeof o->path, "/tmp/cudaload-probe-out-XXXXXX");
    int fd = mkstemp(o->path);
    assert_true(fd >= 0);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd, 1);
        clearenv();
        setenv("PATH", "/usr/bin:/bin", 1);
        for (size_t i = 0; env && env[i]; i++) putenv((char *)env[i]);
        const char *argv[32] = {probe};
        size_t n = 1;
        for (size_t i = 0; args && args[i] && n < 31; i++) argv[n++] = args[i];
        execv(probe, (char *const *)argv);
        _exit(127);
    }
    int st;
    waitpid(pid, &st, 0);
    close(fd);
    if (!WIFEXITED(st)) fail_msg("probe died (status %d)", st);
    o->code = WEXITSTATUS(st);
    FILE *f = fopen(o->path, "r");
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    rewind(f);
    o->text = calloc(1, (size_t)len + 1);
    if (fread(o->text, 1, (size_t)len, f) != (size_t)len) fail_msg("short read");
    fclose(f);
}

/* Runs the probe and checks its exit code, showing the report when it differs. */
static void run_expect(run_out *o, const char *const *env, const char *const *args, int code) {
    run_probe(o, env, args);
    if (o->code != code) fail_msg("exit %d, want %d:\n%s", o->code, code, o->text);
}

static void done(run_out *o) {
    unlink(o->path);
    free(o->text);
}

/* Evaluates a Python expression over the parsed JSON `d`; the printed result, or fails
 * the test when the output is not valid JSON. */
static char *jq(const run_out *o, const char *expr) {
    char cmd[PATH_MAX * 2];
    snprintf(cmd, sizeof cmd,
             "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); r=(%s); print(r if isinstance(r,str) else json.dumps(r))' %s",
             expr, o->path);
    FILE *p = popen(cmd, "r");
    static char buf[8192];
    buf[0] = 0;
    size_t n = fread(buf, 1, sizeof buf - 1, p);
    buf[n] = 0;
    int st = pclose(p);
    if (st != 0) fail_msg("python3 could not evaluate %s on the probe's JSON:\n%s", expr, o->text);
    buf[strcspn(buf, "\n")] = 0;
    return buf;
}

#define ASSERT_JQ(o, expr, want)                                                                \
    do {                                                                                        \
        const char *got_ = jq(o, expr);                                                         \
        if (strcmp(got_, want) != 0) fail_msg("%s = '%s', want '%s'\n%s", expr, got_, want, (o)->text); \
    } while (0)

#define ASSERT_TEXT(o, words)                                                                   \
    do {                                                                                        \
        if (!strstr((o)->text, words)) fail_msg("report lacks '%s':\n%s", words, (o)->text);     \
    } while (0)

static char *arg_root(const char *rel) {
    static char buf[8][PATH_MAX];
    static int i;
    char *b = buf[i++ % 8];
    snprintf(b, PATH_MAX, "%s", th_fixture(rel));
    return b;
}

static void test_cu13_tree_json(void **state) {
    (void)state;
    const char *env[] = {fake_driver, "FAKE_CUDA_DEVICES=0", "CUDALOAD_SOURCES=caller", NULL};
    const char *args[] = {"--json", "--root", arg_root("toolkit-cu13-wheel"), NULL};
    run_out o;
    run_probe(&o, env, args);
    assert_int_equal(o.code, 2); /* libraries found, no device */
    ASSERT_JQ(&o, "d[\"schema_version\"]", "1");
    ASSERT_JQ(&o, "d[\"libraries\"][\"cudart\"][\"status\"]", "loaded");
    ASSERT_JQ(&o, "d[\"libraries\"][\"cudart\"][\"source\"]", "caller");
    ASSERT_JQ(&o, "d[\"libraries\"][\"cublas\"][\"soname\"]", "libcublas.so.13");
    ASSERT_JQ(&o, "d[\"libraries\"][\"cudart\"][\"version\"]", "13000");
    ASSERT_JQ(&o, "d[\"driver\"][\"cuda_version\"]", "13000");
    ASSERT_JQ(&o, "d[\"devices\"]", "[]");
    ASSERT_JQ(&o, "d[\"devices_status\"]", "CUDALOAD_ERROR_NO_DEVICE");
    ASSERT_JQ(&o, "d[\"selftest\"]", "null");
    ASSERT_JQ(&o, "d[\"roots\"][0][\"exists\"]", "true");
    ASSERT_JQ(&o, "d[\"libraries\"][\"cudart\"][\"path\"].endswith(\"toolkit-cu13-wheel/nvidia/cu13/lib/libcudart.so.13\")", "true");
    ASSERT_JQ(&o, "all(isinstance(d[\"libraries\"][k][\"version\"], int) for k in (\"cuda\", \"cudart\", \"cublasLt\", \"cublas\"))", "true");
    assert_null(strstr(o.text, "\033[")); /* not a terminal: no colour */
    done(&o);
}

static void test_cu12_wheels(void **state) {
    (void)state;
    const char *env[] = {fake_driver, "FAKE_CUDA_DEVICES=0", "FAKE_CUDA_VERSION=12040", "CUDALOAD_SOURCES=caller", NULL};
    const char *args[] = {"--json", "--root", th_fixture_env("VENV_CU12_SITE"), NULL};
    run_out o;
    run_expect(&o, env, args, 2);
    ASSERT_JQ(&o, "d[\"libraries\"][\"cudart\"][\"path\"].endswith(\"nvidia/cuda_runtime/lib/libcudart.so.12\")", "true");
    ASSERT_JQ(&o, "d[\"libraries\"][\"cublas\"][\"path\"].endswith(\"nvidia/cublas/lib/libcublas.so.12\")", "true");
    ASSERT_JQ(&o, "d[\"libraries\"][\"cublas\"][\"major\"]", "12");
    /* nvidia-cublas-cu12 pulls in nvidia-cuda-nvrtc-cu12: the CUDA 12 layout of NVRTC */
    ASSERT_JQ(&o, "d[\"libraries\"][\"nvrtc\"][\"path\"].endswith(\"nvidia/cuda_nvrtc/lib/libnvrtc.so.12\")", "true");
    done(&o);
}

static void test_wheels_missing(void **state) {
    (void)state;
    char *empty = th_tmpdir();
    const char *env[] = {fake_driver, "CUDALOAD_SOURCES=caller", NULL};
    const char *args[] = {"--root", empty, NULL};
    run_out o;
    run_expect(&o, env, args, 1);
    ASSERT_TEXT(&o, "a required library is missing");
    ASSERT_TEXT(&o, "fix: pip install nvidia-cuda-runtime (CUDA 13) or nvidia-cuda-runtime-cu12 (CUDA 12)");
    done(&o);
    free(empty);
}

static void test_driver_too_old_for_cu12(void **state) {
    (void)state;
    const char *env[] = {fake_driver, "FAKE_CUDA_VERSION=11080", "CUDALOAD_SOURCES=caller", NULL};
    const char *args[] = {"--root", th_fixture_env("VENV_CU12_SITE"), NULL};
    run_out o;
    run_expect(&o, env, args, 1);
    ASSERT_TEXT(&o, "CUDA 12 runtime needs a CUDA 12 driver (branch >= 525); this driver supports CUDA 11.8");
    ASSERT_TEXT(&o, "upgrade the NVIDIA driver");
    done(&o);
}

static void test_corrupt_first_candidate(void **state) {
    (void)state;
    const char *env[] = {fake_driver, "FAKE_CUDA_DEVICES=0", "CUDALOAD_SOURCES=caller", NULL};
    const char *args[] = {"--json", "--root", arg_root("bad/truncated/lib"), "--root", arg_root("toolkit-cu13-wheel"), NULL};
    run_out o;
    run_expect(&o, env, args, 2);
    ASSERT_JQ(&o, "d[\"libraries\"][\"cudart\"][\"candidates\"][0][\"result\"]", "skipped");
    ASSERT_JQ(&o, "\"truncated ELF\" in d[\"libraries\"][\"cudart\"][\"candidates\"][0][\"reason\"]", "true");
    ASSERT_JQ(&o, "d[\"libraries\"][\"cudart\"][\"candidates\"][1][\"result\"]", "taken");
    done(&o);
}

static void test_already_loaded(void **state) {
    (void)state;
    if (getenv("CUDALOAD_TEST_SANITIZE")) {
        /* LD_PRELOAD of a library ahead of the ASan runtime makes ASan refuse to start */
        print_message("skipped: LD_PRELOAD cannot run under AddressSanitizer (covered by the plain build)\n");
        skip();
    }
    char preload[PATH_MAX + 16];
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s", th_fixture("conda/lib/libcudart.so.13"));
    const char *env[] = {fake_driver, "FAKE_CUDA_DEVICES=0", "CUDALOAD_SOURCES=caller", preload, NULL};
    const char *args[] = {"--json", "--root", arg_root("toolkit-cu13-wheel"), NULL};
    run_out o;
    run_probe(&o, env, args);
    ASSERT_JQ(&o, "d[\"libraries\"][\"cudart\"][\"source\"]", "loaded");
    ASSERT_JQ(&o, "d[\"libraries\"][\"cudart\"][\"already_loaded\"]", "true");
    ASSERT_JQ(&o, "d[\"libraries\"][\"cudart\"][\"path\"].endswith(\"conda/lib/libcudart.so.13\")", "true");
    done(&o);
}

static void test_conda_and_cuda_home(void **state) {
    (void)state;
    char conda[PATH_MAX + 16], home[PATH_MAX + 16];
    snprintf(conda, sizeof conda, "CONDA_PREFIX=%s", th_fixture("conda"));
    snprintf(home, sizeof home, "CUDA_HOME=%s", th_fixture("cudahome"));
    const char *env[] = {fake_driver, "FAKE_CUDA_DEVICES=0", conda, home, "CUDALOAD_SOURCES=conda,cuda_home", NULL};
    const char *args[] = {"--json", NULL};
    run_out o;
    run_probe(&o, env, args);
    ASSERT_JQ(&o, "d[\"libraries\"][\"cudart\"][\"source\"]", "conda");
    ASSERT_JQ(&o, "[r[\"source\"] for r in d[\"roots\"]][:4]", "[\"conda\", \"conda\", \"conda\", \"cuda_home\"]");
    ASSERT_JQ(&o, "d[\"environment\"][\"CONDA_PREFIX\"] is not None", "true");
    done(&o);
    const char *env2[] = {fake_driver, "FAKE_CUDA_DEVICES=0", conda, home, "CUDALOAD_SOURCES=cuda_home", NULL};
    run_probe(&o, env2, args);
    ASSERT_JQ(&o, "d[\"libraries\"][\"cudart\"][\"path\"].endswith(\"cudahome/lib64/libcudart.so.13\")", "true");
    done(&o);
}

static void test_ld_library_path_warning(void **state) {
    (void)state;
    char llp[PATH_MAX + 32];
    snprintf(llp, sizeof llp, "LD_LIBRARY_PATH=%s", th_fixture("conda/lib"));
    const char *env[] = {fake_driver, "FAKE_CUDA_DEVICES=0", "CUDALOAD_SOURCES=caller", llp, NULL};
    const char *args[] = {"--root", th_fixture_env("VENV_CU12_SITE"), NULL};
    run_out o;
    run_probe(&o, env, args);
    ASSERT_TEXT(&o, "LD_LIBRARY_PATH puts");
    ASSERT_TEXT(&o, "fix: unset LD_LIBRARY_PATH");
    done(&o);
}

static void test_find_only(void **state) {
    (void)state;
    const char *env[] = {fake_driver, "CUDALOAD_SOURCES=caller", NULL};
    const char *args[] = {"--json", "--find-only", "--root", arg_root("toolkit-cu13-wheel"), NULL};
    run_out o;
    run_expect(&o, env, args, 0);
    ASSERT_JQ(&o, "d[\"libraries\"][\"cudart\"][\"status\"]", "found");
    ASSERT_JQ(&o, "d[\"libraries\"][\"cuda\"][\"status\"]", "found");
    ASSERT_JQ(&o, "d[\"libraries\"][\"cudart\"][\"version\"]", "null");
    ASSERT_JQ(&o, "d[\"devices_status\"]", "CUDALOAD_ERROR_NOT_ATTEMPTED");
    done(&o);
}

static void test_hostile_path(void **state) {
    (void)state;
    char *tmp = th_tmpdir();
    char dir[PATH_MAX], file[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/a\"b\\c\nd\x01\xff\xc3", tmp);
    th_mkdirs(dir);
    snprintf(file, sizeof file, "%s/libcudart.so.13", dir);
    th_copy(th_fixture("conda/lib/libcudart.so.13"), file);
    const char *env[] = {fake_driver, "CUDALOAD_SOURCES=caller", NULL};
    const char *args[] = {"--json", "--find-only", "--root", dir, NULL};
    run_out o;
    run_probe(&o, env, args);
    assert_int_equal(o.code, 1); /* no cuBLAS there */
    char expr[PATH_MAX + 256];
    snprintf(expr, sizeof expr, "d[\"roots\"][0][\"path\"].encode(\"utf-8\", \"surrogateescape\") == bytes.fromhex(\"");
    size_t n = strlen(expr);
    for (const unsigned char *c = (const unsigned char *)dir; *c; c++) n += (size_t)snprintf(expr + n, sizeof expr - n, "%02x", *c);
    snprintf(expr + n, sizeof expr - n, "\")");
    ASSERT_JQ(&o, expr, "true");
    ASSERT_JQ(&o, "d[\"libraries\"][\"cudart\"][\"status\"]", "found");
    done(&o);
    free(tmp);
}

static void test_nvrtc_reported_when_present(void **state) {
    (void)state;
    char *dir = th_tmpdir();
    char p[PATH_MAX], src[PATH_MAX];
    snprintf(p, sizeof p, "%s/libcudart.so.13", dir);
    th_copy(th_fixture("conda/lib/libcudart.so.13"), p);
    snprintf(p, sizeof p, "%s/libnvrtc.so.13", dir);
    snprintf(src, sizeof src, "%s/libnvrtc.so.13", th_fixture_env("CUDA_TOOLKIT_LIB"));
    th_symlink(src, p);
    const char *env[] = {fake_driver, "FAKE_CUDA_DEVICES=0", "CUDALOAD_SOURCES=caller", NULL};
    const char *args[] = {"--json", "--root", dir, NULL};
    run_out o;
    run_expect(&o, env, args, 1); /* no cuBLAS there */
    ASSERT_JQ(&o, "d[\"libraries\"][\"nvrtc\"][\"status\"]", "found");
    ASSERT_JQ(&o, "d[\"libraries\"][\"nvrtc\"][\"path\"].endswith(\"libnvrtc.so.13\")", "true");
    done(&o);
    free(dir);
}

static void test_writable_library_warned(void **state) {
    (void)state;
    char *dir = th_tmpdir();
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/libcudart.so.13", dir);
    th_copy(th_fixture("conda/lib/libcudart.so.13"), p);
    assert_int_equal(chmod(p, 0777), 0);
    assert_int_equal(chmod(dir, 0777), 0);
    const char *env[] = {fake_driver, "CUDALOAD_SOURCES=caller", NULL};
    const char *args[] = {"--json", "--root", dir, NULL};
    run_out o;
    run_expect(&o, env, args, 1);
    ASSERT_JQ(&o, "any(\"is writable by every user (mode 777): anyone can replace\" in w for w in d[\"warnings\"])", "true");
    ASSERT_JQ(&o, "any(\"anyone can put another library there\" in w for w in d[\"warnings\"])", "true");
    done(&o);
    chmod(dir, 0700);
    free(dir);
}

static void test_selftest_failure_is_reported(void **state) {
    (void)state;
    /* the fake driver has one device but cannot run anything: the self-test must fail
     * cleanly, with the CUDA error, not crash */
    const char *env[] = {fake_driver, "FAKE_CUDA_DEVICES=1", "CUDALOAD_SOURCES=caller", NULL};
    const char *args[] = {"--json", "--root", arg_root("toolkit-cu13-wheel"), NULL};
    run_out o;
    run_expect(&o, env, args, 3);
    ASSERT_JQ(&o, "d[\"selftest\"][\"saxpy\"][\"pass\"]", "false");
    ASSERT_JQ(&o, "\"cudaMalloc failed\" in d[\"selftest\"][\"saxpy\"][\"error\"]", "true");
    ASSERT_JQ(&o, "d[\"devices\"][0][\"compute_capability\"]", "[9, 0]");
    done(&o);
    const char *args2[] = {"--no-selftest", "--json", "--root", arg_root("toolkit-cu13-wheel"), NULL};
    run_expect(&o, env, args2, 0);
    ASSERT_JQ(&o, "d[\"selftest\"]", "null");
    done(&o);
}

static void test_usage_errors(void **state) {
    (void)state;
    run_out o;
    const char *a1[] = {"--bogus", NULL};
    run_expect(&o, NULL, a1, 4);
    done(&o);
    const char *a2[] = {"--root", "relative/dir", NULL};
    run_expect(&o, NULL, a2, 4);
    done(&o);
    const char *env[] = {"CUDALOAD_SOURCES=caller,bogus", NULL};
    run_expect(&o, env, NULL, 4);
    done(&o);
    const char *a3[] = {"--quiet", NULL};
    const char *env3[] = {"CUDALOAD_SOURCES=caller", NULL};
    run_expect(&o, env3, a3, 1);
    assert_string_equal(o.text, "");
    done(&o);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cu13_tree_json),
        cmocka_unit_test(test_cu12_wheels),
        cmocka_unit_test(test_wheels_missing),
        cmocka_unit_test(test_driver_too_old_for_cu12),
        cmocka_unit_test(test_corrupt_first_candidate),
        cmocka_unit_test(test_already_loaded),
        cmocka_unit_test(test_conda_and_cuda_home),
        cmocka_unit_test(test_ld_library_path_warning),
        cmocka_unit_test(test_find_only),
        cmocka_unit_test(test_hostile_path),
        cmocka_unit_test(test_nvrtc_reported_when_present),
        cmocka_unit_test(test_writable_library_warned),
        cmocka_unit_test(test_selftest_failure_is_reported),
        cmocka_unit_test(test_usage_errors),
    };
    return cmocka_run_group_tests_name("probe", tests, setup, NULL);
}
