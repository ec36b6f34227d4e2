/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_soname.c -- libFuzzer target: cl_elf_file_soname (open.c), which reads DT_SONAME from
 * an exact file named by CUDALOAD_*_PATH without loading it: program headers, the dynamic
 * section and the string table, all at offsets the file itself gives. Input: the whole file,
 * handed over as a memfd. Contract checked besides "no crash": a result is a NUL-terminated
 * name shorter than 256 bytes that occurs, with its NUL, in the input. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    int fd = memfd_create("fuzz_soname", MFD_CLOEXEC);
    if (fd < 0) return 0;
    if (size && write(fd, data, size) != (ssize_t)size) {
        close(fd);
        return 0;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    char *name = cl_elf_file_soname(path);
    if (name) {
        size_t n = strlen(name);
        if (n >= 256 || !memmem(data, size, name, n + 1)) __builtin_trap();
        free(name);
    }
    close(fd);
    return 0;
}
