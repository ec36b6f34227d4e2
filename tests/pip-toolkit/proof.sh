#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/pip-toolkit/proof.sh [WORKDIR] -- libcudaload, and a CMake CUDA project, built on a
# machine with no CUDA toolkit: pip's CUDA wheels instead (make check-pip-toolkit).
#
# In a mount namespace (unshare -m) with a tmpfs over /usr/local, so that /usr/local/cuda and
# an nvcc there are gone (checked), and the variables pointing at a toolkit unset (CUDA_HOME,
# CUDA_PATH, CUDA_INC, CUDACXX, LIBRARY_PATH), from a fresh `git clone` of this repository
# (its committed HEAD):
#   a. make: the Makefile finds no toolkit and takes tools/pip-toolkit.sh's (tools/cuda-pins.txt);
#      the probe answers exit 2 (libraries found, no driver) with the wheels as its root, and
#      --parts shows nvcc, ptxas, cicc, cudadevrt, cudart_static, libdevice in those wheels;
#   b. make install into WORKDIR/prefix; a venv with pip's CUDA wheels (the compiler's and
#      cuBLAS, from the same wheel cache); the unchanged project tests/pip-toolkit/cmake-project
#      (a kernel, CUDA::cublas, CUDA::cudart) configured with only the installed
#      cudaload-cuda-toolkit.cmake as CMAKE_PROJECT_TOP_LEVEL_INCLUDES, built, its DT_NEEDED
#      checked (libcublas.so.13, libcudart.so.13) and run with the root's lib (no GPU here: it
#      says what the runtime answered);
#   c. the same with the stubs switch too ("<toolkit file>;<cudaload-cuda-stubs.cmake>"): no
#      CUDA library in DT_NEEDED;
#   d. the toolkit file as CMAKE_TOOLCHAIN_FILE (what an older CMake takes) instead;
#   e. the cudaload sdist built by `pip wheel` (build isolation: its backend asks for
#      tools/cuda-pins.txt's wheels), installed in the venv, its kernels built;
#   f. the three extension templates (examples/python-extension, -cmake, -meson) built by `pip
#      wheel` with the toolkit `python -m cudaload --cuda-root` makes of the venv's wheels
#      (scikit-build-core's through cudaload-cuda-toolkit.cmake);
#   g. the scikit-build-core template with the compiler's wheels added to its
#      build-system.requires and nothing else given: the toolkit file asks the build
#      environment's python for the root;
#   h. the README's second command, `make check`, in the clone (every runner but this proof;
#      CUDALOAD_PROOF_CHECK=0 leaves it out): about 14 min on 2 cores.
# Each step prints "[  OK  ] NAME (N s)" or "[FAILED] NAME"; the wall times are the numbers to
# quote. Needs root (unshare, mount): without it, "SKIP: pip-toolkit: <why>" and exit 0. The
# wheels are downloaded once (1.2 GB) into $PIP_CACHE_DIR/cudaload-toolkit-wheels (default
# ~/.cache/pip), where tools/pip-toolkit.sh keeps them.
#
# WORKDIR (default build/pip-toolkit-proof) is emptied first. JOBS: make -j (default 2).
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-$top/build/pip-toolkit-proof}
case $work in /*) ;; *) work=$PWD/$work ;; esac
jobs=${JOBS:-2}
skip() { echo "SKIP: pip-toolkit: $*"; exit 0; }

if [ -z "${CUDALOAD_PROOF_INSIDE:-}" ]; then
    [ "$(id -u)" = 0 ] || skip "needs root (unshare -m and a tmpfs mounted over /usr/local)"
    command -v unshare >/dev/null || skip "unshare (util-linux) is not installed"
    command -v git >/dev/null || skip "git is not installed"
    command -v cmake >/dev/null || skip "cmake is not installed"
    case $(command -v cmake) in /usr/local/*) skip "cmake is under /usr/local, which the proof hides" ;; esac
    unshare -m true 2>/dev/null || skip "unshare -m is not permitted here (a container without CAP_SYS_ADMIN?)"
    exec unshare -m env CUDALOAD_PROOF_INSIDE=1 bash "$0" "$work"
fi

# ---- inside the namespace ----
failed=0
step_start=$SECONDS
ok() { echo "[  OK  ] $1 ($((SECONDS - step_start)) s)"; step_start=$SECONDS; }
fail() { echo "[FAILED] $1"; failed=1; step_start=$SECONDS; }
die() { echo "[FAILED] $1"; echo "proof.sh: stopped"; exit 1; }

# unshare made the mounts private: the tmpfs is seen by this process tree only
mount -t tmpfs -o size=16m none /usr/local || die "mount -t tmpfs none /usr/local"
unset CUDA_HOME CUDA_PATH CUDA_INC CUDACXX CUDAToolkit_ROOT LIBRARY_PATH CUDALOAD_CUDA_ROOT CUDALOAD_PATH
PATH=$(printf '%s' "$PATH" | tr ':' '\n' | grep -v '^/usr/local/' | paste -sd: -)
export PATH
if command -v nvcc >/dev/null || [ -e /usr/local/cuda ] || [ -e /usr/include/cuda.h ]; then
    die "no toolkit visible: nvcc=$(command -v nvcc) /usr/local/cuda=$(ls -d /usr/local/cuda 2>&1)"
fi
ok "no CUDA toolkit visible (no nvcc on PATH, no /usr/local/cuda, no /usr/include/cuda.h)"
path0=$PATH # before the venv below is activated (step h runs as a fresh shell would)

rm -rf "$work"
mkdir -p "$work"
export CUDALOAD_CACHE_DIR=$work/cudaload-cache # the trees of links --cuda-root makes, fresh
src=$work/src
git clone --quiet "$top" "$src" || die "git clone $top"
ok "git clone $(git -C "$src" rev-parse --short HEAD)"

# ---- a. make, the probe ----
cd "$src" || die "cd $src"
t0=$SECONDS
if make -j"$jobs" > "$work/make.log" 2>&1; then
    ok "make (no toolkit: $(grep -m1 '^cudaload: ' "$work/make.log"))"
else
    tail -30 "$work/make.log"
    die "make (log: $work/make.log)"
fi
t_make=$((SECONDS - t0))
grep -m1 'pip-toolkit.sh: CUDA toolkit of pip wheels' "$work/make.log" || true
site=$src/build/pip-cuda/site
root=$src/build/pip-cuda/root
python3 "$top/tests/dedupe.py" "$site" # one copy on disk of files the outer make check's venvs hold too
grep -q "CL_KERNELS_TOOLKIT_VERSION 13000" build/kernels/kernels_build.h && ok "kernels built by the wheels' nvcc (CUDA 13.0)" \
    || fail "the kernels' fatbin (build/kernels/kernels_build.h)"

./build/cudaload-probe > "$work/probe.txt" 2>&1
echo "cudaload-probe (no --root): exit $? (1: no CUDA runtime where it searches by itself; the wheels are in build/)"
./build/cudaload-probe --root "$site" > "$work/probe-root.txt" 2>&1
rc=$?
sed -n '/^Result/,$p' "$work/probe-root.txt" | head -3
if [ $rc = 2 ]; then ok "cudaload-probe --root <the pip site>: exit 2 (libraries found, no driver)"
else cat "$work/probe-root.txt"; fail "cudaload-probe --root $site: exit $rc, not 2"; fi

./build/cudaload-probe --root "$site" --parts nvcc,ptxas,cicc,cudadevrt,cudart_static,libdevice > "$work/parts.txt" 2>&1
rc=$?
cat "$work/parts.txt"
if [ $rc = 0 ] && [ "$(grep -c " $site/nvidia/cu13/" "$work/parts.txt")" = 6 ]; then
    ok "--parts: the six parts, each in the pip wheels"
else
    fail "--parts: exit $rc, or a part not under $site/nvidia/cu13"
fi

# ---- b. make install; a venv with pip's CUDA wheels; the CMake project with the toolkit file ----
prefix=$work/prefix
make install PREFIX="$prefix" > "$work/install.log" 2>&1 && ok "make install PREFIX=$prefix" \
    || { tail -20 "$work/install.log"; die "make install (log: $work/install.log)"; }
toolkit_file=$prefix/lib/cmake/cudaload/cudaload-cuda-toolkit.cmake
stubs_file=$prefix/lib/cmake/cudaload/cudaload-cuda-stubs.cmake

# the compiler's wheels (the [compiler] group of the pins) and the libraries the projects use, as a
# user's venv has them
wheels=${CUDALOAD_TOOLKIT_WHEELS:-${PIP_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/pip}/cudaload-toolkit-wheels}
# (cuBLAS for the CMake project; cuFFT and cuRAND, whose headers the extension templates include)
reqs=$(awk '/^# \[headers\]/ { exit } /^[^#]/ { print }' tools/cuda-pins.txt; grep -E '^nvidia-(cublas|cufft|curand)==' tools/cuda-pins.txt)
venv=$work/venv
python3 -m venv "$venv" || die "python3 -m venv (python3-venv)"
# shellcheck disable=SC2086 # one requirement a word
PIP_DISABLE_PIP_VERSION_CHECK=1 "$venv/bin/python" -m pip install --quiet --no-index --find-links "$wheels" $reqs \
    || die "pip install into $venv from $wheels"
python3 "$top/tests/dedupe.py" "$venv" # the same wheels as the site of step a
ok "venv with $(echo $reqs | tr '\n' ' ')"
# activated, as a user's shell would be: python3 is the venv's
export PATH=$venv/bin:$PATH VIRTUAL_ENV=$venv

project=$src/tests/pip-toolkit/cmake-project
cmake_build() { # cmake_build NAME BUILD-DIR CMAKE-ARGS...: configure and build the project
    local name=$1 b=$2
    shift 2
    if cmake -S "$project" -B "$b" "$@" > "$b.log" 2>&1 && cmake --build "$b" -j"$jobs" >> "$b.log" 2>&1; then
        grep -E '^-- (cudaload|The CUDA compiler|Found CUDAToolkit)' "$b.log"
        ok "$name: configured and built"
        return 0
    fi
    tail -30 "$b.log"
    fail "$name: configure or build (log: $b.log)"
    return 1
}
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' '; }

if cmake_build "toolkit file only" "$work/cmake-toolkit" -DCMAKE_PROJECT_TOP_LEVEL_INCLUDES="$toolkit_file"; then
    app=$work/cmake-toolkit/app
    tk_root=$(sed -n 's/^CUDALOAD_CUDA_ROOT:[A-Z]*=//p' "$work/cmake-toolkit/CMakeCache.txt")
    echo "app NEEDED: $(needed "$app")"
    echo "CMAKE_CUDA_COMPILER: $(sed -n 's/^CMAKE_CUDA_COMPILER:[A-Z]*=//p' "$work/cmake-toolkit/CMakeCache.txt")" \
        "-> $(readlink -f "$tk_root/bin/nvcc")"
    case $(readlink -f "$tk_root/bin/nvcc") in
    "$venv"/*) ok "the CUDA compiler is the venv's wheel nvcc" ;;
    *) fail "the CUDA compiler is not the venv's nvcc" ;;
    esac
    if needed "$app" | grep -q 'libcublas.so.13' && needed "$app" | grep -q 'libcudart.so.13'; then
        ok "app links libcublas.so.13 and libcudart.so.13"
    else
        fail "app's DT_NEEDED lacks libcublas.so.13 or libcudart.so.13"
    fi
    LD_LIBRARY_PATH=$tk_root/lib "$app" && ok "app runs with the root's lib (LD_LIBRARY_PATH)" || fail "app did not run"
fi

# ---- c. the toolkit file and the stubs switch ----
if cmake_build "toolkit file + stubs switch" "$work/cmake-stubs" "-DCMAKE_PROJECT_TOP_LEVEL_INCLUDES=$toolkit_file;$stubs_file"; then
    app=$work/cmake-stubs/app
    echo "app NEEDED: $(needed "$app")"
    if needed "$app" | grep -q 'libcu'; then fail "app still has a CUDA library in DT_NEEDED"
    else ok "app has no CUDA library in DT_NEEDED"; fi
    # libcudaload finds the venv's runtime itself (VIRTUAL_ENV); no driver here
    "$app" && ok "app runs (its runtime found by libcudaload)" || fail "app did not run"
fi

# ---- d. the toolkit file as a toolchain file ----
if cmake_build "toolkit file as CMAKE_TOOLCHAIN_FILE" "$work/cmake-toolchain" -DCMAKE_TOOLCHAIN_FILE="$toolkit_file"; then
    needed "$work/cmake-toolchain/app" | grep -q 'libcublas.so.13' && ok "toolchain build links libcublas.so.13" \
        || fail "toolchain build's DT_NEEDED"
fi

# ---- e. the cudaload sdist, built by pip with no toolkit: its backend asks for the pinned wheels ----
dist=$work/dist
mkdir -p "$dist"
# the backend is called here directly, not by a frontend that installs pyproject.toml's
# build-system requires: the venv gets the setuptools they name (77 or newer, for the license's
# PEP 639 metadata; a venv comes with an older one), the wheel cache first, then the registry
PIP_FIND_LINKS="$wheels ${PIP_FIND_LINKS:-}" PIP_DISABLE_PIP_VERSION_CHECK=1 \
    "$venv/bin/python" -m pip install --quiet "$(sed -n 's/^requires = \[\("setuptools[^"]*"\).*/\1/p' python-shim/pyproject.toml | tr -d '"')" \
    > "$work/setuptools.log" 2>&1 || fail "the sdist's setuptools into $venv (log: $work/setuptools.log)"
