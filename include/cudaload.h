/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cudaload.h -- find, open and resolve the CUDA runtime and cuBLAS at run time.
 *
 * libcudaload finds libcudart and libcublas that pip (CUDA 12 and 13 wheel
 * layouts), conda, CUDA_HOME or the system installed, in one documented order
 * (docs/search-order.md), dlopens them by SONAME, fills typed function tables
 * (cudaload_tables.h) and checks the driver's CUDA version against what each
 * library needs. It has no link-time dependency on any CUDA library.
 *
 * This header needs no CUDA header. The typed tables are in cudaload_tables.h,
 * which includes cuda.h, cuda_runtime_api.h and cublas_v2.h.
 *
 * Conventions (libuv style): every fallible call returns a cudaload_status;
 * CUDALOAD_OK is 0; cudaload_status_string() names a status and
 * cudaload_last_error() gives the calling thread's detailed message (paths,
 * versions, dlerror text, every candidate tried). The library never prints
 * unless CUDALOAD_DEBUG=1 (or CUDALOAD_FLAG_DEBUG) and never exits.
 */
#ifndef CUDALOAD_H
#define CUDALOAD_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(CUDALOAD_API_HIDDEN) && defined(__GNUC__)
/* The archive the Python package ships for extension builders (make HIDDEN_API=1): its API
 * is hidden in the object files, so a module that links it exports none of it (the linker
 * keeps the most restrictive visibility of a symbol's declarations and definition). */
#define CUDALOAD_API __attribute__((visibility("hidden")))
#elif defined(__GNUC__)
#define CUDALOAD_API __attribute__((visibility("default")))
#else
#define CUDALOAD_API
#endif

/* The version of these headers, and the one place libcudaload's version is set: the Makefile (the
 * shared library's file name, pkg-config, the CMake package) and the Python package read it from
 * here, and the build fails when the string and the numbers disagree (docs/api.md, "Stability and
 * releases"). cudaload_version_string() gives the version of the library running. */
#define CUDALOAD_VERSION_MAJOR 0
#define CUDALOAD_VERSION_MINOR 4
#define CUDALOAD_VERSION_PATCH 0
#define CUDALOAD_VERSION_STRING "0.4.0"

/* Status codes. Stable numbers: they are part of the ABI. */
typedef enum cudaload_status {
    CUDALOAD_OK = 0,
    CUDALOAD_ERROR_INVALID_ARGUMENT = 1,  /* NULL pointer, bad enum, short size field */
    CUDALOAD_ERROR_INVALID_OPTION = 2,    /* bad CUDALOAD_* variable or option value */
    CUDALOAD_ERROR_NOT_INITIALIZED = 3,   /* cudaload_init() has not succeeded yet */
    CUDALOAD_ERROR_NOT_FOUND = 4,         /* no usable copy of a library anywhere searched */
    CUDALOAD_ERROR_OVERRIDE_UNUSABLE = 5, /* an exact file given by env/options cannot be used */
    CUDALOAD_ERROR_NO_DRIVER = 6,         /* libcuda.so.1 could not be loaded */
    CUDALOAD_ERROR_DRIVER_TOO_OLD = 7,    /* copies exist, but only of majors the driver cannot run */
    CUDALOAD_ERROR_NO_DEVICE = 8,         /* the driver loaded but reports no CUDA device */
    CUDALOAD_ERROR_SYMBOL_MISSING = 9,    /* a required (or the asked-for optional) symbol is absent */
    CUDALOAD_ERROR_MAJOR_MISMATCH = 10,   /* cudart and cuBLAS of different CUDA majors */
    CUDALOAD_ERROR_CUDA = 11,             /* a CUDA call failed; the message names the error */
    CUDALOAD_ERROR_OUT_OF_MEMORY = 12,    /* host allocation failed */
    CUDALOAD_ERROR_NOT_ATTEMPTED = 13,    /* the library was not searched (not asked for yet, find-only) */
    CUDALOAD_ERROR_KERNELS_NOT_BUILT = 14, /* libcudaload was built without nvcc: no bundled kernels */
    CUDALOAD_ERROR_NO_KERNEL_IMAGE = 15,  /* no SASS for this GPU and its PTX cannot be JIT-compiled */
    CUDALOAD_ERROR_BELOW_FLOOR = 16,      /* copies exist, but only of versions below the floor stated
                                             (CUDALOAD_MIN_<NAME>, options.min_versions) */
    CUDALOAD_ERROR_DEVICE_MISMATCH = 17,  /* a call's operands (or its stream) are on different devices */
    CUDALOAD_ERROR_REENTRANT = 18,        /* called from foreign code that a load by this same thread is
                                             running (a library's constructor or version call): refused
                                             at once instead of waiting on itself */
    CUDALOAD_ERROR_KERNELS_FILE = 19,     /* since 0.5: the bundled kernels are read from a file (the
                                             Python package's module: its lib/libcudaload.a), which is
                                             missing, unreadable or of another build */
    CUDALOAD_STATUS_COUNT_ = 20
} cudaload_status;

/* A library of the catalogue (docs/catalogue.md), by id. The ids of the catalogue's first four
 * rows have names here, the libraries with typed tables (cudaload_tables.h); every other row
 * (cuFFT, cuSOLVER, NVRTC, cuDNN, NCCL, ...) is reached by name: cudaload_lib_by_name("cufft",
 * &lib), or enumerated with cudaload_library_count() and cudaload_catalogue_entry(). Ids are
 * stable: later versions only append rows. */
typedef enum cudaload_lib {
    CUDALOAD_LIB_DRIVER = 0,   /* "cuda": libcuda.so.1 */
    CUDALOAD_LIB_CUDART = 1,   /* libcudart.so.{13,12} */
    CUDALOAD_LIB_CUBLASLT = 2, /* libcublasLt.so.{13,12} (cuBLAS's dependency) */
    CUDALOAD_LIB_CUBLAS = 3,   /* libcublas.so.{13,12} */
    CUDALOAD_LIB_COUNT_ = 4    /* the number of named ids (not of the catalogue's rows) */
} cudaload_lib;

