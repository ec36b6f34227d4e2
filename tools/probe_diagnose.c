/* SPDX-License-Identifier: Apache-2.0 */
/*
 * probe_diagnose.c -- what is wrong (one problem line each), what to watch (warnings) and what
 * fixes it (fixes), worded once, here, from what was gathered; the exit code.
 *
 * The fixes for a library that failed are the advisor's (cudaload_fix_at: pip packages from the
 * catalogue's row, a driver upgrade with its branch, the driver to install, a setting to
 * correct), merged across the libraries reported (one pip command per CUDA major) and worded
 * for the program the report is for: cudaload-probe (`pip install`) or Python (`<python> -m pip
 * install`, `python -m cudaload`). What the library does not know is the probe's own: the
 * driver that a wheel needs to run (the driver's CUDA version, from its info), the version pin
 * of the unsuffixed runtime and cuBLAS wheels, caller roots that are no directory,
 * LD_LIBRARY_PATH shadowing, CUDA_VISIBLE_DEVICES, files other users may write.
 */
#define _GNU_SOURCE
#include "probe_internal.h"
#include "probe_platform.h"

#include <cuda.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Appends a note unless the same text is already there. */
void probe_note(char **list, int *n, const char *fmt, ...) {
    if (*n >= MAX_NOTES) return;
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0) s = NULL;
    va_end(ap);
    for (int i = 0; s && i < *n; i++)
        if (strcmp(list[i], s) == 0) {
            free(s);
            return;
        }
    if (s) list[(*n)++] = s;
}

/* Appends requirement req to the space-separated list reqs (of size n) unless it is there. */
static void add_word(char *reqs, size_t n, const char *req) {
    size_t rl = strlen(req);
    for (const char *s = reqs; *s;) {
        size_t w = strcspn(s, " ");
        if (w == rl && strncmp(s, req, w) == 0) return;
        s += w;
        if (*s) s++;
    }
    size_t len = strlen(reqs);
    snprintf(reqs + len, n - len, "%s%s", len ? " " : "", req);
}

/* The requirements as shell words: quoted where pip's * would be a glob ("nvidia-cublas==13.*")
 * or > < a redirection ("nvidia-cuda-runtime>=13.1"). */
static void shell_words(const char *reqs, char *out, size_t n) {
    size_t len = 0;
    out[0] = 0;
    for (const char *s = reqs; *s;) {
        size_t w = strcspn(s, " ");
        int q = memchr(s, '*', w) || memchr(s, '>', w) || memchr(s, '<', w);
        len = probe_appendf(out, n, len, "%s%s%.*s%s", len ? " " : "", q ? "\"" : "", (int)w, s, q ? "\"" : "");
        s += w;
        if (*s) s++;
    }
}

/* ---- the commands of the program the report is for ---- */

/* The pip command: `pip`, or for Python the interpreter's own (`/venv/bin/python -m pip`). */
static void pip_command(const char *python, char *out, size_t n) {
    if (!python) {
        snprintf(out, n, "pip");
        return;
    }
    size_t len = probe_shell_word(out, n, 0, python);
    snprintf(out + (len < n ? len : n - 1), len < n ? n - len : 1, " -m pip");
}

/* For a library not found whose wheels may be installed elsewhere: how to search there. */
static const char *elsewhere_hint(const char *python) {
    if (python)
        return "if the wheels are installed in another environment, run `python -m cudaload` with that environment's "
               "python: the search takes this interpreter's package directories";
    return "if the wheels are installed already, point the probe at their environment: activate it (VIRTUAL_ENV), or "
           "run, with that environment's python3: `cudaload-probe --root \"$(python3 -c 'import sysconfig; "
           "print(sysconfig.get_paths()[\"purelib\"])')\"`";
}

/* ---- the fixes of the libraries that failed: the advisor's, merged and worded ---- */

/* The driver's CUDA version (13000), 0 when no driver is loaded. */
static int driver_version(const cudaload_library_info *drv) {
    return drv && drv->status == CUDALOAD_OK && drv->loaded && drv->version > 0 ? drv->version : 0;
}

