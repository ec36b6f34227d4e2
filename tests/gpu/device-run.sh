#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/gpu/device-run.sh OUTDIR -- everything that needs the GPU machine, in one go:
# build, `make check-gpu`, the probe (wheels vs system), `make bench`, and the kernels'
# resource report. Used on the H100 machine (driver 580, torch venv in /opt/torch/.venv);
# each step's log goes to OUTDIR. cmocka may come from .devdeps/ (that machine has none).
set -u
out=${1:?usage: device-run.sh OUTDIR}
mkdir -p "$out"
cd "$(dirname "$0")/../.."
PY=${PYTHON:-/opt/torch/.venv/bin/python3}
[ -x "$PY" ] || PY=python3
export PYTHON=$PY
export CUDALOAD_GPU_SITE=${CUDALOAD_GPU_SITE:-$($PY -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')}
mk=(make -j16)
if [ -f .devdeps/include/cmocka.h ]; then
    mk+=(CMOCKA_CFLAGS=-I$PWD/.devdeps/include "CMOCKA_LIBS=-L$PWD/.devdeps/lib -lcmocka -Wl,-rpath,$PWD/.devdeps/lib")
fi
step() { local name=$1; shift; echo "=== $name: $*"; { time "$@"; } > "$out/$name.txt" 2>&1; echo "rc=$?" >> "$out/$name.txt"; tail -3 "$out/$name.txt"; }
{
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
    cat /proc/driver/nvidia/version
    echo "site: $CUDALOAD_GPU_SITE"; ls "$CUDALOAD_GPU_SITE/nvidia/cu13/lib" 2>&1
    ldconfig -p | grep -E 'libcudart|libcublas|libcuda\.so'
    "$PY" -c 'import torch; print("torch", torch.__version__)'
    gcc --version | head -1; nvcc --version | tail -1
} > "$out/env.txt" 2>&1
step build "${mk[@]}" all
step check-gpu "${mk[@]}" check-gpu
step probe ./build/cudaload-probe --root "$CUDALOAD_GPU_SITE"
step probe-system env CUDALOAD_SOURCES=system ./build/cudaload-probe
step probe-nonroot ./build/cudaload-probe
step probe-json ./build/cudaload-probe --json --root "$CUDALOAD_GPU_SITE"
step probe-llp env LD_LIBRARY_PATH=/usr/local/cuda/lib64 ./build/cudaload-probe --root "$CUDALOAD_GPU_SITE" --no-selftest
# The probe on the GPU machine, checked: the wheels' cu13 libraries,
# the driver's CUDA version and branch, the device as sm_XY with SASS, the self-test passed.
check_probe() {
    local f=$out/probe-json.txt ok=1
    "$PY" - "$f" "$CUDALOAD_GPU_SITE" <<'PYEOF' || ok=0
import json, os, re, sys
text = open(sys.argv[1]).read()
j = json.loads(text[text.index("{"):text.rindex("}") + 1])
lib = os.path.join(sys.argv[2], "nvidia", "cu13", "lib")
bad = []
for name in ("cudart", "cublasLt", "cublas"):
    l = j["libraries"][name]
    if l["status"] != "loaded" or os.path.dirname(os.path.realpath(l["path"])) != os.path.realpath(lib):
        bad.append(f"{name}: {l['status']} {l.get('path')} (want {lib})")
if j["driver"]["cuda_version"] < 13000 or not re.match(r"\d{3}\.", str(j["driver"].get("branch") or "")):
    bad.append(f"driver: {j['driver']}")
d = j["devices"][0] if j["devices"] else {}
cc = d.get("compute_capability") or []
if len(cc) != 2 or not all(isinstance(v, int) and v > 0 for v in cc[:1]) or d.get("kernels") != "sass":
    bad.append(f"device: {d}")
st = j.get("selftest") or {}
if not (st.get("saxpy", {}).get("pass") and st.get("sgemm", {}).get("pass")) or j.get("exit_code") != 0:
    bad.append(f"selftest/exit: {st} {j.get('exit_code')}")
print("probe check:", "; ".join(bad) if bad else
      f"ok: {lib}, driver {j['driver']['cuda_version']}/{j['driver']['branch']}, {d.get('name')} sm_{cc[0]}{cc[1]} (SASS), self-test passed")
sys.exit(1 if bad else 0)
PYEOF
    return $((1 - ok))
}
step probe-check check_probe
step bench "${mk[@]}" bench
step ptxas nvcc -O3 -std=c++17 -arch=sm_90 -cubin -Xptxas -v -o /tmp/all.cubin kernels/all.cu -Ikernels
ls -la build/libcudaload.so* build/kernels/cudaload.fatbin > "$out/sizes.txt" 2>&1
