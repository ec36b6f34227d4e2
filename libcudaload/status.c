/* SPDX-License-Identifier: Apache-2.0 */
/*
 * status.c -- status names and texts, the per-thread error message, the debug trace and
 * the small string helpers every step uses.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const struct {
    const char *name;
    const char *text;
} cl_status_table[CUDALOAD_STATUS_COUNT_] = {
    [CUDALOAD_OK] = {"CUDALOAD_OK", "success"},
    [CUDALOAD_ERROR_INVALID_ARGUMENT] = {"CUDALOAD_ERROR_INVALID_ARGUMENT", "invalid argument"},
    [CUDALOAD_ERROR_INVALID_OPTION] = {"CUDALOAD_ERROR_INVALID_OPTION", "invalid option or environment variable"},
    [CUDALOAD_ERROR_NOT_INITIALIZED] = {"CUDALOAD_ERROR_NOT_INITIALIZED", "libcudaload is not initialized"},
    [CUDALOAD_ERROR_NOT_FOUND] = {"CUDALOAD_ERROR_NOT_FOUND", "library not found"},
    [CUDALOAD_ERROR_OVERRIDE_UNUSABLE] = {"CUDALOAD_ERROR_OVERRIDE_UNUSABLE", "an explicitly given library file cannot be used"},
    [CUDALOAD_ERROR_NO_DRIVER] = {"CUDALOAD_ERROR_NO_DRIVER", "CUDA driver (libcuda.so.1) not found"},
    [CUDALOAD_ERROR_DRIVER_TOO_OLD] = {"CUDALOAD_ERROR_DRIVER_TOO_OLD", "the CUDA driver is too old for the libraries found"},
    [CUDALOAD_ERROR_NO_DEVICE] = {"CUDALOAD_ERROR_NO_DEVICE", "no CUDA device"},
    [CUDALOAD_ERROR_SYMBOL_MISSING] = {"CUDALOAD_ERROR_SYMBOL_MISSING", "a required symbol is missing"},
    [CUDALOAD_ERROR_MAJOR_MISMATCH] = {"CUDALOAD_ERROR_MAJOR_MISMATCH", "CUDA major version mismatch"},
    [CUDALOAD_ERROR_CUDA] = {"CUDALOAD_ERROR_CUDA", "a CUDA call failed"},
    [CUDALOAD_ERROR_OUT_OF_MEMORY] = {"CUDALOAD_ERROR_OUT_OF_MEMORY", "out of host memory"},
    [CUDALOAD_ERROR_NOT_ATTEMPTED] = {"CUDALOAD_ERROR_NOT_ATTEMPTED", "not attempted"},
    [CUDALOAD_ERROR_KERNELS_NOT_BUILT] = {"CUDALOAD_ERROR_KERNELS_NOT_BUILT", "the bundled kernels were not built (no nvcc at build time)"},
    [CUDALOAD_ERROR_NO_KERNEL_IMAGE] = {"CUDALOAD_ERROR_NO_KERNEL_IMAGE", "the bundled kernels have no image this GPU and driver can run"},
    [CUDALOAD_ERROR_BELOW_FLOOR] = {"CUDALOAD_ERROR_BELOW_FLOOR", "only versions below the minimum asked for were found"},
    [CUDALOAD_ERROR_DEVICE_MISMATCH] = {"CUDALOAD_ERROR_DEVICE_MISMATCH", "the operands of a call are on different devices"},
    [CUDALOAD_ERROR_REENTRANT] = {"CUDALOAD_ERROR_REENTRANT", "called back from a library this thread is loading"},
    [CUDALOAD_ERROR_KERNELS_FILE] = {"CUDALOAD_ERROR_KERNELS_FILE", "the file the bundled kernels are read from is missing, unreadable or of another build"},
};

const char *cudaload_status_name(cudaload_status status) {
    if ((unsigned)status >= CUDALOAD_STATUS_COUNT_) return "CUDALOAD_ERROR_UNKNOWN";
    return cl_status_table[status].name;
}

const char *cudaload_status_string(cudaload_status status) {
    if ((unsigned)status >= CUDALOAD_STATUS_COUNT_) return "unknown status";
    return cl_status_table[status].text;
}

const char *cudaload_version_string(void) { return CUDALOAD_VERSION_STRING; }

/* ---- growable strings ---- */

void cl_buf_vprintf(cl_buf *b, const char *fmt, va_list ap) {
    if (b->oom) return;
    va_list ap2;
    va_copy(ap2, ap);
    int need = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (need < 0) return;
    if (b->len + (size_t)need + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + (size_t)need + 1) cap *= 2;
        char *p = realloc(b->data, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->data = p;
        b->cap = cap;
    }
    vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
    b->len += (size_t)need;
}

