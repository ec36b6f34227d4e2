/* SPDX-License-Identifier: Apache-2.0 */
/*
 * _saxpy.c -- a third-party Python extension module that embeds libcudaload (libcudaload.a
 * from the cudaload package, a build requirement: see setup.py).
 *
 * It links no CUDA library and carries no rpath. At import, saxpy_demo/__init__.py passes
 * the directories Python imports from (site-packages, sys.path) to _init(), which hands
 * them to cudaload_init() as caller roots; libcudaload then dlopens the libcudart and
 * libcublas that pip (nvidia-cuda-runtime, nvidia-cublas, or the -cu12 ones), conda,
 * CUDA_HOME or the system installed. The module uses the runtime table
 * (cudaMalloc/cudaMemcpy/cudaFree) and cudaload_saxpy() on host buffers (array.array('f'),
 * or any C-contiguous float32 buffer), and reports where each library came from.
 *
 *   _init(roots)            -> status name of cudaload_init() (never raises for CUDA)
 *   saxpy(a, x, y)          -> y[:] = a * x + y on the GPU; returns the backend that ran
 *   library_info(load_cublas=True) -> {"cuda": {...}, "cudart": {...}, "cublasLt": {...}, "cublas": {...}}
 *   CudaloadError           RuntimeError subclass; .status is the cudaload status name
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdio.h>
#include <string.h>

#include <cudaload_tables.h>

#include <cufft.h>

#include "_kernels.h"

static PyObject *CudaloadError;

/* The outcome of the first _init(): libcudaload keeps it for the process; the message is
 * copied because cudaload_last_error() is per thread and changes with the next failure. */
static int init_done;
static cudaload_status init_status = CUDALOAD_ERROR_NOT_INITIALIZED;
static char *init_message;

/* Raises CudaloadError(message) with .status = the status name. Returns NULL. */
static PyObject *raise_status(cudaload_status st, const char *message) {
    PyObject *text = PyUnicode_DecodeUTF8(message, (Py_ssize_t)strlen(message), "replace"); /* paths: any bytes */
    if (!text) return NULL;
    PyObject *exc = PyObject_CallOneArg(CudaloadError, text);
    Py_DECREF(text);
    if (!exc) return NULL;
    PyObject *name = PyUnicode_FromString(cudaload_status_name(st));
    if (!name || PyObject_SetAttrString(exc, "status", name) < 0) {
        Py_XDECREF(name);
        Py_DECREF(exc);
        return NULL;
    }
    Py_DECREF(name);
    PyErr_SetObject(CudaloadError, exc);
    Py_DECREF(exc);
    return NULL;
}

static PyObject *py_init(PyObject *self, PyObject *arg) {
    (void)self;
    if (!init_done) {
        PyObject *seq = PySequence_Fast(arg, "_init: roots must be a sequence of paths");
        if (!seq) return NULL;
        Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
        PyObject **items = PySequence_Fast_ITEMS(seq);
        PyObject **encoded = PyMem_Calloc((size_t)n + 1, sizeof *encoded);
        const char **roots = PyMem_Calloc((size_t)n + 1, sizeof *roots);
        if (!encoded || !roots) {
            PyMem_Free(encoded);
            PyMem_Free(roots);
            Py_DECREF(seq);
            return PyErr_NoMemory();
        }
        int ok = 1;
        for (Py_ssize_t i = 0; i < n && ok; i++) {
            ok = PyUnicode_FSConverter(items[i], &encoded[i]); /* str or bytes -> bytes, no NULs */
            if (ok) roots[i] = PyBytes_AS_STRING(encoded[i]);
        }
        if (ok) {
            cudaload_options o;
            cudaload_options_init(&o);
            o.roots = roots;
            o.n_roots = (size_t)n;
            cudaload_status st;
            const char *msg = "";
            Py_BEGIN_ALLOW_THREADS
            st = cudaload_init(&o); /* thread-safe; the first call in the process does the work */
            if (st != CUDALOAD_OK) msg = cudaload_last_error();
            Py_END_ALLOW_THREADS
            init_status = st;
            init_message = st == CUDALOAD_OK ? NULL : strdup(msg);
            init_done = 1;
        }
        for (Py_ssize_t i = 0; i < n; i++) Py_XDECREF(encoded[i]);
        PyMem_Free(encoded);
        PyMem_Free(roots);
        Py_DECREF(seq);
        if (!ok) return NULL;
    }
    return PyUnicode_FromString(cudaload_status_name(init_status));
}

