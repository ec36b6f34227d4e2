/* SPDX-License-Identifier: Apache-2.0 */
/*
 * embedder.c -- a stand-in for a Python extension module that embeds libcudaload.a, built
 * twice by the Makefile (build/tests/embedder_a.so, embedder_b.so) the way such a module is
 * linked: objects with hidden visibility and -Wl,--exclude-libs,ALL, so that nothing of
 * libcudaload is exported. test_two_embedders loads both copies into one process. Its only
 * exports are these embedder_* functions (in both copies, like two modules' PyInit_).
 */
#include <stdio.h>

#include "cudaload.h"

#define EMBEDDER_API __attribute__((visibility("default")))

/** cudaload_init with root as the only caller root, only the caller source searched, the
 *  environment ignored and the driver optional (the test runs on machines without one). */
EMBEDDER_API int embedder_init(const char *root);
EMBEDDER_API int embedder_init(const char *root) {
    const char *roots[] = {root};
    cudaload_options o;
    cudaload_options_init(&o);
    o.roots = roots;
    o.n_roots = 1;
    o.sources = CUDALOAD_SOURCE_BIT(CUDALOAD_SOURCE_CALLER);
    o.flags = CUDALOAD_FLAG_IGNORE_ENV | CUDALOAD_FLAG_DRIVER_OPTIONAL;
    return (int)cudaload_init(&o);
}

/** This copy's cudaload_is_initialized(). */
EMBEDDER_API int embedder_is_initialized(void);
EMBEDDER_API int embedder_is_initialized(void) { return cudaload_is_initialized(); }

/** This copy's view of cudart: its source (a cudaload_source), the path into path[n]. */
EMBEDDER_API int embedder_cudart(char *path, size_t n);
EMBEDDER_API int embedder_cudart(char *path, size_t n) {
    cudaload_library_info info = {.size = sizeof info};
    if (cudaload_get_library_info(CUDALOAD_LIB_CUDART, &info) != CUDALOAD_OK || !info.path) return -1;
    snprintf(path, n, "%s", info.path);
    return (int)info.source;
}

/** The address of this copy's cudaload_init: the two copies must not share one. */
EMBEDDER_API void *embedder_init_address(void);
EMBEDDER_API void *embedder_init_address(void) { return (void *)cudaload_init; }
