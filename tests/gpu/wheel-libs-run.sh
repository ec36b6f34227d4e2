#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/gpu/wheel-libs-run.sh OUTDIR -- the stubs of the libraries that ship as wheels of their own,
# on a GPU machine, with the torch venv's cuDNN, NCCL, CUPTI, cuSPARSELt and nvSHMEM and the
# driver's NVML:
#   build: make all (their stubs need the pinned wheels' headers: CUDALOAD_WHEEL_CACHE, default
#     .wheelfiles/ in the checkout, filled by `tools/wheel_files.py headers` where there is network
#     and carried here); tests/gpu/wheel_libs.c as a program and as a module, on the stubs, and
#     bench/bench_wheel_stubs.c twice (on the stubs; linked to the libraries);
#   needed: no NVIDIA library in their DT_NEEDED;
#   alone-<lib>: each library's check in a process of its own (wheel_libs.c: a cuDNN convolution
#     against a CPU reference, an NCCL all-reduce over every GPU, an NVML query, cuSPARSELt's
#     handle and a structured descriptor, CUPTI's activity records of a kernel); alone-all: all in
#     one process, then one copy of each library mapped;
#   alone-nvshmem: nvSHMEM's host library in a C program (wheel_libs.c: one PE, unique-id init
#     through nvshmemx_hostlib_init_attr, the symmetric heap, finalize), a step of its own;
#   nvshmem-device: tests/stubs/stub_nvshmem.cu built as nvSHMEM's docs say (nvcc -rdc, the venv's
#     headers and libnvshmem_device.a) on the host library's stub: nvshmemx_init_attr through the
#     archive and the stub (one PE, unique id), a kernel put through the collective launch, the
#     transport the library chose against the stub's copy the archive read, finalize;
#   torch: the module loaded into a python that imported torch and ran a convolution (torch's
#     cuDNN loaded first): the same checks, and one copy of each library in /proc/self/maps;
#   bench: per call, stub against direct (PROCS processes each, interleaved): the ratio.
set -u
out=${1:?usage: wheel-libs-run.sh OUTDIR}
mkdir -p "$out"
cd "$(dirname "$0")/../.."
top=$PWD
. tests/gpu/run-lib.sh
venv=$(dirname "$(dirname "$PY")")
export VIRTUAL_ENV=$venv
ids="cudnn nccl nvml cupti cusparselt nvshmemhost"
inc=$(for s in $ids; do echo "-isystem $CUDALOAD_WHEEL_CACHE/$(sed -n "s/^STUB_WHEEL_$s := //p" stubs/gen/stubs.mk)"; done | tr '\n' ' ')
stubs=$(for s in $ids cudart; do echo "build/stubs/libcudaload-$s.a"; done | tr '\n' ' ')
nvml_dir=$(dirname "$(ldconfig -p | awk '/libnvidia-ml.so.1 / {print $NF; exit}')")
libdirs="$site/nvidia/cudnn/lib $site/nvidia/nccl/lib $site/nvidia/cusparselt/lib $libdir $nvml_dir"
nvshmem_dir=$site/nvidia/nvshmem
{
    nvidia-smi --query-gpu=name,driver_version --format=csv
    echo "venv: $venv"; "$PY" -m pip list 2>/dev/null | grep -Ei 'nvidia-(cudnn|nccl|cuda-cupti|cusparselt|nvshmem)|^torch '
    ls "$nvshmem_dir/lib" 2>&1
    echo "libdirs: $libdirs"
} > "$out/env.txt" 2>&1
cat "$out/env.txt"
step build make -j16 all
mkdir -p build/tests
step wheel-libs-build sh -c "cc -std=c11 -O1 -g $inc -Iinclude -isystem /usr/local/cuda/include -o build/tests/wheel_libs \
  tests/gpu/wheel_libs.c $stubs build/libcudaload.a -ldl -lpthread -lm && \
  cc -std=c11 -O1 -g -shared -fPIC -fvisibility=hidden -DWHEEL_LIBS_MODULE $inc -Iinclude -isystem /usr/local/cuda/include \
  -o build/tests/wheel_libs_module.so tests/gpu/wheel_libs.c $stubs build/libcudaload.a -ldl -lpthread -lm -Wl,--exclude-libs,ALL && \
  cc -std=c11 -O2 -g $inc -Ibench -isystem /usr/local/cuda/include -o build/tests/bench_wheel_stubs bench/bench_wheel_stubs.c $stubs build/libcudaload.a -ldl -lpthread && \
  cc -std=c11 -O2 -g $inc -Ibench -isystem /usr/local/cuda/include -o build/tests/bench_wheel_direct bench/bench_wheel_stubs.c \
  $(for d in $libdirs; do printf -- '-L%s -Wl,-rpath,%s ' "$d" "$d"; done) \
  -l:libcudnn.so.9 -l:libnccl.so.2 -l:libnvidia-ml.so.1 -l:libcupti.so.13 -l:libcusparseLt.so.0"
step needed sh -c "readelf -d build/tests/wheel_libs build/tests/wheel_libs_module.so build/tests/bench_wheel_stubs | grep -E 'NEEDED|File:'; \
  ! readelf -d build/tests/wheel_libs build/tests/wheel_libs_module.so build/tests/bench_wheel_stubs | grep NEEDED | grep -E 'libcu|libnv|libnccl'"
for m in nvml cusparselt cupti nccl cudnn all; do
    step "alone-$m" build/tests/wheel_libs "$m"
done
# nvSHMEM (the venv's release, whichever it is; the stub is of the pinned 3.8.0): steps of their own
step alone-nvshmem build/tests/wheel_libs nvshmem
sm=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
step nvshmem-device-build sh -c "nvcc -rdc=true -arch=sm_${sm:-90} -isystem $nvshmem_dir/include -Iinclude \
  -o build/tests/stub_nvshmem tests/stubs/stub_nvshmem.cu -L$nvshmem_dir/lib -lnvshmem_device \
  build/stubs/libcudaload-nvshmemhost.a build/libcudaload.a -ldl -lpthread && \
  readelf -d build/tests/stub_nvshmem | grep NEEDED && ! readelf -d build/tests/stub_nvshmem | grep NEEDED | grep nvshmem" &&
    step nvshmem-device build/tests/stub_nvshmem init
step torch "$PY" - "$top/build/tests/wheel_libs_module.so" <<'PYEOF'
import ctypes, sys, torch
x = torch.randn(2, 3, 17, 19, device="cuda")
w = torch.randn(4, 3, 3, 3, device="cuda")
y = torch.nn.functional.conv2d(x, w, padding=1)
torch.cuda.synchronize()
print("torch", torch.__version__, "cudnn", torch.backends.cudnn.version(), "conv", tuple(y.shape))
m = ctypes.CDLL(sys.argv[1])
m.wheel_libs_run.argtypes = [ctypes.c_char_p]
rc = 0
for mode in ("cudnn", "nccl", "nvml", "cusparselt", "cupti", "maps"):
    r = m.wheel_libs_run(mode.encode())
    print("mode", mode, "rc", r, flush=True)
    rc |= r
sys.exit(rc)
PYEOF
# per call: PROCS processes of each build, interleaved; the median over processes of each median
procs=${PROCS:-11}
rm -f "$out/bench-s.txt" "$out/bench-d.txt"
for i in $(seq 1 "$procs"); do
    build/tests/bench_wheel_stubs >> "$out/bench-s.txt" || fails=$((fails + 1))
    build/tests/bench_wheel_direct >> "$out/bench-d.txt" || fails=$((fails + 1))
done
awk 'function med(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
                                    return a[int((n + 1) / 2)] }
     FNR == NR { s[$1, ++ns[$1]] = $2; next } { d[$1, ++nd[$1]] = $2; names[$1] = 1 }
     END { printf "%-24s %10s %10s %7s\n", "call", "stub_ns", "direct_ns", "ratio"
           for (k in names) { delete a; for (i = 1; i <= ns[k]; i++) a[i] = s[k, i]; ms = med(a, ns[k])
                              delete a; for (i = 1; i <= nd[k]; i++) a[i] = d[k, i]; md = med(a, nd[k])
                              printf "%-24s %10.2f %10.2f %7.3f\n", k, ms, md, ms / md } }' \
    "$out/bench-s.txt" "$out/bench-d.txt" | tee "$out/bench.txt"
echo "fails=$fails" | tee "$out/summary.txt"
exit $((fails > 0))