/* Where a library came from; also the vocabulary of CUDALOAD_SOURCES. */
typedef enum cudaload_source {
    CUDALOAD_SOURCE_NONE = 0,
    CUDALOAD_SOURCE_OVERRIDE = 1,  /* CUDALOAD_*_PATH files, CUDALOAD_PATH dirs, option paths */
    CUDALOAD_SOURCE_CALLER = 2,    /* roots passed in cudaload_options.roots */
    CUDALOAD_SOURCE_SELF = 3,      /* the site-packages holding the module that embeds us */
    CUDALOAD_SOURCE_VENV = 4,      /* $VIRTUAL_ENV/lib{,64}/python3.* /site-packages */
    CUDALOAD_SOURCE_CONDA = 5,     /* $CONDA_PREFIX/{lib,lib64,targets/<triple>/lib} */
    CUDALOAD_SOURCE_CUDA_HOME = 6, /* $CUDA_HOME, $CUDA_PATH: {lib64,lib,targets/<triple>/lib} */
    CUDALOAD_SOURCE_SYSTEM = 7,    /* dlopen(soname): LD_LIBRARY_PATH, ld.so.cache, default dirs */
    CUDALOAD_SOURCE_LOADED = 8,    /* a copy already in the process, reused (never a scope bit) */
    CUDALOAD_SOURCE_COUNT_ = 9
} cudaload_source;

/* Bit for a source in cudaload_options.sources: CUDALOAD_SOURCE_BIT(CUDALOAD_SOURCE_CONDA). */
#define CUDALOAD_SOURCE_BIT(s) (1u << (unsigned)(s))
/* Every searchable source (override .. system). */
#define CUDALOAD_SOURCES_ALL 0xFEu

/* Flags for cudaload_options.flags. */
enum {
    CUDALOAD_FLAG_IGNORE_ENV = 1u << 0,   /* read no CUDALOAD_* variable (CUDA_HOME etc. still name roots
                                             unless their sources are scoped out) */
    CUDALOAD_FLAG_DEBUG = 1u << 1,        /* trace every candidate on stderr, like CUDALOAD_DEBUG=1 */
    CUDALOAD_FLAG_FIND_ONLY = 1u << 2,    /* locate candidates without dlopen'ing any CUDA library */
    CUDALOAD_FLAG_LOAD_CUBLAS = 1u << 3,  /* load cuBLAS during init instead of on first use */
    CUDALOAD_FLAG_SECURE = 1u << 4,       /* behave as under AT_SECURE: ignore every environment
                                             override (the test seam and a hardening switch) */
    CUDALOAD_FLAG_DRIVER_OPTIONAL = 1u << 5 /* a missing driver is not an init error: cudart is
                                               still loaded, ungated, and init returns OK */
};

/*
 * Options for cudaload_init(). Zero-initialise, set .size = sizeof(cudaload_options),
 * then fill what you need; every zero field means "default". The size field lets
 * later versions append fields without breaking callers built against this one.
 * Strings are copied; the caller may free them after cudaload_init() returns.
 */
typedef struct cudaload_options {
    size_t size;                /* sizeof(cudaload_options) */
    const char *const *roots;   /* caller roots: site-packages dirs or library dirs (absolute) */
    size_t n_roots;
    int cuda_major;             /* 0: any (newest the driver runs), or 12 or 13 */
    unsigned sources;           /* 0: all; else a mask of CUDALOAD_SOURCE_BIT()s */
    unsigned flags;             /* CUDALOAD_FLAG_* */
    const char *lib_dirs;       /* like CUDALOAD_PATH: colon-separated absolute dirs, searched first */
    const char *cudart_path;    /* exact files, like CUDALOAD_CUDART_PATH and friends */
    const char *cublas_path;
    const char *cublaslt_path;
    const char *driver_path;
    /* since 0.2: exact files for any catalogue library, as "name=/abs/path" strings (like
     * CUDALOAD_<NAME>_PATH, e.g. "cufft=/opt/x/libcufft.so.12"); the four fields above win */
    const char *const *lib_paths;
    size_t n_lib_paths;
    /* since 0.3: version floors, as "name=13.1" strings (like CUDALOAD_MIN_<NAME>, which wins): a
     * copy of that catalogue library below the version is skipped (BELOW_FLOOR) and the search
     * goes on. The version is the library's own: "cuda=13.0" (the driver's CUDA version),
     * "cudart=13.1", "cublas=13.1.0", "cudnn=9.10" */
    const char *const *min_versions;
    size_t n_min_versions;
} cudaload_options;

/* Why a candidate was taken or skipped: the code, rendered to text once (cudaload_candidate's
 * reason) from the code and its parameters (cudaload_candidate_detail). Stable numbers. */
