#!/usr/bin/python3
"""Seed corpora for the fuzzers (build/host/fuzz/seeds-<target>/): small but valid inputs, so
mutations start from deep inside each parser. Usage: make_seeds.py OUTDIR HVT VMLINUZ BTF_XZ"""
import lzma, gzip, os, struct, subprocess, sys, tempfile, zlib

out, hvt, vmlinuz, btf_xz = sys.argv[1:5]

def put(target, name, data):
    d = os.path.join(out, "seeds-" + target)
    os.makedirs(d, exist_ok=True)
    open(os.path.join(d, name), "wb").write(data)

def varint(v):
    b = bytearray()
    while v >= 0x80:
        b.append((v & 0x7f) | 0x80); v >>= 7
    b.append(v)
    return bytes(b)

def zig(v): return (v << 1) ^ (v >> 63) if v >= 0 else ((-v) << 1) - 1

def modes_records():
    """Version 3 records (version 4's RFLAGS field): MODE flow, instructions folded into RUN and REPEAT markers, a GAP, a
    MODE regs {rax, rflags} with register fields, and back to full."""
    r = bytearray()
    r += bytes([0x80 | 10]) + varint(1) + varint(0)                      # MODE flow
    r += bytes([2]) + varint(0) + bytes([2]) + varint(1)                 # rip 0 (code 0), 1 (code 1)
    r += bytes([1]) + varint(zig(-3))                                    # back to rip 0 (predicted)
    r += bytes([0x80 | 11, 1, 0])                                        # RUN 1: rip 1
    r += bytes([0x80 | 12, 0x2c, 0x01])                                  # REPEAT 300
    r += bytes([0x80 | 7]) + varint(0) + varint(0)                       # GAP (mode kept)
    r += bytes([0x80 | 10]) + varint(2) + varint(0x10001)                # MODE regs rax:rflags
    r += bytes([2 | 16 | 32]) + varint(2) + varint(1) + varint(zig(7)) + bytes([0x40]) + varint(zig(0x246))
    r += bytes([0x80 | 10]) + varint(0) + varint(0x1ffff)                # MODE full
    r += bytes([2 | 16]) + varint(3) + varint(0b1000) + varint(zig(9))   # code 3, rbx
    return bytes(r)

def v4_records():
    """Version 4's forms (hvt_trace_format.h): U32 short records (one with bit 31 set), packed
    and wide RFLAGS fields, REPEAT in FULL after a record that moved several registers and a
    REPEAT after it, and REPEAT in REGS. Code ids 0 and 1 are 1 and 2 bytes (fuzz_trace.c)."""
    r = bytearray()
    r += bytes([2]) + varint(0) + bytes([2]) + varint(1)                 # rip 0 (code 0), 1 (code 1)
    r += bytes([1]) + varint(zig(-3))                                    # back to rip 0 (predicted)
    r += bytes([0x40 | 0x20 | 0]) + struct.pack("<I", 0x89abcdef)        # rip 1: short U32 rax
    r += bytes([1]) + varint(zig(-3))
    r += bytes([0x40 | 0x20 | 0x10 | 9]) + struct.pack("<I", 0x80000001) + bytes([0x09])  # U32 r9, CF|ZF
    r += bytes([1]) + varint(zig(-3))
    r += bytes([0x40 | 0x10 | 2]) + varint(zig(-3)) + bytes([0x40]) + varint(zig(-0x200))  # rdx, wide
    r += bytes([1 | 16 | 32]) + varint(zig(-3)) + varint(0xc2)           # rip 0: rcx rsi rdi, rflags
    r += varint(zig(-1)) + varint(zig(1)) + varint(zig(1)) + bytes([0x3f])
    r += bytes([0x80 | 12, 3, 0]) + bytes([0x80 | 12, 1, 0])             # REPEAT 3, REPEAT 1
    r += bytes([0x80 | 10]) + varint(2) + varint(0x82)                   # MODE regs rcx:rdi
    r += bytes([2 | 16]) + varint(0) + varint(0x82) + varint(zig(5)) + varint(zig(0x100))
    r += bytes([0x80 | 12, 2, 0])                                        # REPEAT 2
    return bytes(r)

# --- trace: a real small trace (whole-file mode) and hand-made records (record mode)
with tempfile.TemporaryDirectory() as t:
    subprocess.run([hvt, "gen", "--seed", "3", vmlinuz, t + "/s.hvt"], check=True, stderr=subprocess.DEVNULL)
    put("trace", "small.hvt", b"\x00" + open(t + "/s.hvt", "rb").read())
rec = bytearray()
rec += bytes([0x80 | 5]) + varint(0)                                  # START
rec += bytes([0x80 | 4]) + varint(42) + varint(42) + bytes([4]) + b"bash" + varint(0x1000)  # SWITCH
rec += bytes([1 | 2 | 4 | 16]) + varint(zig(0x401000)) + varint(0) + varint(0x1000) + varint(0b10001) + varint(zig(5)) + varint(zig(-3))
rec += bytes([2]) + varint(1)                                         # sequential, explicit code 1
rec += bytes([0x80 | 2]) + varint(39)                                 # SYSCALL
rec += bytes([1 | 2 | 8]) + varint(zig(-0x400000)) + varint(2) + varint(7)
rec += bytes([0x80 | 1, 14, 3]) + varint(7)                           # EVENT #PF err 6
rec += bytes([0x80 | 7]) + varint(3) + varint(100)                    # GAP
rec += bytes([1 | 2]) + varint(zig(0x1234)) + varint(3)
rec += bytes([0]) * 2                                                 # predicted continuation (invalid: no slot)
rec += bytes([0x80 | 8]) + varint(123456) + bytes([0x80 | 3]) + varint(48) + varint(0x59c) + bytes([0x80 | 6]) + varint(4)
put("trace", "records.bin", b"\x01" + bytes(rec))
put("trace", "modes.bin", b"\x01" + modes_records())
put("trace", "v4.bin", b"\x01" + v4_records())

