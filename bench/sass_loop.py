#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""sass_loop.py -- a developer tool, not part of the library: a static look at a GEMM kernel's
main loop in SASS, the loop (a backward branch) with the most FFMAs: its instructions, how
many are FFMAs, and the stall cycles the compiler encoded in their control bits (Volta and
later: bits 41-44 of each instruction's second word). It compares our kernels with cuBLAS's
without a GPU (docs/performance.md: the branchy fetch after each barrier showed here first).

usage: sass_loop.py [--list] [--lds] FILE.sass:KERNEL ...
  FILE.sass: `cuobjdump -sass` output (cuobjdump from the toolkit, or the pip wheel
  nvidia-cuda-cuobjdump), e.g. of `nvcc -cubin -O3 -std=c++17 -arch=sm_90 -Ikernels
  kernels/all.cu`, or of a cubin `cuobjdump -xelf all libcublasLt.so.13` extracted.
  --list: also print the loop's other instructions, with their stall counts, in order.
  --lds: also print each shared-memory read (LDS) of the loop and how far ahead of its first
  use it is issued: instructions, and the stall cycles encoded between them (around the loop's
  end where the use is in the next turn). ptxas issues our fragment reads a few tens of cycles
  before their FFMAs; cuBLAS's 128 x 128 SIMT kernel issues its own 84-239 ahead (median 185).
"""
import collections
import re
import sys


def load(path, kernel):
    """(address, text, control word) of each instruction of kernel in a cuobjdump listing."""
    lines = open(path).read().split("\n")
    out, on, i = [], False, 0
    while i < len(lines):
        line = lines[i]
        if "Function :" in line:
            on = line.split("Function :")[1].strip() == kernel
        elif on:
            m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;\s*/\* 0x[0-9a-f]+ \*/", line)
            if m and i + 1 < len(lines):
                hi = re.search(r"/\* (0x[0-9a-f]+) \*/", lines[i + 1])
                out.append((int(m.group(1), 16), m.group(2).strip(), int(hi.group(1), 16)))
                i += 2
                continue
        i += 1
    return out


def opcode(text):
    words = text.split()
    return (words[1] if words[0].startswith("@") else words[0]).split(".")[0]


def registers(text):
    """The general registers an instruction's operand text names (R7, R7.reuse, [R7+0x10])."""
    return [int(r) for r in re.findall(r"\bR(\d+)\b", text)]


def lds_distances(body):
    """(address, text, instructions, cycles) of each LDS of the loop: how far its first use
    follows it, walking on around the loop's end."""
    out = []
    for i, (addr, text, _) in enumerate(body):
        if opcode(text) != "LDS" or text.startswith("@!PT"):  # @!PT: never executed (padding)
            continue
        operands = text.split(None, 2 if text.startswith("@") else 1)[-1]
        dest = registers(operands.split(",")[0])
        width = 4 if ".128" in text else 2 if ".64" in text else 1
        written = {dest[0] + j for j in range(width)} if dest else set()
        cycles = 0
        for d in range(1, len(body) + 1):
            cycles += (body[(i + d - 1) % len(body)][2] >> 41) & 0xF
            nxt = body[(i + d) % len(body)][1]
            if "," in nxt and written & set(registers(nxt.split(",", 1)[1])):
                out.append((addr, text, d, cycles))
                break
    return out


def analyze(path, kernel, listing, lds=False):
    ins = load(path, kernel)
    if not ins:
        sys.exit(f"{path}: no kernel {kernel}")
    loops = []
    for addr, text, _ in ins:
        m = re.search(r"\bBRA\b.*?0x([0-9a-f]+)\s*$", text)
        if m and int(m.group(1), 16) <= addr:
            body = [x for x in ins if int(m.group(1), 16) <= x[0] <= addr]
            loops.append((sum(opcode(x[1]) == "FFMA" for x in body), body))
    if not loops:
        sys.exit(f"{kernel}: no loop")
    nffma, body = max(loops, key=lambda x: x[0])
    ops = collections.Counter(opcode(t) for _, t, _ in body)
    stalls = sum((hi >> 41) & 0xF for _, _, hi in body)
    print(f"{kernel}: loop 0x{body[0][0]:x}-0x{body[-1][0]:x}: {len(body)} instructions, {nffma} FFMA, "
          f"{stalls} stall cycles ({len(body) / max(nffma, 1):.3f} instructions and {stalls / max(nffma, 1):.3f} "
          f"cycles per FFMA)")
    print("   other:", ", ".join(f"{k} {v}" for k, v in ops.most_common() if k != "FFMA"))
    if lds:
        dist = lds_distances(body)
        if dist:
            cyc = sorted(c for _, _, _, c in dist)
            print(f"   LDS ahead of first use: {len(dist)} reads, cycles min {cyc[0]}, median {cyc[len(cyc) // 2]}, "
                  f"max {cyc[-1]}; under 60: {sum(c < 60 for c in cyc)}")
            for addr, text, d, c in dist:
                print(f"   {addr:5x}  {text:44s} {d:4d} instructions {c:4d} cycles")
    if listing:
        run = 0
        for addr, text, hi in body:
            if opcode(text) == "FFMA":
                run += 1
                continue
            if run:
                print(f"      ... {run} FFMA")
                run = 0
            print(f"   {addr:5x}  stall {(hi >> 41) & 0xF:2d}  {text}")
        if run:
            print(f"      ... {run} FFMA")


if __name__ == "__main__":
    args = sys.argv[1:]
    listing = "--list" in args
    lds = "--lds" in args
    specs = [a for a in args if a not in ("--list", "--lds")]
    if not specs:
        sys.exit(__doc__)
    for spec in specs:
        path, kernel = spec.split(":", 1)
        analyze(path, kernel, listing, lds)
