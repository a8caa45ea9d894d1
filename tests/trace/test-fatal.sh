#!/usr/bin/env bash
# test-fatal.sh - the hypervisor's one fatal path, in Bochs with the dedicated NIC and the
# collector: a self-test boot (selftest = on) traces reset's getpid calls (a mark starts it),
# then reset asks the hypervisor to panic (HV_RANGE with RBX = HVT_HC_RANGE_PANIC, honoured in
# self-test boots only). Checked: every other CPU stopped, each traced CPU's window ends with
# STOP reason 17 (hypervisor panic) and hvt-check passes, the collector got PANIC with the
# reason (its log, header.txt's hv_panic=) and finished trace.hvt, and the hypervisor reset the
# machine (Bochs's own log says so), which boots again (the loader starts a second time). Then
# the same with the other CPUs stopped by NMI alone, and with a second panic inside the path;
# last, high MMIO mapped on demand (mmio-touch): 8 GiB of device space read, served by large pages,
# the hypervisor stays up.
# Knobs: BUILD, TRACE_CPUS (2), TEST_CMDLINE, FATAL_TIMEOUT (Bochs wall seconds, 280).
# Closing line: "test-fatal: N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD="${BUILD:-build}"; OUT="$BUILD/test/fatal"
H="$BUILD/host"; COLL="$H/hvtrace-collector"; HVT="$H/hvt"; CHECK="$H/hvt-check"
VMLINUZ="$BUILD/test/vmlinuz"; INITRD="$BUILD/test/trace/initrd.img"; EFI="$BUILD/hvtrace.efi"
CPUS="${TRACE_CPUS:-2}"; TIMEOUT="${FATAL_TIMEOUT:-280}"
CMDLINE="${TEST_CMDLINE:-console=ttyS0 quiet cryptomgr.notests initcall_blacklist=trace_eval_init hvt_cpus=$CPUS}"
PORT="${NET_PORT:-$(( 20000 + RANDOM % 20000 ))}"
KEY="${NET_KEY:-$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')}"
source tests/net/test-lib.sh
for f in "$COLL" "$HVT" "$CHECK" "$VMLINUZ" "$INITRD" "$EFI"; do
  [ -e "$f" ] || { echo "test-fatal: missing $f (run make test-fatal)"; exit 1; }
done
rm -rf "$OUT"; mkdir -p "$OUT"
NETCFG="nic=auto ip=10.0.2.15 netmask=255.255.255.0 gw=10.0.2.2 collector=10.0.2.2:$PORT key=$KEY tsc_khz=50000"
# One self-test boot that ends in the fatal path: boot NAME HOW (reset panic HOW); the run in
# $OUT/NAME/run, the collector's directory $OUT/NAME/coll/current.
boot() {
  local B="$OUT/$1"; mkdir -p "$B"
  start_coll "$B/coll" "$B/collector.log" --exit-on-bye || { echo "test-fatal: the collector did not start"; exit 1; }
  BOCHS_EXPECT_PANIC=1 BOCHS_END_ON_RESET=1 BOCHS_INFO="ignore, pc_system=report, pci2isa=report" \
    BUILD="$BUILD" TEST_CMDLINE="$CMDLINE" bash tests/platform/vm-run.sh -c "$CPUS" -t "$TIMEOUT" --efi "$EFI" \
    --kernel "$VMLINUZ" --initrd "$INITRD" --cmd "/bin/reset,panic,$2" --selftest --trace '' --net "$NETCFG" \
    "$B" > "$B/bochs.out" 2>&1
  for _ in $(seq 20); do kill -0 "$CPID" 2>/dev/null || break; sleep 1; done
  kill -INT "$CPID" 2>/dev/null; wait "$CPID" 2>/dev/null
  echo "test-fatal: $1: Bochs ended by $(cat "$B/run/end" 2>/dev/null) after $(cat "$B/run/wall_seconds" 2>/dev/null) s"
  grep -a "^hvtrace: \(PANIC\|fatal\)\|^net: fatal" "$B/run/e9.log" | head -12
  grep -a "PANIC" "$B/collector.log" | head -3
}
# Bochs logs one hardware reset at power-on: the hypervisor's is the second.
hw_resets() { cat "$1/bochs.log" "$1/bochs.log.tail" 2>/dev/null | grep -a 'Reset(HARDWARE) called' | sort -u | wc -l; }
reset_check() { # NAME RUN
  local r; r=$(hw_resets "$2")
  check "$1: the hypervisor reset the machine ($r hardware resets in Bochs's log: power-on's and one more) and it booted again" \
    test "$(cat "$2/end" 2>/dev/null)" = reset -a "$r" -ge 2
}

# ---- the fatal path as any panic takes it
boot panic 0; R="$OUT/panic/run"; D="$OUT/panic/coll/current"; CLOG="$OUT/panic/collector.log"
check "the guest's request reached the fatal path" \
  grep -aq "^hvtrace: PANIC: self-test: the guest asked for the fatal path" "$R/e9.log"
n=$(grep -ac "^hvtrace: fatal: cpu [0-9]* stopped at a VM exit" "$R/e9.log")
check "every other CPU stopped at a VM exit ($n of $((CPUS - 1)))" test "$n" = $((CPUS - 1))
check "no CPU was left running" bash -c "! grep -aq 'did NOT stop' '$R/e9.log'"
check "net sent PANIC and BYE and the collector acknowledged everything" \
  grep -aq "^net: fatal: PANIC and BYE queued; the collector has everything" "$R/e9.log"
