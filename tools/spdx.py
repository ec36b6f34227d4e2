#!/usr/bin/env python3
"""spdx.py -- the license line, SPDX-License-Identifier: Apache-2.0, at the top of every source
file of the repository (LICENSE; README.md, "License").

A source file: C, C++, CUDA and assembler (.c .h .cu .cpp .S .inc), Python, shell, CMake (.cmake,
CMakeLists.txt, *.cmake.in), make (Makefile, .mk), meson.build, pkg-config templates (.pc.in),
linker version scripts (.map), and any other file that starts with #!. The line is the file's
first, or its second after a #! line, in the file's comment syntax: /* ... */ or #. Files that
tools/gen_api.py writes (stubs/gen/, include/cudaload_<lib>.h, libcudaload/api_*.inc) get it
from the generator, the same line; the data lists of tools/api/ and the Markdown have none.

    tools/spdx.py [--root DIR] [--fix]

Files: those git tracks or would add (not a git work tree: every file under DIR). Exit 0 when every source file has the line; 1 with
FILE: missing for each that has not. --fix adds it where it is missing (and changes nothing
else), then checks. `make check-generate` runs the check.
"""
import argparse
import os
import subprocess
import sys

LICENSE_ID = "Apache-2.0"
TAG = "SPDX-License-Identifier: " + LICENSE_ID
C_LIKE = (".c", ".h", ".cu", ".cpp", ".S", ".inc", ".map")
HASH_LIKE = (".py", ".sh", ".cmake", ".mk", ".pc.in", ".cmake.in")
HASH_NAMES = {"Makefile", "CMakeLists.txt", "meson.build"}
LOOK = 3   # the tag counts when it is in the first LOOK lines


def comment_for(rel, first_line):
    base = os.path.basename(rel)
    if base.endswith(".cmake.in") or base.endswith(".pc.in") or base in HASH_NAMES or base.endswith(HASH_LIKE):
        return "# %s" % TAG
    if base.endswith(C_LIKE):
        return "/* %s */" % TAG
    if first_line.startswith("#!"):
        return "# %s" % TAG
    return None


def files(root):
    """The files git tracks or would add under root; not a git work tree: every file under it
    but .git/ and build/."""
    r = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                       capture_output=True)
    if r.returncode == 0:
        names = set(r.stdout.decode().split("\0"))
    else:
        names = set()
        for d, dirs, fs in os.walk(root):
            dirs[:] = [x for x in dirs if x not in (".git", "build")]
            names.update(os.path.relpath(os.path.join(d, f), root) for f in fs)
    return sorted(n for n in names if n and os.path.isfile(os.path.join(root, n))
                  and not os.path.islink(os.path.join(root, n)))


def first_line(path):
    with open(path, "rb") as f:
        return f.readline().decode("utf-8", "replace")


def has_tag(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        for i, line in enumerate(f):
            if i >= LOOK:
                return False
            if TAG in line:
                return True
    return False


def add_tag(path, line):
    with open(path, encoding="utf-8", newline="") as f:
        text = f.read()
    if text.startswith("#!"):
        end = text.find("\n") + 1 or len(text)
        text = text[:end] + line + "\n" + text[end:]
    else:
        text = line + "\n" + text
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--fix", action="store_true", help="add the line where it is missing")
    a = ap.parse_args()
    missing, fixed = [], 0
    for rel in files(a.root):
        path = os.path.join(a.root, rel)
        line = comment_for(rel, first_line(path))
        if line is None or has_tag(path):
            continue
        if a.fix:
            add_tag(path, line)
            fixed += 1
        else:
            missing.append(rel)
    if a.fix:
        print("spdx: added %r to %d file(s)" % (TAG, fixed))
    for rel in missing:
        print("%s: missing %r in its first %d lines (tools/spdx.py --fix adds it)" % (rel, TAG, LOOK))
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
