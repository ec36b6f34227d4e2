#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/adopt/llama-cpp-python.sh: build llama-cpp-python 0.3.36's CUDA wheel from its PyPI sdist,
# unchanged, on a machine with no network, with or without libcudaload's CMake stubs switch, and
# test it on a GPU beside torch's CUDA.
#
# Three phases:
#
#   tests/adopt/llama-cpp-python.sh fetch DIR
#       (network: PyPI only) Puts under DIR everything the build and the test need offline:
#       llama-cpp-python 0.3.36's sdist, trimmed (files removed, none changed: see TRIM below; the
#       sdist is 77 MB, 39 MB of it the git history of its CI checkout and 23 MB llama.cpp's
#       tokenizer test files), as DIR/llama_cpp_python-0.3.36-trimmed.tar.gz (about 7 MB);
#       DIR/build-wheels: scikit-build-core and its dependencies (py3 wheels) for a build Python
#       that lacks it; DIR/wheels: cp312 (linux x86_64) wheels of what llama_cpp and the test
#       import that a torch machine may lack: gguf (writes the test's model), diskcache
#       (llama_cpp.llama_cache), and gguf's imports pyyaml, tqdm, requests (with
#       charset-normalizer, idna, urllib3, certifi). DIR/PROVENANCE lists versions, sources and
#       sha256 (the original sdist's and the trimmed tarball's); DIR/SHA256SUMS what the build
#       and the test check. Needs python3 with venv and pip.
#
#   tests/adopt/llama-cpp-python.sh build DIR OUT [SWITCH_FILE]
#       (offline, no GPU) Unpacks the trimmed sdist into OUT/src and runs, as the project's
#       README says for CUDA,
#         CMAKE_ARGS="-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=90-real -DGGML_NATIVE=off \
#             [-DCMAKE_PROJECT_TOP_LEVEL_INCLUDES=SWITCH_FILE]" \
#         pip wheel --no-build-isolation --no-deps --no-index -Cbuild-dir=OUT/skbuild .
#       (the two options beyond GGML_CUDA are configure options of the project, explained at
#       CMAKE_ARGS in build(): SASS for sm_90 only, a portable CPU part, as the project's own
#       CUDA wheels are built; LCP_CUDA_ARCH, LCP_GGML_NATIVE override them, and
#       LCP_GGML_CUDA_NCCL=off turns ggml's NCCL off). ggml-cuda links CUDA::cudart,
#       CUDA::cublas, CUDA::cuda_driver and, where find_package(NCCL) finds it, NCCL's imported
#       target. OUT/skbuild is kept: a second build
#       with the same switch path re-configures (reading the switch again) and rebuilds only
#       what changed (a new stub archive: a relink); another switch path (or none) starts it
#       afresh. Writes OUT/wheel/*.whl; OUT/wheel-slim/*.whl, the same wheel less the copies
#       and files llama_cpp never reads (SLIM_WHEEL says which), the one to carry to a GPU
#       machine; OUT/build.log; OUT/report.txt: the wheels' sizes, each .so's DT_NEEDED and
#       RPATH/RUNPATH, and the configure's `cudaload:` lines. With SWITCH_FILE it exits 1 if a
#       .so DT_NEEDs an NVIDIA library (libcuda.so*, libcudart*, libcublas*, libnccl*, any
#       libcu*/libnv*; libcudaload excepted), has an RPATH/RUNPATH into a CUDA toolkit or
#       nvidia/ directory, or the configure printed no `cudaload: switched` line; without it,
#       that is only reported. Needs a Python with scikit-build-core (PYTHON, default python3;
#       if it lacks it, OUT/venv is made and scikit-build-core installed there from
#       DIR/build-wheels), cmake >= 3.24, ninja, nvcc (PATH, CUDACXX or
#       /usr/local/cuda/bin/nvcc), readelf. About 40 minutes on 2 busy cores the first time.
#
#   tests/adopt/llama-cpp-python.sh test WHEEL OUT [DIR]
#       (GPU machine, offline) Installs WHEEL (the build's OUT/wheel-slim/*.whl, or its full
#       wheel) into OUT/site (pip install --no-deps --target, or unzipped if pip refuses its
#       tag: llama_cpp is Python that loads its libraries with ctypes; no compiled Python
#       extension, which is checked), and DIR/wheels' packages this Python lacks into
#       OUT/testdeps. Then:
#       (1) writes a small llama with random weights with the gguf package: OUT/tiny-llama.gguf,
#           4 layers, n_embd 256, 4 heads (2 KV heads), n_ff 512, a 320-token SentencePiece
#           ("llama") vocabulary, F16 matrices, F32 norms (MAKE_MODEL says what llama.cpp needs);
#       (2) in a probe process that imports torch first (CUDA initialised, a cuBLAS matmul),
#           loads it with llama_cpp.Llama(n_gpu_layers=-1) and with n_gpu_layers=0 (and
#           offload_kqv=False, op_offload=False: all on the CPU), evaluates the same 64 tokens
#           with logits_all=True on each and compares the logits: max |GPU - CPU| <= 0.02 x
#           max |CPU logit| (TOLERANCE says why); llama.cpp's log (OUT/llama-log.txt) must say
#           all layers were offloaded, to CUDA0, and none in the CPU load;
#       (3) reads the probe's /proc/self/maps: every mapped libcudart*, libcublas*,
#           libcublasLt*, libcuda.so*; the proof wants exactly one of each: libcudart, libcublas
#           and libcublasLt torch's (site-packages/nvidia/), libcuda the driver's;
#       (4) runs the sdist's own tests/ with pytest (a plugin imports torch first there too and
#           records the maps at the session's end, checked as in (3)), deselecting the tests
#           whose fixtures download a model from the Hugging Face Hub (hf_hub_download):
#           test_real_model, test_real_llama, test_real_llama_repeated_prompt_cache and
#           test_real_llama_embeddings (Qwen3.5-0.8B, bge-small), test_recurrent_ and
#           test_hybrid_model_prompt_cache_reset (mamba-130m, Falcon-H1), and the parametrized
#           test_*_matches_fresh cases (those and stories15M); the plugin finds them by their
#           fixtures' source and lists each in the report; HF_HUB_OFFLINE=1 makes any other
#           download fail at once. test_llama_cpp_tokenization reads the sdist's
#           ggml-vocab-llama-spm.gguf, kept for it.
#       Writes OUT/test-report.txt, OUT/probe.txt, OUT/pytest.log, OUT/junit.xml. Exits 1 if the
#       probe or a test failed, or a process maps other than one copy of each library. DIR (the
#       fetch directory) defaults to the one the build recorded (WHEEL/../../FETCH_DIR). Needs a
#       Python with torch (CUDA), numpy, pytest, scipy, jinja2, huggingface_hub (PYTHON,
#       default python3).
#
# Environment: PYTHON (interpreter, default python3), CMAKE_BUILD_PARALLEL_LEVEL (default:
# nproc), LCP_CUDA_ARCH (default 90-real), LCP_GGML_NATIVE (default off), LCP_GGML_CUDA_NCCL
# (default off).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

