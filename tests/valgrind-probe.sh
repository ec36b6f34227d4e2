#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/valgrind-probe.sh -- cudaload-probe under valgrind, for `make check-valgrind`.
#
# test_probe runs the probe ~60 times; under valgrind each run costs ~30 s of CPU (it loads
# libcudart, libcublas and libcublasLt: ~700 MB of code), so check-valgrind does not follow
# test_probe's children. This script instead runs the probe under valgrind on a few cases that
# between them take every path of the report: JSON and text, a library taken and a corrupt
# candidate skipped, no device, a driver too old, no driver, a hostile (non-UTF-8) root, usage
# errors. Each case runs natively first; under valgrind it must exit with the same code, and
# valgrind's log (in $TEST_REPORT_DIR/$TEST_NAME, scanned by tests/run-tests.sh) must be clean.
#
# Run by tests/run-tests.sh (as a *.sh program it is not wrapped: it wraps the probe itself).
# Environment: TEST_WRAPPER (the valgrind command line), TEST_NAME, CUDALOAD_TEST_BUILD,
# CUDALOAD_TEST_FIXTURES. Prints cmocka-style totals for run-tests.sh.
set -u
b=${CUDALOAD_TEST_BUILD:?} fx=${CUDALOAD_TEST_FIXTURES:?}
probe=$b/cudaload-probe
drv=CUDALOAD_DRIVER_PATH=$b/fake/libcuda.so.1
site12=$(sed -n 's/^VENV_CU12_SITE=//p' "$fx/fixtures.env")
hostile=$(mktemp -d)/$'caf\xe9\xff"\\\n'
mkdir -p "$hostile"
trap 'rm -rf "$(dirname "$hostile")"' EXIT
pass=0 fail=0

# case NAME ENV... -- ARGS...
case_() {
    local name=$1; shift
    local env=()
    while [ "$1" != -- ]; do env+=("$1"); shift; done
    shift
    local want got
    env -i PATH=/usr/bin:/bin "${env[@]}" "$probe" "$@" > /dev/null 2>&1
    want=$?
    # shellcheck disable=SC2086 # the wrapper is a command line
    env -i PATH=/usr/bin:/bin TEST_NAME="$TEST_NAME" "${env[@]}" $TEST_WRAPPER "$probe" "$@" > /dev/null 2>&1
    got=$?
    if [ "$got" -eq "$want" ]; then
        echo "[       OK ] probe: $name (exit $got)"
        pass=$((pass + 1))
    else
        echo "[  FAILED  ] probe: $name: exit $got under valgrind, $want without"
        fail=$((fail + 1))
    fi
}

echo "[==========] cudaload-probe under valgrind"
case_ "json, CUDA 13 tree, one (fake) device" "$drv" FAKE_CUDA_DEVICES=1 CUDALOAD_SOURCES=caller -- \
    --json --root "$fx/toolkit-cu13-wheel"
case_ "text, truncated ELF skipped, no device" "$drv" FAKE_CUDA_DEVICES=0 CUDALOAD_SOURCES=caller -- \
    --root "$fx/bad/truncated/lib" --root "$fx/toolkit-cu13-wheel"
case_ "json, CUDA 11.8 driver, CUDA 12 wheels" "$drv" FAKE_CUDA_VERSION=11080 CUDALOAD_SOURCES=caller -- \
    --json --root "$site12"
case_ "text, no driver, hostile root" CUDALOAD_DRIVER_PATH=/nonexistent/libcuda.so.1 CUDALOAD_SOURCES=caller -- \
    --root "$hostile" --root "$fx/bad/text/lib"
case_ "usage error" -- --no-such-option
echo "[==========] $((pass + fail)) test(s) run."
echo "[  PASSED  ] $pass test(s)."
if [ "$fail" -gt 0 ]; then echo "[  FAILED  ] $fail test(s)."; exit 1; fi
