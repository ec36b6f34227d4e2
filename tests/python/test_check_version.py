# SPDX-License-Identifier: Apache-2.0
"""tools/check_version.py, the check `make check-generate` runs: on a small tree whose version is
set in include/cudaload.h it finds each place that names another (a pip requirement, CMake's
find_package, meson's dependency, the probe's first line and JSON, a wheel's name, the shared
library's file name, a version of their own in the Makefile, pyproject.toml or __init__.py, a
header whose string and numbers disagree), at its file and line, and passes the tree once they
agree. The repository itself passes.

    python -m pytest tests/python/test_check_version.py
"""
import subprocess
import sys
import textwrap

from conftest import REPO, SERIES, VERSION

CHECKER = REPO / "tools" / "check_version.py"


def run(root):
    return subprocess.run([sys.executable, str(CHECKER), "--root", str(root)], capture_output=True, text=True,
                          timeout=60)


def write(root, rel, text):
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(textwrap.dedent(text).lstrip("\n"))


def header(major, minor, patch, string=None):
    return ("#define CUDALOAD_VERSION_MAJOR %d\n#define CUDALOAD_VERSION_MINOR %d\n#define CUDALOAD_VERSION_PATCH %d\n"
            '#define CUDALOAD_VERSION_STRING "%s"\n' % (major, minor, patch, string or "%d.%d.%d" % (major, minor, patch)))


def tree(root, old):
    """A repository at 2.5.1; old: the version every other place names (the previous release's
    when it is 2.4.0)."""
    series, nxt, full = old.rsplit(".", 1)[0], "%s.%d" % (old.split(".")[0], int(old.split(".")[1]) + 1), old
    write(root, "include/cudaload.h", header(2, 5, 1))
    write(root, "Makefile", "VERSION := $(shell sed -n 's/x/y/p' include/cudaload.h)\n")
    write(root, "python-shim/pyproject.toml", '[project]\nname = "cudaload"\ndynamic = ["version"]\n')
    write(root, "python-shim/src/cudaload/__init__.py", "__version__ = _cudaload.LIBCUDALOAD_VERSION\n")
    write(root, "examples/a/pyproject.toml", 'requires = ["setuptools", "cudaload>=%s,<%s"]\n' % (series, nxt))
    write(root, "examples/a/CMakeLists.txt", "find_package(cudaload %s CONFIG REQUIRED)\n" % series)
    write(root, "examples/a/meson.build", "dep = dependency('cudaload-cufft', version: '>=%s')\n" % series)
    write(root, "docs/probe.md", """
        # Probe

        ```
        libcudaload %s: cudaload-probe
        ```

        {"cudaload_version": "%s"}

        pip wheel ./python-shim   # cudaload-%s-cp311-abi3-linux_x86_64.whl; build/libcudaload.so.%s
        """ % (full, full, full, full))
    # the history and a quoted run name the old version, and are not read
    write(root, "CHANGELOG.md", "## [%s]\n\nlibcudaload %s: cudaload-probe\n" % (old, old))
    write(root, "docs/old-run.md", "<!-- check_version: off -->\nlibcudaload 0.1.0: cudaload-probe\n"
                                   "<!-- check_version: on -->\n")


def test_repository_passes():
    r = run(REPO)
    assert r.returncode == 0, r.stdout + r.stderr


def test_finds_every_place_and_passes_once_they_agree(tmp_path):
    bad, good = tmp_path / "bad", tmp_path / "good"
    tree(bad, "2.4.0")
    tree(good, "2.5.1")
    r = run(bad)
    assert r.returncode == 1, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    where = sorted(line.split(": ", 1)[0] for line in lines)
    assert where == sorted(["examples/a/pyproject.toml:1", "examples/a/pyproject.toml:1", "examples/a/CMakeLists.txt:1",
                            "examples/a/meson.build:1", "docs/probe.md:4", "docs/probe.md:7", "docs/probe.md:9",
                            "docs/probe.md:9"]), r.stdout
    assert all("the version is 2.5.1 (include/cudaload.h)" in line for line in lines), r.stdout
    assert "cudaload>=2.4" in r.stdout and "expected 2.5" in r.stdout and "expected 2.6" in r.stdout, r.stdout
    r = run(good)
    assert r.returncode == 0 and r.stdout == "", r.stdout + r.stderr


def test_a_version_of_their_own(tmp_path):
    tree(tmp_path, "2.5.1")
    write(tmp_path, "Makefile", "VERSION    := 2.5.1\n")
    write(tmp_path, "python-shim/pyproject.toml", '[project]\nname = "cudaload"\nversion = "2.5.1"\n')
    write(tmp_path, "python-shim/src/cudaload/__init__.py", '__version__ = "2.5.1"\n')
    r = run(tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    for where in ("Makefile:1: a version of its own", "python-shim/pyproject.toml:3: a version of its own",
                  'python-shim/pyproject.toml: no dynamic = ["version"]',
                  "python-shim/src/cudaload/__init__.py:1: a version of its own"):
        assert where in r.stdout, (where, r.stdout)


def test_the_header_string_and_numbers_must_agree(tmp_path):
    tree(tmp_path, "2.5.1")
    write(tmp_path, "include/cudaload.h", header(2, 5, 1, "2.5.0"))
    r = run(tmp_path)
    assert r.returncode == 1 and 'CUDALOAD_VERSION_STRING "2.5.0" is not' in r.stdout, r.stdout + r.stderr


def test_conftest_reads_the_header():
    """The tests' VERSION and SERIES are the header's (the wheel's names, find_package)."""
    assert VERSION.startswith(SERIES + ".") and VERSION.count(".") == 2, (VERSION, SERIES)
    assert ('#define CUDALOAD_VERSION_STRING "%s"' % VERSION) in (REPO / "include" / "cudaload.h").read_text()
