// sgemm_tune.cu -- a developer tool, not part of the library: times configurations of
// kernels/sgemm.cu against cuBLAS (linked directly: this tool only) on the GPU at hand, to
// choose the configurations libcudaload ships, after checking each against cuBLAS on odd
// shapes in all four transpose cases (aligned and unaligned operands, beta 0 and not).
// Build and run on the GPU machine (a libcublas from the pip wheels works as well):
//   nvcc -O3 -std=c++17 -arch=sm_90 -o build/sgemm_tune bench/sgemm_tune.cu -Ikernels -lcublas && build/sgemm_tune
// Arguments: [size [variant]]: only that size (0: the default sizes), only that variant
// (for the profiler: 2 timed runs).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#define CUDALOAD_SGEMM_NO_ENTRIES
#include "sgemm.cu"

typedef void (*sgemm_fn)(int, int, int, float, const float *, long long, const float *, long long, float, float *, long long,
                         int, int);

template <int BM, int BN, int BK, int TM, int TN, int LM, int ST, bool F4, int MINB, bool TA, bool TB>
__global__ void __launch_bounds__(CUDALOAD_SGEMM_THREADS(BM, BN, TM, TN, LM), MINB)
tune(int m, int n, int k, float alpha, const float *A, long long lda, const float *B, long long ldb, float beta, float *C,
     long long ldc, int va, int vb) {
    sgemm_body<BM, BN, BK, TM, TN, LM, ST, F4, TA, TB>(m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, va, vb);
}

struct Variant {
    const char *name;
    sgemm_fn fn[4];  // nn, nt, tn, tt
    int bm, bn, threads;
};
#define TUNE_FN(BM, BN, BK, TM, TN, LM, ST, F4, MINB, TA, TB) tune<BM, BN, BK, TM, TN, LM, ST, F4, MINB, TA, TB>
#define TUNE_NAME(BM, BN, BK, TM, TN, LM, ST, F4, MINB) \
    #BM "x" #BN "x" #BK " t" #TM "x" #TN " lm" #LM " st" #ST " minb" #MINB " fast4 " #F4
// BM x BN x BK tile, TM x TN per thread, LM lanes along m, ST stages, F4 (FAST4 of
// sgemm_body), MINB blocks per SM for __launch_bounds__; all four transpose cases.
#define V(BM, BN, BK, TM, TN, LM, ST, F4, MINB)                                                                             \
    {TUNE_NAME(BM, BN, BK, TM, TN, LM, ST, F4, MINB),                                                                       \
     {TUNE_FN(BM, BN, BK, TM, TN, LM, ST, F4, MINB, false, false), TUNE_FN(BM, BN, BK, TM, TN, LM, ST, F4, MINB, false, true), \
      TUNE_FN(BM, BN, BK, TM, TN, LM, ST, F4, MINB, true, false), TUNE_FN(BM, BN, BK, TM, TN, LM, ST, F4, MINB, true, true)},  \
     BM, BN, CUDALOAD_SGEMM_THREADS(BM, BN, TM, TN, LM)}

static Variant vs[] = {
    V(256, 128, 8, 16, 8, 4, 2, false, 1),  // 0: shipped, large problems (cudaload_sgemm_256x128_*)
    V(128, 64, 16, 8, 8, 8, 3, true, 2),   // 1: shipped, small problems and unaligned operands (cudaload_sgemm_128x64_*)
#ifndef TUNE_SHIPPED_ONLY  // -DTUNE_SHIPPED_ONLY: only the shipped two (quicker to build)
    V(256, 128, 8, 16, 8, 4, 2, true, 1),  V(128, 64, 16, 8, 8, 8, 3, false, 2),  V(256, 128, 8, 16, 8, 4, 3, false, 1),
    V(256, 128, 8, 16, 8, 8, 3, false, 1),  V(128, 256, 8, 8, 16, 4, 3, false, 1), V(128, 256, 8, 8, 16, 8, 4, false, 1),
    V(128, 128, 8, 16, 8, 4, 3, false, 2),  V(128, 128, 8, 8, 8, 8, 3, false, 2),  V(128, 128, 16, 8, 8, 8, 3, false, 2),
    V(64, 128, 16, 8, 8, 4, 3, true, 2),   V(128, 64, 16, 8, 8, 8, 4, true, 2),  V(64, 64, 8, 4, 8, 8, 4, true, 4),
#endif
};
static const int NV = (int)(sizeof vs / sizeof vs[0]);

