/*
 * _cudaload.c -- the extension of the `cudaload` Python package: libcudaload embedded
 * (linked statically, its symbols hidden: the module exports PyInit__cudaload only).
 *
 * What it does: cudaload_init() with the roots the package hands it at import (the
 * interpreter's site-packages and sys.path entries); the probe's report (tools/probe_report.c,
 * the same code as cudaload-probe) as JSON or text; SAXPY and SGEMM on float32 operands that
 * are either host buffers (buffer protocol, or DLPack on the CPU: copied to the GPU and
 * back) or device arrays (__cuda_array_interface__ v2/v3, or DLPack on CUDA: in place, zero
 * copy, on the array's stream). The Python layer (__init__.py) turns StatusError into the
 * exception hierarchy and adds the pip command that fixes it.
 *
 * Argument errors are TypeError (not float32, not an array) or ValueError (shape, strides,
 * read-only output, device); they are found before any CUDA call, so they need no GPU.
 */
#define PY_SSIZE_T_CLEAN
#define _GNU_SOURCE
#include <Python.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudaload_tables.h"
#include "probe_report.h"

#if PY_VERSION_HEX < 0x030A0000
static inline PyObject *Py_NewRef(PyObject *o) {
    Py_INCREF(o);
    return o;
}
#define PyObject_CallNoArgs(f) PyObject_CallObject((f), NULL)
#endif

#define MAX_DIMS 16

/* ---- module state: libcudaload is process-wide, so is this ---- */

static PyObject *StatusError;        /* _cudaload.StatusError(status, detail) */
/* _init's result: written once, by the thread that ran its body, with the GIL held */
static int init_done;
static cudaload_status init_status;
static char *init_error;             /* cudaload_last_error() right after init, or NULL */

/* _init runs its body once. The body releases the GIL around cudaload_init (it can take
 * seconds: cuInit), so the GIL alone does not keep a second thread out: the first thread
 * claims the body (init_running, under init_mu); a thread that comes while it runs waits
 * on init_cv with the GIL released, then returns the result -- or, when the body ended in
 * an exception before cudaload_init (a root that is not a path), claims the body itself.
 * init_mu is never held while waiting for the GIL, so the two cannot deadlock. */
static pthread_mutex_t init_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t init_cv = PTHREAD_COND_INITIALIZER;
static int init_running;             /* a thread is in _init's body: under init_mu */
static pthread_t init_owner;         /* that thread (valid while init_running) */
static pthread_once_t init_atfork_once = PTHREAD_ONCE_INIT;

/* ---- DLPack (the stable C ABI of dlpack.h v0.x: DLManagedTensor in a "dltensor" capsule) ---- */

typedef struct {
    int32_t device_type; /* kDLCPU 1, kDLCUDA 2, kDLCUDAHost 3, kDLCUDAManaged 13 */
    int32_t device_id;
} DLDevice;
typedef struct {
    uint8_t code; /* kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBfloat 4 */
    uint8_t bits;
    uint16_t lanes;
} DLDataType;
typedef struct {
    void *data;
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    int64_t *shape;
    int64_t *strides; /* in elements; NULL: compact row-major */
    uint64_t byte_offset;
} DLTensor;
typedef struct DLManagedTensor {
    DLTensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;
enum { kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLCUDAManaged = 13, kDLFloat = 2 };

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
    DLManagedTensor *dl; /* held when from DLPack: its deleter is called at release */
} operand;

static void operand_release(operand *o) {
    if (o->have_view) PyBuffer_Release(&o->view), o->have_view = 0;
    if (o->dl) {
        if (o->dl->deleter) o->dl->deleter(o->dl);
        o->dl = NULL;
    }
}

static PyObject *type_name(PyObject *obj) {
    PyObject *n = PyObject_GetAttrString((PyObject *)Py_TYPE(obj), "__qualname__");
    if (!n) {
        PyErr_Clear();
        n = PyUnicode_FromString("?");
    }
    return n;
}

/* TypeError "<op>: <what>, got <type>" */
static int type_error(const operand *o, PyObject *obj, const char *what) {
    PyObject *n = type_name(obj);
    PyErr_Format(PyExc_TypeError, "%s: %s, got %U", o->name, what, n);
    Py_XDECREF(n);
    return -1;
}

/* Looks up attr; returns 0 and *out NULL when the object has no such attribute (an
 * AttributeError, which CUDA-less torch tensors raise for __cuda_array_interface__), -1 on
 * another error. */
static int get_optional_attr(PyObject *obj, const char *attr, PyObject **out) {
    *out = PyObject_GetAttrString(obj, attr);
    if (*out) return 0;
    if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
        PyErr_Clear();
        return 0;
    }
    return -1;
}

static int seq_to_ll(const operand *o, PyObject *seq, const char *key, long long *out, int n) {
    for (int i = 0; i < n; i++) {
        PyObject *it = PySequence_GetItem(seq, i);
        if (!it) return -1;
        out[i] = PyLong_AsLongLong(it);
        Py_DECREF(it);
        if (out[i] == -1 && PyErr_Occurred()) {
            PyErr_Format(PyExc_ValueError, "%s: __cuda_array_interface__[\"%s\"] must hold integers", o->name, key);
            return -1;
        }
    }
    return 0;
}

