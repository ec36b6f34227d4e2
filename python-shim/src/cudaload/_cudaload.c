/* SPDX-License-Identifier: Apache-2.0 */
/*
 * _cudaload.c -- the extension of the `cudaload` Python package: libcudaload embedded
 * (linked statically, its symbols hidden: the module exports PyInit__cudaload only).
 *
 * What it does: cudaload_init() with the roots the package hands it at import (the
 * interpreter's site-packages and sys.path entries); the probe's report (tools/probe_report.c,
 * the same code as cudaload-probe) as JSON or text; SAXPY and SGEMM on float32 operands that
 * are either host buffers (buffer protocol, or DLPack on the CPU: copied to the GPU and
 * back) or device arrays (__cuda_array_interface__ v2/v3, or DLPack on CUDA: in place, zero
 * copy, on the array's stream). Reading the operands, placing them and the host copies are
 * in _arrays.c (_arrays.h), StatusError in _status.c (_status.h); this file has the module, its
 * state, the errors' wording and the calls.
 * What libcudaload knows is handed to Python as data: a library's fields (the probe's field
 * list, tools/probe_fields.h: cudaload.library()), the catalogue's rows (cudaload.catalogue()),
 * and the fix lines the probe words from the advisor's fixes (_fixes). The Python layer
 * (__init__.py) turns StatusError(status, detail, library) into the exception hierarchy with
 * those fixes.
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

#include "_arrays.h"
#include "_status.h"
#include "cudaload_tables.h"
#include "probe_fields.h"
#include "probe_report.h"

/* ---- module state: libcudaload is process-wide, so is this ---- */

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

/* ---- readiness and errors ---- */

/* StatusError for library lib, whose search ended in st: the detail names the library by its
 * catalogue row (its name and SONAMEs), then every candidate tried or the roots searched. */
