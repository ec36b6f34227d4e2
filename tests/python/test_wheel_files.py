# SPDX-License-Identifier: Apache-2.0
"""tools/wheel_files.py's remote reads against a loopback index (no network): an HTTP server on
127.0.0.1 that answers the simple API's project pages in their JSON form (PEP 691, the index named
by PIP_INDEX_URL, a pip.conf or --index-url) and serves a small wheel built here with zipfile,
with range requests as PyPI's file host answers them, or broken in one way a test names: a body
shorter than asked, a Content-Range not the one asked, a stall (nothing sent, or the headers then
nothing, or a trickle), a file that is no zip, a library member whose ELF header is malformed;
and the fallbacks kept (no range requests, an index of HTML pages only, pip told to read no
index: `pip download`, here of the loopback index or a find-links folder). Each broken answer
must be an error of the tool in bounded time (the tool run with CUDALOAD_WHEEL_TIMEOUT=2), one
line on stderr naming the URL or the file, never a loop or a traceback; the good answer must give
the wheel's bytes. The tool checks what it takes out against a manifest made here
(CUDALOAD_WHEEL_MANIFEST): a header or a whole wheel not as the manifest says is refused in one
line naming the file and both digests, nothing published; `pin` writes the manifest and refuses a
wheel that is not the index's sha256. Plain http of a host pip is not told to trust is refused;
two runs at once share the cache; `make` with a stalled index ends in bounded time and says at
its end which stubs it left out, and why.

    python -m pytest tests/python/test_wheel_files.py

Needs no package wheel, GPU or network (a request for anything but the loopback goes to a proxy
that refuses it): none of conftest.py's fixtures.
"""
import contextlib
import hashlib
import http.server
import io
import json
import os
import re
import struct
import subprocess
import sys
import threading
import time
import zipfile

import pytest

from conftest import REPO

TOOL = REPO / "tools" / "wheel_files.py"
sys.path.insert(0, str(REPO / "tools"))
import wheel_files  # noqa: E402

PKG, VER = "nvidia-fake-cu12", "1.2.3"
FILENAME = "nvidia_fake_cu12-1.2.3-py3-none-manylinux2014_x86_64.whl"
HEADER = "nvidia/fake/include/fake.h"
HEADER_TEXT = b"/* fake.h */\n#define FAKE_VERSION 10203\nint fakeInit(void);\n" * 20
LIB = "nvidia/fake/lib/libfake.so.1"
TIMEOUT = 2       # CUDALOAD_WHEEL_TIMEOUT of the tool's runs here
RUN_LIMIT = 20    # a run of the tool that takes longer hangs: the test fails


def bad_elf():
    """An ELF64 little-endian header whose program headers are 8 bytes each (ELF64's are 56)."""
    eh = bytearray(64)
    eh[:6] = b"\x7fELF\x02\x01"
    struct.pack_into("<Q", eh, 32, 64)          # e_phoff
    struct.pack_into("<HH", eh, 54, 8, 3)       # e_phentsize, e_phnum
    return bytes(eh) + bytes(256)


def make_wheel(header_text=HEADER_TEXT):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(HEADER, header_text)
        z.writestr("nvidia/fake/include/fake_v2.h", b"#include \"fake.h\"\n")
        z.writestr(zipfile.ZipInfo(LIB), bad_elf())  # stored: read with ranges where asked
        z.writestr("nvidia_fake_cu12-1.2.3.dist-info/METADATA",
                   b"Metadata-Version: 2.1\nName: nvidia-fake-cu12\nVersion: 1.2.3\n")
        z.writestr("nvidia_fake_cu12-1.2.3.dist-info/WHEEL",
                   b"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: py3-none-manylinux2014_x86_64\n")
    return buf.getvalue()


def sha(data):
    return hashlib.sha256(data).hexdigest()


def manifest_of(wheel):
    """The manifest of wheel (every file, and the wheel), made here, not by the tool."""
    with zipfile.ZipFile(io.BytesIO(wheel)) as z:
        files = [(sha(z.read(m)), m.filename) for m in z.infolist()]
    return "".join("%s  %s==%s  %s\n" % (d, PKG, VER, p) for d, p in [(sha(wheel), FILENAME)] + sorted(files, key=lambda x: x[1]))


WHEEL = make_wheel()
TAMPERED = make_wheel(HEADER_TEXT.replace(b"10203", b"99999"))
VERSIONS = {VER} | {p[2] for p in wheel_files.pins()} | {p[2] for p in wheel_files.older()}


SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"


def wheel_name(project, version, platform="manylinux2014_x86_64"):
    return "%s-%s-py3-none-%s.whl" % (re.sub(r"[-_.]+", "_", project).lower(), version, platform)