/* The runtime table when init succeeded; else raises init's status and message. */
static const cudaload_cudart_table *runtime(void) {
    if (!init_done) {
        raise_status(CUDALOAD_ERROR_NOT_INITIALIZED, "saxpy_demo._saxpy._init() has not been called");
        return NULL;
    }
    if (init_status != CUDALOAD_OK) {
        char head[128];
        snprintf(head, sizeof head, "%s: ", cudaload_status_name(init_status));
        size_t len = strlen(head) + (init_message ? strlen(init_message) : 0) + 1;
        char *m = PyMem_Malloc(len);
        if (!m) {
            PyErr_NoMemory();
            return NULL;
        }
        snprintf(m, len, "%s%s", head, init_message ? init_message : "");
        raise_status(init_status, m);
        PyMem_Free(m);
        return NULL;
    }
    return cudaload_cudart();
}

/* Gets a C-contiguous float32 buffer; 0 on success, -1 with a Python error set. */
static int get_floats(PyObject *obj, Py_buffer *view, int writable, const char *what) {
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0)) < 0)
        return -1;
    const char *f = view->format ? view->format : "B";
    if (f[0] == '@' || f[0] == '=' || f[0] == '<') f++;
    if (strcmp(f, "f") != 0 || view->itemsize != 4) {
        PyErr_Format(PyExc_TypeError, "saxpy: %s must hold float32 items (array.array('f')), not format '%s'", what,
                     view->format ? view->format : "B");
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

static PyObject *py_saxpy(PyObject *self, PyObject *args) {
    (void)self;
    float a;
    PyObject *xo, *yo;
    if (!PyArg_ParseTuple(args, "fOO:saxpy", &a, &xo, &yo)) return NULL;
    Py_buffer x, y;
    if (get_floats(xo, &x, 0, "x") < 0) return NULL;
    if (get_floats(yo, &y, 1, "y") < 0) {
        PyBuffer_Release(&x);
        return NULL;
    }
    PyObject *result = NULL;
    const cudaload_cudart_table *rt;
    if (x.len != y.len) {
        PyErr_Format(PyExc_ValueError, "saxpy: x has %zd items, y has %zd", x.len / 4, y.len / 4);
        goto out;
    }
    if (!(rt = runtime())) goto out;

    long long n = (long long)(x.len / 4);
    size_t bytes = (size_t)x.len;
    float *dx = NULL, *dy = NULL;
    cudaError_t e = cudaSuccess;
    const char *step = NULL;
    cudaload_status st = CUDALOAD_OK;
    char *st_msg = NULL;
    cudaload_backend backend = CUDALOAD_BACKEND_AUTO;
    Py_BEGIN_ALLOW_THREADS
    if (n > 0) {
        if ((e = rt->cudaMalloc((void **)&dx, bytes)) != cudaSuccess) step = "cudaMalloc(x)";
        else if ((e = rt->cudaMalloc((void **)&dy, bytes)) != cudaSuccess) step = "cudaMalloc(y)";
        else if ((e = rt->cudaMemcpy(dx, x.buf, bytes, cudaMemcpyHostToDevice)) != cudaSuccess) step = "cudaMemcpy(x, host to device)";
        else if ((e = rt->cudaMemcpy(dy, y.buf, bytes, cudaMemcpyHostToDevice)) != cudaSuccess) step = "cudaMemcpy(y, host to device)";
        else if ((st = cudaload_saxpy(n, a, dx, dy, NULL)) != CUDALOAD_OK) st_msg = strdup(cudaload_last_error());
        /* the legacy default stream: this copy waits for the kernel and reports its errors */
        else if ((e = rt->cudaMemcpy(y.buf, dy, bytes, cudaMemcpyDeviceToHost)) != cudaSuccess) step = "cudaMemcpy(y, device to host)";
        if (dx) rt->cudaFree(dx);
        if (dy) rt->cudaFree(dy);
        cudaload_kernels_info ki = {.size = sizeof ki};
        if (st == CUDALOAD_OK && !step && cudaload_kernels_info_get(-1, &ki) == CUDALOAD_OK) backend = ki.last_backend;
    }
    Py_END_ALLOW_THREADS
    if (step) {
        PyObject *m = PyUnicode_FromFormat("%s failed: %s (%s)", step, rt->cudaGetErrorName(e), rt->cudaGetErrorString(e));
        if (m) {
            raise_status(CUDALOAD_ERROR_CUDA, PyUnicode_AsUTF8(m));
            Py_DECREF(m);
        }
        goto out;
    }
    if (st != CUDALOAD_OK) {
        raise_status(st, st_msg ? st_msg : cudaload_status_string(st));
        free(st_msg);
        goto out;
    }
    result = PyUnicode_FromString(n == 0 ? "none" : backend == CUDALOAD_BACKEND_BUNDLED ? "bundled"
                                                  : backend == CUDALOAD_BACKEND_CUBLAS  ? "cublas"
                                                                                         : "auto");
out:
    PyBuffer_Release(&x);
    PyBuffer_Release(&y);
    return result;
}

/* Raises CudaloadError for a failed call of _kernels.cu. The stubs' own codes (the library could
 * not be loaded: cudaErrorSharedObjectInitFailed 303, CUFFT_SETUP_FAILED) come with libcudaload's
 * report of why. */
static PyObject *raise_kernel_error(const demo_error *e) {
    int load_failed = (strcmp(e->library, "CUDA runtime") == 0 && e->code == cudaErrorSharedObjectInitFailed) ||
                      (strcmp(e->library, "cuFFT") == 0 && e->code == CUFFT_SETUP_FAILED);
    /* why the library did not load, copied first: cudaload_last_error() is the calling thread's
     * last failure, and the name lookup below goes through the runtime's stub, which retries the
     * load and would replace it. No name lookup when the runtime is what failed to load. */
    char why[2048] = "";
    if (load_failed) snprintf(why, sizeof why, "%s", cudaload_last_error());
    const char *name = strcmp(e->library, "CUDA runtime") == 0 && !load_failed ? demo_cuda_error_name(e->code) : "";
    PyObject *m = PyUnicode_FromFormat("%s failed (%s error %d%s%s)%s%s", e->step, e->library, e->code, name[0] ? ": " : "",
                                       name, why[0] ? "\n" : "", why);
    if (m) {
        raise_status(CUDALOAD_ERROR_CUDA, PyUnicode_AsUTF8(m));
        Py_DECREF(m);
    }
    return NULL;
}

static PyObject *py_scale(PyObject *self, PyObject *args) {
    (void)self;
    float a;
    PyObject *xo;
    if (!PyArg_ParseTuple(args, "fO:scale", &a, &xo)) return NULL;
    Py_buffer x;
    if (get_floats(xo, &x, 1, "x") < 0) return NULL;
    demo_error e = {0};
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = demo_scale(a, (float *)x.buf, (long long)(x.len / 4), &e);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&x);
    if (rc != 0) return raise_kernel_error(&e);
    Py_RETURN_NONE;
}

