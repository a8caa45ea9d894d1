#!/usr/bin/env bash
# prof.sh IMAGE [N] - instructions per firing of IMAGE's first probe, by function (callgrind, a
# run of N firings less a run of none): where the D firing's instructions go, on the host
# (bench/dfire/dfire_prof.c). Images: build/bench/probe/*.img (make bench-probe makes them).
set -euo pipefail
cd "$(dirname "$0")/../.."
img=$1; n=${2:-10000}; out=build/bench/dfire
mkdir -p $out
make -s build/test/unit-hv/inc/hv_guest.h
dirs="-Itrace -Itrace/step -Itrace/x86 -Itrace/probe -Itrace/dvm -Itrace/unwind -Ihv"
gcc -std=gnu11 -O2 -g -Wall -Wno-unused-parameter -fno-stack-protector -mno-red-zone -mgeneral-regs-only \
  -fno-omit-frame-pointer -fno-builtin -fno-pie -no-pie \
  -include tests/fuzz/host_hv/hv_api.h -include build/test/unit-hv/inc/hv_guest.h -Itests/lib -Ivmm -Ivmm/include -Iinclude $dirs \
  -o $out/dfire_prof bench/dfire/dfire_prof.c tests/fuzz/host_hv/hv_log_host.c tests/fuzz/host_hv/hv_budget_host.c \
  vmm/mem_budget.c vmm/hv_rand.c trace/unwind/kunwind.c \
  $(ls trace/dvm/dif_*.c) -lpthread
valgrind --tool=callgrind --callgrind-out-file=$out/cg.out $out/dfire_prof "$img" "$n" >/dev/null 2>&1
valgrind --tool=callgrind --callgrind-out-file=$out/cg0.out $out/dfire_prof "$img" 0 >/dev/null 2>&1
python3 - "$n" $out/cg.out $out/cg0.out <<'PY'
import re, subprocess, sys
n = int(sys.argv[1])
def per_fn(f):
    out = subprocess.run(['callgrind_annotate', '--inclusive=no', '--threshold=100', f],
                         capture_output=True, text=True).stdout
    d = {}
    for l in out.splitlines():
        m = re.match(r'\s*([\d,]+)\s+\(.*?\)\s+(\S+):(\S+)', l)
        if m:
            d[m.group(3)] = d.get(m.group(3), 0) + int(m.group(1).replace(',', ''))
    return d
a, b = per_fn(sys.argv[2]), per_fn(sys.argv[3])
rows = sorted(((a[k] - b.get(k, 0)) / n, k) for k in a)
rows = [(v, k) for v, k in rows if v >= 0.5]
for v, k in reversed(rows):
    print(f"{v:8.1f} {k}")
print(f"{sum(v for v, _ in rows):8.1f} per firing (the loop in main included)")
PY
