// sgemm.cu -- C = alpha * op(A) * op(B) + beta * C in FP32 (FFMA, no tensor cores), BLAS
// column-major semantics, bundled into libcudaload's fatbin.
//
// Classic register-blocked SGEMM: a block computes a BM x BN tile of C, stepping through k
// in slices of BK. Each slice of op(A) (BM x BK) and op(B) (BK x BN) is staged in shared
// memory k-major (As[p][i], Bs[p][j]) so that, for a fixed p, a thread reads its TM rows
// of A and TN columns of B as float4s and performs TM*TN FMAs. A thread's TM rows are two
// runs of TM/2 at i0 and BM/2 + i0 (likewise columns) so a warp's shared-memory reads are
// conflict-free broadcasts. Shared memory is double-buffered: the next slice is fetched
// from global memory into registers while the current one is consumed, then stored to the
// other buffer, with one barrier per slice. The four transpose cases differ only in
// which dimension is contiguous in global memory; each reads 4 contiguous floats per
// request (one float4 when the matrix is 16-byte aligned with a leading dimension that is
// a multiple of 4; element by element, with bounds checks, otherwise and at the edges).
// Rows of the staged tiles are padded by 4 floats so transposing stores do not collide
// in banks. Launched by libcudaload/kernels.c through the driver API.

template <int BM, int BN, int BK, int TM, int TN>
struct SgemmShape {
    static constexpr int NT = (BM / TM) * (BN / TN);  // threads per block
    static constexpr int PAD = 4;
    static constexpr int UNITS_A = BM * BK / 4;        // float4-sized requests per slice
    static constexpr int UNITS_B = BK * BN / 4;
    static constexpr int SLOTS_A = (UNITS_A + NT - 1) / NT;
    static constexpr int SLOTS_B = (UNITS_B + NT - 1) / NT;
};

// Fetch 4 contiguous floats starting at p (count of them in bounds: valid 0..4).
__device__ __forceinline__ float4 fetch4(const float *p, int valid, bool vec) {
    if (vec && valid == 4) return __ldg(reinterpret_cast<const float4 *>(p));
    float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
    if (valid > 0) v.x = __ldg(p);
    if (valid > 1) v.y = __ldg(p + 1);
    if (valid > 2) v.z = __ldg(p + 2);
    if (valid > 3) v.w = __ldg(p + 3);
    return v;
}

__device__ __forceinline__ int clamp4(long long left) { return left >= 4 ? 4 : (left > 0 ? (int)left : 0); }

// Load one BM x BK slice of op(A) into registers. TA: A is stored k x m (op = transpose).
template <int BM, int BN, int BK, int TM, int TN, bool TA>
__device__ __forceinline__ void load_a(float4 (&r)[SgemmShape<BM, BN, BK, TM, TN>::SLOTS_A], const float *A, long long lda,
                                       int m, int k, int m0, int k0, bool vec) {
    using S = SgemmShape<BM, BN, BK, TM, TN>;
#pragma unroll
    for (int s = 0; s < S::SLOTS_A; s++) {
        int u = threadIdx.x + s * S::NT;
        if (u >= S::UNITS_A) break;
        if (!TA) {  // contiguous along m
            int p = u / (BM / 4), i = (u % (BM / 4)) * 4;
            bool kin = k0 + p < k;
            r[s] = fetch4(A + (long long)(m0 + i) + (long long)(k0 + p) * lda, kin ? clamp4((long long)m - (m0 + i)) : 0, vec);
        } else {  // contiguous along k
            int i = u / (BK / 4), p = (u % (BK / 4)) * 4;
            bool min_ = m0 + i < m;
            r[s] = fetch4(A + (long long)(k0 + p) + (long long)(m0 + i) * lda, min_ ? clamp4((long long)k - (k0 + p)) : 0, vec);
        }
    }
}

