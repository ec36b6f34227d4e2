/* SPDX-License-Identifier: Apache-2.0 */
/* probe_json.c -- see probe_json.h. */
#include "probe_json.h"

#include <math.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when invalid. */
static int utf8_len(const unsigned char *s) {
    unsigned char c = s[0];
    int n;
    unsigned min;
    unsigned cp;
    if (c < 0x80) return 1;
    if (c >= 0xc2 && c <= 0xdf) n = 2, cp = c & 0x1f, min = 0x80;
    else if (c >= 0xe0 && c <= 0xef) n = 3, cp = c & 0x0f, min = 0x800;
    else if (c >= 0xf0 && c <= 0xf4) n = 4, cp = c & 0x07, min = 0x10000;
    else return 0;
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return n;
}

void pj_write_escaped(FILE *out, const char *str) {
    const unsigned char *s = (const unsigned char *)str;
    fputc('"', out);
    while (*s) {
        unsigned char c = *s;
        if (c == '"' || c == '\\') {
            fputc('\\', out);
            fputc(c, out);
            s++;
        } else if (c < 0x20 || c == 0x7f) {
            switch (c) {
            case '\n': fputs("\\n", out); break;
            case '\t': fputs("\\t", out); break;
            case '\r': fputs("\\r", out); break;
            case '\b': fputs("\\b", out); break;
            case '\f': fputs("\\f", out); break;
            default: fprintf(out, "\\u%04x", c); break;
            }
            s++;
        } else {
            int n = utf8_len(s);
            if (n == 0) {
                fprintf(out, "\\udc%02x", c); /* an invalid byte b, as the lone surrogate U+DC00+b */
                s++;
            } else {
                fwrite(s, 1, (size_t)n, out);
                s += n;
            }
        }
    }
    fputc('"', out);
}

static void pj_sep(pj_writer *w) {
    if (w->after_key) {
        w->after_key = 0;
        return;
    }
    if (w->depth > 0) {
        if (!w->first[w->depth]) fputc(',', w->out);
        w->first[w->depth] = 0;
        fputc('\n', w->out);
        for (int i = 0; i < w->depth; i++) fputs("  ", w->out);
    }
}

static void pj_open(pj_writer *w, char c) {
    pj_sep(w);
    fputc(c, w->out);
    if (w->depth < 31) w->depth++;
    w->first[w->depth] = 1;
}

static void pj_close(pj_writer *w, char c) {
    int empty = w->first[w->depth];
    if (w->depth > 0) w->depth--;
    if (!empty) {
        fputc('\n', w->out);
        for (int i = 0; i < w->depth; i++) fputs("  ", w->out);
    }
    fputc(c, w->out);
    if (w->depth == 0) fputc('\n', w->out);
}

void pj_begin_object(pj_writer *w) { pj_open(w, '{'); }
void pj_end_object(pj_writer *w) { pj_close(w, '}'); }
void pj_begin_array(pj_writer *w) { pj_open(w, '['); }
void pj_end_array(pj_writer *w) { pj_close(w, ']'); }

void pj_key(pj_writer *w, const char *key) {
    pj_sep(w);
    pj_write_escaped(w->out, key);
    fputs(": ", w->out);
    w->after_key = 1;
}

void pj_string(pj_writer *w, const char *s) {
    pj_sep(w);
    if (s) pj_write_escaped(w->out, s);
    else fputs("null", w->out);
}

void pj_int(pj_writer *w, long long v) {
    pj_sep(w);
    fprintf(w->out, "%lld", v);
}

void pj_double(pj_writer *w, double v) {
    pj_sep(w);
    if (isfinite(v)) fprintf(w->out, "%.6g", v);
    else fputs("null", w->out);
}

void pj_bool(pj_writer *w, int v) {
    pj_sep(w);
    fputs(v ? "true" : "false", w->out);
}

void pj_null(pj_writer *w) {
    pj_sep(w);
    fputs("null", w->out);
}
