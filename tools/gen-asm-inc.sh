#!/usr/bin/env bash
# gen-asm-inc.sh ASM_S OUT - turn the "->NAME value" lines of a *_asm.c file compiled with -S
# (vmm/include/hv_asm.h) into constants: NASM "%define NAME value" lines for OUT.inc, Python
# "NAME = value" lines for OUT.py (tools/hvt_abi.c -> build/gen/hvt_abi.py).
set -euo pipefail
in=$1 out=$2
src=$(basename "${in%.s}").c
case "$out" in
  *.py) head="# generated from $src by tools/gen-asm-inc.sh: do not edit" fmt='\1 = \2' ;;
  *)    head="; generated from $src by tools/gen-asm-inc.sh: do not edit" fmt='%define \1 \2' ;;
esac
{
  echo "$head"
  sed -n 's/^[[:space:]]*\.ascii[[:space:]]*"->\([A-Za-z_][A-Za-z0-9_]*\) \(-\{0,1\}[0-9][0-9]*\)"$/'"$fmt"'/p' "$in"
} > "$out.tmp"
n=$(($(wc -l < "$out.tmp") - 1))
[ "$n" -gt 0 ] || { echo "gen-asm-inc.sh: no constants in $in" >&2; rm -f "$out.tmp"; exit 1; }
mv "$out.tmp" "$out"
