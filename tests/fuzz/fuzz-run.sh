#!/usr/bin/env bash
# fuzz-run.sh FUZZ_DIR SECONDS NAME...: each fuzzer for SECONDS (in turn: the cores are shared),
# its corpus kept in FUZZ_DIR/corpus-NAME between runs, seeded with its regression corpus
# (tests/*/fuzz/regress/NAME/) and its generated seeds (FUZZ_DIR/seeds-NAME/, if any). A crash
# leaves FUZZ_DIR/crash-NAME/ and fails the run.
# Closing line: "fuzz-run: N passed, N failed".
set -uo pipefail
D="$1"; SECS="$2"; shift 2
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
pass=0; fail=0
for name in "$@"; do
  corpus="$D/corpus-$name"; crash="$D/crash-$name"
  mkdir -p "$corpus" "$crash"
  log="$D/$name.log"
  seeds=(); [ -d "$D/seeds-$name" ] && seeds=("$D/seeds-$name")
  "$D/$name" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$crash/" "$corpus" "$ROOT"/tests/*/fuzz/regress/"$name" "${seeds[@]}" > "$log" 2>&1
  rc=$?
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
  if [ $rc = 0 ] && [ -z "$(ls -A "$crash")" ]; then
    pass=$((pass+1)); echo "fuzz-run: $name ok: ${runs:-?} runs in ${SECS}s, $cov, corpus $(ls "$corpus" | wc -l)"
  else
    fail=$((fail+1)); echo "fuzz-run: $name FAILED (rc $rc), findings in $crash, see $log"
    grep -m3 -E 'ERROR|SUMMARY' "$log"
  fi
done
echo "fuzz-run: $pass passed, $fail failed"
[ "$fail" = 0 ]
