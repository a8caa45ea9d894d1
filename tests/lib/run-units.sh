#!/usr/bin/env bash
# Run the unit tests given (each ends with "NAME: N passed, M failed", tests/lib/check.h) and print
# one total; a test that exits non-zero or prints no summary counts as a failure.
set -uo pipefail
pass=0; fail=0
for t in "$@"; do
  out="$("$t")"; rc=$?
  echo "$out"
  last="$(echo "$out" | tail -n1)"
  p=$(echo "$last" | sed -n 's/.*\b\([0-9]\+\) passed, \([0-9]\+\) failed.*/\1/p')
  f=$(echo "$last" | sed -n 's/.*\b\([0-9]\+\) passed, \([0-9]\+\) failed.*/\2/p')
  pass=$((pass + ${p:-0})); fail=$((fail + ${f:-1}))
  [ $rc = 0 ] || [ "${f:-1}" != 0 ] || fail=$((fail + 1))
done
echo "$pass passed, $fail failed"
[ $fail = 0 ]
