/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_aarch64.c -- the loader tests of the aarch64 build, run under qemu-user by
 * tests/aarch64/run.sh (`make check-aarch64`), against NVIDIA's real manylinux aarch64 wheels
 * (nvidia-cuda-runtime 13.x and -cu12) and the fake libcuda built for aarch64 from
 * tests/fake/fake_cuda.c (the driver is the one thing that cannot be had without a GPU).
 *
 * A small runner of its own (no cmocka in the aarch64 sysroot): `test_aarch64 CASE` runs one
 * case (cudaload_init is once per process), `--list` names them; run.sh starts one emulated
 * process per case (a fork inside qemu-user was seen to spin in the child). CHECK records a failed
 * assertion with its line and the case exits 1.
 *
 * The trees it searches are made by run.sh under $CL_ARM_TREES:
 *   cu13/        site-packages with nvidia-cuda-runtime (13.x): nvidia/cu13/lib/libcudart.so.13
 *   cu12/        site-packages with nvidia-cuda-runtime-cu12: nvidia/cuda_runtime/lib/libcudart.so.12
 *   venv/        a venv: lib/python3.12/site-packages/nvidia/cu13/lib/libcudart.so.13
 *   home-both/   a CUDA_HOME with targets/sbsa-linux/lib and targets/aarch64-linux/lib (Jetson's)
 *   home-jetson/ a CUDA_HOME with targets/aarch64-linux/lib only
 *   override/    a directory for CUDALOAD_PATH holding libcudart.so.13
 *   bad-arch/    site-packages whose nvidia/cu13/lib/libcudart.so.13 is the x86-64 toolkit's
 * $CL_ARM_DRIVER: the fake libcuda.so.1 for aarch64. CL_ARM_CU13_VERSION and CL_ARM_CU12_VERSION:
 * cudaRuntimeGetVersion of the wheels (13050, 12090), from their versions.
 */
#define _GNU_SOURCE
#define EMU_RUNNER_NAME "test_aarch64"
#include "emu_runner.h"
#include "cudaload_tables.h"

#include <dlfcn.h>

/* trees/<rel> */
static const char *tree(const char *rel) {
    static char buf[8][4096];
    static int k;
    char *b = buf[k++ % 8];
    snprintf(b, sizeof buf[0], "%s/%s", env_or_die("CL_ARM_TREES"), rel);
    return b;
}

/* ---- the cases ---- */

/* The fake driver for aarch64, as the exact file: passes the ELF check (EM_AARCH64), resolves,
 * answers its version. */
static void case_driver_exact_file(void) {
    init_roots(NULL, NULL, 0);
    cudaload_library_info d = info_of(CUDALOAD_LIB_DRIVER);
    CHECK_INT(d.status, CUDALOAD_OK);
    CHECK_INT(d.source, CUDALOAD_SOURCE_OVERRIDE);
    CHECK(d.path && strcmp(d.path, env_or_die("CL_ARM_DRIVER")) == 0);
    CHECK_INT(d.version, 13000);
    if (failures) dump(&d);
}

/* The CUDA 13 wheel: nvidia/cu13/lib/libcudart.so.13, its cudaRuntimeGetVersion through the table. */
static void case_wheel_cu13(void) {
    CHECK_INT(init_roots(tree("cu13"), NULL, 0), CUDALOAD_OK);
    cudaload_library_info rt = info_of(CUDALOAD_LIB_CUDART);
    CHECK_INT(rt.status, CUDALOAD_OK);
    CHECK_INT(rt.source, CUDALOAD_SOURCE_CALLER);
    CHECK(ends_with(rt.path, "/cu13/nvidia/cu13/lib/libcudart.so.13"));
    CHECK_INT(rt.major, 13);
    CHECK_INT(rt.version, expected("CL_ARM_CU13_VERSION"));
    const cudaload_cudart_table *t = cudaload_cudart();
    int v = 0;
    CHECK(t && t->cudaRuntimeGetVersion);
    if (t && t->cudaRuntimeGetVersion) CHECK_INT(t->cudaRuntimeGetVersion(&v), 0);
    CHECK_INT(v, expected("CL_ARM_CU13_VERSION"));
    if (failures) dump(&rt);
}

/* The CUDA 12 wheel: nvidia/cuda_runtime/lib/libcudart.so.12. */
static void case_wheel_cu12(void) {
    CHECK_INT(init_roots(tree("cu12"), NULL, 0), CUDALOAD_OK);
    cudaload_library_info rt = info_of(CUDALOAD_LIB_CUDART);
    CHECK_INT(rt.status, CUDALOAD_OK);
    CHECK(ends_with(rt.path, "/cu12/nvidia/cuda_runtime/lib/libcudart.so.12"));
    CHECK_INT(rt.major, 12);
    CHECK_INT(rt.version, expected("CL_ARM_CU12_VERSION"));
    if (failures) dump(&rt);
}

/* A driver at 12.8 cannot run CUDA 13: the cu13 wheel is skipped (DRIVER_TOO_OLD), the cu12 one taken. */
static void case_driver_too_old_for_13(void) {
    setenv("FAKE_CUDA_VERSION", "12080", 1);
    CHECK_INT(init_roots(tree("cu13"), tree("cu12"), 0), CUDALOAD_OK);
    cudaload_library_info rt = info_of(CUDALOAD_LIB_CUDART);
    CHECK_INT(rt.status, CUDALOAD_OK);
    CHECK_INT(rt.major, 12);
    CHECK(ends_with(rt.path, "/cu12/nvidia/cuda_runtime/lib/libcudart.so.12"));
    CHECK(has_reason(&rt, "/cu13/nvidia/cu13/lib/libcudart.so.13", CUDALOAD_REASON_DRIVER_TOO_OLD));
    if (failures) dump(&rt);
}

/* CUDALOAD_PATH comes before the caller's roots. */
static void case_override_first(void) {
    setenv("CUDALOAD_PATH", tree("override"), 1);
    CHECK_INT(init_roots(tree("cu13"), NULL, 0), CUDALOAD_OK);
    cudaload_library_info rt = info_of(CUDALOAD_LIB_CUDART);
    CHECK_INT(rt.status, CUDALOAD_OK);
    CHECK_INT(rt.source, CUDALOAD_SOURCE_OVERRIDE);
    CHECK(ends_with(rt.path, "/override/libcudart.so.13"));
    if (failures) dump(&rt);
}

/* A copy the process loaded first is reused, never a second one. */
static void case_reused_when_loaded(void) {
    void *h = dlopen(tree("cu13/nvidia/cu13/lib/libcudart.so.13"), RTLD_NOW | RTLD_LOCAL);
    CHECK(h != NULL);
    CHECK_INT(init_roots(tree("venv/lib/python3.12/site-packages"), NULL, 0), CUDALOAD_OK);
    cudaload_library_info rt = info_of(CUDALOAD_LIB_CUDART);
    CHECK_INT(rt.status, CUDALOAD_OK);
    CHECK_INT(rt.source, CUDALOAD_SOURCE_LOADED);
    CHECK_INT(rt.already_loaded, 1);
    CHECK(ends_with(rt.path, "/cu13/nvidia/cu13/lib/libcudart.so.13"));
    CHECK_INT(rt.version, expected("CL_ARM_CU13_VERSION"));
    if (failures) dump(&rt);
}

/* $VIRTUAL_ENV/lib/python3.X/site-packages is the venv source. */
static void case_venv(void) {
    setenv("VIRTUAL_ENV", tree("venv"), 1);
    CHECK_INT(init_roots(NULL, NULL, 0), CUDALOAD_OK);
    cudaload_library_info rt = info_of(CUDALOAD_LIB_CUDART);
    CHECK_INT(rt.status, CUDALOAD_OK);
    CHECK_INT(rt.source, CUDALOAD_SOURCE_VENV);
    CHECK(ends_with(rt.path, "/venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcudart.so.13"));
    if (failures) dump(&rt);
}

/* A CUDA_HOME with both layouts: this (emulated, non-Tegra) machine takes targets/sbsa-linux first. */
static void case_cuda_home_sbsa_first(void) {
    setenv("CUDA_HOME", tree("home-both"), 1);
    CHECK_INT(init_roots(NULL, NULL, 0), CUDALOAD_OK);
    cudaload_library_info rt = info_of(CUDALOAD_LIB_CUDART);
    CHECK_INT(rt.status, CUDALOAD_OK);
    CHECK_INT(rt.source, CUDALOAD_SOURCE_CUDA_HOME);
    CHECK(ends_with(rt.path, "/home-both/targets/sbsa-linux/lib/libcudart.so.13"));
    if (failures) dump(&rt);
}

/* CUDALOAD_PLATFORM=tegra: Jetson's targets/aarch64-linux first. */
static void case_cuda_home_tegra_first(void) {
    setenv("CUDA_HOME", tree("home-both"), 1);
    setenv("CUDALOAD_PLATFORM", "tegra", 1);
    CHECK_INT(init_roots(NULL, NULL, 0), CUDALOAD_OK);
    cudaload_library_info rt = info_of(CUDALOAD_LIB_CUDART);
    CHECK_INT(rt.status, CUDALOAD_OK);
    CHECK(ends_with(rt.path, "/home-both/targets/aarch64-linux/lib/libcudart.so.13"));
    if (failures) dump(&rt);
}

/* A Jetson toolkit (targets/aarch64-linux only) is found on a machine not detected as one. */
static void case_jetson_layout_found(void) {
    setenv("CUDA_HOME", tree("home-jetson"), 1);
    CHECK_INT(init_roots(NULL, NULL, 0), CUDALOAD_OK);
    cudaload_library_info rt = info_of(CUDALOAD_LIB_CUDART);
    CHECK_INT(rt.status, CUDALOAD_OK);
    CHECK(ends_with(rt.path, "/home-jetson/targets/aarch64-linux/lib/libcudart.so.13"));
    if (failures) dump(&rt);
}

/* An x86-64 libcudart in a root first is refused by the ELF check (another machine), the
 * search goes on to the aarch64 wheel. */
static void case_other_machine_refused(void) {
    CHECK_INT(init_roots(tree("bad-arch"), tree("cu13"), 0), CUDALOAD_OK);
    cudaload_library_info rt = info_of(CUDALOAD_LIB_CUDART);
    CHECK_INT(rt.status, CUDALOAD_OK);
    CHECK(ends_with(rt.path, "/cu13/nvidia/cu13/lib/libcudart.so.13"));
    CHECK(has_reason(&rt, "/bad-arch/nvidia/cu13/lib/libcudart.so.13", CUDALOAD_REASON_FILE_UNUSABLE));
    if (failures) dump(&rt);
}

/* Find-only locates the wheel's library without loading it. */
static void case_find_only(void) {
    CHECK_INT(init_roots(tree("cu13"), NULL, CUDALOAD_FLAG_FIND_ONLY), CUDALOAD_OK);
    cudaload_library_info rt = info_of(CUDALOAD_LIB_CUDART);
    CHECK_INT(rt.status, CUDALOAD_OK);
    CHECK_INT(rt.loaded, 0);
    CHECK(ends_with(rt.path, "/cu13/nvidia/cu13/lib/libcudart.so.13"));
    CHECK(dlopen("libcudart.so.13", RTLD_NOW | RTLD_NOLOAD) == NULL);
    if (failures) dump(&rt);
}

typedef struct {
    const char *name;
    void (*fn)(void);
} test_case;

static const test_case cases[] = {
    {"driver_exact_file", case_driver_exact_file},
    {"wheel_cu13", case_wheel_cu13},
    {"wheel_cu12", case_wheel_cu12},
    {"driver_too_old_for_13", case_driver_too_old_for_13},
    {"override_first", case_override_first},
    {"reused_when_loaded", case_reused_when_loaded},
    {"venv", case_venv},
    {"cuda_home_sbsa_first", case_cuda_home_sbsa_first},
    {"cuda_home_tegra_first", case_cuda_home_tegra_first},
    {"jetson_layout_found", case_jetson_layout_found},
    {"other_machine_refused", case_other_machine_refused},
    {"find_only", case_find_only},
};
#define N_CASES (sizeof cases / sizeof cases[0])

int main(int argc, char **argv) {
    /* the driver for every case: the aarch64 fake, as the exact file */
    setenv("CUDALOAD_DRIVER_PATH", env_or_die("CL_ARM_DRIVER"), 1);
    if (argc != 2) {
        fprintf(stderr, "usage: test_aarch64 --list | CASE\n");
        return 2;
    }
    for (size_t i = 0; i < N_CASES; i++) {
        if (strcmp(argv[1], "--list") == 0) printf("%s\n", cases[i].name);
        else if (strcmp(cases[i].name, argv[1]) == 0) {
            cases[i].fn();
            return failures ? 1 : 0;
        }
    }
    if (strcmp(argv[1], "--list") == 0) return 0;
    fprintf(stderr, "test_aarch64: no case %s\n", argv[1]);
    return 2;
}
