// sgemm.cu -- C = alpha * op(A) * op(B) + beta * C in FP32 (FFMA, no tensor cores), BLAS
// column-major semantics, bundled into libcudaload's fatbin.
//
// Structure (a warp-tiled, multi-stage SIMT GEMM):
//
//  - A block computes a BM x BN tile of C, stepping through k in slices of BK. Its warps
//    each own a WM x WN part of the tile, and a warp's 32 lanes are LM (along m) x LN
//    (along n) threads of TM x TN results each (WM = LM * TM, WN = LN * TN).
//  - Both operands' slices are kept in shared memory k-major, X[p][i] (row p of a stage
//    holds the tile's BM rows of op(A), or BN columns of op(B), at k = k0 + p), in a ring of
//    STAGES stages. An operand that is contiguous along m (or n) in global memory is copied
//    as it is by cp.async (sm_80 and up: straight from global to shared memory, no
//    registers in between). An operand contiguous along k is loaded into registers (a float4
//    of 4 consecutive k per unit) one slice ahead and stored transposed (4 scalar stores,
//    each to a different row of the stage) before the barrier that publishes it.
//  - Main loop, per slice t: the FFMAs of k steps 0 .. BK-2 run on fragments read from
//    stage t; before the last step, the held registers of slice t + STAGES - 1 are stored,
//    one barrier makes slice t + 1 visible (and frees stage t, whose values are all in
//    registers by then), slice t + STAGES is fetched into stage t, and the first fragment
//    of slice t + 1 is read while the FFMAs of the last step of slice t run. One barrier
//    per slice; the copies of up to STAGES - 1 slices are in flight behind the FFMAs.
//  - Fragments: at each k step a thread reads its TM values of op(A) and TN of op(B) as
//    float4 runs of 4 consecutive rows, LM * 4 (LN * 4) rows apart (rows wm0 + g * 4 * LM +
//    4 * lm + 0..3), so a warp's shared reads are conflict-free or broadcasts; each float4
//    feeds 4 * TN (4 * TM) FFMAs. They are double-buffered in registers: step p + 1 is read
//    while the FFMAs of step p run.
//  - Edges: a tile whose rows are all in range copies whole slices without checks, 16 bytes
//    at a time when the operand is 16-byte aligned with a leading dimension that is a
//    multiple of 4; with FAST4, unaligned operands' whole slices are copied 4 bytes at a
//    time without checks too (kept out of the large kernel, which it slows: see
//    docs/performance.md). Everything else (edge tiles, the last partial slice when k is not
//    a multiple of BK) takes the checked path: cp.async's source size zero-fills what is
//    out of range, and the register loads read element by element.
//  - sm_75 (no cp.async): the same ring, filled by plain loads and stores.
//  - The epilogue stores a thread's runs of 4 rows as float4s when C allows it, and reads C
//    only when beta != 0 (BLAS: with beta == 0, C may hold NaN).
//
// Launched by libcudaload/kernels.c through the driver API with (BM / (LM * TM)) *
// (BN / ((32 / LM) * TN)) * 32 threads and grid (ceil(m / BM), ceil(n / BN)); static shared
// memory only (at most 48 KB: STAGES * BK * (BM + BN) floats).

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define CUDALOAD_SGEMM_CP_ASYNC 1
#else
#define CUDALOAD_SGEMM_CP_ASYNC 0
#endif

