/* SPDX-License-Identifier: Apache-2.0 */
/*
 * platform_windows.c -- the platform layer on Windows (platform.h), built with mingw-w64.
 *
 * Libraries are opened by absolute path with LoadLibraryExW(LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR |
 * LOAD_LIBRARY_SEARCH_DEFAULT_DIRS): a DLL's own dependencies come first from its directory,
 * then the application directory and System32, never the current directory or PATH. A bare
 * name (the system search: nvcuda.dll, nvml.dll) is looked up in the application directory and
 * System32 only. A copy already loaded is found by GetModuleHandleExW, which takes a reference
 * as dlopen(RTLD_NOLOAD) does. Paths cross this file as UTF-8 with '/' separators; Windows gets
 * wide strings with '\'.
 */
#include "internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

#define CL_WPATH_MAX 32768

/* UTF-8 path -> wide path with '\' separators (malloc'd), or NULL. */
static wchar_t *cl_wide(const char *s) {
    int n = MultiByteToWideChar(CP_UTF8, 0, s, -1, NULL, 0);
    if (n <= 0) return NULL;
    wchar_t *w = malloc((size_t)n * sizeof *w);
    if (!w) return NULL;
    MultiByteToWideChar(CP_UTF8, 0, s, -1, w, n);
    for (wchar_t *p = w; *p; p++)
        if (*p == L'/') *p = L'\\';
    return w;
}

/* Wide path -> UTF-8 with '/' separators (malloc'd), or NULL. The \\?\ prefix of
 * GetFinalPathNameByHandleW is dropped (\\?\UNC\server -> //server). */
static char *cl_narrow(const wchar_t *w) {
    if (wcsncmp(w, L"\\\\?\\UNC\\", 8) == 0) w += 6; /* keep two separators for //server */
    else if (wcsncmp(w, L"\\\\?\\", 4) == 0) w += 4;
    int n = WideCharToMultiByte(CP_UTF8, 0, w, -1, NULL, 0, NULL, NULL);
    if (n <= 0) return NULL;
    char *s = malloc((size_t)n);
    if (!s) return NULL;
    WideCharToMultiByte(CP_UTF8, 0, w, -1, s, n, NULL, NULL);
    for (char *p = s; *p; p++)
        if (*p == '\\') *p = '/';
    if (w[0] == L'\\' && w[1] == L'\\' && s[0] == '/' && s[1] != '/') s[0] = '/'; /* UNC kept */
    return s;
}

/* The text of a Windows error code, without its trailing newline. */
static void cl_win_error(cl_buf *why, const char *what, DWORD code) {
    char text[256] = "";
    DWORD n = FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL, code, 0, text,
                             sizeof text, NULL);
    while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == '\r' || text[n - 1] == ' ')) text[--n] = 0;
    cl_buf_printf(why, "%s failed: error %lu%s%s", what, (unsigned long)code, n ? ": " : "", text);
}

static const char *cl_pe_machine_name(unsigned m) {
    switch (m) {
    case 0x8664: return "x86_64";
    case 0xaa64: return "arm64";
    case 0x14c: return "i386";
    default: return "unknown machine";
    }
}

