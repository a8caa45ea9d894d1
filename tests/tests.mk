# tests.mk - the test platform (Bochs 3.0 + OVMF, QEMU + OVMF) and boot benchmarks.
#   make test-boot        Bochs, 2 CPUs, hypervisor = on: every guest check must pass and the
#                         run must end by ACPI power-off; prints cpus=N and the hypervisor's
#                         0xE9 "hvtrace:" lines
#   make test-platform    the same machine with hypervisor = off: proves the platform (2 CPUs
#                         through the loader's ACPI tables, clean power-off); checks that need
#                         hvtrace are shown as FAIL, honestly
#   make test-qemu-novtx  QEMU TCG (no VT-x): the loader says so and Linux reaches init untraced
#   make test-guest-selftest  QEMU TCG, hypervisor = off, hvt_mode=selftest: the guest's memcheck
#                         and memmap checks against a firmware Reserved range (they must pass
#                         with an absent canary and memcheck must find a present one)
#   make bench-boot       guest TSC at the start of init with and without the hypervisor, same
#                         Bochs, 2 CPUs and 1; last line ratio=<with/without> (goal <= 1.02)
# Knobs: BOCHS_TEST_TIMEOUT (s), TEST_CPUS, TEST_CMDLINE, plus bochs-run.sh's BOCHS_* environment;
#   TEST_EFI_BUILD (default "$(MAKE) efi"): how hvtrace.efi is built first; TEST_EFI_BUILD=true
#   tests the build/hvtrace.efi already there.
TEST_BUILD         := $(BUILD)/test
TEST_EFI_BUILD     ?= $(MAKE) efi
BOCHS_TEST_TIMEOUT ?= 240
TEST_CPUS          ?= 2
# Quiet console: serial printk costs ~0.7 ms per byte in Bochs (docs/references.md).
TEST_CMDLINE       ?= console=ttyS0 quiet cryptomgr.notests initcall_blacklist=trace_eval_init hvt_cpus=$(TEST_CPUS)

.PHONY: test-cpuid test-boot test-platform test-qemu-novtx test-guest-selftest bench-boot test-guest-inputs


# ---- guest: tools, initramfs, kernel, ESP images ------------------------------------------
# The guest tool is part of the product (guest/); the tests put the same binary in their initramfs.
# Test programs for the guest: one rule, the product's flags (the guest tools themselves are
# built once, in $(GUEST_OUT): install.mk).
TEST_GUEST := $(TEST_BUILD)/guest
$(TEST_GUEST)/%: tests/guest/%.c guest/hvt_guest.h include/hvt_hypercall.h tests/guest/probe_wait.h
	@mkdir -p $(dir $@)
	$(GUEST_CC) $(GUEST_CFLAGS) -o $@ $<

# With the kernel's msr module, for msr-attack (init's msr-guard check), and as-user,
# hvtrace-mark and gs-forge for the hypercall privilege checks.
TEST_INITRD_TOOLS := $(TEST_GUEST)/msr-attack $(TEST_GUEST)/as-user $(GUEST_OUT)/hvtrace-mark \
                     $(TEST_GUEST)/io-string $(TEST_GUEST)/gs-forge $(TEST_GUEST)/sleep-attack
$(TEST_BUILD)/initrd.img: $(GUEST_OUT)/hvtrace-guest $(TEST_INITRD_TOOLS) tests/guest/init tests/guest/mkinitramfs.sh tests/guest/mkcpio.py
	k=$$(bash tests/platform/fetch-kernel.sh) && m=$$(find "$$(dirname "$$k")/../lib/modules" -name msr.ko | head -1) && \
	bash tests/guest/mkinitramfs.sh $@ $(GUEST_OUT)/hvtrace-guest $(foreach t,$(TEST_INITRD_TOOLS),$(t):bin/$(notdir $(t))) "$$m:lib/msr.ko"

# The pinned Debian kernel, copied unmodified next to the other ESP inputs.
$(TEST_BUILD)/vmlinuz: tests/platform/fetch-kernel.sh
	@mkdir -p $(dir $@)
	cp "$$(bash tests/platform/fetch-kernel.sh)" $@

