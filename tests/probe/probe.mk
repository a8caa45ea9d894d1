# probe.mk - the probe engine (trace/probe/probe.c) in Bochs, 2 CPUs, the pinned kernel.
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
	  'hypervisor = on' 'advertise = on' 'log = e9' "trace = $$opts" > $(PROBE_TEST)/hvtrace.cfg
	bash tests/platform/make-esp.sh $(PROBE_TEST)/esp.img $(BUILD)/hvtrace.efi $(TEST_BUILD)/vmlinuz \
	  $(PROBE_TEST)/initrd.img $(PROBE_TEST)/hvtrace.cfg
	@# ~20 s to init and the checks, then ~0.3 s of Bochs per arm/disarm cycle of 300 probes
	bash tests/platform/bochs-run.sh -c $(TEST_CPUS) -t $(PROBE_TIMEOUT) $(PROBE_TEST)/esp.img $(PROBE_TEST)/run || true
	bash tests/probe/check-probes.sh $(PROBE_TEST)/run $(PROBE_CALLS) $(TEST_CPUS) $(PROBE_CYCLES)
test-all: test-probes

# test-probe-coll: live probes through the collector against fake_hv (host only, ~15 s): arming
# in batches, one line per firing, counts, losses reported (tests/probe/test-probe-coll.sh).
.PHONY: test-probe-coll
test-probe-coll: $(HVT) $(HOST_BUILD)/hvtrace-collector $(HOST_BUILD)/fake_hv
	$(MAKE) $(TEST_BUILD)/vmlinuz
	bash tests/probe/test-probe-coll.sh $(HOST_BUILD) $(TEST_BUILD)/vmlinuz
test-all: test-probe-coll

# test-probes-net: the same live path in Bochs through the hypervisor's own NIC: exact counts
# (the guest makes PROBE_NET_CALLS getppid() calls per CPU once armed: hvt -n prints exactly
# CPUs x that many getppid:entry firings, none lost) and profile-997 over md5sum with a
# flame graph of the ORC-unwound stacks (test-probes-net.sh).
PROBE_NET_CALLS ?= 1000
# probe-ustack keeps frame pointers: the profile run unwinds its user stacks by them.
$(TRACE_TEST)/guest/probe-ustack: TRACE_GUEST_CFLAGS += -fno-omit-frame-pointer
$(TRACE_TEST)/guest/probe-ustack: tests/probe/probe.mk
$(BUILD)/test/probe-net/initrd.img: $(TEST_BUILD)/guest/hvtrace-guest $(TRACE_TEST)/guest/probe-net $(TRACE_TEST)/guest/probe-user $(TRACE_TEST)/guest/probe-ustack $(TRACE_TEST)/guest/d-work $(TRACE_TEST)/guest/getpid-loop tests/guest/probe-profile-run tests/guest/init tests/guest/mkinitramfs.sh
	@mkdir -p $(dir $@)
	bash tests/guest/mkinitramfs.sh $@ $(TEST_BUILD)/guest/hvtrace-guest $(TRACE_TEST)/guest/probe-net:bin/probe-net \
	  $(TRACE_TEST)/guest/probe-user:bin/probe-user $(TRACE_TEST)/guest/probe-ustack:bin/probe-ustack \
	  $(TRACE_TEST)/guest/d-work:bin/d-work $(TRACE_TEST)/guest/getpid-loop:bin/getpid-loop \
	  tests/guest/probe-profile-run:bin/probe-profile-run
.PHONY: test-probes-net
test-probes-net: $(HVT) $(BUILD)/test/probe-net/initrd.img
	$(MAKE) efi collector
	$(MAKE) $(TEST_BUILD)/vmlinuz
	BUILD=$(BUILD) TRACE_CPUS=$(TEST_CPUS) PROBE_NET_CALLS=$(PROBE_NET_CALLS) TEST_CMDLINE="$(TEST_CMDLINE)" \
	  bash tests/probe/test-probes-net.sh