static PyObject *lib_error(cudaload_lib lib, cudaload_status st) {
    cudaload_library_info li = {.size = sizeof li};
    cudaload_catalogue_info c = {.size = sizeof c};
    cudaload_get_library_info(lib, &li);
    int have_row = cudaload_catalogue_entry(lib, &c) == CUDALOAD_OK;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f) {
        fprintf(f, "%s", have_row ? c.name : cudaload_lib_name(lib));
        for (int k = 0; have_row && k < (c.n_majors ? c.n_majors : 1) && k < 2; k++)
            if (c.sonames[k]) fprintf(f, "%s%s", k ? " or " : " (", c.sonames[k]);
        fprintf(f, "%s: %s", have_row && c.sonames[0] ? ")" : "", cudaload_status_string(st));
        if (li.n_candidates) fprintf(f, "; candidates tried:");
        else if (!(have_row && c.driver_like)) {
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
    shim_raise_status(st, text, have_row ? c.name : cudaload_lib_name(lib));
    free(text);
    return NULL;
}

static PyObject *status_error(cudaload_status st, const char *detail) { return shim_raise_status(st, detail, NULL); }

/* The runtime and a device, or the exception that says what is missing. */
/* ready()'s answer once it was yes: the libraries stay loaded and the devices there, so the
 * checks run until the first call that passes them, and not on every call after it. */
static const cudaload_cudart_table *_Atomic ready_table;

static const cudaload_cudart_table *ready(void) {
    const cudaload_cudart_table *cached = ready_table;
    if (cached) return cached;
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
    if (count > 0) ready_table = t; /* no device: asked again next time (cudaload_device_count says why) */
    return t;
}

/* ---- one call ---- */

/* The outcome of a call's CUDA part: None, or the exception for what failed (a CUDA
 * runtime call named by what, else libcudaload's status). */
static PyObject *call_result(const cudaload_cudart_table *rt, const char *what, cudaError_t e, cudaload_status st) {
    if (what) return shim_cuda_error(rt, what, e);
    if (st != CUDALOAD_OK) {
        /* the cuBLAS backend returns cuBLAS's own search status when it could not be loaded */
        cudaload_library_info bl = {.size = sizeof bl};
        cudaload_get_library_info(CUDALOAD_LIB_CUBLAS, &bl);
        int blas = bl.status == st && st != CUDALOAD_ERROR_NOT_ATTEMPTED && st != CUDALOAD_ERROR_CUDA;
        return shim_raise_status(st, cudaload_last_error(), blas ? bl.name : NULL);
    }
    return Py_NewRef(Py_None);
}

/* y = a*x + y: None, or NULL with the exception (a StatusError for libcudaload's failures). */
static PyObject *do_saxpy(double a, PyObject *x_obj, PyObject *y_obj, PyObject *stream_obj) {
    PyObject *objs[2] = {x_obj, y_obj};
    uintptr_t stream = 0;
    int has_stream;
    if (arr_parse_stream(stream_obj, &stream, &has_stream) < 0) return NULL;
    static const char *names[2] = {"x", "y"};
    call c;
    const cudaload_cudart_table *rt = NULL;
    PyObject *ret = NULL;
    int prev = -1;
    if (arr_call_get(&c, objs, names, 2, stream, has_stream) < 0) goto out;
    operand *x = &c.op[0], *y = &c.op[1];
    int same = x->ndim == y->ndim;
    for (int i = 0; same && i < x->ndim; i++) same = x->shape[i] == y->shape[i];
    if (!same) {
        char sx[128], sy[128];
        arr_shape_str(x, sx, sizeof sx), arr_shape_str(y, sy, sizeof sy);
        PyErr_Format(PyExc_ValueError, "saxpy: x and y have different shapes %s and %s", sx, sy);
        goto out;
    }
    for (int i = 0; i < 2; i++)
        if (!arr_c_contiguous(&c.op[i])) {
            PyErr_Format(PyExc_ValueError, "saxpy: %s is not contiguous (C order): pass a contiguous array "
                         "(numpy.ascontiguousarray, tensor.contiguous())", c.op[i].name);
            goto out;
        }
    long long n = arr_numel(x);
    if (!(rt = ready())) goto out;
    if (arr_call_place(&c, rt) < 0) goto out;
    if (n == 0) {
        ret = Py_NewRef(Py_None);
        goto out;
    }
    if (arr_enter_device(rt, c.device, &prev) < 0) goto out;
    cudaload_status st = CUDALOAD_OK;
    cudaError_t e = cudaSuccess;
    const char *what = NULL;
    Py_BEGIN_ALLOW_THREADS
    if (c.host) {
        long long ext[2] = {n, n};
        int copy[2] = {1, 1};
        if ((e = arr_copy_in(&c, rt, ext, copy)) != cudaSuccess) what = "copy to the GPU (cudaMalloc/cudaMemcpyAsync)";
        else if ((st = cudaload_saxpy(n, (float)a, (const float *)c.dptr[0], (float *)c.dptr[1], (void *)c.stream)) ==
                 CUDALOAD_OK &&
                 (e = arr_copy_out(&c, rt, n)) != cudaSuccess)
            what = "copy back from the GPU (cudaMemcpyAsync/cudaStreamSynchronize)";
    } else {
        st = cudaload_saxpy(n, (float)a, (const float *)x->ptr, (float *)y->ptr, (void *)c.stream);
    }
    Py_END_ALLOW_THREADS
    ret = call_result(rt, what, e, st);
out:
    return arr_call_end(&c, rt, prev, ret);
}

/* out = alpha*a@b + beta*out: None, or NULL with the exception. */
static PyObject *do_sgemm(PyObject *a_obj, PyObject *b_obj, PyObject *out_obj, double alpha, double beta,
                          PyObject *stream_obj) {
    PyObject *objs[3] = {a_obj, b_obj, out_obj};
    uintptr_t stream = 0;
    int has_stream;
    if (arr_parse_stream(stream_obj, &stream, &has_stream) < 0) return NULL;
    static const char *names[3] = {"a", "b", "out"};
    call c;
    const cudaload_cudart_table *rt = NULL;
    PyObject *ret = NULL;
    int prev = -1;
    if (arr_call_get(&c, objs, names, 3, stream, has_stream) < 0) goto out;
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
        arr_shape_str(A, sa, sizeof sa), arr_shape_str(B, sb, sizeof sb), arr_shape_str(C, sc, sizeof sc);
        PyErr_Format(PyExc_ValueError, "sgemm: shapes do not match: a %s @ b %s -> out %s (a's columns must equal b's "
                     "rows; out must be (a rows, b columns))", sa, sb, sc);
        goto out;
    }
    mat la, lb, lc;
    if (arr_matrix_layout(A, &la) < 0 || arr_matrix_layout(B, &lb) < 0 || arr_matrix_layout(C, &lc) < 0) goto out;
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
    if (arr_call_place(&c, rt) < 0) goto out;
    if (m == 0 || n == 0) {
        ret = Py_NewRef(Py_None);
        goto out;
    }
    if (arr_enter_device(rt, c.device, &prev) < 0) goto out;
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
        if ((e = arr_copy_in(&c, rt, ext, copy)) != cudaSuccess) what = "copy to the GPU (cudaMalloc/cudaMemcpyAsync)";
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
        if (c.host && st == CUDALOAD_OK && (e = arr_copy_out(&c, rt, lc.extent)) != cudaSuccess)
            what = "copy back from the GPU (cudaMemcpyAsync/cudaStreamSynchronize)";
    }
    Py_END_ALLOW_THREADS
    ret = call_result(rt, what, e, st);
