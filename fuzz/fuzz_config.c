/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_config.c -- libFuzzer target: the option and environment parsing (config.c) and
 * the root and candidate-directory builder (search.c). The input is split at NUL bytes
 * into values for CUDALOAD_PATH, CUDALOAD_SOURCES, CUDALOAD_CUDA_MAJOR,
 * CUDALOAD_CUDART_PATH, CONDA_PREFIX and a caller root.
 *
 * The variables are set with putenv() on buffers this file owns and reuses: glibc's setenv()
 * never frees a value it replaces, so millions of runs with setenv() grew the process by
 * every value ever set (2 GB after 2.8M runs) and slowed each run down. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char *const vars[] = {"CUDALOAD_PATH", "CUDALOAD_SOURCES", "CUDALOAD_CUDA_MAJOR", "CUDALOAD_CUDART_PATH",
                                   "CONDA_PREFIX"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *buf = malloc(size + 1);
    memcpy(buf, data, size);
    buf[size] = 0;
    const char *field[6] = {"", "", "", "", "", ""};
    size_t nf = 0;
    for (char *p = buf; nf < 6 && p <= buf + size; nf++) {
        field[nf] = p;
        p += strlen(p) + 1;
    }
    static char *env_buf[5];
    static size_t env_cap[5];
    for (size_t i = 0; i < 5; i++) {
        size_t need = strlen(vars[i]) + 1 + strlen(field[i]) + 1;
        if (need > env_cap[i]) {
            /* a new buffer goes into environ before the old one is freed */
            char *nb = malloc(need);
            if (!nb) __builtin_trap();
            snprintf(nb, need, "%s=%s", vars[i], field[i]);
            putenv(nb);
            free(env_buf[i]);
            env_buf[i] = nb;
            env_cap[i] = need;
        } else {
            snprintf(env_buf[i], env_cap[i], "%s=%s", vars[i], field[i]);
        }
    }
    cudaload_options o;
    cudaload_options_init(&o);
    const char *roots[] = {field[5]};
    o.roots = roots;
    o.n_roots = 1;
    cl_config cfg;
    cl_buf err = {0};
    cudaload_status st = cl_config_build(&cfg, &o, &err);
    if (st != CUDALOAD_OK && cl_buf_str(&err)[0] == 0) __builtin_trap(); /* an error always says why */
    if (st == CUDALOAD_OK) {
        for (size_t i = 0; i < cfg.n_override_dirs; i++)
            if (cfg.override_dirs[i][0] != '/') __builtin_trap(); /* never a relative directory */
        cl_roots roots_out = {0};
        cl_search_build_roots(&roots_out, &cfg, NULL);
        for (size_t i = 0; i < roots_out.n; i++) {
            if (roots_out.items[i].pub.path[0] != '/') __builtin_trap();
            /* every row's directories under the root: absolute, like the root */
            for (size_t lib = 0; lib < cl_catalogue_count(); lib++) {
                const cl_row *row = cl_row_at(lib);
                for (size_t f = 0; f < CL_MAX_FLAVORS; f++) {
                    if (!row->flavor[f].soname) continue;
                    char *dirs[CL_MAX_DIRS];
                    size_t nd = cl_search_dirs(&roots_out.items[i], row, &row->flavor[f], dirs);
                    for (size_t d = 0; d < nd; d++) {
                        if (dirs[d][0] != '/') __builtin_trap();
                        free(dirs[d]);
                    }
                }
            }
        }
        cl_roots_free(&roots_out);
    }
    cl_config_free(&cfg);
    cl_buf_free(&err);
    free(buf);
    return 0;
}
