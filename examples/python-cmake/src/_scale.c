/* SPDX-License-Identifier: Apache-2.0 */
/* _scale.c -- the module scale_cmake._scale.
 *
 *   runtime_version() -> int      the CUDA runtime's version (13020 for 13.2): libcudaload loads
 *                                 libcudart on this first call; no GPU needed
 *   scale(ptr, n, factor)         x[i] *= factor for n float32 at device address ptr (a torch
 *                                 tensor's data_ptr(), a cupy array's data.ptr); synchronous
 *   runtime_path() -> str | None  the libcudart file libcudaload took (cudaload.h's info API)
 *
 * Errors raise RuntimeError with the CUDA error's name and code; when the runtime could not be
 * loaded, with libcudaload's reason (every place it looked). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdio.h>

#include <cudaload.h>

#include "kernels.h"

static int runtime_loaded(void) {
    cudaload_library_info info = {.size = sizeof info};
    return cudaload_get_library_info(CUDALOAD_LIB_CUDART, &info) == CUDALOAD_OK && info.loaded;
}

static PyObject *cuda_error(const char *call, int code) {
    /* the stub's answer when it could not load libcudart (no runtime to name the error):
     * libcudaload says why */
    if (scale_runtime_missing(code) && !runtime_loaded())
        return PyErr_Format(PyExc_RuntimeError, "%s: the CUDA runtime did not load (error %d): %s", call, code,
                            cudaload_last_error());
    return PyErr_Format(PyExc_RuntimeError, "%s failed: %s (error %d)", call, scale_error_name(code), code);
}

static PyObject *py_runtime_version(PyObject *self, PyObject *unused) {
    (void)self, (void)unused;
    int version = 0, rc;
    Py_BEGIN_ALLOW_THREADS
    rc = scale_runtime_version(&version);
    Py_END_ALLOW_THREADS
    if (rc != 0) return cuda_error("cudaRuntimeGetVersion", rc);
    return PyLong_FromLong(version);
}

static PyObject *py_scale(PyObject *self, PyObject *args) {
    (void)self;
    unsigned long long ptr;
    Py_ssize_t n;
    float factor;
    if (!PyArg_ParseTuple(args, "Knf:scale", &ptr, &n, &factor)) return NULL;
    if (n < 0) return PyErr_Format(PyExc_ValueError, "scale: n must be >= 0, not %zd", n);
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = scale_device((float *)(uintptr_t)ptr, (size_t)n, factor);
    Py_END_ALLOW_THREADS
    if (rc != 0) return cuda_error("scale", rc);
    Py_RETURN_NONE;
}

static PyObject *py_runtime_path(PyObject *self, PyObject *unused) {
    (void)self, (void)unused;
    cudaload_library_info info = {.size = sizeof info};
    if (cudaload_get_library_info(CUDALOAD_LIB_CUDART, &info) != CUDALOAD_OK || !info.loaded) Py_RETURN_NONE;
    return PyUnicode_DecodeFSDefault(info.path);
}

static PyMethodDef methods[] = {
    {"runtime_version", py_runtime_version, METH_NOARGS, "The CUDA runtime's version (cudaRuntimeGetVersion)."},
    {"scale", py_scale, METH_VARARGS, "scale(ptr, n, factor): x[i] *= factor for n float32 at device address ptr."},
    {"runtime_path", py_runtime_path, METH_NOARGS, "The libcudart file libcudaload took, or None."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_scale", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__scale(void) { return PyModule_Create(&module); }
