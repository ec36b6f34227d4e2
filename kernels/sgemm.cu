/* SPDX-License-Identifier: Apache-2.0 */
// sgemm.cu -- C = alpha * op(A) * op(B) + beta * C in FP32 (FFMA, no tensor cores), BLAS
// column-major semantics, bundled into libcudaload's fatbin.
//
// Structure (a warp-tiled, multi-stage SIMT GEMM whose main loop is straight-line code):
//
//  - A block computes a BM x BN tile of C, stepping through k in slices of BK. Its warps
//    each own a WM x WN part of the tile, and a warp's 32 lanes are LM (along m) x LN
//    (along n) threads of TM x TN results each (WM = LM * TM, WN = LN * TN).
//  - Both operands' slices are kept in shared memory k-major, X[p][i] (row p of a stage
//    holds the tile's BM rows of op(A), or BN columns of op(B), at k = k0 + p), in a ring of
//    STAGES stages, filled by cp.async straight from global memory (sm_80 and up; sm_75:
//    plain loads and stores, the same ring). An operand contiguous along m (or n) is copied
//    in 16-byte runs of 4 rows when VEC (the caller guarantees 16-byte alignment and a
//    leading dimension that is a multiple of 4), else element by element; one contiguous
//    along k is copied element by element into 4-float-padded rows (the 8 k of a row then
//    land in distinct banks), or, when KV (the same guarantee, and k a multiple of 4),
//    loaded 4 k at a time into registers (a slice ahead, at the end of the slice before; for
//    slices of 16 k at the slice's first step) and stored transposed into those rows before
//    the slice's last step.
//  - Everything that decides a copy is fixed before the main loop: each copy's source
//    pointer (advanced by a slice per fetch), its place in a stage, and its size (0 for rows
//    outside the matrix: cp.async then writes zeros). The partial slice (k % BK) is the first
//    one, so every later slice is whole; slices past the end copy nothing. The main loop so
//    has no branch but its own, and the compiler interleaves the copies with the FFMAs (the
//    structure of cuBLAS's own SIMT kernels; a branchy fetch after each barrier cost 5% of
//    the large tile's time: docs/performance.md).
//  - Main loop, per slice t: at k step 0 the copies of slice t + STAGES - 1 are issued into
//    the stage slice t - 1 used (free since the last barrier); the FFMAs of steps 0 .. BK-2
//    run on fragments read from stage t; before the last step, one wait and one barrier make
//    slice t + 1 visible, and its first fragment is read while the FFMAs of the last step of
//    slice t run.
//  - Fragments: at each k step a thread reads its TM values of op(A) and TN of op(B) as
//    float4 runs of 4 consecutive rows, LM * 4 (LN * 4) rows apart, so a warp's shared reads
//    are conflict-free or broadcasts; each float4 feeds 4 * TN (4 * TM) FFMAs, in serpentine
//    order along the rows of the thread's TM x TN results, or down its columns (COL: the
//    arithmetic is the same, the order ptxas schedules best differs from kernel to kernel).
//    They are double-buffered in registers: step p + 1 is read while the FFMAs of step p run.
//  - The epilogue stores a thread's runs of 4 rows as float4s when C allows it, and reads C
//    only when beta != 0 (BLAS: with beta == 0, C may hold NaN).
//
// Launched by libcudaload/kernels_launch.c through the driver API with 32 * (BM / WM) * (BN / WN)
// threads and grid (ceil(m / BM), ceil(n / BN), splits); static shared memory only (at most
// 48 KB).

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define CUDALOAD_SGEMM_CP_ASYNC 1
#else
#define CUDALOAD_SGEMM_CP_ASYNC 0
#endif

// Copy the first `size` bytes of BYTES (4 or 16) at src to shared memory at dst, zeros in
// the rest (cp.async's zero fill; with size 0 nothing is read).
template <int BYTES>
__device__ __forceinline__ void sgemm_copy(float *dst, const float *src, int size) {
#if CUDALOAD_SGEMM_CP_ASYNC
    const unsigned sdst = (unsigned)__cvta_generic_to_shared(dst);
    if constexpr (BYTES == 16)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(sdst), "l"(src), "r"(size));
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(sdst), "l"(src), "r"(size));
#else
    if constexpr (BYTES == 16) {
        float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
        if (size == 16) {
            v = __ldg(reinterpret_cast<const float4 *>(src));
        } else {
            if (size > 0) v.x = __ldg(src);
            if (size > 4) v.y = __ldg(src + 1);
            if (size > 8) v.z = __ldg(src + 2);
        }
        *reinterpret_cast<float4 *>(dst) = v;
    } else {
        *dst = size > 0 ? __ldg(src) : 0.f;
    }
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

