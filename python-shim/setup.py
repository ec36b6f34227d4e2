# SPDX-License-Identifier: Apache-2.0
"""Builds cudaload._cudaload: libcudaload compiled from its sources and linked in statically.

The library comes from, in order: $CUDALOAD_SOURCE_DIR; the repository this directory sits
in (python-shim/.. with Makefile and libcudaload/: `pip install ./python-shim`); the copy an
sdist carries in libcudaload-src/ (made by `python -m build --sdist`). It is built with the
repository's own Makefile (`make B=<build dir> <build dir>/libcudaload.a`): nvcc, when the
Makefile finds one ($CUDA_HOME/bin/nvcc or PATH), compiles the SAXPY/SGEMM kernels into it.

Environment:
  CUDA_INC / CUDA_HOME   the CUDA headers (cuda.h, cuda_runtime_api.h, cublas_v2.h), build time
                         only; default $CUDA_HOME/include, /usr/local/cuda/include, then the CUDA
                         wheels' nvidia/cu13/include on sys.path (which the build backend,
                         backend/cudaload_backend.py, asks for on a machine without a toolkit)
  CUDALOAD_NVCC          nvcc to use; set it empty to build without the bundled kernels
                         (SAXPY/SGEMM then run on cuBLAS)
  CUDALOAD_KERNEL_ARCHS  the SASS architectures to build, e.g. "80 90" (default: the Makefile's,
                         one per family of GPUs this nvcc has; the PTX is the newest's)
  CUDALOAD_SOURCE_DIR    the libcudaload source tree to build from
  CUDALOAD_BUILD_BASE    setuptools' build directory (default: build)
  CUDALOAD_ZIG           0: build with the system's C compiler instead of zig (below)
  MAKE, CC               as usual; CC set: that compiler, not zig

The C compiler: zig's (the ziglang package, a build requirement) targeting glibc 2.28, for the
library, the archives and the module, unless CC is set or CUDALOAD_ZIG=0: the wheel then needs
only glibc 2.28 (manylinux_2_28: RHEL/Rocky 8, Ubuntu 20.04) whatever the build machine's is,
with no container. zig compiles against that glibc's headers and links against stubs of its
libraries (dlopen from libdl.so.2, stat through libc_nonshared's wrapper), which an explicit
.symver list cannot do (stat has no symbol before 2.33) and an older sysroot would need
installing. Without ziglang the system compiler is used and the wheel needs its glibc
(docs/python.md, "Why zig").
"""
import os
import platform
import re
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.sdist import sdist

HERE = Path(__file__).resolve().parent
VENDORED = HERE / "libcudaload-src"
# What the build needs of the repository (the sdist copies exactly this): the library, and the
# probe's report (tools/probe_*.c, .h: gather, diagnose, self-test, render), which the
# extension compiles in.
# The stubs and the CMake/pkg-config templates: the wheel ships them for extension builders
# (make dev-tree).
LIB_FILES = ["Makefile", "mk", "include", "libcudaload", "kernels", "stubs", "cmake", "tools/cuda-pins.txt",
             "tools/wheel_files.py", "tools/api/wheel-libs.txt", "tools/api/wheel-older.txt",
             "tools/api/wheel-files.sha256", "tools/image_sum.c"]
LIMITED_API = sys.version_info >= (3, 11)  # abi3: Py_buffer is in the limited API from 3.11


def progress(msg):
    """One line of the build's progress, on stderr: pip shows it with -v (docs/python.md)."""
    print("cudaload: " + msg, file=sys.stderr, flush=True)


def library_root():
    cands = [Path(os.environ["CUDALOAD_SOURCE_DIR"])] if os.environ.get("CUDALOAD_SOURCE_DIR") else []
    cands += [HERE.parent, VENDORED]
    for c in cands:
        if (c / "libcudaload" / "cudaload.c").is_file() and (c / "Makefile").is_file() and (c / "tools").is_dir():
            return c.resolve()
    sys.exit("cudaload: the libcudaload sources were not found (looked in: %s). Build from a checkout of the "
             "repository (pip install ./python-shim) or from its sdist, or set CUDALOAD_SOURCE_DIR."
             % ", ".join(map(str, cands)))


