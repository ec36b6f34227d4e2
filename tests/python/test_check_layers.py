# SPDX-License-Identifier: Apache-2.0
"""tools/check_layers.py, the checker behind `make check-layers`: the library's objects as built
pass; an object of the walk that uses the public API (a planted gate.o calling cudaload_init) is
a call up, named with both objects and layers; an object no layer lists is named too.

    python -m pytest tests/python/test_check_layers.py
"""
import os
import shutil
import subprocess
import sys

import pytest

from conftest import REPO

CHECKER = REPO / "tools" / "check_layers.py"


def objects(tmp_path):
    build = os.environ.get("CUDALOAD_TEST_BUILD")
    if not build or not os.path.isdir(os.path.join(build, "obj")):
        pytest.skip("CUDALOAD_TEST_BUILD has no obj/ (make check-python builds it)")
    dest = tmp_path / "obj"
    shutil.copytree(os.path.join(build, "obj"), dest)
    return dest


def check(objdir):
    return subprocess.run([sys.executable, str(CHECKER), str(objdir)], capture_output=True, text=True, timeout=120)


def compile_object(tmp_path, source, out):
    src = tmp_path / "planted.c"
    src.write_text(source)
    subprocess.run(["cc", "-c", "-o", str(out), str(src)], check=True, timeout=120)


def test_the_objects_as_built_pass(tmp_path):
    r = check(objects(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "every use goes down" in r.stdout


def test_a_call_up_is_named(tmp_path):
    objdir = objects(tmp_path)
    # gate.o (the walk's gate) calling the public API's init: what a step must never do
    compile_object(tmp_path, "int cudaload_init(const void *o);\nint cl_planted(void) { return cudaload_init(0); }\n",
                   objdir / "gate.o")
    r = check(objdir)
    assert r.returncode == 1
    assert "gate.o (loader) uses cudaload_init of cudaload.o (api)" in r.stderr


def test_the_context_calls_nothing_above_it(tmp_path):
    objdir = objects(tmp_path)
    compile_object(tmp_path, "void cl_debug(const char *fmt, ...);\nvoid cl_walk_end(void) { cl_debug(\"walked\"); }\n",
                   objdir / "context.o")
    r = check(objdir)
    assert r.returncode == 1
    assert "context.o (context) uses cl_debug of status.o (base)" in r.stderr


def test_an_object_in_no_layer_is_named(tmp_path):
    objdir = objects(tmp_path)
    compile_object(tmp_path, "int cl_new_step(void) { return 1; }\n", objdir / "new_step.o")
    r = check(objdir)
    assert r.returncode == 1
    assert "new_step.o: in no layer" in r.stderr
