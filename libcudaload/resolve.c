/* SPDX-License-Identifier: Apache-2.0 */
/*
 * resolve.c -- step 3 of the walk: fill a library's typed table from its dlopen handle.
 *
 * The descriptors are generated (api_symbols.inc, from the lists of include/cudaload_tables.h
 * and include/cudaload_<lib>.h): one per entry, with its exported name, whether it is required,
 * the version of its ABI and the offsets of its pointer and presence flag. A table is filled in
 * a scratch copy (cl_resolve_fill, with the loader's lock let go: dlsym and the driver's calls
 * are foreign code) and committed under the lock (cl_resolve_commit) only once the candidate
 * passed every check, so a rejected candidate never leaves a half-filled table behind.
 *
 * The walk fills only the entries of the hand-written lists (include/cudaload_tables.h: what the
 * walk, the gate and the kernels' preparation call); the generated rest is filled when a caller
 * first asks for the table (cl_resolve_rest, called by the accessors before they hand the table
 * out), so init does not pay for the hundreds of entries a program may never call: the driver's
 * 518 through cuGetProcAddress, cudart's 354 by dlsym. No caller sees a table before it is whole,
 * so its entries never change once seen.
 *
 * The driver's entries are asked of cuGetProcAddress with the version of their ABI and the
 * stream semantics their name says (_ptsz/_ptds: per-thread default stream), as the CUDA
 * runtime does; see cl_driver_proc.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

typedef struct cl_symbol {
    const char *name;       /* exported (versioned) name, e.g. "cublasSgemm_v2" */
    const char *macro_name; /* the name in the list, e.g. "cublasSgemm" */
    int required;
    int since;              /* the first release with it; the driver: the version of its ABI */
    int generated;          /* 1: from the generated lists (0: the 0.2 lists) */
    size_t fn_offset;
    size_t has_offset;
} cl_symbol;

typedef struct cl_table_desc {
    const char *row;        /* the catalogue row's name */
    const cl_symbol *symbols;
    size_t count;
    void *table;            /* in the context (cl_ctx.tables), zero before the first fill */
    size_t size;
} cl_table_desc;

