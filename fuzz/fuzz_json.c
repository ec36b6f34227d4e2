/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_json.c -- libFuzzer target: the probe's JSON string escaping (tools/probe_json.c)
 * with hostile paths. The output must be one JSON string literal: quoted, no raw control
 * byte, no unescaped quote, and valid UTF-8 throughout. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *in = malloc(size + 1);
    memcpy(in, data, size);
    in[size] = 0;
    char *out = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&out, &n);
    pj_write_escaped(f, in);
    fclose(f);
    if (n < 2 || out[0] != '"' || out[n - 1] != '"') __builtin_trap();
    for (size_t i = 1; i + 1 < n; i++) {
        unsigned char c = (unsigned char)out[i];
        if (c < 0x20 || c == 0x7f) __builtin_trap();
        if (c == '\\') {
            i++; /* the escaped character */
            continue;
        }
        if (c == '"') __builtin_trap();
        if (c >= 0x80) { /* a multi-byte sequence must be complete UTF-8 */
            int len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
            if (c < 0xc2 || i + (size_t)len > n - 1) __builtin_trap();
            for (int k = 1; k < len; k++)
                if (((unsigned char)out[i + (size_t)k] & 0xc0) != 0x80) __builtin_trap();
            i += (size_t)len - 1;
        }
    }
    free(out);
    free(in);
    return 0;
}
