/* SPDX-License-Identifier: Apache-2.0 */
/*
 * config.c -- merge cudaload_options with the CUDALOAD_* environment into one cl_config.
 *
 * Precedence: an environment variable beats the option that does the same thing (the
 * user of a program outranks its integrator, as LD_LIBRARY_PATH outranks RUNPATH), unless
 * the program sets CUDALOAD_FLAG_IGNORE_ENV. Under AT_SECURE (setuid/setgid programs) or
 * CUDALOAD_FLAG_SECURE no environment variable is read at all, as ld.so does.
 * Every value is validated: a relative path, a path longer than PATH_MAX, an unknown source
 * name or a major other than 12/13 is an error naming the variable, never silently ignored.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static const char *const cl_source_names[CUDALOAD_SOURCE_COUNT_] = {
    [CUDALOAD_SOURCE_NONE] = "none",       [CUDALOAD_SOURCE_OVERRIDE] = "override",
    [CUDALOAD_SOURCE_CALLER] = "caller",   [CUDALOAD_SOURCE_SELF] = "self",
    [CUDALOAD_SOURCE_VENV] = "venv",       [CUDALOAD_SOURCE_CONDA] = "conda",
    [CUDALOAD_SOURCE_CUDA_HOME] = "cuda_home", [CUDALOAD_SOURCE_SYSTEM] = "system",
    [CUDALOAD_SOURCE_LOADED] = "loaded",
};

const char *cudaload_source_name(cudaload_source source) {
    if ((unsigned)source >= CUDALOAD_SOURCE_COUNT_) return "none";
    return cl_source_names[source];
}

void cudaload_options_init(cudaload_options *opts) {
    if (!opts) return;
    memset(opts, 0, sizeof *opts);
    opts->size = sizeof *opts;
}

const char *cl_config_env(const cl_config *cfg, const char *name) {
    if (cfg->secure) return NULL;
    return getenv(name);
}

/* Absolute, not too long, no empty. `what` names the variable or option in the message. */
static cudaload_status cl_check_path(const char *what, const char *path, cl_buf *err) {
    if (!cl_plat_is_absolute(path)) {
        cl_buf_printf(err, "%s: '%s' is a relative path; libcudaload only accepts absolute paths "
                           "(a relative one would depend on the current directory)", what, path);
        return CUDALOAD_ERROR_INVALID_OPTION;
    }
    if (strlen(path) >= PATH_MAX) {
        cl_buf_printf(err, "%s: path of %zu bytes is longer than PATH_MAX (%d)", what, strlen(path),
                      PATH_MAX);
        return CUDALOAD_ERROR_INVALID_OPTION;
    }
    return CUDALOAD_OK;
}

static cudaload_status cl_push(char ***list, size_t *n, const char *s) {
    char **p = realloc(*list, (*n + 1) * sizeof **list);
    if (!p) return CUDALOAD_ERROR_OUT_OF_MEMORY;
    *list = p;
    if (!(p[*n] = strdup(s))) return CUDALOAD_ERROR_OUT_OF_MEMORY;
    cl_plat_path_normalize(p[*n]);
    (*n)++;
    return CUDALOAD_OK;
}

/* A colon-separated directory list (semicolon on Windows: CL_PATH_LIST_SEP). Empty elements are skipped: for ld.so they mean the
 * current directory, which libcudaload never searches. */
static cudaload_status cl_parse_dir_list(const char *what, const char *text, char ***list, size_t *n,
                                         cl_buf *err) {
    const char *p = text;
    while (1) {
        const char *colon = strchr(p, CL_PATH_LIST_SEP);
        size_t len = colon ? (size_t)(colon - p) : strlen(p);
        if (len > 0) {
            char *elem = strndup(p, len);
            if (!elem) return CUDALOAD_ERROR_OUT_OF_MEMORY;
            cudaload_status st = cl_check_path(what, elem, err);
            if (st == CUDALOAD_OK) st = cl_push(list, n, elem);
            free(elem);
            if (st != CUDALOAD_OK) return st;
        } else {
            cl_debug("%s: empty element skipped (never the current directory)", what);
        }
        if (!colon) break;
        p = colon + 1;
    }
    return CUDALOAD_OK;
}

