# SPDX-License-Identifier: Apache-2.0
"""bench/python_first_call.py -- one process's first kernel call through the Python package: the
import (libcudaload's init), then, with the device's primary context already made by torch, the
first cudaload.saxpy (the bundled kernels prepared on the device: the fatbin read, embedded or
from the package's lib/libcudaload.a, decompressed and loaded) and the second. Prints
"key value" lines (bench/run-python-first-call.sh takes the medians over processes).

usage: python bench/python_first_call.py   (cudaload and torch importable; a GPU)
"""
import time

import torch

torch.zeros(1, device="cuda")  # the primary context, made before the timed calls
torch.cuda.synchronize()
x = torch.ones(1 << 20, device="cuda")
y = torch.zeros(1 << 20, device="cuda")
torch.cuda.synchronize()

t0 = time.perf_counter()
import cudaload  # noqa: E402

t1 = time.perf_counter()
cudaload.set_backend("bundled")  # the bundled kernels or an error: never a silent cuBLAS
cudaload.saxpy(2.0, x, y)
torch.cuda.synchronize()
t2 = time.perf_counter()
cudaload.saxpy(2.0, x, y)
torch.cuda.synchronize()
t3 = time.perf_counter()
assert float(y[0]) == 4.0 and float(y[-1]) == 4.0, (float(y[0]), float(y[-1]))
k = cudaload.probe()["kernels"]
print("import_us %.1f" % ((t1 - t0) * 1e6))
print("first_call_us %.1f" % ((t2 - t1) * 1e6))
print("second_call_us %.1f" % ((t3 - t2) * 1e6))
print("fatbin_bytes %d" % k["fatbin_bytes"])
print("image_file %s" % (k.get("image_file") or "embedded"))  # (a package before 0.5: no such key)
print("backend %s" % cudaload.last_backend())
