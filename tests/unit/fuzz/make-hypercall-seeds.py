#!/usr/bin/env python3
"""make-hypercall-seeds.py OUTDIR [D_IMAGE...] - seed inputs for fuzz_hypercall (input format:
the header of tests/unit/fuzz/fuzz_hypercall.c): every hypercall from kernel mode, from a root
and a non-root process, without the magic; MARK with a failed link; PROBE_ARM_SPECS with a spec
array written into guest memory first, PROBE_LOAD_D with each D program image given (the D
tests' programs, tests/d/programs/*.d, compiled by hc_dimages) written the same way; the CMD
agent's protocol in order; timer exits and paging off. The ABI's numbers come from the C
headers through build/gen/hvt_abi.py (tools/gen.mk; HVT_GEN_DIR says where it is)."""
import os, struct, sys

sys.path.insert(0, os.environ.get("HVT_GEN_DIR") or
                os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../build/gen"))
import hvt_abi as abi

VERSION, HV_RANGE, MARK, PROBE, CMD = abi.HVT_HC_VERSION, abi.HVT_HC_HV_RANGE, abi.HVT_HC_MARK, abi.HVT_HC_PROBE, abi.HVT_HC_CMD
DISARM_LOG, ARM_CFG, STATS = abi.HVT_HC_PROBE_DISARM_LOG, abi.HVT_HC_PROBE_ARM_CFG, abi.HVT_HC_PROBE_STATS
ARM_SPECS, DISARM, LOAD_D = abi.HVT_HC_PROBE_ARM_SPECS, abi.HVT_HC_PROBE_DISARM, abi.HVT_HC_PROBE_LOAD_D
NOWAIT = abi.HVT_PROBE_NOWAIT % 2**64
ENTRY, RETURN, ADDR, PROFILE = abi.HVT_PROBE_KIND_ENTRY, abi.HVT_PROBE_KIND_RETURN, abi.HVT_PROBE_KIND_ADDR, abi.HVT_PROBE_KIND_PROFILE
KERNEL, USER, DEFAULT = 0, 3, 1            # mode byte: CPL 0, CPL 3, the input's default
USER_DATA, DMAP_DATA, TEXT, PERCPU = 0, 1, 2, 3
TEXT_VA = 0xffffffff81000000

def hc(func, mode=DEFAULT, rbx=0, rcx=0, rdx=0, cpu1=False, rax=None):
    """A hypercall step; registers: int (8 raw bytes) or ('addr', base, offset)."""
    out, shape, tail = bytearray([0]), 0, b""
    f = func & 7 if rax is None else 0x80
    out += bytes([f, mode | (4 if cpu1 else 0)])
    regs = b""
    for i, r in enumerate((rbx, rcx, rdx)):
        if isinstance(r, tuple):
            shape |= 2 << (2 * i)
            regs += bytes([r[1]]) + struct.pack("<H", r[2])
        else:
            shape |= 3 << (2 * i)
            regs += struct.pack("<Q", r & (2**64 - 1))
    out += bytes([shape])
    if rax is not None:
        out += struct.pack("<Q", rax)
    return bytes(out) + regs

def poke(off, data):
    """Write guest memory at DATA + off, 255 bytes per step."""
    out = b""
    for i in range(0, len(data), 255):
        chunk = data[i:i + 255]
        out += bytes([1]) + struct.pack("<I", off + i)[:3] + bytes([len(chunk)]) + chunk
    return out

TIMER, PAGING = bytes([2]), bytes([3])
spec = lambda pid, kind, lo, hi: struct.pack("<IIQQ", pid, kind, lo, hi)
specs = spec(1, ENTRY, TEXT_VA + 0x100, 0) + spec(2, ADDR, TEXT_VA + 0x204, 0) + \
        spec(3, RETURN, TEXT_VA + 0x300, TEXT_VA + 0x340) + spec(4, PROFILE, 20000, 0) + \
        spec(5, ENTRY | abi.HVT_PROBE_F_LINKTIME, TEXT_VA + 0x400, 0)
# static tracepoint specs (include/hvt_hypercall.h): a good pair (sched_switch's recipe on 6.1:
# [rbp-0x44]:4 r13 r12 [rbp-0x48]:4, and a per-CPU load), a pair whose recipe is malformed (a
# NONE rule with its sign bit), a head whose record has another id, and a head the request ends with
SDT, ARGS = ADDR | abi.HVT_PROBE_F_SDT, abi.HVT_PROBE_KIND_ARGS
rule = lambda op, reg, size, sign, disp: op | reg << 4 | size << 8 | sign << 10 | (disp & 0x7ffffff) << 11
M64 = (1 << 64) - 1
bits = sum(r << (38 * i) for i, r in enumerate([rule(3, 5, 2, 0, -0x44), rule(1, 13, 3, 0, 0), rule(1, 12, 3, 0, 0),
                                                  rule(3, 5, 2, 0, -0x48), rule(8, 0, 3, 0, 0x35000)]))
sdt_specs = spec(7, SDT, TEXT_VA + 0x500, bits >> 128) + spec(7, ARGS, bits & M64, (bits >> 64) & M64) + \
            spec(8, SDT, TEXT_VA + 0x520, 0) + spec(8, ARGS, 1 << 10, 0) + \
            spec(9, SDT, TEXT_VA + 0x540, 0) + spec(10, ARGS, 0, 0) + spec(11, SDT, TEXT_VA + 0x560, 0)

# module probes (include/hvt_hypercall.h): a module spec before any layout (refused), the layout
# (the pinned 6.1's offsets) with the list head in the text (the walk reads whatever is there,
# bounded), the load and unload hooks, a module spec, a layout whose fields overlap
MODINFO, MODHOOK, MODULE = abi.HVT_PROBE_KIND_MODINFO, abi.HVT_PROBE_KIND_MODHOOK, abi.HVT_PROBE_F_MODULE
layout = 0x8 | 0x18 << 12 | 0x220 << 24 | 0x140 << 36 | 0x14c << 48
mod_specs = spec(20, ENTRY | MODULE, 0x793019136f2343, 0xc4f56a1184734fcd) + spec(0, MODINFO, TEXT_VA + 0x800, layout) + \
            spec(0, MODHOOK, TEXT_VA + 0x100, abi.HVT_MODHOOK_LOAD) + spec(0, MODHOOK, TEXT_VA + 0x140, abi.HVT_MODHOOK_FREE) + \
            spec(21, ENTRY | MODULE | abi.HVT_PROBE_F_RECORD, 0x793019136f2343, 0xc4f56a1184734fcd) + \
            spec(0, MODINFO, TEXT_VA + 0x800, 0x8 | 0x8 << 12)

# module return and tracepoint-site specs: the layout again, a return spec, a tracepoint site
# (head, words 0-1, word 2 and the offset 0x31), a site whose second record lacks F_MODULE, a
# site whose offset is past 2^32, and a head the request ends with after one record
mod_kinds = spec(0, MODINFO, TEXT_VA + 0x800, layout) + \
            spec(22, RETURN | MODULE | abi.HVT_PROBE_F_RECORD, 0x793019136f2343, 0xc4f56a1184734fcd) + \
            spec(23, SDT | MODULE, 0x793019136f2343, 0xc4f56a1184734fcd) + spec(23, ARGS, bits & M64, (bits >> 64) & M64) + \
            spec(23, ARGS | MODULE, bits >> 128, 0x31) + \
            spec(24, SDT | MODULE, 0x793019136f2343, 0xc4f56a1184734fcd) + spec(24, ARGS, 0, 0) + spec(24, ARGS, 0, 0x31) + \
            spec(25, SDT | MODULE, 0x793019136f2343, 0xc4f56a1184734fcd) + spec(25, ARGS, 0, 0) + \
            spec(25, ARGS | MODULE, 0, 1 << 33) + \
            spec(26, SDT | MODULE, 0x793019136f2343, 0xc4f56a1184734fcd) + spec(26, ARGS, 0, 0)

seeds = {
    "version-user": (1, hc(VERSION, USER)),
    "version-kernel": (0, hc(VERSION, KERNEL) + hc(VERSION, KERNEL, cpu1=True)),
    "hv-range": (1, hc(HV_RANGE, KERNEL) + hc(HV_RANGE, USER)),
    "no-magic": (0, hc(0, KERNEL, rax=0x1234) + hc(0, USER, rax=0x4856545300000002)),
    "unknown-funcs": (0, hc(CMD + 1, KERNEL) + hc(CMD + 2, KERNEL) + hc(7, USER)),
    "mark-kernel": (0, hc(MARK, KERNEL, rbx=1) + TIMER + hc(MARK, KERNEL, rbx=0) + TIMER + hc(MARK, KERNEL, rbx=7)),
    "mark-root": (3, hc(MARK, USER, rbx=1) + hc(MARK, USER, rbx=0)),
    "mark-nonroot": (1, hc(MARK, USER, rbx=1)),
    "mark-link-failed": (4, hc(MARK, KERNEL, rbx=1)),
    "probe-boot": (0, hc(PROBE, KERNEL, rbx=ARM_CFG) + hc(PROBE, KERNEL, rbx=STATS) + TIMER + hc(PROBE, KERNEL, rbx=DISARM_LOG)),
    "probe-boot-mask": (3, hc(PROBE, USER, rbx=ARM_CFG, rcx=2) + hc(PROBE, USER, rbx=DISARM)),
    "probe-specs": (0, poke(0, specs) + hc(PROBE, KERNEL, rbx=ARM_SPECS, rcx=("addr", USER_DATA, 0), rdx=5) +
                    TIMER + hc(PROBE, KERNEL, rbx=STATS) + hc(PROBE, KERNEL, rbx=DISARM_LOG)),
    "probe-specs-nowait": (3, poke(0, specs) + hc(PROBE, USER, rbx=ARM_SPECS, rcx=("addr", DMAP_DATA, 0), rdx=5 | NOWAIT)),
    "probe-specs-sdt": (0, poke(0, sdt_specs) + hc(PROBE, KERNEL, rbx=ARM_SPECS, rcx=("addr", USER_DATA, 0), rdx=2) +
                        TIMER + hc(PROBE, KERNEL, rbx=STATS) +
                        hc(PROBE, KERNEL, rbx=ARM_SPECS, rcx=("addr", USER_DATA, 48), rdx=2) +
                        hc(PROBE, KERNEL, rbx=ARM_SPECS, rcx=("addr", USER_DATA, 96), rdx=2) +
                        hc(PROBE, KERNEL, rbx=ARM_SPECS, rcx=("addr", USER_DATA, 144), rdx=1) +
                        hc(PROBE, KERNEL, rbx=DISARM_LOG)),
    "probe-specs-module": (0, poke(0, mod_specs) + hc(PROBE, KERNEL, rbx=ARM_SPECS, rcx=("addr", USER_DATA, 0), rdx=1) +
                           hc(PROBE, KERNEL, rbx=ARM_SPECS, rcx=("addr", USER_DATA, 24), rdx=4) + TIMER +
                           hc(PROBE, KERNEL, rbx=ARM_SPECS, rcx=("addr", USER_DATA, 120), rdx=1) +
                           hc(PROBE, KERNEL, rbx=STATS) + hc(PROBE, KERNEL, rbx=DISARM_LOG)),
    "probe-specs-module-kinds": (0, poke(0, mod_kinds) + hc(PROBE, KERNEL, rbx=ARM_SPECS, rcx=("addr", USER_DATA, 0), rdx=5) +
                                 hc(PROBE, KERNEL, rbx=ARM_SPECS, rcx=("addr", USER_DATA, 120), rdx=3) +
                                 hc(PROBE, KERNEL, rbx=ARM_SPECS, rcx=("addr", USER_DATA, 192), rdx=3) +
                                 hc(PROBE, KERNEL, rbx=ARM_SPECS, rcx=("addr", USER_DATA, 264), rdx=2) + TIMER +
                                 hc(PROBE, KERNEL, rbx=STATS) + hc(PROBE, KERNEL, rbx=DISARM_LOG)),
    "probe-specs-toomany": (0, hc(PROBE, KERNEL, rbx=ARM_SPECS, rcx=("addr", USER_DATA, 0), rdx=abi.HVT_PROBE_SPECS_MAX + 1)),
    "probe-specs-paging-off": (0, poke(0, specs) + PAGING + hc(PROBE, KERNEL, rbx=ARM_SPECS, rcx=0x800000, rdx=5) + PAGING),
    "probe-specs-unmapped": (0, hc(PROBE, KERNEL, rbx=ARM_SPECS, rcx=0x7fff0000, rdx=3)),
    "cmd-agent": (3, hc(CMD, USER, rbx=abi.HVT_HC_CMD_TAKE) + hc(CMD, USER, rbx=abi.HVT_HC_CMD_READ, rcx=0, rdx=0) +
                  hc(CMD, USER, rbx=abi.HVT_HC_CMD_STARTED, rcx=0, rdx=42) +
                  hc(CMD, USER, rbx=abi.HVT_HC_CMD_MAY_RUN, rcx=0) + hc(CMD, USER, rbx=abi.HVT_HC_CMD_EXITED, rcx=0, rdx=0)),
    "cred-rewrite": (1, poke(0x120000 + 0x14, struct.pack("<I", 0)) + hc(MARK, USER, rbx=1) +
                     poke(0x110000 + 0xa00, struct.pack("<Q", 0xdead0000)) + hc(PROBE, USER, rbx=STATS)),
    "percpu-garbage": (1, poke(0x100000 + 0x22040, struct.pack("<Q", 0xffff888000ffffff)) + hc(PROBE, USER, rbx=STATS)),
}
for i, path in enumerate(sys.argv[2:]):
    img = open(path, "rb").read()[:8192]
    seeds[f"d-load-{i}"] = (0, poke(0x1000, img) + hc(PROBE, KERNEL, rbx=LOAD_D, rcx=("addr", USER_DATA, 0x1000), rdx=len(img)) +
                            hc(PROBE, KERNEL, rbx=ARM_SPECS, rcx=("addr", USER_DATA, 0), rdx=1))

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
for name, (defaults, steps) in seeds.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(bytes([defaults]) + steps)
print(f"make-hypercall-seeds: {len(seeds)} seeds in {out}")
