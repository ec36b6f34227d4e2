/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cudaload-probe -- tell a user exactly which CUDA libraries libcudaload searched, found,
 * took or skipped and why, whether the driver and the GPU really run, and how to build
 * against what was found. Text (default) or JSON (--json, schema in docs/probe.md).
 * The report itself (gathering, diagnosis, self-test, both writers) is tools/probe_report.c,
 * which the Python package's extension compiles too.
 *
 * Exit codes (docs/probe.md):
 *   0  driver, cudart and cuBLAS usable and, with a GPU, the self-test passed
 *   1  a required library (cudart, cublasLt or cuBLAS) was not found or cannot be used
 *   2  the libraries are there, but there is no driver or no device
 *   3  the self-test failed
 *   4  usage error (an unknown flag, a relative path, an empty or missing NAME)
 * A --root that does not exist or is not a directory is a warning, not an error: the exit code
 * stays the search's (the report's Warnings, JSON "root_warnings").
 */
#define _GNU_SOURCE
#include "cudaload.h"
#include "probe_report.h"
#include "probe_platform.h"
#include "probe_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f) {
    fprintf(f,
            "usage: cudaload-probe [--json] [--root DIR]... [--find-only] [--no-selftest]\n"
            "                      [--lib NAME[,NAME...]]... [--all] [--load]\n"
            "                      [--quiet] [--help] [--version]\n"
            "       cudaload-probe --cflags NAME... | --libs NAME... | --catalogue\n"
            "       cudaload-probe [--json] [--root DIR]... --parts [NAME[,NAME...]]\n"
            "       cudaload-probe [--json] [--root DIR]... --cuda-root [DIR]\n"
            "  --json          machine-readable report (schema: docs/probe.md)\n"
            "  --root DIR      search DIR first (a site-packages or library dir), like the\n"
            "                  roots the Python package passes; repeatable. A DIR that does\n"
            "                  not exist or is not a directory draws a warning; the exit\n"
            "                  code is still the search's\n"
            "  --find-only     locate the libraries without loading any of them\n"
            "  --no-selftest   skip the SAXPY/SGEMM self-test on the GPU\n"
            "  --quiet         print nothing, usage errors included; the exit code tells\n"
            "  --lib NAMES     report these catalogue libraries too (cufft,cusolver,...),\n"
            "                  located with their dependencies, not loaded unless --load\n"
            "  --all           report every catalogue library (the same, for all of them)\n"
            "  --load          load the --lib/--all libraries instead of only locating them\n"
            "  --cflags NAMES  print -I flags for the libraries' header directories\n"
            "  --libs NAMES    print -L/-l: flags for the libraries found (their SONAMEs)\n"
            "  --catalogue     print the catalogue: one line per library (name, SONAMEs,\n"
            "                  wheel dirs, pip packages, dependencies), tab-separated\n"            "  --parts [NAMES] the toolkit's programs, static archives and bitcode (nvcc,\n"
            "                  cudadevrt, libdevice, ...): where each was found, or every\n"
            "                  candidate and the pip package; exit 1 when a named one\n"
            "                  is missing\n"
            "  --cuda-root [DIR] print a CUDA toolkit root for nvcc, CMake and Makefiles\n"
            "                  (CUDA_HOME, CUDAToolkit_ROOT): a toolkit prefix as it is,\n"
            "                  or for pip wheels a tree of links made in DIR (default: a\n"
            "                  cache dir)\n"
            "Exit: 0 ok, 1 library missing, 2 no driver or no device, 3 self-test failed,\n"
            "4 usage error (an unknown flag, a relative path, an empty or missing NAME).\n"
            "The loader's environment applies (docs/search-order.md):\n"
            "CUDALOAD_PATH, CUDALOAD_<NAME>_PATH (CUDALOAD_CUFFT_PATH, ...; the driver's is\n"
            "CUDALOAD_DRIVER_PATH),\n"
            "CUDALOAD_CUDA_MAJOR, CUDALOAD_SOURCES, CUDALOAD_DEBUG.\n"
            "Colour only on a terminal, and never with NO_COLOR set.\n");
}