void cl_buf_printf(cl_buf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    cl_buf_vprintf(b, fmt, ap);
    va_end(ap);
}

const char *cl_buf_str(const cl_buf *b) {
    if (b->oom) return "(out of memory while formatting the message)";
    return b->data ? b->data : "";
}

void cl_buf_free(cl_buf *b) {
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
    b->oom = 0;
}

char *cl_strdup(const char *s) { return s ? strdup(s) : NULL; }

void cl_oom(void) { cl_ctx.n_oom++; }

char *cl_dir_of(const char *path) {
    char *dir = cl_strdup(path);
    char *slash = dir ? strrchr(dir, '/') : NULL;
    if (!slash) {
        free(dir);
        return NULL;
    }
    if (slash == dir) slash[1] = 0; /* "/libx.so": the root directory */
    else *slash = 0;
    return dir;
}

int cl_file_exists(const char *dir, const char *name) {
    char *p = cl_path_join(dir, name);
    struct stat st;
    int ok = p && stat(p, &st) == 0 && S_ISREG(st.st_mode);
    free(p);
    return ok;
}

char *cl_path_join(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    int slash = la > 0 && a[la - 1] == '/';
    char *p = malloc(la + lb + 2);
    if (!p) return NULL;
    memcpy(p, a, la);
    if (!slash) p[la++] = '/';
    memcpy(p + la, b, lb + 1);
    return p;
}

void cl_info_copy_out(void *out, size_t out_size, const void *full, size_t full_size) {
    size_t n = out_size < full_size ? out_size : full_size;
    memcpy(out, full, n);
    if (out_size > full_size) memset((char *)out + full_size, 0, out_size - full_size);
    memcpy(out, &out_size, sizeof out_size); /* every info struct starts with its size_t size */
}

/* ---- per-thread error text ---- */

/* the key lives in the context (cl_ctx.error_key); the strings it points to, per thread */
static void cl_error_key_make(void) { cl_ctx.error_key_ok = pthread_key_create(&cl_ctx.error_key, free) == 0; }

void cl_set_error(const char *text) {
    pthread_once(&cl_ctx.error_once, cl_error_key_make);
    if (!cl_ctx.error_key_ok) return;
    char *old = pthread_getspecific(cl_ctx.error_key);
    char *copy = text ? strdup(text) : NULL;
    pthread_setspecific(cl_ctx.error_key, copy);
    free(old);
}

void cl_set_errorf(const char *fmt, ...) {
    cl_buf b = {0};
    va_list ap;
    va_start(ap, fmt);
    cl_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    cl_set_error(cl_buf_str(&b));
    cl_buf_free(&b);
}

const char *cudaload_last_error(void) {
    pthread_once(&cl_ctx.error_once, cl_error_key_make);
    if (!cl_ctx.error_key_ok) return "";
    const char *s = pthread_getspecific(cl_ctx.error_key);
    return s ? s : "";
}

/* ---- debug trace (CUDALOAD_DEBUG=1 or CUDALOAD_FLAG_DEBUG; =time adds the microseconds since
 * init's configuration began): the only place that prints ---- */


void cl_debug(const char *fmt, ...) {
    if (!cl_ctx.debug) return;
    va_list ap;
    va_start(ap, fmt);
    cl_plat_lock_file(stderr);
    fputs("cudaload: ", stderr);
    if (cl_ctx.debug == 2) fprintf(stderr, "[%9.1f us] ", cl_plat_now_us() - cl_ctx.debug_t0);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    cl_plat_unlock_file(stderr);
    va_end(ap);
}

/* ---- reasons ---- */

static const char *const cl_reason_names[CUDALOAD_REASON_COUNT_] = {
#define CL_REASON_NAME(name, value) [value] = #name,
    CUDALOAD_REASONS(CL_REASON_NAME)
#undef CL_REASON_NAME
};

const char *cudaload_reason_name(cudaload_reason reason) {
    if ((unsigned)reason >= CUDALOAD_REASON_COUNT_ || !cl_reason_names[reason]) return "UNKNOWN";
    return cl_reason_names[reason];
}

void cl_why_set(cl_why *w, cudaload_reason reason, int major, int value, int needed, const char *fmt, ...) {
    w->reason = reason;
    w->major = major;
    w->value = value;
    w->needed = needed;
    w->text.len = 0;
    if (w->text.data) w->text.data[0] = 0;
    va_list ap;
    va_start(ap, fmt);
    cl_buf_vprintf(&w->text, fmt, ap);
    va_end(ap);
}

void cl_why_free(cl_why *w) { cl_buf_free(&w->text); }
