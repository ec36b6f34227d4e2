/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fork_guard.h -- the fork handlers of a mutex that know whether the forking thread holds it.
 *
 * A pthread_atfork prepare handler takes a lock so that the child never starts with it held by
 * a thread the child does not have. A fork from the very thread that holds it (a signal handler
 * that interrupted it, or foreign code run while it holds it) must not wait for itself: the
 * prepare handler then leaves the lock alone, and the handlers after fork leave it alone too.
 * Whoever takes the lock marks it in a cl_fork_guard of its own thread (cl_fork_guard_lock,
 * _unlock, _wait); the handlers ask it (cl_fork_guard_prepare, cl_fork_guard_taken).
 *
 * What holds: a fork from this thread while it holds the lock (after cl_fork_guard_lock
 * returned, before cl_fork_guard_unlock was called, outside cl_fork_guard_wait) goes through,
 * in a signal handler too (tests/test_walk.c: test_fork_from_a_signal_handler_holding_the_lock),
 * and parent and child each go on holding it. What does not: a signal handler that forks
 * while its thread is inside one of these three calls, between the mutex's change and the mark
 * (a few instructions, or the whole cond wait's wake-up), may wait in the prepare handler on
 * the lock its own thread holds. Closing that window costs two signal-mask system calls per
 * lock and unlock, on paths taken per call (the cuBLAS handle pool); POSIX leaves a fork from a
 * signal handler undefined anyway once a fork handler calls pthread_mutex_lock, which is not
 * async-signal-safe (a signal handler that must start a process: posix_spawn, or _Fork, which
 * runs no fork handlers).
 *
 * Used by libcudaload's lock (context.c), the launch step's (kernels_device.c) and the stubs'
 * (stubs/stub_core.c). Inline functions only: the shared stubs link libcudaload.so, which
 * exports nothing but its API, so a function of its own would not reach them.
 */
#ifndef CUDALOAD_FORK_GUARD_H
#define CUDALOAD_FORK_GUARD_H

#include <pthread.h>

/* One per lock and per thread (a _Thread_local): whether this thread holds the lock, and whether
 * the prepare handler left it alone for this thread's fork. */
typedef struct cl_fork_guard {
    int held;
    int skipped;
} cl_fork_guard;

static inline void cl_fork_guard_lock(cl_fork_guard *g, pthread_mutex_t *mu) {
    pthread_mutex_lock(mu);
    g->held = 1;
}

static inline void cl_fork_guard_unlock(cl_fork_guard *g, pthread_mutex_t *mu) {
    g->held = 0;
    pthread_mutex_unlock(mu);
}

/* Waits on cv, the lock let go meanwhile (a fork then may take it). */
static inline void cl_fork_guard_wait(cl_fork_guard *g, pthread_cond_t *cv, pthread_mutex_t *mu) {
    g->held = 0;
    pthread_cond_wait(cv, mu);
    g->held = 1;
}

/* The prepare handler's step: takes mu, unless this thread holds it already (noted for the
 * handlers after fork). 1 when it took it. */
static inline int cl_fork_guard_prepare(cl_fork_guard *g, pthread_mutex_t *mu) {
    if (g->held) {
        g->skipped = 1;
        return 0;
    }
    pthread_mutex_lock(mu);
    return 1;
}

/* The parent's and the child's handler's step: 1 when the prepare handler took the lock (the
 * caller lets it go); 0 when it left it alone, the note cleared. */
static inline int cl_fork_guard_taken(cl_fork_guard *g) {
    if (g->skipped) {
        g->skipped = 0;
        return 0;
    }
    return 1;
}

#endif /* CUDALOAD_FORK_GUARD_H */