static const char **roots; /* the --root arguments, freed at exit */
static cudaload_lib *libs;  /* the --lib/--all/--cflags/--libs libraries */
static void free_roots(void) {
    free(roots);
    free(libs);
}

/* How an error that ends the probe before its report (a usage error, out of memory) is told:
 * nothing with --quiet; else its message on stderr and, with --json, also a JSON error object on stdout, so that a script parsing the output reads why:
 *   {"error": {"status": "CUDALOAD_ERROR_INVALID_OPTION", "reason_code": null, "message": "...", "exit_code": 4}}
 * status is libcudaload's status name when libcudaload refused the setting, else null (an
 * argument of the probe's own, whose reason_code names what is wrong with it: EMPTY_NAME, ...);
 * exit_code is 4 for a usage error, 1 out of memory. Both flags are read before the other
 * arguments. */
static int quiet, json;

/* Reports an error that ends the probe before its report (status: libcudaload's status, or
 * CUDALOAD_OK for the probe's own arguments, then reason: the reason code) and returns code, its
 * exit code. */
static int error_exit(cudaload_status status, const char *reason, const char *message, int code) {
    if (quiet) return code;
    fprintf(stderr, "cudaload-probe: %s\n", message);
    if (json) {
        pj_writer w = {.out = stdout};
        pj_begin_object(&w);
        pj_key(&w, "error"), pj_begin_object(&w);
        pj_key(&w, "status"), pj_string(&w, status != CUDALOAD_OK ? cudaload_status_name(status) : NULL);
        pj_key(&w, "reason_code"), pj_string(&w, reason);
        pj_key(&w, "message"), pj_string(&w, message);
        pj_key(&w, "exit_code"), pj_int(&w, code);
        pj_end_object(&w);
        pj_end_object(&w); /* ends the line */
    }
    return code;
}
/* A setting or name libcudaload refused (its status and message). */
static int usage_error(cudaload_status status, const char *message) { return error_exit(status, NULL, message, PROBE_EXIT_USAGE); }
/* The probe's own arguments: the reason code, and the message that words it with its parameters. */
static int arg_error(const char *reason, const char *message) { return error_exit(CUDALOAD_OK, reason, message, PROBE_EXIT_USAGE); }
/* Out of memory before the report could be made: as a library that cannot be had (exit 1). */
static int out_of_memory(void) { return error_exit(CUDALOAD_ERROR_OUT_OF_MEMORY, NULL, "out of memory", PROBE_EXIT_LIB_MISSING); }

/* The modes that make no report (--cflags, --libs, --parts, --cuda-root) print its warnings about
 * the --root directories the search could not use on stderr: their stdout is for scripts. */
static void warn_roots(void) {
    if (quiet) return;
    char *lines[32];
    size_t n = probe_root_warning_lines(NULL, lines, sizeof lines / sizeof lines[0]);
    for (size_t i = 0; i < n; i++) {
        fprintf(stderr, "cudaload-probe: warning: %s\n", lines[i]);
        free(lines[i]);
    }
}

/* Whether a comma-separated list of names holds an empty one ("", ",", "cufft,", "a,,b"): a
 * usage error, rather than a list that quietly names less than the user typed. */
static int has_empty_name(const char *list) {
    if (!list[0]) return 1;
    for (const char *s = list;; s++) {
        size_t len = strcspn(s, ",");
        if (len == 0) return 1;
        s += len;
        if (!*s) return 0;
    }
}

/* The usage error of a list of names with an empty one, flag being the option it followed. */
static int empty_name_error(const char *flag, const char *list, const char *lists) {
    char msg[600];
    snprintf(msg, sizeof msg, "%s '%.400s': an empty name; give NAME[,NAME...] (%s lists them)", flag, list, lists);
    return arg_error("EMPTY_NAME", msg);
}

