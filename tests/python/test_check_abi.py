# SPDX-License-Identifier: Apache-2.0
"""tools/check_abi.py, the checker behind `make check-abi`: the build as it is passes; breaks
planted in a copy of the library's sources are each named (a member moved in a public struct, a
function removed, an enumerator's value changed, a member appended to a struct without a size
field, a parameter's type changed, an entry gone from a wheel library's table as libcudaload
holds it, an export no header declares, a declaration nothing exports), while the changes
allowed pass (a member appended to an info struct with a size field, abi/suppressions.abignore;
a status appended before its count, tools/check_abi.py; a new function), and so do CUDA's own types changed; a stub built with an export its library
lacks, NVIDIA's version on one export and a function missing is named on each, and the same
stub made faithfully passes.

Each planted library is built from a copy of Makefile, mk/, include/ and libcudaload/ without
nvcc (make NVCC= .../libcudaload.so.0: about 10 s on two cores), and checked against the
baseline of the unplanted copy (the committed one is test_the_build_passes').

    python -m pytest tests/python/test_check_abi.py
"""
import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import REPO

CHECKER = REPO / "tools" / "check_abi.py"


def need_tools():
    for tool in ("abidw", "abidiff", "readelf", "make", "cc"):
        if not shutil.which(tool):
            pytest.skip("%s not found (tests/deps.sh installs abigail-tools and binutils)" % tool)


def check(*args):
    return subprocess.run([sys.executable, str(CHECKER)] + [str(a) for a in args], capture_output=True, text=True,
                          timeout=300)


def sub(text, old, new):
    assert old in text, old
    return text.replace(old, new, 1)


def planted_library(tmp_path, plant, cuda_plant=None):
    """libcudaload.so.0 built from a copy of the sources that plant(tree) changed; with
    cuda_plant, against a copy of the CUDA headers whose cuda.h it changed."""
    need_tools()
    cuda_inc = os.environ.get("CUDA_INC") or os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "include")
    if not os.path.isfile(os.path.join(cuda_inc, "cuda.h")):
        pytest.skip("no CUDA headers at %s (make check-python passes CUDA_INC)" % cuda_inc)
    tree = tmp_path / "tree"
    for d in ("mk", "include", "libcudaload"):
        shutil.copytree(REPO / d, tree / d)
    shutil.copy2(REPO / "Makefile", tree / "Makefile")
    (tree / "stubs" / "gen").mkdir(parents=True)
    shutil.copy2(REPO / "stubs" / "gen" / "stubs.mk", tree / "stubs" / "gen" / "stubs.mk")
    plant(tree)
    if cuda_plant:
        inc = tmp_path / "cuda-include"
        inc.mkdir()
        for e in os.listdir(cuda_inc):
            if e != "cuda.h":
                os.symlink(os.path.join(cuda_inc, e), inc / e)
        shutil.copy(os.path.join(cuda_inc, "cuda.h"), inc / "cuda.h")
        cuda_plant(inc / "cuda.h")
        cuda_inc = str(inc)
    # a make of its own: not the jobserver of the make that runs pytest
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    r = subprocess.run(["make", "-C", str(tree), "-j2", "B=build", "NVCC=", "WHEEL_FILES=", "CUDA_INC=" + cuda_inc,
                        "build/libcudaload.so.0"], capture_output=True, text=True, timeout=900, env=env)
    assert r.returncode == 0, "the planted build failed:\n" + (r.stdout + r.stderr)[-6000:]
    return tree


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    """The baseline of the unplanted sources, built as the planted ones are: the planted tests
    see their plants alone, whatever the tree has appended since the committed baseline (which
    test_the_build_passes checks)."""
    d = tmp_path_factory.mktemp("base")
    tree = planted_library(d, lambda tree: None)
    out = d / "base.abi"
    r = check("--only", "lib", "--so", tree / "build" / "libcudaload.so.0", "--baseline", out, "--write-baseline")
    assert r.returncode == 0, r.stdout + r.stderr
    return out