#define CUDALOAD_REASONS(X)                                                                          \
    X(NONE, 0)                 /* no reason recorded */                                              \
    X(TAKEN, 1)                /* loaded and kept */                                                 \
    X(REUSED, 2)               /* a copy already in the process, kept */                             \
    X(FOUND, 3)                /* find-only: located and checked, not loaded */                      \
    X(FILE_UNUSABLE, 4)        /* not a loadable library for this process (text: why) */            \
    X(DLOPEN_FAILED, 5)        /* dlopen failed (text: dlerror) */                                   \
    X(SYMBOL_MISSING, 6)       /* a required symbol is absent (text: the symbol, dlerror) */         \
    X(VERSION_FAILED, 7)       /* its version call failed (text: the call and its error) */          \
    X(MAJOR_NOT_ASKED, 8)      /* major, but needed (the asked-for CUDA major) */                    \
    X(DRIVER_TOO_OLD, 9)       /* major needs a newer driver than value (cuDriverGetVersion) */      \
    X(DRIVER_BRANCH, 10)       /* major needs branch >= needed; the driver's is value (text) */      \
    X(MAJOR_MIXED, 11)         /* major, but the process's libraries are CUDA needed */              \
    X(VERSION_NOT_NAME, 12)    /* named for CUDA major, reports value */                             \
    X(DEPENDENCY, 13)          /* a dependency (text: its name) cannot be used */                    \
    X(DEPENDENCY_DROPPED, 14)  /* closed again: the library it was loaded for failed (text) */       \
    X(LOADED_ELSEWHERE, 15)    /* an exact file not used: a copy is already loaded (text: from) */   \
    X(SAME_AS_LOADED, 16)      /* an exact file that is the copy already loaded */                   \
    X(NOT_IN_SYSTEM, 17)       /* the system search has no such SONAME */                            \
    X(UNSEARCHABLE, 18)        /* a directory on the way cannot be searched (text: it) */            \
    X(DRIVER_LOADED, 19)       /* a second driver cannot be loaded (text: the loaded one) */         \
    X(STUB_LIBRARY, 20)        /* the toolkit's link stub, not a driver (text: the error) */         \
    X(DRIVER_FAILED, 21)       /* the driver's version call failed (text: the error) */            \
    X(NOT_PRESENT, 22)         /* a place the driver may live has no such file */                   \
    X(STUB_DIR, 23)            /* in a stubs/ directory: the toolkit's link stubs, never opened */  \
    X(BELOW_FLOOR, 24)         /* version value below the floor needed, both major*10000+minor*100+patch
                                  (text: the variable or option that set it) */                        \
    X(COMPAT_NOT_NEWER, 25)    /* a forward-compatibility libcuda (text: its version) not newer than the
                                  kernel module: it would fail with 803 */                              \
    X(COMPAT_NOT_NEEDED, 26)   /* a forward-compatibility libcuda (text: its version) the runtime does
                                  not need: the driver runs CUDA value, the runtime needs needed */     \
    X(COMPAT_AVAILABLE, 27)    /* a forward-compatibility libcuda (text: its version) newer than the
                                  kernel module, for a runtime that needs CUDA needed: not taken
                                  (CUDALOAD_COMPAT=never, find-only, or the kernel module's branch
                                  unknown) */                                                          \
    X(COMPAT_TAKEN, 28)        /* a forward-compatibility libcuda (text: its version) taken in place of
                                  the system's driver, which runs CUDA value; the runtime needs needed */ \
    X(COMPAT_REPLACED, 29)     /* the system's driver, closed again: it runs CUDA value, the runtime
                                  needs needed; a forward-compatibility libcuda (text: its path) runs */ \
    X(COMPAT_TOO_OLD, 30)      /* a forward-compatibility libcuda (text: its version) that runs CUDA
                                  value, not the needed: not taken */                                  \
    X(COMPAT_BLOCKED, 31)      /* a forward-compatibility libcuda (text: its version) that would run
                                  CUDA needed, not taken: the system's driver stays in the process
                                  (loaded before libcudaload, or not unloadable) */        \
    X(FILE_CHANGED, 32)        /* the file mapped is not the file checked: replaced between its check
                                  and its load (text: both device and inode pairs) */              \
    X(PATH_TOO_LONG, 33)       /* the path, value bytes long, does not fit the system's limit of needed
                                  bytes (PATH_MAX): never opened (text: the directory it is in) */ \
    X(OTHER_ROOT, 34)          /* a toolkit part found, but not under the toolkit's root (text: that
                                  root, where nvcc is): parts of one toolkit come from one root */    \
    X(TOOLKIT_MISMATCH, 35)    /* the runtime headers say CUDA value, nvcc is CUDA needed (text: the
                                  header read): one toolkit is one release */                          \
    X(NOT_IN_ROOT, 36)         /* a part the toolkit needs is not under its root (text: the root) */  \
    X(TREE_INCOMPLETE, 37)     /* a toolkit tree libcudaload made (its marker there) lacks this link, or
                                  it points elsewhere (text: the target it should have): never reused */

typedef enum cudaload_reason {
#define CUDALOAD_REASON_ENUM_(name, value) CUDALOAD_REASON_##name = value,
    CUDALOAD_REASONS(CUDALOAD_REASON_ENUM_)
#undef CUDALOAD_REASON_ENUM_
    CUDALOAD_REASON_COUNT_
} cudaload_reason;

/* The reason of a candidate as data: the code and its parameters. */
typedef struct cudaload_candidate_detail {
    cudaload_reason reason;
    int major;                /* the CUDA major of the candidate, 0 when unknown */
    int value;                /* the number the reason is about (a driver version, a branch) */
    int needed;               /* the number that was needed (a CUDA major, a branch) */
    const char *text;         /* the reason's text parameter (dlerror text, a symbol, a name), or "" */
} cudaload_candidate_detail;

/* One file (or system-search attempt) that was considered for a library. */
typedef struct cudaload_candidate {
    const char *path;         /* absolute path; "<soname> (system search)" when the system search
                                 found no file */
    cudaload_source source;   /* where the candidate came from */
    cudaload_status result;   /* CUDALOAD_OK when taken; otherwise why it was skipped */
    const char *reason;       /* human text: "taken", "not an ELF file", dlerror text, ... */
} cudaload_candidate;

/* A search root: a directory the search looked in, in order. */
typedef struct cudaload_root {
    const char *path;
    cudaload_source source;
    int exists;               /* 1 when the directory exists */
} cudaload_root;

/*
 * What libcudaload knows about one library. Filled by cudaload_get_library_info().
 * The strings and the candidate array stay valid for the life of the process.
 */
