#!/usr/bin/env bash
# refresh-regress.sh FUZZ_DIR SECONDS NAME[:SEEDDIR...]...: grow the regression corpus of each
# fuzzer: run it SECONDS from its regress dir (and any SEEDDIRs), minimize what it found with
# -merge=1, and add a sample (at most MAX_FILES files of at most MAX_BYTES each, by default 40
# and 32768) to tests/*/fuzz/regress/NAME/. Crash inputs are kept in FUZZ_DIR/crash-NAME/ and
# stop the script: fix the bug, then add the input to the regress dir by hand.
set -uo pipefail
D="$1"; SECS="$2"; shift 2
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
MAX_FILES="${MAX_FILES:-40}"; MAX_BYTES="${MAX_BYTES:-32768}"
for arg in "$@"; do
  IFS=: read -r name seeddirs <<< "$arg"
  reg=$(ls -d "$ROOT"/tests/*/fuzz/regress/"$name" 2>/dev/null | head -1)
  [ -n "$reg" ] || { echo "$name: no tests/*/fuzz/regress/$name/ (create it first)"; exit 1; }
  camp="$D/refresh-$name"; crash="$D/crash-$name"; merged="$D/refresh-$name-merged"
  rm -rf "$camp" "$merged"; mkdir -p "$camp" "$crash" "$merged"
  "$D/$name" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -max_len="$MAX_BYTES" \
      -artifact_prefix="$crash/" -print_final_stats=1 "$camp" "$reg" ${seeddirs//:/ } > "$D/refresh-$name.log" 2>&1
  rc=$?
  if [ $rc != 0 ] || [ -n "$(ls -A "$crash")" ]; then
    echo "$name: FINDING (rc $rc): $(ls "$crash" | head -3) - see $D/refresh-$name.log"; exit 1
  fi
  "$D/$name" -merge=1 -rss_limit_mb=2048 -timeout=10 "$merged" "$camp" > "$D/refresh-$name-merge.log" 2>&1
  before=$(ls "$reg" | wc -l)
  find "$merged" -type f -size -"$((MAX_BYTES + 1))"c -print0 | shuf -z -n "$MAX_FILES" |
    xargs -0 -r -I{} cp {} "$reg/"
  echo "$name: $(grep -o 'stat::number_of_executed_units: *[0-9]*' "$D/refresh-$name.log" | grep -o '[0-9]*$') runs, $(grep -o 'cov: [0-9]*' "$D/refresh-$name.log" | tail -1), merged $(ls "$merged" | wc -l), regress $before -> $(ls "$reg" | wc -l) files"
done