LCP_VERSION=0.3.36
LCP_TOP=llama_cpp_python-$LCP_VERSION
LCP_SDIST=$LCP_TOP.tar.gz
LCP_SDIST_SHA256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
LCP_TRIMMED=$LCP_TOP-trimmed.tar.gz
GGUF_VERSION=0.19.0      # = the sdist's vendor/llama.cpp/gguf-py version
DISKCACHE_VERSION=5.6.3
VOCAB_KEPT=vendor/llama.cpp/models/ggml-vocab-llama-spm.gguf   # tests/test_llama.py reads it
PYTHON=${PYTHON:-python3}

say() { printf 'llama-cpp-python: %s\n' "$*"; }
die() { printf 'llama-cpp-python: error: %s\n' "$*" >&2; exit 1; }
usage() { sed -n '3,/^set -u/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 2; }

# ---------------------------------------------------------------------------------------------
# TRIM: what fetch removes from the sdist (paths relative to its top directory), and why. Only
# removals: no file that stays is changed. The build (add_subdirectory(vendor/llama.cpp) with
# LLAMA_BUILD_COMMON forced ON, then add_subdirectory(vendor/llama.cpp/tools/mtmd)) reads
# llama.cpp's CMakeLists.txt, cmake/, ggml/, src/, include/, common/, vendor/, licenses/, LICENSE
# and tools/mtmd/; llama.cpp is not the top project there, so LLAMA_STANDALONE is OFF and with it
# LLAMA_BUILD_TESTS, _TOOLS, _EXAMPLES, _SERVER, _APP (their directories are never added), and
# git-vars.cmake is not included. scikit-build-core reads pyproject.toml, README.md (the
# readme), llama_cpp/ and CMakeLists.txt.
TRIM=(
    # git metadata of the CI checkout the sdist was made from (scikit-build's sdist.include
    # takes .git): 39 MB, mostly llama.cpp's packed history under .git/modules. Read only by
    # `git rev-parse`/`rev-list` in llama.cpp's cmake/build-info.cmake and ggml/CMakeLists.txt
    # for the build-info strings (BUILD_COMMIT "unknown", BUILD_NUMBER 0 without it) and by
    # common/CMakeLists.txt as a configure dependency (it warns "Git index not found").
    # vendor/llama.cpp/.git, the submodule's 44-byte gitdir link, stays: git stops there
    # ("not a git repository") instead of climbing into a checkout that encloses the build.
    .git
    # llama-cpp-python's CI, Docker files, documentation site and example scripts
    .github docker docs examples
    # llama.cpp: CI, editor/agent configuration, documentation, images
    vendor/llama.cpp/.github vendor/llama.cpp/.devops vendor/llama.cpp/.gemini vendor/llama.cpp/.pi
    vendor/llama.cpp/skills vendor/llama.cpp/ci vendor/llama.cpp/docs vendor/llama.cpp/media
    # llama.cpp's test programs (LLAMA_BUILD_TESTS off), examples and proofs of concept
    # (LLAMA_BUILD_EXAMPLES off), benchmarks (no CMake reads benches/), the unified binary
    # (LLAMA_BUILD_APP off)
    vendor/llama.cpp/tests vendor/llama.cpp/examples vendor/llama.cpp/pocs
    vendor/llama.cpp/benches vendor/llama.cpp/app
    # model conversion in Python (convert_*.py, conversion/, gguf-py/, requirements), its
    # scripts (scripts/ui-assets.cmake is read only by tools/ui, not built), sample grammars
    # (llama-cpp-python's own tests write theirs inline), Nix and Xcode packaging
    vendor/llama.cpp/conversion vendor/llama.cpp/gguf-py vendor/llama.cpp/requirements
    vendor/llama.cpp/requirements.txt vendor/llama.cpp/scripts vendor/llama.cpp/grammars
    vendor/llama.cpp/convert_hf_to_gguf.py vendor/llama.cpp/convert_hf_to_gguf_update.py
    vendor/llama.cpp/convert_llama_ggml_to_gguf.py vendor/llama.cpp/convert_lora_to_gguf.py
    vendor/llama.cpp/flake.nix vendor/llama.cpp/build-xcframework.sh
)
# and two directories in part:
#   vendor/llama.cpp/models/: all but $VOCAB_KEPT (23 MB of tokenizer vocabularies, their
#       expected outputs and chat templates for llama.cpp's tests); tests/test_llama.py's
#       test_llama_cpp_tokenization loads that one (724 kB) by its relative path.
#   vendor/llama.cpp/tools/: all but tools/mtmd (LLAMA_BUILD_TOOLS off; llama-cpp-python's
#       CMakeLists.txt adds tools/mtmd itself): the server, its web UI (8.5 MB), CLIs.

trim_tree() {   # $1: the unpacked sdist's top directory; prints what it removed
    local top=$1 p
    for p in "${TRIM[@]}"; do
        [ -e "$top/$p" ] || die "trim: $p is not in the sdist (TRIM is for $LCP_VERSION)"
        printf '  %-52s %8s\n' "$p" "$(du -sh "$top/$p" | cut -f1)"
        rm -rf "${top:?}/$p"
    done
    [ -f "$top/$VOCAB_KEPT" ] || die "trim: no $VOCAB_KEPT in the sdist"
    [ -d "$top/vendor/llama.cpp/tools/mtmd" ] || die "trim: no vendor/llama.cpp/tools/mtmd in the sdist"
    for p in "$top"/vendor/llama.cpp/models/* "$top"/vendor/llama.cpp/models/.[!.]*; do
        [ -e "$p" ] || continue
        [ "${p#"$top"/}" = "$VOCAB_KEPT" ] && continue
        printf '  %-52s %8s\n' "${p#"$top"/}" "$(du -sh "$p" | cut -f1)"
        rm -rf "$p"
    done
    for p in "$top"/vendor/llama.cpp/tools/*; do
        [ "${p##*/}" = mtmd ] && continue
        printf '  %-52s %8s\n' "${p#"$top"/}" "$(du -sh "$p" | cut -f1)"
        rm -rf "$p"
    done
}