/* __cuda_array_interface__ (versions 2 and 3; numba's spec). */
static int from_cai(operand *o, PyObject *cai) {
    if (!PyDict_Check(cai)) {
        PyErr_Format(PyExc_TypeError, "%s: __cuda_array_interface__ is not a dict", o->name);
        return -1;
    }
    PyObject *typestr = PyDict_GetItemString(cai, "typestr"), *shape = PyDict_GetItemString(cai, "shape");
    PyObject *data = PyDict_GetItemString(cai, "data"), *strides = PyDict_GetItemString(cai, "strides");
    PyObject *mask = PyDict_GetItemString(cai, "mask"), *stream = PyDict_GetItemString(cai, "stream");
    if (!typestr || !shape || !data || !PyUnicode_Check(typestr) || !PyTuple_Check(shape) || !PyTuple_Check(data) ||
        PyTuple_Size(data) != 2) {
        PyErr_Format(PyExc_ValueError, "%s: malformed __cuda_array_interface__ (needs typestr, shape, data)", o->name);
        return -1;
    }
    const char *ts = PyUnicode_AsUTF8AndSize(typestr, NULL);
    if (!ts) return -1;
    if (strcmp(ts, "<f4") != 0 && strcmp(ts, "=f4") != 0) {
        PyErr_Format(PyExc_TypeError, "%s: the CUDA array has dtype %s: float32 (<f4) is needed", o->name, ts);
        return -1;
    }
    if (mask && mask != Py_None) {
        PyErr_Format(PyExc_ValueError, "%s: masked CUDA arrays are not supported", o->name);
        return -1;
    }
    Py_ssize_t nd = PyTuple_Size(shape);
    if (nd > MAX_DIMS) {
        PyErr_Format(PyExc_ValueError, "%s: %zd dimensions (at most %d)", o->name, nd, MAX_DIMS);
        return -1;
    }
    o->ndim = (int)nd;
    if (seq_to_ll(o, shape, "shape", o->shape, o->ndim) < 0) return -1;
    if (strides && strides != Py_None) {
        if (!PyTuple_Check(strides) || PyTuple_Size(strides) != nd) {
            PyErr_Format(PyExc_ValueError, "%s: __cuda_array_interface__ strides do not match its shape", o->name);
            return -1;
        }
        long long bytes[MAX_DIMS];
        if (seq_to_ll(o, strides, "strides", bytes, o->ndim) < 0) return -1;
        for (int i = 0; i < o->ndim; i++) {
            if (bytes[i] % 4) {
                PyErr_Format(PyExc_ValueError, "%s: stride %lld bytes is not a whole number of float32 elements", o->name,
                             bytes[i]);
                return -1;
            }
            o->strides[i] = bytes[i] / 4;
        }
    } else {
        long long s = 1;
        for (int i = o->ndim - 1; i >= 0; i--) o->strides[i] = s, s *= o->shape[i] > 0 ? o->shape[i] : 1;
    }
    PyObject *p = PyTuple_GetItem(data, 0), *ro = PyTuple_GetItem(data, 1);
    o->ptr = (char *)PyLong_AsVoidPtr(p);
    if (PyErr_Occurred()) return -1;
    o->readonly = PyObject_IsTrue(ro) == 1;
    if (stream && stream != Py_None) {
        o->stream = (uintptr_t)PyLong_AsVoidPtr(stream);
        if (PyErr_Occurred()) return -1;
        if (o->stream == 0) {
            PyErr_Format(PyExc_ValueError, "%s: __cuda_array_interface__ stream 0 is disallowed by the protocol "
                         "(1: legacy default stream, 2: per-thread default stream)", o->name);
            return -1;
        }
        o->has_stream = 1;
    }
    o->device = -2; /* found from the pointer once CUDA is up (cudaPointerGetAttributes) */
    o->from_cai = 1;
    return 0;
}

/* The buffer protocol: numpy arrays, array.array('f'), memoryview.cast('f'), ... */
static int from_buffer(operand *o, PyObject *obj) {
    if (PyObject_GetBuffer(obj, &o->view, PyBUF_RECORDS_RO) < 0) return -1;
    o->have_view = 1;
    const char *f = o->view.format ? o->view.format : "B";
    if (f[0] == '<' || f[0] == '=' || f[0] == '@') f++;
    if (strcmp(f, "f") != 0 || o->view.itemsize != 4) {
        PyErr_Format(PyExc_TypeError, "%s: the buffer has format '%s' (itemsize %zd): float32 ('f') is needed", o->name,
                     o->view.format ? o->view.format : "B", o->view.itemsize);
        return -1;
    }
    if (o->view.ndim > MAX_DIMS) {
        PyErr_Format(PyExc_ValueError, "%s: %d dimensions (at most %d)", o->name, o->view.ndim, MAX_DIMS);
        return -1;
    }
    o->ndim = o->view.ndim;
    for (int i = 0; i < o->ndim; i++) {
        o->shape[i] = o->view.shape[i];
        if (o->view.strides[i] % 4) {
            PyErr_Format(PyExc_ValueError, "%s: stride %zd bytes is not a whole number of float32 elements", o->name,
                         o->view.strides[i]);
            return -1;
        }
        o->strides[i] = o->view.strides[i] / 4;
    }
    o->ptr = o->view.buf;
    o->readonly = o->view.readonly;
    o->device = -1;
    return 0;
}

/* DLPack: obj.__dlpack__(stream=...) gives a "dltensor" capsule; we own it from then on
 * (renamed "used_dltensor"; its deleter is called when the call is done). The stream is the
 * one this call runs on: the producer makes it wait for its pending work. */
