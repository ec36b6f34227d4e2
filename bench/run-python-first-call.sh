#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench/run-python-first-call.sh -- the Python package's import and first kernel call
# (bench/python_first_call.py), for each installed package directory given (pip install
# --target DIR), PROCS processes each, the packages alternating (A,B then B,A). Reported per
# package: where its kernels are (embedded in the module, or read from lib/libcudaload.a) and
# the medians and quartiles over processes of the import, the first call and the second.
#
# usage: bench/run-python-first-call.sh PKG_DIR...   (run by a Python with torch: PYTHON)
# env:   PROCS (default 21); PYTHON (default /opt/torch/.venv/bin/python3)
set -u
[ $# -ge 1 ] || { echo "usage: bench/run-python-first-call.sh PKG_DIR..." >&2; exit 2; }
procs=${PROCS:-21}
py=${PYTHON:-/opt/torch/.venv/bin/python3}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
pkgs=("$@")
for i in $(seq 1 "$procs"); do
    order=("${pkgs[@]}")
    if [ $((i % 2)) = 0 ]; then order=(); for ((j = ${#pkgs[@]} - 1; j >= 0; j--)); do order+=("${pkgs[j]}"); done; fi
    for p in "${order[@]}"; do
        key=$(echo "$p" | tr '/' '_')
        PYTHONPATH="$p" "$py" "$here/python_first_call.py" >> "$tmp/$key" 2>&1 ||
            { echo "run-python-first-call.sh: $p: failed:" >&2; tail -5 "$tmp/$key" >&2; exit 1; }
    done
done
# the q-quantile (0.25, 0.5, 0.75) of key's values, nearest rank
q() { awk -v k="$1" '$1==k {print $2}' "$3" | sort -g | awk -v q="$2" '{a[NR]=$1} END {i=int(q*(NR-1)+1.5); print a[i]}'; }
echo "| package | kernels | fatbin (bytes) | import (us) | first call (us) | second call (us) |"
echo "|---|---|---|---|---|---|"
for p in "$@"; do
    f=$tmp/$(echo "$p" | tr '/' '_')
    cell() { echo "$(q "$1" 0.5 "$f") ($(q "$1" 0.25 "$f")-$(q "$1" 0.75 "$f"))"; }
    echo "| $p | $(awk '$1=="image_file"{print $2; exit}' "$f") | $(q fatbin_bytes 0.5 "$f") | $(cell import_us) | $(cell first_call_us) | $(cell second_call_us) |"
done
echo
echo "$procs processes per package, alternating; median (quartiles) over processes"
