# SPDX-License-Identifier: Apache-2.0
"""cudaload on a GPU: host buffers, torch and cupy arrays, streams, both backends, odd sizes,
and sharing one libcudart/libcublas with torch. Skipped, with the reason, without a GPU.

Run on the GPU machine (torch and cupy in /opt/torch/.venv, no network):
    tests/python/device-run.sh LOGDIR
or, with cudaload importable (installed, or on PYTHONPATH):
    python -m pytest tests/python -k gpu
torch is imported before cudaload (module top), so cudaload reuses torch's libraries; the
/proc/self/maps checks run in fresh processes, where the import order is exactly controlled.
"""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import gpu_test_modules

np, torch, cupy = gpu_test_modules()  # skips the module without a GPU; torch before cudaload

need_torch = pytest.mark.skipif(torch is None or not torch.cuda.is_available(), reason="torch with CUDA not installed")
need_cupy = pytest.mark.skipif(cupy is None, reason="cupy not installed")
BACKENDS = ["auto", "bundled", "cublas"]


@pytest.fixture(scope="module")
def cl(cudaload_mod):
    return cudaload_mod


@pytest.fixture(params=BACKENDS)
def backend(request, cl):
    if request.param == "bundled" and not cl.KERNELS_BUILT:
        pytest.skip("this cudaload was built without nvcc: no bundled kernels")
    cl.set_backend(request.param)
    yield request.param
    cl.set_backend("auto")


def expect_backend(cl, backend):
    got = cl.last_backend()
    if backend == "auto":
        assert got in ("bundled", "cublas")
        if cl.KERNELS_BUILT:
            assert got == "bundled", "auto should run the bundled kernels on a GPU they have SASS or PTX for"
    else:
        assert got == backend


def ref_gemm(a, b, alpha=1.0, beta=0.0, c=None):
    r = alpha * (a.astype(np.float64) @ b.astype(np.float64))
    if beta:
        r += beta * c.astype(np.float64)
    return r


def assert_gemm_close(got, a, b, ref):
    """|got - ref| within fp32 accumulation error: k * 2^-23 * (|a| @ |b|), plus a little."""
    k = a.shape[1]
    mag = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
    err = np.abs(got.astype(np.float64) - ref)
    bound = (max(k, 1) * 2.0 ** -22 + 1e-6) * (mag + 1e-30) + 1e-30
    worst = float(np.max(err / bound)) if err.size else 0.0
    assert worst <= 1.0, "error %.3g of the allowed fp32 bound (k=%d)" % (worst, k)


RNG = np.random.default_rng(1234)


def rand(*shape):
    return RNG.uniform(-1, 1, size=shape).astype(np.float32)


# ---- host buffers ----------------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 7, 1000, 4097, (1 << 20) + 3])
def test_gpu_host_saxpy(cl, backend, n):
    x, y = rand(n), rand(n)
    want = 1.75 * x.astype(np.float64) + y
    ret = cl.saxpy(1.75, x, y)
    assert ret is y
    np.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-6)
    expect_backend(cl, backend)


SHAPES = [(1, 1, 1), (7, 7, 7), (7, 5, 3), (1, 4097, 1), (4097, 1, 4097), (1000, 1000, 1000), (1, 1000, 7),
          (1000, 1, 1), (4097, 33, 65), (64, 0, 5)]


@pytest.mark.parametrize("m,k,n", SHAPES)
def test_gpu_host_sgemm(cl, backend, m, k, n):
    a, b = rand(m, k), rand(k, n)
    c = cl.sgemm(a, b)
    assert isinstance(c, np.ndarray) and c.shape == (m, n) and c.dtype == np.float32
    assert_gemm_close(c, a, b, ref_gemm(a, b))
    if k:
        expect_backend(cl, backend)