# ---------------------------------------------------------------------------------------------
fetch() {
    [ $# -eq 1 ] || usage
    local dir; dir=$(abspath "$1")
    local tmp; tmp=$(mktemp -d /tmp/llama-cpp-python-fetch.XXXXXX)
    say "fetch into $dir (scratch $tmp)"

    # pip download of an sdist prepares its metadata with the sdist's backend
    # (scikit-build-core, regex version provider: no CMake run); a scratch venv has it.
    say "scratch venv for pip download"
    "$PYTHON" -m venv "$tmp/venv" || die "$PYTHON -m venv failed"
    "$tmp/venv/bin/pip" install -q scikit-build-core || die "pip install scikit-build-core failed"
    "$tmp/venv/bin/pip" download -q --no-deps --no-binary :all: --no-build-isolation \
        "llama-cpp-python==$LCP_VERSION" -d "$tmp/dl" || die "pip download llama-cpp-python==$LCP_VERSION failed"
    echo "$LCP_SDIST_SHA256  $tmp/dl/$LCP_SDIST" | sha256sum -c --quiet - || die "$LCP_SDIST: sha256 differs from the pinned one"

    say "trim $LCP_SDIST ($(stat -c %s "$tmp/dl/$LCP_SDIST") bytes): removing"
    mkdir -p "$tmp/x"
    tar xzf "$tmp/dl/$LCP_SDIST" -C "$tmp/x" || die "unpacking $LCP_SDIST failed"
    [ -d "$tmp/x/$LCP_TOP" ] || die "$LCP_SDIST has no $LCP_TOP/"
    trim_tree "$tmp/x/$LCP_TOP" | tee "$tmp/trimmed.txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || die "trim failed"
    # a reproducible tarball: sorted names, fixed owner and times, no gzip timestamp
    tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 --format=gnu \
        -C "$tmp/x" -cf - "$LCP_TOP" | gzip -n -9 > "$dir/$LCP_TRIMMED" || die "packing $LCP_TRIMMED failed"
    say "$LCP_TRIMMED: $(stat -c %s "$dir/$LCP_TRIMMED") bytes"

    say "build wheels (this machine's Python): scikit-build-core and its dependencies"
    rm -rf "$dir/build-wheels"
    "$tmp/venv/bin/pip" download -q --only-binary :all: -d "$dir/build-wheels" scikit-build-core \
        || die "pip download scikit-build-core failed"
    # cp312 linux x86_64, no dependencies resolved: numpy, jinja2, typing-extensions are the
    # torch machine's; the test installs only the ones its Python cannot import
    say "cp312 wheels: gguf diskcache pyyaml tqdm requests charset-normalizer idna urllib3 certifi"
    rm -rf "$dir/wheels"
    "$tmp/venv/bin/pip" download -q --no-deps --only-binary :all: --python-version 3.12 --implementation cp \
        --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux_2_28_x86_64 \
        -d "$dir/wheels" "gguf==$GGUF_VERSION" "diskcache==$DISKCACHE_VERSION" pyyaml tqdm requests \
        charset-normalizer idna urllib3 certifi || die "pip download of the wheels failed"

    {
        echo "# llama-cpp-python offline build and test inputs, fetched $(date -u +%Y-%m-%dT%H:%M:%SZ) by tests/adopt/llama-cpp-python.sh fetch"
        echo "$LCP_SDIST: llama-cpp-python $LCP_VERSION sdist, PyPI (pip download --no-binary :all: llama-cpp-python==$LCP_VERSION)"
        echo "  sha256 $(sha256sum < "$tmp/dl/$LCP_SDIST" | cut -d' ' -f1), $(stat -c %s "$tmp/dl/$LCP_SDIST") bytes (not kept)"
        echo "$LCP_TRIMMED: that sdist with these removed (TRIM in the script says why), nothing else changed:"
        cat "$tmp/trimmed.txt"
        echo "  sha256 $(sha256sum < "$dir/$LCP_TRIMMED" | cut -d' ' -f1), $(stat -c %s "$dir/$LCP_TRIMMED") bytes"
        echo "build-wheels/: PyPI, pip download --only-binary :all: scikit-build-core (for $("$PYTHON" -c 'import sys; print("Python %d.%d" % sys.version_info[:2])')):"
        local w; for w in "$dir"/build-wheels/*.whl; do
            echo "  $(basename "$w") sha256 $(sha256sum < "$w" | cut -d' ' -f1)"
        done
        echo "wheels/: PyPI, pip download --no-deps --only-binary :all: --python-version 3.12 (linux x86_64):"
        for w in "$dir"/wheels/*.whl; do
            echo "  $(basename "$w") sha256 $(sha256sum < "$w" | cut -d' ' -f1)"
        done
    } > "$dir/PROVENANCE"
    (cd "$dir" && sha256sum "$LCP_TRIMMED" build-wheels/*.whl wheels/*.whl) > "$dir/SHA256SUMS"
    rm -rf "$tmp"
    say "fetched: $(du -sh "$dir" | cut -f1) in $dir"
    cat "$dir/PROVENANCE"
}

# ---------------------------------------------------------------------------------------------
# readelf -d facts of every .so under $1, one block each; sets BAD to the list of problems.
report_elves() {
    local root=$1 so needed rp n
    BAD=""
    while IFS= read -r so; do
        echo "${so#"$root"/} ($(stat -c %s "$so") bytes)"
        needed=$(readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
        rp=$(readelf -d "$so" | sed -n 's/.*(\(RPATH\|RUNPATH\)).*\[\(.*\)\]/\1 \2/p')
        echo "  DT_NEEDED: $(echo $needed)"
        echo "  RPATH/RUNPATH: ${rp:-none}"
        echo "  undefined dynamic symbols named cu*/nv*: $(nm -D --undefined-only "$so" 2>/dev/null | awk '{print $NF}' | grep -c -E '^_?_?(cu|nv)')"
        for n in $needed; do
            case $n in
                libcudaload*) ;;
                libcu*|libnv*|libnccl*) BAD="$BAD ${so##*/}:DT_NEEDED=$n" ;;
            esac
        done
        case $rp in *nvidia/*|*cuda*) BAD="$BAD ${so##*/}:${rp// /=}" ;; esac
    done < <(find "$root" -name '*.so*' -type f | sort)
}

