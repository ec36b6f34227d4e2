/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stub_core.c -- the hand-written core shared by every stub: the first-call load, and the
 * reasons recorded for cudaload_last_error().
 *
 * One lock serializes first loads (and the hook that runs after one, such as cudart's
 * registration replay). It is the stubs' own, never libcudaload's, and it is held while foreign
 * code runs: the load's (constructors, a library's version call) and the hook's (the runtime's
 * registration entry points). That code may call a stub again on this thread: NVIDIA's libraries
 * do not (their imports of each other never bind to the shared stubs: stubs/stub.map), but a
 * constructor, a program's code run by the runtime, or an interposed library may. Such a call
 * is refused at once (its function returns its library's failure code, and cudaload_last_error()
 * says CUDALOAD_ERROR_REENTRANT and which first load was running) instead of waiting for the
 * lock this thread holds.
 */
#define _GNU_SOURCE
#include "stub.h"
#include "../libcudaload/fork_guard.h" /* libcudaload's own fork handlers' helper: inline, no link */

#include <dlfcn.h>
#include <errno.h> /* program_invocation_short_name */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t cl_stub_lock = PTHREAD_MUTEX_INITIALIZER;

/* fork() while another thread is inside a first load would leave the child's copy of the lock
 * held: the handler takes it around fork. A fork from foreign code run under the lock by this very
 * thread (a constructor dlopen runs) must not wait for itself: then the handler leaves it. */
static pthread_once_t cl_stub_atfork_once = PTHREAD_ONCE_INIT;
static _Thread_local cl_fork_guard cl_stub_guard;      /* this thread holds the lock (fork_guard.h) */
static _Thread_local const char *cl_stub_loading_row; /* the row whose first load this thread runs */
static void cl_stub_fork_prepare(void) { (void)cl_fork_guard_prepare(&cl_stub_guard, &cl_stub_lock); }
static void cl_stub_fork_done(void) {
    if (cl_fork_guard_taken(&cl_stub_guard)) pthread_mutex_unlock(&cl_stub_lock);
}
/* The locks a first load takes under this one register their fork handlers here first, when
 * their file is linked in (cudart_core.c: the registrations' lock). */
extern void cl_stub_inner_atfork(void) __attribute__((weak));
static void cl_stub_atfork_register(void) {
    /* A first load holds this lock, then takes libcudaload's (and, for cudart, the registrations').
     * Prepare handlers run in the reverse order of registration: those are registered first
     * (libcudaload's by its first lock), so at fork this lock is taken before them. */
    (void)cudaload_is_initialized();
    if (cl_stub_inner_atfork) cl_stub_inner_atfork();
    pthread_atfork(cl_stub_fork_prepare, cl_stub_fork_done, cl_stub_fork_done);
}

static void cl_stub_say(cl_stub_lib *s);

const void *cl_stub_load(cl_stub_lib *s) {
    const void *t = atomic_load_explicit(&s->ready, memory_order_acquire);
    if (t) return t;
    /* Called back from the foreign code of a first load this thread runs (above): the lock is
     * this thread's, and nothing of libcudaload may be called either (its lock may be held by
     * the same load). Fail fast. */
    if (cl_stub_guard.held) {
        cudaload_lib asked;
        char running[96];
        snprintf(running, sizeof running, "the first call of %s's stub", cl_stub_loading_row ? cl_stub_loading_row : "a");
        if (cudaload_lib_by_name(s->row, &asked) == CUDALOAD_OK) (void)cudaload_report_reentrant(asked, running);
        return NULL;
    }
    pthread_once(&cl_stub_atfork_once, cl_stub_atfork_register);
    cl_fork_guard_lock(&cl_stub_guard, &cl_stub_lock);
    cl_stub_loading_row = s->row;
    t = atomic_load_explicit(&s->ready, memory_order_acquire);
    if (!t) {
        /* Default options, unless the program initialized libcudaload itself (then its options,
         * roots included, decide). A missing driver does not stop the runtime libraries from
         * loading: their calls then report it in their own codes, as the real ones do. */
        if (!cudaload_is_initialized()) (void)cudaload_init(NULL);
        cudaload_lib lib;
        if (cudaload_lib_by_name(s->row, &lib) == CUDALOAD_OK && cudaload_load_library(lib) == CUDALOAD_OK)
            t = s->table();
        if (t) {
            if (s->loaded) s->loaded(t);
            atomic_store_explicit(&s->ready, t, memory_order_release);
        } else {
            cl_stub_say(s);
        }
    }
    cl_stub_loading_row = NULL;
    cl_fork_guard_unlock(&cl_stub_guard, &cl_stub_lock);
    return t;
}

void cl_stub_print(const char *line) {
    const char *quiet = getenv("CUDALOAD_QUIET");
    if (quiet && quiet[0] && strcmp(quiet, "0") != 0) return;
    fprintf(stderr, "%s: %s (CUDALOAD_DEBUG=1 shows the search; CUDALOAD_QUIET=1 silences this)\n",
            program_invocation_short_name, line);
}

/* The first failed load of s: its line, kept for the error-string calls and printed once. Called
 * with the stubs' lock held (nothing foreign runs: libcudaload only renders what it recorded). */
static void cl_stub_say(cl_stub_lib *s) {
    if (atomic_load_explicit(&s->said, memory_order_acquire)) return;
    cudaload_lib lib;
    char line[sizeof s->why - 32];
    cudaload_status st = cudaload_lib_by_name(s->row, &lib);
    if (st == CUDALOAD_OK) st = cudaload_failure_line(lib, line, sizeof line);
    if (st == CUDALOAD_OK || !line[0]) {
        /* nothing searched for it (init refused a bad CUDALOAD_* value, or ran out of memory):
         * libcudaload's own message says why, its first line here */
        const char *e = cudaload_last_error();
        size_t k = strcspn(e, "\n");
        snprintf(line, sizeof line, "%s: %.*s", s->row, (int)(k < 400 ? k : 400), e);
    }
    snprintf(s->why, sizeof s->why, "libcudaload: cannot load %s", line);
    atomic_store_explicit(&s->said, 1, memory_order_release);
    cl_stub_print(s->why);
}

const char *cl_stub_why(cl_stub_lib *s) {
    if (atomic_load_explicit(&s->said, memory_order_acquire)) return s->why;
    /* no load failed: this call was refused because it came from inside the library's own first
     * load on this thread (CUDALOAD_ERROR_REENTRANT) */
    return "libcudaload: the library is not loaded: a call made from inside its own first load was refused";
}

void cl_stub_absent(cl_stub_lib *s, const char *fn) {
    cudaload_lib lib;
    if (cudaload_lib_by_name(s->row, &lib) == CUDALOAD_OK) (void)cudaload_report_missing_symbol(lib, fn);
}

void *cl_stub_older_fn(cl_stub_slots *s, size_t i, int *absent) {
    void *f = atomic_load_explicit(&s->fns[i], memory_order_acquire);
    *absent = 0;
    if (f) return f;
    if (!cl_stub_table(s->lib)) return NULL;
    cudaload_lib lib;
    void *h = cudaload_lib_by_name(s->lib->row, &lib) == CUDALOAD_OK ? cudaload_handle(lib) : NULL;
    f = h ? dlsym(h, s->names[i]) : NULL;
    if (!f) {
        *absent = 1;
        cl_stub_absent(s->lib, s->names[i]);
        return NULL;
    }
    atomic_store_explicit(&s->fns[i], f, memory_order_release);
    return f;
}
