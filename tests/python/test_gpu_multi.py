# SPDX-License-Identifier: Apache-2.0
"""cudaload on two GPUs: torch and cupy arrays on device 1 worked on in place, on their own
device and stream, whatever device is current; operands on two devices refused. Skipped, with
the reason, without two GPUs (CUDA_VISIBLE_DEVICES=1 leaves one).

Run on a machine with two GPUs with the other GPU tests: tests/python/device-run.sh LOGDIR.
"""
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import gpu_test_modules

np, torch, cupy = gpu_test_modules()  # skips the module without a GPU; torch before cudaload

if torch is None or not torch.cuda.is_available():
    pytest.skip("torch with CUDA not installed", allow_module_level=True)
if torch.cuda.device_count() < 2:
    pytest.skip("needs two GPUs; %d visible (CUDA_VISIBLE_DEVICES=%s)"
                % (torch.cuda.device_count(), os.environ.get("CUDA_VISIBLE_DEVICES", "(unset)")),
                allow_module_level=True)

need_cupy = pytest.mark.skipif(cupy is None, reason="cupy not installed")


@pytest.fixture(scope="module")
def cl(cudaload_mod):
    return cudaload_mod


@pytest.fixture(params=["bundled", "cublas"])
def backend(request, cl):
    if request.param == "bundled" and not cl.KERNELS_BUILT:
        pytest.skip("this cudaload was built without nvcc: no bundled kernels")
    cl.set_backend(request.param)
    yield request.param
    cl.set_backend("auto")


def test_torch_on_device1_while_device0_is_current(cl, backend):
    torch.cuda.set_device(0)
    x = torch.rand(100003, device="cuda:1") * 2 - 1
    y = torch.rand(100003, device="cuda:1") * 2 - 1
    want = (y.double() + 0.75 * x.double()).cpu()
    out = cl.saxpy(0.75, x, y)
    assert out is y and y.device.index == 1
    torch.cuda.synchronize(1)
    assert torch.allclose(y.cpu().double(), want, rtol=1e-6, atol=1e-6)
    assert torch.cuda.current_device() == 0
    assert cl.last_backend() == backend


def test_torch_sgemm_out_none_on_device1(cl, backend):
    torch.cuda.set_device(0)
    a = torch.rand(300, 129, device="cuda:1")
    b = torch.rand(129, 77, device="cuda:1")
    c = cl.sgemm(a, b)
    assert isinstance(c, torch.Tensor) and c.device == a.device and c.shape == (300, 77)
    torch.cuda.synchronize(1)
    ref = a.double() @ b.double()
    assert torch.allclose(c.double(), ref, rtol=1e-5, atol=1e-4)
    assert torch.cuda.current_device() == 0


def test_torch_stream_of_device1(cl, backend):
    """Queued on a stream of device 1, given as stream=: held busy by a sleep kernel, a copy on
    another stream still sees the old values, and after the stream the new ones."""
    torch.cuda.set_device(0)
    s = torch.cuda.Stream(device=1)
    x = torch.ones(1 << 20, device="cuda:1")
    y = torch.zeros(1 << 20, device="cuda:1")
    torch.cuda.synchronize(1)
    with torch.cuda.stream(s):
        torch.cuda._sleep(50_000_000)  # ~tens of ms on device 1's stream s
    cl.saxpy(2.0, x, y, stream=s)
    early = torch.empty_like(y)
    other = torch.cuda.Stream(device=1)
    with torch.cuda.stream(other):
        early.copy_(y)
    other.synchronize()
    s.synchronize()
    assert float(early.sum()) == 0.0, "the call did not wait on its stream"
    assert float(y.min()) == 2.0 and float(y.max()) == 2.0


def test_operands_on_two_devices_refused(cl):
    x = torch.rand(64, device="cuda:0")
    y = torch.rand(64, device="cuda:1")
    with pytest.raises(ValueError, match="different devices"):
        cl.saxpy(1.0, x, y)
    a = torch.rand(8, 8, device="cuda:0")
    with pytest.raises(ValueError, match="different devices"):
        cl.sgemm(a, torch.rand(8, 8, device="cuda:1"))


def test_stream_of_another_device_refused(cl):
    """Operands on device 1, a stream of device 0: a ValueError naming the stream (the bundled
    kernels check it when the launch fails), nothing written."""
    if not cl.KERNELS_BUILT:
        pytest.skip("this cudaload was built without nvcc: no bundled kernels")
    cl.set_backend("bundled")
    try:
        x = torch.ones(4096, device="cuda:1")
        y = torch.zeros(4096, device="cuda:1")
        with pytest.raises(ValueError, match="stream"):
            cl.saxpy(1.0, x, y, stream=torch.cuda.Stream(device=0))
        torch.cuda.synchronize(1)
        assert float(y.abs().sum()) == 0.0
    finally:
        cl.set_backend("auto")


@need_cupy
def test_cupy_on_device1_with_its_stream(cl, backend):
    """cupy arrays of device 1 under cupy's current stream there (named by the CAI), device 0
    current for torch: worked on in place on device 1."""
    with cupy.cuda.Device(1):
        s = cupy.cuda.Stream(non_blocking=True)
        with s:
            x = cupy.random.rand(4097, dtype=cupy.float32)
            y = cupy.random.rand(4097, dtype=cupy.float32)
            want = cupy.asnumpy(y).astype(np.float64) + 3.0 * cupy.asnumpy(x).astype(np.float64)
            cl.saxpy(3.0, x, y)
            s.synchronize()
            got = cupy.asnumpy(y)
    assert np.allclose(got, want, rtol=1e-6, atol=1e-6)
    assert cl.last_backend() == backend


def test_expandable_segments_memory_on_device1(cudaload_mod):
    """torch's expandable segments (virtual memory: cuMemCreate/cuMemMap) on device 1, in a fresh
    process: the pointers still name their device, and the call is correct."""
    code = textwrap.dedent("""
        import torch, cudaload
        torch.cuda.set_device(0)
        x = torch.rand(1 << 20, device="cuda:1")
        y = torch.rand(1 << 20, device="cuda:1")
        want = y.double() + 2.0 * x.double()
        cudaload.set_backend("bundled" if cudaload.KERNELS_BUILT else "cublas")
        cudaload.saxpy(2.0, x, y)
        torch.cuda.synchronize(1)
        assert torch.allclose(y.double(), want, rtol=1e-6, atol=1e-6)
        assert torch.cuda.current_device() == 0
        print("ok")
    """)
    env = dict(os.environ, PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr


def test_probe_tests_every_device(cl):
    p = cl.probe(selftest=True)
    assert len(p["devices"]) == torch.cuda.device_count()
    for d in p["devices"]:
        assert d["pci_bus_id"], d
        st = d["selftest"]
        assert st and st["saxpy"]["pass"] and st["sgemm"]["pass"], d
    ids = [d["pci_bus_id"] for d in p["devices"]]
    assert len(set(ids)) == len(ids)
