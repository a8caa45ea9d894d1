#!/usr/bin/env bash
# check-probes-all.sh OUT SPEC_BYTES - judges test-probes-all's two Bochs runs (probe.mk).
# Closing line: "N passed, N failed".
set -uo pipefail
OUT="$1"; n=$(( $2 / 24 ))
# aliases share an address: one site each
sites=$(python3 -c "import struct,sys; d=open(sys.argv[1],'rb').read(); print(len({struct.unpack_from('<Q',d,i+8)[0] for i in range(0,len(d),24)}))" "$OUT/all.specs")
source "$(dirname "$0")/../net/test-lib.sh"
for run in all small; do
  R="$OUT/$run/run"
  serial=$(tr -d '\r' < "$R/serial.log" 2>/dev/null)
  e9=$(tr -d '\r' < "$R/e9.log" 2>/dev/null)
  arm=$(grep -a '^hvtrace-guest: probe-arm' <<< "$serial" | head -1)
  stat=$(grep -a '^HVT-PROBESTAT' <<< "$e9" | tail -1)
  echo "$run: $arm"
  echo "$run: ${stat:0:160}"
  fired=$(grep -a '^HVT-PROBE id=' <<< "$e9" | grep -vc ' fires=0 ')
  taken=$(sed -n 's/.*probe-arm: \([0-9]*\) of \([0-9]*\) probes taken, \([0-9]*\) sites.*/\1/p' <<< "$arm")
  if [ $run = all ]; then
    check "all: every one of the $n entry probes taken, $sites sites (distinct addresses) armed" \
      grep -q "probe-arm: $n of $n probes taken, $sites sites armed (status 0)" <<< "$arm"
    check "all: $fired functions fired during the workload (> 500)" test "${fired:-0}" -gt 500
  else
    check "small: a region too small stops the arming cleanly with the number armed (${taken:-?} of $n)" \
      bash -c "test '${taken:-0}' -gt 0 && test '${taken:-0}' -lt $n && grep -q 'of $n probes taken' <<< '$arm' && grep -q 'probe-all: arm status 1' <<< \"\$1\"" _ "$serial"
  fi
  check "$run: the workload ran under the probes (status 0)" grep -q "probe-all: workload status 0" <<< "$serial"
  check "$run: after the disarm every page is restored (armed=0 shown=0)" \
    bash -c "grep -q 'armed=0 ' <<< '$stat' && grep -q ' shown=0 ' <<< '$stat'"
  check "$run: clean power-off" test "$(cat "$R/end" 2>/dev/null)" = poweroff
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
