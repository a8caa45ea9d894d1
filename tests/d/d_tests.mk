# tests/d/d_tests.mk - the D language's end-to-end tests and fuzzers: test-d-coll, D programs
# end to end through the collector against fake_hv's D engine (the hypervisor's own verifier
# and interpreter; host only, ~30 s), test-d in Bochs, fuzz-d. The compiler's and the
# consumer's unit tests are beside them (host-tools/d/tests/tests.mk, which also names the
# compiler's sources used here).
#   make test-d-coll

.PHONY: test-d-coll
test-d-coll: $(HVT) $(HOST_BUILD)/hvtrace-collector $(HOST_BUILD)/fake_hv
	$(MAKE) $(TEST_BUILD)/vmlinuz
	bash tests/d/test-d-coll.sh $(HOST_BUILD) $(TEST_BUILD)/vmlinuz

# test-d: D programs in Bochs (2 CPUs, the pinned kernel) over the NIC and the collector (part
# of test-probes-net's boot; this target boots for them alone): the d, dwork and dcmd runs of
# tests/probe/test-probes-net.sh (exact counts, thread-locals, printf,
# quantize of read sizes, copyinstr of paths, fbt against the guest's kprobe, stack() frames
# checked against the image, invalid addresses reported while the guest goes on).
.PHONY: test-d
test-d:
	PROBE_NET_RUNS="d dwork dcmd dread dglobal" $(MAKE) test-probes-net

# fuzz-d: libFuzzer (ASan/UBSan) runs of the D compiler (every image it accepts must pass the
# verifier) and of the verifier + interpreter on raw bytes, FUZZ_SECONDS each; corpora under
# build/host/fuzz/d-*. make test replays tests/d/fuzz/regress (seconds).
DFUZZ_VM := $(wildcard trace/dvm/dif_*.c) trace/unwind/kunwind.c
$(HOST_OUT)/fuzz/fuzz_dcompile: tests/d/fuzz/fuzz_dcompile.c $(FUZZ_LIB_OBJS) $(DFUZZ_VM) $(D_COMPILER_HDRS) trace/dvm/dif.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_LIB_FLAGS) -fsanitize=fuzzer $(HOST_INC) -Ivmm/include $< $(DFUZZ_VM) $(FUZZ_LIB_OBJS) \
	  $(HOST_LIBS) -o $@
$(HOST_OUT)/fuzz/fuzz_dverify: tests/d/fuzz/fuzz_dverify.c $(DFUZZ_VM) trace/dvm/dif.h include/hvt_dif.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -O1 -g $(HOST_STD) -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	  -Iinclude $(TRACE_DIRS:%=-I%) -Ivmm/include $< $(DFUZZ_VM) -o $@
.PHONY: fuzz-d
fuzz-d: $(HOST_OUT)/fuzz/fuzz_dcompile $(HOST_OUT)/fuzz/fuzz_dverify
	bash tests/d/fuzz/fuzz-d.sh $(HOST_OUT)/fuzz $(FUZZ_SECONDS)