def test_gpu_host_sgemm_alpha_beta_layouts(cl, backend):
    a, b, c0 = rand(33, 17), rand(17, 9), rand(33, 9)
    c = c0.copy()
    assert cl.sgemm(a, b, out=c, alpha=-0.5, beta=2.0) is c
    assert_gemm_close(c, a, b, ref_gemm(a, b, -0.5, 2.0, c0))
    # column-major operands (a.T of a C array) and a column-major out
    at, bt = rand(17, 33), rand(9, 17)
    out = np.asfortranarray(np.zeros((33, 9), np.float32))
    cl.sgemm(at.T, bt.T, out=out)
    assert_gemm_close(out, at.T, bt.T, ref_gemm(at.T, bt.T))
    # padded rows: a view of a wider array
    big = rand(33, 40)
    cl.sgemm(big[:, :17], b, out=c)
    assert_gemm_close(c, big[:, :17], b, ref_gemm(big[:, :17], b))
    # a padded out with beta = 0 (C not read): the parent's elements between its rows keep
    # their values, and the rows get the product (row-major, then column-major padding)
    wide, tall = rand(33, 14), np.asfortranarray(rand(40, 9))
    for parent, view in ((wide, wide[:, :9]), (tall, tall[:33, :])):
        before = parent.copy()
        assert cl.sgemm(a, b, out=view) is view
        assert_gemm_close(view, a, b, ref_gemm(a, b))
        outside = np.ones(parent.shape, bool)
        outside[:33, :9] = False
        np.testing.assert_array_equal(parent[outside], before[outside])


# ---- torch -------------------------------------------------------------------------------------

@need_torch
@pytest.mark.parametrize("n", [1, 7, 1000, 4097, (1 << 22) + 1])
def test_gpu_torch_saxpy_in_place(cl, backend, n):
    x = torch.rand(n, device="cuda") * 2 - 1
    y = torch.rand(n, device="cuda") * 2 - 1
    want = y + 0.625 * x
    ptr = y.data_ptr()
    assert cl.saxpy(0.625, x, y) is y
    torch.cuda.synchronize()
    assert y.data_ptr() == ptr
    torch.testing.assert_close(y, want, rtol=1e-6, atol=1e-6)
    expect_backend(cl, backend)


@need_torch
@pytest.mark.parametrize("m,k,n", SHAPES)
def test_gpu_torch_sgemm_matches_torch_mm(cl, backend, m, k, n):
    torch.backends.cuda.matmul.allow_tf32 = False
    a = torch.rand(m, k, device="cuda") * 2 - 1
    b = torch.rand(k, n, device="cuda") * 2 - 1
    out = torch.full((m, n), float("nan"), device="cuda")
    assert cl.sgemm(a, b, out=out) is out
    torch.cuda.synchronize()
    want = torch.mm(a, b)
    assert_gemm_close(out.cpu().numpy(), a.cpu().numpy(), b.cpu().numpy(), want.double().cpu().numpy())
    fresh = cl.sgemm(a, b)
    assert isinstance(fresh, torch.Tensor) and fresh.device == a.device and fresh.shape == (m, n)
    torch.testing.assert_close(fresh, out, rtol=0, atol=0)


@need_torch
def test_gpu_torch_transposed_and_beta(cl):
    a = torch.rand(40, 30, device="cuda")
    b = torch.rand(50, 40, device="cuda")
    c = torch.rand(30, 50, device="cuda")
    want = 0.5 * torch.mm(a.t(), b.t()) + 3.0 * c
    cl.sgemm(a.t(), b.t(), out=c, alpha=0.5, beta=3.0)  # column-major views, no copy
    torch.testing.assert_close(c, want, rtol=1e-5, atol=1e-5)


@need_torch
def test_gpu_torch_errors(cl):
    x = torch.rand(8, device="cuda")
    with pytest.raises(TypeError, match="dtype <f8"):
        cl.saxpy(1.0, x.double(), x.double())
    with pytest.raises(ValueError, match="not contiguous"):
        cl.saxpy(1.0, x[::2], torch.rand(4, device="cuda"))
    with pytest.raises(ValueError, match="operands mix host buffers and CUDA arrays"):
        cl.saxpy(1.0, x, np.zeros(8, np.float32))
    with pytest.raises(ValueError, match="overlaps"):
        m = torch.rand(8, 8, device="cuda")
        cl.sgemm(m, m, out=m)


@need_torch
def test_gpu_torch_cpu_tensors_are_host_buffers(cl):
    """CPU tensors have no buffer protocol: DLPack on the CPU, copied to the GPU and back."""
    x, y = torch.rand(1000), torch.rand(1000)
    want = y + 2 * x
    cl.saxpy(2.0, x, y)
    torch.testing.assert_close(y, want)
    c = cl.sgemm(torch.rand(5, 6), torch.rand(6, 7))
    assert isinstance(c, torch.Tensor) and c.device.type == "cpu"


class DLPackOnly:
    """Only __dlpack__/__dlpack_device__ of a tensor: the DLPack path, not the CAI one."""

    def __init__(self, t):
        self.t = t

    def __dlpack__(self, stream=None):
        return self.t.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


