# SPDX-License-Identifier: Apache-2.0
"""The toolkit from Python: cudaload.part(), cudaload.cuda_root() and `python -m cudaload
--parts / --cuda-root / --cmake-toolkit`, on a site-packages laid out as pip's CUDA 13 wheels lay
it out (nvidia/cu13/bin, nvvm, lib, include) whose files are the real toolkit's (this machine's
/usr/local/cuda is made of those wheels). Only that site is searched (CUDALOAD_SOURCES without
cuda_home and system). cudaload-cuda-toolkit.cmake is run by cmake on a root whose path holds
every character a shell or CMake reads specially.

    python -m pytest tests/python/test_toolkit_python.py
"""
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from conftest import REPO, SOURCES_NO_SYSTEM, clean_env, nvcc_path, run_py, sh

# where each real file of the toolkit lands in the wheels' layout
WHEEL_LAYOUT = {
    "bin/nvcc": "bin/nvcc", "bin/nvcc.profile": "bin/nvcc.profile", "bin/crt": "bin/crt", "bin/ptxas": "bin/ptxas",
    "bin/fatbinary": "bin/fatbinary", "bin/nvlink": "bin/nvlink", "bin/cudafe++": "bin/cudafe++",
    "nvvm/bin/cicc": "nvvm/bin/cicc", "nvvm/libdevice": "nvvm/libdevice", "lib/libcudadevrt.a": "lib/libcudadevrt.a",
    "lib/libcudart_static.a": "lib/libcudart_static.a", "lib/libcudart.so.13": "lib/libcudart.so.13",
    "include": "include",
}


def toolkit_home():
    nvcc = nvcc_path()
    return Path(os.path.realpath(nvcc)).parents[1] if nvcc else None


@pytest.fixture(scope="module")
def pip_site(tmp_path_factory):
    home = toolkit_home()
    if not home or not (home / "nvvm" / "bin" / "cicc").is_file():
        pytest.skip("no CUDA toolkit with nvcc and cicc here to lay out as pip wheels")
    site = tmp_path_factory.mktemp("toolkit") / "site-packages"
    cu13 = site / "nvidia" / "cu13"
    for rel, src in WHEEL_LAYOUT.items():
        (cu13 / rel).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(home / src, cu13 / rel)
    return site


def env_for(shim_target, site, **extra):
    return clean_env(PYTHONPATH="%s:%s" % (shim_target, site), CUDALOAD_SOURCES=SOURCES_NO_SYSTEM, **extra)


def test_part_and_parts(shim_target, pip_site):
    r = run_py(sys.executable, "import json, cudaload as c; print(json.dumps([c.parts(), c.part('nvcc'), "
               "c.part('libdevice'), c.part('culibos')]))", env_for(shim_target, pip_site))
    names, nvcc, libdevice, culibos = json.loads(r.stdout)
    assert {"nvcc", "ptxas", "cicc", "cudadevrt", "cudart_static", "libdevice", "nvshmem_device"} <= set(names)
    cu13 = pip_site / "nvidia" / "cu13"
    assert nvcc["status"] == "CUDALOAD_OK" and nvcc["source"] == "caller" and nvcc["major"] == 13, nvcc
    assert nvcc["path"] == str(cu13 / "bin" / "nvcc") and nvcc["cuda_version"] >= 13000, nvcc
    assert [c["reason_code"] for c in nvcc["candidates"]] == ["FOUND"], nvcc
    assert libdevice["kind"] == "bitcode" and libdevice["major"] == 13, libdevice
    # culibos is not laid out: not found, with its pip package
    assert culibos["status"] == "CUDALOAD_ERROR_NOT_FOUND" and culibos["pip_packages"] == ["nvidia-cuda-culibos"]
    r = run_py(sys.executable, "import cudaload as c; c.part('nosuch')", env_for(shim_target, pip_site), check=False)
    assert r.returncode != 0 and "ValueError" in r.stderr, r.stderr


def test_main_parts(shim_target, pip_site):
    env = env_for(shim_target, pip_site)
    r = sh([sys.executable, "-m", "cudaload", "--parts=nvcc,cudadevrt"], env=env)
    lines = [line.split(" ", 1) for line in r.stdout.splitlines()]
    assert [n for n, _ in lines] == ["nvcc", "cudadevrt"], r.stdout
    assert all(p.startswith(str(pip_site) + "/") for _, p in lines), r.stdout
    r = sh([sys.executable, "-m", "cudaload", "--parts=culibos"], env=env, check=False)
    assert r.returncode == 1 and "nvidia-cuda-culibos" in r.stdout, (r.returncode, r.stdout)
    r = sh([sys.executable, "-m", "cudaload", "--parts=nosuch"], env=env, check=False)
    assert r.returncode == 4, (r.returncode, r.stdout, r.stderr)


