#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/gpu/python-size-run.sh OUTDIR WHEEL... -- on a GPU machine, from the repo root: each
# cudaload wheel given (built elsewhere: pip wheel ./python-shim) installed with pip --target
# under build/python-size/, then the import and the first kernel call of each, side by side
# (bench/run-python-first-call.sh): a module that reads its kernels from the package's
# lib/libcudaload.a against one that embeds them. Logs in OUTDIR.
# env: PYTHON (default /opt/torch/.venv/bin/python3), PROCS (bench/run-python-first-call.sh)
set -u
out=${1:?usage: tests/gpu/python-size-run.sh OUTDIR WHEEL...}
shift
[ $# -ge 1 ] || { echo "usage: tests/gpu/python-size-run.sh OUTDIR WHEEL..." >&2; exit 2; }
mkdir -p "$out"
py=${PYTHON:-/opt/torch/.venv/bin/python3}
dirs=()
: > "$out/wheels.txt"
for w in "$@"; do
    name=$(basename "$(dirname "$w")")
    d=$PWD/build/python-size/$name
    rm -rf "$d"
    "$py" -m pip install --no-deps --no-index --disable-pip-version-check --target "$d" "$w" > "$out/install-$name.txt" 2>&1 ||
        { echo "python-size-run.sh: installing $w failed"; tail -5 "$out/install-$name.txt"; exit 1; }
    so=$(ls "$d"/cudaload/_cudaload*.so)
    fatbins=$("$py" -c 'import sys; print(open(sys.argv[1], "rb").read().count(bytes([0x50, 0xED, 0x55, 0xBA, 1, 0])))' "$so")
    echo "$name: $(stat -c %s "$w") bytes wheel; module $(stat -c %s "$so") bytes unpacked, holding $fatbins fatbin(s)" >> "$out/wheels.txt"
    dirs+=("$d")
done
PYTHON=$py bench/run-python-first-call.sh "${dirs[@]}" > "$out/first-call.txt" 2>&1; echo "rc=$?" >> "$out/first-call.txt"
cat "$out/wheels.txt" "$out/first-call.txt"
