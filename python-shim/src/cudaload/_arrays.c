/* SPDX-License-Identifier: Apache-2.0 */
/*
 * _arrays.c -- the array side of the cudaload extension: what _cudaload.c's SAXPY and SGEMM
 * take as operands (interface: _arrays.h).
 *
 * An operand is described, in this order, by __cuda_array_interface__ (versions 2 and 3:
 * cupy, torch, numba; device memory, used in place), the buffer protocol (numpy,
 * array.array('f'), memoryview.cast('f'); host memory) or DLPack (__dlpack__ and
 * __dlpack_device__: torch CPU tensors, JAX, ...; CPU or CUDA memory). A call's operands are
 * all host or all device memory, on one device; host operands are copied to the GPU and the
 * output back; a producer's stream other than the call's is synchronised first, and a DLPack
 * producer is handed the call's stream. Argument errors are TypeError or ValueError, found
 * before any CUDA call.
 */
#define PY_SSIZE_T_CLEAN
#define _GNU_SOURCE
#include <Python.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "_arrays.h"
#include "_status.h"

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

/* ---- torch tensors, read directly ----
 * torch's __cuda_array_interface__ is Python code that builds a dict (several microseconds a
 * call), and the pointer query it leaves to us (cudaPointerGetAttributes) another one. A plain
 * CUDA float32 torch.Tensor (the type itself, not a subclass, which may override anything
 * through __torch_function__) is read through its own C methods instead: the same facts as
 * its interface (version 2: no stream), plus its device. Anything else, and any tensor the
 * interface would refuse (requires_grad, sparse) or we would (dtype, dimensions), takes the
 * general path, which gives the same answers and errors as before. */
static PyTypeObject *torch_tensor; /* torch.Tensor, once seen */
static PyObject *torch_float32;
static PyTypeObject *not_torch[8]; /* types seen that are not torch.Tensor */
static int n_not_torch;
static PyObject *s_is_cuda, *s_requires_grad, *s_is_sparse, *s_dtype, *s_shape, *s_stride, *s_data_ptr, *s_get_device;

static int type_is(PyTypeObject *t, const char *module, const char *qualname) {
    PyObject *m = PyObject_GetAttrString((PyObject *)t, "__module__");
    PyObject *q = m ? PyObject_GetAttrString((PyObject *)t, "__qualname__") : NULL;
    int r = m && q && PyUnicode_Check(m) && PyUnicode_Check(q) && PyUnicode_CompareWithASCIIString(m, module) == 0 &&
            PyUnicode_CompareWithASCIIString(q, qualname) == 0;
    Py_XDECREF(m), Py_XDECREF(q);
    PyErr_Clear();
    return r;
}

static int is_torch_tensor(PyObject *obj) {
    PyTypeObject *t = Py_TYPE(obj);
    if (torch_tensor) return t == torch_tensor;
    for (int i = 0; i < n_not_torch; i++)
        if (not_torch[i] == t) return 0;
    if (!type_is(t, "torch", "Tensor")) {
        if (n_not_torch < 8) not_torch[n_not_torch++] = (PyTypeObject *)Py_NewRef((PyObject *)t);
        return 0;
    }
    PyObject *torch = PyImport_ImportModule("torch"); /* imported already: its tensor is here */
    PyObject *f32 = torch ? PyObject_GetAttrString(torch, "float32") : NULL;
    Py_XDECREF(torch);
    static const char *names[] = {"is_cuda", "requires_grad", "is_sparse", "dtype", "shape", "stride", "data_ptr",
                                  "get_device"};
    PyObject **slots[] = {&s_is_cuda, &s_requires_grad, &s_is_sparse, &s_dtype, &s_shape, &s_stride, &s_data_ptr,
                          &s_get_device};
    for (int i = 0; f32 && i < 8; i++)
        if (!*slots[i] && !(*slots[i] = PyUnicode_InternFromString(names[i]))) Py_CLEAR(f32);
    if (!f32) {
        PyErr_Clear();
        return 0;
    }
    torch_float32 = f32;
    torch_tensor = (PyTypeObject *)Py_NewRef((PyObject *)t);
    return 1;
}

