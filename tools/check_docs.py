#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks the Markdown a user reads in a clone (README.md, docs/, examples/, python-shim/,
every tracked *.md) for what would mislead or strand them:

  link     a relative link whose file or directory is not in the repository (tracked, or
           new and not ignored), or that leaves it (../shared, ...)
  anchor   a link's #anchor that no heading of the target Markdown file makes (GitHub's
           slugs: the heading's text lowercased, punctuation but '-' and '_' dropped, each
           space a '-', the second heading of one text '-1', the third '-2', ...);
           "#anchor" alone is a heading of the same file
  path     an absolute path of a development or build machine: /work/..., /home/<user>/...,
           /root/..., a /tmp name that mktemp, Python's tempfile or pytest made. System paths
           a user has (/usr/local/cuda, /opt/...) and /tmp paths an example has the user
           create (/tmp/saxpy-venv) are fine
  process  words about how the project is worked on, not about the project: "this session",
           "session's", "issue #12" / "issue 12", "closing note"

http(s), mailto and other URLs with a scheme are not followed. Links and anchors are read
outside code (fenced blocks, `code spans`); paths and words everywhere, example output too.

    tools/check_docs.py [--root DIR] [FILE...]

FILE: Markdown files relative to DIR (default: the repository this script is in); none: every
*.md of DIR that git tracks or would add (DIR not a git work tree: every *.md under it).
Exit 0 when clean; 1 with one line per finding, FILE:LINE: what, why. `make check-docs` runs it.
"""
import argparse
import difflib
import os
import re
import subprocess
import sys
import urllib.parse

# Where a run of bench/run.sh is kept verbatim (docs/gpu-run/): its report records the commands
# it ran with the GPU machine's absolute paths, which are the record, not advice to a user. Such
# a report is known by the first line bench/run.sh writes; only the "path" check skips it.
RUN_REPORT_DIR = "docs/gpu-run/"
RUN_REPORT_FIRST_LINE = "## libcudaload loader cost"

# A path starts a word: not after a letter, digit, '.', '/', '-' or '~' (build/pip-cuda/root/ is
# relative, --root is an option).
_START = r"(?<![\w.~/-])"
MACHINE_PATHS = [
    (re.compile(_START + r"/work/"), "/work/ is a development machine's checkout"),
    (re.compile(_START + r"/home/[^/\s`'\")]+/"), "a /home/<user>/ path is one machine's home directory"),
    (re.compile(_START + r"/root(/|\b)"), "/root is a build machine's home directory"),
    (re.compile(_START + r"/tmp/(tmp\.[A-Za-z0-9]{6,}|tmp[a-z0-9_]{8}\b|pytest-of-|pytest-\d)"),
     "a /tmp name made by mktemp, tempfile or pytest is one run's scratch directory"),
]
PROCESS_WORDS = [
    (re.compile(r"\b(this|that|the|our|previous|next) session\b", re.I), "a work session is not the project"),
    (re.compile(r"\bsession's\b", re.I), "a work session is not the project"),
    (re.compile(r"\bissue\s*#?\d+", re.I), "an issue number of the project's tracker means nothing to a user"),
    (re.compile(r"\bclosing note\b", re.I), "a closing note is about the work, not the project"),
]

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
INLINE_LINK = re.compile(r"!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(\s*(<[^>]*>|[^()\s]*(?:\([^()\s]*\)[^()\s]*)*)(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
REF_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
HTML_ANCHOR = re.compile(r"<a\s[^>]*(?:name|id)=\"([^\"]+)\"", re.I)
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def slug_text(heading):
    """The text GitHub renders for a heading's Markdown: code spans' content, links' text,
    no emphasis markers or HTML tags."""
    spans = []

    def keep(m):
        spans.append(m.group(2).strip())
        return "\0%d\0" % (len(spans) - 1)
    t = CODE_SPAN.sub(keep, heading)
    t = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", t)
    t = re.sub(r"<[^>]+>", "", t)
    t = t.replace("*", "")
    t = re.sub(r"(?<!\w)_+|_+(?!\w)", "", t)   # emphasis, not snake_case
    return re.sub("\0(\\d+)\0", lambda m: spans[int(m.group(1))], t)


def slug(heading):
    """GitHub's anchor of a heading (before the -1, -2 of repeated ones)."""
    s = slug_text(heading).strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def blank_code_spans(line):
    """The line with each code span's text blanked, so that nothing in it reads as a link."""
    return CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)