/* The advisor's fixes for the libraries (in order) merged: one PIP_INSTALL per CUDA major
 * holding every package named for it, each other fix once. A library in the list that failed
 * with no candidate at all (not searched: cuBLAS when the runtime is missing, since it takes the
 * runtime's major and root; or found nowhere) gets its catalogue package of each major a pip fix
 * names, so that one command installs what is needed. With a driver loaded, of the pip fixes it can run only the newest major's is kept (the
 * search prefers it too); one of a major it cannot run only when no other remains (the newest
 * such, worded as a driver upgrade first). Without a driver, every major is offered. */
static size_t plan_fixes(const probe_lib *const *libs, size_t n, const cudaload_library_info *drv, plan_item *plan) {
    size_t np = 0;
    for (size_t i = 0; i < n; i++) {
        const probe_lib *l = libs[i];
        for (size_t f = 0; f < l->n_fixes; f++) {
            const cudaload_fix *fx = &l->fixes[f];
            size_t k = 0;
            for (; k < np; k++) {
                const plan_item *it = &plan[k];
                if (it->kind == fx->kind && it->major == fx->major &&
                    (fx->kind == CUDALOAD_FIX_PIP_INSTALL ||
                     (it->branch == fx->branch && (it->setting == fx->setting ||
                                                   (it->setting && fx->setting && strcmp(it->setting, fx->setting) == 0)))))
                    break;
            }
            if (k == np) {
                if (np == MAX_PLAN) continue;
                plan[np++] = (plan_item){fx->kind, fx->major, fx->branch, fx->setting, &l->info, "", "", 1};
            }
            add_word(plan[k].libs, sizeof plan[k].libs, l->info.name);
            if (fx->kind != CUDALOAD_FIX_PIP_INSTALL || !fx->packages) continue;
            for (const char *s = fx->packages; *s;) {
                size_t w = strcspn(s, " ");
                char pkg[128], req[160];
                snprintf(pkg, sizeof pkg, "%.*s", (int)w, s);
                probe_requirement(l->info.lib, fx->major, pkg, req, sizeof req);
                if (w) add_word(plan[k].reqs, sizeof plan[k].reqs, req);
                s += w;
                if (*s) s++;
            }
        }
    }
    int dmaj = driver_version(drv) / 1000, any_runs = 0;
    for (size_t k = 0; k < np; k++) {
        plan_item *it = &plan[k];
        if (it->kind != CUDALOAD_FIX_PIP_INSTALL) continue;
        for (size_t i = 0; i < n; i++) { /* the libraries with no candidate at all, in the same command */
            cudaload_catalogue_info c = {.size = sizeof c};
            if (libs[i]->info.status == CUDALOAD_OK || libs[i]->info.n_candidates ||
                cudaload_catalogue_entry(libs[i]->info.lib, &c) != CUDALOAD_OK)
                continue;
            for (int m = 0; m < c.n_majors && m < 2; m++)
                if (c.majors[m] == it->major && c.pip_packages[m]) {
                    char req[160];
                    probe_requirement(libs[i]->info.lib, it->major, c.pip_packages[m], req, sizeof req);
                    add_word(it->reqs, sizeof it->reqs, req);
                    add_word(it->libs, sizeof it->libs, libs[i]->info.name);
                }
        }
        it->runs = !dmaj ? -1 : it->major <= dmaj;
        any_runs |= it->runs == 1;
    }
    int best = 0; /* the newest major the driver runs, as the search itself prefers */
    for (size_t k = 0; k < np; k++)
        if (plan[k].kind == CUDALOAD_FIX_PIP_INSTALL && plan[k].runs == 1 && plan[k].major > best) best = plan[k].major;
    size_t out = 0;
    int kept_other = 0;
    for (size_t k = 0; k < np; k++) {
        const plan_item *it = &plan[k];
        if (it->kind == CUDALOAD_FIX_PIP_INSTALL &&
            ((it->runs == 1 && it->major < best) || (it->runs == 0 && (any_runs || kept_other++))))
            continue;
        plan[out++] = *it;
    }
    return out;
}

