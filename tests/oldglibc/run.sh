#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/oldglibc/run.sh BUILD_DIR PYTHON -- what this project builds runs on an older glibc.
#
# A root of Debian bullseye (glibc 2.31, Python 3.9), made with debootstrap from Debian's own
# packages and cached as BUILD_DIR/oldglibc/bullseye.tar, stands for the older distributions
# (RHEL/Rocky 8 has 2.28, Ubuntu 20.04 2.31). PYTHON is the test venv's interpreter (ziglang,
# setuptools, auditwheel). Then:
#   1. the cudaload sdist made here is built there into a wheel by the same recipe as here (zig
#      for glibc 2.28; no nvcc: device code is not what this checks). Bullseye's Python is 3.9,
#      and the wheel built here is cp311-abi3, which needs 3.11: the cp39 wheel is the one that
#      can be installed there, from the same sources and compiler;
#   2. auditwheel (here) shows it manylinux_2_28 or lower; `auditwheel repair` gives the
#      manylinux wheel, with nothing grafted;
#   3. that wheel and nvidia-cuda-runtime (13) go into a fresh venv there: `import cudaload` and
#      `python -m cudaload --json` find the runtime in that venv;
#   4. cudaload-probe, built here by zig for glibc 2.28 (a binary from this machine), runs there
#      and finds the same runtime.
# Logs and the JSON reports go to BUILD_DIR/oldglibc/out. Exit 0 when all passed, 1 when a
# check failed. Skips (exit 0, saying why on stdout) without root (chroot, bind mounts),
# debootstrap, zig or the network to deb.debian.org and PyPI; CI has them all.
set -euo pipefail
b=$(realpath "${1:?usage: tests/oldglibc/run.sh BUILD_DIR PYTHON}")
py=${2:?usage: tests/oldglibc/run.sh BUILD_DIR PYTHON}
py=$(cd "$(dirname "$py")" && pwd)/$(basename "$py") # absolute, the venv's link kept
top=$(cd "$(dirname "$0")/../.." && pwd)
work=$b/oldglibc
root=$work/root
out=$work/out
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

skip() { echo "SKIP: check-oldglibc: $*"; exit 0; }
[ "$(id -u)" = 0 ] || skip "needs root (debootstrap, chroot, bind mounts)"
command -v debootstrap >/dev/null || skip "debootstrap is not installed (apt-get install debootstrap)"
zig=$("$py" -c 'import os, ziglang; print(os.path.join(os.path.dirname(ziglang.__file__), "zig"))' 2>/dev/null) ||
    skip "no ziglang in $py (make py-testenv installs it)"

# Every mount is undone on exit, before anything else: the root holds bind mounts of this
# checkout and the toolkit, which a removal must never reach.
mounts=()
cleanup() {
    for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount "${mounts[i]}" 2>/dev/null || umount -l "${mounts[i]}" || true; done
}
trap cleanup EXIT
bind() { # bind SRC DEST [ro]
    mkdir -p "$2"
    mount --bind "$1" "$2"
    mounts+=("$2")
    if [ "${3:-}" = ro ]; then mount -o remount,bind,ro "$2"; fi
}

mkdir -p "$work"
if [ ! -s "$work/bullseye.tar" ]; then
    echo "... debootstrap: building the old-glibc root, a Debian bullseye root ($mirror; log: $work/debootstrap.log)"
    rm -rf --one-file-system "$work/boot"
    debootstrap --variant=minbase --include=python3,python3-venv,python3-dev,make,binutils,ca-certificates bullseye "$work/boot" \
        "$mirror" > "$work/debootstrap.log" 2>&1 &
    boot_pid=$!
    # minutes with its output in the log: its latest step every 30 s, so the run is seen to move
    boot_start=$SECONDS
    while kill -0 "$boot_pid" 2>/dev/null; do
        for _ in $(seq 30); do kill -0 "$boot_pid" 2>/dev/null && sleep 1; done
        kill -0 "$boot_pid" 2>/dev/null &&
            echo "... debootstrap: building the old-glibc root, $((SECONDS - boot_start)) s: $(grep '^I: ' "$work/debootstrap.log" | tail -1)"
    done
    if ! wait "$boot_pid"; then
        tail -5 "$work/debootstrap.log"
        skip "debootstrap could not make the root (no network to $mirror?); log: $work/debootstrap.log"
    fi
    tar -C "$work/boot" -cf "$work/bullseye.tar.tmp" . && mv "$work/bullseye.tar.tmp" "$work/bullseye.tar"
    rm -rf --one-file-system "$work/boot"
