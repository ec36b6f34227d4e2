# SPDX-License-Identifier: Apache-2.0
"""python demo.py -- where saxpy_demo's libcudaload found CUDA, then one SAXPY on the GPU.

Exit status: 0 when the SAXPY ran and its result is right, 1 when it is wrong, 2 when CUDA
cannot run here (no driver, no device: the error says which, and what was found anyway).
"""

import array
import sys
import time

import saxpy_demo

print(f"saxpy_demo with libcudaload {saxpy_demo.cudaload_version}: cudaload_init() -> {saxpy_demo.status}")
for name, info in saxpy_demo.library_info().items():
    where = info["path"] or "-"
    print(f"  {name:9} {info['status']:28} {info['source']:8} {where}")

n, a = 1 << 20, 2.0
x = array.array("f", (i % 100 for i in range(n)))
y = array.array("f", (1.0 for _ in range(n)))
try:
    t = time.perf_counter()
    backend = saxpy_demo.saxpy(a, x, y)
    ms = (time.perf_counter() - t) * 1e3
except saxpy_demo.CudaloadError as e:
    print(f"saxpy: {e.status}\n{e}", file=sys.stderr)
    sys.exit(2)
bad = sum(1 for i in range(n) if y[i] != a * (i % 100) + 1.0)
print(f"saxpy on {n} floats ({backend} backend; first call: CUDA context, copies included): {ms:.1f} ms, {bad} wrong")
sys.exit(1 if bad else 0)
