#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/adopt/bitsandbytes.sh: build bitsandbytes 0.50.1's CUDA library from its source at the
# release tag, unchanged, on a machine with no network and no GPU, with or without libcudaload's
# CMake stubs switch, and test it with torch's CUDA on a GPU machine.
#
# Three phases:
#
#   tests/adopt/bitsandbytes.sh fetch DIR
#       (network: the git URL and PyPI) Puts under DIR the source of the tag (git fetch of the
#       tag from BNB_GIT, default https://github.com/bitsandbytes-foundation/bitsandbytes.git,
#       then git archive; the tag's commit and the archive's sha256 are pinned), less what
#       neither the build nor the tests read (docs/ benchmarking/ examples/ agents/ scripts/
#       .github/ .vscode/), as DIR/src; pure-Python wheels of the build backend for the offline
#       build (DIR/build-wheels: scikit-build-core, setuptools, trove-classifiers, packaging,
#       pathspec, wheel) and of the test dependencies a torch environment may lack
#       (DIR/wheels: lion-pytorch 0.2.3, which tests/test_optim.py imports, and einops 0.8, the
#       pins of the project's [test] extra). DIR/PROVENANCE lists versions, sources and sha256
#       of each; DIR/SHA256SUMS every file. Needs git, python3 with pip.
#
#   tests/adopt/bitsandbytes.sh build DIR OUT [SWITCH_FILE]
#       (offline, no GPU) Copies DIR/src to BNB_WORK (default OUT/work; the project writes its
#       library into its source tree) and builds it as the project's own CI does
#       (.github/scripts/build-cuda.sh, python-package.yml): `cmake -DCOMPUTE_BACKEND=cuda
#       -DCOMPUTE_CAPABILITY=90 -DCMAKE_CUDA_ARCHITECTURES=90` (BNB_CUDA_ARCH overrides; the
#       project derives CMAKE_CUDA_ARCHITECTURES from COMPUTE_CAPABILITY, so both are given),
#       plus -DCMAKE_PROJECT_TOP_LEVEL_INCLUDES=SWITCH_FILE when given, `cmake --build`; then
#       the wheel as upstream makes it: `BNB_SKIP_CMAKE=1 pip wheel --no-build-isolation
#       --no-deps --no-index` (scikit-build-core's setuptools backend, from DIR/build-wheels,
#       works offline) and `wheel tags --python-tag py3 --abi-tag none --platform-tag
#       linux_x86_64`: the library is loaded by ctypes, so one wheel serves every Python 3.
#       Writes OUT/wheel/bitsandbytes-*-py3-none-linux_x86_64.whl, OUT/build.log and
#       OUT/report.txt: the configure's `cudaload:` lines, the library's link command, each
#       .so's DT_NEEDED, RPATH/RUNPATH, size (and how much of it is DWARF), undefined cu*/nv*
#       symbols and exported cuda*/cublas*/cudaload* symbols. With SWITCH_FILE it exits 1 if a .so DT_NEEDs an NVIDIA library (libcu*,
#       libnv*; libcudaload excepted) or has an RPATH into the toolkit or nvidia/, or the
#       configure printed no `cudaload: switched` line; without it, that is only reported.
#       Needs cmake >= 3.24 (3.22 without the switch), make, a C++ compiler, nvcc 11.8..13.x
#       (CUDACXX, PATH or /usr/local/cuda/bin/nvcc), readelf, nm, and a Python >= 3.11 with
#       pip (PYTHON, default python3).
#
#   tests/adopt/bitsandbytes.sh test WHEEL OUT [DIR]
#       (GPU machine, offline) Installs WHEEL (or the wheel under a build's OUT/wheel) into
#       OUT/site (pip install --no-deps --target) and the test dependencies this Python lacks
#       from DIR/wheels into OUT/testdeps; imports torch first in every process. Runs a probe
#       process (OUT/probe.txt): which libbitsandbytes_cuda*.so bitsandbytes loaded (it picks
#       libbitsandbytes_cuda<torch.version.cuda>.so, 130 for torch's cu130 builds, or the
#       nearest of the same major), an int8 GEMM through cuBLASLt checked exactly against
#       torch's fp32 matmul, a Linear8bitLt forward (relative L2 error <= 3e-2 against fp32),
#       an NF4 quantize/dequantize round trip (mean abs error <= 0.08 on randn, the project's
#       own bound is 0.0733) and 4-bit matmuls (gemv and batched, relative L2 error <= 1e-2
#       against fp32 on the dequantized weight). Then bitsandbytes' own tests (pytest in a copy
#       of DIR/src/tests with the project's pytest configuration, BNB_TEST_DEVICE=cuda so each
#       parametrized test runs on the GPU; see TEST_FILES below for which and why). Each
#       process reports from /proc/self/maps every mapped libcu*/libnv* library: the proof
#       wants one libcudart, one libcublas and one libcublasLt, torch's (.../nvidia/...), in
#       each process that loaded bitsandbytes' library, and no library mapped from two files.
#       Writes OUT/test-report.txt, OUT/pytest.log, OUT/junit.xml, OUT/probe.txt, OUT/maps/.
#       Exits 1 if the probe or a test failed or the maps show another copy. DIR (the fetch
#       directory) defaults to the one the build recorded beside the wheel
#       (WHEEL/../../FETCH_DIR, relative). Needs a Python with torch (CUDA), numpy, pytest,
#       scipy, transformers, einops, pytest-xdist for workers (PYTHON, default python3).
#
# Environment: PYTHON (interpreter, default python3), BNB_GIT, BNB_TAG (fetch; a tag other
# than 0.50.1 is not checked against the pins), BNB_WORK (build: source copy and CMake tree,
# default OUT/work), BNB_CUDA_ARCH (default 90), CMAKE_BUILD_PARALLEL_LEVEL (default nproc),
# BNB_TESTS (test files, relative to the source root), BNB_TEST_K (pytest -k), BNB_TEST_WORKERS
# (pytest-xdist workers, default 8; 0 runs in one process).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

