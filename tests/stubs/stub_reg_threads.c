/* SPDX-License-Identifier: Apache-2.0 */
/* stub_reg_threads.c -- nvcc's registration entry points of the cudart stub called from many
 * threads while another thread's first call loads the runtime and replays what was kept
 * (test_stubs.c: test_registrations_race_the_replay; under ASan and TSan by make check-sanitize
 * and check-tsan). The fatbinary is a file nvcc made (argv[1]: libcudaload's bundled kernels,
 * build/kernels/cudaload.fatbin), registered as nvcc's constructors register theirs.
 *   Before main's load, 64 fatbinaries are registered and kept. Then 8 threads register, add a
 *   function, end, and unregister fatbinaries in a loop (half of the kept ones too, while the
 *   replay may be walking them), and the main thread loads the runtime (cudaRuntimeGetVersion).
 * Prints key=value; exit 0 when the runtime loaded and the counts add up. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>

#include "cudaload_stubs.h"


/* nvcc's wrapper of a fatbinary (crt/host_runtime.h's __fatBinC_Wrapper_t) */
typedef struct {
    int magic;
    int version;
    const void *data;
    void *filename_or_fatbins;
} fatbin_wrapper;
static fatbin_wrapper wrapper;

void **__cudaRegisterFatBinary(void *fatCubin);
void __cudaRegisterFatBinaryEnd(void **fatCubinHandle);
void __cudaUnregisterFatBinary(void **fatCubinHandle);
void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun, const char *deviceName,
                            int thread_limit, uint3 *tid, uint3 *bid, dim3 *bDim, dim3 *gDim, int *wSize);

#define KEPT 64
#define THREADS 8
#define ROUNDS 200
static void **kept[KEPT];
static char host_fn[THREADS][1];
static pthread_barrier_t start;
static atomic_int bad;

static void **reg(int i) {
    void **h = __cudaRegisterFatBinary(&wrapper);
    if (!h) return NULL;
    __cudaRegisterFunction(h, host_fn[i % THREADS], (char *)"cl_no_such_kernel", "cl_no_such_kernel", -1, NULL, NULL,
                           NULL, NULL, NULL);
    __cudaRegisterFatBinaryEnd(h);
    return h;
}

static void *worker(void *arg) {
    int i = (int)(long)arg;
    pthread_barrier_wait(&start);
    /* half of the kept records, unregistered while the replay may walk them */
    for (int k = i; k < KEPT / 2; k += THREADS) __cudaUnregisterFatBinary(kept[k]);
    for (int r = 0; r < ROUNDS; r++) {
        void **h = reg(i);
        if (!h) atomic_fetch_add(&bad, 1);
        else __cudaUnregisterFatBinary(h);
    }
    return NULL;
}

int main(int argc, char **argv) {
    FILE *f = argc > 1 ? fopen(argv[1], "rb") : NULL;
    static unsigned char data[16 << 20] __attribute__((aligned(16)));
    size_t got = f ? fread(data, 1, sizeof data, f) : 0;
    if (f) fclose(f);
    if (got == 0 || got == sizeof data) {
        fprintf(stderr, "usage: stub_reg_threads FATBIN (a fatbinary file under 16 MiB)\n");
        return 2;
    }
    wrapper = (fatbin_wrapper){0x466243b1, 1, data, NULL};
    for (int k = 0; k < KEPT; k++) kept[k] = reg(k);
    size_t fatbins = 0, still = 0;
    cudaload_stub_registrations(&fatbins, &still);
    printf("kept_before=%zu\n", still);
    pthread_t t[THREADS];
    pthread_barrier_init(&start, NULL, THREADS + 1);
    for (long i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, worker, (void *)i);
    pthread_barrier_wait(&start);
    int v = 0;
    cudaError_t e = cudaRuntimeGetVersion(&v);
    for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
    cudaload_stub_registrations(&fatbins, &still);
    printf("runtime_err=%d\nruntime_version=%d\nfatbins_after=%zu\nkept_after=%zu\nregister_errors=%d\n", (int)e, v,
           fatbins, still, atomic_load(&bad));
    for (int k = KEPT / 2; k < KEPT; k++) __cudaUnregisterFatBinary(kept[k]);
    cudaload_stub_registrations(&fatbins, &still);
    printf("fatbins_end=%zu\n", fatbins);
    return 0;
}
