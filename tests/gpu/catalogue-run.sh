#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The catalogue on the H100 (device tool): run from the repo root with build/ carried.
#   tests/gpu/catalogue-run.sh OUTDIR
# Uses /opt/torch/.venv (torch, cuda-pathfinder and the cu13 wheels). Logs in OUTDIR.
set -u
out=${1:?OUTDIR}
mkdir -p "$out"
py=/opt/torch/.venv/bin/python
site=$($py -c 'import site; print(site.getsitepackages()[0])')
nvidia-smi -L > "$out/nvidia-smi.txt" 2>&1
VIRTUAL_ENV=/opt/torch/.venv build/cudaload-probe --all --load --no-selftest > "$out/probe-all-load.txt" 2>&1; echo "exit $?" >> "$out/probe-all-load.txt"
VIRTUAL_ENV=/opt/torch/.venv build/cudaload-probe --all --json > "$out/probe-all.json" 2>&1
VIRTUAL_ENV=/opt/torch/.venv build/cudaload-probe --cflags cufft cusolver cudnn > "$out/flags.txt" 2>&1
VIRTUAL_ENV=/opt/torch/.venv build/cudaload-probe --libs cufft cusolver cudnn >> "$out/flags.txt" 2>&1
$py tests/gpu/catalogue_h100.py build "$out" > "$out/catalogue.txt" 2>&1; echo "exit $?" >> "$out/catalogue.txt"
cat "$out/catalogue.txt"
