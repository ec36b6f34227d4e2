/* SPDX-License-Identifier: Apache-2.0 */
/*
 * probe_render.c -- the report's writers: the text report (80 columns, escaped for a terminal,
 * colour when asked) and the JSON report (docs/probe.md), to any FILE *.
 */
#define _GNU_SOURCE
#include "probe_internal.h"

#include "probe_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- text output ---- */

static const char *c_on(const probe *p, const char *code) { return p->color ? code : ""; }
#define BOLD "\033[1m"
#define RED "\033[31m"
#define GREEN "\033[32m"
#define YELLOW "\033[33m"
#define RESET "\033[0m"

/* ---- 80-column layout ---- */

#define WIDTH 80

/* Visible columns of the first len bytes of s: colour sequences take none, a UTF-8 sequence
 * one column. */
static size_t vis_width(const char *s, size_t len) {
    size_t n = 0;
    for (size_t i = 0; i < len && s[i]; i++) {
        if (s[i] == '\033') {
            while (i < len && s[i] && s[i] != 'm') i++;
            continue;
        }
        if (((unsigned char)s[i] & 0xc0) != 0x80) n++;
    }
    return n;
}

/* The length of the next unit of s (n > 0 bytes there): a whole valid UTF-8 sequence, else
 * one byte. *esc is set when the text report must not write it as is, but as \xNN per byte:
 * a C0 control (ESC, newline) or DEL; a C1 control, U+0080-U+009F (UTF-8 c2 80-c2 9f),
 * which a terminal may take as CSI and the like; and any byte that is not part of valid
 * UTF-8 (a raw 0x80-0x9f is a C1 control to an 8-bit terminal). A path or a message then
 * cannot drive the terminal. */
static size_t text_unit(const unsigned char *s, size_t n, int *esc) {
    unsigned char c = s[0];
    *esc = 0;
    if (c < 0x80) {
        *esc = c < 0x20 || c == 0x7f;
        return 1;
    }
    size_t len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    /* the second byte's range excludes overlong forms, surrogates and code points past U+10FFFF */
    unsigned char lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80, hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
    int valid = len && len <= n && s[1] >= lo && s[1] <= hi;
    for (size_t i = 2; valid && i < len; i++) valid = (s[i] & 0xc0) == 0x80;
    if (!valid) {
        *esc = 1; /* not UTF-8: each byte on its own */
        return 1;
    }
    *esc = c == 0xc2 && s[1] <= 0x9f; /* C1 */
    return len;
}

/* Escapes the n bytes at s as the text report does (units text_unit flags as \xNN) into out,
 * which has room for 4 * n + 1 bytes; returns the length written. */
static size_t escape_text(char *out, const char *s, size_t n) {
    size_t len = 0;
    for (size_t i = 0; i < n;) {
        int esc;
        size_t u = text_unit((const unsigned char *)s + i, n - i, &esc);
        for (size_t k = 0; k < u; k++)
            if (esc) len += (size_t)snprintf(out + len, 5, "\\x%02x", (unsigned char)s[i + k]);
            else out[len++] = s[i + k];
        i += u;
    }
    out[len] = 0;
    return len;
}

/* Writes the n bytes at s as the text report does, a unit at a time. */
static void put_text(FILE *o, const char *s, size_t n) {
    char chunk[4 * 64 + 1];
    for (size_t i = 0; i < n;) {
        size_t take = n - i < 64 ? n - i : 64;
        /* never split a UTF-8 sequence between two chunks: end on a lead byte's boundary */
        while (take < n - i && take > 1 && ((unsigned char)s[i + take] & 0xc0) == 0x80) take--;
        fwrite(chunk, 1, escape_text(chunk, s + i, take), o);
        i += take;
    }
}

/* Columns that put_text takes for the n bytes at s (an escaped byte: 4). */
static size_t text_width(const char *s, size_t n) {
    size_t w = 0;
    for (size_t i = 0; i < n;) {
        int esc;
        size_t u = text_unit((const unsigned char *)s + i, n - i, &esc);
        w += esc ? 4 * u : 1;
        i += u;
    }
    return w;
}

/* s made safe for a terminal (put_text's escaping). The result lives until eight later calls
 * (enough for one printf). */
static const char *tx(const char *s) {
    static char *pool[8];
    static unsigned next;
    if (!s) return "(null)";
    char **slot = &pool[next++ % 8];
    free(*slot);
    *slot = NULL;
    size_t len = strlen(s);
    char *buf = malloc(4 * len + 1);
    if (!buf) return ""; /* out of memory: nothing rather than raw bytes */
    escape_text(buf, s, len);
    *slot = buf;
    return buf;
}

