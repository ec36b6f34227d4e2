/* SPDX-License-Identifier: Apache-2.0 */
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
#include <poll.h>
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
    char path[64];     /* stdout saved here */
    char err_path[64]; /* stderr saved here */
    char *text, *err;
} run_out;

static char *slurp(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) fail_msg("cannot read %s", path);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    rewind(f);
    char *t = calloc(1, (size_t)len + 1);
    if (!t || fread(t, 1, (size_t)len, f) != (size_t)len) fail_msg("short read of %s", path);
    fclose(f);
    return t;
}

/* The child's side of a run: a clean environment plus env, argv after the probe's name. */
static void exec_probe(const char *const *env, const char *const *args) {
    clearenv();
    setenv("PATH", "/usr/bin:/bin", 1);
    for (size_t i = 0; env && env[i]; i++) putenv((char *)env[i]);
    const char *argv[32] = {probe};
    size_t n = 1;
    for (size_t i = 0; args && args[i] && n < 31; i++) argv[n++] = args[i];
    execv(probe, (char *const *)argv);
    _exit(127);
}

/* Runs the probe with argv (NULL-terminated) in a clean environment plus env; stdout and
 * stderr are kept apart. */
static void run_probe(run_out *o, const char *const *env, const char *const *args) {
    snprintf(o->path, sizeof o->path, "/tmp/cudaload-probe-out-XXXXXX");
    snprintf(o->err_path, sizeof o->err_path, "/tmp/cudaload-probe-err-XXXXXX");
    int fd = mkstemp(o->path), efd = mkstemp(o->err_path);
    assert_true(fd >= 0 && efd >= 0);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd, 1);
        dup2(efd, 2);
        exec_probe(env, args);
    }
    int st;
    waitpid(pid, &st, 0);
    close(fd);
    close(efd);
    if (!WIFEXITED(st)) fail_msg("probe died (status %d)", st);
    o->code = WEXITSTATUS(st);
    o->text = slurp(o->path);
    o->err = slurp(o->err_path);
}

/* Runs the probe with its stdout on a pseudo-terminal (as a user at a terminal sees it). */
static void run_probe_tty(run_out *o, const char *const *env, const char *const *args) {
    int m = posix_openpt(O_RDWR | O_NOCTTY);
    assert_true(m >= 0);
    assert_int_equal(grantpt(m), 0);
    assert_int_equal(unlockpt(m), 0);
    char slave[128];
    snprintf(slave, sizeof slave, "%s", ptsname(m));
    o->path[0] = o->err_path[0] = 0;
    pid_t pid = fork();
    if (pid == 0) {
        int s = open(slave, O_RDWR);
        if (s < 0) _exit(126);
        dup2(s, 1);
        exec_probe(env, args);
    }
    size_t cap = 1 << 16, len = 0;
    o->text = calloc(1, cap);
    for (;;) { /* read until the slave side is closed (EIO) */
        struct pollfd pf = {m, POLLIN, 0};
        if (poll(&pf, 1, 60000) <= 0) break;
        ssize_t r = read(m, o->text + len, cap - 1 - len);
        if (r <= 0) break;
        len += (size_t)r;
        if (len + 1 >= cap) break;
    }
    o->text[len] = 0;
    int st;
    waitpid(pid, &st, 0);
    close(m);
    if (!WIFEXITED(st)) fail_msg("probe died (status %d)", st);
    o->code = WEXITSTATUS(st);
    o->err = calloc(1, 1);
}

/* Runs the probe and checks its exit code, showing the report when it differs. */
static void run_expect(run_out *o, const char *const *env, const char *const *args, int code) {
    run_probe(o, env, args);
    if (o->code != code) fail_msg("exit %d, want %d:\n%s", o->code, code, o->text);
}

static void done(run_out *o) {
    if (o->path[0]) unlink(o->path);
    if (o->err_path[0]) unlink(o->err_path);
    free(o->text);
    free(o->err);
}

/* s with every run of blanks and newlines made one space: the text report wraps its prose
 * at 80 columns, so key lines are matched independently of where the lines break. */
static char *squash(const char *s) {
    char *out = malloc(strlen(s) + 1), *d = out;
    for (int blank = 0; *s; s++) {
        if (*s == ' ' || *s == '\n' || *s == '\t') {
            blank = 1;
            continue;
        }
        if (blank && d != out) *d++ = ' ';
        blank = 0;
        *d++ = *s;
    }
    *d = 0;
    return out;
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
        char *t_ = squash((o)->text), *w_ = squash(words);                                      \
        int ok_ = strstr(t_, w_) != NULL;                                                       \
        free(t_), free(w_);                                                                     \
        if (!ok_) fail_msg("report lacks '%s':\n%s", words, (o)->text);                          \
    } while (0)

/* Symlinks in dir named libcudart.so.13, libcublasLt.so.13 and libcublas.so.13 to the files
 * of the same names in the fixture directory rel. */
static void link_into(const char *rel, const char *dir) {
    static const char *const names[] = {"libcudart.so.13", "libcublasLt.so.13", "libcublas.so.13"};
    for (size_t i = 0; i < 3; i++) {
        char src[PATH_MAX], dst[PATH_MAX + 32];
        snprintf(src, sizeof src, "%s/%s", rel, names[i]);
        snprintf(dst, sizeof dst, "%s/%s", dir, names[i]);
        th_symlink(th_fixture(src), dst);
    }
}

/* A fresh directory with link_into's symlinks to the fixture directory rel. */
static char *link_dir(const char *rel) {
    char *dir = th_tmpdir();
    link_into(rel, dir);
    return dir;
}

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
    ASSERT_TEXT(&o, "cudart: library not found: no candidate file in the roots above (the system search is scoped out)");
    /* the driver runs CUDA 13: the CUDA 13 wheels, pinned to that major */
    ASSERT_TEXT(&o, "fix: pip install \"nvidia-cuda-runtime==13.*\" \"nvidia-cublas==13.*\" (this driver runs CUDA 13.0)");
    ASSERT_TEXT(&o, "cudaload-probe --root \"$(python3 -c 'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])')\"");
    ASSERT_TEXT(&o, "(the system search is scoped out by CUDALOAD_SOURCES)");
    done(&o);
    const char *args2[] = {"--json", "--root", empty, NULL};
    run_expect(&o, env, args2, 1);
    ASSERT_JQ(&o, "d[\"system_search\"]", "false");
    ASSERT_JQ(&o, "d[\"problems\"][0].startswith(\"cudart: library not found\")", "true");
    ASSERT_JQ(&o, "d[\"fixes\"][0].startswith(\"`pip install \\\"nvidia-cuda-runtime==13.*\\\" \\\"nvidia-cublas==13.*\\\"`\")",
              "true");
    /* the advisor's fixes, merged: the runtime's package and, for cuBLAS (not searched without
     * a runtime), its package of the same major */
    ASSERT_JQ(&o, "[(f[\"kind\"], f[\"major\"], f[\"requirements\"], f[\"libraries\"], f[\"driver_runs\"]) for f in d[\"fix_plan\"]]",
              "[[\"pip_install\", 13, [\"nvidia-cuda-runtime==13.*\", \"nvidia-cublas==13.*\"], [\"cudart\", \"cublasLt\", \"cublas\"], true]]");
    ASSERT_JQ(&o, "[f[\"packages\"] for f in d[\"libraries\"][\"cudart\"][\"fixes\"]]",
              "[[\"nvidia-cuda-runtime\"], [\"nvidia-cuda-runtime-cu12\"]]");
    done(&o);
    /* a CUDA 12 driver: the CUDA 12 wheels only (it cannot run CUDA 13's) */
    const char *env12[] = {fake_driver, "FAKE_CUDA_VERSION=12080", "CUDALOAD_SOURCES=caller", NULL};
    run_expect(&o, env12, args2, 1);
    ASSERT_JQ(&o, "[(f[\"kind\"], f[\"major\"], f[\"requirements\"], f[\"driver_runs\"]) for f in d[\"fix_plan\"]]",
              "[[\"pip_install\", 12, [\"nvidia-cuda-runtime-cu12\", \"nvidia-cublas-cu12\"], true]]");
    ASSERT_JQ(&o, "d[\"fixes\"][0].startswith(\"`pip install nvidia-cuda-runtime-cu12 nvidia-cublas-cu12`\")", "true");
    done(&o);
    /* a CUDA 11 driver runs no wheel: the newest, after a driver upgrade */
    const char *env11[] = {fake_driver, "FAKE_CUDA_VERSION=11080", "CUDALOAD_SOURCES=caller", NULL};
    run_expect(&o, env11, args2, 1);
    ASSERT_JQ(&o, "[(f[\"kind\"], f[\"major\"], f[\"driver_runs\"]) for f in d[\"fix_plan\"]]",
              "[[\"upgrade_driver\", 13, null], [\"pip_install\", 13, false]]");
    ASSERT_JQ(&o, "d[\"fixes\"][0].startswith(\"upgrade the NVIDIA driver\")", "true");
    done(&o);
    /* no driver to ask: both majors, the newest first */
    const char *env0[] = {"CUDALOAD_DRIVER_PATH=/nonexistent/libcuda.so.1", "CUDALOAD_SOURCES=caller", NULL};
    run_expect(&o, env0, args2, 1);
    ASSERT_JQ(&o, "[(f[\"kind\"], f[\"major\"], f[\"requirements\"], f[\"driver_runs\"]) for f in d[\"fix_plan\"]]",
              "[[\"pip_install\", 13, [\"nvidia-cuda-runtime==13.*\", \"nvidia-cublas==13.*\"], null], "
              "[\"pip_install\", 12, [\"nvidia-cuda-runtime-cu12\", \"nvidia-cublas-cu12\"], null], "
              "[\"check_setting\", null, null, null]]");
    done(&o);
    free(empty);
}

/* Only CUDA 13 copies, a CUDA 12 driver: the CUDA 12 wheels fix it (or a newer driver). */
static void test_cu13_only_with_cu12_driver(void **state) {
    (void)state;
    const char *env[] = {fake_driver, "FAKE_CUDA_VERSION=12040", "CUDALOAD_SOURCES=caller", NULL};
    const char *args[] = {"--root", arg_root("toolkit-cu13-wheel"), NULL};
    run_out o;
    const char *args_json[] = {"--json", "--root", arg_root("toolkit-cu13-wheel"), NULL};
    run_expect(&o, env, args_json, 1);
    ASSERT_JQ(&o, "[d[\"libraries\"][\"cudart\"][\"status_code\"]] + [c[\"reason_code\"] for c in "
                  "d[\"libraries\"][\"cudart\"][\"candidates\"]]", "[\"CUDALOAD_ERROR_DRIVER_TOO_OLD\", \"DRIVER_TOO_OLD\"]");
    ASSERT_JQ(&o, "d[\"problems\"][0].startswith(\"cudart: \")", "true");
    /* the CUDA 12 wheels, which this driver runs, or a driver for CUDA 13 */
    ASSERT_JQ(&o, "[(f[\"kind\"], f[\"major\"], f[\"branch\"], f[\"requirements\"]) for f in d[\"fix_plan\"]]",
              "[[\"pip_install\", 12, null, [\"nvidia-cuda-runtime-cu12\", \"nvidia-cublas-cu12\"]], "
              "[\"upgrade_driver\", 13, 580, null]]");
    /* the bundled kernels need CUDA 13 too (when built): said, with the fallback */
    if (strcmp(jq(&o, "d[\"kernels\"][\"built\"]"), "true") == 0) {
        ASSERT_JQ(&o, "d[\"devices\"][0][\"kernels_status\"]", "CUDALOAD_ERROR_DRIVER_TOO_OLD");
        ASSERT_JQ(&o, "any(w.startswith(\"device 0: \") and \"cuBLAS\" in w for w in d[\"warnings\"])", "true");
    }
    done(&o);
    run_expect(&o, env, args, 1);
    ASSERT_TEXT(&o, "fix: pip install nvidia-cuda-runtime-cu12 nvidia-cublas-cu12");
    done(&o);
}