BNB_GIT=${BNB_GIT:-https://github.com/bitsandbytes-foundation/bitsandbytes.git}
BNB_PIN_TAG=0.50.1                                   # the newest release tag (2026-08-13)
BNB_PIN_COMMIT=37d2a9387f7146ccb85517ff45c665d345bfda79
# sha256 of `git archive --format=tar --prefix=bitsandbytes-0.50.1/ 0.50.1` (git 2.39)
BNB_PIN_TAR_SHA256=100b2c00ce1d047205c624d77639401b6b0735b6aaacb7a116c9a3b74d9df81e
BNB_TAG=${BNB_TAG:-$BNB_PIN_TAG}
# Not read by the build (CMakeLists.txt, csrc/, setup.py, pyproject.toml, README.md) nor by
# the tests (tests/, the package): dropped from DIR/src to keep what is carried small.
DROPPED="docs benchmarking examples agents scripts .github .vscode"
TEST_WHEELS=("lion-pytorch==0.2.3" "einops~=0.8.0")  # the project's [test] extra's pins
BUILD_WHEELS=("scikit-build-core" "setuptools>=77.0.3" "trove-classifiers>=2025.8.6.13"
              "packaging" "pathspec" "wheel")          # build-system.requires, their deps, wheel tags
# The tests run by default, on one GPU in about four minutes with 8 xdist workers:
#   test_functional.py   the kernels: blockwise 8-bit and 4-bit quantization, int8 GEMM
#                        (cuBLASLt), 4-bit gemv/matmul
#   test_ops.py          the torch.library ops bitsandbytes registers, with torch's opcheck
#   test_autograd.py     bnb.matmul (LLM.int8) and matmul_4bit through autograd
#   test_linear8bitlt.py test_linear4bit.py  the nn modules, serialization, FSDP state dict
#                        (torchrun, one process)
#   test_cuda_setup_evaluator.py  the library selection by CUDA version (seconds)
# Left out: test_optim.py (8-bit optimizers: long loops, ~10 min alone), test_modules.py,
# test_parametrize.py (more of the same kernels through other modules), test_generation.py
# (downloads a model from the Hugging Face hub). Deselected with -k: the benchmarks and the
# torch.compile tests (an inductor/Triton compile per case, minutes in all, and they test
# torch's compiler, which needs a host compiler, rather than the library).
TEST_FILES=${BNB_TESTS:-"tests/test_functional.py tests/test_ops.py tests/test_autograd.py tests/test_linear8bitlt.py tests/test_linear4bit.py tests/test_cuda_setup_evaluator.py"}
TEST_K=${BNB_TEST_K:-"not benchmark and not torch_compile"}
PYTHON=${PYTHON:-python3}

say() { printf 'bitsandbytes: %s\n' "$*"; }
die() { printf 'bitsandbytes: error: %s\n' "$*" >&2; exit 1; }
usage() { sed -n '3,/^set -u/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 2; }

# ---------------------------------------------------------------------------------------------
fetch() {
    [ $# -eq 1 ] || usage
    local dir; dir=$(abspath "$1")
    local tmp; tmp=$(mktemp -d /tmp/bitsandbytes-fetch.XXXXXX)
    say "fetch $BNB_TAG from $BNB_GIT into $dir (scratch $tmp)"

    git init -q --bare "$tmp/repo" || die "git init failed"
    git -C "$tmp/repo" fetch -q --depth 1 "$BNB_GIT" "refs/tags/$BNB_TAG:refs/tags/$BNB_TAG" \
        || die "git fetch of tag $BNB_TAG from $BNB_GIT failed"
    local commit; commit=$(git -C "$tmp/repo" rev-parse "refs/tags/$BNB_TAG^{commit}") || die "no commit for $BNB_TAG"
    local tar=$tmp/bitsandbytes-$BNB_TAG.tar
    git -C "$tmp/repo" archive --format=tar --prefix="bitsandbytes-$BNB_TAG/" "refs/tags/$BNB_TAG" > "$tar" \
        || die "git archive failed"
    local tar_sha; tar_sha=$(sha256sum < "$tar" | cut -d' ' -f1)
    local pinned="not pinned (BNB_TAG=$BNB_TAG is not $BNB_PIN_TAG)"
    if [ "$BNB_TAG" = "$BNB_PIN_TAG" ]; then
        [ "$commit" = "$BNB_PIN_COMMIT" ] || die "tag $BNB_TAG is commit $commit, not the pinned $BNB_PIN_COMMIT"
        [ "$tar_sha" = "$BNB_PIN_TAR_SHA256" ] || die "git archive of $BNB_TAG: sha256 $tar_sha, not the pinned $BNB_PIN_TAR_SHA256"
        pinned="= the pinned commit and archive sha256"
    fi

    rm -rf "$dir/src" && mkdir -p "$dir/src"
    local ex=() d; for d in $DROPPED; do ex+=(--exclude="bitsandbytes-$BNB_TAG/$d"); done
    tar -xf "$tar" -C "$dir/src" --strip-components=1 "${ex[@]}" || die "unpacking the archive failed"
    grep -q "^__version__ = \"$BNB_TAG\"" "$dir/src/bitsandbytes/__init__.py" \
        || say "note: bitsandbytes/__init__.py's __version__ is not $BNB_TAG"

    # Wheels: pure Python (py3-none-any), so the carried ones install on 3.11 here and 3.12 there.
    say "wheels: ${TEST_WHEELS[*]} (tests); ${BUILD_WHEELS[*]} (build)"
    rm -rf "$dir/wheels" "$dir/build-wheels"
    "$PYTHON" -m pip download -q --no-deps --only-binary :all: --python-version 3.12 --implementation cp \
        -d "$dir/wheels" "${TEST_WHEELS[@]}" || die "pip download of the test wheels failed"
    "$PYTHON" -m pip download -q --no-deps --only-binary :all: --python-version 3.12 --implementation cp \
        -d "$dir/build-wheels" "${BUILD_WHEELS[@]}" || die "pip download of the build wheels failed"
    local w; for w in "$dir"/wheels/*.whl "$dir"/build-wheels/*.whl; do
        case $w in *-none-any.whl) ;; *) die "$(basename "$w") is not a pure-Python wheel" ;; esac
    done

    {
        echo "# bitsandbytes offline build and test inputs, fetched $(date -u +%Y-%m-%dT%H:%M:%SZ) by tests/adopt/bitsandbytes.sh fetch"
        echo "src/: bitsandbytes $BNB_TAG, tag $BNB_TAG of $BNB_GIT, commit $commit"
        echo "  git archive --format=tar --prefix=bitsandbytes-$BNB_TAG/ $BNB_TAG: sha256 $tar_sha ($pinned)"
        echo "  dropped (read by neither build nor tests): $DROPPED"
        echo "  kept: $(find "$dir/src" -type f | wc -l) files, $(du -sk "$dir/src" | cut -f1) KiB; license MIT (src/LICENSE)"
        echo "wheels/ (test dependencies), PyPI, pip download --no-deps --only-binary :all: --python-version 3.12:"
        for w in "$dir"/wheels/*.whl; do echo "  $(basename "$w") sha256 $(sha256sum < "$w" | cut -d' ' -f1)"; done
        echo "build-wheels/ (build backend for the offline build), PyPI, same options:"
        for w in "$dir"/build-wheels/*.whl; do echo "  $(basename "$w") sha256 $(sha256sum < "$w" | cut -d' ' -f1)"; done
    } > "$dir/PROVENANCE"
    echo "$commit" > "$dir/COMMIT"
    (cd "$dir" && find src wheels build-wheels -type f -print0 | sort -z | xargs -0 sha256sum) > "$dir/SHA256SUMS"
    rm -rf "$tmp"
    say "fetched: $(du -sh "$dir" | cut -f1) in $dir"
    cat "$dir/PROVENANCE"
}

# ---------------------------------------------------------------------------------------------
# readelf/nm facts of every .so under $1, one block each; sets BAD to the list of problems.
# $2...: the CUDA toolkit's root, as named and resolved (an RPATH into it is a problem too).
report_elves() {
    local root=$1 so needed rp und exp n r
    shift
    BAD=""
    while IFS= read -r so; do
        echo "${so#"$root"/}"
        needed=$(readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
        rp=$(readelf -d "$so" | sed -n 's/.*(\(RPATH\|RUNPATH\)).*\[\(.*\)\]/\1 \2/p')
        und=$(nm -D --undefined-only "$so" 2>/dev/null | awk '{print $NF}' | grep -E '^_?_?(cu|nv)' | sed 's/@.*//' | sort -u)
        exp=$(nm -D --defined-only "$so" 2>/dev/null | awk '{print $NF}' | grep -E '^_?_?(cuda|cu[A-Z]|cublas|nv|cudaload)' \
              | grep -v '^__cudaRegisterLinkedBinary_' | sed 's/@.*//' | sort -u)
        echo "  DT_NEEDED: $(echo $needed)"
        echo "  RPATH/RUNPATH: ${rp:-none}"
        echo "  size: $(stat -c %s "$so") bytes, of which .debug_* sections $(size -A "$so" | awk '/^\.debug/ {s += $2} END {print s + 0}')"
        echo "  undefined dynamic symbols named cu*/nv*: $(echo "$und" | grep -c .)${und:+: $(echo $und)}"
        echo "  exported dynamic symbols named cuda*/cu[A-Z]*/cublas*/nv*/cudaload* (nvcc's own __cudaRegisterLinkedBinary_* aside): $(echo "$exp" | grep -c .)${exp:+: $(echo $exp | cut -c1-400)}"
        for n in $needed; do
            case $n in
                libcudaload*) ;;
                libcu*|libnv*) BAD="$BAD ${so##*/}:DT_NEEDED=$n" ;;
            esac
        done
        case $rp in *nvidia/*) BAD="$BAD ${so##*/}:${rp// /=}" ;; esac
        for r in "$@"; do
            case $rp in *"$r"*) BAD="$BAD ${so##*/}:${rp// /=}"; break ;; esac
        done
    done < <(find "$root" -name '*.so*' -type f | sort)
}