def check_library(tree, base):
    return check("--only", "lib", "--so", tree / "build" / "libcudaload.so.0", "--include", tree / "include",
                 "--layouts", tree / "libcudaload" / "api_layouts.inc", "--baseline", base)


def edit(path, *pairs):
    text = path.read_text()
    for old, new in pairs:
        text = sub(text, old, new)
    path.write_text(text)


def test_the_build_passes():
    need_tools()
    build = os.environ.get("CUDALOAD_TEST_BUILD")
    if not build or not os.path.isfile(os.path.join(build, "libcudaload.so.0")):
        pytest.skip("CUDALOAD_TEST_BUILD has no libcudaload.so.0 (make check-python builds it)")
    r = check("--build", build)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "the ABI of abi/libcudaload.so.0.abi" in r.stdout
    assert "exports are the" in r.stdout


def test_an_unreadable_baseline_is_an_error(tmp_path):
    """abidiff exits 0, having compared nothing, when its XML reader refuses the baseline (it only
    says so on stderr): the checker exits 2."""
    need_tools()
    build = os.environ.get("CUDALOAD_TEST_BUILD")
    if not build or not os.path.isfile(os.path.join(build, "libcudaload.so.0")):
        pytest.skip("CUDALOAD_TEST_BUILD has no libcudaload.so.0 (make check-python builds it)")
    bad = tmp_path / "bad.abi"
    text = (REPO / "abi" / "libcudaload.so.0.abi").read_text()
    bad.write_text(sub(text, "<!-- ", "<!-- -- "))  # "--" inside an XML comment
    r = check("--only", "lib", "--build", build, "--baseline", bad)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "parser error" in r.stderr


def test_planted_breaks_are_each_named(tmp_path, baseline):
    def plant(tree):
        edit(tree / "include" / "cudaload.h",
             # a member moved: cudaload_root's source after exists
             ("    cudaload_source source;\n    int exists;", "    int exists;\n    cudaload_source source;"),
             # an enumerator's value changed
             ("CUDALOAD_BACKEND_CUBLAS = 2", "CUDALOAD_BACKEND_CUBLAS = 3"),
             # a member appended to a struct without a size field: the candidates' array strides
             ("} cudaload_candidate;", "    int planted;\n} cudaload_candidate;"),
             # a declaration nothing exports
             ("CUDALOAD_API int cudaload_is_initialized(void);",
              "CUDALOAD_API int cudaload_is_initialized(void);\nCUDALOAD_API int cudaload_planted_unexported(void);"))
        # a function removed (renamed: gone for a program built against the baseline)
        for d in ("include", "libcudaload"):
            for p in (tree / d).iterdir():
                text = p.read_text()
                if "cudaload_is_initialized" in text:
                    p.write_text(text.replace("cudaload_is_initialized", "cudaload_is_initialised"))
        # a parameter's type changed
        for p in (tree / "include" / "cudaload.h", tree / "libcudaload" / "cudaload.c"):
            edit(p, ("cudaload_failure_line(cudaload_lib lib, char *buf, size_t n)",
                     "cudaload_failure_line(cudaload_lib lib, char *buf, unsigned n)"))
        # a wheel library's table as libcudaload holds it (api_layouts.inc): an entry gone
        edit(tree / "libcudaload" / "api_layouts.inc",
             ("    X(cudssConfigDestroy, cudssConfigDestroy, 10000, void, (void)) \\\n", ""))
        # an export no public header declares
        c = tree / "libcudaload" / "cudaload.c"
        c.write_text(c.read_text() + "\nCUDALOAD_API int cudaload_planted_undeclared(void);\n"
                     "int cudaload_planted_undeclared(void) { return 0; }\n")
    tree = planted_library(tmp_path, plant)
    r = check_library(tree, baseline)
    assert r.returncode == 1, r.stdout + r.stderr
    lines = [line for line in r.stderr.splitlines() if line.startswith("check-abi: ")]
    expect = {
        "removed": r"function cudaload_is_initialized removed",
        "moved": r"struct cudaload_root changed: 'cudaload_source source' offset changed from 64 to 96",
        "enumerator": r"enum cudaload_backend changed: 'cudaload_backend::CUDALOAD_BACKEND_CUBLAS' from value '2' to '3'",
        "appended": r"struct cudaload_candidate changed: type size changed from \d+ to \d+.*'int planted'",
        "parameter": r"function cudaload_failure_line changed .*: parameter 3 of type 'typedef size_t' changed",
        "table": r"struct cudaload_cudss_table changed: type size changed .*cudssConfigDestroy",
        "undeclared": r"cudaload_planted_undeclared: exported by libcudaload\.so\.0\S*, declared CUDALOAD_API by no public header",
        "unexported": r"cudaload_planted_unexported: declared CUDALOAD_API by include/cudaload\.h, not exported",
    }
    for what, pattern in expect.items():
        assert any(re.search(pattern, line) for line in lines), "%s not named:\n%s" % (what, r.stderr)
    assert len(lines) == len(expect), r.stderr  # one line each, nothing else
    assert "abidiff's report" in r.stderr


