#!/usr/bin/env python3
"""Writes a stand-in shared library: an ELF64 x86-64 shared object or a PE32+ x64 DLL that names
itself (DT_SONAME / the export directory's name), lists what it needs (DT_NEEDED / the import
directory) and may name a cuDNN release in its read-only data as NVIDIA's libcudnn_graph does
("cudnn_version_9_1_0_70_"). It holds no code: stackpin reads it (stage, status, inspect and
doctor judge a cuDNN tree by what its files say they are); the ELF one loads and exports nothing.

  scripts/stand-in-library.py OUT SONAME [--pe] [--needs NAME]... [--release VERSION] [--size BYTES]
"""
import argparse
import struct
import sys


def align(v, a):
    return (v + a - 1) // a * a


def elf(soname, needs, rodata, size):
    dynstr = b"\0"
    offsets = []
    for name in needs + [soname]:
        offsets.append(len(dynstr))
        dynstr += name.encode() + b"\0"
    # one null symbol and a one-bucket hash table: what the dynamic loader needs to load it
    dynsym_off = 64 + 2 * 56
    hash_off = dynsym_off + 24
    dynstr_off = hash_off + 16
    dyn_off = align(dynstr_off + len(dynstr), 8)
    dyn = [(1, o) for o in offsets[:-1]] + [(14, offsets[-1]), (4, hash_off), (5, dynstr_off), (6, dynsym_off), (10, len(dynstr)),
                                              (11, 24), (0, 0)]
    dyn_size = len(dyn) * 16
    shstr = b"\0.dynstr\0.dynamic\0.rodata\0.shstrtab\0.text\0"
    shstr_off = dyn_off + dyn_size
    sh_off = align(shstr_off + len(shstr), 8)
    rodata_off = sh_off + 6 * 64
    rodata_size = len(rodata) + 1
    # the rest of --size as .text, last, as a library's code takes most of its bytes
    text_off = rodata_off + rodata_size
    text_size = max(0, size - text_off)
    total = text_off + text_size
    b = bytearray(total)
    b[0:16] = b"\x7fELF\x02\x01\x01" + b"\0" * 9
    struct.pack_into("<HHIQQQIHHHHHH", b, 16, 3, 62, 1, 0, 64, sh_off, 0, 64, 56, 2, 64, 6, 4)
    for i, (kind, off, n) in enumerate(((1, 0, total), (2, dyn_off, dyn_size))):
        struct.pack_into("<IIQQQQQQ", b, 64 + i * 56, kind, 4, off, off, off, n, n, 8)
    struct.pack_into("<IIII", b, hash_off, 1, 1, 0, 0)
    b[dynstr_off:dynstr_off + len(dynstr)] = dynstr
    for i, (tag, val) in enumerate(dyn):
        struct.pack_into("<QQ", b, dyn_off + i * 16, tag, val)
    b[shstr_off:shstr_off + len(shstr)] = shstr
    sections = [(1, 3, dynstr_off, len(dynstr), 0, 0), (9, 6, dyn_off, dyn_size, 1, 16), (18, 1, rodata_off, rodata_size, 0, 0),
                (26, 3, shstr_off, len(shstr), 0, 0), (36, 1, text_off, text_size, 0, 0)]
    for i, (name, kind, off, n, link, entsize) in enumerate(sections, start=1):
        addr = 0 if i == 4 else off
        flags = 0 if i == 4 else 2
        struct.pack_into("<IIQQQQIIQQ", b, sh_off + i * 64, name, kind, flags, addr, off, n, link, 0, 1, entsize)
    b[rodata_off:rodata_off + len(rodata)] = rodata
    return bytes(b)


def pe(dll_name, needs, rodata, size):
    raw, rva = 0x200, 0x1000
    sec = bytearray(40 + (len(needs) + 1) * 20)

    def add(text):
        off = len(sec)
        sec.extend(text.encode() + b"\0")
        return rva + off

    struct.pack_into("<I", sec, 12, add(dll_name))
    for i, name in enumerate(needs):
        struct.pack_into("<I", sec, 40 + i * 20 + 12, add(name))
    sec.extend(b"\0" * (align(len(sec), 16) - len(sec)))
    sec.extend(rodata + b"\0")
    if raw + len(sec) < size:
        sec.extend(b"\0" * (size - raw - len(sec)))
    virtual_size = len(sec)
    sec.extend(b"\0" * (align(len(sec), 0x200) - len(sec)))
    h = bytearray(raw)
    h[0:2] = b"MZ"
    struct.pack_into("<I", h, 0x3C, 0x40)
    h[0x40:0x44] = b"PE\0\0"
    struct.pack_into("<HHIIIHH", h, 0x44, 0x8664, 1, 0, 0, 0, 240, 0x2022)
    opt = 0x58
    struct.pack_into("<H", h, opt, 0x20B)
    struct.pack_into("<QII", h, opt + 24, 0x180000000, 0x1000, 0x200)
    struct.pack_into("<HH", h, opt + 40, 6, 0)
    struct.pack_into("<HH", h, opt + 48, 6, 0)
    struct.pack_into("<II", h, opt + 56, rva + align(virtual_size, 0x1000), raw)
    struct.pack_into("<H", h, opt + 68, 3)
    struct.pack_into("<I", h, opt + 108, 16)
    struct.pack_into("<II", h, opt + 112, rva, 40)
    if needs:
        struct.pack_into("<II", h, opt + 120, rva + 40, (len(needs) + 1) * 20)
    sh = opt + 240
    h[sh:sh + 6] = b".rdata"
    struct.pack_into("<IIII", h, sh + 8, virtual_size, rva, len(sec), raw)
    struct.pack_into("<I", h, sh + 36, 0x40000040)
    return bytes(h) + bytes(sec)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("soname")
    p.add_argument("--pe", action="store_true", help="a Windows DLL instead of an ELF shared object")
    p.add_argument("--needs", action="append", default=[], help="a library it needs (repeatable)")
    p.add_argument("--release", help="the cuDNN release its read-only data names (9.1.0.70)")
    p.add_argument("--size", type=int, default=0, help="at least this many bytes")
    a = p.parse_args()
    rodata = b""
    if a.release:
        parts = a.release.split(".")
        if len(parts) not in (3, 4) or not all(x.isdigit() for x in parts):
            sys.exit("stand-in-library.py: --release takes three or four numbers (9.1.0.70), not " + a.release)
        rodata = ("cudnn_version_" + "_".join(parts) + "_").encode()
    data = (pe if a.pe else elf)(a.soname, a.needs, rodata, a.size)
    with open(a.out, "wb") as f:
        f.write(data)


if __name__ == "__main__":
    main()