cudaload_status cl_pe_check_header(const unsigned char *hdr, size_t n, unsigned long long file_size, cl_buf *why) {
    if (file_size == 0) {
        cl_buf_printf(why, "empty file (0 bytes)");
        return CUDALOAD_ERROR_NOT_FOUND;
    }
    if (n < 64 || hdr[0] != 'M' || hdr[1] != 'Z') {
        cl_buf_printf(why, "not a PE file (%llu bytes, does not start with MZ)", file_size);
        return CUDALOAD_ERROR_NOT_FOUND;
    }
    unsigned long pe = (unsigned long)hdr[0x3c] | (unsigned long)hdr[0x3d] << 8 | (unsigned long)hdr[0x3e] << 16 |
                       (unsigned long)hdr[0x3f] << 24;
    /* the PE signature, the COFF header (20 bytes) and the optional header's magic */
    if (pe > n - 26 || pe + 26 > n) {
        cl_buf_printf(why, "truncated PE: file is %llu bytes, its PE header is not in the first %zu", file_size, n);
        return CUDALOAD_ERROR_NOT_FOUND;
    }
    const unsigned char *p = hdr + pe;
    if (memcmp(p, "PE\0\0", 4) != 0) {
        cl_buf_printf(why, "not a PE file (an MZ stub without a PE header: a DOS program)");
        return CUDALOAD_ERROR_NOT_FOUND;
    }
    unsigned machine = (unsigned)p[4] | (unsigned)p[5] << 8;
    unsigned characteristics = (unsigned)p[22] | (unsigned)p[23] << 8;
    unsigned magic = (unsigned)p[24] | (unsigned)p[25] << 8;
    if (machine != 0x8664) {
        cl_buf_printf(why, "PE for %s (machine 0x%x), this process is x86_64 (machine 0x8664)",
                      cl_pe_machine_name(machine), machine);
        return CUDALOAD_ERROR_NOT_FOUND;
    }
    if (magic != 0x20b) {
        cl_buf_printf(why, "PE32 (32-bit) image, this process is 64-bit");
        return CUDALOAD_ERROR_NOT_FOUND;
    }
    if (!(characteristics & 0x2000 /* IMAGE_FILE_DLL */)) {
        cl_buf_printf(why, "PE is not a DLL (characteristics 0x%x)", characteristics);
        return CUDALOAD_ERROR_NOT_FOUND;
    }
    /* SizeOfHeaders (optional header offset 60) must lie inside the file: a short download ends before */
    if (pe + 24 + 64 <= n) {
        const unsigned char *o = p + 24 + 60;
        unsigned long long headers = (unsigned long long)o[0] | (unsigned long long)o[1] << 8 |
                                     (unsigned long long)o[2] << 16 | (unsigned long long)o[3] << 24;
        if (headers > file_size) {
            cl_buf_printf(why, "truncated PE: file is %llu bytes, its headers need %llu", file_size, headers);
            return CUDALOAD_ERROR_NOT_FOUND;
        }
    }
    return CUDALOAD_OK;
}

/* Opens a candidate once: the header and the identity are read from this handle. */
cudaload_status cl_file_open(const char *path, cl_file *out, cl_buf *why) {
    out->fd = -1;
    wchar_t *w = cl_wide(path);
    if (!w) return CUDALOAD_ERROR_OUT_OF_MEMORY;
    DWORD attr = GetFileAttributesW(w);
    if (attr == INVALID_FILE_ATTRIBUTES) {
        cl_win_error(why, "GetFileAttributesW", GetLastError());
        free(w);
        return CUDALOAD_ERROR_NOT_FOUND;
    }
    if (attr & FILE_ATTRIBUTE_DIRECTORY) {
        cl_buf_printf(why, "is a directory, not a library file");
        free(w);
        return CUDALOAD_ERROR_NOT_FOUND;
    }
    HANDLE f = CreateFileW(w, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL, OPEN_EXISTING,
                           FILE_ATTRIBUTE_NORMAL, NULL);
    free(w);
    if (f == INVALID_HANDLE_VALUE) {
        cl_buf_printf(why, "cannot read: ");
        cl_win_error(why, "CreateFileW", GetLastError());
        return CUDALOAD_ERROR_NOT_FOUND;
    }
    unsigned char hdr[4096];
    DWORD got = 0;
    LARGE_INTEGER size = {0};
    BY_HANDLE_FILE_INFORMATION info;
    BOOL ok = GetFileSizeEx(f, &size) && ReadFile(f, hdr, sizeof hdr, &got, NULL) && GetFileInformationByHandle(f, &info);
    DWORD e = GetLastError();
    if (!ok) {
        CloseHandle(f);
        cl_buf_printf(why, "cannot read: ");
        cl_win_error(why, "ReadFile", e);
        return CUDALOAD_ERROR_NOT_FOUND;
    }
    cudaload_status st = cl_pe_check_header(hdr, got, (unsigned long long)size.QuadPart, why);
    if (st != CUDALOAD_OK) {
        CloseHandle(f);
        return st;
    }
    out->fd = (long long)(intptr_t)f;
    out->id.dev = info.dwVolumeSerialNumber;
    out->id.ino = (unsigned long long)info.nFileIndexHigh << 32 | info.nFileIndexLow;
    return CUDALOAD_OK;
}

void cl_file_close(cl_file *f) {
    if (f->fd != -1) CloseHandle((HANDLE)(intptr_t)f->fd);
    f->fd = -1;
}

/* The module's file, by the name the loader recorded (Windows has no /proc/self/maps). */
int cl_file_is_mapped(const cl_file *f, void *handle, cl_buf *why) {
    char *mapped = cl_handle_path(handle);
    cl_file_id m = {0, 0};
    int found = mapped && cl_plat_file_id(mapped, &m);
    free(mapped);
    if (found && m.dev == f->id.dev && m.ino == f->id.ino) return 1;
    cl_buf_printf(why, "the file changed between its check and LoadLibraryExW: the file loaded (volume %llu, index %llu) "
                       "is not the file checked (volume %llu, index %llu)",
                  m.dev, m.ino, f->id.dev, f->id.ino);
    return 0;
}