/* Adds the comma-separated names to libs; 0 on an empty or unknown name (reported). */
static int add_names(const char *flag, const char *list, size_t *n) {
    if (has_empty_name(list)) return empty_name_error(flag, list, "--catalogue"), 0;
    char *copy = strdup(list), *save = NULL;
    int ok = copy != NULL;
    for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t && ok; t = strtok_r(NULL, ",", &save)) {
        cudaload_lib lib;
        cudaload_status st = cudaload_lib_by_name(t, &lib);
        if (st != CUDALOAD_OK) {
            usage_error(st, cudaload_last_error());
            ok = 0;
        } else {
            libs[(*n)++] = lib;
        }
    }
    free(copy);
    return ok;
}

/* --catalogue: the rows, one per line. */
static void print_catalogue(void) {
    printf("name\tmajors\tsonames\twheel_dirs\tpip_packages\tdeps\toptional_deps\theader\tvariable\tapi_headers\tapi_older_headers\tapi_per_thread\tapi_older_abis\tpip_cuda_version\n");
    for (size_t i = 0; i < cudaload_library_count(); i++) {
        cudaload_catalogue_info c = {.size = sizeof c};
        if (cudaload_catalogue_entry((cudaload_lib)i, &c) != CUDALOAD_OK) continue;
        printf("%s\t", c.name);
        for (int k = 0; k < c.n_majors; k++) printf("%s%d", k ? "," : "", c.majors[k]);
        printf("%s\t", c.n_majors ? "" : "system");
        for (int k = 0; k < (c.n_majors ? c.n_majors : 1); k++) printf("%s%s", k ? "," : "", c.sonames[k]);
        printf("\t");
        for (int k = 0; k < c.n_majors; k++) printf("%s%s", k ? "," : "", c.wheel_dirs[k]);
        printf("\t");
        for (int k = 0; k < c.n_majors; k++) printf("%s%s", k ? "," : "", c.pip_packages[k]);
        printf("\t%s\t%s\t%s\t%s", c.deps, c.optional_deps, c.header ? c.header : "", c.env_name);
        printf("\t%s\t%s\t%d\t%d\t%d\n", c.api_headers ? c.api_headers : "", c.api_older_headers ? c.api_older_headers : "",
               c.api_per_thread, c.api_older_abis, c.pip_cuda_version);
    }
}

/* --cflags / --libs: locate each library (nothing loaded) and print its build flags. */
static int print_flags(int cflags, size_t n, const char **roots_in, size_t n_roots_in) {
    cudaload_options o;
    cudaload_options_init(&o);
    o.roots = roots_in;
    o.n_roots = n_roots_in;
    o.flags = CUDALOAD_FLAG_FIND_ONLY | CUDALOAD_FLAG_DRIVER_OPTIONAL;
    cudaload_status st = cudaload_init(&o);
    if (st == CUDALOAD_ERROR_INVALID_OPTION || st == CUDALOAD_ERROR_INVALID_ARGUMENT) return usage_error(st, cudaload_last_error());
    warn_roots();
    int code = PROBE_EXIT_OK;
    const char *sep = "";
    for (size_t i = 0; i < n; i++) {
        cudaload_library_info info = {.size = sizeof info};
        if (cflags) {
            const char *inc = cudaload_include_dir(libs[i]);
            if (!inc) {
                if (!quiet) fprintf(stderr, "cudaload-probe: %s\n", cudaload_last_error());
                code = PROBE_EXIT_LIB_MISSING;
                continue;
            }
            printf("%s-I%s", sep, inc);
        } else {
            if (cudaload_find_library(libs[i]) != CUDALOAD_OK || cudaload_get_library_info(libs[i], &info) != CUDALOAD_OK ||
                !info.path) {
                if (!quiet) fprintf(stderr, "cudaload-probe: %s\n", cudaload_last_error());
                code = PROBE_EXIT_LIB_MISSING;
                continue;
            }
            char dir[4096];
            snprintf(dir, sizeof dir, "%s", info.path);
            char *slash = strrchr(dir, '/');
            if (slash) *slash = 0;
            const char *base = strrchr(info.path, '/');
            printf("%s-L%s -l:%s", sep, dir, info.soname ? info.soname : base ? base + 1 : info.path);
        }
        sep = " ";
    }
    printf("\n");
    return code;
}

