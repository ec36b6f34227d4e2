/* SPDX-License-Identifier: Apache-2.0 */
/* ways.c -- one NVIDIA library's call, chosen by WAY_<LIB>: the library's own answer, printed
 * as <lib>=<status>/<version> (tests/adopt/ways: one executable for each way of linking it). */
#include <stdio.h>

#if defined(WAY_CUDART)
int cudaRuntimeGetVersion(int *version);
#define LIB "cudart"
static int call(int *v) { return cudaRuntimeGetVersion(v); }
#elif defined(WAY_CUBLAS)
int cublasGetProperty(int type, int *value); /* type 0: MAJOR_VERSION */
#define LIB "cublas"
static int call(int *v) { return cublasGetProperty(0, v); }
#elif defined(WAY_CUFFT)
int cufftGetVersion(int *version);
#define LIB "cufft"
static int call(int *v) { return cufftGetVersion(v); }
#elif defined(WAY_CURAND)
int curandGetVersion(int *version);
#define LIB "curand"
static int call(int *v) { return curandGetVersion(v); }
#elif defined(WAY_NCCL)
int ncclGetVersion(int *version);
#define LIB "nccl"
static int call(int *v) { return ncclGetVersion(v); }
#elif defined(WAY_NVRTC)
int nvrtcVersion(int *major, int *minor);
#define LIB "nvrtc"
static int call(int *v) {
    int minor = 0;
    return nvrtcVersion(v, &minor);
}
#elif defined(WAY_CUFFTW)
void fftwf_cleanup(void);
#define LIB "cufftw"
static int call(int *v) {
    fftwf_cleanup();
    return *v = 0;
}
#else
#error "no WAY_<LIB> defined"
#endif

int main(void) {
    int v = 0;
    int st = call(&v);
    printf("%s=%d/%d\n", LIB, st, v);
    return st != 0;
}