def library_version(root):
    """The package's version: libcudaload's, from include/cudaload.h's CUDALOAD_VERSION_MAJOR,
    _MINOR and _PATCH, the one place it is set (pyproject.toml: dynamic); CUDALOAD_VERSION_STRING
    must agree (the Makefile checks the same)."""
    text = (root / "include" / "cudaload.h").read_text()
    parts = [re.search(r"^#define CUDALOAD_VERSION_%s (\d+)$" % p, text, re.M) for p in ("MAJOR", "MINOR", "PATCH")]
    string = re.search(r'^#define CUDALOAD_VERSION_STRING "([^"]*)"$', text, re.M)
    if not all(parts) or not string or string.group(1) != ".".join(m.group(1) for m in parts):
        sys.exit("cudaload: %s: CUDALOAD_VERSION_MAJOR, _MINOR, _PATCH and CUDALOAD_VERSION_STRING are missing or "
                 "disagree" % (root / "include" / "cudaload.h"))
    return string.group(1)


def probe_files(root, suffix):
    """The probe's report, tools/probe_*.c (or .h), as the Makefile's PROBE_SRC takes them."""
    return sorted((root / "tools").glob("probe_*" + suffix))


# The oldest glibc the wheel runs on (manylinux_2_28), when zig compiles it.
ZIG_GLIBC = "2.28"
ZIG_LD_UNSUPPORTED = ("-Wl,-Bsymbolic-functions",)


def zig_cc():
    """zig's C compiler targeting ZIG_GLIBC, as an argv; None when CC is set, CUDALOAD_ZIG=0, or the
    ziglang package is missing (then the system's compiler builds it, for its own glibc)."""
    if os.environ.get("CC") or os.environ.get("CUDALOAD_ZIG") == "0":
        return None
    try:
        import ziglang
    except ImportError:
        progress("ziglang is not installed: building with the system's C compiler; the wheel needs this "
                 "machine's glibc (pip install ziglang for a manylinux_2_28 one)")
        return None
    zig = os.path.join(os.path.dirname(ziglang.__file__), "zig" + (".exe" if os.name == "nt" else ""))
    arch = {"amd64": "x86_64", "arm64": "aarch64"}.get(platform.machine().lower(), platform.machine())
    return [zig, "cc", "-target", "%s-linux-gnu.%s" % (arch, ZIG_GLIBC)]


def multiarch_python_include(tmp):
    """The system headers an older Python.h pulls in from /usr/include, which zig does not search
    (its own glibc headers stand in for the system's): Debian's <x86_64-linux-gnu/python3.9/
    pyconfig.h>, and <crypt.h> (libxcrypt's, not glibc's) before Python 3.11. A directory holding
    links to just those gives them without the system's libc headers; empty when none is needed."""
    d = tmp.resolve() / "python-include-extras"
    links = []
    multiarch = sysconfig.get_config_var("MULTIARCH")
    if multiarch and os.path.isdir(os.path.join("/usr/include", multiarch)):
        links.append((multiarch, os.path.join("/usr/include", multiarch)))
    if sysconfig.get_config_var("HAVE_CRYPT_H") and sys.version_info < (3, 11) and os.path.isfile("/usr/include/crypt.h"):
        links.append(("crypt.h", "/usr/include/crypt.h"))
    if not links:
        return []
    d.mkdir(parents=True, exist_ok=True)
    for name, target in links:
        if not (d / name).exists():
            (d / name).symlink_to(target)
    return [str(d)]


def pip_cuda13(rel):
    """rel under nvidia/cu13 of the CUDA wheels in this interpreter's package directories (the
    build environment the backend filled, on a machine without a toolkit), or None."""
    for d in sys.path:
        p = os.path.join(d or ".", "nvidia", "cu13", rel)
        if os.path.isabs(p) and os.path.exists(p):
            return p
    return None


def nvcc():
    if "CUDALOAD_NVCC" in os.environ:
        return os.environ["CUDALOAD_NVCC"] or None
    home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    if os.access(os.path.join(home, "bin", "nvcc"), os.X_OK):
        return os.path.join(home, "bin", "nvcc")
    # no toolkit: the pip wheels' nvcc, in place. It only compiles the kernels to a fatbin (no
    # link, which needs a toolkit's lib64): its profile finds cicc and the headers beside it.
    return shutil.which("nvcc") or pip_cuda13("bin/nvcc")