typedef struct cudaload_library_info {
    size_t size;                  /* set by the caller: sizeof(cudaload_library_info); any size
                                     from the first version's (0.1.0: up to driver_branch) up is accepted */
    cudaload_lib lib;
    const char *name;             /* "cuda", "cudart", "cublasLt", "cublas" */
    cudaload_status status;       /* OK: loaded (or found, in find-only mode); else why not */
    int loaded;                   /* 1 when a handle is open and its table is filled */
    const char *path;             /* absolute path of the copy taken, or NULL */
    const char *soname;           /* e.g. "libcudart.so.13", or NULL */
    cudaload_source source;       /* where it came from (CUDALOAD_SOURCE_LOADED when reused) */
    int already_loaded;           /* 1 when the copy was in the process before libcudaload looked */
    int major;                    /* CUDA major of the copy taken (12, 13), 0 when unknown */
    int version;                  /* driver: cuDriverGetVersion (13000); cudart:
                                     cudaRuntimeGetVersion (13000); cublas/cublasLt:
                                     major*10000+minor*100+patch (130100); 0 unknown */
    const char *driver_branch;    /* driver only: "580.159.04" from /proc or NVML, else NULL */
    size_t n_candidates;
    const cudaload_candidate *candidates;
    /* since 0.2 */
    const cudaload_candidate_detail *details; /* n_candidates entries: each candidate's reason as data */
    const char *env_name;         /* the exact-file variable of this library: "CUDALOAD_CUFFT_PATH" */
    /* since 0.3 */
    int cuda_version;             /* the CUDA version the copy belongs to when its version call says it
                                     (cudart, NVRTC, nvJitLink, nvFatbin: 13050 = 13.5), else 0 */
    int newer_than_driver;        /* 1: a newer minor of the driver's CUDA major than the driver runs
                                     (taken anyway: CUDA minor version compatibility). Its calls that
                                     need the newer minor return cudaErrorCallRequiresNewerDriver (36),
                                     and PTX from its toolkit does not JIT on this driver */
} cudaload_library_info;

/* What the catalogue says about a library (cudaload_catalogue_entry). Strings are static. */
typedef struct cudaload_catalogue_info {
    size_t size;                  /* set by the caller: sizeof(cudaload_catalogue_info) */
    cudaload_lib lib;
    const char *name;             /* "cufft" */
    int driver_like;              /* 1: from the system only (the driver, NVML) */
    int n_majors;                 /* CUDA majors the row knows (0 for driver-like rows) */
    int majors[2];                /* newest first: 13, 12 */
    const char *sonames[2];       /* per major, e.g. "libcufft.so.12", "libcufft.so.11" */
    const char *wheel_dirs[2];    /* per major, relative to site-packages: "nvidia/cu13/lib" */
    const char *pip_packages[2];  /* per major: "nvidia-cufft", "nvidia-cufft-cu12" */
    const char *deps;             /* required dependencies, space-separated names ("" if none) */
    const char *optional_deps;    /* loaded first when present ("" if none) */
    const char *header;           /* the header that marks its include directory */
    const char *env_name;         /* "CUDALOAD_CUFFT_PATH" */
    int version_style;            /* how cudaload_library_info.version reads: 0 not read; 1 as CUDA
                                     writes it (13000 = 13.0: driver, cudart, NVRTC, nvJitLink);
                                     2 major*10000 + minor*100 + patch (130100 = 13.1.0, 91000 = 9.10.0) */
    /* since 0.3: the headers of its public API, from which its typed table and stub are
     * generated (tools/gen_api.py); NULL for a row without them */
    const char *api_headers;      /* "cuda_runtime_api.h cuda_profiler_api.h" */
    const char *api_older_headers; /* an older API whose names collide (cublas.h), or NULL */
    int api_per_thread;           /* 1: it exports _ptds/_ptsz per-thread-stream variants */
    int api_older_abis;           /* 1: it exports pre-_v2 ABIs for old binaries (the driver, NVML) */
    int pip_cuda_version;         /* 1: its pip packages are numbered after CUDA itself (nvidia-cuda-runtime
                                     13.0.96 is CUDA 13.0's): pin the unsuffixed one to a major ("==13.*") */
} cudaload_catalogue_info;

/* The generated tables (include/cudaload_<lib>.h): a member and a presence flag per entry of a
 * CUDALOAD_<LIB>_API(X) list. */
#define CUDALOAD_API_MEMBER_(m, sym, since, ret, params) ret (*m) params;
/* Around a table's definition: every function is listed, deprecated ones included, and their
 * types carry the headers' deprecation attributes. */
#if defined(__GNUC__)
#define CUDALOAD_TABLE_BEGIN_ _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wdeprecated-declarations\"")
#define CUDALOAD_TABLE_END_ _Pragma("GCC diagnostic pop")
#else
#define CUDALOAD_TABLE_BEGIN_
#define CUDALOAD_TABLE_END_
#endif
#define CUDALOAD_API_FLAG_(m, sym, since, ret, params) unsigned char m;

/* ---- version and errors ---------------------------------------------------------------- */

/** Returns the library's version string, "MAJOR.MINOR.PATCH" (never NULL): the CUDALOAD_VERSION_STRING
 *  it was built with. */
CUDALOAD_API const char *cudaload_version_string(void);

/** Returns the status's name, e.g. "CUDALOAD_ERROR_NOT_FOUND" (never NULL; unknown values give
 *  "CUDALOAD_ERROR_UNKNOWN"). */
CUDALOAD_API const char *cudaload_status_name(cudaload_status status);

/** Returns a one-line description of the status, e.g. "library not found" (never NULL). */
CUDALOAD_API const char *cudaload_status_string(cudaload_status status);

/** Returns the calling thread's detailed message for the last failed call: the paths,
 *  versions and dlerror text, and for a failed search every candidate with its reason.
 *  "" when the thread has seen no failure. Every failing call sets it; a successful call
 *  leaves it as it was (errno style). Valid until the thread's next failing call. */
CUDALOAD_API const char *cudaload_last_error(void);

/** Returns the name of a source ("override", "caller", "self", "venv", "conda",
 *  "cuda_home", "system", "loaded"), or "none". Never NULL. */
CUDALOAD_API const char *cudaload_source_name(cudaload_source source);

/** Returns the library's catalogue name ("cuda", "cudart", "cublasLt", "cublas", "cufft", ...)
 *  or "unknown". */
CUDALOAD_API const char *cudaload_lib_name(cudaload_lib lib);

/** Returns the reason's name, e.g. "DRIVER_TOO_OLD" ("UNKNOWN" out of range). Never NULL. */
CUDALOAD_API const char *cudaload_reason_name(cudaload_reason reason);

