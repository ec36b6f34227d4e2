# SPDX-License-Identifier: Apache-2.0
"""Per-call host time of cudaload.saxpy and cudaload.sgemm against torch's own, on small CUDA tensors.

    python bench/python_calls.py [--reps R] [--calls N] [--out FILE]

In one process, interleaved: each repetition times a batch of N calls of every case in turn
(time.perf_counter_ns around the batch, torch.cuda.synchronize() before and after it, never
inside), and the table gives each case's median over R repetitions, in microseconds per call,
with ours / torch and the goal (<= 1.0: no more per call than torch's equivalent):

    saxpy, n = 1024      cudaload.saxpy(a, x, y)          y.add_(x, alpha=a)
    sgemm 16x16, 64x64   cudaload.sgemm(a, b, c)          torch.mm(a, b, out=c)

Both run on torch's current (default) stream, with the bundled kernels (cudaload's default
backend) and torch's TF32 off. With cupy installed, cudaload on cupy arrays is timed too (no
peer: for information). Every result is checked against torch before timing.
"""
import argparse
import statistics
import sys
import time

import torch

import cudaload


def batch(fn, calls):
    torch.cuda.synchronize()
    t0 = time.perf_counter_ns()
    for _ in range(calls):
        fn()
    t1 = time.perf_counter_ns()
    torch.cuda.synchronize()
    return (t1 - t0) / calls / 1000.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--out")
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")
    x = torch.rand(1024, device=dev)
    y = torch.rand(1024, device=dev)
    y0 = y.clone()
    cudaload.saxpy(0.5, x, y)
    assert torch.allclose(y, y0 + 0.5 * x, rtol=1e-6, atol=1e-6), "cudaload.saxpy disagrees with torch"
    cases = [("saxpy n=1024", lambda: cudaload.saxpy(0.5, x, y), lambda: y.add_(x, alpha=0.5))]
    for m in (16, 64):
        a, b = torch.rand(m, m, device=dev), torch.rand(m, m, device=dev)
        c = torch.empty(m, m, device=dev)
        cudaload.sgemm(a, b, c)
        assert torch.allclose(c, a.double().mm(b.double()).float(), rtol=1e-5, atol=1e-5), "cudaload.sgemm disagrees"
        cases.append(("sgemm %dx%dx%d" % (m, m, m), (lambda a=a, b=b, c=c: cudaload.sgemm(a, b, c)),
                      (lambda a=a, b=b, c=c: torch.mm(a, b, out=c))))
    extra = []
    try:
        import cupy
        cx, cy = cupy.random.rand(1024, dtype=cupy.float32), cupy.random.rand(1024, dtype=cupy.float32)
        extra.append(("saxpy n=1024, cupy arrays", lambda: cudaload.saxpy(0.5, cx, cy)))
    except ImportError:
        pass
    for _ in range(3):  # warm-up: every path, its first-call work done
        for name, ours, theirs in cases:
            batch(ours, args.calls), batch(theirs, args.calls)
        for name, ours in extra:
            batch(ours, args.calls)
    times = {}
    for _ in range(args.reps):
        for name, ours, theirs in cases:
            times.setdefault((name, "ours"), []).append(batch(ours, args.calls))
            times.setdefault((name, "torch"), []).append(batch(theirs, args.calls))
        for name, ours in extra:
            times.setdefault((name, "ours"), []).append(batch(ours, args.calls))
    lines = ["torch %s, cudaload %s (%s backend), %s; %d repetitions x %d calls, medians (us per call)"
             % (torch.__version__, cudaload.__version__, cudaload.last_backend(), torch.cuda.get_device_name(),
                args.reps, args.calls),
             "",
             "| call | cudaload (us) | torch (us) | cudaload / torch | goal | result |",
             "|---|---|---|---|---|---|"]
    ok = True
    for name, _, _ in cases:
        o, t = statistics.median(times[(name, "ours")]), statistics.median(times[(name, "torch")])
        met = o <= t
        ok &= met
        lines.append("| %s | %.2f | %.2f | %.3f | <= 1.0 | %s |" % (name, o, t, o / t, "met" if met else "NOT met"))
    for name, _ in extra:
        lines.append("| %s | %.2f | | | | |" % (name, statistics.median(times[(name, "ours")])))
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
