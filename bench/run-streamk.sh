#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench/run-streamk.sh [OUTDIR] [TIMED_RUNS [EXTRA_G ...]] -- the stream-K experiment on the
# short-wide SGEMM (bench/sgemm_streamk_tune.cu): builds it with nvcc (sm_90), runs it 3 times,
# and prints the runs. Run from anywhere on the GPU machine; needs no network.
# OUTDIR (default build/streamk, relative to the caller's directory) receives:
#   sgemm_streamk_tune  the binary;  build.txt  nvcc's -Xptxas -v output (registers, spills);
#   device.txt  nvidia-smi's view of the GPU;  run1.txt .. run3.txt  the runs' output.
# Further arguments go to the tool: the timed runs per contender (default 25, at least 15) and
# extra G values to time beside the default ones.
# env: CUDA_HOME (default /usr/local/cuda), NVCC_ARCH (default sm_90), RUNS (default 3).
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(dirname "$here")
out=${1:-build/streamk}
[ $# -gt 0 ] && shift
cuda=${CUDA_HOME:-/usr/local/cuda}
arch=${NVCC_ARCH:-sm_90}
runs=${RUNS:-3}
mkdir -p "$out" || exit 1
out=$(cd "$out" && pwd) || exit 1
bin=$out/sgemm_streamk_tune
echo "run-streamk.sh: building $bin ($cuda/bin/nvcc, -arch=$arch)"
if ! (cd "$top" && "$cuda/bin/nvcc" -O3 -std=c++17 -arch="$arch" -Ikernels -Xptxas -v -o "$bin" \
        bench/sgemm_streamk_tune.cu -lcublas) >"$out/build.txt" 2>&1; then
    cat "$out/build.txt" >&2
    echo "run-streamk.sh: build failed" >&2
    exit 1
fi
echo "registers (nvcc -Xptxas -v), the stream-K kernels and the shipped ones:"
grep -A3 "Compiling entry function.*\(streamk\|cudaload_sgemm_128x128v_nn\|cudaload_sgemm_splitk_reduce\)" "$out/build.txt" |
    grep -v "Function properties" | sed 's/^ptxas info *: //'
if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv >"$out/device.txt" 2>&1
    cat "$out/device.txt"
fi
export LD_LIBRARY_PATH="$cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
rc=0
for i in $(seq 1 "$runs"); do
    echo
    echo "=== run $i of $runs: $bin $* ($(date -u +%H:%M:%S) UTC)"
    "$bin" "$@" >"$out/run$i.txt" 2>&1
    r=$?
    cat "$out/run$i.txt"
    if [ $r != 0 ]; then
        echo "run-streamk.sh: run $i exited $r" >&2
        rc=1
    fi
done
echo
echo "=== summary (total us, main us, ratio to cuBLAS, ratio to shipped), run by run:"
for i in $(seq 1 "$runs"); do
    awk -v r="$i" '/^NN /{shape=$2} /^   (cuBLAS|shipped|stream-K)/{
        name=substr($0, 4, 30); sub(/ +$/, "", name); split(substr($0, 34), f, " ")
        printf "run %s  %-16s %-30s %9s %9s %7s %7s\n", r, shape, name, f[1], f[2], f[3], f[4] }' "$out/run$i.txt"
done
echo "run-streamk.sh: output in $out"
exit $rc
