/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_units.c -- the pure parts of each step, called directly (the static library's
 * hidden functions link fine into a test): option parsing, the ELF check, the driver
 * version parser, the ld.so.cache reader, site-packages detection, status texts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cudaload.h"
#include "harness.h"
#include "internal.h"

static void test_status_names(void **state) {
    (void)state;
    for (int s = 0; s < CUDALOAD_STATUS_COUNT_; s++) {
        assert_non_null(strstr(cudaload_status_name((cudaload_status)s), "CUDALOAD_"));
        assert_true(strlen(cudaload_status_string((cudaload_status)s)) > 0);
    }
    assert_string_equal(cudaload_status_name(CUDALOAD_ERROR_NOT_FOUND), "CUDALOAD_ERROR_NOT_FOUND");
    assert_string_equal(cudaload_status_name((cudaload_status)999), "CUDALOAD_ERROR_UNKNOWN");
    assert_string_equal(cudaload_source_name(CUDALOAD_SOURCE_CUDA_HOME), "cuda_home");
    assert_string_equal(cudaload_source_name((cudaload_source)-1), "none");
    assert_string_equal(cudaload_lib_name(CUDALOAD_LIB_CUBLASLT), "cublasLt");
    assert_string_equal(cudaload_version_string(), CUDALOAD_VERSION_STRING);
}

static void test_parse_sources(void **state) {
    (void)state;
    unsigned m = 0;
    cl_buf err = {0};
    assert_int_equal(cl_parse_sources("caller,conda", &m, &err), CUDALOAD_OK);
    assert_int_equal(m, CUDALOAD_SOURCE_BIT(CUDALOAD_SOURCE_CALLER) | CUDALOAD_SOURCE_BIT(CUDALOAD_SOURCE_CONDA));
    assert_int_equal(cl_parse_sources(" system , cuda_home", &m, &err), CUDALOAD_OK);
    assert_int_equal(m, CUDALOAD_SOURCE_BIT(CUDALOAD_SOURCE_SYSTEM) | CUDALOAD_SOURCE_BIT(CUDALOAD_SOURCE_CUDA_HOME));
    assert_int_equal(cl_parse_sources("caller,sytem", &m, &err), CUDALOAD_ERROR_INVALID_OPTION);
    assert_non_null(strstr(cl_buf_str(&err), "unknown source 'sytem'"));
    cl_buf_free(&err);
    assert_int_equal(cl_parse_sources("caller,,conda", &m, &err), CUDALOAD_ERROR_INVALID_OPTION);
    assert_non_null(strstr(cl_buf_str(&err), "unknown source ''"));
    cl_buf_free(&err);
}

/* A library file of the toolkit: in $CUDALOAD_TEST_TOOLKIT_LIB when set, else in the lib64 of the
 * toolkit the build used (th_cuda_home()). */
static void toolkit_lib(const char *file, char *path, size_t n) {
    const char *lib = getenv("CUDALOAD_TEST_TOOLKIT_LIB");
    if (lib && lib[0]) snprintf(path, n, "%s/%s", lib, file);
    else snprintf(path, n, "%s/lib64/%s", th_cuda_home(), file);
}

/* The toolkit's libcudart.so.13. */
static void toolkit_cudart(char *path, size_t n) { toolkit_lib("libcudart.so.13", path, n); }

/* A real ELF header (of the toolkit's libcudart) patched the way a broken file would be. */
static unsigned char real_hdr[sizeof(Elf64_Ehdr)];
static unsigned long long real_size;