build() {
    local dir out switch
    build_args "$@"
    local work; work=$(abspath "${BNB_WORK:-$out/work}")
    local arch=${BNB_CUDA_ARCH:-90}

    # nvcc: CMake's enable_language(CUDA) looks at CUDACXX, then PATH.
    if [ -z "${CUDACXX:-}" ] && ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
        export CUDACXX=/usr/local/cuda/bin/nvcc
    fi
    local nvcc=${CUDACXX:-$(command -v nvcc)}
    [ -x "$nvcc" ] || die "no nvcc (set CUDACXX)"
    local cuda_root; cuda_root=$(cd "$(dirname "$nvcc")/.." && pwd)
    local cuda_root_real; cuda_root_real=$(cd "$cuda_root" && pwd -P)
    export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}

    say "build in $work (inputs $dir${switch:+, switch $switch})"
    rm -rf "$work/src" "$work/cmake" "$work/pydeps" "$work/dist" "$work/wheel-unpacked" \
        "$out/wheel" "$out/build.log" "$out/report.txt"
    mkdir -p "$work" "$out/wheel"
    cp -a "$dir/src" "$work/src" || die "copying the source failed"
    local src=$work/src

    # The build backend (scikit-build-core's setuptools backend) and `wheel tags`, from the
    # carried wheels, in a side directory whatever this Python has.
    "$PYTHON" -m pip install -q --no-index --find-links "$dir/build-wheels" --target "$work/pydeps" \
        "${BUILD_WHEELS[@]}" || die "installing the build wheels from $dir/build-wheels failed"

    local defs=(-DCOMPUTE_BACKEND=cuda -DCOMPUTE_CAPABILITY="$arch" -DCMAKE_CUDA_ARCHITECTURES="$arch"
                -DCMAKE_BUILD_TYPE=Release)
    [ -n "$switch" ] && defs+=(-DCMAKE_PROJECT_TOP_LEVEL_INCLUDES="$switch")
    say "cmake $(cmake --version | head -1 | awk '{print $3}'), nvcc $nvcc ($("$nvcc" --version | sed -n 's/.*release \([^,]*\),.*/\1/p')), CMAKE_BUILD_PARALLEL_LEVEL=$CMAKE_BUILD_PARALLEL_LEVEL"
    say "configure and build (log: $out/build.log)"
    local t0=$SECONDS rc
    {
        echo "+ cmake -S $src -B $work/cmake ${defs[*]}"
        cmake -S "$src" -B "$work/cmake" "${defs[@]}"
    } > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; die "configure failed; full log $out/build.log"; }
    cmake --build "$work/cmake" --config Release --verbose >> "$out/build.log" 2>&1
    rc=$?
    local secs_build=$((SECONDS - t0))
    [ $rc -eq 0 ] || { tail -40 "$out/build.log"; die "build failed (rc $rc, ${secs_build}s); full log $out/build.log"; }
    local lib; lib=$(ls "$src"/bitsandbytes/libbitsandbytes_cuda*.so 2>/dev/null | head -1)
    [ -n "$lib" ] || die "the build made no bitsandbytes/libbitsandbytes_cuda*.so"

    # The wheel, as upstream's python-package.yml makes it from the built library.
    say "pip wheel (BNB_SKIP_CMAKE=1), wheel tags"
    t0=$SECONDS
    (cd "$src" && BNB_SKIP_CMAKE=1 PYTHONPATH=$work/pydeps${PYTHONPATH:+:$PYTHONPATH} \
        "$PYTHON" -m pip wheel -v --no-build-isolation --no-deps --no-index -w "$work/dist" .) >> "$out/build.log" 2>&1 \
        || { tail -40 "$out/build.log"; die "pip wheel failed; full log $out/build.log"; }
    local whl0; whl0=$(ls "$work"/dist/bitsandbytes-*.whl 2>/dev/null | head -1)
    [ -n "$whl0" ] || die "pip wheel made no wheel"
    (cd "$work/dist" && PYTHONPATH=$work/pydeps "$PYTHON" -m wheel tags --remove --python-tag py3 --abi-tag none \
        --platform-tag linux_x86_64 "$(basename "$whl0")") >> "$out/build.log" 2>&1 || die "wheel tags failed"
    local whl; whl=$(ls "$work"/dist/bitsandbytes-*-py3-none-linux_x86_64.whl 2>/dev/null | head -1)
    [ -n "$whl" ] || die "no py3-none-linux_x86_64 wheel after wheel tags"
    cp "$whl" "$out/wheel/" && whl=$out/wheel/$(basename "$whl")
    local secs_wheel=$((SECONDS - t0))
    "$PYTHON" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$whl" "$work/wheel-unpacked"
    # where the test phase finds the fetch directory: relative, so both can move together
    realpath --relative-to="$out" "$dir" > "$out/FETCH_DIR"

    local libname; libname=$(basename "$lib")
    {
        echo "bitsandbytes $(cat "$dir/COMMIT" 2>/dev/null | cut -c1-12) CUDA library, built $(date -u +%Y-%m-%dT%H:%M:%SZ): configure+build ${secs_build}s, wheel ${secs_wheel}s"
        echo "switch: ${switch:-none (plain build)}"
        echo "cmake $(cmake --version | head -1 | awk '{print $3}'), nvcc $("$nvcc" --version | sed -n 's/.*release \([^,]*\),.*/\1/p') ($nvcc), COMPUTE_CAPABILITY=CMAKE_CUDA_ARCHITECTURES=$arch"
        echo "library: $libname, $(stat -c %s "$lib") bytes (bitsandbytes loads libbitsandbytes_cuda<torch.version.cuda major><minor>.so, or the nearest of the same major: torch cu130 -> libbitsandbytes_cuda130.so)"
        echo "wheel: $(basename "$whl"), $(stat -c %s "$whl") bytes"
        echo "cudaload lines at configure time:"
        # the switch's lines and their indented continuation lines (lists of items)
        local cl; cl=$(awk '/^ *(-- )?cudaload:/ {p = 1; print; next} p && /^   / {print; next} {p = 0}' "$out/build.log")
        echo "${cl:-none}" | sed 's/^/  /'
        local chk; chk=$(grep -o -E -- '-DTARGET=[^ ]+ -DMODE=[A-Z]+' "$out/build.log" | sort -u | tr '\n' ' ')
        echo "post-link DT_NEEDED check added by the switch: ${chk:-none} (the build fails if it fails)"
        echo "link command of $libname:"
        grep -E -- "-o [^ ]*$libname( |$)" "$out/build.log" | tail -1 | sed "s|$src|<src>|g; s|$work|<work>|g; s/^/  /"
        echo "shared objects in the wheel:"
        report_elves "$work/wheel-unpacked" "$cuda_root" "$cuda_root_real" > "$work/elves.txt"   # in this shell: it sets BAD
        sed 's/^/  /' "$work/elves.txt"
    } > "$out/report.txt"
    local verdict=0
    build_verdict "$out" "$switch" || verdict=1
    say "wheel $whl"
    exit $verdict
}

