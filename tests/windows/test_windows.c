/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_windows.c -- the Windows loader tests, run under wine by tests/windows/run.sh
 * (`make check-windows`), against the real win_amd64 wheels' DLLs and the fake nvcuda.dll built
 * from tests/fake/fake_cuda.c (the driver is the one thing that cannot be had without a GPU).
 *
 * cmocka is not packaged for mingw-w64, so this is a small runner of its own: every case runs in
 * a fresh process (cudaload_init is once per process), started by this same program with the
 * case's name; CHECK records a failed assertion with its line and the case exits 1. Without an
 * argument it runs every case and prints "windows: N passed, M failed".
 *
 * The trees it searches are made by run.sh under $CL_WIN_TREES (a Windows path):
 *   cu13/                 site-packages with nvidia-cuda-runtime (13.x): nvidia/cu13/bin/x86_64/cudart64_13.dll
 *   cu12/                 site-packages with nvidia-cuda-runtime-cu12: nvidia/cuda_runtime/bin/cudart64_12.dll
 *   cudapath/bin/         a CUDA_PATH (12.x layout) holding cudart64_12.dll
 *   conda/Library/bin/    a conda prefix holding cudart64_12.dll
 *   venv/Lib/site-packages/nvidia/cuda_runtime/bin/  a venv holding cudart64_12.dll
 *   bad-text/nvidia/cu13/bin/x86_64/cudart64_13.dll  a text file
 *   bad-elf/nvidia/cu13/bin/x86_64/cudart64_13.dll   a Linux ELF library
 *   cwd/cudart64_12.dll   a copy in a directory that is only the current directory and on PATH
 * nvcuda.dll (the fake) lies next to this program: the application directory of the system search.
 * CL_WIN_CU13_VERSION: the cudaRuntimeGetVersion of the cu13 wheel (13050), CL_WIN_CU12_VERSION
 * the cu12 wheel's (12090), from the wheels' versions.
 */
#define EMU_RUNNER_NAME "test_windows"
#include "emu_runner.h"

#include <windows.h>

/* trees/<rel>, '/' separators (what libcudaload reports) */
static char *tree(const char *rel) {
    static char buf[8][1024];
    static int k;
    char *b = buf[k++ % 8];
    snprintf(b, sizeof buf[0], "%s/%s", env_or_die("CL_WIN_TREES"), rel);
    for (char *p = b; *p; p++)
        if (*p == '\\') *p = '/';
    return b;
}

/* ---- the cases ---- */

/* The fake nvcuda.dll next to the program is the system search's driver: its version and path. */
static void case_driver_from_app_dir(void) {
    _putenv("FAKE_CUDA_VERSION=12080");
    init_roots(NULL, NULL, 0);
    cudaload_library_info d = info_of(CUDALOAD_LIB_DRIVER);
    CHECK_INT(d.status, CUDALOAD_OK);
    CHECK_INT(d.source, CUDALOAD_SOURCE_SYSTEM);
    CHECK(ends_with(d.path, "/nvcuda.dll"));
    CHECK_INT(d.version, 12080);
    if (failures) dump(&d);
}

/* CUDA 12 wheel: nvidia/cuda_runtime/bin/cudart64_12.dll, cudaRuntimeGetVersion as the wheel says. */
static void case_wheel_cu12(void) {
    CHECK_INT(init_roots(tree("cu12"), NULL, 0), CUDALOAD_OK);
    cudaload_library_info rt = info_of(CUDALOAD_LIB_CUDART);
    CHECK_INT(rt.status, CUDALOAD_OK);
    CHECK_INT(rt.source, CUDALOAD_SOURCE_CALLER);
    CHECK(ends_with(rt.path, "/cu12/nvidia/cuda_runtime/bin/cudart64_12.dll"));
    CHECK(rt.soname && strcmp(rt.soname, "cudart64_12.dll") == 0);
    CHECK_INT(rt.major, 12);
    CHECK_INT(rt.version, expected("CL_WIN_CU12_VERSION"));
    CHECK(GetModuleHandleA("cudart64_12.dll") != NULL);
    if (failures) dump(&rt);
}

/* CUDA 13 wheel: nvidia/cu13/bin/x86_64/cudart64_13.dll is found and loaded. Its
 * cudaRuntimeGetVersion asks the driver first (nvcuda.dll from System32: cuGetProcAddress_v2,
 * then cuGetExportTable, NVIDIA's private tables, which no fake can stand for), so with the fake
 * driver it returns 35 (cudaErrorInsufficientDriver; the same with no nvcuda.dll at all): the
 * candidate is recorded as VERSION_FAILED with that code, and that recorded outcome is what is
 * asserted (docs/platforms.md). CL_WIN_CU13_EXPECT=ok (a real driver) asserts the version. */