static int from_dlpack(operand *o, PyObject *obj, PyObject *devfn, uintptr_t consumer_stream) {
    PyObject *dev = PyObject_CallNoArgs(devfn);
    if (!dev) return -1;
    long dtype = -1, did = 0;
    if (PyTuple_Check(dev) && PyTuple_Size(dev) == 2) {
        dtype = PyLong_AsLong(PyTuple_GetItem(dev, 0));
        did = PyLong_AsLong(PyTuple_GetItem(dev, 1));
    }
    Py_DECREF(dev);
    if (PyErr_Occurred()) return -1;
    int cuda = dtype == kDLCUDA || dtype == kDLCUDAManaged;
    if (!cuda && dtype != kDLCPU && dtype != kDLCUDAHost) {
        PyErr_Format(PyExc_ValueError, "%s: the array lives on DLPack device type %ld: only CPU and CUDA memory "
                     "are supported", o->name, dtype);
        return -1;
    }
    PyObject *fn = PyObject_GetAttrString(obj, "__dlpack__");
    if (!fn) return -1;
    PyObject *kw = Py_BuildValue("{s:N}", "stream", cuda ? PyLong_FromUnsignedLongLong(consumer_stream ? consumer_stream : 1)
                                                          : Py_NewRef(Py_None));
    PyObject *args = PyTuple_New(0);
    PyObject *cap = kw && args ? PyObject_Call(fn, args, kw) : NULL;
    Py_DECREF(fn);
    Py_XDECREF(kw);
    Py_XDECREF(args);
    if (!cap) return -1;
    DLManagedTensor *m = PyCapsule_GetPointer(cap, "dltensor");
    if (!m) {
        Py_DECREF(cap);
        return -1;
    }
    if (PyCapsule_SetName(cap, "used_dltensor") < 0) {
        Py_DECREF(cap);
        return -1;
    }
    Py_DECREF(cap);
    o->dl = m;
    DLTensor *t = &m->dl_tensor;
    if (t->dtype.code != kDLFloat || t->dtype.bits != 32 || t->dtype.lanes != 1) {
        PyErr_Format(PyExc_TypeError, "%s: the DLPack tensor has dtype code %d, %d bits, %d lanes: float32 is needed",
                     o->name, t->dtype.code, t->dtype.bits, t->dtype.lanes);
        return -1;
    }
    if (t->ndim < 0 || t->ndim > MAX_DIMS) {
        PyErr_Format(PyExc_ValueError, "%s: %d dimensions (at most %d)", o->name, (int)t->ndim, MAX_DIMS);
        return -1;
    }
    o->ndim = t->ndim;
    long long s = 1;
    for (int i = o->ndim - 1; i >= 0; i--) {
        o->shape[i] = t->shape[i];
        o->strides[i] = t->strides ? t->strides[i] : s;
        s *= t->shape[i] > 0 ? t->shape[i] : 1;
    }
    o->ptr = (char *)t->data + t->byte_offset;
    o->device = cuda ? (int)did : -1;
    o->dl_cuda = cuda;
    o->dl_stream = consumer_stream;
    return 0;
}

/* Describes obj: __cuda_array_interface__ first (cupy, torch, numba), then the buffer
 * protocol (numpy, array.array), then DLPack (torch CPU tensors, JAX, ...). */
static int operand_get(operand *o, PyObject *obj, uintptr_t consumer_stream) {
    PyObject *cai, *devfn = NULL;
    if (get_optional_attr(obj, "__cuda_array_interface__", &cai) < 0) return -1;
    if (cai) {
        int r = from_cai(o, cai);
        Py_DECREF(cai);
        return r;
    }
    if (PyObject_CheckBuffer(obj)) return from_buffer(o, obj);
    if (get_optional_attr(obj, "__dlpack_device__", &devfn) < 0) return -1;
    if (devfn) {
        int r = from_dlpack(o, obj, devfn, consumer_stream);
        Py_DECREF(devfn);
        return r;
    }
    return type_error(o, obj, "expected a float32 host buffer (numpy array, array.array('f'), ...) or a CUDA array "
                              "(__cuda_array_interface__ or DLPack: torch, cupy)");
}

static long long numel(const operand *o) {
    long long n = 1;
    for (int i = 0; i < o->ndim; i++) n *= o->shape[i];
    return n;
}

static int c_contiguous(const operand *o) {
    long long s = 1;
    for (int i = o->ndim - 1; i >= 0; i--) {
        if (o->shape[i] != 1 && o->strides[i] != s) return 0;
        s *= o->shape[i];
    }
    return 1;
}

static void shape_str(const operand *o, char *buf, size_t n) {
    size_t len = (size_t)snprintf(buf, n, "(");
    for (int i = 0; i < o->ndim && len < n; i++)
        len += (size_t)snprintf(buf + len, n - len, i ? ", %lld" : "%lld", o->shape[i]);
    if (len < n) snprintf(buf + len, n - len, o->ndim == 1 ? ",)" : ")");
}

/* A 2-D operand as BLAS sees it: column-major (col = 1) or row-major, leading dimension ld,
 * and the elements spanned from ptr (for the host copies). */
typedef struct mat {
    int col;
    long long ld, extent;
} mat;

static int matrix_layout(const operand *o, mat *m) {
    long long r = o->shape[0], c = o->shape[1], s0 = o->strides[0], s1 = o->strides[1];
    if (r == 0 || c == 0) {
        m->col = 0, m->ld = c > 1 ? c : 1, m->extent = 0;
        return 0;
    }
    if ((c == 1 || s1 == 1) && (r == 1 || s0 >= c)) {
        m->col = 0, m->ld = r == 1 ? c : s0, m->extent = (r - 1) * m->ld + c;
        return 0;
    }
    if ((r == 1 || s0 == 1) && (c == 1 || s1 >= r)) {
        m->col = 1, m->ld = c == 1 ? r : s1, m->extent = (c - 1) * m->ld + r;
        return 0;
    }
    PyErr_Format(PyExc_ValueError, "%s: strides (%lld, %lld) elements: sgemm needs a row-major (C-contiguous) or "
                 "column-major matrix, rows (or columns) may be padded but not overlap", o->name, s0, s1);
    return -1;
}