/* An attribute's truth: 1, 0, or -1 (error cleared: the general path asks again). */
static int attr_true(PyObject *obj, PyObject *name) {
    PyObject *v = PyObject_GetAttr(obj, name);
    int r = v ? PyObject_IsTrue(v) : -1;
    Py_XDECREF(v);
    if (r < 0) PyErr_Clear();
    return r;
}

/* 1 when o was filled from the tensor, 0 for the general path (nothing set, no error). */
static int from_torch(operand *o, PyObject *obj) {
    if (attr_true(obj, s_is_cuda) != 1 || attr_true(obj, s_requires_grad) != 0 || attr_true(obj, s_is_sparse) != 0)
        return 0;
    PyObject *dtype = PyObject_GetAttr(obj, s_dtype);
    int f32 = dtype == torch_float32;
    Py_XDECREF(dtype);
    PyObject *shape = f32 ? PyObject_GetAttr(obj, s_shape) : NULL;
    PyObject *stride = shape ? PyObject_CallMethodObjArgs(obj, s_stride, NULL) : NULL;
    PyObject *ptr = stride ? PyObject_CallMethodObjArgs(obj, s_data_ptr, NULL) : NULL;
    PyObject *dev = ptr ? PyObject_CallMethodObjArgs(obj, s_get_device, NULL) : NULL;
    int ok = dev && PyTuple_Check(shape) && PyTuple_Check(stride) && PyTuple_Size(shape) == PyTuple_Size(stride) &&
             PyTuple_Size(shape) <= MAX_DIMS;
    if (ok) {
        o->ndim = (int)PyTuple_Size(shape);
        for (int i = 0; ok && i < o->ndim; i++) {
            o->shape[i] = PyLong_AsLongLong(PyTuple_GetItem(shape, i));
            o->strides[i] = PyLong_AsLongLong(PyTuple_GetItem(stride, i));
            ok = !PyErr_Occurred();
        }
        o->ptr = ok ? (char *)PyLong_AsVoidPtr(ptr) : NULL;
        o->device = ok ? (int)PyLong_AsLong(dev) : -2;
        ok = ok && !PyErr_Occurred() && o->device >= 0;
    }
    Py_XDECREF(shape), Py_XDECREF(stride), Py_XDECREF(ptr), Py_XDECREF(dev);
    if (!ok) {
        PyErr_Clear();
        memset(o->shape, 0, sizeof o->shape);
        o->ndim = 0, o->ptr = NULL, o->device = 0;
        return 0;
    }
    if (arr_numel(o) == 0) o->ptr = NULL, o->device = -2; /* as its interface: no pointer, no device */
    o->readonly = 0;
    return 1;
}

/* Describes obj: a plain CUDA torch tensor directly (above); then __cuda_array_interface__
 * (cupy, torch, numba), then the buffer protocol (numpy, array.array), then DLPack (torch CPU
 * tensors, JAX, ...). */
