#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench/run-stubs.sh -- per-call cost through the stubs against direct linking (make bench).
#
# bench_stubs (-cudart none + libcudaload's stubs) and bench_stubs_direct (-lcudart -lcublas)
# run interleaved, PROCS processes each (S,D then D,S), against the same library files: the
# stub build finds them through CUDALOAD_PATH=$LIBDIR, the direct one through its RUNPATH to
# $LIBDIR. Reported: the median over processes of each process's median ns per call, the
# ratio stub/direct (goal <= 1.02), and the stub build's first call (search + load) in us.
#
# usage: bench/run-stubs.sh [--out FILE]
# env:   STUB_BENCH_LIBDIR  the directory of libcudart.so.13/libcublas.so.13 (default
#                           ${CUDA_HOME:-/usr/local/cuda}/lib64); PROCS (default 11);
#        BENCH_BIN (default <top>/build/bench, made by make bench-bins)
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(dirname "$here")
out=""
[ "${1:-}" = "--out" ] && out=${2:?--out needs a file}
bin=${BENCH_BIN:-$top/build/bench}
libdir=${STUB_BENCH_LIBDIR:-${CUDA_HOME:-/usr/local/cuda}/lib64}
procs=${PROCS:-11}
for b in bench_stubs bench_stubs_direct; do
    [ -x "$bin/$b" ] || { echo "run-stubs.sh: $bin/$b is missing (make bench-bins with nvcc)" >&2; exit 1; }
done
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
for i in $(seq 1 "$procs"); do
    if [ $((i % 2)) = 1 ]; then order="s d"; else order="d s"; fi
    for w in $order; do
        if [ $w = s ]; then
            CUDALOAD_PATH=$libdir "$bin/bench_stubs" >>"$tmp/s" || { echo "bench_stubs failed" >&2; exit 1; }
        else
            "$bin/bench_stubs_direct" >>"$tmp/d" || { echo "bench_stubs_direct failed" >&2; exit 1; }
        fi
    done
done
report() {
    echo "# bench/run-stubs.sh: $procs processes per side, interleaved; libraries from $libdir"
    echo "# median over processes of each process's median ns/call (31 x N calls)"
    printf '%-22s %12s %12s %8s %s\n' call stub_ns direct_ns ratio goal
    for k in cudaStreamQuery launch_empty_kernel cublasSgemm_16; do
        s=$(awk -v k=$k '$1==k{print $2}' "$tmp/s" | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}')
        d=$(awk -v k=$k '$1==k{print $2}' "$tmp/d" | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}')
        printf '%-22s %12s %12s %8s %s\n' "$k" "$s" "$d" "$(awk -v s="$s" -v d="$d" 'BEGIN{printf "%.3f", s/d}')" "<= 1.02"
    done
    f=$(awk '$1=="first_call_us"{print $2}' "$tmp/s" | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}')
    echo "first call through the stub (search + load of cudart, median): $f us"
}
if [ -n "$out" ]; then report | tee "$out"; else report; fi
