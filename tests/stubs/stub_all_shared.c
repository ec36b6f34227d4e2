/* SPDX-License-Identifier: Apache-2.0 */
/* stub_all_shared.c -- a program linked with every shared stub (build/stubs/libcudaload-<lib>.so.0)
 * and libcudaload.so.0 together (test_stubs.c: test_all_shared_stubs_together). The libraries
 * come from the environment's search (CUDALOAD_SOURCES=cuda_home, the toolkit).
 * Each call below loads a library that calls into another through its own imports: cuBLAS ->
 * cuBLASLt (the load's version call, cublasCreate), cuSOLVER -> cuBLAS, cuBLASLt, cuSPARSE,
 * cuSPARSE -> nvJitLink. Those imports must bind to NVIDIA's libraries, never to the stubs
 * (the test reads LD_DEBUG=bindings). Prints key=value: each call's status; exits 0 once all
 * have returned. */
#include <stdio.h>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cufft.h>
#include <curand.h>
#include <cusolverDn.h>
#include <cusparse.h>
#include <nvJitLink.h>
#include <nvrtc.h>

int main(void) {
    int v = 0, st;
    st = (int)cublasGetProperty(MAJOR_VERSION, &v);
    printf("blas_property=%d\nblas_major=%d\n", st, v);
    cublasHandle_t blas = NULL;
    printf("blas_create=%d\n", (int)cublasCreate(&blas));
    printf("blaslt_version=%zu\n", cublasLtGetVersion());
    v = 0;
    st = (int)cusolverGetProperty(MAJOR_VERSION, &v);
    printf("solver_property=%d\nsolver_major=%d\n", st, v);
    cusolverDnHandle_t dn = NULL;
    printf("solver_dn_create=%d\n", (int)cusolverDnCreate(&dn));
    v = 0;
    st = (int)cusparseGetProperty(MAJOR_VERSION, &v);
    printf("sparse_property=%d\nsparse_major=%d\n", st, v);
    cusparseHandle_t sp = NULL;
    printf("sparse_create=%d\n", (int)cusparseCreate(&sp));
    unsigned major = 0, minor = 0;
    st = (int)nvJitLinkVersion(&major, &minor);
    printf("jitlink_version=%d\njitlink_major=%u\n", st, major);
    v = 0;
    st = (int)cufftGetVersion(&v);
    printf("fft_version=%d\nfft=%d\n", st, v);
    v = 0;
    st = (int)curandGetVersion(&v);
    printf("rand_version=%d\nrand=%d\n", st, v);
    int rmaj = 0, rmin = 0;
    st = (int)nvrtcVersion(&rmaj, &rmin);
    printf("nvrtc_version=%d\nnvrtc_major=%d\n", st, rmaj);
    v = 0;
    st = (int)cudaRuntimeGetVersion(&v);
    printf("runtime_err=%d\nruntime_version=%d\n", st, v);
    printf("done=1\n");
    return 0;
}
