#!/usr/bin/env bash
# The GPU kernel tests (gpu_kernels, and gpu_multi, which skips without two GPUs) under
# compute-sanitizer memcheck (smaller cases: CUDALOAD_TEST_QUICK).
# Device-memory leak checking is off: libcudaload keeps its idle cuBLAS handles per device for the
# life of the process, by design. Run by `make check-gpu`; skipped with the reason when compute-sanitizer or a GPU is missing.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
san=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null || true)
if [ -z "$san" ]; then echo "sanitize.sh: skipped: compute-sanitizer not found"; exit 77; fi
if ! ldconfig -p | grep -q 'libcuda.so.1 '; then echo "sanitize.sh: skipped: no NVIDIA driver"; exit 77; fi
for bin in gpu_kernels gpu_multi; do
    echo "sanitize.sh: $bin"
    CUDALOAD_TEST_QUICK=1 "$san" --tool memcheck --error-exitcode 1 "$here/build/tests/$bin" || exit 1
done