class Index(http.server.ThreadingHTTPServer):
    """The simple API at /simple/<project>/ (any project: the one wheel under every version the
    tool may ask, in its JSON form where asked, PEP 691, else HTML, PEP 503), the wheel at
    /files/<FILENAME>. mode: how the page or the wheel's range requests are answered; size: the
    size the index gives for the wheel; body: the wheel's bytes; requests: (path, Range, Accept)
    of each; hold: range requests wait for it (set: answered) where mode is "hold"."""
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), Handler)
        self.mode, self.size, self.body, self.requests = "good", len(WHEEL), WHEEL, []
        self.url_form = "relative"  # the files' url: relative to the page, absolute, or "untrusted"
        self.release = threading.Event()  # set at the end: a stalled handler returns
        self.hold = threading.Event()

    @property
    def base(self):
        return "http://127.0.0.1:%d" % self.server_address[1]

    @property
    def simple(self):
        return self.base + "/simple"

    @property
    def wheel_url(self):
        return "%s%s/files/%s" % (self.base, "/mirror" if self.mode == "redirect" else "", FILENAME)

    def ranged(self):
        return [p for p, rng, _ in self.requests if p.endswith(".whl") and rng]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, status, body, headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def page(self, project):
        """The project's page: the files of every version asked (one wheel: the good wheel's
        digest, whatever is served), an sdist and an aarch64 wheel that are not read."""
        srv = self.server
        files = [(wheel_name(project, v), FILENAME) for v in sorted(VERSIONS)]  # PKG's VER: FILENAME
        url = (lambda f: "../../files/" + f) if srv.url_form == "relative" else (
            lambda f: srv.wheel_url.rsplit("/", 1)[0] + "/" + f) if srv.url_form == "absolute" else (
            lambda f: "http://192.0.2.1/files/" + f)  # "untrusted": plain http of a host not loopback
        others = [("%s-1.9.9.tar.gz" % project, "x.tar.gz"), (wheel_name(project, "1.8.0", "manylinux2014_aarch64"), "x.whl")]
        if "json" in (self.headers.get("Accept") or "") and srv.mode != "no-json":
            doc = {"meta": {"api-version": "1.1"}, "name": project,
                   "files": [dict({"filename": n, "url": url(f), "hashes": {"sha256": sha(WHEEL)}},
                                  **({} if srv.mode == "no-size" else {"size": srv.size})) for n, f in files + others]}
            return self.send(200, json.dumps(doc).encode(), [("Content-Type", SIMPLE_JSON)])
        links = "".join('<a href="%s#sha256=%s">%s</a>\n' % (url(f), sha(WHEEL), n) for n, f in files)
        return self.send(200, ("<!DOCTYPE html><html><body>\n%s</body></html>\n" % links).encode(),
                         [("Content-Type", "text/html")])

    def do_GET(self):
        srv = self.server
        srv.requests.append((self.path, self.headers.get("Range"), self.headers.get("Accept")))
        m = re.match(r"^(/mirror)?/simple/([^/]+)/$", self.path)
        if m and srv.mode == "redirect" and not m.group(1):  # the page moved: its files' URLs are relative to where
            return self.send(302, b"", [("Location", "/mirror/simple/%s/" % m.group(2))])
        if m and srv.mode == "stall-page":
            srv.release.wait(60)
            return
        if m:
            return self.page(m.group(2))
        files = "/mirror/files/" if srv.mode == "redirect" else "/files/"
        if not (self.path.startswith(files) and self.path.endswith(".whl")):
            return self.send(404, b"not found")
        data, mode = srv.body, srv.mode
        r = re.match(r"^bytes=(\d+)-(\d+)$", self.headers.get("Range") or "")
        if mode == "pip-stall" and not r:  # the whole file, as pip asks it: the headers, then nothing
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.flush()
            srv.release.wait(60)
            return
        if not r or mode in ("no-ranges", "pip-stall"):
            return self.send(200, data)
        lo, hi = int(r.group(1)), int(r.group(2))
        if mode == "hold":
            srv.hold.wait(60)
        if mode == "stall-nothing":  # the request read, nothing sent back
            srv.release.wait(60)
            return
        if lo >= len(data):
            return self.send(416, b"", [("Content-Range", "bytes */%d" % len(data))])
        hi = min(hi, len(data) - 1)  # a server clamps a range past the end of the file
        part, cr = data[lo:hi + 1], "bytes %d-%d/%d" % (lo, hi, len(data))
        if mode == "short-body":  # the Content-Range asked, fewer bytes (Content-Length says so)
            part = part[:max(0, len(part) - 100)]
        elif mode == "wrong-range":  # the bytes of another range (as many where there are), said so
            lo2 = lo - 512 if lo >= 512 else lo + 64
            part, cr = data[lo2:lo2 + len(part)], "bytes %d-%d/%d" % (lo2, lo2 + len(part) - 1, len(data))
        elif mode == "bad-content-range":
            cr = "bytes %d-%d" % (lo, hi)
        elif mode == "stall-headers":  # the headers of the right answer, then nothing
            self.send_response(206)
            self.send_header("Content-Range", cr)
            self.send_header("Content-Length", str(len(part)))
            self.end_headers()
            self.wfile.flush()
            srv.release.wait(60)
            return
        elif mode == "trickle":  # a byte every 0.2 s: never a socket timeout, never done
            self.send_response(206)
            self.send_header("Content-Range", cr)
            self.send_header("Content-Length", str(len(part)))
            self.end_headers()
            for b in part:
                if srv.release.wait(0.2):
                    return
                self.wfile.write(bytes([b]))
                self.wfile.flush()
            return
        self.send(206, part, [("Content-Range", cr)])


@contextlib.contextmanager
def serving():
    srv = Index()
    t = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    t.start()
    try:
        yield srv
    finally:
        srv.release.set()
        srv.hold.set()
        srv.shutdown()
        srv.server_close()


@pytest.fixture
def index():
    with serving() as srv:
        yield srv


def write_manifest(tmp_path):
    path = tmp_path / "wheel-files.sha256"
    if not path.exists():
        path.write_text(manifest_of(WHEEL))
    return path


REFUSED_PROXY = "http://127.0.0.1:9"  # nothing listens there: a request past the loopback fails at once


def tool_env(index, tmp_path):
    """The tool's environment: the loopback index as pip's (PIP_INDEX_URL), none of the caller's
    pip configuration (PIP_CONFIG_FILE=os.devnull: pip's files are not read), no network."""
    env = {k: v for k, v in os.environ.items()
           if not k.lower().endswith("_proxy") and not k.startswith(("CUDALOAD_", "PIP_"))}
    env.update(PIP_INDEX_URL=index.simple, CUDALOAD_WHEEL_TIMEOUT=str(TIMEOUT),
               CUDALOAD_WHEEL_MANIFEST=str(write_manifest(tmp_path)),
               CUDALOAD_WHEEL_CACHE=str(tmp_path / "cache"), NO_PROXY="127.0.0.1", no_proxy="127.0.0.1",
               http_proxy=REFUSED_PROXY, https_proxy=REFUSED_PROXY, HTTP_PROXY=REFUSED_PROXY, HTTPS_PROXY=REFUSED_PROXY,
               # the `pip download` fallback: this index, its own cache, pip's files not read
               PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_CACHE_DIR=str(tmp_path / "pip-cache"))
    return env


