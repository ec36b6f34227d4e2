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
headers, saying so)."""
import os
import shutil
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


def get_requires_for_build_wheel(config_settings=None):
    return _orig.get_requires_for_build_wheel(config_settings) + cuda_requires()


def get_requires_for_build_editable(config_settings=None):
    return _orig.get_requires_for_build_editable(config_settings) + cuda_requires()
