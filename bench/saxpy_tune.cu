/* SPDX-License-Identifier: Apache-2.0 */
// saxpy_tune.cu -- a developer tool, not part of the library: times SAXPY variants (float4s
// per thread, threads per block, cache hints, grid-stride) and the D2D copy at n = 2^28 on
// the GPU at hand, on random data, the whole sweep twice (the spread is the noise): first
// each variant back to back, then alternating with a torch-like kernel and the copy (as the
// benchmarks and real programs run it), idle and queued behind a memset.
//   nvcc -O3 -arch=sm_90 -o build/saxpy_tune bench/saxpy_tune.cu && build/saxpy_tune
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>

// Load/store hints: PLAIN (x through the read-only path, plain y load and store: shipped),
// CS (evict-first __ldcs/__stcs), L2P (sm_80+ L1::no_allocate.L2::256B prefetching loads,
// streaming stores).
enum { PLAIN = 0, CS = 1, L2P = 2 };
__device__ __forceinline__ float4 ld_x256(const float4 *p) {
    float4 v;
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.f32 {%0,%1,%2,%3}, [%4];"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
    return v;
}
__device__ __forceinline__ float4 ld_y256(const float4 *p) {
    float4 v;
    asm volatile("ld.global.L1::no_allocate.L2::256B.v4.f32 {%0,%1,%2,%3}, [%4];"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
    return v;
}

template <int V, int H, int T>
__global__ void __launch_bounds__(T) sx(long long n4, float a, const float4 *__restrict__ x, float4 *__restrict__ y) {
    long long base = (long long)blockIdx.x * blockDim.x * V + threadIdx.x;
    float4 xv[V], yv[V];
#pragma unroll
    for (int u = 0; u < V; u++) {
        long long i = base + (long long)u * blockDim.x;
        if (i < n4) {
            xv[u] = H == CS ? __ldcs(x + i) : H == L2P ? ld_x256(x + i) : __ldg(x + i);
            yv[u] = H == CS ? __ldcs(y + i) : H == L2P ? ld_y256(y + i) : y[i];
        }
    }
#pragma unroll
    for (int u = 0; u < V; u++) {
        long long i = base + (long long)u * blockDim.x;
        if (i < n4) {
            float4 r = make_float4(fmaf(a, xv[u].x, yv[u].x), fmaf(a, xv[u].y, yv[u].y), fmaf(a, xv[u].z, yv[u].z), fmaf(a, xv[u].w, yv[u].w));
            if (H == PLAIN) y[i] = r; else __stcs(y + i, r);
        }
    }
}

__global__ void __launch_bounds__(256) sx_gs(long long n4, float a, const float4 *__restrict__ x, float4 *__restrict__ y) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) {
        float4 xv = __ldcs(x + i), yv = __ldcs(y + i);
        __stcs(y + i, make_float4(fmaf(a, xv.x, yv.x), fmaf(a, xv.y, yv.y), fmaf(a, xv.z, yv.z), fmaf(a, xv.w, yv.w)));
    }
}

__global__ void fill(float *p, long long n, unsigned seed) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        unsigned h = (unsigned)i * 2654435761u ^ seed;
        h ^= h >> 13, h *= 0x5bd1e995u, h ^= h >> 15;
        p[i] = (float)(h & 0xffff) / 65536.0f - 0.5f;
    }
}