cudaload_status cl_parse_sources(const char *text, unsigned *mask, cl_buf *err) {
    unsigned m = 0;
    const char *p = text;
    while (1) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        /* tolerate blanks around names ("caller, conda"), nothing else */
        while (len > 0 && (*p == ' ' || *p == '\t')) p++, len--;
        while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t')) len--;
        int found = 0;
        for (int s = CUDALOAD_SOURCE_OVERRIDE; s < CUDALOAD_SOURCE_COUNT_; s++) {
            if (strlen(cl_source_names[s]) == len && strncmp(cl_source_names[s], p, len) == 0) {
                /* "loaded" is accepted but is no scope: reuse of a loaded copy always applies */
                if (s != CUDALOAD_SOURCE_LOADED) m |= CUDALOAD_SOURCE_BIT(s);
                found = 1;
                break;
            }
        }
        if (!found) {
            cl_buf_printf(err, "CUDALOAD_SOURCES: unknown source '%.*s' (known: override, caller, "
                               "self, venv, conda, cuda_home, system, loaded)", (int)(len > 64 ? 64 : len), p);
            return CUDALOAD_ERROR_INVALID_OPTION;
        }
        if (!comma) break;
        p = comma + 1;
    }
    if (m == 0 && strstr(text, "loaded") == NULL) {
        cl_buf_printf(err, "CUDALOAD_SOURCES: no source named");
        return CUDALOAD_ERROR_INVALID_OPTION;
    }
    *mask = m;
    return CUDALOAD_OK;
}

static cudaload_status cl_parse_major(const char *what, const char *text, int *major, cl_buf *err) {
    if (strcmp(text, "12") == 0 || strcmp(text, "13") == 0) {
        *major = atoi(text);
        return CUDALOAD_OK;
    }
    cl_buf_printf(err, "%s: '%.64s' is not a CUDA major libcudaload supports (12 or 13)", what, text);
    return CUDALOAD_ERROR_INVALID_OPTION;
}

/* The options' own field for the historic four rows (the catalogue names each in option_name);
 * every row can also be given through options.lib_paths as "name=/abs/path". */
static const char *cl_opt_file(const cudaload_options *o, size_t lib) {
    switch (lib) {
    case CUDALOAD_LIB_DRIVER: return o->driver_path;
    case CUDALOAD_LIB_CUDART: return o->cudart_path;
    case CUDALOAD_LIB_CUBLASLT: return o->cublaslt_path;
    case CUDALOAD_LIB_CUBLAS: return o->cublas_path;
    default: return NULL;
    }
}

/* Entry i of an options list of "name=value" strings (what: "options.lib_paths"): the catalogue
 * id of name, and *value; -1 with the reason in err when it is not of that form (form: how to
 * write it), or name is no library of the catalogue. */
static int cl_named_entry(const char *what, size_t i, const char *e, const char *form, const char **value, cl_buf *err) {
    const char *eq = e ? strchr(e, '=') : NULL;
    char name[64];
    if (!eq || (size_t)(eq - e) >= sizeof name || eq == e) {
        cl_buf_printf(err, "%s[%zu]: '%.80s' is not of the form %s", what, i, e ? e : "(null)", form);
        return -1;
    }
    memcpy(name, e, (size_t)(eq - e));
    name[eq - e] = 0;
    int lib = cl_catalogue_find(name);
    if (lib < 0) { /* the known names, not a program that lists them: the caller may be any program */
        cl_buf_printf(err, "%s[%zu]: '%s' is not a library of the catalogue; known:", what, i, name);
        for (size_t r = 0; r < cl_catalogue_count(); r++) cl_buf_printf(err, " %s", cl_row_at(r)->name);
    }
    *value = eq + 1;
    return lib;
}