# ---------------------------------------------------------------------------------------------
# The maps lines every process writes: "MAPPED <lib> <count> <paths>" for the three libraries
# bitsandbytes links, "BNB <path>" for its own library, every mapped libcu*/libnv* path, and
# a verdict: "VERDICT OK" or "VERDICT BAD <why>". A library mapped from two files is BAD; so,
# in a process that loaded libbitsandbytes, is other than one copy of each of the three, or
# one not from an nvidia/ directory (torch's wheels).
MAPS_LINES='
import os, re
BNB_LINKED = ("libcudart", "libcublas", "libcublasLt")
def maps_lines():
    paths = set()
    for l in open("/proc/self/maps"):
        f = l.split(None, 5)
        if len(f) == 6 and f[5].startswith("/"):
            paths.add(f[5].strip().replace(" (deleted)", ""))
    paths = sorted(paths)
    stem = lambda p: os.path.basename(p).split(".so")[0]
    nv = [p for p in paths if re.match(r"lib(cu|nv)", os.path.basename(p))]
    bnb = [p for p in paths if os.path.basename(p).startswith("libbitsandbytes")]
    lines, bad = [], []
    for name in BNB_LINKED:
        hits = [p for p in nv if stem(p) == name]
        lines.append("MAPPED %s %d %s" % (name, len(hits), " ".join(hits)))
        if bnb and (len(hits) != 1 or "/nvidia/" not in hits[0]):
            bad.append("%s:%d" % (name, len(hits)))
    for p in bnb:
        lines.append("BNB " + p)
    by = {}
    for p in nv:
        by.setdefault(stem(p), []).append(p)
    bad += ["two-copies-of-" + s for s, ps in sorted(by.items()) if len(ps) > 1]
    lines += ["  " + p for p in nv]
    lines.append("VERDICT OK" if not bad else "VERDICT BAD " + " ".join(bad))
    return lines
