/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gate.c -- step 4 of the walk: what the driver can run.
 *
 * cuDriverGetVersion() gives the CUDA API level of the driver (12040 = 12.4), which decides
 * the runtime majors it can run: a runtime of a newer major than the driver's fails every
 * call with cudaErrorInsufficientDriver (35), so such a candidate is skipped before it is
 * loaded. The driver branch (580.159.04) comes from /proc/driver/nvidia/version, or NVML
 * where /proc has no such file (some containers); it is reported and checked against the
 * documented minimum branch of each major.
 */
#define _GNU_SOURCE
#include "cudaload_tables.h"
#include "internal.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cl_min_branch_for_major(int major) {
    switch (major) {
#define CL_BRANCH_CASE_(m, branch) case m: return branch;
        CL_CUDA_MAJORS(CL_BRANCH_CASE_)
#undef CL_BRANCH_CASE_
    default: return 0;
    }
}

int cl_cuda_version_of(const cl_row *row, int version) {
    if (row->flags & CL_ROW_DRIVER_LIKE) return 0;
    return row->version_kind == CL_VERSION_CUDA || row->version_kind == CL_VERSION_MAJMIN ? version : 0;
}

int cl_version_triplet(const cl_row *row, int version) {
    int cuda = row->version_kind == CL_VERSION_CUDA || row->version_kind == CL_VERSION_MAJMIN;
    return cuda ? version / 1000 * 10000 + version % 1000 / 10 * 100 : version;
}

/* A token of the form D+.D+ or D+.D+.D+ (a driver version such as 580.159.04). */
static int cl_is_version_token(const char *s, size_t n) {
    int dots = 0;
    if (n == 0 || n > 31 || s[0] < '0' || s[0] > '9' || s[n - 1] == '.') return 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '.') {
            if (s[i - 1] == '.') return 0;
            dots++;
        } else if (s[i] < '0' || s[i] > '9') {
            return 0;
        }
    }
    return dots >= 1 && dots <= 2;
}

char *cl_parse_proc_driver_version(const char *text, size_t n) {
    static const char key[] = "NVRM version:";
    const char *end = text + n;
    for (const char *line = text; line < end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        const char *lend = nl ? nl : end;
        if ((size_t)(lend - line) >= sizeof key - 1 && memcmp(line, key, sizeof key - 1) == 0) {
            const char *p = line + sizeof key - 1;
            while (p < lend) {
                while (p < lend && (*p == ' ' || *p == '\t')) p++;
                const char *tok = p;
                while (p < lend && *p != ' ' && *p != '\t') p++;
                if (cl_is_version_token(tok, (size_t)(p - tok))) return strndup(tok, (size_t)(p - tok));
            }
            return NULL;
        }
        line = nl ? nl + 1 : end;
    }
    return NULL;
}

/* NVML fallback: only reached when /proc/driver/nvidia/version is absent. */
/* NVML, from the catalogue's nvml row: beside the driver taken first (the driver's directory holds
 * both on every install: /usr/lib/wsl/lib, /run/opengl-driver/lib, a container's mount), then by
 * its SONAME, then the row's system_dirs. NULL when none opens. */
static void *cl_open_nvml(const char *driver_path) {
    int lib = cl_catalogue_find("nvml");
    const cl_row *row = lib >= 0 ? cl_row_at((size_t)lib) : NULL;
    if (!row) return NULL;
    const char *soname = row->flavor[0].soname;
    void *h = NULL;
    cl_buf why = {0};
    /* every path through cl_path_join: never truncated; NULL (out of memory) is a place not tried */
    char *dir = driver_path ? cl_dir_of(driver_path) : NULL;
    char *path = dir ? cl_path_join(dir, soname) : NULL;
    if (path && strlen(path) < CL_PATH_LIMIT) h = cl_open_path(path, &why);
    free(path);
    free(dir);
    if (!h) h = cl_open_path(soname, &why);
    const char *p = row->system_dirs;
    char word[256];
    while (!h && cl_row_next_word(&p, word, sizeof word)) {
        path = cl_path_join(word, soname);
        if (path) h = cl_open_path(path, &why);
        free(path);
    }
    cl_buf_free(&why); /* NVML is optional: the branch is then unknown */
    return h;
}

static char *cl_branch_from_nvml(const char *driver_path) {
    void *h = cl_open_nvml(driver_path);
    if (!h) return NULL;
    typedef int (*init_fn)(void);
    typedef int (*version_fn)(char *, unsigned int);
    init_fn init, shutdown;
    version_fn get_version;
    void *p;
    char *branch = NULL;
    if ((p = cl_plat_sym(h, "nvmlInit_v2", NULL))) memcpy(&init, &p, sizeof p);
    else goto out;
    if ((p = cl_plat_sym(h, "nvmlShutdown", NULL))) memcpy(&shutdown, &p, sizeof p);
    else goto out;
    if ((p = cl_plat_sym(h, "nvmlSystemGetDriverVersion", NULL))) memcpy(&get_version, &p, sizeof p);
    else goto out;
    if (init() == 0) {
        char buf[96] = {0};
        if (get_version(buf, sizeof buf) == 0 && cl_is_version_token(buf, strlen(buf))) branch = strdup(buf);
        shutdown();
    }
out:
    cl_plat_close(h);
    return branch;
}

char *cl_read_driver_branch(const char *driver_path) {
    int fd = open("/proc/driver/nvidia/version", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        char buf[1024];
        ssize_t n = read(fd, buf, sizeof buf);
        close(fd);
        if (n > 0) {
            char *b = cl_parse_proc_driver_version(buf, (size_t)n);
            if (b) return b;
        }
    }
    return cl_branch_from_nvml(driver_path);
}

