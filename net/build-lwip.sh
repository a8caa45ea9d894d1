#!/usr/bin/env bash
# Build lwIP (Debian's lwip source package, fetched into the cache by
# tests/platform/fetch-lwip.sh) with the hypervisor's compiler flags into OUT/liblwip.a.
# Only what NO_SYS + raw API TCP over IPv4/Ethernet needs (net/lwip/lwipopts.h).
# Usage: HV_CC=gcc HV_CFLAGS="..." net/build-lwip.sh OUT
set -euo pipefail
OUT="$1"
SRC=$(tests/platform/fetch-lwip.sh)
mkdir -p "$OUT/obj"
ln -sfn "$SRC" "$OUT/src"          # stable include path for net/*.c: $OUT/src/src/include
FILES=(core/init.c core/def.c core/inet_chksum.c core/ip.c core/mem.c core/memp.c core/netif.c
       core/pbuf.c core/stats.c core/tcp.c core/tcp_in.c core/tcp_out.c core/timeouts.c
       core/ipv4/etharp.c core/ipv4/icmp.c core/ipv4/ip4.c core/ipv4/ip4_addr.c
       core/ipv4/ip4_frag.c netif/ethernet.c)
objs=()
for f in "${FILES[@]}"; do
  o="$OUT/obj/$(echo "$f" | tr / _ | sed 's/\.c$/.o/')"
  # shellcheck disable=SC2086
  ${HV_CC:-gcc} $HV_CFLAGS -Wno-sign-compare -Wno-address -Inet/lwip -Inet/lwip/libc \
      -I"$SRC/src/include" -c "$SRC/src/$f" -o "$o"
  objs+=("$o")
done
rm -f "$OUT/liblwip.a"
ar rcs "$OUT/liblwip.a" "${objs[@]}"
echo "build-lwip: $OUT/liblwip.a from $SRC ($(size -t "${objs[@]}" | awk 'END{print $1}') bytes text)" >&2
