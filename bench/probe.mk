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
#   (bench/dfire/prof.sh IMAGE: the D firing's instructions by function, on the host under
#   callgrind, for finding where they go: the action, dif_fire, the lean path)
#   arm_all_s              the host side of arming fbt:::entry (every function): resolving the
#                          description and writing the specs, kernel symbols cached (goal < 1);
#                          arm_all_cold_s the same with an empty cache (the vmlinuz decompressed)
BENCH_PROBE   := $(BUILD)/bench/probe
PROBE_BENCH_N ?= 10000
PROBE_BENCH_ITEMS ?= probe=entry:__x64_sys_getpid probe=return:__x64_sys_getpid probe=addr:__x64_sys_getpid+5

# The D programs the guest loads itself (HVT_HC_PROBE_LOAD_D), compiled for the test kernel.
BENCH_D_COUNT := fbt::vfs_read:entry { @[execname] = count(); }
BENCH_D_QUANT := fbt::vfs_read:entry { @ = quantize(arg2); }
BENCH_D_STACK := fbt::vfs_read:entry { @[stack(10)] = count(); }
BENCH_D_STACK1 := fbt::vfs_read:entry { @[stack(1)] = count(); }
$(BENCH_PROBE)/dcount.img: $(HVT) bench/probe.mk
	@mkdir -p $(dir $@)
	$(MAKE) $(TEST_BUILD)/vmlinuz
	$(HVT) -n '$(BENCH_D_COUNT)' --vmlinuz $(TEST_BUILD)/vmlinuz --image-out $@ --specs-out $(@:.img=.specs)
$(BENCH_PROBE)/dquant.img: $(HVT) bench/probe.mk
	@mkdir -p $(dir $@)
	$(MAKE) $(TEST_BUILD)/vmlinuz
	$(HVT) -n '$(BENCH_D_QUANT)' --vmlinuz $(TEST_BUILD)/vmlinuz --image-out $@ --specs-out $(@:.img=.specs)
BENCH_D_SDT   := sdt:signal::signal_generate { @[execname] = count(); }
BENCH_D_SFBT  := fbt::__send_signal_locked:entry { @[execname] = count(); }
$(BENCH_PROBE)/dsdt.img: $(HVT) bench/probe.mk
	@mkdir -p $(dir $@)
	$(MAKE) $(TEST_BUILD)/vmlinuz
	$(HVT) -n '$(BENCH_D_SDT)' --vmlinuz $(TEST_BUILD)/vmlinuz --image-out $@ --specs-out $(@:.img=.specs)
$(BENCH_PROBE)/dsfbt.img: $(HVT) bench/probe.mk
	@mkdir -p $(dir $@)
	$(MAKE) $(TEST_BUILD)/vmlinuz
	$(HVT) -n '$(BENCH_D_SFBT)' --vmlinuz $(TEST_BUILD)/vmlinuz --image-out $@ --specs-out $(@:.img=.specs)
$(BENCH_PROBE)/dstack.img: $(HVT) bench/probe.mk
	@mkdir -p $(dir $@)
	$(MAKE) $(TEST_BUILD)/vmlinuz
	$(HVT) -n '$(BENCH_D_STACK)' --vmlinuz $(TEST_BUILD)/vmlinuz --image-out $@ --specs-out $(@:.img=.specs)
$(BENCH_PROBE)/dstack1.img: $(HVT) bench/probe.mk
	@mkdir -p $(dir $@)
	$(MAKE) $(TEST_BUILD)/vmlinuz
	$(HVT) -n '$(BENCH_D_STACK1)' --vmlinuz $(TEST_BUILD)/vmlinuz --image-out $@ --specs-out $(@:.img=.specs)
$(BENCH_PROBE)/initrd.img: $(GUEST_OUT)/hvtrace-guest $(TEST_GUEST)/probe-bench tests/guest/init tests/guest/mkinitramfs.sh \
                           $(BENCH_PROBE)/dcount.img $(BENCH_PROBE)/dquant.img $(BENCH_PROBE)/dsdt.img $(BENCH_PROBE)/dsfbt.img \
                           $(BENCH_PROBE)/dstack.img $(BENCH_PROBE)/dstack1.img
	@mkdir -p $(dir $@)
	bash tests/guest/mkinitramfs.sh $@ $(GUEST_OUT)/hvtrace-guest $(TEST_GUEST)/probe-bench:bin/probe-bench \
	  $(BENCH_PROBE)/dcount.img:dcount.img $(BENCH_PROBE)/dcount.specs:dcount.specs \
	  $(BENCH_PROBE)/dquant.img:dquant.img $(BENCH_PROBE)/dquant.specs:dquant.specs \
	  $(BENCH_PROBE)/dsdt.img:dsdt.img $(BENCH_PROBE)/dsdt.specs:dsdt.specs \
	  $(BENCH_PROBE)/dsfbt.img:dsfbt.img $(BENCH_PROBE)/dsfbt.specs:dsfbt.specs \
	  $(BENCH_PROBE)/dstack.img:dstack.img $(BENCH_PROBE)/dstack.specs:dstack.specs \
	  $(BENCH_PROBE)/dstack1.img:dstack1.img $(BENCH_PROBE)/dstack1.specs:dstack1.specs

.PHONY: bench-probe
bench-probe: $(HVT) $(BENCH_PROBE)/initrd.img
	$(MAKE) efi
	$(MAKE) $(TEST_BUILD)/vmlinuz
	$(VM_RUN) -c 1 -t 600 --initrd $(BENCH_PROBE)/initrd.img --append hvt_cpus=1 --trace '$(PROBE_BENCH_ITEMS)' \
	  --cmd /bin/probe-bench,$(PROBE_BENCH_N) $(BENCH_PROBE) || true
	bash bench/record.sh probe bash bench/probe-report.sh $(BENCH_PROBE)/run
	@cold=$$(mktemp -d); t0=$$(date +%s.%N); \
	HVT_KINFO_CACHE=$$cold $(HVT) -n 'fbt:::entry' --vmlinuz $(TEST_BUILD)/vmlinuz --specs $(BENCH_PROBE)/all.specs 2>/dev/null; \
	t1=$$(date +%s.%N); \
	HVT_KINFO_CACHE=$$cold $(HVT) -n 'fbt:::entry' --vmlinuz $(TEST_BUILD)/vmlinuz --specs $(BENCH_PROBE)/all.specs 2>/dev/null; \
	t2=$$(date +%s.%N); rm -rf $$cold; \
	awk -v a=$$t0 -v b=$$t1 -v c=$$t2 -v n=$$(( $$(stat -c %s $(BENCH_PROBE)/all.specs) / 24 )) \
	  'BEGIN { printf "arm_all_probes=%d arm_all_s=%.3f arm_all_cold_s=%.3f\n", n, c - b, b - a }' 