'

# The probe: library choice, the checks the usage text states, then the maps lines.
PROBE=$MAPS_LINES'
import sys, torch
import bitsandbytes as bnb
import bitsandbytes.functional as F
from bitsandbytes import cextension
from bitsandbytes.cuda_specs import get_cuda_specs
print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda,
      "device", torch.cuda.get_device_name(0))
print("bitsandbytes", bnb.__version__, bnb.__file__)
specs = get_cuda_specs()
print("looks for", cextension.get_cuda_bnb_library_path(specs), "(torch.version.cuda %s)" % torch.version.cuda)
print("loaded", type(cextension.lib).__name__, getattr(getattr(cextension.lib, "_lib", None), "_name", None))
assert isinstance(cextension.lib, cextension.CudaBNBNativeLibrary), "bitsandbytes did not load a CUDA library"
torch.manual_seed(0)
dev = "cuda"
fails = []
def check(name, ok, detail):
    print("CHECK %s %s: %s" % ("ok  " if ok else "FAIL", name, detail))
    if not ok: fails.append(name)

# int8 GEMM (cublasLtMatmul): exact against torch fp32 (|sum| <= 128*128*256 < 2**24)
A = torch.randint(-128, 127, (64, 256), dtype=torch.int8, device=dev)
B = torch.randint(-128, 127, (128, 256), dtype=torch.int8, device=dev)
C = F.int8_linear_matmul(A, B)
ref = A.float() @ B.float().t()
d = (C.float() - ref).abs().max().item()
check("int8_linear_matmul", C.dtype == torch.int32 and d == 0, "int32 64x128, K=256, max |diff| vs fp32 = %g (tolerance 0)" % d)

