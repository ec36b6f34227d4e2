/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hello.c -- the smallest program that embeds libcudaload: find the CUDA runtime (and,
 * on first use, cuBLAS) wherever pip, conda or the system put it, and say where it came
 * from. It links no CUDA library: build it with pkg-config (see examples/c/Makefile).
 *
 *   usage: hello [SITE_PACKAGES_OR_LIB_DIR]...
 */
#include <stdio.h>

#include <cudaload_tables.h>

int main(int argc, char **argv) {
    cudaload_options o;
    cudaload_options_init(&o);
    o.roots = (const char *const *)argv + 1;
    o.n_roots = (size_t)(argc - 1);
    o.flags = CUDALOAD_FLAG_DRIVER_OPTIONAL; /* report the runtime even on a machine without a GPU */
    if (cudaload_init(&o) != CUDALOAD_OK) {
        fprintf(stderr, "%s", cudaload_last_error());
        return 1;
    }
    const cudaload_cudart_table *rt = cudaload_cudart();
    int version = 0;
    rt->cudaRuntimeGetVersion(&version);
    cudaload_library_info info = {.size = sizeof info};
    cudaload_get_library_info(CUDALOAD_LIB_CUDART, &info);
    printf("cudart %d.%d from %s [%s]\n", version / 1000, version % 1000 / 10, info.path, cudaload_source_name(info.source));
    const cudaload_cublas_table *blas = cudaload_cublas();
    if (!blas) {
        fprintf(stderr, "%s", cudaload_last_error());
        return 1;
    }
    cudaload_get_library_info(CUDALOAD_LIB_CUBLAS, &info);
    printf("cublas %d from %s [%s]\n", info.version, info.path, cudaload_source_name(info.source));
    return 0;
}