check "the collector logged the reason" grep -aq "hypervisor PANIC: self-test: the guest asked for the fatal path" "$CLOG"
check "header.txt holds the reason (hv_panic=)" grep -q "^hv_panic=self-test: the guest asked" "$D/header.txt"
check "trace.hvt is finished (footer)" test "$(tail -c 32 "$D/trace.hvt" 2>/dev/null | head -c 7)" = HVTFOOT
check "the trace directory verifies" "$COLL" --verify "$D"
"$CHECK" "$D/trace.hvt" > "$OUT/panic/check.out" 2>&1; st=$?
tail -3 "$OUT/panic/check.out"
check "hvt-check passes (violations=0, no gap)" test "$st" = 0
r=$(grep -cE '^cpu [0-9]*:.* stop_reasons=(.*,)?17$' "$OUT/panic/check.out")
check "the traced CPUs' windows end with reason 17, hypervisor panic ($r CPUs)" test "$r" -ge 1
check "the workload's getpid calls are in it" grep -q 'syscalls=[1-9]' "$OUT/panic/check.out"
reset_check panic "$R"

# ---- the other CPUs stopped by NMI alone (sent first, no kick, no INIT round): each stops
# wherever the NMI finds it - inside the hypervisor (the host IDT parks it; its unsent records
# are dropped, the log says so) or, if the NMI went to the guest, at its next exit; either way
# none is left running.
boot nmi 1; R="$OUT/nmi/run"
how='^hvtrace: fatal: cpu [0-9]* stopped \(at a VM exit\|inside the hypervisor (NMI)\)$'
n=$(grep -ac "$how" "$R/e9.log")
check "nmi: every other CPU stopped ($n of $((CPUS - 1)): $(grep -a "$how" "$R/e9.log" | sed 's/.*stopped //' | sort | uniq -c | tr -s ' ' | tr '\n' ';'))" \
  test "$n" = $((CPUS - 1))
check "nmi: no CPU was left running" bash -c "! grep -aq 'did NOT stop' '$R/e9.log'"
if grep -aq "^hvtrace: fatal: cpu [0-9]* stopped inside the hypervisor (NMI)" "$R/e9.log"; then
  check "nmi: the CPU the NMI stopped inside the hypervisor had its unsent records dropped (said so)" \
    grep -aq "^hvtrace: fatal: cpu [0-9]* stopped inside the hypervisor: its unsent records are dropped" "$R/e9.log"
fi
# (unless the NMI caught the other CPU holding net's or the ring's lock: net then says so and
# sends nothing, by design)
check "nmi: the collector got PANIC, or net said a stopped CPU held its lock" \
  bash -c "grep -aq 'hypervisor PANIC: self-test' '$OUT/nmi/collector.log' || grep -aq '^net: fatal: the .* lock is held by a stopped CPU' '$R/e9.log'"
reset_check nmi "$R"

# ---- a second panic inside the fatal path (before the hooks): the hooks are skipped, the
# machine still resets
boot nested 2; R="$OUT/nested/run"
check "nested: the second panic was seen inside the path" \
  grep -aq "^hvtrace: PANIC inside the fatal path (the hooks left are skipped): self-test: a second panic" "$R/e9.log"
check "nested: the first reason is still what the path ends with" \
  grep -aq "^hvtrace: fatal: self-test: the guest asked for the fatal path" "$R/e9.log"
check "nested: the hooks did not run (no PANIC message sent)" bash -c "! grep -aq '^net: fatal' '$R/e9.log'"
reset_check nested "$R"
# ---- high MMIO mapped on demand: mmio-touch reads one page per 2 MiB over 8 GiB from 64 GiB
# up; the hypervisor maps device space with the largest pages nothing maps yet (1 GiB here), so
# every read is served by a few mappings within the bound; the guest then powers off normally.
R2="$OUT/mmio"; rm -rf "$R2"; mkdir -p "$R2"
BUILD="$BUILD" TEST_CMDLINE="$CMDLINE" bash tests/platform/vm-run.sh -c "$CPUS" -t "$TIMEOUT" --efi "$EFI" \
  --kernel "$VMLINUZ" --initrd "$INITRD" --cmd /bin/mmio-touch --advertise - "$R2" > "$R2/bochs.out" 2>&1
echo "test-fatal: mmio run ended by $(cat "$R2/run/end" 2>/dev/null) after $(cat "$R2/run/wall_seconds" 2>/dev/null) s"
touched=$(grep -a "^mmio-touch:" "$R2/run/serial.log" | tr -d '\r'); summary=$(grep -a "high MMIO mapped on demand" "$R2/run/e9.log")
echo "$touched"; echo "$summary"
read -r P T F < <(echo "$summary" | sed -n 's/.*demand: \([0-9]*\) mappings.*, \([0-9]*\) EPT tables; \([0-9]*\) refused.*/\1 \2 \3/p')
check "mmio: all 4096 reads over 8 GiB of device space served (${touched:-nothing})" \
  grep -q "^mmio-touch: 4096 pages read, none faulted" <<< "$touched"
check "mmio: by a few large mappings (${P:-?} mappings <= 16, ${T:-?} tables <= 4, ${F:-?} refused = 0)" \
  test -n "$P" -a "${P:-99}" -le 16 -a "${T:-99}" -le 4 -a "${F:-1}" = 0
check "mmio: no hypervisor panic, the guest powered off" \
  bash -c "! grep -aq '^hvtrace: PANIC' '$R2/run/e9.log' && test \"\$(cat '$R2/run/end')\" = poweroff"
echo "test-fatal: $pass passed, $fail failed"
[ "$fail" = 0 ]
