#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/adopt/jax-finufft.sh: build jax-finufft 1.3.1's GPU wheel from its PyPI sdist, unchanged,
# on a machine with no network, with or without libcudaload's CMake stubs switch, and test it.
#
# Three phases:
#
#   tests/adopt/jax-finufft.sh fetch DIR
#       (network: PyPI and Debian only) Puts under DIR everything the build needs offline:
#       the jax-finufft 1.3.1 sdist, FFTW 3.3.10's source (Debian's orig tarball: upstream's
#       tarball, the md5 finufft pins), xsimd's headers and CMake package (Debian's
#       libxsimd-dev, 14.x: finufft pins an xsimd commit after 14.0.0), a stand-in for
#       CPM.cmake (written here, see cpm_standin), and cp312 wheels of setuptools_scm (the
#       sdist's version provider), pydantic and absl-py (run time and test imports) for a
#       machine that lacks them. DIR/PROVENANCE lists versions, sources and sha256 of each.
#       Needs python3 with venv and pip, apt-get, dpkg-deb.
#
#   tests/adopt/jax-finufft.sh build DIR OUT [SWITCH_FILE]
#       (offline) Unpacks the sdist and FFTW under OUT/work, runs
#       `pip wheel --no-build-isolation --no-deps --no-index` with JAX_FINUFFT_USE_CUDA=ON,
#       CMAKE_CUDA_ARCHITECTURES=90 (JFB_CUDA_ARCH overrides), the offline CPM setup, and
#       -Ccmake.define.CMAKE_PROJECT_TOP_LEVEL_INCLUDES=SWITCH_FILE when given. Writes
#       OUT/wheel/*.whl, OUT/build.log and OUT/report.txt (wheel size, each .so's DT_NEEDED
#       and RPATH/RUNPATH). With SWITCH_FILE it exits 1 if a .so DT_NEEDs a CUDA library
#       (lib(cu|nv)*, libcudaload excepted) or has an RPATH into nvidia/; without it, that is
#       only reported (the plain build is expected to DT_NEED libcudart and libcufft).
#       Needs a Python with jax, nanobind, scikit-build-core, numpy (PYTHON, default python3),
#       cmake >= 3.24, ninja, nvcc (PATH, CUDACXX or /usr/local/cuda/bin/nvcc), readelf.
#
#   tests/adopt/jax-finufft.sh test WHEEL OUT [DIR]
#       (GPU machine, offline) Installs WHEEL into OUT/site (pip install --no-deps --target),
#       runs a GPU transform in a probe process and jax-finufft's own tests (the sdist's
#       tests/, pytest, JAX_PLATFORMS=cuda so every test runs on the GPU), and reports, from
#       /proc/self/maps of both processes, every mapped libcudart* and libcufft* (the proof
#       wants exactly one of each, those of JAX's nvidia wheels). Writes OUT/test-report.txt,
#       OUT/pytest.log, OUT/junit.xml, OUT/probe.txt. Exits 1 if a test failed or the maps
#       show other than one libcudart and one libcufft. DIR (the fetch directory: tests and
#       wheels) defaults to the one the build recorded beside the wheel (WHEEL/../../FETCH_DIR).
#       Needs a Python with jax and its CUDA plugin, numpy, pytest (PYTHON, default python3).
#
# Environment: PYTHON (interpreter, default python3), CMAKE_BUILD_PARALLEL_LEVEL (default:
# nproc), JFB_CUDA_ARCH (default 90), JFT_JAX_PLATFORMS (default cuda; cpu only checks the
# test phase's steps on a machine without a GPU, and then fails its maps check).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

JF_VERSION=1.3.1
JF_SDIST=jax_finufft-$JF_VERSION.tar.gz
JF_SDIST_SHA256=821d981bf180916ba8c5076bd6e267a4d0e1cb0b01ea60c029859f78db5a55f1
FFTW_VERSION=3.3.10
FFTW_TARBALL=fftw3_$FFTW_VERSION.orig.tar.gz
FFTW_SHA256=56c932549852cddcfafdab3820b0200c7742675be92179e59e6215b340e26467
FFTW_MD5=8ccbf6a5ea78a16dbc3e1306e234cc5c   # the hash finufft's setupFFTW.cmake pins
CPM_VERSION=0.42.0                          # finufft's CPM_DOWNLOAD_VERSION
PYTHON=${PYTHON:-python3}

