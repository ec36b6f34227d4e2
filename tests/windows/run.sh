#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/windows/run.sh -- `make check-windows`: the Windows loader tests under wine.
#
# Gets the real win_amd64 wheels (pip download, kept in WIN_WHEELS, default
# $WB/wheels: nvidia-cuda-runtime 13.x and nvidia-cuda-runtime-cu12), unpacks
# them into the trees tests/windows/test_windows.c describes, runs test_windows.exe under wine
# (every case in its own process), then cudaload-probe.exe --json on the wheels, checked with
# python3's json module. Environment: WB (the Windows build dir, absolute), WINE, WINEPREFIX
# (default $WB/wineprefix, made once with wineboot), WIN_WHEELS, PYTHON.
set -euo pipefail
: "${WB:?WB: the Windows build directory (make check-windows sets it)}"
wine=${WINE:-wine}
python=${PYTHON:-python3}
export WINEPREFIX=${WINEPREFIX:-$WB/wineprefix} WINEDEBUG=${WINEDEBUG:--all}
# the wheels are kept under the build directory (a CI cache can keep build/win/wheels or set WIN_WHEELS)
WIN_WHEELS=${WIN_WHEELS:-$WB/wheels}
start=$SECONDS
log() { echo "check-windows: $*"; }

# ---- the tools: missing ones skip (exit 0) on a developer's machine, fail on CI (CI=true) ----
missing=
[ -x "$WB/tests/test_windows.exe" ] || missing="$missing mingw-w64 (x86_64-w64-mingw32-gcc)"
command -v "$wine" >/dev/null 2>&1 || missing="$missing wine64"
command -v unzip >/dev/null 2>&1 || missing="$missing unzip"
"$python" -m pip --version >/dev/null 2>&1 || missing="$missing python3-pip"
if [ -n "$missing" ]; then
    if [ "${CI:-}" = true ]; then
        echo "check-windows: FAILED: missing:$missing (apt-get install mingw-w64 wine64 unzip python3-pip)" >&2
        exit 1
    fi
    echo "SKIP: check-windows: missing:$missing (apt-get install mingw-w64 wine64 unzip python3-pip)"
    exit 0
fi

# ---- the wheels (downloaded once; nothing pinned: the newest, kept until WIN_WHEELS is removed) ----
mkdir -p "$WIN_WHEELS"
for pkg in nvidia_cuda_runtime nvidia_cuda_runtime_cu12; do
    if ! ls "$WIN_WHEELS"/$pkg-[0-9]*-win_amd64.whl >/dev/null 2>&1; then
        log "downloading ${pkg//_/-} (win_amd64)"
        "$python" -m pip download -q --only-binary=:all: --platform win_amd64 --python-version 3.11 --no-deps \
            -d "$WIN_WHEELS" "${pkg//_/-}"
    fi
done
whl13=$(ls "$WIN_WHEELS"/nvidia_cuda_runtime-[0-9]*-win_amd64.whl | sort -V | tail -1)
whl12=$(ls "$WIN_WHEELS"/nvidia_cuda_runtime_cu12-[0-9]*-win_amd64.whl | sort -V | tail -1)
# the wheel's version -> cudaRuntimeGetVersion's answer: 13.5.37 -> 13050, 12.9.79 -> 12090
rtver() { basename "$1" | sed -E 's/^[a-z_0-9]+-([0-9]+)\.([0-9]+)\..*/\1 \2/' | awk '{print $1*1000+$2*10}'; }
v13=$(rtver "$whl13") v12=$(rtver "$whl12")
log "wheels: $(basename "$whl13") ($v13), $(basename "$whl12") ($v12)"

# ---- the trees ----
t=$WB/trees
rm -rf "$t"
mkdir -p "$t/cu13" "$t/cu12"
unzip -q -o "$whl13" 'nvidia/*' -d "$t/cu13"
unzip -q -o "$whl12" 'nvidia/*' -d "$t/cu12"
dll12=$t/cu12/nvidia/cuda_runtime/bin/cudart64_12.dll
[ -f "$t/cu13/nvidia/cu13/bin/x86_64/cudart64_13.dll" ] || { echo "check-windows: cudart64_13.dll not in $whl13" >&2; exit 1; }
[ -f "$dll12" ] || { echo "check-windows: cudart64_12.dll not in $whl12" >&2; exit 1; }
mkdir -p "$t/cudapath/bin" "$t/conda/Library/bin" "$t/venv/Lib/site-packages/nvidia/cuda_runtime/bin" "$t/cwd" \
    "$t/bad-text/nvidia/cu13/bin/x86_64" "$t/bad-elf/nvidia/cu13/bin/x86_64"
for d in cudapath/bin conda/Library/bin venv/Lib/site-packages/nvidia/cuda_runtime/bin cwd; do cp "$dll12" "$t/$d/"; done
mkdir -p "$t/cudapath13/bin/x64"
cp "$t/cu13/nvidia/cu13/bin/x86_64/cudart64_13.dll" "$t/cudapath13/bin/x64/"
mkdir -p "$t/deps/nvidia/cuda_runtime/bin"
cp "$WB/tests/deps/cudart64_12.dll" "$WB/tests/deps/cl_sibling.dll" "$t/deps/nvidia/cuda_runtime/bin/"
echo "not a library" > "$t/bad-text/nvidia/cu13/bin/x86_64/cudart64_13.dll"
cp /bin/true "$t/bad-elf/nvidia/cu13/bin/x86_64/cudart64_13.dll"