# --- kallsyms: a synthetic 6.1-layout table (with and without seqs_of_names)
def align8(b):
    return b + b"\0" * (-len(b) % 8)

def kallsyms_blob(names, seqs):
    base = 0xffffffff81000000
    n = len(names)
    tokens = [bytes([i]) if 32 <= i < 127 else b"~" + bytes([65 + i % 26, 97 + i // 26]) for i in range(256)]
    table = b"".join(t + b"\0" for t in tokens)
    offs, o = [], 0
    for t in tokens:
        offs.append(o); o += len(t) + 1
    enc, markers = bytearray(), []
    for i, (typ, nm) in enumerate(names):
        if i % 256 == 0: markers.append(len(enc))
        s = (typ + nm).encode()
        enc += bytes([len(s)]) + s
    blob = bytearray()
    blob += align8(b"".join(struct.pack("<i", -1 - 0x10 * i) for i in range(n)))   # offsets
    blob += struct.pack("<Q", base)                                              # relative_base
    blob += align8(struct.pack("<I", n))                                         # num_syms
    blob += align8(bytes(enc))                                                   # names
    blob += align8(b"".join(struct.pack("<I", m) for m in markers))              # markers
    if seqs: blob += align8(b"".join(struct.pack(">I", i)[1:] for i in range(n)))
    blob += align8(table)
    blob += b"".join(struct.pack("<H", x) for x in offs)
    return b"\0" * 64 + bytes(blob) + b"\0" * 64

names = [("T", "_text")] + [("t" if i % 3 else "T", "func_%d" % i) for i in range(600)] + [("D", "entry_SYSCALL_64")]
put("ksym", "plain.bin", kallsyms_blob(names, False))
put("ksym", "seqs.bin", kallsyms_blob(names, True))

# --- BTF: the real blob cut to its first types and strings, header adjusted
real = lzma.open(btf_xz).read()
hl, to, tl, so, sl = struct.unpack_from("<IIIII", real, 4)
types = real[hl + to: hl + to + tl]
sizes = {1: 4, 14: 4, 17: 4, 3: 12}
p = 0
for _ in range(3000):
    info = struct.unpack_from("<I", types, p + 4)[0]
    kind, vlen = (info >> 24) & 0x1f, info & 0xffff
    extra = sizes.get(kind, 0)
    if kind in (4, 5, 15, 19): extra = 12 * vlen
    if kind in (6, 13): extra = 8 * vlen
    p += 12 + extra
strs = real[hl + so: hl + so + 65536]
strs = strs[:strs.rfind(b"\0") + 1]
small = struct.pack("<HBBIIIII", 0xeb9f, 1, 0, 24, 0, p, p, len(strs)) + types[:p] + strs
put("btf", "cut.btf", small)

# --- kimg: tiny bzImages (each compression) around a tiny ELF holding the synthetic tables
def tiny_elf():
    payload = kallsyms_blob(names[:300], True) + small
    note = struct.pack("<III", 4, 20, 3) + b"GNU\0" + bytes(range(20))
    ehdr_size, phdr_size = 64, 56
    data_off = ehdr_size + 2 * phdr_size
    note_off = data_off + len(payload)
    eh = b"\x7fELF" + bytes([2, 1, 1]) + b"\0" * 9 + struct.pack("<HHIQQQIHHHHHH", 2, 62, 1, 0xffffffff81000000,
                                                                  ehdr_size, 0, 0, ehdr_size, phdr_size, 2, 64, 0, 0)
    ph1 = struct.pack("<IIQQQQQQ", 1, 5, data_off, 0xffffffff81000000, 0, len(payload), len(payload), 0x1000)
    ph2 = struct.pack("<IIQQQQQQ", 4, 4, note_off, 0, 0, len(note), len(note), 4)
    return eh + ph1 + ph2 + payload + note

def bzimage(comp):
    setup_sects = 1
    hdr = bytearray(512 * (setup_sects + 1))
    hdr[0x1f1] = setup_sects
    hdr[0x202:0x206] = b"HdrS"
    struct.pack_into("<H", hdr, 0x206, 0x020f)
    payload = comp + struct.pack("<I", len(elf))
    struct.pack_into("<II", hdr, 0x248, 0, len(payload))
    body = bytes(hdr) + payload
    body += b"\0" * (-(len(body) + 4 - len(hdr)) % 16)
    total = len(body) + 4
    struct.pack_into("<I", hdr, 0x1f4, (total - len(hdr)) // 16)
    body = bytes(hdr) + body[len(hdr):]
    return body + struct.pack("<I", ~zlib.crc32(body) & 0xffffffff)

elf = tiny_elf()
put("kimg", "elf.bin", elf)
put("kimg", "gzip.bz", bzimage(gzip.compress(elf)))
put("kimg", "xz.bz", bzimage(lzma.compress(elf, format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC32)))
with tempfile.TemporaryDirectory() as t:
    open(t + "/e", "wb").write(elf)
    subprocess.run(["lz4", "-q", "-l", "-f", t + "/e", t + "/e.lz4"], check=True)
    subprocess.run(["zstd", "-q", "-f", t + "/e", "-o", t + "/e.zst"], check=True)
    put("kimg", "lz4.bz", bzimage(open(t + "/e.lz4", "rb").read()))
    put("kimg", "zstd.bz", bzimage(open(t + "/e.zst", "rb").read()))