/* options.lib_paths: "name=/abs/path" entries; an unknown name or a missing '=' is an error. */
static cudaload_status cl_parse_lib_paths(const cudaload_options *o, cl_config *cfg, cl_buf *err) {
    if (o->n_lib_paths && !o->lib_paths) {
        cl_buf_printf(err, "cudaload_options.lib_paths is NULL but n_lib_paths is %zu", o->n_lib_paths);
        return CUDALOAD_ERROR_INVALID_ARGUMENT;
    }
    for (size_t i = 0; i < o->n_lib_paths; i++) {
        const char *path;
        int lib = cl_named_entry("options.lib_paths", i, o->lib_paths[i], "name=/absolute/path", &path, err);
        if (lib < 0) return CUDALOAD_ERROR_INVALID_OPTION;
        if (!path[0]) continue; /* "cufft=": no exact file for that row */
        cudaload_status st = cl_check_path("options.lib_paths", path, err);
        if (st != CUDALOAD_OK) return st;
        free(cfg->file[lib]);
        free(cfg->file_origin[lib]);
        cfg->file[lib] = strdup(path);
        cfg->file_origin[lib] = strdup("options.lib_paths");
        if (!cfg->file[lib] || !cfg->file_origin[lib]) return CUDALOAD_ERROR_OUT_OF_MEMORY;
        cl_plat_path_normalize(cfg->file[lib]);
    }
    return CUDALOAD_OK;
}

/* A floor "X.Y" or "X.Y.Z" in row's version units (catalogue.h): CUDA-numbered versions
 * (cudaRuntimeGetVersion, nvrtcVersion) are X*1000 + Y*10 and take no patch level; the others
 * X*10000 + Y*100 + Z. A row whose version libcudaload does not read cannot have one. */
static cudaload_status cl_parse_floor(const char *what, const cl_row *row, const char *text, int *floor, cl_buf *err) {
    unsigned x = 0, y = 0, z = 0;
    int used = 0, parts = 0;
    if (sscanf(text, "%u.%u.%u%n", &x, &y, &z, &used) == 3 && text[used] == 0) parts = 3;
    else if (sscanf(text, "%u.%u%n", &x, &y, &used) == 2 && text[used] == 0) parts = 2;
    else if (sscanf(text, "%u%n", &x, &used) == 1 && text[used] == 0) parts = 1;
    int cuda_numbered = row->version_kind == CL_VERSION_CUDA || row->version_kind == CL_VERSION_MAJMIN;
    if (row->version_kind == CL_VERSION_NONE) {
        cl_buf_printf(err, "%s: libcudaload reads no version of %s, so a minimum cannot be checked", what, row->name);
        return CUDALOAD_ERROR_INVALID_OPTION;
    }
    if (!parts || x > 999 || y > 99 || z > 99 || (cuda_numbered && (parts == 3 || y > 9))) {
        cl_buf_printf(err, "%s: '%.32s' is not a version of %s (%s)", what, text, row->name,
                      cuda_numbered ? "major.minor, as CUDA writes it: 13.1" : "major.minor[.patch]: 13.1.0");
        return CUDALOAD_ERROR_INVALID_OPTION;
    }
    *floor = cuda_numbered ? (int)(x * 1000 + y * 10) : (int)(x * 10000 + y * 100 + z);
    return CUDALOAD_OK;
}

/* The pip requirement that meets row's floor text: the package of the flavor whose major the
 * floor's major is (the CUDA major, or the library's own for a row numbered on its own). */
static cudaload_status cl_floor_requirement(cl_config *cfg, size_t lib, const char *text) {
    const cl_row *row = cl_row_at(lib);
    unsigned x = (unsigned)atoi(text);
    free(cfg->floor_req[lib]);
    cfg->floor_req[lib] = NULL;
    for (size_t f = 0; f < CL_MAX_FLAVORS; f++) {
        const cl_flavor *fl = &row->flavor[f];
        if (!fl->soname || !fl->pkg || fl->major == 0) continue;
        int own = fl->lib_major ? fl->lib_major : fl->major;
        int numbered_by_cuda = row->version_kind == CL_VERSION_CUDA || row->version_kind == CL_VERSION_MAJMIN;
        if ((unsigned)(numbered_by_cuda ? fl->major : own) != x) continue;
        size_t n = strlen(fl->pkg) + strlen(text) + 3;
        if (!(cfg->floor_req[lib] = malloc(n))) return CUDALOAD_ERROR_OUT_OF_MEMORY;
        snprintf(cfg->floor_req[lib], n, "%s>=%s", fl->pkg, text);
        cfg->floor_major[lib] = fl->major;
        break;
    }
    return CUDALOAD_OK;
}