out:
    return arr_call_end(&c, rt, prev, ret);
}

/* ---- the public calls: cudaload.saxpy and cudaload.sgemm themselves ---- */

/* Set by the package at import (_set_hooks): raise_hook(StatusError) raises the documented
 * exception (CudaLoadError's subclasses, with the fixes); sgemm_out(a, b, beta) allocates out
 * for sgemm(out=None). Both run only off the fast path: a failure, or an allocation. */
static PyObject *raise_hook, *sgemm_out_hook;

/* A StatusError set: replaced by the package's exception for it. Returns NULL. */
static PyObject *mapped_error(void) {
    if (!raise_hook || !PyErr_ExceptionMatches(shim_status_type())) return NULL;
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    PyObject *r = value ? PyObject_CallFunctionObjArgs(raise_hook, value, NULL) : NULL;
    Py_XDECREF(r); /* the hook raises: r is NULL with its exception set */
    Py_XDECREF(type), Py_XDECREF(value), Py_XDECREF(tb);
    if (r && !PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "cudaload: the error hook raised nothing");
    return NULL;
}

static PyObject *py_set_hooks(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *r, *o;
    if (!PyArg_ParseTuple(args, "OO", &r, &o)) return NULL;
    Py_XDECREF(raise_hook);
    Py_XDECREF(sgemm_out_hook);
    raise_hook = Py_NewRef(r);
    sgemm_out_hook = Py_NewRef(o);
    Py_RETURN_NONE;
}

static PyObject *py_saxpy(PyObject *self, PyObject *args, PyObject *kwargs) {
    (void)self;
    static char *kw[] = {"a", "x", "y", "stream", NULL};
    double a;
    PyObject *x, *y, *stream = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "dOO|$O:saxpy", kw, &a, &x, &y, &stream)) return NULL;
    PyObject *r = do_saxpy(a, x, y, stream);
    if (!r) return mapped_error();
    Py_DECREF(r);
    return Py_NewRef(y);
}

static PyObject *py_sgemm(PyObject *self, PyObject *args, PyObject *kwargs) {
    (void)self;
    static char *kw[] = {"a", "b", "out", "alpha", "beta", "stream", NULL};
    double alpha = 1.0, beta = 0.0;
    PyObject *a, *b, *out = Py_None, *stream = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|Odd$O:sgemm", kw, &a, &b, &out, &alpha, &beta, &stream))
        return NULL;
    if (out == Py_None) { /* allocated by the package: numpy, torch or cupy, like a */
        PyObject *pbeta = PyFloat_FromDouble(beta);
        out = pbeta && sgemm_out_hook ? PyObject_CallFunctionObjArgs(sgemm_out_hook, a, b, pbeta, NULL) : NULL;
        Py_XDECREF(pbeta);
        if (!out) return NULL;
    } else {
        Py_INCREF(out);
    }
    PyObject *r = do_sgemm(a, b, out, alpha, beta, stream);
    if (!r) {
        Py_DECREF(out);
        return mapped_error();
    }
    Py_DECREF(r);
    return out;
}

