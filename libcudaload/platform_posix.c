/* SPDX-License-Identifier: Apache-2.0 */
/*
 * platform_posix.c -- the platform layer on Linux (platform.h): step 2 of the walk, turn a
 * candidate file into a dlopen handle or into a precise reason why not, and the few other calls
 * that differ between OSes (symbols, paths, file identity, AT_SECURE, atfork).
 *
 * Before dlopen, the file's ELF header is checked. dlerror() would also fail on a bad
 * file, but with texts like "invalid ELF header" or "file too short"; the check names the
 * problem in the user's terms (empty file, text file, aarch64 library in an x86_64
 * process, 32-bit library, truncated download) and costs one 64-byte read.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
#define CL_ELF_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define CL_ELF_MACHINE EM_AARCH64
#endif

static const char *cl_machine_name(unsigned m) {
    switch (m) {
    case EM_X86_64: return "x86_64";
    case EM_AARCH64: return "aarch64";
    case EM_386: return "i386";
    case EM_ARM: return "arm";
    case EM_PPC64: return "ppc64";
    case EM_RISCV: return "riscv";
    default: return "unknown machine";
    }
}

cudaload_status cl_elf_check_header(const unsigned char *hdr, size_t n, unsigned long long file_size,
                                    cl_buf *why) {
    if (file_size == 0) {
        cl_buf_printf(why, "empty file (0 bytes)");
        return CUDALOAD_ERROR_NOT_FOUND;
    }
    if (n < 4 || memcmp(hdr, ELFMAG, SELFMAG) != 0) {
        cl_buf_printf(why, "not an ELF file (%llu bytes, does not start with \\x7fELF)", file_size);
        return CUDALOAD_ERROR_NOT_FOUND;
    }
    if (n < EI_NIDENT || hdr[EI_CLASS] != ELFCLASS64) {
        cl_buf_printf(why, "%s ELF, this process is 64-bit",
                      n >= EI_NIDENT && hdr[EI_CLASS] == ELFCLASS32 ? "32-bit" : "ELF of unknown class");
        return CUDALOAD_ERROR_NOT_FOUND;
    }
    if (n < sizeof(Elf64_Ehdr)) {
        cl_buf_printf(why, "truncated ELF: file is %llu bytes, shorter than an ELF header", file_size);
        return CUDALOAD_ERROR_NOT_FOUND;
    }
    Elf64_Ehdr eh;
    memcpy(&eh, hdr, sizeof eh);
    if (hdr[EI_DATA] != ELFDATA2LSB) {
        cl_buf_printf(why, "big-endian ELF, this process is little-endian");
        return CUDALOAD_ERROR_NOT_FOUND;
    }
    if (eh.e_machine != CL_ELF_MACHINE) {
        cl_buf_printf(why, "ELF for %s (e_machine %u), this process is %s (e_machine %u)",
                      cl_machine_name(eh.e_machine), (unsigned)eh.e_machine, cl_machine_name(CL_ELF_MACHINE),
                      (unsigned)CL_ELF_MACHINE);
        return CUDALOAD_ERROR_NOT_FOUND;
    }
    if (eh.e_type != ET_DYN) {
        cl_buf_printf(why, "ELF is not a shared library (e_type %u)", (unsigned)eh.e_type);
        return CUDALOAD_ERROR_NOT_FOUND;
    }
    /* the program and section header tables must lie inside the file: a short download or
     * a partial copy ends before them */
    unsigned long long ph_end = (unsigned long long)eh.e_phoff + (unsigned long long)eh.e_phnum * eh.e_phentsize;
    unsigned long long sh_end = (unsigned long long)eh.e_shoff + (unsigned long long)eh.e_shnum * eh.e_shentsize;
    unsigned long long need = ph_end > sh_end ? ph_end : sh_end;
    if (need > file_size) {
        cl_buf_printf(why, "truncated ELF: file is %llu bytes, its headers need at least %llu", file_size, need);
        return CUDALOAD_ERROR_NOT_FOUND;
    }
    return CUDALOAD_OK;
}

