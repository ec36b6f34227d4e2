# SPDX-License-Identifier: Apache-2.0
"""torch_kernels.py -- torch, libcudaload's bundled kernels and cuBLAS in ONE process, on the
same tensors, alternating run by run (bench/run-kernels.sh).

    python bench/torch_kernels.py [RUNS] [--lib PATH/libcudaload.so] [--warmup N] [--shapes FILE]

libcudaload.so (default: build/libcudaload.so beside this directory) is loaded with ctypes
after torch has initialised CUDA, so cudaload_init() reuses torch's libcudart and libcublas
(the loader's "already loaded" path) and the three contenders share one CUDA context, one
stream (torch's current one) and the same buffers:

  torch     y.add_(x, alpha=a) / torch.mm(A, B, out=C) with TF32 off
  ours      cudaload_saxpy / cudaload_sgemm with cudaload_set_backend(BUNDLED)
  cuBLAS    the same two calls with cudaload_set_backend(CUBLAS): cublasSaxpy_v2 / cublasSgemm_v2
            through libcudaload's table, on the cuBLAS torch loaded

The backend switch happens before the first event, outside the timed interval. Method as in
bench_kernels.c: CUDA events around each call; WARMUP rounds (default 10) of every
contender first; then RUNS rounds (default 25), the contender that goes first rotating each
round; medians. SAXPY n = 2^28 (1 GiB per vector), GB/s = 12 bytes x n / t, measured idle
(the interval includes each launch's host path: Python + ctypes for ours, Python + the
dispatcher for torch) and queued (a 256 MiB fill enqueued before the first event, so the
launch already waits in the queue: the GPU's work alone). SGEMM: every row of
bench/sgemm_shapes.txt (the shape classes, with their transposes and padded leading
dimensions; torch sees the same column-major memory as strided views), TFLOP/s = 2mnk / t
queued (the goal is judged on it), then the ratio to cuBLAS on an idle GPU (the host paths
included: cuBLAS's is several microseconds longer than a bundled launch). Prints Markdown rows; a missing libcudaload.so leaves torch's rows alone.

--only CLASS keeps the SGEMM rows of that class (no SAXPY). --profile adds, under each SGEMM
row, the kernels each contender launched for one call, from torch.profiler (CUPTI) over 5
calls: name, grid, block, registers, shared memory, and the median time of each, so a ratio
can be read kernel by kernel (which kernel cuBLAS chose, a split's reduction).
"""
import argparse
import ctypes
import os
import statistics
import sysconfig

import torch

here = os.path.dirname(os.path.abspath(__file__))
ap = argparse.ArgumentParser()
ap.add_argument("runs", nargs="?", type=int, default=25)
ap.add_argument("--lib", default=os.path.join(os.path.dirname(here), "build", "libcudaload.so"))
ap.add_argument("--warmup", type=int, default=int(os.environ.get("BENCH_WARMUP", "10")))
ap.add_argument("--shapes", default=os.path.join(here, "sgemm_shapes.txt"))
ap.add_argument("--only", help="the SGEMM rows of this class only (no SAXPY)")
ap.add_argument("--profile", action="store_true", help="each contender's kernels, from torch.profiler")
args = ap.parse_args()
runs = max(1, args.runs)

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
dev = torch.device("cuda")
torch.cuda.init()
torch.empty(1, device=dev)  # torch's context and libcudart exist before libcudaload looks
torch.mm(torch.ones(8, 8, device=dev), torch.ones(8, 8, device=dev))  # and its libcublas
torch.cuda.synchronize()


class Options(ctypes.Structure):
    """cudaload_options (include/cudaload.h)."""
    _fields_ = [("size", ctypes.c_size_t), ("roots", ctypes.POINTER(ctypes.c_char_p)), ("n_roots", ctypes.c_size_t),
                ("cuda_major", ctypes.c_int), ("sources", ctypes.c_uint), ("flags", ctypes.c_uint),
                ("lib_dirs", ctypes.c_char_p), ("cudart_path", ctypes.c_char_p), ("cublas_path", ctypes.c_char_p),
                ("cublaslt_path", ctypes.c_char_p), ("driver_path", ctypes.c_char_p)]


