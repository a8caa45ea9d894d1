# trace.mk - the whole-system tracer's tests.
#   make test-trace   in Bochs: getpid-loop 1000 between two hvtrace marks; the trace must pass
#                     the continuity check (hvt-check), output includes violations=0
TRACE_TEST   := $(BUILD)/test/trace
TRACE_CPUS   ?= 2
TRACE_TIMEOUT ?= 600
comma := ,


# data.bin: the big trace's input (md5sum of 400,000 bytes: ~5.3 M user instructions measured
# with callgrind on the host's busybox, plus exec, reads and exit in the kernel).
$(TEST_GUEST)/data.bin:
	@mkdir -p $(dir $@)
	head -c 400000 /bin/busybox > $@
$(TRACE_TEST)/initrd.img: $(GUEST_OUT)/hvtrace-guest $(TEST_GUEST)/getpid-loop $(GUEST_OUT)/hvtrace-mark $(TEST_GUEST)/trace-run $(TEST_GUEST)/crash $(TEST_GUEST)/reset $(TEST_GUEST)/mmio-touch $(TEST_GUEST)/data.bin tests/guest/nmi-storm tests/guest/init tests/guest/mkinitramfs.sh
	@mkdir -p $(dir $@)
	bash tests/guest/mkinitramfs.sh $@ $(GUEST_OUT)/hvtrace-guest \
	  $(TEST_GUEST)/getpid-loop:bin/getpid-loop $(GUEST_OUT)/hvtrace-mark:bin/hvtrace-mark \
	  $(TEST_GUEST)/trace-run:bin/trace-run $(TEST_GUEST)/crash:bin/crash \
	  $(TEST_GUEST)/reset:bin/reset $(TEST_GUEST)/mmio-touch:bin/mmio-touch \
	  $(TEST_GUEST)/data.bin:data.bin tests/guest/nmi-storm:bin/nmi-storm

# One traced Bochs run: $(call trace_run,DIR,HVT_CMD,OPTION ITEMS,--oracle or nothing,TIMEOUT)
# The "trace =" line comes from `hvt options` (task layout, KASLR anchor, symbols resolved).
define trace_run
	$(VM_RUN) -c $(TRACE_CPUS) -t $(5) --initrd $(TRACE_TEST)/initrd.img --cmd '$(2)' --trace '$(3)' $(4) $(1) || true
endef
TRACE_DEPS := $(HVT_IMPORT) $(HVT_CHECK) $(HVT) $(TRACE_TEST)/initrd.img

.PHONY: test-trace trace-prereqs
trace-prereqs: $(TRACE_DEPS)
	$(MAKE) efi
	$(MAKE) $(TEST_BUILD)/vmlinuz

# test-trace: the getpid-loop window (oracle equality, nesting; the exports of this real trace
# read back as make test-exports reads a generated one); test-trace-big below is the
# >= 5 M instruction trace (each its own line in tests/TESTS).
test-trace: trace-prereqs
	$(call trace_run,$(TRACE_TEST),/bin/getpid-loop$(comma)1000,checkregs=on,--oracle,$(TRACE_TIMEOUT))
	CHECKREGS=1 bash tests/trace/check-trace.sh $(TRACE_TEST)/run $(HVT_IMPORT) $(HVT_CHECK) $(HVT) $(TEST_BUILD)/vmlinuz
	EXPORT_TRACE=$(TRACE_TEST)/run/trace.hvt EXPORT_VMLINUZ=$(TEST_BUILD)/vmlinuz EXPORT_MARKS=1 \
	  bash tests/analyze/test-exports.sh $(HVT)

# The main job (README: make run), the real machine's path: the collector on this host, the
# machine boots hvtrace with its dedicated NIC, the host starts and stops tracing with hvt
# trace, and the analyzer shows the collector's file (tests/net/demo-net.sh).
.PHONY: demo demo-e9
demo: trace-prereqs
	$(MAKE) collector
	BUILD=$(BUILD) DEMO_CPUS=$(TRACE_CPUS) bash tests/net/demo-net.sh

# The same through port 0xE9 and marks in the guest (Bochs's debug port; tests use it).
demo-e9: test-trace
	@echo "=== hypervisor exit summary (port 0xE9) ==="
	@grep -a "^hvtrace:" $(TRACE_TEST)/run/e9.log | tail -n 25
	@echo "=== instructions per function (top 15) ==="
	@$(HVT) analyze --vmlinuz $(TEST_BUILD)/vmlinuz --view funcs $(TRACE_TEST)/run/trace.hvt | head -n 16
	@echo "=== one getpid system call, nested (flowindent) ==="
	@$(HVT) analyze --vmlinuz $(TEST_BUILD)/vmlinuz --view nest $(TRACE_TEST)/run/trace.hvt | \
	  grep -m1 -A40 -- "-> entry_SYSCALL_64" | head -n 40
	@echo "trace file: $(TRACE_TEST)/run/trace.hvt (hvt analyze --help for more views)"