# LLM.int8: Linear8bitLt (int8 weights, threshold 0) against the fp32 product
ref_lin = torch.nn.Linear(1024, 512, bias=False).half()
lin = bnb.nn.Linear8bitLt(1024, 512, bias=False, has_fp16_weights=False, threshold=0.0)
lin.load_state_dict(ref_lin.state_dict())
lin = lin.to(dev)
X = torch.randn(32, 1024, dtype=torch.float16, device=dev)
with torch.no_grad():
    Y = lin(X).float()
Yr = X.float() @ ref_lin.weight.to(dev).float().t()
rel = ((Y - Yr).norm() / Yr.norm()).item()
check("Linear8bitLt", rel <= 3e-2, "32x1024 @ 1024x512 fp16, relative L2 error vs fp32 = %.4g (tolerance 3e-2)" % rel)

# NF4 round trip, blocksize 64, on randn (the project bounds the mean abs error by 0.0733)
W = torch.randn(1024, 1024, dtype=torch.float16, device=dev)
qw, st = F.quantize_4bit(W, blocksize=64, quant_type="nf4")
Wd = F.dequantize_4bit(qw, st)
err = (W.float() - Wd.float()).abs().mean().item()
check("nf4 round trip", Wd.dtype == W.dtype and err <= 0.08, "1024x1024 fp16, mean abs error = %.4g (tolerance 0.08)" % err)

