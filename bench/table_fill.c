/* SPDX-License-Identifier: Apache-2.0 */
/*
 * table_fill.c -- a developer tool, not part of the library: what filling the driver's and
 * cudart's complete tables costs at init, apart from loading the files. Times dlopen of
 * libcuda.so.1, the driver table's entries looked up one by one through cuGetProcAddress_v2 (as
 * resolve.c does, with each entry's ABI version) and by dlsym of the exported name, dlopen of
 * libcudart.so.13 (argv[1], or the loader's search) and dlsym of every cudart entry. One pass per
 * process: run it several times (docs/gpu-run/performance-history.md, "Loader cost").
 *
 *   gcc -O2 -std=c11 -Iinclude -isystem /usr/local/cuda/include -o build/table_fill bench/table_fill.c -ldl
 *   for i in 1 2 3 4 5; do build/table_fill <site-packages>/nvidia/cu13/lib/libcudart.so.13; done
 */
#define _GNU_SOURCE
#include "cudaload_tables.h"
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#define NAME(m, sym, since, ret, params) {#sym, since},
static const struct { const char *name; int since; } drv[] = { CUDALOAD_CUDA_API(NAME) };
#define RNAME(m, sym, since, ret, params) #sym,
static const char *rt[] = { CUDALOAD_CUDART_API(RNAME) };
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec / 1e3; }
int main(int argc, char **argv) {
    double t0 = now();
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    double t1 = now();
    CUresult (*proc)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *) = (void *)dlsym(h, "cuGetProcAddress_v2");
    size_t n = sizeof drv / sizeof drv[0], found = 0;
    double t2 = now();
    for (size_t i = 0; i < n; i++) {
        char base[128]; snprintf(base, sizeof base, "%s", drv[i].name);
        char *v = strrchr(base, '_'); if (v && v[1] == 'v' && v[2] >= '0' && v[2] <= '9') *v = 0;
        void *p = NULL; CUdriverProcAddressQueryResult q;
        if (proc(base, &p, drv[i].since, 0, &q) == 0 && p) found++;
    }
    double t3 = now();
    size_t found2 = 0;
    for (size_t i = 0; i < n; i++) if (dlsym(h, drv[i].name)) found2++;
    double t4 = now();
    void *r = dlopen(argc > 1 ? argv[1] : "libcudart.so.13", RTLD_NOW | RTLD_LOCAL);
    double t5 = now();
    size_t nr = sizeof rt / sizeof rt[0], found3 = 0;
    for (size_t i = 0; i < nr; i++) if (r && dlsym(r, rt[i])) found3++;
    double t6 = now();
    printf("dlopen libcuda %.0f us; %zu cuGetProcAddress_v2 %.0f us (%zu found); %zu dlsym libcuda %.0f us (%zu); dlopen cudart %.0f us; %zu dlsym cudart %.0f us (%zu)\n",
           t1 - t0, n, t3 - t2, found, n, t4 - t3, found2, t5 - t4, nr, t6 - t5, found3);
    return 0;
}