# The wheel to carry to a GPU machine: the built wheel less what llama_cpp never reads. The wheel
# format has no symbolic links, so each library is there three times (libX.so, libX.so.0,
# libX.so.0.N.M: byte-identical copies), and llama.cpp's own install() rules put a fourth set,
# its headers and CMake/pkg-config files at the wheel's top (lib/, include/). Kept: llama_cpp/
# (Python), and in llama_cpp/lib the libraries llama_cpp loads by name with ctypes (libggml.so,
# libllama.so, libmtmd.so: _ctypes_extensions.load_shared_library) with the closure of their
# DT_NEEDED names there; every other file of llama_cpp/lib must be a byte-identical copy of a
# kept one. RECORD is rewritten for what is kept. Prints what it dropped.
SLIM_WHEEL='
import sys, os, zipfile, hashlib, base64, subprocess, re
src, unpacked, dst = sys.argv[1:4]
zin = zipfile.ZipFile(src)
names = [i.filename for i in zin.infolist() if not i.is_dir()]
distinfo = next(n.split("/")[0] for n in names if n.split("/")[0].endswith(".dist-info"))
libdir = "llama_cpp/lib/"
libs = {n for n in names if n.startswith(libdir) and "/" not in n[len(libdir):]}
def needed(n):
    out = subprocess.run(["readelf", "-d", os.path.join(unpacked, n)], capture_output=True, text=True).stdout
    return re.findall(r"\(NEEDED\).*\[(.*)\]", out)
keep = {libdir + "lib%s.so" % b for b in ("ggml", "llama", "mtmd", "llava")} & libs
todo = list(keep)
while todo:
    for dep in needed(todo.pop()):
        if libdir + dep in libs and libdir + dep not in keep:
            keep.add(libdir + dep); todo.append(libdir + dep)
def sha(n):
    return hashlib.sha256(zin.read(n)).digest()
kept_sums = {sha(n) for n in keep}
dropped, bad = [], []
for n in names:
    if n.startswith(libdir) and n in libs and n not in keep:
        (dropped if sha(n) in kept_sums else bad).append(n)
    elif not (n.startswith("llama_cpp/") or n.startswith(distinfo + "/")):
        dropped.append(n)
if bad:
    sys.exit("slim wheel: not copies of a kept library: %s" % " ".join(bad))
record = distinfo + "/RECORD"
rows = []
with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
    for info in zin.infolist():
        n = info.filename
        if info.is_dir() or n in dropped or n == record:
            continue
        data = zin.read(n)
        zout.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED)
        h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        rows.append("%s,sha256=%s,%d" % (n, h, len(data)))
    rows.append(record + ",,")
    zout.writestr(zin.getinfo(record), "\n".join(rows) + "\n", compress_type=zipfile.ZIP_DEFLATED)
print("kept in %s: %s" % (libdir, " ".join(sorted(k[len(libdir):] for k in keep))))
print("dropped (%d files): %s" % (len(dropped), " ".join(sorted(dropped))))
'