def tool_cmd(index, tmp_path, args, pinned=False, env=None):
    """(the command, its environment) of the tool: env's values over tool_env's (None: unset).
    pinned: its pins are the fake wheel alone (row fake: its include dir and library), no older."""
    cmd = [sys.executable, str(TOOL), *args]
    if pinned:
        pins = tmp_path / "wheel-libs.txt"
        pins.write_text("fake  %s==%s  %s  nvidia/fake/include\n" % (PKG, VER, LIB))
        cmd = [sys.executable, "-c", "import sys; sys.path.insert(0, %r); import wheel_files as w; w.PINS = %r; "
               "w.OLDER = %r; w.cli(sys.argv)" % (str(REPO / "tools"), str(pins), str(tmp_path / "no-older.txt")), *args]
    e = tool_env(index, tmp_path)
    for k, v in (env or {}).items():
        if v is None:
            e.pop(k, None)
        else:
            e[k] = v
    return cmd, e


def run_tool(index, tmp_path, *args, pinned=False, env=None):
    """The tool in a subprocess: (exit code, stdout, stderr, seconds); a run past RUN_LIMIT fails."""
    t = time.monotonic()
    cmd, e = tool_cmd(index, tmp_path, args, pinned, env)
    try:
        r = subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=RUN_LIMIT)
    except subprocess.TimeoutExpired as e:
        pytest.fail("wheel_files.py %s ran past %d s (a loop or an unbounded wait); stderr: %s" % (
            " ".join(args), RUN_LIMIT, (e.stderr or b"")[-2000:]))
    return r.returncode, r.stdout, r.stderr, time.monotonic() - t


