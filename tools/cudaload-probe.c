/*
 * cudaload-probe -- tell a user exactly which CUDA libraries libcudaload searched, found,
 * took or skipped and why, whether the driver and the GPU really run, and how to build
 * against what was found. Text (default) or JSON (--json, schema in docs/probe.md).
 *
 * Exit codes (docs/probe.md):
 *   0  driver, cudart and cuBLAS usable and, with a GPU, the self-test passed
 *   1  a required library (cudart or cuBLAS) was not found or cannot be used
 *   2  the libraries are there, but there is no driver or no device
 *   3  the self-test failed
 *   4  usage error
 */
#define _GNU_SOURCE
#include "cudaload_tables.h"
#include "probe_json.h"

#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { EXIT_OK = 0, EXIT_LIB_MISSING = 1, EXIT_NO_GPU = 2, EXIT_SELFTEST = 3, EXIT_USAGE = 4 };
#define SCHEMA_VERSION 1
#define MAX_DEVICES 16
#define MAX_NOTES 32

typedef struct device {
    char name[256];
    int cc_major, cc_minor;
    size_t memory;
    int has_sass, would_jit;
    cudaload_status runnable;
    char why[512];
} device;

typedef struct test_result {
    int ran, pass;
    double max_rel_err, ms, rate; /* GB/s or TFLOP/s */
    const char *backend;
    char error[512];
} test_result;

typedef struct probe {
    int json, find_only, selftest, quiet, color;
    cudaload_status init_status;
    char init_error[16384];
    cudaload_library_info lib[CUDALOAD_LIB_COUNT_];
    const cudaload_root *roots;
    size_t n_roots;
    int ndev;
    cudaload_status dev_status;
    char dev_error[1024];
    device dev[MAX_DEVICES];
    cudaload_kernels_info kinfo;
    test_result saxpy, sgemm;
    int selftest_attempted;
    char *warnings[MAX_NOTES];
    int n_warnings;
    char *fixes[MAX_NOTES];
    int n_fixes;
    char include_dirs[2][PATH_MAX];
    char link_flags[4 * PATH_MAX];
    char nvrtc[PATH_MAX]; /* libnvrtc beside the runtime, when present (reported, not loaded) */
} probe;

/* Appends a note unless the same text is already there. */
static void note(char **list, int *n, const char *fmt, ...) {
    if (*n >= MAX_NOTES) return;
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0) s = NULL;
    va_end(ap);
    for (int i = 0; s && i < *n; i++)
        if (strcmp(list[i], s) == 0) {
            free(s);
            return;
        }
    if (s) list[(*n)++] = s;
}

static void usage(FILE *f) {
    fprintf(f,
            "usage: cudaload-probe [--json] [--root DIR]... [--find-only] [--no-selftest]\n"
            "                      [--quiet] [--help] [--version]\n"
            "  --json          machine-readable report (schema: docs/probe.md)\n"
            "  --root DIR      search DIR first (a site-packages or library dir), like the\n"
            "                  roots the Python package passes; repeatable\n"
            "  --find-only     locate the libraries without loading any of them\n"
            "  --no-selftest   skip the SAXPY/SGEMM self-test on the GPU\n"
            "  --quiet         print nothing; the exit code tells\n"
            "Exit: 0 ok, 1 library missing, 2 no driver or no device, 3 self-test failed,\n"
            "4 usage. Environment: CUDALOAD_PATH, CUDALOAD_{CUDART,CUBLAS,CUBLASLT,DRIVER}_PATH,\n"
            "CUDALOAD_CUDA_MAJOR, CUDALOAD_SOURCES, CUDALOAD_DEBUG (docs/search-order.md).\n");
}

/* ---- gathering ---- */

static const char *const env_names[] = {
    "CUDALOAD_PATH",   "CUDALOAD_CUDART_PATH", "CUDALOAD_CUBLAS_PATH", "CUDALOAD_CUBLASLT_PATH",
    "CUDALOAD_DRIVER_PATH", "CUDALOAD_CUDA_MAJOR", "CUDALOAD_SOURCES", "CUDALOAD_DEBUG",
    "CUDALOAD_BACKEND", "CUDA_HOME", "CUDA_PATH", "CONDA_PREFIX", "VIRTUAL_ENV", "LD_LIBRARY_PATH",
};

static void dirname_of(const char *path, char *out, size_t n) {
    snprintf(out, n, "%s", path);
    char *slash = strrchr(out, '/');
    if (slash && slash != out) *slash = 0;
}

static int file_exists(const char *dir, const char *name) {
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return access(p, F_OK) == 0;
}

/* <libdir>/../include when it holds the header (wheel and toolkit layouts alike). */
static int include_dir_for(const char *lib_path, const char *header, char *out, size_t n) {
    char dir[PATH_MAX], inc[PATH_MAX + 16];
    dirname_of(lib_path, dir, sizeof dir);
    snprintf(inc, sizeof inc, "%s/../include", dir);
    char *real = realpath(inc, NULL);
    if (!real) return 0;
    int ok = file_exists(real, header);
    if (ok) snprintf(out, n, "%s", real);
    free(real);
    return ok;
}

