/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_elf.c -- libFuzzer target: the ELF header check that runs on every candidate file
 * before dlopen (open.c). Input: 8 bytes of claimed file size, then the header bytes. */
#define _GNU_SOURCE
#include <stdint.h>
#include <string.h>

#include "internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    unsigned long long file_size = 0;
    if (size >= 8) {
        memcpy(&file_size, data, 8);
        data += 8;
        size -= 8;
    }
    cl_buf why = {0};
    cudaload_status st = cl_elf_check_header(data, size, file_size, &why);
    /* a rejection always says why */
    if (st != CUDALOAD_OK && cl_buf_str(&why)[0] == 0) __builtin_trap();
    cl_buf_free(&why);
    return 0;
}
