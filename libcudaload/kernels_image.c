/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kernels_image.c -- where the bundled kernels' fatbin comes from, for kernels_device.c's
 * cuModuleLoadData. One file, two builds:
 *   - the library's (libcudaload.so, libcudaload.a, kernels_image.o): the fatbin that fatbin.S
 *     embeds;
 *   - the Python package's module (make's kernels_image_file.o, CL_KERNELS_IMAGE_FILE): the same
 *     fatbin, read at the first kernel launch from the archive the package carries for extension
 *     builders (its lib/libcudaload.a, which must hold the kernels: an extension links them in),
 *     so that the wheel carries the kernels once. The module links this object before
 *     libcudaload.a, so the archive's kernels_image.o and fatbin.o stay out of it. The fatbin read
 *     must be the one the module was built with, by size and checksum (CL_KERNELS_IMAGE_BYTES,
 *     CL_KERNELS_IMAGE_SUM: tools/image_sum.c); any other is refused, never loaded
 *     (CUDALOAD_ERROR_KERNELS_FILE), and SAXPY/SGEMM then run on cuBLAS.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <stdlib.h>

#if defined(CL_KERNELS_IMAGE_FILE)
#include "image_sum.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MAP_POPULATE
#define MAP_POPULATE 0 /* Linux's: the buffer's pages made at once, not one fault at a time */
#endif

/* the fatbin's member of the archive, and its section there (fatbin.S) */
#define CL_IMAGE_MEMBER "fatbin.o"
#define CL_IMAGE_SECTION ".rodata.cudaload_fatbin"

size_t cl_kernels_image_bytes(void) { return CL_KERNELS_IMAGE_BYTES; }
const char *cl_kernels_image_file(void) { return CL_KERNELS_IMAGE_FILE; }

/* n bytes at off of fd into p: 1, or 0 with why set (a short file counts as a read error) */
static int cl_image_pread(int fd, void *p, size_t n, off_t off, const char *what, cl_buf *why) {
    size_t done = 0;
    while (done < n) {
        ssize_t r = pread(fd, (char *)p + done, n - done, off + (off_t)done);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            cl_buf_printf(why, "cannot read its %s: %s", what, r < 0 ? strerror(errno) : "the file ends first");
            return 0;
        }
        done += (size_t)r;
    }
    return 1;
}

/* The member CL_IMAGE_MEMBER of the ar archive fd (size bytes): its offset and size, or 0 with why.
 * GNU ar's format, which ar and llvm-ar write on Linux: "!<arch>\n", then per member a 60-byte
 * header (its name ending in '/', its size in decimal at byte 48) and its data, padded to 2. */
static int cl_image_member(int fd, off_t size, off_t *off, off_t *len, cl_buf *why) {
    char magic[8];
    if (!cl_image_pread(fd, magic, sizeof magic, 0, "archive header", why)) return 0;
    if (memcmp(magic, "!<arch>\n", 8) != 0) {
        cl_buf_printf(why, "it is not an ar archive");
        return 0;
    }
    for (off_t at = 8; at + 60 <= size;) {
        char h[61];
        if (!cl_image_pread(fd, h, 60, at, "member header", why)) return 0;
        h[60] = '\0';
        char *end;
        errno = 0;
        long long n = strtoll(h + 48, &end, 10);
        if (memcmp(h + 58, "`\n", 2) != 0 || end == h + 48 || errno || n < 0 || n > size - at - 60) {
            cl_buf_printf(why, "its member header at byte %lld is malformed", (long long)at);
            return 0;
        }
        if (memcmp(h, CL_IMAGE_MEMBER "/", sizeof CL_IMAGE_MEMBER) == 0 && h[sizeof CL_IMAGE_MEMBER] == ' ') {
            *off = at + 60, *len = (off_t)n;
            return 1;
        }
        at += 60 + n + (n & 1);
    }
    cl_buf_printf(why, "it has no member %s", CL_IMAGE_MEMBER);
    return 0;
}