build() {
    local dir out switch
    build_args "$@"
    local sum; sum=$(sha256sum < "$dir/$LCP_TRIMMED" | cut -d' ' -f1)

    # The source: unpacked once per trimmed tarball (kept, with the tarball's times, so that a
    # second build finds its objects up to date).
    local src=$out/src/$LCP_TOP
    if [ "$(cat "$out/src/.sha256" 2>/dev/null)" != "$sum" ]; then
        say "unpack $LCP_TRIMMED into $out/src"
        rm -rf "$out/src" && mkdir -p "$out/src"
        tar xzf "$dir/$LCP_TRIMMED" -C "$out/src" || die "unpacking $LCP_TRIMMED failed"
        echo "$sum" > "$out/src/.sha256"
        rm -rf "$out/skbuild" "$out/skbuild.switch"
    fi
    # The build directory: kept for the same switch path; CMAKE_PROJECT_TOP_LEVEL_INCLUDES and
    # what the switch did are in its cache, so another switch (or none) starts it afresh.
    if [ -d "$out/skbuild" ] && [ "$(cat "$out/skbuild.switch" 2>/dev/null)" != "switch=$switch" ]; then
        say "build directory $out/skbuild was for $(cat "$out/skbuild.switch" 2>/dev/null || echo '?'): removed"
        rm -rf "$out/skbuild"
    fi
    mkdir -p "$out/skbuild" && echo "switch=$switch" > "$out/skbuild.switch"
    rm -rf "$out/wheel" "$out/wheel-slim" "$out/build.log" "$out/report.txt" "$out/wheel-unpacked"
    mkdir -p "$out/wheel"

    # The build's Python: scikit-build-core, from the carried wheels into OUT/venv if missing.
    local py=$PYTHON
    if ! "$py" -c "import scikit_build_core" 2>/dev/null; then
        py=$out/venv/bin/python
        if ! "$py" -c "import scikit_build_core" 2>/dev/null; then
            say "$PYTHON lacks scikit-build-core: venv $out/venv, installed from $dir/build-wheels"
            rm -rf "$out/venv"
            "$PYTHON" -m venv "$out/venv" || die "$PYTHON -m venv failed"
            "$py" -m pip install -q --no-index --find-links "$dir/build-wheels" scikit-build-core \
                || die "installing scikit-build-core from $dir/build-wheels failed"
        fi
    fi
    # nvcc: CMake's CUDA language and FindCUDAToolkit look in PATH and CUDACXX.
    if [ -z "${CUDACXX:-}" ] && ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
        export CUDACXX=/usr/local/cuda/bin/nvcc
    fi
    export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}
    # Two options beside GGML_CUDA, none a change to the project:
    # - CMAKE_CUDA_ARCHITECTURES=90-real: H100/H200 code (SASS) only. "90" adds compute_90 PTX
    #   to every kernel: libggml-cuda.so.0 is then 61 MB (41 MB zipped), more than a GPU
    #   machine can be sent with the rest (LCP_CUDA_ARCH=90 builds it).
    # - GGML_NATIVE=off: ggml's default is -march=native, this machine's CPU (AMX and
    #   AVX512-FP16 on a Sapphire Rapids builder) in a wheel run elsewhere; off, ggml-cpu takes
    #   AVX2, FMA, F16C, BMI2 (x86-64-v3), as portable wheels are built (LCP_GGML_NATIVE=on).
    # ggml-cuda's NCCL (multi-GPU all-reduce) stays as ggml has it: on when find_package(NCCL)
    # finds it (the toolkit's /usr/local/cuda/lib/libnccl.so here); the switch takes its
    # imported target to libcudaload's NCCL stub (LCP_GGML_CUDA_NCCL=off builds without it).
    CMAKE_ARGS="-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=${LCP_CUDA_ARCH:-90-real}"
    CMAKE_ARGS="$CMAKE_ARGS -DGGML_NATIVE=${LCP_GGML_NATIVE:-off}${LCP_GGML_CUDA_NCCL:+ -DGGML_CUDA_NCCL=$LCP_GGML_CUDA_NCCL}"
    [ -n "$switch" ] && CMAKE_ARGS="$CMAKE_ARGS -DCMAKE_PROJECT_TOP_LEVEL_INCLUDES=$switch"
    export CMAKE_ARGS

    say "python $("$py" -c 'import sys, scikit_build_core as s; print(sys.version.split()[0], "scikit-build-core", s.__version__)')"
    say "cmake $(cmake --version | head -1), nvcc ${CUDACXX:-$(command -v nvcc)}, CMAKE_BUILD_PARALLEL_LEVEL=$CMAKE_BUILD_PARALLEL_LEVEL"
    say "CMAKE_ARGS=$CMAKE_ARGS"
    say "pip wheel (log: $out/build.log)"
    local t0=$SECONDS rc
    (cd "$src" && "$py" -m pip wheel -v --no-build-isolation --no-deps --no-index -w "$out/wheel" \
        -Cbuild-dir="$out/skbuild" .) > "$out/build.log" 2>&1
    rc=$?
    local secs=$((SECONDS - t0))
    echo "$dir" > "$out/FETCH_DIR"
    if [ $rc -ne 0 ]; then
        tail -40 "$out/build.log"
        die "pip wheel failed (rc $rc, ${secs}s); full log $out/build.log"
    fi
    local whl; whl=$(ls "$out"/wheel/llama_cpp_python-*.whl 2>/dev/null | head -1)
    [ -n "$whl" ] || die "pip wheel made no wheel"
    "$py" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$whl" "$out/wheel-unpacked"
    mkdir -p "$out/wheel-slim"
    local slim; slim=$out/wheel-slim/$(basename "$whl")
    "$py" -c "$SLIM_WHEEL" "$whl" "$out/wheel-unpacked" "$slim" > "$out/slim.txt" 2>&1 \
        || { cat "$out/slim.txt"; die "making the slim wheel failed"; }

    {
        echo "llama-cpp-python $LCP_VERSION CUDA wheel, built $(date -u +%Y-%m-%dT%H:%M:%SZ) in ${secs}s"
        echo "switch: ${switch:-none (plain build)}"
        echo "CMAKE_ARGS: $CMAKE_ARGS"
        echo "wheel: $(basename "$whl"), $(stat -c %s "$whl") bytes"
        echo "slim wheel (to carry; SLIM_WHEEL): wheel-slim/$(basename "$slim"), $(stat -c %s "$slim") bytes"
        sed 's/^/  /' "$out/slim.txt"
        echo "cudaload lines at configure time:"
        # the lines, with their indented continuation lines (the switch lists items under one)
        local cl; cl=$(awk '/^ *(-- )?cudaload:/ { p = 1; print; next } p && /^     *[^ -]/ { print; next } { p = 0 }' "$out/build.log")
        echo "${cl:-none}" | sed 's/^ *--/  --/; s/^ \{5,\}/      /'
        local ext; ext=$(cd "$out/wheel-unpacked" && find . -name '*.so*' ! -path '*/lib/*' | tr '\n' ' ')
        echo "compiled Python extensions (.so outside lib/; llama_cpp uses ctypes, expected none): ${ext:-none}"
        echo "shared objects:"
        report_elves "$out/wheel-unpacked" > "$out/elves.txt"   # in this shell: it sets BAD
        sed 's/^/  /' "$out/elves.txt"
    } > "$out/report.txt"
    local verdict=0
    build_verdict "$out" "$switch" || verdict=1
    say "wheel $whl (${secs}s); to carry: $slim ($(stat -c %s "$slim") bytes)"
    exit $verdict
}

# ---------------------------------------------------------------------------------------------
# The test's model: a llama with random weights and a SentencePiece-style ("llama") vocabulary,
# written with the gguf package (argv[1]: the path). What llama.cpp needs to load it (src/
# llama-model.cpp, llama-vocab.cpp, models/llama.cpp): general.architecture, the llama.* hyper-
# parameters (context, embedding and feed-forward lengths, block count, head counts, rope
# dimensions, RMS-norm epsilon), tokenizer.ggml.model = "llama" with the token list, scores and
# types (the SPM tokenizer falls back to the <0xXX> byte tokens, so all 256 are there), and the
# tensors token_embd, output_norm, output, blk.N.{attn_norm, attn_q, attn_k, attn_v,
# attn_output, ffn_norm, ffn_gate, ffn_up, ffn_down}. Weights ~ N(0, 1/fan_in) keep activations
# and logits of order 1 (logit std ~1, max ~4).
MAKE_MODEL='
import sys, importlib.metadata, numpy as np, gguf
N_EMBD, N_HEAD, N_HEAD_KV, N_FF, N_LAYER, N_CTX = 256, 4, 2, 512, 4, 256
HEAD_DIM = N_EMBD // N_HEAD
T = gguf.TokenType
toks = [("<unk>", 0.0, T.UNKNOWN), ("<s>", 0.0, T.CONTROL), ("</s>", 0.0, T.CONTROL)]
toks += [("<0x%02X>" % b, 0.0, T.BYTE) for b in range(256)]
toks += [("\u2581" + w, -1.0, T.NORMAL) for w in "the quick brown fox jumps over lazy dog".split()]
toks += [("\u2581" + chr(c), -2.0, T.NORMAL) for c in range(ord("a"), ord("z") + 1)]
toks += [(chr(c), -3.0, T.NORMAL) for c in range(ord("a"), ord("z") + 1)]
toks += [("\u2581", -4.0, T.NORMAL)]
rng = np.random.default_rng(1234)
def mat(rows, cols):   # numpy (rows, cols) is ggml ne {cols, rows}: y = W x, fan-in cols
    return (rng.standard_normal((rows, cols)) / np.sqrt(cols)).astype(np.float16)
