#!/usr/bin/env bash
# fetch-kernel-or-newer.sh PACKAGE VERSION - tests/platform/fetch-kernel.sh, or, when that exact
# version has left the archive (security updates replace each other), the newest package of the
# same series (linux-image-X.Y.*-FLAVOUR-unsigned). Prints the vmlinuz path; says on stderr
# which one it took.
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
if v=$(bash "$here/tests/platform/fetch-kernel.sh" "$1" "$2" 2>/dev/null); then echo "$v"; exit 0; fi
series=$(sed -E 's/^linux-image-([0-9]+\.[0-9]+)\..*/\1/' <<< "$1")
flavour=$(sed -E 's/^linux-image-[0-9.]+(\+deb[0-9]+)?-//' <<< "$1")
pkg=$(apt-cache search --names-only "^linux-image-${series//./\\.}\\..*-${flavour}\$" | awk '{print $1}' | sort -V | tail -1)
[ -n "$pkg" ] || { echo "fetch-kernel-or-newer: neither $1 $2 nor another $series $flavour package" >&2; exit 1; }
ver=$(apt-cache policy "$pkg" | sed -n 's/^ *Candidate: //p')
echo "fetch-kernel-or-newer: $1 $2 is gone; using $pkg $ver" >&2
bash "$here/tests/platform/fetch-kernel.sh" "$pkg" "$ver"
