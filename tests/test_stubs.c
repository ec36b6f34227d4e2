/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_stubs.c -- the link-compatible stubs (stubs/, docs/stubs.md) with real programs and the
 * real toolkit libraries: no CUDA DT_NEEDED; the toolkit's runtime found through CUDA_HOME;
 * each library's own error codes when nothing can be found; nvcc's registrations kept before
 * the program's own cudaload_init and replayed after it (the fake driver standing in for a GPU);
 * two stub-linked modules beside the real libcudart in one process; every generated table entry
 * resolved in the toolkit's library. The programs (tests/stubs/) print key=value numbers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ctype.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cudaload_tables.h"
#include "harness.h"

static char build[PATH_MAX];
static const char *cuda_home; /* th_cuda_home(): the toolkit the build used */
/* what a test hands to its forked child (in_child) */
static const char *child_a, *child_b;

/* Runs child() in a forked process (each needs a fresh libcudaload) and asserts it exited 0;
 * its exit code says which of its checks failed. */
static void in_child(int (*child)(void)) {
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) _exit(child());
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}


static int sh(char *out, size_t n, const char *fmt, ...) {
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    FILE *p = popen(cmd, "r");
    size_t got = p ? fread(out, 1, n - 1, p) : 0;
    out[got] = 0;
    int st = p ? pclose(p) : -1;
    return st == -1 || !WIFEXITED(st) ? -1 : WEXITSTATUS(st);
}