static void case_wheel_cu13(void) {
    init_roots(tree("cu13"), NULL, 0);
    cudaload_library_info rt = info_of(CUDALOAD_LIB_CUDART);
    const char *want = getenv("CL_WIN_CU13_EXPECT");
    if (want && strcmp(want, "ok") == 0) {
        CHECK_INT(rt.status, CUDALOAD_OK);
        CHECK(ends_with(rt.path, "/cu13/nvidia/cu13/bin/x86_64/cudart64_13.dll"));
        CHECK_INT(rt.major, 13);
        CHECK_INT(rt.version, expected("CL_WIN_CU13_VERSION"));
    } else {
        CHECK(rt.status != CUDALOAD_OK);
        CHECK(has_reason(&rt, "/cu13/nvidia/cu13/bin/x86_64/cudart64_13.dll", CUDALOAD_REASON_VERSION_FAILED));
        int saw_35 = 0;
        for (size_t i = 0; i < rt.n_candidates; i++)
            if (rt.details[i].reason == CUDALOAD_REASON_VERSION_FAILED && strstr(rt.candidates[i].reason, "error 35"))
                saw_35 = 1;
        CHECK(saw_35);
    }
    if (failures) dump(&rt);
}

/* A driver at 12.8 cannot run CUDA 13: the cu13 wheel is skipped (DRIVER_TOO_OLD), the cu12 one taken. */
static void case_driver_too_old_for_13(void) {
    _putenv("FAKE_CUDA_VERSION=12080");
    CHECK_INT(init_roots(tree("cu13"), tree("cu12"), 0), CUDALOAD_OK);
    cudaload_library_info rt = info_of(CUDALOAD_LIB_CUDART);
    CHECK_INT(rt.status, CUDALOAD_OK);
    CHECK_INT(rt.major, 12);
    CHECK(ends_with(rt.path, "/cudart64_12.dll"));
    CHECK(has_reason(&rt, "/cudart64_13.dll", CUDALOAD_REASON_DRIVER_TOO_OLD));
    if (failures) dump(&rt);
}

/* A copy the process loaded first is reused (GetModuleHandleExW), never a second one. */
static void case_reused_when_loaded(void) {
    char path[1024];
    snprintf(path, sizeof path, "%s", tree("cu12/nvidia/cuda_runtime/bin/cudart64_12.dll"));
    for (char *p = path; *p; p++)
        if (*p == '/') *p = '\\';
    HMODULE h = LoadLibraryExA(path, NULL, LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR | LOAD_LIBRARY_SEARCH_DEFAULT_DIRS);
    CHECK(h != NULL);
    /* a root holding another copy comes after the loaded one */
    CHECK_INT(init_roots(tree("venv/Lib/site-packages"), NULL, 0), CUDALOAD_OK);
    cudaload_library_info rt = info_of(CUDALOAD_LIB_CUDART);
    CHECK_INT(rt.status, CUDALOAD_OK);
    CHECK_INT(rt.source, CUDALOAD_SOURCE_LOADED);
    CHECK_INT(rt.already_loaded, 1);
    CHECK(ends_with(rt.path, "/cu12/nvidia/cuda_runtime/bin/cudart64_12.dll"));
    CHECK((void *)h == cudaload_handle(CUDALOAD_LIB_CUDART));
    CHECK_INT(rt.version, expected("CL_WIN_CU12_VERSION"));
    if (failures) dump(&rt);
}

/* CUDA_PATH\bin (the 12.x toolkit layout) is the cuda_home source. */
static void case_cuda_path(void) {
    char v[1100];
    snprintf(v, sizeof v, "CUDA_PATH=%s", tree("cudapath"));
    _putenv(v);
    CHECK_INT(init_roots(NULL, NULL, 0), CUDALOAD_OK);
    cudaload_library_info rt = info_of(CUDALOAD_LIB_CUDART);
    CHECK_INT(rt.status, CUDALOAD_OK);
    CHECK_INT(rt.source, CUDALOAD_SOURCE_CUDA_HOME);
    CHECK(ends_with(rt.path, "/cudapath/bin/cudart64_12.dll"));
    if (failures) dump(&rt);
}

