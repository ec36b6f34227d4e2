/* SPDX-License-Identifier: Apache-2.0 */
// Prints what each library answered, as key=value lines; exits 0 when the GPU ran everything
// right, 2 when there is no driver (the libraries loaded, the runtime said so), 1 otherwise.
#include <cstdio>
#include <cublas_v2.h>
#include <cufft.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <cusparse.h>
#include <nvJitLink.h>

int scale_on_gpu(float *host, int n);

int main() {
    int rt = 0;
    printf("runtime_version_status=%d\n", (int)cudaRuntimeGetVersion(&rt));
    printf("runtime_version=%d\n", rt);
    int ver = 0;
    printf("cusolver_version_status=%d\n", (int)cusolverGetVersion(&ver));
    printf("cusolver_version=%d\n", ver);
    unsigned jl_major = 0, jl_minor = 0;
    printf("nvjitlink_version_status=%d\n", (int)nvJitLinkVersion(&jl_major, &jl_minor));
    printf("nvjitlink_version=%u.%u\n", jl_major, jl_minor);
    cusolverDnHandle_t dn = nullptr;
    cublasHandle_t blas = nullptr;
    cusparseHandle_t sp = nullptr;
    cufftHandle plan = 0;
    int s_dn = (int)cusolverDnCreate(&dn), s_blas = (int)cublasCreate(&blas), s_sp = (int)cusparseCreate(&sp);
    int s_fft = (int)cufftPlan1d(&plan, 64, CUFFT_C2C, 1);
    printf("cusolverDnCreate=%d\ncublasCreate=%d\ncusparseCreate=%d\ncufftPlan1d=%d\n", s_dn, s_blas, s_sp, s_fft);
    float y[256];
    for (int i = 0; i < 256; i++) y[i] = (float)i;
    int s_k = scale_on_gpu(y, 256);
    printf("kernel=%d\n", s_k);
    if (s_k == (int)cudaErrorInsufficientDriver || s_k == (int)cudaErrorNoDevice) return 2;
    int ok = s_k == 0 && s_dn == 0 && s_blas == 0 && s_sp == 0 && s_fft == 0;
    for (int i = 0; i < 256; i++) ok = ok && y[i] == 2.0f * (float)i;
    if (dn) cusolverDnDestroy(dn);
    if (blas) cublasDestroy(blas);
    if (sp) cusparseDestroy(sp);
    if (plan) cufftDestroy(plan);
    printf("result=%s\n", ok ? "ok" : "wrong");
    return ok ? 0 : 1;
}
