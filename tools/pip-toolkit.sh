#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tools/pip-toolkit.sh OUTDIR -- a CUDA toolkit made of pip's CUDA wheels, for building
# libcudaload on a machine without one. Prints the toolkit root (usable as CUDA_HOME) on
# stdout, and nothing else there; what it does goes to stderr.
#
#   OUTDIR/site    the wheels of tools/cuda-pins.txt, `pip install --no-deps --target`
#                  (site-packages/nvidia/cu13/{bin,include,lib,nvvm}); .cudaload-pins holds the
#                  pins they were installed from
#   OUTDIR/stage   a libcudaload probe without kernels, built from those headers (make NVCC=)
#   OUTDIR/root    the toolkit root: `cudaload-probe --root OUTDIR/site --cuda-root OUTDIR/root`,
#                  a tree of links (bin/nvcc, nvvm/, include, lib/, lib64; docs/toolkit.md)
#
# The wheels are kept in WHEELS (`pip download`) and installed from there with --no-index, as
# tests/fixtures.sh does, so a second OUTDIR, or OUTDIR rebuilt, downloads nothing. Idempotent:
# a run whose OUTDIR/site holds the same pins and whose root is in place only prints the root.
#
# Environment: PYTHON (default python3; its pip is used), PIP_CACHE_DIR (default
# ~/.cache/pip), CUDALOAD_TOOLKIT_WHEELS (default $PIP_CACHE_DIR/cudaload-toolkit-wheels),
# MAKE (default make), PIP_TOOLKIT_JOBS (make -j for the stage probe; default 2).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
pins=$top/tools/cuda-pins.txt
out=${1:?usage: tools/pip-toolkit.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd) # the probe and the root want absolute paths
python=${PYTHON:-python3}
make_cmd=${MAKE:-make}
jobs=${PIP_TOOLKIT_JOBS:-2}
log() { echo "pip-toolkit.sh: $*" >&2; }
die() { echo "pip-toolkit.sh: $*" >&2; exit 1; }

[ -f "$pins" ] || die "$pins missing"
site=$out/site root=$out/root stage=$out/stage
marker=$site/.cudaload-pins
probe=$stage/cudaload-probe

# Fast path: the same pins installed and the root made from them (its links point into site).
if [ -f "$marker" ] && cmp -s "$marker" "$pins" && [ -f "$root/.cudaload-toolkit" ] && [ -x "$root/bin/nvcc" ]; then
    echo "$root"
    exit 0
fi

if [ -z "${PIP_CACHE_DIR:-}" ]; then
    # HOME unset or / (a service account): keep the wheels in OUTDIR rather than in /.cache
    if [ -n "${HOME:-}" ] && [ "$HOME" != / ]; then PIP_CACHE_DIR=${XDG_CACHE_HOME:-$HOME/.cache}/pip
    else PIP_CACHE_DIR=$out/.pip-cache; fi
