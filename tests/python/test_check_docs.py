# SPDX-License-Identifier: Apache-2.0
"""tools/check_docs.py, the checker behind `make check-docs`: on a small tree of Markdown it
finds a broken link, a broken anchor, a link out of the repository, a machine path and a process
word, each at its file and line, and passes the same tree once they are fixed. GitHub's slugs
(punctuation dropped, duplicates -1, -2) are checked on their own.

    python -m pytest tests/python/test_check_docs.py
"""
import subprocess
import sys
import textwrap

from conftest import REPO

sys.path.insert(0, str(REPO / "tools"))
import check_docs  # noqa: E402

CHECKER = REPO / "tools" / "check_docs.py"


def run(root, *files):
    return subprocess.run([sys.executable, str(CHECKER), "--root", str(root), *files],
                          capture_output=True, text=True, timeout=60)


def write(root, rel, text):
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(textwrap.dedent(text).lstrip("\n"))


def tree(root, broken):
    """A repository of four docs; broken: each fault in its place, else the fixed text."""
    write(root, "README.md", """
        # Project

        See [the guide](docs/guide.md#%s) and [the order](docs/guide.md#the-order).
        A [missing page](%s) and [a section](#%s).

        ## Use it
        """ % ("step-two-cudaload_init" if not broken else "step-two",
               "docs/gone.md" if broken else "docs/guide.md",
               "use-it" if not broken else "usage"))
    write(root, "docs/guide.md", """
        # Guide

        ## Step two: `cudaload_init()`

        ## The order
        ## The order

        Both: [first](#the-order), [second](#the-order-1), [code](../src/), [up](%s).

            cudaload-probe --root %s/site
        """ % ("../../shared/notes.md" if broken else "../README.md",
               "/work/main/build" if broken else "/usr/local/cuda"))
    write(root, "docs/notes.md", """
        # Notes

        As %s, the loader fills the tables on first ask.
        `[not a link](nowhere.md)` and this are code:

        ```
        [also not a link](nowhere.md)
        ```
        """ % ("decided in issue #42" if broken else "decided"))
    write(root, "src/main.c", "int main(void) { return 0; }\n")


def test_finds_each_fault_at_its_line(tmp_path):
    tree(tmp_path, broken=True)
    r = run(tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    out = r.stdout.splitlines()
    expected = [
        "README.md:3: anchor #step-two: no heading of docs/guide.md has it",
        "README.md:4: link docs/gone.md: docs/gone.md is not in the repository",
        "README.md:4: anchor #usage: no heading of README.md has it",
        "docs/guide.md:8: link ../../shared/notes.md: it leaves the repository",
        "docs/guide.md:10: machine path /work/main/build/site: /work/ is a development machine's checkout",
        'docs/notes.md:3: process word "issue #42"',
    ]
    for e in expected:
        assert any(line.startswith(e) for line in out), "missing %r in:\n%s" % (e, r.stdout)
    assert len(out) == len(expected), r.stdout
    assert "nearest: #step-two-cudaload_init" in r.stdout   # the heading it probably meant


def test_passes_once_fixed(tmp_path):
    tree(tmp_path, broken=False)
    r = run(tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "3 Markdown files" in r.stdout


def test_machine_paths_and_process_words(tmp_path):
    write(tmp_path, "a.md", """
        # A

        /home/alice/venv/bin/python, /root/out, /tmp/tmp.Ab12Cd34Ef and /tmp/pytest-of-root/x
        are one machine's; this session's result too.
        /usr/local/cuda, /opt/conda, build/pip-cuda/root/include, --root DIR and
        /tmp/saxpy-venv (the user makes it) are not. Issues of other projects are not ours.
        """)
    r = run(tmp_path)
    lines = r.stdout.splitlines()
    assert r.returncode == 1
    assert [l.split(":")[1] for l in lines] == ["3", "3", "3", "3", "4", "4"], r.stdout
    for word in ("/home/alice/venv/bin/python", "/root/out", "/tmp/tmp.Ab12Cd34Ef", "/tmp/pytest-of-root/x",
                 '"this session"', "\"session's\""):
        assert word in r.stdout, (word, r.stdout)


def test_bench_run_report_keeps_its_paths_elsewhere_not(tmp_path):
    """A bench/run.sh report under docs/gpu-run/ records the GPU machine's paths; the same
    lines in any other doc are flagged."""
    report = "## libcudaload loader cost\n\n- command: bench/run.sh --out /root/out/x.md (in /work/main)\n"
    write(tmp_path, "docs/gpu-run/loader/new-1.md", report)
    write(tmp_path, "docs/probe.md", report)
    r = run(tmp_path)
    assert r.returncode == 1
    assert {l.split(":")[0] for l in r.stdout.splitlines()} == {"docs/probe.md"}, r.stdout


def test_github_slugs():
    assert check_docs.slug("cuBLAS (cublasLt + cublas)") == "cublas-cublaslt--cublas"
    assert check_docs.slug("Loader cost (`bench/run.sh`)") == "loader-cost-benchrunsh"
    assert check_docs.slug("3. The roots (`source`: the root's)") == "3-the-roots-source-the-roots"
    assert check_docs.slug("**Bold** and _emphasis_ of `snake_case`") == "bold-and-emphasis-of-snake_case"
    assert check_docs.slug("[Linked](x.md) heading") == "linked-heading"
    anchors = check_docs.parse("# A\n## A\nSetext\n------\n## A\n")[0]
    assert anchors == {"a", "a-1", "a-2", "setext"}