/* The section CL_IMAGE_SECTION of the ELF object at off (len bytes) of fd: its offset in the file
 * and size, or 0 with why. An object of this build's kind: 64-bit, little-endian. */
static int cl_image_section(int fd, off_t off, off_t len, off_t *s_off, size_t *s_len, cl_buf *why) {
    Elf64_Ehdr eh;
    if ((off_t)sizeof eh > len) {
        cl_buf_printf(why, "its %s is not an ELF object", CL_IMAGE_MEMBER);
        return 0;
    }
    if (!cl_image_pread(fd, &eh, sizeof eh, off, "ELF header", why)) return 0;
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shstrndx >= eh.e_shnum ||
        eh.e_shoff > (Elf64_Off)len || (Elf64_Off)eh.e_shnum * sizeof(Elf64_Shdr) > (Elf64_Off)len - eh.e_shoff) {
        cl_buf_printf(why, "its %s is not a 64-bit little-endian ELF object with readable section headers", CL_IMAGE_MEMBER);
        return 0;
    }
    Elf64_Shdr *sh = malloc((size_t)eh.e_shnum * sizeof *sh);
    char *names = NULL;
    int found = 0;
    if (!sh) {
        cl_buf_printf(why, "out of memory");
        return 0;
    }
    if (!cl_image_pread(fd, sh, (size_t)eh.e_shnum * sizeof *sh, off + (off_t)eh.e_shoff, "section headers", why)) goto out;
    const Elf64_Shdr *str = &sh[eh.e_shstrndx];
    if (str->sh_offset > (Elf64_Off)len || str->sh_size > (Elf64_Off)len - str->sh_offset || str->sh_size == 0) {
        cl_buf_printf(why, "its %s's section names lie outside it", CL_IMAGE_MEMBER);
        goto out;
    }
    if (!(names = malloc(str->sh_size + 1))) {
        cl_buf_printf(why, "out of memory");
        goto out;
    }
    if (!cl_image_pread(fd, names, str->sh_size, off + (off_t)str->sh_offset, "section names", why)) goto out;
    names[str->sh_size] = '\0';
    for (unsigned i = 0; i < eh.e_shnum; i++) {
        if (sh[i].sh_name >= str->sh_size || strcmp(names + sh[i].sh_name, CL_IMAGE_SECTION) != 0) continue;
        if (sh[i].sh_type != SHT_PROGBITS || sh[i].sh_offset > (Elf64_Off)len || sh[i].sh_size > (Elf64_Off)len - sh[i].sh_offset) {
            cl_buf_printf(why, "its %s's section %s lies outside it", CL_IMAGE_MEMBER, CL_IMAGE_SECTION);
            goto out;
        }
        *s_off = off + (off_t)sh[i].sh_offset, *s_len = (size_t)sh[i].sh_size;
        found = 1;
        goto out;
    }
    cl_buf_printf(why, "its %s has no section %s", CL_IMAGE_MEMBER, CL_IMAGE_SECTION);
out:
    free(names);
    free(sh);
    return found;
}

/* The archive beside this module (CL_KERNELS_IMAGE_FILE, relative to the module's directory), its
 * fatbin read and checked into pages of its own (made at once: faulting in 1 MB page by page cost
 * more than reading it). */