void *cl_open_path(const char *path, cl_buf *why) {
    wchar_t *w = cl_wide(path);
    if (!w) return NULL;
    /* an absolute path: its dependencies from its own directory first, then the safe defaults;
     * a bare name (the driver): the application directory and System32, never PATH or the
     * current directory */
    DWORD flags = cl_plat_is_absolute(path) ? LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR | LOAD_LIBRARY_SEARCH_DEFAULT_DIRS
                                            : LOAD_LIBRARY_SEARCH_APPLICATION_DIR | LOAD_LIBRARY_SEARCH_SYSTEM32;
    /* no "cannot find DLL" dialog box for a missing dependency: a reason code instead */
    DWORD old_mode = 0;
    SetThreadErrorMode(SEM_FAILCRITICALERRORS | SEM_NOOPENFILEERRORBOX, &old_mode);
    HMODULE h = LoadLibraryExW(w, NULL, flags);
    DWORD e = GetLastError();
    SetThreadErrorMode(old_mode, NULL);
    free(w);
    if (!h) cl_win_error(why, "LoadLibraryExW", e);
    return (void *)h;
}

int cl_plat_make_global(const char *path) {
    (void)path; /* no global scope: the loader matches a loaded DLL by its name */
    return 1;
}

char *cl_handle_path(void *handle) {
    wchar_t *buf = malloc(CL_WPATH_MAX * sizeof *buf);
    if (!buf) return NULL;
    DWORD n = GetModuleFileNameW((HMODULE)handle, buf, CL_WPATH_MAX);
    char *out = NULL;
    if (n > 0 && n < CL_WPATH_MAX) {
        char *mapped = cl_narrow(buf);
        /* the loader's name, resolved like realpath for the report (junctions, 8.3 names) */
        out = mapped ? cl_plat_realpath(mapped) : NULL;
        if (!out) out = mapped;
        else free(mapped);
    }
    free(buf);
    return out;
}

void *cl_open_loaded(const char *soname, char **real_path) {
    *real_path = NULL;
    wchar_t *w = cl_wide(soname);
    if (!w) return NULL;
    HMODULE h = NULL;
    /* flags 0: a reference is taken (released by cl_plat_close), as RTLD_NOLOAD does; matched
     * among the loaded modules by name, no search on disk */
    if (!GetModuleHandleExW(0, w, &h)) h = NULL;
    free(w);
    if (h) *real_path = cl_handle_path(h);
    return (void *)h;
}

void *cl_plat_open_if_loaded(const char *path) {
    wchar_t *w = cl_wide(path);
    HMODULE h = NULL;
    if (w && !GetModuleHandleExW(0, w, &h)) h = NULL; /* flags 0: a reference, as RTLD_NOLOAD */
    free(w);
    return (void *)h;
}

char *cl_elf_file_soname(const char *path) {
    (void)path; /* a DLL's name is its file name: nothing to read */
    return NULL;
}

void *cl_plat_sym(void *handle, const char *name, cl_buf *why) {
    FARPROC f = GetProcAddress((HMODULE)handle, name);
    if (!f) {
        if (why) cl_win_error(why, "GetProcAddress", GetLastError());
        return NULL;
    }
    void *p;
    memcpy(&p, &f, sizeof p);
    return p;
}

/* GetProcAddress reads the module's export table itself: nothing to read here */
int cl_plat_symtab_open(void *handle, cl_plat_symtab *st) {
    (void)handle;
    memset(st, 0, sizeof *st);
    return 0;
}

void *cl_plat_symtab_find(const cl_plat_symtab *st, const char *name, int *ask_loader) {
    (void)st;
    (void)name;
    *ask_loader = 1;
    return NULL;
}

void cl_plat_close(void *handle) {
    if (handle) FreeLibrary((HMODULE)handle);
}

char *cl_plat_self_path(const void *addr) {
    HMODULE h = NULL;
    if (!GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
                            (LPCWSTR)addr, &h))
        return NULL;
    return cl_handle_path(h);
}

