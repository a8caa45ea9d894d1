# host-tools/probes/tests/tests.mk - the static tracepoint reader (sdt.c), module probes (kmod.c) and
# the io provider (io_prov.c) on the pinned kernel.
#   make test-sdt   kernel tier: the pinned 6.1 vmlinuz's jump table, groups and block recipes
$(HOST_OUT)/test_sdt: $(HOST_DIR)/probes/tests/test_sdt.c $(HOST_LIB) $(HOST_HDRS) tests/lib/check.h
	$(HOST_CC) $(HOST_CFLAGS) $(HOST_INC) -Itests/lib $< $(HOST_LIB) $(HOST_LIBS) -o $@
.PHONY: test-sdt
test-sdt: $(HOST_OUT)/test_sdt
	$(HOST_OUT)/test_sdt "$$(bash tests/platform/fetch-kernel.sh)"
# Module probes and the io provider on the pinned kernel and its package's modules.
#   make test-kmod   kernel tier: struct module's layout from BTF, brd.ko's functions, null_blk.ko's
#                    own tracepoints (linked, decoded), io's recipes; kmod-d.sh: D on module probes
#                    typed from the module's own BTF
$(HOST_OUT)/test_kmod: $(HOST_DIR)/probes/tests/test_kmod.c $(HOST_LIB) $(HOST_HDRS) tests/lib/check.h
	$(HOST_CC) $(HOST_CFLAGS) $(HOST_INC) -Itests/lib $< $(HOST_LIB) $(HOST_LIBS) -o $@
.PHONY: test-kmod
test-kmod: $(HOST_OUT)/test_kmod $(HVT)
	k="$$(bash tests/platform/fetch-kernel.sh)" && m="$$(ls -d "$$(dirname "$$k")"/../lib/modules/*/ | head -1)" && \
	  $(HOST_OUT)/test_kmod "$$k" "$$m" && bash $(HOST_DIR)/probes/tests/kmod-d.sh $(HVT) "$$k" "$$m"
