/* SPDX-License-Identifier: Apache-2.0 */
/* selfcall.c -- the hidden version of the stubs of the libraries that version none of their
 * exports (NCCL, NVML, cuFile, cuSPARSELt; docs/stubs.md), in miniature (test_stubs.c:
 * test_hidden_version_binding). Built three ways (Makefile):
 *   -DSELFCALL_LIB   libselfcall.so, such a library: selfcall_g calls its own export selfcall_f
 *                    through the PLT, an unversioned reference (libnvidia-ml.so.1's own
 *                    nvmlInit_v2, libnccl.so.2's ncclGetVersion)
 *   -DSELFCALL_STUB  its stub, built as those stubs are: libcudaload-selfcall.so linked with
 *                    stubs/stub_unversioned.map, libcudaload-selfcall.so.0 made from it by
 *                    tools/hide_versions.py
 *   neither          the program, linked to the stub (-lcudaload-selfcall): calls selfcall_f,
 *                    then opens the library (argv[1]) and calls its selfcall_g
 * Prints key=value: stub_f (42: the program's call reached the stub), lib_g (1: the library's
 * call reached its own selfcall_f; 42: the stub took it), default_is_stub (1 when dlsym's
 * unversioned lookup in the global scope finds the stub's selfcall_f), versioned_is_stub (1 when
 * dlvsym's for CUDALOAD_STUB_0 does). */
#ifdef SELFCALL_LIB
int selfcall_f(void);
int selfcall_g(void);
int selfcall_f(void) { return 1; }
int selfcall_g(void) { return selfcall_f(); }
#elif defined SELFCALL_STUB
int selfcall_f(void);
int selfcall_f(void) { return 42; }
#else
#define _GNU_SOURCE /* dlvsym */
#include <dlfcn.h>
#include <stdio.h>

int selfcall_f(void);

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    printf("stub_f=%d\n", selfcall_f());
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "%s\n", dlerror());
        return 1;
    }
    int (*g)(void) = (int (*)(void))dlsym(lib, "selfcall_g");
    if (!g) return 1;
    printf("lib_g=%d\n", g());
    void *found = dlsym(RTLD_DEFAULT, "selfcall_f");
    printf("default_is_stub=%d\n", found != NULL && found == (void *)selfcall_f);
    found = dlvsym(RTLD_DEFAULT, "selfcall_f", "CUDALOAD_STUB_0");
    printf("versioned_is_stub=%d\n", found != NULL && found == (void *)selfcall_f);
    return 0;
}
#endif
