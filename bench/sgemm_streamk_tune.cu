/* SPDX-License-Identifier: Apache-2.0 */
// sgemm_streamk_tune.cu -- a developer tool, not part of the library: one experiment, stream-K
// on the short-wide products (128 x 8192 x 8192 NN, the one shape class still under cuBLAS:
// docs/gpu-run/performance-history.md, "Still under: short-wide"), against what ships there
// (cudaload_sgemm_128x128v_nn split 4 ways + cudaload_sgemm_splitk_reduce as a programmatic
// dependent) and cuBLAS (linked directly: this tool only), in one process, contenders
// alternating, medians, queued (a memset runs before each timed call, so the interval is the
// GPU's work alone; the main kernel's time is printed beside the total), as
// bench/sgemm_split_tune.cu does.
//
// Stream-K: G blocks (slots = blocks per SM x SMs, read at run time: 264 on an H200) of the same
// 128 x 128 x 8 tile body (sgemm_body with cudaload_sgemm_128x128v_nn's parameters) share the
// flattened iteration space (tile, slice of 8 k) -- tiles x ceil(k / 8) iterations, k fastest,
// tiles down the columns of tiles -- in equal contiguous ranges: block b takes [b * total / G,
// (b + 1) * total / G) (G is cut to total, so no range is empty). A range is cut into pieces at
// tile boundaries; each piece is one call of the body over its k range, which writes its partial
// 128 x 128 product to scratch slot b + t (t: the tile; unique, as both b and t only grow along
// the space: G + tiles - 1 slots). streamk_reduce then sums, for each element, the pieces of the
// blocks whose ranges meet its tile, found from the partition arithmetically (the ranges holding
// the tile's first and last iteration, and every one between: consecutive slots), in the order
// of k, with alpha and beta as cudaload_sgemm_splitk_reduce does, launched the same way (a
// programmatic dependent on sm_90 and up). The grid is (1, 1, G): the body takes its tile from
// blockIdx.x and blockIdx.y (m0 = blockIdx.x * 128, n0 = blockIdx.y * 128: this tile has no block
// grouping), which are then 0, and each piece passes the body operand and scratch pointers
// offset to its tile and k range, and the tile's rows and columns as m and n. kernels/sgemm.cu is
// unchanged.
//
// Contenders on each shape: shipped (split 4 + sum), stream-K with G = the GPU's slots, stream-K
// with G = 4 x tiles (its pieces are then exactly the shipped split's quarter tiles, the same
// blocks: a control, the cost of the stream-K code itself, which should read as shipped), any
// extra G given on the command line, cuBLAS. Before the timing each stream-K result is checked
// against the shipped one (and on odd shapes, other G, alpha and beta: ragged tiles, k % 8 != 0,
// ranges over several tiles, G above the iterations); a relative difference (max |diff| / max
// |shipped|) over 1e-3, or a NaN (the scratch starts as NaNs), fails the run (exit 1).
//
// Build and run on the GPU machine (bench/run-streamk.sh does both, 3 runs):
//   nvcc -O3 -std=c++17 -arch=sm_90 -Ikernels -o build/sgemm_streamk_tune bench/sgemm_streamk_tune.cu -lcublas
//   build/sgemm_streamk_tune [TIMED_RUNS (default 25)] [EXTRA_G ...]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include "sgemm.cu"
#include "sgemm_bench.cuh"

#define CK(x)                                                                                   \
    do {                                                                                        \
        cudaError_t e_ = (x);                                                                   \
        if (e_ != cudaSuccess) {                                                                \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            exit(1);                                                                            \
        }                                                                                       \
    } while (0)

