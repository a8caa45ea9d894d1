# layering.mk - the hypervisor's layering rules (tests/layering/check_layers.py) and its
# dependency cycles (deps.py), checked on the built objects; and the bare image booted.
#   make test-layers    rules checked, each rule's detector proven on a planted violation,
#                       the link-time dependency cycles of the image printed (cycles=N); no
#                       cycle among trace/'s objects, nor net/'s, nor host-tools/'s (the D
#                       compiler and consumer, the hvt command and the collector included)
#   make test-hv-bare   Bochs, 2 CPUs: the image of vmm/ alone (make hv-bare) boots the test
#                       guest to init and passes its checks
.PHONY: test-layers test-hv-bare
test-layers: hv
	python3 tests/layering/check_layers.py --objs $(HV_BUILD)
	python3 tests/layering/check_layers.py --objs $(HV_BUILD) --selftest
	python3 tests/layering/deps.py --no-cross-layer $(filter-out $(HV_BUILD)/lwip/%,$(HV_OBJS) $(HV_EXTRA_OBJS))
	$(MAKE) $(COLL_LAYER_OBJS)
	python3 tests/layering/deps.py --no-cycles $(COLL_LAYER_OBJS)
	python3 tests/layering/deps.py --no-cycles $(filter $(HV_BUILD)/trace/%,$(HV_OBJS))
	python3 tests/layering/deps.py --no-cycles $(NET_HV_OBJS)
	$(MAKE) $(HOST_LAYER_OBJS)
	python3 tests/layering/deps.py --no-cycles $(HOST_LAYER_UNITS) $(HOST_LAYER_OBJS) $(COLL_LAYER_OBJS)
unit-test: test-layers

# The collector's modules as objects, for their dependency picture (one way: main -> cmd -> link).
COLL_LAYER_OBJS := $(patsubst host-tools/collector/%.c,$(BUILD)/host/layers/%.o,$(filter host-tools/collector/%,$(COLL_SRCS)))
$(BUILD)/host/layers/%.o: host-tools/collector/%.c $(COLL_HDRS)
	@mkdir -p $(dir $@)
	$(HOST_CC) $(NET_HOST_CFLAGS) -c $< -o $@

# host-tools/ as a whole: libhvthost's objects, the hvt command's, hvt-check's and hvt-import's.
# d_sema.c, d_sema_act.c and d_xlate.c are one pass (expressions, the calls inside them and the
# translators' expressions recurse into each other): one node.
HOST_LAYER_MAINS := $(wildcard $(HOST_DIR)/hvt/*.c) $(HOST_DIR)/analyze/hvt_check.c $(HOST_DIR)/analyze/hvt_import.c
HOST_LAYER_OBJS  := $(HOST_OBJS) $(patsubst $(HOST_DIR)/%.c,$(BUILD)/host/layers/%.o,$(HOST_LAYER_MAINS))
HOST_LAYER_UNITS := --unit $(HOST_OUT)/obj/d/compile/d_sema.o+$(HOST_OUT)/obj/d/compile/d_sema_act.o+$(HOST_OUT)/obj/d/compile/d_xlate.o
$(BUILD)/host/layers/hvt/%.o: $(HOST_DIR)/hvt/%.c $(HOST_HDRS)
	@mkdir -p $(dir $@)
	$(HOST_CC) $(HOST_CFLAGS) $(HOST_INC) -c $< -o $@
$(BUILD)/host/layers/analyze/%.o: $(HOST_DIR)/analyze/%.c $(HOST_HDRS)
	@mkdir -p $(dir $@)
	$(HOST_CC) $(HOST_CFLAGS) $(HOST_INC) -c $< -o $@

test-hv-bare:
	$(MAKE) hv-bare
	$(MAKE) test-guest-inputs
	$(VM_CHECKS) --efi $(BUILD)/bare/hvtrace.efi --append hvt_bare=1 $(TEST_BUILD)/bare || true
	grep -q '^hvtrace: bare image: vmm/ only' $(TEST_BUILD)/bare/run/e9.log || \
	  { echo "test-hv-bare: FAIL: the run did not use the bare image"; exit 1; }
	bash tests/platform/check-boot.sh all $(TEST_BUILD)/bare/run $(TEST_CPUS)
