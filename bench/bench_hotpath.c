/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_hotpath.c -- libcudaload's own host cost per small call, without a GPU: on the fake
 * driver (tests/fake/fake_cuda.c, whose cuLaunchKernel does nothing but count), the time of
 * cudaload_sgemm(16^3) and cudaload_saxpy(n = 1) against a raw cuLaunchKernel of the same
 * kernel. On the H100 the launch itself costs 3.3-4.4 us (bench_launch); the difference
 * measured here is what libcudaload adds to it. 11 rounds of N calls per contender, the
 * contenders alternating; medians.
 *
 * usage (make bench-hotpath builds the fake driver and the fixtures, then runs it):
 *   CUDALOAD_DRIVER_PATH=build/fake/launch/libcuda.so.1 FAKE_CUDA_CC=90 FAKE_CUDA_DEVICES=1 \
 *     build/bench/bench_hotpath build/fixtures/toolkit-cu13-wheel [N]
 */
#include "bench_clock.h"
#include "cudaload_tables.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

extern const unsigned char cl_fatbin_start[];

enum { OURS_SGEMM, OURS_SAXPY, RAW_LAUNCH, NCONT, ROUNDS = 11 };

int main(int argc, char **argv) {
    if (argc < 2 || !getenv("CUDALOAD_DRIVER_PATH")) {
        fprintf(stderr, "usage: CUDALOAD_DRIVER_PATH=<fake launch driver> %s ROOT [N]\n", argv[0]);
        return 2;
    }
    int n_calls = argc > 2 ? atoi(argv[2]) : 200000;
    const char *roots[] = {argv[1], NULL};
    cudaload_options o;
    cudaload_options_init(&o);
    o.roots = roots;
    o.n_roots = 1;
    o.sources = CUDALOAD_SOURCE_BIT(CUDALOAD_SOURCE_CALLER);
    if (cudaload_init(&o) != CUDALOAD_OK || cudaload_set_backend(CUDALOAD_BACKEND_BUNDLED) != CUDALOAD_OK) {
        fprintf(stderr, "cudaload_init: %s\n", cudaload_last_error());
        return 1;
    }
    /* the fake driver's device memory: pointers that cuPointerGetAttribute knows */
    void *h = dlopen(getenv("CUDALOAD_DRIVER_PATH"), RTLD_NOW | RTLD_NOLOAD);
    void *(*devptr)(int, unsigned long long) = h ? (void *(*)(int, unsigned long long))dlsym(h, "fake_cuda_devptr") : NULL;
    if (!devptr) {
        fprintf(stderr, "%s is not the fake launch driver (no fake_cuda_devptr)\n", getenv("CUDALOAD_DRIVER_PATH"));
        return 1;
    }
    float *A = devptr(0, 0), *B = devptr(0, 4096), *C = devptr(0, 8192);
    if (cudaload_sgemm(CUDALOAD_OP_N, CUDALOAD_OP_N, 16, 16, 16, 1.f, A, 16, B, 16, 0.f, C, 16, NULL) != CUDALOAD_OK) {
        fprintf(stderr, "cudaload_sgemm: %s\n", cudaload_last_error());
        return 1;
    }
    /* the raw contender: the kernel the plan takes for 16^3, from the same fatbin, in the
     * primary context (current, as it is for the library's calls) */
    const cudaload_driver_table *d = cudaload_driver();
    CUcontext ctx = NULL;
    CUdevice dev;
    CUmodule mod;
    CUfunction fn;
    if (d->cuDeviceGet(&dev, 0) || d->cuDevicePrimaryCtxRetain(&ctx, dev) || d->cuCtxPushCurrent(ctx) ||
        d->cuModuleLoadData(&mod, cl_fatbin_start) || d->cuModuleGetFunction(&fn, mod, "cudaload_sgemm_64x64_nn")) {
        fprintf(stderr, "loading the fatbin for the raw launch failed\n");
        return 1;
    }
    int m = 16;
    float one = 1.0f, zero = 0.0f;
    long long ld = 16, no_split = 0;
    void *args[] = {&m, &m, &m, &one, &A, &ld, &B, &ld, &zero, &C, &ld, &m, &no_split};
    static const char *const names[NCONT] = {"cudaload_sgemm 16^3", "cudaload_saxpy n=1", "raw cuLaunchKernel"};
    double t[NCONT][ROUNDS];
    for (int r = 0; r < ROUNDS; r++)
        for (int c0 = 0; c0 < NCONT; c0++) {
            int c = (c0 + r) % NCONT, bad = 0;
            double t0 = now_ns();
            for (int i = 0; i < n_calls; i++) {
                if (c == OURS_SGEMM)
                    bad |= cudaload_sgemm(CUDALOAD_OP_N, CUDALOAD_OP_N, 16, 16, 16, 1.f, A, 16, B, 16, 0.f, C, 16, NULL);
                else if (c == OURS_SAXPY)
                    bad |= cudaload_saxpy(1, 1.f, A, B, NULL);
                else
                    bad |= d->cuLaunchKernel(fn, 1, 1, 1, 128, 1, 1, 0, NULL, args, NULL);
            }
            t[c][r] = (now_ns() - t0) / n_calls;
            if (bad) {
                fprintf(stderr, "%s failed\n", names[c]);
                return 1;
            }
        }
    double med[NCONT];
    for (int c = 0; c < NCONT; c++) {
        qsort(t[c], ROUNDS, sizeof(double), cmp_double);
        med[c] = t[c][ROUNDS / 2];
        printf("%-22s %7.1f ns per call (median of %d rounds of %d)\n", names[c], med[c], ROUNDS, n_calls);
    }
    printf("libcudaload's own cost: SGEMM 16^3 %.1f ns, SAXPY n=1 %.1f ns over the raw launch\n",
           med[OURS_SGEMM] - med[RAW_LAUNCH], med[OURS_SAXPY] - med[RAW_LAUNCH]);
    return 0;
}
