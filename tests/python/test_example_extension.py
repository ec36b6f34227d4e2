# SPDX-License-Identifier: Apache-2.0
"""examples/python-extension (saxpy_demo): a third-party C extension that embeds libcudaload.

The whole path a packager takes, for real: build the cudaload wheel (python-shim/); build the
example's wheel with `pip wheel`, build isolation on, setuptools from the registry and cudaload
from that wheel (its pyproject.toml requires it; setup.py takes cudaload.get_include() and
get_library_dir()); check the extension (no CUDA DT_NEEDED, no RPATH/RUNPATH, only PyInit_*
exported, libcudaload and its cudart and cuFFT stubs embedded and local, the nvcc kernel in
it); `auditwheel show` and `auditwheel repair` (no --exclude); install it into a fresh venv
beside the CUDA wheels from PyPI and check that libcudaload took cudart (and cuBLAS) from that
venv's site-packages/nvidia, with the system and CUDA_HOME scoped out. Without a GPU, saxpy()
must raise the documented NO_DRIVER error; with one, its numbers are checked (also on the GPU
machine, from the running interpreter's own nvidia wheels: CUDALOAD_TEST_NO_BUILD_ISOLATION=1
there, no network needed).

    python -m pytest tests/python/test_example_extension.py

The README's own steps run too, as written (test_readme_steps_as_written): every `sh` block of
its sections "Build, check, install, run" and "On a GPU machine", each section in one bash, in a
copy of the repository's files (a fresh clone with this checkout's changes), PyPI reached as a
user's pip reaches it. So the README cannot drift from what works.

Environment: CUDALOAD_TEST_BUILD (a build dir to reuse, as make check sets), CUDALOAD_SHIM_WHEEL
(a cudaload wheel to build against), CUDA_HOME (nvcc and the CUDA headers, build time only),
PIP_CACHE_DIR / FIXTURES_WHEELS (the wheel cache tests/fixtures.sh keeps: the CUDA wheels are
installed from there, downloaded into it when missing), FIXTURES_CU13_CUBLAS=0 (install and
check the runtime wheel only).
"""

import json
import os
import re
import shutil
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

# the suite's shared helpers (tests/python/conftest.py)
from conftest import SOURCES_NO_SYSTEM as CUDALOAD_SOURCES_NO_SYSTEM
from conftest import (auditwheel_show_and_repair, build_template, clean_env, driver_present, gpu_present, nvcc_path, sh,
                      wheel_cache)

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "python-extension"
CUDA_LIB_RE = re.compile(r"\[(libcuda|libcudart|libcublas|libcublasLt|libnvrtc|libnvJitLink|libcudaload)[.\]]")


def with_cublas():
    v = os.environ.get("FIXTURES_CU13_CUBLAS", "1")
    assert v in ("0", "1"), f"FIXTURES_CU13_CUBLAS must be 0 or 1, not {v!r}"
    return v == "1"


# ---- the build: pip wheel, cudaload from its wheel ----------------------------------------


@pytest.fixture(scope="module")
def wheel(shim_wheel, tmp_path_factory):
    w = build_template(EXAMPLE, shim_wheel, tmp_path_factory.mktemp("wheel"))
    assert w.name.startswith("saxpy_demo-"), w
    return w


@pytest.fixture(scope="module")
def extension(wheel, tmp_path_factory):
    out = tmp_path_factory.mktemp("unpacked")
    with zipfile.ZipFile(wheel) as z:
        z.extractall(out)
    sos = list(out.glob("saxpy_demo/_saxpy*.so"))
    assert len(sos) == 1, sos
    return sos[0]


# ---- the extension as built ------------------------------------------------------------------


def test_extension_needs_no_cuda_and_has_no_rpath(extension):
    d = sh(["readelf", "-d", extension]).stdout
    needed = re.findall(r"\(NEEDED\)\s+Shared library: (\[[^\]]+\])", d)
    assert needed, d
    bad = [n for n in needed if CUDA_LIB_RE.search(n)]
    assert not bad, f"CUDA (or libcudaload) in DT_NEEDED: {bad}"
    assert "(RPATH)" not in d and "(RUNPATH)" not in d, d


