#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""wheel_files.py -- the headers and export lists of the libraries that ship as wheels of their own
(cuDNN, NCCL, NVML, CUPTI, cuSPARSELt, cuTENSOR, cuDSS, cuFile, nvSHMEM), read from the wheels
pinned in tools/api/wheel-libs.txt, without downloading them whole.

    tools/wheel_files.py headers [--cache DIR] [--error-file FILE]
                                                 fetch the pinned wheels' include dirs into the
                                                 cache (once), and the older ones the tests use
                                                 (tools/api/wheel-older.txt), and print its
                                                 directory; where it fails, its error line is
                                                 written to FILE too (make repeats it at the end)
    tools/wheel_files.py exports [ROW...]        read each row's library out of its wheel, and
                                                 write tools/api/<row>-exports.txt (`nm -D`); a
                                                 row whose wheel has no library (NVML's: the
                                                 header only) keeps the list read from the
                                                 driver's library on a GPU machine
    tools/wheel_files.py since ROW PACKAGE...    read the row's library (the pinned file's name)
                                                 out of every release of the PACKAGEs with the
                                                 pinned major (its dynamic symbols from the front
                                                 of the member where they are there), and write
                                                 tools/api/<row>-since.txt: each export of the
                                                 pinned release and its first release
    tools/wheel_files.py list PACKAGE==VERSION   print a wheel's members (size, name)
    tools/wheel_files.py site ROW DIR [MEMBER...] lay the row's pinned library, the wheel's
                                                 members named (paths in the wheel) and its
                                                 dist-info out in DIR as pip installs them (a
                                                 site-packages the tests load the real library
                                                 from: tests/fixtures.sh), once
    tools/wheel_files.py pin [--whole]           write the manifest (below) of the pinned wheels

Every command takes --index-url URL: the index to read, before pip's configuration (below).

