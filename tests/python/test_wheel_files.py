# SPDX-License-Identifier: Apache-2.0
"""tools/wheel_files.py's remote reads against a loopback index (no network): an HTTP server on
127.0.0.1 that answers the JSON API the tool asks (CUDALOAD_PYPI_JSON) and serves a small wheel
built here with zipfile, with range requests as PyPI's file host answers them, or broken in one
way a test names: a body shorter than asked, a Content-Range not the one asked, a stall (nothing
sent, or the headers then nothing, or a trickle), a file that is no zip, a library member whose
ELF header is malformed; and the two fallbacks kept (no range requests, no JSON API: `pip
download`, which fails at once here). Each broken answer must be an error of the tool in
bounded time (the tool run with CUDALOAD_WHEEL_TIMEOUT=2), one line on stderr naming the URL or
the file, never a loop or a traceback; the good answer must give the wheel's bytes. The tool
checks what it takes out against a manifest made here (CUDALOAD_WHEEL_MANIFEST): a header or a
whole wheel (the `pip download` fallback, offline from a find-links folder) not as the manifest
says is refused in one line naming the file and both digests, nothing published; `pin` writes
the manifest and refuses a wheel that is not the index's sha256.

    python -m pytest tests/python/test_wheel_files.py

Needs no package wheel, GPU or network: none of conftest.py's fixtures.
"""
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


class Index(http.server.ThreadingHTTPServer):
    """The JSON API at /pypi/<project>/json (any project: the one wheel), the wheel at
    /files/<FILENAME>. mode: how the wheel's range requests are answered; size: the size the
    index gives for the wheel; body: the wheel's bytes."""
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), Handler)
        self.mode, self.size, self.body, self.requests = "good", len(WHEEL), WHEEL, []
        self.release = threading.Event()  # set at the end: a stalled handler returns

    @property
    def api(self):
        return "http://127.0.0.1:%d/pypi" % self.server_address[1]

    @property
    def wheel_url(self):
        return "http://127.0.0.1:%d/files/%s" % (self.server_address[1], FILENAME)


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

    def do_GET(self):
        srv = self.server
        srv.requests.append((self.path, self.headers.get("Range")))
        m = re.match(r"^/pypi/([^/]+)/json$", self.path)
        if m and srv.mode == "no-json":  # a mirror without PyPI's JSON API
            return self.send(404, b"not found")
        if m:
            # every version the tool may ask (the pinned ones: `headers`) is the one wheel
            files = [{"filename": FILENAME, "url": "../../files/" + FILENAME, "size": srv.size,
                      "digests": {"sha256": sha(WHEEL)}}]  # the good wheel's, whatever is served
            doc = {"info": {"name": m.group(1)}, "releases": {v: files for v in VERSIONS}}
            return self.send(200, json.dumps(doc).encode(), [("Content-Type", "application/json")])
        if self.path != "/files/" + FILENAME:
            return self.send(404, b"not found")
        data, mode = srv.body, srv.mode
        r = re.match(r"^bytes=(\d+)-(\d+)$", self.headers.get("Range") or "")
        if not r or mode == "no-ranges":
            return self.send(200, data)
        lo, hi = int(r.group(1)), int(r.group(2))
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


@pytest.fixture
def index():
    srv = Index()
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield srv
    srv.release.set()
    srv.shutdown()
    srv.server_close()


def write_manifest(tmp_path):
    path = tmp_path / "wheel-files.sha256"
    if not path.exists():
        path.write_text(manifest_of(WHEEL))
    return path


