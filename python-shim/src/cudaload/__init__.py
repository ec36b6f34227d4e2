# SPDX-License-Identifier: Apache-2.0
"""cudaload: the CUDA runtime and cuBLAS, found at import; SAXPY and SGEMM on any float32 array.

At import the embedded libcudaload (cudaload._cudaload) is initialised with this
interpreter's package directories as its search roots: the sys.path entries (the venv's or
the system's site-packages, the user site, PYTHONPATH and `pip install --target` dirs) and
site.getsitepackages(). There it finds the nvidia-* wheels (CUDA 13: nvidia/cu13/lib; CUDA
12: nvidia/cuda_runtime/lib, nvidia/cublas/lib); then conda, CUDA_HOME and the system. A
copy another framework (torch, cupy) has loaded already is reused. Import never fails for
lack of CUDA: the calls that need it raise CudaLoadError subclasses that say what is missing
and the pip command that installs it (libcudaload's advice, worded by the probe's code).
docs/python.md has the whole story.

    probe(selftest=False) -> dict      the report of `python -m cudaload --json` (docs/probe.md)
    library(name) -> dict              one catalogue library ("cudart", "cufft", ...): found,
                                       loaded, why, and its fixes when it failed
    catalogue() -> dict                every library libcudaload knows: SONAMEs, pip packages
    saxpy(a, x, y, *, stream=None)     y = a*x + y, in place
    sgemm(a, b, out=None, alpha=1.0, beta=0.0, *, stream=None) -> out
                                       out = alpha * a @ b + beta * out (row-major)
    set_backend("auto" | "bundled" | "cublas"), last_backend()
    preload(*names) -> list            load those libraries and their dependencies into the process,
                                       for an extension that cannot be relinked (DT_NEEDED, no RPATH)
"""
import json as _json
import os as _os
import site as _site
import sys as _sys

from . import _cudaload

# the embedded libcudaload's version (include/cudaload.h), which setup.py also gives the package's metadata
__version__ = _cudaload.LIBCUDALOAD_VERSION
__all__ = ["probe", "report", "library", "catalogue", "preload", "saxpy", "sgemm", "set_backend", "last_backend",
           "search_roots",
           "get_include", "get_library_dir", "get_cmake_dir", "get_cmake_stubs", "get_cmake_toolkit", "get_pkgconfig_dir",
           "part", "parts", "cuda_root",
           "CudaLoadError",
           "LibraryNotFoundError", "LibraryUnusableError", "NoDriverError", "NoDeviceError", "DriverTooOldError",
           "KernelsUnavailableError", "CudaError"]

# ---- the exception hierarchy -------------------------------------------------------------------


class CudaLoadError(RuntimeError):
    """A call needed CUDA and could not have it. .status is libcudaload's status name
    (e.g. "CUDALOAD_ERROR_NOT_FOUND"), .detail its message (every candidate tried), .library
    the catalogue name of the library that failed ("cudart", "cuda", "cublas") or None, .fixes
    what fixes it (commands in `backquotes`: the pip command of this interpreter), .fix the
    first of them (or None)."""

    def __init__(self, message, status=None, detail=None, fix=None, library=None, fixes=None):
        super().__init__(message)
        self.status, self.detail, self.library = status, detail, library
        self.fixes = list(fixes) if fixes else ([fix] if fix else [])
        self.fix = fix if fix is not None else (self.fixes[0] if self.fixes else None)


class LibraryNotFoundError(CudaLoadError):
    """libcudart or libcuBLAS was found nowhere in the search (CUDALOAD_ERROR_NOT_FOUND)."""


class LibraryUnusableError(CudaLoadError):
    """A library was found but cannot be used: an override names an unusable file, a
    required symbol is missing, cuBLAS is of another CUDA major than the runtime, or every
    copy is below the minimum version asked for (CUDALOAD_MIN_<NAME>)."""