static int operand_get(operand *o, PyObject *obj, uintptr_t consumer_stream) {
    if (is_torch_tensor(obj) && from_torch(o, obj)) return 0;
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

long long arr_numel(const operand *o) {
    long long n = 1;
    for (int i = 0; i < o->ndim; i++) n *= o->shape[i];
    return n;
}

int arr_c_contiguous(const operand *o) {
    long long s = 1;
    for (int i = o->ndim - 1; i >= 0; i--) {
        if (o->shape[i] != 1 && o->strides[i] != s) return 0;
        s *= o->shape[i];
    }
    return 1;
}

void arr_shape_str(const operand *o, char *buf, size_t n) {
    size_t len = (size_t)snprintf(buf, n, "(");
    for (int i = 0; i < o->ndim && len < n; i++)
        len += (size_t)snprintf(buf + len, n - len, i ? ", %lld" : "%lld", o->shape[i]);
    if (len < n) snprintf(buf + len, n - len, o->ndim == 1 ? ",)" : ")");
}

int arr_matrix_layout(const operand *o, mat *m) {
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

/* ---- one call: operands resolved, placed ---- */

static void call_release(call *c, const cudaload_cudart_table *rt) {
    for (int i = 0; i < c->n; i++) {
        if (c->dptr[i] && rt) rt->cudaFree(c->dptr[i]);
        operand_release(&c->op[i]);
    }
}

/* Every call's exit: the caller's device back (prev >= 0: enter_device changed it), the
 * device copies and operand views released; returns ret. */
PyObject *arr_call_end(call *c, const cudaload_cudart_table *rt, int prev, PyObject *ret) {
    if (prev >= 0) rt->cudaSetDevice(prev);
    call_release(c, rt);
    return ret;
}

/* Resolves the operands (validation that needs no CUDA), leaving the output last. */
int arr_call_get(call *c, PyObject **objs, const char **names, int n, uintptr_t stream, int has_stream) {
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
int arr_call_place(call *c, const cudaload_cudart_table *rt) {
    if (c->host) {
        int d = 0;
        cudaError_t e = rt->cudaGetDevice(&d);
        if (e != cudaSuccess) return (void)shim_cuda_error(rt, "cudaGetDevice", e), -1;
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
            if (e != cudaSuccess) return (void)shim_cuda_error(rt, "cudaPointerGetAttributes", e), -1;
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
            if (e != cudaSuccess) return (void)shim_cuda_error(rt, "cudaStreamSynchronize", e), -1;
        }
    }
    return 0;
}

/* Host operands: device copies of the spans given (extent elements each). */
cudaError_t arr_copy_in(call *c, const cudaload_cudart_table *rt, const long long *extent, const int *needs_copy) {
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

cudaError_t arr_copy_out(call *c, const cudaload_cudart_table *rt, long long extent) {
    cudaStream_t s = (cudaStream_t)c->stream;
    operand *out = &c->op[c->n - 1];
    cudaError_t e = cudaSuccess;
    if (extent) e = rt->cudaMemcpyAsync(out->ptr, c->dptr[c->n - 1], (size_t)extent * sizeof(float), cudaMemcpyDeviceToHost, s);
    if (e == cudaSuccess) e = rt->cudaStreamSynchronize(s);
    return e;
}

/* stream=: None (not given), an int handle, or a stream object: the __cuda_stream__ protocol
 * ((version, handle)), else its cuda_stream (torch), ptr (cupy) or handle attribute. */
int arr_parse_stream(PyObject *obj, uintptr_t *stream, int *has) {
    *has = 0;
    if (obj == Py_None) return 0;
    PyObject *h = NULL;
    if (PyLong_Check(obj)) {
        h = Py_NewRef(obj);
    } else {
        PyObject *fn;
        if (get_optional_attr(obj, "__cuda_stream__", &fn) < 0) return -1;
        if (fn) {
            PyObject *t = PyObject_CallNoArgs(fn);
            Py_DECREF(fn);
            if (!t) return -1;
            if (PyTuple_Check(t) && PyTuple_Size(t) == 2) h = Py_NewRef(PyTuple_GetItem(t, 1));
            Py_DECREF(t);
            if (!h) {
                PyErr_SetString(PyExc_TypeError, "stream.__cuda_stream__() must return (version, handle)");
                return -1;
            }
        }
        static const char *attrs[] = {"cuda_stream", "ptr", "handle"};
        for (int i = 0; !h && i < 3; i++)
            if (get_optional_attr(obj, attrs[i], &h) < 0) return -1;
        if (!h) {
            PyObject *tn = type_name(obj);
            PyErr_Format(PyExc_TypeError, "stream must be an int handle or a stream object (torch.cuda.Stream, "
                         "cupy.cuda.Stream), not %U", tn);
            Py_XDECREF(tn);
            return -1;
        }
    }
    PyObject *i = PyNumber_Index(h);
    Py_DECREF(h);
    if (!i) return -1;
    *stream = (uintptr_t)PyLong_AsVoidPtr(i);
    Py_DECREF(i);
    if (PyErr_Occurred()) return -1;
    *has = 1;
    return 0;
}

/* Switches to device d when it is not current; *prev gets the device to go back to. */
int arr_enter_device(const cudaload_cudart_table *rt, int d, int *prev) {
    *prev = -1;
    int cur = 0;
    cudaError_t e = rt->cudaGetDevice(&cur);
    if (e != cudaSuccess) return (void)shim_cuda_error(rt, "cudaGetDevice", e), -1;
    if (cur == d) return 0;
    if ((e = rt->cudaSetDevice(d)) != cudaSuccess) return (void)shim_cuda_error(rt, "cudaSetDevice", e), -1;
    *prev = cur;
    return 0;
}
