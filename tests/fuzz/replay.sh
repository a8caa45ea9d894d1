#!/usr/bin/env bash
# replay.sh FUZZ_DIR NAME...: run every input of each fuzzer's regression corpus
# (tests/*/fuzz/regress/NAME/*) and seed corpus once through FUZZ_DIR/NAME (a libFuzzer binary
# given files runs each once and stops at the first crash or sanitizer report). Seeds: the net
# fuzzers' (FUZZ_DIR/seeds/, tests/net/fuzz/make-seeds.sh), the D tests' programs
# (tests/d/programs/*.d).
# A fuzzer without a regression corpus fails: every fuzzer keeps one.
# Closing line: "test-fuzz-replay: N passed, N failed (M inputs)".
set -uo pipefail
D="$1"; shift
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
S="$D/replay-seeds"
rm -rf "$S"; mkdir -p "$S/d"
cp "$ROOT"/tests/d/programs/*.d "$S/d/"
seeds_of() {
  case "$1" in
    fuzz_ctl) echo "$D/seeds/ctl" ;;
    fuzz_coll_parse) echo "$D/seeds/coll_parse" ;;
    fuzz_coll_trace) echo "$D/seeds/coll_trace" ;;
    fuzz_dcompile) echo "$S/d" ;;
    *) echo "$D/seeds-$1" ;;          # generated seeds (fuzz.mk), where a fuzzer has them
  esac
}
pass=0; fail=0; total=0
for name in "$@"; do
  bin="$D/$name"
  dirs=("$ROOT"/tests/*/fuzz/regress/"$name")
  seeds=$(seeds_of "$name")
  [ -n "$seeds" ] && [ -d "$seeds" ] && dirs+=("$seeds")
  list="$D/replay-$name.list"
  find "${dirs[@]}" -maxdepth 1 -type f -print0 2>/dev/null > "$list"
  n=$(tr -cd '\0' < "$list" | wc -c)
  if [ ! -x "$bin" ]; then
    fail=$((fail+1)); echo "FAIL $name: no binary $bin"; continue
  fi
  if ! ls -d "$ROOT"/tests/*/fuzz/regress/"$name" >/dev/null 2>&1; then
    fail=$((fail+1)); echo "FAIL $name: no regression corpus tests/*/fuzz/regress/$name/"; continue
  fi
  log="$D/replay-$name.log"
  # -runs is not given: with files as arguments libFuzzer runs each exactly once
  if xargs -0 -n 500 "$bin" -rss_limit_mb=2048 -timeout=20 < "$list" > "$log" 2>&1; then
    ran=$(grep -c '^Executed ' "$log")
    if [ "$ran" = "$n" ]; then
      pass=$((pass+1)); echo "ok   $name: $n inputs replayed"
    else
      fail=$((fail+1)); echo "FAIL $name: $ran of $n inputs ran (see $log)"
    fi
  else
    fail=$((fail+1)); echo "FAIL $name: an input crashed (see $log)"
    grep -m3 -E 'ERROR|SUMMARY' "$log"
    echo "     the input: $(grep 'Running:' "$log" | tail -n 1)"
  fi
  total=$((total + n))
done
echo "test-fuzz-replay: $pass passed, $fail failed ($total inputs)"
[ "$fail" = 0 ]