BACKEND_BUNDLED, BACKEND_CUBLAS = 1, 2
FLAG_LOAD_CUBLAS = 1 << 3
cl = None
if os.path.exists(args.lib):
    cl = ctypes.CDLL(os.path.abspath(args.lib))
    cl.cudaload_last_error.restype = ctypes.c_char_p
    cl.cudaload_saxpy.argtypes = [ctypes.c_longlong, ctypes.c_float, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    ll, f, p = ctypes.c_longlong, ctypes.c_float, ctypes.c_void_p
    cl.cudaload_sgemm.argtypes = [ctypes.c_int, ctypes.c_int, ll, ll, ll, f, p, ll, p, ll, f, p, ll, p]
    site = sysconfig.get_paths()["purelib"].encode()
    roots = (ctypes.c_char_p * 1)(site)
    o = Options(size=ctypes.sizeof(Options), roots=roots, n_roots=1, flags=FLAG_LOAD_CUBLAS)
    if cl.cudaload_init(ctypes.byref(o)) != 0:
        print(f"libcudaload: init failed: {cl.cudaload_last_error().decode(errors='replace')}; torch rows only")
        cl = None


def check(st, what):
    if st != 0:
        raise RuntimeError(f"{what}: {cl.cudaload_last_error().decode(errors='replace')}")


def measure(contenders, queued=False):
    """contenders: [(name, prepare, run)]; returns {name: median ms}."""
    stream = torch.cuda.current_stream()
    for _ in range(args.warmup):
        for _, prep, fn in contenders:
            prep()
            fn()
    torch.cuda.synchronize()
    times = {name: [] for name, _, _ in contenders}
    for r in range(runs):
        for c0 in range(len(contenders)):
            name, prep, fn = contenders[(c0 + r) % len(contenders)]
            prep()
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            if queued:
                scratch.fill_(r & 0xff)
            a.record(stream)
            fn()
            b.record(stream)
            b.synchronize()
            times[name].append(a.elapsed_time(b))
    return {name: statistics.median(t) for name, t in times.items()}


def backend(which):
    return lambda: check(cl.cudaload_set_backend(which), "cudaload_set_backend")


nothing = lambda: None  # noqa: E731
n = 1 << 28
alpha = 1.0001
x = torch.rand(n, device=dev) - 0.5
y = torch.rand(n, device=dev) - 0.5
scratch = torch.empty(1 << 28, dtype=torch.uint8, device=dev)
stream_handle = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)  # the one stream every contender uses
st = lambda: stream_handle  # noqa: E731
saxpy = [("torch", nothing, lambda: y.add_(x, alpha=alpha))]
if cl:
    run_ours = lambda: check(cl.cudaload_saxpy(n, alpha, x.data_ptr(), y.data_ptr(), st()), "cudaload_saxpy")  # noqa: E731
    saxpy += [("ours", backend(BACKEND_BUNDLED), run_ours), ("cuBLAS", backend(BACKEND_CUBLAS), run_ours)]
if cl:  # the call is right before it is timed: ours against torch's arithmetic on the same data
    y0 = y.clone()
    backend(BACKEND_BUNDLED)()
    run_ours()
    torch.cuda.synchronize()
    assert torch.allclose(y, y0.add_(x, alpha=alpha), rtol=1e-6, atol=1e-6), "cudaload_saxpy disagrees with torch"
    del y0
names = [c[0] for c in saxpy]
print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}; one process, same tensors, "
      f"{args.warmup} warm-up rounds, medians of {runs}, contenders alternating\n")
print("| benchmark | " + " | ".join(names) + (" | ours / torch | ours / cuBLAS |" if cl else " |"))
print("|---|" + "---|" * (len(names) + (2 if cl else 0)))
for queued in (False, True) if not args.only else ():
    med = measure(saxpy, queued)
    gbs = {k: 12 * n / 1e9 / (v / 1e3) for k, v in med.items()}
    row = f"| SAXPY n=2^28, {'queued' if queued else 'idle GPU'} (GB/s) | " + " | ".join(f"{gbs[k]:.0f}" for k in names)
    if cl:
        row += f" | {gbs['ours'] / gbs['torch']:.3f} | {gbs['ours'] / gbs['cuBLAS']:.3f}"
    print(row + " |")
del x, y, scratch
scratch = torch.empty(1 << 28, dtype=torch.uint8, device=dev)
def shape_rows(path):
    """(class, op, m, n, k, pad, goal) per row of bench/sgemm_shapes.txt."""
    with open(path) as f:
        for line in f:
            w = line.split()
            if w and not w[0].startswith("#") and len(w) == 7:
                yield w[0], w[1], int(w[2]), int(w[3]), int(w[4]), int(w[5]), float(w[6])