// Load one BK x BN slice of op(B) into registers. TB: B is stored n x k (op = transpose).
template <int BM, int BN, int BK, int TM, int TN, bool TB>
__device__ __forceinline__ void load_b(float4 (&r)[SgemmShape<BM, BN, BK, TM, TN>::SLOTS_B], const float *B, long long ldb,
                                       int n, int k, int n0, int k0, bool vec) {
    using S = SgemmShape<BM, BN, BK, TM, TN>;
#pragma unroll
    for (int s = 0; s < S::SLOTS_B; s++) {
        int u = threadIdx.x + s * S::NT;
        if (u >= S::UNITS_B) break;
        if (TB) {  // contiguous along n
            int p = u / (BN / 4), j = (u % (BN / 4)) * 4;
            bool kin = k0 + p < k;
            r[s] = fetch4(B + (long long)(n0 + j) + (long long)(k0 + p) * ldb, kin ? clamp4((long long)n - (n0 + j)) : 0, vec);
        } else {  // contiguous along k
            int j = u / (BK / 4), p = (u % (BK / 4)) * 4;
            bool nin = n0 + j < n;
            r[s] = fetch4(B + (long long)(k0 + p) + (long long)(n0 + j) * ldb, nin ? clamp4((long long)k - (k0 + p)) : 0, vec);
        }
    }
}

template <int BM, int BN, int BK, int TM, int TN, bool TA>
__device__ __forceinline__ void store_a(float (*As)[BM + SgemmShape<BM, BN, BK, TM, TN>::PAD],
                                        const float4 (&r)[SgemmShape<BM, BN, BK, TM, TN>::SLOTS_A]) {
    using S = SgemmShape<BM, BN, BK, TM, TN>;
#pragma unroll
    for (int s = 0; s < S::SLOTS_A; s++) {
        int u = threadIdx.x + s * S::NT;
        if (u >= S::UNITS_A) break;
        if (!TA) {
            int p = u / (BM / 4), i = (u % (BM / 4)) * 4;
            *reinterpret_cast<float4 *>(&As[p][i]) = r[s];
        } else {
            int i = u / (BK / 4), p = (u % (BK / 4)) * 4;
            As[p][i] = r[s].x;
            As[p + 1][i] = r[s].y;
            As[p + 2][i] = r[s].z;
            As[p + 3][i] = r[s].w;
        }
    }
}

template <int BM, int BN, int BK, int TM, int TN, bool TB>
__device__ __forceinline__ void store_b(float (*Bs)[BN + SgemmShape<BM, BN, BK, TM, TN>::PAD],
                                        const float4 (&r)[SgemmShape<BM, BN, BK, TM, TN>::SLOTS_B]) {
    using S = SgemmShape<BM, BN, BK, TM, TN>;
#pragma unroll
    for (int s = 0; s < S::SLOTS_B; s++) {
        int u = threadIdx.x + s * S::NT;
        if (u >= S::UNITS_B) break;
        if (TB) {
            int p = u / (BN / 4), j = (u % (BN / 4)) * 4;
            *reinterpret_cast<float4 *>(&Bs[p][j]) = r[s];
        } else {
            int j = u / (BK / 4), p = (u % (BK / 4)) * 4;
            Bs[p][j] = r[s].x;
            Bs[p + 1][j] = r[s].y;
            Bs[p + 2][j] = r[s].z;
            Bs[p + 3][j] = r[s].w;
        }
    }
}

// Read TH contiguous floats (TH = 2 or a multiple of 4) from shared memory.
template <int TH>
__device__ __forceinline__ void read_run(float *dst, const float *src) {
    if constexpr (TH % 4 == 0) {
#pragma unroll
        for (int q = 0; q < TH; q += 4) {
            float4 v = *reinterpret_cast<const float4 *>(src + q);
            dst[q] = v.x, dst[q + 1] = v.y, dst[q + 2] = v.z, dst[q + 3] = v.w;
        }
    } else if constexpr (TH == 2) {
        float2 v = *reinterpret_cast<const float2 *>(src);
        dst[0] = v.x, dst[1] = v.y;
    } else {
#pragma unroll
        for (int q = 0; q < TH; q++) dst[q] = src[q];
    }
}

