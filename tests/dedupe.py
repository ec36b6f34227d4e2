#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tests/dedupe.py DIR... -- hard-link the large files of test environments to one copy each.
   tests/dedupe.py --prune -- drop the store's files no tree links any more.

make check installs the same pip wheels into several venvs (the fixtures', the Python tests'
and, in the no-toolkit proof, a second make check's): cuBLAS 12's libcublasLt alone is 749 MB
a copy. A file of DIR of at least 1 MiB whose content and mode match a file already in the store
is replaced by a hard link to it; one that does not is linked into the store. The disk then
holds each distinct file once, and CI's machine does not run out of space.

The store is $CUDALOAD_DEDUPE_STORE (the Makefile sets it under the build dir, and the nested
make check inherits it). Unset: nothing is done. A DIR on another filesystem than the store is
left as it is (hard links cannot cross filesystems).

Only for trees whose files nothing writes in place: pip removes a file before it writes one,
and the tests copy a file before they change it. Two paths of one inode are one library to the
dynamic loader (it compares device and inode), so a test that loads "two copies" of a library
from two such trees in one process gets the first; none does.
"""
import errno
import hashlib
import os
import stat
import sys

MIN_SIZE = 1 << 20


def digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def dedupe(top, store):
    linked = saved = 0
    for root, dirs, files in os.walk(top):
        for name in files:
            path = os.path.join(root, name)
            st = os.lstat(path)
            if not stat.S_ISREG(st.st_mode) or st.st_size < MIN_SIZE:
                continue
            key = os.path.join(store, "%s-%o" % (digest(path), stat.S_IMODE(st.st_mode)))
            try:
                os.link(path, key)  # the first copy of this content: it is the store's
                continue
            except FileExistsError:
                pass
            kst = os.stat(key)
            if (kst.st_dev, kst.st_ino) == (st.st_dev, st.st_ino):
                continue
            tmp = path + ".dedupe-tmp"
            try:
                os.link(key, tmp)
            except OSError as e:
                if e.errno in (errno.EXDEV, errno.EPERM, errno.EMLINK):
                    continue  # another filesystem, or no more links: keep the copy
                raise
            os.replace(tmp, path)
            linked += 1
            saved += st.st_size
    return linked, saved


def prune(store):
    """Drops the store's files that no tree links any more (a removed venv's, the no-toolkit
    proof's clone once it passed): the store alone would keep them on disk."""
    freed = 0
    for name in os.listdir(store):
        path = os.path.join(store, name)
        st = os.lstat(path)
        if stat.S_ISREG(st.st_mode) and st.st_nlink == 1:
            os.unlink(path)
            freed += st.st_size
    return freed


def main(argv):
    store = os.environ.get("CUDALOAD_DEDUPE_STORE")
    if not store or len(argv) < 2:
        return 0
    os.makedirs(store, exist_ok=True)
    if argv[1:] == ["--prune"]:
        freed = prune(store)
        if freed:
            print("dedupe: %.0f MB of files no tree holds any more removed from %s" % (freed / 1e6, store))
        return 0
    prune(store)
    for top in argv[1:]:
        try:
            linked, saved = dedupe(top, store)
        except OSError as e:
            if e.errno == errno.EXDEV:  # the store is on another filesystem
                continue
            raise
        if linked:
            print("dedupe: %s: %d files linked to the store's copies (%.0f MB saved)" % (top, linked, saved / 1e6))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
