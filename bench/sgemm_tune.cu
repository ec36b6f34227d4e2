/* SPDX-License-Identifier: Apache-2.0 */
// sgemm_tune.cu -- a developer tool, not part of the library: times tile configurations of
// kernels/sgemm.cu against cuBLAS (linked directly: this tool only) on the GPU at hand, every
// SGEMM shape class (the rows of bench/sgemm_shapes.txt, listed in main()) in one process, contenders
// alternating, medians; after checking each configuration against cuBLAS on odd shapes in all
// four transpose cases (aligned and unaligned operands, beta 0 on NaN-poisoned C and not).
// The tile table of kernels/sgemm.cu and the speeds in internal.h's CL_SGEMM_TILES come from
// its output (docs/performance.md). The variants are the shipped kernels, or with
// -DTUNE_VARIANTS='"file"' a list of one's own (bench/sgemm_tune_variants.inc: the latest
// run's). Split products run as the library runs them: partial products, then its sum kernel.
// Build (here or on the GPU machine; a libcublas from the pip wheels works as well) and run:
//   nvcc -O3 -std=c++17 -arch=sm_90 -Ikernels -Ibench -o build/sgemm_tune bench/sgemm_tune.cu -lcublas
//   build/sgemm_tune [runs] [--queued] [--no-check] [--shapes I,J,..] [--variants I,J,..]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <vector>
#include <string>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#define CUDALOAD_SGEMM_NO_ENTRIES
#include "sgemm.cu"

typedef void (*new_fn)(int, int, int, float, const float *, long long, const float *, long long, float, float *, long long,
                       int, long long);

// The body as the library's entry points launch it (CUDALOAD_SGEMM_ENTRY), split k included.
template <int BM, int BN, int BK, int TM, int TN, int LM, int ST, bool VEC, bool KV, bool SC, bool COL, int MINB, bool TA,
          bool TB>
__global__ void __launch_bounds__(CUDALOAD_SGEMM_THREADS(BM, BN, TM, TN, LM), MINB)
new_k(int m, int n, int k, float alpha, const float *A, long long lda, const float *B, long long ldb, float beta, float *C,
     long long ldc, int kc, long long c_split) {
    const long long k0 = (long long)blockIdx.z * kc;
    const int kz = k - k0 < kc ? (int)(k - k0) : kc;
    sgemm_body<BM, BN, BK, TM, TN, LM, ST, VEC, KV, TA, TB, SC, COL>(m, n, kz, alpha, A + (TA ? k0 : k0 * lda), lda,
                                                                B + (TB ? k0 * ldb : k0), ldb, beta,
                                                                C + blockIdx.z * c_split, ldc);
}

struct Variant {
    std::string name;
    new_fn fn[4];  // NN, NT, TN, TT (NULL: not built)
    int bm, bn, threads;
    bool needs_vec, needs_kv;
};
// BM x BN x BK tile, TM x TN per thread, LM lanes along m, ST stages, VEC (16-byte copies of an
// operand contiguous along m or n: it must be aligned), KV (16-byte loads of an operand
// contiguous along k: it must be aligned and k a multiple of 4), SC (an unaligned C stored
// through shared memory), MINB blocks per SM for __launch_bounds__; OPS: a mask of the
// transpose cases built (1 NN, 2 NT, 4 TN, 8 TT); COL (VOC): the FFMAs down the columns of a
// thread's results.
template <bool ON, int BM, int BN, int BK, int TM, int TN, int LM, int ST, bool VEC, bool KV, bool SC, bool COL, int MINB,
          bool TA, bool TB>
struct TunePick {  // a case left out of the mask is not even instantiated
    static constexpr new_fn fn = new_k<BM, BN, BK, TM, TN, LM, ST, VEC, KV, SC, COL, MINB, TA, TB>;
};
template <int BM, int BN, int BK, int TM, int TN, int LM, int ST, bool VEC, bool KV, bool SC, bool COL, int MINB, bool TA,
          bool TB>
