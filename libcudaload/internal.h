/* SPDX-License-Identifier: Apache-2.0 */
/*
 * internal.h -- shared state and the interfaces between the steps of the walk
 *
 *     config (options + environment) -> search (roots, candidate dirs; the places in order:
 *     walk_steps.c) -> open (ELF check, dlopen, reuse of a loaded copy: walk_file.c,
 *     platform_*.c) -> resolve (fill the X-macro tables) -> gate (driver version, majors the
 *     driver can run) -> walk.c (one library's walk, its step ended) -> cudaload.c (init, the
 *     public getters) -> kernels.c (launch)
 *
 * Nothing here is exported: every object is built with -fvisibility=hidden and only the
 * CUDALOAD_API functions of the public headers are visible.
 */
#ifndef CUDALOAD_INTERNAL_H
#define CUDALOAD_INTERNAL_H

#include "catalogue.h"
#include "api_rows.inc" /* cudaload_tables.h and the generated tables */

#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

struct cl_why;

/* Room for the catalogue's rows (catalogue.c checks its count against it at compile time). */
#define CL_CATALOGUE_MAX 96

/* The CUDA majors libcudaload knows, newest first (the order "newest the driver runs wins"), each
 * with the minimum Linux driver branch that runs it: X(major, branch). The one source of both:
 * the majors' list (search.c), the gate (gate.c) and the advice (advisor.c) read them from here. */
#define CL_CUDA_MAJORS(X) X(13, 580) X(12, 525)
#define CL_COUNT_MAJOR_(major, branch) +1
#define CL_MAX_MAJORS (0 CL_CUDA_MAJORS(CL_COUNT_MAJOR_))
/* CUDA majors libcudaload knows, newest first (search.c). */
extern const int cl_known_majors[CL_MAX_MAJORS];

/* Minimum Linux driver branch of a CUDA major (CL_CUDA_MAJORS), 0 for one not known. */
int cl_min_branch_for_major(int major);
/* The CUDA version a copy of row belongs to, from its version (a CUDA-numbered version call:
 * cudart, NVRTC, nvJitLink, nvFatbin), else 0. */
int cl_cuda_version_of(const cl_row *row, int version);
/* A version of row in one numbering for every row: major*10000 + minor*100 + patch (CUDA's
 * 13010 becomes 130100), and that written as "13.1" or "9.10.2" (advisor.c). */
int cl_version_triplet(const cl_row *row, int version);
void cl_version_text(int triplet, char *out, size_t n);

