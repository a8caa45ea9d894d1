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
# The guest tools (guest/, built once into GUEST_OUT, installed and put in every test
# initramfs) and the test programs run in the guest: static, no library on the guest needed.
GUEST_CC     ?= gcc
GUEST_CFLAGS := $(HV_STD) -O2 -Wall -Wextra -static -Iinclude -Iguest
GUEST_OUT    := $(BUILD)/guest

.PHONY: all test check unit-test deps run clean
all:

# The two commands of the README. Both install what is missing first (apt-get, as root), so
# they work on a fresh Debian 12 machine; Bochs 3.0 is built on first use and cached.
# What the tests are: tests/TESTS, one line per test (name, tier, time budget, command), run
# by tests/run.py, which ends with a table of times and checks (also build/test-times.txt).
#   make check     the host tier: no emulator, no kernel download; a developer's loop
#   make test      every tier; machines in Bochs/QEMU two at a time (one per core)
#   make test T='name ...'   just those tests of the manifest
TEST_JOBS ?= 2
deps:
	bash tests/platform/deps.sh
test: deps
	python3 tests/run.py -j $(TEST_JOBS) $(T)
check:
	python3 tests/run.py --tier host $(T)
run: deps
	$(MAKE) demo

include vmm/vmm.mk
include tools/gen.mk
include boot/hv_embed.mk
-include boot/boot.mk
# HVT_NET=0 builds the hypervisor without the dedicated NIC (net/).
ifneq ($(HVT_NET),0)
-include net/net.mk
endif
-include host-tools/host.mk
-include tests/tests.mk
# Unit tests sit beside their code (DIR/tests/), over tests/lib/check.h.
include tests/lib/unit.mk
include vmm/tests/tests.mk
include trace/tests/tests.mk
include net/tests/tests.mk
include boot/tests/tests.mk
include guest/tests/tests.mk
include tests/unit/vtd-qemu/vtd-qemu.mk
include tests/trace/trace.mk
include tests/layering/layering.mk
include tests/probe/probe.mk
include tests/d/d_tests.mk
include tests/fuzz/fuzz.mk
include tests/security.mk
-include bench/bench.mk
include install.mk

# test-inputs: everything the machine tests read, built and fetched once before they run (they may then run
# side by side: each writes only its own folder): both Bochs builds, the pinned kernels, the
# images, the host and guest tools, every initramfs.
.PHONY: test-inputs
test-inputs: test-guest-inputs $(TRACE_TEST)/initrd.img $(PROBE_TEST)/initrd.img $(BUILD)/test/probe-net/initrd.img
	bash tests/platform/build-bochs.sh > /dev/null
	HVT_BOCHS_ORACLE=1 bash tests/platform/build-bochs.sh > /dev/null
	HVT_BOCHS_CET=1 bash tests/platform/build-bochs.sh > /dev/null
	set -e; for k in $(PROBE_KERNELS); do bash tests/probe/fetch-kernel-or-newer.sh $${k%%:*} $${k#*:} > /dev/null; done
	$(MAKE) efi hv-bare collector guest-tools $(HVT_IMPORT) $(HVT_CHECK)

clean:
	rm -rf $(BUILD)