/* Length in bytes of the word at s: up to a blank, where with marks a `quoted` span (a
 * command) counts as part of the word, blanks included. */
static size_t word_len(const char *s, int marks) {
    size_t i = 0;
    int quoted = 0;
    for (; s[i]; i++) {
        if (marks && s[i] == '`') quoted = !quoted;
        else if (!quoted && (s[i] == ' ' || s[i] == '\n')) break;
    }
    return i;
}

/* Prints prefix, then text word-wrapped to WIDTH columns, continuation lines indented by
 * indent spaces (a newline in text starts such a line too). A word wider than a line (a
 * long path) is put on a line of its own, never broken. With marks, the probe's own texts:
 * a command in `backquotes` is one word, printed without the quotes. */
static void wrap_marked(FILE *o, const char *prefix, int indent, const char *text, int marks) {
    size_t col = vis_width(prefix, strlen(prefix));
    fputs(prefix, o);
    int at_start = 1;
    for (const char *s = text; *s;) {
        if (*s == '\n') {
            s++;
            if (!*s) break;
            fprintf(o, "\n%*s", indent, "");
            col = (size_t)indent, at_start = 1;
            continue;
        }
        if (*s == ' ') {
            s++;
            continue;
        }
        size_t len = word_len(s, marks), w = 0;
        for (size_t i = 0, j; i < len; i = j + 1) { /* the spans between backquotes */
            for (j = i; j < len && !(marks && s[j] == '`'); j++) {}
            w += text_width(s + i, j - i);
        }
        if (col + (at_start ? 0 : 1) + w > WIDTH && col > (size_t)indent) { /* also after a long prefix */
            fprintf(o, "\n%*s", indent, "");
            col = (size_t)indent, at_start = 1;
        }
        if (!at_start) fputc(' ', o), col++;
        for (size_t i = 0, j; i < len; i = j + 1) {
            for (j = i; j < len && !(marks && s[j] == '`'); j++) {}
            put_text(o, s + i, j - i);
        }
        col += w, at_start = 0, s += len;
    }
    fputc('\n', o);
}

static void wrap(FILE *o, const char *prefix, int indent, const char *text) { wrap_marked(o, prefix, indent, text, 0); }

/* Prints a group of command-line items after label, all on one line when they fit, else
 * one item a line joined by " \" so the block still pastes into a shell. */
static void flag_block(FILE *o, const char *label, char *const *items, int n) {
    /* the width the line would have, counted rather than written into a buffer of its own */
    size_t width = 11; /* "  %-9s" */
    for (int i = 0; i < n; i++) {
        const char *t = tx(items[i]);
        width += (i ? 1 : 0) + vis_width(t, strlen(t));
    }
    if (width <= WIDTH || n == 1) {
        fprintf(o, "  %-9s", label);
        for (int i = 0; i < n; i++) fprintf(o, "%s%s", i ? " " : "", tx(items[i]));
        fputc('\n', o);
        return;
    }
    for (int i = 0; i < n; i++) fprintf(o, i ? "%11s%s%s\n" : "  %-9s%s%s\n", i ? "" : label, tx(items[i]), i + 1 < n ? " \\" : "");
}

static void heading(FILE *o, const probe *p, const char *title) { fprintf(o, "\n%s%s%s\n", c_on(p, BOLD), title, c_on(p, RESET)); }

/* Whether NVRTC is one of the libraries reported (--lib nvrtc): then it is not also reported
 * as the optional library found beside the runtime. */
static int nvrtc_reported(const probe *p) {
    for (size_t i = CUDALOAD_LIB_COUNT_; i < p->n_libs; i++)
        if (LIB(p, i)->name && strcmp(LIB(p, i)->name, "nvrtc") == 0) return 1;
    return 0;
}

/* ---- a library, from its fields (probe_fields.c) ---- */

/* One piece of a line: printed whole (a path: never broken) or as words wrapped at its
 * blanks; in colour or not. */
typedef struct unit {
    const char *s;
    int whole;
    const char *colour;
} unit;

/* Prints prefix, then the units, wrapped to WIDTH columns with continuation lines indented by
 * indent. A whole unit wider than what is left of a line starts a line of its own; a unit
 * that begins with ',' follows the one before it without a blank. */
