#!/usr/bin/env bash
# dtu-survey.sh - run dtrace-utils' own D unit tests against hvt as a user would, and say which
# pass (the survey of docs/d-language.md, "dtrace-utils' unit tests"; not part of make test:
# it needs a dtrace-utils checkout and takes about 15 minutes).
# Usage: tests/d/dtu-survey.sh DTRACE_UTILS_DIR OUT_DIR [BUILD_HOST_DIR [VMLINUZ]]
# Picks DTRACE_UTILS_DIR/test/unittest/{aggs,arrays,...}/{tst,err}.*.d that need only BEGIN,
# END, ERROR, tick-N and profile-N (no other provider, $target, @@trigger, @@skip, @@xfail,
# .sh or .x beside them); runs each through hvtrace-collector and fake_hv (2000 synthetic
# firings) with hvt -s TEST.d [its @@runtest-opts] --tsc-khz 1000000; compares stdout with the
# .r's part before "-- @@stderr --" as dtrace-utils' runtest does (sorted unless @@nosort, the
# CPU and ID columns dropped). err.* pass when hvt fails with "error" on stderr, tst.* without
# a .r when hvt exits 0 (DTU_AREAS="arrays assocs" runs those areas only). Writes
# OUT_DIR/results (PASS/FAIL lines) and OUT_DIR/AREA/NAME.{out,err,rc}.
set -uo pipefail
DTU="$1"; OUT="$2"; B="${3:-build/host}"; VM="${4:-build/test/vmlinuz}"
B=$(cd "$B" && pwd); VM=$(cd "$(dirname "$VM")" && pwd)/$(basename "$VM")
KEY=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
AREAS="${DTU_AREAS:-aggs arrays assocs variables scalars options begin end exit clauses tick-n predicates error arithmetic multiaggs printa drops operators inline pragma}"
mkdir -p "$OUT"; : > "$OUT/results"
cd "$DTU/test/unittest" || exit 1
bad='\b(syscall|fbt|pid\$|pid[0-9]|proc|sched|io|lockstat|usdt|rawtp|sdt|ip|tcp|udp|cpc|rawfbt|perf)\s*:|\$target|@@trigger|@@skip|@@xfail|uregs|\bcurpsinfo|curlwpsinfo|@@reinvoke'
for f in $(for a in $AREAS; do find "$a" -name 'tst.*.d' -o -name 'err.*.d'; done | sort); do
  base=${f%.d}
  [ -e "$base.sh" ] || [ -e "$base.x" ] && continue
  grep -qP "$bad" "$f" && continue
  grep -qE '\b(BEGIN|END|tick-|profile-)' "$f" || continue
  o="$OUT/${f%.d}"; mkdir -p "$(dirname "$o")"
  d=$(mktemp -d /tmp/dtu-survey.XXXXXX); port=$((20000 + RANDOM % 20000))
  "$B/hvtrace-collector" --port $port --out "$d" --key $KEY --exit-on-bye >"$d/coll.log" 2>&1 & cp=$!
  for _ in $(seq 50); do grep -q listening "$d/coll.log" 2>/dev/null && break; sleep 0.05; done
  "$B/fake_hv" --port $port --key $KEY --cpus 2 --d 2000 --timeout 30 >"$d/fake.log" 2>&1 & fp=$!
  for _ in $(seq 50); do grep -q connection "$d/coll.log" && break; sleep 0.1; done
  opts=$(sed -n 's/.*@@runtest-opts: *\(.*[^ ]\) *\*\/.*/\1/p; s/.*@@runtest-opts: *\(.*[^ ]\) *$/\1/p' "$f" | head -1)
  # shellcheck disable=SC2086  # the test's options, one per word
  timeout 40 "$B/hvt" -s "$f" $opts --tsc-khz 1000000 --vmlinuz "$VM" -d "$d" --duration 3 --drain 10 \
    >"$o.out" 2>"$o.err"; echo $? >"$o.rc"
  kill $fp $cp 2>/dev/null; wait $fp $cp 2>/dev/null; rm -rf "$d"
  if [ "${f##*/err.}" != "$f" ]; then
    if [ "$(cat "$o.rc")" != 0 ] && grep -q error "$o.err"; then r=PASS; else r=FAIL; fi
  elif [ -f "$base.r" ]; then
    sed '/^-- @@stderr --$/,$d' "$base.r" >"$o.want"
    grep -q "^CPU     ID" "$o.out" && sed -i -E 's/^(CPU     ID|[ 0-9]{3} [ 0-9]{6}) //' "$o.out"
    srt=sort; grep -q "@@nosort" "$f" && srt=cat
    if cmp -s <($srt "$o.want") <($srt "$o.out"); then r=PASS; else r=FAIL; fi
  else
    if [ "$(cat "$o.rc")" = 0 ]; then r=PASS; else r=FAIL; fi
  fi
  echo "$r $f" | tee -a "$OUT/results"
done
echo "dtu-survey: $(grep -c '^PASS' "$OUT/results") of $(grep -c . "$OUT/results") passed"
