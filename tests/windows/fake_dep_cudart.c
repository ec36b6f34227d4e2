/* SPDX-License-Identifier: Apache-2.0 */
/* fake_dep_cudart.c -- a cudart64_12.dll that imports cl_sibling.dll (fake_sibling.c), which lies in
 * its directory only: it loads only when dependencies come from the DLL's own directory
 * (LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR). Its version is the sibling's answer; the other symbols
 * libcudaload requires of a cudart (include/cudaload_tables.h) exist and are never called. */
__declspec(dllimport) int cl_sibling_version(void);
__declspec(dllexport) int cudaRuntimeGetVersion(int *v);
int cudaRuntimeGetVersion(int *v) {
    *v = cl_sibling_version();
    return 0;
}

/* present, never called: 999 = cudaErrorUnknown */
#define CL_UNUSED(name)                          \
    __declspec(dllexport) int name(void);        \
    int name(void) { return 999; }
CL_UNUSED(cudaDeviceGetAttribute)
CL_UNUSED(cudaDeviceSynchronize)
CL_UNUSED(cudaDriverGetVersion)
CL_UNUSED(cudaEventCreate)
CL_UNUSED(cudaEventDestroy)
CL_UNUSED(cudaEventElapsedTime)
CL_UNUSED(cudaEventRecord)
CL_UNUSED(cudaEventSynchronize)
CL_UNUSED(cudaFree)
CL_UNUSED(cudaGetDevice)
CL_UNUSED(cudaGetDeviceCount)
CL_UNUSED(cudaGetErrorName)
CL_UNUSED(cudaGetErrorString)
CL_UNUSED(cudaGetLastError)
CL_UNUSED(cudaMalloc)
CL_UNUSED(cudaMemGetInfo)
CL_UNUSED(cudaMemcpy)
CL_UNUSED(cudaMemcpyAsync)
CL_UNUSED(cudaMemsetAsync)
CL_UNUSED(cudaSetDevice)
CL_UNUSED(cudaStreamCreate)
CL_UNUSED(cudaStreamDestroy)
CL_UNUSED(cudaStreamSynchronize)
