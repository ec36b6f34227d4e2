/* SPDX-License-Identifier: Apache-2.0 */
/* stub_wheels.c -- a program written against the libraries that ship as wheels of their own
 * (cuDNN, NCCL, NVML, CUPTI, cuSPARSELt, cuTENSOR, cuDSS, cuFile, nvSHMEM), linked with their stubs, not
 * with them: one call into each. Prints key=value lines (test_stubs.c reads them): each call's
 * status as the library's own code, and what the loaded copies report. Needs no GPU. */
#define _GNU_SOURCE /* cufile.h: loff_t */
#include <stdio.h>
#include <time.h>

#include <cudnn.h>
#include <cudss.h>
#include <cufile.h>
#include <cupti.h>
#include <cusparseLt.h>
#include <cutensor.h>
#include <nccl.h>
#include <nvml.h>

#include "cudaload_cudnn.h"
/* nvSHMEM's headers are C++: its table header brings what C needs first, then nvshmem_host.h */
#include "cudaload_nvshmemhost.h"

int main(void) {
    /* cuDNN: a version call, a handle (no GPU here: cuDNN's own answer when it loaded), and a
     * function newer than a cuDNN 9 older than the headers (9.28) */
    printf("cudnn_version=%zu\n", cudnnGetVersion());
    cudnnHandle_t dnn = NULL;
    printf("cudnn_create=%d\n", (int)cudnnCreate(&dnn));
    size_t ws = 0;
    printf("cudnn_plan_ws=%d\n", (int)cudnnGetExecutionPlanWorkspaceSize(NULL, NULL, NULL, &ws));
    const cudaload_cudnn_table *t = cudaload_cudnn();
    printf("cudnn_table=%d\n", t != NULL);
    printf("cudnn_has_plan_ws=%d\n", t ? (int)t->has.cudnnGetExecutionPlanWorkspaceSize : -1);

    int nccl_v = 0;
    printf("nccl_get_version=%d\n", (int)ncclGetVersion(&nccl_v));
    printf("nccl_version=%d\n", nccl_v);

    printf("nvml_init=%d\n", (int)nvmlInit());
    unsigned int n_dev = 0;
    printf("nvml_count=%d\n", (int)nvmlDeviceGetCount(&n_dev));
    printf("nvml_errstr=%s\n", nvmlErrorString(NVML_ERROR_LIBRARY_NOT_FOUND));

    uint32_t cupti_v = 0;
    printf("cupti_get_version=%d\n", (int)cuptiGetVersion(&cupti_v));
    printf("cupti_version=%u\n", cupti_v);

    cusparseLtHandle_t lt;
    printf("cusparselt_init=%d\n", (int)cusparseLtInit(&lt));

    cutensorHandle_t ten = NULL;
    printf("cutensor_create=%d\n", (int)cutensorCreate(&ten));

    cudssHandle_t dss = NULL;
    printf("cudss_create=%d\n", (int)cudssCreate(&dss));

    CUfileError_t fe = cuFileDriverOpen();
    printf("cufile_open_err=%d\n", (int)fe.err);
    printf("cufile_open_cu_err=%d\n", (int)fe.cu_err);
    printf("cufile_read=%lld\n", (long long)cuFileRead(NULL, NULL, 0, 0, 0));

    /* nvSHMEM: queries that need no GPU and no init, a status, a PE, an allocation */
    int nv_major = -2, nv_minor = -2, nv_patch = -2, spec_major = -2, spec_minor = -2;
    nvshmemx_vendor_get_version_info(&nv_major, &nv_minor, &nv_patch);
    printf("nvshmem_vendor_version=%d\n", nv_major * 10000 + nv_minor * 100 + nv_patch);
    nvshmem_info_get_version(&spec_major, &spec_minor);
    printf("nvshmem_spec_version=%d\n", spec_major * 100 + spec_minor);
    printf("nvshmem_init_status=%d\n", nvshmemx_init_status());
    const cudaload_nvshmemhost_table *nv = cudaload_nvshmemhost();
    printf("nvshmem_table=%d\n", nv != NULL);
    /* the entries the loaded copy has, of the pinned release's */
    int nv_has = 0;
    for (size_t i = 0; nv && i < sizeof nv->has; i++) nv_has += ((const unsigned char *)&nv->has)[i];
    printf("nvshmem_has=%d\nnvshmem_entries=%d\n", nv_has, CUDALOAD_NVSHMEMHOST_API_COUNT);
    if (!nv) { /* the real library wants nvshmem_init before these (it exits without it) */
        nvshmemx_uniqueid_t uid = NVSHMEMX_UNIQUEID_INITIALIZER;
        printf("nvshmem_get_uniqueid=%d\n", nvshmemx_get_uniqueid(&uid));
        printf("nvshmem_my_pe=%d\n", nvshmem_my_pe());
        printf("nvshmem_n_pes=%d\n", nvshmem_n_pes());
        printf("nvshmem_malloc_null=%d\n", nvshmem_malloc(64) == NULL);
        int sum = 0;
        printf("nvshmem_int_g=%d\n", nvshmem_int_g(&sum, 0));
        nvshmem_team_t team = 5;
        printf("nvshmem_team_split=%d\n", nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, 0, 1, 1, NULL, 0, &team));
        printf("nvshmem_team_split_team=%d\n", (int)team);
        nvshmem_barrier_all(); /* void: returns */
    }
    return 0;
}
