/* stub_blas.c -- a plain C program calling cuBLAS and the runtime with the real headers,
 * linked to libcudaload's stubs instead of -lcublas -lcudart (test_stubs.c). Prints key=value. */
#include <stdio.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

int main(void) {
    int major = -1;
    cublasStatus_t s = cublasGetProperty(MAJOR_VERSION, &major);
    printf("blas_property_status=%d\nblas_major=%d\n", (int)s, major);
    cublasHandle_t h = NULL;
    printf("blas_create_status=%d\n", (int)cublasCreate(&h));
    int v = 0;
    cudaError_t e = cudaRuntimeGetVersion(&v);
    printf("runtime_err=%d\nruntime_version=%d\n", (int)e, v);
    return 0;
}
