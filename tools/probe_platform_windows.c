/* SPDX-License-Identifier: Apache-2.0 */
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

probe_dir_state probe_dir_state_of(const char *path, int *err) {
    DWORD a = GetFileAttributesA(path);
    *err = 0;
    if (a != INVALID_FILE_ATTRIBUTES) return (a & FILE_ATTRIBUTE_DIRECTORY) ? PROBE_DIR_OK : PROBE_DIR_NOT_A_DIR;
    DWORD e = GetLastError();
    if (e == ERROR_FILE_NOT_FOUND || e == ERROR_PATH_NOT_FOUND) return PROBE_DIR_MISSING;
    *err = (int)e; /* ERROR_ACCESS_DENIED, ...: a Windows error code, not an errno */
    return PROBE_DIR_UNREADABLE;
}

const char *probe_error_text(int err, char *buf, size_t n) {
    DWORD len = FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL, (DWORD)err, 0, buf, (DWORD)n, NULL);
    while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == '.')) buf[--len] = 0;
    if (!len) snprintf(buf, n, "Windows error %d", err); /* no text for it */
    return buf;
}

/* Windows grants writes by ACL, not by mode bits: not checked here (docs/platforms.md) */
int probe_others_may_write(const char *path, int is_dir, unsigned *mode, unsigned *gid) {
    (void)path, (void)is_dir, (void)mode, (void)gid;
    return 0;
}

const char *probe_group_name(unsigned gid, char *buf, size_t n) {
    (void)gid, (void)buf, (void)n;
    return NULL;
}
