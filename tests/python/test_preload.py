# SPDX-License-Identifier: Apache-2.0
"""cudaload.preload() and `python -m cudaload env`, for code that cannot be relinked: a
prebuilt-style extension (DT_NEEDED libcublas.so.13, no RPATH or RUNPATH) imports after preload
and not before, binds to the copies preload chose (one copy of each library in the process), and
the order, the one-place rule and the errors hold.

Real files: the toolkit's libraries, hard-linked into a crafted site-packages tree (the CUDA 13
wheel layout: nvidia/cu13/lib, nvidia/cudnn/lib). The toolkit is in ld.so.cache on this machine,
so every child runs under the dynamic loader with --inhibit-cache: there, as on a machine whose
CUDA comes from pip only, libcublas.so.13 is found nowhere unless something loaded it first.
"""
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from conftest import SOURCES_NO_SYSTEM, build_dir, clean_env, sh

CUDA_HOME = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda"))
LIB64 = CUDA_HOME / "lib64"
LDSO = Path("/lib64/ld-linux-x86-64.so.2")
CU13 = ["libcudart.so.13", "libcublas.so.13", "libcublasLt.so.13", "libcusparse.so.12", "libnvJitLink.so.13",
        "libnvrtc.so.13"]
CUDNN_SUBS = ["libcudnn_graph.so.9", "libcudnn_engines_precompiled.so.9", "libcudnn_engines_runtime_compiled.so.9",
              "libcudnn_heuristic.so.9", "libcudnn_ops.so.9", "libcudnn_cnn.so.9", "libcudnn_adv.so.9"]

EXT_C = r"""
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define _GNU_SOURCE
#include <dlfcn.h>
#include <cublas_v2.h>

/* version() -> (cuBLAS major, the file cublasGetProperty came from) */
static PyObject *version(PyObject *self, PyObject *args) {
    (void)self, (void)args;
    int major = -1;
    cublasStatus_t st = cublasGetProperty(MAJOR_VERSION, &major);
    Dl_info info;
    const char *from = dladdr((void *)cublasGetProperty, &info) && info.dli_fname ? info.dli_fname : "";
    return Py_BuildValue("(iis)", (int)st, major, from);
}
static PyMethodDef methods[] = {{"version", version, METH_NOARGS, ""}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT, "prebuilt", NULL, -1, methods};
PyMODINIT_FUNC PyInit_prebuilt(void) { return PyModule_Create(&mod); }
"""


def _have(names, d=LIB64):
    return all((d / n).exists() for n in names)


pytestmark = [
    pytest.mark.skipif(not LDSO.exists(), reason="no %s (x86-64 glibc) to run children with --inhibit-cache" % LDSO),
    pytest.mark.skipif(not _have(CU13), reason="the toolkit's CUDA 13 libraries (%s) are not all in %s" % (
        ", ".join(CU13), LIB64)),
]


def _link_or_copy(src, dst):
    src = Path(os.path.realpath(src))
    try:
        os.link(src, dst)
    except OSError:  # another file system: a copy (the big ones are hundreds of MB)
        shutil.copy2(src, dst)


@pytest.fixture(scope="module")
def trees(shim_target):
    """site: the crafted site-packages (the wheels' layout, the toolkit's files); other: a second
    copy of cuBLASLt, for LD_LIBRARY_PATH; ext: the built prebuilt-style extension."""
    top = build_dir() / "preload"
    shutil.rmtree(top, ignore_errors=True)
    site, other, ext = top / "site", top / "other", top / "ext"
    lib = site / "nvidia" / "cu13" / "lib"
    for d in (lib, other, ext):
        d.mkdir(parents=True)
    for n in CU13:
        _link_or_copy(LIB64 / n, lib / n)
    _link_or_copy(LIB64 / "libcublasLt.so.13", other / "libcublasLt.so.13")
    cudnn = _have(["libcudnn.so.9"] + CUDNN_SUBS)
    if cudnn:
        d = site / "nvidia" / "cudnn" / "lib"
        d.mkdir(parents=True)
        for n in ["libcudnn.so.9"] + CUDNN_SUBS:
            _link_or_copy(LIB64 / n, d / n)
    src = ext / "prebuilt.c"
    src.write_text(EXT_C)
    so = ext / ("prebuilt" + sysconfig.get_config_var("EXT_SUFFIX"))
    sh(["cc", "-shared", "-fPIC", "-O1", "-I" + sysconfig.get_paths()["include"], "-I" + str(CUDA_HOME / "include"),
        "-o", so, src, "-L" + str(LIB64), "-lcublas", "-ldl"])
    dyn = sh(["readelf", "-d", so]).stdout
    assert "[libcublas.so.13]" in dyn and "RPATH" not in dyn and "RUNPATH" not in dyn, dyn
    return {"site": site, "lib": lib, "other": other, "ext": ext, "cudnn": cudnn, "shim": shim_target}