/* Init for the build-time modes (--parts, --cuda-root): find-only, no driver needed. */
static cudaload_status init_find_only(const char **roots_in, size_t n_roots_in) {
    cudaload_options o;
    cudaload_options_init(&o);
    o.roots = roots_in;
    o.n_roots = n_roots_in;
    o.flags = CUDALOAD_FLAG_FIND_ONLY | CUDALOAD_FLAG_DRIVER_OPTIONAL;
    return cudaload_init(&o);
}

/* "candidates": [{path, source, result, reason_code, reason}], as the report writes a library's. */
static void json_candidates(pj_writer *w, size_t n, const cudaload_candidate *c, const cudaload_candidate_detail *d) {
    pj_key(w, "candidates"), pj_begin_array(w);
    for (size_t i = 0; i < n; i++) {
        pj_begin_object(w);
        pj_key(w, "path"), pj_string(w, c[i].path);
        pj_key(w, "source"), pj_string(w, cudaload_source_name(c[i].source));
        pj_key(w, "result"), pj_string(w, cudaload_status_name(c[i].result));
        pj_key(w, "reason_code"), pj_string(w, cudaload_reason_name(d[i].reason));
        pj_key(w, "reason"), pj_string(w, c[i].reason);
        pj_end_object(w);
    }
    pj_end_array(w);
}

static const char *part_kind_name(cudaload_part_kind k) {
    return k == CUDALOAD_PART_BINARY ? "binary" : k == CUDALOAD_PART_STATIC ? "static" : k == CUDALOAD_PART_BITCODE ? "bitcode" : "?";
}

/* --parts: every part (or the names asked), searched; text or JSON. Exit 1 when a part asked
 * by name is missing (every part listed: 0, a report). */