/* The catalogue's SONAME of a library that has one for every major (the driver's libcuda.so.1). */
static const char *row_soname(cudaload_lib lib) {
    cudaload_catalogue_info c = {.size = sizeof c};
    return cudaload_catalogue_entry(lib, &c) == CUDALOAD_OK && c.sonames[0] ? c.sonames[0] : "the library";
}

/* Words the plan: each fix a line in out (probe_note), for the program python names (NULL:
 * cudaload-probe). Alternatives (pip commands of two majors, a pip command or a driver upgrade)
 * after the first read "or ...". */
static void word_plan(const plan_item *plan, size_t np, const cudaload_library_info *drv, const char *python, char **out,
                      int *n_out) {
    char pip[PATH_MAX + 16], words[2048];
    pip_command(python, pip, sizeof pip);
    int dv = driver_version(drv), alternatives = 0;
    for (size_t k = 0; k < np; k++) {
        const plan_item *it = &plan[k];
        const char *or = alternatives ? "or " : "";
        switch (it->kind) {
        case CUDALOAD_FIX_PIP_INSTALL:
            shell_words(it->reqs, words, sizeof words);
            if (it->runs == 1)
                probe_note(out, n_out, "%s`%s install %s` (this driver runs CUDA %d.%d)", or, pip, words, dv / 1000,
                           dv % 1000 / 10);
            else if (it->runs == 0)
                probe_note(out, n_out, "%supgrade the NVIDIA driver (it runs CUDA %d.%d; these wheels need a CUDA %d "
                           "driver), then `%s install %s`", or, dv / 1000, dv % 1000 / 10, it->major, pip, words);
            else
                probe_note(out, n_out, "%s`%s install %s` (CUDA %d)", or, pip, words, it->major);
            alternatives = 1;
            break;
        case CUDALOAD_FIX_UPGRADE_DRIVER:
            if (dv)
                probe_note(out, n_out, "%supgrade the NVIDIA driver to branch >= %d for CUDA %d (it runs CUDA %d.%d)", or,
                           it->branch, it->major, dv / 1000, dv % 1000 / 10);
            else
                probe_note(out, n_out, "%supgrade the NVIDIA driver to branch >= %d for CUDA %d", or, it->branch, it->major);
            alternatives = 1;
            break;
        case CUDALOAD_FIX_INSTALL_DRIVER: {
            const char *so = row_soname(it->lib->lib);
            probe_note(out, n_out, "install the NVIDIA driver (it provides %s; pip wheels never do); in a container, "
                       "start it with the GPUs exposed (`docker run --gpus all`, NVIDIA Container Toolkit); or set %s to "
                       "the absolute path of %s", so, it->setting ? it->setting : "its variable", so);
            break;
        }
        case CUDALOAD_FIX_CHECK_SETTING:
            if (it->setting && strncmp(it->setting, "CUDALOAD_", 9) == 0)
                probe_note(out, n_out, "point %s at a usable file, or `unset %s`: the file it names was refused for %s "
                           "(above)", it->setting, it->setting, it->lib->name);
            else
                probe_note(out, n_out, "correct %s: the file it names was refused for %s (above)",
                           it->setting ? it->setting : "the exact file given", it->lib->name);
            break;
        case CUDALOAD_FIX_NONE: break;
        }
    }
}

/* Whether a library of the list was not found in the search (its wheels may be elsewhere). */
static int any_not_found(const probe_lib *const *libs, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (libs[i]->info.status == CUDALOAD_ERROR_NOT_FOUND && !(libs[i]->info.lib == CUDALOAD_LIB_DRIVER)) return 1;
    return 0;
}

/* The fixes of the libraries that failed, worded into out: the plan, then, when a library was
 * not found and a pip command is given, where else to look. */