static PyObject *py_fft_roundtrip(PyObject *self, PyObject *arg) {
    (void)self;
    Py_buffer x;
    if (get_floats(arg, &x, 0, "x") < 0) return NULL;
    demo_error e = {0};
    double max_err = 0.0;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = demo_fft_roundtrip((const float *)x.buf, (long long)(x.len / 4), &max_err, &e);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&x);
    if (rc != 0) return raise_kernel_error(&e);
    return PyFloat_FromDouble(max_err);
}

/* d[key] = value (a new reference, stolen); -1 on error. */
static int put(PyObject *d, const char *key, PyObject *value) {
    if (!value) return -1;
    int r = PyDict_SetItemString(d, key, value);
    Py_DECREF(value);
    return r;
}

static PyObject *str_or_none(const char *s) {
    if (s) return PyUnicode_DecodeFSDefault(s);
    Py_RETURN_NONE;
}

static PyObject *one_library(cudaload_lib lib) {
    cudaload_library_info info = {.size = sizeof info};
    if (cudaload_get_library_info(lib, &info) != CUDALOAD_OK)
        return raise_status(CUDALOAD_ERROR_INVALID_ARGUMENT, cudaload_last_error());
    PyObject *d = PyDict_New();
    if (!d) return NULL;
    PyObject *cands = PyList_New(0);
    int bad = !cands;
    for (size_t i = 0; !bad && i < info.n_candidates; i++) {
        const cudaload_candidate *c = &info.candidates[i];
        PyObject *cd = PyDict_New();
        bad = !cd || put(cd, "path", str_or_none(c->path)) || put(cd, "source", PyUnicode_FromString(cudaload_source_name(c->source))) ||
              put(cd, "result", PyUnicode_FromString(cudaload_status_name(c->result))) ||
              put(cd, "reason", PyUnicode_DecodeUTF8(c->reason ? c->reason : "", (Py_ssize_t)strlen(c->reason ? c->reason : ""), "replace")) ||
              PyList_Append(cands, cd);
        Py_XDECREF(cd);
    }
    bad = bad || put(d, "status", PyUnicode_FromString(cudaload_status_name(info.status))) ||
          put(d, "loaded", PyBool_FromLong(info.loaded)) || put(d, "path", str_or_none(info.path)) ||
          put(d, "soname", str_or_none(info.soname)) ||
          put(d, "source", PyUnicode_FromString(cudaload_source_name(info.source))) ||
          put(d, "already_loaded", PyBool_FromLong(info.already_loaded)) || put(d, "major", PyLong_FromLong(info.major)) ||
          put(d, "version", PyLong_FromLong(info.version)) || put(d, "driver_branch", str_or_none(info.driver_branch));
    if (!bad) {
        bad = PyDict_SetItemString(d, "candidates", cands) < 0;
    }
    Py_XDECREF(cands);
    if (bad) {
        Py_DECREF(d);
        return NULL;
    }
    return d;
}

