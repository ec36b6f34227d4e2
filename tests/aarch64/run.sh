#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/aarch64/run.sh -- `make check-aarch64`: the aarch64 build's loader tests under qemu-user.
#
# Gets NVIDIA's real manylinux aarch64 wheels (pip download, kept in ARM_WHEELS, default
# ~/.cache/pip/cudaload-arm-wheels: nvidia-cuda-runtime 13.x and nvidia-cuda-runtime-cu12), unpacks
# them into the trees tests/aarch64/test_aarch64.c describes, runs test_aarch64 under qemu (every
# case in its own process), then cudaload-probe --json on the wheels, checked with python3's json
# module. Environment: AB (the aarch64 build dir, absolute), QEMU (qemu-aarch64-static),
# SYSROOT (the aarch64 libc: /usr/aarch64-linux-gnu), ARM_WHEELS, PYTHON, CUDA_HOME (an x86-64
# libcudart.so.13 for the other-machine case: $CUDA_HOME/lib64).
set -euo pipefail
: "${AB:?AB: the aarch64 build directory (make check-aarch64 sets it)}"
qemu=${QEMU:-qemu-aarch64-static}
[ -n "$qemu" ] || qemu=qemu-aarch64-static
sysroot=${SYSROOT:-/usr/aarch64-linux-gnu}
python=${PYTHON:-python3}
cuda=${CUDA_HOME:-/usr/local/cuda}
if [ -z "${ARM_WHEELS:-}" ]; then
    ARM_WHEELS=${PIP_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/pip}/cudaload-arm-wheels
fi
start=$SECONDS
log() { echo "check-aarch64: $*"; }

# ---- the tools: missing ones skip (exit 0) on a developer's machine, fail on CI (CI=true) ----
missing=
[ -x "$AB/tests/test_aarch64" ] || missing="$missing gcc-aarch64-linux-gnu libc6-dev-arm64-cross (aarch64-linux-gnu-gcc)"
command -v "$qemu" >/dev/null 2>&1 || missing="$missing qemu-user-static"
[ -d "$sysroot/lib" ] || missing="$missing libc6-arm64-cross ($sysroot)"
command -v unzip >/dev/null 2>&1 || missing="$missing unzip"
"$python" -m pip --version >/dev/null 2>&1 || missing="$missing python3-pip"
if [ -n "$missing" ]; then
    if [ "${CI:-}" = true ]; then
        echo "check-aarch64: FAILED: missing:$missing" >&2
        exit 1
    fi
    echo "SKIP: check-aarch64: missing:$missing (apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static unzip python3-pip)"
    exit 0
fi

# ---- the wheels (downloaded once; nothing pinned: the newest, kept until ARM_WHEELS is removed) ----
mkdir -p "$ARM_WHEELS"
for pkg in nvidia_cuda_runtime nvidia_cuda_runtime_cu12; do
    if ! ls "$ARM_WHEELS"/$pkg-[0-9]*aarch64.whl >/dev/null 2>&1; then
        log "downloading ${pkg//_/-} (manylinux aarch64)"
        "$python" -m pip download -q --only-binary=:all: --platform manylinux2014_aarch64 \
            --platform manylinux_2_17_aarch64 --platform manylinux_2_28_aarch64 --python-version 3.12 --no-deps \
            -d "$ARM_WHEELS" "${pkg//_/-}"
    fi
done
whl13=$(ls "$ARM_WHEELS"/nvidia_cuda_runtime-[0-9]*aarch64.whl | sort -V | tail -1)
whl12=$(ls "$ARM_WHEELS"/nvidia_cuda_runtime_cu12-[0-9]*aarch64.whl | sort -V | tail -1)
# the wheel's version -> cudaRuntimeGetVersion's answer: 13.5.37 -> 13050, 12.9.79 -> 12090
rtver() { basename "$1" | sed -E 's/^[a-z_0-9]+-([0-9]+)\.([0-9]+)\..*/\1 \2/' | awk '{print $1*1000+$2*10}'; }
v13=$(rtver "$whl13") v12=$(rtver "$whl12")
log "wheels: $(basename "$whl13") ($v13), $(basename "$whl12") ($v12)"