def test_a_status_appended_hides_no_break(tmp_path, baseline):
    """A status appended (allowed) beside a member appended to cudaload_candidate, which holds a
    cudaload_status (a break): the break is named. (A suppression of the enum's change in
    libabigail 2.2 hid it: check_abi.py allows the appended values itself.)"""
    def plant(tree):
        edit(tree / "include" / "cudaload.h",
             ("} cudaload_candidate;", "    int planted;\n} cudaload_candidate;"),
             ("    CUDALOAD_STATUS_COUNT_ = 20", "    CUDALOAD_ERROR_PLANTED = 20,\n    CUDALOAD_STATUS_COUNT_ = 21"))
    r = check_library(planted_library(tmp_path, plant), baseline)
    assert r.returncode == 1, r.stdout + r.stderr
    lines = [line for line in r.stderr.splitlines() if line.startswith("check-abi: ")]
    assert len(lines) == 1 and re.search(r"struct cudaload_candidate changed: .*'int planted'", lines[0]), r.stderr


def test_compatible_changes_pass(tmp_path, baseline):
    """The changes abi/suppressions.abignore allows, and CUDA's own types changed (NVIDIA's ABI,
    not libcudaload's: a CUresult value and a member of CUDA_MEMCPY3D, which table entries
    take; abidiff's leaf report, which names the changes, does not leave those out by itself)."""
    def cuda_plant(h):
        edit(h, ("CUDA_ERROR_INVALID_VALUE                  = 1,", "CUDA_ERROR_INVALID_VALUE = 1001,"),
             ("typedef struct CUDA_MEMCPY3D_st {", "typedef struct CUDA_MEMCPY3D_st { int planted;"))

    def plant(tree):
        edit(tree / "include" / "cudaload.h",
             ("    size_t n_min_versions;\n} cudaload_options;", "    size_t n_min_versions;\n    int planted;\n} cudaload_options;"),
             ("    CUDALOAD_STATUS_COUNT_ = 20", "    CUDALOAD_ERROR_PLANTED = 20,\n    CUDALOAD_STATUS_COUNT_ = 21"),
             ("CUDALOAD_API int cudaload_is_initialized(void);",
              "CUDALOAD_API int cudaload_is_initialized(void);\nCUDALOAD_API int cudaload_planted(void);"))
        c = tree / "libcudaload" / "cudaload.c"
        c.write_text(c.read_text() + "\nint cudaload_planted(void) { return 0; }\n")
    tree = planted_library(tmp_path, plant, cuda_plant)
    r = check_library(tree, baseline)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "its 60 exports are the 60 functions" in r.stdout


# ---- the stubs: a tiny stub of cuDSS (its reference is the committed export list, so no library
# needs to be on this machine), built from C with a version script

def cudss_exports():
    names = []
    with open(REPO / "tools" / "api" / "cudss-exports.txt") as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                names.append(line.split("@")[0].strip())
    return names


