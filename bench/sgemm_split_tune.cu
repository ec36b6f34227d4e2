/* SPDX-License-Identifier: Apache-2.0 */
// sgemm_split_tune.cu -- a developer tool, not part of the library: times every shipped tile
// of kernels/sgemm.cu (its NN entry points) at 1, 2, 3, 4 and 8 slices of split k, with the
// split-k reduction, against cuBLAS (linked directly: this tool only) on products of few tiles
// and on odd and padded ones,
// in one process, contenders alternating, medians of 15, the sum launched as libcudaload does (the split rule of
// libcudaload/sgemm_plan.c: docs/performance.md). Queued: a memset runs before each timed call, so
// the interval is the GPU's work alone (the main kernel's time is printed beside the total).
// Operands are random: timing only (sgemm_tune and make check-gpu check the results). Build and run on the GPU machine:
//   nvcc -O3 -std=c++17 -arch=sm_90 -Ikernels -o build/sgemm_split_tune bench/sgemm_split_tune.cu -lcublas
//   build/sgemm_split_tune
#include <algorithm>
#include <cstdio>
#include <vector>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include "sgemm.cu"
#include "sgemm_bench.cuh"
typedef void (*E)(int, int, int, float, const float *, long long, const float *, long long, float, float *, long long, int, long long);
struct T { const char *name; E fn; int bm, bn, th; bool vec; };
static T tiles[] = {{"256x128", cudaload_sgemm_256x128_nn, 256, 128, 256, true}, {"128x128", cudaload_sgemm_128x128_nn, 128, 128, 256, false},
                    {"128x64", cudaload_sgemm_128x64_nn, 128, 64, 128, true}, {"64x64", cudaload_sgemm_64x64_nn, 64, 64, 128, false},
                    {"128x128v", cudaload_sgemm_128x128v_nn, 128, 128, 128, true}};
int main() {
    cublasHandle_t h; cublasCreate(&h);
    int major = 0; cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
    dependent_launch = major >= 9;
    // m, n, k, extra rows on the leading dimensions (lda = m + pad, ldb = k + pad, ldc = m + pad)
    int shapes[][4] = {{256, 256, 256, 0},    {384, 384, 384, 0},     {512, 512, 512, 0},    {768, 768, 768, 0},
                       {1000, 1000, 1000, 0}, {1024, 1024, 1024, 0},  {1536, 1536, 1536, 0}, {256, 2048, 2048, 0},
                       {128, 8192, 8192, 0},  {256, 8192, 8192, 0},   {3001, 3001, 3001, 0}, {2048, 2048, 2048, 13},
                       {4097, 4097, 4097, 0}};
    cudaEvent_t a, mid, b; cudaEventCreate(&a); cudaEventCreate(&mid); cudaEventCreate(&b);
    float *W; cudaMalloc(&W, (size_t)512 << 20);
    // queued: this memset runs before each timed call, so the call's launches wait in the queue
    // when the first event fires and the interval is the GPU's work alone (gaps included)
    void *busy; const size_t busy_bytes = (size_t)64 << 20; cudaMalloc(&busy, busy_bytes);
    for (auto &s : shapes) {
        int m = s[0], n = s[1], k = s[2], lda = m + s[3], ldb = k + s[3], ldc = m + s[3];
        bool vec = lda % 4 == 0 && ldb % 4 == 0;
        float *A, *B, *C; cudaMalloc(&A, (size_t)lda * k * 4); cudaMalloc(&B, (size_t)ldb * n * 4); cudaMalloc(&C, (size_t)ldc * n * 4);
        fill<<<1024, 256>>>(A, (size_t)lda * k, 1); fill<<<1024, 256>>>(B, (size_t)ldb * n, 2);
        struct Cand { int t, s; };
        std::vector<Cand> cs;
        for (int t = 0; t < 5; t++) for (int sp : {1, 2, 3, 4, 8, 16}) {
            if (tiles[t].vec && !vec) continue;
            if (sp > 1 && (long long)sp * m * n * 4 > (512LL << 20)) continue;
            if (k / sp < 64) continue;  // the library's slices are at least 128 deep (CL_SPLIT_MIN_K); 64 to see below it
            cs.push_back({t, sp});
        }
        std::vector<std::vector<float>> tm(cs.size() + 1), tmain(cs.size() + 1);
        float one = 1, zero = 0;
        for (int r = 0; r < 18; r++)
            for (size_t c0 = 0; c0 <= cs.size(); c0++) {
                size_t c = (c0 + r) % (cs.size() + 1);
                cudaMemsetAsync(busy, r, busy_bytes);
                cudaEventRecord(a);
                if (c == cs.size()) {
                    cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, A, lda, B, ldb, &zero, C, ldc);
                    cudaEventRecord(mid);
                } else {
                    T &t = tiles[cs[c].t]; int sp = cs[c].s;
                    dim3 g((m + t.bm - 1) / t.bm, (n + t.bn - 1) / t.bn, sp);
                    if (sp == 1) {
                        t.fn<<<g, t.th>>>(m, n, k, 1.f, A, lda, B, ldb, 0.f, C, ldc, k, 0);
                        cudaEventRecord(mid);
                    } else {
                        int kc = ((k + sp - 1) / sp + 15) & ~15; sp = (k + kc - 1) / kc; g.z = sp;
                        long long ws = (long long)m * n;
                        t.fn<<<g, t.th>>>(m, n, k, 1.f, A, lda, B, ldb, 0.f, W, m, kc, ws);
                        cudaEventRecord(mid);
                        launch_sum(cudaload_sgemm_splitk_reduce, sum_blocks(m, n), m, n, sp, (const float *)W, ws, 1.f, 0.f, C, (long long)ldc);
                    }
                }
                cudaEventRecord(b); cudaEventSynchronize(b);
                float ms, ms1; cudaEventElapsedTime(&ms, a, b); cudaEventElapsedTime(&ms1, a, mid);
                if (r >= 3) tm[c].push_back(ms), tmain[c].push_back(ms1);
            }
        if (cudaDeviceSynchronize() != cudaSuccess) { printf("error\n"); return 1; }
        float cb = med(tm[cs.size()]);
        printf("NN %dx%dx%d pad %d cuBLAS %.1f us (queued)\n", m, n, k, s[3], cb * 1e3);
        for (size_t c = 0; c < cs.size(); c++)
            printf("   %-8s split %-2d %8.1f us (main %8.1f)  %.3fx\n", tiles[cs[c].t].name, cs[c].s, med(tm[c]) * 1e3,
                   med(tmain[c]) * 1e3, cb / med(tm[c]));
        fflush(stdout);
        cudaFree(A); cudaFree(B); cudaFree(C);
    }
}