static void build_flags(probe *p) {
    const cudaload_library_info *rt = &p->lib[CUDALOAD_LIB_CUDART], *bl = &p->lib[CUDALOAD_LIB_CUBLAS];
    if (rt->status != CUDALOAD_OK) return;
    include_dir_for(rt->path, "cuda_runtime_api.h", p->include_dirs[0], PATH_MAX);
    if (bl->status == CUDALOAD_OK && !include_dir_for(bl->path, "cublas_v2.h", p->include_dirs[1], PATH_MAX))
        p->include_dirs[1][0] = 0;
    if (p->include_dirs[1][0] && strcmp(p->include_dirs[0], p->include_dirs[1]) == 0) p->include_dirs[1][0] = 0;
    char rdir[PATH_MAX], bdir[PATH_MAX];
    dirname_of(rt->path, rdir, sizeof rdir);
    int n = snprintf(p->link_flags, sizeof p->link_flags, "-L%s -l:%s", rdir, rt->soname);
    if (bl->status == CUDALOAD_OK) {
        dirname_of(bl->path, bdir, sizeof bdir);
        if (strcmp(bdir, rdir) != 0) n += snprintf(p->link_flags + n, sizeof p->link_flags - (size_t)n, " -L%s", bdir);
        n += snprintf(p->link_flags + n, sizeof p->link_flags - (size_t)n, " -l:%s", bl->soname);
    }
    n += snprintf(p->link_flags + n, sizeof p->link_flags - (size_t)n, " -Wl,-rpath,%s", rdir);
    if (bl->status == CUDALOAD_OK && strcmp(bdir, rdir) != 0)
        snprintf(p->link_flags + n, sizeof p->link_flags - (size_t)n, " -Wl,-rpath,%s", bdir);
}

/* NVRTC is optional and libcudaload does not load it: report a libnvrtc.so.<major> next to
 * the runtime taken (same directory: CUDA 13 wheels, toolkits, conda) or in the CUDA 12
 * wheel layout (site-packages/nvidia/cuda_nvrtc/lib). */
static void find_nvrtc(probe *p) {
    const cudaload_library_info *rt = &p->lib[CUDALOAD_LIB_CUDART];
    if (rt->status != CUDALOAD_OK || !rt->major) return;
    char dir[PATH_MAX], name[32], cand[PATH_MAX + 64];
    dirname_of(rt->path, dir, sizeof dir);
    snprintf(name, sizeof name, "libnvrtc.so.%d", rt->major);
    snprintf(cand, sizeof cand, "%s/%s", dir, name);
    if (access(cand, F_OK) != 0) snprintf(cand, sizeof cand, "%s/../../cuda_nvrtc/lib/%s", dir, name);
    char *real = access(cand, F_OK) == 0 ? realpath(cand, NULL) : NULL;
    if (real) snprintf(p->nvrtc, sizeof p->nvrtc, "%s", real);
    free(real);
}

/* A library (or its directory) that other users may write to can be replaced under the
 * program that loads it: a warning, not a refusal (docs/security.md). */
static void check_writable(probe *p) {
    for (int i = 0; i < CUDALOAD_LIB_COUNT_; i++) {
        const cudaload_library_info *l = &p->lib[i];
        if (l->status != CUDALOAD_OK || !l->path) continue;
        char dir[PATH_MAX];
        dirname_of(l->path, dir, sizeof dir);
        struct stat fs, ds;
        if (stat(l->path, &fs) == 0 && (fs.st_mode & S_IWOTH))
            note(p->warnings, &p->n_warnings, "%s is writable by every user (mode %03o): anyone can replace the code "
                 "this process runs", l->path, (unsigned)(fs.st_mode & 0777));
        if (stat(dir, &ds) == 0 && (ds.st_mode & S_IWOTH) && !(ds.st_mode & S_ISVTX))
            note(p->warnings, &p->n_warnings, "%s (holding %s) is writable by every user (mode %03o): anyone can put "
                 "another library there", dir, l->name, (unsigned)(ds.st_mode & 0777));
    }
}

/* LD_LIBRARY_PATH dirs holding a CUDA runtime or cuBLAS: every program that loads CUDA by
 * SONAME (torch, cupy, ctypes) takes those before any wheel. */
static void check_ld_library_path(probe *p) {
    const char *llp = getenv("LD_LIBRARY_PATH");
    if (!llp || !llp[0]) return;
    char *copy = strdup(llp), *save = NULL;
    for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        static const char *const names[] = {"libcudart.so.13", "libcudart.so.12", "libcublas.so.13", "libcublas.so.12"};
        for (size_t i = 0; i < 4; i++) {
            if (!file_exists(d, names[i])) continue;
            const cudaload_library_info *taken = &p->lib[i < 2 ? CUDALOAD_LIB_CUDART : CUDALOAD_LIB_CUBLAS];
            char tdir[PATH_MAX] = "";
            if (taken->status == CUDALOAD_OK) dirname_of(taken->path, tdir, sizeof tdir);
            char *rd = realpath(d, NULL);
            int same = rd && tdir[0] && strcmp(rd, tdir) == 0;
            free(rd);
            if (same && taken->source == CUDALOAD_SOURCE_SYSTEM) {
                note(p->warnings, &p->n_warnings,
                     "%s was taken from LD_LIBRARY_PATH (%s), by the system search: no wheel, conda or "
                     "CUDA_HOME copy was found before it", names[i], d);
            } else if (!same) {
                note(p->warnings, &p->n_warnings,
                     "LD_LIBRARY_PATH puts %s/%s ahead of the wheels for every program that loads CUDA by "
                     "SONAME (torch, cupy, ctypes), while libcudaload took %s",
                     d, names[i], taken->status == CUDALOAD_OK ? taken->path : "none");
                note(p->fixes, &p->n_fixes, "unset LD_LIBRARY_PATH (or remove %s from it) so the pip wheels are used", d);
            }
        }
    }
    free(copy);
}

