/*
 * catalogue.c -- the one list of libraries libcudaload knows. Every other part (the walk,
 * the exact-file variables, advice, the probe's listing, the include-directory finder, the
 * tests' row-consistency check) reads these rows; docs/search-order.md lists them.
 *
 * Facts come from the real files: the CUDA 13.0 toolkit's libraries (DT_SONAME, DT_NEEDED),
 * the file lists of NVIDIA's pip wheels (cu12 and cu13), and cuda-pathfinder 1.9.0's
 * descriptor catalogue. The SONAME's number is not the CUDA major: CUDA 13 ships
 * libcufft.so.12, libcusolver.so.12 and libcusparse.so.12; libcurand.so.10 is in CUDA 12 and 13
 * alike; cuDNN (.so.9) and NCCL (.so.2) are numbered on their own. docs/catalogue.md gives the
 * source of every row and the libraries left out, with why.
 *
 * Appending rows keeps every id stable; the first four are the historic cudaload_lib values.
 */
#include "internal.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Flavors: {CUDA major, SONAME, wheel dir, pip package, wheel include dir, library major} */
#define CU13(so, dir, pkg, inc, lm) {13, so, dir, pkg, inc, lm}
#define CU12(so, dir, pkg, inc, lm) {12, so, dir, pkg, inc, lm}
/* Most CUDA 13 toolkit wheels share one directory. */
#define CU13_DIR "nvidia/cu13/lib"
#define CU13_INC "nvidia/cu13/include"

static const cl_row cl_rows[] = {
    /* ---- the historic four (ids 0..3 = CUDALOAD_LIB_DRIVER .. CUDALOAD_LIB_CUBLAS) ---- */
    {.name = "cuda", .env_alias = "CUDALOAD_DRIVER_PATH", .option_name = "options.driver_path",
     .flags = CL_ROW_DRIVER_LIKE | CL_ROW_AT_INIT,
     .flavor = {{0, "libcuda.so.1", NULL, NULL, NULL, 0}},
     .version_kind = CL_VERSION_CUDA, .version_fn = "cuDriverGetVersion", .header = "cuda.h",
     .note = "the driver: never from wheels, never the unversioned libcuda.so (the toolkit's link stub)"},
    {.name = "cudart", .option_name = "options.cudart_path", .flags = CL_ROW_AT_INIT,
     .flavor = {CU13("libcudart.so.13", CU13_DIR, "nvidia-cuda-runtime", CU13_INC, 13),
                CU12("libcudart.so.12", "nvidia/cuda_runtime/lib", "nvidia-cuda-runtime-cu12",
                     "nvidia/cuda_runtime/include", 12)},
     .version_kind = CL_VERSION_CUDA, .version_fn = "cudaRuntimeGetVersion", .header = "cuda_runtime_api.h"},
    {.name = "cublasLt", .option_name = "options.cublaslt_path",
     .flavor = {CU13("libcublasLt.so.13", CU13_DIR, "nvidia-cublas", CU13_INC, 13),
                CU12("libcublasLt.so.12", "nvidia/cublas/lib", "nvidia-cublas-cu12", "nvidia/cublas/include", 12)},
     .version_kind = CL_VERSION_PROPERTY, .version_fn = "cublasLtGetProperty", .header = "cublasLt.h"},
    {.name = "cublas", .option_name = "options.cublas_path",
     .flavor = {CU13("libcublas.so.13", CU13_DIR, "nvidia-cublas", CU13_INC, 13),
                CU12("libcublas.so.12", "nvidia/cublas/lib", "nvidia-cublas-cu12", "nvidia/cublas/include", 12)},
     .deps = {"cublasLt"},
     .version_kind = CL_VERSION_PROPERTY, .version_fn = "cublasGetProperty", .header = "cublas_v2.h"},

    /* ---- the rest, appended ---- */
    {.name = "nvml", .flags = CL_ROW_DRIVER_LIKE,
     .flavor = {{0, "libnvidia-ml.so.1", NULL, NULL, NULL, 0}},
     .version_kind = CL_VERSION_NONE, .header = "nvml.h",
     .note = "installed with the driver; its version calls need nvmlInit, which libcudaload never calls here"},
};

#define CL_ROW_COUNT (sizeof cl_rows / sizeof cl_rows[0])
_Static_assert(CL_ROW_COUNT <= CL_CATALOGUE_MAX, "raise CL_CATALOGUE_MAX in internal.h");

size_t cl_catalogue_count(void) { return CL_ROW_COUNT; }

const cl_row *cl_row_at(size_t i) { return i < CL_ROW_COUNT ? &cl_rows[i] : NULL; }

int cl_catalogue_find(const char *name) {
    if (!name) return -1;
    for (size_t i = 0; i < CL_ROW_COUNT; i++)
        if (strcmp(cl_rows[i].name, name) == 0) return (int)i;
    /* "cublaslt", "CUFFT": names typed by hand in an environment variable or on a command line */
    for (size_t i = 0; i < CL_ROW_COUNT; i++)
        if (strcasecmp(cl_rows[i].name, name) == 0) return (int)i;
    return -1;
}

const char *cl_row_env_name(size_t i) {
    /* built once per row on first use; the rows never change */
    static char names[CL_ROW_COUNT][64];
    if (i >= CL_ROW_COUNT) return NULL;
    if (!names[i][0]) {
        char up[48];
        size_t n = 0;
        for (const char *p = cl_rows[i].name; *p && n < sizeof up - 1; p++) up[n++] = (char)toupper((unsigned char)*p);
        up[n] = 0;
        char tmp[64];
        snprintf(tmp, sizeof tmp, "CUDALOAD_%s_PATH", up);
        memcpy(names[i], tmp, sizeof tmp);
    }
    return names[i];
}

const cl_flavor *cl_row_flavor(const cl_row *row, int major) {
    for (size_t f = 0; f < CL_MAX_FLAVORS; f++)
        if (row->flavor[f].soname && row->flavor[f].major == major) return &row->flavor[f];
    return NULL;
}

int cl_row_major_of_version(const cl_row *row, int version) {
    if (version <= 0) return 0;
    switch (row->version_kind) {
    case CL_VERSION_CUDA:
    case CL_VERSION_MAJMIN: return version / 1000;
    case CL_VERSION_PROPERTY:
    case CL_VERSION_INT:
    case CL_VERSION_SIZE_T: {
        /* the library's own major, mapped through the flavors (cuFFT 12 -> CUDA 13); a major that
         * two flavors share (cuSPARSE 12 in CUDA 12 and 13) tells nothing */
        int lm = version / 10000, found = 0, n = 0;
        for (size_t f = 0; f < CL_MAX_FLAVORS; f++)
            if (row->flavor[f].soname && row->flavor[f].lib_major && row->flavor[f].lib_major == lm) {
                found = row->flavor[f].major;
                n++;
            }
        return n == 1 ? found : 0;
    }
    case CL_VERSION_NONE: break;
    }
    return 0;
}

int cl_row_major_of_soname(const cl_row *row, const char *soname) {
    int found = 0, n = 0;
    for (size_t f = 0; f < CL_MAX_FLAVORS; f++)
        if (row->flavor[f].soname && soname && strcmp(row->flavor[f].soname, soname) == 0) {
            found = row->flavor[f].major;
            n++;
        }
    return n == 1 ? found : 0;
}