def norm(n):
    return (1.0 + 0.1 * rng.standard_normal(n)).astype(np.float32)
t = {"token_embd.weight": rng.standard_normal((len(toks), N_EMBD)).astype(np.float16)}
for i in range(N_LAYER):
    b = "blk.%d." % i
    t[b + "attn_norm.weight"] = norm(N_EMBD)
    t[b + "attn_q.weight"] = mat(N_HEAD * HEAD_DIM, N_EMBD)
    t[b + "attn_k.weight"] = mat(N_HEAD_KV * HEAD_DIM, N_EMBD)
    t[b + "attn_v.weight"] = mat(N_HEAD_KV * HEAD_DIM, N_EMBD)
    t[b + "attn_output.weight"] = mat(N_EMBD, N_HEAD * HEAD_DIM)
    t[b + "ffn_norm.weight"] = norm(N_EMBD)
    t[b + "ffn_gate.weight"] = mat(N_FF, N_EMBD)
    t[b + "ffn_up.weight"] = mat(N_FF, N_EMBD)
    t[b + "ffn_down.weight"] = mat(N_EMBD, N_FF)
t["output_norm.weight"] = norm(N_EMBD)
t["output.weight"] = mat(len(toks), N_EMBD)
w = gguf.GGUFWriter(sys.argv[1], "llama")
w.add_name("tiny-random-llama (libcudaload tests/adopt/llama-cpp-python.sh)")
w.add_context_length(N_CTX)
w.add_embedding_length(N_EMBD)
w.add_feed_forward_length(N_FF)
w.add_block_count(N_LAYER)
w.add_head_count(N_HEAD)
w.add_head_count_kv(N_HEAD_KV)
w.add_rope_dimension_count(HEAD_DIM)
w.add_rope_freq_base(10000.0)
w.add_layer_norm_rms_eps(1e-5)
w.add_vocab_size(len(toks))
w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
w.add_tokenizer_model("llama")
w.add_token_list([x[0] for x in toks])
w.add_token_scores([x[1] for x in toks])
w.add_token_types([int(x[2]) for x in toks])
w.add_bos_token_id(1)
w.add_eos_token_id(2)
w.add_unk_token_id(0)
w.add_add_bos_token(True)
w.add_add_eos_token(False)
for name, a in t.items():
    w.add_tensor(name, a)
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()
r = gguf.GGUFReader(sys.argv[1])   # read back: what was written is what llama.cpp will read
assert r.fields["general.architecture"].contents() == "llama"
assert r.fields["tokenizer.ggml.model"].contents() == "llama"
assert len(r.fields["tokenizer.ggml.tokens"].contents()) == len(toks)
assert len(r.tensors) == 3 + 9 * N_LAYER, len(r.tensors)
print("gguf %s: wrote %s: llama, %d layers, n_embd %d, %d heads (%d KV), n_ff %d, vocab %d, %d tensors (F16 matrices, F32 norms)"
      % (importlib.metadata.version("gguf"), sys.argv[1], N_LAYER, N_EMBD, N_HEAD, N_HEAD_KV, N_FF, len(toks), len(r.tensors)))
'

# The lines both processes report of their /proc/self/maps: "MAPPED <lib> <count> <paths>" for
# libcudart, libcublas, libcublasLt and libcuda, then every mapped libcu*/libnv*/libcudaload*/
# libggml*/libllama* path.
MAPS_LINES='
import os, re
MAPPED_LIBS = ("libcudart", "libcublas", "libcublasLt", "libcuda")
def maps_lines():
    paths = sorted({l.split(None, 5)[5].strip() for l in open("/proc/self/maps") if len(l.split(None, 5)) == 6})
    lines = []
    for name in MAPPED_LIBS:   # libcublas does not match libcublasLt, libcuda not libcudart
        hits = [p for p in paths if re.match(re.escape(name) + r"\.so(\.|$)", os.path.basename(p))]
        lines.append("MAPPED %s %d %s" % (name, len(hits), " ".join(hits)))
    return lines + ["  " + p for p in paths if re.search(r"/lib(cu|nv|ggml|llama|mtmd)[^/]*$", p)]
'

# The probe: torch first (CUDA initialised, a cuBLAS matmul), then llama_cpp: the tiny model on
# the GPU (n_gpu_layers=-1) and on the CPU (n_gpu_layers=0, KV cache and every op on the CPU:
# offload_kqv=False, op_offload=False), the same 64 tokens with logits_all=True, the logits
# compared; llama.cpp's log (this process's stderr, LCP_LOG) checked for the offload; the maps.
#
# TOLERANCE: max |GPU - CPU| <= 0.02 x max |CPU logit|. The GPU path multiplies the F16 weights
# with cuBLAS in F16 (CUBLAS_COMPUTE_16F: F16 inputs, accumulation and outputs, ggml-cuda's
# default for F16 weights at 64 tokens), the CPU path rounds activations to F16 and accumulates
# in F32. Measured on a builder without a GPU, for these 64 tokens: llama.cpp's CPU logits
# (std 1.02, max |.| 3.99) match a float64 numpy forward pass of the same model to 0.0007 x
# max |logit|, and a numpy emulation of the GPU's arithmetic (F16 accumulation in blocks of 16,
# F16 outputs, F16 KV cache) differs from them by 0.0021 x max |logit|, with the same argmax at
# every position: the tolerance is 10x that.
# A GPU that computed wrongly (a wrong or missing cuBLAS call, uninitialised memory, wrong
# layer) differs by the order of the logits themselves (>= 0.3 x max), 15x the tolerance.
PROBE=$MAPS_LINES'
import sys, time, json
import numpy as np
TOLERANCE = 0.02
log_path, model_path = os.environ["LCP_LOG"], os.environ["LCP_MODEL"]
fails = []
def log_since(mark):
    sys.stderr.flush()
    text = open(log_path, errors="replace").read()
    return text[text.index(mark) + len(mark):]

import torch   # first: its CUDA libraries are loaded before llama_cpp is imported
assert torch.cuda.is_available(), "torch sees no CUDA device"
a = torch.randn(512, 512, device="cuda")
torch.cuda.synchronize(); c = float((a @ a).sum())
print("torch", torch.__version__, "CUDA", torch.version.cuda, "device", torch.cuda.get_device_name(0), "cuBLAS matmul ok")