def tiny_stub(tmp_path, names, nvidia_versioned=()):
    """tmp_path/stubs/libcudaload-cudss.so defining names, each in CUDALOAD_STUB_0 but those
    of nvidia_versioned, in libcudss.so.1."""
    need_tools()
    d = tmp_path / "stubs"
    d.mkdir()
    src = tmp_path / "stub.c"
    src.write_text("".join("void %s(void);\nvoid %s(void) {}\n" % (n, n) for n in names))
    vers = tmp_path / "stub.map"
    own = "".join(" %s;" % n for n in nvidia_versioned)
    vers.write_text(("libcudss.so.1 { global:%s };\n" % own if own else "") + "CUDALOAD_STUB_0 { global: *; };\n")
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(d / "libcudaload-cudss.so"), str(src),
                    "-Wl,-soname,libcudaload-cudss.so.0", "-Wl,--version-script=" + str(vers)], check=True, timeout=120)
    return d


def test_a_faithful_stub_passes(tmp_path):
    d = tiny_stub(tmp_path, cudss_exports())
    r = check("--only", "stubs", "--stubs", d, "--stub-ids", "cudss")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "stubs: 1 checked" in r.stdout


def test_stub_mismatches_are_each_named(tmp_path):
    names = cudss_exports()
    missing = "cudssConfigCreate"
    assert missing in names and "cudssCreate" in names
    d = tiny_stub(tmp_path, [n for n in names if n != missing] + ["cudssPlantedExtra"], nvidia_versioned=["cudssCreate"])
    r = check("--only", "stubs", "--stubs", d, "--stub-ids", "cudss")
    assert r.returncode == 1, r.stdout + r.stderr
    lines = [line for line in r.stderr.splitlines() if line.startswith("check-abi: ")]
    expect = [
        r"^check-abi: libcudaload-cudss\.so: cudssPlantedExtra: exported, but libcudss\.so\.1 .* does not export it$",
        r"^check-abi: libcudaload-cudss\.so: cudssCreate: version libcudss\.so\.1, not CUDALOAD_STUB_0",
        r"^check-abi: libcudaload-cudss\.so: cudssConfigCreate: exported by libcudss\.so\.1 .*, neither in the stub nor left out",
    ]
    for pattern in expect:
        assert any(re.search(pattern, line) for line in lines), "%s not found in:\n%s" % (pattern, r.stderr)
    assert len(lines) == len(expect), r.stderr


def test_an_unversioned_librarys_run_time_file_must_hide(tmp_path):
    """cuSPARSELt versions none of its exports: its stub's .so.0, a link to the .so (the default
    version), would take the library's own calls; the checker names it."""
    need_tools()
    names = []
    with open(REPO / "tools" / "api" / "cusparseLt-exports.txt") as f:
        names = [line.strip() for line in f if line.strip() and not line.startswith("#")]
    d = tmp_path / "stubs"
    d.mkdir()
    src = tmp_path / "stub.c"
    src.write_text("".join("void %s(void);\nvoid %s(void) {}\n" % (n, n) for n in names))
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(d / "libcudaload-cusparselt.so"), str(src),
                    "-Wl,--version-script=" + str(REPO / "stubs" / "stub_unversioned.map")], check=True, timeout=120)
    os.symlink("libcudaload-cusparselt.so", d / "libcudaload-cusparselt.so.0")
    r = check("--only", "stubs", "--stubs", d, "--stub-ids", "cusparselt")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "libcudaload-cusparselt.so.0: a link to libcudaload-cusparselt.so" in r.stderr
    assert "libcudaload-cusparselt.so.0: cusparseLtInit: CUDALOAD_STUB_0 not hidden" in r.stderr, r.stderr
    # hidden as the build hides it (tools/hide_versions.py): passes
    os.unlink(d / "libcudaload-cusparselt.so.0")
    subprocess.run([sys.executable, str(REPO / "tools" / "hide_versions.py"), str(d / "libcudaload-cusparselt.so"),
                    str(d / "libcudaload-cusparselt.so.0")], check=True, timeout=120)
    r = check("--only", "stubs", "--stubs", d, "--stub-ids", "cusparselt")
    assert r.returncode == 0, r.stdout + r.stderr