static void put_units(FILE *o, const probe *p, const char *prefix, int indent, const unit *u, size_t n) {
    size_t col = vis_width(prefix, strlen(prefix));
    fputs(prefix, o);
    int at_start = 1;
    for (size_t k = 0; k < n; k++) {
        int glue = u[k].s[0] == ',';
        for (const char *s = u[k].s; *s;) {
            if (!u[k].whole && *s == ' ') {
                s++;
                continue;
            }
            size_t len = u[k].whole ? strlen(s) : strcspn(s, " ");
            size_t w = text_width(s, len);
            if (!glue && col + (at_start ? 0 : 1) + w > WIDTH && col > (size_t)indent) {
                fprintf(o, "\n%*s", indent, "");
                col = (size_t)indent, at_start = 1;
            }
            if (!at_start && !glue) fputc(' ', o), col++;
            if (u[k].colour) fputs(c_on(p, u[k].colour), o);
            put_text(o, s, len);
            if (u[k].colour) fputs(c_on(p, RESET), o);
            col += w, at_start = 0, glue = 0, s += len;
        }
    }
    fputc('\n', o);
}

/* What the text shows of field f: its show() words, else its value when a string. */
static const char *shown(const probe_field *f, const probe_lib *l, size_t item, char *buf, size_t n) {
    if (f->show) return f->show(l, item, buf, n);
    probe_value v = f->get(l, item, buf, n);
    return v.type == PV_STR && v.s ? v.s : "";
}

#define MAX_FIELDS 24

/* A library (depth 0) or one of its items (depth 1: a candidate), by the fields' text slots:
 * the head line (the library's name, or the item's mark, then the HEAD fields), then a
 * paragraph for each LINE field (with the CONT fields after it), and the ITEMS blocks. */
static void text_fields(FILE *o, const probe *p, const probe_lib *l, const probe_field *fields, size_t item, int depth) {
    char buf[MAX_FIELDS][1024], prefix[64];
    unit head[MAX_FIELDS], para[MAX_FIELDS];
    size_t nh = 0, np = 0;
    const char *mark = "", *colour = l->info.status == CUDALOAD_OK ? GREEN : RED;
    int indent = depth ? 14 : 12;
    for (size_t i = 0; fields[i].key && i < MAX_FIELDS; i++) {
        const probe_field *f = &fields[i];
        if (f->text != PROBE_TEXT_HEAD && f->text != PROBE_TEXT_MARK) continue;
        const char *s = shown(f, l, item, buf[i], sizeof buf[i]);
        if (f->text == PROBE_TEXT_MARK) mark = s;
        else if (*s) head[nh++] = (unit){s, f->whole, f->colour ? colour : NULL};
    }
    if (depth) snprintf(prefix, sizeof prefix, "%12s%s ", "", mark);
    else snprintf(prefix, sizeof prefix, "  %-9s ", l->info.name ? l->info.name : "?");
    put_units(o, p, prefix, indent, head, nh);
    snprintf(prefix, sizeof prefix, "%*s", indent, "");
    for (size_t i = 0; fields[i].key && i < MAX_FIELDS; i++) {
        const probe_field *f = &fields[i];
        if ((f->text == PROBE_TEXT_LINE || f->text == PROBE_TEXT_ITEMS) && np) put_units(o, p, prefix, indent, para, np), np = 0;
        if (f->text == PROBE_TEXT_LINE || f->text == PROBE_TEXT_CONT) {
            const char *s = shown(f, l, item, buf[i], sizeof buf[i]);
            if (*s) para[np++] = (unit){s, f->whole, NULL};
        } else if (f->text == PROBE_TEXT_ITEMS && *shown(f, l, item, buf[i], sizeof buf[i])) {
            probe_value v = f->get(l, item, buf[i], sizeof buf[i]);
            for (long long k = 0; v.type == PV_ITEMS && k < v.i; k++) text_fields(o, p, l, f->items, (size_t)k, depth + 1);
        }
    }
    if (np) put_units(o, p, prefix, indent, para, np);
}