import llama_cpp
print("llama_cpp", llama_cpp.__version__, os.path.dirname(llama_cpp.__file__))
print("llama_supports_gpu_offload:", llama_cpp.llama_supports_gpu_offload())
if not llama_cpp.llama_supports_gpu_offload():
    fails.append("llama.cpp reports no GPU offload support")

def run(label, **kw):
    mark = "\n=== lcp probe: %s load ===\n" % label
    sys.stderr.write(mark); sys.stderr.flush()
    t0 = time.time()
    llm = llama_cpp.Llama(model_path=model_path, n_ctx=128, n_batch=128, n_ubatch=128, logits_all=True,
                          seed=1, verbose=True, **kw)
    text = "the quick brown fox jumps over the lazy dog"
    toks = llm.tokenize(text.encode())
    rng = np.random.default_rng(7)
    ids = toks + [int(x) for x in rng.integers(3, llm.n_vocab(), 64 - len(toks))]
    llm.eval(ids)
    logits = np.array(llm.scores[: len(ids)], dtype=np.float64)
    n_layer = int(llm.metadata["llama.block_count"])
    llm.close()
    print("%s: %s, tokens of %r: %s; %d tokens evaluated in %.2fs, logits %s" % (label, kw, text, toks, len(ids), time.time() - t0, logits.shape))
    return ids, logits, n_layer, log_since(mark)

ids_g, lg, n_layer, log_g = run("GPU", n_gpu_layers=-1)
ids_c, lc, _, log_c = run("CPU", n_gpu_layers=0, offload_kqv=False, op_offload=False)
assert ids_g == ids_c

# the offload, in llama.cpp words
off_g = re.findall(r"offloaded (\d+)/(\d+) layers to GPU", log_g)
off_c = re.findall(r"offloaded (\d+)/(\d+) layers to GPU", log_c)
assigned = re.findall(r"layer +(\d+) assigned to device (\S+?),", log_g)
print("GPU load: llama.cpp says offloaded %s layers; layers assigned to devices: %s; model buffers: %s"
      % ("/".join(off_g[0]) if off_g else "?", sorted(set(d for _, d in assigned)) or "(no debug lines)",
         re.findall(r"(\S+) model buffer size = +([\d.]+) MiB", log_g)))
print("CPU load: llama.cpp says offloaded %s layers; model buffers: %s"
      % ("/".join(off_c[0]) if off_c else "?", re.findall(r"(\S+) model buffer size = +([\d.]+) MiB", log_c)))
if not off_g or off_g[0] != (str(n_layer + 1), str(n_layer + 1)):
    fails.append("GPU load: not all %d layers (%d and the output layer) offloaded: %s" % (n_layer + 1, n_layer, off_g))
if assigned and (any(d != "CUDA0" for _, d in assigned) or len({il for il, _ in assigned}) != n_layer + 1):
    fails.append("GPU load: not every layer on CUDA0: %s" % assigned)
if not re.search(r"CUDA0 model buffer size", log_g):
    fails.append("GPU load: no CUDA0 model buffer in the log")
if not off_c or off_c[0][0] != "0":
    fails.append("CPU load: layers offloaded: %s" % off_c)
if re.search(r"CUDA0 model buffer size", log_c):
    fails.append("CPU load: a CUDA0 model buffer")

d = np.abs(lg - lc); scale = np.abs(lc).max()
agree = float((lg.argmax(1) == lc.argmax(1)).mean())
ok = bool(np.isfinite(lg).all() and d.max() <= TOLERANCE * scale)
print("logits GPU vs CPU: %d x %d, CPU logit std %.4f max |.| %.4f; max |GPU-CPU| %.5f = %.5f x max |CPU logit| (tolerance %.3f): %s; "
      "rms diff / CPU std %.5f; argmax equal at %.1f%% of positions"
      % (lc.shape[0], lc.shape[1], lc.std(), scale, d.max(), d.max() / scale, TOLERANCE, "within" if ok else "NOT within",
         np.sqrt((d ** 2).mean()) / lc.std(), 100 * agree))
if not ok:
    fails.append("GPU logits differ from the CPU ones beyond the tolerance")
if float(np.abs(lg).max()) == 0.0:
    fails.append("GPU logits all zero")
print("\n".join(maps_lines()))
print("PROBE " + ("OK" if not fails else "FAIL: " + "; ".join(fails)))
sys.exit(1 if fails else 0)
'

# The pytest plugin: torch first (as in the probe), the tests that download a model
# deselected, the maps lines written at the session's end.
PLUGIN=$MAPS_LINES'
import ast, pytest
def pytest_configure(config):
    import torch
    if torch.cuda.is_available():
        a = torch.randn(256, 256, device="cuda"); float((a @ a).sum())

def _download_fixtures(path, cache={}):
    # fixtures of the module whose body calls hf_hub_download: a model from the Hugging Face Hub
    if path not in cache:
        names = set()
        for node in ast.walk(ast.parse(open(path).read())):
            if isinstance(node, ast.FunctionDef) and any("fixture" in ast.unparse(d) for d in node.decorator_list):
                if any(isinstance(n, ast.Name) and n.id == "hf_hub_download" for n in ast.walk(node)):
                    names.add(node.name)
        cache[path] = names
    return cache[path]

def pytest_collection_modifyitems(session, config, items):
    keep, drop, lines = [], [], []
    for item in items:
        dl = _download_fixtures(str(getattr(item, "path", None) or item.fspath))
        used = set(item.fixturenames) & dl
        params = getattr(getattr(item, "callspec", None), "params", {})
        used |= {v for v in params.values() if isinstance(v, str) and v in dl}
        if used:
            drop.append(item)
            lines.append("%s: fixture %s downloads a model from the Hugging Face Hub (hf_hub_download)" % (item.nodeid, ", ".join(sorted(used))))
        else:
            keep.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
    with open(os.environ["LCP_DESELECTED"], "w") as f:
        f.write("".join(l + "\n" for l in lines))

def pytest_sessionfinish(session, exitstatus):
    with open(os.environ["LCP_MAPS_OUT"], "w") as f:
        f.write("".join(l + "\n" for l in maps_lines()))
'

