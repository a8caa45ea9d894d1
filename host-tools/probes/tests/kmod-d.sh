#!/bin/bash
# kmod-d.sh HVT VMLINUZ MODULES_DIR - D programs on module probes compiled as a user compiles
# them (hvt -e, nothing runs): a module function's args[] and a module's own tracepoint's
# typed from the module's own BTF (split over the kernel's), its return probe, and a kernel
# function still typed from the kernel's; a built-in module's name refused with the reason. Each check fails on a build without them (the old
# hvt: "operator -> must be applied to a pointer", "does not match any probes").
# Closing line: "kmod-d: N passed, N failed".
set -u
HVT="$1" K="$2" M="$3"
pass=0 fail=0
ok() { # ok DESCRIPTION PROGRAM: compiles
  if out=$("$HVT" -e -n "$2" --vmlinuz "$K" --modules "$M" 2>&1); then echo "ok   $1"; pass=$((pass + 1))
  else echo "FAIL $1: $out"; fail=$((fail + 1)); fi
}
bad() { # bad DESCRIPTION PROGRAM MESSAGE: refused with that message
  if out=$("$HVT" -e -n "$2" --vmlinuz "$K" --modules "$M" 2>&1); then echo "FAIL $1: compiled"; fail=$((fail + 1))
  elif grep -q -- "$3" <<< "$out"; then echo "ok   $1"; pass=$((pass + 1))
  else echo "FAIL $1: $out"; fail=$((fail + 1)); fi
}
ok "fbt:brd:brd_do_bvec:entry: args[0] is brd's struct brd_device * (brd's own BTF)" \
   'fbt:brd:brd_do_bvec:entry { trace(args[0]->brd_number); trace(args[5]); }'
ok "fbt:brd:brd_submit_bio:entry: args[0] is a struct bio * (a kernel type, through the module's BTF)" \
   'fbt:brd:brd_submit_bio:entry { trace(args[0]->bi_iter.bi_size); }'
ok "fbt:brd:brd_submit_bio:return is a probe" 'fbt:brd:brd_submit_bio:return { trace(arg1); }'
bad "brd_submit_bio returns void: args[1] out of range" 'fbt:brd:brd_submit_bio:return { trace(args[1]); }' 'out of range'
ok "sdt:nullb::nullb_zone_op (null_blk's own tracepoint): args[0] is a struct nullb_cmd *" \
   'sdt:nullb::nullb_zone_op { trace(args[0]->rq->__data_len); trace(args[1]); }'
bad "sdt:nullb::nullb_zone_op has 3 arguments" 'sdt:nullb::nullb_zone_op { trace(args[3]); }' 'out of range'
ok "fbt:kernel:vfs_read:entry: still the kernel's prototype" 'fbt:kernel:vfs_read:entry { trace(args[0]->f_pos); }'
ok "probes of three modules in one program: each clause's args[] from its module's types (joined)" \
   'fbt:brd:brd_do_bvec:entry { trace(args[0]->brd_number); } fbt:loop:loop_queue_rq:entry { trace(args[1]->rq->__data_len); } sdt:nullb::nullb_zone_op { trace(args[0]->rq->__data_len); }'
bad "one clause on two modules' functions whose args[0] differ: DTrace's error" \
   'fbt:brd:brd_do_bvec:entry,fbt:loop:lo_release:entry { trace(args[0]->brd_number); }' 'args\[0\] has different types'
bad "fbt:ext4:: where ext4 is built in and the kernel records no ranges: the reason, not just no match" \
   'fbt:ext4::entry { }' 'ext4 is built into this kernel'
echo "kmod-d: $pass passed, $fail failed"
[ "$fail" = 0 ]