# Every test machine boots through tests/platform/vm-run.sh (hvtrace.cfg, ESP, Bochs or QEMU):
# $(VM_RUN) [options] DIR. The Bochs tests of the tracer show the guest a hypervisor
# (advertise = on): Bochs's CPU model has Linux's TSC-deadline erratum, and Linux skips that
# check only when it sees a hypervisor; time dilation needs the TSC-deadline timer
# (docs/hypervisor.md). test-cpuid and bench-boot take the default, transparent view.
VM_RUN := BUILD=$(BUILD) TEST_CPUS=$(TEST_CPUS) TEST_CMDLINE='$(TEST_CMDLINE)' bash tests/platform/vm-run.sh
# The platform tests' machine: the guest's own checks (tests/guest/init), tracing host-started.
VM_CHECKS := $(VM_RUN) --trace start=host --selftest -t $(BOCHS_TEST_TIMEOUT)

test-guest-inputs: $(TEST_BUILD)/initrd.img $(TEST_BUILD)/vmlinuz $(HVT)

# ---- Bochs integration ---------------------------------------------------------------------
test-boot:
	$(TEST_EFI_BUILD)
	$(MAKE) test-guest-inputs
	$(VM_CHECKS) $(TEST_BUILD)/boot || true
	CHECK_BOOT_NEED="detect range memcheck ud msr-guard hc-user-refused hc-root-allowed hc-user-gs-forged io-string msr-unchecked sleep-hidden sleep-refused" \
	  bash tests/platform/check-boot.sh all $(TEST_BUILD)/boot/run $(TEST_CPUS)

test-platform:
	$(TEST_EFI_BUILD)
	$(MAKE) test-guest-inputs
	$(VM_CHECKS) --hv off $(TEST_BUILD)/platform || true
	bash tests/platform/check-boot.sh platform $(TEST_BUILD)/platform/run $(TEST_CPUS)

# The hypervisor's cost to a boot: guest TSC at the start of init (Bochs: instructions) with
# and without it, BENCH_BOOT_RUNS pairs with 2 CPUs (a 2-CPU boot's length is chaotic in its
# command line: see the script) and BENCH_BOOT_RUNS1 with 1; transparent CPUID (the default).
BENCH_BOOT_RUNS  ?= 5
BENCH_BOOT_RUNS1 ?= 2
bench-boot:
	$(TEST_EFI_BUILD)
	$(MAKE) test-guest-inputs
	bash bench/record.sh boot bash tests/platform/bench-boot.sh $(BUILD)/hvtrace.efi $(TEST_BUILD)/vmlinuz $(TEST_BUILD)/initrd.img \
	  $(TEST_BUILD)/bench-boot $(BENCH_BOOT_RUNS) $(BENCH_BOOT_RUNS1) $(BOCHS_TEST_TIMEOUT) \
	  $(filter-out hvt_cpus=%,$(TEST_CMDLINE))

# The guest's CPUID with and without the hypervisor (hvt_mode=cpuid), both runs at once, and
# the boot log lines that show how Linux sees the platform (hvt_dmesg), side by side.
CPUID_DMESG := hvt_dmesg=tsc|clocksource|calibrat|delay|hypervisor|errata|lpj|mwait|idle
test-cpuid:
	$(TEST_EFI_BUILD)
	$(MAKE) test-guest-inputs
	$(VM_CHECKS) --advertise off --append 'hvt_mode=cpuid $(CPUID_DMESG)' --hv off $(TEST_BUILD)/cpuid-off & \
	$(VM_CHECKS) --advertise off --append 'hvt_mode=cpuid $(CPUID_DMESG)' $(TEST_BUILD)/cpuid-on; \
	wait
	bash tests/platform/cpuid-diff.sh $(TEST_BUILD)/cpuid-on/run $(TEST_BUILD)/cpuid-off/run

# ---- QEMU (no VT-x under TCG) ---------------------------------------------------------------
test-qemu-novtx:
	$(TEST_EFI_BUILD)
	$(MAKE) test-guest-inputs
	$(VM_CHECKS) --qemu -t 300 $(TEST_BUILD)/qemu-novtx || true
	bash tests/platform/check-boot.sh novtx $(TEST_BUILD)/qemu-novtx/run $(TEST_CPUS)

test-guest-selftest:
	$(TEST_EFI_BUILD)
	$(MAKE) test-guest-inputs
	$(VM_CHECKS) --qemu -t 300 --hv off --append hvt_mode=selftest $(TEST_BUILD)/guest-selftest || true
	bash tests/platform/check-boot.sh all $(TEST_BUILD)/guest-selftest/run $(TEST_CPUS)

