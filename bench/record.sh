#!/usr/bin/env bash
# record.sh NAME CMD... - run one benchmark's report command, show its output, keep it in
# build/bench/NAME.out, and write its key=value lines to bench/results/NAME.txt with when,
# on what commit and on what machine they were measured; then regenerate docs/measured.md,
# the one table of measured numbers the README and docs point to (tools/measured.py).
set -uo pipefail
cd "$(dirname "$0")/.."
name="$1"; shift
mkdir -p build/bench bench/results
"$@" 2>&1 | tee "build/bench/$name.out"
rc=${PIPESTATUS[0]}
kv=$(grep -E '^([A-Za-z0-9_]+=[^ ]+)( [A-Za-z0-9_]+=[^ ]+)*$' "build/bench/$name.out")
if [ "$rc" = 0 ] && [ -n "$kv" ]; then
  { echo "# date=$(date -u +%Y-%m-%d) commit=$(git rev-parse --short HEAD 2>/dev/null || echo none)$(git diff --quiet 2>/dev/null || echo +changes)" \
         "cpu=\"$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)\" cores=$(nproc)"
    echo "$kv"; } > "bench/results/$name.txt"
  python3 tools/measured.py bench/results docs/measured.md
else
  echo "record: $name gave no key=value line (status $rc): bench/results/$name.txt left as it was" >&2
fi
exit "$rc"