/* The floors: CUDALOAD_MIN_<NAME> beats the options' "name=X.Y" entry of the same row. */
static cudaload_status cl_parse_floors(const cudaload_options *o, cl_config *cfg, int use_env, cl_buf *err) {
    if (o->n_min_versions && !o->min_versions) {
        cl_buf_printf(err, "cudaload_options.min_versions is NULL but n_min_versions is %zu", o->n_min_versions);
        return CUDALOAD_ERROR_INVALID_ARGUMENT;
    }
    const char *text[CL_CATALOGUE_MAX] = {0}, *what[CL_CATALOGUE_MAX] = {0};
    for (size_t i = 0; i < o->n_min_versions; i++) {
        const char *version;
        int lib = cl_named_entry("options.min_versions", i, o->min_versions[i], "name=version", &version, err);
        if (lib < 0) return CUDALOAD_ERROR_INVALID_OPTION;
        text[lib] = version, what[lib] = "options.min_versions";
    }
    for (size_t lib = 0; use_env && lib < cl_catalogue_count(); lib++) {
        char env[96];
        const char *v;
        snprintf(env, sizeof env, "CUDALOAD_MIN_%s", cl_row_env_name(lib) + strlen("CUDALOAD_"));
        env[strlen(env) - strlen("_PATH")] = 0; /* CUDALOAD_MIN_CUDART from CUDALOAD_CUDART_PATH */
        if ((v = getenv(env)) && v[0]) {
            text[lib] = v;
            what[lib] = NULL; /* the variable's name, made below */
            char *w = strdup(env);
            if (!w) return CUDALOAD_ERROR_OUT_OF_MEMORY;
            free(cfg->floor_origin[lib]);
            cfg->floor_origin[lib] = w;
        }
    }
    for (size_t lib = 0; lib < cl_catalogue_count(); lib++) {
        if (!text[lib]) continue;
        if (what[lib]) {
            free(cfg->floor_origin[lib]);
            if (!(cfg->floor_origin[lib] = strdup(what[lib]))) return CUDALOAD_ERROR_OUT_OF_MEMORY;
        }
        cudaload_status st = cl_parse_floor(cfg->floor_origin[lib], cl_row_at(lib), text[lib], &cfg->floor[lib], err);
        if (st == CUDALOAD_OK) st = cl_floor_requirement(cfg, lib, text[lib]);
        if (st != CUDALOAD_OK) return st;
    }
    return CUDALOAD_OK;
}

/* The exact file of each row: the environment (CUDALOAD_<NAME>_PATH, or the row's older name)
 * beats the options (its own field, then lib_paths). */
static cudaload_status cl_parse_files(const cudaload_options *o, cl_config *cfg, int use_env, cl_buf *err) {
    cudaload_status st = cl_parse_lib_paths(o, cfg, err);
    if (st != CUDALOAD_OK) return st;
    for (size_t lib = 0; lib < cl_catalogue_count(); lib++) {
        const cl_row *row = cl_row_at(lib);
        const char *path = cl_opt_file(o, lib), *what = row->option_name, *v = NULL;
        const char *env = cl_row_env_name(lib);
        if (use_env && (v = getenv(env)) && v[0]) {
            path = v, what = env;
        } else if (use_env && row->env_alias && (v = getenv(row->env_alias)) && v[0]) {
            path = v, what = row->env_alias;
        } else if (!path || !path[0]) {
            continue; /* none, or the lib_paths entry already checked and kept */
        }
        if ((st = cl_check_path(what, path, err)) != CUDALOAD_OK) return st;
        char *p = strdup(path), *w = strdup(what);
        free(cfg->file[lib]);
        free(cfg->file_origin[lib]);
        cfg->file[lib] = p;
        cfg->file_origin[lib] = w;
        if (!p || !w) return CUDALOAD_ERROR_OUT_OF_MEMORY;
        cl_plat_path_normalize(p);
    }
    return CUDALOAD_OK;
}