@need_torch
def test_gpu_torch_through_dlpack(cl, backend):
    x = torch.rand(4097, device="cuda")
    y = torch.rand(4097, device="cuda")
    want = y + 3 * x
    cl.saxpy(3.0, DLPackOnly(x), DLPackOnly(y))
    torch.cuda.synchronize()
    torch.testing.assert_close(y, want)
    a, b = torch.rand(65, 33, device="cuda"), torch.rand(33, 17, device="cuda")
    out = torch.empty(65, 17, device="cuda")
    cl.sgemm(DLPackOnly(a), DLPackOnly(b), out=DLPackOnly(out))
    torch.cuda.synchronize()
    torch.testing.assert_close(out, torch.mm(a, b), rtol=1e-5, atol=1e-5)


@need_torch
def test_gpu_torch_stream_is_used(cl, backend):
    """stream=: the work is queued on that stream. The stream is held busy (torch.cuda._sleep);
    a copy on another non-blocking stream, taken right after the call, still sees the old y;
    once the stream is done, y is right."""
    s, other = torch.cuda.Stream(), torch.cuda.Stream()
    n = 1 << 20
    x = torch.rand(n, device="cuda")
    y = torch.rand(n, device="cuda")
    y0, snap = y.clone(), torch.empty_like(y)  # allocated first: no cudaMalloc while s sleeps
    torch.cuda.synchronize()
    with torch.cuda.stream(s):
        torch.cuda._sleep(200_000_000)  # ~0.1 s of GPU time
    cl.saxpy(2.0, x, y, stream=s)
    with torch.cuda.stream(other):
        snap.copy_(y)
    other.synchronize()
    s.synchronize()
    torch.testing.assert_close(snap, y0, rtol=0, atol=0)
    torch.testing.assert_close(y, y0 + 2 * x)
    # sgemm the same way, the stream given as a raw handle
    a, b = torch.rand(256, 256, device="cuda"), torch.rand(256, 256, device="cuda")
    out, snap = torch.zeros(256, 256, device="cuda"), torch.empty(256, 256, device="cuda")
    torch.cuda.synchronize()
    with torch.cuda.stream(s):
        torch.cuda._sleep(200_000_000)
    cl.sgemm(a, b, out=out, stream=s.cuda_stream)
    with torch.cuda.stream(other):
        snap.copy_(out)
    other.synchronize()
    s.synchronize()
    assert float(snap.abs().max()) == 0.0
    torch.testing.assert_close(out, torch.mm(a, b), rtol=1e-5, atol=1e-5)


class CAIOnStream:
    """A torch tensor's __cuda_array_interface__ (v2, no stream) made v3 with a stream: a
    producer that says its data is being worked on on that stream."""

    def __init__(self, t, stream):
        self.t = t
        self.__cuda_array_interface__ = dict(t.__cuda_array_interface__, version=3, stream=stream)


@need_torch
def test_gpu_cai_stream_is_honoured(cl):
    """No stream=: the work runs on the stream the arrays' CAI names (held busy: a copy on
    another stream still sees the old y). With stream= another one, the CAI stream's pending
    work is waited for first (the result is right although that work was still queued)."""
    s, other = torch.cuda.Stream(), torch.cuda.Stream()
    x = torch.rand(1 << 20, device="cuda")
    y = torch.rand(1 << 20, device="cuda")
    y0, snap = y.clone(), torch.empty_like(y)
    torch.cuda.synchronize()
    with torch.cuda.stream(s):
        torch.cuda._sleep(200_000_000)
    cl.saxpy(2.0, CAIOnStream(x, s.cuda_stream), CAIOnStream(y, s.cuda_stream))
    with torch.cuda.stream(other):
        snap.copy_(y)
    other.synchronize()
    s.synchronize()
    torch.testing.assert_close(snap, y0, rtol=0, atol=0)
    torch.testing.assert_close(y, y0 + 2 * x)
    # the producer's stream s writes x (after a delay); cudaload runs on `other`: it must wait for s
    y0 = y.clone()
    with torch.cuda.stream(s):
        torch.cuda._sleep(100_000_000)
        x.fill_(5.0)
    cl.saxpy(1.0, CAIOnStream(x, s.cuda_stream), CAIOnStream(y, s.cuda_stream), stream=other)
    other.synchronize()
    torch.testing.assert_close(y, y0 + 5.0)


@need_torch
def test_gpu_host_buffers_on_a_stream(cl):
    s = torch.cuda.Stream()
    x, y = rand(4097), rand(4097)
    want = y + 0.5 * x.astype(np.float64)
    cl.saxpy(0.5, x, y, stream=s)
    np.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-6)


# ---- cupy --------------------------------------------------------------------------------------

