/* SPDX-License-Identifier: Apache-2.0 */
/*
 * symkinds_lib.c -- a small shared library exporting one symbol of each kind whose address
 * only the dynamic loader can give, or which dlsym does not answer at all, for test_units'
 * test_symtab_special_symbols (cl_plat_symtab_find against dlsym). Built twice, as
 * libsymkinds_a.so and libsymkinds_b.so, so that the unique object has two definitions in
 * one process.
 */

/* an ordinary function and object: the in-memory lookup answers these itself */
int symkinds_plain_function(void);
int symkinds_plain_function(void) { return 1; }
int symkinds_plain_object = 2;

/* STT_TLS: st_value is an offset in the library's TLS block; dlsym answers the address of the
 * calling thread's instance */
__thread int symkinds_tls = 3;

/* STT_GNU_IFUNC: st_value is the resolver; dlsym answers what the resolver returns */
static int symkinds_ifunc_target(void) { return 4; }
static int (*symkinds_ifunc_resolver(void))(void) { return symkinds_ifunc_target; }
int symkinds_ifunc(void) __attribute__((ifunc("symkinds_ifunc_resolver")));

/* STB_GNU_UNIQUE (what g++ makes of a template's or an inline function's static local): ld.so
 * keeps one definition per process, the first loaded, and dlsym on any copy answers that one.
 * SHN_ABS: glibc (2.28 on) answers the value itself, older glibc and musl add the load base.
 * A defined symbol of value 0 (here in a section that is not loaded, whose address is 0):
 * dlsym passes over it as no definition, and so does an absolute one of value 0 (a version's
 * name). */
__asm__(".data\n"
        ".globl symkinds_unique\n"
        ".type symkinds_unique, %gnu_unique_object\n"
        ".size symkinds_unique, 4\n"
        "symkinds_unique:\n"
        ".long 5\n"
        ".globl symkinds_absolute\n"
        ".set symkinds_absolute, 0x1234\n"
        ".globl symkinds_absolute_zero\n"
        ".set symkinds_absolute_zero, 0\n"
        ".section .symkinds_unloaded,\"\",%progbits\n"
        ".globl symkinds_zero\n"
        ".type symkinds_zero, %object\n"
        ".size symkinds_zero, 4\n"
        "symkinds_zero:\n"
        ".long 6\n"
        ".text\n");
