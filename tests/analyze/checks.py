#!/usr/bin/python3
"""Independent checks for test-analyze.sh. Each subcommand prints one line per check:
"PASS <what>" or "FAIL <what>: <detail>". The oracles here never use hvt's own code:
the real guest's /proc/kallsyms and memory dumps (fixtures), and capstone's Python binding."""
import bisect, lzma, struct, sys

def out(ok, what, detail=""):
    print(("PASS " if ok else "FAIL ") + what + ("" if ok else ": " + detail))

def load_kallsyms(path):
    syms = []
    for line in lzma.open(path, "rt"):
        a, t, n = line.split()[:3]
        syms.append((int(a, 16), t, n))
    return syms

def cmd_layout(fixture, layout_txt, init_task_runtime):
    """Check BTF-derived task_struct offsets against the running guest's memory."""
    lay = {}
    for line in open(layout_txt):
        f = line.split()
        lay[f[0]] = f[1:]
    probe = dict(l.strip().split("=", 1) for l in open(fixture + "/probe.txt"))
    me = lzma.open(fixture + "/task_self.bin.xz").read()
    init = lzma.open(fixture + "/init_task.bin.xz").read()
    pid_off, tgid_off = int(lay["task_struct.pid"][0]), int(lay["task_struct.tgid"][0])
    comm_off, comm_len = int(lay["task_struct.comm"][0]), int(lay["task_struct.comm"][1])
    mm_off = int(lay["task_struct.mm"][0])
    pid = int(probe["pid"])
    got_pid, got_tgid = struct.unpack_from("<ii", me, pid_off)[0], struct.unpack_from("<i", me, tgid_off)[0]
    out(got_pid == pid, "task_struct.pid reads the probe's pid from its own task", f"{got_pid} != {pid}")
    out(got_tgid == pid, "task_struct.tgid reads the probe's tgid", f"{got_tgid} != {pid}")
    comm = me[comm_off:comm_off + comm_len].split(b"\0")[0].decode(errors="replace")
    out(comm == probe["comm"], "task_struct.comm reads the probe's comm", f"{comm!r} != {probe['comm']!r}")
    out(comm_len == 16, "task_struct.comm is TASK_COMM_LEN bytes", str(comm_len))
    mm = struct.unpack_from("<Q", me, mm_off)[0]
    # upper half, canonical for 4- or 5-level paging (QEMU's -cpu max has LA57)
    out(mm >> 56 == 0xff and mm & 7 == 0, "task_struct.mm of a user process is an aligned kernel pointer", hex(mm))
    init_comm = init[comm_off:comm_off + comm_len].split(b"\0")[0]
    out(init_comm == b"swapper/0", "init_task.comm is swapper/0", repr(init_comm))
    out(struct.unpack_from("<Q", init, mm_off)[0] == 0, "init_task.mm is NULL (kernel thread)")
    out(struct.unpack_from("<i", init, pid_off)[0] == 0, "init_task.pid is 0")
    # mm_struct.pgd: init_mm.pgd is swapper_pg_dir, i.e. init_top_pgt (arch/x86)
    pgd_off = int(lay["mm_struct.pgd"][0])
    init_mm = lzma.open(fixture + "/init_mm.bin.xz").read()
    top = [a for a, t, n in load_kallsyms(fixture + "/kallsyms.xz") if n == "init_top_pgt"]
    got = struct.unpack_from("<Q", init_mm, pgd_off)[0]
    out(top and got == top[0], "mm_struct.pgd: init_mm.pgd in guest memory is init_top_pgt",
        f"{got:#x} != {top[0] if top else None}")
    pc = int(lay["percpu_current"][0], 16)
    out(pc == int(probe["current_task"], 16), "per-CPU current task offset matches the guest's",
        f"{pc:#x} != {probe['current_task']}")
    out(int(init_task_runtime, 16) == int(probe["init_task"], 16), "init_task runtime address after the slide",
        f"{init_task_runtime} != {probe['init_task']}")

