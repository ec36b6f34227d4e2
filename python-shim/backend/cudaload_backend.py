# SPDX-License-Identifier: Apache-2.0
"""The cudaload package's build backend: setuptools' (setuptools.build_meta), plus the CUDA
wheels the build needs when the machine has no CUDA toolkit, asked for only then.

The build compiles libcudaload with the CUDA headers (the stubs and typed tables are made from
cuda.h, cublas_v2.h, ...) and, when there is an nvcc, the bundled SAXPY/SGEMM kernels. Where a
toolkit is (CUDA_INC, CUDA_HOME, CUDA_PATH, /usr/local/cuda; nvcc there or on PATH), nothing more
is asked. Otherwise get_requires_for_build_wheel adds the pinned wheels of tools/cuda-pins.txt:
its [compiler] group when only nvcc is missing (about 105 MB), every pin when the headers are
missing too (about 1.2 GB: a library's headers come only in its whole wheel). setup.py then takes
the headers and nvcc from those wheels in the build environment. CUDALOAD_NVCC="" (no kernels)
drops the compiler group; CUDALOAD_PIP_TOOLKIT=0 asks for nothing (the build then fails without
headers, saying so).

Each step says on stderr what it builds as it starts and ends (here and in setup.py): pip shows a
backend's output only with -v (`pip install -v ./python-shim`), and a build of about 2 minutes
that says nothing looks like a hang."""
import os
import shutil
import sys
import time
from pathlib import Path

from setuptools import build_meta as _orig
from setuptools.build_meta import *  # noqa: F401,F403 (the other hooks, unchanged)

HERE = Path(__file__).resolve().parents[1]
HEADERS = ("cuda.h", "cuda_runtime_api.h", "cublas_v2.h")


def _pins():
    """{group: [requirement]} from tools/cuda-pins.txt (the repository's, or the sdist's copy)."""
    for root in (HERE.parent, HERE / "libcudaload-src"):
        f = root / "tools" / "cuda-pins.txt"
        if f.is_file():
            groups, group = {}, None
            for line in f.read_text().splitlines():
                line = line.strip()
                if line.startswith("# [") and line.endswith("]"):
                    group = line[3:-1]
                elif line and not line.startswith("#") and group:
                    groups.setdefault(group, []).append(line)
            return groups
    return {}


def _system_headers():
    cands = [os.environ.get("CUDA_INC")] if os.environ.get("CUDA_INC") else []
    cands += [os.path.join(os.environ[v], "include") for v in ("CUDA_HOME", "CUDA_PATH") if os.environ.get(v)]
    cands.append("/usr/local/cuda/include")
    return any(all(os.path.isfile(os.path.join(c, h)) for h in HEADERS) for c in cands)


def _system_nvcc():
    if "CUDALOAD_NVCC" in os.environ:  # "" means: no kernels, no nvcc wanted
        return True
    home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    return os.access(os.path.join(home, "bin", "nvcc"), os.X_OK) or shutil.which("nvcc") is not None


def cuda_requires():
    """The CUDA wheels this machine's build needs (empty when it has a toolkit)."""
    if os.environ.get("CUDALOAD_PIP_TOOLKIT") == "0":
        return []
    pins = _pins()
    if not _system_headers():
        return [r for g in ("compiler", "headers") for r in pins.get(g, [])]
    if not _system_nvcc():
        return pins.get("compiler", [])
    return []


def progress(msg):
    """One line of the build's progress, on stderr (pip shows it with -v)."""
    print("cudaload: " + msg, file=sys.stderr, flush=True)


def _cuda_requires_said():
    """cuda_requires(), and a line saying what was asked for and why."""
    req = cuda_requires()
    if req:
        missing = "CUDA headers" if not _system_headers() else "nvcc"
        progress("no %s on this machine: the build asks pip for %d pinned CUDA wheels (tools/cuda-pins.txt): %s"
                 % (missing, len(req), " ".join(req)))
    elif os.environ.get("CUDALOAD_PIP_TOOLKIT") == "0":
        progress("CUDALOAD_PIP_TOOLKIT=0: no CUDA wheels asked for")
    else:
        progress("the CUDA headers%s are on this machine: no CUDA wheels asked for"
                 % ("" if os.environ.get("CUDALOAD_NVCC") == "" else " and nvcc"))
    return req


def _timed(what, hook, *args):
    """hook(*args) between a line as it starts and one as it ends, with the file it made."""
    t = time.time()
    progress("%s ..." % what)
    name = hook(*args)
    f = Path(args[0]) / name
    progress("%s: %s (%.1f MB), %.0f s" % (what, name, f.stat().st_size / 1e6 if f.is_file() else 0, time.time() - t))
    return name


def get_requires_for_build_wheel(config_settings=None):
    return _orig.get_requires_for_build_wheel(config_settings) + _cuda_requires_said()


def get_requires_for_build_editable(config_settings=None):
    return _orig.get_requires_for_build_editable(config_settings) + _cuda_requires_said()


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _timed("building the wheel: libcudaload by its Makefile, then the module cudaload._cudaload",
                  _orig.build_wheel, wheel_directory, config_settings, metadata_directory)


def build_sdist(sdist_directory, config_settings=None):
    return _timed("building the sdist (the library's sources in libcudaload-src/)",
                  _orig.build_sdist, sdist_directory, config_settings)


if hasattr(_orig, "build_editable"):  # (setuptools >= 64; an older one has no editable hook to wrap)
    def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
        return _timed("building the editable wheel: libcudaload by its Makefile, then the module",
                      _orig.build_editable, wheel_directory, config_settings, metadata_directory)