def start_tool(index, tmp_path, *args, pinned=False, env=None):
    """The tool started in a subprocess (finish() gives what run_tool gives)."""
    cmd, e = tool_cmd(index, tmp_path, args, pinned, env)
    return subprocess.Popen(cmd, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(p):
    try:
        out, err = p.communicate(timeout=RUN_LIMIT)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        pytest.fail("wheel_files.py ran past %d s (a loop or an unbounded wait); stderr: %s" % (RUN_LIMIT, err[-2000:]))
    return p.returncode, out, err


def wait_for(what, cond):
    end = time.monotonic() + RUN_LIMIT
    while not cond():
        if time.monotonic() > end:
            pytest.fail("no %s in %d s" % (what, RUN_LIMIT))
        time.sleep(0.02)


def one_line_error(rc, err, *names):
    """The run failed with one line of the tool's own on stderr (no traceback) naming each of names."""
    assert rc != 0, "exit 0; stderr: %s" % err
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, "more than one line on stderr:\n%s" % err
    assert lines[0].startswith("wheel_files: "), lines[0]
    for n in names:
        assert n in lines[0], "%r not in %r" % (n, lines[0])
    return lines[0]


def forget_the_index():
    """The module's index, pip's configuration and the pages it read, read again."""
    for f in (wheel_files.project_files, wheel_files.pip_settings, wheel_files.index, wheel_files.opener):
        f.cache_clear()


@pytest.fixture
def inproc(index, monkeypatch, tmp_path):
    """The module itself pointed at the loopback index (what it read of the index forgotten)."""
    for k in os.environ:
        if k.startswith("PIP_"):
            monkeypatch.delenv(k)
    monkeypatch.setenv("PIP_INDEX_URL", index.simple)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("CUDALOAD_WHEEL_TIMEOUT", str(TIMEOUT))
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    monkeypatch.setenv("CUDALOAD_WHEEL_MANIFEST", str(write_manifest(tmp_path)))
    monkeypatch.setattr(wheel_files, "INDEX_URL_OPTION", None)
    forget_the_index()
    yield index
    forget_the_index()


# ---- the good path ----

def test_headers_and_ranges_are_the_wheels_bytes(inproc, tmp_path):
    d = wheel_files.fetch_headers(str(tmp_path), "fake", PKG, VER, "nvidia/fake/include", block=1024)
    assert open(os.path.join(d, HEADER), "rb").read() == HEADER_TEXT
    assert os.path.exists(os.path.join(d, ".complete"))
    assert all(rng and rng.startswith("bytes=") for p, rng, _ in inproc.requests if p.startswith("/files/"))
    rf = wheel_files.RangeFile(inproc.wheel_url, len(WHEEL), 512)
    for lo, n in ((0, 100), (500, 1500), (len(WHEEL) - 30, 30), (len(WHEEL) - 5, 100)):
        assert rf.read_range(lo, n) == WHEEL[lo:lo + n]
    rf.seek(300)
    assert rf.read(2000) == WHEEL[300:2300]


def test_list_prints_the_members(index, tmp_path):
    rc, out, err, _ = run_tool(index, tmp_path, "list", "%s==%s" % (PKG, VER))
    assert rc == 0, err
    assert "%d %s" % (len(HEADER_TEXT), HEADER) in out.splitlines()


@pytest.mark.parametrize("how", ["env", "option"])
@pytest.mark.parametrize("mode", ["no-ranges", "no-json"])
def test_fallback_to_pip_download(index, tmp_path, mode, how):
    """The fallbacks kept: no range requests (a 200), or an index of HTML pages only (no JSON form),
    is `pip download` of the whole wheel from the same index (pip's configuration passed on:
    PIP_INDEX_URL; the tool's --index-url given to pip, PIP_INDEX_URL then naming a host pip
    refuses), read from disk once verified."""
    index.mode = mode
    args, env = ("list", "%s==%s" % (PKG, VER)), {}
    if how == "option":
        args, env = ("--index-url", index.simple) + args, {"PIP_INDEX_URL": "http://192.0.2.1/simple"}
    rc, out, err, _ = run_tool(index, tmp_path, *args, env=env)
    assert rc == 0, err
    assert "downloading the wheel" in err.splitlines()[0], err
    assert "%d %s" % (len(HEADER_TEXT), HEADER) in out.splitlines()
    assert ("/files/" + FILENAME, None) in [(p, rng) for p, rng, _ in index.requests]  # pip's GET, the whole wheel


def test_pip_download_is_bounded(index, tmp_path):
    """The `pip download` fallback stalls (the wheel's headers, then nothing; pip's own timeout a
    minute): stopped at 10 x CUDALOAD_WHEEL_TIMEOUT, one line."""
    index.mode = "pip-stall"
    rc, _, err, secs = run_tool(index, tmp_path, "list", "%s==%s" % (PKG, VER),
                                env={"CUDALOAD_WHEEL_TIMEOUT": "0.5", "PIP_DEFAULT_TIMEOUT": "60"})
    assert rc == 1 and "Traceback" not in err, err
    assert err.strip().splitlines()[-1] == (
        "wheel_files: list %s==%s: pip download %s==%s: not done in 5 s (10 x CUDALOAD_WHEEL_TIMEOUT): stopped"
        % (PKG, VER, PKG, VER)), err
    assert secs < 5 + 5


# ---- answers not the range asked ----

def test_index_size_larger_than_the_file(index, tmp_path):
    """The server clamps the range to the file's end: a 206 shorter than asked (the tool spun)."""
    index.size = len(WHEEL) + 1000
    rc, _, err, secs = run_tool(index, tmp_path, "list", "%s==%s" % (PKG, VER))
    line = one_line_error(rc, err, index.wheel_url, "bytes=")
    assert "%d" % (len(WHEEL) + 1000) in line  # the size asked of, and what came
    assert secs < RUN_LIMIT


def test_short_body(index, tmp_path):
    index.mode = "short-body"
    rc, _, err, _ = run_tool(index, tmp_path, "list", "%s==%s" % (PKG, VER))
    one_line_error(rc, err, index.wheel_url, "bytes=")


def test_short_block_is_not_cached(inproc):
    inproc.mode = "short-body"
    rf = wheel_files.RangeFile(inproc.wheel_url, len(WHEEL), 1024)
    for _ in range(2):
        with pytest.raises(Exception) as e:
            rf.readinto(bytearray(10))
        assert type(e.value).__module__ == "wheel_files", repr(e.value)
        assert inproc.wheel_url in str(e.value)
    assert rf.blocks == {}
    assert len(inproc.ranged()) == 2  # asked again, not kept


def test_wrong_content_range(index, tmp_path):
    index.mode = "wrong-range"
    rc, _, err, _ = run_tool(index, tmp_path, "list", "%s==%s" % (PKG, VER))
    one_line_error(rc, err, index.wheel_url, "Content-Range")


def test_wrong_content_range_read_range(inproc):
    inproc.mode = "wrong-range"
    rf = wheel_files.RangeFile(inproc.wheel_url, len(WHEEL))
    with pytest.raises(Exception) as e:
        got = rf.read_range(1000, 200)
        pytest.fail("read_range gave %d bytes (%s the file's) for a 206 of another range" % (
            len(got), "not" if got != WHEEL[1000:1200] else "yet"))
    assert type(e.value).__module__ == "wheel_files", repr(e.value)
    assert "Content-Range" in str(e.value)


def test_unparsable_content_range(index, tmp_path):
    index.mode = "bad-content-range"
    rc, _, err, _ = run_tool(index, tmp_path, "list", "%s==%s" % (PKG, VER))
    one_line_error(rc, err, index.wheel_url, "Content-Range")


# ---- stalls: an error within the tool's timeout ----

@pytest.mark.parametrize("mode", ["stall-nothing", "stall-headers", "trickle"])
def test_stall(index, tmp_path, mode):
    index.mode = mode
    rc, _, err, secs = run_tool(index, tmp_path, "list", "%s==%s" % (PKG, VER))
    one_line_error(rc, err, index.wheel_url)
    assert secs < TIMEOUT + 5, "%.1f s for a timeout of %d s" % (secs, TIMEOUT)


def test_stall_at_make_time(index, tmp_path):
    """`headers` as the Makefile runs it at parse time ($(shell ...): stdout is the cache dir, empty
    on failure): a stalled index ends it in bounded time, non-zero, nothing on stdout, the
    error one line after the progress line."""
    index.mode = "stall-headers"
    rc, out, err, secs = run_tool(index, tmp_path, "headers")
    assert rc != 0 and out == "", (rc, out, err)
    assert "Traceback" not in err, err
    assert index.wheel_url in err.strip().splitlines()[-1]
    assert secs < TIMEOUT + 5


# ---- malformed files: one line naming the file and what was wrong ----

def test_not_a_zip(index, tmp_path):
    index.body = index.body[:100] + b"\0" * (len(index.body) - 100)
    rc, _, err, _ = run_tool(index, tmp_path, "list", "%s==%s" % (PKG, VER))
    line = one_line_error(rc, err, index.wheel_url)
    assert "zip" in line


def test_malformed_elf_header(inproc):
    url, size = wheel_files.wheel_url(PKG, VER)
    rf = wheel_files.RangeFile(url, size)
    z = zipfile.ZipFile(io.BufferedReader(rf, wheel_files.BLOCK))
    with pytest.raises(Exception) as e:
        wheel_files.member_exports(z, rf, LIB)
    assert type(e.value).__module__ == "wheel_files", "%s: %s" % (type(e.value).__name__, e.value)
    assert LIB in str(e.value) and "\n" not in str(e.value)


# ---- the manifest: every file taken out of a wheel verified (tools/api/wheel-files.sha256) ----

def published(cache):
    """What is in the cache: its entries, a temporary directory left behind included."""
    return sorted(os.listdir(cache)) if os.path.isdir(cache) else []


def test_headers_verified(index, tmp_path):
    rc, out, err, _ = run_tool(index, tmp_path, "headers", pinned=True)
    assert rc == 0, err
    cache = tmp_path / "cache"
    assert out.strip() == str(cache)
    assert (cache / ("%s-%s" % (PKG, VER)) / HEADER).read_bytes() == HEADER_TEXT
    assert published(cache) == ["%s-%s" % (PKG, VER)]


def test_tampered_header_refused(index, tmp_path):
    """A header whose bytes are not the manifest's (the wheel's own CRC matches them): refused in
    one line naming the wheel, the file and both digests; nothing published in the cache."""
    index.body, index.size = TAMPERED, len(TAMPERED)
    rc, out, err, _ = run_tool(index, tmp_path, "headers", pinned=True)
    assert rc != 0 and out == "", (rc, out, err)
    assert "Traceback" not in err, err
    last = err.strip().splitlines()[-1]
    with zipfile.ZipFile(io.BytesIO(TAMPERED)) as z:
        got = sha(z.read(HEADER))
    for n in ("%s==%s" % (PKG, VER), HEADER, sha(HEADER_TEXT), got):
        assert n in last, "%r not in %r" % (n, last)
    assert sum("sha256" in l for l in err.splitlines()) == 1, err
    assert published(tmp_path / "cache") == [], "published: %s" % published(tmp_path / "cache")


def test_header_not_in_the_manifest_refused(index, tmp_path):
    (tmp_path / "wheel-files.sha256").write_text(
        "".join(l + "\n" for l in manifest_of(WHEEL).splitlines() if not l.endswith("/fake_v2.h")))
    rc, _, err, _ = run_tool(index, tmp_path, "headers", pinned=True)
    assert rc != 0
    last = err.strip().splitlines()[-1]
    assert "nvidia/fake/include/fake_v2.h" in last and "not in the manifest" in last, err
    assert published(tmp_path / "cache") == []


def test_cached_headers_that_do_not_verify_are_fetched_again(index, tmp_path):
    """A cache made before the manifest (or changed since) is verified on use: fetched again,
    said in one line."""
    assert run_tool(index, tmp_path, "headers", pinned=True)[0] == 0
    cached = tmp_path / "cache" / ("%s-%s" % (PKG, VER)) / HEADER
    cached.write_bytes(b"/* changed */\n")
    rc, _, err, _ = run_tool(index, tmp_path, "headers", pinned=True)
    assert rc == 0, err
    assert len([l for l in err.splitlines() if "do not verify" in l]) == 1, err
    assert cached.read_bytes() == HEADER_TEXT


def pip_env(tmp_path, wheel):
    """pip download offline: the wheel given in a find-links folder of its own."""
    links = tmp_path / "links"
    links.mkdir(exist_ok=True)
    (links / FILENAME).write_bytes(wheel)
    return {"PIP_FIND_LINKS": str(links), "PIP_NO_INDEX": "1"}


def test_whole_wheel_verified(index, tmp_path):
    """No range requests: the wheel pip downloads (into a folder of its own) is the one read, after
    its digest is checked; not another file of its name and version in the cache's wheels/."""
    index.mode = "no-ranges"
    wheels = tmp_path / "cache" / "wheels"
    wheels.mkdir(parents=True)
    for decoy in ("nvidia_fake_cu12-1.2.3-0-py3-none-any.whl", "nvidia_fake_cu12-1.2.3-z-py3-none-any.whl"):
        (wheels / decoy).write_bytes(TAMPERED)
    rc, out, err, _ = run_tool(index, tmp_path, "headers", pinned=True)
    assert rc == 0, err
    assert "downloading the wheel" in err
    assert ("/files/" + FILENAME, None) in [(p, rng) for p, rng, _ in index.requests]  # pip's GET, the whole wheel
    assert (tmp_path / "cache" / ("%s-%s" % (PKG, VER)) / HEADER).read_bytes() == HEADER_TEXT
    assert (wheels / FILENAME).read_bytes() == WHEEL


def test_tampered_whole_wheel_refused(index, tmp_path):
    """pip told to read no index (PIP_NO_INDEX, a find-links folder): the tool reads none either
    (pip downloads); the wheel pip gives, not the manifest's, refused before it is opened."""
    rc, out, err, _ = run_tool(index, tmp_path, "list", "%s==%s" % (PKG, VER), env=pip_env(tmp_path, TAMPERED))
    assert rc != 0 and "Traceback" not in err, err
    assert "no-index, PIP_NO_INDEX" in err.splitlines()[0], err
    assert index.requests == []
    last = err.strip().splitlines()[-1]
    for n in ("%s==%s" % (PKG, VER), FILENAME, sha(WHEEL), sha(TAMPERED)):
        assert n in last, "%r not in %r" % (n, last)
    assert str(sha(HEADER_TEXT)) not in out and HEADER not in out  # never opened
    wheels = tmp_path / "cache" / "wheels"
    assert published(wheels) == []


def test_pin_writes_the_manifest(index, tmp_path):
    """pin: the wheel downloaded whole (it is small), checked against the index's sha256, and the
    digests of its include dir, library and dist-info taken from it."""
    out = tmp_path / "pinned.sha256"
    rc, _, err, _ = run_tool(index, tmp_path, "pin", pinned=True, env={"CUDALOAD_WHEEL_MANIFEST": str(out)})
    assert rc == 0, err
    lines = sorted(l for l in out.read_text().splitlines() if not l.startswith("#"))
    assert lines == sorted(manifest_of(WHEEL).splitlines())


def test_pin_refuses_a_wheel_not_the_index_digest(index, tmp_path):
    index.body = TAMPERED
    out = tmp_path / "pinned.sha256"
    rc, _, err, _ = run_tool(index, tmp_path, "pin", pinned=True, env={"CUDALOAD_WHEEL_MANIFEST": str(out)})
    assert rc != 0 and "Traceback" not in err, err
    last = err.strip().splitlines()[-1]
    assert sha(WHEEL) in last and sha(TAMPERED) in last, last
    assert not out.exists()


# ---- the index: the one pip is configured with, read in the JSON form of the simple API ----

BAD_INDEX = "http://192.0.2.1/simple"  # plain http of a host not trusted: read, the run fails at once


def cached_header(tmp_path):
    return (tmp_path / "cache" / ("%s-%s" % (PKG, VER)) / HEADER).read_bytes()


def test_index_from_pip_index_url(index, tmp_path):
    """PIP_INDEX_URL: the project's page (its normalized name) asked in the JSON form (PEP 691),
    the wheel's relative url joined with the page's URL."""
    rc, out, err, _ = run_tool(index, tmp_path, "headers", pinned=True)
    assert rc == 0, err
    assert [(p, acc) for p, _, acc in index.requests if "/simple/" in p] == [("/simple/nvidia-fake-cu12/", SIMPLE_JSON)]
    assert set(index.ranged()) == {"/files/" + FILENAME}
    assert cached_header(tmp_path) == HEADER_TEXT


@pytest.mark.parametrize("where", ["download", "global", "environment"])
def test_index_from_pip_conf(index, tmp_path, where):
    """pip's configuration file (PIP_CONFIG_FILE): [download] before [global] (pip download's own
    section, `index_url` spelt as pip also takes it), [install] not read (pip download does not),
    and PIP_INDEX_URL before either."""
    conf = tmp_path / "pip.conf"
    env = {"PIP_CONFIG_FILE": str(conf), "PIP_INDEX_URL": None}
    if where == "download":
        conf.write_text("[global]\nindex-url = %s\n[download]\nindex_url = %s\n" % (BAD_INDEX, index.simple))
    elif where == "global":
        conf.write_text("[global]\nindex-url = %s\n[install]\nindex-url = %s\n" % (index.simple, BAD_INDEX))
    else:
        conf.write_text("[download]\nindex-url = %s\n" % BAD_INDEX)
        env["PIP_INDEX_URL"] = index.simple
    rc, out, err, _ = run_tool(index, tmp_path, "headers", pinned=True, env=env)
    assert rc == 0, err
    assert cached_header(tmp_path) == HEADER_TEXT


@pytest.mark.parametrize("form", ["before", "after", "equals"])
def test_index_url_option(index, tmp_path, form):
    """--index-url, before pip's configuration (PIP_INDEX_URL here names an index refused)."""
    args = {"before": ("--index-url", index.simple, "headers"), "after": ("headers", "--index-url", index.simple),
            "equals": ("headers", "--index-url=" + index.simple)}[form]
    rc, out, err, _ = run_tool(index, tmp_path, *args, pinned=True, env={"PIP_INDEX_URL": BAD_INDEX})
    assert rc == 0, err
    assert out.strip() == str(tmp_path / "cache")
    assert cached_header(tmp_path) == HEADER_TEXT


PIPS_INDEX = """
import sys
try:
    from pip._internal.commands import create_command
except ImportError as e:
    sys.exit("no pip here to ask (%s)" % e)
options, _ = create_command("download").parse_args([])
print(options.index_url)
"""


def test_pip_config_files_in_pips_order(tmp_path, monkeypatch):
    """The index the tool takes from pip's configuration is the one `pip download` takes (asked of
    pip itself: its options parsed as `pip download` parses them): files written in each place pip
    reads ($XDG_CONFIG_DIRS' two, ~/.pip, $XDG_CONFIG_HOME, $PIP_CONFIG_FILE), each naming its own
    index, then taken away one by one; a [download] section of the first file before [global] of
    the last; a $PIP_CONFIG_FILE that exists keeps the user's files from being read; os.devnull,
    all of them (pip's default then)."""
    files = {"xdg-a": tmp_path / "xdg-a" / "pip" / "pip.conf", "xdg-b": tmp_path / "xdg-b" / "pip" / "pip.conf",
             "legacy": tmp_path / "home" / ".pip" / "pip.conf", "user": tmp_path / "cfg" / "pip" / "pip.conf",
             "env": tmp_path / "env.conf"}
    for name, f in files.items():
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text("[global]\nindex-url = https://%s.example/simple\n" % name)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(HOME=str(tmp_path / "home"), XDG_CONFIG_HOME=str(tmp_path / "cfg"), PIP_CONFIG_FILE=str(files["env"]),
               XDG_CONFIG_DIRS=os.pathsep.join([str(tmp_path / "xdg-a"), str(tmp_path / "xdg-b")]))

    def pips():
        r = subprocess.run([sys.executable, "-c", PIPS_INDEX], env=env, capture_output=True, text=True, timeout=RUN_LIMIT)
        if r.returncode != 0:
            pytest.skip("pip's own reading of its configuration: %s" % (r.stderr.strip().splitlines() or ["?"])[-1])
        return r.stdout.strip()

    def ours():
        for k in list(os.environ):
            if k.startswith(("PIP_", "XDG_")) or k == "HOME":
                monkeypatch.delenv(k)
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        forget_the_index()
        return wheel_files.index().url

    seen = []
    for step in ("all", "download-section", "empty", "env", "user", "legacy", "xdg-b", "env-without-index", "devnull"):
        if step == "empty":  # empty values (a later file's [download], PIP_INDEX_URL) passed over: [global]'s taken
            env["PIP_INDEX_URL"] = ""
            files["xdg-b"].write_text("[global]\nindex-url = https://xdg-b.example/simple\n[download]\nindex-url =\n")
        elif step == "download-section":
            files["xdg-a"].write_text("[download]\nindex-url = https://xdg-a-download.example/simple\n")
        elif step in files:
            files[step].unlink()
            if step == "env":
                files["xdg-a"].write_text("[global]\nindex-url = https://xdg-a.example/simple\n")
        elif step == "env-without-index":  # the user's files again, and a $PIP_CONFIG_FILE that exists
            for name in ("legacy", "user", "env"):
                files[name].write_text("[global]\n%s\n" % (
                    "timeout = 60" if name == "env" else "index-url = https://%s.example/simple" % name))
        elif step == "devnull":
            env["PIP_CONFIG_FILE"] = os.devnull
        want = pips()
        assert ours() == want, "%s: pip download takes %s" % (step, want)
        seen.append(want)
    forget_the_index()
    # this machine's own files (/etc/pip.conf, the interpreter's) are read by both; where one names
    # an index it wins over some of ours: then the steps' answers are not the ones written here
    machine = [f for f in ("/etc/pip.conf", os.path.join(sys.prefix, "pip.conf")) if os.path.exists(f)
               and re.search(r"^\s*index[-_]url\s*[=:]", open(f, errors="replace").read(), re.M | re.I)]
    assert machine or seen == ["https://%s.example/simple" % n for n in ("env", "xdg-a-download", "env", "user", "legacy", "xdg-b", "xdg-a", "xdg-a")] + [
        wheel_files.PIP_DEFAULT_INDEX], seen


def test_plain_http_index_refused(index, tmp_path):
    """An index of plain http whose host pip is not told to trust: refused at once, one line
    naming the URL and the setting that trusts it."""
    url = "http://192.0.2.1:8080/simple"
    rc, _, err, secs = run_tool(index, tmp_path, "list", "%s==%s" % (PKG, VER), env={"PIP_INDEX_URL": url})
    line = one_line_error(rc, err, url + "/nvidia-fake-cu12/", "PIP_TRUSTED_HOST=192.0.2.1:8080", "trusted-host")
    assert rc == 1 and secs < TIMEOUT, line


def test_plain_http_file_refused(index, tmp_path):
    """The index (loopback: pip reads it) lists the wheel at plain http of a host not trusted:
    refused, one line naming that URL."""
    index.url_form = "untrusted"
    rc, _, err, secs = run_tool(index, tmp_path, "list", "%s==%s" % (PKG, VER))
    one_line_error(rc, err, "http://192.0.2.1/files/" + FILENAME, "PIP_TRUSTED_HOST=192.0.2.1")
    assert index.ranged() == []


def test_trusted_host_of_pip(index, tmp_path):
    """PIP_TRUSTED_HOST (host or host:port) lets the plain http index be read: no refusal (the
    request then fails: nothing is there)."""
    for trusted in ("192.0.2.1", "example.org 192.0.2.1:8080"):
        rc, _, err, _ = run_tool(index, tmp_path, "list", "%s==%s" % (PKG, VER),
                                 env={"PIP_INDEX_URL": "http://192.0.2.1:8080/simple", "PIP_TRUSTED_HOST": trusted})
        line = one_line_error(rc, err, "http://192.0.2.1:8080/simple/nvidia-fake-cu12/")
        assert "plain http" not in line and "TRUSTED" not in line, line


@pytest.mark.parametrize("url, trusted, secure", [
    ("https://example.org/simple/", "", True),
    ("http://127.0.0.1:8000/simple/", "", True),            # loopback: pip takes it as secure
    ("http://localhost/simple/", "", True),
    ("http://[::1]:8000/simple/", "", True),
    ("http://192.0.2.1/simple/", "", False),
    ("http://192.0.2.1/simple/", "192.0.2.1", True),
    ("http://192.0.2.1:8080/simple/", "192.0.2.1", True),    # a host alone: any port
    ("http://192.0.2.1:8080/simple/", "192.0.2.1:8080", True),
    ("http://192.0.2.1:8081/simple/", "192.0.2.1:8080", False),
    ("http://Mirror.Example/simple/", "a.example\n    mirror.example", True),  # pip.conf: a list, host names in any case
])
def test_secure_as_pip_says(inproc, monkeypatch, tmp_path, url, trusted, secure):
    """Which URLs pip reads (its secure origins, and trusted-host from pip.conf)."""
    conf = tmp_path / "trusted.conf"
    conf.write_text("[global]\ntrusted-host = %s\n" % trusted)
    monkeypatch.setenv("PIP_CONFIG_FILE", str(conf))
    forget_the_index()
    assert wheel_files.index().secure(url) is secure


@pytest.mark.parametrize("form", ["relative", "absolute", "redirect"])
def test_file_url_forms(index, tmp_path, form):
    """The files' url as PEP 691 allows it: relative (joined with the URL of the page that was
    answered, after a redirect: /mirror/simple/PROJECT/ and ../../files/ give /mirror/files/), or
    absolute."""
    if form == "redirect":
        index.mode = "redirect"
    else:
        index.url_form = form
    rc, out, err, _ = run_tool(index, tmp_path, "headers", pinned=True)
    assert rc == 0, err
    assert set(index.ranged()) == {index.wheel_url.split(str(index.server_address[1]), 1)[1]}
    assert cached_header(tmp_path) == HEADER_TEXT


def test_size_not_given(index, tmp_path):
    """An index that gives no size (PEP 700's is optional): read from the answer to a range request."""
    index.mode = "no-size"
    rc, out, err, _ = run_tool(index, tmp_path, "headers", pinned=True)
    assert rc == 0, err
    assert [rng for _, rng, _ in index.requests if rng][0] == "bytes=0-0"
    assert cached_header(tmp_path) == HEADER_TEXT


def test_releases_from_the_file_names(inproc):
    """`since` reads every release: the versions of the project's Linux x86-64 wheels on its page
    (not its sdist's, 1.9.9, nor an aarch64 wheel's, 1.8.0), of the major asked, oldest first."""
    want = sorted((v for v in VERSIONS if v.split(".")[0] == "1"), key=lambda v: [int(x) for x in v.split(".")])
    assert VER in want
    assert wheel_files.releases(PKG, "1") == want


# ---- runs at once ----

def test_two_runs_at_once(index, tmp_path):
    """Two `headers` runs at once into the same empty cache (each one's range request held until
    both asked): both succeed, the cache holds the one directory, which verifies (a third run
    fetches nothing), and no temporary one."""
    index.mode = "hold"
    env = {"CUDALOAD_WHEEL_TIMEOUT": "15"}
    runs = [start_tool(index, tmp_path, "headers", pinned=True, env=env) for _ in range(2)]
    wait_for("two range requests", lambda: len(index.ranged()) >= 2)
    index.hold.set()
    for p in runs:
        rc, out, err = finish(p)
        assert rc == 0, err
        assert out.strip() == str(tmp_path / "cache")
    assert published(tmp_path / "cache") == ["%s-%s" % (PKG, VER)]
    n = len(index.requests)
    rc, _, err, _ = run_tool(index, tmp_path, "headers", pinned=True)
    assert rc == 0 and err == "" and len(index.requests) == n, err


def test_a_run_overtaken_keeps_the_others_headers(index, tmp_path):
    """A run whose fetch another run overtakes (the other puts the headers in place while this one
    waits for its range): the other's directory is kept, not replaced (whoever reads it is never
    left without it), this one's dropped, both succeed."""
    index.mode = "hold"
    env = {"CUDALOAD_WHEEL_TIMEOUT": "15"}
    slow = start_tool(index, tmp_path, "headers", pinned=True, env=env)
    wait_for("the slow run's range request", lambda: index.ranged())
    d = tmp_path / "cache" / ("%s-%s" % (PKG, VER))
    with serving() as fast:
        rc, _, err, _ = run_tool(fast, tmp_path, "headers", pinned=True, env=env)
    assert rc == 0, err
    inode = d.stat().st_ino
    index.hold.set()
    rc, out, err = finish(slow)
    assert rc == 0, err
    assert d.stat().st_ino == inode, "the other run's directory replaced"
    assert "another run put them in %s meanwhile: those kept" % d in err, err
    assert published(tmp_path / "cache") == [d.name]
    assert (d / HEADER).read_bytes() == HEADER_TEXT


# ---- one line, never a traceback: a malformed library, tools/gen_api.py, make ----

def test_malformed_elf_from_the_command_line(index, tmp_path):
    """`since` meets the library member whose ELF header is malformed: one line naming it."""
    rc, _, err, _ = run_tool(index, tmp_path, "since", "fake", PKG, pinned=True)
    assert rc == 1 and "Traceback" not in err, err
    last = err.strip().splitlines()[-1]
    assert last.startswith("wheel_files: ") and LIB in last and "e_phentsize" in last, last


def test_gen_api_says_a_fetch_error_in_one_line(index, tmp_path):
    """tools/gen_api.py fetching a wheel's headers from a stalled index: one line, the tool's."""
    pytest.importorskip("clang.cindex")  # gen_api's own import
    index.mode = "stall-page"
    cmd = [sys.executable, "-c", "import sys; sys.path.insert(0, %r); import gen_api; "
           "gen_api.wheel_include(%r, 'fake', %r, %r, 'nvidia/fake/include')" % (
               str(REPO / "tools"), str(tmp_path / "cache"), PKG, VER)]
    r = subprocess.run(cmd, env=tool_env(index, tmp_path), capture_output=True, text=True, timeout=RUN_LIMIT)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("gen_api: fake: the headers of %s==%s" % (PKG, VER)), last
    assert index.simple + "/nvidia-fake-cu12/" in last and "stalled" in last, last


def make_env(index, tmp_path):
    """tool_env, none of an outer make's variables (a make check running this)."""
    env = tool_env(index, tmp_path)
    for k in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "WHEEL_FILES", "WHEEL_FILES_ERROR"):
        env.pop(k, None)
    return env