static PyObject *py_stream_handle(PyObject *self, PyObject *arg) {
    (void)self;
    uintptr_t stream = 0;
    int has = 0;
    if (arr_parse_stream(arg, &stream, &has) < 0) return NULL;
    if (!has) Py_RETURN_NONE;
    return PyLong_FromUnsignedLongLong((unsigned long long)stream);
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
    const char *python = NULL;
    if (!PyArg_ParseTuple(args, "ppp|z", &json, &selftest, &color, &python)) return NULL;
    if (!init_done) return status_error(CUDALOAD_ERROR_NOT_INITIALIZED, "cudaload._cudaload._init was not called");
    char *text = NULL;
    size_t len = 0;
    int code = -1;
    Py_BEGIN_ALLOW_THREADS
    /* the report tells about cuBLAS too (its status if it fails); without a runtime it is not
     * searched (it takes the runtime's major and root), as in cudaload-probe's report */
    cudaload_library_info rt = {.size = sizeof rt};
    if (cudaload_get_library_info(CUDALOAD_LIB_CUDART, &rt) == CUDALOAD_OK && rt.status == CUDALOAD_OK) cudaload_load_cublas();
    probe_request rq = {init_status, init_error, 0, selftest, NULL, 0, python};
    probe_report *r = probe_report_collect(&rq);
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

/* ---- what libcudaload knows, as data ---- */

/* A str from bytes that may not be UTF-8 (a path): as probe()'s JSON decodes it. */
static PyObject *text_of(const char *s) {
    return s ? PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "surrogateescape") : Py_NewRef(Py_None);
}

/* Sets d[key] = v (stealing v); -1 on error. */
static int put(PyObject *d, const char *key, PyObject *v) {
    if (!v) return -1;
    int r = PyDict_SetItemString(d, key, v);
    Py_DECREF(v);
    return r;
}

/* Space-separated words as a list of str. */
static PyObject *words_of(const char *s) {
    PyObject *l = PyList_New(0);
    while (l && s && *s) {
        size_t len = strcspn(s, " ");
        if (len) {
            PyObject *w = PyUnicode_DecodeUTF8(s, (Py_ssize_t)len, "surrogateescape");
            if (!w || PyList_Append(l, w) < 0) Py_CLEAR(l);
            Py_XDECREF(w);
        }
        s += len;
        if (*s) s++;
    }
    return l;
}

/* A library (or one of its items) as a dict, from the probe's field list: the same keys and
 * values as the library's object in the probe's JSON. */
static PyObject *dict_of_fields(const probe_field *fields, const probe_lib *l, size_t item) {
    PyObject *d = PyDict_New();
    for (const probe_field *f = fields; d && f->key; f++) {
        char buf[4096];
        probe_value v = f->get(l, item, buf, sizeof buf);
        PyObject *o = NULL;
        switch (v.type) {
        case PV_NULL: o = Py_NewRef(Py_None); break;
        case PV_STR: o = text_of(v.s); break;
        case PV_INT: o = PyLong_FromLongLong(v.i); break;
        case PV_BOOL: o = PyBool_FromLong((long)v.i); break;
        case PV_WORDS: o = words_of(v.s); break;
        case PV_ITEMS:
            o = PyList_New(0);
            for (long long k = 0; o && k < v.i; k++) {
                PyObject *it = dict_of_fields(f->items, l, (size_t)k);
                if (!it || PyList_Append(o, it) < 0) Py_CLEAR(o);
                Py_XDECREF(it);
            }
            break;
        }
        if (put(d, f->key, o) < 0) Py_CLEAR(d);
    }
    return d;
}