/* ---- the catalogue ------------------------------------------------------------------------ */

/** Returns the number of libraries in the catalogue; ids run from 0 to that number - 1. */
CUDALOAD_API size_t cudaload_library_count(void);

/** Sets *lib to the id of the catalogue library called name ("cufft"; case is ignored when no
 *  name matches exactly). CUDALOAD_ERROR_NOT_FOUND (message: the known names) when none. */
CUDALOAD_API cudaload_status cudaload_lib_by_name(const char *name, cudaload_lib *lib);

/** Fills *out (whose .size the caller set) with the catalogue's row for lib. */
CUDALOAD_API cudaload_status cudaload_catalogue_entry(cudaload_lib lib, cudaload_catalogue_info *out);

/* ---- initialisation -------------------------------------------------------------------- */

/** Sets *opts to the defaults (all zero, size = sizeof(cudaload_options)). */
CUDALOAD_API void cudaload_options_init(cudaload_options *opts);

/**
 * Finds and loads the CUDA driver and runtime, fills their tables and gates them.
 * opts may be NULL (defaults, environment applies). Thread-safe and idempotent: the
 * first call does the work and every later call returns the same status (its options
 * are ignored). Returns CUDALOAD_OK, or the status of the first step that failed:
 * CUDALOAD_ERROR_INVALID_OPTION, _NO_DRIVER (cudart is still searched, ungated, so
 * cudaload_get_library_info() can tell what is there), _NOT_FOUND, _DRIVER_TOO_OLD,
 * _OVERRIDE_UNUSABLE, _SYMBOL_MISSING. Never prints (unless asked) and never exits.
 * Called back from a library's constructor or version call that init itself is running:
 * CUDALOAD_ERROR_REENTRANT at once.
 */
CUDALOAD_API cudaload_status cudaload_init(const cudaload_options *opts);

/** Returns 1 when cudaload_init() has completed (successfully or not), else 0. */
CUDALOAD_API int cudaload_is_initialized(void);

/**
 * Loads cuBLAS (cublasLt first, from the same directory) if not loaded yet: from the root
 * cudart came from when that root has it, else in the search order; only the major of the
 * loaded cudart. Thread-safe; later calls return the first result. Needs a completed init
 * in which cudart was taken (not necessarily a successful one: after an init that returned
 * CUDALOAD_ERROR_NO_DRIVER it still loads cuBLAS); else it returns cudart's status, or
 * CUDALOAD_ERROR_NOT_INITIALIZED before init. When cuBLAS fails, no cublasLt is kept.
 */
CUDALOAD_API cudaload_status cudaload_load_cublas(void);

/**
 * Finds and loads any catalogue library (its dependencies first, from the same root), once:
 * a copy already in the process, its exact file (CUDALOAD_<NAME>_PATH or options.lib_paths),
 * the root the CUDA runtime came from, the other roots in order, the system. Only the CUDA
 * major of the libraries already taken (one major for the whole process). After an init with
 * CUDALOAD_FLAG_FIND_ONLY it locates without loading. Thread-safe; later calls return the
 * first result. Needs a completed init (any status but INVALID_OPTION/ARGUMENT). The
 * cudaload_get_library_info() of lib then tells what was taken and every candidate. Called
 * back from a library's constructor or version call that a load of this thread is running:
 * CUDALOAD_ERROR_REENTRANT at once, unless lib's load had ended already.
 */
CUDALOAD_API cudaload_status cudaload_load_library(cudaload_lib lib);

/** Locates lib (and its dependencies) the way cudaload_load_library would, without loading
 *  either (find-only for this library alone): the candidates are recorded and the copy that
 *  would be taken is reported with loaded = 0. Final for later finds; a later
 *  cudaload_load_library(lib) (or an accessor that loads) searches lib and the dependencies
 *  only located again, and loads them. A library loaded already answers with its load's
 *  result. For diagnostics (cudaload-probe --lib without --load, build flags). */
CUDALOAD_API cudaload_status cudaload_find_library(cudaload_lib lib);

/** cudaload_lib_by_name + cudaload_load_library + cudaload_get_library_info in one call.
 *  Returns the library's status; *out is filled whenever the name is known. */
CUDALOAD_API cudaload_status cudaload_library(const char *name, cudaload_library_info *out);

/**
 * Finds the header directory of lib (the one holding its catalogue header, e.g. cufft.h): next
 * to the copy taken (the wheel's include dir for its major, a prefix's include/), else in the
 * roots in search order (both wheel layouts, conda and CUDA_HOME prefixes). Needs a completed
 * init; searches, never loads. Returns an absolute path valid for the life of the process, or
 * NULL with the reason in cudaload_last_error().
 */
CUDALOAD_API const char *cudaload_include_dir(cudaload_lib lib);

/* ---- toolkit parts: the files that are not shared libraries ---------------------------------
 * The catalogue also knows the toolkit's programs (nvcc, ptxas, cicc, ...), static archives
 * (libcudadevrt.a, libcudart_static.a, ...) and bitcode (libdevice.10.bc, ...), with the pip
 * wheels that ship them. They are searched in the libraries' order (the roots, then the system:
 * PATH for programs, then /usr/local/cuda), with the same candidates and reasons
 * (docs/toolkit.md). Linux only: on Windows every part answers CUDALOAD_ERROR_NOT_FOUND. */

typedef enum cudaload_part_kind {
    CUDALOAD_PART_BINARY = 1,  /* a program: nvcc, ptxas, cicc */
    CUDALOAD_PART_STATIC = 2,  /* a static archive: libcudadevrt.a */
    CUDALOAD_PART_BITCODE = 3  /* LLVM bitcode: libdevice.10.bc */
} cudaload_part_kind;

