/* SPDX-License-Identifier: Apache-2.0 */
/* outparams.h -- what stub_outparams.c and stub_outparams_wheels.c check an out-parameter with:
 * STR(name, call) hands the call a const char * that starts as garbage (POISON) in s; BUF(name,
 * len, call) a 512-byte buffer of 'X' in buf, len of it given to the call. Each prints
 * <name>=<the call's code> and <name>_text=1 when the out-parameter then holds a NUL-terminated
 * text of libcudaload, within len for a buffer, and nothing past len was written. BUF_AS takes
 * how the call's status reads as a number (cuFile's is a struct). */
#ifndef CUDALOAD_TEST_OUTPARAMS_H
#define CUDALOAD_TEST_OUTPARAMS_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define POISON ((const char *)(uintptr_t)0x1)
static const char prefix[] = "libcudaload: ";

static int text_ok(const char *s) {
    return s && s != POISON && strncmp(s, prefix, sizeof prefix - 1) == 0 && strlen(s) < 640; /* a stub's line: stubs/stub.h, why[] */
}

/* buf (n bytes, len given to the call) holds a text of libcudaload ended within len, and the
 * bytes past len are untouched */
static int buf_ok(const char *buf, size_t n, size_t len) {
    const char *end = memchr(buf, 0, len);
    if (!end || strncmp(buf, prefix, len - 1 < sizeof prefix - 1 ? len - 1 : sizeof prefix - 1) != 0) return 0;
    for (size_t i = len; i < n; i++)
        if (buf[i] != 'X') return 0;
    return 1;
}

#define STR(name, call)                                                                                                \
    do {                                                                                                               \
        const char *s = POISON;                                                                                        \
        int rc = (int)(call);                                                                                          \
        printf("%s=%d\n%s_text=%d\n", name, rc, name, text_ok(s));                                                     \
    } while (0)
#define BUF_AS(name, len, rc_of, call)                                                                                 \
    do {                                                                                                               \
        char buf[512];                                                                                                 \
        memset(buf, 'X', sizeof buf);                                                                                  \
        int rc = rc_of(call);                                                                                          \
        printf("%s=%d\n%s_text=%d\n", name, rc, name, buf_ok(buf, sizeof buf, len));                                   \
    } while (0)
#define OUTPARAMS_AS_INT(x) ((int)(x))
#define BUF(name, len, call) BUF_AS(name, len, OUTPARAMS_AS_INT, call)

#endif