/* Reads a number in base (16 or 10) at *p, moving *p past it; -1 when there is no digit. */
static long long cl_maps_num(const char **p, const char *end, int base) {
    unsigned long long v = 0;
    const char *s = *p;
    for (; s < end; s++) {
        int d = *s >= '0' && *s <= '9' ? *s - '0' : base == 16 && *s >= 'a' && *s <= 'f' ? *s - 'a' + 10 : -1;
        if (d < 0) break;
        v = v * (unsigned)base + (unsigned)d;
    }
    if (s == *p) return -1;
    *p = s;
    return (long long)v;
}

/* One line of /proc/self/maps, "start-end perms offset maj:min inode ...": 1 when it maps addr,
 * with its device and inode. Parsed by hand: sscanf's cost showed in init's time. */
static int cl_maps_line(const char *s, const char *end, uintptr_t addr, cl_file_id *id) {
    long long lo = cl_maps_num(&s, end, 16);
    if (lo < 0 || s >= end || *s++ != '-') return 0;
    long long hi = cl_maps_num(&s, end, 16);
    if (hi < 0 || addr < (unsigned long long)lo || addr >= (unsigned long long)hi) return 0;
    for (int field = 0; field < 2; field++) { /* perms, offset */
        while (s < end && *s == ' ') s++;
        while (s < end && *s != ' ') s++;
    }
    while (s < end && *s == ' ') s++;
    long long maj = cl_maps_num(&s, end, 16);
    if (maj < 0 || s >= end || *s++ != ':') return 0;
    long long min = cl_maps_num(&s, end, 16);
    while (s < end && *s == ' ') s++;
    long long ino = cl_maps_num(&s, end, 10);
    if (min < 0 || ino < 0) return 0;
    id->dev = (unsigned long long)makedev((unsigned)maj, (unsigned)min);
    id->ino = (unsigned long long)ino;
    return 1;
}

/* The device and inode of the mappings that hold addr[0..n), from one read of /proc/self/maps:
 * found[i] = 1 for each one found; returns how many were. Read with a fixed buffer (no
 * allocation), each line parsed where it lies; a line longer than the buffer (a long path) has its
 * head parsed and the rest skipped. */
static int cl_maps_ids(const uintptr_t *addr, cl_file_id *ids, int *found, int n) {
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    char buf[8192];
    size_t start = 0, have = 0;
    int n_found = 0, skipping = 0, eof = 0;
    while (n_found < n && !(eof && start == have)) {
        char *nl = memchr(buf + start, '\n', have - start);
        if (!nl && !eof && !(start == 0 && have == sizeof buf)) {
            /* more to read: what is left of a line moves to the front first */
            memmove(buf, buf + start, have - start);
            have -= start, start = 0;
            ssize_t r = read(fd, buf + have, sizeof buf - have);
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) eof = 1;
            else have += (size_t)r;
            continue;
        }
        size_t end = nl ? (size_t)(nl - buf) : have;
        for (int i = 0; !skipping && i < n; i++)
            if (!found[i] && cl_maps_line(buf + start, buf + end, addr[i], &ids[i])) found[i] = 1, n_found++;
        skipping = !nl;
        start = nl ? end + 1 : have;
    }
    close(fd);
    return n_found;
}

/* Opens a candidate once: the checks that name a problem in the user's words are made on the
 * path first (a dangling link, a directory, a FIFO that an open would wait on), then the file is
 * opened and everything that decides is read from the descriptor: its type and size (fstat), its
 * header (pread) and its identity. A symbolic link swapped after the open changes nothing. */
