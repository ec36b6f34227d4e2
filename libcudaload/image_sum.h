/* SPDX-License-Identifier: Apache-2.0 */
/*
 * image_sum.h -- the checksum of the kernels' fatbin that a module reading it from a file
 * (kernels_image.c) was built with: computed at build time by tools/image_sum.c, at run time by
 * kernels_image.c, both with this one function. A check that the file is the build's, not a
 * defence against tampering: 64-bit words (little-endian, as on every platform libcudaload builds
 * for), each mixed in by a multiply and a shift, the tail byte by byte; about 0.2 ms for the
 * 1 MB fatbin.
 */
#ifndef CUDALOAD_IMAGE_SUM_H
#define CUDALOAD_IMAGE_SUM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t cl_image_sum(const unsigned char *p, size_t n) {
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ (uint64_t)n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0x100000001b3ULL;
        h ^= h >> 29;
    }
    for (; i < n; i++) h = ((h ^ p[i]) * 0x100000001b3ULL) ^ (h >> 29);
    return h;
}

#endif
