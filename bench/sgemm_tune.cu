// sgemm_tune.cu -- a developer tool, not part of the library: times tile configurations of
// kernels/sgemm.cu against cuBLAS (linked directly: this tool only) on the GPU at hand, to
// choose the configurations libcudaload ships. Build and run on the GPU machine:
//   nvcc -O3 -std=c++17 -arch=sm_90 -o build/sgemm_tune bench/sgemm_tune.cu -Ikernels -lcublas && build/sgemm_tune
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include "sgemm.cu"

template <int BM, int BN, int BK, int TM, int TN, int MINB>
__global__ void __launch_bounds__((BM / TM) * (BN / TN), MINB)
tune_nn(int m, int n, int k, float alpha, const float *A, long long lda, const float *B, long long ldb, float beta, float *C,
        long long ldc, int va, int vb) {
    sgemm_body<BM, BN, BK, TM, TN, false, false>(m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, va, vb);
}

struct Variant {
    const char *name;
    void (*fn)(int, int, int, float, const float *, long long, const float *, long long, float, float *, long long, int, int);
    int bm, bn, threads;
};
#define V(BM, BN, BK, TM, TN, MINB) \
    {#BM "x" #BN "x" #BK " t" #TM "x" #TN " minb" #MINB, tune_nn<BM, BN, BK, TM, TN, MINB>, BM, BN, (BM / TM) * (BN / TN)}

static float time_ms(cudaEvent_t a, cudaEvent_t b, std::vector<float> &v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

int main(int argc, char **argv) {
    // optional: argv[1] = one size, argv[2] = one variant index (for the profiler)
    Variant vs[] = {
        V(128, 128, 8, 8, 8, 2),  V(128, 128, 16, 8, 8, 2), V(128, 128, 8, 8, 8, 1),  V(128, 128, 16, 8, 8, 1),
        V(128, 256, 8, 8, 16, 1), V(256, 128, 8, 16, 8, 1),
        V(64, 128, 8, 8, 8, 2),   V(128, 64, 8, 8, 8, 2),   V(64, 64, 8, 8, 8, 4),     V(64, 64, 8, 4, 4, 1),
        V(128, 64, 16, 8, 8, 2),  V(64, 128, 16, 8, 8, 2),
    };
    std::vector<int> sizes = {1024, 4096, 8192};
    if (argc > 1) sizes = {atoi(argv[1])};
    int only = argc > 2 ? atoi(argv[2]) : -1;
    cublasHandle_t h;
    cublasCreate(&h);
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
        int reps = only >= 0 ? 2 : s >= 8192 ? 10 : 30;
        std::vector<float> t;
        for (int w = 0; w < 3; w++) cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, s, s, s, &one, A, s, B, s, &zero, C, s);
        for (int r = 0; r < reps; r++) {
            cudaEventRecord(a);
            cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, s, s, s, &one, A, s, B, s, &zero, C, s);
            cudaEventRecord(b);
            cudaEventSynchronize(b);
            float ms;
            cudaEventElapsedTime(&ms, a, b);
            t.push_back(ms);
        }
        float cub = time_ms(a, b, t);
        printf("size %d: cuBLAS %.1f TFLOP/s\n", s, flop / cub / 1e9);
        for (int vi = 0; vi < (int)(sizeof vs / sizeof vs[0]); vi++) {
            Variant &v = vs[vi];
            if (only >= 0 && vi != only) continue;
            dim3 grid((s + v.bm - 1) / v.bm, (s + v.bn - 1) / v.bn);
            t.clear();
            for (int w = 0; w < 2; w++) v.fn<<<grid, v.threads>>>(s, s, s, 1.f, A, s, B, s, 0.f, C, s, 1, 1);
            cudaError_t e = cudaDeviceSynchronize();
            if (e != cudaSuccess) {
                printf("  %-28s error %s\n", v.name, cudaGetErrorName(e));
                return 1;
            }
            for (int r = 0; r < reps; r++) {
                cudaEventRecord(a);
                v.fn<<<grid, v.threads>>>(s, s, s, 1.f, A, s, B, s, 0.f, C, s, 1, 1);
                cudaEventRecord(b);
                cudaEventSynchronize(b);
                float ms;
                cudaEventElapsedTime(&ms, a, b);
                t.push_back(ms);
            }
            float ms = time_ms(a, b, t);
            printf("  %-28s %6.1f TFLOP/s  %.3fx cuBLAS\n", v.name, flop / ms / 1e9, cub / ms);
        }
        cudaFree(A), cudaFree(B), cudaFree(C);
    }
    return 0;
}