def cuda_include():
    cands = [os.environ.get("CUDA_INC")] if os.environ.get("CUDA_INC") else []
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            cands.append(os.path.join(os.environ[var], "include"))
    cands.append("/usr/local/cuda/include")
    # no toolkit: the headers of the CUDA wheels the backend put in the build environment
    if pip_cuda13("include"):
        cands.append(pip_cuda13("include"))
    for c in cands:
        if all(os.path.isfile(os.path.join(c, h)) for h in ("cuda.h", "cuda_runtime_api.h", "cublas_v2.h")):
            return c
    sys.exit("cudaload: the CUDA headers (cuda.h, cuda_runtime_api.h, cublas_v2.h) were not found in %s: set "
             "CUDA_INC to a directory that has them (a toolkit's include, or site-packages/nvidia/cu13/include). "
             "They are needed at build time only; nothing links a CUDA library." % ", ".join(cands))


class BuildExt(build_ext):
    def build_extension(self, ext):
        root = library_root()
        inc = cuda_include()
        libdir = Path(self.build_temp).resolve() / "libcudaload"
        # For extension builders (cudaload as a build requirement, docs/python.md): the package
        # carries the headers, libcudaload.a and the stub archives (their API hidden:
        # HIDDEN_API=1), pkg-config modules and the CMake package, under cudaload/include and
        # cudaload/lib (get_include(), get_library_dir()). The module links the same archive.
        devdir = Path(self.build_lib).resolve() / "cudaload"
        # each function and object in its own section, so the module's link (--gc-sections) drops
        # what it does not reach: 3.5 KB of the module's 1 MB (compressed), which the kernels need
        cmd = [os.environ.get("MAKE", "make"), "-C", str(root), "-j%d" % (os.cpu_count() or 2), "B=%s" % libdir,
               "CUDA_INC=%s" % inc, "CFLAGS=-O2 -ffunction-sections -fdata-sections", "HIDDEN_API=1", "DEVDIR=%s" % devdir, "dev-tree"]
        nv = nvcc()
        cmd.insert(-1, "NVCC=%s" % (nv or ""))
        # The kernels once in the wheel: the module reads them at run time from the dev tree's
        # libcudaload.a beside it (lib/libcudaload.a: make's kernels_image_file.o, linked before
        # the archive, checks it is this build's), where a static link needs them anyway. A build
        # whose module does not land beside that tree (an in-place build) embeds them instead.
        kernels_file = bool(nv) and Path(self.get_ext_fullpath(ext.name)).resolve().parent == devdir
        image_obj = libdir / "obj" / "kernels_image_file.o"
        if kernels_file:
            cmd.append(str(image_obj))
        # the kernels' architectures: the Makefile's (one SASS per family, PTX of the newest),
        # unless CUDALOAD_KERNEL_ARCHS names them
        archs = os.environ.get("CUDALOAD_KERNEL_ARCHS", "").split()
        if nv and archs:
            cmd.insert(-1, "KERNEL_ARCHS=%s" % " ".join(archs))
            cmd.insert(-1, "KERNEL_PTX=%s" % archs[-1])
        zig = zig_cc()
        if os.environ.get("CC") or zig:
            cmd.insert(-1, "CC=%s" % (os.environ.get("CC") or " ".join(zig)))
        t = time.time()
        progress("[1/2] libcudaload from %s: libcudaload.a, the stub archives, and the headers, pkg-config and "
                 "CMake files for extension builders (make dev-tree); kernels: %s; C compiler: %s" % (
                     root, "nvcc %s for %s" % (nv, "sm_" + ", sm_".join(archs) if archs else "one SASS per family") if nv else "none (no nvcc: SAXPY/SGEMM on cuBLAS)",
                     "zig, for glibc %s" % ZIG_GLIBC if zig else os.environ.get("CC") or "the system's cc"))
        progress("building libcudaload: %s" % " ".join(cmd))
        subprocess.check_call(cmd)
        progress("[1/2] libcudaload: %s (%.1f MB), %.0f s" % (libdir / "libcudaload.a", (libdir / "libcudaload.a").stat().st_size / 1e6,
                                                             time.time() - t))
        # the Windows platform file is the mingw build's (mk/windows.mk); the sdist still carries it
        ext.sources = list(ext.sources) + [str(f) for f in probe_files(root, ".c") if f.name != "probe_platform_windows.c"]
        ext.include_dirs = [str(root / "include"), str(root / "tools")] + list(ext.include_dirs)
        ext.extra_compile_args = list(ext.extra_compile_args) + ["-isystem", inc]
        ext.extra_objects = ([str(image_obj)] if kernels_file else []) + [str(libdir / "libcudaload.a")]
        # build_ext skips an extension newer than its sources and depends: the archive (which
        # make just rebuilt when the library or the kernels changed) must count, or a build
        # dir that is kept (CUDALOAD_BUILD_BASE) would ship the previous kernels
        ext.depends = list(ext.depends) + ext.extra_objects + [str(f) for f in probe_files(root, ".h")]
        # no RUNPATH: some Pythons' LDSHARED carries -Wl,-rpath to their own lib dir
        self.compiler.linker_so = [a for a in self.compiler.linker_so if not a.startswith(("-Wl,-rpath", "-Wl,-R"))]
        if zig:  # the module compiled and linked by zig too, the interpreter's flags kept
            # (less the GNU ld flags zig's linker rejects: Debian's Python links with
            # -Bsymbolic-functions, an optimisation a module exporting one function does not need)
            self.compiler.set_executables(compiler_so=zig + self.compiler.compiler_so[1:],
                                          linker_so=zig + [a for a in self.compiler.linker_so[1:]
                                                           if a not in ZIG_LD_UNSUPPORTED])
            ext.include_dirs = list(ext.include_dirs) + multiarch_python_include(Path(self.build_temp))
        t = time.time()
        progress("[2/2] the module %s: %d C files, linked with libcudaload.a ..." % (ext.name, len(ext.sources)))
        super().build_extension(ext)
        out = Path(self.get_ext_fullpath(ext.name))
        progress("[2/2] the module: %s (%.1f MB), %.0f s" % (out.name, out.stat().st_size / 1e6 if out.is_file() else 0,
                                                            time.time() - t))