static void library_fixes(const probe_lib *const *libs, size_t n, const cudaload_library_info *drv, const char *python,
                          char **out, int *n_out, plan_item *plan, size_t *n_plan) {
    size_t np = plan_fixes(libs, n, drv, plan);
    *n_plan = np;
    word_plan(plan, np, drv, python, out, n_out);
    int pip = 0;
    for (size_t k = 0; k < np; k++) pip |= plan[k].kind == CUDALOAD_FIX_PIP_INSTALL;
    if (pip && any_not_found(libs, n)) probe_note(out, n_out, "%s", elsewhere_hint(python));
}

/* A driver that shows no device: what to check. */
static void device_fixes(char **out, int *n_out) {
    /* the driver's own answer first: a libcuda that does not go with the kernel module */
    const cudaload_library_info *drv = NULL;
    cudaload_library_info d = {.size = sizeof d};
    if (cudaload_get_library_info(CUDALOAD_LIB_DRIVER, &d) == CUDALOAD_OK && d.status == CUDALOAD_OK) drv = &d;
    int r = cudaload_device_cu_result();
    if (drv && r == CUDA_ERROR_SYSTEM_DRIVER_MISMATCH) {
        probe_note(out, n_out, "the libcuda taken (%s) does not go with the kernel module (%s): a forward-compatibility "
                   "libcuda (cuda-compat) that is not of a newer branch, or another driver install's; take the "
                   "system's: `unset %s`, or take the compat directory out of `LD_LIBRARY_PATH`", drv->path,
                   drv->driver_branch ? drv->driver_branch : "see /proc/driver/nvidia/version", drv->env_name);
        return;
    }
    if (drv && r == CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE) {
        /* taken by libcudaload itself (COMPAT_TAKEN), or named by the user */
        int automatic = 0;
        for (size_t i = 0; drv->details && i < drv->n_candidates; i++)
            if (drv->candidates[i].result == CUDALOAD_OK && drv->details[i].reason == CUDALOAD_REASON_COMPAT_TAKEN) automatic = 1;
        probe_note(out, n_out, "this GPU does not run a forward-compatibility libcuda (%s): take the system's driver "
                   "(`%s %s`) and a runtime of the CUDA it runs, or upgrade the NVIDIA driver", drv->path,
                   automatic ? "export" : "unset", automatic ? "CUDALOAD_COMPAT=never" : drv->env_name);
        return;
    }
    const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
    if (cvd) probe_note(out, n_out, "CUDA_VISIBLE_DEVICES=%s may hide the GPUs: `unset CUDA_VISIBLE_DEVICES`", cvd);
    probe_note(out, n_out, "check that `nvidia-smi` lists a GPU; in a container, start it with the GPUs exposed "
               "(`docker run --gpus all`)");
}

size_t probe_fix_lines(const char *python, const cudaload_lib *libs, size_t n, int devices, char **lines, size_t max) {
    probe_lib *l = calloc(n + 1, sizeof *l);
    const probe_lib **lp = calloc(n + 1, sizeof *lp);
    char *out[MAX_NOTES];
    int n_out = 0;
    if (!l || !lp) {
        free(l);
        free(lp);
        return 0;
    }
    probe_lib_fill(CUDALOAD_LIB_DRIVER, &l[n]);
    for (size_t i = 0; i < n; i++) probe_lib_fill(libs[i], &l[i]), lp[i] = &l[i];
    plan_item plan[MAX_PLAN];
    size_t np;
    library_fixes(lp, n, &l[n].info, python, out, &n_out, plan, &np);
    if (devices) device_fixes(out, &n_out);
    size_t k = 0;
    for (int i = 0; i < n_out; i++)
        if (k < max) lines[k++] = out[i];
        else free(out[i]);
    free(l);
    free(lp);
    return k;
}

/* ---- the environment ---- */

/* What libcudaload took, in words for the LD_LIBRARY_PATH warning and its fix; NULL when it
 * took nothing. */
static const char *taken_words(const cudaload_library_info *l) {
    if (l->status != CUDALOAD_OK || !l->path) return NULL;
    switch (l->source) {
    case CUDALOAD_SOURCE_CALLER:
    case CUDALOAD_SOURCE_SELF:
    case CUDALOAD_SOURCE_VENV: return "the pip wheels";
    case CUDALOAD_SOURCE_CONDA: return "the conda environment's copy";
    case CUDALOAD_SOURCE_CUDA_HOME: return "the CUDA_HOME/CUDA_PATH toolkit";
    case CUDALOAD_SOURCE_OVERRIDE: return "the copy the CUDALOAD_* override names";
    case CUDALOAD_SOURCE_LOADED: return "the copy already loaded in the process";
    default: return "the copy libcudaload took";
    }
}