# ---- the trees ----
t=$AB/trees
rm -rf "$t"
mkdir -p "$t/cu13" "$t/cu12"
unzip -q -o "$whl13" 'nvidia/*' -d "$t/cu13"
unzip -q -o "$whl12" 'nvidia/*' -d "$t/cu12"
so13=$t/cu13/nvidia/cu13/lib/libcudart.so.13
[ -f "$so13" ] || { echo "check-aarch64: libcudart.so.13 not in $whl13" >&2; exit 1; }
[ -f "$t/cu12/nvidia/cuda_runtime/lib/libcudart.so.12" ] || { echo "check-aarch64: libcudart.so.12 not in $whl12" >&2; exit 1; }
for d in venv/lib/python3.12/site-packages/nvidia/cu13/lib home-both/targets/sbsa-linux/lib \
         home-both/targets/aarch64-linux/lib home-jetson/targets/aarch64-linux/lib override; do
    mkdir -p "$t/$d" && cp "$so13" "$t/$d/"
done
mkdir -p "$t/bad-arch/nvidia/cu13/lib"
cp -L "$cuda/lib64/libcudart.so.13" "$t/bad-arch/nvidia/cu13/lib/libcudart.so.13"

run() { "$qemu" -L "$sysroot" "$@"; }
rc=0 passed=0 failed=0
export CL_ARM_TREES=$t CL_ARM_DRIVER=$AB/fake/libcuda.so.1 CL_ARM_CU13_VERSION=$v13 CL_ARM_CU12_VERSION=$v12
for c in $(LD_LIBRARY_PATH=$AB run "$AB/tests/test_aarch64" --list); do
    # one emulated process per case, each with a time limit (an emulated hang fails, never waits)
    if LD_LIBRARY_PATH=$AB timeout 120 "$qemu" -L "$sysroot" "$AB/tests/test_aarch64" "$c"; then
        echo "[  OK  ] $c"; passed=$((passed + 1))
    else
        echo "[FAILED] $c"; failed=$((failed + 1)); rc=1
    fi
done
echo "aarch64: $passed passed, $failed failed"
[ $((passed + failed)) -gt 0 ] || { echo "check-aarch64: no case ran" >&2; rc=1; }

# ---- the probe: --json on both wheels, a 12.8 driver: cu13 skipped, cu12 taken ----
json=$AB/probe.json
CUDALOAD_DRIVER_PATH=$AB/fake/libcuda.so.1 FAKE_CUDA_VERSION=12080 LD_LIBRARY_PATH=$AB \
    run "$AB/cudaload-probe" --json --no-selftest --root "$t/cu13" --root "$t/cu12" > "$json" || true
if "$python" - "$json" "$v12" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
libs = doc["libraries"]
rt = libs["cudart"]
assert rt["status_code"] == "CUDALOAD_OK", rt["status_code"]
assert rt["path"].endswith("/cu12/nvidia/cuda_runtime/lib/libcudart.so.12"), rt["path"]
assert rt["version"] == int(sys.argv[2]), rt["version"]
assert libs["cuda"]["path"].endswith("/fake/libcuda.so.1"), libs["cuda"]["path"]
skipped = [c["reason_code"] for c in rt["candidates"] if (c["path"] or "").endswith("/cu13/nvidia/cu13/lib/libcudart.so.13")]
assert skipped == ["DRIVER_TOO_OLD"], skipped
PY
then echo "[  OK  ] probe --json: valid JSON, libcudart.so.13 skipped (driver too old), libcudart.so.12 taken"
else echo "[FAILED] probe --json ($json)"; rc=1; fi
# ---- the bundled kernels: the native build's fatbin, embedded whole (ARM_FATBIN; none without nvcc) ----
if [ -n "${ARM_FATBIN:-}" ]; then
    if "$python" - "$json" "$(wc -c < "$ARM_FATBIN")" <<'PY'
import json, sys
k = json.load(open(sys.argv[1]))["kernels"]
assert k["fatbin_bytes"] == int(sys.argv[2]), (k["fatbin_bytes"], sys.argv[2])
PY
    then echo "[  OK  ] the bundled kernels' fatbin embedded ($(wc -c < "$ARM_FATBIN") bytes, the x86-64 build's)"
    else echo "[FAILED] the bundled kernels' fatbin ($json)"; rc=1; fi
fi
log "done in $((SECONDS - start)) s"
exit $rc
