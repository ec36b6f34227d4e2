#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/gpu/driver-run.sh OUTDIR RT_TREE -- the driver facts on the GPU machine (logs
# committed under docs/gpu-run/driver/). RT_TREE: a directory holding only libcudart.so.13 of a
# newer minor than the driver runs (the nvidia-cuda-runtime 13.5 wheel's; carried to the machine,
# e.g. build/rt-13.5). Each step's log goes to OUTDIR/<step>.txt, its rc to OUTDIR/summary.txt:
#   probe-system:    the probe on the machine's own venv (torch's cu13 wheels): the driver taken
#                    from the system, its /usr/local/cuda/compat copy seen and not taken;
#   probe-rt-13.5:   the 13.5 runtime alone on the 13.0 driver: taken under minor version
#                    compatibility (the warning), the bundled self-test passing;
#   compat-check:    both runs' JSON checked: the driver is never a compat copy, and each compat
#                    copy of the machine is listed with COMPAT_NOT_NEWER (that machine's 580.95.05
#                    is older than its kernel module's 580.159.04: taking it would give 803), also
#                    where the runtime would want a newer driver (the 13.5 run: cl_use_compat
#                    weighs it and leaves it).
set -u
out=${1:?usage: driver-run.sh OUTDIR RT_TREE}
rt=${2:?usage: driver-run.sh OUTDIR RT_TREE}
mkdir -p "$out" && out=$(cd "$out" && pwd)
rt=$(cd "$rt" && pwd)
cd "$(dirname "$0")/../.."
PY=${PYTHON:-/opt/torch/.venv/bin/python3}
[ -x "$PY" ] || PY=python3
site=$($PY -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
fails=0
: > "$out/summary.txt"
step() {
    local name=$1; shift
    echo "=== $name: $*"
    { echo "\$ $*"; "$@"; } > "$out/$name.txt" 2>&1
    local rc=$?
    echo "rc=$rc" >> "$out/$name.txt"
    echo "$name rc=$rc" >> "$out/summary.txt"
    [ $rc = 0 ] || fails=$((fails + 1))
}
{
    nvidia-smi -L; cat /proc/driver/nvidia/version; ls -l /usr/local/cuda/compat 2>&1
} > "$out/env.txt" 2>&1
make -j16 all > "$out/build.txt" 2>&1 || { echo "build failed"; tail "$out/build.txt"; exit 1; }
step probe-system build/cudaload-probe --root "$site"
step probe-rt-13.5 env CUDALOAD_SOURCES=caller build/cudaload-probe --root "$rt"
build/cudaload-probe --json --root "$site" > "$out/system.json" 2>&1
env CUDALOAD_SOURCES=caller build/cudaload-probe --json --root "$rt" > "$out/rt-13.5.json" 2>&1
compat_check() {
    "$PY" - "$out/system.json" "$out/rt-13.5.json" <<'PYEOF'
import glob, json, os, sys
copies = sorted({os.path.realpath(p) for p in glob.glob("/usr/local/cuda/compat/libcuda.so.1")
                 + glob.glob("/usr/local/cuda/compat/lib/libcuda.so.1")})
bad = []
for f in sys.argv[1:]:
    text = open(f).read()
    j = json.loads(text[text.index("{"):text.rindex("}") + 1])
    cuda = j["libraries"]["cuda"]
    if "compat" in (cuda["path"] or ""):
        bad.append(f"{f}: the driver taken is a compat copy: {cuda['path']}")
    for c in copies:
        codes = [x["reason_code"] for x in cuda["candidates"] if x["path"] == c]
        if codes != ["COMPAT_NOT_NEWER"]:
            bad.append(f"{f}: {c}: {codes}, want ['COMPAT_NOT_NEWER']")
    rt = j["libraries"]["cudart"]
    print(f"{os.path.basename(f)}: driver {cuda['path']} ({cuda['version']}), cudart {rt['version']} "
          f"newer_than_driver={rt['newer_than_driver']}, compat copies {copies}, self-test "
          f"{(j.get('selftest') or {}).get('saxpy', {}).get('pass')}/{(j.get('selftest') or {}).get('sgemm', {}).get('pass')}")
print("compat check:", "; ".join(bad) if bad else "ok: never taken, each seen as COMPAT_NOT_NEWER")
sys.exit(1 if bad or not copies else 0)
PYEOF
}
step compat-check compat_check
cat "$out/summary.txt"
exit $((fails > 0))