cudaload_status cl_file_open(const char *path, cl_file *f, cl_buf *why) {
    struct stat lst, st;
    f->fd = -1;
    if (lstat(path, &lst) != 0) {
        cl_buf_printf(why, "%s", strerror(errno));
        return CUDALOAD_ERROR_NOT_FOUND;
    }
    if (stat(path, &st) != 0) {
        int e = errno;
        if (S_ISLNK(lst.st_mode)) {
            char target[512];
            ssize_t n = readlink(path, target, sizeof target - 1);
            target[n > 0 ? n : 0] = 0;
            cl_buf_printf(why, "dangling symbolic link to '%s' (%s)", target, strerror(e));
        } else {
            cl_buf_printf(why, "%s", strerror(e));
        }
        return CUDALOAD_ERROR_NOT_FOUND;
    }
    if (S_ISDIR(st.st_mode)) {
        cl_buf_printf(why, "is a directory, not a library file");
        return CUDALOAD_ERROR_NOT_FOUND;
    }
    if (!S_ISREG(st.st_mode)) {
        cl_buf_printf(why, "not a regular file");
        return CUDALOAD_ERROR_NOT_FOUND;
    }
    /* O_NONBLOCK: a FIFO put there since the stat above fails the fstat below instead of waiting */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        cl_buf_printf(why, "cannot read: %s", strerror(errno));
        return CUDALOAD_ERROR_NOT_FOUND;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        cl_buf_printf(why, "not a regular file");
        close(fd);
        return CUDALOAD_ERROR_NOT_FOUND;
    }
    unsigned char hdr[sizeof(Elf64_Ehdr)];
    ssize_t n;
    do n = pread(fd, hdr, sizeof hdr, 0);
    while (n < 0 && errno == EINTR);
    if (n < 0) {
        cl_buf_printf(why, "cannot read: %s", strerror(errno));
        close(fd);
        return CUDALOAD_ERROR_NOT_FOUND;
    }
    cudaload_status rc = cl_elf_check_header(hdr, (size_t)n, (unsigned long long)st.st_size, why);
    if (rc != CUDALOAD_OK) {
        close(fd);
        return rc;
    }
    f->fd = fd;
    f->id.dev = (unsigned long long)st.st_dev;
    f->id.ino = (unsigned long long)st.st_ino;
    return CUDALOAD_OK;
}

void cl_file_close(cl_file *f) {
    if (f->fd >= 0) close((int)f->fd);
    f->fd = -1;
}

/* why: the file found in place of the one checked, by the place it was found at. */
static void cl_file_changed(cl_buf *why, const char *found_as, const cl_file_id *found, const cl_file_id *checked) {
    cl_buf_printf(why,
                  "the file changed between its check and dlopen: %s (device %u:%u, inode %llu) is not the file checked "
                  "(device %u:%u, inode %llu)",
                  found_as, major(found->dev), minor(found->dev), found->ino, major(checked->dev), minor(checked->dev),
                  checked->ino);
}

int cl_file_is_mapped(const cl_file *f, void *handle, cl_buf *why) {
    struct link_map *lm = NULL;
    /* what ld.so mapped, and a page of the open file mapped here: the kernel shows both as one
     * file (which overlayfs or btrfs may show as another than fstat's) when ld.so mapped the file
     * checked; both found in one pass over /proc/self/maps */
    uintptr_t addr[2] = {0, 0};
    cl_file_id ids[2] = {{0, 0}, {0, 0}};
    int found[2] = {0, 0};
    long page = sysconf(_SC_PAGESIZE);
    size_t len = page > 0 ? (size_t)page : 4096;
    void *mine = f->fd >= 0 ? mmap(NULL, len, PROT_READ, MAP_PRIVATE, (int)f->fd, 0) : MAP_FAILED;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &lm) == 0 && lm && mine != MAP_FAILED) {
        addr[0] = lm->l_ld ? (uintptr_t)lm->l_ld : (uintptr_t)lm->l_addr;
        addr[1] = (uintptr_t)mine;
        cl_maps_ids(addr, ids, found, 2);
    }
    if (mine != MAP_FAILED) munmap(mine, len);
    if (found[0] && found[1]) {
        if (ids[0].dev == ids[1].dev && ids[0].ino == ids[1].ino) return 1;
        cl_file_changed(why, "the file mapped", &ids[0], &ids[1]);
        return 0;
    }
    cl_file_id m;
    /* no /proc (a chroot without it): the file at the name ld.so recorded, which a file swapped
     * in and back between dlopen and this check would pass (docs/security.md) */
    struct stat st;
    if (!lm || !lm->l_name || stat(lm->l_name, &st) != 0) {
        cl_buf_printf(why, "the file changed between its check and dlopen (the mapped file cannot be found)");
        return 0;
    }
    m.dev = (unsigned long long)st.st_dev;
    m.ino = (unsigned long long)st.st_ino;
    if (m.ino == f->id.ino && m.dev == f->id.dev) return 1;
    cl_file_changed(why, "the file at the loader's name", &m, &f->id);
    return 0;
}