class DriverTooOldError(CudaLoadError):
    """The libraries found need a newer NVIDIA driver than the one installed."""


class NoDeviceError(CudaLoadError):
    """No usable CUDA device (the driver reports none, or hides them)."""


class NoDriverError(NoDeviceError):
    """No NVIDIA driver (libcuda.so.1) could be loaded: no GPU can be used. A NoDeviceError."""


class KernelsUnavailableError(CudaLoadError):
    """The bundled kernels were asked for (backend "bundled") and cannot run here."""


class CudaError(CudaLoadError):
    """A CUDA call failed; the message names the CUDA error."""


_CLASSES = {
    "CUDALOAD_ERROR_NOT_FOUND": LibraryNotFoundError,
    "CUDALOAD_ERROR_OVERRIDE_UNUSABLE": LibraryUnusableError,
    "CUDALOAD_ERROR_SYMBOL_MISSING": LibraryUnusableError,
    "CUDALOAD_ERROR_MAJOR_MISMATCH": LibraryUnusableError,
    "CUDALOAD_ERROR_BELOW_FLOOR": LibraryUnusableError,
    "CUDALOAD_ERROR_NO_DRIVER": NoDriverError,
    "CUDALOAD_ERROR_DRIVER_TOO_OLD": DriverTooOldError,
    "CUDALOAD_ERROR_NO_DEVICE": NoDeviceError,
    "CUDALOAD_ERROR_KERNELS_NOT_BUILT": KernelsUnavailableError,
    "CUDALOAD_ERROR_NO_KERNEL_IMAGE": KernelsUnavailableError,
    "CUDALOAD_ERROR_KERNELS_FILE": KernelsUnavailableError,
    "CUDALOAD_ERROR_CUDA": CudaError,
    # a load asked from a library's constructor or version call that a load of the same thread
    # runs (a callback into Python from such code): no subclass, nothing to install
    "CUDALOAD_ERROR_REENTRANT": CudaLoadError,
}
# What this package uses: the runtime, and cuBLAS for the "cublas" backend. A fix for either
# installs both, of one CUDA major (as the cu12 / cu13 extras do).
_USES = ("cudart", "cublas")


def _fixes_for(status, lib):
    """The fix lines for a failure: libcudaload's advice for the library that failed (worded by
    the probe's code, with this interpreter's pip), or for a driver that shows no device."""
    if status == "CUDALOAD_ERROR_KERNELS_NOT_BUILT":
        return ['cudaload.set_backend("auto") or ("cublas"): this build has no bundled kernels (built without nvcc)']
    if status == "CUDALOAD_ERROR_KERNELS_FILE":
        return ["%s -m pip install --force-reinstall --no-deps cudaload==%s: the package's lib/libcudaload.a, which "
                "holds the bundled kernels, is missing or of another build" % (_sys.executable, __version__),
                'cudaload.set_backend("auto") or ("cublas") in the meantime']
    if lib:
        return _cudaload._fixes(_USES if lib in _USES else (lib,), False, _sys.executable)
    if status == "CUDALOAD_ERROR_NO_DEVICE":
        return _cudaload._fixes((), True, _sys.executable)
    return []


def _raise(err):
    """StatusError(status, detail, library) from the extension -> the documented exception."""
    code, detail, lib = (tuple(err.args) + (None, None))[:3]
    name, what = _cudaload._status_name(code)
    # the caller's arguments (operands or a stream of two devices included): ValueError
    if name in ("CUDALOAD_ERROR_INVALID_ARGUMENT", "CUDALOAD_ERROR_INVALID_OPTION", "CUDALOAD_ERROR_DEVICE_MISMATCH"):
        raise ValueError("%s: %s" % (what, detail)) from None
    fixes = _fixes_for(name, lib)
    msg = "%s (%s)\n%s" % (what, name, detail)
    if lib and lib != "cuda" and _cudaload._library("cuda")["status"] not in ("loaded", "found"):
        driver = catalogue()["cuda"]["sonames"][0]
        msg += "\nno NVIDIA driver (%s) either: a GPU also needs the driver" % driver
    msg += "".join("\nfix: " + f for f in fixes)
    raise _CLASSES.get(name, CudaLoadError)(msg, status=name, detail=detail, library=lib, fixes=fixes) from None