struct TunePick<false, BM, BN, BK, TM, TN, LM, ST, VEC, KV, SC, COL, MINB, TA, TB> {
    static constexpr new_fn fn = nullptr;
};
#define TUNE_FN(OPS, BIT, TA, TB, ...) TunePick<((OPS) & (BIT)) != 0, __VA_ARGS__, TA, TB>::fn
#define VOC(BM, BN, BK, TM, TN, LM, ST, VEC, KV, SC, MINB, OPS, COL)                                                 \
    {#BM "x" #BN "x" #BK " t" #TM "x" #TN " lm" #LM " st" #ST " vec" #VEC " kv" #KV " sc" #SC " col" #COL " minb" #MINB, \
     {TUNE_FN(OPS, 1, 0, 0, BM, BN, BK, TM, TN, LM, ST, VEC, KV, SC, COL, MINB),                                       \
      TUNE_FN(OPS, 2, 0, 1, BM, BN, BK, TM, TN, LM, ST, VEC, KV, SC, COL, MINB),                                       \
      TUNE_FN(OPS, 4, 1, 0, BM, BN, BK, TM, TN, LM, ST, VEC, KV, SC, COL, MINB),                                       \
      TUNE_FN(OPS, 8, 1, 1, BM, BN, BK, TM, TN, LM, ST, VEC, KV, SC, COL, MINB)},                                      \
     BM, BN, CUDALOAD_SGEMM_THREADS(BM, BN, TM, TN, LM), VEC, KV}
#define VO(BM, BN, BK, TM, TN, LM, ST, VEC, KV, SC, MINB, OPS) VOC(BM, BN, BK, TM, TN, LM, ST, VEC, KV, SC, MINB, OPS, false)
#define V(BM, BN, BK, TM, TN, LM, ST, VEC, KV, SC, MINB) VO(BM, BN, BK, TM, TN, LM, ST, VEC, KV, SC, MINB, 15)

static Variant vs[] = {
#ifdef TUNE_VARIANTS  // -DTUNE_VARIANTS='"file"': a list of V(...)/VO(...)/VOC(...) rows of one's own
#include TUNE_VARIANTS
#else
    // the shipped kernels (kernels/sgemm.cu's table), each in the cases it is built for
    VO(256, 128, 8, 16, 8, 4, 2, true, false, false, 1, 1),        // 0: cudaload_sgemm_256x128_nn
    VO(256, 128, 8, 16, 8, 4, 3, true, false, false, 1, 2),        // 1: cudaload_sgemm_256x128_nt
    VOC(256, 128, 8, 16, 8, 4, 2, true, true, false, 1, 4, true),  // 2: cudaload_sgemm_256x128k_tn
    VO(128, 128, 8, 16, 8, 4, 3, true, true, false, 2, 4),         // 3: cudaload_sgemm_128x128k_tn
    VO(128, 128, 16, 16, 8, 4, 2, true, true, false, 2, 8),        // 4: cudaload_sgemm_128x128k16_tt
    V(128, 128, 8, 8, 8, 8, 3, false, false, false, 2),            // 5: cudaload_sgemm_128x128_*
    VO(256, 128, 8, 16, 8, 4, 3, false, false, true, 1, 1),        // 6: cudaload_sgemm_256x128a_nn
    VO(128, 64, 16, 8, 8, 8, 3, true, false, false, 2, 3),         // 7: cudaload_sgemm_128x64_nn, _nt
    VO(128, 128, 8, 16, 8, 4, 3, true, false, false, 2, 1),        // 8: cudaload_sgemm_128x128v_nn
    VOC(64, 64, 8, 8, 4, 4, 3, false, false, false, 4, 15, true),  // 9: cudaload_sgemm_64x64_*
#endif
};
static const int NV = (int)(sizeof vs / sizeof vs[0]);

