#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""check_layers.py -- the library's files call down, never up: checked on the objects.

    tools/check_layers.py OBJDIR      OBJDIR: the library's objects (build/obj)

Each source file of libcudaload/ sits in one layer (LAYERS, bottom first). An object may use
what its own layer or a lower one defines, never what a higher one does: the context (its
lock, the fork handlers, who walks) is the bottom, calling nothing of the library's; the walk's
steps sit on it; the public API (cudaload.c) on them; the launch step, a user of the public
API, on top. Within a layer the files call each other freely (the walk's steps recurse into
one another: a dependency is walked as its library is).

What an object uses and defines is read with `nm` (its undefined and its defined global
symbols), so a call, a variable and a function pointer taken all count, and a comment or a
declaration does not. Exit 1 with one line per use that goes up (the object, the symbol, the
object defining it, both layers), or per object of OBJDIR that no layer lists (a new file is
placed on purpose); exit 0 with a one-line summary.
"""
import os
import subprocess
import sys

# Bottom first. base: the statuses, the per-thread message, the strings (status.c) and the
# operating system (platform_*.c), which use each other. A source file's object is named after it (walk.c -> walk.o). fatbin.o is the
# embedded kernels' data (fatbin.S), used by the launch step only.
LAYERS = [
    ("context", ["context"]),
    ("base", ["status", "platform_posix", "platform_windows"]),
    ("loader", ["catalogue", "config", "search", "candidates", "resolve", "gate", "walk", "walk_steps",
                "walk_majors", "walk_file", "walk_deps", "driver_like", "cuda_compat", "advisor", "toolkit"]),
    ("api", ["cudaload", "preload"]),
    ("launch", ["kernels", "sgemm_plan", "kernels_device", "kernels_image", "kernels_image_file", "kernels_launch", "cublas_pool", "fatbin", "fatbin_windows"]),
]
LAYER_OF = {obj: (i, name) for i, (name, objs) in enumerate(LAYERS) for obj in objs}


def symbols(path):
    """(the global symbols path defines, those it uses undefined), by nm -P."""
    out = subprocess.run(["nm", "-P", path], capture_output=True, text=True, check=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind == "U":
            used.add(name)
        elif kind in "TDBRCVW":  # global: text, data, bss, read-only, common, weak
            defined.add(name)
    return defined, used


def main(argv):
    if len(argv) != 2 or not os.path.isdir(argv[1]):
        print("usage: tools/check_layers.py OBJDIR (the library's objects, e.g. build/obj)", file=sys.stderr)
        return 2
    objdir = argv[1]
    objs = sorted(f[:-2] for f in os.listdir(objdir) if f.endswith(".o"))
    problems = []
    definer, uses = {}, {}
    for obj in objs:
        if obj not in LAYER_OF:
            problems.append("%s.o: in no layer of tools/check_layers.py (place its file in LAYERS)" % obj)
            continue
        defined, used = symbols(os.path.join(objdir, obj + ".o"))
        uses[obj] = used
        for name in defined:
            definer[name] = obj
    for obj in sorted(uses):
        level, layer = LAYER_OF[obj]
        for name in sorted(uses[obj]):
            owner = definer.get(name)
            if owner is None or owner == obj:
                continue  # the C library's, the driver's: outside the library
            owner_level, owner_layer = LAYER_OF[owner]
            if owner_level > level:
                problems.append("%s.o (%s) uses %s of %s.o (%s): a call up" % (obj, layer, name, owner, owner_layer))
    if problems:
        for p in problems:
            print("check_layers: " + p, file=sys.stderr)
        return 1
    print("check_layers: %d objects in %d layers, every use goes down or stays in its layer" % (len(uses), len(LAYERS)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