/* %CONDA_PREFIX%\Library\bin is the conda source. */
static void case_conda(void) {
    char v[1100];
    snprintf(v, sizeof v, "CONDA_PREFIX=%s", tree("conda"));
    _putenv(v);
    CHECK_INT(init_roots(NULL, NULL, 0), CUDALOAD_OK);
    cudaload_library_info rt = info_of(CUDALOAD_LIB_CUDART);
    CHECK_INT(rt.status, CUDALOAD_OK);
    CHECK_INT(rt.source, CUDALOAD_SOURCE_CONDA);
    CHECK(ends_with(rt.path, "/conda/Library/bin/cudart64_12.dll"));
    if (failures) dump(&rt);
}

/* %VIRTUAL_ENV%\Lib\site-packages is the venv source, with the wheel layout under it. */
static void case_venv(void) {
    char v[1100];
    snprintf(v, sizeof v, "VIRTUAL_ENV=%s", tree("venv"));
    _putenv(v);
    CHECK_INT(init_roots(NULL, NULL, 0), CUDALOAD_OK);
    cudaload_library_info rt = info_of(CUDALOAD_LIB_CUDART);
    CHECK_INT(rt.status, CUDALOAD_OK);
    CHECK_INT(rt.source, CUDALOAD_SOURCE_VENV);
    CHECK(ends_with(rt.path, "/venv/Lib/site-packages/nvidia/cuda_runtime/bin/cudart64_12.dll"));
    if (failures) dump(&rt);
}

/* CUDALOAD_PATH is ';'-separated on Windows (':' is in every drive letter). */
static void case_cudaload_path_list(void) {
    char v[2200];
    snprintf(v, sizeof v, "CUDALOAD_PATH=%s;%s", tree("nowhere"), tree("cudapath/bin"));
    _putenv(v);
    CHECK_INT(init_roots(NULL, NULL, 0), CUDALOAD_OK);
    cudaload_library_info rt = info_of(CUDALOAD_LIB_CUDART);
    CHECK_INT(rt.status, CUDALOAD_OK);
    CHECK_INT(rt.source, CUDALOAD_SOURCE_OVERRIDE);
    CHECK(ends_with(rt.path, "/cudapath/bin/cudart64_12.dll"));
    if (failures) dump(&rt);
}

/* A relative exact file is refused (it would depend on the current directory). */
static void case_relative_refused(void) {
    _putenv("CUDALOAD_CUDART_PATH=cudart64_12.dll");
    CHECK_INT(init_roots(NULL, NULL, 0), CUDALOAD_ERROR_INVALID_OPTION);
}

/* An exact file given as C:\...\cudart64_12.dll (backslashes) is absolute and taken. */
static void case_exact_file_backslashes(void) {
    char v[1100];
    snprintf(v, sizeof v, "CUDALOAD_CUDART_PATH=%s", tree("cudapath/bin/cudart64_12.dll"));
    for (char *p = v; *p; p++)
        if (*p == '/') *p = '\\';
    _putenv(v);
    CHECK_INT(init_roots(NULL, NULL, 0), CUDALOAD_OK);
    cudaload_library_info rt = info_of(CUDALOAD_LIB_CUDART);
    CHECK_INT(rt.status, CUDALOAD_OK);
    CHECK_INT(rt.source, CUDALOAD_SOURCE_OVERRIDE);
    CHECK(ends_with(rt.path, "/cudapath/bin/cudart64_12.dll"));
    if (failures) dump(&rt);
}

/* A text file and a Linux ELF named cudart64_13.dll are refused by the PE check (FILE_UNUSABLE),
 * the search goes on to the cu12 wheel. */
static void case_bad_files_skipped(void) {
    const char *roots[3] = {tree("bad-text"), tree("bad-elf"), tree("cu12")};
    cudaload_options o;
    cudaload_options_init(&o);
    o.roots = roots;
    o.n_roots = 3;
    CHECK_INT(cudaload_init(&o), CUDALOAD_OK);
    cudaload_library_info rt = info_of(CUDALOAD_LIB_CUDART);
    CHECK_INT(rt.status, CUDALOAD_OK);
    CHECK(ends_with(rt.path, "/cu12/nvidia/cuda_runtime/bin/cudart64_12.dll"));
    CHECK(has_reason(&rt, "/bad-text/nvidia/cu13/bin/x86_64/cudart64_13.dll", CUDALOAD_REASON_FILE_UNUSABLE));
    CHECK(has_reason(&rt, "/bad-elf/nvidia/cu13/bin/x86_64/cudart64_13.dll", CUDALOAD_REASON_FILE_UNUSABLE));
    for (size_t i = 0; i < rt.n_candidates; i++)
        if (ends_with(rt.candidates[i].path, "/bad-text/nvidia/cu13/bin/x86_64/cudart64_13.dll"))
            CHECK(strstr(rt.candidates[i].reason, "not a PE file") != NULL);
    if (failures) dump(&rt);
}

