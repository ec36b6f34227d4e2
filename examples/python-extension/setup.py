"""Build saxpy_demo._saxpy against an installed libcudaload, through pkg-config.

    make install PREFIX=$PREFIX                       # in the libcudaload checkout
    PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig pip wheel .  # here

The compile and link flags come from `pkg-config --cflags --libs --static cudaload`, with
one change: -lcudaload becomes -l:libcudaload.a, so the archive is embedded in the module
(nothing of libcudaload is needed at run time), and -Wl,--exclude-libs,ALL keeps its
cudaload_* symbols local to the module (docs/api.md, "Embedding the archive in a shared
object"). No CUDA library is on the link line and no rpath is set: libcudaload dlopens
libcudart and libcublas at run time from wherever they are.

src/_kernels.cu (a kernel launched with <<<>>>, a cuFFT plan) is compiled by nvcc with
-cudart none and linked with libcudaload's stubs instead of -lcudart -lcufft: the static
archives libcudaload-cufft.a and libcudaload-cudart.a from the same libdir, before
libcudaload.a. They define every function of the CUDA runtime and cuFFT (nvcc's registration
entry points included) and forward to the copies libcudaload finds from the roots the module
passes at import: still no CUDA DT_NEEDED and no rpath. nvcc comes from $NVCC, else
$CUDA_HOME/bin/nvcc, else PATH; the build stops with a message without one.

cudaload_tables.h also includes cuda.h, cuda_runtime_api.h and cublas_v2.h: the pc file's
Cflags name the CUDA include directory libcudaload was built against (its variable
cudaincludedir); CUDA_INC overrides it (the toolkit's include, or the nvidia wheels'
site-packages/nvidia/cu13/include). They are needed at build time only.
"""

import os
import shlex
import shutil
import subprocess

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

PKG_CONFIG = os.environ.get("PKG_CONFIG", "pkg-config")


def pkg_config(*args):
    cmd = [PKG_CONFIG, *args, "cudaload"]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True)
    except FileNotFoundError:
        raise SystemExit(f"saxpy_demo: {PKG_CONFIG} not found: install pkg-config (or set PKG_CONFIG)")
    if r.returncode != 0:
        raise SystemExit(
            f"saxpy_demo: '{' '.join(cmd)}' failed: {r.stderr.strip()}\n"
            "install libcudaload first (make install PREFIX=...) and set "
            "PKG_CONFIG_PATH=<prefix>/lib/pkgconfig"
        )
    return shlex.split(r.stdout)


cflags = pkg_config("--cflags")
libs = pkg_config("--libs", "--static")  # -L<libdir> -lcudaload -ldl -lpthread
if "-lcudaload" not in libs:
    raise SystemExit(f"saxpy_demo: pkg-config --libs --static cudaload gave no -lcudaload: {libs}")
# -lcudaload would take libcudaload.so when both are installed: name the archive, after the
# stubs of what _kernels.cu calls (the CUDA runtime, cuFFT), which need it.
STUBS = ["-l:libcudaload-cufft.a", "-l:libcudaload-cudart.a"]
libs = [x for f in libs for x in ([*STUBS, "-l:libcudaload.a"] if f == "-lcudaload" else [f])]
libdir = pkg_config("--variable=libdir")[0]
missing_stubs = [a for a in ("libcudaload-cufft.a", "libcudaload-cudart.a") if not os.path.isfile(os.path.join(libdir, a))]
if missing_stubs:
    raise SystemExit(f"saxpy_demo: {', '.join(missing_stubs)} not in {libdir}: install a libcudaload with the stubs (0.3)")

cuda_inc = os.environ.get("CUDA_INC") or pkg_config("--variable=cudaincludedir")[0]
missing = [h for h in ("cuda.h", "cuda_runtime_api.h", "cublas_v2.h", "cufft.h") if not os.path.isfile(os.path.join(cuda_inc, h))]
if missing:
    raise SystemExit(
        f"saxpy_demo: {', '.join(missing)} not in {cuda_inc}: set CUDA_INC to a directory with the CUDA "
        "headers (the toolkit's include, or site-packages/nvidia/cu13/include); cudaload_tables.h needs them"
    )



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


class build_ext_no_rpath(build_ext):
    def build_extensions(self):
        self.compiler.linker_so = without_rpath(self.compiler.linker_so)
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
        super().build_extensions()


setup(
    cmdclass={"build_ext": build_ext_no_rpath},
    ext_modules=[
        Extension(
            "saxpy_demo._saxpy",
            sources=["src/_saxpy.c"],
            depends=["src/_kernels.h", "src/_kernels.cu"],
            extra_compile_args=["-std=c11", "-Wall", "-Wextra", "-fvisibility=hidden", *cflags, "-isystem", cuda_inc],
            # --as-needed first: -ldl/-lpthread are empty on glibc >= 2.34 and then leave no DT_NEEDED
            extra_link_args=["-Wl,--as-needed", *libs, "-Wl,--exclude-libs,ALL"],
        )
    ],
)