// One operand's slice in shared memory: BK rows (one per k) of R floats (BM for A, BN
// for B), k-major, unpadded. KCONT: the operand is contiguous along k in global memory (it
// is then transposed on its way through registers).
template <int R, int BK, int NT, bool KCONT>
struct SgemmOperand {
    static constexpr int LDS = R;                         // shared row length, floats
    static constexpr int FLOATS = BK * LDS;               // one stage
    static constexpr int UNITS = R * BK / 4;              // 4-float copies per slice
    static constexpr int SLOTS = (UNITS + NT - 1) / NT;   // per thread
    static constexpr bool ALL = UNITS % NT == 0;          // every thread copies SLOTS units
    static_assert(ALL || SLOTS == 1, "a slice must split evenly over the threads, or be smaller");
    // unit u = threadIdx.x + s * NT: KCONT: row u / (BK / 4), k 4 * (u % (BK / 4));
    // else: k u / (R / 4), rows 4 * (u % (R / 4)). Slot s + 1 lies STEP_ROWS rows (KCONT)
    // or STEP_K k (else) past slot s.
    static constexpr int STEP_ROWS = NT / (BK / 4), STEP_K = NT / (R / 4);
    static_assert(!ALL || SLOTS == 1 || (KCONT ? NT % (BK / 4) : NT % (R / 4)) == 0,
                  "slots a whole number of rows apart");
};

template <int BM, int BN, int BK, int TM, int TN, int LM, int STAGES, bool TA, bool TB>
struct SgemmShape {
    static constexpr int LN = 32 / LM;
    static constexpr int WM = LM * TM, WN = LN * TN;  // warp tile
    static constexpr int WARPS_M = BM / WM, WARPS_N = BN / WN;
    static constexpr int NT = 32 * WARPS_M * WARPS_N;  // threads per block
    using OA = SgemmOperand<BM, BK, NT, TA>;           // op(A) = A^T: A contiguous along k
    using OB = SgemmOperand<BN, BK, NT, !TB>;          // op(B) = B: B contiguous along k
    static constexpr int SMEM_FLOATS = STAGES * (OA::FLOATS + OB::FLOATS);
    static_assert(TM % 4 == 0 && TN % 4 == 0 && BK % 4 == 0, "runs of 4");
    static_assert(BM % WM == 0 && BN % WN == 0 && 32 % LM == 0, "warp tiling");
    static_assert(STAGES >= 2, "at least two stages");
};

__device__ __forceinline__ int sgemm_clamp4(int left) { return left >= 4 ? 4 : (left > 0 ? left : 0); }

// Read 4 floats at src, the first `valid` of them in range (the others read as 0, and
// are never touched). vec: src is 16-byte aligned.
__device__ __forceinline__ float4 sgemm_load4(const float *src, int valid, bool vec) {
    float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
    if (vec && valid == 4) return __ldg(reinterpret_cast<const float4 *>(src));
    if (valid > 0) v.x = __ldg(src);
    if (valid > 1) v.y = __ldg(src + 1);
    if (valid > 2) v.z = __ldg(src + 2);
    if (valid > 3) v.w = __ldg(src + 3);
    return v;
}

// Copy 4 floats at src to shared memory at dst (sdst: its shared-space address); as
// sgemm_load4, elements past `valid` become 0 (cp.async's zero fill) and are never read:
// their source address is replaced by `safe`.
__device__ __forceinline__ void sgemm_copy4(float *dst, unsigned sdst, const float *src, int valid, bool vec,
                                            const float *safe) {
#if CUDALOAD_SGEMM_CP_ASYNC
    (void)dst;
    if (vec) {
        const float *s = valid > 0 ? src : safe;
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(sdst), "l"(s), "r"(valid * 4));
    } else {
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const float *s = e < valid ? src + e : safe;
            asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(sdst + 4 * e), "l"(s),
                         "r"(e < valid ? 4 : 0));
        }
    }
#else
    (void)sdst, (void)safe;
    *reinterpret_cast<float4 *>(dst) = sgemm_load4(src, valid, vec);
#endif
}

// The same for 4 floats all in range: 16-byte aligned (vec) or not.
__device__ __forceinline__ void sgemm_copy4_inside(float *dst, unsigned sdst, const float *src, bool vec) {
#if CUDALOAD_SGEMM_CP_ASYNC
    (void)dst;
    if (vec) {
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(sdst), "l"(src));
    } else {
#pragma unroll
        for (int e = 0; e < 4; e++)
            asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(sdst + 4 * e), "l"(src + e));
    }