/* ---- growable string (errors, traces) ---- */
typedef struct cl_buf {
    char *data;
    size_t len, cap;
    int oom;
} cl_buf;
void cl_buf_printf(cl_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cl_buf_vprintf(cl_buf *b, const char *fmt, va_list ap);
const char *cl_buf_str(const cl_buf *b);
void cl_buf_free(cl_buf *b);
char *cl_strdup(const char *s);                /* NULL on OOM or NULL in */
char *cl_path_join(const char *a, const char *b); /* "a/b"; NULL on OOM */
int cl_file_exists(const char *dir, const char *name); /* dir/name is a regular file (links followed) */
char *cl_dir_of(const char *path);             /* the directory part of a path with a '/'; NULL if none or OOM */
/* Notes an allocation that failed during a walk (under the context's lock): cl_walk turns a
 * failed search that met one into OUT_OF_MEMORY instead of a misleading NOT_FOUND. */
void cl_oom(void);

/* ---- info structs with a size field (ABI growth) ----
 * The smallest size accepted for each: the struct as the first version shipped it. Later
 * versions append fields; an older caller's smaller struct gets only the prefix it has. */
#define CL_LIBRARY_INFO_SIZE_V1 offsetof(cudaload_library_info, details)
#define CL_CATALOGUE_INFO_SIZE_V1 offsetof(cudaload_catalogue_info, version_style) /* 0.2 as first landed */
#define CL_KERNELS_INFO_SIZE_V1 sizeof(cudaload_kernels_info)
#define CL_FIX_SIZE_V1 (offsetof(cudaload_fix, setting) + sizeof(const char *)) /* 0.3's: through setting */
/* Copies the filled struct full (of full_size bytes) into out, whose caller-set size is
 * out_size: the common prefix; bytes past full_size up to out_size (a newer caller's fields)
 * are zeroed; out's size field keeps the caller's value. */
void cl_info_copy_out(void *out, size_t out_size, const void *full, size_t full_size);

/* ---- per-thread error text and the debug trace (status.c) ---- */
void cl_set_error(const char *text);
void cl_set_errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cl_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- configuration: options merged with the environment (config.c) ---- */
typedef struct cl_config {
    char **caller_roots;
    size_t n_caller_roots;
    char **override_dirs;    /* CUDALOAD_PATH, options.lib_dirs */
    size_t n_override_dirs;
    char **driver_dirs;      /* CUDALOAD_DRIVER_DIRS: replaces the driver-like rows' system_dirs */
    size_t n_driver_dirs;
    int driver_dirs_set;     /* 1 when CUDALOAD_DRIVER_DIRS was given */
    char *file[CL_CATALOGUE_MAX];            /* exact-file overrides, absolute, by catalogue id */
    char *file_origin[CL_CATALOGUE_MAX];     /* "CUDALOAD_CUDART_PATH" / "options.cudart_path" */
    int floor[CL_CATALOGUE_MAX];             /* minimum version in the row's units (13010), 0: none */
    char *floor_origin[CL_CATALOGUE_MAX];    /* "CUDALOAD_MIN_CUDART" / "options.min_versions" */
    char *floor_req[CL_CATALOGUE_MAX];       /* the pip requirement that meets it ("nvidia-cuda-runtime>=13.1"), or NULL */
    int floor_major[CL_CATALOGUE_MAX];       /* the CUDA major of that requirement's package */
    int cuda_major;          /* 0, 12 or 13 */
    unsigned sources;        /* mask of CUDALOAD_SOURCE_BIT()s */
    unsigned flags;
    int secure;              /* AT_SECURE or CUDALOAD_FLAG_SECURE: no environment overrides */
    int backend;             /* CUDALOAD_BACKEND parsed at init (cudaload_backend), -1 when unset */
    int env_read;            /* CUDALOAD_* were read */
    int platform;            /* CUDALOAD_PLATFORM: CL_PLATFORM_AUTO (detected), _SBSA or _TEGRA */
    int compat_never;        /* CUDALOAD_COMPAT=never: no cuda-compat copy in place of the driver */
} cl_config;
#define CL_PLATFORM_AUTO 0
#define CL_PLATFORM_SBSA 1
#define CL_PLATFORM_TEGRA 2

/* Builds cfg from opts (may be NULL) and the environment. On a bad value returns
 * CUDALOAD_ERROR_INVALID_OPTION with the reason in *err. */
cudaload_status cl_config_build(cl_config *cfg, const cudaload_options *opts, cl_buf *err);
/* Frees what cl_config_build allocated (the library's own config lives for the process;
 * this is for tests and fuzzing). */
void cl_config_free(cl_config *cfg);
/* Parses a CUDALOAD_SOURCES-style comma list into a mask. */
cudaload_status cl_parse_sources(const char *text, unsigned *mask, cl_buf *err);
/* Reads an environment variable unless the configuration is secure; NULL when unset. */
const char *cl_config_env(const cl_config *cfg, const char *name);


/* ---- search: roots and candidate directories (search.c) ---- */
typedef struct cl_root {
    cudaload_root pub;       /* path, source, exists */
    char *canon;             /* realpath of the root (the path itself when it does not resolve):
                                what duplicates are compared on */
    char *prefix;            /* conda / CUDA_HOME: the install prefix this library dir is under */
    int prefix_first;        /* 1 on the first root of its prefix: the prefix's extra dirs
                                (nvvm/lib64, extras/CUPTI/lib64) are searched with it, once */
} cl_root;

typedef struct cl_roots {
    cl_root *items;
    cudaload_root *pub;      /* the public view, same order */
    size_t n, cap;
} cl_roots;

/* Builds the ordered, de-duplicated root list from the configuration and environment.
 * self_path is the file that embeds libcudaload (from dladdr), or NULL. */
cudaload_status cl_search_build_roots(cl_roots *roots, const cl_config *cfg, const char *self_path);
/* Frees a root list (tests and fuzzing; the library's own lives for the process). */
void cl_roots_free(cl_roots *roots);
/* The directories of a root that may hold a flavor of row, in the order tried: the flavor's
 * wheel dir (nvidia/cu13/lib, nvidia/cufft/lib), the root itself, then the row's dir under the
 * root's prefix (on the prefix's first root). Returns the count written (malloc'd strings). */
#define CL_MAX_DIRS 4
size_t cl_search_dirs(const cl_root *root, const cl_row *row, const cl_flavor *fl, char *dirs[CL_MAX_DIRS]);
/* The include directories that may hold row's header under a root, in order (malloc'd). */
size_t cl_search_include_dirs(const cl_root *root, const cl_row *row, char *dirs[CL_MAX_FLAVORS + 2]);
/* Finds soname the way ld.so would without loading it (find-only mode): LD_LIBRARY_PATH
 * (unless secure), /etc/ld.so.cache, the default directories. Returns a malloc'd path with
 * its symbolic links resolved (the file a real load maps, as cl_handle_path reports it). */
char *cl_search_system_path(const char *soname, int secure);
/* Looks soname up in an ld.so.cache image (the new format, alone or after the old table:
 * glibc's compat format) among this machine's entries; malloc'd path or NULL. Pure. */
char *cl_ldcache_lookup(const unsigned char *data, size_t size, const char *soname);
/* The same among the entries whose architecture flags (flags & 0xff00) are arch_flags. */
#define CL_LDCACHE_X8664_LIB64 0x0300   /* glibc's FLAG_X8664_LIB64 */
#define CL_LDCACHE_AARCH64_LIB64 0x0a00 /* glibc's FLAG_AARCH64_LIB64 */
char *cl_ldcache_lookup_arch(const unsigned char *data, size_t size, const char *soname, int arch_flags);

/* ---- the platform: the toolkit's targets/<triple> dirs (search.c) ---- */
#define CL_MACHINE_X86_64 62   /* EM_X86_64 */
#define CL_MACHINE_AARCH64 183 /* EM_AARCH64 */
#define CL_MAX_TRIPLES 2
/* The targets/<triple> names a prefix (conda, CUDA_HOME) is searched for on machine, in order:
 * x86_64-linux; on aarch64 sbsa-linux and aarch64-linux (Jetson/L4T), aarch64-linux first when
 * tegra. Returns the count. Pure. */
size_t cl_target_triples(int machine, int tegra, const char *out[CL_MAX_TRIPLES]);
/* 1 when the system under root ("/"; a crafted tree in tests) is a Tegra (Jetson, DRIVE):
 * root/etc/nv_tegra_release exists, or root/proc/device-tree/compatible names "nvidia,tegra".
 * *why: the finding, in words (static text). */
int cl_detect_tegra(const char *root, const char **why);
/* Tegra or not for the search: CUDALOAD_PLATFORM when set (cfg->platform), else detected under
 * "/" on aarch64; 0 on x86_64. */
int cl_search_tegra(const cl_config *cfg);
/* Returns the site-packages (or dist-packages) directory that contains path, or NULL. */
char *cl_site_packages_of(const char *path);

/* ---- the platform layer (platform.h: platform_posix.c, platform_windows.c) ---- */
#include "platform.h"

/* ---- resolve (resolve.c) ---- */
/* Fills the scratch table (cl_ctx.tables.scratch) for lib from handle: the hand-written lists'
 * entries (include/cudaload_tables.h), by dlsym, and for the driver cuDriverGetVersion and
 * cuGetProcAddress (foreign code: the walk calls it with the loader's lock let go,
 * cl_foreign_begin); the generated entries are left to cl_resolve_rest. Rows without a typed
 * table need their version call only (checked by cl_read_version). Returns OK, or SYMBOL_MISSING
 * with "<symbol> (<dlerror>)" in *why. The library's own table is not touched. */
cudaload_status cl_resolve_fill(cudaload_lib lib, void *handle, cl_buf *why);
/* Copies the scratch table cl_resolve_fill filled into lib's table (under the lock; never once the
 * table is published). */
void cl_resolve_commit(cudaload_lib lib);
/* The generated entries of lib's published table, resolved from its handle with no lock held
 * (dlsym, cuGetProcAddress: foreign code) into lib's slots of cl_ctx.tables.rest; the driver's
 * through cuGetProcAddress with driver_version, the version the walk recorded (not asked again).
 * Any number of threads may run it at once, a call back from its foreign code included: each
 * stores the same values. 0 when there is nothing more to fill (no typed table, or only the stable entries are
 * kept, cl_resolve_keep_stable). */
int cl_resolve_rest(cudaload_lib lib, void *handle, int driver_version);
/* Copies the rest area's entries into lib's table: under the lock, after cl_resolve_rest
 * returned 1 in this thread, before any caller was handed the table (cl_ctx.table_full). */
void cl_resolve_rest_commit(cudaload_lib lib);
/* The scratch copy of lib's table, as cl_resolve_fill left it (the driver's version call is made
 * through it before it is committed), or NULL for a row without a typed table. */
const void *cl_resolve_scratch(cudaload_lib lib);
/* Clears lib's table (a candidate was rejected after its table was committed). */
void cl_resolve_clear(cudaload_lib lib);
/* The CUDA major of the headers the generated lists come from (and libcudaload was built with). */
#define CL_HEADERS_MAJOR (CUDART_VERSION / 1000)
/* Leaves only the 0.2 entries of lib's table (their ABI is the same in CUDA 12 and 13): for a copy
 * of another CUDA major than the headers', whose other prototypes may differ (CUDA 12's
 * cudaGetDeviceProperties fills the pre-12 struct). */
void cl_resolve_keep_stable(cudaload_lib lib);
size_t cl_symbol_count(cudaload_lib lib);
int cl_symbol_info(cudaload_lib lib, size_t i, const char **name, int *required, int *present);
int cl_symbol_present(cudaload_lib lib, const char *name);
/* The library's static table (cudaload_*_table): its hand-written entries final once its step
 * completed, the rest once cl_ctx.table_full is set. */
const void *cl_table_ptr(cudaload_lib lib);

/* ---- gate (gate.c) ---- */
typedef struct cl_driver_facts {
    int loaded;
    int version;        /* cuDriverGetVersion, 0 unknown */
    char *branch;       /* "580.159.04" or NULL */
    int branch_major;   /* 580, 0 unknown */
} cl_driver_facts;

/* Parses the driver branch out of /proc/driver/nvidia/version text. Pure. Returns a
 * malloc'd "580.159.04" or NULL. */
char *cl_parse_proc_driver_version(const char *text, size_t n);
/* Reads the branch from /proc/driver/nvidia/version, else NVML (the catalogue's nvml row: beside
 * the driver at driver_path first, then its SONAME and system_dirs); malloc'd or NULL. */
char *cl_read_driver_branch(const char *driver_path);
/* Decides whether a runtime major may be used with the driver and the wanted major.
 * Returns OK, DRIVER_TOO_OLD or MAJOR_MISMATCH with the reason in *why. */
cudaload_status cl_gate_major(const cl_driver_facts *drv, int wanted_major, int major, struct cl_why *why);
/* Reads a loaded library's version the way its row says (catalogue.h: cl_version_kind).
 * OK with *version (0 for CL_VERSION_NONE); SYMBOL_MISSING when the version call is absent;
 * CUDA when it failed. *why gets the call's name and error. */
cudaload_status cl_read_version(const cl_row *row, void *handle, int *version, cl_buf *why);

/* ---- why: a reason code and its parameters (advisor.c renders them) ---- */
typedef struct cl_why {
    cudaload_reason reason;
    int major, value, needed;
    cl_buf text;             /* the text parameter */
} cl_why;
void cl_why_set(cl_why *w, cudaload_reason reason, int major, int value, int needed, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
void cl_why_free(cl_why *w);

/* ---- the context: every piece of the loader's state, in one struct (cudaload.c owns it) ---- */
typedef struct cl_lib_state {
    cudaload_status status;
    int attempted;
    int loaded;
    int finished;            /* its load step ended: status final, message made, table published
                                when loaded; never changes after */
    int found;               /* its find-only step ended (status, path located, nothing loaded):
                                a later load searches it again, as if never searched */
    int busy;                /* a file of it is being tried (its dependencies are being taken) */
    void *handle;
    char *path;
    const char *soname;
    cudaload_source source;
    int already_loaded;
    int major;
    int version;
    long root_index;         /* root it came from, -1 for loaded/override/system */
    cudaload_candidate *cands;
    cudaload_candidate_detail *details; /* parallel to cands */
    size_t n_cands, cap_cands;
    char *error;             /* the step's message when status != OK */
    char *note;              /* why an exact file given by env/options was not used */
} cl_lib_state;

/* The typed tables (resolve.c), one per catalogue row with API headers (api_rows.inc,
 * generated): the hand-written entries filled in scratch by the walk and committed whole, the
 * generated ones added when the table is first asked for; never changed once handed out. */
#define CL_TABLE_FIELD_(row, id) cudaload_##id##_table id;
typedef struct cl_tables_only { CL_API_ROWS(CL_TABLE_FIELD_) } cl_tables_only; /* its size, for rest */
typedef struct cl_tables {
    CL_API_ROWS(CL_TABLE_FIELD_) /* first: an entry's slot in rest is its offset here / sizeof(void *) */
    /* the generated entries as cl_resolve_rest finds them, before they are committed */
    _Atomic(void *) rest[sizeof(cl_tables_only) / sizeof(void *)];
    unsigned char stable_only[CL_CATALOGUE_MAX]; /* another major than the headers': no generated entries */
    union { /* as large as the largest table, aligned for function pointers */
        CL_API_ROWS(CL_TABLE_FIELD_)
    } scratch;
} cl_tables;

/* The bundled kernels on one device (kernels_device.c). Prepared once, outside every lock (it runs
 * the driver: cuInit, the module load); read without the lock once ready is set. */
#define CL_MAX_DEVICES 64
/* The SGEMM tiles of kernels/sgemm.cu, one row each, which drives the kernels' names
 * (kernels_device.c) and the plan's choice (sgemm_plan.c): X(name, tile rows, tile columns, k per slice (BK), threads, blocks per SM, vec: needs
 * the operands contiguous along m or n 16-byte aligned with leading dimensions that are
 * multiples of 4, kv: the same of those contiguous along k, and k a multiple of 4, weighed: the
 * plan weighs it against the others (0: taken only as another tile's wide or one_wave), wide:
 * the tile of twice the columns that takes a split product when its blocks, split the same way,
 * still fill one wave, one_wave: the tile that takes an unsplit product of one wave when it puts
 * no more work on an SM (for each, the tile's own name: none), then its speed in each transpose
 * case NN, NT, TN, TT as a percentage of cuBLAS's at 4096^3 on the H100 (the 256x128k and
 * 128x128k16 tiles: on the H200; bench/sgemm_tune.cu; 0: not built for that case)). The plan's
 * cost model is docs/kernels.md's. */
#define CL_SGEMM_TILES(X)                                                        \
    X(256x128, 256, 128, 8, 256, 1, 1, 0, 1, 256x128, 256x128, 105, 105, 0, 0)   \
    X(256x128k, 256, 128, 8, 256, 1, 1, 1, 1, 256x128k, 256x128k, 0, 0, 101, 0)  \
    X(128x128k, 128, 128, 8, 128, 2, 1, 1, 1, 128x128k, 128x128k, 0, 0, 100, 0)  \
    X(128x128k16, 128, 128, 16, 128, 2, 1, 1, 1, 128x128k16, 128x128k16, 0, 0, 0, 104) \
    X(128x128, 128, 128, 8, 256, 2, 0, 0, 1, 128x128, 256x128a, 99, 97, 91, 100) \
    X(128x64, 128, 64, 16, 128, 2, 1, 0, 1, 128x128v, 128x64, 100, 105, 0, 0)    \
    X(128x128v, 128, 128, 8, 128, 2, 1, 0, 1, 128x128v, 128x128v, 99, 0, 0, 0)   \
    X(256x128a, 256, 128, 8, 256, 1, 0, 0, 0, 256x128a, 256x128a, 98, 0, 0, 0)   \
    X(64x64, 64, 64, 8, 128, 4, 0, 0, 1, 64x64, 64x64, 73, 78, 67, 76)
#define CL_SGEMM_TILE_ENUM_(name, ...) CL_SGEMM_TILE_##name,
enum { CL_SGEMM_TILES(CL_SGEMM_TILE_ENUM_) CL_SGEMM_TILE_COUNT };
/* the kernels: SAXPY's two, the split-k reduction, and 4 transpose cases per tile (a case the
 * tile is not built for, speed 0, has no name and no function) */
#define CL_KERNEL_COUNT (3 + 4 * CL_SGEMM_TILE_COUNT)
/* The kernels of the fatbin, by the name the loader asks for (kernels_device.c: cl_kernel_names):
 * CL_K_SGEMM_FIRST + 4 * tile + 2 * ta + tb for the product kernels. */
enum { CL_K_SAXPY_VEC4, CL_K_SAXPY_SCALAR, CL_K_SGEMM_SPLITK_REDUCE, CL_K_SGEMM_FIRST, CL_K_COUNT = CL_KERNEL_COUNT };
extern const char *const cl_kernel_names[CL_K_COUNT];
/* A row of CL_SGEMM_TILES as the plan reads it (sgemm_plan.c: cl_sgemm_tiles). */
typedef struct cl_sgemm_tile {
    int bm, bn, threads, per_sm, vec, kv;
    int weighed;  /* the plan weighs it (0: only moved to, as a wide or one_wave tile) */
    int wide;     /* CL_SGEMM_TILE_*: the tile a split product moves to, itself for none */
    int one_wave; /* CL_SGEMM_TILE_*: the tile an unsplit product of one wave moves to, itself for none */
    int speed[4]; /* NN, NT, TN, TT: percent of cuBLAS, 0: not built */
} cl_sgemm_tile;
extern const cl_sgemm_tile cl_sgemm_tiles[CL_SGEMM_TILE_COUNT];
#define CL_BLAS_POOL 16
typedef struct cl_device_kernels {
    atomic_int ready; /* set (release) once the fields below are final: OK, or a permanent
                         failure (cl_cu_permanent); never written again after that */
    int preparing;    /* a thread is preparing the device; others wait on the kernels' cv */
    cudaload_status status;
    char *error;
    int cc_major, cc_minor, sms;
    int has_sass, would_jit;
    CUcontext ctx;
    CUmodule module;
    CUfunction fn[CL_KERNEL_COUNT];
    CUmemoryPool pool; /* SGEMM's scratch (kernels_device.c: cl_scratch_pool), or NULL */
    int dependent_launch; /* the split-k sum is launched as a programmatic dependent of the partial
                             products' kernel (sm_90 and up, a driver with cuLaunchKernelEx) */
    const cudaload_driver_table *drv; /* the driver's table, once prepared: the calls take it from
                                         here, not through cudaload_driver() (the driver is loaded
                                         once and its table never moves) */
    /* cuBLAS fallback: handles made on this device and idle. A call takes one out for itself
     * (a handle's stream is state) and gives it back; up to CL_BLAS_POOL are kept. */
    cublasHandle_t blas_idle[CL_BLAS_POOL];
    int n_blas_idle;
} cl_device_kernels;

/* The sizes the bundled kernels take (kernels/sgemm.cu), checked by cudaload_sgemm for every
 * backend. m, n: at most INT_MAX (the kernels' row and column indices are 32-bit; the tiles'
 * sides are powers of 2 up to 256, so a tile's last row, m rounded up to a tile, less 1, is at
 * most INT_MAX too). k: at most INT_MAX less 15: a block counts its k in slices of BK (at most
 * 16) in 32 bits, and k rounded up to a slice must fit (beyond it the count wraps negative and
 * the product is never summed: C would silently become beta * C). */
#define CL_SGEMM_K_MAX 2147483632 /* INT_MAX - 15 */
/* The grid's y and z dimensions hold at most 65535 blocks (x: 2^31 - 1). */
#define CL_GRID_Y_MAX 65535LL
/* The blocks of one launch of a product kernel: the tiles that take theirs in groups along the
 * columns number a block by blockIdx.x + blockIdx.y * gridDim.x in 32 bits (kernels/sgemm.cu). */
#define CL_SGEMM_LAUNCH_BLOCKS_MAX 4294967295LL
/* At most this much scratch per call: beyond it no split (never more memory than a caller could
 * expect from a GEMM). */
#define CL_SCRATCH_MAX (1ULL << 30)

/* How cl_sgemm_bundled runs a product: the tile, split k, the launches. */
typedef struct cl_sgemm_plan {
    int tile;                   /* CL_SGEMM_TILE_* */
    long long tiles_m, tiles_n; /* its tiles along m and n: the grid's x, and y over all launches */
    long long launch_n;         /* tiles of columns per launch (the grid's y; the last launch may take
                                   fewer): tiles_n, else at most 65535 and tiles_m * launch_n at most
                                   CL_SGEMM_LAUNCH_BLOCKS_MAX */
    int splits, kc;             /* split k: splits slices of kc (a multiple of 16), else 1 and k */
    size_t bytes_w;             /* the partial products' scratch (a multiple of 256), else 0 */
} cl_sgemm_plan;

/* The plan of C = op(A) op(B) (m x n, k deep) through the bundled kernels on a device of sms
 * SMs; scratch: the device has a pool for partial products (sgemm_plan.c). Pure. */
void cl_sgemm_plan_make(cl_sgemm_plan *p, int scratch, long long sms, int ta, int tb, long long m, long long n, int k,
                        const float *A, long long lda, const float *B, long long ldb);
/* The same by weighing every tile, without cl_sgemm_plan_make's shortcut for small products
 * (exposed for the test that the two agree). */
void cl_sgemm_plan_weigh(cl_sgemm_plan *p, int scratch, long long sms, int ta, int tb, long long m, long long n, int k,
                         const float *A, long long lda, const float *B, long long ldb);

/* The launch step's state (kernels*.c, cublas_pool.c). Its own lock, never held across foreign code: a launch
 * must not wait for a search; the lock only guards the fields, and it is taken before the
 * loader's where both are held (cl_backend_now). */
typedef struct cl_kernels_state {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* a device's preparation ended */
    pthread_once_t atfork_once;
    cl_device_kernels dev[CL_MAX_DEVICES];
    atomic_int backend; /* the cudaload_backend + 1; 0 until chosen (cudaload_set_backend, else
                           CUDALOAD_BACKEND as validated by init, read at the first call) */
    atomic_int ndev;    /* the devices the driver reports, once a call asked (0: not known) */
} cl_kernels_state;

/* A find-only answer a load replaced (walk.c cl_unfind): kept for the process, as readers may
 * hold its path and candidates (cudaload_get_library_info). */
struct cl_retired {
    struct cl_retired *next;
    cudaload_candidate *cands;
    cudaload_candidate_detail *details;
    char *path, *error, *note;
};

/* A toolkit part's search (toolkit.c): final once attempted. */
#define CL_PART_MAX 32
typedef struct cl_part_state {
    int attempted;
    cudaload_status status;
    char *path;
    cudaload_source source;
    int major;
    int cuda_version;        /* nvcc: the release it reports, else 0 */
    long root_index;         /* the root it came from; -1 for the system */
    cudaload_candidate *cands;
    cudaload_candidate_detail *details;
    size_t n_cands, cap_cands;
    char *error;             /* the message when status != OK */
} cl_part_state;

/* A toolkit root answered (toolkit.c), kept for the process: callers hold its path. */
struct cl_toolkit_answer {
    struct cl_toolkit_answer *next;
    char *dir;               /* the dir asked for, NULL for the default cache */
    cudaload_status status;
    char *root;              /* the answer, or NULL */
    char *top;               /* nvcc's site-packages or prefix */
    char *nvcc;
    int cuda_version, headers_version;
    cudaload_candidate *cands; /* the check: a part, nvcc's profile, a header each */
    cudaload_candidate_detail *details;
    size_t n_cands, cap_cands;
    char *error;
};

/* A file cudaload_preload loaded beside its library (a catalogue row's companions), kept open for
 * the process (preload.c). */
struct cl_companion {
    struct cl_companion *next;
    char *path;
    const char *name;        /* its file name, in path */
    cudaload_source source;
    void *handle;
};

typedef struct cl_context {
    pthread_mutex_t mu;      /* context.c's fork handler knows whether its thread holds it;
                                never held across foreign code (cl_foreign_begin) */
    pthread_cond_t walk_cv;  /* the walk in progress ended */
    int walking;             /* a thread runs init or a load (one at a time; others wait on walk_cv) */
    int walk_find_only;      /* that walk is a find-only one (cudaload_find_library) */
    struct cl_retired *retired;
    int done;
    cudaload_status status;
    char *error;
    cl_config cfg;
    cl_roots roots;
    cl_driver_facts drv;
    int major_pin;           /* the CUDA major of the process, once a library of a known major was taken */
    cl_lib_state lib[CL_CATALOGUE_MAX];
    char *include_dir[CL_CATALOGUE_MAX]; /* cudaload_include_dir's answers */
    cl_part_state part[CL_PART_MAX];      /* cudaload_part's searches */
    struct cl_toolkit_answer *toolkit;    /* cudaload_toolkit_root's answers */
    struct cl_companion *companions;      /* cudaload_preload's companion files */
    int devices_done;
    cudaload_status devices_status;
    int devices_cu_result;   /* the CUresult behind a CUDALOAD_ERROR_CUDA devices_status, else 0 */
    int device_count;
    char *devices_error;
    atomic_int table_ready[CL_CATALOGUE_MAX]; /* set (release) once a row's step published its table */
    atomic_int table_full[CL_CATALOGUE_MAX];  /* set (release) once its generated entries are in too:
                                                 only then is the table handed to a caller */
    cl_tables tables;        /* resolve.c */
    cl_kernels_state kernels;/* the launch step (kernels*.c, cublas_pool.c) */
    /* status.c: the per-thread message's key, and the trace switch (set by config.c) */
    pthread_once_t error_once;
    pthread_key_t error_key;
    int error_key_ok;
    int debug;               /* the trace: 0 off, 1 on, 2 with times (CUDALOAD_DEBUG=time) */
    double debug_t0;         /* when init's configuration began (cl_plat_now_us), for debug 2 */
    unsigned long n_oom;     /* allocations that failed under the lock (cl_oom): a walk that saw one
                                and found nothing ends OUT_OF_MEMORY */
} cl_context;

/* ---- the context (context.c): the bottom of the library, calling nothing above it ---- */
extern cl_context cl_ctx;
/* The context's lock: every call that reads or changes the context. */
void cl_lock(void);
void cl_unlock(void);
/* Registers the loader's pthread_atfork handler (once); kernels_device.c registers its own after it,
 * so that fork takes the kernels' lock before the loader's (the order the code nests them). */
void cl_atfork_init(void);
/* Foreign code run by the walk (dlopen and its constructors, dlclose, dlsym, a version call,
 * cuDriverGetVersion, NVML): called by the walking thread with the lock held; the lock is let go
 * until cl_foreign_end. lib is the library whose code runs (-1: none of the catalogue), call
 * what runs (static text): a call back into a load from that code is refused with
 * CUDALOAD_ERROR_REENTRANT, and its message names them. */
void cl_foreign_begin(int lib, const char *call);
void cl_foreign_end(void);
/* Who walks (cl_ctx.walking), the lock held. cl_walk_is_mine: 1 when this thread runs the walk
 * (the caller is foreign code's call back into it), with the library and the call of the foreign
 * code running now (-1 and NULL between them); cl_walk_wait_others: waits until no thread walks
 * (the lock let go meanwhile; never called by the walking thread); cl_walk_begin/_end: this
 * thread's walk (find_only: a find-only one). */
int cl_walk_is_mine(int *lib, const char **call);
void cl_walk_wait_others(void);
void cl_walk_begin(int find_only);
void cl_walk_end(void);
/* The CUDALOAD_BACKEND of the completed init (a cudaload_backend), -1 when unset or before init. */
int cl_config_backend(void);

/* ---- the walk (walk.c): one library, by the one walking thread (cl_ctx.walking) ---- */
/* Searches lib (dependencies first) and ends its step: status, message, table published (the
 * driver's by init, after the cuda-compat decision). Called with the lock held; the lock is let
 * go around foreign code only. */
cudaload_status cl_walk(int lib);
/* Forgets lib's search (candidates, message) so that it can be searched again: a runtime skipped
 * for a driver that cl_use_compat then replaced. Only for a library nothing was kept of. */
void cl_lib_forget(int lib);
/* Forward compatibility (cuda_compat.c), after init's walk: cl_use_compat takes a cuda-compat
 * libcuda in place of the system's driver where that driver does not run the runtime found (1
 * when it did; the runtime, if skipped, is then searched again after cl_lib_forget);
 * cl_note_compat records the other copies as the driver's candidates, each with why it is not
 * the one running. */
int cl_use_compat(void);
void cl_note_compat(void);
/* Test seams (walk_file.c): when set, called with a candidate's path once its dependencies are
 * taken (after its file check), just before its dlopen and just after it (a test swaps the file
 * there to prove that the mapped file is the one checked). NULL in normal use. */
extern void (*cl_test_before_dlopen)(const char *path);
extern void (*cl_test_during_deps)(const char *path);
extern void (*cl_test_after_dlopen)(const char *path);
/* Publishes a finished library's table for the lock-free accessors. */
void cl_publish_table(int lib);

/* Appends a candidate (path, source, result, and w's reason rendered) to a candidate list:
 * the libraries' (candidates.c) and the toolkit parts' (toolkit.c). Returns its index, or -1
 * when out of memory (noted by cl_oom). */
long cl_cands_add(cudaload_candidate **cands, cudaload_candidate_detail **details, size_t *n, size_t *cap,
                  const char *path, cudaload_source source, cudaload_status result, const cl_why *w);

/* ---- the walk's own parts, shared by its files (walk*.c, candidates.c, driver_like.c,
 * cuda_compat.c); all of them run on the walking thread with the lock held ---- */
static inline const cl_row *cl_row_of(int lib) { return cl_row_at((size_t)lib); }
/* walk.c: lib's step ended, a load's (finished) or a find's (found): no walk searches it again,
 * but a load that forgets a find first; and whether this walk only locates files
 * (CUDALOAD_FLAG_FIND_ONLY, cudaload_find_library) */
int cl_step_ended(int lib);
int cl_find_only(void);

/* candidates.c: lib's candidate list. cl_record records one (its index, or -1 out of memory);
 * cl_record_code one whose reason has no parameter but the major; cl_record_rewrite makes
 * candidate i say something else (a copy taken, then let go). */
long cl_record(int lib, const char *path, cudaload_source source, cudaload_status result, const cl_why *w);
long cl_record_code(int lib, const char *path, cudaload_source source, cudaload_status result, cudaload_reason reason,
                    int major);
void cl_record_rewrite(int lib, size_t i, cudaload_status result, const cl_why *w);
int cl_already_candidate(int lib, const char *path);
/* 1 when path is too long for the system (recorded PATH_TOO_LONG, once); a path a directory on
 * the way keeps from being looked at is recorded UNSEARCHABLE */
int cl_path_too_long(int lib, const char *path, cudaload_source source, int major);
void cl_note_unsearchable(int lib, const char *path, cudaload_source source);
/* lib's note "<origin>=<path> cannot be used: <reason>": an exact file given for it failed */
void cl_set_note(int lib, const char *origin, const char *path, const char *reason);

/* walk_file.c: one file. The foreign code of the walk, each with the lock let go: dlopen of
 * path, of a copy already loaded (RTLD_NOLOAD, *real: its path), dlclose, and lib's table filled
 * in scratch. */
void *cl_dlopen(int lib, const char *path, cl_buf *why);
void *cl_dlopen_loaded(int lib, const char *soname, char **real);
void cl_dlclose(int lib, void *h);
cudaload_status cl_fill_scratch(int lib, void *h, cl_buf *why);
/* The SONAME of lib's flavor for major (the newest flavor's when major is 0 or unknown). */
const char *cl_flavor_soname(int lib, int major);
/* Keeps a copy of lib (h NULL for find-only: located, not loaded); a known major pins the
 * process's major. */
void cl_take(int lib, void *h, const char *path, const char *soname, cudaload_source source, int already, int major,
             int version, long root_index);
/* The gates: a major (asked for, what the driver runs, the process's once pinned; nothing
 * recorded), the same recording the skip of path, the caller's floor; and the post-open checks
 * of a handle (table, version, major, floor; the table committed when they pass). */
cudaload_status cl_major_check(int lib, int major, cl_why *w);
cudaload_status cl_major_gate(int lib, const char *path, cudaload_source source, int major);
cudaload_status cl_floor_check(int lib, int major, int version, cl_why *w);
cudaload_status cl_accept_handle(int lib, void *h, int *major, int *version, cl_why *w);
/* Tries one file for lib (file check, dependencies, dlopen, table, gates); records it either way.
 * major 0: neither the name nor the directory tells it, the version then decides. */
cudaload_status cl_try_file(int lib, const char *path, cudaload_source source, int major, long root_index);

/* walk_deps.c: the dependencies taken for one candidate, let go again when the candidate fails */
typedef struct cl_dep_list {
    int lib[2 * CL_MAX_DEPS];
    size_t n;
} cl_dep_list;
/* Takes every dependency of a candidate of lib at path (required then optional): a required one
 * that fails fails the candidate (recorded, with what was taken for it let go). */
cudaload_status cl_take_deps(int lib, const char *path, cudaload_source source, int major, long root_index,
                             cl_dep_list *taken);
/* Lets go of a dependency taken for a library that could not be used (never one loaded before),
 * and of every dependency in taken. */
void cl_drop_dep(int dep, cudaload_status why_st, const char *for_name);
void cl_drop_deps(cl_dep_list *taken, cudaload_status st, int lib);

/* walk_majors.c: the major of a file by its DT_SONAME (or name); of a file found in dir under a
 * root (0 when nothing tells); the majors lib is searched in, newest first (the pinned one only,
 * once pinned). */
int cl_major_of_file(int lib, const char *path);
int cl_major_in_dir(const cl_row *row, const cl_flavor *fl, const char *root, const char *dir);
size_t cl_majors_for(int lib, int majors[CL_MAX_FLAVORS]);

/* walk_steps.c: the places, in order. cl_try_loaded: 1 when a copy in the process decided
 * (taken, or refused); cl_note_loaded_over_exact records an exact file such a copy won over;
 * cl_try_exact: the exact file, or OVERRIDE_UNUSABLE; cl_try_root, cl_try_system: 1 when a copy
 * was taken there; cl_system_take: dlopen by SONAME (located only, for find-only). */
int cl_try_loaded(int lib);
void cl_note_loaded_over_exact(int lib);
cudaload_status cl_try_exact(int lib);
int cl_try_root(int lib, size_t r);
int cl_try_system(int lib, int major);
cudaload_status cl_system_take(int lib, int major, const char *soname);

/* driver_like.c: the walk of a driver-like row (the system only); a driver-like copy's table
 * filled and checked (the driver's version in *version), and kept (the driver's facts set). */
cudaload_status cl_walk_driver_like(int lib);
cudaload_status cl_driver_usable(int lib, void *h, const char *where, cudaload_source source, int *version);
void cl_driver_take(int lib, void *h, const char *where, cudaload_source source, int version);

/* ---- the advisor (advisor.c): text, rendered once from codes ---- */
/* The text of a candidate's reason from its code and parameters. */
void cl_render_reason(const cudaload_candidate_detail *d, const char *text, cl_buf *out);
/* The message of a library whose step failed: every candidate, the roots, and the fixes. */
void cl_describe_failure(int lib, cl_buf *out);
/* The same as one line, no newline: the file names, the top reason (not found and where, a
 * wrong major, the driver too old, no driver) and the first fix; a failed dependency's own line
 * (depth: how deep that went already). cudaload_failure_line, which the stubs print. */
void cl_describe_failure_line(int lib, cl_buf *out, int depth);
/* The message of a call refused with CUDALOAD_ERROR_REENTRANT: asked (a catalogue id, or -1 for
 * cudaload_init) was called from the foreign code call of lib (-1: none) that a load by this
 * thread runs. */
void cl_describe_reentrant(int asked, int lib, const char *call, cl_buf *out);

/* ---- launch (kernels.c: the public calls; sgemm_plan.c, kernels_device.c, kernels_launch.c,
 * cublas_pool.c) ---- */
/* p is not aligned to a (a power of 2) */
static inline int cl_misaligned(const void *p, size_t a) { return ((uintptr_t)p & (a - 1)) != 0; }

/* kernels_device.c: the launch step's lock (cl_ctx.kernels.mu; its fork handler registered on
 * first use); how the kernels were built, into info; dev's kernels, prepared on first use (OK,
 * or why they cannot run, its text set); a CUDA error's name */
void cl_klock(void);
void cl_kunlock(void);
void cl_kernels_build_info(cudaload_kernels_info *info);
cudaload_status cl_device_ready(int dev);
const char *cl_cu_name(const cudaload_driver_table *d, CUresult r);

/* kernels_image.c: the bundled kernels' fatbin, its size (0 when there are none), the file it is
 * read from (relative to the library's directory; NULL: embedded), and the fatbin for
 * cuModuleLoadData: embedded, or read from its file and checked (the Python package's module);
 * release it after the load. OK, or KERNELS_NOT_BUILT, KERNELS_FILE or OUT_OF_MEMORY with why. */
size_t cl_kernels_image_bytes(void);
const char *cl_kernels_image_file(void);
cudaload_status cl_kernels_image_get(const void **image, cl_buf *why);
void cl_kernels_image_release(const void *image);

/* kernels_launch.c: the device a call of fn runs on (the one owning its n pointers, named for the
 * message; else the runtime's current one); dev's primary context made current where another is
 * (*pushed: cl_ctx_leave pops it); kernel `which` launched on dev, in its context (cl_launch_in),
 * as a programmatic dependent of the kernel before it where the device allows it
 * (cl_launch_dependent), or without asking which context is current first (cl_launch) */
cudaload_status cl_call_device(const char *fn, const void *const *ptrs, const char *const *names, int n, int *dev);
cudaload_status cl_ctx_enter(const cudaload_driver_table *d, int dev, const char *what, int *pushed);
void cl_ctx_leave(const cudaload_driver_table *d, int pushed);
cudaload_status cl_launch_in(const cudaload_driver_table *d, int dev, int which, unsigned gx, unsigned gy, unsigned gz,
                             unsigned block, void **args, void *stream);
cudaload_status cl_launch_dependent(const cudaload_driver_table *d, int dev, int which, unsigned gx, unsigned block,
                                    void **args, void *stream);
cudaload_status cl_launch(int dev, int which, unsigned gx, unsigned gy, unsigned block, void **args, void *stream);

/* cublas_pool.c: dev made current for cuBLAS (*prev: the device to go back to, or -1), and back;
 * a handle of dev for one call on stream, taken from the pool or made, and given back; a cuBLAS
 * status as libcudaload's (its text set) */
cudaload_status cl_blas_enter(int dev, int *prev);
void cl_blas_leave(int prev);
cudaload_status cl_blas_take(int dev, void *stream, const struct cudaload_cublas_table **out, cublasHandle_t *h);
void cl_blas_give(int dev, const struct cudaload_cublas_table *b, cublasHandle_t h);
cudaload_status cl_blas_status(const struct cudaload_cublas_table *b, cublasStatus_t s, const char *what);

/* The kernel gate, pure: can kernels built by toolkit_version with SASS for sass_archs
 * ("75,80,...") and PTX for ptx_arch run on a cc_major.cc_minor device under a driver of
 * driver_version? OK, KERNELS_NOT_BUILT, DRIVER_TOO_OLD or NO_KERNEL_IMAGE with the reason. */
cudaload_status cl_kernels_gate(int built, int toolkit_version, const char *sass_archs, int ptx_arch, int driver_version,
                                int cc_major, int cc_minor, int *has_sass, int *would_jit, cl_buf *why);

/* 1 when a CUDA error will not go away by asking again (no image for this GPU, invalid device,
 * no device, not supported, the stub library, ...); 0 for a transient one (out of memory, not
 * ready, launch timeout, unknown codes). What kernels_device.c and cudaload_device_count keep. */
int cl_cu_permanent(CUresult r);

/* The cuBLAS table for the SAXPY/SGEMM fallback: loads cuBLAS on first use and returns
 * cudaload_load_cublas()'s own status when it cannot be had (never a blanket NOT_FOUND). The
 * table type is in cudaload_tables.h, hence the struct tag. */
struct cudaload_cublas_table;
cudaload_status cl_kernels_cublas(const struct cudaload_cublas_table **out);

/* cudaload_saxpy after its argument checks, on device dev (0 <= dev < 64) instead of the
 * device the pointers choose: the path the tests drive with the fake driver, where no real
 * runtime can run. */
cudaload_status cl_kernels_saxpy_on(int dev, long long n, float a, const float *x, float *y, void *stream);

#endif /* CUDALOAD_INTERNAL_H */