static int load_real_header(void **state) {
    (void)state;
    char path[PATH_MAX];
    toolkit_cudart(path, sizeof path);
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        fprintf(stderr, "cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    struct stat st;
    fstat(fd, &st);
    real_size = (unsigned long long)st.st_size;
    ssize_t n = read(fd, real_hdr, sizeof real_hdr);
    close(fd);
    return n == (ssize_t)sizeof real_hdr ? 0 : -1;
}

static void expect_elf(const unsigned char *h, size_t n, unsigned long long size, cudaload_status want,
                       const char *words) {
    cl_buf why = {0};
    assert_int_equal(cl_elf_check_header(h, n, size, &why), want);
    if (words) {
        if (!strstr(cl_buf_str(&why), words)) fail_msg("reason '%s' lacks '%s'", cl_buf_str(&why), words);
    }
    cl_buf_free(&why);
}

static void test_elf_check(void **state) {
    (void)state;
    unsigned char h[sizeof real_hdr];
    expect_elf(real_hdr, sizeof real_hdr, real_size, CUDALOAD_OK, NULL);
    expect_elf(real_hdr, 0, 0, CUDALOAD_ERROR_NOT_FOUND, "empty file (0 bytes)");
    expect_elf((const unsigned char *)"hello world\n", 12, 12, CUDALOAD_ERROR_NOT_FOUND, "not an ELF file");
    memcpy(h, real_hdr, sizeof h);
    h[EI_CLASS] = ELFCLASS32;
    expect_elf(h, sizeof h, real_size, CUDALOAD_ERROR_NOT_FOUND, "32-bit ELF");
    memcpy(h, real_hdr, sizeof h);
    h[18] = EM_AARCH64 & 0xff; /* e_machine, little-endian */
    h[19] = EM_AARCH64 >> 8;
    expect_elf(h, sizeof h, real_size, CUDALOAD_ERROR_NOT_FOUND, "ELF for aarch64 (e_machine 183)");
    memcpy(h, real_hdr, sizeof h);
    h[16] = ET_EXEC;
    h[17] = 0;
    expect_elf(h, sizeof h, real_size, CUDALOAD_ERROR_NOT_FOUND, "not a shared library");
    expect_elf(real_hdr, sizeof real_hdr, 4096, CUDALOAD_ERROR_NOT_FOUND, "truncated ELF: file is 4096 bytes");
    expect_elf(real_hdr, 20, 20, CUDALOAD_ERROR_NOT_FOUND, "truncated ELF");
}

static void test_proc_driver_version(void **state) {
    (void)state;
    static const char prop[] = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu Oct  9 2025\n"
                               "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n";
    static const char open_km[] = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build"
                                  "  (dvs-builder@U16-I3-B07-1-1)  Thu Jan 30 2025\n";
    char *b = cl_parse_proc_driver_version(prop, sizeof prop - 1);
    assert_non_null(b);
    assert_string_equal(b, "580.159.04");
    free(b);
    b = cl_parse_proc_driver_version(open_km, sizeof open_km - 1);
    assert_non_null(b);
    assert_string_equal(b, "570.86.15");
    free(b);
    assert_null(cl_parse_proc_driver_version("GCC version: 12.2\n", 18));
    assert_null(cl_parse_proc_driver_version("NVRM version: garbage..\n", 24));
    assert_null(cl_parse_proc_driver_version("", 0));
}

static void test_ldcache_lookup(void **state) {
    (void)state;
    int fd = open("/etc/ld.so.cache", O_RDONLY);
    if (fd < 0) TH_SKIP("no /etc/ld.so.cache on this machine");
    struct stat st;
    fstat(fd, &st);
    unsigned char *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    assert_true(map != MAP_FAILED);
    char *p = cl_ldcache_lookup(map, (size_t)st.st_size, "libc.so.6");
    assert_non_null(p);
    assert_int_equal(access(p, F_OK), 0);
    free(p);
    assert_null(cl_ldcache_lookup(map, (size_t)st.st_size, "libdoes-not-exist.so.7"));
    /* truncated images are refused, never read past their end */
    assert_null(cl_ldcache_lookup(map, 40, "libc.so.6"));
    assert_null(cl_ldcache_lookup(map, 100, "libc.so.6"));
    munmap(map, (size_t)st.st_size);
    assert_null(cl_ldcache_lookup((const unsigned char *)"not a cache", 11, "libc.so.6"));
}

/* ---- crafted ld.so.cache images: the new format alone, and glibc's compat format (an old
 * ld.so-1.7.0 table first, the new one at the next 8-byte boundary); string offsets count from
 * the new table's header, as glibc's dl-cache.c reads them ---- */
typedef struct ldcache_entry {
    int flags;
    const char *key, *value;
} ldcache_entry;

static size_t make_ldcache(unsigned char *buf, size_t cap, int compat, const ldcache_entry *e, uint32_t n) {
    memset(buf, 0, cap);
    size_t base = 0;
    if (compat) {
        memcpy(buf, "ld.so-1.7.0", 11);
        memcpy(buf + 12, &n, 4);
        base = (16 + (size_t)n * 12 + 7) & ~(size_t)7; /* the old entries are left zero */
    }
    unsigned char *h = buf + base;
    memcpy(h, "glibc-ld.so.cache1.1", 20);
    memcpy(h + 20, &n, 4);
    size_t str = 48 + (size_t)n * 24;
    for (uint32_t i = 0; i < n; i++) {
        unsigned char *ent = h + 48 + (size_t)i * 24;
        uint32_t k = (uint32_t)str, v;
        memcpy(h + str, e[i].key, strlen(e[i].key) + 1);
        str += strlen(e[i].key) + 1;
        v = (uint32_t)str;
        memcpy(h + str, e[i].value, strlen(e[i].value) + 1);
        str += strlen(e[i].value) + 1;
        memcpy(ent, &e[i].flags, 4);
        memcpy(ent + 4, &k, 4);
        memcpy(ent + 8, &v, 4);
    }
    assert_true(base + str <= cap);
    return base + str;
}

/* The aarch64 build reads only aarch64 entries (FLAG_AARCH64_LIB64), the x86-64 build only
 * x86-64 ones, in both formats: a multiarch cache (or a foreign one under emulation) lists both. */
static void test_ldcache_arch_flags(void **state) {
    (void)state;
    const ldcache_entry e[] = {
        {0x0303, "libcudart.so.13", "/usr/lib/x86_64-linux-gnu/libcudart.so.13"},
        {0x0a03, "libcudart.so.13", "/usr/lib/aarch64-linux-gnu/libcudart.so.13"},
        {0x0a03, "libcuda.so.1", "/usr/lib/aarch64-linux-gnu/nvidia/libcuda.so.1"},
        {0x0a01, "libold.so.1", "/lib/libold.so.1"}, /* not FLAG_ELF_LIBC6: never */
    };
    static unsigned char buf[4096];
    for (int compat = 0; compat < 2; compat++) {
        size_t n = make_ldcache(buf, sizeof buf, compat, e, 4);
        char *p = cl_ldcache_lookup_arch(buf, n, "libcudart.so.13", CL_LDCACHE_AARCH64_LIB64);
        assert_non_null(p);
        assert_string_equal(p, "/usr/lib/aarch64-linux-gnu/libcudart.so.13");
        free(p);
        p = cl_ldcache_lookup_arch(buf, n, "libcudart.so.13", CL_LDCACHE_X8664_LIB64);
        assert_non_null(p);
        assert_string_equal(p, "/usr/lib/x86_64-linux-gnu/libcudart.so.13");
        free(p);
        assert_null(cl_ldcache_lookup_arch(buf, n, "libcuda.so.1", CL_LDCACHE_X8664_LIB64));
        p = cl_ldcache_lookup_arch(buf, n, "libcuda.so.1", CL_LDCACHE_AARCH64_LIB64);
        assert_non_null(p);
        free(p);
        assert_null(cl_ldcache_lookup_arch(buf, n, "libold.so.1", CL_LDCACHE_AARCH64_LIB64));
        /* cut inside the strings, the entries or the headers: refused or not found, never read past */
        for (size_t cut = 0; cut < n; cut += 7) {
            p = cl_ldcache_lookup_arch(buf, cut, "libcudart.so.13", CL_LDCACHE_AARCH64_LIB64);
            if (p) assert_string_equal(p, "/usr/lib/aarch64-linux-gnu/libcudart.so.13");
            free(p);
        }
    }
    /* an old table that claims more entries than the file holds */
    size_t n = make_ldcache(buf, sizeof buf, 1, e, 4);
    uint32_t huge = 0x10000000;
    memcpy(buf + 12, &huge, 4);
    assert_null(cl_ldcache_lookup_arch(buf, n, "libcudart.so.13", CL_LDCACHE_AARCH64_LIB64));
}

/* The toolkit's targets/<triple> dirs: x86_64-linux; on aarch64 both layouts, the server's
 * (sbsa-linux) first, Jetson's (aarch64-linux) first on a Tegra. */
static void test_target_triples(void **state) {
    (void)state;
    const char *t[CL_MAX_TRIPLES];
    assert_int_equal(cl_target_triples(CL_MACHINE_X86_64, 0, t), 1);
    assert_string_equal(t[0], "x86_64-linux");
    assert_int_equal(cl_target_triples(CL_MACHINE_AARCH64, 0, t), 2);
    assert_string_equal(t[0], "sbsa-linux");
    assert_string_equal(t[1], "aarch64-linux");
    assert_int_equal(cl_target_triples(CL_MACHINE_AARCH64, 1, t), 2);
    assert_string_equal(t[0], "aarch64-linux");
    assert_string_equal(t[1], "sbsa-linux");
}

/* Tegra from a crafted root: L4T's /etc/nv_tegra_release, or the device tree's compatible list
 * (NUL-separated strings: a container without L4T's /etc); neither on a server. */
static void test_detect_tegra(void **state) {
    (void)state;
    const char *why = NULL;
    char *server = th_tmpdir(), *l4t = th_tmpdir(), *dt = th_tmpdir(), *other = th_tmpdir(), path[PATH_MAX];
    assert_int_equal(cl_detect_tegra(server, &why), 0);
    assert_non_null(why);
    snprintf(path, sizeof path, "%s/etc", l4t);
    th_mkdirs(path);
    snprintf(path, sizeof path, "%s/etc/nv_tegra_release", l4t);
    th_write(path, "# R36 (release), REVISION: 4.3\n", 31);
    assert_int_equal(cl_detect_tegra(l4t, &why), 1);
    static const char compat[] = "nvidia,p3737-0000+p3701-0005\0nvidia,p3701-0005\0nvidia,tegra234";
    snprintf(path, sizeof path, "%s/proc/device-tree", dt);
    th_mkdirs(path);
    snprintf(path, sizeof path, "%s/proc/device-tree/compatible", dt);
    th_write(path, compat, sizeof compat);
    assert_int_equal(cl_detect_tegra(dt, &why), 1);
    /* an Arm server's device tree (no "nvidia,tegra") */
    snprintf(path, sizeof path, "%s/proc/device-tree", other);
    th_mkdirs(path);
    snprintf(path, sizeof path, "%s/proc/device-tree/compatible", other);
    th_write(path, "nvidia,grace\0arm,sbsa", 22);
    assert_int_equal(cl_detect_tegra(other, &why), 0);
    free(server), free(l4t), free(dt), free(other);
}

static void test_site_packages_of(void **state) {
    (void)state;
    char *tmp = th_tmpdir();
    char dir[PATH_MAX], file[PATH_MAX], want[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/venv/lib/python3.11/site-packages/pkg/sub", tmp);
    th_mkdirs(dir);
    snprintf(file, sizeof file, "%s/_ext.so", dir);
    th_write(file, "x", 1);
    snprintf(want, sizeof want, "%s/venv/lib/python3.11/site-packages", tmp);
    char *real_want = realpath(want, NULL);
    char *got = cl_site_packages_of(file);
    assert_non_null(got);
    assert_string_equal(got, real_want);
    free(got);
    free(real_want);
    assert_null(cl_site_packages_of(tmp));
    assert_null(cl_site_packages_of("/nonexistent/site-packages/x.so"));
    free(tmp);
}

/* Each value of var builds a config whose int at field is want[i], or (want[i] < 0) is refused
 * with INVALID_OPTION. */
static void check_env_choices(const char *var, const char *const *values, const int *want, size_t n, size_t field) {
    for (size_t i = 0; i < n; i++) {
        cl_config cfg;
        cl_buf err = {0};
        cudaload_options o;
        setenv(var, values[i], 1);
        cudaload_options_init(&o);
        cudaload_status st = cl_config_build(&cfg, &o, &err);
        if (want[i] < 0) {
            assert_int_equal(st, CUDALOAD_ERROR_INVALID_OPTION);
        } else {
            int got;
            memcpy(&got, (const char *)&cfg + field, sizeof got);
            assert_int_equal(st, CUDALOAD_OK);
            assert_int_equal(got, want[i]);
        }
        cl_config_free(&cfg);
        cl_buf_free(&err);
    }
    unsetenv(var);
}

static void test_config_validation(void **state) {
    (void)state;
    cl_config cfg;
    cl_buf err = {0};
    cudaload_options o;
    cudaload_options_init(&o);
    o.flags = CUDALOAD_FLAG_IGNORE_ENV;
    o.cudart_path = "lib/libcudart.so.13";
    assert_int_equal(cl_config_build(&cfg, &o, &err), CUDALOAD_ERROR_INVALID_OPTION);
    cl_config_free(&cfg);
    assert_non_null(strstr(cl_buf_str(&err), "options.cudart_path: 'lib/libcudart.so.13' is a relative path"));
    cl_buf_free(&err);

    cudaload_options_init(&o);
    o.flags = CUDALOAD_FLAG_IGNORE_ENV;
    o.cuda_major = 11;
    assert_int_equal(cl_config_build(&cfg, &o, &err), CUDALOAD_ERROR_INVALID_OPTION);
    cl_config_free(&cfg);
    assert_non_null(strstr(cl_buf_str(&err), "11 is not a CUDA major"));
    cl_buf_free(&err);

    /* CUDALOAD_PLATFORM: auto, sbsa, tegra, nothing else */
    const char *platforms[] = {"auto", "sbsa", "tegra", "jetson"};
    const int want[] = {CL_PLATFORM_AUTO, CL_PLATFORM_SBSA, CL_PLATFORM_TEGRA, -1};
    check_env_choices("CUDALOAD_PLATFORM", platforms, want, 4, offsetof(cl_config, platform));
    /* CUDALOAD_COMPAT: auto, or never (0, off, no); a typo is an error, not "auto" */
    const char *compat[] = {"auto", "never", "0", "off", "no", "nevr"};
    const int never[] = {0, 1, 1, 1, 1, -1};
    check_env_choices("CUDALOAD_COMPAT", compat, never, 6, offsetof(cl_config, compat_never));

    char *longpath = malloc(PATH_MAX + 16);
    longpath[0] = '/';
    memset(longpath + 1, 'a', PATH_MAX + 10);
    longpath[PATH_MAX + 11] = 0;
    cudaload_options_init(&o);
    o.flags = CUDALOAD_FLAG_IGNORE_ENV;
    o.lib_dirs = longpath;
    assert_int_equal(cl_config_build(&cfg, &o, &err), CUDALOAD_ERROR_INVALID_OPTION);
    cl_config_free(&cfg);
    assert_non_null(strstr(cl_buf_str(&err), "longer than PATH_MAX"));
    cl_buf_free(&err);
    free(longpath);

    cudaload_options_init(&o);
    o.flags = CUDALOAD_FLAG_IGNORE_ENV;
    o.lib_dirs = "/a::/b:";
    assert_int_equal(cl_config_build(&cfg, &o, &err), CUDALOAD_OK);
    assert_int_equal(cfg.n_override_dirs, 2); /* empty elements never mean the current directory */
    assert_string_equal(cfg.override_dirs[0], "/a");
    assert_string_equal(cfg.override_dirs[1], "/b");
    cl_config_free(&cfg);

    cudaload_options_init(&o);
    o.size = 4; /* a caller that forgot to set the size */
    assert_int_equal(cl_config_build(&cfg, &o, &err), CUDALOAD_ERROR_INVALID_ARGUMENT);
    cl_config_free(&cfg);
    cl_buf_free(&err);
}

static void test_gate_major(void **state) {
    (void)state;
    cl_why why = {0};
    cl_driver_facts none = {0};
    cl_driver_facts d124 = {.loaded = 1, .version = 12040, .branch = "550.54.15", .branch_major = 550};
    cl_driver_facts d130 = {.loaded = 1, .version = 13000, .branch = "580.159.04", .branch_major = 580};
    /* a forward-compatibility libcuda: CUDA 13.0 on a 575 kernel module (cuda-compat) */
    cl_driver_facts compat = {.loaded = 1, .version = 13000, .branch = "575.1", .branch_major = 575};
    cl_driver_facts odd = {.loaded = 1, .version = 0, .branch = "575.1", .branch_major = 575};
    assert_int_equal(cl_gate_major(&none, 0, 13, &why), CUDALOAD_OK);
    assert_int_equal(cl_gate_major(&d130, 0, 13, &why), CUDALOAD_OK);
    assert_int_equal(cl_gate_major(&d130, 0, 12, &why), CUDALOAD_OK);
    assert_int_equal(cl_gate_major(&d124, 0, 12, &why), CUDALOAD_OK);
    /* the reason as data: the major, the driver's version, and its branch as the text */
    assert_int_equal(cl_gate_major(&d124, 0, 13, &why), CUDALOAD_ERROR_DRIVER_TOO_OLD);
    assert_int_equal(why.reason, CUDALOAD_REASON_DRIVER_TOO_OLD);
    assert_int_equal(why.major, 13);
    assert_int_equal(why.value, 12040);
    assert_string_equal(cl_buf_str(&why.text), "550.54.15");
    /* cuDriverGetVersion decides, not the /proc branch; the branch only when the version is unknown */
    assert_int_equal(cl_gate_major(&compat, 0, 13, &why), CUDALOAD_OK);
    assert_int_equal(cl_gate_major(&odd, 0, 13, &why), CUDALOAD_ERROR_DRIVER_TOO_OLD);
    assert_int_equal(why.reason, CUDALOAD_REASON_DRIVER_BRANCH);
    assert_int_equal(why.needed, 580);
    assert_int_equal(why.value, 575);
    assert_int_equal(cl_gate_major(&d130, 12, 13, &why), CUDALOAD_ERROR_MAJOR_MISMATCH);
    assert_int_equal(why.reason, CUDALOAD_REASON_MAJOR_NOT_ASKED);
    assert_int_equal(why.needed, 12);
    cl_why_free(&why);
}

/* Roots are de-duplicated on their canonical path: a trailing slash or a symlinked alias is
 * the same root, listed once with the first occurrence's source. */
static void test_roots_dedup(void **state) {
    (void)state;
    char *tmp = th_tmpdir();
    char site[PATH_MAX], slash[PATH_MAX + 2], alias[PATH_MAX], other[PATH_MAX];
    snprintf(site, sizeof site, "%s/venv/lib/python3.12/site-packages", tmp);
    th_mkdirs(site);
    snprintf(slash, sizeof slash, "%s/", site);
    snprintf(alias, sizeof alias, "%s/alias-site", tmp);
    th_symlink(site, alias);
    snprintf(other, sizeof other, "%s/other", tmp);
    th_mkdirs(other);
    const char *roots[] = {slash, site, alias, other, "/nonexistent/x/", "/nonexistent/x"};
    cudaload_options o;
    cudaload_options_init(&o);
    o.flags = CUDALOAD_FLAG_IGNORE_ENV;
    o.sources = CUDALOAD_SOURCE_BIT(CUDALOAD_SOURCE_CALLER) | CUDALOAD_SOURCE_BIT(CUDALOAD_SOURCE_OVERRIDE);
    o.roots = roots;
    o.n_roots = 6;
    o.lib_dirs = alias; /* CUDALOAD_PATH-style dirs come first: this occurrence wins */
    cl_config cfg;
    cl_buf err = {0};
    assert_int_equal(cl_config_build(&cfg, &o, &err), CUDALOAD_OK);
    cl_roots r = {0};
    assert_int_equal(cl_search_build_roots(&r, &cfg, NULL), CUDALOAD_OK);
    if (r.n != 3) {
        for (size_t i = 0; i < r.n; i++) print_message("root %zu: %s\n", i, r.pub[i].path);
        fail_msg("%zu roots, want 3", r.n);
    }
    assert_string_equal(r.pub[0].path, alias);
    assert_int_equal(r.pub[0].source, CUDALOAD_SOURCE_OVERRIDE);
    assert_string_equal(r.pub[1].path, other);
    assert_string_equal(r.pub[2].path, "/nonexistent/x");
    assert_int_equal(r.pub[2].exists, 0);
    cl_roots_free(&r);
    cl_config_free(&cfg);
    cl_buf_free(&err);
    free(tmp);
}

/* The last-error rule: every call that fails sets the calling thread's message (no stale
 * text from an earlier failure); a call that succeeds leaves it as it was. */
static void test_last_error_rule(void **state) {
    (void)state;
    cl_set_error("an earlier failure");
    int v;
    assert_int_equal(cudaload_driver_version(NULL), CUDALOAD_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(cudaload_last_error(), "cudaload_driver_version: version is NULL"));
    assert_int_equal(cudaload_device_count(NULL), CUDALOAD_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(cudaload_last_error(), "cudaload_device_count: count is NULL"));
    assert_int_equal(cudaload_driver_version(&v), CUDALOAD_ERROR_NOT_INITIALIZED);
    assert_non_null(strstr(cudaload_last_error(), "not initialized"));
    cudaload_library_info info = {.size = sizeof info};
    assert_int_equal(cudaload_get_library_info(CUDALOAD_LIB_CUDART, &info), CUDALOAD_OK);
    assert_non_null(strstr(cudaload_last_error(), "not initialized")); /* success leaves it */
}

/* Info structs: any size from the first version's up. Smaller is INVALID_ARGUMENT; larger
 * (a newer caller) gets this version's fields and zeros after them; size is kept. */
static void test_info_struct_sizes(void **state) {
    (void)state;
    struct {
        cudaload_library_info info;
        unsigned char newer[16];
    } big;
    memset(&big, 0xA5, sizeof big);
    big.info.size = sizeof big;
    assert_int_equal(cudaload_get_library_info(CUDALOAD_LIB_CUBLAS, &big.info), CUDALOAD_OK);
    assert_int_equal(big.info.size, sizeof big);
    assert_int_equal(big.info.status, CUDALOAD_ERROR_NOT_ATTEMPTED);
    assert_string_equal(big.info.name, "cublas");
    for (size_t i = 0; i < sizeof big.newer; i++) assert_int_equal(big.newer[i], 0);
    cudaload_library_info small = {.size = CL_LIBRARY_INFO_SIZE_V1 - 1};
    assert_int_equal(cudaload_get_library_info(CUDALOAD_LIB_CUBLAS, &small), CUDALOAD_ERROR_INVALID_ARGUMENT);
    /* a 0.1 caller's struct (no details, no env_name) gets its prefix and nothing past it */
    struct {
        cudaload_library_info info;
    } old;
    memset(&old, 0xA5, sizeof old);
    old.info.size = CL_LIBRARY_INFO_SIZE_V1;
    assert_int_equal(cudaload_get_library_info(CUDALOAD_LIB_CUBLAS, &old.info), CUDALOAD_OK);
    assert_int_equal(old.info.size, CL_LIBRARY_INFO_SIZE_V1);
    assert_string_equal(old.info.name, "cublas");
    assert_int_equal(((unsigned char *)&old.info.details)[0], 0xA5);
    assert_non_null(strstr(cudaload_last_error(), "smaller than the first version's cudaload_library_info"));

    struct {
        cudaload_kernels_info info;
        unsigned char newer[8];
    } kbig;
    memset(&kbig, 0xA5, sizeof kbig);
    kbig.info.size = sizeof kbig;
    assert_int_equal(cudaload_kernels_info_get(-1, &kbig.info), CUDALOAD_OK);
    assert_int_equal(kbig.info.size, sizeof kbig);
    assert_int_equal(kbig.info.runnable, CUDALOAD_ERROR_NOT_ATTEMPTED);
    for (size_t i = 0; i < sizeof kbig.newer; i++) assert_int_equal(kbig.newer[i], 0);
    cudaload_kernels_info ksmall = {.size = sizeof ksmall - 1};
    assert_int_equal(cudaload_kernels_info_get(-1, &ksmall), CUDALOAD_ERROR_INVALID_ARGUMENT);
}

/* DT_SONAME read from a file without loading it. */
static void test_elf_file_soname(void **state) {
    (void)state;
    char path[PATH_MAX];
    toolkit_cudart(path, sizeof path);
    char *so = cl_elf_file_soname(path);
    assert_non_null(so);
    assert_string_equal(so, "libcudart.so.13");
    free(so);
    assert_null(cl_elf_file_soname("/nonexistent/libx.so"));
    assert_null(cl_elf_file_soname("/etc/hostname"));
}

/* The names a library defines, from its GNU hash table (st from cl_plat_symtab_open): the
 * symbols from symoffset to the last chain's end. */
static size_t defined_names(const cl_plat_symtab *st, const char **names, size_t cap) {
    const uint32_t *h = st->gnu_hash;
    uint32_t nbuckets = h[0], symoffset = h[1], bloom_size = h[2];
    const uint32_t *buckets = (const uint32_t *)((const ElfW(Addr) *)(h + 4) + bloom_size);
    const uint32_t *chain = buckets + nbuckets;
    uint32_t last = 0;
    for (uint32_t b = 0; b < nbuckets; b++)
        if (buckets[b] > last) last = buckets[b];
    if (last < symoffset) return 0;
    while (!(chain[last - symoffset] & 1)) last++;
    size_t n = 0;
    const ElfW(Sym) *syms = st->symtab;
    for (uint32_t i = symoffset; i <= last && n < cap; i++) names[n++] = st->strtab + syms[i].st_name;
    return n;
}

/* The fills' own symbol lookup (no lock of ld.so) answers as dlsym does for every name the
 * toolkit's libraries define, the versioned cudart among them; a name the library only imports
 * is its dependency's, which dlsym finds and the lookup leaves out. */
static void test_symtab_matches_dlsym(void **state) {
    (void)state;
    const char *files[] = {"libcudart.so.13", "libcublasLt.so.13", "libcublas.so.13", "libcufft.so.12", "libnvrtc.so.13"};
    static const char *names[20000];
    size_t compared = 0;
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        char path[PATH_MAX];
        toolkit_lib(files[f], path, sizeof path);
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!h) fail_msg("dlopen %s: %s", path, dlerror());
        cl_plat_symtab st;
        assert_int_equal(cl_plat_symtab_open(h, &st), 1);
        size_t n = defined_names(&st, names, sizeof names / sizeof names[0]);
        if (n < 20) fail_msg("%s: only %zu defined names read", files[f], n);
        for (size_t i = 0; i < n; i++) {
            int ask = -1;
            void *mine = cl_plat_symtab_find(&st, names[i], &ask);
            void *theirs = dlsym(h, names[i]);
            if (mine != theirs || ask != 0)
                fail_msg("%s: %s: own lookup %p (ask_loader %d), dlsym %p", files[f], names[i], mine, ask, theirs);
        }
        compared += n;
        int ask = -1;
        assert_null(cl_plat_symtab_find(&st, "cudaload_no_such_function", &ask));
        assert_int_equal(ask, 0);
        assert_null(cl_plat_symtab_find(&st, "malloc", &ask)); /* imported: libc's */
        assert_non_null(dlsym(h, "malloc"));
        /* left loaded: each of these libraries allocates an emergency pool of its own libstdc++
         * when it loads, which LeakSanitizer reports as lost once the library is closed */
    }
    if (compared < 1000) fail_msg("only %zu names compared", compared);
    printf("own symbol lookup = dlsym for %zu names in %zu libraries\n", compared, sizeof files / sizeof files[0]);
}

