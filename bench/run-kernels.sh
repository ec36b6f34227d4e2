#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench/run-kernels.sh [--out FILE] -- bundled SAXPY/SGEMM against cuBLAS through
# libcudaload's table (build/bench/bench_kernels), then torch, ours and cuBLAS in one torch
# process on the same tensors (bench/torch_kernels.py, build/libcudaload.so via ctypes);
# medians of 25 timed runs after 10 warm-up rounds, contenders alternating.
# env: PYTHON (torch's python, default python3), CUDALOAD_GPU_SITE (site-packages to search),
#      BENCH_RUNS (default 25), BENCH_PROFILE=1 (under each torch-process row, the kernels each
#      contender launched, from torch.profiler: torch_kernels.py --profile).
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(dirname "$here")
out=""
[ "${1:-}" = "--out" ] && out=${2:?}
runs=${BENCH_RUNS:-25}
py=${PYTHON:-python3}
{
    echo "## Kernels: \`bench/run-kernels.sh\` ($(date -u +%Y-%m-%d))"
    echo
    if command -v nvidia-smi >/dev/null; then
        echo "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | head -1)"
    else
        echo "device: no GPU"
    fi
    echo
    "$top/build/bench/bench_kernels" --runs "$runs" --shapes "$here/sgemm_shapes.txt"
    echo
    if "$py" -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
        "$py" "$here/torch_kernels.py" "$runs" --lib "$top/build/libcudaload.so" --shapes "$here/sgemm_shapes.txt" \
            ${BENCH_PROFILE:+--profile}
    else
        echo "torch: skipped (no torch with CUDA in $py)"
    fi
} | if [ -n "$out" ]; then tee "$out"; else cat; fi