/* Neither the current directory nor PATH is searched: a cudart there is never taken. */
static void case_not_cwd_nor_path(void) {
    char v[1100];
    snprintf(v, sizeof v, "PATH=%s", tree("cwd"));
    _putenv(v);
    CHECK(SetCurrentDirectoryA(tree("cwd")));
    init_roots(NULL, NULL, 0);
    cudaload_library_info rt = info_of(CUDALOAD_LIB_CUDART);
    CHECK_INT(rt.status, CUDALOAD_ERROR_NOT_FOUND);
    CHECK(GetModuleHandleA("cudart64_12.dll") == NULL);
    for (size_t i = 0; i < rt.n_candidates; i++) CHECK(strstr(rt.candidates[i].path, "/cwd/") == NULL);
    if (failures) dump(&rt);
}

/* CUDA_PATH\bin\x64 (the 13.x toolkit layout) is the cuda_home source. Find-only: cudart64_13.dll's
 * cudaRuntimeGetVersion needs a real driver (wheel_cu13 says why); where it lies is what is checked. */
static void case_cuda_path_13(void) {
    char v[1100];
    snprintf(v, sizeof v, "CUDA_PATH=%s", tree("cudapath13"));
    _putenv(v);
    _putenv("FAKE_CUDA_VERSION=13050");
    cudaload_options o;
    cudaload_options_init(&o);
    o.flags = CUDALOAD_FLAG_FIND_ONLY;
    CHECK_INT(cudaload_init(&o), CUDALOAD_OK);
    cudaload_library_info rt = info_of(CUDALOAD_LIB_CUDART);
    CHECK_INT(rt.status, CUDALOAD_OK);
    CHECK_INT(rt.source, CUDALOAD_SOURCE_CUDA_HOME);
    CHECK(ends_with(rt.path, "/cudapath13/bin/x64/cudart64_13.dll"));
    if (failures) dump(&rt);
}

/* A decoy cudart64_12.dll in the current directory and in PATH: the wheel's copy is the one taken
 * and loaded (the module in memory is the wheel's file), the decoys are never candidates. */
static void case_wheel_before_cwd_and_path(void) {
    char v[1100];
    snprintf(v, sizeof v, "PATH=%s", tree("cwd"));
    _putenv(v);
    CHECK(SetCurrentDirectoryA(tree("cwd")));
    CHECK_INT(init_roots(tree("cu12"), NULL, 0), CUDALOAD_OK);
    cudaload_library_info rt = info_of(CUDALOAD_LIB_CUDART);
    CHECK_INT(rt.status, CUDALOAD_OK);
    CHECK(ends_with(rt.path, "/cu12/nvidia/cuda_runtime/bin/cudart64_12.dll"));
    char file[MAX_PATH] = "";
    HMODULE h = GetModuleHandleA("cudart64_12.dll");
    CHECK(h != NULL && GetModuleFileNameA(h, file, sizeof file) > 0);
    for (char *p = file; *p; p++)
        if (*p == '\\') *p = '/';
    CHECK(ends_with(file, "/cu12/nvidia/cuda_runtime/bin/cudart64_12.dll"));
    for (size_t i = 0; i < rt.n_candidates; i++) CHECK(strstr(rt.candidates[i].path, "/cwd/") == NULL);
    if (failures) dump(&rt);
}

/* A DLL's dependencies come from its own directory: deps/.../cudart64_12.dll imports cl_sibling.dll,
 * which lies only next to it (tests/windows/fake_dep_cudart.c); its version is the sibling's 12080. */
static void case_deps_from_same_dir(void) {
    CHECK_INT(init_roots(tree("deps"), NULL, 0), CUDALOAD_OK);
    cudaload_library_info rt = info_of(CUDALOAD_LIB_CUDART);
    CHECK_INT(rt.status, CUDALOAD_OK);
    CHECK(ends_with(rt.path, "/deps/nvidia/cuda_runtime/bin/cudart64_12.dll"));
    CHECK_INT(rt.version, 12080);
    CHECK(GetModuleHandleA("cl_sibling.dll") != NULL);
    if (failures) dump(&rt);
}

