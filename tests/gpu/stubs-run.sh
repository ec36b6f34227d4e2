#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/gpu/stubs-run.sh OUTDIR -- the stubs on a GPU machine (docs/stubs.md), in one go:
#   build: make all (the stubs), the stub test programs, the stub benchmarks, an install of
#     libcudaload and examples/c/vecadd through it;
#   stub_prog: an nvcc program (-cudart none) whose kernel, registered before main, runs and
#     gives the right values, the runtime found through CUDALOAD_PATH (the torch venv's wheels);
#   vecadd: examples/c's plain CUDA program (kernel + cuBLAS), unchanged, on the stubs;
#   torch: after `import torch`, a stub-linked module loaded into the same python: one copy of
#     libcudart in /proc/self/maps, the same runtime version as torch's;
#   all-stubs: every shared stub linked into one module, loaded alone and after torch
#     (tests/gpu/all_stubs.py): NVIDIA's inter-library calls never bound to a stub;
#   all-shared, shared-before-torch, shared-bindings: every shared stub in one program (cuBLAS
#     created on the GPU), and in python before torch (tests/gpu/shared_stubs_torch.py): torch's
#     matmul and linear right, and LD_DEBUG=bindings shows libcublas -> libcublasLt and no
#     NVIDIA library bound to a libcudaload object;
#   unversioned, unversioned-bindings: the shared stubs of NCCL, NVML, cuSPARSELt and cuFile (their
#     run-time files' version hidden: docs/stubs.md), where the wheels' headers made them, in a
#     program linked to them (tests/stubs/stub_unversioned.c; every binding made at load): NVML's
#     and NCCL's answers, the driver's libnvidia-ml.so.1 and the venv's libnccl.so.2 bind their
#     own exports to themselves, no NVIDIA library to a libcudaload object;
#   cudaload-package, example: the cudaload package built from python-shim into build/cudaload-target
#     (the example's build requirement), examples/python-extension built (its nvcc kernel and cuFFT call on the stubs) and
#     imported after torch: one copy of each library mapped, results equal to torch's
#     (tests/gpu/example_after_torch.py);
#   samples: NVIDIA cuda-samples vectorAdd, simpleCUBLAS, simpleCUFFT built unchanged on the
#     stubs (tests/gpu/samples.sh run), when their sources were fetched into build/samples/src
#     (tests/gpu/samples.sh fetch, where there is network; carried to the GPU machine);
#   bench: bench/run-stubs.sh (stub vs direct, per call); STUBS_BENCH=0 leaves it out.
# Each step's log goes to OUTDIR; the summary to OUTDIR/summary.txt. cmocka may come from
# .devdeps/ (for make check-gpu, run by device-run.sh, not here).
set -u
out=${1:?usage: stubs-run.sh OUTDIR}
mkdir -p "$out"
cd "$(dirname "$0")/../.."
top=$PWD
. tests/gpu/run-lib.sh
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
{
    nvidia-smi --query-gpu=name,driver_version --format=csv
    echo "site: $site"; ls "$libdir"
    $NVCC --version | tail -1
} > "$out/env.txt" 2>&1
step build make -j16 all build/tests/stub_prog build/tests/stub_module_a.so build/tests/stub_all_shared bench-bins BENCH_CUDART_DIR="$libdir"
step install make -s install PREFIX="$top/build/stub-prefix"
step vecadd-build env PKG_CONFIG_PATH="$top/build/stub-prefix/lib/pkgconfig" make -s -C examples/c vecadd NVCC="$NVCC"
step needed sh -c "readelf -d build/tests/stub_prog examples/c/vecadd build/bench/bench_stubs | grep -E 'NEEDED|File:'; \
  ! readelf -d build/tests/stub_prog examples/c/vecadd build/bench/bench_stubs | grep NEEDED | grep -E 'libcu[bdfrs]|libnv'"
step stub_prog env CUDALOAD_PATH="$libdir" sh -c 'build/tests/stub_prog && build/tests/stub_prog | grep -qx kernel_ok=256'
step vecadd env CUDALOAD_PATH="$libdir" examples/c/vecadd
step torch env STUB_MODULE="$top/build/tests/stub_module_a.so" "$PY" -c '
import ctypes, os, torch
x = torch.ones(4, device="cuda"); torch.cuda.synchronize()
m = ctypes.CDLL(os.environ["STUB_MODULE"])
m.module_cudart_path.restype = ctypes.c_char_p
v = m.module_runtime_version()
maps = [l.split()[-1] for l in open("/proc/self/maps") if "libcudart.so" in l]
copies = sorted(set(os.path.realpath(p) for p in maps))
print("torch", torch.__version__, "cuda", torch.version.cuda)
print("module runtime version", v, "from", m.module_cudart_path().decode())
print("libcudart copies mapped:", copies)
tv = torch.version.cuda.split(".")
assert v == int(tv[0]) * 1000 + int(tv[1]) * 10, (v, torch.version.cuda)
assert len(copies) == 1 and os.path.realpath(m.module_cudart_path().decode()) == copies[0], copies
print("ok: one libcudart, shared with torch")
'
# every shared stub in one module (tests/gpu/all_stubs_module.c), loaded RTLD_GLOBAL alone and after
# torch: real work through each library, NVIDIA's own inter-library calls (cuBLAS -> cuBLASLt,
# cuSOLVER -> cuBLAS) bound to NVIDIA's libraries and never to a stub (LD_DEBUG=bindings), no hang,
# one copy of each library mapped (tests/gpu/all_stubs.py)
step all-stubs-build sh -c "cc -std=c11 -O1 -g -shared -fPIC -fvisibility=hidden -isystem /usr/local/cuda/include \
  -o build/tests/all_stubs_module.so tests/gpu/all_stubs_module.c -Wl,--no-as-needed -L'$top/build/stub-prefix/lib' \
  $(ls build/stubs/libcudaload-*.so | sed 's|.*/lib\(.*\)\.so$|-l\1|' | tr '\n' ' ') -lcudaload \
  -Wl,-rpath,'$top/build/stub-prefix/lib' -lm && \
  ! readelf -d build/tests/all_stubs_module.so | grep NEEDED | grep -v libcudaload | grep -E 'libcu[bdfrs]|libnv'"