// One operand's slices: R rows (BM of op(A), or BN of op(B)) by BK k, k-major in a stage
// (LDS floats per k). KCONT: the operand is contiguous along k in global memory. A thread
// copies SLOTS units of E elements.
// !KCONT: unit u is k = u / (R / E), rows E * (u % (R / E)) .. (E = 4 when VEC): a warp's
// units are consecutive rows, and a thread keeps its rows from slot to slot (slots are SLOT_K
// k apart); copied by cp.async.
// KCONT: unit u is row u / (BK / E), k E * (u % (BK / E)) ..: a thread keeps its k from slot
// to slot (slots are SLOT_ROWS rows apart). E = 1 (!KV): copied by cp.async, a warp reading
// 32-byte runs of 4 rows. E = 4 (KV: the operand 16-byte aligned, its leading dimension and k
// multiples of 4): a unit is loaded as one float4 into registers at fetch() and stored
// transposed, one float per k row, at stash(). Rows are padded by 4 floats so that either
// way a warp's stores hit distinct banks.
template <int R, int BK, int NT, bool KCONT, bool VEC, bool KV>
struct SgemmLoader {
    static constexpr bool REG = KCONT && KV;  // through registers
    static constexpr int E = (!KCONT && VEC) || REG ? 4 : 1;
    static constexpr int LDS = KCONT ? R + 4 : R;
    static constexpr int FLOATS = BK * LDS;  // one stage
    static constexpr int SLOTS = R * BK / E / NT;
    static constexpr int SLOT_K = KCONT ? 0 : NT / (R / E), SLOT_ROWS = KCONT ? NT / (BK / E) : 0;
    static_assert((R * BK / E) % NT == 0, "a slice splits evenly over the threads");
    static_assert(KCONT ? NT % (BK / E) == 0 : NT % (R / E) == 0, "a thread keeps its rows (or its k) from slot to slot");

    const float *src[SLOTS];  // each slot's element in the next slice to fetch
    long long slice_step;     // elements from one slice to the next
    int soff;                 // slot 0's place in a stage, floats
    int size[SLOTS];          // bytes each slot copies from a whole slice (0: rows outside the matrix)
    float4 held[REG ? SLOTS : 1];  // REG: fetched, not yet stashed

    static __device__ __forceinline__ constexpr int slot_soff(int s) { return KCONT ? s * SLOT_ROWS : s * SLOT_K * LDS; }

    // One slot's copy of the next slice: `bytes` of it (0: zeros).
    __device__ __forceinline__ void copy(float *stage, int s, int bytes) {
        if constexpr (REG) {
            held[s] = bytes ? __ldg(reinterpret_cast<const float4 *>(src[s])) : make_float4(0.f, 0.f, 0.f, 0.f);
            (void)stage;
        } else {
            sgemm_copy<4 * E>(stage + soff + slot_soff(s), src[s], bytes);
        }
    }

    // X holds rows x k (KCONT: element (i, p) at X[p + i * ld]) or k x rows (X[i + p * ld]).
    // Fetches the first slice, at k = kst <= 0 (its k < 0 become zeros), into stage0.
    __device__ __forceinline__ void init(const float *X, long long ld, int rows, int r0, int kst, float *stage0) {
        const int t = threadIdx.x;
        const int row = KCONT ? t / (BK / E) : E * (t % (R / E)), kk = KCONT ? E * (t % (BK / E)) : t / (R / E);
        const float *x0 = KCONT ? X + (long long)(kst + kk) + (long long)(r0 + row) * ld
                                : X + (long long)(r0 + row) + (long long)(kst + kk) * ld;
        const long long slot_step = KCONT ? (long long)SLOT_ROWS * ld : (long long)SLOT_K * ld;
        slice_step = KCONT ? BK : (long long)BK * ld;
        soff = kk * LDS + row;
#pragma unroll
        for (int s = 0; s < SLOTS; s++) {
            const int i = r0 + row + s * SLOT_ROWS, p = kst + kk + s * SLOT_K;
            src[s] = x0 + s * slot_step;
            size[s] = i < rows ? (REG ? 16 : 4 * min(E, rows - i)) : 0;
            copy(stage0, s, p >= 0 ? size[s] : 0);  // REG: k is a multiple of 4, so a unit is all in or all out
            src[s] += slice_step;
        }
        stash(stage0);
    }

