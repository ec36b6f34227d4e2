# SPDX-License-Identifier: Apache-2.0
"""python -m cudaload [--json] [--no-selftest]: the probe's report (docs/probe.md, from the
probe's own C code), with this interpreter's package directories as the search roots. Exit
code: the probe's (EXIT_CODES below, also in --help). Its messages and fix lines name this
interpreter's commands (`<python> -m pip install`, `python -m cudaload`), never a program the
package does not install.

For extension builders (cudaload as a build requirement, docs/python.md), as pybind11's and
nanobind's: --cflags (-I<include>), --libs[=STUB,...] (the stub archives named, then
libcudaload.a, -ldl -lpthread), --cmakedir, --pkgconfigdir, --cmake-stubs (the file that switches
an unchanged CMake project's CUDA libraries to the stubs: CMAKE_PROJECT_TOP_LEVEL_INCLUDES),
--cmake-toolkit (the file that points enable_language(CUDA) and FindCUDAToolkit at --cuda-root's
toolkit), --cuda-root[=DIR] (a CUDA_HOME made of pip's CUDA wheels, or the system toolkit) and
--parts[=NAME,...] (nvcc, cudadevrt, libdevice, ...: one "name path" line each). They answer in
the order asked: the flags on one line (each word quoted for a POSIX shell where it needs it),
each path on a line of its own, as it is: never quoted, since CMake's execute_process and the
shell's "$(...)" take the line as it is and would keep a quote in the path (only a path holding
a newline, which no line can carry, is refused: exit 1); exit 0 (1 when --cuda-root has no
toolkit or a part named is missing, with why on stderr; 4 for an unknown stub or part name, or an
empty value: --parts=, --libs=cudart,, --cuda-root=); the report is not made.

python -m cudaload env [NAME...]: prints one line, the LD_LIBRARY_PATH that makes another program
load the copies this interpreter's search chooses for those libraries and their dependencies
(every library it finds, with no name): their directories, then the current LD_LIBRARY_PATH's
entries; nothing else. `export LD_LIBRARY_PATH="$(python -m cudaload env cublas)"`. Exit 1 when a
named library is found nowhere (why and the fix on stderr), 4 for a name the catalogue lacks."""
import argparse
import os
import shlex
import sys

import cudaload


