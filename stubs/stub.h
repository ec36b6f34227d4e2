/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stub.h -- what the generated stubs (stubs/gen/<lib>.c) are made of.
 *
 * A stub defines each exported function of a CUDA library with its exact prototype, so
 * existing code links against it with no DT_NEEDED on the library. A call reads the library's
 * typed table (one acquire load once it is ready) and forwards; the first call loads the
 * library through libcudaload (cl_stub_load: default options unless the program called
 * cudaload_init itself). When the library cannot be had, the call returns the library's own
 * error code, and the stub prints one line to stderr, once per library per process, as the
 * dynamic loader it replaces would have: which library, why (libcudaload's advisor:
 * cudaload_failure_line) and the fix; CUDALOAD_QUIET=1 silences it. The library's own
 * error-string calls then return that line. A function the loaded copy lacks returns its
 * "not supported" code. Nothing aborts.
 */
#ifndef CUDALOAD_STUB_H
#define CUDALOAD_STUB_H

#include "cudaload.h"

#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

/* The stub functions themselves are the library's API: default visibility (a module that
 * embeds the static stubs hides them with -Wl,--exclude-libs,ALL); the rest is hidden. The
 * archives the Python package ships (make HIDDEN_API=1) hide them too, as libcudaload's API. */
#ifdef CUDALOAD_API_HIDDEN
#define CL_STUB_EXPORT __attribute__((visibility("hidden")))
/* cufft.h declares its API with visibility("default") unless CUFFTAPI is preset, and GCC keeps
 * the first declaration's visibility: preset it empty so the hidden definitions hold. */
#define CUFFTAPI
#else
#define CL_STUB_EXPORT __attribute__((visibility("default")))
#endif
#define CL_STUB_HIDDEN __attribute__((visibility("hidden")))

typedef struct cl_stub_lib {
    const char *row;                 /* the catalogue row: "cudart" */
    const void *(*table)(void);      /* its table accessor (cudaload_cudart) */
    void (*loaded)(const void *table); /* run once after the load, before any call goes through
                                          (cudart: the registration replay), or NULL */
    _Atomic(const void *) ready;     /* the table once loaded and the hook has run */
    atomic_int said;                 /* why[] is written (release): the first failed load's line */
    char why[640];                   /* "libcudaload: cannot load libcublas.so.13: ...; fix: ..." */
} cl_stub_lib;

/* The slow path of a call: loads the library (once; a failure is retried by the next call,
 * cheaply: libcudaload keeps the outcome) and returns its table, or NULL. NULL at once when
 * called back from the foreign code of a first load this thread runs (stub_core.c). */
CL_STUB_HIDDEN const void *cl_stub_load(cl_stub_lib *lib);
/* Why lib could not be loaded: the line its stub printed (what the library's error-string calls
 * return), or a fixed text when no load has failed yet (a call refused as reentrant). */
CL_STUB_HIDDEN const char *cl_stub_why(cl_stub_lib *lib);
/* Records that fn is absent from the loaded copy of lib (cudaload_last_error()). */
CL_STUB_HIDDEN void cl_stub_absent(cl_stub_lib *lib, const char *fn);

static inline const void *cl_stub_table(cl_stub_lib *lib) {
    const void *t = atomic_load_explicit(&lib->ready, memory_order_acquire);
    return __builtin_expect(t != NULL, 1) ? t : cl_stub_load(lib);
}

/* The start of a stub's body: t_, the loaded table, or a return of fail_load (the library could
 * not be had) or fail_absent (the copy lacks m); both empty in a function returning nothing. */
