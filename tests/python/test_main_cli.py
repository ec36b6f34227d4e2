# SPDX-License-Identifier: Apache-2.0
"""python -m cudaload as a command line: --help lists the exit codes (the probe's: 0 to 4), an
empty value is a usage error (exit 4) rather than the option's default, and nothing it says
points to cudaload-probe, a program the pip install does not provide (the package's own
strings, and what it prints for an unknown part). Outcomes and exit codes, not wording."""
import ast
import re
import sys
from pathlib import Path

import pytest

from conftest import clean_env, sh


def run_main(shim_target, *args):
    return sh([sys.executable, "-m", "cudaload", *args], env=clean_env(PYTHONPATH=shim_target), check=False)


def test_help_lists_the_exit_codes(shim_target):
    r = run_main(shim_target, "--help")
    assert r.returncode == 0, (r.returncode, r.stderr)
    # the block after the options: one line per code, "  N  meaning"
    block = r.stdout[r.stdout.index("\nexit codes"):]
    codes = [int(m.group(1)) for m in re.finditer(r"^  ([0-9])  \S", block, re.M)]
    assert codes == [0, 1, 2, 3, 4], block
    assert "cudaload-probe" not in r.stdout


@pytest.mark.parametrize("args", [
    ["--parts="], ["--parts=nvcc,"], ["--parts=,"],
    ["--libs="], ["--libs=cudart,"], ["--libs=cudart,,cufft"],
    ["--cuda-root="], ["--cuda-root", ""],
    ["--cflags", "--libs="],          # an error anywhere: nothing answered, not half the flags
    ["--parts=nosuch"], ["--libs=nosuch"], ["--cuda-root=relative/dir"],
    ["--bogus"],
], ids=lambda a: " ".join(a) or "''")
def test_usage_errors_exit_4(shim_target, args):
    r = run_main(shim_target, *args)
    assert r.returncode == 4 and r.stdout == "", (r.returncode, r.stdout, r.stderr)
    assert r.stderr and "cudaload-probe" not in r.stderr, r.stderr


@pytest.mark.parametrize("args", [["--libs"], ["--libs=cudart"], ["--parts"], ["--parts=nvcc"]])
def test_options_alone_or_with_names_answer(shim_target, args):
    """The options without a value keep their default (no stub, every part); with names, those."""
    r = run_main(shim_target, *args)
    assert r.returncode in (0, 1) and r.stdout, (r.returncode, r.stdout, r.stderr)  # 1: a part not found here


def test_no_string_of_the_package_names_cudaload_probe(shim_target):
    """Every string literal of the installed package's Python files (docstrings, messages): the
    commands a user of the wheel has are `python -m cudaload` and the interpreter's pip."""
    pkg = Path(shim_target) / "cudaload"
    files = sorted(pkg.glob("*.py"))
    assert {f.name for f in files} >= {"__init__.py", "__main__.py"}, files
    found = []
    for f in files:
        for node in ast.walk(ast.parse(f.read_text(), str(f))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and "cudaload-probe" in node.value:
                found.append("%s:%d" % (f.name, node.lineno))
    assert not found, found