if (cd python-shim && python3 -c "import sys; from setuptools import build_meta as b; b.build_sdist(sys.argv[1])" "$dist") \
    > "$work/sdist.log" 2>&1; then
    sdist=$(ls "$dist"/cudaload-*.tar.gz)
    ok "sdist $(basename "$sdist")"
    # build isolation, as a user's pip does: setuptools, ziglang and tools/cuda-pins.txt's wheels
    # (the wheel cache first, then the registry)
    if PIP_FIND_LINKS="$wheels ${PIP_FIND_LINKS:-}" PIP_DISABLE_PIP_VERSION_CHECK=1 \
        "$venv/bin/python" -m pip wheel -v --no-deps -w "$dist" "$sdist" > "$work/sdist-wheel.log" 2>&1; then
        grep -m1 'nvidia-cuda-nvcc' "$work/sdist-wheel.log" | sed 's/^ */build requirement: /'
        ok "pip wheel of the sdist, no toolkit: $(cd "$dist" && ls cudaload-*.whl)"
        "$venv/bin/python" -m pip install --quiet --no-deps "$dist"/cudaload-*.whl || fail "pip install the cudaload wheel"
        built=$("$venv/bin/python" -c 'import cudaload; print(cudaload.KERNELS_BUILT)')
        [ "$built" = True ] && ok "its kernels were built (by the wheels' nvcc)" || fail "cudaload.KERNELS_BUILT is $built"
    else
        tail -30 "$work/sdist-wheel.log"
        fail "pip wheel of the sdist (log: $work/sdist-wheel.log)"
    fi
