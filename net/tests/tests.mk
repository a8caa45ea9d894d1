# net/tests/tests.mk - host unit tests of net/ (tests/lib/unit.mk): the boot id's randomness
# (net/boot_rand.c): RDSEED/RDRAND retried, an authenticated stream refused without a hardware RNG.
$(HV_UNIT_BUILD)/test_boot_rand: net/tests/test_boot_rand.c net/boot_rand.c net/boot_rand.h tests/lib/check.h
	@mkdir -p $(dir $@)
	$(CC) $(HV_UNIT_CFLAGS) -Inet -o $@ $< net/boot_rand.c
.PHONY: unit-test-boot-rand
unit-test-boot-rand: $(HV_UNIT_BUILD)/test_boot_rand
	$(HV_UNIT_BUILD)/test_boot_rand
unit-test-hv: unit-test-boot-rand
