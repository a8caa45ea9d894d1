# test-lib.sh - what the net/trace-link test scripts share; source it near the top.
#   ok / bad / check WHAT CMD...   count and print results ("ok   ..." / "FAIL ...")
#   PIDS+=(pid)                    background processes killed on exit
#   CLEANUP_DIR=dir                removed on exit (optional)
#   start_coll OUT LOG [ARGS...]   start hvtrace-collector ($COLL, $PORT, $KEY) in the
#                                  background ($CPID), wait until it listens
#   hdr DIR KEY                    a value of the collector's DIR/header.txt
pass=0; fail=0
ok()   { pass=$((pass+1)); echo "ok   $*"; }
bad()  { fail=$((fail+1)); echo "FAIL $*"; }
check() { local what="$1"; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }
PIDS=()
CLEANUP_DIR=""
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; [ -z "$CLEANUP_DIR" ] || rm -rf "$CLEANUP_DIR"; }
trap cleanup EXIT
start_coll() {
  local out="$1" log="$2"; shift 2
  "$COLL" --port "$PORT" --out "$out" --key "$KEY" "$@" 2>"$log" &
  CPID=$!; PIDS+=("$CPID")
  for _ in $(seq 50); do grep -q listening "$log" 2>/dev/null && return 0; sleep 0.1; done
  return 1
}
hdr() { grep "^$2=" "$1/header.txt" 2>/dev/null | head -1 | cut -d= -f2-; }
