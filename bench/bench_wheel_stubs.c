/* SPDX-License-Identifier: Apache-2.0 */
/* bench_wheel_stubs.c -- per-call cost of the stubs of the libraries that ship as wheels of their
 * own, against linking the libraries themselves (tests/gpu/wheel-libs-run.sh builds it twice:
 * with libcudaload-<lib>.a, and with -lcudnn -lnccl -lnvidia-ml -lcupti -lcusparseLt).
 *
 * The calls: the cheapest each library has (its version; nvmlDeviceGetCount), where the stub's
 * own 1-2 ns (an acquire load, a NULL test, an indirect jump) is a large share, and calls of the
 * weight a program makes (a cuDNN tensor descriptor made, set and destroyed; NVML's memory
 * query of a device; CUPTI's timestamp; a cuSPARSELt dense descriptor made and destroyed; an
 * empty NCCL group), each name one token. The first call of each (the stub's search and load)
 * is made before timing. Prints, per call, the median ns per iteration over 31 repetitions of
 * n iterations, the calls interleaved within a repetition. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cudnn.h>
#include <cupti.h>
#include <cusparseLt.h>
#include <nccl.h>
#include <nvml.h>

#include "bench_clock.h"

enum { REPS = 31, NF = 10 };
static const char *const names[NF] = {"cudnnGetVersion", "ncclGetVersion", "nvmlDeviceGetCount", "cuptiGetVersion",
                                      "cusparseLtGetProperty", "cudnnTensorDescriptor_create_set_destroy",
                                      "nvmlDeviceGetMemoryInfo", "cuptiGetTimestamp",
                                      "cusparseLtDenseDescriptor_init_destroy", "ncclGroupStart_End"};
static const int iters[NF] = {200000, 200000, 200000, 200000, 200000, 50000, 5000, 200000, 50000, 200000};

static volatile long sink;
static nvmlDevice_t dev;
static cusparseLtHandle_t lt;

static void call(int k) {
    int v = 0;
    unsigned u = 0;
    uint32_t c = 0;
    uint64_t ts = 0;
    cudnnTensorDescriptor_t td;
    nvmlMemory_t mem;
    cusparseLtMatDescriptor_t md;
    switch (k) {
    case 0: sink += (long)cudnnGetVersion(); break;
    case 1: ncclGetVersion(&v), sink += v; break;
    case 2: nvmlDeviceGetCount(&u), sink += u; break;
    case 3: cuptiGetVersion(&c), sink += c; break;
    case 4: cusparseLtGetProperty(MAJOR_VERSION, &v), sink += v; break;
    case 5:
        sink += cudnnCreateTensorDescriptor(&td);
        sink += cudnnSetTensor4dDescriptor(td, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 3, 17, 19);
        sink += cudnnDestroyTensorDescriptor(td);
        break;
    case 6: sink += nvmlDeviceGetMemoryInfo(dev, &mem), sink += (long)mem.total; break;
    case 7: cuptiGetTimestamp(&ts), sink += (long)ts; break;
    case 8:
        sink += cusparseLtDenseDescriptorInit(&lt, &md, 64, 64, 64, 16, CUDA_R_32F, CUSPARSE_ORDER_ROW);
        sink += cusparseLtMatDescriptorDestroy(&md);
        break;
    case 9: sink += ncclGroupStart(), sink += ncclGroupEnd(); break;
    }
}

int main(void) {
    if (nvmlInit() != NVML_SUCCESS || nvmlDeviceGetHandleByIndex(0, &dev) != NVML_SUCCESS) {
        fprintf(stderr, "nvmlInit or nvmlDeviceGetHandleByIndex failed\n");
        return 1;
    }
    if (cusparseLtInit(&lt) != CUSPARSE_STATUS_SUCCESS) {
        fprintf(stderr, "cusparseLtInit failed\n");
        return 1;
    }
    for (int k = 0; k < NF; k++) call(k); /* the stubs' first call: the search and the load */
    static double samples[NF][REPS];
    for (int r = 0; r < REPS; r++)
        for (int k = 0; k < NF; k++) {
            double t0 = now_ns();
            for (int i = 0; i < iters[k]; i++) call(k);
            samples[k][r] = (now_ns() - t0) / iters[k];
        }
    for (int k = 0; k < NF; k++) {
        qsort(samples[k], REPS, sizeof(double), cmp_double);
        printf("%s %.2f\n", names[k], samples[k][REPS / 2]);
    }
    cusparseLtDestroy(&lt);
    nvmlShutdown();
    return 0;
}