/* The init checks every search call makes: 1 when the search may run, else the raised error. */
static int search_ready(void) {
    if (!init_done) return status_error(CUDALOAD_ERROR_NOT_INITIALIZED, "cudaload._cudaload._init was not called"), 0;
    if (init_status == CUDALOAD_ERROR_INVALID_OPTION || init_status == CUDALOAD_ERROR_INVALID_ARGUMENT)
        return status_error(init_status, init_error), 0;
    return 1;
}

/* The one argument of a call about one library, its catalogue name: 1 with *lib and *name set
 * when the search may run, else 0 with the error raised (ValueError for a name the catalogue
 * does not have; the init's error). */
static int lib_arg(PyObject *args, cudaload_lib *lib, const char **name) {
    if (!PyArg_ParseTuple(args, "s", name)) return 0;
    if (cudaload_lib_by_name(*name, lib) != CUDALOAD_OK) {
        PyErr_SetString(PyExc_ValueError, cudaload_last_error());
        return 0;
    }
    return search_ready();
}

/* _library(name): the catalogue library called name, searched (and loaded, with its
 * dependencies) on first ask, as a dict of the probe's fields. */
static PyObject *py_library(PyObject *self, PyObject *args) {
    (void)self;
    const char *name;
    cudaload_lib lib;
    if (!lib_arg(args, &lib, &name)) return NULL;
    Py_BEGIN_ALLOW_THREADS
    cudaload_load_library(lib);
    Py_END_ALLOW_THREADS
    probe_lib l;
    probe_lib_fill(lib, &l);
    return dict_of_fields(probe_lib_fields, &l, 0);
}

/* _catalogue(): every row of the catalogue, in id order, as dicts. */
static PyObject *py_catalogue(PyObject *self, PyObject *args) {
    (void)self, (void)args;
    PyObject *rows = PyList_New(0);
    for (size_t i = 0; rows && i < cudaload_library_count(); i++) {
        cudaload_catalogue_info c = {.size = sizeof c};
        if (cudaload_catalogue_entry((cudaload_lib)i, &c) != CUDALOAD_OK) continue;
        PyObject *d = PyDict_New(), *majors = PyList_New(0), *sonames = PyList_New(0), *dirs = PyList_New(0),
                 *pkgs = PyList_New(0);
        int bad = !d || !majors || !sonames || !dirs || !pkgs;
        for (int k = 0; !bad && k < (c.n_majors ? c.n_majors : 1) && k < 2; k++) {
            PyObject *m = c.n_majors ? PyLong_FromLong(c.majors[k]) : NULL, *so = text_of(c.sonames[k]);
            bad = !so || PyList_Append(sonames, so) < 0;
            if (!bad && c.n_majors) {
                PyObject *wd = text_of(c.wheel_dirs[k]), *pk = text_of(c.pip_packages[k]);
                bad = !m || !wd || !pk || PyList_Append(majors, m) < 0 || PyList_Append(dirs, wd) < 0 ||
                      PyList_Append(pkgs, pk) < 0;
                Py_XDECREF(wd), Py_XDECREF(pk);
            }
            Py_XDECREF(m), Py_XDECREF(so);
        }
        if (bad || put(d, "id", PyLong_FromSize_t(i)) < 0 || put(d, "name", text_of(c.name)) < 0 ||
            put(d, "driver_like", PyBool_FromLong(c.driver_like)) < 0 || put(d, "majors", Py_NewRef(majors)) < 0 ||
            put(d, "sonames", Py_NewRef(sonames)) < 0 || put(d, "wheel_dirs", Py_NewRef(dirs)) < 0 ||
            put(d, "pip_packages", Py_NewRef(pkgs)) < 0 || put(d, "deps", words_of(c.deps)) < 0 ||
            put(d, "optional_deps", words_of(c.optional_deps)) < 0 || put(d, "header", text_of(c.header)) < 0 ||
            put(d, "env_name", text_of(c.env_name)) < 0 || PyList_Append(rows, d) < 0)
            Py_CLEAR(rows);
        Py_XDECREF(d), Py_XDECREF(majors), Py_XDECREF(sonames), Py_XDECREF(dirs), Py_XDECREF(pkgs);
    }
    return rows;
}

