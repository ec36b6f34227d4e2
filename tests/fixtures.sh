#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/fixtures.sh DIR -- build the real-file trees the CPU tests search (idempotent).
#
#   DIR/toolkit-cu13-wheel/nvidia/cu13/lib   the toolkit's libcudart.so.13 (copied) and
#                                            libcublas/libcublasLt.so.13 (symlinked: ~600 MB)
#   DIR/conda/lib, DIR/cudahome/lib64        the same three files, as a conda prefix and a CUDA_HOME
#   DIR/venv-cu12                            a venv with nvidia-cuda-runtime-cu12, nvidia-cublas-cu12,
#                                            nvidia-nvjitlink-cu12 (site-packages/nvidia/cuda_runtime/lib,
#                                            nvidia/cublas/lib, nvidia/nvjitlink/lib)
#   DIR/venv-cu13                            a venv with nvidia-cuda-runtime, nvidia-nvjitlink and
#                                            nvidia-cublas (13.x, all in site-packages/nvidia/cu13/lib);
#                                            the cuBLAS wheel (~450 MB) is skipped with
#                                            FIXTURES_CU13_CUBLAS=0
#   DIR/nvshmem-site/nvidia/nvshmem/lib      the pinned nvSHMEM's libnvshmem_host.so.3,
#                                            libnvshmem_device.a and nvshmem_bootstrap_uid.so.3, and
#                                            its wheel's dist-info (tools/wheel_files.py site: ~56 MB
#                                            of ranged reads of the 330 MB wheel); none, and
#                                            NVSHMEM_SITE empty, when that fails (offline)
#   DIR/bad/<kind>/lib/libcudart.so.13       broken candidates: empty, text, truncated ELF, a real
#                                            library lacking the cudart symbols (missing-symbol),
#                                            aarch64 and 32-bit ELF headers, a dangling symlink, a
#                                            directory (dir)
#   DIR/fixtures.env                         KEY=VALUE facts the tests read (FIXTURES, VENV_CU12_SITE,
#                                            VENV_CU13_SITE, CU13_CUBLAS, CUDA_TOOLKIT_LIB, versions)
#
# Environment: CUDA_HOME (default /usr/local/cuda; its lib64 is used), PYTHON (default python3),
# FIXTURES_CU13_CUBLAS (default 1), PIP_CACHE_DIR (default ~/.cache/pip), FIXTURES_WHEELS (default
# $PIP_CACHE_DIR/cudaload-fixture-wheels). A venv is rebuilt only when its marker file
# (.fixture-installed: python version and package list) does not match. The wheels are kept in
# FIXTURES_WHEELS (`pip download`) and installed from there with --no-index, so a rebuilt venv
# costs no download even where the index sends no cache headers (pip's HTTP cache then keeps
# nothing). Nothing is pinned: the first download takes the newest wheels, which stay until
# FIXTURES_WHEELS is removed; the versions installed are printed and written to fixtures.env.
set -euo pipefail

