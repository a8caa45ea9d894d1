# net/tests/tests.mk - host unit tests of net/: the boot id's randomness (net/boot_rand.c,
# tests/lib/unit.mk): RDSEED/RDRAND retried, an authenticated stream refused without a hardware
# RNG; the stream's protocol code (below); the NIC driver's id table and per-family decisions
# (test_e1000_models, run by `make net-unit-test`).
$(HV_UNIT_BUILD)/test_boot_rand: net/tests/test_boot_rand.c net/boot_rand.c net/boot_rand.h vmm/hv_rand.c vmm/include/hv_rand.h tests/lib/check.h
	@mkdir -p $(dir $@)
	$(CC) $(HV_UNIT_CFLAGS) -Inet -o $@ $< net/boot_rand.c vmm/hv_rand.c
.PHONY: unit-test-boot-rand
unit-test-boot-rand: $(HV_UNIT_BUILD)/test_boot_rand
	$(HV_UNIT_BUILD)/test_boot_rand
unit-test-hv: unit-test-boot-rand

# The stream's protocol code compiled for the host (-DHVT_HOST, host-tools/collector/collector.mk's
# NET_HOST_CFLAGS): the AEAD (test_aead: net/aead.c against RFC 8439's examples) and the rest of
# the portable net/ code with the collector's stream parser (test_net: SHA-256/HMAC, control
# messages, boot configuration, send ring). Built into build/host/ beside the collector, under
# ASan/UBSan: they are small and the parsers are what an attacker feeds. `make net-unit-test`
# runs them; tests/net/fuzz/make-seeds.sh runs test_net for its seeds.
$(HOST_BUILD)/test_aead: net/tests/test_aead.c net/aead.c net/sha256.c net/aead.h tests/lib/check.h
	@mkdir -p $(dir $@)
	$(HOST_CC) $(NET_HOST_CFLAGS) -Ivmm/include -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -Itests/lib \
	  -o $@ net/tests/test_aead.c net/aead.c net/sha256.c
$(HOST_BUILD)/test_net: net/tests/test_net.c $(NET_PORTABLE) host-tools/collector/coll_parse.c $(COLL_HDRS) tests/lib/check.h
	@mkdir -p $(dir $@)
	$(HOST_CC) $(NET_HOST_CFLAGS) -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -Itests/lib \
	  -o $@ net/tests/test_net.c $(NET_PORTABLE) host-tools/collector/coll_parse.c

# The NIC driver's id table and per-family decisions (net/e1000_models.c), on the host.
$(HOST_BUILD)/test_e1000_models: net/tests/test_e1000_models.c net/e1000_models.c net/e1000_models.h net/e1000_regs.h tests/lib/check.h
	@mkdir -p $(dir $@)
	$(HOST_CC) $(NET_HOST_CFLAGS) -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -Itests/lib \
	  -o $@ net/tests/test_e1000_models.c net/e1000_models.c
