/* SPDX-License-Identifier: Apache-2.0 */
/* cuSOLVER, cuBLAS and cuSPARSE, each asked its version (no GPU needed): key=value lines. */
#include <stdio.h>
#include <cublas_v2.h>
#include <cusolverDn.h>
#include <cusparse.h>

int main(void) {
    int s = 0, b = 0, p = 0;
    int ss = (int)cusolverGetVersion(&s);
    int bs = (int)cublasGetProperty(MAJOR_VERSION, &b);
    int ps = (int)cusparseGetProperty(MAJOR_VERSION, &p);
    printf("cusolver=%d/%d\ncublas=%d/%d\ncusparse=%d/%d\n", ss, s, bs, b, ps, p);
    return ss || bs || ps;
}