def test_make_with_a_stalled_index(index, tmp_path):
    """make (a dry run of all: nothing built), the index stalled: its `headers` at parse time ends
    in bounded time, make says which stubs it leaves out as it starts, and again as the last line
    of all, with the tool's error (the URL); `make help`, which needs no headers, asks nothing."""
    index.mode = "stall-page"
    t = time.monotonic()
    r = subprocess.run(["make", "-n", "--no-print-directory", "-C", str(REPO), "B=%s" % (tmp_path / "build"), "CUDA_HOME=%s" % tmp_path,
                        "CUDA_INC=%s" % tmp_path, "NVCC=", "PYTHON=%s" % sys.executable, "all"],
                       env=make_env(index, tmp_path), capture_output=True, text=True, timeout=RUN_LIMIT)
    secs = time.monotonic() - t
    assert r.returncode == 0, r.stderr
    assert secs < TIMEOUT + 8, "%.1f s" % secs
    lines = r.stdout.strip().splitlines()
    assert any(l.startswith("cudaload: no headers for the stubs of cudnn") for l in lines[:3]), r.stdout[:2000]
    last = lines[-1]
    assert last.startswith("cudaload: the stubs of cudnn ") and " were not built: " in last, last
    assert index.simple + "/nvidia-cudnn-cu13/" in last and "stalled" in last, last
    n = len(index.requests)
    r = subprocess.run(["make", "--no-print-directory", "-C", str(REPO), "B=%s" % (tmp_path / "build"), "help"],
                       env=make_env(index, tmp_path), capture_output=True, text=True, timeout=RUN_LIMIT)
    assert r.returncode == 0 and "were not built" not in r.stdout and len(index.requests) == n, r.stderr
