# hvtrace top-level Makefile.
#   make            build the hypervisor, the EFI loader (build/hvtrace.efi) and the host tools
#   make test       everything the README's test command runs (unit tests + Bochs integration)
#   make run        the main job: boot Linux under hvtrace in Bochs and show the result
#   make install    install on a real machine (install.mk, docs/install.md); make esp DEST=...
# Module makefiles are included below; each owns its own targets.
SHELL      := /bin/bash
BUILD      ?= build
HVT_CACHE  ?= $(HOME)/.cache/hvtrace
export HVT_CACHE
# One C standard per side: the hypervisor side (hypervisor, loader, guest tools, their unit
# tests) and the host side (host-tools/ and its tests: host-tools/host.mk).
HV_STD     := -std=gnu11

.PHONY: all test test-all unit-test deps run clean
all:

# The two commands of the README. Both install what is missing first (apt-get, as root), so
# they work on a fresh Debian 12 machine; Bochs 3.0 is built on first use and cached.
deps:
	bash tests/platform/deps.sh
test: deps
	$(MAKE) test-all
# The default test run: unit tests + test-boot + test-qemu-novtx + test-install (tests.mk), test-trace
# (trace.mk), and these (whole run measured at ~6 min on the 2-core machine, November 2026):
test-all: test-analyze
ifneq ($(HVT_NET),0)
test-all: test-net test-trace-net
endif
run: deps
	$(MAKE) demo

include vmm/vmm.mk
include boot/hv_embed.mk
-include boot/boot.mk
# HVT_NET=0 builds the hypervisor without the dedicated NIC (net/).
ifneq ($(HVT_NET),0)
-include net/net.mk
endif
-include host-tools/host.mk
-include tests/tests.mk
include tests/unit/hv_unit.mk
include tests/trace/trace.mk
include tests/layering/layering.mk
include tests/probe/probe.mk
include tests/d/d_tests.mk
include tests/fuzz/fuzz.mk
include tests/security.mk
-include bench/bench.mk
include install.mk

clean:
	rm -rf $(BUILD)
