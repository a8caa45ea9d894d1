#!/usr/bin/env python3
"""Run the tests named in tests/TESTS and print one table of what ran.

Usage: tests/run.py [--tier TIER[,TIER...]|all] [-j N] [--manifest FILE] [--out FILE] [NAME ...]

Each manifest line is `NAME TIER BUDGET COMMAND...` (BUDGET in seconds); lines starting with
`#` are comments. Tiers: host (the build's own dependencies only), prep (builds and fetches what
the next two tiers read: emulators, kernels, initramfs images), kernel (host only, but reads
the pinned Debian kernels), vm (Bochs or QEMU).
Every test runs whatever the others did, with its output in build/test-logs/NAME.log: the host
and prep tiers first, one at a time (they build what the rest use), then the others in
manifest order, up to N at once (-j; Bochs runs one machine on one core).
A test passes when its command exits 0. Its checks are counted from its own output:
  - a line "N passed, M failed" (any prefix) is a summary: it replaces the single marks
    counted since the previous summary (which it covers) with N and M;
  - otherwise a line with PASS, a leading "ok" or the guest's "HVT-RESULT: name=X ok" is one
    passed check, one with FAIL or a leading "not ok" one failed check (the guest's own FAIL
    results are judged by check-boot.sh, whose verdict is counted, and make's echo of a
    recipe is not a check).
The table (test, tier, seconds, budget, checks passed/failed, result) is printed at the end
and written to build/test-times.txt; a test more than 50% over its budget is flagged SLOW.
Exit status: 0 when every test passed, 1 otherwise, 2 for a bad manifest.
"""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import threading
import time

TIERS = ("host", "prep", "kernel", "vm")
SUMMARY = re.compile(r"(\d+) passed, (\d+) failed")
PASS = re.compile(r"\bPASS\b|^\s*ok\b|HVT-RESULT: name=\S+ ok\b")
FAIL = re.compile(r"\bFAIL(ED)?\b|^\s*not ok\b")
# Not checks: the guest's own results (tests/guest/init), which check-boot.sh judges against
# what the run expects (without VT-x most of them must fail), and make's echo of a recipe.
NOT_A_CHECK = re.compile(r"HVT-RESULT: name=\S+ FAIL|\becho [\"']")


def read_manifest(path):
    tests = []
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split(None, 3)
            if len(parts) < 4 or parts[1] not in TIERS or not parts[2].isdigit():
                sys.exit(f"{path}:{lineno}: want 'NAME host|prep|kernel|vm BUDGET COMMAND', got: {line}")
            tests.append({"name": parts[0], "tier": parts[1], "budget": int(parts[2]),
                          "cmd": parts[3]})
    names = [t["name"] for t in tests]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        sys.exit(f"{path}: tests named twice: {' '.join(sorted(dup))}")
    return tests


def count_checks(log):
    passed = failed = pend_p = pend_f = 0
    with open(log, errors="replace") as f:
        for line in f:
            m = SUMMARY.search(line)
            if m:
                passed += int(m.group(1))
                failed += int(m.group(2))
                pend_p = pend_f = 0
            elif NOT_A_CHECK.search(line):
                continue
            elif FAIL.search(line):
                pend_f += 1
            elif PASS.search(line):
                pend_p += 1
    return passed + pend_p, failed + pend_f


def recount(logdir, table):
    """Print a table's rows with their checks counted again from the logs (a table made by an
    older counter, or by hand)."""
    for line in open(table):
        name = line.split()[0] if line.strip() else ""
        log = os.path.join(logdir, name + ".log")
        if os.path.exists(log):
            p, f = count_checks(log)
            print(f"{line.rstrip()}   recount: {p} passed, {f} failed")
        else:
            print(line.rstrip())


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--recount":
        return recount(sys.argv[2], sys.argv[3])
    ap = argparse.ArgumentParser()
    ap.add_argument("--tier", default="all")
    ap.add_argument("--manifest", default=os.path.join(os.path.dirname(__file__), "TESTS"))
    ap.add_argument("--out", default=os.path.join(os.environ.get("BUILD", "build"), "test-times.txt"))
    ap.add_argument("--jobs", "-j", type=int, default=1,
                    help="kernel- and vm-tier tests run at once (Bochs uses one core per machine)")
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()

    tests = read_manifest(a.manifest)
    known = {t["name"] for t in tests}
    unknown = [n for n in a.names if n not in known]
    if unknown:
        sys.exit(f"run.py: no such test in {a.manifest}: {' '.join(unknown)}")
    if a.names:
        tests = [t for t in tests if t["name"] in a.names]
    elif a.tier != "all":
        tiers = a.tier.split(",")
        bad = [x for x in tiers if x not in TIERS]
        if bad:
            sys.exit(f"run.py: no such tier: {' '.join(bad)} (tiers: {' '.join(TIERS)})")
        tests = [t for t in tests if t["tier"] in tiers]

    logdir = os.path.join(os.path.dirname(a.out) or ".", "test-logs")
    os.makedirs(logdir, exist_ok=True)
    results = {}
    lock = threading.Lock()

    def run_one(t):
        log = os.path.join(logdir, t["name"] + ".log")
        with lock:
            print(f"== {t['name']} ({t['tier']}, budget {t['budget']} s): {t['cmd']}", flush=True)
        t0 = time.time()
        with open(log, "w") as out:
            rc = subprocess.call(["bash", "-c", t["cmd"]], stdout=out, stderr=subprocess.STDOUT)
        secs = time.time() - t0
        p, f = count_checks(log)
        ok = rc == 0
        with lock:
            results[t["name"]] = (t, secs, p, f, ok)
            print(f"   {t['name']}: {'pass' if ok else 'FAILED (exit %d)' % rc} in {secs:.0f} s, "
                  f"checks {p} passed, {f} failed; log {log}", flush=True)
            if not ok:
                with open(log, errors="replace") as lf:
                    tail = lf.readlines()[-60:]
                print("   --- last lines of the log ---")
                sys.stdout.writelines("   | " + l for l in tail)
                sys.stdout.flush()

    start_all = time.time()
    # Host-tier tests build what later tests use: one at a time, first. The rest only read
    # what is built (each writes under its own folder), so they may share the cores.
    serial = ("host", "prep")
    for t in [t for t in tests if t["tier"] in serial]:
        run_one(t)
    rest = [t for t in tests if t["tier"] not in serial]
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        list(pool.map(run_one, rest))
    rows = [results[t["name"]] for t in tests]

    total = time.time() - start_all
    lines = [f"{'test':<24} {'tier':<6} {'seconds':>8} {'budget':>7} {'passed':>7} {'failed':>7}  result"]
    for t, secs, p, f, ok in rows:
        flag = " SLOW" if secs > 1.5 * t["budget"] else ""
        lines.append(f"{t['name']:<24} {t['tier']:<6} {secs:8.0f} {t['budget']:7d} {p:7d} {f:7d}  "
                     f"{'pass' if ok else 'FAIL'}{flag}")
    nfail = sum(1 for r in rows if not r[4])
    lines.append(f"{'total':<24} {'':<6} {total:8.0f} {sum(r[0]['budget'] for r in rows):7d} "
                 f"{sum(r[2] for r in rows):7d} {sum(r[3] for r in rows):7d}  "
                 f"{len(rows) - nfail} of {len(rows)} tests passed")
    table = "\n".join(lines) + "\n"
    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    with open(a.out, "w") as f:
        f.write(table)
    print()
    print(table, end="")
    print(f"(also in {a.out})")
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
