# SPDX-License-Identifier: Apache-2.0
"""cudaload's argument checking, in this process: every wrong operand is a TypeError or a
ValueError that gives the reason, found before any CUDA call (so these run without a GPU).

Device operands are described by __cuda_array_interface__ dicts: the extension's parser reads
the dict (shape, typestr, strides, data, stream) and refuses it before touching the pointer,
so plain objects carrying a CAI dict exercise the same code path torch and cupy arrays take.
"""
import array
import sys

import pytest

np = pytest.importorskip("numpy")


class CAI:
    """An object exposing a CUDA array interface dict (never dereferenced by these tests)."""

    def __init__(self, shape, typestr="<f4", strides=None, ptr=0x7F0000000000, readonly=False, **extra):
        self.__cuda_array_interface__ = dict(shape=tuple(shape), typestr=typestr, strides=strides,
                                             data=(ptr, readonly), version=3, **extra)


def raises(exc, fn, match):
    with pytest.raises(exc) as e:
        fn()
    assert match in str(e.value), str(e.value)
    return e.value


def test_exception_hierarchy(cudaload_mod):
    c = cudaload_mod
    assert issubclass(c.CudaLoadError, RuntimeError)
    for sub in (c.LibraryNotFoundError, c.LibraryUnusableError, c.DriverTooOldError, c.NoDeviceError,
                c.KernelsUnavailableError, c.CudaError):
        assert issubclass(sub, c.CudaLoadError)
    assert issubclass(c.NoDriverError, c.NoDeviceError)
    assert c.__version__ == c._cudaload.LIBCUDALOAD_VERSION


def test_host_dtype(cudaload_mod):
    y = np.zeros(4, np.float32)
    raises(TypeError, lambda: cudaload_mod.saxpy(1.0, np.zeros(4, np.float64), y), "x: the buffer has format 'd'")
    raises(TypeError, lambda: cudaload_mod.saxpy(1.0, y, np.zeros(4, np.int32)), "y: the buffer has format 'i'")
    raises(TypeError, lambda: cudaload_mod.saxpy(1.0, y, bytearray(16)), "float32 ('f') is needed")
    raises(TypeError, lambda: cudaload_mod.saxpy(1.0, [1.0, 2.0], y), "x: expected a float32 host buffer")
    raises(TypeError, lambda: cudaload_mod.sgemm(np.zeros((2, 2), np.float16), np.zeros((2, 2), np.float32)),
           "a: the buffer has format 'e'")


def test_host_shapes(cudaload_mod):
    f = np.float32
    raises(ValueError, lambda: cudaload_mod.saxpy(1.0, np.zeros(3, f), np.zeros(4, f)),
           "x and y have different shapes (3,) and (4,)")
    raises(ValueError, lambda: cudaload_mod.sgemm(np.zeros((2, 3), f), np.zeros((4, 2), f)),
           "shapes do not match: a (2, 3) @ b (4, 2)")
    raises(ValueError, lambda: cudaload_mod.sgemm(np.zeros((2, 3), f), np.zeros((3, 2), f), out=np.zeros((2, 3), f)),
           "-> out (2, 3)")
    raises(ValueError, lambda: cudaload_mod.sgemm(np.zeros(3, f), np.zeros((3, 2), f), out=np.zeros((1, 2), f)),
           "a has 1 dimensions: matrices (2-D) are needed")
    raises(ValueError, lambda: cudaload_mod.sgemm(np.zeros(3, f), np.zeros((3, 2), f)), "must be matrices")
    raises(ValueError, lambda: cudaload_mod.sgemm(np.zeros((2, 3), f), np.zeros((3, 2), f), beta=1.0),
           "beta != 0 reads out: pass out=")


def test_host_layout_and_readonly(cudaload_mod):
    f = np.float32
    x = np.zeros(8, f)
    raises(ValueError, lambda: cudaload_mod.saxpy(1.0, x[::2], np.zeros(4, f)), "x is not contiguous")
    ro = np.zeros(8, f)
    ro.flags.writeable = False
    raises(ValueError, lambda: cudaload_mod.saxpy(1.0, x, ro), "y is read-only")
    m = np.zeros((4, 6), f)
    raises(ValueError, lambda: cudaload_mod.sgemm(m[:, ::2], np.zeros((3, 2), f)), "a: strides (6, 2) elements")
    # one stride 1, the other padded: accepted by the checks (refused later only for lack of CUDA)
    assert not m[:, :3].flags.c_contiguous


