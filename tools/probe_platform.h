/* SPDX-License-Identifier: Apache-2.0 */
/*
 * probe_platform.h -- the probe's few calls that differ between operating systems
 * (probe_platform.c): a canonical path, whether a file exists, who else may write a file, a
 * group's name. On Windows the write check is not done (ACLs, not mode bits: docs/platforms.md).
 */
#ifndef CUDALOAD_PROBE_PLATFORM_H
#define CUDALOAD_PROBE_PLATFORM_H

#include <stddef.h>

/* The canonical absolute path of an existing file, malloc'd ('/' separators), or NULL. */
char *probe_realpath(const char *path);
/* 1 when path is absolute ("/x"; on Windows also "C:/x", "C:\x", "\\server\share"). */
int probe_is_absolute(const char *path);
/* 1 when something exists at path. */
int probe_exists(const char *path);
/* What is at path, for a search root: a directory, nothing (no such file, or a component that
 * is not a directory), something else (a file), or it cannot be examined (*err: the system's
 * error number, e.g. EACCES; 0 otherwise). */
typedef enum probe_dir_state { PROBE_DIR_OK, PROBE_DIR_MISSING, PROBE_DIR_NOT_A_DIR, PROBE_DIR_UNREADABLE } probe_dir_state;
probe_dir_state probe_dir_state_of(const char *path, int *err);
/* The system's words for such an error number into buf ("Permission denied"). */
const char *probe_error_text(int err, char *buf, size_t n);
/* 1 when users other than path's owner may write it (g+w or o+w; a sticky directory never
 * counts), with its mode bits and group; 0 otherwise, and always on Windows. */
int probe_others_may_write(const char *path, int is_dir, unsigned *mode, unsigned *gid);
/* The name of group gid into buf, or NULL when it has none (or on Windows). */
const char *probe_group_name(unsigned gid, char *buf, size_t n);

#endif
