/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_proc_version.c -- libFuzzer target: the /proc/driver/nvidia/version parser (gate.c). */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *b = cl_parse_proc_driver_version((const char *)data, size);
    if (b) {
        /* what comes back is a version: digits and at most two dots */
        for (const char *c = b; *c; c++)
            if (!(*c == '.' || (*c >= '0' && *c <= '9'))) __builtin_trap();
        free(b);
    }
    return 0;
}
