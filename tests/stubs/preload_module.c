/* SPDX-License-Identifier: Apache-2.0 */
/* preload_module.c -- an extension built the way torch and JAX build theirs: DT_NEEDED
 * libcudart.so.13, no RPATH. It loads only where something put a libcudart.so.13 in the
 * process first (libcudaload, in test_stubs.c: "preload" mode, docs/stubs.md). */
#include <cuda_runtime_api.h>

__attribute__((visibility("default"))) int preload_runtime_version(void);
int preload_runtime_version(void) {
    int v = 0;
    return cudaRuntimeGetVersion(&v) == cudaSuccess ? v : -1;
}
