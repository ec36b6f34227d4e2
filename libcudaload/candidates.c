/* SPDX-License-Identifier: Apache-2.0 */
/*
 * candidates.c -- the candidate records: every file a library's walk (and a toolkit part's
 * search, toolkit.c) weighed, with its result and its reason (a code and its parameters,
 * rendered once by advisor.c), and the note of an exact file that could not be used.
 *
 * Recorded with the context's lock held, by the walking thread. Out of memory, a record is
 * left out and noted (cl_oom): the walk then ends OUT_OF_MEMORY rather than NOT_FOUND.
 */
#define _GNU_SOURCE
#include "cudaload_tables.h"
#include "internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define G cl_ctx

long cl_cands_add(cudaload_candidate **cands, cudaload_candidate_detail **details, size_t *n, size_t *cap,
                  const char *path, cudaload_source source, cudaload_status result, const cl_why *w) {
    cudaload_candidate_detail d = {w->reason, w->major, w->value, w->needed, NULL};
    cl_buf text = {0};
    cl_render_reason(&d, cl_buf_str(&w->text), &text);
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 8;
        cudaload_candidate *p = realloc(*cands, c * sizeof *p);
        if (p) *cands = p;
        cudaload_candidate_detail *q = p ? realloc(*details, c * sizeof *q) : NULL;
        if (q) *details = q;
        if (!p || !q) {
            cl_buf_free(&text);
            cl_oom();
            return -1;
        }
        *cap = c;
    }
    cudaload_candidate *cd = &(*cands)[*n];
    cd->path = cl_strdup(path);
    cd->reason = cl_strdup(cl_buf_str(&text));
    d.text = cl_strdup(cl_buf_str(&w->text));
    cl_buf_free(&text);
    if (!cd->path || !cd->reason || !d.text) {
        free((char *)cd->path);
        free((char *)cd->reason);
        free((char *)d.text);
        cl_oom();
        return -1;
    }
    cd->source = source;
    cd->result = result;
    (*details)[*n] = d;
    return (long)(*n)++;
}

/* Records a candidate of lib. Returns its index, or -1 when it could not be recorded (out of
 * memory: noted by cl_oom, so that the library's walk ends OUT_OF_MEMORY if it finds nothing). */
long cl_record(int lib, const char *path, cudaload_source source, cudaload_status result, const cl_why *w) {
    cl_lib_state *ls = &G.lib[lib];
    long i = cl_cands_add(&ls->cands, &ls->details, &ls->n_cands, &ls->cap_cands, path, source, result, w);
    if (i >= 0) cl_debug("%s candidate %s [%s]: %s", cl_row_of(lib)->name, path, cudaload_source_name(source), ls->cands[i].reason);
    return i;
}

/* A candidate with a reason that has no parameter but the major. */
long cl_record_code(int lib, const char *path, cudaload_source source, cudaload_status result,
                    cudaload_reason reason, int major) {
    cl_why w = {0};
    cl_why_set(&w, reason, major, 0, 0, "%s", "");
    long i = cl_record(lib, path, source, result, &w);
    cl_why_free(&w);
    return i;
}

/* Candidate i of lib says something else now (a copy taken, then let go): its result, and its
 * reason rendered again from w. Out of memory: the old reason stays, the result still changes. */
void cl_record_rewrite(int lib, size_t i, cudaload_status result, const cl_why *w) {
    cl_lib_state *ls = &G.lib[lib];
    cudaload_candidate_detail det = {w->reason, w->major, w->value, w->needed, NULL};
    cl_buf text = {0};
    cl_render_reason(&det, cl_buf_str(&w->text), &text);
    char *r = cl_strdup(cl_buf_str(&text)), *t = cl_strdup(cl_buf_str(&w->text));
    cl_buf_free(&text);
    if (r && t) {
        free((char *)ls->cands[i].reason);
        free((char *)ls->details[i].text);
        ls->cands[i].reason = r;
        det.text = t;
        ls->details[i] = det;
    } else {
        free(r);
        free(t);
        cl_oom();
    }
    ls->cands[i].result = result;
}

int cl_already_candidate(int lib, const char *path) {
    const cl_lib_state *ls = &G.lib[lib];
    for (size_t i = 0; i < ls->n_cands; i++)
        if (strcmp(ls->cands[i].path, path) == 0) return 1;
    return 0;
}

/* A candidate path too long for the system (CL_PATH_LIMIT) is recorded with PATH_TOO_LONG, not
 * silently passed over (the system calls would fail on it with ENAMETOOLONG and it would look
 * absent): 1 when path does not fit. */
int cl_path_too_long(int lib, const char *path, cudaload_source source, int major) {
    size_t len = strlen(path);
    if (len < CL_PATH_LIMIT) return 0;
    if (!cl_already_candidate(lib, path)) {
        char *dir = cl_dir_of(path);
        cl_why w = {0};
        cl_why_set(&w, CUDALOAD_REASON_PATH_TOO_LONG, major, len > INT_MAX ? INT_MAX : (int)len, CL_PATH_LIMIT, "%s",
                   dir ? dir : "");
        cl_record(lib, path, source, CUDALOAD_ERROR_NOT_FOUND, &w);
        cl_why_free(&w);
        free(dir);
    }
    return 1;
}

/* A candidate path that cannot even be looked at (a directory on the way is not searchable) is
 * recorded, not silently passed over: the user may expect a copy there. */
void cl_note_unsearchable(int lib, const char *path, cudaload_source source) {
    if (!cl_plat_unsearchable(path)) return;
    char *dir = cl_dir_of(path);
    cl_why w = {0};
    cl_why_set(&w, CUDALOAD_REASON_UNSEARCHABLE, 0, 0, 0, "%s", dir ? dir : path);
    cl_record(lib, path, source, CUDALOAD_ERROR_NOT_FOUND, &w);
    cl_why_free(&w);
    free(dir);
}

/* "<origin>=<path> cannot be used: <reason>": the first line of the library's message when an
 * exact file given by env/options failed, so the user sees which setting to fix. */
void cl_set_note(int lib, const char *origin, const char *path, const char *reason) {
    cl_lib_state *ls = &G.lib[lib];
    cl_buf b = {0};
    cl_buf_printf(&b, "%s=%s cannot be used: %s", origin ? origin : "exact file", path, reason ? reason : "");
    free(ls->note);
    ls->note = cl_strdup(cl_buf_str(&b));
    cl_debug("%s", cl_buf_str(&b));
    cl_buf_free(&b);
}
