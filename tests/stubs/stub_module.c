/* SPDX-License-Identifier: Apache-2.0 */
/* stub_module.c -- a module (like a Python extension) with the cudart stub and libcudaload
 * embedded, their symbols kept local (-Wl,--exclude-libs,ALL). Built twice; test_stubs.c loads
 * both, after the real libcudart, into one process. */
#include <cuda_runtime_api.h>

#include "cudaload.h"

#define MODULE_API __attribute__((visibility("default")))

MODULE_API int module_runtime_version(void);
int module_runtime_version(void) {
    int v = 0;
    return cudaRuntimeGetVersion(&v) == cudaSuccess ? v : -1;
}

MODULE_API const char *module_cudart_path(void);
const char *module_cudart_path(void) {
    cudaload_library_info info = {.size = sizeof info};
    return cudaload_get_library_info(CUDALOAD_LIB_CUDART, &info) == CUDALOAD_OK ? info.path : NULL;
}