static void test_driver_too_old_for_cu12(void **state) {
    (void)state;
    const char *env[] = {fake_driver, "FAKE_CUDA_VERSION=11080", "CUDALOAD_SOURCES=caller", NULL};
    const char *args[] = {"--root", th_fixture_env("VENV_CU12_SITE"), NULL};
    run_out o;
    run_expect(&o, env, args, 1);
    /* no pip command: no wheel libcudaload loads can run on a CUDA 11 driver */
    if (strstr(o.text, "pip install")) fail_msg("a pip fix for a CUDA 11 driver:\n%s", o.text);
    done(&o);
    const char *args_json[] = {"--json", "--root", th_fixture_env("VENV_CU12_SITE"), NULL};
    run_expect(&o, env, args_json, 1);
    ASSERT_JQ(&o, "d[\"libraries\"][\"cudart\"][\"status_code\"]", "CUDALOAD_ERROR_DRIVER_TOO_OLD");
    ASSERT_JQ(&o, "[(f[\"kind\"], f[\"major\"], f[\"branch\"]) for f in d[\"fix_plan\"]]", "[[\"upgrade_driver\", 12, 525]]");
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

/* The toolkit's stubs on LD_LIBRARY_PATH (numba#9732, nixpkgs#310234): the dynamic loader
 * hands libcudaload the link stub, which is rejected unopened (STUB_DIR), and the search goes on
 * to the driver's places (CUDALOAD_DRIVER_DIRS standing for /run/opengl-driver/lib), where the
 * fake driver is taken. */
static void test_stubs_on_ld_library_path(void **state) {
    (void)state;
    char sys[PATH_MAX];
    if (th_loader_resolves("libcuda.so.1", sys, sizeof sys)) {
        print_message("skipped: this machine's dynamic loader finds %s\n", sys);
        skip();
    }
    char *top = th_tmpdir(), stubs[PATH_MAX], nix[PATH_MAX], src[PATH_MAX], dst[PATH_MAX + 16];
    snprintf(stubs, sizeof stubs, "%s/cuda/lib64/stubs", top);
    snprintf(nix, sizeof nix, "%s/run/opengl-driver/lib", top);
    th_mkdirs(stubs);
    th_mkdirs(nix);
    /* the toolkit's link stub as libcuda.so.1 in a stubs/ directory, which is never opened: where
     * the toolkit has none (one made of pip's wheels), the fake driver, a working one, there */
    snprintf(src, sizeof src, "%s/stubs/libcuda.so", th_fixture_env("CUDA_TOOLKIT_LIB"));
    if (access(src, R_OK) != 0) snprintf(src, sizeof src, "%s/fake/libcuda.so.1", getenv("CUDALOAD_TEST_BUILD"));
    snprintf(dst, sizeof dst, "%s/libcuda.so.1", stubs);
    th_copy(src, dst);
    snprintf(src, sizeof src, "%s/fake/libcuda.so.1", getenv("CUDALOAD_TEST_BUILD"));
    snprintf(dst, sizeof dst, "%s/libcuda.so.1", nix);
    th_copy(src, dst);
    char llp[PATH_MAX + 32], dirs[PATH_MAX + 32];
    snprintf(llp, sizeof llp, "LD_LIBRARY_PATH=%s", stubs);
    snprintf(dirs, sizeof dirs, "CUDALOAD_DRIVER_DIRS=%s", nix);
    const char *env[] = {llp, dirs, "FAKE_CUDA_DEVICES=0", "CUDALOAD_SOURCES=caller", NULL};
    const char *args[] = {"--json", "--no-selftest", NULL};
    run_out o;
    run_probe(&o, env, args);
    ASSERT_JQ(&o, "[c[\"reason_code\"] for c in d[\"libraries\"][\"cuda\"][\"candidates\"]]", "[\"STUB_DIR\", \"TAKEN\"]");
    ASSERT_JQ(&o, "d[\"libraries\"][\"cuda\"][\"candidates\"][0][\"path\"].endswith(\"/cuda/lib64/stubs/libcuda.so.1\")", "true");
    ASSERT_JQ(&o, "d[\"libraries\"][\"cuda\"][\"path\"].endswith(\"/run/opengl-driver/lib/libcuda.so.1\")", "true");
    done(&o);
    free(top);
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
    ASSERT_TEXT(&o, "fix: unset LD_LIBRARY_PATH (it names only");
    done(&o);
    /* every library libcudaload takes is covered: cublasLt too, worded by where it came from */
    const char *args_json[] = {"--json", "--root", th_fixture_env("VENV_CU12_SITE"), NULL};
    run_probe(&o, env, args_json);
    char lt[PATH_MAX + 256];
    snprintf(lt, sizeof lt, "any(w.startswith(\"LD_LIBRARY_PATH puts %s/libcublasLt.so.13 ahead of the pip wheels \") "
             "for w in d[\"warnings\"])", th_fixture("conda/lib"));
    ASSERT_JQ(&o, lt, "true");
    ASSERT_JQ(&o, "[f.split(\") \")[-1] for f in d[\"fixes\"] if \"LD_LIBRARY_PATH\" in f]",
              "[\"so every program takes the pip wheels, as libcudaload did\"]");
    done(&o);
    /* other directories (the driver's, in a container) stay: the fix removes just that one */
    char *other = th_tmpdir(), llp2[3 * PATH_MAX];
    snprintf(llp2, sizeof llp2, "LD_LIBRARY_PATH=%s:%s:%s/with space", other, th_fixture("conda/lib"), other);
    const char *env2[] = {fake_driver, "FAKE_CUDA_DEVICES=0", "CUDALOAD_SOURCES=caller", llp2, NULL};
    const char *args2[] = {"--json", "--root", th_fixture_env("VENV_CU12_SITE"), NULL};
    run_probe(&o, env2, args2);
    char want[4 * PATH_MAX];
    snprintf(want, sizeof want, "[f.split(\"`\")[1] for f in d[\"fixes\"] if \"LD_LIBRARY_PATH\" in f] == "
             "[\"export LD_LIBRARY_PATH=%s:\\x27%s/with space\\x27\"]", other, other);
    ASSERT_JQ(&o, want, "true");
    done(&o);
    free(other);
}

/* A name in an LD_LIBRARY_PATH directory that is a symlink to the very file libcudaload took
 * shadows nothing: no warning, no fix (the directories differ, the files do not). */
static void test_ld_library_path_same_file(void **state) {
    (void)state;
    char *dir = link_dir("toolkit-cu13-wheel/nvidia/cu13/lib"), llp[PATH_MAX + 32];
    snprintf(llp, sizeof llp, "LD_LIBRARY_PATH=%s", dir);
    const char *env[] = {fake_driver, "FAKE_CUDA_DEVICES=0", "CUDALOAD_SOURCES=caller", llp, NULL};
    const char *args[] = {"--json", "--root", arg_root("toolkit-cu13-wheel"), NULL};
    run_out o;
    run_expect(&o, env, args, 2);
    ASSERT_JQ(&o, "d[\"libraries\"][\"cudart\"][\"source\"]", "caller");
    ASSERT_JQ(&o, "[w for w in d[\"warnings\"] if \"LD_LIBRARY_PATH\" in w]", "[]");
    ASSERT_JQ(&o, "[f for f in d[\"fixes\"] if \"LD_LIBRARY_PATH\" in f]", "[]");
    done(&o);
    free(dir);
}

/* Taken from LD_LIBRARY_PATH by the system search: said for each library, and with a
 * site-packages root searched, the fix installs the wheels there; without one, no pip fix. */
static void test_ld_library_path_taken_from_it(void **state) {
    (void)state;
    char *dir = link_dir("conda/lib"), *empty = th_tmpdir(), llp[PATH_MAX + 32], want[4 * PATH_MAX];
    snprintf(llp, sizeof llp, "LD_LIBRARY_PATH=%s", dir);
    const char *env[] = {fake_driver, "FAKE_CUDA_DEVICES=0", "CUDALOAD_SOURCES=caller,system", llp, NULL};
    const char *args[] = {"--json", "--root", empty, NULL};
    run_out o;
    run_expect(&o, env, args, 2);
    ASSERT_JQ(&o, "[d[\"libraries\"][k][\"source\"] for k in (\"cudart\", \"cublasLt\", \"cublas\")]",
              "[\"system\", \"system\", \"system\"]");
    static const char *const names[] = {"libcudart.so.13", "libcublasLt.so.13", "libcublas.so.13"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(want, sizeof want, "\"%s was taken from LD_LIBRARY_PATH (%s), by the system search: no wheel, conda or "
                 "CUDA_HOME copy was found before it\" in d[\"warnings\"]", names[i], dir);
        ASSERT_JQ(&o, want, "true");
    }
    ASSERT_JQ(&o, "[w for w in d[\"warnings\"] if w.startswith(\"LD_LIBRARY_PATH puts\")]", "[]");
    snprintf(want, sizeof want, "\"to use pip wheels instead, install them into the environment of %s: `pip install "
             "\\\"nvidia-cuda-runtime==13.*\\\" \\\"nvidia-cublas==13.*\\\"`, then take %s out of LD_LIBRARY_PATH\" in "
             "d[\"fixes\"]", empty, dir);
    ASSERT_JQ(&o, want, "true");
    done(&o);
    const char *env2[] = {fake_driver, "FAKE_CUDA_DEVICES=0", "CUDALOAD_SOURCES=system", llp, NULL};
    const char *args2[] = {"--json", NULL};
    run_expect(&o, env2, args2, 2);
    ASSERT_JQ(&o, "any(\"was taken from LD_LIBRARY_PATH\" in w for w in d[\"warnings\"])", "true");
    ASSERT_JQ(&o, "[f for f in d[\"fixes\"] if \"pip\" in f or \"LD_LIBRARY_PATH\" in f]", "[]");
    done(&o);
    free(dir);
    free(empty);
}

/* The SONAMEs looked for in LD_LIBRARY_PATH are the catalogue's, for every library reported:
 * a cuFFT there is warned about when --lib cufft reports it (taken from nowhere else here),
 * and not otherwise; likewise the exact-file variables in the environment section. */
static void test_ld_library_path_any_library(void **state) {
    (void)state;
    char *dir = th_tmpdir(), llp[PATH_MAX + 32], src[PATH_MAX], dst[PATH_MAX + 32], want[2 * PATH_MAX];
    snprintf(src, sizeof src, "%s/libcufft.so.12", th_fixture_env("CUDA_TOOLKIT_LIB"));
    snprintf(dst, sizeof dst, "%s/libcufft.so.12", dir);
    th_symlink(src, dst);
    snprintf(llp, sizeof llp, "LD_LIBRARY_PATH=%s", dir);
    const char *env[] = {fake_driver, "FAKE_CUDA_DEVICES=0", "CUDALOAD_SOURCES=caller", llp, NULL};
    const char *args[] = {"--json", "--root", arg_root("toolkit-cu13-wheel"), "--lib", "cufft", NULL};
    run_out o;
    run_expect(&o, env, args, 1);
    ASSERT_JQ(&o, "d[\"libraries\"][\"cufft\"][\"status_code\"]", "CUDALOAD_ERROR_NOT_FOUND");
    snprintf(want, sizeof want, "[w for w in d[\"warnings\"] if \"LD_LIBRARY_PATH\" in w] == [\"LD_LIBRARY_PATH puts %s first for "
             "every program that loads CUDA by SONAME (torch, cupy, ctypes), while libcudaload took no cufft\"]", dst);
    ASSERT_JQ(&o, want, "true");
    /* its pip package, of the runtime's major (no pin: cuFFT's own version is not CUDA's) */
    ASSERT_JQ(&o, "[(f[\"kind\"], f[\"major\"], f[\"requirements\"]) for f in d[\"fix_plan\"]]",
              "[[\"pip_install\", 13, [\"nvidia-cufft\"]]]");
    /* its exact-file variable (the catalogue's) is among those reported */
    ASSERT_JQ(&o, "[k for k in d[\"environment\"] if k.endswith(\"_PATH\") and k.startswith(\"CUDALOAD_\")]",
              "[\"CUDALOAD_PATH\", \"CUDALOAD_DRIVER_PATH\", \"CUDALOAD_CUDART_PATH\", \"CUDALOAD_CUBLASLT_PATH\", "
              "\"CUDALOAD_CUBLAS_PATH\", \"CUDALOAD_CUFFT_PATH\"]");
    done(&o);
    const char *args_core[] = {"--json", "--root", arg_root("toolkit-cu13-wheel"), NULL};
    run_expect(&o, env, args_core, 2);
    ASSERT_JQ(&o, "[w for w in d[\"warnings\"] if \"LD_LIBRARY_PATH\" in w]", "[]");
    ASSERT_JQ(&o, "\"CUDALOAD_CUFFT_PATH\" in d[\"environment\"]", "false");
    done(&o);
    free(dir);
}

/* The warning and its fix say what was taken (conda, CUDA_HOME), never "the wheels" when no
 * wheel was; the cuBLAS pair, the same toolkit files through both trees' symlinks, is not
 * warned about. */
static void test_ld_library_path_wording(void **state) {
    (void)state;
    char conda[PATH_MAX + 16], home[PATH_MAX + 16], llp[PATH_MAX + 32], want[2 * PATH_MAX];
    snprintf(conda, sizeof conda, "CONDA_PREFIX=%s", th_fixture("conda"));
    snprintf(home, sizeof home, "CUDA_HOME=%s", th_fixture("cudahome"));
    snprintf(llp, sizeof llp, "LD_LIBRARY_PATH=%s", th_fixture("cudahome/lib64"));
    const char *env[] = {fake_driver, "FAKE_CUDA_DEVICES=0", conda, "CUDALOAD_SOURCES=conda", llp, NULL};
    const char *args[] = {"--json", NULL};
    run_out o;
    run_expect(&o, env, args, 2);
    snprintf(want, sizeof want, "[w.split(\" for every\")[0] for w in d[\"warnings\"] if \"LD_LIBRARY_PATH\" in w] == "
             "[\"LD_LIBRARY_PATH puts %s/libcudart.so.13 ahead of the conda environment\\x27s copy\"]",
             th_fixture("cudahome/lib64"));
    ASSERT_JQ(&o, want, "true");
    ASSERT_JQ(&o, "any(\"wheel\" in t for t in d[\"warnings\"] + d[\"fixes\"])", "false");
    ASSERT_JQ(&o, "[f.split(\") \")[-1] for f in d[\"fixes\"] if \"LD_LIBRARY_PATH\" in f]",
              "[\"so every program takes the conda environment's copy, as libcudaload did\"]");
    done(&o);
    snprintf(llp, sizeof llp, "LD_LIBRARY_PATH=%s", th_fixture("conda/lib"));
    const char *env2[] = {fake_driver, "FAKE_CUDA_DEVICES=0", home, "CUDALOAD_SOURCES=cuda_home", llp, NULL};
    run_expect(&o, env2, args, 2);
    ASSERT_JQ(&o, "any(\"ahead of the CUDA_HOME/CUDA_PATH toolkit for every program\" in w for w in d[\"warnings\"])", "true");
    ASSERT_JQ(&o, "any(\"wheel\" in t for t in d[\"warnings\"] + d[\"fixes\"])", "false");
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

/* --find-only when the system search finds the libraries (LD_LIBRARY_PATH names a directory
 * of symlinks, the search is scoped to the system: nothing depends on what ld.so.cache
 * holds): cublasLt is located like cuBLAS, with its candidate, and every path is the file
 * itself (symlinks resolved) -- the same paths a real load reports. */
static void test_find_only_system_search(void **state) {
    (void)state;
    char *dir = link_dir("conda/lib"), llp[PATH_MAX + 32], want[4 * PATH_MAX];
    snprintf(llp, sizeof llp, "LD_LIBRARY_PATH=%s", dir);
    const char *env[] = {fake_driver, "FAKE_CUDA_DEVICES=0", "CUDALOAD_SOURCES=system", llp, NULL};
    const char *args[] = {"--json", "--find-only", NULL};
    run_out o;
    run_expect(&o, env, args, 0);
    ASSERT_JQ(&o, "[d[\"libraries\"][k][\"status\"] for k in (\"cuda\", \"cudart\", \"cublasLt\", \"cublas\")]",
              "[\"found\", \"found\", \"found\", \"found\"]");
    ASSERT_JQ(&o, "[d[\"libraries\"][\"cublasLt\"][k] for k in (\"source\", \"soname\")]", "[\"system\", \"libcublasLt.so.13\"]");
    static const char *const libs[] = {"cudart", "cublasLt", "cublas"};
    static const char *const names[] = {"libcudart.so.13", "libcublasLt.so.13", "libcublas.so.13"};
    for (size_t i = 0; i < 3; i++) {
        char link[PATH_MAX + 32];
        snprintf(link, sizeof link, "%s/%s", dir, names[i]);
        char *real = realpath(link, NULL);
        assert_non_null(real);
        snprintf(want, sizeof want, "(d[\"libraries\"][\"%s\"][\"path\"], [(c[\"path\"], c[\"result\"]) for c in "
                 "d[\"libraries\"][\"%s\"][\"candidates\"]]) == (\"%s\", [(\"%s\", \"taken\")])", libs[i], libs[i], real, real);
        ASSERT_JQ(&o, want, "true");
        free(real);
    }
    char *found = strdup(jq(&o, "[d[\"libraries\"][k][\"path\"] for k in (\"cudart\", \"cublasLt\", \"cublas\")]"));
    done(&o);
    /* a real load of the same set-up takes the same files and reports the same paths */
    const char *args_load[] = {"--json", NULL};
    run_expect(&o, env, args_load, 2);
    ASSERT_JQ(&o, "[d[\"libraries\"][k][\"status\"] for k in (\"cudart\", \"cublasLt\", \"cublas\")]",
              "[\"loaded\", \"loaded\", \"loaded\"]");
    ASSERT_JQ(&o, "[d[\"libraries\"][k][\"path\"] for k in (\"cudart\", \"cublasLt\", \"cublas\")]", found);
    done(&o);
    const char *args_text[] = {"--find-only", NULL};
    run_expect(&o, env, args_text, 0);
    ASSERT_TEXT(&o, "cublasLt found libcublasLt.so.13 (CUDA 13), from system");
    if (strstr(o.text, "not attempted")) fail_msg("a library not attempted:\n%s", o.text);
    done(&o);
    free(found);
    free(dir);
}

static void test_hostile_path(void **state) {
    (void)state;
    char *tmp = th_tmpdir();
    char dir[PATH_MAX], file[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/a\"b\\c\nd\x01\x1b[31m\xff\xc3", tmp);
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
    /* the text report never writes the control bytes: a path cannot drive the terminal */
    const char *args_text[] = {"--find-only", "--root", dir, NULL};
    run_probe(&o, env, args_text);
    assert_int_equal(o.code, 1);
    if (strchr(o.text, '\x01') || strchr(o.text, '\x1b')) fail_msg("raw control bytes in the report:\n%s", o.text);
    ASSERT_TEXT(&o, "a\"b\\c\\x0ad\\x01\\x1b[31m");
    done(&o);
    free(tmp);
}

/* C1 controls are escaped too: U+0080-U+009F in UTF-8 (c2 9b is CSI, as ESC [ is) and a raw
 * byte 0x80-0x9f outside valid UTF-8; a valid character (é) is written as is. */
static void test_hostile_path_c1(void **state) {
    (void)state;
    char *tmp = th_tmpdir();
    char dir[PATH_MAX], file[PATH_MAX + 32];
    snprintf(dir, sizeof dir, "%s/a\xc2\x9b" "31mb\x9b" "c\xc3\xa9" "d\xe2\x80", tmp);
    th_mkdirs(dir);
    snprintf(file, sizeof file, "%s/libcudart.so.13", dir);
    th_copy(th_fixture("conda/lib/libcudart.so.13"), file);
    const char *env[] = {fake_driver, "CUDALOAD_SOURCES=caller", NULL};
    const char *args[] = {"--find-only", "--root", dir, NULL};
    run_out o;
    run_expect(&o, env, args, 1); /* no cuBLAS there */
    /* the only non-ASCII left is the é (c3 a9): no byte 0x80-0x9f at all */
    for (const unsigned char *c = (const unsigned char *)o.text; *c; c++)
        if (*c >= 0x80 && *c <= 0x9f) fail_msg("a raw byte 0x%02x in the report:\n%s", *c, o.text);
    ASSERT_TEXT(&o, "a\\xc2\\x9b31mb\\x9bc\xc3\xa9" "d\\xe2\\x80/libcudart.so.13");
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

/* Group-writable (g+w, not o+w): warned too, naming the group; still a warning, the
 * library is loaded. A tree nobody else can write gets no such warning. */
static void test_group_writable_warned(void **state) {
    (void)state;
    char *tmp = th_tmpdir();
    char dir[PATH_MAX], p[PATH_MAX + 32];
    snprintf(dir, sizeof dir, "%s/lib", tmp);
    th_mkdirs(dir);
    snprintf(p, sizeof p, "%s/libcudart.so.13", dir);
    th_copy(th_fixture("conda/lib/libcudart.so.13"), p);
    assert_int_equal(chmod(p, 0775), 0);
    assert_int_equal(chmod(dir, 0770), 0);
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    const char *env[] = {fake_driver, "FAKE_CUDA_DEVICES=0", "CUDALOAD_SOURCES=caller", NULL};
    const char *args[] = {"--json", "--root", dir, NULL};
    run_out o;
    run_expect(&o, env, args, 1); /* no cuBLAS there */
    ASSERT_JQ(&o, "d[\"libraries\"][\"cudart\"][\"status\"]", "loaded");
    char want[2 * PATH_MAX];
    snprintf(want, sizeof want, "any(w.startswith(\"%s is writable by its group, group %u\") and w.endswith(\"(mode 775): "
             "every member of that group can replace the code this process runs\") for w in d[\"warnings\"])", p,
             (unsigned)st.st_gid);
    ASSERT_JQ(&o, want, "true");
    snprintf(want, sizeof want, "any(w.startswith(\"%s (holding cudart) is writable by its group, group %u\") and "
             "w.endswith(\"(mode 770): every member of that group can put another library there\") for w in "
             "d[\"warnings\"])", dir, (unsigned)st.st_gid);
    ASSERT_JQ(&o, want, "true");
    ASSERT_JQ(&o, "any(\"every user\" in w for w in d[\"warnings\"])", "false");
    done(&o);
    assert_int_equal(chmod(p, 0755), 0);
    assert_int_equal(chmod(dir, 0755), 0);
    run_expect(&o, env, args, 1);
    ASSERT_JQ(&o, "any(\"writable by\" in w for w in d[\"warnings\"])", "false");
    done(&o);
    chmod(dir, 0700);
    free(tmp);
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
    ASSERT_JQ(&o, "d[\"selftest\"][\"saxpy\"][\"error\"].startswith(\"cudaSetDevice(0) failed\")", "true");
    ASSERT_JQ(&o, "d[\"devices\"][0][\"compute_capability\"]", "[9, 0]");
    done(&o);
    const char *args2[] = {"--no-selftest", "--json", "--root", arg_root("toolkit-cu13-wheel"), NULL};
    run_expect(&o, env, args2, 0);
    ASSERT_JQ(&o, "d[\"selftest\"]", "null");
    done(&o);
}

/* Three devices of different compute capabilities (the fake driver's): each listed with its
 * own kernels' coverage and PCI bus id, and the self-test attempted on each (here each fails at
 * the runtime's cudaSetDevice, which the fake driver cannot serve: the proof it was run there), exit 3. */
static void test_every_device_listed_and_tested(void **state) {
    (void)state;
    const char *env[] = {fake_driver, "FAKE_CUDA_DEVICES=3", "FAKE_CUDA_CC=90,70,130", "CUDALOAD_SOURCES=caller", NULL};
    const char *args[] = {"--json", "--root", arg_root("toolkit-cu13-wheel"), NULL};
    run_out o;
    run_expect(&o, env, args, 3);
    ASSERT_JQ(&o, "[x[\"compute_capability\"] for x in d[\"devices\"]]", "[[9, 0], [7, 0], [13, 0]]");
    ASSERT_JQ(&o, "[x[\"pci_bus_id\"] for x in d[\"devices\"]]", "[\"0000:18:00.0\", \"0000:19:00.0\", \"0000:1a:00.0\"]");
    /* a build without nvcc (the sanitizer build) has no kernels for any device */
    ASSERT_JQ(&o, "[x[\"has_sass\"] for x in d[\"devices\"]] == ([True, False, False] if d[\"kernels\"][\"built\"] else [False] * 3)",
              "true");
    ASSERT_JQ(&o, "d[\"devices\"][1][\"kernels_status\"] == (\"CUDALOAD_ERROR_NO_KERNEL_IMAGE\" if d[\"kernels\"][\"built\"] "
                  "else \"CUDALOAD_ERROR_KERNELS_NOT_BUILT\")", "true");
    ASSERT_JQ(&o, "[x[\"selftest\"][\"saxpy\"][\"pass\"] for x in d[\"devices\"]]", "[false, false, false]");
    ASSERT_JQ(&o, "all(x[\"selftest\"][\"sgemm\"][\"error\"] for x in d[\"devices\"])", "true");
    ASSERT_JQ(&o, "d[\"selftest\"][\"saxpy\"] == d[\"devices\"][0][\"selftest\"][\"saxpy\"]", "true");
    ASSERT_JQ(&o, "sum(\"on device 2\" in x for x in d[\"problems\"])", "2");
    done(&o);
}

/* Only the runtime, no cuBLAS anywhere (the H100 with the CUDA 12 runtime wheel alone): the
 * self-test still runs the bundled kernels (here it fails at cudaSetDevice under the fake driver, the
 * proof it was attempted), the cuBLAS pass does not run, and cuBLAS is reported missing. A build
 * without the kernels has nothing to run: the self-test is skipped, saying why. */
static void test_selftest_without_cublas(void **state) {
    (void)state;
    char *top = th_tmpdir(), lib[PATH_MAX], src[PATH_MAX], dst[PATH_MAX + 32];
    snprintf(lib, sizeof lib, "%s/nvidia/cu13/lib", top);
    th_mkdirs(lib);
    snprintf(src, sizeof src, "%s/libcudart.so.13", th_fixture_env("CUDA_TOOLKIT_LIB"));
    snprintf(dst, sizeof dst, "%s/libcudart.so.13", lib);
    th_copy(src, dst);
    const char *env[] = {fake_driver, "FAKE_CUDA_DEVICES=1", "CUDALOAD_SOURCES=caller", NULL};
    const char *args[] = {"--json", "--root", top, NULL};
    run_out o;
    run_expect(&o, env, args, 1);
    ASSERT_JQ(&o, "d[\"libraries\"][\"cudart\"][\"status\"], d[\"libraries\"][\"cublas\"][\"status\"]",
              "[\"loaded\", \"not_found\"]");
    if (strcmp(jq(&o, "d[\"kernels\"][\"built\"]"), "true") == 0) {
        ASSERT_JQ(&o, "d[\"selftest\"][\"saxpy\"][\"pass\"], d[\"selftest\"][\"cublas\"]", "[false, null]");
        ASSERT_JQ(&o, "d[\"selftest\"][\"saxpy\"][\"error\"].startswith(\"cudaSetDevice(0) failed\")", "true");
    } else {
        ASSERT_JQ(&o, "d[\"selftest\"]", "null");
    }
    done(&o);
    free(top);
}

/* Minor version compatibility: the CUDA 13.5 runtime wheel with a driver that runs CUDA 13.0 is
 * taken, flagged newer_than_driver, and warned about; with a driver for 13.9 it is not. */
static void test_minor_version_compatibility(void **state) {
    (void)state;
    const char *args[] = {"--json", "--no-selftest", "--root", th_fixture_env("VENV_CU13_SITE"), NULL};
    run_out o;
    const char *env13[] = {fake_driver, "FAKE_CUDA_VERSION=13000", "CUDALOAD_SOURCES=caller", NULL};
    run_probe(&o, env13, args);
    int rt = atoi(jq(&o, "d[\"libraries\"][\"cudart\"][\"version\"]"));
    if (rt <= 13000) {
        done(&o);
        print_message("skipped: the fixture's runtime is CUDA %d, not newer than 13.0\n", rt);
        skip();
    }
    ASSERT_JQ(&o, "d[\"libraries\"][\"cudart\"][\"status\"], d[\"libraries\"][\"cudart\"][\"newer_than_driver\"]",
              "[\"loaded\", true]");
    ASSERT_JQ(&o, "d[\"libraries\"][\"cuda\"][\"newer_than_driver\"]", "false");
    ASSERT_JQ(&o, "len([w for w in d[\"warnings\"] if w.startswith(\"cudart is CUDA 13.\") and \"(36)\" in w])", "1");
    done(&o);
    const char *env139[] = {fake_driver, "FAKE_CUDA_VERSION=13090", "CUDALOAD_SOURCES=caller", NULL};
    run_probe(&o, env139, args);
    ASSERT_JQ(&o, "d[\"libraries\"][\"cudart\"][\"newer_than_driver\"]", "false");
    ASSERT_JQ(&o, "[w for w in d[\"warnings\"] if \"(36)\" in w]", "[]");
    done(&o);
}

/* cuInit says 803 (the H100 machine, with its cuda-compat libcuda forced as the driver): the
 * fix names the libcuda taken and how to take the system's, not the generic device advice. */
static void test_driver_mismatch_fix(void **state) {
    (void)state;
    const char *env[] = {fake_driver, "FAKE_CUDA_INIT_ERROR=803", "CUDALOAD_SOURCES=caller", NULL};
    const char *args[] = {"--json", "--no-selftest", "--root", arg_root("toolkit-cu13-wheel"), NULL};
    run_out o;
    run_expect(&o, env, args, 2);
    ASSERT_JQ(&o, "[f for f in d[\"fixes\"] if \"nvidia-smi\" in f]", "[]");
    ASSERT_JQ(&o, "len([f for f in d[\"fixes\"] if d[\"libraries\"][\"cuda\"][\"path\"] in f and "
                  "\"`unset CUDALOAD_DRIVER_PATH`\" in f])", "1");
    done(&o);
}

/* cuInit says 804 after libcuda took a cuda-compat copy by itself (a GPU without forward
 * compatibility): the JSON names the copy as COMPAT_TAKEN, the system's driver as COMPAT_REPLACED,
 * and the fix is the opt-out, CUDALOAD_COMPAT=never. The system's driver runs CUDA 12.8, the
 * copy 13.9, the kernel module is 575 (the fake NVML beside the system's driver). */
static void test_compat_taken_then_804_fix(void **state) {
    (void)state;
    char sys[PATH_MAX];
    if (th_loader_resolves("libcuda.so.1", sys, sizeof sys) || access("/proc/driver/nvidia/version", F_OK) == 0) {
        print_message("skipped: this machine has a driver of its own (%s)\n", sys);
        skip();
    }
    char *top = th_tmpdir(), fake[PATH_MAX], dir[PATH_MAX + 32], file[PATH_MAX + 64], link[PATH_MAX + 64];
    char dirs_env[PATH_MAX + 64], home_env[PATH_MAX + 64];
    snprintf(fake, sizeof fake, "%s/fake/libcuda.so.1", getenv("CUDALOAD_TEST_BUILD"));
    snprintf(dir, sizeof dir, "%s/container", top);
    th_mkdirs(dir);
    snprintf(file, sizeof file, "%s/libcuda.so.1", dir);
    th_copy(fake, file);
    snprintf(file, sizeof file, "%s/libnvidia-ml.so.1", dir);
    th_copy(fake, file);
    snprintf(dirs_env, sizeof dirs_env, "CUDALOAD_DRIVER_DIRS=%s", dir);
    snprintf(dir, sizeof dir, "%s/cuda/compat", top);
    th_mkdirs(dir);
    snprintf(file, sizeof file, "%s/libcuda.so.590.10.01", dir);
    snprintf(link, sizeof link, "%s/libcuda.so.1", dir);
    th_copy(fake, file);
    th_symlink(file, link);
    snprintf(home_env, sizeof home_env, "CUDA_HOME=%s/cuda", top);
    const char *env[] = {dirs_env, home_env, "FAKE_CUDA_VERSION=12080", "FAKE_CUDA_COMPAT_VERSION=13090",
                         "FAKE_NVML_DRIVER_VERSION=575.51.03", "FAKE_CUDA_INIT_ERROR=804", "CUDALOAD_SOURCES=caller", NULL};
    const char *args[] = {"--json", "--no-selftest", "--root", arg_root("toolkit-cu13-wheel"), NULL};
    run_out o;
    run_expect(&o, env, args, 2);
    ASSERT_JQ(&o, "d[\"libraries\"][\"cuda\"][\"path\"].endswith(\"/cuda/compat/libcuda.so.590.10.01\")", "true");
    ASSERT_JQ(&o, "[c[\"reason_code\"] for c in d[\"libraries\"][\"cuda\"][\"candidates\"] if (c[\"path\"] or \"\").endswith(\"container/libcuda.so.1\")]",
              "[\"COMPAT_REPLACED\"]");
    ASSERT_JQ(&o, "[c[\"reason_code\"] for c in d[\"libraries\"][\"cuda\"][\"candidates\"] if c[\"result\"] == \"taken\"]",
              "[\"COMPAT_TAKEN\"]");
    ASSERT_JQ(&o, "d[\"libraries\"][\"cudart\"][\"status_code\"]", "CUDALOAD_OK");
    ASSERT_JQ(&o, "len([f for f in d[\"fixes\"] if \"`export CUDALOAD_COMPAT=never`\" in f])", "1");
    done(&o);
    free(top);
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
    /* --quiet silences the usage errors too, wherever it stands: the exit code alone */
    const char *q1[] = {"--quiet", "--bogus", NULL}, *q2[] = {"--bogus", "--quiet", NULL},
               *q3[] = {"--quiet", "--root", "relative/dir", NULL}, *q4[] = {"--quiet", "--root", NULL};
    const char *const *quiet_args[] = {q1, q2, q3, q4, a3};
    const char *const *quiet_env[] = {NULL, NULL, NULL, NULL, env};
    for (size_t i = 0; i < 5; i++) {
        run_expect(&o, quiet_env[i], quiet_args[i], 4);
        if (o.text[0] || o.err[0]) fail_msg("--quiet run %zu printed:\n%s%s", i, o.text, o.err);
        done(&o);
    }
    /* the word after --root is a directory, not the flag */
    const char *q5[] = {"--root", "--quiet", NULL};
    run_expect(&o, NULL, q5, 4);
    assert_non_null(strstr(o.err, "give an absolute path"));
    done(&o);
}

/* root (PATH_MAX) made a directory path of len bytes (components of 250 '0's), under dir. The
 * last component keeps at least one digit ("/%0*d" prints "0" even at width 0: the path was a
 * byte too long when len left one byte for it). */
static void deep_dir(char *root, const char *dir, size_t len) {
    int n = snprintf(root, PATH_MAX, "%s", dir);
    while ((size_t)n + 251 + 2 <= len) n += snprintf(root + n, PATH_MAX - (size_t)n, "/%0250d", 0);
    snprintf(root + n, PATH_MAX - (size_t)n, "/%0*d", (int)(len - (size_t)n - 1), 0);
}

/* cudart and cuBLAS each in a directory of nearly PATH_MAX bytes (hard links to the fixtures'
 * CUDA 13 files, two roots): the link flags (-L, -l: and -rpath for both) do not fit their
 * buffer. Before, the writer went on past the buffer once it was truncated; now the JSON's
 * link_flags is null (never a cut command line), lib_dirs has both directories whole, and the
 * text report prints both -L items. */
static void test_link_flags_too_long(void **state) {
    (void)state;
    const char *site = th_fixture_env("VENV_CU13_SITE");
    if (strcmp(th_fixture_env("CU13_CUBLAS"), "1") != 0) {
        print_message("skipped: the fixtures' CUDA 13 venv has no cuBLAS wheel (FIXTURES_CU13_CUBLAS=0)\n");
        skip();
    }
    /* under the build directory, where the fixtures are: hard links need the same file system */
    char top[PATH_MAX], cmd[PATH_MAX + 32];
    snprintf(top, sizeof top, "%s/probe-long-paths", getenv("CUDALOAD_TEST_BUILD"));
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", top);
    assert_int_equal(system(cmd), 0);
    static char roots[2][PATH_MAX];
    const char *files[2][3] = {{"libcudart.so.13", NULL}, {"libcublas.so.13", "libcublasLt.so.13", NULL}};
    for (int r = 0; r < 2; r++) {
        char base[PATH_MAX], lib[PATH_MAX + 32], src[PATH_MAX], dst[PATH_MAX + 64];
        snprintf(base, sizeof base, "%s/%c", top, 'a' + r);
        /* root/nvidia/cu13/lib/libcublasLt.so.13 is PATH_MAX - 1 bytes long */
        deep_dir(roots[r], base, PATH_MAX - 1 - strlen("/nvidia/cu13/lib/libcublasLt.so.13"));
        snprintf(lib, sizeof lib, "%s/nvidia/cu13/lib", roots[r]);
        th_mkdirs(lib);
        for (int f = 0; files[r][f]; f++) {
            snprintf(src, sizeof src, "%s/nvidia/cu13/lib/%s", site, files[r][f]);
            snprintf(dst, sizeof dst, "%s/%s", lib, files[r][f]);
            if (link(src, dst) != 0) fail_msg("link %s %s: %s", src, dst, strerror(errno));
        }
    }
    const char *env[] = {fake_driver, "FAKE_CUDA_DEVICES=0", "CUDALOAD_SOURCES=caller", NULL};
    const char *args[] = {"--json", "--root", roots[0], "--root", roots[1], NULL};
    run_out o;
    run_expect(&o, env, args, 2);
    ASSERT_JQ(&o, "[d[\"libraries\"][k][\"status\"] for k in (\"cudart\", \"cublas\")]", "[\"loaded\", \"loaded\"]");
    ASSERT_JQ(&o, "[len(x) for x in d[\"build\"][\"lib_dirs\"]]", "[4077, 4077]");
    ASSERT_JQ(&o, "d[\"build\"][\"link_flags\"]", "null");
    done(&o);
    const char *args_text[] = {"--root", roots[0], "--root", roots[1], NULL};
    run_expect(&o, env, args_text, 2);
    char want[PATH_MAX + 64];
    for (int r = 0; r < 2; r++) {
        snprintf(want, sizeof want, "-L%s/nvidia/cu13/lib", roots[r]);
        if (!strstr(o.text, want)) fail_msg("no %.60s... in the text report:\n%.2000s", want, o.text);
    }
    done(&o);
    assert_int_equal(system(cmd), 0);
}

/* With --json, wherever it stands, a usage error still prints JSON on stdout (a script parsing
 * it reads why): {"error": {"status", "message", "exit_code"}}, status being libcudaload's name
 * for a setting it refused, null for an argument of the probe's own; without --json stdout
 * stays empty, and --quiet prints nothing. */
static void test_json_usage_errors(void **state) {
    (void)state;
    run_out o;
    const char *bad_env[] = {"CUDALOAD_SOURCES=caller,bogus", NULL};
    const char *j[] = {"--json", NULL}, *j_bogus[] = {"--bogus", "--json", NULL},
               *j_lib[] = {"--json", "--lib", "nosuchlib", NULL}, *j_root[] = {"--root", "relative/dir", "--json", NULL},
               *j_libs[] = {"--json", "--libs", "cudart", NULL};
    struct {
        const char *const *env, *const *args;
        const char *status, *reason, *in_message;
    } cases[] = {
        {bad_env, j, "CUDALOAD_ERROR_INVALID_OPTION", "null", "bogus"},
        {NULL, j_bogus, "null", "UNKNOWN_ARGUMENT", "--bogus"},
        {NULL, j_lib, "CUDALOAD_ERROR_NOT_FOUND", "null", "nosuchlib"},
        {NULL, j_root, "null", "RELATIVE_PATH", "relative/dir"},
        {bad_env, j_libs, "CUDALOAD_ERROR_INVALID_OPTION", "null", "bogus"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_expect(&o, cases[i].env, cases[i].args, 4);
        ASSERT_JQ(&o, "sorted(d)", "[\"error\"]");
        ASSERT_JQ(&o, "sorted(d[\"error\"])", "[\"exit_code\", \"message\", \"reason_code\", \"status\"]");
        ASSERT_JQ(&o, "d[\"error\"][\"exit_code\"]", "4");
        ASSERT_JQ(&o, "d[\"error\"][\"status\"]", cases[i].status);
        ASSERT_JQ(&o, "d[\"error\"][\"reason_code\"]", cases[i].reason);
        char expr[256];
        snprintf(expr, sizeof expr, "\"%s\" in d[\"error\"][\"message\"]", cases[i].in_message);
        ASSERT_JQ(&o, expr, "true");
        assert_non_null(strstr(o.err, cases[i].in_message)); /* and the message on stderr, as without --json */
        done(&o);
    }
    run_expect(&o, bad_env, NULL, 4);
    assert_string_equal(o.text, "");
    done(&o);
    const char *jq_quiet[] = {"--json", "--quiet", "--bogus", NULL};
    run_expect(&o, NULL, jq_quiet, 4);
    if (o.text[0] || o.err[0]) fail_msg("--quiet --json printed:\n%s%s", o.text, o.err);
    done(&o);
}

/* An empty value or a missing name is a usage error (exit 4), never a list that quietly names
 * less than was typed: --lib '' or with an empty element, --cflags / --libs with no name,
 * --parts '' or with an empty element, --load with nothing to load, an empty --root or
 * --cuda-root. With --json the error object gives the reason code; nothing is searched. */
static void test_empty_values_are_usage_errors(void **state) {
    (void)state;
    static const char *const cases[][5] = {
        {"--lib", "", NULL, "EMPTY_NAME"},
        {"--lib=", NULL, NULL, "EMPTY_NAME"},
        {"--lib", ",", NULL, "EMPTY_NAME"},
        {"--lib", "cufft,", NULL, "EMPTY_NAME"},
        {"--lib", "cufft,,curand", NULL, "EMPTY_NAME"},
        {"--cflags", NULL, NULL, "NAMES_MISSING"},
        {"--cflags", "--find-only", NULL, "NAMES_MISSING"},
        {"--cflags", "", NULL, "EMPTY_NAME"},
        {"--libs", NULL, NULL, "NAMES_MISSING"},
        {"--libs", "cudart,", NULL, "EMPTY_NAME"},
        {"--parts", "", NULL, "EMPTY_NAME"},
        {"--parts", "nvcc,", NULL, "EMPTY_NAME"},
        {"--load", NULL, NULL, "NAMES_MISSING"},
        {"--root", "", NULL, "RELATIVE_PATH"},
        {"--root=", NULL, NULL, "RELATIVE_PATH"},
        {"--cuda-root", "", NULL, "RELATIVE_PATH"},
    };
    const char *env[] = {fake_driver, "CUDALOAD_SOURCES=caller", NULL};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *args[6] = {"--json"};
        size_t n = 1;
        for (size_t k = 0; k < 3 && cases[i][k]; k++) args[n++] = cases[i][k];
        run_out o;
        run_probe(&o, env, args);
        if (o.code != 4) fail_msg("case %zu (%s '%s'): exit %d, want 4\n%s%s", i, cases[i][0], cases[i][1] ? cases[i][1] : "",
                                  o.code, o.text, o.err);
        ASSERT_JQ(&o, "sorted(d)", "[\"error\"]");
        ASSERT_JQ(&o, "d[\"error\"][\"exit_code\"]", "4");
        ASSERT_JQ(&o, "d[\"error\"][\"status\"]", "null");
        ASSERT_JQ(&o, "d[\"error\"][\"reason_code\"]", cases[i][3]);
        assert_true(o.err[0] != 0); /* and said on stderr */
        done(&o);
        /* the same without --json: stdout stays empty */
        run_probe(&o, env, args + 1);
        assert_int_equal(o.code, 4);
        assert_string_equal(o.text, "");
        done(&o);
    }
    /* the names the modes need, given: not a usage error (the library found or not: 0 or 1) */
    const char *ok_lib[] = {"--json", "--no-selftest", "--lib", "cufft", "--load", "--root", arg_root("toolkit-cu13-wheel"), NULL};
    run_out o;
    run_probe(&o, env, ok_lib);
    assert_true(o.code != 4);
    ASSERT_JQ(&o, "\"cufft\" in d[\"libraries\"]", "true");
    done(&o);
}

/* A --root that does not exist, is a regular file, or cannot be examined (a symbolic link to
 * itself: ELOOP) is searched for nothing: a warning each, as data in the JSON's root_warnings
 * (code, path, source, errno) and in its warnings, and in the text report's Warnings, with the
 * root's line marked. The exit code is the search's: 2 when the good root beside them has the
 * libraries (no device), 1 when there is nothing else to search. */
static void test_unusable_roots_warned(void **state) {
    (void)state;
    char *dir = th_tmpdir();
    char missing[PATH_MAX], file[PATH_MAX], loop[PATH_MAX];
    snprintf(missing, sizeof missing, "%s/nonexistent", dir);
    snprintf(file, sizeof file, "%s/a-file", dir);
    snprintf(loop, sizeof loop, "%s/loop", dir);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fclose(f);
    if (symlink(loop, loop) != 0) fail_msg("symlink %s: %s", loop, strerror(errno));
    const char *good = arg_root("toolkit-cu13-wheel");
    const char *env[] = {fake_driver, "FAKE_CUDA_DEVICES=0", "CUDALOAD_SOURCES=caller", NULL};
    const char *args[] = {"--json", "--root", missing, "--root", file, "--root", loop, "--root", good, NULL};
    run_out o;
    run_expect(&o, env, args, 2); /* as without the bad roots: found in the good one, no device */
    ASSERT_JQ(&o, "[(w[\"code\"], w[\"source\"], w[\"errno\"] is None) for w in d[\"root_warnings\"]]",
              "[[\"ROOT_NOT_FOUND\", \"caller\", true], [\"ROOT_NOT_A_DIRECTORY\", \"caller\", true], "
              "[\"ROOT_UNREADABLE\", \"caller\", false]]");
    ASSERT_JQ(&o, "[type(w[\"errno\"]) is int and w[\"errno\"] > 0 for w in d[\"root_warnings\"][2:]]", "[true]");
    char expr[4 * PATH_MAX], want[4 * PATH_MAX];
    snprintf(expr, sizeof expr, "[w[\"path\"] for w in d[\"root_warnings\"]] == [r[\"path\"] for r in d[\"roots\"][:3]]");
    ASSERT_JQ(&o, expr, "true");
    snprintf(want, sizeof want, "[\"%s\", \"%s\", \"%s\"]", missing, file, loop);
    ASSERT_JQ(&o, "[w[\"path\"] for w in d[\"root_warnings\"]]", want);
    ASSERT_JQ(&o, "[r[\"exists\"] for r in d[\"roots\"]]", "[false, false, false, true]");
    /* each also one of the warnings, naming its root */
    ASSERT_JQ(&o, "[len([t for t in d[\"warnings\"] if w[\"path\"] in t]) for w in d[\"root_warnings\"]]", "[1, 1, 1]");
    ASSERT_JQ(&o, "d[\"libraries\"][\"cudart\"][\"status\"]", "loaded");
    done(&o);
    /* the text report: a Warnings section naming each root; the exit code the same */
    run_expect(&o, env, args + 1, 2);
    const char *w = strstr(o.text, "\nWarnings\n");
    if (!w) fail_msg("no Warnings section:\n%s", o.text);
    const char *paths[] = {missing, file, loop};
    for (size_t i = 0; i < 3; i++)
        if (!strstr(w, paths[i])) fail_msg("the Warnings do not name %s:\n%s", paths[i], o.text);
    done(&o);
    /* nothing else to search: exit 1 as for any root without the libraries, and the warning */
    const char *only[] = {"--json", "--root", missing, NULL};
    run_expect(&o, env, only, 1);
    ASSERT_JQ(&o, "[w[\"code\"] for w in d[\"root_warnings\"]]", "[\"ROOT_NOT_FOUND\"]");
    done(&o);
    /* a good root alone: no root warning */
    const char *fine[] = {"--json", "--root", good, NULL};
    run_expect(&o, env, fine, 2);
    ASSERT_JQ(&o, "d[\"root_warnings\"]", "[]");
    done(&o);
    /* the modes without a report say it on stderr; their stdout and exit code are unchanged */
    const char *libs[] = {"--root", missing, "--root", good, "--libs", "cudart", NULL};
    run_expect(&o, env, libs, 0);
    assert_true(strncmp(o.text, "-L", 2) == 0);
    if (!strstr(o.err, missing)) fail_msg("--libs: no warning naming %s on stderr:\n%s", missing, o.err);
    done(&o);
    const char *libs_quiet[] = {"--quiet", "--root", missing, "--root", good, "--libs", "cudart", NULL};
    run_expect(&o, env, libs_quiet, 0);
    assert_string_equal(o.err, "");
    done(&o);
    unlink(loop);
    unlink(file);
    free(dir);
}

/* A relative CUDA_HOME, CUDA_PATH, CONDA_PREFIX or VIRTUAL_ENV is ignored by the search: the
 * report says so, naming the variable; an absolute one draws no such line. */
static void test_relative_env_warned(void **state) {
    (void)state;
    char *empty = th_tmpdir();
    const char *env[] = {fake_driver, "CUDALOAD_SOURCES=caller,venv,conda,cuda_home", "CUDA_HOME=rel/cuda", "CUDA_PATH=cuda",
                         "CONDA_PREFIX=env", "VIRTUAL_ENV=.venv", NULL};
    const char *args[] = {"--json", "--root", empty, NULL};
    run_out o;
    run_expect(&o, env, args, 1);
    ASSERT_JQ(&o, "[r[\"source\"] for r in d[\"roots\"]]", "[\"caller\"]");
    static const char *const set[] = {"CUDA_HOME=rel/cuda", "CUDA_PATH=cuda", "CONDA_PREFIX=env", "VIRTUAL_ENV=.venv"};
    for (size_t i = 0; i < 4; i++) {
        char want[256];
        snprintf(want, sizeof want, "any(w.startswith(\"%s is not used: relative values are ignored\") for w in "
                 "d[\"warnings\"])", set[i]);
        ASSERT_JQ(&o, want, "true");
    }
    done(&o);
    const char *args_text[] = {"--root", empty, NULL};
    run_expect(&o, env, args_text, 1);
    ASSERT_TEXT(&o, "! CUDA_HOME=rel/cuda is not used: relative values are ignored (the search never depends on the "
                    "current directory); give an absolute path: export CUDA_HOME=\"$(realpath -- rel/cuda)\"");
    done(&o);
    const char *env2[] = {fake_driver, "CUDALOAD_SOURCES=caller", "CUDA_HOME=/nonexistent/cuda", "CONDA_PREFIX=", NULL};
    run_expect(&o, env2, args, 1);
    ASSERT_JQ(&o, "any(\"relative\" in w for w in d[\"warnings\"])", "false");
    done(&o);
    free(empty);
}

/* Columns of the n bytes at s (a UTF-8 sequence takes one). */
static size_t cols_of(const char *s, size_t n) {
    size_t c = 0;
    for (size_t i = 0; i < n; i++) c += ((unsigned char)s[i] & 0xc0) != 0x80;
    return c;
}

/* Whether the n bytes at s are one thing that cannot be broken, with at most a ` \`
 * continuation after it: a word without a blank that holds a path (or a flag or command
 * holding one) or is 40 columns or more, or one of the report's commands (cmds: the
 * `backquoted` commands of its fixes and warnings, separated by \x1f; may be NULL). */
static int one_unbreakable(const char *s, size_t n, const char *cmds) {
    if (n >= 2 && s[n - 2] == ' ' && s[n - 1] == '\\') n -= 2;
    if (!n) return 0;
    if (!memchr(s, ' ', n)) return memchr(s, '/', n) != NULL || n >= 40;
    for (const char *c = cmds; c && *c;) {
        size_t len = strcspn(c, "\x1f");
        if (len == n && memcmp(c, s, n) == 0) return 1;
        c += len;
        if (*c) c++;
    }
    return 0;
}

/* Every line of the text report fits 80 columns, except a line that holds a single thing
 * that cannot be broken (a path, a flag holding one, a command) which is itself too wide:
 * then only the report's left margin (an indent, a label such as "link" or "fix:", a `-`
 * mark: at most 14 columns) may stand before it, and only a ` \` after it. A line with
 * two such things (a flag and another flag, a path and a note) could have been split. */
static void assert_fits_80(const run_out *o, const char *cmds) {
    const char *s = o->text;
    while (*s) {
        size_t len = strcspn(s, "\n");
        int ok = cols_of(s, len) <= 80;
        for (size_t p = 0; !ok && p < len && cols_of(s, p) <= 14; p++)
            if ((p == 0 || s[p - 1] == ' ') && s[p] != ' ') ok = one_unbreakable(s + p, len - p, cmds);
        if (!ok) fail_msg("a line of %zu columns that could wrap:\n%.*s\nin\n%s", cols_of(s, len), (int)len, s, o->text);
        s += len;
        if (*s) s++;
    }
}

/* The `backquoted` commands of a report's fixes and warnings, \x1f-separated (malloc'd). */
static char *report_commands(const char *const *env, const char *const *args) {
    const char *a[8];
    size_t n = 0;
    for (; args[n] && n < 6; n++) a[n] = args[n];
    a[n++] = "--json";
    a[n] = NULL;
    run_out o;
    run_probe(&o, env, a);
    char *cmds = strdup(jq(&o, "\"\\x1f\".join(c for t in d[\"fixes\"] + d[\"warnings\"] for c in t.split(\"`\")[1::2])"));
    done(&o);
    return cmds;
}

static void test_text_fits_80_columns(void **state) {
    (void)state;
    char llp[PATH_MAX + 32];
    snprintf(llp, sizeof llp, "LD_LIBRARY_PATH=%s", th_fixture("conda/lib"));
    const char *site12 = th_fixture_env("VENV_CU12_SITE");
    char *empty = th_tmpdir();
    /* paths long enough to overflow wherever the fixtures are: a missing root, a root whose
     * libcudart is truncated (a skipped candidate), a root with the real files; that one
     * also in LD_LIBRARY_PATH as another copy (a warning), and a link line of 4 flags */
    char *tmp = th_tmpdir(), base[PATH_MAX], missing[PATH_MAX], bad[PATH_MAX], good[PATH_MAX], f[PATH_MAX + 32];
    char llp_long[PATH_MAX + 32];
    snprintf(base, sizeof base, "%s/a-directory-name-long-enough-to-push-every-path-in-it-past-the-edge", tmp);
    snprintf(missing, sizeof missing, "%s/missing", base);
    snprintf(bad, sizeof bad, "%s/bad", base);
    snprintf(good, sizeof good, "%s/good", base);
    th_mkdirs(bad);
    th_mkdirs(good);
    snprintf(f, sizeof f, "%s/libcudart.so.13", bad);
    th_symlink(th_fixture("bad/truncated/lib/libcudart.so.13"), f);
    snprintf(f, sizeof f, "%s/libcublas.so.13", bad);
    th_symlink(th_fixture("conda/lib/libcublas.so.13"), f);
    link_into("conda/lib", good);
    snprintf(llp_long, sizeof llp_long, "LD_LIBRARY_PATH=%s", bad);
    struct {
        const char *env[6];
        const char *args[8];
    } cases[] = {
        {{fake_driver, "FAKE_CUDA_DEVICES=0", "CUDALOAD_SOURCES=caller", llp, NULL}, {"--root", site12, NULL}},
        {{fake_driver, "FAKE_CUDA_VERSION=11080", "CUDALOAD_SOURCES=caller", NULL}, {"--root", site12, NULL}},
        {{fake_driver, "FAKE_CUDA_VERSION=12040", "CUDALOAD_SOURCES=caller", NULL}, {"--root", arg_root("toolkit-cu13-wheel"), NULL}},
        {{fake_driver, "CUDALOAD_SOURCES=caller", NULL}, {"--root", empty, NULL}},
        {{fake_driver, "FAKE_CUDA_DEVICES=1", "CUDALOAD_SOURCES=caller", NULL}, {"--root", arg_root("toolkit-cu13-wheel"), NULL}},
        {{"CUDALOAD_DRIVER_PATH=/nonexistent/libcuda.so.1", "CUDALOAD_SOURCES=caller", NULL}, {"--root", site12, NULL}},
        {{fake_driver, "FAKE_CUDA_DEVICES=0", "CUDALOAD_SOURCES=caller", llp_long, NULL},
         {"--root", missing, "--root", bad, "--root", good, NULL}},
        {{fake_driver, "FAKE_CUDA_DEVICES=0", "CUDALOAD_SOURCES=caller", NULL}, {"--find-only", "--root", good, NULL}},
        {{NULL}, {"--help", NULL}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int help = strcmp(cases[i].args[0], "--help") == 0;
        char *cmds = help ? NULL : report_commands(cases[i].env, cases[i].args);
        run_out o;
        run_probe(&o, cases[i].env, cases[i].args);
        assert_fits_80(&o, cmds);
        assert_null(strstr(o.text, "\033[")); /* not a terminal: no colour */
        done(&o);
        free(cmds);
    }
    free(empty);
    free(tmp);
}

/* The link flags are separate items: a long library directory puts `-L dir` on a line of
 * its own and each -l: flag on its own, never two flags past the 80th column. */
static void test_link_flags_split(void **state) {
    (void)state;
    char *tmp = th_tmpdir(), dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/a-library-directory-whose-name-alone-fills-most-of-a-terminal-line", tmp);
    th_mkdirs(dir);
    link_into("conda/lib", dir);
    const char *env[] = {fake_driver, "FAKE_CUDA_DEVICES=0", "CUDALOAD_SOURCES=caller", NULL};
    const char *args[] = {"--root", dir, NULL};
    run_out o;
    run_expect(&o, env, args, 2);
    char want[PATH_MAX + 64];
    snprintf(want, sizeof want, "\n  link     -L%s \\\n           -l:libcudart.so.13 \\\n           -l:libcublas.so.13\n", dir);
    if (!strstr(o.text, want)) fail_msg("report lacks the split link block\n%s\nin:\n%s", want, o.text);
    assert_fits_80(&o, NULL);
    done(&o);
    free(tmp);
}

static void test_colour_only_on_terminal(void **state) {
    (void)state;
    const char *env[] = {fake_driver, "FAKE_CUDA_DEVICES=0", "CUDALOAD_SOURCES=caller", NULL};
    const char *args[] = {"--root", arg_root("toolkit-cu13-wheel"), NULL};
    run_out o;
    run_probe_tty(&o, env, args);
    assert_int_equal(o.code, 2);
    if (!strstr(o.text, "\033[1m")) fail_msg("no colour on a terminal:\n%s", o.text);
    ASSERT_TEXT(&o, "Result");
    done(&o);
    const char *env_nc[] = {fake_driver, "FAKE_CUDA_DEVICES=0", "CUDALOAD_SOURCES=caller", "NO_COLOR=1", NULL};
    run_probe_tty(&o, env_nc, args);
    assert_int_equal(o.code, 2);
    if (strstr(o.text, "\033[")) fail_msg("colour despite NO_COLOR:\n%s", o.text);
    ASSERT_TEXT(&o, "Result");
    done(&o);
    const char *args_json[] = {"--json", "--root", arg_root("toolkit-cu13-wheel"), NULL};
    run_probe_tty(&o, env, args_json);
    if (strstr(o.text, "\033[")) fail_msg("colour in JSON:\n%s", o.text);
    done(&o);
}

/* --find-only dlopens no CUDA library at all: the dynamic loader's own trace of the probe
 * (LD_DEBUG=files) names none, while the same run without the flag names them. */
static void test_find_only_loads_nothing(void **state) {
    (void)state;
    const char *env[] = {fake_driver, "CUDALOAD_SOURCES=caller", "LD_DEBUG=files", NULL};
    const char *args[] = {"--json", "--find-only", "--root", arg_root("toolkit-cu13-wheel"), NULL};
    run_out o;
    run_expect(&o, env, args, 0);
    ASSERT_JQ(&o, "[d[\"libraries\"][k][\"status\"] for k in (\"cuda\", \"cudart\", \"cublasLt\", \"cublas\")]",
              "[\"found\", \"found\", \"found\", \"found\"]");
    ASSERT_JQ(&o, "d[\"find_only\"]", "true");
    static const char *const libs[] = {"libcuda.so", "libcudart.so", "libcublas.so", "libcublasLt.so"};
    for (size_t i = 0; i < 4; i++)
        if (strstr(o.err, libs[i])) fail_msg("--find-only loaded %s:\n%s", libs[i], o.err);
    if (!strstr(o.err, "file=")) fail_msg("LD_DEBUG=files traced nothing:\n%s", o.err);
    done(&o);
    const char *env2[] = {fake_driver, "FAKE_CUDA_DEVICES=0", "CUDALOAD_SOURCES=caller", "LD_DEBUG=files", NULL};
    const char *args2[] = {"--json", "--root", arg_root("toolkit-cu13-wheel"), NULL};
    run_expect(&o, env2, args2, 2);
    for (size_t i = 0; i < 4; i++)
        if (!strstr(o.err, libs[i])) fail_msg("the trace does not show %s being loaded:\n%s", libs[i], o.err);
    done(&o);
}

/* The documented types of every key (docs/probe.md), checked on a full report. */
static void test_json_types(void **state) {
    (void)state;
    const char *env[] = {fake_driver, "FAKE_CUDA_DEVICES=1", "CUDALOAD_SOURCES=caller", NULL};
    const char *args[] = {"--json", "--root", th_fixture_env("VENV_CU12_SITE"), NULL};
    run_out o;
    run_expect(&o, env, args, 3); /* the fake device cannot run the self-test */
    ASSERT_JQ(&o, "sorted(d.keys()) == sorted([\"schema_version\", \"cudaload_version\", \"exit_code\", \"find_only\", "
                  "\"init_status\", \"system_search\", \"roots\", \"libraries\", \"driver\", \"devices\", \"devices_status\", "
                  "\"kernels\", \"environment\", \"build\", \"selftest\", \"warnings\", \"root_warnings\", \"problems\", "
                  "\"fixes\", \"message\", \"fix_plan\"])",
              "true");
    ASSERT_JQ(&o, "type(d[\"schema_version\"]) is int and d[\"exit_code\"] == 3 and type(d[\"find_only\"]) is bool", "true");
    ASSERT_JQ(&o, "all(r[\"path\"].startswith(\"/\") and type(r[\"exists\"]) is bool for r in d[\"roots\"])", "true");
    ASSERT_JQ(&o, "all(set(d[\"libraries\"][k]) == {\"status\", \"status_code\", \"soname\", \"major\", \"source\", "
                  "\"already_loaded\", \"branch\", \"path\", \"version\", \"newer_than_driver\", \"candidates\", \"fixes\"} "
                  "for k in (\"cuda\", \"cudart\", \"cublasLt\", \"cublas\"))", "true");
    ASSERT_JQ(&o, "[type(d[\"libraries\"][k][\"major\"]) is int and d[\"libraries\"][k][\"fixes\"] == [] "
                  "for k in (\"cudart\", \"cublasLt\", \"cublas\")]", "[true, true, true]");
    ASSERT_JQ(&o, "all(d[\"libraries\"][k][\"status\"] in (\"loaded\", \"found\", \"not_found\", \"error\") and "
                  "d[\"libraries\"][k][\"path\"].startswith(\"/\") and type(d[\"libraries\"][k][\"version\"]) is int "
                  "for k in (\"cuda\", \"cudart\", \"cublasLt\", \"cublas\"))", "true");
    ASSERT_JQ(&o, "all(set(c) == {\"path\", \"soname\", \"source\", \"result\", \"status_code\", \"reason_code\", \"reason\"} "
                  "and c[\"result\"] in (\"taken\", \"skipped\") and c[\"path\"].startswith(\"/\") and c[\"soname\"] is None "
                  "and (c[\"reason_code\"] in (\"TAKEN\", \"REUSED\", \"FOUND\")) == (c[\"result\"] == \"taken\") "
                  "for k in d[\"libraries\"] if k != \"nvrtc\" for c in d[\"libraries\"][k][\"candidates\"])",
              "true");
    ASSERT_JQ(&o, "type(d[\"driver\"][\"cuda_version\"]) is int", "true");
    int built = strcmp(jq(&o, "d[\"kernels\"][\"built\"]"), "true") == 0; /* not in the build without nvcc */
    ASSERT_JQ(&o, "[(x[\"index\"], type(x[\"memory_bytes\"]) is int, x[\"has_sass\"], x[\"kernels\"] in (\"sass\", \"ptx_jit\", \"none\")) "
                  "for x in d[\"devices\"]]", built ? "[[0, true, true, true]]" : "[[0, true, false, true]]");
    ASSERT_JQ(&o, "type(d[\"kernels\"][\"built\"]) is bool and all(type(a) is int for a in d[\"kernels\"][\"sass\"])", "true");
    ASSERT_JQ(&o, "sorted(d[\"selftest\"]) == [\"cublas\", \"saxpy\", \"saxpy_gbps\", \"sgemm\", \"sgemm_tflops\"] and "
                  "d[\"selftest\"][\"sgemm\"][\"pass\"] is False and d[\"selftest\"][\"saxpy_gbps\"] is None and "
                  "d[\"selftest\"][\"cublas\"] is None", "true");
    ASSERT_JQ(&o, "any(p.startswith(\"self-test SAXPY: \") for p in d[\"problems\"])", "true");
    ASSERT_JQ(&o, "all(type(v) in (str, type(None)) for v in d[\"environment\"].values()) and "
                  "\"CUDA_VISIBLE_DEVICES\" in d[\"environment\"]", "true");
    done(&o);
    /* a system-search attempt that found nothing has no path, only the SONAME it asked the
     * dynamic loader for; every path there is absolute */
    const char *env2[] = {"CUDALOAD_SOURCES=caller,system", NULL};
    char *empty = th_tmpdir();
    const char *args2[] = {"--json", "--root", empty, NULL};
    run_probe(&o, env2, args2);
    ASSERT_JQ(&o, "all((c[\"path\"].startswith(\"/\") and c[\"soname\"] is None) if c[\"path\"] is not None else "
                  "(c[\"source\"] == \"system\" and c[\"soname\"].startswith(\"lib\") and \" \" not in c[\"soname\"]) "
                  "for k in (\"cuda\", \"cudart\", \"cublasLt\", \"cublas\") for c in d[\"libraries\"][k][\"candidates\"])",
              "true");
    done(&o);
    /* a library that failed carries the advisor's fixes as data: without a driver, the wheels
     * of both majors for the runtime, the driver's installation for the driver */
    const char *env3[] = {"CUDALOAD_SOURCES=caller", "CUDALOAD_DRIVER_PATH=/nonexistent/libcuda.so.1", NULL};
    run_probe(&o, env3, args2);
    ASSERT_JQ(&o, "all(set(f) == {\"kind\", \"major\", \"branch\", \"packages\", \"requirements\", \"setting\"} and "
                  "f[\"kind\"] in (\"pip_install\", \"upgrade_driver\", \"install_driver\", \"check_setting\") and "
                  "(f[\"kind\"] != \"pip_install\" or (type(f[\"major\"]) is int and len(f[\"packages\"]) == len(f[\"requirements\"]) > 0)) "
                  "for k in d[\"libraries\"] if k != \"nvrtc\" for f in d[\"libraries\"][k][\"fixes\"])", "true");
    ASSERT_JQ(&o, "[(f[\"kind\"], f[\"major\"]) for f in d[\"libraries\"][\"cudart\"][\"fixes\"]]",
              "[[\"pip_install\", 13], [\"pip_install\", 12]]");
    ASSERT_JQ(&o, "[(f[\"kind\"], f[\"setting\"]) for f in d[\"libraries\"][\"cuda\"][\"fixes\"]]",
              "[[\"check_setting\", \"CUDALOAD_DRIVER_PATH\"]]");
    done(&o);
    free(empty);
}

/* Runs Python code on a JSON report and a text report of the same set-up (sys.argv[1], [2]);
 * its first line of output. */
static char *py_on_reports(const run_out *json, const run_out *text, const char *code) {
    char script[64] = "/tmp/cudaload-probe-py-XXXXXX", cmd[256];
    int fd = mkstemp(script);
    assert_true(fd >= 0);
    assert_true(write(fd, code, strlen(code)) == (ssize_t)strlen(code));
    close(fd);
    snprintf(cmd, sizeof cmd, "python3 %s %s %s", script, json->path, text->path);
    FILE *p = popen(cmd, "r");
    static char buf[16384];
    size_t n = fread(buf, 1, sizeof buf - 1, p);
    buf[n] = 0;
    int st = pclose(p);
    unlink(script);
    if (st != 0) fail_msg("python3 failed on the reports:\n%s", buf);
    buf[strcspn(buf, "\n")] = 0;
    return buf;
}

/* The text and the JSON report show a library from one field list (tools/probe_fields.c):
 * whatever the JSON says of a library and of each candidate listed is in the text too (the
 * state, SONAME, CUDA major, source, path; each candidate's path, source, reason code and
 * reason), whether it was taken, skipped for a corrupt file, for the driver, or not found. */
static const char text_has_json[] =
    "import json, sys\n"
    "d = json.load(open(sys.argv[1]))\n"
    "t = ' '.join(open(sys.argv[2]).read().split())\n"
    "missing = []\n"
    "for name, l in d['libraries'].items():\n"
    "    if 'candidates' not in l:\n"
    "        continue\n"
    "    ok = l['status'] in ('loaded', 'found')\n"
    "    want = [name]\n"
    "    if ok:\n"
    "        want += [l['status'] + ' ' + l['soname'], l['path'], 'from ' + l['source']]\n"
    "        want += ['(CUDA %d)' % l['major']] if l['major'] else []\n"
    "        want += ['(already loaded)'] if l['already_loaded'] else []\n"
    "        want += ['branch ' + l['branch']] if l['branch'] else []\n"
    "    else:\n"
    "        want.append('(' + l['status_code'] + ')')\n"
    "    for c in l['candidates'] if not (ok and len(l['candidates']) == 1) else []:\n"
    "        reason = ' '.join(c['reason'].split())\n"
    "        want += [(c['path'] or c['soname']), '[' + c['source'] + ']', reason]\n"
    "        want += [c['reason_code'] + ': ' + reason] if c['result'] == 'skipped' else []\n"
    "    missing += [name + ': ' + w for w in want if w not in t]\n"
    "print(json.dumps(missing))\n";

static void test_text_and_json_agree(void **state) {
    (void)state;
    const char *env13[] = {fake_driver, "FAKE_CUDA_DEVICES=0", "CUDALOAD_SOURCES=caller", NULL};
    const char *env12[] = {fake_driver, "FAKE_CUDA_DEVICES=0", "FAKE_CUDA_VERSION=12040", "CUDALOAD_SOURCES=caller", NULL};
    const char *const *envs[] = {env13, env12};
    for (size_t i = 0; i < 2; i++) {
        const char *json_args[] = {"--json", "--root", arg_root("bad/truncated/lib"), "--root", arg_root("toolkit-cu13-wheel"),
                                   "--lib", "cufft", NULL};
        run_out j, t;
        run_probe(&j, envs[i], json_args);
        run_probe(&t, envs[i], json_args + 1);
        assert_int_equal(j.code, t.code);
        /* the set-ups have what they are for: a candidate skipped, a library taken, one not found */
        ASSERT_JQ(&j, "[c[\"reason_code\"] for c in d[\"libraries\"][\"cudart\"][\"candidates\"]]",
                  i == 0 ? "[\"FILE_UNUSABLE\", \"TAKEN\"]" : "[\"DRIVER_TOO_OLD\", \"DRIVER_TOO_OLD\"]");
        ASSERT_JQ(&j, "d[\"libraries\"][\"cufft\"][\"status\"]", "not_found");
        const char *missing = py_on_reports(&j, &t, text_has_json);
        if (strcmp(missing, "[]") != 0) fail_msg("the text lacks what the JSON says: %s\n%s", missing, t.text);
        done(&j);
        done(&t);
    }
}

/* The build flags for the CUDA 12 wheels: the include dirs hold the headers, the link form
 * is -L dir -l:SONAME, and a $ORIGIN-relative rpath is offered for a wheel. */
static void test_build_flags_cu12(void **state) {
    (void)state;
    const char *env[] = {fake_driver, "FAKE_CUDA_DEVICES=0", "CUDALOAD_SOURCES=caller", NULL};
    const char *site = th_fixture_env("VENV_CU12_SITE");
    const char *args[] = {"--json", "--root", site, NULL};
    run_out o;
    run_expect(&o, env, args, 2);
    ASSERT_JQ(&o, "[__import__(\"os\").path.exists(i + \"/\" + h) for i, h in zip(d[\"build\"][\"include_dirs\"], "
                  "(\"cuda_runtime_api.h\", \"cublas_v2.h\"))]", "[true, true]");
    ASSERT_JQ(&o, "[x.split(\"site-packages/\")[1] for x in d[\"build\"][\"lib_dirs\"]]",
              "[\"nvidia/cuda_runtime/lib\", \"nvidia/cublas/lib\"]");
    ASSERT_JQ(&o, "d[\"build\"][\"origin_rpath\"]", "[\"$ORIGIN/../nvidia/cuda_runtime/lib\", \"$ORIGIN/../nvidia/cublas/lib\"]");
    ASSERT_JQ(&o, "all(f in d[\"build\"][\"link_flags\"].split() for f in (\"-l:libcudart.so.12\", \"-l:libcublas.so.12\", "
                  "\"-Wl,--disable-new-dtags\"))", "true");
    done(&o);
    const char *args_text[] = {"--root", site, NULL};
    run_expect(&o, env, args_text, 2);
    ASSERT_TEXT(&o, "Build against what was found");
    ASSERT_TEXT(&o, "-l:libcudart.so.12 \\");
    ASSERT_TEXT(&o, "-Wl,-rpath,'$ORIGIN/../nvidia/cuda_runtime/lib' \\");
    ASSERT_TEXT(&o, "-Wl,-rpath,'$ORIGIN/../nvidia/cublas/lib'");
    done(&o);
}

/* No device: what to check, and CUDA_VISIBLE_DEVICES when it is set. */
static void test_no_device_hints(void **state) {
    (void)state;
    const char *env[] = {fake_driver, "FAKE_CUDA_DEVICES=0", "CUDALOAD_SOURCES=caller", "CUDA_VISIBLE_DEVICES=", NULL};
    const char *args[] = {"--root", arg_root("toolkit-cu13-wheel"), NULL};
    run_out o;
    run_expect(&o, env, args, 2);
    ASSERT_TEXT(&o, "devices: the CUDA driver (CUDA 13.0) reports no device: CUDA_ERROR_NO_DEVICE");
    ASSERT_TEXT(&o, "fix: CUDA_VISIBLE_DEVICES= may hide the GPUs: unset CUDA_VISIBLE_DEVICES");
    ASSERT_TEXT(&o, "fix: check that nvidia-smi lists a GPU");
    done(&o);
    /* a driver override that names no file */
    const char *env2[] = {"CUDALOAD_DRIVER_PATH=/nonexistent/libcuda.so.1", "CUDALOAD_SOURCES=caller", NULL};
    const char *args_json[] = {"--json", "--root", arg_root("toolkit-cu13-wheel"), NULL};
    run_expect(&o, env2, args_json, 2);
    ASSERT_JQ(&o, "d[\"libraries\"][\"cuda\"][\"status_code\"]", "CUDALOAD_ERROR_OVERRIDE_UNUSABLE");
    ASSERT_JQ(&o, "[(f[\"kind\"], f[\"setting\"], f[\"libraries\"]) for f in d[\"fix_plan\"]]",
              "[[\"check_setting\", \"CUDALOAD_DRIVER_PATH\", [\"cuda\"]]]");
    ASSERT_JQ(&o, "any(\"`unset CUDALOAD_DRIVER_PATH`\" in f for f in d[\"fixes\"])", "true");
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
        cmocka_unit_test(test_stubs_on_ld_library_path),
        cmocka_unit_test(test_selftest_without_cublas),
        cmocka_unit_test(test_minor_version_compatibility),
        cmocka_unit_test(test_driver_mismatch_fix),
        cmocka_unit_test(test_compat_taken_then_804_fix),
        cmocka_unit_test(test_find_only),
        cmocka_unit_test(test_hostile_path),
        cmocka_unit_test(test_nvrtc_reported_when_present),
        cmocka_unit_test(test_writable_library_warned),
        cmocka_unit_test(test_selftest_failure_is_reported),
        cmocka_unit_test(test_every_device_listed_and_tested),
        cmocka_unit_test(test_usage_errors),
        cmocka_unit_test(test_json_usage_errors),
        cmocka_unit_test(test_link_flags_too_long),
        cmocka_unit_test(test_cu13_only_with_cu12_driver),
        cmocka_unit_test(test_text_fits_80_columns),
        cmocka_unit_test(test_colour_only_on_terminal),
        cmocka_unit_test(test_find_only_loads_nothing),
        cmocka_unit_test(test_json_types),
        cmocka_unit_test(test_text_and_json_agree),
        cmocka_unit_test(test_build_flags_cu12),
        cmocka_unit_test(test_no_device_hints),
        cmocka_unit_test(test_find_only_system_search),
        cmocka_unit_test(test_ld_library_path_same_file),
        cmocka_unit_test(test_ld_library_path_taken_from_it),
        cmocka_unit_test(test_ld_library_path_any_library),
        cmocka_unit_test(test_ld_library_path_wording),
        cmocka_unit_test(test_link_flags_split),
        cmocka_unit_test(test_hostile_path_c1),
        cmocka_unit_test(test_group_writable_warned),
        cmocka_unit_test(test_relative_env_warned),
        cmocka_unit_test(test_empty_values_are_usage_errors),
        cmocka_unit_test(test_unusable_roots_warned),
    };
    return cmocka_run_group_tests_name("probe", tests, setup, NULL);
}