def colmajor(rows, cols, ld):
    """A column-major rows x cols matrix with leading dimension ld, as torch sees its memory:
    the row-major (cols x rows) tensor of strides (ld, 1), i.e. the matrix's transpose."""
    buf = torch.rand(cols * ld, device=dev) - 0.5
    return buf.as_strided((cols, rows), (ld, 1))


def profile(contenders, calls=5):
    """Per contender: [(kernel name, grid, block, registers, shared memory, median us, launches
    per call)] of `calls` calls, from the profiler's trace (CUPTI's kernel records)."""
    import json
    import tempfile
    out = {}
    for name, prep, fn in contenders:
        prep()
        fn()
        torch.cuda.synchronize()
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            for _ in range(calls):
                fn()
            torch.cuda.synchronize()
        with tempfile.NamedTemporaryFile(suffix=".json") as f:
            prof.export_chrome_trace(f.name)
            with open(f.name) as trace:
                events = json.load(trace)["traceEvents"]
        kernels = {}
        for e in events:
            if e.get("cat") == "kernel":
                a = e.get("args", {})
                key = (e["name"], tuple(a.get("grid", ())), tuple(a.get("block", ())), a.get("registers per thread"),
                       a.get("shared memory"))
                kernels.setdefault(key, []).append(e["dur"])
        out[name] = [(*key, statistics.median(d), len(d) / calls) for key, d in kernels.items()]
    return out


for cls, op, m, n, k, pad, goal in shape_rows(args.shapes):
    if args.only and cls != args.only:
        continue
    ta, tb = op[0] == "T", op[1] == "T"
    lda, ldb, ldc = (k if ta else m) + pad, (n if tb else k) + pad, m + pad
    At = colmajor(k if ta else m, m if ta else k, lda)  # the stored A, transposed: torch's view
    Bt = colmajor(n if tb else k, k if tb else n, ldb)
    Ct = colmajor(m, n, ldc)  # n x m: C^T
    # column-major C = op(A) op(B) is row-major C^T = op(B)^T op(A)^T: the same memory, no copies
    opAt = At.t() if ta else At  # op(A)^T, k x m
    opBt = Bt.t() if tb else Bt  # op(B)^T, n x k
    gemm = [("torch", nothing, lambda: torch.mm(opBt, opAt, out=Ct))]
    if cl:
        run_g = lambda: check(cl.cudaload_sgemm(int(ta), int(tb), m, n, k, 1.0, At.data_ptr(), lda, Bt.data_ptr(), ldb,  # noqa: E731
                                                0.0, Ct.data_ptr(), ldc, st()), "cudaload_sgemm")
        gemm += [("ours", backend(BACKEND_BUNDLED), run_g), ("cuBLAS", backend(BACKEND_CUBLAS), run_g)]
        backend(BACKEND_BUNDLED)()
        run_g()
        ref = torch.mm(opBt.double(), opAt.double())
        err = ((Ct.double() - ref).norm() / ref.norm()).item()
        assert err < 1e-5, f"cudaload_sgemm {op} {m}x{n}x{k}: relative error {err:.2e} against float64"
        del ref
    med = measure(gemm, queued=True)
    idle = measure(gemm)
    tf = {name: 2 * m * n * k / 1e12 / (v / 1e3) for name, v in med.items()}
    ld = f", ld +{pad}" if pad else ""
    row = f"| SGEMM {cls} {op} {m}x{n}x{k}{ld} (TFLOP/s, queued) | " + " | ".join(f"{tf[name]:.1f}" for name in names)
    if cl:
        ratio = tf["ours"] / tf["cuBLAS"]
        row += (f" | {tf['ours'] / tf['torch']:.3f} | {ratio:.3f} (goal >= {goal:.2f}: {'met' if ratio >= goal else 'not met'}; "
                f"idle GPU {idle['cuBLAS'] / idle['ours']:.3f})")
    print(row + " |")
    if args.profile:
        for name, kernels in profile(gemm).items():
            for kname, grid, block, regs, smem, us, per_call in kernels:
                print(f"    {name}: {kname[:90]} grid {grid} block {block} regs {regs} smem {smem}: "
                      f"{us:.1f} us x {per_call:g} per call")
    del At, Bt, Ct