class SDist(sdist):
    """The sdist carries the library sources (libcudaload-src/), so it builds anywhere."""

    def make_release_tree(self, base_dir, files):
        super().make_release_tree(base_dir, files)
        root = library_root()
        dest = Path(base_dir) / VENDORED.name
        for f in LIB_FILES + [str(p.relative_to(root)) for p in probe_files(root, ".c") + probe_files(root, ".h")]:
            src = root / f
            if src.is_dir():
                shutil.copytree(src, dest / f, dirs_exist_ok=True)
            else:
                (dest / f).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dest / f)


ext = Extension(
    "cudaload._cudaload",
    sources=["src/cudaload/_cudaload.c", "src/cudaload/_arrays.c", "src/cudaload/_status.c"],
    # build_ext rebuilds the module when its header changes; the sdist carries it (setuptools
    # adds the depends that lie in the project)
    depends=["src/cudaload/_arrays.h", "src/cudaload/_status.h"],
    define_macros=[("Py_LIMITED_API", "0x030B0000")] if LIMITED_API else [],
    py_limited_api=LIMITED_API,
    extra_compile_args=["-std=gnu11", "-fvisibility=hidden", "-Wall", "-Wextra", "-O2"],
    # libcudaload.a's API is hidden in its objects (make HIDDEN_API=1): the module exports
    # PyInit__cudaload only, with no --exclude-libs (which zig's linker does not take). -s: no
    # debug info (the wheel stays small; the kernels' fatbin is most of it); --gc-sections: what
    # the module does not reach of the archive's sections is left out.
    extra_link_args=["-s", "-Wl,--gc-sections"],
    libraries=["dl", "pthread", "m"],
)

build_base = os.environ.get("CUDALOAD_BUILD_BASE")
setup(
    version=library_version(library_root()),
    ext_modules=[ext],
    cmdclass={"build_ext": BuildExt, "sdist": SDist},
    options={**({"bdist_wheel": {"py_limited_api": "cp311"}} if LIMITED_API else {}),
             **({"build": {"build_base": build_base}} if build_base else {})},
)