# ---- init at import ------------------------------------------------------------------------------


# ---- for extension builders: cudaload as a build requirement (docs/python.md) -------------------
# The package carries libcudaload's public headers, libcudaload.a and the stub archives (their
# API hidden), pkg-config modules and the CMake package; `python -m cudaload --cflags` etc.


def _dev_dir(*parts):
    path = _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), *parts)
    if not _os.path.isdir(path):  # a build without the development tree (setup.py's dev-tree step)
        raise FileNotFoundError("cudaload %s: %s is missing from this installation" % (__version__, path))
    return path


def get_include():
    """The directory of cudaload.h, cudaload_tables.h, cudaload_stubs.h and the table headers
    (cudaload_cudart.h, ...). The table headers include the CUDA headers (cuda.h, ...), which
    come from the builder's toolkit: nvcc adds them, a C compiler needs -I<toolkit>/include."""
    return _dev_dir("include")


def get_library_dir():
    """The directory of libcudaload.a and the stub archives libcudaload-<lib>.a (cudart, cufft,
    cublas, ...: docs/stubs.md), position independent, their API hidden: a module that links
    them exports none of it. Link a stub before libcudaload.a, then -ldl -lpthread."""
    return _dev_dir("lib")


def get_cmake_dir():
    """The directory of cudaloadConfig.cmake: CMAKE_PREFIX_PATH or cudaload_DIR for
    find_package(cudaload CONFIG) (targets cudaload::static, cudaload::stub_<lib>).
    scikit-build-core finds it by itself (the package's cmake.prefix entry point)."""
    return _dev_dir("lib", "cmake", "cudaload")


def get_cmake_stubs():
    """cudaload-cuda-stubs.cmake: given as -DCMAKE_PROJECT_TOP_LEVEL_INCLUDES=<it> (CMake 3.24+;
    scikit-build-core: -Ccmake.define.CMAKE_PROJECT_TOP_LEVEL_INCLUDES=<it>), it switches an
    unchanged project's find_package(CUDAToolkit) targets (CUDA::cudart, CUDA::cufft, ...) and
    its CUDA runtime to the stub archives: the result needs no CUDA library (docs/stubs.md)."""
    path = _os.path.join(get_cmake_dir(), "cudaload-cuda-stubs.cmake")
    if not _os.path.isfile(path):
        raise FileNotFoundError("cudaload %s: %s is missing from this installation" % (__version__, path))
    return path


def get_cmake_toolkit():
    """cudaload-cuda-toolkit.cmake: given as -DCMAKE_PROJECT_TOP_LEVEL_INCLUDES=<it> (CMake 3.24+)
    or -DCMAKE_TOOLCHAIN_FILE=<it>, it makes enable_language(CUDA) and find_package(CUDAToolkit)
    use the toolkit cuda_root() answers: the nvcc, headers and libraries of pip's CUDA wheels
    (cuda-toolkit[nvcc,...]) with no system toolkit (docs/toolkit.md). It combines with
    get_cmake_stubs(): list both, the toolkit's first."""
    path = _os.path.join(get_cmake_dir(), "cudaload-cuda-toolkit.cmake")
    if not _os.path.isfile(path):
        raise FileNotFoundError("cudaload %s: %s is missing from this installation" % (__version__, path))
    return path


def get_pkgconfig_dir():
    """The directory of cudaload.pc (the archive) and cudaload-<lib>.pc (a stub and the
    archive): PKG_CONFIG_PATH. Every path in them is relative to the .pc file."""
    return _dev_dir("lib", "pkgconfig")