def test_extension_exports_only_pyinit_and_embeds_libcudaload(extension):
    syms = sh(["nm", "-D", "--defined-only", extension]).stdout.split("\n")
    names = [line.split()[-1] for line in syms if line.strip()]
    assert names == ["PyInit__saxpy"], names
    # libcudaload and the cudart and cuFFT stubs are inside (the link strips the symbol table):
    # nothing of them is left undefined, and libcudaload's catalogue is in the module
    undefined = sh(["nm", "-D", "--undefined-only", extension]).stdout.split()
    assert not [u for u in undefined if u.startswith(("cuda", "__cuda", "cufft", "cudaload"))], undefined
    assert b"libcudart.so.13" in extension.read_bytes() and b"libcufft.so.12" in extension.read_bytes()


def test_auditwheel_show_and_repair(wheel, tmp_path):
    auditwheel_show_and_repair(wheel, tmp_path)


# ---- installed beside the CUDA wheels from PyPI, in a fresh venv -----------------------------

SCRIPT = textwrap.dedent(r"""
    import array, json, sys
    import saxpy_demo
    out = {"status": saxpy_demo.status, "roots": saxpy_demo.roots, "info": saxpy_demo.library_info()}
    for bad in ((array.array("d", [1.0]), array.array("f", [1.0])), (array.array("f", [1.0]), array.array("f", [1, 2]))):
        try:
            saxpy_demo.saxpy(1.0, *bad)
            out.setdefault("argument_errors", []).append(None)
        except (TypeError, ValueError) as e:
            out.setdefault("argument_errors", []).append(type(e).__name__ + ": " + str(e))
    n, a = (1 << 20) + 3, 1.5
    x = array.array("f", (i % 1000 * 0.5 for i in range(n)))
    y = array.array("f", (1.0 - i % 7 for i in range(n)))
    want = array.array("f", (a * xi + yi for xi, yi in zip(x, y)))
    try:
        out["backend"] = saxpy_demo.saxpy(a, x, y)
        worst = max(abs(g - w) / max(1.0, abs(w)) for g, w in zip(y, want))
        out["max_rel_err"] = worst
        out["sample"] = [y[0], y[1], y[n - 1], want[0], want[1], want[n - 1]]
    except saxpy_demo.CudaloadError as e:
        out["error"] = {"status": e.status, "message": str(e), "is_runtime_error": isinstance(e, RuntimeError)}
    # the module's own nvcc kernel and its cuFFT call, both through libcudaload's stubs
    s = array.array("f", [1, 2, 3, 4])
    try:
        saxpy_demo.scale(2.0, s)
        out["scaled"] = list(s)
    except saxpy_demo.CudaloadError as e:
        out["scale_error"] = {"status": e.status, "message": str(e)}
    import math
    f = array.array("f", (math.sin(i * 0.1) + 0.25 * (i % 5) for i in range(1000)))
    try:
        out["fft_max_err"] = saxpy_demo.fft_roundtrip(f)
    except saxpy_demo.CudaloadError as e:
        out["fft_error"] = {"status": e.status, "message": str(e)}
    print(json.dumps(out))
""")


def run_script(python, env, cwd):
    """Runs SCRIPT as a file in cwd: sys.path[0] is then cwd, which must not become a root."""
    script = Path(cwd) / "run_saxpy_demo.py"
    script.write_text(SCRIPT)
    r = sh([python, script], env=env, cwd=cwd)
    out = json.loads(r.stdout.strip().splitlines()[-1])
    here = Path(cwd).resolve()
    assert here not in [Path(p).resolve() for p in out["roots"]], f"the script's directory became a root: {out['roots']}"
    return out


def check_argument_errors(out):
    errs = out["argument_errors"]
    assert errs[0] and errs[0].startswith("TypeError: saxpy: x must hold float32 items"), errs
    assert errs[1] and errs[1].startswith("ValueError: saxpy: x has 1 items, y has 2"), errs