static void text_build(FILE *o, const probe *p) {
    const cudaload_library_info *rt = LIB(p, CUDALOAD_LIB_CUDART), *bl = LIB(p, CUDALOAD_LIB_CUBLAS);
    int have_bl = bl->status == CUDALOAD_OK && bl->soname;
    char *items[4];
    int n = 0;
    heading(o, p, "Build against what was found");
    for (int i = 0; i < 2; i++)
        if (p->include_dirs[i][0] && asprintf(&items[n], "-I%s", p->include_dirs[i]) >= 0) n++;
    if (n) flag_block(o, "compile", items, n);
    else
        wrap(o, "  compile  ", 11, "(no cuda_runtime_api.h beside these libraries: the headers come with the toolkit, "
                                "or with the wheels: nvidia/cu13/include, nvidia/cuda_runtime/include)");
    while (n) free(items[--n]);
    /* each -L and -l: its own item, so that a long directory never drags a flag past 80 columns */
    if (asprintf(&items[n], "-L%s", p->lib_dirs[0]) >= 0) n++;
    if (asprintf(&items[n], "-l:%s", rt->soname) >= 0) n++;
    if (have_bl && p->lib_dirs[1][0] && asprintf(&items[n], "-L%s", p->lib_dirs[1]) >= 0) n++;
    if (have_bl && asprintf(&items[n], "-l:%s", bl->soname) >= 0) n++;
    flag_block(o, "link", items, n);
    while (n) free(items[--n]);
    if (asprintf(&items[n], "-Wl,--disable-new-dtags") >= 0) n++;
    for (int i = 0; i < 2; i++)
        if (p->lib_dirs[i][0] && asprintf(&items[n], "-Wl,-rpath,%s", p->lib_dirs[i]) >= 0) n++;
    flag_block(o, "run", items, n);
    while (n) free(items[--n]);
    wrap(o, "           ", 11, "(an RPATH, not a RUNPATH: LD_LIBRARY_PATH cannot override it)");
    if (p->origin_rel[0][0]) {
        for (int i = 0; i < 2; i++)
            if (p->origin_rel[i][0] && asprintf(&items[n], "-Wl,-rpath,'$ORIGIN/../%s'", p->origin_rel[i]) >= 0) n++;
        wrap(o, "  ", 4, "or, relocatable, for a module in site-packages/<package>/ of a wheel:");
        flag_block(o, "", items, n);
        while (n) free(items[--n]);
    }
    wrap_marked(o, "  ", 4, "or link no CUDA at all: embed libcudaload, `pkg-config --cflags --libs cudaload`", 1);
}

