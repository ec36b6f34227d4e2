# SPDX-License-Identifier: Apache-2.0
"""cudaload.preload() on a GPU, beside torch: a prebuilt-style extension (DT_NEEDED libcublas.so.13
and libcudart.so.13, no RPATH) does real work (an SGEMM through cuBLAS, checked against the
host) after preload, whether preload comes before torch or after it, and the process maps one
copy of each library. Before preload it does not import (the dynamic loader runs with
--inhibit-cache, as on a machine whose CUDA comes from pip only).

Run by tests/python/device-run.sh on the GPU machine (the interpreter with torch and the cu13
wheels); skipped without a GPU.
"""
import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from conftest import build_dir, gpu_test_modules, sh

np, torch, cupy = gpu_test_modules()
if torch is None:
    pytest.skip("torch is not installed in this interpreter", allow_module_level=True)
LDSO = Path("/lib64/ld-linux-x86-64.so.2")

EXT_C = r"""
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

/* sgemm(n) -> (max |C - host C|, the file cublasSgemm_v2 came from): C = A B, n x n, on the GPU */
static PyObject *sgemm(PyObject *self, PyObject *args) {
    (void)self;
    int n;
    if (!PyArg_ParseTuple(args, "i", &n)) return NULL;
    size_t bytes = (size_t)n * n * sizeof(float);
    float *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes), *da, *db, *dc;
    for (int i = 0; i < n * n; i++) { a[i] = (float)(i % 7) - 3.0f; b[i] = (float)(i % 5) * 0.5f; }
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return PyErr_Format(PyExc_RuntimeError, "cublasCreate failed");
    cudaMalloc((void **)&da, bytes); cudaMalloc((void **)&db, bytes); cudaMalloc((void **)&dc, bytes);
    cudaMemcpy(da, a, bytes, cudaMemcpyHostToDevice); cudaMemcpy(db, b, bytes, cudaMemcpyHostToDevice);
    float one = 1.0f, zero = 0.0f;
    cublasStatus_t st = cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, da, n, db, n, &zero, dc, n);
    cudaMemcpy(c, dc, bytes, cudaMemcpyDeviceToHost);
    double err = st == CUBLAS_STATUS_SUCCESS ? 0.0 : INFINITY;
    for (int j = 0; j < n; j++)          /* column-major, as cuBLAS */
        for (int i = 0; i < n; i++) {
            double s = 0;
            for (int k = 0; k < n; k++) s += (double)a[i + k * n] * b[k + j * n];
            double d = fabs(s - c[i + j * n]);
            if (d > err) err = d;
        }
    cudaFree(da); cudaFree(db); cudaFree(dc); cublasDestroy(h);
    free(a); free(b); free(c);
    Dl_info info;
    const char *from = dladdr((void *)cublasSgemm_v2, &info) && info.dli_fname ? info.dli_fname : "";
    return Py_BuildValue("(ds)", err, from);
}
static PyMethodDef methods[] = {{"sgemm", sgemm, METH_VARARGS, ""}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT, "prebuilt_gpu", NULL, -1, methods};
PyMODINIT_FUNC PyInit_prebuilt_gpu(void) { return PyModule_Create(&mod); }
"""

REPORT = r"""
import json, sys
order = sys.argv[1]
out = {}
try:
    import cudaload
    if order == "torch-first":
        import torch
        out["torch"] = float((torch.ones(64, 64, device="cuda") @ torch.ones(64, 64, device="cuda"))[0, 0])
    if order != "none":
        out["preloaded"] = cudaload.preload("cublas", "cudart")
    import prebuilt_gpu
    out["sgemm"] = prebuilt_gpu.sgemm(256)
    if order == "preload-first":
        import torch
        out["torch"] = float((torch.ones(64, 64, device="cuda") @ torch.ones(64, 64, device="cuda"))[0, 0])
except Exception as e:
    out["error"] = [type(e).__name__, str(e)]
maps = set()
for line in open("/proc/self/maps"):
    p = line.split()[-1]
    if "/libcublas" in p or "/libcudart" in p:
        maps.add(p)
out["maps"] = sorted(maps)
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def ext():
    import cudaload
    lib = cudaload.library_dirs("cublas", "cudart")
    inc = [d for d in (os.environ.get("CUDA_HOME", "/usr/local/cuda") + "/include",
                       str(Path(lib[0]).parent / "include")) if os.path.exists(d + "/cublas_v2.h")]
    if not inc:
        pytest.skip("no cublas_v2.h (a toolkit or the wheels' headers) to build the extension")
    d = build_dir() / "gpu-preload"
    d.mkdir(parents=True, exist_ok=True)
    (d / "prebuilt_gpu.c").write_text(EXT_C)
    so = d / ("prebuilt_gpu" + sysconfig.get_config_var("EXT_SUFFIX"))
    sh(["cc", "-shared", "-fPIC", "-O2", "-I" + sysconfig.get_paths()["include"], "-I" + inc[0], "-o", so,
        d / "prebuilt_gpu.c"] + ["-L" + x for x in lib] + ["-l:libcublas.so.13", "-l:libcudart.so.13", "-ldl", "-lm"])
    dyn = sh(["readelf", "-d", so]).stdout
    assert "[libcublas.so.13]" in dyn and "RPATH" not in dyn and "RUNPATH" not in dyn, dyn
    return d


def _run(ext, order):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ext)] + sys.path))
    env.pop("LD_LIBRARY_PATH", None)
    r = subprocess.run([str(LDSO), "--inhibit-cache", sys.executable, "-c", REPORT, order], env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not LDSO.exists(), reason="no %s" % LDSO)
def test_gpu_prebuilt_fails_without_preload(ext):
    out = _run(ext, "none")
    assert out.get("error", [None])[0] == "ImportError", out


@pytest.mark.skipif(not LDSO.exists(), reason="no %s" % LDSO)
@pytest.mark.parametrize("order", ["preload-first", "torch-first"])
def test_gpu_prebuilt_after_preload_beside_torch(ext, order):
    out = _run(ext, order)
    assert "error" not in out, out
    err, bound = out["sgemm"]
    assert err < 1e-3, out                               # cuBLAS's SGEMM, right
    assert out["torch"] == 64.0                          # torch's own work in the same process
    names = {Path(m).name for m in out["maps"]}
    assert len(out["maps"]) == len(names), out["maps"]   # one copy of each library
    assert bound in out["maps"] or os.path.realpath(bound) in out["maps"], out
    if order == "torch-first":  # preload took torch's cuBLAS (the runtime: cudaload's import loaded it first)
        assert {p["source"] for p in out["preloaded"] if p["name"].startswith("cublas")} == {"loaded"}, out