/* A root other programs cannot see through LD_LIBRARY_PATH: a site-packages the search had. */
static const cudaload_root *wheel_root(const probe *p) {
    for (size_t i = 0; i < p->n_roots; i++)
        if (p->roots[i].exists && (p->roots[i].source == CUDALOAD_SOURCE_CALLER || p->roots[i].source == CUDALOAD_SOURCE_SELF ||
                                   p->roots[i].source == CUDALOAD_SOURCE_VENV))
            return &p->roots[i];
    return NULL;
}

/* LD_LIBRARY_PATH: a directory holding another copy of a library taken shadows it for every
 * program that loads CUDA by SONAME; a library the system search took from it is said, with the
 * wheels that would replace it when a site-packages was searched. The fix removes just the
 * shadowing directories: LD_LIBRARY_PATH often also names the driver's (in containers). */
static void word_ld_library_path(probe *p) {
    const char *bad[MAX_LLP], *keep[MAX_LLP], *fix_words = NULL;
    int n_bad = 0, n_keep = 0, fix_any = 0;
    char pip[PATH_MAX + 16];
    pip_command(p->python, pip, sizeof pip);
    for (int d = 0; d < p->n_llp_dirs; d++) {
        int shadowing = 0;
        char reqs[1024] = "";
        for (int h = 0; h < p->n_llp_hits; h++) {
            const llp_hit *hit = &p->llp_hits[h];
            if (hit->dir != d) continue;
            const probe_lib *pl = &p->lib[hit->lib];
            const cudaload_library_info *taken = &pl->info;
            const char *name = strrchr(hit->file, '/') + 1;
            if (hit->same && taken->source == CUDALOAD_SOURCE_SYSTEM) {
                probe_note(p->warnings, &p->n_warnings, "%s was taken from LD_LIBRARY_PATH (%s), by the system search: no "
                           "wheel, conda or CUDA_HOME copy was found before it", name, p->llp_dirs[d]);
                cudaload_catalogue_info c = {.size = sizeof c};
                if (cudaload_catalogue_entry(taken->lib, &c) == CUDALOAD_OK)
                    for (int m = 0; m < c.n_majors && m < 2; m++)
                        if (c.majors[m] == taken->major && c.pip_packages[m]) {
                            char req[160];
                            probe_requirement(taken->lib, taken->major, c.pip_packages[m], req, sizeof req);
                            add_word(reqs, sizeof reqs, req);
                        }
            } else if (!hit->same) {
                const char *words = taken_words(taken);
                if (words)
                    probe_note(p->warnings, &p->n_warnings, "LD_LIBRARY_PATH puts %s ahead of %s for every program that "
                               "loads CUDA by SONAME (torch, cupy, ctypes), while libcudaload took %s", hit->file, words,
                               taken->path);
                else
                    probe_note(p->warnings, &p->n_warnings, "LD_LIBRARY_PATH puts %s first for every program that loads "
                               "CUDA by SONAME (torch, cupy, ctypes), while libcudaload took no %s", hit->file, taken->name);
                if (!fix_any) fix_words = words, fix_any = 1;
                shadowing = 1;
            }
        }
        const cudaload_root *w = wheel_root(p);
        if (reqs[0] && w) {
            char words[2048];
            shell_words(reqs, words, sizeof words);
            probe_note(p->fixes, &p->n_fixes, "to use pip wheels instead, install them into the environment of %s: "
                       "`%s install %s`, then take %s out of LD_LIBRARY_PATH", w->path, pip, words, p->llp_dirs[d]);
        }
        if (shadowing) bad[n_bad++] = p->llp_dirs[d];
        else keep[n_keep++] = p->llp_dirs[d];
    }
    if (!n_bad) return;
    char rest[8192] = "", cmd[8192 + 64], why[128];
    size_t len = 0;
    for (int i = 0; i < n_keep; i++) {
        if (i) len = probe_appendf(rest, sizeof rest, len, ":");
        len = probe_shell_word(rest, sizeof rest, len, keep[i]);
    }
    if (n_keep) snprintf(cmd, sizeof cmd, "export LD_LIBRARY_PATH=%s", rest);
    else snprintf(cmd, sizeof cmd, "unset LD_LIBRARY_PATH");
    /* worded by what libcudaload took: wheels, conda, CUDA_HOME, ... */
    if (fix_words) snprintf(why, sizeof why, "so every program takes %s, as libcudaload did", fix_words);
    else snprintf(why, sizeof why, "so it no longer puts a CUDA copy first");
    probe_note(p->fixes, &p->n_fixes, "`%s` (%s %s%s) %s", cmd, n_keep ? "the same without" : "it names only", bad[0],
               n_bad > 1 ? " and the other directories warned about" : "", why);
}