/* The symbols whose address only ld.so can give (a thread's TLS instance, an IFUNC's resolved
 * target, the process's one unique object, an absolute value) and the zero-valued ones dlsym
 * passes over, in two copies of a small library (tests/symkinds_lib.c, built by the Makefile):
 * the lookup answers as dlsym does, or hands the name to dlsym (ask_loader) as resolve.c's
 * cl_lookup_sym then does. In the second copy the unique object is the first copy's. */
static void test_symtab_special_symbols(void **state) {
    (void)state;
    const char *build = th_require_build(0);
    if (!build) fail_msg("CUDALOAD_TEST_BUILD is not set");
    const char *copies[] = {"libsymkinds_a.so", "libsymkinds_b.so"};
    void *handles[2];
    for (size_t c = 0; c < 2; c++) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/tests/%s", build, copies[c]);
        handles[c] = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!handles[c]) fail_msg("dlopen %s: %s", path, dlerror());
    }
    /* what the comparison rests on: dlsym's own answers for these kinds */
    assert_ptr_equal(dlsym(handles[1], "symkinds_unique"), dlsym(handles[0], "symkinds_unique"));
    assert_null(dlsym(handles[1], "symkinds_zero"));
    int (*ifunc)(void) = (int (*)(void))dlsym(handles[1], "symkinds_ifunc");
    assert_non_null(ifunc);
    assert_int_equal(ifunc(), 4);
    assert_int_equal(*(int *)dlsym(handles[1], "symkinds_tls"), 3);

    const char *names[] = {"symkinds_plain_function", "symkinds_plain_object", "symkinds_tls",
                           "symkinds_ifunc", "symkinds_unique", "symkinds_absolute",
                           "symkinds_absolute_zero", "symkinds_zero"};
    size_t differ = 0;
    for (size_t c = 0; c < 2; c++) {
        cl_plat_symtab st;
        assert_int_equal(cl_plat_symtab_open(handles[c], &st), 1);
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
            int ask_loader = -1;
            void *mine = cl_plat_symtab_find(&st, names[i], &ask_loader);
            void *answer = ask_loader ? dlsym(handles[c], names[i]) : mine;
            void *theirs = dlsym(handles[c], names[i]);
            if (answer != theirs || (ask_loader && mine)) { /* each one told, then the test fails */
                printf("%s: %s: own lookup %p (ask_loader %d), dlsym %p\n", copies[c], names[i], mine, ask_loader,
                       theirs);
                differ++;
            }
        }
        /* an ordinary export is answered without the loader */
        int ask_loader = -1;
        assert_non_null(cl_plat_symtab_find(&st, "symkinds_plain_function", &ask_loader));
        assert_int_equal(ask_loader, 0);
    }
    for (size_t c = 0; c < 2; c++) dlclose(handles[c]);
    if (differ) fail_msg("%zu answers unlike dlsym's", differ);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_names),
        cmocka_unit_test(test_parse_sources),
        cmocka_unit_test_setup(test_elf_check, load_real_header),
        cmocka_unit_test(test_proc_driver_version),
        cmocka_unit_test(test_ldcache_lookup),
        cmocka_unit_test(test_ldcache_arch_flags),
        cmocka_unit_test(test_target_triples),
        cmocka_unit_test(test_detect_tegra),
        cmocka_unit_test(test_site_packages_of),
        cmocka_unit_test(test_config_validation),
        cmocka_unit_test(test_gate_major),
        cmocka_unit_test(test_roots_dedup),
        cmocka_unit_test(test_last_error_rule),
        cmocka_unit_test(test_info_struct_sizes),
        cmocka_unit_test(test_elf_file_soname),
        cmocka_unit_test(test_symtab_matches_dlsym),
        cmocka_unit_test(test_symtab_special_symbols),
    };
    return cmocka_run_group_tests_name("units", tests, NULL, NULL);
}