#else
    (void)sdst;
    *reinterpret_cast<float4 *>(dst) = vec ? __ldg(reinterpret_cast<const float4 *>(src))
                                           : make_float4(__ldg(src), __ldg(src + 1), __ldg(src + 2), __ldg(src + 3));
#endif
}

__device__ __forceinline__ void sgemm_commit() {
#if CUDALOAD_SGEMM_CP_ASYNC
    asm volatile("cp.async.commit_group;\n" ::);
#endif
}

template <int N>
__device__ __forceinline__ void sgemm_wait() {
#if CUDALOAD_SGEMM_CP_ASYNC
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
#endif
}

// A thread's share of bringing one operand's slices into shared memory: SLOTS 4-float
// units (see SgemmOperand), reached from one source pointer that advances by a slice per
// fetch. !KCONT: a unit is 4 consecutive rows at one k, copied by cp.async as it is.
// KCONT: a unit is 4 consecutive k of one row, loaded into registers by fetch() and stored
// transposed (into 4 rows of the stage) by stash(). Only the pointer, the unit's place in
// a stage and the held values stay in registers; the range checks of edge tiles and of the
// last slice recompute what they need.
template <int R, int BK, int NT, bool KCONT, bool FAST4>
struct SgemmLoader {
    using O = SgemmOperand<R, BK, NT, KCONT>;
    const float *src;   // slot 0's first element in the next slice to fetch
    int soff;           // slot 0's place in a stage, floats
    bool inside;        // all rows of the tile in range
    bool fast;          // inside, and the operand 16-byte aligned
    float4 held[KCONT ? O::SLOTS : 1];  // KCONT: fetched, not yet stashed

    static __device__ __forceinline__ int unit_row(int u) { return KCONT ? u / (BK / 4) : (u % (R / 4)) * 4; }
    static __device__ __forceinline__ int unit_k(int u) { return KCONT ? (u % (BK / 4)) * 4 : u / (R / 4); }

    // X holds rows x k (KCONT: element (i, p) at X[p + i * ld]) or k x rows (X[i + p * ld]).
    __device__ __forceinline__ void init(const float *X, long long ld, int rows, int r0, bool vec) {
        const int u = !O::ALL && (int)threadIdx.x >= O::UNITS ? 0 : threadIdx.x;  // the others copy nothing
        const int i = unit_row(u), p = unit_k(u);
        src = KCONT ? X + (long long)p + (long long)(r0 + i) * ld : X + (long long)(r0 + i) + (long long)p * ld;
        soff = p * O::LDS + i;
        inside = r0 + R <= rows;
        fast = vec && inside;
    }

    // Start bringing in the slice at k0 (into the stage at sgen, shared address sbase).
    __device__ __forceinline__ void fetch(float *sgen, unsigned sbase, int k0, int k, long long ld, int rows, int r0,
                                          bool vec, const float *safe) {
        if (!O::ALL && (int)threadIdx.x >= O::UNITS) return;
        const long long slot_step = KCONT ? O::STEP_ROWS * ld : O::STEP_K * ld;
        const int slot_soff = KCONT ? O::STEP_ROWS : O::STEP_K * O::LDS;
        if (fast && k0 + BK <= k) {  // the whole slice is in range, 16-byte copies
#pragma unroll
            for (int s = 0; s < O::SLOTS; s++) {
                const float *g = src + s * slot_step;
                if constexpr (KCONT)
                    held[s] = __ldg(reinterpret_cast<const float4 *>(g));
                else
                    sgemm_copy4_inside(sgen + soff + s * slot_soff, sbase + 4u * (soff + s * slot_soff), g, true);
            }
        } else if (FAST4 && inside && k0 + BK <= k) {  // the whole slice is in range, 4-byte copies
#pragma unroll
            for (int s = 0; s < O::SLOTS; s++) {
                const float *g = src + s * slot_step;
                if constexpr (KCONT)
                    held[s] = make_float4(__ldg(g), __ldg(g + 1), __ldg(g + 2), __ldg(g + 3));
                else
                    sgemm_copy4_inside(sgen + soff + s * slot_soff, sbase + 4u * (soff + s * slot_soff), g, false);
            }
        } else {
#pragma unroll
            for (int s = 0; s < O::SLOTS; s++) {
                const int u = threadIdx.x + s * NT;
                const int i = r0 + unit_row(u), p = k0 + unit_k(u);
                if constexpr (KCONT) {
                    held[s] = sgemm_load4(src + s * slot_step, i < rows ? sgemm_clamp4(k - p) : 0, vec);
                } else {
                    sgemm_copy4(sgen + soff + s * slot_soff, sbase + 4u * (soff + s * slot_soff), src + s * slot_step,
                                p < k ? sgemm_clamp4(rows - i) : 0, vec, safe);
                }
            }
        }
        src += KCONT ? BK : BK * ld;
    }

