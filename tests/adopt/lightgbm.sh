#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/adopt/lightgbm.sh: build LightGBM 4.7.0's CUDA library (the Python package's wheel) from
# its PyPI sdist, unchanged, on a machine with no network, with or without libcudaload's CMake
# stubs switch, and run LightGBM's own Python tests on a GPU beside torch's CUDA.
#
# Which source: the PyPI sdist lightgbm==4.7.0 (sha256 pinned below), and LightGBM's Python
# tests (tests/python_package_test/ and the examples/ data they read) from the git tag v4.7.0
# of https://github.com/lightgbm-org/LightGBM.git (the repository the sdist's metadata names;
# github.com/microsoft/LightGBM, where it was, redirects there). fetch checks that the tag is
# the sdist's release: the tag's commit is pinned (LGB_TAG_COMMIT), and its src/, include/,
# cmake/, swig/, CMakeLists.txt, LICENSE, python-package/lightgbm/, python-package/pyproject.toml
# and README.rst, VERSION.txt must equal the sdist's files (external_libs/ are git submodules,
# not in the tag's tree). Why not 4.6.0: its CMakeLists.txt sets CUDA_ARCHITECTURES 60..120 on
# its targets whatever CMAKE_CUDA_ARCHITECTURES says, and CUDA 13's nvcc has no sm_60/61/62/70
# (it starts at compute_75), so 4.6.0 cannot be built unchanged with CUDA 13 (torch's cu130).
# 4.7.0 also has what this is about: find_package(NCCL) through its own cmake/modules/
# FindNCCL.cmake, an imported target NCCL::NCCL that lightgbm_objs links.
#
# Three phases:
#
#   tests/adopt/lightgbm.sh fetch DIR [TOOLS]
#       (network: PyPI, and git for the tag) Puts under DIR what the build and the test need
#       offline, and is carried to the GPU machine (about 4 MB): lightgbm-4.7.0.tar.gz (the
#       sdist); lightgbm-4.7.0-tests.tar.xz (git archive of the tag: tests/python_package_test
#       and examples/); wheels/: py3 wheels of narwhals (lightgbm 4.7.0 imports it) and
#       cloudpickle (the tests' utils.py imports it) for a torch machine that lacks them.
#       DIR/PROVENANCE: versions, sources, commit, sha256; DIR/SHA256SUMS: what build and test
#       check. TOOLS (default DIR-build-tools, a sibling of DIR: 26 MB, never carried) gets what
#       only the build needs, for this machine's Python: scikit-build-core (with packaging,
#       pathspec) and CMake 3.31.10's PyPI wheel (LightGBM needs CMake >= 3.28; Debian bookworm
#       has 3.25). The tag comes from LGB_GIT (default the URL above; a local clone or mirror
#       directory, e.g. LGB_GIT=$HOME/src/LightGBM, is read with
#       git -C DIR archive, no clone). Needs python3 with venv and pip, git, xz.
#
#   tests/adopt/lightgbm.sh build DIR OUT [SWITCH_FILE]
#       (offline, no GPU) Unpacks the sdist into WORK/src (WORK: LGB_WORK, default OUT/work)
#       and runs, as LightGBM's own CI does for its CUDA job (.ci/test.sh, TASK=cuda METHOD=pip:
#       pip install --config-settings=cmake.define.USE_CUDA=ON on the sdist),
#         pip wheel --no-build-isolation --no-deps --no-index -Cbuild-dir=WORK/skbuild \
#           -Ccmake.define.USE_CUDA=ON -Ccmake.define.CMAKE_CUDA_ARCHITECTURES=90 \
#           -Ccmake.define.BUILD_WITH_SHARED_NCCL=ON -Ccmake.define.NCCL_ROOT=/usr/local/cuda \
#           [-Ccmake.define.CMAKE_PROJECT_TOP_LEVEL_INCLUDES=SWITCH_FILE] .
#       in WORK/venv, a venv made from TOOLS (pip's build isolation would need PyPI). NCCL:
#       FindNCCL.cmake looks for libnccl_static.a unless BUILD_WITH_SHARED_NCCL is on (CI's
#       image has Debian's libnccl-dev with the archive); the toolkit here has libnccl.so only,
#       and the shared library is the one a stub can stand for. LGB_CUDA_ARCH overrides 90,
#       LGB_NCCL_ROOT the NCCL root (default CUDA_HOME, else /usr/local/cuda). WORK/skbuild is
#       kept: a second build with the same switch path and LGB_CMAKE_DEFINES re-configures
#       (reading the switch again) and rebuilds only what changed (a new stub archive: a
#       relink); another switch path (or none) or other definitions start it afresh. Writes
#       OUT/wheel/lightgbm-4.7.0-py3-none-linux_x86_64.whl (lib_lightgbm.so is loaded by
#       ctypes: no Python extension, any Python 3), OUT/build.log, OUT/FETCH_DIR (DIR
#       relative to OUT) and OUT/report.txt: the wheel's size, each .so's DT_NEEDED and
#       RPATH/RUNPATH, the configure's `cudaload:` lines and its NCCL line. With SWITCH_FILE
#       it exits 1 if a .so DT_NEEDs an NVIDIA library (libcu*, libnv*, libnccl*; libcudaload
#       excepted), has an RPATH/RUNPATH into a CUDA toolkit or nvidia/ directory, or the
#       configure printed no `cudaload: switched` line; without it, that is only reported.
#       Needs python3 with venv, nvcc (PATH, CUDACXX or /usr/local/cuda/bin/nvcc), ninja (else
#       make), readelf, nm.
#       LightGBM's find_package(OpenMP REQUIRED) links a CUDA test program at configure time
#       (OpenMP_CUDA): the switch leaves configure-time checks their runtime, so it configures
#       as without the switch (LGB_CMAKE_DEFINES, below, adds definitions where one is wanted).
#
#   tests/adopt/lightgbm.sh test WHEEL OUT [DIR]
#       (GPU machine, offline) Installs WHEEL into OUT/site (pip install --no-deps --target, or
#       unzipped if pip refuses it), DIR/wheels' packages this Python cannot import into
#       OUT/testdeps, and the tests tarball into OUT/src (tests/python_package_test with
#       examples/ beside, where the tests look for their data). Then:
#       (1) a probe process (OUT/probe.txt) imports torch first (CUDA initialised, a cuBLAS
#           matmul), trains a regression (5000 x 20, 50 rounds, 31 leaves) and a binary
#           classifier with device_type="cuda" and with "cpu", same data and parameters
#           (gpu_use_dp=true, deterministic), and compares them: for the regression
#           max |cuda - cpu| <= 1e-3 x max |cpu| (with double sums the trees are the same and
#           the outputs agree to rounding: 0 measured on an H200); for the classifier the
#           accuracy within 0.01 of the CPU model's (its CUDA learner grows other trees: the
#           probabilities differ by up to 0.189, the same without the switch); the same
#           number of trees; the model must say [device_type: cuda];
#       (2) LightGBM's own tests, pytest on OUT/src/tests/python_package_test/{LGB_TEST_FILES}
#           (default test_basic.py test_engine.py: the C API and training paths, 278
#           cases), with pytest-xdist -n LGB_XDIST (default 8, OMP_NUM_THREADS = cores/8,
#           PYTHONHASHSEED=0 so that every worker collects the same list; 0 or no xdist: one
#           process), no -x. How they run on CUDA without a change to their
#           sources: LightGBM's CI (.ci/test.sh, TASK=cuda) edits include/LightGBM/config.h
#           so that device_type defaults to "cuda" and gpu_use_dp to true, and sets TASK=cuda,
#           which the tests read (utils.BuildInfo.has_cuda) to skip what the CUDA learner does
#           not support and expect its model parameters. Here: TASK=cuda likewise, and a pytest
#           plugin written into OUT/plugin (lgb_device.py, loaded with -p, in every xdist
#           worker) imports torch first, then adds device_type=cuda and gpu_use_dp=true to every
#           parameter string the Python package hands to the C API (lightgbm.basic.
#           _param_dict_to_str, wrapped), unless the call gives device/device_type or
#           gpu_use_dp itself: the parameters CI's defaults stand for, given as parameters;
#       (3) reads /proc/self/maps of the probe and of every pytest process (at the session's
#           end): every mapped NVIDIA library (lib(cu|nv|nccl)*: libcudart, libcublas,
#           libnccl, libcuda, ...). The proof wants each from exactly one path, libcudart
#           among them, and each of the CUDA toolkit's from torch's wheels (a path with
#           /nvidia/; the driver's libcuda and libnvidia-* excepted).
#       Writes OUT/test-report.txt (pass/fail/skip counts), OUT/probe.txt, OUT/pytest.log,
#       OUT/junit.xml, OUT/maps/. Exits 1 if the probe failed, a test failed that is not in
#       LGB_KNOWN_FAILURES (below: two that fail the same without the switch), or a process maps a
#       library twice or one not torch's. DIR (the fetch directory) defaults to the one the
#       build recorded (WHEEL/../FETCH_DIR, relative). Needs a Python with torch (CUDA), numpy,
#       scipy, scikit-learn, pytest, psutil, joblib (PYTHON, default python3).
#
# Environment: PYTHON (default python3), CMAKE_BUILD_PARALLEL_LEVEL (default nproc), LGB_GIT,
# LGB_WORK, LGB_CUDA_ARCH, LGB_NCCL_ROOT (see above), LGB_BUILD_TOOLS (default DIR-build-tools),
# LGB_CMAKE_DEFINES (more configure definitions for the build, NAME=VALUE words; none by
# default), LGB_TEST_FILES, LGB_XDIST, LGB_DEVICE (default cuda; cpu runs the test phase's
# steps with device_type=cpu and no TASK, to check the script on a machine without a GPU: it
# then fails its maps check, and the CUDA build refuses ranking positions, 3 tests of
# test_basic.py, which TASK=cuda skips).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