EXIT_CODES = """exit codes (the probe's, docs/probe.md):
  0  the driver, the CUDA runtime and cuBLAS are usable and, with a GPU, the
     self-test passed (builder options: every answer given)
  1  a required library (cudart, cublasLt, cuBLAS) is missing or unusable
     (builder options: --cuda-root found no toolkit, or a part named is missing)
  2  the libraries are there, but there is no NVIDIA driver or no device
  3  the self-test failed
  4  usage error: an unknown argument, an empty value, a relative --cuda-root,
     an unknown stub or part name, or an invalid CUDALOAD_* value

also: python -m cudaload env [NAME...] prints the LD_LIBRARY_PATH that gives another
program the copies chosen here (python -m cudaload env --help)"""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # a usage error exits 4, as the probe's does
        self.print_usage(sys.stderr)
        self.exit(4, "%s: error: %s\n" % (self.prog, message))


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["env"]:
        return _env(argv[1:])
    ap = _Parser(prog="python -m cudaload", description="Report which CUDA runtime and cuBLAS cudaload finds "
                 "from this interpreter, and why (docs/probe.md).", epilog=EXIT_CODES,
                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", action="store_true", help="the report as JSON (schema: docs/probe.md)")
    ap.add_argument("--no-selftest", action="store_true", help="skip the SAXPY/SGEMM self-test on the GPU")
    build = ap.add_argument_group("for extension builders (answered in the order asked)")
    build.add_argument("--cflags", action=_Asked, nargs=0, help="the compiler flags: -I<dir of cudaload.h>")
    # const=None for the options with an optional value: the option alone (None) is told from an
    # empty value (--libs=), which _check_values refuses
    build.add_argument("--libs", action=_Asked, nargs="?", const=None, metavar="STUB,...",
                       help="the link flags: the stub archives named (cudart, cufft, ...; docs/stubs.md), "
                            "libcudaload.a, -ldl -lpthread")
    build.add_argument("--cmakedir", action=_Asked, nargs=0, help="the directory of cudaloadConfig.cmake")
    build.add_argument("--pkgconfigdir", action=_Asked, nargs=0, help="the directory of cudaload.pc")
    build.add_argument("--cmake-stubs", action=_Asked, nargs=0,
                       help="the file that switches a CMake project's CUDA libraries to the stubs "
                            "(-DCMAKE_PROJECT_TOP_LEVEL_INCLUDES=<it>; docs/stubs.md)")
    build.add_argument("--cmake-toolkit", action=_Asked, nargs=0,
                       help="the file that makes enable_language(CUDA) and find_package(CUDAToolkit) use "
                            "--cuda-root's toolkit (-DCMAKE_PROJECT_TOP_LEVEL_INCLUDES=<it>; docs/toolkit.md)")
    build.add_argument("--cuda-root", action=_Asked, nargs="?", const=None, metavar="DIR",
                       help="a CUDA toolkit root for nvcc, CMake and Makefiles (CUDA_HOME): a system toolkit as "
                            "it is, or pip's CUDA wheels as a tree of links made in DIR (default: a cache dir)")
    build.add_argument("--parts", action=_Asked, nargs="?", const=None, metavar="NAME,...",
                       help="where the toolkit's programs, static archives and bitcode are (nvcc, cudadevrt, "
                            "libdevice, ...): one line each, path or 'not found'; exit 1 if a named one is missing")
    args = ap.parse_args(argv)
    if getattr(args, "asked", None):
        _check_values(ap, args.asked)
        return _build_flags(ap, args.asked)
    status = cudaload._cudaload._status_name(cudaload._init_status)[0]
    if status in ("CUDALOAD_ERROR_INVALID_ARGUMENT", "CUDALOAD_ERROR_INVALID_OPTION"):
        # a bad CUDALOAD_* value: nothing was searched; as cudaload-probe, the reason on stderr, exit 4
        sys.stderr.write("%s: %s\n" % (ap.prog, cudaload._init_message))
        return 4
    color = not args.json and sys.stdout.isatty() and "NO_COLOR" not in os.environ
    text, code = cudaload.report(json=args.json, selftest=not args.no_selftest, color=color)
    sys.stdout.write(text + ("\n" if args.json else ""))
    sys.stdout.flush()
    return code


def _env(argv):
    ap = _Parser(prog="python -m cudaload env", description="Print the LD_LIBRARY_PATH that makes another "
                 "program load the copies cudaload chooses from this interpreter (docs/python.md).")
    ap.add_argument("names", nargs="*", metavar="NAME",
                    help="catalogue libraries (cublas, cudnn, ...); with their dependencies. Default: every one found")
    args = ap.parse_args(argv)
    try:
        dirs = cudaload.library_dirs(*args.names)
    except ValueError as e:
        sys.stderr.write("%s: %s\n" % (ap.prog, e))
        return 4
    except cudaload.CudaLoadError as e:
        sys.stderr.write("%s: %s\n" % (ap.prog, e))
        return 1
    # the current entries after ours, each once: ours must win, the rest keeps working
    rest = [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d and d not in dirs]
    sys.stdout.write(":".join(dirs + rest) + "\n")
    return 0 if dirs or args.names else 1


class _Asked(argparse.Action):
    """Records each builder's question, with its value, in the order given."""

    def __call__(self, parser, namespace, values, option_string=None):
        asked = getattr(namespace, "asked", None) or []
        asked.append((self.dest, values))
        namespace.asked = asked


def _check_values(ap, asked):
    """An empty value (--cuda-root=, --parts=) or an empty name in a list (--libs=cudart,) is a
    usage error (exit 4), as cudaload's probe has it: never quietly the option's default."""
    for what, value in asked:
        opt = "--" + what.replace("_", "-")
        if value == "":
            ap.error("%s=: an empty value (give %s alone for its default)" % (opt, opt))
        if value is not None and what in ("libs", "parts") and "" in [n.strip() for n in value.split(",")]:
            ap.error("%s=%s: an empty name in the list" % (opt, value))


class _Unprintable(Exception):
    """A path with a newline: no line can carry it."""


def _path(path):
    """A path as printed on its line: as it is (CMake's execute_process and the shell's "$(...)"
    read the line as it is; a quote would stay part of the path)."""
    if "\n" in path:
        raise _Unprintable("%r: a path with a newline cannot be printed as a line" % path)
    return path


def _build_flags(ap, asked):
    try:
        return _build_lines(ap, asked)
    except _Unprintable as e:
        sys.stderr.write("%s: %s\n" % (ap.prog, e))
        return 1


def _build_lines(ap, asked):
    code = 0
    lines = []       # each path on a line of its own; the flags together on one
    flags = None     # the index in lines of the flags' line
    for what, value in asked:
        if what in ("cmakedir", "pkgconfigdir", "cmake_stubs", "cmake_toolkit"):
            path = {"cmakedir": cudaload.get_cmake_dir, "pkgconfigdir": cudaload.get_pkgconfig_dir,
                    "cmake_stubs": cudaload.get_cmake_stubs, "cmake_toolkit": cudaload.get_cmake_toolkit}[what]()
            lines.append([_path(path)])
            continue
        if what == "cuda_root":
            if value and not os.path.isabs(value):
                sys.stderr.write("%s: --cuda-root %s: give an absolute path\n" % (ap.prog, value))
                return 4
            try:
                lines.append([_path(cudaload.cuda_root(value or None))])
            except cudaload.CudaLoadError as e:
                sys.stderr.write("%s: %s\n" % (ap.prog, e))
                code = 1
            except ValueError as e:  # a DIR that is not empty and not a tree cudaload made
                sys.stderr.write("%s: %s\n" % (ap.prog, e))
                return 4
            continue
        if what == "parts":
            names = [n.strip() for n in value.split(",")] if value else cudaload.parts()  # --parts alone: all
            for n in names:
                try:
                    p = cudaload.part(n)
                except ValueError as e:
                    sys.stderr.write("%s: %s\n" % (ap.prog, e))
                    return 4
                if p["path"]:
                    lines.append([p["name"], _path(p["path"])])
                else:
                    lines.append([p["name"], "not found: pip install " + (" or ".join(p["pip_packages"]) or "(none: a full CUDA toolkit has it)")])
                    code = 1 if value else code
            continue
        if flags is None:
            flags = len(lines)
            lines.append([])
        if what == "cflags":
            lines[flags].append("-I" + shlex.quote(cudaload.get_include()))
            continue
        libdir = cudaload.get_library_dir()
        stubs = [s.strip() for s in value.split(",")] if value else []  # --libs alone: no stub
        have = sorted(f[len("libcudaload-"):-2] for f in os.listdir(libdir) if f.startswith("libcudaload-") and f.endswith(".a"))
        unknown = [s for s in stubs if s not in have]
        if unknown:
            sys.stderr.write("%s: no stub for %s (the stubs: %s)\n" % (ap.prog, ", ".join(unknown), ", ".join(have)))
            return 4
        # a stub before the archive it calls into (static link order)
        archives = ["libcudaload-%s.a" % s for s in stubs] + ["libcudaload.a"]
        lines[flags] += [shlex.quote(os.path.join(libdir, a)) for a in archives] + ["-ldl", "-lpthread"]
    sys.stdout.write("".join(" ".join(line) + "\n" for line in lines))
    return code


if __name__ == "__main__":
    sys.exit(main())