# 4-bit matmul: gemv (one row, the 4-bit kernel) and batched, against fp32 on the dequantized weight
for rows in (1, 16):
    Xb = torch.randn(rows, 1024, dtype=torch.float16, device=dev)
    Yb = bnb.matmul_4bit(Xb, qw, st).float()
    Yr = Xb.float() @ Wd.float().t()
    rel = ((Yb - Yr).norm() / Yr.norm()).item()
    check("matmul_4bit rows=%d" % rows, rel <= 1e-2, "%dx1024 @ nf4 1024x1024, relative L2 error vs fp32 = %.4g (tolerance 1e-2)" % (rows, rel))

torch.cuda.synchronize()
print("\n".join(maps_lines()))
print("PROBE", "OK" if not fails else "FAIL " + " ".join(fails))
sys.exit(1 if fails else 0)
'

# A pytest plugin: each process (the controller and every xdist worker) writes its maps lines
# at the end of the session.
MAPS_PLUGIN=$MAPS_LINES'
def pytest_sessionfinish(session, exitstatus):
    who = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(os.path.join(os.environ["BNB_MAPS_DIR"], "pytest-%s.txt" % who), "w") as f:
        f.write("".join(l + "\n" for l in maps_lines()))
'

test_wheel() {
    local whl out dir
    # (a build's OUT stands for the wheel in it)
    if [ -d "${1:-}" ]; then set -- "$(ls "$1"/wheel/bitsandbytes-*.whl 2>/dev/null | head -1)" "${@:2}"; fi
    test_args src/tests "$@"
    "$PYTHON" -c 'import torch' 2>/dev/null || die "$PYTHON cannot import torch"

    rm -rf "$out/site" "$out/testdeps" "$out/testroot" "$out/plugin" "$out/maps" \
        "$out/probe.txt" "$out/pytest.log" "$out/junit.xml" "$out/test-report.txt"
    mkdir -p "$out/plugin" "$out/maps" "$out/testroot"
    say "install $(basename "$whl") into $out/site"
    "$PYTHON" -m pip install -q --no-deps --no-index --target "$out/site" "$whl" || die "pip install --target failed"
    # test imports this Python may lack: from the carried wheels
    local need=() m
    for m in lion_pytorch einops; do "$PYTHON" -c "import $m" 2>/dev/null || need+=("${m//_/-}"); done
    if [ ${#need[@]} -gt 0 ]; then
        say "installing ${need[*]} from $dir/wheels into $out/testdeps"
        "$PYTHON" -m pip install -q --no-deps --no-index --find-links "$dir/wheels" --target "$out/testdeps" "${need[@]}" \
            || die "installing ${need[*]} failed"
    fi
    # The tests import `tests.helpers`, so pytest puts their parent on sys.path: a copy of
    # tests/ alone, not the source tree, whose bitsandbytes/ (without the library) would come
    # first. The project's pyproject.toml comes along for its pytest configuration (markers,
    # -m 'not slow and not benchmark and not deprecated').
    cp -r "$dir/src/tests" "$out/testroot/tests" && cp "$dir/src/pyproject.toml" "$out/testroot/" \
        || die "copying the tests failed"
    printf '%s' "$MAPS_PLUGIN" > "$out/plugin/bnb_maps.py"

    export PYTHONPATH=$out/site:$out/testdeps:$out/plugin${PYTHONPATH:+:$PYTHONPATH}
    # every parametrized test on the GPU (as the project's CI runs its CUDA jobs); torchrun
    # (test_fsdp_state_dict_save_4bit) from this Python's bin directory
    export BNB_TEST_DEVICE=cuda BNB_MAPS_DIR=$out/maps
    local pybin; pybin=$("$PYTHON" -c 'import os, sys; print(os.path.dirname(sys.executable))')
    export PATH=$pybin:$PATH
    local xdist=()
    local workers=${BNB_TEST_WORKERS:-8}
    if [ "$workers" != 0 ]; then
        if "$PYTHON" -c 'import xdist' 2>/dev/null; then xdist=(-n "$workers")
        else say "pytest-xdist missing: one process"; workers=0; fi
    fi

    local rc_probe rc_test t0=$SECONDS
    say "probe: library, GEMMs and round trips, then /proc/self/maps"
    (cd "$out" && "$PYTHON" -c "$PROBE") > "$out/probe.txt" 2>&1; rc_probe=$?
    cat "$out/probe.txt"
    local secs_probe=$((SECONDS - t0))
    say "pytest $TEST_FILES -k '$TEST_K' (${workers} workers; log $out/pytest.log)"
    t0=$SECONDS
    # shellcheck disable=SC2086 # TEST_FILES is a list
    (cd "$out/testroot" && "$PYTHON" -m pytest -p bnb_maps -p no:cacheprovider --rootdir "$out/testroot" \
        -o log_cli=false -q -rfEs --durations=15 --junitxml="$out/junit.xml" -k "$TEST_K" "${xdist[@]}" $TEST_FILES) \
        > "$out/pytest.log" 2>&1
    rc_test=$?
    local secs_test=$((SECONDS - t0))
    tail -5 "$out/pytest.log"
    local counts
    counts=$(junit_counts "$out/junit.xml")
    local ok=1 f
    {
        echo "bitsandbytes tests, $(basename "$whl"), $(date -u +%Y-%m-%dT%H:%M:%SZ): probe ${secs_probe}s, pytest ${secs_test}s"
        echo "python $("$PYTHON" -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda)' 2>&1)"
        echo "probe (rc $rc_probe):"; grep -E '^(bitsandbytes|looks for|loaded|CHECK|MAPPED|BNB|VERDICT|PROBE)' "$out/probe.txt" | sed 's/^/  /'
        [ $rc_probe -eq 0 ] || tail -4 "$out/probe.txt" | sed 's/^/  | /'
        echo "pytest (rc $rc_test, BNB_TEST_DEVICE=cuda, ${workers} xdist workers): $TEST_FILES -k '$TEST_K'"
        echo "  $counts"
        echo "pytest processes at session end:"
        for f in "$out"/maps/pytest-*.txt; do
            [ -f "$f" ] || { echo "  no maps written"; break; }
            echo "  $(basename "$f" .txt): $(grep -c '^BNB ' "$f") libbitsandbytes, $(grep '^VERDICT' "$f")"
            grep -E '^MAPPED' "$f" | sed 's/^/    /'
        done
    } > "$out/test-report.txt"
    [ $rc_probe -eq 0 ] && [ $rc_test -eq 0 ] || ok=0
    grep -q '^VERDICT OK' "$out/probe.txt" && grep -q '^BNB ' "$out/probe.txt" \
        || { ok=0; echo "probe: not one copy each of torch's libcudart, libcublas, libcublasLt beside libbitsandbytes" >> "$out/test-report.txt"; }
    grep -q '^BNB ' "$out"/maps/pytest-*.txt 2>/dev/null \
        || { ok=0; echo "no pytest process wrote maps with libbitsandbytes loaded" >> "$out/test-report.txt"; }
    for f in "$out"/maps/pytest-*.txt; do
        [ -f "$f" ] || continue
        grep -q '^VERDICT OK' "$f" || { ok=0; echo "$(basename "$f" .txt): $(grep '^VERDICT' "$f")" >> "$out/test-report.txt"; }
    done
    test_verdict "$ok" "$out" "probe and tests passed; one libcudart, libcublas and libcublasLt mapped in each process, torch's nvidia wheels' own"
}

run_phase "$@"