static void text_report(FILE *o, const probe *p, int code) {
    char buf[1024];
    fprintf(o, "%slibcudaload %s%s: %s%s\n", c_on(p, BOLD), cudaload_version_string(),
           p->find_only ? " (find-only: nothing loaded)" : "", p->python ? "python -m cudaload" : "cudaload-probe", c_on(p, RESET));

    heading(o, p, "Search roots, in order");
    if (!p->n_roots) fprintf(o, "  (none)\n");
    for (size_t i = 0; i < p->n_roots; i++) {
        const char *path = tx(p->roots[i].path), *missing = p->roots[i].exists ? "" : "  (missing)";
        for (int k = 0; k < p->n_root_warnings; k++) /* a caller root's own state (a warning below) */
            if (p->root_warnings[k].root == i)
                missing = p->root_warnings[k].code == ROOT_WARN_NOT_A_DIRECTORY ? "  (not a directory)"
                          : p->root_warnings[k].code == ROOT_WARN_UNREADABLE    ? "  (cannot be examined)"
                                                                                : "  (missing)";
        /* a path too long for the line gets a line of its own, nothing after it */
        if (17 + vis_width(path, strlen(path)) + strlen(missing) <= WIDTH)
            fprintf(o, "  %2zu  %-9s  %s%s\n", i + 1, cudaload_source_name(p->roots[i].source), path, missing);
        else
            fprintf(o, "  %2zu  %s%s\n      %s\n", i + 1, cudaload_source_name(p->roots[i].source), missing, path);
    }
    if (p->system_search) fprintf(o, "      then the system search (dlopen by SONAME)\n");
    else fprintf(o, "      (the system search is scoped out by CUDALOAD_SOURCES)\n");

    heading(o, p, "Libraries");
    for (size_t i = 0; i < p->n_libs; i++) text_fields(o, p, &p->lib[i], probe_lib_fields, 0, 0);
    if (!nvrtc_reported(p)) {
        fprintf(o, "  %-9s %s\n", "nvrtc", p->nvrtc[0] ? "found (optional; not loaded)" : "not found (optional)");
        if (p->nvrtc[0]) fprintf(o, "            %s\n", tx(p->nvrtc));
    }

    heading(o, p, "Devices");
    if (p->dev_status == CUDALOAD_ERROR_NOT_ATTEMPTED) fprintf(o, "  not queried (find-only)\n");
    else if (p->dev_status != CUDALOAD_OK) wrap(o, "  none: ", 4, cudaload_status_string(p->dev_status));
    for (int i = 0; i < p->ndev && i < MAX_DEVICES; i++) {
        const device *d = &p->dev[i];
        fprintf(o, "  %d  %s  sm_%d%d  %.1f GiB%s%s\n", i, tx(d->name), d->cc_major, d->cc_minor,
                (double)d->memory / (1 << 30), d->pci_bus_id[0] ? "  PCI " : "", tx(d->pci_bus_id));
        if (d->runnable == CUDALOAD_OK && d->has_sass)
            snprintf(buf, sizeof buf, "bundled kernels: SASS for sm_%d%d", d->cc_major, d->cc_minor);
        else if (d->runnable == CUDALOAD_OK)
            snprintf(buf, sizeof buf, "bundled kernels: PTX compute_%d, JIT-compiled by the driver at first use",
                     p->kinfo.ptx_arch);
        else
            snprintf(buf, sizeof buf, "bundled kernels: %scannot run here (%s); SAXPY/SGEMM use cuBLAS.\n%s",
                     d->has_sass ? "SASS present, but " : d->would_jit ? "PTX present, but " : "",
                     cudaload_status_name(d->runnable), d->why);
        wrap(o, "     ", 5, buf);
    }

    heading(o, p, "Bundled kernels");
    if (p->kinfo.built) {
        char archs[256] = "";
        size_t an = 0;
        for (const char *a = p->kinfo.sass_archs; a && *a && an + 4 < sizeof archs; a++)
            an += (size_t)snprintf(archs + an, sizeof archs - an, *a == ',' ? ", " : "%c", *a);
        char where[160] = "embedded";
        if (p->kinfo.image_file) snprintf(where, sizeof where, "in %s beside the library", p->kinfo.image_file);
        snprintf(buf, sizeof buf, "built by CUDA %d.%d, %zu KiB %s: SASS for sm_%s; PTX compute_%d",
                 p->kinfo.toolkit_version / 1000, p->kinfo.toolkit_version % 1000 / 10, p->kinfo.fatbin_bytes / 1024,
                 where, archs, p->kinfo.ptx_arch);
        wrap(o, "  ", 4, buf);
    } else {
        wrap(o, "  ", 4, "not built (libcudaload was built without nvcc): SAXPY/SGEMM use cuBLAS");
    }

    heading(o, p, "Environment");
    int any = 0;
    for (int i = 0; i < p->n_env; i++) {
        const char *v = getenv(p->env[i]);
        if (v) fprintf(o, "  %s=%s\n", p->env[i], tx(v)), any = 1;
    }
    if (!any) fprintf(o, "  (no variable that steers the search is set)\n");

    if (LIB(p, CUDALOAD_LIB_CUDART)->status == CUDALOAD_OK && p->lib_dirs[0][0]) text_build(o, p);

    if (p->selftest_attempted) {
        heading(o, p, "Self-test");
        for (int i = 0; i < probe_selftest_count(p); i++) {
            const char *name;
            int dev;
            const test_result *t = probe_selftest_at(p, i, &name, &dev);
            if (!t->ran) continue;
            int sgemm = strncmp(name, "SGEMM", 5) == 0;
            const char *label = sgemm ? "SGEMM 1024^3" : "SAXPY n=2^24";
            if (p->ndev > 1 && i % 2 == 0) fprintf(o, "  device %d%s\n", dev, i >= 2 * p->ndev ? ", cuBLAS" : "");
            const char *indent = p->ndev > 1 ? "    " : "  ";
            if (t->error[0]) {
                char prefix[64];
                snprintf(prefix, sizeof prefix, "%s%-13s %sFAIL%s  ", indent, label, c_on(p, RED), c_on(p, RESET));
                wrap(o, prefix, 22, t->error);
                continue;
            }
            fprintf(o, "%s%-13s %s%s%s  max rel err %.2g  %.3f ms  %.0f %s  (%s)\n", indent, label,
                    c_on(p, t->pass ? GREEN : RED), t->pass ? "pass" : "FAIL", c_on(p, RESET), t->max_rel_err, t->ms,
                    t->rate, sgemm ? "TFLOP/s" : "GB/s", t->backend);
        }
    } else if (p->selftest_skipped) {
        heading(o, p, "Self-test");
        wrap(o, "  not run: ", 11, p->selftest_skipped);
    }
    if (p->n_warnings) heading(o, p, "Warnings");
    for (int i = 0; i < p->n_warnings; i++) {
        char prefix[32];
        snprintf(prefix, sizeof prefix, "  %s!%s ", c_on(p, YELLOW), c_on(p, RESET));
        wrap_marked(o, prefix, 4, p->warnings[i], 1);
    }

    static const char *const what[] = {"ok", "a required library is missing or unusable",
                                       "libraries found, but no driver or no device", "the self-test failed",
                                       "an invalid CUDALOAD_* value or option: nothing was searched"};
    fprintf(o, "\n%sResult%s: %s%s%s (exit %d)\n", c_on(p, BOLD), c_on(p, RESET), c_on(p, code ? RED : GREEN), what[code],
           c_on(p, RESET), code);
    for (int i = 0; i < p->n_problems; i++) wrap(o, "  ", 4, p->problems[i]);
    for (int i = 0; i < p->n_fixes; i++) wrap_marked(o, "  fix: ", 7, p->fixes[i], 1);
}