step all-stubs env CUDALOAD_PATH="$libdir" "$PY" tests/gpu/all_stubs.py build/tests/all_stubs_module.so
step all-stubs-torch "$PY" tests/gpu/all_stubs.py build/tests/all_stubs_module.so --torch
# every shared stub in one program, and in python before torch: NVIDIA's calls between its own
# libraries never bind to a stub (docs/stubs.md, "Only the program's calls")
step all-shared env CUDALOAD_PATH="$libdir" sh -c 'build/tests/stub_all_shared | tee /dev/stderr | grep -qx blas_create=0'
rm -rf "$out/bindings" && mkdir -p "$out/bindings"
step shared-before-torch env LD_DEBUG=bindings LD_DEBUG_OUTPUT="$out/bindings/b" "$PY" tests/gpu/shared_stubs_torch.py "$top/build"
step shared-bindings sh -c "grep -h 'binding file' '$out'/bindings/b.* | grep -c 'libcublas\.so[^ ]* \[[0-9]*\] to [^ ]*libcublasLt' && \
  ! grep -h 'binding file' '$out'/bindings/b.* | grep -v 'binding file [^ ]*/libcudaload' | \\
  grep -E 'binding file [^ ]*/lib(cu|nv|nccl)[^/ ]* \[[0-9]+\] to [^ ]*libcudaload'"
rm -rf "$out/bindings"
# the libraries that version none of their exports: their own calls to them never reach the stubs
if [ -e build/stubs/libcudaload-nvml.so.0 ]; then
    rm -rf "$out/ubind" && mkdir -p "$out/ubind"
    step unversioned-build make -s build/tests/stub_unversioned
    step unversioned env VIRTUAL_ENV="$(dirname "$(dirname "$PY")")" LD_BIND_NOW=1 LD_DEBUG=bindings LD_DEBUG_OUTPUT="$out/ubind/b" \
      sh -c 'o=$(build/tests/stub_unversioned); echo "$o"; echo "$o" | grep -qx nvml_init=0 && echo "$o" | grep -qx nccl_get_version=0'
    step unversioned-bindings sh -c "grep -h 'binding file' '$out'/ubind/b.* | grep -c 'libnvidia-ml\.so[^ ]* \[[0-9]*\] to [^ ]*libnvidia-ml\.so[^ ]* \[[0-9]*\]: normal symbol .nvml' && \
      grep -h 'binding file' '$out'/ubind/b.* | grep -c 'libnccl\.so[^ ]* \[[0-9]*\] to [^ ]*libnccl\.so[^ ]* \[[0-9]*\]: normal symbol .nccl' && \
      ! grep -h 'binding file' '$out'/ubind/b.* | grep -v 'binding file [^ ]*/libcudaload' | \
      grep -E 'binding file [^ ]*/lib(cu|nv|nccl)[^/ ]* \[[0-9]+\] to [^ ]*libcudaload'"
    rm -rf "$out/ubind"
fi
# the example extension (a kernel and cuFFT through the stubs), built here and imported after torch;
# no network here: it builds without isolation, with the cudaload package built from python-shim
# and installed into a directory on PYTHONPATH (its build requirement), as tests/python/device-run.sh does
step cudaload-package sh -c "rm -rf build/cudaload-target && CUDALOAD_BUILD_BASE='$top/build/python/setuptools' \
  '$PY' -m pip install --no-build-isolation --no-deps --no-index --disable-pip-version-check \
  --target build/cudaload-target ./python-shim"
step example-build sh -c "rm -rf build/example-whl build/example-src build/example-target && cp -r examples/python-extension build/example-src && \
  PYTHONPATH='$top/build/cudaload-target' \
  PKG_CONFIG_PATH='$top/build/stub-prefix/lib/pkgconfig' CUDA_HOME=/usr/local/cuda '$PY' -m pip wheel --no-deps \
  --no-build-isolation --no-index --disable-pip-version-check -w build/example-whl build/example-src && \
  '$PY' -m pip install -q --no-deps --no-index --disable-pip-version-check --target build/example-target build/example-whl/*.whl"
step example-after-torch env PYTHONPATH="$top/build/example-target:$top/build/cudaload-target" "$PY" tests/gpu/example_after_torch.py
if [ -d build/samples/src ]; then
    step samples env CUDALOAD_PATH="$libdir" tests/gpu/samples.sh run build/samples/src "$out/samples"
fi
[ "${STUBS_BENCH:-1}" = 0 ] || step bench env STUB_BENCH_LIBDIR="$libdir" bench/run-stubs.sh --out "$out/bench-stubs.txt"
echo "failed steps: $fails" | tee "$out/summary.txt"
grep -h "^rc=\|^===" "$out"/*.txt >> "$out/summary.txt" 2>/dev/null
exit $((fails > 0))
