#!/usr/bin/env bash
# Run the host analysis unit tests (each prints "N passed, N failed") and print one total.
set -uo pipefail
pass=0; fail=0
for t in "$@"; do
  out="$("$t")"; rc=$?
  echo "$out" | sed '$d'
  last="$(echo "$out" | tail -n1)"
  echo "$(basename "$t"): $last"
  p=$(echo "$last" | awk '{ print $1 }'); f=$(echo "$last" | awk '{ print $3 }')
  pass=$((pass + ${p:-0})); fail=$((fail + ${f:-1}))
  [ $rc = 0 ] || [ "${f:-1}" != 0 ] || fail=$((fail + 1))
done
echo "$pass passed, $fail failed"
[ $fail = 0 ]
