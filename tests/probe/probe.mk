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

$(PROBE_TEST)/initrd.img: $(GUEST_OUT)/hvtrace-guest $(TEST_GUEST)/probe-check $(TEST_GUEST)/probe-stress tests/guest/probe-tests tests/guest/init tests/guest/mkinitramfs.sh
	@mkdir -p $(dir $@)
	bash tests/guest/mkinitramfs.sh $@ $(GUEST_OUT)/hvtrace-guest \
	  $(TEST_GUEST)/probe-check:bin/probe-check $(TEST_GUEST)/probe-stress:bin/probe-stress \
	  tests/guest/probe-tests:bin/probe-tests

.PHONY: test-probes
test-probes: $(HVT) $(PROBE_TEST)/initrd.img
	$(MAKE) efi
	$(MAKE) $(TEST_BUILD)/vmlinuz
	@# ~20 s to init and the checks, then ~0.3 s of Bochs per arm/disarm cycle of 300 probes
	$(VM_RUN) -t $(PROBE_TIMEOUT) --initrd $(PROBE_TEST)/initrd.img --trace '$(PROBE_ITEMS)' \
	  --cmd /bin/probe-tests,$(PROBE_CALLS),$(PROBE_CYCLES),$(PROBE_STRESS) $(PROBE_TEST) || true
	bash tests/probe/check-probes.sh $(PROBE_TEST)/run $(PROBE_CALLS) $(TEST_CPUS) $(PROBE_CYCLES)

# test-probe-coll: live probes through the collector against fake_hv (host only, ~15 s): arming
# in batches, one line per firing, counts, losses reported, hvt -e --count-for's counting run
# and the prediction from it (tests/probe/test-probe-coll.sh).
.PHONY: test-probe-coll
test-probe-coll: $(HVT) $(HOST_BUILD)/hvtrace-collector $(HOST_BUILD)/fake_hv
	$(MAKE) $(TEST_BUILD)/vmlinuz
	bash tests/probe/test-probe-coll.sh $(HOST_BUILD) $(TEST_BUILD)/vmlinuz

# test-probes-net: the same live path in Bochs through the hypervisor's own NIC, every run on
# one boot (the guest's probe-suite runs each workload in turn; test-probes-net.sh): exact
# counts (the guest makes PROBE_NET_CALLS getppid() calls per CPU once armed: hvt -n prints
# exactly CPUs x that many getppid:entry firings, none lost), profile-997 over md5sum with a
# flame graph of the ORC-unwound stacks, the D programs (d, dwork, dcmd: test-d alone), user
# probes by pid and by name, static tracepoints (sdt: forks, execs, exits and voluntary switches
# against the workload's own counts).
PROBE_NET_CALLS ?= 1000
# probe-ustack keeps frame pointers: the profile run unwinds its user stacks by them.
$(TEST_GUEST)/probe-ustack: GUEST_CFLAGS += -fno-omit-frame-pointer
$(TEST_GUEST)/probe-ustack: tests/probe/probe.mk
$(BUILD)/test/probe-net/initrd.img: $(GUEST_OUT)/hvtrace-guest $(TEST_GUEST)/probe-net $(TEST_GUEST)/shstk-user $(TEST_GUEST)/probe-user $(TEST_GUEST)/probe-ustack $(TEST_GUEST)/d-work $(TEST_GUEST)/getpid-loop $(TEST_GUEST)/fork-pids $(TEST_GUEST)/sdt-work $(TEST_GUEST)/stable-work $(TEST_GUEST)/mod-work tests/guest/probe-profile-run tests/guest/fork-pids-run tests/guest/step-two-run tests/guest/probe-suite tests/guest/init tests/guest/mkinitramfs.sh
	@mkdir -p $(dir $@)
	k=$$(bash tests/platform/fetch-kernel.sh) && brd=$$(find "$$(dirname "$$k")/../lib/modules" -name brd.ko | head -1) && \
	  loop=$$(find "$$(dirname "$$k")/../lib/modules" -name loop.ko | head -1) && \
	  nullb=$$(find "$$(dirname "$$k")/../lib/modules" -name null_blk.ko | head -1) && \
	  cfs=$$(find "$$(dirname "$$k")/../lib/modules" -name configfs.ko | head -1) && \
	  kyber=$$(find "$$(dirname "$$k")/../lib/modules" -name kyber-iosched.ko | head -1) && \
	bash tests/guest/mkinitramfs.sh $@ $(GUEST_OUT)/hvtrace-guest $(TEST_GUEST)/probe-net:bin/probe-net \
	  $(TEST_GUEST)/shstk-user:bin/shstk-user $(TEST_GUEST)/probe-user:bin/probe-user $(TEST_GUEST)/probe-ustack:bin/probe-ustack \
	  $(TEST_GUEST)/d-work:bin/d-work $(TEST_GUEST)/getpid-loop:bin/getpid-loop \
	  $(TEST_GUEST)/fork-pids:bin/fork-pids tests/guest/fork-pids-run:bin/fork-pids-run \
	  $(TEST_GUEST)/sdt-work:bin/sdt-work $(TEST_GUEST)/sdt-work:bin/sdt-kid \
	  $(TEST_GUEST)/stable-work:bin/stable-work $(TEST_GUEST)/stable-work:bin/stable-kid \
	  $(TEST_GUEST)/mod-work:bin/mod-work "$$brd:lib/brd.ko" "$$loop:lib/loop.ko" \
	  "$$nullb:lib/null_blk.ko" "$$cfs:lib/configfs.ko" "$$kyber:lib/kyber-iosched.ko" \
	  tests/guest/probe-profile-run:bin/probe-profile-run tests/guest/probe-suite:bin/probe-suite \
	  tests/guest/step-two-run:bin/step-two-run