def test_cuda_root(shim_target, pip_site, tmp_path):
    env = env_for(shim_target, pip_site, CUDALOAD_CACHE_DIR=tmp_path / "cache")
    r = run_py(sys.executable, "import cudaload as c; print(c.cuda_root()); print(c.cuda_root())", env)
    first, again = r.stdout.split()
    root = Path(first)
    assert first == again and root.parent == tmp_path / "cache", r.stdout
    assert os.path.realpath(root / "bin" / "nvcc") == os.path.realpath(pip_site / "nvidia" / "cu13" / "bin" / "nvcc")
    assert os.readlink(root / "lib64") == "lib" and (root / "lib" / "libcudart.so").exists()
    assert (root / "nvvm" / "libdevice" / "libdevice.10.bc").is_file()
    # the same from the command line, into a directory of the caller's
    out = tmp_path / "root"
    r = sh([sys.executable, "-m", "cudaload", "--cuda-root=%s" % out], env=env)
    assert Path(r.stdout.strip()) == out.resolve() and (out / "bin" / "nvcc").exists(), r.stdout
    r = sh([sys.executable, "-m", "cudaload", "--cuda-root=relative/dir"], env=env, check=False)
    assert r.returncode == 4 and r.stdout == "", (r.returncode, r.stdout, r.stderr)
    # a directory that is not empty and was not made by cudaload is never touched
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "keep.txt").write_text("x")
    r = sh([sys.executable, "-m", "cudaload", "--cuda-root=%s" % mine], env=env, check=False)
    assert r.returncode == 4 and (mine / "keep.txt").read_text() == "x", (r.returncode, r.stderr)


def test_cuda_root_refused_without_cicc(shim_target, pip_site, tmp_path):
    """A site that lacks nvidia-nvvm (cicc, libdevice) is no toolkit: exit 1, the package named."""
    site = tmp_path / "site-packages"
    cu13 = site / "nvidia" / "cu13"
    for rel in WHEEL_LAYOUT:
        if rel.startswith("nvvm/"):
            continue
        (cu13 / rel).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(os.readlink(pip_site / "nvidia" / "cu13" / rel), cu13 / rel)
    env = env_for(shim_target, site, CUDALOAD_CACHE_DIR=tmp_path / "cache")
    r = sh([sys.executable, "-m", "cudaload", "--cuda-root"], env=env, check=False)
    assert r.returncode == 1 and r.stdout == "", (r.returncode, r.stdout, r.stderr)
    assert "cicc" in r.stderr and "nvidia-nvvm" in r.stderr, r.stderr
    r = run_py(sys.executable, "import cudaload as c\ntry:\n    c.cuda_root()\nexcept c.LibraryNotFoundError as e:\n"
               "    print(e.status)", env)
    assert r.stdout.strip() == "CUDALOAD_ERROR_NOT_FOUND", r.stdout


# a directory name with every character a shell or CMake reads specially: a quote of each kind,
# blanks, CMake's list separator, a variable's $, an escape, a comment's #
AWKWARD = "it's a;b \"q\" $HOME #x \\z"

# a project that writes what cudaload-cuda-toolkit.cmake gave it, a file each: the root, and
# CUDAToolkit_ROOT's and CMAKE_CUDA_COMPILER's elements (CMake reads both as lists)
CMAKE_PROJECT = """cmake_minimum_required(VERSION 3.18)
project(awkward NONE)
file(WRITE "${CMAKE_BINARY_DIR}/root.txt" "${CUDALOAD_CUDA_ROOT}")
file(WRITE "${CMAKE_BINARY_DIR}/env.txt" "$ENV{CUDALOAD_CUDA_ROOT}")
list(LENGTH CUDAToolkit_ROOT n)
list(GET CUDAToolkit_ROOT 0 first)
file(WRITE "${CMAKE_BINARY_DIR}/toolkit_root.txt" "${n} ${first}")
list(LENGTH CMAKE_CUDA_COMPILER n)
list(GET CMAKE_CUDA_COMPILER 0 first)
file(WRITE "${CMAKE_BINARY_DIR}/compiler.txt" "${n} ${first}")
"""


