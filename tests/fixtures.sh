#!/usr/bin/env bash
# tests/fixtures.sh DIR -- build the real-file trees the CPU tests search (idempotent).
#
#   DIR/toolkit-cu13-wheel/nvidia/cu13/lib   the toolkit's libcudart.so.13 (copied) and
#                                            libcublas/libcublasLt.so.13 (symlinked: 600 MB)
#   DIR/conda/lib, DIR/cudahome/lib64        the same three files, as a conda prefix and a CUDA_HOME
#   DIR/venv-cu12                            a venv with nvidia-cuda-runtime-cu12, nvidia-cublas-cu12
#   DIR/venv-cu13                            a venv with nvidia-cuda-runtime (13.x, nvidia/cu13/lib)
#   DIR/bad/<kind>/lib/libcudart.so.13       broken candidates: empty, text, truncated ELF, a real
#                                            library lacking the cudart symbols, aarch64 and 32-bit
#                                            ELF headers, a dangling symlink, a directory
#   DIR/fixtures.env                         KEY=VALUE facts the tests read
# The pip downloads are cached (pip's cache), so a rerun costs nothing.
set -euo pipefail

dir=${1:?usage: tests/fixtures.sh DIR}
case $dir in /*) ;; *) echo "fixtures.sh: DIR must be absolute" >&2; exit 2 ;; esac
cuda_home=${CUDA_HOME:-/usr/local/cuda}
tk=$cuda_home/lib64
python=${PYTHON:-python3}
start=$(date +%s)

for f in libcudart.so.13 libcublas.so.13 libcublasLt.so.13 stubs/libcuda.so; do
    [ -e "$tk/$f" ] || { echo "fixtures.sh: $tk/$f missing: the CUDA 13 toolkit is needed (CUDA_HOME=$cuda_home)" >&2; exit 1; }
done
mkdir -p "$dir"

# toolkit files arranged as a wheel tree, a conda prefix and a CUDA_HOME
lay_out() { # lay_out LIBDIR
    mkdir -p "$1"
    [ -f "$1/libcudart.so.13" ] || cp "$tk/libcudart.so.13" "$1/libcudart.so.13"
    ln -sfn "$tk/libcublas.so.13" "$1/libcublas.so.13"
    ln -sfn "$tk/libcublasLt.so.13" "$1/libcublasLt.so.13"
}
lay_out "$dir/toolkit-cu13-wheel/nvidia/cu13/lib"
lay_out "$dir/conda/lib"
lay_out "$dir/cudahome/lib64"

# real wheels from the registry, each in a venv of its own
make_venv() { # make_venv NAME PACKAGE...
    local venv=$dir/$1; shift
    local marker=$venv/.fixture-installed
    if [ -f "$marker" ] && [ "$(cat "$marker")" = "$*" ]; then return; fi
    rm -rf "$venv"
    "$python" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$@"
    echo "$*" > "$marker"
}
make_venv venv-cu12 nvidia-cuda-runtime-cu12 nvidia-cublas-cu12
make_venv venv-cu13 nvidia-cuda-runtime
site_of() { "$dir/$1/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'; }
site12=$(site_of venv-cu12)
site13=$(site_of venv-cu13)
[ -f "$site12/nvidia/cuda_runtime/lib/libcudart.so.12" ] || { echo "fixtures.sh: cu12 wheel layout not as expected" >&2; exit 1; }
[ -f "$site12/nvidia/cublas/lib/libcublas.so.12" ] || { echo "fixtures.sh: cu12 cublas wheel layout not as expected" >&2; exit 1; }
[ -f "$site13/nvidia/cu13/lib/libcudart.so.13" ] || { echo "fixtures.sh: cu13 wheel layout not as expected" >&2; exit 1; }

# broken candidates
bad=$dir/bad
rm -rf "$bad"
for k in empty text truncated missing-symbol aarch64 elf32 dangling dir; do mkdir -p "$bad/$k/lib"; done
: > "$bad/empty/lib/libcudart.so.13"
printf 'this is a text file named like a library\n' > "$bad/text/lib/libcudart.so.13"
head -c 4096 "$tk/libcudart.so.13" > "$bad/truncated/lib/libcudart.so.13"
# a real, loadable shared library that is not the CUDA runtime
libz=$("$python" - <<'EOF'
import ctypes.util, os, subprocess
out = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True).stdout
for line in out.splitlines():
    if "libz.so.1 " in line and "x86-64" in line:
        print(line.split("=>")[1].strip()); break
EOF
)
[ -n "$libz" ] || { echo "fixtures.sh: libz.so.1 not found" >&2; exit 1; }
cp "$libz" "$bad/missing-symbol/lib/libcudart.so.13"
# a real x86-64 library with its header patched: e_machine (offset 18, 2 bytes LE) = 183
# (EM_AARCH64), and EI_CLASS (offset 4) = 1 (ELFCLASS32)
cp "$tk/libcudart.so.13" "$bad/aarch64/lib/libcudart.so.13"
printf '\xb7\x00' | dd of="$bad/aarch64/lib/libcudart.so.13" bs=1 seek=18 conv=notrunc status=none
cp "$tk/libcudart.so.13" "$bad/elf32/lib/libcudart.so.13"
printf '\x01' | dd of="$bad/elf32/lib/libcudart.so.13" bs=1 seek=4 conv=notrunc status=none
ln -s "$bad/nowhere/libcudart.so.13" "$bad/dangling/lib/libcudart.so.13"
mkdir "$bad/dir/lib/libcudart.so.13"

ver() { "$dir/$1/bin/python" -m pip show "$2" 2>/dev/null | sed -n 's/^Version: //p'; }
cat > "$dir/fixtures.env" <<EOF
FIXTURES=$dir
VENV_CU12_SITE=$site12
VENV_CU13_SITE=$site13
CUDA_TOOLKIT_LIB=$tk
CU12_RUNTIME_VERSION=$(ver venv-cu12 nvidia-cuda-runtime-cu12)
CU12_CUBLAS_VERSION=$(ver venv-cu12 nvidia-cublas-cu12)
CU13_RUNTIME_VERSION=$(ver venv-cu13 nvidia-cuda-runtime)
EOF
echo "fixtures ready in $dir ($(( $(date +%s) - start )) s): $(grep VERSION "$dir/fixtures.env" | tr '\n' ' ')"