/* The value of key in a program's key=value output, or INT_MIN. */
static long val(const char *out, const char *key) {
    size_t k = strlen(key);
    for (const char *p = out; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (strncmp(p, key, k) == 0 && p[k] == '=') return strtol(p + k + 1, NULL, 10);
    return INT_MIN;
}

static int have(const char *prog) {
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/tests/%s", build, prog);
    return access(p, X_OK) == 0;
}

/* 1 when the toolkit the tests use (CUDA_HOME) has file in its lib64 */
static int in_cuda_home(const char *file) {
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/lib64/%s", cuda_home, file);
    return access(p, R_OK) == 0;
}

static int two_modules_child(void) {
    /* a framework's real libcudart first, as torch loads it; then two stub-linked modules */
    void *rt = dlopen(child_a, RTLD_NOW | RTLD_GLOBAL);
    char a[PATH_MAX + 64], b[PATH_MAX + 64];
    snprintf(a, sizeof a, "%s/tests/stub_module_a.so", build);
    snprintf(b, sizeof b, "%s/tests/stub_module_b.so", build);
    void *ha = dlopen(a, RTLD_NOW | RTLD_LOCAL), *hb = dlopen(b, RTLD_NOW | RTLD_LOCAL);
    if (!rt || !ha || !hb) return 10;
    int (*va)(void) = (int (*)(void))dlsym(ha, "module_runtime_version");
    int (*vb)(void) = (int (*)(void))dlsym(hb, "module_runtime_version");
    const char *(*pa)(void) = (const char *(*)(void))dlsym(ha, "module_cudart_path");
    const char *(*pb)(void) = (const char *(*)(void))dlsym(hb, "module_cudart_path");
    if (!va || !vb || !pa || !pb) return 11;
    if (va() != 13000 || vb() != 13000) return 12;
    char rp[PATH_MAX];
    if (!realpath(child_a, rp) || !pa() || !pb() || strcmp(pa(), rp) != 0 || strcmp(pb(), rp) != 0) return 13;
    /* the stubs did not replace the runtime's symbols for anyone else */
    if (dlsym(RTLD_DEFAULT, "cudaRuntimeGetVersion") != dlsym(rt, "cudaRuntimeGetVersion")) return 14;
    return 0;
}

static int setup(void **state) {
    (void)state;
    const char *b = th_require_build(0);
    if (!b) return -1;
    snprintf(build, sizeof build, "%s", b);
    cuda_home = th_cuda_home();
    return 0;
}

static void test_no_cuda_dt_needed(void **state) {
    (void)state;
    char out[65536];
    assert_int_equal(sh(out, sizeof out,
                        "cd '%s' && for f in tests/stub_blas tests/stub_prog tests/stub_module_a.so stubs/*.so; do "
                        "[ -e \"$f\" ] || continue; readelf -d \"$f\" | sed -n 's/.*(NEEDED).*\\[\\(.*\\)\\]/\\1/p' | "
                        "sed \"s|^|$f |\"; done", build),
                     0);
    char shared[PATH_MAX + 64];
    snprintf(shared, sizeof shared, "%s/stubs/libcudaload-cudart.so", build);
    if (access(shared, F_OK) == 0) /* a build made without the shared stubs */
        assert_non_null(strstr(out, "stubs/libcudaload-cudart.so libcudaload.so.0"));
    for (const char *p = out; *p; p = strchr(p, '\n') + 1) {
        const char *lib = strchr(p, ' ');
        assert_non_null(lib);
        if ((strncmp(lib + 1, "libcu", 5) == 0 && strncmp(lib + 1, "libcudaload", 11) != 0) || strncmp(lib + 1, "libnv", 5) == 0)
            fail_msg("CUDA DT_NEEDED: %.*s", (int)(strchr(p, '\n') - p), p);
        if (!strchr(p, '\n')) break;
    }
}

static void test_toolkit_runtime_through_cuda_home(void **state) {
    (void)state;
    char out[4096];
    assert_int_equal(sh(out, sizeof out, "CUDALOAD_SOURCES=cuda_home CUDA_HOME='%s' '%s/tests/stub_blas'", cuda_home, build), 0);
    assert_int_equal(val(out, "blas_property_status"), 0);
    assert_int_equal(val(out, "blas_major"), 13);
    assert_int_equal(val(out, "runtime_version"), 13000);
    if (!have("stub_prog")) return; /* a build without nvcc (the sanitizer builds) */
    assert_int_equal(sh(out, sizeof out, "CUDALOAD_SOURCES=cuda_home CUDA_HOME='%s' '%s/tests/stub_prog'", cuda_home, build), 0);
    assert_int_equal(val(out, "runtime_err"), 0);
    assert_int_equal(val(out, "runtime_version"), 13000);
    assert_int_equal(val(out, "kept_after"), 0);
    assert_int_equal(val(out, "cudart_source"), CUDALOAD_SOURCE_CUDA_HOME);
    /* no GPU here: the runtime's own answer, through the stub */
    if (access("/dev/nvidiactl", F_OK) != 0) {
        assert_int_equal(val(out, "count_err"), 35); /* cudaErrorInsufficientDriver */
        assert_int_equal(val(out, "launch_err"), 35);
    }
}

static void test_nothing_findable_gives_library_codes(void **state) {
    (void)state;
    char out[4096];
    /* the override source only, and no override: nothing can be found */
    if (have("stub_prog")) {
        assert_int_equal(sh(out, sizeof out, "CUDALOAD_SOURCES=override '%s/tests/stub_prog'", build), 0);
        assert_int_equal(val(out, "runtime_err"), 303); /* cudaErrorSharedObjectInitFailed */
        assert_int_equal(val(out, "count_err"), 303);
        assert_int_equal(val(out, "malloc_err"), 303);
        assert_int_equal(val(out, "launch_err"), 303);
        assert_int_equal(val(out, "kept_after"), 1); /* still kept: a later load replays it */
        assert_int_equal(val(out, "cudart_loaded"), 0);
    }
    assert_int_equal(sh(out, sizeof out, "CUDALOAD_SOURCES=override '%s/tests/stub_blas'", build), 0);
    assert_int_equal(val(out, "blas_property_status"), 1); /* CUBLAS_STATUS_NOT_INITIALIZED */
    assert_int_equal(val(out, "blas_create_status"), 1);
    assert_int_equal(val(out, "runtime_err"), 303);
}

/* The text of key=... in out (up to its newline) into buf; "" when absent. */
static const char *text_val(const char *out, const char *key, char *buf, size_t n) {
    size_t k = strlen(key);
    buf[0] = 0;
    for (const char *p = out; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (strncmp(p, key, k) == 0 && p[k] == '=') {
            size_t len = strcspn(p + k + 1, "\n");
            snprintf(buf, n, "%.*s", (int)len, p + k + 1);
            break;
        }
    return buf;
}

/* The number of lines in text (each ends in a newline). */
static int count_lines(const char *text) {
    int n = 0;
    for (const char *p = text; *p; p++) n += *p == '\n';
    return n;
}

/* A stub whose library cannot be loaded says so where the dynamic loader would have: one line on
 * stderr per library, prefixed with the program's name, naming the file, the package that fixes
 * it, and CUDALOAD_QUIET; the library's own error-string call returns that line's text;
 * CUDALOAD_QUIET=1 silences it. With the runtime found and no driver at all, the line names the
 * driver's file and the setting that points at it, and cudaGetErrorString(35) returns it instead
 * of NVIDIA's "insufficient". stub_blas is a C program, so the sanitizer builds run this too. */
static void test_failure_says_why_once(void **state) {
    (void)state;
    char *dir = th_tmpdir();
    char out[8192], err[8192], text[1024], cmd_err[PATH_MAX + 16];
    snprintf(cmd_err, sizeof cmd_err, "%s/err", dir);
    assert_int_equal(sh(out, sizeof out, "CUDALOAD_SOURCES=override '%s/tests/stub_blas' 2>'%s'", build, cmd_err), 0);
    assert_int_equal(sh(err, sizeof err, "cat '%s'", cmd_err), 0);
    assert_int_equal(val(out, "count_err"), 303);
    assert_int_equal(count_lines(err), 2);                     /* once per library, though each failed repeatedly */
    assert_true(strncmp(err, "stub_blas: libcudaload: ", 24) == 0);
    const char *runtime_line = strstr(err, "\nstub_blas: libcudaload: cannot load libcudart.so.13");
    assert_non_null(runtime_line);                             /* cuBLAS's line first: it was called first */
    assert_non_null(strstr(runtime_line, "pip install 'nvidia-cuda-runtime==13.*'")); /* the catalogue's package, of its major */
    assert_non_null(strstr(err, "pip install 'nvidia-cublas==13.*'"));
    assert_non_null(strstr(runtime_line, "CUDALOAD_QUIET=1"));
    text_val(out, "errstr", text, sizeof text);
    assert_true(strncmp(text, "libcudaload: cannot load libcudart.so.13", 40) == 0);
    assert_non_null(strstr(err, text));                        /* the error string is the line */
    text_val(out, "blas_errstr", text, sizeof text);
    assert_true(strncmp(text, "libcudaload: cannot load libcublas.so.13", 40) == 0);
    assert_non_null(strstr(err, text));

    assert_int_equal(sh(out, sizeof out, "CUDALOAD_QUIET=1 CUDALOAD_SOURCES=override '%s/tests/stub_blas' 2>'%s'", build, cmd_err), 0);
    assert_int_equal(sh(err, sizeof err, "cat '%s'", cmd_err), 0);
    assert_string_equal(err, "");
    assert_int_equal(val(out, "count_err"), 303);

    if (access("/dev/nvidiactl", F_OK) != 0) {
        /* the runtime from CUDA_HOME, and no driver on this machine */
        assert_int_equal(sh(out, sizeof out, "CUDALOAD_SOURCES=cuda_home CUDA_HOME='%s' '%s/tests/stub_blas' 2>'%s'", cuda_home,
                            build, cmd_err), 0);
        assert_int_equal(sh(err, sizeof err, "cat '%s'", cmd_err), 0);
        assert_int_equal(val(out, "count_err"), 35);           /* the runtime's own code */
        assert_int_equal(count_lines(err), 1);
        assert_non_null(strstr(err, "libcuda.so.1"));
        assert_non_null(strstr(err, "CUDALOAD_DRIVER_PATH"));
        text_val(out, "errstr", text, sizeof text);
        assert_true(strncmp(text, "libcudaload: ", 13) == 0);
        assert_non_null(strstr(err, text));
    }
    if (have("stub_wheels")) {
        /* NVML's error string through its stub, with nothing findable */
        assert_int_equal(sh(out, sizeof out, "CUDALOAD_SOURCES=override '%s/tests/stub_wheels' 2>'%s'", build, cmd_err), 0);
        assert_int_equal(sh(err, sizeof err, "cat '%s'", cmd_err), 0);
        text_val(out, "nvml_errstr", text, sizeof text);
        assert_true(strncmp(text, "libcudaload: cannot load libnvidia-ml.so.1", 42) == 0);
        assert_non_null(strstr(err, text));
        assert_null(strstr(strstr(err, text) + 1, text));      /* once, though NVML was called three times */
    }
    free(dir);
}

static void test_registrations_replayed_after_late_init(void **state) {
    (void)state;
    if (!have("stub_prog")) TH_SKIP("stub_prog not built (no nvcc in this build: the sanitizer builds)");
    const char *fx = getenv("CUDALOAD_TEST_FIXTURES");
    if (!fx) TH_SKIP("CUDALOAD_TEST_FIXTURES unset (the runtime's root comes from tests/fixtures.sh)");
    char out[4096];
    assert_int_equal(sh(out, sizeof out, "%s STUB_ROOT='%s/cudahome/lib64' '%s/tests/stub_prog'", th_fake_driver_env(), fx, build), 0);
    assert_int_equal(val(out, "fatbins"), 1);
    assert_int_equal(val(out, "kept_before"), 1); /* the constructor ran before main: kept */
    assert_int_equal(val(out, "init"), CUDALOAD_OK);
    assert_int_equal(val(out, "runtime_version"), 13000);
    assert_int_equal(val(out, "kept_after"), 0); /* replayed into the runtime the program's root gave */
    assert_int_equal(val(out, "cudart_source"), CUDALOAD_SOURCE_OVERRIDE);
    /* The fake driver (CUDA 13.0, no launch API) answers the toolkit's runtime with
     * cudaErrorCallRequiresNewerDriver (36), every call alike, the launch's included: exactly
     * that, not 303 (the runtime not loaded), 98 (the kernel not registered) nor another code of
     * the stub's own. (The runtime stops at its own initialization here, so the replay itself is
     * shown by kept_after above, and the kernel's run by check-gpu: kernel_ok.) */
    assert_int_equal(val(out, "count_err"), 36);
    assert_int_equal(val(out, "launch_err"), 36);
}

static void test_two_modules_beside_the_real_runtime(void **state) {
    (void)state;
    char real[PATH_MAX];
    snprintf(real, sizeof real, "%s/lib64/libcudart.so.13", cuda_home);
    if (access(real, R_OK) != 0) TH_SKIP("no libcudart.so.13 under CUDA_HOME's lib64");
    char out[8192];
    /* the modules export their own functions only: no cuda* symbol interposes on the runtime */
    assert_int_equal(sh(out, sizeof out, "nm -D --defined-only '%s/tests/stub_module_a.so' | awk '{print $3}' | sort", build), 0);
    assert_string_equal(out, "module_cudart_path\nmodule_runtime_version\n");
    child_a = real;
    in_child(two_modules_child);
}

/* 1 when w is one of the space-separated words of list */
static int word_in(const char *list, const char *w) {
    size_t n = strlen(w);
    for (const char *p = list; p && *p; p += strcspn(p, " ")) {
        p += strspn(p, " ");
        if (strncmp(p, w, n) == 0 && (p[n] == ' ' || p[n] == 0)) return 1;
    }
    return 0;
}

static int tables_child(void) {
    setenv("CUDALOAD_SOURCES", "cuda_home", 1);
    setenv("CUDA_HOME", cuda_home, 1);
    cudaload_options o;
    cudaload_options_init(&o);
    o.flags = CUDALOAD_FLAG_DRIVER_OPTIONAL;
    if (cudaload_init(&o) != CUDALOAD_OK) return 20;
    size_t tables = 0;
    for (size_t lib = 0; lib < cudaload_library_count(); lib++) {
        cudaload_catalogue_info c = {.size = sizeof c};
        if (cudaload_catalogue_entry((cudaload_lib)lib, &c) != CUDALOAD_OK || !c.api_headers || c.driver_like) continue;
        if (word_in(getenv("CL_TEST_WHEEL_ROWS"), c.name)) {
            /* a library that ships as a wheel of its own: its table is of the pinned wheel's release,
             * and a toolkit may hold another (this machine's cuDNN 9.19) or none */
            if (cudaload_load_library((cudaload_lib)lib) != CUDALOAD_OK) continue;
            cudaload_library_info info = {.size = sizeof info};
            if (cudaload_get_library_info((cudaload_lib)lib, &info) != CUDALOAD_OK || !info.path) return 25;
            void *h = dlopen(info.path, RTLD_NOW | RTLD_NOLOAD);
            if (!h) return 26;
            const char *name;
            int req, present;
            size_t n = cudaload_symbol_at((cudaload_lib)lib, 0, &name, &req, &present);
            for (size_t i = 0; i < n; i++) {
                cudaload_symbol_at((cudaload_lib)lib, i, &name, &req, &present);
                if (present != (dlsym(h, name) != NULL)) {
                    fprintf(stderr, "%s: %s: in the table %d, exported by %s %d\n", c.name, name, present, info.path, !present);
                    return 27;
                }
            }
            dlclose(h);
            continue;
        }
        if (cudaload_load_library((cudaload_lib)lib) != CUDALOAD_OK) {
            fprintf(stderr, "%s: %s\n", c.name, cudaload_last_error());
            return 21;
        }
        const char *name;
        int req, present;
        size_t n = cudaload_symbol_at((cudaload_lib)lib, 0, &name, &req, &present);
        if (n < 10) return 22;
        for (size_t i = 0; i < n; i++) {
            cudaload_symbol_at((cudaload_lib)lib, i, &name, &req, &present);
            if (!present) {
                fprintf(stderr, "%s: %s not resolved\n", c.name, name);
                return 23;
            }
        }
        tables++;
    }
    return tables >= 9 ? 0 : 24;
}

/* Every entry of every generated table resolves in the toolkit's own copy of its library (the
 * headers the tables come from): the lists name real exports, with the right names. */
static void test_tables_resolve_in_the_toolkit(void **state) {
    (void)state;
    const char *top = getenv("CUDALOAD_TEST_TOP");
    if (!top) TH_SKIP("CUDALOAD_TEST_TOP unset (tools/api/wheel-libs.txt is read from the source tree)");
    char rows[4096];
    assert_int_equal(sh(rows, sizeof rows, "awk '!/^#/ && NF == 4 {printf \"%%s \", $1}' '%s/tools/api/wheel-libs.txt'", top), 0);
    setenv("CL_TEST_WHEEL_ROWS", rows, 1);
    in_child(tables_child);
}

static int other_major_child(void) {
    cudaload_options o = th_opts(&child_a, 1, CUDALOAD_SOURCE_BIT(CUDALOAD_SOURCE_CALLER), CUDALOAD_FLAG_DRIVER_OPTIONAL);
    setenv("CUDALOAD_CUDA_MAJOR", "12", 1);
    cudaload_init(&o);
    const cudaload_cudart_table *t = cudaload_cudart();
    if (!t) return 30;
    int v = 0;
    if (!t->cudaRuntimeGetVersion || t->cudaRuntimeGetVersion(&v) != 0 || v / 1000 != 12) return 31;
    if (!t->has.cudaMalloc || !t->cudaMemcpy) return 32;                         /* 0.2 entries */
    if (t->cudaGetDeviceProperties || t->has.cudaGetDeviceProperties || t->cudaMemset) return 33; /* generated */
    return cudaload_has_symbol(CUDALOAD_LIB_CUDART, "cudaMemset") ? 34 : 0;
}

/* A copy of another CUDA major than the headers' (CUDA 12's runtime from its wheel): the 0.2
 * entries (the same ABI in 12 and 13) are filled, the generated ones stay NULL (CUDA 12's
 * cudaGetDeviceProperties fills the pre-12 struct: a call through CUDA 13's prototype would
 * overrun it). */
static void test_other_major_keeps_only_stable_entries(void **state) {
    (void)state;
    if (!getenv("CUDALOAD_TEST_FIXTURES")) TH_SKIP("CUDALOAD_TEST_FIXTURES unset (CUDA 12's runtime comes from the fixtures' venv)");
    child_a = th_fixture_env("VENV_CU12_SITE");
    in_child(other_major_child);
}

static int preload_child(void) {
    cudaload_options o = th_opts(&child_a, 1, CUDALOAD_SOURCE_BIT(CUDALOAD_SOURCE_CALLER), CUDALOAD_FLAG_DRIVER_OPTIONAL);
    cudaload_init(&o);
    /* nothing of cuBLASLt is visible to a global lookup before the preload, and is after it */
    if (dlsym(RTLD_DEFAULT, "cublasLtCreate")) return 44;
    const char *names[] = {"cudart", "cublas", "nosuch"};
    cudaload_preloaded got[8];
    size_t n = 0;
    if (cudaload_preload(names, 2, got, 8, &n) != CUDALOAD_OK || n != 3) return 45;
    /* the runtime, then cuBLAS's dependency before it; every one from the wheel tree */
    if (got[0].lib != CUDALOAD_LIB_CUDART || got[1].lib != CUDALOAD_LIB_CUBLASLT || got[2].lib != CUDALOAD_LIB_CUBLAS)
        return 46;
    for (size_t i = 0; i < n; i++)
        if (!strstr(got[i].path, child_a) || got[i].source != CUDALOAD_SOURCE_CALLER) return 47;
    if (!dlsym(RTLD_DEFAULT, "cublasLtCreate")) return 48;
    if (cudaload_preload(names + 2, 1, got, 8, &n) != CUDALOAD_ERROR_INVALID_ARGUMENT || n != 0) return 49;
    cudaload_library_info info = {.size = sizeof info};
    if (cudaload_get_library_info(CUDALOAD_LIB_CUDART, &info) != CUDALOAD_OK || !info.loaded || !strstr(info.path, child_a))
        return 40;
    void *h = dlopen(child_b, RTLD_NOW | RTLD_LOCAL);
    if (!h) return 41;
    int (*ver)(void) = (int (*)(void))dlsym(h, "preload_runtime_version");
    if (!ver || ver() / 1000 != 13) return 42;
    /* every libcudart mapped is the wheel tree's */
    FILE *m = fopen("/proc/self/maps", "r");
    char line[PATH_MAX + 256];
    int copies = 0, others = 0;
    while (m && fgets(line, sizeof line, m)) {
        char *p = strstr(line, "libcudart.so");
        if (!p) continue;
        copies++;
        if (!strstr(line, child_a)) others++;
    }
    if (m) fclose(m);
    return copies > 0 && others == 0 ? 0 : 43;
}

/* The preload mode: cudaload_preload takes the runtime and cuBLAS with its dependency (cuBLASLt
 * first) from a wheel tree into the global scope; a module with DT_NEEDED libcudart.so.13 and no
 * RPATH loads after it, and the dynamic loader binds it to that copy (matched by SONAME), not to
 * the one its cache lists (the toolkit's, on this machine): one copy mapped. */
static void test_preload_mode(void **state) {
    (void)state;
    if (!getenv("CUDALOAD_TEST_FIXTURES")) TH_SKIP("CUDALOAD_TEST_FIXTURES unset (the CUDA 13 wheel tree comes from tests/fixtures.sh)");
    const char *root = th_fixture("toolkit-cu13-wheel");
    char module[PATH_MAX + 64];
    snprintf(module, sizeof module, "%s/tests/preload_module.so", build);
    char out[4096];
    assert_int_equal(sh(out, sizeof out, "readelf -d '%s' | grep -E 'NEEDED|RPATH|RUNPATH'", module), 0);
    assert_non_null(strstr(out, "[libcudart.so.13]"));
    assert_null(strstr(out, "PATH"));
    child_a = root;
    child_b = module;
    in_child(preload_child);
}

/* The binding lines of LD_DEBUG=bindings files in dir ("binding file A [0] to B [0]: ..."):
 * fails on one where an NVIDIA library binds to a libcudaload object; counts those from a file
 * named from_lib to one named to_lib (both basenames' prefixes). */
static int ld_bindings(const char *dir, const char *from_lib, const char *to_lib) {
    char out[1 << 16];
    int n = 0;
    assert_int_equal(sh(out, sizeof out, "ls '%s'", dir), 0);
    for (char *f = strtok(out, "\n"); f; f = strtok(NULL, "\n")) {
        char path[PATH_MAX + 256];
        snprintf(path, sizeof path, "%s/%s", dir, f);
        FILE *fp = fopen(path, "r");
        assert_non_null(fp);
        char line[4096];
        while (fgets(line, sizeof line, fp)) {
            const char *p = strstr(line, "binding file ");
            char a[1024], b[1024];
            if (!p || sscanf(p, "binding file %1023s [%*[^]]] to %1023s", a, b) != 2) continue;
            const char *an = strrchr(a, '/') ? strrchr(a, '/') + 1 : a, *bn = strrchr(b, '/') ? strrchr(b, '/') + 1 : b;
            int a_nvidia = (strncmp(an, "libcu", 5) == 0 || strncmp(an, "libnv", 5) == 0 || strncmp(an, "libnccl", 7) == 0) &&
                           strncmp(an, "libcudaload", 11) != 0;
            if (a_nvidia && strncmp(bn, "libcudaload", 11) == 0) {
                fclose(fp);
                fail_msg("an NVIDIA library bound to a stub: %s", p);
            }
            n += strncmp(an, from_lib, strlen(from_lib)) == 0 && strncmp(bn, to_lib, strlen(to_lib)) == 0;
        }
        fclose(fp);
    }
    return n;
}

/* Every shared stub and libcudaload.so.0 linked into one program, against the toolkit: the calls
 * that make one NVIDIA library call another (cuBLAS's version call and cublasCreate -> cuBLASLt,
 * cuSOLVER -> cuBLAS, cuBLASLt, cuSPARSE; cuSPARSE -> nvJitLink) return, and NVIDIA's imports
 * bind to NVIDIA's libraries, never to a stub (LD_DEBUG=bindings, every import bound at load:
 * LD_BIND_NOW). The stubs' exports are in a version node of their own (stubs/stub.map): without
 * it libcublas bound its cuBLASLt imports to the cuBLASLt stub and the first call hung. */
static void test_all_shared_stubs_together(void **state) {
    (void)state;
    char prog[PATH_MAX + 64];
    snprintf(prog, sizeof prog, "%s/tests/stub_all_shared", build);
    if (access(prog, X_OK) != 0) TH_SKIP("%s not built", prog);
    char *dir = th_tmpdir();
    char out[4096];
    int st = sh(out, sizeof out,
                "CUDALOAD_SOURCES=cuda_home CUDA_HOME='%s' LD_BIND_NOW=1 LD_DEBUG=bindings LD_DEBUG_OUTPUT='%s/b' "
                "timeout 60 '%s' 2>/dev/null",
                cuda_home, dir, prog);
    if (st != 0) fail_msg("stub_all_shared exited %d (124: it hung):\n%s", st, out);
    assert_int_equal(val(out, "done"), 1);
    assert_int_equal(val(out, "blas_property"), 0);
    assert_int_equal(val(out, "blas_major"), 13);
    assert_int_equal(val(out, "solver_property"), 0);
    assert_int_equal(val(out, "sparse_property"), 0);
    assert_int_equal(val(out, "jitlink_version"), 0);
    assert_int_equal(val(out, "runtime_version"), 13000);
    if (access("/dev/nvidiactl", F_OK) != 0) { /* no GPU: each library's own answer, through the stub */
        assert_int_equal(val(out, "blas_create"), 1);      /* CUBLAS_STATUS_NOT_INITIALIZED */
        assert_int_equal(val(out, "solver_dn_create"), 1); /* CUSOLVER_STATUS_NOT_INITIALIZED */
        assert_int_equal(val(out, "sparse_create"), 1);    /* CUSPARSE_STATUS_NOT_INITIALIZED */
    }
    /* the imports are there to capture: each pair is seen bound, to NVIDIA's own file */
    assert_true(ld_bindings(dir, "libcublas.so", "libcublasLt.so") > 0);
    assert_true(ld_bindings(dir, "libcusolver.so", "libcublas.so") > 0);
    assert_true(ld_bindings(dir, "libcusolver.so", "libcusparse.so") > 0);
    assert_true(ld_bindings(dir, "libcusparse.so", "libnvJitLink.so") > 0);
    free(dir);
}

/* Into def and hidden: how many of file's dynamic symbols are defined in CUDALOAD_STUB_0 as the
 * default version (readelf: name@@CUDALOAD_STUB_0) and hidden (name@CUDALOAD_STUB_0). */
static void stub_versions(const char *file, long *def, long *hidden) {
    char out[256];
    assert_int_equal(sh(out, sizeof out, "readelf --dyn-syms -W '%s' | awk '/@@CUDALOAD_STUB_0$/ {d++; next} "
                                         "/@CUDALOAD_STUB_0$/ {h++} END {printf \"def=%%d\\nhidden=%%d\\n\", d, h}'", file),
                     0);
    *def = val(out, "def");
    *hidden = val(out, "hidden");
}

/* The hidden version in miniature (tests/stubs/selfcall.c; docs/stubs.md, "Only the program's
 * calls"): a library whose selfcall_g calls its own export selfcall_f through the PLT
 * (unversioned, as libnvidia-ml.so.1 calls its nvmlInit_v2), and a stub of it built as those of
 * NCCL, NVML, cuFile and cuSPARSELt are: the link-time file libcudaload-selfcall.so has
 * selfcall_f@@CUDALOAD_STUB_0, the run-time file .so.0 (tools/hide_versions.py) selfcall_f@CUDALOAD_STUB_0.
 * The program linked to the stub reaches it; the library, opened after, binds its own call to
 * itself, and dlsym's unversioned lookup does not find the stub (dlvsym's for CUDALOAD_STUB_0
 * does). The control: the link-time file
 * in the run-time file's place (the default version) takes the library's call. The tool gives the
 * same file again from its output, and refuses a version of index 2 (stubs/stub.map's), which
 * glibc gives an unversioned reference even when hidden. */
static void test_hidden_version_binding(void **state) {
    (void)state;
    if (!have("stub_selfcall")) TH_SKIP("stub_selfcall not built");
    char out[4096], link[PATH_MAX + 64], run[PATH_MAX + 64], lib[PATH_MAX + 64];
    snprintf(link, sizeof link, "%s/tests/selfcall/libcudaload-selfcall.so", build);
    snprintf(run, sizeof run, "%s/tests/selfcall/libcudaload-selfcall.so.0", build);
    snprintf(lib, sizeof lib, "%s/tests/selfcall/libselfcall.so", build);
    long def = 0, hidden = 0;
    stub_versions(link, &def, &hidden);
    assert_true(def >= 1);
    assert_int_equal(hidden, 0);
    stub_versions(run, &def, &hidden);
    assert_int_equal(def, 0);
    assert_true(hidden >= 1);
    assert_int_equal(sh(out, sizeof out, "readelf --dyn-syms -W '%s' | grep -c ' selfcall_f@CUDALOAD_STUB_0$'", run), 0);
    assert_int_equal(atoi(out), 1);

    assert_int_equal(sh(out, sizeof out, "'%s/tests/stub_selfcall' '%s'", build, lib), 0);
    assert_int_equal(val(out, "stub_f"), 42); /* the program's call: the stub */
    assert_int_equal(val(out, "lib_g"), 1);   /* the library's own call: itself */
    assert_int_equal(val(out, "default_is_stub"), 0);
    assert_int_equal(val(out, "versioned_is_stub"), 1); /* dlvsym(..., "CUDALOAD_STUB_0") finds it */

    char *dir = th_tmpdir();
    assert_int_equal(sh(out, sizeof out, "cp '%s' '%s/libcudaload-selfcall.so.0'", link, dir), 0);
    assert_int_equal(sh(out, sizeof out, "LD_LIBRARY_PATH='%s' '%s/tests/stub_selfcall' '%s'", dir, build, lib), 0);
    assert_int_equal(val(out, "stub_f"), 42);
    assert_int_equal(val(out, "lib_g"), 42); /* captured by the default version */
    assert_int_equal(val(out, "default_is_stub"), 1);
    assert_int_equal(val(out, "versioned_is_stub"), 1);

    const char *top = getenv("CUDALOAD_TEST_TOP");
    if (top) {
        assert_int_equal(sh(out, sizeof out, "python3 '%s/tools/hide_versions.py' '%s' '%s/again' >/dev/null && cmp '%s' '%s/again'",
                            top, run, dir, run, dir),
                         0);
    }
    char cublas[PATH_MAX + 64]; /* a shared stub of stubs/stub.map: CUDALOAD_STUB_0 has index 2 */
    snprintf(cublas, sizeof cublas, "%s/stubs/libcudaload-cublas.so", build);
    if (top && access(cublas, R_OK) == 0) {
        int st = sh(out, sizeof out, "python3 '%s/tools/hide_versions.py' '%s' '%s/index2' 2>&1", top, cublas, dir);
        assert_int_equal(st, 1);
        assert_non_null(strstr(out, "version index 2"));
        assert_int_equal(sh(out, sizeof out, "test -e '%s/index2'", dir), 1);
    }
    free(dir);
}

/* The shared stubs of NCCL, NVML, cuSPARSELt and cuFile, which version none of their exports: two
 * files each, the link-time libcudaload-<lib>.so (every export @@CUDALOAD_STUB_0) and the run-time
 * .so.0 (the same, hidden). A program linked with -lcudaload-<lib> (stub_unversioned) runs with
 * the .so.0 files: nothing findable, each library's own code from the stub; with the toolkit's
 * NCCL, its version, and libnccl.so.2's own calls to its exports (ncclGetVersion through its PLT)
 * bind to itself, not to the stub in the global scope (LD_DEBUG=bindings, LD_BIND_NOW). The
 * control: the link-time file in .so.0's place takes them. */
static void test_unversioned_shared_stubs(void **state) {
    (void)state;
    if (!have("stub_unversioned")) TH_SKIP("no stub_unversioned: the wheels' headers could not be fetched (tools/wheel_files.py headers)");
    char out[8192];
    static const char *const ids[] = {"nccl", "nvml", "cusparselt", "cufile"};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        char link[PATH_MAX + 64], run[PATH_MAX + 64];
        snprintf(link, sizeof link, "%s/stubs/libcudaload-%s.so", build, ids[i]);
        snprintf(run, sizeof run, "%s/stubs/libcudaload-%s.so.0", build, ids[i]);
        assert_int_equal(sh(out, sizeof out, "test -f '%s' && test ! -L '%s' && test -f '%s' && test ! -L '%s'", link, link, run, run), 0);
        long def = 0, hidden = 0, run_def = 0, run_hidden = 0;
        stub_versions(link, &def, &hidden);
        stub_versions(run, &run_def, &run_hidden);
        if (def < 10 || hidden != 0 || run_def != 0 || run_hidden != def)
            fail_msg("%s: link-time file %ld default, %ld hidden; run-time file %ld default, %ld hidden", ids[i], def, hidden, run_def,
                     run_hidden);
    }
    assert_int_equal(sh(out, sizeof out, "readelf -d '%s/tests/stub_unversioned' | grep NEEDED", build), 0);
    assert_non_null(strstr(out, "[libcudaload-nccl.so.0]"));
    assert_non_null(strstr(out, "[libcudaload-nvml.so.0]"));

    assert_int_equal(sh(out, sizeof out, "CUDALOAD_SOURCES=override '%s/tests/stub_unversioned'", build), 0);
    assert_int_equal(val(out, "nccl_get_version"), 2);  /* ncclSystemError */
    assert_int_equal(val(out, "nvml_init"), 12);        /* NVML_ERROR_LIBRARY_NOT_FOUND */
    assert_int_equal(val(out, "nvml_count"), 12);
    assert_int_equal(val(out, "cusparselt_init"), 1);   /* CUSPARSE_STATUS_NOT_INITIALIZED */
    assert_int_equal(val(out, "cufile_open_err"), 5030); /* CU_FILE_INTERNAL_ERROR */
    assert_int_equal(val(out, "done"), 1);

    if (!in_cuda_home("libnccl.so.2")) TH_SKIP("no libnccl.so.2 in %s/lib64: the bindings are not checked", cuda_home);
    char *dir = th_tmpdir(), *ctl = th_tmpdir();
    assert_int_equal(sh(out, sizeof out,
                        "CUDALOAD_SOURCES=cuda_home CUDA_HOME='%s' LD_BIND_NOW=1 LD_DEBUG=bindings LD_DEBUG_OUTPUT='%s/b' "
                        "timeout 60 '%s/tests/stub_unversioned' 2>/dev/null",
                        cuda_home, dir, build),
                     0);
    assert_int_equal(val(out, "nccl_get_version"), 0);
    assert_true(val(out, "nccl_version") >= 20000);
    /* fails on any NVIDIA library (libnccl included) bound to a libcudaload object */
    assert_true(ld_bindings(dir, "libnccl.so", "libnccl.so") > 0);
    const char *nccl_self = "grep -h 'libnccl.so.2 \\[0\\] to [^ ]*/libnccl.so.2 \\[0\\]: normal symbol .ncclGetVersion.$' '%s'/b.* | wc -l";
    assert_int_equal(sh(out, sizeof out, nccl_self, dir), 0);
    assert_true(atoi(out) > 0);

    assert_int_equal(sh(out, sizeof out, "cp '%s/stubs/libcudaload-nccl.so' '%s/libcudaload-nccl.so.0'", build, ctl), 0);
    assert_int_equal(sh(out, sizeof out,
                        "LD_LIBRARY_PATH='%s:%s' CUDALOAD_SOURCES=cuda_home CUDA_HOME='%s' LD_BIND_NOW=1 LD_DEBUG=bindings "
                        "LD_DEBUG_OUTPUT='%s/b' timeout 60 '%s/tests/stub_unversioned' >/dev/null 2>&1; "
                        "grep -h 'libnccl.so.2 \\[0\\] to [^ ]*/libcudaload-nccl.so.0 \\[0\\]: normal symbol .ncclGetVersion.$' '%s'/b.* | wc -l",
                        ctl, build, cuda_home, ctl, build, ctl),
                     0);
    if (atoi(out) == 0) fail_msg("the control: the default version did not take libnccl.so.2's own ncclGetVersion");
    free(dir);
    free(ctl);
}

/* A stub called back on the thread that runs its first load, from the foreign code that load
 * runs under the stubs' lock (here the after-load hook, as cudart's registration replay runs the
 * runtime's code): the call returns its library's failure code at once, for the library being
 * loaded and for another one's first call; the outer call then goes through. Before, the
 * thread waited on its own lock for ever. */
static void test_reentered_stub_fails_fast(void **state) {
    (void)state;
    char out[4096];
    int st = sh(out, sizeof out, "CUDALOAD_SOURCES=cuda_home CUDA_HOME='%s' timeout 60 '%s/tests/stub_reenter' 2>&1", cuda_home,
                build);
    if (st != 0) fail_msg("stub_reenter exited %d (124: it hung):\n%s", st, out);
    assert_int_equal(val(out, "hook_runs"), 1);
    assert_int_equal(val(out, "inner_lt"), 1);     /* CUBLAS_STATUS_NOT_INITIALIZED */
    assert_int_equal(val(out, "inner_rand"), 203); /* CURAND_STATUS_INITIALIZATION_FAILED */
    /* and cudaload_last_error() says why: CUDALOAD_ERROR_REENTRANT */
    assert_int_equal(val(out, "lt_reported"), 1);
    assert_int_equal(val(out, "rand_reported"), 1);
    assert_int_equal(val(out, "outer"), 0);
    assert_int_equal(val(out, "outer_major"), 13);
    assert_int_equal(val(out, "again"), 0);
    assert_int_equal(val(out, "rand_after"), 0);
}

/* The return code a stub gives when its library cannot be loaded, by its return type. */
static long load_failure_code(const char *ret) {
    if (strcmp(ret, "void") == 0) return 0; /* no status: stub_outparams*.c prints 0 */
    if (strcmp(ret, "CUresult") == 0 || strcmp(ret, "cudaError_t") == 0) return 303; /* ..._SHARED_OBJECT_INIT_FAILED */
    if (strcmp(ret, "nvrtcResult") == 0) return 11;                                  /* NVRTC_ERROR_INTERNAL_ERROR */
    if (strcmp(ret, "ncclResult_t") == 0) return 2;                                  /* ncclSystemError */
    if (strcmp(ret, "nvmlReturn_t") == 0) return 12;                                 /* NVML_ERROR_LIBRARY_NOT_FOUND */
    if (strcmp(ret, "CUptiResult") == 0) return 15;                                  /* CUPTI_ERROR_NOT_INITIALIZED */
    if (strcmp(ret, "CUfileError_t") == 0) return 5030;                              /* its .err: CU_FILE_INTERNAL_ERROR */
    fail_msg("no expected code for return type %s: add it here", ret);
    return -1;
}

/* Every stub function that hands back a string or a name buffer through an out-parameter (the
 * generated stubs' CL_STUB_OUT / CL_STUB_OLDER_OUT / CL_STUB_VOID_OUT with a text, and at least every const char ** parameter,
 * read here from stubs/gen/ independently of the generator), called with no library to be had:
 * its library's load-failure code, and the out-parameter a text of libcudaload, not the garbage
 * it held (stub_outparams). A Python extension on the driver stub read cuGetErrorString's
 * uninitialised output after cuInit failed, and crashed. */
static void test_out_parameters_filled_on_failure(void **state) {
    (void)state;
    const char *top = getenv("CUDALOAD_TEST_TOP");
    if (!top) TH_SKIP("CUDALOAD_TEST_TOP unset (the generated stubs are read from the source tree)");
    char fns[16384], strs[16384], out[16384], files[4096];
    /* the generated stubs; without those of the libraries that ship as wheels when their headers
     * could not be fetched (no stub_outparams_wheels: they are not built) */
    int wheels = have("stub_outparams_wheels");
    assert_int_equal(sh(files, sizeof files, "cd '%s' && ls stubs/gen/*.c | grep -v -x -F \"$(%s sed -n 's|^STUB_WHEEL_\\([a-z0-9]*\\) := .*|stubs/gen/\\1.c\\nstubs/gen/\\1_older.c|p' stubs/gen/stubs.mk)\" | tr '\\n' ' '",
                         top, wheels ? "true ||" : ""),
                     0);
    /* the functions that fill a text (why_); nvSHMEM's team out-parameters get NVSHMEM_TEAM_INVALID
     * instead (test_wheel_stubs_give_library_codes) */
    assert_int_equal(sh(fns, sizeof fns, "cd '%s' && awk '/^CL_STUB_EXPORT/{l=$0; next} /CL_STUB(_OLDER|_VOID)?_OUT\\(.*why_/{print l}' %s",
                        top, files),
                     0);
    assert_int_equal(sh(strs, sizeof strs, "cd '%s' && grep -h '^CL_STUB_EXPORT.*const char \\*\\*a' %s", top, files), 0);
    for (char *l = strs; *l; l = strchr(l, '\n') + 1) {
        char *nl = strchr(l, '\n');
        if (!nl) break;
        *nl = 0;
        if (!strstr(fns, l)) fail_msg("a const char ** out-parameter the stub does not fill on failure: %s", l);
        *nl = '\n';
    }
    assert_int_equal(sh(out, sizeof out, "CUDALOAD_SOURCES=override timeout 60 '%s/tests/stub_outparams' && { %s CUDALOAD_SOURCES=override timeout 60 '%s/tests/stub_outparams_wheels'; }",
                        build, wheels ? "" : "true ||", build),
                     0);
    assert_int_equal(val(out, "cuInit"), 303);
    int n = 0;
    for (char *l = fns; *l; l = strchr(l, '\n') + 1) {
        char ret[64], name[128], key[160];
        if (sscanf(l, "CL_STUB_EXPORT %63s %127[A-Za-z0-9_](", ret, name) != 2) fail_msg("unread line: %s", l);
        if (val(out, name) == INT_MIN) fail_msg("%s is not called by tests/stubs/stub_outparams.c: add it there", name);
        assert_int_equal(val(out, name), load_failure_code(ret));
        snprintf(key, sizeof key, "%s_text", name);
        if (val(out, key) != 1) fail_msg("%s: its out-parameter holds no text of libcudaload", name);
        n++;
        if (!strchr(l, '\n')) break;
    }
    assert_true(n >= 6); /* cuGetErrorString, cuGetErrorName, ... */
    assert_int_equal(val(out, "short_buffer_text"), 1);
    assert_int_equal(val(out, "null_out"), 303);
    assert_int_equal(val(out, "zero_len"), 303);
}

/* The same out-parameters when the library loads but lacks the function: CUDA 12's runtime from
 * its wheel leaves the generated entries (CUDA 13's prototypes) empty, so cudaFuncGetName and
 * cudaDeviceGetPCIBusId return cudaErrorNotSupported with the text naming them. */
static void test_out_parameters_filled_when_absent(void **state) {
    (void)state;
    if (!getenv("CUDALOAD_TEST_FIXTURES")) TH_SKIP("CUDALOAD_TEST_FIXTURES unset (CUDA 12's runtime comes from the fixtures' venv)");
    char out[16384];
    assert_int_equal(sh(out, sizeof out, "CUDALOAD_SOURCES=override CUDALOAD_PATH='%s' timeout 60 '%s/tests/stub_outparams'",
                        th_fixture_env("VENV_CU12_SITE"), build),
                     0);
    assert_int_equal(val(out, "cudaFuncGetName"), 801); /* cudaErrorNotSupported */
    assert_int_equal(val(out, "cudaFuncGetName_text"), 1);
    assert_int_equal(val(out, "cudaDeviceGetPCIBusId"), 801);
    assert_int_equal(val(out, "cudaDeviceGetPCIBusId_text"), 1);
}

/* nvcc's registrations from 8 threads (register, a function, end, unregister; and half of the
 * 64 fatbinaries kept before the load unregistered) while the main thread's first call loads the
 * runtime and replays the kept ones (stub_reg_threads, with the bundled kernels' fatbinary): the
 * replay walks the list as others append and unlink, and a record unregistered during its replay
 * is released by the replay. Under ASan and TSan (check-sanitize, check-tsan) a race or a use
 * after free is a report. */
static void test_registrations_race_the_replay(void **state) {
    (void)state;
    char fatbin[PATH_MAX + 64];
    const char *top = getenv("CUDALOAD_TEST_TOP");
    /* this build's, else the plain build's (the sanitizer builds, in build/san and build/tsan,
     * make no kernels) */
    snprintf(fatbin, sizeof fatbin, "%s/kernels/cudaload.fatbin", build);
    if (access(fatbin, R_OK) != 0) snprintf(fatbin, sizeof fatbin, "%s/../kernels/cudaload.fatbin", build);
    if (access(fatbin, R_OK) != 0 && top) snprintf(fatbin, sizeof fatbin, "%s/build/kernels/cudaload.fatbin", top);
    if (access(fatbin, R_OK) != 0) TH_SKIP("no fatbinary (build/kernels/cudaload.fatbin: make with nvcc)");
    char out[4096];
    int st = sh(out, sizeof out, "CUDALOAD_SOURCES=cuda_home CUDA_HOME='%s' timeout 120 '%s/tests/stub_reg_threads' '%s' 2>&1",
                cuda_home, build, fatbin);
    if (st != 0) fail_msg("stub_reg_threads exited %d:\n%s", st, out);
    assert_int_equal(val(out, "kept_before"), 64);
    assert_int_equal(val(out, "runtime_err"), 0);
    assert_int_equal(val(out, "runtime_version"), 13000);
    assert_int_equal(val(out, "register_errors"), 0);
    assert_int_equal(val(out, "fatbins_after"), 32); /* the 32 kept ones not unregistered */
    assert_int_equal(val(out, "kept_after"), 0);     /* all replayed */
    assert_int_equal(val(out, "fatbins_end"), 0);
}

/* First calls into three stubs from 16 threads at once, then forks while 4 threads call (the
 * stubs' lock and libcudaload's, taken in one order, around fork too); run under ASan and TSan by
 * make check-sanitize and check-tsan as well. */
static void test_threads_and_fork(void **state) {
    (void)state;
    char out[4096];
    int st = sh(out, sizeof out, "CUDALOAD_SOURCES=cuda_home CUDA_HOME='%s' timeout 120 '%s/tests/stub_threads' 2>&1", cuda_home,
                build);
    if (st != 0) fail_msg("stub_threads exited %d:\n%s", st, out);
    assert_int_equal(val(out, "first_call_errors"), 0);
    assert_int_equal(val(out, "busy_call_errors"), 0);
    assert_int_equal(val(out, "child_errors"), 0);
}

/* Every function the toolkit's copy of a library exports is defined by its shared stub, or is
 * named in docs/api-coverage.md's list of what is left out (with the reason there): nm -D of
 * both, against the list, independently of the generator. */
/* The stubs of the libraries that ship as wheels of their own (tests/stubs/stub_wheels.c, built
 * with the pinned wheels' headers): with nothing findable, each call gives its library's own code;
 * with CUDA_HOME alone, the copies a toolkit holds (this machine's: cuDNN 9, NCCL, CUPTI) answer,
 * a function newer than the loaded cuDNN gives CUDNN_STATUS_NOT_SUPPORTED, and NVML, which only a
 * driver installs, gives NVML_ERROR_LIBRARY_NOT_FOUND without one. */
/* nvSHMEM's host API when it cannot be had (stub_wheels): its statuses NVSHMEMX_ERROR_INTERNAL,
 * the queries without one zeroed (versions, a value read) or -1 (a PE, a count of PEs: its
 * answer for an invalid team), nothing allocated, a team it would create NVSHMEM_TEAM_INVALID,
 * and "not initialized" */
static void nvshmem_not_found(const char *out) {
    assert_int_equal(val(out, "nvshmem_table"), 0);
    assert_int_equal(val(out, "nvshmem_vendor_version"), 0);
    assert_int_equal(val(out, "nvshmem_spec_version"), 0);
    assert_int_equal(val(out, "nvshmem_init_status"), 0); /* NVSHMEM_STATUS_NOT_INITIALIZED */
    assert_int_equal(val(out, "nvshmem_get_uniqueid"), 7); /* NVSHMEMX_ERROR_INTERNAL */
    assert_int_equal(val(out, "nvshmem_my_pe"), -1);
    assert_int_equal(val(out, "nvshmem_n_pes"), -1);
    assert_int_equal(val(out, "nvshmem_malloc_null"), 1);
    assert_int_equal(val(out, "nvshmem_int_g"), 0);
    assert_int_equal(val(out, "nvshmem_team_split"), 7);
    assert_int_equal(val(out, "nvshmem_team_split_team"), -1); /* NVSHMEM_TEAM_INVALID */
}

static void test_wheel_stubs_give_library_codes(void **state) {
    (void)state;
    if (!have("stub_wheels")) TH_SKIP("no stub_wheels: the wheels' headers could not be fetched (tools/wheel_files.py headers)");
    char out[4096];
    assert_int_equal(sh(out, sizeof out, "CUDALOAD_SOURCES=override '%s/tests/stub_wheels'", build), 0);
    assert_int_equal(val(out, "cudnn_create"), 1001);      /* CUDNN_STATUS_NOT_INITIALIZED */
    assert_int_equal(val(out, "cudnn_plan_ws"), 1001);
    assert_int_equal(val(out, "cudnn_table"), 0);
    assert_int_equal(val(out, "nccl_get_version"), 2);     /* ncclSystemError */
    assert_int_equal(val(out, "nvml_init"), 12);           /* NVML_ERROR_LIBRARY_NOT_FOUND */
    assert_int_equal(val(out, "nvml_count"), 12);
    assert_int_equal(val(out, "cupti_get_version"), 15);   /* CUPTI_ERROR_NOT_INITIALIZED */
    assert_int_equal(val(out, "cusparselt_init"), 1);      /* CUSPARSE_STATUS_NOT_INITIALIZED */
    assert_int_equal(val(out, "cutensor_create"), 1);      /* CUTENSOR_STATUS_NOT_INITIALIZED */
    assert_int_equal(val(out, "cudss_create"), 1);         /* CUDSS_STATUS_NOT_INITIALIZED */
    assert_int_equal(val(out, "cufile_open_err"), 5030);   /* CU_FILE_INTERNAL_ERROR */
    assert_int_equal(val(out, "cufile_open_cu_err"), 303); /* CUDA_ERROR_SHARED_OBJECT_INIT_FAILED */
    assert_int_equal(val(out, "cufile_read"), -5030);      /* cuFileRead: -CU_FILE_INTERNAL_ERROR */
    nvshmem_not_found(out);

    assert_int_equal(sh(out, sizeof out, "CUDALOAD_SOURCES=cuda_home CUDA_HOME='%s' '%s/tests/stub_wheels'", cuda_home, build), 0);
    if (in_cuda_home("libcudnn.so.9")) {
        assert_int_equal(val(out, "cudnn_table"), 1);
        assert_true(val(out, "cudnn_version") >= 90000 && val(out, "cudnn_version") < 100000);
        /* newer than the loaded copy: absent from its table, and cuDNN's "not supported" */
        if (val(out, "cudnn_version") < 92800) {
            assert_int_equal(val(out, "cudnn_has_plan_ws"), 0);
            assert_int_equal(val(out, "cudnn_plan_ws"), 3000); /* CUDNN_STATUS_NOT_SUPPORTED */
        }
    } else {
        assert_int_equal(val(out, "cudnn_create"), 1001);
    }
    int nccl = in_cuda_home("libnccl.so.2");
    assert_int_equal(val(out, "nccl_get_version"), nccl ? 0 : 2);
    if (nccl) assert_true(val(out, "nccl_version") >= 20000);
    int cupti = in_cuda_home("libcupti.so.13");
    assert_int_equal(val(out, "cupti_get_version"), cupti ? 0 : 15);
    if (cupti) assert_true(val(out, "cupti_version") >= 130000);
    assert_int_equal(val(out, "nvml_init"), 12); /* no driver on this machine: NVML's own error */
    if (!in_cuda_home("libnvshmem_host.so.3")) nvshmem_not_found(out);
}

/* nvSHMEM's stub with the real library (its pinned wheel's libnvshmem_host.so.3 and dist-info,
 * tests/fixtures.sh): every entry of the table resolves in it, and its queries that need no GPU
 * answer through the stub (3.8.0; OpenSHMEM 1.3; not initialized). */
static void test_nvshmem_stub_with_the_wheel(void **state) {
    (void)state;
    if (!have("stub_wheels")) TH_SKIP("no stub_wheels: the wheels' headers could not be fetched (tools/wheel_files.py headers)");
    if (!getenv("CUDALOAD_TEST_FIXTURES")) TH_SKIP("CUDALOAD_TEST_FIXTURES unset (nvSHMEM's library comes from the fixtures)");
    const char *site = th_fixture_env("NVSHMEM_SITE");
    if (!site[0]) TH_SKIP("no nvSHMEM in the fixtures (tools/wheel_files.py site failed when tests/fixtures.sh ran)");
    char out[4096];
    assert_int_equal(sh(out, sizeof out, "CUDALOAD_SOURCES=override CUDALOAD_PATH='%s' '%s/tests/stub_wheels'", site, build), 0);
    assert_int_equal(val(out, "nvshmem_table"), 1);
    assert_true(val(out, "nvshmem_entries") > 1000);
    assert_int_equal(val(out, "nvshmem_has"), val(out, "nvshmem_entries"));
    assert_int_equal(val(out, "nvshmem_vendor_version"), 30800); /* the pin: nvidia-nvshmem-cu13==3.8.0 */
    assert_true(val(out, "nvshmem_spec_version") >= 103);
    assert_int_equal(val(out, "nvshmem_init_status"), 0);
}

/* nvSHMEM's own kind of program (tests/stubs/stub_nvshmem.cu: nvcc -rdc=true, a kernel, its static
 * libnvshmem_device.a from the fixtures) links with the host library's stub and without
 * libnvshmem_host.so.3: the archive's init takes the stub's nvshmemid_hostlib_init_attr and
 * nvshmem_selected_device_transport, and its collective launch wins over the stub's weak one.
 * Without a GPU its init fails, through the stub, with the library's code (exit 255: the
 * headers' NONZERO_EXIT); with the library (the fixtures' wheel files), the library's own. */
static void test_nvshmem_program_links_with_the_stub(void **state) {
    (void)state;
    if (!have("stub_prog")) TH_SKIP("stub_prog not built (no nvcc in this build: the sanitizer builds)");
    if (!getenv("CUDALOAD_TEST_FIXTURES")) TH_SKIP("CUDALOAD_TEST_FIXTURES unset (libnvshmem_device.a comes from the fixtures)");
    const char *site = th_fixture_env("NVSHMEM_SITE"), *top = getenv("CUDALOAD_TEST_TOP"), *wheels = getenv("WHEEL_FILES");
    if (!site[0]) TH_SKIP("no nvSHMEM in the fixtures (tools/wheel_files.py site failed when tests/fixtures.sh ran)");
    if (!top || !wheels || !wheels[0]) TH_SKIP("CUDALOAD_TEST_TOP or WHEEL_FILES unset (the source and nvSHMEM's headers)");
    char out[8192], inc[PATH_MAX];
    assert_int_equal(sh(inc, sizeof inc, "sed -n 's/^STUB_WHEEL_nvshmemhost := //p' '%s/stubs/gen/stubs.mk'", top), 0);
    inc[strcspn(inc, "\n")] = 0;
    int st = sh(out, sizeof out,
                "'%s/bin/nvcc' -rdc=true -arch=sm_75 -isystem '%s/%s' -I'%s/include' -o '%s/tests/stub_nvshmem' '%s/tests/stubs/stub_nvshmem.cu' "
                "-L'%s/nvidia/nvshmem/lib' -lnvshmem_device '%s/stubs/libcudaload-nvshmemhost.a' '%s/libcudaload.a' -ldl -lpthread 2>&1",
                cuda_home, wheels, inc, top, build, top, site, build, build);
    if (st != 0) fail_msg("the nvSHMEM program does not link with the stub:\n%s", out);
    assert_int_equal(sh(out, sizeof out, "readelf -d '%s/tests/stub_nvshmem' | grep NEEDED", build), 0);
    if (strstr(out, "nvshmem")) fail_msg("nvSHMEM in DT_NEEDED:\n%s", out);
    /* the archive's collective launch, not the stub's */
    assert_int_equal(sh(out, sizeof out, "nm '%s/tests/stub_nvshmem' | awk '$3 == \"nvshmemx_collective_launch\" {print $2}'", build), 0);
    assert_string_equal(out, "T\n");

    assert_int_equal(sh(out, sizeof out, "CUDALOAD_SOURCES=override '%s/tests/stub_nvshmem'", build), 0);
    assert_int_equal(val(out, "version"), 0);
    assert_int_equal(val(out, "init_status"), 0);
    assert_int_equal(val(out, "transport"), 0);
    st = sh(out, sizeof out, "CUDALOAD_SOURCES=override '%s/tests/stub_nvshmem' init 2>&1", build);
    assert_int_equal(st, 255);
    assert_int_equal(val(out, "get_uniqueid"), 7);
    assert_non_null(strstr(out, "error status: 7")); /* NVSHMEMX_ERROR_INTERNAL, from the stub */
    assert_non_null(strstr(out, "nvshmemi_init_thread"));
    /* the real library: its unique id made (by its bootstrap plugin, which it loads from beside
     * itself), then no GPU here: its init fails */
    assert_int_equal(sh(out, sizeof out, "CUDALOAD_SOURCES=override CUDALOAD_PATH='%s' '%s/tests/stub_nvshmem'", site, build), 0);
    assert_int_equal(val(out, "version"), 30800);
    st = sh(out, sizeof out, "CUDALOAD_SOURCES=override CUDALOAD_PATH='%s' '%s/tests/stub_nvshmem' init 2>&1", site, build);
    assert_int_equal(st, 255);
    assert_int_equal(val(out, "get_uniqueid"), 0);
    assert_int_equal(val(out, "set_attr"), 0);
    assert_non_null(strstr(out, "nvshmemi_init_thread"));
}

/* Whether include/cudaload_<id>.h compiles (lang "c" or "c++") with the library's headers in inc
 * ahead of the toolkit's, keeping its layout: as many function pointers and then as many flags as
 * it has entries, the layout libcudaload fills (libcudaload/api_layouts.inc, the pinned headers').
 * The compiler's messages into out; -1 when the header has no entries. */
static int table_header_compiles(char *out, size_t n, const char *top, const char *id, const char *inc, const char *lang) {
    char count[64], first[256];
    if (sh(count, sizeof count, "grep -c '^    X(' '%s/include/cudaload_%s.h'", top, id) != 0 || atoi(count) < 1 ||
        sh(first, sizeof first, "sed -n 's/^    X(\\([A-Za-z0-9_]*\\),.*/\\1/p' '%s/include/cudaload_%s.h' | head -1", top, id) != 0) {
        snprintf(out, n, "no entries in %s/include/cudaload_%s.h", top, id);
        return -1;
    }
    first[strcspn(first, "\n")] = 0;
    int c = strcmp(lang, "c") == 0;
    return sh(out, n,
              "printf '#include <assert.h>\\n#include <stddef.h>\\n#include <cudaload_%s.h>\\n"
              "static_assert(offsetof(cudaload_%s_table, has) == %d * sizeof(void (*)(void)), \"the members moved\");\\n"
              "static_assert(sizeof ((cudaload_%s_table *)0)->has == %d, \"the flags moved\");\\n"
              "int main(void) { const cudaload_%s_table *t = cudaload_%s(); return t && t->has.%s; }\\n' | "
              "%s -Wall -Werror -Wno-deprecated-declarations -x %s -fsyntax-only -I'%s/include' -isystem '%s' -isystem '%s/include' - 2>&1",
              id, id, atoi(count), id, atoi(count), id, id, first, c ? "cc -std=c11" : "c++ -std=c++17", c ? "c" : "c++",
              top, inc, cuda_home);
}

/* cudaload_<lib>.h compiled as C against the toolkit's copy of the library's headers
 * (CUDA_HOME/include, older than the pinned ones); what: the library, in the failure's words. */
static void table_header_compiles_with_toolkit(const char *top, const char *lib, const char *what) {
    char inc[PATH_MAX], out[4096];
    snprintf(inc, sizeof inc, "%s/include", cuda_home);
    if (table_header_compiles(out, sizeof out, top, lib, inc, "c") != 0)
        fail_msg("cudaload_%s.h with %s/include's older %s headers:\n%s", lib, cuda_home, what, out);
}

/* cudaload_cudnn.h names every function of the pinned cuDNN (9.28); a program built beside an
 * older cuDNN (torch's wheel, this machine's toolkit: 9.19) compiles it with those headers: the
 * entries newer than them keep their place, untyped (their "since", tools/api/cudnn-since.txt),
 * and the table keeps the layout libcudaload fills. */
static void test_cudnn_table_header_with_older_headers(void **state) {
    (void)state;
    const char *top = getenv("CUDALOAD_TEST_TOP");
    if (!top) TH_SKIP("CUDALOAD_TEST_TOP unset (the headers are read from the source tree)");
    char out[4096];
    if (sh(out, sizeof out, "grep -h '^#define CUDNN_MINOR' '%s/include/cudnn_version.h' 2>/dev/null | awk '{print $3}'", cuda_home) != 0 ||
        !out[0] || atoi(out) >= 28)
        TH_SKIP("no cuDNN 9 older than 9.28 in CUDA_HOME/include (cudnn_version.h)");
    table_header_compiles_with_toolkit(top, "cudnn", "cuDNN");
}

/* The same for NCCL (tools/api/nccl-since.txt): the toolkit's nccl.h (CUDA 13.0's: 2.28.9) is older
 * than the pinned 2.32.3. */
static void test_nccl_table_header_with_older_headers(void **state) {
    (void)state;
    const char *top = getenv("CUDALOAD_TEST_TOP");
    if (!top) TH_SKIP("CUDALOAD_TEST_TOP unset (the headers are read from the source tree)");
    char out[4096], pinned[64];
    assert_int_equal(sh(pinned, sizeof pinned, "awk '$1 == \"nccl\" { split($2, r, \"==\"); split(r[2], v, \".\"); "
                                                "print v[1] * 10000 + v[2] * 100 + v[3] }' '%s/tools/api/wheel-libs.txt'", top), 0);
    assert_true(atoi(pinned) > 20000);
    if (sh(out, sizeof out, "awk '$2 == \"NCCL_VERSION_CODE\" {print $3}' '%s/include/nccl.h' 2>/dev/null", cuda_home) != 0 ||
        !out[0] || atoi(out) >= atoi(pinned))
        TH_SKIP("no NCCL older than the pinned one in CUDA_HOME/include (nccl.h)");
    table_header_compiles_with_toolkit(top, "nccl", "NCCL");
}

/* And with the oldest headers of each library whose releases were read (tools/api/wheel-older.txt:
 * NCCL 2.16, cuSPARSELt 0.6, cuTENSOR 2.0, nvSHMEM 3.3, cuDNN 9.0), fetched into the wheel cache
 * beside the pinned ones (tools/wheel_files.py headers). */
static void test_wheel_table_headers_with_oldest_headers(void **state) {
    (void)state;
    const char *top = getenv("CUDALOAD_TEST_TOP"), *wheels = getenv("WHEEL_FILES");
    if (!top || !wheels || !wheels[0]) TH_SKIP("CUDALOAD_TEST_TOP or WHEEL_FILES unset (the source and the wheels' headers)");
    char list[4096], out[8192], missing[2048] = "";
    assert_int_equal(sh(list, sizeof list, "sed 's/#.*//' '%s/tools/api/wheel-older.txt' | awk 'NF == 4 {print $1, $2, $3, $4}'", top), 0);
    int rows = 0;
    for (char *line = strtok(list, "\n"); line; line = strtok(NULL, "\n")) {
        char row[64], req[128], dir[256], lang[8], id[64], inc[PATH_MAX];
        assert_int_equal(sscanf(line, "%63s %127s %255s %7s", row, req, dir, lang), 4);
        size_t k = 0;
        for (const char *p = row; *p && k + 1 < sizeof id; p++)
            if (isalnum((unsigned char)*p)) id[k++] = (char)tolower((unsigned char)*p);
        id[k] = 0;
        char *eq = strstr(req, "==");
        assert_non_null(eq);
        *eq = '-';
        memmove(eq + 1, eq + 2, strlen(eq + 2) + 1);
        snprintf(inc, sizeof inc, "%s/%s/%s", wheels, req, dir);
        if (access(inc, F_OK) != 0) {
            snprintf(missing + strlen(missing), sizeof missing - strlen(missing), " %s", req);
            continue;
        }
        if (table_header_compiles(out, sizeof out, top, id, inc, lang) != 0)
            fail_msg("cudaload_%s.h with %s's headers (%s):\n%s", id, req, lang, out);
        rows++;
    }
    assert_true(rows + (missing[0] != 0) > 0);
    if (missing[0]) TH_SKIP("not in the wheel cache (tools/wheel_files.py headers, offline?):%s", missing);
}

/* Into out: the names real_cmd prints that neither stub_cmd prints nor docs/api-coverage.md
 * leaves out for row (nothing when every export is covered); each command prints a name a line. */
static void uncovered(char *out, size_t n, const char *top, const char *row, const char *real_cmd, const char *stub_cmd) {
    char tmp[PATH_MAX + 32];
    snprintf(tmp, sizeof tmp, "%s/stub-cover", build);
    int st = sh(out, n,
                "mkdir -p '%s' && cd '%s' && { %s; } | sort -u > real && { %s; } | sort -u > stub && "
                "{ grep '^\\*\\*%s\\*\\*, left out:' '%s/docs/api-coverage.md' | grep -o '`[^`]*`' | tr -d '`'; } "
                "| sort -u > left; comm -23 real stub | comm -23 - left",
                tmp, tmp, real_cmd, stub_cmd, row, top);
    assert_int_equal(st, 0);
}

static void test_stubs_cover_every_export(void **state) {
    (void)state;
    const char *top = getenv("CUDALOAD_TEST_TOP");
    if (!top) TH_SKIP("CUDALOAD_TEST_TOP unset (docs/api-coverage.md is read from the source tree)");
    char out[65536];
    /* row name, stub id, the toolkit's file (the driver: its link stub) */
    static const char *const libs[][3] = {
        {"cuda", "cuda", "stubs/libcuda.so"}, {"cudart", "cudart", "libcudart.so.13"},
        {"cublasLt", "cublaslt", "libcublasLt.so.13"}, {"cublas", "cublas", "libcublas.so.13"},
        {"nvrtc", "nvrtc", "libnvrtc.so.13"}, {"nvJitLink", "nvjitlink", "libnvJitLink.so.13"},
        {"cufft", "cufft", "libcufft.so.12"}, {"curand", "curand", "libcurand.so.10"},
        {"cusparse", "cusparse", "libcusparse.so.12"}, {"cusolver", "cusolver", "libcusolver.so.12"}};
    for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++) {
        char real[PATH_MAX];
        snprintf(real, sizeof real, "%s/lib64/%s", cuda_home, libs[i][2]);
        if (access(real, R_OK) != 0) continue;
        char real_cmd[PATH_MAX + 128], stub_cmd[2 * PATH_MAX];
        snprintf(real_cmd, sizeof real_cmd, "nm -D --defined-only '%s' | awk '$2==\"T\"{sub(/@.*/,\"\",$3); print $3}'", real);
        snprintf(stub_cmd, sizeof stub_cmd, "nm -D --defined-only '%s/stubs/libcudaload-%s.so' | awk '$2==\"T\"{sub(/@.*/,\"\",$3); print $3}'",
                 build, libs[i][1]);
        uncovered(out, sizeof out, top, libs[i][0], real_cmd, stub_cmd);
        if (out[0]) fail_msg("%s: exported by %s, not in its stub nor listed as left out:\n%s", libs[i][0], real, out);
    }
    /* the libraries that ship as wheels of their own: their exports as read from the pinned wheel
     * (tools/api/<row>-exports.txt, every row there), T and W alike (NCCL's API is weak aliases) */
    int n = 0, n_rows = 0;
    char ids[4096];
    /* id and row of each stub whose headers come from a wheel (stubs/gen/stubs.mk: STUB_WHEEL_<id>) */
    assert_int_equal(sh(ids, sizeof ids, "cd '%s' && for id in $(sed -n 's/^STUB_WHEEL_\\([a-z0-9]*\\) := .*/\\1/p' stubs/gen/stubs.mk); do "
                                         "echo \"$id $(sed -n \"s/^STUB_ROW_$id := //p\" stubs/gen/stubs.mk)\"; done", top), 0);
    for (char *line = strtok(ids, "\n"); line; line = strtok(NULL, "\n")) {
        char id[64], row[64];
        if (sscanf(line, "%63s %63s", id, row) != 2) fail_msg("stubs.mk: %s", line);
        n_rows++;
        char so[PATH_MAX + 64]; /* the archive: every stub has one */
        snprintf(so, sizeof so, "%s/stubs/libcudaload-%s.a", build, id);
        if (access(so, R_OK) != 0) continue; /* not built here: its headers could not be fetched */
        char real_cmd[PATH_MAX + 128], stub_cmd[PATH_MAX + 128];
        snprintf(real_cmd, sizeof real_cmd, "grep -v '^#' '%s/tools/api/%s-exports.txt' | sed 's/@.*//'", top, row);
        /* T and W: nvSHMEM's collective launch is weak there (tools/gen_api.py, WEAK_BY_ROW) */
        snprintf(stub_cmd, sizeof stub_cmd, "nm -g --defined-only '%s' | awk '$2==\"T\"||$2==\"W\"{print $3}'", so);
        uncovered(out, sizeof out, top, row, real_cmd, stub_cmd);
        if (out[0]) fail_msg("%s: exported by its pinned wheel's library, not in its stub nor listed as left out:\n%s", row, out);
        n++;
    }
    if (have("stub_wheels")) assert_int_equal(n, n_rows);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_cuda_dt_needed),
        cmocka_unit_test(test_toolkit_runtime_through_cuda_home),
        cmocka_unit_test(test_nothing_findable_gives_library_codes),
        cmocka_unit_test(test_failure_says_why_once),
        cmocka_unit_test(test_registrations_replayed_after_late_init),
        cmocka_unit_test(test_two_modules_beside_the_real_runtime),
        cmocka_unit_test(test_tables_resolve_in_the_toolkit),
        cmocka_unit_test(test_other_major_keeps_only_stable_entries),
        cmocka_unit_test(test_preload_mode),
        cmocka_unit_test(test_stubs_cover_every_export),
        cmocka_unit_test(test_wheel_stubs_give_library_codes),
        cmocka_unit_test(test_nvshmem_stub_with_the_wheel),
        cmocka_unit_test(test_nvshmem_program_links_with_the_stub),
        cmocka_unit_test(test_cudnn_table_header_with_older_headers),
        cmocka_unit_test(test_nccl_table_header_with_older_headers),
        cmocka_unit_test(test_wheel_table_headers_with_oldest_headers),
        cmocka_unit_test(test_threads_and_fork),
        cmocka_unit_test(test_all_shared_stubs_together),
        cmocka_unit_test(test_hidden_version_binding),
        cmocka_unit_test(test_unversioned_shared_stubs),
        cmocka_unit_test(test_reentered_stub_fails_fast),
        cmocka_unit_test(test_out_parameters_filled_on_failure),
        cmocka_unit_test(test_out_parameters_filled_when_absent),
        cmocka_unit_test(test_registrations_race_the_replay),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
