# SPDX-License-Identifier: Apache-2.0
"""Build saxpy_demo._saxpy with libcudaload from the `cudaload` package (a build requirement).

    pip wheel .        # pyproject.toml's build requirements bring setuptools and cudaload

libcudaload comes from the cudaload wheel pip puts in the isolated build environment:
cudaload.get_include() (cudaload.h, cudaload_tables.h) and cudaload.get_library_dir()
(libcudaload.a and the stubs' archives, their API hidden), as numpy.get_include() is used
(docs/python.md, "Build your own extension with pip"). The archives are embedded in the module:
nothing of libcudaload is needed at run time, and the module exports only PyInit__saxpy. No CUDA
library is on the link line and no rpath is set: libcudaload dlopens libcudart, libcublas and
libcufft at run time from wherever they are.

src/_kernels.cu (a kernel launched with <<<>>>, a cuFFT plan) is compiled by nvcc with
-cudart none and linked with libcudaload's stubs instead of -lcudart -lcufft: the archives
libcudaload-cufft.a and libcudaload-cudart.a, before libcudaload.a. They define every function
of the CUDA runtime and cuFFT (nvcc's registration entry points included) and forward to the
copies libcudaload finds from the roots the module passes at import. nvcc comes from $NVCC,
else $CUDA_HOME/bin/nvcc, else PATH; the build stops with a message without one.

cudaload_tables.h includes cuda.h, cuda_runtime_api.h and cublas_v2.h, and _kernels.cu cufft.h:
they come from nvcc's toolkit (<nvcc's dir>/../include); CUDA_INC overrides it (a directory
with those headers, e.g. site-packages/nvidia/cu13/include). They are needed at build time only.
"""

import os
import shutil
import subprocess

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

try:
    import cudaload
except ImportError:
    raise SystemExit("saxpy_demo: the cudaload package is missing from the build environment: build with "
                     "`pip wheel .` (pyproject.toml requires it), or `pip install cudaload` first for "
                     "--no-build-isolation")

CUDALOAD_INC = cudaload.get_include()
CUDALOAD_LIB = cudaload.get_library_dir()
# the stubs of what _kernels.cu calls (cuFFT, the CUDA runtime), before the archive they call into
ARCHIVES = [os.path.join(CUDALOAD_LIB, a) for a in ("libcudaload-cufft.a", "libcudaload-cudart.a", "libcudaload.a")]
missing = [a for a in ARCHIVES if not os.path.isfile(a)]
if missing:
    raise SystemExit(f"saxpy_demo: {', '.join(missing)} missing: this needs cudaload >= 0.4 (its wheel carries them)")


def without_rpath(argv):
    """argv less any -Wl,-rpath / -Wl,-R: some interpreters (pyenv's, built with
    LDFLAGS=-Wl,-rpath,<its lib>) put one in LDSHARED, and every extension they build
    would carry a RUNPATH to the build machine's Python. This one needs none."""
    out = []
    for a in argv:
        if a.startswith("-Wl,"):
            parts = a[4:].split(",")
            keep, skip = [], False
            for p in parts:
                if skip:
                    skip = False
                elif p in ("-rpath", "-R", "--rpath"):
                    skip = True
                elif not p.startswith(("-rpath=", "--rpath=")):
                    keep.append(p)
            if keep:
                out.append("-Wl," + ",".join(keep))
        else:
            out.append(a)
    return out


def nvcc():
    for cand in (os.environ.get("NVCC"), os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "nvcc"),
                 shutil.which("nvcc")):
        if cand and os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    raise SystemExit("saxpy_demo: nvcc not found (set NVCC or CUDA_HOME): src/_kernels.cu needs it")


# SASS for Turing, Ampere, Hopper, and PTX for Turing (the driver compiles it for newer GPUs).
NVCC_ARCH = ["-gencode", "arch=compute_75,code=[sm_75,compute_75]", "-gencode", "arch=compute_80,code=sm_80",
             "-gencode", "arch=compute_90,code=sm_90"]


def cuda_include():
    inc = os.environ.get("CUDA_INC") or os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(nvcc()))), "include")
    missing = [h for h in ("cuda.h", "cuda_runtime_api.h", "cublas_v2.h", "cufft.h") if not os.path.isfile(os.path.join(inc, h))]
    if missing:
        raise SystemExit(
            f"saxpy_demo: {', '.join(missing)} not in {inc}: set CUDA_INC to a directory with the CUDA headers "
            "(the toolkit's include, or site-packages/nvidia/cu13/include); cudaload_tables.h needs them"
        )
    return inc


class build_ext_no_rpath(build_ext):
    def build_extensions(self):
        self.compiler.linker_so = without_rpath(self.compiler.linker_so)
        cuda_inc = cuda_include()  # here, not at import: egg_info and sdist need no toolkit
        # _kernels.cu: -cudart none (the stubs are the runtime); hidden symbols (the module exports
        # PyInit only); no C++ runtime (no exceptions, no thread-safe static guards), so the C
        # extension links without libstdc++.
        os.makedirs(self.build_temp, exist_ok=True)
        obj = os.path.join(self.build_temp, "_kernels.o")
        subprocess.run([nvcc(), "-cudart", "none", "-O2", *NVCC_ARCH, "-Xcompiler",
                        "-fPIC,-fvisibility=hidden,-fno-exceptions,-fno-threadsafe-statics", "-isystem", cuda_inc,
                        "-c", "src/_kernels.cu", "-o", obj], check=True)
        for ext in self.extensions:
            ext.extra_objects = [obj, *ext.extra_objects]
            ext.extra_compile_args = [*ext.extra_compile_args, "-isystem", cuda_inc]
        super().build_extensions()


setup(
    cmdclass={"build_ext": build_ext_no_rpath},
    ext_modules=[
        Extension(
            "saxpy_demo._saxpy",
            sources=["src/_saxpy.c"],
            depends=["src/_kernels.h", "src/_kernels.cu"],
            extra_compile_args=["-std=c11", "-Wall", "-Wextra", "-fvisibility=hidden", "-I" + CUDALOAD_INC],
            # --as-needed first: -ldl/-lpthread are empty on glibc >= 2.34 and then leave no DT_NEEDED.
            # The archives' API is hidden already: the module exports PyInit__saxpy alone.
            # --strip-debug: the archives' and nvcc's debug info (half the wheel) stays out.
            extra_link_args=["-Wl,--as-needed", *ARCHIVES, "-ldl", "-lpthread", "-Wl,--strip-debug"],
        )
    ],
)