/* _part(name): a toolkit part (nvcc, cudadevrt, libdevice, ...), searched on first ask, as a dict
 * (the fields of cudaload-probe --parts --json). */
static PyObject *py_part(PyObject *self, PyObject *args) {
    (void)self;
    const char *name;
    if (!PyArg_ParseTuple(args, "s", &name)) return NULL;
    if (!search_ready()) return NULL;
    cudaload_part_info p = {.size = sizeof p};
    cudaload_status st;
    Py_BEGIN_ALLOW_THREADS
    st = cudaload_part(name, &p);
    Py_END_ALLOW_THREADS
    if (st == CUDALOAD_ERROR_INVALID_ARGUMENT) {
        PyErr_SetString(PyExc_ValueError, cudaload_last_error());
        return NULL;
    }
    static const char *const kinds[] = {"?", "binary", "static", "bitcode"};
    PyObject *d = PyDict_New(), *pkgs = PyList_New(0), *cands = PyList_New(0);
    int bad = !d || !pkgs || !cands;
    for (int k = 0; !bad && k < p.n_majors; k++) {
        PyObject *v = text_of(p.pip_packages[k]);
        bad = !v || PyList_Append(pkgs, v) < 0;
        Py_XDECREF(v);
    }
    for (size_t c = 0; !bad && c < p.n_candidates; c++) {
        PyObject *cd = PyDict_New();
        bad = !cd || put(cd, "path", text_of(p.candidates[c].path)) < 0 ||
              put(cd, "source", text_of(cudaload_source_name(p.candidates[c].source))) < 0 ||
              put(cd, "result", text_of(cudaload_status_name(p.candidates[c].result))) < 0 ||
              put(cd, "reason_code", text_of(cudaload_reason_name(p.details[c].reason))) < 0 ||
              put(cd, "reason", text_of(p.candidates[c].reason)) < 0 || PyList_Append(cands, cd) < 0;
        Py_XDECREF(cd);
    }
    if (bad || put(d, "name", text_of(p.name)) < 0 || put(d, "kind", text_of(kinds[p.kind <= 3 ? p.kind : 0])) < 0 ||
        put(d, "file", text_of(p.file)) < 0 || put(d, "library", text_of(p.library)) < 0 ||
        put(d, "status", text_of(cudaload_status_name(st))) < 0 || put(d, "path", text_of(p.path)) < 0 ||
        put(d, "source", p.path ? text_of(cudaload_source_name(p.source)) : Py_NewRef(Py_None)) < 0 ||
        put(d, "major", p.major ? PyLong_FromLong(p.major) : Py_NewRef(Py_None)) < 0 ||
        put(d, "cuda_version", p.cuda_version ? PyLong_FromLong(p.cuda_version) : Py_NewRef(Py_None)) < 0 ||
        put(d, "needed_by_toolkit", PyBool_FromLong(p.needed_by_toolkit)) < 0 || put(d, "pip_packages", Py_NewRef(pkgs)) < 0 ||
        put(d, "candidates", Py_NewRef(cands)) < 0 ||
        put(d, "error", st != CUDALOAD_OK ? text_of(cudaload_last_error()) : Py_NewRef(Py_None)) < 0)
        Py_CLEAR(d);
    Py_XDECREF(pkgs), Py_XDECREF(cands);
    return d;
}

/* _part_names(): the parts of the catalogue, in order. */
static PyObject *py_part_names(PyObject *self, PyObject *args) {
    (void)self, (void)args;
    PyObject *names = PyList_New(0);
    for (size_t i = 0; names && i < cudaload_part_count(); i++) {
        cudaload_part_info p = {.size = sizeof p};
        cudaload_part_at(i, &p);
        PyObject *v = text_of(p.name);
        if (!v || PyList_Append(names, v) < 0) Py_CLEAR(names);
        Py_XDECREF(v);
    }
    return names;
}