cudaload_status cl_kernels_image_get(const void **image, cl_buf *why) {
    *image = NULL;
    double t0 = cl_plat_now_us();
    /* the module's own file: dladdr takes ld.so's lock, and no lock of libcudaload's is held here */
    char *self = cl_plat_self_path((const void *)cl_kernels_image_get);
    if (!self) {
        cl_buf_printf(why, "the bundled kernels are read from %s beside this module, and the module's own path "
                           "cannot be told (dladdr)", CL_KERNELS_IMAGE_FILE);
        return CUDALOAD_ERROR_KERNELS_FILE;
    }
    char *slash = strrchr(self, '/');
    slash[1] = '\0';
    cl_buf path = {0};
    cl_buf_printf(&path, "%s%s", self, CL_KERNELS_IMAGE_FILE);
    free(self);
    cl_buf what = {0};
    cudaload_status st = CUDALOAD_ERROR_KERNELS_FILE;
    unsigned char *p = NULL;
    int fd = open(cl_buf_str(&path), O_RDONLY | O_CLOEXEC);
    off_t size = fd >= 0 ? lseek(fd, 0, SEEK_END) : -1;
    off_t m_off, m_len, s_off;
    size_t s_len = 0;
    if (fd < 0 || size < 0) {
        cl_buf_printf(&what, "%s", strerror(errno));
    } else if (cl_image_member(fd, size, &m_off, &m_len, &what) && cl_image_section(fd, m_off, m_len, &s_off, &s_len, &what)) {
        /* the section holds the fatbin and fatbin.S's one byte after it (cl_fatbin_end's) */
        size_t n = CL_KERNELS_IMAGE_BYTES;
        if (s_len != n + 1) {
            cl_buf_printf(&what, "its fatbin is %zu bytes, and this module was built with one of %zu", s_len ? s_len - 1 : 0, n);
        } else if ((p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0)) ==
                   MAP_FAILED) {
            p = NULL;
            st = CUDALOAD_ERROR_OUT_OF_MEMORY;
            cl_buf_printf(&what, "cannot map %zu bytes for it: %s", n, strerror(errno));
        } else if (cl_image_pread(fd, p, n, s_off, "fatbin", &what)) {
            uint64_t sum = cl_image_sum(p, n);
            if (sum == CL_KERNELS_IMAGE_SUM) {
                st = CUDALOAD_OK;
            } else {
                cl_buf_printf(&what, "its fatbin's checksum is %016llx, and this module was built with %016llx",
                              (unsigned long long)sum, (unsigned long long)CL_KERNELS_IMAGE_SUM);
            }
        }
    }
    if (fd >= 0) close(fd);
    if (st == CUDALOAD_OK) {
        *image = p;
        cl_debug("kernels: %zu bytes read from %s and checked in %.0f us", (size_t)CL_KERNELS_IMAGE_BYTES,
                 cl_buf_str(&path), cl_plat_now_us() - t0);
    } else {
        if (p) munmap(p, CL_KERNELS_IMAGE_BYTES);
        cl_buf_printf(why, "the bundled kernels are read from %s, which the package installs with this module: %s%s",
                      cl_buf_str(&path), cl_buf_str(&what),
                      st == CUDALOAD_ERROR_KERNELS_FILE ? "; reinstall the package" : "");
    }
    cl_buf_free(&what);
    cl_buf_free(&path);
    return st;
}

void cl_kernels_image_release(const void *image) {
    if (image) munmap((void *)image, CL_KERNELS_IMAGE_BYTES);
}

#elif !defined(CL_NO_KERNELS)
/* fatbin.S (fatbin_windows.S) */
extern const unsigned char cl_fatbin_start[];
extern const unsigned char cl_fatbin_end[];

size_t cl_kernels_image_bytes(void) { return (size_t)(cl_fatbin_end - cl_fatbin_start); }
const char *cl_kernels_image_file(void) { return NULL; }

cudaload_status cl_kernels_image_get(const void **image, cl_buf *why) {
    (void)why;
    *image = cl_fatbin_start;
    return CUDALOAD_OK;
}

void cl_kernels_image_release(const void *image) { (void)image; }

#else
/* no nvcc at build time: no kernels (kernels_device.c's gate says so before asking) */
size_t cl_kernels_image_bytes(void) { return 0; }
const char *cl_kernels_image_file(void) { return NULL; }

cudaload_status cl_kernels_image_get(const void **image, cl_buf *why) {
    *image = NULL;
    cl_buf_printf(why, "libcudaload was built without nvcc, so it has no bundled kernels");
    return CUDALOAD_ERROR_KERNELS_NOT_BUILT;
}

void cl_kernels_image_release(const void *image) { (void)image; }
#endif