else
    tail -20 "$work/sdist.log"
    fail "sdist (log: $work/sdist.log)"
fi

# ---- f. the three extension templates, built by pip wheel with the toolkit from pip ----
if pyroot=$("$venv/bin/python" -m cudaload --cuda-root 2> "$work/cuda-root.err"); then
    ok "python -m cudaload --cuda-root: $pyroot"
    for t in python-extension python-cmake python-meson; do
        copy=$work/templates/$t
        mkdir -p "$work/templates"
        cp -r "examples/$t" "$copy"
        # CUDA_HOME for the setuptools and meson templates (they take nvcc from it or PATH); the
        # scikit-build-core one gets the toolkit file, with the root in CUDALOAD_CUDA_ROOT (its
        # isolated build environment has cudaload but not the CUDA wheels)
        cfg=()
        [ $t = python-cmake ] && cfg=("-Ccmake.define.CMAKE_PROJECT_TOP_LEVEL_INCLUDES=$("$venv/bin/python" -m cudaload --cmake-toolkit)")
        if CUDA_HOME=$pyroot PATH=$pyroot/bin:$PATH CUDALOAD_CUDA_ROOT=$pyroot PIP_DISABLE_PIP_VERSION_CHECK=1 \
            "$venv/bin/python" -m pip wheel --no-deps --find-links "$dist" -w "$work/templates/dist" "${cfg[@]}" \
            "$copy" > "$work/templates/$t.log" 2>&1; then
            ok "pip wheel examples/$t"
        else
            tail -30 "$work/templates/$t.log"
            fail "pip wheel examples/$t (log: $work/templates/$t.log)"
        fi
    done
