#!/usr/bin/env bash
# probe-report.sh RUN_DIR [HVT VMLINUZ] - bench-probe's numbers from one run (see bench/probe.mk);
# with hvt and the kernel, the performance model calibrated and checked too (bench/predict-cal.py).
set -euo pipefail
run=$1
line=$(tr -d '\r' < "$run/serial.log" | grep -a "^PROBEBENCH-PHASE" | tr '\n' ' ')
[ -n "$line" ] || { echo "bench-probe: probe-bench did not report" >&2; tail -20 "$run/serial.log" >&2; exit 1; }
tr -d '\r' < "$run/serial.log" | grep -a "^PROBEBENCH-PHASE"
tr -d '\r' < "$run/e9.log" | grep -a "^HVT-PROBE " | sort -u -t' ' -k2,3 || true
tr -d '\r' < "$run/serial.log" | grep -a "hvtbench" || true
costs=$(tr -d '\r' < "$run/serial.log" | grep -a "^PROBEBENCH-COST" | tr '\n' ' ' || true)
tr -d '\r' < "$run/serial.log" | grep -a "^PROBEBENCH-COST" || true
python3 - "$line" "$costs" <<'PY'
import re, sys
d = {}
for m in re.finditer(r"n=(\d+) name=(\w+) tsc=(\d+) fires=(\d+) exits=(\d+)", sys.argv[1]):
    n, name = int(m.group(1)), m.group(2)
    d[name], d[name + "_fires"], d[name + "_exits"] = int(m.group(3)), int(m.group(4)), int(m.group(5))
def per(x, y): return x / y if y else float("nan")
out = {}
out["exits_per_fire_entry"] = per(d["entry_exits"], d["entry_fires"])
out["exits_per_fire_other"] = max(per(d["return_exits"], d["return_fires"]), per(d["addr_exits"], d["addr_fires"]))
out["hv_insn_per_fire"] = per(d["entry"] - d["base"], d["entry_fires"])
out["unprobed_exits"] = d["unprobed_exits"]
out["guest_insn_per_kprobe"] = per(d["kprobe"] - d["base"], n) if "kprobe" in d else float("nan")
out["syscall_slowdown"] = per(d["entry"], d["base"])
if "dcount" in d and "rbase" in d:
    out["hv_insn_per_fire_count"] = per(d["dcount"] - d["rbase"], d["dcount_fires"])
    out["hv_insn_per_fire_quantize"] = per(d["dquant"] - d["rbase"], d["dquant_fires"])
    if "dstack" in d:
        out["hv_insn_per_fire_stack_key"] = per(d["dstack"] - d["rbase"], d["dstack_fires"])
    if "dstack1" in d:
        out["hv_insn_per_fire_stack_key1"] = per(d["dstack1"] - d["rbase"], d["dstack1_fires"])
    out["guest_insn_per_kprobe_read"] = per(d["rkprobe"] - d["rbase"], n) if "rkprobe" in d else float("nan")
if "sdt" in d and "sbase" in d and "sfbt" in d:
    out["hv_insn_per_fire_sdt"] = per(d["sdt"] - d["sbase"], d["sdt_fires"])
    out["hv_insn_per_fire_sdt_fbt"] = per(d["sfbt"] - d["sbase"], d["sfbt_fires"])
    out["sdt_vs_fbt"] = per(out["hv_insn_per_fire_sdt"], out["hv_insn_per_fire_sdt_fbt"])
    out["exits_per_fire_sdt"] = per(d["sdt_exits"], d["sdt_fires"])
# The timed phases: each firing's hypervisor time by phase beside the guest's measure of it
# (the same run, the stamps' own cost in both), and what the stamps cost (timed - untimed).
cost = {}
for m in re.finditer(r"PROBEBENCH-COST name=(\w+) fires=(\d+)((?: \w+=\d+)+)", sys.argv[2]):
    cost[m.group(1)] = (int(m.group(2)), [(k, int(v)) for k, v in re.findall(r"(\w+)=(\d+)", m.group(3))])
for name, base, short, untimed in (("entry_t", "base", "entry", "hv_insn_per_fire"),
                                   ("dcount_t", "rbase", "count", "hv_insn_per_fire_count"),
                                   ("dquant_t", "rbase", "quantize", "hv_insn_per_fire_quantize"),
                                   ("dstack_t", "rbase", "stack_key", "hv_insn_per_fire_stack_key")):
    if name not in cost or name not in d or base not in d:
        continue
    fires, phases = cost[name]
    measured = per(d[name] - d[base], d[name + "_fires"])
    total = per(sum(v for _, v in phases), fires)
    print(f"phases {short:9s} per firing: " + " ".join(f"{k}={per(v, fires):.0f}" for k, v in phases) +
          f"  sum={total:.0f} measured={measured:.0f} (timed)")
    out[f"phase_sum_vs_measured_{short}"] = per(total, measured)
    if untimed in out:
        out[f"phase_stamps_cost_{short}"] = measured - out[untimed]
print(f"per getpid: base {d['base']/n:.0f} insns; entry probe {d['entry']/n:.0f}; return {d['return']/n:.0f}; "
      f"addr {d['addr']/n:.0f}; kprobe {d.get('kprobe', 0)/n:.0f}")
print(" ".join(f"{k}={v:.2f}" if isinstance(v, float) else f"{k}={v}" for k, v in out.items()))
PY
if [ $# -ge 3 ]; then
  # the model's failure is said, and the figures above are still recorded
  python3 "$(dirname "$0")/predict-cal.py" "$run" "$(dirname "$run")" "$2" "$3" ||
    echo "bench-probe: the performance model was not calibrated or checked (above)" >&2
fi
