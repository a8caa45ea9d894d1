#!/usr/bin/python3
"""Rebuild a bzImage with its payload recompressed in another format, the way the kernel's
build does it (arch/x86/boot/compressed: the payload is followed by its le32 decompressed size,
except gzip whose own trailer ends with it; arch/x86/boot/tools/build.c: syssize and a final
CRC32). Used to test the gzip and zstd paths on a real kernel.
Usage: recompress.py IN_BZIMAGE FORMAT(gzip|zstd) OUT"""
import gzip, struct, subprocess, sys, zlib

src, fmt, out = sys.argv[1:4]
d = open(src, "rb").read()
setup_sects = d[0x1f1] or 4
pm = (setup_sects + 1) * 512
poff = pm + struct.unpack_from("<I", d, 0x248)[0]
plen = struct.unpack_from("<I", d, 0x24c)[0]
payload = d[poff:poff + plen]
# the original is LZ4 legacy (Debian cloud) or xz (generic); let the CLI tools undo it
tool = {b"\x02\x21\x4c\x18": ["lz4", "-dc"], b"\xfd7zXZ": ["xz", "-dc", "--single-stream"]}
cmd = next(v for k, v in tool.items() if payload.startswith(k))
elf = subprocess.run(cmd, input=payload, stdout=subprocess.PIPE, check=False).stdout
assert elf[:4] == b"\x7fELF" and len(elf) == struct.unpack_from("<I", payload, plen - 4)[0], "bad original payload"
if fmt == "gzip":
    new = gzip.compress(elf, compresslevel=1)            # ISIZE trailer = size mod 2^32
else:
    new = subprocess.run(["zstd", "-q", "-3", "-c"], input=elf, stdout=subprocess.PIPE, check=True).stdout
    new += struct.pack("<I", len(elf))
img = bytearray(d[:poff]) + new
struct.pack_into("<I", img, 0x24c, len(new))
img += b"\0" * (-(len(img) + 4 - pm) % 16)
struct.pack_into("<I", img, 0x1f4, (len(img) + 4 - pm) // 16)
img += struct.pack("<I", ~zlib.crc32(bytes(img)) & 0xffffffff)
open(out, "wb").write(img)