fi
# a run killed before its trap left mounts: undo them before removing anything
{ grep -o " $root/[^ ]*" /proc/mounts || true; } | sort -r | while read -r m; do umount "$m" || umount -l "$m"; done
rm -rf --one-file-system "$root" "$out"
mkdir -p "$root" "$out"
tar -C "$root" -xf "$work/bullseye.tar"
cp /etc/resolv.conf "$root/etc/resolv.conf"

# What goes in from here: the sdist, the zig-built probe, the wheels.
echo "check-oldglibc: the sdist and a probe built by zig for glibc 2.28"
mkdir -p "$root/in"
(cd "$top/python-shim" && CUDALOAD_BUILD_BASE="$work/sdist-build" "$py" -c \
    'import sys; from setuptools import build_meta as b; print(b.build_sdist(sys.argv[1]))' "$root/in") > "$out/sdist.log" 2>&1 ||
    { tail -20 "$out/sdist.log"; exit 1; }
make -s -C "$top" -j"$(nproc)" B="$work/zig" NVCC= "CC=$zig cc -target x86_64-linux-gnu.2.28" "$work/zig/cudaload-probe" \
    > "$out/probe-build.log" 2>&1 || { tail -20 "$out/probe-build.log"; exit 1; }
cp "$work/zig/cudaload-probe" "$root/in/"
# every wheel the root needs, fetched here (pip's cache, this machine's certificates): nothing
# there uses the network
"$py" -m pip download -q --disable-pip-version-check --only-binary :all: --platform manylinux2014_x86_64 \
    --python-version 3.9 -d "$root/in/wheels" pip setuptools wheel ziglang 'nvidia-cuda-runtime>=13,<14' \
    > "$out/download.log" 2>&1 || skip "pip could not download the wheels (no network?): $(tail -1 "$out/download.log")"
bind "$(realpath "${CUDA_HOME:-/usr/local/cuda}/include")" "$root/cuda-include" ro
mount -t proc proc "$root/proc" && mounts+=("$root/proc")

# Step 1 and 3, there. The second venv installs the repaired wheel, which step 2 puts in /in.
cat > "$root/in/build.sh" <<'EOF'
set -eu
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INDEX=1 PIP_FIND_LINKS=/in/wheels
ldd --version | head -1
python3 --version
python3 -m venv /build-venv
/build-venv/bin/pip install -q --upgrade pip   # bullseye's pip 20.3 reads no PEP 621 metadata
/build-venv/bin/pip install -q --upgrade setuptools wheel ziglang   # the venv came with setuptools 44: no [project] table
CUDA_INC=/cuda-include CUDALOAD_NVCC= CUDALOAD_BUILD_BASE=/tmp/cudaload-build \
    /build-venv/bin/pip wheel --no-build-isolation --no-deps -w /in/dist /in/cudaload-*.tar.gz
