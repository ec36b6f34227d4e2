#!/usr/bin/env bash
# tests/gpu/samples.sh -- real third-party CUDA programs on libcudaload's stubs: NVIDIA's
# cuda-samples vectorAdd, simpleCUBLAS and simpleCUFFT, unchanged, built with nvcc -cudart none
# against the static stubs and libcudaload.a (docs/stubs.md). Their code is never committed:
#
#   tests/gpu/samples.sh fetch SRC        copy the three samples and the Common/ headers they
#                                         include from a cuda-samples git dir (CUDA_SAMPLES_GIT,
#                                         default: the search tool's mirror) into SRC (under build/)
#   tests/gpu/samples.sh run SRC OUT      build each, check its DT_NEEDED (no CUDA library), run it
#                                         (60 s limit) with the environment given (CUDALOAD_PATH...);
#                                         OUT/samples.txt: one line per sample; logs OUT/<name>.*.log
# Exit 1 when a sample fails to build, needs a CUDA library, or fails its own check.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
SAMPLES="vectorAdd:Samples/0_Introduction/vectorAdd/vectorAdd.cu:cudart
simpleCUBLAS:Samples/4_CUDA_Libraries/simpleCUBLAS/simpleCUBLAS.cpp:cublas cublaslt cudart
simpleCUFFT:Samples/4_CUDA_Libraries/simpleCUFFT/simpleCUFFT.cu:cufft cudart"
cmd=${1:?usage: samples.sh fetch SRC | run SRC OUT}
case "$cmd" in
fetch)
    src=${2:?usage: samples.sh fetch SRC}
    git=${CUDA_SAMPLES_GIT:-/work/.mirror/NVIDIA+cuda-samples/repo}
    commit=$(git --git-dir="$git" rev-parse HEAD) || exit 1
    rm -rf "$src" && mkdir -p "$src" || exit 1
    paths=$(echo "$SAMPLES" | cut -d: -f2)
    # the Common/ headers the samples include (helper_cuda.h pulls the others)
    for f in $paths Common/helper_cuda.h Common/helper_string.h Common/helper_functions.h Common/helper_image.h \
             Common/helper_timer.h Common/exception.h; do
        mkdir -p "$src/$(dirname "$f")"
        git --git-dir="$git" show "$commit:$f" > "$src/$f" || exit 1
    done
    printf 'NVIDIA/cuda-samples at %s\n%s\n' "$commit" "$paths" > "$src/PROVENANCE"
    echo "samples.sh: $(echo "$paths" | wc -l) samples from NVIDIA/cuda-samples $commit in $src"
    ;;
run)
    src=${2:?usage: samples.sh run SRC OUT}
    out=${3:?usage: samples.sh run SRC OUT}
    mkdir -p "$out"
    NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
    arch=${SAMPLES_ARCH:--arch=native}
    stubs=${STUB_DIR:-$top/build/stubs}
    core=${CORE_LIB:-$top/build/libcudaload.a}
    fails=0
    : > "$out/samples.txt"
    echo "env: CUDALOAD_PATH=${CUDALOAD_PATH:-} NVCC=$NVCC $arch; sources: $(head -1 "$src/PROVENANCE")" | tee -a "$out/samples.txt"
    while IFS=: read -r name path libs; do
        exe=$out/$name
        links=""
        for l in $libs; do links="$links $stubs/libcudaload-$l.a"; done
        build=ok needed=none run=skipped rc=-
        if ! $NVCC -cudart none -O2 $arch -I"$src/Common" -o "$exe" "$src/$path" $links "$core" -ldl -lpthread \
             > "$out/$name.build.log" 2>&1; then
            build=fail
        else
            needed=$(readelf -d "$exe" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ',' | sed 's/,$//')
            if echo "$needed" | tr ',' '\n' | grep -Eq '^lib(cu|nv)'; then build=cuda-needed; fi
            timeout 60 "$exe" > "$out/$name.run.log" 2>&1
            rc=$?
            if [ $rc = 0 ] && ! grep -Eqi 'FAIL|error' "$out/$name.run.log"; then run=pass; else run=fail; fi
        fi
        echo "$name build=$build needed=$needed run=$run rc=$rc" | tee -a "$out/samples.txt"
        [ "$build" = ok ] && [ "$run" = pass ] || fails=$((fails + 1))
    done <<< "$SAMPLES"
    echo "failed: $fails" | tee -a "$out/samples.txt"
    [ $fails = 0 ]
    ;;
*) echo "samples.sh: unknown command $cmd" >&2; exit 2 ;;
esac
