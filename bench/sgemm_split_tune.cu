// sgemm_split_tune.cu -- a developer tool, not part of the library: times every shipped tile
// of kernels/sgemm.cu (its NN entry points) at 1, 2, 3, 4 and 8 slices of split k, with the
// split-k reduction, against cuBLAS (linked directly: this tool only) on products of few tiles
// and on odd and padded ones,
// in one process, contenders alternating, medians of 15 (the split rule of
// libcudaload/kernels.c: docs/performance.md). Operands are zeros: timing only (sgemm_tune and
// make check-gpu check the results). Build and run on the GPU machine:
//   nvcc -O3 -std=c++17 -arch=sm_90 -Ikernels -o build/sgemm_split_tune bench/sgemm_split_tune.cu -lcublas
//   build/sgemm_split_tune
#include <algorithm>
#include <cstdio>
#include <vector>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include "sgemm.cu"
typedef void (*E)(int, int, int, float, const float *, long long, const float *, long long, float, float *, long long, int, long long);
struct T { const char *name; E fn; int bm, bn, th; bool vec; };
static T tiles[] = {{"256x128", cudaload_sgemm_256x128_nn, 256, 128, 256, true}, {"128x128", cudaload_sgemm_128x128_nn, 128, 128, 256, false},
                    {"128x64", cudaload_sgemm_128x64_nn, 128, 64, 128, true}, {"64x64", cudaload_sgemm_64x64_nn, 64, 64, 128, false}};
static float med(std::vector<float> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }
int main() {
    cublasHandle_t h; cublasCreate(&h);
    // m, n, k, extra rows on the leading dimensions (lda = m + pad, ldb = k + pad, ldc = m + pad)
    int shapes[][4] = {{128, 8192, 8192, 0}, {256, 8192, 8192, 0}, {1000, 1000, 1000, 0}, {1024, 1024, 1024, 0},
                       {512, 512, 512, 0},   {256, 2048, 2048, 0}, {3001, 3001, 3001, 0}, {2048, 2048, 2048, 13},
                       {4097, 4097, 4097, 0}};
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    float *W; cudaMalloc(&W, (size_t)512 << 20);
    for (auto &s : shapes) {
        int m = s[0], n = s[1], k = s[2], lda = m + s[3], ldb = k + s[3], ldc = m + s[3];
        bool vec = lda % 4 == 0 && ldb % 4 == 0;
        float *A, *B, *C; cudaMalloc(&A, (size_t)lda * k * 4); cudaMalloc(&B, (size_t)ldb * n * 4); cudaMalloc(&C, (size_t)ldc * n * 4);
        cudaMemset(A, 0, (size_t)lda * k * 4); cudaMemset(B, 0, (size_t)ldb * n * 4);
        struct Cand { int t, s; };
        std::vector<Cand> cs;
        for (int t = 0; t < 4; t++) for (int sp : {1, 2, 3, 4, 8}) {
            if (tiles[t].vec && !vec) continue;
            if (sp > 1 && (long long)sp * m * n * 4 > (512LL << 20)) continue;
            if (k / sp < 128) continue;
            cs.push_back({t, sp});
        }
        std::vector<std::vector<float>> tm(cs.size() + 1);
        float one = 1, zero = 0;
        for (int r = 0; r < 18; r++)
            for (size_t c0 = 0; c0 <= cs.size(); c0++) {
                size_t c = (c0 + r) % (cs.size() + 1);
                cudaEventRecord(a);
                if (c == cs.size()) cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, A, lda, B, ldb, &zero, C, ldc);
                else {
                    T &t = tiles[cs[c].t]; int sp = cs[c].s;
                    dim3 g((m + t.bm - 1) / t.bm, (n + t.bn - 1) / t.bn, sp);
                    if (sp == 1) t.fn<<<g, t.th>>>(m, n, k, 1.f, A, lda, B, ldb, 0.f, C, ldc, k, 0);
                    else {
                        int kc = ((k + sp - 1) / sp + 15) & ~15; sp = (k + kc - 1) / kc; g.z = sp;
                        long long ws = (long long)m * n;
                        t.fn<<<g, t.th>>>(m, n, k, 1.f, A, lda, B, ldb, 0.f, W, m, kc, ws);
                        cudaload_sgemm_splitk_reduce<<<dim3((m + 255) / 256, n), 256>>>(m, n, sp, W, ws, 1.f, 0.f, C, ldc);
                    }
                }
                cudaEventRecord(b); cudaEventSynchronize(b);
                float ms; cudaEventElapsedTime(&ms, a, b);
                if (r >= 3) tm[c].push_back(ms);
            }
        if (cudaDeviceSynchronize() != cudaSuccess) { printf("error\n"); return 1; }
        float cb = med(tm[cs.size()]);
        printf("NN %dx%dx%d pad %d cuBLAS %.1f us\n", m, n, k, s[3], cb * 1e3);
        for (size_t c = 0; c < cs.size(); c++) printf("   %-8s split %d  %8.1f us  %.3fx\n", tiles[cs[c].t].name, cs[c].s, med(tm[c]) * 1e3, cb / med(tm[c]));
        cudaFree(A); cudaFree(B); cudaFree(C);
    }
}
