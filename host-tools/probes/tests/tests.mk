# host-tools/probes/tests/tests.mk - the static tracepoint reader (sdt.c) on the pinned kernel.
#   make test-sdt   kernel tier: the pinned 6.1 vmlinuz's jump table, groups and block recipes
$(HOST_OUT)/test_sdt: $(HOST_DIR)/probes/tests/test_sdt.c $(HOST_LIB) $(HOST_HDRS) tests/lib/check.h
	$(HOST_CC) $(HOST_CFLAGS) $(HOST_INC) -Itests/lib $< $(HOST_LIB) $(HOST_LIBS) -o $@
.PHONY: test-sdt
test-sdt: $(HOST_OUT)/test_sdt
	$(HOST_OUT)/test_sdt "$$(bash tests/platform/fetch-kernel.sh)"