/* ---- readiness and errors ---- */

/* StatusError(status, detail) with the candidates tried for lib as the detail. */
static PyObject *lib_error(cudaload_lib lib, cudaload_status st) {
    cudaload_library_info li = {.size = sizeof li};
    cudaload_get_library_info(lib, &li);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    static const char *const what[CUDALOAD_LIB_COUNT_] = {
        [CUDALOAD_LIB_DRIVER] = "the CUDA driver (libcuda.so.1)",
        [CUDALOAD_LIB_CUDART] = "the CUDA runtime (libcudart.so.13 or libcudart.so.12)",
        [CUDALOAD_LIB_CUBLASLT] = "cuBLASLt (libcublasLt.so.13 or .12)",
        [CUDALOAD_LIB_CUBLAS] = "cuBLAS (libcublas.so.13 or libcublas.so.12)",
    };
    if (f) {
        fprintf(f, "%s: %s", what[lib], cudaload_status_string(st));
        if (li.n_candidates) fprintf(f, "; candidates tried:");
        else if (lib != CUDALOAD_LIB_DRIVER) {
            size_t n = 0;
            const cudaload_root *r = cudaload_roots(&n);
            fprintf(f, "; no candidate file in the roots searched:");
            for (size_t i = 0; i < n; i++) fprintf(f, "\n  %s [%s]%s", r[i].path, cudaload_source_name(r[i].source),
                                                   r[i].exists ? "" : " (missing)");
        }
        for (size_t i = 0; i < li.n_candidates; i++)
            fprintf(f, "\n  %s [%s]: %s", li.candidates[i].path, cudaload_source_name(li.candidates[i].source),
                    li.candidates[i].reason ? li.candidates[i].reason : "");
        fclose(f);
    }
    PyObject *v = Py_BuildValue("(is)", (int)st, text ? text : cudaload_status_string(st));
    free(text);
    if (v) PyErr_SetObject(StatusError, v), Py_DECREF(v);
    return NULL;
}

static PyObject *status_error(cudaload_status st, const char *detail) {
    PyObject *v = Py_BuildValue("(is)", (int)st, detail && detail[0] ? detail : cudaload_status_string(st));
    if (v) PyErr_SetObject(StatusError, v), Py_DECREF(v);
    return NULL;
}

static PyObject *cuda_error(const cudaload_cudart_table *rt, const char *what, cudaError_t e) {
    char msg[512];
    snprintf(msg, sizeof msg, "%s failed: %s (%s)", what, rt->cudaGetErrorName(e), rt->cudaGetErrorString(e));
    return status_error(CUDALOAD_ERROR_CUDA, msg);
}

/* The runtime and a device, or the exception that says what is missing. */
static const cudaload_cudart_table *ready(void) {
    if (!init_done) return (void)status_error(CUDALOAD_ERROR_NOT_INITIALIZED, "cudaload._cudaload._init was not called"),
                           NULL;
    if (init_status == CUDALOAD_ERROR_INVALID_OPTION || init_status == CUDALOAD_ERROR_INVALID_ARGUMENT)
        return (void)status_error(init_status, init_error), NULL;
    cudaload_library_info rt = {.size = sizeof rt}, drv = {.size = sizeof drv};
    cudaload_get_library_info(CUDALOAD_LIB_CUDART, &rt);
    cudaload_get_library_info(CUDALOAD_LIB_DRIVER, &drv);
    if (rt.status != CUDALOAD_OK) return (void)lib_error(CUDALOAD_LIB_CUDART, rt.status), NULL;
    if (drv.status != CUDALOAD_OK) return (void)lib_error(CUDALOAD_LIB_DRIVER, drv.status), NULL;
    int count = 0;
    cudaload_status st;
    Py_BEGIN_ALLOW_THREADS
    st = cudaload_device_count(&count);
    Py_END_ALLOW_THREADS
    if (st != CUDALOAD_OK) return (void)status_error(st, cudaload_last_error()), NULL;
    const cudaload_cudart_table *t = cudaload_cudart();
    if (!t) return (void)status_error(CUDALOAD_ERROR_NOT_INITIALIZED, "no CUDA runtime table"), NULL;
    return t;
}

/* ---- one call: operands resolved, placed, run ---- */

typedef struct call {
    operand op[3];
    int n;
    int host;          /* all operands are host memory */
    int device;        /* the CUDA device of the device operands */
    uintptr_t stream;  /* the stream the work runs on (0: legacy default) */
    char *dptr[3];     /* device copies of host operands */
} call;

static void call_release(call *c, const cudaload_cudart_table *rt) {
    for (int i = 0; i < c->n; i++) {
        if (c->dptr[i] && rt) rt->cudaFree(c->dptr[i]);
        operand_release(&c->op[i]);
    }
}

/* The outcome of a call's CUDA part: None, or the exception for what failed (a CUDA
 * runtime call named by what, else libcudaload's status). */
static PyObject *call_result(const cudaload_cudart_table *rt, const char *what, cudaError_t e, cudaload_status st) {
    if (what) return cuda_error(rt, what, e);
    if (st != CUDALOAD_OK) return status_error(st, cudaload_last_error());
    return Py_NewRef(Py_None);
}

/* Every call's exit: the caller's device back (prev >= 0: enter_device changed it), the
 * device copies and operand views released; returns ret. */
static PyObject *call_end(call *c, const cudaload_cudart_table *rt, int prev, PyObject *ret) {
    if (prev >= 0) rt->cudaSetDevice(prev);
    call_release(c, rt);
    return ret;
}