/* What the catalogue says about a part and where it was found (cudaload_part). */
typedef struct cudaload_part_info {
    size_t size;                  /* set by the caller: sizeof(cudaload_part_info) */
    size_t index;                 /* 0 .. cudaload_part_count() - 1 */
    const char *name;             /* "nvcc", "cudadevrt", "libdevice" */
    cudaload_part_kind kind;
    const char *file;             /* its file name: "nvcc", "libcudadevrt.a", "libdevice.10.bc" */
    const char *library;          /* the catalogue library it goes with ("cudart"), or NULL */
    int n_majors;                 /* CUDA majors whose wheels ship it */
    int majors[2];                /* newest first: 13, 12 */
    const char *wheel_dirs[2];    /* per major, relative to site-packages: "nvidia/cu13/bin" */
    const char *pip_packages[2];  /* per major: "nvidia-cuda-nvcc" */
    const char *prefix_dirs;      /* under a toolkit prefix, in order: "lib64 lib" */
    int needed_by_toolkit;        /* 1: cudaload_toolkit_root() needs it */
    /* the search (status CUDALOAD_ERROR_NOT_ATTEMPTED until cudaload_find_part asked) */
    cudaload_status status;       /* OK found; NOT_FOUND; NOT_ATTEMPTED */
    const char *path;             /* absolute path of the copy found, or NULL */
    cudaload_source source;
    int major;                    /* the CUDA major of the layout it was found in, 0 unknown */
    int cuda_version;             /* nvcc: the release it reports (13000 = 13.0), else 0 */
    size_t n_candidates;
    const cudaload_candidate *candidates;
    const cudaload_candidate_detail *details; /* n_candidates entries */
} cudaload_part_info;

/** The number of parts the catalogue knows. */
CUDALOAD_API size_t cudaload_part_count(void);

/** Fills *out (whose .size the caller set) for the part named name ("nvcc", "cudadevrt",
 *  "libdevice"; or "#3" for index 3), searching it on first ask. Needs a completed init.
 *  Returns its status: OK when found (out->path), NOT_FOUND with every candidate and the pip
 *  packages in cudaload_last_error(), INVALID_ARGUMENT for an unknown name. Thread-safe; later
 *  calls return the first result. */
CUDALOAD_API cudaload_status cudaload_part(const char *name, cudaload_part_info *out);

/** The catalogue facts of part i (no search): *out filled with status NOT_ATTEMPTED unless a
 *  search already ran. INVALID_ARGUMENT when i is out of range. Works before init. */
CUDALOAD_API cudaload_status cudaload_part_at(size_t i, cudaload_part_info *out);

/**
 * A CUDA toolkit root for build tools: a directory that works as CUDA_HOME, CUDAToolkit_ROOT
 * and CMAKE_CUDA_COMPILER's prefix for nvcc, CMake and Makefiles, from the first root (in search
 * order) that has nvcc. Every part the toolkit needs (nvcc and its profile, ptxas, fatbinary,
 * nvlink, cudafe++, cicc, libdevice, libcudadevrt.a, libcudart_static.a, the runtime headers)
 * must come from that same root, and the runtime headers' CUDA release must be nvcc's.
 *
 * A toolkit prefix (CUDA_HOME, conda, /usr/local/cuda) is answered as it is. Pip wheels
 * (site-packages/nvidia/cu13) are not a toolkit as they lie (no lib64, no unversioned
 * libraries, no single prefix when they are in two site-packages): the answer is a tree of
 * symbolic links made under dir (NULL: $CUDALOAD_CACHE_DIR, else $XDG_CACHE_HOME/cudaload, else
 * $HOME/.cache/cudaload), in a subdirectory named for its contents, made once and reused. A dir
 * given that exists must be empty or such a tree.
 *
 * Returns OK with *root (valid for the life of the process), or NOT_FOUND (no nvcc, or a part
 * missing from nvcc's root) or MAJOR_MISMATCH (headers of another release) with the parts and the
 * pip packages to install in cudaload_last_error(); cudaload_get_toolkit_info() gives the same as data.
 */
CUDALOAD_API cudaload_status cudaload_toolkit_root(const char *dir, const char **root);

/* What cudaload_toolkit_root() decided for a dir, as data (cudaload_toolkit_info). */
typedef struct cudaload_toolkit_info {
    size_t size;                  /* set by the caller: sizeof(cudaload_toolkit_info) */
    cudaload_status status;       /* cudaload_toolkit_root()'s */
    const char *root;             /* the answer, or NULL */
    const char *top;              /* where nvcc is: its site-packages or prefix (realpath), or NULL */
    const char *nvcc;             /* nvcc's path as found, or NULL when there is none */
    int cuda_version;             /* nvcc's release (13000 = 13.0), 0 unknown */
    int headers_version;          /* the runtime headers' CUDART_VERSION, 0 unknown */
    size_t n_candidates;          /* the check: one per part the toolkit needs, nvcc's profile, the headers */
    const cudaload_candidate *candidates; /* result OK (reason FOUND) or why not: NOT_IN_ROOT,
                                             OTHER_ROOT (a copy elsewhere), TOOLKIT_MISMATCH;
                                             TREE_INCOMPLETE for a cached tree not reused */
    const cudaload_candidate_detail *details;
} cudaload_toolkit_info;

/** The same answer as cudaload_toolkit_root(dir, ...) (made on first ask, kept for the process)
 *  with what it checked, as data. Returns its status. */
CUDALOAD_API cudaload_status cudaload_get_toolkit_info(const char *dir, cudaload_toolkit_info *out);

/* ---- advice: what would fix a library that failed, as data ---------------------------------- */

typedef enum cudaload_fix_kind {
    CUDALOAD_FIX_NONE = 0,
    CUDALOAD_FIX_PIP_INSTALL = 1,    /* pip install the packages (major: their CUDA major, 0 = either) */
    CUDALOAD_FIX_UPGRADE_DRIVER = 2, /* upgrade the NVIDIA driver to branch >= branch (CUDA major) */
    CUDALOAD_FIX_INSTALL_DRIVER = 3, /* install the NVIDIA driver, or set setting to libcuda.so.1's path */
    CUDALOAD_FIX_CHECK_SETTING = 4   /* the exact file named by setting cannot be used: fix or unset it */
} cudaload_fix_kind;

