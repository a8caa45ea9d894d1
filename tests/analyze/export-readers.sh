#!/usr/bin/env bash
# The outside readers make test-exports reads the exports back with, from the npm registry at
# pinned versions, installed once into the cache (never into the repo). Prints the
# node_modules directory on stdout. babeltrace2 and python3-jsonschema come from Debian
# (tests/platform/deps.sh), as do node and npm when the machine has none.
#   speedscope 1.25.0             speedscope's own importers (its release bundle) and its
#                                 file-format schema (dist/release/file-format-schema.json)
#   @tracerbench/trace-model 8.0.0  TracerBench's model of Chrome trace event files: pairs
#                                 B/E per thread, names processes and threads
set -euo pipefail
CACHE="${HVT_CACHE:-$HOME/.cache/hvtrace}"
DIR="$CACHE/npm-exports"
PKGS=(speedscope@1.25.0 @tracerbench/trace-model@8.0.0)
ALL="${PKGS[*]}"
STAMP="$DIR/installed-${ALL//[@\/ ]/_}"
mkdir -p "$DIR"
exec 9> "$DIR/.lock"
flock 9   # make test runs two tests at a time: one installs, the other waits
if [ ! -f "$STAMP" ]; then
  command -v npm > /dev/null || { echo "export-readers: npm missing (tests/platform/deps.sh installs it)" >&2; exit 1; }
  ( cd "$DIR" && npm install --no-save --no-audit --no-fund --prefix "$DIR" "${PKGS[@]}" >&2 )
  touch "$STAMP"
fi
echo "$DIR/node_modules"
