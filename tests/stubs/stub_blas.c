/* SPDX-License-Identifier: Apache-2.0 */
/* stub_blas.c -- a plain C program calling cuBLAS and the runtime with the real headers,
 * linked to libcudaload's stubs instead of -lcublas -lcudart (test_stubs.c). Prints key=value;
 * errstr= and blas_errstr= last, each the text of an error-string call (cudaGetErrorString of
 * count_err's code, cublasGetStatusString of blas_create_status). */
#include <stdio.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

int main(void) {
    int major = -1;
    cublasStatus_t s = cublasGetProperty(MAJOR_VERSION, &major);
    printf("blas_property_status=%d\nblas_major=%d\n", (int)s, major);
    cublasHandle_t h = NULL;
    cublasStatus_t created = cublasCreate(&h);
    printf("blas_create_status=%d\n", (int)created);
    int v = 0;
    cudaError_t e = cudaRuntimeGetVersion(&v);
    printf("runtime_err=%d\nruntime_version=%d\n", (int)e, v);
    int count = 0;
    cudaError_t count_err = cudaGetDeviceCount(&count);
    (void)cudaGetDeviceCount(&count); /* a second failing call: the stub still says it once */
    printf("count_err=%d\n", (int)count_err);
    if (created == CUBLAS_STATUS_SUCCESS) cublasDestroy(h);
    printf("errstr=%s\n", cudaGetErrorString(count_err));
    printf("blas_errstr=%s\n", cublasGetStatusString(created));
    return 0;
}