def parse_listing(path):
    insns, markers = [], []
    for line in open(path):
        line = line.rstrip("\n")
        if line.startswith("#"):
            markers.append(line)
            continue
        head, _, regs = line.partition("  ;")
        f = head.split(" ", 6)
        tsc, cpu, who, rip, sym, hexb = f[:6]
        text = f[6].lstrip(" ") if len(f) > 6 else ""
        insns.append(dict(tsc=int(tsc), cpu=int(cpu), who=who, rip=int(rip, 16), sym=sym,
                          code=bytes.fromhex(hexb), text=text))
    return insns, markers

def cmd_listing(listing, kallsyms_xz):
    import capstone
    md = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
    insns, _ = parse_listing(listing)
    out(len(insns) > 100, "listing has instructions", str(len(insns)))
    bad = []
    for i in insns:
        d = list(md.disasm(i["code"], i["rip"], 1))
        want = "(bad)" if not d else (d[0].mnemonic + (" " + d[0].op_str if d[0].op_str else ""))
        if want != i["text"] and len(bad) < 3:
            bad.append(f"{i['rip']:#x}: {i['text']!r} != {want!r}")
    out(not bad, "every listing line's text equals capstone's (Python binding)", "; ".join(bad))
    syms = [s for s in load_kallsyms(kallsyms_xz) if s[1] not in "aA"]
    addrs = [s[0] for s in syms]
    bad = []
    for i in insns:
        if i["rip"] >> 63 == 0:
            if i["sym"] != "[user]" and len(bad) < 3: bad.append(f"user {i['rip']:#x} -> {i['sym']}")
            continue
        k = bisect.bisect_right(addrs, i["rip"]) - 1
        # among aliases at one address, kallsyms order (the first) is what hvt prints
        while k > 0 and addrs[k - 1] == addrs[k]: k -= 1
        want = f"{syms[k][2]}+{i['rip'] - syms[k][0]:#x}"
        if want != i["sym"] and len(bad) < 3: bad.append(f"{i['rip']:#x}: {i['sym']} != {want}")
    out(not bad, "every address's sym+off agrees with the guest's /proc/kallsyms", "; ".join(bad))
    tsc_ok = all(b["tsc"] > a["tsc"] for a, b in zip(insns, insns[1:]) if a["cpu"] == b["cpu"])
    out(tsc_ok, "timestamps increase per CPU")

def cmd_views(listing, summary, funcs, folded):
    insns, markers = parse_listing(listing)
    total = len(insns)
    # summary: instruction counts per pid/comm and user pages
    per = {}
    for i in insns:
        p = per.setdefault(i["who"], [0, 0, 0, set()])
        p[0] += 1
        if i["rip"] >> 63: p[1] += 1
        else:
            p[2] += 1
            p[3].add(i["rip"] >> 12)
    rows = {}
    for line in open(summary):
        f = line.split()
        if f and f[0].lstrip("-").isdigit():
            rows[f"{f[0]}/{f[2]}"] = (int(f[3]), int(f[4]), int(f[5]))
    want = {k: tuple(v[:3]) for k, v in per.items()}
    out(rows == want, "summary counts per process equal the listing's", f"{rows} != {want}")
    ranges = sum(1 for l in open(summary) if "user code" in l)
    out(ranges >= len([k for k, v in per.items() if v[2]]), "summary lists user code ranges")
    # funcs: instructions per function equal counts of the listing's symbols
    cnt = {}
    for i in insns:
        name = i["sym"].rsplit("+", 1)[0] if i["sym"] not in ("[user]", "[unknown]") else i["sym"]
        cnt[name] = cnt.get(name, 0) + 1
    got = {}
    for line in list(open(funcs))[1:]:
        f = line.split()
        got[f[2]] = got.get(f[2], 0) + int(f[0])
    out(got == cnt, "instructions per function equal the listing's per-symbol counts",
        str(sorted(set(got.items()) ^ set(cnt.items()))[:4]))
    # folded: counts add up to all instructions, leaf totals equal per-function counts
    leaf, s = {}, 0
    for line in open(folded):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        s += int(n)
        lf = stack.split(";")[-1]
        leaf[lf] = leaf.get(lf, 0) + int(n)
    out(s == total, "folded stack counts add up to the instruction count", f"{s} != {total}")
    out(leaf == cnt, "folded stacks' leaves equal per-function counts")

