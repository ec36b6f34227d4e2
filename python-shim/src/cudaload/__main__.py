"""python -m cudaload [--json] [--no-selftest]: the probe's report (the same as
cudaload-probe's, from the same C code), with this interpreter's package directories as the
search roots. Exit code: the probe's (0 ok, 1 library missing, 2 no driver or no device,
3 self-test failed, 4 usage error: an unknown argument, or an invalid CUDALOAD_* value, whose
reason goes to stderr as cudaload-probe writes it). Its fix lines name this interpreter's
commands (`<python> -m pip install`, `python -m cudaload`)."""
import argparse
import os
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
    args = ap.parse_args(argv)
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


if __name__ == "__main__":
    sys.exit(main())