static int print_parts(const char *names, const char **roots_in, size_t n_roots_in) {
    cudaload_status st = init_find_only(roots_in, n_roots_in);
    if (st == CUDALOAD_ERROR_INVALID_OPTION || st == CUDALOAD_ERROR_INVALID_ARGUMENT) return usage_error(st, cudaload_last_error());
    warn_roots();
    if (names) { /* every name asked must be a part: a typo is a usage error, not "not found" */
        char *copy = strdup(names), *save = NULL;
        if (!copy) return out_of_memory();
        for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            size_t i = 0;
            cudaload_part_info p = {.size = sizeof p};
            while (i < cudaload_part_count() && (cudaload_part_at(i, &p), strcmp(p.name, t) != 0)) i++;
            if (i == cudaload_part_count()) {
                char msg[512];
                snprintf(msg, sizeof msg, "--parts: no part named '%.400s' (--parts alone lists them)", t);
                free(copy);
                return arg_error("UNKNOWN_NAME", msg);
            }
        }
        free(copy);
    }
    int code = PROBE_EXIT_OK;
    pj_writer w = {.out = stdout};
    if (json) pj_begin_object(&w), pj_key(&w, "parts"), pj_begin_array(&w);
    for (size_t i = 0; i < cudaload_part_count(); i++) {
        cudaload_part_info p = {.size = sizeof p};
        cudaload_part_at(i, &p);
        if (names) { /* only the names asked: ",nvcc,ptxas," holds ",<name>," */
            size_t len = strlen(p.name);
            const char *at = names;
            int asked = 0;
            while (!asked && (at = strstr(at, p.name)))
                asked = (at == names || at[-1] == ',') && (at[len] == ',' || at[len] == 0), at += len;
            if (!asked) continue;
        }
        cudaload_status ps = cudaload_part(p.name, &p);
        if (ps != CUDALOAD_OK && names) code = PROBE_EXIT_LIB_MISSING;
        if (json) {
            pj_begin_object(&w);
            pj_key(&w, "name"), pj_string(&w, p.name);
            pj_key(&w, "kind"), pj_string(&w, part_kind_name(p.kind));
            pj_key(&w, "file"), pj_string(&w, p.file);
            pj_key(&w, "library"), pj_string(&w, p.library);
            pj_key(&w, "status"), pj_string(&w, cudaload_status_name(ps));
            pj_key(&w, "path"), pj_string(&w, p.path);
            pj_key(&w, "source"), pj_string(&w, p.path ? cudaload_source_name(p.source) : NULL);
            pj_key(&w, "major"), p.major ? pj_int(&w, p.major) : pj_null(&w);
            pj_key(&w, "cuda_version"), p.cuda_version ? pj_int(&w, p.cuda_version) : pj_null(&w);
            pj_key(&w, "needed_by_toolkit"), pj_bool(&w, p.needed_by_toolkit);
            pj_key(&w, "majors"), pj_begin_array(&w);
            for (int k = 0; k < p.n_majors; k++) pj_int(&w, p.majors[k]);
            pj_end_array(&w);
            pj_key(&w, "wheel_dirs"), pj_begin_array(&w);
            for (int k = 0; k < p.n_majors; k++) pj_string(&w, p.wheel_dirs[k]);
            pj_end_array(&w);
            pj_key(&w, "pip_packages"), pj_begin_array(&w);
            for (int k = 0; k < p.n_majors; k++) pj_string(&w, p.pip_packages[k]);
            pj_end_array(&w);
            pj_key(&w, "prefix_dirs"), pj_string(&w, p.prefix_dirs);
            json_candidates(&w, p.n_candidates, p.candidates, p.details);
            pj_key(&w, "error"), pj_string(&w, ps != CUDALOAD_OK ? cudaload_last_error() : NULL);
            pj_end_object(&w);
        } else if (!quiet) {
            printf("%-22s %-7s ", p.name, part_kind_name(p.kind));
            if (ps == CUDALOAD_OK) {
                printf("%s [%s", p.path, cudaload_source_name(p.source));
                if (p.major) printf(", CUDA %d", p.major);
                if (p.cuda_version) printf(", release %d.%d", p.cuda_version / 1000, p.cuda_version % 1000 / 10);
                printf("]\n");
            } else {
                printf("not found\n");
                for (size_t c = 0; c < p.n_candidates; c++)
                    printf("    %s [%s]: %s\n", p.candidates[c].path, cudaload_source_name(p.candidates[c].source), p.candidates[c].reason);
                printf("    fix: ");
                if (p.n_majors == 0) printf("no pip wheel ships it: a full CUDA toolkit has it\n");
                for (int k = 0; k < p.n_majors; k++) printf("%s%s (CUDA %d)%s", k ? ", " : "pip install ", p.pip_packages[k], p.majors[k], k + 1 == p.n_majors ? "\n" : "");
            }
        }
    }
    if (json) pj_end_array(&w), pj_end_object(&w);
    return code;
}

/* --cuda-root [DIR]: the toolkit root, or why there is none (exit 1). With --json the answer and
 * its check as data: {"cuda_root", "status", "top", "nvcc", "cuda_version", "headers_version",
 * "candidates": [...], "error"}. */
