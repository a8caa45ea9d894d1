# probe.mk - bench-probe: the cost of a hidden probe, measured side by side in one Bochs run
# (1 CPU, so TSC deltas are instruction counts, the hypervisor's included). probe-bench times
# PROBE_BENCH_N getpid() calls per phase (tests/guest/probe-bench.c); bench/probe-report.sh
# prints key=value:
#   exits_per_fire_entry   VM exits per firing of an entry probe (emulated NOP: goal 1)
#   exits_per_fire_other   the worst of the return probe and an address probe (goal <= 2)
#   hv_insn_per_fire       hypervisor instructions per entry firing (goal <= 400)
#   unprobed_exits         exits while unprobed code on the probed page runs (goal 0)
#   guest_insn_per_kprobe  the guest's own cost of a kprobe hit on the same function
#   syscall_slowdown       getpid() with the entry probe armed / without
#   hv_insn_per_fire_count    hypervisor instructions per firing of a D clause
#                             fbt::vfs_read:entry { @[execname] = count(); } (goal <= 800)
#   hv_insn_per_fire_quantize the same for { @ = quantize(arg2); } (goal <= 700)
#   hv_insn_per_fire_stack_key the same for { @[stack(10)] = count(); }: the kernel stack
#                             unwound in the exit with the guest's ORC tables (goal <= 3000
#                             for 10 frames; at vfs_read's entry in read() the unwind ends at
#                             the user registers the system call saved, 4 frames up. Measured
#                             3749 with stack_key1 1710: about 1000 of the difference is the
#                             one guest page walk of the stack page each firing needs, the rest
#                             ~250 a frame)
#   hv_insn_per_fire_stack_key1 the same with stack(1) (the rip alone: the key without the
#                             unwind), so the difference is the unwind's cost
#   guest_insn_per_kprobe_read the guest's own cost of a kprobe hit on vfs_read
#   hv_insn_per_fire_sdt   the same clause at a static tracepoint's site,
#                          sdt:signal::signal_generate (its arguments computed by the recipe),
#                          over kill()s of an ignored signal; hv_insn_per_fire_sdt_fbt the clause
#                          at fbt::__send_signal_locked:entry over the same kill()s, and
#                          sdt_vs_fbt their ratio (goal <= 1.10); exits_per_fire_sdt (goal 1)
#   phase_sum_vs_measured_X  entry, count, quantize and stack_key again with every firing timed
#                          by phase (HVT_HC_PROBE_COST; docs/probes.md "What a firing costs"):
#                          the phases' sum over the guest's measure of the same timed run (goal
#                          within 5%); the phases per firing are printed above the key=values
#   phase_stamps_cost_X    what the stamps themselves cost: the timed run less the untimed one
#   predicted_slowdown_W, measured_slowdown_W, predict_overhead_ratio_W, predict_within_20pct
#                          the performance model
#                          checked (bench/predict-cal.py; docs/probes.md "The probe effect
#                          predicted"): the calibration table fitted to this run's D firings
#                          (bench/results/probecost.cal), then for each workload W (wsys n
#                          getpid()s, wmd5 md5sum of busybox, wfork a fork/exec loop) hvt -e's
#                          prediction from a counting run beside the traced over the untraced
#                          time, and the ratio of their overheads (goal 0.8 .. 1.2); the
#                          workloads run in rounds (counting run timed, traced, untraced), each
#                          run set against the untraced time at its place between the untraced
#                          runs around it (untraced_spread_W: how far they moved)
#   newtask_frac_W, switched_frac_W  of the counting run's firings, those in a new task and those
#                          of another probe than the CPU's last (the hypervisor's tally): the
#                          mix the model prices newtask and keynew by
#   count_run_own_vs_measured_W  the counting run's own ticks as the hypervisor timed them over
#                          the guest's measure of them (the rate takes the former out)
#   predicted_ticks_per_fire_W, measured_ticks_per_fire_W  the same, per traced firing
#   (bench/dfire/prof.sh IMAGE: the D firing's instructions by function, on the host under
#   callgrind, for finding where they go: the action, dif_fire, the lean path)
#   arm_all_s              the host side of arming fbt:::entry (every function): resolving the
#                          description and writing the specs, kernel symbols cached (goal < 1);
#                          arm_all_cold_s the same with an empty cache (the vmlinuz decompressed)
BENCH_PROBE   := $(BUILD)/bench/probe
PROBE_BENCH_N ?= 10000
PROBE_BENCH_ITEMS ?= probe=entry:__x64_sys_getpid probe=return:__x64_sys_getpid probe=addr:__x64_sys_getpid+5

# The D programs the guest loads itself (HVT_HC_PROBE_LOAD_D), compiled for the test kernel,
# each with its model's counts (hvt -e --model: what bench/predict-cal.py fits the calibration to).
BENCH_D_dcount  := fbt::vfs_read:entry { @[execname] = count(); }
BENCH_D_dquant  := fbt::vfs_read:entry { @ = quantize(arg2); }
BENCH_D_dstack  := fbt::vfs_read:entry { @[stack(10)] = count(); }
BENCH_D_dstack1 := fbt::vfs_read:entry { @[stack(1)] = count(); }
BENCH_D_dsdt    := sdt:signal::signal_generate { @[execname] = count(); }
BENCH_D_dsfbt   := fbt::__send_signal_locked:entry { @[execname] = count(); }
# The performance model's calibration (docs/probes.md, "The probe effect predicted"): each
# program differs from another in one class of the model.
BENCH_D_cc1     := fbt::vfs_read:entry { @ = count(); }
BENCH_D_cc4cl   := fbt::vfs_read:entry { @a = count(); } fbt::vfs_read:entry { @b = count(); } \
                   fbt::vfs_read:entry { @c = count(); } fbt::vfs_read:entry { @d = count(); }
