/*
 * probe_platform.c -- probe_platform.h: POSIX first, then Windows (mingw-w64). Small on
 * purpose: the probe reads everything else through libcudaload's public API.
 */
#define _GNU_SOURCE
#include "probe_platform.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef _WIN32
#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

char *probe_realpath(const char *path) { return path ? realpath(path, NULL) : NULL; }

int probe_is_absolute(const char *path) { return path && path[0] == '/'; }

int probe_exists(const char *path) { return access(path, F_OK) == 0; }

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

#else
#include <windows.h>

char *probe_realpath(const char *path) {
    if (!path || GetFileAttributesA(path) == INVALID_FILE_ATTRIBUTES) return NULL;
    char *full = _fullpath(NULL, path, 0);
    for (char *p = full; p && *p; p++)
        if (*p == '\\') *p = '/'; /* libcudaload's separator */
    return full;
}

int probe_is_absolute(const char *path) {
    if (!path) return 0;
    if ((path[0] == '/' || path[0] == '\\') && (path[1] == '/' || path[1] == '\\')) return 1; /* a UNC path */
    return ((path[0] >= 'A' && path[0] <= 'Z') || (path[0] >= 'a' && path[0] <= 'z')) && path[1] == ':' &&
           (path[2] == '/' || path[2] == '\\');
}

int probe_exists(const char *path) { return GetFileAttributesA(path) != INVALID_FILE_ATTRIBUTES; }

/* Windows grants writes by ACL, not by mode bits: not checked here (docs/platforms.md) */
int probe_others_may_write(const char *path, int is_dir, unsigned *mode, unsigned *gid) {
    (void)path, (void)is_dir, (void)mode, (void)gid;
    return 0;
}

const char *probe_group_name(unsigned gid, char *buf, size_t n) {
    (void)gid, (void)buf, (void)n;
    return NULL;
}
#endif