@need_cupy
@pytest.mark.parametrize("n", [1, 7, 1000, 4097, (1 << 22) + 1])
def test_gpu_cupy_saxpy_in_place(cl, backend, n):
    x = cupy.random.uniform(-1, 1, n, dtype=cupy.float32)
    y = cupy.random.uniform(-1, 1, n, dtype=cupy.float32)
    want = y + 0.625 * x
    ptr = y.data.ptr
    cl.saxpy(0.625, x, y)
    cupy.cuda.runtime.deviceSynchronize()
    assert y.data.ptr == ptr
    cupy.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-6)
    expect_backend(cl, backend)


@need_cupy
@pytest.mark.parametrize("m,k,n", SHAPES)
def test_gpu_cupy_sgemm_matches_cupy(cl, backend, m, k, n):
    a = cupy.random.uniform(-1, 1, (m, k), dtype=cupy.float32)
    b = cupy.random.uniform(-1, 1, (k, n), dtype=cupy.float32)
    out = cl.sgemm(a, b)
    assert isinstance(out, cupy.ndarray) and out.shape == (m, n)
    cupy.cuda.runtime.deviceSynchronize()
    an, bn = cupy.asnumpy(a), cupy.asnumpy(b)
    assert_gemm_close(cupy.asnumpy(out), an, bn, ref_gemm(an, bn))
    assert_gemm_close(cupy.asnumpy(a @ b), an, bn, ref_gemm(an, bn))  # cupy's own, the same bound


@need_cupy
def test_gpu_cupy_stream(cl):
    """CuPy arrays made under a stream carry it (__cuda_array_interface__ v3 "stream"): the
    work runs on it; an explicit stream= works the same."""
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        x = cupy.random.uniform(-1, 1, 4097, dtype=cupy.float32)
        y = cupy.random.uniform(-1, 1, 4097, dtype=cupy.float32)
        want = y + 2 * x
        assert x.__cuda_array_interface__.get("stream") in (s.ptr, None)
        cl.saxpy(2.0, x, y)
        s.synchronize()
        cupy.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-6)
    a = cupy.random.uniform(-1, 1, (100, 50), dtype=cupy.float32)
    b = cupy.random.uniform(-1, 1, (50, 70), dtype=cupy.float32)
    out = cupy.zeros((100, 70), dtype=cupy.float32)
    cl.sgemm(a, b, out=out, stream=s)
    s.synchronize()
    cupy.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-5)


@need_cupy
@need_torch
def test_gpu_cupy_stream_is_used(cl):
    """The cupy stream named by the arrays' CAI is where the work goes (held busy by torch)."""
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        x = cupy.ones(1 << 20, dtype=cupy.float32)
        y = cupy.ones(1 << 20, dtype=cupy.float32)
        cai_stream = x.__cuda_array_interface__.get("stream")  # the current stream when it is read
    s.synchronize()
    if cai_stream != s.ptr:
        pytest.skip("this cupy does not put the stream in __cuda_array_interface__ (CUPY_CUDA_ARRAY_INTERFACE_SYNC=0?)")
    other = cupy.cuda.Stream(non_blocking=True)
    snap = cupy.empty_like(y)  # allocated first: a cudaMalloc while s sleeps could wait for it
    cupy.cuda.runtime.deviceSynchronize()
    with torch.cuda.stream(torch.cuda.ExternalStream(s.ptr)):
        torch.cuda._sleep(200_000_000)
    with s:
        cl.saxpy(2.0, x, y)  # no stream=: the arrays' own
    snap.data.copy_from_device_async(y.data, y.nbytes, stream=other)  # a plain copy on another stream
    other.synchronize()
    s.synchronize()
    assert float(snap.max()) == 1.0 and float(y.min()) == 3.0


# ---- the same libraries as the framework, and the report ----------------------------------------