// cudaload_sgemm_128x128v_nn's tile: BM, BN, BK, TM, TN, LM, STAGES, VEC, KV, TA, TB, SC, COL
#define SK_TILE 128, 128, 8, 16, 8, 4, 3, true, false, false, false, false, false
constexpr int SK_BM = 128, SK_BN = 128, SK_BK = 8, SK_THREADS = CUDALOAD_SGEMM_THREADS(128, 128, 16, 8, 4);
constexpr long long SK_SLOT = (long long)SK_BM * SK_BN;  // floats per scratch slot (ld SK_BM)
// sgemm_body reads its tile from gridDim and blockIdx only under this condition (its block
// grouping); otherwise m0 = blockIdx.x * BM, n0 = blockIdx.y * BN, both 0 in a (1, 1, G) grid.
static_assert(!(SK_BM * SK_BN >= 128 * 128 && (SK_BM > 128 || false /* KV */ || !true /* VEC */)),
              "the tile must take m0 and n0 from blockIdx.x and blockIdx.y alone");

// The partition: block b's range of the flattened (tile, slice) space.
__host__ __device__ __forceinline__ long long sk_start(long long b, long long total, int G) { return b * total / G; }

// Stream-K: block b computes its range's pieces one after another. Grid (1, 1, G), G <= total (no
// empty block), SK_THREADS threads. W: G + tiles - 1 slots of SK_SLOT floats, ldw = SK_BM.
// alpha, beta and ldw are always 1, 0 and SK_BM, but kernel parameters, as the shipped entry's
// are: as constants ptxas allocated 214 registers instead of 216, and at the same work as the
// shipped kernel (G = 4 x tiles, 128 x 8192 x 8192 on an H200) the kernel ran 4-5% slower (364.5
// against 347.5 us); as parameters, 346.6 against 347.4 (the loop itself is the shipped one's
// main loop, and its speed hangs on ptxas's register allocation: kernels/sgemm.cu says so above
// sgemm_store_staged).
__global__ void __launch_bounds__(SK_THREADS, 2)
    streamk_128x128v_nn(int m, int n, int k, const float *A, long long lda, const float *B, long long ldb, float *W,
                        int G, float alpha, float beta, long long ldw) {
    const int tiles_m = (m + SK_BM - 1) / SK_BM;
    const long long ipt = (k + SK_BK - 1) / SK_BK;  // slices per tile
    const long long total = (long long)tiles_m * ((n + SK_BN - 1) / SK_BN) * ipt;
    const long long b = blockIdx.z;
    long long it = sk_start(b, total, G);
    const long long end = sk_start(b + 1, total, G);
#pragma unroll 1
    while (it < end) {
        const long long t = it / ipt, s0 = it - t * ipt, s1 = min(ipt, s0 + (end - it));
        const int tm = (int)(t % tiles_m) * SK_BM, tn = (int)(t / tiles_m) * SK_BN;
        const long long k0 = s0 * SK_BK;
        const int kp = (int)(min((long long)k, s1 * SK_BK) - k0);  // the tile's last piece may end in a partial slice
        sgemm_body<SK_TILE>(min(SK_BM, m - tm), min(SK_BN, n - tn), kp, alpha, A + tm + k0 * lda, lda,
                            B + k0 + (long long)tn * ldb, ldb, beta, W + (b + t) * SK_SLOT, ldw);
        it += s1 - s0;
        __syncthreads();  // the next piece's prologue overwrites stages the last one's may still read
    }
}