def _child(t, code, args=(), **env):
    """python -c code under ld.so --inhibit-cache: the shim and the crafted site on sys.path, the
    extension's dir too; no system search, no CUDA_HOME. Returns the CompletedProcess."""
    e = clean_env(PYTHONPATH=os.pathsep.join(map(str, (t["shim"], t["site"], t["ext"]))),
                  CUDALOAD_SOURCES=SOURCES_NO_SYSTEM, **env)
    e.pop("LD_LIBRARY_PATH", None)
    e.update({k: str(v) for k, v in env.items()})
    return subprocess.run([str(LDSO), "--inhibit-cache", sys.executable, "-c", code, *args], env=e,
                          capture_output=True, text=True, timeout=600, cwd=str(build_dir()))


# what a child prints: the preload's list, the extension's answer, every NVIDIA file mapped
REPORT = r"""
import json, sys
out = {}
try:
    import cudaload
    if sys.argv[1:]:
        out["preloaded"] = cudaload.preload(*sys.argv[1:])
    import prebuilt
    out["version"] = prebuilt.version()
except Exception as e:
    out["error"] = [type(e).__name__, str(e), getattr(e, "fixes", None)]
maps = set()
for line in open("/proc/self/maps"):
    p = line.split()[-1]
    if "/libcu" in p or "/libnv" in p:
        maps.add(p)
out["maps"] = sorted(maps)
print(json.dumps(out))
"""


def _report(t, *names, **env):
    r = _child(t, REPORT, names, **env)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_prebuilt_extension_fails_before_preload(trees):
    out = _report(trees)
    assert out["error"][0] == "ImportError", out
    assert "libcublas.so.13" in out["error"][1]


def test_prebuilt_extension_imports_after_preload(trees):
    out = _report(trees, "cublas")
    assert "error" not in out, out
    st, major, bound = out["version"]
    assert (st, major) == (0, 13)
    lib = str(trees["lib"])
    assert bound.startswith(lib + "/"), bound                       # bound to the preloaded copy
    names = [p["name"] for p in out["preloaded"]]
    assert names.index("cublasLt") < names.index("cublas"), names   # dependencies first
    assert all(p["path"].startswith(lib + "/") and p["source"] == "caller" for p in out["preloaded"]), out
    cublas_maps = [m for m in out["maps"] if "libcublas" in m]
    assert cublas_maps and all(m.startswith(lib + "/") for m in cublas_maps), out["maps"]


def test_one_place_with_another_copy_on_ld_library_path(trees):
    """cuBLASLt on LD_LIBRARY_PATH too: preload takes cuBLAS's own from the same place, and the
    process maps no file of the other directory."""
    out = _report(trees, "cublas", LD_LIBRARY_PATH=trees["other"])
    assert "error" not in out, out
    assert not [m for m in out["maps"] if m.startswith(str(trees["other"]) + "/")], out["maps"]
    lt = [p for p in out["preloaded"] if p["name"] == "cublasLt"][0]
    assert lt["path"] == str(trees["lib"] / "libcublasLt.so.13")


def test_closure_order(trees):
    out = _report(trees, "cusparse", "cublas")
    names = [p["name"] for p in out["preloaded"]]
    assert names.index("nvJitLink") < names.index("cusparse"), names
    assert names.index("cublasLt") < names.index("cublas"), names
    assert len(names) == len(set(names)), names                     # each file once


def test_cudnn_sub_libraries(trees):
    if not trees["cudnn"]:
        pytest.skip("no cuDNN 9 with its sub-libraries in %s" % LIB64)
    out = _report(trees, "cudnn")
    names = [p["name"] for p in out["preloaded"]]
    assert names[names.index("cudnn") + 1:] == CUDNN_SUBS, names    # after cuDNN, in their own order
    d = str(trees["site"] / "nvidia" / "cudnn" / "lib")
    assert all(p["path"].startswith(d + "/") for p in out["preloaded"] if "cudnn" in p["name"]), out
    assert [m for m in out["maps"] if "libcudnn_graph" in m] == [d + "/libcudnn_graph.so.9"]


def test_errors(trees):
    out = _report(trees, "cufft")                                    # not in the tree
    assert out["error"][0] == "LibraryNotFoundError", out
    assert any("pip install" in f for f in out["error"][2]), out
    out = _report(trees, "nosuch")
    assert out["error"][0] == "ValueError", out
    r = _child(trees, "import cudaload; cudaload.preload()")
    assert r.returncode != 0 and "ValueError" in r.stderr


def test_env_gives_another_program_the_same_copies(trees):
    r = _child(trees, "from cudaload.__main__ import main; raise SystemExit(main())", ["env", "cublas"],
               LD_LIBRARY_PATH="/nonexistent-elsewhere")
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("\n") == 1
    dirs = r.stdout.strip().split(":")
    assert dirs[0] == str(trees["lib"]) and dirs[-1] == "/nonexistent-elsewhere", dirs
    # a separate program with that LD_LIBRARY_PATH and no preload: the same copies
    out = _report(trees, LD_LIBRARY_PATH=r.stdout.strip())
    assert "error" not in out, out
    assert out["version"][2].startswith(str(trees["lib"]) + "/")
    for args, code in ((["env", "nosuch"], 4), (["env", "cufft"], 1)):
        r = _child(trees, "from cudaload.__main__ import main; raise SystemExit(main())", args)
        assert r.returncode == code, (args, r.returncode, r.stderr)
        assert r.stdout == ""