/* Resolves the operands (validation that needs no CUDA), leaving the output last. */
static int call_get(call *c, PyObject **objs, const char **names, int n, uintptr_t stream, int has_stream) {
    memset(c, 0, sizeof *c);
    c->n = n;
    c->stream = has_stream ? stream : 0;
    for (int i = 0; i < n; i++) {
        c->op[i].name = names[i];
        if (operand_get(&c->op[i], objs[i], c->stream) < 0) return -1;
    }
    operand *out = &c->op[n - 1];
    if (out->readonly) {
        PyErr_Format(PyExc_ValueError, "%s is read-only: it is written in place", out->name);
        return -1;
    }
    int hosts = 0;
    for (int i = 0; i < n; i++) hosts += c->op[i].device == -1;
    if (hosts && hosts != n) {
        PyErr_SetString(PyExc_ValueError, "operands mix host buffers and CUDA arrays: pass all of one kind (host "
                                          "buffers are copied to the GPU and back; CUDA arrays are used in place)");
        return -1;
    }
    c->host = hosts == n;
    /* no stream given: the output's CAI stream, else any operand's */
    if (!has_stream)
        for (int i = n - 1; i >= 0; i--)
            if (c->op[i].has_stream) {
                c->stream = c->op[i].stream;
                break;
            }
    return 0;
}

/* 0 (NULL) and 1 (cudaStreamLegacy) both name the legacy default stream. */
static int same_stream(uintptr_t a, uintptr_t b) { return a == b || (a <= 1 && b <= 1); }

/* Needs CUDA: the device of every operand (one device for all), the streams ordered. */
static int call_place(call *c, const cudaload_cudart_table *rt) {
    if (c->host) {
        int d = 0;
        cudaError_t e = rt->cudaGetDevice(&d);
        if (e != cudaSuccess) return (void)cuda_error(rt, "cudaGetDevice", e), -1;
        c->device = d;
        return 0;
    }
    c->device = -2;
    for (int i = 0; i < c->n; i++) {
        operand *o = &c->op[i];
        if (o->device == -2 && o->ptr && rt->cudaPointerGetAttributes) {
            struct cudaPointerAttributes a;
            memset(&a, 0, sizeof a);
            cudaError_t e = rt->cudaPointerGetAttributes(&a, o->ptr);
            if (e != cudaSuccess) return (void)cuda_error(rt, "cudaPointerGetAttributes", e), -1;
            if (a.type != cudaMemoryTypeDevice && a.type != cudaMemoryTypeManaged) {
                PyErr_Format(PyExc_ValueError, "%s: __cuda_array_interface__ points at memory that is not CUDA device "
                             "memory (cudaMemoryType %d)", o->name, (int)a.type);
                return -1;
            }
            o->device = a.device;
        }
        if (o->device < 0) continue; /* empty array: no pointer to ask about */
        if (c->device == -2) c->device = o->device;
        else if (o->device != c->device) {
            PyErr_Format(PyExc_ValueError, "operands are on different devices (cuda:%d and %s on cuda:%d): put them "
                         "on one device", c->device, o->name, o->device);
            return -1;
        }
    }
    if (c->device == -2) {
        int d = 0;
        rt->cudaGetDevice(&d);
        c->device = d;
    }
    /* CAI v3: a producer's stream other than ours must be done before we run; so must the
     * stream a DLPack producer ordered its work into, when we run on another one */
    for (int i = 0; i < c->n; i++) {
        const operand *o = &c->op[i];
        uintptr_t s = o->has_stream ? o->stream : o->dl_stream;
        if ((o->has_stream || o->dl_cuda) && !same_stream(s, c->stream)) {
            cudaError_t e;
            Py_BEGIN_ALLOW_THREADS
            e = rt->cudaStreamSynchronize((cudaStream_t)(s == 1 ? 0 : s));
            Py_END_ALLOW_THREADS
            if (e != cudaSuccess) return (void)cuda_error(rt, "cudaStreamSynchronize", e), -1;
        }
    }
    return 0;
}

/* Host operands: device copies of the spans given (extent elements each). */
static cudaError_t copy_in(call *c, const cudaload_cudart_table *rt, const long long *extent, const int *needs_copy) {
    cudaStream_t s = (cudaStream_t)c->stream;
    for (int i = 0; i < c->n; i++) {
        size_t bytes = (size_t)extent[i] * sizeof(float);
        if (!bytes) continue;
        cudaError_t e = rt->cudaMalloc((void **)&c->dptr[i], bytes);
        if (e != cudaSuccess) return e;
        if (needs_copy[i] && (e = rt->cudaMemcpyAsync(c->dptr[i], c->op[i].ptr, bytes, cudaMemcpyHostToDevice, s)) != cudaSuccess)
            return e;
    }
    return cudaSuccess;
}

static cudaError_t copy_out(call *c, const cudaload_cudart_table *rt, long long extent) {
    cudaStream_t s = (cudaStream_t)c->stream;
    operand *out = &c->op[c->n - 1];
    cudaError_t e = cudaSuccess;
    if (extent) e = rt->cudaMemcpyAsync(out->ptr, c->dptr[c->n - 1], (size_t)extent * sizeof(float), cudaMemcpyDeviceToHost, s);
    if (e == cudaSuccess) e = rt->cudaStreamSynchronize(s);
    return e;
}

static int parse_stream(PyObject *obj, uintptr_t *stream, int *has) {
    *has = 0;
    if (obj == Py_None) return 0;
    *stream = (uintptr_t)PyLong_AsVoidPtr(obj);
    if (PyErr_Occurred()) return -1;
    *has = 1;
    return 0;
}