int main() {
    long long n = 1LL << 28, n4 = n / 4;
    float *x, *y;
    cudaMalloc(&x, n * 4);
    cudaMalloc(&y, n * 4);
    fill<<<1024, 256>>>(x, n, 1u);
    fill<<<1024, 256>>>(y, n, 2u);
    cudaEvent_t a, b;
    cudaEventCreate(&a), cudaEventCreate(&b);
    int sms;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    auto bench = [&](const char *name, auto launch, double bytes) {
        std::vector<float> t;
        for (int w = 0; w < 3; w++) launch();
        cudaDeviceSynchronize();
        for (int w = 0; w < 10; w++) launch();  // clocks up before the first timed run
        for (int r = 0; r < 25; r++) {
            cudaEventRecord(a);
            launch();
            cudaEventRecord(b);
            cudaEventSynchronize(b);
            float ms;
            cudaEventElapsedTime(&ms, a, b);
            t.push_back(ms);
        }
        std::sort(t.begin(), t.end());
        printf("%-32s %7.0f GB/s\n", name, bytes / (t[12] / 1e3) / 1e9);
    };
    double bytes = 12.0 * n;
#define RUN(V, H, T)                                                                                           \
    bench(#V " float4 x " #T " threads, " #H, [&] {                                                                 \
        sx<V, H, T><<<(unsigned)((n4 + T * V - 1) / (T * V)), T>>>(n4, 1.0001f, (const float4 *)x, (float4 *)y); \
    }, bytes)
    for (int pass = 0; pass < 2; pass++) {
        printf("pass %d\n", pass + 1);
        RUN(1, CS, 256); RUN(2, CS, 256); RUN(4, CS, 256); RUN(8, CS, 256);
        RUN(1, PLAIN, 256); RUN(2, PLAIN, 256); RUN(4, PLAIN, 256);
        RUN(1, CS, 128); RUN(2, CS, 128); RUN(4, CS, 128); RUN(1, PLAIN, 128); RUN(2, PLAIN, 128); RUN(4, PLAIN, 128);
        RUN(1, CS, 512); RUN(2, CS, 512); RUN(1, PLAIN, 512); RUN(2, PLAIN, 512); RUN(1, CS, 1024);
        RUN(1, PLAIN, 1024); RUN(2, CS, 1024);
        RUN(1, L2P, 256); RUN(1, L2P, 512); RUN(1, L2P, 1024); RUN(2, L2P, 256); RUN(2, L2P, 512); RUN(4, L2P, 256);
        for (int k : {4, 8, 16, 32})
            bench(k == 4 ? "grid-stride 4 blocks/SM" : k == 8 ? "grid-stride 8 blocks/SM" : k == 16 ? "grid-stride 16 blocks/SM" : "grid-stride 32 blocks/SM",
                  [&] { sx_gs<<<sms * k, 256>>>(n4, 1.0001f, (const float4 *)x, (float4 *)y); }, bytes);
        bench("D2D copy (2 x bytes)", [&] { cudaMemcpyAsync(y, x, n * 4, cudaMemcpyDeviceToDevice); }, 8.0 * n);
    }
    // Alternating, as bench_kernels.c and torch_kernels.py measure: each variant against a
    // torch-like reference (2 float4s per thread, 128 threads, plain loads) and the D2D copy,
    // the first contender rotating each round; idle and queued (a 256 MiB memset first).
    char *scratch;
    cudaMalloc(&scratch, (size_t)256 << 20);
    auto ref = [&] { sx<2, PLAIN, 128><<<(unsigned)((n4 + 255) / 256), 128>>>(n4, 1.0001f, (const float4 *)x, (float4 *)y); };
    auto copy = [&] { cudaMemcpyAsync(y, x, n * 4, cudaMemcpyDeviceToDevice); };
    auto duel = [&](const char *name, auto launch, bool queued) {
        std::vector<float> t[3];
        auto run = [&](int c) { if (c == 0) launch(); else if (c == 1) ref(); else copy(); };
        for (int w = 0; w < 10; w++) for (int c = 0; c < 3; c++) run(c);
        cudaDeviceSynchronize();
        for (int r = 0; r < 25; r++)
            for (int c0 = 0; c0 < 3; c0++) {
                int c = (c0 + r) % 3;
                if (queued) cudaMemsetAsync(scratch, r, (size_t)256 << 20);
                cudaEventRecord(a);
                run(c);
                cudaEventRecord(b);
                cudaEventSynchronize(b);
                float ms;
                cudaEventElapsedTime(&ms, a, b);
                t[c].push_back(ms);
            }
        for (auto &v : t) std::sort(v.begin(), v.end());
        printf("alt %-6s %-32s %7.0f GB/s   ref 2x128 plain %7.0f   copy %7.0f\n", queued ? "queued" : "idle", name,
               bytes / (t[0][12] / 1e3) / 1e9, bytes / (t[1][12] / 1e3) / 1e9, 8.0 * n / (t[2][12] / 1e3) / 1e9);
    };
#define DUEL(V, H, T, Q)                                                                                            \
    duel(#V " float4 x " #T " threads, " #H, [&] {                                                                      \
        sx<V, H, T><<<(unsigned)((n4 + T * V - 1) / (T * V)), T>>>(n4, 1.0001f, (const float4 *)x, (float4 *)y);      \
    }, Q)
    for (int pass = 0; pass < 2; pass++)
        for (bool q : {false, true}) {
            DUEL(1, CS, 1024, q); DUEL(1, PLAIN, 1024, q); DUEL(1, CS, 512, q); DUEL(1, CS, 256, q);
            DUEL(2, CS, 128, q); DUEL(2, PLAIN, 128, q); DUEL(4, CS, 128, q); DUEL(2, CS, 256, q);
            DUEL(4, CS, 256, q); DUEL(2, CS, 512, q);
            DUEL(1, L2P, 1024, q);
        }
    return 0;
}
