/* SPDX-License-Identifier: Apache-2.0 */
/*
 * probe_fields.h -- the one list of a library's fields in the probe's report.
 *
 * Each library of the report is a probe_lib: libcudaload's info (cudaload_get_library_info)
 * and the advisor's fixes (cudaload_fix_at). probe_lib_fields lists what the report says
 * about it, in order, with for each field its JSON key, how its value is read, and where the
 * text report shows it. The JSON writer, the text writer (probe_render.c) and the Python
 * package's cudaload.library() (python-shim, _cudaload.c) all walk this list, so a field is
 * in all of them or, by its entry here, deliberately in one only (PROBE_TEXT_NONE).
 */
#ifndef CUDALOAD_PROBE_FIELDS_H
#define CUDALOAD_PROBE_FIELDS_H

#include <stddef.h>

#include "cudaload.h"

#define PROBE_MAX_FIXES 8

/* One library as the report shows it. */
typedef struct probe_lib {
    cudaload_library_info info;
    size_t n_fixes;                       /* what cudaload_fix_at gave, at most PROBE_MAX_FIXES */
    cudaload_fix fixes[PROBE_MAX_FIXES];
} probe_lib;

/* Appends the formatted text to out (of size n, holding len bytes) and returns the length the
 * whole text has: len + what this call adds, whether it fit or not. Once that reaches n, out
 * holds a truncated text and later calls write nothing (never at out + len, which is past the
 * buffer then): the caller checks the returned length against n. */
size_t probe_appendf(char *out, size_t n, size_t len, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* A pip requirement for package, from the fix of lib for a CUDA major (out of size n): pinned to
 * that major where the name alone does not say it. */
void probe_requirement(cudaload_lib lib, int major, const char *package, char *out, size_t n);

/* Fills *out for lib from cudaload_get_library_info and cudaload_fix_at (searches nothing). */
void probe_lib_fill(cudaload_lib lib, probe_lib *out);

typedef enum probe_vtype {
    PV_NULL,  /* null / None: not known, or not applicable */
    PV_STR,   /* s: a string (bytes: a path is not text) */
    PV_INT,   /* i */
    PV_BOOL,  /* i: 0 or 1 */
    PV_WORDS, /* s: space-separated words, written as a list of strings */
    PV_ITEMS  /* i: the number of items, each an object of the field's items */
} probe_vtype;

typedef struct probe_value {
    probe_vtype type;
    const char *s;
    long long i;
} probe_value;

/* Where the text report shows a field. */
typedef enum probe_text_slot {
    PROBE_TEXT_NONE,  /* not in the text: said elsewhere (the fixes, in the Result section), or a
                         detail for programs (a candidate's status_code) */
    PROBE_TEXT_HEAD,  /* on the first line: the library's state line, a candidate's path line */
    PROBE_TEXT_LINE,  /* a paragraph of its own below that line */
    PROBE_TEXT_CONT,  /* continues the paragraph of the field before it */
    PROBE_TEXT_MARK,  /* a candidate's mark before its path: + taken, - skipped */
    PROBE_TEXT_ITEMS  /* a block of items (the candidates), each shown by the items' own slots */
} probe_text_slot;

typedef struct probe_field probe_field;
struct probe_field {
    const char *key; /* the JSON key; also the key of cudaload.library()'s dict */
    /* the value for library l (item: the index of a candidate or fix, for an item's field);
     * buf (n bytes) holds a value made for the occasion */
    probe_value (*get)(const probe_lib *l, size_t item, char *buf, size_t n);
    const probe_field *items; /* PV_ITEMS: the fields of each item, ended by {NULL} */
    probe_text_slot text;
    int whole;                /* text: one unit never broken across lines (a path) */
    int colour;               /* text: green when the library is usable, red when not */
    /* text: the words shown ("" for none here); NULL shows the value as it is */
    const char *(*show)(const probe_lib *l, size_t item, char *buf, size_t n);
};

/* A library's fields, in the report's order, ended by {NULL}. */
extern const probe_field probe_lib_fields[];

/* The state word of a library: "loaded", "found", "not_found" or "error". */
const char *probe_lib_state(const cudaload_library_info *l);

/* The name of a fix kind: "pip_install", "upgrade_driver", "install_driver", "check_setting"
 * ("none" for another value). */
const char *probe_fix_kind_name(cudaload_fix_kind kind);

#endif