A wheel is a zip: its directory sits at the end. Reading that with HTTP range requests, and then
only the members wanted, costs a few MB where the wheels are 1.5 GB (cuDNN's alone is 516 MB).
Where the index has no page in the JSON form of the simple API (an index of HTML pages only),
pip is told to read no index (no-index: find-links only), or the file host does not answer range
requests, the wheel is downloaded whole (`pip download`, into a folder of its own, checked
against the manifest, then kept in the cache's wheels/) and read from disk; not where a request
fails or stalls (pip would meet that too). pip reads the same configuration (the tool's
--index-url passed on), and is given 10 x $CUDALOAD_WHEEL_TIMEOUT in all (20 minutes by
default), past which it is stopped: an error, never a hang.

The index is the one `pip download` reads: --index-url, else pip's configuration's index-url
($PIP_INDEX_URL; else [download], then [global], of pip's files: /etc/xdg/pip/pip.conf,
/etc/pip.conf, ~/.pip/pip.conf, ~/.config/pip/pip.conf, the interpreter's sys.prefix/pip.conf (a
venv's), $PIP_CONFIG_FILE, a later file's value winning, in pip's order: pip_config_files()), else
pip's default, PyPI's. Each project's page is read in the JSON form of the simple API (PEP 691:
GET INDEX/PROJECT/ with Accept: application/vnd.pypi.simple.v1+json): the files of every release,
each with its URL (relative to the page where it is relative), its sha256 and its size (where the
index gives none, the size is read from a range request's answer). Credentials in the index's URL
(https://user:password@host/...) are sent to its host. pip's cert (its CA bundle) is used for
https. Plain http is refused, as pip refuses it, unless the host is a loopback one or pip is told
to trust it ($PIP_TRUSTED_HOST, or trusted-host in pip's files: host or host:port, several
separated by spaces): one line naming the URL and the setting. extra-index-url is not read.

The cache: $CUDALOAD_WHEEL_CACHE, else $XDG_CACHE_HOME/cudaload/wheel-files, else
~/.cache/cudaload/wheel-files; one directory per pinned wheel (PACKAGE-VERSION), holding the
wheel's own paths (nvidia/cudnn/include/cudnn.h, ...), complete once its .complete marker is
there; exports/ holds the export list `since` read from each release (PACKAGE-VERSION-FILE.txt),
so that a second run reads no wheel it has read. Runs at once share it: a directory is put in
place whole (a temporary one renamed), and where another run put it there first, that one is kept.

Trust: the manifest, tools/api/wheel-files.sha256 ($CUDALOAD_WHEEL_MANIFEST names another: the
tests'), committed beside the pins, is the root of trust: one line per file taken out of a wheel
(`SHA256  PACKAGE==VERSION  PATH`: each pinned wheel's include dir, library, dist-info and the
members `site` lays out, each older wheel's include dir) and one per wheel (its file name as PATH:
the sha256 the index lists, hashes.sha256). The index, its file host, the zip's
directory and CRCs are not trusted: every file `headers`, `site` and `exports` take out of a wheel
is checked against the manifest before it is used or published (the cache, a `site` tree: written
into a temporary directory first, renamed or moved into place once all verified), a wheel
downloaded whole (`pip download`, into a folder of its own) before it is opened; a file whose
sha256 differs, or that the manifest does not list (or lists and the wheel lacks), is refused with
one line naming the wheel, the file and both digests. A cached include dir is verified each time
it is used (about 16 MB hashed, a fraction of a second), and fetched again, said in one line, where
it does not verify (made before the manifest, or changed since). `pin` writes the manifest: it
reads the wheels as the tool does and records each file's sha256; a wheel below 64 MB, or every
one with --whole (about 3 GB, a few minutes on a fast link), is downloaded whole, checked against
the index's sha256, and its files' digests are taken from it. Regenerating the manifest (a new pin)
is a reviewed change: its diff is what is trusted. `since` reads every release of a project (not
pinned), for the names of its exports only: those are not verified; its output,
tools/api/<row>-since.txt, is committed and reviewed.

Errors: a request that fails, an answer that is not the range asked (its Content-Range, or fewer
bytes), a stalled server, a plain http URL pip would refuse, or a wheel or library that is not as
its format says (a zip's directory, an ELF header) ends the run with one line on stderr (exit 1)
naming the URL or the file and what was wrong, never a traceback; `make`, which runs `headers` as
it reads the Makefile, then builds the rest and says which stubs were left out, and why, at the
end of the build.
$CUDALOAD_WHEEL_TIMEOUT (seconds, default 120) bounds each request as a whole: connecting, the
answer's headers and its body; past it the request is an error (a stall or a server that trickles).
"""
import base64
import configparser
import contextlib
import errno
import functools
import hashlib
import http.client
import io
import ipaddress
import json
import locale
import os
import re
import shutil
import socket
import ssl
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
import zlib

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PINS = os.path.join(TOP, "tools", "api", "wheel-libs.txt")
MANIFEST = os.path.join(TOP, "tools", "api", "wheel-files.sha256")
GEN = "generated by tools/wheel_files.py from the pinned wheel; do not edit (tools/wheel_files.py exports)"
PLATFORM = "manylinux"  # x86_64 wheels: the exports and headers are the same on aarch64
BLOCK = 1 << 20


def log(msg):
    print("wheel_files: %s" % msg, file=sys.stderr, flush=True)


def mb(n):
    """A size for the progress lines: kB under a megabyte, else MB."""
    return "%.0f kB" % (n / 1e3) if n < 1e6 else "%.1f MB" % (n / 1e6)


FETCHED = []  # (package==version, bytes of the wheel read) for each include dir fetched this run


def pins():
    """[(row, package, version, library path in the wheel or '', include dir in the wheel)]."""
    out = []
    for line in open(PINS):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        f = line.split()
        if len(f) != 4 or "==" not in f[1]:
            sys.exit("wheel_files: %s: a line is ROW PACKAGE==VERSION LIBRARY INCLUDE-DIR, not %r" % (PINS, line))
        pkg, ver = f[1].split("==")
        out.append((f[0], pkg, ver, "" if f[2] == "-" else f[2], f[3]))
    return out


OLDER = os.path.join(TOP, "tools", "api", "wheel-older.txt")


def older():
    """[(row, package, version, include dir in the wheel, language)]: tools/api/wheel-older.txt."""
    out = []
    for line in open(OLDER) if os.path.exists(OLDER) else []:
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        f = line.split()
        if len(f) != 4 or "==" not in f[1] or f[3] not in ("c", "c++"):
            sys.exit("wheel_files: %s: a line is ROW PACKAGE==VERSION INCLUDE-DIR c|c++, not %r" % (OLDER, line))
        pkg, ver = f[1].split("==")
        out.append((f[0], pkg, ver, f[2], f[3]))
    return out


def cache_dir():
    d = os.environ.get("CUDALOAD_WHEEL_CACHE")
    if not d:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        d = os.path.join(base, "cudaload", "wheel-files")
    return os.path.abspath(d)


# ---- the index: the one `pip download` reads (pip's configuration) ----

PIP_DEFAULT_INDEX = "https://pypi.org/simple"  # pip's own default, where nothing names another
SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"  # the JSON form of the simple API (PEP 691)
INDEX_URL_OPTION = None  # --index-url URL of the tool (main): before pip's configuration


def pip_config_files():
    """The configuration files `pip download` reads, in pip's order (a value in a later file wins),
    as pip lays them out on Linux (pip/_internal/configuration.py): the site-wide ones
    ($XDG_CONFIG_DIRS, else /etc/xdg: DIR/pip/pip.conf each; then /etc/pip.conf), the user's
    (~/.pip/pip.conf, then $XDG_CONFIG_HOME, else ~/.config: DIR/pip/pip.conf) unless
    $PIP_CONFIG_FILE names a file that exists, the interpreter's (sys.prefix/pip.conf: a venv's),
    then $PIP_CONFIG_FILE. None at all where $PIP_CONFIG_FILE is os.devnull (pip's way to turn
    them off). Read here rather than by running `pip config list`: that costs a second at each
    make, needs pip where the ranged reads do not, and still leaves the sections' order to us."""
    env = os.environ.get("PIP_CONFIG_FILE")
    if env == os.devnull:
        return []
    dirs = (os.environ.get("XDG_CONFIG_DIRS") or "").strip() or "/etc/xdg"
    files = [os.path.join(d, "pip", "pip.conf") for d in dirs.split(os.pathsep) if d] + ["/etc/pip.conf"]
    if not (env and os.path.exists(env)):
        home = os.path.expanduser("~")
        user = (os.environ.get("XDG_CONFIG_HOME") or "").strip() or os.path.join(home, ".config")
        files += [os.path.join(home, ".pip", "pip.conf"), os.path.join(user, "pip", "pip.conf")]
    files.append(os.path.join(sys.prefix, "pip.conf"))
    if env:
        files.append(env)
    return files


def pip_name(key):
    """A setting's name as pip compares them: lower case, '-' for '_', no leading '--'."""
    key = key.lower().replace("_", "-")
    return key[2:] if key.startswith("--") else key


@functools.lru_cache(maxsize=None)
def pip_settings():
    """{name: (value, where it was set)} of the settings `pip download` takes from its
    configuration, in pip's order of precedence: [global] of the files, then [download] of the
    files, then the PIP_<NAME> environment variables (each later one wins; an empty value is
    passed over). [install] is not read: `pip download`, the fallback below, does not read it
    either. tests/python/test_wheel_files.py checks the index against pip's own reading."""
    merged = {}  # "section.name" -> (value, file): a later file's wins
    for path in pip_config_files():
        if not os.path.isfile(path):
            continue
        parser = configparser.RawConfigParser()
        try:
            parser.read(path, encoding=locale.getpreferredencoding(False))  # as pip reads it
        except (configparser.Error, UnicodeDecodeError) as e:
            raise WheelError("%s (pip's configuration): %s" % (path, why(e))) from None
        for section in parser.sections():
            for key, value in parser.items(section):
                merged["%s.%s" % (section, pip_name(key))] = (value, "%s [%s]" % (path, section))
    out = {}
    for section in ("global", "download"):
        for key, v in merged.items():
            if key.startswith(section + ".") and v[0]:  # an empty value is dropped, as pip drops it
                out[key.split(".", 1)[1]] = v
    for key, value in os.environ.items():
        if key.startswith("PIP_") and value:
            out[pip_name(key[4:])] = (value, key)
    return out


def pip_bool(name):
    """A yes/no setting of pip's (strtobool, as pip parses it): (True or False, where), or None."""
    v = pip_settings().get(name)
    if v is None:
        return None
    word = v[0].strip().lower()
    if word in ("y", "yes", "t", "true", "on", "1"):
        return True, v[1]
    if word in ("n", "no", "f", "false", "off", "0"):
        return False, v[1]
    raise WheelError("%s=%r (%s): not a yes or no, as pip reads it" % (name, v[0], v[1]))


class Index:
    """The index as `pip download` would read it: url (credentials taken out), where it was set,
    no_index (where pip is told to read none), trusted ([(host, port or None)]: trusted-host),
    the TLS context (pip's cert setting, else the system's) and the credentials given in the
    index's URL ({host[:port]: Authorization header})."""

    def __init__(self):
        s = pip_settings()
        if INDEX_URL_OPTION:
            url, self.where = INDEX_URL_OPTION, "--index-url"
        elif "index-url" in s:
            url, self.where = s["index-url"][0].strip(), s["index-url"][1]
        else:
            url, self.where = PIP_DEFAULT_INDEX, "pip's default"
        u = urllib.parse.urlsplit(url)
        self.auth = {}
        if u.username is not None:  # https://user:password@host/simple, as pip takes it
            cred = "%s:%s" % (urllib.parse.unquote(u.username), urllib.parse.unquote(u.password or ""))
            netloc = u.netloc.rsplit("@", 1)[1]
            self.auth[netloc.lower()] = "Basic " + base64.b64encode(cred.encode()).decode()
            u = u._replace(netloc=netloc)
        self.url = urllib.parse.urlunsplit(u)
        no = pip_bool("no-index")
        self.no_index = no[1] if no and no[0] else None  # before any index-url, --index-url too, as in pip
        self.trusted, self.trusted_where = [], s.get("trusted-host", ("", None))[1]
        for h in s.get("trusted-host", ("",))[0].split():  # host or host:port, space-separated, as pip's
            t = urllib.parse.urlsplit("//" + h)
            try:
                self.trusted.append(((t.hostname or "").lower(), t.port))
            except ValueError:
                raise WheelError("trusted-host %r (%s): not host or host:port" % (h, self.trusted_where)) from None
        cert = s.get("cert")
        try:
            # pip's cert: the CA bundle it verifies with instead of its own (a mirror's CA)
            self.tls = ssl.create_default_context(cafile=cert[0]) if cert and cert[0].strip() else ssl.create_default_context()
        except (OSError, ssl.SSLError) as e:
            raise WheelError("cert %s (%s, pip's CA bundle): %s" % (cert[0], cert[1], why(e))) from None

    def secure(self, url):
        """Whether pip would read url: https, a loopback host (pip takes localhost, 127.0.0.0/8 and
        ::1 as secure), or a host pip is told to trust (trusted-host: host, or host:port)."""
        u = urllib.parse.urlsplit(url)
        if u.scheme == "https":
            return True
        host = (u.hostname or "").lower()
        try:
            loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = False
        return loopback or any(h == host and (p is None or p == u.port) for h, p in self.trusted)

    def check(self, url):
        """url, where pip would read it, else an Insecure error: one line naming it and the setting."""
        if not self.secure(url):
            host = urllib.parse.urlsplit(url).netloc
            raise Insecure("%s: plain %s, and pip is not told to trust %s: refused (trust it as pip does: "
                           "PIP_TRUSTED_HOST=%s, or trusted-host = %s in pip.conf's [global]; or use https)"
                           % (url, urllib.parse.urlsplit(url).scheme, host, host, host))
        return url


@functools.lru_cache(maxsize=None)
def index():
    return Index()


def normalized(pkg):
    """A project's name as the index's URLs spell it (PEP 503)."""
    return re.sub(r"[-_.]+", "-", pkg).lower()


# ---- the manifest: the sha256 of each file taken out of a wheel, and of each wheel ----


def manifest_path():
    """$CUDALOAD_WHEEL_MANIFEST, else tools/api/wheel-files.sha256."""
    return os.path.abspath(os.environ.get("CUDALOAD_WHEEL_MANIFEST") or MANIFEST)


def is_wheel_line(path):
    """A manifest line's path that is the wheel itself (its file name: no '/', .whl)."""
    return "/" not in path and path.endswith(".whl")


@functools.lru_cache(maxsize=None)
def read_manifest(path):
    """{PACKAGE==VERSION: {"wheel": (file name, sha256) or None, "files": {path: sha256}}} of the
    manifest at path; a missing or malformed manifest is a VerifyError."""
    out = {}
    try:
        text = open(path).read()
    except OSError as e:
        raise VerifyError("%s: the manifest of the files taken out of the wheels: %s (tools/wheel_files.py pin makes it)"
                          % (path, why(e))) from None
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        f = line.split(None, 2)
        if len(f) != 3 or not re.fullmatch(r"[0-9a-f]{64}", f[0]) or f[1].count("==") != 1:
            raise VerifyError("%s:%d: a line is SHA256  PACKAGE==VERSION  PATH, not %r" % (path, n, line))
        e = out.setdefault(f[1], {"wheel": None, "files": {}})
        if is_wheel_line(f[2]):
            e["wheel"] = (f[2], f[0])
        else:
            e["files"][f[2]] = f[0]
    return out


def manifest_entry(pkg, ver):
    return read_manifest(manifest_path()).get("%s==%s" % (pkg, ver), {"wheel": None, "files": {}})


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for c in iter(lambda: f.read(1 << 20), b""):
            h.update(c)
    return h.hexdigest()


def verify(pkg, ver, path, actual):
    """actual (the sha256 of the file path of pkg==ver) is the manifest's, else a VerifyError: one
    line naming the wheel, the file and both digests."""
    want = manifest_entry(pkg, ver)["files"].get(path)
    if want is None:
        raise VerifyError("%s==%s: %s: not in the manifest (%s): refused, sha256 %s" % (
            pkg, ver, path, os.path.relpath(manifest_path()), actual))
    if want != actual:
        raise VerifyError("%s==%s: %s: sha256 %s, not the manifest's %s (%s): refused" % (
            pkg, ver, path, actual, want, os.path.relpath(manifest_path())))


def verify_set(pkg, ver, names, under):
    """The files of pkg==ver whose paths the manifest lists under(path) are names, neither more nor
    fewer (a file added to the wheel or gone from it), else a VerifyError."""
    listed = {p for p in manifest_entry(pkg, ver)["files"] if under(p)}
    for p in sorted(set(names) - listed):
        raise VerifyError("%s==%s: %s: not in the manifest (%s): refused" % (pkg, ver, p, os.path.relpath(manifest_path())))
    for p in sorted(listed - set(names)):
        raise VerifyError("%s==%s: %s: in the manifest (%s), not in the wheel: refused" % (
            pkg, ver, p, os.path.relpath(manifest_path())))


def verify_wheel(pkg, ver, path):
    """The wheel downloaded whole at path is the manifest's (its sha256), else a VerifyError."""
    w = manifest_entry(pkg, ver)["wheel"]
    actual = sha256_file(path)
    if w is None:
        raise VerifyError("%s==%s: %s: no wheel of it in the manifest (%s): refused, sha256 %s" % (
            pkg, ver, os.path.basename(path), os.path.relpath(manifest_path()), actual))
    if w[1] != actual:
        raise VerifyError("%s==%s: %s: sha256 %s, not the manifest's %s (%s, %s): refused" % (
            pkg, ver, os.path.basename(path), actual, w[1], w[0], os.path.relpath(manifest_path())))


def member_sha256(z, info, what):
    """The sha256 of a zip member, read (and its CRC checked by zipfile) in chunks."""
    h = hashlib.sha256()
    with parsing(what):
        with z.open(info) as f:
            for c in iter(lambda: f.read(1 << 20), b""):
                h.update(c)
    return h.hexdigest()


def extract_verified(z, rf, pkg, ver, members, tmp):
    """Each of members (ZipInfo) written under tmp at its path in the wheel, each checked against
    the manifest first (its bytes in memory: headers, a library, never written unchecked)."""
    for m in members:
        name = m.filename
        if name.startswith("/") or ".." in name.split("/"):
            raise FormatError("%s: %s: a path outside the tree" % (wheel_name(z, rf), name))
        with parsing("%s: %s" % (wheel_name(z, rf), name)):
            data = z.read(m)
        verify(pkg, ver, name, hashlib.sha256(data).hexdigest())
        out = os.path.join(tmp, *name.split("/"))
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out, "wb") as f:
            f.write(data)


# ---- errors: each one line (main prints it), naming the URL or the file ----


class WheelError(Exception):
    """An error of this tool. Not an OSError: zipfile turns an OSError raised while it reads a
    zip's end into BadZipFile("File is not a zip file"), which would hide what went wrong."""


class FetchError(WheelError):
    """A request that failed: the network, an HTTP error, a timeout (CUDALOAD_WHEEL_TIMEOUT), an
    answer not the range asked. status: the HTTP status of an HTTP error, else None."""

    def __init__(self, msg, status=None):
        super().__init__(msg)
        self.status = status


class NoRanges(FetchError):
    """The server answered a range request with a status other than 206 (the whole file, most
    likely): open_wheel downloads the wheel whole."""


class NoJsonApi(FetchError):
    """The index has no page of the project in the JSON form of the simple API (PEP 691: an index
    that serves HTML only, a 404, a 406), or pip is told to read no index (no-index), or the index
    is not http(s) (a directory), or it asks for credentials the tool has not (pip may have them:
    netrc, keyring): open_wheel downloads the wheel whole (pip reads the index its own way)."""


class Insecure(WheelError):
    """A URL of plain http whose host pip is not told to trust (trusted-host): refused, as pip
    refuses it."""


class VerifyError(WheelError):
    """A file or wheel whose sha256 is not the manifest's (tools/api/wheel-files.sha256), or that
    the manifest does not list: refused."""


class FormatError(WheelError):
    """A wheel or a member of it not as its format says: a zip's directory or local header, an
    ELF header, a library nm cannot read."""


def why(e):
    """An exception as a line: its type (struct.error, BadZipFile, ...) and message."""
    name = type(e).__name__ if type(e).__module__ == "builtins" else "%s.%s" % (type(e).__module__, type(e).__name__)
    msg = " ".join(str(e).split())
    return "%s: %s" % (name, msg) if msg else name


# what reading a malformed zip or ELF raises (zipfile, zlib, struct, slices); parsing() makes each
# a FormatError naming the file
PARSE_ERRORS = (zipfile.BadZipFile, zlib.error, struct.error, EOFError, IndexError, ValueError, OverflowError,
                NotImplementedError)


# the errors that end a run with one line (cli; tools/gen_api.py): the tool's own, a local file's
# (OSError), a wheel not as pinned (KeyError: no such member), a malformed zip or ELF
ERRORS = (WheelError, OSError, KeyError) + PARSE_ERRORS


def one_line(e):
    """One of ERRORS as one line: the tool's own its message, another with its type."""
    return " ".join(str(e).split()) if isinstance(e, WheelError) else why(e)


@contextlib.contextmanager
def parsing(what):
    """Inside, a malformed zip or ELF (PARSE_ERRORS, FormatError) is a FormatError that names
    what (the wheel, the member); a FetchError goes on as it is."""
    try:
        yield
    except FormatError as e:
        raise FormatError("%s: %s" % (what, e)) from None
    except PARSE_ERRORS as e:
        raise FormatError("%s: %s" % (what, why(e))) from None


# ---- requests: each bounded as a whole ----


def request_timeout():
    """$CUDALOAD_WHEEL_TIMEOUT: the seconds one request may take in all (default 120)."""
    v = os.environ.get("CUDALOAD_WHEEL_TIMEOUT") or "120"
    try:
        t = float(v)
    except ValueError:
        t = float("nan")
    if not 0 < t < 1e6:
        raise WheelError("CUDALOAD_WHEEL_TIMEOUT=%s: not a number of seconds above 0" % v)
    return t


class CheckedRedirects(urllib.request.HTTPRedirectHandler):
    """A redirect followed only where pip would read its URL (Index.check: not to plain http of an
    untrusted host)."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        index().check(newurl)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


@functools.lru_cache(maxsize=None)
def opener():
    """urllib's, with pip's CA bundle (cert) and the redirects checked; proxies from the
    environment, as urllib and pip take them."""
    return urllib.request.build_opener(urllib.request.HTTPSHandler(context=index().tls), CheckedRedirects)


def request(url, headers=()):
    """A Request for url (checked: Index.check), with the index's credentials where url is on its
    host (not carried on to a redirect's host)."""
    index().check(url)
    req = urllib.request.Request(url, headers=dict(headers))
    auth = index().auth.get(urllib.parse.urlsplit(url).netloc.lower())
    if auth:
        req.add_unredirected_header("Authorization", auth)
    return req


def http_get(url, rng=None, accept=None):
    """GET url; rng (lo, hi) asks for those bytes (a Range header); accept: the Accept header.
    (status, headers, body, the URL answered: after redirects): body None where a range was asked
    and the status is not 206 (the whole file, not read).

    The request is bounded as a whole: it runs in a thread of its own that is given
    request_timeout() seconds for all of it (resolving the name, connecting, the headers, the body
    read in chunks), and one that takes longer is a FetchError; urllib's timeout, which the thread
    uses too, bounds each socket operation only, which a server that trickles bytes never reaches.
    An HTTP error status, a network error or a body short of its Content-Length is a FetchError;
    a plain http URL pip would not read (Index.check), an Insecure error."""
    t = request_timeout()
    what = "%s (bytes=%d-%d asked)" % ((url,) + tuple(rng)) if rng else url
    hdrs = ([("Range", "bytes=%d-%d" % tuple(rng))] if rng else []) + ([("Accept", accept)] if accept else [])
    req = request(url, hdrs)
    st = {"got": 0}
    stop = threading.Event()  # set when the caller gave up: the thread stops reading

    def work():
        try:
            with opener().open(req, timeout=t) as r:
                st["status"], st["headers"], st["url"] = r.status, r.headers, r.geturl()
                if rng and r.status != 206:
                    return
                chunks = []
                while not stop.is_set():
                    c = r.read1(1 << 16)  # what has come, up to 64 kB: the count is what came
                    if not c:
                        break
                    chunks.append(c)
                    st["got"] += len(c)
                st["body"] = b"".join(chunks)
        except Exception as e:  # noqa: BLE001 -- handed to the caller's thread, which says it
            st["error"] = e

    th = threading.Thread(target=work, name="wheel_files GET", daemon=True)
    th.start()
    th.join(t)
    if th.is_alive():
        stop.set()
        came = "a %d, then %d bytes of its body" % (st["status"], st["got"]) if "status" in st else "no answer"
        raise FetchError("%s: %s in %g s (CUDALOAD_WHEEL_TIMEOUT): stalled" % (what, came, t))
    e = st.get("error")
    if isinstance(e, urllib.error.HTTPError):
        raise FetchError("%s: HTTP %d %s" % (what, e.code, e.reason), status=e.code) from None
    if isinstance(e, urllib.error.URLError) and isinstance(e.reason, socket.timeout) or isinstance(e, socket.timeout):
        raise FetchError("%s: nothing came for %g s (CUDALOAD_WHEEL_TIMEOUT): stalled" % (what, t)) from None
    if isinstance(e, urllib.error.URLError):
        raise FetchError("%s: %s" % (what, e.reason)) from None
    if isinstance(e, (OSError, http.client.HTTPException, ValueError)):
        raise FetchError("%s: %s" % (what, why(e))) from None
    if e is not None:
        raise e
    if "body" not in st:
        return st["status"], st["headers"], None, st["url"]
    n = st["headers"].get("Content-Length")
    if n is not None and n.strip().isdigit() and int(n) != len(st["body"]):
        raise FetchError("%s: the body ended at %d bytes of its Content-Length %s" % (what, len(st["body"]), n))
    return st["status"], st["headers"], st["body"], st["url"]


@functools.lru_cache(maxsize=None)
def project_files(pkg):
    """(the URL of pkg's page in the index, after redirects; its files: [{filename, url, hashes,
    size, ...}]): the page in the JSON form of the simple API (PEP 691), read once per run (`since`
    reads every release of one project). NoJsonApi where there is none such (see there)."""
    ix = index()
    if ix.no_index:
        # pip is told to read no index (find-links only, most likely): pip downloads, as told
        raise NoJsonApi("pip is told to read no index (no-index, %s)" % ix.no_index)
    if urllib.parse.urlsplit(ix.url).scheme not in ("http", "https"):
        # a local directory as the index (file:): no ranges there; pip reads it
        raise NoJsonApi("%s (index-url, %s): not an http(s) index" % (ix.url, ix.where))
    url = "%s/%s/" % (ix.url.rstrip("/"), urllib.parse.quote(normalized(pkg)))
    try:
        _, headers, body, page = http_get(url, accept=SIMPLE_JSON)
    except FetchError as e:
        if e.status in (404, 406):
            # no such page in the JSON form (406: Not Acceptable), or the project is not there: pip
            # reads the index as it does, and says what it finds
            raise NoJsonApi("%s: HTTP %d, no page in the JSON form of the simple API (PEP 691) for %s" % (
                url, e.status, pkg), status=e.status) from None
        if e.status == 401:
            # credentials the tool has not (only those in the index's URL): pip may have them
            # (netrc, keyring)
            raise NoJsonApi("%s: HTTP 401, credentials asked" % url, status=401) from None
        raise
    ctype = (headers.get("Content-Type") or "").split(";")[0].strip().lower()
    if ctype != SIMPLE_JSON:
        # an index that serves the HTML form only (PEP 503): pip reads that
        raise NoJsonApi("%s: served as %s, not the JSON form of the simple API (%s, PEP 691)" % (
            page, ctype or "no Content-Type", SIMPLE_JSON))
    try:
        doc = json.loads(body)
        api = str(doc["meta"]["api-version"])
        if api.split(".")[0] != "1":
            raise ValueError("api-version %s, not 1.x" % api)
        files = doc["files"]
        if not isinstance(files, list) or not all(isinstance(f, dict) and isinstance(f.get("filename"), str) for f in files):
            raise TypeError("files is not a list of files with a filename")
    except (ValueError, KeyError, TypeError) as e:
        # a page not of the form PEP 691 gives (another major of the API): pip knows its own way
        raise NoJsonApi("%s: not a page of the JSON form of the simple API (PEP 691: %s)" % (page, why(e))) from None
    return page, files


def is_linux_x86_64(filename):
    return PLATFORM in filename and "x86_64" in filename


def wheel_version(filename):
    """The version a wheel's file name gives (NAME-VERSION[-BUILD]-PY-ABI-PLATFORM.whl), else None."""
    parts = filename[:-4].split("-") if filename.endswith(".whl") else []
    return parts[1] if len(parts) in (5, 6) else None


def remote_size(url):
    """The size of the file at url, from the answer to a range request of its first byte (its
    Content-Range's total): for an index that gives no size (PEP 700's is optional)."""
    status, headers, body, _ = http_get(url, (0, 0))
    if status != 206:
        raise NoRanges("%s (bytes=0-0 asked, for its size): the server answered %d, not 206 (no range requests)" % (url, status))
    m = re.fullmatch(r"bytes 0-0/(\d+)", (headers.get("Content-Range") or "").strip())
    if not m:
        raise FetchError("%s (bytes=0-0 asked, for its size): a 206 with Content-Range %r" % (url, headers.get("Content-Range")))
    return int(m.group(1))


def wheel_file(pkg, ver):
    """The index's manylinux x86_64 wheel of pkg==ver: {filename, url, size, sha256 (None where
    the index gives no hashes.sha256)}: the one the manifest names where there are several."""
    page, files = project_files(pkg)
    # the manifest's file, where there is one (not yet while `pin` writes it)
    pinned = (manifest_entry(pkg, ver)["wheel"] or ("",))[0] if os.path.exists(manifest_path()) else ""
    try:
        found = [f for f in files if wheel_version(f["filename"]) == ver and is_linux_x86_64(f["filename"])]
        found.sort(key=lambda f: f["filename"] != pinned)  # the manifest's first, else the index's order
        for f in found[:1]:
            sha = (f.get("hashes") or {}).get("sha256")
            url = urllib.parse.urljoin(page, f["url"])  # relative to the page, as PEP 691 says
            size = f.get("size")
            return {"filename": f["filename"], "url": url, "size": int(size) if size is not None else remote_size(url),
                    "sha256": sha.lower() if isinstance(sha, str) else None}
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise NoJsonApi("%s: %s's files not of the form PEP 691 gives (%s)" % (page, ver, why(e))) from None
    sys.exit("wheel_files: %s==%s has no manylinux x86_64 wheel at %s" % (pkg, ver, page))


def wheel_url(pkg, ver):
    f = wheel_file(pkg, ver)
    return f["url"], f["size"]


class RangeFile(io.RawIOBase):
    """A remote file read with HTTP range requests, a block at a time (blocks kept)."""

    def __init__(self, url, size, block=BLOCK):
        self.url, self.size, self.pos, self.blocks, self.fetched, self.bs = url, size, 0, {}, 0, block

    def readable(self):
        return True

    def seekable(self):
        return True

    def tell(self):
        return self.pos

    def seek(self, off, whence=0):
        if whence not in (0, 1, 2):
            raise ValueError("whence %r" % whence)
        pos = off if whence == 0 else self.pos + off if whence == 1 else self.size + off
        if pos < 0:  # as a file answers (zipfile takes it for a file too short to be a zip)
            raise OSError(errno.EINVAL, "seek to %d, before the start of %s" % (pos, self.url))
        self.pos = pos
        return self.pos

    def get(self, lo, hi):
        """Bytes lo to hi (inclusive) of the file, exactly: one range request, whose answer must be
        a 206 with the Content-Range asked (of the size the index gave) and that many bytes, else
        a FetchError (NoRanges for a status other than 206)."""
        status, headers, body, _ = http_get(self.url, (lo, hi))
        asked = "%s (bytes=%d-%d asked, of %d: the index's size)" % (self.url, lo, hi, self.size)
        if status != 206:
            raise NoRanges("%s: the server answered %d, not 206 (no range requests)" % (asked, status))
        cr = headers.get("Content-Range")
        m = re.fullmatch(r"bytes (\d+)-(\d+)/(\d+)", (cr or "").strip())
        if not m or tuple(map(int, m.groups())) != (lo, hi, self.size) or len(body) != hi - lo + 1:
            raise FetchError("%s: a 206 with %d bytes and %s" % (
                asked, len(body), "Content-Range %r" % cr if cr is not None else "no Content-Range"))
        self.fetched += len(body)
        return body

    def block(self, i):
        if i not in self.blocks:  # kept only whole: get() gives all the block's bytes or raises
            self.blocks[i] = self.get(i * self.bs, min(self.size, (i + 1) * self.bs) - 1)
        return self.blocks[i]

    def read_range(self, lo, n):
        """n bytes at lo (fewer only past the end of the file), one request of their own (the
        blocks are not kept)."""
        if lo < 0:
            raise ValueError("a read at %d, before the start of the file" % lo)
        n = max(0, min(n, self.size - lo))
        if not n:
            return b""
        return self.get(lo, lo + n - 1)

    def readinto(self, b):
        n = max(0, min(len(b), self.size - self.pos))
        done = 0
        while done < n:
            i, off = divmod(self.pos + done, self.bs)
            chunk = self.block(i)[off:off + n - done]
            if not chunk:  # cannot be (a block is whole or not kept), but never a loop
                raise FetchError("%s: block %d holds nothing at %d" % (self.url, i, self.pos + done))
            b[done:done + len(chunk)] = chunk
            done += len(chunk)
        self.pos += n
        return n


def remote_zip(rf):
    """The zip rf holds, its directory read (ranges); a FormatError where it is no zip."""
    try:
        return zipfile.ZipFile(io.BufferedReader(rf, rf.bs))
    except (OSError,) + PARSE_ERRORS as e:  # a FetchError is no OSError: it goes on as it is
        raise FormatError("%s: not a zip, as a wheel is (%s)" % (rf.url, why(e))) from None


def open_wheel(pkg, ver, block=BLOCK, download=True):
    """A zipfile of the pinned wheel: remote (ranges, block bytes at a time) when the index allows,
    else downloaded (download False: a FetchError instead)."""
    try:
        url, size = wheel_url(pkg, ver)
        rf = RangeFile(url, size, block)
        return remote_zip(rf), rf
    except (NoJsonApi, NoRanges) as e:
        # the fallback, for an index that works but not as this tool reads it: no page in the JSON
        # form of the simple API (an index of HTML pages only), no index at all (pip told to read
        # find-links only), or no range requests: the whole wheel, `pip download` (which reads the
        # index pip is configured with), kept in the cache. Not for a network or certificate
        # failure, a timeout, an answer not the range asked (FetchError), a plain http URL pip
        # would refuse (Insecure) or a wheel that is no zip (FormatError): pip would meet them too,
        # or would download 1.5 GB of wheels for 15 MB of headers where only this tool's trust
        # store is short
        if not download:
            raise FetchError("ranged read failed (%s)" % e) from None
        log("%s==%s: ranged read failed (%s): downloading the wheel" % (pkg, ver, e))
        path = pip_download(pkg, ver)
        with parsing(path):
            return zipfile.ZipFile(path), None


PIP_TIMES = 10  # `pip download` of one wheel is given PIP_TIMES x $CUDALOAD_WHEEL_TIMEOUT in all


def pip_download(pkg, ver):
    """The wheel of pkg==ver downloaded whole by `pip download` into a folder of its own (the one
    file pip wrote there, not another wheel of that name), checked against the manifest's sha256
    of the wheel before it is opened, then kept in the cache's wheels/: its path.

    pip reads the index as this tool did: its configuration (the environment's PIP_* variables,
    its files) is the same, and the tool's --index-url is passed on. It is given PIP_TIMES x
    $CUDALOAD_WHEEL_TIMEOUT in all (20 minutes by default: cuDNN's 516 MB at 0.4 MB/s), past which
    it is stopped and that is an error: it can never hang make. Its output goes to stderr (make
    reads the tool's stdout)."""
    dest = os.path.join(cache_dir(), "wheels")
    os.makedirs(dest, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".pip-", dir=dest)
    limit = PIP_TIMES * request_timeout()
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary", ":all:", "--dest", tmp]
    if INDEX_URL_OPTION:
        cmd += ["--index-url", INDEX_URL_OPTION]
    try:
        try:
            r = subprocess.run(cmd + ["%s==%s" % (pkg, ver)], stdout=sys.stderr.fileno(), timeout=limit)
        except subprocess.TimeoutExpired:
            raise FetchError("pip download %s==%s: not done in %g s (%d x CUDALOAD_WHEEL_TIMEOUT): stopped" % (
                pkg, ver, limit, PIP_TIMES)) from None
        if r.returncode != 0:
            sys.exit("wheel_files: pip download %s==%s failed (exit %d)" % (pkg, ver, r.returncode))
        got = [f for f in os.listdir(tmp) if f.endswith(".whl")]
        if len(got) != 1:
            sys.exit("wheel_files: pip download %s==%s gave %s in %s" % (pkg, ver, "no wheel" if not got else
                                                                        "%d wheels" % len(got), tmp))
        path = os.path.join(tmp, got[0])
        log("%s==%s: downloaded %s, %s" % (pkg, ver, got[0], mb(os.path.getsize(path))))
        verify_wheel(pkg, ver, path)
        kept = os.path.join(dest, got[0])
        os.replace(path, kept)
        return kept
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def cached_headers_verify(d, pkg, ver, prefix):
    """None where the cached include dir d holds the manifest's files of pkg==ver under prefix
    (each file's sha256), else why not (a cache made before the manifest, or changed since)."""
    files = []
    for root, dirs, names in os.walk(d):
        for n in names:
            rel = os.path.relpath(os.path.join(root, n), d).replace(os.sep, "/")
            if rel != ".complete":
                files.append(rel)
    try:
        verify_set(pkg, ver, files, lambda p: p.startswith(prefix))
        for f in files:
            verify(pkg, ver, f, sha256_file(os.path.join(d, *f.split("/"))))
    except VerifyError as e:
        return str(e)
    return None


def publish(tmp, d, usable):
    """tmp (a directory, complete and verified) renamed to d, in one rename. Where d is there
    already (another run of the tool published it since this one looked, or an old one that does
    not verify): a d that is usable() is kept (whoever reads it is never left without it) and False
    returned (tmp is the caller's to remove); another is moved aside in one rename, then removed,
    and tmp renamed in its place. True where tmp is now d."""
    for _ in range(3):
        try:
            os.rename(tmp, d)
            return True
        except OSError as e:
            if e.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                raise
        if usable():
            return False
        aside = tempfile.mkdtemp(prefix=".old-%s-" % os.path.basename(d), dir=os.path.dirname(d))
        try:
            os.rename(d, os.path.join(aside, "old"))
        except FileNotFoundError:
            pass  # another run moved it aside first
        shutil.rmtree(aside, ignore_errors=True)
    raise WheelError("%s: another directory there each of 3 times this run put its own in place" % d)


def fetch_headers(cache, row, pkg, ver, inc, block=BLOCK, download=True):
    """The include dir inc of pkg==ver in cache/PACKAGE-VERSION: taken from the cache where it is
    complete and verifies against the manifest (each file's sha256), else fetched, each file
    verified, into a temporary directory renamed to its place once all verified (publish: where
    another run put it there meanwhile, that one is kept)."""
    d = os.path.join(cache, "%s-%s" % (pkg, ver))
    prefix = inc.rstrip("/") + "/"

    def usable():
        return os.path.exists(os.path.join(d, ".complete")) and cached_headers_verify(d, pkg, ver, prefix) is None
    if os.path.exists(os.path.join(d, ".complete")):
        bad = cached_headers_verify(d, pkg, ver, prefix)
        if bad is None:
            return d
        log("%s: the cached headers do not verify (%s): fetching them again" % (d, bad))
    t = time.time()
    log("%s==%s: fetching %s out of the wheel ..." % (pkg, ver, inc))
    z, rf = open_wheel(pkg, ver, block, download)
    members = [m for m in z.infolist() if m.filename.startswith(prefix) and not m.is_dir()]
    if not members:
        sys.exit("wheel_files: %s==%s has nothing under %s (tools/api/wheel-libs.txt)" % (pkg, ver, inc))
    verify_set(pkg, ver, [m.filename for m in members], lambda p: p.startswith(prefix))
    os.makedirs(cache, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".tmp-%s-" % os.path.basename(d), dir=cache)
    try:
        extract_verified(z, rf, pkg, ver, members, tmp)
        open(os.path.join(tmp, ".complete"), "w").write("%s==%s %s: %d files\n" % (pkg, ver, inc, len(members)))
        ours = publish(tmp, d, usable)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # gone where renamed
    read = rf.fetched if rf else os.path.getsize(z.filename)
    FETCHED.append(("%s==%s" % (pkg, ver), read))
    log("%s==%s: %d headers (%s, %s, verified), %s read of the %s wheel, %.1f s%s" % (
        pkg, ver, len(members), inc, mb(sum(m.file_size for m in members)), mb(read),
        mb(rf.size if rf else os.path.getsize(z.filename)), time.time() - t,
        "" if ours else "; another run put them in %s meanwhile: those kept" % d))
    return d


def nm_exports(path):
    """The functions a shared object exports (`nm -D`: T, W, i), versioned names with their
    @VERSION (tools/gen_api.py reads the toolkit's files with it too)."""
    out = subprocess.run(["nm", "-D", "--defined-only", path], check=True, capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in ("T", "W", "i"):
            names.add(parts[2])
    return names


# ---- a library's exports from the start of its zip member ----
#
# The libraries of NCCL, cuSPARSELt, cuTENSOR, cuDSS and nvSHMEM are 50-340 MB a release: `since`
# reads each release's exports from the front of the member where it can. GNU ld puts the dynamic
# symbol table at the front of the file (the first PT_LOAD: the notes, .gnu.hash (or .hash),
# .dynsym, .dynstr, .gnu.version...), which the member's first 64 kB inflate to. PT_DYNAMIC, which
# points there, sits in the writable PT_LOAD at the end, as do the section headers: so the tables
# are found by that layout (the hash table after the notes, .dynsym after it, .dynstr after
# .dynsym; the number of symbols from the hash table), and taken only if every hashed name hashes
# to its own chain (which a wrong offset of either table cannot pass); else through PT_DYNAMIC
# where it is in reach (a stored member, a small one); else the member is read whole (nm).
# NCCL's, nvSHMEM's and cuDNN's come from the front. cuSPARSELt's, cuTENSOR's and cuDSS's went
# through patchelf, which moved .dynstr and .gnu.hash to a segment at the end of the file (their
# old place overwritten): those are read whole.
ELF_FRONT = 16 << 20      # the most of a deflated member inflated for its tables (its start only)
DT_HASH, DT_STRTAB, DT_SYMTAB, DT_GNU_HASH = 4, 5, 6, 0x6FFFFEF5
SHN_UNDEF, SHN_LORESERVE = 0, 0xFF00
STT_OBJECT, STT_FUNC, STT_GNU_IFUNC = 1, 2, 10
STB_GLOBAL, STB_WEAK = 1, 2


class NotInFront(Exception):
    """What was asked for lies past ELF_FRONT of a deflated member (or the tables were not found
    where the layout puts them)."""


class Member:
    """A zip member's bytes, from its start: a stored member read with ranges where asked, a
    deflated one inflated as far as asked (up to ELF_FRONT), its compressed bytes read in chunks.
    raw(offset, n) reads the wheel."""

    def __init__(self, raw, info, front=ELF_FRONT):
        self.raw, self.size, self.front = raw, info.file_size, front
        head = raw(info.header_offset, 30)
        if len(head) < 30 or head[:4] != b"PK\x03\x04":
            raise FormatError("no local header at %d" % info.header_offset)
        n, e = struct.unpack("<HH", head[26:30])
        self.start = info.header_offset + 30 + n + e
        self.end = self.start + info.compress_size
        if info.compress_type == zipfile.ZIP_STORED:
            self.inflate = None
        elif info.compress_type == zipfile.ZIP_DEFLATED:
            self.inflate = zlib.decompressobj(-15)
        else:
            raise NotInFront("%s: compression %d" % (info.filename, info.compress_type))
        self.out, self.pending, self.pos, self.chunk = bytearray(), b"", self.start, 1 << 16
        self.compressed, self.blocks = 0, {}  # the wheel's bytes read; a stored member's blocks

    def get(self, off, n):
        if off < 0 or n < 0 or off + n > self.size:
            raise NotInFront("past the end of the file (%d+%d of %d)" % (off, n, self.size))
        if self.inflate is None:  # stored: 64 kB blocks, read where asked
            out = b""
            for b in range(off >> 16, (off + n + 0xFFFF) >> 16):
                if b not in self.blocks:
                    self.blocks[b] = self.raw(self.start + (b << 16), min(1 << 16, self.size - (b << 16)))
                    self.compressed += len(self.blocks[b])
                out += self.blocks[b]
            return out[off & 0xFFFF:(off & 0xFFFF) + n]
        if off + n > self.front:
            raise NotInFront("%d bytes in: past the front inflated (%d)" % (off + n, self.front))
        while len(self.out) < off + n:
            if not self.pending:
                if self.pos >= self.end:
                    raise zipfile.BadZipFile("the member ends before its %d bytes" % self.size)
                k = min(self.chunk, self.end - self.pos)
                self.pending, self.pos = self.raw(self.pos, k), self.pos + k
                self.chunk = min(self.chunk * 2, 1 << 20 if self.front <= ELF_FRONT else 8 << 20)
                self.compressed += k
            self.out += self.inflate.decompress(self.pending, max(off + n - len(self.out), 1 << 16))
            self.pending = self.inflate.unconsumed_tail
        return bytes(self.out[off:off + n])


def gnu_hash(name):
    h = 5381
    for c in name:
        h = (h * 33 + c) & 0xFFFFFFFF
    return h


def sysv_hash(name):
    h = 0
    for c in name:
        h = (h << 4) + c
        g = h & 0xF0000000
        if g:
            h ^= g >> 24
        h &= ~g & 0xFFFFFFFF
    return h


def u32s(get, off, n):
    return struct.unpack("<%dI" % n, get(off, 4 * n)) if n else ()


def hash_table(get, kind, off):
    """(the number of symbols, the table's end, a check of (index, name)) of a .gnu.hash or .hash at off."""
    if kind == "sysv":
        nbucket, nchain = u32s(get, off, 2)
        if not 0 < nbucket < 1 << 24 or not 0 < nchain < 1 << 24:
            raise NotInFront("no .hash")
        buckets, chain = u32s(get, off + 8, nbucket), u32s(get, off + 8 + 4 * nbucket, nchain)

        def check(i, name):
            j, seen = buckets[sysv_hash(name) % nbucket], 0
            while j and j != i and seen < nchain:
                j, seen = chain[j] if j < nchain else 0, seen + 1
            return j == i
        return nchain, off + 8 + 4 * (nbucket + nchain), check
    nbuckets, symoffset, bloom, shift = u32s(get, off, 4)
    if not 0 < nbuckets < 1 << 24 or not 0 < symoffset < 1 << 24 or not 0 < bloom < 1 << 24 or bloom & (bloom - 1) or shift >= 64:
        raise NotInFront("no .gnu.hash")
    boff = off + 16 + 8 * bloom
    buckets = u32s(get, boff, nbuckets)
    coff = boff + 4 * nbuckets
    nsyms = symoffset
    if any(buckets):
        last = max(buckets)
        if last < symoffset:
            raise NotInFront("no .gnu.hash")
        while not get(coff + 4 * (last - symoffset), 4)[0] & 1:
            last += 1
            if last - symoffset > 1 << 22:
                raise NotInFront("no .gnu.hash")
        nsyms = last + 1
    chain = u32s(get, coff, nsyms - symoffset)

    def check(i, name):
        if i < symoffset:
            return True
        h = gnu_hash(name)
        return (chain[i - symoffset] | 1) == (h | 1) and buckets[h % nbuckets] <= i
    return nsyms, coff + 4 * (nsyms - symoffset), check


def elf_exports(get, size):
    """The names an ELF64 little-endian shared object exports, as `nm -D --defined-only` marks T, W
    or i (exports_of), without their @VERSION; get(offset, n) reads the file."""
    eh = get(0, 64)
    if eh[:4] != b"\x7fELF" or eh[4] != 2 or eh[5] != 1:
        raise NotInFront("not an ELF64 little-endian file")
    phoff, = struct.unpack("<Q", eh[32:40])
    phentsize, phnum = struct.unpack("<HH", eh[54:58])
    if phnum and phentsize < 56:
        raise FormatError("ELF header: program headers of %d bytes (e_phentsize), not ELF64's 56" % phentsize)
    ph = get(phoff, phentsize * phnum)
    segs = [struct.unpack("<IIQQQQQQ", ph[i * phentsize:i * phentsize + 56]) for i in range(phnum)]
    loads = [(s[3], s[5], s[2]) for s in segs if s[0] == 1]  # PT_LOAD: vaddr, filesz, offset

    def file_off(vaddr):
        for va, fsz, off in loads:
            if va <= vaddr < va + fsz:
                return off + vaddr - va
        raise NotInFront("address %#x in no PT_LOAD" % vaddr)

    def candidates():
        """(hash kind, its offset, .dynsym's offset or None: after the hash table, .dynstr's or None)"""
        # the layout: the hash table(s) after the program headers and the notes, 8-aligned
        pos = phoff + phentsize * phnum
        for s in segs:
            if s[0] in (3, 4) and s[2] < 1 << 16:  # PT_INTERP, PT_NOTE near the front
                pos = max(pos, s[2] + s[5])
        pos = (pos + 7) & ~7
        yield "gnu", pos, None, None
        try:  # --hash-style=both: .hash, then .gnu.hash
            _, end, _ = hash_table(get, "sysv", pos)
            yield "gnu", (end + 7) & ~7, None, None
        except (NotInFront, struct.error):
            pass
        yield "sysv", pos, None, None
        # else PT_DYNAMIC's DT_GNU_HASH or DT_HASH, DT_SYMTAB and DT_STRTAB, where it is in reach
        # (patchelf, which NVIDIA's wheels went through, moves .dynstr and .gnu.hash to the end)
        dyn = [s for s in segs if s[0] == 2]
        if not dyn:
            raise NotInFront("no PT_DYNAMIC")
        try:
            d = get(dyn[0][2], dyn[0][5])
        except NotInFront:
            raise NotInFront("PT_DYNAMIC (%.1f MB in) is past the front" % (dyn[0][2] / 1e6))
        tags = {}
        for i in range(0, len(d) - 15, 16):
            tag, val = struct.unpack("<qQ", d[i:i + 16])
            if tag == 0:
                break
            tags.setdefault(tag, val)
        for t, kind in ((DT_GNU_HASH, "gnu"), (DT_HASH, "sysv")):
            if t in tags and DT_SYMTAB in tags and DT_STRTAB in tags:
                yield kind, file_off(tags[t]), file_off(tags[DT_SYMTAB]), file_off(tags[DT_STRTAB])

    whys = []
    cands = candidates()
    while True:
        try:
            kind, hoff, symoff, stroff = next(cands)
        except StopIteration:
            raise NotInFront("; ".join(whys) or "no hash table")
        except NotInFront as e:
            raise NotInFront("; ".join(whys + [str(e)]))
        try:
            nsyms, end, check = hash_table(get, kind, hoff)
            if symoff is None:
                symoff = (end + 7) & ~7
                stroff = symoff + 24 * nsyms
            raw = get(symoff, 24 * nsyms)
            syms = [struct.unpack("<IBBHQQ", raw[i:i + 24]) for i in range(0, len(raw), 24)]
            if not syms or any(syms[0]):
                raise NotInFront(".dynsym's first symbol is not null")
            strs = bytearray(get(stroff, min(size - stroff, 1 + max(s[0] for s in syms) + 256)))
            if strs[:1] != b"\0":
                raise NotInFront(".dynstr does not start with a null")

            def name(off):
                while strs.find(b"\0", off) < 0:
                    if stroff + len(strs) >= size:
                        raise NotInFront("a name runs past the end of the file")
                    strs.extend(get(stroff + len(strs), min(4096, size - stroff - len(strs))))
                return bytes(strs[off:strs.index(b"\0", off)])
            names = [name(s[0]) for s in syms]
            hashed = [i for i in range(1, nsyms) if names[i]]
            bad = [i for i in hashed if not check(i, names[i])]
            if bad or not hashed:
                raise NotInFront("%s: %d of %d names are not in the hash table" % (kind, len(bad), nsyms))
        except (NotInFront, struct.error, IndexError, ValueError) as e:
            whys.append("%s at %#x: %s" % (kind, hoff, e or type(e).__name__))
            continue
        # nm: i an IFUNC; W a weak symbol that is no object; T a global one in a code section (one
        # that holds a function); not U (undefined), A (absolute: the version names) or u (unique)
        code = {s[3] for s in syms if s[3] != SHN_UNDEF and s[1] & 0xF in (STT_FUNC, STT_GNU_IFUNC)}
        out = set()
        for (st_name, info, _, shndx, _, _), n in zip(syms, names):
            if shndx == SHN_UNDEF or shndx >= SHN_LORESERVE or not n:
                continue
            bind, typ = info >> 4, info & 0xF
            if typ == STT_GNU_IFUNC or (bind == STB_WEAK and typ != STT_OBJECT) or (bind == STB_GLOBAL and shndx in code):
                out.add(n.decode())
        return out


def wheel_name(z, rf):
    """The wheel z as errors name it: its URL where remote, else its file."""
    return rf.url if rf is not None else z.filename


def wheel_reader(z, rf):
    """raw(offset, n) of the wheel z: ranges where remote (counted in rf.fetched), else its file."""
    if rf is not None:
        return rf.read_range
    f = open(z.filename, "rb")

    def raw(off, n):
        f.seek(off)
        return f.read(n)
    return raw


def member_exports(z, rf, name):
    """(the exports of the library z holds as name, without @VERSION; the bytes of the wheel read
    for them, how): its dynamic symbols from the member's front, else the member whole (nm)."""
    with parsing("%s: %s" % (wheel_name(z, rf), name)):
        return member_exports_of(z, rf, name)


def member_exports_of(z, rf, name):
    info = z.getinfo(name)
    m = None
    try:
        m = Member(wheel_reader(z, rf), info)
        return elf_exports(m.get, info.file_size), m.compressed, "front"
    except NotInFront as e:
        log("%s: %s: reading it whole" % (name, e))
    if m is not None and m.inflate is not None:  # go on inflating where the front stopped
        m.front = info.file_size
        data = m.get(0, info.file_size)
        return {n.split("@")[0] for n in exports_of(data)}, m.compressed, "whole"
    data = z.read(name)
    return {n.split("@")[0] for n in exports_of(data)}, info.compress_size, "whole"


def exports_of(data):
    with tempfile.NamedTemporaryFile(suffix=".so") as f:
        f.write(data)
        f.flush()
        try:
            return nm_exports(f.name)
        except subprocess.CalledProcessError as e:  # not a library nm reads: one line, not a traceback
            said = (e.stderr or "").replace(f.name + ": ", "").split("\n")[0].strip()
            raise FormatError("nm -D failed (exit %d)%s" % (e.returncode, ": " + said if said else "")) from None


def read_kept_list(path, keys):
    """A kept export list (tools/api/*-exports.txt): its "# key: value" lines for keys, and its
    names (each as written, @VERSION included)."""
    head, names = {}, []
    for line in open(path).read().splitlines():
        m = re.match(r"# (%s): (.+)$" % "|".join(keys), line)
        if m:
            head[m.group(1)] = m.group(2)
        elif line and not line.startswith("#"):
            names.append(line)
    return head, names


def write_exports(row, pkg, ver, lib):
    z, rf = open_wheel(pkg, ver)
    log("%s: reading %s (%s compressed) out of %s==%s ..." % (row, lib, mb(z.getinfo(lib).compress_size), pkg, ver))
    with parsing("%s: %s" % (wheel_name(z, rf), lib)):
        data = z.read(lib)
    verify(pkg, ver, lib, hashlib.sha256(data).hexdigest())
    with parsing("%s: %s" % (wheel_name(z, rf), lib)):
        names = exports_of(data)
    path = os.path.join(TOP, "tools", "api", "%s-exports.txt" % row)
    with open(path, "w") as f:
        f.write("# %s\n" % GEN)
        f.write("# the exports of %s in %s==%s (nm -D --defined-only)\n" % (os.path.basename(lib), pkg, ver))
        f.write("# file: %s\n# package: %s==%s\n" % (os.path.basename(lib), pkg, ver))
        for n in sorted(names):
            f.write(n + "\n")
    log("%s: %d exports of %s (%s==%s; %.1f MB read) -> %s" % (row, len(names), os.path.basename(lib), pkg, ver,
                                                             (rf.fetched if rf else len(data)) / 1e6, os.path.relpath(path, TOP)))


def releases(pkg, major):
    """The releases of pkg of that major with a manylinux x86_64 wheel, oldest first (no .dev)."""
    _, files = project_files(pkg)
    # the index's page lists every release's files: the versions are their wheels' file names'
    vers = {wheel_version(f["filename"]) for f in files if is_linux_x86_64(f["filename"])}
    out = [v for v in vers if v and v.split(".")[0] == major and re.match(r"^[0-9.]+$", v)]
    return sorted(out, key=lambda v: [int(x) for x in v.split(".")])


def write_since(row, pkgs):
    """tools/api/<row>-since.txt: for each export of the releases read, the first release (the
    pinned major) of the packages pkgs whose library exports it; a release in several packages is
    read from the first. The library is the pinned one's file (its SONAME): at the pinned path in
    the wheel, else the one member of that name."""
    pin = [p for p in pins() if p[0] == row]
    if not pin or not pin[0][3]:
        sys.exit("wheel_files: %s: no library pinned for it in %s" % (row, PINS))
    _, _, pinned_ver, lib, _ = pin[0]
    key = lambda v: [int(x) for x in v.split(".")]
    vers = {}
    for pkg in pkgs:
        for v in releases(pkg, pinned_ver.split(".")[0]):
            vers.setdefault(v, pkg)
    first, read, how = {}, [], {"front": [], "whole": []}
    for ver in sorted(vers, key=key):
        pkg = vers[ver]
        t = time.time()
        # each release's list kept in the cache (a rerun reads none of the wheels it has read)
        kept = os.path.join(cache_dir(), "exports", "%s-%s-%s.txt" % (pkg, ver, os.path.basename(lib)))
        if os.path.exists(kept):
            lines = open(kept).read().splitlines()
            way, nbytes = lines[0].split()[1:3]
            names, nbytes = [n for n in lines[1:] if n], int(nbytes)
        else:
            log("%s==%s: reading its %s ..." % (pkg, ver, os.path.basename(lib)))
            z, rf = open_wheel(pkg, ver, 1 << 16)  # the directory: 64 kB blocks (it is a few kB)
            directory = rf.fetched if rf else 0
            member = lib if lib in z.namelist() else None
            if member is None:
                same = [n for n in z.namelist() if os.path.basename(n) == os.path.basename(lib)]
                if len(same) != 1:
                    log("%s==%s has %s %s: skipped" % (pkg, ver, "no" if not same else "%d files named" % len(same), os.path.basename(lib)))
                    continue
                member = same[0]
            names, nbytes, way = member_exports(z, rf, member)
            log("%s==%s: %d exports of %s (%s: %.0f kB of the member's %.0f MB read, %.0f kB of the wheel's directory; %.1f s)"
                % (pkg, ver, len(names), member, way, nbytes / 1e3, z.getinfo(member).compress_size / 1e6, directory / 1e3, time.time() - t))
            os.makedirs(os.path.dirname(kept), exist_ok=True)
            part = "%s.tmp-%d" % (kept, os.getpid())  # this run's own: another may write the same list
            with open(part, "w") as f:
                f.write("# %s %d %s\n" % (way, nbytes, member) + "".join("%s\n" % n for n in sorted(names)))
            os.replace(part, kept)
        for name in names:
            first.setdefault(name, ver)
        read.append(ver)
        how[way].append(nbytes)
    if not read:
        sys.exit("wheel_files: %s: no release of %s holds %s" % (row, " ".join(pkgs), os.path.basename(lib)))
    # the names of the pinned release's exports (tools/api/<row>-exports.txt), which the table
    # takes its functions from: not the internals some releases exported (cuSPARSELt 0.7.1: 67,353
    # names, C++ mostly), nor what a later release dropped
    _, pinned = read_kept_list(os.path.join(TOP, "tools", "api", "%s-exports.txt" % row), ("file",))
    pinned = {n.split("@")[0] for n in pinned}
    first = {n: v for n, v in first.items() if n in pinned}
    path = os.path.join(TOP, "tools", "api", "%s-since.txt" % row)
    by = ["%s from %s" % (v[0] if len(v) == 1 else "%s to %s" % (min(v, key=key), max(v, key=key)), p) for p in pkgs
          for v in [[x for x in read if vers[x] == p]] if v]
    with open(path, "w") as f:
        f.write("# %s\n" % GEN.replace("(tools/wheel_files.py exports)", "(tools/wheel_files.py since %s %s)" % (row, " ".join(pkgs))))
        f.write("# each export of %s in %s==%s (tools/api/%s-exports.txt) and the first release of %s that has it"
                " (%d release%s read: %s)\n" % (os.path.basename(lib), pin[0][1], pinned_ver, row, " or ".join(pkgs), len(read),
                                                 "" if len(read) == 1 else "s", "; ".join(by)))
        f.write("# read: %s\n" % "; ".join(
            "%d release%s %s, %s of the wheel a release at most" % (
                len(n), "" if len(n) == 1 else "s",
                "from the front of the library's member (its dynamic symbols)" if w == "front" else
                "with the library's member whole (its .dynstr not at the front: patchelf moved it)",
                "%.0f kB" % (max(n) / 1e3) if max(n) < 1e6 else "%.0f MB" % (max(n) / 1e6))
            for w, n in how.items() if n))
        for name in sorted(first):
            f.write("%s %s\n" % (name, first[name]))
    log("%s: %d names -> %s" % (row, len(first), os.path.relpath(path, TOP)))


DIST_INFO = re.compile(r"^[^/]+\.dist-info/[^/]+$")

# the members of a pinned wheel beside its library and dist-info that `site` lays out for the
# tests (tests/fixtures.sh): `pin` records their digests too
SITE_EXTRA = {"nvshmem_host": ("nvidia/nvshmem/lib/libnvshmem_device.a", "nvidia/nvshmem/lib/nvshmem_bootstrap_uid.so.3")}


def write_site(row, d, extra=()):
    """The pinned library of row, the members extra and the wheel's dist-info under d, as a
    site-packages holds them (complete once d/.complete is there): those members alone are read,
    each verified against the manifest in a temporary directory beside d, then moved into d, the
    marker last. The marker names the manifest's digests of them: a tree laid out before the
    manifest, or under another one, is laid out again."""
    pin = [p for p in pins() if p[0] == row]
    if not pin or not pin[0][3]:
        sys.exit("wheel_files: %s: no library pinned for it in %s" % (row, PINS))
    _, pkg, ver, lib, _ = pin[0]
    entry = manifest_entry(pkg, ver)["files"]
    wanted = sorted({lib, *extra} | {p for p in entry if DIST_INFO.match(p)})
    digest = hashlib.sha256("".join("%s %s\n" % (p, entry.get(p)) for p in wanted).encode()).hexdigest()
    want = "%s==%s %s\nverified: %s\n" % (pkg, ver, " ".join([lib] + sorted(extra)), digest)
    marker = os.path.join(d, ".complete")
    if os.path.exists(marker):
        if open(marker).read() == want:
            return
        log("%s: laid out before the manifest, or under another one (%s): laying it out again" % (d, marker))
    z, rf = open_wheel(pkg, ver)
    members = [m for m in z.infolist() if m.filename == lib or m.filename in extra or DIST_INFO.match(m.filename)]
    for f in [lib] + list(extra):
        if not any(m.filename == f for m in members):
            sys.exit("wheel_files: %s==%s has no %s" % (pkg, ver, f))
    verify_set(pkg, ver, [m.filename for m in members if DIST_INFO.match(m.filename)], DIST_INFO.match)
    log("%s==%s: extracting %s (%s) into %s ..." % (pkg, ver, " ".join(os.path.basename(f) for f in [lib] + list(extra)),
                                                    mb(sum(m.file_size for m in members)), d))
    parent = os.path.dirname(d)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".tmp-%s-" % os.path.basename(d), dir=parent)
    try:
        extract_verified(z, rf, pkg, ver, members, tmp)
        os.makedirs(d, exist_ok=True)
        if os.path.exists(marker):
            os.remove(marker)
        for m in members:
            out = os.path.join(d, *m.filename.split("/"))
            os.makedirs(os.path.dirname(out), exist_ok=True)
            os.replace(os.path.join(tmp, *m.filename.split("/")), out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    part = "%s.tmp-%d" % (marker, os.getpid())  # this run's own: another may lay the same tree out
    with open(part, "w") as f:
        f.write(want)
    os.replace(part, marker)
    log("%s: %s and the dist-info of %s==%s in %s (%.1f MB read, verified)" % (
        row, " ".join(os.path.basename(f) for f in [lib] + list(extra)), pkg, ver, d, (rf.fetched if rf else 0) / 1e6))


# ---- pin: the manifest ----

WHOLE_BELOW = 64 << 20  # a wheel smaller is downloaded whole by `pin` and checked against the index's sha256


def download_whole(f, path):
    """The wheel f (wheel_file()) downloaded to path, checked against the index's size and sha256
    (hashes.sha256). Each read is bounded by $CUDALOAD_WHEEL_TIMEOUT (not the whole: a wheel is
    up to 600 MB)."""
    if not f["sha256"]:
        raise VerifyError("%s: the index gives no sha256 of it (hashes.sha256): not downloaded whole" % f["url"])
    h, n = hashlib.sha256(), 0
    try:
        with opener().open(request(f["url"]), timeout=request_timeout()) as r, open(path, "wb") as out:
            for c in iter(lambda: r.read(1 << 20), b""):
                h.update(c)
                out.write(c)
                n += len(c)
    except urllib.error.HTTPError as e:
        raise FetchError("%s: HTTP %d %s" % (f["url"], e.code, e.reason), status=e.code) from None
    except (urllib.error.URLError, OSError, http.client.HTTPException) as e:
        raise FetchError("%s: %s" % (f["url"], why(e))) from None
    if n != f["size"] or h.hexdigest() != f["sha256"]:
        raise VerifyError("%s: %d bytes, sha256 %s; the index says %d bytes, sha256 %s: refused" % (
            f["url"], n, h.hexdigest(), f["size"], f["sha256"]))


def pin_wheel(pkg, ver, wanted, whole, tmpdir):
    """The manifest's lines of pkg==ver: its wheel's (the index's sha256) and those of its members
    that wanted(name) picks, read from the wheel downloaded whole and checked against the index's
    sha256 where whole (or the wheel is below WHOLE_BELOW), else with ranged reads (each member's
    CRC checked)."""
    f = wheel_file(pkg, ver)
    if not f["sha256"]:
        raise VerifyError("%s==%s: %s: the index gives no sha256 of the wheel (hashes.sha256)" % (pkg, ver, f["url"]))
    how = "ranged reads (CRC checked)"
    if whole or f["size"] <= WHOLE_BELOW:
        path = os.path.join(tmpdir, f["filename"])
        log("%s==%s: downloading %s (%s) ..." % (pkg, ver, f["filename"], mb(f["size"])))
        download_whole(f, path)
        z, rf, how = zipfile.ZipFile(path), None, "the whole wheel, checked against the index's sha256"
    else:
        rf = RangeFile(f["url"], f["size"])
        z = remote_zip(rf)
    names = [m for m in z.infolist() if not m.is_dir() and wanted(m.filename)]
    lines = ["%s  %s==%s  %s" % (f["sha256"], pkg, ver, f["filename"])]
    for m in sorted(names, key=lambda m: m.filename):
        lines.append("%s  %s==%s  %s" % (member_sha256(z, m, "%s: %s" % (f["url"], m.filename)), pkg, ver, m.filename))
    z.close()
    if rf is None:
        os.remove(path)
    log("%s==%s: %d files, from %s" % (pkg, ver, len(names), how))
    return "# %s==%s: %d files, from %s\n" % (pkg, ver, len(names), how) + "".join(l + "\n" for l in lines)


def write_manifest(whole=False):
    """The manifest ($CUDALOAD_WHEEL_MANIFEST, else tools/api/wheel-files.sha256) of the pinned
    wheels (tools/api/wheel-libs.txt: the include dir, the library, the dist-info, SITE_EXTRA) and
    the older ones (tools/api/wheel-older.txt: the include dir)."""
    want = {}
    for row, pkg, ver, lib, inc in pins():
        want.setdefault((pkg, ver), []).append(
            lambda p, inc=inc.rstrip("/") + "/", keep=({lib} if lib else set()) | set(SITE_EXTRA.get(row, ())):
            p.startswith(inc) or p in keep or bool(DIST_INFO.match(p)))
    for row, pkg, ver, inc, _ in older():
        want.setdefault((pkg, ver), []).append(lambda p, inc=inc.rstrip("/") + "/": p.startswith(inc))
    path = manifest_path()
    out = ["# the sha256 of each file tools/wheel_files.py takes out of a pinned wheel (SHA256  PACKAGE==VERSION  PATH),\n",
           "# and of each wheel (its file name as PATH: the sha256 the index lists). The root of trust of what is\n",
           "# fetched: generated by tools/wheel_files.py pin; do not edit (a new manifest is a reviewed change)\n"]
    with tempfile.TemporaryDirectory(prefix=".pin-", dir=os.path.dirname(path)) as tmpdir:
        for (pkg, ver), fs in want.items():
            out.append(pin_wheel(pkg, ver, lambda p, fs=fs: any(w(p) for w in fs), whole, tmpdir))
        with open(path + ".tmp", "w") as f:
            f.write("".join(out))
        os.replace(path + ".tmp", path)
    read_manifest.cache_clear()
    log("%d lines -> %s" % (sum(1 for l in "".join(out).splitlines() if not l.startswith("#")), os.path.relpath(path)))


def main(argv):
    if len(argv) < 2 or argv[1] not in ("headers", "exports", "since", "list", "site", "pin"):
        print(__doc__, file=sys.stderr)
        return 2
    cmd = argv[1]
    if cmd == "list":
        if len(argv) != 3 or argv[2].count("==") != 1:
            print(__doc__, file=sys.stderr)
            return 2
        pkg, ver = argv[2].split("==")
        z, _ = open_wheel(pkg, ver)
        for m in z.infolist():
            print(m.file_size, m.filename)
        return 0
    if cmd == "pin":
        if argv[2:] not in ([], ["--whole"]):
            print(__doc__, file=sys.stderr)
            return 2
        write_manifest(whole=argv[2:] == ["--whole"])
        return 0
    if cmd == "site":
        if len(argv) < 4:
            print(__doc__, file=sys.stderr)
            return 2
        write_site(argv[2], os.path.abspath(argv[3]), argv[4:])
        return 0
    if cmd == "since":
        if len(argv) < 4:
            print(__doc__, file=sys.stderr)
            return 2
        write_since(argv[2], argv[3:])
        return 0
    if cmd == "headers":
        cache = take(argv, "--cache")
        if argv[2:]:
            print(__doc__, file=sys.stderr)
            return 2
        cache = os.path.abspath(cache) if cache else cache_dir()
        os.makedirs(cache, exist_ok=True)
        for row, pkg, ver, lib, inc in pins():
            fetch_headers(cache, row, pkg, ver, inc)
        # the oldest headers each table header is tested with (tests/test_stubs.c): not needed to
        # build, so ranged reads only (never a whole wheel), a failure only said, and the rest not
        # tried (offline, each would wait)
        for row, pkg, ver, inc, _ in older():
            try:
                fetch_headers(cache, row, pkg, ver, inc, 1 << 16, download=False)
            except VerifyError:
                raise
            except ERRORS as e:
                log("%s==%s (tools/api/wheel-older.txt): %s: not fetched, nor the older headers after it" % (pkg, ver, one_line(e)))
                break
        if FETCHED:  # a cached run says nothing
            log("the headers of %d wheel%s fetched into %s: %s read" % (
                len(FETCHED), "" if len(FETCHED) == 1 else "s", cache, mb(sum(n for _, n in FETCHED))))
        print(cache)
        return 0
    want = set(argv[2:])
    for row, pkg, ver, lib, inc in pins():
        if lib and (not want or row in want):
            write_exports(row, pkg, ver, lib)
    return 0


ERROR_FILE = None  # --error-file FILE: where a failure's line is written too (make reads it at its end)


def take(argv, name):
    """The value of the option name (name VALUE, or name=VALUE) taken out of argv (changed), else None."""
    for i, a in enumerate(argv):
        if a == name and i + 1 < len(argv):
            value = argv[i + 1]
            del argv[i:i + 2]
            return value
        if a.startswith(name + "="):
            del argv[i]
            return a.split("=", 1)[1]
    return None


def cli(argv):
    """main, its errors (the tool's own: a request, the index, a malformed wheel, a file not as the
    manifest says; a local file, a wheel not as pinned (KeyError: no such member), a malformed zip
    or ELF that got past parsing()) one line, no traceback. The options of every command taken out
    first: --index-url URL (the index, before pip's configuration), --error-file FILE (a failure's
    line written there too; the file removed where the run succeeds)."""
    global INDEX_URL_OPTION, ERROR_FILE
    argv = list(argv)
    INDEX_URL_OPTION = take(argv, "--index-url")
    ERROR_FILE = take(argv, "--error-file")
    try:
        if ERROR_FILE and os.path.exists(ERROR_FILE):
            os.remove(ERROR_FILE)  # a line left by an earlier run is not this one's
        code = main(argv)
    except ERRORS as e:
        code = "wheel_files: %s: %s" % (" ".join(argv[1:]), one_line(e))
    except SystemExit as e:
        code = e.code
    if isinstance(code, str) and ERROR_FILE:
        try:
            os.makedirs(os.path.dirname(os.path.abspath(ERROR_FILE)), exist_ok=True)
            with open(ERROR_FILE, "w") as f:
                f.write(code + "\n")
        except OSError as e:
            log("%s: %s (the error below not written there)" % (ERROR_FILE, why(e)))
    sys.exit(code)


if __name__ == "__main__":
    cli(sys.argv)
