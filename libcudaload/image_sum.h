/* SPDX-License-Identifier: Apache-2.0 */
/*
 * image_sum.h -- the checksum of the kernels' fatbin that a module reading it from a file
 * (kernels_image.c) was built with: computed at build time by tools/image_sum.c, at run time by
 * kernels_image.c, both with this one function. A check that the file is the build's, not a
 * defence against tampering: Fletcher's two sums over 32-bit words (little-endian, as on every
 * platform libcudaload builds for) in eight lanes, which a compiler turns into vector adds (any
 * one word changed changes its lane's first sum; words swapped, its second), folded into 64 bits
 * with the size and the tail. 63-85 us for the 1 MB fatbin on a 2-core development machine,
 * where a multiply per word took 200-250.
 */
#ifndef CUDALOAD_IMAGE_SUM_H
#define CUDALOAD_IMAGE_SUM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t cl_image_sum(const unsigned char *p, size_t n) {
    uint32_t a[8] = {0}, b[8] = {0};
    size_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int l = 0; l < 8; l++) {
            uint32_t w;
            memcpy(&w, p + i + 4 * l, 4);
            a[l] += w;
            b[l] += a[l];
        }
    uint64_t s = 0x9e3779b97f4a7c15ULL ^ (uint64_t)n;
    for (int l = 0; l < 8; l++) {
        s = (s ^ (((uint64_t)b[l] << 32) | a[l])) * 0x100000001b3ULL;
        s ^= s >> 29;
    }
    for (; i < n; i++) s = ((s ^ p[i]) * 0x100000001b3ULL) ^ (s >> 29);
    return s;
}

#endif