#define CL_STUB_GET(lib, T, m, fail_load, fail_absent)                     \
    const T *t_ = (const T *)cl_stub_table(&lib);                          \
    if (__builtin_expect(t_ == NULL, 0)) return fail_load;                 \
    if (__builtin_expect(t_->m == NULL, 0)) {                              \
        cl_stub_absent(&lib, #m);                                          \
        return fail_absent;                                                \
    }

/* The body of a stub returning a value (T: the table type, m: the member). */
#define CL_STUB(lib, T, m, args, fail_load, fail_absent)                   \
    CL_STUB_GET(lib, T, m, fail_load, fail_absent)                         \
    return t_->m args
#define CL_STUB_VOID(lib, T, m, args)                                      \
    CL_STUB_GET(lib, T, m, , )                                             \
    t_->m args

/* A stub whose function hands back a value through an out-parameter that callers read without
 * checking the status (cuGetErrorString's string, after the call that failed; a name or log
 * buffer): on failure the generated statements (...) fill it with a static text naming the
 * failure (why_: the library could not be loaded, or the function is absent), then the code is
 * returned. Which parameters: tools/gen_api.py (Entry.out_fills). */
static inline void cl_stub_put_str(const char **out, const char *why) {
    if (out) *out = why;
}
static inline void cl_stub_put_buf(char *buf, long long n, const char *why) {
    if (!buf || n <= 0) return;
    size_t k = strlen(why);
    if ((unsigned long long)k >= (unsigned long long)n) k = (size_t)n - 1;
    memcpy(buf, why, k);
    buf[k] = 0;
}
#define CL_STUB_OUT(lib, T, m, args, fail_load, fail_absent, why_load, why_absent, ...) \
    const T *t_ = (const T *)cl_stub_table(&lib);                          \
    if (__builtin_expect(t_ == NULL, 0)) {                                 \
        const char *why_ = why_load;                                       \
        (void)why_; /* a fill of a number or a handle takes no text */     \
        __VA_ARGS__;                                                       \
        return fail_load;                                                  \
    }                                                                      \
    if (__builtin_expect(t_->m == NULL, 0)) {                              \
        const char *why_ = why_absent;                                     \
        (void)why_;                                                        \
        cl_stub_absent(&lib, #m);                                          \
        __VA_ARGS__;                                                       \
        return fail_absent;                                                \
    }                                                                      \
    return t_->m args

/* The same for a function returning nothing whose out-parameters its caller reads back
 * (nvshmem_info_get_version's numbers, nvshmem_info_get_name's name). */
#define CL_STUB_VOID_OUT(lib, T, m, args, why_load, why_absent, ...)      \
    const T *t_ = (const T *)cl_stub_table(&lib);                          \
    if (__builtin_expect(t_ == NULL, 0)) {                                 \
        const char *why_ = why_load;                                       \
        (void)why_;                                                        \
        __VA_ARGS__;                                                       \
        return;                                                            \
    }                                                                      \
    if (__builtin_expect(t_->m == NULL, 0)) {                              \
        const char *why_ = why_absent;                                     \
        (void)why_;                                                        \
        cl_stub_absent(&lib, #m);                                          \
        __VA_ARGS__;                                                       \
        return;                                                            \
    }                                                                      \
    t_->m args

/* The older ABIs and APIs (stubs/gen/<lib>_older.c) are not in the typed table (their types
 * exist only under other defines): each is looked up by name in the loaded copy on first use. */
typedef struct cl_stub_slots {
    cl_stub_lib *lib;
    size_t n;
    const char *const *names;
    _Atomic(void *) *fns;
} cl_stub_slots;
/* The function, or NULL with *absent = 1 when the copy lacks it, 0 when the library failed. */
CL_STUB_HIDDEN void *cl_stub_older_fn(cl_stub_slots *s, size_t i, int *absent);

#define CL_STUB_OLDER(slots, i, F, args, fail_load, fail_absent)           \
    int absent_;                                                           \
    void *f_ = cl_stub_older_fn(&slots, i, &absent_);                      \
    if (f_ == NULL) return absent_ ? fail_absent : fail_load;              \
    return ((F)f_) args
#define CL_STUB_OLDER_OUT(slots, i, F, args, fail_load, fail_absent, why_load, why_absent, ...) \
    int absent_;                                                           \
    void *f_ = cl_stub_older_fn(&slots, i, &absent_);                      \
    if (f_ == NULL) {                                                      \
        const char *why_ = absent_ ? why_absent : why_load;                \
        __VA_ARGS__;                                                       \
        return absent_ ? fail_absent : fail_load;                          \
    }                                                                      \
    return ((F)f_) args
#define CL_STUB_OLDER_VOID(slots, i, F, args)                              \
    int absent_;                                                           \
    void *f_ = cl_stub_older_fn(&slots, i, &absent_);                      \
    if (f_ == NULL) return;                                                \
    ((F)f_) args

/* As CL_STUB, for a row whose core watches one status (tools/gen_api.py: WATCH): watch() runs when
 * a call returns code (cudart's cudaErrorInsufficientDriver). */
#define CL_STUB_WATCH(lib, T, m, args, fail_load, fail_absent, code, watch) \
    CL_STUB_GET(lib, T, m, fail_load, fail_absent)                         \
    __typeof__(t_->m args) r_ = t_->m args;                                \
    if (__builtin_expect(r_ == (code), 0)) watch();                        \
    return r_

/* Prints line (a stub's "libcudaload: ..." text) to stderr as the dynamic loader prints its own,
 * prefixed with the program's name, unless CUDALOAD_QUIET is set to anything but 0. */
CL_STUB_HIDDEN void cl_stub_print(const char *line);

/* A value-returning function other than a status (a struct, a count): zero. */
#define CL_STUB_ZERO(type) ((type){0})

#endif /* CUDALOAD_STUB_H */
