#!/usr/bin/env bash
# task-option.sh HVT VMLINUZ - the tracer's "task=" option for this kernel, from its own BTF
# and kallsyms (hvt syms --layout): task=CURRENT_PERCPU:PID:TGID:COMM offsets.
set -euo pipefail
layout=$("$1" syms "$2" --layout)
get() { awk -v k="$1" '$1 == k {print $2}' <<< "$layout"; }
cur=$(get percpu_current); pid=$(get task_struct.pid); tgid=$(get task_struct.tgid); comm=$(get task_struct.comm)
[ -n "$cur" ] && [ -n "$pid" ] && [ -n "$tgid" ] && [ -n "$comm" ] || { echo "task-option: incomplete layout: $layout" >&2; exit 1; }
echo "task=$cur:$pid:$tgid:$comm"