#define CL_HIST_DESC(req, name) \
    {CUDALOAD_SYMBOL_NAME(name), #name, req, 0, 0, offsetof(CL_T, name), offsetof(CL_T, has.name)},
#define CL_GEN_DESC(m, sym, since, ret, params) {#sym, #m, 0, since, 1, offsetof(CL_T, m), offsetof(CL_T, has.m)},
#include "api_symbols.inc"

#define CL_N_TABLES (sizeof cl_table_descs / sizeof cl_table_descs[0])

/* The table of each catalogue row, found by name once (the rows' order is the catalogue's). */
static const cl_table_desc *cl_row_table[CL_CATALOGUE_MAX];
static pthread_once_t cl_row_table_once = PTHREAD_ONCE_INIT;
static void cl_row_table_build(void) {
    for (size_t i = 0; i < CL_N_TABLES; i++) {
        int row = cl_catalogue_find(cl_table_descs[i].row);
        if (row >= 0) cl_row_table[row] = &cl_table_descs[i];
    }
}
static const cl_table_desc *cl_table_of(cudaload_lib lib) {
    pthread_once(&cl_row_table_once, cl_row_table_build);
    return (unsigned)lib < CL_CATALOGUE_MAX ? cl_row_table[lib] : NULL;
}

/* cuGetProcAddress (its CUDA 12 ABI) and what it needs, read from the driver's handle once per
 * fill. NULL proc: a driver older than 12.0 (or the tests' fake driver), which exports every
 * entry point under its versioned name: dlsym alone then. */
typedef CUresult (*cl_proc_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
typedef struct cl_driver_proc {
    cl_proc_fn proc;
    int version;
} cl_driver_proc;

static void *cl_driver_entry(const cl_driver_proc *dp, const cl_symbol *s) {
    if (!dp->proc || !s->since || s->since > dp->version) return NULL;
    /* the name cuGetProcAddress knows: without the ABI suffix (_v2) and the stream one (_ptsz) */
    char base[128];
    size_t n = strlen(s->name);
    if (n >= sizeof base) return NULL;
    memcpy(base, s->name, n + 1);
    int per_thread = 0;
    if (n > 5 && (strcmp(base + n - 5, "_ptsz") == 0 || strcmp(base + n - 5, "_ptds") == 0)) {
        per_thread = 1;
        base[n -= 5] = '\0';
    }
    char *v = strrchr(base, '_');
    if (v && v[1] == 'v' && v[2] >= '0' && v[2] <= '9' && strspn(v + 2, "0123456789") == strlen(v + 2)) *v = '\0';
    void *p = NULL;
    CUdriverProcAddressQueryResult q = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    cuuint64_t flags = per_thread ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : CU_GET_PROC_ADDRESS_LEGACY_STREAM;
    if (dp->proc(base, &p, s->since, flags, &q) != CUDA_SUCCESS || q != CU_GET_PROC_ADDRESS_SUCCESS) return NULL;
    return p;
}

/* Where a fill looks names up: the library's own symbol table read in memory, which takes none of
 * the dynamic loader's locks (a table's first ask may come while another thread runs a dlopen's
 * constructors, which hold ld.so's lock: dlsym would wait for them) and costs a hash probe; dlsym
 * where that table cannot be read (Windows, a file without DT_GNU_HASH) or the address is the
 * loader's to give (an IFUNC, a TLS symbol, a unique object, an absolute symbol). An entry
 * is the library's own export, so a name it does not define is absent (dlsym would also search
 * its dependencies). */
typedef struct cl_lookup {
    void *handle;
    cl_plat_symtab own;
} cl_lookup;

static cl_lookup cl_lookup_of(void *handle) {
    cl_lookup l = {handle, {0}};
    cl_plat_symtab_open(handle, &l.own);
    return l;
}

static void *cl_lookup_sym(const cl_lookup *l, const char *name) {
    int ask_loader = 1;
    void *p = cl_plat_symtab_find(&l->own, name, &ask_loader);
    return p || !ask_loader ? p : cl_plat_sym(l->handle, name, NULL);
}

/* The driver's cuGetProcAddress and version, from its handle (foreign code: no lock held);
 * version: the one the walk recorded, or 0 to ask cuDriverGetVersion. */
static cl_driver_proc cl_driver_proc_of(cudaload_lib lib, const cl_lookup *l, int version) {
    cl_driver_proc dp = {0};
    if (lib != CUDALOAD_LIB_DRIVER) return dp;
    dp.proc = (cl_proc_fn)cl_lookup_sym(l, "cuGetProcAddress_v2");
    dp.version = version;
    if (version > 0) return dp;
    int (*get_version)(int *) = (int (*)(int *))cl_lookup_sym(l, "cuDriverGetVersion");
    if (!get_version || get_version(&dp.version) != 0) dp.proc = NULL;
    return dp;
}

/* One entry: cuGetProcAddress first for the driver, else its exported name. */
static void *cl_entry(const cl_driver_proc *dp, const cl_lookup *l, const cl_symbol *s, size_t *by_proc) {
    void *p = cl_driver_entry(dp, s);
    if (p) {
        ++*by_proc;
        return p;
    }
    return cl_lookup_sym(l, s->name);
}

cudaload_status cl_resolve_fill(cudaload_lib lib, void *handle, cl_buf *why) {
    /* a row without a typed table: its version call (cl_read_version) is all that is required */
    const cl_table_desc *t = cl_table_of(lib);
    if (!t) return CUDALOAD_OK;
    cl_lookup l = cl_lookup_of(handle);
    cl_driver_proc dp = cl_driver_proc_of(lib, &l, 0);
    /* the scratch is the walking thread's alone (one walk at a time): no lock needed here */
    memset(&cl_ctx.tables.scratch, 0, sizeof cl_ctx.tables.scratch);
    size_t missing_optional = 0, by_proc = 0, later = 0;
    for (size_t i = 0; i < t->count; i++) {
        const cl_symbol *s = &t->symbols[i];
        if (s->generated) { /* filled when the table is first asked for (cl_resolve_rest) */
            later++;
            continue;
        }
        void *p = cl_entry(&dp, &l, s, &by_proc);
        if (!p) {
            if (s->required) {
                cl_buf e = {0};
                cl_plat_sym(handle, s->name, &e); /* again, for the loader's text */
                cl_buf_printf(why, "%s (%s)", s->name, e.len ? cl_buf_str(&e) : "not exported");
                cl_buf_free(&e);
                return CUDALOAD_ERROR_SYMBOL_MISSING;
            }
            missing_optional++;
            continue;
        }
        memcpy((char *)&cl_ctx.tables.scratch + s->fn_offset, &p, sizeof p);
        ((unsigned char *)&cl_ctx.tables.scratch)[s->has_offset] = 1;
    }
    cl_debug("  resolved %zu of %zu symbols (%zu through cuGetProcAddress; %zu optional absent; %zu when first asked for)",
             t->count - later - missing_optional, t->count, by_proc, missing_optional, later);
    return CUDALOAD_OK;
}

void cl_resolve_commit(cudaload_lib lib) {
    const cl_table_desc *t = cl_table_of(lib);
    if (t) memcpy(t->table, &cl_ctx.tables.scratch, t->size);
    if ((unsigned)lib < CL_CATALOGUE_MAX) cl_ctx.tables.stable_only[lib] = 0;
}

/* lib's slots in the rest area: the slot of an entry is its pointer's place in the tables */
static _Atomic(void *) *cl_rest_of(const cl_table_desc *t) {
    return cl_ctx.tables.rest + ((const char *)t->table - (const char *)&cl_ctx.tables) / sizeof(void *);
}

int cl_resolve_rest(cudaload_lib lib, void *handle, int driver_version) {
    const cl_table_desc *t = cl_table_of(lib);
    if (!t || !handle || cl_ctx.tables.stable_only[lib]) return 0;
    _Atomic(void *) *rest = cl_rest_of(t);
    cl_lookup l = cl_lookup_of(handle);
    cl_driver_proc dp = cl_driver_proc_of(lib, &l, driver_version);
    size_t by_proc = 0, absent = 0, n = 0;
    for (size_t i = 0; i < t->count; i++) {
        const cl_symbol *s = &t->symbols[i];
        if (!s->generated) continue;
        n++;
        void *p = cl_entry(&dp, &l, s, &by_proc);
        absent += p == NULL;
        atomic_store_explicit(&rest[s->fn_offset / sizeof(void *)], p, memory_order_relaxed);
    }
    cl_debug("%s: its table asked for: %zu more entries resolved (%zu through cuGetProcAddress; %zu absent)",
             cl_row_at((size_t)lib)->name, n - absent, by_proc, absent);
    return 1;
}

void cl_resolve_rest_commit(cudaload_lib lib) {
    const cl_table_desc *t = cl_table_of(lib);
    if (!t) return;
    _Atomic(void *) *rest = cl_rest_of(t);
    for (size_t i = 0; i < t->count; i++) {
        const cl_symbol *s = &t->symbols[i];
        if (!s->generated) continue;
        void *p = atomic_load_explicit(&rest[s->fn_offset / sizeof(void *)], memory_order_relaxed);
        memcpy((char *)t->table + s->fn_offset, &p, sizeof p);
        ((unsigned char *)t->table)[s->has_offset] = p != NULL;
    }
}

const void *cl_resolve_scratch(cudaload_lib lib) { return cl_table_of(lib) ? (const void *)&cl_ctx.tables.scratch : NULL; }

void cl_resolve_keep_stable(cudaload_lib lib) {
    const cl_table_desc *t = cl_table_of(lib);
    if (!t) return;
    /* the walk filled none of the generated entries (cl_resolve_fill): they stay NULL, as
     * cl_resolve_rest, seeing the flag, fills nothing more */
    cl_ctx.tables.stable_only[lib] = 1;
    size_t generated = 0;
    for (size_t i = 0; i < t->count; i++) generated += t->symbols[i].generated;
    cl_debug("  another CUDA major than the headers' (%d): %zu generated entries left NULL", CL_HEADERS_MAJOR, generated);
}

void cl_resolve_clear(cudaload_lib lib) {
    const cl_table_desc *t = cl_table_of(lib);
    if (t) memset(t->table, 0, t->size);
    if ((unsigned)lib < CL_CATALOGUE_MAX) cl_ctx.tables.stable_only[lib] = 0;
}

size_t cl_symbol_count(cudaload_lib lib) {
    const cl_table_desc *t = cl_table_of(lib);
    return t ? t->count : 0;
}

int cl_symbol_info(cudaload_lib lib, size_t i, const char **name, int *required, int *present) {
    const cl_table_desc *t = cl_table_of(lib);
    if (!t || i >= t->count) return 0;
    const cl_symbol *s = &t->symbols[i];
    if (name) *name = s->name;
    if (required) *required = s->required;
    if (present) *present = ((const unsigned char *)t->table)[s->has_offset];
    return 1;
}

int cl_symbol_present(cudaload_lib lib, const char *name) {
    const cl_table_desc *t = cl_table_of(lib);
    if (!t || !name) return 0;
    for (size_t i = 0; i < t->count; i++)
        if (strcmp(t->symbols[i].name, name) == 0 || strcmp(t->symbols[i].macro_name, name) == 0)
            return ((const unsigned char *)t->table)[t->symbols[i].has_offset];
    return 0;
}

/* Accessors used by cudaload.c (which knows when each table is final). */
const void *cl_table_ptr(cudaload_lib lib) {
    const cl_table_desc *t = cl_table_of(lib);
    return t ? t->table : NULL;
}
