#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/gpu/multigpu-run.sh OUTDIR -- libcudaload on a machine with two or more GPUs, in one go
# (logs committed under docs/gpu-run/multigpu/):
#   env:        nvidia-smi -L and topo, the torch that will be used;
#   check-gpu:  make check-gpu (gpu_loader, gpu_kernels, gpu_multi, compute-sanitizer), with
#               every GPU visible;
#   visible-1:  CUDA_VISIBLE_DEVICES=1: gpu_multi (skips: one GPU), gpu_kernels, the probe's
#               JSON (one device: the physical GPU 1, by its PCI bus id);
#   visible-10: CUDA_VISIBLE_DEVICES=1,0: gpu_multi with the devices reordered, the probe's JSON
#               (ordinals 0 and 1 are physical 1 and 0);
#   python:     tests/python/device-run.sh (every Python GPU test, the two-GPU ones included),
#               then test_gpu_multi.py again under CUDA_VISIBLE_DEVICES=1,0;
#   launch:     build/bench/bench_launch --device 1 (host cost of a small call, ours vs a raw
#               launch vs cuBLAS; the operands on device 1 while device 0 is current), and
#               with one GPU visible (the one-device path: no pointer is asked about).
# Each step's log goes to OUTDIR/<step>.txt with its rc; the summary to OUTDIR/summary.txt.
# CMOCKA_CFLAGS / CMOCKA_LIBS in the environment reach make (cmocka where it is not installed).
set -u
out=${1:?usage: multigpu-run.sh OUTDIR}
mkdir -p "$out" && out=$(cd "$out" && pwd)
cd "$(dirname "$0")/../.."
PY=${PYTHON:-/opt/torch/.venv/bin/python3}
[ -x "$PY" ] || PY=python3
site=$($PY -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
export CUDALOAD_GPU_SITE=$site
fails=0
: > "$out/summary.txt"
step() {
    local name=$1; shift
    echo "=== $name: $*"
    { echo "\$ $*"; time "$@"; } > "$out/$name.txt" 2>&1
    local rc=$?
    echo "rc=$rc" >> "$out/$name.txt"
    tail -5 "$out/$name.txt"
    echo "$name rc=$rc" >> "$out/summary.txt"
    [ $rc = 0 ] || fails=$((fails + 1))
    return $rc
}
probe_devices() { # the probe's devices, one line each: index, PCI bus id, name, self-test
    build/cudaload-probe --json --root "$site" | "$PY" -c '
import json, sys
d = json.load(sys.stdin)
for x in d["devices"]:
    st = x["selftest"] or {}
    print(x["index"], x["pci_bus_id"], x["name"], "sm_%d%d" % tuple(x["compute_capability"]), x["kernels"],
          "saxpy", (st.get("saxpy") or {}).get("pass"), "%.0f GB/s" % (st.get("saxpy_gbps") or 0),
          "sgemm", (st.get("sgemm") or {}).get("pass"), "%.1f TFLOP/s" % (st.get("sgemm_tflops") or 0))
print("devices_status", d["devices_status"], "selftest(device 0) saxpy", d["selftest"]["saxpy"]["pass"])'
}
export -f probe_devices
export PY site
{
    nvidia-smi -L
    nvidia-smi topo -m
    nvidia-smi --query-gpu=index,pci.bus_id,name,driver_version --format=csv
    $PY -c 'import torch; print("torch", torch.__version__, "devices", torch.cuda.device_count())'
    echo "site: $site"
} > "$out/env.txt" 2>&1
cat "$out/env.txt"
step check-gpu make -j"$(nproc)" all check-gpu build/bench/bench_launch
step probe-all build/cudaload-probe --root "$site"
step devices-all probe_devices
step visible-1 env CUDA_VISIBLE_DEVICES=1 bash -c 'build/tests/gpu_multi && build/tests/gpu_kernels && probe_devices'
step visible-10 env CUDA_VISIBLE_DEVICES=1,0 bash -c 'build/tests/gpu_multi && probe_devices'
step python env PYTHON="$PY" tests/python/device-run.sh "$out/python"
step python-visible-10 env CUDA_VISIBLE_DEVICES=1,0 PYTHONPATH="$PWD/build/device-py/python/device-target" \
    CUDALOAD_TEST_BUILD="$PWD/build/device-py" "$PY" -m pytest tests/python/test_gpu_multi.py -v -rs -p no:cacheprovider
step launch build/bench/bench_launch --device 1 --root "$site"
step launch-one-gpu env CUDA_VISIBLE_DEVICES=0 build/bench/bench_launch --root "$site"
echo "failed steps: $fails" | tee -a "$out/summary.txt"
exit $((fails > 0))