.PHONY: test-probes-net
test-probes-net: $(HVT) $(BUILD)/test/probe-net/initrd.img
	$(MAKE) efi collector
	$(MAKE) $(TEST_BUILD)/vmlinuz
	BUILD=$(BUILD) TRACE_CPUS=$(TEST_CPUS) PROBE_NET_CALLS=$(PROBE_NET_CALLS) TEST_CMDLINE="$(TEST_CMDLINE)" \
	  bash tests/probe/test-probes-net.sh
# test-probes-kernels: the count, profile, user, sdt and stable runs again on other kernels: the generic one the analysis tests
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
	    PROBE_NET_RUNS="count profile user sdt stable" PROBE_VMLINUZ=$$v PROBE_NET_OUT=$(BUILD)/test/probe-net/$${k%%:*} bash tests/probe/test-probes-net.sh; done

# test-cet: CET. Bochs built with CET (HVT_BOCHS_CET=1 build-bochs.sh), its tigerlake model,
# Debian's 6.12 cloud kernel (an IBT build, which then enforces IBT: every indirect call must
# land on an ENDBR64): the ibt run (entry and return probes on read_zero, reached through
# f_op->read), the shstk run (a user probe on a RET in a process with a shadow stack) and the
# count run, exact counts, no control-protection fault.
CET_KERNEL ?= linux-image-6.12.117+deb12-cloud-amd64-unsigned:6.12.117-1~deb12u1
.PHONY: test-cet
test-cet: $(HVT) $(BUILD)/test/probe-net/initrd.img
	$(MAKE) efi collector
	k='$(CET_KERNEL)'; v=$$(bash tests/probe/fetch-kernel-or-newer.sh $${k%%:*} $${k#*:}) && \
	BOCHS_PREFIX=$$(HVT_BOCHS_CET=1 bash tests/platform/build-bochs.sh) BOCHS_CPU_MODEL=tigerlake \
	  PROBE_NET_EXPECT_IBT=1 BUILD=$(BUILD) TRACE_CPUS=$(TEST_CPUS) PROBE_NET_CALLS=$(PROBE_NET_CALLS) \
	  TEST_CMDLINE="$(TEST_CMDLINE) hvt_dmesg=CET" PROBE_NET_RUNS="ibt count shstk" PROBE_VMLINUZ=$$v \
	  PROBE_NET_OUT=$(BUILD)/test/cet bash tests/probe/test-probes-net.sh

# test-probes-all: fbt:::entry - an entry probe on every probeable function (41,602 on the
# pinned kernel) - armed by the guest tool (count only), a workload run under them, then
# disarmed: every spec taken, the guest keeps running, every page restored; then the same with
# a hypervisor region too small for them all: the arming stops cleanly with the number armed
# and the guest goes on (check-probes-all.sh).
PROBE_ALL_OUT := $(BUILD)/test/probe-all
.PHONY: test-probes-all
test-probes-all: $(HVT) $(GUEST_OUT)/hvtrace-guest $(TEST_GUEST)/getpid-loop
	$(MAKE) efi
	$(MAKE) $(TEST_BUILD)/vmlinuz
	@mkdir -p $(PROBE_ALL_OUT)
	$(HVT) -n 'fbt:::entry' --vmlinuz $(TEST_BUILD)/vmlinuz --count --specs $(PROBE_ALL_OUT)/all.specs
	printf '%s\n' '#!/bin/sh' 'hvtrace-guest probe-arm /all.specs; echo "probe-all: arm status $$?"' \
	  'getpid-loop 100 nomark; ls / > /dev/null; echo "probe-all: workload status $$?"' \
	  'hvtrace-guest probe-disarm' > $(PROBE_ALL_OUT)/probe-all-run
	bash tests/guest/mkinitramfs.sh $(PROBE_ALL_OUT)/initrd.img $(GUEST_OUT)/hvtrace-guest \
	  $(PROBE_ALL_OUT)/all.specs:all.specs $(PROBE_ALL_OUT)/probe-all-run:bin/probe-all-run \
	  $(TEST_GUEST)/getpid-loop:bin/getpid-loop
	set -e; for run in all small; do \
	  mem=$$([ $$run = small ] && echo 28 || echo 96); \
	  $(VM_RUN) -t $(PROBE_TIMEOUT) --initrd $(PROBE_ALL_OUT)/initrd.img --cmd /bin/probe-all-run --trace '' \
	    --cfg "hv_mem_mb = $$mem" $(PROBE_ALL_OUT)/$$run > $(PROBE_ALL_OUT)/bochs-$$run.txt || true; done
	bash tests/probe/check-probes-all.sh $(PROBE_ALL_OUT) $$(stat -c %s $(PROBE_ALL_OUT)/all.specs)

# make dtrace SCRIPT='<D file, one-liner or probe descriptions>' WORKLOAD='<command run in the guest>'
# The path a user takes on a real machine, in Bochs (tests/probe/dtrace-net.sh): hvtrace-collector
# on this host, Linux booted under hvtrace with its own e1000 streaming to it, then
# `hvt -s FILE` (SCRIPT names a file) or `hvt -n SCRIPT` with `-c WORKLOAD`: the guest's agent
# runs WORKLOAD held at its exec until the probes are armed ($$target is its pid), hvt prints
# dtrace's output and ends with the command, the guest powers off. Bare probe descriptions get
# DTrace's default action (a line per firing). SCRIPT is taken as written ($$target stays);
# HVT_ARGS adds hvt flags (-q, -x ...). The way to try any D program without VT-x.
SCRIPT   ?= syscall::getpid:entry
WORKLOAD ?= getpid-loop 100 nomark
DTRACE_OUT := $(BUILD)/dtrace
.PHONY: dtrace
dtrace: $(HVT) $(BUILD)/test/probe-net/initrd.img
	$(MAKE) efi collector
	$(MAKE) $(TEST_BUILD)/vmlinuz
	BUILD=$(BUILD) TRACE_CPUS=$(TEST_CPUS) TEST_CMDLINE="$(TEST_CMDLINE)" DTRACE_OUT=$(DTRACE_OUT) \
	  HVT_ARGS='$(value HVT_ARGS)' bash tests/probe/dtrace-net.sh '$(value SCRIPT)' '$(value WORKLOAD)'

# test-dtrace: make dtrace's path end to end with a D file (tests/probe/dtrace-getpid.d):
# getpid-loop 100 makes exactly 101 getpid() calls (one for its pid), each seen at entry and
# return with the pid getpid returned; and a description that matches nothing is refused with
# dtrace's message and exit status 1, a bad script with its line and column, before any boot.
.PHONY: test-dtrace
test-dtrace:
	$(MAKE) dtrace SCRIPT=tests/probe/dtrace-getpid.d WORKLOAD='getpid-loop 100 nomark' HVT_ARGS=-q \
	  > $(BUILD)/dtrace.out 2>&1 || { tail -20 $(BUILD)/dtrace.out; exit 1; }
	bash tests/probe/check-dtrace.sh $(BUILD)/dtrace.out $(HVT) $(TEST_BUILD)/vmlinuz

# test-step-scope: D's step() at syscall::openat:entry of two processes at once (cat and tee
# meeting at a FIFO, tests/guest/step-two-run: the first to open waits in openat for the other)
# steps those two threads alone, each from its firing to its own call's return
# (trace/step/scope.h); then nine heads at once, one more than the tracer steps at once: eight
# stepped, the ninth step() refused (the firing's error). The collector's trace is judged by
# check-step-scope.sh (those threads alone, continuity, each one's first and last instruction,
# the trees, the one refusal).
.PHONY: test-step-scope
test-step-scope: $(HVT_CHECK)
	@mkdir -p $(BUILD)
	$(MAKE) dtrace SCRIPT=tests/probe/step-openat.d WORKLOAD='step-two-run' HVT_ARGS=-q \
	  DTRACE_OUT=$(BUILD)/step-scope > $(BUILD)/step-scope.out 2>&1 || { tail -20 $(BUILD)/step-scope.out; exit 1; }
	bash tests/probe/check-step-scope.sh $(BUILD)/step-scope $(HVT) $(HVT_CHECK) $(TEST_BUILD)/vmlinuz
