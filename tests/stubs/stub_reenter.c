/* SPDX-License-Identifier: Apache-2.0 */
/* stub_reenter.c -- a stub called back, on the same thread, from foreign code that its own first
 * load runs (test_stubs.c: test_reentered_stub_fails_fast). The cuBLASLt stub's archive runs
 * cl_stub_cublaslt_loaded once the library is loaded, under the stubs' lock, as the cudart stub
 * runs its registration replay (the runtime's code): this program defines that hook, and from
 * it calls the cuBLASLt stub again and the cuRAND stub's first call. Both must return at once
 * with their library's failure code; the outer call then goes through.
 * The libraries come from the environment's search (CUDALOAD_SOURCES=cuda_home). Prints
 * key=value. */
#include <stdio.h>
#include <string.h>

#include "cudaload.h"

#include <cublasLt.h>
#include <curand.h>

static int hook_runs, inner_lt = -1, inner_rand = -1, lt_reported, rand_reported;

/* the refusal's status, as cudaload_last_error() names it */
static int reported_reentrant(void) {
    return strstr(cudaload_last_error(), cudaload_status_name(CUDALOAD_ERROR_REENTRANT)) != NULL;
}

void cl_stub_cublaslt_loaded(const void *table);
void cl_stub_cublaslt_loaded(const void *table) {
    (void)table;
    int v = 0;
    hook_runs++;
    inner_lt = (int)cublasLtGetProperty(MAJOR_VERSION, &v);
    lt_reported = reported_reentrant();
    inner_rand = (int)curandGetVersion(&v);
    rand_reported = reported_reentrant();
}

int main(void) {
    int v = 0;
    int outer = (int)cublasLtGetProperty(MAJOR_VERSION, &v);
    printf("hook_runs=%d\ninner_lt=%d\ninner_rand=%d\nlt_reported=%d\nrand_reported=%d\nouter=%d\nouter_major=%d\n", hook_runs,
           inner_lt, inner_rand, lt_reported, rand_reported, outer, v);
    /* after the load, both calls go through */
    int again = (int)cublasLtGetProperty(MAJOR_VERSION, &v);
    int rand = (int)curandGetVersion(&v);
    printf("again=%d\nrand_after=%d\n", again, rand);
    return 0;
}