char *cl_plat_realpath(const char *path) {
    if (!path || !path[0]) return NULL;
    wchar_t *w = cl_wide(path);
    if (!w) return NULL;
    /* FILE_FLAG_BACKUP_SEMANTICS opens directories too */
    HANDLE f = CreateFileW(w, 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL, OPEN_EXISTING,
                           FILE_FLAG_BACKUP_SEMANTICS, NULL);
    free(w);
    if (f == INVALID_HANDLE_VALUE) return NULL;
    wchar_t *buf = malloc(CL_WPATH_MAX * sizeof *buf);
    char *out = NULL;
    if (buf) {
        DWORD n = GetFinalPathNameByHandleW(f, buf, CL_WPATH_MAX, FILE_NAME_NORMALIZED | VOLUME_NAME_DOS);
        if (n > 0 && n < CL_WPATH_MAX) out = cl_narrow(buf);
        free(buf);
    }
    CloseHandle(f);
    return out;
}

int cl_plat_is_absolute(const char *path) {
    if (!path) return 0;
    int drive = ((path[0] >= 'A' && path[0] <= 'Z') || (path[0] >= 'a' && path[0] <= 'z')) && path[1] == ':' &&
                (path[2] == '/' || path[2] == '\\');
    int unc = (path[0] == '/' || path[0] == '\\') && (path[1] == '/' || path[1] == '\\');
    return drive || unc;
}

void cl_plat_path_normalize(char *path) {
    for (char *p = path; p && *p; p++)
        if (*p == '\\') *p = '/';
}

int cl_plat_lexists(const char *path) {
    wchar_t *w = cl_wide(path);
    int r = w && GetFileAttributesW(w) != INVALID_FILE_ATTRIBUTES;
    free(w);
    return r;
}

int cl_plat_unsearchable(const char *path) {
    wchar_t *w = cl_wide(path);
    int r = w && GetFileAttributesW(w) == INVALID_FILE_ATTRIBUTES && GetLastError() == ERROR_ACCESS_DENIED;
    free(w);
    return r;
}

int cl_plat_file_id(const char *path, cl_file_id *id) {
    wchar_t *w = cl_wide(path);
    if (!w) return 0;
    HANDLE f = CreateFileW(w, 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL, OPEN_EXISTING,
                           FILE_FLAG_BACKUP_SEMANTICS, NULL);
    free(w);
    if (f == INVALID_HANDLE_VALUE) return 0;
    BY_HANDLE_FILE_INFORMATION info;
    int ok = GetFileInformationByHandle(f, &info) != 0;
    CloseHandle(f);
    if (ok) {
        id->dev = info.dwVolumeSerialNumber;
        id->ino = (unsigned long long)info.nFileIndexHigh << 32 | info.nFileIndexLow;
    }
    return ok;
}

char *strndup(const char *s, size_t n) {
    size_t l = strnlen(s, n);
    char *p = malloc(l + 1);
    if (!p) return NULL;
    memcpy(p, s, l);
    p[l] = 0;
    return p;
}

void cl_plat_lock_file(FILE *f) { _lock_file(f); }

double cl_plat_now_us(void) {
    LARGE_INTEGER t, f;
    QueryPerformanceCounter(&t);
    QueryPerformanceFrequency(&f);
    return (double)t.QuadPart * 1e6 / (double)f.QuadPart;
}
void cl_plat_unlock_file(FILE *f) { _unlock_file(f); }

/* Windows has no setuid programs: environment overrides are always honoured */
int cl_plat_secure(void) { return 0; }

/* no fork on Windows: nothing to register */
void cl_plat_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void)) {
    (void)prepare;
    (void)parent;
    (void)child;
}

/* Find-only system search: where cl_open_path(name) would look, without loading: the
 * application directory, then System32. */
char *cl_search_system_path(const char *soname, int secure) {
    (void)secure; /* no environment variable is read here */
    wchar_t *buf = malloc(CL_WPATH_MAX * sizeof *buf);
    if (!buf) return NULL;
    char *found = NULL;
    for (int i = 0; i < 2 && !found; i++) {
        DWORD n = i == 0 ? GetModuleFileNameW(NULL, buf, CL_WPATH_MAX) : GetSystemDirectoryW(buf, CL_WPATH_MAX);
        if (n == 0 || n >= CL_WPATH_MAX) continue;
        char *dir = cl_narrow(buf);
        if (dir && i == 0) { /* the executable's directory */
            char *slash = strrchr(dir, '/');
            if (slash) *slash = 0;
        }
        char *p = dir ? cl_path_join(dir, soname) : NULL;
        if (p && cl_plat_lexists(p)) found = cl_plat_realpath(p);
        free(p);
        free(dir);
    }
    free(buf);
    return found;
}