/* Who besides its owner may write a file or directory, in words: every user (o+w; *who
 * "anyone"), else its group (g+w: "its group, group 27 (sudo)"; *who "every member of that
 * group"). */
static void other_writers(const writable_file *f, char *by, size_t n, const char **who) {
    if (f->mode & 02) {
        snprintf(by, n, "every user");
        *who = "anyone";
        return;
    }
    char gname[256];
    const char *g = probe_group_name(f->gid, gname, sizeof gname);
    if (g) snprintf(by, n, "its group, group %u (%s)", f->gid, g);
    else snprintf(by, n, "its group, group %u", f->gid); /* no name for it (no NSS entry) */
    *who = "every member of that group";
}

/* The caller roots the search could not use: said first, since they explain where the libraries
 * came from instead. Named as the program's user gave them: --root for cudaload-probe. */
void probe_word_roots(probe *p) {
    const char *what = p->python ? "the search root" : "--root";
    for (int i = 0; i < p->n_root_warnings; i++) {
        const root_warning *w = &p->root_warnings[i];
        const char *path = p->roots[w->root].path;
        char why[256];
        switch (w->code) {
        case ROOT_WARN_NOT_FOUND:
            probe_note(p->warnings, &p->n_warnings, "%s %s does not exist: nothing was searched there", what, path);
            break;
        case ROOT_WARN_NOT_A_DIRECTORY:
            probe_note(p->warnings, &p->n_warnings, "%s %s is not a directory: nothing was searched there; give a "
                       "site-packages or a library directory (the directory of a library file, not the file)", what, path);
            break;
        case ROOT_WARN_UNREADABLE:
            probe_note(p->warnings, &p->n_warnings, "%s %s cannot be examined (error %d: %s): nothing was searched there",
                       what, path, w->err, probe_error_text(w->err, why, sizeof why));
            break;
        }
    }
}

static void word_environment(probe *p) {
    probe_word_roots(p);
    word_ld_library_path(p);
    for (int i = 0; i < p->n_writable; i++) {
        const writable_file *f = &p->writable[i];
        char by[320];
        const char *who;
        other_writers(f, by, sizeof by, &who);
        if (f->is_dir)
            probe_note(p->warnings, &p->n_warnings, "%s (holding %s) is writable by %s (mode %03o): %s can put another "
                       "library there", f->path, f->holding, by, f->mode, who);
        else
            probe_note(p->warnings, &p->n_warnings, "%s is writable by %s (mode %03o): %s can replace the code this "
                       "process runs", f->path, by, f->mode, who);
    }
    for (int i = 0; i < p->n_relative; i++) {
        char word[PATH_MAX];
        probe_shell_word(word, sizeof word, 0, p->relative[i].value);
        probe_note(p->warnings, &p->n_warnings, "%s=%s is not used: relative values are ignored (the search never "
                   "depends on the current directory); give an absolute path: `export %s=\"$(realpath -- %s)\"`",
                   p->relative[i].name, p->relative[i].value, p->relative[i].name, word);
    }
}

