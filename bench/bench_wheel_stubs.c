/* bench_wheel_stubs.c -- per-call cost of the stubs of the libraries that ship as wheels of their
 * own, against linking the libraries themselves (tests/gpu/wheel-libs-run.sh builds it twice:
 * with libcudaload-<lib>.a, and with -lcudnn -lnccl -lnvidia-ml -lcupti -lcusparseLt).
 *
 * Each call is one that returns at once without a GPU round trip: cudnnGetVersion,
 * ncclGetVersion, nvmlDeviceGetCount (after nvmlInit), cuptiGetVersion, cusparseLtGetProperty.
 * The first call of each (the stub's search and load) is made before timing. Prints, per call,
 * the median ns/call over 31 repetitions of N calls, the calls interleaved within a repetition. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>

#include <cudnn.h>
#include <cupti.h>
#include <cusparseLt.h>
#include <nccl.h>
#include <nvml.h>

#include "bench_clock.h"

enum { REPS = 31, N = 200000, NF = 5 };
static const char *const names[NF] = {"cudnnGetVersion", "ncclGetVersion", "nvmlDeviceGetCount", "cuptiGetVersion",
                                      "cusparseLtGetProperty"};

static volatile long sink;

static void call(int k) {
    int v = 0;
    unsigned u = 0;
    uint32_t c = 0;
    switch (k) {
    case 0: sink += (long)cudnnGetVersion(); break;
    case 1: ncclGetVersion(&v), sink += v; break;
    case 2: nvmlDeviceGetCount(&u), sink += u; break;
    case 3: cuptiGetVersion(&c), sink += c; break;
    case 4: cusparseLtGetProperty(MAJOR_VERSION, &v), sink += v; break;
    }
}

int main(void) {
    if (nvmlInit() != NVML_SUCCESS) {
        fprintf(stderr, "nvmlInit failed\n");
        return 1;
    }
    for (int k = 0; k < NF; k++) call(k); /* the stubs' first call: the search and the load */
    static double samples[NF][REPS];
    for (int r = 0; r < REPS; r++)
        for (int k = 0; k < NF; k++) {
            double t0 = now_ns();
            for (int i = 0; i < N; i++) call(k);
            samples[k][r] = (now_ns() - t0) / N;
        }
    for (int k = 0; k < NF; k++) {
        qsort(samples[k], REPS, sizeof(double), cmp_double);
        printf("%s %.2f\n", names[k], samples[k][REPS / 2]);
    }
    nvmlShutdown();
    return 0;
}
