# SPDX-License-Identifier: Apache-2.0
"""cudaload installed as users install it, beside real nvidia-* wheels from the registry.

Each environment is a real venv (or --target dir, or user site) made under the build dir;
the CUDA wheels come from tests/fixtures.sh's cache. The system and CUDA_HOME sources are
scoped out (CUDALOAD_SOURCES) because the development machine's /usr/local/cuda is in
ld.so.cache: what is found must come from the environment under test.

  venv-cu12   nvidia-cuda-runtime-cu12 + nvidia-cublas-cu12: nvidia/cuda_runtime/lib, nvidia/cublas/lib
  venv-cu13   nvidia-cuda-runtime (+ nvidia-cublas unless FIXTURES_CU13_CUBLAS=0): nvidia/cu13/lib
  venv-bare   no CUDA wheel: import works, probe() says not found, calls raise LibraryNotFoundError
  --target + PYTHONPATH, the user site (PYTHONUSERBASE): the runtime wheel found there
Without a GPU the driver is absent (or, for the driver scenarios, the fake libcuda.so.1 of
the C tests, which reports a chosen CUDA version and device count).
"""
import json
import os
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import (SHIM, SOURCES_NO_SYSTEM, VERSION, build_dir, clean_env, dedupe, driver_present, install_cuda_wheels,
                      install_shim, make_venv, pip, run_py, site_packages, sh, wheel_cache)

REPORT = textwrap.dedent(r"""
    import array, json, sys
    import cudaload
    p = cudaload.probe()
    out = {"roots": cudaload.search_roots(), "probe": p, "init": cudaload._init_status, "error": None}
    x = array.array("f", [1.0, 2.0, 3.0]); y = array.array("f", [1.0, 1.0, 1.0])
    try:
        cudaload.saxpy(2.0, x, y)
        out["y"] = list(y)
    except cudaload.CudaLoadError as e:
        out["error"] = {"type": type(e).__name__, "mro": [c.__name__ for c in type(e).__mro__], "status": e.status,
                        "fix": e.fix, "fixes": e.fixes, "library": e.library, "message": str(e)}
    print(json.dumps(out))
""")


def report(python, env):
    r = run_py(python, REPORT, env)
    return json.loads(r.stdout.strip().splitlines()[-1])


def lib(out, name):
    return out["probe"]["libraries"][name]


@pytest.fixture(scope="module")
def venv_cu12(shim_wheel):
    v = make_venv("venv-cu12", ["nvidia-cuda-runtime-cu12", "nvidia-cublas-cu12"])
    install_shim(shim_wheel, python=str(v / "bin" / "python"))
    return v


@pytest.fixture(scope="module")
def venv_cu13(shim_wheel):
    pkgs = ["nvidia-cuda-runtime"] + (["nvidia-cublas"] if os.environ.get("FIXTURES_CU13_CUBLAS", "1") != "0" else [])
    v = make_venv("venv-cu13", pkgs)
    install_shim(shim_wheel, python=str(v / "bin" / "python"))
    return v


@pytest.fixture(scope="module")
def venv_bare(shim_wheel):
    v = make_venv("venv-bare")
    install_shim(shim_wheel, python=str(v / "bin" / "python"))
    return v


def expect_no_gpu_error(out):
    """Without a GPU: the libraries are found, the call says there is no driver/device."""
    if driver_present():
        return
    err = out["error"]
    assert err and err["type"] == "NoDriverError", out["error"]
    assert "NoDeviceError" in err["mro"] and "CudaLoadError" in err["mro"], err
    assert "libcuda.so.1" in err["message"] and "install the NVIDIA driver" in err["message"], err


def test_cu12_venv_finds_its_wheels(venv_cu12):
    site = site_packages(venv_cu12)
    out = report(venv_cu12 / "bin" / "python", clean_env(CUDALOAD_SOURCES=SOURCES_NO_SYSTEM))
    assert str(site) in out["roots"], out["roots"]
    rt, blas, lt = lib(out, "cudart"), lib(out, "cublas"), lib(out, "cublasLt")
    assert rt["path"] == str(site / "nvidia/cuda_runtime/lib/libcudart.so.12"), rt
    assert rt["status"] == "loaded" and rt["source"] == "caller" and rt["major"] == 12, rt
    assert blas["path"] == str(site / "nvidia/cublas/lib/libcublas.so.12"), blas
    assert lt["path"] == str(site / "nvidia/cublas/lib/libcublasLt.so.12"), lt
    assert out["probe"]["system_search"] is False
    expect_no_gpu_error(out)


