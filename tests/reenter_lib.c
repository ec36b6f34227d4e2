/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reenter_lib.c -- a shared library whose constructor is foreign code that calls back into
 * libcudaload: it calls the test program's th_foreign_hook("constructor") (test_walk exports its
 * symbols), found with dlsym(RTLD_DEFAULT). test_walk has the walk load it as a candidate (an
 * exact file), the way a real library's constructor or a hook of the program would run.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>

__attribute__((constructor)) static void reenter_constructor(void) {
    void *p = dlsym(RTLD_DEFAULT, "th_foreign_hook");
    void (*hook)(const char *);
    if (!p) return;
    memcpy(&hook, &p, sizeof p); /* a data pointer to a function pointer */
    hook("constructor");
}
