# SPDX-License-Identifier: Apache-2.0
"""examples/python-extension (saxpy_demo, its kernel and cuFFT call linked through libcudaload's
stubs) imported after torch, in one process on a GPU (tests/gpu/stubs-run.sh):

- one copy of each CUDA library in /proc/self/maps: the module's stubs took torch's libcudart
  and libcufft, and its cuBLAS (saxpy's fallback) is torch's too;
- its results equal torch's: scale(a, x) against x * a, fft_roundtrip(x) against torch.fft
  (ifft(fft(x)) - x), saxpy against a * x + y.

    python tests/gpu/example_after_torch.py      # saxpy_demo on sys.path (PYTHONPATH)
Exit 0 when every check holds; prints what it compared.
"""
import array
import collections
import os
import sys

import torch

x_t = torch.linspace(-3, 3, 4096, device="cuda")
torch.cuda.synchronize()
_ = torch.fft.fft(x_t.to(torch.complex64))  # torch's cuFFT loaded before the module
_ = x_t @ x_t                                # and its cuBLAS

import saxpy_demo  # noqa: E402

bad = []
x = array.array("f", (float(v) for v in torch.linspace(-3, 3, 4096)))
want = (torch.tensor(x) * 1.75).tolist()
saxpy_demo.scale(1.75, x)
if list(x) != want:
    bad.append("scale differs from torch's x * a")
f = array.array("f", (float(v) for v in torch.sin(torch.arange(1000) * 0.1) + 0.25 * (torch.arange(1000) % 5)))
ours = saxpy_demo.fft_roundtrip(f)
t = torch.tensor(f, device="cuda", dtype=torch.complex64)
theirs = float((torch.fft.ifft(torch.fft.fft(t)) - t).abs().max())
print(f"fft round trip max error: saxpy_demo {ours:.3e}, torch {theirs:.3e}")
if not (ours < 1e-5 and theirs < 1e-5 and abs(ours - theirs) < 1e-5):
    bad.append(f"fft round trip: {ours} vs torch {theirs}")
xs = array.array("f", range(1000))
ys = array.array("f", (1.0,) * 1000)
backend = saxpy_demo.saxpy(2.0, xs, ys)
if list(ys) != (2.0 * torch.arange(1000.0) + 1.0).tolist():
    bad.append("saxpy differs from torch's a * x + y")
print(f"scale and saxpy ({backend}) equal torch's: {not bad}")

maps = collections.defaultdict(set)
for line in open("/proc/self/maps"):
    path = line.split()[-1]
    base = os.path.basename(path)
    for lib in ("libcudart.so", "libcufft.so", "libcublas.so", "libcublasLt.so", "libcuda.so"):
        if base.startswith(lib):
            maps[lib].add(os.path.realpath(path))
for lib, paths in sorted(maps.items()):
    print(f"{lib}: {sorted(paths)}")
    if len(paths) != 1:
        bad.append(f"{lib} mapped {len(paths)} times")
for lib in ("libcudart.so", "libcufft.so"):
    if lib not in maps:
        bad.append(f"{lib} not mapped")
info = saxpy_demo.library_info()
print("saxpy_demo's cudart:", info["cudart"]["path"], info["cudart"]["source"])
print("FAIL: " + "; ".join(bad) if bad else "ok: one copy of each library, results equal to torch's")
sys.exit(1 if bad else 0)