cudaload_status cl_gate_major(const cl_driver_facts *drv, int wanted_major, int major, cl_why *why) {
    if (wanted_major && major != wanted_major) {
        cl_why_set(why, CUDALOAD_REASON_MAJOR_NOT_ASKED, major, 0, wanted_major, "%s", "");
        return CUDALOAD_ERROR_MAJOR_MISMATCH;
    }
    if (!drv->loaded) return CUDALOAD_OK; /* nothing to gate on: the caller reports NO_DRIVER */
    int drv_major = drv->version / 1000;
    if (drv->version > 0 && major > drv_major) {
        cl_why_set(why, CUDALOAD_REASON_DRIVER_TOO_OLD, major, drv->version, major, "%s", drv->branch ? drv->branch : "");
        return CUDALOAD_ERROR_DRIVER_TOO_OLD;
    }
    /* What libcuda says it runs (cuDriverGetVersion) decides, not the kernel module's branch from
     * /proc: a forward-compatibility libcuda (cuda-compat) runs a newer CUDA than its kernel
     * module's branch on the GPUs that support it (cuInit says 804 on the others). The branch
     * decides only when the version is unknown. */
    if (drv->version <= 0 && drv->branch_major > 0 && drv->branch_major < cl_min_branch_for_major(major)) {
        cl_why_set(why, CUDALOAD_REASON_DRIVER_BRANCH, major, drv->branch_major, cl_min_branch_for_major(major), "%s",
                   drv->branch);
        return CUDALOAD_ERROR_DRIVER_TOO_OLD;
    }
    return CUDALOAD_OK;
}

/* The version call of a row, looked up by name: the function types differ per kind. */
typedef int (*cl_int_fn)(int *);
typedef int (*cl_majmin_fn)(int *, int *);
typedef int (*cl_property_fn)(int, int *);
typedef size_t (*cl_size_t_fn)(void);

cudaload_status cl_read_version(const cl_row *row, void *handle, int *version, cl_buf *why) {
    *version = 0;
    if (row->version_kind == CL_VERSION_NONE) return CUDALOAD_OK;
    cl_buf e = {0};
    void *p = cl_plat_sym(handle, row->version_fn, &e);
    if (!p) {
        cl_buf_printf(why, "%s (%s)", row->version_fn, e.len ? cl_buf_str(&e) : "not exported");
        cl_buf_free(&e);
        return CUDALOAD_ERROR_SYMBOL_MISSING;
    }
    int r = 0, v = 0;
    switch (row->version_kind) {
    case CL_VERSION_CUDA: /* int fn(int *): the same call, a different encoding of its answer */
    case CL_VERSION_INT: {
        cl_int_fn fn;
        memcpy(&fn, &p, sizeof p);
        r = fn(&v);
        break;
    }
    case CL_VERSION_MAJMIN: {
        cl_majmin_fn fn;
        int maj = 0, min = 0;
        memcpy(&fn, &p, sizeof p);
        r = fn(&maj, &min);
        v = maj * 1000 + min * 10;
        break;
    }
    case CL_VERSION_PROPERTY: {
        /* libraryPropertyType: MAJOR_VERSION 0, MINOR_VERSION 1, PATCH_LEVEL 2 */
        cl_property_fn fn;
        int maj = 0, min = 0, patch = 0;
        memcpy(&fn, &p, sizeof p);
        r = fn(0, &maj);
        if (r == 0) r = fn(1, &min);
        if (r == 0) r = fn(2, &patch);
        v = maj * 10000 + min * 100 + patch;
        break;
    }
    case CL_VERSION_SIZE_T: {
        cl_size_t_fn fn;
        memcpy(&fn, &p, sizeof p);
        size_t s = fn();
        v = s < 100000000 ? (int)s : 0;
        break;
    }
    case CL_VERSION_NONE: break;
    }
    if (r != 0 || v <= 0) {
        /* the library's own error code: its name would need its own table */
        cl_buf_printf(why, "%s failed: error %d", row->version_fn, r);
        return CUDALOAD_ERROR_CUDA;
    }
    *version = v;
    return CUDALOAD_OK;
}

/* Which CUDA failures are remembered (a device's preparation in kernels_device.c, the device count in
 * cudaload.c), and which are tried again on the
 * next call. Permanent: the answer depends only on this device, this driver and the fatbin,
 * so asking again gives it again -- no image for the GPU, PTX the driver cannot JIT, an
 * image or PTX it rejects, a kernel missing from it, a JIT that is absent or disabled, a bad
 * or unlicensed device, an operation the device or system does not support or permit, a
 * stub or mismatched driver. Every other CUresult is transient and tried again on the next
 * call: out of memory, not ready, launch timeout, device busy or unavailable (exclusive
 * mode), system or MPS server not ready, out of resources, and the errors this list does
 * not know. Remembering a transient failure would turn the bundled kernels off for the
 * life of the process; trying a permanent one again costs a driver call per SAXPY/SGEMM. */
int cl_cu_permanent(CUresult r) {
    switch (r) {
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_INVALID_SOURCE:
    case CUDA_ERROR_NOT_FOUND:
    case CUDA_ERROR_JIT_COMPILER_NOT_FOUND:
    case CUDA_ERROR_JIT_COMPILATION_DISABLED:
    case CUDA_ERROR_INVALID_DEVICE:
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_DEVICE_NOT_LICENSED:
    case CUDA_ERROR_NOT_SUPPORTED:
    case CUDA_ERROR_NOT_PERMITTED:
    case CUDA_ERROR_STUB_LIBRARY:
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE: return 1;
    default: return 0;
    }
}
