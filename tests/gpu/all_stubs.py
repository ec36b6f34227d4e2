# SPDX-License-Identifier: Apache-2.0
"""tests/gpu/all_stubs.py MODULE [--torch] -- every shared stub in one process, on the GPU.

Loads MODULE (tests/gpu/all_stubs_module.c, linked with every shared stub and libcudaload.so.0)
with ctypes and runs its checks: real work through each library, including cuBLAS -> cuBLASLt
and cuSOLVER -> cuBLAS. With --torch, torch is imported and runs a matmul first: the stubs
then load torch's copies, and /proc/self/maps must show one copy of each library.

The script runs itself again under LD_DEBUG=bindings and fails when any NVIDIA library's
symbol reference was bound to a libcudaload object (the stubs must only capture the calls of
the code that linked them), or when no cuBLAS -> cuBLASLt binding was seen at all (the check
could not have failed). Exit 0 when everything holds.
"""
import ctypes
import glob
import os
import re
import subprocess
import sys
import tempfile


def run_checks(module, with_torch):
    if with_torch:
        import torch

        a = torch.rand(256, 256, device="cuda")
        (a @ a).sum().item()
        print("torch", torch.__version__, "cuda", torch.version.cuda)
    # RTLD_GLOBAL: the stubs in the global scope, as in a program linked with them (the harder
    # case: a module loaded RTLD_LOCAL keeps them out of NVIDIA's reach by itself)
    m = ctypes.CDLL(module, mode=ctypes.RTLD_GLOBAL)
    m.all_stubs_run.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    buf = ctypes.create_string_buffer(1 << 16)
    failed = m.all_stubs_run(buf, len(buf))
    print(buf.value.decode(), end="")
    copies = {}
    for line in open("/proc/self/maps"):
        path = line.split()[-1] if len(line.split()) >= 6 else ""
        base = os.path.basename(path)
        for lib in ("libcudart", "libcublasLt", "libcublas", "libcusolver", "libcusparse", "libcufft", "libcurand",
                    "libnvrtc", "libnvJitLink"):
            if re.match(re.escape(lib) + r"\.so\.\d+$", base):
                copies.setdefault(lib, set()).add(os.path.realpath(path))
    for lib, paths in sorted(copies.items()):
        print("mapped %-12s %s" % (lib, " ".join(sorted(paths))))
        if len(paths) != 1:
            print("FAIL %s: %d copies mapped" % (lib, len(paths)))
            failed += 1
    return failed


def check_bindings(logdir):
    """NVIDIA libraries' references bound to libcudaload objects, and the cuBLAS -> cuBLASLt count."""
    bad, cublas_to_lt = [], 0
    pat = re.compile(r"binding file (\S+) \[\d+\] to (\S+) \[\d+\]: \S+ symbol `([^']+)'")
    for f in glob.glob(os.path.join(logdir, "bind.*")):
        for line in open(f, errors="replace"):
            m = pat.search(line)
            if not m:
                continue
            src, dst, sym = (os.path.basename(m.group(1)), os.path.basename(m.group(2)), m.group(3))
            if not re.match(r"lib(cu|nv|nccl)", src) or src.startswith("libcudaload"):
                continue
            if dst.startswith("libcudaload"):
                bad.append("%s -> %s: %s" % (src, dst, sym))
            if src.startswith("libcublas.so") and dst.startswith("libcublasLt.so"):
                cublas_to_lt += 1
    return bad, cublas_to_lt


def main():
    module = os.path.abspath(sys.argv[1])
    with_torch = "--torch" in sys.argv
    if os.environ.get("ALL_STUBS_CHILD"):
        sys.exit(1 if run_checks(module, with_torch) else 0)
    with tempfile.TemporaryDirectory() as logdir:
        env = dict(os.environ, ALL_STUBS_CHILD="1", LD_DEBUG="bindings", LD_DEBUG_OUTPUT=os.path.join(logdir, "bind"))
        try:
            rc = subprocess.run([sys.executable] + sys.argv, env=env, timeout=120).returncode
        except subprocess.TimeoutExpired:
            print("FAIL: the checks did not finish in 120 s (a hang: a stub called back into by NVIDIA's own code?)")
            sys.exit(1)
        bad, cublas_to_lt = check_bindings(logdir)
    print("cuBLAS -> cuBLASLt bindings seen: %d" % cublas_to_lt)
    for b in bad[:20]:
        print("FAIL binding into a stub:", b)
    ok = rc == 0 and not bad and cublas_to_lt > 0
    print("all stubs%s: %s (checks rc %d, %d bindings into stubs)" % (" beside torch" if with_torch else "", "ok" if ok else "FAIL", rc,
                                                                     len(bad)))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
