#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/gpu/adopt-run.sh OUTDIR -- unchanged projects switched to the stubs, on a GPU machine:
#   build: make all and test_adopt (cmocka from .devdeps/ when there), and an install of
#     libcudaload into build/adopt-prefix;
#   test_adopt: docs/stubs.md's recipes run as written on examples/stubs; with a GPU each program
#     must compute the right results (cuSOLVER, cuBLAS, cuSPARSE, cuFFT handles, a kernel that
#     calls a __device__ function of another file: separable compilation);
#   samples-cmake: NVIDIA cuda-samples built by their own CMakeLists with the switch
#     (tests/gpu/samples.sh run-cmake), when their sources were fetched into
#     build/samples-cmake/src (tests/gpu/samples.sh fetch-cmake, where there is network), run with
#     the torch venv's CUDA 13 wheels (CUDALOAD_PATH);
#   jax-finufft: tests/adopt/jax-finufft.sh build and test, when its sources were fetched into
#     .adopt/jax-finufft (tests/adopt/jax-finufft.sh fetch, where there is network): the wheel
#     built from the sdist with the switch, its own GPU tests beside JAX, /proc/self/maps.
# Each step's log goes to OUTDIR; the summary to OUTDIR/summary.txt.
set -u
out=${1:?usage: adopt-run.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$(dirname "$0")/../.."
top=$PWD
. tests/gpu/run-lib.sh
prefix=$top/build/adopt-prefix
switch=$prefix/lib/cmake/cudaload/cudaload-cuda-stubs.cmake
{
    nvidia-smi --query-gpu=name,driver_version --format=csv
    cmake --version | head -1
    nvcc --version | tail -1
    echo "site: $site"; ls "$libdir"
} > "$out/env.txt" 2>&1
step build make -j16 all build/tests/test_adopt "${cmocka[@]}"
step install make -s install PREFIX="$prefix"
step test_adopt env CUDALOAD_TEST_BUILD="$top/build" CUDALOAD_TEST_TOP="$top" build/tests/test_adopt
if [ -d build/samples-cmake/src ]; then
    step samples-cmake env CUDALOAD_PATH="$libdir" tests/gpu/samples.sh run-cmake build/samples-cmake/src "$out/samples-cmake" "$switch"
    cp "$out/samples-cmake/samples-cmake.txt" "$out/" 2>/dev/null
fi
if [ -d .adopt/jax-finufft ]; then
    # the build and its 32 MB wheel stay under build/; the reports and logs go to OUTDIR
    jf=$top/build/jax-finufft
    rm -rf "$jf"
    step jax-finufft-build env PYTHON="$PY" tests/adopt/jax-finufft.sh build .adopt/jax-finufft "$jf/build" "$switch"
    wheel=$(ls "$jf"/build/wheel/*.whl 2>/dev/null | head -1)
    if [ -n "$wheel" ]; then
        step jax-finufft-test env PYTHON="$PY" tests/adopt/jax-finufft.sh test "$wheel" "$jf/test"
    fi
    mkdir -p "$out/jax-finufft"
    cp "$jf"/build/report.txt "$jf"/test/test-report.txt "$jf"/test/probe.txt "$jf"/test/pytest.log "$out/jax-finufft/" 2>/dev/null
    tail -c 200000 "$jf/build/build.log" > "$out/jax-finufft/build.log.tail" 2>/dev/null
fi
echo "failed steps: $fails" | tee "$out/summary.txt"
grep -h "^rc=" "$out"/*.txt | sort | uniq -c >> "$out/summary.txt"
[ $fails = 0 ]
