/* SPDX-License-Identifier: Apache-2.0 */
/*
 * catalogue.h -- step 0 of the walk: what libcudaload knows about each NVIDIA library.
 *
 * One row per library (catalogue.c) drives everything derived from it: the library's id
 * and name, its SONAMEs and wheel directories per CUDA major, its dependencies, how its
 * version is read, the CUDALOAD_<NAME>_PATH variable, the pip packages named in advice and
 * the header the include-directory finder looks for. Nothing else in libcudaload lists
 * libraries.
 */
#ifndef CUDALOAD_CATALOGUE_H
#define CUDALOAD_CATALOGUE_H

#include "cudaload.h"

#include <stddef.h>

#define CL_MAX_FLAVORS 2
#define CL_MAX_DEPS 8

/* One CUDA major's build of a library. */
typedef struct cl_flavor {
    int major;               /* the CUDA major it belongs to: 13, 12 (0: unused slot) */
    const char *soname;      /* e.g. "libcufft.so.12" (CUDA 13 ships cuFFT 12) */
    const char *alt_name;    /* another file name of it, tried after soname: an older SONAME
                                (libcudss.so.0) or a wheel's odd file name (libnvvm.so), or NULL */
    const char *wheel_dir;   /* where its pip wheel puts it, relative to site-packages */
    const char *alt_dir;     /* where an older release of the wheel put it, or NULL */
    const char *pkg;         /* the pip package that provides it */
    const char *include_dir; /* the wheel's header directory, relative to site-packages */
    int lib_major;           /* the library's own major in this CUDA major (cuFFT 12 in CUDA 13);
                                0 when its version does not tell the CUDA major */
    const char *win_name;    /* its Windows DLL (cudart64_13.dll), or NULL: not known on Windows.
                                Filled only with names read from the real win_amd64 wheels */
    const char *win_dir;     /* where the win_amd64 wheel puts it (nvidia/cu13/bin/x86_64) */
} cl_flavor;

/* How a library's version is read once it is loaded. The value kept is the library's own
 * number: CL_VERSION_CUDA and CL_VERSION_MAJMIN as CUDA writes it (13000 = 13.0), the others
 * as major*10000 + minor*100 + patch (cuFFT 12.0.0 = 120000, NCCL 2.27.3 = 22703). */
typedef enum cl_version_kind {
    CL_VERSION_NONE = 0,  /* no version call, or one that needs set-up (NVML, cuFile) */
    CL_VERSION_CUDA,      /* int fn(int *): cudaRuntimeGetVersion, cuDriverGetVersion */
    CL_VERSION_MAJMIN,    /* int fn(int *major, int *minor): nvrtcVersion, nvJitLinkVersion */
    CL_VERSION_PROPERTY,  /* int fn(libraryPropertyType, int *) for MAJOR, MINOR, PATCH */
    CL_VERSION_INT,       /* int fn(int *) returning major*10000+minor*100+patch (ncclGetVersion) */
    CL_VERSION_SIZE_T     /* size_t fn(void) returning major*10000+minor*100+patch (cudnnGetVersion) */
} cl_version_kind;

enum {
    CL_ROW_DRIVER_LIKE = 1u << 0, /* from the system only: loaded copy, exact file, dlopen by SONAME */
    CL_ROW_AT_INIT = 1u << 1,     /* searched by cudaload_init (the driver, cudart); the rest on first ask */
    CL_ROW_PIP_CUDA_VERSION = 1u << 2, /* its pip packages are numbered after CUDA itself (nvidia-cuda-runtime
                                          13.0.96 is CUDA 13.0's): a requirement for one CUDA major of its
                                          unsuffixed package pins it ("nvidia-cublas==13.*") */
};

/* The public API a library's headers declare, parsed by tools/gen_api.py into its typed table
 * and its stub (include/cudaload_gen/, stubs/gen/). Rows without headers have neither. */
typedef struct cl_api {
    const char *headers;       /* "cuda_runtime_api.h cuda_profiler_api.h": parsed together */
    const char *older_headers; /* an older API of the same library whose names collide with the
                                  first (cublas.h's legacy cublasSgemm): parsed on its own, stub only */
    int per_thread;            /* 1: parsed again with CUDA_API_PER_THREAD_DEFAULT_STREAM for the
                                  exported _ptds/_ptsz variants */
    int older_abis;            /* 1: parsed again with the define that declares the older ABIs, which
                                  the library still exports for old binaries: stub only (the
                                  driver's pre-_v2 cuMemAlloc: __CUDA_API_VERSION_INTERNAL; NVML's
                                  nvmlInit: NVML_NO_UNVERSIONED_FUNC_DEFS; tools/gen_api.py) */
} cl_api;

