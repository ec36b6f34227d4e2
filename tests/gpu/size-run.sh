#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/gpu/size-run.sh OUTDIR -- on a GPU machine, from the repo root: the build (one SASS per
# family) and the first kernel call's cost against a build whose fatbin has SASS
# for every architecture nvcc lists and PTX of the oldest (the earlier default), side by side
# (bench/run-first-call.sh). Logs in OUTDIR.
set -u
out=${1:?usage: tests/gpu/size-run.sh OUTDIR}
mkdir -p "$out"
mk=(make -j16)
if [ -f .devdeps/include/cmocka.h ]; then
    mk+=(CMOCKA_CFLAGS=-I$PWD/.devdeps/include "CMOCKA_LIBS=-L$PWD/.devdeps/lib -lcmocka -Wl,-rpath,$PWD/.devdeps/lib")
fi
export CUDALOAD_GPU_SITE=${CUDALOAD_GPU_SITE:-$(/opt/torch/.venv/bin/python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' 2>/dev/null)}
all_archs=$(nvcc --list-gpu-code | sed -n 's/^sm_\([0-9]*\)$/\1/p' | awk '$1 >= 75' | sort -n | tr '\n' ' ')
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nvcc --version | tail -1; echo "nvcc lists: $all_archs"; } > "$out/env.txt" 2>&1
start=$SECONDS
"${mk[@]}" all bench-bins > "$out/build.txt" 2>&1; echo "rc=$? in $((SECONDS - start)) s" >> "$out/build.txt"
start=$SECONDS
"${mk[@]}" B=build/every-arch KERNEL_ARCHS="$all_archs" KERNEL_PTX="${all_archs%% *}" build/every-arch/bench/bench_first_call build/every-arch/libcudaload.so.0 \
  > "$out/build-every-arch.txt" 2>&1; echo "rc=$? in $((SECONDS - start)) s" >> "$out/build-every-arch.txt"
ls -l build/kernels/cudaload.fatbin build/every-arch/kernels/cudaload.fatbin > "$out/sizes.txt" 2>&1
for so in build/libcudaload.so.0 build/every-arch/libcudaload.so.0; do
    [ -e "$so" ] && strip -o "$out/stripped.so" "$so" && echo "$so stripped: $(stat -c %s "$out/stripped.so")" >> "$out/sizes.txt"
done
rm -f "$out/stripped.so"
bench/run-first-call.sh build build/every-arch > "$out/first-call.txt" 2>&1; echo "rc=$?" >> "$out/first-call.txt"
tail -3 "$out"/*.txt
