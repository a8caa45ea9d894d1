#!/usr/bin/env bash
# make fuzz-analyze: run each libFuzzer target (ASan+UBSan) for FUZZ_SECONDS from seed corpora
# (fuzz/make_seeds.py), keeping corpora and any crash artifacts under build/host/fuzz/.
# Usage: fuzz-analyze.sh FUZZ_DIR SECONDS TARGET...   Ends with "N passed, N failed".
set -uo pipefail
DIR="$1"; SECS="$2"; shift 2
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
V="$(bash "$ROOT/tests/platform/fetch-kernel.sh")"
BTF="$(ls "$ROOT"/tests/analyze/fixtures/*/btf.xz | head -n1)"
/usr/bin/python3 "$ROOT/tests/analyze/fuzz/make_seeds.py" "$DIR" "$ROOT/build/host/hvt" "$V" "$BTF" || exit 1
pass=0; fail=0
for t in "$@"; do
  mkdir -p "$DIR/corpus-$t" "$DIR/crash-$t" "$DIR/seeds-$t"
  cp "$ROOT"/tests/analyze/fuzz/regress/fuzz_"$t"/* "$DIR/seeds-$t/" 2> /dev/null   # past findings and corpus sample, kept as seeds
  maxlen=65536; [ "$t" = kimg ] && maxlen=262144
  "$DIR/fuzz_$t" -max_total_time="$SECS" -max_len=$maxlen -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$DIR/crash-$t/" -print_final_stats=1 "$DIR/corpus-$t" "$DIR/seeds-$t" > "$DIR/$t.log" 2>&1
  rc=$?
  runs=$(grep -E '^stat::number_of_executed_units' "$DIR/$t.log" | awk '{ print $2 }')
  cov=$(grep -oE 'cov: [0-9]+' "$DIR/$t.log" | tail -n1)
  crashes=$(ls "$DIR/crash-$t" | wc -l)
  echo "fuzz_$t: ${SECS}s, ${runs:-?} runs, $cov, corpus $(ls "$DIR/corpus-$t" | wc -l), findings $crashes (exit $rc)"
  if [ $rc = 0 ] && [ "$crashes" = 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); tail -n 30 "$DIR/$t.log"; fi
done
echo "$pass passed, $fail failed"
[ $fail = 0 ]
