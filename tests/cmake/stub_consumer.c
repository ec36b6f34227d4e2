/* SPDX-License-Identifier: Apache-2.0 */
/* stub_consumer.c -- code written for -lcudart, linked to cudaload::stub_cudart instead
 * (tests/cmake/CMakeLists.txt). Prints key=value. */
#include <stdio.h>

#include <cuda_runtime_api.h>

int main(void) {
    int v = 0;
    cudaError_t e = cudaRuntimeGetVersion(&v);
    printf("runtime_err=%d\nruntime_version=%d\n", (int)e, v);
    return 0;
}
