#!/usr/bin/env python3
"""measured.py RESULTS_DIR OUT.md - the one table of measured numbers (docs/measured.md).

Each RESULTS_DIR/NAME.txt is written by bench/record.sh after `make bench-NAME`: a header
line (# date=... commit=... cpu=... cores=...) and the bench's key=value lines. Figures in
the README and docs/ point here instead of copying numbers that then drift."""
import os, re, sys

KNOWN = {
    "probe": "make bench-probe: VM exits and hypervisor instructions per probe firing and per D firing, beside the guest's own kprobe (Bochs, 1 CPU: the TSC counts instructions)",
    "step": "make bench-step: hypervisor instructions per traced instruction, bytes per instruction, timer ratio",
    "net": "make bench-net: the stream through Bochs's e1000 with no tags, tags, encryption; Linux's own e1000 beside it",
    "boot": "make bench-boot: the boot to init with and without the hypervisor",
    "analyze": "make bench-analyze: decode, symbolize and nest rate beside capstone alone",
}

def main():
    rdir, out = sys.argv[1], sys.argv[2]
    lines = ["# Measured numbers", "",
             "Written by `tools/measured.py` from `bench/results/*.txt`, which each `make bench-*`",
             "rewrites when it runs (`bench/record.sh`). Do not edit by hand; cite this page.", ""]
    for f in sorted(os.listdir(rdir)):
        if not f.endswith(".txt"):
            continue
        name = f[:-4]
        text = open(os.path.join(rdir, f)).read().splitlines()
        head = text[0][1:].strip() if text and text[0].startswith("#") else ""
        lines += [f"## {name}", "", KNOWN.get(name, f"make bench-{name}") + ".", "",
                  f"Recorded: {head}" if head else "Recorded: (no header)", "",
                  "| key | value |", "|---|---|"]
        for l in text[1:]:
            for k, v in re.findall(r"([A-Za-z0-9_]+)=(\S+)", l):
                lines.append(f"| `{k}` | {v} |")
        lines.append("")
    open(out, "w").write("\n".join(lines))

if __name__ == "__main__":
    main()