MAPS = textwrap.dedent(r"""
    import json, os, sys
    first = sys.argv[1]
    if first == "torch":
        import torch
        torch.zeros(1, device="cuda"); torch.mm(torch.ones(2, 2, device="cuda"), torch.ones(2, 2, device="cuda"))
        a = torch.rand(300, 200, device="cuda"); b = torch.rand(200, 100, device="cuda")
        x = torch.rand(1000, device="cuda"); y = torch.rand(1000, device="cuda")
    else:
        import cupy
        cupy.zeros(1); cupy.ones((2, 2), dtype=cupy.float32) @ cupy.ones((2, 2), dtype=cupy.float32)
        a = cupy.random.rand(300, 200, dtype=cupy.float32); b = cupy.random.rand(200, 100, dtype=cupy.float32)
        x = cupy.random.rand(1000, dtype=cupy.float32); y = cupy.random.rand(1000, dtype=cupy.float32)
    def mapped():
        libs = {}
        for line in open("/proc/self/maps"):
            path = line.split()[-1] if len(line.split()) >= 6 else ""
            name = os.path.basename(path)
            for lib in ("libcudart.so", "libcublas.so", "libcublasLt.so"):
                if name.startswith(lib):
                    libs.setdefault(lib, set()).add(os.path.realpath(path))
        return {k: sorted(v) for k, v in libs.items()}
    before = mapped()
    import cudaload
    want_y = y + 1.5 * x
    cudaload.saxpy(1.5, x, y)
    c = cudaload.sgemm(a, b)
    if first == "torch":
        torch.cuda.synchronize()
        err_y = float((y - want_y).abs().max()); err_c = float((c - torch.mm(a, b)).abs().max())
    else:
        cupy.cuda.runtime.deviceSynchronize()
        err_y = float(abs(y - want_y).max()); err_c = float(abs(c - a @ b).max())
    p = cudaload.probe()
    print(json.dumps({"before": before, "after": mapped(), "libraries": p["libraries"], "err_y": err_y, "err_c": err_c}))
""")


def run_maps(framework):
    import cudaload
    pkg_parent = str(Path(cudaload.__file__).resolve().parent.parent)
    env = dict(os.environ)
    env["PYTHONPATH"] = pkg_parent + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    r = subprocess.run([sys.executable, "-c", MAPS, framework], capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


@need_torch
def test_gpu_one_copy_with_torch(cudaload_mod):
    """Imported after torch, cudaload takes torch's libcudart and libcublas (already loaded):
    one copy of each in /proc/self/maps, and its results match torch's."""
    out = run_maps("torch")
    for lib in ("libcudart.so", "libcublas.so", "libcublasLt.so"):
        assert len(out["after"].get(lib, [])) == 1, (lib, out["after"])
        assert out["after"][lib] == out["before"].get(lib), (lib, out["before"], out["after"])
    for name in ("cudart", "cublas"):
        info = out["libraries"][name]
        assert info["already_loaded"] is True and info["source"] == "loaded", (name, info)
        assert os.path.realpath(info["path"]) == out["after"]["lib" + name + ".so"][0], (name, info, out["after"])
    assert out["err_y"] <= 1e-5 and out["err_c"] <= 1e-3, out


@need_cupy
def test_gpu_one_copy_with_cupy(cudaload_mod):
    """After cupy: one copy of each library in /proc/self/maps. A library cupy had loaded is
    reused (reported as already loaded, same file); one it had not is the one libcudaload
    loaded and reports."""
    out = run_maps("cupy")
    for lib in ("libcudart.so", "libcublas.so", "libcublasLt.so"):
        assert len(out["after"].get(lib, [])) == 1, (lib, out["after"])
    for name in ("cudart", "cublas", "cublasLt"):
        info, lib = out["libraries"][name], "lib" + name + ".so"
        if out["before"].get(lib):  # cupy had it: reused
            assert info["already_loaded"] is True and info["source"] == "loaded", (name, info)
            assert out["after"][lib] == out["before"][lib], (name, out["before"], out["after"])
        else:  # cupy had not loaded it: libcudaload's own, found in the search
            assert info["already_loaded"] is False and info["source"] != "loaded", (name, info)
        assert os.path.realpath(info["path"]) == out["after"][lib][0], (name, info, out["after"])
    assert out["err_y"] <= 1e-5 and out["err_c"] <= 1e-3, out


def test_gpu_probe_selftest(cl):
    p = cl.probe(selftest=True)
    assert p["exit_code"] == 0, (p["problems"], p["fixes"])
    assert p["selftest"]["saxpy"]["pass"] and p["selftest"]["sgemm"]["pass"], p["selftest"]
    assert p["devices"] and p["devices_status"] == "CUDALOAD_OK"
    if cl.KERNELS_BUILT:
        assert p["devices"][0]["kernels"] in ("sass", "ptx_jit")


def test_gpu_python_m_cudaload(cl):
    import cudaload
    env = dict(os.environ)
    env["PYTHONPATH"] = str(Path(cudaload.__file__).resolve().parent.parent) + \
        (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    r = subprocess.run([sys.executable, "-m", "cudaload"], capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Self-test" in r.stdout and "Result: ok (exit 0)" in r.stdout, r.stdout
