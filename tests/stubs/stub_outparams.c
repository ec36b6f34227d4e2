/* SPDX-License-Identifier: Apache-2.0 */
/* stub_outparams.c -- every stub function that hands back a string or a name buffer through an
 * out-parameter, called when its library cannot be had (test_stubs.c:
 * test_out_parameters_filled_on_failure; run with CUDALOAD_SOURCES=override and no override).
 * The out-parameter starts as garbage, as an uninitialised pointer in a caller's error path
 * would be (a Python extension on the driver stub calls cuGetErrorString after cuInit failed).
 * Prints, per function, <name>=<its return code> and <name>_text=1 when the out-parameter
 * holds a NUL-terminated text from libcudaload within the buffer's length, else 0. */
#include <stdio.h>
#include <string.h>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <nvrtc.h>

#include "outparams.h"

/* the older ABI's entry points the driver stub keeps (cuda.h now maps the name to another) */
#undef cuGraphInstantiate
CUresult cuGraphInstantiate(CUgraphExec *, CUgraph, CUgraphNode *, char *, size_t);
CUresult cuGraphInstantiate_v2(CUgraphExec *, CUgraph, CUgraphNode *, char *, size_t);

int main(void) {
    /* the extension's error path: cuInit fails, then the message is asked for */
    CUresult init = cuInit(0);
    printf("cuInit=%d\n", (int)init);
    STR("cuGetErrorString", cuGetErrorString(init, &s));
    STR("cuGetErrorName", cuGetErrorName(init, &s));
    STR("cuFuncGetName", cuFuncGetName(&s, NULL));
    STR("cuKernelGetName", cuKernelGetName(&s, NULL));
    STR("cudaFuncGetName", cudaFuncGetName(&s, NULL));
    STR("nvrtcGetLoweredName", nvrtcGetLoweredName(NULL, "k", &s));
    BUF("cuDeviceGetName", 64, cuDeviceGetName(buf, 64, 0));
    BUF("cuDeviceGetPCIBusId", 64, cuDeviceGetPCIBusId(buf, 64, 0));
    BUF("cudaDeviceGetPCIBusId", 64, cudaDeviceGetPCIBusId(buf, 64, 0));
    CUgraphExec exec = NULL;
    BUF("cuGraphInstantiate", 64, cuGraphInstantiate(&exec, NULL, NULL, buf, 64));
    BUF("cuGraphInstantiate_v2", 64, cuGraphInstantiate_v2(&exec, NULL, NULL, buf, 64));
    /* a buffer shorter than the text: cut, ended, nothing written past it */
    BUF("short_buffer", 8, cuDeviceGetName(buf, 8, 0));
    /* no buffer, no length: nothing written */
    printf("null_out=%d\n", (int)cuGetErrorString(init, NULL));
    printf("zero_len=%d\n", (int)cuDeviceGetName(NULL, 0, 0));
    return 0;
}