    // Fetch the next slice into stage (zeros when it is past the end: !live); REG: into
    // registers, for stash().
    __device__ __forceinline__ void fetch(float *stage, bool live) {
#pragma unroll
        for (int s = 0; s < SLOTS; s++) {
            copy(stage, s, live ? size[s] : 0);
            src[s] += slice_step;
        }
    }

    // REG: store what fetch() loaded into stage, transposed.
    __device__ __forceinline__ void stash(float *stage) {
        if constexpr (REG) {
#pragma unroll
            for (int s = 0; s < SLOTS; s++) {
                float *d = stage + soff + slot_soff(s);
                d[0] = held[s].x, d[LDS] = held[s].y, d[2 * LDS] = held[s].z, d[3 * LDS] = held[s].w;
            }
        } else {
            (void)stage;
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

// The epilogue of the SC tiles (sgemm_body), C through shared memory. A thread's rows come in
// runs of 4 consecutive rows of C. Where C is 16-byte aligned with ldc a multiple of 4, the
// other tiles store each run as one float4, a warp's stores covering whole 32-byte sectors;
// elsewhere they store it one float at a time, 4 floats apart, and a warp writes every sector of
// its columns 4 times over. When all blocks end at once (a grid of one wave) those stores are the
// kernel's last work, unhidden: 2048^3 with ld + 13 on the H100, 8% of the 256 x 128 tile's time
// (docs/performance.md). Here each warp passes one column of each lane at a time through its part
// of the stages (free once every thread is past the main loop), and its lanes store 32
// consecutive rows of a column at a time, whatever C's alignment: one path, half the code of the
// other tiles' two. The values are scaled by alpha on the way in, into new registers: a float4
// store of acc itself would want 4 of acc in 4 consecutive registers, a constraint that cost the
// main loop's FFMAs register bank conflicts (4-13% on the H100). Only the tiles that need it
// carry this code: any change to a kernel moves its registers, and the other tiles measured 2-5%
// slower with it.
template <int TM, int TN, int LM, int WM, int STAGE_FLOATS, int WARPS>
__device__ __forceinline__ void sgemm_store_staged(const float (&acc)[TM][TN], float *smem, int m, int n, int m0, int n0,
                                                   int warp, int wm0, int wn0, int lane, int lm, int ln, float alpha,
                                                   float beta, float *__restrict__ C, long long ldc) {
    constexpr int LN = 32 / LM, LDW = WM + 16;  // a warp's LN columns, 16 floats apart: a quarter warp's
                                                // float4 stores (two columns' lanes when LM = 4) hit distinct banks
    static_assert(WARPS * LN * LDW <= STAGE_FLOATS && WM % 32 == 0, "the epilogue fits the stages, in runs of 32 rows");
    float *const mine = smem + warp * LN * LDW;
    __syncthreads();  // every warp is past its last read of the stages
#pragma unroll
    for (int c = 0; c < TN; c++) {
        // column c of each lane (lm, ln): its rows g * 4 * LM + 4 * lm .. + 3 of the warp's column
        // (c / 4) * 4 * LN + 4 * ln + c % 4
        __syncwarp();
#pragma unroll
        for (int g = 0; g < TM / 4; g++) {
            float4 v;
            v.x = alpha == 0.f ? 0.f : alpha * acc[4 * g][c], v.y = alpha == 0.f ? 0.f : alpha * acc[4 * g + 1][c];
            v.z = alpha == 0.f ? 0.f : alpha * acc[4 * g + 2][c], v.w = alpha == 0.f ? 0.f : alpha * acc[4 * g + 3][c];
            *reinterpret_cast<float4 *>(mine + ln * LDW + g * 4 * LM + 4 * lm) = v;
        }
        __syncwarp();
        const int gi = m0 + wm0 + lane;
#pragma unroll 1  // (unrolled, this loop's addresses took registers from the main loop)
        for (int l = 0; l < LN; l++) {
            const int gj = n0 + wn0 + (c / 4) * 4 * LN + 4 * l + c % 4;
            if (gj >= n) continue;
            float *const col = C + (long long)gj * ldc;
#pragma unroll
            for (int q = 0; q < WM / 32; q++) {
                if (gi + 32 * q >= m) continue;
                float *const dst = col + gi + 32 * q;
                const float v = mine[l * LDW + 32 * q + lane];
                *dst = beta == 0.f ? v : fmaf(beta, *dst, v);
            }
        }
    }
}

// Rows of tiles per group of the block order (sgemm_body). On the H100, against the plain order:
// 4096^3 NN 1.000 -> 1.025x cuBLAS, 8192^3 1.006 -> 1.031, TN 0.969 -> 0.978, TT 0.978 -> 0.995;
// groups of 8 and 16 within 0.3% of 4 (docs/performance.md).
#define CUDALOAD_SGEMM_GROUP 4u
template <int BM, int BN, int BK, int TM, int TN, int LM, int STAGES, bool VEC, bool KV, bool TA, bool TB, bool SC,
          bool COL>
__device__ __forceinline__ void sgemm_body(int m, int n, int k, float alpha, const float *__restrict__ A, long long lda,
                                           const float *__restrict__ B, long long ldb, float beta, float *__restrict__ C,
                                           long long ldc) {
    constexpr int LN = 32 / LM, WM = LM * TM, WN = LN * TN, WARPS_M = BM / WM, WARPS_N = BN / WN;
    constexpr int NT = 32 * WARPS_M * WARPS_N;
    static_assert(TM % 4 == 0 && TN % 4 == 0 && BM % WM == 0 && BN % WN == 0 && 32 % LM == 0, "warp tiling");
    static_assert(STAGES >= 2, "at least two stages");
    using LA = SgemmLoader<BM, BK, NT, TA, VEC, KV>;   // op(A) = A^T: A contiguous along k
    using LB = SgemmLoader<BN, BK, NT, !TB, VEC, KV>;  // op(B) = B: B contiguous along k
    // Operands through registers (REG): with slices of 8 k, a slice's loads are issued at the end
    // of the slice before, just before its barrier, and stay in flight through a whole slice.
    // Issued at step 0, ptxas moved them to step 5, 230 instructions before their stores, and
    // their latency showed as stalls (TN 4096^3 on the H200: 0.977 -> 0.994x cuBLAS). With 16 k,
    // step 0 leaves time enough and keeps the registers free across the barrier (TT: 1.042x
    // cuBLAS, against 1.008 issued early).
    constexpr bool EARLY_A = LA::REG && BK < 16, EARLY_B = LB::REG && BK < 16;
    __shared__ __align__(16) float smem[STAGES * (LA::FLOATS + LB::FLOATS)];
    float *const sA = smem, *const sB = smem + STAGES * LA::FLOATS;

    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int lm = lane % LM, ln = lane / LM;
    const int wm0 = (warp % WARPS_M) * WM, wn0 = (warp / WARPS_M) * WN;
    // The block's tile. The GPU starts blocks in the order of their linear index; taken plainly,
    // the blocks resident at once cover a few whole columns of tiles, which read all of op(A).
    // The large tiles, which serve grids of several waves, take theirs in groups of
    // CUDALOAD_SGEMM_GROUP rows of tiles along the columns: the blocks of a wave then cover a
    // square of tiles that share their rows of op(A) and columns of op(B) in L2. The other
    // tiles serve grids of a wave or two, where the order matters little: the small ones, and
    // the wide split tile (128 x 128, VEC without KV: one wave at most), whose kernel the extra
    // code made 0.6% slower (220 registers instead of 224). The linear index fits 32 bits: the
    // host keeps a launch's blocks within 2^32 - 1 (internal.h: CL_SGEMM_LAUNCH_BLOCKS_MAX).
    int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
    if constexpr (BM * BN >= 128 * 128 && (BM > 128 || KV || !VEC)) {
        const unsigned gm = gridDim.x, per_group = CUDALOAD_SGEMM_GROUP * gridDim.y;
        const unsigned linear = blockIdx.x + blockIdx.y * gm, g = linear / per_group, r = linear - g * per_group;
        const unsigned first = g * CUDALOAD_SGEMM_GROUP;
        const unsigned rows = gm - first < CUDALOAD_SGEMM_GROUP ? gm - first : CUDALOAD_SGEMM_GROUP;
        m0 = (int)(first + r % rows) * BM, n0 = (int)(r / rows) * BN;
    }

    float acc[TM][TN];
#pragma unroll
    for (int r = 0; r < TM; r++)
#pragma unroll
        for (int c = 0; c < TN; c++) acc[r][c] = 0.f;

    // 32-bit indices (kernels.c refuses larger sizes: internal.h, CL_SGEMM_K_MAX): m <= INT_MAX
    // and BM a power of 2, so m0 + BM - 1 (a tile's last row, and every row index below) is at
    // most INT_MAX; n is a launch's columns (at most 65535 tiles); k - kst is k rounded up to a
    // slice, at most CL_SGEMM_K_MAX rounded up to 16 = INT_MAX - 15. Offsets into the operands
    // are 64-bit.
    if (k > 0) {
        const int kst = k % BK == 0 ? 0 : k % BK - BK;  // the partial slice first
        const int slices = (k - kst) / BK;
        LA la;
        LB lb;
        // Prologue: slices 0 .. STAGES-2 into stages 0 .. STAGES-2, one commit group each.
        la.init(A, lda, m, m0, kst, sA);
        lb.init(B, ldb, n, n0, kst, sB);
        sgemm_commit();
#pragma unroll
        for (int s = 1; s < STAGES - 1; s++) {
            la.fetch(sA + s * LA::FLOATS, s < slices);
            lb.fetch(sB + s * LB::FLOATS, s < slices);
            la.stash(sA + s * LA::FLOATS);
            lb.stash(sB + s * LB::FLOATS);
            sgemm_commit();
        }
        if constexpr (EARLY_A) la.fetch(nullptr, STAGES - 1 < slices);  // slice STAGES - 1, stored in slice 0
        if constexpr (EARLY_B) lb.fetch(nullptr, STAGES - 1 < slices);
        sgemm_wait<STAGES - 2>();
        __syncthreads();

        float fa[2][TM], fb[2][TN];
        sgemm_fragment<LA::LDS, TM, LM>(fa[0], sA, wm0, lm, 0);
        sgemm_fragment<LB::LDS, TN, LN>(fb[0], sB, wn0, ln, 0);
        int rd = 0, wr = STAGES - 1;  // the stage of slice t; the one slice t + STAGES - 1 goes to
        for (int t = 0; t < slices; t++) {
            const float *a_st = sA + rd * LA::FLOATS, *b_st = sB + rd * LB::FLOATS;
            const int nx = rd + 1 == STAGES ? 0 : rd + 1;
#pragma unroll
            for (int p = 0; p < BK; p++) {
                if (p == 0) {
                    const bool live = t + STAGES - 1 < slices;
                    if constexpr (!EARLY_A) la.fetch(sA + wr * LA::FLOATS, live);
                    if constexpr (!EARLY_B) lb.fetch(sB + wr * LB::FLOATS, live);
                    sgemm_commit();
                }
                if (p == BK - 1) {
                    la.stash(sA + wr * LA::FLOATS);  // REG: slice t + STAGES - 1 (fetched at step 0, or a slice ago)
                    lb.stash(sB + wr * LB::FLOATS);
                    if constexpr (EARLY_A) la.fetch(nullptr, t + STAGES < slices);  // the slice after it
                    if constexpr (EARLY_B) lb.fetch(nullptr, t + STAGES < slices);
                    sgemm_wait<STAGES - 2>();  // this thread's copies of slice t + 1 have landed
                    __syncthreads();           // everyone's have; and stage t is read by nobody from here
                    sgemm_fragment<LA::LDS, TM, LM>(fa[(p + 1) % 2], sA + nx * LA::FLOATS, wm0, lm, 0);
                    sgemm_fragment<LB::LDS, TN, LN>(fb[(p + 1) % 2], sB + nx * LB::FLOATS, wn0, ln, 0);
                } else {
                    sgemm_fragment<LA::LDS, TM, LM>(fa[(p + 1) % 2], a_st, wm0, lm, p + 1);
                    sgemm_fragment<LB::LDS, TN, LN>(fb[(p + 1) % 2], b_st, wn0, ln, p + 1);
                }
                // serpentine, along the rows of acc (or, COL, down its columns): each turn reuses
                // an operand
#pragma unroll
                for (int i = 0; i < (COL ? TN : TM); i++)
#pragma unroll
                    for (int j0 = 0; j0 < (COL ? TM : TN); j0++) {
                        const int j = i % 2 ? (COL ? TM : TN) - 1 - j0 : j0;
                        const int r = COL ? j : i, c = COL ? i : j;
                        acc[r][c] = fmaf(fa[p % 2][r], fb[p % 2][c], acc[r][c]);
                    }
            }
            rd = nx;
            wr = wr + 1 == STAGES ? 0 : wr + 1;
        }
        sgemm_wait<0>();  // no copy may outlive the block (only empty ones remain by now)
    }

    // Epilogue: a thread's rows come in runs of 4 consecutive rows of C, stored as one
    // float4 when C allows it. C is read only when beta != 0 (BLAS: with beta == 0, C may
    // hold NaN).
    if constexpr (SC) {  // every C, aligned or not: the float4 path below would double the kernel's code
        sgemm_store_staged<TM, TN, LM, WM, STAGES * (LA::FLOATS + LB::FLOATS), WARPS_M * WARPS_N>(
            acc, smem, m, n, m0, n0, warp, wm0, wn0, lane, lm, ln, alpha, beta, C, ldc);
        return;
    }
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

// Entry points: <tile>_<op(A)><op(B)>, found by name by the loader; SC: C stored through shared
// memory (sgemm_store_staged). Split k (gridDim.z > 1):
// block z computes the partial product over k in [z * kc, z * kc + kc) into C + z * c_split
// (a scratch buffer then summed by cudaload_sgemm_splitk_reduce); with one split, kc = k and
// the whole product goes to C. kc is a multiple of 16, so a split's operands keep their
// 16-byte alignment.
#define CUDALOAD_SGEMM_ENTRY(NAME, BM, BN, BK, TM, TN, LM, STAGES, VEC, KV, TA, TB, SC, COL, MINB)                      \
    extern "C" __global__ void __launch_bounds__(CUDALOAD_SGEMM_THREADS(BM, BN, TM, TN, LM), MINB)                      \
        NAME(int m, int n, int k, float alpha, const float *A, long long lda, const float *B, long long ldb, float beta, \
             float *C, long long ldc, int kc, long long c_split) {                                                      \
        const long long k0 = (long long)blockIdx.z * kc;                                                                \
        const int kz = k - k0 < kc ? (int)(k - k0) : kc;                                                                \
        sgemm_body<BM, BN, BK, TM, TN, LM, STAGES, VEC, KV, TA, TB, SC, COL>(                                           \
            m, n, kz, alpha, A + (TA ? k0 : k0 * lda), lda, B + (TB ? k0 * ldb : k0), ldb, beta,                        \
            C + blockIdx.z * c_split, ldc);                                                                             \
    }

// The sum of split k's partial products: C(i, j) = alpha * sum_z W[z * w_split + i + j * m] +
// beta * C(i, j), summed in the order of z (the same result on every run). C is read only
// when beta != 0. A thread per 4 consecutive rows of a column (read 16 bytes at a time where W
// allows it), numbered down the columns one after another, so every thread of a block works
// whatever m is (128 x 8192: 32 groups of rows per column); grid ceil(groups / 256), 256
// threads, groups = ceil(m / 4) x n.
// On sm_90 and up it may be launched as a programmatic dependent of the partial products'
// kernel (libcudaload/kernels_launch.c): its blocks then start as that kernel's last ones end, and
// every thread first waits until that kernel is complete and its writes are visible
// (griddepcontrol.wait; an ordinary launch passes it at once).
extern "C" __global__ void __launch_bounds__(256)
    cudaload_sgemm_splitk_reduce(int m, int n, int splits, const float *__restrict__ W, long long w_split, float alpha,
                                 float beta, float *__restrict__ C, long long ldc) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
    // 32-bit: the partials are at most 1 GiB (libcudaload/sgemm_plan.c), so groups < 2^26
    const unsigned per_col = ((unsigned)m + 3) / 4, g = blockIdx.x * 256 + threadIdx.x;
    const unsigned j = g / per_col;
    const int i = (int)(g - j * per_col) * 4;
    if (j >= (unsigned)n) return;
    const float *w = W + i + (long long)j * m;
    float s[4] = {0.f, 0.f, 0.f, 0.f};
    if (i + 3 < m && (unsigned long long)w % 16 == 0 && w_split % 4 == 0) {  // then every slice's is aligned too
#pragma unroll 4
        for (int z = 0; z < splits; z++) {
            const float4 v = *reinterpret_cast<const float4 *>(w + z * w_split);
            s[0] += v.x, s[1] += v.y, s[2] += v.z, s[3] += v.w;
        }
    } else {
        for (int z = 0; z < splits; z++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                if (i + e < m) s[e] += w[z * w_split + e];
    }
    float *dst = C + i + (long long)j * ldc;
#pragma unroll
    for (int e = 0; e < 4; e++)
        if (i + e < m) {
            const float v = alpha * s[e];
            dst[e] = beta == 0.f ? v : fmaf(beta, dst[e], v);
        }
}

#ifndef CUDALOAD_SGEMM_NO_ENTRIES
// The tile table, chosen with bench/sgemm_tune.cu on the H100 and the H200 (docs/kernels.md
// says which serves which shape, docs/performance.md the measurements); libcudaload/
// sgemm_plan.c picks one per call (cl_sgemm_plan_make) from internal.h's CL_SGEMM_TILES, which
// names the same kernels. VEC tiles need 16-byte aligned operands with leading dimensions that
// are multiples of 4 where the operand is contiguous along m or n, KV tiles the same where it is
// contiguous along k, and k a multiple of 4.
// 256 x 128 x 8, warps of 64 x 64 (4 x 8 lanes of 16 x 8), 256 threads, one block per SM, VEC:
// large aligned products with op(A) = A. (With A transposed it is no faster than the 128 x 128
// tile, which is smaller: not built.) NN in 2 stages, NT in 3: queued, against cuBLAS on the
// H200, NN 4096^3 1.045 in 2 against 1.031 in 3, 8192^3 1.060 against 1.042; NT 1.023 against
// 1.043.
CUDALOAD_SGEMM_ENTRY(cudaload_sgemm_256x128_nn, 256, 128, 8, 16, 8, 4, 2, true, false, false, false, false, false, 1)
CUDALOAD_SGEMM_ENTRY(cudaload_sgemm_256x128_nt, 256, 128, 8, 16, 8, 4, 3, true, false, false, true, false, false, 1)
// The same tile, VEC and KV (both operands along k loaded 16 bytes at a time into registers and
// stored transposed), 2 stages, its FFMAs down the columns of a thread's results (COL): TN,
// aligned, k a multiple of 4, products that fill the GPU. Queued, against cuBLAS on the H200,
// 4096^3: 1.013, against 0.966 with its FFMAs along the rows and 0.995-1.006 on 128 x 128 (which
// reads 0.915 with COL: the order that ptxas schedules best differs from kernel to kernel).
CUDALOAD_SGEMM_ENTRY(cudaload_sgemm_256x128k_tn, 256, 128, 8, 16, 8, 4, 2, true, true, true, false, false, true, 1)
// 128 x 128 x 8, warps of 64 x 64 (4 x 8 lanes of 16 x 8), 128 threads, 3 stages, two blocks
// per SM, VEC and KV (operands along k loaded 16 bytes at a time into registers and stored
// transposed): TN, aligned, k a multiple of 4, products the 256 x 128 tile fills less well
// (cuBLAS's own shape for TN).
CUDALOAD_SGEMM_ENTRY(cudaload_sgemm_128x128k_tn, 128, 128, 8, 16, 8, 4, 3, true, true, true, false, false, false, 2)
// The same with slices of 16 k in 2 stages: TT, aligned, k a multiple of 4. Queued, against
// cuBLAS on the H200, 4096^3: 1.040-1.050; slices of 8 k in 3 stages 1.011-1.028, the
// any-alignment 128 x 128 tile 0.996-1.013. (TN on it: 0.92-0.98.)
CUDALOAD_SGEMM_ENTRY(cudaload_sgemm_128x128k16_tt, 128, 128, 16, 16, 8, 4, 2, true, true, true, true, false, false, 2)
// 128 x 128 x 8, warps of 32 x 64 (8 x 4 lanes of 8 x 8), 256 threads, 3 stages, two blocks
// per SM, any alignment: large products with unaligned operands (or k not a multiple of 4 with
// A transposed).
CUDALOAD_SGEMM_ENTRY(cudaload_sgemm_128x128_nn, 128, 128, 8, 8, 8, 8, 3, false, false, false, false, false, false, 2)
CUDALOAD_SGEMM_ENTRY(cudaload_sgemm_128x128_nt, 128, 128, 8, 8, 8, 8, 3, false, false, false, true, false, false, 2)
CUDALOAD_SGEMM_ENTRY(cudaload_sgemm_128x128_tn, 128, 128, 8, 8, 8, 8, 3, false, false, true, false, false, false, 2)
CUDALOAD_SGEMM_ENTRY(cudaload_sgemm_128x128_tt, 128, 128, 8, 8, 8, 8, 3, false, false, true, true, false, false, 2)
// 256 x 128 x 8 as the first tile, any alignment, SC (C stored through shared memory), NN: unaligned products of one wave, which cl_sgemm_plan_make moves here from the
// 128 x 128 tile when each SM does the same work (2048^3, ld + 13: 0.98 -> 1.03x cuBLAS;
// 3001^3's several waves are better served by the 128 x 128 tile: 0.97 against 0.82).
CUDALOAD_SGEMM_ENTRY(cudaload_sgemm_256x128a_nn, 256, 128, 8, 16, 8, 4, 3, false, false, false, false, true, false, 1)
// 128 x 64 x 16, warps of 64 x 32 (8 x 4 lanes of 8 x 8), 128 threads, 3 stages, two blocks
// per SM, VEC: aligned products too small to fill the GPU with the large tiles, op(A) = A
// (transposed, the 64 x 64 tile serves them).
CUDALOAD_SGEMM_ENTRY(cudaload_sgemm_128x64_nn, 128, 64, 16, 8, 8, 8, 3, true, false, false, false, false, false, 2)
CUDALOAD_SGEMM_ENTRY(cudaload_sgemm_128x64_nt, 128, 64, 16, 8, 8, 8, 3, true, false, false, true, false, false, 2)
// 128 x 128 x 8, warps of 64 x 64 (4 x 8 lanes of 16 x 8), 128 threads, 3 stages, two blocks
// per SM, VEC, NN: the split products the 128 x 64 tile would take when the blocks of this one,
// split the same way, fill a wave (short-wide 128 x 8192 x 8192 in 4 slices: cuBLAS's own
// tile and split there); the same work per SM, op(A) read half as often.
CUDALOAD_SGEMM_ENTRY(cudaload_sgemm_128x128v_nn, 128, 128, 8, 16, 8, 4, 3, true, false, false, false, false, false, 2)
// 64 x 64 x 8, warps of 32 x 32 (4 x 8 lanes of 8 x 4), 128 threads, 3 stages, four blocks
// per SM, any alignment, COL: small products. (Queued, against cuBLAS on the H200, 512^3 in 4
// slices: NN 1.040, TN 1.025, TT 1.032, NT 1.038; in 4 stages along the rows 0.989, 0.967,
// 1.007, 1.031.)
CUDALOAD_SGEMM_ENTRY(cudaload_sgemm_64x64_nn, 64, 64, 8, 8, 4, 4, 3, false, false, false, false, false, true, 4)
CUDALOAD_SGEMM_ENTRY(cudaload_sgemm_64x64_nt, 64, 64, 8, 8, 4, 4, 3, false, false, false, true, false, true, 4)
CUDALOAD_SGEMM_ENTRY(cudaload_sgemm_64x64_tn, 64, 64, 8, 8, 4, 4, 3, false, false, true, false, false, true, 4)
CUDALOAD_SGEMM_ENTRY(cudaload_sgemm_64x64_tt, 64, 64, 8, 8, 4, 4, 3, false, false, true, true, false, true, 4)
#endif
