/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cudaload_tables.h -- typed function tables for the CUDA driver, runtime and cuBLAS.
 *
 * One X-macro list per library drives everything derived from it: the table struct, the
 * loader that fills it, the presence flags of optional symbols and the probe's listing.
 * Each entry is X(required, name): required is 1 when a candidate library lacking the
 * symbol is rejected, 0 when the symbol is optional (its presence flag says whether it
 * was found; libcudaload's own wrappers check the flag and return a status, never calling
 * a NULL pointer).
 *
 * Member types come from the real prototypes: this header includes cuda.h,
 * cuda_runtime_api.h and cublas_v2.h (from the toolkit or the nvidia wheels' include dir).
 * Many CUDA names are macros for versioned ABIs (cublasSgemm -> cublasSgemm_v2,
 * cuMemAlloc -> cuMemAlloc_v2). The member is named after the expanded name, and the
 * symbol looked up is the expanded name too (stringized through a second macro level), so
 * t->cublasSgemm(...) calls the right ABI exactly as a directly linked call would.
 *
 * Since 0.3 each table also holds every other function its library exports and its headers
 * declare, from the generated lists of include/cudaload_<lib>.h (tools/gen_api.py): after the
 * 0.2 members and flags, so code built against 0.2 keeps its offsets. docs/api.md.
 *
 * The tables are zeroed before they are filled and never change after: read them freely
 * from any thread once the accessor returned non-NULL.
 */
#ifndef CUDALOAD_TABLES_H
#define CUDALOAD_TABLES_H

#include "cudaload.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cublas_v2.h>
#include <cublasLt.h>

/* The generated lists of every other function of these libraries (tools/gen_api.py). */
#include "cudaload_cuda.h"
#include "cudaload_cudart.h"
#include "cudaload_cublaslt.h"
#include "cudaload_cublas.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Stringize after macro expansion: CUDALOAD_SYMBOL_NAME(cublasSgemm) is "cublasSgemm_v2". */
#define CUDALOAD_SYMBOL_NAME_(x) #x
#define CUDALOAD_SYMBOL_NAME(x) CUDALOAD_SYMBOL_NAME_(x)

/* ---- the lists (the single source of truth) ---- */

/* libcuda.so.1. Resolved with dlsym under the expanded (versioned) names. The required set is
 * what libcudaload itself calls during init and device queries; the kernel launch path is
 * optional here and checked by the code that launches. */
#define CUDALOAD_DRIVER_SYMBOLS(X)      \
    X(1, cuInit)                        \
    X(1, cuDriverGetVersion)            \
    X(1, cuDeviceGetCount)              \
    X(1, cuDeviceGet)                   \
    X(1, cuDeviceGetName)               \
    X(1, cuDeviceGetAttribute)          \
    X(1, cuDeviceTotalMem)              \
    X(1, cuGetErrorName)                \
    X(1, cuGetErrorString)              \
    X(0, cuGetProcAddress)              \
    X(0, cuDevicePrimaryCtxRetain)      \
    X(0, cuDevicePrimaryCtxRelease)     \
    X(0, cuCtxPushCurrent)              \
    X(0, cuCtxPopCurrent)               \
    X(0, cuCtxGetCurrent)               \
    X(0, cuModuleLoadData)              \
    X(0, cuModuleUnload)                \
    X(0, cuModuleGetFunction)           \
    X(0, cuLaunchKernel)

/* libcudart.so.{13,12}. Required: calls whose ABI is the same in CUDA 12 and 13. */
#define CUDALOAD_CUDART_SYMBOLS(X)      \
    X(1, cudaRuntimeGetVersion)         \
    X(1, cudaDriverGetVersion)          \
    X(1, cudaGetDeviceCount)            \
    X(1, cudaGetDevice)                 \
    X(1, cudaSetDevice)                 \
    X(1, cudaDeviceGetAttribute)        \
    X(1, cudaDeviceSynchronize)         \
    X(1, cudaGetLastError)              \
    X(1, cudaGetErrorName)              \
    X(1, cudaGetErrorString)            \
    X(1, cudaMalloc)                    \
    X(1, cudaFree)                      \
    X(1, cudaMemGetInfo)                \
    X(1, cudaMemcpy)                    \
    X(1, cudaMemcpyAsync)               \
    X(1, cudaMemsetAsync)               \
    X(1, cudaStreamCreate)              \
    X(1, cudaStreamDestroy)             \
    X(1, cudaStreamSynchronize)         \
    X(1, cudaEventCreate)               \
    X(1, cudaEventRecord)               \
    X(1, cudaEventSynchronize)          \
    X(1, cudaEventElapsedTime)          \
    X(1, cudaEventDestroy)              \
    X(0, cudaPointerGetAttributes)      \
    X(0, cudaMemGetDefaultMemPool)

/* libcublas.so.{13,12} (libcublasLt is loaded first from the same directory). */
#define CUDALOAD_CUBLAS_SYMBOLS(X)      \
    X(1, cublasCreate)                  \
    X(1, cublasDestroy)                 \
    X(1, cublasGetVersion)              \
    X(1, cublasGetProperty)             \
    X(1, cublasSetStream)               \
    X(1, cublasGetStream)               \
    X(1, cublasSetMathMode)             \
    X(1, cublasGetMathMode)             \
    X(1, cublasSaxpy)                   \
    X(1, cublasSgemm)                   \
    X(1, cublasGetStatusName)           \
    X(1, cublasGetStatusString)

/* libcublasLt.so.{13,12}: only what proves the file is cublasLt. */
#define CUDALOAD_CUBLASLT_SYMBOLS(X)    \
    X(1, cublasLtGetVersion)            \
    X(1, cublasLtGetProperty)

/* ---- the tables, derived from the lists ---- */

#define CUDALOAD_TABLE_MEMBER_(req, name) __typeof__(name) *name;
#define CUDALOAD_TABLE_FLAG_(req, name) unsigned char name;

/** Driver API table. `has` holds one presence flag per entry (1 = resolved). */
CUDALOAD_TABLE_BEGIN_
typedef struct cudaload_driver_table {
    CUDALOAD_DRIVER_SYMBOLS(CUDALOAD_TABLE_MEMBER_)
    struct { CUDALOAD_DRIVER_SYMBOLS(CUDALOAD_TABLE_FLAG_) CUDALOAD_CUDA_API(CUDALOAD_API_FLAG_) } has;
    CUDALOAD_CUDA_API(CUDALOAD_API_MEMBER_) /* since 0.3: every other function (generated) */
} cudaload_driver_table;
CUDALOAD_TABLE_END_

/** Runtime API table. */
CUDALOAD_TABLE_BEGIN_
typedef struct cudaload_cudart_table {
    CUDALOAD_CUDART_SYMBOLS(CUDALOAD_TABLE_MEMBER_)
    struct { CUDALOAD_CUDART_SYMBOLS(CUDALOAD_TABLE_FLAG_) CUDALOAD_CUDART_API(CUDALOAD_API_FLAG_) } has;
    CUDALOAD_CUDART_API(CUDALOAD_API_MEMBER_) /* since 0.3: every other function (generated) */
} cudaload_cudart_table;
CUDALOAD_TABLE_END_

/** cuBLAS table. */
CUDALOAD_TABLE_BEGIN_
typedef struct cudaload_cublas_table {
    CUDALOAD_CUBLAS_SYMBOLS(CUDALOAD_TABLE_MEMBER_)
    struct { CUDALOAD_CUBLAS_SYMBOLS(CUDALOAD_TABLE_FLAG_) CUDALOAD_CUBLAS_API(CUDALOAD_API_FLAG_) } has;
    CUDALOAD_CUBLAS_API(CUDALOAD_API_MEMBER_) /* since 0.3: every other function (generated) */
} cudaload_cublas_table;
CUDALOAD_TABLE_END_

/** cuBLASLt table. */
CUDALOAD_TABLE_BEGIN_
typedef struct cudaload_cublaslt_table {
    CUDALOAD_CUBLASLT_SYMBOLS(CUDALOAD_TABLE_MEMBER_)
    struct { CUDALOAD_CUBLASLT_SYMBOLS(CUDALOAD_TABLE_FLAG_) CUDALOAD_CUBLASLT_API(CUDALOAD_API_FLAG_) } has;
    CUDALOAD_CUBLASLT_API(CUDALOAD_API_MEMBER_) /* since 0.3: every other function (generated) */
} cudaload_cublaslt_table;
CUDALOAD_TABLE_END_

/** Returns the driver table after a cudaload_init() that loaded the driver, else NULL
 *  (cudaload_last_error() says why). */
CUDALOAD_API const cudaload_driver_table *cudaload_driver(void);

/** Returns the runtime table after a cudaload_init() that loaded cudart, else NULL. */
CUDALOAD_API const cudaload_cudart_table *cudaload_cudart(void);

/** Loads cuBLAS on first use (cudaload_load_cublas) and returns its table, or NULL with the
 *  reason in cudaload_last_error(). */
CUDALOAD_API const cudaload_cublas_table *cudaload_cublas(void);

/** Returns the cuBLASLt table once cuBLAS is loaded, else NULL. */
CUDALOAD_API const cudaload_cublaslt_table *cudaload_cublaslt(void);

#ifdef __cplusplus
}
#endif

#endif /* CUDALOAD_TABLES_H */