template <int BM, int BN, int BK, int TM, int TN, bool TA, bool TB>
__device__ __forceinline__ void sgemm_body(int m, int n, int k, float alpha, const float *__restrict__ A, long long lda,
                                           const float *__restrict__ B, long long ldb, float beta, float *__restrict__ C,
                                           long long ldc, int vec_a, int vec_b) {
    using S = SgemmShape<BM, BN, BK, TM, TN>;
    __shared__ __align__(16) float As[2][BK][BM + S::PAD];
    __shared__ __align__(16) float Bs[2][BK][BN + S::PAD];
    const int tx = threadIdx.x % (BM / TM);
    const int ty = threadIdx.x / (BM / TM);
    const int m0 = blockIdx.x * BM;
    const int n0 = blockIdx.y * BN;
    const int i0 = tx * (TM / 2), j0 = ty * (TN / 2);

    float acc[TM][TN];
#pragma unroll
    for (int r = 0; r < TM; r++)
#pragma unroll
        for (int c = 0; c < TN; c++) acc[r][c] = 0.f;

    float4 ra[S::SLOTS_A], rb[S::SLOTS_B];
    const int slices = (k + BK - 1) / BK;
    // Interior blocks with aligned operands take the fast path for every full slice: one
    // float4 load per request from a pointer computed once, no bounds checks. Edge blocks,
    // the last partial slice and unaligned operands take the checked loads.
    const bool fast = vec_a && vec_b && m0 + BM <= m && n0 + BN <= n;
    const float *pa[S::SLOTS_A], *pb[S::SLOTS_B];
#pragma unroll
    for (int s = 0; s < S::SLOTS_A; s++) {
        int u = threadIdx.x + s * S::NT;
        if (u >= S::UNITS_A) u = 0;
        pa[s] = !TA ? A + (long long)(m0 + (u % (BM / 4)) * 4) + (long long)(u / (BM / 4)) * lda
                    : A + (long long)((u % (BK / 4)) * 4) + (long long)(m0 + u / (BK / 4)) * lda;
    }
#pragma unroll
    for (int s = 0; s < S::SLOTS_B; s++) {
        int u = threadIdx.x + s * S::NT;
        if (u >= S::UNITS_B) u = 0;
        pb[s] = TB ? B + (long long)(n0 + (u % (BN / 4)) * 4) + (long long)(u / (BN / 4)) * ldb
                   : B + (long long)((u % (BK / 4)) * 4) + (long long)(n0 + u / (BK / 4)) * ldb;
    }
    const long long step_a = TA ? BK : BK * lda, step_b = TB ? BK * ldb : BK;
    if (slices > 0) {
        load_a<BM, BN, BK, TM, TN, TA>(ra, A, lda, m, k, m0, 0, vec_a);
        load_b<BM, BN, BK, TM, TN, TB>(rb, B, ldb, n, k, n0, 0, vec_b);
        store_a<BM, BN, BK, TM, TN, TA>(As[0], ra);
        store_b<BM, BN, BK, TM, TN, TB>(Bs[0], rb);
        __syncthreads();
    }
    int cur = 0;
    for (int t = 0; t < slices; t++) {
        const bool more = t + 1 < slices;
        if (more && fast && (t + 2) * BK <= k) {
#pragma unroll
            for (int s = 0; s < S::SLOTS_A; s++)
                if (threadIdx.x + s * S::NT < S::UNITS_A) ra[s] = __ldg(reinterpret_cast<const float4 *>(pa[s] + (t + 1) * step_a));
#pragma unroll
            for (int s = 0; s < S::SLOTS_B; s++)
                if (threadIdx.x + s * S::NT < S::UNITS_B) rb[s] = __ldg(reinterpret_cast<const float4 *>(pb[s] + (t + 1) * step_b));
        } else if (more) {
            load_a<BM, BN, BK, TM, TN, TA>(ra, A, lda, m, k, m0, (t + 1) * BK, vec_a);
            load_b<BM, BN, BK, TM, TN, TB>(rb, B, ldb, n, k, n0, (t + 1) * BK, vec_b);
        }
#pragma unroll
        for (int p = 0; p < BK; p++) {
            float a[TM], b[TN];
            read_run<TM / 2>(a, &As[cur][p][i0]);
            read_run<TM / 2>(a + TM / 2, &As[cur][p][BM / 2 + i0]);
            read_run<TN / 2>(b, &Bs[cur][p][j0]);
            read_run<TN / 2>(b + TN / 2, &Bs[cur][p][BN / 2 + j0]);
#pragma unroll
            for (int r = 0; r < TM; r++)
#pragma unroll
                for (int c = 0; c < TN; c++) acc[r][c] = fmaf(a[r], b[c], acc[r][c]);
        }
        if (more) {
            store_a<BM, BN, BK, TM, TN, TA>(As[cur ^ 1], ra);
            store_b<BM, BN, BK, TM, TN, TB>(Bs[cur ^ 1], rb);
        }
        __syncthreads();
        cur ^= 1;
    }

    // Epilogue: C is read only when beta != 0 (BLAS: with beta == 0, C may hold NaN).
#pragma unroll
    for (int c = 0; c < TN; c++) {
        const int gj = n0 + (c < TN / 2 ? j0 + c : BN / 2 + j0 + c - TN / 2);
        if (gj >= n) continue;
#pragma unroll
        for (int r = 0; r < TM; r++) {
            const int gi = m0 + (r < TM / 2 ? i0 + r : BM / 2 + i0 + r - TM / 2);
            if (gi >= m) continue;
            float *dst = C + (long long)gi + (long long)gj * ldc;
            float v = alpha == 0.f ? 0.f : alpha * acc[r][c];
            *dst = beta == 0.f ? v : fmaf(beta, *dst, v);
        }
    }
}

