#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""check_abi.py -- the ABI libcudaload and its stubs export, checked (`make check-abi`, part of
`make check`; docs/api.md, "Checking the ABI").

  lib      libcudaload.so.0 against the baseline abi/libcudaload.so.0.abi, by libabigail's
           abidiff: a function removed, a public type changed (a member moved or retyped, an
           enumerator's value, a size) fails, bar the compatible changes that
           abi/suppressions.abignore names, each with its reason. Only the types of the public
           headers (include/) and of libcudaload/api_layouts.inc (the wheel libraries' tables
           as libcudaload holds them) count; the CUDA headers' types are NVIDIA's ABI (left out
           by the suppressions too). Functions added are not reported (the next check sees them).
  exports  libcudaload.so.0's exports (readelf --dyn-syms) against the functions the public headers
           (include/cudaload*.h, all installed) declare CUDALOAD_API: every export declared,
           every declaration exported. A cudaload_* function a public header declares without
           CUDALOAD_API is hidden, unless include/cudaload_stubs.h declares it (a stub's).
  stubs    each shared stub build/stubs/libcudaload-<lib>.so against the library it stands
           for: the toolkit's file (CUDA_HOME/lib64; the driver's link stub, else
           tools/api/cuda-driver-exports.txt) or, for the libraries that ship as wheels of their
           own, tools/api/<row>-exports.txt (their pinned wheel's functions) and the real file
           where build/fixtures has it (<row>-site, tests/fixtures.sh). Every export of the stub
           is one of the library's (a function where the library's is a function), or
           libcudaload's own (include/cudaload_stubs.h), or in KNOWN_EXTRA with its reason;
           every function the library exports is in the stub or left out in
           docs/api-coverage.md with its reason (tools/gen_api.py writes that list), and none
           left out is in the stub; every export is in the version CUDALOAD_STUB_0
           (stubs/stub.map), the default one in libcudaload-<lib>.so; a library that versions
           none of its exports has its stub in STUB_UNVERSIONED (stubs/gen/stubs.mk), whose
           libcudaload-<lib>.so.0 has every export in that version hidden, and only such a
           library (bar KNOWN_VERSIONING, with its reason); the archive libcudaload-<lib>.a
           defines, visible, what the shared stub exports; each function of
           include/cudaload_stubs.h is exported by a stub.
           The stubs' versions are never NVIDIA's (libcudart.so.13): on purpose, so that
           NVIDIA's libraries never bind to a stub (docs/stubs.md, "Only the program's calls").

    tools/check_abi.py [--build B] [--only lib|stubs] [--cuda-lib DIR] [--fixtures DIR] ...
    tools/check_abi.py --write-baseline   (make abi-baseline) abi/libcudaload.so.0.abi from the
                                          build's library: an ABI change made on purpose
    tools/check_abi.py --write-docs       docs/stubs.md's table of the stubs' versions and of
                                          the names they export that their library does not

Exit 0 when clean, with a summary; 1 with one line per finding on stderr ("check-abi: ...",
naming the symbol or type), then abidiff's report when it found something; 2 on a usage error or
a missing tool (abidw/abidiff: Debian's abigail-tools, which tests/deps.sh installs).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

BASELINE = "abi/libcudaload.so.0.abi"
SUPPRESSIONS = "abi/suppressions.abignore"
LAYOUTS = "libcudaload/api_layouts.inc"
STUBS_H = "cudaload_stubs.h"
STUB_VERSION = "CUDALOAD_STUB_0"
EM_X86_64 = 62

# abidw's options for the baseline. Not --drop-private-types: libabigail 2.2 then drops from a
# function type each parameter whose type is private (a CUDA header's), and the baseline no
# longer compares equal even to the library it was written from. --short-locs: file names
# only, no machine's paths (the suppressions tell the headers by name). The compilation
# directory is taken out too (a machine's path, unused by abidiff).
ABIDW = ["abidw", "--no-corpus-path", "--short-locs", "--exported-interfaces-only"]

# A stub's export that its library does not export, known and why. Only where the library's
# export list cannot say: a real file, where there is one, is checked as any.
KNOWN_EXTRA = {
    ("nvshmemhost", "nvshmem_selected_device_transport"):
        "a variable that `libnvshmem_host.so.3` exports (`B`, version `NVSHMEM`) and its static device "
        "library reads; the stub keeps its copy equal to the library's (`stubs/nvshmemhost_core.c`). "
        "`tools/api/nvshmem_host-exports.txt` lists functions only: against the library itself, where "
        "`build/fixtures` has it, the name is checked as any other",
}
# A stub not in STUB_UNVERSIONED though its library versions none of its exports, and why.
KNOWN_VERSIONING = {
    "cuda": "`libcuda.so.1` versions none of its exports but calls none of them through its PLT or "
            "GOT (driver 580.159.04's has no `JUMP_SLOT` or `GLOB_DAT` relocation against a `cu*` name), "
            "so the stub's default version takes none of the driver's own calls; another library's "
            "unversioned import of the driver API binds to the stub when the stub comes first in the "
            "process, and the stub forwards it to the driver libcudaload loaded",
}

DOC = "docs/stubs.md"
DOC_BEGIN = "<!-- stub-abi:begin: generated by tools/check_abi.py --write-docs; do not edit (make check-abi checks it) -->"
DOC_END = "<!-- stub-abi:end -->"


class Findings:
    def __init__(self):
        self.lines = []
        self.report = None  # abidiff's, when it found something

    def add(self, text):
        self.lines.append("check-abi: " + text)


def fail(text):
    """A tool that failed, a file that is missing: exit 2, not a finding."""
    print("check-abi: " + text, file=sys.stderr)
    sys.exit(2)


def run(cmd, check=True):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if check and r.returncode != 0:
        fail("%s exited %d: %s" % (" ".join(cmd), r.returncode, (r.stderr or r.stdout).strip()[-2000:]))
    return r


def rel(path):
    p = os.path.relpath(path, TOP)
    return path if p.startswith("..") else p


def elf_machine(path):
    with open(path, "rb") as f:
        h = f.read(20)
    if h[:4] != b"\x7fELF":
        return None
    return int.from_bytes(h[18:20], "little" if h[5] == 1 else "big")


# ---- dynamic symbols ----------------------------------------------------------------------

class Sym:
    __slots__ = ("name", "kind", "bind", "vis", "version", "default")

    def __init__(self, name, kind, bind, vis, version, default):
        self.name, self.kind, self.bind, self.vis, self.version, self.default = name, kind, bind, vis, version, default

    def is_func(self):
        return self.kind in ("FUNC", "IFUNC")


def dynsyms(path):
    """{name: Sym} of what path defines in its dynamic symbol table (readelf --dyn-syms), without
    the version definitions' own ABS symbols. version None: unversioned; default: @@ (not hidden)."""
    out = run(["readelf", "--dyn-syms", "-W", path]).stdout
    syms = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) < 8 or not re.match(r"\d+:$", f[0]) or f[6] == "UND":
            continue
        m = re.match(r"([^@]+)(@@?)([^\s(]+)", f[7])
        if not m and f[6] == "ABS" and int(f[1], 16) == 0:
            continue  # a version's name (libcudart.so.13, CUDALOAD_STUB_0)
        name, version, default = (m.group(1), m.group(3), m.group(2) == "@@") if m else (f[7], None, True)
        syms[name] = Sym(name, f[3], f[4], f[5], version, default)
    return syms


def archive_globals(path):
    """The names path (an archive) defines global or weak with default visibility."""
    out = run(["readelf", "-s", "-W", path]).stdout
    names = set()
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 8 and re.match(r"\d+:$", f[0]) and f[6] != "UND" and f[4] in ("GLOBAL", "WEAK") and f[5] == "DEFAULT":
            names.add(f[7])
    return names


def export_list(path):
    """{name: Sym} from an export list (tools/api/<row>-exports.txt: name[@@version] a line; functions)."""
    syms = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            m = re.match(r"([^@]+)(@@?)(.+)", line)
            name, version, default = (m.group(1), m.group(3), m.group(2) == "@@") if m else (line, None, True)
            syms[name] = Sym(name, "FUNC", "GLOBAL", "DEFAULT", version, default)
    return syms


# ---- the public headers -------------------------------------------------------------------

def declarations(include_dir):
    """[(header, name, with CUDALOAD_API)] of every cudaload_* function the headers
    include/cudaload*.h declare at file scope."""
    out = []
    for h in sorted(os.listdir(include_dir)):
        if not (h.startswith("cudaload") and h.endswith(".h")):
            continue
        with open(os.path.join(include_dir, h)) as f:
            text = f.read()
        text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
        text = re.sub(r"//[^\n]*", " ", text)
        text = re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", " ", text, flags=re.M)  # directives, continued too
        text = text.replace('extern "C"', " ")
        for stmt in re.split(r"[;{}]", text):
            stmt = " ".join(stmt.split())
            # a prototype: words and stars (a macro without a semicolon before it, the
            # return type, CUDALOAD_API), the name, its parameters
            m = re.match(r"^([\w\s\*]*?)\b(cudaload_\w+)\s*\(.*\)$", stmt)
            if m and "typedef" not in m.group(1).split():
                out.append((h, m.group(2), "CUDALOAD_API" in m.group(1).split()))
    return out


# ---- lib: abidiff against the baseline ----------------------------------------------------

def abidiff_cmd(args, so, leaf=False):
    return ["abidiff", "--no-added-syms"] + (["--leaf-changes-only", "--impacted-interfaces"] if leaf else []) + [
        "--suppressions", args.suppressions, args.baseline, so]


def fn_name(decl):
    """cudaload_roots of "const cudaload_root* cudaload_roots(size_t*)"."""
    m = re.search(r"(\w+)\s*\(", decl)
    return m.group(1) if m else decl


def abidiff_findings(report, public=None):
    """One line per change of abidiff's --leaf-changes-only --impacted-interfaces report; a
    changed type that a file outside public (file names) defines is left out."""
    items, cur, section, users = [], None, "", False
    for line in report.splitlines():
        if not line.strip():
            continue
        if not line.startswith(" "):
            m = re.match(r"^'(.+?)(?: at ([^':]*)[^']*)?' changed:$", line)
            cur = {"what": m.group(1) + " changed", "details": [], "users": []} if m else None
            if cur and (public is None or not m.group(2) or os.path.basename(m.group(2)) in public):
                items.append(cur)
            else:
                section = line
            users = False
            continue
        m = re.match(r"^  \[([DCA])\] '(function|variable|var) (.+?)'(?:\s+\{(\S+)\})?", line)
        if m:
            kind = "function" if m.group(2) == "function" else "variable"
            name = m.group(4) or (fn_name(m.group(3)) if kind == "function" else m.group(3).split()[-1])
            verb = {"D": "removed", "C": "changed", "A": "added"}[m.group(1)]
            cur = {"what": "%s %s %s ('%s')" % (kind, name, verb, m.group(3)), "details": [], "users": []}
            items.append(cur)
            users = False
            continue
        m = re.match(r"^  \[([DA])\] (\S+)", line)
        if m and "symbol" in section:
            cur = {"what": "symbol %s %s (%s)" % (m.group(2), "removed" if m.group(1) == "D" else "added", section.rstrip(":")),
                   "details": [], "users": []}
            items.append(cur)
            continue
        if cur is None:
            continue
        text = line.strip()
        if re.search(r"impacted interfaces?:$", text):
            users = True
        elif users:
            cur["users"].append(fn_name(text))
        elif not (re.match(r"^(\d+|one|there are) .*:$", text) or text == "type size hasn't changed"):
            cur["details"].append(text)
    out = []
    for it in items:
        s = it["what"]
        details = [d.rstrip(":") for d in it["details"]]
        if len(details) > 8:  # a table's members, each moved: the first ones say it
            details = details[:8] + ["... (%d more)" % (len(details) - 8)]
        if details:
            s += ": " + "; ".join(details)
        if it["users"]:
            s += " (used by %s)" % ", ".join(it["users"])
        out.append(s)
    return out


def enum_appends(report):
    """The enums of abidiff's leaf report whose only changes are enumerators appended and their
    *_COUNT_ sentinel moved: a value a program built against the baseline never sees, and a count
    it compares against as it was built (docs/api.md, Checking the ABI). Decided here rather than
    by a suppression: libabigail 2.2 lets such a suppression hide every type that holds the enum
    (a member appended to cudaload_candidate, which holds a cudaload_status, went unreported)."""
    allowed, name, ok, section = set(), None, False, ""
    for line in report.splitlines() + [""]:
        if not line.startswith(" "):
            if name and ok:
                allowed.add(name)
            m = re.match(r"^'enum (\w+)(?: at [^']*)?' changed:$", line)
            name, ok, section = (m.group(1), True, "") if m else (None, False, "")
            continue
        if not name:
            continue
        text = line.strip()
        if re.match(r"^\d+ enumerators? (insertion|deletion|change)s?:$", text):
            section = text.split()[2].rstrip("s:")
        elif re.search(r"impacted interfaces?:$", text):
            section = "users"
        elif section == "deletion":
            ok = False
        elif section == "change" and not re.match(r"^'\w+::\w+_COUNT_' from value", text):
            ok = False
        elif section not in ("insertion", "change", "users") and text != "type size hasn't changed":
            ok = False
    return allowed


def check_lib(args, so, found):
    if elf_machine(so) != EM_X86_64:
        print("check-abi: %s is not x86_64's; the baseline is: its ABI is not compared" % rel(so))
        return
    if not os.path.isfile(args.baseline):
        found.add("%s missing: make abi-baseline writes it from the build" % rel(args.baseline))
        return
    # The verdict is abidiff's full report's; the suppressions leave out the types that neither
    # the public headers nor api_layouts.inc define (the CUDA headers').
    r = run(abidiff_cmd(args, so), check=False)
    # 1: abidiff's error, 2: its usage. Anything on stderr too: an XML reader's complaint comes
    # with exit 0 and nothing compared.
    if r.returncode & 3 or r.stderr.strip():
        fail("abidiff exited %d, saying:\n%s%s" % (r.returncode, r.stdout, r.stderr))
    if r.returncode == 0:
        print("check-abi: %s: the ABI of %s (abidiff: no change to a public type or function, %s)"
              % (rel(so), rel(args.baseline), rel(args.suppressions)))
        return
    # One line per change from the leaf report, which names each changed type once. libabigail
    # 2.2's leaf report does not apply every suppression (a CUDA header's enum shows): a type
    # outside the public headers is left out here as the full report leaves it out.
    public = {h for h in os.listdir(args.include) if h.endswith(".h")} | {os.path.basename(args.layouts)}
    leaf = run(abidiff_cmd(args, so, leaf=True), check=False)
    findings, appends = abidiff_findings(leaf.stdout, public), enum_appends(leaf.stdout)
    lines = [line for line in findings if not any(line.startswith("enum %s changed" % e) for e in appends)]
    if findings and not lines:
        print("check-abi: %s: the ABI of %s, with values appended to %s (abidiff: no other change, %s)"
              % (rel(so), rel(args.baseline), ", ".join(sorted(appends)), rel(args.suppressions)))
        return
    for line in lines:
        found.add("%s: %s" % (os.path.basename(so), line))
    if not lines:
        found.add("%s differs from %s (abidiff exit %d): its report below" % (rel(so), rel(args.baseline), r.returncode))
    found.report = "abidiff's report (%s):\n%s" % (" ".join(abidiff_cmd(args, so)), r.stdout.rstrip())


def check_exports(args, so, found):
    before = len(found.lines)
    decls = declarations(args.include)
    exported = {s.name: s for s in dynsyms(so).values()}
    api = {}
    for h, name, is_api in decls:
        if is_api:
            api.setdefault(name, h)
        elif h != STUBS_H:
            found.add("%s: declared by include/%s without CUDALOAD_API: hidden in the library" % (name, h))
    base = os.path.basename(so)
    for name in sorted(set(exported) - set(api)):
        found.add("%s: exported by %s, declared CUDALOAD_API by no public header" % (name, base))
    for name in sorted(set(api) - set(exported)):
        found.add("%s: declared CUDALOAD_API by include/%s, not exported by %s" % (name, api[name], base))
    for name, s in sorted(exported.items()):
        if name in api and not s.is_func():
            found.add("%s: exported by %s as %s, declared as a function" % (name, base, s.kind))
    if len(found.lines) == before:
        print("check-abi: %s: its %d exports are the %d functions the public headers declare CUDALOAD_API"
              % (rel(so), len(exported), len(api)))


# ---- stubs --------------------------------------------------------------------------------

def stubs_mk(path):
    with open(path) as f:
        text = f.read()

    def var(name):
        m = re.search(r"^%s := ?(.*)$" % re.escape(name), text, re.M)
        return m.group(1).strip() if m else None
    ids = var("STUB_IDS").split()
    return ids, {i: var("STUB_ROW_" + i) for i in ids}, {i for i in ids if var("STUB_WHEEL_" + i)}, set((var("STUB_UNVERSIONED") or "").split())


def coverage(path):
    """From docs/api-coverage.md (tools/gen_api.py's): {row: file} and {row: names left out}."""
    with open(path) as f:
        text = f.read()
    files = dict(re.findall(r"^\| (\S+) \| \d+ \(`([^`]+)`", text, re.M))
    left = {}
    for row, names in re.findall(r"^\*\*(\S+)\*\*, left out: (.*)$", text, re.M):
        left.setdefault(row, set()).update(re.findall(r"`([^`]+)`", names))
    return files, left


def wheel_paths(path):
    """{row: the library's path in its pinned wheel} (tools/api/wheel-libs.txt)."""
    out = {}
    with open(path) as f:
        for line in f:
            f4 = line.split()
            if len(f4) >= 4 and not line.startswith("#") and f4[2] != "-":
                out[f4[0]] = f4[2]
    return out


def sonames(probe):
    """{row: its newest SONAME} from the catalogue (cudaload-probe --catalogue)."""
    out = {}
    if probe and os.access(probe, os.X_OK):
        for line in run([probe, "--catalogue"]).stdout.splitlines()[1:]:
            f = line.split("\t")
            if len(f) > 2 and f[2]:
                out[f[0]] = f[2].split(",")[0]
    return out


def reference(args, sid, row, wheel, files, wheels):
    """(what the library exports {name: Sym}, its name as said, whether from real files) or (None, why)."""
    if sid in wheel:
        lst = os.path.join(args.api, "%s-exports.txt" % row)
        if not os.path.isfile(lst):
            return None, "%s missing" % rel(lst), False
        syms = export_list(lst)
        said = "%s (%s)" % (files.get(row, row), rel(lst))
        real = False
        inwheel = wheels.get(row)
        # the pinned wheel's library itself, where tests/fixtures.sh laid it out (DIR/<name>-site/<its path>)
        sites = sorted(os.listdir(args.fixtures)) if args.fixtures and os.path.isdir(args.fixtures) else []
        for site in (d for d in sites if d.endswith("-site") and inwheel):
            p = os.path.join(args.fixtures, site, inwheel)
            if os.path.isfile(p):
                for n, s in dynsyms(p).items():
                    syms.setdefault(n, s).kind = s.kind  # the file tells objects from functions
                said += " and %s" % rel(p)
                real = True
                break
        return syms, said, real
    f = files.get(row)
    if not f:
        return None, "docs/api-coverage.md names no file for %s" % row, False
    p = os.path.join(args.cuda_lib, "stubs", f) if row == "cuda" else os.path.join(args.cuda_lib, f)
    if os.path.isfile(p):
        return dynsyms(p), rel(p), True
    if row == "cuda":
        lst = os.path.join(args.api, "cuda-driver-exports.txt")
        return export_list(lst), rel(lst), False
    return None, "%s not here" % p, False


def check_stubs(args, found):
    ids, rows, wheel, unversioned = stubs_mk(args.stubs_mk)
    if args.stub_ids:
        ids = [i for i in ids if i in args.stub_ids.split(",")]
    files, left = coverage(args.coverage)
    wheels = wheel_paths(os.path.join(args.api, "wheel-libs.txt"))
    own = {name for h, name, api in declarations(args.include) if h == STUBS_H}
    own_exported = set()
    checked, skipped, doc_rows = [], [], {}
    for sid in ids:
        row = rows[sid]
        so = os.path.join(args.stubs, "libcudaload-%s.so" % sid)
        name = os.path.basename(so)
        if not os.path.isfile(so):
            skipped.append("%s (not built here)" % name)
            continue
        stub = dynsyms(so)
        own_exported |= own & set(stub)
        ref, said, real = reference(args, sid, row, wheel, files, wheels)
        if ref is None:
            skipped.append("%s (%s)" % (name, said))
            continue
        checked.append(sid)
        for n, s in sorted(stub.items()):
            r = ref.get(n)
            if r is None:
                if n not in own and ((sid, n) not in KNOWN_EXTRA or real):
                    found.add("%s: %s: exported, but %s does not export it" % (name, n, said))
            elif real and s.is_func() != r.is_func():
                found.add("%s: %s: a %s in the stub, a %s in %s" % (name, n, s.kind, r.kind, said))
            if s.version != STUB_VERSION:
                found.add("%s: %s: version %s, not %s (stubs/stub.map)" % (name, n, s.version or "none", STUB_VERSION))
            elif not s.default:
                found.add("%s: %s: %s hidden in the link-time file, which ld cannot link against" % (name, n, STUB_VERSION))
        lo = left.get(row, set())
        for n in sorted(n for n, r in ref.items() if r.is_func() and n not in stub and n not in lo):
            found.add("%s: %s: exported by %s, neither in the stub nor left out in docs/api-coverage.md" % (name, n, said))
        for n in sorted(lo & set(stub)):
            found.add("%s: %s: left out in docs/api-coverage.md, but the stub exports it" % (name, n))
        # versions: NVIDIA's scheme decides the stub's
        versions = sorted({r.version for r in ref.values() if r.version})
        if not versions and sid not in unversioned and sid not in KNOWN_VERSIONING:
            found.add("%s: %s versions none of its exports, but %s is not in STUB_UNVERSIONED (stubs/gen/stubs.mk): "
                      "its default version takes the library's unversioned calls" % (name, said, sid))
        if versions and sid in unversioned:
            found.add("%s: %s versions its exports (%s), but %s is in STUB_UNVERSIONED" % (name, said, ", ".join(versions), sid))
        so0 = so + ".0"
        if os.path.lexists(so0):
            run0 = dynsyms(so0)
            if set(run0) != set(stub):
                found.add("%s.0: exports %s, not those of %s" % (name, ", ".join(sorted(set(run0) ^ set(stub))[:5]), name))
            if sid in unversioned:
                if os.path.islink(so0):
                    found.add("%s.0: a link to %s; the run-time file of a stub in STUB_UNVERSIONED hides its version "
                              "(tools/hide_versions.py)" % (name, name))
                for n, s in sorted(run0.items()):
                    if s.version != STUB_VERSION:
                        found.add("%s.0: %s: version %s, not %s hidden" % (name, n, s.version or "none", STUB_VERSION))
                    elif s.default:
                        found.add("%s.0: %s: %s not hidden: it takes the library's unversioned calls "
                                  "(tools/hide_versions.py)" % (name, n, STUB_VERSION))
            else:
                for n, s in sorted(run0.items()):
                    if not s.default:
                        found.add("%s.0: %s: hidden, but %s is not in STUB_UNVERSIONED" % (name, n, sid))
        ar = os.path.join(args.stubs, "libcudaload-%s.a" % sid)
        if os.path.isfile(ar):
            diff = archive_globals(ar) ^ set(stub)
            for n in sorted(diff):
                found.add("libcudaload-%s.a: %s: %s" % (sid, n, "visible in the archive, not exported by the shared stub"
                                                       if n not in stub else "exported by the shared stub, not in the archive"))
        for k, n in sorted(KNOWN_EXTRA):
            if k == sid and n not in stub:
                found.add("%s: %s: KNOWN_EXTRA (tools/check_abi.py) names it, the stub does not export it" % (name, n))
        nvidia = ", ".join("`%s`" % v for v in versions) or "none"
        if sid in unversioned:
            ours = "hidden (`.so.0` a file of its own)"
        else:
            ours = "default (`.so.0` the same file)" + (", below" if sid in KNOWN_VERSIONING else "")
        extras = ["`%s` (`%s`)" % (n, STUBS_H) for n in sorted(own & set(stub))]
        extras += ["`%s` (below)" % n for (k, n) in sorted(KNOWN_EXTRA) if k == sid and n in stub]
        doc_rows[sid] = (nvidia, ours, ", ".join(extras) or "none")
    for n in sorted(own - own_exported):
        if not args.stub_ids:
            found.add("%s: declared by include/%s, exported by no stub" % (n, STUBS_H))
    return checked, skipped, doc_rows


def doc_table(args, ids, rows, doc_rows, old):
    names = sonames(args.probe)
    lines = [DOC_BEGIN,
             "| stub | stands for | NVIDIA's symbol versions | `%s` in the run-time file | exports its library lacks |" % STUB_VERSION,
             "|---|---|---|---|---|"]
    for sid in ids:
        if sid in doc_rows:
            lines.append("| `libcudaload-%s` | `%s` | %s | %s | %s |" % ((sid, names.get(rows[sid], rows[sid])) + doc_rows[sid]))
        elif sid in old:
            lines.append(old[sid])  # not checked here (its library is not on this machine): as written
    for sid in ids:
        if sid in KNOWN_VERSIONING and sid in doc_rows:
            lines += ["", "`libcudaload-%s`'s version is not hidden: %s." % (sid, KNOWN_VERSIONING[sid])]
    for (sid, n), why in sorted(KNOWN_EXTRA.items()):
        if sid in doc_rows:
            lines += ["", "`%s` in `libcudaload-%s`: %s." % (n, sid, why)]
    lines.append(DOC_END)
    return "\n".join(lines)


def check_doc(args, checked_rows, found):
    ids, rows, _, _ = stubs_mk(args.stubs_mk)
    path = os.path.join(TOP, DOC)
    with open(path) as f:
        text = f.read()
    b, e = text.find(DOC_BEGIN), text.find(DOC_END)
    if b < 0 or e < b:
        found.add("%s: no table between %s and %s" % (DOC, DOC_BEGIN, DOC_END))
        return
    old = {}
    for line in text[b:e].splitlines():
        m = re.match(r"^\| `libcudaload-(\w+)` \|", line)
        if m:
            old[m.group(1)] = line
    new = doc_table(args, ids, rows, checked_rows, old)
    cur = text[b:e + len(DOC_END)]
    if args.write_docs:
        if new != cur:
            with open(path, "w") as f:
                f.write(text[:b] + new + text[e + len(DOC_END):])
            print("check-abi: %s: the stubs' table rewritten" % DOC)
        return
    if new != cur:
        found.add("%s: the stubs' table is stale (tools/check_abi.py --write-docs rewrites it; review the diff)" % DOC)


# ---- main ---------------------------------------------------------------------------------

def write_baseline(args, so):
    if elf_machine(so) != EM_X86_64:
        fail("%s is not x86_64's: the baseline is x86_64's" % so)
    out = run(ABIDW + [so]).stdout
    out = re.sub(r" comp-dir-path='[^']*'", "", out)
    ver = run(["abidw", "--version"]).stdout.strip()
    # abidiff knows an ABI file by its first element: the note goes inside it
    first, sep, rest = out.partition("\n")
    # (an XML comment holds no "--": the options by their names)
    note = "written by make abi-baseline (tools/check_abi.py) with %s, options %s, from libcudaload.so.0 of x86_64; do not edit" % (
        ver.replace(":", ""), ", ".join(o.lstrip("-") for o in ABIDW[1:]))
    out = first + sep + "  <!-- %s -->\n" % note + rest
    os.makedirs(os.path.dirname(args.baseline), exist_ok=True)
    with open(args.baseline, "w") as f:
        f.write(out)
    print("check-abi: %s written from %s: commit it with the change that make check-abi reported "
          "before (docs/api.md, Checking the ABI)" % (rel(args.baseline), rel(so)))


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(TOP, "build"), help="the build directory (make's B)")
    ap.add_argument("--so", help="the library (default BUILD/libcudaload.so.0)")
    ap.add_argument("--include", default=os.path.join(TOP, "include"), help="its public headers")
    ap.add_argument("--layouts", default=os.path.join(TOP, LAYOUTS),
                    help="the wheel tables' layouts (libcudaload/api_layouts.inc; its name, for the findings)")
    ap.add_argument("--baseline", default=os.path.join(TOP, BASELINE))
    ap.add_argument("--suppressions", default=os.path.join(TOP, SUPPRESSIONS))
    ap.add_argument("--stubs", help="the stubs' directory (default BUILD/stubs)")
    ap.add_argument("--stub-ids", help="only these stubs, comma-separated (the docs' table is then not checked)")
    ap.add_argument("--stubs-mk", default=os.path.join(TOP, "stubs/gen/stubs.mk"))
    ap.add_argument("--coverage", default=os.path.join(TOP, "docs/api-coverage.md"))
    ap.add_argument("--api", default=os.path.join(TOP, "tools/api"))
    ap.add_argument("--cuda-lib", default=os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "lib64"),
                    help="the toolkit's libraries (CUDA_HOME/lib64)")
    ap.add_argument("--fixtures", help="tests/fixtures.sh's directory (build/fixtures), for real wheel libraries")
    ap.add_argument("--probe", help="cudaload-probe (the catalogue's SONAMEs, for the docs' table; default BUILD/cudaload-probe)")
    ap.add_argument("--only", choices=["lib", "stubs"])
    ap.add_argument("--write-baseline", action="store_true")
    ap.add_argument("--write-docs", action="store_true")
    args = ap.parse_args(argv[1:])
    args.so = args.so or os.path.join(args.build, "libcudaload.so.0")
    args.stubs = args.stubs or os.path.join(args.build, "stubs")
    args.probe = args.probe or os.path.join(args.build, "cudaload-probe")
    for tool in ("abidw", "abidiff", "readelf"):
        if not shutil.which(tool):
            print("check-abi: %s not found: install %s (tests/deps.sh does, as root on Debian)"
                  % (tool, "binutils" if tool == "readelf" else "abigail-tools"), file=sys.stderr)
            return 2
    so = os.path.realpath(args.so)
    if args.only != "stubs" and not os.path.isfile(so):
        print("check-abi: %s not built (make)" % args.so, file=sys.stderr)
        return 2
    if args.write_baseline:
        write_baseline(args, so)
        return 0
    found = Findings()
    if args.only != "stubs":
        check_lib(args, so, found)
        check_exports(args, so, found)
    if args.only != "lib":
        checked, skipped, doc_rows = check_stubs(args, found)
        if not args.stub_ids:
            check_doc(args, doc_rows, found)
        if checked:
            print("check-abi: stubs: %d checked against their libraries (%s)%s"
                  % (len(checked), " ".join(checked), "; not checked: " + ", ".join(skipped) if skipped else ""))
        elif skipped:
            print("check-abi: stubs: none checked: %s" % ", ".join(skipped))
    if found.lines:
        for line in found.lines:
            print(line, file=sys.stderr)
        if found.report:
            print(found.report, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