EOF
cat > "$root/in/run.sh" <<'EOF'
set -eu
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INDEX=1
python3 -m venv /venv
/venv/bin/pip --version
/venv/bin/pip install -q --find-links /in/repaired --find-links /in/wheels cudaload nvidia-cuda-runtime
cd /
/venv/bin/python -c 'import cudaload; print("import cudaload", cudaload.__version__)'
site=$(/venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
rc=0; CUDALOAD_SOURCES=self,venv /venv/bin/python -m cudaload --json > /in/python-m-cudaload.json || rc=$?
echo "python -m cudaload --json: exit $rc"
rc=0; CUDALOAD_SOURCES=caller /in/cudaload-probe --json --no-selftest --root "$site" > /in/probe.json || rc=$?
echo "cudaload-probe --json: exit $rc"
echo "$site" > /in/site
EOF
chrun() { chroot "$root" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root LANG=C.UTF-8 /bin/bash "$@"; }
echo "check-oldglibc: building the cp39 wheel from the sdist in bullseye (zig, glibc 2.28)"
chrun /in/build.sh > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; echo "check-oldglibc: FAILED: the build in bullseye (log: $out/build.log)"; exit 1; }
head -2 "$out/build.log"
wheel=$(ls "$root"/in/dist/cudaload-*.whl)

echo "check-oldglibc: auditwheel: $(basename "$wheel")"
"$py" -m auditwheel show "$wheel" > "$out/auditwheel-show.txt" 2>&1
tag=$(tr -s ' \n' ' ' < "$out/auditwheel-show.txt" | sed -n 's/.*following platform tag: "manylinux_\([0-9]*\)_\([0-9]*\)_x86_64".*/\1 \2/p')
[ -n "$tag" ] || { cat "$out/auditwheel-show.txt"; echo "check-oldglibc: FAILED: auditwheel gives no manylinux tag"; exit 1; }
set -- $tag
if [ "$1" -gt 2 ] || { [ "$1" -eq 2 ] && [ "$2" -gt 28 ]; }; then
    cat "$out/auditwheel-show.txt"; echo "check-oldglibc: FAILED: manylinux_$1_$2 is above manylinux_2_28"; exit 1
fi
echo "check-oldglibc: manylinux_$1_$2"
PATH=$(dirname "$py"):$PATH "$py" -m auditwheel repair -w "$root/in/repaired" "$wheel" > "$out/auditwheel-repair.txt" 2>&1 ||
    { tail -20 "$out/auditwheel-repair.txt"; exit 1; }

echo "check-oldglibc: installing and running it in a fresh venv in bullseye"
chrun /in/run.sh > "$out/run.log" 2>&1 || { tail -30 "$out/run.log"; echo "check-oldglibc: FAILED: the run in bullseye (log: $out/run.log)"; exit 1; }
cat "$out/run.log"
cp "$root/in/python-m-cudaload.json" "$root/in/probe.json" "$out/"

# The reports: the runtime from that venv, loaded, CUDA 13 (the root's glibc is 2.31).
"$py" - "$out" "$(cat "$root/in/site")" <<'EOF'
import json, sys
out, site = sys.argv[1], sys.argv[2]
bad = []
for name in ("python-m-cudaload.json", "probe.json"):
    d = json.load(open("%s/%s" % (out, name)))
    rt = d["libraries"]["cudart"]
    want = site + "/nvidia/cu13/lib/libcudart.so.13"
    if rt["status"] != "loaded" or rt["path"] != want or not (rt["version"] or 0) // 1000 == 13:
        bad.append("%s: cudart %s" % (name, {k: rt[k] for k in ("status", "path", "version")}))
    else:
        print("check-oldglibc: %s: cudart %s loaded from %s" % (name, rt["version"], rt["path"]))
if bad:
    sys.exit("check-oldglibc: FAILED: " + "; ".join(bad))
EOF
# The root (about 1 GB) is unpacked from the tarball again by every run: not kept. Its mounts are
# undone first, and a removal never leaves this filesystem.
cleanup; mounts=()
if grep -q " $root/" /proc/mounts; then echo "check-oldglibc: mounts left under $root: not removed"; else rm -rf --one-file-system "$root"; fi
echo "check-oldglibc: passed (Debian bullseye, glibc 2.31)"
