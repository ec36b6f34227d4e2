/* SPDX-License-Identifier: Apache-2.0 */
/* _rng.c -- the module rng_meson._rng.
 *
 *   curand_version() -> int         cuRAND's version (10401 for 10.4.1): libcudaload loads
 *                                   libcurand on this first call; no GPU needed
 *   uniform(ptr, n, seed=0)         n uniform float32 in [-1, 1) written at device address ptr
 *                                   (a torch tensor's data_ptr(), a cupy array's data.ptr)
 *   library_path(name) -> str|None  the file libcudaload took for a catalogue library
 *                                   ("curand", "cudart"), from cudaload.h's info API
 *
 * Errors raise RuntimeError with the call, the library and its code; when the library could not
 * be loaded, with libcudaload's reason (every place it looked). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <cudaload.h>

#include "kernels.h"

/* Is the catalogue library called name loaded? */
static int loaded(const char *name) {
    cudaload_lib lib;
    cudaload_library_info info = {.size = sizeof info};
    return cudaload_lib_by_name(name, &lib) == CUDALOAD_OK && cudaload_get_library_info(lib, &info) == CUDALOAD_OK &&
           info.loaded;
}

static PyObject *raise_error(const rng_error *e) {
    if (e->load_code && !loaded(e->library)) /* the stub's answer: libcudaload says why */
        return PyErr_Format(PyExc_RuntimeError, "%s: %s did not load (code %d): %s", e->call, e->library, e->code,
                            cudaload_last_error());
    return PyErr_Format(PyExc_RuntimeError, "%s failed: %s code %d", e->call, e->library, e->code);
}

static PyObject *py_curand_version(PyObject *self, PyObject *unused) {
    (void)self, (void)unused;
    int version = 0, rc;
    rng_error e = {0};
    Py_BEGIN_ALLOW_THREADS
    rc = rng_curand_version(&version, &e);
    Py_END_ALLOW_THREADS
    return rc == 0 ? PyLong_FromLong(version) : raise_error(&e);
}

static PyObject *py_uniform(PyObject *self, PyObject *args) {
    (void)self;
    unsigned long long ptr, seed = 0;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "Kn|K:uniform", &ptr, &n, &seed)) return NULL;
    if (n < 0) return PyErr_Format(PyExc_ValueError, "uniform: n must be >= 0, not %zd", n);
    int rc;
    rng_error e = {0};
    Py_BEGIN_ALLOW_THREADS
    rc = rng_uniform_symmetric((float *)(uintptr_t)ptr, (size_t)n, seed, &e);
    Py_END_ALLOW_THREADS
    if (rc != 0) return raise_error(&e);
    Py_RETURN_NONE;
}

static PyObject *py_library_path(PyObject *self, PyObject *arg) {
    (void)self;
    const char *name = PyUnicode_AsUTF8(arg);
    if (!name) return NULL;
    cudaload_lib lib;
    if (cudaload_lib_by_name(name, &lib) != CUDALOAD_OK)
        return PyErr_Format(PyExc_ValueError, "library_path: %s is not a library libcudaload knows", name);
    cudaload_library_info info = {.size = sizeof info};
    if (cudaload_get_library_info(lib, &info) != CUDALOAD_OK || !info.loaded) Py_RETURN_NONE;
    return PyUnicode_DecodeFSDefault(info.path);
}

static PyMethodDef methods[] = {
    {"curand_version", py_curand_version, METH_NOARGS, "cuRAND's version (curandGetVersion)."},
    {"uniform", py_uniform, METH_VARARGS, "uniform(ptr, n, seed=0): n float32 in [-1, 1) at device address ptr."},
    {"library_path", py_library_path, METH_O, "The file libcudaload took for a library (\"curand\"), or None."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_rng", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__rng(void) { return PyModule_Create(&module); }
