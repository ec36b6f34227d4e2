/* SPDX-License-Identifier: Apache-2.0 */
/*
 * probe_report.c -- the probe's report (probe_report.h): gathered (probe_gather.c), the
 * self-test (probe_selftest.c), the diagnosis (probe_diagnose.c), then written as text or
 * JSON (probe_render.c). Used by cudaload-probe and by the Python package's extension.
 */
#define _GNU_SOURCE
#include "probe_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the public entry points ---- */

probe_report *probe_report_collect(const probe_request *rq) {
    probe *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->find_only = rq->find_only;
    p->selftest = rq->selftest;
    p->init_status = rq->init_status;
    if (rq->python && !(p->python = strdup(rq->python))) {
        free(p);
        return NULL;
    }
    if (rq->init_status != CUDALOAD_OK && rq->init_error)
        snprintf(p->init_error, sizeof p->init_error, "%s", rq->init_error);
    probe_gather(p, rq->libs, rq->n_libs);
    probe_checks(p);
    probe_selftest(p);
    probe_diagnose(p);
    p->code = probe_exit_code_of(p);
    return p;
}

int probe_report_exit_code(const probe_report *r) { return r->code; }

void probe_report_text(probe_report *r, FILE *out, int color) {
    r->color = color;
    probe_render_text(out, r);
}

void probe_report_json(const probe_report *r, FILE *out) { probe_render_json(out, r); }

size_t probe_root_warning_lines(const char *python, char **lines, size_t max) {
    probe *p = calloc(1, sizeof *p);
    if (!p) return 0;
    p->python = (char *)python; /* read only; not freed here */
    p->roots = cudaload_roots(&p->n_roots);
    probe_check_roots(p);
    probe_word_roots(p);
    size_t k = 0;
    for (int i = 0; i < p->n_warnings; i++)
        if (k < max) lines[k++] = p->warnings[i];
        else free(p->warnings[i]);
    free(p);
    return k;
}

void probe_report_free(probe_report *r) {
    if (!r) return;
    for (int i = 0; i < r->n_warnings; i++) free(r->warnings[i]);
    for (int i = 0; i < r->n_fixes; i++) free(r->fixes[i]);
    for (int i = 0; i < r->n_problems; i++) free(r->problems[i]);
    free(r->llp);
    free(r->python);
    free(r);
}
