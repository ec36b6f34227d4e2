"""python -m cudaload [--json] [--no-selftest]: the probe's report (the same as
cudaload-probe's, from the same C code), with this interpreter's package directories as the
search roots. Exit code: the probe's (0 ok, 1 library missing, 2 no driver or no device,
3 self-test failed, 4 usage error: an unknown argument, or an invalid CUDALOAD_* value, whose
reason goes to stderr as cudaload-probe writes it). Its fix lines name this interpreter's
commands (`<python> -m pip install`, `python -m cudaload`).

For extension builders (cudaload as a build requirement, docs/python.md), as pybind11's and
nanobind's: --cflags (-I<include>), --libs[=STUB,...] (the stub archives named, then
libcudaload.a, -ldl -lpthread), --cmakedir, --pkgconfigdir, --cmake-stubs (the file that switches
an unchanged CMake project's CUDA libraries to the stubs: CMAKE_PROJECT_TOP_LEVEL_INCLUDES). They
answer in the order asked: the flags on one line, each path on a line of its own; exit 0 (4 for
an unknown stub name); the report is not made."""
import argparse
import os
import shlex
import sys

import cudaload


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # a usage error exits 4, as cudaload-probe's does
        self.print_usage(sys.stderr)
        self.exit(4, "%s: error: %s\n" % (self.prog, message))


def main(argv=None):
    ap = _Parser(prog="python -m cudaload", description="Report which CUDA runtime and cuBLAS cudaload finds "
                 "from this interpreter, and why (docs/probe.md).")
    ap.add_argument("--json", action="store_true", help="the report as JSON (schema: docs/probe.md)")
    ap.add_argument("--no-selftest", action="store_true", help="skip the SAXPY/SGEMM self-test on the GPU")
    build = ap.add_argument_group("for extension builders (answered in the order asked)")
    build.add_argument("--cflags", action=_Asked, nargs=0, help="the compiler flags: -I<dir of cudaload.h>")
    build.add_argument("--libs", action=_Asked, nargs="?", const="", metavar="STUB,...",
                       help="the link flags: the stub archives named (cudart, cufft, ...; docs/stubs.md), "
                            "libcudaload.a, -ldl -lpthread")
    build.add_argument("--cmakedir", action=_Asked, nargs=0, help="the directory of cudaloadConfig.cmake")
    build.add_argument("--pkgconfigdir", action=_Asked, nargs=0, help="the directory of cudaload.pc")
    build.add_argument("--cmake-stubs", action=_Asked, nargs=0,
                       help="the file that switches a CMake project's CUDA libraries to the stubs "
                            "(-DCMAKE_PROJECT_TOP_LEVEL_INCLUDES=<it>; docs/stubs.md)")
    args = ap.parse_args(argv)
    if getattr(args, "asked", None):
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


class _Asked(argparse.Action):
    """Records each builder's question, with its value, in the order given."""

    def __call__(self, parser, namespace, values, option_string=None):
        asked = getattr(namespace, "asked", None) or []
        asked.append((self.dest, values))
        namespace.asked = asked


def _build_flags(ap, asked):
    lines = []       # each path on a line of its own; the flags together on one
    flags = None     # the index in lines of the flags' line
    for what, value in asked:
        if what in ("cmakedir", "pkgconfigdir", "cmake_stubs"):
            path = {"cmakedir": cudaload.get_cmake_dir, "pkgconfigdir": cudaload.get_pkgconfig_dir,
                    "cmake_stubs": cudaload.get_cmake_stubs}[what]()
            lines.append([shlex.quote(path)])
            continue
        if flags is None:
            flags = len(lines)
            lines.append([])
        if what == "cflags":
            lines[flags].append("-I" + shlex.quote(cudaload.get_include()))
            continue
        libdir = cudaload.get_library_dir()
        stubs = [s.strip() for s in value.split(",") if s.strip()]
        have = sorted(f[len("libcudaload-"):-2] for f in os.listdir(libdir) if f.startswith("libcudaload-") and f.endswith(".a"))
        unknown = [s for s in stubs if s not in have]
        if unknown:
            sys.stderr.write("%s: no stub for %s (the stubs: %s)\n" % (ap.prog, ", ".join(unknown), ", ".join(have)))
            return 4
        # a stub before the archive it calls into (static link order)
        archives = ["libcudaload-%s.a" % s for s in stubs] + ["libcudaload.a"]
        lines[flags] += [shlex.quote(os.path.join(libdir, a)) for a in archives] + ["-ldl", "-lpthread"]
    sys.stdout.write("".join(" ".join(line) + "\n" for line in lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
