#!/usr/bin/env bash
# tests/gpu/samples-cmake.sh -- NVIDIA's cuda-samples built by their own CMakeLists, unchanged,
# with the one configure option that switches a project to libcudaload's stubs
# (-DCMAKE_PROJECT_TOP_LEVEL_INCLUDES=<cudaload-cuda-stubs.cmake>; docs/stubs.md). Their code is
# never committed:
#
#   tests/gpu/samples-cmake.sh fetch SRC         the samples' directories, Common/ and cmake/Modules
#                                                from a cuda-samples git dir (CUDA_SAMPLES_GIT,
#                                                default: the search tool's mirror) into SRC
#   tests/gpu/samples-cmake.sh run SRC OUT SWITCH   configure and build each with SWITCH, check
#                                                its DT_NEEDED (no NVIDIA library), run it (120 s
#                                                limit) in the environment given (CUDALOAD_PATH,
#                                                ...); OUT/samples-cmake.txt: one line per sample
# Exit 1 when a sample fails to configure or build, needs an NVIDIA library, or fails its own
# check (a non-zero exit, or FAIL/failed in its output).
set -u
SAMPLES="Samples/0_Introduction/vectorAdd
Samples/4_CUDA_Libraries/simpleCUFFT
Samples/4_CUDA_Libraries/simpleCUBLAS
Samples/4_CUDA_Libraries/matrixMulCUBLAS
Samples/4_CUDA_Libraries/conjugateGradient
Samples/4_CUDA_Libraries/cuSolverDn_LinearSolver
Samples/4_CUDA_Libraries/MersenneTwisterGP11213
Samples/4_CUDA_Libraries/jitLto"
cmd=${1:?usage: samples-cmake.sh fetch SRC | run SRC OUT SWITCH}
case "$cmd" in
fetch)
    src=${2:?usage: samples-cmake.sh fetch SRC}
    git=${CUDA_SAMPLES_GIT:-/work/.mirror/NVIDIA+cuda-samples/repo}
    commit=$(git --git-dir="$git" rev-parse HEAD) || exit 1
    rm -rf "$src" && mkdir -p "$src" || exit 1
    # shellcheck disable=SC2086
    git --git-dir="$git" archive "$commit" $SAMPLES Common cmake/Modules | tar -x -C "$src" || exit 1
    printf 'NVIDIA/cuda-samples at %s\n%s\n' "$commit" "$SAMPLES" > "$src/PROVENANCE"
    echo "samples-cmake.sh: $(echo "$SAMPLES" | wc -l) samples from NVIDIA/cuda-samples $commit in $src"
    ;;
run)
    src=${2:?usage: samples-cmake.sh run SRC OUT SWITCH}
    out=${3:?usage: samples-cmake.sh run SRC OUT SWITCH}
    switch=${4:?usage: samples-cmake.sh run SRC OUT SWITCH}
    mkdir -p "$out"
    out=$(cd "$out" && pwd)
    fails=0
    : > "$out/samples-cmake.txt"
    echo "cmake: $(cmake --version | head -1); switch: $switch; env: CUDALOAD_PATH=${CUDALOAD_PATH:-}; sources: $(head -1 "$src/PROVENANCE")" \
        | tee -a "$out/samples-cmake.txt"
    while read -r path; do
        name=$(basename "$path")
        b=$out/build/$name
        build=ok needed=none run=skipped rc=-
        if ! { cmake -S "$src/$path" -B "$b" -DCMAKE_PROJECT_TOP_LEVEL_INCLUDES="$switch" &&
               cmake --build "$b" -j "$(nproc)"; } > "$out/$name.build.log" 2>&1; then
            build=fail
        else
            exe=$b/$name
            needed=$(readelf -d "$exe" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ',' | sed 's/,$//')
            if echo "$needed" | tr ',' '\n' | grep -Eq '^lib(cuda|cudart|cublas|cublasLt|cufft|curand|cusolver|cusparse|nvrtc|nvJitLink)\.so'; then
                build=cuda-needed
            fi
            (cd "$b" && timeout 120 "./$name") > "$out/$name.run.log" 2>&1
            rc=$?
            # (not "error": the samples print "Error amount = 0.000000" and the like when they pass)
            if [ $rc = 0 ] && ! grep -Eq 'FAIL|[Ff]ailed' "$out/$name.run.log"; then run=pass; else run=fail; fi
        fi
        switched=$(sed -n 's/^-- cudaload: switched to libcudaload.s stubs ([^)]*): //p' "$out/$name.build.log" | head -1)
        echo "$name build=$build needed=$needed run=$run rc=$rc switched=[$switched]" | tee -a "$out/samples-cmake.txt"
        [ "$build" = ok ] && [ "$run" = pass ] || fails=$((fails + 1))
    done <<< "$SAMPLES"
    echo "failed: $fails" | tee -a "$out/samples-cmake.txt"
    [ $fails = 0 ]
    ;;
*) echo "samples-cmake.sh: unknown command $cmd" >&2; exit 2 ;;
esac
