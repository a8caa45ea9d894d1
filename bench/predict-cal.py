#!/usr/bin/env python3
"""predict-cal.py RUN_DIR PROG_DIR HVT VMLINUZ - bench-probe's performance model, calibrated and
checked from one run (bench/probe.mk; docs/probes.md, "The probe effect predicted").

Calibration: each program of the run (PROG_DIR/NAME.model: hvt -e --model's counts of one
firing, per class of the model) is a linear equation, its measured ticks per firing (the run's
PROBEBENCH-PHASE line less its base, over its firings) = the sum over the classes of count *
cost; the costs are the solution (one equation per unknown, solved exactly: each program
differs from another in one class). The plain entry probe (no D) gives a firing's exit and
lookup together; they are split as the run's timed entry_t phases split them. Written to
PROG_DIR/probecost.cal and bench/results/probecost.cal (the table hvt -e reads).

What the counts do not show is priced from pairs of runs that differ in it alone: keynew (an
aggregation's key changing at every firing, ckeyalt over rbase2, against ckey's repeating key)
and newtask (a firing in another task than the CPU's last: the ping-pong pswitch over pbase,
less the timed plain firing entry_t, per firing its tally counted in a new task).

Check: for each workload (PROBEBENCH-PREDICT: untraced, then rounds of its probes armed plain
and timed (the counting run: its own ticks and its tally of new tasks and probe changes), traced
and untraced again), hvt -e predicts the slowdown from the table and the counting runs
(--count-run FIRES:TICKS:OWN:NEWTASK:SWITCHED), beside the measured one (traced over the
untraced time at its place between the untraced runs around it)."""
import os, re, subprocess, sys

run, progs, hvt, vmlinuz = sys.argv[1:5]
serial = open(os.path.join(run, "serial.log"), errors="replace").read().replace("\r", "")
phase = {}
for m in re.finditer(r"PROBEBENCH-PHASE n=(\d+) name=(\w+) tsc=(\d+) fires=(\d+) exits=(\d+)", serial):
    phase[m.group(2)] = (int(m.group(3)), int(m.group(4)))
cost = {}
for m in re.finditer(r"PROBEBENCH-COST name=(\w+) fires=(\d+)((?: \w+=\d+)+)", serial):
    cost[m.group(1)] = (int(m.group(2)), dict((k, int(v)) for k, v in re.findall(r"(\w+)=(\d+)", m.group(3))))

tally = {}
for m in re.finditer(r"PROBEBENCH-TALLY name=(\w+) newtask=(\d+) switched=(\d+)", serial):
    tally[m.group(1)] = (int(m.group(2)), int(m.group(3)))

UNKNOWNS = ["fire", "dfire", "clause", "sysargs", "op_insn", "op_builtin", "op_tpush", "op_builtin_str",
            "agg_count", "agg_quantize", "interp"]
CAL_PROGS = ["cc1", "cc4cl", "cc4ag", "ckey", "calu", "cvar", "csys", "dcount", "dquant", "ci1"]
CHECK_PROGS = ["ci2"]     # not fitted: the table's prediction of them beside their measure


def model(name):
    """The counts of one firing of the program's (single) probe."""
    with open(os.path.join(progs, name + ".model")) as f:
        line = f.readline().split()
    counts = dict((k, float(v)) for k, v in (w.split("=") for w in line[2:]))
    if counts.pop("exit", 0) != 1 or counts.pop("lookup", 0) != 1:
        sys.exit(f"predict-cal: {name}.model: not one firing's counts")
    counts["fire"] = 1
    return counts


def per_firing(name, base):
    t, f = phase[name]
    return (t - phase[base][0]) / f if f else float("nan")


missing = [p for p in ["entry", "base", "rbase", "entry_t", "rbase2", "ckeyalt", "pbase", "pswitch"] + CAL_PROGS +
           CHECK_PROGS if p not in phase]
if "pswitch" not in tally:
    missing.append("pswitch's tally")
if missing:
    sys.exit("predict-cal: the run has no " + " ".join(missing))
rows = [({"fire": 1}, per_firing("entry", "base"), "entry")]
for p in CAL_PROGS:
    rows.append((model(p), per_firing(p, "rbase"), p))
