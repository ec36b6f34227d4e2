/* SPDX-License-Identifier: Apache-2.0 */
/*
 * platform.h -- the few calls that differ between operating systems, one file per OS:
 * platform_posix.c (Linux: dlopen, ELF) and platform_windows.c (LoadLibraryExW, PE). The walk,
 * the search and the rest call these and nothing OS-specific. Paths are UTF-8 with '/' as the
 * separator on every OS (platform_windows.c turns '\' from Windows into '/' and back).
 * Included by internal.h, after cl_buf.
 */
#ifndef CUDALOAD_PLATFORM_H
#define CUDALOAD_PLATFORM_H

#include "cudaload.h"

#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>

/* The separator of a directory list (CUDALOAD_PATH, options.lib_dirs): ':' on POSIX, ';' on
 * Windows, where ':' is in every drive letter (like PATH on each). */
#ifdef _WIN32
#define CL_PATH_LIST_SEP ';'
#else
#define CL_PATH_LIST_SEP ':'
#endif

/* The longest path the system opens, in bytes with its NUL: PATH_MAX on POSIX; on Windows the
 * wide API's limit (platform_windows.c turns paths into \\?\ form where needed). A longer
 * candidate is recorded with PATH_TOO_LONG, never truncated. */
#ifdef _WIN32
#define CL_PATH_LIMIT 32768
#else
#include <limits.h>
#define CL_PATH_LIMIT PATH_MAX
#endif

#ifdef _WIN32
/* what mingw-w64's C library lacks, given by platform_windows.c */
#ifndef O_CLOEXEC
#define O_CLOEXEC _O_NOINHERIT /* a handle not inherited by child processes */
#endif
char *strndup(const char *s, size_t n);
#endif

/* The identity of a file: device and inode (volume serial and file index on Windows). */
typedef struct cl_file_id {
    unsigned long long dev, ino;
} cl_file_id;
/* A candidate file opened once: its header was read from this descriptor (a Windows HANDLE) and
 * its identity taken from it, so that what is loaded can be compared with what was checked. */
typedef struct cl_file {
    long long fd;   /* -1 when not open */
    cl_file_id id;  /* fstat's device and inode; where the kernel shows its mappings as another
                       file (overlayfs: the layer's; btrfs: the file system's device where stat gives
                       the subvolume's), cl_file_is_mapped maps a page of it to learn that one */
} cl_file;
/* Opens path and checks that it is a loadable shared library for this process: exists, a
 * regular file, readable, ELF (PE on Windows), our class and machine, not truncated. OK with
 * *f open (cl_file_close), or a status with the reason in *why and *f closed. */
cudaload_status cl_file_open(const char *path, cl_file *f, cl_buf *why);
void cl_file_close(cl_file *f);
/* 1 when the object handle (cl_open_path of the same path) is the file f: the mapping's device
 * and inode (/proc/self/maps; the file at the loader's name where /proc cannot be read) are f's.
 * 0 with both identities in *why when another file was mapped. */
int cl_file_is_mapped(const cl_file *f, void *handle, cl_buf *why);
/* Pure part of the ELF check, on the first bytes of a file and its size (POSIX only). */
cudaload_status cl_elf_check_header(const unsigned char *hdr, size_t n, unsigned long long file_size,
                                    cl_buf *why);
/* Pure part of the PE check (Windows only). */
cudaload_status cl_pe_check_header(const unsigned char *hdr, size_t n, unsigned long long file_size,
                                   cl_buf *why);
/* Opens a library: an absolute path, or a bare name for the system search (ld.so's on Linux;
 * on Windows the application directory and System32 only, never the current directory or
 * PATH). NULL with the loader's text in *why. */
void *cl_open_path(const char *path, cl_buf *why);
/* A copy of name (SONAME, or DLL file name) already in the process, with its real path, or NULL. */
void *cl_open_loaded(const char *soname, char **real_path);
/* Makes the loaded file at path visible to the symbol lookups of code loaded later (POSIX:
 * RTLD_GLOBAL, never loading it). 1 when it is. Windows has no global scope: a DLL already loaded
 * is matched by its name there, so nothing is needed (1). */
int cl_plat_make_global(const char *path);
/* The file at path when the process has it loaded already (a new reference, released by
 * cl_plat_close), else NULL; never loads it. */
void *cl_plat_open_if_loaded(const char *path);
/* The path the loader recorded for a handle, malloc'd. */
char *cl_handle_path(void *handle);
/* The DT_SONAME of a shared library file, read without loading it; malloc'd or NULL (always
 * NULL on Windows: a DLL's name is its file name). */
char *cl_elf_file_soname(const char *path);
/* An exported symbol, or NULL (with the loader's text in *why when why is not NULL). */
void *cl_plat_sym(void *handle, const char *name, cl_buf *why);
/* A loaded library's own exported symbols, read from its dynamic section in memory, for lookups
 * that take none of the dynamic loader's locks (dlsym waits while another thread runs a dlopen's
 * constructors): cl_plat_symtab_open, then cl_plat_symtab_find. */
typedef struct cl_plat_symtab {
    const void *base;    /* where the library is mapped (NULL: no table, use cl_plat_sym) */
    const void *gnu_hash;
    const void *symtab;
    const char *strtab;
    const unsigned short *versym; /* NULL when the library versions no symbol */
} cl_plat_symtab;
/* 1 when the library's table can be read (ELF with DT_GNU_HASH), else 0: the caller falls back to
 * cl_plat_sym (always on Windows). Takes no lock of the loader. */
int cl_plat_symtab_open(void *handle, cl_plat_symtab *st);
/* The address of name as dlsym would answer for the library's own default-version definition, or
 * NULL when the library does not define it (a symbol of value 0 is no definition to dlsym);
 * *ask_loader = 1, with NULL, when only the loader can answer, and the caller asks cl_plat_sym: a
 * TLS symbol (the calling thread's instance), an IFUNC (whose resolver it runs), a unique object
 * (one per process, maybe another library's), an absolute symbol (the libcs differ on the base). */
void *cl_plat_symtab_find(const cl_plat_symtab *st, const char *name, int *ask_loader);
/* Closes a handle cl_open_path or cl_open_loaded returned. */
void cl_plat_close(void *handle);
/* The file holding the code at addr (libcudaload itself), malloc'd absolute path, or NULL. */
char *cl_plat_self_path(const void *addr);
/* The canonical absolute path of an existing file or directory, malloc'd, or NULL. */
char *cl_plat_realpath(const char *path);
/* Is path absolute ("/x" on POSIX; "C:/x", "C:\x", "\\server\share" on Windows)? */
int cl_plat_is_absolute(const char *path);
/* Writes path with libcudaload's separator, in place: '\' -> '/' on Windows; nothing on POSIX. */
void cl_plat_path_normalize(char *path);
/* Does anything exist at path (a dangling link counts)? */
int cl_plat_lexists(const char *path);
/* Is path out of reach because a directory on the way is not searchable (EACCES)? */
int cl_plat_unsearchable(const char *path);
int cl_plat_file_id(const char *path, cl_file_id *id); /* 1 when found */
/* Environment overrides are ignored: setuid/setgid (AT_SECURE); never on Windows. */
int cl_plat_secure(void);
/* Holds a stream's lock across several writes (flockfile; _lock_file on Windows). */
void cl_plat_lock_file(FILE *f);
/* A monotonic clock in microseconds (the trace's times, CUDALOAD_DEBUG=time). */
double cl_plat_now_us(void);
void cl_plat_unlock_file(FILE *f);
/* pthread_atfork where there is fork; nothing on Windows. */
void cl_plat_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void));

#endif
