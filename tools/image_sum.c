/* SPDX-License-Identifier: Apache-2.0 */
/*
 * image_sum.c -- a build tool: prints the compiler flags that tell libcudaload/kernels_image.c
 * which fatbin to expect in its file (make's kernels_image_file.o): its size and its checksum
 * (libcudaload/image_sum.h, the function the check at run time uses).
 *   image_sum FATBIN  ->  -DCL_KERNELS_IMAGE_BYTES=<n> -DCL_KERNELS_IMAGE_SUM=<sum>ULL
 */
#include "image_sum.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: image_sum FATBIN\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        fprintf(stderr, "image_sum: cannot open %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    size_t cap = 1 << 20, n = 0;
    unsigned char *p = malloc(cap);
    for (size_t got; p && (got = fread(p + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap) {
            unsigned char *q = realloc(p, cap *= 2);
            if (!q) free(p);
            p = q;
        }
    }
    int bad = !p || ferror(f);
    fclose(f);
    if (bad || n == 0) {
        fprintf(stderr, "image_sum: cannot read %s: %s\n", argv[1], !p ? "out of memory" : n == 0 && !bad ? "empty" : strerror(errno));
        free(p);
        return 1;
    }
    printf("-DCL_KERNELS_IMAGE_BYTES=%zu -DCL_KERNELS_IMAGE_SUM=0x%016llxULL\n", n, (unsigned long long)cl_image_sum(p, n));
    free(p);
    return 0;
}