    // KCONT: store what fetch() loaded into the stage at sgen, transposed.
    __device__ __forceinline__ void stash(float *sgen) {
        if constexpr (KCONT) {
            if (!O::ALL && (int)threadIdx.x >= O::UNITS) return;
#pragma unroll
            for (int s = 0; s < O::SLOTS; s++) {
                float *d = sgen + soff + s * O::STEP_ROWS;
                d[0] = held[s].x, d[O::LDS] = held[s].y, d[2 * O::LDS] = held[s].z, d[3 * O::LDS] = held[s].w;
            }
        } else {
            (void)sgen;
        }
    }
};

// A thread's TH values of one operand at k step p of a stage: runs of 4 rows at
// w0 + g * 4 * L + 4 * l (g < TH / 4), read as float4s.
template <int LDS, int TH, int L>
__device__ __forceinline__ void sgemm_fragment(float (&f)[TH], const float *stage, int w0, int l, int p) {
#pragma unroll
    for (int g = 0; g < TH / 4; g++) {
        float4 v = *reinterpret_cast<const float4 *>(stage + p * LDS + w0 + g * 4 * L + 4 * l);
        f[4 * g] = v.x, f[4 * g + 1] = v.y, f[4 * g + 2] = v.z, f[4 * g + 3] = v.w;
    }
}