def check_numbers(out):
    assert "error" not in out, out.get("error")
    assert out["backend"] in ("bundled", "cublas"), out
    assert out["max_rel_err"] <= 1e-6, out
    assert "scale_error" not in out and out["scaled"] == [2.0, 4.0, 6.0, 8.0], out
    assert "fft_error" not in out and out["fft_max_err"] < 1e-5, out


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory):
    try:
        import ensurepip  # noqa: F401
    except ImportError:
        pytest.skip(f"{sys.executable} has no ensurepip: cannot make a venv with pip")
    v = tmp_path_factory.mktemp("venv") / "v"
    sh([sys.executable, "-m", "venv", v])
    py = v / "bin" / "python"
    cache = wheel_cache()
    cuda = ["nvidia-cuda-runtime>=13"] + (["nvidia-cublas>=13"] if with_cublas() else [])
    pip = [py, "-m", "pip", "--disable-pip-version-check", "--no-input"]
    install = [*pip, "install", "-q", "--no-index", "--find-links", cache, "--find-links", wheel.parent,
               "saxpy-demo", *cuda]
    if sh(install, check=False).returncode != 0:  # not in the cache yet: fetch, as tests/fixtures.sh does
        cache.mkdir(parents=True, exist_ok=True)
        d = sh([*pip, "download", "-q", "--progress-bar", "off", "--dest", cache, *cuda], check=False)
        if d.returncode != 0:
            pytest.skip(f"the CUDA wheels are not in {cache} and pip download failed (no network?):\n"
                        f"{d.stderr[-2000:]}")
        sh(install)
    site = sh([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip()
    return py, Path(site).resolve()


def test_fresh_venv_takes_cuda_from_its_wheels(venv, tmp_path):
    py, site = venv
    lib = site / "nvidia" / "cu13" / "lib"
    assert (lib / "libcudart.so.13").is_file(), "the nvidia-cuda-runtime 13 wheel layout changed"
    out = run_script(py, clean_env(CUDALOAD_SOURCES=CUDALOAD_SOURCES_NO_SYSTEM), tmp_path)
    info = out["info"]
    assert str(site) in [str(Path(r).resolve()) for r in out["roots"]], out["roots"]
    rt = info["cudart"]
    assert rt["status"] == "CUDALOAD_OK", rt
    assert Path(rt["path"]).resolve() == (lib / "libcudart.so.13").resolve(), rt
    assert rt["source"] == "caller" and rt["soname"] == "libcudart.so.13" and rt["major"] == 13, rt
    assert rt["version"] >= 13000, rt
    if with_cublas():
        for name in ("cublas", "cublasLt"):
            b = info[name]
            assert b["status"] == "CUDALOAD_OK", b
            assert Path(b["path"]).resolve().parent == lib.resolve() and b["source"] == "caller", b
    check_argument_errors(out)
    demo = sh([py, EXAMPLE / "demo.py"], check=False, env=clean_env(CUDALOAD_SOURCES=CUDALOAD_SOURCES_NO_SYSTEM),
              cwd=tmp_path)
    m = re.search(r"^  cudart\s+CUDALOAD_OK\s+caller\s+(\S+)$", demo.stdout, re.M)
    assert m and Path(m.group(1)).resolve() == (lib / "libcudart.so.13").resolve(), demo.stdout
    if not driver_present():
        assert demo.returncode == 2 and "saxpy: CUDALOAD_ERROR_NO_DRIVER" in demo.stderr, (demo.stdout, demo.stderr)
        # no driver on this machine: the call raises the documented error, naming libcuda.so.1
        assert out["status"] == "CUDALOAD_ERROR_NO_DRIVER", out["status"]
        assert info["cuda"]["status"] == "CUDALOAD_ERROR_NO_DRIVER", info["cuda"]
        err = out["error"]
        assert err["status"] == "CUDALOAD_ERROR_NO_DRIVER" and err["is_runtime_error"], err
        assert err["message"].startswith("CUDALOAD_ERROR_NO_DRIVER: libcudaload init failed: "), err
        assert "CUDA driver (libcuda.so.1) not found" in err["message"], err
        assert "fix: install the NVIDIA driver" in err["message"], err
        # the stubs: the runtime's own answer without a driver (cudaErrorInsufficientDriver, 35);
        # no cuFFT in this venv and the system scoped out: cuFFT's own code (CUFFT_SETUP_FAILED, 7)
        assert out["scale_error"]["status"] == "CUDALOAD_ERROR_CUDA", out["scale_error"]
        assert "CUDA runtime error 35" in out["scale_error"]["message"], out["scale_error"]
        assert out["fft_error"]["status"] == "CUDALOAD_ERROR_CUDA", out["fft_error"]
        assert "(cuFFT error 7)" in out["fft_error"]["message"], out["fft_error"]
    else:
        has_gpu, why = gpu_present()
        if not has_gpu:
            pytest.skip(f"a driver is installed but {why}: the SAXPY result is checked only on a GPU")
        assert out["status"] == "CUDALOAD_OK", out
        check_numbers(out)
        assert demo.returncode == 0 and ", 0 wrong" in demo.stdout, (demo.stdout, demo.stderr)


def test_fresh_venv_self_source_alone(venv, tmp_path):
    """Without the roots from __init__.py: libcudaload finds the site-packages that holds
    the module embedding it (source "self")."""
    py, site = venv
    out = run_script(py, clean_env(CUDALOAD_SOURCES="self"), tmp_path)
    rt = out["info"]["cudart"]
    assert rt["status"] == "CUDALOAD_OK" and rt["source"] == "self", rt
    assert Path(rt["path"]).resolve() == (site / "nvidia" / "cu13" / "lib" / "libcudart.so.13").resolve(), rt


# ---- on a GPU: the running interpreter's own CUDA (e.g. /opt/torch/.venv), no network --------


@pytest.mark.parametrize("backend", ["auto", "cublas"])
def test_gpu_saxpy_in_this_interpreter(wheel, tmp_path, backend):
    has_gpu, why = gpu_present()
    if not has_gpu:
        pytest.skip(f"no GPU ({why}): the numeric check runs on a GPU machine")
    target = tmp_path / "site"
    sh([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps", "--no-index",
        "--target", target, wheel])
    env = clean_env(PYTHONPATH=str(target), CUDALOAD_BACKEND=backend)
    out = run_script(sys.executable, env, tmp_path)
    print(json.dumps({k: out[k] for k in ("status", "backend", "max_rel_err", "sample") if k in out}))
    print("cudart:", out["info"]["cudart"]["path"], out["info"]["cudart"]["source"])
    assert out["status"] == "CUDALOAD_OK", out.get("error")
    check_argument_errors(out)
    check_numbers(out)
    if backend == "cublas":
        assert out["backend"] == "cublas", out
        b = out["info"]["cublas"]
        assert b["status"] == "CUDALOAD_OK" and os.path.isabs(b["path"]), b


# ---- the README's steps, as written --------------------------------------------------------------

README = EXAMPLE / "README.md"
# the sections whose sh blocks are a user's steps, run in this directory of a clone, in order
README_SECTIONS = ("Build, check, install, run", "On a GPU machine")


def readme_steps():
    """{section: [the text of each ```sh block]} for README_SECTIONS."""
    out = {}
    for part in re.split(r"^## ", README.read_text(), flags=re.M)[1:]:
        title, _, body = part.partition("\n")
        if title.strip() in README_SECTIONS:
            out[title.strip()] = re.findall(r"^```sh\n(.*?)^```$", body, re.M | re.S)
    return out


def test_readme_steps_found_and_neutral():
    """The sections are there with their steps; no path of a development machine in the file."""
    steps = readme_steps()
    assert sorted(steps) == sorted(README_SECTIONS) and all(steps.values()), steps
    text = README.read_text()
    assert not re.findall(r"(?<![\w.])/(?:work|home|root|tmp|opt)/\S*", text), \
        re.findall(r"(?<![\w.])/(?:work|home|root|tmp|opt)/\S*", text)


def clone_copy(dest):
    """The repository's files as a clone has them, with this checkout's changes: the tracked and
    the untracked-but-not-ignored files (git ls-files), copied; no build output comes along."""
    names = sh(["git", "-C", REPO, "ls-files", "-z", "--cached", "--others", "--exclude-standard"]).stdout.split("\0")
    for name in filter(None, names):
        src, dst = REPO / name, dest / name
        if not os.path.lexists(src):  # deleted in the checkout, not yet committed
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            os.symlink(os.readlink(src), dst)
        else:
            shutil.copy2(src, dst)
    return dest


def run_section(title, clone, env):
    """One README section's sh blocks in one bash (set -e: the first failing command ends it,
    with its exit code), in examples/python-extension of the clone."""
    script = "set -eo pipefail\nset -x\n" + "\n".join(readme_steps()[title])
    return sh(["bash", "-c", script], check=False, env=env, cwd=clone / "examples" / "python-extension", timeout=2400)


def section_failed(title, r):
    return "README section %r exited %d:\n--- stdout\n%s\n--- stderr (the commands run: +)\n%s" % (
        title, r.returncode, r.stdout[-6000:], r.stderr[-8000:])


def test_readme_steps_as_written(tmp_path):
    """From a fresh copy, each section of the README runs as written to its last command,
    demo.py: exit 0 with a GPU, 2 without (no driver: the documented NO_DRIVER; or no device).
    Build, check, install, run: cudart taken from the .venv of step 0 (source caller), the
    module exporting PyInit__saxpy alone with no CUDA DT_NEEDED, one repaired wheel. On a GPU
    machine (no build isolation, --target site): the same steps in this interpreter, whose
    CUDA (if any) is taken."""
    if os.environ.get("CUDALOAD_TEST_NO_BUILD_ISOLATION") == "1":
        pytest.skip("CUDALOAD_TEST_NO_BUILD_ISOLATION=1 (no network here): the README's steps install from PyPI")
    nvcc = nvcc_path()
    if not nvcc:
        pytest.skip("nvcc not found (CUDA_HOME, PATH): the example compiles a .cu file")
    try:
        import ensurepip  # noqa: F401
    except ImportError:
        pytest.skip(f"{sys.executable} has no ensurepip: the README's step 0 makes a venv")
    clone = clone_copy(tmp_path / "clone")
    home = os.path.dirname(os.path.dirname(os.path.abspath(nvcc)))
    # a user's shell: this interpreter's python3 first (the GPU section builds with its setuptools)
    path = os.pathsep.join([str(Path(sys.executable).parent), os.path.dirname(nvcc), os.environ.get("PATH", "")])
    env = clean_env(PATH=path, CUDA_HOME=home)
    want = 0 if gpu_present()[0] else 2
    here = clone / "examples" / "python-extension"

    title = README_SECTIONS[0]
    r = run_section(title, clone, env)
    assert r.returncode == want and "saxpy_demo with libcudaload" in r.stdout, section_failed(title, r)
    site = Path(sh([here / ".venv" / "bin" / "python", "-c",
                    "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())
    m = re.search(r"^  cudart\s+CUDALOAD_OK\s+caller\s+(\S+)$", r.stdout, re.M)
    assert m and Path(m.group(1)).resolve() == (site / "nvidia" / "cu13" / "lib" / "libcudart.so.13").resolve(), \
        section_failed(title, r)
    needed = re.findall(r"\(NEEDED\)\s+Shared library: (\[[^\]]+\])", r.stdout)
    assert needed and not [n for n in needed if CUDA_LIB_RE.search(n)], section_failed(title, r)
    assert re.search(r"^\S+ T PyInit__saxpy$", r.stdout, re.M), section_failed(title, r)
    repaired = list((here / "wheelhouse").glob("saxpy_demo-*manylinux*.whl"))
    assert len(repaired) == 1, list((here / "wheelhouse").iterdir())
    if want == 2 and not driver_present():
        assert "saxpy: CUDALOAD_ERROR_NO_DRIVER" in r.stderr, section_failed(title, r)

    title = README_SECTIONS[1]
    r = run_section(title, clone, env)
    assert r.returncode == want and "saxpy_demo with libcudaload" in r.stdout, section_failed(title, r)
    assert (here / "site" / "saxpy_demo").is_dir() and (here / "site" / "cudaload").is_dir(), section_failed(title, r)