def cmd_known_path(*nests):
    """Call paths known from the kernel source (kernel/sys.c getppid, arch/x86/entry). Each walk
    may end early (a random branch into a WARN's ud2), so every walk's calls must be a prefix
    of the known sequence, and at least one walk must show all of it."""
    def depth(l): return (len(l) - len(l[5:].lstrip(" ")) - 5) // 2
    def walks(lines, root, level_tag):
        res, cur, cpu, d0 = [], None, None, 0
        for l in lines:
            if "==" in l and l[:3] == cpu: cur = None
            if "==" in l and l.endswith("== " + level_tag + " =="):
                cpu, cur = l[:3], []
                res.append(cur)
                d0 = None
                continue
            if cur is None or l[:3] != cpu: continue
            body = l[5:].strip()
            if d0 is None:
                if body == "-> " + root: d0 = depth(l)
                else: cur.append((-1, "not rooted at " + root + ": " + body)); cpu = None
                continue
            if body.startswith("-> "): cur.append((depth(l) - d0, body[3:]))
        return res
    noise = ("__fentry__", "__x86_return_thunk")
    want = ["__rcu_read_lock", "__task_pid_nr_ns", "__rcu_read_unlock"]
    seqs = []
    for n in nests:
        for w in walks([l.rstrip("\n") for l in open(n)], "__do_sys_getppid", "syscall 110"):
            seqs.append([nm for d, nm in w if d == 1 and nm not in noise])
    out(seqs and all(s == want[:len(s)] for s in seqs) and any(s == want for s in seqs),
        "getppid calls rcu_read_lock, __task_pid_nr_ns, rcu_read_unlock in order (kernel/sys.c)", str(seqs))
    ok, seen = True, 0
    for n in nests:
        for w in walks([l.rstrip("\n") for l in open(n)], "entry_SYSCALL_64", "syscall 39"):
            names = [nm for _, nm in w]
            if "do_syscall_64" not in names: continue
            i = names.index("do_syscall_64")
            seen += 1
            ok &= i + 1 < len(w) and w[i + 1][1] == "syscall_enter_from_user_mode" and w[i + 1][0] == w[i][0] + 1
    out(ok and seen > 0, "entry_SYSCALL_64 reaches do_syscall_64, whose first call is syscall_enter_from_user_mode",
        f"{seen} walks")

def cmd_hide(truth, hidden_nest, globs):
    """The --hide diagram equals the full one with each hidden call's subtree cut out."""
    import fnmatch
    pats = globs.split(",")
    def depth(l): return (len(l) - len(l[5:].lstrip(" ")) - 5) // 2
    want, hide_at = [], {}
    for l in open(truth):
        l = l.rstrip("\n")
        if not l[:3].strip().isdigit():
            want.append(l); continue
        cpu, body = l[:3], l[5:].strip()
        if body.startswith("=="):
            hide_at.pop(cpu, None); want.append(l); continue
        d = depth(l)
        if cpu in hide_at:
            if d > hide_at[cpu] or body.startswith("<- "):
                if d == hide_at[cpu]: del hide_at[cpu]
                continue
        if body.startswith("-> ") and any(fnmatch.fnmatchcase(body[3:], p) for p in pats):
            hide_at[cpu] = d; continue
        want.append(l)
    got = [l.rstrip("\n") for l in open(hidden_nest)]
    per = lambda ls, c: [x for x in ls if x[:3] == c]
    cpus = sorted({x[:3] for x in want if x[:3].strip().isdigit()})
    ok = all(per(want, c) == per(got, c) for c in cpus) and len(got) < len(open(truth).readlines())
    out(ok, f"--hide {globs}: the diagram minus the hidden calls' subtrees ({len(got)} lines)")

if __name__ == "__main__":
    {"layout": cmd_layout, "listing": cmd_listing, "views": cmd_views, "known-path": cmd_known_path,
     "hide": cmd_hide}[sys.argv[1]](*sys.argv[2:])