/* Switches to device d when it is not current; *prev gets the device to go back to. */
static int enter_device(const cudaload_cudart_table *rt, int d, int *prev) {
    *prev = -1;
    int cur = 0;
    cudaError_t e = rt->cudaGetDevice(&cur);
    if (e != cudaSuccess) return (void)cuda_error(rt, "cudaGetDevice", e), -1;
    if (cur == d) return 0;
    if ((e = rt->cudaSetDevice(d)) != cudaSuccess) return (void)cuda_error(rt, "cudaSetDevice", e), -1;
    *prev = cur;
    return 0;
}

static PyObject *py_saxpy(PyObject *self, PyObject *args) {
    (void)self;
    double a;
    PyObject *objs[2], *stream_obj;
    if (!PyArg_ParseTuple(args, "dOOO", &a, &objs[0], &objs[1], &stream_obj)) return NULL;
    uintptr_t stream = 0;
    int has_stream;
    if (parse_stream(stream_obj, &stream, &has_stream) < 0) return NULL;
    static const char *names[2] = {"x", "y"};
    call c;
    const cudaload_cudart_table *rt = NULL;
    PyObject *ret = NULL;
    int prev = -1;
    if (call_get(&c, objs, names, 2, stream, has_stream) < 0) goto out;
    operand *x = &c.op[0], *y = &c.op[1];
    int same = x->ndim == y->ndim;
    for (int i = 0; same && i < x->ndim; i++) same = x->shape[i] == y->shape[i];
    if (!same) {
        char sx[128], sy[128];
        shape_str(x, sx, sizeof sx), shape_str(y, sy, sizeof sy);
        PyErr_Format(PyExc_ValueError, "saxpy: x and y have different shapes %s and %s", sx, sy);
        goto out;
    }
    for (int i = 0; i < 2; i++)
        if (!c_contiguous(&c.op[i])) {
            PyErr_Format(PyExc_ValueError, "saxpy: %s is not contiguous (C order): pass a contiguous array "
                         "(numpy.ascontiguousarray, tensor.contiguous())", c.op[i].name);
            goto out;
        }
    long long n = numel(x);
    if (!(rt = ready())) goto out;
    if (call_place(&c, rt) < 0) goto out;
    if (n == 0) {
        ret = Py_NewRef(Py_None);
        goto out;
    }
    if (enter_device(rt, c.device, &prev) < 0) goto out;
    cudaload_status st = CUDALOAD_OK;
    cudaError_t e = cudaSuccess;
    const char *what = NULL;
    Py_BEGIN_ALLOW_THREADS
    if (c.host) {
        long long ext[2] = {n, n};
        int copy[2] = {1, 1};
        if ((e = copy_in(&c, rt, ext, copy)) != cudaSuccess) what = "copy to the GPU (cudaMalloc/cudaMemcpyAsync)";
        else if ((st = cudaload_saxpy(n, (float)a, (const float *)c.dptr[0], (float *)c.dptr[1], (void *)c.stream)) ==
                 CUDALOAD_OK &&
                 (e = copy_out(&c, rt, n)) != cudaSuccess)
            what = "copy back from the GPU (cudaMemcpyAsync/cudaStreamSynchronize)";
    } else {
        st = cudaload_saxpy(n, (float)a, (const float *)x->ptr, (float *)y->ptr, (void *)c.stream);
    }
    Py_END_ALLOW_THREADS
    ret = call_result(rt, what, e, st);
out:
    return call_end(&c, rt, prev, ret);
}

