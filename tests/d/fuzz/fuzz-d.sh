#!/usr/bin/env bash
# fuzz-d.sh FUZZ_DIR SECONDS: each D fuzzer for SECONDS (in turn: 2 cores), seeded with the
# test programs and the regression corpus (regress/NAME, replayed by make test); a crash fails the run and leaves its input in FUZZ_DIR/d-*/crashes.
set -uo pipefail
dir="$1"; secs="${2:-120}"; rc=0
mkdir -p "$dir/d-compile/corpus" "$dir/d-verify/corpus" "$dir/d-compile/crashes" "$dir/d-verify/crashes"
# seeds: the D programs of the tests
for f in tests/d/programs/*.d; do cp "$f" "$dir/d-compile/corpus/seed-$(basename "$f")"; done
for t in d-compile:fuzz_dcompile d-verify:fuzz_dverify; do
  name=${t%%:*}; bin=$dir/${t##*:}
  echo "fuzz-d: $name for $secs s"
  "$bin" -max_total_time="$secs" -artifact_prefix="$dir/$name/crashes/" "$dir/$name/corpus" \
    "tests/d/fuzz/regress/${t##*:}" 2>"$dir/$name/log" || rc=1
  tail -2 "$dir/$name/log"
done
exit $rc
