# boot/tests/tests.mk - host unit tests of the loader: boot/tests/test_X.c tests boot/X.c (the
# test platform's ACPI tables, hvtrace.cfg's parser and its seal).
UNIT_CC     ?= gcc
UNIT_CFLAGS := $(HV_STD) -O2 -g -Wall -Wextra -Itests/lib -Iinclude -Iboot
BOOT_UNIT_TESTS := test_acpi_tables test_acpi_sleep test_dmap test_cfg test_cfg_seal
# The seal: with the parser it judges and the SHA-256/HMAC the loader links.
$(BUILD)/test/unit/test_cfg_seal: boot/tests/test_cfg_seal.c boot/cfg_seal.c boot/cfg_seal.h boot/cfg.c boot/cfg.h net/sha256.c net/sha256.h tests/lib/check.h
	@mkdir -p $(dir $@)
	$(UNIT_CC) $(UNIT_CFLAGS) -Inet -o $@ $< boot/cfg_seal.c boot/cfg.c net/sha256.c
$(BUILD)/test/unit/test_acpi_sleep: boot/tests/test_acpi_sleep.c boot/acpi_sleep.c boot/acpi_sleep.h boot/acpi_tables.c boot/acpi_tables.h tests/lib/check.h
	@mkdir -p $(dir $@)
	$(UNIT_CC) $(UNIT_CFLAGS) -fsanitize=address,undefined -o $@ $< boot/acpi_sleep.c boot/acpi_tables.c
$(BUILD)/test/unit/test_dmap: boot/tests/test_dmap.c boot/dmap.c boot/dmap.h vmm/mtrr.c vmm/mtrr.h tests/lib/check.h
	@mkdir -p $(dir $@)
	$(UNIT_CC) $(UNIT_CFLAGS) -Ivmm -Ivmm/include -fsanitize=undefined -o $@ $< boot/dmap.c vmm/mtrr.c
$(BUILD)/test/unit/test_%: boot/tests/test_%.c boot/%.c boot/%.h tests/lib/check.h
	@mkdir -p $(dir $@)
	$(UNIT_CC) $(UNIT_CFLAGS) -o $@ $< boot/$*.c
.PHONY: unit-test-platform
unit-test-platform: $(BOOT_UNIT_TESTS:%=$(BUILD)/test/unit/%)
	@set -e; for t in $^; do $$t; done
unit-test: unit-test-platform
# QEMU + OVMF (no VT-x), five boots on one variable store: keys enrolled from \hvtrace.enroll,
# a changed configuration not honoured, a second enrollment refused, keys = forget.
.PHONY: test-seal
test-seal: efi $(HVT) test-guest-inputs
	bash boot/tests/test-seal.sh $(BUILD)