static PyObject *py_sgemm(PyObject *self, PyObject *args) {
    (void)self;
    double alpha, beta;
    PyObject *objs[3], *stream_obj;
    if (!PyArg_ParseTuple(args, "OOOddO", &objs[0], &objs[1], &objs[2], &alpha, &beta, &stream_obj)) return NULL;
    uintptr_t stream = 0;
    int has_stream;
    if (parse_stream(stream_obj, &stream, &has_stream) < 0) return NULL;
    static const char *names[3] = {"a", "b", "out"};
    call c;
    const cudaload_cudart_table *rt = NULL;
    PyObject *ret = NULL;
    int prev = -1;
    if (call_get(&c, objs, names, 3, stream, has_stream) < 0) goto out;
    operand *A = &c.op[0], *B = &c.op[1], *C = &c.op[2];
    for (int i = 0; i < 3; i++)
        if (c.op[i].ndim != 2) {
            PyErr_Format(PyExc_ValueError, "sgemm: %s has %d dimensions: matrices (2-D) are needed", c.op[i].name,
                         c.op[i].ndim);
            goto out;
        }
    long long m = A->shape[0], k = A->shape[1], n = B->shape[1];
    if (B->shape[0] != k || C->shape[0] != m || C->shape[1] != n) {
        char sa[64], sb[64], sc[64];
        shape_str(A, sa, sizeof sa), shape_str(B, sb, sizeof sb), shape_str(C, sc, sizeof sc);
        PyErr_Format(PyExc_ValueError, "sgemm: shapes do not match: a %s @ b %s -> out %s (a's columns must equal b's "
                     "rows; out must be (a rows, b columns))", sa, sb, sc);
        goto out;
    }
    mat la, lb, lc;
    if (matrix_layout(A, &la) < 0 || matrix_layout(B, &lb) < 0 || matrix_layout(C, &lc) < 0) goto out;
    if (!c.host && m && n && k) { /* BLAS: C must not overlap A or B */
        for (int i = 0; i < 2; i++) {
            const mat *l = i ? &lb : &la;
            char *lo = c.op[i].ptr, *hi = lo + l->extent * 4, *clo = C->ptr, *chi = clo + lc.extent * 4;
            if (lo < chi && clo < hi) {
                PyErr_Format(PyExc_ValueError, "sgemm: out overlaps %s in memory: write to another array", c.op[i].name);
                goto out;
            }
        }
    }
    if (!(rt = ready())) goto out;
    if (call_place(&c, rt) < 0) goto out;
    if (m == 0 || n == 0) {
        ret = Py_NewRef(Py_None);
        goto out;
    }
    if (enter_device(rt, c.device, &prev) < 0) goto out;
    cudaload_status st = CUDALOAD_OK;
    cudaError_t e = cudaSuccess;
    const char *what = NULL;
    Py_BEGIN_ALLOW_THREADS
    char *pa = A->ptr, *pb = B->ptr, *pc = C->ptr;
    if (c.host) {
        long long ext[3] = {la.extent, lb.extent, lc.extent};
        /* C is read when beta != 0; a padded C (a view of a wider array) is copied in too, so
         * that the whole span copied back leaves the elements between its rows as they were */
        int copy[3] = {1, 1, beta != 0.0 || lc.extent != m * n};
        if ((e = copy_in(&c, rt, ext, copy)) != cudaSuccess) what = "copy to the GPU (cudaMalloc/cudaMemcpyAsync)";
        pa = c.dptr[0], pb = c.dptr[1], pc = c.dptr[2];
    }
    if (!what) {
        if (k == 0 || !pa) pa = pc; /* k == 0: A and B are not read (BLAS: C = beta*C) */
        if (k == 0 || !pb) pb = pc;
        if (!lc.col) /* row-major C: column-major C^T = B^T A^T */
            st = cudaload_sgemm(lb.col ? CUDALOAD_OP_T : CUDALOAD_OP_N, la.col ? CUDALOAD_OP_T : CUDALOAD_OP_N, n, m, k,
                                (float)alpha, (const float *)pb, lb.ld, (const float *)pa, la.ld, (float)beta, (float *)pc,
                                lc.ld, (void *)c.stream);
        else
            st = cudaload_sgemm(la.col ? CUDALOAD_OP_N : CUDALOAD_OP_T, lb.col ? CUDALOAD_OP_N : CUDALOAD_OP_T, m, n, k,
                                (float)alpha, (const float *)pa, la.ld, (const float *)pb, lb.ld, (float)beta, (float *)pc,
                                lc.ld, (void *)c.stream);
        if (c.host && st == CUDALOAD_OK && (e = copy_out(&c, rt, lc.extent)) != cudaSuccess)
            what = "copy back from the GPU (cudaMemcpyAsync/cudaStreamSynchronize)";
    }
    Py_END_ALLOW_THREADS
    ret = call_result(rt, what, e, st);
out:
    return call_end(&c, rt, prev, ret);
}

/* ---- init, report, knobs ---- */

/* A child forked while another thread was in _init's body has no such thread: the body is
 * free again there (libcudaload's own fork handling gives it the parent's init, done). */
static void init_after_fork_child(void) {
    pthread_mutex_init(&init_mu, NULL);
    pthread_cond_init(&init_cv, NULL);
    init_running = 0;
}
static void init_atfork_register(void) { pthread_atfork(NULL, NULL, init_after_fork_child); }

/* With the GIL held: 1 when the calling thread is to run _init's body, 0 when _init is done
 * (its result is there), -1 with RuntimeError when the body's own thread calls _init again
 * (from a roots object's iterator: waiting would wait for itself). */
static int init_claim(void) {
    for (;;) {
        if (init_done) return 0;
        pthread_mutex_lock(&init_mu);
        int busy = init_running, self_busy = busy && pthread_equal(init_owner, pthread_self());
        if (!busy) {
            init_running = 1;
            init_owner = pthread_self();
        }
        pthread_mutex_unlock(&init_mu);
        if (self_busy) {
            PyErr_SetString(PyExc_RuntimeError, "cudaload._cudaload._init called again while it runs in this thread");
            return -1;
        }
        if (!busy) return 1;
        Py_BEGIN_ALLOW_THREADS
        pthread_mutex_lock(&init_mu);
        while (init_running) pthread_cond_wait(&init_cv, &init_mu);
        pthread_mutex_unlock(&init_mu);
        Py_END_ALLOW_THREADS
    }
}

/* The body is over (init_done set, or an exception): wake the threads waiting for it. */
static void init_unclaim(void) {
    pthread_mutex_lock(&init_mu);
    init_running = 0;
    pthread_cond_broadcast(&init_cv);
    pthread_mutex_unlock(&init_mu);
}

static PyObject *py_init(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *roots_obj;
    if (!PyArg_ParseTuple(args, "O", &roots_obj)) return NULL;
    int claimed = init_claim();
    if (claimed < 0) return NULL;
    if (!claimed) return Py_BuildValue("(is)", (int)init_status, init_error ? init_error : "");
    PyObject *seq = PySequence_List(roots_obj);
    if (!seq) {
        init_unclaim();
        return NULL;
    }
    Py_ssize_t n = PyList_Size(seq);
    PyObject **encoded = calloc((size_t)n + 1, sizeof *encoded);
    const char **roots = calloc((size_t)n + 1, sizeof *roots);
    PyObject *ret = NULL;
    size_t nr = 0;
    if (!encoded || !roots) {
        PyErr_NoMemory();
        goto out;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!PyUnicode_FSConverter(PyList_GetItem(seq, i), &encoded[nr])) goto out;
        roots[nr] = PyBytes_AsString(encoded[nr]);
        nr++;
    }
    cudaload_options o;
    cudaload_options_init(&o);
    o.roots = roots;
    o.n_roots = nr;
    o.flags = CUDALOAD_FLAG_DRIVER_OPTIONAL;
    cudaload_status st;
    char *err = NULL;
    Py_BEGIN_ALLOW_THREADS
    st = cudaload_init(&o);
    if (st != CUDALOAD_OK) err = strdup(cudaload_last_error());
    Py_END_ALLOW_THREADS
    init_status = st;
    init_error = err;
    init_done = 1;
    ret = Py_BuildValue("(is)", (int)init_status, init_error ? init_error : "");