def search_roots():
    """The directories handed to libcudaload as caller roots, in order: the sys.path
    entries that are directories (the interpreter's import order: PYTHONPATH and --target
    dirs, site-packages, the user site), then site.getsitepackages() and the user site when
    not on sys.path. Left out: the script's directory or the current directory (sys.path[0],
    unless -P/safe_path), relative entries, the standard library (lib-dynload too), zip files."""
    import sysconfig

    stdlib = {_os.path.realpath(p) for p in (sysconfig.get_paths().get("stdlib"), sysconfig.get_paths().get("platstdlib"))
              if p}
    entries = list(_sys.path)
    if entries and not getattr(_sys.flags, "safe_path", False):
        entries = entries[1:]  # the script's directory, or '' / the cwd for -c and -m
    try:
        entries += list(_site.getsitepackages())
    except AttributeError:  # some embedded interpreters' site has none
        pass
    if _site.ENABLE_USER_SITE:
        entries.append(_site.getusersitepackages())
    cwd = _os.path.realpath(_os.getcwd()) if _os.path.isdir(".") else None
    out, seen = [], set()
    for p in entries:
        if not isinstance(p, str) or not _os.path.isabs(p) or not _os.path.isdir(p):
            continue
        real = _os.path.realpath(p)
        in_stdlib = any(real == d or real.startswith(d + _os.sep) for d in stdlib) and \
            not any(part in ("site-packages", "dist-packages") for part in real.split(_os.sep))
        if real in seen or in_stdlib or real == cwd:
            continue
        seen.add(real)
        out.append(p)
    return out


_init_status, _init_message = _cudaload._init(search_roots())
KERNELS_BUILT = bool(_cudaload.KERNELS_BUILT)

# ---- the API -------------------------------------------------------------------------------------


def report(json=False, selftest=True, color=False):
    """The probe's report as text (as `python -m cudaload` prints it) or a JSON string
    (--json), and its exit code: (text, code). Loads cuBLAS (to report on it); selftest runs SAXPY/SGEMM on the GPU.
    Its commands are this interpreter's (`<python> -m pip`, `python -m cudaload`). An invalid
    CUDALOAD_* value gives exit code 4 and the reason as the report's problem."""
    return _cudaload._report(bool(json), bool(selftest), bool(color), _sys.executable)


def part(name):
    """A toolkit part that is not a shared library (parts() lists them: nvcc, ptxas, cicc,
    cudadevrt, cudart_static, libdevice, nvshmem_device, ...), searched in the libraries' order
    from this interpreter's package directories, then PATH (programs) and /usr/local/cuda: a dict
    with status, path, source, major, cuda_version (nvcc's release), pip_packages and every
    candidate with its reason code (docs/toolkit.md). ValueError for an unknown name."""
    try:
        return _cudaload._part(str(name))
    except _cudaload.StatusError as e:
        _raise(e)


def parts():
    """The names of the toolkit parts the catalogue knows, in order."""
    return _cudaload._part_names()


def cuda_root(dir=None):
    """A CUDA toolkit root for nvcc, CMake and Makefiles (CUDA_HOME, CUDAToolkit_ROOT): a system
    or conda toolkit as it lies, or for pip's CUDA wheels (nvidia-cuda-nvcc, nvidia-cuda-runtime,
    ...) a tree of links made under dir (default: a cache directory) that nvcc and CMake take as a
    toolkit. Every part comes from the root where nvcc is, and the runtime headers must be nvcc's
    release; otherwise LibraryNotFoundError (a part missing: each, with the pip package that has
    it) or CudaLoadError (MAJOR_MISMATCH: headers of another release than nvcc's)."""
    try:
        return _cudaload._toolkit_root(None if dir is None else _os.fspath(dir))
    except _cudaload.StatusError as e:
        _raise(e)


