/* SPDX-License-Identifier: Apache-2.0 */
/*
 * probe_platform_posix.c -- probe_platform.h on Linux and other POSIX systems. Small on purpose:
 * the probe reads everything else through libcudaload's public API. Windows: probe_platform_windows.c.
 */
#define _GNU_SOURCE
#include "probe_platform.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

char *probe_realpath(const char *path) { return path ? realpath(path, NULL) : NULL; }

int probe_is_absolute(const char *path) { return path && path[0] == '/'; }

int probe_exists(const char *path) { return access(path, F_OK) == 0; }

probe_dir_state probe_dir_state_of(const char *path, int *err) {
    struct stat st;
    *err = 0;
    if (stat(path, &st) == 0) return S_ISDIR(st.st_mode) ? PROBE_DIR_OK : PROBE_DIR_NOT_A_DIR;
    if (errno == ENOENT || errno == ENOTDIR) return PROBE_DIR_MISSING;
    *err = errno; /* EACCES on a component, ELOOP, ...: there may be a directory, out of reach */
    return PROBE_DIR_UNREADABLE;
}

const char *probe_error_text(int err, char *buf, size_t n) {
    snprintf(buf, n, "%s", strerror(err));
    return buf;
}

int probe_others_may_write(const char *path, int is_dir, unsigned *mode, unsigned *gid) {
    struct stat st;
    if (stat(path, &st) != 0 || !(st.st_mode & (S_IWOTH | S_IWGRP))) return 0;
    if (is_dir && (st.st_mode & S_ISVTX)) return 0; /* /tmp-like: nobody replaces another's file */
    *mode = (unsigned)st.st_mode & 0777;
    *gid = (unsigned)st.st_gid;
    return 1;
}

const char *probe_group_name(unsigned gid, char *buf, size_t n) {
    struct group *g = getgrgid((gid_t)gid);
    if (!g || !g->gr_name) return NULL; /* no name for it (no NSS entry) */
    snprintf(buf, n, "%s", g->gr_name);
    return buf;
}

