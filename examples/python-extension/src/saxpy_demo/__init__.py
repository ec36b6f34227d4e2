# SPDX-License-Identifier: Apache-2.0
"""saxpy_demo: a C extension that embeds libcudaload and finds CUDA wherever pip put it.

    >>> import array, saxpy_demo
    >>> x = array.array("f", [1, 2, 3]); y = array.array("f", [10, 20, 30])
    >>> saxpy_demo.saxpy(2.0, x, y)      # y[:] = 2 * x + y on the GPU
    'bundled'
    >>> y
    array('f', [12.0, 24.0, 36.0])
    >>> saxpy_demo.scale(0.5, y)         # y[:] *= 0.5 by this module's own kernel (nvcc)
    >>> saxpy_demo.fft_roundtrip(y)      # cuFFT forward + inverse: the max error
    2.384185791015625e-07
    >>> saxpy_demo.library_info()["cudart"]["path"]
    '.../site-packages/nvidia/cu13/lib/libcudart.so.13'

Importing never fails for want of CUDA: `status` holds what cudaload_init() returned, and
saxpy() raises CudaloadError (with .status and libcudaload's full report) when CUDA is not
usable. library_info() says where each library came from, or why none was taken.
"""

import os
import site
import sys
import sysconfig

from ._saxpy import CudaloadError, cudaload_version, fft_roundtrip, library_info, saxpy, scale
from . import _saxpy

__all__ = ["CudaloadError", "cudaload_version", "fft_roundtrip", "library_info", "roots", "saxpy", "scale", "status"]


def _search_roots():
    """The directories Python imports from, in import order: sys.path, then the site
    directories it may lack. libcudaload looks in each for the nvidia wheels' layouts
    (nvidia/cu13/lib, nvidia/cuda_runtime/lib, nvidia/cublas/lib). Only absolute, existing
    directories: never the script's directory or the current directory (sys.path[0], where
    `python script.py`, `-c` and `-m` put them, is skipped unless -P/safe_path). The standard
    library's own directories are left out (no wheel installs there). A library found here is
    trusted no more than the Python code Python already imports from the same directories."""
    stdlib = {os.path.realpath(p) for p in (sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib")) if p}
    candidates = list(sys.path)
    if candidates and not getattr(sys.flags, "safe_path", False):
        candidates = candidates[1:]  # the script's directory, or '' / the cwd for -c and -m
    try:
        candidates += site.getsitepackages()
    except AttributeError:  # an old virtualenv's site.py
        pass
    if site.ENABLE_USER_SITE:
        candidates.append(site.getusersitepackages())
    cwd = os.path.realpath(os.getcwd()) if os.path.isdir(".") else None
    seen, out = set(), []
    for p in candidates:
        if not isinstance(p, str) or not os.path.isabs(p) or not os.path.isdir(p):
            continue
        real = os.path.realpath(p)
        if real in seen or real == cwd or real in stdlib or os.path.basename(real) == "lib-dynload":
            continue
        seen.add(real)
        out.append(p)
    return out


roots = _search_roots()
#: the status name cudaload_init() returned: "CUDALOAD_OK", "CUDALOAD_ERROR_NO_DRIVER", ...
status = _saxpy._init(roots)