/* _toolkit_root(dir or None): cudaload_toolkit_root(); StatusError with the reasons when none. */
static PyObject *py_toolkit_root(PyObject *self, PyObject *args) {
    (void)self;
    const char *dir = NULL;
    if (!PyArg_ParseTuple(args, "|z", &dir)) return NULL;
    if (!search_ready()) return NULL;
    const char *root = NULL;
    cudaload_status st;
    Py_BEGIN_ALLOW_THREADS
    st = cudaload_toolkit_root(dir, &root);
    Py_END_ALLOW_THREADS
    if (st != CUDALOAD_OK) return status_error(st, cudaload_last_error());
    return text_of(root);
}

/* _fixes(names, devices, python): the fix lines the probe gives for these libraries (the
 * advisor's fixes, merged) and, with devices, for a driver that shows no device; worded for
 * python (the interpreter: `<python> -m pip install ...`). */
static PyObject *py_fixes(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *names;
    int devices;
    const char *python = NULL;
    if (!PyArg_ParseTuple(args, "Op|z", &names, &devices, &python)) return NULL;
    PyObject *seq = PySequence_List(names);
    if (!seq) return NULL;
    Py_ssize_t n = PyList_Size(seq);
    cudaload_lib *libs = calloc((size_t)n + 1, sizeof *libs);
    PyObject *out = NULL;
    if (!libs) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        const char *name = PyUnicode_AsUTF8AndSize(PyList_GetItem(seq, i), NULL);
        if (!name) goto done;
        if (cudaload_lib_by_name(name, &libs[i]) != CUDALOAD_OK) {
            PyErr_SetString(PyExc_ValueError, cudaload_last_error());
            goto done;
        }
    }
    char *lines[32];
    size_t k = probe_fix_lines(python, libs, (size_t)n, devices, lines, 32);
    out = PyList_New(0);
    for (size_t i = 0; i < k; i++) {
        PyObject *t = out ? text_of(lines[i]) : NULL;
        if (out && (!t || PyList_Append(out, t) < 0)) Py_CLEAR(out);
        Py_XDECREF(t);
        free(lines[i]);
    }
done:
    free(libs);
    Py_DECREF(seq);
    return out;
}

/* _preload(name) -> [(name, path, source)]: cudaload_preload of one library, what it loaded in
 * order; the library's StatusError (with its candidates) when it or a dependency failed. */
static PyObject *py_preload(PyObject *self, PyObject *args) {
    (void)self;
    const char *name;
    cudaload_lib lib;
    if (!lib_arg(args, &lib, &name)) return NULL;
    cudaload_preloaded got[64];
    size_t n = 0;
    cudaload_status st;
    const char *names[1] = {name};
    Py_BEGIN_ALLOW_THREADS
    st = cudaload_preload(names, 1, got, 64, &n);
    Py_END_ALLOW_THREADS
    if (st != CUDALOAD_OK) {
        cudaload_library_info li = {.size = sizeof li};
        cudaload_get_library_info(lib, &li);
        /* the library itself failed (or a dependency it needs: its candidates say which) */
        if (li.status != CUDALOAD_OK) return lib_error(lib, li.status);
        return status_error(st, cudaload_last_error()); /* a companion file beside it */
    }
    PyObject *out = PyList_New(0);
    for (size_t i = 0; out && i < n && i < 64; i++) {
        PyObject *t = Py_BuildValue("(sss)", got[i].name, got[i].path, cudaload_source_name(got[i].source));
        if (!t || PyList_Append(out, t) < 0) Py_CLEAR(out);
        Py_XDECREF(t);
    }
    return out;
}

/* _find(name) -> path or None: where the search finds the library (cudaload_find_library: located
 * and checked, not loaded; a copy already loaded counts). */
static PyObject *py_find(PyObject *self, PyObject *args) {
    (void)self;
    const char *name;
    cudaload_lib lib;
    if (!lib_arg(args, &lib, &name)) return NULL;
    Py_BEGIN_ALLOW_THREADS
    cudaload_find_library(lib);
    Py_END_ALLOW_THREADS
    cudaload_library_info li = {.size = sizeof li};
    cudaload_get_library_info(lib, &li);
    if (li.status != CUDALOAD_OK || !li.path) Py_RETURN_NONE;
    return text_of(li.path);
}