// C(i, j) = alpha * (sum over the pieces of tile(i, j), in the order of k) + beta * C(i, j); C is
// read only when beta != 0. Threads as cudaload_sgemm_splitk_reduce's: one per 4 consecutive rows of
// a column, numbered down the columns; grid ceil(ceil(m / 4) * n / 256), 256 threads. G <= total.
// The blocks whose ranges meet tile t are b_lo .. b_hi, the ranges holding its first and last
// iteration; their pieces of it are in the consecutive slots b_lo + t .. b_hi + t. They are read
// 4 at a time (independent loads in flight together), the missing ones as zeros.
__global__ void __launch_bounds__(256) streamk_reduce(int m, int n, int k, int G, const float *__restrict__ W,
                                                      float alpha, float beta, float *__restrict__ C, long long ldc) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
    const unsigned per_col = ((unsigned)m + 3) / 4, g = blockIdx.x * 256 + threadIdx.x;
    const unsigned j = g / per_col;
    const int i = (int)(g - j * per_col) * 4;
    if (j >= (unsigned)n) return;
    const int tiles_m = (m + SK_BM - 1) / SK_BM;
    const long long ipt = (k + SK_BK - 1) / SK_BK;
    const long long total = (long long)tiles_m * ((n + SK_BN - 1) / SK_BN) * ipt;
    const long long t = i / SK_BM + (long long)(j / SK_BN) * tiles_m, lo = t * ipt;
    // the range holding iteration x: the last b with b * total / G <= x, ((x + 1) * G - 1) / total
    const long long b_lo = ((lo + 1) * G - 1) / total, b_hi = ((lo + ipt) * G - 1) / total;
    const int nb = (int)(b_hi - b_lo + 1);
    const float *w = W + (b_lo + t) * SK_SLOT + i % SK_BM + (long long)(j % SK_BN) * SK_BM;
    float s[4] = {0.f, 0.f, 0.f, 0.f};
    if (i + 3 < m) {
        for (int q0 = 0; q0 < nb; q0 += 4) {
            float4 v[4];
#pragma unroll
            for (int q = 0; q < 4; q++)
                v[q] = q0 + q < nb ? *reinterpret_cast<const float4 *>(w + (q0 + q) * SK_SLOT)
                                   : make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
            for (int q = 0; q < 4; q++) s[0] += v[q].x, s[1] += v[q].y, s[2] += v[q].z, s[3] += v[q].w;
        }
    } else {
        for (int q = 0; q < nb; q++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                if (i + e < m) s[e] += w[q * SK_SLOT + e];
    }
    float *dst = C + i + (long long)j * ldc;
#pragma unroll
    for (int e = 0; e < 4; e++)
        if (i + e < m) {
            const float v = alpha * s[e];
            dst[e] = beta == 0.f ? v : fmaf(beta, dst[e], v);
        }
}

// Shipped: cudaload_sgemm_128x128v_nn split 4 ways (the split rule of bench/sgemm_split_tune.cu:
// slices a multiple of 16 deep), then the sum. W: 4 * m * n floats.
static void shipped(int m, int n, int k, float alpha, const float *A, int lda, const float *B, int ldb, float beta,
                    float *C, int ldc, float *W, cudaEvent_t mid) {
    int kc = ((k + 3) / 4 + 15) & ~15, sp = (k + kc - 1) / kc;
    long long ws = (long long)m * n;
    dim3 g((m + 127) / 128, (n + 127) / 128, sp);
    cudaload_sgemm_128x128v_nn<<<g, SK_THREADS>>>(m, n, k, 1.f, A, lda, B, ldb, 0.f, W, m, kc, ws);
    if (mid) cudaEventRecord(mid);
    launch_sum(cudaload_sgemm_splitk_reduce, sum_blocks(m, n), m, n, sp, (const float *)W, ws, alpha, beta, C,
               (long long)ldc);
}

static long long sk_tiles(int m, int n) { return (long long)((m + SK_BM - 1) / SK_BM) * ((n + SK_BN - 1) / SK_BN); }

// One partition of one product: G, at most the iterations (so no block is empty), and what it
// gives: the most slices a block takes, the pieces, the blocks of 2 pieces or more.
struct SkPlan {
    int m, n, k, G;
    long long max_slices = 0, pieces = 0, multi = 0;
    size_t slots() const { return (size_t)G + sk_tiles(m, n) - 1; }
    SkPlan(int m_, int n_, int k_, int g) : m(m_), n(n_), k(k_) {
        const long long ipt = (k + SK_BK - 1) / SK_BK, total = sk_tiles(m, n) * ipt;
        G = (int)std::min<long long>(g, total);
        for (long long b = 0; b < G; b++) {
            const long long st = sk_start(b, total, G), en = sk_start(b + 1, total, G);
            const long long p = (en - 1) / ipt - st / ipt + 1;
            max_slices = std::max(max_slices, en - st), pieces += p, multi += p > 1;
        }
    }
};

