#!/usr/bin/env bash
# gen-asm-inc.sh ASM_S OUT.inc - turn the "->NAME value" lines of a *_asm.c file compiled
# with -S (vmm/include/hv_asm.h) into NASM "%define NAME value" lines.
set -euo pipefail
in=$1 out=$2
{
  echo "; generated from $(basename "${in%.s}").c by tools/gen-asm-inc.sh: do not edit"
  sed -n 's/^[[:space:]]*\.ascii[[:space:]]*"->\([A-Za-z_][A-Za-z0-9_]*\) \(-\{0,1\}[0-9][0-9]*\)"$/%define \1 \2/p' "$in"
} > "$out.tmp"
n=$(grep -c '^%define' "$out.tmp" || true)
[ "$n" -gt 0 ] || { echo "gen-asm-inc.sh: no constants in $in" >&2; rm -f "$out.tmp"; exit 1; }
mv "$out.tmp" "$out"