static int print_cuda_root(const char *dir, const char **roots_in, size_t n_roots_in) {
    cudaload_status st = init_find_only(roots_in, n_roots_in);
    if (st == CUDALOAD_ERROR_INVALID_OPTION || st == CUDALOAD_ERROR_INVALID_ARGUMENT) return usage_error(st, cudaload_last_error());
    warn_roots();
    cudaload_toolkit_info t = {.size = sizeof t};
    st = cudaload_get_toolkit_info(dir, &t);
    if (st == CUDALOAD_ERROR_INVALID_ARGUMENT) return usage_error(st, cudaload_last_error());
    int code = st == CUDALOAD_OK ? PROBE_EXIT_OK : PROBE_EXIT_LIB_MISSING;
    if (json) {
        pj_writer w = {.out = stdout};
        pj_begin_object(&w);
        pj_key(&w, "cuda_root"), pj_string(&w, t.root);
        pj_key(&w, "status"), pj_string(&w, cudaload_status_name(st));
        pj_key(&w, "top"), pj_string(&w, t.top);
        pj_key(&w, "nvcc"), pj_string(&w, t.nvcc);
        pj_key(&w, "cuda_version"), t.cuda_version ? pj_int(&w, t.cuda_version) : pj_null(&w);
        pj_key(&w, "headers_version"), t.headers_version ? pj_int(&w, t.headers_version) : pj_null(&w);
        json_candidates(&w, t.n_candidates, t.candidates, t.details);
        pj_key(&w, "error"), pj_string(&w, st != CUDALOAD_OK ? cudaload_last_error() : NULL);
        pj_end_object(&w);
        if (st != CUDALOAD_OK && !quiet) fprintf(stderr, "cudaload-probe: %s\n", cudaload_last_error());
    } else if (!quiet) {
        if (st == CUDALOAD_OK) printf("%s\n", t.root);
        else fprintf(stderr, "cudaload-probe: %s\n", cudaload_last_error());
    }
    return code;
}