def test_cu13_venv_finds_its_wheels(venv_cu13):
    site = site_packages(venv_cu13)
    out = report(venv_cu13 / "bin" / "python", clean_env(CUDALOAD_SOURCES=SOURCES_NO_SYSTEM))
    assert str(site) in out["roots"], out["roots"]
    rt = lib(out, "cudart")
    assert rt["path"] == str(site / "nvidia/cu13/lib/libcudart.so.13"), rt
    assert rt["status"] == "loaded" and rt["source"] == "caller" and rt["major"] == 13, rt
    if os.environ.get("FIXTURES_CU13_CUBLAS", "1") != "0":
        for name in ("cublas", "cublasLt"):
            b = lib(out, name)
            assert b["path"] == str(site / f"nvidia/cu13/lib/lib{name}.so.13"), b
            assert b["status"] == "loaded" and b["source"] == "caller" and b["major"] == 13, b
    assert out["probe"]["system_search"] is False
    expect_no_gpu_error(out)


EXTRAS = {  # the extra, the directory its wheels install into, the major
    "cu12": ({"cudart": "nvidia/cuda_runtime/lib", "cublas": "nvidia/cublas/lib", "cublasLt": "nvidia/cublas/lib"}, 12),
    "cu13": ({"cudart": "nvidia/cu13/lib", "cublas": "nvidia/cu13/lib", "cublasLt": "nvidia/cu13/lib"}, 13),
}


