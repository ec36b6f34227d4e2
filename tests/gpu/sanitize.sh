#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The GPU kernel tests (gpu_kernels, and gpu_multi, which skips without two GPUs) under
# compute-sanitizer memcheck (smaller cases: CUDALOAD_TEST_QUICK), failed driver calls reported
# except in the one test whose first launches are refused by design.
# Device-memory leak checking is off: libcudaload keeps its idle cuBLAS handles per device for the
# life of the process, by design. Run by `make check-gpu`; skipped with the reason when compute-sanitizer or a GPU is missing.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
san=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null || true)
if [ -z "$san" ]; then echo "sanitize.sh: skipped: compute-sanitizer not found"; exit 77; fi
if ! ldconfig -p | grep -q 'libcuda.so.1 '; then echo "sanitize.sh: skipped: no NVIDIA driver"; exit 77; fi
# Every failed driver call is reported (CUDALOAD_TEST_API_ERRORS: the tests that provoke one skip).
for bin in gpu_kernels gpu_multi; do
    echo "sanitize.sh: $bin"
    CUDALOAD_TEST_QUICK=1 CUDALOAD_TEST_API_ERRORS=1 "$san" --tool memcheck --error-exitcode 1 "$here/build/tests/$bin" || exit 1
done
# Calls made while another context is current: the library's first launch there is refused by the
# driver by design (it launches without asking which context is current, then enters its own), so
# that test runs apart with failed API calls not reported; memory errors still are.
echo "sanitize.sh: gpu_kernels, calls under another context"
CUDALOAD_TEST_QUICK=1 CUDALOAD_TEST_OTHER_CONTEXT_ONLY=1 "$san" --tool memcheck --report-api-errors no --error-exitcode 1 \
    "$here/build/tests/gpu_kernels" || exit 1