// Entry points: <tile>_<op(A)><op(B)>, found by name by the loader.
#define CUDALOAD_SGEMM_ENTRY(NAME, BM, BN, BK, TM, TN, TA, TB, MINB)                                                   \
    extern "C" __global__ void __launch_bounds__((BM / TM) * (BN / TN), MINB)                                          \
        NAME(int m, int n, int k, float alpha, const float *A, long long lda, const float *B, long long ldb, float beta, \
             float *C, long long ldc, int vec_a, int vec_b) {                                                          \
        sgemm_body<BM, BN, BK, TM, TN, TA, TB>(m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, vec_a, vec_b);          \
    }

// Tile shapes chosen with bench/sgemm_tune.cu on the H100 (see docs/performance.md).
// 128 x 128 x 16 tiles, 8 x 8 per thread, 256 threads, two blocks per SM (<= 128 registers):
// problems that give at least two tiles per SM.
CUDALOAD_SGEMM_ENTRY(cudaload_sgemm_128x128_nn, 128, 128, 16, 8, 8, false, false, 2)
CUDALOAD_SGEMM_ENTRY(cudaload_sgemm_128x128_nt, 128, 128, 16, 8, 8, false, true, 2)
CUDALOAD_SGEMM_ENTRY(cudaload_sgemm_128x128_tn, 128, 128, 16, 8, 8, true, false, 2)
CUDALOAD_SGEMM_ENTRY(cudaload_sgemm_128x128_tt, 128, 128, 16, 8, 8, true, true, 2)
// 64 x 128 x 16 tiles, 8 x 8 per thread, 128 threads: smaller problems, which the large
// tile would leave SMs idle on.
CUDALOAD_SGEMM_ENTRY(cudaload_sgemm_64x128_nn, 64, 128, 16, 8, 8, false, false, 2)
CUDALOAD_SGEMM_ENTRY(cudaload_sgemm_64x128_nt, 64, 128, 16, 8, 8, false, true, 2)
CUDALOAD_SGEMM_ENTRY(cudaload_sgemm_64x128_tn, 64, 128, 16, 8, 8, true, false, 2)
CUDALOAD_SGEMM_ENTRY(cudaload_sgemm_64x128_tt, 64, 128, 16, 8, 8, true, true, 2)