def test_mixed_host_and_device(cudaload_mod):
    raises(ValueError, lambda: cudaload_mod.saxpy(1.0, np.zeros(4, np.float32), CAI((4,))),
           "operands mix host buffers and CUDA arrays")


def test_device_checks(cudaload_mod):
    c = cudaload_mod
    raises(TypeError, lambda: c.saxpy(1.0, CAI((4,), "<f8"), CAI((4,))), "x: the CUDA array has dtype <f8")
    raises(ValueError, lambda: c.saxpy(1.0, CAI((4,)), CAI((5,))), "different shapes (4,) and (5,)")
    raises(ValueError, lambda: c.saxpy(1.0, CAI((4,), strides=(8,)), CAI((4,))), "x is not contiguous")
    raises(ValueError, lambda: c.saxpy(1.0, CAI((4,)), CAI((4,), readonly=True)), "y is read-only")
    raises(ValueError, lambda: c.saxpy(1.0, CAI((4,)), CAI((4,), stream=0)), "stream 0 is disallowed")
    raises(ValueError, lambda: c.saxpy(1.0, CAI((4,), strides=(6,)), CAI((4,))), "not a whole number of float32")
    raises(ValueError, lambda: c.saxpy(1.0, CAI((4,), mask=object()), CAI((4,))), "masked CUDA arrays")
    raises(ValueError, lambda: c.sgemm(CAI((2, 3)), CAI((2, 3)), out=CAI((2, 3))), "shapes do not match")
    raises(ValueError, lambda: c.sgemm(CAI((4, 4), strides=(32, 8)), CAI((4, 4)), out=CAI((4, 4))),
           "a: strides (8, 2) elements")
    p = 0x7F0000000000
    raises(ValueError, lambda: c.sgemm(CAI((4, 4), ptr=p), CAI((4, 4), ptr=p + 4096), out=CAI((4, 4), ptr=p + 16)),
           "out overlaps a in memory")
    raises(TypeError, lambda: c.sgemm(CAI((2, 2)), CAI((2, 2))), "out=None allocates numpy, torch or cupy arrays only")


def test_stream_argument(cudaload_mod):
    raises(TypeError, lambda: cudaload_mod.saxpy(1.0, CAI((4,)), CAI((4,)), stream="s"), "stream must be an int")

    class S:
        cuda_stream = 5

    assert cudaload_mod._stream_handle(S()) == 5
    assert cudaload_mod._stream_handle(7) == 7

    class P:
        def __cuda_stream__(self):
            return (0, 9)

    assert cudaload_mod._stream_handle(P()) == 9


def test_backend_names(cudaload_mod):
    raises(ValueError, lambda: cudaload_mod.set_backend("fast"), "backend must be one of auto, bundled, cublas")


def test_search_roots_are_this_interpreters(cudaload_mod):
    roots = cudaload_mod.search_roots()
    import site
    import sysconfig

    purelib = sysconfig.get_paths()["purelib"]
    if purelib in sys.path:
        assert purelib in roots, roots
    stdlib = sysconfig.get_paths()["stdlib"]
    assert not [r for r in roots if r.startswith(stdlib) and "site-packages" not in r], roots
    assert all(r.startswith("/") for r in roots)
    import os
    assert os.getcwd() not in roots or os.getcwd() in site.getsitepackages()


def test_library_fields_are_the_probes(cudaload_mod):
    """cudaload.library() gives a library as the probe's JSON does (one field list); an unknown
    name is a ValueError naming the known ones; the catalogue lists the historic four first."""
    p = cudaload_mod.probe()
    lib = cudaload_mod.library("cudart")
    assert set(lib) == set(p["libraries"]["cudart"]), (lib, p["libraries"]["cudart"])
    assert lib["status"] == p["libraries"]["cudart"]["status"] and lib["path"] == p["libraries"]["cudart"]["path"]
    with pytest.raises(ValueError, match="cufft"):
        cudaload_mod.library("no-such-library")
    cat = cudaload_mod.catalogue()
    assert list(cat)[:4] == ["cuda", "cudart", "cublasLt", "cublas"] and cat["cufft"]["env_name"] == "CUDALOAD_CUFFT_PATH"


