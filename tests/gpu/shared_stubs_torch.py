# SPDX-License-Identifier: Apache-2.0
"""Every shared stub (build/stubs/libcudaload-<lib>.so.0) and libcudaload.so.0 loaded into
python with RTLD_GLOBAL, as a program linked to them has them, BEFORE torch; then torch's own
cuBLAS and cuBLASLt work run (a matmul, and linear with a bias, cuBLASLt's epilogue), and the
stubs' own calls go through (tests/gpu/stubs-run.sh, docs/stubs.md "Only the program's calls").
stubs-run.sh runs it with LD_DEBUG=bindings and checks that no NVIDIA library bound a symbol to
a libcudaload object (torch's libcublas imports cublasLt*@libcublasLt.so.N).

    python tests/gpu/shared_stubs_torch.py BUILD_DIR
Exit 0 when every check holds; prints what it compared.
"""
import ctypes
import glob
import sys

build = sys.argv[1]
ctypes.CDLL(build + "/libcudaload.so.0", mode=ctypes.RTLD_GLOBAL)
stubs = sorted(glob.glob(build + "/stubs/libcudaload-*.so.0"))
libs = {p: ctypes.CDLL(p, mode=ctypes.RTLD_GLOBAL) for p in stubs}
print("stubs loaded:", len(stubs))
assert len(stubs) >= 10, stubs

import torch  # noqa: E402

a = torch.randn(512, 384, device="cuda")
b = torch.randn(384, 256, device="cuda")
bias = torch.randn(256, device="cuda")
c = a @ b
lin = torch.nn.functional.linear(a, b.t().contiguous(), bias)
torch.cuda.synchronize()
ref = (a.double() @ b.double()).float()
err_mm = (c - ref).abs().max().item()
err_lin = (lin - (ref + bias)).abs().max().item()
print("torch", torch.__version__, "cuda", torch.version.cuda, "matmul err", err_mm, "linear err", err_lin)
assert err_mm < 1e-2 and err_lin < 1e-2, (err_mm, err_lin)

# the stubs' own calls: cuBLAS through the cuBLAS stub, on the copy torch loaded
blas = libs[build + "/stubs/libcudaload-cublas.so.0"]
v = ctypes.c_int(0)
st = blas.cublasGetProperty(0, ctypes.byref(v))  # MAJOR_VERSION
h = ctypes.c_void_p()
cr = blas.cublasCreate_v2(ctypes.byref(h))
print("stub cublasGetProperty", st, v.value, "cublasCreate", cr)
assert st == 0 and v.value >= 12 and cr == 0, (st, v.value, cr)
blas.cublasDestroy_v2(h)
maps = sorted(set(line.split()[-1] for line in open("/proc/self/maps") if "libcublas" in line))
print("cuBLAS files mapped:", maps)
print("ok")
