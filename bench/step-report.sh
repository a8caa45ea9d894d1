#!/usr/bin/env bash
# step-report.sh RUN_DIR HVT_IMPORT - bench-step's numbers from one run (see bench/step.mk).
set -euo pipefail
run=$1; import=$2
tb=$(tr -d '\r' < "$run/serial.log" | grep -a "^TICKBENCH" | tail -1) || { echo "bench-step: tickbench did not report" >&2; tail -5 "$run/serial.log" >&2; exit 1; }
st=$(grep -a "^HVT-STEPSTAT" "$run/e9.log" | tail -1) || { echo "bench-step: no STEPSTAT" >&2; exit 1; }
"$import" "$run/e9.log" "$run/trace.hvt" 2> "$run/import.txt"
code=$(sed -n 's/.*, \([0-9]*\) code bytes,.*/\1/p' "$run/import.txt")
[ -n "$code" ] || { echo "bench-step: hvt-import did not report code bytes" >&2; cat "$run/import.txt" >&2; exit 1; }
disk=$(stat -c %s "$run/trace.hvt")
echo "$tb"
echo "$st"
grep -a "^HVT-FASTSTAT" "$run/e9.log" | tail -1 || true   # why steps left the fast path
stamps=$(cat "$run/stamps" 2>/dev/null || true)
echo "$stamps"
python3 - "$tb" "$st" "$code" "$disk" "$stamps" <<'PY'
import re, sys
tb = dict(re.findall(r"(\w+)=(\d+)", sys.argv[1].replace("loc=", "L=", 1).replace("sig=", "S=", 1)))
st = dict(re.findall(r"(\w+)=(\d+)", sys.argv[2]))
code, disk = int(sys.argv[3]), int(sys.argv[4])
steps, host, guest, rec = (int(st[k]) for k in ("steps", "host_ticks", "guest_ticks", "record_bytes"))
u_tsc, u_loc, u_sig = int(tb["untraced_tsc"]), int(tb["L"]), int(tb["S"])
t_loc, t_sig = int(tb["loc"]), int(tb["sig"])
hv = (host - steps) / steps
wire = (rec + code) / steps
dsk = disk / steps
# Untraced: one CPU, no stepping, so the TSC delta is the instruction count.
u_rate = u_loc / u_tsc * 1e6
t_rate = t_loc / steps * 1e6
print(f"untraced: {u_tsc} insns, {u_loc} timer interrupts ({u_rate:.2f} per M insns), {u_sig} SIGALRM")
print(f"traced:   {steps} insns, {t_loc} timer interrupts ({t_rate:.2f} per M insns), {t_sig} SIGALRM")
# While stepped the guest's clock counts its instructions (trace/step/time_dilate.h), so this is 1 by
# construction unless the CPU parked in HLT (real time runs then) inside the window.
print(f"guest TSC per traced insn {guest / steps:.3f} (untraced: 1.000); host insns per step {host / steps:.1f}")
print(f"wire: {rec} record bytes + {code} code bytes = {wire:.2f} B/insn; disk (zstd): {disk} bytes = {dsk:.3f} B/insn")
ratio = t_rate / u_rate if u_rate else float("nan")
# Bochs's own cost per step: the wall time of the traced window per step, in units of the
# wall time of one untraced guest instruction, minus what was emulated (hv + guest insn).
when = {}
for line in sys.argv[5].splitlines():
    t, _, text = line.partition(" ")
    for key, pat in (("u0", "TICKBENCH-PHASE untraced"), ("u1", "TICKBENCH-PHASE traced"),
                     ("t0", "trace start"), ("t1", "HVT-STEPSTAT")):
        if pat in text and key not in when:
            when[key] = float(t)
bochs = "nan"
if len(when) == 4 and when["u1"] > when["u0"] and when["t1"] > when["t0"]:
    us_insn = (when["u1"] - when["u0"]) * 1e6 / u_tsc
    us_step = (when["t1"] - when["t0"]) * 1e6 / steps
    bochs = f"{us_step / us_insn - hv - 1:.0f}"
    print(f"wall: untraced {when['u1'] - when['u0']:.1f} s = {us_insn * 1000:.1f} ns/insn; traced {when['t1'] - when['t0']:.1f} s = {us_step:.1f} us/step")
print(f"bochs_insn_per_step={bochs}")
print(f"hv_insn_per_step={hv:.0f} bytes_per_insn={dsk:.3f} wire_bytes_per_insn={wire:.2f} tick_ratio={ratio:.2f}")
PY