dir=${1:?usage: tests/fixtures.sh DIR (absolute)}
case $dir in /*) ;; *) echo "fixtures.sh: DIR must be absolute, not '$dir'" >&2; exit 2 ;; esac
cuda_home=${CUDA_HOME:-/usr/local/cuda}
tk=$cuda_home/lib64
python=${PYTHON:-python3}
cu13_cublas=${FIXTURES_CU13_CUBLAS:-1}
case $cu13_cublas in 0|1) ;; *) echo "fixtures.sh: FIXTURES_CU13_CUBLAS must be 0 or 1" >&2; exit 2 ;; esac
if [ -z "${PIP_CACHE_DIR:-}" ]; then
    if [ -n "${HOME:-}" ] && [ "$HOME" != / ]; then PIP_CACHE_DIR=${XDG_CACHE_HOME:-$HOME/.cache}/pip
    else PIP_CACHE_DIR=$dir/.pip-cache; fi
fi
wheels=${FIXTURES_WHEELS:-$PIP_CACHE_DIR/cudaload-fixture-wheels}
case $wheels in /*) ;; *) echo "fixtures.sh: FIXTURES_WHEELS must be absolute" >&2; exit 2 ;; esac
export PIP_CACHE_DIR PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
start=$SECONDS
log() { echo "fixtures.sh: $*"; }
die() { echo "fixtures.sh: $*" >&2; exit 1; }

for f in libcudart.so.13 libcublas.so.13 libcublasLt.so.13; do
    [ -f "$tk/$f" ] || die "$tk/$f missing: the CUDA 13 toolkit is needed (CUDA_HOME=$cuda_home)"
done
command -v "$python" >/dev/null || die "$python not found (set PYTHON)"
mkdir -p "$dir"
# one run at a time on a DIR (make check and check-sanitize share it)
if command -v flock >/dev/null; then exec 9>"$dir/.lock"; flock 9; fi

# ---- the toolkit's files arranged as a wheel tree, a conda prefix and a CUDA_HOME ----
# cudart is copied (a real file in the tree: tests compare paths and copy it around); the cuBLAS
# pair is symlinked to the toolkit (libcublasLt alone is ~540 MB: never copied). The links are
# absolute: dlopen of a link loads the toolkit file, and /proc/self/maps names the target.
lay_out() { # lay_out LIBDIR
    mkdir -p "$1"
    cmp -s "$tk/libcudart.so.13" "$1/libcudart.so.13" || cp -f "$tk/libcudart.so.13" "$1/libcudart.so.13"
    ln -sfn "$tk/libcublas.so.13" "$1/libcublas.so.13"
    ln -sfn "$tk/libcublasLt.so.13" "$1/libcublasLt.so.13"
}
lay_out "$dir/toolkit-cu13-wheel/nvidia/cu13/lib"
lay_out "$dir/conda/lib"
lay_out "$dir/cudahome/lib64"

# ---- real wheels from the registry, each major in a venv of its own ----
pyver=$("$python" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])')
make_venv() { # make_venv NAME PACKAGE...
    local venv=$dir/$1; shift
    local marker=$venv/.fixture-installed want="python $pyver: $*"
    if [ -f "$marker" ] && [ "$(cat "$marker")" = "$want" ] && "$venv/bin/python" -c '' 2>/dev/null; then
        return 0
    fi
    log "creating $venv with $* (wheels kept in $wheels)"
    rm -rf "$venv"
    "$python" -m venv "$venv" || die "'$python -m venv' failed: install python3-venv"
    local pip=("$venv/bin/python" -m pip)
    mkdir -p "$wheels"
    if ! "${pip[@]}" install --quiet --no-index --find-links "$wheels" "$@" 2>/dev/null; then
        "${pip[@]}" download --quiet --progress-bar off --dest "$wheels" "$@" || die "pip download $* failed"
        "${pip[@]}" install --quiet --no-index --find-links "$wheels" "$@" || die "pip install $* failed in $venv"
    fi
    "$python" "$(dirname "$0")/dedupe.py" "$venv"  # one copy on disk of the wheels' big files
    echo "$want" > "$marker"
}
# nvJitLink (40-47 MB a wheel): a catalogue library beyond the runtime and cuBLAS, from the
# registry in both layouts (tests/test_catalogue.c)
cu12_pkgs=(nvidia-cuda-runtime-cu12 nvidia-cublas-cu12 nvidia-nvjitlink-cu12)
cu13_pkgs=(nvidia-cuda-runtime nvidia-nvjitlink)
if [ "$cu13_cublas" = 1 ]; then cu13_pkgs+=(nvidia-cublas); fi
make_venv venv-cu12 "${cu12_pkgs[@]}"
make_venv venv-cu13 "${cu13_pkgs[@]}"

site_of() { "$dir/$1/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'; }
site12=$(site_of venv-cu12)
site13=$(site_of venv-cu13)
expect_files() { # expect_files WHAT FILE...: the wheel layout the tests (and libcudaload) rely on
    local what=$1; shift
    for f in "$@"; do
        [ -f "$f" ] || die "$what: $f missing: the wheel layout changed (or the venv is broken: rm -rf it and rerun)"
    done
}
expect_files "CUDA 12 wheels" "$site12/nvidia/cuda_runtime/lib/libcudart.so.12" \
    "$site12/nvidia/cublas/lib/libcublas.so.12" "$site12/nvidia/cublas/lib/libcublasLt.so.12" \
    "$site12/nvidia/nvjitlink/lib/libnvJitLink.so.12"
expect_files "CUDA 13 runtime and nvJitLink wheels" "$site13/nvidia/cu13/lib/libcudart.so.13" \
    "$site13/nvidia/cu13/lib/libnvJitLink.so.13"
if [ "$cu13_cublas" = 1 ]; then
    expect_files "CUDA 13 cuBLAS wheel" "$site13/nvidia/cu13/lib/libcublas.so.13" "$site13/nvidia/cu13/lib/libcublasLt.so.13"
fi
ver() { # ver VENV DIST: the installed version, or "none"
    "$dir/$1/bin/python" -c 'import sys, importlib.metadata as m
try: print(m.version(sys.argv[1]))
except m.PackageNotFoundError: print("none")' "$2"
}
cu12_rt=$(ver venv-cu12 nvidia-cuda-runtime-cu12)
cu12_blas=$(ver venv-cu12 nvidia-cublas-cu12)
cu13_rt=$(ver venv-cu13 nvidia-cuda-runtime)
cu13_blas=$(ver venv-cu13 nvidia-cublas)

# ---- nvSHMEM's host library as its pinned wheel installs it (the stubs' real copy: test_stubs.c) ----
nvshmem_site=$dir/nvshmem-site
if ! "$python" "$(dirname "$0")/../tools/wheel_files.py" site nvshmem_host "$nvshmem_site" nvidia/nvshmem/lib/libnvshmem_device.a \
    nvidia/nvshmem/lib/nvshmem_bootstrap_uid.so.3; then
    log "no nvSHMEM host library (tools/wheel_files.py site failed): the tests that load it skip"
    nvshmem_site=
fi

# ---- broken candidates (rebuilt each run: cheap) ----
bad=$dir/bad
rm -rf "$bad"
for k in empty text truncated missing-symbol aarch64 elf32 dangling dir; do mkdir -p "$bad/$k/lib"; done
: > "$bad/empty/lib/libcudart.so.13"
printf 'this is a text file named like a library\n' > "$bad/text/lib/libcudart.so.13"
head -c 4096 "$tk/libcudart.so.13" > "$bad/truncated/lib/libcudart.so.13"
# a real, loadable ELF shared library that is not the CUDA runtime: the system's zlib
libz=$({ /sbin/ldconfig -p 2>/dev/null || ldconfig -p 2>/dev/null || true; } |
    awk '$1 == "libz.so.1" && /x86-64/ { print $NF; exit }')
for f in "$libz" /lib/x86_64-linux-gnu/libz.so.1 /usr/lib/x86_64-linux-gnu/libz.so.1 /usr/lib64/libz.so.1; do
    if [ -n "$f" ] && [ -f "$f" ]; then libz=$f; break; fi
done
if [ -z "$libz" ] || [ ! -f "$libz" ]; then die "libz.so.1 not found (zlib1g): needed for bad/missing-symbol"; fi
cp -L "$libz" "$bad/missing-symbol/lib/libcudart.so.13"
# Foreign ELF headers, patched into copies of the real x86-64 libcudart.so.13 (ELF64 LSB):
#   e_machine is the 2 bytes (little-endian) at offset 18: 62 (EM_X86_64) -> 183 (0xb7, EM_AARCH64);
#   EI_CLASS is the byte at offset 4: 2 (ELFCLASS64) -> 1 (ELFCLASS32). dd conv=notrunc writes
#   the bytes in place; the rest of each file is the real library.
elf_byte() { od -An -tu1 -j "$2" -N1 "$1" | tr -d ' '; }
if ! { [ "$(head -c 4 "$tk/libcudart.so.13" | od -An -c | tr -d ' ')" = '177ELF' ] &&
    [ "$(elf_byte "$tk/libcudart.so.13" 4)" = 2 ] && [ "$(elf_byte "$tk/libcudart.so.13" 5)" = 1 ] &&
    [ "$(elf_byte "$tk/libcudart.so.13" 18)" = 62 ]; }; then
    die "$tk/libcudart.so.13 is not an x86-64 ELF64 LSB file: the patched-header fixtures assume one"
fi
cp "$tk/libcudart.so.13" "$bad/aarch64/lib/libcudart.so.13"
printf '\267\000' | dd of="$bad/aarch64/lib/libcudart.so.13" bs=1 seek=18 conv=notrunc status=none
cp "$tk/libcudart.so.13" "$bad/elf32/lib/libcudart.so.13"
printf '\001' | dd of="$bad/elf32/lib/libcudart.so.13" bs=1 seek=4 conv=notrunc status=none
if [ "$(elf_byte "$bad/aarch64/lib/libcudart.so.13" 18)" != 183 ] || [ "$(elf_byte "$bad/elf32/lib/libcudart.so.13" 4)" != 1 ]; then
    die "patching the ELF headers failed"
fi
ln -s "$bad/nowhere/libcudart.so.13" "$bad/dangling/lib/libcudart.so.13"
mkdir "$bad/dir/lib/libcudart.so.13"

# ---- facts for the tests (written whole, then renamed) ----
cat > "$dir/fixtures.env.tmp" <<EOF
FIXTURES=$dir
VENV_CU12_SITE=$site12
VENV_CU13_SITE=$site13
CU13_CUBLAS=$cu13_cublas
CUDA_TOOLKIT_LIB=$tk
CU12_RUNTIME_VERSION=$cu12_rt
CU12_CUBLAS_VERSION=$cu12_blas
CU13_RUNTIME_VERSION=$cu13_rt
CU13_CUBLAS_VERSION=$cu13_blas
NVSHMEM_SITE=$nvshmem_site
EOF
mv -f "$dir/fixtures.env.tmp" "$dir/fixtures.env"
echo "fixtures ready in $dir ($((SECONDS - start)) s): cu12 runtime $cu12_rt, cu12 cublas $cu12_blas," \
    "cu13 runtime $cu13_rt, cu13 cublas $cu13_blas (CU13_CUBLAS=$cu13_cublas), toolkit $tk"