@pytest.mark.parametrize("extra", sorted(EXTRAS))
def test_extra_installs_the_cuda_wheels(shim_wheel, extra):
    """pip install "cudaload[cu12]" / "cudaload[cu13]" into an empty venv brings the runtime and
    cuBLAS wheels of that major (resolved by pip from the extra, offline from the fixtures'
    cache), and the package then finds all three libraries in that venv."""
    import tomllib
    with open(Path(SHIM) / "pyproject.toml", "rb") as f:
        wanted = tomllib.load(f)["project"]["optional-dependencies"][extra]
    v = make_venv("venv-extra-" + extra)
    py = str(v / "bin" / "python")
    cache = wheel_cache()
    cmd = ["install", "--quiet", "--no-index", "--find-links", str(shim_wheel.parent), "--find-links", str(cache),
           f"cudaload[{extra}]"]
    r = sh([sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input", "--python", py, *cmd], check=False)
    if r.returncode != 0:  # the extra's wheels are not all in the cache yet: fetch them, as tests/fixtures.sh does
        pip("download", "--quiet", "--progress-bar", "off", "--dest", str(cache), *wanted)
        pip(*cmd, python=py)
    dedupe(v)
    install_shim(shim_wheel, python=py)  # this build's wheel, also when the venv kept an older one
    freeze = sh([sys.executable, "-m", "pip", "--python", py, "list", "--format=freeze"]).stdout
    for want in wanted:  # the extra's requirements are what pip installed
        name = want.split(">")[0].split("<")[0].split("=")[0].strip()
        assert f"{name}==" in freeze, (want, freeze)
    site = site_packages(v)
    out = report(v / "bin" / "python", clean_env(CUDALOAD_SOURCES=SOURCES_NO_SYSTEM))
    dirs, major = EXTRAS[extra]
    for name, d in dirs.items():
        info = lib(out, name)
        assert info["status"] == "loaded" and info["source"] == "caller" and info["major"] == major, info
        assert os.path.dirname(info["path"]) == str(site / d), (name, info["path"], site / d)
    expect_no_gpu_error(out)


def test_venv_without_cuda_wheels(venv_bare):
    """Import works; probe() says not found; a call raises LibraryNotFoundError naming what is
    missing and the pip command."""
    out = report(venv_bare / "bin" / "python", clean_env(CUDALOAD_SOURCES=SOURCES_NO_SYSTEM))
    rt = lib(out, "cudart")
    assert rt["status"] == "not_found" and rt["path"] is None, rt
    assert out["probe"]["exit_code"] == 1
    err = out["error"]
    assert err["type"] == "LibraryNotFoundError" and err["status"] == "CUDALOAD_ERROR_NOT_FOUND", err
    assert err["library"] == "cudart", err
    assert str(site_packages(venv_bare)) in err["message"], err["message"]  # the roots searched
    # the fixes are libcudaload's (the runtime's packages, and cuBLAS's of the same major), with
    # this interpreter's pip; each is a line of the message
    assert err["fix"] == err["fixes"][0] and all("\nfix: " + f in err["message"] for f in err["fixes"]), err
    assert ("`%s -m pip install " % (venv_bare / "bin" / "python")) in err["fix"], err["fix"]
    assert "nvidia-cuda-runtime" in err["fix"] and "nvidia-cublas" in err["fix"], err
    assert not any("cudaload-probe" in f for f in err["fixes"]), err["fixes"]
    if not driver_present():  # no driver: both majors are offered
        assert '"nvidia-cuda-runtime==13.*"' in err["fixes"][0] and "nvidia-cuda-runtime-cu12" in err["fixes"][1], err["fixes"]


def test_python_m_cudaload(venv_bare, venv_cu13):
    """python -m cudaload: the probe's text report and exit code; --json the same schema as
    cudaload-probe --json."""
    env = clean_env(CUDALOAD_SOURCES=SOURCES_NO_SYSTEM)
    bare = sh([venv_bare / "bin" / "python", "-m", "cudaload"], env=env, check=False, cwd=build_dir())
    assert bare.returncode == 1, bare.stdout + bare.stderr
    assert "libcudaload %s: python -m cudaload" % VERSION in bare.stdout and "\nResult: a required library is missing" in bare.stdout
    # commands a Python user has: this interpreter's pip, python -m cudaload; never cudaload-probe
    flat = " ".join(bare.stdout.split())
    assert "fix: %s -m pip install" % (venv_bare / "bin" / "python") in flat, bare.stdout
    assert "python -m cudaload with that environment's python" in flat and "cudaload-probe" not in flat, bare.stdout
    assert "\n  cudart    library not found (CUDALOAD_ERROR_NOT_FOUND)\n" in bare.stdout, bare.stdout
    assert "(the system search is scoped out by CUDALOAD_SOURCES)" in bare.stdout, bare.stdout
    js = sh([venv_cu13 / "bin" / "python", "-m", "cudaload", "--json"], env=env, check=False, cwd=build_dir())
    doc = json.loads(js.stdout)
    assert js.returncode == doc["exit_code"]
    assert doc["libraries"]["cudart"]["source"] == "caller"
    assert sh([venv_bare / "bin" / "python", "-m", "cudaload", "--bogus"], env=env, check=False).returncode == 4


def test_probe_schema_matches_the_cli(venv_bare):
    """probe() and cudaload-probe --json: the same keys at every level (same C code), and the
    same findings for the same search (the CLI given the venv's site-packages as --root)."""
    probe_bin = Path(os.environ.get("CUDALOAD_TEST_BUILD", "")) / "cudaload-probe"
    if not probe_bin.exists():
        pytest.skip("no cudaload-probe in CUDALOAD_TEST_BUILD (make check-python builds it)")
    env = clean_env(CUDALOAD_SOURCES=SOURCES_NO_SYSTEM)
    py = json.loads(run_py(venv_bare / "bin" / "python", "import json, cudaload; print(json.dumps(cudaload.probe()))",
                           env).stdout)
    site = site_packages(venv_bare)
    cli = json.loads(sh([probe_bin, "--json", "--no-selftest", "--root", site], env=env, check=False).stdout)

    def keys(d, prefix=""):
        out = set()
        if isinstance(d, dict):
            for k, v in d.items():
                out.add(prefix + k)
                out |= keys(v, prefix + k + ".")
        elif isinstance(d, list) and d and isinstance(d[0], dict):
            out |= keys(d[0], prefix + "[].")
        return out

    assert keys(py) == keys(cli)
    for name in ("cudart", "cublas", "cuda"):
        assert py["libraries"][name]["status"] == cli["libraries"][name]["status"], name
    assert py["exit_code"] == cli["exit_code"] and py["schema_version"] == cli["schema_version"]


def test_pip_install_from_the_repo_in_a_clean_venv(tmp_path):
    """`pip install ./python-shim` in a fresh venv, as a user runs it (build isolation: pip
    fetches setuptools; the build reuses this test run's libcudaload objects through
    CUDALOAD_BUILD_BASE). Then it imports and reports."""
    v = tmp_path / "venv"
    sh([sys.executable, "-m", "venv", v])
    env = dict(os.environ, CUDALOAD_BUILD_BASE=str(build_dir() / "setuptools"), PIP_DISABLE_PIP_VERSION_CHECK="1")
    sh([v / "bin" / "python", "-m", "pip", "install", "--quiet", SHIM], env=env, cwd=tmp_path)
    r = run_py(v / "bin" / "python", "import cudaload, json; p = cudaload.probe(); "
               "print(json.dumps([cudaload.__file__, p['schema_version'], p['libraries']['cudart']['status']]))",
               clean_env(CUDALOAD_SOURCES=SOURCES_NO_SYSTEM))
    where, schema, status = json.loads(r.stdout)
    assert where.startswith(str(v)) and schema == 1 and status == "not_found", r.stdout


def test_target_dir_on_pythonpath(shim_wheel, venv_bare, tmp_path):
    """pip install --target DIR, DIR on PYTHONPATH: the runtime wheel is found there."""
    cuda = build_dir() / "target-cu13-runtime"
    if not (cuda / "nvidia/cu13/lib/libcudart.so.13").is_file():
        install_cuda_wheels(["nvidia-cuda-runtime"], target=cuda)
    shim = tmp_path / "shim"
    install_shim(shim_wheel, target=shim)
    out = report(venv_bare / "bin" / "python",
                 clean_env(PYTHONPATH="%s:%s" % (shim, cuda), CUDALOAD_SOURCES=SOURCES_NO_SYSTEM))
    assert str(cuda) in out["roots"] and str(shim) in out["roots"], out["roots"]
    rt = lib(out, "cudart")
    assert rt["path"] == str(cuda / "nvidia/cu13/lib/libcudart.so.13") and rt["source"] == "caller", rt


def test_user_site(shim_wheel, tmp_path):
    """The user site (PYTHONUSERBASE) of a venv that sees it (--system-site-packages): both
    the package and the runtime wheel installed there."""
    v = make_venv("venv-usersite", system_site=True)
    py = v / "bin" / "python"
    env = clean_env(PYTHONUSERBASE=tmp_path / "userbase", CUDALOAD_SOURCES=SOURCES_NO_SYSTEM)
    env.pop("PYTHONNOUSERSITE")
    user_site = Path(run_py(py, "import site; print(site.getusersitepackages())", env).stdout.strip())
    assert str(user_site).startswith(str(tmp_path)), user_site
    install_cuda_wheels(["nvidia-cuda-runtime"], target=user_site)
    install_shim(shim_wheel, target=tmp_path / "t")
    for item in (tmp_path / "t").iterdir():
        os.rename(item, user_site / item.name)
    out = report(py, env)
    assert str(user_site) in out["roots"], out["roots"]
    rt = lib(out, "cudart")
    assert rt["path"] == str(user_site / "nvidia/cu13/lib/libcudart.so.13"), rt


def fake_driver():
    b = os.environ.get("CUDALOAD_TEST_BUILD")
    f = Path(b) / "fake" / "libcuda.so.1" if b else None
    if not f or not f.exists():
        pytest.skip("the fake libcuda.so.1 of the C tests is not built (make check-python builds it)")
    return f


@pytest.mark.parametrize("version,expect_fix", [
    (12080, "nvidia-cuda-runtime-cu12 nvidia-cublas-cu12"),
    (11080, "upgrade the NVIDIA driver"),
])
def test_driver_too_old(venv_cu13, version, expect_fix):
    """A CUDA 12 (or 11) driver with only CUDA 13 wheels: DriverTooOldError; its fix is the
    CUDA 12 wheels for a CUDA 12 driver, a driver upgrade for an older one."""
    out = report(venv_cu13 / "bin" / "python", clean_env(CUDALOAD_SOURCES=SOURCES_NO_SYSTEM,
                                                         CUDALOAD_DRIVER_PATH=fake_driver(), FAKE_CUDA_VERSION=version))
    err = out["error"]
    assert err["type"] == "DriverTooOldError" and err["status"] == "CUDALOAD_ERROR_DRIVER_TOO_OLD", err
    assert "CUDA 13 runtime needs a CUDA 13 driver" in err["message"], err["message"]
    assert expect_fix in err["fix"], err["fix"]
    assert lib(out, "cudart")["status"] == "error"


def test_no_device(venv_cu13):
    out = report(venv_cu13 / "bin" / "python", clean_env(CUDALOAD_SOURCES=SOURCES_NO_SYSTEM,
                                                         CUDALOAD_DRIVER_PATH=fake_driver(), FAKE_CUDA_DEVICES=0))
    err = out["error"]
    assert err["type"] == "NoDeviceError" and err["status"] == "CUDALOAD_ERROR_NO_DEVICE", err
    assert "CUDA_ERROR_NO_DEVICE" in err["message"] and any("nvidia-smi" in f for f in err["fixes"]), err
    assert lib(out, "cudart")["status"] == "loaded"
    assert out["probe"]["devices_status"] == "CUDALOAD_ERROR_NO_DEVICE"


def test_cu12_driver_picks_cu12_wheels_fix(venv_bare):
    """No CUDA wheel and a CUDA 12 driver: the fix names the -cu12 wheels only."""
    out = report(venv_bare / "bin" / "python", clean_env(CUDALOAD_SOURCES=SOURCES_NO_SYSTEM,
                                                         CUDALOAD_DRIVER_PATH=fake_driver(), FAKE_CUDA_VERSION=12040))
    err = out["error"]
    assert err["type"] == "LibraryNotFoundError", err
    assert "nvidia-cuda-runtime-cu12 nvidia-cublas-cu12" in err["fix"] and not any("==13" in f for f in err["fixes"]), err


def test_invalid_option_is_a_value_error_not_an_import_error(venv_bare):
    code = textwrap.dedent("""
        import array, cudaload
        try:
            cudaload.saxpy(1.0, array.array("f", [1.0]), array.array("f", [1.0]))
        except ValueError as e:
            print("ValueError:", e)
    """)
    r = run_py(venv_bare / "bin" / "python", code, clean_env(CUDALOAD_SOURCES="nowhere"))
    assert r.stdout.startswith("ValueError:") and "CUDALOAD_SOURCES" in r.stdout, r.stdout


def test_invalid_value_exits_4_with_the_reason(venv_bare):
    """An invalid CUDALOAD_* value: python -m cudaload says why on stderr and exits 4, as
    cudaload-probe does (not "library not found", exit 1); probe() has exit code 4 and the
    reason as its problem."""
    env = clean_env(CUDALOAD_SOURCES="caller,nowhere")
    for args in ([], ["--json"]):
        r = sh([venv_bare / "bin" / "python", "-m", "cudaload"] + args, env=env, check=False, cwd=build_dir())
        assert r.returncode == 4, (args, r.returncode, r.stdout, r.stderr)
        assert r.stdout == "" and r.stderr.startswith("python -m cudaload: CUDALOAD_SOURCES: unknown source 'nowhere'"), r
    p = json.loads(run_py(venv_bare / "bin" / "python", "import json, cudaload; print(json.dumps(cudaload.probe()))",
                          env).stdout)
    assert p["exit_code"] == 4 and p["init_status"] == "CUDALOAD_ERROR_INVALID_OPTION", p
    assert p["problems"][0].startswith("CUDALOAD_SOURCES: unknown source 'nowhere'"), p["problems"]
    # the CLI, on the same value: the same code, the same reason
    probe_bin = Path(os.environ.get("CUDALOAD_TEST_BUILD", "")) / "cudaload-probe"
    if probe_bin.exists():
        cli = sh([probe_bin], env=env, check=False)
        assert cli.returncode == 4 and cli.stderr.split(": ", 1)[1] == r.stderr.split(": ", 1)[1], (cli.stderr, r.stderr)


LIBRARY = textwrap.dedent(r"""
    import json, sys
    import cudaload
    out = {"catalogue": cudaload.catalogue(), "probe": cudaload.probe()}
    out["library"] = {n: cudaload.library(n) for n in sys.argv[1:]}
    try:
        cudaload.library("no-such-library")
    except ValueError as e:
        out["unknown"] = str(e)
    print(json.dumps(out))
""")


def test_library_and_catalogue(venv_bare):
    """cudaload.library(name): a library's fields, the same keys and values as the probe's JSON
    for it (one field list); its fixes are libcudaload's, with the catalogue's pip packages.
    cudaload.catalogue(): every row, as cudaload-probe --catalogue lists them."""
    env = clean_env(CUDALOAD_SOURCES=SOURCES_NO_SYSTEM)
    out = json.loads(run_py(venv_bare / "bin" / "python", LIBRARY, env, args=("cudart", "cufft", "cuda")).stdout)
    cat, lib, probe = out["catalogue"], out["library"], out["probe"]
    for name in ("cudart", "cuda"):
        assert lib[name] == probe["libraries"][name], (name, lib[name], probe["libraries"][name])
    assert set(lib["cufft"]) == set(probe["libraries"]["cudart"]), lib["cufft"]
    assert lib["cudart"]["status"] == "not_found" and lib["cudart"]["status_code"] == "CUDALOAD_ERROR_NOT_FOUND"
    # the advisor's fixes, from the catalogue's rows: the pip package of each CUDA major
    for name in ("cudart", "cufft"):
        fixes = [f for f in lib[name]["fixes"] if f["kind"] == "pip_install"]
        want = {m: p for m, p in zip(cat[name]["majors"], cat[name]["pip_packages"])}
        if driver_present():
            assert fixes, lib[name]
        else:
            assert {f["major"]: f["packages"] for f in fixes} == {m: [p] for m, p in want.items()}, (fixes, want)
    assert "no-such-library" in out["unknown"] and "cufft" in out["unknown"], out["unknown"]
    # the catalogue: every row, in id order, with its per-major lists aligned
    assert list(cat)[:4] == ["cuda", "cudart", "cublasLt", "cublas"] and [r["id"] for r in cat.values()] == list(range(len(cat)))
    assert cat["cudart"]["sonames"] == ["libcudart.so.13", "libcudart.so.12"] and cat["cudart"]["majors"] == [13, 12]
    assert cat["cuda"]["driver_like"] and cat["cuda"]["sonames"] == ["libcuda.so.1"] and cat["cuda"]["pip_packages"] == []
    assert all(len(r["majors"]) == len(r["wheel_dirs"]) == len(r["pip_packages"]) for r in cat.values())
    probe_bin = Path(os.environ.get("CUDALOAD_TEST_BUILD", "")) / "cudaload-probe"
    if probe_bin.exists():
        rows = sh([probe_bin, "--catalogue"], env=env).stdout.splitlines()[1:]
        assert [r.split("\t")[0] for r in rows] == list(cat)
        assert [r.split("\t")[4] for r in rows] == [",".join(c["pip_packages"]) for c in cat.values()]


def test_cublas_missing_names_its_package(venv_bare):
    """The CUDA 13 runtime (a --target dir on PYTHONPATH) and no cuBLAS: cuBLAS's fixes are
    libcudaload's, its pip package of the runtime's major, pinned; the report's fix names it
    with this interpreter's pip."""
    cuda = build_dir() / "target-cu13-runtime"
    if not (cuda / "nvidia/cu13/lib/libcudart.so.13").is_file():
        install_cuda_wheels(["nvidia-cuda-runtime"], target=cuda)
    code = textwrap.dedent("""
        import json, cudaload
        print(json.dumps([cudaload.library("cublas"), cudaload.probe()]))
    """)
    env = clean_env(PYTHONPATH=cuda, CUDALOAD_SOURCES=SOURCES_NO_SYSTEM)
    blas, probe = json.loads(run_py(venv_bare / "bin" / "python", code, env).stdout)
    assert probe["libraries"]["cudart"]["major"] == 13 and blas["status_code"] == "CUDALOAD_ERROR_NOT_FOUND", (blas, probe)
    assert [[f["kind"], f["major"], f["requirements"]] for f in blas["fixes"]] == [["pip_install", 13, ["nvidia-cublas==13.*"]]]
    pips = [f for f in probe["fix_plan"] if f["kind"] == "pip_install"]
    assert [[f["requirements"], f["libraries"]] for f in pips] == [[["nvidia-cublas==13.*"], ["cublasLt", "cublas"]]], probe
    assert probe["fixes"][0].startswith('`%s -m pip install "nvidia-cublas==13.*"`' % (venv_bare / "bin" / "python"))