static void gather_devices(probe *p) {
    if (p->find_only) {
        p->dev_status = CUDALOAD_ERROR_NOT_ATTEMPTED;
        return;
    }
    p->dev_status = cudaload_device_count(&p->ndev);
    if (p->dev_status != CUDALOAD_OK) {
        snprintf(p->dev_error, sizeof p->dev_error, "%s", cudaload_last_error());
        return;
    }
    const cudaload_driver_table *d = cudaload_driver();
    for (int i = 0; i < p->ndev && i < MAX_DEVICES; i++) {
        device *dv = &p->dev[i];
        CUdevice cu;
        if (d->cuDeviceGet(&cu, i) == CUDA_SUCCESS) {
            if (d->cuDeviceGetName(dv->name, sizeof dv->name, cu) != CUDA_SUCCESS) snprintf(dv->name, sizeof dv->name, "?");
            d->cuDeviceTotalMem(&dv->memory, cu);
        }
        cudaload_kernels_info k = {.size = sizeof k};
        cudaload_kernels_info_get(i, &k);
        dv->cc_major = k.cc_major;
        dv->cc_minor = k.cc_minor;
        dv->has_sass = k.has_sass;
        dv->would_jit = k.would_jit;
        dv->runnable = k.runnable;
        if (k.runnable != CUDALOAD_OK) snprintf(dv->why, sizeof dv->why, "%s", cudaload_last_error());
    }
}

/* ---- self-test: SAXPY and SGEMM on random data against a CPU reference ---- */

static unsigned long long rng = 0x9e3779b97f4a7c15ULL;
static float frand(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (float)((rng >> 40) & 0xffffff) / 16777216.0f * 2.0f - 1.0f;
}