for c, _, p in rows:
    extra = set(c) - set(UNKNOWNS)
    if extra:
        sys.exit(f"predict-cal: {p} has classes the calibration does not solve: {extra}")

# Gaussian elimination with partial pivoting on the square system.
n = len(UNKNOWNS)
a = [[c.get(u, 0.0) for u in UNKNOWNS] + [y] for c, y, _ in rows]
for col in range(n):
    piv = max(range(col, n), key=lambda r: abs(a[r][col]))
    if abs(a[piv][col]) < 1e-9:
        sys.exit(f"predict-cal: the programs do not determine {UNKNOWNS[col]}")
    a[col], a[piv] = a[piv], a[col]
    for r in range(n):
        if r != col and a[r][col]:
            k = a[r][col] / a[col][col]
            a[r] = [x - k * y for x, y in zip(a[r], a[col])]
sol = dict((UNKNOWNS[i], a[i][n] / a[i][i]) for i in range(n))
for c, y, p in rows:
    fit = sum(sol[k] * v for k, v in c.items())
    print(f"calibration {p:7s} measured {y:8.1f} ticks/firing, the table gives {fit:8.1f}")

for p in CHECK_PROGS:
    c, y = model(p), per_firing(p, "rbase")
    fit = sum(sol.get(k, float("nan")) * v for k, v in c.items())
    print(f"check       {p:7s} measured {y:8.1f} ticks/firing, the table gives {fit:8.1f} (not fitted)")

# exit and lookup: the plain firing split as the timed run split it
if "entry_t" not in cost or "exit" not in cost["entry_t"][1]:
    sys.exit("predict-cal: the run has no timed entry_t phases to split exit and lookup")
ph = cost["entry_t"][1]
share = ph["exit"] / (ph["exit"] + ph["lookup"])
table = {"exit": sol["fire"] * share, "lookup": sol["fire"] * (1 - share)}
table.update((k, v) for k, v in sol.items() if k != "fire")
# What a firing's counts do not show, each from a pair of runs that differ in it alone:
# keynew, the key changed at every firing (reads of 1 and 2 bytes in turn, @[arg2]) over it
# repeated (ckey); newtask, the ping-pong's plain firings, each in the other task than the
# last, over the getpid loop's plain firings in one task (both timed), per firing the tally
# counted in a new task.
key_alt, key_same = per_firing("ckeyalt", "rbase2"), per_firing("ckey", "rbase")
table["keynew"] = key_alt - key_same
print(f"calibration keynew  {key_alt:8.1f} ticks/firing with the key changing at each, {key_same:8.1f} repeating")
ps_t, ps_f = phase["pswitch"][0] - phase["pbase"][0], phase["pswitch"][1]
nt = tally["pswitch"][0]
if not nt:
    sys.exit("predict-cal: the ping-pong's firings were not in new tasks (tally 0)")
timed_plain = per_firing("entry_t", "base")
table["newtask"] = (ps_t - ps_f * timed_plain) / nt
print(f"calibration newtask {ps_t / ps_f:8.1f} ticks/firing in the ping-pong ({nt} of {ps_f} in a new task), "
      f"{timed_plain:8.1f} in one task (timed)")
neg = [k for k, v in table.items() if v < 0]
if neg:
    sys.exit(f"predict-cal: negative costs fitted ({neg}): the run's measures are inconsistent")
head = ("# The probe effect's calibration table (hvt -e --cal; docs/probes.md): TSC ticks per unit,\n"
        "# fitted by bench/predict-cal.py to one make bench-probe run (Bochs, 1 CPU: ticks are\n"
        "# instructions). Classes absent here are priced as their fallback (hvt -e says which).\n")
text = head + "".join(f"{k}={v:.1f}\n" for k, v in table.items())
for path in (os.path.join(progs, "probecost.cal"), "bench/results/probecost.cal"):
    with open(path, "w") as f:
        f.write(text)
print("calibration table: " + " ".join(f"{k}={v:.1f}" for k, v in table.items()))

