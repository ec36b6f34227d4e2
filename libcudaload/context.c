/* SPDX-License-Identifier: Apache-2.0 */
/*
 * context.c -- the context (cl_ctx), its lock, the fork handlers, the bracket around foreign
 * code, and who walks: the bottom of the library. Every other file reads and changes the
 * context through what is here; this file calls nothing of theirs, so the walk's files and the public API (cudaload.c) sit on it, never the
 * other way round (tools/check_layers.py checks that on the objects).
 *
 * State lives in one context struct, built once under one mutex, never torn down: libraries
 * stay loaded for the life of the process (unloading the CUDA runtime is unsafe), so every
 * string and array handed out stays valid.
 *
 * The lock (cl_ctx.mu) guards the context's fields and is never held across foreign code: the
 * walk lets it go around dlopen (constructors), dlclose, dlsym, the version calls, the driver's
 * calls and NVML (cl_foreign_begin/end), and cudaload_device_count around cuInit. One thread at
 * a time walks (init, a load, a find: cl_ctx.walking); another thread that needs a walk waits on
 * walk_cv (cl_walk_wait_others), and the walking thread itself, called back from the foreign
 * code it runs, is told so (cl_walk_is_mine) and refused by the public API with
 * CUDALOAD_ERROR_REENTRANT instead of waiting on itself.
 *
 * fork(): the handler takes the lock and waits for a walk in progress by another thread (the
 * child then has the whole state and no walk half done); a fork from the walking thread's own
 * foreign code (a constructor) goes through, and the child goes on with the walk as the parent
 * does. A fork from a signal handler of the thread that holds the lock: fork_guard.h.
 */
#define _GNU_SOURCE
#include "internal.h"
#include "fork_guard.h"

#include <pthread.h>

cl_context cl_ctx = {
    .mu = PTHREAD_MUTEX_INITIALIZER,
    .walk_cv = PTHREAD_COND_INITIALIZER,
    .kernels = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER, .atfork_once = PTHREAD_ONCE_INIT},
    .error_once = PTHREAD_ONCE_INIT,
};
#define g cl_ctx

static pthread_once_t cl_atfork_once = PTHREAD_ONCE_INIT;
static _Thread_local cl_fork_guard cl_lock_guard; /* this thread holds the lock (fork_guard.h) */
static _Thread_local int cl_walking_here;         /* this thread runs the walk (cl_ctx.walking) */
static _Thread_local int cl_foreign_lib = -1;     /* the foreign code it runs now: whose, and what */
static _Thread_local const char *cl_foreign_call;

/* fork() while another thread holds the mutex, or runs a walk, would leave the child's copy
 * locked, or a walk half done that nobody ends: the handler takes the lock and waits for a walk
 * of another thread to end. A fork from this very thread while it holds the lock (a signal
 * handler: fork_guard.h) or runs the walk (a constructor, a version call) must not wait for
 * itself. */
static void cl_lock_prepare(void) {
    if (!cl_fork_guard_prepare(&cl_lock_guard, &g.mu)) return;
    while (g.walking && !cl_walking_here) pthread_cond_wait(&g.walk_cv, &g.mu);
}
static void cl_unlock_after_fork(void) {
    if (cl_fork_guard_taken(&cl_lock_guard)) pthread_mutex_unlock(&g.mu);
}
/* The child has only the forking thread: threads of the parent that waited on walk_cv are not
 * there, so the condition variable starts afresh (as the kernels' does, kernels_device.c). */
static void cl_unlock_in_child(void) {
    if (!cl_fork_guard_taken(&cl_lock_guard)) return;
    pthread_cond_init(&g.walk_cv, NULL);
    pthread_mutex_unlock(&g.mu);
}
static void cl_atfork_register(void) {
#ifndef _WIN32 /* Windows has no fork */
    pthread_atfork(cl_lock_prepare, cl_unlock_after_fork, cl_unlock_in_child);
#endif
}
void cl_atfork_init(void) { pthread_once(&cl_atfork_once, cl_atfork_register); }

void cl_lock(void) {
    cl_atfork_init();
    cl_fork_guard_lock(&cl_lock_guard, &g.mu);
}
void cl_unlock(void) { cl_fork_guard_unlock(&cl_lock_guard, &g.mu); }

void cl_foreign_begin(int lib, const char *call) {
    cl_foreign_lib = lib;
    cl_foreign_call = call;
    cl_unlock();
}
void cl_foreign_end(void) {
    cl_lock();
    cl_foreign_lib = -1;
    cl_foreign_call = NULL;
}

int cl_walk_is_mine(int *lib, const char **call) {
    if (!cl_walking_here) return 0;
    *lib = cl_foreign_lib;
    *call = cl_foreign_call;
    return 1;
}

void cl_walk_wait_others(void) {
    while (g.walking) cl_fork_guard_wait(&cl_lock_guard, &g.walk_cv, &g.mu);
}

void cl_walk_begin(int find_only) {
    g.walking = 1;
    g.walk_find_only = find_only;
    cl_walking_here = 1;
}

void cl_walk_end(void) {
    g.walking = 0;
    g.walk_find_only = 0;
    cl_walking_here = 0;
    pthread_cond_broadcast(&g.walk_cv);
}

int cl_config_backend(void) {
    cl_lock();
    int b = g.done ? g.cfg.backend : -1;
    cl_unlock();
    return b;
}
