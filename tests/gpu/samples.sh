#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/gpu/samples.sh -- real third-party CUDA programs on libcudaload's stubs: NVIDIA's
# cuda-samples, unchanged. Their code is never committed.
#
# By nvcc: vectorAdd, simpleCUBLAS and simpleCUFFT built with nvcc -cudart none against the
# static stubs and libcudaload.a (docs/stubs.md):
#   tests/gpu/samples.sh fetch SRC        copy the three samples and the Common/ headers they
#                                         include from a cuda-samples git dir (CUDA_SAMPLES_GIT,
#                                         default: the search tool's mirror) into SRC (under build/)
#   tests/gpu/samples.sh run SRC OUT      build each; OUT/samples.txt: one line per sample
# By their own CMakeLists, with the one configure option that switches a project to the stubs
# (-DCMAKE_PROJECT_TOP_LEVEL_INCLUDES=<cudaload-cuda-stubs.cmake>):
#   tests/gpu/samples.sh fetch-cmake SRC  the samples' directories, Common/ and cmake/Modules
#   tests/gpu/samples.sh run-cmake SRC OUT SWITCH   configure and build each with SWITCH;
#                                         OUT/samples-cmake.txt: one line per sample
# Each built program's DT_NEEDED is checked (no NVIDIA library) and it is run (120 s limit) in
# the environment given (CUDALOAD_PATH, ...); logs in OUT/<name>.{build,run}.log. Exit 1 when a
# sample fails to build, needs an NVIDIA library, or fails its own check (a non-zero exit, or
# FAIL/failed in its output).
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
SAMPLES="vectorAdd:Samples/0_Introduction/vectorAdd/vectorAdd.cu:cudart
simpleCUBLAS:Samples/4_CUDA_Libraries/simpleCUBLAS/simpleCUBLAS.cpp:cublas cublaslt cudart
simpleCUFFT:Samples/4_CUDA_Libraries/simpleCUFFT/simpleCUFFT.cu:cufft cudart"
CMAKE_SAMPLES="Samples/0_Introduction/vectorAdd
Samples/4_CUDA_Libraries/simpleCUFFT
Samples/4_CUDA_Libraries/simpleCUBLAS
Samples/4_CUDA_Libraries/matrixMulCUBLAS
Samples/4_CUDA_Libraries/conjugateGradient
Samples/4_CUDA_Libraries/cuSolverDn_LinearSolver
Samples/4_CUDA_Libraries/MersenneTwisterGP11213
Samples/4_CUDA_Libraries/jitLto"
usage="usage: samples.sh fetch SRC | run SRC OUT | fetch-cmake SRC | run-cmake SRC OUT SWITCH"
git=${CUDA_SAMPLES_GIT:-/work/.mirror/NVIDIA+cuda-samples/repo}
fails=0

# check_and_run NAME EXE SUMMARY [NOTE]: EXE built (or "" when the build failed); its DT_NEEDED,
# a run in its own directory; one line appended to SUMMARY
check_and_run() {
    local name=$1 exe=$2 summary=$3 note=${4:-} build=ok needed=none run=skipped rc=-
    local logs
    logs=$(dirname "$summary")
    if [ -z "$exe" ]; then
        build=fail
    else
        needed=$(readelf -d "$exe" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ',' | sed 's/,$//')
        if echo "$needed" | tr ',' '\n' | grep -Eq '^lib(cuda|cudart|cublas|cublasLt|cufft|curand|cusolver|cusparse|nvrtc|nvJitLink)\.so'; then
            build=cuda-needed
        fi
        (cd "$(dirname "$exe")" && timeout 120 "./$(basename "$exe")") > "$logs/$name.run.log" 2>&1
        rc=$?
        # (not "error": the samples print "Error amount = 0.000000" and the like when they pass)
        if [ $rc = 0 ] && ! grep -Eq 'FAIL|[Ff]ailed' "$logs/$name.run.log"; then run=pass; else run=fail; fi
    fi
    echo "$name build=$build needed=$needed run=$run rc=$rc$note" | tee -a "$summary"
    [ "$build" = ok ] && [ "$run" = pass ] || fails=$((fails + 1))
}

provenance() {  # SRC COMMIT PATHS
    printf 'NVIDIA/cuda-samples at %s\n%s\n' "$2" "$3" > "$1/PROVENANCE"
    echo "samples.sh: $(echo "$3" | wc -l) samples from NVIDIA/cuda-samples $2 in $1"
}