# The workloads: each round's counting and traced runs between two untraced ones, the untraced
# time taken at each run's place between them (it drifts from run to run: the guest's state
# grows), the rounds added up.
runs = {}
for m in re.finditer(r"PROBEBENCH-PREDICT name=(\w+) round=(\d+) u0=(\d+) tc=(\d+) fc=(\d+) own=(\d+) "
                     r"newtask=(\d+) switched=(\d+) t1=(\d+) f1=(\d+) u1=(\d+) ok=(\d)", serial):
    w = m.group(1)
    u0, tc, fc, own, nt, sw, t1, f1, u1, ok = map(int, m.groups()[2:])
    if not ok:
        print(f"predict {w}: the workload failed in the guest", file=sys.stderr)
        runs[w] = None
        continue
    if w in runs and runs[w] is None:
        continue
    r = runs.setdefault(w, dict(rounds=0, tc=0, fc=0, own=0, nt=0, sw=0, t1=0, f1=0, bc=0, bt=0, spread=0))
    r["rounds"] += 1
    for k, v in (("tc", tc), ("fc", fc), ("own", own), ("nt", nt), ("sw", sw), ("t1", t1), ("f1", f1)):
        r[k] += v
    r["bc"] += (2 * u0 + u1) / 3
    r["bt"] += (u0 + 2 * u1) / 3
    r["spread"] = max(r["spread"], abs(u1 - u0) / ((u0 + u1) / 2))
out = {}
for w, r in runs.items():
    if r is None:
        continue
    run_arg = f"{r['fc']}:{r['tc']}:{r['own']}:{r['nt']}:{r['sw']}"
    res = subprocess.run([hvt, "-e", "-q", "-s", os.path.join(progs, w + ".d"), "--vmlinuz", vmlinuz,
                          "--cal", os.path.join(progs, "probecost.cal"), "--count-run", run_arg],
                         capture_output=True, text=True)
    pm = re.search(r"cost_per_firing=([\d.]+) rate_per_tick=\S+ predicted_slowdown=([\d.]+)", res.stdout)
    if res.returncode or not pm:
        sys.exit(f"predict-cal: hvt -e for {w} failed: {res.stderr.strip()}")
    pcost, pred = float(pm.group(1)), float(pm.group(2))
    meas = r["t1"] / r["bt"]
    mcost = (r["t1"] - r["bt"]) / r["f1"] if r["f1"] else float("nan")
    ratio = (pred - 1) / (meas - 1) if meas != 1 else float("nan")
    fc = r["fc"] or 1
    own_vs = r["own"] / (r["tc"] - r["bc"]) if r["tc"] != r["bc"] else float("nan")
    print(f"predict {w:6s} {r['rounds']} rounds: counting runs {r['fc']} firings in {r['tc']} ticks, the hypervisor "
          f"timed {r['own']} of them ({r['own'] / fc:.0f} a firing; the guest saw {(r['tc'] - r['bc']) / fc:.0f}); "
          f"{r['nt'] / fc:.3f} of them in a new task, {r['sw'] / fc:.3f} of another probe; traced {r['f1']} firings "
          f"in {r['t1']}; untraced runs {r['spread']:.2%} apart at most")
    print(f"predict {w:6s} predicted {pred:.4f}x ({pcost:.0f} ticks a firing)  measured {meas:.4f}x "
          f"({mcost:.0f} ticks a firing)  overhead predicted/measured {ratio:.2f}")
    out[f"newtask_frac_{w}"] = f"{r['nt'] / fc:.3f}"
    out[f"switched_frac_{w}"] = f"{r['sw'] / fc:.3f}"
    out[f"count_run_own_vs_measured_{w}"] = f"{own_vs:.2f}"
    out[f"untraced_spread_{w}"] = f"{r['spread']:.4f}"
    out[f"predicted_ticks_per_fire_{w}"] = f"{pcost:.0f}"
    out[f"measured_ticks_per_fire_{w}"] = f"{mcost:.0f}"
    out[f"predicted_slowdown_{w}"] = f"{pred:.4f}"
    out[f"measured_slowdown_{w}"] = f"{meas:.4f}"
    out[f"predict_overhead_ratio_{w}"] = f"{ratio:.2f}"
ratios = [float(v) for k, v in out.items() if k.startswith("predict_overhead_ratio_")]
out["predict_within_20pct"] = f"{sum(0.8 <= r <= 1.2 for r in ratios)}/{len(ratios)}"
print(" ".join(f"{k}={v}" for k, v in out.items()))