template <int BM, int BN, int BK, int TM, int TN, int LM, int STAGES, bool FAST4, bool TA, bool TB>
__device__ __forceinline__ void sgemm_body(int m, int n, int k, float alpha, const float *__restrict__ A, long long lda,
                                           const float *__restrict__ B, long long ldb, float beta, float *__restrict__ C,
                                           long long ldc, int vec_a, int vec_b) {
    using S = SgemmShape<BM, BN, BK, TM, TN, LM, STAGES, TA, TB>;
    using OA = typename S::OA;
    using OB = typename S::OB;
    constexpr int LN = S::LN;
    __shared__ __align__(16) float smem[S::SMEM_FLOATS];
    float *const sA = smem, *const sB = smem + STAGES * OA::FLOATS;
    const unsigned sA_addr = (unsigned)__cvta_generic_to_shared(sA);
    const unsigned sB_addr = (unsigned)__cvta_generic_to_shared(sB);

    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int lm = lane % LM, ln = lane / LM;
    const int wm0 = (warp % S::WARPS_M) * S::WM, wn0 = (warp / S::WARPS_M) * S::WN;
    const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;

    SgemmLoader<BM, BK, S::NT, TA, FAST4> la;
    SgemmLoader<BN, BK, S::NT, !TB, FAST4> lb;
    la.init(A, lda, m, m0, vec_a);
    lb.init(B, ldb, n, n0, vec_b);

    float acc[TM][TN];
#pragma unroll
    for (int r = 0; r < TM; r++)
#pragma unroll
        for (int c = 0; c < TN; c++) acc[r][c] = 0.f;

    const int slices = (k + BK - 1) / BK;
    // Prologue: slices 0 .. STAGES-1 fetched into stages 0 .. STAGES-1 (one commit group
    // per slice, empty or not); all but the last stashed at once.
#pragma unroll
    for (int s = 0; s < STAGES; s++) {
        if (s < slices) {
            la.fetch(sA + s * OA::FLOATS, sA_addr + 4u * s * OA::FLOATS, s * BK, k, lda, m, m0, vec_a, A);
            lb.fetch(sB + s * OB::FLOATS, sB_addr + 4u * s * OB::FLOATS, s * BK, k, ldb, n, n0, vec_b, B);
            if (s < STAGES - 1) {
                la.stash(sA + s * OA::FLOATS);
                lb.stash(sB + s * OB::FLOATS);
            }
        }
        sgemm_commit();
    }
    sgemm_wait<STAGES - 1>();
    __syncthreads();

    // Main loop. Fragments are double-buffered in registers: the values of k step p + 1
    // are read from shared memory while the FFMAs of step p run. Before the last step of
    // slice t: the held registers of slice t + STAGES - 1 are stashed, a barrier makes
    // slice t + 1 visible (and frees slice t's stage, all of whose values are in
    // registers by then), slice t + STAGES is fetched into that stage, and the first
    // fragment of slice t + 1 is read while the last FFMAs of slice t run.
    float fa[2][TM], fb[2][TN];
    sgemm_fragment<OA::LDS, TM, LM>(fa[0], sA, wm0, lm, 0);
    sgemm_fragment<OB::LDS, TN, LN>(fb[0], sB, wn0, ln, 0);
    int cur = 0, prev = STAGES - 1;  // stage of slice t, of slice t - 1 (= that of t + STAGES - 1)
    for (int t = 0; t < slices; t++) {
        const float *a_st = sA + cur * OA::FLOATS, *b_st = sB + cur * OB::FLOATS;
        const int next = cur + 1 == STAGES ? 0 : cur + 1;
#pragma unroll
        for (int p = 0; p < BK; p++) {
            if (p == BK - 1) {
                if (t + STAGES - 1 < slices) {
                    la.stash(sA + prev * OA::FLOATS);
                    lb.stash(sB + prev * OB::FLOATS);
                }
                sgemm_wait<STAGES - 2>();  // this thread's copies of slice t + 1 have landed
                __syncthreads();
                if (t + STAGES < slices) {
                    la.fetch(sA + cur * OA::FLOATS, sA_addr + 4u * cur * OA::FLOATS, (t + STAGES) * BK, k, lda, m, m0,
                             vec_a, A);
                    lb.fetch(sB + cur * OB::FLOATS, sB_addr + 4u * cur * OB::FLOATS, (t + STAGES) * BK, k, ldb, n, n0,
                             vec_b, B);
                }
                sgemm_commit();
                sgemm_fragment<OA::LDS, TM, LM>(fa[(p + 1) % 2], sA + next * OA::FLOATS, wm0, lm, 0);
                sgemm_fragment<OB::LDS, TN, LN>(fb[(p + 1) % 2], sB + next * OB::FLOATS, wn0, ln, 0);
            } else {
                sgemm_fragment<OA::LDS, TM, LM>(fa[(p + 1) % 2], a_st, wm0, lm, p + 1);
                sgemm_fragment<OB::LDS, TN, LN>(fb[(p + 1) % 2], b_st, wn0, ln, p + 1);
            }
#pragma unroll
            for (int r = 0; r < TM; r++)
#pragma unroll
                for (int c = 0; c < TN; c++) acc[r][c] = fmaf(fa[p % 2][r], fb[p % 2][c], acc[r][c]);
        }
        prev = cur;
        cur = next;
    }
    sgemm_wait<0>();  // no copy may outlive the block (only empty groups remain by now)

    // Epilogue: a thread's rows come in runs of 4 consecutive rows of C, stored as one
    // float4 when C allows it. C is read only when beta != 0 (BLAS: with beta == 0, C may
    // hold NaN).
    const bool vec_c = ((unsigned long long)C % 16 == 0) && ldc % 4 == 0;
#pragma unroll
    for (int c = 0; c < TN; c++) {
        const int gj = n0 + wn0 + (c / 4) * 4 * LN + 4 * ln + c % 4;
        if (gj >= n) continue;
#pragma unroll
        for (int g = 0; g < TM / 4; g++) {
            const int gi = m0 + wm0 + g * 4 * LM + 4 * lm;
            float *dst = C + (long long)gi + (long long)gj * ldc;
            float v[4];
#pragma unroll
            for (int e = 0; e < 4; e++) v[e] = alpha == 0.f ? 0.f : alpha * acc[4 * g + e][c];
            if (vec_c && gi + 3 < m) {
                float4 *d4 = reinterpret_cast<float4 *>(dst);
                if (beta != 0.f) {
                    float4 old = *d4;
                    v[0] = fmaf(beta, old.x, v[0]), v[1] = fmaf(beta, old.y, v[1]);
                    v[2] = fmaf(beta, old.z, v[2]), v[3] = fmaf(beta, old.w, v[3]);
                }
                *d4 = make_float4(v[0], v[1], v[2], v[3]);
            } else {
#pragma unroll
                for (int e = 0; e < 4; e++)
                    if (gi + e < m) dst[e] = beta == 0.f ? v[e] : fmaf(beta, dst[e], v[e]);
            }
        }
    }
}

