#!/usr/bin/env bash
# step-report.sh RUN_DIR HVT_IMPORT [MD5_FULL_RUN MD5_FLOW_RUN HVT_CHECK] - bench-step's numbers
# (see bench/step.mk): the busy loop's run, then md5sum's two runs side by side.
set -euo pipefail
run=$1; import=$2
md5full=${3:-}; md5flow=${4:-}; check=${5:-}
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
[ -n "$md5full" ] || exit 0

# One md5sum run: "steps host_ticks record_bytes code_bytes disk_bytes violations insns recorded".
md5_run() {
  local r=$1 st code disk chk
  tr -d '\r' < "$r/serial.log" | grep -a "^TICKBENCH-MD5" | tail -1 | grep -q "status=0" ||
    { echo "bench-step: md5sum did not run to the end in $r" >&2; tail -5 "$r/serial.log" >&2; return 1; }
  st=$(grep -a "^HVT-STEPSTAT" "$r/e9.log" | tail -1) || { echo "bench-step: no STEPSTAT in $r" >&2; return 1; }
  "$import" "$r/e9.log" "$r/trace.hvt" 2> "$r/import.txt"
  code=$(sed -n 's/.*, \([0-9]*\) code bytes,.*/\1/p' "$r/import.txt")
  disk=$(stat -c %s "$r/trace.hvt")
  chk=$("$check" "$r/trace.hvt" 2>&1 | grep -a "^violations=" | tail -1) || true
  python3 - "$st" "$code" "$disk" "$chk" <<'PY'
import re, sys
st = dict(re.findall(r"(\w+)=(\d+)", sys.argv[1]))
ck = dict(re.findall(r"(\w+)=(\d+)", sys.argv[4]))
print(st["steps"], st["host_ticks"], st["record_bytes"], sys.argv[2] or 0, sys.argv[3],
      ck.get("violations", -1), ck.get("insns", -1), st["recorded"])
PY
}
full=$(md5_run "$md5full") && flow=$(md5_run "$md5flow") || exit 1
python3 - "$full" "$flow" <<'PY'
import sys
f = [int(x) for x in sys.argv[1].split()]
w = [int(x) for x in sys.argv[2].split()]
names = ("full", "flow")
for n, (steps, host, rec, code, disk, viol, insns, recorded) in zip(names, (f, w)):
    print(f"md5sum {n}: {steps} steps, host insns per step {(host - steps) / steps:.1f}, "
          f"wire {rec} record bytes + {code} code bytes = {(rec + code) / steps:.3f} B/insn, "
          f"disk {disk} bytes = {disk / steps:.3f} B/insn; hvt-check violations={viol} insns={insns} "
          f"(the hypervisor recorded {recorded})")
# every window continuity-checked, and the file holds every instruction the hypervisor recorded
ok = all(x[5] == 0 and x[6] == x[7] for x in (f, w))
print(f"md5_check={'pass' if ok else 'FAIL'}")
print(f"hv_insn_per_step_md5={(f[1] - f[0]) / f[0]:.0f} hv_insn_per_step_flow_md5={(w[1] - w[0]) / w[0]:.0f} "
      f"full_bytes_per_insn_md5={(f[2] + f[3]) / f[0]:.3f} flow_bytes_per_insn_md5={(w[2] + w[3]) / w[0]:.3f} "
      f"flow_disk_bytes_per_insn_md5={w[4] / w[0]:.3f} md5_steps_full={f[0]} md5_steps_flow={w[0]}")
sys.exit(0 if ok else 1)
PY
