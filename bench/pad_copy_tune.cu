// pad_copy_tune.cu -- a developer tool, not part of the library: the copy of an unaligned SGEMM
// operand into an aligned scratch (leading dimension rounded up to 4 floats): cudaMemcpy2DAsync,
// device to device, against a kernel of one element per thread and cudaload_sgemm_pad_copy's
// scheme (4 elements read, one float4 written per thread), on the shapes of bench/sgemm_shapes.txt
// that take the copy. Medians of 30, CUDA events; GB/s counts bytes read + written (docs/performance.md).
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -Ikernels -o build/pad_copy_tune bench/pad_copy_tune.cu && build/pad_copy_tune
#include <algorithm>
#include <cstdio>
#include <vector>

#define CUDALOAD_SGEMM_NO_ENTRIES  // the GEMM kernels are not needed here; cudaload_sgemm_pad_copy is
#include "sgemm.cu"

__global__ void copy1(int rows, const float *src, long long lds, float *dst, long long ldd) {
    int i = blockIdx.x * 256 + threadIdx.x, j = blockIdx.y;
    if (i < rows) dst[i + j * ldd] = __ldg(src + i + j * lds);
}

int main() {
    const int shapes[][3] = {{2048, 2048, 2061}, {3001, 3001, 3001}, {4097, 4097, 4097}};  // rows, cols, lds
    for (const auto &s : shapes) {
        int rows = s[0], cols = s[1];
        long long lds = s[2], ldd = (rows + 3) / 4 * 4;
        float *a, *b;
        cudaMalloc(&a, lds * cols * 4);
        cudaMalloc(&b, ldd * cols * 4);
        cudaMemset(a, 0, lds * cols * 4);
        cudaEvent_t e0, e1;
        cudaEventCreate(&e0);
        cudaEventCreate(&e1);
        for (int v = 0; v < 3; v++) {
            std::vector<float> t;
            for (int r = 0; r < 30; r++) {
                cudaEventRecord(e0);
                if (v == 0)
                    cudaMemcpy2DAsync(b, ldd * 4, a, lds * 4, rows * 4, cols, cudaMemcpyDeviceToDevice);
                else if (v == 1)
                    copy1<<<dim3((rows + 255) / 256, cols), 256>>>(rows, a, lds, b, ldd);
                else  // the shipped kernel, one matrix (the second, rows 0, copies nothing)
                    cudaload_sgemm_pad_copy<<<dim3((rows + 1023) / 1024, cols, 1), 256>>>(rows, cols, a, lds, b, ldd, 0, 0,
                                                                                     a, lds, b, ldd);
                cudaEventRecord(e1);
                cudaEventSynchronize(e1);
                float ms;
                cudaEventElapsedTime(&ms, e0, e1);
                t.push_back(ms);
            }
            std::sort(t.begin(), t.end());
            double ms = t[15], gbs = 2.0 * rows * cols * 4 / (ms * 1e-3) / 1e9;
            printf("%dx%d lds %lld -> %lld: %s %.1f us, %.0f GB/s\n", rows, cols, lds, ldd,
                   v == 0 ? "cudaMemcpy2DAsync" : v == 1 ? "kernel 1/thread " : "cudaload_sgemm_pad_copy", ms * 1e3, gbs);
        }
        printf("err %s\n", cudaGetErrorString(cudaGetLastError()));
        cudaFree(a);
        cudaFree(b);
    }
}