def parse(text):
    """(anchors, links, lines): the anchors the file's headings make; each link outside code as
    (line number, destination); every line as (line number, text)."""
    anchors, links, seen = set(), [], {}
    lines = text.split("\n")
    fence = None
    prev = None   # the previous line, when it can be a setext heading's text

    def add_heading(h):
        base = slug(h)
        n = seen.get(base, 0)
        seen[base] = n + 1
        anchors.add(base if n == 0 else "%s-%d" % (base, n))

    for i, line in enumerate(lines, 1):
        m = FENCE.match(line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            continue
        if m:
            fence, prev = m.group(1), None
            continue
        if prev is not None and SETEXT.match(line):
            add_heading(prev)
            prev = None
            continue
        h = ATX.match(line)
        if h:
            add_heading(h.group(2) or "")
            prev = None
        else:
            # a paragraph line can be a setext heading's text; a list item, quote or table cannot
            stripped = line.strip()
            prev = line.strip() if stripped and not re.match(r"^([-*+>|]|\d+[.)])\s", stripped) \
                and not line.startswith("    ") else None
        for a in HTML_ANCHOR.finditer(line):
            anchors.add(a.group(1))
        plain = blank_code_spans(line)
        for l in INLINE_LINK.finditer(plain):
            links.append((i, l.group(2)))
        r = REF_DEF.match(plain)
        if r:
            links.append((i, r.group(1)))
    return anchors, links, list(enumerate(lines, 1))


def repo_files(root):
    """Every file a clone has or will have once committed: git's tracked files and the new ones
    it does not ignore. Without git (a tarball), every file under root."""
    try:
        top = subprocess.run(["git", "-C", root, "rev-parse", "--show-toplevel"], check=True, capture_output=True,
                             text=True).stdout.strip()
        if os.path.realpath(top) != os.path.realpath(root):
            raise OSError("%s is inside the work tree %s, not its top" % (root, top))
        out = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                             check=True, capture_output=True, text=True).stdout
        files = {f for f in out.split("\0") if f}
    except (OSError, subprocess.CalledProcessError):
        # not the top of a git work tree (an unpacked archive; the test's tree, which may lie in an
        # ignored directory of a checkout): what is on disk is what it has
        files = set()
        for d, dirs, names in os.walk(root):
            dirs[:] = [x for x in dirs if x not in (".git", "build")]
            files.update(os.path.relpath(os.path.join(d, n), root) for n in names)
    files = {f.replace(os.sep, "/") for f in files if os.path.exists(os.path.join(root, f))}
    dirs = {""}
    for f in files:
        p = f
        while "/" in p:
            p = p.rsplit("/", 1)[0]
            dirs.add(p)
    return files, dirs


class Checker:
    def __init__(self, root):
        self.root = os.path.abspath(root)
        self.files, self.dirs = repo_files(self.root)
        self.parsed = {}
        self.findings = []

    def read(self, rel):
        if rel not in self.parsed:
            with open(os.path.join(self.root, rel), encoding="utf-8") as f:
                self.parsed[rel] = parse(f.read())
        return self.parsed[rel]

    def report(self, rel, line, what, why):
        self.findings.append("%s:%d: %s: %s" % (rel, line, what, why))

    def check_link(self, rel, line, dest):
        if dest.startswith("<") and dest.endswith(">"):
            dest = dest[1:-1]
        if not dest or SCHEME.match(dest):
            return   # a URL: not followed
        path, _, anchor = dest.partition("#")
        path = urllib.parse.unquote(path)
        anchor = urllib.parse.unquote(anchor)
        if path.startswith("/"):
            self.report(rel, line, "link %s" % dest, "an absolute link; use a path relative to %s" % rel)
            return
        if path:
            target = os.path.normpath(os.path.join(os.path.dirname(rel), path)).replace(os.sep, "/")
            if target == "." or target.startswith("../") or target == "..":
                self.report(rel, line, "link %s" % dest, "it leaves the repository (%s)" % target)
                return
            if target not in self.files and target not in self.dirs:
                self.report(rel, line, "link %s" % dest, "%s is not in the repository" % target)
                return
        else:
            target = rel
        if not anchor or not target.endswith(".md") or target not in self.files:
            return   # only Markdown headings make anchors that can be checked here
        anchors = self.read(target)[0]
        if anchor not in anchors:
            near = difflib.get_close_matches(anchor, sorted(anchors), n=1, cutoff=0.5)
            self.report(rel, line, "anchor #%s" % anchor,
                        "no heading of %s has it (GitHub's slug: lowercase, spaces to '-', punctuation "
                        "but '-' and '_' dropped)%s" % (target, "; nearest: #%s" % near[0] if near else ""))

    def check_file(self, rel):
        _, links, lines = self.read(rel)
        for line, dest in links:
            self.check_link(rel, line, dest)
        run_report = rel.startswith(RUN_REPORT_DIR) and lines and lines[0][1].strip() == RUN_REPORT_FIRST_LINE
        for n, text in lines:
            if not run_report:
                for rx, why in MACHINE_PATHS:
                    for m in rx.finditer(text):
                        self.report(rel, n, "machine path %s" % text[m.start():].split()[0].rstrip("`'\").,;:"), why)
            for rx, why in PROCESS_WORDS:
                for m in rx.finditer(text):
                    self.report(rel, n, "process word \"%s\"" % m.group(0), why)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("files", nargs="*")
    a = ap.parse_args(argv)
    c = Checker(a.root)
    files = a.files or sorted(f for f in c.files if f.endswith(".md"))
    for rel in files:
        c.check_file(rel.replace(os.sep, "/"))
    for f in c.findings:
        print(f)
    if c.findings:
        print("check_docs: %d finding(s) in %d file(s) (tools/check_docs.py explains each check)"
              % (len(c.findings), len({f.split(":", 1)[0] for f in c.findings})), file=sys.stderr)
        return 1
    print("check_docs: %d Markdown files: links, anchors, machine paths and process words clean" % len(files))
    return 0


if __name__ == "__main__":
    sys.exit(main())
