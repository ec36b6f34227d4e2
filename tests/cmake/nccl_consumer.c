/* SPDX-License-Identifier: Apache-2.0 */
/* nccl_consumer.c -- code written for -lnccl, linked to cudaload::stub_nccl_shared instead
 * (tests/cmake/CMakeLists.txt): NCCL's shared stub, whose run-time file hides its exports from
 * all but the programs linked to it (docs/stubs.md). Prints key=value. */
#include <stdio.h>

int ncclGetVersion(int *version); /* nccl.h's (the build needs no NCCL headers) */

int main(void) {
    int v = 0;
    int st = ncclGetVersion(&v);
    printf("nccl_get_version=%d\nnccl_version=%d\n", st, v);
    return 0;
}