typedef struct cl_row {
    const char *name;             /* "cufft": the name users pass, upper-cased in CUDALOAD_CUFFT_PATH */
    const char *env_alias;        /* an older name of the exact-file variable, or NULL */
    const char *option_name;      /* the cudaload_options field of the same role, or NULL */
    unsigned flags;               /* CL_ROW_* */
    cl_flavor flavor[CL_MAX_FLAVORS]; /* newest CUDA major first */
    const char *prefix_dir;       /* an extra directory under a conda / CUDA_HOME prefix, or NULL */
    const char *system_dirs;      /* driver-like rows: directories tried, in order, after the dynamic
                                     loader's search, space-separated (CUDALOAD_DRIVER_DIRS replaces them) */
    const char *deps[CL_MAX_DEPS];      /* loaded first, from the same root: it fails without them */
    const char *opt_deps[CL_MAX_DEPS];  /* loaded first when there (it dlopens them itself) */
    cl_version_kind version_kind;
    const char *version_fn;       /* the exported name of the version call */
    const char *header;           /* a header that proves an include dir is this library's */
    const char *note;             /* one line on what is special about the row, or NULL */
    const char *companions;       /* files beside it that it dlopens itself, in the order their own
                                     DT_NEEDED needs, space-separated (cudaload_preload), or NULL */
    cl_api api;                   /* its API headers (typed table, stub), or all NULL */
} cl_row;

/* The number of rows and row i (NULL out of range). The first CUDALOAD_LIB_COUNT_ rows are the
 * historic cudaload_lib values, in their order. */
size_t cl_catalogue_count(void);
const cl_row *cl_row_at(size_t i);
/* The id of the row named name (exact match, case-insensitive fallback), -1 when none. */
int cl_catalogue_find(const char *name);
/* The exact-file variable of row i: "CUDALOAD_" + upper(name) + "_PATH" (static storage). */
const char *cl_row_env_name(size_t i);
/* Row i's required (optional = 0) or optional dependencies, space-separated (static storage). */
const char *cl_row_deps_text(size_t i, int optional);
/* The flavor of row for a CUDA major, or NULL. */
const cl_flavor *cl_row_flavor(const cl_row *row, int major);
/* The CUDA major a loaded copy's version says it belongs to; 0 when the version does not
 * tell (no version call, or a library numbered independently of CUDA). */
int cl_row_major_of_version(const cl_row *row, int version);
/* The next word of a space-separated row field (system_dirs) into out (size n), *p moved past
 * it; 0 when there is none left. A word that does not fit is skipped. */
int cl_row_next_word(const char **p, char *out, size_t n);
/* The CUDA major a SONAME belongs to when exactly one flavor has it, else 0. */
int cl_row_major_of_soname(const cl_row *row, const char *soname);

/* ---- toolkit parts: programs, static archives, bitcode (cudaload_part) ----
 * A part's wheels: one per CUDA major, each with the directory it lands in under
 * site-packages. Under a toolkit prefix (CUDA_HOME, conda, /usr/local/cuda) it is in one of
 * prefix_dirs; the first of them is also where cudaload_toolkit_root() puts it. */
typedef struct cl_part_flavor {
    int major;               /* 13, 12 (0: unused slot) */
    const char *wheel_dir;   /* "nvidia/cu13/bin" */
    const char *pkg;         /* "nvidia-cuda-nvcc" */
} cl_part_flavor;

enum {
    CL_PART_TOOLKIT = 1u << 0, /* cudaload_toolkit_root() needs it under nvcc's root */
};

typedef struct cl_part {
    const char *name;        /* "nvcc", "cudadevrt", "libdevice" */
    int kind;                /* cudaload_part_kind */
    const char *file;        /* "nvcc", "libcudadevrt.a", "libdevice.10.bc" */
    const char *library;     /* the catalogue row it goes with, or NULL */
    unsigned flags;          /* CL_PART_* */
    cl_part_flavor flavor[CL_MAX_FLAVORS]; /* newest CUDA major first */
    const char *prefix_dirs; /* under a prefix, space-separated, in order: "lib64 lib" */
    const char *note;        /* one line on what is special about it, or NULL */
} cl_part;

size_t cl_part_count(void);
const cl_part *cl_part_at(size_t i);
/* The index of the part named name, -1 when none. */
int cl_part_find(const char *name);

#endif /* CUDALOAD_CATALOGUE_H */
