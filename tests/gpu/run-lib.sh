# SPDX-License-Identifier: Apache-2.0
# tests/gpu/run-lib.sh -- sourced by the GPU run scripts (adopt-run.sh, stubs-run.sh), from the
# repository's root, with $out set to the output directory:
#   PY       the torch venv's python (PYTHON, /opt/torch/.venv/bin/python3, else python3)
#   site     its site-packages; libdir: the CUDA 13 wheels' libraries there (nvidia/cu13/lib)
#   step NAME CMD...   runs CMD, its output and time in $out/NAME.txt with "rc=N" last, prints
#            the tail; a failure counts in $fails
#   cmocka   make's CMOCKA_CFLAGS/CMOCKA_LIBS for the cmocka in .devdeps/ when it is there (the
#            GPU machine has none installed), else empty: make ... "${cmocka[@]}"
# and puts the toolkit's /usr/local/cuda/bin first on PATH, and CUDALOAD_WHEEL_CACHE at .wheelfiles/.
PY=${PYTHON:-/opt/torch/.venv/bin/python3}
[ -x "$PY" ] || PY=python3
site=$($PY -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
libdir=$site/nvidia/cu13/lib
fails=0
export PATH=/usr/local/cuda/bin:$PATH
# the headers of the libraries that ship as wheels of their own (their stubs), carried here in
# .wheelfiles/ (tools/wheel_files.py headers, run where there is network): this machine has none
if [ -z "${CUDALOAD_WHEEL_CACHE:-}" ] && [ -d "$PWD/.wheelfiles" ]; then export CUDALOAD_WHEEL_CACHE=$PWD/.wheelfiles; fi
cmocka=()
if [ -f "$PWD/.devdeps/include/cmocka.h" ]; then
    cmocka=(CMOCKA_CFLAGS="-I$PWD/.devdeps/include" CMOCKA_LIBS="-L$PWD/.devdeps/lib -lcmocka -Wl,-rpath,$PWD/.devdeps/lib")
fi
step() {
    local name=$1
    shift
    echo "=== $name: $*"
    { time "$@"; } > "$out/$name.txt" 2>&1
    local rc=$?
    echo "rc=$rc" >> "$out/$name.txt"
    tail -4 "$out/$name.txt"
    [ $rc = 0 ] || fails=$((fails + 1))
    return $rc
}