/* ---- the diagnosis ---- */

/* The reason that best explains why lib was not taken: the first candidate refused for the
 * library's own status, else the last candidate's reason. */
static const char *lib_reason(const cudaload_library_info *l) {
    for (size_t c = 0; c < l->n_candidates; c++)
        if (l->candidates[c].result == l->status) return l->candidates[c].reason;
    if (l->n_candidates) return l->candidates[l->n_candidates - 1].reason;
    return NULL;
}

/* The report's libraries in the order their problems are told: the runtime, cublasLt, cuBLAS,
 * the driver (whose absence also explains the rest), then the libraries asked for. */
static size_t problem_order(const probe *p, const probe_lib **out) {
    static const cudaload_lib core[] = {CUDALOAD_LIB_CUDART, CUDALOAD_LIB_CUBLASLT, CUDALOAD_LIB_CUBLAS, CUDALOAD_LIB_DRIVER};
    size_t n = 0;
    for (size_t k = 0; k < sizeof core / sizeof core[0]; k++) out[n++] = &p->lib[core[k]];
    for (size_t i = CUDALOAD_LIB_COUNT_; i < p->n_libs; i++) out[n++] = &p->lib[i];
    return n;
}

void probe_diagnose(probe *p) {
    if (p->init_status == CUDALOAD_ERROR_INVALID_OPTION || p->init_status == CUDALOAD_ERROR_INVALID_ARGUMENT) {
        /* nothing was searched: the bad value is all there is to say */
        probe_note(p->problems, &p->n_problems, "%s", p->init_error[0] ? p->init_error : cudaload_status_string(p->init_status));
        return;
    }
    word_environment(p);
    const probe_lib *libs[PROBE_MAX_LIBS];
    size_t n = problem_order(p, libs);
    for (size_t k = 0; k < n; k++) {
        const cudaload_library_info *l = &libs[k]->info;
        if (l->status == CUDALOAD_OK || l->status == CUDALOAD_ERROR_NOT_ATTEMPTED) continue;
        const char *why = lib_reason(l);
        if (l->status == CUDALOAD_ERROR_NOT_FOUND && !why)
            why = p->system_search ? "no candidate file in the roots above, nor by the system search"
                                   : "no candidate file in the roots above (the system search is scoped out)";
        probe_note(p->problems, &p->n_problems, "%s: %s%s%s", l->name, cudaload_status_string(l->status), why ? ": " : "",
                   why ? why : "");
    }
    library_fixes(libs, n, LIB(p, CUDALOAD_LIB_DRIVER), p->python, p->fixes, &p->n_fixes, p->plan, &p->n_plan);
    /* a cuBLAS taken with no cublasLt located for it (the library reports none): libcublas
     * cannot load without it, so it is a problem, not a silent "not attempted" */
    if (LIB(p, CUDALOAD_LIB_CUBLAS)->status == CUDALOAD_OK && LIB(p, CUDALOAD_LIB_CUBLASLT)->status == CUDALOAD_ERROR_NOT_ATTEMPTED)
        probe_note(p->problems, &p->n_problems, "cublasLt: not located, while cublas was (%s): libcublas cannot be loaded "
                   "without it", LIB(p, CUDALOAD_LIB_CUBLAS)->path);
    if (!p->find_only && LIB(p, CUDALOAD_LIB_DRIVER)->status == CUDALOAD_OK && p->dev_status != CUDALOAD_OK &&
        p->dev_status != CUDALOAD_ERROR_NOT_ATTEMPTED) {
        probe_note(p->problems, &p->n_problems, "devices: %s", p->dev_error[0] ? p->dev_error : cudaload_status_string(p->dev_status));
        device_fixes(p->fixes, &p->n_fixes);
    }
    int dv = driver_version(LIB(p, CUDALOAD_LIB_DRIVER));
    for (int i = 0; i < p->ndev && i < MAX_DEVICES; i++)
        if (p->dev[i].runnable == CUDALOAD_ERROR_DRIVER_TOO_OLD)
            probe_note(p->warnings, &p->n_warnings, "device %d: the bundled kernels, built by CUDA %d.%d, need a newer "
                       "driver than this one (CUDA %d.%d); SAXPY and SGEMM fall back to cuBLAS until the NVIDIA driver is "
                       "upgraded", i, p->kinfo.toolkit_version / 1000, p->kinfo.toolkit_version % 1000 / 10, dv / 1000,
                       dv % 1000 / 10);
    /* minor version compatibility: taken, with what does not work said, and how to align them */
    for (size_t i = 0; i < p->n_libs; i++) {
        const cudaload_library_info *l = LIB(p, i);
        if (l->status != CUDALOAD_OK || !l->newer_than_driver) continue;
        int cv = l->cuda_version;
        cudaload_catalogue_info c = {.size = sizeof c};
        const char *pkg = cudaload_catalogue_entry(l->lib, &c) == CUDALOAD_OK && c.n_majors > 0 && c.majors[0] == cv / 1000
                              ? c.pip_packages[0]
                              : NULL;
        char pin[160] = "";
        if (pkg) snprintf(pin, sizeof pin, ", or take the driver's minor: `pip install '%s==%d.%d.*'`", pkg, dv / 1000, dv % 1000 / 10);
        probe_note(p->warnings, &p->n_warnings, "%s is CUDA %d.%d, newer than this driver's CUDA %d.%d (cuDriverGetVersion %d): it "
                   "runs under minor version compatibility, but its calls that need %d.%d return "
                   "cudaErrorCallRequiresNewerDriver (36) and PTX built by a CUDA %d.%d toolkit does not JIT here; upgrade the "
                   "NVIDIA driver to one for CUDA %d.%d%s", l->name, cv / 1000, cv % 1000 / 10, dv / 1000, dv % 1000 / 10, dv,
                   cv / 1000, cv % 1000 / 10, cv / 1000, cv % 1000 / 10, cv / 1000, cv % 1000 / 10, pin);
    }
    for (int i = 0; p->selftest_attempted && i < probe_selftest_count(p); i++) {
        const char *name;
        int dev;
        const test_result *t = probe_selftest_at(p, i, &name, &dev);
        if (!t->ran) continue;
        char on[32] = "";
        if (p->ndev > 1) snprintf(on, sizeof on, " on device %d", dev);
        if (t->error[0]) probe_note(p->problems, &p->n_problems, "self-test %s%s: %s", name, on, t->error);
        else if (!t->pass)
            probe_note(p->problems, &p->n_problems, "self-test %s%s: max relative error %.3g exceeds 1e-5 (backend %s)",
                       name, on, t->max_rel_err, t->backend);
    }
}

