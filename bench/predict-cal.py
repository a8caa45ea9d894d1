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

Check: for each workload (PROBEBENCH-PREDICT: untraced, its probes armed plain, traced,
untraced again), hvt -e predicts the slowdown from the table and the counting run
(--count-run FIRES:TICKS), beside the measured one (traced over the untraced mean)."""
import os, re, subprocess, sys

run, progs, hvt, vmlinuz = sys.argv[1:5]
serial = open(os.path.join(run, "serial.log"), errors="replace").read().replace("\r", "")
phase = {}
for m in re.finditer(r"PROBEBENCH-PHASE n=(\d+) name=(\w+) tsc=(\d+) fires=(\d+) exits=(\d+)", serial):
    phase[m.group(2)] = (int(m.group(3)), int(m.group(4)))
cost = {}
for m in re.finditer(r"PROBEBENCH-COST name=(\w+) fires=(\d+)((?: \w+=\d+)+)", serial):
    cost[m.group(1)] = (int(m.group(2)), dict((k, int(v)) for k, v in re.findall(r"(\w+)=(\d+)", m.group(3))))

UNKNOWNS = ["fire", "dfire", "clause", "sysargs", "op_insn", "op_builtin", "op_tpush", "op_builtin_str",
            "agg_count", "agg_quantize"]
CAL_PROGS = ["cc1", "cc4cl", "cc4ag", "ckey", "calu", "cvar", "csys", "dcount", "dquant"]


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


missing = [p for p in ["entry", "base", "rbase"] + CAL_PROGS if p not in phase]
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

# exit and lookup: the plain firing split as the timed run split it
if "entry_t" not in cost or "exit" not in cost["entry_t"][1]:
    sys.exit("predict-cal: the run has no timed entry_t phases to split exit and lookup")
ph = cost["entry_t"][1]
share = ph["exit"] / (ph["exit"] + ph["lookup"])
table = {"exit": sol["fire"] * share, "lookup": sol["fire"] * (1 - share)}
table.update((k, v) for k, v in sol.items() if k != "fire")
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

out = {}
for m in re.finditer(r"PROBEBENCH-PREDICT name=(\w+) t0=(\d+) tc=(\d+) fc=(\d+) t1=(\d+) f1=(\d+) t0b=(\d+) ok=(\d)", serial):
    w, t0, tc, fc, t1, f1, t0b, ok = m.group(1), *map(int, m.groups()[1:])
    if not ok:
        print(f"predict {w}: the workload failed in the guest", file=sys.stderr)
        continue
    base = (t0 + t0b) / 2
    r = subprocess.run([hvt, "-e", "-q", "-s", os.path.join(progs, w + ".d"), "--vmlinuz", vmlinuz,
                        "--cal", os.path.join(progs, "probecost.cal"), "--count-run", f"{fc}:{tc}"],
                       capture_output=True, text=True)
    pm = re.search(r"cost_per_firing=([\d.]+) rate_per_tick=\S+ predicted_slowdown=([\d.]+)", r.stdout)
    if r.returncode or not pm:
        sys.exit(f"predict-cal: hvt -e for {w} failed: {r.stderr.strip()}")
    pcost, pred = float(pm.group(1)), float(pm.group(2))
    meas = t1 / base
    mcost = (t1 - base) / f1 if f1 else float("nan")
    ratio = (pred - 1) / (meas - 1) if meas != 1 else float("nan")
    print(f"predict {w:6s} untraced {t0} and {t0b} ticks (spread {abs(t0 - t0b) / base:.2%}); counting run "
          f"{fc} firings in {tc} ({(tc - base) / fc if fc else 0:.0f} ticks a plain firing); traced {f1} firings in {t1}")
    print(f"predict {w:6s} predicted {pred:.4f}x ({pcost:.0f} ticks a firing)  measured {meas:.4f}x "
          f"({mcost:.0f} ticks a firing)  overhead predicted/measured {ratio:.2f}")
    out[f"plain_fire_ticks_{w}"] = f"{(tc - base) / fc if fc else 0:.0f}"
    out[f"untraced_spread_{w}"] = f"{abs(t0 - t0b) / base:.4f}"
    out[f"predicted_slowdown_{w}"] = f"{pred:.4f}"
    out[f"measured_slowdown_{w}"] = f"{meas:.4f}"
    out[f"predict_overhead_ratio_{w}"] = f"{ratio:.2f}"
ratios = [float(v) for k, v in out.items() if k.startswith("predict_overhead_ratio_")]
out["predict_within_20pct"] = f"{sum(0.8 <= r <= 1.2 for r in ratios)}/{len(ratios)}"
print(" ".join(f"{k}={v}" for k, v in out.items()))
