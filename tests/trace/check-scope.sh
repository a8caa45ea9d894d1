#!/usr/bin/env bash
# check-scope.sh RUN_DIR HVT_IMPORT HVT_CHECK HVT VMLINUZ - judge a scoped trace run
# (scope=comm:getpid-loop; tests/guest/scope-spin.c: a spinner on getpid-loop's CPU and one on
# the other CPU while getpid-loop 1000 runs between its marks):
#  - the workload said status=0, the machine powered off, every window in the record mode
#    SCOPE_RECORD says (default 1, flow: the trace holds control flow alone, and the continuity
#    and oracle checks below hold on it as they do on full records in test-trace);
#  - hvt-check passes every record (violations=0);
#  - the trace holds exactly the instructions the Bochs oracle counted for getpid-loop's
#    process on every CPU (HVT-ORACLE-SCOPE, its own reading of the guest's current task), and
#    no instruction of another process (hvt analyze's per-process summary);
#  - >= 1000 getpid calls in the nesting view for getpid-loop;
#  - exits per traced instruction <= 1.1 + (context switches into it x SCOPE_K) / traced
#    instructions (HVT-SCOPESTAT: every exit of every CPU in the window, the fast path's too);
#  - the CPU not running getpid-loop ran the guest (its spinner) at >= OTHER_MIN (0.95) of the
#    rate it had untraced: guest instructions per instruction that CPU executed (the oracle's
#    HVT-ORACLE-RATE, traced window over the workload's untraced reference second). In Bochs a
#    CPU's own instruction count is its clock (the spinner's TSC view is printed too, but Bochs
#    advances the shared TSC by the CPUs' average work, so the other CPU's stepping shows there).
# Prints the figures as key=value (bench/step-report.sh reads them).
set -uo pipefail
run=$1; import=$2; check=$3; hvt=$4; vmlinuz=$5
SCOPE_K=${SCOPE_K:-500}; OTHER_MIN=${OTHER_MIN:-0.95}
trace="$run/trace.hvt"
source "$(dirname "$0")/check-lib.sh"
run_start "^getpid-loop:\|^scope-spin:\|^HVT-CMD"
need_status0
need_poweroff
need_record "${SCOPE_RECORD:-1}"
grep -a "^HVT-SCOPESTAT\|^hvtrace: scope" "$run/e9.log"
pid=$(sed -n 's/^getpid-loop: pid=\([0-9]*\).*/\1/p' <<< "$serial")
if "$import" "$run/e9.log" "$trace"; then
  out=$("$check" "$trace"); st=$?
  echo "$out"
  [ $st = 0 ] || why+=("continuity check failed")
  total=$(awk '$1 == "cpu" {sub("insns=", "", $3); n += $3} END {print n + 0}' <<< "$out")
  oracle=$(grep -a "^HVT-ORACLE-SCOPE total=" "$run/bochs.stderr" | tail -1)
  grep -a "^HVT-ORACLE-SCOPE" "$run/bochs.stderr" | tail -4
  on=$(sed -n 's/.*total=\([0-9]*\).*/\1/p' <<< "$oracle")
  echo "oracle: getpid-loop's process retired ${on:-?} instructions in the window (all CPUs); trace has $total records"
  [ -n "$on" ] || why+=("no HVT-ORACLE-SCOPE line: run under the oracle Bochs with HVT_ORACLE_SCOPE set")
  [ "${on:-x}" = "$total" ] || why+=("record count $total != oracle count ${on:-?}")
  others=$("$hvt" analyze --vmlinuz "$vmlinuz" --view summary "$trace" |
           awk -v p="${pid:-x}" '$1 ~ /^[0-9]+$/ && $4 ~ /^[0-9]+$/ && $4 > 0 && $2 != p {print}')
  [ -z "$others" ] || why+=("instructions of other processes in the trace: $(head -3 <<< "$others" | tr '\n' ';')")
  need_getpid_nest "$hvt" "$vmlinuz" "$trace" "$pid"
else
  why+=("trace import failed")
  total=0
fi
ss=$(grep -a "^HVT-SCOPESTAT" "$run/e9.log")
exits=$(sed -n 's/.* exits=\([0-9]*\).*/\1/p' <<< "$ss" | awk '{n += $1} END {print n + 0}')
cs=$(sed -n 's/.* resumes=\([0-9]*\).*/\1/p' <<< "$ss" | awk '{n += $1} END {print n + 0}')
[ -n "$ss" ] || why+=("no HVT-SCOPESTAT line")
tsc_ratio=$(sed -n 's/^scope-spin: other_rate_ratio=\([0-9.]*\).*/\1/p' <<< "$serial")
# The other CPU: the one with fewer records (getpid-loop is pinned).
tcpu=$("$check" "$trace" 2>/dev/null | awk '$1 == "cpu" {sub(":", "", $2); sub("insns=", "", $3); if ($3 + 0 > m) {m = $3 + 0; c = $2}} END {print c + 0}')
rates=$(grep -a "^HVT-ORACLE-RATE" "$run/bochs.stderr")
echo "$rates"
read -r ratio same <<< "$(awk -v t="$tcpu" '{for (i = 2; i <= NF; i++) {split($i, kv, "="); f[kv[1]] = kv[2]}
  r = f["guest"] / (f["all"] ? f["all"] : 1); if (f["cpu"] == t) s[f["window"]] = r; else o[f["window"]] = r}
  END {printf "%.4f %.4f\n", (o["ref"] ? o["scope"] / o["ref"] : 0), (s["ref"] ? s["scope"] / s["ref"] : 0)}' <<< "$rates")"
echo "spinner's own TSC view: other_tsc_rate_ratio=${tsc_ratio:-?} (traced CPU $tcpu)"
python3 - "$exits" "$total" "$cs" "$SCOPE_K" "${ratio:-0}" "${same:-0}" "$OTHER_MIN" <<'PY' || why+=("scope figures out of bounds (above)")
import sys
exits, total, cs, k, ratio, same, omin = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6]), float(sys.argv[7])
epi = exits / total if total else float('inf')
bound = 1.1 + cs * k / total if total else 0
per_switch = (exits - total) / cs if cs else float('nan')
print(f"exits_per_traced_insn={epi:.4f} bound={bound:.4f} (1.1 + context_switches x {k:g} / traced) "
      f"context_switches={cs} traced_insns={total} exits={exits} extra_exits_per_switch={per_switch:.1f}")
print(f"other_rate_ratio={ratio:.4f} (goal >= {omin}) traced_cpu_guest_share_ratio={same:.4f}")
ok = total > 0 and epi <= bound and ratio >= omin
sys.exit(0 if ok else 1)
PY
verdict check-scope
