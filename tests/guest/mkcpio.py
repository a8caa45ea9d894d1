#!/usr/bin/env python3
"""mkcpio.py - write a cpio "newc" archive (the initramfs format, Linux
Documentation/driver-api/early-userspace/buffer-format.rst) from a list of entries, without
root (device nodes included) and reproducibly (mtime 0, uid/gid 0).

usage: mkcpio.py OUT ENTRY...
  dir:PATH:MODE            a directory          (MODE in octal, e.g. 755)
  file:PATH:MODE:SRC       a regular file copied from SRC
  sym:PATH:TARGET          a symbolic link
  chr:PATH:MODE:MAJ:MIN    a character device node
"""
import stat, sys

def entry(out, ino, name, mode, data=b"", rdev=(0, 0), nlink=1):
    name_b = name.encode() + b"\0"
    hdr = "070701" + "".join("%08X" % v for v in (
        ino, mode, 0, 0, nlink, 0, len(data), 0, 0, rdev[0], rdev[1], len(name_b), 0))
    out.write(hdr.encode() + name_b)
    out.write(b"\0" * ((4 - (110 + len(name_b)) % 4) % 4))   # header+name padded to 4
    out.write(data)
    out.write(b"\0" * ((4 - len(data) % 4) % 4))

def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    with open(sys.argv[1], "wb") as out:
        ino = 1
        for spec in sys.argv[2:]:
            kind, rest = spec.split(":", 1)
            if kind == "dir":
                path, mode = rest.split(":")
                entry(out, ino, path, stat.S_IFDIR | int(mode, 8), nlink=2)
            elif kind == "file":
                path, mode, src = rest.split(":", 2)
                with open(src, "rb") as f:
                    entry(out, ino, path, stat.S_IFREG | int(mode, 8), f.read())
            elif kind == "sym":
                path, target = rest.split(":", 1)
                entry(out, ino, path, stat.S_IFLNK | 0o777, target.encode())
            elif kind == "chr":
                path, mode, maj, mnr = rest.split(":")
                entry(out, ino, path, stat.S_IFCHR | int(mode, 8), rdev=(int(maj), int(mnr)))
            else:
                sys.exit("mkcpio: unknown entry kind: " + spec)
            ino += 1
        entry(out, 0, "TRAILER!!!", 0)

if __name__ == "__main__":
    main()
