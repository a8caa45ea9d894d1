#!/usr/bin/env bash
# gen-hv-guest.sh OUT: vmm/include/hv_guest.h for host fuzz builds, generated (never kept in the
# repo, so it cannot drift): identical but for hv_vmread's VMREAD, which becomes a call to the
# harness's fake VMCS, hvfuzz_vmread(). Force-included first (-include) like hv_api.h here:
# same include guard, so the real header is skipped wherever vmm/include names it. Fails if
# the VMREAD line is no longer found.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../../.." && pwd)"
out="$1"
mkdir -p "$(dirname "$out")"
sed -e 's|__asm__ volatile("vmread %1, %0" : "=r"(v) : "r"((uint64_t)f) : "cc");|v = hvfuzz_vmread(f);   /* host fuzz build: the fake VMCS */|' \
    -e 's|^static inline uint64_t hv_vmread(enum vmcs_field f)$|uint64_t hvfuzz_vmread(enum vmcs_field f);\n&|' \
    "$ROOT/vmm/include/hv_guest.h" > "$out.tmp"
if ! grep -q 'v = hvfuzz_vmread(f);' "$out.tmp" || grep -q 'vmread %' "$out.tmp"; then
  echo "gen-hv-guest.sh: hv_vmread in vmm/include/hv_guest.h changed: update the substitution" >&2
  rm -f "$out.tmp"; exit 1
fi
mv "$out.tmp" "$out"