// Launches variant v on case `which` (2 * ta + tb), in `splits` slices of k (partial products
// into W, then the library's sum kernel) when splits > 1; false when v cannot take it.
static float *g_w;  // split scratch
static bool launch(const Variant &v, int which, int m, int n, int k, float alpha, const float *A, long long lda,
                   const float *B, long long ldb, float beta, float *C, long long ldc, int splits = 1) {
    if (!v.fn[which]) return false;
    // VEC needs the operands contiguous along m or n aligned: A unless transposed, B if transposed
    bool ta = which & 2, tb = which & 1;
    bool va = ta || (((uintptr_t)A % 16 == 0) && lda % 4 == 0), vb = !tb || (((uintptr_t)B % 16 == 0) && ldb % 4 == 0);
    // KV needs the operands contiguous along k aligned, and k a multiple of 4
    bool ka = !ta || (((uintptr_t)A % 16 == 0) && lda % 4 == 0), kb = tb || (((uintptr_t)B % 16 == 0) && ldb % 4 == 0);
    if (v.needs_vec && !(va && vb)) return false;
    if (v.needs_kv && !(ka && kb && k % 4 == 0)) return false;
    if (splits > 1) {
        int kc = ((k + splits - 1) / splits + 15) & ~15;
        int z = (k + kc - 1) / kc;
        dim3 grid((m + v.bm - 1) / v.bm, (n + v.bn - 1) / v.bn, z);
        v.fn[which]<<<grid, v.threads>>>(m, n, k, 1.f, A, lda, B, ldb, 0.f, g_w, m, kc, (long long)m * n);
        unsigned groups = (unsigned)((m + 3) / 4) * (unsigned)n;
        cudaload_sgemm_splitk_reduce<<<(groups + 255) / 256, 256>>>(m, n, z, g_w, (long long)m * n, alpha, beta, C, ldc);
        return true;
    }
    dim3 grid((m + v.bm - 1) / v.bm, (n + v.bn - 1) / v.bn);
    v.fn[which]<<<grid, v.threads>>>(m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, k, 0);
    return true;
}

