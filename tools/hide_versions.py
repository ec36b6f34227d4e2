#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""hide_versions.py -- make one symbol version of a shared library hidden (non-default).

    tools/hide_versions.py [--version NAME] IN OUT

Writes OUT, a copy of IN (an ELF shared library) in which every dynamic symbol defined in
version NAME (default CUDALOAD_STUB_0) has its .gnu.version (DT_VERSYM) entry's hidden bit
(0x8000) set: readelf shows `foo@NAME` where IN had `foo@@NAME`. Nothing else changes. Used for
the runtime files of the stubs of the libraries that version none of their exports (NCCL, NVML,
cuFile, cuSPARSELt: STUB_UNVERSIONED, docs/stubs.md "Only the program's calls"): glibc's ld.so
binds a reference versioned NAME to such a definition, and never an unversioned reference (the
library's calls to its own exports, other libraries' imports of them), provided the version's
index is 3 or more. An unversioned reference takes the definition of index 2 (for binaries
linked before their library had versions) even when hidden, so the tool refuses a library whose
NAME has index 2: the version script must define a node before it (stubs/stub_unversioned.map).

ELF32 and ELF64, either byte order. The tool checks what it reads (the sections against the
dynamic section and the load segments), refuses what it does not expect (no such version, the
base version, a symbol of NAME undefined, no symbol to hide), checks OUT after writing it (only
the hidden bits of NAME's defined symbols differ from IN), and is idempotent (a hidden IN gives
the same file). Standard library only. Exit 0, or 1 with a message on stderr.
"""
import argparse
import os
import struct
import sys

SHT_DYNSYM, SHT_DYNAMIC = 11, 6
SHT_GNU_VERDEF, SHT_GNU_VERSYM = 0x6FFFFFFD, 0x6FFFFFFF
DT_NULL, DT_VERSYM, DT_VERDEF, DT_VERDEFNUM = 0, 0x6FFFFFF0, 0x6FFFFFFC, 0x6FFFFFFD
PT_LOAD = 1
VER_FLG_BASE = 0x1
VERSYM_HIDDEN = 0x8000
SHN_UNDEF, SHN_ABS = 0, 0xFFF1


class Bad(Exception):
    pass


class Elf:
    def __init__(self, data, what):
        self.data, self.what = data, what
        if len(data) < 52 or data[:4] != b"\x7fELF":
            raise Bad("%s: not an ELF file" % what)
        cls, enc = data[4], data[5]
        if cls not in (1, 2) or enc not in (1, 2):
            raise Bad("%s: unknown ELF class %d or byte order %d" % (what, cls, enc))
        self.is64 = cls == 2
        self.e = "<" if enc == 1 else ">"
        if self.is64:
            (self.type, _m, _v, _entry, self.phoff, self.shoff, _f, _eh, self.phentsize, self.phnum,
             self.shentsize, self.shnum, self.shstrndx) = self.unpack("HHIQQQIHHHHHH", 16)
        else:
            (self.type, _m, _v, _entry, self.phoff, self.shoff, _f, _eh, self.phentsize, self.phnum,
             self.shentsize, self.shnum, self.shstrndx) = self.unpack("HHIIIIIHHHHHH", 16)
        if self.type != 3:  # ET_DYN
            raise Bad("%s: not a shared library (e_type %d)" % (what, self.type))
        self.sections = self.read_sections()

    def unpack(self, fmt, off):
        fmt = self.e + fmt
        if off < 0 or off + struct.calcsize(fmt) > len(self.data):
            raise Bad("%s: truncated (reading %d bytes at %#x)" % (self.what, struct.calcsize(fmt), off))
        return struct.unpack_from(fmt, self.data, off)

    def read_sections(self):
        fmt = "IIQQQQIIQQ" if self.is64 else "IIIIIIIIII"
        if self.shoff == 0 or self.shentsize != struct.calcsize(self.e + fmt):
            raise Bad("%s: no section headers, or of an unexpected size" % self.what)
        n = self.shnum
        if n == 0:  # extended numbering: the count is section 0's sh_size
            n = self.unpack(fmt, self.shoff)[5]
        secs = []
        for i in range(n):
            (name, typ, _flags, addr, off, size, link, _info, _align, entsize) = self.unpack(fmt, self.shoff + i * self.shentsize)
            if typ != 8 and off + size > len(self.data):  # 8: SHT_NOBITS
                raise Bad("%s: section %d runs past the end of the file" % (self.what, i))
            secs.append(dict(index=i, type=typ, addr=addr, off=off, size=size, link=link, entsize=entsize))
        return secs

    def one(self, typ, name):
        found = [s for s in self.sections if s["type"] == typ]
        if len(found) != 1:
            raise Bad("%s: %d %s sections (one expected)" % (self.what, len(found), name))
        return found[0]

    def cstr(self, strtab, off):
        if off >= strtab["size"]:
            raise Bad("%s: string offset %#x past its table" % (self.what, off))
        start = strtab["off"] + off
        end = self.data.find(b"\0", start, strtab["off"] + strtab["size"])
        if end < 0:
            raise Bad("%s: unterminated string at %#x" % (self.what, start))
        return self.data[start:end].decode("ascii", "replace")

    def dynamic(self):
        dyn = self.one(SHT_DYNAMIC, ".dynamic")
        fmt = "qQ" if self.is64 else "iI"
        size = struct.calcsize(self.e + fmt)
        tags = {}
        for off in range(dyn["off"], dyn["off"] + dyn["size"] - size + 1, size):
            tag, val = self.unpack(fmt, off)
            if tag == DT_NULL:
                break
            tags.setdefault(tag, val)
        return tags

    def file_offset(self, addr):
        """the file offset the load segments map addr to (what ld.so reads), or None"""
        fmt = "IIQQQQQQ" if self.is64 else "IIIIIIII"
        for i in range(self.phnum):
            f = self.unpack(fmt, self.phoff + i * self.phentsize)
            if self.is64:
                typ, _flags, off, vaddr, _pa, filesz, _memsz, _al = f
            else:
                typ, off, vaddr, _pa, filesz, _memsz, _flags, _al = f
            if typ == PT_LOAD and vaddr <= addr < vaddr + filesz:
                return off + (addr - vaddr)
        return None

    def versions(self):
        """{index: (name, flags)} of the version definitions (.gnu.version_d)"""
        vd = self.one(SHT_GNU_VERDEF, ".gnu.version_d")
        strtab = self.sections[vd["link"]]
        out, off, end = {}, vd["off"], vd["off"] + vd["size"]
        for _ in range(self.dynamic().get(DT_VERDEFNUM, 0) or 1 << 16):
            if off + 20 > end:
                raise Bad("%s: version definition past its section" % self.what)
            ver, flags, ndx, cnt, _hash, aux, nxt = self.unpack("HHHHIII", off)
            if ver != 1 or cnt < 1:
                raise Bad("%s: version definition of revision %d with %d names" % (self.what, ver, cnt))
            name_off, _anext = self.unpack("II", off + aux)
            ndx &= 0x7FFF
            if ndx in out:
                raise Bad("%s: version index %d defined twice" % (self.what, ndx))
            out[ndx] = (self.cstr(strtab, name_off), flags)
            if nxt == 0:
                break
            off += nxt
        return vd, out

    def layout(self):
        """(versym section, [(symbol index, versym, st_shndx)]) after checking the sections agree
        with the dynamic section and the load segments"""
        vs = self.one(SHT_GNU_VERSYM, ".gnu.version")
        ds = self.one(SHT_DYNSYM, ".dynsym")
        vd, _ = self.versions()
        tags = self.dynamic()
        for tag, sec, name in ((DT_VERSYM, vs, "DT_VERSYM"), (DT_VERDEF, vd, "DT_VERDEF")):
            if tags.get(tag) != sec["addr"]:
                raise Bad("%s: %s does not name the section's address" % (self.what, name))
            if self.file_offset(sec["addr"]) != sec["off"]:
                raise Bad("%s: the section of %s is not where the load segments map it" % (self.what, name))
        if vs["link"] != ds["index"]:
            raise Bad("%s: .gnu.version is not linked to .dynsym" % self.what)
        symsize = 24 if self.is64 else 16
        if ds["entsize"] != symsize or ds["size"] % symsize or vs["size"] != ds["size"] // symsize * 2:
            raise Bad("%s: .dynsym and .gnu.version disagree on the number of symbols" % self.what)
        syms = []
        for i in range(ds["size"] // symsize):
            shndx = self.unpack("H", ds["off"] + i * symsize + (6 if self.is64 else 14))[0]
            syms.append((i, self.unpack("H", vs["off"] + 2 * i)[0], shndx))
        return vs, syms


def version_index(elf, name):
    _, vers = elf.versions()
    hits = [ndx for ndx, (n, _f) in vers.items() if n == name]
    if len(hits) != 1:
        raise Bad("%s: %d version definitions named %s (one expected)" % (elf.what, len(hits), name))
    ndx = hits[0]
    if vers[ndx][1] & VER_FLG_BASE or ndx < 2:
        raise Bad("%s: %s is the base version (the SONAME's), not a version node" % (elf.what, name))
    if ndx < 3:
        raise Bad("%s: %s has version index %d: glibc gives an unversioned reference the definition "
                  "of index 2 even when hidden; define a version node before it in the version script "
                  "(stubs/stub_unversioned.map)" % (elf.what, name, ndx))
    return ndx


def hide(data, name, what):
    """(the new bytes, symbols hidden now, symbols hidden already)"""
    elf = Elf(data, what)
    ndx = version_index(elf, name)
    vs, syms = elf.layout()
    out = bytearray(data)
    now = already = code = 0
    for i, v, shndx in syms:
        if v & 0x7FFF != ndx:
            continue
        if shndx == SHN_UNDEF:
            raise Bad("%s: symbol %d is undefined but has version %s" % (what, i, name))
        code += shndx != SHN_ABS  # not the version's own name (an absolute symbol ld may add)
        if v & VERSYM_HIDDEN:
            already += 1
        else:
            struct.pack_into(elf.e + "H", out, vs["off"] + 2 * i, v | VERSYM_HIDDEN)
            now += 1
    if not code:
        raise Bad("%s: no function or variable defined in version %s" % (what, name))
    return bytes(out), now, already


def verify(old, new, name, what):
    """new differs from old only in the hidden bits of name's defined symbols, which are all set"""
    a, b = Elf(old, what), Elf(new, what)
    ndx = version_index(b, name)
    vs, syms_a = a.layout()
    _, syms_b = b.layout()
    if len(old) != len(new) or len(syms_a) != len(syms_b):
        raise Bad("%s: the output's size changed" % what)
    for (i, va, _d), (_j, vb, _e) in zip(syms_a, syms_b):
        want = va | VERSYM_HIDDEN if va & 0x7FFF == ndx else va
        if vb != want:
            raise Bad("%s: symbol %d's version is %#x, %#x expected" % (what, i, vb, want))
    lo, hi = vs["off"], vs["off"] + vs["size"]
    if old[:lo] != new[:lo] or old[hi:] != new[hi:]:
        raise Bad("%s: bytes outside .gnu.version changed" % what)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--version", default="CUDALOAD_STUB_0", help="the version node to hide")
    ap.add_argument("input")
    ap.add_argument("output")
    args = ap.parse_args(argv)
    try:
        with open(args.input, "rb") as f:
            data = f.read()
        new, now, already = hide(data, args.version, args.input)
        verify(data, new, args.version, args.input)
        tmp = args.output + ".tmp%d" % os.getpid()
        try:
            with open(tmp, "wb") as f:
                f.write(new)
            os.chmod(tmp, os.stat(args.input).st_mode & 0o7777)
            with open(tmp, "rb") as f:
                if f.read() != new:
                    raise Bad("%s: read back differs from what was written" % tmp)
            os.replace(tmp, args.output)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    except (Bad, OSError) as e:
        print("hide_versions: %s" % e, file=sys.stderr)
        return 1
    print("hide_versions: %s: %d symbols of %s hidden (%d were already)" % (args.output, now + already, args.version, already))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
