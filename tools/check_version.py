#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""check_version.py -- every place that names libcudaload's version agrees with the one place it
is set: include/cudaload.h's CUDALOAD_VERSION_MAJOR, _MINOR, _PATCH and CUDALOAD_VERSION_STRING.

Checked (FILE:LINE: what, for each place that disagrees):
  header       CUDALOAD_VERSION_STRING is "MAJOR.MINOR.PATCH" of the three numbers
  derived      the places that take the version from the header name none of their own: the
               Makefile's VERSION (read from the header), python-shim/pyproject.toml (dynamic =
               ["version"]: setup.py reads the header), the package's __version__ (the module's)
  requirement  a requirement on the current release series, in every file: pip's
               cudaload>=X.Y,<X.Y+1, CMake's find_package(cudaload X.Y ...) (the version file takes
               the same minor only while the major is 0), meson's dependency('cudaload...',
               version: '>=X.Y'), and "cudaload >= X.Y" in words
  shown        the version shown as the current one: "libcudaload X.Y.Z" (the first line of the
               probe's and the examples' output), "cudaload_version": "X.Y.Z" (the probe's JSON),
               cudaload-X.Y.Z (the wheel's, sdist's and .dist-info's names), libcudaload.so.X.Y.Z

Not read: CHANGELOG.md (the history), docs/gpu-run/ (the record of runs, as they printed),
tools/api/ (NVIDIA's versions), LICENSE, and the lines between a line holding
"check_version: off" and one holding "check_version: on" (a run quoted as it printed, in a comment
around it). Files: those git tracks or would add (DIR not a git work tree: every file under it).

    tools/check_version.py [--root DIR]

Exit 0 when every place agrees, 1 otherwise. `make check-generate` runs it.
"""
import argparse
import os
import re
import subprocess
import sys

HEADER = "include/cudaload.h"
SKIP_PREFIXES = ("docs/gpu-run/", "tools/api/", "build/")
SKIP_FILES = {"CHANGELOG.md", "LICENSE", "python-shim/LICENSE"}
TEXT_SUFFIXES = (".c", ".h", ".cu", ".cpp", ".S", ".inc", ".py", ".sh", ".cmake", ".in", ".mk", ".md", ".txt",
                 ".toml", ".cfg", ".build", ".json", ".map")
TEXT_NAMES = {"Makefile", "MANIFEST.in", "CMakeLists.txt", "meson.build"}


def header_version(root):
    """(string, (major, minor, patch)) from include/cudaload.h; raises ValueError when a macro is
    missing or the string is not the three numbers."""
    with open(os.path.join(root, HEADER), encoding="utf-8") as f:
        text = f.read()
    nums = []
    for part in ("MAJOR", "MINOR", "PATCH"):
        m = re.search(r"^#define CUDALOAD_VERSION_%s (\d+)\s*$" % part, text, re.M)
        if not m:
            raise ValueError("%s: no #define CUDALOAD_VERSION_%s <number>" % (HEADER, part))
        nums.append(int(m.group(1)))
    m = re.search(r'^#define CUDALOAD_VERSION_STRING "([^"]*)"\s*$', text, re.M)
    if not m:
        raise ValueError('%s: no #define CUDALOAD_VERSION_STRING "..."' % HEADER)
    if m.group(1) != "%d.%d.%d" % tuple(nums):
        raise ValueError('%s: CUDALOAD_VERSION_STRING "%s" is not CUDALOAD_VERSION_MAJOR.MINOR.PATCH (%d.%d.%d)'
                         % ((HEADER, m.group(1)) + tuple(nums)))
    return m.group(1), tuple(nums)


def files(root):
    try:
        top = subprocess.run(["git", "-C", root, "rev-parse", "--show-toplevel"], capture_output=True, text=True)
        if top.returncode == 0 and os.path.realpath(top.stdout.strip()) == os.path.realpath(root):
            out = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                                 capture_output=True, check=True).stdout.decode()
            names = sorted({n for n in out.split("\0") if n})
            return [n for n in names if os.path.isfile(os.path.join(root, n))]
    except OSError:
        pass
    found = []
    for d, dirs, fs in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in (".git", "build"))
        found += [os.path.relpath(os.path.join(d, f), root) for f in sorted(fs)]
    return found


def wanted(rel):
    if rel in SKIP_FILES or rel.startswith(SKIP_PREFIXES):
        return False
    base = os.path.basename(rel)
    return base in TEXT_NAMES or base.endswith(TEXT_SUFFIXES)


# (pattern, what its groups must be: "series" (X.Y), "next" (X.Y+1), "full" (X.Y.Z), what it is)
PLACES = [
    (re.compile(r"\bcudaload\s*>=\s*(\d+\.\d+)(?:\.0)?\s*,\s*<\s*(\d+\.\d+)"), ("series", "next"),
     "a pip requirement on the release series"),
    (re.compile(r"find_package\(\s*cudaload\s+(\d+\.\d+(?:\.\d+)?)\b"), ("series",),
     "find_package's version (the version file takes the same minor only while the major is 0)"),
    (re.compile(r"dependency\(\s*'cudaload[\w-]*'\s*,\s*version\s*:\s*'>=\s*(\d+\.\d+(?:\.\d+)?)'"), ("series",),
     "meson's version requirement"),
    (re.compile(r"\bcudaload\s+>=\s+(\d+\.\d+(?:\.\d+)?)\b"), ("series",), "a requirement in words"),
    (re.compile(r"\blibcudaload (\d+\.\d+\.\d+)\b"), ("full",), "the version shown as current"),
    (re.compile(r'"cudaload_version":\s*"(\d+\.\d+\.\d+)"'), ("full",), "the probe's JSON's version"),
    (re.compile(r"(?<![\w.-])cudaload-(\d+\.\d+\.\d+)(?![\w])"), ("full",), "a wheel's, sdist's or .dist-info's name"),
    (re.compile(r"\blibcudaload\.so\.(\d+\.\d+\.\d+)\b"), ("full",), "the shared library's file name"),
]

# (file, pattern a line must not match, why): the places that derive the version name none of their own
DERIVED = [
    ("Makefile", re.compile(r"^VERSION\s*:?=\s*\d"), "the Makefile reads VERSION from %s" % HEADER),
    ("python-shim/pyproject.toml", re.compile(r"^version\s*="),
     "the package's version is dynamic (setup.py reads %s)" % HEADER),
    ("python-shim/src/cudaload/__init__.py", re.compile(r"^__version__\s*=\s*['\"]"),
     "__version__ is the module's LIBCUDALOAD_VERSION"),
]


def check(root):
    """The findings, as 'FILE:LINE: what' lines; [] when every place agrees."""
    try:
        version, (major, minor, _) = header_version(root)
    except (OSError, ValueError) as e:
        return ["%s" % e]
    expect = {"series": "%d.%d" % (major, minor), "next": "%d.%d" % (major, minor + 1), "full": version}
    findings = []
    for rel, bad, why in DERIVED:
        path = os.path.join(root, rel)
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8") as f:
            for i, line in enumerate(f, 1):
                if bad.search(line):
                    findings.append("%s:%d: a version of its own (%s): %s" % (rel, i, line.strip(), why))
    pyproject = os.path.join(root, "python-shim/pyproject.toml")
    if os.path.isfile(pyproject):
        with open(pyproject, encoding="utf-8") as f:
            if not re.search(r'^dynamic\s*=\s*\[[^\]]*"version"', f.read(), re.M):
                findings.append('python-shim/pyproject.toml: no dynamic = ["version"]: the package\'s version must '
                                'come from setup.py, which reads %s' % HEADER)
    for rel in files(root):
        if not wanted(rel):
            continue
        try:
            with open(os.path.join(root, rel), encoding="utf-8") as f:
                lines = f.read().split("\n")
        except (UnicodeDecodeError, OSError):
            continue
        off = False
        for i, line in enumerate(lines, 1):
            if "check_version: off" in line:
                off = True
            elif "check_version: on" in line:
                off = False
            if off:
                continue
            for pattern, kinds, what in PLACES:
                for m in pattern.finditer(line):
                    for kind, got in zip(kinds, m.groups()):
                        want = expect[kind]
                        if kind == "series":   # X.Y, or X.Y.Z of that series
                            got = ".".join(got.split(".")[:2])
                        if got != want:
                            findings.append("%s:%d: %s names %s, but the version is %s (%s): %s"
                                            % (rel, i, what, m.group(0), version, HEADER, "expected %s" % want))
    return findings


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    args = ap.parse_args()
    findings = check(os.path.abspath(args.root))
    for f in findings:
        print(f)
    if findings:
        print("check_version: %d place(s) disagree with %s; set the version there only, and update these"
              % (len(findings), HEADER), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