void *cl_open_path(const char *path, cl_buf *why) {
    dlerror();
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        cl_buf_printf(why, "dlopen failed: %s", e ? e : "(no dlerror text)");
    }
    return h;
}

int cl_plat_make_global(const char *path) {
    void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
    /* the reference it took is kept: a preloaded library stays for the process */
    return h != NULL;
}

char *cl_handle_path(void *handle) {
    struct link_map *lm = NULL;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0 || !lm || !lm->l_name || !lm->l_name[0]) return NULL;
    /* l_name is the path ld.so opened; resolve symbolic links for the report */
    char *real = realpath(lm->l_name, NULL);
    return real ? real : strdup(lm->l_name);
}

/* Finds a loaded object whose file name or DT_SONAME is soname, without touching the disk:
 * dlopen(soname, RTLD_NOLOAD) would first search the library path for the file. */
typedef struct cl_loaded_query {
    const char *soname;
    char *path;
} cl_loaded_query;

static const char *cl_object_soname(const struct dl_phdr_info *info) {
    for (int i = 0; i < info->dlpi_phnum; i++) {
        if (info->dlpi_phdr[i].p_type != PT_DYNAMIC) continue;
        const ElfW(Dyn) *dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
        ElfW(Addr) strtab = 0;
        ElfW(Xword) soname = (ElfW(Xword))-1;
        for (; dyn->d_tag != DT_NULL; dyn++) {
            if (dyn->d_tag == DT_STRTAB) strtab = dyn->d_un.d_ptr;
            if (dyn->d_tag == DT_SONAME) soname = dyn->d_un.d_val;
        }
        if (!strtab || soname == (ElfW(Xword))-1) return NULL;
        /* ld.so relocates DT_STRTAB in place on x86_64 and aarch64; an unrelocated one is
         * an offset from the load address */
        if (strtab < info->dlpi_addr) strtab += info->dlpi_addr;
        return (const char *)(strtab + soname);
    }
    return NULL;
}

static int cl_loaded_cb(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    cl_loaded_query *q = data;
    const char *name = info->dlpi_name;
    if (!name || name[0] != '/') return 0; /* the executable and the vDSO */
    const char *base = strrchr(name, '/') + 1;
    const char *so = strcmp(base, q->soname) == 0 ? q->soname : cl_object_soname(info);
    if (!so || strcmp(so, q->soname) != 0) return 0;
    q->path = strdup(name);
    return 1;
}

void *cl_open_loaded(const char *soname, char **real_path) {
    *real_path = NULL;
    cl_loaded_query q = {soname, NULL};
    dl_iterate_phdr(cl_loaded_cb, &q);
    if (!q.path) return NULL;
    /* the exact name ld.so recorded: matched in memory, no search, never a second copy */
    void *h = dlopen(q.path, RTLD_NOW | RTLD_NOLOAD);
    dlerror();
    if (h) {
        *real_path = realpath(q.path, NULL);
        if (!*real_path) *real_path = strdup(q.path);
    }
    free(q.path);
    return h;
}

/* DT_SONAME of an ELF shared library file, read from the file without loading it (an exact
 * file named without a major, e.g. a copy renamed libcudart.so, is gated by it). Bounded
 * reads only; malloc'd string or NULL when the file has none or cannot be parsed. */
void *cl_plat_open_if_loaded(const char *path) {
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD); /* matched by file identity too */
    dlerror();
    return h;
}