static int cmpf(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

#define ST_CHECK(t, what, call)                                                                     \
    do {                                                                                            \
        cudaError_t e_ = (call);                                                                    \
        if (e_ != cudaSuccess) {                                                                    \
            snprintf((t)->error, sizeof (t)->error, "%s failed: %s (%s)", what, rt->cudaGetErrorName(e_), \
                     rt->cudaGetErrorString(e_));                                                   \
            goto out;                                                                               \
        }                                                                                           \
    } while (0)

static const char *backend_name(cudaload_backend b) {
    return b == CUDALOAD_BACKEND_BUNDLED ? "bundled" : b == CUDALOAD_BACKEND_CUBLAS ? "cublas" : "auto";
}

/* Median milliseconds of reps runs of launch (which returns a status). */
typedef cudaload_status (*launch_fn)(void *ctx);
static int time_median(const cudaload_cudart_table *rt, launch_fn fn, void *ctx, int reps, float *ms) {
    cudaEvent_t a = NULL, b = NULL;
    float t[16];
    int ok = rt->cudaEventCreate(&a) == cudaSuccess && rt->cudaEventCreate(&b) == cudaSuccess;
    for (int r = 0; ok && r < reps; r++) {
        ok = rt->cudaEventRecord(a, NULL) == cudaSuccess && fn(ctx) == CUDALOAD_OK &&
             rt->cudaEventRecord(b, NULL) == cudaSuccess && rt->cudaEventSynchronize(b) == cudaSuccess &&
             rt->cudaEventElapsedTime(&t[r], a, b) == cudaSuccess;
    }
    if (a) rt->cudaEventDestroy(a);
    if (b) rt->cudaEventDestroy(b);
    if (!ok) return 0;
    qsort(t, (size_t)reps, sizeof t[0], cmpf);
    *ms = t[reps / 2];
    return 1;
}

typedef struct saxpy_args {
    long long n;
    float a;
    float *x, *y;
} saxpy_args;
static cudaload_status run_saxpy(void *c) {
    saxpy_args *s = c;
    return cudaload_saxpy(s->n, s->a, s->x, s->y, NULL);
}

typedef struct sgemm_args {
    int n;
    float *A, *B, *C;
} sgemm_args;
static cudaload_status run_sgemm(void *c) {
    sgemm_args *s = c;
    return cudaload_sgemm(CUDALOAD_OP_N, CUDALOAD_OP_N, s->n, s->n, s->n, 1.0f, s->A, s->n, s->B, s->n, 0.0f, s->C, s->n,
                          NULL);
}

static void selftest_saxpy(const cudaload_cudart_table *rt, test_result *t) {
    const long long n = 1LL << 24;
    const size_t bytes = (size_t)n * sizeof(float);
    float *x = malloc(bytes), *y = malloc(bytes), *out = malloc(bytes), *dx = NULL, *dy = NULL;
    t->ran = 1;
    if (!x || !y || !out) {
        snprintf(t->error, sizeof t->error, "out of host memory");
        goto out;
    }
    for (long long i = 0; i < n; i++) x[i] = frand(), y[i] = frand();
    ST_CHECK(t, "cudaMalloc", rt->cudaMalloc((void **)&dx, bytes));
    ST_CHECK(t, "cudaMalloc", rt->cudaMalloc((void **)&dy, bytes));
    ST_CHECK(t, "cudaMemcpy", rt->cudaMemcpy(dx, x, bytes, cudaMemcpyHostToDevice));
    ST_CHECK(t, "cudaMemcpy", rt->cudaMemcpy(dy, y, bytes, cudaMemcpyHostToDevice));
    saxpy_args s = {n, 0.75f, dx, dy};
    cudaload_status st = run_saxpy(&s);
    if (st != CUDALOAD_OK) {
        snprintf(t->error, sizeof t->error, "%s: %s", cudaload_status_name(st), cudaload_last_error());
        goto out;
    }
    ST_CHECK(t, "cudaMemcpy", rt->cudaMemcpy(out, dy, bytes, cudaMemcpyDeviceToHost));
    cudaload_kernels_info k = {.size = sizeof k};
    cudaload_kernels_info_get(-1, &k);
    t->backend = backend_name(k.last_backend);
    for (long long i = 0; i < n; i++) {
        double want = 0.75 * (double)x[i] + y[i];
        double err = fabs(out[i] - want) / (fabs(want) + 1e-6);
        if (err > t->max_rel_err) t->max_rel_err = err;
    }
    float ms = 0;
    if (!time_median(rt, run_saxpy, &s, 11, &ms)) {
        snprintf(t->error, sizeof t->error, "timing failed: %s", cudaload_last_error());
        goto out;
    }
    t->ms = ms;
    t->rate = 12.0 * (double)n / (ms / 1e3) / 1e9;
    t->pass = t->max_rel_err < 1e-5;
out:
    if (dx) rt->cudaFree(dx);
    if (dy) rt->cudaFree(dy);
    free(x), free(y), free(out);
}

static void selftest_sgemm(const cudaload_cudart_table *rt, test_result *t) {
    const int n = 1024;
    const size_t elems = (size_t)n * n, bytes = elems * sizeof(float);
    float *A = malloc(bytes), *B = malloc(bytes), *C = malloc(bytes), *dA = NULL, *dB = NULL, *dC = NULL;
    t->ran = 1;
    if (!A || !B || !C) {
        snprintf(t->error, sizeof t->error, "out of host memory");
        goto out;
    }
    for (size_t i = 0; i < elems; i++) A[i] = frand(), B[i] = frand(), C[i] = NAN; /* beta = 0: C must not be read */
    ST_CHECK(t, "cudaMalloc", rt->cudaMalloc((void **)&dA, bytes));
    ST_CHECK(t, "cudaMalloc", rt->cudaMalloc((void **)&dB, bytes));
    ST_CHECK(t, "cudaMalloc", rt->cudaMalloc((void **)&dC, bytes));
    ST_CHECK(t, "cudaMemcpy", rt->cudaMemcpy(dA, A, bytes, cudaMemcpyHostToDevice));
    ST_CHECK(t, "cudaMemcpy", rt->cudaMemcpy(dB, B, bytes, cudaMemcpyHostToDevice));
    ST_CHECK(t, "cudaMemcpy", rt->cudaMemcpy(dC, C, bytes, cudaMemcpyHostToDevice));
    sgemm_args s = {n, dA, dB, dC};
    cudaload_status st = run_sgemm(&s);
    if (st != CUDALOAD_OK) {
        snprintf(t->error, sizeof t->error, "%s: %s", cudaload_status_name(st), cudaload_last_error());
        goto out;
    }
    ST_CHECK(t, "cudaMemcpy", rt->cudaMemcpy(C, dC, bytes, cudaMemcpyDeviceToHost));
    cudaload_kernels_info k = {.size = sizeof k};
    cudaload_kernels_info_get(-1, &k);
    t->backend = backend_name(k.last_backend);
    for (int s_ = 0; s_ < 512; s_++) { /* a sample of entries, in float64 */
        int i = (int)((unsigned)(s_ * 2654435761u) % (unsigned)n), j = (s_ * 37 + 11) % n;
        double ref = 0, mag = 0;
        for (int p = 0; p < n; p++) {
            ref += (double)A[i + (size_t)p * n] * B[p + (size_t)j * n];
            mag += fabs((double)A[i + (size_t)p * n] * B[p + (size_t)j * n]);
        }
        double err = fabs(C[i + (size_t)j * n] - ref) / (mag + 1e-30);
        if (!(err <= t->max_rel_err)) t->max_rel_err = isnan(err) ? INFINITY : err;
    }
    float ms = 0;
    if (!time_median(rt, run_sgemm, &s, 11, &ms)) {
        snprintf(t->error, sizeof t->error, "timing failed: %s", cudaload_last_error());
        goto out;
    }
    t->ms = ms;
    t->rate = 2.0 * n * (double)n * n / (ms / 1e3) / 1e12;
    t->pass = t->max_rel_err < 1e-5;
out:
    if (dA) rt->cudaFree(dA);
    if (dB) rt->cudaFree(dB);
    if (dC) rt->cudaFree(dC);
    free(A), free(B), free(C);
}

/* ---- text output ---- */

static const char *c_on(const probe *p, const char *code) { return p->color ? code : ""; }
#define BOLD "\033[1m"
#define RED "\033[31m"
#define GREEN "\033[32m"
#define YELLOW "\033[33m"
#define RESET "\033[0m"

static const char *lib_state(const cudaload_library_info *l) {
    if (l->status == CUDALOAD_OK) return l->loaded ? "loaded" : "found";
    if (l->status == CUDALOAD_ERROR_NOT_FOUND || l->status == CUDALOAD_ERROR_NOT_ATTEMPTED) return "not_found";
    return "error";
}

static void print_version(const cudaload_library_info *l, char *buf, size_t n) {
    if (l->version <= 0) snprintf(buf, n, "version unknown");
    else if (l->lib == CUDALOAD_LIB_CUBLAS || l->lib == CUDALOAD_LIB_CUBLASLT)
        snprintf(buf, n, "%d.%d.%d", l->version / 10000, l->version / 100 % 100, l->version % 100);
    else
        snprintf(buf, n, "CUDA %d.%d (%d)", l->version / 1000, l->version % 1000 / 10, l->version);
}

static void text_report(const probe *p, int code) {
    printf("%slibcudaload %s%s: cudaload-probe%s\n\n", c_on(p, BOLD), cudaload_version_string(),
           p->find_only ? " (find-only: nothing loaded)" : "", c_on(p, RESET));
    printf("%sSearch roots, in order%s\n", c_on(p, BOLD), c_on(p, RESET));
    if (!p->n_roots) printf("  (none)\n");
    for (size_t i = 0; i < p->n_roots; i++)
        printf("  %2zu  %-9s  %s%s\n", i + 1, cudaload_source_name(p->roots[i].source), p->roots[i].path,
               p->roots[i].exists ? "" : "  (missing)");
    printf("      then the system search (dlopen by SONAME)\n\n");

    printf("%sLibraries%s\n", c_on(p, BOLD), c_on(p, RESET));
    for (int i = 0; i < CUDALOAD_LIB_COUNT_; i++) {
        const cudaload_library_info *l = &p->lib[i];
        int ok = l->status == CUDALOAD_OK;
        printf("  %-9s %s%s%s", l->name, c_on(p, ok ? GREEN : RED), ok ? lib_state(l) : cudaload_status_string(l->status),
               c_on(p, RESET));
        if (ok) {
            char v[64];
            print_version(l, v, sizeof v);
            printf("  %s, %s%s%s%s\n            %s\n", l->soname, cudaload_source_name(l->source),
                   l->already_loaded ? " (already loaded)" : "", l->driver_branch ? ", branch " : "",
                   l->driver_branch ? l->driver_branch : "", l->path);
            printf("            %s\n", v);
        } else {
            printf("  (%s)\n", cudaload_status_name(l->status));
        }
        for (size_t c = 0; c < l->n_candidates; c++) {
            const cudaload_candidate *cd = &l->candidates[c];
            if (ok && l->n_candidates == 1) break; /* the one taken is shown above */
            printf("            %s %s [%s]\n              %s\n", cd->result == CUDALOAD_OK ? "+" : "-", cd->path,
                   cudaload_source_name(cd->source), cd->reason);
        }
    }
    printf("  %-9s %s\n", "nvrtc", p->nvrtc[0] ? "found (optional; not loaded)" : "not found (optional)");
    if (p->nvrtc[0]) printf("            %s\n", p->nvrtc);
    printf("\n%sDevices%s\n", c_on(p, BOLD), c_on(p, RESET));
    if (p->dev_status == CUDALOAD_ERROR_NOT_ATTEMPTED) printf("  not queried (find-only)\n");
    else if (p->dev_status != CUDALOAD_OK) printf("  none: %s\n", cudaload_status_string(p->dev_status));
    for (int i = 0; i < p->ndev && i < MAX_DEVICES; i++) {
        const device *d = &p->dev[i];
        printf("  %d  %s  sm_%d%d  %.1f GiB  kernels: %s\n", i, d->name, d->cc_major, d->cc_minor,
               (double)d->memory / (1 << 30),
               d->runnable == CUDALOAD_OK ? (d->has_sass ? "SASS" : "PTX (JIT at first use)") : cudaload_status_name(d->runnable));
        if (d->runnable != CUDALOAD_OK) printf("     %s\n", d->why);
    }
    printf("\n%sBundled kernels%s\n", c_on(p, BOLD), c_on(p, RESET));
    if (p->kinfo.built)
        printf("  built by CUDA %d.%d: SASS sm_%s; PTX compute_%d; %zu KiB embedded\n", p->kinfo.toolkit_version / 1000,
               p->kinfo.toolkit_version % 1000 / 10, p->kinfo.sass_archs, p->kinfo.ptx_arch, p->kinfo.fatbin_bytes / 1024);
    else
        printf("  not built (libcudaload was built without nvcc): SAXPY/SGEMM use cuBLAS\n");

    printf("\n%sEnvironment%s\n", c_on(p, BOLD), c_on(p, RESET));
    int any = 0;
    for (size_t i = 0; i < sizeof env_names / sizeof env_names[0]; i++) {
        const char *v = getenv(env_names[i]);
        if (v) printf("  %s=%s\n", env_names[i], v), any = 1;
    }
    if (!any) printf("  (no variable that steers the search is set)\n");

    if (p->lib[CUDALOAD_LIB_CUDART].status == CUDALOAD_OK) {
        printf("\n%sBuild against what was found%s\n", c_on(p, BOLD), c_on(p, RESET));
        if (p->include_dirs[0][0] || p->include_dirs[1][0])
            printf("  %s%s%s%s\n", p->include_dirs[0][0] ? "-I" : "", p->include_dirs[0], p->include_dirs[1][0] ? " -I" : "",
                   p->include_dirs[1]);
        else
            printf("  (no cuda_runtime_api.h beside these libraries: headers come with the toolkit, or with\n"
                   "   pip install nvidia-cuda-runtime / nvidia-cublas for CUDA 13)\n");
        printf("  %s\n", p->link_flags);
        printf("  or link no CUDA at all: embed libcudaload (pkg-config --cflags --libs cudaload)\n");
    }

    if (p->selftest_attempted) {
        printf("\n%sSelf-test%s\n", c_on(p, BOLD), c_on(p, RESET));
        const test_result *t[2] = {&p->saxpy, &p->sgemm};
        const char *names[2] = {"SAXPY n=2^24", "SGEMM 1024^3"};
        for (int i = 0; i < 2; i++) {
            if (!t[i]->ran) continue;
            if (t[i]->error[0]) {
                printf("  %-13s %sFAIL%s  %s\n", names[i], c_on(p, RED), c_on(p, RESET), t[i]->error);
                continue;
            }
            printf("  %-13s %s%s%s  max rel err %.2g  %.3f ms  %.0f %s  (%s)\n", names[i],
                   c_on(p, t[i]->pass ? GREEN : RED), t[i]->pass ? "pass" : "FAIL", c_on(p, RESET), t[i]->max_rel_err,
                   t[i]->ms, t[i]->rate, i == 0 ? "GB/s" : "TFLOP/s", t[i]->backend);
        }
    }
    if (p->n_warnings || p->n_fixes) printf("\n%sWarnings%s\n", c_on(p, BOLD), c_on(p, RESET));
    for (int i = 0; i < p->n_warnings; i++) printf("  %s!%s %s\n", c_on(p, YELLOW), c_on(p, RESET), p->warnings[i]);
    for (int i = 0; i < p->n_fixes; i++) printf("  fix: %s\n", p->fixes[i]);

    static const char *const what[] = {"ok", "a required library is missing or unusable",
                                       "libraries found, but no driver or no device", "the self-test failed"};
    printf("\n%sResult%s: %s%s%s (exit %d)\n", c_on(p, BOLD), c_on(p, RESET), c_on(p, code ? RED : GREEN), what[code],
           c_on(p, RESET), code);
    if (code != EXIT_OK && p->init_error[0]) {
        /* the library's own explanation, with its fix: lines */
        printf("\n%s", p->init_error);
        if (p->dev_status != CUDALOAD_OK && p->dev_status != CUDALOAD_ERROR_NOT_ATTEMPTED &&
            p->lib[CUDALOAD_LIB_DRIVER].status == CUDALOAD_OK)
            printf("%s\n", p->dev_error);
    } else if (code == EXIT_NO_GPU && p->dev_error[0]) {
        printf("\n%s\n", p->dev_error);
    }
}

/* ---- JSON output ---- */

static void json_test(pj_writer *w, const test_result *t) {
    pj_begin_object(w);
    pj_key(w, "pass"), pj_bool(w, t->pass && !t->error[0]);
    pj_key(w, "backend"), pj_string(w, t->backend);
    pj_key(w, "max_rel_err"), t->error[0] ? pj_null(w) : pj_double(w, t->max_rel_err);
    pj_key(w, "ms"), t->error[0] ? pj_null(w) : pj_double(w, t->ms);
    pj_key(w, "error"), pj_string(w, t->error[0] ? t->error : NULL);
    pj_end_object(w);
}

static void json_report(const probe *p, int code) {
    pj_writer w = {.out = stdout};
    pj_begin_object(&w);
    pj_key(&w, "schema_version"), pj_int(&w, SCHEMA_VERSION);
    pj_key(&w, "cudaload_version"), pj_string(&w, cudaload_version_string());
    pj_key(&w, "exit_code"), pj_int(&w, code);
    pj_key(&w, "find_only"), pj_bool(&w, p->find_only);
    pj_key(&w, "init_status"), pj_string(&w, cudaload_status_name(p->init_status));
    pj_key(&w, "roots"), pj_begin_array(&w);
    for (size_t i = 0; i < p->n_roots; i++) {
        pj_begin_object(&w);
        pj_key(&w, "path"), pj_string(&w, p->roots[i].path);
        pj_key(&w, "source"), pj_string(&w, cudaload_source_name(p->roots[i].source));
        pj_key(&w, "exists"), pj_bool(&w, p->roots[i].exists);
        pj_end_object(&w);
    }
    pj_end_array(&w);
    pj_key(&w, "libraries"), pj_begin_object(&w);
    for (int i = 0; i < CUDALOAD_LIB_COUNT_; i++) {
        const cudaload_library_info *l = &p->lib[i];
        int ok = l->status == CUDALOAD_OK;
        pj_key(&w, l->name), pj_begin_object(&w);
        pj_key(&w, "status"), pj_string(&w, lib_state(l));
        pj_key(&w, "status_code"), pj_string(&w, cudaload_status_name(l->status));
        pj_key(&w, "path"), pj_string(&w, ok ? l->path : NULL);
        pj_key(&w, "soname"), pj_string(&w, ok ? l->soname : NULL);
        pj_key(&w, "source"), pj_string(&w, ok ? cudaload_source_name(l->source) : NULL);
        pj_key(&w, "already_loaded"), pj_bool(&w, l->already_loaded);
        pj_key(&w, "major"), l->major ? pj_int(&w, l->major) : pj_null(&w);
        pj_key(&w, "version"), l->version > 0 ? pj_int(&w, l->version) : pj_null(&w);
        pj_key(&w, "candidates"), pj_begin_array(&w);
        for (size_t c = 0; c < l->n_candidates; c++) {
            pj_begin_object(&w);
            pj_key(&w, "path"), pj_string(&w, l->candidates[c].path);
            pj_key(&w, "source"), pj_string(&w, cudaload_source_name(l->candidates[c].source));
            pj_key(&w, "result"), pj_string(&w, l->candidates[c].result == CUDALOAD_OK ? "taken" : "skipped");
            pj_key(&w, "status_code"), pj_string(&w, cudaload_status_name(l->candidates[c].result));
            pj_key(&w, "reason"), pj_string(&w, l->candidates[c].reason);
            pj_end_object(&w);
        }
        pj_end_array(&w);
        pj_end_object(&w);
    }
    pj_key(&w, "nvrtc"), pj_begin_object(&w);
    pj_key(&w, "status"), pj_string(&w, p->nvrtc[0] ? "found" : "not_found");
    pj_key(&w, "path"), pj_string(&w, p->nvrtc[0] ? p->nvrtc : NULL);
    pj_end_object(&w);
    pj_end_object(&w);
    const cudaload_library_info *drv = &p->lib[CUDALOAD_LIB_DRIVER];
    pj_key(&w, "driver"), pj_begin_object(&w);
    pj_key(&w, "cuda_version"), drv->version > 0 ? pj_int(&w, drv->version) : pj_null(&w);
    pj_key(&w, "branch"), pj_string(&w, drv->driver_branch);
    pj_end_object(&w);
    pj_key(&w, "devices"), pj_begin_array(&w);
    for (int i = 0; i < p->ndev && i < MAX_DEVICES; i++) {
        const device *d = &p->dev[i];
        pj_begin_object(&w);
        pj_key(&w, "index"), pj_int(&w, i);
        pj_key(&w, "name"), pj_string(&w, d->name);
        pj_key(&w, "compute_capability"), pj_begin_array(&w), pj_int(&w, d->cc_major), pj_int(&w, d->cc_minor), pj_end_array(&w);
        pj_key(&w, "memory_bytes"), pj_int(&w, (long long)d->memory);
        pj_key(&w, "kernels"), pj_string(&w, d->runnable != CUDALOAD_OK ? "none" : d->has_sass ? "sass" : "ptx_jit");
        pj_key(&w, "kernels_status"), pj_string(&w, cudaload_status_name(d->runnable));
        pj_key(&w, "kernels_reason"), pj_string(&w, d->runnable == CUDALOAD_OK ? NULL : d->why);
        pj_end_object(&w);
    }
    pj_end_array(&w);
    pj_key(&w, "devices_status"), pj_string(&w, cudaload_status_name(p->dev_status));
    pj_key(&w, "kernels"), pj_begin_object(&w);
    pj_key(&w, "built"), pj_bool(&w, p->kinfo.built);
    pj_key(&w, "toolkit_version"), p->kinfo.built ? pj_int(&w, p->kinfo.toolkit_version) : pj_null(&w);
    pj_key(&w, "sass"), pj_begin_array(&w);
    for (const char *s = p->kinfo.sass_archs; s && *s;) {
        pj_int(&w, atoi(s));
        const char *comma = strchr(s, ',');
        s = comma ? comma + 1 : "";
    }
    pj_end_array(&w);
    pj_key(&w, "ptx"), p->kinfo.ptx_arch ? pj_int(&w, p->kinfo.ptx_arch) : pj_null(&w);
    pj_key(&w, "fatbin_bytes"), pj_int(&w, (long long)p->kinfo.fatbin_bytes);
    pj_end_object(&w);
    pj_key(&w, "environment"), pj_begin_object(&w);
    for (size_t i = 0; i < sizeof env_names / sizeof env_names[0]; i++) pj_key(&w, env_names[i]), pj_string(&w, getenv(env_names[i]));
    pj_end_object(&w);
    pj_key(&w, "build"), pj_begin_object(&w);
    pj_key(&w, "include_dirs"), pj_begin_array(&w);
    for (int i = 0; i < 2; i++)
        if (p->include_dirs[i][0]) pj_string(&w, p->include_dirs[i]);
    pj_end_array(&w);
    pj_key(&w, "link_flags"), pj_string(&w, p->link_flags[0] ? p->link_flags : NULL);
    pj_end_object(&w);
    pj_key(&w, "selftest");
    if (!p->selftest_attempted) {
        pj_null(&w);
    } else {
        pj_begin_object(&w);
        pj_key(&w, "saxpy"), json_test(&w, &p->saxpy);
        pj_key(&w, "saxpy_gbps"), p->saxpy.error[0] ? pj_null(&w) : pj_double(&w, p->saxpy.rate);
        pj_key(&w, "sgemm"), json_test(&w, &p->sgemm);
        pj_key(&w, "sgemm_tflops"), p->sgemm.error[0] ? pj_null(&w) : pj_double(&w, p->sgemm.rate);
        pj_end_object(&w);
    }
    pj_key(&w, "warnings"), pj_begin_array(&w);
    for (int i = 0; i < p->n_warnings; i++) pj_string(&w, p->warnings[i]);
    pj_end_array(&w);
    pj_key(&w, "fixes"), pj_begin_array(&w);
    for (int i = 0; i < p->n_fixes; i++) pj_string(&w, p->fixes[i]);
    pj_end_array(&w);
    pj_key(&w, "message"), pj_string(&w, p->init_error[0] ? p->init_error : NULL);
    pj_end_object(&w);
}

static const char **roots; /* the --root arguments, freed at exit */
static void free_roots(void) { free(roots); }

int main(int argc, char **argv) {
    static probe p;
    roots = calloc((size_t)argc + 1, sizeof *roots);
    atexit(free_roots);
    size_t n_roots = 0;
    p.selftest = 1;
    if (!roots) return EXIT_USAGE;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--root") == 0 && i + 1 < argc) roots[n_roots++] = argv[++i];
        else if (strncmp(argv[i], "--root=", 7) == 0) roots[n_roots++] = argv[i] + 7;
        else if (strcmp(argv[i], "--json") == 0) p.json = 1;
        else if (strcmp(argv[i], "--find-only") == 0) p.find_only = 1;
        else if (strcmp(argv[i], "--no-selftest") == 0) p.selftest = 0;
        else if (strcmp(argv[i], "--quiet") == 0) p.quiet = 1;
        else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return EXIT_OK;
        } else if (strcmp(argv[i], "--version") == 0) {
            printf("cudaload-probe %s\n", cudaload_version_string());
            return EXIT_OK;
        } else {
            fprintf(stderr, "cudaload-probe: unknown or incomplete argument '%s'\n", argv[i]);
            usage(stderr);
            return EXIT_USAGE;
        }
    }
    for (size_t i = 0; i < n_roots; i++)
        if (roots[i][0] != '/') {
            fprintf(stderr, "cudaload-probe: --root %s: give an absolute path\n", roots[i]);
            return EXIT_USAGE;
        }
    p.color = !p.json && !p.quiet && isatty(STDOUT_FILENO) && !getenv("NO_COLOR");
    cudaload_options opts;
    cudaload_options_init(&opts);
    opts.roots = roots;
    opts.n_roots = n_roots;
    opts.flags = CUDALOAD_FLAG_LOAD_CUBLAS | CUDALOAD_FLAG_DRIVER_OPTIONAL | (p.find_only ? CUDALOAD_FLAG_FIND_ONLY : 0);
    p.init_status = cudaload_init(&opts);
    if (p.init_status != CUDALOAD_OK) snprintf(p.init_error, sizeof p.init_error, "%s", cudaload_last_error());
    if (p.init_status == CUDALOAD_ERROR_INVALID_OPTION || p.init_status == CUDALOAD_ERROR_INVALID_ARGUMENT) {
        if (!p.quiet) fprintf(stderr, "cudaload-probe: %s\n", p.init_error);
        return EXIT_USAGE;
    }
    for (int i = 0; i < CUDALOAD_LIB_COUNT_; i++) {
        p.lib[i].size = sizeof p.lib[i];
        cudaload_get_library_info((cudaload_lib)i, &p.lib[i]);
    }
    p.roots = cudaload_roots(&p.n_roots);
    p.kinfo.size = sizeof p.kinfo;
    cudaload_kernels_info_get(-1, &p.kinfo);
    gather_devices(&p);
    build_flags(&p);
    find_nvrtc(&p);
    check_ld_library_path(&p);
    check_writable(&p);
    const cudaload_cudart_table *rt = cudaload_cudart();
    if (p.selftest && !p.find_only && p.dev_status == CUDALOAD_OK && p.ndev > 0 && rt &&
        p.lib[CUDALOAD_LIB_CUBLAS].status == CUDALOAD_OK) {
        p.selftest_attempted = 1;
        selftest_saxpy(rt, &p.saxpy);
        selftest_sgemm(rt, &p.sgemm);
    }

    int code = EXIT_OK;
    if (p.lib[CUDALOAD_LIB_CUDART].status != CUDALOAD_OK || p.lib[CUDALOAD_LIB_CUBLAS].status != CUDALOAD_OK)
        code = EXIT_LIB_MISSING;
    else if (p.lib[CUDALOAD_LIB_DRIVER].status != CUDALOAD_OK ||
             (!p.find_only && (p.dev_status != CUDALOAD_OK || p.ndev < 1)))
        code = EXIT_NO_GPU;
    else if (p.selftest_attempted && (!p.saxpy.pass || !p.sgemm.pass || p.saxpy.error[0] || p.sgemm.error[0]))
        code = EXIT_SELFTEST;
    if (p.quiet) return code;
    if (p.json) json_report(&p, code);
    else text_report(&p, code);
    return code;
}
