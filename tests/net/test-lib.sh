# test-lib.sh - what the net/trace-link test scripts share; source it near the top.
#   ok / bad / check WHAT CMD...   count and print results ("ok   ..." / "FAIL ...")
#   PIDS+=(pid)                    background processes killed on exit
#   CLEANUP_DIR=dir                removed on exit (optional)
pass=0; fail=0
ok()   { pass=$((pass+1)); echo "ok   $*"; }
bad()  { fail=$((fail+1)); echo "FAIL $*"; }
check() { local what="$1"; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }
PIDS=()
CLEANUP_DIR=""
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; [ -z "$CLEANUP_DIR" ] || rm -rf "$CLEANUP_DIR"; }
trap cleanup EXIT
