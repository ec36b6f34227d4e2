/* SPDX-License-Identifier: Apache-2.0 */
/*
 * _status.c -- StatusError, the cudaload extension's exception for libcudaload's statuses and
 * the CUDA runtime's failures (interface: _status.h). Module state, made once at import.
 */
#define PY_SSIZE_T_CLEAN
#define _GNU_SOURCE
#include <Python.h>

#include <stdio.h>

#include "_status.h"

static PyObject *StatusError; /* _cudaload.StatusError(status, detail, library) */

int shim_status_init(PyObject *m) {
    StatusError = PyErr_NewException("cudaload._cudaload.StatusError", PyExc_RuntimeError, NULL);
    if (!StatusError) return -1;
    Py_INCREF(StatusError); /* the module's reference: PyModule_AddObject takes it */
    return PyModule_AddObject(m, "StatusError", StatusError) < 0 ? -1 : 0;
}

PyObject *shim_status_type(void) { return StatusError; }

PyObject *shim_raise_status(cudaload_status st, const char *detail, const char *lib) {
    PyObject *v = Py_BuildValue("(isz)", (int)st, detail && detail[0] ? detail : cudaload_status_string(st), lib);
    if (v) PyErr_SetObject(StatusError, v), Py_DECREF(v);
    return NULL;
}

PyObject *shim_cuda_error(const cudaload_cudart_table *rt, const char *what, cudaError_t e) {
    char msg[512];
    snprintf(msg, sizeof msg, "%s failed: %s (%s)", what, rt->cudaGetErrorName(e), rt->cudaGetErrorString(e));
    return shim_raise_status(CUDALOAD_ERROR_CUDA, msg, NULL);
}
