# SPDX-License-Identifier: Apache-2.0
"""tools/spdx.py, run by `make check-generate`: every source file of the repository starts with
the SPDX-License-Identifier line (after a #! line), in its comment syntax; --fix adds it where it
is missing, after the #! line, changes nothing else and is idempotent.

    python -m pytest tests/python/test_spdx.py
"""
import subprocess
import sys

from conftest import REPO

TOOL = REPO / "tools" / "spdx.py"
TAG = "SPDX-License-Identifier: Apache-2.0"


def run(root, *args):
    return subprocess.run([sys.executable, str(TOOL), "--root", str(root), *args], capture_output=True, text=True,
                          timeout=120)


def test_repository_passes():
    r = run(REPO)
    assert r.returncode == 0, r.stdout + r.stderr


def test_fix_adds_the_line_in_each_syntax(tmp_path):
    files = {"a.c": "/* a.c */\nint a;\n", "b.py": "#!/usr/bin/env python3\n\"\"\"b.\"\"\"\n", "c.sh": "#!/bin/sh\necho c\n",
             "CMakeLists.txt": "project(x)\n", "d.cmake.in": "set(V @V@)\n", "e.md": "# not a source\n",
             "f.txt": "data\n", "g": "#!/bin/sh\n", "h.h": "/* %s */\n#pragma once\n" % TAG}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    r = run(tmp_path)
    assert r.returncode == 1, r.stdout
    assert sorted(line.split(":")[0] for line in r.stdout.splitlines()) == [
        "CMakeLists.txt", "a.c", "b.py", "c.sh", "d.cmake.in", "g"], r.stdout
    assert run(tmp_path, "--fix").returncode == 0
    want = {"a.c": "/* %s */\n/* a.c */\nint a;\n" % TAG, "b.py": "#!/usr/bin/env python3\n# %s\n\"\"\"b.\"\"\"\n" % TAG,
            "c.sh": "#!/bin/sh\n# %s\necho c\n" % TAG, "CMakeLists.txt": "# %s\nproject(x)\n" % TAG,
            "d.cmake.in": "# %s\nset(V @V@)\n" % TAG, "e.md": files["e.md"], "f.txt": files["f.txt"],
            "g": "#!/bin/sh\n# %s\n" % TAG, "h.h": files["h.h"]}
    assert {n: (tmp_path / n).read_text() for n in files} == want
    assert run(tmp_path, "--fix").stdout.startswith("spdx: added %r to 0 file(s)" % TAG)
    assert {n: (tmp_path / n).read_text() for n in files} == want