// W: plan.slots() slots of SK_SLOT floats.
static void streamk(const SkPlan &pl, float alpha, const float *A, int lda, const float *B, int ldb, float beta,
                    float *C, int ldc, float *W, cudaEvent_t mid) {
    streamk_128x128v_nn<<<dim3(1, 1, pl.G), SK_THREADS>>>(pl.m, pl.n, pl.k, A, lda, B, ldb, W, pl.G, 1.f, 0.f,
                                                          (long long)SK_BM);
    if (mid) cudaEventRecord(mid);
    launch_sum(streamk_reduce, sum_blocks(pl.m, pl.n), pl.m, pl.n, pl.k, pl.G, (const float *)W, alpha, beta, C,
               (long long)ldc);
}

// max |x - ref| / max |ref| over the m x n matrices (ld ldc); NaN anywhere in x: infinity.
static double rel_diff(const std::vector<float> &x, const std::vector<float> &ref, int m, int n, int ldc) {
    double d = 0, r = 0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            const double a = x[i + (size_t)j * ldc], e = ref[i + (size_t)j * ldc];
            if (std::isnan(a) || std::isnan(e)) return INFINITY;
            d = std::max(d, std::fabs(a - e)), r = std::max(r, std::fabs(e));
        }
    return r > 0 ? d / r : d;
}

static int failures;
// Checks stream-K with each G against the shipped result on one product (alpha,
// beta, C preset); prints every relative difference.
static void check(int m, int n, int k, int lda, int ldb, int ldc, float alpha, float beta, const std::vector<int> &gs,
                  cublasHandle_t h) {
    float *A, *B, *C0, *C, *W;
    size_t wf = (size_t)4 * m * n;
    for (int G : gs) wf = std::max(wf, SkPlan(m, n, k, G).slots() * (size_t)SK_SLOT);
    CK(cudaMalloc(&A, (size_t)lda * k * 4)); CK(cudaMalloc(&B, (size_t)ldb * n * 4));
    CK(cudaMalloc(&C0, (size_t)ldc * n * 4)); CK(cudaMalloc(&C, (size_t)ldc * n * 4)); CK(cudaMalloc(&W, wf * 4));
    fill<<<1024, 256>>>(A, (size_t)lda * k, 1); fill<<<1024, 256>>>(B, (size_t)ldb * n, 2);
    const size_t cn = (size_t)ldc * n;
    std::vector<float> ref(cn), got(cn);
    fill<<<1024, 256>>>(C0, cn, 3);
    shipped(m, n, k, alpha, A, lda, B, ldb, beta, C0, ldc, W, nullptr);
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(ref.data(), C0, cn * 4, cudaMemcpyDeviceToHost));
    printf("   check %dx%dx%d (lda %d ldb %d ldc %d, alpha %g beta %g), max|diff| / max|shipped|:", m, n, k,
           lda, ldb, ldc, alpha, beta);
    for (int G : gs) {
        const SkPlan pl(m, n, k, G);
        fill<<<1024, 256>>>(C, cn, 3);
        CK(cudaMemset(W, 0xff, wf * 4));  // NaN: a slot the sum reads and no piece wrote shows
        streamk(pl, alpha, A, lda, B, ldb, beta, C, ldc, W, nullptr);
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(got.data(), C, cn * 4, cudaMemcpyDeviceToHost));
        const double d = rel_diff(got, ref, m, n, ldc);
        const bool bad = !(d <= 1e-3);
        printf("  G=%d %.2e%s", pl.G, d, bad ? " FAIL" : "");
        if (bad) failures++;
    }
    fill<<<1024, 256>>>(C, cn, 3);
    cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, A, lda, B, ldb, &beta, C, ldc);
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(got.data(), C, cn * 4, cudaMemcpyDeviceToHost));
    printf("  (shipped against cuBLAS: %.2e)\n", rel_diff(ref, got, m, n, ldc));
    fflush(stdout);
    CK(cudaFree(A)); CK(cudaFree(B)); CK(cudaFree(C0)); CK(cudaFree(C)); CK(cudaFree(W));
}

