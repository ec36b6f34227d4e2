# SPDX-License-Identifier: Apache-2.0
"""The extension templates: examples/python-cmake (scikit-build-core, find_package(cudaload
CONFIG)) and examples/python-meson (meson-python, dependency('cudaload')), with
examples/python-extension (setuptools; its own suite: test_example_extension.py).

Each is built as its users build it: `pip wheel` with build isolation, the build requirements
from the registry and cudaload from the wheel this suite builds (conftest.build_template). Then:
the module links no CUDA library, has no RPATH and exports its PyInit alone; auditwheel shows a
manylinux tag and repairs with no --exclude and nothing grafted; installed in a venv beside the
nvidia-cuda-runtime wheel, its first CUDA call makes libcudaload load that wheel's libcudart
(cuRAND: the toolkit's, through CUDA_HOME), and a library found nowhere is the named status.

    python -m pytest tests/python/test_templates.py
"""
import json
import os
import textwrap
import zipfile
from pathlib import Path

import pytest

from conftest import (REPO, auditwheel_show_and_repair, build_template, clean_env, driver_present, elf_facts,
                      make_venv, pip, sh)

TEMPLATES = {"python-cmake": ("scale_cmake", "_scale"), "python-meson": ("rng_meson", "_rng")}
LIBC_ONLY = {"libc.so.6", "ld-linux-x86-64.so.2", "libdl.so.2", "libpthread.so.0", "libm.so.6"}


@pytest.fixture(scope="module", params=sorted(TEMPLATES))
def template(request, shim_wheel, tmp_path_factory):
    name = request.param
    wheel = build_template(REPO / "examples" / name, shim_wheel, tmp_path_factory.mktemp(name))
    package, module = TEMPLATES[name]
    assert wheel.name.startswith(package + "-"), wheel
    return name, package, module, wheel


def test_module_links_no_cuda_and_exports_pyinit_alone(template, tmp_path):
    name, package, module, wheel = template
    with zipfile.ZipFile(wheel) as z:
        sos = [n for n in z.namelist() if n.startswith(f"{package}/{module}.") and n.endswith(".so")]
        assert len(sos) == 1, z.namelist()
        z.extract(sos[0], tmp_path)
    needed, rpath, exported = elf_facts(tmp_path / sos[0])
    assert set(needed) <= LIBC_ONLY, f"{name}: DT_NEEDED beyond libc: {needed}"
    assert not rpath, name
    assert exported == ["PyInit_" + module], f"{name} exports {exported}"
    # the stubs and libcudaload are inside (the backends strip the symbol table): nothing CUDA is
    # left undefined, and libcudaload's catalogue is in the module
    undefined = sh(["nm", "-D", "--undefined-only", tmp_path / sos[0]]).stdout.split()
    assert not [u for u in undefined if u.startswith(("cuda", "__cuda", "cudaload", "curand"))], undefined
    assert b"libcudart.so.13" in (tmp_path / sos[0]).read_bytes(), name


def test_auditwheel_show_and_repair(template, tmp_path):
    auditwheel_show_and_repair(template[3], tmp_path)


# ---- installed beside nvidia-cuda-runtime, run ----------------------------------------------

SCRIPT = textwrap.dedent(r"""
    import json, sys
    out = {}
    def call(key, f, *a):
        try:
            out[key] = f(*a)
        except RuntimeError as e:
            out[key + "_error"] = str(e)
    if sys.argv[1] == "scale_cmake":
        import scale_cmake as m
        call("version", m.runtime_version)
        call("path", m.runtime_path)
        call("scale", m.scale, 0, 16, 2.0)
    else:
        import rng_meson as m
        call("version", m.curand_version)
        call("path", m.library_path, "curand")
        call("cudart_path", m.library_path, "cudart")
        call("uniform", m.uniform, 0, 16)
    print(json.dumps(out))
""")


@pytest.fixture(scope="module")
def venv():
    return make_venv("venv-templates", ["nvidia-cuda-runtime>=13,<14"])


def run_in(venv, template, tmp_path, **env):
    name, package, module, wheel = template
    py = venv / "bin" / "python"
    pip("install", "--quiet", "--no-deps", "--force-reinstall", "--no-index", wheel, python=str(py))
    script = tmp_path / "run_template.py"
    script.write_text(SCRIPT)
    r = sh([py, script, package], env=clean_env(**env), cwd=tmp_path)
    return json.loads(r.stdout.strip().splitlines()[-1])


def site_packages(venv):
    return next((venv / "lib").glob("python3*/site-packages")).resolve()


def test_first_call_loads_cuda_from_the_venv(venv, template, tmp_path):
    """The module's own site-packages is searched (source "self"): no roots passed, no
    LD_LIBRARY_PATH, and the system and CUDA_HOME scoped out, except for cuRAND, which comes from
    the toolkit here (CUDA_HOME): the registry's nvidia-curand wheel is 60 MB."""
    name = template[0]
    home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    out = run_in(venv, template, tmp_path, CUDALOAD_SOURCES="self,cuda_home", CUDA_HOME=home)
    lib = site_packages(venv) / "nvidia" / "cu13" / "lib"
    if name == "python-cmake":
        assert out.get("version", 0) // 1000 == 13, out
        assert Path(out["path"]).resolve() == (lib / "libcudart.so.13").resolve(), out
        work = "scale"
    else:
        if not any((Path(home) / "lib64").glob("libcurand.so.10*")):
            pytest.skip(f"no libcurand.so.10 under {home}/lib64")
        assert out.get("version", 0) >= 10000, out
        # the file itself, links resolved (in a toolkit made of pip's wheels each file of lib64 is
        # a link into the wheels' site-packages)
        assert Path(out["path"]).resolve() == (Path(home) / "lib64" / "libcurand.so.10").resolve(), out
        work = "uniform"
    if not driver_present():
        # no driver: the libraries' own answers, not a crash (device address 0 is never touched)
        assert work + "_error" in out, out
    if name == "python-meson" and "cudart_path" in out and out["cudart_path"]:
        assert Path(out["cudart_path"]).resolve() == (lib / "libcudart.so.13").resolve(), out


def test_library_found_nowhere_is_a_named_status(venv, template, tmp_path):
    """cuRAND, with only the venv searched (it has no nvidia-curand): the module's error carries
    libcudaload's status; the runtime template, with nothing searched but an empty override:
    likewise."""
    name = template[0]
    if name == "python-cmake":
        out = run_in(venv, template, tmp_path, CUDALOAD_SOURCES="caller")
    else:
        out = run_in(venv, template, tmp_path, CUDALOAD_SOURCES="self")
    assert "version" not in out, out
    assert "CUDALOAD_ERROR_NOT_FOUND" in out["version_error"], out