BENCH_D_cc4ag   := fbt::vfs_read:entry { @a = count(); @b = count(); @c = count(); @d = count(); }
BENCH_D_ckey    := fbt::vfs_read:entry { @[arg2] = count(); }
BENCH_D_calu    := fbt::vfs_read:entry { @[(((((((((((((((((arg2 * 3 + 1) ^ 5) - 7 * 3 + 1) ^ 5) - 7 * 3 + 1) ^ 5) - 7 * 3 + 1) ^ 5) - 7 * 3 + 1) ^ 5) - 7 * 3 + 1) ^ 5) - 7 * 3 + 1) ^ 5) - 7 * 3 + 1) ^ 5) - 7) & 1023] = count(); }
BENCH_D_csys    := syscall::read:entry { @[arg2] = count(); }
BENCH_D_cvar    := fbt::vfs_read:entry { @[(arg0 + arg1 + arg2 + arg3 + arg4 + arg5 + pid + tid) & 7] = count(); }
# ... and the interpreter's (a clause the lean path does not take: probefunc is a string other
# than execname): the same key as ckey's run by the interpreter, and calu's arithmetic there
BENCH_D_ci1     := fbt::vfs_read:entry { @[probefunc] = count(); }
BENCH_D_ci2     := fbt::vfs_read:entry { @[probefunc, (((((((((((((((((arg2 * 3 + 1) ^ 5) - 7 * 3 + 1) ^ 5) - 7 * 3 + 1) ^ 5) - 7 * 3 + 1) ^ 5) - 7 * 3 + 1) ^ 5) - 7 * 3 + 1) ^ 5) - 7 * 3 + 1) ^ 5) - 7 * 3 + 1) ^ 5) - 7) & 1023] = count(); }
# The model's check: three workloads and their programs.
BENCH_D_wsys    := syscall::getpid:entry { @[pid] = count(); }
BENCH_D_wmd5    := fbt::vfs_read:entry { @ = count(); }
BENCH_D_wfork   := syscall:::entry { @[probefunc] = count(); }
BENCH_D_PROGS   := dcount dquant dsdt dsfbt dstack dstack1 cc1 cc4cl cc4ag ckey calu cvar csys ci1 ci2 wsys wmd5 wfork
$(BENCH_PROBE)/%.img: $(HVT) bench/probe.mk
	@mkdir -p $(dir $@)
	$(MAKE) $(TEST_BUILD)/vmlinuz
	$(HVT) -n '$(BENCH_D_$*)' --vmlinuz $(TEST_BUILD)/vmlinuz --image-out $@ --specs-out $(@:.img=.specs)
	$(HVT) -e --model -n '$(BENCH_D_$*)' --vmlinuz $(TEST_BUILD)/vmlinuz > $(@:.img=.model)
	printf '%s\n' '$(BENCH_D_$*)' > $(@:.img=.d)
$(BENCH_PROBE)/initrd.img: $(GUEST_OUT)/hvtrace-guest $(TEST_GUEST)/probe-bench tests/guest/init tests/guest/mkinitramfs.sh \
                           $(BENCH_D_PROGS:%=$(BENCH_PROBE)/%.img)
	@mkdir -p $(dir $@)
	bash tests/guest/mkinitramfs.sh $@ $(GUEST_OUT)/hvtrace-guest $(TEST_GUEST)/probe-bench:bin/probe-bench \
	  $(foreach d,$(BENCH_D_PROGS),$(BENCH_PROBE)/$(d).img:$(d).img $(BENCH_PROBE)/$(d).specs:$(d).specs)

.PHONY: bench-probe
bench-probe: $(HVT) $(BENCH_PROBE)/initrd.img
	$(MAKE) efi
	$(MAKE) $(TEST_BUILD)/vmlinuz
	$(VM_RUN) -c 1 -t 900 --initrd $(BENCH_PROBE)/initrd.img --append hvt_cpus=1 --trace '$(PROBE_BENCH_ITEMS)' \
	  --cmd /bin/probe-bench,$(PROBE_BENCH_N) $(BENCH_PROBE) || true
	bash bench/record.sh probe bash bench/probe-report.sh $(BENCH_PROBE)/run $(HVT) $(TEST_BUILD)/vmlinuz
	@cold=$$(mktemp -d); t0=$$(date +%s.%N); \
	HVT_KINFO_CACHE=$$cold $(HVT) -n 'fbt:::entry' --vmlinuz $(TEST_BUILD)/vmlinuz --specs $(BENCH_PROBE)/all.specs 2>/dev/null; \
	t1=$$(date +%s.%N); \
	HVT_KINFO_CACHE=$$cold $(HVT) -n 'fbt:::entry' --vmlinuz $(TEST_BUILD)/vmlinuz --specs $(BENCH_PROBE)/all.specs 2>/dev/null; \
	t2=$$(date +%s.%N); rm -rf $$cold; \
	awk -v a=$$t0 -v b=$$t1 -v c=$$t2 -v n=$$(( $$(stat -c %s $(BENCH_PROBE)/all.specs) / 24 )) \
	  'BEGIN { printf "arm_all_probes=%d arm_all_s=%.3f arm_all_cold_s=%.3f\n", n, c - b, b - a }' 