def cmake_finds(tmp_path, module, python, env):
    """Configures CMAKE_PROJECT with module as its toolchain file and python as Python_EXECUTABLE;
    returns (root, environment's root, CUDAToolkit_ROOT, CMAKE_CUDA_COMPILER, cmake's output),
    the two lists as "<length> <first element>"."""
    project, build = tmp_path / "project", tmp_path / "build"
    project.mkdir()
    (project / "CMakeLists.txt").write_text(CMAKE_PROJECT)
    r = sh(["cmake", "-S", project, "-B", build, "-DCMAKE_TOOLCHAIN_FILE=%s" % module,
            "-DPython_EXECUTABLE=%s" % python], env=env, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    return [(build / f).read_text() for f in ("root.txt", "env.txt", "toolkit_root.txt", "compiler.txt")] + [r.stdout]


def test_cmake_module_takes_an_awkward_root_whole(shim_target, pip_site, tmp_path):
    """python -m cudaload prints each path as it is, on a line of its own (--cuda-root,
    --cmake-toolkit, --parts), and cudaload-cuda-toolkit.cmake takes the root whole:
    CUDALOAD_CUDA_ROOT is the path, and CUDAToolkit_ROOT and CMAKE_CUDA_COMPILER are lists of one
    element, the path, for a root under a directory named AWKWARD."""
    if not shutil.which("cmake"):
        pytest.skip("cmake not found")
    weird = tmp_path / AWKWARD
    env = env_for(shim_target, pip_site, CUDALOAD_CACHE_DIR=weird / "cache")
    r = run_py(sys.executable, "import json, cudaload as c; print(json.dumps(c.cuda_root()))", env)
    root = json.loads(r.stdout)
    assert root.startswith(str(weird / "cache") + "/") and os.path.isfile(os.path.join(root, "bin", "nvcc")), root
    r = sh([sys.executable, "-m", "cudaload", "--cuda-root"], env=env)
    assert r.stdout == root + "\n", (r.stdout, root)
    r = sh([sys.executable, "-m", "cudaload", "--cuda-root=%s" % (weird / "mine")], env=env)
    assert r.stdout == str(weird / "mine") + "\n", r.stdout
    r = sh([sys.executable, "-m", "cudaload", "--parts=nvcc"], env=env)
    assert r.stdout == "nvcc %s\n" % (pip_site / "nvidia" / "cu13" / "bin" / "nvcc"), r.stdout
    module = sh([sys.executable, "-m", "cudaload", "--cmake-toolkit"], env=env).stdout
    assert module.endswith("/cudaload-cuda-toolkit.cmake\n") and os.path.isfile(module[:-1]), module
    got_root, got_env, tk_root, compiler, log = cmake_finds(tmp_path, module[:-1], sys.executable, env)
    assert got_root == root, (got_root, root, log)
    assert got_env == root, (got_env, root)
    assert tk_root == "1 " + root, (tk_root, root)
    assert compiler == "1 %s/bin/nvcc" % root, (compiler, root)
    assert "-m cudaload --cuda-root)" in log, log  # found by the package, not another way


def test_cmake_module_takes_an_awkward_root_from_the_probe(pip_site, tmp_path):
    """Without the cudaload package, the file's last way: cudaload-probe (found on PATH, in a
    directory named AWKWARD), given as --root the interpreter's site-packages that hold nvidia/
    (one named AWKWARD too). The probe prints the root as it is; the file takes it whole."""
    if not shutil.which("cmake"):
        pytest.skip("cmake not found")
    probe = Path(os.environ.get("CUDALOAD_TEST_BUILD") or REPO / "build") / "cudaload-probe"
    if not probe.is_file():
        pytest.skip("no cudaload-probe in %s (make all builds it)" % probe.parent)
    weird = tmp_path / AWKWARD
    site, bin_dir = weird / "site-packages", weird / "bin"
    site.mkdir(parents=True)
    bin_dir.mkdir()
    os.symlink(pip_site / "nvidia", site / "nvidia")
    os.symlink(probe, bin_dir / "cudaload-probe")
    os.symlink(sys.executable, bin_dir / "python3")  # the python3 of PATH: this one, without cudaload
    env = clean_env(PYTHONPATH=site, CUDALOAD_SOURCES=SOURCES_NO_SYSTEM, CUDALOAD_CACHE_DIR=weird / "cache",
                    PATH="%s:%s" % (bin_dir, os.environ.get("PATH", "/usr/bin:/bin")))
    r = run_py(sys.executable, "import importlib.util as u; print(u.find_spec('cudaload') is None)", env)
    assert r.stdout.strip() == "True", "this interpreter has a cudaload package of its own: %s" % sys.executable
    r = sh([probe, "--root", site, "--cuda-root"], env=env)
    root = r.stdout[:-1]
    assert r.stdout.endswith("\n") and root.startswith(str(weird / "cache") + "/"), r.stdout
    module = REPO / "cmake" / "cudaload-cuda-toolkit.cmake"
    got_root, got_env, tk_root, compiler, log = cmake_finds(tmp_path, module, sys.executable, env)
    assert got_root == root and got_env == root, (got_root, got_env, root, log)
    assert tk_root == "1 " + root and compiler == "1 %s/bin/nvcc" % root, (tk_root, compiler, root)
    assert "(cudaload-probe --root %s " % site in log, log  # found by the probe