static PyObject *py_status_name(PyObject *self, PyObject *args) {
    (void)self;
    int st;
    if (!PyArg_ParseTuple(args, "i", &st)) return NULL;
    return Py_BuildValue("(ss)", cudaload_status_name((cudaload_status)st), cudaload_status_string((cudaload_status)st));
}

static PyMethodDef methods[] = {
    {"_init", py_init, METH_VARARGS, "_init(roots) -> (status, message): cudaload_init() once, with these caller roots"},
    {"_report", py_report, METH_VARARGS,
     "_report(json, selftest, color, python=None) -> (text, exit_code): the probe's report (for python's commands)"},
    {"saxpy", (PyCFunction)(void (*)(void))py_saxpy, METH_VARARGS | METH_KEYWORDS,
     "saxpy($module, /, a, x, y, *, stream=None)\n--\n\n"
     "y = a*x + y, in place, on float32 arrays of one shape (contiguous). Returns y.\n\n"
     "Host buffers (numpy, array.array('f'), any buffer-protocol object; torch CPU tensors via\n"
     "DLPack) are copied to the GPU and back. CUDA arrays (torch tensors directly; others by\n"
     "__cuda_array_interface__ or DLPack: cupy, numba) are used in place, on `stream` when given\n"
     "(an int handle, or a torch/cupy stream object), else on the stream their\n"
     "__cuda_array_interface__ names, else the legacy default stream."},
    {"sgemm", (PyCFunction)(void (*)(void))py_sgemm, METH_VARARGS | METH_KEYWORDS,
     "sgemm($module, /, a, b, out=None, alpha=1.0, beta=0.0, *, stream=None)\n--\n\n"
     "out = alpha * a @ b + beta * out, float32 matrices: a (m, k), b (k, n), out (m, n). Returns out.\n\n"
     "Row-major (C-contiguous) operands, or column-major (Fortran order, e.g. a.T), rows or\n"
     "columns possibly padded. out=None allocates out (numpy for host operands, else torch or\n"
     "cupy like a) and needs beta == 0. Host and CUDA operands, streams: as for saxpy."},
    {"_set_hooks", py_set_hooks, METH_VARARGS, "_set_hooks(raise_hook, sgemm_out): the package's error mapping, out=None"},
    {"_stream_handle", py_stream_handle, METH_O, "_stream_handle(stream) -> int | None: stream= as saxpy reads it"},
    {"_set_backend", py_set_backend, METH_VARARGS, "_set_backend(int): cudaload_set_backend()"},
    {"_last_backend", py_last_backend, METH_NOARGS, "the backend the calling thread's last SAXPY/SGEMM used"},
    {"_library", py_library, METH_VARARGS, "_library(name) -> dict: the library's fields, as in the probe's JSON"},
    {"_part", py_part, METH_VARARGS, "_part(name) -> dict: a toolkit part (nvcc, cudadevrt, libdevice, ...), searched"},
    {"_part_names", py_part_names, METH_NOARGS, "_part_names() -> [str]: the catalogue's toolkit parts"},
    {"_toolkit_root", py_toolkit_root, METH_VARARGS, "_toolkit_root(dir=None) -> str: cudaload_toolkit_root()"},
    {"_catalogue", py_catalogue, METH_NOARGS, "_catalogue() -> [dict]: the catalogue's rows, in id order"},
    {"_fixes", py_fixes, METH_VARARGS, "_fixes(names, devices, python=None) -> [str]: the probe's fix lines for them"},
    {"_status_name", py_status_name, METH_VARARGS, "_status_name(status) -> (name, description)"},
    {"_preload", py_preload, METH_VARARGS, "_preload(name) -> [(name, path, source)]: cudaload_preload of one library"},
    {"_find", py_find, METH_VARARGS, "_find(name) -> str | None: where the search finds it, not loading it"},
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
    if (shim_status_init(m) < 0) goto fail;
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