def test_no_cuda_call_without_cuda_is_documented_error(cudaload_mod):
    """Whatever this machine has, a valid call either works or raises a CudaLoadError."""
    x = array.array("f", [1.0, 2.0])
    y = array.array("f", [0.5, 0.5])
    try:
        cudaload_mod.saxpy(2.0, x, y)
    except cudaload_mod.CudaLoadError as e:
        assert e.status and e.status.startswith("CUDALOAD_ERROR_"), e.status
        assert str(e)
        return
    assert list(y) == [2.5, 4.5]


# ---- _init runs once, whatever the threads ----------------------------------------------------

# The extension loaded by itself (the package's import would call _init first), then _init
# called from many threads at once while cudaload_init is slow (the fake driver's
# cuDriverGetVersion sleeps). Each thread passes its own roots object, which records being
# read: the body that reads the roots, calls cudaload_init and keeps its message must run in
# one thread only, and every thread must get that one result.
INIT_RACE = r"""
import importlib.util, json, os, sys, threading, time
spec = importlib.util.spec_from_file_location("cudaload._cudaload", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
read = []

class Roots:
    def __init__(self, i):
        self.i = i

    def __iter__(self):
        read.append(self.i)
        return iter([])

def race(n):
    barrier = threading.Barrier(n)
    results = [None] * n

    def run(i):
        barrier.wait()
        results[i] = m._init(Roots(i))

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results

out = {}
if sys.argv[2] == "threads":
    out["results"] = race(16)
    out["read"] = list(read)
    out["again"] = m._init(Roots(99))        # later calls: the same result, roots not read
    out["read_after"] = list(read)
else:
    # fork while another thread is in _init's body: the child must not wait for a thread it
    # does not have
    t = threading.Thread(target=lambda: m._init(Roots(0)))
    t.start()
    time.sleep(0.3)
    pid = os.fork()
    if pid == 0:
        r = m._init(Roots(1))
        os._exit(0 if isinstance(r, tuple) and 1 in read else 3)
    deadline = time.time() + 20
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done or time.time() > deadline:
            break
        time.sleep(0.05)
    if not done:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    out["child"] = os.waitstatus_to_exitcode(status) if done else "hung"
    t.join()
print(json.dumps(out))
"""


def run_init_race(cudaload_mod, mode):
    import os
    import subprocess
    from pathlib import Path

    from conftest import clean_env

    b = os.environ.get("CUDALOAD_TEST_BUILD")
    fake = Path(b) / "fake" / "libcuda.so.1" if b else None
    if not fake or not fake.exists():
        pytest.skip("the fake libcuda.so.1 of the C tests is not built (make check-python builds it)")
    env = clean_env(CUDALOAD_DRIVER_PATH=fake, FAKE_CUDA_DRIVER_GET_VERSION_DELAY_MS=1000, CUDALOAD_SOURCES="caller")
    r = subprocess.run([sys.executable, "-c", INIT_RACE, cudaload_mod._cudaload.__file__, mode], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    import json
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_init_runs_once_across_threads(cudaload_mod):
    out = run_init_race(cudaload_mod, "threads")
    results = out["results"]
    assert len(out["read"]) == 1, "the body of _init ran in %d threads (roots read: %s)" % (len(out["read"]), out["read"])
    assert all(r == results[0] for r in results), results
    status, message = results[0]
    assert cudaload_mod._cudaload._status_name(status)[0] == "CUDALOAD_ERROR_NOT_FOUND", results[0]
    assert message, results[0]
    assert out["again"] == results[0] and out["read_after"] == out["read"], out


def test_init_after_fork_during_init(cudaload_mod):
    out = run_init_race(cudaload_mod, "fork")
    assert out["child"] == 0, out