#define CUDALOAD_SGEMM_THREADS(BM, BN, TM, TN, LM) (32 * ((BM) / ((LM) * (TM))) * ((BN) / ((32 / (LM)) * (TN))))

// Entry points: <tile>_<op(A)><op(B)>, found by name by the loader. Split k (gridDim.z > 1):
// block z computes the partial product over k in [z * kc, z * kc + kc) into C + z * c_split
// (a scratch buffer then summed by cudaload_sgemm_splitk_reduce); with one split, kc = k and
// the whole product goes to C. kc is a multiple of 16, so a split's operands keep their
// 16-byte alignment.
#define CUDALOAD_SGEMM_ENTRY(NAME, BM, BN, BK, TM, TN, LM, STAGES, FAST4, TA, TB, MINB)                               \
    extern "C" __global__ void __launch_bounds__(CUDALOAD_SGEMM_THREADS(BM, BN, TM, TN, LM), MINB)                      \
        NAME(int m, int n, int k, float alpha, const float *A, long long lda, const float *B, long long ldb, float beta, \
             float *C, long long ldc, int vec_a, int vec_b, int kc, long long c_split) {                               \
        const long long k0 = (long long)blockIdx.z * kc;                                                               \
        const int kz = k - k0 < kc ? (int)(k - k0) : kc;                                                               \
        sgemm_body<BM, BN, BK, TM, TN, LM, STAGES, FAST4, TA, TB>(m, n, kz, alpha, A + (TA ? k0 : k0 * lda), lda,       \
                                                                  B + (TB ? k0 * ldb : k0), ldb, beta,                 \
                                                                  C + blockIdx.z * c_split, ldc, vec_a, vec_b);        \
    }

// The sum of split k's partial products: C(i, j) = alpha * sum_z W[z * w_split + i + j * m] +
// beta * C(i, j), summed in the order of z (the same result on every run). C is read only
// when beta != 0. One thread per element; grid (ceil(m / 256), n).
extern "C" __global__ void __launch_bounds__(256)
    cudaload_sgemm_splitk_reduce(int m, int n, int splits, const float *__restrict__ W, long long w_split, float alpha,
                                 float beta, float *__restrict__ C, long long ldc) {
    const int i = blockIdx.x * 256 + threadIdx.x, j = blockIdx.y;
    if (i >= m || j >= n) return;
    const float *w = W + i + (long long)j * m;
    float s = 0.f;
    for (int z = 0; z < splits; z++) s += w[z * w_split];
    float *dst = C + i + (long long)j * ldc;
    const float v = alpha * s;
    *dst = beta == 0.f ? v : fmaf(beta, *dst, v);
}

