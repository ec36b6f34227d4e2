/*
 * probe_platform_windows.c -- probe_platform.h on Windows (mingw-w64). Small on purpose: the probe
 * reads everything else through libcudaload's public API. POSIX: probe_platform_posix.c.
 */
#include "probe_platform.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