LGB_VERSION=4.7.0
LGB_SDIST=lightgbm-$LGB_VERSION.tar.gz
LGB_SDIST_SHA256=f8e20f682c9aabd000bcf4a7ed8aa6f473c1adfecccae34ec24e823d156f4af0
LGB_TAG=v$LGB_VERSION
LGB_TAG_COMMIT=8f7036f03627054d5a54a6f965b13f4b9ff2cb63   # "release v4.7.0 (#7129)", 2026-07-18
LGB_TESTS=lightgbm-$LGB_VERSION-tests.tar.xz
LGB_GIT=${LGB_GIT:-https://github.com/lightgbm-org/LightGBM.git}
CMAKE_PIN=3.31.10        # newest CMake 3 (4.x drops cmake_minimum_required < 3.5 compatibility)
PYTHON=${PYTHON:-python3}
# LightGBM 4.7.0's own tests that fail with device_type=cuda on CUDA 13 whatever links the
# library: on an H200 (torch 2.11 cu130), these two failed the same with the switch and with
# NVIDIA's libraries linked directly (a build without the switch); the test phase reports them
# and fails on any other.
LGB_KNOWN_FAILURES=${LGB_KNOWN_FAILURES-"test_engine.py::test_max_bin_by_feature test_engine.py::test_forced_bins"}
LGB_KNOWN_WHY="fail the same without the switch: LightGBM's CUDA learner and forced or per-feature bins"

say() { printf 'lightgbm: %s\n' "$*"; }
die() { printf 'lightgbm: error: %s\n' "$*" >&2; exit 1; }
usage() { sed -n '3,/^set -u/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 2; }

# ---------------------------------------------------------------------------------------------
# The tag's files that must equal the sdist's: "tag-path sdist-path" pairs.
SAME_AS_SDIST=(
    "src src" "include include" "cmake cmake" "swig swig" "CMakeLists.txt CMakeLists.txt"
    "LICENSE LICENSE" "python-package/lightgbm lightgbm" "python-package/pyproject.toml pyproject.toml"
    "python-package/README.rst README.rst" "VERSION.txt lightgbm/VERSION.txt"
)

fetch() {
    [ $# -eq 1 ] || [ $# -eq 2 ] || usage
    local dir; dir=$(abspath "$1")
    local tools; tools=$(abspath "${2:-${dir%/}-build-tools}")
    local tmp; tmp=$(mktemp -d /tmp/lightgbm-fetch.XXXXXX)
    say "fetch into $dir, build tools into $tools (scratch $tmp)"

    # Build tools for this machine's Python. The scratch venv installs them from there: pip
    # download of the sdist prepares its metadata with the sdist's backend, scikit-build-core,
    # which wants CMake >= 3.28 (the CMakeLists.txt's minimum) even for that; with build
    # isolation and --no-binary :all: pip would build CMake itself from source.
    say "build tools: scikit-build-core, cmake==$CMAKE_PIN"
    rm -rf "$tools" && mkdir -p "$tools"
    "$PYTHON" -m pip download -q --only-binary :all: -d "$tools" scikit-build-core "cmake==$CMAKE_PIN" \
        || die "pip download scikit-build-core cmake==$CMAKE_PIN failed"
    "$PYTHON" -m venv "$tmp/venv" || die "$PYTHON -m venv failed"
    "$tmp/venv/bin/pip" install -q --no-index --find-links "$tools" scikit-build-core cmake \
        || die "installing the build tools into the scratch venv failed"

    say "sdist: pip download lightgbm==$LGB_VERSION"
    rm -f "$dir/$LGB_SDIST"
    PATH=$tmp/venv/bin:$PATH "$tmp/venv/bin/pip" download -q --no-deps --no-binary :all: --no-build-isolation \
        "lightgbm==$LGB_VERSION" -d "$dir" || die "pip download lightgbm==$LGB_VERSION failed"
    echo "$LGB_SDIST_SHA256  $dir/$LGB_SDIST" | sha256sum -c --quiet - || die "$LGB_SDIST: sha256 differs from the pinned one"

    # The tests from the release tag: a local repository is read in place, a URL cloned
    # (bare, depth 1, the tag only).
    say "tests: $LGB_TAG of $LGB_GIT"
    local gd
    if [ -d "$LGB_GIT" ]; then
        gd=$LGB_GIT
    else
        git clone -q --bare --depth 1 --branch "$LGB_TAG" "$LGB_GIT" "$tmp/repo.git" \
            || die "git clone --branch $LGB_TAG $LGB_GIT failed"
        gd=$tmp/repo.git
    fi
    local commit; commit=$(git -C "$gd" rev-parse --verify -q "$LGB_TAG^{commit}") || die "$LGB_GIT has no tag $LGB_TAG"
    [ "$commit" = "$LGB_TAG_COMMIT" ] || die "$LGB_TAG of $LGB_GIT is $commit, not the pinned $LGB_TAG_COMMIT"
    mkdir -p "$tmp/tag" "$tmp/sdist"
    local pair paths=()
    for pair in "${SAME_AS_SDIST[@]}"; do paths+=("${pair%% *}"); done
    git -C "$gd" archive "$commit" "${paths[@]}" | tar x -C "$tmp/tag" || die "git archive $commit failed"
    tar xzf "$dir/$LGB_SDIST" -C "$tmp/sdist" || die "unpacking $LGB_SDIST failed"
    local s=$tmp/sdist/lightgbm-$LGB_VERSION
    for pair in "${SAME_AS_SDIST[@]}"; do
        if [ "${pair%% *}" = python-package/lightgbm ]; then
            diff -r -x VERSION.txt "$tmp/tag/${pair%% *}" "$s/${pair#* }" > "$tmp/diff.txt" 2>&1
        else
            diff -r "$tmp/tag/${pair%% *}" "$s/${pair#* }" > "$tmp/diff.txt" 2>&1
        fi || { head -20 "$tmp/diff.txt"; die "$LGB_TAG's ${pair%% *} differs from the sdist's ${pair#* }"; }
    done
    git -C "$gd" archive --format=tar --prefix="lightgbm-$LGB_VERSION-tests/" "$commit" \
        tests/python_package_test examples | xz -6 -T1 > "$dir/$LGB_TESTS" || die "git archive of the tests failed"
    say "$LGB_TESTS: $(stat -c %s "$dir/$LGB_TESTS") bytes"

    # py3 wheels the test may need on the torch machine (its Python 3.12; both are pure Python)
    say "py3 wheels for the test: narwhals cloudpickle"
    rm -rf "$dir/wheels"
    "$tmp/venv/bin/pip" download -q --no-deps --only-binary :all: --python-version 3.12 --implementation cp \
        --platform manylinux_2_17_x86_64 --platform linux_x86_64 \
        -d "$dir/wheels" 'narwhals>=1.15' cloudpickle || die "pip download of the wheels failed"

    {
        echo "# LightGBM offline build and test inputs, fetched $(date -u +%Y-%m-%dT%H:%M:%SZ) by tests/adopt/lightgbm.sh fetch"
        echo "$LGB_SDIST: LightGBM $LGB_VERSION sdist, PyPI (pip download --no-binary :all: lightgbm==$LGB_VERSION)"
        echo "  sha256 $(sha256sum < "$dir/$LGB_SDIST" | cut -d' ' -f1)"
        echo "$LGB_TESTS: git archive of tests/python_package_test and examples/ at $LGB_TAG = $commit"
        echo "  of $LGB_GIT; the tag's ${paths[*]} equal the sdist's"
        echo "  sha256 $(sha256sum < "$dir/$LGB_TESTS" | cut -d' ' -f1)"
        echo "wheels/: PyPI, pip download --only-binary :all: --python-version 3.12:"
        local w; for w in "$dir"/wheels/*.whl; do
            echo "  $(basename "$w") sha256 $(sha256sum < "$w" | cut -d' ' -f1)"
        done
        echo "build tools (not in this directory; $tools): PyPI, pip download --only-binary :all: for $("$PYTHON" -c 'import sys; print("Python", sys.version.split()[0])'):"
        for w in "$tools"/*.whl; do
            echo "  $(basename "$w") sha256 $(sha256sum < "$w" | cut -d' ' -f1)"
        done
    } > "$dir/PROVENANCE"
    (cd "$dir" && sha256sum "$LGB_SDIST" "$LGB_TESTS" wheels/*.whl) > "$dir/SHA256SUMS"
    (cd "$tools" && sha256sum ./*.whl) > "$tools/SHA256SUMS"
    rm -rf "$tmp"
    say "fetched: $(du -sh "$dir" | cut -f1) in $dir, $(du -sh "$tools" | cut -f1) in $tools"
    cat "$dir/PROVENANCE"
}

# ---------------------------------------------------------------------------------------------
# readelf -d facts of every .so under $1, one block each; sets BAD to the list of problems.
report_elves() {
    local root=$1 so needed rp n
    BAD=""
    while IFS= read -r so; do
        echo "${so#"$root"/}"
        needed=$(readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
        rp=$(readelf -d "$so" | sed -n 's/.*(\(RPATH\|RUNPATH\)).*\[\(.*\)\]/\1 \2/p')
        echo "  DT_NEEDED: $(echo $needed)"
        echo "  RPATH/RUNPATH: ${rp:-none}"
        echo "  undefined dynamic symbols named cu*/nv*/nccl*: $(nm -D --undefined-only "$so" 2>/dev/null | awk '{print $NF}' | grep -c -E '^_?_?(cu|nv|nccl)')"
        for n in $needed; do
            case $n in
                libcudaload*) ;;
                libcu*|libnv*|libnccl*) BAD="$BAD ${so##*/}:DT_NEEDED=$n" ;;
            esac
        done
        case $rp in *nvidia/*|*cuda*) BAD="$BAD ${so##*/}:${rp// /=}" ;; esac
    done < <(find "$root" -name '*.so*' -type f | sort)
}

build() {
    local dir out switch
    build_args "$@"
    local tools=${LGB_BUILD_TOOLS:-${dir%/}-build-tools}
    (cd "$tools" 2>/dev/null && sha256sum -c --quiet SHA256SUMS) || die "$tools: no build tools, or SHA256SUMS does not match (run fetch again)"
    local work; work=$(abspath "${LGB_WORK:-$out/work}")
    local src=$work/src/lightgbm-$LGB_VERSION

    say "build in $work (inputs $dir, tools $tools${switch:+, switch $switch})"
    rm -rf "$out/wheel" "$out/build.log" "$out/report.txt" "$work/src" "$work/wheel-unpacked"
    mkdir -p "$work/src" "$out/wheel"
    # tar keeps the sdist's times: a kept build tree sees unchanged sources
    tar xzf "$dir/$LGB_SDIST" -C "$work/src" || die "unpacking $LGB_SDIST failed"
    # the build tree is kept for the same switch path and definitions only (a definition
    # dropped would stay in the cache)
    local key="switch=$switch defines=${LGB_CMAKE_DEFINES:-}"
    if [ "$(cat "$work/skbuild.key" 2>/dev/null)" != "$key" ]; then
        rm -rf "$work/skbuild"
        echo "$key" > "$work/skbuild.key"
    fi

    # the build Python: a venv with the build tools (no build isolation: that needs PyPI)
    if ! "$work/venv/bin/python" -c 'import scikit_build_core, cmake' 2>/dev/null; then
        rm -rf "$work/venv"
        "$PYTHON" -m venv "$work/venv" || die "$PYTHON -m venv failed"
        "$work/venv/bin/pip" install -q --no-index --find-links "$tools" scikit-build-core cmake \
            || die "installing scikit-build-core and cmake from $tools failed"
    fi
    export PATH=$work/venv/bin:$PATH
    local cuda_home=${CUDA_HOME:-/usr/local/cuda}
    if [ -z "${CUDACXX:-}" ] && ! command -v nvcc >/dev/null && [ -x "$cuda_home/bin/nvcc" ]; then
        export CUDACXX=$cuda_home/bin/nvcc
    fi
    export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}

    local defs=(
        -Ccmake.define.USE_CUDA=ON
        -Ccmake.define.CMAKE_CUDA_ARCHITECTURES="${LGB_CUDA_ARCH:-90}"
        # FindNCCL.cmake: the shared libnccl (the static archive it looks for by default is
        # not in the toolkit), under NCCL_ROOT/include and NCCL_ROOT/lib
        -Ccmake.define.BUILD_WITH_SHARED_NCCL=ON
        -Ccmake.define.NCCL_ROOT="${LGB_NCCL_ROOT:-$cuda_home}"
        -Cbuild-dir="$work/skbuild"
        -Cbuild.verbose=true
    )
    [ -n "$switch" ] && defs+=(-Ccmake.define.CMAKE_PROJECT_TOP_LEVEL_INCLUDES="$switch")
    local d
    for d in ${LGB_CMAKE_DEFINES:-}; do defs+=(-Ccmake.define."$d"); done

    say "python $(python -c 'import sys, scikit_build_core as s; print(sys.version.split()[0], "scikit-build-core", s.__version__)'), $(cmake --version | head -1), nvcc ${CUDACXX:-$(command -v nvcc)}, CMAKE_BUILD_PARALLEL_LEVEL=$CMAKE_BUILD_PARALLEL_LEVEL"
    say "pip wheel (log: $out/build.log)"
    local t0=$SECONDS rc
    (cd "$src" && python -m pip wheel -v --no-build-isolation --no-deps --no-index -w "$out/wheel" "${defs[@]}" .) \
        > "$out/build.log" 2>&1
    rc=$?
    local secs=$((SECONDS - t0))
    python -c 'import os, sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' "$dir" "$out" > "$out/FETCH_DIR"
    if [ $rc -ne 0 ]; then
        tail -40 "$out/build.log"
        die "pip wheel failed (rc $rc, ${secs}s); full log $out/build.log"
    fi
    local whl; whl=$(ls "$out"/wheel/lightgbm-*.whl 2>/dev/null | head -1)
    [ -n "$whl" ] || die "pip wheel made no wheel"
    python -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$whl" "$work/wheel-unpacked"

    {
        echo "LightGBM $LGB_VERSION CUDA wheel, built $(date -u +%Y-%m-%dT%H:%M:%SZ) in ${secs}s (CMAKE_BUILD_PARALLEL_LEVEL=$CMAKE_BUILD_PARALLEL_LEVEL)"
        echo "switch: ${switch:-none (plain build)}${switch:+ ($(stat -c '%y, %s bytes' "$switch"))}"
        echo "more configure definitions (LGB_CMAKE_DEFINES): ${LGB_CMAKE_DEFINES:-none}"
        echo "wheel: $(basename "$whl"), $(stat -c %s "$whl") bytes"
        echo "Python extension modules in it (none expected: ctypes loads lib_lightgbm.so): $(find "$work/wheel-unpacked" -name '*.cpython-*' | wc -l)"
        echo "configure: $(grep -m1 -E 'Using nccl library' "$out/build.log" | sed 's/^ *//')"
        echo "cudaload lines at configure time:"
        # each `cudaload:` line with the lines it continues on (indented deeper)
        local cl; cl=$(awk '/^ *(-- )?cudaload:/ { ind = match($0, /[^ ]/); print; next }
            ind && match($0, /[^ ]/) > ind { print; next } { ind = 0 }' "$out/build.log")
        echo "${cl:-none}" | sed 's/^  //; s/^/  /'
        echo "shared objects:"
        report_elves "$work/wheel-unpacked" > "$work/elves.txt"   # in this shell: it sets BAD
        sed 's/^/  /' "$work/elves.txt"
    } > "$out/report.txt"
    local verdict=0
    build_verdict "$out" "$switch" || verdict=1
    say "wheel $whl (${secs}s)"
    exit $verdict
}

# ---------------------------------------------------------------------------------------------
# Both the probe and the plugin: the NVIDIA libraries this process maps, one "MAPPED <name>
# <count> <paths>" line each (name: the file name up to ".so"; libcudaload's own excepted).
MAPS_LINES='
import os, re
def maps_lines():
    libs = {}
    for line in open("/proc/self/maps"):
        f = line.split(None, 5)
        if len(f) < 6:
            continue
        path = f[5].strip()
        base = os.path.basename(path)
        if re.match(r"lib(cu|nv|nccl)", base) and ".so" in base and not base.startswith("libcudaload"):
            libs.setdefault(base.split(".so")[0], set()).add(path)
    return ["MAPPED %s %d %s" % (k, len(v), " ".join(sorted(v))) for k, v in sorted(libs.items())]
'

# torch first, in the probe and in every pytest process: its CUDA libraries are then the ones
# loaded, and lib_lightgbm.so's stubs find them there.
TORCH_FIRST='
import os, sys
DEVICE = os.environ.get("LGB_DEVICE", "cuda")
try:
    import torch
except ImportError:
    if DEVICE == "cuda":
        raise
    torch = None
if torch is not None and DEVICE == "cuda":
    assert torch.cuda.is_available(), "torch sees no CUDA device"
    _a = torch.ones(256, 256, device="cuda")
    float((_a @ _a).sum())   # a context, cuBLAS loaded
'

PROBE=$MAPS_LINES$TORCH_FIRST'
import numpy as np
import lightgbm as lgb
print("python", sys.version.split()[0], "torch", torch.__version__ if torch else None,
      "cuda", torch.version.cuda if torch else None,
      torch.cuda.get_device_name(0) if torch is not None and DEVICE == "cuda" else "")
print("lightgbm", lgb.__version__, lgb.__file__)
rng = np.random.default_rng(0)
X = rng.normal(size=(5000, 20))
y = 2 * X[:, 0] + np.sin(3 * X[:, 1]) + 0.5 * X[:, 2] * X[:, 3] + rng.normal(scale=0.1, size=5000)
yb = (y > np.median(y)).astype(float)
ok = True
free = lambda: torch.cuda.mem_get_info()[0] if torch is not None and DEVICE == "cuda" else 0
for objective, target in (("regression", y), ("binary", yb)):
    params = {"objective": objective, "num_leaves": 31, "learning_rate": 0.1, "min_data_in_leaf": 20,
              "seed": 1, "deterministic": True, "gpu_use_dp": True, "verbosity": 1, "num_threads": 4}
    cpu = lgb.train({**params, "device_type": "cpu"}, lgb.Dataset(X, target), num_boost_round=50)
    f0 = free()
    dev = lgb.train({**params, "device_type": DEVICE}, lgb.Dataset(X, target), num_boost_round=50)
    f1 = free()
    p_cpu, p_dev = cpu.predict(X), dev.predict(X)
    diff = float(np.max(np.abs(p_dev - p_cpu)))
    said = "[device_type: %s]" % DEVICE in dev.model_to_string()
    if objective == "regression":
        what, value, tol = "max|diff|", diff, 1e-3 * float(np.max(np.abs(p_cpu)))
    else:
        # the CUDA learner grows other trees than the CPU one for the binary objective (max
        # |diff| of the probabilities 0.189 here, the same with the NVIDIA libraries linked
        # directly: tests/adopt/lightgbm.sh build without a switch): its accuracy is compared
        what = "|accuracy - cpu accuracy| (max|diff| of the probabilities %.3g)" % diff
        value = abs(float(np.mean((p_dev > 0.5) == target)) - float(np.mean((p_cpu > 0.5) == target)))
        tol = 0.01
    print("PREDICTIONS %s: device_type=%s vs cpu, %d trees each: %s = %.3g, tolerance %.3g: %s; "
          "model says [device_type: %s]: %s; GPU memory taken while the booster lives: %d MiB"
          % (objective, DEVICE, dev.num_trees(), what, value, tol, "ok" if value <= tol else "TOO FAR", DEVICE,
             said, (f0 - f1) >> 20))
    ok = ok and value <= tol and said and dev.num_trees() == cpu.num_trees()
print("\n".join(maps_lines()))
print("PROBE", "OK" if ok else "FAIL")
sys.exit(0 if ok else 1)
'

# The pytest plugin: torch first, the device parameters, the maps at the session's end.
PLUGIN=$MAPS_LINES$TORCH_FIRST'
import lightgbm.basic as _basic

_to_str = _basic._param_dict_to_str

def _param_dict_to_str(data):
    """Every parameter string for the C API, with the device CI makes the default."""
    given = {k for k, v in (data or {}).items() if v is not None}
    extra = []
    if not given & {"device", "device_type"}:
        extra.append("device_type=" + DEVICE)
    if DEVICE == "cuda" and "gpu_use_dp" not in given:
        extra.append("gpu_use_dp=true")
    return " ".join(p for p in [_to_str(data)] + extra if p)

_basic._param_dict_to_str = _param_dict_to_str

def pytest_report_header(config):
    return "lgb_device: device_type=%s%s added to LightGBM parameters; TASK=%s; torch %s" % (
        DEVICE, " gpu_use_dp=true" if DEVICE == "cuda" else "", os.environ.get("TASK", ""),
        torch.__version__ if torch is not None else "not imported")

def pytest_sessionfinish(session, exitstatus):
    name = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(os.path.join(os.environ["LGB_MAPS_DIR"], "pytest-%s.txt" % name), "w") as f:
        f.write("".join(l + "\n" for l in maps_lines()))
'

# Checks maps files (arguments); prints one line per problem.
CHECK_MAPS='
import re, sys
for fn in sys.argv[1:]:
    lines = [l.split() for l in open(fn) if l.startswith("MAPPED ")]
    names = {l[1] for l in lines}
    if "libcudart" not in names:
        print("%s: no libcudart mapped" % fn)
    for l in lines:
        name, count, paths = l[1], int(l[2]), l[3:]
        if count != 1:
            print("%s: %s mapped from %d paths: %s" % (fn, name, count, " ".join(paths)))
        driver = name == "libcuda" or name.startswith("libnvidia-")
        if not driver and not all("/nvidia/" in p for p in paths):
            print("%s: %s not from torch'"'"'s nvidia wheels: %s" % (fn, name, " ".join(paths)))
'

test_wheel() {
    local whl out dir
    test_args "$LGB_TESTS" "$@"
    (cd "$dir" && sha256sum -c --quiet SHA256SUMS) || die "$dir: SHA256SUMS does not match"
    export LGB_DEVICE=${LGB_DEVICE:-cuda}

    rm -rf "$out/site" "$out/testdeps" "$out/src" "$out/plugin" "$out/maps" "$out/junit.xml"
    mkdir -p "$out/plugin" "$out/maps" "$out/src"
    say "install $(basename "$whl") into $out/site"
    "$PYTHON" -m pip install -q --no-deps --no-index --target "$out/site" "$whl" 2>"$out/pip.err" || {
        say "pip refused it ($(tail -1 "$out/pip.err")): unzipping"
        "$PYTHON" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$whl" "$out/site" \
            || die "unzipping $whl failed"
    }
    local need=() m
    for m in narwhals cloudpickle; do "$PYTHON" -c "import $m" 2>/dev/null || need+=("$m"); done
    if [ ${#need[@]} -gt 0 ]; then
        say "installing ${need[*]} from $dir/wheels into $out/testdeps"
        "$PYTHON" -m pip install -q --no-deps --no-index --find-links "$dir/wheels" --target "$out/testdeps" "${need[@]}" \
            || die "installing ${need[*]} failed"
    fi
    "$PYTHON" -c '
import sys, tarfile
kw = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
tarfile.open(sys.argv[1]).extractall(sys.argv[2], **kw)' "$dir/$LGB_TESTS" "$out/src" \
        || die "unpacking $LGB_TESTS failed"
    local tests=$out/src/lightgbm-$LGB_VERSION-tests
    printf '%s' "$PLUGIN" > "$out/plugin/lgb_device.py"

    export PYTHONPATH=$out/site:$out/testdeps:$out/plugin${PYTHONPATH:+:$PYTHONPATH}
    export LGB_MAPS_DIR=$out/maps
    # the tests read TASK (utils.BuildInfo.has_cuda) as in LightGBM's CI
    if [ "$LGB_DEVICE" = cuda ]; then export TASK=cuda; else unset TASK; fi
    local rc_probe rc_test t0=$SECONDS
    say "probe: device_type=$LGB_DEVICE against cpu, then /proc/self/maps"
    (cd "$out" && "$PYTHON" -c "$PROBE") > "$out/probe.txt" 2>&1; rc_probe=$?
    grep -E '^(python|lightgbm|PREDICTIONS|MAPPED|PROBE)' "$out/probe.txt"
    grep -E '^MAPPED' "$out/probe.txt" > "$out/maps/probe.txt"
    local t1=$SECONDS

    local files=() f
    for f in ${LGB_TEST_FILES:-test_basic.py test_engine.py}; do files+=("python_package_test/$f"); done
    local xd=${LGB_XDIST:-8} par=()
    if [ "$xd" -gt 0 ] && "$PYTHON" -c 'import xdist' 2>/dev/null; then
        par=(-n "$xd")
        export OMP_NUM_THREADS=$(( $(nproc) / xd > 0 ? $(nproc) / xd : 1 ))
        # some parametrizations iterate over sets: one hash seed, or the workers collect
        # the tests in different orders and xdist refuses to run them
        export PYTHONHASHSEED=0
    fi
    say "pytest ${files[*]} ${par[*]} (log $out/pytest.log)"
    (cd "$tests/tests" && "$PYTHON" -m pytest -p lgb_device -p no:cacheprovider --rootdir "$tests/tests" \
        -rfEs "${par[@]}" --junitxml="$out/junit.xml" "${files[@]}") > "$out/pytest.log" 2>&1
    rc_test=$?
    local secs=$((SECONDS - t1)) secs_probe=$((t1 - t0))
    tail -5 "$out/pytest.log"
    # the counts, and the failures and errors not in LGB_KNOWN_FAILURES
    local counts unexpected
    counts=$(junit_counts "$out/junit.xml")
    unexpected=$("$PYTHON" -c '
import sys, xml.etree.ElementTree as E
known = sys.argv[2].split()
for c in E.parse(sys.argv[1]).getroot().iter("testcase"):
    if c.find("failure") is not None or c.find("error") is not None:
        name = c.get("classname", "").rsplit(".", 1)[-1] + ".py::" + c.get("name", "")
        if name not in known:
            print(name)' "$out/junit.xml" "$LGB_KNOWN_FAILURES" 2>&1) || unexpected="junit.xml unreadable"
    local problems; problems=$("$PYTHON" -c "$CHECK_MAPS" "$out"/maps/*.txt 2>&1)
    local ok=1
    {
        echo "LightGBM $LGB_VERSION tests with device_type=$LGB_DEVICE (TASK=${TASK:-}), $(basename "$whl"), $(date -u +%Y-%m-%dT%H:%M:%SZ)"
        grep -m1 '^python' "$out/probe.txt"
        echo "probe (rc $rc_probe, ${secs_probe}s):"; grep -E '^(PREDICTIONS|MAPPED|PROBE)' "$out/probe.txt" | sed 's/^/  /'
        echo "pytest ${files[*]} ${par[*]} (rc $rc_test, ${secs}s): $counts"
        grep -E '^(FAILED|ERROR) ' "$out/pytest.log" | sed 's/^/  /' | head -40
        echo "known to fail (LGB_KNOWN_FAILURES: $LGB_KNOWN_WHY): $LGB_KNOWN_FAILURES"
        echo "failed and not known: ${unexpected:-none}"
        echo "pytest processes at session end ($(ls "$out"/maps/pytest-*.txt 2>/dev/null | wc -l) maps):"
        cat "$out"/maps/pytest-*.txt 2>/dev/null | sort | uniq -c | sed 's/^/  /'
        if [ -n "$problems" ]; then echo "maps problems:"; echo "$problems" | sed 's/^/  /'; fi
    } > "$out/test-report.txt"
    [ $rc_probe -eq 0 ] && [ -f "$out/junit.xml" ] && [ -z "$unexpected" ] && [ -z "$problems" ] || ok=0
    ls "$out"/maps/pytest-*.txt >/dev/null 2>&1 || ok=0
    test_verdict "$ok" "$out" "probe and tests passed (but the known failures); every NVIDIA library mapped once, the toolkit's from torch's nvidia wheels"
}

run_phase "$@"