// The copy of an operand whose leading dimension (or address) rules out 16-byte loads into
// an aligned scratch: matrix z (blockIdx.z: 0 for A, 1 for B; rows == 0 for one that needs no
// copy) of rows x cols at src (leading dimension lds) to dst (ldd, a multiple of 4, dst
// 16-byte aligned). A thread reads 4 consecutive elements of a column and writes them as one
// float4 (the rows past the end of a column, up to ldd, become 0); blocks stride over the
// columns (the grid's y dimension holds at most 65535). Twice the rate of cuMemcpy2DAsync on
// these pitches (docs/performance.md).
extern "C" __global__ void __launch_bounds__(256)
    cudaload_sgemm_pad_copy(int rows0, int cols0, const float *__restrict__ src0, long long lds0, float *__restrict__ dst0,
                            long long ldd0, int rows1, int cols1, const float *__restrict__ src1, long long lds1,
                            float *__restrict__ dst1, long long ldd1) {
    const bool second = blockIdx.z == 1;
    const int rows = second ? rows1 : rows0, cols = second ? cols1 : cols0;
    const float *src = second ? src1 : src0;
    float *dst = second ? dst1 : dst0;
    const long long lds = second ? lds1 : lds0, ldd = second ? ldd1 : ldd0;
    const int i = (blockIdx.x * 256 + threadIdx.x) * 4;
    if (i >= rows) return;
    for (long long j = blockIdx.y; j < cols; j += gridDim.y) {
        const float *s = src + i + j * lds;
        float4 v;
        v.x = __ldg(s);
        v.y = i + 1 < rows ? __ldg(s + 1) : 0.f;
        v.z = i + 2 < rows ? __ldg(s + 2) : 0.f;
        v.w = i + 3 < rows ? __ldg(s + 3) : 0.f;
        *reinterpret_cast<float4 *>(dst + i + j * ldd) = v;
    }
}

#ifndef CUDALOAD_SGEMM_NO_ENTRIES
// Configurations chosen with bench/sgemm_tune.cu on the H100 (see docs/performance.md);
// libcudaload/kernels.c picks one per call from the number of tiles and the alignment.
// 256 x 128 x 8 tiles, warps of 64 x 64 (4 x 8 lanes of 16 x 8), 256 threads, 2 stages,
// one block per SM (up to 255 registers): large problems.
CUDALOAD_SGEMM_ENTRY(cudaload_sgemm_256x128_nn, 256, 128, 8, 16, 8, 4, 2, false, false, false, 1)
CUDALOAD_SGEMM_ENTRY(cudaload_sgemm_256x128_nt, 256, 128, 8, 16, 8, 4, 2, false, false, true, 1)
CUDALOAD_SGEMM_ENTRY(cudaload_sgemm_256x128_tn, 256, 128, 8, 16, 8, 4, 2, false, true, false, 1)
CUDALOAD_SGEMM_ENTRY(cudaload_sgemm_256x128_tt, 256, 128, 8, 16, 8, 4, 2, false, true, true, 1)
// 128 x 64 x 16 tiles, warps of 64 x 32 (8 x 4 lanes of 8 x 8), 128 threads, 3 stages, two
// blocks per SM: problems too small to fill the GPU with the large tile, and operands that
// are not 16-byte aligned.
CUDALOAD_SGEMM_ENTRY(cudaload_sgemm_128x64_nn, 128, 64, 16, 8, 8, 8, 3, true, false, false, 2)
CUDALOAD_SGEMM_ENTRY(cudaload_sgemm_128x64_nt, 128, 64, 16, 8, 8, 8, 3, true, false, true, 2)
CUDALOAD_SGEMM_ENTRY(cudaload_sgemm_128x64_tn, 128, 64, 16, 8, 8, 8, 3, true, true, false, 2)
CUDALOAD_SGEMM_ENTRY(cudaload_sgemm_128x64_tt, 128, 64, 16, 8, 8, 8, 3, true, true, true, 2)
#endif
