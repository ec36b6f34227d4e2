#!/usr/bin/env bash
# The GPU kernel tests under compute-sanitizer memcheck (smaller cases: CUDALOAD_TEST_QUICK).
# Device-memory leak checking is off: libcudaload keeps one cuBLAS handle per device for the
# life of the process, by design. Run by `make check-gpu`; skipped with the reason when compute-sanitizer or a GPU is missing.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=$here/build/tests/gpu_kernels
san=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null || true)
if [ -z "$san" ]; then echo "sanitize.sh: skipped: compute-sanitizer not found"; exit 77; fi
if ! ldconfig -p | grep -q 'libcuda.so.1 '; then echo "sanitize.sh: skipped: no NVIDIA driver"; exit 77; fi
CUDALOAD_TEST_QUICK=1 exec "$san" --tool memcheck --error-exitcode 1 "$bin"
