#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench/run-first-call.sh -- the first kernel call of a process (the bundled kernels prepared on
# the device: the fatbin's image chosen, decompressed and loaded) against the second, for the
# fatbin of each build given, PROCS processes each, the builds alternating (A,B then B,A).
# Reported per build: its fatbin (bytes, SASS list, PTX) and the medians over processes of
# first_call_us and second_call_us (bench/bench_first_call.c).
#
# usage: bench/run-first-call.sh BUILD_DIR... (each with bench/bench_first_call: make bench-bins)
# env:   PROCS (default 21); CUDALOAD_GPU_SITE (the roots, as the other benchmarks)
set -u
[ $# -ge 1 ] || { echo "usage: bench/run-first-call.sh BUILD_DIR..." >&2; exit 2; }
procs=${PROCS:-21}
for b in "$@"; do
    [ -x "$b/bench/bench_first_call" ] || { echo "run-first-call.sh: $b/bench/bench_first_call is missing (make B=$b bench-bins)" >&2; exit 1; }
done
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
builds=("$@")
for i in $(seq 1 "$procs"); do
    order=("${builds[@]}")
    if [ $((i % 2)) = 0 ]; then order=(); for ((j = ${#builds[@]} - 1; j >= 0; j--)); do order+=("${builds[j]}"); done; fi
    for b in "${order[@]}"; do
        key=$(echo "$b" | tr '/' '_')
        "$b/bench/bench_first_call" >> "$tmp/$key" 2>&1 || { echo "run-first-call.sh: $b: failed:" >&2; tail -3 "$tmp/$key" >&2; exit 1; }
    done
done
med() { awk -v k="$1" '$1==k {print $2}' "$2" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "| build | fatbin (bytes) | SASS | PTX | first call (us, median) | second call (us, median) | first - second |"
echo "|---|---|---|---|---|---|---|"
for b in "$@"; do
    f=$tmp/$(echo "$b" | tr '/' '_')
    first=$(med first_call_us "$f"); second=$(med second_call_us "$f")
    echo "| $b | $(med fatbin_bytes "$f") | $(awk '$1=="sass"{print $2; exit}' "$f") | $(med ptx "$f") | $first | $second | $(awk -v a="$first" -v b="$second" 'BEGIN{printf "%.1f", a-b}') |"
done
echo
echo "$procs processes per build, alternating; medians over processes"