static float median(std::vector<float> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

static double check(const Variant &v, cublasHandle_t h) {
    const int shapes[][3] = {{257, 131, 77}, {128, 256, 64}, {300, 517, 1000}, {1, 1, 1}, {129, 65, 13}, {64, 128, 8}, {520, 300, 203}, {1000, 999, 9}, {33, 700, 31}, {256, 128, 0}};
    double worst = 0;
    for (auto &sh : shapes)
        for (int which = 0; which < 4; which++)
            for (int variant = 0; variant < 3; variant++) {
                int m = sh[0], n = sh[1], k = sh[2];
                bool ta = which & 2, tb = which & 1;
                long long ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
                long long pad = variant == 1 ? 3 : 4;
                long long lda = std::max(1LL, ar + pad), ldb = std::max(1LL, br + pad), ldc = m + pad - 1;
                int off = variant == 2 ? 1 : 0;
                size_t na = lda * std::max(ac, 1LL) + 4, nb = ldb * std::max(bc, 1LL) + 4, nc = ldc * n + 4;
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
                if (beta == 0.f) cudaMemset(C2, 0xff, nc * 4);
                // variant 1 splits k in 3 (the sum kernel applies alpha and beta)
                bool ran = launch(v, which, m, n, k, alpha, A + off, lda, B + off, ldb, beta, C2 + off, ldc, variant == 1 && k >= 48 ? 3 : 1);
                cudaError_t e = cudaDeviceSynchronize();
                if (e != cudaSuccess) { printf("  %s: launch error %s\n", v.name.c_str(), cudaGetErrorName(e)); exit(1); }
                if (ran) {
                    cudaMemcpy(r1.data(), C1, nc * 4, cudaMemcpyDeviceToHost);
                    cudaMemcpy(r2.data(), C2, nc * 4, cudaMemcpyDeviceToHost);
                    for (int j = 0; j < n; j++)
                        for (int i = 0; i < m; i++) {
                            size_t at = off + i + (size_t)j * ldc;
                            double d = std::fabs((double)r1[at] - r2[at]) / (k * 1.25 + 1);
                            if (!(d <= worst)) worst = std::isnan(d) ? 1e30 : d;
                        }
                    // outside C untouched
                    for (size_t at = 0; at < nc; at++) {
                        long long rel = (long long)at - off; bool inside = rel >= 0 && rel % ldc < m && rel / ldc < n;
                        if (!inside && beta != 0.f && r2[at] != hc[at]) worst = 1e30;
                    }
                }
                cudaFree(A), cudaFree(B), cudaFree(C1), cudaFree(C2);
            }
    return worst;
}

// Options: [runs] (default 15); --queued: each timed call after a 256 MB memset, as
// bench/torch_kernels.py's queued rows (the operands cold in L2, the queue never empty);
// --no-check; --shapes I,J,..: only those rows of the list below (by index);
// --variants I,J,..: only those variants.
static std::vector<int> index_list(const char *s) {
    std::vector<int> v;
    for (const char *p = s; *p;) {
        v.push_back(atoi(p));
        while (*p && *p != ',') p++;
        if (*p == ',') p++;
    }
    return v;
}

int main(int argc, char **argv) {
    int reps = 15;
    bool queued = false, do_check = true;
    std::vector<int> only_shapes, only_variants;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a == "--queued") queued = true;
        else if (a == "--no-check") do_check = false;
        else if (a == "--shapes" && i + 1 < argc) only_shapes = index_list(argv[++i]);
        else if (a == "--variants" && i + 1 < argc) only_variants = index_list(argv[++i]);
        else reps = atoi(argv[i]);
    }
    auto wanted = [](const std::vector<int> &l, int i) { return l.empty() || std::find(l.begin(), l.end(), i) != l.end(); };
    const char *ops[] = {"NN", "NT", "TN", "TT"};
    cublasHandle_t h;
    cublasCreate(&h);
    cudaMalloc(&g_w, 256u << 20);
    for (int vi = 0; vi < NV; vi++) {
        if (!wanted(only_variants, vi)) continue;
        cudaFuncAttributes at;
        int f = 0;
        while (!vs[vi].fn[f]) f++;
        cudaFuncGetAttributes(&at, vs[vi].fn[f]);
        double err = do_check ? check(vs[vi], h) : 0;
        printf("variant %d %-50s regs %3d smem %5zu local %zu check %.2e %s\n", vi, vs[vi].name.c_str(), at.numRegs,
               at.sharedSizeBytes, at.localSizeBytes, err, !do_check ? "(not checked)" : err < 1e-5 ? "ok" : "FAIL");
    }
    fflush(stdout);
    // splits: 0 = unsplit; n = the library's plan's slices for the shape (sgemm_plan.c)
    struct Shape { int op, m, n, k, pad, splits; };
    std::vector<Shape> shapes = {{0,1024,1024,1024,0,0},{0,4096,4096,4096,0,0},{0,8192,8192,8192,0,0},{0,1000,1000,1000,0,0},{0,3001,3001,3001,0,0},
        {0,4097,4097,4097,0,0},{1,4096,4096,4096,0,0},{2,4096,4096,4096,0,0},{3,4096,4096,4096,0,0},{0,8192,8192,128,0,0},{0,128,8192,8192,0,0},
        {0,65536,128,128,0,0},{0,256,256,256,0,0},{0,512,512,512,0,0},{0,2048,2048,2048,13,0},{0,2048,2048,2048,64,0},
        // 16..: the split products as the library runs them
        {0,128,8192,8192,0,4},{0,1024,1024,1024,0,4},{0,1000,1000,1000,0,4},{0,512,512,512,0,4},{0,256,256,256,0,4},
        // 21..: short k (where two blocks per SM overtake one), short-wide in other splits
        {0,8192,8192,256,0,0},{0,8192,8192,512,0,0},{0,8192,8192,1024,0,0},{0,4096,4096,256,0,0},{0,4096,4096,512,0,0},
        {0,65536,128,512,0,0},{0,16384,16384,128,0,0},{0,128,8192,8192,0,2},{0,128,8192,8192,0,8},{0,128,8192,8192,0,3},
        // 31..: small, in other splits
        {0,512,512,512,0,8},{0,512,512,512,0,2},{0,256,256,256,0,8},{0,768,768,768,0,6},
        // 35..: small in the other transpose cases
        {1,512,512,512,0,4},{2,512,512,512,0,4},{3,512,512,512,0,4},{1,256,256,256,0,4},{2,256,256,256,0,4},{3,256,256,256,0,4}};
    cudaEvent_t a, b;
    cudaEventCreate(&a), cudaEventCreate(&b);
    void *flush = nullptr;
    if (queued) cudaMalloc(&flush, 256u << 20);
    for (size_t si = 0; si < shapes.size(); si++) {
        const Shape &s = shapes[si];
        if (!wanted(only_shapes, (int)si)) continue;
        bool ta = s.op & 2, tb = s.op & 1;
        long long ar = ta ? s.k : s.m, ac = ta ? s.m : s.k, br = tb ? s.n : s.k, bc = tb ? s.k : s.n;
        long long lda = ar + s.pad, ldb = br + s.pad, ldc = s.m + s.pad;
        float *A, *B, *C;
        cudaMalloc(&A, lda * ac * 4), cudaMalloc(&B, ldb * bc * 4), cudaMalloc(&C, ldc * s.n * 4);
        std::vector<float> hb(std::max(lda * ac, ldb * bc));
        for (auto &x : hb) x = (float)(rand() % 1000) / 1000.f - 0.5f;
        cudaMemcpy(A, hb.data(), lda * ac * 4, cudaMemcpyHostToDevice);
        cudaMemcpy(B, hb.data(), ldb * bc * 4, cudaMemcpyHostToDevice);
        float one = 1, zero = 0;
        double flop = 2.0 * s.m * (double)s.n * s.k;
        std::vector<int> cand;
        for (int vi = 0; vi < NV; vi++) {
            if (!wanted(only_variants, vi) || !vs[vi].fn[s.op]) continue;
            if (vs[vi].needs_vec && ((!ta && lda % 4) || (tb && ldb % 4))) continue;
            if (vs[vi].needs_kv && ((ta && lda % 4) || (!tb && ldb % 4) || s.k % 4)) continue;
            cand.push_back(vi);
        }
        std::vector<std::vector<float>> t(cand.size() + 1);
        int r_total = reps + 3;
        for (int r = 0; r < r_total; r++)
            for (size_t c0 = 0; c0 <= cand.size(); c0++) {
                size_t c = (c0 + r) % (cand.size() + 1);
                if (queued) cudaMemsetAsync(flush, r & 0xff, 256u << 20);
                cudaEventRecord(a);
                if (c == cand.size()) cublasSgemm(h, ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb ? CUBLAS_OP_T : CUBLAS_OP_N, s.m, s.n, s.k, &one, A, lda, B, ldb, &zero, C, ldc);
                else launch(vs[cand[c]], s.op, s.m, s.n, s.k, 1.f, A, lda, B, ldb, 0.f, C, ldc, s.splits);
                cudaEventRecord(b);
                cudaEventSynchronize(b);
                float ms; cudaEventElapsedTime(&ms, a, b);
                if (r >= 3) t[c].push_back(ms);
            }
        cudaError_t e = cudaDeviceSynchronize();
        if (e != cudaSuccess) { printf("error %s\n", cudaGetErrorName(e)); return 1; }
        float cub = median(t[cand.size()]);
        printf("[%zu] %s %dx%dx%d pad %d split %d%s: cuBLAS %.1f TFLOP/s (%.1f us)\n", si, ops[s.op], s.m, s.n, s.k, s.pad,
               s.splits, queued ? " queued" : "", flop / cub / 1e9, cub * 1e3);
        for (size_t c = 0; c < cand.size(); c++) {
            float ms = median(t[c]);
            printf("   %2d %-50s %6.1f TFLOP/s %8.1f us  %.3fx\n", cand[c], vs[cand[c]].name.c_str(), flop / ms / 1e9, ms * 1e3, cub / ms);
        }
        fflush(stdout);
        cudaFree(A), cudaFree(B), cudaFree(C);
    }
    return 0;
}
