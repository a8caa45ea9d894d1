# probe.mk - the probe engine (trace/probe.c) in Bochs, 2 CPUs, the pinned kernel.
#   make test-probes   entry and return probes on __x64_sys_getpid while probe-check runs
#                      PROBE_CALLS getpid() calls on each CPU at once: each probe fires exactly
#                      CPUs x PROBE_CALLS times for that process; no EPT exit while the workload
#                      runs (unprobed code on the probed page runs from the shadow); the guest
#                      reads its own bytes through /proc/kcore; a user INT3 still gets SIGTRAP;
#                      with the guest's own kprobe on the function and ftrace patching its
#                      fentry site on and off, the two probes fire twice per kprobe hit; then
#                      PROBE_CYCLES arm/disarm cycles of PROBE_STRESS entry probes while every
#                      CPU runs a workload: no error, no firing after the last disarm, no page
#                      left in any CPU's view
PROBE_TEST  := $(BUILD)/test/probe
PROBE_CALLS ?= 1000
PROBE_CYCLES ?= 1000
PROBE_STRESS ?= 300
PROBE_TIMEOUT ?= 900
PROBE_ITEMS ?= probe=entry:__x64_sys_getpid probe=return:__x64_sys_getpid

$(PROBE_TEST)/initrd.img: $(TEST_BUILD)/guest/hvtrace-guest $(TRACE_TEST)/guest/probe-check $(TRACE_TEST)/guest/probe-stress tests/guest/probe-tests tests/guest/init tests/guest/mkinitramfs.sh
	@mkdir -p $(dir $@)
	bash tests/guest/mkinitramfs.sh $@ $(TEST_BUILD)/guest/hvtrace-guest \
	  $(TRACE_TEST)/guest/probe-check:bin/probe-check $(TRACE_TEST)/guest/probe-stress:bin/probe-stress \
	  tests/guest/probe-tests:bin/probe-tests

.PHONY: test-probes
test-probes: $(HVT) $(PROBE_TEST)/initrd.img
	$(MAKE) efi
	$(MAKE) $(TEST_BUILD)/vmlinuz
	opts=$$($(HVT) options $(TEST_BUILD)/vmlinuz $(PROBE_ITEMS)) && \
	printf '%s\n' 'kernel = \vmlinuz' 'initrd = \initrd.img' \
	  'cmdline = $(TEST_CMDLINE) hvt_mode=cmd hvt_cmd=/bin/probe-tests,$(PROBE_CALLS),$(PROBE_CYCLES),$(PROBE_STRESS)' \
	  'hypervisor = on' 'log = e9' "trace = $$opts" > $(PROBE_TEST)/hvtrace.cfg
	bash tests/platform/make-esp.sh $(PROBE_TEST)/esp.img $(BUILD)/hvtrace.efi $(TEST_BUILD)/vmlinuz \
	  $(PROBE_TEST)/initrd.img $(PROBE_TEST)/hvtrace.cfg
	@# ~20 s to init and the checks, then ~0.3 s of Bochs per arm/disarm cycle of 300 probes
	bash tests/platform/bochs-run.sh -c $(TEST_CPUS) -t $(PROBE_TIMEOUT) $(PROBE_TEST)/esp.img $(PROBE_TEST)/run || true
	bash tests/probe/check-probes.sh $(PROBE_TEST)/run $(PROBE_CALLS) $(TEST_CPUS) $(PROBE_CYCLES)
test-all: test-probes