# ---- wine ----
if [ ! -f "$WINEPREFIX/system.reg" ]; then
    log "creating the wine prefix $WINEPREFIX (once)"
    mkdir -p "$WINEPREFIX"
    # no display needed: wineboot without a desktop; DISPLAY unset so no X connection is tried
    DISPLAY= "$wine" wineboot -i >/dev/null 2>&1 || true
    # wineboot returns before the wineserver has written the registry: wait for it to exit
    wineserver=$(command -v wineserver || command -v "$(dirname "$wine")/wineserver" || echo /usr/lib/wine/wineserver)
    "$wineserver" -w 2>/dev/null || true
    [ -f "$WINEPREFIX/system.reg" ] || { echo "check-windows: wineboot did not create $WINEPREFIX" >&2; exit 1; }
fi
winpath() { echo "Z:$1"; }

rc=0
CL_WIN_TREES=$(winpath "$t") CL_WIN_CU13_VERSION=$v13 CL_WIN_CU12_VERSION=$v12 WINEDLLOVERRIDES="nvcuda=n" \
    "$wine" "$WB/tests/test_windows.exe" || rc=1

# ---- the probe: --json on the wheels, valid JSON with the cu12 runtime found ----
cp "$WB/tests/nvcuda.dll" "$WB/nvcuda.dll"
json=$WB/probe.json
WINEDLLOVERRIDES="nvcuda=n" FAKE_CUDA_VERSION=12080 "$wine" "$WB/cudaload-probe.exe" --json \
    --root "$(winpath "$t/cu13")" --root "$(winpath "$t/cu12")" > "$json" || true
if "$python" -m json.tool "$json" >/dev/null && "$python" - "$json" "$v12" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
libs = doc["libraries"]
rt = libs["cudart"]
assert rt["status_code"] == "CUDALOAD_OK", rt["status_code"]
assert rt["path"].lower().endswith("/cu12/nvidia/cuda_runtime/bin/cudart64_12.dll"), rt["path"]
assert rt["version"] == int(sys.argv[2]), rt["version"]
assert libs["cuda"]["path"].lower().endswith("/nvcuda.dll"), libs["cuda"]["path"]
# the CUDA 13 wheel came first and was skipped: the fake driver runs CUDA 12.8
skipped = [c["reason_code"] for c in rt["candidates"] if (c["path"] or "").lower().endswith("/cudart64_13.dll")]
assert skipped == ["DRIVER_TOO_OLD"], skipped
PY
then echo "[  OK  ] probe --json: valid JSON, cudart64_13.dll skipped (driver too old), cudart64_12.dll taken"
else echo "[FAILED] probe --json ($json)"; rc=1; fi
# ---- the probe with a CUDA 13 driver: cudart64_13.dll found in the cu13 wheel layout ----
# Its cudaRuntimeGetVersion needs a real driver (NVIDIA's private export tables; test_windows.c's
# wheel_cu13 says why): with the fake one the probe reports it as VERSION_FAILED and takes the cu12
# runtime. CL_WIN_CU13_EXPECT=ok (a real driver) asserts it taken with the wheel's version.
json13=$WB/probe13.json
WINEDLLOVERRIDES="nvcuda=n" FAKE_CUDA_VERSION=13050 "$wine" "$WB/cudaload-probe.exe" --json \
    --root "$(winpath "$t/cu13")" --root "$(winpath "$t/cu12")" > "$json13" || true
if "$python" -m json.tool "$json13" >/dev/null && "$python" - "$json13" "$v13" "${CL_WIN_CU13_EXPECT:-}" <<'PY'
import json, sys
rt = json.load(open(sys.argv[1]))["libraries"]["cudart"]
dll13 = "/cu13/nvidia/cu13/bin/x86_64/cudart64_13.dll"
seen = [c["reason_code"] for c in rt["candidates"] if (c["path"] or "").lower().endswith(dll13)]
assert rt["status_code"] == "CUDALOAD_OK", rt["status_code"]
if sys.argv[3] == "ok":
    assert rt["path"].lower().endswith(dll13), rt["path"]
    assert rt["version"] == int(sys.argv[2]), rt["version"]
else:
    assert seen == ["VERSION_FAILED"], seen
    assert rt["path"].lower().endswith("/cudart64_12.dll"), rt["path"]
PY
then echo "[  OK  ] probe --json (CUDA 13 driver): valid JSON, cudart64_13.dll found in nvidia/cu13/bin/x86_64"
else echo "[FAILED] probe --json (CUDA 13 driver) ($json13)"; rc=1; fi
# ---- the bundled kernels: the Linux build's fatbin, embedded whole (WIN_FATBIN; none without nvcc) ----
if [ -n "${WIN_FATBIN:-}" ]; then
    if "$python" - "$json13" "$(wc -c < "$WIN_FATBIN")" <<'PY'
import json, sys
k = json.load(open(sys.argv[1]))["kernels"]
assert k["fatbin_bytes"] == int(sys.argv[2]), (k["fatbin_bytes"], sys.argv[2])
PY
    then echo "[  OK  ] the bundled kernels' fatbin embedded ($(wc -c < "$WIN_FATBIN") bytes, the Linux build's)"
    else echo "[FAILED] the bundled kernels' fatbin ($json13)"; rc=1; fi
fi
log "done in $((SECONDS - start)) s"
exit $rc
