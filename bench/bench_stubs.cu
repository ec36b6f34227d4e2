/* SPDX-License-Identifier: Apache-2.0 */
// bench_stubs.cu -- per-call host cost of ordinary CUDA code linked to libcudaload's stubs
// against the same code linked directly to libcudart/libcublas (bench/run-stubs.sh).
//
// Built twice from this file: bench_stubs (nvcc -cudart none, the stubs + libcudaload.a) and
// bench_stubs_direct (-lcudart -lcublas from the same directory the stub build is pointed at
// with CUDALOAD_PATH). The two cannot share a process (both define cudaStreamQuery), so
// run-stubs.sh runs them interleaved. Each prints one line per measurement:
//   <name> <median ns per call over REPS repetitions of CALLS calls>
// and, for the stub build, the first call (search + load + replay) in microseconds.
//   cudaStreamQuery(0)               a call that does almost nothing: the stub's whole overhead
//   launch of an empty kernel <<<>>> push/pop configuration, __cudaGetKernel, __cudaLaunchKernel
//   cublasSgemm 16x16x16             through two stubs' tables (cuBLAS calling the runtime itself)
// Launches and GEMMs are synchronised every CALLS calls, outside the timed region.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>
#include <cublas_v2.h>
#include <cuda_runtime.h>

__global__ void empty_kernel() {}

static double now_ns() {
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

template <class F> static double median_ns(int reps, int calls, F f, bool sync) {
    std::vector<double> v;
    for (int r = 0; r < reps; r++) {
        double t0 = now_ns();
        for (int i = 0; i < calls; i++) f();
        double t1 = now_ns();
        if (sync) cudaDeviceSynchronize();
        v.push_back((t1 - t0) / calls);
    }
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 31, calls = argc > 2 ? atoi(argv[2]) : 10000;
    double t0 = now_ns();
    int v = 0;
    if (cudaRuntimeGetVersion(&v) != cudaSuccess) { fprintf(stderr, "no runtime\n"); return 1; }
    printf("first_call_us %.1f\n", (now_ns() - t0) / 1e3);
    if (cudaFree(0) != cudaSuccess) { fprintf(stderr, "no device\n"); return 1; }
    float *a, *b, *c;
    cudaMalloc(&a, 16 * 16 * 4); cudaMalloc(&b, 16 * 16 * 4); cudaMalloc(&c, 16 * 16 * 4);
    cudaMemset(a, 0, 1024); cudaMemset(b, 0, 1024); cudaMemset(c, 0, 1024);
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) { fprintf(stderr, "no cublas\n"); return 1; }
    float one = 1.0f, zero = 0.0f;
    // warm-up: the kernel's module, cuBLAS's kernels
    empty_kernel<<<1, 1>>>();
    cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 16, 16, 16, &one, a, 16, b, 16, &zero, c, 16);
    cudaDeviceSynchronize();
    printf("cudaStreamQuery %.2f\n", median_ns(reps, calls * 10, [] { (void)cudaStreamQuery(0); }, false));
    printf("launch_empty_kernel %.2f\n", median_ns(reps, calls, [] { empty_kernel<<<1, 1>>>(); }, true));
    printf("cublasSgemm_16 %.2f\n", median_ns(reps, calls, [&] {
        cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 16, 16, 16, &one, a, 16, b, 16, &zero, c, 16); }, true));
    int err = (int)cudaGetLastError();
    cublasDestroy(h);
    return err;
}
