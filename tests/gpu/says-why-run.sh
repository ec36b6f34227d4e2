#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/gpu/says-why-run.sh OUTDIR -- on a GPU machine, from the repo root:
#   py/, py.txt      cudaload.preload() beside torch (tests/python/test_gpu_preload.py, through
#                    tests/python/device-run.sh with the interpreter that has torch)
#   stubs.txt, *.err stub_prog and stub_blas with the libraries found (CUDA_HOME: no line on
#                    stderr, the kernel runs) and with nothing findable (CUDALOAD_SOURCES=override:
#                    one line per library, its fix)
out=${1:?usage: tests/gpu/says-why-run.sh OUTDIR}
mkdir -p "$out"
PYTEST_K=gpu_preload tests/python/device-run.sh "$out/py" > "$out/py.txt" 2>&1; echo "device-run rc=$?" >> "$out/py.txt"
start=$SECONDS
make -j16 all build/tests/stub_prog build/tests/stub_blas > "$out/make.txt" 2>&1; echo "make rc=$? in $((SECONDS-start)) s" >> "$out/make.txt"
for p in stub_prog stub_blas; do
  for src in cuda_home override; do
    echo "== $p CUDALOAD_SOURCES=$src" 
    CUDALOAD_SOURCES=$src CUDA_HOME=/usr/local/cuda build/tests/$p 2> "$out/$p-$src.err"; echo "rc=$?"
    echo "-- stderr ($(wc -l < "$out/$p-$src.err") lines):"; cat "$out/$p-$src.err"
  done
done > "$out/stubs.txt" 2>&1