/* ---- JSON output ---- */

static void json_test(pj_writer *w, const test_result *t) {
    pj_begin_object(w);
    pj_key(w, "pass"), pj_bool(w, t->pass && !t->error[0]);
    pj_key(w, "backend"), pj_string(w, t->backend);
    pj_key(w, "max_rel_err"), t->error[0] ? pj_null(w) : pj_double(w, t->max_rel_err);
    pj_key(w, "ms"), t->error[0] ? pj_null(w) : pj_double(w, t->ms);
    pj_key(w, "error"), pj_string(w, t->error[0] ? t->error : NULL);
    pj_end_object(w);
}

/* A device's self-test results, as the members of an object. */
static void json_selftest_fields(pj_writer *w, const device *d) {
    pj_key(w, "saxpy"), json_test(w, &d->saxpy);
    pj_key(w, "saxpy_gbps"), d->saxpy.error[0] ? pj_null(w) : pj_double(w, d->saxpy.rate);
    pj_key(w, "sgemm"), json_test(w, &d->sgemm);
    pj_key(w, "sgemm_tflops"), d->sgemm.error[0] ? pj_null(w) : pj_double(w, d->sgemm.rate);
}

static void json_selftest(pj_writer *w, const device *d) {
    pj_begin_object(w);
    json_selftest_fields(w, d);
    pj_end_object(w);
}

/* Space-separated words as an array of strings; NULL as null. */
static void json_words(pj_writer *w, const char *s) {
    if (!s) {
        pj_null(w);
        return;
    }
    pj_begin_array(w);
    while (*s) {
        size_t len = strcspn(s, " ");
        char word[512];
        snprintf(word, sizeof word, "%.*s", (int)len, s);
        if (len) pj_string(w, word);
        s += len;
        if (*s) s++;
    }
    pj_end_array(w);
}

/* A library (or one of its items) as a JSON object, from its fields (probe_fields.c). */
static void json_fields(pj_writer *w, const probe_field *fields, const probe_lib *l, size_t item) {
    pj_begin_object(w);
    for (const probe_field *f = fields; f->key; f++) {
        char buf[4096];
        probe_value v = f->get(l, item, buf, sizeof buf);
        pj_key(w, f->key);
        switch (v.type) {
        case PV_NULL: pj_null(w); break;
        case PV_STR: pj_string(w, v.s); break;
        case PV_INT: pj_int(w, v.i); break;
        case PV_BOOL: pj_bool(w, (int)v.i); break;
        case PV_WORDS: json_words(w, v.s); break;
        case PV_ITEMS:
            pj_begin_array(w);
            for (long long k = 0; k < v.i; k++) json_fields(w, f->items, l, (size_t)k);
            pj_end_array(w);
            break;
        }
    }
    pj_end_object(w);
}

