/* SPDX-License-Identifier: Apache-2.0 */
// sgemm_bench.cuh -- what the SGEMM tuning tools share (bench/sgemm_split_tune.cu,
// bench/sgemm_streamk_tune.cu; developer tools, not part of the library): the split-k sum launched
// as libcudaload launches cudaload_sgemm_splitk_reduce, its grid, the median of a run's timings,
// and the operands' fill.
#pragma once
#include <algorithm>
#include <vector>
#include <cuda_runtime.h>

// A sum kernel as libcudaload launches cudaload_sgemm_splitk_reduce: a programmatic dependent of
// the partial products' kernel on sm_90 and up (libcudaload/kernels_launch.c: cl_launch_dependent,
// set dependent_launch from the device), else an ordinary launch; 256 threads a block.
static bool dependent_launch;
template <typename... P, typename... Q>
static void launch_sum(void (*fn)(P...), unsigned blocks, Q... args) {
    if (!dependent_launch) {
        fn<<<blocks, 256>>>(args...);
        return;
    }
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(blocks), cfg.blockDim = dim3(256);
    cudaLaunchAttribute at = {};
    at.id = cudaLaunchAttributeProgrammaticStreamSerialization, at.val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = &at, cfg.numAttrs = 1;
    cudaLaunchKernelEx(&cfg, fn, ((P)args)...);
}
// the sum's blocks for an m x n product: a thread per 4 rows of a column, 256 threads a block
static unsigned sum_blocks(int m, int n) { return (unsigned)(((m + 3) / 4 * (long long)n + 255) / 256); }

static float med(std::vector<float> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }
// operands: uniform in [-0.5, 0.5) (random data draws the power a real product does; zeros less)
__global__ void fill(float *p, size_t n, unsigned seed) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        unsigned x = (unsigned)i * 2654435761u ^ seed;
        x ^= x >> 13, x *= 0x5bd1e995u, x ^= x >> 15;
        p[i] = (x & 0xffffff) / 16777216.0f - 0.5f;
    }
}