typedef struct cudaload_fix {
    size_t size;              /* set by the caller: sizeof(cudaload_fix) */
    cudaload_fix_kind kind;
    int major;                /* the CUDA major the fix is about, 0 when any */
    int branch;               /* UPGRADE_DRIVER: the minimum driver branch (580 for CUDA 13) */
    const char *packages;     /* PIP_INSTALL: space-separated pip packages, from the catalogue */
    const char *setting;      /* INSTALL_DRIVER / CHECK_SETTING: the variable or option */
} cudaload_fix;

/** Fills *out with fix i (from 0) for a library whose search failed, as the advisor derives it
 *  from the candidates' reason codes, the catalogue and the driver. Returns the number of fixes
 *  (0 when the library is fine or was not searched); *out is untouched when i is out of range. */
CUDALOAD_API size_t cudaload_fix_at(cudaload_lib lib, size_t i, cudaload_fix *out);

/** Writes into buf (n bytes, always terminated) one line saying why lib cannot be used, as a stub
 *  prints it where the dynamic loader would have printed its own: the file names, the top reason
 *  with its numbers (not found, and where it looked; a wrong CUDA major; the driver too old; no
 *  driver) and the first fix ("fix: pip install nvidia-cublas (CUDA 13)"). No newline. Returns
 *  lib's status: CUDALOAD_OK (buf gets "") when it is usable, CUDALOAD_ERROR_NOT_ATTEMPTED when it
 *  was not searched yet, CUDALOAD_ERROR_INVALID_ARGUMENT for a bad lib or buffer. */
CUDALOAD_API cudaload_status cudaload_failure_line(cudaload_lib lib, char *buf, size_t n);

/* ---- preload: for code that cannot be relinked -------------------------------------------- */

/* One file cudaload_preload loaded (or found loaded already), in load order. The strings live for
 * the life of the process. */
typedef struct cudaload_preloaded {
    const char *name;         /* the catalogue name ("cublasLt"), or a companion's file name
                                 ("libcudnn_graph.so.9": a file its library loads itself) */
    const char *path;         /* the file's absolute path */
    cudaload_source source;   /* where it came from (a companion: its library's source) */
    int lib;                  /* its cudaload_lib, -1 for a companion */
} cudaload_preloaded;

/** Loads each of the n_names libraries named (catalogue names: "cublas", "cusparse") with the
 *  closure of its dependencies, dependencies first (cuBLASLt before cuBLAS, nvJitLink before
 *  cuSPARSE, cuDNN's sub-libraries after cuDNN), each library with its dependencies from the one
 *  place the search chose, and makes each global (RTLD_GLOBAL), so that code loaded afterwards
 *  whose DT_NEEDED names one of them (a prebuilt extension with no RPATH: libcublas.so.13) binds
 *  to these copies. Lists what it loaded in out[0..cap), in order, and the count in *n_out (more
 *  than cap: the rest was not listed; either may be NULL/0). Stops at the first library that
 *  cannot be loaded and returns its status (cudaload_last_error(), cudaload_failure_line() and
 *  cudaload_fix_at() say why); CUDALOAD_ERROR_INVALID_ARGUMENT for a name not in the catalogue. */
CUDALOAD_API cudaload_status cudaload_preload(const char *const *names, size_t n_names, cudaload_preloaded *out,
                                              size_t cap, size_t *n_out);

/* ---- what was found -------------------------------------------------------------------- */

/** Fills *out (whose .size the caller set) for lib: status, path, SONAME, source, version
 *  and every candidate tried. Works before init (status CUDALOAD_ERROR_NOT_ATTEMPTED). */
CUDALOAD_API cudaload_status cudaload_get_library_info(cudaload_lib lib, cudaload_library_info *out);

/** Returns the search roots of the completed init, in search order, and their count in
 *  *count (0 and NULL before init). The array lives for the life of the process. */
CUDALOAD_API const cudaload_root *cudaload_roots(size_t *count);

/** Returns the driver's CUDA version (cuDriverGetVersion: 13000 = 13.0) in *version.
 *  CUDALOAD_ERROR_NO_DRIVER when the driver did not load. */
CUDALOAD_API cudaload_status cudaload_driver_version(int *version);

/** Initialises the driver (cuInit) on first use and returns the number of CUDA devices in
 *  *count. CUDALOAD_ERROR_NO_DEVICE (count 0) when there is none; the message carries the
 *  driver's error name. Not called by cudaload_init(), which stays cheap. */
CUDALOAD_API cudaload_status cudaload_device_count(int *count);

/** The CUresult of the driver's cuInit/cuDeviceGetCount when cudaload_device_count() failed
 *  with CUDALOAD_ERROR_CUDA (803: CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, the libcuda does not match
 *  the kernel module; 804: CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, a forward-compatibility
 *  libcuda on a GPU without it), else 0. Since 0.3. */
CUDALOAD_API int cudaload_device_cu_result(void);

/** Returns 1 when the named symbol of lib was resolved (optional symbols may be absent,
 *  e.g. cudaMemGetDefaultMemPool in a CUDA 12 runtime), 0 when absent or lib not loaded.
 *  The name is the exported one ("cublasSgemm_v2"); the macro name ("cublasSgemm") works too. */
CUDALOAD_API int cudaload_has_symbol(cudaload_lib lib, const char *name);

/** Returns the number of symbols in lib's X-macro list, and through the out-pointers the
 *  exported name of entry i, whether it is required and whether it was resolved. For the
 *  probe's listing. Returns 0 for an unknown lib or i out of range (outputs untouched). */
CUDALOAD_API size_t cudaload_symbol_at(cudaload_lib lib, size_t i, const char **name,
                                       int *required, int *present);

/** Returns the raw dlopen handle of a loaded library, or NULL. The handle stays open for
 *  the life of the process; do not dlclose it. */
CUDALOAD_API void *cudaload_handle(cudaload_lib lib);

/** Records in cudaload_last_error() that symbol is not in lib's loaded copy (with the copy's path
 *  and version) and returns CUDALOAD_ERROR_SYMBOL_MISSING. The stubs call it when a function the
 *  headers declare is absent from the library they loaded (an older release). */
