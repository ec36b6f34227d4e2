/* stub_wheels.c -- a program written against the libraries that ship as wheels of their own
 * (cuDNN, NCCL, NVML, CUPTI, cuSPARSELt, cuTENSOR, cuDSS, cuFile), linked with their stubs, not
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
    return 0;
}
