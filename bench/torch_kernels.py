"""torch_kernels.py -- the torch side of the kernel benchmarks (bench/run-kernels.sh).

Same sizes and method as bench_kernels.c: y.add_(x, alpha=a) for SAXPY (n = 2^28, on an
idle GPU and queued behind a memset) and
torch.mm in FP32 with TF32 off for SGEMM; CUDA events, medians of RUNS timed runs after 3
warm-ups. Prints Markdown rows.
"""
import statistics
import sys

import torch

runs = int(sys.argv[1]) if len(sys.argv) > 1 else 25
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
dev = torch.device("cuda")


def timed(fn, queued=False):
    """Median ms; queued: a 256 MiB memset is enqueued first, so the launch waits in the
    queue when the first event fires (bench_kernels.c's queued mode)."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    out = []
    for r in range(runs):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        if queued:
            scratch.fill_(r)
        a.record()
        fn()
        b.record()
        b.synchronize()
        out.append(a.elapsed_time(b))
    return statistics.median(out)


n = 1 << 28
x = torch.rand(n, device=dev)
y = torch.rand(n, device=dev)
scratch = torch.empty(1 << 28, dtype=torch.uint8, device=dev)
for queued in (False, True):
    ms = timed(lambda: y.add_(x, alpha=1.0001), queued)
    mode = "queued" if queued else "idle GPU"
    print(f"| torch {torch.__version__} SAXPY n=2^28, {mode} (GB/s) | {12 * n / 1e9 / (ms / 1e3):.0f} |")
del x, y, scratch
for m in (1024, 4096, 8192, 3001):
    A = torch.rand(m, m, device=dev)
    B = torch.rand(m, m, device=dev)
    C = torch.empty(m, m, device=dev)
    ms = timed(lambda: torch.mm(A, B, out=C))
    print(f"| torch SGEMM {m}x{m}x{m} (TFLOP/s) | {2 * m**3 / 1e12 / (ms / 1e3):.1f} |")