/* A variable that names one of a few choices: *out = values[k] for names[k]; unset or empty
 * leaves *out; any other value is INVALID_OPTION naming the variable and the choices. */
static cudaload_status cl_env_choice(const char *var, const char *const *names, const int *values, size_t n, int *out,
                                     cl_buf *err) {
    const char *v = getenv(var);
    if (!v || !v[0]) return CUDALOAD_OK;
    for (size_t k = 0; k < n; k++)
        if (strcmp(v, names[k]) == 0) {
            *out = values[k];
            return CUDALOAD_OK;
        }
    cl_buf_printf(err, "%s: '%.64s' is not one of ", var, v);
    for (size_t k = 0; k < n; k++) cl_buf_printf(err, "%s%s", k ? ", " : "", names[k]);
    return CUDALOAD_ERROR_INVALID_OPTION;
}

cudaload_status cl_config_build(cl_config *cfg, const cudaload_options *opts, cl_buf *err) {
    memset(cfg, 0, sizeof *cfg);
    cudaload_options o;
    cudaload_options_init(&o);
    if (opts) {
        if (opts->size < offsetof(cudaload_options, roots) + sizeof opts->roots) {
            cl_buf_printf(err, "cudaload_options.size is %zu: set it to sizeof(cudaload_options) (%zu)",
                          opts->size, sizeof o);
            return CUDALOAD_ERROR_INVALID_ARGUMENT;
        }
        /* copy only the fields the caller's struct has (an older caller has a smaller one) */
        memcpy(&o, opts, opts->size < sizeof o ? opts->size : sizeof o);
        o.size = sizeof o;
    }
    cfg->flags = o.flags;
    cfg->backend = -1;
    cfg->secure = (o.flags & CUDALOAD_FLAG_SECURE) || cl_plat_secure();
    int use_env = !(o.flags & CUDALOAD_FLAG_IGNORE_ENV) && !cfg->secure;
    cfg->env_read = use_env;
    cl_ctx.debug = (o.flags & CUDALOAD_FLAG_DEBUG) != 0;
    const char *v = NULL;
    if (use_env && (v = getenv("CUDALOAD_DEBUG")) && v[0] && strcmp(v, "0") != 0) cl_ctx.debug = 1;
    /* "time": each line also says when, to place a slow init's time */
    if (cl_ctx.debug && use_env && v && strcmp(v, "time") == 0) cl_ctx.debug = 2;
    cl_ctx.debug_t0 = cl_ctx.debug == 2 ? cl_plat_now_us() : 0;
    cl_debug("libcudaload %s: configuring%s", CUDALOAD_VERSION_STRING,
             cfg->secure ? " (secure mode: environment overrides ignored)" : "");

    cudaload_status st;
    /* options */
    if (o.n_roots && !o.roots) {
        cl_buf_printf(err, "cudaload_options.roots is NULL but n_roots is %zu", o.n_roots);
        return CUDALOAD_ERROR_INVALID_ARGUMENT;
    }
    for (size_t i = 0; i < o.n_roots; i++) {
        if (!o.roots[i] || !o.roots[i][0]) continue; /* empty: never the current directory */
        if ((st = cl_check_path("options.roots", o.roots[i], err)) != CUDALOAD_OK) return st;
        if ((st = cl_push(&cfg->caller_roots, &cfg->n_caller_roots, o.roots[i])) != CUDALOAD_OK) return st;
    }
    const char *lib_dirs = o.lib_dirs;
    const char *lib_dirs_what = "options.lib_dirs";
    if (use_env && (v = getenv("CUDALOAD_PATH")) && v[0]) {
        lib_dirs = v;
        lib_dirs_what = "CUDALOAD_PATH";
    }
    if (lib_dirs && (st = cl_parse_dir_list(lib_dirs_what, lib_dirs, &cfg->override_dirs,
                                            &cfg->n_override_dirs, err)) != CUDALOAD_OK)
        return st;

    /* the driver's places after the dynamic loader's search (the rows' system_dirs) */
    if (use_env && (v = getenv("CUDALOAD_DRIVER_DIRS")) && v[0]) {
        if ((st = cl_parse_dir_list("CUDALOAD_DRIVER_DIRS", v, &cfg->driver_dirs, &cfg->n_driver_dirs, err)) !=
            CUDALOAD_OK)
            return st;
        cfg->driver_dirs_set = 1;
    }

    if ((st = cl_parse_files(&o, cfg, use_env, err)) != CUDALOAD_OK) return st;
    if ((st = cl_parse_floors(&o, cfg, use_env, err)) != CUDALOAD_OK) return st;

    cfg->cuda_major = 0;
    if (o.cuda_major != 0) {
        if (o.cuda_major != 12 && o.cuda_major != 13) {
            cl_buf_printf(err, "options.cuda_major: %d is not a CUDA major libcudaload supports (12 or 13)",
                          o.cuda_major);
            return CUDALOAD_ERROR_INVALID_OPTION;
        }
        cfg->cuda_major = o.cuda_major;
    }
    if (use_env && (v = getenv("CUDALOAD_CUDA_MAJOR")) && v[0] &&
        (st = cl_parse_major("CUDALOAD_CUDA_MAJOR", v, &cfg->cuda_major, err)) != CUDALOAD_OK)
        return st;

    cfg->sources = o.sources ? o.sources : CUDALOAD_SOURCES_ALL;
    if (cfg->sources & ~(unsigned)CUDALOAD_SOURCES_ALL) {
        cl_buf_printf(err, "options.sources: 0x%x has bits outside CUDALOAD_SOURCES_ALL (0x%x)", o.sources,
                      CUDALOAD_SOURCES_ALL);
        return CUDALOAD_ERROR_INVALID_OPTION;
    }
    if (use_env && (v = getenv("CUDALOAD_SOURCES")) && v[0] &&
        (st = cl_parse_sources(v, &cfg->sources, err)) != CUDALOAD_OK)
        return st;
    /* validated here, like every other variable: a typo must not silently mean "auto" */
    static const char *const backends[] = {"auto", "bundled", "cublas"};
    static const int backend_values[] = {CUDALOAD_BACKEND_AUTO, CUDALOAD_BACKEND_BUNDLED, CUDALOAD_BACKEND_CUBLAS};
    if (use_env && (st = cl_env_choice("CUDALOAD_BACKEND", backends, backend_values, 3, &cfg->backend, err)) != CUDALOAD_OK)
        return st;
    /* the toolkit layout to search first on aarch64 (search.c: cl_search_tegra): forces what
     * detection would say, for a container that hides the board, and for the tests */
    static const char *const platforms[] = {"auto", "sbsa", "tegra"};
    static const int platform_values[] = {CL_PLATFORM_AUTO, CL_PLATFORM_SBSA, CL_PLATFORM_TEGRA};
    if (use_env && (st = cl_env_choice("CUDALOAD_PLATFORM", platforms, platform_values, 3, &cfg->platform, err)) != CUDALOAD_OK)
        return st;
    /* whether a cuda-compat libcuda may replace the system's driver (cuda_compat.c: cl_use_compat) */
    static const char *const compat[] = {"auto", "never", "0", "off", "no"};
    static const int compat_values[] = {0, 1, 1, 1, 1};
    if (use_env && (st = cl_env_choice("CUDALOAD_COMPAT", compat, compat_values, 5, &cfg->compat_never, err)) != CUDALOAD_OK)
        return st;
    return CUDALOAD_OK;
}

void cl_config_free(cl_config *cfg) {
    for (size_t i = 0; i < cfg->n_caller_roots; i++) free(cfg->caller_roots[i]);
    for (size_t i = 0; i < cfg->n_override_dirs; i++) free(cfg->override_dirs[i]);
    for (size_t i = 0; i < cfg->n_driver_dirs; i++) free(cfg->driver_dirs[i]);
    free(cfg->caller_roots);
    free(cfg->override_dirs);
    free(cfg->driver_dirs);
    for (int i = 0; i < CL_CATALOGUE_MAX; i++) {
        free(cfg->file[i]);
        free(cfg->file_origin[i]);
        free(cfg->floor_origin[i]);
        free(cfg->floor_req[i]);
    }
    memset(cfg, 0, sizeof *cfg);
}
