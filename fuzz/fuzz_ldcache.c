/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_ldcache.c -- libFuzzer target: the /etc/ld.so.cache reader of find-only mode
 * (search.c). The input is the cache image; the looked-up name comes from its first byte. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const char *const names[] = {"libcudart.so.13", "libcuda.so.1", "libc.so.6", ""};
    const char *name = names[size ? data[0] % 4 : 0];
    char *p = cl_ldcache_lookup(data, size, name);
    if (p && strlen(p) >= size) __builtin_trap(); /* a result must come from inside the image */
    free(p);
    return 0;
}