else
    cat "$work/cuda-root.err"
    fail "python -m cudaload --cuda-root in $venv"
fi

# ---- g. scikit-build-core with the CUDA wheels in build-system.requires: nothing else given ----
# The python-cmake template, its build requirements extended by the [compiler] wheels of the
# pins; no CUDA_HOME, no CUDALOAD_CUDA_ROOT, no nvcc on PATH: the toolkit file asks the build
# environment's python (scikit-build-core's Python_EXECUTABLE) for `-m cudaload --cuda-root`.
if [ -f "$dist"/cudaload-*.whl ] 2>/dev/null || ls "$dist"/cudaload-*.whl > /dev/null 2>&1; then
    copy=$work/templates/python-cmake-requires
    rm -rf "$copy"
    cp -r examples/python-cmake "$copy"
    compiler=$(awk '/^# \[headers\]/ { exit } /^[^#]/ { printf "%s\"%s\"", n++ ? ", " : "", $0 }' tools/cuda-pins.txt)
    sed -i "s|^requires = \[\(.*\)\]|requires = [\1, $compiler]|" "$copy/pyproject.toml"
    grep '^requires' "$copy/pyproject.toml"
    toolkit_in_pkg=$("$venv/bin/python" -m cudaload --cmake-toolkit)
    if env -u CUDA_HOME -u CUDALOAD_CUDA_ROOT PIP_FIND_LINKS="$wheels $dist ${PIP_FIND_LINKS:-}" PIP_DISABLE_PIP_VERSION_CHECK=1 \
        "$venv/bin/python" -m pip wheel -v --no-deps -w "$work/templates/dist-requires" \
        "-Ccmake.define.CMAKE_PROJECT_TOP_LEVEL_INCLUDES=$toolkit_in_pkg" "$copy" > "$work/templates/requires.log" 2>&1; then
        grep -m2 -E 'cudaload: .*(root|toolkit)|The CUDA compiler identification' "$work/templates/requires.log" | sed 's/^ */  /'
        ok "pip wheel of a scikit-build-core project with the CUDA wheels in build-system.requires"
    else
        tail -30 "$work/templates/requires.log"
        fail "pip wheel of a scikit-build-core project with the CUDA wheels in build-system.requires (log: $work/templates/requires.log)"
    fi