char *cl_elf_file_soname(const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    char *out = NULL;
    Elf64_Ehdr eh;
    Elf64_Phdr ph[64];
    if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0)
        goto done;
    size_t nph = eh.e_phnum < 64 ? eh.e_phnum : 64;
    if (pread(fd, ph, nph * sizeof ph[0], (off_t)eh.e_phoff) != (ssize_t)(nph * sizeof ph[0])) goto done;
    const Elf64_Phdr *dyn = NULL;
    for (size_t i = 0; i < nph; i++)
        if (ph[i].p_type == PT_DYNAMIC) dyn = &ph[i];
    if (!dyn) goto done;
    Elf64_Addr strtab = 0;
    Elf64_Xword soname = (Elf64_Xword)-1;
    size_t ndyn = dyn->p_filesz / sizeof(Elf64_Dyn);
    if (ndyn > 4096) ndyn = 4096;
    for (size_t i = 0; i < ndyn; i++) {
        Elf64_Dyn d;
        if (pread(fd, &d, sizeof d, (off_t)(dyn->p_offset + i * sizeof d)) != (ssize_t)sizeof d) goto done;
        if (d.d_tag == DT_NULL) break;
        if (d.d_tag == DT_STRTAB) strtab = d.d_un.d_ptr;
        if (d.d_tag == DT_SONAME) soname = d.d_un.d_val;
    }
    if (!strtab || soname == (Elf64_Xword)-1) goto done;
    /* DT_STRTAB is an address: find the loadable segment holding it for its file offset */
    for (size_t i = 0; i < nph; i++) {
        if (ph[i].p_type != PT_LOAD || strtab < ph[i].p_vaddr || strtab - ph[i].p_vaddr >= ph[i].p_filesz) continue;
        char name[256];
        ssize_t n = pread(fd, name, sizeof name - 1, (off_t)(strtab - ph[i].p_vaddr + ph[i].p_offset + soname));
        if (n <= 0) break;
        name[n] = 0;
        if (strlen(name) < (size_t)n) out = strdup(name); /* a NUL inside what was read: a whole name */
        break;
    }
done:
    close(fd);
    return out;
}

void *cl_plat_sym(void *handle, const char *name, cl_buf *why) {
    dlerror();
    void *p = dlsym(handle, name);
    if (!p && why) {
        const char *e = dlerror();
        cl_buf_printf(why, "%s", e ? e : "symbol not found");
    }
    return p;
}

/* An address of the dynamic section: glibc relocates them in place where the section is
 * writable, and the file's values are offsets from the load base (musl; read-only sections) */
static const void *cl_dyn_ptr(ElfW(Addr) base, ElfW(Addr) v) { return (const void *)(v < base ? v + base : v); }

int cl_plat_symtab_open(void *handle, cl_plat_symtab *st) {
    memset(st, 0, sizeof *st);
    struct link_map *lm = NULL;
    /* RTLD_DI_LINKMAP reads the handle: no lock of ld.so is taken */
    if (!handle || dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0 || !lm || !lm->l_ld) return 0;
    ElfW(Addr) base = lm->l_addr;
    for (const ElfW(Dyn) *d = lm->l_ld; d->d_tag != DT_NULL; d++) {
        switch (d->d_tag) {
        case DT_GNU_HASH: st->gnu_hash = cl_dyn_ptr(base, d->d_un.d_ptr); break;
        case DT_SYMTAB: st->symtab = cl_dyn_ptr(base, d->d_un.d_ptr); break;
        case DT_STRTAB: st->strtab = cl_dyn_ptr(base, d->d_un.d_ptr); break;
        case DT_VERSYM: st->versym = cl_dyn_ptr(base, d->d_un.d_ptr); break;
        default: break;
        }
    }
    /* no DT_GNU_HASH (an old DT_HASH-only file): dlsym answers instead */
    if (!base || !st->gnu_hash || !st->symtab || !st->strtab) {
        memset(st, 0, sizeof *st);
        return 0;
    }
    st->base = (const void *)base;
    return 1;
}

