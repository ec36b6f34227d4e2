/* SPDX-License-Identifier: Apache-2.0 */
// saxpy.cu -- y = a*x + y in FP32, bundled into libcudaload's fatbin.
//
// A streaming kernel: 12 bytes move per element (read x, read y, write y), so the only
// goal is to keep HBM busy. Each thread handles VEC_PER_THREAD float4s, in blocks of
// SAXPY_THREADS (1 and 1024: measured best on the H100 against 2, 4, 8 float4s, 128 to 512
// threads and grid-stride variants, bench/saxpy_tune.cu, docs/performance.md). Plain cached
// loads (x through the read-only path) and a plain store: evict-first hints (__ldcs/__stcs)
// measured the same when the kernel runs back to back, but 2% slower (3015 against 3075
// GB/s) when it alternates with other kernels, as it does in a real program and in the
// benchmarks. When x or y is not 16-byte aligned the scalar kernel runs instead.
// Launched through the driver API (cuLaunchKernel) by libcudaload/kernels.c; the names
// are extern "C" so the loader finds them by name.

#define VEC_PER_THREAD 1
#define SAXPY_THREADS 1024  // libcudaload/kernels.c launches with this many threads per block

extern "C" __global__ void __launch_bounds__(SAXPY_THREADS) cudaload_saxpy_vec4(long long n4, float a, const float4 *__restrict__ x,
                                                                       float4 *__restrict__ y) {
    long long base = ((long long)blockIdx.x * blockDim.x * VEC_PER_THREAD) + threadIdx.x;
    float4 xv[VEC_PER_THREAD], yv[VEC_PER_THREAD];
#pragma unroll
    for (int u = 0; u < VEC_PER_THREAD; u++) {
        long long i = base + (long long)u * blockDim.x;
        if (i < n4) {
            xv[u] = __ldg(x + i);
            yv[u] = y[i];
        }
    }
#pragma unroll
    for (int u = 0; u < VEC_PER_THREAD; u++) {
        long long i = base + (long long)u * blockDim.x;
        if (i < n4) {
            float4 r;
            r.x = fmaf(a, xv[u].x, yv[u].x);
            r.y = fmaf(a, xv[u].y, yv[u].y);
            r.z = fmaf(a, xv[u].z, yv[u].z);
            r.w = fmaf(a, xv[u].w, yv[u].w);
            y[i] = r;
        }
    }
}

// The remainder after the float4 part, and whole arrays that are not 16-byte aligned.
extern "C" __global__ void __launch_bounds__(256) cudaload_saxpy_scalar(long long n, float a, const float *__restrict__ x,
                                                                         float *__restrict__ y) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = fmaf(a, __ldg(x + i), y[i]);
}
