/* SPDX-License-Identifier: Apache-2.0 */
/*
 * _status.h -- the cudaload extension's exception for what libcudaload and the CUDA runtime
 * report: StatusError(status, detail, library), made at import (_status.c). Raised by the module
 * (_cudaload.c) and by the array side (_arrays.c) for a failed CUDA runtime call; the Python
 * layer (__init__.py) turns it into the documented exceptions.
 *
 * Include after <Python.h> (with PY_SSIZE_T_CLEAN).
 */
#ifndef CUDALOAD_SHIM_STATUS_H
#define CUDALOAD_SHIM_STATUS_H

#include "cudaload_tables.h"

/* Makes StatusError and adds it to module m. -1 with the exception set. */
int shim_status_init(PyObject *m);
/* StatusError itself (PyErr_ExceptionMatches), NULL before shim_status_init. */
PyObject *shim_status_type(void);
/* Raises StatusError(status, detail (its description when empty), library name or None); returns NULL. */
PyObject *shim_raise_status(cudaload_status st, const char *detail, const char *lib);
/* Raises StatusError(CUDALOAD_ERROR_CUDA, "<what> failed: <name> (<text>)"); returns NULL. */
PyObject *shim_cuda_error(const cudaload_cudart_table *rt, const char *what, cudaError_t e);

#endif
