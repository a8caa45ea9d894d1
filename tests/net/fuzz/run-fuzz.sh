#!/usr/bin/env bash
# Run each net fuzzer for SECONDS (one worker: the machine's 2 cores are shared), starting from
# the seed corpus and the regression corpus (regress/NAME, replayed by make test), keeping
# the grown corpus in DIR/corpus-NAME between runs. A crash leaves
# DIR/crash-* and counts as a failure. Closing line: "fuzz-net: N passed, N failed".
set -uo pipefail
D="$1"; SECS="${2:-60}"
pass=0; fail=0
for name in fuzz_ctl fuzz_coll_parse fuzz_coll_trace; do
  seeds="$D/seeds/${name#fuzz_}"
  corpus="$D/corpus-$name"
  mkdir -p "$corpus"
  log="$D/$name.log"
  "$D/$name" -max_total_time="$SECS" -print_final_stats=1 -artifact_prefix="$D/" \
      -timeout=5 -rss_limit_mb=1024 "$corpus" "$seeds" "$(dirname "$0")/regress/$name" >"$log" 2>&1
  rc=$?
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
  if [ $rc -eq 0 ]; then
    pass=$((pass+1)); echo "fuzz-net: $name ok: ${runs:-?} runs in ${SECS}s, $cov, corpus $(ls "$corpus" | wc -l)"
  else
    fail=$((fail+1)); echo "fuzz-net: $name FAILED (rc $rc), see $log"; grep -m3 -E 'ERROR|SUMMARY' "$log"
  fi
done
echo "fuzz-net: $pass passed, $fail failed"
[ $fail -eq 0 ]
