# probe.mk - the probe engine (trace/probe.c) in Bochs, 2 CPUs, the pinned kernel.
#   make test-probes   entry and return probes on __x64_sys_getpid while probe-check runs
#                      PROBE_CALLS getpid() calls on each CPU at once: each probe fires exactly
#                      CPUs x PROBE_CALLS times for that process; no EPT exit while the workload
#                      runs (unprobed code on the probed page runs from the shadow); the guest
#                      reads its own bytes through /proc/kcore; a user INT3 still gets SIGTRAP
PROBE_TEST  := $(BUILD)/test/probe
PROBE_CALLS ?= 1000
PROBE_ITEMS ?= probe=entry:__x64_sys_getpid probe=return:__x64_sys_getpid

$(PROBE_TEST)/initrd.img: $(TEST_BUILD)/guest/hvtrace-guest $(TRACE_TEST)/guest/probe-check tests/guest/init tests/guest/mkinitramfs.sh
	@mkdir -p $(dir $@)
	bash tests/guest/mkinitramfs.sh $@ $(TEST_BUILD)/guest/hvtrace-guest \
	  $(TRACE_TEST)/guest/probe-check:bin/probe-check

.PHONY: test-probes
test-probes: $(HVT) $(PROBE_TEST)/initrd.img
	$(MAKE) efi
	$(MAKE) $(TEST_BUILD)/vmlinuz
	opts=$$($(HVT) options $(TEST_BUILD)/vmlinuz $(PROBE_ITEMS)) && \
	printf '%s\n' 'kernel = \vmlinuz' 'initrd = \initrd.img' \
	  'cmdline = $(TEST_CMDLINE) hvt_mode=cmd hvt_cmd=/bin/probe-check,$(PROBE_CALLS)' \
	  'hypervisor = on' 'log = e9' "trace = $$opts" > $(PROBE_TEST)/hvtrace.cfg
	bash tests/platform/make-esp.sh $(PROBE_TEST)/esp.img $(BUILD)/hvtrace.efi $(TEST_BUILD)/vmlinuz \
	  $(PROBE_TEST)/initrd.img $(PROBE_TEST)/hvtrace.cfg
	bash tests/platform/bochs-run.sh -c $(TEST_CPUS) -t $(BOCHS_TEST_TIMEOUT) $(PROBE_TEST)/esp.img $(PROBE_TEST)/run || true
	bash tests/probe/check-probes.sh $(PROBE_TEST)/run $(PROBE_CALLS) $(TEST_CPUS)
test-all: test-probes
