# step.mk - bench-step: the cost of single-stepping, measured in one Bochs run (1 CPU, so the
# TSC counts instructions exactly: docs/references.md). The guest's tickbench runs a busy loop untraced,
# then traced between hvtrace marks, with a 10 kHz interval timer.
#   hv_insn_per_step  hypervisor instructions per traced instruction (host TSC over the
#                     window minus the guest's instructions, per step)
#   bytes_per_insn    on disk (zstd chunks, as stored); wire = raw records + code dictionary
#   tick_ratio        timer interrupts per traced instruction / per untraced instruction
#   *_md5             busybox md5sum of a 1 MiB file (fork to wait), traced in two more boots:
#                     record=full and record=flow. hv_insn_per_step_md5 (full) and
#                     hv_insn_per_step_flow_md5, full_bytes_per_insn_md5 and
#                     flow_bytes_per_insn_md5 (wire: records + the boot's code dictionary),
#                     flow_disk_bytes_per_insn_md5 (zstd); hvt-check's continuity of both
#   exits_per_traced_insn, other_rate_ratio (and context_switches, extra_exits_per_switch):
#                     the scoped trace (scope=comm:getpid-loop, 2 CPUs) of make test-trace-scope's
#                     run, bench/step-scope-report.sh (bench/results/step-scope.txt)
#   bochs_insn_per_step  Bochs's own cost of one step (VM exit + entry, its full TLB flush
#                     each way) in emulated-instruction equivalents: wall time per step over
#                     wall time per untraced instruction, minus the hypervisor's and the
#                     guest's instructions (wall clock from bochs-run.sh stamps, 0.2 s steps)
BENCH_STEP     := $(BUILD)/bench/step
BENCH_UNTRACED ?= 500000000
BENCH_TRACED   ?= 1000000
BENCH_MD5      ?= 1048576

$(BENCH_STEP)/initrd.img: $(GUEST_OUT)/hvtrace-guest $(TEST_GUEST)/tickbench tests/guest/init tests/guest/mkinitramfs.sh
	@mkdir -p $(dir $@)
	bash tests/guest/mkinitramfs.sh $@ $(GUEST_OUT)/hvtrace-guest $(TEST_GUEST)/tickbench:bin/tickbench

.PHONY: bench-step
bench-step: $(HVT_IMPORT) $(HVT) $(HVT_CHECK) $(BENCH_STEP)/initrd.img
	$(MAKE) efi
	$(MAKE) $(TEST_BUILD)/vmlinuz
	@# the task layout: tickbench's marks come from root in user mode (hc_user=root)
	BOCHS_STAMP='^TICKBENCH-PHASE|^hvtrace: cpu [0-9]+: trace (start|stop)|^HVT-STEPSTAT' \
	  $(VM_RUN) -c 1 -t 900 --initrd $(BENCH_STEP)/initrd.img --append hvt_cpus=1 --trace '' \
	  --cmd /bin/tickbench,$(BENCH_UNTRACED),$(BENCH_TRACED) $(BENCH_STEP) || true
	@# md5sum of BENCH_MD5 bytes, one boot with full records and one with flow records (a
	@# window's code dictionary is its boot's alone, so the wire figures hold it whole)
	$(VM_RUN) -c 1 -t 900 --initrd $(BENCH_STEP)/initrd.img --append hvt_cpus=1 --trace '' \
	  --cmd /bin/tickbench,0,0,$(BENCH_MD5) $(BENCH_STEP)/md5full || true
	$(VM_RUN) -c 1 -t 900 --initrd $(BENCH_STEP)/initrd.img --append hvt_cpus=1 --trace 'record=flow' \
	  --cmd /bin/tickbench,0,0,$(BENCH_MD5) $(BENCH_STEP)/md5flow || true
	bash bench/record.sh step bash bench/step-report.sh $(BENCH_STEP)/run $(HVT_IMPORT) \
	  $(BENCH_STEP)/md5full/run $(BENCH_STEP)/md5flow/run $(HVT_CHECK)
	$(MAKE) bench-step-scope

# The scoped figures alone (2 CPUs): make test-trace-scope's run, reported.
.PHONY: bench-step-scope
bench-step-scope:
	$(MAKE) test-trace-scope || true
	bash bench/record.sh step-scope bash bench/step-scope-report.sh $(TRACE_SCOPE)/run $(HVT_IMPORT) $(HVT_CHECK) $(HVT) $(TEST_BUILD)/vmlinuz
