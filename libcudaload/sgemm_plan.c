/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sgemm_plan.c -- how cudaload_sgemm runs a product on the bundled kernels: the tile, split k,
 * the launches. A pure function of the shape, the operands' alignment and the device's SM count
 * (no CUDA call), tested on the CPU (tests/test_kernels.c); its cost model is docs/kernels.md's.
 */
#include "internal.h"

#include <string.h>

/* The tiles, one row of CL_SGEMM_TILES (internal.h) each, in its order. */
#define CL_K_TILE_ROW_(name, bm, bn, bk, threads, per_sm, vec, kv, weighed, wide, one_wave, nn, nt, tn, tt)            \
    {bm, bn, threads, per_sm, vec, kv, weighed, CL_SGEMM_TILE_##wide, CL_SGEMM_TILE_##one_wave, {nn, nt, tn, tt}},
const cl_sgemm_tile cl_sgemm_tiles[CL_SGEMM_TILE_COUNT] = {CL_SGEMM_TILES(CL_K_TILE_ROW_)};

/* Below this many multiply-adds (256^3) a second launch costs more than it saves: no split.
 * (GPU time, queued: 256^3 on 64 x 64 tiles is 15.9 us whole and 11.7 us in 4 slices,
 * bench/sgemm_split_tune.cu.) */
#define CL_SCRATCH_MIN_FMA 16777216.0
/* A split k slice covers at least this many k: shorter ones spend more on the partial
 * products' traffic and the prologue than the extra blocks win; except that up to
 * CL_SPLIT_SHORT slices of at least CL_SPLIT_SHORT_K are taken (a small product's few tiles:
 * 256^3 in 4 slices of 64 is 11.7 us, in 2 of 128 14.0 us). */
#define CL_SPLIT_MIN_K 128
#define CL_SPLIT_SHORT 4
#define CL_SPLIT_SHORT_K 64
/* A tile of one block per SM (256 x 128) whose grid takes more than one wave is weighed only for k
 * at least this. Below it a block's prologue (its first slices' loads) and epilogue (its stores
 * of C) are a large part of its time, and on a tile of two per SM the blocks of later waves start
 * staggered, one's prologue and epilogue under the other's main loop. Queued, against cuBLAS on
 * the H200: 8192 x 8192 x 128 1.095 on 256 x 128 against 1.166 on 128 x 128, 65536 x 128 x 128
 * 1.110 against 1.204; at k = 256 1.165 against 1.166; 256 x 128 ahead from 512 (1.034 against
 * 0.995). (In one wave all blocks start together: nothing to stagger.) */
#define CL_SGEMM_ONE_PER_SM_MIN_K 512
/* Two slices even out a grid of several waves whose last one is mostly empty only when k is at
 * least this: below it the partial products' traffic costs more than the waves save. */
#define CL_SPLIT_WAVES_MIN_K 2048

static size_t cl_round256(size_t b) { return (b + 255) & ~(size_t)255; }

/* The plan of a product on a device of sms SMs (internal.h). Each tile that can take the operands
 * (a VEC tile: those contiguous along m or n 16-byte aligned, with leading dimensions multiples
 * of 4; a KV tile: the same of those contiguous along k, and k a multiple of 4) and is built for
 * the transpose case is costed as waves x (its blocks an SM holds at once x tile area) / its
 * speed in this case, and the cheapest is taken: a wave of
 * small tiles on a GPU they do not fill runs as fast as their area allows, not as the tile's
 * speed at full occupancy. With scratch (a pool, and a product large enough), a product of too
 * few tiles to fill the GPU twice over (small, short-wide) splits k over more blocks, whose
 * partial products a second kernel sums. */
/* Whether tile T can take a call: built for its transpose case op, and the operands aligned as
 * it needs (vec, kvec: cl_sgemm_plan_weigh). */
static int cl_sgemm_tile_takes(const cl_sgemm_tile *T, int vec, int kvec, int op) {
    return (!T->vec || vec) && (!T->kv || kvec) && T->speed[op] > 0;
}

static void cl_sgemm_plan_tiles(cl_sgemm_plan *p, int scratch, long long sms, int ta, int tb, long long m, long long n, int k,
                                const float *A, long long lda, const float *B, long long ldb) {
    memset(p, 0, sizeof *p);
    /* 16-byte copies: of the operands contiguous along m or n (A unless transposed, B when
     * transposed), and of those contiguous along k (the others) */
    int a_ok = !cl_misaligned(A, 16) && lda % 4 == 0, b_ok = !cl_misaligned(B, 16) && ldb % 4 == 0;
    int vec = (ta || a_ok) && (!tb || b_ok), kvec = k % 4 == 0 && (!ta || a_ok) && (tb || b_ok);
    int op = 2 * ta + tb;
    double best = -1;
    int best_area = 0;
    /* unrolled over the constant table, the tile sizes' divisions become shifts: the plan is on
     * the path of every small call (bench/bench_hotpath.c) */
#pragma GCC unroll 8
    for (int t = 0; t < CL_SGEMM_TILE_COUNT; t++) {
        const cl_sgemm_tile *T = &cl_sgemm_tiles[t];
        if (!T->weighed || !cl_sgemm_tile_takes(T, vec, kvec, op)) continue;
        long long tm = (m + T->bm - 1) / T->bm, tn = (n + T->bn - 1) / T->bn, nt = tm * tn, slots = sms * T->per_sm;
        if (T->per_sm == 1 && nt > sms && k < CL_SGEMM_ONE_PER_SM_MIN_K) continue;
        long long waves = 1, held = 1; /* a grid of at most one block per SM: no division */
        if (nt > sms) {
            held = nt > slots ? T->per_sm : (nt + sms - 1) / sms;
            waves = (nt + slots - 1) / slots;
        }
        double cost = (double)waves * (double)held * T->bm * T->bn / T->speed[op];
        /* within 2% of the best, the larger tile: its blocks read the operands fewer times
         * (65536 x 128 x 128: 1024 tiles of 128 x 64 read A twice, 512 of 128 x 128 once; queued,
         * against cuBLAS on the H200, 1.136 against 1.204, costed 655 against 662) */
        int area = T->bm * T->bn;
        if (best < 0 || cost < 0.98 * best || (cost <= 1.02 * best && area > best_area))
            best = cost, best_area = area, p->tile = t, p->tiles_m = tm, p->tiles_n = tn;
    }
    const cl_sgemm_tile *T = &cl_sgemm_tiles[p->tile];
    long long tiles = p->tiles_m * p->tiles_n;
    p->splits = 1, p->kc = k;
    /* one wave of blocks: they all end at once, and their stores of C are the product's last
     * work, unhidden. The 128 x 128 tile stores an unaligned C one float at a time, each sector
     * written 4 times; the any-alignment 256 x 128 tile passes it through shared memory (kernels/
     * sgemm.cu: sgemm_store_staged). Taken when its blocks fit one wave and put no more work on
     * an SM than the choice's (2048^3, ld + 13, on the H100: 256 tiles of 128 x 128, two per SM,
     * or 128 of 256 x 128; 0.98 -> 1.03x cuBLAS). Several waves hide the stores behind other
     * blocks' work, and there the 128 x 128 tile is better (3001^3: 0.97 against 0.82). Decided
     * before the split below, which is for grids that leave SMs idle or a last wave mostly
     * empty: a move needs more blocks than SMs in one wave, neither of those. */
    const cl_sgemm_tile *O = &cl_sgemm_tiles[T->one_wave];
    if (O != T && cl_sgemm_tile_takes(O, vec, kvec, op) && tiles <= sms * T->per_sm) {
        long long om = (m + O->bm - 1) / O->bm, on = (n + O->bn - 1) / O->bn, o_tiles = om * on;
        /* in one wave, the busiest SM's work: the blocks it holds times a block's area */
        long long work = (long long)T->bm * T->bn * ((tiles + sms - 1) / sms);
        long long o_work = (long long)O->bm * O->bn * ((o_tiles + sms - 1) / sms);
        if (o_tiles <= sms * O->per_sm && o_work <= work) {
            p->tile = T->one_wave, p->tiles_m = om, p->tiles_n = on;
            return;
        }
    }
    scratch = scratch && k > 0 && (double)m * (double)n * (double)k >= CL_SCRATCH_MIN_FMA;
    /* split when the tiles fill at most half the slots, then into enough slices for two waves of
     * blocks: one wave leaves the SMs idle behind its last blocks (128 x 8192 x 8192 on 128 x 64
     * tiles: 1.03x cuBLAS in 4 slices, 0.97x in 2) */
    long long slots = sms * T->per_sm, want = tiles > 0 && 2 * tiles <= slots ? 2 * slots / tiles : 0;
    /* several waves whose last one is mostly empty: two slices fill the waves better (3001^3 on
     * 128 x 128 tiles: 576 blocks fill 73% of 3 waves of 264 slots, 1152 fill 87% of 5; 1.010x
     * cuBLAS against 0.966, bench/sgemm_split_tune.cu) */
    if (tiles > slots && k >= CL_SPLIT_WAVES_MIN_K) {
        double fill1 = (double)tiles / (double)(((tiles + slots - 1) / slots) * slots);
        double fill2 = (double)(2 * tiles) / (double)(((2 * tiles + slots - 1) / slots) * slots);
        if (fill2 >= 1.1 * fill1) want = 2;
    }
    long long most = k / CL_SPLIT_MIN_K, short_most = k / CL_SPLIT_SHORT_K;
    if (most < CL_SPLIT_SHORT) most = short_most < CL_SPLIT_SHORT ? short_most : CL_SPLIT_SHORT;
    if (want > most) want = most;
    if (want > 16) want = 16;
    if (scratch && want >= 2 && n <= CL_GRID_Y_MAX) {
        long long kc = ((k + want - 1) / want + 15) & ~15LL;
        int splits = (int)((k + kc - 1) / kc);
        size_t bytes = cl_round256((size_t)splits * (size_t)m * (size_t)n * sizeof(float));
        if (splits >= 2 && bytes <= CL_SCRATCH_MAX) p->splits = splits, p->kc = (int)kc, p->bytes_w = bytes;
    }
    /* split the same way, the tile of twice the columns keeps the same SMs busy with the same
     * work while it reads op(A) half as often: taken when its blocks fill at least 90% of one
     * wave (queued, against cuBLAS, 128 x 64 -> 128 x 128, 4 slices: 128 x 8192 x 8192 0.939 ->
     * 0.972, 1000^3 1.060 -> 1.114, 1024^3 1.086 -> 1.102; at 768^3 its 216 blocks fill 82%:
     * not taken) */
    const cl_sgemm_tile *W = &cl_sgemm_tiles[T->wide];
    if (p->splits > 1 && W != T && cl_sgemm_tile_takes(W, vec, kvec, op)) {
        long long wm = (m + W->bm - 1) / W->bm, wn = (n + W->bn - 1) / W->bn, blocks = wm * wn * p->splits,
                  wslots = sms * W->per_sm;
        if (blocks <= wslots && 10 * blocks >= 9 * wslots) p->tile = T->wide, p->tiles_m = wm, p->tiles_n = wn;
    }
}

/* The tile and the split (cl_sgemm_plan_tiles), then the launches: one, unless its grid would
 * exceed 65535 tiles of columns, or number its blocks past 32 bits (the tiles that take theirs
 * in groups: kernels/sgemm.cu); then column chunks of at most that many tiles each. A split
 * product has at most 65535 columns and 2^27 elements (two slices fill 1 GiB of scratch): always
 * one launch. */
void cl_sgemm_plan_weigh(cl_sgemm_plan *p, int scratch, long long sms, int ta, int tb, long long m, long long n, int k,
                         const float *A, long long lda, const float *B, long long ldb) {
    cl_sgemm_plan_tiles(p, scratch, sms, ta, tb, m, n, k, A, lda, B, ldb);
    p->launch_n = p->tiles_n;
    if (p->launch_n > CL_GRID_Y_MAX) p->launch_n = CL_GRID_Y_MAX;
    if (p->tiles_m * p->launch_n > CL_SGEMM_LAUNCH_BLOCKS_MAX) p->launch_n = CL_SGEMM_LAUNCH_BLOCKS_MAX / p->tiles_m;
}

/* The plan of every call. A product inside one block of the smallest tile and too small to
 * split (every small call: 16^3 is bench_launch's) runs on that tile: the answer the weighing
 * gives it on any GPU (test_kernels: test_sgemm_plan_small checks the two agree), taken without
 * weighing every tile, whose cost a small call's host path would carry. */
void cl_sgemm_plan_make(cl_sgemm_plan *p, int scratch, long long sms, int ta, int tb, long long m, long long n, int k,
                        const float *A, long long lda, const float *B, long long ldb) {
    const cl_sgemm_tile *S = &cl_sgemm_tiles[CL_SGEMM_TILE_64x64];
    if (m <= S->bm && n <= S->bn && (double)m * (double)n * (double)k < CL_SCRATCH_MIN_FMA) {
        memset(p, 0, sizeof *p);
        p->tile = CL_SGEMM_TILE_64x64, p->tiles_m = p->tiles_n = p->launch_n = 1, p->splits = 1, p->kc = k;
        return;
    }
    cl_sgemm_plan_weigh(p, scratch, sms, ta, tb, m, n, k, A, lda, B, ldb);
}