CUDALOAD_API cudaload_status cudaload_report_missing_symbol(cudaload_lib lib, const char *symbol);
/** Records in cudaload_last_error() that a call asking for lib came from foreign code that a load
 *  of this same thread is running (running: what that load was doing, e.g. "the first call of
 *  cublasLt's stub") and returns CUDALOAD_ERROR_REENTRANT. Takes no lock: the stubs call it when
 *  they refuse such a call. */
CUDALOAD_API cudaload_status cudaload_report_reentrant(cudaload_lib lib, const char *running);

/* ---- bundled kernels: SAXPY and SGEMM --------------------------------------------------- */

/* Which implementation runs cudaload_saxpy / cudaload_sgemm. */
typedef enum cudaload_backend {
    CUDALOAD_BACKEND_AUTO = 0,    /* the bundled kernels when the driver and GPU can run them,
                                     else cuBLAS (and the fallback is reported) */
    CUDALOAD_BACKEND_BUNDLED = 1, /* only the bundled kernels: an error when they cannot run */
    CUDALOAD_BACKEND_CUBLAS = 2   /* only cuBLAS (cublasSaxpy_v2 / cublasSgemm_v2) */
} cudaload_backend;

/* BLAS transpose flags for cudaload_sgemm (column-major, as in BLAS and cuBLAS). */
typedef enum cudaload_op {
    CUDALOAD_OP_N = 0, /* use the matrix as stored */
    CUDALOAD_OP_T = 1  /* use its transpose */
} cudaload_op;

/* What the bundled kernels are and whether they run on a device. */
typedef struct cudaload_kernels_info {
    size_t size;              /* set by the caller: sizeof(cudaload_kernels_info); any size from
                                 the first version's (this one) up is accepted */
    int built;                /* 1 when libcudaload was built with nvcc and embeds a fatbin */
    int toolkit_version;      /* CUDA version of the nvcc that built them (13000), 0 if not built */
    const char *sass_archs;   /* e.g. "75,80,86,89,90,100,120"; "" if not built */
    int ptx_arch;             /* the PTX embedded (the build's KERNEL_PTX: by default the lowest
                                 arch, e.g. 75; the python wheel's is its newest), 0 if none */
    size_t fatbin_bytes;      /* size of the fatbin (embedded, or in image_file) */
    /* per device (filled when device >= 0 and a driver is loaded): */
    int device;
    int cc_major, cc_minor;   /* compute capability of that device */
    int has_sass;             /* 1 when the fatbin has SASS for it */
    int would_jit;            /* 1 when only PTX covers it (JIT at first load) */
    cudaload_status runnable; /* OK when the bundled kernels can run there; else the reason,
                                 with the text in cudaload_last_error() */
    cudaload_backend last_backend; /* the backend the last call on this thread used */
    int last_device;          /* (0.3) the device the last call on this thread ran on; -1 if none */
    /* since 0.5 */
    const char *image_file;   /* NULL: the fatbin is embedded. Else the file it is read
                                 from at the first launch, relative to the directory of the
                                 library's own file: "lib/libcudaload.a" in the Python package's
                                 module, which shares the archive's copy */
} cudaload_kernels_info;

/** Sets the backend for later SAXPY/SGEMM calls of the whole process (default AUTO; the
 *  environment variable CUDALOAD_BACKEND=auto|bundled|cublas, validated by cudaload_init(),
 *  sets it unless this was called first). */
CUDALOAD_API cudaload_status cudaload_set_backend(cudaload_backend backend);

/** Fills *out: how the kernels were built and, for device (an ordinal; -1 for none),
 *  whether they can run there. Needs init for the device part. */
CUDALOAD_API cudaload_status cudaload_kernels_info_get(int device, cudaload_kernels_info *out);

/**
 * y = a*x + y on n floats in device memory, on stream (a cudaStream_t; NULL = the legacy
 * default stream), asynchronous like any launch. n == 0 is a no-op; n < 0 or a NULL pointer
 * is CUDALOAD_ERROR_INVALID_ARGUMENT. Launch errors come back as CUDALOAD_ERROR_CUDA with
 * the CUDA error name. Uses the backend chosen by cudaload_set_backend().
 *
 * Which device runs it: the device that owns the pointers (cudaMalloc, PyTorch, CuPy memory on
 * any device), whatever the current device is. Operands on two devices are
 * CUDALOAD_ERROR_DEVICE_MISMATCH (no peer access is used). Pointers no single device owns
 * (managed, host-mapped) follow the runtime's current device (cudaSetDevice). The stream
 * must belong to that device. docs/api.md, "Which device a call runs on".
 */
CUDALOAD_API cudaload_status cudaload_saxpy(long long n, float a, const float *x, float *y, void *stream);

/**
 * C = alpha * op(A) * op(B) + beta * C, column-major BLAS semantics: op(A) is m x k, op(B)
 * is k x n, C is m x n with leading dimension ldc >= max(1, m); lda >= max(1, rows of A
 * as stored: m for OP_N, k for OP_T), ldb likewise (k for OP_N, n for OP_T). When beta is 0
 * C is not read (NaN in C does not propagate). m, n or k == 0 follows BLAS (k == 0 scales C
 * by beta). m and n at most INT_MAX, k at most INT_MAX - 15 (the bundled kernels count k in
 * slices of up to 16 in 32 bits), on either backend; sizes are checked for overflow in 64 bits;
 * anything else is CUDALOAD_ERROR_INVALID_ARGUMENT. Device pointers, stream and the device
 * that runs it as for cudaload_saxpy.
 */
CUDALOAD_API cudaload_status cudaload_sgemm(cudaload_op transa, cudaload_op transb, long long m, long long n,
                                            long long k, float alpha, const float *A, long long lda,
                                            const float *B, long long ldb, float beta, float *C, long long ldc,
                                            void *stream);

#ifdef __cplusplus
}
#endif

#endif /* CUDALOAD_H */
