# SPDX-License-Identifier: Apache-2.0
"""The cudaload package as a build requirement: what it gives extension builders.

From the installed wheel (pip install --target): get_include(), get_library_dir(),
get_cmake_dir(), get_pkgconfig_dir() name the directories the wheel carries; `python -m
cudaload --cflags --libs=STUBS` gives flags that compile and link a C program against the
archives, which then runs (cudaRuntimeGetVersion through the cudart stub loads the runtime from
the nvidia wheel beside it); pkg-config and CMake resolve the modules to files that exist; the
archives' API is hidden (a shared object that links them exports nothing of them).

    python -m pytest tests/python/test_build_dependency.py
"""
import json
import os
import re
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import REPO, SERIES, VERSION, clean_env, make_venv, package_stubs, run_py, sh

STUBS = package_stubs()


def paths(shim_target):
    r = run_py(sys.executable, "import json, cudaload as c; print(json.dumps([c.get_include(), c.get_library_dir(), "
               "c.get_cmake_dir(), c.get_pkgconfig_dir()]))", clean_env(PYTHONPATH=shim_target))
    return [Path(p) for p in json.loads(r.stdout)]


def main_flags(shim_target, *args, check=True):
    return sh([sys.executable, "-m", "cudaload", *args], env=clean_env(PYTHONPATH=shim_target), check=check)


def test_directories(shim_target):
    inc, lib, cmake, pc = paths(shim_target)
    pkg = (Path(shim_target) / "cudaload").resolve()
    assert [inc, lib, cmake, pc] == [pkg / "include", pkg / "lib", pkg / "lib" / "cmake" / "cudaload",
                                     pkg / "lib" / "pkgconfig"]
    assert (inc / "cudaload.h").is_file() and (lib / "libcudaload.a").is_file()
    assert (cmake / "cudaloadConfig.cmake").is_file() and (pc / "cudaload.pc").is_file()
    for flag, want in (("--cmakedir", cmake), ("--pkgconfigdir", pc)):
        assert Path(main_flags(shim_target, flag).stdout.strip()) == want


def test_flags_and_an_unknown_stub(shim_target):
    inc, lib, _, _ = paths(shim_target)
    out = main_flags(shim_target, "--cflags", "--libs=cufft,cudart").stdout.split()
    assert out == ["-I%s" % inc, str(lib / "libcudaload-cufft.a"), str(lib / "libcudaload-cudart.a"),
                   str(lib / "libcudaload.a"), "-ldl", "-lpthread"], out
    r = main_flags(shim_target, "--libs=cudart,nosuch", check=False)
    assert r.returncode == 4 and r.stdout == "", (r.returncode, r.stdout, r.stderr)
    assert "nosuch" in r.stderr and all(s in r.stderr for s in STUBS), r.stderr


def test_archives_api_hidden(shim_target):
    """Every defined global symbol of the archives is hidden: libcudaload's API, the stubs'
    CUDA functions (cuFFT's header declares them default: the build presets CUFFTAPI)."""
    _, lib, _, _ = paths(shim_target)
    for a in ["libcudaload.a"] + ["libcudaload-%s.a" % s for s in STUBS]:
        rows = [r.split() for r in sh(["readelf", "-sW", lib / a]).stdout.splitlines()]
        visible = [r[7] for r in rows if len(r) >= 8 and r[4] in ("GLOBAL", "WEAK") and r[5] == "DEFAULT"
                   and r[6] != "UND"]
        assert not visible, (a, visible[:10])


PROGRAM = textwrap.dedent(r"""
    #include <stdio.h>
    #include <cuda_runtime_api.h>
    #include <cudaload.h>
    int main(void) {
        int v = 0;
        cudaError_t e = cudaRuntimeGetVersion(&v);   /* through the cudart stub */
        cudaload_library_info info = {.size = sizeof info};
        cudaload_get_library_info(CUDALOAD_LIB_CUDART, &info);
        printf("%s %d %d %s\n", cudaload_version_string(), (int)e, v, info.path ? info.path : "-");
        return e == cudaSuccess ? 0 : 1;
    }
""")


def test_flags_build_a_program_that_runs(shim_target, tmp_path):
    """cc $(python -m cudaload --cflags) prog.c $(python -m cudaload --libs=cudart): the program
    links no CUDA library; run with a venv that has the nvidia-cuda-runtime wheel active
    (VIRTUAL_ENV, the "venv" source alone) it takes that runtime."""
    cuda_inc = os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "include")
    if not os.path.isfile(os.path.join(cuda_inc, "cuda_runtime_api.h")):
        pytest.skip("no CUDA headers in %s (CUDA_HOME): the program includes cuda_runtime_api.h" % cuda_inc)
    flags = main_flags(shim_target, "--cflags", "--libs=cudart").stdout.split()
    (tmp_path / "prog.c").write_text(PROGRAM)
    cc = os.environ.get("CC", "cc")
    sh([cc, "-std=c11", "-isystem", cuda_inc, "-o", tmp_path / "prog", tmp_path / "prog.c", *flags])
    needed = re.findall(r"\[([^\]]+)\]", sh(["readelf", "-d", tmp_path / "prog"]).stdout)
    assert not [n for n in needed if "cud" in n], needed
    venv = make_venv("venv-templates", ["nvidia-cuda-runtime>=13,<14"])
    site = next((venv / "lib").glob("python3*/site-packages"))
    r = sh([tmp_path / "prog"], env=clean_env(VIRTUAL_ENV=str(venv), CUDALOAD_SOURCES="venv"))
    version, err, rt, path = r.stdout.split()
    assert version == VERSION and err == "0" and int(rt) // 1000 == 13, r.stdout
    assert Path(path).resolve() == (site / "nvidia" / "cu13" / "lib" / "libcudart.so.13").resolve(), r.stdout