cmd=${1:?$usage}
case "$cmd" in
fetch)
    src=${2:?$usage}
    commit=$(git --git-dir="$git" rev-parse HEAD) || exit 1
    rm -rf "$src" && mkdir -p "$src" || exit 1
    paths=$(echo "$SAMPLES" | cut -d: -f2)
    # the Common/ headers the samples include (helper_cuda.h pulls the others)
    for f in $paths Common/helper_cuda.h Common/helper_string.h Common/helper_functions.h Common/helper_image.h \
             Common/helper_timer.h Common/exception.h; do
        mkdir -p "$src/$(dirname "$f")"
        git --git-dir="$git" show "$commit:$f" > "$src/$f" || exit 1
    done
    provenance "$src" "$commit" "$paths"
    ;;
fetch-cmake)
    src=${2:?$usage}
    commit=$(git --git-dir="$git" rev-parse HEAD) || exit 1
    rm -rf "$src" && mkdir -p "$src" || exit 1
    # shellcheck disable=SC2086
    git --git-dir="$git" archive "$commit" $CMAKE_SAMPLES Common cmake/Modules | tar -x -C "$src" || exit 1
    provenance "$src" "$commit" "$CMAKE_SAMPLES"
    ;;
run)
    src=${2:?$usage}
    out=${3:?$usage}
    mkdir -p "$out"
    NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
    arch=${SAMPLES_ARCH:--arch=native}
    stubs=${STUB_DIR:-$top/build/stubs}
    core=${CORE_LIB:-$top/build/libcudaload.a}
    : > "$out/samples.txt"
    echo "env: CUDALOAD_PATH=${CUDALOAD_PATH:-} NVCC=$NVCC $arch; sources: $(head -1 "$src/PROVENANCE")" | tee -a "$out/samples.txt"
    while IFS=: read -r name path libs; do
        exe=$out/$name
        links=""
        for l in $libs; do links="$links $stubs/libcudaload-$l.a"; done
        # shellcheck disable=SC2086
        $NVCC -cudart none -O2 $arch -I"$src/Common" -o "$exe" "$src/$path" $links "$core" -ldl -lpthread \
            > "$out/$name.build.log" 2>&1 || exe=""
        check_and_run "$name" "$exe" "$out/samples.txt"
    done <<< "$SAMPLES"
    echo "failed: $fails" | tee -a "$out/samples.txt"
    ;;
run-cmake)
    src=${2:?$usage}
    out=${3:?$usage}
    switch=${4:?$usage}
    # absolute: CMake reads CMAKE_PROJECT_TOP_LEVEL_INCLUDES from the build directory
    switch=$(realpath "$switch") || exit 1
    mkdir -p "$out"
    out=$(cd "$out" && pwd)
    : > "$out/samples-cmake.txt"
    echo "cmake: $(cmake --version | head -1); switch: $switch; env: CUDALOAD_PATH=${CUDALOAD_PATH:-}; sources: $(head -1 "$src/PROVENANCE")" \
        | tee -a "$out/samples-cmake.txt"
    while read -r path; do
        name=$(basename "$path")
        b=$out/build/$name
        exe=$b/$name
        { cmake -S "$src/$path" -B "$b" -DCMAKE_PROJECT_TOP_LEVEL_INCLUDES="$switch" &&
          cmake --build "$b" -j "$(nproc)"; } > "$out/$name.build.log" 2>&1 || exe=""
        # the switch's lists, from the cache it leaves (cudaload-cuda-stubs.cmake's header)
        switched=$(sed -n 's/^CUDALOAD_STUBS_SWITCHED:INTERNAL=//p' "$b/CMakeCache.txt" 2>/dev/null)
        by_path=$(sed -n 's/^CUDALOAD_STUBS_BY_PATH:INTERNAL=//p' "$b/CMakeCache.txt" 2>/dev/null)
        left=$(sed -n 's/^CUDALOAD_STUBS_LEFT:INTERNAL=//p' "$b/CMakeCache.txt" 2>/dev/null)
        check_and_run "$name" "$exe" "$out/samples-cmake.txt" " switched=[$switched] by_path=[$by_path] left=[$left]"
    done <<< "$CMAKE_SAMPLES"
    echo "failed: $fails" | tee -a "$out/samples-cmake.txt"
    ;;
*) echo "samples.sh: unknown command $cmd; $usage" >&2; exit 2 ;;
esac
[ $fails = 0 ]