def library(name):
    """What libcudaload found for the catalogue library called name ("cudart", "cublas", "cufft",
    "nccl", ...; catalogue() lists them), searching for it, and loading it with its
    dependencies, on first ask: a dict with the keys of a library in probe()["libraries"]
    (docs/probe.md): status ("loaded", "found", "not_found", "error"), status_code, soname,
    major, source, already_loaded, branch (the driver's), path, version, candidates (each
    with path, source, result, status_code, reason_code, reason) and fixes (libcudaload's
    advice when it failed, as data: kind, major, branch, packages, requirements, setting).
    ValueError for a name the catalogue does not have, or an invalid CUDALOAD_* value."""
    try:
        return _cudaload._library(str(name))
    except _cudaload.StatusError as e:
        _raise(e)


def preload(*names):
    """For a prebuilt extension that cannot be relinked: one whose DT_NEEDED names CUDA libraries
    (libcublas.so.13, libcudnn.so.9) with no RPATH into the nvidia directories, which otherwise
    imports only with LD_LIBRARY_PATH set or after another framework loaded them. Loads each
    named catalogue library ("cublas", "cudnn", "cufft", ...; catalogue() lists them) with the
    closure of its dependencies, dependencies first (cuBLASLt before cuBLAS, nvJitLink before
    cuSPARSE, cuDNN's sub-libraries after cuDNN), each library with its dependencies from the one
    place the search chose, into the global scope; an extension imported afterwards binds to
    these copies. Call it before importing that extension.

    Returns what it loaded, in order (each file once): a list of dicts with name (the catalogue
    name, or a sub-library's file name), path and source ("pip", "conda", "cuda_home", "system",
    "loaded": a copy the process had already). Raises the package's exceptions with the fix
    (LibraryNotFoundError, DriverTooOldError, ...) for the first library that cannot be loaded,
    and ValueError for a name the catalogue does not have."""
    if not names:
        raise ValueError("cudaload.preload: name the libraries to load (e.g. preload(\"cublas\", \"cudnn\"))")
    loaded, seen = [], set()
    for name in names:
        try:
            got = _cudaload._preload(str(name))
        except _cudaload.StatusError as e:
            _raise(e)
        for lib, path, source in got:
            if path not in seen:
                seen.add(path)
                loaded.append({"name": lib, "path": path, "source": source})
    return loaded


def library_dirs(*names):
    """The directories of the copies the search chooses for the named libraries and their
    dependencies (every library it can find when no name is given), in the order found, each once:
    what LD_LIBRARY_PATH needs for another program to load the same copies (python -m cudaload
    env). Finds without loading. Raises LibraryNotFoundError (with the fix) for a named library
    that is found nowhere, ValueError for a name the catalogue does not have."""
    rows = catalogue()
    for n in names:
        if n not in rows:
            raise ValueError("%r is not a library of the catalogue (cudaload.catalogue() lists them)" % (n,))
    todo = list(names) if names else [n for n, r in rows.items() if not r["driver_like"]]
    dirs, done = [], set()
    while todo:
        name = todo.pop(0)
        if name in done:
            continue
        done.add(name)
        path = _cudaload._find(name)
        if path is None:
            if names and name in names:
                try:  # found nowhere: its load fails too, and says why with the fix
                    _cudaload._preload(name)
                except _cudaload.StatusError as e:
                    _raise(e)
            continue  # an optional dependency that is not there, or (no names) a library not installed
        d = _os.path.dirname(path)
        if d not in dirs:
            dirs.append(d)
        if names:
            todo += [x for x in rows[name]["deps"] + rows[name]["optional_deps"] if x not in done]
    return dirs


def catalogue():
    """Every library libcudaload knows, by name, in its catalogue's order: a dict of dicts with
    id, name, driver_like, majors (the CUDA majors it has files for, newest first), and per
    major (the same order) sonames, wheel_dirs and pip_packages; deps, optional_deps, header
    and env_name (its exact-file variable, CUDALOAD_<NAME>_PATH). Searches nothing."""
    return {row["name"]: row for row in _cudaload._catalogue()}


