/* SPDX-License-Identifier: Apache-2.0 */
/*
 * walk_majors.c -- which CUDA major a candidate belongs to, before it is loaded: from its
 * DT_SONAME or name when only one flavor of the row has it, from the flavor's own wheel
 * directory, or, where two majors' wheels share a directory, from the pip package installed in
 * that site-packages. When nothing tells, the major is 0 and the version the loaded copy reports
 * decides (walk_file.c). Also the majors a row is searched in, newest first.
 */
#define _GNU_SOURCE
#include "cudaload_tables.h"
#include "internal.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define G cl_ctx

/* The CUDA major a file belongs to by its DT_SONAME (or, without one, its name). */
int cl_major_of_file(int lib, const char *path) {
    const cl_row *row = cl_row_of(lib);
    char *so = cl_elf_file_soname(path);
    int major = so ? cl_row_major_of_soname(row, so) : 0;
    free(so);
    if (!major) {
        const char *base = strrchr(path, '/');
        major = cl_row_major_of_soname(row, base ? base + 1 : path);
    }
    return major;
}

/* CUDA majors to try for lib, newest first: the process's major once pinned. */
size_t cl_majors_for(int lib, int majors[CL_MAX_FLAVORS]) {
    const cl_row *row = cl_row_of(lib);
    size_t n = 0;
    for (size_t f = 0; f < CL_MAX_FLAVORS; f++) {
        const cl_flavor *fl = &row->flavor[f];
        if (!fl->soname || !fl->major) continue;
        if (G.major_pin && fl->major != G.major_pin) continue;
        majors[n++] = fl->major;
    }
    return n;
}

/* Is a wheel of pip package pkg installed in site-packages dir root (its <name>-<version>.dist-info
 * directory, the name normalised as pip writes it: lower case, '-' and '.' as '_')? */
static int cl_has_dist_info(const char *root, const char *pkg) {
    char want[96];
    size_t n = 0;
    for (const char *p = pkg; *p && n < sizeof want - 2; p++)
        want[n++] = (char)(*p == '-' || *p == '.' ? '_' : (*p >= 'A' && *p <= 'Z' ? *p + 32 : *p));
    want[n++] = '-';
    want[n] = 0;
    DIR *d = opendir(root);
    if (!d) return 0;
    int found = 0;
    struct dirent *e;
    while (!found && (e = readdir(d))) {
        size_t l = strlen(e->d_name);
        found = strncasecmp(e->d_name, want, n) == 0 && l > 10 && strcmp(e->d_name + l - 10, ".dist-info") == 0;
    }
    closedir(d);
    return found;
}

/* The major a file found in a directory belongs to: a SONAME no other flavor has tells; so does
 * the flavor's own wheel directory when no other flavor shares it; where two majors' wheels share
 * a directory (cuDNN's nvidia/cudnn/lib), the root's installed package does (nvidia-cudnn-cu13);
 * otherwise (a libcurand.so.10 in a plain directory) nothing tells, and only the version may. */
int cl_major_in_dir(const cl_row *row, const cl_flavor *fl, const char *root, const char *dir) {
    if (cl_row_major_of_soname(row, fl->soname)) return fl->major;
    const char *wheel_dirs[2] = {fl->wheel_dir, fl->alt_dir};
    int in_wheel_dir = 0;
    for (size_t i = 0; i < 2 && !in_wheel_dir; i++) {
        if (!wheel_dirs[i]) continue;
        char *wd = cl_path_join(root, wheel_dirs[i]);
        in_wheel_dir = wd && strcmp(wd, dir) == 0;
        free(wd);
    }
    if (!in_wheel_dir) return 0;
    int shared = 0, other_major = 0, others_installed = 0;
    for (size_t f = 0; f < CL_MAX_FLAVORS; f++) {
        const cl_flavor *o = &row->flavor[f];
        if (o == fl || !o->soname) continue;
        int same_dir = (o->wheel_dir && fl->wheel_dir && strcmp(o->wheel_dir, fl->wheel_dir) == 0) ||
                       (o->alt_dir && fl->wheel_dir && strcmp(o->alt_dir, fl->wheel_dir) == 0) ||
                       (o->wheel_dir && fl->alt_dir && strcmp(o->wheel_dir, fl->alt_dir) == 0);
        shared |= same_dir;
        if (same_dir && o->pkg && cl_has_dist_info(root, o->pkg)) {
            others_installed++;
            other_major = o->major;
        }
    }
    if (!shared) return fl->major;
    int mine = fl->pkg && cl_has_dist_info(root, fl->pkg);
    if (mine && !others_installed) return fl->major;
    if (!mine && others_installed == 1) return other_major; /* the file is the other major's */
    return 0;
}