fi

# ---- h. the README's second command, make check, on the clone built from the wheels ----
# Every runner but this proof's own (no proof within the proof). Not under CI=true: the skips of
# a machine without a toolkit (the driver's link stub, libraries the pins lack) are listed, as on
# any machine that is not CI's.
if [ "${CUDALOAD_PROOF_CHECK:-1}" = 1 ]; then
    cd "$src" || die "cd $src"
    runners=$(sed -n 's/^CHECK_RUNNERS := //p' Makefile)
    runners=$(echo "$runners" | tr ' ' '\n' | grep -vx check-pip-toolkit | paste -sd' ' -)
    t0=$SECONDS
    # its own summary, make flags and CI setting, and no venv: none of the outer make check's or
    # the steps above
    if env -u CI -u CHECK_SUMMARY -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u VIRTUAL_ENV -u CUDALOAD_CACHE_DIR PATH="$path0" \
        make check CHECK_RUNNERS="$runners" \
        > "$work/make-check.log" 2>&1; then
        sed -n '/^  runner/,/^  total/p' "$work/make-check.log"
        ok "make check (no toolkit; $runners) in $((SECONDS - t0)) s"
    else
        sed -n '/^  runner/,$p' "$work/make-check.log" | head -60
        fail "make check with no toolkit (log: $work/make-check.log)"
    fi
fi

echo "proof.sh: make (pip toolkit made included) ${t_make} s; total $SECONDS s; logs in $work"
# a proof that passed leaves its logs, not the clone's build (several GB: a second make check's)
if [ "$failed" = 0 ]; then rm -rf --one-file-system "$src/build" && python3 "$top/tests/dedupe.py" --prune; fi
exit $failed