static float median(std::vector<float> &v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

static void launch(const Variant &v, int which, int m, int n, int k, float alpha, const float *A, long long lda,
                   const float *B, long long ldb, float beta, float *C, long long ldc) {
    int va = ((uintptr_t)A % 16 == 0) && lda % 4 == 0, vb = ((uintptr_t)B % 16 == 0) && ldb % 4 == 0;
    dim3 grid((m + v.bm - 1) / v.bm, (n + v.bn - 1) / v.bn);
    v.fn[which]<<<grid, v.threads>>>(m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, va, vb);
}

// Check a variant against cuBLAS on odd shapes, all transposes; returns the worst error
// relative to sum |a||b| (about 1e-6 when right).
static double check(const Variant &v, cublasHandle_t h) {
    const int shapes[][3] = {{257, 131, 77}, {128, 256, 64}, {300, 517, 1000}, {1, 1, 1}, {129, 65, 13}, {64, 128, 8}, {520, 300, 203}};
    double worst = 0;
    for (auto &sh : shapes)
        for (int which = 0; which < 4; which++)
            for (int variant = 0; variant < 3 && v.fn[which]; variant++) {  // 0: aligned, ld % 4 == 0; 1: ld odd; 2: pointers off by 1
                int m = sh[0], n = sh[1], k = sh[2];
                bool ta = which & 2, tb = which & 1;
                long long ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
                long long pad = variant == 1 ? 3 : 4;
                long long lda = ar + pad, ldb = br + pad, ldc = m + pad - 1;
                int off = variant == 2 ? 1 : 0;
                size_t na = lda * ac + 4, nb = ldb * bc + 4, nc = ldc * n + 4;
                std::vector<float> ha(na), hb(nb), hc(nc), r1(nc), r2(nc);
                for (auto &x : ha) x = (float)(rand() % 2001) / 1000.f - 1.f;
                for (auto &x : hb) x = (float)(rand() % 2001) / 1000.f - 1.f;
                for (auto &x : hc) x = (float)(rand() % 2001) / 1000.f - 1.f;
                float *A, *B, *C1, *C2;
                cudaMalloc(&A, na * 4), cudaMalloc(&B, nb * 4), cudaMalloc(&C1, nc * 4), cudaMalloc(&C2, nc * 4);
                cudaMemcpy(A, ha.data(), na * 4, cudaMemcpyHostToDevice);
                cudaMemcpy(B, hb.data(), nb * 4, cudaMemcpyHostToDevice);
                cudaMemcpy(C1, hc.data(), nc * 4, cudaMemcpyHostToDevice);
                cudaMemcpy(C2, hc.data(), nc * 4, cudaMemcpyHostToDevice);
                float alpha = 1.25f, beta = (m + variant) % 2 ? 0.5f : 0.f;
                cublasSgemm(h, ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb ? CUBLAS_OP_T : CUBLAS_OP_N, m, n, k, &alpha, A + off,
                            (int)lda, B + off, (int)ldb, &beta, C1 + off, (int)ldc);
                if (beta == 0.f) cudaMemset(C2, 0xff, nc * 4);  // NaN: must not be read
                launch(v, which, m, n, k, alpha, A + off, lda, B + off, ldb, beta, C2 + off, ldc);
                cudaError_t e = cudaDeviceSynchronize();
                if (e != cudaSuccess) {
                    printf("  %s: launch error %s\n", v.name, cudaGetErrorName(e));
                    exit(1);
                }
                cudaMemcpy(r1.data(), C1, nc * 4, cudaMemcpyDeviceToHost);
                cudaMemcpy(r2.data(), C2, nc * 4, cudaMemcpyDeviceToHost);
                for (int j = 0; j < n; j++)
                    for (int i = 0; i < m; i++) {
                        size_t at = off + i + (size_t)j * ldc;
                        double d = std::fabs((double)r1[at] - r2[at]) / (k * 1.25 + 1);
                        if (!(d <= worst)) worst = std::isnan(d) ? 1e30 : d;
                    }
                cudaFree(A), cudaFree(B), cudaFree(C1), cudaFree(C2);
            }
    return worst;
}

int main(int argc, char **argv) {
    std::vector<int> sizes = {1024, 4096, 8192, 3001};
    if (argc > 1 && atoi(argv[1]) > 0) sizes = {atoi(argv[1])};
    int only = argc > 2 ? atoi(argv[2]) : -1;
    const char *ops[] = {"nn", "nt", "tn", "tt"};
    cublasHandle_t h;
    cublasCreate(&h);
    for (int vi = 0; vi < NV; vi++) {
        if (only >= 0 && vi != only) continue;
        cudaFuncAttributes at;
        cudaFuncGetAttributes(&at, vs[vi].fn[0]);
        double err = check(vs[vi], h);
        printf("variant %2d %-34s regs %3d smem %5zu  check: max rel err %.2e %s\n", vi, vs[vi].name, at.numRegs,
               at.sharedSizeBytes, err, err < 1e-5 ? "ok" : "FAIL");
    }
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    for (int s : sizes) {
        size_t nn = (size_t)s * s;
        float *A, *B, *C;
        cudaMalloc(&A, nn * 4), cudaMalloc(&B, nn * 4), cudaMalloc(&C, nn * 4);
        std::vector<float> hbuf(nn);
        for (size_t i = 0; i < nn; i++) hbuf[i] = (float)(rand() % 1000) / 1000.f - 0.5f;
        cudaMemcpy(A, hbuf.data(), nn * 4, cudaMemcpyHostToDevice);
        cudaMemcpy(B, hbuf.data(), nn * 4, cudaMemcpyHostToDevice);
        float one = 1, zero = 0;
        double flop = 2.0 * s * (double)s * s;
        int reps = only >= 0 ? 2 : s >= 8192 ? 10 : s >= 3000 ? 20 : 50;
        auto time_it = [&](auto &&call) {
            std::vector<float> t;
            for (int w = 0; w < 2; w++) call();
            for (int r = 0; r < reps; r++) {
                cudaEventRecord(a);
                call();
                cudaEventRecord(b);
                cudaEventSynchronize(b);
                float ms;
                cudaEventElapsedTime(&ms, a, b);
                t.push_back(ms);
            }
            return median(t);
        };
        float cub = time_it([&] { cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, s, s, s, &one, A, s, B, s, &zero, C, s); });
        printf("size %d: cuBLAS %.1f TFLOP/s (nn)\n", s, flop / cub / 1e9);
        for (int vi = 0; vi < NV; vi++) {
            if (only >= 0 && vi != only) continue;
            for (int which = 0; which < (s == 4096 ? 4 : 1) && vs[vi].fn[which]; which++) {
                float ms = time_it([&] { launch(vs[vi], which, s, s, s, 1.f, A, s, B, s, 0.f, C, s); });
                cudaError_t e = cudaDeviceSynchronize();
                if (e != cudaSuccess) {
                    printf("  %-34s error %s\n", vs[vi].name, cudaGetErrorName(e));
                    return 1;
                }
                printf("  %2d %-34s %s %6.1f TFLOP/s  %.3fx cuBLAS nn\n", vi, vs[vi].name, ops[which],
                       flop / ms / 1e9, cub / ms);
            }
        }
        cudaFree(A), cudaFree(B), cudaFree(C);
    }
    return 0;
}
