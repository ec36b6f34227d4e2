/* SPDX-License-Identifier: Apache-2.0 */
/*
 * _arrays.h -- the array side of the cudaload extension (_arrays.c): an operand described
 * from a torch, cupy or numpy array (__cuda_array_interface__, the buffer protocol, DLPack),
 * its layout as BLAS sees it, and one call's operands placed on a device and stream, with
 * the host copies to and from the GPU. _cudaload.c (the module) uses it for SAXPY and SGEMM.
 *
 * Include after <Python.h> (with PY_SSIZE_T_CLEAN). Errors are Python exceptions set here:
 * TypeError and ValueError for the arguments, and for a failed CUDA runtime call the
 * module's StatusError (_status.h: shim_cuda_error).
 */
#ifndef CUDALOAD_SHIM_ARRAYS_H
#define CUDALOAD_SHIM_ARRAYS_H

#include <stddef.h>
#include <stdint.h>

#include "cudaload_tables.h"

#if PY_VERSION_HEX < 0x030A0000
static inline PyObject *Py_NewRef(PyObject *o) {
    Py_INCREF(o);
    return o;
}
#define PyObject_CallNoArgs(f) PyObject_CallObject((f), NULL)
#endif

#define MAX_DIMS 16

struct DLManagedTensor; /* DLPack's, defined in _arrays.c */

/* ---- operands ---- */

typedef struct operand {
    const char *name;    /* "x", "y", "a", "b", "out" */
    int device;          /* -1: host memory; else the CUDA device ordinal (-2: device not known yet) */
    int from_cai;        /* described by __cuda_array_interface__: device found by pointer query */
    char *ptr;
    int ndim;
    long long shape[MAX_DIMS];
    long long strides[MAX_DIMS]; /* in elements */
    int readonly;
    int has_stream;      /* CAI v3 "stream" given (not None): the producer's stream */
    uintptr_t stream;
    int dl_cuda;         /* a DLPack CUDA tensor: its producer ordered its work into dl_stream */
    uintptr_t dl_stream;
    Py_buffer view;      /* held when from the buffer protocol */
    int have_view;
    struct DLManagedTensor *dl; /* held when from DLPack: its deleter is called at release */
} operand;

long long arr_numel(const operand *o);
/* 1 when o is C-contiguous (dimensions of extent 1 may have any stride) */
int arr_c_contiguous(const operand *o);
/* "(2, 3)" or "(4,)" into buf */
void arr_shape_str(const operand *o, char *buf, size_t n);

/* A 2-D operand as BLAS sees it: column-major (col = 1) or row-major, leading dimension ld,
 * and the elements spanned from ptr (for the host copies). */
typedef struct mat {
    int col;
    long long ld, extent;
} mat;

/* o (2-D) as a row- or column-major matrix; -1 with ValueError when sgemm cannot use its strides */
int arr_matrix_layout(const operand *o, mat *m);

/* ---- one call: operands resolved, placed ---- */

typedef struct call {
    operand op[3];
    int n;
    int host;          /* all operands are host memory */
    int device;        /* the CUDA device of the device operands */
    uintptr_t stream;  /* the stream the work runs on (0: legacy default) */
    char *dptr[3];     /* device copies of host operands */
} call;

/* Resolves the n operands of objs (validation that needs no CUDA), leaving the output last;
 * the stream: the one given (has_stream), else the output's CAI stream, else any operand's.
 * -1 with the exception set; arr_call_end releases what was taken in either case. */
int arr_call_get(call *c, PyObject **objs, const char **names, int n, uintptr_t stream, int has_stream);
/* Needs CUDA: the device of every operand (one device for all), the streams ordered. -1 with
 * the exception set. */
int arr_call_place(call *c, const cudaload_cudart_table *rt);
/* Switches to device d when it is not current; *prev gets the device to go back to (-1: none). */
int arr_enter_device(const cudaload_cudart_table *rt, int d, int *prev);
/* Host operands: device copies of the spans given (extent elements each; copied in when
 * needs_copy). Without the GIL. */
cudaError_t arr_copy_in(call *c, const cudaload_cudart_table *rt, const long long *extent, const int *needs_copy);
/* The output's device copy back to the host (extent elements), then the stream synchronised. Without the GIL. */
cudaError_t arr_copy_out(call *c, const cudaload_cudart_table *rt, long long extent);
/* Every call's exit: the caller's device back (prev >= 0), the device copies and operand
 * views released; returns ret. */
PyObject *arr_call_end(call *c, const cudaload_cudart_table *rt, int prev, PyObject *ret);
/* stream=None, or an int handle: *has says which. -1 with the exception set. */
int arr_parse_stream(PyObject *obj, uintptr_t *stream, int *has);

#endif