out:
    for (size_t i = 0; encoded && i < nr; i++) Py_XDECREF(encoded[i]);
    free(encoded);
    free(roots);
    Py_DECREF(seq);
    init_unclaim();
    return ret;
}

static PyObject *py_report(PyObject *self, PyObject *args) {
    (void)self;
    int json, selftest, color;
    if (!PyArg_ParseTuple(args, "ppp", &json, &selftest, &color)) return NULL;
    if (!init_done) return status_error(CUDALOAD_ERROR_NOT_INITIALIZED, "cudaload._cudaload._init was not called");
    char *text = NULL;
    size_t len = 0;
    int code = -1;
    Py_BEGIN_ALLOW_THREADS
    cudaload_load_cublas(); /* the report tells about cuBLAS too (its status if it fails) */
    probe_report *r = probe_report_collect(init_status, init_error, 0, selftest);
    FILE *f = r ? open_memstream(&text, &len) : NULL;
    if (f) {
        if (json) probe_report_json(r, f);
        else probe_report_text(r, f, color);
        fclose(f);
        code = probe_report_exit_code(r);
    }
    probe_report_free(r);
    Py_END_ALLOW_THREADS
    if (code < 0) {
        free(text);
        return PyErr_NoMemory();
    }
    PyObject *s = PyUnicode_DecodeUTF8(text, (Py_ssize_t)len, "surrogateescape");
    free(text);
    if (!s) return NULL;
    return Py_BuildValue("(Ni)", s, code);
}

static PyObject *py_set_backend(PyObject *self, PyObject *args) {
    (void)self;
    int b;
    if (!PyArg_ParseTuple(args, "i", &b)) return NULL;
    cudaload_status st = cudaload_set_backend((cudaload_backend)b);
    if (st != CUDALOAD_OK) return status_error(st, cudaload_last_error());
    Py_RETURN_NONE;
}

static PyObject *py_last_backend(PyObject *self, PyObject *args) {
    (void)self, (void)args;
    cudaload_kernels_info k = {.size = sizeof k};
    cudaload_kernels_info_get(-1, &k);
    return PyLong_FromLong((long)k.last_backend);
}

static PyObject *py_driver_version(PyObject *self, PyObject *args) {
    (void)self, (void)args;
    int v = 0;
    if (cudaload_driver_version(&v) != CUDALOAD_OK) v = 0;
    return PyLong_FromLong(v);
}

/* (status, major, path, source name, already_loaded) of one library. */
static PyObject *py_library(PyObject *self, PyObject *args) {
    (void)self;
    int lib;
    if (!PyArg_ParseTuple(args, "i", &lib)) return NULL;
    cudaload_library_info li = {.size = sizeof li};
    if (lib < 0 || lib >= CUDALOAD_LIB_COUNT_ || cudaload_get_library_info((cudaload_lib)lib, &li) != CUDALOAD_OK) {
        PyErr_SetString(PyExc_ValueError, "unknown library");
        return NULL;
    }
    PyObject *path = li.path ? PyUnicode_DecodeFSDefault(li.path) : Py_NewRef(Py_None);
    if (!path) return NULL;
    return Py_BuildValue("(iiNsi)", (int)li.status, li.major, path, cudaload_source_name(li.source), li.already_loaded);
}

static PyObject *py_status_name(PyObject *self, PyObject *args) {
    (void)self;
    int st;
    if (!PyArg_ParseTuple(args, "i", &st)) return NULL;
    return Py_BuildValue("(ss)", cudaload_status_name((cudaload_status)st), cudaload_status_string((cudaload_status)st));
}

static PyMethodDef methods[] = {
    {"_init", py_init, METH_VARARGS, "_init(roots) -> (status, message): cudaload_init() once, with these caller roots"},
    {"_report", py_report, METH_VARARGS, "_report(json, selftest, color) -> (text, exit_code): the probe's report"},
    {"_saxpy", py_saxpy, METH_VARARGS, "_saxpy(a, x, y, stream): y = a*x + y in place"},
    {"_sgemm", py_sgemm, METH_VARARGS, "_sgemm(a, b, out, alpha, beta, stream): out = alpha*a@b + beta*out in place"},
    {"_set_backend", py_set_backend, METH_VARARGS, "_set_backend(int): cudaload_set_backend()"},
    {"_last_backend", py_last_backend, METH_NOARGS, "the backend the calling thread's last SAXPY/SGEMM used"},
    {"_driver_version", py_driver_version, METH_NOARGS, "cuDriverGetVersion (13000 = 13.0), 0 without a driver"},
    {"_library", py_library, METH_VARARGS, "_library(lib) -> (status, major, path, source, already_loaded)"},
    {"_status_name", py_status_name, METH_VARARGS, "_status_name(status) -> (name, description)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_cudaload", "libcudaload, embedded: see the cudaload package", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__cudaload(void) {
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    pthread_once(&init_atfork_once, init_atfork_register);
    StatusError = PyErr_NewException("cudaload._cudaload.StatusError", PyExc_RuntimeError, NULL);
    if (!StatusError || PyModule_AddObject(m, "StatusError", Py_NewRef(StatusError)) < 0) goto fail;
    cudaload_kernels_info k = {.size = sizeof k};
    cudaload_kernels_info_get(-1, &k);
    if (PyModule_AddStringConstant(m, "LIBCUDALOAD_VERSION", cudaload_version_string()) < 0 ||
        PyModule_AddIntConstant(m, "KERNELS_BUILT", k.built) < 0)
        goto fail;
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}
