#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/gpu/toolkit-run.sh OUTDIR -- the toolkit's parts and the kernels built from pip's CUDA
# wheels, on a GPU machine (which has no network: the fatbin is built elsewhere and carried):
#   check-gpu-system: make check-gpu with the fatbin this machine's /usr/local/cuda builds;
#   check-gpu-pip: make check-gpu with the fatbin a build without a toolkit made from
#     tools/cuda-pins.txt's wheels (build/kernels/cudaload.fatbin and kernels_build.h of such a
#     build, copied into .pipfat/ beside this checkout), and its probe's report and self-test;
#   parts, cuda-root: the probe's --parts and --cuda-root with the torch venv as the root (its
#     CUDA 13 wheels, and this machine's /usr/local/cuda for what the venv lacks);
#   test_toolkit: the CPU tests of the parts, on this machine.
# Each step's log goes to OUTDIR; the summary to OUTDIR/summary.txt.
set -u
out=${1:?usage: toolkit-run.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$(dirname "$0")/../.."
top=$PWD
. tests/gpu/run-lib.sh
{
    nvidia-smi --query-gpu=name,driver_version --format=csv
    nvcc --version | tail -2
    echo "site: $site"
    sha256sum .pipfat/* 2>/dev/null
    cat .pipfat/kernels_build.h 2>/dev/null
} > "$out/env.txt" 2>&1
step check-gpu-system env CUDALOAD_GPU_SITE="$site" make -j16 check-gpu build/tests/test_toolkit "${cmocka[@]}"
sha256sum build/kernels/cudaload.fatbin >> "$out/env.txt"
if [ -f .pipfat/cudaload.fatbin ]; then
    # newer than the kernels' sources and the Makefile: make takes them as built
    touch .pipfat/cudaload.fatbin .pipfat/kernels_build.h
    step check-gpu-pip env CUDALOAD_GPU_SITE="$site" make -j16 B=build/pipfat KERNELS_B="$top/.pipfat" check-gpu "${cmocka[@]}"
    step probe-pip build/pipfat/cudaload-probe --root "$site"
fi
step parts build/cudaload-probe --root "$site" --parts
step cuda-root build/cudaload-probe --root "$site" --cuda-root --json
step test_toolkit env CUDALOAD_TEST_BUILD="$top/build" build/tests/test_toolkit
echo "failed steps: $fails" | tee "$out/summary.txt"
grep -h "^rc=" "$out"/*.txt | sort | uniq -c >> "$out/summary.txt"
[ $fails = 0 ]
