/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_first_call.c -- what the first kernel call of a process costs: the bundled kernels'
 * preparation on the device (the gate, the fatbin's image chosen and decompressed by
 * cuModuleLoadData, the functions looked up) on top of a launch, against the second call.
 *
 * One process, one measurement: cudaload_init (the roots: --root or $CUDALOAD_GPU_SITE), the
 * runtime's context made (cudaFree(0)) and two buffers allocated before the clock starts; then a
 * SAXPY of 1024 elements synchronized, timed (first_call_us), and the same again
 * (second_call_us). bench/run-first-call.sh runs it many times and takes medians; run it with
 * two builds (a fatbin of each kind) to compare them.
 *
 * usage: bench_first_call [--root SITE_PACKAGES]
 */
#include "cudaload_tables.h"
#include "bench_clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double saxpy_us(const cudaload_cudart_table *rt, float *x, float *y) {
    double t0 = now_ns();
    cudaload_status st = cudaload_saxpy(1024, 2.0f, x, y, NULL);
    cudaError_t e = rt->cudaDeviceSynchronize();
    double t1 = now_ns();
    if (st != CUDALOAD_OK || e != cudaSuccess) {
        fprintf(stderr, "bench_first_call: saxpy: %s\n", cudaload_last_error());
        return -1;
    }
    return (t1 - t0) / 1000.0;
}

int main(int argc, char **argv) {
    const char *root = getenv("CUDALOAD_GPU_SITE");
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--root") && i + 1 < argc) root = argv[++i];
        else {
            fprintf(stderr, "usage: bench_first_call [--root SITE_PACKAGES]\n");
            return 2;
        }
    }
    cudaload_options o;
    cudaload_options_init(&o);
    const char *roots[] = {root};
    if (root && root[0]) o.roots = roots, o.n_roots = 1;
    int ndev = 0;
    if (cudaload_init(&o) != CUDALOAD_OK || cudaload_device_count(&ndev) != CUDALOAD_OK || ndev < 1) {
        printf("bench_first_call: skipped: %s\n", cudaload_last_error());
        return 0;
    }
    const cudaload_cudart_table *rt = cudaload_cudart();
    float *x = NULL, *y = NULL;
    if (rt->cudaFree(0) != cudaSuccess || rt->cudaMalloc((void **)&x, 4096) != cudaSuccess ||
        rt->cudaMalloc((void **)&y, 4096) != cudaSuccess || rt->cudaMemset(x, 0, 4096) != cudaSuccess ||
        rt->cudaMemset(y, 0, 4096) != cudaSuccess || rt->cudaDeviceSynchronize() != cudaSuccess) {
        fprintf(stderr, "bench_first_call: the runtime's setup failed\n");
        return 1;
    }
    cudaload_set_backend(CUDALOAD_BACKEND_BUNDLED);
    double first = saxpy_us(rt, x, y), second = saxpy_us(rt, x, y);
    if (first < 0 || second < 0) return 1;
    cudaload_kernels_info ki = {.size = sizeof ki};
    cudaload_kernels_info_get(0, &ki);
    printf("fatbin_bytes %zu\nsass %s\nptx %d\nfirst_call_us %.1f\nsecond_call_us %.1f\n", ki.fatbin_bytes, ki.sass_archs,
           ki.ptx_arch, first, second);
    rt->cudaFree(x);
    rt->cudaFree(y);
    return 0;
}