# A long trace: "md5sum /data.bin" from exec to exit (kernel and user, every CPU), which must
# hold at least TRACE_BIG_MIN instructions with no continuity violation and no gap.
TRACE_BIG_MIN ?= 5000000
TRACE_BIG_CMD ?= /bin/trace-run,/bin/md5sum,/data.bin
.PHONY: test-trace-big
test-trace-big: trace-prereqs
	$(call trace_run,$(TRACE_TEST)/big,$(TRACE_BIG_CMD),checkregs=on,,$(TRACE_TIMEOUT))
	bash tests/trace/check-big.sh $(TRACE_TEST)/big/run $(HVT_IMPORT) $(HVT_CHECK) $(TRACE_BIG_MIN)

# Triggers: the trace starts on entry of __x64_sys_getpid by getpid-loop (an EPT execute trap;
# the program's own marks are ignored) and stops when the instruction budget is spent.
TRACE_BUDGET ?= 200000
.PHONY: test-trace-triggers
test-trace-triggers: trace-prereqs
	$(call trace_run,$(TRACE_TEST)/triggers,/bin/getpid-loop$(comma)1000,start=entry at=__x64_sys_getpid comm=getpid-loop budget=$(TRACE_BUDGET) stop_at=panic:oops_begin,,$(TRACE_TIMEOUT))
	bash tests/trace/check-triggers.sh $(TRACE_TEST)/triggers/run $(HVT_IMPORT) $(HVT_CHECK) $(HVT) $(TEST_BUILD)/vmlinuz $(TRACE_BUDGET)

# The same trigger counting passes: tracing starts at the 500th execution of __x64_sys_getpid
# (every earlier pass and every other instruction on that page is stepped over, unseen).
.PHONY: test-trace-passes
test-trace-passes: trace-prereqs
	$(call trace_run,$(TRACE_TEST)/passes,/bin/getpid-loop$(comma)1000,start=passes at=__x64_sys_getpid passes=500 budget=20000,,$(TRACE_TIMEOUT))
	TRIGGER_START_REASON=5 TRIGGER_PASSES=500 bash tests/trace/check-triggers.sh $(TRACE_TEST)/passes/run $(HVT_IMPORT) $(HVT_CHECK) $(HVT) $(TEST_BUILD)/vmlinuz 20000

# NMIs while the whole system is stepped: nmi-storm has the kernel send NMIs to the other CPU
# (sysrq 'l') NMI_ROUNDS times while a getpid loop keeps that CPU busy; the machine, the trace
# and its continuity survive them. (An NMI the hypervisor catches in VMX root waits for the
# guest's STI/MOV SS/NMI blocking to end before it is injected: vmm/nmi_decide.h.)
# The sender waits for the backtraces in mdelay(1) steps, which time dilation makes one TSC
# tick per traced instruction: at the 3.5 GHz Bochs's CPUID gives, 3.5 M stepped instructions
# each (8 rounds: 79 M instructions, 20 minutes). The kernel is told a 100 MHz TSC instead
# (tsc_early_khz), so a round costs what its NMIs and backtraces do.
NMI_ROUNDS ?= 8
NMI_TSC_KHZ ?= 100000
.PHONY: test-trace-nmi
test-trace-nmi: trace-prereqs
	$(subst TEST_CMDLINE='$(TEST_CMDLINE)',TEST_CMDLINE='$(TEST_CMDLINE) tsc_early_khz=$(NMI_TSC_KHZ)',$(call trace_run,$(TRACE_TEST)/nmi,/bin/trace-run$(comma)/bin/nmi-storm$(comma)$(NMI_ROUNDS),,,$(TRACE_TIMEOUT)))
	NMI_ROUNDS=$(NMI_ROUNDS) bash tests/trace/check-nmi.sh $(TRACE_TEST)/nmi/run $(HVT_IMPORT) $(HVT_CHECK)