def test_pkg_config_and_cmake_resolve(shim_target, tmp_path):
    _, lib, cmake, pc = paths(shim_target)
    pkgconf = shutil.which("pkg-config") or shutil.which("pkgconf")
    if pkgconf:
        r = sh([pkgconf, "--cflags", "--libs", "cudaload-cufft"], env=dict(os.environ, PKG_CONFIG_PATH=str(pc)))
        words = r.stdout.split()
        libs = [w for w in words if w.endswith(".a")] + [w[2:] for w in words if w.startswith("-L")]
        assert libs and all(Path(x).exists() for x in libs), words
        assert "-lcudaload-cufft" in words and words.index("-lcudaload-cufft") < words.index(
            next(w for w in words if w.endswith("libcudaload.a"))), words
    cm = shutil.which("cmake")
    if not cm:
        pytest.skip("cmake not found (pkg-config checked: %s)" % bool(pkgconf))
    (tmp_path / "CMakeLists.txt").write_text(textwrap.dedent("""
        cmake_minimum_required(VERSION 3.16)
        project(probe C)
        find_package(cudaload @SERIES@ CONFIG REQUIRED)
        get_target_property(loc cudaload::stub_cufft IMPORTED_LOCATION)
        get_target_property(inc cudaload::static INTERFACE_INCLUDE_DIRECTORIES)
        message(STATUS "RESULT ${loc} ${inc} ${cudaload_VERSION} shared=$<BOOL:0>")
        if(TARGET cudaload::cudaload)
          message(FATAL_ERROR "the package's tree has no shared library: cudaload::cudaload must not exist")
        endif()
    """).replace("@SERIES@", SERIES))
    r = sh([cm, "-S", tmp_path, "-B", tmp_path / "b", "-DCMAKE_PREFIX_PATH=%s" % cmake.parent.parent.parent])
    m = re.search(r"RESULT (\S+) (\S+) (\S+)", r.stdout)
    assert m and Path(m.group(1)) == lib / "libcudaload-cufft.a" and m.group(3) == VERSION, r.stdout
    assert Path(m.group(2)).resolve() == (lib.parent / "include").resolve(), r.stdout


def test_answers_in_the_order_asked(shim_target):
    """Each path on a line of its own, the flags together on one, in the order asked."""
    inc, lib, cmake, pc = paths(shim_target)
    stubs_file = cmake / "cudaload-cuda-stubs.cmake"
    r = main_flags(shim_target, "--cmakedir", "--cflags", "--libs=cudart", "--pkgconfigdir", "--cmake-stubs")
    lines = r.stdout.splitlines()
    assert lines == [str(cmake), "-I%s %s %s -ldl -lpthread" % (inc, lib / "libcudaload-cudart.a", lib / "libcudaload.a"),
                     str(pc), str(stubs_file)], lines
    assert main_flags(shim_target, "--libs", "--cflags").stdout.splitlines() == [
        "%s -ldl -lpthread -I%s" % (lib / "libcudaload.a", inc)]
    assert stubs_file.is_file()


def _cmake_324():
    cm = shutil.which("cmake")
    if not cm:
        return None
    m = re.search(r"version (\d+)\.(\d+)", sh([cm, "--version"]).stdout)
    return cm if m and (int(m.group(1)), int(m.group(2))) >= (3, 24) else None


def test_cmake_switch_from_the_package(shim_target, tmp_path):
    """examples/stubs, unchanged, configured with the package's switch file
    (`python -m cudaload --cmake-stubs`, as a scikit-build-core build would pass it): its programs
    link the package's archives (API hidden), need no CUDA library, and run to the runtime's own
    answer."""
    cm = _cmake_324()
    if not cm:
        pytest.skip("no cmake 3.24 or newer on PATH: the switch needs a dependency provider")
    cuda_home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    if not os.access(os.path.join(cuda_home, "bin", "nvcc"), os.X_OK):
        pytest.skip("no nvcc in %s/bin: examples/stubs compiles CUDA" % cuda_home)
    stubs_file = main_flags(shim_target, "--cmake-stubs").stdout.strip()
    env = dict(os.environ, PATH="%s/bin:%s" % (cuda_home, os.environ.get("PATH", "")))
    sh([cm, "-S", REPO / "examples" / "stubs", "-B", tmp_path, "-DCMAKE_PROJECT_TOP_LEVEL_INCLUDES=" + stubs_file], env=env)
    sh([cm, "--build", tmp_path], env=env)
    _, lib, _, _ = paths(shim_target)
    link = (tmp_path / "CMakeFiles" / "solver.dir" / "link.txt").read_text()
    assert str(lib / "libcudaload-cusolver.a") in link and str(lib / "libcudaload-cudart.a") in link, link
    for exe in ("solver", "runtime_only"):
        needed = re.findall(r"\(NEEDED\).*\[([^\]]+)\]", sh(["readelf", "-d", tmp_path / exe]).stdout)
        assert not [n for n in needed if re.match(r"lib(cu|nv)", n)], (exe, needed)
    r = sh([tmp_path / "solver"], check=False, env=clean_env(CUDALOAD_SOURCES="cuda_home", CUDA_HOME=cuda_home))
    gpu = os.path.exists("/dev/nvidiactl")
    assert r.returncode == (0 if gpu else 2), (r.returncode, r.stdout)
    assert "runtime_version=13000" in r.stdout.splitlines() or gpu, r.stdout