int probe_exit_code_of(const probe *p) {
    if (p->init_status == CUDALOAD_ERROR_INVALID_OPTION || p->init_status == CUDALOAD_ERROR_INVALID_ARGUMENT)
        return PROBE_EXIT_USAGE;
    int extra_missing = 0;
    for (size_t i = CUDALOAD_LIB_COUNT_; i < p->n_libs; i++) extra_missing |= LIB(p, i)->status != CUDALOAD_OK;
    if (LIB(p, CUDALOAD_LIB_CUDART)->status != CUDALOAD_OK || LIB(p, CUDALOAD_LIB_CUBLASLT)->status != CUDALOAD_OK ||
        LIB(p, CUDALOAD_LIB_CUBLAS)->status != CUDALOAD_OK || extra_missing)
        return PROBE_EXIT_LIB_MISSING;
    if (LIB(p, CUDALOAD_LIB_DRIVER)->status != CUDALOAD_OK || (!p->find_only && (p->dev_status != CUDALOAD_OK || p->ndev < 1)))
        return PROBE_EXIT_NO_GPU;
    for (int i = 0; p->selftest_attempted && i < probe_selftest_count(p); i++) {
        const test_result *t = probe_selftest_at(p, i, NULL, NULL);
        if (t->ran && (!t->pass || t->error[0])) return PROBE_EXIT_SELFTEST;
    }
    return PROBE_EXIT_OK;
}