# Flight recorder + kernel-only filter + auto-stop at panic: a 1 MB ring while crash makes
# getpid calls and then panics the kernel through sysrq; the ring is dumped at panic's entry.
.PHONY: test-trace-crash
test-trace-crash: trace-prereqs
	$(call trace_run,$(TRACE_TEST)/crash,/bin/crash$(comma)3000,flight=1 only=kernel stop_at=panic,,$(TRACE_TIMEOUT))
	bash tests/trace/check-crash.sh $(TRACE_TEST)/crash/run $(HVT_IMPORT) $(HVT_CHECK) $(HVT) $(TEST_BUILD)/vmlinuz

# The machine reset by the guest while it is traced (tests/trace/test-reset.sh): through 0xCF9,
# and by the kernel's reboot=t (a triple fault): the trace ends with that reason and is whole,
# and the machine resets and boots again instead of hanging (docs/security.md, "Conditions a
# guest can reach"); its time is in build/test-times.txt.
.PHONY: test-reset
test-reset: trace-prereqs
	BUILD=$(BUILD) TRACE_CPUS=$(TRACE_CPUS) TEST_CMDLINE="$(TEST_CMDLINE)" bash tests/trace/test-reset.sh

# The hypervisor's one fatal path (tests/trace/test-fatal.sh): a self-test boot traced over the
# NIC asks the hypervisor to panic; every CPU stops, the trace ends with reason 17, the
# collector gets PANIC with the reason and a finished file, the machine resets.
.PHONY: test-fatal
test-fatal: trace-prereqs
	$(MAKE) collector
	BUILD=$(BUILD) TRACE_CPUS=$(TRACE_CPUS) TEST_CMDLINE="$(TEST_CMDLINE)" bash tests/trace/test-fatal.sh

# The trace streamed over the dedicated NIC to hvtrace-collector (tests/net/test-trace-net.sh):
# run A = test-trace's window through the stream, judged by check-trace.sh on the collector's
# trace.hvt (oracle Bochs); run B = tracing started and stopped from the host with hvt trace;
# run C = the collector frozen mid-trace: link failure, auto-stop (reason LINK), recovery.
.PHONY: test-trace-net
test-trace-net: trace-prereqs
	$(MAKE) collector
	BUILD=$(BUILD) TRACE_CPUS=$(TRACE_CPUS) TEST_CMDLINE="$(TEST_CMDLINE)" bash tests/net/test-trace-net.sh

# Scope (trace/step/scope.h): only getpid-loop is single-stepped (scope=comm:getpid-loop) while
# one spinner shares its CPU and another spins on the other CPU (tests/guest/scope-spin.c);
# the oracle Bochs counts getpid-loop's process's instructions on every CPU from the guest's
# own current task (HVT_ORACLE_SCOPE: the per-CPU current_task and task_struct.tgid offsets).
# check-scope.sh: oracle count equal, no other process, violations=0, the exit bound and the
# other CPU's rate ratio.
# The window records control flow alone (record=flow): the oracle count and the continuity
# check hold on that mode here as they do on full records in test-trace.
# SCOPE_ITEMS='record=flow' runs the same without a scope (every CPU stepped: the red run).
TRACE_SCOPE := $(TRACE_TEST)/scope
SCOPE_ITEMS ?= scope=comm:getpid-loop record=flow
$(TRACE_SCOPE)/initrd.img: $(GUEST_OUT)/hvtrace-guest $(TEST_GUEST)/getpid-loop $(TEST_GUEST)/scope-spin tests/guest/init tests/guest/mkinitramfs.sh
	@mkdir -p $(dir $@)
	bash tests/guest/mkinitramfs.sh $@ $(GUEST_OUT)/hvtrace-guest \
	  $(TEST_GUEST)/getpid-loop:bin/getpid-loop $(TEST_GUEST)/scope-spin:bin/scope-spin
.PHONY: test-trace-scope
test-trace-scope: trace-prereqs $(TRACE_SCOPE)/initrd.img
	HVT_ORACLE_SCOPE=$$($(HVT) options $(TEST_BUILD)/vmlinuz | sed -n 's/^task=\([^:]*\):[^:]*:\([^:]*\):.*/\1:\2/p') \
	  $(VM_RUN) -c $(TRACE_CPUS) -t $(TRACE_TIMEOUT) --initrd $(TRACE_SCOPE)/initrd.img \
	  --cmd /bin/scope-spin,1000 --trace '$(SCOPE_ITEMS)' --oracle $(TRACE_SCOPE) || true
	bash tests/trace/check-scope.sh $(TRACE_SCOPE)/run $(HVT_IMPORT) $(HVT_CHECK) $(HVT) $(TEST_BUILD)/vmlinuz