static void json_report(FILE *out, const probe *p, int code) {
    pj_writer w = {.out = out};
    pj_begin_object(&w);
    pj_key(&w, "schema_version"), pj_int(&w, SCHEMA_VERSION);
    pj_key(&w, "cudaload_version"), pj_string(&w, cudaload_version_string());
    pj_key(&w, "exit_code"), pj_int(&w, code);
    pj_key(&w, "find_only"), pj_bool(&w, p->find_only);
    pj_key(&w, "init_status"), pj_string(&w, cudaload_status_name(p->init_status));
    pj_key(&w, "system_search"), pj_bool(&w, p->system_search);
    pj_key(&w, "roots"), pj_begin_array(&w);
    for (size_t i = 0; i < p->n_roots; i++) {
        pj_begin_object(&w);
        pj_key(&w, "path"), pj_string(&w, p->roots[i].path);
        pj_key(&w, "source"), pj_string(&w, cudaload_source_name(p->roots[i].source));
        pj_key(&w, "exists"), pj_bool(&w, p->roots[i].exists);
        pj_end_object(&w);
    }
    pj_end_array(&w);
    pj_key(&w, "libraries"), pj_begin_object(&w);
    for (size_t i = 0; i < p->n_libs; i++) {
        pj_key(&w, LIB(p, i)->name);
        json_fields(&w, probe_lib_fields, &p->lib[i], 0);
    }
    if (!nvrtc_reported(p)) { /* NVRTC beside the runtime, when --lib did not ask for it */
        pj_key(&w, "nvrtc"), pj_begin_object(&w);
        pj_key(&w, "status"), pj_string(&w, p->nvrtc[0] ? "found" : "not_found");
        pj_key(&w, "path"), pj_string(&w, p->nvrtc[0] ? p->nvrtc : NULL);
        pj_end_object(&w);
    }
    pj_end_object(&w);
    const cudaload_library_info *drv = LIB(p, CUDALOAD_LIB_DRIVER);
    pj_key(&w, "driver"), pj_begin_object(&w);
    pj_key(&w, "cuda_version"), drv->version > 0 ? pj_int(&w, drv->version) : pj_null(&w);
    pj_key(&w, "branch"), pj_string(&w, drv->driver_branch);
    pj_end_object(&w);
    pj_key(&w, "devices"), pj_begin_array(&w);
    for (int i = 0; i < p->ndev && i < MAX_DEVICES; i++) {
        const device *d = &p->dev[i];
        pj_begin_object(&w);
        pj_key(&w, "index"), pj_int(&w, i);
        pj_key(&w, "name"), pj_string(&w, d->name);
        pj_key(&w, "compute_capability"), pj_begin_array(&w), pj_int(&w, d->cc_major), pj_int(&w, d->cc_minor), pj_end_array(&w);
        pj_key(&w, "memory_bytes"), pj_int(&w, (long long)d->memory);
        pj_key(&w, "kernels"), pj_string(&w, d->runnable != CUDALOAD_OK ? "none" : d->has_sass ? "sass" : "ptx_jit");
        pj_key(&w, "has_sass"), pj_bool(&w, d->has_sass);
        pj_key(&w, "would_jit"), pj_bool(&w, d->would_jit);
        pj_key(&w, "kernels_status"), pj_string(&w, cudaload_status_name(d->runnable));
        pj_key(&w, "kernels_reason"), pj_string(&w, d->runnable == CUDALOAD_OK ? NULL : d->why);
        pj_key(&w, "pci_bus_id"), pj_string(&w, d->pci_bus_id[0] ? d->pci_bus_id : NULL);
        pj_key(&w, "selftest");
        if (!d->saxpy.ran) pj_null(&w);
        else json_selftest(&w, d);
        pj_end_object(&w);
    }
    pj_end_array(&w);
    pj_key(&w, "devices_status"), pj_string(&w, cudaload_status_name(p->dev_status));
    pj_key(&w, "kernels"), pj_begin_object(&w);
    pj_key(&w, "built"), pj_bool(&w, p->kinfo.built);
    pj_key(&w, "toolkit_version"), p->kinfo.built ? pj_int(&w, p->kinfo.toolkit_version) : pj_null(&w);
    pj_key(&w, "sass"), pj_begin_array(&w);
    for (const char *s = p->kinfo.sass_archs; s && *s;) {
        pj_int(&w, atoi(s));
        const char *comma = strchr(s, ',');
        s = comma ? comma + 1 : "";
    }
    pj_end_array(&w);
    pj_key(&w, "ptx"), p->kinfo.ptx_arch ? pj_int(&w, p->kinfo.ptx_arch) : pj_null(&w);
    pj_key(&w, "fatbin_bytes"), pj_int(&w, (long long)p->kinfo.fatbin_bytes);
    pj_key(&w, "image_file"), pj_string(&w, p->kinfo.image_file);
    pj_end_object(&w);
    pj_key(&w, "environment"), pj_begin_object(&w);
    for (int i = 0; i < p->n_env; i++) pj_key(&w, p->env[i]), pj_string(&w, getenv(p->env[i]));
    pj_end_object(&w);
    pj_key(&w, "build"), pj_begin_object(&w);
    pj_key(&w, "include_dirs"), pj_begin_array(&w);
    for (int i = 0; i < 2; i++)
        if (p->include_dirs[i][0]) pj_string(&w, p->include_dirs[i]);
    pj_end_array(&w);
    pj_key(&w, "link_flags"), pj_string(&w, p->link_flags[0] ? p->link_flags : NULL);
    pj_key(&w, "lib_dirs"), pj_begin_array(&w);
    for (int i = 0; i < 2; i++)
        if (p->lib_dirs[i][0]) pj_string(&w, p->lib_dirs[i]);
    pj_end_array(&w);
    pj_key(&w, "origin_rpath"), pj_begin_array(&w);
    for (int i = 0; i < 2; i++)
        if (p->origin_rel[i][0]) {
            char o[PATH_MAX + 32];
            snprintf(o, sizeof o, "$ORIGIN/../%s", p->origin_rel[i]);
            pj_string(&w, o);
        }
    pj_end_array(&w);
    pj_end_object(&w);
    pj_key(&w, "selftest");
    if (!p->selftest_attempted) {
        pj_null(&w);
    } else {
        /* device 0's, and its cuBLAS pass; every device's is in "devices" */
        pj_begin_object(&w);
        json_selftest_fields(&w, &p->dev[0]);
        /* the cuBLAS pass, when it ran (the first pass was the bundled kernels), else null */
        pj_key(&w, "cublas");
        if (!p->saxpy_cublas.ran) {
            pj_null(&w);
        } else {
            pj_begin_object(&w);
            pj_key(&w, "saxpy"), json_test(&w, &p->saxpy_cublas);
            pj_key(&w, "sgemm"), json_test(&w, &p->sgemm_cublas);
            pj_end_object(&w);
        }
        pj_end_object(&w);
    }
    pj_key(&w, "warnings"), pj_begin_array(&w);
    for (int i = 0; i < p->n_warnings; i++) pj_string(&w, p->warnings[i]);
    pj_end_array(&w);
    /* the caller roots the search could not use, as data (each is also one of "warnings") */
    pj_key(&w, "root_warnings"), pj_begin_array(&w);
    for (int i = 0; i < p->n_root_warnings; i++) {
        const root_warning *rw = &p->root_warnings[i];
        pj_begin_object(&w);
        pj_key(&w, "code"), pj_string(&w, probe_root_warning_name(rw->code));
        pj_key(&w, "path"), pj_string(&w, p->roots[rw->root].path);
        pj_key(&w, "source"), pj_string(&w, cudaload_source_name(p->roots[rw->root].source));
        pj_key(&w, "errno"), rw->code == ROOT_WARN_UNREADABLE ? pj_int(&w, rw->err) : pj_null(&w);
        pj_end_object(&w);
    }
    pj_end_array(&w);
    pj_key(&w, "problems"), pj_begin_array(&w);
    for (int i = 0; i < p->n_problems; i++) pj_string(&w, p->problems[i]);
    pj_end_array(&w);
    pj_key(&w, "fixes"), pj_begin_array(&w);
    for (int i = 0; i < p->n_fixes; i++) pj_string(&w, p->fixes[i]);
    pj_end_array(&w);
    pj_key(&w, "message"), pj_string(&w, p->init_error[0] ? p->init_error : NULL);
    /* the libraries' fixes as data: the advisor's, merged (one pip command per CUDA major) */
    pj_key(&w, "fix_plan"), pj_begin_array(&w);
    for (size_t i = 0; i < p->n_plan; i++) {
        const plan_item *it = &p->plan[i];
        pj_begin_object(&w);
        pj_key(&w, "kind"), pj_string(&w, probe_fix_kind_name(it->kind));
        pj_key(&w, "major"), it->major > 0 ? pj_int(&w, it->major) : pj_null(&w);
        pj_key(&w, "branch"), it->branch > 0 ? pj_int(&w, it->branch) : pj_null(&w);
        pj_key(&w, "requirements"), json_words(&w, it->kind == CUDALOAD_FIX_PIP_INSTALL ? it->reqs : NULL);
        pj_key(&w, "setting"), pj_string(&w, it->setting);
        pj_key(&w, "libraries"), json_words(&w, it->libs);
        pj_key(&w, "driver_runs"), it->kind != CUDALOAD_FIX_PIP_INSTALL || it->runs < 0 ? pj_null(&w) : pj_bool(&w, it->runs);
        pj_end_object(&w);
    }
    pj_end_array(&w);
    pj_end_object(&w);
}

void probe_render_text(FILE *o, const probe *p) { text_report(o, p, p->code); }

void probe_render_json(FILE *o, const probe *p) { json_report(o, p, p->code); }
