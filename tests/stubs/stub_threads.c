/* SPDX-License-Identifier: Apache-2.0 */
/* stub_threads.c -- first calls into several stubs from many threads at once, then fork while
 * threads call (test_stubs.c; built plain and with ASan/TSan by make check). The libraries come
 * from the environment's search (CUDALOAD_SOURCES=cuda_home, the toolkit).
 *   16 threads start together; thread i first calls the runtime (cudaRuntimeGetVersion), cuBLAS
 *   (cublasGetProperty) or cuRAND (curandGetVersion), by i % 3, then all three.
 *   Then 4 threads call in a loop while the main thread forks 8 times; each child makes the
 *   three calls and exits with their outcome.
 * Prints key=value; exit 0 when every call returned the library's version. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <curand.h>

#define N 16
static pthread_barrier_t start;
static atomic_int bad, stop;

static int calls(int first) {
    int v = 0, errors = 0;
    for (int k = 0; k < 3; k++) {
        switch ((first + k) % 3) {
        case 0: errors += cudaRuntimeGetVersion(&v) != cudaSuccess || v / 1000 != 13; break;
        case 1: errors += cublasGetProperty(MAJOR_VERSION, &v) != CUBLAS_STATUS_SUCCESS || v != 13; break;
        default: errors += curandGetVersion(&v) != CURAND_STATUS_SUCCESS || v < 10000; break;
        }
    }
    return errors;
}

static void *first_caller(void *arg) {
    pthread_barrier_wait(&start);
    atomic_fetch_add(&bad, calls((int)(long)arg % 3));
    return NULL;
}

static void *busy_caller(void *arg) {
    (void)arg;
    while (!atomic_load(&stop)) atomic_fetch_add(&bad, calls(0));
    return NULL;
}

int main(void) {
    pthread_t t[N];
    pthread_barrier_init(&start, NULL, N);
    for (long i = 0; i < N; i++) pthread_create(&t[i], NULL, first_caller, (void *)i);
    for (int i = 0; i < N; i++) pthread_join(t[i], NULL);
    printf("first_call_errors=%d\n", atomic_load(&bad));
    int first = atomic_load(&bad);
    for (long i = 0; i < 4; i++) pthread_create(&t[i], NULL, busy_caller, NULL);
    int child_errors = 0;
    for (int f = 0; f < 8; f++) {
        pid_t pid = fork();
        if (pid == 0) _exit(calls(f % 3));
        int st = 0;
        if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) child_errors++;
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    printf("busy_call_errors=%d\nchild_errors=%d\n", atomic_load(&bad) - first, child_errors);
    return atomic_load(&bad) || child_errors;
}