void *cl_plat_symtab_find(const cl_plat_symtab *st, const char *name, int *ask_loader) {
    *ask_loader = 0;
    if (!st->base) {
        *ask_loader = 1;
        return NULL;
    }
    /* the GNU hash table: a bloom filter, buckets, then one hash per symbol from symoffset on */
    const uint32_t *h = st->gnu_hash;
    uint32_t nbuckets = h[0], symoffset = h[1], bloom_size = h[2], bloom_shift = h[3];
    const ElfW(Addr) *bloom = (const ElfW(Addr) *)(h + 4);
    const uint32_t *buckets = (const uint32_t *)(bloom + bloom_size);
    const uint32_t *chain = buckets + nbuckets;
    if (!nbuckets || !bloom_size) return NULL;
    uint32_t hash = 5381;
    for (const unsigned char *c = (const unsigned char *)name; *c; c++) hash = hash * 33 + *c;
    const unsigned bits = sizeof(ElfW(Addr)) * 8;
    ElfW(Addr) word = bloom[(hash / bits) % bloom_size];
    ElfW(Addr) mask = ((ElfW(Addr))1 << (hash % bits)) | ((ElfW(Addr))1 << ((hash >> bloom_shift) % bits));
    if ((word & mask) != mask) return NULL;
    uint32_t i = buckets[hash % nbuckets];
    if (i < symoffset) return NULL;
    const ElfW(Sym) *syms = st->symtab;
    for (;; i++) {
        uint32_t hi = chain[i - symoffset];
        const ElfW(Sym) *sym = &syms[i];
        /* dlsym's answer: an exported definition, of the default version (versym's hidden bit clear) */
        unsigned bind = ELF64_ST_BIND(sym->st_info), type = ELF64_ST_TYPE(sym->st_info);
        int exported = bind == STB_GLOBAL || bind == STB_WEAK || bind == STB_GNU_UNIQUE;
        if ((hi | 1) == (hash | 1) && exported && sym->st_shndx != SHN_UNDEF &&
            strcmp(st->strtab + sym->st_name, name) == 0 && (!st->versym || !(st->versym[i] & 0x8000))) {
            /* only the loader knows these addresses, none of them base + st_value: a TLS symbol's is
             * the calling thread's instance (st_value is an offset in the TLS block), an IFUNC's what
             * its resolver returns, a unique object's the process's one definition (the first copy
             * loaded, maybe another library's), an absolute symbol's its value with or without the
             * load base by the libc (glibc 2.28 on: the value; musl and older glibc add the base) */
            if (type == STT_TLS || type == STT_GNU_IFUNC || bind == STB_GNU_UNIQUE ||
                (sym->st_shndx == SHN_ABS && sym->st_value != 0)) {
                *ask_loader = 1;
                return NULL;
            }
            /* a value of 0 is no definition to dlsym: glibc's and musl's lookups pass over it (a
             * version's name, absolute 0, is one), so the chain goes on */
            if (sym->st_value != 0) return (void *)((const char *)st->base + sym->st_value);
        }
        if (hi & 1) return NULL;
    }
}

double cl_plat_now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

void cl_plat_close(void *handle) {
    if (handle) dlclose(handle);
}

char *cl_plat_self_path(const void *addr) {
    Dl_info self;
    if (dladdr(addr, &self) && self.dli_fname && self.dli_fname[0] == '/') return strdup(self.dli_fname);
    return NULL;
}

char *cl_plat_realpath(const char *path) { return path ? realpath(path, NULL) : NULL; }

int cl_plat_is_absolute(const char *path) { return path && path[0] == '/'; }

void cl_plat_path_normalize(char *path) { (void)path; /* '/' is the separator already */ }

int cl_plat_lexists(const char *path) {
    struct stat st;
    return lstat(path, &st) == 0;
}

int cl_plat_unsearchable(const char *path) {
    struct stat st;
    return lstat(path, &st) != 0 && errno == EACCES;
}

int cl_plat_file_id(const char *path, cl_file_id *id) {
    struct stat st;
    if (stat(path, &st) != 0) return 0;
    id->dev = (unsigned long long)st.st_dev;
    id->ino = (unsigned long long)st.st_ino;
    return 1;
}

int cl_plat_secure(void) { return getauxval(AT_SECURE) != 0; }

void cl_plat_lock_file(FILE *f) { flockfile(f); }
void cl_plat_unlock_file(FILE *f) { funlockfile(f); }

void cl_plat_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void)) {
    pthread_atfork(prepare, parent, child);
}
