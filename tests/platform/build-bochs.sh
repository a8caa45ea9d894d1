#!/usr/bin/env bash
# Build Bochs 3.0 (the VT-x test machine, with a working monitor trap flag) from Debian
# trixie's source package into a cache folder outside the repo; reuse it when already built.
# Debian 12's Bochs 2.7 has no working monitor trap flag and must not be used (docs/references.md).
# Prints the install prefix on stdout.
set -euo pipefail
CACHE="${HVT_CACHE:-$HOME/.cache/hvtrace}"
# HVT_BOCHS_ORACLE=1 builds a second Bochs with hvtrace's instruction-count oracle
# (tests/platform/bochs-oracle.cc) compiled in through Bochs's instrumentation interface.
ORACLE="${HVT_BOCHS_ORACLE:-0}"
# HVT_BOCHS_CET=1 builds a third Bochs with CET (--enable-cet), for the CPU models that have it
# (tigerlake, sapphire_rapids, arrow_lake).
CET="${HVT_BOCHS_CET:-0}"
PREFIX="$CACHE/bochs-3.0"
[ "$ORACLE" = 1 ] && PREFIX="$CACHE/bochs-3.0-oracle"
[ "$CET" = 1 ] && PREFIX="$CACHE/bochs-3.0-cet"
HERE="$(cd "$(dirname "$0")" && pwd)"
STAMP="$PREFIX/.built-v5"
[ "$ORACLE" = 1 ] && STAMP="$PREFIX/.built-oracle-v9"
[ "$CET" = 1 ] && STAMP="$PREFIX/.built-cet-v1"
if [ -x "$PREFIX/bin/bochs" ] && [ -f "$STAMP" ]; then echo "$PREFIX"; exit 0; fi
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
SRC_LIST=/etc/apt/sources.list.d/hvtrace-trixie-src.sources
if [ ! -f "$SRC_LIST" ]; then
  # deb-src for trixie with the same mirror as the machine's existing entries.
  uri=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
  [ -n "$uri" ] || uri=http://deb.debian.org/debian
  printf 'Types: deb-src\nURIs: %s\nSuites: trixie\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' "$uri" | $SUDO tee "$SRC_LIST" >/dev/null
  $SUDO apt-get update -qq >&2
fi
WORK="$CACHE/bochs-src"
BUILD_DIR=build
[ "$ORACLE" = 1 ] && BUILD_DIR=build-oracle
[ "$CET" = 1 ] && BUILD_DIR=build-cet
mkdir -p "$WORK"
cd "$WORK"
if [ ! -f bochs_3.0+dfsg.orig.tar.xz ]; then
  # The .dsc download fails with 404 but the tarballs arrive; do not fail on apt's exit status.
  apt-get source --download-only bochs=3.0+dfsg-1 >&2 || true
  [ -f bochs_3.0+dfsg.orig.tar.xz ] || { echo "build-bochs: could not fetch bochs 3.0 source" >&2; exit 1; }
fi
rm -rf "$BUILD_DIR" && mkdir "$BUILD_DIR" && tar -C "$BUILD_DIR" -xf bochs_3.0+dfsg.orig.tar.xz
cd "$BUILD_DIR"/*/
# Bochs 3.0 bug (found by hvtrace, docs/hypervisor.md "Bochs fixes"): with more than one CPU the
# main loop in main.cc catches an exception's longjmp without committing the new RIP (the
# single-CPU cpu_loop does: prev_rip = RIP). The next VM exit that restores RIP from prev_rip -
# the monitor-trap-flag exit after the exception's delivery - then reports the faulting
# instruction instead of the handler: under MTF every guest exception loops forever, pushing
# one frame per round. Commit RIP there exactly as cpu_loop does. The loop's 'processor' (and
# 'executed') change after the setjmp and are not volatile, so after the longjmp they may hold
# their values from the setjmp (C11 7.13.2.1): the commit then went to CPU 0 whichever CPU
# faulted (seen: CPU 0's faults fixed, CPU 1's still looping). Make them volatile.
sed -i 's/^\( *\)Bit32u executed = 0, processor = 0;/\1volatile Bit32u executed = 0, processor = 0; \/\/ hvtrace: volatile across longjmp/' main.cc
grep -q 'hvtrace: volatile across longjmp' main.cc || { echo "build-bochs: the SMP volatile fix did not apply" >&2; exit 1; }
grep -q 'hvtrace: commit RIP' main.cc || sed -i '/can get here only from exception function or VMEXIT/{n;s/^\( *\)BX_CPU(processor)->icount++;/&\n\1BX_CPU(processor)->prev_rip = BX_CPU(processor)->get_instruction_pointer(); \/\/ hvtrace: commit RIP\n\1BX_CPU(processor)->speculative_rsp = false;/}' main.cc
grep -q 'hvtrace: commit RIP' main.cc || { echo "build-bochs: the SMP prev_rip fix did not apply" >&2; exit 1; }
INSTR=()
OPT=(--enable-all-optimizations)
if [ "$CET" = 1 ]; then
  OPT+=(--enable-cet)
  # Bochs 3.0 with CET panics under OVMF before the loader runs ("PAE: asked to set dirty on
  # paging leaf entry with R/W bit clear": the firmware writes a read-only page with CR0.WP=0).
  # A CET CPU never sets D in such an entry (SDM vol. 3A 4.8 "Accessed and Dirty Flags"
  # and the shadow-stack page rules): leave D clear instead of stopping the machine.
  sed -i 's/BX_PANIC(("\(PAE\|Legacy Paging\): asked to set dirty on paging leaf entry with R\/W bit clear"));/set_dirty = false; \/\/ hvtrace: CET paging fix/' cpu/paging.cc
  [ "$(grep -c 'hvtrace: CET paging fix' cpu/paging.cc)" = 2 ] || { echo "build-bochs: the CET paging fix did not apply" >&2; exit 1; }
fi
if [ "$ORACLE" = 1 ]; then
  # --enable-all-optimizations forces handler chaining on, whatever follows it.
  OPT=(--enable-repeat-speedups --enable-fast-function-calls)
  # Bochs's empty stubs, minus the callbacks the oracle defines, plus the oracle itself.
  rm -rf instrument/hvtrace && cp -r instrument/stubs instrument/hvtrace
  sed -i -e '/^void bx_instr_after_execution(/d' -e '/^void bx_instr_vmexit(/d' \
         -e '/^void bx_instr_before_execution(/d' \
         -e '/^void bx_instr_exit_env(/d' instrument/hvtrace/instrument.cc
  echo "#include \"$HERE/bochs-oracle.cc\"" >> instrument/hvtrace/instrument.cc
  # Handler chaining runs a whole trace of instructions per call and reports each one twice
  # to the instrumentation (measured: exactly 2x the count): the oracle build goes without it.
  INSTR=(--enable-instrumentation=instrument/hvtrace)
fi
./configure --prefix="$PREFIX" --enable-x86-64 --enable-vmx=2 --enable-cpu-level=6 --enable-pci \
  --enable-e1000 --enable-smp --with-nogui "${OPT[@]}" --enable-avx --enable-evex \
  --disable-debugger "${INSTR[@]}" >&2
make -j"$(nproc)" >&2
make install >&2
touch "$STAMP"
echo "$PREFIX"