say() { printf 'jax-finufft: %s\n' "$*"; }
die() { printf 'jax-finufft: error: %s\n' "$*" >&2; exit 1; }
usage() { sed -n '3,/^set -u/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 2; }

# ---------------------------------------------------------------------------------------------
# The CPM.cmake stand-in. finufft's setupCPM.cmake includes
# ${CPM_SOURCE_CACHE}/cpm/CPM_0.42.0.cmake when it exists instead of downloading it, so this
# file is placed there. CPM.cmake itself is on neither PyPI nor Debian; this resolves
# CPMAddPackage the way CPM does with its offline overrides: CPM_<NAME>_SOURCE set -> that
# directory, added with add_subdirectory and the package's OPTIONS as normal variables
# (CMP0077 NEW, as CPM sets); otherwise find_package(<NAME> CONFIG) (CPM_USE_LOCAL_PACKAGES),
# with the CUDA toolkit's lib/cmake as a hint (CCCL); anything else stops the configure.
cpm_standin() {
    cat <<'EOF'
# CPM.cmake stand-in written by libcudaload's tests/adopt/jax-finufft.sh (offline builds).
# CPMAddPackage(NAME n ... [OPTIONS "K V" ...]): CPM_<n>_SOURCE -> add_subdirectory of that
# directory (with OPTIONS as variables); else find_package(<n> CONFIG); else a fatal error.
include_guard(GLOBAL)
cmake_policy(SET CMP0077 NEW)
set(CMAKE_POLICY_DEFAULT_CMP0077 NEW)   # OPTIONS set as normal variables override option()
if(POLICY CMP0126)
    cmake_policy(SET CMP0126 NEW)
    set(CMAKE_POLICY_DEFAULT_CMP0126 NEW)
endif()
set(CPM_VERSION 0.42.0-offline-standin)

function(CPMAddPackage)
    cmake_parse_arguments(A "" "NAME;VERSION;GIT_TAG;DOWNLOAD_ONLY;EXCLUDE_FROM_ALL" "OPTIONS" ${ARGN})
    if(NOT A_NAME)
        message(FATAL_ERROR "CPM stand-in: CPMAddPackage without NAME (${ARGN})")
    endif()
    string(TOLOWER "${A_NAME}" lower)
    set(CPM_LAST_PACKAGE_NAME ${A_NAME} PARENT_SCOPE)
    if(DEFINED CPM_${A_NAME}_SOURCE)
        set(src "${CPM_${A_NAME}_SOURCE}")
        set(bin "${CMAKE_BINARY_DIR}/_deps/${lower}-build")
        if(NOT IS_DIRECTORY "${src}")
            message(FATAL_ERROR "CPM stand-in: CPM_${A_NAME}_SOURCE=${src} is not a directory")
        endif()
        if(EXISTS "${src}/CMakeLists.txt" AND NOT A_DOWNLOAD_ONLY)
            foreach(opt IN LISTS A_OPTIONS)
                string(REGEX MATCH "^[^ ]+" key "${opt}")
                string(LENGTH "${key}" klen)
                string(SUBSTRING "${opt}" ${klen} -1 value)
                string(STRIP "${value}" value)
                if(value STREQUAL "")
                    set(value ON)
                endif()
                set(${key} "${value}")
            endforeach()
            set(extra)
            if(A_EXCLUDE_FROM_ALL)
                set(extra EXCLUDE_FROM_ALL)
            endif()
            add_subdirectory("${src}" "${bin}" ${extra})
        endif()
        message(STATUS "CPM stand-in: ${A_NAME} from ${src} (CPM_${A_NAME}_SOURCE)")
        set(${A_NAME}_SOURCE_DIR "${src}" PARENT_SCOPE)
        set(${A_NAME}_BINARY_DIR "${bin}" PARENT_SCOPE)
        set(${A_NAME}_ADDED YES PARENT_SCOPE)
        return()
    endif()
    set(hints)
    if(CUDAToolkit_LIBRARY_DIR)
        list(APPEND hints "${CUDAToolkit_LIBRARY_DIR}/cmake")
    endif()
    find_package(${A_NAME} CONFIG QUIET HINTS ${hints})
    if(${A_NAME}_FOUND)
        message(STATUS "CPM stand-in: ${A_NAME} ${${A_NAME}_VERSION} by find_package (${${A_NAME}_DIR}), wanted ${A_VERSION}${A_GIT_TAG}")
        set(${A_NAME}_FOUND YES PARENT_SCOPE)
        set(${A_NAME}_DIR "${${A_NAME}_DIR}" PARENT_SCOPE)
        set(${A_NAME}_VERSION "${${A_NAME}_VERSION}" PARENT_SCOPE)
        set(${A_NAME}_ADDED NO PARENT_SCOPE)
        return()
    endif()
    message(FATAL_ERROR "CPM stand-in (offline): no source for ${A_NAME}: set CPM_${A_NAME}_SOURCE or ${A_NAME}_DIR")
endfunction()
EOF
}

# ---------------------------------------------------------------------------------------------
fetch() {
    [ $# -eq 1 ] || usage
    local dir; dir=$(abspath "$1")
    local tmp; tmp=$(mktemp -d /tmp/jax-finufft-fetch.XXXXXX)
    say "fetch into $dir (scratch $tmp)"

    # pip download of an sdist prepares its metadata: the sdist's build backend
    # (scikit-build-core with the setuptools_scm provider) must be importable, and with build
    # isolation pip would also want jax==0.8.0's jaxlib for this Python. A scratch venv with
    # the two backend packages and --no-build-isolation avoids both.
    say "scratch venv for pip download"
    "$PYTHON" -m venv "$tmp/venv" || die "python3 -m venv failed"
    "$tmp/venv/bin/pip" install -q scikit-build-core setuptools_scm || die "pip install scikit-build-core setuptools_scm failed"
    "$tmp/venv/bin/pip" download -q --no-deps --no-binary :all: --no-build-isolation \
        "jax-finufft==$JF_VERSION" -d "$dir" || die "pip download jax-finufft==$JF_VERSION failed"
    echo "$JF_SDIST_SHA256  $dir/$JF_SDIST" | sha256sum -c --quiet - || die "$JF_SDIST: sha256 differs from the pinned one"

    # Wheels for the offline machine (Python 3.12, x86_64): setuptools_scm for the build
    # (the sdist's version provider; the build installs it only if missing), pydantic
    # (jax_finufft.options imports it) and absl-py (jax._src.test_util, used by the tests).
    say "cp312 wheels: setuptools_scm pydantic absl-py"
    rm -rf "$dir/wheels"
    "$tmp/venv/bin/pip" download -q --only-binary :all: --python-version 3.12 --implementation cp \
        --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux_2_28_x86_64 \
        -d "$dir/wheels" setuptools_scm 'pydantic>=2' absl-py || die "pip download of the wheels failed"

    # Debian packages through apt with a private configuration (this machine's sources
    # and state untouched): bookworm's fftw3 source, sid's libxsimd-dev (bookworm and
    # trixie have xsimd 8 and 13; finufft pins a commit after xsimd 14.0.0).
    say "apt: fftw3 $FFTW_VERSION source (bookworm), libxsimd-dev (sid)"
    mkdir -p "$tmp/apt/lists/partial" "$tmp/apt/cache/archives/partial" "$tmp/dl"
    cat > "$tmp/apt/sources.list" <<EOF
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian sid main
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main
EOF
    local apt_opts=(-o Dir::Etc::SourceList="$tmp/apt/sources.list" -o Dir::Etc::SourceParts=/nonexistent
        -o Dir::State::Lists="$tmp/apt/lists" -o Dir::Cache="$tmp/apt/cache"
        -o Dir::State::Status=/dev/null -o APT::Architecture=amd64 -o APT::Sandbox::User=root)
    apt-get -q "${apt_opts[@]}" update >"$tmp/apt-update.log" 2>&1 || { cat "$tmp/apt-update.log"; die "apt-get update (private lists) failed"; }
    (cd "$tmp/dl" && apt-get -q "${apt_opts[@]}" source --download-only "fftw3=$FFTW_VERSION-1") >"$tmp/apt-src.log" 2>&1 \
        || { cat "$tmp/apt-src.log"; die "apt-get source fftw3=$FFTW_VERSION-1 failed"; }
    (cd "$tmp/dl" && apt-get -q "${apt_opts[@]}" download libxsimd-dev) >"$tmp/apt-deb.log" 2>&1 \
        || { cat "$tmp/apt-deb.log"; die "apt-get download libxsimd-dev failed"; }
    cp "$tmp/dl/$FFTW_TARBALL" "$dir/" || die "no $FFTW_TARBALL"
    echo "$FFTW_MD5  $dir/$FFTW_TARBALL" | md5sum -c --quiet - || die "$FFTW_TARBALL: md5 is not finufft's pinned $FFTW_MD5"
    echo "$FFTW_SHA256  $dir/$FFTW_TARBALL" | sha256sum -c --quiet - || die "$FFTW_TARBALL: sha256 differs"
    local deb; deb=$(ls "$tmp"/dl/libxsimd-dev_*.deb) || die "no libxsimd-dev .deb"
    local xver; xver=$(dpkg-deb -f "$deb" Version)
    dpkg --compare-versions "$xver" ge 14 || die "libxsimd-dev $xver is older than 14 (finufft needs xsimd 14)"
    rm -rf "$dir/xsimd" "$tmp/x" && mkdir -p "$dir/xsimd"
    dpkg-deb -x "$deb" "$tmp/x" || die "dpkg-deb -x $deb failed"
    mkdir -p "$dir/xsimd/include" "$dir/xsimd/share/cmake"
    cp -r "$tmp/x/usr/include/xsimd" "$dir/xsimd/include/"
    cp -r "$tmp/x/usr/share/cmake/xsimd" "$dir/xsimd/share/cmake/"
    cp "$tmp/x/usr/share/doc/libxsimd-dev/copyright" "$dir/xsimd/copyright"

    mkdir -p "$dir/cpm-cache/cpm"
    cpm_standin > "$dir/cpm-cache/cpm/CPM_$CPM_VERSION.cmake"

    # PROVENANCE and the checksums the build verifies.
    {
        echo "# jax-finufft offline build inputs, fetched $(date -u +%Y-%m-%dT%H:%M:%SZ) by tests/adopt/jax-finufft.sh fetch"
        echo "$JF_SDIST: jax-finufft $JF_VERSION sdist, PyPI (pip download --no-binary :all: jax-finufft==$JF_VERSION)"
        echo "  sha256 $(sha256sum < "$dir/$JF_SDIST" | cut -d' ' -f1)"
        echo "$FFTW_TARBALL: FFTW $FFTW_VERSION source, Debian bookworm source package fftw3 $FFTW_VERSION-1"
        echo "  (apt-get source; http://deb.debian.org/debian/pool/main/f/fftw3/$FFTW_TARBALL; = upstream fftw-$FFTW_VERSION.tar.gz, md5 $FFTW_MD5 as finufft pins)"
        echo "  sha256 $(sha256sum < "$dir/$FFTW_TARBALL" | cut -d' ' -f1)"
        echo "xsimd/: headers and CMake package of Debian sid libxsimd-dev $xver ($(basename "$deb"), apt-get download)"
        echo "  .deb sha256 $(sha256sum < "$deb" | cut -d' ' -f1)"
        echo "cpm-cache/cpm/CPM_$CPM_VERSION.cmake: CPM.cmake stand-in written by this script (not CPM.cmake; CPM.cmake is on neither PyPI nor Debian)"
        echo "wheels/: PyPI, pip download --only-binary :all: --python-version 3.12 (linux x86_64):"
        local w; for w in "$dir"/wheels/*.whl; do
            echo "  $(basename "$w") sha256 $(sha256sum < "$w" | cut -d' ' -f1)"
        done
    } > "$dir/PROVENANCE"
    (cd "$dir" && sha256sum "$JF_SDIST" "$FFTW_TARBALL" wheels/*.whl "cpm-cache/cpm/CPM_$CPM_VERSION.cmake") > "$dir/SHA256SUMS"
    rm -rf "$tmp"
    say "fetched: $(du -sh "$dir" | cut -f1) in $dir"
    cat "$dir/PROVENANCE"
}

# ---------------------------------------------------------------------------------------------
# readelf -d facts of every .so under $1, one block each; sets BAD to the list of problems.
report_elves() {
    local root=$1 so needed rp
    BAD=""
    while IFS= read -r so; do
        echo "${so#"$root"/}"
        needed=$(readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
        rp=$(readelf -d "$so" | sed -n 's/.*(\(RPATH\|RUNPATH\)).*\[\(.*\)\]/\1 \2/p')
        echo "  DT_NEEDED: $(echo $needed)"
        echo "  RPATH/RUNPATH: ${rp:-none}"
        echo "  undefined dynamic symbols named cu*/nv*: $(nm -D --undefined-only "$so" 2>/dev/null | awk '{print $NF}' | grep -c -E '^_?_?(cu|nv)' )"
        local n; for n in $needed; do
            case $n in
                libcudaload*) ;;
                libcu*|libnv*) BAD="$BAD ${so##*/}:DT_NEEDED=$n" ;;
            esac
        done
        case $rp in *nvidia/*) BAD="$BAD ${so##*/}:${rp// /=}" ;; esac
    done < <(find "$root" -name '*.so*' -type f | sort)
}

build() {
    local dir out switch
    build_args "$@"

    local work=$out/work
    say "build in $work (inputs $dir${switch:+, switch $switch})"
    rm -rf "$work" "$out/wheel" "$out/build.log" "$out/report.txt"
    mkdir -p "$work/deps" "$out/wheel"
    tar xzf "$dir/$JF_SDIST" -C "$work" || die "unpacking $JF_SDIST failed"
    tar xzf "$dir/$FFTW_TARBALL" -C "$work/deps" || die "unpacking $FFTW_TARBALL failed"
    local src=$work/jax_finufft-$JF_VERSION fftw=$work/deps/fftw-$FFTW_VERSION
    # findFFTW (a FindFFTW.cmake module from GitHub) only serves finufft's search for an
    # installed FFTW; FINUFFT_FFTW_LIBRARIES=DOWNLOAD below skips that result and builds the
    # carried FFTW source instead, so an empty directory stands in for it.
    mkdir -p "$work/deps/findfftw-unused"

    # The build's Python: the sdist's metadata provider is setuptools_scm; installed from the
    # carried wheels into a side directory only when this Python lacks it.
    local m
    for m in jax nanobind scikit_build_core numpy; do
        "$PYTHON" -c "import $m" 2>/dev/null || die "$PYTHON cannot import $m"
    done
    if ! "$PYTHON" -c "import setuptools_scm" 2>/dev/null; then
        say "setuptools_scm missing: installing it from $dir/wheels into $work/pydeps"
        "$PYTHON" -m pip install -q --no-index --find-links "$dir/wheels" --target "$work/pydeps" setuptools_scm \
            || die "installing setuptools_scm from $dir/wheels failed"
        export PYTHONPATH=$work/pydeps${PYTHONPATH:+:$PYTHONPATH}
    fi
    # nvcc: CMake's check_language(CUDA) looks in PATH and CUDACXX.
    if [ -z "${CUDACXX:-}" ] && ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
        export CUDACXX=/usr/local/cuda/bin/nvcc
    fi
    export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}

    local defs=(
        -Ccmake.define.JAX_FINUFFT_USE_CUDA=ON
        -Ccmake.define.CMAKE_CUDA_ARCHITECTURES="${JFB_CUDA_ARCH:-90}"
        # a portable CPU part, as the project's own wheel builds (cibuildwheel config-settings)
        -Ccmake.define.FINUFFT_ARCH_FLAGS=
        # offline CPM: the stand-in at the place setupCPM.cmake looks before downloading,
        # FFTW built from the carried source (fftw3 and fftw3f are two CPM packages of one
        # tarball), xsimd and CCCL by find_package (the carried xsimd package; the toolkit's CCCL)
        -Ccmake.define.CPM_SOURCE_CACHE="$dir/cpm-cache"
        -Ccmake.define.CPM_findfftw_SOURCE="$work/deps/findfftw-unused"
        -Ccmake.define.FINUFFT_FFTW_LIBRARIES=DOWNLOAD
        -Ccmake.define.CPM_fftw3_SOURCE="$fftw"
        -Ccmake.define.CPM_fftw3f_SOURCE="$fftw"
        -Ccmake.define.xsimd_DIR="$dir/xsimd/share/cmake/xsimd"
        # Debian's xsimd package turns on its xtl complex support (needs xtl); xsimd's own
        # build, which finufft adds through CPM, has it off
        -Ccmake.define.XSIMD_ENABLE_XTL_COMPLEX=OFF
        -Cbuild.verbose=true
    )
    [ -n "$switch" ] && defs+=(-Ccmake.define.CMAKE_PROJECT_TOP_LEVEL_INCLUDES="$switch")

    say "python $("$PYTHON" -c 'import sys,jax,nanobind,scikit_build_core as s; print(sys.version.split()[0], "jax", jax.__version__, "nanobind", nanobind.__version__, "scikit-build-core", s.__version__)')"
    say "cmake $(cmake --version | head -1), nvcc ${CUDACXX:-$(command -v nvcc)}, CMAKE_BUILD_PARALLEL_LEVEL=$CMAKE_BUILD_PARALLEL_LEVEL"
    say "pip wheel (log: $out/build.log)"
    local t0=$SECONDS rc
    (cd "$src" && "$PYTHON" -m pip wheel -v --no-build-isolation --no-deps --no-index -w "$out/wheel" "${defs[@]}" .) \
        > "$out/build.log" 2>&1
    rc=$?
    local secs=$((SECONDS - t0))
    echo "$dir" > "$out/FETCH_DIR"
    if [ $rc -ne 0 ]; then
        tail -40 "$out/build.log"
        die "pip wheel failed (rc $rc, ${secs}s); full log $out/build.log"
    fi
    local whl; whl=$(ls "$out"/wheel/jax_finufft-*.whl 2>/dev/null | head -1)
    [ -n "$whl" ] || die "pip wheel made no wheel"
    rm -rf "$work/wheel-unpacked"
    "$PYTHON" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$whl" "$work/wheel-unpacked"

    {
        echo "jax-finufft $JF_VERSION GPU wheel, built $(date -u +%Y-%m-%dT%H:%M:%SZ) in ${secs}s"
        echo "switch: ${switch:-none (plain build)}"
        echo "wheel: $(basename "$whl"), $(stat -c %s "$whl") bytes"
        echo "cudaload lines at configure time:"
        local cl; cl=$(grep -E '^ *(-- )?cudaload:' "$out/build.log")
        echo "${cl:-none}" | sed 's/^ */  /'
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
# The lines both reports give of this process's /proc/self/maps: "MAPPED <lib> <count> <paths>"
# for libcudart and libcufft, then every mapped libcu*/libnv* path.
MAPS_LINES='
import os, re
def maps_lines():
    paths = sorted({l.split(None, 5)[5].strip() for l in open("/proc/self/maps") if len(l.split(None, 5)) == 6})
    lines = []
    for name in ("libcudart", "libcufft"):
        hits = [p for p in paths if re.match(name + r"(\.|$)", os.path.basename(p))]
        lines.append("MAPPED %s %d %s" % (name, len(hits), " ".join(hits)))
    return lines + ["  " + p for p in paths if re.search(r"/lib(cu|nv)[^/]*$", p)]
'

# The probe: one GPU transform, then the maps lines of this process.
PROBE=$MAPS_LINES'
import numpy as np, jax, jax_finufft
from jax_finufft import nufft1
devs = jax.devices()
print("jax", jax.__version__, "devices", devs)
print("jax_finufft", jax_finufft.__file__)
if os.environ["JAX_PLATFORMS"] == "cuda":
    assert devs[0].platform == "gpu", "JAX is not on the GPU"
print("jax_finufft_gpu module:", jax_finufft.lowering.jax_finufft_gpu)
x = np.linspace(-3, 3, 100).astype(np.float32)
c = (np.ones(100) + 0j).astype(np.complex64)
f = nufft1(64, c, x, eps=1e-6).block_until_ready()
print("nufft1 on", list(f.devices()), "|f[32]| =", float(abs(f[32])))
print("\n".join(maps_lines()))
'

# A pytest plugin that writes the same maps lines at the end of the test session.
MAPS_PLUGIN=$MAPS_LINES'
def pytest_sessionfinish(session, exitstatus):
    with open(os.environ["JFT_MAPS_OUT"], "w") as f:
        f.write("".join(l + "\n" for l in maps_lines()))
'

test_wheel() {
    local whl out dir
    test_args "$JF_SDIST" "$@"

    rm -rf "$out/site" "$out/testdeps" "$out/tests" "$out/plugin"
    mkdir -p "$out/plugin"
    say "install $(basename "$whl") into $out/site"
    "$PYTHON" -m pip install -q --no-deps --no-index --target "$out/site" "$whl" || die "pip install --target failed"
    # run time and test imports this Python may lack: from the carried wheels
    local need=() m
    for m in pydantic absl; do "$PYTHON" -c "import $m" 2>/dev/null || need+=("$m"); done
    if [ ${#need[@]} -gt 0 ]; then
        local pkgs=(); for m in "${need[@]}"; do [ "$m" = absl ] && pkgs+=(absl-py) || pkgs+=("$m"); done
        say "installing ${pkgs[*]} from $dir/wheels into $out/testdeps"
        "$PYTHON" -m pip install -q --no-index --find-links "$dir/wheels" --target "$out/testdeps" "${pkgs[@]}" \
            || die "installing ${pkgs[*]} failed"
    fi
    tar xzf "$dir/$JF_SDIST" -C "$out" "jax_finufft-$JF_VERSION/tests" && mv "$out/jax_finufft-$JF_VERSION/tests" "$out/tests" \
        && rmdir "$out/jax_finufft-$JF_VERSION" || die "unpacking the sdist's tests failed"
    printf '%s' "$MAPS_PLUGIN" > "$out/plugin/jft_maps.py"

    export PYTHONPATH=$out/site:$out/testdeps:$out/plugin${PYTHONPATH:+:$PYTHONPATH}
    # JAX on the GPU only: the tests use JAX's default device, so this makes each of them a
    # GPU test (and JAX fails instead of falling back to the CPU); no preallocation of 75%.
    # (JFT_JAX_PLATFORMS=cpu runs the same steps without a GPU, to check the script itself.)
    export JAX_PLATFORMS=${JFT_JAX_PLATFORMS:-cuda} XLA_PYTHON_CLIENT_PREALLOCATE=false
    local rc_probe rc_test t0=$SECONDS
    say "probe: one GPU transform, then /proc/self/maps"
    (cd "$out" && "$PYTHON" -c "$PROBE") > "$out/probe.txt" 2>&1; rc_probe=$?
    cat "$out/probe.txt"
    say "pytest $out/tests (log $out/pytest.log)"
    (cd "$out/tests" && JFT_MAPS_OUT=$out/pytest-maps.txt "$PYTHON" -m pytest -p jft_maps -p no:cacheprovider \
        --rootdir "$out/tests" -q -rfEs --junitxml="$out/junit.xml" .) > "$out/pytest.log" 2>&1
    rc_test=$?
    local secs=$((SECONDS - t0))
    tail -5 "$out/pytest.log"
    local counts
    counts=$(junit_counts "$out/junit.xml")
    local ok=1 l
    {
        echo "jax-finufft $JF_VERSION tests with JAX_PLATFORMS=$JAX_PLATFORMS, $(basename "$whl"), $(date -u +%Y-%m-%dT%H:%M:%SZ), ${secs}s"
        echo "python $("$PYTHON" -c 'import sys,jax; print(sys.version.split()[0], "jax", jax.__version__)' 2>&1)"
        echo "probe (rc $rc_probe):"; grep -E '^(jax|nufft1|MAPPED)' "$out/probe.txt" | sed 's/^/  /'
        echo "pytest (rc $rc_test): $counts"
        echo "pytest process at session end:"; sed 's/^/  /' "$out/pytest-maps.txt" 2>/dev/null || echo "  no maps written"
    } > "$out/test-report.txt"
    [ $rc_probe -eq 0 ] && [ $rc_test -eq 0 ] || ok=0
    for l in "$out/probe.txt" "$out/pytest-maps.txt"; do
        for m in libcudart libcufft; do
            # exactly one, and it is the one of JAX's nvidia wheels (site-packages/nvidia/...)
            grep -q "^MAPPED $m 1 .*/nvidia/" "$l" 2>/dev/null \
                || { ok=0; echo "NOT ONE $m, from JAX's nvidia wheels, mapped in $(basename "$l")" >> "$out/test-report.txt"; }
        done
    done
    test_verdict "$ok" "$out" "tests passed; one libcudart and one libcufft mapped, JAX's nvidia wheels' own"
}

run_phase "$@"