test_wheel() {
    local whl out dir
    test_args "$LCP_TRIMMED" "$@"
    (cd "$dir" && sha256sum -c --quiet SHA256SUMS) || die "$dir: SHA256SUMS does not match"

    local m
    for m in torch numpy pytest scipy jinja2 huggingface_hub typing_extensions; do
        "$PYTHON" -c "import $m" 2>/dev/null || die "$PYTHON cannot import $m"
    done
    rm -rf "$out/site" "$out/testdeps" "$out/sdist" "$out/plugin" "$out"/*.txt "$out/junit.xml" "$out/pytest.log" "$out/tiny-llama.gguf"
    mkdir -p "$out/plugin"
    say "install $(basename "$whl") into $out/site"
    if ! "$PYTHON" -m pip install -q --no-deps --no-index --target "$out/site" "$whl" 2> "$out/pip-install.txt"; then
        # a wheel tagged for another Python: llama_cpp is Python and ctypes-loaded libraries only
        say "pip refused the wheel ($(tail -1 "$out/pip-install.txt")): unzipping it instead"
        rm -rf "$out/site"
        "$PYTHON" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$whl" "$out/site" || die "unzip failed"
        chmod -R u+rwX,go+rX "$out/site"
    fi
    local ext; ext=$(cd "$out/site" && find . -name '*.so*' ! -path './llama_cpp/lib/*' | tr '\n' ' ')
    [ -z "$ext" ] || die "compiled Python extension(s) outside llama_cpp/lib: $ext"
    # what llama_cpp and the test import that this Python lacks: from the carried wheels
    local need=() pkg
    for m in gguf diskcache yaml tqdm requests charset_normalizer idna urllib3 certifi; do
        "$PYTHON" -c "import $m" 2>/dev/null && continue
        case $m in yaml) pkg=pyyaml ;; charset_normalizer) pkg=charset-normalizer ;; *) pkg=$m ;; esac
        need+=("$pkg")
    done
    if [ ${#need[@]} -gt 0 ]; then
        say "installing ${need[*]} from $dir/wheels into $out/testdeps"
        "$PYTHON" -m pip install -q --no-deps --no-index --find-links "$dir/wheels" --target "$out/testdeps" "${need[@]}" \
            || die "installing ${need[*]} failed"
    fi
    # the sdist's tests and the one vocabulary file they read (by a path relative to the sdist's
    # top); not llama_cpp/ itself, which would shadow the installed one
    mkdir -p "$out/sdist"
    tar xzf "$dir/$LCP_TRIMMED" -C "$out/sdist" --strip-components=1 "$LCP_TOP/tests" "$LCP_TOP/$VOCAB_KEPT" \
        || die "unpacking the sdist's tests failed"
    printf '%s' "$PLUGIN" > "$out/plugin/lcp_plugin.py"

    export PYTHONPATH=$out/site:$out/testdeps:$out/plugin${PYTHONPATH:+:$PYTHONPATH}
    export HF_HUB_OFFLINE=1
    local rc_model rc_probe rc_test t0=$SECONDS
    say "model: $out/tiny-llama.gguf (gguf package)"
    "$PYTHON" -c "$MAKE_MODEL" "$out/tiny-llama.gguf" > "$out/model.txt" 2>&1; rc_model=$?
    cat "$out/model.txt"
    [ $rc_model -eq 0 ] || die "writing the model failed"

    say "probe: torch first, the model on the GPU and on the CPU, /proc/self/maps (llama.cpp log $out/llama-log.txt)"
    (cd "$out" && LCP_LOG=$out/llama-log.txt LCP_MODEL=$out/tiny-llama.gguf "$PYTHON" -c "$PROBE") \
        > "$out/probe.txt" 2> "$out/llama-log.txt"; rc_probe=$?
    cat "$out/probe.txt"
    [ $rc_probe -eq 0 ] || tail -20 "$out/llama-log.txt"

    say "pytest $out/sdist/tests (log $out/pytest.log)"
    (cd "$out/sdist" && LCP_MAPS_OUT=$out/pytest-maps.txt LCP_DESELECTED=$out/deselected.txt \
        "$PYTHON" -m pytest -p lcp_plugin -p no:cacheprovider --rootdir "$out/sdist" -q -rfEs \
        --junitxml="$out/junit.xml" tests) > "$out/pytest.log" 2>&1
    rc_test=$?
    local secs=$((SECONDS - t0))
    tail -5 "$out/pytest.log"
    local counts
    counts=$(junit_counts "$out/junit.xml")
    local ok=1 l
    {
        echo "llama-cpp-python $LCP_VERSION on the GPU beside torch, $(basename "$whl"), $(date -u +%Y-%m-%dT%H:%M:%SZ), ${secs}s"
        echo "python $("$PYTHON" -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__)' 2>&1)"
        echo "model: $(tail -1 "$out/model.txt")"
        echo "probe (rc $rc_probe):"; grep -E '^(torch|llama_|GPU|CPU|logits|MAPPED|PROBE|  /)' "$out/probe.txt" | sed 's/^/  /'
        echo "pytest (rc $rc_test): $counts; deselected $(wc -l < "$out/deselected.txt" 2>/dev/null || echo '?'):"
        sed 's/^/  /' "$out/deselected.txt" 2>/dev/null
        echo "pytest process at session end:"; sed 's/^/  /' "$out/pytest-maps.txt" 2>/dev/null || echo "  no maps written"
    } > "$out/test-report.txt"
    [ $rc_probe -eq 0 ] && [ $rc_test -eq 0 ] || ok=0
    for l in "$out/probe.txt" "$out/pytest-maps.txt"; do
        for m in libcudart libcublas libcublasLt; do
            # exactly one, torch's (its nvidia wheels: site-packages/nvidia/...)
            grep -q "^MAPPED $m 1 .*/site-packages/nvidia/" "$l" 2>/dev/null \
                || { ok=0; echo "NOT ONE $m, from torch's nvidia wheels, mapped in $(basename "$l")" >> "$out/test-report.txt"; }
        done
        # exactly one libcuda: the driver's
        grep -q "^MAPPED libcuda 1 " "$l" 2>/dev/null \
            || { ok=0; echo "NOT ONE libcuda mapped in $(basename "$l")" >> "$out/test-report.txt"; }
    done
    test_verdict "$ok" "$out" "GPU logits match the CPU's, every layer on CUDA0, tests passed; one libcudart, libcublas, libcublasLt (torch's) and one libcuda mapped"
}

run_phase "$@"