int main(int argc, char **argv) {
    int find_only = 0, selftest = 1;
    roots = calloc((size_t)argc + 1, sizeof *roots);
    atexit(free_roots);
    size_t n_roots = 0, n_libs = 0;
    libs = calloc(cudaload_library_count() * ((size_t)argc + 1), sizeof *libs);
    int load = 0, asked_libs = 0, flags_mode = 0; /* 1: --cflags, 2: --libs */
    int parts_mode = 0, root_mode = 0;
    const char *parts_names = NULL, *root_dir = NULL;
    /* --quiet and --json first, wherever they stand, so that they shape the usage errors too
     * (the word after --root is that root's name, not a flag) */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--root") == 0) i++;
        else if (strcmp(argv[i], "--quiet") == 0) quiet = 1;
        else if (strcmp(argv[i], "--json") == 0) json = 1;
    }
    if (!roots || !libs) return out_of_memory();
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--root") == 0 && i + 1 < argc) roots[n_roots++] = argv[++i];
        else if (strncmp(argv[i], "--root=", 7) == 0) roots[n_roots++] = argv[i] + 7;
        else if (strcmp(argv[i], "--json") == 0) json = 1;
        else if (strcmp(argv[i], "--find-only") == 0) find_only = 1;
        else if (strcmp(argv[i], "--no-selftest") == 0) selftest = 0;
        else if (strcmp(argv[i], "--quiet") == 0) quiet = 1;
        else if (strcmp(argv[i], "--lib") == 0 && i + 1 < argc) {
            if (!add_names("--lib", argv[++i], &n_libs)) return PROBE_EXIT_USAGE;
            asked_libs = 1;
        } else if (strncmp(argv[i], "--lib=", 6) == 0) {
            if (!add_names("--lib", argv[i] + 6, &n_libs)) return PROBE_EXIT_USAGE;
            asked_libs = 1;
        } else if (strcmp(argv[i], "--all") == 0) {
            for (size_t k = 0; k < cudaload_library_count(); k++) libs[n_libs++] = (cudaload_lib)k;
            asked_libs = 1;
        } else if (strcmp(argv[i], "--load") == 0) load = 1;
        else if (strcmp(argv[i], "--catalogue") == 0) {
            print_catalogue();
            return PROBE_EXIT_OK;
        } else if (strcmp(argv[i], "--cflags") == 0 || strcmp(argv[i], "--libs") == 0) {
            const char *flag = argv[i];
            size_t before = n_libs;
            flags_mode = argv[i][2] == 'c' ? 1 : 2;
            for (; i + 1 < argc && argv[i + 1][0] != '-'; i++)
                if (!add_names(flag, argv[i + 1], &n_libs)) return PROBE_EXIT_USAGE;
            if (n_libs == before) { /* "--cflags NAME...": flags for nothing would print an empty line */
                char msg[256];
                snprintf(msg, sizeof msg, "%s: give the libraries' names: %s NAME[,NAME...]... (--catalogue lists them)", flag, flag);
                return arg_error("NAMES_MISSING", msg);
            }
        } else if (strcmp(argv[i], "--parts") == 0) {
            parts_mode = 1;
            if (i + 1 < argc && argv[i + 1][0] != '-') parts_names = argv[++i];
            if (parts_names && has_empty_name(parts_names)) return empty_name_error("--parts", parts_names, "--parts alone");
        } else if (strcmp(argv[i], "--cuda-root") == 0) {
            root_mode = 1;
            if (i + 1 < argc && argv[i + 1][0] != '-') root_dir = argv[++i];
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return PROBE_EXIT_OK;
        } else if (strcmp(argv[i], "--version") == 0) {
            printf("cudaload-probe %s\n", cudaload_version_string());
            return PROBE_EXIT_OK;
        } else {
            char msg[512];
            snprintf(msg, sizeof msg, "unknown or incomplete argument '%.400s'", argv[i]);
            int code = arg_error("UNKNOWN_ARGUMENT", msg);
            if (!quiet) usage(stderr);
            return code;
        }
    }
    for (size_t i = 0; i < n_roots; i++)
        if (!probe_is_absolute(roots[i])) {
            char msg[4200];
            snprintf(msg, sizeof msg, "--root '%.4096s': give an absolute path", roots[i]);
            return arg_error("RELATIVE_PATH", msg);
        }
    if (root_dir && !probe_is_absolute(root_dir)) {
        char msg[4200];
        snprintf(msg, sizeof msg, "--cuda-root '%.4096s': give an absolute path", root_dir);
        return arg_error("RELATIVE_PATH", msg);
    }
    if (load && !asked_libs) /* --load alone would load nothing more than the report does */
        return arg_error("NAMES_MISSING", "--load: name the libraries to load: --lib NAME[,NAME...] or --all");
    if (flags_mode) return print_flags(flags_mode == 1, n_libs, roots, n_roots);
    if (parts_mode) return print_parts(parts_names, roots, n_roots);
    if (root_mode) return print_cuda_root(root_dir, roots, n_roots);
    cudaload_options opts;
    cudaload_options_init(&opts);
    opts.roots = roots;
    opts.n_roots = n_roots;
    opts.flags = CUDALOAD_FLAG_LOAD_CUBLAS | CUDALOAD_FLAG_DRIVER_OPTIONAL | (find_only ? CUDALOAD_FLAG_FIND_ONLY : 0);
    cudaload_status st = cudaload_init(&opts);
    const char *init_error = st != CUDALOAD_OK ? cudaload_last_error() : NULL;
    if (st == CUDALOAD_ERROR_INVALID_OPTION || st == CUDALOAD_ERROR_INVALID_ARGUMENT) return usage_error(st, init_error);
    /* the libraries asked for: searched after init, loaded with --load, else only located */
    for (size_t i = 0; i < n_libs; i++) {
        if ((int)libs[i] < CUDALOAD_LIB_COUNT_) continue;
        if (load && !find_only) cudaload_load_library(libs[i]);
        else cudaload_find_library(libs[i]);
    }
    if (st != CUDALOAD_OK) init_error = cudaload_status_string(st); /* the text above was overwritten */
    probe_request rq = {st, init_error, find_only, selftest, libs, n_libs, NULL};
    probe_report *r = probe_report_collect(&rq);
    if (!r) return out_of_memory();
    int code = probe_report_exit_code(r);
    if (!quiet && json) probe_report_json(r, stdout);
    else if (!quiet) probe_report_text(r, stdout, isatty(STDOUT_FILENO) && !getenv("NO_COLOR"));
    probe_report_free(r);
    return code;
}