def tool_env(index, tmp_path):
    env = {k: v for k, v in os.environ.items()
           if not k.lower().endswith("_proxy") and not k.startswith(("CUDALOAD_", "PIP_"))}
    env.update(CUDALOAD_PYPI_JSON=index.api, CUDALOAD_WHEEL_TIMEOUT=str(TIMEOUT),
               CUDALOAD_WHEEL_MANIFEST=str(write_manifest(tmp_path)),
               CUDALOAD_WHEEL_CACHE=str(tmp_path / "cache"), NO_PROXY="127.0.0.1", no_proxy="127.0.0.1",
               # a fallback to `pip download` stays here: no index, so it fails at once
               PIP_NO_INDEX="1", PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1")
    return env


def run_tool(index, tmp_path, *args, pinned=False, env=None):
    """The tool in a subprocess: (exit code, stdout, stderr, seconds); a run past RUN_LIMIT fails.
    pinned: its pins are the fake wheel alone (row fake: its include dir and library), no older."""
    t = time.monotonic()
    cmd = [sys.executable, str(TOOL), *args]
    if pinned:
        pins = tmp_path / "wheel-libs.txt"
        pins.write_text("fake  %s==%s  %s  nvidia/fake/include\n" % (PKG, VER, LIB))
        cmd = [sys.executable, "-c", "import sys; sys.path.insert(0, %r); import wheel_files as w; w.PINS = %r; "
               "w.OLDER = %r; w.cli(sys.argv)" % (str(REPO / "tools"), str(pins), str(tmp_path / "no-older.txt")), *args]
    try:
        r = subprocess.run(cmd, env=dict(tool_env(index, tmp_path), **(env or {})),
                           capture_output=True, text=True, timeout=RUN_LIMIT)
    except subprocess.TimeoutExpired as e:
        pytest.fail("wheel_files.py %s ran past %d s (a loop or an unbounded wait); stderr: %s" % (
            " ".join(args), RUN_LIMIT, (e.stderr or b"")[-2000:]))
    return r.returncode, r.stdout, r.stderr, time.monotonic() - t


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


@pytest.fixture
def inproc(index, monkeypatch, tmp_path):
    """The module itself pointed at the loopback index (its JSON cache emptied)."""
    monkeypatch.setenv("CUDALOAD_PYPI_JSON", index.api)
    monkeypatch.setenv("CUDALOAD_WHEEL_TIMEOUT", str(TIMEOUT))
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    monkeypatch.setenv("CUDALOAD_WHEEL_MANIFEST", str(write_manifest(tmp_path)))
    wheel_files.project_releases.cache_clear()
    yield index
    wheel_files.project_releases.cache_clear()


# ---- the good path ----

def test_headers_and_ranges_are_the_wheels_bytes(inproc, tmp_path):
    d = wheel_files.fetch_headers(str(tmp_path), "fake", PKG, VER, "nvidia/fake/include", block=1024)
    assert open(os.path.join(d, HEADER), "rb").read() == HEADER_TEXT
    assert os.path.exists(os.path.join(d, ".complete"))
    assert all(rng and rng.startswith("bytes=") for p, rng in inproc.requests if p.startswith("/files/"))
    rf = wheel_files.RangeFile(inproc.wheel_url, len(WHEEL), 512)
    for lo, n in ((0, 100), (500, 1500), (len(WHEEL) - 30, 30), (len(WHEEL) - 5, 100)):
        assert rf.read_range(lo, n) == WHEEL[lo:lo + n]
    rf.seek(300)
    assert rf.read(2000) == WHEEL[300:2300]


def test_list_prints_the_members(index, tmp_path):
    rc, out, err, _ = run_tool(index, tmp_path, "list", "%s==%s" % (PKG, VER))
    assert rc == 0, err
    assert "%d %s" % (len(HEADER_TEXT), HEADER) in out.splitlines()


@pytest.mark.parametrize("mode", ["no-ranges", "no-json"])
def test_fallback_to_pip_download(index, tmp_path, mode):
    """The fallbacks kept: no range requests (a 200), or no JSON API page (a 404), is `pip
    download` of the whole wheel (here with no index: it fails at once, said in one line)."""
    index.mode = mode
    rc, _, err, _ = run_tool(index, tmp_path, "list", "%s==%s" % (PKG, VER))
    assert rc != 0 and "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert "downloading the wheel" in lines[0], err
    assert lines[-1] == "wheel_files: pip download %s==%s failed (exit 1)" % (PKG, VER), err


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
    assert len([p for p, _ in inproc.requests if p.startswith("/files/")]) == 2  # asked again, not kept


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
    rc, out, err, _ = run_tool(index, tmp_path, "headers", pinned=True, env=pip_env(tmp_path, WHEEL))
    assert rc == 0, err
    assert "downloading the wheel" in err
    assert (tmp_path / "cache" / ("%s-%s" % (PKG, VER)) / HEADER).read_bytes() == HEADER_TEXT
    assert (wheels / FILENAME).read_bytes() == WHEEL


def test_tampered_whole_wheel_refused(index, tmp_path):
    index.mode = "no-ranges"
    rc, out, err, _ = run_tool(index, tmp_path, "list", "%s==%s" % (PKG, VER), env=pip_env(tmp_path, TAMPERED))
    assert rc != 0 and "Traceback" not in err, err
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
