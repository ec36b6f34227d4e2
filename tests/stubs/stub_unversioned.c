/* SPDX-License-Identifier: Apache-2.0 */
/* stub_unversioned.c -- a program linked with the shared stubs of the libraries that version
 * none of their exports (-lcudaload-nccl -lcudaload-nvml -lcudaload-cusparselt -lcudaload-cufile:
 * their link-time files; at run time the .so.0 files, whose exports are in a hidden version;
 * docs/stubs.md). One call into each (test_stubs.c: test_unversioned_shared_stubs). Prints
 * key=value: each call's status as the library's own code, and NCCL's version. Needs no GPU. */
#define _GNU_SOURCE /* cufile.h: loff_t */
#include <fcntl.h> /* cufile.h: off_t, and loff_t on musl */
#include <stdio.h>

#include <cufile.h>
#include <cusparseLt.h>
#include <nccl.h>
#include <nvml.h>

int main(void) {
    int nccl_v = 0;
    printf("nccl_get_version=%d\n", (int)ncclGetVersion(&nccl_v));
    printf("nccl_version=%d\n", nccl_v);
    printf("nvml_init=%d\n", (int)nvmlInit());
    unsigned int n_dev = 0;
    printf("nvml_count=%d\n", (int)nvmlDeviceGetCount(&n_dev));
    cusparseLtHandle_t lt;
    printf("cusparselt_init=%d\n", (int)cusparseLtInit(&lt));
    CUfileError_t fe = cuFileDriverOpen();
    printf("cufile_open_err=%d\n", (int)fe.err);
    printf("done=1\n");
    return 0;
}