/* Find-only locates the wheel's DLL without loading it. */
static void case_find_only(void) {
    CHECK_INT(init_roots(tree("cu12"), NULL, CUDALOAD_FLAG_FIND_ONLY), CUDALOAD_OK);
    cudaload_library_info rt = info_of(CUDALOAD_LIB_CUDART);
    CHECK_INT(rt.status, CUDALOAD_OK);
    CHECK_INT(rt.loaded, 0);
    CHECK(ends_with(rt.path, "/cu12/nvidia/cuda_runtime/bin/cudart64_12.dll"));
    CHECK(GetModuleHandleA("cudart64_12.dll") == NULL);
    if (failures) dump(&rt);
}

/* The catalogue seen on Windows: the DLL names and wheel dirs of the win_amd64 wheels. */
static void case_catalogue_names(void) {
    cudaload_catalogue_info c = {.size = sizeof c};
    CHECK_INT(cudaload_catalogue_entry(CUDALOAD_LIB_CUDART, &c), CUDALOAD_OK);
    CHECK(c.sonames[0] && strcmp(c.sonames[0], "cudart64_13.dll") == 0);
    CHECK(c.wheel_dirs[0] && strcmp(c.wheel_dirs[0], "nvidia/cu13/bin/x86_64") == 0);
    CHECK(c.sonames[1] && strcmp(c.sonames[1], "cudart64_12.dll") == 0);
    CHECK(c.wheel_dirs[1] && strcmp(c.wheel_dirs[1], "nvidia/cuda_runtime/bin") == 0);
    CHECK_INT(cudaload_catalogue_entry(CUDALOAD_LIB_DRIVER, &c), CUDALOAD_OK);
    CHECK(c.sonames[0] && strcmp(c.sonames[0], "nvcuda.dll") == 0);
}

typedef struct {
    const char *name;
    void (*fn)(void);
} test_case;

static const test_case cases[] = {
    {"driver_from_app_dir", case_driver_from_app_dir},
    {"wheel_cu12", case_wheel_cu12},
    {"wheel_cu13", case_wheel_cu13},
    {"driver_too_old_for_13", case_driver_too_old_for_13},
    {"reused_when_loaded", case_reused_when_loaded},
    {"cuda_path", case_cuda_path},
    {"cuda_path_13", case_cuda_path_13},
    {"conda", case_conda},
    {"venv", case_venv},
    {"cudaload_path_list", case_cudaload_path_list},
    {"relative_refused", case_relative_refused},
    {"exact_file_backslashes", case_exact_file_backslashes},
    {"bad_files_skipped", case_bad_files_skipped},
    {"not_cwd_nor_path", case_not_cwd_nor_path},
    {"wheel_before_cwd_and_path", case_wheel_before_cwd_and_path},
    {"deps_from_same_dir", case_deps_from_same_dir},
    {"find_only", case_find_only},
    {"catalogue_names", case_catalogue_names},
};
#define N_CASES (sizeof cases / sizeof cases[0])

/* Runs one case in a child process: the same program with the case's name. */
static int run_child(const char *self, const char *name) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "\"%s\" %s", self, name);
    STARTUPINFOA si = {.cb = sizeof si};
    PROCESS_INFORMATION pi;
    if (!CreateProcessA(NULL, cmd, NULL, NULL, FALSE, 0, NULL, NULL, &si, &pi)) {
        fprintf(stderr, "test_windows: CreateProcess %s failed (%lu)\n", name, (unsigned long)GetLastError());
        return 1;
    }
    WaitForSingleObject(pi.hProcess, INFINITE);
    DWORD code = 1;
    GetExitCodeProcess(pi.hProcess, &code);
    CloseHandle(pi.hProcess);
    CloseHandle(pi.hThread);
    return (int)code;
}

int main(int argc, char **argv) {
    if (argc == 2) {
        for (size_t i = 0; i < N_CASES; i++)
            if (strcmp(cases[i].name, argv[1]) == 0) {
                cases[i].fn();
                return failures ? 1 : 0;
            }
        fprintf(stderr, "test_windows: no case %s\n", argv[1]);
        return 2;
    }
    char self[1024];
    GetModuleFileNameA(NULL, self, sizeof self);
    int passed = 0, failed = 0;
    for (size_t i = 0; i < N_CASES; i++) {
        int rc = run_child(self, cases[i].name);
        printf("[%s] %s\n", rc == 0 ? "  OK  " : "FAILED", cases[i].name);
        fflush(stdout);
        if (rc == 0) passed++;
        else failed++;
    }
    printf("windows: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