int main(int argc, char **argv) {
    const int runs = argc > 1 ? atoi(argv[1]) : 25;
    if (runs < 15) { fprintf(stderr, "usage: %s [TIMED_RUNS >= 15] [EXTRA_G ...]\n", argv[0]); return 2; }
    std::vector<int> extra_g;
    for (int a = 2; a < argc; a++) {
        int G = atoi(argv[a]);
        if (G < 1 || G > 65535) { fprintf(stderr, "%s: G %s out of range 1..65535\n", argv[0], argv[a]); return 2; }
        extra_g.push_back(G);
    }
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) { fprintf(stderr, "cublasCreate failed\n"); return 1; }
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    int sms = 0, major = 0, occ_sk = 0, occ_ship = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ_sk, streamk_128x128v_nn, SK_THREADS, 0));
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ_ship, cudaload_sgemm_128x128v_nn, SK_THREADS, 0));
    dependent_launch = major >= 9;
    const int slots = occ_sk * sms;
    printf("device: %s, %d SMs; blocks per SM: stream-K %d, shipped %d; stream-K G = %d (slots); sum as a %s launch\n",
           prop.name, sms, occ_sk, occ_ship, slots, dependent_launch ? "programmatic dependent" : "plain");
    if (occ_sk < 1) { printf("FAIL: the stream-K kernel cannot run\n"); return 1; }
    if (occ_sk != occ_ship) printf("note: the stream-K kernel fits %d blocks per SM, the shipped one %d\n", occ_sk, occ_ship);

    // Correctness first: odd shapes (ragged tiles, k % 8 != 0, ranges over several tiles, G
    // above the iterations), other G, alpha and beta; then the timed shapes with their own G.
    printf("correctness (stream-K against shipped; fails over 1e-3):\n");
    check(200, 1000, 1003, 200, 1003, 203, 1.5f, -0.5f, {slots, 1, 7, 33, 256}, h);
    check(384, 300, 777, 388, 780, 384, 1.f, 0.f, {slots, 5, 36}, h);
    check(128, 128, 16, 128, 16, 128, 2.f, 1.f, {slots, 1}, h);  // 2 slices: G = slots cut to 2

    const int shapes[][3] = {{128, 8192, 8192}, {256, 8192, 8192}, {128, 4096, 8192}, {128, 16384, 8192}};
    cudaEvent_t a, mid, b;
    CK(cudaEventCreate(&a)); CK(cudaEventCreate(&mid)); CK(cudaEventCreate(&b));
    // queued: this memset runs before each timed call, so the call's launches wait in the queue
    // when the first event fires and the interval is the GPU's work alone (gaps included)
    void *busy;
    const size_t busy_bytes = (size_t)64 << 20;
    CK(cudaMalloc(&busy, busy_bytes));
    for (auto &s : shapes) {
        const int m = s[0], n = s[1], k = s[2], lda = m, ldb = k, ldc = m;
        const long long tiles = sk_tiles(m, n);
        std::vector<int> gs = {slots};
        if (4 * tiles <= 65535 && 4 * tiles != slots) gs.push_back((int)(4 * tiles));  // the shipped quarters
        for (int G : extra_g)
            if (std::find(gs.begin(), gs.end(), G) == gs.end()) gs.push_back(G);
        printf("\nNN %dx%dx%d (lda %d ldb %d ldc %d), %lld tiles of 128 x 128, %lld slices of 8 k each:\n", m, n, k, lda,
               ldb, ldc, tiles, (long long)(k + 7) / 8);
        check(m, n, k, lda, ldb, ldc, 1.f, 0.f, gs, h);

        // contenders: 0 shipped, then stream-K for each G, then cuBLAS
        std::vector<SkPlan> plans;
        for (int G : gs) plans.emplace_back(m, n, k, G);
        float *A, *B, *C, *W;
        size_t wf = (size_t)4 * m * n;
        for (const SkPlan &pl : plans) wf = std::max(wf, pl.slots() * (size_t)SK_SLOT);
        CK(cudaMalloc(&A, (size_t)lda * k * 4)); CK(cudaMalloc(&B, (size_t)ldb * n * 4));
        CK(cudaMalloc(&C, (size_t)ldc * n * 4)); CK(cudaMalloc(&W, wf * 4));
        fill<<<1024, 256>>>(A, (size_t)lda * k, 1); fill<<<1024, 256>>>(B, (size_t)ldb * n, 2);
        const size_t nsk = plans.size(), nc = nsk + 2;
        std::vector<std::vector<float>> tm(nc), tmain(nc);
        const float one = 1, zero = 0;
        for (int r = 0; r < runs + 3; r++)
            for (size_t c0 = 0; c0 < nc; c0++) {
                const size_t c = (c0 + r) % nc;
                CK(cudaMemsetAsync(busy, r, busy_bytes));
                cudaEventRecord(a);
                if (c == 0) {
                    shipped(m, n, k, 1.f, A, lda, B, ldb, 0.f, C, ldc, W, mid);
                } else if (c <= nsk) {
                    streamk(plans[c - 1], 1.f, A, lda, B, ldb, 0.f, C, ldc, W, mid);
                } else {
                    cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, A, lda, B, ldb, &zero, C, ldc);
                    cudaEventRecord(mid);
                }
                cudaEventRecord(b);
                CK(cudaEventSynchronize(b));
                float ms, ms1;
                cudaEventElapsedTime(&ms, a, b), cudaEventElapsedTime(&ms1, a, mid);
                if (r >= 3) tm[c].push_back(ms), tmain[c].push_back(ms1);
            }
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        const float cb = med(tm[nc - 1]), cb_main = med(tmain[nc - 1]);
        const float sh = med(tm[0]);
        printf("   queued, medians of %d; ratio = cuBLAS / contender (> 1: faster than cuBLAS)\n", runs);
        printf("   %-30s %9s %9s %8s %9s  %s\n", "contender", "total us", "main us", "ratio", "/shipped", "");
        printf("   %-30s %9.1f %9.1f %8.3f %9.3f\n", "cuBLAS", cb * 1e3, cb_main * 1e3, 1.0, sh / cb);
        const dim3 sg((m + 127) / 128, (n + 127) / 128, 4);
        printf("   %-30s %9.1f %9.1f %8.3f %9.3f  %u blocks of 256 slices, %d slots, sum of %.1f MB\n",
               "shipped 128x128v split 4", sh * 1e3, med(tmain[0]) * 1e3, cb / sh, 1.0, sg.x * sg.y * sg.z, slots,
               4.0 * m * n * 4 / 1e6);
        for (size_t c = 1; c <= nsk; c++) {
            const SkPlan &pl = plans[c - 1];
            const std::string name = "stream-K G=" + std::to_string(pl.G) +
                                     (pl.G == slots ? " (slots)" : pl.G == 4 * tiles ? " (quarters)" : "");
            printf("   %-30s %9.1f %9.1f %8.3f %9.3f  at most %lld slices a block, %lld pieces, %lld blocks of 2+, "
                   "sum of %.1f MB\n",
                   name.c_str(), med(tm[c]) * 1e3, med(tmain[c]) * 1e3, cb / med(tm[c]), sh / med(tm[c]),
                   pl.max_slices, pl.pieces, pl.multi, (double)pl.pieces * SK_SLOT * 4 / 1e6);
        }
        fflush(stdout);
        CK(cudaFree(A)); CK(cudaFree(B)); CK(cudaFree(C)); CK(cudaFree(W));
    }
    cublasDestroy(h);
    if (failures) {
        printf("\nFAIL: %d stream-K result(s) differ from shipped by more than 1e-3 (relative)\n", failures);
        return 1;
    }
    printf("\nall stream-K results within 1e-3 of shipped\n");
    return 0;
}