def probe(selftest=False):
    """What libcudaload searched, found and took, as a dict: the schema of
    `python -m cudaload --json` (docs/probe.md). selftest=True also runs the SAXPY/SGEMM
    self-test when a GPU is there."""
    text, _ = report(json=True, selftest=selftest)
    return _json.loads(text)


_BACKENDS = {"auto": 0, "bundled": 1, "cublas": 2}


def set_backend(backend):
    """Which implementation runs saxpy/sgemm, for the whole process: "auto" (the bundled
    kernels when they run on this GPU, else cuBLAS), "bundled" or "cublas". The environment
    variable CUDALOAD_BACKEND sets it too."""
    if backend not in _BACKENDS:
        raise ValueError("backend must be one of %s, not %r" % (", ".join(_BACKENDS), backend))
    try:
        _cudaload._set_backend(_BACKENDS[backend])
    except _cudaload.StatusError as e:
        _raise(e)


def last_backend():
    """The backend the calling thread's last saxpy/sgemm ran on: "bundled" or "cublas"."""
    return {v: k for k, v in _BACKENDS.items()}[_cudaload._last_backend()]


# saxpy and sgemm are the extension's own functions (no Python frame per call): a plain CUDA
# torch.Tensor is read through its C methods, anything else by __cuda_array_interface__, the
# buffer protocol or DLPack (_arrays.c). Off the fast path they call back here: _raise for a
# failure (the documented exception, with its fixes), _sgemm_out for sgemm(out=None).
saxpy = _cudaload.saxpy
sgemm = _cudaload.sgemm
_stream_handle = _cudaload._stream_handle  # stream= as they read it (an int handle, a stream object)


def _shape(obj):
    shape = getattr(obj, "shape", None)
    if shape is None and hasattr(obj, "__cuda_array_interface__"):
        shape = obj.__cuda_array_interface__["shape"]
    if shape is None:
        try:
            shape = memoryview(obj).shape
        except TypeError:
            raise TypeError("sgemm: cannot tell the shape of %s: pass out=" % type(obj).__name__) from None
    return tuple(int(s) for s in shape)


def _new_like(a, m, n):
    """An uninitialised float32 (m, n) array of a's kind: torch, cupy, numpy (or a
    memoryview when numpy is not installed)."""
    mod = type(a).__module__.split(".")[0]
    if mod == "torch":
        import torch
        return torch.empty((m, n), dtype=torch.float32, device=a.device)
    if mod == "cupy":
        import cupy
        with cupy.cuda.Device(a.device.id):
            return cupy.empty((m, n), dtype=cupy.float32)
    if hasattr(a, "__cuda_array_interface__") or hasattr(a, "__dlpack__") and not _is_buffer(a):
        raise TypeError("sgemm: out=None allocates numpy, torch or cupy arrays only: pass out= for a %s"
                        % type(a).__name__)
    try:
        import numpy
    except ImportError:
        return memoryview(bytearray(4 * m * n)).cast("f", (m, n))
    return numpy.empty((m, n), dtype=numpy.float32)


def _is_buffer(obj):
    try:
        memoryview(obj)
        return True
    except TypeError:
        return False


def _sgemm_out(a, b, beta):
    """sgemm(out=None): a new (m, n) float32 array of a's kind."""
    if beta != 0:
        raise ValueError("sgemm: beta != 0 reads out: pass out=")
    sa, sb = _shape(a), _shape(b)
    if len(sa) != 2 or len(sb) != 2:
        raise ValueError("sgemm: a and b must be matrices (2-D), got shapes %s and %s" % (sa, sb))
    return _new_like(a, sa[0], sb[1])


_cudaload._set_hooks(_raise, _sgemm_out)
