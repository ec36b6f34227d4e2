/* SPDX-License-Identifier: Apache-2.0 */
/* stub_outparams_wheels.c -- stub_outparams.c for the libraries that ship as wheels of their own
 * (built with the pinned wheels' headers): every stub function of theirs that hands back a string
 * or a name buffer through an out-parameter, called when its library cannot be had (run with
 * CUDALOAD_SOURCES=override and no override). Prints <name>=<its return code> (cuFile's: the
 * CUfileOpError of its CUfileError_t) and <name>_text=1 when the out-parameter holds a text of
 * libcudaload within the buffer's length. */
#define _GNU_SOURCE /* cufile.h: loff_t */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cudnn.h>
#include <cufile.h>
#include <cupti.h>
#include <nccl.h>
#include <nvml.h>

#include "cudaload_nvshmemhost.h" /* nvSHMEM's headers are C++: this brings what C needs first */
#include "outparams.h"

#define CUFILE_ERR(x) ((int)(x).err)
/* a function returning nothing: 0 as its code */
#define VOID_CALL(call) ((call), 0)

int main(void) {
    int n = 0;
    STR("ncclParamGetParameter", ncclParamGetParameter("NCCL_DEBUG", &s, &n));
    STR("ncclParamGetStr", ncclParamGetStr(NULL, &s));
    STR("pncclParamGetParameter", pncclParamGetParameter("NCCL_DEBUG", &s, &n));
    STR("pncclParamGetStr", pncclParamGetStr(NULL, &s));
    STR("cuptiGetCallbackName", cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, 1, &s));
    STR("cuptiGetErrorMessage", cuptiGetErrorMessage(CUPTI_ERROR_UNKNOWN, &s));
    STR("cuptiGetResultString", cuptiGetResultString(CUPTI_ERROR_UNKNOWN, &s));
    nvmlDevice_t dev = NULL;
    BUF("nvmlDeviceGetBoardPartNumber", 64, nvmlDeviceGetBoardPartNumber(dev, buf, 64));
    BUF("nvmlDeviceGetInforomImageVersion", 64, nvmlDeviceGetInforomImageVersion(dev, buf, 64));
    BUF("nvmlDeviceGetInforomVersion", 64, nvmlDeviceGetInforomVersion(dev, NVML_INFOROM_OEM, buf, 64));
    BUF("nvmlDeviceGetName", 64, nvmlDeviceGetName(dev, buf, 64));
    BUF("nvmlDeviceGetSerial", 64, nvmlDeviceGetSerial(dev, buf, 64));
    BUF("nvmlDeviceGetUUID", 64, nvmlDeviceGetUUID(dev, buf, 64));
    BUF("nvmlDeviceGetVbiosVersion", 64, nvmlDeviceGetVbiosVersion(dev, buf, 64));
    BUF("nvmlSystemGetDriverVersion", 64, nvmlSystemGetDriverVersion(buf, 64));
    BUF("nvmlSystemGetNVMLVersion", 64, nvmlSystemGetNVMLVersion(buf, 64));
    BUF("nvmlSystemGetProcessName", 64, nvmlSystemGetProcessName(1, buf, 64));
    BUF("nvmlVgpuInstanceGetMdevUUID", 64, nvmlVgpuInstanceGetMdevUUID(0, buf, 64));
    BUF("nvmlVgpuInstanceGetUUID", 64, nvmlVgpuInstanceGetUUID(0, buf, 64));
    BUF("nvmlVgpuInstanceGetVmDriverVersion", 64, nvmlVgpuInstanceGetVmDriverVersion(0, buf, 64));
    nvmlVgpuVmIdType_t vm_type;
    BUF("nvmlVgpuInstanceGetVmID", 64, nvmlVgpuInstanceGetVmID(0, buf, 64, &vm_type));
    BUF("nvmlVgpuTypeGetLicense", 64, nvmlVgpuTypeGetLicense(0, buf, 64));
    BUF_AS("cuFileGetParameterString", 64, CUFILE_ERR, cuFileGetParameterString(CUFILE_PARAM_LOGGING_LEVEL, buf, 64));
    /* void functions whose caller reads the buffer back: nothing else tells it the call failed */
    BUF("cudnnGetLastErrorString", 64, VOID_CALL(cudnnGetLastErrorString(buf, 64)));
    /* its buffer is NVSHMEM_MAX_NAME_LEN (256) bytes by contract: the text is cut to fit it */
    BUF("nvshmem_info_get_name", NVSHMEM_MAX_NAME_LEN, VOID_CALL(nvshmem_info_get_name(buf)));
    return 0;
}
