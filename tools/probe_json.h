/* SPDX-License-Identifier: Apache-2.0 */
/*
 * probe_json.h -- a small streaming JSON writer for cudaload-probe.
 *
 * Strings are bytes (Linux paths are not text): valid UTF-8 passes through; '"', '\\' and
 * control bytes are escaped (\n, \t, ... or \u00XX); every byte b of an invalid UTF-8
 * sequence is written as \udcXX, the lone surrogate U+DC00+b (Python's "surrogateescape"
 * convention), so any path yields parseable JSON and the exact bytes come back with
 * json.loads(text)[...].encode("utf-8", "surrogateescape").
 */
#ifndef CUDALOAD_PROBE_JSON_H
#define CUDALOAD_PROBE_JSON_H

#include <stdio.h>

typedef struct pj_writer {
    FILE *out;
    int depth;
    int first[32]; /* per nesting level: nothing written yet */
    int after_key;
} pj_writer;

void pj_begin_object(pj_writer *w);
void pj_end_object(pj_writer *w);
void pj_begin_array(pj_writer *w);
void pj_end_array(pj_writer *w);
void pj_key(pj_writer *w, const char *key);
void pj_string(pj_writer *w, const char *s); /* NULL writes null */
void pj_int(pj_writer *w, long long v);
void pj_double(pj_writer *w, double v);      /* non-finite writes null */
void pj_bool(pj_writer *w, int v);
void pj_null(pj_writer *w);
/* Writes s as a JSON string literal (with quotes) to out: the escaping used everywhere. */
void pj_write_escaped(FILE *out, const char *s);

#endif
