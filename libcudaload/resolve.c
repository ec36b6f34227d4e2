/*
 * resolve.c -- step 3 of the walk: fill the typed tables from a dlopen handle.
 *
 * Everything here is generated from the X-macro lists of cudaload_tables.h: one descriptor
 * per entry (exported name, macro name, required, offsets of the pointer and its presence
 * flag). A table is filled in a scratch copy and committed only when every required
 * symbol was found, so a rejected candidate never leaves a half-filled table behind.
 */
#define _GNU_SOURCE
#include "cudaload_tables.h"
#include "internal.h"

#include <dlfcn.h>
#include <string.h>

typedef struct cl_symbol {
    const char *name;       /* exported (versioned) name, e.g. "cublasSgemm_v2" */
    const char *macro_name; /* the name in the list, e.g. "cublasSgemm" */
    int required;
    size_t fn_offset;
    size_t has_offset;
} cl_symbol;

#define CL_DRIVER_DESC(req, name) \
    {CUDALOAD_SYMBOL_NAME(name), #name, req, offsetof(cudaload_driver_table, name), offsetof(cudaload_driver_table, has.name)},
#define CL_CUDART_DESC(req, name) \
    {CUDALOAD_SYMBOL_NAME(name), #name, req, offsetof(cudaload_cudart_table, name), offsetof(cudaload_cudart_table, has.name)},
#define CL_CUBLAS_DESC(req, name) \
    {CUDALOAD_SYMBOL_NAME(name), #name, req, offsetof(cudaload_cublas_table, name), offsetof(cudaload_cublas_table, has.name)},
#define CL_CUBLASLT_DESC(req, name) \
    {CUDALOAD_SYMBOL_NAME(name), #name, req, offsetof(cudaload_cublaslt_table, name), offsetof(cudaload_cublaslt_table, has.name)},

static const cl_symbol cl_driver_symbols[] = {CUDALOAD_DRIVER_SYMBOLS(CL_DRIVER_DESC)};
static const cl_symbol cl_cudart_symbols[] = {CUDALOAD_CUDART_SYMBOLS(CL_CUDART_DESC)};
static const cl_symbol cl_cublas_symbols[] = {CUDALOAD_CUBLAS_SYMBOLS(CL_CUBLAS_DESC)};
static const cl_symbol cl_cublaslt_symbols[] = {CUDALOAD_CUBLASLT_SYMBOLS(CL_CUBLASLT_DESC)};

/* The tables themselves live in the context (cl_ctx.tables: zero before the first fill). */
typedef struct cl_table_desc {
    const cl_symbol *symbols;
    size_t count;
    void *table;
    size_t size;
} cl_table_desc;

static const cl_table_desc cl_table_descs[CUDALOAD_LIB_COUNT_] = {
    [CUDALOAD_LIB_DRIVER] = {cl_driver_symbols, sizeof cl_driver_symbols / sizeof(cl_symbol), &cl_ctx.tables.driver,
                             sizeof cl_ctx.tables.driver},
    [CUDALOAD_LIB_CUDART] = {cl_cudart_symbols, sizeof cl_cudart_symbols / sizeof(cl_symbol), &cl_ctx.tables.cudart,
                             sizeof cl_ctx.tables.cudart},
    [CUDALOAD_LIB_CUBLASLT] = {cl_cublaslt_symbols, sizeof cl_cublaslt_symbols / sizeof(cl_symbol),
                               &cl_ctx.tables.cublaslt, sizeof cl_ctx.tables.cublaslt},
    [CUDALOAD_LIB_CUBLAS] = {cl_cublas_symbols, sizeof cl_cublas_symbols / sizeof(cl_symbol), &cl_ctx.tables.cublas,
                             sizeof cl_ctx.tables.cublas},
};

cudaload_status cl_resolve(cudaload_lib lib, void *handle, cl_buf *why) {
    /* a row without a typed table: its version call (cl_read_version) is all that is required */
    if ((unsigned)lib >= CUDALOAD_LIB_COUNT_) return CUDALOAD_OK;
    const cl_table_desc *t = &cl_table_descs[lib];
    /* callers hold the context's lock */
    memset(&cl_ctx.tables.scratch, 0, sizeof cl_ctx.tables.scratch);
    size_t missing_optional = 0;
    for (size_t i = 0; i < t->count; i++) {
        const cl_symbol *s = &t->symbols[i];
        dlerror();
        void *p = dlsym(handle, s->name);
        if (!p) {
            if (s->required) {
                const char *e = dlerror();
                cl_buf_printf(why, "%s (%s)", s->name, e ? e : "not exported");
                return CUDALOAD_ERROR_SYMBOL_MISSING;
            }
            missing_optional++;
            cl_debug("  optional symbol %s absent: presence flag false", s->name);
            continue;
        }
        memcpy((char *)&cl_ctx.tables.scratch + s->fn_offset, &p, sizeof p);
        ((unsigned char *)&cl_ctx.tables.scratch)[s->has_offset] = 1;
    }
    memcpy(t->table, &cl_ctx.tables.scratch, t->size);
    cl_debug("  resolved %zu of %zu symbols (%zu optional absent)", t->count - missing_optional, t->count,
             missing_optional);
    return CUDALOAD_OK;
}

void cl_resolve_clear(cudaload_lib lib) {
    if ((unsigned)lib < CUDALOAD_LIB_COUNT_) memset(cl_table_descs[lib].table, 0, cl_table_descs[lib].size);
}

size_t cl_symbol_count(cudaload_lib lib) {
    return (unsigned)lib < CUDALOAD_LIB_COUNT_ ? cl_table_descs[lib].count : 0;
}

int cl_symbol_info(cudaload_lib lib, size_t i, const char **name, int *required, int *present) {
    if ((unsigned)lib >= CUDALOAD_LIB_COUNT_ || i >= cl_table_descs[lib].count) return 0;
    const cl_symbol *s = &cl_table_descs[lib].symbols[i];
    if (name) *name = s->name;
    if (required) *required = s->required;
    if (present) *present = ((const unsigned char *)cl_table_descs[lib].table)[s->has_offset];
    return 1;
}

int cl_symbol_present(cudaload_lib lib, const char *name) {
    if ((unsigned)lib >= CUDALOAD_LIB_COUNT_ || !name) return 0;
    const cl_table_desc *t = &cl_table_descs[lib];
    for (size_t i = 0; i < t->count; i++)
        if (strcmp(t->symbols[i].name, name) == 0 || strcmp(t->symbols[i].macro_name, name) == 0)
            return ((const unsigned char *)t->table)[t->symbols[i].has_offset];
    return 0;
}

/* Accessors used by cudaload.c (which knows when each table is final). */
const void *cl_table_ptr(cudaload_lib lib) {
    return (unsigned)lib < CUDALOAD_LIB_COUNT_ ? cl_table_descs[lib].table : NULL;
}
