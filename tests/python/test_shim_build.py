# SPDX-License-Identifier: Apache-2.0
"""The cudaload wheel and sdist (python-shim/): what is in them and what the extension links.

The wheel is built once per session (conftest.shim_wheel). Checked: no DT_NEEDED on any CUDA
library (nothing but libc and the loader), no RPATH/RUNPATH, only PyInit__cudaload exported
(libcudaload's symbols hidden), the bundled kernels there when nvcc was (read from the archive the wheel carries for
extension builders, which the module checks: missing or another build's refused, never loaded),
abi3 on Python >= 3.11, the module < 1 MB and the wheel < 2.5 MB compressed; `auditwheel show` gives a manylinux tag and `auditwheel repair`
succeeds with no --exclude and grafts nothing; the sdist carries the library sources and a
wheel built from it (outside the repository, no nvcc) imports and reports. The sdist, the wheel
and the one built from the sdist carry LICENSE and name it, with the SPDX expression, in their
metadata (PEP 639), and their version is include/cudaload.h's.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from conftest import (REPO, SHIM, SOURCES_NO_SYSTEM, auditwheel_show_and_repair, build_dir, clean_env, install_shim, make_venv,
                      VERSION, package_stubs, run_py, sh)

# a fatbin's header starts with its magic, 0xBA55ED50, and version 1 (little-endian)
FATBIN_HEADER = bytes([0x50, 0xED, 0x55, 0xBA, 1, 0])
CUDA_LIB = re.compile(r"\[(libcuda|libcudart|libcublas|libcublasLt|libnvrtc|libnvJitLink|libcudaload)[.\]]")


@pytest.fixture(scope="module")
def extension(shim_wheel, tmp_path_factory):
    d = tmp_path_factory.mktemp("wheel")
    with zipfile.ZipFile(shim_wheel) as z:
        names = [n for n in z.namelist() if re.match(r"cudaload/_cudaload\..*so$", n)]
        assert len(names) == 1, z.namelist()
        z.extract(names[0], d)
    return d / names[0]


def nvcc_available():
    home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    if "CUDALOAD_NVCC" in os.environ:
        return bool(os.environ["CUDALOAD_NVCC"])
    return os.access(os.path.join(home, "bin", "nvcc"), os.X_OK) or shutil.which("nvcc") is not None


def assert_license(meta, archive, where):
    """The license as PEP 639 has it: the SPDX expression and the file named in the metadata (an
    sdist's PKG-INFO, a wheel's METADATA), and the repository's LICENSE, whole, in the archive
    (the sdist's top, the wheel's .dist-info/licenses/; older setuptools: .dist-info/)."""
    assert re.search(r"^Metadata-Version: 2\.[4-9]$", meta, re.M), meta[:1500]
    assert re.search(r"^License-Expression: Apache-2\.0$", meta, re.M), meta[:1500]
    assert re.search(r"^License-File: LICENSE$", meta, re.M), meta[:1500]
    assert not re.search(r"^(License:|Classifier: License ::)", meta, re.M), "a second license statement: " + meta[:1500]
    assert re.search(r"^Version: %s$" % re.escape(VERSION), meta, re.M), meta[:1500]
    names = archive.getnames() if isinstance(archive, tarfile.TarFile) else archive.namelist()
    found = [n for n in names if n in (where + "LICENSE", where + "licenses/LICENSE")]
    assert len(found) == 1, (where, [n for n in names if "LICENSE" in n])
    data = (archive.extractfile(found[0]) if isinstance(archive, tarfile.TarFile) else archive.open(found[0])).read()
    assert data == (REPO / "LICENSE").read_bytes(), "%s is not the repository's LICENSE" % found[0]


def test_wheel_contents_and_size(shim_wheel):
    """The module < 1 MB and the whole wheel < 2.5 MB, compressed. The wheel carries, for extension
    builders, the headers, libcudaload.a and the stub archives, debug info stripped; the kernels'
    fatbin once, in libcudaload.a, where a static link needs it and from where the module reads it
    (2,102,939 bytes with CUDA 13.0; 3,061,299 when the module embedded a copy of its own)."""
    size = shim_wheel.stat().st_size
    assert size < 2_500_000, "the wheel is %d bytes: the limit is 2.5 MB" % size
    with zipfile.ZipFile(shim_wheel) as z:
        infos = z.infolist()
    names = [i.filename for i in infos]
    module = [i for i in infos if re.match(r"cudaload/_cudaload\..*so$", i.filename)]
    # 226,028 bytes with the 19 libraries' tables and the kernels in libcudaload.a (1,227,773
    # when it embedded them: the fatbin is 1.0 MB, compressed by nvcc already)
    assert len(module) == 1 and module[0].compress_size < 1_000_000, [(i.filename, i.compress_size) for i in module]
    assert "cudaload/__init__.py" in names and "cudaload/__main__.py" in names, names
    assert not [n for n in names if n.endswith((".c", ".o"))], names
    stubs = package_stubs()
    want = ["cudaload/include/cudaload.h", "cudaload/include/cudaload_tables.h", "cudaload/include/cudaload_stubs.h",
            "cudaload/lib/libcudaload.a", "cudaload/lib/pkgconfig/cudaload.pc",
            "cudaload/lib/cmake/cudaload/cudaloadConfig.cmake", "cudaload/lib/cmake/cudaload/cudaloadConfigVersion.cmake",
            "cudaload/lib/cmake/cudaload/cudaload-cuda-stubs.cmake", "cudaload/lib/cmake/cudaload/cudaload-check-needed.cmake",
            "cudaload/lib/cmake/cudaload/cudaload-cuda-toolkit.cmake"]
    want += ["cudaload/include/cudaload_%s.h" % s for s in stubs]
    want += ["cudaload/lib/libcudaload-%s.a" % s for s in stubs] + ["cudaload/lib/pkgconfig/cudaload-%s.pc" % s for s in stubs]
    assert not [w for w in want if w not in names], [w for w in want if w not in names]
    assert not [n for n in names if n.endswith((".h", ".a")) and not n.startswith(("cudaload/include/", "cudaload/lib/"))]
    eps = zipfile.ZipFile(shim_wheel).read("cudaload-%s.dist-info/entry_points.txt" % VERSION).decode()
    assert re.search(r"^\[cmake\.prefix\]\s+cudaload = cudaload$", eps, re.M), eps
    assert re.search(r"^\[pkg_config\]\s+cudaload = cudaload\.lib\.pkgconfig$", eps, re.M), eps
    if sys.version_info >= (3, 11):
        assert "-cp311-abi3-" in shim_wheel.name, shim_wheel.name
    meta = zipfile.ZipFile(shim_wheel).read("cudaload-%s.dist-info/METADATA" % VERSION).decode()
    assert_license(meta, zipfile.ZipFile(shim_wheel), "cudaload-%s.dist-info/" % VERSION)
    extras = re.findall(r"^Requires-Dist: (.*)$", meta, re.M)
    assert 'nvidia-cuda-runtime-cu12; extra == "cu12"' in extras, extras
    assert 'nvidia-cublas-cu12; extra == "cu12"' in extras, extras
    assert 'nvidia-cuda-runtime<14,>=13; extra == "cu13"' in extras, extras
    assert 'nvidia-cublas<14,>=13; extra == "cu13"' in extras, extras
    assert not [e for e in extras if "extra ==" not in e], "no CUDA dependency without an extra: %s" % extras


def test_extension_links_no_cuda_and_exports_only_pyinit(extension):
    dyn = sh(["readelf", "-d", "-W", extension]).stdout
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dyn)
    assert needed, dyn
    assert not [n for n in needed if CUDA_LIB.search("[" + n + "]")], needed
    assert set(needed) <= {"libc.so.6", "ld-linux-x86-64.so.2", "libdl.so.2", "libpthread.so.0", "libm.so.6"}, needed
    assert "RPATH" not in dyn and "RUNPATH" not in dyn, dyn
    syms = sh(["nm", "-D", "--defined-only", extension]).stdout.split("\n")
    exported = sorted(line.split()[-1] for line in syms if line.strip())
    assert exported == ["PyInit__cudaload"], exported


def test_kernels_embedded_when_nvcc(shim_target):
    """With nvcc the kernels are there, one SASS per family (the Makefile's KERNEL_FAMILIES), not
    every architecture nvcc lists, and PTX of the newest: in the package's lib/libcudaload.a, which
    the module reads them from (its image_file), holding no copy of its own; without nvcc there are
    none. What holds the module and the wheel under their limits is test_wheel_contents_and_size."""
    venv = make_venv("venv-bare")
    r = run_py(venv / "bin" / "python", "import json, cudaload; k = cudaload.probe()['kernels']; "
               "print(json.dumps([cudaload.KERNELS_BUILT, k['built'], k['sass'], k['ptx'], k['fatbin_bytes'], k['image_file']]))",
               clean_env(PYTHONPATH=shim_target, CUDALOAD_SOURCES=SOURCES_NO_SYSTEM))
    flag, built, sass, ptx, size, image_file = json.loads(r.stdout)
    assert flag == built == nvcc_available(), r.stdout
    # no fatbin in the module: its header's magic and version (a linker merges the section's name away)
    module = next((shim_target / "cudaload").glob("_cudaload.*so")).read_bytes()
    assert FATBIN_HEADER not in module, "the module holds a fatbin of its own"
    if built:
        assert 90 in sass and sass == sorted(sass) and ptx == sass[-1], (sass, ptx)
        assert not [a for a in sass if a in (87, 88, 89, 103, 121)], "covered by a lower SASS of the family: %s" % sass
        # 1,008,680 bytes for the 7 architectures and PTX
        assert 0 < size < 1_100_000, size
        assert image_file == "lib/libcudaload.a", image_file
        archive = shim_target / "cudaload" / "lib" / "libcudaload.a"
        assert archive.read_bytes().count(FATBIN_HEADER) == 1, "the archive holds no fatbin, or two"
        assert ".rodata.cudaload_fatbin" in sh(["readelf", "-S", "-W", str(archive)]).stdout
    else:
        assert image_file is None, image_file


def fake_launch_driver():
    b = os.environ.get("CUDALOAD_TEST_BUILD")
    fake = Path(b) / "fake" / "launch" / "libcuda.so.1" if b else None
    if not fake or not fake.exists():
        pytest.skip("the fake libcuda.so.1 with the launch API of the C tests is not built (make check-python builds it)")
    return fake


KERNELS_STATUS = ("import json, cudaload; d = cudaload.probe()['devices'][0]; "
                  "print(json.dumps([d['kernels'], d['kernels_status'], d['kernels_reason']]))")


def spoil_archive(path, how):
    """The package's lib/libcudaload.a, spoilt one way (what a partial install, a file of another
    build or a disk error leaves)."""
    data = bytearray(path.read_bytes())
    fatbin = data.find(FATBIN_HEADER)
    assert fatbin > 0
    if how == "missing":
        path.unlink()
    elif how == "byte":  # one byte of the fatbin changed: the checksum differs
        data[fatbin + 5000] ^= 0xFF
        path.write_bytes(bytes(data))
    elif how == "truncated":  # ends inside the fatbin
        path.write_bytes(bytes(data[:fatbin + 4096]))
    elif how == "not_archive":
        path.write_bytes(b"\x7fELF" + bytes(data[4:]))
    elif how == "no_member":  # an archive without fatbin.o
        path.unlink()
        other = path.parent / "status.o"
        other.write_bytes(b"\x7fELF" + b"\0" * 60)
        sh(["ar", "rc", str(path), str(other)])
        other.unlink()
    elif how == "empty":
        path.write_bytes(b"")


@pytest.mark.parametrize("how", ["missing", "byte", "truncated", "not_archive", "no_member", "empty"])
def test_kernels_file_refused_unless_the_builds(shim_target, tmp_path, how):
    """On a device (the fake driver with the launch API: it refuses an image without a fatbin's
    header, as the real one does), the kernels run when the package's lib/libcudaload.a is this
    build's, and are refused with CUDALOAD_ERROR_KERNELS_FILE, naming the file, when it is missing
    or spoilt (SAXPY/SGEMM then take cuBLAS, backend auto); the status raises
    KernelsUnavailableError with the reinstall fix."""
    if not nvcc_available():
        pytest.skip("no nvcc: the package has no kernels")
    fake = fake_launch_driver()
    env = clean_env(CUDALOAD_DRIVER_PATH=fake, CUDALOAD_SOURCES="caller")
    venv = make_venv("venv-bare")
    copy = tmp_path / "t"
    shutil.copytree(shim_target, copy, symlinks=True)
    ok = json.loads(run_py(venv / "bin" / "python", KERNELS_STATUS, dict(env, PYTHONPATH=str(copy))).stdout)
    assert ok[:2] == ["sass", "CUDALOAD_OK"], ok
    archive = copy / "cudaload" / "lib" / "libcudaload.a"
    spoil_archive(archive, how)
    bad = json.loads(run_py(venv / "bin" / "python", KERNELS_STATUS, dict(env, PYTHONPATH=str(copy))).stdout)
    assert bad[:2] == ["none", "CUDALOAD_ERROR_KERNELS_FILE"], bad
    assert str(archive) in bad[2], bad
    r = run_py(venv / "bin" / "python", "import cudaload\n"
               "try:\n    cudaload._raise(cudaload._cudaload.StatusError(19, 'detail', None))\n"
               "except cudaload.KernelsUnavailableError as e:\n    print(e.status, '|'.join(e.fixes))\n",
               dict(env, PYTHONPATH=str(copy)))
    assert r.stdout.startswith("CUDALOAD_ERROR_KERNELS_FILE ") and "--force-reinstall" in r.stdout, r.stdout


def test_auditwheel_show_and_repair(shim_wheel, tmp_path):
    """manylinux_2_28 or lower (zig builds for glibc 2.28), nothing to graft, no --exclude."""
    auditwheel_show_and_repair(shim_wheel, tmp_path)


def test_sdist_carries_the_library_and_builds_outside_the_repo(tmp_path):
    """python -m build --sdist equivalent (setup.py sdist through pip's backend): the sdist has
    libcudaload-src/ (Makefile, include, libcudaload, kernels, stubs, cmake, tools/probe_*) and LICENSE
    (its metadata names it, Apache-2.0), and a wheel built from the unpacked sdist, away from the
    repository and without nvcc, works and carries the license too."""
    env = dict(os.environ, CUDALOAD_BUILD_BASE=str(tmp_path / "sb"))
    sh([sys.executable, "-c", "import sys; from setuptools import build_meta as b; print(b.build_sdist(sys.argv[1]))",
        tmp_path], cwd=SHIM, env=env)
    sdists = list(tmp_path.glob("cudaload-*.tar.gz"))
    assert len(sdists) == 1, list(tmp_path.iterdir())
    top = "cudaload-%s/" % VERSION
    with tarfile.open(sdists[0]) as t:
        names = t.getnames()
        # the license: PKG-INFO's expression and file, LICENSE at the top (python-shim/LICENSE is a
        # link to the repository's: the sdist carries the file itself)
        assert_license(t.extractfile(top + "PKG-INFO").read().decode(), t, top)
        assert t.getmember(top + "LICENSE").isfile()
        t.extractall(tmp_path / "x")
    for f in ("pyproject.toml", "setup.py", "src/cudaload/_cudaload.c", "src/cudaload/_arrays.c",
              "src/cudaload/_arrays.h", "src/cudaload/__init__.py",
              "libcudaload-src/Makefile", "libcudaload-src/libcudaload/cudaload.c", "libcudaload-src/include/cudaload.h",
              "libcudaload-src/kernels/saxpy.cu", "libcudaload-src/stubs/stub_core.c", "libcudaload-src/stubs/gen/cudart.c",
              "libcudaload-src/cmake/cudaloadConfig.cmake.in", "libcudaload-src/libcudaload/cudaload-stub.pc.in",
              "backend/cudaload_backend.py", "libcudaload-src/tools/cuda-pins.txt",
              # the wheel-only stubs' headers: the pins, the older ones, and the digests they are verified with
              "libcudaload-src/tools/wheel_files.py", "libcudaload-src/tools/api/wheel-libs.txt",
              "libcudaload-src/tools/api/wheel-older.txt", "libcudaload-src/tools/api/wheel-files.sha256",
              # the module's kernels read from the archive: what checks them, at build and run time
              "libcudaload-src/tools/image_sum.c", "libcudaload-src/libcudaload/kernels_image.c"):
        assert top + f in names, (f, names)
    # the probe's report, every file of it (gather, diagnose, self-test, render, ...)
    probe_files = sorted(p.name for p in (REPO / "tools").glob("probe_*.[ch]"))
    assert "probe_report.c" in probe_files and "probe_json.c" in probe_files, probe_files
    for f in probe_files:
        assert top + "libcudaload-src/tools/" + f in names, (f, names)
    src = tmp_path / "x" / ("cudaload-" + VERSION)
    dist = tmp_path / "dist"
    env = dict(os.environ, CUDALOAD_NVCC="", CUDALOAD_BUILD_BASE=str(tmp_path / "wb"))
    env.pop("CUDALOAD_SOURCE_DIR", None)
    sh([sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "--disable-pip-version-check",
        "-w", dist, src], env=env, cwd=tmp_path)
    wheel = next(dist.glob("cudaload-*.whl"))
    with zipfile.ZipFile(wheel) as z:  # the development tree too, and the license
        assert "cudaload/lib/libcudaload-cudart.a" in z.namelist() and "cudaload/lib/pkgconfig/cudaload.pc" in z.namelist()
        assert_license(z.read("cudaload-%s.dist-info/METADATA" % VERSION).decode(), z, "cudaload-%s.dist-info/" % VERSION)
        # a wheel-only library's stub: its headers fetched and verified from the sdist's own files
        assert "cudaload/lib/libcudaload-nccl.a" in z.namelist(), sorted(n for n in z.namelist() if n.endswith(".a"))
    venv = make_venv("venv-bare")
    target = tmp_path / "t"
    install_shim(wheel, target=target)
    r = run_py(venv / "bin" / "python", "import json, cudaload; print(json.dumps([cudaload.KERNELS_BUILT, "
               "cudaload.probe()['kernels']['built']]))", env=clean_env(PYTHONPATH=target, CUDALOAD_SOURCES=SOURCES_NO_SYSTEM))
    assert json.loads(r.stdout) == [False, False], r.stdout


def test_repo_has_no_build_leftovers():
    """The in-tree build must not leave files git would pick up (.gitignore covers them)."""
    r = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all", "--", "python-shim"], cwd=REPO,
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip("not a git checkout")
    stray = [line for line in r.stdout.splitlines() if re.search(r"(build/|\.egg-info|libcudaload-src|\.so$)", line)]
    assert not stray, stray


def test_build_says_its_steps(shim_wheel):
    """`pip wheel -v` (the fixture's) shows the backend's progress: the wheel, libcudaload by its
    Makefile and the module, each as it starts and as it ends with what it made, in that order."""
    if os.environ.get("CUDALOAD_SHIM_WHEEL"):
        pytest.skip("CUDALOAD_SHIM_WHEEL: a wheel built elsewhere, no build log here")
    log = (build_dir() / "build.log").read_text()
    steps = [r"cudaload: building the wheel: libcudaload by its Makefile, then the module cudaload\._cudaload \.\.\.",
             r"cudaload: \[1/2\] libcudaload from .*: libcudaload\.a, the stub archives.*; kernels: .*; C compiler: ",
             r"cudaload: \[1/2\] libcudaload: .*libcudaload\.a \([0-9.]+ MB\), [0-9]+ s",
             r"cudaload: \[2/2\] the module cudaload\._cudaload: [0-9]+ C files, linked with libcudaload\.a \.\.\.",
             r"cudaload: \[2/2\] the module: _cudaload\..*so \([0-9.]+ MB\), [0-9]+ s",
             r"cudaload: building the wheel: .*: %s \([0-9.]+ MB\), [0-9]+ s" % re.escape(shim_wheel.name)]
    at = 0
    for step in steps:
        m = re.compile(step).search(log, at)
        assert m, "no line %r after the earlier steps in the build's output:\n%s" % (step, log[-4000:])
        at = m.end()


def test_backend_says_which_cuda_wheels_it_asks_for(monkeypatch, capsys):
    """The backend's CUDA requirements come with a line on stderr saying which and why."""
    sys.path.insert(0, str(SHIM / "backend"))
    try:
        import cudaload_backend as backend
    finally:
        sys.path.remove(str(SHIM / "backend"))
    monkeypatch.delenv("CUDALOAD_PIP_TOOLKIT", raising=False)
    monkeypatch.setattr(backend, "_system_headers", lambda: False)
    req = backend._cuda_requires_said()
    err = capsys.readouterr().err
    pins = backend._pins()
    assert req == pins["compiler"] + pins["headers"] and any(r.startswith("nvidia-cuda-nvcc==") for r in req), req
    assert err.startswith("cudaload: no CUDA headers on this machine: the build asks pip for %d pinned CUDA wheels "
                          "(tools/cuda-pins.txt): " % len(req)), err
    assert all(r in err for r in req), err
    monkeypatch.setenv("CUDALOAD_PIP_TOOLKIT", "0")
    assert backend._cuda_requires_said() == []
    assert capsys.readouterr().err == "cudaload: CUDALOAD_PIP_TOOLKIT=0: no CUDA wheels asked for\n"
