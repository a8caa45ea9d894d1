#!/usr/bin/env bash
# Seed corpora for the net fuzzers: valid streams and control requests written by the unit
# test binary (NET_SEED_DIR), so the fuzzers start from inputs that pass framing and tags.
set -euo pipefail
B="$1"
mkdir -p "$B/fuzz/seeds/coll_parse" "$B/fuzz/seeds/ctl"
make -s "$B/test_net" >/dev/null
NET_SEED_DIR="$B/fuzz/seeds" "$B/test_net" >/dev/null
ls "$B/fuzz/seeds/coll_parse" "$B/fuzz/seeds/ctl" >/dev/null