static PyObject *py_library_info(PyObject *self, PyObject *args, PyObject *kw) {
    (void)self;
    static char *kwlist[] = {"load_cublas", NULL};
    int load_cublas = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|p:library_info", kwlist, &load_cublas)) return NULL;
    if (load_cublas && init_done) {
        Py_BEGIN_ALLOW_THREADS
        (void)cudaload_load_cublas(); /* the outcome is in cublas's "status" */
        Py_END_ALLOW_THREADS
    }
    PyObject *d = PyDict_New();
    if (!d) return NULL;
    for (int lib = 0; lib < CUDALOAD_LIB_COUNT_; lib++) {
        if (put(d, cudaload_lib_name((cudaload_lib)lib), one_library((cudaload_lib)lib)) < 0) {
            Py_DECREF(d);
            return NULL;
        }
    }
    return d;
}

static PyMethodDef methods[] = {
    {"_init", py_init, METH_O, "_init(roots) -> status name: cudaload_init() with these caller roots (first call only)."},
    {"saxpy", py_saxpy, METH_VARARGS,
     "saxpy(a, x, y) -> backend: y[:] = a * x + y on the GPU for float32 buffers (array.array('f')).\n"
     "Returns the backend that ran ('bundled' or 'cublas'). Raises CudaloadError (with .status)\n"
     "when libcudaload found no usable CUDA, or a CUDA call failed."},
    {"scale", py_scale, METH_VARARGS,
     "scale(a, x) -> None: x[:] *= a on the GPU, by a kernel of this module (nvcc, linked through libcudaload's "
     "stubs)."},
    {"fft_roundtrip", py_fft_roundtrip, METH_O,
     "fft_roundtrip(x) -> max error of cuFFT's forward + inverse C2C transform of x (float32), scaled by 1/n."},
    {"library_info", (PyCFunction)(void (*)(void))py_library_info, METH_VARARGS | METH_KEYWORDS,
     "library_info(load_cublas=True) -> dict: for 'cuda', 'cudart', 'cublasLt', 'cublas': status, path,\n"
     "soname, source, version, major, candidates (cudaload_get_library_info)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "saxpy_demo._saxpy", "SAXPY through libcudaload (embedded, no link-time CUDA).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__saxpy(void) {
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    CudaloadError = PyErr_NewExceptionWithDoc("saxpy_demo.CudaloadError",
                                              "libcudaload found no usable CUDA, or a CUDA call failed; .status is the "
                                              "cudaload status name (e.g. 'CUDALOAD_ERROR_NO_DRIVER').",
                                              PyExc_RuntimeError, NULL);
    if (!CudaloadError || PyModule_AddObjectRef(m, "CudaloadError", CudaloadError) < 0 ||
        PyModule_AddStringConstant(m, "cudaload_version", cudaload_version_string()) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