fi
wheels=${CUDALOAD_TOOLKIT_WHEELS:-$PIP_CACHE_DIR/cudaload-toolkit-wheels}
case $wheels in /*) ;; *) die "CUDALOAD_TOOLKIT_WHEELS must be absolute, not '$wheels'" ;; esac
export PIP_CACHE_DIR PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 PIP_ROOT_USER_ACTION=ignore
command -v "$python" >/dev/null || die "$python not found (set PYTHON)"
"$python" -m pip --version >/dev/null 2>&1 || die "'$python -m pip' does not work: install pip for $python (or set PYTHON)"

# the requirements: every non-comment line of the pins
reqs=()
while IFS= read -r line; do
    line=${line%%#*}
    line=$(echo "$line" | tr -d '[:space:]')
    [ -n "$line" ] && reqs+=("$line")
done < "$pins"
[ ${#reqs[@]} -gt 0 ] || die "no requirement in $pins"
pip=("$python" -m pip)

# ---- 1. download, 2. install into OUTDIR/site (a fresh directory, renamed in: never half a site)
# From the wheel cache first; only when it lacks a pin, `pip download` (which fetches what
# the cache lacks) and install again.
install() {
    rm -rf "$site.tmp"
    "${pip[@]}" install --quiet --no-deps --no-index --find-links "$wheels" --target "$site.tmp" "${reqs[@]}" "$@"
}
# the wheel file in WHEELS of a pin NAME==VERSION (pip's file name: the name lowercased, '-' and
# '.' as '_'); empty for another kind of requirement
wheel_of() {
    local name=${1%%==*} ver=${1#*==}
    [ "$name" != "$1" ] || return 0
    name=$(echo "$name" | tr 'A-Z.-' 'a-z__')
    compgen -G "$wheels/${name}-${ver}-*.whl" | head -1 || true
}
size() { awk -v n="$(stat -c %s "$1")" 'BEGIN { if (n < 1e6) printf "%.0f kB", n / 1e3; else printf "%.1f MB", n / 1e6 }'; }
# one pin: a line as it starts, one as it ends, with its size (pip itself is quiet: its progress
# bar is no use on a log, and 1.2 GB with no line at all looks like a hang)
download() {
    local req=$1 t=$SECONDS f
    log "  $req: downloading ..."
    "${pip[@]}" download --quiet --progress-bar off --no-deps --only-binary=:all: --dest "$wheels" "$req" >&2 || return 1
    f=$(wheel_of "$req")
    log "  $req: ${f:+$(basename "$f"), $(size "$f"), }$((SECONDS - t)) s"
}
mkdir -p "$wheels"
t_download=0
t0=$SECONDS
log "installing the ${#reqs[@]} wheels of tools/cuda-pins.txt into $site (from $wheels; what it lacks is downloaded first) ..."
if ! install 2>/dev/null; then
    log "downloading the ${#reqs[@]} wheels of tools/cuda-pins.txt into $wheels (about 1.2 GB the first time)"
    t1=$SECONDS
    for req in "${reqs[@]}"; do
        download "$req" || die "pip download $req failed (network? the pins: $pins)"
    done
    t_download=$((SECONDS - t1))
    log "installing them into $site ..."
    t0=$SECONDS
    install >&2 || die "pip install --target $site.tmp from $wheels failed"
fi
for f in bin/nvcc include/cuda.h include/cuda_runtime_api.h include/cublas_v2.h lib/libcudart.so.13 nvvm/bin/cicc; do
    [ -e "$site.tmp/nvidia/cu13/$f" ] || die "$site.tmp/nvidia/cu13/$f missing: the wheels' layout changed"
done
cp "$pins" "$site.tmp/.cudaload-pins"
rm -rf "$site" "$root"
mv "$site.tmp" "$site"
t_install=$((SECONDS - t0))
dl_mb=$(du -sm "$wheels" | cut -f1)
log "installed: $(du -sm "$site" | cut -f1) MB in $site, ${t_install} s"

# ---- 3. a stage probe without kernels from those headers ----
# The caller's make (this script runs inside the Makefile's $(shell)) passes its command-line
# variables in MAKEFLAGS: they would override B, CUDA_HOME and NVCC here.
t0=$SECONDS
log "building a probe without kernels from those headers (make -j$jobs, log in $out/stage.log) ..."
# Its log goes to OUTDIR/stage.log, shown when it fails.
if ! (cd "$top" && unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES &&
    "$make_cmd" --no-print-directory -j"$jobs" B="$stage" NVCC= CUDA_HOME="$site/nvidia/cu13" "$probe") \
    > "$out/stage.log" 2>&1; then
    cat "$out/stage.log" >&2
    die "building the stage probe failed: cd $top && $make_cmd B=$stage NVCC= CUDA_HOME=$site/nvidia/cu13 $probe"
fi
t_stage=$((SECONDS - t0))

# ---- 4. the root: only the pinned wheels (CUDALOAD_SOURCES=caller: the --root alone, no
# system, CUDA_HOME or venv root) ----
t0=$SECONDS
got=$(CUDALOAD_SOURCES=caller "$probe" --root "$site" --cuda-root "$root") \
    || die "$probe --root $site --cuda-root $root failed (above)"
[ "$got" = "$root" ] || die "the probe answered '$got', not $root"
t_root=$((SECONDS - t0))

log "CUDA toolkit of pip wheels in $root: download ${t_download} s (wheel cache ${dl_mb} MB), install ${t_install} s," \
    "stage probe ${t_stage} s, root ${t_root} s"
echo "$root"