# test-probes-kernels: both runs again on other kernels: the generic one the analysis tests
# fetch (another version and configuration: XZ image, more drivers built in) and Debian's 6.12
# cloud kernel (backports: IBT build - functions start with endbr64 -, call padding, return
# thunks, 6.4+ kallsyms and ORC layouts).
PROBE_KERNELS ?= linux-image-6.1.0-47-amd64-unsigned:6.1.170-3 \
                 linux-image-6.12.117+deb12-cloud-amd64-unsigned:6.12.117-1~deb12u1
.PHONY: test-probes-kernels
test-probes-kernels: $(HVT) $(BUILD)/test/probe-net/initrd.img
	$(MAKE) efi collector
	set -e; for k in $(PROBE_KERNELS); do \
	  v=$$(bash tests/probe/fetch-kernel-or-newer.sh $${k%%:*} $${k#*:}); echo "== $$v"; \
	  BUILD=$(BUILD) TRACE_CPUS=$(TEST_CPUS) PROBE_NET_CALLS=$(PROBE_NET_CALLS) TEST_CMDLINE="$(TEST_CMDLINE)" \
	    PROBE_VMLINUZ=$$v PROBE_NET_OUT=$(BUILD)/test/probe-net/$${k%%:*} bash tests/probe/test-probes-net.sh; done
ifneq ($(HVT_NET),0)
test-all: test-probes-net test-probes-kernels
endif

# test-probes-all: fbt:::entry - an entry probe on every probeable function (41,602 on the
# pinned kernel) - armed by the guest tool (count only), a workload run under them, then
# disarmed: every spec taken, the guest keeps running, every page restored; then the same with
# a hypervisor region too small for them all: the arming stops cleanly with the number armed
# and the guest goes on (check-probes-all.sh).
PROBE_ALL_OUT := $(BUILD)/test/probe-all
.PHONY: test-probes-all
test-probes-all: $(HVT) $(TEST_BUILD)/guest/hvtrace-guest $(TRACE_TEST)/guest/getpid-loop
	$(MAKE) efi
	$(MAKE) $(TEST_BUILD)/vmlinuz
	@mkdir -p $(PROBE_ALL_OUT)
	$(HVT) -n 'fbt:::entry' --vmlinuz $(TEST_BUILD)/vmlinuz --count --specs $(PROBE_ALL_OUT)/all.specs
	printf '%s\n' '#!/bin/sh' 'hvtrace-guest probe-arm /all.specs; echo "probe-all: arm status $$?"' \
	  'getpid-loop 100 nomark; ls / > /dev/null; echo "probe-all: workload status $$?"' \
	  'hvtrace-guest probe-disarm' > $(PROBE_ALL_OUT)/probe-all-run
	bash tests/guest/mkinitramfs.sh $(PROBE_ALL_OUT)/initrd.img $(TEST_BUILD)/guest/hvtrace-guest \
	  $(PROBE_ALL_OUT)/all.specs:all.specs $(PROBE_ALL_OUT)/probe-all-run:bin/probe-all-run \
	  $(TRACE_TEST)/guest/getpid-loop:bin/getpid-loop
	set -e; opts=$$($(HVT) options $(TEST_BUILD)/vmlinuz); for run in all small; do \
	  mem=$$([ $$run = small ] && echo 'hv_mem_mb = 24' || echo 'hv_mem_mb = 96'); \
	  printf '%s\n' 'kernel = \vmlinuz' 'initrd = \initrd.img' \
	    'cmdline = $(TEST_CMDLINE) hvt_mode=cmd hvt_cmd=/bin/probe-all-run' \
	    'hypervisor = on' 'advertise = on' 'log = e9' "$$mem" "trace = $$opts" > $(PROBE_ALL_OUT)/$$run.cfg; \
	  bash tests/platform/make-esp.sh $(PROBE_ALL_OUT)/$$run.img $(BUILD)/hvtrace.efi $(TEST_BUILD)/vmlinuz \
	    $(PROBE_ALL_OUT)/initrd.img $(PROBE_ALL_OUT)/$$run.cfg; \
	  bash tests/platform/bochs-run.sh -c $(TEST_CPUS) -t $(PROBE_TIMEOUT) $(PROBE_ALL_OUT)/$$run.img \
	    $(PROBE_ALL_OUT)/run-$$run > $(PROBE_ALL_OUT)/bochs-$$run.txt || true; done
	bash tests/probe/check-probes-all.sh $(PROBE_ALL_OUT) $$(stat -c %s $(PROBE_ALL_OUT)/all.specs)
test-all: test-probes-all

# make dtrace SCRIPT='<probe descriptions>' WORKLOAD='<shell command run in the guest>'
# Boots the test guest under hvtrace in Bochs (2 CPUs), arms the matching probes (every firing
# recorded) before the workload, disarms when it exits, and prints what hvt prints: one line a
# firing (CPU ID FUNCTION:NAME), then a count per probe. The way to try probes without VT-x.
SCRIPT   ?= syscall::getpid:entry
WORKLOAD ?= getpid-loop 100 nomark
DTRACE_OUT := $(BUILD)/dtrace
.PHONY: dtrace
dtrace: $(HVT) $(TEST_BUILD)/guest/hvtrace-guest $(TRACE_TEST)/guest/getpid-loop
	$(MAKE) efi
	$(MAKE) $(TEST_BUILD)/vmlinuz
	@mkdir -p $(DTRACE_OUT)
	$(HVT) -n '$(SCRIPT)' --vmlinuz $(TEST_BUILD)/vmlinuz --specs $(DTRACE_OUT)/specs.bin
	printf '%s\n' '#!/bin/sh' 'hvtrace-guest probe-arm /specs.bin || exit 1' '$(WORKLOAD)' \
	  'hvtrace-guest probe-disarm' > $(DTRACE_OUT)/dtrace-run
	bash tests/guest/mkinitramfs.sh $(DTRACE_OUT)/initrd.img $(TEST_BUILD)/guest/hvtrace-guest \
	  $(DTRACE_OUT)/specs.bin:specs.bin $(DTRACE_OUT)/dtrace-run:bin/dtrace-run \
	  $(TRACE_TEST)/guest/getpid-loop:bin/getpid-loop
	opts=$$($(HVT) options $(TEST_BUILD)/vmlinuz) && \
	printf '%s\n' 'kernel = \vmlinuz' 'initrd = \initrd.img' \
	  'cmdline = $(TEST_CMDLINE) hvt_mode=cmd hvt_cmd=/bin/dtrace-run' \
	  'hypervisor = on' 'advertise = on' 'log = e9' "trace = $$opts" > $(DTRACE_OUT)/hvtrace.cfg
	bash tests/platform/make-esp.sh $(DTRACE_OUT)/esp.img $(BUILD)/hvtrace.efi $(TEST_BUILD)/vmlinuz \
	  $(DTRACE_OUT)/initrd.img $(DTRACE_OUT)/hvtrace.cfg
	bash tests/platform/bochs-run.sh -c $(TEST_CPUS) -t $(PROBE_TIMEOUT) $(DTRACE_OUT)/esp.img $(DTRACE_OUT)/run > $(DTRACE_OUT)/bochs.txt || true
	@tr -d '\r' < $(DTRACE_OUT)/run/serial.log | grep -a '^hvtrace-guest: probe-arm' || true
	$(HVT) -n '$(SCRIPT)' --vmlinuz $(TEST_BUILD)/vmlinuz --e9 $(DTRACE_OUT)/run/e9.log

# test-dtrace: make dtrace's path end to end (hvt -n resolves, the guest tool arms from the
# spec file, every firing is recorded and printed): getpid-loop 100 makes exactly 101 getpid()
# calls (one for its pid), so 101 entry and 101 return lines for it; and a description that
# matches nothing is refused with dtrace's message and exit status 1.
.PHONY: test-dtrace
test-dtrace:
	$(MAKE) dtrace SCRIPT='syscall::getpid:entry,syscall::getpid:return' WORKLOAD='getpid-loop 100 nomark' \
	  > $(BUILD)/dtrace.out 2>&1 || { tail -20 $(BUILD)/dtrace.out; exit 1; }
	bash tests/probe/check-dtrace.sh $(BUILD)/dtrace.out $(HVT) $(TEST_BUILD)/vmlinuz
test-all: test-dtrace
