#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/gpu/adopt-projects-run.sh OUTDIR [NAME...] -- third-party projects built from their
# published sources, unchanged, with the CMake switch, tested on a GPU machine beside torch:
#   llama-cpp-python  tests/adopt/llama-cpp-python.sh (its PyPI sdist, GGML_CUDA=on)
#   lightgbm          tests/adopt/lightgbm.sh (its PyPI sdist, USE_CUDA=ON, NCCL by FindNCCL)
#   bitsandbytes      tests/adopt/bitsandbytes.sh (its source at a release tag, COMPUTE_BACKEND=cuda)
# Each was fetched and built where there is network and time (the scripts' fetch and build
# phases, into .adopt/<name>/: the fetch directory and, under .adopt/<name>/switch/wheel, the
# wheel built with the switch, or under .../switch/wheel-slim the slimmer copy a build made to
# be carried: llama-cpp-python's); this runs each one's test phase (the GPU machine has no network:
# the torch venv's python, offline), which checks its DT_NEEDED-free library against its own
# tests, a probe against torch or the CPU, and /proc/self/maps (one copy of each NVIDIA library,
# torch's). NAME... picks some (default: the three). Each one's files go to OUTDIR/<name>/; the
# summary, one line each, to OUTDIR/summary.txt. Exit 1 when one failed or was not there.
set -u
out=${1:?usage: adopt-projects-run.sh OUTDIR [NAME...]}
shift
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$(dirname "$0")/../.."
. tests/gpu/run-lib.sh
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(llama-cpp-python lightgbm bitsandbytes)
: > "$out/summary.txt"
for name in "${names[@]}"; do
    fetch=.adopt/$name/fetch
    [ -d "$fetch" ] || fetch=.adopt/$name   # (a fetch directory of its own, or .adopt/<name> itself)
    wheel=$(ls .adopt/"$name"/switch/wheel-slim/*.whl .adopt/"$name"/switch/wheel/*.whl 2>/dev/null | head -1)
    if [ -z "$wheel" ]; then
        echo "$name: MISSING (no .adopt/$name/switch/wheel/*.whl: run tests/adopt/$name.sh fetch and build first)" | tee -a "$out/summary.txt"
        fails=$((fails + 1))
        continue
    fi
    rm -rf "build/adopt-test-$name"
    step "$name" env PYTHON="$PY" tests/adopt/"$name".sh test "$wheel" "build/adopt-test-$name" "$fetch"
    rc=$(tail -1 "$out/$name.txt")
    mkdir -p "$out/$name"
    # the reports (not the installed site or the model): what test-report.txt, probe.txt and
    # the logs say, and the maps each process recorded
    (cd "build/adopt-test-$name" && cp -r ./*.txt ./*.xml ./*.log maps "$out/$name/" 2>/dev/null)
    echo "$name: $rc; $(grep -m1 -iE '^(pytest|tests?)[: ]' "build/adopt-test-$name/test-report.txt" 2>/dev/null)" | tee -a "$out/summary.txt"
done
echo "failed: $fails" | tee -a "$out/summary.txt"
[ "$fails" = 0 ]
